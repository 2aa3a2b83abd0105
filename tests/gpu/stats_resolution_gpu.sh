# The CUDA event timer's resolution is known to every latency result, and
# no interval is narrower than it: on the H200 a small model with the launch
# excluded once printed "median 35.33 us, 95% CI [35.33, 35.33] us
# (+-0.00%)" where the runs differed by less than the events' step.
. "$(dirname "$0")/../cli/lib.sh"
. "$(dirname "$0")/require_device.sh"

expect_exit 0 "latency zoo:mlp, launch excluded" -- \
  "$IB" latency zoo:mlp --device cuda --exclude-launch --runs 300 --json "$TMP/x.json"
cat "$TMP/out"
json_check "$TMP/x.json" "d['timing'] == 'device-events' and 1e-5 <= d['timer_resolution_ms'] <= 0.005" "json: the events' resolution measured (0.01 to 5 us)"
json_check "$TMP/x.json" "0 < d['host_timer_resolution_ms'] < 0.01" "json: the host clock's resolution measured"
# Half-widths never below the resolution (a relative slack for rounding).
json_check "$TMP/x.json" "all((c[1] - c[0]) / 2 >= d['timer_resolution_ms'] * (1 - 1e-9) for c in (d['latency_ms']['ci95_median'], d['latency_ms']['ci95_mean']))" "json: no interval narrower than +- the resolution"
json_check "$TMP/x.json" "d['latency_ms']['ci95_mean'][0] > 0 and 'precision' not in d" "json: the mean's interval above zero; no precision block"
if python3 -c "import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))['latency_ms'].get('ci95_widened_to_resolution') else 1)" "$TMP/x.json"; then
  expect_grep "^interval widened to the timer resolution \(\+-[0-9.]+ us\)" "$TMP/out" "text: the widening is said"
else
  pass "no interval needed widening"
fi
expect_grep "^median [0-9.]+ (us|ms), 95% CI \[[0-9.]+, [0-9.]+\] \1 " "$TMP/out" "text: the median line in one unit"

expect_exit 0 "latency --runs 5 on the GPU" -- "$IB" latency zoo:mlp --device cuda --runs 5 --json "$TMP/five.json"
expect_grep "too few runs for a 95% interval: n=5, needs 6" "$TMP/out" "text: n=5 in words"
json_check "$TMP/five.json" "d['latency_ms']['ci95_median'] is None and d['timer_resolution_ms'] > 0" "json: null interval, resolution known"
finish
