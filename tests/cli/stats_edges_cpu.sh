# Statistics at the edges, end to end on the CPU: too few runs for an
# interval (words in the text, null in JSON, never "inf"), mean intervals
# that stay above zero, a precision target printed with the user's digits
# and a precision block only when one was asked, the timer's resolution
# recorded, one unit per line, and the budget line's measured p99.
. "$(dirname "$0")/lib.sh"

fast="--device cpu --warmup-runs 2 --warmup-ms 0 --warmup-max-ms 1000"
no_inf() { if grep -qE 'inf%|inf\]|\[-inf' "$1"; then fail "$2: $(grep -E 'inf' "$1")"; else pass "$2"; fi; }

for n in 1 2 5; do
  expect_exit 0 "latency --runs $n" -- "$IB" latency zoo:mlp $fast --runs $n --json "$TMP/l$n.json"
  expect_grep "too few runs for a 95% interval: n=$n, needs 6" "$TMP/out" "text: no interval at n=$n, in words"
  no_inf "$TMP/out" "text: no infinite interval at n=$n"
  json_check "$TMP/l$n.json" "d['latency_ms']['ci95_mean'] is None and d['latency_ms']['ci95_median'] is None" "json: null intervals at n=$n"
done

expect_exit 0 "latency --runs 6" -- "$IB" latency zoo:mlp $fast --runs 6 --json "$TMP/l6.json"
# One unit per line: the median, its interval and the mean's share one.
expect_grep "^median [0-9.]+ (us|ms|s), 95% CI \[[0-9.]+, [0-9.]+\] \1 \(\+-[0-9.e-]+%\)$" "$TMP/out" "text: the median and its interval in one unit"
expect_grep "^mean [0-9.]+ (us|ms|s), 95% CI \[[0-9.]+, [0-9.]+\] \1$" "$TMP/out" "text: the mean and its interval in one unit"
json_check "$TMP/l6.json" "0 < d['latency_ms']['ci95_mean'][0] <= d['latency_ms']['mean'] <= d['latency_ms']['ci95_mean'][1]" "json: the mean's interval holds the mean, above zero"
json_check "$TMP/l6.json" "'precision' not in d" "json: no precision block without a target"
json_check "$TMP/l6.json" "0 < d['timer_resolution_ms'] < 0.1 and d['timer_resolution_ms'] == d['host_timer_resolution_ms']" "json: the host clock's resolution recorded"

expect_exit 0 "latency --precision 0.001%" -- \
  "$IB" latency zoo:mlp $fast --precision 0.001% --min-runs 10 --max-runs 20 --json "$TMP/p.json"
expect_grep "^precision target \+-0\.001%: NOT met after 20 runs$" "$TMP/out" "text: the target with the digits given"
json_check "$TMP/p.json" "d['precision']['target'] == 0.00001 and d['precision']['met'] is False" "json: the precision block with a target"

expect_exit 0 "throughput --runs 5" -- "$IB" throughput zoo:mlp $fast --runs 5 --batches 1,2 --json "$TMP/t5.json"
json_check "$TMP/t5.json" "all(p['latency_ms']['ci95_mean'] is None and p['latency_ms']['ci95_median'] is None for p in d['curve'])" "json: throughput points without intervals at n=5"
expect_exit 0 "throughput --runs 8, budget" -- \
  "$IB" throughput zoo:mlp $fast --runs 8 --batches 1,2 --latency-budget-ms 10000 --json "$TMP/t8.json"
json_check "$TMP/t8.json" "all(0 < p['latency_ms']['ci95_mean'][0] <= p['latency_ms']['ci95_mean'][1] for p in d['curve'])" "json: throughput mean intervals above zero"
json_check "$TMP/t8.json" "d['timer_resolution_ms'] > 0" "json: throughput records the timer's resolution"
# The measured p99 of the chosen batch, not the 10 s budget again.
expect_grep "^within 10 s p99 batch latency: batch [12], [0-9]+ inputs/s \(p99 [0-9.]+ (us|ms)\)$" "$TMP/out" "text: the budget line prints the measured p99"
finish
