# Memory on the GPU: a batch whose inputs alone pass the device's free
# memory is refused before allocation (cudaMemGetInfo), a run whose
# intermediate tensors pass it (or --memory-cap-mb, the CUDA arena's cap)
# ends with one line and exit 1; a model that breaks at batch 2 stops the
# throughput search with the runtime's words. Models: make_bad_models.
. "$(dirname "$0")/../cli/lib.sh"
. "$(dirname "$0")/require_device.sh"

make_models
fast=(--device cuda --runs 5 --warmup-runs 1 --warmup-ms 0 --no-steady)

# 64 x 2e9 floats = 512 GB of input: more than any GPU's free memory.
expect_exit 1 "input larger than the device's free memory" -- \
  timeout 120 "$IB" latency "$M/widen.onnx" "${fast[@]}" --shape x:64x2000000000x1
expect_grep "^inferbench: model '.*widen.onnx' at batch 64 needs about [0-9]+ MB of device memory for its inputs and outputs alone, more than the [0-9.]+ MB free on the device" "$TMP/err" "needed and free named"

# 400 MB of input, 1.6 TB of intermediate: ORT's CUDA allocator fails.
expect_exit 1 "1.6 TB intermediate" -- \
  timeout 120 "$IB" latency "$M/widen.onnx" "${fast[@]}" --shape x:1x100000000x1
expect_grep "^inferbench: .*(memory|alloc)" "$TMP/err" "out of memory, one line"

# 16 GB of intermediate under a 1024 MB arena cap.
expect_exit 1 "16 GB intermediate, --memory-cap-mb 1024" -- \
  timeout 120 "$IB" latency "$M/widen.onnx" "${fast[@]}" --shape x:1x1000000x1 --memory-cap-mb 1024
expect_grep "^inferbench: .*(memory|alloc)" "$TMP/err" "arena cap: out of memory, one line"

expect_exit 0 "16 MB intermediate runs" -- \
  timeout 120 "$IB" latency "$M/widen.onnx" "${fast[@]}" --shape x:1x1000x1

expect_exit 1 "throughput: shape error at batch 2" -- \
  timeout 120 "$IB" throughput "$M/state.onnx" "${fast[@]}" --shape s:1x3x8
expect_grep "^inferbench: model '.*state.onnx' failed to run at batch 2" "$TMP/err" "the runtime's words"
if grep -q "largest batch that fits" "$TMP/out"; then fail "no 'largest batch that fits' after a shape error"; else pass "no 'largest batch that fits' after a shape error"; fi

finish
