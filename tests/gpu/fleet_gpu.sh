# Both GPUs of a host at once (the two-H200 machine), against each alone:
# EfficientNet-B0 latency and throughput with --devices, serve --devices,
# then latency through mpirun -np 2. Two independent GPUs should scale almost
# perfectly (efficiency >= 0.8, each GPU within 20% of itself alone, a
# straggler ratio under 1.2 on the H200 before): since issue 28 those are
# recorded ("record:" lines, $IB_RECORD), not verdicts; checked: both GPUs
# measured, distinct UUIDs and PCI bus ids, the SM clock known, a search's
# verdict met only where both GPUs met. Skips (77) with fewer than two GPUs.
# About 2-3 minutes; the printed reports are the figures for
# docs/measurements.md.
. "$(dirname "$0")/../cli/lib.sh"
. "$(dirname "$0")/require_device.sh"
if ! "$IB" info --device-id 1 >/dev/null 2>&1; then
  echo "one GPU only: the fleet test needs two (the nvidia-h200-x2 machine): skipped"
  exit 77
fi
M="zoo:efficientnet-b0 --device cuda --quiet"

for d in 0 1; do
  expect_exit 0 "latency on GPU $d alone" -- "$IB" latency $M --devices $d --json "$TMP/l$d.json"
done
expect_exit 0 "latency on GPUs 0,1 together" -- "$IB" latency $M --devices 0,1 --json "$TMP/l01.json"
cat "$TMP/out"
json_check "$TMP/l01.json" "[x['status'] for x in d['devices']] == ['ok', 'ok']" "latency: both GPUs measured"
json_check "$TMP/l01.json" "len({x['uuid'] for x in d['devices']}) == 2 and all(x['uuid'].startswith('GPU-') for x in d['devices'])" "two distinct UUIDs"
json_check "$TMP/l01.json" "len({x['pci_bus_id'] for x in d['devices']}) == 2 and all(x['pci_bus_id'] for x in d['devices'])" "two distinct PCI bus ids"
json_check "$TMP/l01.json" "all(x['gpu_state']['sm_clock_pct_of_max'] is not None and x['gpu_state']['max_temperature_c'] > 0 for x in d['devices'])" "the SM clocks and temperatures known"
json_record "$TMP/l01.json" "[x['gpu_state']['sm_clock_pct_of_max'] for x in d['devices']]" "latency: SM clock % of max per GPU (over 30 before)"
json_record "$TMP/l01.json" "(d['fleet']['straggler']['median_ratio'], d['fleet']['scaling_efficiency'])" "latency: (straggler median ratio, scaling efficiency) (under 1.2, at least 0.8 before)"
for d in 0 1; do
  python3 - "$TMP/l$d.json" "$TMP/l01.json" "$d" <<'PY' | while IFS= read -r line; do record "latency: $line (within 20% before)"; done
import json, sys
alone = json.load(open(sys.argv[1]))["devices"][0]["latency_ms"]["p50"]
both = json.load(open(sys.argv[2]))["devices"][int(sys.argv[3])]["latency_ms"]["p50"]
print(f"GPU {sys.argv[3]}: median alone {alone:.4f} ms, together {both:.4f} ms")
PY
done

for d in 0 1; do
  expect_exit 0 "throughput on GPU $d alone at batch 64" -- "$IB" throughput $M --devices $d --batches 64 --json "$TMP/t$d.json"
done
expect_exit 0 "throughput on GPUs 0,1 at batch 64" -- "$IB" throughput $M --devices 0,1 --batches 64 --json "$TMP/t01.json"
cat "$TMP/out"
json_check "$TMP/t01.json" "[x['status'] for x in d['devices']] == ['ok', 'ok']" "throughput: both GPUs measured"
json_record "$TMP/t01.json" "(d['fleet']['scaling_efficiency'], d['fleet']['straggler']['median_ratio'])" "throughput: (scaling efficiency, straggler median ratio) (at least 0.8, under 1.2 before)"
python3 - "$TMP/t0.json" "$TMP/t1.json" "$TMP/t01.json" <<'PY' | while IFS= read -r line; do record "throughput: $line (over 0.8 before)"; done
import json, sys
alone = sum(json.load(open(p))["devices"][0]["items_per_s"] for p in sys.argv[1:3])
both = json.load(open(sys.argv[3]))["fleet"]["items_per_s"]
print(f"inputs/s: each alone summed {alone:.0f}, together {both:.0f} ({both / alone:.3f})")
PY

# serve --devices: batch-1 requests at a host rate of 200/s on both GPUs
# (100/s each, its own Poisson schedule) against 100/s on GPU 0 alone: each
# GPU's median within 20% of alone, the host achieving its rate, a
# straggler p99 ratio under 1.5; then a search for p99 <= 10 ms, met only
# when both GPUs meet it.
S="zoo:efficientnet-b0 --device cuda --requests 1000"
expect_exit 0 "serve on GPU 0 alone at 100/s" -- "$IB" serve $S --devices 0 --rates 100 --json "$TMP/s0.json"
expect_exit 0 "serve on GPUs 0,1 at 200/s for the host" -- "$IB" serve $S --devices 0,1 --rates 200 --json "$TMP/s01.json" --csv "$TMP/s01.csv"
cat "$TMP/out"
json_check "$TMP/s01.json" "d['measured'] == 'serve' and [x['status'] for x in d['devices']] == ['ok', 'ok'] and all(x['serve']['offered_rate'] == 100 for x in d['devices'])" "serve: both GPUs served 100/s each"
json_check "$TMP/s01.json" "len({x['uuid'] for x in d['devices']}) == 2 and len({x['pci_bus_id'] for x in d['devices']}) == 2" "serve: two distinct GPUs"
json_check "$TMP/s01.json" "all(x['gpu_state']['sm_clock_pct_of_max'] is not None and x['gpu_state']['max_temperature_c'] > 0 for x in d['devices'])" "serve: the GPUs' state sampled"
json_record "$TMP/s01.json" "(round(d['fleet']['items_per_s'], 1), d['fleet']['straggler']['p99_ratio'])" "serve: (the host's requests/s at 200/s offered, straggler p99 ratio) (within 10%, under 1.5 before)"
python3 - "$TMP/s0.json" "$TMP/s01.json" <<'PY' | while IFS= read -r line; do record "serve: $line (within 20% before)"; done
import json, sys
alone = json.load(open(sys.argv[1]))["devices"][0]["serve"]["total_ms"]["p50"]
for x in json.load(open(sys.argv[2]))["devices"]:
    both = x["serve"]["total_ms"]["p50"]
    print(f"GPU {x['index']}: median request alone {alone:.4f} ms, together {both:.4f} ms, p99 {x['serve']['total_ms']['p99']:.4f} ms")
PY
"$IB" serve zoo:efficientnet-b0 --device cuda --devices 0,1 --requests 500 --slo-p99-ms 10 --json "$TMP/search.json" >"$TMP/out" 2>"$TMP/err"
code=$?
cat "$TMP/out"
[ "$code" -eq 0 ] || [ "$code" -eq 3 ] && pass "serve: a search for p99 <= 10 ms on both GPUs ends (exit $code)" || fail "serve search: exit $code $(cat "$TMP/err")"
json_check "$TMP/search.json" "all(r['met'] == all(x['serve']['met'] for x in r['devices']) for r in d['rates'])" "serve search: met only where both GPUs met"
json_record "$TMP/search.json" "d['target']['best_rate']" "serve search: the highest host rate meeting p99 <= 10 ms (found before)"

if command -v mpirun >/dev/null 2>&1; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  mpirun -np 2 --enable-recovery sh -c '"$0" "$@"; echo $? > "'"$TMP"'/rc.$OMPI_COMM_WORLD_RANK"' \
    "$IB" latency $M --json "$TMP/mpi.json" >"$TMP/out" 2>"$TMP/err" </dev/null
  cat "$TMP/out"
  if [ "$(cat "$TMP/rc.0" 2>/dev/null)" = 0 ]; then pass "mpirun -np 2: rank 0 exits 0"; else fail "mpirun -np 2: rank 0 exit $(cat "$TMP/rc.0" 2>/dev/null): $(cat "$TMP/err")"; fi
  json_check "$TMP/mpi.json" "[x['status'] for x in d['devices']] == ['ok', 'ok'] and sorted(x['local_rank'] for x in d['devices']) == [0, 1]" "mpirun: two ranks, local ranks 0 and 1"
  json_check "$TMP/mpi.json" "len({x['uuid'] for x in d['devices']}) == 2" "mpirun: each rank on its own GPU"
  json_record "$TMP/mpi.json" "(d['fleet']['scaling_efficiency'], d['fleet']['straggler']['median_ratio'])" "mpirun: (scaling efficiency, straggler median ratio) (at least 0.8, under 1.2 before)"
else
  echo "mpirun not found: the MPI part skipped (apt-get install openmpi-bin)"
fi
finish
