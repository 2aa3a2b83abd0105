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
# requests: IB_SERVE_RATES (default "2 8"), IB_SERVE_REQUESTS (default 60);
# then --pitfalls at one rate (below).
. "$(dirname "$0")/../cli/lib.sh"
. "$(dirname "$0")/require_device.sh"
lib=${IB_LLAMA_LIBRARY:-}
export INFERBENCH_ZOO_CACHE=${INFERBENCH_ZOO_CACHE:-/tmp/inferbench-zoo}
mkdir -p "$INFERBENCH_ZOO_CACHE"
opts=(--device cuda --quiet --prompt-tokens 512 --new-tokens 128 --slots 8 --prefill-chunk 512
      --requests "${IB_SERVE_REQUESTS:-60}" --slo-ttft-ms 500 --slo-tpot-ms 30)
[ -n "$lib" ] && opts+=(--option "library=$lib")

for rate in ${IB_SERVE_RATES:-2 8}; do
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
print(f"summary rate {sys.argv[2]}/s: {f['completed']} requests, achieved {f['achieved_rate']:.3f}/s; "
      f"TTFT p50 {q('ttft_ms','p50'):.1f} p99 {q('ttft_ms','p99'):.1f} ms (queue p99 {q('queue_ms','p99'):.1f}); "
      f"TPOT p50 {q('tpot_ms','p50'):.2f} p99 {q('tpot_ms','p99'):.2f} ms; ITL p50 {q('itl_ms','p50'):.2f} p99 {q('itl_ms','p99'):.2f} ms; "
      f"e2e p99 {q('e2e_ms','p99'):.0f} ms; {f['output_tokens_per_s']:.1f} output tok/s, {f['total_tokens_per_s']:.0f} total; "
      f"goodput (TTFT<=500, TPOT<=30) {f['goodput_rate']:.3f}/s ({100 * f['good_share']:.0f}%); "
      f"steps {len(st)}: decode-only median {med(plain):.2f} ms, with a chunk {med(chunked):.2f} ms")
PY
done

# The pitfalls of serving benchmarks at a rate near saturation but under it
# (IB_SERVE_PITFALL_RATE, default 8 a second; IB_SERVE_PITFALL_REQUESTS,
# default 60): the rows printed (docs/serve-generative.md, "Pitfalls"),
# checked only for being there and measured.
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
finish
