# inferbench best of a generative model on llama.cpp's CPU build, on
# zoo:llama-tiny (docs/best.md, "Generative models"): the table has every
# combination of the raced options (flash attention x KV cache type x
# n_ubatch), the ones the library refuses stated ("does not apply"), the
# ones that run the same merged (llama.cpp clamps n_ubatch to the
# request's tokens: 128, 256 and 512 all run as 20 for 16 + 4 tokens, one
# run raced, labelled "ubatch 20"), one winner whose full generation
# measurement is in every format; the objectives; an option fixed is not
# varied; a time bound that leaves candidates unmeasured (exit 1, written,
# partial); bad input is one line, exit 2, no file written. Skipped (77)
# without llama.cpp. No timing is asserted.
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
json_check "$TMP/b.json" "sorted(c['asked'] or c['label'] for c in d['candidates']) == sorted('fa %s, kv %s, ubatch %s' % (f, k, u) for f in ('off', 'on') for k in ('f16', 'bf16', 'f32', 'q8_0', 'q4_0') for u in (128, 256, 512))" "json: every combination of flash attention, KV cache type and n_ubatch is a row, as asked"
# 16 + 4 tokens: llama.cpp clamps every n_ubatch to 20, so 128, 256 and 512
# of each pair are one run: raced once, as it runs.
json_check "$TMP/b.json" "d['search']['merged'] == 16 and [c['stage'] for c in d['candidates']].count('merged') == 16" "json: 16 of the 24 that open merged (8 distinct runs)"
json_check "$TMP/b.json" "all(c['label'].endswith('ubatch 20') and c['asked'] == c['label'][:-2] + '128' for c in d['candidates'] if c['opened'] and c['stage'] != 'merged')" "json: each run raced labelled as it runs (ubatch 20), asked as 128"
json_check "$TMP/b.json" "all(c['runs'] == 0 and c['asked'] is None and c['label'][-3:] in ('256', '512') and d['candidates'][c['same_as']]['asked'] == c['label'][:-3] + '128' and c['why'].startswith('runs as #%d (%s)' % (c['same_as'] + 1, d['candidates'][c['same_as']]['label'])) for c in d['candidates'] if c['stage'] == 'merged')" "json: each merged row names the run it is, never measured"
json_check "$TMP/b.json" "sorted(c['label'] for c in d['candidates'] if c['stage'] == 'skipped') == sorted('fa off, kv %s, ubatch %s' % (k, u) for k in ('q8_0', 'q4_0') for u in (128, 256, 512))" "json: exactly the quantized caches without flash attention are refused"
json_check "$TMP/b.json" "all('needs flash attention' in c['why'] and not c['opened'] and c['runs'] == 0 for c in d['candidates'] if c['stage'] == 'skipped')" "json: each refusal says the library's reason"
json_check "$TMP/b.json" "all(c['runs'] > 0 and c['run_tpot_ms'] and c['ttft_ms'] and c['tokens_per_s'] > 0 for c in d['candidates'] if c['stage'] in ('dropped', 'finalist', 'winner'))" "json: every measured row has its run TPOT, TTFT and tokens/s"
json_check "$TMP/b.json" "[c['stage'] for c in d['candidates']].count('winner') == 1 and d['winner'] == [c['label'] for c in d['candidates'] if c['stage'] == 'winner'][0]" "json: one winner, named"
json_check "$TMP/b.json" "all(c['ranked_ms'] == c['run_tpot_ms'] for c in d['candidates'])" "json: the ranked figure is the run TPOT"
json_check "$TMP/b.json" "d['search']['screen_runs'] == 10 and all(c['runs'] in ((10, 30, 70) if c['stage'] == 'dropped' else (16, 36, 76)) for c in d['candidates'] if c['stage'] in ('dropped', 'finalist', 'winner'))" "json: screening rounds of 10, 20, 40 runs, the finals' 6 after them"
json_check "$TMP/b.json" "(lambda g, w: g['schema'] == 'inferbench.generation/1' and g['workload']['kv_type'] == w.split(', ')[1][3:] and g['workload']['flash_attn'] == (w.startswith('fa on')) and g['settings']['prompt_tokens'] == 16 and g['settings']['new_tokens'] == 4)(d['winner_generation'], d['winner'])" "json: the winner's full generation measurement, with the winner's settings"
json_check "$TMP/b.json" "(lambda g: g['runs'] == 6 and g['tokens_per_s'] == 24 / sum(x for r in g['samples']['token_ms'] for x in r) * 1e3)(d['winner_generation'])" "json: the winner's final is --runs runs, tokens/s = tokens / time"
json_check "$TMP/b.json" "d['steps_ms']['batch_search'] == 0 and d['steps_ms']['throughput_final'] == 0 and d['steps_ms']['screen'] > 0" "json: screening and finals, no throughput race"
expect_grep "does not apply: llama: kv_type=q8_0 needs flash attention" "$TMP/b.txt" "text: the refusals stated"
expect_grep "^fastest: fa (on|off), kv [a-z0-9_]+, ubatch 20: median run TPOT [0-9.e-]+ ms .*; TPOT [0-9.e-]+ ms, [0-9.e+]+ tokens/s" "$TMP/b.txt" "text: the winner, as it ran, its run TPOT and TPOT named apart"
expect_grep "^merged: 16 of 30 candidates run as an earlier one" "$TMP/b.txt" "text: the merges said"
expect_grep "^16  ran as: fa on, kv f16, ubatch 20 \(asked: fa on, kv f16, ubatch 128\); the same run as asked by #17, #18$" "$TMP/b.txt" "text: which were merged into which"
expect_grep "^17  merged: runs as #16 \(fa on, kv f16, ubatch 20\)" "$TMP/b.txt" "text: a merged row's why"
expect_grep "^the winner's generation measurement \(fa" "$TMP/b.txt" "text: the winner's measurement follows"
expect_grep "^generation: [0-9.]+ tokens/s" "$TMP/b.txt" "text: its generation figures"
expect_grep "time by step: opening [0-9.]+ s, screening [0-9.]+ s, finals" "$TMP/b.txt" "text: the steps of a generation race"
if [ "$(grep -c '' "$TMP/b.csv")" -eq 31 ]; then pass "csv: a header and 30 rows"; else fail "csv: $(grep -c '' "$TMP/b.csv") lines"; fi
expect_grep "^zoo:llama-tiny,cpu,\"fa off, kv q8_0, ubatch 128\",skipped,tpot," "$TMP/b.csv" "csv: a refused row"
expect_grep "^zoo:llama-tiny,cpu,\"fa on, kv f16, ubatch 256\",merged,tpot,,,,,,,0,\"runs as #16 .*,,16.$" "$TMP/b.csv" "csv: a merged row, the row it runs as"
expect_grep "the same run as asked by #17, #18" "$TMP/b.md" "md: the merges"
expect_grep "<td>fa on, kv f16, ubatch 20</td>.*<td>ran as this, asked: fa on, kv f16, ubatch 128; the same run as asked by #17, #18" "$TMP/b.html" "html: the merges in the page's table"
expect_grep "The winner's generation measurement" "$TMP/b.md" "md: the winner's measurement"
expect_grep "<pre>inferbench best: zoo:llama-tiny" "$TMP/b.html" "html: the page with the report"

expect_exit 0 "--objective ttft, n_ubatch fixed" -- \
  "$IB" "${TINY[@]}" --objective ttft --option n_ubatch=512 --json "$TMP/t.json"
json_check "$TMP/t.json" "d['search']['objective'] == 'ttft' and len(d['candidates']) == 10 and all((c['asked'] or c['label']).endswith('ubatch 512') for c in d['candidates']) and all(c['label'].endswith('ubatch 20') for c in d['candidates'] if c['opened'])" "json: the option given is kept, not raced (labelled as it runs: 20)"
json_check "$TMP/t.json" "all(c['ranked_ms'] == c['ttft_ms'] for c in d['candidates'])" "json: the ranked figure is the TTFT"

expect_exit 0 "--backend llama named, two options fixed" -- \
  "$IB" "${TINY[@]}" --backend llama --option n_ubatch=256 --option kv_type=q8_0 --json "$TMP/l.json"
json_check "$TMP/l.json" "[c['asked'] or c['label'] for c in d['candidates']] == ['fa off, kv q8_0, ubatch 256', 'fa on, kv q8_0, ubatch 256'] and d['candidates'][0]['stage'] == 'skipped' and d['winner'] == 'fa on, kv q8_0, ubatch 20'" "json: flash attention alone raced, off refused with q8_0"

# 200 + 4 tokens: 128 runs as asked, 256 and 512 both as 204: two runs.
expect_exit 0 "n_ubatch values clamped to one, another not" -- \
  "$IB" "${TINY[@]}" --prompt-tokens 200 --option kv_type=f16 --option flash_attn=on --json "$TMP/u.json"
json_check "$TMP/u.json" "[(c['label'], c['stage'] == 'merged', c['same_as']) for c in d['candidates']] == [('fa on, kv f16, ubatch 128', False, None), ('fa on, kv f16, ubatch 204', False, None), ('fa on, kv f16, ubatch 512', True, 1)] and d['candidates'][1]['asked'] == 'fa on, kv f16, ubatch 256'" "json: 128 raced as asked, 256 as 204, 512 merged into it"

# A time bound that leaves candidates unmeasured: the race cut short, said,
# the result written and partial, exit 1.
expect_exit 1 "--step-max-ms 1: the race cut short" -- \
  "$IB" "${TINY[@]}" --option kv_type=f16 --step-max-ms 1 --json "$TMP/s.json"
expect_grep "^inferbench: best: the race was cut short: the time bound \(0.001 s a step, --step-max-ms\) left [0-9]+ candidates? not measured" "$TMP/err" "the exit's line says why"
expect_grep "not measured \(time bound\)$" "$TMP/out" "text: the rows not measured (time bound), not dropped"
expect_grep "^PARTIAL: the race was cut short" "$TMP/out" "text: cut short"
json_check "$TMP/s.json" "d['partial'] and d['stop_reason'].startswith('the race was cut short') and d['search']['not_measured'] >= 1 and 'not measured' in [c['stage'] for c in d['candidates']] and 'dropped' not in [c['stage'] for c in d['candidates']]" "json: written, partial, the rows not measured"

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
