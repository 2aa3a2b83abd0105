# inferbench compare end to end: two real CPU results, synthetic results of
# a known change (B = A x 1.10), CI gating with --fail-if-slower, and the
# inputs it must refuse.
. "$(dirname "$0")/lib.sh"

# --- two real measurements of the same model: some verdict, exit 0 ---------
expect_exit 0 "latency a.json" -- "$IB" latency zoo:mlp --device cpu --runs 100 --json "$TMP/a.json"
expect_exit 0 "latency b.json" -- "$IB" latency zoo:mlp --device cpu --runs 100 --json "$TMP/b.json"
expect_exit 0 "compare two runs of zoo:mlp" -- "$IB" compare "$TMP/a.json" "$TMP/b.json" --json "$TMP/ab.json"
expect_grep "^verdict: (faster|slower|no change|inconclusive) " "$TMP/out" "a verdict is named"
expect_grep "^median change: [-+][0-9.]+%, 95% CI \[" "$TMP/out" "the change and its CI are shown"
json_check "$TMP/ab.json" "d['schema'] == 'inferbench.compare/3' and d['verdict'] in ('faster','slower','no change','inconclusive') and d['a']['n'] == 100 and d['warnings'] == []" "json: schema, verdict, n, no warnings"

# --- the same model measured another way: compared, with the difference named
expect_exit 0 "latency with --threads 1" -- "$IB" latency zoo:mlp --device cpu --runs 30 --threads 1 --json "$TMP/t1.json"
json_check "$TMP/t1.json" "d['workload']['backend_options'] == {'threads': '1'} and d['workload']['math'] == 'fp32' and d['workload']['math_default'] is True" "json: the backend's options recorded, only the CPU provider's (the math stated: fp32 on the CPU)"
expect_exit 0 "compare against another thread count" -- "$IB" compare "$TMP/a.json" "$TMP/t1.json" --json "$TMP/at.json"
expect_grep "^warning: different backend option threads: default \(A\) vs 1 \(B\); compared anyway$" "$TMP/out" "different option: a warning naming the key and both values"
if grep -qE "backend option (cudnn_search|math)" "$TMP/out"; then fail "only the option that differs is named"; else pass "only the option that differs is named"; fi
json_check "$TMP/at.json" "d['warnings'] == ['backend_options.threads'] and d['b']['backend_options'] == {'threads': '1'}" "json: the key that differs, and each side's options"

# --- a result of the first schema (runtime_options, one "gpu" string) still
# compares, its options read in today's keys: only the thread count differs.
python3 - "$TMP/a.json" "$TMP/old.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
d['schema'] = 'inferbench.latency/1'
w = d['workload']
w['runtime_options'] = {'cudnn_conv_algo_search': None, 'prefer_nhwc': False, 'cuda_graph': False,
                        'intra_op_threads': 1, 'math': w.pop('math'), 'math_default': w.pop('math_default')}
del w['backend_options']
env = d['environment']
env['gpu'] = None
del env['devices']
json.dump(d, open(sys.argv[2], 'w'))
EOF
expect_exit 0 "compare an old-schema result with a new one" -- "$IB" compare "$TMP/old.json" "$TMP/a.json"
expect_grep "^warning: different backend option threads: 1 \(A\) vs default \(B\); compared anyway$" "$TMP/out" "old schema: the options compare key by key"
if grep -qE "backend option (cudnn_search|prefer_nhwc|cuda_graph)|different GPUs|different arithmetic" "$TMP/out"; then
  fail "old schema: the CPU provider's options only, no GPU, the same math: $(cat "$TMP/out")"
else
  pass "old schema: the CPU provider's options only, no GPU, the same math"
fi
sed 's|"inferbench.latency/1"|"inferbench.latency/0"|' "$TMP/old.json" >"$TMP/older.json"
expect_exit 2 "a result of an unknown schema" -- "$IB" compare "$TMP/older.json" "$TMP/a.json"
expect_grep "schema is \"inferbench.latency/0\", expected \"inferbench.latency/2\" \(or the older \"inferbench.latency/1\"\)" "$TMP/err" "names the versions it reads"

# --- synthetic results: a fixed pattern, B = A x 1.10 ------------------------
# write_result FILE SCALE [N] [TIMING] [MODEL]: a latency result of N
# samples 10 ms x SCALE x (1 +- 1%, a fixed pattern).
write_result() {
  python3 - "$@" <<'EOF'
import json, sys
path, scale = sys.argv[1], float(sys.argv[2])
n = int(sys.argv[3]) if len(sys.argv) > 3 else 200
timing = sys.argv[4] if len(sys.argv) > 4 else "host"
model = sys.argv[5] if len(sys.argv) > 5 else "model.onnx"
x = [scale * 10.0 * (1 + 0.01 * (((i * 7) % 11) - 5) / 5) for i in range(n)]
doc = {"schema": "inferbench.latency/2", "partial": False, "model": model, "device": "cpu",
       "batch": 1, "timing": "device-events" if timing == "device" else "host-clock",
       "samples": {"device_ms": x if timing == "device" else None, "host_ms": x},
       "environment": {"gpu": None, "execution_provider": "CPUExecutionProvider"}}
json.dump(doc, open(path, "w"))
EOF
}
write_result "$TMP/base.json" 1.0
write_result "$TMP/slow.json" 1.10
write_result "$TMP/fast.json" 0.90

expect_exit 0 "B = A x 1.10 without --fail-if-slower" -- "$IB" compare "$TMP/base.json" "$TMP/slow.json"
expect_grep "^verdict: slower " "$TMP/out" "B = A x 1.10 is slower"
expect_grep "^median change: \+10\.00%" "$TMP/out" "the change is +10%"
expect_exit 3 "--fail-if-slower: exit 3" -- \
  "$IB" compare "$TMP/base.json" "$TMP/slow.json" --fail-if-slower --json "$TMP/slow-cmp.json"
expect_grep "slower" "$TMP/err" "the failure line says slower"
json_check "$TMP/slow-cmp.json" "d['verdict'] == 'slower' and abs(d['change']['pct'] - 10) < 1e-9 and d['change']['ci95_pct'][0] > 1 and d['threshold_pct'] == 1" "json: slower, +10%, CI above 1%"
expect_exit 0 "--fail-if-slower on a faster B" -- "$IB" compare "$TMP/base.json" "$TMP/fast.json" --fail-if-slower
expect_grep "^verdict: faster " "$TMP/out" "B = A x 0.90 is faster"
expect_exit 0 "same results" -- "$IB" compare "$TMP/base.json" "$TMP/base.json" --fail-if-slower
expect_grep "^verdict: no change " "$TMP/out" "A against itself: no change"
expect_exit 0 "--threshold 20%" -- "$IB" compare "$TMP/base.json" "$TMP/slow.json" --threshold 20% --fail-if-slower
expect_grep "^verdict: no change " "$TMP/out" "+10% is no change at a 20% threshold"

write_result "$TMP/other.json" 1.0 200 host zoo:resnet-50
expect_exit 0 "different models: compared" -- "$IB" compare "$TMP/base.json" "$TMP/other.json"
expect_grep "^warning: different models: model.onnx \(A\) vs zoo:resnet-50 \(B\)" "$TMP/out" "different models: a warning"

# --- the inputs' own warnings, beside the verdict, named with their file
# (issue 35: "faster" was printed over two results flagged cpu_busy and
# high_cv, with no word of it), in every format.
python3 - "$TMP/slow.json" "$TMP/noisy.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["warnings"], d["notes"] = ["high_cv", "cpu_busy"], ["session_dependent"]
json.dump(d, open(sys.argv[2], "w"))
EOF
expect_exit 0 "compare against a noisy B" -- "$IB" compare "$TMP/base.json" "$TMP/noisy.json" --json "$TMP/noisy-cmp.json" \
  --csv "$TMP/noisy-cmp.csv" --md "$TMP/noisy-cmp.md"
if grep -A2 '^verdict: slower' "$TMP/out" | sed -n 2,3p | tr '\n' '|' |
  grep -qxF "input B ($TMP/noisy.json) warned high_cv: the coefficient of variation is above 5%: the timings are noisy|input B ($TMP/noisy.json) warned cpu_busy: the machine was busy with other work during the measurement: the figures include its interference|"; then
  pass "text: B's warnings under the verdict, with its file"
else
  fail "text: $(cat "$TMP/out")"
fi
if grep -q "session_dependent\|input A" "$TMP/out"; then fail "text: a note or A's (none) named"; else pass "text: warnings only, B's only"; fi
json_check "$TMP/noisy-cmp.json" "d['b']['warnings'] == ['high_cv', 'cpu_busy'] and d['a']['warnings'] == [] and d['verdict'] == 'slower'" "json: each side's warnings"
python3 - "$TMP/noisy-cmp.csv" >"$TMP/csv-cells" <<'EOF'
import csv, sys
row = list(csv.DictReader(open(sys.argv[1])))[0]
print(repr(row["a_warnings"]), repr(row["b_warnings"]))
EOF
expect_grep "^'' 'high_cv;cpu_busy'$" "$TMP/csv-cells" "csv: a_warnings, b_warnings"
expect_grep "^- warning: input B \($TMP/noisy.json\) warned cpu_busy: " "$TMP/noisy-cmp.md" "md: B's warning"

# --- refused: exit 2, one line on stderr --------------------------------------
write_result "$TMP/device.json" 1.0 200 device
write_result "$TMP/five.json" 1.0 5
printf 'this is not JSON\n' >"$TMP/text.json"
printf '{"schema": "inferbench.calibrate/2", "points": []}' >"$TMP/schema.json"
head -c 2000 "$TMP/a.json" >"$TMP/truncated.json"
truncate -s 300M "$TMP/huge.json"
expect_exit 0 "throughput json" -- "$IB" throughput zoo:mlp --device cpu --batches 1,2 --runs 5 \
  --warmup-runs 1 --warmup-ms 0 --json "$TMP/tp.json"

expect_exit 2 "missing file" -- "$IB" compare "$TMP/base.json" "$TMP/nope.json"
expect_grep "cannot read .*nope.json.*No such file" "$TMP/err" "missing file: says so"
expect_exit 2 "not JSON" -- "$IB" compare "$TMP/text.json" "$TMP/base.json"
expect_grep "text.json' is not an inferbench latency result: not JSON" "$TMP/err" "not JSON: says so"
expect_exit 2 "wrong schema" -- "$IB" compare "$TMP/base.json" "$TMP/schema.json"
expect_grep "schema is \"inferbench.calibrate/2\"" "$TMP/err" "wrong schema: names it"
expect_exit 2 "a throughput result" -- "$IB" compare "$TMP/tp.json" "$TMP/base.json"
expect_grep "schema is \"inferbench.throughput/2\"" "$TMP/err" "throughput: names its schema"
# A generation result beside another kind: each file named for what its
# schema says (issue 35: a best result was called a latency result).
expect_exit 0 "generation json" -- "$IB" generate m --backend fake --prompt-tokens 8 --new-tokens 4 --runs 3 \
  --warmup-runs 1 --warmup-ms 0 --no-steady --json "$TMP/gen.json"
echo '{"schema": "inferbench.best/2"}' >"$TMP/best.json"
expect_exit 2 "a generation result and a best result" -- "$IB" compare "$TMP/gen.json" "$TMP/best.json"
expect_grep "^inferbench: '$TMP/gen.json' is a generation result \(inferbench.generation/1\) and '$TMP/best.json' a best result \(inferbench.best/2\): compare takes two latency results, two generation results or two generative serve results$" \
  "$TMP/err" "generation and best: each named from its schema"
expect_exit 2 "a latency result and a generation result" -- "$IB" compare "$TMP/base.json" "$TMP/gen.json"
expect_grep "is a latency result \(inferbench.latency/2\) and '$TMP/gen.json' a generation result" "$TMP/err" \
  "latency and generation: each named"
expect_exit 2 "a generation result and text" -- "$IB" compare "$TMP/gen.json" "$TMP/text.json"
expect_grep "'$TMP/text.json' not an inferbench result \(no \"schema\"\)" "$TMP/err" "no schema: said"
expect_exit 2 "device vs host timing" -- "$IB" compare "$TMP/device.json" "$TMP/base.json"
expect_grep "device-events .* host-clock: different clocks cannot be compared" "$TMP/err" "timing: says why"
expect_exit 2 "truncated result" -- "$IB" compare "$TMP/truncated.json" "$TMP/base.json"
expect_exit 2 "a directory" -- "$IB" compare "$TMP" "$TMP/base.json"
expect_grep "is a directory" "$TMP/err" "a directory: says so"
expect_exit 2 "over 256 MB" -- "$IB" compare "$TMP/huge.json" "$TMP/base.json"
expect_exit 2 "5 samples" -- "$IB" compare "$TMP/five.json" "$TMP/base.json"
expect_grep "at least 6" "$TMP/err" "5 samples: needs 6"
expect_exit 2 "one result" -- "$IB" compare "$TMP/base.json"
expect_exit 2 "three results" -- "$IB" compare "$TMP/base.json" "$TMP/base.json" "$TMP/base.json"
expect_exit 2 "--threshold 0" -- "$IB" compare "$TMP/base.json" "$TMP/slow.json" --threshold 0
expect_exit 2 "--threshold 80%" -- "$IB" compare "$TMP/base.json" "$TMP/slow.json" --threshold 80%
expect_exit 2 "--threshold abc" -- "$IB" compare "$TMP/base.json" "$TMP/slow.json" --threshold abc
expect_exit 2 "--runs does not apply" -- "$IB" compare "$TMP/base.json" "$TMP/slow.json" --runs 5
expect_exit 2 "--json to a directory" -- "$IB" compare "$TMP/base.json" "$TMP/slow.json" --json "$TMP"
if ls "$TMP"/*.tmp.* >/dev/null 2>&1; then fail "a temporary output file was left"; else pass "no temporary file left"; fi

expect_exit 0 "--help" -- "$IB" compare --help
expect_grep "[-][-]fail-if-slower" "$TMP/out" "help lists --fail-if-slower"
finish
