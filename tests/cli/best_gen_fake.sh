# inferbench best of a generative model on the scripted generation fake
# (its virtual clock: every time exact; docs/best.md, "Generative models"):
# the fake races its step's time (step_us 1000 and 1500). A time bound
# that the first candidate's screening spends (158.73 ms: its cold run,
# 3 warm-up and 10 timed runs of 16 + 8 tokens) leaves the second "not
# measured (time bound)", not dropped: the race was cut short, said in
# every format, the result written and partial, exit 1 (docs/cli.md).
# Without the bound the same race ends with exit 0.
. "$(dirname "$0")/lib.sh"

FAKE=(best lm.gguf --backend fake --device cpu --prompt-tokens 16 --new-tokens 8 --runs 20 --warmup-runs 3
      --warmup-ms 0 --no-steady --quiet)

expect_exit 0 "the race of the fake, unbounded" -- "$IB" "${FAKE[@]}" --step-max-ms 0 --json "$TMP/a.json"
json_check "$TMP/a.json" "[(c['label'], c['stage']) for c in d['candidates']] == [('step_us 1000', 'winner'), ('step_us 1500', 'dropped')] and not d['partial']" "json: the faster steps win, the slower dropped"

expect_exit 1 "--step-max-ms 159: the second candidate not measured" -- \
  "$IB" "${FAKE[@]}" --step-max-ms 159 --json "$TMP/b.json" --csv "$TMP/b.csv" --md "$TMP/b.md" --html "$TMP/b.html"
expect_grep "^inferbench: best: the race was cut short: the time bound \(0.159 s a step, --step-max-ms\) left 1 candidate not measured; the winner is the best of those measured$" "$TMP/err" "the exit's line says why"
expect_grep "^ 2  step_us 1500 .* 0  not measured \(time bound\)$" "$TMP/out" "text: the row not measured (time bound)"
expect_grep "^ 2  latency: not measured: the screening reached the step's time bound \(0.159 s, --step-max-ms\)$" "$TMP/out" "text: why"
expect_grep "^PARTIAL: the race was cut short: the time bound \(0.159 s a step, --step-max-ms\) left 1 candidate not measured" "$TMP/out" "text: cut short"
json_check "$TMP/b.json" "d['partial'] and d['stop_reason'] == 'the race was cut short: the time bound (0.159 s a step, --step-max-ms) left 1 candidate not measured' and d['search']['not_measured'] == 1" "json: partial, why"
json_check "$TMP/b.json" "[(c['stage'], c['runs']) for c in d['candidates']] == [('winner', d['candidates'][0]['runs']), ('not measured', 0)] and d['candidates'][0]['runs'] > 10 and d['winner'] == 'step_us 1000'" "json: the first screened and won, the second not measured"
expect_grep "^lm.gguf,cpu,step_us 1500,not measured,tpot," "$TMP/b.csv" "csv: not measured"
expect_grep "\| not measured \(time bound\) \|" "$TMP/b.md" "md: not measured (time bound)"
expect_grep "\*\*partial\*\*: the race was cut short" "$TMP/b.md" "md: cut short"
expect_grep "<td>not measured \(time bound\)</td>" "$TMP/b.html" "html: not measured (time bound)"
finish
