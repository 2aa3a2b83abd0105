# The GPU script's trace part (tests/gpu/serve_llama_gpu.sh, IB_SERVE_PARTS
# trace) on llama.cpp's CPU build with zoo:llama-tiny: a synthetic trace of
# the Azure conversation trace's shape (scripts/synthetic_azure_trace.py,
# scaled down: prompts of median 60 tokens, outputs of 8, at most 128 in
# all) served by --arrivals on 8 slots: every request of the file served
# with its lengths, none dropped, every prompt token fed once and a decode
# token for every output token but the first. Skipped (77) without
# llama.cpp. No timing is asserted.
. "$(dirname "$0")/lib.sh"

need_llama
python3 "$(dirname "$0")/../../scripts/synthetic_azure_trace.py" --requests 12 --rate 50 \
  --context-median 60 --generated-median 8 --max-context 128 --seed 3 >"$TMP/trace.csv"
# One thread: the 2-core build host is shared (tests/cli/serve_gen_llama_cpu.sh).
expect_exit 0 "serve --arrivals a synthetic trace" -- "$IB" serve zoo:llama-tiny --device cpu --option threads=1 --quiet \
  --slots 8 --prefill-chunk 64 --warmup-requests 2 --slo-ttft-ms 500 --slo-tpot-ms 30 --arrivals "$TMP/trace.csv" \
  --json "$TMP/t.json"
json_check "$TMP/t.json" "len(d['requests']) == d['figures']['completed'] == 12 and all(r['generated_tokens'] == r['output_tokens'] for r in d['requests'])" "json: the file's 12 requests, every one completed"
json_check "$TMP/t.json" "[(r['prompt_tokens'], r['output_tokens']) for r in d['requests']] == [tuple(map(int, r[1:])) for r in list(__import__('csv').reader(open('$TMP/trace.csv')))[1:]]" "json: each request's lengths the file's"
json_check "$TMP/t.json" "sum(s['prefill_tokens'] for s in d['steps']) == sum(r['prompt_tokens'] for r in d['requests']) and sum(s['decode_tokens'] for s in d['steps']) == sum(r['output_tokens'] - 1 for r in d['requests'])" "json: the steps account for every token"
expect_grep "^(ITL tail|TTFT = wait for a slot)" "$TMP/out" "text: why the tail is what it is"
finish
