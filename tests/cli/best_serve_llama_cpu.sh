# serve --best on llama.cpp's CPU build, zoo:llama-tiny (docs/best.md,
# "Serving: the engine's settings raced"): flash attention, the KV
# cache's type and its sharing (kv_unified) fixed (--option), so the race
# is the engine's 3 slots x 2
# chunks: the chunks past what the slots' prompts hold (16 tokens each)
# merged, every distinct run serving every request of its schedule, the
# winner's serving document whole. Skipped (77) without llama.cpp. No
# timing is asserted: who wins is the machine's answer.
. "$(dirname "$0")/lib.sh"

need_llama
TINY=(serve zoo:llama-tiny --device cpu --option threads=1 --quiet --option flash_attn=on --option kv_type=f16
      --option kv_unified=off)

expect_exit 0 "the engine's settings raced on llama.cpp" -- "$IB" "${TINY[@]}" --best --rate 50 --requests 16 \
  --prompt-tokens 16 --new-tokens 4 --slo-ttft-ms 100000 --slo-tpot-ms 100000 --json "$TMP/b.json"
json_check "$TMP/b.json" "[c['label'] for c in d['candidates']] == ['slots 4, chunk 64', 'slots 4, chunk 512', 'slots 8, chunk 128', 'slots 8, chunk 512', 'slots 16, chunk 256', 'slots 16, chunk 512'] and [c['same_as'] for c in d['candidates']] == [None, 0, None, 2, None, 4]" "json: the chunks as run (slots x 16 prompt tokens), those past them merged"
json_check "$TMP/b.json" "[c['stage'] for c in d['candidates'] if c['stage'] != 'merged'].count('winner') == 1 and all(c['stage'] in ('winner', 'finalist') and c['completed'] == 16 and c['good_requests'] == 16 for c in d['candidates'] if c['stage'] != 'merged')" "json: three finalists, each serving all 16 requests within the targets"
json_check "$TMP/b.json" "d['winner_serve']['settings']['slots'] == next(c['slots'] for c in d['candidates'] if c['stage'] == 'winner') and len(d['winner_serve']['requests']) == 16 and all(r['generated_tokens'] == 4 for r in d['winner_serve']['requests'])" "json: the winner's serving document, every token generated"
expect_grep "^best: slots [0-9]+, chunk [0-9]+: goodput " "$TMP/out" "text: the winner"
# Nothing fixed: the whole serving grid, 3 slots x 2 chunks x flash attention off and on x the
# KV types serve --best races (f16, q8_0) x the cache's sharing (kv_unified off, on): 48, within the
# race's 64; the 12 of q8_0 without flash attention skipped (they do not open), a winner among the rest.
expect_exit 0 "the whole serving grid raced" -- "$IB" serve zoo:llama-tiny --device cpu --option threads=1 --quiet --best \
  --rate 50 --requests 4 --prompt-tokens 8 --new-tokens 2 --slo-ttft-ms 100000 --slo-tpot-ms 100000 --json "$TMP/grid.json"
json_check "$TMP/grid.json" "len(d['candidates']) == 48 and [c['asked'] or c['label'] for c in d['candidates']][:2] == ['slots 4, chunk 256, fa off, kv f16, unified off', 'slots 4, chunk 256, fa off, kv f16, unified on'] and sum(1 for c in d['candidates'] if (c['asked'] or c['label']).endswith('unified on')) == 24" "json: 48 candidates, half of them on one shared cache"
json_check "$TMP/grid.json" "sorted(c['asked'] or c['label'] for c in d['candidates'] if c['stage'] == 'skipped') == sorted(f'slots {s}, chunk {k}, fa off, kv q8_0, unified {u}' for s in (4, 8, 16) for k in (256, 512) for u in ('off', 'on')) and d['winner']" "json: the 12 of q8_0 without flash attention skipped, a winner"
finish
