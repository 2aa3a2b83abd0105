# inferbench best of a generative model on llama.cpp's CPU build, on
# zoo:llama-tiny (docs/best.md, "Generative models"): the table has every
# combination of the raced options (flash attention x KV cache type x
# n_ubatch), the ones the library refuses stated ("does not apply"), one
# winner whose full generation measurement is in every format; the
# objectives; an option fixed is not varied; bad input is one line, exit 2,
# no file written. Skipped (77) without llama.cpp. No timing is asserted.
. "$(dirname "$0")/lib.sh"

need_llama
TINY=(best zoo:llama-tiny --device cpu --prompt-tokens 16 --new-tokens 4 --runs 6 --warmup-runs 1 --warmup-ms 0
      --no-steady --quiet --option threads=1)
# One thread: on this 2-core machine, shared, two threads that spin wait
# for each other make a step 100 times slower when a neighbour runs.

expect_exit 0 "the race over every combination, every format" -- \
  "$IB" "${TINY[@]}" --json "$TMP/b.json" --csv "$TMP/b.csv" --md "$TMP/b.md" --html "$TMP/b.html"
cp "$TMP/out" "$TMP/b.txt"
json_check "$TMP/b.json" "d['schema'] == 'inferbench.best/2' and d['kind'] == 'generation' and d['search']['objective'] == 'tpot'" "json: a generation race ranked by TPOT (the default)"
json_check "$TMP/b.json" "sorted(c['label'] for c in d['candidates']) == sorted('fa %s, kv %s, ubatch %s' % (f, k, u) for f in ('off', 'on') for k in ('f16', 'bf16', 'f32', 'q8_0', 'q4_0') for u in (128, 256, 512))" "json: every combination of flash attention, KV cache type and n_ubatch is a row"
json_check "$TMP/b.json" "sorted(c['label'] for c in d['candidates'] if c['stage'] == 'skipped') == sorted('fa off, kv %s, ubatch %s' % (k, u) for k in ('q8_0', 'q4_0') for u in (128, 256, 512))" "json: exactly the quantized caches without flash attention are refused"
json_check "$TMP/b.json" "all('needs flash attention' in c['why'] and not c['opened'] and c['runs'] == 0 for c in d['candidates'] if c['stage'] == 'skipped')" "json: each refusal says the library's reason"
json_check "$TMP/b.json" "all(c['runs'] > 0 and c['tpot_ms'] and c['ttft_ms'] and c['tokens_per_s'] > 0 for c in d['candidates'] if c['stage'] in ('dropped', 'finalist', 'winner') and 'not measured' not in c['why'])" "json: every measured row has its TPOT, TTFT and tokens/s"
json_check "$TMP/b.json" "[c['stage'] for c in d['candidates']].count('winner') == 1 and d['winner'] == [c['label'] for c in d['candidates'] if c['stage'] == 'winner'][0]" "json: one winner, named"
json_check "$TMP/b.json" "all(c['ranked_ms'] == c['tpot_ms'] for c in d['candidates'])" "json: the ranked figure is the TPOT"
json_check "$TMP/b.json" "d['search']['screen_runs'] == 10 and all(c['runs'] in ((10, 30, 70) if c['stage'] == 'dropped' else (16, 36, 76)) for c in d['candidates'] if c['stage'] in ('dropped', 'finalist', 'winner'))" "json: screening rounds of 10, 20, 40 runs, the finals' 6 after them"
json_check "$TMP/b.json" "(lambda g, w: g['schema'] == 'inferbench.generation/1' and g['workload']['kv_type'] == w.split(', ')[1][3:] and g['workload']['flash_attn'] == (w.startswith('fa on')) and g['settings']['prompt_tokens'] == 16 and g['settings']['new_tokens'] == 4)(d['winner_generation'], d['winner'])" "json: the winner's full generation measurement, with the winner's settings"
json_check "$TMP/b.json" "(lambda g: g['runs'] == 6 and g['tokens_per_s'] == 24 / sum(x for r in g['samples']['token_ms'] for x in r) * 1e3)(d['winner_generation'])" "json: the winner's final is --runs runs, tokens/s = tokens / time"
json_check "$TMP/b.json" "d['steps_ms']['batch_search'] == 0 and d['steps_ms']['throughput_final'] == 0 and d['steps_ms']['screen'] > 0" "json: screening and finals, no throughput race"
expect_grep "does not apply: llama: kv_type=q8_0 needs flash attention" "$TMP/b.txt" "text: the refusals stated"
expect_grep "^fastest: fa (on|off), kv [a-z0-9_]+, ubatch [0-9]+: TPOT median" "$TMP/b.txt" "text: the winner"
expect_grep "^the winner's generation measurement \(fa" "$TMP/b.txt" "text: the winner's measurement follows"
expect_grep "^generation: [0-9.]+ tokens/s" "$TMP/b.txt" "text: its generation figures"
expect_grep "time by step: opening [0-9.]+ s, screening [0-9.]+ s, finals" "$TMP/b.txt" "text: the steps of a generation race"
if [ "$(grep -c '' "$TMP/b.csv")" -eq 31 ]; then pass "csv: a header and 30 rows"; else fail "csv: $(grep -c '' "$TMP/b.csv") lines"; fi
expect_grep "^zoo:llama-tiny,cpu,\"fa off, kv q8_0, ubatch 128\",skipped,tpot," "$TMP/b.csv" "csv: a refused row"
expect_grep "The winner's generation measurement" "$TMP/b.md" "md: the winner's measurement"
expect_grep "<pre>inferbench best: zoo:llama-tiny" "$TMP/b.html" "html: the page with the report"

expect_exit 0 "--objective ttft, n_ubatch fixed" -- \
  "$IB" "${TINY[@]}" --objective ttft --option n_ubatch=512 --json "$TMP/t.json"
json_check "$TMP/t.json" "d['search']['objective'] == 'ttft' and len(d['candidates']) == 10 and all(c['label'].endswith('ubatch 512') for c in d['candidates'])" "json: the option given is kept, not raced"
json_check "$TMP/t.json" "all(c['ranked_ms'] == c['ttft_ms'] for c in d['candidates'])" "json: the ranked figure is the TTFT"

expect_exit 0 "--backend llama named, two options fixed" -- \
  "$IB" "${TINY[@]}" --backend llama --option n_ubatch=256 --option kv_type=q8_0 --json "$TMP/l.json"
json_check "$TMP/l.json" "[c['label'] for c in d['candidates']] == ['fa off, kv q8_0, ubatch 256', 'fa on, kv q8_0, ubatch 256'] and d['candidates'][0]['stage'] == 'skipped' and d['winner'] == 'fa on, kv q8_0, ubatch 256'" "json: flash attention alone raced, off refused with q8_0"

# Bad input: one line, exit 2, nothing written.
expect_exit 2 "--backend llama for a model it does not have" -- "$IB" best zoo:mlp --backend llama --device cpu --quiet
expect_exit 2 "a KV cache type the library lacks" -- "$IB" "${TINY[@]}" --option kv_type=q2_k --json "$TMP/x.json"
expect_grep "kv_type=q2_k: expected f16, bf16, f32, q8_0 or q4_0" "$TMP/err" "the values it has named"
expect_exit 2 "n_ubatch 0" -- "$IB" "${TINY[@]}" --option n_ubatch=0 --json "$TMP/x.json"
expect_exit 2 "flash attention as 'maybe'" -- "$IB" "${TINY[@]}" --option flash_attn=maybe --json "$TMP/x.json"
expect_exit 2 "a pair the library refuses, given" -- "$IB" "${TINY[@]}" --option flash_attn=off --option kv_type=q8_0 --json "$TMP/x.json"
expect_exit 2 "an option the backend does not take" -- "$IB" "${TINY[@]}" --option cuda_graph=yes --json "$TMP/x.json"
expect_exit 2 "a prompt beyond the model's context" -- "$IB" "${TINY[@]}" --prompt-tokens 1000000 --json "$TMP/x.json"
expect_exit 2 "--math for a generative model" -- "$IB" "${TINY[@]}" --math fp16
expect_grep "best --math is for a forward-pass model" "$TMP/err" "--math: why"
expect_exit 2 "--objective energy for a generative model" -- "$IB" "${TINY[@]}" --objective energy
expect_exit 2 "--sessions for a generative model" -- "$IB" "${TINY[@]}" --sessions 3
expect_exit 2 "--objective ttft for a forward-pass model" -- "$IB" best zoo:mlp --device cpu --objective ttft --quiet
expect_exit 2 "--prompt-tokens for a forward-pass model" -- "$IB" best zoo:mlp --device cpu --prompt-tokens 8 --quiet
if [ -e "$TMP/x.json" ]; then fail "a bad input left $TMP/x.json"; else pass "no file written on bad input"; fi
finish
