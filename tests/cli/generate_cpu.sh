# inferbench generate end to end on the scripted generation fake (--backend
# fake, a virtual clock): the figures in the JSON against the script's
# arithmetic, the search under a KV capacity, the pitfalls, the refusals.
# Step at position p: 1 + p/1024 ms; prefill of 64 tokens: 2.5 ms; the first
# two calls 8 times slower (gen_fake.c's defaults).
. "$(dirname "$0")/lib.sh"

FAKE=(generate m --backend fake --prompt-tokens 64 --new-tokens 16 --runs 10 --warmup-runs 3 --warmup-ms 0
      --no-steady --quiet)

expect_exit 0 "generate on the fake, json" -- "$IB" "${FAKE[@]}" --json "$TMP/g.json" --csv "$TMP/g.csv" --md "$TMP/g.md"
expect_grep "^TTFT +10 +2.5 +2.5 " "$TMP/out" "text: the TTFT row, 10 runs of 2.5 ms"
expect_grep "^per token +160 " "$TMP/out" "text: 160 tokens timed"
expect_grep "never stopped at end-of-sequence" "$TMP/out" "text: a fixed length, said"
json_check "$TMP/g.json" "d['schema'] == 'inferbench.generation/1' and d['partial'] is False and d['runs'] == 10" "json: schema, complete, 10 runs"
json_check "$TMP/g.json" "len(d['samples']['token_ms']) == 10 and all(len(r) == 16 for r in d['samples']['token_ms'])" "json: every token's time, 10 runs of 16"
json_check "$TMP/g.json" "d['tokens_per_s'] == 160 / sum(x for r in d['samples']['token_ms'] for x in r) * 1e3" "json: tokens/s is tokens / time, exactly"
json_check "$TMP/g.json" "d['prompt_tokens_per_s'] == 64 * 10 / sum(d['samples']['ttft_ms']) * 1e3" "json: prompt tokens/s the same way"
json_check "$TMP/g.json" "all(t == 2.5 for t in d['samples']['ttft_ms']) and d['cold_prefill_ms'] == 20 and d['cold_step_ms'] == 8 * (1 + 64 / 1024)" "json: TTFT 2.5 ms, the cold first prefill and step apart"
json_check "$TMP/g.json" "all(r[i] == 1 + (64 + i) / 1024 for r in d['samples']['token_ms'] for i in range(16))" "json: each step at its position"
json_check "$TMP/g.json" "all(q == t + sum(r[:15]) for q, t, r in zip(d['samples']['request_ms'], d['samples']['ttft_ms'], d['samples']['token_ms']))" "json: a request is TTFT + N - 1 tokens"
json_check "$TMP/g.json" "d['settings']['prompt_tokens'] == 64 and d['settings']['new_tokens'] == 16 and d['settings']['depth'] == 64 and d['settings']['fixed_length'] is True" "json: the settings stated"
json_check "$TMP/g.json" "d['workload']['arch'] == 'fake' and d['workload']['n_threads'] == 2 and d['workload']['options'] == {}" "json: the workload's settings"
expect_grep "^token,,9,15,79,1,1.0771484375,ms.?$" "$TMP/g.csv" "csv: the last token of the last run"
if [ "$(grep -c '' "$TMP/g.csv")" -eq 171 ]; then pass "csv: a header, 10 TTFT rows and 160 token rows"; else fail "csv rows: $(grep -c '' "$TMP/g.csv")"; fi
expect_grep "^\| per token \| 160 \|" "$TMP/g.md" "md: the per-token row"
expect_exit 0 "--html" -- "$IB" "${FAKE[@]}" --sequences 1,2 --html "$TMP/g.html"
expect_grep "<h2>Latency by token position</h2>" "$TMP/g.html" "html: latency by token position"
expect_grep "histogram of the timed tokens" "$TMP/g.html" "html: the per-token histogram"
expect_grep "tokens per second against sequences" "$TMP/g.html" "html: the curve over sequences"

# Energy (docs/energy.md, "For generation"): the fake's scripted counter,
# 1 ms steps at 300 W: 0.3 J a token exactly; --no-energy: none, said.
expect_exit 0 "energy on the fake's counter" -- "$IB" "${FAKE[@]}" --option energy_step_ms=100 --option idle_w=60 \
  --option busy_w=300 --option pos_ns=0 --json "$TMP/e.json"
json_check "$TMP/e.json" "(lambda e: e['source'] == 'counter' and e['aligned'] and abs(e['joules_per_item'] - 0.3) < 1e-12 and e['items'] == 200 and e['window_ms'] == 200)(d['decode_energy'])" "json: 0.3 J a token over 200 steps of 1 ms"
expect_grep "^energy per output token \(decode\): 0.3 J a token \(\+-0.5%\), 3.333 tokens/J" "$TMP/out" "text: the decode energy"
expect_exit 0 "--no-energy" -- "$IB" "${FAKE[@]}" --option energy_step_ms=100 --no-energy --json "$TMP/ne.json"
json_check "$TMP/ne.json" "d['decode_energy']['source'] is None and 'not measured' in d['decode_energy']['note'] and d['prefill_energy']['joules_per_request'] is None" "json: --no-energy: no figure, said"

expect_exit 0 "--depth 256" -- "$IB" "${FAKE[@]}" --depth 256 --json "$TMP/d.json"
json_check "$TMP/d.json" "d['settings']['depth'] == 256 and d['samples']['token_ms'][0][0] == 1.25 and d['samples']['ttft_ms'][0] == 2.5" "json: the depth recorded, steps timed there, the fill untimed"

expect_exit 0 "the sequence search under a KV capacity" -- \
  "$IB" "${FAKE[@]}" --search-sequences --ctx-per-seq 100 --option kv_tokens=3700 --sequence-runs 1 --json "$TMP/s.json"
expect_grep "search: the largest that fits is 37 sequences" "$TMP/out" "text: the search's answer"
json_check "$TMP/s.json" "d['sequences']['largest_fitting'] == 37 and [p['sequences'] for p in d['sequences']['points']] == [1, 2, 4, 8, 16, 32, 37]" "json: 37 sequences fit, the curve up to them"
json_check "$TMP/s.json" "[p['sequences'] for p in d['sequences']['probes']] == [1, 2, 4, 8, 16, 32, 64, 48, 40, 36, 38, 37]" "json: growth then bisection"
json_check "$TMP/s.json" "all(p['status'] == 'device out of memory' for p in d['sequences']['probes'] if not p['fits'])" "json: out of memory is the probes' answer"

expect_exit 0 "--pitfalls" -- "$IB" "${FAKE[@]}" --pitfalls --option threads_default=4 --option oversub_x=300 --json "$TMP/p.json"
json_check "$TMP/p.json" "[r['key'] for r in d['pitfalls']] == ['no_sync', 'prefill_in_rate', 'no_warmup', 'empty_context', 'mean_of_rates', 'one_run', 'eos', 'threads', 'back_to_back_prefill']" "json: every pitfall row"
json_check "$TMP/p.json" "(lambda r: r['error_pct'] == -50)(d['pitfalls'][0])" "json: no synchronize reads the host's half"
json_check "$TMP/p.json" "(lambda r: r['reports'] == (20 + 9 * 2.5) / 10 and r['correct'] == 2.5)(d['pitfalls'][2])" "json: no warm-up's mean TTFT"
json_check "$TMP/p.json" "(lambda r: r['applies'] and r['detail'] == 4)(d['pitfalls'][7])" "json: the default threads' row"
expect_grep "^default threads +per-token p50 ms" "$TMP/out" "text: the threads row"
expect_exit 0 "--pitfalls, a prefill after a step 0.5 ms slower" -- "$IB" "${FAKE[@]}" --pitfalls --option switch_us=500 --json "$TMP/p2.json"
json_check "$TMP/p2.json" "(lambda r: r['reports'] == 2.5 and r['correct'] == 3.0)(d['pitfalls'][8])" "json: prompts back to back read the prefill without the switch"
expect_grep "^prefills back to back +TTFT p50 ms +2.5 +3 +-16.7%" "$TMP/out" "text: the back-to-back row"

expect_exit 3 "a TPOT budget no count meets: exit 3, the result kept" -- \
  "$IB" "${FAKE[@]}" --sequences 1,4 --tpot-budget-ms 0.5 --json "$TMP/b.json"
json_check "$TMP/b.json" "d['sequences']['best_within_budget'] is None and len(d['sequences']['points']) == 2" "json: no best within the budget"
expect_exit 0 "a TPOT budget met" -- "$IB" "${FAKE[@]}" --sequences 1,4,16 --tpot-budget-ms 2 --json "$TMP/b2.json"
json_check "$TMP/b2.json" "d['sequences']['best_within_budget'] == 4 and d['sequences']['peak'] == 16" "json: the best within 2 ms, the peak"

expect_exit 1 "a failure while measuring: exit 1, the runs kept" -- \
  "$IB" "${FAKE[@]}" --option fail_at_call=121 --json "$TMP/f.json"
json_check "$TMP/f.json" "d['partial'] is True and d['runs'] == 4 and len(d['samples']['token_ms']) == 4" "json: partial, the 4 runs before the failure"

# compare: per-token 10% slower (step_us 1100), the TTFT the same.
expect_exit 0 "a slower candidate" -- "$IB" "${FAKE[@]}" --option step_us=1100 --json "$TMP/slow.json"
expect_exit 0 "compare two generation results" -- "$IB" compare "$TMP/g.json" "$TMP/slow.json" --json "$TMP/c.json"
expect_grep "^per token +median A 1.07 ms, B 1.17 ms: \+9.3[0-9]%.*: slower$" "$TMP/out" "text: per token slower, with its interval"
expect_grep "^TTFT +median A 2.5 ms, B 2.5 ms: \+0.00%.*: no change$" "$TMP/out" "text: TTFT unchanged"
json_check "$TMP/c.json" "d['schema'] == 'inferbench.generation-compare/1' and d['ttft']['verdict'] == 'no change' and d['token']['verdict'] == 'slower' and d['warnings'] == []" "json: the two verdicts"
expect_exit 3 "--fail-if-slower" -- "$IB" compare "$TMP/g.json" "$TMP/slow.json" --fail-if-slower
expect_exit 0 "a different depth is warned about" -- "$IB" compare "$TMP/g.json" "$TMP/d.json"
expect_grep "^warning: A and B decoded at different depths" "$TMP/out" "text: the depth differs"
expect_exit 0 "a latency result" -- "$IB" latency --backend fake --runs 10 --json "$TMP/lat.json"
expect_exit 2 "a generation result against a latency result" -- "$IB" compare "$TMP/g.json" "$TMP/lat.json"

# SIGINT: the runs measured are kept (each call also sleeps 1 ms of real
# time, so the program is still measuring 2 s in; 128 + 2 as the shells say).
"$IB" generate m --backend fake --prompt-tokens 64 --new-tokens 16 --runs 1000000 --warmup-runs 1 --warmup-ms 0 \
  --no-steady --quiet --option sleep_us=1000 --json "$TMP/int.json" >"$TMP/out" 2>"$TMP/err" &
pid=$!
sleep 2
kill -INT "$pid"
wait "$pid"
code=$?
if [ "$code" -eq 130 ]; then pass "SIGINT: exit 130"; else fail "SIGINT: exit $code: $(cat "$TMP/err")"; fi
json_check "$TMP/int.json" "d['partial'] is True and d['stop_reason'] == 'interrupted' and d['runs'] >= 1 and len(d['samples']['ttft_ms']) == d['runs']" "SIGINT: the runs measured written, marked partial"
expect_grep "^PARTIAL" "$TMP/out" "SIGINT: the text report says partial"

expect_exit 2 "more sequences than allowed" -- "$IB" "${FAKE[@]}" --sequences 1,300
expect_grep "300 sequences: a count is 1 to 256" "$TMP/err" "said in one line"
expect_exit 2 "a prompt longer than the context" -- "$IB" "${FAKE[@]}" --prompt-tokens 600 --ctx-per-seq 512
expect_grep "a prompt of 600 tokens is longer than the context of 512" "$TMP/err" "said in one line"
expect_exit 2 "depth + N beyond the context" -- "$IB" "${FAKE[@]}" --depth 100 --ctx-per-seq 110
expect_grep "depth 100 \+ 16 new tokens pass the context of 110" "$TMP/err" "said in one line"
expect_exit 2 "zero new tokens" -- "$IB" "${FAKE[@]}" --new-tokens 0
expect_exit 2 "negative prompt" -- "$IB" "${FAKE[@]}" --prompt-tokens -5
expect_exit 2 "a sequence list that is not numbers" -- "$IB" "${FAKE[@]}" --sequences 1,x
expect_exit 2 "a depth below the prompt" -- "$IB" "${FAKE[@]}" --depth 10
expect_exit 2 "no model" -- "$IB" generate --backend fake
expect_exit 2 "--shape does not apply" -- "$IB" "${FAKE[@]}" --shape x:1x2
expect_exit 2 "a forward-pass backend measures no generative model" -- "$IB" "${FAKE[@]}" --backend spin
expect_exit 2 "an unknown fake option" -- "$IB" "${FAKE[@]}" --option nope=1
expect_exit 2 "--max-sequences without the search" -- "$IB" "${FAKE[@]}" --max-sequences 8
expect_exit 2 "an unwritable --json fails before measuring" -- "$IB" "${FAKE[@]}" --json "$TMP/no/such/g.json"
expect_exit 0 "--help" -- "$IB" generate --help
expect_grep "[-]-prompt-tokens P" "$TMP/out" "help lists --prompt-tokens"
# A forward-pass model's options are not generate's: refused by the parser,
# and not in its help.
for o in "--shape x:1" "--input x=zeros" "--memory-cap-mb 5" "--cuda-graph"; do
  # shellcheck disable=SC2086
  expect_exit 2 "generate refuses $o" -- "$IB" generate m --backend fake $o
done
"$IB" generate --help >"$TMP/help" 2>&1
if grep -qE -- '--(shape|input|memory-cap-mb|cuda-graph|prefer-nhwc|cudnn-search) ' "$TMP/help"; then
  fail "generate --help lists a forward-pass model's option"
else
  pass "generate --help lists none of a forward-pass model's options"
fi
finish
