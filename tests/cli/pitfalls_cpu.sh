# inferbench pitfalls end to end on the CPU execution provider: the table,
# the JSON document, the rows that are no mistake on a CPU marked so.
. "$(dirname "$0")/lib.sh"

expect_exit 0 "pitfalls zoo:mlp, cpu, json" -- \
  "$IB" pitfalls zoo:mlp --device cpu --runs 50 --json "$TMP/p.json"
expect_grep "^method +n +mean +std +median +vs correct" "$TMP/out" "the table has its header"
expect_grep "^correct +50 " "$TMP/out" "the correct row has 50 runs"
expect_grep "^host clock, no sync +N/A: not a mistake on the CPU" "$TMP/out" "no sync: N/A on the CPU, with the reason"
expect_grep "^copies included +N/A: the data already lives in host memory" "$TMP/out" "copies: N/A on the CPU, with the reason"
expect_grep "^no warm-up +50 " "$TMP/out" "the no warm-up row is measured on the CPU"
expect_grep "^zero-filled input +50 " "$TMP/out" "the zero-filled input row is measured on the CPU"
expect_grep "^TF32 taken for fp32 +N/A: the CPU has no TF32" "$TMP/out" "TF32: N/A on the CPU, with the reason"
expect_grep "^reference arithmetic \(the correct row's, every row's but the TF32 one\): strict fp32 \(no TF32\), the runtime's default$" "$TMP/out" "the reference's arithmetic said"
expect_grep "one run lands between -?[0-9.]+% and \+?-?[0-9.]+% of the median" "$TMP/out" "the single-sample line"

json_check "$TMP/p.json" "d['schema'] == 'inferbench.pitfalls/2' and d['partial'] is False and isinstance(d['warnings'], list)" "json: schema, complete, warnings"
json_check "$TMP/p.json" "d['reference_math'] == 'fp32' and d['reference_math_default'] is True and 'notes' in d" "json: the reference's arithmetic, the notes array"
json_check "$TMP/p.json" "len(d['rows']) == 7 and [r['kind'] for r in d['rows']] == ['correct','host_no_sync','copies','no_warmup','single_sample','zero_input','tf32']" "json: 7 rows in order"
json_check "$TMP/p.json" "all(not r['applies'] and r['not_applicable'] and r['stats'] is None for r in d['rows'] if r['kind'] in ('host_no_sync','copies'))" "json: no sync and copies do not apply"
json_check "$TMP/p.json" "all(r['applies'] and r['status'] == 'ok' and r['stats']['n'] == 50 for r in d['rows'] if r['kind'] in ('correct','no_warmup','single_sample','zero_input'))" "json: the others measured, 50 runs each"
json_check "$TMP/p.json" "[r for r in d['rows'] if r['kind'] == 'correct'][0]['error_pct'] == 0" "json: the correct row is the reference"
json_check "$TMP/p.json" "(lambda s: s['single_p5_pct'] <= 0 <= s['single_p95_pct'] and 0 <= s['single_off_5pct'] <= 1)([r for r in d['rows'] if r['kind'] == 'single_sample'][0])" "json: single-sample spread"
json_check "$TMP/p.json" "(lambda r: not r['applies'] and 'no TF32' in r['not_applicable'] and r['stats'] is None)([r for r in d['rows'] if r['kind'] == 'tf32'][0])" "json: TF32 does not apply on the CPU"
json_check "$TMP/p.json" "d['device'] == 'cpu' and d['config']['runs'] == 50 and d['environment']['runtime']['provider'] == 'CPUExecutionProvider'" "json: device, config, environment"

expect_exit 2 "--runs 0 is refused" -- "$IB" pitfalls zoo:mlp --device cpu --runs 0
expect_exit 2 "two models are refused" -- "$IB" pitfalls zoo:mlp zoo:mlp --device cpu
expect_exit 2 "an unwritable --json fails before measuring" -- \
  "$IB" pitfalls zoo:mlp --device cpu --runs 5 --json "$TMP/no/such/dir/p.json"
expect_exit 0 "--help" -- "$IB" pitfalls --help
expect_grep "[-]-runs N" "$TMP/out" "help lists the measurement options"
finish
