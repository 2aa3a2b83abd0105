#!/usr/bin/env bash
# The llama backend on the GPU (docs/backend-llama.md): zoo:llama-3.2-1b
# (float16, 1.50 B parameters) with every layer offloaded, a 512-token
# prompt and 128 tokens decoded after it, through the backend's ops and
# through a bare loop of llama_decode + llama_synchronize on the same model
# (tests/gpu/llama_gpu_check.c), alternated in 5 rounds: the figures are
# printed, not checked (the lead reads them; docs/measurements.md). What is
# checked: the model is on the GPU, all its layers offloaded, both loops ran.
#
# The library: IB_LLAMA_LIBRARY (on the H200: /tmp/llama, the sm_90 build
# of ../shared/llama-sm90), else the release set-up installed. The 3 GB
# model file is written once into INFERBENCH_ZOO_CACHE (default
# /tmp/inferbench-zoo, kept between runs). IB_LLAMA_GPU_Q4=1 measures
# zoo:llama-3.2-1b?q4_k_m too (quantized there first). Where llama-bench
# is beside the library, it runs on the same file for comparison
# (-p 512 -n 128 -ngl 99 -r 5).
. "$(dirname "$0")/../cli/lib.sh"
. "$(dirname "$0")/require_device.sh"
check=${IB_LLAMA_GPU_CHECK:-$(dirname "$IB")/tests/llama_gpu_check}
[ -x "$check" ] || { echo "no llama_gpu_check (a build without the llama backend): skipped"; exit 77; }
lib=${IB_LLAMA_LIBRARY:-}
cache=${INFERBENCH_ZOO_CACHE:-/tmp/inferbench-zoo}
mkdir -p "$cache"

models=("zoo:llama-3.2-1b")
[ "${IB_LLAMA_GPU_Q4:-0}" = 1 ] && models+=("zoo:llama-3.2-1b?q4_k_m")
for model in "${models[@]}"; do
  "$check" "$model" "$lib" "$cache" 512 128 5 >"$TMP/check.out" 2>"$TMP/check.err"
  rc=$?
  cat "$TMP/check.out" "$TMP/check.err"
  if [ $rc = 77 ]; then echo "the model did not land on a GPU: skipped"; exit 77; fi
  if [ $rc != 0 ]; then fail "$model: llama_gpu_check exit $rc"; continue; fi
  pass "$model: both loops ran"
  layers=$(sed -n 's/.*CUDA, \([0-9]*\) layers offloaded of \([0-9]*\).*/\1 \2/p' "$TMP/check.out")
  read -r on of <<<"$layers"
  if [ -n "$on" ] && [ "$on" -ge "$of" ]; then pass "$model: $on layers offloaded (of $of and the output)";
  else fail "$model: layers offloaded: '$layers'"; fi
  expect_grep '^backend - bare, step median' "$TMP/check.out" "$model: the backend's cost per step printed"
done

bench=${lib:+$lib/llama-bench}
if [ -n "$bench" ] && [ -x "$bench" ]; then
  for f in "$cache"/llama-3.2-1b-f16-*.gguf "$cache"/llama-3.2-1b-q4_k_m-*.gguf; do
    [ -f "$f" ] || continue
    echo "llama-bench on $f:"
    "$bench" -m "$f" -p 512 -n 128 -ngl 99 -r 5 || fail "llama-bench on $f"
  done
fi
finish
