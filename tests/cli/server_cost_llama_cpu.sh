#!/usr/bin/env bash
# The server's cost on the CPU (docs/serve-endpoint.md, "The server's
# cost"): the zoo's tiny model as one GGUF file, the same schedule served
# in process (2 slots) and through the real llama-server (-np 2, started on
# 127.0.0.1 by tests/llama/server.sh), then compared: B named as over
# HTTP, the sentence of the server's cost, TTFT, TPOT and end-to-end each
# with a verdict, goodput, both sides' counts equal, no schedule warning.
# No timing is asserted. Skips (77) without llama.cpp or a built
# llama-server.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../llama/server.sh"
need_llama_server # first: need_llama moves XDG_CACHE_HOME, where the server's cache is
need_llama

expect_exit 0 "zoo export llama-tiny" -- "$IB" zoo export llama-tiny -o "$TMP/tiny.gguf"
SCHEDULE=(--rate 5 --requests 12 --prompt-tokens 8..24 --new-tokens 4..8 --warmup-requests 1 --slo-ttft-ms 5000 --quiet)
expect_exit 0 "in process, 2 slots" -- "$IB" serve "$TMP/tiny.gguf" --device cpu --option threads=2 --slots 2 \
  "${SCHEDULE[@]}" --json "$TMP/a.json"

llama_server_start_or_end "$TMP/tiny.gguf" --alias tiny -c 512 -np 2 -t 2 -tb 2
expect_exit 0 "over HTTP, the same schedule" -- "$IB" serve --endpoint "$LLAMA_SERVER_URL" --model tiny "${SCHEDULE[@]}" \
  --json "$TMP/b.json"
llama_server_stop

expect_exit 0 "compare" -- "$IB" compare "$TMP/a.json" "$TMP/b.json" --json "$TMP/c.json"
expect_grep "^B \(candidate\) .*b.json: tiny over HTTP, 12 of 12 requests completed$" "$TMP/out" "B over HTTP, every request completed"
expect_grep "^B over HTTP, A in process: the difference is what the server and the client add$" "$TMP/out" "the server's cost stated"
for fig in TTFT TPOT end-to-end; do
  expect_grep "^$fig +median A .*, B .*: (slower|faster|no change|inconclusive); p99 A " "$TMP/out" "$fig: a verdict"
done
expect_grep "^(ITL  +median A .*: (slower|faster|no change|inconclusive);|ITL not compared: gaps of 0)" "$TMP/out" "ITL compared or why not"
expect_grep "^goodput share: A .* \(.* of 12\), B .* \(.* of 12\): " "$TMP/out" "goodput: 12 completed a side"
json_check "$TMP/c.json" "d['b_over_http'] and d['ttft']['a']['n'] == d['ttft']['b']['n'] == 12 and d['tpot']['a']['n'] == d['tpot']['b']['n'] == 12 and d['e2e']['a']['n'] == d['e2e']['b']['n'] == 12 and ('itl' not in d or d['itl']['a']['n'] == d['itl']['b']['n']) and not {'different_seed', 'different_schedule', 'different_request_count', 'different_rate', 'different_targets'} & set(d['warnings'])" \
  "json: both sides' counts equal, the same schedule"
finish
