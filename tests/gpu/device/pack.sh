#!/usr/bin/env bash
# Packs what a device call needs beside the tracked tree (docs/testing.md,
# "On the H200"): .devtree/ with this build's program, library and GPU unit
# tests (xz, about 2 MB) and the two libraries the H200 lacks. Carry it
# with .devpack (ONNX Runtime's CUDA pack, ../shared/DEVICE.md) for
# tests/gpu/device/ort_call.sh, or with .llpack (a copy of ../shared/llama-sm90) for
# tests/gpu/device/llama_call.sh: the two packs do not fit in one call's 64 MiB.
set -euo pipefail
cd "$(dirname "$0")/../../.."
for f in build/inferbench build/libinferbench.so.0.1.0; do
  [ -e "$f" ] || { echo "no $f: build first (make build)" >&2; exit 2; }
done
mkdir -p .devtree .llpack
rm -f .devtree/*.so*
# Every Debian library the program and library link (cJSON, protobuf-c, libcurl and
# libmicrohttpd with theirs) but glibc's and the compiler's own: the device's image lacks them.
# They travel in the archive, xz'ed (about 17 MB as files, over a call's 64 MiB with .llpack).
libs=$(mktemp -d)
ldd build/inferbench build/libinferbench.so.0.1.0 | awk '$3 ~ /^\// {print $3}' | sort -u |
  grep -vE '/(libc|libm|libdl|libpthread|librt|libresolv|libgcc_s|libstdc\+\+)\.so' | xargs -r cp -L -t "$libs"/
tar cf - -C build inferbench libinferbench.so libinferbench.so.0 libinferbench.so.0.1.0 \
  $(cd build && ls tests/test_gpu tests/test_ort_cuda 2>/dev/null) -C "$libs" . | xz -T2 -6 >.devtree/build.tar.xz
rm -rf "$libs"
# The CUDA provider needs ONNX Runtime's providers_shared library beside it
# (Provider_GetHost): DEVICE.md's recipe for .devpack leaves it out.
cp .cache/onnxruntime-*/lib/libonnxruntime_providers_shared.so .devtree/ 2>/dev/null || true
shared=${IB_LLAMA_SM90:-../shared/llama-sm90}
ls "$shared"/llama-sm90.tar.xz.part0* >/dev/null 2>&1 && cp -n "$shared"/llama-sm90.tar.xz.part0* .llpack/ || true
du -sh .devtree .llpack .devpack 2>/dev/null >&2 || true
