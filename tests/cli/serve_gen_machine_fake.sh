# inferbench serve of a generative model on the scripted generation fake:
# the slots by default (the fake's KV cache of 131 cells holds 5 slots of
# the longest request's 22), the served run's energy on its scripted
# counter, the machine in the JSON, the engine's own cost and --engine-cost's
# bare replay (equal on the virtual clock); none fitting: one line, exit 2
# (docs/serve-generative.md).
. "$(dirname "$0")/lib.sh"

FAKE=(serve m.gguf --backend fake --option cold_calls=0 --option batch_us=1000 --option batch_decode_us=500
      --option batch_prefill_ns=100000 --quiet)
printf '0 10 3\n0 20 2\n1 5 2\n' >"$TMP/three.txt"

expect_exit 0 "the default slots, the engine's cost" -- "$IB" "${FAKE[@]}" --arrivals "$TMP/three.txt" \
  --prefill-chunk 10 --warmup-requests 0 --option kv_tokens=131 --engine-cost --json "$TMP/t.json"
expect_grep "^slots 5 \(the KV cache's capacity at 22 tokens a slot; --slots N to choose\)$" "$TMP/out" "text: the default slots and why"
json_check "$TMP/t.json" "d['settings']['slots'] == 5 and d['settings']['slots_from'] == 'kv_capacity' and d['info']['n_seq_max'] == 5" "json: the default slots"
expect_grep "^engine against a bare loop of its batches: 2.1 ms a step against 2.1 ms bare: \+0 us a step$" "$TMP/out" "text: the engine against the bare loop"
json_check "$TMP/t.json" "d['engine_cost'] == {'steps': 5, 'engine_us_per_step': 2100, 'runtime_us_per_step': 2100, 'removal_us_per_step': 0, 'own_us_per_step': 0, 'replayed': True, 'bare_us_per_step': 2100, 'against_bare_us': 0}" "json: the engine's cost"
json_check "$TMP/t.json" "d['environment']['tool_version'] and isinstance(d['warnings'], list)" "json: the machine and its warnings"
json_check "$TMP/t.json" "d['energy']['source'] is None and 'no energy counter' in d['energy']['note']" "json: no counter, said"

expect_exit 0 "energy on the scripted counter" -- "$IB" "${FAKE[@]}" --arrivals constant --rate 100 --requests 100 \
  --prompt-tokens 10 --new-tokens 5 --slots 2 --option energy_step_ms=10 --option idle_w=50 --option busy_w=150 \
  --json "$TMP/e.json"
json_check "$TMP/e.json" "(e := d['energy'])['source'] == 'counter' and e['items'] == 500 and abs(e['joules_per_request'] - e['joules'] / 100) < 1e-12 and e['idle_power_w'] == 50 and e['bound'] < 0.02" "json: joules per output token and per request"
expect_grep "^energy per output token \(over the served schedule\): " "$TMP/out" "text: the energy line"
expect_exit 0 "--no-energy" -- "$IB" "${FAKE[@]}" --arrivals constant --rate 100 --requests 10 --slots 2 \
  --option energy_step_ms=10 --no-energy --json "$TMP/n.json"
json_check "$TMP/n.json" "d['energy']['source'] is None" "json: no figure when not asked"

expect_exit 2 "no slot's cache fits" -- "$IB" "${FAKE[@]}" --arrivals "$TMP/three.txt" --option kv_tokens=21
expect_grep "the KV cache of one slot of 22 tokens does not fit" "$TMP/err" "out of memory said in one line"
finish
