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
# measured, not the best. Bad inputs: one line, exit 2.
. "$(dirname "$0")/lib.sh"

FAKE=(serve m.gguf --backend fake --option cold_calls=0 --option batch_us=1000 --option batch_decode_us=0
      --option batch_prefill_ns=0 --warmup-requests 0 --quiet)
for i in $(seq 16); do echo "0 4 2"; done >"$TMP/sixteen.txt"

expect_exit 0 "the race of the engine's settings" -- "$IB" "${FAKE[@]}" --best --arrivals "$TMP/sixteen.txt" \
  --slo-ttft-ms 2 --slo-tpot-ms 1 --json "$TMP/a.json"
json_check "$TMP/a.json" "d['schema'] == 'inferbench.best_serve/1' and d['winner'] == 'slots 16, chunk 64' and not d['partial']" "json: 16 slots win"
json_check "$TMP/a.json" "[(c['label'], c['stage'], c['goodput_rate'], c['good_requests']) for c in d['candidates'] if c['stage'] != 'merged'] == [('slots 4, chunk 16', 'finalist', 500, 4), ('slots 8, chunk 32', 'finalist', 2000, 8), ('slots 16, chunk 64', 'winner', 8000, 16)]" "json: each final's goodput, by hand"
json_check "$TMP/a.json" "[(c['asked'], c['same_as']) for c in d['candidates']] == [('slots 4, chunk 256', None), (None, 0), ('slots 8, chunk 256', None), (None, 2), ('slots 16, chunk 256', None), (None, 4)]" "json: the chunks as run, the 512 rows merged"
json_check "$TMP/a.json" "d['search']['screen_requests'] == 4 and d['search']['final_requests'] == 16 and d['search']['merged'] == 3 and all(c['figures_from'] == 'final' for c in d['candidates'] if c['stage'] != 'merged')" "json: screened on 4 requests, the figures the finals'"
json_check "$TMP/a.json" "d['winner_serve']['settings']['slots'] == 16 and d['winner_serve']['figures']['good_requests'] == 16 and len(d['winner_serve']['requests']) == 16" "json: the winner's serving document"
expect_grep "^  5  slots 16, chunk 64 +8000 +100 +1 +1 +1 +16000 +16/16  WINNER$" "$TMP/out" "text: the winner's row"
expect_grep "^  1  finals: goodput -93.8% against the winner \(500 against 8000 requests/s; 4 against 16 requests within the targets\)$" "$TMP/out" "text: why the 4 slots lost"
expect_grep "^best: slots 16, chunk 64: goodput 8000 requests/s \(16 of 16 requests within the targets, 100.0%\)" "$TMP/out" "text: the winner"
expect_grep "^the winner's serving measurement \(slots 16, chunk 64\):$" "$TMP/out" "text: the winner's serve report follows"

expect_exit 1 "--step-max-ms 3: the third screening and the second final not measured" -- "$IB" "${FAKE[@]}" --best \
  --arrivals "$TMP/sixteen.txt" --slo-ttft-ms 2 --step-max-ms 3 --json "$TMP/b.json"
expect_grep "^inferbench: serve --best: the race was cut short: the time bound \(0.003 s a step, --step-max-ms\) left 2 candidates not measured; the winner is the best of those measured$" "$TMP/err" "the exit's line says why"
expect_grep "^  5  slots 16, chunk 64 .* -  not measured \(time bound\)$" "$TMP/out" "text: not measured (time bound)"
json_check "$TMP/b.json" "d['partial'] and d['stop_reason'] == 'the race was cut short: 2 candidates not measured' and d['search']['steps_bounded'] == ['screening', 'finals'] and d['winner'] == 'slots 4, chunk 16'" "json: partial, the best of those measured"
json_check "$TMP/b.json" "[(c['stage'], c['figures_from'], c['requests']) for c in d['candidates'] if c['stage'] != 'merged'] == [('winner', 'final', 16), ('not measured', 'screening', 4), ('not measured', 'none', 0)]" "json: the second keeps its screening's figures, unranked"
expect_grep "^PARTIAL: the race was cut short: 2 candidates not measured$" "$TMP/out" "text: cut short"

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
