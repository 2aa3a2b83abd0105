# --sessions N: the measurement repeated in N fresh processes and merged:
# each session's runs kept, the statistics across them, compare on two
# levels; a crashing session kept as a failure (exit 1, the others written);
# SIGINT keeps the finished sessions; bad counts and inputs that cannot be
# read twice refused with one line (exit 2).
. "$(dirname "$0")/lib.sh"

M="zoo:mlp --device cpu --warmup-runs 2 --warmup-ms 0 --no-steady"

expect_exit 0 "3 sessions" -- "$IB" latency $M --sessions 3 --runs 30 --json "$TMP/a.json" --html "$TMP/a.html"
expect_grep "3 sessions \(each a fresh process\)" "$TMP/out" "text: the sessions"
expect_grep "geometric mean of session medians .*95% CI" "$TMP/out" "text: the interval across sessions"
expect_grep "between sessions: sd" "$TMP/out" "text: the variance split"
json_check "$TMP/a.json" "d['sessions']['requested'] == 3 and d['sessions']['measured'] == 3 and len(d['sessions']['runs']) == 3" "json: 3 sessions"
json_check "$TMP/a.json" "all(len(r['samples']['host_ms']) == 30 and r['exit_status'] == 0 for r in d['sessions']['runs'])" "json: each session's samples"
json_check "$TMP/a.json" "len(d['samples']['host_ms']) == 90 and d['latency_ms']['n'] == 90" "json: the runs pooled"
json_check "$TMP/a.json" "d['sessions']['ci95_ms'][0] <= d['sessions']['geomean_ms'] <= d['sessions']['ci95_ms'][1]" "json: the interval holds the geometric mean"
json_check "$TMP/a.json" "d['partial'] is False and 'sessions_incomplete' not in d['warnings']" "json: complete"
# Each session is a process of its own: their cold runs are each a cold start.
json_check "$TMP/a.json" "all(r['cold_ms'] is not None for r in d['sessions']['runs'])" "json: a cold run per session"
expect_grep "session medians with their 95% intervals" "$TMP/a.html" "html: the strip of session medians"

expect_exit 0 "another 3 sessions" -- "$IB" latency $M --sessions 3 --runs 30 --json "$TMP/b.json"
expect_exit 0 "compare two sets of sessions" -- "$IB" compare "$TMP/a.json" "$TMP/b.json" --json "$TMP/ab.json"
expect_grep "Welch's t over the sessions' log medians" "$TMP/out" "compare: the interval across sessions"
json_check "$TMP/ab.json" "d['sessions']['two_level'] is True and d['sessions']['a'] == 3" "compare json: two-level"
expect_exit 0 "one session" -- "$IB" latency $M --runs 30 --json "$TMP/one.json"
json_check "$TMP/one.json" "'sessions' not in d" "one session: no sessions member"
expect_exit 0 "compare one session with sessions" -- "$IB" compare "$TMP/one.json" "$TMP/b.json"
expect_grep "covers one session only; sessions of this kind of run differ by sd [0-9.]+% \(between sessions, log times, from the 3 sessions of B; 2 degrees of freedom\)" "$TMP/out" "compare: one session, the spread of B's sessions, its degrees of freedom"

# The calibration record: each latency --sessions run adds its spread to
# its kind of run, pooled by degrees of freedom (a: 3 sessions, b: 3).
R="$XDG_STATE_HOME/inferbench/spread.json"
json_check "$R" "d['schema'] == 'inferbench.spread/1' and len(d['kinds']) == 1 and (lambda e, a, b: e['results'] == 2 and e['df'] == 4 and e['device'] == 'cpu' and e['model'] == 'zoo:mlp' and abs(e['between_sd_log'] - ((2 * a ** 2 + 2 * b ** 2) / 4) ** 0.5) < 1e-12)(d['kinds'][0], json.load(open('$TMP/a.json'))['sessions']['between_sd_log'], json.load(open('$TMP/b.json'))['sessions']['between_sd_log'])" "record: a and b pooled"
# One session on each side: the interval widened by the record's spread,
# exactly: in quadrature on the log scale, Student's t at the record's 4
# degrees of freedom (6 sessions in 2 results; 2.7764, the library's
# table) x sd x sqrt(2).
expect_exit 0 "a second single session" -- "$IB" latency $M --runs 30 --json "$TMP/one2.json"
# Two single sessions on a shared machine can differ by more than the
# record's spread (seen: +128% under load): the exit status is the one
# --fail-if-slower gives for the verdict, whatever the verdict is.
"$IB" compare "$TMP/one.json" "$TMP/one2.json" --json "$TMP/oo.json" --csv "$TMP/oo.csv" --fail-if-slower \
  >"$TMP/out" 2>"$TMP/err" </dev/null
code=$?
json_check "$TMP/oo.json" "$code == (3 if d['verdict'] == 'slower' else 0)" "compare two single sessions, the record known: exit $code, as --fail-if-slower gives for its verdict"
expect_grep "widened by the spread between sessions" "$TMP/out" "compare: the interval widened"
expect_grep ",runs_ci95_low_pct,runs_ci95_high_pct,between_sd_pct,spread_source" "$TMP/oo.csv" "compare csv: the spread's columns"
expect_grep ",[0-9.e-]+,[0-9.e-]+,[0-9.e-]+,the calibration record .*: 6 sessions of A's kind in 2 results" "$TMP/oo.csv" "compare csv: the spread and its source"
expect_grep "from the calibration record .*spread.json: 6 sessions of A's kind in 2 results" "$TMP/out" "compare: the record named"
WIDEN="(lambda c, s, sd: abs(c['ci95_pct'][0] / 100 - math.expm1(math.log1p(c['pct'] / 100) - math.hypot(math.log1p(c['pct'] / 100) - math.log1p(s['runs_ci95_pct'][0] / 100), 2.7764 * sd * 2 ** 0.5))) < 1e-12 and abs(c['ci95_pct'][1] / 100 - math.expm1(math.log1p(c['pct'] / 100) + math.hypot(math.log1p(s['runs_ci95_pct'][1] / 100) - math.log1p(c['pct'] / 100), 2.7764 * sd * 2 ** 0.5))) < 1e-12)"
json_check "$TMP/oo.json" "__import__('math') and (lambda math: $WIDEN(d['change'], d['sessions'], json.load(open('$R'))['kinds'][0]['between_sd_log']))(__import__('math')) and d['sessions']['widened'] is True and d['sessions']['between_df'] == 4" "compare json: the widened interval, exactly"
json_check "$TMP/oo.json" "d['verdict'] == ('slower' if d['change']['ci95_pct'][0] > 1 else 'faster' if d['change']['ci95_pct'][1] < -1 else 'no change' if -1 <= d['change']['ci95_pct'][0] and d['change']['ci95_pct'][1] <= 1 else 'inconclusive')" "compare json: the verdict on the widened interval"
json_check "$TMP/oo.json" "abs(__import__('math').log1p(d['change']['pct'] / 100)) >= d['sessions']['between_sd_pct'] / 100 or d['verdict'] in ('inconclusive', 'no change')" "compare json: a change within the spread not called real"
# A record whose spread is 0 (the between-session estimate floored, as a
# loaded machine's noisy runs give) is known: compare names it and widens
# by nothing, instead of saying nothing is known.
mkdir -p "$TMP/zero/inferbench"
python3 -c "import json, sys; d = json.load(open(sys.argv[1])); d['kinds'][0]['between_sd_log'] = 0; json.dump(d, open(sys.argv[2], 'w'))" "$R" "$TMP/zero/inferbench/spread.json"
XDG_STATE_HOME="$TMP/zero" expect_exit 0 "compare two single sessions, a record of spread 0" -- "$IB" compare "$TMP/one.json" "$TMP/one2.json" --json "$TMP/oz.json"
expect_grep "differ by sd 0.00% \\(between sessions, log times, from the calibration record" "$TMP/out" "compare: a spread of 0 named"
json_check "$TMP/oz.json" "d['sessions']['widened'] and all(abs(w - r) < 1e-9 for w, r in zip(d['change']['ci95_pct'], d['sessions']['runs_ci95_pct']))" "compare json: widened by nothing"
expect_exit 0 "--spread-from a result of sessions" -- "$IB" compare "$TMP/one.json" "$TMP/one2.json" --spread-from "$TMP/a.json" --json "$TMP/os.json"
json_check "$TMP/os.json" "d['sessions']['spread_source'] == '--spread-from: 1 result, 3 sessions' and abs(d['sessions']['between_sd_pct'] - 100 * json.load(open('$TMP/a.json'))['sessions']['between_sd_log']) < 1e-9 and d['sessions']['between_df'] == 2" "compare json: --spread-from's spread and its degrees of freedom"
XDG_STATE_HOME="$TMP/empty" expect_exit 0 "compare two single sessions, nothing known" -- "$IB" compare "$TMP/one.json" "$TMP/one2.json" --json "$TMP/on.json"
expect_grep "covers one session only, and how much sessions differ on this device is not known" "$TMP/out" "compare: the spread unknown, said"
json_check "$TMP/on.json" "d['sessions']['widened'] is False and d['sessions']['between_sd_pct'] is None and d['sessions']['runs_ci95_pct'] is None" "compare json: not widened"
expect_exit 2 "--spread-from one session" -- "$IB" compare "$TMP/one.json" "$TMP/one2.json" --spread-from "$TMP/one.json"
expect_grep "holds 1 session that measured: a spread between sessions needs 2" "$TMP/err" "--spread-from one session: why"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d['device'] = 'cuda'; json.dump(d, open(sys.argv[2], 'w'))" "$TMP/a.json" "$TMP/gpu.json"
expect_exit 2 "--spread-from another device" -- "$IB" compare "$TMP/one.json" "$TMP/one2.json" --spread-from "$TMP/gpu.json"
expect_grep "was measured on cuda, A on cpu: another device" "$TMP/err" "--spread-from another device: why"
expect_exit 2 "--spread-from a missing file" -- "$IB" compare "$TMP/one.json" "$TMP/one2.json" --spread-from "$TMP/nothing.json"
expect_exit 2 "--spread-from on latency" -- "$IB" latency $M --spread-from "$TMP/a.json"
mkdir -p "$TMP/junk/inferbench" && echo '{"schema": "x"}' >"$TMP/junk/inferbench/spread.json"
XDG_STATE_HOME="$TMP/junk" expect_exit 0 "a record that is not one" -- "$IB" compare "$TMP/one.json" "$TMP/one2.json"
expect_grep "warning: the calibration record .* is not an inferbench calibration record" "$TMP/err" "a bad record: warned, not used"

# A session killed by a signal (the program's test hook): the others kept.
INFERBENCH_TEST_CRASH_SESSION=2 expect_exit 1 "a crashing session" -- "$IB" latency $M --sessions 3 --runs 30 --json "$TMP/c.json"
expect_grep "1 of 3 sessions failed \(session 2, exit status -9: ended by signal 9" "$TMP/err" "the failure named"
expect_grep "failed: ended by signal 9" "$TMP/out" "text: the failed session"
expect_grep "^INCOMPLETE: 3 of 3 sessions ran; 1 failed \(session 2: ended by signal 9" "$TMP/out" "text: incomplete, and why"
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

# --precision: sessions added until the interval across sessions meets it.
expect_exit 0 "--precision with sessions" -- "$IB" latency $M --sessions 2 --precision 50% --max-sessions 4 --json "$TMP/p.json"
json_check "$TMP/p.json" "2 <= d['sessions']['count'] <= 4" "precision: 2 to 4 sessions"

# SIGINT: the session running is dropped, the finished ones written.
mkdir "$TMP/tmpdir"
TMPDIR="$TMP/tmpdir" "$IB" latency zoo:mlp --device cpu --sessions 200 --runs 30 --json "$TMP/i.json" >"$TMP/i.out" 2>"$TMP/i.err" </dev/null &
pid=$!
# Once session 2 has started (its stderr file), session 1 is done and read.
wait_for "$TMP/tmpdir/inferbench-sessions.*/[2-9].err" 120 || fail "SIGINT: session 2 not started within 120 s"
kill -INT "$pid"
wait "$pid"
got=$?
if [ "$got" -eq 130 ]; then pass "SIGINT: exit 130"; else fail "SIGINT: exit $got: $(cat "$TMP/i.err")"; fi
expect_grep "^inferbench: interrupted after [0-9]+ of 200 sessions" "$TMP/i.err" "SIGINT: one line says how many"
expect_grep "^INCOMPLETE: [0-9]+ of 200 sessions ran: stopped: interrupted$" "$TMP/i.out" "SIGINT: the text says why it is incomplete"
json_check "$TMP/i.json" "d['partial'] and 1 <= d['sessions']['count'] < 200 and d['sessions']['requested'] == 200" "SIGINT: the finished sessions written"
left=$(ls -A "$TMP/tmpdir" | grep '^inferbench-sessions' || true)
[ -z "$left" ] && pass "SIGINT: no session file left" || fail "SIGINT: left $left"

# A busy machine: busy loops beside a CPU run are seen and warned about. One
# loop per CPU and a one-thread run, so that the loops take well over the
# half core the warning needs however the scheduler shares the CPUs (one
# loop beside ONNX Runtime's spinning threads sometimes got less). The run
# spans many of the kernel's 10 ms CPU-time ticks: 300 runs of 0.03 ms
# (9 ms) read less than half a core beside the loops under make test's load.
busy=()
for _ in $(seq "$(nproc)"); do ( while :; do :; done ) & busy+=($!); done
expect_exit 0 "a CPU run beside busy loops" -- "$IB" latency $M --threads 1 --runs 20000 --json "$TMP/busy.json"
kill "${busy[@]}"
wait "${busy[@]}" 2>/dev/null
expect_grep "warning: the machine was busy: other processes took [0-9.]+ of its [0-9]+ CPUs" "$TMP/out" "text: the busy machine"
json_check "$TMP/busy.json" "'cpu_busy' in d['warnings'] and d['environment']['other_cpu_cores'] >= 0.5 and d['environment']['load_average_1m'] >= 0" "json: cpu_busy, the other processes' cores"
expect_exit 2 "--require-idle-gpu on the CPU" -- "$IB" latency $M --require-idle-gpu

finish
