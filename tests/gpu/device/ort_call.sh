#!/usr/bin/env bash
# A device call on ONNX Runtime's CUDA pack (carry [".devpack", ".devtree"]; tests/gpu/device/pack.sh
# makes .devtree): bash tests/gpu/device/ort_call.sh PART, from the repo root; the logs and
# record.txt (IB_RECORD) come back in $OUT. The parts are the eleventh session's calls.
set -u
R=$PWD P=$PWD/.devpack
mkdir -p build && xz -dc .devtree/build.tar.xz | tar xf - -C build && cp .devtree/*.so.1 .devpack/ 2>/dev/null
(cd $P && for f in *.xz; do [ -f "${f%.xz}" ] || xz -dkf "$f"; done && ln -sf libonnxruntime.so libonnxruntime.so.1)
export LD_LIBRARY_PATH=$P:/usr/local/cuda/lib64:/usr/local/nvidia/lib64
export INFERBENCH_ONNXRUNTIME_LIBRARY=$P/libonnxruntime.so IB_RECORD=$OUT/record.txt IB_TEST_TMP=/tmp
IB=$R/build/inferbench
run() { local t=$1 n=$2; shift 2; echo "=== $n"; local s=$(date +%s); timeout $t "$@" > $OUT/$n.log 2>&1; echo "rc=$? $(( $(date +%s)-s )) s"; grep -E '^(FAIL|[0-9]+ passed)|record:|^warning|^note' $OUT/$n.log | head -30; }
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
next) # what the eleventh session left (docs/measurements.md, "What the next device session should run")
  run 150 best128 $IB best zoo:efficientnet-b0 --device cuda --max-batch 128 --runs 50
  run 90 math bash tests/gpu/math_gpu.sh $IB
  run 60 latency bash tests/gpu/latency_gpu.sh $IB
  IB_ENERGY_MODELS=" " run 200 energy_s bash tests/gpu/energy_gpu.sh $IB
  run 120 best_energy $IB best zoo:efficientnet-b0 --device cuda --objective energy ;;
*) echo "parts: a b next" >&2; exit 2 ;;
esac
tail -n 14 $OUT/*.log | cut -c1-300
