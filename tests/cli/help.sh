# inferbench --help: one line per command, its brief whole (issue 28: the
# summaries were cut at their first newline, mid-sentence), within 80
# columns; every command and zoo subcommand listed; each command's own
# --help starts with its usage, the command as typed ("zoo export", issue
# 35), and its options' lines fit in 80 columns.
. "$(dirname "$0")/lib.sh"

expect_exit 0 "inferbench --help" -- "$IB" --help
cp "$TMP/out" "$TMP/help"
"$IB" --list-options | cut -f1 | sort -u >"$TMP/commands"
[ -s "$TMP/commands" ] || fail "--list-options lists no command"
while read -r cmd; do
  words=(${cmd/-/ }) # zoo-list is typed "zoo list"
  line=$(grep -E "^  ${words[*]} +[^ ]" "$TMP/help")
  if [ -z "$line" ]; then
    fail "$cmd: no line in inferbench --help"
    continue
  fi
  case "$line" in
  *[.?]) pass "$cmd: its line ends a sentence" ;;
  *) fail "$cmd: its line is cut: '$line'" ;;
  esac
  if [ "${#line}" -le 80 ]; then pass "$cmd: its line fits in 80 columns"; else
    fail "$cmd: its line is ${#line} columns: '$line'"; fi
  "$IB" "${words[@]}" --help >"$TMP/cmd_help" 2>&1
  expect_grep "^usage: inferbench ${words[*]} " "$TMP/cmd_help" "${words[*]} --help: starts with its usage, as typed"
  wide=$(awk 'length > 80' "$TMP/cmd_help" | grep -E '^  ' | head -1)
  if [ -z "$wide" ]; then pass "${words[*]} --help: its options' lines fit in 80 columns"; else
    fail "${words[*]} --help: a line is wider than 80 columns: '$wide'"; fi
done <"$TMP/commands"
# Every other line is a whole sentence too, but the usage and the headings.
cut=$(grep -vE '^usage: |^[a-z]+:$|^$|[.?]$' "$TMP/help")
if [ -z "$cut" ]; then pass "every line of inferbench --help ends a sentence"; else fail "lines cut: $cut"; fi
# Every line under "commands:" is a command's (none is a summary's second line).
n_lines=$(sed -n '/^commands:$/,/^$/p' "$TMP/help" | grep -c '^  ')
n_cmds=$(grep -c '' "$TMP/commands")
if [ "$n_lines" -eq "$n_cmds" ]; then pass "one line per command ($n_cmds)"; else
  fail "$n_lines lines under commands: for $n_cmds commands"; fi
expect_exit 0 "inferbench zoo --help" -- "$IB" zoo --help
expect_grep "^  zoo list +List the built-in models\.$" "$TMP/out" "zoo --help: the subcommands' lines whole"
finish
