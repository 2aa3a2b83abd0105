#!/usr/bin/env bash
# More CPU threads asked than the cores this process may use (issue 35):
# the result warns threads_over_cores in every format (the text with both
# counts), for ONNX Runtime's --threads and the llama backend's
# --option threads=N alike. The process is given one core (taskset -c 0),
# so that the count is above the cores allowed on any machine.
. "$(dirname "$0")/lib.sh"
if ! taskset -c 0 true 2>/dev/null; then
  echo "skipped: taskset cannot restrict this process to one core"
  exit 77
fi
R=(--device cpu --runs 10 --warmup-runs 1 --warmup-ms 0 --no-steady)
LINE="^warning: 2 CPU threads were asked, and this process may use 1 core: the threads take turns on the cores, and the figures include their waiting \(ask at most 1\)$"
GENERIC="more CPU threads were asked than the cores this process may use"

expect_exit 0 "latency --threads 2 on one core" -- taskset -c 0 "$IB" latency zoo:mlp "${R[@]}" --threads 2 \
  --json "$TMP/l.json" --md "$TMP/l.md" --html "$TMP/l.html"
expect_grep "$LINE" "$TMP/out" "latency text: both counts"
json_check "$TMP/l.json" "'threads_over_cores' in d['warnings']" "latency json: threads_over_cores"
expect_grep "^- warning: $GENERIC" "$TMP/l.md" "latency md: the warning"
expect_grep "<li>warning: 2 CPU threads were asked, and this process may use 1 core" "$TMP/l.html" "latency html: the warning"
expect_exit 0 "throughput --threads 2 on one core" -- taskset -c 0 "$IB" throughput zoo:mlp "${R[@]}" --threads 2 \
  --batches 1,2 --json "$TMP/t.json"
expect_grep "$LINE" "$TMP/out" "throughput text: both counts"
json_check "$TMP/t.json" "'threads_over_cores' in d['warnings']" "throughput json: threads_over_cores"
expect_exit 0 "serve --threads 2 on one core" -- taskset -c 0 "$IB" serve zoo:mlp --device cpu --threads 2 --rates 100 \
  --requests 20 --json "$TMP/s.json" --md "$TMP/s.md"
expect_grep "$LINE" "$TMP/out" "serve text: both counts"
json_check "$TMP/s.json" "'threads_over_cores' in d['warnings']" "serve json: threads_over_cores"
expect_grep "^- warning: $GENERIC" "$TMP/s.md" "serve md: the warning"
# As many threads as cores, and the runtime's default: no warning.
expect_exit 0 "latency --threads 1 on one core" -- taskset -c 0 "$IB" latency zoo:mlp "${R[@]}" --threads 1 \
  --json "$TMP/one.json"
json_check "$TMP/one.json" "'threads_over_cores' not in d['warnings']" "--threads 1 on one core: no warning"
expect_exit 0 "latency with the default threads on one core" -- taskset -c 0 "$IB" latency zoo:mlp "${R[@]}" \
  --json "$TMP/default.json"
json_check "$TMP/default.json" "'threads_over_cores' not in d['warnings']" "the default threads: no warning"

# The llama backend (where set-up installed llama.cpp).
if [ -d "$(dirname "$0")/../../.cache/llama-cpp-3.22.1/lib" ]; then
  need_llama
  G=(--device cpu --prompt-tokens 8 --new-tokens 2 --runs 2 --warmup-runs 1 --warmup-ms 0 --no-steady)
  expect_exit 0 "generate --option threads=2 on one core" -- taskset -c 0 "$IB" generate zoo:llama-tiny "${G[@]}" \
    --option threads=2 --json "$TMP/g.json" --html "$TMP/g.html"
  expect_grep "$LINE" "$TMP/out" "generate text: both counts"
  json_check "$TMP/g.json" "'threads_over_cores' in d['warnings']" "generate json: threads_over_cores"
  expect_grep "<li>warning: 2 CPU threads were asked" "$TMP/g.html" "generate html: the warning"
  # (generate --md prints no warnings at all yet: issue 35's point 8.)
  expect_exit 0 "generate with the default threads on one core" -- taskset -c 0 "$IB" generate zoo:llama-tiny \
    "${G[@]}" --json "$TMP/gd.json"
  json_check "$TMP/gd.json" "'threads_over_cores' not in d['warnings']" "generate, default threads: no warning"
else
  echo "note: no llama.cpp in .cache: the llama backend's case was skipped"
fi
finish
