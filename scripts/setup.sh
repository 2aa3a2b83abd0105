#!/usr/bin/env bash
# Installs what inferbench needs and is missing: Debian packages (apt-get) and
# ONNX Runtime 1.29 (from ORT_ROOT, or the npm registry into .cache/).
# Idempotent: a second run does nothing. Prints the ONNX Runtime root it chose
# on its last line, for the build.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cache="$here/.cache"
ort_version=0.4.9   # com.github.asus4.onnxruntime* version; holds ONNX Runtime 1.29.0
node_version=1.29.0 # onnxruntime-node: its Linux x64 library is the CUDA build of 1.29.0

log() { printf 'setup: %s\n' "$*" >&2; }

install_debian_packages() {
  local want=(cmake make gcc g++ pkg-config protobuf-c-compiler libprotobuf-c-dev
              libonnx-dev libcjson-dev clang clang-format libclang-rt-14-dev xz-utils
              openmpi-bin libopenmpi-dev) # MPI: the fleet's tests (loaded at run time, never linked)
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

install_debian_packages
install_onnxruntime
