# --math, --max-error and convert on the CPU execution provider
# (docs/precision.md): the math stated in every result, accuracy beside
# speed, the refusals, compare's warning.
. "$(dirname "$0")/lib.sh"
Q="--device cpu --runs 8 --warmup-runs 1 --warmup-ms 0 --no-steady --quiet"

# The default is stated: fp32 on the CPU, the runtime's own choice.
expect_exit 0 "latency, default math" -- "$IB" latency zoo:mlp $Q --json "$TMP/default.json"
expect_grep "^runtime options: .*, math=fp32 \(runtime default\)$" "$TMP/out" "text: the default math is stated"
json_check "$TMP/default.json" "d['workload']['math'] == 'fp32' and d['workload']['math_default'] is True and d['accuracy'] is None" "json: math fp32 (default), no accuracy check of fp32 itself"

# fp16: converted in memory, run, compared with strict fp32.
expect_exit 0 "latency --math fp16" -- "$IB" latency zoo:mobilenet-v2 $Q --math fp16 --json "$TMP/fp16.json"
expect_grep "^runtime options: .*, math=fp16$" "$TMP/out" "text: math fp16"
expect_grep "^accuracy of fp16 against fp32, TF32 off \(the same inputs, batch 1\):" "$TMP/out" "text: the accuracy table"
expect_grep "^logits +[0-9.e-]+ +[0-9.e+-]+ +[0-9.e-]+ +0\.99[0-9]+ +100\.0% +100\.0%$" "$TMP/out" "text: logits agree (cosine 0.99.., top-1 and top-5 100%)"
json_check "$TMP/fp16.json" "(lambda a: a['math'] == 'fp16' and a['reference'] == 'fp32, TF32 off' and a['tolerance'] is None and not a['over_tolerance'] and a['outputs'][0]['name'] == 'logits' and 0 < a['outputs'][0]['max_abs_error'] < 0.05 and a['outputs'][0]['cosine'] > 0.999 and a['outputs'][0]['top1_agreement'] == 1)(d['accuracy'])" "json: the accuracy of fp16"
json_check "$TMP/fp16.json" "d['workload']['inputs'][0]['type'] == 'float32' and d['workload']['outputs'][0]['type'] == 'float32'" "json: the inputs and outputs keep float32"

# --max-error marks a result above it, and one below it not.
expect_exit 0 "--max-error 1e-9" -- "$IB" latency zoo:mlp $Q --math fp16 --max-error 1e-9 --json "$TMP/tight.json"
expect_grep "OVER TOLERANCE" "$TMP/out" "text: over the tolerance"
expect_grep "^warning: fp16 is over the tolerance \(--max-error 1e-09\)" "$TMP/out" "text: the warning line"
json_check "$TMP/tight.json" "d['accuracy']['over_tolerance'] is True and d['accuracy']['tolerance'] == 1e-9 and d['accuracy']['outputs'][0]['over_tolerance'] is True" "json: over the tolerance"
expect_exit 0 "--max-error 1" -- "$IB" latency zoo:mlp $Q --math fp16 --max-error 1 --json "$TMP/loose.json"
json_check "$TMP/loose.json" "d['accuracy']['over_tolerance'] is False" "json: within a loose tolerance"
expect_exit 0 "throughput --math fp16" -- "$IB" throughput zoo:mlp --device cpu --batches 1,2 --runs 3 --warmup-runs 1 --warmup-ms 0 --no-steady --quiet --math fp16 --json "$TMP/tp.json"
json_check "$TMP/tp.json" "d['accuracy']['math'] == 'fp16' and d['workload']['math'] == 'fp16'" "json: throughput carries the math and the accuracy"

# The refusals: one line, exit 2.
expect_exit 2 "--math tf32 on the CPU" -- "$IB" latency zoo:mlp $Q --math tf32
expect_grep "CPU has no TF32" "$TMP/err" "tf32 refused: the CPU has no TF32"
expect_exit 2 "--math bf16 on the CPU provider" -- "$IB" latency zoo:mlp $Q --math bf16
expect_grep "bf16: the converted model does not run on the CPU provider: .*Gemm" "$TMP/err" "bf16 refused, naming the operator"
expect_exit 2 "--math fp64" -- "$IB" latency zoo:mlp $Q --math fp64
expect_grep "expected fp32, tf32, fp16 or bf16" "$TMP/err" "an unknown math is named"
expect_exit 2 "--max-error abc" -- "$IB" latency zoo:mlp $Q --max-error abc
expect_exit 2 "--max-error -1" -- "$IB" latency zoo:mlp $Q --max-error -1
expect_exit 2 "--max-error on convert" -- "$IB" convert zoo:mlp --math fp16 --max-error 1 -o "$TMP/x.onnx"

# convert writes the model; it then runs as is.
expect_exit 0 "convert zoo:mlp fp16" -- "$IB" convert zoo:mlp --math fp16 -o "$TMP/mlp16.onnx"
expect_grep "^wrote .*mlp16.onnx \([0-9]+ bytes, fp16\): 6 initializers" "$TMP/out" "convert says what it did"
expect_exit 0 "the converted model runs" -- "$IB" latency "$TMP/mlp16.onnx" $Q --json "$TMP/conv.json"
json_check "$TMP/conv.json" "d['workload']['inputs'][0]['type'] == 'float32'" "the converted model takes float32 input"
# Its weights are float16: that is its arithmetic, whatever its edges are,
# and there is no float32 of it to judge it against.
expect_grep "^runtime options: .*, math=fp16 \(the model's own\)$" "$TMP/out" "text: a float16 model's math is its own"
json_check "$TMP/conv.json" "d['workload']['math'] == 'fp16' and d['workload']['math_of_model'] is True and d['workload']['math_default'] is False and d['accuracy'] is None" "json: math fp16, the model's own, no accuracy check against itself"
expect_exit 2 "--math fp32 of a float16 model" -- "$IB" latency "zoo:mlp?fp16" $Q --math fp32
expect_grep "^inferbench: --math fp32: model 'zoo:mlp\?fp16' is fp16 itself \(most of its weights\), so it runs in fp16 whatever is asked" "$TMP/err" "a float16 model refuses another math, rather than be misnamed"
expect_exit 0 "--math fp16 of a float16 model: measured as it is" -- "$IB" latency "zoo:mlp?fp16" $Q --math fp16 --max-error 1 --json "$TMP/own.json"
expect_grep "warning: --max-error has no effect: the model is fp16 itself" "$TMP/err" "--max-error on a float16 model is said to do nothing"
json_check "$TMP/own.json" "d['workload']['math'] == 'fp16' and d['workload']['math_of_model'] is True and d['accuracy'] is None" "json: asked for its own math, still the model's own"
expect_exit 2 "convert a float16 model to bf16" -- "$IB" convert "zoo:mlp?fp16" --math bf16 -o "$TMP/z.onnx"
expect_grep "the model is fp16 itself" "$TMP/err" "converting float16 to bfloat16 is refused"
expect_exit 0 "convert an fp16 model: as is" -- "$IB" convert "zoo:mlp?fp16" --math fp16 -o "$TMP/same.onnx"
expect_grep "no float32 to convert, written as is" "$TMP/out" "an fp16 model is written as is"
expect_exit 0 "convert bf16" -- "$IB" convert zoo:mlp --math bf16 -o "$TMP/mlpbf.onnx"
expect_exit 2 "convert without --math" -- "$IB" convert zoo:mlp -o "$TMP/y.onnx"
expect_exit 2 "convert --math tf32" -- "$IB" convert zoo:mlp --math tf32 -o "$TMP/y.onnx"
expect_exit 2 "convert without -o" -- "$IB" convert zoo:mlp --math fp16
printf 'not onnx' >"$TMP/junk.onnx"
expect_exit 2 "convert junk" -- "$IB" convert "$TMP/junk.onnx" --math fp16 -o "$TMP/y.onnx"
expect_exit 2 "latency --math fp16 of junk" -- "$IB" latency "$TMP/junk.onnx" $Q --math fp16
[ ! -e "$TMP/y.onnx" ] && pass "nothing written on a refusal" || fail "a refused convert left a file"
expect_exit 2 "convert onto its input" -- "$IB" convert "$TMP/mlp16.onnx" --math fp16 -o "$TMP/mlp16.onnx"

# compare warns when the math differs.
expect_exit 0 "compare fp32 vs fp16" -- "$IB" compare "$TMP/default.json" "$TMP/tight.json"
expect_grep "different arithmetic \(--math\): fp32 \(runtime default\) \(A\) vs fp16 \(B\)" "$TMP/out" "compare warns about the math"
expect_exit 0 "compare fp32 vs a float16 model" -- "$IB" compare "$TMP/default.json" "$TMP/conv.json"
expect_grep "different arithmetic \(--math\): fp32 \(runtime default\) \(A\) vs fp16 \(the model's own\) \(B\)" "$TMP/out" "compare names a float16 model's math as its own"
expect_exit 0 "compare fp16 vs fp16" -- "$IB" compare "$TMP/tight.json" "$TMP/loose.json"
if grep -q "arithmetic" "$TMP/out"; then fail "no math warning for the same math"; else pass "no math warning for the same math"; fi

# pitfalls with --math: the TF32 row does not apply on the CPU.
expect_exit 0 "pitfalls --math fp16" -- "$IB" pitfalls zoo:mlp $Q --math fp16
expect_grep "^TF32 taken for fp32 +N/A: the CPU has no TF32" "$TMP/out" "pitfalls: the TF32 row is N/A on the CPU"
finish
