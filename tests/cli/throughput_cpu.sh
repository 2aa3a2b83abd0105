# inferbench throughput end to end on the CPU execution provider, with the
# zoo's small MLP: the search, the curve, the JSON, the answers and the exit
# codes of bad input and of an unmet budget.
. "$(dirname "$0")/lib.sh"

fast="--device cpu --warmup-runs 2 --warmup-ms 0 --warmup-max-ms 1000"

expect_exit 0 "throughput zoo:mlp up to 64, json" -- \
  "$IB" throughput zoo:mlp --device cpu --max-batch 64 --runs 20 --json "$TMP/t.json"
# A CPU's curve may truly fall past an early peak (two batches clearly below
# it end the growth: docs/throughput.md 2b), which a loaded machine makes
# likelier: the checks below hold for either ending, each exactly.
past_peak=$(python3 -c "import json,sys; print(int(json.load(open(sys.argv[1]))['search']['stop'] == 'past the peak'))" "$TMP/t.json")
grown="[1, 2, 4, 8, 16, 32, 64][:len(d['curve'])]"
if [ "$past_peak" = 1 ]; then
  expect_grep "stopped past the peak" "$TMP/out" "text: the growth ended past the peak, said"
  json_check "$TMP/t.json" "len(d['curve']) >= 3 and d['peak']['batch'] <= d['curve'][-3]['batch']" "json: the peak two batches or more before the end"
else
  expect_grep "limited by --max-batch" "$TMP/out" "text: the search was bounded by --max-batch"
  json_check "$TMP/t.json" "d['search']['largest_fitting'] == 64 and d['search']['limited_by_max_batch'] and len(d['search']['probes']) == 7 and d['search']['stop'] == 'done'" "json: search reached 64 in 7 probes"
fi
expect_grep "^peak: [0-9]+ inputs/s at batch [0-9]+" "$TMP/out" "text: the peak"
expect_grep "^knee: batch [0-9]+" "$TMP/out" "text: the knee"
json_check "$TMP/t.json" "d['schema'] == 'inferbench.throughput/2' and d['partial'] is False" "json: schema, complete"
json_check "$TMP/t.json" "[p['batch'] for p in d['curve']] == $grown" "json: curve at 1, 2, 4, ... as grown"
json_check "$TMP/t.json" "all(p['status'] == 'ok' and p['items_per_s'] > 0 and p['items_per_s_sync'] > 0 and p['latency_ms']['n'] == 20 for p in d['curve'])" "json: every point measured, 20 runs"
json_check "$TMP/t.json" "d['peak']['batch'] in [p['batch'] for p in d['curve']] and d['peak']['items_per_s'] == max(p['items_per_s'] for p in d['curve'])" "json: the peak is the curve's maximum"
json_check "$TMP/t.json" "d['knee']['batch'] <= d['peak']['batch'] and d['budget'] is None" "json: knee, no budget"
json_check "$TMP/t.json" "d['config']['max_time_ms'] == 300000 and d['search']['stop'] != 'time bound' and (d['search']['stop'] == 'past the peak' or d['search']['stop_next_batch'] is None)" "json: the default time bound, not reached"

# The time bound (--max-time-ms), on the fake's virtual clock: batch 16
# would end past 2 s, so the search stops at 8, says so, and the partial
# result exits 0 as the other time bounds' (docs/cli.md).
expect_exit 0 "the time bound cuts the search: exit 0" -- "$IB" throughput --backend fake --option us=100 \
  --option item_us=1000 --runs 20 --max-time-ms 2000 --json "$TMP/tb.json" --md "$TMP/tb.md"
expect_grep "^stopped by the time bound after 1.437 s: batch 16" "$TMP/tb.md" "markdown: the stop too"
expect_grep "^stopped by the time bound after 1.437 s: batch 16, estimated at 759.7 ms, would have ended past 2 s" \
  "$TMP/out" "text: when and why the search stopped"
json_check "$TMP/tb.json" "d['partial'] and d['stop_reason'] == 'time bound (--max-time-ms)' and d['search']['stop'] == 'time bound' and d['search']['stop_next_batch'] == 16 and [p['batch'] for p in d['curve']] == [1, 2, 4, 8] and d['config']['max_time_ms'] == 2000" "json: partial, the stop and its batch"
expect_exit 0 "--max-time-ms 0: no bound" -- "$IB" throughput --backend fake --option us=100 \
  --option item_us=1000 --runs 20 --max-batch 64 --max-time-ms 0 --json "$TMP/tn.json"
json_check "$TMP/tn.json" "not d['partial'] and d['config']['max_time_ms'] is None and len(d['curve']) == 7" "json: no bound, the whole curve"
expect_exit 2 "--max-time-ms -1" -- "$IB" throughput --backend fake --max-time-ms -1

expect_exit 0 "explicit list" -- "$IB" throughput zoo:mlp $fast --runs 5 --batches 8,1,4 --json "$TMP/l.json"
json_check "$TMP/l.json" "[p['batch'] for p in d['curve']] == [1, 4, 8] and not d['search']['searched'] and d['search']['probes'] == []" "json: the list, sorted, no search"
expect_exit 0 "explicit range" -- "$IB" throughput zoo:mlp $fast --runs 5 --batches 2:10:4 --json "$TMP/r.json"
json_check "$TMP/r.json" "[p['batch'] for p in d['curve']] == [2, 6, 10]" "json: the range 2:10:4"

expect_exit 0 "budget met" -- "$IB" throughput zoo:mlp $fast --runs 5 --batches 1,2 --latency-budget-ms 10000
expect_grep "best within budget" "$TMP/out" "text: best within budget marked"

expect_exit 3 "budget no batch meets" -- \
  "$IB" throughput zoo:mlp $fast --runs 5 --max-batch 4 --latency-budget-ms 0.000001 --json "$TMP/nm.json"
expect_grep "latency budget" "$TMP/err" "stderr says the budget is not met"
json_check "$TMP/nm.json" "d['budget']['met'] is False and d['budget']['batch'] is None and len(d['curve']) == 3" "json: written whole, budget not met"

expect_exit 2 "--max-batch 0" -- "$IB" throughput zoo:mlp --device cpu --max-batch 0
expect_exit 2 "--max-batch absurd" -- "$IB" throughput zoo:mlp --device cpu --max-batch 99999999999
expect_exit 2 "--batches 1,,2" -- "$IB" throughput zoo:mlp --device cpu --batches "1,,2"
expect_exit 2 "--batches 0" -- "$IB" throughput zoo:mlp --device cpu --batches 0 --json "$TMP/none.json"
expect_exit 2 "--batches trailing comma" -- "$IB" throughput zoo:mlp --device cpu --batches "1,2,"
expect_exit 2 "--batches signed" -- "$IB" throughput zoo:mlp --device cpu --batches "+4"
expect_exit 2 "--batches twice" -- "$IB" throughput zoo:mlp --device cpu --batches "4,2,4"
expect_exit 2 "--batches bad range" -- "$IB" throughput zoo:mlp --device cpu --batches "8:2:1"
expect_exit 2 "--batches range of 3000" -- "$IB" throughput zoo:mlp --device cpu --batches "1:3000:1"
expect_exit 2 "--precision" -- "$IB" throughput zoo:mlp --device cpu --precision 1%
expect_exit 2 "two models" -- "$IB" throughput zoo:mlp zoo:mlp --device cpu
[ ! -e "$TMP/none.json" ] && pass "no JSON file after bad input" || fail "a JSON file was left"

expect_exit 0 "--help" -- "$IB" throughput --help
expect_grep "[-][-]max-batch" "$TMP/out" "help lists --max-batch"
finish
