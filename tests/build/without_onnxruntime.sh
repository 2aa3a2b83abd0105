#!/usr/bin/env bash
# A build without the onnxruntime backend (issue 12: reading and comparing
# results needs no ONNX Runtime, at build or at run time): configures a
# second tree with IB_WITH_ONNXRUNTIME=OFF and no ORT_ROOT, builds the
# program alone (kept between runs, so that later runs are incremental),
# and checks what works without it and the one-line refusal of a model.
# The tree is also without the llama backend (IB_WITH_LLAMA=OFF): both
# optional runtimes' backends left out, and the refusal of a generative one.
# Usage: without_onnxruntime.sh SOURCE_DIR TREE CMAKE C_COMPILER CXX_COMPILER GEMM_PLUGIN
src=$1 tree=$2 cmake=$3 cc=$4 cxx=$5 gemm=$6
set -- "$tree/inferbench"
. "$src/tests/cli/lib.sh"

# No build type: no optimisation, the cheapest compile; no CUDA parts.
configure() {
  "$cmake" -S "$src" -B "$1" -DCMAKE_BUILD_TYPE= -DIB_WITH_CUDA=OFF -DCMAKE_C_COMPILER="$cc" \
    -DCMAKE_CXX_COMPILER="$cxx" -UORT_ROOT -DORT_ROOT= "${@:2}"
}

configure "$tree" -DIB_WITH_ONNXRUNTIME=OFF -DIB_WITH_LLAMA=OFF >"$TMP/configure" 2>&1
expect_grep "inferbench: onnxruntime backend OFF" "$TMP/configure" "configure says the backend is left out"
expect_grep "inferbench: llama backend OFF" "$TMP/configure" "configure says the llama backend is left out"
if ! "$cmake" --build "$tree" --target inferbench -j2 >"$TMP/build" 2>&1; then
  fail "the program builds without ONNX Runtime: $(grep -m3 -E 'error|Error' "$TMP/build")"
  finish
  exit 1
fi
pass "the program builds without ONNX Runtime"
# The compiler's dependency files list every header each object read.
deps=$(find "$tree/CMakeFiles" -name '*.o.d')
if [ -z "$deps" ]; then
  fail "no dependency files in $tree/CMakeFiles"
elif grep -l onnxruntime_c_api $deps >"$TMP/with_ort"; then
  fail "compiled with ONNX Runtime's headers: $(head -3 "$TMP/with_ort")"
else
  pass "no object read ONNX Runtime's headers"
fi
if grep -q OrtGetApiBase "$IB"; then fail "the program holds the onnxruntime backend"; else pass "no onnxruntime backend in the program"; fi
if [ -n "$deps" ] && grep -l 'llama\.h' $deps >"$TMP/with_llama"; then
  fail "compiled with llama.cpp's headers: $(head -3 "$TMP/with_llama")"
else
  pass "no object read llama.cpp's headers"
fi
if grep -q llama_model_load_from_file "$IB"; then fail "the program holds the llama backend"; else pass "no llama backend in the program"; fi
if configure "$TMP/llama-on" -DIB_WITH_ONNXRUNTIME=OFF -DIB_WITH_LLAMA=ON -DLLAMA_ROOT="$TMP/none" >"$TMP/lon.out" 2>&1; then
  fail "IB_WITH_LLAMA=ON without llama.cpp's headers configures"
else
  expect_grep "IB_WITH_LLAMA=ON but llama.cpp's headers were not found" "$TMP/lon.out" \
    "IB_WITH_LLAMA=ON without the headers: configure fails and says why"
fi

# Asked for explicitly and missing: configure fails with one clear message.
if configure "$TMP/on" -DIB_WITH_ONNXRUNTIME=ON >"$TMP/on.out" 2>&1; then
  fail "IB_WITH_ONNXRUNTIME=ON without ONNX Runtime configures"
else
  expect_grep "IB_WITH_ONNXRUNTIME=ON but ONNX Runtime's headers were not found" "$TMP/on.out" \
    "IB_WITH_ONNXRUNTIME=ON without ONNX Runtime: configure fails and says why"
fi

expect_exit 0 "backends" -- "$IB" backends
if grep -q '^onnxruntime ' "$TMP/out"; then fail "backends lists onnxruntime"; else pass "backends lists no onnxruntime"; fi
expect_grep "^fake " "$TMP/out" "backends lists the fake"
"$IB" info >"$TMP/info" 2>&1
expect_grep "^backends +spin, fake" "$TMP/info" "info lists the backends built in"
if grep -q onnxruntime "$TMP/info"; then fail "info names onnxruntime"; else pass "info names no onnxruntime"; fi

fast=(--backend fake --option us=1000 --runs 30 --warmup-ms 0)
expect_exit 0 "latency on the fake backend" -- "$IB" latency x "${fast[@]}" --json "$TMP/a.json"
expect_exit 0 "a slower one" -- "$IB" latency x --backend fake --option us=1500 --runs 30 --warmup-ms 0 \
  --json "$TMP/b.json"
expect_exit 0 "compare reads and compares them" -- "$IB" compare "$TMP/a.json" "$TMP/b.json"
expect_grep "^verdict: slower" "$TMP/out" "compare finds B slower"
expect_exit 0 "a plugin measures" -- "$IB" latency x --backend "plugin:$gemm" --option m=32 --option n=32 \
  --option k=32 --runs 20 --warmup-ms 0
expect_exit 0 "zoo list" -- "$IB" zoo list
expect_grep "^mlp " "$TMP/out" "zoo list names mlp"
expect_exit 0 "zoo export writes an ONNX file" -- "$IB" zoo export mlp -o "$TMP/mlp.onnx"
expect_exit 0 "convert rewrites it" -- "$IB" convert "$TMP/mlp.onnx" --math fp16 -o "$TMP/mlp16.onnx"

expect_exit 2 "a generative zoo model is refused" -- "$IB" zoo export llama-tiny -o "$TMP/tiny.gguf"
expect_grep "^inferbench: this inferbench was built without the llama backend: run scripts/setup.sh" "$TMP/err" \
  "the refusal says how to get the llama backend"
expect_exit 0 "zoo list still lists the generative models" -- "$IB" zoo list
expect_grep "^llama-tiny " "$TMP/out" "zoo list names llama-tiny"

refusal="^inferbench: this inferbench was built without the onnxruntime backend: rebuild it with"
expect_exit 2 "a zoo model is refused" -- "$IB" latency zoo:mlp --device cpu
expect_grep "$refusal" "$TMP/err" "the refusal says how to get the backend"
expect_exit 2 "an ONNX file is refused" -- "$IB" throughput "$TMP/mlp.onnx" --device cpu
expect_grep "$refusal" "$TMP/err" "the same refusal"
expect_exit 2 "--backend onnxruntime is refused" -- "$IB" pitfalls zoo:mlp --backend onnxruntime
expect_grep "$refusal" "$TMP/err" "the same refusal"
expect_exit 2 "best on the default backend is refused" -- "$IB" best zoo:mlp --device cpu
expect_grep "$refusal" "$TMP/err" "the same refusal, not a race of nothing"
finish
