# --html: a self-contained page (no script, nothing fetched) that parses as
# HTML, with the plots each command draws; written whole or not at all.
. "$(dirname "$0")/lib.sh"

expect_exit 0 "latency --html" -- "$IB" latency zoo:mlp --device cpu --runs 200 --html "$TMP/l.html"
html_check "$TMP/l.html" "count('svg') == 2" "latency: two plots"
html_check "$TMP/l.html" "'<script' not in s.lower() and 'http' not in s" "latency: no script, no link"
html_check "$TMP/l.html" "count('rect', 'bar') >= 1 and count('line', 'median') == 2 and count('line', 'p99') == 1" "latency: bars, median and p99 marked"
html_check "$TMP/l.html" "count('polyline', 'run-line') == 1 and 'host time per run' in s" "latency: runs in order, host time"
html_check "$TMP/l.html" "s.rstrip().endswith('</html>') and 'zoo:mlp' in s" "latency: a whole page"

expect_exit 0 "latency --json and --html together" -- \
  "$IB" latency zoo:mlp --device cpu --runs 20 --json "$TMP/both.json" --html "$TMP/both.html"
json_check "$TMP/both.json" "d['latency_ms']['n'] == 20" "both: the json is written"
html_check "$TMP/both.html" "count('svg') == 2" "both: the html is written"

expect_exit 0 "throughput --html" -- \
  "$IB" throughput zoo:mlp --device cpu --max-batch 16 --runs 10 --html "$TMP/t.html"
html_check "$TMP/t.html" "count('svg') == 1 and count('circle', 'pt-b2b') == 5 and count('circle', 'pt-sync') == 5" "throughput: one point per batch, two series"
html_check "$TMP/t.html" "'<script' not in s.lower() and 'http' not in s and 'peak' in s" "throughput: no script, no link, peak marked"

# pitfalls on the CPU: the host-clock and copy rows do not apply; no
# warm-up and zero-filled input as bars against the correct median's line,
# each red or neutral as its interval reads, the single sample as a range.
expect_exit 0 "pitfalls --html" -- "$IB" pitfalls zoo:mlp --device cpu --runs 50 --html "$TMP/p.html"
html_check "$TMP/p.html" "count('svg') == 1 and count('rect', 'bar-wrong') + count('rect', 'bar-noise') == 2" "pitfalls: a bar per measured mistake"
html_check "$TMP/p.html" "count('line', 'spread') == 1 and count('line', 'correct') == 1 and count('circle', 'mean') == 1 and count('line', 'interval') == 2" "pitfalls: single-run range, correct median, intervals, the no-warm-up mean"
html_check "$TMP/p.html" "'N/A: not a mistake on the CPU' in s and '<script' not in s.lower() and 'http' not in s" "pitfalls: N/A rows say why; no script, no link"

expect_exit 2 "unwritable --html" -- "$IB" latency zoo:mlp --device cpu --runs 5 --html "$TMP/no/such/dir/l.html"
if [ -z "$(find "$TMP" -path "$TMP/no*")" ]; then pass "no file left"; else fail "a file was left"; fi
expect_exit 2 "unwritable --html with --json" -- \
  "$IB" latency zoo:mlp --device cpu --runs 5 --json "$TMP/j.json" --html "$TMP/no/l.html"
if [ -z "$(find "$TMP" -name 'j.json*')" ]; then pass "no --json file left either"; else fail "a --json file was left"; fi
expect_exit 2 "--html does not apply to calibrate" -- "$IB" calibrate --html "$TMP/c.html"
finish
