#!/usr/bin/env bash
# The server's cost on the GPU (issue 37 item 5; docs/serve-endpoint.md,
# "The server's cost"): zoo:llama-3.2-1b (float16) as one GGUF file, the
# same schedule (Poisson at IB_COST_RATE requests/s, default 4; 120
# requests, 16 warm-up; prompt 512 / output 128; seed 1) served in process
# (16 slots, every layer on the GPU) and through llama-server's CUDA build
# on that same file (-ngl 99 -fa on -np 16 -c 16 x 640, on 127.0.0.1,
# then IB_SERVER_ARGS: `--samplers top_k --top-k 1` takes the server's
# sampler chain down to one pass over the logits), then compared;
# IB_ENGINE_ARGS: the in-process side's extra arguments (`--sampling
# greedy`: each token picked from its logits on the host, as a server
# must). Printed for the lead (not checked): a summary line each for
# TTFT p50/p99, TPOT p50/p99, goodput and output tokens/s of both sides,
# and compare's verdicts. Checked: every request completed on both sides,
# the server's weights on the GPU, compare run with the sentence of the
# server's cost and no schedule warning. About 100 s on an H100.
#
# On the H100/H200 with the sm_90 build unpacked to /tmp/llama (as
# tests/gpu/device/llama_call.sh does; part cost37):
#   IB_LLAMA_LIBRARY=/tmp/llama IB_LLAMA_SERVER=/tmp/llama/llama-server \
#   LD_LIBRARY_PATH=/tmp/llama:/usr/local/cuda/lib64:/usr/local/nvidia/lib64 \
#   bash tests/gpu/server_cost_gpu.sh build/inferbench
# The model file (cost_model.sh): IB_COST_GGUF, else the zoo's F16 export (made once into
# INFERBENCH_ZOO_CACHE, default /tmp/inferbench-zoo, and copied).
. "$(dirname "$0")/../cli/lib.sh"
. "$(dirname "$0")/require_device.sh"
. "$(dirname "$0")/../llama/server.sh"
need_llama_server
rate=${IB_COST_RATE:-4}
slots=16
. "$(dirname "$0")/cost_model.sh"

SCHEDULE=(--rate "$rate" --requests 120 --warmup-requests 16 --prompt-tokens 512 --new-tokens 128 --schedule-seed 1
          --slo-ttft-ms 500 --slo-tpot-ms 30 --quiet)
expect_exit 0 "in process: $slots slots at $rate requests/s" -- "$IB" serve "$gguf" --device cuda "${lib[@]}" \
  --slots $slots ${IB_ENGINE_ARGS:-} "${SCHEDULE[@]}" --json "$TMP/inprocess.json"

llama_server_start_on_gpu "$gguf" --alias llama-3.2-1b -ngl 99 -fa on -np $slots -c $((slots * 640)) ${IB_SERVER_ARGS:-}
expect_exit 0 "over HTTP: the same schedule" -- "$IB" serve --endpoint "$LLAMA_SERVER_URL" --model llama-3.2-1b \
  "${SCHEDULE[@]}" --json "$TMP/http.json"
llama_server_stop

expect_exit 0 "compare in process (A) and over HTTP (B)" -- "$IB" compare "$TMP/inprocess.json" "$TMP/http.json" --json "$TMP/c.json"
cp "$TMP/out" "$TMP/compare.txt"
expect_grep "^B over HTTP, A in process: the difference is what the server and the client add$" "$TMP/compare.txt" "the server's cost stated"
json_check "$TMP/c.json" "d['ttft']['a']['n'] == d['ttft']['b']['n'] == 120 and not {'different_seed', 'different_schedule', 'different_request_count', 'different_rate'} & set(d['warnings'])" \
  "every request completed on both sides, the same schedule"

python3 - "$TMP/inprocess.json" "$TMP/http.json" "$rate" "$slots" "${IB_SERVER_ARGS:-}" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
fa, fb = a["figures"], b["figures"]
print(f"summary cost37 rate {sys.argv[3]}/s, {fa['requests']} requests, prompt 512 / output 128, {sys.argv[4]} slots; A in process (flash_attn {a['info'].get('flash_attn')}, sampling {a['settings'].get('sampling')}), B llama-server over HTTP {sys.argv[5] or '(its default sampler chain)'}")
for key, label in (("ttft_ms", "TTFT"), ("tpot_ms", "TPOT")):
    print(f"summary {label} p50 A {fa[key]['p50']:.2f} ms, B {fb[key]['p50']:.2f} ms; p99 A {fa[key]['p99']:.2f} ms, B {fb[key]['p99']:.2f} ms")
print(f"summary goodput (TTFT <= 500 ms, TPOT <= 30 ms) A {fa['goodput_rate']:.3f}, B {fb['goodput_rate']:.3f} requests/s ({fa['good_requests']} and {fb['good_requests']} of {fa['requests']})")
print(f"summary output tokens/s A {fa['output_tokens_per_s']:.1f}, B {fb['output_tokens_per_s']:.1f}")
e = b["endpoint"]
print(f"summary client lateness p99 {e['lateness_ms']['p99']:.3f} ms (bound {e['lateness_bound_ms']:.3g} ms, late {e['client_late']}); chunks {e['chunks']}, {e['multi_token_chunks']} of several tokens")
PY
grep -E "^(TTFT|TPOT|ITL|end-to-end|goodput|warning)" "$TMP/compare.txt" | sed 's/^/summary compare: /'
finish
