#!/bin/bash
# inferbench script-server (docs/script-server.md), as a process: its URL
# on the first line, a scripted stream through curl's command line, its
# stamps file and summary after SIGINT, and its refusals in one line each.
# No timing is asserted.
. "$(dirname "$0")/lib.sh"

if ! command -v curl >/dev/null; then echo "skipped: no curl"; exit 77; fi
need_script_server

expect_exit 2 "a negative ttft is refused" -- "$IB" script-server --ttft-ms -1
grep -qx 'inferbench: script: ttft -1 ms is not a time >= 0' "$TMP/err" && pass "  ... naming it" || fail "  ... got $(cat "$TMP/err")"
expect_exit 2 "0 tokens a chunk is refused" -- "$IB" script-server --tokens-per-chunk 0
expect_exit 2 "a gap that is no number is refused" -- "$IB" script-server --gaps-ms 1,x
expect_exit 2 "an unknown failure is refused" -- "$IB" script-server --fail boom
expect_exit 2 "an unknown option is refused" -- "$IB" script-server --port 8080
expect_exit 2 "an option without its value is refused" -- "$IB" script-server --itl-ms
# calibrate client (the client against this server): a bad output is
# refused before anything runs.
expect_exit 2 "calibrate client: a --json in a missing folder is refused first" -- \
  "$IB" calibrate client --json "$TMP/no/such/client.json"
expect_exit 2 "calibrate client takes nothing more" -- "$IB" calibrate client extra

script_server_start --ttft-ms 0 --gaps-ms 0,0 --tokens-per-chunk=2 --model tiny --stamps "$TMP/stamps.csv"
case "$url" in http://127.0.0.1:[0-9]*) pass "its first line is its loopback URL" ;; *) fail "first line: '$url'" ;; esac

curl -sS -N "$url/v1/completions" -d '{"model":"tiny","prompt":[1,2,3],"max_tokens":5,"stream":true,"stream_options":{"include_usage":true}}' >"$TMP/stream"
[ "$(grep -c '^data: ' "$TMP/stream")" -eq 5 ] && pass "5 tokens, 2 a chunk: 3 chunks, the usage, [DONE]" || fail "events: $(cat "$TMP/stream")"
grep -q '"usage":{"prompt_tokens":3,"completion_tokens":5,"total_tokens":8}' "$TMP/stream" && pass "the usage counts them" || fail "usage: $(cat "$TMP/stream")"
[ "$(tail -2 "$TMP/stream" | head -1)" = "data: [DONE]" ] && pass "the stream ends with [DONE]" || fail "end: $(tail -3 "$TMP/stream")"
code=$(curl -s -o /dev/null -w '%{http_code}' "$url/v1/completions" -d '{"model":"gpt","prompt":[1],"stream":true}')
[ "$code" = 404 ] && pass "another model: 404" || fail "another model: $code"

script_server_stop
rc=$?
[ "$rc" -eq 0 ] && pass "SIGINT stops it, exit 0" || fail "exit $rc after SIGINT"
[ "$(sed -n 2p "$server_out")" = "served 2 requests: 3 chunks, 5 tokens" ] && pass "its summary" || fail "summary: $(cat "$server_out")"
kinds=$(cut -d, -f1-3 "$TMP/stamps.csv" | tr '\n' ' ')
want="request,kind,tokens 0,arrived,3 0,chunk,2 0,chunk,2 0,chunk,1 0,usage,5 0,done,0 0,ended,5 1,arrived,1 1,refused,404 "
[ "$kinds" = "$want" ] && pass "its stamps, in order" || fail "stamps: $kinds"
[ ! -s "$server_err" ] && pass "nothing on stderr" || fail "stderr: $(cat "$server_err")"

finish
