#!/usr/bin/env bash
# The engine's own cost per step, the default slots and the energy under
# load of a generative model's serve on the GPU (docs/serve-generative.md,
# "The engine's own cost"; docs/energy.md, "Under load"): zoo:llama-3.2-1b
# (float16) on llama.cpp's CUDA build, Poisson arrivals at IB_SERVE_RATE
# (default 8) requests/s, IB_SERVE_REQUESTS (default 60) requests of 512 +
# 128 tokens, the slots by default (the KV cache's capacity at 640 tokens,
# at most 256), --engine-cost: the run's mixed batches replayed through
# decode_batch + synchronize in a bare loop. About a minute with the model
# file already written. Prints the figures for the lead (the target: the
# engine's own time under 5 us a step); checks only that they are there.
#
# The library: IB_LLAMA_LIBRARY (on the H100/H200: /tmp/llama, the sm_90
# build of ../shared/llama-sm90, as tests/gpu/device/llama_call.sh unpacks
# it), else the release set-up installed. The model file is written once
# into INFERBENCH_ZOO_CACHE (default /tmp/inferbench-zoo).
. "$(dirname "$0")/../cli/lib.sh"
. "$(dirname "$0")/require_device.sh"
lib=${IB_LLAMA_LIBRARY:-}
export INFERBENCH_ZOO_CACHE=${INFERBENCH_ZOO_CACHE:-/tmp/inferbench-zoo}
mkdir -p "$INFERBENCH_ZOO_CACHE"
opts=(--device cuda --quiet --prompt-tokens 512 --new-tokens 128 --rate "${IB_SERVE_RATE:-8}"
      --requests "${IB_SERVE_REQUESTS:-60}" --slo-ttft-ms 500 --slo-tpot-ms 30 --engine-cost)
[ -n "$lib" ] && opts+=(--option "library=$lib")

out="$TMP/cost.json"
"$IB" serve zoo:llama-3.2-1b "${opts[@]}" --json "$out" >"$TMP/cost.txt" 2>"$TMP/err"
rc=$?
cat "$TMP/cost.txt" "$TMP/err"
if [ $rc != 0 ]; then
  fail "serve --engine-cost: exit $rc"
  finish
fi
json_check "$out" "d['info']['device'] == 'cuda' and d['engine_cost']['replayed'] and d['engine_cost']['steps'] > 0" "on the GPU, replayed"
json_check "$out" "d['settings']['slots_from'] in ('kv_capacity', 'capped') and d['info']['n_seq_max'] == d['settings']['slots']" "the default slots"
json_check "$out" "d['environment']['devices'][0]['name'] and len(d['environment']['devices'][0]['gpu_samples']) > 2" "the GPU named in the environment, its state sampled"
python3 - "$out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); c = d['engine_cost']; e = d['energy']; f = d['figures']; gpu = d['environment']['devices'][0]
fmt = lambda v, p: 'null' if v is None else f"{v:.{p}f}"
print(f"summary engine: {c['steps']} steps; own time {fmt(c['own_us_per_step'], 2)} us a step (target < 5) beside "
      f"{fmt(c['runtime_us_per_step'], 1)} us in decode_batch + synchronize, {fmt(c.get('removal_us_per_step'), 2)} us in removals; engine {fmt(c['engine_us_per_step'], 1)} us "
      f"a step against bare {fmt(c['bare_us_per_step'], 1)} us: {fmt(c['against_bare_us'], 2)} us a step")
print(f"summary slots: {d['settings']['slots']} ({d['settings']['slots_from']}) at {d['settings']['ctx_per_slot']} tokens a slot")
if e['source']:
    print(f"summary energy: {e['joules_per_item']:.5f} J per output token +-{100 * e['bound']:.2f}%, "
          f"{e['joules_per_request']:.3f} J a request, {e['power_w']:.1f} W on average (idle {fmt(e['idle_power_w'], 1)} W), "
          f"{f['output_tokens_per_s']:.1f} output tok/s, TPOT p99 {f['tpot_ms']['p99']:.2f} ms")
else:
    print(f"summary energy: no figure: {e['note']}")
print(f"summary machine: {gpu['name']}, driver {gpu['driver_version']}, {len(gpu['gpu_samples'])} state samples; warnings {d['warnings']}")
PY
finish
