# Shapes: --shape sets the batch when --batch is not given, an input with no
# shape needs --shape (which gives it its rank), an unnamed dimension of a
# second input is named in the error, a fixed batch refuses another --batch,
# and the throughput search reports a model that breaks at batch 2 as an
# error, not as "largest batch that fits: 1". Models: make_bad_models.
. "$(dirname "$0")/lib.sh"

make_models
fast=(--device cpu --runs 5 --warmup-runs 1 --warmup-ms 0 --no-steady)

# --- the batch from --shape -------------------------------------------------
expect_exit 0 "--shape x:2x16 alone sets the batch" -- \
  "$IB" latency "$M/valid_matmul.onnx" "${fast[@]}" --shape x:2x16 --json "$TMP/b2.json"
expect_grep "^inferbench latency: .*valid_matmul.onnx, batch 2," "$TMP/out" "report header: batch 2"
json_check "$TMP/b2.json" "d['batch'] == 2 and d['workload']['inputs'][0]['shape'] == [2, 16]" "json: batch 2, x bound [2,16]"
expect_exit 0 "--shape x:2x16 with --batch 2" -- \
  "$IB" latency "$M/valid_matmul.onnx" "${fast[@]}" --shape x:2x16 --batch 2
expect_exit 2 "--shape x:2x16 with --batch 3" -- \
  "$IB" latency "$M/valid_matmul.onnx" "${fast[@]}" --shape x:2x16 --batch 3
expect_grep "^inferbench: --shape gives input 'x' batch dimension 'batch' the value 2, but --batch is 3" "$TMP/err" "says which disagree"
expect_exit 2 "two --shape batches that disagree" -- \
  "$IB" latency "$M/valid_ids.onnx" "${fast[@]}" --shape ids:2x5 --shape mask:3x5
expect_grep "^inferbench: --shape gives input 'mask' batch dimension 'batch' the value 3, but input 'ids' the value 2" "$TMP/err" "names both inputs"

# --- an input with no shape -------------------------------------------------
expect_exit 2 "unranked input without --shape" -- "$IB" latency "$M/unranked.onnx" "${fast[@]}"
expect_grep "^inferbench: input 'x' \(float32\) declares no shape, not even a rank: give it one with --shape x:" "$TMP/err" "names the input"
expect_exit 0 "unranked input with --shape x:4x4" -- \
  "$IB" latency "$M/unranked.onnx" "${fast[@]}" --shape x:4x4 --json "$TMP/u.json"
json_check "$TMP/u.json" "d['workload']['inputs'][0]['shape'] == [4, 4]" "json: x bound [4,4]"

# --- an unnamed dimension in the second input --------------------------------
expect_exit 2 "unnamed dimension of the second input" -- "$IB" latency "$M/state.onnx" "${fast[@]}"
expect_grep "^inferbench: input 's' \(float32\[1,\?,8\]\) has dimension 2 with neither a value nor a name: set it with --shape s:1xNx8" "$TMP/err" "names the input and the dimension"

# --- a fixed batch ------------------------------------------------------------
expect_exit 2 "--batch 4 on a fixed batch of 1" -- "$IB" latency "$M/valid_fixed1.onnx" "${fast[@]}" --batch 4
expect_grep "^inferbench: model '.*valid_fixed1.onnx' has a fixed batch of 1 .*--batch 4 cannot apply" "$TMP/err" "names the fixed batch"
expect_exit 0 "--batch 1 on a fixed batch of 1" -- "$IB" latency "$M/valid_fixed1.onnx" "${fast[@]}" --batch 1
expect_exit 0 "throughput on a fixed batch" -- \
  "$IB" throughput "$M/valid_fixed1.onnx" "${fast[@]}" --json "$TMP/f.json"
expect_grep "^fixed-batch model: measured at its batch 1 only" "$TMP/out" "throughput says it measures the one batch"
json_check "$TMP/f.json" "[p['batch'] for p in d['curve']] == [1] and not d['search']['searched']" "json: one point, no search"
expect_exit 2 "throughput --batches 4 on a fixed batch" -- \
  "$IB" throughput "$M/valid_fixed1.onnx" "${fast[@]}" --batches 1,4
expect_grep "fixed batch of 1.*batch 4 cannot be measured" "$TMP/err" "refuses the other batch"

# --- a model that breaks at batch 2 is an error in the search ----------------
expect_exit 1 "throughput: shape error at batch 2" -- \
  "$IB" throughput "$M/state.onnx" "${fast[@]}" --shape s:1x3x8 --json "$TMP/state.json"
expect_grep "^batch search stopped after 1 probes \(.*\); largest batch that fit so far: 1$" "$TMP/out" "the search is said to have stopped"
json_check "$TMP/state.json" "d['partial'] and d['search']['stopped'] and d['search']['largest_fitting'] == 1 and [p['batch'] for p in d['curve']] == [1] and d['curve'][0]['status'] == 'ok'" "json: the search stopped, batch 1 (timed when its probe fit) kept"
expect_grep "^inferbench: model '.*state.onnx' failed to run at batch 2: .*broadcast" "$TMP/err" "the runtime's words"
if grep -q "largest batch that fits" "$TMP/out"; then
  fail "no 'largest batch that fits' after a shape error: $(cat "$TMP/out")"
else
  pass "no 'largest batch that fits' after a shape error"
fi

finish
