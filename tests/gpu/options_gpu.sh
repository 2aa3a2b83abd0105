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
if progress_erased "$TMP/tty" "inferbench calibrate: spin kernels"; then pass "the line is erased before the report"; else
  fail "calibrate: progress not erased before the report"; fi

# --- devices named in refusals (issue 28, point 1) ---------------------------
# A --device-id past the machine's devices names them, in CUDA's order,
# whether the device is asked for or chosen automatically (which used to
# fall back to the CPU and blame the option); the devices counted as
# fleet_gpu.sh counts them (info --device-id K succeeds while K exists).
n=0
while [ "$n" -lt 64 ] && "$IB" info --device-id "$n" >/dev/null 2>&1; do n=$((n + 1)); done
name0=$("$IB" info | sed -n 's/^gpu  *\(.*\) (device 0)$/\1/p')
[ -n "$name0" ] && pass "info names device 0: $name0" || fail "info names no device 0"
want="this machine has $n \\(0: $(printf '%s' "$name0" | sed 's/[][\.*^$()+?{}|]/\\&/g')"
for dev in "" "--device cuda"; do
  expect_exit 2 "--device-id 63 ${dev:-(auto)}" -- "$IB" latency zoo:mlp $dev --device-id 63 --json "$TMP/id.json"
  expect_grep "^inferbench: there is no CUDA device 63: $want" "$TMP/err" "--device-id 63 ${dev:-(auto)}: the devices named"
  if [ ! -e "$TMP/id.json" ]; then pass "no --json file left"; else fail "--device-id 63 left a --json file"; fi
done
expect_exit 2 "calibrate --device-id 63" -- "$IB" calibrate --device-id 63
expect_grep "^inferbench: there is no CUDA device 63: $want" "$TMP/err" "calibrate --device-id 63: the devices named"
"$IB" info --device-id 63 >"$TMP/out" 2>&1
expect_grep "^gpu +there is no CUDA device 63: $want" "$TMP/out" "info --device-id 63: the devices named"
expect_exit 2 "a CPU backend given --flush-l2 on a GPU machine" -- "$IB" latency --backend fake --flush-l2
expect_grep "^inferbench: --flush-l2 applies to CUDA only: backend 'fake' runs the model on the CPU, though $want" \
  "$TMP/err" "--flush-l2 on the fake: the backend named, and the machine's devices"
expect_exit 2 "--device cpu --flush-l2 on a GPU machine" -- "$IB" latency zoo:mlp --device cpu --flush-l2
expect_grep "^inferbench: --flush-l2 applies to CUDA only: the model runs on the CPU$" "$TMP/err" \
  "--device cpu --flush-l2: the CPU was asked for"

# --- standing advice is a note, not a warning (issue 28, point 3) -------------
# cuDNN's exhaustive search (the default) picks its kernels in each process:
# said once, as a note, kept in the JSON's notes; no warning line for it.
expect_exit 0 "an autotuned session" -- "$IB" latency zoo:efficientnet-b0 --device cuda --runs 100 --quiet \
  --json "$TMP/note.json"
json_check "$TMP/note.json" "'session_dependent' in d['notes'] and 'session_dependent' not in d['warnings']" \
  "json: session_dependent a note, not a warning"
if [ "$(grep -c "^note: this setup varies between sessions" "$TMP/out")" -eq 1 ]; then pass "text: the note once"; else
  fail "text: the note not once: $(grep -c "^note: this setup varies" "$TMP/out")"; fi
if grep -qE "^warning: (this setup varies|the runtime chose its kernels)" "$TMP/out"; then
  fail "text: session dependence printed as a warning"
else
  pass "text: no warning line for it"
fi

# --- serve's progress line on the GPU (issue 28, point 5) ----------------------
if on_tty "$TMP/serve.tty" "$IB" serve zoo:mlp --device cuda --rates 100,200 --requests 300; then
  pass "serve on a terminal"
else
  fail "serve on a terminal"
fi
expect_grep $'\rinferbench: \\[2/2 rate, 200 requests/s\\] serving [0-9]+/300 requests' "$TMP/serve.tty" \
  "serve shows its rates"
if progress_erased "$TMP/serve.tty" "model: zoo:mlp"; then pass "serve: the line erased before the report"; else
  fail "serve: progress not erased before the report"; fi

finish
