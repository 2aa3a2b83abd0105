#!/usr/bin/env bash
# A device call on the sm_90 llama.cpp build (carry [".llpack", ".devtree"];
# tests/gpu/device/pack.sh makes both): bash tests/gpu/device/llama_call.sh PART, from the repo
# root: generate and llama-bench alternated, the Q4_K_M parts of generate_gpu.sh, the
# Python generation script; a summary of every JSON at the end.
set -u
END=$(( $(date +%s) + ${IB_CALL_S:-570} ))
R=$PWD
mkdir -p build /tmp/llama /tmp/ibzoo && xz -dc .devtree/build.tar.xz | tar xf - -C build
[ -f /tmp/llama/libllama.so ] || cat .llpack/llama-sm90.tar.xz.part0* | xz -d | tar xf - -C /tmp/llama
export LD_LIBRARY_PATH=$R/.devtree:$R/build:/tmp/llama:/usr/local/cuda/lib64:/usr/local/nvidia/lib64
export INFERBENCH_ZOO_CACHE=/tmp/ibzoo IB_RECORD=$OUT/record.txt IB_TEST_TMP=/tmp INFERBENCH_LLAMA_LIBRARY=/tmp/llama IB_LLAMA_LIBRARY=/tmp/llama
IB=$R/build/inferbench L="--option library=/tmp/llama"
BENCH=/tmp/llama/llama-bench
# Each part ends by the call's own limit (END: IB_CALL_S, default 570 s of the 600, from the
# script's start): a part that would run past it is cut short, so the parts before it and the
# summary still come back.
run() { local t=$1 n=$2 left=$(( END - $(date +%s) )); shift 2; echo "=== $n"; [ $left -lt 15 ] && { echo "skipped: the call's time is spent"; return; }; [ $t -gt $left ] && t=$left; local s=$(date +%s); timeout $t "$@" > $OUT/$n.log 2>&1; echo "rc=$? $(( $(date +%s)-s )) s"; grep -E '^(FAIL|[0-9]+ passed)|record:|^warning|^note' $OUT/$n.log | head -12 | cut -c1-400; }
gen() { local n=$1 m=$2; shift 2; run 90 $n $IB generate "$m" --device cuda --quiet $L --json $OUT/$n.json "$@"; }
bench() { local n=$1 f=$2; run 60 $n $BENCH -m "$f" -p 512 -n 128 -d 0,512,4096 -ngl 99 -r 5 -o json; cp $OUT/$n.log $OUT/$n.bench.json; }
# generate against llama-bench's tg128 at depth 512, alternated: a first generate, then N pairs.
decode_pairs() {
  local F=zoo:llama-3.2-1b FF k
  gen d0 $F --runs 30
  FF=$(ls /tmp/ibzoo/*.gguf | grep -vi q4 | head -1)
  for k in $(seq 1 $1); do
    gen d$k $F --runs 30
    run 40 tg$k $BENCH -m "$FF" -p 0 -n 128 -d 512 -ngl 99 -r 5 -o json
    cp $OUT/tg$k.log $OUT/tg$k.bench.json
  done
}
summary() {
python3 - $OUT <<'PY'
import json, glob, os, sys
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
    n = os.path.basename(f)
    s = open(f).read()
    try: d = json.loads(s[s.index('['):] if n.endswith(".bench.json") else s)
    except Exception as e: print(n, "unreadable", e); continue
    if n.endswith(".bench.json"):
        for t in d: print(f"{n}: p{t['n_prompt']} n{t['n_gen']} d{t['n_depth']}: {t['avg_ts']:.2f} +- {t['stddev_ts']:.2f} t/s (fa {t.get('flash_attn')}, ub {t.get('n_ubatch')}, b {t.get('n_batch')}, thr {t.get('n_threads')}); reps ms {sorted(round(x / 1e6, 3) for x in t['samples_ns'])}")
        continue
    if 'ttft_ms' not in d: continue
    e, p = d.get('decode_energy') or {}, d.get('prefill_energy') or {}
    en = f"decode {e['joules_per_item']:.4g} J/token +-{100*e['bound']:.2g}% {e['power_w']:.0f} W idle {e['idle_power_w']:.0f} W, window {e['window_ms'] / e['items']:.4f} ms a token against {e['timed_ms_per_item']:.4f} timed" if e.get('source') else f"decode energy: {e.get('note')}"
    pn = f"prefill {p['joules_per_item']:.4g} J/prompt token ({p['joules_per_request']:.4g} J a request) +-{100*p['bound']:.2g}%" if p.get('source') else f"prefill energy: {p.get('note')}"
    w = d['workload']; s = d['settings']
    for row in d.get('pitfalls') or []: print(f"  {n} pitfall {row['key']}: {row['reports']} against {row['correct']} ({row['error_pct']}%) {row['status']}")
    print(f"{n}: {w.get('weights_type')} depth {s['depth']} runs {d['runs']}: TTFT p50 {d['ttft_ms']['p50']:.3f} ms, token p50 {d['token_ms']['p50']:.4f} p99 {d['token_ms']['p99']:.4f} ms, {d['tokens_per_s']:.1f} tok/s, prompt {d['prompt_tokens_per_s']:.0f} tok/s; {en}; {pn}")
PY
}
# The mixed batch laid out by sequence id (since 86152f3's fill_mixed), with one KV cache a
# sequence (kv_unified=off) and one for all (on): F16's curve at 8 and 24/s on 32 slots,
# 512 + 128 (about 100 s, the F16 file written first). Writes unified_choice (and prints
# "better kv_unified=X") when one setting's TPOT p50 is lower at every rate.
order_curves() {
  for u in off on; do
    run 70 unified_$u $IB serve zoo:llama-3.2-1b --device cuda --quiet $L --option kv_unified=$u \
      --prompt-tokens 512 --new-tokens 128 --slots 32 --prefill-chunk 512 --warmup-requests 16 \
      --slo-ttft-ms 500 --slo-tpot-ms 30 --requests 120 --rates 8,24 --json $OUT/curve_$u.json
  done
  python3 - $OUT <<'PY'
import json, sys
for u in ("off", "on"):
    try: d = json.load(open(f"{sys.argv[1]}/curve_{u}.json"))
    except Exception as e: print(f"kv_unified={u}: no result ({e})"); continue
    for p in d["points"]:
        print(f"kv_unified={u} {p['offered_rate']:g}/s: achieved {p['achieved_rate']:.2f}, pace {p['pace']:.3f}, TTFT p50 {p['ttft_p50_ms']:.1f} p99 {p['ttft_p99_ms']:.1f} ms, TPOT p50 {p['tpot_p50_ms']:.2f} p99 {p['tpot_p99_ms']:.2f} ms, {p['output_tokens_per_s']:.0f} output tok/s")
    st = d["at"].get("steps") or []
    plain = sorted(s["end_ms"] - s["start_ms"] for s in st if s["prefill_tokens"] == 0)
    chunk = sorted(s["end_ms"] - s["start_ms"] for s in st if s["prefill_tokens"] > 0)
    if plain: print(f"kv_unified={u} knee's run: {len(st)} steps, decode-only median {plain[len(plain)//2]:.3f} ms, with a chunk {chunk[len(chunk)//2] if chunk else float('nan'):.3f} ms, {sum(s['decode_tokens'] for s in st)/len(st):.2f} decode tokens a step")
ok = {}
for u in ("off", "on"):
    try: ok[u] = {p["offered_rate"]: p for p in json.load(open(f"{sys.argv[1]}/curve_{u}.json"))["points"]}
    except Exception: pass
if len(ok) == 2 and ok["on"].keys() == ok["off"].keys():
    for a, b in (("on", "off"), ("off", "on")):
        if all(ok[a][r]["tpot_p50_ms"] < ok[b][r]["tpot_p50_ms"] for r in ok[a]):
            print(f"better kv_unified={a}"); open(f"{sys.argv[1]}/unified_choice", "w").write(a)
PY
}
# The server's cost with the engine sampling greedily (--sampling greedy) and the server's
# prompt cache off: what is left is the server's chain past one pass, its HTTP and loop (80 s)
sample_cost() {
  IB_ENGINE_ARGS="--sampling greedy" IB_SERVER_ARGS="--cache-ram 0" IB_LLAMA_SERVER=/tmp/llama/llama-server \
    run 100 cost37g bash tests/gpu/server_cost_gpu.sh $IB
  grep -E "^(summary|FAIL|server on)" $OUT/cost37g.log | cut -c1-400
}
case $1 in
a)
  F=zoo:llama-3.2-1b Q='zoo:llama-3.2-1b?q4_k_m'
  gen f16_d512_r1 $F --runs 60
  FF=$(ls /tmp/ibzoo/*.gguf | grep -vi q4 | head -1); echo "gguf $FF"
  bench bench_f16_r1 $FF
  gen f16_d4096_r1 $F --depth 4096 --runs 40
  gen f16_d512_r2 $F --runs 60
  bench bench_f16_r2 $FF
  gen q4_d512 "$Q" --runs 60
  QF=$(ls /tmp/ibzoo/*q4_k_m*.gguf | head -1); echo "gguf $QF"
  bench bench_q4 $QF
  IB_GEN_GPU_MODELS="$Q" IB_GEN_GPU_PARTS="depth4096 search" IB_GEN_GPU_RUNS=40 OUT=$OUT run 200 genq4 bash tests/gpu/generate_gpu.sh $IB
  run 150 pygen bash tests/gpu/python_generate_gpu.sh $IB ;;
next) # what the eleventh session left: the prefill's gap to llama-bench, the energy windows'
  # rate (window_ms / items against the TPOT), best of a generative model (the Python script: part py)
  F=zoo:llama-3.2-1b
  gen f16_n128 $F --runs 60
  gen f16_n1 $F --new-tokens 1 --runs 200
  FF=$(ls /tmp/ibzoo/*.gguf | grep -vi q4 | head -1)
  bench bench_f16 $FF
  IB_BEST_GPU_OBJECTIVES=tpot run 280 best bash tests/gpu/best_llama_gpu.sh $IB ;;
py) # the Python generation script's parts 1 to 4 (all five take about 400 s on a slow host: part
  # rest runs 1 and 5), then a second round of the prefill's gap
  IB_PYGEN_PARTS="1 2 3 4" run 330 pygen bash tests/gpu/python_generate_gpu.sh $IB
  F=zoo:llama-3.2-1b
  gen f16_n128_r2 $F --runs 60
  gen f16_n1_r2 $F --new-tokens 1 --runs 200 ;;
b2b) # the twelfth session's last: the back-to-back prefill row against llama-bench's pp, alternated
  F=zoo:llama-3.2-1b
  gen f16_pit $F --pitfalls --runs 30
  FF=$(ls /tmp/ibzoo/*.gguf | grep -vi q4 | head -1)
  run 40 bench_pp1 $BENCH -m "$FF" -p 512 -n 0 -ngl 99 -r 10 -o json
  gen f16_pit2 $F --pitfalls --runs 30
  run 40 bench_pp2 $BENCH -m "$FF" -p 512 -n 0 -ngl 99 -r 10 -o json
  for n in bench_pp1 bench_pp2; do cp $OUT/$n.log $OUT/$n.bench.json; done ;;
decode) # decode against llama-bench's tg128 at depth 512, alternated
  decode_pairs 5 ;;
rest) # the thirteenth session's: the Python script's parts the py call's limit cut (1 writes the JSON
  # compare reads; 5 is hf_generation), then compare of two --sessions 3 generation results
  IB_PYGEN_PARTS="1 5" run 250 pygen bash tests/gpu/python_generate_gpu.sh $IB
  IB_GEN_GPU_MODELS=zoo:llama-3.2-1b IB_GEN_GPU_PARTS=compare_sessions IB_GEN_GPU_RUNS=10 run 250 gencmp bash tests/gpu/generate_gpu.sh $IB ;;
issue35) # the fourteenth session's: the GPU side of issue 35 (generation's pitfall rows' intervals)
  # and issue 36's first slice (a generative model served under load)
  IB_PITFALLS_PARTS=generate IB_PITFALLS_GEN_MODEL=zoo:llama-3.2-1b run 120 pitfalls bash tests/gpu/pitfalls_noise_gpu.sh $IB
  run 200 serve bash tests/gpu/serve_llama_gpu.sh $IB
  for n in pitfalls serve; do echo "--- $n"; grep -vE '^ok ' $OUT/$n.log | cut -c1-400 | head -40; done ;;
best35) # best's merged runs on the GPU (issue 35 point 5): one objective, TPOT (both take ~280 s)
  IB_BEST_GPU_OBJECTIVES=tpot run 400 best bash tests/gpu/best_llama_gpu.sh $IB
  grep -vE '^ok ' $OUT/best.log | cut -c1-300 | head -60 ;;
issue36) # the fifteenth session's: issue 36's answer (curve, SLO search: F16 and Q4_K_M), its pitfalls,
  # the engine's own cost, energy and default slots; then issue 37's llama-server on the GPU and the
  # client's calibrated ceiling on this machine's CPU (about 8 minutes in all)
  IB_SERVE_PARTS="curve search" run 330 answer36 bash tests/gpu/serve_llama_gpu.sh $IB
  grep -E "^(summary|FAIL)" $OUT/answer36.log | cut -c1-700
  run 80 cost36 bash tests/gpu/serve_engine_cost_gpu.sh $IB
  grep -E "^(summary|FAIL)" $OUT/cost36.log | cut -c1-500
  IB_SERVE_PARTS="pitfalls" run 90 pitfalls36 bash tests/gpu/serve_llama_gpu.sh $IB
  grep -E "^(summary|FAIL)" $OUT/pitfalls36.log | cut -c1-400
  IB_LLAMA_SERVER=/tmp/llama/llama-server run 45 server37 bash tests/gpu/llama_server_gpu.sh $IB
  grep -vE "^ok" $OUT/server37.log | tail -8 | cut -c1-400
  run 40 client37 bash tests/gpu/calibrate_client_gpu.sh $IB
  tail -14 $OUT/client37.log | cut -c1-300 ;;
both) # the sixteenth session's, for a short budget: issue 36's answer (the curve and the SLO search,
  # F16 and Q4_K_M) and the engine's own cost, then issue 37's curve and SLO rate in process and through llama-server (with
  # the client's lateness at the highest rate), then the client's calibrated ceiling
  IB_SERVE_PARTS="curve search" run 300 answer36 bash tests/gpu/serve_llama_gpu.sh $IB
  grep -E "^(summary|FAIL)" $OUT/answer36.log | cut -c1-700
  run 60 cost36 bash tests/gpu/serve_engine_cost_gpu.sh $IB
  grep -E "^(summary|FAIL)" $OUT/cost36.log | cut -c1-500
  IB_LLAMA_SERVER=/tmp/llama/llama-server run 200 rates37 bash tests/gpu/endpoint_rates_gpu.sh $IB
  grep -E "^(summary|FAIL)" $OUT/rates37.log | cut -c1-500
  run 40 client37 bash tests/gpu/calibrate_client_gpu.sh $IB
  tail -14 $OUT/client37.log | cut -c1-300 ;;
answer36) # issue 36's answer: the curve and the SLO search, F16 and Q4_K_M (about 4 minutes)
  IB_SERVE_PARTS="curve search" run 560 answer36 bash tests/gpu/serve_llama_gpu.sh $IB
  grep -E "^(summary|FAIL)" $OUT/answer36.log | cut -c1-700 ;;
trace36) # issue 36's trace-shaped mix: a synthetic trace of the Azure conversation trace's shape
  # (scripts/synthetic_azure_trace.py: 400 requests, a mean 8 a second, bursty) served on 32 slots by
  # F16 and Q4_K_M (about 3 minutes, 4 the first time: the files written; apart from issue36, whose
  # call takes about 8 of its 9.5 minutes already)
  IB_SERVE_PARTS="trace" run 540 trace36 bash tests/gpu/serve_llama_gpu.sh $IB
  grep -E "^(summary|FAIL)" $OUT/trace36.log | cut -c1-700 ;;
rates37) # issue 37's curve and SLO rate in process and through llama-server, the client's lateness
  # at the highest rate (about 200 s)
  IB_LLAMA_SERVER=/tmp/llama/llama-server run 280 rates37 bash tests/gpu/endpoint_rates_gpu.sh $IB
  grep -E "^(summary|FAIL)" $OUT/rates37.log | cut -c1-500 ;;
last17) # the seventeenth session's last call (its budget's last 900 s): issue 37 through
  # llama-server (the curve and the SLO rate on both sides, the client's lateness; the server's
  # cost), then Q4_K_M's SLO search, then F16's curve again (saturation by pace and TTFT growth)
  # and the trace-shaped mix
  IB_LLAMA_SERVER=/tmp/llama/llama-server run 150 rates37 bash tests/gpu/endpoint_rates_gpu.sh $IB
  grep -E "^(summary|FAIL)" $OUT/rates37.log | cut -c1-500
  IB_LLAMA_SERVER=/tmp/llama/llama-server run 130 cost37 bash tests/gpu/server_cost_gpu.sh $IB
  grep -E "^(summary|FAIL|server on)" $OUT/cost37.log | cut -c1-400
  IB_SERVE_MODELS='zoo:llama-3.2-1b?q4_k_m' IB_SERVE_PARTS="search" run 210 search36 bash tests/gpu/serve_llama_gpu.sh $IB
  grep -E "^(summary|FAIL)" $OUT/search36.log | cut -c1-700
  IB_SERVE_MODELS=zoo:llama-3.2-1b IB_SERVE_PARTS="curve trace" run 150 trace36 bash tests/gpu/serve_llama_gpu.sh $IB
  grep -E "^(summary|FAIL)" $OUT/trace36.log | cut -c1-700 ;;
last18) # the eighteenth session's second call (about 470 s): the server's cost with the offload
  # check by used memory, again with the server's sampler chain cut to one pass (its share of the
  # cost), Q4_K_M's SLO search, then decode against llama-bench since the CPU threadpool (a07edec:
  # one pair), then serve's pitfall rows at 8/s if the call's time allows
  IB_LLAMA_SERVER=/tmp/llama/llama-server run 90 cost37 bash tests/gpu/server_cost_gpu.sh $IB
  grep -E "^(summary|FAIL|server on)" $OUT/cost37.log | cut -c1-400
  IB_SERVER_ARGS="--samplers top_k --top-k 1" IB_LLAMA_SERVER=/tmp/llama/llama-server run 80 cost37k1 bash tests/gpu/server_cost_gpu.sh $IB
  grep -E "^(summary|FAIL|server on)" $OUT/cost37k1.log | cut -c1-400
  IB_SERVE_MODELS='zoo:llama-3.2-1b?q4_k_m' IB_SERVE_PARTS="search" run 270 search36 bash tests/gpu/serve_llama_gpu.sh $IB
  grep -E "^(summary|FAIL)" $OUT/search36.log | cut -c1-700
  decode_pairs 1
  IB_SERVE_MODELS=zoo:llama-3.2-1b IB_SERVE_PARTS="pitfalls" run 90 pitfalls36 bash tests/gpu/serve_llama_gpu.sh $IB
  grep -E "^(summary|FAIL)" $OUT/pitfalls36.log | cut -c1-400 ;;
last18b) # the eighteenth session's third call (about 200 s): the server's cost with its prompt
  # cache off (--cache-ram 0: the slot's old prompt saved to host memory at each admission), then
  # llama.cpp's own batched decode at the serve runs' shapes (512 + 128 on 32 slots; prompts of
  # 2048 on 25, the trace mix's steps of 32 ms)
  IB_SERVER_ARGS="--cache-ram 0" IB_LLAMA_SERVER=/tmp/llama/llama-server run 90 cost37c0 bash tests/gpu/server_cost_gpu.sh $IB
  grep -E "^(summary|FAIL|server on)" $OUT/cost37c0.log | cut -c1-400
  FF=$(ls /tmp/ibzoo/*.gguf | grep -vi q4 | head -1)
  run 60 bb512 /tmp/llama/llama-batched-bench -m "$FF" -c 24576 -b 2048 -ub 512 -npp 512 -ntg 128 -npl 1,4,16,24,32 -ngl 99 -fa on
  run 60 bb2048 /tmp/llama/llama-batched-bench -m "$FF" -c 131072 -b 2048 -ub 512 -npp 2048 -ntg 32 -npl 1,8,16,25 -ngl 99 -fa on
  grep -h '^|' $OUT/bb512.log $OUT/bb2048.log ;;
order18) order_curves ;;
sample18) sample_cost ;;
s19) # the nineteenth session's call (about 560 s): order18, sample18, then issue 36's answer
  # (both curves and searches) with the KV cache order18 found better (off, the default, if neither)
  order_curves
  sample_cost
  u=$(cat $OUT/unified_choice 2>/dev/null || echo off)
  IB_SERVE_EXTRA="--option kv_unified=$u" IB_SERVE_PARTS="curve search" run 330 answer36 bash tests/gpu/serve_llama_gpu.sh $IB
  grep -E "^(summary|FAIL)" $OUT/answer36.log | cut -c1-700 ;;
s19b) # the nineteenth session's second call (about 450 s): both SLO searches (run with
  # 2889178's guess from the failed rate's queue, reverted since), the server's cost with greedy's argmax fixed
  # (6c79197), F16's trace-shaped mix after the batch's layout (86152f3)
  IB_SERVE_PARTS="search" run 200 search19 bash tests/gpu/serve_llama_gpu.sh $IB
  grep -E "^(summary|FAIL)" $OUT/search19.log | cut -c1-900
  sample_cost
  IB_SERVE_MODELS=zoo:llama-3.2-1b IB_SERVE_PARTS="trace" run 200 trace19 bash tests/gpu/serve_llama_gpu.sh $IB
  grep -E "^(summary|FAIL)" $OUT/trace19.log | cut -c1-700 ;;
s19c) # in process against llama-server after the batch's layout, the server as it picks slots
  # (-np 16: least recently used) and with one KV cache for all (-kvu)
  IB_LLAMA_SERVER=/tmp/llama/llama-server run 270 rates19 bash tests/gpu/endpoint_rates_gpu.sh $IB
  grep -E "^(summary|FAIL)" $OUT/rates19.log | cut -c1-500
  IB_SERVER_ARGS=-kvu IB_LLAMA_SERVER=/tmp/llama/llama-server run 270 rates19kvu bash tests/gpu/endpoint_rates_gpu.sh $IB
  grep -E "^(summary|FAIL)" $OUT/rates19kvu.log | cut -c1-500 ;;
s19d) # the open questions of PLAN.md (about 400 s): llama-server with its default flash
  # attention against the engine, then the SLO search's cost over other seeds
  IB_SERVER_ARGS="-fa auto" IB_LLAMA_SERVER=/tmp/llama/llama-server run 200 rates19auto bash tests/gpu/endpoint_rates_gpu.sh $IB
  grep -E "^summary (curve|search) llama|^summary answer|^FAIL" $OUT/rates19auto.log | cut -c1-300
  for seed in 2 3; do
    IB_SERVE_EXTRA="--schedule-seed $seed" IB_SERVE_PARTS="search" run 170 search19s$seed bash tests/gpu/serve_llama_gpu.sh $IB
    grep -E "^(summary|FAIL)" $OUT/search19s$seed.log | cut -c1-900
  done ;;
s20) # for the next session (about 500 s): both SLO searches by the upper middle (4622505) on
  # seeds 1 and 2, then llama-server's -fa auto at -lv 4 (what it picks) on the rates script
  for seed in 1 2; do
    IB_SERVE_EXTRA="--schedule-seed $seed" IB_SERVE_PARTS="search" run 170 search20s$seed bash tests/gpu/serve_llama_gpu.sh $IB
    grep -E "^(summary|FAIL)" $OUT/search20s$seed.log | cut -c1-900
  done
  IB_LLAMA_SERVER_LOG=/tmp/server20.log IB_SERVER_ARGS="-fa auto -lv 4" IB_RATES=32 IB_LLAMA_SERVER=/tmp/llama/llama-server \
    run 150 rates20auto bash tests/gpu/endpoint_rates_gpu.sh $IB
  grep -E "^summary (curve|search) llama|^FAIL" $OUT/rates20auto.log | cut -c1-300
  grep -iE "flash|fa =|n_ubatch|n_batch|graph" /tmp/server20.log | sort | uniq -c | sort -rn | head -20 | cut -c1-300 ;;
cost37) # issue 37 item 5, the server's cost: the same GGUF and schedule in process and through
  # llama-server, compared (about 100 s)
  IB_LLAMA_SERVER=/tmp/llama/llama-server run 240 cost37 bash tests/gpu/server_cost_gpu.sh $IB
  grep -E "^(summary|FAIL|server on)" $OUT/cost37.log | cut -c1-400 ;;
*) echo "parts: a next py b2b decode rest issue35 best35 issue36 both answer36 trace36 rates37 last17 last18 last18b order18 sample18 s19 s19b s19c s19d s20 cost37" >&2; exit 2 ;;
esac
summary
tail -n 12 $OUT/pygen.log $OUT/genq4.log 2>/dev/null | cut -c1-300
