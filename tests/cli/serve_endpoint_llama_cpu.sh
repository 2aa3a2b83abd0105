#!/usr/bin/env bash
# serve --endpoint through the real llama-server (built for the CPU by
# scripts/build-llama-server.sh, started on 127.0.0.1 by
# tests/llama/server.sh) serving the zoo's tiny model: every request's
# prompt and output token counts as asked (the server's own usage, the
# prompt as ids), none failed, the schedule kept (every request sent, its
# lateness measured, in schedule order), the chunks' tokens equal to the
# usage; the same through llama.cpp's own /completion (--api llama): each
# event's ids, one token each, as many as the final event counts, and the
# server's timings of every request. No timing is asserted. Skips (77) without llama.cpp or a built
# llama-server.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../llama/server.sh"
need_llama_server # first: need_llama moves XDG_CACHE_HOME, where the server's cache is
need_llama

expect_exit 0 "zoo export llama-tiny" -- "$IB" zoo export llama-tiny -o "$TMP/tiny.gguf"
llama_server_start_or_end "$TMP/tiny.gguf" --alias tiny -c 512 -np 2 -t 2 -tb 2

expect_exit 0 "serve --endpoint: 6 requests, prompts of 8..24 tokens, outputs of 3..6" -- \
  "$IB" serve --endpoint "$LLAMA_SERVER_URL" --model tiny --rate 5 --requests 6 --prompt-tokens 8..24 \
  --new-tokens 3..6 --warmup-requests 1 --json "$TMP/r.json"
grep -q "^failures: none of 6 requests" "$TMP/out" && pass "  ... none failed" || fail "  ... $(cat "$TMP/out")"
python3 - "$TMP/r.json" >"$TMP/py" 2>&1 <<'PY' && pass "  ... every request's tokens as asked, the schedule kept" || fail "  ... $(cat "$TMP/py")"
import json, sys
d = json.load(open(sys.argv[1]))
e = d["endpoint"]
assert d["figures"]["completed"] == 6 and e["failed"] == 0, e["failures"]
assert e["vocab"] > 259, e["vocab"]  # the server's n_vocab, from /v1/models
assert e["lateness_ms"]["n"] == 6
prev = -1
for q, r in zip(e["requests"], d["requests"]):
    assert q["failure"] == "ok" and q["http_status"] == 200, q
    assert q["usage_tokens"] == r["output_tokens"] == r["generated_tokens"], (q, r)
    assert q["usage_prompt_tokens"] == r["prompt_tokens"], (q, r)  # the ids, never re-tokenized
    assert q["chunk_tokens"] == q["usage_tokens"] and sum(q["chunk_tokens_each"]) == q["usage_tokens"], q
    assert not q["tokens_assumed"], q  # llama-server states each chunk's count
    assert q["sent_ms"] >= r["scheduled_ms"] and q["sent_ms"] >= prev, (q, r)
    assert r["first_token_ms"] >= q["sent_ms"] and r["end_ms"] >= r["first_token_ms"], r
    prev = q["sent_ms"]
PY

expect_exit 0 "serve --endpoint --api llama: llama.cpp's own /completion, the same requests" -- \
  "$IB" serve --endpoint "$LLAMA_SERVER_URL" --model tiny --api llama --rate 5 --requests 6 --prompt-tokens 8..24 \
  --new-tokens 3..6 --warmup-requests 1 --json "$TMP/n.json"
python3 - "$TMP/n.json" >"$TMP/py" 2>&1 <<'PY' && pass "  ... every request's tokens as asked, one id an event, the server's timings" || fail "  ... $(cat "$TMP/py")"
import json, sys
d = json.load(open(sys.argv[1]))
e = d["endpoint"]
assert e["api"] == "llama" and d["figures"]["completed"] == 6 and e["failed"] == 0, e["failures"]
for q, r in zip(e["requests"], d["requests"]):
    assert q["failure"] == "ok" and q["usage_tokens"] == r["output_tokens"] == r["generated_tokens"], (q, r)
    assert q["usage_prompt_tokens"] == r["prompt_tokens"], (q, r)  # tokens_evaluated: the ids sent
    # Each event's count: one token an event, but for a token whose text ends inside a UTF-8
    # character (a byte token): llama-server sends no event (so no id) for it, and the next
    # event counts both; the ids reach the client for every other token.
    each = q["chunk_tokens_each"]
    assert sum(each) == q["chunk_tokens"] == q["usage_tokens"] and all(k >= 1 for k in each), q
    # One id an event but the final one (which counts a last token held back, if any).
    assert len(each) - 1 <= q["id_tokens"] <= len(each) and q["id_tokens"] <= q["usage_tokens"], q
    assert not q["tokens_assumed"], q
    # Its timings: the prompt's tokens processed and those from its cache make the prompt.
    assert q["server_prompt_n"] + q["server_cache_n"] == r["prompt_tokens"], q
    assert q["server_prompt_ms"] > 0 and q["server_predicted_ms"] >= 0, q
t = e["server_timings"]
assert t["prompt_ms"]["n"] == 6 and t["decode_ms_per_token"]["n"] == 6, t
PY

expect_exit 0 "serve --endpoint --pitfalls (docs/serve-endpoint.md, \"Pitfalls\")" -- \
  "$IB" serve --endpoint "$LLAMA_SERVER_URL" --model tiny --rate 5 --requests 6 --prompt-tokens 8..24 \
  --new-tokens 3..6 --warmup-requests 1 --pitfalls --json "$TMP/pf.json"
python3 - "$TMP/pf.json" >"$TMP/py" 2>&1 <<'PY' && pass "  ... every row, the measured ones measured" || fail "  ... $(cat "$TMP/py")"
import json, sys
rows = {p["key"]: p for p in json.load(open(sys.argv[1]))["pitfalls"]}
assert sorted(rows) == sorted(["ttft_from_admission", "all_at_time_zero", "no_warmup", "mean_of_request_tpot",
                               "repeated_prompt", "decode_only_tpot", "chunk_gaps_as_token_gaps"]), rows.keys()
for k in ("ttft_from_admission", "all_at_time_zero", "no_warmup", "mean_of_request_tpot", "repeated_prompt",
          "chunk_gaps_as_token_gaps"):
    r = rows[k]
    assert r["applies"] and r["status"] == "ok" and r["reports"] > 0 and r["correct"] > 0 and r["verdict"], r
PY

pid=$LLAMA_SERVER_PID
llama_server_stop
kill -0 "$pid" 2>/dev/null && fail "llama-server $pid still running" || pass "the server stopped by its pid"
finish
