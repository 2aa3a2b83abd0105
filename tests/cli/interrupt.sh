# Interruption loses nothing: SIGINT or SIGTERM during a long measurement
# stops it after the run in flight, the samples taken are printed and
# written to --json (marked partial), the file appears whole under its name
# (written to a temporary and renamed: no *.tmp.* left) and the program
# exits with 128 + the signal. A second signal ends the program at once. An
# unwritable --json path is refused before anything is measured.
. "$(dirname "$0")/lib.sh"

# wait_gone PID MS: true when PID has exited within MS milliseconds.
wait_gone() {
  local pid=$1 left=$(($2 / 20))
  while [ "$left" -gt 0 ]; do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.02
    left=$((left - 1))
  done
  ! kill -0 "$pid" 2>/dev/null
}

# interrupted SIGNAL CODE [TWICE]: a run of a million samples, stopped after
# 1.5 s; with TWICE the signal is sent twice at once, as timeout(1) does (to
# the child, then to its process group): one request, not two.
interrupted() {
  local sig=$1 code=$2 json="$TMP/$1${3:-}.json"
  "$IB" latency zoo:mlp --device cpu --runs 1000000 --warmup-runs 1 --warmup-ms 0 --no-steady \
    --json "$json" >"$TMP/$sig.out" 2>"$TMP/$sig.err" </dev/null &
  local pid=$!
  sleep 1.5
  if ! kill -0 "$pid" 2>/dev/null; then
    wait "$pid"
    fail "SIG$sig: the program ended (exit $?) before the signal: $(head -c 300 "$TMP/$sig.err")"
    return
  fi
  kill -"$sig" "$pid"
  [ -n "${3:-}" ] && kill -"$sig" "$pid"
  if wait_gone "$pid" 1000; then pass "SIG$sig: exited within 1 s"; else fail "SIG$sig: still running 1 s after the signal"; fi
  wait "$pid"
  local got=$?
  if [ "$got" -eq "$code" ]; then pass "SIG$sig: exit $code"; else fail "SIG$sig: exit $got, expected $code"; fi
  if [ "$(grep -c '' "$TMP/$sig.err")" -eq 1 ] && grep -q '^inferbench: interrupted' "$TMP/$sig.err"; then
    pass "SIG$sig: one line on stderr"
  else
    fail "SIG$sig: stderr: $(cat "$TMP/$sig.err")"
  fi
  expect_grep "PARTIAL" "$TMP/$sig.out" "SIG$sig: the table is printed, marked partial"
  if [ -f "$json" ]; then
    json_check "$json" "d['partial'] is True and d['stop_reason'] == 'interrupted'" "SIG$sig: json is partial, interrupted"
    json_check "$json" "d['latency_ms']['n'] > 0 and len(d['samples']['host_ms']) == d['latency_ms']['n']" \
      "SIG$sig: json keeps every sample taken"
  else
    fail "SIG$sig: no $json"
  fi
  local left
  left=$(find "$TMP" -name '*.tmp.*' | head -3)
  if [ -z "$left" ]; then pass "SIG$sig: no temporary file left"; else fail "SIG$sig: left $left"; fi
}

interrupted INT 130
interrupted TERM 143
interrupted TERM 143 twice

# A second signal does not wait for the run in flight. One run of
# ResNet-50 at batch 64 on one thread takes seconds: the first SIGINT asks
# the measurement to stop after it, the second ends the program at once,
# leaving no file (not even the temporary).
"$IB" latency zoo:resnet-50 --device cpu --threads 1 --batch 64 --runs 1000 --warmup-runs 0 \
  --warmup-ms 0 --no-steady --json "$TMP/twice.json" >"$TMP/twice.out" 2>"$TMP/twice.err" </dev/null &
pid=$!
sleep 2
kill -INT "$pid" 2>/dev/null
sleep 0.7 # later than the duplicate-delivery window (0.5 s)
if kill -0 "$pid" 2>/dev/null; then
  kill -INT "$pid"
  if wait_gone "$pid" 500; then pass "a second SIGINT ends the program at once"; else fail "still running 0.5 s after a second SIGINT"; fi
  wait "$pid"
  got=$?
  if [ "$got" -eq 130 ]; then pass "second SIGINT: status 130"; else fail "second SIGINT: status $got"; fi
  if [ -z "$(find "$TMP" -name 'twice.json*')" ]; then pass "second SIGINT: no file, not even a temporary"; else fail "second SIGINT: left $(find "$TMP" -name 'twice.json*')"; fi
else
  wait "$pid"
  echo "note: the first SIGINT already ended the run (exit $?): the second-signal check did not apply"
fi
kill -KILL "$pid" 2>/dev/null

# Results are written to a temporary name beside the target and renamed:
# a path that cannot be written is refused before the measurement.
for bad in /nonexistent/dir/x.json "$TMP"; do
  t0=$(date +%s%N)
  expect_exit 2 "--json $bad is refused" -- \
    timeout 20 "$IB" latency zoo:mlp --device cpu --runs 1000000 --warmup-ms 0 --json "$bad" &&
    expect_grep "^inferbench: cannot write" "$TMP/err" "--json $bad: says why"
  ms=$((($(date +%s%N) - t0) / 1000000))
  if [ "$ms" -lt 5000 ]; then pass "--json $bad: refused before measuring ($ms ms)"; else fail "--json $bad: took $ms ms"; fi
done
if [ -z "$(find "$(dirname "$TMP")" -maxdepth 1 -name "$(basename "$TMP").tmp.*")" ]; then
  pass "--json DIR: no temporary left beside the folder"
else
  fail "--json DIR: a temporary was left beside $TMP"
fi
finish
