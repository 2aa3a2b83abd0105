# The installed library, used as an outside project would: `cmake --install`
# into a temporary prefix, a program built with nothing but
# `pkg-config --cflags --libs inferbench`, run against the installed copy.
# Usage: install.sh PROGRAM BUILD_DIR C_COMPILER [EXTRA_CFLAGS]
. "$(dirname "$0")/../cli/lib.sh"
build=$2 cc=$3 extra=${4:-}
prefix="$TMP/prefix"

expect_exit 0 "cmake --install" -- cmake --install "$build" --prefix "$prefix"
for f in include/inferbench.h include/inferbench_backend.h lib/pkgconfig/inferbench.pc lib/cmake/inferbench/inferbenchConfig.cmake bin/inferbench; do
  if [ -e "$prefix/$f" ]; then pass "installed $f"; else fail "missing $f"; fi
done
soname=$(readelf -d "$prefix/lib/libinferbench.so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
if [ "$soname" = libinferbench.so.0 ]; then pass "SONAME libinferbench.so.0"; else fail "SONAME is '$soname'"; fi
hidden=$(nm -D --defined-only "$prefix/lib/libinferbench.so" | awk '{print $3}' | grep -v '^ib_[a-z]')
if [ -z "$hidden" ]; then pass "only the public ib_ API is exported"; else fail "exported beyond the API: $(echo $hidden | head -c 200)"; fi

export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
flags=$(pkg-config --cflags --libs inferbench) || fail "pkg-config does not know inferbench"
# shellcheck disable=SC2086 # the flags are words
expect_exit 0 "a program built with pkg-config's flags alone" -- \
  "$cc" $extra "$(dirname "$0")/consumer.c" -o "$TMP/consumer" $flags
expect_exit 0 "the program runs against the installed library" -- env LD_LIBRARY_PATH="$prefix/lib" "$TMP/consumer"
expect_grep "^n 10 mean 5.50 p50 5.50 p90 9.10 min 1 max 10$" "$TMP/out" "statistics computed by the installed library"
expect_grep "^mlp params 399370$" "$TMP/out" "the zoo answers"
expect_grep "^status device out of memory$" "$TMP/out" "status names"
expect_grep "^model zoo:mlp on CPUExecutionProvider$" "$TMP/out" "the installed library loads ONNX Runtime and opens a model"
for f in lib/libinferbench.so bin/inferbench; do
  if readelf -d "$prefix/$f" | grep -q 'NEEDED.*onnxruntime'; then fail "$f links ONNX Runtime"; else pass "$f loads ONNX Runtime, does not link it"; fi
done
expect_exit 0 "the installed program measures a model" -- \
  "$prefix/bin/inferbench" latency zoo:mlp --device cpu --runs 5 --warmup-ms 0 --warmup-max-ms 200
if [ -e "$prefix/lib/libonnxruntime.so.1" ]; then # the project's own download, installed beside it
  "$prefix/bin/inferbench" info >"$TMP/info" 2>&1
  expect_grep "^onnxruntime .*\($prefix/bin/\.\./lib/libonnxruntime\.so\.1\)$" "$TMP/info" \
    "the installed program loads the ONNX Runtime installed beside it"
fi

# The example plugin, built out of tree by its own Makefile against the
# installed headers (a copy: the source tree stays clean), loaded by the
# installed program.
cp -r "$(dirname "$0")/../../examples/plugin-gemm" "$TMP/gemm"
rm -f "$TMP/gemm/libib_gemm.so"
expect_exit 0 "the example plugin builds with its Makefile and pkg-config" -- \
  make -C "$TMP/gemm" CC="$cc" CFLAGS="-O2 -Wall -Wextra -Werror $extra" PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
expect_exit 0 "the installed inferbench measures with it" -- \
  env LD_LIBRARY_PATH="$prefix/lib" "$prefix/bin/inferbench" latency --backend plugin:"$TMP/gemm/libib_gemm.so" \
  --device cpu --option m=64 --option n=64 --option k=64 --runs 20 --warmup-ms 0 --warmup-max-ms 200
expect_grep "^inferbench latency: gemm m=64 n=64 k=64 fp32, batch 1" "$TMP/out" "the plugin's workload was measured"
if make -C "$TMP/gemm" -B PKG_CONFIG_PATH="$TMP/nowhere" >"$TMP/out" 2>"$TMP/err"; then
  fail "the Makefile built without inferbench's pkg-config file"
else
  expect_grep "^pkg-config does not know inferbench: set PKG_CONFIG_PATH$" "$TMP/err" "the Makefile says when pkg-config does not know inferbench"
fi

expect_exit 0 "a CMake project finds the package" -- \
  env CFLAGS="$extra" LDFLAGS="$extra" cmake -S "$(dirname "$0")" -B "$TMP/cmake-consumer" -DCMAKE_PREFIX_PATH="$prefix"
expect_exit 0 "and builds against inferbench::inferbench" -- cmake --build "$TMP/cmake-consumer"
expect_exit 0 "and runs" -- env LD_LIBRARY_PATH="$prefix/lib" "$TMP/cmake-consumer/consumer"
expect_grep "^mlp params 399370$" "$TMP/out" "the CMake-built program reaches the library"
finish
