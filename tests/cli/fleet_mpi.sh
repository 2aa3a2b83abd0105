# A fleet through MPI on the CPU device: real mpirun runs (Open MPI, from
# the distribution's openmpi-bin; the test skips with 77 where mpirun is
# absent), 4 ranks and 16 oversubscribed, one rank killed as its timed runs
# begin: the others finish, rank 0's report names the dead rank and exits
# 1. Then the refusals: ranks sharing a GPU, a launcher without an MPI
# library to load. Rank 0's own exit status is read from the file each
# rank's wrapper writes: under --enable-recovery (what lets the others
# finish) Open MPI 4's mpirun itself exits 0 whatever the ranks did.
. "$(dirname "$0")/lib.sh"

if ! command -v mpirun >/dev/null 2>&1; then
  echo "skip: mpirun not found (apt-get install openmpi-bin libopenmpi-dev, as scripts/setup.sh does)"
  exit 77
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# Under the sanitizers: Open MPI keeps allocations past MPI_Finalize whose
# frames (its plugins, built without frame pointers) do not symbolize, so
# tests/sanitizers/lsan.supp cannot name them: leak checking is off in the
# ranks (address and undefined-behaviour checks stay on).
if [ -n "${ASAN_OPTIONS:-}" ]; then export ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"; fi
M="zoo:mlp --device cpu --warmup-runs 2 --warmup-ms 0 --no-steady --runs 40"

# run_ranks N KILL TIMEOUT JSON: mpirun of N ranks, rank KILL killed (-1:
# none); each rank's exit status in $TMP/rc.RANK.
run_ranks() {
  local n=$1 kill=$2 timeout=$3 json=$4
  rm -f "$TMP"/rc.*
  timeout 300 mpirun -np "$n" --oversubscribe --enable-recovery -x INFERBENCH_TEST_KILL_RANK="$kill" \
    sh -c '"$0" "$@"; echo $? > "'"$TMP"'/rc.$OMPI_COMM_WORLD_RANK"' \
    "$IB" latency $M --rank-timeout-s "$timeout" --json "$json" >"$TMP/out" 2>"$TMP/err" </dev/null
}

run_ranks 4 -1 60 "$TMP/ok.json"
json_check "$TMP/ok.json" "len(d['devices']) == 4 and all(x['status'] == 'ok' for x in d['devices'])" "4 ranks: every rank measured"
json_check "$TMP/ok.json" "sorted(x['rank'] for x in d['devices']) == [0, 1, 2, 3] and d['fleet']['mpi'] is True" "4 ranks: named by rank"
json_check "$TMP/ok.json" "all(len(x['samples_ms']) == 40 for x in d['devices'])" "4 ranks: each rank's raw samples gathered"
if [ "$(cat "$TMP/rc.0" 2>/dev/null)" = 0 ]; then pass "4 ranks: rank 0 exits 0"; else fail "4 ranks: rank 0 exit $(cat "$TMP/rc.0" 2>/dev/null)"; fi

check_killed() {
  local n=$1 kill=$2 json=$3
  json_check "$json" "len(d['devices']) == $n and d['fleet']['failed'] == 1 and d['partial'] is True" "$n ranks, one killed: the report holds every rank"
  json_check "$json" "d['devices'][$kill]['status'] != 'ok' and 'no summary from rank $kill' in d['devices'][$kill]['error']" "$n ranks: the dead rank named with its error"
  json_check "$json" "all(x['status'] == 'ok' for i, x in enumerate(d['devices']) if i != $kill)" "$n ranks: the others finished"
  expect_grep "^inferbench: 1 of $n ranks failed, the first rank $kill: no summary" "$TMP/err" "$n ranks: one line names the dead rank"
  if [ "$(cat "$TMP/rc.0" 2>/dev/null)" = 1 ]; then pass "$n ranks: rank 0 exits 1"; else fail "$n ranks: rank 0 exit $(cat "$TMP/rc.0" 2>/dev/null)"; fi
}
run_ranks 4 2 5 "$TMP/k4.json"
check_killed 4 2 "$TMP/k4.json"
run_ranks 16 5 20 "$TMP/k16.json"
check_killed 16 5 "$TMP/k16.json"

# Two ranks on a host without a GPU, for the CUDA device: refused, not shared.
timeout 120 mpirun -np 2 --oversubscribe "$IB" latency zoo:mlp --device cuda --json "$TMP/share.json" \
  >"$TMP/out" 2>"$TMP/err" </dev/null
expect_grep "^inferbench: 2 of 2 ranks failed, the first rank 0: 2 ranks on this host but 0 GPUs: ranks would share a GPU \(--share-gpu allows it\)" "$TMP/err" "ranks > GPUs: refused, one line"
json_check "$TMP/share.json" "all('--share-gpu' in x['error'] for x in d['devices'])" "ranks > GPUs: each rank says why"

# serve does not run under MPI: every rank refuses in one line, exit 2.
rm -f "$TMP"/rc.*
timeout 120 mpirun -np 2 --oversubscribe sh -c '"$0" "$@"; echo $? > "'"$TMP"'/rc.$OMPI_COMM_WORLD_RANK"' \
  "$IB" serve zoo:mlp --device cpu --rate 10 --requests 10 >"$TMP/out" 2>"$TMP/err" </dev/null
if [ "$(cat "$TMP/rc.0" "$TMP/rc.1" 2>/dev/null | tr '\n' ' ')" = "2 2 " ]; then pass "serve under mpirun: each rank exits 2"; else fail "serve under mpirun: exits $(cat "$TMP"/rc.* 2>/dev/null)"; fi
expect_grep "^inferbench: serve does not run under MPI" "$TMP/err" "serve under mpirun: refused in one line"
if [ "$(grep -c 'serve does not run under MPI' "$TMP/err")" = 2 ]; then pass "serve under mpirun: one line a rank"; else fail "serve under mpirun: $(cat "$TMP/err")"; fi

# The launcher's environment without an MPI library to load.
expect_exit 2 "MPI environment, no library" -- env OMPI_COMM_WORLD_RANK=0 INFERBENCH_MPI_LIBRARY=/nonexistent/libmpi.so.40 "$IB" latency $M
expect_grep "^inferbench: the environment says MPI \(OMPI_COMM_WORLD_RANK is set\) but no MPI library loads" "$TMP/err" "no MPI library: said so"
finish
