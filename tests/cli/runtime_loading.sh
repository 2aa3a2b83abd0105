# ONNX Runtime is loaded when a model is measured, not linked: a library
# that cannot be loaded is one line and exit 2 where a model is opened, and
# what measures no model (the fake backend, compare, info, the zoo) works
# without it. INFERBENCH_ONNXRUNTIME_LIBRARY names the library (docs/cli.md).
. "$(dirname "$0")/lib.sh"

if command -v readelf >/dev/null; then
  if readelf -d "$IB" | grep -q 'NEEDED.*onnxruntime'; then
    fail "the program links ONNX Runtime: $(readelf -d "$IB" | grep onnxruntime)"
  else
    pass "the program does not link ONNX Runtime"
  fi
fi

fast="--device cpu --warmup-runs 2 --warmup-ms 0 --warmup-max-ms 1000 --runs 10"
missing=/nonexistent/libonnxruntime.so.1
expect_exit 2 "a model with a missing library" -- \
  env INFERBENCH_ONNXRUNTIME_LIBRARY=$missing "$IB" latency zoo:mlp $fast
expect_grep "^inferbench: cannot load the ONNX Runtime library: $missing: cannot open shared object file" "$TMP/err" \
  "says which library and why"
expect_exit 2 "throughput with a missing library" -- \
  env INFERBENCH_ONNXRUNTIME_LIBRARY=$missing "$IB" throughput zoo:mlp --device cpu --batches 1
expect_exit 2 "a library that is not ONNX Runtime" -- \
  env INFERBENCH_ONNXRUNTIME_LIBRARY=libm.so.6 "$IB" latency zoo:mlp $fast
expect_grep "^inferbench: libm.so.6 is not ONNX Runtime: it has no OrtGetApiBase$" "$TMP/err" "says it is not ONNX Runtime"

# Without ONNX Runtime: results made (the fake backend) and compared.
without() { env INFERBENCH_ONNXRUNTIME_LIBRARY=$missing "$IB" "$@"; }
expect_exit 0 "the fake backend measures without ONNX Runtime" -- \
  without latency --backend fake --option us=1000 --runs 40 --json "$TMP/a.json"
expect_grep "^median 1 ms, 95% CI \[1, 1\] ms" "$TMP/out" "its scripted 1 ms, exactly (virtual clock)"
json_check "$TMP/a.json" "d['environment']['runtime'] == {'name': 'fake', 'version': '', 'library': '', 'build': '', 'provider': 'fake'}" "json: the fake's runtime, no ONNX Runtime facts where none loads"
expect_exit 0 "a slower one" -- without latency --backend fake --option us=1250 --runs 40 --json "$TMP/b.json"
expect_exit 0 "compare runs without ONNX Runtime" -- without compare "$TMP/a.json" "$TMP/b.json"
expect_grep "^median change: \+25\.00%" "$TMP/out" "and compares"
expect_grep "^verdict: slower" "$TMP/out" "with its verdict"
expect_exit 0 "zoo list without ONNX Runtime" -- without zoo list
expect_exit 0 "zoo export without ONNX Runtime" -- without zoo export mlp -o "$TMP/mlp.onnx"
if [ -s "$TMP/mlp.onnx" ]; then pass "the model is written"; else fail "no $TMP/mlp.onnx"; fi
without info >"$TMP/info" 2>&1 # exit 1 without a GPU: not the point here
expect_grep "^onnxruntime +cannot be loaded" "$TMP/info" "info says it cannot be loaded"

# The library found by default (the build's RUNPATH) when nothing is set.
expect_exit 0 "a model with the default library" -- "$IB" latency zoo:mlp $fast
finish
