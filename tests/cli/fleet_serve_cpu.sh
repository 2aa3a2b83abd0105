# serve --devices on the CPU device: a worker per index, each serving its
# share of the host's rates (its own Poisson schedule), the devices
# starting each rate together; every format names every device; the fake
# backend's virtual clocks give exact figures; a search's answer is met by
# every device; failures and refusals in one line.
. "$(dirname "$0")/lib.sh"

M="zoo:mlp --device cpu --requests 100"

expect_exit 0 "serve on 2 CPU workers" -- "$IB" serve $M --devices 0,1 --rates 40,80 \
  --json "$TMP/s.json" --csv "$TMP/s.csv" --md "$TMP/s.md" --html "$TMP/s.html"
expect_grep "^fleet serve: 2 devices, zoo:mlp" "$TMP/out" "text: the fleet"
expect_grep "^rates are the host's: each device serves 1/2 of each" "$TMP/out" "text: what a rate means"
expect_grep "^ +40.00 " "$TMP/out" "text: the host's row at 40/s"
expect_grep "^  device 1 .* 40.00 " "$TMP/out" "text: device 1 at its share of the shown rate"
expect_grep "^host: [0-9.]+ requests/s summed over the common window" "$TMP/out" "text: the host's sum"
expect_grep "^straggler: device [01], p99 .*x the fastest" "$TMP/out" "text: the straggler by p99"
json_check "$TMP/s.json" "d['schema'] == 'inferbench.fleet/1' and d['measured'] == 'serve' and [x['index'] for x in d['devices']] == [0, 1]" "json: a fleet document of serve, a devices list"
json_check "$TMP/s.json" "[r['offered_rate'] for r in d['rates']] == [40, 80] and d['shown_rate'] == 80" "json: the host's rates, the last one shown"
json_check "$TMP/s.json" "all(x['serve']['offered_rate'] == r['offered_rate'] / 2 and x['serve']['n'] == 100 for r in d['rates'] for x in r['devices'])" "json: each device serves half of each rate, its own requests"
json_check "$TMP/s.json" "all(k in d['devices'][0] for k in ('name', 'uuid', 'pci_bus_id', 'numa_node', 'gpu_state', 'samples_ms')) and all(k in d['devices'][0]['serve'] for k in ('queue_ms', 'compute_ms', 'total_ms'))" "json: who each device is, its state, the parts of its requests"
json_check "$TMP/s.json" "all(abs(r['fleet']['items_per_s'] - sum(x['window_items_per_s'] for x in r['devices'])) < 1e-9 * r['fleet']['items_per_s'] for r in d['rates'])" "json: the host's requests/s is the devices' sum over the window"
json_check "$TMP/s.json" "all(r['fleet']['latency_ms']['n'] == 200 and 'p99_ratio' in r['fleet']['straggler'] for r in d['rates'])" "json: pooled latencies, the straggler by p99"
json_check "$TMP/s.json" "d['devices'][0]['serve']['queue_ms']['p50'] != d['devices'][1]['serve']['queue_ms']['p50'] or d['devices'][0]['serve']['total_ms']['mean'] != d['devices'][1]['serve']['total_ms']['mean']" "json: the devices' schedules differ (each its own seed)"
expect_grep "^zoo:mlp,80,device 1,1," "$TMP/s.csv" "csv: a row per device and rate"
expect_grep "^zoo:mlp,40,host,-1," "$TMP/s.csv" "csv: the host's row per rate"
expect_grep "^\| 80.00 \|" "$TMP/s.md" "md: the host at each rate"
expect_grep "^\| device 1 \|" "$TMP/s.md" "md: a row per device"
expect_grep "<td>device 1</td>" "$TMP/s.html" "html: a row per device"

# The fake's virtual clocks: constant arrivals, 200/s for the host, 100/s
# and 1 ms a request a device: each ends at 991 ms, no queueing.
F="--backend fake --option us=1000 --device cpu --devices 0,1"
expect_exit 0 "the fake on 2 devices" -- "$IB" serve $F --arrivals constant --rates 200 --requests 100 --json "$TMP/f.json"
json_check "$TMP/f.json" "d['rates'][0]['offered_rate'] == 200 and d['fleet']['window_ms'] == [0, 991]" "fake: the host's 200/s, the window of 991 ms"
json_check "$TMP/f.json" "abs(d['fleet']['items_per_s'] - 200 / 0.991) < 1e-9 and d['fleet']['latency_ms']['p99'] == 1 and d['fleet']['straggler']['p99_ratio'] == 1" "fake: 201.8 requests/s over the window, p99 1 ms, no straggler"

# A search: a host rate is met only when every device meets it.
expect_exit 0 "the fake: a search" -- "$IB" serve $F --slo-p99-ms 3 --requests 500 --json "$TMP/search.json"
json_check "$TMP/search.json" "d['target']['found'] and d['target']['met_when'] == 'every_device' and d['target']['best_rate'] == max(r['offered_rate'] for r in d['rates'] if r['met'])" "search: the highest rate met"
json_check "$TMP/search.json" "all(r['met'] == all(x['serve']['met'] for x in r['devices']) for r in d['rates']) and not all(r['met'] for r in d['rates'])" "search: met exactly when every device met"
json_check "$TMP/search.json" "d['shown_rate'] == d['target']['best_rate']" "search: the devices shown at the answer"
expect_grep "^highest host rate every device met: [0-9.]+ requests/s \([0-9.]+ a device\)" "$TMP/out" "search: the answer in text"

# A schedule file dealt round-robin: 5 requests, 3 to device 0, 2 to device 1.
printf '0\n10\n20\n30\n40\n' >"$TMP/trace.txt"
expect_exit 0 "a schedule file dealt" -- "$IB" serve $F --arrivals "$TMP/trace.txt" --json "$TMP/t.json"
json_check "$TMP/t.json" "[x['serve']['n'] for x in d['devices']] == [3, 2] and d['rates'][0]['offered_rate'] == 100" "trace: dealt round-robin, the file's rate"
printf '0\n' >"$TMP/one.txt"
expect_exit 2 "a schedule shorter than the devices" -- "$IB" serve $F --arrivals "$TMP/one.txt"
expect_grep "a schedule of 1 requests cannot be dealt to 2 devices" "$TMP/err" "trace: too short, said so"

# Both devices fail mid-rate (the fake's run 600 comes after its 500 ms of
# warm-up): named, the rate in progress kept, exit 1.
expect_exit 1 "devices failing mid-rate" -- "$IB" serve $F --option fail_at_run=600 --rates 200,400 --requests 200 --json "$TMP/fail.json"
expect_grep "^inferbench: 2 of 2 workers failed, the first device 0: fake: run 600 failed" "$TMP/err" "failure: one line names the device"
json_check "$TMP/fail.json" "d['partial'] and len(d['rates']) == 1 and all(x['status'] != 'ok' for x in d['devices'])" "failure: partial, stopped after the rate in progress"
expect_grep "^FAILED: device 1: fake: run 600 failed" "$TMP/out" "failure: the report names each device"

expect_exit 2 "serve: a device listed twice" -- "$IB" serve $M --devices 0,0 --rate 10
expect_grep "CPU worker 0 is listed twice" "$TMP/err" "serve: the same device twice, said so"
expect_exit 2 "serve: --devices with a closed loop" -- "$IB" serve $M --devices 0,1 --concurrency 2
expect_grep "a closed loop \(--concurrency\) runs on one device" "$TMP/err" "closed loop: said so"
expect_exit 2 "serve: --devices with --instances max" -- "$IB" serve $M --devices 0,1 --instances max --rate 10
expect_exit 2 "serve: --devices with --requests-csv" -- "$IB" serve $M --devices 0,1 --rate 10 --requests-csv "$TMP/r.csv"
expect_exit 2 "serve: --share-gpu is MPI's" -- "$IB" serve $M --share-gpu --rate 10
expect_exit 2 "serve under an MPI launcher" -- env OMPI_COMM_WORLD_RANK=0 "$IB" serve $M --rate 10
expect_grep "^inferbench: serve does not run under MPI" "$TMP/err" "serve under MPI: refused, said so"
finish
