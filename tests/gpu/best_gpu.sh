# inferbench best on an NVIDIA GPU (docs/best.md): EfficientNet-B0 raced
# over the configurations (--math fp32/tf32/fp16/bf16 x CUDA graph x NHWC,
# cuDNN's search fixed to heuristic to keep the sweep within minutes), then
# the exhaustive sweep of the same configurations; both times and winners
# recorded. The goal (issue 13): the race in at most a quarter of the
# sweep's time, its winners within 2% of the sweep's best. Prints the
# figures for docs/measurements.md after the checks. About 3 minutes on an
# H200. IB_BEST_GPU_FULL=1 also races every configuration with both cuDNN
# searches (32 candidates), without a sweep.
. "$(dirname "$0")/../cli/lib.sh"
. "$(dirname "$0")/require_device.sh"

M=zoo:efficientnet-b0
Q=(--device cuda --cudnn-search heuristic --max-batch 128 --runs 50 --quiet)

t0=$(date +%s.%N)
expect_exit 0 "best (raced)" -- "$IB" best $M "${Q[@]}" --json "$TMP/race.json"
t1=$(date +%s.%N)
cp "$TMP/out" "$TMP/race.txt"
expect_exit 0 "best --exhaustive" -- "$IB" best $M "${Q[@]}" --exhaustive --json "$TMP/sweep.json"
t2=$(date +%s.%N)
cp "$TMP/out" "$TMP/sweep.txt"

for f in race sweep; do
  json_check "$TMP/$f.json" "len(d['candidates']) == 16 and not d['partial']" "$f: 16 configurations, complete"
  json_check "$TMP/$f.json" "all(c['latency']['stage'] == 'skipped' and 'bf16' in c['latency']['why'] for c in d['candidates'] if c['label'].startswith('bf16'))" "$f: bf16 skipped with the runtime's reason"
  json_check "$TMP/$f.json" "all(c['accurate'] and c['accuracy']['outputs'][0]['cosine'] > 0.999 for c in d['candidates'] if c['label'].startswith(('tf32', 'fp16')))" "$f: tf32 and fp16 judged against strict fp32, accurate"
  json_check "$TMP/$f.json" "d['latency_winner'] is not None and d['throughput_winner'] is not None" "$f: both winners"
done
# The race's winners against the sweep's best.
python3 - "$TMP/race.json" "$TMP/sweep.json" >"$TMP/cmp" <<'PY'
import json, sys
race, sweep = (json.load(open(p)) for p in sys.argv[1:3])
def row(d, label): return [c for c in d['candidates'] if c['label'] == label][0]
rl, sl = row(race, race['latency_winner']), row(sweep, sweep['latency_winner'])
rt, st = row(race, race['throughput_winner']), row(sweep, sweep['throughput_winner'])
# The race's winner as the sweep measured it: the same configuration, fully measured.
rl_in_sweep = row(sweep, race['latency_winner'])['latency']['ms']['p50']
rt_in_sweep = row(sweep, race['throughput_winner'])['throughput']['items_per_s']
print("latency_ratio %.4f" % (rl_in_sweep / sl['latency']['ms']['p50']))
print("throughput_ratio %.4f" % (rt_in_sweep / st['throughput']['items_per_s']))
print("time_ratio %.4f" % (race['elapsed_ms'] / sweep['elapsed_ms']))
print("race: %.1f s (%.1f s measuring): fastest %s %.4f ms, highest %s %.0f inputs/s at batch %d" % (
    race['elapsed_ms'] / 1e3, race['measured_ms'] / 1e3, race['latency_winner'], rl['latency']['ms']['p50'],
    race['throughput_winner'], rt['throughput']['items_per_s'], rt['throughput']['batch']))
print("sweep: %.1f s (%.1f s measuring): fastest %s %.4f ms, highest %s %.0f inputs/s at batch %d" % (
    sweep['elapsed_ms'] / 1e3, sweep['measured_ms'] / 1e3, sweep['latency_winner'], sl['latency']['ms']['p50'],
    sweep['throughput_winner'], st['throughput']['items_per_s'], st['throughput']['batch']))
PY
value() { awk -v k="$1" '$1 == k { print $2 }' "$TMP/cmp"; }
awk "BEGIN { exit !($(value latency_ratio) <= 1.02) }" && pass "the race's latency winner is within 2% of the sweep's best (as the sweep measured both)" || fail "latency: the race's winner is $(value latency_ratio) x the sweep's best"
awk "BEGIN { exit !($(value throughput_ratio) >= 0.98) }" && pass "the race's throughput winner is within 2% of the sweep's best" || fail "throughput: the race's winner is $(value throughput_ratio) x the sweep's best"
awk "BEGIN { exit !($(value time_ratio) <= 0.25) }" && pass "the race took at most a quarter of the sweep's time" || fail "the race took $(value time_ratio) of the sweep's time (goal: 0.25)"

if [ "${IB_BEST_GPU_FULL:-0}" = 1 ]; then
  expect_exit 0 "best, every configuration" -- "$IB" best $M --device cuda --max-batch 128 --runs 50 --quiet --json "$TMP/full.json"
  json_check "$TMP/full.json" "len(d['candidates']) == 32 and d['latency_winner'] is not None" "full: 32 configurations raced"
  cat "$TMP/out"
fi

echo "--- race (wall $(awk "BEGIN { printf \"%.1f\", $t1 - $t0 }") s)"
cat "$TMP/race.txt"
echo "--- exhaustive sweep (wall $(awk "BEGIN { printf \"%.1f\", $t2 - $t1 }") s)"
cat "$TMP/sweep.txt"
echo "--- race against sweep"
cat "$TMP/cmp"
finish
