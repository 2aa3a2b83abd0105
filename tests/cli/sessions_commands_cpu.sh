# --sessions N on throughput and pitfalls, the session time cap
# (--sessions-max-ms) and every format with sessions: one row per session
# plus the aggregate rows in CSV and Markdown, the figures across sessions
# in JSON, text and HTML; a crashing session and SIGINT keep the finished
# sessions (docs/method.md, "Sessions"; docs/report.md).
. "$(dirname "$0")/lib.sh"

M="zoo:mlp --device cpu --warmup-runs 2 --warmup-ms 0 --no-steady"

# Throughput: each session its own curve; the peak and the throughput at
# the batch most sessions chose, across sessions.
expect_exit 0 "throughput, 3 sessions" -- "$IB" throughput $M --batches 1,4,16 --runs 20 --sessions 3 \
    --json "$TMP/t.json" --csv "$TMP/t.csv" --md "$TMP/t.md" --html "$TMP/t.html"
expect_grep "inferbench throughput: zoo:mlp, cpu, 3 sessions" "$TMP/out" "text: throughput sessions"
expect_grep "^peak: geometric mean of sessions [0-9.e+]+ inputs/s, 95% CI \\[" "$TMP/out" "text: the peak across sessions"
expect_grep "^best batch: (1|4|16) \\(the peak of most sessions\\)" "$TMP/out" "text: the best batch"
json_check "$TMP/t.json" "d['schema'] == 'inferbench.throughput/2' and d['sessions']['count'] == 3 and d['sessions']['measured'] == 3" "json: 3 throughput sessions"
json_check "$TMP/t.json" "all(len(r['curve']) == 3 and r['peak']['batch'] in (1, 4, 16) for r in d['sessions']['runs'])" "json: each session's curve and peak"
json_check "$TMP/t.json" "[f['key'] for f in d['sessions']['figures']] == ['peak_batch', 'peak_items_per_s', 'items_per_s_at_best_batch']" "json: the figures"
json_check "$TMP/t.json" "(lambda f: f['ci95'][0] <= f['geomean'] <= f['ci95'][1] and abs(f['geomean'] / (f['values'][0] * f['values'][1] * f['values'][2]) ** (1 / 3) - 1) < 1e-9)(d['sessions']['figures'][1])" "json: the peak's geometric mean of sessions inside its interval"
json_check "$TMP/t.json" "(lambda b, f: all(v == [p['items_per_s'] for p in r['curve'] if p['batch'] == b][0] for v, r in zip(f['values'], d['sessions']['runs'])))(d['sessions']['best_batch'], d['sessions']['figures'][2])" "json: each session's inputs/s at the best batch"
json_check "$TMP/t.json" "d['partial'] is False and 'curve' not in d" "json: complete, no top-level curve"
expect_grep "^model,device,batch,session,exit_status,message,peak_batch,peak_items_per_s,items_per_s_at_best_batch" "$TMP/t.csv" "csv: the header"
[ "$(grep -c '^zoo:mlp,cpu,,[123],0,' "$TMP/t.csv")" = 3 ] && pass "csv: a row per session" || fail "csv: $(cat "$TMP/t.csv")"
for row in geomean ci95_low ci95_high between_sd_log spread; do
    expect_grep "^zoo:mlp,cpu,,$row,,," "$TMP/t.csv" "csv: the $row row"
done
expect_grep "^\\| 3 \\| 0 \\| " "$TMP/t.md" "md: session 3's row"
expect_grep "^\\| ci95_high \\| " "$TMP/t.md" "md: the aggregate rows"
expect_grep "\\*\\*inferbench throughput\\*\\*: zoo:mlp, 3 of 3 sessions" "$TMP/t.md" "md: the title"
expect_grep "<svg" "$TMP/t.html" "html: a strip"
expect_grep "t over the sessions&#39; log values: one value each|t over the sessions' log values: one value each" "$TMP/t.html" "html: the interval named"

# Pitfalls: the correct row with its runs, the interval across sessions.
expect_exit 0 "pitfalls, 3 sessions" -- "$IB" pitfalls $M --runs 40 --sessions 3 --json "$TMP/p.json" --csv "$TMP/p.csv" --md "$TMP/p.md" --html "$TMP/p.html"
expect_grep "^correct +[0-9.e-]+ +95% CI \\[.*\\] ms \\(across sessions: both levels\\)" "$TMP/out" "text: the correct row's interval"
expect_grep "^no warm-up +[0-9.e-]+ +[-+][0-9.]+%  [-+][0-9.]+% to [-+][0-9.]+%" "$TMP/out" "text: a wrong method's error and its range over sessions"
json_check "$TMP/p.json" "d['schema'] == 'inferbench.pitfalls/2' and all(len(r['rows'][0]['samples_ms']) == 40 for r in d['sessions']['runs'])" "json: each session's correct runs"
expect_grep "^reference arithmetic \(the correct row's, every row's but the TF32 one\): strict fp32 \(no TF32\), the runtime's default$" "$TMP/out" "text: the reference's arithmetic said across sessions"
json_check "$TMP/p.json" "d['reference_math'] == 'fp32' and 'notes' in d and all('notes' in r for r in d['sessions']['runs'] if not r['failed'])" "json: the reference's arithmetic and the notes, merged"
json_check "$TMP/p.json" "(lambda f: f['key'] == 'correct_median_ms' and f['interval'].endswith('which hold both levels') and f['ci95'][0] <= f['geomean'] <= f['ci95'][1] and f['within_sd_log'] is not None)(d['sessions']['figures'][0])" "json: the correct figure, two levels"
json_check "$TMP/p.json" "all(f['interval'].endswith('one value each') for f in d['sessions']['figures'][1:])" "json: the other rows by sessions"
expect_grep "^model,device,batch,session,exit_status,message,correct_median_ms," "$TMP/p.csv" "csv: pitfalls header"
expect_grep "^zoo:mlp,cpu,1,2,0,," "$TMP/p.csv" "csv: pitfalls session 2"
expect_grep "log medians, which hold both levels" "$TMP/p.html" "html: pitfalls"
# A plain pitfalls result now carries the correct row's runs.
expect_exit 0 "pitfalls, one session" -- "$IB" pitfalls $M --runs 30 --json "$TMP/p1.json"
json_check "$TMP/p1.json" "len(d['rows'][0]['samples_ms']) == 30 and 'sessions' not in d" "json: one session, its correct runs"

# --precision on pitfalls: sessions added until the correct method's
# interval across sessions meets it, at most --max-sessions.
expect_exit 0 "pitfalls --precision with sessions" -- "$IB" pitfalls $M --sessions 2 --precision 50% --max-sessions 4 --json "$TMP/pp.json"
json_check "$TMP/pp.json" "2 <= d['sessions']['count'] <= 4 and (d['sessions']['count'] == 4 or d['sessions']['figures'][0]['precision'] <= 0.5)" "precision: 2 to 4 sessions, met unless 4 ran"

# Latency sessions in CSV and Markdown.
expect_exit 0 "latency, 2 sessions, csv and md" -- "$IB" latency $M --runs 30 --sessions 2 --csv "$TMP/l.csv" --md "$TMP/l.md"
expect_grep "^model,device,batch,session,exit_status,message,median_ms,p99_ms" "$TMP/l.csv" "csv: latency sessions"
[ "$(wc -l <"$TMP/l.csv")" = 8 ] && pass "csv: header, 2 sessions, 5 aggregate rows" || fail "csv: $(cat "$TMP/l.csv")"
expect_grep "^\\| geomean \\|  \\|  \\| [0-9.e-]+ \\| [0-9.e-]+ \\|" "$TMP/l.md" "md: the geometric mean of sessions"

# A crashing throughput session: the others kept, exit 1.
INFERBENCH_TEST_CRASH_SESSION=2 expect_exit 1 "a crashing throughput session" -- "$IB" throughput $M --batches 1,4 --runs 20 --sessions 3 --json "$TMP/c.json" --csv "$TMP/c.csv"
expect_grep "1 of 3 sessions failed \\(session 2, exit status -9" "$TMP/err" "the failure named"
json_check "$TMP/c.json" "d['partial'] and d['sessions']['measured'] == 2 and d['sessions']['runs'][1]['failed'] and d['sessions']['figures'][1]['values'][1] is None" "json: the failed session without figures"
expect_grep "^zoo:mlp,cpu,,2,-9,ended by signal 9" "$TMP/c.csv" "csv: the failed session's row"

# The time cap: a session that passes it is ended, those done are kept,
# marked partial, exit 0 (a limit the user set, as --max-time-ms).
# The cap: three times one session's time here (ASan builds are slower).
t0=$(date +%s%N)
"$IB" pitfalls $M --runs 30 --quiet >/dev/null 2>&1
cap=$(( ($(date +%s%N) - t0) * 3 / 1000000 + 500 ))
expect_exit 0 "a few sessions, then the time cap" -- "$IB" pitfalls $M --runs 30 --sessions 50 --sessions-max-ms $cap --json "$TMP/cap.json" --csv "$TMP/cap.csv"
expect_grep "^PARTIAL: session time cap \\(--sessions-max-ms\\)" "$TMP/out" "text: the cap named"
json_check "$TMP/cap.json" "d['partial'] and d['stop_reason'] == 'session time cap (--sessions-max-ms)' and 1 <= d['sessions']['count'] < 50 and d['sessions']['requested'] == 50" "json: partial, the sessions done kept"
json_check "$TMP/cap.json" "'sessions_incomplete' in d['warnings']" "json: sessions_incomplete"
expect_exit 0 "latency: a few sessions, then the time cap" -- "$IB" latency $M --runs 30 --sessions 50 --sessions-max-ms $cap
expect_grep "^INCOMPLETE: [0-9]+ of 50 sessions ran: stopped: session time cap \(--sessions-max-ms\)$" "$TMP/out" "latency text: incomplete, and why"
expect_exit 0 "a cap that every session fits in" -- "$IB" latency $M --runs 30 --sessions 3 --sessions-max-ms 600000 --json "$TMP/fits.json"
json_check "$TMP/fits.json" "d['sessions']['count'] == 3 and not d['partial']" "json: all 3 sessions, complete"
expect_exit 1 "the cap before any session ends" -- "$IB" latency $M --runs 1000000 --sessions 3 --sessions-max-ms 300 --json "$TMP/none.json"
expect_grep "^inferbench: the session time cap \\(--sessions-max-ms\\) passed before a session finished" "$TMP/err" "no session: one line"
[ -e "$TMP/none.json" ] && fail "a result written without a session" || pass "nothing written"

# SIGINT during throughput sessions: the finished ones written, exit 130.
mkdir "$TMP/tmpdir"
TMPDIR="$TMP/tmpdir" "$IB" throughput $M --batches 1,2 --runs 20 --sessions 300 --csv "$TMP/i.csv" --json "$TMP/i.json" >"$TMP/i.out" 2>"$TMP/i.err" </dev/null &
pid=$!
# Once session 2 has started (its stderr file), session 1 is done and read.
wait_for "$TMP/tmpdir/inferbench-sessions.*/[2-9].err" 120 || fail "SIGINT: session 2 not started within 120 s"
kill -INT "$pid"
wait "$pid"
got=$?
[ "$got" -eq 130 ] && pass "SIGINT: exit 130" || fail "SIGINT: exit $got: $(cat "$TMP/i.err")"
json_check "$TMP/i.json" "d['partial'] and d['stop_reason'] == 'interrupted' and 1 <= d['sessions']['count'] < 300" "SIGINT: the finished sessions written"
expect_grep "^zoo:mlp,cpu,,1,0," "$TMP/i.csv" "SIGINT: the csv holds them"
left=$(ls -A "$TMP/tmpdir" | grep '^inferbench-sessions' || true)
[ -z "$left" ] && pass "SIGINT: no session folder left" || fail "SIGINT: left $left"

finish
