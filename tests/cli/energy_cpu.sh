# Energy from the program's side (docs/energy.md), on the fake backend's
# scripted counter (--option energy_step_ms, idle_w, busy_w,
# busy_w_per_item): the figures in every format of latency, throughput,
# serve and pitfalls, compare's energy change, --sessions' interval,
# --no-energy, and a device without a counter (no figure, the reason).
. "$(dirname "$0")/lib.sh"
F="--backend fake --option energy_step_ms=100 --option idle_w=60 --option busy_w=300 --quiet"

expect_exit 0 "latency with a counter" -- "$IB" latency $F --json "$TMP/a.json" --md "$TMP/a.md" --html "$TMP/a.html"
expect_grep "^energy: 0.3 J an input \(\+-0.25%\), 3.333 inputs/J, 300 W average over 400 ms" "$TMP/out" "text: the figure and its bound"
expect_grep "^  idle 60 W before the runs: 0.24 J an input above idle" "$TMP/out" "text: idle and above idle"
json_check "$TMP/a.json" "abs(d['energy']['joules_per_item'] - 0.3) < 1e-12 and d['energy']['source'] == 'counter' and d['energy']['aligned'] and abs(d['energy']['bound'] - (1/400 + 1e-3/120)) < 1e-12 and d['energy']['idle_power_w'] == 60" "json: energy"
expect_grep "^energy: 0.3 J an input" "$TMP/a.md" "markdown: energy"
expect_grep "<h2>Energy</h2>" "$TMP/a.html" "html: energy"

# The same work 10% longer a run: compare gives the energy's change.
expect_exit 0 "latency, slower runs" -- "$IB" latency $F --option us=1100 --json "$TMP/b.json"
expect_exit 0 "compare" -- "$IB" compare "$TMP/a.json" "$TMP/b.json" --json "$TMP/c.json" --csv "$TMP/c.csv"
expect_grep "^energy per input: 0.3 J -> 0.3297 J: \+9.89%, within \[\+9.31%, \+10.47%\]" "$TMP/out" "compare: the change and its interval"
json_check "$TMP/c.json" "d['energy_change']['verdict'] == 'more energy' and d['energy_change']['interval_pct'][0] > 9" "compare json: the energy verdict"
expect_grep ",more energy,[^,]*,[^,]*.?$" "$TMP/c.csv" "compare csv: the energy verdict (then each input's warnings)"

# Without a counter: no figure, the reason; compare says so.
expect_exit 0 "latency without a counter" -- "$IB" latency --backend fake --quiet --json "$TMP/n.json"
expect_grep "^energy: no figure: the fake scripts no energy counter" "$TMP/out" "no counter: the reason"
json_check "$TMP/n.json" "d['energy']['source'] is None and d['energy']['joules_per_item'] is None" "no counter: json nulls"
expect_exit 0 "compare without energy in one" -- "$IB" compare "$TMP/a.json" "$TMP/n.json"
expect_grep "^energy: not in both files" "$TMP/out" "compare: one side without a figure"

expect_exit 0 "--no-energy" -- "$IB" latency $F --no-energy
expect_grep "^energy: no figure: not measured \(measure_energy off\)" "$TMP/out" "--no-energy: not measured"

# Throughput: inputs per joule by batch, the most efficient beside the fastest.
expect_exit 0 "throughput" -- "$IB" throughput $F --option us=1000 --option item_us=100 --option busy_w=100 \
  --option busy_w_per_item=10 --batches 1,8,64 --json "$TMP/t.json" --csv "$TMP/t.csv" --md "$TMP/t.md" --html "$TMP/t.html"
expect_grep "^most inputs per joule at batch 8 " "$TMP/out" "throughput: the most efficient batch"
json_check "$TMP/t.json" "d['most_efficient']['batch'] == 8 and d['peak']['batch'] == 64 and all(p['energy']['bound'] <= 0.0101 for p in d['curve'])" "throughput json: most efficient, bounds"
python3 - "$TMP/t.csv" "$TMP/t.json" <<'PY' && pass "throughput csv: inputs per joule as in the json" || fail "throughput csv: inputs per joule"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
doc = json.load(open(sys.argv[2]))
ok = len(rows) == 3 and all(abs(float(r["items_per_joule"]) - p["energy"]["items_per_joule"]) <= 1e-12 * p["energy"]["items_per_joule"] for r, p in zip(rows, doc["curve"]))
ok = ok and [r["most_efficient"] for r in rows] == ["false", "true", "false"]
sys.exit(0 if ok else 1)
PY
expect_grep "most inputs per joule \|" "$TMP/t.md" "throughput markdown: the most efficient mark"
expect_grep "Inputs per joule against batch" "$TMP/t.html" "throughput html: the plot"

# Serve: each rate's energy per request input (or why none).
expect_exit 0 "serve" -- "$IB" serve ${F% --quiet} --rates 100,1000 --requests 1000 --arrivals constant --json "$TMP/s.json"
expect_grep "^  energy: 0.8[0-9]* J an input \(\+-1%\)" "$TMP/out" "serve: a long rate's figure"
expect_grep "^  energy: no figure: a window of" "$TMP/out" "serve: a short rate's reason"

# Pitfalls: the energy row.
expect_exit 0 "pitfalls" -- "$IB" pitfalls $F --json "$TMP/p.json"
expect_grep "a 50 ms window \(half a step\) +0 J \(-100.0%\)" "$TMP/out" "pitfalls: the short window"
json_check "$TMP/p.json" "d['energy']['applies'] and d['energy']['window_shorter_than_step']['error_pct'] == -100" "pitfalls json: the energy row"

# Sessions: the energy per input's interval across them.
expect_exit 0 "latency --sessions 3" -- "$IB" latency $F --sessions 3 --json "$TMP/ss.json"
expect_grep "^energy per input across sessions: geometric mean 0.3 J, 95% CI \[0.3, 0.3\] J" "$TMP/out" "sessions: the interval"
json_check "$TMP/ss.json" "[f for f in d['sessions']['figures'] if f['key'] == 'joules_per_item'][0]['sessions'] == 3" "sessions json: the figure"
# throughput and pitfalls --sessions: the energy per input across sessions
# (at the best batch; the correct row's), the same figure in each session
# on the virtual clock: an interval of one value.
expect_exit 0 "throughput --sessions 2" -- "$IB" throughput $F --option item_us=100 --batches 1,8 --sessions 2 \
  --json "$TMP/ts.json" --csv "$TMP/ts.csv"
expect_grep "^J/input, batch 8: geometric mean of sessions 0.0675676 J, 95% CI \[0.0675676, 0.0675676\] J" "$TMP/out" \
  "throughput sessions: the energy's interval"
json_check "$TMP/ts.json" "[(f['values'], f['ci95']) for f in d['sessions']['figures'] if f['key'] == 'joules_per_item_at_best_batch'] == [([r['curve'][1]['energy']['joules_per_item']] * 2, [r['curve'][1]['energy']['joules_per_item']] * 2) for r in d['sessions']['runs'][:1]] and abs(d['sessions']['runs'][1]['curve'][1]['energy']['joules_per_item'] / (0.3 * 1.8 / 8) - 1) <= d['sessions']['runs'][1]['curve'][1]['energy']['bound']" "throughput sessions json: each session's figure at batch 8, within its bound of 300 W x 1.8 ms / 8"
expect_grep "joules_per_item_at_best_batch" "$TMP/ts.csv" "throughput sessions csv: the energy column"
expect_exit 0 "pitfalls --sessions 2" -- "$IB" pitfalls $F --sessions 2 --json "$TMP/ps.json"
expect_grep "^energy per input: geometric mean of sessions 0.3 J, 95% CI \[0.3, 0.3\] J" "$TMP/out" \
  "pitfalls sessions: the correct row's energy across sessions"
json_check "$TMP/ps.json" "[f['values'] for f in d['sessions']['figures'] if f['key'] == 'correct_joules_per_item'] == [[0.3, 0.3]]" "pitfalls sessions json: the figure"

# A bad --objective: one line, exit 2 (the energy objective's own refusal
# without a counter is in best_cpu.sh, with a model that has options to race).
expect_exit 2 "--objective watts" -- "$IB" best $F --objective watts
expect_grep "objective 'watts': expected time, energy, tpot or ttft" "$TMP/err" "--objective: the values"
finish
