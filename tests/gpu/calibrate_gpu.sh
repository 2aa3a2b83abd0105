# The tool's accuracy on kernels of known duration: within 0.5% (or 1 us,
# whichever is larger) from 20 us up; with the launch overhead excluded a
# 10 us kernel reads within 1 us.
. "$(dirname "$0")/../cli/lib.sh"
. "$(dirname "$0")/require_device.sh"

expect_exit 0 "calibrate" -- "$IB" calibrate --json "$TMP/cal.json"
cat "$TMP/out"
json_check "$TMP/cal.json" "len(d['points']) == 8" "8 calibration points"
json_check "$TMP/cal.json" "all(abs(p['error_us']) <= max(0.005 * p['true_us'], 1.0) for p in d['points'] if p['true_us'] >= 20)" "events within 0.5% or 1 us from 20 us up"
json_check "$TMP/cal.json" "all(abs(p['held_error_us']) <= 1.0 for p in d['points'] if p['true_us'] == 10)" "launch-excluded 10 us kernel within 1 us"
json_check "$TMP/cal.json" "d['timer_resolution_us'] > 0 and d['harness_device_us'] > 0" "overhead and resolution measured"
finish
