# inferbench serve of a generative model on llama.cpp's CPU build, on
# zoo:llama-tiny (docs/serve-generative.md): every request's prompt and
# output tokens generated, none dropped, the step trace accounting for
# every token; a trace file; every bad input one line, exit 2. Skipped (77)
# when set-up has not installed llama.cpp. No timing is asserted.
. "$(dirname "$0")/lib.sh"

need_llama
# One thread: the 2-core build host is shared, and llama.cpp's spinning
# threads make a step take 100x as long when it is.
TINY=(serve zoo:llama-tiny --device cpu --option threads=1 --quiet)

expect_exit 0 "Poisson arrivals, drawn lengths, json" -- \
  "$IB" "${TINY[@]}" --rate 50 --requests 16 --prompt-tokens 8..40 --new-tokens 2..9 --slots 3 --prefill-chunk 16 \
  --slo-ttft-ms 1000000 --slo-tpot-ms 1000000 --json "$TMP/s.json" --csv "$TMP/s.csv" --html "$TMP/s.html" \
  --steps-csv "$TMP/steps.csv"
json_check "$TMP/s.json" "d['schema'] == 'inferbench.serve_generative/1' and d['partial'] is False" "json: the schema, complete"
json_check "$TMP/s.json" "len(d['requests']) == 16 and d['figures']['completed'] == 16" "json: every request completed, none dropped"
json_check "$TMP/s.json" "all(r['generated_tokens'] == r['output_tokens'] and 8 <= r['prompt_tokens'] <= 40 and 2 <= r['output_tokens'] <= 9 for r in d['requests'])" "json: every request's output tokens, lengths in their ranges"
json_check "$TMP/s.json" "sum(s['prefill_tokens'] for s in d['steps']) == sum(r['prompt_tokens'] for r in d['requests'])" "json: every prompt token fed once, in the steps"
json_check "$TMP/s.json" "sum(s['decode_tokens'] for s in d['steps']) == sum(r['output_tokens'] - 1 for r in d['requests'])" "json: a decode token for every output token but the first"
json_check "$TMP/s.json" "all(s['prefill_tokens'] <= 16 and s['running'] <= 3 for s in d['steps'])" "json: the chunk and the slots bound every step"
json_check "$TMP/s.json" "all(r['scheduled_ms'] <= r['admitted_ms'] <= r['first_token_ms'] <= r['end_ms'] for r in d['requests'])" "json: scheduled, admitted, first token, end in order"
json_check "$TMP/s.json" "all(abs(r['ttft_ms'] - (r['first_token_ms'] - r['scheduled_ms'])) < 1e-9 for r in d['requests'])" "json: TTFT from the scheduled arrival"
json_check "$TMP/s.json" "d['figures']['itl_ms']['n'] == sum(r['output_tokens'] - 1 for r in d['requests'])" "json: every inter-token gap"
json_check "$TMP/s.json" "d['figures']['good_requests'] == 16 and d['figures']['good_share'] == 1" "json: goodput at targets every request meets"
json_check "$TMP/s.json" "d['info']['arch'] == 'llama' and d['info']['n_seq_max'] == 3 and d['settings']['slots'] == 3" "json: the slots are the context's sequences"
expect_grep "^inferbench serve: zoo:llama-tiny " "$TMP/out" "text: the model served"
expect_grep "^16 of 16 requests completed" "$TMP/out" "text: every request completed"
json_check "$TMP/s.json" "d['tail']['gaps'] == d['figures']['itl_ms']['n'] and d['tail']['kv_cells_max'] <= d['tail']['kv_capacity_cells'] == 3 * d['settings']['ctx_per_slot']" "json: the tail's gaps are every gap, the cells within the slots'"
if [ "$(grep -c '' "$TMP/s.csv")" = 17 ] && [ "$(grep -c '' "$TMP/steps.csv")" = "$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['steps']) + 1)" "$TMP/s.json")" ]; then
  pass "csv: a row per request, --steps-csv a row per step"
else
  fail "csv: $(grep -c '' "$TMP/s.csv") request lines, $(grep -c '' "$TMP/steps.csv") step lines"
fi
html_check "$TMP/s.html" "count('svg') == 6 and 'zoo:llama-tiny' in s and '<script' not in s.lower()" "html: the distributions and the step timeline of a real run"

printf '# arrival prompt output\n0 12 3\n0 30 1\n5.5 9 6\n' >"$TMP/trace.txt"
expect_exit 0 "a trace" -- "$IB" "${TINY[@]}" --arrivals "$TMP/trace.txt" --json "$TMP/t.json"
expect_grep "^slots [0-9]+ \((the KV cache's capacity|the most the default takes)" "$TMP/out" "text: the default slots, and why"
json_check "$TMP/t.json" "d['settings']['slots_from'] in ('kv_capacity', 'capped') and d['info']['n_seq_max'] == d['settings']['slots'] and d['environment']['host_cpu'] is not None" "json: the default slots are the context's sequences; the machine stated"
json_check "$TMP/t.json" "[(r['scheduled_ms'], r['prompt_tokens'], r['output_tokens'], r['generated_tokens']) for r in d['requests']] == [(0, 12, 3, 3), (0, 30, 1, 1), (5.5, 9, 6, 6)]" "json: the trace's requests, the schedule saved"
printf 'TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,20,4\n2023-11-16 18:15:46.7,10,2\n' >"$TMP/azure.csv"
expect_exit 0 "the Azure trace's CSV" -- "$IB" "${TINY[@]}" --arrivals "$TMP/azure.csv" --json "$TMP/a.json"
json_check "$TMP/a.json" "abs(d['requests'][1]['scheduled_ms'] - 19.41) < 1e-6 and d['figures']['completed'] == 2" "json: arrivals from the first row's time"

# The prefix cache on llama.cpp: one slot, prompts of 20 tokens whose
# first 16 are shared; the second and third keep the 16 cells the slot
# holds (the first's sequence trimmed, not removed) and prefill only 4.
printf '0 20 3\n50 20 3\n100 20 3\n' >"$TMP/spaced.txt"
expect_exit 0 "a shared prefix, the prefix cache on" -- "$IB" "${TINY[@]}" --arrivals "$TMP/spaced.txt" --slots 1 \
  --warmup-requests 0 --shared-prefix 16 --json "$TMP/p.json"
json_check "$TMP/p.json" "[r['cached_tokens'] for r in d['requests']] == [0, 16, 16] and d['figures']['cached_tokens'] == 32" "json: the cells each request reused"
json_check "$TMP/p.json" "sum(s['prefill_tokens'] for s in d['steps']) == 20 + 4 + 4 and all(r['generated_tokens'] == 3 for r in d['requests'])" "json: only the prompts' rest prefilled, every token generated"
json_check "$TMP/p.json" "d['settings']['shared_prefix'] == 16 and d['settings']['prefix_cache'] is True" "json: the experiment stated"
expect_grep "^prompts: the first 16 tokens alike in every prompt \(a prefix-cache experiment\), prefix cache on: 32 prompt tokens reused" "$TMP/out" "text: the experiment and the cells reused"
expect_exit 0 "the same, the prefix cache off" -- "$IB" "${TINY[@]}" --arrivals "$TMP/spaced.txt" --slots 1 \
  --warmup-requests 0 --shared-prefix 16 --prefix-cache off --json "$TMP/p0.json"
json_check "$TMP/p0.json" "d['figures']['cached_tokens'] == 0 and sum(s['prefill_tokens'] for s in d['steps']) == 60" "json: the cache off, every prompt prefilled whole"

# --sampling greedy: every token picked from its logits on the host; every request's tokens still.
expect_exit 0 "--sampling greedy" -- "$IB" "${TINY[@]}" --rate 50 --requests 8 --prompt-tokens 8..40 --new-tokens 2..9 \
  --slots 3 --prefill-chunk 16 --sampling greedy --json "$TMP/g.json"
json_check "$TMP/g.json" "d['settings']['sampling'] == 'greedy' and d['figures']['completed'] == 8 and all(r['generated_tokens'] == r['output_tokens'] for r in d['requests'])" "json: greedy, every request's tokens"

# --pitfalls: every row on the real runtime, measured or said why not.
expect_exit 0 "--pitfalls" -- "$IB" "${TINY[@]}" --rate 100 --requests 8 --prompt-tokens 16 --new-tokens 4 --slots 2 \
  --warmup-requests 1 --pitfalls --json "$TMP/pf.json"
json_check "$TMP/pf.json" "[p['key'] for p in d['pitfalls']] == ['ttft_from_admission', 'all_at_time_zero', 'no_warmup', 'mean_of_request_tpot', 'repeated_prompt', 'decode_only_tpot']" "json: every pitfall row"
json_check "$TMP/pf.json" "all(p['applies'] and p['status'] == 'ok' and p['reports'] > 0 and p['correct'] > 0 and p['verdict'] for p in d['pitfalls'])" "json: every row measured, read"
for name in "TTFT from admission" "every request at time 0" "no warm-up" "mean of per-request TPOT" "a prompt repeated" "decode-only TPOT"; do
  expect_grep "^$name  " "$TMP/out" "text: the row $name"
done

# Bad inputs: one line, exit 2, before anything is measured.
expect_exit 2 "a shared prefix above the shortest prompt" -- "$IB" "${TINY[@]}" --rate 5 --prompt-tokens 8..40 --shared-prefix 9
expect_grep "a shared prefix of 9 tokens passes request [0-9]*'s prompt of 8" "$TMP/err" "the request named"
expect_exit 2 "a negative shared prefix" -- "$IB" "${TINY[@]}" --rate 5 --shared-prefix -1
expect_exit 2 "--pitfalls with --rates" -- "$IB" "${TINY[@]}" --rates 5,10 --pitfalls
expect_grep "pitfalls measures one run" "$TMP/err" "the reason said"
expect_exit 2 "--prefix-cache neither on nor off" -- "$IB" "${TINY[@]}" --rate 5 --prefix-cache yes
expect_exit 2 "--shared-prefix for a forward-pass model" -- "$IB" serve zoo:mlp --rate 5 --shared-prefix 4
printf '10 5 5\n5 5 5\n' >"$TMP/unsorted.txt"
printf '0 -5 5\n' >"$TMP/negative.txt"
printf '0 five 5\n' >"$TMP/word.txt"
: >"$TMP/empty.txt"
for f in unsorted negative word empty; do
  expect_exit 2 "a trace: $f" -- "$IB" "${TINY[@]}" --arrivals "$TMP/$f.txt"
done
expect_exit 2 "burstiness 0" -- "$IB" "${TINY[@]}" --rate 5 --burstiness 0
expect_exit 2 "burstiness below 0" -- "$IB" "${TINY[@]}" --rate 5 --burstiness -1
expect_exit 2 "a target of 0" -- "$IB" "${TINY[@]}" --rate 5 --slo-ttft-ms 0
expect_exit 2 "no rate" -- "$IB" "${TINY[@]}"
expect_exit 2 "prompt + output over the context per slot" -- \
  "$IB" "${TINY[@]}" --rate 5 --prompt-tokens 100 --new-tokens 30 --ctx-per-seq 128
expect_grep "request 1: a prompt of 100 tokens \+ 30 output tokens pass the context of a slot \(128\)" "$TMP/err" "the request and the context named"
expect_exit 2 "more slots than the KV cache holds (out of memory creating the context)" -- \
  "$IB" "${TINY[@]}" --rate 5 --slots 64 --prompt-tokens 200 --new-tokens 50 --option memory_limit_mb=8
expect_grep "do not fit" "$TMP/err" "out of memory said"
expect_exit 2 "a forward-pass option" -- "$IB" "${TINY[@]}" --rate 5 --max-batch 4
expect_exit 2 "a range given to generate" -- "$IB" generate zoo:llama-tiny --device cpu --prompt-tokens 8..16
# The curve and the search on llama.cpp: one context for every rate, every
# request of every rate generated, none left in the cache (the counts;
# no timing asserted). The search's targets are generous: it stops at the
# first rate that met them while saturated, or bisects.
expect_exit 0 "the curve over two rates" -- "$IB" "${TINY[@]}" --rates 20,40 --requests 6 --prompt-tokens 8 \
  --new-tokens 3 --slots 2 --json "$TMP/curve.json"
json_check "$TMP/curve.json" "d['schema'] == 'inferbench.serve_generative_rates/1' and [p['completed'] for p in d['points']] == [6, 6] and all(0 < p['kv_max_share'] <= 1 for p in d['points'])" "curve: every request of both rates, the KV occupancy a share"
json_check "$TMP/curve.json" "d['at']['info']['n_seq_max'] == 2 and sum(s['decode_tokens'] for s in d['at']['steps']) == 6 * 2" "curve: the run at the knee (or the last rate) accounts for every token"
expect_exit 0 "the SLO search" -- "$IB" "${TINY[@]}" --requests 6 --prompt-tokens 8 --new-tokens 3 --slots 2 \
  --slo-ttft-ms 100000 --slo-tpot-ms 100000 --slo-percentile 50 --confidence 0.5 --json "$TMP/search.json"
json_check "$TMP/search.json" "d['search']['rate_found'] > 0 and all(p['met'] for p in d['points']) and d['search']['requests_served'] == 6 * len(d['points'])" "search: every rate met in full, the answer found"
finish
