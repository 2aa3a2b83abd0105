# On a GPU the CUDA-only options are taken without a word (no warning, no
# refusal), also when --device auto resolves to CUDA, and the progress line
# of calibrate names its points.
. "$(dirname "$0")/../cli/lib.sh"
. "$(dirname "$0")/require_device.sh"

quick=(--runs 20 --warmup-runs 2 --warmup-ms 0 --no-steady)
expect_exit 0 "CUDA-only options on CUDA" -- "$IB" latency zoo:mlp --device cuda --device-id 0 --prefer-nhwc \
  --cudnn-search heuristic --flush-l2 --no-gpu-state "${quick[@]}"
if [ -s "$TMP/err" ]; then fail "CUDA-only options on CUDA: $(cat "$TMP/err")"; else pass "no warning on CUDA"; fi
expect_exit 0 "--device auto resolving to CUDA takes --exclude-launch" -- \
  "$IB" latency zoo:mlp --exclude-launch "${quick[@]}"
if [ -s "$TMP/err" ]; then fail "--exclude-launch on auto: $(cat "$TMP/err")"; else pass "no warning on auto"; fi
if on_tty "$TMP/tty" "$IB" calibrate; then pass "calibrate on a terminal"; else fail "calibrate on a terminal"; fi
expect_grep $'\rinferbench: \\[1/9 harness\\] ' "$TMP/tty" "calibrate shows the harness step"
expect_grep $'\rinferbench: \\[9/9 spin 100000 us\\] (cold run|warm-up|sampling)' "$TMP/tty" "calibrate shows its last point"
python3 - "$TMP/tty" <<'PY' && pass "the line is erased before the report" || fail "calibrate: progress not erased before the report"
import sys
t = open(sys.argv[1], "rb").read().decode()
report = t.index("inferbench calibrate: spin kernels")
assert t.rindex("\x1b[K") < report and t[:report].endswith("\r\x1b[K")
PY

finish
