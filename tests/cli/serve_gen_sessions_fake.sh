# serve of a generative model in sessions (--sessions N: the same schedule
# served in N fresh processes, docs/serve-generative.md, "Sessions") on the
# scripted generation fake: the unit test's three requests
# (test_gen_serve.c, test_engine_by_hand), whose figures the virtual clock
# makes exact in every session: TTFT 2, 7, 8 ms (p99 7.98), TPOT 2.5, 2,
# 1.5 (p50 2, p99 2.49), goodput 2 / 10.5 ms, 7 output tokens over 10.5 ms.
# Every session the same: the geometric mean is that value, the spread
# between sessions 0. A crashed session is counted and said (exit 1, the
# others merged); --sessions with --best or a forward-pass model: exit 2.
. "$(dirname "$0")/lib.sh"

FAKE=(serve m.gguf --backend fake --option cold_calls=0 --option batch_us=1000 --option batch_decode_us=500
      --option batch_prefill_ns=100000 --quiet --slots 2 --prefill-chunk 10 --warmup-requests 0
      --slo-ttft-ms 7.5 --slo-tpot-ms 2.5)
printf '0 10 3\n0 20 2\n1 5 2\n' >"$TMP/three.txt"

expect_exit 0 "3 sessions of the same schedule" -- "$IB" "${FAKE[@]}" --arrivals "$TMP/three.txt" --sessions 3 \
  --json "$TMP/s.json" --csv "$TMP/s.csv" --md "$TMP/s.md"
json_check "$TMP/s.json" "d['schema'] == 'inferbench.serve_generative/1' and d['sessions']['count'] == 3 and not d['sessions']['incomplete']" "json: 3 sessions merged"
json_check "$TMP/s.json" "[f['key'] for f in d['sessions']['figures']] == ['ttft_p99_ms', 'tpot_p50_ms', 'tpot_p99_ms', 'goodput_rate', 'output_tokens_per_s'] and all(len(f['values']) == 3 and all(abs(v - w) < 1e-9 for v in f['values']) for f, w in zip(d['sessions']['figures'], [7.98, 2, 2.49, 2000 / 10.5, 7000 / 10.5]))" "json: each session's TTFT p99, TPOT p50 and p99, goodput, tokens/s"
json_check "$TMP/s.json" "all(abs(f['geomean'] - f['values'][0]) < 1e-9 and f['between_sd_log'] == 0 and f['spread'] == 0 for f in d['sessions']['figures'])" "json: the same in every session: no spread between them"
json_check "$TMP/s.json" "all(r['figures']['good_requests'] == 2 for r in d['sessions']['runs'])" "json: each session's figures kept"
expect_grep "^inferbench serve: m.gguf, cpu, 3 sessions \(each a fresh process\)$" "$TMP/out" "text: the sessions"
expect_grep "^TTFT p99: geometric mean of sessions 7.98 ms" "$TMP/out" "text: TTFT p99 across sessions"
expect_grep "^goodput: geometric mean of sessions 190.476 requests/s" "$TMP/out" "text: goodput across sessions"
expect_grep "^m.gguf,,,2,0,,7.98,2,2.49,190.4761904761904" "$TMP/s.csv" "csv: a row a session"
expect_grep "^\| geomean \|  \|  \| 7.98 \| 2 \| 2.49 \| 190.476 \| 666.667 \|$" "$TMP/s.md" "md: the geometric means"

INFERBENCH_TEST_CRASH_SESSION=2 expect_exit 1 "a session crashed" -- "$IB" "${FAKE[@]}" --arrivals "$TMP/three.txt" \
  --sessions 3 --json "$TMP/c.json"
expect_grep "1 of 3 sessions failed \(session 2" "$TMP/err" "its line says which"
json_check "$TMP/c.json" "d['sessions']['measured'] == 2 and [f['sessions'] for f in d['sessions']['figures']] == [2] * 5" "json: the two others merged"

expect_exit 2 "--sessions with a curve over rates" -- "$IB" "${FAKE[@]}" --rates 5,10 --sessions 3
expect_exit 2 "--sessions with the search for a rate" -- "$IB" "${FAKE[@]}" --sessions 3
expect_exit 2 "--sessions with --best" -- "$IB" "${FAKE[@]}" --arrivals "$TMP/three.txt" --sessions 3 --best
expect_exit 2 "--sessions for a forward-pass model's serve" -- "$IB" serve zoo:mlp --device cpu --rate 5 --sessions 3
finish
