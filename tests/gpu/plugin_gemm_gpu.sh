# The example GEMM plugin on the GPU: a 4096^3 fp16 cuBLAS GEMM timed with
# CUDA events on the stream the plugin hands over. Prints its median and
# TFLOP/s; a GEMM faster than the GPU's peak would mean the timing is wrong
# (IB_PEAK_TFLOPS, default the H200's dense fp16 peak, 989). Then the batch
# dimension under throughput and the pitfalls rows that apply. Last, the
# built-in spin kernel through its table of the backend ABI (--backend spin).
. "$(dirname "$0")/../cli/lib.sh"
. "$(dirname "$0")/require_device.sh"
gemm=${IB_GEMM_PLUGIN:?the example plugin (tests/CMakeLists.txt sets it)}
peak=${IB_PEAK_TFLOPS:-989}
size="--backend plugin:$gemm --option m=4096 --option n=4096 --option k=4096 --option dtype=fp16 --device cuda"

# shellcheck disable=SC2086 # option lists are words
expect_exit 0 "4096^3 fp16 GEMM, latency" -- "$IB" latency $size --runs 300 --json "$TMP/l.json"
json_check "$TMP/l.json" "d['timing'] == 'device-events' and d['latency_ms']['n'] == 300" "timed with CUDA events on the plugin's stream"
python3 - "$TMP/l.json" "$peak" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
median_ms = d['latency_ms']['p50']
tflops = 2 * 4096 ** 3 / (median_ms * 1e-3) / 1e12
print(f"gemm 4096^3 fp16: median {median_ms * 1e3:.1f} us, {tflops:.1f} TFLOP/s, "
      f"{100 * tflops / float(sys.argv[2]):.1f}% of {sys.argv[2]} TFLOP/s")
PY
json_check "$TMP/l.json" "2 * 4096 ** 3 / (d['latency_ms']['p50'] * 1e-3) / 1e12 < $peak * 1.02" "no faster than the GPU's peak"
# How close to the peak, and how close the host's clock, are the machine's
# figures (above a fifth of the peak, within 15% on the H200 before issue
# 28); that the GEMM is no faster than the peak, and the host's time holds
# the events', hold at any speed.
json_record "$TMP/l.json" "round(2 * 4096 ** 3 / (d['latency_ms']['p50'] * 1e-3) / 1e12 / $peak, 4)" "GEMM: share of the peak"
json_record "$TMP/l.json" "round(d['host_latency_ms']['p50'] / d['latency_ms']['p50'], 4)" "GEMM: host time / events, median"
json_check "$TMP/l.json" "d['host_latency_ms']['p50'] >= d['latency_ms']['p50']" "the synchronized host time holds the events'"

# shellcheck disable=SC2086
expect_exit 0 "throughput over batches of GEMMs" -- "$IB" throughput $size --batches 1,2,4 --runs 20 --json "$TMP/t.json"
json_check "$TMP/t.json" "[p['status'] for p in d['curve']] == ['ok'] * 3" "each batch of GEMMs measured"
# shellcheck disable=SC2086
expect_exit 0 "pitfalls" -- "$IB" pitfalls $size --runs 50 --json "$TMP/p.json"
json_check "$TMP/p.json" "{r['kind']: r['applies'] for r in d['rows']} == {'correct': True, 'host_no_sync': True, 'copies': False, 'no_warmup': False, 'single_sample': True, 'zero_input': True, 'tf32': False}" "host clock without sync and zero-filled inputs apply; copies and cold start are not applicable"
json_check "$TMP/p.json" "all(r['status'] == 'ok' for r in d['rows'])" "every row that applies was measured"
json_record "$TMP/p.json" "round(d['rows'][1]['stats']['p50'] / d['rows'][0]['stats']['p50'], 4)" "the host clock without sync against the correct figure (under 1/5 before)"
# shellcheck disable=SC2086
expect_exit 0 "--flush-l2 and --exclude-launch apply" -- "$IB" latency $size --runs 50 --flush-l2 --exclude-launch

expect_exit 0 "the spin kernel by name, 200 us" -- "$IB" latency --backend spin --option us=200 --runs 200 --json "$TMP/s.json"
json_check "$TMP/s.json" "d['timing'] == 'device-events' and d['latency_ms']['min'] >= 0.2 * (1 - 1e-3)" "a 200 us kernel: no run below 200 us (it spins on the GPU's clock)"
json_record "$TMP/s.json" "round(d['latency_ms']['p50'] / 0.2, 4)" "the 200 us kernel: median / 200 us (within 5% before)"
finish
