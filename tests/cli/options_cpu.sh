# Documented options and commands that no other test runs, each checked for
# its effect where the CPU can show it: the statistics of a real JSON file
# recomputed from its own samples, plain `inferbench` and the MODEL
# shorthand, --seed, --cudnn-search/--prefer-nhwc on the CPU, --memory-cap-mb,
# --warmup-max-ms, --max-time-ms, info, zoo list/export, and compare's
# warnings for a different batch, device, GPU and runtime.
# (--device-id and the GPU side of the CUDA options: tests/gpu/effects_gpu.sh.)
. "$(dirname "$0")/lib.sh"

# stats_match FILE STATS-KEY SAMPLES-KEY: every summary statistic of
# d[STATS-KEY] recomputed from d['samples'][SAMPLES-KEY] (type-7 quantiles,
# n-1 standard deviation), to 1e-9 relative.
stats_match() {
  if python3 - "$@" 2>"$TMP/pyerr" <<'EOF'; then pass "json: $2 recomputed from samples.$3"; else fail "json: $2 does not match samples.$3: $(cat "$TMP/pyerr")"; fi
import json, math, sys
d = json.load(open(sys.argv[1]))
st, x = d[sys.argv[2]], sorted(d['samples'][sys.argv[3]])
n = len(x)
def q(p):
    h = (n - 1) * p
    lo = math.floor(h)
    return x[-1] if lo + 1 >= n else x[lo] + (h - lo) * (x[lo + 1] - x[lo])
mean = sum(x) / n
std = math.sqrt(sum((v - mean) ** 2 for v in x) / (n - 1)) if n > 1 else 0.0
want = dict(n=n, mean=mean, std=std, min=x[0], p50=q(.5), p90=q(.9), p95=q(.95), p99=q(.99),
            p999=q(.999), max=x[-1], cv=std / mean)
bad = [f"{k}: {st[k]!r} vs {v!r}" for k, v in want.items()
       if not abs(st[k] - v) <= 1e-9 * max(abs(v), 1e-300)]
if bad:
    sys.exit("; ".join(bad))
EOF
}

# --- plain inferbench, and the MODEL / zoo:NAME shorthand --------------------
expect_exit 0 "plain inferbench (zoo:efficientnet-b0)" -- \
  "$IB" --device cpu --runs 3 --warmup-runs 1 --warmup-ms 0 --no-steady --json "$TMP/plain.json"
expect_grep "^inferbench latency: zoo:efficientnet-b0, batch 1" "$TMP/out" "plain inferbench measures the default model's latency"
json_check "$TMP/plain.json" "d['schema'] == 'inferbench.latency/2' and d['model'] == 'zoo:efficientnet-b0' and d['latency_ms']['n'] == 3" "json: the default job, 3 runs"
expect_exit 0 "inferbench zoo:mlp" -- "$IB" zoo:mlp --device cpu --runs 200 --json "$TMP/mlp.json"
expect_grep "^inferbench latency: zoo:mlp, batch 1" "$TMP/out" "zoo:NAME alone runs latency"
expect_exit 0 "zoo export mlp (fp32)" -- "$IB" zoo export mlp -o "$TMP/mlp.onnx"
expect_exit 0 "inferbench FILE.onnx" -- "$IB" "$TMP/mlp.onnx" --device cpu --runs 20 --json "$TMP/file.json"
json_check "$TMP/file.json" "d['schema'] == 'inferbench.latency/2' and d['model'].endswith('mlp.onnx') and d['latency_ms']['n'] == 20" "a model file alone runs latency"

# --- the summary statistics are those of the samples written beside them -----
stats_match "$TMP/mlp.json" latency_ms host_ms
stats_match "$TMP/mlp.json" host_latency_ms host_ms
stats_match "$TMP/plain.json" latency_ms host_ms

# --- --seed: accepted as a number only (its effect on the inputs: test_ort_cpu)
expect_exit 0 "--seed 7" -- "$IB" latency zoo:mlp --device cpu --seed 7 --runs 5
expect_exit 2 "--seed not a number" -- "$IB" latency zoo:mlp --device cpu --seed x7

# --- CUDA-only runtime options on the CPU: refused, or recorded as not applied
for opt in "--cudnn-search heuristic" "--prefer-nhwc"; do
  # shellcheck disable=SC2086
  "$IB" latency zoo:mlp --device cpu $opt --runs 5 --json "$TMP/cuda_opt.json" >"$TMP/out" 2>"$TMP/err"
  rc=$?
  if [ $rc -eq 2 ] && [ "$(grep -c '' "$TMP/err")" -eq 1 ] && grep -q -- "${opt%% *}" "$TMP/err"; then
    pass "$opt on the CPU: refused, naming the option"
  elif [ $rc -eq 0 ] && grep -q "^runtime options: threads=default, math=" "$TMP/out" &&
    python3 -c "import json,sys; o=json.load(open(sys.argv[1]))['workload']['backend_options']; sys.exit(0 if o == {'threads': 'default'} else 1)" "$TMP/cuda_opt.json"; then
    pass "$opt on the CPU: measured, and the report says it was not applied"
  else
    fail "$opt on the CPU: exit $rc, neither refused nor reported as not applied: $(cat "$TMP/err")"
  fi
  rm -f "$TMP/cuda_opt.json"
done

# --- --memory-cap-mb: the search stops at the largest batch whose inputs and
# outputs fit in the cap (zoo:mlp: 256 + 10 floats = 1064 bytes an input).
expect_exit 0 "throughput --memory-cap-mb 1" -- "$IB" throughput zoo:mlp --device cpu --memory-cap-mb 1 \
  --runs 5 --warmup-runs 1 --warmup-ms 0 --no-steady --json "$TMP/cap.json"
json_check "$TMP/cap.json" "d['search']['largest_fitting'] == (1 << 20) // 1064 and 'memory-cap-mb' in d['search']['limit_reason']" "json: the largest batch is the cap's (985), and the cap is named"
json_check "$TMP/cap.json" "max(p['batch'] for p in d['curve']) == 985" "json: no point above the cap"
# The answers read off the real curve: the peak is the best back-to-back
# rate, the knee the smallest batch within 95% of it.
json_check "$TMP/cap.json" "d['peak']['batch'] == max((p for p in d['curve'] if p['status'] == 'ok'), key=lambda p: p['items_per_s'])['batch']" "json: the peak is the best back-to-back rate"
json_check "$TMP/cap.json" "d['knee']['batch'] == min(p['batch'] for p in d['curve'] if p['status'] == 'ok' and p['items_per_s'] >= 0.95 * d['peak']['items_per_s'])" "json: the knee is the smallest batch within 95% of the peak"

# --- --warmup-max-ms: a cap of 0 ends warm-up after its minimum count, not
# steady; without it the steady rule needs two windows of runs.
expect_exit 0 "--warmup-max-ms 0" -- "$IB" latency zoo:mlp --device cpu --warmup-max-ms 0 --warmup-ms 0 \
  --warmup-runs 1 --runs 5 --json "$TMP/wcap.json"
json_check "$TMP/wcap.json" "d['warmup']['runs'] == 1 and d['warmup']['steady'] is False and 'not_steady' in d['warnings']" "json: warm-up capped at once, not steady, warned"
expect_grep "NOT steady" "$TMP/out" "the report says warm-up was not steady"
expect_exit 0 "no warm-up cap" -- "$IB" latency zoo:mlp --device cpu --warmup-ms 0 --warmup-runs 1 --runs 5 --json "$TMP/wfree.json"
json_check "$TMP/wfree.json" "d['warmup']['runs'] >= 6 and (d['warmup']['steady'] or 'not_steady' in d['warnings'])" "json: uncapped warm-up runs until two windows are judged"

# --- --max-time-ms: the time cap ends sampling once the minimum is reached,
# and never before it.
expect_exit 0 "--max-time-ms 200, an unreachable precision" -- "$IB" latency zoo:mlp --device cpu \
  --precision 0.01% --min-runs 10 --max-runs 1000000 --max-time-ms 200 --json "$TMP/tcap.json"
# Every run but the last started before the cap: together they took less.
json_check "$TMP/tcap.json" "10 <= d['latency_ms']['n'] < 1000000 and sum(d['samples']['host_ms'][:-1]) < 200 and d['precision']['met'] is False and 'precision_not_met' in d['warnings']" "json: stopped by the 200 ms cap, precision not met"
expect_grep "NOT met after" "$TMP/out" "the report says the target was not met"
expect_exit 0 "--max-time-ms 1 below the minimum count" -- "$IB" latency zoo:mlp --device cpu \
  --precision 0.01% --min-runs 300 --max-runs 1000000 --max-time-ms 1 --json "$TMP/tmin.json"
json_check "$TMP/tmin.json" "d['latency_ms']['n'] == 300" "json: the minimum count is kept past the time cap"

# --- info ----------------------------------------------------------------------
"$IB" info >"$TMP/info" 2>"$TMP/info.err"
rc=$?
expect_grep "^onnxruntime +1\.[0-9]+\.[0-9]+, (cpu|cuda) build" "$TMP/info" "info names ONNX Runtime and its build"
expect_grep "^cpu +[^ ]" "$TMP/info" "info names the CPU"
if grep -q "^gpu *none usable" "$TMP/info"; then
  if [ $rc -eq 1 ]; then pass "info: exit 1 without a usable GPU"; else fail "info: exit $rc without a usable GPU"; fi
else
  if [ $rc -eq 0 ]; then pass "info: exit 0 with a GPU"; else fail "info: exit $rc with a GPU"; fi
fi

# --- zoo list / export -------------------------------------------------------
expect_exit 0 "zoo list" -- "$IB" zoo list
for m in mlp resnet-50 mobilenet-v2 efficientnet-b0 bert-base; do
  expect_grep "^$m +[0-9]+ " "$TMP/out" "zoo list: $m with its parameter count"
done
expect_exit 0 "zoo export mlp --fp16" -- "$IB" zoo export mlp --fp16 -o "$TMP/mlp16.onnx"
size32=$(stat -c %s "$TMP/mlp.onnx")
size16=$(stat -c %s "$TMP/mlp16.onnx")
if [ $((size16 * 2)) -gt $((size32 - 4096)) ] && [ $((size16 * 2)) -lt $((size32 + 4096)) ]; then
  pass "fp16 export is half the size of fp32 ($size16 vs $size32 bytes)"
else
  fail "fp16 export $size16 bytes vs fp32 $size32 bytes: not half"
fi
expect_exit 0 "latency on the fp16 export" -- "$IB" latency "$TMP/mlp16.onnx" --device cpu --runs 5 --json "$TMP/h.json"
json_check "$TMP/h.json" "d['workload']['inputs'][0]['type'] == 'float16'" "json: the fp16 model takes float16 inputs"
expect_exit 2 "zoo export to an unwritable path" -- "$IB" zoo export mlp -o "$TMP/no/such/dir/m.onnx"
expect_grep "^inferbench: cannot write" "$TMP/err" "the error says it cannot write"
if [ -z "$(find "$TMP" -path '*no/such*')" ] && [ ! -e "$TMP/no" ]; then pass "nothing written"; else fail "something written"; fi
expect_exit 2 "zoo export of an unknown model" -- "$IB" zoo export nope -o "$TMP/nope.onnx"

# --- compare: a warning for each difference in what was measured -------------
# edited_copy SRC DST PYTHON-STATEMENT: DST is SRC with d changed.
edited_copy() {
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); $3; json.dump(d, open(sys.argv[2],'w'))" "$1" "$2"
}
edited_copy "$TMP/mlp.json" "$TMP/batch.json" "d['batch'] = 8"
edited_copy "$TMP/mlp.json" "$TMP/device.json" "d['device'] = 'cuda'"
edited_copy "$TMP/mlp.json" "$TMP/gpu_a.json" "d['environment']['devices'] = [{'index': 0, 'name': 'NVIDIA H100'}]"
edited_copy "$TMP/mlp.json" "$TMP/gpu_b.json" "d['environment']['devices'] = [{'index': 0, 'name': 'NVIDIA H200'}]"
edited_copy "$TMP/mlp.json" "$TMP/ort.json" "d['environment']['runtime']['version'] = '1.22.0'"
# A file of the flat keys environment.runtime replaced (schema 1, early 2)
edited_copy "$TMP/mlp.json" "$TMP/flat.json" "rt = d['environment'].pop('runtime'); d['environment'].update(onnxruntime_version='1.22.0', execution_provider=rt['provider'])"
expect_exit 0 "compare: different batch" -- "$IB" compare "$TMP/mlp.json" "$TMP/batch.json" --json "$TMP/cb.json"
expect_grep "^warning: different batch sizes: 1 \(A\) vs 8 \(B\); compared anyway" "$TMP/out" "different batch: a warning"
json_check "$TMP/cb.json" "d['warnings'] == ['batch']" "json: the batch warning, only it"
expect_exit 0 "compare: different device" -- "$IB" compare "$TMP/mlp.json" "$TMP/device.json" --json "$TMP/cd.json"
expect_grep "^warning: different devices: cpu \(A\) vs cuda \(B\); compared anyway" "$TMP/out" "different device: a warning"
json_check "$TMP/cd.json" "d['warnings'] == ['device']" "json: the device warning, only it"
expect_exit 0 "compare: different GPU" -- "$IB" compare "$TMP/gpu_a.json" "$TMP/gpu_b.json" --json "$TMP/cg.json"
expect_grep "^warning: different GPUs: NVIDIA H100 \(A\) vs NVIDIA H200 \(B\); compared anyway" "$TMP/out" "different GPU: a warning"
json_check "$TMP/cg.json" "d['warnings'] == ['gpu']" "json: the GPU warning, only it"
expect_exit 0 "compare: GPU against none" -- "$IB" compare "$TMP/mlp.json" "$TMP/gpu_b.json"
expect_grep "^warning: different GPUs: none \(A\) vs NVIDIA H200 \(B\)" "$TMP/out" "no GPU against a GPU: a warning"
expect_exit 0 "compare: different ONNX Runtime" -- "$IB" compare "$TMP/ort.json" "$TMP/mlp.json" --json "$TMP/co.json"
expect_grep "^warning: different runtime versions: 1\.22\.0 \(A\) vs 1\.[0-9.]+ \(B\); compared anyway" "$TMP/out" "different runtime: a warning"
json_check "$TMP/co.json" "d['warnings'] == ['runtime_version']" "json: the runtime warning, only it"
expect_exit 0 "compare: a file of the flat runtime keys" -- "$IB" compare "$TMP/flat.json" "$TMP/mlp.json" --json "$TMP/cf.json"
json_check "$TMP/cf.json" "d['warnings'] == ['runtime_version'] and d['a']['provider'] == 'CPUExecutionProvider'" "json: its version and provider read"
expect_exit 0 "compare: the same file" -- "$IB" compare "$TMP/mlp.json" "$TMP/mlp.json" --json "$TMP/cs.json"
json_check "$TMP/cs.json" "d['warnings'] == [] and d['change']['pct'] == 0 and d['verdict'] in ('no change', 'inconclusive')" "json: a file against itself: no warning, a change of 0"
finish
