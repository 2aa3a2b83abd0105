# Broken model files: each is refused with one line on stderr starting
# "inferbench:" and the documented exit code, never a crash (exit >= 128)
# or a hang (timeout 60 gives 124). The files come from
# tests/fuzz/make_bad_models.c; docs/reliability.md lists the outcomes.
. "$(dirname "$0")/lib.sh"

make_models

# A model declaring a petabyte input is refused on memory before anything
# is allocated. Should an allocation that large be attempted all the same,
# the real allocator says no (NULL), a path the program handles; the
# AddressSanitizer allocator would abort on a size above its maximum
# instead, unless told to return NULL like the real one.
export ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}allocator_may_return_null=1"

run_opts=(--device cpu --runs 3 --warmup-runs 1 --warmup-ms 0 --no-steady)

# refused CODE CASE PATTERN [COMMAND]: the model is refused with CODE and a
# one-line message "inferbench: ..." matching PATTERN.
refused() {
  local code=$1 name=$2 pattern=$3 cmd=${4:-latency}
  expect_exit "$code" "$cmd $name.onnx: exit $code" -- \
    timeout 60 "$IB" "$cmd" "$M/$name.onnx" "${run_opts[@]}" || return
  expect_grep "^inferbench: .*($pattern)" "$TMP/err" "$cmd $name.onnx: says why"
}

# Not ONNX at all, or not whole.
refused 2 empty "is empty"
refused 2 text "cannot load model"
refused 2 garbage "cannot load model"
refused 2 wrong_magic "cannot load model"
refused 2 truncated "cannot load model"
refused 2 huge_length "cannot load model"
refused 2 no_graph "cannot load model"
# Parses, but is no valid graph.
refused 2 cyclic "acyclic|cycle"
refused 2 unknown_op "FrobnicateXYZ"
refused 2 missing_input "ghost"
refused 2 duplicate_output "[Dd]uplicate"
refused 2 future_opset "opset|9999"
refused 2 no_inputs "cannot load model"
refused 2 huge_initializer "cannot load model"
# Valid, but not measurable as it is.
refused 2 strings "element type string"
refused 2 unset_dim "--shape x:"
refused 2 high_rank "rank 9"
refused 2 negative_dim "neither a value nor a name"
# Its fixed inputs cannot be allocated: the allocation fails at run time
# (exit 1, the run failed), before anything is timed.
refused 1 huge_input "cannot allocate|memory"

# The other commands that open models go through the same checks.
for cmd in throughput pitfalls; do
  refused 2 truncated "cannot load model" "$cmd"
  refused 2 cyclic "acyclic|cycle" "$cmd"
  refused 2 strings "element type string" "$cmd"
  refused 2 unset_dim "--shape x:" "$cmd"
done

# Paths that are no model file.
expect_exit 2 "a missing file" -- timeout 60 "$IB" latency "$TMP/nowhere.onnx" "${run_opts[@]}" &&
  expect_grep "^inferbench: .*No such file" "$TMP/err" "a missing file: says so"
expect_exit 2 "a folder as model" -- timeout 60 "$IB" latency "$M" "${run_opts[@]}" &&
  expect_grep "^inferbench: .*[Dd]irectory" "$TMP/err" "a folder as model: says so"
expect_exit 2 "an unknown zoo model" -- timeout 60 "$IB" latency zoo:no-such-net "${run_opts[@]}"

# Within limits that are unusual, not wrong: measured.
expect_exit 0 "17 inputs (more than the report's table of 16)" -- \
  timeout 60 "$IB" latency "$M/many_inputs.onnx" "${run_opts[@]}"
expect_exit 0 "an input name of 300 characters" -- \
  timeout 60 "$IB" latency "$M/long_name.onnx" "${run_opts[@]}"

# The generator's valid models run, so the refusals above are about what
# is broken in each file, not about the files' common parts.
expect_exit 0 "valid: matmul" -- timeout 60 "$IB" latency "$M/valid_matmul.onnx" "${run_opts[@]}"
expect_exit 0 "valid: fixed batch" -- timeout 60 "$IB" latency "$M/valid_fixed.onnx" "${run_opts[@]}"
expect_exit 0 "valid: float16" -- timeout 60 "$IB" latency "$M/valid_half.onnx" "${run_opts[@]}"
expect_exit 0 "valid: int64 with --shape" -- timeout 60 "$IB" latency "$M/valid_ids.onnx" \
  --shape ids:1x8 --shape mask:1x8 "${run_opts[@]}"
expect_exit 0 "unset_dim with --shape" -- timeout 60 "$IB" latency "$M/unset_dim.onnx" \
  --shape x:1x4x16 "${run_opts[@]}"
finish
