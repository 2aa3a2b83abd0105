#!/usr/bin/env bash
# The curve over rates and the SLO rate of a model in process and through
# llama-server on the GPU (issue 37's benchmark; docs/serve-endpoint.md,
# "Rates: the search and the curve"): zoo:llama-3.2-1b (float16) as one
# GGUF file, the same requests (prompt 512 / output 128, 60 a rate, 16
# warm-up, seed 1, Poisson) served by the in-process engine (16 slots,
# every layer on the GPU) and by llama-server's CUDA build on that file
# (-ngl 99 -np 16 -c 16 x 640, on 127.0.0.1): the curve over IB_RATES
# (default 4,8,16,32) and the search for the highest rate whose TTFT p90
# <= 500 ms and TPOT p90 <= 30 ms at 95% confidence (29 requests at least
# a rate: 60 is enough). Printed for the lead (not checked): a summary
# line a rate of each side (offered, achieved, TTFT and TPOT p99, goodput,
# met), the knee and saturation, each search's answer, and over HTTP the
# client's lateness p99 at the highest rate measured. Checked: every run
# exits 0, every request of the curve completed on both sides, none
# failed over HTTP. A few minutes on an H100.
#
# On the H100/H200 with the sm_90 build unpacked to /tmp/llama (as
# tests/gpu/device/llama_call.sh does for cost37):
#   IB_LLAMA_LIBRARY=/tmp/llama IB_LLAMA_SERVER=/tmp/llama/llama-server \
#   LD_LIBRARY_PATH=/tmp/llama:/usr/local/cuda/lib64:/usr/local/nvidia/lib64 \
#   bash tests/gpu/endpoint_rates_gpu.sh build/inferbench
# The model file (cost_model.sh): IB_COST_GGUF, else the zoo's F16 export (made once into
# INFERBENCH_ZOO_CACHE, default /tmp/inferbench-zoo, and copied).
. "$(dirname "$0")/../cli/lib.sh"
. "$(dirname "$0")/require_device.sh"
. "$(dirname "$0")/../llama/server.sh"
need_llama_server
rates=${IB_RATES:-4,8,16,32}
slots=16
. "$(dirname "$0")/cost_model.sh"

REQUESTS=(--requests 60 --warmup-requests 16 --prompt-tokens 512 --new-tokens 128 --schedule-seed 1 --quiet)
TARGETS=(--slo-ttft-ms 500 --slo-tpot-ms 30 --slo-percentile 90 --confidence 0.95)
inprocess=("$IB" serve "$gguf" --device cuda "${lib[@]}" --slots $slots "${REQUESTS[@]}" "${TARGETS[@]}")
expect_exit 0 "in process: the curve over $rates requests/s" -- "${inprocess[@]}" --rates "$rates" --json "$TMP/a_curve.json"
# exit 3: no rate met (an answer too, printed)
"${inprocess[@]}" --json "$TMP/a_search.json" >"$TMP/a_search.txt" 2>&1
echo "in process search: exit $?"

llama_server_start_on_gpu "$gguf" --alias llama-3.2-1b -ngl 99 -fa on -np $slots -c $((slots * 640)) ${IB_SERVER_ARGS:-}
http=("$IB" serve --endpoint "$LLAMA_SERVER_URL" --model llama-3.2-1b "${REQUESTS[@]}" "${TARGETS[@]}")
expect_exit 0 "over HTTP: the curve over $rates requests/s" -- "${http[@]}" --rates "$rates" --json "$TMP/b_curve.json"
"${http[@]}" --json "$TMP/b_search.json" >"$TMP/b_search.txt" 2>&1
echo "over HTTP search: exit $?"
pid=$LLAMA_SERVER_PID
llama_server_stop
kill -0 "$pid" 2>/dev/null && fail "llama-server $pid still running" || pass "the server stopped by its pid"

for side in a b; do
  json_check "$TMP/${side}_curve.json" 'all(p["completed"] == p["scheduled"] == 60 for p in d["points"])' \
    "curve $side: every request of every rate completed"
done
json_check "$TMP/b_curve.json" 'all(p["failed"] == 0 for p in d["points"])' "curve over HTTP: none failed"

python3 - "$TMP" <<'PY'
import json, os, sys
t = sys.argv[1]
def load(name):
    p = os.path.join(t, name)
    return json.load(open(p)) if os.path.exists(p) else None
def n(v, spec=".3f"):  # a figure, "-" where the JSON has none (null)
    return "-" if v is None else format(v, spec)
def rows(tag, d):
    if not d:
        print(f"summary {tag}: no result")
        return
    for p in d["points"]:
        extra = ""
        if "client_lateness_p99_ms" in p:
            extra = f", client late p99 {n(p['client_lateness_p99_ms'])} ms, failed {p['failed']}, cut {p['cut']}"
        print(f"summary {tag} {n(p['offered_rate'])}/s: achieved {n(p['achieved_rate'])}, pace {n(p['pace'], '.3f')}, TTFT growth {n(p['ttft_growth'], '.2f')}, TTFT p99 "
              f"{n(p['ttft_p99_ms'], '.1f')} ms, TPOT p99 {n(p['tpot_p99_ms'], '.2f')} ms, goodput "
              f"{n(p['goodput_rate'])}/s, met {p['met']}, early {p['ended_early']}{extra}")
    if d["kind"] == "curve":
        c = d["curve"]
        print(f"summary {tag}: knee {c['knee_rate']}, saturation {c['saturation_rate']}")
    else:
        s = d["search"]
        print(f"summary {tag}: answer {s['rate_found']} requests/s, last failed {s['last_failed_rate']}, "
              f"{s['requests_served']} requests served against a sweep's {s['sweep_requests']}")
for side, name in (("a", "in process"), ("b", "llama-server over HTTP")):
    rows(f"curve {name}", load(f"{side}_curve.json"))
    rows(f"search {name}", load(f"{side}_search.json"))
for f in ("b_curve.json", "b_search.json"):
    d = load(f)
    if d and d["points"]:
        top = max(d["points"], key=lambda p: p["offered_rate"])
        print(f"summary {f}: the client's lateness p99 at the highest rate measured ({n(top['offered_rate'])}/s): "
              f"{n(top['client_lateness_p99_ms'])} ms (late {top['client_late']})")
PY
grep -hE "^(answer|client ceiling)" "$TMP/a_search.txt" "$TMP/b_search.txt" | sed 's/^/summary /'
finish
