# inferbench generate on llama.cpp's CPU build, on zoo:llama-tiny (written
# into the test's own GGUF cache): the counts, tokens/s = tokens / time, the
# depth, the sequence search under a memory cap, the pitfall rows, bad
# GGUF files. Skipped (77) when set-up has not installed llama.cpp. No
# timing is asserted.
. "$(dirname "$0")/lib.sh"

need_llama
TINY=(generate zoo:llama-tiny --device cpu --prompt-tokens 16 --new-tokens 8 --runs 3 --warmup-runs 1 --warmup-ms 0
      --no-steady --quiet)

expect_exit 0 "llama-tiny at depth 32, json" -- "$IB" "${TINY[@]}" --depth 32 --json "$TMP/g.json"
if compgen -G "$TMP/cache/inferbench/zoo/*.gguf" >/dev/null; then
  pass "the zoo model written into the cache given"
else
  fail "no GGUF file in $TMP/cache/inferbench/zoo: $(ls -R "$TMP/cache" 2>&1 | head -5)"
fi
json_check "$TMP/g.json" "d['runs'] == 3 and len(d['samples']['token_ms']) == 3 and all(len(r) == 8 for r in d['samples']['token_ms'])" "json: 3 runs of 8 tokens"
json_check "$TMP/g.json" "d['token_ms']['n'] == 24 and d['ttft_ms']['n'] == 3" "json: the counts"
json_check "$TMP/g.json" "d['tokens_per_s'] == 24 / sum(x for r in d['samples']['token_ms'] for x in r) * 1e3" "json: tokens/s is tokens / time, exactly"
json_check "$TMP/g.json" "d['settings']['depth'] == 32 and d['settings']['prompt_tokens'] == 16 and d['settings']['fixed_length'] is True" "json: the depth and the prompt recorded"
json_check "$TMP/g.json" "d['workload']['arch'] == 'llama' and d['device'] == 'cpu' and 1 <= d['workload']['n_threads'] <= d['workload']['n_cpus_allowed']" "json: llama on the CPU, threads within the cores allowed"
json_check "$TMP/g.json" "d['workload']['kv_type'] and d['workload']['n_batch'] > 0 and d['workload']['runtime_version']" "json: the settings that change the figure stated"
expect_grep "^inferbench generate: zoo:llama-tiny \(llama F16, [0-9.]+ M parameters\)$" "$TMP/out" "text: the runtime's description, its type and size not said twice, no '?B'"
# Energy on the CPU (docs/energy.md, "For generation"): no GPU counter;
# the CPU package's only where RAPL is readable (root), else one line.
json_check "$TMP/g.json" "d['decode_energy']['source'] is None and d['decode_energy']['note'] == 'a CPU run: no GPU energy counter' and d['prefill_energy']['source'] is None" "json: no GPU energy counter on a CPU run, said"
if [ -r /sys/class/powercap/intel-rapl:0/energy_uj ]; then
  json_check "$TMP/g.json" "d['decode_cpu_energy']['source'] == 'counter' or d['decode_cpu_energy']['note']" "json: the CPU package's energy, or why not"
else
  expect_grep "^energy: no figure: a CPU run: no GPU energy counter; the CPU package: .*$" "$TMP/out" "text: no energy figure, one line"
  if [ "$(grep -c '^energy' "$TMP/out")" -eq 1 ]; then pass "text: one energy line"; else fail "energy lines: $(grep '^energy' "$TMP/out")"; fi
fi

expect_exit 0 "the search under a memory cap" -- \
  "$IB" "${TINY[@]}" --search-sequences --ctx-per-seq 256 --sequence-runs 1 --option memory_limit_mb=8 --json "$TMP/s.json"
json_check "$TMP/s.json" "(lambda s: 1 <= s['largest_fitting'] < 256 and not s['limited_by_max'] and 'memory_limit_mb' in s['limit_reason'])(d['sequences'])" "json: the cap, not the bound, ends the search"
json_check "$TMP/s.json" "(lambda s: {p['sequences']: p['fits'] for p in s['probes']}.get(s['largest_fitting'] + 1) is False)(d['sequences'])" "json: one more sequence does not fit"
json_check "$TMP/s.json" "all(p['status'] == 'ok' for p in d['sequences']['points']) and d['sequences']['points'][-1]['sequences'] == d['sequences']['largest_fitting']" "json: the curve up to the largest"

expect_exit 0 "--pitfalls" -- "$IB" "${TINY[@]}" --pitfalls --json "$TMP/p.json"
json_check "$TMP/p.json" "len(d['pitfalls']) == 9 and all(r['status'] == 'ok' for r in d['pitfalls'])" "json: every pitfall row, none failed"
json_check "$TMP/p.json" "all(r['reports'] is not None for r in d['pitfalls'] if r['applies'])" "json: each row that applies has its figure"

printf 'not a model\n' >"$TMP/text.gguf"
: >"$TMP/empty.gguf"
expect_exit 2 "a text file" -- "$IB" generate "$TMP/text.gguf" --device cpu --quiet
expect_exit 2 "an empty file" -- "$IB" generate "$TMP/empty.gguf" --device cpu --quiet
expect_exit 2 "a depth beyond the model's context" -- "$IB" "${TINY[@]}" --depth 1000000
finish
