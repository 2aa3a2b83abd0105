# inferbench generate --sessions N on the scripted generation fake (--backend
# fake, a virtual clock): N fresh processes merged by the sessions machinery.
# Every session reads the script's exact figures (TTFT 2.5 ms; the step at
# position p 1 + p/1024 ms, the 16 steps from position 64), so the geometric
# mean across sessions is each session's value and the interval degenerate.
# A session that fails partway (fail_at_call) or is killed (the program's
# test hook) leaves sessions_incomplete with what the others measured kept;
# bad counts and --pitfalls with --sessions are refused with one line.
. "$(dirname "$0")/lib.sh"

FAKE=(generate m --backend fake --prompt-tokens 64 --new-tokens 16 --runs 10 --warmup-runs 3 --warmup-ms 0
      --no-steady --quiet)
# The script's figures: the median of the 160 tokens lies between the 8th
# and 9th steps (positions 71 and 72); a request is TTFT + the first 15
# steps; tokens/s is the 16 tokens over their time, the prompt's 64 over
# 2.5 ms.
TOKEN="1 + 71.5 / 1024"
REQUEST="2.5 + sum(1 + (64 + i) / 1024 for i in range(15))"
TPS="16 / sum(1 + (64 + i) / 1024 for i in range(16)) * 1e3"
# The geometric mean is exp(mean(log)): equal to the values up to rounding.
NEAR="(lambda a, b: abs(a - b) <= 1e-12 * abs(b))"

expect_exit 0 "3 sessions" -- "$IB" "${FAKE[@]}" --sessions 3 --json "$TMP/s.json" --csv "$TMP/s.csv"
expect_grep "^inferbench generate: m, cpu, prompt 64 tokens, 16 new tokens from depth 64, 3 sessions \(each a fresh process\)" "$TMP/out" "text: the sessions and the settings"
expect_grep "^TTFT median: geometric mean of sessions 2.5 ms, 95% CI \[2.5, 2.5\] ms" "$TMP/out" "text: TTFT across sessions"
expect_grep "^per-token median: geometric mean of sessions 1.06982 ms" "$TMP/out" "text: the per-token median across sessions"
expect_grep "^generation: geometric mean of sessions 934.733 tokens/s" "$TMP/out" "text: tokens/s across sessions"
json_check "$TMP/s.json" "d['schema'] == 'inferbench.generation/1' and d['sessions']['requested'] == 3 and d['sessions']['count'] == 3 and d['sessions']['measured'] == 3 and d['sessions']['incomplete'] is False" "json: 3 sessions, complete"
json_check "$TMP/s.json" "d['partial'] is False and 'sessions_incomplete' not in d['warnings'] and d['settings']['prompt_tokens'] == 64" "json: not partial, the first session's settings"
json_check "$TMP/s.json" "[f['key'] for f in d['sessions']['figures']] == ['ttft_median_ms', 'token_median_ms', 'request_median_ms', 'tokens_per_s', 'prompt_tokens_per_s']" "json: the figures"
json_check "$TMP/s.json" "[r['index'] for r in d['sessions']['runs']] == [1, 2, 3] and all(r['exit_status'] == 0 and not r['failed'] and r['runs'] == 10 and len(r['samples']['token_ms']) == 10 and all(len(t) == 16 for t in r['samples']['token_ms']) for r in d['sessions']['runs'])" "json: each session's own result kept, every token"
json_check "$TMP/s.json" "all(r['samples']['ttft_ms'] == [2.5] * 10 and r['tokens_per_s'] == $TPS and r['prompt_tokens_per_s'] == 64 * 10 / 25 * 1e3 for r in d['sessions']['runs'])" "json: each session's figures, the script's"
json_check "$TMP/s.json" "'runs' not in d and 'samples' not in d and 'ttft_ms' not in d" "json: no session's figures at the top"
FIG="(lambda f: {x['key']: x for x in d['sessions']['figures']})(0)"
json_check "$TMP/s.json" "(lambda f: f['ttft_median_ms']['values'] == [2.5] * 3 and f['token_median_ms']['values'] == [$TOKEN] * 3 and f['request_median_ms']['values'] == [$REQUEST] * 3 and f['tokens_per_s']['values'] == [$TPS] * 3 and f['prompt_tokens_per_s']['values'] == [25600] * 3)($FIG)" "json: each session's values, exactly the script's"
json_check "$TMP/s.json" "all(f['sessions'] == 3 and $NEAR(f['geomean'], f['values'][0]) and $NEAR(f['ci95'][0], f['values'][0]) and $NEAR(f['ci95'][1], f['values'][0]) and f['spread'] == 0 and f['between_sd_log'] < 1e-12 for f in d['sessions']['figures'])" "json: the geometric mean is the value, the interval degenerate"
json_check "$TMP/s.json" "(lambda f: all(f[k]['interval'] == \"t over the sessions' log medians, which hold both levels\" and f[k]['within_sd_log'] is not None for k in ('ttft_median_ms', 'token_median_ms', 'request_median_ms')) and f['tokens_per_s']['interval'] == \"t over the sessions' log values: one value each\" and f['tokens_per_s']['within_sd_log'] is None)($FIG)" "json: the medians on two levels, tokens/s one value a session"
expect_grep "^m,cpu,,2,0,,2.5,1.06982421875," "$TMP/s.csv" "csv: session 2's row, no batch"

# compare of two merged results (docs/compare.md, "Generation results"):
# the timed figures two-level, the energy per token across the sessions
# (every session 0.3 J a token at 300 W, 0.33 at 330 W: no spread, the
# interval the bounds'); against a merged result without a counter, that
# result's own reason.
E=(--option energy_step_ms=100 --option idle_w=60 --option pos_ns=0)
expect_exit 0 "3 sessions at 300 W" -- "$IB" "${FAKE[@]}" "${E[@]}" --option busy_w=300 --sessions 3 --json "$TMP/e1.json"
expect_exit 0 "3 sessions at 330 W" -- "$IB" "${FAKE[@]}" "${E[@]}" --option busy_w=330 --sessions 3 --json "$TMP/e2.json"
expect_exit 0 "compare: two merged results" -- "$IB" compare "$TMP/e1.json" "$TMP/e2.json" --json "$TMP/ec.json"
expect_grep "^sessions: the intervals are two-level \(A: 3 sessions, B: 3\)" "$TMP/out" "compare: two-level"
expect_grep "^energy per token \(decode\): 0.3 J -> 0.33 J: \+10.00%, within \[\+8.90%, \+11.11%\] \(t over the sessions' log figures, A: 3 sessions, B: 3, and their bounds, up to \+-0.5% and \+-0.5%\): more energy$" "$TMP/out" "compare: the decode energy across sessions"
expect_grep "^energy per prompt token \(prefill\): 0.01172 J -> 0.01289 J: \+10.00%, within \[\+8.18%, \+11.85%\]" "$TMP/out" "compare: the prefill energy across sessions"
json_check "$TMP/ec.json" "d['sessions_a'] == 3 and d['sessions_b'] == 3 and d['ttft']['two_level'] is True and abs(d['energy_change']['pct'] - 10) < 1e-9 and d['energy_change']['verdict'] == 'more energy' and abs(d['prefill_energy_change']['pct'] - 10) < 1e-9 and d['energy_change']['why_not_b'] is None" "compare json: both energy changes across sessions"
expect_exit 0 "3 sessions without a counter" -- "$IB" "${FAKE[@]}" --sessions 3 --json "$TMP/e0.json"
expect_exit 0 "compare: against no counter" -- "$IB" compare "$TMP/e1.json" "$TMP/e0.json"
expect_grep "^energy per token \(decode\): not in both files: B has no figure: the fake scripts no energy counter \(energy_step_ms 0\)$" "$TMP/out" "compare: B's own reason"
python3 -c "
import json, sys
d = json.load(open(sys.argv[1])); d['sessions']['runs'][1]['decode_energy']['joules_per_item'] = -1
json.dump(d, open(sys.argv[2], 'w'))" "$TMP/e1.json" "$TMP/bad.json"
expect_exit 2 "compare: a broken session's figure" -- "$IB" compare "$TMP/bad.json" "$TMP/e2.json"
expect_grep "^inferbench: '.*bad.json' is not an inferbench generation result: decode_energy.joules_per_item is not a positive number with a bound in \[0, 1\)$" "$TMP/err" "compare: said as a generation result's, one line"

expect_exit 1 "every session fails partway: exit 1, the runs before kept" -- \
  "$IB" "${FAKE[@]}" --sessions 3 --option fail_at_call=121 --json "$TMP/f.json"
expect_grep "^inferbench: 3 of 3 sessions failed \(session 1, exit status 1: fake: call 121 failed\)$" "$TMP/err" "the failure, one line"
json_check "$TMP/f.json" "d['partial'] is True and d['stop_reason'] == 'sessions incomplete' and 'sessions_incomplete' in d['warnings'] and d['sessions']['incomplete'] is True and d['sessions']['measured'] == 3" "json: sessions_incomplete"
json_check "$TMP/f.json" "all(r['exit_status'] == 1 and r['partial'] is True and r['runs'] == 4 and r['message'] == 'fake: call 121 failed' for r in d['sessions']['runs'])" "json: each session's 4 runs kept"
json_check "$TMP/f.json" "d['sessions']['figures'][0]['values'] == [2.5] * 3" "json: the figures of what they measured"

INFERBENCH_TEST_CRASH_SESSION=2 expect_exit 1 "session 2 killed: exit 1, the others kept" -- \
  "$IB" "${FAKE[@]}" --sessions 3 --json "$TMP/c.json"
expect_grep "^inferbench: 1 of 3 sessions failed \(session 2, exit status -9: ended by signal 9" "$TMP/err" "the killed session, one line"
expect_grep "^      2  failed: ended by signal 9" "$TMP/out" "text: the failed session's row"
json_check "$TMP/c.json" "d['partial'] is True and 'sessions_incomplete' in d['warnings'] and d['sessions']['measured'] == 2 and [r['failed'] for r in d['sessions']['runs']] == [False, True, False]" "json: sessions_incomplete, session 2 failed"
json_check "$TMP/c.json" "(lambda f: f['values'] == [2.5, None, 2.5] and f['sessions'] == 2 and f['geomean'] == 2.5)(d['sessions']['figures'][0])" "json: the figures of sessions 1 and 3"

expect_exit 1 "no session measures anything" -- "$IB" "${FAKE[@]}" --sessions 2 --option fail_at_call=0 --json "$TMP/z.json"
if [ -e "$TMP/z.json" ]; then fail "no session measured: a JSON written"; else pass "no session measured: no JSON"; fi

expect_exit 2 "--sessions 0" -- "$IB" "${FAKE[@]}" --sessions 0
expect_grep "^inferbench: --sessions '0': must be between 1 and" "$TMP/err" "--sessions 0: why"
expect_exit 2 "--sessions with --pitfalls" -- "$IB" "${FAKE[@]}" --sessions 2 --pitfalls --json "$TMP/p.json"
expect_grep "--pitfalls cannot be given with --sessions" "$TMP/err" "--pitfalls with --sessions: why"
if [ -e "$TMP/p.json" ]; then fail "a refusal wrote a JSON"; else pass "a refusal writes nothing"; fi
expect_exit 2 "--sessions-max-ms without --sessions" -- "$IB" "${FAKE[@]}" --sessions-max-ms 100
expect_exit 2 "a bad model in every session" -- "$IB" generate "$TMP/none.gguf" --sessions 2 --quiet
finish
