#!/usr/bin/env bash
# A device call on ONNX Runtime's CUDA pack (carry [".devpack", ".devtree"]; tests/gpu/device/pack.sh
# makes .devtree): bash tests/gpu/device/ort_call.sh PART, from the repo root; the logs and
# record.txt (IB_RECORD) come back in $OUT. The parts are the eleventh session's calls.
set -u
END=$(( $(date +%s) + ${IB_CALL_S:-570} ))
R=$PWD P=$PWD/.devpack
mkdir -p build && xz -dc .devtree/build.tar.xz | tar xf - -C build && cp .devtree/*.so.1 .devtree/*.so .devpack/ 2>/dev/null
(cd $P && for f in *.xz; do [ -f "${f%.xz}" ] || xz -dkf "$f"; done && ln -sf libonnxruntime.so libonnxruntime.so.1)
export LD_LIBRARY_PATH=$P:$PWD/build:/usr/local/cuda/lib64:/usr/local/nvidia/lib64
export INFERBENCH_ONNXRUNTIME_LIBRARY=$P/libonnxruntime.so IB_RECORD=$OUT/record.txt IB_TEST_TMP=/tmp
IB=$R/build/inferbench
# Each part ends by the call's own limit (END: IB_CALL_S, default 570 s of the 600, from the
# script's start): a part that would run past it is cut short, so the parts before it and the
# summary still come back.
run() { local t=$1 n=$2 left=$(( END - $(date +%s) )); shift 2; echo "=== $n"; [ $left -lt 15 ] && { echo "skipped: the call's time is spent"; return; }; [ $t -gt $left ] && t=$left; local s=$(date +%s); timeout $t "$@" > $OUT/$n.log 2>&1; echo "rc=$? $(( $(date +%s)-s )) s"; grep -E '^(FAIL|[0-9]+ passed)|record:|^warning|^note' $OUT/$n.log | head -30; }
case $1 in
a) # the eleventh session's first call: issue 26's GPU unit tests, energy on EfficientNet-B0, the binding
  $IB info 2>&1 | head -6
  run 40 test_gpu build/tests/test_gpu
  run 60 test_ort_cuda build/tests/test_ort_cuda
  IB_ENERGY_MODELS=efficientnet-b0 run 300 energy bash tests/gpu/energy_gpu.sh $IB
  run 180 python bash tests/gpu/python_gpu.sh $IB ;;
b) # serve (issue 28 points 7, 8) and energy on ResNet-50
  run 45 serve1 $IB serve zoo:efficientnet-b0 --device cuda --rates 50 --requests 500
  run 45 serve4 $IB serve zoo:efficientnet-b0 --device cuda --rates 50 --requests 500 --instances 4
  run 230 serve bash tests/gpu/serve_gpu.sh $IB
  IB_ENERGY_MODELS=resnet-50 run 240 energy50 bash tests/gpu/energy_gpu.sh $IB ;;
next) # what the eleventh session left (the plan of device runs, now tests/gpu/device/PLAN.md)
  run 150 best128 $IB best zoo:efficientnet-b0 --device cuda --max-batch 128 --runs 50
  run 90 math bash tests/gpu/math_gpu.sh $IB
  # The energy window's rate against the timed runs' (docs/energy.md, "Open"), with the GPU-state
  # sampler and without: window_ms / items beside the device and host medians of a run.
  run 40 b1 $IB latency zoo:efficientnet-b0 --device cuda --quiet --json $OUT/b1.json
  run 40 b1_nostate $IB latency zoo:efficientnet-b0 --device cuda --quiet --no-gpu-state --json $OUT/b1_nostate.json
  run 40 b64 $IB latency zoo:efficientnet-b0 --device cuda --batch 64 --quiet --json $OUT/b64.json
  python3 - $OUT/b1.json $OUT/b1_nostate.json $OUT/b64.json <<'PY'
import json, sys
for f in sys.argv[1:]:
    try: d = json.load(open(f))
    except Exception as e: print(f, "unreadable", e); continue
    e, b = d["energy"], d["batch"]
    if not e.get("source"): print(f, "no energy:", e.get("note")); continue
    print("%s: window %.1f ms / %.0f inputs = %.4f ms an input; timed %.4f; device p50 %.4f host p50 %.4f ms a run (batch %d); %.4g J an input +-%.2g%%, %.0f W"
          % (f.split("/")[-1], e["window_ms"], e["items"], e["window_ms"] / e["items"], e["timed_ms_per_item"],
             d["latency_ms"]["p50"], d["host_latency_ms"]["p50"], b, e["joules_per_item"], 100 * e["bound"], e["power_w"]))
PY
  IB_ENERGY_MODELS=" " run 200 energy_s bash tests/gpu/energy_gpu.sh $IB
  run 120 best_energy $IB best zoo:efficientnet-b0 --device cuda --objective energy
  run 60 latency bash tests/gpu/latency_gpu.sh $IB ;;
best) # the twelfth session's: issue 28 point 9's times by step on the seventh session's command
  # (80.4 and 72.4 s then, before the far-behind rule), best --objective energy to its end on fp16
  run 200 best_heur $IB best zoo:efficientnet-b0 --device cuda --cudnn-search heuristic --max-batch 128 --runs 50
  run 200 best_energy16 $IB best zoo:efficientnet-b0 --device cuda --objective energy --math fp16 --cudnn-search heuristic --max-batch 128 --runs 50 --json $OUT/best_energy16.json ;;
energy16) # best --objective energy after the fix of the rows screened at the peak
  run 120 best_energy16 $IB best zoo:efficientnet-b0 --device cuda --objective energy --math fp16 --cudnn-search heuristic --max-batch 128 --runs 50 --json $OUT/best_energy16.json ;;
sampler) # the next session's first item: batch 1 with and without the GPU-state sampler, alternated
  for k in 1 2 3 4 5; do
    run 40 s$k $IB latency zoo:efficientnet-b0 --device cuda --quiet --json $OUT/s$k.json
    run 40 n$k $IB latency zoo:efficientnet-b0 --device cuda --quiet --no-gpu-state --json $OUT/n$k.json
  done
  python3 -c "
import json, sys
for k in range(1, 6):
    m = [json.load(open(f'$OUT/{w}{k}.json'))['latency_ms']['p50'] for w in 'sn']
    print(f'round {k}: sampled {m[0]:.4f} ms, --no-gpu-state {m[1]:.4f} ms ({100 * (m[1] / m[0] - 1):+.2f}%)')" ;;
issue35) # the fourteenth session's: the GPU sides of issue 35 (pitfall rows' intervals, throughput's
  # stop, serve's machine) on ONNX Runtime's CUDA provider
  $IB info 2>&1 | head -4
  run 60 test_gpu build/tests/test_gpu
  IB_PITFALLS_PARTS=forward run 150 pitfalls bash tests/gpu/pitfalls_noise_gpu.sh $IB
  run 60 serve_env bash tests/gpu/serve_env_gpu.sh $IB
  run 290 throughput_stop bash tests/gpu/throughput_stop_gpu.sh $IB
  for n in pitfalls serve_env throughput_stop; do echo "--- $n"; grep -vE '^ok ' $OUT/$n.log | cut -c1-300 | head -40; done ;;
*) echo "parts: a b next best energy16 sampler issue35" >&2; exit 2 ;;
esac
tail -n 14 $OUT/*.log | cut -c1-300
