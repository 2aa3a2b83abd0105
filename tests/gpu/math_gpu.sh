# --math on an NVIDIA GPU (docs/precision.md): EfficientNet-B0 at batch 1
# and 64 in fp32 (TF32 off), tf32, fp16 and bf16, each with its accuracy
# against strict fp32 where it is not fp32; the default stated as tf32 on a
# GPU that has it; a float16 model's math stated as its own; the pitfalls
# row "TF32 taken for fp32". Prints a table
# (the figures for docs/measurements.md) after the checks.
. "$(dirname "$0")/../cli/lib.sh"
. "$(dirname "$0")/require_device.sh"

M=zoo:efficientnet-b0
Q=(--device cuda --precision 1% --max-time-ms 10000 --quiet)
# ONNX Runtime 1.29's CUDA provider has no bfloat16 Conv (seen on the H200):
# --math bf16 on a convolution network is refused with the runtime's words,
# one line, exit 2, as a math mode the runtime cannot do must be.
for b in 1 64; do
  expect_exit 2 "latency --math bf16 batch $b: refused" -- "$IB" latency $M --batch $b --math bf16 "${Q[@]}" --json "$TMP/bf16-$b.json"
  expect_grep "^inferbench: --math bf16: the converted model does not run on the CUDA provider: .*bfloat16.*Conv" "$TMP/err" "bf16 batch $b: the runtime's reason"
  if [ ! -e "$TMP/bf16-$b.json" ]; then pass "bf16 batch $b: no file left"; else fail "bf16 batch $b: a file was left"; fi
  for m in fp32 tf32 fp16; do
    expect_exit 0 "latency --math $m batch $b" -- "$IB" latency $M --batch $b --math $m "${Q[@]}" --json "$TMP/$m-$b.json"
    json_check "$TMP/$m-$b.json" "d['workload']['math'] == '$m' and d['workload']['math_default'] is False" "$m batch $b: the math is recorded"
  done
  json_check "$TMP/fp32-$b.json" "d['accuracy'] is None" "fp32 batch $b: the reference has no accuracy check"
  for m in tf32 fp16; do
    json_check "$TMP/$m-$b.json" "(lambda o: o['compared'] and o['cosine'] > 0.99 and o['top1_agreement'] >= 0.9)(d['accuracy']['outputs'][0])" "$m batch $b: the accuracy columns, close to fp32"
  done
  json_check "$TMP/tf32-$b.json" "d['accuracy']['outputs'][0]['max_abs_error'] > 0" "tf32 batch $b: TF32 really differs from fp32 (TF32 was on)"
done
expect_exit 0 "latency, default math" -- "$IB" latency $M "${Q[@]}" --json "$TMP/default.json"
expect_grep "^runtime options: .*, math=tf32 \(runtime default\)$" "$TMP/out" "the default is stated: TF32 on"
json_check "$TMP/default.json" "d['workload']['math'] == 'tf32' and d['workload']['math_default'] is True and d['accuracy']['math'] == 'tf32'" "json: default tf32, with its accuracy"
expect_exit 0 "compare fp32 vs tf32" -- "$IB" compare "$TMP/fp32-1.json" "$TMP/tf32-1.json"
expect_grep "different arithmetic \(--math\): fp32 \(A\) vs tf32 \(B\)" "$TMP/out" "compare warns about the math"
# A model that is float16 itself runs in float16 on the GPU too, where TF32
# is on by default: its math is its own, with no fp32 of it to judge by.
expect_exit 0 "latency of a float16 model" -- "$IB" latency "$M?fp16" "${Q[@]}" --json "$TMP/own16.json"
json_check "$TMP/own16.json" "d['workload']['math'] == 'fp16' and d['workload']['math_of_model'] is True and d['accuracy'] is None" "a float16 model: math fp16, the model's own, no accuracy against itself"
expect_exit 2 "--math tf32 of a float16 model" -- "$IB" latency "$M?fp16" --math tf32 "${Q[@]}"
expect_grep "is fp16 itself" "$TMP/err" "a float16 model refuses tf32, rather than be misnamed"
expect_exit 0 "throughput --math fp16" -- "$IB" throughput $M --device cuda --math fp16 --batches 1,64,256 --quiet --json "$TMP/tp16.json"
json_check "$TMP/tp16.json" "d['accuracy']['math'] == 'fp16'" "throughput fp16 with accuracy"

expect_exit 0 "pitfalls" -- "$IB" pitfalls $M --device cuda --runs 100 --quiet --json "$TMP/pit.json"
expect_grep "^TF32 against strict fp32 \(each in a fresh session\): median .* with TF32, .* strict \(TF32 [+-][0-9.]+%\); outputs differ by up to" "$TMP/out" "pitfalls: the TF32 line"
json_check "$TMP/pit.json" "(lambda r: r['applies'] and r['stats']['n'] == 100 and r['tf32_off_median_ms'] > 0 and r['tf32_on_median_ms'] > 0 and r['tf32_max_abs_error'] > 0)([r for r in d['rows'] if r['kind'] == 'tf32'][0])" "json: the TF32 row measured, off and on, with the outputs' difference"
json_check "$TMP/pit.json" "d['workload']['math'] == 'tf32'" "pitfalls leaves the workload's math as it was"
# The reference runs in TF32 (the default here): the row is strict fp32, its
# bar (median) and label (error_pct) the same story against the correct
# median, and the reference's arithmetic said (issue 28, point 4).
expect_grep "^reference arithmetic \(the correct row's, every row's but the TF32 one\): TF32, the runtime's default" "$TMP/out" "pitfalls: the reference is said to be TF32"
expect_grep "^strict fp32 \(TF32 off\) +100 " "$TMP/out" "pitfalls: the row is strict fp32"
json_check "$TMP/pit.json" "d['reference_math'] == 'tf32' and d['reference_math_default'] is True" "json: the reference's arithmetic"
json_check "$TMP/pit.json" "(lambda c, r: r['math'] == 'fp32' and r['name'] == 'strict fp32 (TF32 off)' and r['stats']['p50'] == r['tf32_off_median_ms'] and abs(r['error_pct'] - (r['stats']['p50'] / c['stats']['p50'] - 1) * 100) < 1e-9)(d['rows'][0], [r for r in d['rows'] if r['kind'] == 'tf32'][0])" "json: the row's figure is strict fp32, its error against the correct median"
expect_exit 0 "pitfalls --math fp32" -- "$IB" pitfalls $M --device cuda --math fp32 --runs 100 --quiet --json "$TMP/pit32.json"
json_check "$TMP/pit32.json" "(lambda c, r: d['reference_math'] == 'fp32' and r['math'] == 'tf32' and r['name'] == 'TF32 taken for fp32' and r['stats']['p50'] == r['tf32_on_median_ms'] and abs(r['error_pct'] - (r['stats']['p50'] / c['stats']['p50'] - 1) * 100) < 1e-9)(d['rows'][0], [r for r in d['rows'] if r['kind'] == 'tf32'][0])" "json --math fp32: the row is TF32, against the strict correct median"

python3 - "$TMP" <<'PY'
import json, sys
print("\nEfficientNet-B0 on this GPU: median latency (ms) and accuracy against fp32 (TF32 off)")
print("%-6s %5s %10s %12s %12s %9s %6s %6s" % ("math", "batch", "median", "max abs err", "mean abs", "cosine", "top-1", "top-5"))
for b in (1, 64):
    for m in ("fp32", "tf32", "fp16"):
        d = json.load(open("%s/%s-%d.json" % (sys.argv[1], m, b)))
        a = d["accuracy"]["outputs"][0] if d["accuracy"] else None
        print("%-6s %5d %10.4f %12s %12s %9s %6s %6s" % (m, b, d["latency_ms"]["p50"],
              "%.3g" % a["max_abs_error"] if a else "-", "%.3g" % a["mean_abs_error"] if a else "-",
              "%.6f" % a["cosine"] if a else "-", "%.0f%%" % (100 * a["top1_agreement"]) if a else "-",
              "%.0f%%" % (100 * a["top5_agreement"]) if a else "-"))
PY
finish
