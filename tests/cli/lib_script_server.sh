#!/bin/bash
# lib.sh's own helpers for the tests that run a process beside them:
# wait_while_alive (what it returns for a process that ended, a command
# met, a cap passed) and script_server_start/stop (a restart reads its own
# server's URL, never one already in its file; a server that exits at its
# start ends the script with one FAIL line; the script's exit, or its
# death, stops a server left running). No timing is asserted.
. "$(dirname "$0")/lib.sh"

if ! command -v curl >/dev/null; then echo "skipped: no curl"; exit 77; fi
need_script_server
LIB="$(cd "$(dirname "$0")" && pwd)/lib.sh"

# wait_while_alive: an ended process is not waited for (a cap of 600 s,
# ctest's timeout, would fail the test if it were).
sleep 0 &
gone=$!
wait "$gone"
wait_while_alive "$gone" 600 false
code=$?
[ $code = 1 ] && pass "wait_while_alive: 1 for a process that has ended" || fail "wait_while_alive: $code for an ended process"
wait_while_alive "$gone" 600 true && pass "  ... 0 when the command holds" || fail "  ... not 0 for true"
(echo done >"$TMP/last") &
wait_while_alive $! 600 test -s "$TMP/last" && pass "  ... 0 for what the process did before it ended" || fail "  ... the last event missed"
sleep 600 &
long=$!
wait_while_alive "$long" 1 false
code=$?
[ $code = 2 ] && pass "  ... 2 once the cap has passed" || fail "  ... $code after the cap"
kill "$long"
wait "$long" 2>/dev/null

# A restart: the second start's file holds a stale URL before the server
# starts (as a file reused by the previous server would); the URL read is
# the new server's, which answers.
script_server_start --model tiny
first=$url
script_server_stop
[ $? = 0 ] && ! alive "$pid" && pass "script_server_stop: exit 0 after SIGINT, reaped" || fail "script_server_stop: $pid still running or exit not 0"
echo "http://127.0.0.1:1" >"$TMP/script-server.2.out"
script_server_start --model tiny
[ "$url" != "http://127.0.0.1:1" ] && [ "$server_out" = "$TMP/script-server.2.out" ] \
  && pass "a restart reads its own server's URL, not one already in its file" || fail "a restart read '$url' from $server_out"
code=$(curl -s -o /dev/null -w '%{http_code}' "$url/health")
[ "$code" = 200 ] && pass "  ... which answers" || fail "  ... $url/health: $code (the first server was $first)"
script_server_stop

# A server that exits at its start: one FAIL line with its stderr, the
# script ended (exit 1).
bash -c '. "$1" "$2"; script_server_start --ttft-ms -1; echo "went on"' _ "$LIB" "$IB" >"$TMP/died" 2>&1
code=$?
[ $code = 1 ] && grep -qx "FAIL script-server --ttft-ms -1: exited (2) before printing its URL: inferbench: script: ttft -1 ms is not a time >= 0" "$TMP/died" \
  && ! grep -q "went on" "$TMP/died" && pass "a server that exits at its start: one FAIL line, the script ended" || fail "exit $code: $(cat "$TMP/died")"

# A script that ends with its server running, and one killed outright
# (ctest's timeout): neither leaves it behind.
for end in 'exit 3' 'kill -KILL $$'; do
  bash -c '. "$1" "$2"; script_server_start --model tiny; echo "$pid" >"$3"; '"$end" _ "$LIB" "$IB" "$TMP/pid" >/dev/null 2>&1
  left=$(cat "$TMP/pid")
  wait_while_alive "$left" 120 false
  if alive "$left"; then
    fail "a script ended by '$end' left script-server $left running"
    kill -KILL "$left"
  else
    pass "a script ended by '$end' leaves no server"
  fi
done
finish
