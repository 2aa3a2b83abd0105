# The aoti backend against the stand-ins of tests/aoti (a "libtorch.so"
# exporting the C shim, model libraries with known behaviour): a bare model
# library and .pt2 packages packed here (stored entries, as PyTorch writes
# them), the fixed delay measured, every tensor handle released, a scripted
# failure keeping what was measured, and each bad input refused in one line
# with nothing left unpacked.
. "$(dirname "$0")/lib.sh"
aoti=${IB_AOTI_DIR:?the stand-ins (tests/CMakeLists.txt sets it)}
torch="--option libtorch=$aoti/torch"
fast="--device cpu --warmup-runs 3 --warmup-ms 0 --warmup-max-ms 300"
unpack="$TMP/unpack"
mkdir -p "$unpack" "$TMP/bare"
cp "$aoti/model_cpu.so" "$TMP/bare/" && : >"$TMP/bare/weights.bin"

# pack OUT.pt2 METHOD (stored|deflated) MODEL:FILE...: a zip archive with
# each FILE as archive/data/aotinductor/MODEL/<its name>.
pack() {
  python3 - "$@" <<'PY'
import os, sys, zipfile
out, method, entries = sys.argv[1], sys.argv[2], sys.argv[3:]
mode = zipfile.ZIP_STORED if method == "stored" else zipfile.ZIP_DEFLATED
with zipfile.ZipFile(out, "w", mode) as z:
    z.writestr("archive/version", "1\n")
    for e in entries:
        model, path = e.split(":", 1)
        z.write(path, f"archive/data/aotinductor/{model}/{os.path.basename(path)}")
PY
}
pack "$TMP/m.pt2" stored "model:$aoti/model_cpu.so" "model:$TMP/bare/weights.bin"

# shellcheck disable=SC2086 # option lists are words
expect_exit 0 "a bare model library, 300 us a run" -- \
  env STANDIN_DELAY_US=300 "$IB" latency "$TMP/bare/model_cpu.so" --backend aoti $torch --option shape=1x3x8x8 $fast \
  --runs 40 --json "$TMP/bare.json"
expect_grep "^inferbench latency: .*model_cpu.so, batch 1, AOTInductor" "$TMP/out" "text: what was measured"
json_check "$TMP/bare.json" "d['latency_ms']['n'] == 40 and d['latency_ms']['min'] >= 0.3 and d['timing'] == 'host-clock'" "json: 40 runs, none under the 300 us delay"
json_check "$TMP/bare.json" "d['workload']['inputs'][0]['shape'] == [1, 3, 8, 8] and d['workload']['inputs'][0]['type'] == 'float32'" "json: the input as given"
if grep -q "leaked" "$TMP/err"; then fail "tensor handles leaked: $(cat "$TMP/err")"; else pass "every tensor handle released"; fi

# Half inputs: measured to the end, no math stated and no fp32 reference
# asked for (on the H200 the latency command refused every fp16 package:
# "accuracy: this workload's outputs cannot be read", exit 2).
# shellcheck disable=SC2086
expect_exit 0 "float16 inputs" -- \
  env STANDIN_HALF=1 "$IB" latency "$TMP/bare/model_cpu.so" --backend aoti $torch --option shape=1x3x8x8 --option dtype=float16 $fast \
  --runs 10 --json "$TMP/half.json"
json_check "$TMP/half.json" "d['workload']['inputs'][0]['type'] == 'float16' and d['workload']['math'] == '' and d['accuracy'] is None and d['workload']['backend_options'] == {'dtype': 'float16', 'channels_last': 'no', 'dynamic_batch': 'no', 'cuda_graph': 'no'}" "json: half inputs, the dtype kept, no math claimed, no accuracy"

# cuda_graph=no is the plain run, recorded as a setting (compare names it
# when another result replayed a graph); yes has no CPU graph to replay.
# shellcheck disable=SC2086
expect_exit 0 "cuda_graph=no on the CPU" -- \
  "$IB" latency "$TMP/bare/model_cpu.so" --backend aoti $torch --option shape=1x3x8x8 --option cuda_graph=no $fast \
  --runs 10 --json "$TMP/nograph.json"
json_check "$TMP/nograph.json" "d['workload']['backend_options']['cuda_graph'] == 'no' and d['latency_ms']['n'] == 10" "json: cuda_graph no recorded"
python3 -c "import json, sys; d = json.load(open(sys.argv[1])); d['workload']['backend_options']['cuda_graph'] = 'yes'; json.dump(d, open(sys.argv[2], 'w'))" \
  "$TMP/nograph.json" "$TMP/graph.json" # what a GPU's cuda_graph=yes result records
expect_exit 0 "compare a plain result with a replayed one" -- "$IB" compare "$TMP/nograph.json" "$TMP/graph.json"
expect_grep "^warning: different backend option cuda_graph: no \(A\) vs yes \(B\)" "$TMP/out" "compare names the cuda_graph setting"

# shellcheck disable=SC2086
expect_exit 0 "a .pt2 package, unpacked and removed again" -- \
  "$IB" latency "$TMP/m.pt2" --backend aoti $torch --option shape=1x3x8x8 --option extract_dir="$unpack" $fast \
  --runs 20 --json "$TMP/pt2.json"
json_check "$TMP/pt2.json" "d['latency_ms']['n'] == 20 and d['workload']['model'].endswith('m.pt2')" "json: measured from the package"
[ -z "$(ls -A "$unpack")" ] && pass "nothing left unpacked" || fail "left unpacked: $(ls -A "$unpack")"

# Files in subfolders are unpacked too (PyTorch's loader takes them); a
# name that would leave the folder is not.
python3 - "$TMP/nested.pt2" "$aoti/model_cpu.so" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w") as z:
    z.write(sys.argv[2], "archive/data/aotinductor/model/model_cpu.so")
    z.writestr("archive/data/aotinductor/model/kernels/a/k.cubin", "cubin")
    z.writestr("archive/data/aotinductor/model/weights.bin", "")
    z.writestr("archive/data/aotinductor/model/../../evil", "out")
    # As many kernels as EfficientNet-B0's package holds (65) and more: a
    # list capped at 64 refused that package on the H200.
    for i in range(100):
        z.writestr(f"archive/data/aotinductor/model/k{i:03}.cubin", "cubin")
PY
# shellcheck disable=SC2086
expect_exit 0 "a package with subfolders and 101 kernels" -- \
  "$IB" latency "$TMP/nested.pt2" --backend aoti $torch --option shape=1x3x8x8 --option extract_dir="$unpack" $fast --runs 5
[ -z "$(ls -A "$unpack")" ] && [ ! -e "$TMP/evil" ] && pass "subfolders removed, nothing written outside" || fail "left: $(ls -AR "$unpack")"

# shellcheck disable=SC2086
expect_exit 0 "throughput over a dynamic batch" -- \
  "$IB" throughput "$TMP/m.pt2" --backend aoti $torch --option shape=1x3x8x8 --option dynamic_batch=yes \
  --option extract_dir="$unpack" $fast --batches 1,4 --runs 10 --json "$TMP/t.json"
json_check "$TMP/t.json" "[p['batch'] for p in d['curve']] == [1, 4] and all(p['status'] == 'ok' for p in d['curve'])" "json: batches 1 and 4 measured"
# shellcheck disable=SC2086
expect_exit 0 "pitfalls: zero-filled inputs refilled" -- \
  "$IB" pitfalls "$TMP/bare/model_cpu.so" --backend aoti $torch --option shape=1x3x8x8 $fast --runs 10 --json "$TMP/p.json"
json_check "$TMP/p.json" "d['rows'][5]['kind'] == 'zero_input' and d['rows'][5]['status'] == 'ok'" "json: the zero-input row ran"

# A run that fails after 10 timed runs (cold 1 + warm-up 3 + 10): partial.
# shellcheck disable=SC2086
expect_exit 1 "a scripted failure in the timed runs" -- \
  env STANDIN_FAIL_AT_RUN=14 "$IB" latency "$TMP/bare/model_cpu.so" --backend aoti $torch --option shape=1x3x8x8 \
  $fast --no-steady --runs 40 --json "$TMP/fail.json"
expect_grep "^inferbench: aoti: AOTInductorModelContainerRun failed at batch 1$" "$TMP/err" "names the failing call"
json_check "$TMP/fail.json" "d['partial'] and d['latency_ms']['n'] == 10" "json: the 10 runs before it, marked partial"
# shellcheck disable=SC2086
# A failure at the first run of all is taken for inputs the model was not
# compiled for (the interface cannot tell their dtype or layout): bad input.
expect_exit 2 "a failure at the cold run" -- \
  env STANDIN_FAIL_AT_RUN=0 "$IB" latency "$TMP/bare/model_cpu.so" --backend aoti $torch --option shape=1x3x8x8 $fast \
  --json "$TMP/cold.json"
expect_grep "refused the first run \(batch 1\)" "$TMP/err" "the cold run's failure names the inputs' form"
[ ! -e "$TMP/cold.json" ] && pass "no result written" || fail "a result written for no run"

# Bad inputs: one line each, exit 2 (1 for a model that will not load is
# still bad input: the model file), nothing left unpacked.
refused() { # WHAT PATTERN -- COMMAND...
  local what=$1 pattern=$2
  shift 3
  expect_exit 2 "$what" -- "$@" && expect_grep "$pattern" "$TMP/err" "$what: says why"
}
: >"$TMP/empty.pt2"
echo "not a package" >"$TMP/text.pt2"
pack "$TMP/deflated.pt2" deflated "model:$aoti/model_cpu.so"
pack "$TMP/two.pt2" stored "a:$aoti/model_cpu.so" "b:$aoti/model_cpu.so"
pack "$TMP/noso.pt2" stored "model:$TMP/bare/weights.bin"
python3 -c "import zipfile; zipfile.ZipFile('$TMP/nomodel.pt2', 'w').writestr('x/y', 'z')"
head -c $(($(wc -c <"$TMP/m.pt2") / 2)) "$TMP/m.pt2" >"$TMP/cut.pt2" # half: whatever the build type
python3 -c "d = open('$TMP/m.pt2', 'rb').read(); open('$TMP/cut_end.pt2', 'wb').write(d[:len(d) // 2] + d[-200:])"
shape="--option shape=1x3x8x8"
# shellcheck disable=SC2086
{
  refused "no model argument" "aoti: give the model" -- "$IB" latency --backend aoti $torch $shape $fast
  refused "a missing file" "aoti: '.*nothing.pt2': No such file" -- "$IB" latency "$TMP/nothing.pt2" --backend aoti $torch $shape $fast
  refused "an empty file" "not a .pt2 package \(no zip directory\) nor a shared library" -- "$IB" latency "$TMP/empty.pt2" --backend aoti $torch $shape $fast
  refused "a text file" "not a .pt2 package" -- "$IB" latency "$TMP/text.pt2" --backend aoti $torch $shape $fast
  refused "a compressed package" "entry 'model_cpu.so' is compressed \(zip method 8\)" -- "$IB" latency "$TMP/deflated.pt2" --backend aoti $torch $shape --option extract_dir="$unpack" $fast
  refused "two models" "holds models 'a', 'b': choose one with --option model=NAME" -- "$IB" latency "$TMP/two.pt2" --backend aoti $torch $shape $fast
  refused "a model not in the package" "has no model 'c' \(it has 'a', 'b'\)" -- "$IB" latency "$TMP/two.pt2" --backend aoti $torch $shape --option model=c $fast
  refused "a model folder without a library" "has no shared library" -- "$IB" latency "$TMP/noso.pt2" --backend aoti $torch $shape --option extract_dir="$unpack" $fast
  refused "a zip without a model" "a zip archive without an AOTInductor model" -- "$IB" latency "$TMP/nomodel.pt2" --backend aoti $torch $shape $fast
  refused "a truncated package" "truncated .pt2 package|not a .pt2 package" -- "$IB" latency "$TMP/cut.pt2" --backend aoti $torch $shape $fast
  refused "a package cut in the middle" "truncated .pt2 package|broken zip|does not fit the file" -- "$IB" latency "$TMP/cut_end.pt2" --backend aoti $torch $shape --option extract_dir="$unpack" $fast
  refused "libtorch not found" "aoti: libtorch not found \(libtorch.so: cannot open shared object file" -- "$IB" latency "$TMP/bare/model_cpu.so" --backend aoti $shape $fast
  refused "a libtorch folder without libtorch" "option libtorch=.*: no libtorch.so there" -- "$IB" latency "$TMP/bare/model_cpu.so" --backend aoti --option libtorch="$TMP" $shape $fast
  refused "compiled by another PyTorch" "needs aoti_torch_from_a_newer_pytorch, which the libtorch loaded lacks" -- "$IB" latency "$aoti/model_newer.so" --backend aoti $torch $shape $fast
  refused "compiled for another device" "the model refused device 'cpu'.*compiled for another device" -- "$IB" latency "$aoti/model_cuda.so" --backend aoti $torch $shape $fast
  refused "weights missing" "compiled for another device, or its weights are missing" -- "$IB" latency "$aoti/model_cpu.so" --backend aoti $torch $shape $fast
  refused "not a model library" "is not an AOTInductor model library: no AOTInductorModelContainerCreateWithDevice" -- "$IB" latency "$aoti/torch/libtorch.so" --backend aoti $torch $shape $fast
  refused "no shape" "give each input's shape" -- "$IB" latency "$TMP/bare/model_cpu.so" --backend aoti $torch $fast
  refused "a bad shape" "option shape=1xx3: expected positive dimensions" -- "$IB" latency "$TMP/bare/model_cpu.so" --backend aoti $torch --option shape=1xx3 $fast
  refused "shapes for another number of inputs" "the model has 1 inputs, 2 shapes given" -- "$IB" latency "$TMP/bare/model_cpu.so" --backend aoti $torch $shape $shape $fast
  refused "inputs of another dtype than the model's" "refused the first run \(batch 1\): inputs of another shape, dtype or layout" -- env STANDIN_HALF=1 "$IB" latency "$TMP/bare/model_cpu.so" --backend aoti $torch $shape $fast
  refused "a bad dtype" "dtype=int8: expected float32, float16 or bfloat16" -- "$IB" latency "$TMP/bare/model_cpu.so" --backend aoti $torch $shape --option dtype=int8 $fast
  refused "an unknown option" "aoti: unknown option 'tile'" -- "$IB" latency "$TMP/bare/model_cpu.so" --backend aoti $torch $shape --option tile=1 $fast
  refused "a batch on fixed shapes" "batch 8, but the shapes give 1" -- "$IB" latency "$TMP/bare/model_cpu.so" --backend aoti $torch $shape --batch 8 $fast
  refused "cuda_graph=yes on the CPU" "^inferbench: aoti: --option cuda_graph=yes needs a CUDA device: a CUDA graph replays GPU work, and this model would run on the CPU \(--device cpu\)$" -- "$IB" latency "$TMP/m.pt2" --backend aoti $torch $shape --option cuda_graph=yes --option extract_dir="$unpack" $fast
  refused "cuda_graph=maybe" "option cuda_graph=maybe: expected yes or no" -- "$IB" latency "$TMP/bare/model_cpu.so" --backend aoti $torch $shape --option cuda_graph=maybe $fast
  refused "channels_last on a 2-D input" "channels_last needs 4-D inputs" -- "$IB" latency "$TMP/bare/model_cpu.so" --backend aoti $torch --option shape=4x5 --option channels_last=yes $fast
}
[ -z "$(ls -A "$unpack")" ] && pass "nothing left unpacked by the refused packages" || fail "left unpacked: $(ls -A "$unpack")"
finish
