#!/usr/bin/env bash
# Installs what inferbench needs and is missing: Debian packages (apt-get),
# ONNX Runtime 1.29 (from ORT_ROOT, or the npm registry into .cache/) and
# llama.cpp's CPU build with its headers (the npm registry, into .cache/;
# where a GPU and the CUDA toolkit are, a CUDA build from the same source:
# scripts/build-llama.sh). Idempotent: a second run does nothing. Prints the
# ONNX Runtime root it chose on its last line, for the build.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cache="$here/.cache"
ort_version=0.4.9   # com.github.asus4.onnxruntime* version; holds ONNX Runtime 1.29.0
node_version=1.29.0 # onnxruntime-node: its Linux x64 library is the CUDA build of 1.29.0
llama_npm=3.22.1    # node-llama-cpp: its release of llama.cpp (v0.5.0, ggml 0.25.1)

log() { printf 'setup: %s\n' "$*" >&2; }

install_debian_packages() {
  local want=(cmake make gcc g++ pkg-config protobuf-c-compiler libprotobuf-c-dev
              libonnx-dev libcjson-dev clang clang-format libclang-rt-14-dev xz-utils git
              openmpi-bin libopenmpi-dev # MPI: the fleet's tests (loaded at run time, never linked)
              libcurl4-openssl-dev libmicrohttpd-dev curl) # an HTTP endpoint's client, its scripted test server, its tests (issue 37)
  local missing=()
  for p in "${want[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  command -v npm >/dev/null || missing+=(npm)
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing Debian packages: ${missing[*]}"
  local sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >&2
}

gpu_present() {
  [ "${IB_WITH_CUDA_EP:-}" = 1 ] || [ -e /dev/nvidia0 ] || command -v nvidia-smi >/dev/null 2>&1
}

# Fetches NAME@VERSION from the npm registry and unpacks the files matching
# the patterns into the folder $2 (a package/ tree). A pattern that matches
# nothing fails the set-up.
npm_unpack() {
  local spec=$1 dir=$2; shift 2
  log "fetching $spec from the npm registry"
  (cd "$dir" && npm pack --silent "$spec" >/dev/null)
  tar xzf "$dir"/*.tgz -C "$dir" --wildcards "$@"
  rm -f "$dir"/*.tgz
}

# The core package: libonnxruntime.so (CPU build), the provider bridge and
# the C headers, into an ONNX-Runtime-release layout ($1/include, $1/lib).
install_core_package() {
  local dest=$1 tmp
  tmp=$(mktemp -d)
  npm_unpack "com.github.asus4.onnxruntime@$ort_version" "$tmp" 'package/Plugins/Linux/x64/*.so' \
    'package/Plugins/iOS~/onnxruntime.xcframework/ios-arm64/onnxruntime.framework/Headers/*.h'
  mkdir -p "$dest/lib" "$dest/include"
  cp "$tmp"/package/Plugins/Linux/x64/*.so "$dest/lib/"
  cp "$tmp"/package/Plugins/iOS~/onnxruntime.xcframework/ios-arm64/onnxruntime.framework/Headers/*.h \
    "$dest/include/"
  ln -sf libonnxruntime.so "$dest/lib/libonnxruntime.so.1"
  rm -rf "$tmp"
}

# Where a GPU is: the CUDA provider, and the CUDA build of the same core
# library in place of the CPU build. The provider calls shared operator code
# back in the core library through a table whose layout depends on the
# build: with the CPU build, Slice, Gather and others crash the process
# (docs/backend-onnxruntime.md). onnxruntime-node ships the CUDA build.
install_cuda_parts() {
  local lib=$1 tmp
  tmp=$(mktemp -d)
  npm_unpack "com.github.asus4.onnxruntime.linux-x64-gpu@$ort_version" "$tmp" \
    'package/Plugins/Linux/x64/libonnxruntime_providers_cuda.so'
  npm_unpack "onnxruntime-node@$node_version" "$tmp" 'package/bin/napi-v6/linux/x64/libonnxruntime.so.1'
  cp "$tmp/package/Plugins/Linux/x64/libonnxruntime_providers_cuda.so" "$lib/"
  cp "$tmp/package/bin/napi-v6/linux/x64/libonnxruntime.so.1" "$lib/libonnxruntime.so.tmp"
  mv -f "$lib/libonnxruntime.so.tmp" "$lib/libonnxruntime.so"
  echo "onnxruntime-node@$node_version" >"$lib/cuda-build-core"
  rm -rf "$tmp"
}

install_onnxruntime() {
  if [ -n "${ORT_ROOT:-}" ]; then
    [ -f "$ORT_ROOT/include/onnxruntime_c_api.h" ] || { log "ORT_ROOT=$ORT_ROOT has no include/onnxruntime_c_api.h"; exit 1; }
    echo "$ORT_ROOT"; return 0
  fi
  local dest="$cache/onnxruntime-$ort_version"
  if [ ! -f "$dest/lib/libonnxruntime.so" ]; then
    rm -rf "$dest.tmp"
    install_core_package "$dest.tmp"
    rm -rf "$dest"; mv "$dest.tmp" "$dest"
  fi
  if gpu_present && [ ! -f "$dest/lib/cuda-build-core" ]; then
    install_cuda_parts "$dest/lib"
  fi
  echo "$dest"
}

# llama.cpp (docs/backend-llama.md): the CPU build node-llama-cpp publishes
# (libllama, libggml, libggml-base, the libggml-cpu-* variants that
# ggml_backend_load_all picks from) into $dest/lib, and from the git bundle
# of the same release's source, the headers the backend is built against
# ($dest/include: llama.h, ggml's) and the bundle itself, which
# scripts/build-llama.sh builds from. Nothing is linked: the backend loads
# the library when a model is opened.
install_llama() {
  local dest="$cache/llama-cpp-$llama_npm" tmp
  if [ ! -f "$dest/release" ]; then
    rm -rf "$dest.tmp"; mkdir -p "$dest.tmp/lib" "$dest.tmp/include"
    tmp=$(mktemp -d)
    npm_unpack "@node-llama-cpp/linux-x64@$llama_npm" "$tmp" 'package/bins/linux-x64/lib*.so'
    npm_unpack "node-llama-cpp@$llama_npm" "$tmp" 'package/llama/gitRelease.bundle'
    cp "$tmp"/package/bins/linux-x64/lib*.so "$dest.tmp/lib/"
    rm -f "$dest.tmp/lib/libllama-common.so" # the tools' helpers: not used
    mv "$tmp/package/llama/gitRelease.bundle" "$dest.tmp/gitRelease.bundle"
    git clone -q --no-checkout "$dest.tmp/gitRelease.bundle" "$tmp/src" 2>/dev/null
    git -C "$tmp/src" checkout -q HEAD -- include/llama.h ggml/include CMakeLists.txt ggml/CMakeLists.txt
    cp "$tmp/src/include/llama.h" "$tmp"/src/ggml/include/*.h "$dest.tmp/include/"
    # The release the headers are of, as the library says it (llama_version,
    # ggml_version): the backend refuses a library of another one.
    { printf 'llama_version=%s\n' "$(cmake_version "$tmp/src/CMakeLists.txt" LLAMA)"
      printf 'ggml_version=%s\n' "$(cmake_version "$tmp/src/ggml/CMakeLists.txt" GGML)"
      printf 'commit=%s\n' "$(git -C "$tmp/src" rev-parse HEAD)"
      printf 'npm=node-llama-cpp@%s\n' "$llama_npm"; } >"$dest.tmp/release"
    rm -rf "$tmp" "$dest"; mv "$dest.tmp" "$dest"
  fi
  # Where the prebuilt CUDA build cannot run (the H200's driver: CUDA 13.0
  # against its 13.1), the CUDA build is compiled from the bundle
  # (IB_LLAMA_CUDA=0 skips it; IB_LLAMA_CUDA=1 forces it).
  if [ "${IB_LLAMA_CUDA:-auto}" != 0 ] && [ ! -f "$dest/cuda/lib/libggml-cuda.so" ] &&
     { [ "${IB_LLAMA_CUDA:-auto}" = 1 ] || { gpu_present && [ -x /usr/local/cuda/bin/nvcc ]; }; }; then
    "$here/scripts/build-llama.sh" --cuda "$dest/cuda" >&2
  fi
}

# MAJOR.MINOR.PATCH of a CMakeLists.txt's PREFIX_VERSION_{MAJOR,MINOR,PATCH}.
cmake_version() {
  local f=$1 p=$2 v=()
  for part in MAJOR MINOR PATCH; do
    v+=("$(sed -n "s/^set(${p}_VERSION_${part} \([0-9]*\))/\1/p" "$f")")
  done
  printf '%s.%s.%s' "${v[@]}"
}

install_debian_packages
# llama.cpp is optional (the build leaves its backend out without it): a
# machine without the registry (the lent GPU machines) goes on without it.
# (A subshell run as a plain command, so that set -e still stops it at its
# first failure: on the left of || it would not.)
set +e
( set -e; install_llama )
llama_rc=$?
set -e
[ $llama_rc = 0 ] || log "llama.cpp not installed: the llama backend is left out of the build (docs/backend-llama.md)"
install_onnxruntime
