#!/usr/bin/env bash
# The real llama-server (built for the CPU from set-up's llama.cpp source:
# scripts/build-llama-server.sh) serves the zoo's tiny model, exported by
# inferbench with its synthetic vocabulary: one request streamed through
# it with curl, prompt as token ids, 5 tokens forced (ignore_eos), the
# usage asked; then no server is left behind, after a passing script and
# after one that fails or is killed (tests/llama/server.sh). Only
# 127.0.0.1. Skips (77) without llama.cpp or a built llama-server.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../llama/server.sh"
need_llama_server # first: need_llama moves XDG_CACHE_HOME, where the server's cache is
need_llama

expect_exit 0 "zoo export llama-tiny" -- "$IB" zoo export llama-tiny -o "$TMP/tiny.gguf"
SERVER_ARGS=(-c 256 -np 1 -t 2 -tb 2)
llama_server_start_or_end "$TMP/tiny.gguf" "${SERVER_ARGS[@]}"

# One streamed completion: 8 prompt tokens as ids (<s> and pieces of the
# zoo's vocabulary), 5 new ones whatever the model would end on. A chunk
# may carry more than one token: the server holds back a byte token that
# is not a whole UTF-8 character (the zoo's vocabulary has 128 of them)
# and sends it with the next. So the tokens are counted from llama.cpp's
# per-chunk timings (predicted_n, the tokens so far: timings_per_token),
# not from the chunks.
cat >"$TMP/request.json" <<'EOF'
{"model": "tiny", "prompt": [1, 300, 301, 302, 303, 304, 305, 306], "max_tokens": 5, "stream": true,
 "ignore_eos": true, "temperature": 0, "stream_options": {"include_usage": true}, "timings_per_token": true}
EOF
if llama_server_stream "$TMP/request.json" "$TMP/events.json" 2>"$TMP/stream.err"; then
  pass "the stream read to its end"
else
  fail "the stream: $(cat "$TMP/stream.err")"
fi
json_check "$TMP/events.json" 'd["chunks"] and all(c["predicted_n"] is not None for c in d["chunks"])' \
  "every chunk says the tokens so far"
json_check "$TMP/events.json" 'd["chunks"] and d["chunks"][-1]["predicted_n"] == 5' "5 tokens generated"
json_check "$TMP/events.json" \
  'all(0 < b["predicted_n"] - a["predicted_n"] for a, b in zip(d["chunks"], d["chunks"][1:]) if b["text"])' \
  "each chunk with text carries at least one token"
python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))
print("info:", sum(1 for c in d["chunks"] if c["text"]), "chunks of text for", d["chunks"][-1]["predicted_n"], "tokens")' \
  "$TMP/events.json" 2>/dev/null
json_check "$TMP/events.json" 'd["usage"] and d["usage"]["completion_tokens"] == 5' "usage: completion_tokens 5"
json_check "$TMP/events.json" 'd["usage"] and d["usage"]["prompt_tokens"] == 8' "usage: prompt_tokens 8 (the ids as sent)"
json_check "$TMP/events.json" 'd["chunks"] and d["chunks"][-1]["finish_reason"] == "length"' "finished by length"
json_check "$TMP/events.json" 'd["done"] and not d["other"]' "then [DONE], nothing else"

pid=$LLAMA_SERVER_PID
llama_server_stop
if kill -0 "$pid" 2>/dev/null; then fail "llama-server $pid still running after stop"; else pass "stopped by its pid"; fi
if curl --noproxy '*' -s -o /dev/null --max-time 5 "$LLAMA_SERVER_URL/health"; then
  fail "something still answers on $LLAMA_SERVER_URL"
else
  pass "nothing answers on its port"
fi

# A script that fails with the server running, and one killed outright
# (as ctest's timeout kills): neither leaves it behind.
child() {
  bash -c '. "$1/cli/lib.sh" "$2"; . "$1/llama/server.sh"; LLAMA_SERVER_BIN=$3
           llama_server_start "$4" -c 256 -np 1 -t 1 || exit 3; echo "$LLAMA_SERVER_PID" >"$5"; '"$1" \
    _ "$(cd "$(dirname "$0")/.." && pwd)" "$IB" "$LLAMA_SERVER_BIN" "$TMP/tiny.gguf" "$2"
}
child 'exit 1' "$TMP/pid.failed" >/dev/null 2>&1
child 'kill -KILL $$' "$TMP/pid.killed" >/dev/null 2>&1
for how in failed killed; do
  pid=$(cat "$TMP/pid.$how" 2>/dev/null)
  if [ -z "$pid" ]; then fail "$how script: the server did not start"; continue; fi
  wait_while_alive "$pid" 120 false
  if alive "$pid"; then
    fail "a $how script left llama-server $pid running"
    kill -KILL "$pid"
  else
    pass "a $how script leaves no server"
  fi
done
finish
