# Shared by the CLI test scripts: sourced, with the program path in $IB.
# Each check prints "ok"/"FAIL" lines; finish prints the closing count line
# and exits 0 only when nothing failed.
set -u
IB=${1:?usage: script.sh PATH/TO/inferbench}
TMP=$(mktemp -d "${IB_TEST_TMP:-/tmp}/ibtest.XXXXXX" 2>/dev/null || mktemp -d)
# The program keeps its calibration record in its state folder: a test's own.
export XDG_STATE_HOME="$TMP/state"
trap 'rm -rf "$TMP"' EXIT
passed=0
failed=0

pass() { passed=$((passed + 1)); echo "ok   $*"; }
fail() { failed=$((failed + 1)); echo "FAIL $*"; }

# expect_exit CODE DESCRIPTION -- COMMAND...: runs it, checks its exit code
# and, for a failure, that stderr is exactly one line. Output in $TMP/out,
# $TMP/err.
expect_exit() {
  local want=$1 what=$2; shift 3
  "$@" >"$TMP/out" 2>"$TMP/err" </dev/null
  local got=$?
  if [ "$got" -ne "$want" ]; then
    fail "$what: exit $got, expected $want; stderr: $(head -c 300 "$TMP/err")"
    return 1
  fi
  if [ "$want" -ne 0 ] && [ "$(grep -c '' "$TMP/err")" -ne 1 ]; then
    fail "$what: expected one line on stderr, got: $(cat "$TMP/err")"
    return 1
  fi
  pass "$what"
}

# need_llama: skips the script (77) when set-up has not installed
# llama.cpp's CPU build, else keeps the zoo's GGUF files in the test's own
# cache ($TMP/cache/inferbench/zoo).
need_llama() {
  if [ ! -d "$(dirname "${BASH_SOURCE[0]}")/../../.cache/llama-cpp-3.22.1/lib" ]; then
    echo "skipped: no llama.cpp in .cache (scripts/setup.sh installs it)"
    exit 77
  fi
  unset INFERBENCH_ZOO_CACHE
  export XDG_CACHE_HOME="$TMP/cache"
}

# need_script_server: skips the test (77) when the program was built
# without libmicrohttpd, so has no scripted server (docs/script-server.md).
need_script_server() {
  "$IB" script-server --ttft-ms -1 2>"$TMP/probe" </dev/null
  if grep -q 'built without libmicrohttpd' "$TMP/probe"; then
    echo "skipped: $(cat "$TMP/probe")"
    exit 77
  fi
}

# expect_grep PATTERN FILE DESCRIPTION
expect_grep() {
  if grep -qE -- "$1" "$2"; then pass "$3"; else fail "$3: /$1/ not in $2: $(head -c 300 "$2")"; fi
}

# json_check FILE PYTHON-EXPR DESCRIPTION: the expression, over the parsed
# document d, must be true.
json_check() {
  if python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1" 2>"$TMP/pyerr"; then
    pass "$3"
  else
    fail "$3: ($2) is false on $1 $(cat "$TMP/pyerr")"
  fi
}

# on_tty FILE COMMAND...: runs it with stdout and stderr on a pseudo-terminal
# (as in a person's terminal), the bytes it wrote in FILE; its exit code.
on_tty() {
  local file=$1
  shift
  python3 - "$file" "$@" <<'PY'
import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
out = b""
while True:
    try:
        data = os.read(fd, 65536)
    except OSError:
        break
    if not data:
        break
    out += data
_, status = os.waitpid(pid, 0)
open(sys.argv[1], "wb").write(out)
sys.exit(os.waitstatus_to_exitcode(status))
PY
}

# wait_for GLOB SECONDS: true once a path matches GLOB, polled every 50 ms
# for at most SECONDS: a signal sent after an event the test can see (a
# file), not after a guess at how long the event takes on a loaded machine.
wait_for() {
  local glob=$1 left=$(($2 * 20))
  while [ "$left" -gt 0 ]; do
    compgen -G "$glob" >/dev/null && return 0
    sleep 0.05
    left=$((left - 1))
  done
  return 1
}

# alive PID: the process runs (one that has ended but is not yet reaped, a
# zombie, does not).
alive() {
  kill -0 "$1" 2>/dev/null && [ "$(ps -o stat= -p "$1" 2>/dev/null | cut -c1)" != Z ]
}

# wait_while_alive PID SECONDS COMMAND...: runs COMMAND every 0.1 s while
# the process PID runs: 0 once it succeeds; 1 once the process has ended
# without it (at once: a server that died at its start is not waited for);
# 2 after SECONDS. The cap only bounds a hang: make it generous (a loaded
# machine is slow, not stuck). COMMAND false waits for the process to end.
wait_while_alive() {
  local pid=$1 deadline=$((SECONDS + $2))
  shift 2
  while ! "$@"; do
    # What it waits for may have come just before the process ended.
    alive "$pid" || { "$@"; return $(($? == 0 ? 0 : 1)); }
    [ "$SECONDS" -lt "$deadline" ] || return 2
    sleep 0.1
  done
}

# The scripted server as a process (inferbench script-server,
# docs/script-server.md), for the tests that run a client against it:
#
#   script_server_start --model tiny --ttft-ms 1 --itl-ms 0.5
#   "$IB" serve --endpoint "$url" --model tiny ...
#   script_server_stop          # SIGINT, reaped: its exit code
#   script_server_start ...     # again: a fresh server, its own URL
#
# script_server_start ARG...: starts `inferbench script-server ARG...` and
# waits for the URL it prints on its first line, while it runs (at most
# 120 s). Sets url (http://127.0.0.1:PORT), pid, and server_out and
# server_err, its stdout and stderr ($TMP/script-server.N.out and .err:
# after the stop, line 2 of server_out is its summary). Each start has new
# files, made empty before the server starts, so a restart never reads the
# previous server's URL (a file written by `>` is truncated only once the
# child runs, which a loaded machine delays). A server that exits first or
# prints no URL fails the test at once, with its stderr, and ends the script.
# The server gets SIGTERM when the script ends (setpriv's parent-death
# signal), so that neither a failure nor ctest's timeout leaves it running.
script_server_n=0
script_server_start() {
  script_server_n=$((script_server_n + 1))
  server_out="$TMP/script-server.$script_server_n.out"
  server_err="$TMP/script-server.$script_server_n.err"
  : >"$server_out"
  : >"$server_err"
  setpriv --pdeathsig TERM "$IB" script-server "$@" >"$server_out" 2>"$server_err" </dev/null &
  pid=$!
  wait_while_alive "$pid" 120 script_server_has_url
  case $? in
    0) return 0 ;;
    1) wait "$pid"; fail "script-server $*: exited ($?) before printing its URL: $(head -c 300 "$server_err")" ;;
    *) fail "script-server $*: no URL within 120 s: $(head -c 300 "$server_err")" ;;
  esac
  finish
  exit 1
}
# A whole first line: read fails on one still without its newline.
script_server_has_url() { IFS= read -r url <"$server_out"; }

# script_server_stop: SIGINT to the last server started (it writes its
# stamps and summary, exit 0), reaped; returns its exit code. One still
# running 120 s later fails the test and is killed.
script_server_stop() {
  kill -INT "$pid"
  wait_while_alive "$pid" 120 false
  if [ $? = 2 ]; then
    fail "script-server $pid still running 120 s after SIGINT: killed"
    kill -KILL "$pid"
  fi
  wait "$pid"
}

# record TEXT: a figure that depends on the machine (its speed, its load),
# never a verdict: a red run must mean a bug (issue 28). Printed, and added
# to $IB_RECORD when it is set (docs/measurements.md keeps them).
record() {
  echo "record: $*"
  if [ -n "${IB_RECORD:-}" ]; then echo "$(basename "$0"): $*" >>"$IB_RECORD"; fi
  return 0
}

# json_record FILE EXPR TEXT: record TEXT and the value of the Python
# expression EXPR over FILE's JSON document (d).
json_record() {
  record "$3: $(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1" 2>&1)"
}

# make_models: writes the model files of tests/fuzz/make_bad_models.c
# (broken ones and small valid fixtures) into $M; skips the test (77) where
# the generator is not built.
make_models() {
  local gen=${IB_MAKE_BAD_MODELS:-$(dirname "$IB")/tests/make_bad_models}
  if [ ! -x "$gen" ]; then
    echo "skip: the generator make_bad_models is not built ($gen)"
    exit 77
  fi
  M="$TMP/models"
  mkdir -p "$M" && "$gen" "$M" >/dev/null || { echo "FAIL make_bad_models $M"; exit 1; }
}

# progress_erased FILE REPORT: on_tty's FILE shows a progress line erased
# before the report, which starts with the text REPORT: none drawn after it.
progress_erased() {
  python3 - "$1" "$2" <<'PY'
import sys
t = open(sys.argv[1], "rb").read().decode()
report = t.index(sys.argv[2])
assert "\x1b[K" in t[:report] and t.rindex("\x1b[K") < report and t[:report].endswith("\r\x1b[K")
PY
}

# no_progress FILE: on_tty's FILE holds no progress line: a terminal ends
# lines with CR LF, so any other CR, or an escape, is one.
no_progress() {
  python3 -c 'import sys; t = open(sys.argv[1]).read().replace("\r\n", "\n"); sys.exit("\r" in t or "\x1b" in t)' "$1"
}

finish() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}

# golden_files NAME DIR GOLDEN: each file a case wrote in DIR, put through
# the script's own mask (a function mask FILE), against GOLDEN/NAME.FILE
# byte for byte; a golden file of NAME that DIR lacks fails too. With
# IB_GOLDEN_UPDATE=1 the files are copied there instead (golden_*.sh).
golden_files() {
  local name=$1 dir=$2 GOLDEN=$3
  for f in "$dir"/*; do
    mask "$f"
    local want="$GOLDEN/$name.$(basename "$f")"
    if [ "${IB_GOLDEN_UPDATE:-0}" = 1 ]; then
      mkdir -p "$GOLDEN"
      cp "$f" "$want"
    elif [ ! -f "$want" ]; then
      fail "$name: $(basename "$f") written, but there is no $want"
    elif cmp -s "$f" "$want"; then
      pass "$name: $(basename "$f") as golden"
    else
      fail "$name: $(basename "$f") differs from $want: $(diff "$want" "$f" | head -c 600)"
    fi
  done
  # A golden file the case no longer writes is a difference too.
  for want in "$GOLDEN/$name".*; do
    [ -e "$want" ] || continue
    [ -e "$dir/${want#"$GOLDEN/$name."}" ] || fail "$name: golden $(basename "$want") not written any more"
  done
}

# html_check FILE PYTHON-EXPR DESCRIPTION: the expression, over the page's
# text s and its tags (a list of (tag, attrs) in document order), must be
# true; the page must parse without errors.
html_check() {
  if python3 - "$1" "$2" 2>"$TMP/pyerr" <<'PY'
import sys
from html.parser import HTMLParser
VOID = {"meta", "br", "link", "img", "hr", "input"}
class P(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags = []
        self.open = []
    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag not in VOID:
            self.open.append(tag)
    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
    def handle_endtag(self, tag):
        # Every element closed, in order: a broken page fails here.
        if not self.open or self.open.pop() != tag:
            raise SystemExit("unbalanced </%s>" % tag)
s = open(sys.argv[1], encoding="utf-8").read()
p = P()
p.feed(s)
p.close()
if p.open:
    raise SystemExit("unclosed: %s" % p.open)
tags = p.tags
def count(tag, cls=None):
    return sum(1 for t, a in tags if t == tag and (cls is None or a.get("class") == cls))
sys.exit(0 if eval(sys.argv[2]) else 1)
PY
  then pass "$3"; else fail "$3: ($2) is false on $1 $(cat "$TMP/pyerr")"; fi
}
