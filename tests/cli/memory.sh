# The CPU memory bound: a model whose intermediate tensor is far larger
# than its input ends with one line naming the memory it needs and the
# limit, exit 1, within seconds, never killed; in the ASan build too (the
# bound is ONNX Runtime's arena's max_mem, which refuses before allocating).
# Models: make_bad_models ("widen": x[batch,n,1] MatMul W[1,4096]).
. "$(dirname "$0")/lib.sh"

make_models
fast=(--device cpu --runs 5 --warmup-runs 1 --warmup-ms 0 --no-steady)

# 100000 x 4096 floats = 1563 MB of intermediate for a 400 KB input: without
# the bound this runs (exit 0), with it each command stops at the first run.
for cmd in latency pitfalls throughput; do
  expect_exit 1 "$cmd: 1.6 GB intermediate, --memory-cap-mb 64" -- \
    timeout 60 "$IB" $cmd "$M/widen.onnx" "${fast[@]}" --shape x:1x100000x1 --memory-cap-mb 64
  expect_grep "^inferbench: .*model '.*widen.onnx' at batch 1 needs about 1563 MB of host memory, more than the limit of 64.0 MB \(--memory-cap-mb sets it\)" "$TMP/err" "$cmd: needed and limit named"
done

# The default limit (half of MemAvailable) without --memory-cap-mb: 312 GB
# of intermediate is refused by the arena, not allocated.
expect_exit 1 "latency: 312 GB intermediate, default limit" -- \
  timeout 60 "$IB" latency "$M/widen.onnx" "${fast[@]}" --shape x:1x20000000x1
expect_grep "^inferbench: model '.*widen.onnx' at batch 1 needs about 312500 MB of host memory, more than the limit of [0-9.]+ MB" "$TMP/err" "default limit: needed and limit named"

# Within the limit the same model runs.
expect_exit 0 "latency: 16 MB intermediate, --memory-cap-mb 64" -- \
  timeout 60 "$IB" latency "$M/widen.onnx" "${fast[@]}" --shape x:1x1000x1 --memory-cap-mb 64

# An input larger than the limit is refused before it is allocated.
expect_exit 1 "latency: 400 MB input, --memory-cap-mb 64" -- \
  timeout 60 "$IB" latency "$M/widen.onnx" "${fast[@]}" --shape x:1x100000000x1 --memory-cap-mb 64
expect_grep "needs about [0-9]+ MB of host memory for its inputs and outputs alone, more than the limit of 64.0 MB" "$TMP/err" "input over the limit: named"

finish
