# llama-server for the tests (docs/backend-llama.md, "llama-server for the
# tests"): sourced by a test script after tests/cli/lib.sh ($TMP set).
#
#   need_llama_server                    # skips (77) where none is built
#   llama_server_start MODEL.gguf [ARG...]  # on 127.0.0.1, a free port; waits for /health
#   llama_server_start_or_end MODEL.gguf [ARG...]  # the same, a pass line, or a fail line and exit 1
#   llama_server_start_on_gpu MODEL.gguf [ARG...]  # the same, then a line: its weights on the GPU
#   ... $LLAMA_SERVER_URL (http://127.0.0.1:PORT), $LLAMA_SERVER_PID ...
#   llama_server_stream REQUEST.json EVENTS.json   # one streamed /v1/completions, its events
#   llama_server_stop                    # by its pid; also on the script's exit
#
# Only loopback: the server listens on 127.0.0.1 and curl is asked to
# reach it past any proxy of the environment (--noproxy). The server runs
# with the parent-death signal set (setpriv --pdeathsig), so that a test
# killed outright (ctest's timeout) takes it along; an ordinary exit, a
# failure included, stops it through the EXIT trap.

LLAMA_SERVER_BIN=""
LLAMA_SERVER_PID=""
LLAMA_SERVER_URL=""
# IB_LLAMA_SERVER_LOG: where the server's log goes, kept after the test
# (default: the test's folder, removed with it).
LLAMA_SERVER_LOG="${IB_LLAMA_SERVER_LOG:-$TMP/llama-server.log}"
# How long the server may take to load a model and answer /health.
LLAMA_SERVER_START_S=${LLAMA_SERVER_START_S:-120}

# need_llama_server: the server scripts/build-llama-server.sh built (or
# IB_LLAMA_SERVER), else the script is skipped with the line saying how.
need_llama_server() {
  local root
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  if ! LLAMA_SERVER_BIN=$("$root/scripts/build-llama-server.sh" --find 2>"$TMP/find.err"); then
    echo "skipped: $(cat "$TMP/find.err")"
    exit 77
  fi
}

# A port nothing listens on now (the kernel's choice for a socket bound to
# port 0). Another process may take it before the server binds it: start
# tries again then.
llama_server_free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# The curl program without the caller's LD_LIBRARY_PATH: on the device
# machine that path holds the libcurl inferbench was built against (the
# packed Debian one), older than the one the machine's curl needs (a
# symbol lookup error at every call).
host_curl() { env -u LD_LIBRARY_PATH curl "$@"; }

# llama_server_healthy: /health answers 200 (503 while the model loads).
llama_server_healthy() {
  [ "$(host_curl --noproxy '*' -s -o /dev/null -w '%{http_code}' --max-time 5 "$LLAMA_SERVER_URL/health")" = 200 ]
}

# llama_server_start MODEL [ARG...]: returns 0 once /health answers 200;
# 1 with the log's last lines on stderr when the server exits or does not
# answer in time (then it is stopped).
llama_server_start() {
  local model=$1 attempt port
  shift
  for attempt in 1 2 3; do
    port=$(llama_server_free_port)
    LLAMA_SERVER_URL="http://127.0.0.1:$port"
    setpriv --pdeathsig TERM "$LLAMA_SERVER_BIN" -m "$model" --host 127.0.0.1 --port "$port" "$@" \
      >"$LLAMA_SERVER_LOG" 2>&1 </dev/null &
    LLAMA_SERVER_PID=$!
    wait_while_alive "$LLAMA_SERVER_PID" "$LLAMA_SERVER_START_S" llama_server_healthy && return 0
    # The port taken by another (the only failure worth a second try).
    local lost_port=""
    grep -qiE 'address already in use|couldn.t bind' "$LLAMA_SERVER_LOG" && lost_port=1
    llama_server_stop
    [ -n "$lost_port" ] || break
  done
  echo "llama-server did not start (${LLAMA_SERVER_START_S} s): $(tail -5 "$LLAMA_SERVER_LOG")" >&2
  return 1
}

# llama_server_start_or_end MODEL [ARG...]: llama_server_start as a
# test's step (lib.sh's pass, fail and finish): its pass line, or its fail
# line with the server's words and the script ended (exit 1), as nothing
# after it can run without the server.
llama_server_start_or_end() {
  if llama_server_start "$@" 2>"$TMP/start.err"; then
    pass "llama-server answers /health on $LLAMA_SERVER_URL"
  else
    fail "llama-server: $(cat "$TMP/start.err")"
    finish
    exit 1
  fi
}

# The GPU's used memory in MiB (the first GPU's), as nvidia-smi reports it.
gpu_memory_used_mib() {
  nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -1 | tr -d ' '
}

# llama_server_start_on_gpu MODEL [ARG...]: llama_server_start_or_end, then
# a pass line when the GPU's used memory grew by at least the model file's
# size while the server started (its weights are on the GPU), else a fail
# line. Not from the server's log: this release writes the loader's
# "offloaded N/M layers to GPU" only from verbosity 4 (-lv 4: llama's info
# messages are its trace level), which also logs lines at every request of
# the server being measured. Another process starting on the GPU meanwhile
# could pass it; nothing else runs on the lent machine.
llama_server_start_on_gpu() {
  local model=$1 before after model_mib
  before=$(gpu_memory_used_mib)
  llama_server_start_or_end "$@"
  after=$(gpu_memory_used_mib)
  model_mib=$(( $(stat -c %s "$model") / 1048576 ))
  echo "server on the GPU: used memory $before -> $after MiB, the model $model_mib MiB"
  if [ $(( after - before )) -ge "$model_mib" ]; then
    pass "the server's weights on the GPU ($(( after - before )) MiB more used)"
  else
    fail "the server's weights not on the GPU: $(( after - before )) MiB more used, the model is $model_mib MiB"
  fi
}

# llama_server_stream REQUEST.json EVENTS.json: POSTs the request to the
# server's /v1/completions (a streamed one) and writes what came as one
# JSON document: {"chunks": [choices[0] of each event that had one, with
# "predicted_n": the tokens generated so far, from the event's llama.cpp
# "timings" (the request's "timings_per_token": true), else null],
# "usage": the usage event's, "done": [DONE] came, "other": lines that were
# not events}. 1 with curl's words on stderr when the transfer failed.
llama_server_stream() {
  local request=$1 events=$2 rc
  host_curl --noproxy '*' -sS -N --max-time 120 -H 'Content-Type: application/json' --data @"$request" \
    "$LLAMA_SERVER_URL/v1/completions" >"$events.sse" 2>"$events.err"
  rc=$?
  [ $rc = 0 ] || { echo "curl: exit $rc: $(cat "$events.err")" >&2; return 1; }
  python3 - "$events.sse" >"$events" <<'EOF'
import json, sys
chunks, usage, done, other = [], None, False, []
for line in open(sys.argv[1], encoding="utf-8"):
    line = line.rstrip("\r\n")
    if not line.startswith("data: "):
        if line: other.append(line)
        continue
    body = line[6:]
    if body == "[DONE]":
        done = True
        continue
    event = json.loads(body)
    if event.get("choices"):
        chunk = event["choices"][0]
        chunk["predicted_n"] = event.get("timings", {}).get("predicted_n")
        chunks.append(chunk)
    if event.get("usage"):
        usage = event["usage"]
json.dump({"chunks": chunks, "usage": usage, "done": done, "other": other}, sys.stdout)
EOF
}

# llama_server_stop: SIGTERM to its pid, SIGKILL after 10 s, reaped.
llama_server_stop() {
  [ -n "$LLAMA_SERVER_PID" ] || return 0
  kill -TERM "$LLAMA_SERVER_PID" 2>/dev/null
  wait_while_alive "$LLAMA_SERVER_PID" 10 false
  kill -KILL "$LLAMA_SERVER_PID" 2>/dev/null
  wait "$LLAMA_SERVER_PID" 2>/dev/null
  LLAMA_SERVER_PID=""
}

# The script's exit stops the server first, then does what lib.sh's trap
# did (removing $TMP).
llama_server_prev_trap=$(trap -p EXIT | sed -E "s/^trap -- '(.*)' EXIT$/\1/")
trap 'llama_server_stop; eval "$llama_server_prev_trap"' EXIT
