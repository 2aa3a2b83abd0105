# Every built-in model runs on the CUDA execution provider.
. "$(dirname "$0")/../cli/lib.sh"
. "$(dirname "$0")/require_device.sh"

for m in mlp efficientnet-b0 resnet-50 mobilenet-v2 bert-base "efficientnet-b0?fp16" "bert-base?fp16"; do
  expect_exit 0 "zoo:$m on cuda" -- "$IB" latency "zoo:$m" --device cuda --runs 30 --warmup-ms 100 \
    --json "$TMP/z.json"
  json_check "$TMP/z.json" "d['environment']['runtime']['provider'] == 'CUDAExecutionProvider' and d['latency_ms']['p50'] > 0" "zoo:$m timed on the GPU"
done
finish
