# No silent fallbacks: every option a command, a device or a mode does not
# use is refused (exit 2, one line naming it and why, no file left) or, when
# harmless, warned about once. The command x option matrix is read from the
# option table itself (the hidden --list-options), so the refusals and the
# help cannot drift from it. Also: ambiguous prefixes, zoo subcommands, and
# the progress line (shown on a terminal only, erased before the report).
. "$(dirname "$0")/lib.sh"

# --- every command x every option, from the table ---------------------------
"$IB" --list-options >"$TMP/table" || fail "--list-options"
expect_grep "^latency	--precision	P%	yes$" "$TMP/table" "the table lists latency --precision as taken"
expect_grep "^throughput	--batch	N	no$" "$TMP/table" "the table lists throughput --batch as refused"
matrix_ok=0
matrix_bad=0
while IFS=$'\t' read -r cmd opt arg takes; do
  words=(${cmd/-/ }) # zoo-list is typed "zoo list"
  [ -f "$TMP/help.$cmd" ] || "$IB" "${words[@]}" --help >"$TMP/help.$cmd"
  listed=no
  grep -qE -- "^  $opt( |$)" "$TMP/help.$cmd" && listed=yes
  if [ "$takes" = yes ]; then
    if [ "$listed" = yes ]; then matrix_ok=$((matrix_ok + 1)); else
      matrix_bad=$((matrix_bad + 1)); fail "$cmd --help does not list $opt"; fi
    continue
  fi
  value=()
  [ "$arg" != - ] && value=(1)
  "$IB" "${words[@]}" "$opt" "${value[@]}" >"$TMP/out" 2>"$TMP/err" </dev/null
  code=$?
  if [ "$listed" = no ] && [ "$code" -eq 2 ] && [ "$(grep -c '' "$TMP/err")" -eq 1 ] &&
    grep -qE -- "^inferbench $cmd: $opt does not apply to this command" "$TMP/err"; then
    matrix_ok=$((matrix_ok + 1))
  else
    matrix_bad=$((matrix_bad + 1))
    fail "$cmd $opt: listed in help: $listed, exit $code: $(head -c 200 "$TMP/err")"
  fi
done <"$TMP/table"
if [ "$matrix_bad" -eq 0 ] && [ "$matrix_ok" -gt 200 ]; then
  pass "$matrix_ok command x option pairs: listed where taken, refused elsewhere"
else
  fail "command x option matrix: $matrix_ok right, $matrix_bad wrong"
fi

# --- the rules of the table -------------------------------------------------
# refused DESCRIPTION PATTERN -- COMMAND...: exit 2, one line matching, and
# no file left in $TMP/out.d (where every --json of these points).
mkdir -p "$TMP/out.d"
refused() {
  local what=$1 pattern=$2
  shift 3
  expect_exit 2 "$what" -- "$@" || return
  expect_grep "$pattern" "$TMP/err" "$what: names the option and why"
  if [ -z "$(ls -A "$TMP/out.d")" ]; then pass "$what: no file left"; else
    fail "$what: left $(ls -A "$TMP/out.d")"; rm -f "$TMP/out.d"/*; fi
}
J=(--json "$TMP/out.d/r.json")
L=("$IB" latency zoo:mlp --device cpu "${J[@]}")
for opt in --max-time-ms --max-runs --min-runs; do
  refused "$opt without --precision" "^inferbench latency: $opt needs --precision: it bounds adaptive stopping$" -- \
    "${L[@]}" "$opt" 100
done
refused "--runs with --precision" "^inferbench latency: --runs cannot be given with --precision: .*--min-runs and --max-runs" -- \
  "${L[@]}" --runs 50 --precision 1%
refused "--precision then --runs" "^inferbench pitfalls: --runs cannot be given with --precision" -- \
  "$IB" pitfalls zoo:mlp --device cpu --precision 1% --runs 50 "${J[@]}"
refused "throughput --batch" "^inferbench throughput: --batch does not apply to this command: .*throughput searches it or measures --batches" -- \
  "$IB" throughput zoo:mlp --device cpu --batch 4 "${J[@]}"
refused "throughput --precision" "^inferbench throughput: --precision does not apply to this command: .*--runs runs per batch" -- \
  "$IB" throughput zoo:mlp --device cpu --precision 1% "${J[@]}"
refused "calibrate --exclude-launch" "^inferbench calibrate: --exclude-launch does not apply" -- \
  "$IB" calibrate --exclude-launch "${J[@]}"

# CUDA-only options on the CPU: refused once the device is known, before
# anything is measured (the --json temporary file is gone too).
for opts in "--prefer-nhwc" "--cudnn-search heuristic" "--cuda-graph" "--device-id 1" "--flush-l2" "--exclude-launch"; do
  opt=${opts%% *}
  # (--cuda-graph is refused as early by the runtime's set-up, in its words)
  refused "latency --device cpu $opts" "^inferbench: $opt (applies to CUDA only: the model runs on the CPU$|needs the CUDA execution provider)" -- \
    "${L[@]}" $opts
done
refused "throughput --device cpu --flush-l2" "^inferbench: --flush-l2 applies to CUDA only" -- \
  "$IB" throughput zoo:mlp --device cpu --batches 1 --flush-l2 "${J[@]}"
refused "pitfalls --device cpu --prefer-nhwc" "^inferbench: --prefer-nhwc applies to CUDA only" -- \
  "$IB" pitfalls zoo:mlp --device cpu --prefer-nhwc "${J[@]}"
if ! "$IB" info >/dev/null 2>&1; then # no usable GPU: auto resolves to the CPU
  # Said from the machine, not from the device auto fell back to (issue 28).
  refused "--device auto resolving to the CPU, --exclude-launch" "^inferbench: --exclude-launch applies to CUDA only: the model runs on the CPU, as this machine has no CUDA device$" -- \
    "$IB" latency zoo:mlp "${J[@]}" --exclude-launch
  refused "--device auto resolving to the CPU, --cuda-graph" "^inferbench: --cuda-graph needs the CUDA execution provider: the model would run on the CPU, as this machine has no usable CUDA device$" -- \
    "$IB" latency zoo:mlp "${J[@]}" --cuda-graph
  refused "--device auto, --sessions 2 --require-idle-gpu" "^inferbench: --require-idle-gpu applies to CUDA only: the model runs on the CPU, as this machine has no CUDA device$" -- \
    "$IB" latency zoo:mlp "${J[@]}" --sessions 2 --require-idle-gpu --runs 5
  refused "--device auto, fake backend, --flush-l2" "^inferbench: --flush-l2 applies to CUDA only: the model runs on the CPU, as this machine has no CUDA device$" -- \
    "$IB" latency --backend fake "${J[@]}" --flush-l2
  for cmd in "latency zoo:mlp" "latency zoo:mlp --device cuda" "throughput zoo:mlp" "pitfalls zoo:mlp" \
    "serve zoo:mlp --rate 10" "best zoo:mlp" "calibrate" "latency zoo:mlp --sessions 2"; do
    refused "$cmd --device-id 7 without a GPU" "^inferbench: there is no CUDA device 7: this machine has none$" -- \
      "$IB" $cmd --device-id 7 "${J[@]}"
  done
  "$IB" info --device-id 7 >"$TMP/out" 2>&1
  code=$?
  if [ "$code" -eq 1 ]; then pass "info --device-id 7 without a GPU: exit 1"; else fail "info --device-id 7: exit $code"; fi
  expect_grep "^gpu +none usable" "$TMP/out" "info: no GPU usable"
  expect_grep "^backends +onnxruntime, .*; generative: llama, fake \(generate --backend\)$" "$TMP/out" \
    "info: the generative backends on the backends line"
  expect_exit 0 "--device-id 0 on auto without a GPU" -- "$IB" latency zoo:mlp --device-id 0 --runs 5 --warmup-runs 1 --warmup-ms 0 --no-steady
  expect_grep "^inferbench: warning: --device-id has no effect: the model runs on the CPU, as this machine has no CUDA device$" "$TMP/err" "--device-id 0 on auto: warned, from the machine"
fi

# Harmless on the CPU: warned about once, then measured.
quick=(--runs 5 --warmup-runs 1 --warmup-ms 0 --no-steady)
expect_exit 0 "--no-gpu-state --device-id 0 on the CPU" -- \
  "$IB" latency zoo:mlp --device cpu --no-gpu-state --device-id 0 "${quick[@]}"
for opt in --no-gpu-state --device-id; do
  if [ "$(grep -c -- "^inferbench: warning: $opt has no effect: the model runs on the CPU$" "$TMP/err")" -eq 1 ]; then
    pass "$opt on the CPU: warned once"
  else
    fail "$opt on the CPU: $(cat "$TMP/err")"
  fi
done

# --- prefixes ---------------------------------------------------------------
expect_exit 2 "an ambiguous prefix" -- "$IB" latency zoo:mlp --pre 1
expect_grep "^inferbench latency: ambiguous option '--pre' \(--prefer-nhwc, --precision, --prefill-chunk, --prefix-cache\)$" "$TMP/err" \
  "the ambiguous prefix names its candidates"
expect_exit 2 "an ambiguous prefix with =" -- "$IB" latency zoo:mlp --warmup-m=5
expect_grep "^inferbench latency: ambiguous option '--warmup-m' \(--warmup-ms, --warmup-max-ms\)$" "$TMP/err" \
  "--warmup-m=5 is ambiguous too" 
expect_exit 2 "an unknown option" -- "$IB" latency zoo:mlp --nosuch
expect_grep "^inferbench latency: unknown option '--nosuch'" "$TMP/err" "an unknown option says unknown"
expect_exit 0 "an unambiguous prefix is taken" -- "$IB" latency zoo:mlp --device cpu --preci 50% --min-r 6 \
  --max-r 6 --warmup-runs 1 --warmup-ms 0 --no-steady

# --- zoo subcommands ----------------------------------------------------------
expect_exit 2 "zoo foo" -- "$IB" zoo foo
expect_grep "^inferbench: unknown zoo subcommand 'foo' \(list or export\)$" "$TMP/err" "zoo foo names the subcommands"
for h in --help help -h; do
  expect_exit 0 "zoo $h" -- "$IB" zoo $h
  expect_grep "^  zoo list " "$TMP/out" "zoo $h lists zoo list"
  expect_grep "^  zoo export " "$TMP/out" "zoo $h lists zoo export"
done
expect_exit 2 "zoo alone" -- "$IB" zoo
expect_grep "zoo needs a subcommand: list or export" "$TMP/err" "zoo alone names the subcommands"

# --- the progress line --------------------------------------------------------
run=(latency zoo:mlp --device cpu --runs 3000 --warmup-runs 10 --warmup-ms 300)
if on_tty "$TMP/tty" "$IB" "${run[@]}"; then pass "latency on a terminal"; else fail "latency on a terminal"; fi
python3 - "$TMP/tty" <<'PY' && pass "the progress line: phases, rewritten in place, erased before the report" || fail "the progress line: $(head -c 400 "$TMP/tty" | od -c | head -5)"
import sys
t = open(sys.argv[1], "rb").read().decode()
erase = "\r\x1b[K"
assert "\rinferbench: cold run, " in t, "cold run"
assert "\rinferbench: warm-up " in t and "\rinferbench: sampling " in t, "phases"
assert " runs, " in t and " s elapsed" in t, "runs and elapsed"
report = t.index("inferbench latency: zoo:mlp")
assert t.rindex("\x1b[K") < report, "progress after the report"
assert t[:report].endswith(erase), "not erased before the report"
assert "\x1b[3" not in t and "\x1b[1m" not in t, "colour"
PY
if on_tty "$TMP/tty_quiet" "$IB" "${run[@]}" --quiet; then pass "--quiet on a terminal"; else fail "--quiet"; fi
# A terminal ends lines with CR LF: any other CR, or an erase, is progress.
if python3 -c 'import sys; t = open(sys.argv[1]).read().replace("\r\n", "\n"); sys.exit("\r" in t or "\x1b" in t)' \
  "$TMP/tty_quiet" && grep -q "^inferbench latency: zoo:mlp" "$TMP/tty_quiet"; then
  pass "--quiet: the report, no progress line"
else
  fail "--quiet still shows progress: $(head -c 300 "$TMP/tty_quiet" | od -c | head -3)"
fi
expect_exit 0 "stderr to a file" -- "$IB" "${run[@]}"
if grep -q $'\r\|sampling\|warm-up [0-9]' "$TMP/err"; then fail "progress in a file: $(head -c 200 "$TMP/err")"; else
  pass "stderr to a file: no progress"; fi
"$IB" "${run[@]}" 2>&1 >/dev/null | cat >"$TMP/pipe"
if [ -s "$TMP/pipe" ]; then fail "progress in a pipe: $(head -c 200 "$TMP/pipe")"; else pass "stderr to a pipe: nothing"; fi
if on_tty "$TMP/tty_tp" "$IB" throughput zoo:mlp --device cpu --max-batch 8 --runs 20 --warmup-ms 0 --no-steady; then
  pass "throughput on a terminal"; else fail "throughput on a terminal"; fi
expect_grep $'\rinferbench: batch search: probe 4, batch 8' "$TMP/tty_tp" "throughput shows its probes"
# The search times each batch as its probe fits: candidate N, its count
# not known yet (and no cold run: the probe's run was its first).
expect_grep $'\rinferbench: \\[candidate 3, batch 4\\] (warm-up|sampling|back-to-back)' "$TMP/tty_tp" \
  "throughput shows the candidates the search times"
# The whole measurement's time left beside the phase's: at first the time
# bound (300 s by default) caps it.
expect_grep $'\rinferbench: batch search: probe 1, batch 1, [0-9.]+ s elapsed \\(all: at most 300' "$TMP/tty_tp" \
  "throughput shows the whole time left, capped by its bound"
if on_tty "$TMP/tty_list" "$IB" throughput zoo:mlp --device cpu --batches 1,2,4,8 --runs 20 --warmup-ms 0 --no-steady; then
  pass "throughput of a list on a terminal"; else fail "throughput of a list on a terminal"; fi
expect_grep $'\rinferbench: \\[3/4 candidate, batch 4\\] (cold run|warm-up|sampling|back-to-back)' "$TMP/tty_list" \
  "throughput of a list shows candidate N of M"
if on_tty "$TMP/tty_err" "$IB" latency zoo:mlp --device cpu --runs 3000 --warmup-ms 300 --json /nonexistent-dir/x.json; then
  fail "an unwritable --json on a terminal"; else pass "an unwritable --json on a terminal fails"; fi

finish
