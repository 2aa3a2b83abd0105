# serve on the GPU (the lead runs it; docs/measurements.md records it):
# EfficientNet-B0 with batch-1 requests, the highest Poisson rate whose p99
# stays within 5 ms (early-stopping bound at 99% confidence), without and
# with dynamic batching, then a closed loop at the rate found, to show what
# the closed loop hides. One instance: --instances is not built yet.
. "$(dirname "$0")/../cli/lib.sh"
. "$(dirname "$0")/require_device.sh"

m="zoo:efficientnet-b0 --device cuda"

expect_exit 0 "highest rate under p99 5 ms" -- \
  "$IB" serve $m --slo-p99-ms 5 --requests 2000 --json "$TMP/slo.json" --html "$TMP/slo.html"
cat "$TMP/out"
json_check "$TMP/slo.json" "d['target']['found'] and d['target']['best_rate'] > 0" "a rate met p99 <= 5 ms"
json_check "$TMP/slo.json" "d['copies'] == 'inside_compute'" "ONNX Runtime copies inside its run: copies counted in compute"
json_check "$TMP/slo.json" "all(p['total_ms']['p50'] >= p['compute_ms']['p50'] * 0.99 for p in d['rates'])" "a request's total includes its compute"
json_check "$TMP/slo.json" "any(not p['met'] and p['offered_rate'] > d['target']['best_rate'] for p in d['rates'])" "the search bracketed the answer from above"

expect_exit 0 "highest rate under p99 5 ms, dynamic batching" -- \
  "$IB" serve $m --slo-p99-ms 5 --requests 2000 --max-batch 8 --max-delay-us 500 --json "$TMP/dyn.json"
cat "$TMP/out"
json_check "$TMP/dyn.json" "d['target']['found'] and any(h['batch'] > 1 for p in d['rates'] for h in p['batch_histogram'])" "found, with runs above batch 1"

rate=$(python3 -c "import json; print(json.load(open('$TMP/slo.json'))['target']['best_rate'])")
expect_exit 0 "closed loop, 1 outstanding" -- "$IB" serve $m --concurrency 1 --requests 2000 --json "$TMP/closed.json"
cat "$TMP/out"
json_check "$TMP/closed.json" "d['rates'][0]['queue_ms']['p99'] < 0.5" "closed loop: no queueing seen"
expect_exit 0 "open loop at the rate found ($rate/s), constant arrivals" -- \
  "$IB" serve $m --rate "$rate" --requests 2000 --json "$TMP/open.json"
cat "$TMP/out"
finish
