#!/usr/bin/env bash
# inferbench generate on the GPU (docs/generate.md): zoo:llama-3.2-1b in
# F16 and Q4_K_M with every layer offloaded: TTFT at P = 512, the per-token
# p50/p99 at depths 512 and 4096, the most sequences at 4096 tokens of
# context each and their tokens/s, and the pitfall rows. The figures are
# printed (the lead records them in docs/measurements.md), not bounded.
# What is checked: the model is on the GPU, the counts, tokens/s = tokens /
# time exactly, the search's answer, the pitfall rows measured; the decode
# energy (docs/energy.md, "For generation"): from NVML's counter, its
# window aligned on the counter's changes, its bound at most 5%, tokens =
# the window's steps; recorded (record: lines): joules per token and tokens
# per joule at depth 512, the prefill's per prompt token, and at each
# count of the sequence curve with its most efficient count.
#
# The library: IB_LLAMA_LIBRARY (on the H200: /tmp/llama, the sm_90 build of
# ../shared/llama-sm90, passed on as INFERBENCH_LLAMA_LIBRARY), else the
# release set-up installed. The zoo's GGUF files go to INFERBENCH_ZOO_CACHE
# (default /tmp/inferbench-zoo, kept between runs). IB_GEN_GPU_MODELS:
# which models (default both); IB_GEN_GPU_PARTS: which measurements
# (default "depth512 depth4096 search pitfalls"; "compare_sessions", not
# by default: --sessions 3 twice at depth 512 and compare of the two
# merged results, whose decode and prefill energy per token must be
# compared across the sessions, never "not in both files", the lines
# recorded); IB_GEN_GPU_RUNS: --runs of each (default generate's own).
# With OUT set, the JSON files are copied there.
. "$(dirname "$0")/../cli/lib.sh"
. "$(dirname "$0")/require_device.sh"
[ -n "${IB_LLAMA_LIBRARY:-}" ] && export INFERBENCH_LLAMA_LIBRARY="$IB_LLAMA_LIBRARY"
export INFERBENCH_ZOO_CACHE=${INFERBENCH_ZOO_CACHE:-/tmp/inferbench-zoo}
mkdir -p "$INFERBENCH_ZOO_CACHE"
read -r -a models <<<"${IB_GEN_GPU_MODELS:-zoo:llama-3.2-1b zoo:llama-3.2-1b?q4_k_m}"
read -r -a parts <<<"${IB_GEN_GPU_PARTS:-depth512 depth4096 search pitfalls}"

summary() { # FILE: the figures of one result, one line
  python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
w, s = d['workload'], d['settings']
line = (f"{w['model']} {w['weights_type']}: P {s['prompt_tokens']} N {s['new_tokens']} depth {s['depth']}: "
        f"TTFT p50 {d['ttft_ms']['p50']:.3f} ms (cold {d['cold_prefill_ms']:.1f}), per-token p50 "
        f"{d['token_ms']['p50']:.4f} p99 {d['token_ms']['p99']:.4f} ms, {d['tokens_per_s']:.1f} tokens/s, "
        f"prompt {d['prompt_tokens_per_s']:.0f} tokens/s")
q = d['sequences']
if q['searched']:
    top = [p for p in q['points'] if p['sequences'] == q['largest_fitting']][0]
    line += (f"; largest {q['largest_fitting']} sequences at {q['ctx_per_seq']} tokens each"
             f"{' (the bound)' if q['limited_by_max'] else ''}: {top['tokens_per_s']:.0f} tokens/s, "
             f"TPOT {top['tpot_ms']:.3f} ms; peak {q['peak']}")
for r in d.get('pitfalls', []):
    line += f"\n  {r['name']}: {r['reports']:.5g} vs {r['correct']:.5g} ({r['error_pct']:+.1f}%)" if r['applies'] else \
            f"\n  {r['name']}: n/a ({r['not_applicable']})"
print(line)
PY
}

# energy_checks FILE LABEL: the decode window's figure from the counter,
# aligned, within 5%; recorded at depth 512 and along the curve.
energy_checks() {
  local json=$1 label=$2
  json_check "$json" "(lambda e: e['source'] == 'counter' and e['aligned'] and e['bound'] <= 0.05 and e['items'] > 0 and abs(e['joules_per_item'] * e['items'] / e['joules'] - 1) < 1e-9)(d['decode_energy'])" "$label: decode energy from the counter, aligned, bound <= 5% ($(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['decode_energy']['note'] or 'a figure')" "$json"))"
  case $label in
    *depth512)
      json_record "$json" "'%(joules_per_item).4g J/token, %(items_per_joule).4g tokens/J (+-%(pct).2g%%), %(power_w).4g W over %(window_ms).4g ms, idle %(idle_power_w).4g W, %(joules_per_item_above_idle).4g J/token above idle' % dict(d['decode_energy'], pct=100 * d['decode_energy']['bound'])" "$label: decode energy"
      json_record "$json" "d['prefill_energy']['note'] if d['prefill_energy']['source'] is None else '%.4g J/prompt token, %.4g J a request (+-%.2g%%)' % (d['prefill_energy']['joules_per_item'], d['prefill_energy']['joules_per_request'], 100 * d['prefill_energy']['bound'])" "$label: prefill energy" ;;
    *search)
      json_record "$json" "', '.join('%d: %s' % (p['sequences'], 'no figure' if p['energy']['source'] is None else '%.4g J/token %.4g tokens/J +-%.2g%%' % (p['energy']['joules_per_item'], p['energy']['items_per_joule'], 100 * p['energy']['bound'])) for p in d['sequences']['points']) + '; most efficient %s, peak %s' % (d['sequences']['most_efficient'], d['sequences']['peak'])" "$label: energy along the curve"
      json_check "$json" "all(p['energy']['source'] == 'counter' and p['energy']['bound'] <= 0.05 for p in d['sequences']['points'] if p['status'] == 'ok')" "$label: every count's energy from the counter within 5%" ;;
  esac
}

# compare_sessions MODEL TAG: two merged results of 3 sessions compared
# (docs/compare.md, "Generation results"): the energy across sessions.
compare_sessions() {
  local m=$1 tag=$2 runs=()
  [ -n "${IB_GEN_GPU_RUNS:-}" ] && runs=(--runs "$IB_GEN_GPU_RUNS")
  for side in a b; do
    expect_exit 0 "$m: 3 sessions ($side)" -- "$IB" generate "$m" --device cuda --quiet --prompt-tokens 512 \
      --new-tokens 128 --sessions 3 "${runs[@]}" --json "$TMP/$tag-sessions-$side.json" || { cat "$TMP/err"; return; }
    [ -n "${OUT:-}" ] && cp "$TMP/$tag-sessions-$side.json" "$OUT/"
  done
  expect_exit 0 "$m: compare of the merged results" -- "$IB" compare "$TMP/$tag-sessions-a.json" \
    "$TMP/$tag-sessions-b.json" --json "$TMP/$tag-sessions-compare.json" || { cat "$TMP/err"; return; }
  cat "$TMP/out"
  expect_grep "^sessions: the intervals are two-level \(A: 3 sessions, B: 3\)" "$TMP/out" "$m: compare two-level"
  expect_grep "^energy per token \(decode\): .* \(t over the sessions' log figures, A: 3 sessions, B: 3" "$TMP/out" \
    "$m: compare: the decode energy across sessions"
  json_check "$TMP/$tag-sessions-compare.json" "all(d[k]['pct'] is not None and d[k]['verdict'] != 'not in both files' for k in ('energy_change', 'prefill_energy_change'))" "$m: compare json: both energy changes"
  json_record "$TMP/$tag-sessions-compare.json" "'decode %+.2f%% [%+.2f%%, %+.2f%%] %s; prefill %+.2f%% [%+.2f%%, %+.2f%%] %s' % tuple(v for k in ('energy_change', 'prefill_energy_change') for v in (d[k]['pct'], *d[k]['interval_pct'], d[k]['verdict']))" "$m: compare of two sets of 3 sessions, energy"
}

for m in "${models[@]}"; do
  tag=$(echo "$m" | tr -c 'a-zA-Z0-9.\n' '_')
  for part in "${parts[@]}"; do
    [ "$part" = compare_sessions ] && { compare_sessions "$m" "$tag"; continue; }
    case $part in
      depth512) extra=(--prompt-tokens 512 --new-tokens 128) ;;
      depth4096) extra=(--prompt-tokens 512 --new-tokens 128 --depth 4096) ;;
      search) extra=(--prompt-tokens 512 --new-tokens 128 --search-sequences --ctx-per-seq 4096) ;;
      pitfalls) extra=(--prompt-tokens 512 --new-tokens 128 --pitfalls) ;;
      *) fail "unknown part $part"; continue ;;
    esac
    case ${IB_GEN_GPU_RUNS:-} in
      '') ;;
      *) extra+=(--runs "$IB_GEN_GPU_RUNS") ;;
    esac
    json="$TMP/$tag-$part.json"
    expect_exit 0 "$m $part" -- "$IB" generate "$m" --device cuda --quiet "${extra[@]}" --json "$json" || {
      cat "$TMP/err"; continue; }
    summary "$json"
    [ -n "${OUT:-}" ] && cp "$json" "$OUT/"
    json_check "$json" "d['device'] == 'cuda' and d['workload']['n_gpu_layers'] >= d['workload']['n_layers'] > 0" "$m $part: every layer on the GPU"
    json_check "$json" "d['runs'] == len(d['samples']['token_ms']) and d['tokens_per_s'] == d['runs'] * d['settings']['new_tokens'] / sum(x for r in d['samples']['token_ms'] for x in r) * 1e3" "$m $part: tokens/s is tokens / time"
    energy_checks "$json" "$m $part"
    case $part in
      search) json_check "$json" "d['sequences']['largest_fitting'] >= 1 and d['sequences']['points'][-1]['sequences'] == d['sequences']['largest_fitting'] and d['sequences']['points'][-1]['status'] == 'ok'" "$m: the search's answer timed" ;;
      pitfalls) json_check "$json" "len(d['pitfalls']) == 8 and all(r['status'] == 'ok' for r in d['pitfalls'])" "$m: the pitfall rows measured" ;;
    esac
  done
done
finish
