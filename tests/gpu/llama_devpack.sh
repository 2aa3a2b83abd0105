#!/usr/bin/env bash
# Assembles what tests/gpu/llama_gpu.sh needs on the lent H200 (no network
# there) into the ignored .devpack/llama/ (about 47 MB: carry it alone, not
# with ONNX Runtime's pack): the sm_90 llama.cpp build of
# ../shared/llama-sm90 (made from this release's bundle on the H200, whose
# driver cannot run the npm CUDA build), the program and
# llama_gpu_check from build/, and the two libraries the device lacks.
# Then prints the command to run there. Usage: tests/gpu/llama_devpack.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
shared=${IB_LLAMA_SM90:-../shared/llama-sm90}
for f in build/inferbench build/tests/llama_gpu_check; do
  [ -x "$f" ] || { echo "no $f: build first (make build)" >&2; exit 2; }
done
ls "$shared"/llama-sm90.tar.xz.part0* >/dev/null || { echo "no $shared/llama-sm90.tar.xz.part0*" >&2; exit 2; }
rm -rf .devpack/llama && mkdir -p .devpack/llama
cp "$shared"/llama-sm90.tar.xz.part0* build/inferbench build/tests/llama_gpu_check .devpack/llama/
cp /lib/x86_64-linux-gnu/libprotobuf-c.so.1 /lib/x86_64-linux-gnu/libcjson.so.1 .devpack/llama/
du -sh .devpack/llama >&2
cat <<'CMD'
On the device (carry [".devpack/llama"]):
mkdir -p /tmp/llama && cat .devpack/llama/llama-sm90.tar.xz.part0* | xz -d | tar xf - -C /tmp/llama && export LD_LIBRARY_PATH=$PWD/.devpack/llama:/tmp/llama:/usr/local/cuda/lib64:/usr/local/nvidia/lib64 && IB_LLAMA_LIBRARY=/tmp/llama IB_LLAMA_GPU_CHECK=$PWD/.devpack/llama/llama_gpu_check INFERBENCH_ZOO_CACHE=/tmp/inferbench-zoo IB_LLAMA_GPU_Q4=1 bash tests/gpu/llama_gpu.sh $PWD/.devpack/llama/inferbench
CMD
