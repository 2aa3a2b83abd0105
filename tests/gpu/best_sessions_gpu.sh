# best --sessions and compare's calibration record on an NVIDIA GPU
# (docs/best.md, "Finals in sessions"; docs/compare.md, "One session"):
# EfficientNet-B0 in fp16 with cuDNN's exhaustive search (whose kernel
# choice changes between processes), the CUDA graph and NHWC raced, the
# latency finalists measured in 5 fresh sessions each; then the record
# learns the spread of batch-1 sessions and compare widens two single
# sessions by it. Prints the figures for docs/measurements.md. About 5
# minutes on an H200.
. "$(dirname "$0")/../cli/lib.sh"
. "$(dirname "$0")/require_device.sh"

M=zoo:efficientnet-b0
expect_exit 0 "best --sessions 5" -- "$IB" best $M --device cuda --math fp16 --cudnn-search exhaustive \
  --max-batch 64 --runs 100 --sessions 5 --quiet --json "$TMP/best.json"
cat "$TMP/out"
json_check "$TMP/best.json" "d['search']['sessions'] == 5 and not d['partial'] and d['latency_winner'] is not None" "best: complete, a winner"
json_check "$TMP/best.json" "all(c['latency']['sessions']['count'] == 5 and c['latency']['sessions']['failed'] == 0 for c in d['candidates'] if c['latency']['stage'] in ('winner', 'finalist'))" "best: every finalist in 5 sessions"
json_check "$TMP/best.json" "all('across sessions' in c['latency']['why'] for c in d['candidates'] if c['latency']['stage'] == 'finalist')" "best: the losers judged on the interval across sessions"
expect_grep "measured in 5 fresh sessions" "$TMP/out" "best text: the sessions"

# The record learns how much batch-1 sessions of the exhaustive search
# differ; two single sessions compared are widened by it.
expect_exit 0 "latency --sessions 5" -- "$IB" latency $M --device cuda --cudnn-search exhaustive --runs 300 \
  --sessions 5 --quiet --json "$TMP/five.json"
json_check "$XDG_STATE_HOME/inferbench/spread.json" "len(d['kinds']) == 1 and d['kinds'][0]['df'] == 4" "record: the 5 sessions"
for i in 1 2; do
  expect_exit 0 "single session $i" -- "$IB" latency $M --device cuda --cudnn-search exhaustive --runs 300 \
    --quiet --json "$TMP/single$i.json"
done
expect_exit 0 "compare two single sessions" -- "$IB" compare "$TMP/single1.json" "$TMP/single2.json" --json "$TMP/c.json"
grep -E "change|verdict|sessions:" "$TMP/out"
json_check "$TMP/c.json" "d['sessions']['widened'] and 'calibration record' in d['sessions']['spread_source']" "compare: widened by the record"
python3 - "$TMP/best.json" "$TMP/five.json" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))
for c in b['candidates']:
    s = c['latency']['sessions']
    if s:
        print(f"best finalist {c['label']}: {c['latency']['stage']}, geometric mean of 5 session medians {s['geomean_ms']:.4f} ms "
              f"CI [{s['ci95_ms'][0]:.4f}, {s['ci95_ms'][1]:.4f}], between sd {100*s['between_sd_log']:.2f}%: {c['latency']['why']}")
f = json.load(open(sys.argv[2]))['sessions']
print(f"latency batch 1 exhaustive, 5 sessions: between sd {100*f['between_sd_log']:.2f}%, spread {100*f['spread']:.2f}%")
PY

finish
