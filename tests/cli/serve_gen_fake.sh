# inferbench serve of a generative model on the scripted generation fake
# (--backend fake, a model name ending .gguf; docs/serve-generative.md):
# the figures the fake's virtual clock makes exact, SIGINT keeping what was
# served (partial, exit 130 as every measurement's), bad inputs one line,
# exit 2, and a forward-pass model's options refused.
. "$(dirname "$0")/lib.sh"

FAKE=(serve m.gguf --backend fake --option cold_calls=0 --option batch_us=1000 --option batch_decode_us=500
      --option batch_prefill_ns=100000 --quiet)

# The unit test's three requests (test_gen_serve.c, test_engine_by_hand):
# R2 waits 6 ms for a slot, its TTFT 8 ms from its scheduled arrival.
printf '0 10 3\n0 20 2\n1 5 2\n' >"$TMP/three.txt"
expect_exit 0 "a trace on the fake" -- "$IB" "${FAKE[@]}" --arrivals "$TMP/three.txt" --slots 2 --prefill-chunk 10 \
  --warmup-requests 0 --slo-ttft-ms 7.5 --slo-tpot-ms 2.5 --json "$TMP/t.json"
json_check "$TMP/t.json" "[r['ttft_ms'] for r in d['requests']] == [2, 7, 8] and [r['queue_ms'] for r in d['requests']] == [0, 0, 6]" "json: TTFT and the wait for a slot, from the schedule"
json_check "$TMP/t.json" "[s['end_ms'] - s['start_ms'] for s in d['steps']] == [2, 2.5, 2.5, 2, 1.5] and [s['waiting'] for s in d['steps']] == [0, 1, 1, 0, 0]" "json: every step's time and the requests waiting"
json_check "$TMP/t.json" "d['figures']['good_requests'] == 2 and abs(d['figures']['goodput_rate'] - 2000 / 10.5) < 1e-9" "json: goodput"
expect_grep "^goodput within TTFT <= 7.5 ms, TPOT <= 2.5 ms: 190.5 requests/s, 2 of 3 completed requests \(66.67%\)$" "$TMP/out" "text: goodput and its targets"
expect_grep "^decode steps: median 2.5 ms with a prompt chunk, 1.5 ms without$" "$TMP/out" "text: a chunk's share of the decode steps"
# Why the tail is what it is (test_gen_serve.c, test_tail_by_hand): the
# two gaps of the ITL tail both from steps with a prompt chunk, 3 of all 4.
expect_grep "^ITL tail: of the 2 gaps at or above the p99 \(2.5 ms\), 2 \(100%\) came from a step that carried a prompt chunk, against 3 of all 4 gaps \(75%\)$" "$TMP/out" "text: the ITL tail's share from steps with a chunk"
expect_grep "^TTFT = wait for a slot \+ prefill: p50 0 us \+ 2 ms, p99 5.88 ms \+ 6.9 ms; the wait is 35.3% of all TTFT, 75% of the 1 at or above its p99 \(7.98 ms\)$" "$TMP/out" "text: TTFT's wait against its prefill"
json_check "$TMP/t.json" "d['tail']['tail_gaps_chunked'] == 2 and d['tail']['gaps_chunked'] == 3 and d['tail']['kv_cells_max'] == 32 and d['tail']['kv_capacity_cells'] == 44" "json: the tail's summary"

# Every format (docs/serve-generative.md, "Reports"): a CSV row per
# request, Markdown, an HTML page that parses, with its plots.
expect_exit 0 "csv, md and html" -- "$IB" "${FAKE[@]}" --arrivals "$TMP/three.txt" --slots 2 --prefill-chunk 10 \
  --warmup-requests 0 --csv "$TMP/t.csv" --md "$TMP/t.md" --html "$TMP/t.html" --steps-csv "$TMP/steps.csv"
expect_grep "^m.gguf,2,22,10,2,1,5,2,7,9,10.5,0,2,6,2,8,1.5,9.5,true,false" "$TMP/t.csv" "csv: R2's row: its wait of 6 ms, TTFT 8"
if [ "$(wc -l <"$TMP/t.csv")" = 4 ]; then pass "csv: a header and a row per request"; else fail "csv: $(wc -l <"$TMP/t.csv") lines"; fi
expect_grep "^m.gguf,2,22,10,4,9,10.5,1,0,1,0,6" "$TMP/steps.csv" "steps csv: the last step's row"
expect_grep "^| TTFT | 3 | 2 ms | 7 ms |" "$TMP/t.md" "md: the figures' table"
expect_grep "^- KV cache: 20.33 cells held on average" "$TMP/t.md" "md: why the tail"
html_check "$TMP/t.html" "count('svg') == 6 and count('polyline', 'sync-line') == 2 and count('polyline', 'b2b-line') == 3" "html: three histograms and the step timeline"
html_check "$TMP/t.html" "'<script' not in s.lower() and 'http' not in s and s.rstrip().endswith('</html>') and 'ITL tail' in s" "html: a whole page, no script, why the tail"
expect_exit 2 "--steps-csv for a forward-pass model" -- "$IB" serve m.onnx --backend fake --rate 5 --steps-csv "$TMP/x.csv"

# SIGINT mid-run: every step sleeps 20 ms of real time; the run has
# thousands, so a signal after a second lands in it.
"$IB" "${FAKE[@]}" --option sleep_us=20000 --rate 1000 --requests 200 --new-tokens 50 --prompt-tokens 16 \
  --warmup-requests 0 --json "$TMP/int.json" >"$TMP/int.out" 2>"$TMP/int.err" </dev/null &
pid=$!
sleep 1
kill -INT "$pid"
wait "$pid"
got=$?
if [ "$got" -eq 130 ]; then pass "SIGINT: exit 130"; else fail "SIGINT: exit $got, expected 130"; fi
expect_grep "PARTIAL" "$TMP/int.out" "SIGINT: the report printed, marked partial"
json_check "$TMP/int.json" "d['partial'] is True and d['stop_reason'] == 'interrupted' and len(d['requests']) == 200 and 0 < len(d['steps'])" "SIGINT: json partial, the schedule and the steps kept"
json_check "$TMP/int.json" "d['figures']['completed'] < 200 and d['figures']['completed'] == sum(r['generated_tokens'] == 50 for r in d['requests']) == (d['figures']['ttft_ms'] or {'n': 0})['n']" "SIGINT: the figures of the requests completed, the others not counted"

# The SLO search and the curve on one slot of 8 ms a request (a prompt
# step of 2 ms, 4 decode steps of 1.5): 125 requests/s exactly
# (test_gen_serve_rates.c works it out). The search starts at the rate the
# warm-up served (its 2 requests back to back: 125), fails at 250, then
# bisects the grid of 4.73% steps (the upper of two middles) down to
# 130.9.
ONE=(--slots 1 --prompt-tokens 10 --new-tokens 5 --arrivals constant --requests 50 --warmup-requests 2
     --slo-ttft-ms 3 --slo-tpot-ms 2 --slo-percentile 90 --confidence 0.9)
expect_exit 0 "the SLO search" -- "$IB" "${FAKE[@]}" "${ONE[@]}" --json "$TMP/search.json"
expect_grep "^answer: 125 requests/s meets TTFT p90 <= 3 ms and TPOT p90 <= 2 ms; 130.9 requests/s failed$" "$TMP/out" "search: the rate found, the last failing one"
expect_grep "^search cost: 68 requests served over 6 rates, against 800 for a sweep of the same grid \(16 rates x 50 requests\): 8.5%$" "$TMP/out" "search: its requests against the sweep's"
expect_grep "^at 125 requests/s: goodput 125 requests/s \(100%\), 625 output tokens/s, energy - J/token$" "$TMP/out" "search: the figures at the rate found"
expect_grep "^J/token -: no figure \(at 125 requests/s: .*no energy counter" "$TMP/out" "search: no energy figure without a counter, and why"
json_check "$TMP/search.json" "d['schema'] == 'inferbench.serve_generative_rates/1' and d['search']['rate_found'] == 125 and d['search']['requests_served'] == 68 and [p['admitted'] for p in d['points']] == [50, 3, 3, 3, 4, 5] and d['at']['settings']['rate'] == 125" "json: the search's rates, the run at the answer"
expect_exit 0 "the curve" -- "$IB" "${FAKE[@]}" "${ONE[@]}" --rates 50,100,125,200,250 --json "$TMP/curve.json"
expect_grep "^saturation: 200 requests/s \(its completions kept 62% of the arrivals' pace, below 95%, and its last quarter's TTFT was 7.16x its first's, past 2x: the queue grows\)$" "$TMP/out" "curve: the saturation point"
expect_grep "^knee: 125 requests/s " "$TMP/out" "curve: the knee"
json_check "$TMP/curve.json" "[p['met'] for p in d['points']] == [True, True, True, False, False] and d['points'][0]['kv_max_share'] == 14 / 15 and d['curve']['knee_rate'] == 125" "json: the curve's verdicts and KV occupancy"
# Fewer requests a rate than the bound needs (p90 at 90%: 0.9^n <= 0.1
# from 22 requests): every rate "too few to judge", said, not "failed".
expect_exit 0 "the curve of too few requests a rate" -- "$IB" "${FAKE[@]}" "${ONE[@]}" --requests 20 --rates 50,250 --json "$TMP/few.json"
expect_grep "^ +50 +51.55 .* too few to judge$" "$TMP/out" "curve: a rate of too few requests not judged"
expect_grep "^too few to judge: 20 requests a rate cannot meet the targets' percentile by the bound even with none over \(22 at least: --requests\)$" "$TMP/out" "curve: why, and how many it needs"
json_check "$TMP/few.json" "d['fewest_to_meet'] == 22 and [(p['met'], p['too_few']) for p in d['points']] == [(False, True), (False, True)]" "json: too_few, fewest_to_meet"
expect_exit 0 "the curve of just enough requests a rate" -- "$IB" "${FAKE[@]}" "${ONE[@]}" --requests 22 --rates 50 --json "$TMP/enough.json"
json_check "$TMP/enough.json" "d['fewest_to_meet'] == 22 and [(p['met'], p['too_few']) for p in d['points']] == [(True, False)]" "json: 22 requests a rate judged, and met"
json_check "$TMP/curve.json" "d['fewest_to_meet'] == 22 and not any(p['too_few'] for p in d['points'])" "json: 50 requests a rate judged"
# The energy per output token at each rate on the scripted counter (idle
# 50 W, busy 150 W): the slot busy 8 ms of every request, up to all the
# time from 125 requests/s: (50 + 100 min(1, rate x 8 ms)) W over
# min(rate, 125) requests of 5 tokens a second, within each figure's bound;
# the run at the knee's the same figure as its rate's.
EN=(--option energy_step_ms=10 --option idle_w=50 --option busy_w=150)
expect_exit 0 "the curve with energy" -- "$IB" "${FAKE[@]}" "${ONE[@]}" "${EN[@]}" --rates 50,100,125,200,250 \
  --json "$TMP/curve_e.json" --csv "$TMP/curve_e.csv" --md "$TMP/curve_e.md" --html "$TMP/curve_e.html"
json_check "$TMP/curve_e.json" "all(p['energy']['source'] == 'counter' and abs(p['energy']['joules_per_item'] - (50 + 100 * min(1, p['offered_rate'] * 0.008)) / min(p['offered_rate'], 125) / 5) <= p['energy']['bound'] * p['energy']['joules_per_item'] for p in d['points']) and d['points'][4]['energy']['joules_per_item'] == 0.24 and d['points'][2]['energy'] == {k: v for k, v in d['at']['energy'].items() if k != 'joules_per_request'}" "json: the energy per output token at each rate"
expect_grep "^      125       125 .* 0.24 \+-2.5% met$" "$TMP/out" "text: a rate's energy per output token and its bound"
expect_grep "^curve,125,125,.*,0.24,4.16.*,knee,true" "$TMP/curve_e.csv" "csv: a row per rate, its energy, the knee's the run kept"
expect_grep "^\| 200 \| 125 \| .* \| 0.24 \+-2.5% \| failed \(49 TTFT and 0 TPOT over\), saturation \|$" "$TMP/curve_e.md" "md: the rates' table"
# The search on the counter: the answer's figure; the rates ended early
# have none, and say why.
expect_exit 0 "the search with energy" -- "$IB" "${FAKE[@]}" "${ONE[@]}" "${EN[@]}"
expect_grep "^at 125 requests/s: goodput 125 requests/s \(100%\), 625 output tokens/s, energy 0.24 \+-2.5% J/token$" "$TMP/out" "search: the answer's energy per output token"
expect_grep "^J/token -: no figure \(at 250 requests/s: the run did not run to the end: no energy figure\)$" "$TMP/out" "search: a rate ended early has no energy figure, and says why"
html_check "$TMP/curve_e.html" "s.count('<svg') == 9 and 'The curve over 5 rates' in s and 'knee 125/s' in s and 'saturation 200/s' in s" "html: the rates' table and charts, knee and saturation marked"
expect_exit 3 "a search no rate meets" -- "$IB" "${FAKE[@]}" "${ONE[@]}" --slo-ttft-ms 1
expect_grep "^answer: no rate met TTFT p90 <= 1 ms and TPOT p90 <= 2 ms$" "$TMP/out" "search: no rate met, said"

# SIGINT mid-search: the rates measured kept, partial, exit 130.
"$IB" "${FAKE[@]}" --option sleep_us=20000 --requests 200 --new-tokens 50 --prompt-tokens 16 --warmup-requests 1 \
  --slo-ttft-ms 1000 --slo-tpot-ms 1000 --slo-percentile 90 --json "$TMP/sint.json" >"$TMP/sint.out" \
  2>"$TMP/sint.err" </dev/null &
pid=$!
sleep 3
kill -INT "$pid"
wait "$pid"
got=$?
if [ "$got" -eq 130 ]; then pass "SIGINT in a search: exit 130"; else fail "SIGINT in a search: exit $got, expected 130"; fi
expect_grep "PARTIAL: stopped early \(interrupted\); the rates above are what was measured" "$TMP/sint.out" "SIGINT in a search: the rates printed, partial"
json_check "$TMP/sint.json" "d['partial'] is True and len(d['points']) >= 1 and d['points'][-1]['partial'] is True" "SIGINT in a search: json partial"

# Bad inputs, refused before anything runs.
expect_exit 2 "a search's target of 0 and none else" -- "$IB" "${FAKE[@]}" --slo-ttft-ms 0
expect_exit 2 "a search's target below 0" -- "$IB" "${FAKE[@]}" --slo-ttft-ms -5 --slo-tpot-ms 30
expect_exit 2 "rates of junk" -- "$IB" "${FAKE[@]}" --rates 5,x
expect_exit 2 "a rate of 0 in a list" -- "$IB" "${FAKE[@]}" --rates 5,0
expect_exit 2 "an empty rate in a list" -- "$IB" "${FAKE[@]}" --rates 5,,6
expect_exit 2 "a percentile of 100" -- "$IB" "${FAKE[@]}" --slo-ttft-ms 500 --slo-percentile 100
expect_exit 2 "a percentile of 0" -- "$IB" "${FAKE[@]}" --slo-ttft-ms 500 --slo-percentile 0
expect_exit 2 "a percentile without targets" -- "$IB" "${FAKE[@]}" --rates 5 --slo-percentile 99
expect_exit 2 "a percentile with one rate" -- "$IB" "${FAKE[@]}" --rate 5 --slo-ttft-ms 500 --slo-percentile 99
expect_exit 2 "too few requests to ever meet p99" -- "$IB" "${FAKE[@]}" --slo-ttft-ms 500 --requests 100
expect_grep "100 requests a rate can never meet a p99 target at confidence 99%: 459 at least" "$TMP/err" "too few requests: the fewest said"
expect_exit 2 "rates and a trace" -- "$IB" "${FAKE[@]}" --arrivals "$TMP/three.txt" --rates 5,10
expect_exit 2 "burstiness 0" -- "$IB" "${FAKE[@]}" --rate 5 --burstiness 0
expect_exit 2 "burstiness with constant arrivals" -- "$IB" "${FAKE[@]}" --rate 5 --arrivals constant --burstiness 2
expect_exit 2 "a target below 0" -- "$IB" "${FAKE[@]}" --rate 5 --slo-tpot-ms -1
expect_exit 2 "no rate" -- "$IB" "${FAKE[@]}"
expect_exit 2 "a trace and a rate" -- "$IB" "${FAKE[@]}" --arrivals "$TMP/three.txt" --rate 5
expect_exit 2 "a trace and lengths" -- "$IB" "${FAKE[@]}" --arrivals "$TMP/three.txt" --new-tokens 5
expect_exit 2 "a backwards range" -- "$IB" "${FAKE[@]}" --rate 5 --prompt-tokens 64..32
expect_exit 2 "a range of junk" -- "$IB" "${FAKE[@]}" --rate 5 --new-tokens 1..x
expect_exit 2 "a missing trace" -- "$IB" "${FAKE[@]}" --arrivals "$TMP/none.txt"
expect_exit 2 "the slots' cache over the fake's capacity" -- "$IB" "${FAKE[@]}" --rate 5 --slots 16 --option kv_tokens=1000
expect_exit 2 "a forward-pass option" -- "$IB" "${FAKE[@]}" --rate 5 --concurrency 2
expect_exit 2 "a forward-pass model's percentile still needs its target" -- "$IB" serve m.onnx --backend fake --rate 5 --slo-percentile 0.9
expect_exit 2 "an engine option for a forward-pass model" -- "$IB" serve m.onnx --backend fake --rate 5 --slots 4
expect_grep "serve --slots is for a generative model" "$TMP/err" "the forward-pass model named"
# --sampling greedy: 0.3 ms a sample (sample_us), within each step (test_gen_serve.c, test_sampling_greedy).
expect_exit 0 "--sampling greedy" -- "$IB" "${FAKE[@]}" --option sample_us=300 --sampling greedy --arrivals "$TMP/three.txt" \
  --slots 2 --prefill-chunk 10 --warmup-requests 0 --json "$TMP/g.json"
json_check "$TMP/g.json" "d['settings']['sampling'] == 'greedy' and [round(s['end_ms'], 9) for s in d['steps']] == [2.3, 5.1, 8.2, 10.8, 12.6]" "json: every step longer by its samples, said"
expect_grep "each token a greedy sample of its logits on the host, within its step \(--sampling greedy\), a fixed output length$" "$TMP/out" "text: the engine's line says it"
json_check "$TMP/t.json" "d['settings']['sampling'] == 'none'" "json: none by default"
expect_exit 2 "--sampling greedy on a fake that cannot sample" -- "$IB" "${FAKE[@]}" --sampling greedy --arrivals "$TMP/three.txt"
expect_grep "cannot sample: --sampling greedy needs it" "$TMP/err" "the reason said"
expect_exit 2 "--sampling of another kind" -- "$IB" "${FAKE[@]}" --sampling top_k --arrivals "$TMP/three.txt"
expect_exit 2 "--sampling for a forward-pass model" -- "$IB" serve m.onnx --backend fake --rate 5 --sampling greedy
finish
