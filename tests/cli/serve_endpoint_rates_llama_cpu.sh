#!/usr/bin/env bash
# serve --endpoint --rates through the real llama-server (built for the CPU
# by scripts/build-llama-server.sh, started on 127.0.0.1 by
# tests/llama/server.sh) serving the zoo's tiny model: a curve of two
# rates, every rate's requests sent and completed with the prompt and
# output token counts asked (the server's own usage), none failed or cut,
# the run at the knee kept with its endpoint block; the server stopped by
# its pid. No timing is asserted. Skips (77) without llama.cpp or a built
# llama-server.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../llama/server.sh"
need_llama_server # first: need_llama moves XDG_CACHE_HOME, where the server's cache is
need_llama

expect_exit 0 "zoo export llama-tiny" -- "$IB" zoo export llama-tiny -o "$TMP/tiny.gguf"
llama_server_start_or_end "$TMP/tiny.gguf" --alias tiny -c 512 -np 2 -t 2 -tb 2

expect_exit 0 "serve --endpoint --rates 2,4: 5 requests a rate, prompts of 8..24 tokens, outputs of 3..6" -- \
  "$IB" serve --endpoint "$LLAMA_SERVER_URL" --model tiny --rates 2,4 --requests 5 --prompt-tokens 8..24 \
  --new-tokens 3..6 --warmup-requests 1 --json "$TMP/c.json"
grep -q "^the curve over 2 rates:" "$TMP/out" && pass "  ... the curve's table" || fail "  ... $(cat "$TMP/out")"
python3 - "$TMP/c.json" >"$TMP/py" 2>&1 <<'PY' && pass "  ... every rate's requests completed, the run at the answer's tokens as asked" || fail "  ... $(cat "$TMP/py")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["kind"] == "curve" and [p["offered_rate"] for p in d["points"]] == [2, 4], d["points"]
for p in d["points"]:
    assert p["scheduled"] == p["admitted"] == p["completed"] == 5, p
    assert p["failed"] == 0 and p["cut"] == 0 and not p["ended_early"], p
at, e = d["at"], d["at"]["endpoint"]
assert at["figures"]["completed"] == 5 and e["failed"] == 0 and e["lateness_ms"]["n"] == 5, e["failures"]
for q, r in zip(e["requests"], at["requests"]):
    assert q["failure"] == "ok" and q["http_status"] == 200, q
    assert q["usage_tokens"] == r["output_tokens"] == r["generated_tokens"], (q, r)
    assert q["usage_prompt_tokens"] == r["prompt_tokens"], (q, r)  # the ids, never re-tokenized
    assert q["chunk_tokens"] == q["usage_tokens"] and not q["tokens_assumed"], q
PY

pid=$LLAMA_SERVER_PID
llama_server_stop
kill -0 "$pid" 2>/dev/null && fail "llama-server $pid still running" || pass "the server stopped by its pid"
finish
