# Where the throughput search stops on a GPU, and why (docs/throughput.md,
# "When the search stops"): the rule that stops a CPU curve past its peak
# must not stop a GPU curve that still rises or is flat within noise.
# EfficientNet-B0 on CUDA at the defaults: prints the stop, its batch, the
# peak and the curve; passes when the search ended at memory's or
# --max-batch's limit, or past a peak with the two batches after it more
# than 5% below it (a real decline), never by the time bound.
. "$(dirname "$0")/../cli/lib.sh"
. "$(dirname "$0")/require_device.sh"

expect_exit 0 "throughput zoo:efficientnet-b0 --device cuda" -- \
  "$IB" throughput zoo:efficientnet-b0 --device cuda --quiet --json "$TMP/t.json"
python3 - "$TMP/t.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
s = d["search"]
print(f"stop: {s['stop']} after {s['stop_ms']} ms (next batch not tried: {s['stop_next_batch']}); "
      f"largest batch timed {s['largest_fitting']}, limited by --max-batch: {s['limited_by_max_batch']}, "
      f"limit: {s.get('limit_reason', '-')}")
print(f"peak: {d['peak']['items_per_s']:.0f} inputs/s at batch {d['peak']['batch']}; "
      f"knee: batch {d['knee']['batch']}; sweep {d['sweep_ms'] / 1e3:.1f} s, search {s['search_ms'] / 1e3:.1f} s")
for p in d["curve"]:
    lat = p["latency_ms"] or {}
    ci = lat.get("ci95_median") or [None, None]
    print(f"  batch {p['batch']:6d}  {p['items_per_s'] or 0:10.0f} inputs/s back-to-back, "
          f"per-run median {lat.get('p50')} ms, CI {ci}")
EOF
json_check "$TMP/t.json" "d['search']['stop'] != 'time bound' and not d['partial']" "the default time bound did not cut the GPU search"
json_check "$TMP/t.json" "d['search']['stop'] == 'done' or (d['search']['stop'] == 'past the peak' and all(p['items_per_s'] < 0.95 * d['peak']['items_per_s'] for p in d['curve'][-2:]))" "stopped at a limit, or past a real decline of the curve"
finish
