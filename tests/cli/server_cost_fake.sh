#!/bin/bash
# The server's cost (docs/serve-endpoint.md, "The server's cost"): compare
# of a run in process (the scripted generation fake) and one over HTTP
# (inferbench script-server) sent the same schedule. The endpoint's ITL
# read from its chunks (tokens two to a chunk: ITL not compared, its gaps
# of 0 counted; one a chunk: compared, every gap of the document's own
# chunk times), the sides named, the schedules set against each other
# (warnings, not refusals), an endpoint result whose chunks miss a token
# refused. No timing of the HTTP side is asserted: the exact values are
# the fake's and the chunk times written into a copy of the result.
. "$(dirname "$0")/lib.sh"

need_script_server

# 30 requests, one every 50 ms, prompt 10, output 5 (the schedule of
# serve_gen_compare_fake.sh): in process a TTFT of 2 ms, a TPOT of 1.5 ms.
SCHEDULE=(--arrivals constant --rate 20 --requests 30 --prompt-tokens 10 --new-tokens 5 --warmup-requests 0
          --slo-tpot-ms 2 --quiet)
expect_exit 0 "in process" -- "$IB" serve m.gguf --backend fake --option cold_calls=0 --option batch_decode_us=500 \
  --option batch_prefill_ns=100000 --option batch_us=1000 --slots 2 "${SCHEDULE[@]}" --json "$TMP/a.json"

script_server_start --model tiny --ttft-ms 2 --itl-ms 1 --tokens-per-chunk 2
expect_exit 0 "over HTTP, two tokens a chunk" -- "$IB" serve --endpoint "$url" --model tiny "${SCHEDULE[@]}" --json "$TMP/b2.json"
script_server_stop
script_server_start --model tiny --ttft-ms 2 --itl-ms 1
expect_exit 0 "over HTTP, a token a chunk" -- "$IB" serve --endpoint "$url" --model tiny "${SCHEDULE[@]}" --json "$TMP/b1.json"
expect_exit 0 "over HTTP, other lengths" -- "$IB" serve --endpoint "$url" --model tiny "${SCHEDULE[@]}" --new-tokens 4..6 --json "$TMP/len.json"
expect_exit 0 "over HTTP, another seed" -- "$IB" serve --endpoint "$url" --model tiny "${SCHEDULE[@]}" --schedule-seed 2 --json "$TMP/seed.json"
expect_exit 0 "over HTTP, fewer requests" -- "$IB" serve --endpoint "$url" --model tiny "${SCHEDULE[@]}" --requests 20 --json "$TMP/few.json"
script_server_stop

expect_exit 0 "compare: in process against chunks of two tokens" -- "$IB" compare "$TMP/a.json" "$TMP/b2.json" --json "$TMP/c2.json" --csv "$TMP/c2.csv"
expect_grep "^B \(candidate\) .*b2.json: tiny over HTTP, 30 of 30 requests completed$" "$TMP/out" "B named as over HTTP"
expect_grep "^B over HTTP, A in process: the difference is what the server and the client add$" "$TMP/out" "the server's cost stated"
expect_grep "^A picked no token from its logits \(--sampling none\): the server's sampling is in the difference too$" "$TMP/out" "the in-process side's sampling said"
expect_grep "^TTFT       median A 2 ms, B .*; p99 A 2 ms, B " "$TMP/out" "TTFT compared"
expect_grep "^TPOT       median A 1.5 ms, B " "$TMP/out" "TPOT compared"
expect_grep "^ITL not compared: gaps of 0 \(tokens that reached the client in one chunk\), 0 in A, 60 in B; TPOT holds the decode rate$" "$TMP/out" "ITL not compared: 2 of each request's 4 gaps 0"
expect_grep "^goodput share: A 100% \(30 of 30\), B .* \(.* of 30\)" "$TMP/out" "goodput: both sides' counts"
json_check "$TMP/c2.json" "d['b_over_http'] and not d['a_over_http'] and 'itl' not in d and d['itl_not_compared'].startswith('ITL not compared') and d['ttft']['a']['n'] == d['ttft']['b']['n'] == 30 and not {'different_model', 'different_slots', 'different_device', 'different_prefill_chunk', 'different_seed', 'different_schedule', 'different_request_count', 'different_rate'} & set(d['warnings'])" "json: the sides, no schedule warning, the engines not set against each other"
grep -q "^itl," "$TMP/c2.csv" && fail "csv: an ITL row" || pass "csv: no ITL row"

# The in-process side sampling greedily (0.3 ms a sample on the fake): said so beside the transport line;
# against the run that did not sample, two runs in process differ in how they picked their tokens.
expect_exit 0 "in process, --sampling greedy" -- "$IB" serve m.gguf --backend fake --option cold_calls=0 \
  --option batch_decode_us=500 --option batch_prefill_ns=100000 --option batch_us=1000 --option sample_us=300 \
  --sampling greedy --slots 2 "${SCHEDULE[@]}" --json "$TMP/ag.json"
expect_exit 0 "compare: greedy in process against HTTP" -- "$IB" compare "$TMP/ag.json" "$TMP/b1.json"
expect_grep "^A picked each token greedily from its logits \(--sampling greedy\): the difference holds the server's sampling past one pass$" "$TMP/out" "the greedy side said"
expect_exit 0 "compare: two runs in process, one sampling" -- "$IB" compare "$TMP/a.json" "$TMP/ag.json" --json "$TMP/cg.json"
json_check "$TMP/cg.json" "'different_sampling' in d['warnings']" "json: the sampling told apart"

expect_exit 0 "compare: in process against a token a chunk" -- "$IB" compare "$TMP/a.json" "$TMP/b1.json" --json "$TMP/c1.json"
json_check "$TMP/c1.json" "d['itl']['a']['n'] == d['itl']['b']['n'] == 120" "ITL compared: 4 gaps of each of the 30 requests a side"

# The chunks' times of b1 written as 1.5 ms apart: B's ITL exactly A's.
python3 - "$TMP/b1.json" "$TMP/b15.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for q in d["endpoint"]["requests"]:
    q["chunk_ms"] = [q["chunk_ms"][0] + 1.5 * k for k in range(len(q["chunk_ms"]))]
json.dump(d, open(sys.argv[2], "w"))
PY
expect_exit 0 "compare: chunks 1.5 ms apart" -- "$IB" compare "$TMP/a.json" "$TMP/b15.json"
expect_grep "^ITL        median A 1.5 ms, B 1.5 ms: \+0.00%, 95% CI \[\+0.00%, \+0.00%\]; .*: no change; p99 A 1.5 ms, B 1.5 ms$" "$TMP/out" "ITL from the chunks' own times"

expect_exit 0 "compare: other lengths" -- "$IB" compare "$TMP/a.json" "$TMP/len.json"
expect_grep "^warning: A and B were sent different schedules \(a request's arrival or lengths differ\)$" "$TMP/out" "  ... a warning, not a refusal"
expect_exit 0 "compare: another seed" -- "$IB" compare "$TMP/a.json" "$TMP/seed.json"
expect_grep "^warning: A and B drew their schedules from different seeds$" "$TMP/out" "  ... a warning (constant arrivals, fixed lengths: the same schedule else)"
grep -q "different schedules" "$TMP/out" && fail "  ... the schedule said to differ" || pass "  ... the requests alike"
expect_exit 0 "compare: fewer requests" -- "$IB" compare "$TMP/a.json" "$TMP/few.json"
expect_grep "^warning: A and B were sent different numbers of requests$" "$TMP/out" "  ... a warning"
expect_exit 0 "compare: two results over HTTP" -- "$IB" compare "$TMP/b1.json" "$TMP/b2.json"
grep -q "the difference is what the server" "$TMP/out" && fail "  ... said to be the server's cost" || pass "  ... no transport line"

python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d['endpoint']['requests'][3]['chunk_tokens_each'][0] = 0; json.dump(d, open(sys.argv[2], 'w'))" "$TMP/b1.json" "$TMP/broken.json"
expect_exit 2 "an endpoint result whose chunks miss a token" -- "$IB" compare "$TMP/a.json" "$TMP/broken.json"
expect_grep "is not an inferbench serve_generative result: an endpoint request's chunks do not give it its tokens" "$TMP/err" "  ... why"
finish
