#!/usr/bin/env bash
# The zoo's generative models from the program (docs/zoo.md): listed, and
# exported as GGUF files through llama.cpp's writer and quantizer (a file
# whole or absent); the bad inputs each one line, exit 2. Skips (77) where
# this build has no llama backend or set-up installed no llama.cpp.
. "$(dirname "$0")/lib.sh"
export INFERBENCH_ZOO_CACHE="$TMP/zoo"

"$IB" zoo export llama-tiny -o "$TMP/probe.gguf" >"$TMP/out" 2>"$TMP/err"
if grep -qE 'built without the llama backend|no llama.cpp library' "$TMP/err"; then
  echo "SKIP: $(cat "$TMP/err")"
  exit 77
fi

expect_exit 0 "zoo list" -- "$IB" zoo list
expect_grep '^llama-3\.2-1b +1498482688 +16 +2048 +32/8 +8192 +128256' "$TMP/out" "zoo list: llama-3.2-1b's shape"
expect_grep '^llama-tiny +2229504 +2 +256 +4/2 +512 +2048' "$TMP/out" "zoo list: llama-tiny"

expect_exit 0 "zoo export llama-tiny" -- "$IB" zoo export llama-tiny -o "$TMP/tiny.gguf"
expect_grep "^wrote $TMP/tiny.gguf \\(4507968 bytes\\)" "$TMP/out" "the float16 file's size"
if [ "$(head -c 4 "$TMP/tiny.gguf")" = GGUF ]; then pass "a GGUF file"; else fail "not a GGUF file"; fi
# The vocabulary (llama-server turns every token into text): a Llama
# SentencePiece one, its byte tokens and made-up pieces (the server's test:
# tests/cli/llama_server_cpu.sh).
for piece in tokenizer.ggml.token_type '<unk>' '</s>' '<0x0A>' '<0xFF>' $'\xe2\x96\x81zz'; do
  if grep -qaF -- "$piece" "$TMP/tiny.gguf"; then pass "vocabulary: $piece"; else fail "vocabulary: no $piece"; fi
done
expect_exit 0 "zoo export zoo:llama-tiny?q8_0" -- "$IB" zoo export 'zoo:llama-tiny?q8_0' -o "$TMP/q8.gguf"
size=$(stat -c %s "$TMP/q8.gguf")
if [ "$size" -gt 1000000 ] && [ "$size" -lt 4507968 ]; then pass "q8_0 smaller ($size bytes)"; else fail "q8_0: $size bytes"; fi
# The cache holds each file once, and no temporary file.
ls "$INFERBENCH_ZOO_CACHE" >"$TMP/cache"
expect_grep '^llama-tiny-f16-1b5eed\.gguf$' "$TMP/cache" "cache: the float16 file"
expect_grep '^llama-tiny-q8_0-1b5eed\.gguf$' "$TMP/cache" "cache: the q8_0 file"
if grep -q tmp "$TMP/cache" || ls "$TMP" | grep -q '\.tmp\.'; then fail "a temporary file left"; else pass "no temporary file"; fi
cmp -s "$TMP/tiny.gguf" "$INFERBENCH_ZOO_CACHE/llama-tiny-f16-1b5eed.gguf" && pass "export is the cached file" ||
  fail "export differs from the cache"

# The export is a copy, never a link (issue 35): truncating it leaves the
# cache whole, and generate still runs on the cached model.
cache_f16="$INFERBENCH_ZOO_CACHE/llama-tiny-f16-1b5eed.gguf"
if [ "$(stat -c %i "$TMP/tiny.gguf")" != "$(stat -c %i "$cache_f16")" ] && [ "$(stat -c %h "$cache_f16")" = 1 ]; then
  pass "export: its own inode, the cache's file has one link"
else
  fail "export shares the cache's inode: $(stat -c '%i %h' "$TMP/tiny.gguf" "$cache_f16" | tr '\n' ' ')"
fi
GEN=(--device cpu --prompt-tokens 8 --new-tokens 2 --runs 2 --warmup-runs 1 --warmup-ms 0 --no-steady --quiet)
truncate -s 100000 "$TMP/tiny.gguf"
expect_exit 0 "generate after the export was truncated" -- "$IB" generate zoo:llama-tiny "${GEN[@]}"
if [ -s "$TMP/err" ]; then fail "a line for a cache not damaged: $(cat "$TMP/err")"; else pass "the cache was whole: no line"; fi
# A damaged cache is found and made again, with one line saying so:
# truncated within its tensors (generate), and not a GGUF file at all
# (the q8_0 file, through zoo export).
truncate -s 100000 "$cache_f16"
expect_exit 0 "generate on a truncated cache" -- "$IB" generate zoo:llama-tiny "${GEN[@]}"
expect_grep "^inferbench: the zoo's cached $cache_f16 was damaged \(100000 bytes where its tensors end at 4507968\): made again$" \
  "$TMP/err" "the truncated cache: made again, said"
if [ "$(stat -c %s "$cache_f16")" = 4507968 ]; then pass "the cache is whole again"; else fail "cache: $(stat -c %s "$cache_f16") bytes"; fi
head -c 10 "$TMP/q8.gguf" >"$INFERBENCH_ZOO_CACHE/llama-tiny-q8_0-1b5eed.gguf"
expect_exit 0 "zoo export over a damaged q8_0 cache" -- "$IB" zoo export 'llama-tiny?q8_0' -o "$TMP/q8b.gguf"
expect_grep "^inferbench: the zoo's cached $INFERBENCH_ZOO_CACHE/llama-tiny-q8_0-1b5eed.gguf was damaged \(10 bytes, not a GGUF header gguf reads\): made again$" \
  "$TMP/err" "the q8_0 cache: made again, said"
cmp -s "$TMP/q8.gguf" "$TMP/q8b.gguf" && pass "the q8_0 file made again is the same" || fail "the q8_0 file differs"

expect_exit 2 "an unknown type" -- "$IB" zoo export 'llama-tiny?q3_xx' -o "$TMP/bad.gguf"
expect_grep "unknown weight type 'q3_xx'" "$TMP/err" "the unknown type named"
expect_exit 2 "--fp16 on a GGUF model" -- "$IB" zoo export llama-tiny --fp16 -o "$TMP/bad.gguf"
expect_exit 2 "standard output" -- "$IB" zoo export llama-tiny -o -
expect_exit 2 "an unwritable -o" -- "$IB" zoo export llama-tiny -o "$TMP/no/such/dir/x.gguf"
expect_exit 2 "INFERBENCH_LLAMA_LIBRARY without a library" -- env INFERBENCH_LLAMA_LIBRARY="$TMP" "$IB" zoo export llama-tiny -o "$TMP/bad.gguf"
expect_grep "no llama.cpp library \\(libllama.so\\) in $TMP" "$TMP/err" "the folder named"
if [ -e "$TMP/bad.gguf" ]; then fail "a refused export left a file"; else pass "no file from a refused export"; fi
finish
