# inferbench serve --best on the scripted generation fake (its virtual
# clock: every step of the engine 1 ms, batch_us 1000, its tokens free;
# docs/best.md, "Serving: the engine's settings raced"). Sixteen requests
# at 0 ms, each a prompt of 4 tokens and 2 output tokens, targets TTFT <= 2
# ms and TPOT <= 1 ms: 4 slots serve them in 4 rounds of 2 steps (TTFT 1,
# 3, 5, 7: 4 within, over 8 ms: 500/s), 8 slots in 2 (8 within, 4 ms:
# 2000/s), 16 in one (16 within, 2 ms: 8000/s): 16 slots win by
# construction. The chunks 256 and 512 run as what the slots' prompts hold
# (16, 32, 64 tokens): the 512 rows merged. A bound of 3 ms a step leaves
# the third screening unmeasured, and the finals' (the 4 slots' final
# takes 8 ms) the second's: partial, exit 1, its winner the best of those
# measured, not the best. Every format (CSV, Markdown, HTML) a row per
# candidate, the winner marked. Bad inputs: one line, exit 2.
. "$(dirname "$0")/lib.sh"

FAKE=(serve m.gguf --backend fake --option cold_calls=0 --option batch_us=1000 --option batch_decode_us=0
      --option batch_prefill_ns=0 --warmup-requests 0 --quiet)
for i in $(seq 16); do echo "0 4 2"; done >"$TMP/sixteen.txt"

expect_exit 0 "the race of the engine's settings" -- "$IB" "${FAKE[@]}" --best --arrivals "$TMP/sixteen.txt" \
  --slo-ttft-ms 2 --slo-tpot-ms 1 --json "$TMP/a.json" --csv "$TMP/a.csv" --md "$TMP/a.md" --html "$TMP/a.html"
json_check "$TMP/a.json" "d['schema'] == 'inferbench.best_serve/1' and d['winner'] == 'slots 16, chunk 64' and not d['partial']" "json: 16 slots win"
json_check "$TMP/a.json" "[(c['label'], c['stage'], c['goodput_rate'], c['good_requests']) for c in d['candidates'] if c['stage'] != 'merged'] == [('slots 4, chunk 16', 'finalist', 500, 4), ('slots 8, chunk 32', 'finalist', 2000, 8), ('slots 16, chunk 64', 'winner', 8000, 16)]" "json: each final's goodput, by hand"
json_check "$TMP/a.json" "[(c['asked'], c['same_as']) for c in d['candidates']] == [('slots 4, chunk 256', None), (None, 0), ('slots 8, chunk 256', None), (None, 2), ('slots 16, chunk 256', None), (None, 4)]" "json: the chunks as run, the 512 rows merged"
json_check "$TMP/a.json" "d['search']['screen_requests'] == 4 and d['search']['final_requests'] == 16 and d['search']['merged'] == 3 and all(c['figures_from'] == 'final' for c in d['candidates'] if c['stage'] != 'merged')" "json: screened on 4 requests, the figures the finals'"
json_check "$TMP/a.json" "d['winner_serve']['settings']['slots'] == 16 and d['winner_serve']['figures']['good_requests'] == 16 and len(d['winner_serve']['requests']) == 16" "json: the winner's serving document"
expect_grep "^  5  slots 16, chunk 64 +8000 +100 +1 +1 +1 +16000 +16/16  WINNER$" "$TMP/out" "text: the winner's row"
expect_grep "^  1  finals: goodput -93.8% against the winner \(500 against 8000 requests/s; 4 against 16 requests within the targets\)$" "$TMP/out" "text: why the 4 slots lost"
expect_grep "^best: slots 16, chunk 64: goodput 8000 requests/s \(16 of 16 requests within the targets, 100.0%\)" "$TMP/out" "text: the winner"
expect_grep "^the winner's serving measurement \(slots 16, chunk 64\):$" "$TMP/out" "text: the winner's serve report follows"
expect_grep "^best: .*, 16000 output tokens/s \(its final's figures\)$" "$TMP/out" "text: the winner's tokens/s in whole tokens"
# The other formats: a row per candidate, the same figures, the winner marked.
expect_grep "^model,configuration,slots,prefill_chunk,stage,winner,figures_from,requests,completed,good_requests,goodput_rate,good_share,ttft_p99_ms,tpot_p50_ms,tpot_p99_ms,e2e_p99_ms,output_tokens_per_s,why,asked,same_as"$'\r'"$" "$TMP/a.csv" "csv: the header"
expect_grep "^m.gguf,\"slots 4, chunk 16\",4,16,finalist,false,final,16,16,4,500,0.25,7,1,1,8,4000,finals: goodput -93.8% against the winner \(500 against 8000 requests/s; 4 against 16 requests within the targets\),\"slots 4, chunk 256\","$'\r'"$" "$TMP/a.csv" "csv: a finalist's row, by hand"
expect_grep "^m.gguf,\"slots 16, chunk 64\",16,64,winner,true,final,16,16,16,8000,1,1,1,1,2,16000,,\"slots 16, chunk 256\","$'\r'"$" "$TMP/a.csv" "csv: the winner's row, marked"
expect_grep "^m.gguf,\"slots 16, chunk 512\",16,64,merged,false,none,0,0,0,,,,,,,,\"runs as #5 \(slots 16, chunk 64\): the same settings in effect, raced once\",,5"$'\r'"$" "$TMP/a.csv" "csv: a merged row, no figures"
[ "$(wc -l <"$TMP/a.csv")" = 7 ] && pass "csv: a row per candidate" || fail "csv: $(wc -l <"$TMP/a.csv") lines, not 7"
expect_grep "^\| slots 16, chunk 64 \| 8000 \| 100 \| 1 \| 1 \| 1 \| 16000 \| 16/16 \| WINNER \| ran as this, asked: slots 16, chunk 256 \|$" "$TMP/a.md" "md: the winner's row"
expect_grep "^### The winner's serving measurement: slots 16, chunk 64$" "$TMP/a.md" "md: the winner's serving report follows"
expect_grep "^\*\*inferbench serve\*\* \(a generative model under load\): m.gguf, cpu$" "$TMP/a.md" "md: in serve's own Markdown"
expect_grep "^<tr class=\"win\"><td>slots 16, chunk 64</td><td class=n>8000</td>" "$TMP/a.html" "html: the winner's row marked"
expect_grep "^best: slots 16, chunk 64: goodput 8000 requests/s" "$TMP/a.html" "html: the text report inside"

expect_exit 1 "--step-max-ms 3: the third screening and the second final not measured" -- "$IB" "${FAKE[@]}" --best \
  --arrivals "$TMP/sixteen.txt" --slo-ttft-ms 2 --step-max-ms 3 --json "$TMP/b.json" --csv "$TMP/b.csv" --md "$TMP/b.md" \
  --html "$TMP/b.html"
expect_grep "^inferbench: serve --best: the race was cut short: the time bound \(0.003 s a step, --step-max-ms\) left 2 candidates not measured; the winner is the best of those measured$" "$TMP/err" "the exit's line says why"
expect_grep "^  5  slots 16, chunk 64 .* -  not measured \(time bound\)$" "$TMP/out" "text: not measured (time bound)"
json_check "$TMP/b.json" "d['partial'] and d['stop_reason'] == 'the race was cut short: 2 candidates not measured' and d['search']['steps_bounded'] == ['screening', 'finals'] and d['winner'] == 'slots 4, chunk 16'" "json: partial, the best of those measured"
json_check "$TMP/b.json" "[(c['stage'], c['figures_from'], c['requests']) for c in d['candidates'] if c['stage'] != 'merged'] == [('winner', 'final', 16), ('not measured', 'screening', 4), ('not measured', 'none', 0)]" "json: the second keeps its screening's figures, unranked"
expect_grep "^PARTIAL: the race was cut short: 2 candidates not measured$" "$TMP/out" "text: cut short"
expect_grep "^m.gguf,\"slots 8, chunk 32\",8,32,not measured,false,screening,4,4,4,2000,1,1,1,1,2,4000,\"not measured: the finals reached the step.s time bound" "$TMP/b.csv" "csv: the unmeasured final keeps its screening's figures (4 requests at once in 8 slots: 2 ms), said"
expect_grep "^- PARTIAL: the race was cut short: 2 candidates not measured$" "$TMP/b.md" "md: cut short"
expect_grep "^<li>PARTIAL: the race was cut short: 2 candidates not measured</li>$" "$TMP/b.html" "html: cut short"

# An option of serving's own grid (serve_race: the fake's batch_us, as llama's kv_unified), not
# given: each slots x chunk candidate at 1000 and 1500 us a mixed batch. At 1500 every step takes
# 1.5 ms, so every TPOT (1.5) is past the target: those drop at screening, 0 within. (best of one
# request does not race it: best_gen_fake.sh's labels.)
FAKE_RACED=(serve m.gguf --backend fake --option cold_calls=0 --option batch_decode_us=0 --option batch_prefill_ns=0
            --warmup-requests 0 --quiet)
expect_exit 0 "batch_us raced" -- "$IB" "${FAKE_RACED[@]}" --best --arrivals "$TMP/sixteen.txt" --slo-ttft-ms 2 \
  --slo-tpot-ms 1 --json "$TMP/c.json"
json_check "$TMP/c.json" "d['winner'] == 'slots 16, chunk 64, batch_us 1000' and len(d['candidates']) == 12" "json: 12 candidates, the winner at 1000 us"
json_check "$TMP/c.json" "[(c['label'], c['stage'], c['goodput_rate'], c['tpot_ms']['p99']) for c in d['candidates'] if c['label'].endswith('1500') and c['stage'] != 'merged'] == [('slots 4, chunk 16, batch_us 1500', 'dropped', 0, 1.5), ('slots 8, chunk 32, batch_us 1500', 'dropped', 0, 1.5), ('slots 16, chunk 64, batch_us 1500', 'dropped', 0, 1.5)]" "json: every 1500 us candidate dropped, its TPOT 1.5 ms"

# Bad inputs: one line, exit 2, before anything is served.
expect_exit 2 "--best without a target" -- "$IB" "${FAKE[@]}" --best --arrivals "$TMP/sixteen.txt"
expect_exit 2 "--step-max-ms without --best" -- "$IB" "${FAKE[@]}" --arrivals "$TMP/sixteen.txt" --step-max-ms 5
expect_exit 2 "a request past a slot's context" -- "$IB" "${FAKE[@]}" --best --arrivals "$TMP/sixteen.txt" \
  --slo-ttft-ms 2 --ctx-per-seq 5
expect_grep "request 1: a prompt of 4 tokens \+ 2 output tokens pass the context of a slot \(5\)" "$TMP/err" "its line names the request"
expect_exit 2 "--best with --rates" -- "$IB" "${FAKE[@]}" --best --rates 5,10 --slo-ttft-ms 2
expect_exit 2 "--best for a forward-pass model" -- "$IB" serve zoo:mlp --device cpu --best --rate 5
expect_exit 2 "--best with a forward-pass option" -- "$IB" "${FAKE[@]}" --best --rate 5 --slo-ttft-ms 2 --slo-p99-ms 3
finish
