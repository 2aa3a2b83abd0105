# The HTTP client's calibrated ceiling on the GPU machine's CPU (issue 37's
# benchmarks): calibrate client against the scripted server, its table and
# ceiling printed for docs/measurements.md. Nothing here needs the GPU; it
# runs where the GPU runs because that machine's CPU is the one whose
# ceiling an endpoint run there is held to. Asserted: the run completes,
# every point's requests are matched or counted, and the points stop at the
# first inaccurate one; no timing.
. "$(dirname "$0")/../cli/lib.sh"
. "$(dirname "$0")/require_device.sh"

expect_exit 0 "calibrate client" -- "$IB" calibrate client --json "$TMP/client.json"
cat "$TMP/out"
json_check "$TMP/client.json" \
  "all(p['requests'] >= 20 and p['unmatched'] + p['failed'] <= p['requests'] for p in d['points']) and all(p['accurate'] for p in d['points'][:-1])" \
  "every point's requests accounted for, only the last one inaccurate"
json_check "$TMP/client.json" \
  "d['ceiling']['rate'] == max([p['rate'] for p in d['points'] if p['accurate']] or [0])" \
  "the ceiling is the last accurate rate"
finish
