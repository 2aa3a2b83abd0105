#!/usr/bin/env bash
# Installs what inferbench needs and is missing: Debian packages (apt-get) and
# ONNX Runtime 1.29 (from ORT_ROOT, or the npm registry into .cache/).
# Idempotent: a second run does nothing. Prints the ONNX Runtime root it chose
# on its last line, for the build.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cache="$here/.cache"
ort_version=0.4.9   # npm package version; holds ONNX Runtime 1.29.0

log() { printf 'setup: %s\n' "$*" >&2; }

install_debian_packages() {
  local want=(cmake make gcc g++ pkg-config protobuf-c-compiler libprotobuf-c-dev
              libonnx-dev libcjson-dev clang libclang-rt-14-dev xz-utils)
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

# Unpacks one npm package's Linux libraries (and, for the core package, the C
# headers) into an ONNX-Runtime-release layout: $dest/include, $dest/lib.
fetch_npm_package() {
  local name=$1 dest=$2 tmp
  tmp=$(mktemp -d)
  log "fetching $name@$ort_version from the npm registry"
  (cd "$tmp" && npm pack --silent "$name@$ort_version" >/dev/null)
  tar xzf "$tmp"/*.tgz -C "$tmp" --wildcards 'package/Plugins/Linux/x64/*.so' \
      'package/Plugins/iOS~/onnxruntime.xcframework/ios-arm64/onnxruntime.framework/Headers/*' 2>/dev/null ||
    tar xzf "$tmp"/*.tgz -C "$tmp" --wildcards 'package/Plugins/Linux/x64/*.so'
  mkdir -p "$dest/lib" "$dest/include"
  cp "$tmp"/package/Plugins/Linux/x64/*.so "$dest/lib/"
  local headers="$tmp/package/Plugins/iOS~/onnxruntime.xcframework/ios-arm64/onnxruntime.framework/Headers"
  if [ -d "$headers" ]; then cp "$headers"/*.h "$dest/include/"; fi
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
    fetch_npm_package com.github.asus4.onnxruntime "$dest.tmp"
    ln -sf libonnxruntime.so "$dest.tmp/lib/libonnxruntime.so.1"
    rm -rf "$dest"; mv "$dest.tmp" "$dest"
  fi
  if gpu_present && [ ! -f "$dest/lib/libonnxruntime_providers_cuda.so" ]; then
    fetch_npm_package com.github.asus4.onnxruntime.linux-x64-gpu "$dest/gpu.tmp"
    cp "$dest/gpu.tmp/lib/libonnxruntime_providers_cuda.so" "$dest/lib/"
    rm -rf "$dest/gpu.tmp"
  fi
  echo "$dest"
}

install_debian_packages
install_onnxruntime
