# Options a backend declares (include/inferbench_backend.h,
# ib_backend_option_decl) become the program's: the test plugin "knobs"
# declares alias flags (--knob-us N, --knob-mode fast|slow, the switch
# --knob-turbo), an environment variable (IB_TEST_KNOB_US) and values for
# best to race. Each then works on the command line, shows in the help, has
# its value checked, and best races them; the built-in backends' flags come
# from the same declarations (options.sh, limits.sh check their refusals).
. "$(dirname "$0")/lib.sh"
plugins=${IB_TEST_PLUGINS:?the test plugins (tests/CMakeLists.txt sets it)}
knobs="--backend plugin:$plugins/knobs.so --device cpu"
fast="--runs 10 --warmup-runs 1 --warmup-ms 0 --no-steady"

# shellcheck disable=SC2086 # option lists are words
expect_exit 0 "the help of a command with the plugin" -- "$IB" latency $knobs --help
expect_grep "^  --knob-us N +microseconds a run spins \(backend knobs\)$" "$TMP/out" "help: the alias flag, its syntax and its backend"
expect_grep "^  --knob-mode fast\|slow +fast, or slow" "$TMP/out" "help: the declared values"
expect_grep "^  --knob-turbo +half as long" "$TMP/out" "help: a switch takes no value"
expect_grep "^  --threads N +CPU provider intra-op threads$" "$TMP/out" "help: the default backend's flags still there"
"$IB" latency --help >"$TMP/plain"
if grep -q -- "--knob-us" "$TMP/plain"; then fail "help without the plugin lists its flags"; else pass "help without the plugin: not its flags"; fi

# shellcheck disable=SC2086
expect_exit 0 "alias flags on the command line" -- "$IB" latency $knobs $fast --knob-us 200 --knob-mode SLOW --knob-turbo --json "$TMP/a.json"
json_check "$TMP/a.json" "d['workload']['backend_options'] == {'us': '200', 'mode': 'slow', 'turbo': 'yes'}" "json: each flag reached the plugin as its key, the value in the declared spelling"
# A busy-wait of 200 us takes at least 200 us at any load (slow x turbo:
# 200 us a run; mode slow not applied would be 100). No upper bound: until
# issue 28 the fastest run was bounded by 5 ms, which a loaded machine can
# pass; it is printed instead.
json_check "$TMP/a.json" "print('  fastest run %.4f ms' % d['latency_ms']['min']) or d['latency_ms']['min'] >= 0.2 - 1e-6" "json: slow x turbo = 200 us a run, at least"

# shellcheck disable=SC2086
expect_exit 2 "an undeclared value" -- "$IB" latency $knobs $fast --knob-mode medium
expect_grep "^inferbench: --knob-mode 'medium': expected fast or slow$" "$TMP/err" "refused, the declared values listed"
[ "$(grep -c '' "$TMP/err")" -eq 1 ] && pass "one line" || fail "not one line: $(cat "$TMP/err")"
# shellcheck disable=SC2086
expect_exit 2 "a number out of the declared range" -- "$IB" latency $knobs $fast --knob-us 0
expect_grep "^inferbench: --knob-us '0': must be between 1 and 100000$" "$TMP/err" "the range named"
# shellcheck disable=SC2086
expect_exit 2 "a switch given a value" -- "$IB" latency $knobs $fast --knob-turbo=yes
expect_exit 2 "a plugin's flag without the plugin" -- "$IB" latency zoo:mlp --device cpu --knob-us 5
expect_grep "^inferbench latency: unknown option '--knob-us'" "$TMP/err" "unknown without --backend"
expect_exit 2 "a plugin's flag where models are not opened" -- "$IB" compare --backend "plugin:$plugins/knobs.so" --knob-us 5 a b
expect_grep "^inferbench compare: --backend does not apply to this command" "$TMP/err" "compare takes no backend"

# The environment sets the declared option; --option and the flag win.
# shellcheck disable=SC2086
expect_exit 0 "IB_TEST_KNOB_US" -- env IB_TEST_KNOB_US=300 "$IB" latency $knobs $fast --json "$TMP/e.json"
json_check "$TMP/e.json" "d['workload']['backend_options']['us'] == '300'" "json: the environment's value"
# shellcheck disable=SC2086
expect_exit 0 "IB_TEST_KNOB_US and --knob-us" -- env IB_TEST_KNOB_US=300 "$IB" latency $knobs $fast --knob-us 20 --json "$TMP/e2.json"
json_check "$TMP/e2.json" "d['workload']['backend_options']['us'] == '20'" "json: the flag wins over the environment"
expect_exit 0 "IB_TEST_KNOB_US for another backend" -- env IB_TEST_KNOB_US=300 "$IB" latency zoo:mlp --device cpu $fast --json "$TMP/e3.json"
json_check "$TMP/e3.json" "'us' not in d['workload']['backend_options']" "json: not given to the default backend"
# shellcheck disable=SC2086
expect_exit 2 "a bad value in the environment" -- env IB_TEST_KNOB_US=lots "$IB" latency $knobs $fast
expect_grep "^inferbench: knobs: us is not 1..100000: 'lots'$" "$TMP/err" "refused by the plugin in its words"

# best races what the plugin declares: mode x turbo, no --math (no models).
# shellcheck disable=SC2086
expect_exit 0 "best on the plugin" -- "$IB" best $knobs $fast --knob-us 100 --max-batch 1 --json "$TMP/b.json"
json_check "$TMP/b.json" "[c['label'] for c in d['candidates']] == ['fast', 'fast, turbo', 'slow', 'slow, turbo']" "json: the declared race, in the declared order"
# Which configuration wins is a timing (2x between the two fastest, but
# medians of 10 runs on a loaded machine): printed. That each ran with its
# options holds at any speed: no run faster than its spin (fast 100 us,
# turbo half, slow twice).
json_check "$TMP/b.json" "print('  winner: %s' % d['latency_winner']) or all(c['latency']['ms']['min'] >= {'fast': 0.1, 'fast, turbo': 0.05, 'slow': 0.2, 'slow, turbo': 0.1}[c['label']] - 1e-6 for c in d['candidates'])" "json: each configuration at least its spin (its options applied)"
# shellcheck disable=SC2086
expect_exit 0 "best with a raced option fixed" -- "$IB" best $knobs $fast --knob-us 100 --knob-mode slow --max-batch 1 --json "$TMP/f.json"
json_check "$TMP/f.json" "[c['label'] for c in d['candidates']] == ['slow', 'slow, turbo']" "json: what the user fixes is not varied"
# serve's instances after the first are opened as the first was: the same
# backend and its options (they were opened without them, on the default
# backend, before). Runs of 2 ms (1 ms in turbo) at 1,500 requests/s keep
# both instances busy; every request's compute is the plugin's: at least
# its 1 ms spin, and each instance's fastest run alike (an instance opened
# without the options ran the default backend's model: 32 ms here). No
# absolute upper bound: a loaded machine stretches a spin, not its fastest.
expect_exit 0 "serve on 2 instances of the plugin" -- "$IB" serve $knobs --knob-us 2000 --knob-turbo --instances 2 \
  --rates 1500 --requests 60 --requests-csv "$TMP/rq.csv"
python3 -c "
import csv
rows = list(csv.DictReader(open('$TMP/rq.csv', newline='')))
by = {}
for r in rows:
    by.setdefault(r['instance'], []).append(float(r['compute_ms']))
assert set(by) == {'0', '1'}, sorted(by)
fastest = {k: min(v) for k, v in by.items()}
assert all(c >= 0.95 for cs in by.values() for c in cs), fastest
assert max(fastest.values()) < 10 * min(fastest.values()), fastest
" 2>"$TMP/pyerr" && pass "serve: both instances run the plugin with its options (1 ms runs)" || fail "serve instances: $(cat "$TMP/pyerr")"

finish
