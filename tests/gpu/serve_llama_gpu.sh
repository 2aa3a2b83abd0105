#!/usr/bin/env bash
# serve of a generative model on the GPU (docs/serve-generative.md):
# zoo:llama-3.2-1b (float16) on llama.cpp's CUDA build, served by the
# in-process engine at two Poisson rates with prompts of 512 tokens and
# outputs of 128 (8 slots, chunks of 512), the figures printed for the
# lead to read (docs/measurements.md), not checked. What is checked: the
# model is on the GPU, every request completed with its 128 tokens, the
# steps account for every token.
#
# The library: IB_LLAMA_LIBRARY (on the H100/H200: /tmp/llama, the sm_90
# build of ../shared/llama-sm90, as tests/gpu/device/llama_call.sh unpacks
# it), else the release set-up installed. The 3 GB model file is written
# once into INFERBENCH_ZOO_CACHE (default /tmp/inferbench-zoo). Rates and
# requests: IB_SERVE_RATES (default "2 8"), IB_SERVE_REQUESTS (default 60).
#
# IB_SERVE_PARTS (default "rates pitfalls": the runs above, then --pitfalls
# at one rate under saturation, below) adds the answer of issue
# 36 for each of IB_SERVE_MODELS (default F16 and Q4_K_M of llama-3.2-1b),
# 32 slots, 16 warm-up requests, prompt 512 / output 128:
#   curve   --rates IB_SERVE_CURVE_RATES (default "8,24,40"), 120 requests
#           a rate: TTFT/TPOT p50/p99, goodput, tokens/s, KV occupancy, the
#           knee and the saturation point;
#   search  the highest rate at TTFT p99 <= 500 ms and TPOT p99 <= 30 ms
#           (460 requests a rate: 459 all within are the fewest that pass
#           p99 at 99%), from the rate the warm-up served; its requests
#           against a sweep of the same grid (the issue's target: a third).
#   pitfalls --pitfalls at one rate (below), on the F16 model.
#   trace   a trace-shaped mix: a SYNTHETIC trace of the Azure LLM
#           inference (conversation) trace's shape written by
#           scripts/synthetic_azure_trace.py (its CSV format; bursty gamma
#           arrivals of shape 0.5, log-normal prompts of median 1020 tokens
#           and outputs of median 200, prompt + output clipped to 4096),
#           IB_SERVE_TRACE_REQUESTS (default 400) at a mean
#           IB_SERVE_TRACE_RATE (default 8) a second, seed
#           IB_SERVE_TRACE_SEED (default 1), served by --arrivals FILE on
#           32 slots of 4096 tokens at the same targets: TTFT, queue, TPOT,
#           ITL, goodput and why the tail is what it is (prefill-decode
#           interference with long prompts). About 70 s a model.
# IB_SERVE_EXTRA: more options for every part's runs (as "--option kv_unified=on").
# About 100 s a model for curve and search on an H100 (the F16 file written
# once, the Q4_K_M one quantized once: add 30 s each the first time).
. "$(dirname "$0")/../cli/lib.sh"
. "$(dirname "$0")/require_device.sh"
lib=${IB_LLAMA_LIBRARY:-}
export INFERBENCH_ZOO_CACHE=${INFERBENCH_ZOO_CACHE:-/tmp/inferbench-zoo}
mkdir -p "$INFERBENCH_ZOO_CACHE"
opts=(--device cuda --quiet --prompt-tokens 512 --new-tokens 128 --slots 8 --prefill-chunk 512
      --requests "${IB_SERVE_REQUESTS:-60}" --slo-ttft-ms 500 --slo-tpot-ms 30)
[ -n "$lib" ] && opts+=(--option "library=$lib")
read -r -a extra <<<"${IB_SERVE_EXTRA:-}"
opts+=("${extra[@]}")

parts=" ${IB_SERVE_PARTS:-rates pitfalls} "
[[ $parts == *" rates "* ]] && for rate in ${IB_SERVE_RATES:-2 8}; do
  out="$TMP/serve_$rate.json"
  "$IB" serve zoo:llama-3.2-1b "${opts[@]}" --rate "$rate" --json "$out" >"$TMP/serve_$rate.txt" 2>"$TMP/err"
  rc=$?
  cat "$TMP/serve_$rate.txt" "$TMP/err"
  if [ $rc != 0 ]; then fail "rate $rate: exit $rc"; continue; fi
  json_check "$out" "d['info']['device'] == 'cuda' and d['info']['n_gpu_layers'] > 0" "rate $rate: on the GPU"
  json_check "$out" "d['figures']['completed'] == len(d['requests']) and all(r['generated_tokens'] == 128 for r in d['requests'])" "rate $rate: every request's 128 tokens"
  json_check "$out" "sum(s['decode_tokens'] for s in d['steps']) == 127 * len(d['requests']) and sum(s['prefill_tokens'] for s in d['steps']) == 512 * len(d['requests'])" "rate $rate: the steps account for every token"
  python3 - "$out" "$rate" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); f = d['figures']; st = d['steps']
q = lambda k, p: f[k][p] if f[k] else float('nan')
chunked = [s['end_ms'] - s['start_ms'] for s in st if s['prefill_tokens'] > 0 and s['decode_tokens'] > 0]
plain = [s['end_ms'] - s['start_ms'] for s in st if s['prefill_tokens'] == 0]
med = lambda x: sorted(x)[len(x) // 2] if x else float('nan')
print(f"summary rate {sys.argv[2]}/s: {f['completed']} requests, achieved {f['achieved_rate']:.3f}/s, pace {f['pace'] or float('nan'):.3f}; "
      f"TTFT p50 {q('ttft_ms','p50'):.1f} p99 {q('ttft_ms','p99'):.1f} ms (queue p99 {q('queue_ms','p99'):.1f}); "
      f"TPOT p50 {q('tpot_ms','p50'):.2f} p99 {q('tpot_ms','p99'):.2f} ms; ITL p50 {q('itl_ms','p50'):.2f} p99 {q('itl_ms','p99'):.2f} ms; "
      f"e2e p99 {q('e2e_ms','p99'):.0f} ms; {f['output_tokens_per_s']:.1f} output tok/s, {f['total_tokens_per_s']:.0f} total; "
      f"goodput (TTFT<=500, TPOT<=30) {f['goodput_rate']:.3f}/s ({100 * f['good_share']:.0f}%); "
      f"steps {len(st)}: decode-only median {med(plain):.2f} ms, with a chunk {med(chunked):.2f} ms")
PY
done

# The answer of issue 36: the curve and the SLO search on each model.
answer=(--device cuda --quiet --prompt-tokens 512 --new-tokens 128 --slots 32 --prefill-chunk 512
        --warmup-requests 16 --slo-ttft-ms 500 --slo-tpot-ms 30)
[ -n "$lib" ] && answer+=(--option "library=$lib")
answer+=("${extra[@]}")
# The trace-shaped mix: one synthetic trace for every model (the same
# requests), its lengths those of the file.
tracing=(--device cuda --quiet --slots 32 --prefill-chunk 512 --warmup-requests 16 --slo-ttft-ms 500
         --slo-tpot-ms 30)
[ -n "$lib" ] && tracing+=(--option "library=$lib")
tracing+=("${extra[@]}")
trace="$TMP/trace.csv"
[[ $parts == *" trace "* ]] && python3 "$(dirname "$0")/../../scripts/synthetic_azure_trace.py" \
  --requests "${IB_SERVE_TRACE_REQUESTS:-400}" --rate "${IB_SERVE_TRACE_RATE:-8}" --seed "${IB_SERVE_TRACE_SEED:-1}" >"$trace"
for model in ${IB_SERVE_MODELS:-zoo:llama-3.2-1b zoo:llama-3.2-1b?q4_k_m}; do
  tag=$(echo "$model" | tr -c 'a-z0-9_\n' '_')
  if [[ $parts == *" curve "* ]]; then
    out="$TMP/curve_$tag.json"
    "$IB" serve "$model" "${answer[@]}" --requests 120 --rates "${IB_SERVE_CURVE_RATES:-8,24,40}" \
      --json "$out" >"$TMP/curve_$tag.txt" 2>"$TMP/err"
    rc=$?
    cat "$TMP/curve_$tag.txt" "$TMP/err"
    if [ $rc != 0 ]; then fail "$model curve: exit $rc"; else
      json_check "$out" "d['at']['info']['device'] == 'cuda' and all(p['completed'] == p['scheduled'] for p in d['points'])" "$model curve: on the GPU, every request of every rate completed"
      python3 - "$out" "$model" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); c = d['curve']
for p in d['points']:
    print(f"summary curve {sys.argv[2]} {p['offered_rate']:g}/s: achieved {p['achieved_rate']:.2f}/s, pace {p['pace']:.3f}, TTFT growth {p['ttft_growth']:.2f}; TTFT p50 {p['ttft_p50_ms']:.1f} p99 {p['ttft_p99_ms']:.1f} ms; "
          f"TPOT p50 {p['tpot_p50_ms']:.2f} p99 {p['tpot_p99_ms']:.2f} ms; goodput {p['goodput_rate']:.2f}/s ({100 * p['good_share']:.0f}%); "
          f"{p['output_tokens_per_s']:.0f} output tok/s; KV mean {100 * p['kv_mean_share']:.0f}% max {100 * p['kv_max_share']:.0f}%; met {p['met']}")
print(f"summary curve {sys.argv[2]}: knee {c['knee_rate']}/s, saturation {c['saturation_rate']}/s")
PY
    fi
  fi
  if [[ $parts == *" search "* ]]; then
    out="$TMP/search_$tag.json"
    "$IB" serve "$model" "${answer[@]}" --requests 460 --slo-percentile 99 --json "$out" >"$TMP/search_$tag.txt" 2>"$TMP/err"
    rc=$?
    cat "$TMP/search_$tag.txt" "$TMP/err"
    if [ $rc != 0 ]; then fail "$model search: exit $rc"; else
      json_check "$out" "d['at']['info']['device'] == 'cuda' and d['search']['rate_found'] > 0" "$model search: a rate found on the GPU"
      json_check "$out" "3 * d['search']['requests_served'] <= d['search']['sweep_requests']" "$model search: at most a third of the sweep's requests"
      python3 - "$out" "$model" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); s = d['search']; pts = d['points']
best = next(p for p in pts if p['offered_rate'] == s['rate_found'])
print(f"summary search {sys.argv[2]} (TTFT p99 <= 500 ms, TPOT p99 <= 30 ms): {s['rate_found']:.3f}/s found, "
      f"last failing {s['last_failed_rate'] or 0:.3f}/s (grid {100 * s['grid_step']:.2f}%); there TTFT p99 {best['ttft_p99_ms']:.1f} ms, "
      f"TPOT p99 {best['tpot_p99_ms']:.2f} ms, goodput {best['goodput_rate']:.2f}/s ({100 * best['good_share']:.0f}%), "
      f"{best['output_tokens_per_s']:.0f} output tok/s, KV max {100 * best['kv_max_share']:.0f}%; "
      f"{s['requests_served']} requests over {len(pts)} rates against {s['sweep_requests']} for the sweep "
      f"({s['sweep_rates']} rates): {100 * s['requests_served'] / s['sweep_requests']:.1f}%; rates "
      + ", ".join(f"{p['offered_rate']:.2f}{'+' if p['met'] else '-'}({p['admitted']}, over {p['ttft_over']}/{p['tpot_over']})" for p in pts))
PY
    fi
  fi
  if [[ $parts == *" trace "* ]]; then
    out="$TMP/trace_$tag.json"
    "$IB" serve "$model" "${tracing[@]}" --arrivals "$trace" --json "$out" >"$TMP/trace_$tag.txt" 2>"$TMP/err"
    rc=$?
    cat "$TMP/trace_$tag.txt" "$TMP/err"
    if [ $rc != 0 ]; then fail "$model trace: exit $rc"; else
      json_check "$out" "d['info']['device'] == 'cuda' and d['info']['n_gpu_layers'] > 0" "$model trace: on the GPU"
      json_check "$out" "d['figures']['completed'] == len(d['requests']) == $(($(grep -c '' "$trace") - 1)) and all(r['generated_tokens'] == r['output_tokens'] for r in d['requests'])" "$model trace: every request of the file completed with its output"
      json_check "$out" "[(r['prompt_tokens'], r['output_tokens']) for r in d['requests']] == [tuple(map(int, r[1:])) for r in list(__import__('csv').reader(open('$trace')))[1:]]" "$model trace: each request's lengths the file's"
      python3 - "$trace" "$out" "$model" <<'PY'
import csv, json, sys
rows = list(csv.reader(open(sys.argv[1])))[1:]
d = json.load(open(sys.argv[2])); f = d['figures']; rq = d['requests']
q = lambda k, p: f[k][p] if f[k] else float('nan')
pr = sorted(int(c) for _, c, _ in rows); ou = sorted(int(g) for _, _, g in rows)
mid = lambda x, p: x[min(len(x) - 1, int(p * len(x)))]
print(f"summary trace {sys.argv[3]} (synthetic, Azure conversation shape): {len(rq)} requests over {f['span_ms'] / 1e3:.1f} s, "
      f"offered {f['offered_rate']:.2f}/s, achieved {f['achieved_rate']:.2f}/s; prompt p50 {mid(pr, .5)} p99 {mid(pr, .99)}, "
      f"output p50 {mid(ou, .5)} p99 {mid(ou, .99)} tokens; TTFT p50 {q('ttft_ms','p50'):.1f} p99 {q('ttft_ms','p99'):.1f} ms "
      f"(queue p99 {q('queue_ms','p99'):.1f}); TPOT p50 {q('tpot_ms','p50'):.2f} p99 {q('tpot_ms','p99'):.2f} ms; "
      f"ITL p99 {q('itl_ms','p99'):.2f} ms; goodput (TTFT<=500, TPOT<=30) {f['goodput_rate']:.2f}/s ({100 * f['good_share']:.0f}%); "
      f"{f['output_tokens_per_s']:.0f} output tok/s, {f['total_tokens_per_s']:.0f} total")
PY
      grep -E "^(ITL tail|TPOT tail|TTFT = |KV cache)" "$TMP/trace_$tag.txt" | sed "s|^|summary trace $model: |"
    fi
  fi
done
# The pitfalls of serving benchmarks at a rate near saturation but under it
# (IB_SERVE_PITFALL_RATE, default 8 a second; IB_SERVE_PITFALL_REQUESTS,
# default 60): the rows printed (docs/serve-generative.md, "Pitfalls"),
# checked only for being there and measured.
if [[ $parts == *" pitfalls "* ]]; then
  prate=${IB_SERVE_PITFALL_RATE:-8}
  out="$TMP/pitfalls.json"
  "$IB" serve zoo:llama-3.2-1b "${opts[@]}" --requests "${IB_SERVE_PITFALL_REQUESTS:-60}" --rate "$prate" --pitfalls \
    --json "$out" >"$TMP/pitfalls.txt" 2>"$TMP/err"
  rc=$?
  sed -n '/^pitfalls of serving benchmarks/,$p' "$TMP/pitfalls.txt"
  cat "$TMP/err"
  if [ $rc != 0 ]; then fail "pitfalls at rate $prate: exit $rc"; else
    json_check "$out" "len(d['pitfalls']) == 6 and all(p['status'] == 'ok' for p in d['pitfalls'])" "pitfalls: every row measured"
    python3 - "$out" "$prate" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for p in d['pitfalls']:
    ci = [float('nan') if x is None else x for x in (p.get('error_ci95_pct') or [None, None])]
    print(f"summary pitfall rate {sys.argv[2]}/s: {p['name']}: {p['figure']} {p['reports']:.4g} vs {p['correct']:.4g} "
          f"({p['error_pct']:+.1f}%, CI [{ci[0]:+.1f}%, {ci[1]:+.1f}%]) {p['verdict']}")
PY
  fi
fi
finish
