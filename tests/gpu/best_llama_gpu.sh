#!/usr/bin/env bash
# inferbench best of a generative model on the GPU (docs/best.md,
# "Generative models"): zoo:llama-3.2-1b raced on flash attention x KV
# cache type x n_ubatch, every layer offloaded, ranked by TPOT at the depth
# (IB_BEST_GPU_OBJECTIVES: default "tpot ttft", each one race). The table
# and each race's time are printed (the lead records them in
# docs/measurements.md), not bounded. What is checked: 30 rows, the 6
# quantized caches without flash attention "does not apply", any other
# refusal or failure with its reason (printed: the CUDA build may refuse
# more pairs than the CPU build), the rows that run as another merged
# (none at 512 + 128 tokens: n_ubatch 128, 256 and 512 all fit the 640
# tokens; printed), every row labelled as it ran, one winner, its
# generation measurement on the GPU with its settings (its n_ubatch the
# label's), tokens/s = tokens / time. A race its 300 s step bound cut
# short exits 1 (docs/best.md): the check of exit 0 says so.
#
# The library: IB_LLAMA_LIBRARY (on the H200: the sm_90 build, e.g.
# /tmp/llama), given to every candidate as --option library=DIR; else the
# release set-up installed. The zoo's GGUF files go to
# INFERBENCH_ZOO_CACHE (default /tmp/inferbench-zoo, kept between runs).
# IB_BEST_GPU_MODEL (default zoo:llama-3.2-1b), IB_BEST_GPU_ARGS (default
# "--prompt-tokens 512 --new-tokens 128 --depth 512"). With OUT set, the
# JSON and text files are copied there.
. "$(dirname "$0")/../cli/lib.sh"
. "$(dirname "$0")/require_device.sh"
export INFERBENCH_ZOO_CACHE=${INFERBENCH_ZOO_CACHE:-/tmp/inferbench-zoo}
mkdir -p "$INFERBENCH_ZOO_CACHE"
model=${IB_BEST_GPU_MODEL:-zoo:llama-3.2-1b}
read -r -a args <<<"${IB_BEST_GPU_ARGS:---prompt-tokens 512 --new-tokens 128 --depth 512}"
read -r -a objectives <<<"${IB_BEST_GPU_OBJECTIVES:-tpot ttft}"
library=()
[ -n "${IB_LLAMA_LIBRARY:-}" ] && library=(--option "library=$IB_LLAMA_LIBRARY")

for objective in "${objectives[@]}"; do
  json="$TMP/best-$objective.json"
  start=$(date +%s.%N)
  expect_exit 0 "$model --objective $objective" -- "$IB" best "$model" --device cuda --quiet --objective "$objective" \
    "${args[@]}" "${library[@]}" --json "$json" || { cat "$TMP/err"; continue; }
  end=$(date +%s.%N)
  cp "$TMP/out" "$TMP/best-$objective.txt"
  sed -n '1,/^the winner.s generation measurement/p' "$TMP/out"
  echo "race wall time: $(python3 -c "print(round($end - $start, 1))") s"
  [ -n "${OUT:-}" ] && cp "$json" "$TMP/best-$objective.txt" "$OUT/"
  json_check "$json" "d['kind'] == 'generation' and d['search']['objective'] == '$objective' and len(d['candidates']) == 30" "$objective: 30 candidates"
  json_check "$json" "all(c['stage'] == 'skipped' and 'needs flash attention' in c['why'] for c in d['candidates'] if c['label'].startswith('fa off, kv q'))" "$objective: the quantized caches without flash attention do not apply"
  json_check "$json" "all(c['why'] for c in d['candidates'] if c['stage'] in ('skipped', 'failed'))" "$objective: every other refusal or failure says why"
  python3 - "$json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
odd = [c for c in d['candidates'] if c['stage'] in ('skipped', 'failed') and not c['label'].startswith('fa off, kv q')]
for c in odd: print(f"  also {c['stage']}: {c['label']}: {c['why']}")
PY
  json_check "$json" "[c['stage'] for c in d['candidates']].count('winner') == 1" "$objective: one winner"
  json_check "$json" "sorted(c['asked'] or c['label'] for c in d['candidates']) == sorted('fa %s, kv %s, ubatch %s' % (f, k, u) for f in ('off', 'on') for k in ('f16', 'bf16', 'f32', 'q8_0', 'q4_0') for u in (128, 256, 512))" "$objective: every combination a row, as asked"
  json_check "$json" "all(d['candidates'][c['same_as']]['stage'] != 'merged' and c['runs'] == 0 for c in d['candidates'] if c['stage'] == 'merged')" "$objective: each merged row names a run raced, never measured"
  echo "  merged: $(python3 -c "import json, sys; d = json.load(open(sys.argv[1])); print(d['search']['merged'], [(c['label'], c['same_as']) for c in d['candidates'] if c['stage'] == 'merged'])" "$json")"
  json_check "$json" "(lambda g, w: g['workload']['n_ubatch'] == int(w.split('ubatch ')[1]))(d['winner_generation'], d['winner'])" "$objective: the winner labelled by the n_ubatch that ran"
  json_check "$json" "(lambda g: g['device'] == 'cuda' and g['workload']['n_gpu_layers'] >= g['workload']['n_layers'] > 0)(d['winner_generation'])" "$objective: the winner's layers all on the GPU"
  json_check "$json" "(lambda g, w: g['workload']['kv_type'] == w.split(', ')[1][3:] and g['workload']['flash_attn'] == w.startswith('fa on'))(d['winner_generation'], d['winner'])" "$objective: the winner measured with its settings"
  json_check "$json" "(lambda g: g['tokens_per_s'] == g['runs'] * g['settings']['new_tokens'] / sum(x for r in g['samples']['token_ms'] for x in r) * 1e3)(d['winner_generation'])" "$objective: the winner's tokens/s is tokens / time"
done
finish
