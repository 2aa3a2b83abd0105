#!/bin/bash
# inferbench serve --endpoint --csv (docs/serve-endpoint.md, "The result")
# against the scripted server run as a process: a row per request with the
# endpoint's cells after the figures (its send, the client's lateness, the
# HTTP status, the failure's cause, usage, the chunks and the tokens of
# each), exact: 7 tokens at 3 a chunk are 3 chunks of 3;3;1, a 500 on
# every second request is http with no usage and no chunk, a reset after a
# chunk is reset with that chunk; every cell the JSON's own value of the
# same request; the server's timings empty (it states none in OpenAI's
# completions). No timing is asserted.
. "$(dirname "$0")/lib.sh"

need_script_server

serve=(serve --rate 50 --arrivals constant --requests 6 --prompt-tokens 16 --new-tokens 7 --warmup-requests 0)

# check_csv CSV JSON WANT: every row's endpoint cells against the JSON's
# request and WANT (a Python list of (failure, http_status, usage_tokens,
# chunks, chunk_tokens_each) per request).
check_csv() {
  python3 - "$1" "$2" "$3" <<'PY'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
d = json.load(open(sys.argv[2]))
want = eval(sys.argv[3])
eps = d["endpoint"]["requests"]
assert len(rows) == len(eps) == len(want), (len(rows), len(eps))
cols = ["sent_ms", "lateness_ms", "http_status", "failure", "usage_tokens", "usage_prompt_tokens",
        "chunk_tokens", "tokens_assumed", "chunks", "chunk_tokens_each", "server_prompt_ms", "server_predicted_ms",
        "server_prompt_n", "server_cache_n", "id_tokens"]
assert list(rows[0])[-len(cols):] == cols, list(rows[0])
for row, e, q, (failure, status, usage, chunks, each) in zip(rows, eps, d["requests"], want):
    assert (row["failure"], row["http_status"], row["usage_tokens"], row["chunks"], row["chunk_tokens_each"]) == \
        (failure, status, usage, chunks, each), row
    assert row["failure"] == e["failure"] and int(row["http_status"]) == e["http_status"], (row, e)
    assert row["usage_tokens"] == ("" if e["usage_tokens"] is None else str(e["usage_tokens"])), (row, e)
    assert row["usage_prompt_tokens"] == ("" if e["usage_prompt_tokens"] is None else str(e["usage_prompt_tokens"]))
    assert int(row["chunk_tokens"]) == e["chunk_tokens"] == sum(e["chunk_tokens_each"]), (row, e)
    assert row["tokens_assumed"] == "false" and not e["tokens_assumed"], row
    assert int(row["chunks"]) == len(e["chunk_ms"]), (row, e)
    assert row["chunk_tokens_each"] == ";".join(str(k) for k in e["chunk_tokens_each"]), (row, e)
    assert float(row["sent_ms"]) == e["sent_ms"] == float(row["admitted_ms"]), (row, e)
    assert float(row["lateness_ms"]) == e["lateness_ms"] == e["sent_ms"] - q["scheduled_ms"], (row, e, q)
    for k in cols[-5:]:  # the server's own timings and ids: none in OpenAI's completions from this server
        assert row[k] == "" and e[k] is None, (k, row, e)
PY
}

script_server_start --model tiny --ttft-ms 2 --itl-ms 1 --tokens-per-chunk 3
expect_exit 0 "a run, 7 tokens at 3 a chunk" -- "$IB" "${serve[@]}" --endpoint "$url" --model tiny --csv "$TMP/r.csv" --json "$TMP/r.json"
check_csv "$TMP/r.csv" "$TMP/r.json" '[("ok", "200", "7", "3", "3;3;1")] * 6' >"$TMP/py" 2>&1 \
  && pass "  ... every row: ok, 200, usage 7, chunks 3;3;1, the JSON's values" || fail "  ... $(cat "$TMP/py")"
script_server_stop

script_server_start --model tiny --ttft-ms 2 --itl-ms 1 --tokens-per-chunk 3 --fail 500 --fail-every 2
expect_exit 0 "a 500 on every second request" -- "$IB" "${serve[@]}" --endpoint "$url" --model tiny --csv "$TMP/f.csv" --json "$TMP/f.json"
check_csv "$TMP/f.csv" "$TMP/f.json" '[("ok", "200", "7", "3", "3;3;1"), ("http", "500", "", "0", "")] * 3' >"$TMP/py" 2>&1 \
  && pass "  ... its rows: http, 500, no usage, no chunk" || fail "  ... $(cat "$TMP/py")"
script_server_stop

script_server_start --model tiny --ttft-ms 2 --itl-ms 1 --tokens-per-chunk 3 --fail reset --fail-after-chunks 1 --fail-every 3
expect_exit 0 "a reset after one chunk on every third request" -- "$IB" "${serve[@]}" --endpoint "$url" --model tiny --csv "$TMP/x.csv" --json "$TMP/x.json"
check_csv "$TMP/x.csv" "$TMP/x.json" '[("ok", "200", "7", "3", "3;3;1")] * 2 + [("reset", "200", "3", "1", "3")] + [("ok", "200", "7", "3", "3;3;1")] * 2 + [("reset", "200", "3", "1", "3")]' >"$TMP/py" 2>&1 \
  && pass "  ... its rows: reset, the one chunk of 3 received (usage 3: its continuous usage)" || fail "  ... $(cat "$TMP/py")"
script_server_stop

finish
