#!/usr/bin/env bash
# Builds llama.cpp from the git bundle set-up keeps (the release of the
# headers inferbench is built against), for machines where the prebuilt
# npm builds cannot run: on the H200 (driver 580, CUDA 13.0) the npm CUDA
# build's PTX (CUDA 13.1) does not load. docs/backend-llama.md.
#
#   scripts/build-llama.sh --cuda DEST [--arch 90] [--jobs N]   # CUDA build (the local toolkit)
#   scripts/build-llama.sh --cpu DEST [--configure-only]         # CPU build
#
# DEST/lib then holds libllama, libggml, libggml-base, libggml-cpu and (CUDA)
# libggml-cuda, plus llama-bench and llama-batched-bench in DEST/bin, built
# from the same source, for the comparison of docs/measurements.md, and
# llama-server, the OpenAI-compatible server an HTTP endpoint run measures
# (issue 37; docs/backend-llama.md). Give
# inferbench the folder with --option library=DEST/lib. The build tree is
# DEST/build (kept: a second run rebuilds only what changed).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
release=$here/.cache/llama-cpp-3.22.1
kind="" dest="" arch=${CUDA_ARCH:-90} jobs=$(nproc) configure_only=""
while [ $# -gt 0 ]; do
  case $1 in
    --cuda|--cpu) kind=${1#--}; dest=${2:?$1 needs a folder}; shift 2 ;;
    --arch) arch=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --configure-only) configure_only=1; shift ;;
    *) echo "build-llama: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$kind" ] || { echo "usage: build-llama.sh --cuda|--cpu DEST [--arch SM] [--jobs N] [--configure-only]" >&2; exit 2; }
[ -f "$release/gitRelease.bundle" ] || { echo "build-llama: no $release/gitRelease.bundle: run scripts/setup.sh first" >&2; exit 2; }
if [ "$kind" = cuda ] && [ ! -x /usr/local/cuda/bin/nvcc ] && ! command -v nvcc >/dev/null; then
  echo "build-llama: no CUDA toolkit (nvcc) here" >&2; exit 2
fi
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)
src=$dest/src
if [ ! -d "$src/.git" ]; then
  rm -rf "$src"
  git clone -q "$release/gitRelease.bundle" "$src" 2>/dev/null
fi
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
# The switches of the H200's build (the issue's cmake line): no network
# parts, no tests or examples, the tools built apart below; the server
# without its web UI (whose prebuilt assets would be downloaded).
flags=(-DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF
       -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=ON
       -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_UI=OFF)
if [ "$kind" = cuda ]; then
  [ -x /usr/local/cuda/bin/nvcc ] && export PATH=/usr/local/cuda/bin:$PATH
  flags+=(-DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="$arch" -DGGML_CUDA_NCCL=OFF)
fi
cmake -S "$src" -B "$dest/build" "${gen[@]}" "${flags[@]}"
[ -n "$configure_only" ] && { echo "build-llama: configured in $dest/build"; exit 0; }
tools=(llama-bench llama-batched-bench llama-quantize llama-server)
cmake --build "$dest/build" -j "$jobs" --target llama "${tools[@]}"
mkdir -p "$dest/lib" "$dest/bin"
cp -a "$dest"/build/bin/lib*.so* "$dest/lib/"
for t in "${tools[@]}"; do cp -a "$dest/build/bin/$t" "$dest/bin/"; done
echo "build-llama: $kind build in $dest/lib (inferbench --option library=$dest/lib)"
