#!/bin/bash
# inferbench serve --endpoint (docs/serve-endpoint.md) against the scripted
# server run as a process (inferbench script-server): the refusals before
# the run in one line (exit 2), a run's report and JSON (every request's
# token counts, its chunks of several tokens, its lateness measured), a
# run whose every request fails (exit 1, what was measured kept), SIGINT
# (exit 130, partial). No timing is asserted.
. "$(dirname "$0")/lib.sh"

need_script_server

serve=(serve --rate 50 --arrivals constant --requests 4 --prompt-tokens 16 --new-tokens 5 --warmup-requests 1)

expect_exit 2 "a host that is not loopback is refused" -- "$IB" serve --endpoint http://10.1.2.3:80 --model m --rate 1
grep -q "is not a loopback address" "$TMP/err" && pass "  ... saying so" || fail "  ... got $(cat "$TMP/err")"
expect_exit 2 "a URL that is not http(s) is refused" -- "$IB" serve --endpoint ftp://127.0.0.1 --model m --rate 1
expect_exit 2 "--endpoint without --model is refused" -- "$IB" serve --endpoint http://127.0.0.1:1 --rate 1
expect_exit 2 "a MODEL with --endpoint is refused" -- "$IB" serve m.gguf --endpoint http://127.0.0.1:1 --model m --rate 1
expect_exit 2 "--slots with --endpoint is refused" -- "$IB" serve --endpoint http://127.0.0.1:1 --model m --rate 1 --slots 2
expect_exit 2 "--sampling with --endpoint is refused (the server samples)" -- "$IB" serve --endpoint http://127.0.0.1:1 \
  --model m --rate 1 --sampling greedy
grep -qx "inferbench: serve --sampling is the in-process engine's, not (yet) over --endpoint" "$TMP/err" && pass "  ... saying so" || fail "  ... got $(cat "$TMP/err")"
expect_exit 2 "no rate nor trace is refused" -- "$IB" serve --endpoint http://127.0.0.1:1 --model m
expect_exit 2 "a server that does not answer" -- "$IB" serve --endpoint http://127.0.0.1:1 --model m --rate 1

script_server_start --model tiny --ttft-ms 1 --itl-ms 0.5 --tokens-per-chunk 2
expect_exit 2 "a model the server lacks" -- "$IB" serve --endpoint "$url" --model other --rate 1
grep -qx "inferbench: endpoint $url has no model 'other' (it has: 'tiny')" "$TMP/err" && pass "  ... naming the ones it has" || fail "  ... got $(cat "$TMP/err")"
expect_exit 2 "a path that is no OpenAI server" -- "$IB" serve --endpoint "$url/nothing" --model tiny --rate 1
expect_exit 0 "a run" -- "$IB" "${serve[@]}" --endpoint "$url" --model tiny --json "$TMP/r.json"
grep -q "^failures: none of 4 requests" "$TMP/out" && pass "  ... no failure" || fail "  ... $(cat "$TMP/out")"
grep -q "^chunks: 12, 8 carrying several tokens" "$TMP/out" && pass "  ... 5 tokens, 2 a chunk: 3 chunks a request, 2 of them of two" || fail "  ... $(grep chunks "$TMP/out")"
grep -q "^client lateness (sent - scheduled" "$TMP/out" && pass "  ... its lateness stated" || fail "  ... no lateness line"
python3 - "$TMP/r.json" >"$TMP/py" 2>&1 <<'PY' && pass "  ... its JSON: every request's counts and chunks" || fail "  ... JSON: $(cat "$TMP/py")"
import json, sys
d = json.load(open(sys.argv[1]))
e = d["endpoint"]
assert d["figures"]["completed"] == 4 and e["failed"] == 0, d["figures"]
assert e["lateness_ms"]["n"] == 4
for q, r in zip(e["requests"], d["requests"]):
    assert q["usage_tokens"] == 5 and q["chunk_tokens"] == 5 and q["failure"] == "ok", q
    assert q["usage_prompt_tokens"] == 16, q
    assert q["chunk_tokens_each"] == [2, 2, 1], q
    assert r["generated_tokens"] == 5 and r["admitted_ms"] == q["sent_ms"]
PY
script_server_stop

script_server_start --model tiny --fail 500
expect_exit 1 "every request failing: exit 1" -- "$IB" "${serve[@]}" --endpoint "$url" --model tiny
grep -q "^failures: 4 of 4 requests (counted against goodput): http 4" "$TMP/out" && pass "  ... what was measured printed, by cause" || fail "  ... $(cat "$TMP/out")"
script_server_stop

script_server_start --model tiny --ttft-ms 1 --itl-ms 1
# The signal once 2 of the 100 measured requests (one every 500 ms) have
# ended: the program's test mark (INFERBENCH_TEST_MARK, tests/cli/lib.sh's
# wait_for), not a guess at how long the checks and the warm-up take.
INFERBENCH_TEST_MARK="2:$TMP/sigint.mark" "$IB" serve --endpoint "$url" --model tiny --rate 2 --requests 100 \
  --new-tokens 3 --prompt-tokens 4 >"$TMP/out" 2>"$TMP/err" </dev/null &
client=$!
wait_for "$TMP/sigint.mark" 120 && pass "SIGINT: sent after 2 requests ended" || fail "SIGINT: no mark in 120 s: $(cat "$TMP/err")"
kill -INT "$client"
wait "$client"
rc=$?
[ "$rc" -eq 130 ] && pass "SIGINT: exit 130" || fail "SIGINT: exit $rc: $(cat "$TMP/err")"
grep -q "^PARTIAL: stopped early" "$TMP/out" && pass "  ... what was measured kept" || fail "  ... $(cat "$TMP/out")"
script_server_stop

finish
