# --devices on the CPU device: a worker per index, each its own session,
# meeting at a barrier; per-device results in every format; the host's
# aggregate; bad device lists refused with one line (exit 2).
. "$(dirname "$0")/lib.sh"

M="zoo:mlp --device cpu --warmup-runs 2 --warmup-ms 0 --no-steady --runs 60"

expect_exit 0 "latency on 2 CPU workers" -- "$IB" latency $M --devices 0,1 \
  --json "$TMP/l.json" --csv "$TMP/l.csv" --md "$TMP/l.md" --html "$TMP/l.html"
expect_grep "^fleet latency: 2 devices" "$TMP/out" "text: the fleet"
expect_grep "^  device 1 " "$TMP/out" "text: device 1's row"
expect_grep "^host: [0-9.]+ inputs/s summed over the common window" "$TMP/out" "text: the host's sum"
expect_grep "^straggler: device [01], median .*x the fastest" "$TMP/out" "text: the straggler"
expect_grep "^scaling: .* alone on the first device: efficiency" "$TMP/out" "text: the scaling efficiency"
json_check "$TMP/l.json" "d['schema'] == 'inferbench.fleet/1' and [x['index'] for x in d['devices']] == [0, 1]" "json: a devices list"
json_check "$TMP/l.json" "all(x['status'] == 'ok' and x['latency_ms']['n'] == 60 and len(x['samples_ms']) == 60 for x in d['devices'])" "json: each device's runs and raw samples"
json_check "$TMP/l.json" "all(k in d['devices'][0] for k in ('name', 'uuid', 'pci_bus_id', 'numa_node', 'items_per_s', 'gpu_state'))" "json: who each device is, and its state"
json_check "$TMP/l.json" "d['workload']['backend_options']['threads'] == str(max(1, __import__('os').cpu_count() // 2))" "json: the cores split between the workers, through the option the backend declares for its threads"
json_check "$TMP/l.json" "abs(d['fleet']['items_per_s'] - sum(x['window_items_per_s'] for x in d['devices'])) < 1e-6 * d['fleet']['items_per_s']" "json: the host's inputs/s is the devices' sum over the window"
json_check "$TMP/l.json" "d['fleet']['window_ms'][1] == min(x['timed_ms'][1] for x in d['devices'])" "json: the window ends at the earliest end"
json_check "$TMP/l.json" "d['fleet']['latency_ms']['n'] == 120 and d['fleet']['straggler']['median_ratio'] >= 1" "json: pooled latencies, straggler ratio"
json_check "$TMP/l.json" "d['fleet']['alone']['index'] == 0 and d['fleet']['scaling_efficiency'] > 0" "json: the first device alone"
expect_grep "^zoo:mlp,device 1,1," "$TMP/l.csv" "csv: a row per device"
expect_grep "^zoo:mlp,host," "$TMP/l.csv" "csv: the host's row"
expect_grep "^\| device 0 \|" "$TMP/l.md" "md: a row per device"
expect_grep "<td>device 1</td>" "$TMP/l.html" "html: a row per device"

# The fake backend's virtual clock: exact figures. Two workers of 1 ms a
# run: 2000 inputs/s over the window, efficiency 1, no straggler.
expect_exit 0 "the fake on 2 workers" -- "$IB" latency --backend fake --option us=1000 --device cpu --devices 0,1 --runs 50 --json "$TMP/f.json"
json_check "$TMP/f.json" "d['fleet']['items_per_s'] == 2000 and d['fleet']['scaling_efficiency'] == 1 and d['fleet']['straggler']['median_ratio'] == 1" "fake: 2000 inputs/s, efficiency 1, ratio 1"
json_check "$TMP/f.json" "d['fleet']['window_ms'] == [0, 50] and all(x['window_runs'] == 50 for x in d['devices'])" "fake: the window of 50 runs of 1 ms"
# Run 20 of each workload fails: device 0's came in its run alone (the
# scaling reference), device 1's in the fleet's timed runs: it fails there,
# device 0 finishes; the report names it and the run exits 1.
expect_exit 1 "a worker failing mid-run" -- "$IB" latency --backend fake --option fail_at_run=20 --device cpu --devices 0,1 --runs 50 --json "$TMP/fail.json"
expect_grep "^inferbench: 1 of 2 workers failed, the first device 1: fake: run 20 failed" "$TMP/err" "the failed worker named, one line"
json_check "$TMP/fail.json" "d['partial'] and d['devices'][1]['status'] != 'ok' and d['devices'][0]['status'] == 'ok' and d['devices'][0]['latency_ms']['n'] == 50" "the other worker's results kept"

expect_exit 0 "throughput on 2 CPU workers at batch 4" -- "$IB" throughput $M --devices 0,1 --batches 4 --json "$TMP/t.json"
json_check "$TMP/t.json" "d['measured'] == 'throughput' and all(x['batch'] == 4 for x in d['devices'])" "throughput: every worker at the batch"

expect_exit 2 "throughput: a fleet at several batches" -- "$IB" throughput $M --devices 0,1 --batches 1,2
expect_grep "a fleet runs every device at one batch" "$TMP/err" "several batches: said so"
expect_exit 2 "a device listed twice" -- "$IB" latency $M --devices 0,0
expect_grep "CPU worker 0 is listed twice" "$TMP/err" "the same device twice: said so"
expect_exit 2 "a device that does not exist" -- "$IB" latency $M --devices 0,4096
expect_grep "CPU worker 4096 does not exist" "$TMP/err" "a device that does not exist: said so"
expect_exit 2 "a malformed list" -- "$IB" latency $M --devices 0,,1
expect_exit 2 "a GPU that does not exist" -- "$IB" latency zoo:mlp --device cuda --devices 7
expect_grep "GPU 7 does not exist" "$TMP/err" "a GPU that does not exist: said so"
expect_exit 2 "--devices with --sessions" -- "$IB" latency $M --devices 0 --sessions 2
expect_exit 2 "--devices on compare" -- "$IB" compare a.json b.json --devices 0
finish
