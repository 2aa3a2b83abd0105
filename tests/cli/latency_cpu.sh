# inferbench latency end to end on the CPU execution provider, with a small
# model the zoo generates.
. "$(dirname "$0")/lib.sh"

expect_exit 0 "export zoo:mlp" -- "$IB" zoo export mlp -o "$TMP/mlp.onnx"

expect_exit 0 "latency on a file, cpu, json" -- \
  "$IB" latency "$TMP/mlp.onnx" --device cpu --runs 50 --warmup-runs 3 --warmup-ms 0 --json "$TMP/l.json"
expect_grep "cold first run" "$TMP/out" "the report shows the cold run"
expect_grep "^host +50 " "$TMP/out" "the table has 50 host samples"
expect_grep "^runtime options: threads=default, math=fp32 \(runtime default\)$" "$TMP/out" "the report says how the runtime was set up (the math too)"
json_check "$TMP/l.json" "d['latency_ms']['n'] == 50 and len(d['samples']['host_ms']) == 50" "json: 50 samples kept"
json_check "$TMP/l.json" "all(k in d['latency_ms'] for k in ('n','mean','std','min','p50','p90','p95','p99','p999','max','ci95_median'))" "json: every statistic"
json_check "$TMP/l.json" "d['latency_ms']['min'] <= d['latency_ms']['p50'] <= d['latency_ms']['p99'] <= d['latency_ms']['max']" "json: order statistics ordered"
json_check "$TMP/l.json" "d['cold_ms'] > 0 and d['warmup']['runs'] >= 3 and d['device'] == 'cpu' and d['batch'] == 1" "json: cold run, warm-up, device, batch"
json_check "$TMP/l.json" "d['environment']['runtime']['provider'] == 'CPUExecutionProvider' and d['environment']['runtime']['name'] == 'onnxruntime' and d['environment']['runtime']['version'].startswith('1.29')" "json: environment"
json_check "$TMP/l.json" "d['environment']['runtime']['library'].split('/')[-1].startswith('libonnxruntime.so') and d['environment']['runtime']['build'] in ('cpu', 'cuda')" "json: which core library ran"
json_check "$TMP/l.json" "d['partial'] is False and d['timing'] == 'host-clock'" "json: complete, host clock"

expect_exit 0 "latency zoo:mlp batch 8" -- "$IB" latency zoo:mlp --device cpu --batch 8 --runs 20 --json "$TMP/b8.json"
json_check "$TMP/b8.json" "d['batch'] == 8 and d['workload']['inputs'][0]['shape'][0] == 8" "json: batch 8 bound"

expect_exit 0 "adaptive precision" -- "$IB" latency zoo:mlp --device cpu --precision 50% --min-runs 10 --max-runs 200 --json "$TMP/a.json"
json_check "$TMP/a.json" "d['precision']['target'] == 0.5 and d['latency_ms']['n'] <= 200" "json: adaptive stop recorded"

# Bad input that needs a real model: one line, exit 2, nothing measured.
expect_exit 2 "--shape for an input the model lacks" -- "$IB" latency zoo:mlp --device cpu --shape nope:1x256
expect_grep "nope" "$TMP/err" "the error names the unknown input"
expect_grep "input" "$TMP/err" "the error names the model's inputs"
expect_exit 2 "--shape of the wrong rank" -- "$IB" latency zoo:mlp --device cpu --shape input:1x256x3
expect_exit 2 "--cuda-graph on the CPU" -- "$IB" latency zoo:mlp --device cpu --cuda-graph --json "$TMP/graph.json"
expect_grep "^inferbench: --cuda-graph needs the CUDA execution provider" "$TMP/err" "the error says the graph needs CUDA"
if [ ! -e "$TMP/graph.json" ]; then pass "no --json file left"; else fail "a --json file was left"; fi
if ! "$IB" info >/dev/null 2>&1; then
  expect_exit 2 "--device cuda without a GPU" -- "$IB" latency zoo:mlp --device cuda --json "$TMP/nogpu.json"
  expect_grep "no usable CUDA GPU" "$TMP/err" "the error says there is no GPU"
  if [ ! -e "$TMP/nogpu.json" ] && [ -z "$(find "$TMP" -name 'nogpu.json*')" ]; then
    pass "no --json file left after the refusal"
  else
    fail "a --json file was left after the refusal"
  fi
fi

expect_exit 0 "--help" -- "$IB" latency --help
expect_grep "[-][-]warmup-runs" "$TMP/out" "help lists options"
finish
