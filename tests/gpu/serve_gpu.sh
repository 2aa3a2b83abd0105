# serve on the GPU (the lead runs it; docs/measurements.md records it):
# EfficientNet-B0 with batch-1 requests, the highest Poisson rate whose p99
# stays within 5 ms (early-stopping bound at 99% confidence), without and
# with dynamic batching, with 1, 2 and 4 instances, then a closed loop and
# an open loop at the rate found, to show what the closed loop hides.
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

for k in 2 4; do
  expect_exit 0 "highest rate under p99 5 ms, $k instances" -- \
    "$IB" serve $m --instances $k --slo-p99-ms 5 --requests 2000 --json "$TMP/k$k.json"
  cat "$TMP/out"
  json_check "$TMP/k$k.json" "d['config']['instances'] == $k and d['target']['found']" "$k instances: found"
  expect_exit 0 "$k instances with dynamic batching" -- \
    "$IB" serve $m --instances $k --slo-p99-ms 5 --requests 2000 --max-batch 8 --max-delay-us 500 --json "$TMP/k${k}dyn.json"
  cat "$TMP/out"
done
python3 -c "import json; print('best rates (1, 2, 4 instances):', [json.load(open(f))['target']['best_rate'] for f in ['$TMP/slo.json', '$TMP/k2.json', '$TMP/k4.json']])"

rate=$(python3 -c "import json; print(json.load(open('$TMP/slo.json'))['target']['best_rate'])")
expect_exit 0 "closed loop, 1 outstanding" -- "$IB" serve $m --concurrency 1 --requests 2000 --json "$TMP/closed.json"
cat "$TMP/out"
json_check "$TMP/closed.json" "d['rates'][0]['queue_ms']['p99'] < 0.5" "closed loop: no queueing seen"
expect_exit 0 "open loop at the rate found ($rate/s), constant arrivals" -- \
  "$IB" serve $m --rate "$rate" --requests 2000 --json "$TMP/open.json"
cat "$TMP/out"
finish
