# The options every command has in common, alike (issue 28, point 5):
# every measuring command takes --quiet and shows a progress line on a
# terminal (serve included, which had neither), --json - works the same
# everywhere, and docs/cli.md's table of options by command is what each
# command's --help lists.
. "$(dirname "$0")/lib.sh"

# --- docs/cli.md's table against every --help ---------------------------------
if python3 "$(dirname "$0")/options_table.py" "$IB" "$(dirname "$0")/../../docs/cli.md" >"$TMP/table" 2>&1; then
  pass "docs/cli.md: the table of options by command is every command's --help"
else
  fail "docs/cli.md's table of options by command: $(cat "$TMP/table")"
fi

# --- --quiet on every command that measures -----------------------------------
"$IB" --list-options >"$TMP/list"
for cmd in latency throughput pitfalls best serve calibrate; do
  expect_grep "^$cmd	--quiet	-	yes$" "$TMP/list" "$cmd takes --quiet"
done

# --- serve's progress line ------------------------------------------------------
S=("$IB" serve zoo:mlp --device cpu --rates 200,400 --requests 300)
if on_tty "$TMP/tty" "${S[@]}"; then pass "serve on a terminal"; else fail "serve on a terminal"; fi
expect_grep $'\rinferbench: warm-up ' "$TMP/tty" "serve shows its warm-up"
expect_grep $'\rinferbench: \\[1/2 rate, 200 requests/s\\] serving [0-9]+/300 requests' "$TMP/tty" "serve shows its first rate"
expect_grep $'\rinferbench: \\[2/2 rate, 400 requests/s\\] serving [0-9]+/300 requests' "$TMP/tty" "serve shows its second rate"
if progress_erased "$TMP/tty" "model: zoo:mlp"; then pass "serve: the line erased before the report"; else
  fail "serve: progress not erased before the report"; fi
if on_tty "$TMP/quiet" "${S[@]}" --quiet; then pass "serve --quiet on a terminal"; else fail "serve --quiet"; fi
if no_progress "$TMP/quiet"; then pass "serve --quiet: no progress line"; else fail "serve --quiet still drew a line"; fi
expect_exit 0 "serve beside a pipe" -- "${S[@]}"
if grep -q "serving" "$TMP/err"; then fail "serve drew progress into a pipe"; else pass "serve: no progress into a pipe"; fi

# --- --json - alike ---------------------------------------------------------------
Q=(--runs 10 --warmup-runs 1 --warmup-ms 0 --no-steady)
"$IB" latency zoo:mlp --device cpu "${Q[@]}" --json "$TMP/a.json" >/dev/null 2>&1
for run in "serve zoo:mlp --device cpu --rate 100 --requests 50" "latency zoo:mlp --device cpu ${Q[*]}" \
  "throughput zoo:mlp --device cpu --batches 1,2 ${Q[*]}" "pitfalls zoo:mlp --device cpu ${Q[*]}" \
  "compare $TMP/a.json $TMP/a.json"; do
  cmd=${run%% *}
  expect_exit 0 "$cmd --json -" -- "$IB" $run --json -
  if python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$TMP/out" 2>/dev/null; then
    pass "$cmd --json -: the document alone on standard output"
  else
    fail "$cmd --json -: standard output is not one JSON document: $(head -c 200 "$TMP/out")"
  fi
  first="^inferbench $cmd"
  [ "$cmd" = serve ] && first="^model: zoo:mlp$" # serve's report opens with its model
  expect_grep "$first" "$TMP/err" "$cmd --json -: the report on standard error"
done
finish
