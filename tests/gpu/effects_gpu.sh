# The GPU options shown to have their effect end to end. How large an
# effect is depends on the machine: since issue 28 the sizes are recorded
# ("record:" lines, $IB_RECORD), not bounded; the H200 figures of
# docs/measurements.md:
# - --flush-l2 makes a model whose weights fit in L2 slower (zoo:mlp at
#   batch 64, launch excluded: 36.8 -> 39.1 us, +6%; the tool's own compare
#   called it slower);
# - --exclude-launch removes the launch latency of a launch-bound model
#   (EfficientNet-B0 batch 1: 1.8-2.6 ms with it, 0.95 ms without; 1.36 ms
#   of launch overhead measured; checked: some measured, above 0);
# - --no-gpu-state: no NVML sample taken, none written;
# - --cudnn-search and --prefer-nhwc recorded as applied;
# - --device-id of a GPU that is not there: refused;
# - the throughput search against a real out-of-memory: the CUDA arena
#   capped by --memory-cap-mb, so that the cap is met within seconds.
. "$(dirname "$0")/../cli/lib.sh"
. "$(dirname "$0")/require_device.sh"

# p50_ratio A.json B.json: B's median over A's, then the two medians (ms).
p50_ratio() {
  python3 - "$1" "$2" <<'EOF'
import json, sys
a, b = (json.load(open(p))['latency_ms']['p50'] for p in sys.argv[1:3])
print(f"{b / a:.4f} {a:.6g} {b:.6g}")
EOF
}

# --- --flush-l2 ------------------------------------------------------------------
# Alternated, twice: a slower flushed run is not the machine drifting.
for i in 1 2; do
  expect_exit 0 "mlp batch 64 held ($i)" -- "$IB" latency zoo:mlp --device cuda --batch 64 --exclude-launch \
    --runs 2000 --json "$TMP/warm$i.json"
  expect_exit 0 "mlp batch 64 held, --flush-l2 ($i)" -- "$IB" latency zoo:mlp --device cuda --batch 64 \
    --exclude-launch --flush-l2 --runs 2000 --json "$TMP/flush$i.json"
  json_check "$TMP/flush$i.json" "d['config']['flush_l2'] is True and d['timing'] == 'device-events'" "the flushed run says so ($i)"
  read -r ratio warm_ms flush_ms < <(p50_ratio "$TMP/warm$i.json" "$TMP/flush$i.json")
  record "--flush-l2 ($i): $warm_ms -> $flush_ms ms, x$ratio (+2% at least before)"
  "$IB" compare "$TMP/warm$i.json" "$TMP/flush$i.json" --fail-if-slower >"$TMP/out" 2>"$TMP/err"
  code=$?
  [ "$code" -eq 0 ] || [ "$code" -eq 3 ] && pass "compare reads the two ($i)" || fail "compare ($i): exit $code $(cat "$TMP/err")"
  record "compare's verdict on --flush-l2 ($i): exit $code (3: slower, as before)"
done

# --- --exclude-launch ------------------------------------------------------------
expect_exit 0 "efficientnet-b0 batch 1, launch included" -- "$IB" latency zoo:efficientnet-b0 --device cuda \
  --runs 300 --json "$TMP/launch.json"
expect_exit 0 "efficientnet-b0 batch 1, --exclude-launch" -- "$IB" latency zoo:efficientnet-b0 --device cuda \
  --exclude-launch --runs 300 --json "$TMP/held.json"
json_check "$TMP/held.json" "d['config']['exclude_launch'] is True and d['launch_overhead_ms'] > 0" "the launch overhead excluded is measured (above 0)"
json_record "$TMP/held.json" "d['launch_overhead_ms']" "launch overhead excluded, ms (at least 0.3 before, 1.36 seen)"
json_check "$TMP/launch.json" "d['launch_overhead_ms'] is None" "no launch overhead without --exclude-launch"
read -r ratio with_ms without_ms < <(p50_ratio "$TMP/launch.json" "$TMP/held.json")
record "--exclude-launch: $with_ms -> $without_ms ms, x$ratio (under 0.75 before)"

# --- --no-gpu-state ------------------------------------------------------------------
json_check "$TMP/launch.json" "'nvml_note' in d['environment']['devices'][0] or len(d['environment']['devices'][0]['gpu_samples']) >= 2" "GPU state sampled by default (before and after at least), where NVML is"
expect_exit 0 "latency --no-gpu-state" -- "$IB" latency zoo:mlp --device cuda --no-gpu-state --runs 200 --json "$TMP/nostate.json"
json_check "$TMP/nostate.json" "d['environment']['devices'][0]['gpu_samples'] == [] and not set(d['warnings']) & {'throttled', 'clock_drop', 'low_power_start'}" "json: no GPU sample, no GPU-state warning"
if grep -qE "^warning: the (GPU|SM clock)" "$TMP/out"; then fail "text: a GPU-state warning without samples"; else pass "text: no GPU-state warning"; fi

# --- runtime options applied and recorded -----------------------------------------
expect_exit 0 "--cudnn-search heuristic --prefer-nhwc" -- "$IB" latency zoo:efficientnet-b0 --device cuda \
  --cudnn-search heuristic --prefer-nhwc --runs 50 --json "$TMP/rt.json"
json_check "$TMP/rt.json" "d['workload']['backend_options'] == {'cudnn_search': 'HEURISTIC', 'prefer_nhwc': 'yes', 'cuda_graph': 'no', 'threads': 'default'}" "json: cuDNN search and NHWC recorded"
expect_grep "^runtime options: cudnn_search=HEURISTIC, prefer_nhwc=yes," "$TMP/out" "text: cuDNN search and NHWC shown"
expect_exit 2 "--cudnn-search of an unknown kind" -- "$IB" latency zoo:mlp --device cuda --cudnn-search fast

# --- --device-id ---------------------------------------------------------------------
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
[ "$gpus" -ge 1 ] 2>/dev/null || gpus=1
expect_exit 2 "--device-id $gpus (no such GPU)" -- "$IB" latency zoo:mlp --device cuda --device-id "$gpus" --json "$TMP/noid.json"
if [ ! -e "$TMP/noid.json" ]; then pass "no --json file left"; else fail "a --json file was left"; fi
if [ "$gpus" -ge 2 ]; then
  expect_exit 0 "--device-id 1 (a second GPU)" -- "$IB" latency zoo:mlp --device cuda --device-id 1 --runs 20
fi

# --- the throughput search against a real out-of-memory ----------------------------
# The CUDA arena capped at 512 MB: EfficientNet-B0 runs out of it at a batch
# of a few dozen to a few hundred; the search must find the exact largest
# batch that fits (a probe that fits at L, one that does not at L + 1) and
# the curve must end there.
start=$(date +%s)
expect_exit 0 "throughput search, arena capped" -- "$IB" throughput zoo:efficientnet-b0 --device cuda \
  --cudnn-search heuristic --max-batch 4096 --memory-cap-mb 512 --runs 10 --warmup-runs 2 --warmup-ms 0 \
  --no-steady --json "$TMP/oom.json"
echo "search and sweep: $(($(date +%s) - start)) s"
json_check "$TMP/oom.json" "d['search']['searched'] and 1 <= d['search']['largest_fitting'] < 4096 and not d['search']['limited_by_max_batch']" "json: the search stopped below --max-batch"
json_check "$TMP/oom.json" "any(not p['fits'] and p['failure'] == 'device out of memory' for p in d['search']['probes'])" "json: a real device out-of-memory was met"
json_check "$TMP/oom.json" "(lambda L, pr: any(p['batch'] == L and p['fits'] for p in pr) and any(p['batch'] == L + 1 and not p['fits'] for p in pr))(d['search']['largest_fitting'], d['search']['probes'])" "json: the largest batch fits and the next does not"
json_check "$TMP/oom.json" "max(p['batch'] for p in d['curve']) == d['search']['largest_fitting'] and d['peak']['batch'] <= d['search']['largest_fitting']" "json: the curve ends at the largest batch"
finish
