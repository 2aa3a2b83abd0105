#!/bin/bash
# inferbench serve --endpoint --api llama (llama.cpp's own POST /completion;
# docs/serve-endpoint.md, "The API") against the scripted server run as a
# process: the refusals (an API it does not know, --api without
# --endpoint); a run's header in the API's words, every request's tokens
# counted from each event's count (7 tokens at 3 an event: 3;3;1), its 7
# ids kept, the request's count the final event's, and the server's own timings as the script planned
# them (2 ms to the first token, 6 gaps of 1 ms), exact in the CSV and the
# JSON, beside the client's TTFT and TPOT in the text. No timing is
# asserted.
. "$(dirname "$0")/lib.sh"

need_script_server

serve=(serve --rate 50 --arrivals constant --requests 6 --prompt-tokens 16 --new-tokens 7 --warmup-requests 1)

expect_exit 2 "an API it does not know is refused" -- "$IB" serve --endpoint http://127.0.0.1:1 --model m --rate 1 --api chat
grep -qx "inferbench: --api 'chat': is not completions (OpenAI's /v1/completions) or llama (llama.cpp's /completion)" "$TMP/err" \
  && pass "  ... naming the two" || fail "  ... got $(cat "$TMP/err")"
expect_exit 2 "--api without --endpoint is refused" -- "$IB" serve m.gguf --rate 1 --api llama

script_server_start --model tiny --ttft-ms 2 --itl-ms 1 --tokens-per-chunk 3
expect_exit 0 "a run in llama.cpp's API" -- "$IB" "${serve[@]}" --endpoint "$url" --model tiny --api llama \
  --csv "$TMP/r.csv" --json "$TMP/r.json"
grep -q "streamed (POST /completion, llama.cpp's own API).*(n_predict, ignore_eos); tokens from each event's count (tokens_predicted), its ids kept" "$TMP/out" \
  && pass "  ... the client's line in the API's words" || fail "  ... $(grep client: "$TMP/out")"
grep -q "^failures: none of 6 requests" "$TMP/out" && pass "  ... none failed" || fail "  ... $(cat "$TMP/out")"
grep -q "^server's own timings (its \`timings\`, 6 requests): prompt p50 2 ms against the client's TTFT p50 .*; per output token after the first p50 1 ms against the client's TPOT p50 " "$TMP/out" \
  && pass "  ... the server's timings beside the client's figures" || fail "  ... $(grep -i server "$TMP/out")"
python3 - "$TMP/r.csv" "$TMP/r.json" >"$TMP/py" 2>&1 <<'PY' && pass "  ... CSV and JSON: ids 3;3;1, usage 7, the server's 2 ms and 6 ms" || fail "  ... $(cat "$TMP/py")"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
d = json.load(open(sys.argv[2]))
e = d["endpoint"]
assert e["api"] == "llama" and e["failed"] == 0, e
assert len(rows) == 6
for row, q in zip(rows, e["requests"]):
    got = {k: row[k] for k in ("failure", "usage_tokens", "usage_prompt_tokens", "chunk_tokens", "chunks",
                               "chunk_tokens_each", "server_prompt_ms", "server_predicted_ms", "server_prompt_n",
                               "server_cache_n", "tokens_assumed", "id_tokens")}
    assert got == {"failure": "ok", "usage_tokens": "7", "usage_prompt_tokens": "16", "chunk_tokens": "7",
                   "chunks": "3", "chunk_tokens_each": "3;3;1", "server_prompt_ms": "2",
                   "server_predicted_ms": "6", "server_prompt_n": "16", "server_cache_n": "0",
                   "tokens_assumed": "false", "id_tokens": "7"}, got
    assert (q["server_prompt_ms"], q["server_predicted_ms"], q["server_prompt_n"], q["server_cache_n"]) == (2, 6, 16, 0), q
    assert q["chunk_tokens_each"] == [3, 3, 1], q
t = e["server_timings"]
assert t["prompt_ms"]["n"] == 6 and t["prompt_ms"]["p50"] == 2 and t["prompt_ms"]["max"] == 2, t
assert t["decode_ms_per_token"]["n"] == 6 and t["decode_ms_per_token"]["p50"] == 1, t
PY
script_server_stop

finish
