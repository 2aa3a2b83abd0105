#!/usr/bin/env bash
# How the pitfall rows read on a GPU (docs/pitfalls.md, "Reading a row"):
# `pitfalls zoo:efficientnet-b0 --device cuda` at batch 64 (GPU-bound: the
# launches finish long before the work) and `generate --pitfalls` on a llama
# zoo model, each row's figure (its difference from the correct one), its
# 95% interval (as `compare` computes it) and its verdict, printed for the
# lead. What is checked: every measured row carries an interval or says why
# it has none, its verdict agrees with its interval (within noise exactly
# when it holds 0), and the forward pass's host clock without sync reads
# low beyond its interval, explained as the launch being timed, not the work.
#
# IB_PITFALLS_GPU_BATCH: the forward pass's batch (default 64);
# IB_PITFALLS_GEN_MODEL: the generation model (default zoo:llama-tiny; the
# other llama GPU scripts' is zoo:llama-3.2-1b); IB_LLAMA_LIBRARY as in
# generate_gpu.sh. With OUT set, the JSON files are copied there.
. "$(dirname "$0")/../cli/lib.sh"
. "$(dirname "$0")/require_device.sh"
[ -n "${IB_LLAMA_LIBRARY:-}" ] && export INFERBENCH_LLAMA_LIBRARY="$IB_LLAMA_LIBRARY"
export INFERBENCH_ZOO_CACHE=${INFERBENCH_ZOO_CACHE:-/tmp/inferbench-zoo}
mkdir -p "$INFERBENCH_ZOO_CACHE"
batch=${IB_PITFALLS_GPU_BATCH:-64}
gen_model=${IB_PITFALLS_GEN_MODEL:-zoo:llama-tiny}
# IB_PITFALLS_PARTS picks the parts: a device call carries ONNX Runtime's CUDA pack or
# llama.cpp's, not both (tests/gpu/device/pack.sh).
parts=" ${IB_PITFALLS_PARTS:-forward generate} "

# rows FILE KEY: each row of the document's KEY array, one line: its
# figure, interval and verdict (or why it has none, or why it does not
# apply); then checks that each verdict follows its interval.
rows() {
  python3 - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
bad = 0
for r in d[sys.argv[2]]:
    name = r["name"]
    if not r["applies"]:
        print(f"  {name:34s} n/a: {r['not_applicable']}")
        continue
    if r["status"] != "ok" or r.get("error_pct") is None:
        print(f"  {name:34s} {r['status']}: {r.get('error')}")
        continue
    ci, v = r.get("error_ci95_pct"), r.get("verdict")
    if v is None:  # the correct row, the single sample's spread
        print(f"  {name:34s} {r['error_pct']:+8.2f}%  not compared")
        continue
    shown = f"[{ci[0]:+.2f}%, {ci[1]:+.2f}%]" if ci else f"no interval ({r.get('no_interval')})"
    print(f"  {name:34s} {r['error_pct']:+8.2f}%  {shown:24s} {v}: {r['why']}")
    if ci:
        want = "reads high" if ci[0] > 1e-7 else "reads low" if ci[1] < -1e-7 else "within noise"
        if v != want:
            print(f"  MISMATCH {name}: verdict {v}, interval says {want}")
            bad += 1
    elif not r.get("no_interval"):
        print(f"  MISSING {name}: no interval and no reason")
        bad += 1
sys.exit(1 if bad else 0)
PY
}

fw="$TMP/pitfalls.json"
if [[ $parts == *" forward "* ]]; then
echo "== pitfalls zoo:efficientnet-b0 --device cuda --batch $batch"
if expect_exit 0 "efficientnet-b0 pitfalls at batch $batch" -- "$IB" pitfalls zoo:efficientnet-b0 --device cuda \
  --batch "$batch" --quiet --json "$fw"; then
  if rows "$fw" rows; then pass "forward pass: every verdict follows its interval"; else
    fail "forward pass: a verdict against its interval"; fi
  json_check "$fw" "[r for r in d['rows'] if r['kind'] == 'host_no_sync'][0]['verdict'] == 'reads low'" \
    "forward pass: host clock without sync reads low beyond its interval on the GPU"
  json_check "$fw" "'queued' in [r for r in d['rows'] if r['kind'] == 'host_no_sync'][0]['why']" \
    "forward pass: explained as the launch timed, not the work"
  [ -n "${OUT:-}" ] && cp "$fw" "$OUT/pitfalls_efficientnet_b0_b$batch.json"
fi
fi

gen="$TMP/generate.json"
if [[ $parts == *" generate "* ]]; then
echo "== generate $gen_model --device cuda --pitfalls"
if expect_exit 0 "$gen_model generate --pitfalls" -- "$IB" generate "$gen_model" --device cuda --pitfalls --quiet \
  --json "$gen"; then
  if rows "$gen" pitfalls; then pass "generation: every verdict follows its interval"; else
    fail "generation: a verdict against its interval"; fi
  json_check "$gen" "all(r['verdict'] for r in d['pitfalls'] if r['applies'] and r['status'] == 'ok')" \
    "generation: every measured row has a verdict"
  [ -n "${OUT:-}" ] && cp "$gen" "$OUT/generate_pitfalls_$(echo "$gen_model" | tr -c 'a-z0-9\n' _).json"
fi
fi
finish
