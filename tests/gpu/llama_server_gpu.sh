#!/usr/bin/env bash
# llama-server's CUDA build (scripts/build-llama.sh --cuda DEST builds it
# beside the library: DEST/bin/llama-server) serves a zoo model, with its
# synthetic vocabulary, with every layer on the GPU: one request streamed
# (512 prompt token ids, 128 new ones, ignore_eos, usage asked), its
# figures printed for the lead (docs/backend-llama.md, "llama-server for
# the tests"). Checked: the weights on the GPU (its used memory), 128
# tokens (llama.cpp's per-chunk timings; a chunk may carry two) and
# usage.completion_tokens 128, the server gone after. Only
# 127.0.0.1.
#
# On the H100/H200 with ../shared/llama-sm90 unpacked to /tmp/llama
# (its README: llama-server is in it):
#   LD_LIBRARY_PATH=/tmp/llama:/usr/local/cuda/lib64:/usr/local/nvidia/lib64 \
#   IB_LLAMA_SERVER=/tmp/llama/llama-server bash tests/gpu/llama_server_gpu.sh build/inferbench
# IB_LLAMA_SERVER_MODEL: the zoo model (default llama-3.2-1b; llama-tiny
# for a quick look). The file is written once into INFERBENCH_ZOO_CACHE
# (default /tmp/inferbench-zoo).
. "$(dirname "$0")/../cli/lib.sh"
. "$(dirname "$0")/require_device.sh"
. "$(dirname "$0")/../llama/server.sh"
need_llama_server
export INFERBENCH_ZOO_CACHE=${INFERBENCH_ZOO_CACHE:-/tmp/inferbench-zoo}
model=${IB_LLAMA_SERVER_MODEL:-llama-3.2-1b}

if ! expect_exit 0 "zoo export $model" -- "$IB" zoo export "$model" -o "$TMP/model.gguf"; then
  finish
  exit 1
fi
llama_server_start_on_gpu "$TMP/model.gguf" -ngl 99 -c 4096 -np 4

# 512 prompt ids from the made-up pieces (259..), 128 new tokens; the same
# request twice: the second finds its prompt in the server's prefix cache
# (usage.prompt_tokens_details.cached_tokens says it), the first is cold.
python3 -c 'import json; print(json.dumps({"prompt": [259 + (i * 7) % 1500 for i in range(512)],
  "max_tokens": 128, "stream": True, "ignore_eos": True, "temperature": 0,
  "stream_options": {"include_usage": True}, "timings_per_token": True}))' >"$TMP/request.json"
for round in cold warm; do
  start_ns=$(date +%s%N)
  if llama_server_stream "$TMP/request.json" "$TMP/events_$round.json" 2>"$TMP/stream.err"; then
    pass "$round request streamed"
  else
    fail "$round request: $(cat "$TMP/stream.err")"
    continue
  fi
  wall_ms=$((($(date +%s%N) - start_ns) / 1000000))
  json_check "$TMP/events_$round.json" 'd["chunks"][-1]["predicted_n"] == 128' "$round: 128 tokens (timings)"
  json_check "$TMP/events_$round.json" 'd["usage"]["completion_tokens"] == 128' "$round: completion_tokens 128"
  python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))
print(sys.argv[2], "request: usage", json.dumps(d["usage"]), "; chunks of text", sum(1 for c in d["chunks"] if c["text"]),
      "; wall", sys.argv[3], "ms")' \
    "$TMP/events_$round.json" "$round" "$wall_ms"
done
pid=$LLAMA_SERVER_PID
llama_server_stop
if kill -0 "$pid" 2>/dev/null; then fail "llama-server $pid still running"; else pass "stopped by its pid"; fi
finish
