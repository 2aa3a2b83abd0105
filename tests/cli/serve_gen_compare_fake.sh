# inferbench compare of two generative serve results on the scripted
# generation fake (docs/compare.md, "Generative serve results"): a run
# against one with slower steps, its verdicts and goodput in every format
# compare has; a generative serve result against another kind, a broken
# one, a truncated one: one line, exit 2.
. "$(dirname "$0")/lib.sh"

# 30 requests, one every 50 ms, each alone on the engine
# (test_gen_serve_compare.c, test_slower_run): a step of 1 or 3 ms.
RUN=(serve m.gguf --backend fake --option cold_calls=0 --option batch_decode_us=500 --option batch_prefill_ns=100000
     --arrivals constant --rate 20 --requests 30 --prompt-tokens 10 --new-tokens 5 --slots 2 --warmup-requests 0
     --slo-tpot-ms 2 --quiet)
expect_exit 0 "a run" -- "$IB" "${RUN[@]}" --option batch_us=1000 --json "$TMP/a.json"
expect_exit 0 "a run of slower steps" -- "$IB" "${RUN[@]}" --option batch_us=3000 --json "$TMP/b.json"

expect_exit 0 "compare" -- "$IB" compare "$TMP/a.json" "$TMP/b.json" --json "$TMP/c.json" --csv "$TMP/c.csv" --md "$TMP/c.md"
expect_grep "^TPOT       median A 1.5 ms, B 3.5 ms: \+133.33%, 95% CI \[\+133.33%, \+133.33%\]; .*: slower; p99 A 1.5 ms, B 3.5 ms$" "$TMP/out" "text: TPOT slower, each side's p99"
expect_grep "^goodput share: A 100% \(30 of 30\), B 0% \(0 of 30\): -100.00 points, 95% CI \[.*\]: lower;" "$TMP/out" "text: the goodput share lower, with its interval"
json_check "$TMP/c.json" "d['schema'] == 'inferbench.serve_generative-compare/1' and d['tpot']['verdict'] == 'slower' and d['ttft']['verdict'] == 'slower' and d['itl']['verdict'] == 'slower' and d['goodput']['verdict'] == 'lower' and d['warnings'] == []" "json: the verdicts"
expect_grep "^tpot,ms,.*,slower" "$TMP/c.csv" "csv: a row per figure"
expect_grep "^good_share,share,.*,lower" "$TMP/c.csv" "csv: the goodput share's row"
expect_grep "^\| TPOT \| 1.5 ms \| 3.5 ms \|" "$TMP/c.md" "md: the figures' table"
expect_exit 3 "--fail-if-slower" -- "$IB" compare "$TMP/a.json" "$TMP/b.json" --fail-if-slower
expect_exit 0 "the same result: no change" -- "$IB" compare "$TMP/a.json" "$TMP/a.json"
expect_grep "^TPOT .*: no change; " "$TMP/out" "the same result: no change"

# Refused, one line each.
expect_exit 0 "a latency result" -- "$IB" latency --backend fake --device cpu --runs 20 --json "$TMP/l.json" --quiet
expect_exit 2 "a generative serve result and a latency one" -- "$IB" compare "$TMP/a.json" "$TMP/l.json"
expect_grep "'.*a.json' is a serve_generative result \(inferbench.serve_generative/1\) and '.*l.json' a latency result" "$TMP/err" "mixed kinds: each named for what it is"
head -c 2000 "$TMP/a.json" >"$TMP/cut.json"
expect_exit 2 "a truncated result" -- "$IB" compare "$TMP/a.json" "$TMP/cut.json"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d['steps']=d['steps'][:-1]; json.dump(d, open(sys.argv[2], 'w'))" "$TMP/a.json" "$TMP/broken.json"
expect_exit 2 "a result whose steps miss a token" -- "$IB" compare "$TMP/a.json" "$TMP/broken.json"
expect_grep "is not an inferbench serve_generative result: its steps do not give its requests their tokens" "$TMP/err" "broken: why"
expect_exit 0 "a run of 3 requests" -- "$IB" "${RUN[@]}" --requests 3 --json "$TMP/few.json"
expect_exit 2 "too few requests to compare" -- "$IB" compare "$TMP/a.json" "$TMP/few.json"
finish
