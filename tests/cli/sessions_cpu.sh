# --sessions N: the measurement repeated in N fresh processes and merged:
# each session's runs kept, the statistics across them, compare on two
# levels; a crashing session kept as a failure (exit 1, the others written);
# SIGINT keeps the finished sessions; bad counts and inputs that cannot be
# read twice refused with one line (exit 2).
. "$(dirname "$0")/lib.sh"

M="zoo:mlp --device cpu --warmup-runs 2 --warmup-ms 0 --no-steady"

expect_exit 0 "3 sessions" -- "$IB" latency $M --sessions 3 --runs 30 --json "$TMP/a.json" --html "$TMP/a.html"
expect_grep "3 sessions \(each a fresh process\)" "$TMP/out" "text: the sessions"
expect_grep "median of session medians .*95% CI" "$TMP/out" "text: the two-level interval"
expect_grep "between sessions: sd" "$TMP/out" "text: the variance split"
json_check "$TMP/a.json" "d['sessions']['requested'] == 3 and d['sessions']['measured'] == 3 and len(d['sessions']['runs']) == 3" "json: 3 sessions"
json_check "$TMP/a.json" "all(len(r['samples']['host_ms']) == 30 and r['exit_status'] == 0 for r in d['sessions']['runs'])" "json: each session's samples"
json_check "$TMP/a.json" "len(d['samples']['host_ms']) == 90 and d['latency_ms']['n'] == 90" "json: the runs pooled"
json_check "$TMP/a.json" "d['sessions']['ci95_ms'][0] <= d['sessions']['median_ms'] <= d['sessions']['ci95_ms'][1]" "json: the interval holds the median of medians"
json_check "$TMP/a.json" "d['partial'] is False and 'sessions_incomplete' not in d['warnings']" "json: complete"
# Each session is a process of its own: their cold runs are each a cold start.
json_check "$TMP/a.json" "all(r['cold_ms'] is not None for r in d['sessions']['runs'])" "json: a cold run per session"
expect_grep "session medians with their 95% intervals" "$TMP/a.html" "html: the strip of session medians"

expect_exit 0 "another 3 sessions" -- "$IB" latency $M --sessions 3 --runs 30 --json "$TMP/b.json"
expect_exit 0 "compare two sets of sessions" -- "$IB" compare "$TMP/a.json" "$TMP/b.json" --json "$TMP/ab.json"
expect_grep "two-level bootstrap" "$TMP/out" "compare: the two-level interval"
json_check "$TMP/ab.json" "d['sessions']['two_level'] is True and d['sessions']['a'] == 3" "compare json: two-level"
expect_exit 0 "one session" -- "$IB" latency $M --runs 30 --json "$TMP/one.json"
json_check "$TMP/one.json" "'sessions' not in d" "one session: no sessions member"
expect_exit 0 "compare one session with sessions" -- "$IB" compare "$TMP/one.json" "$TMP/b.json"
expect_grep "covers one session only; on this device sessions of B differed by sd" "$TMP/out" "compare: one session, the spread of B's sessions"

# A session killed by a signal (the program's test hook): the others kept.
INFERBENCH_TEST_CRASH_SESSION=2 expect_exit 1 "a crashing session" -- "$IB" latency $M --sessions 3 --runs 30 --json "$TMP/c.json"
expect_grep "1 of 3 sessions failed \(session 2, exit status -9: ended by signal 9" "$TMP/err" "the failure named"
expect_grep "failed: ended by signal 9" "$TMP/out" "text: the failed session"
json_check "$TMP/c.json" "d['partial'] and 'sessions_incomplete' in d['warnings'] and d['sessions']['measured'] == 2" "json: incomplete, 2 measured"
json_check "$TMP/c.json" "d['sessions']['runs'][1]['exit_status'] == -9 and d['sessions']['runs'][1]['samples'] is None" "json: the failure recorded"
# A bad model: the first session says so, the others are not started.
expect_exit 2 "a model that is not there" -- "$IB" latency zoo:nothing --device cpu --sessions 5 --json "$TMP/none.json"
expect_grep "unknown zoo model|nothing" "$TMP/err" "the session's own message"
grep -q "inferbench: inferbench:" "$TMP/err" && fail "the program's name twice: $(cat "$TMP/err")" || pass "the program's name once"
[ -e "$TMP/none.json" ] && fail "a result written without a session" || pass "nothing written"

# Bad input: one line, exit 2, nothing measured.
expect_exit 2 "--sessions 0" -- "$IB" latency $M --sessions 0
expect_exit 2 "--sessions 1001" -- "$IB" latency $M --sessions 1001
expect_exit 2 "--sessions on calibrate" -- "$IB" calibrate --sessions 2
expect_exit 2 "an input read from a pipe" -- "$IB" latency $M --sessions 2 --input input=@/dev/stdin
expect_exit 2 "--max-sessions without --precision" -- "$IB" latency $M --sessions 2 --max-sessions 3
expect_exit 2 "--max-sessions below --sessions" -- "$IB" latency $M --sessions 4 --max-sessions 3 --precision 5%
expect_exit 2 "--sessions-max-ms without --sessions" -- "$IB" latency $M --sessions-max-ms 100
expect_exit 2 "--sessions-max-ms 0" -- "$IB" latency $M --sessions 2 --sessions-max-ms 0
expect_exit 2 "the hidden option malformed" -- "$IB" latency $M --session-child x

# --precision: sessions added until the two-level interval meets it.
expect_exit 0 "--precision with sessions" -- "$IB" latency $M --sessions 2 --precision 50% --max-sessions 4 --json "$TMP/p.json"
json_check "$TMP/p.json" "2 <= d['sessions']['count'] <= 4" "precision: 2 to 4 sessions"

# SIGINT: the session running is dropped, the finished ones written.
mkdir "$TMP/tmpdir"
TMPDIR="$TMP/tmpdir" "$IB" latency zoo:mlp --device cpu --sessions 200 --runs 30 --json "$TMP/i.json" >"$TMP/i.out" 2>"$TMP/i.err" </dev/null &
pid=$!
sleep 4
kill -INT "$pid"
wait "$pid"
got=$?
if [ "$got" -eq 130 ]; then pass "SIGINT: exit 130"; else fail "SIGINT: exit $got: $(cat "$TMP/i.err")"; fi
expect_grep "^inferbench: interrupted after [0-9]+ of 200 sessions" "$TMP/i.err" "SIGINT: one line says how many"
json_check "$TMP/i.json" "d['partial'] and 1 <= d['sessions']['count'] < 200 and d['sessions']['requested'] == 200" "SIGINT: the finished sessions written"
left=$(ls -A "$TMP/tmpdir" | grep '^inferbench-sessions' || true)
[ -z "$left" ] && pass "SIGINT: no session file left" || fail "SIGINT: left $left"

# A busy machine: busy loops beside a CPU run are seen and warned about. One
# loop per CPU and a one-thread run, so that the loops take well over the
# half core the warning needs however the scheduler shares the CPUs (one
# loop beside ONNX Runtime's spinning threads sometimes got less).
busy=()
for _ in $(seq "$(nproc)"); do ( while :; do :; done ) & busy+=($!); done
expect_exit 0 "a CPU run beside busy loops" -- "$IB" latency $M --threads 1 --runs 300 --json "$TMP/busy.json"
kill "${busy[@]}"
wait "${busy[@]}" 2>/dev/null
expect_grep "warning: the machine was busy: other processes took [0-9.]+ of its [0-9]+ CPUs" "$TMP/out" "text: the busy machine"
json_check "$TMP/busy.json" "'cpu_busy' in d['warnings'] and d['environment']['other_cpu_cores'] >= 0.5 and d['environment']['load_average_1m'] >= 0" "json: cpu_busy, the other processes' cores"
expect_exit 2 "--require-idle-gpu on the CPU" -- "$IB" latency $M --require-idle-gpu

finish
