# The SLO search's and the curve's own progress line (docs/serve-generative.md,
# "Progress"), on the generation fake's virtual clock: one slot of 8 ms a
# request, 125 requests/s exactly (test_gen_serve_rates.c works it out).
# On a terminal each rate measured leaves a line of its own on stderr
# (which rate of how many, its verdict and the bracket so far) above the
# progress line of its run; none with --quiet or off a terminal.
. "$(dirname "$0")/lib.sh"

FAKE=(serve m.gguf --backend fake --option cold_calls=0 --option batch_us=1000 --option batch_decode_us=500
      --option batch_prefill_ns=100000 --slots 1 --prompt-tokens 10 --new-tokens 5 --arrivals constant
      --requests 50 --warmup-requests 2 --slo-ttft-ms 3 --slo-tpot-ms 2 --slo-percentile 90 --confidence 0.9)

# The search starts at the warm-up's rate (125, met: no rate failed yet,
# so how many it takes is not known), fails at 250 (the bracket a
# doubling of 15 grid steps: 4 bisections at most, 6 rates in all), then
# bisects (the upper of two middles: 180.9, 150.4, 137.1) down to 130.9,
# the neighbour of 125: 6 rates.
if on_tty "$TMP/search.tty" "$IB" "${FAKE[@]}"; then pass "the search on a terminal"; else fail "the search on a terminal"; fi
tr '\r' '\n' <"$TMP/search.tty" | sed 's/\x1b\[K//g' | grep '^inferbench: search:' >"$TMP/search.lines"
cat >"$TMP/search.want" <<'TXT'
inferbench: search: rate 1: 125 requests/s met; TTFT p90 2 ms, TPOT p90 1.5 ms; bracket [125, -] requests/s
inferbench: search: rate 2 of at most 6: 250 requests/s failed early (3/50 served; 2 TTFT and 0 TPOT over); TTFT p90 9.2 ms, TPOT p90 1.5 ms; bracket [125, 250] requests/s
inferbench: search: rate 3 of at most 6: 180.9 requests/s failed early (3/50 served; 2 TTFT and 0 TPOT over); TTFT p90 6.45 ms, TPOT p90 1.5 ms; bracket [125, 180.9] requests/s
inferbench: search: rate 4 of at most 6: 150.4 requests/s failed early (3/50 served; 2 TTFT and 0 TPOT over); TTFT p90 4.43 ms, TPOT p90 1.5 ms; bracket [125, 150.4] requests/s
inferbench: search: rate 5 of at most 6: 137.1 requests/s failed early (4/50 served; 2 TTFT and 0 TPOT over); TTFT p90 3.907 ms, TPOT p90 1.5 ms; bracket [125, 137.1] requests/s
inferbench: search: rate 6 of at most 6: 130.9 requests/s failed early (5/50 served; 2 TTFT and 0 TPOT over); TTFT p90 3.301 ms, TPOT p90 1.5 ms; bracket [125, 130.9] requests/s
TXT
if diff "$TMP/search.want" "$TMP/search.lines" >"$TMP/diff"; then pass "search: a line a rate, its bracket"; else fail "search: $(cat "$TMP/diff")"; fi
expect_grep $'\rinferbench: \\[250 requests/s\\] serving 0/50 requests' "$TMP/search.tty" "each rate's run: its progress line names its rate"

# The curve: rate i of 3, each line kept, its verdict at the targets
# (at 200 requests/s request i's TTFT is 2 + 3i ms).
if on_tty "$TMP/curve.tty" "$IB" "${FAKE[@]}" --rates 50,125,200; then pass "the curve on a terminal"; else fail "the curve on a terminal"; fi
tr '\r' '\n' <"$TMP/curve.tty" | sed 's/\x1b\[K//g' | grep '^inferbench: curve:' >"$TMP/curve.lines"
cat >"$TMP/curve.want" <<'TXT'
inferbench: curve: rate 1 of 3: 50 requests/s, achieved 50.61, goodput 50.61 requests/s; TTFT p99 2 ms, TPOT p99 1.5 ms; met
inferbench: curve: rate 2 of 3: 125 requests/s, achieved 125, goodput 125 requests/s; TTFT p99 2 ms, TPOT p99 1.5 ms; met
inferbench: curve: rate 3 of 3: 200 requests/s, achieved 125, goodput 2.5 requests/s; TTFT p99 147.5 ms, TPOT p99 1.5 ms; failed (49 TTFT and 0 TPOT over)
TXT
if diff "$TMP/curve.want" "$TMP/curve.lines" >"$TMP/diff"; then pass "curve: a line a rate"; else fail "curve: $(cat "$TMP/diff")"; fi

# A rate of fewer requests than the bound needs (459 for p99 at 99%):
# "too few to judge" on its line, as in the reports, never "failed".
if on_tty "$TMP/few.tty" "$IB" "${FAKE[@]}" --rates 50 --slo-percentile 99 --confidence 0.99; then pass "a curve of too few requests on a terminal"; else fail "a curve of too few requests on a terminal"; fi
tr '\r' '\n' <"$TMP/few.tty" | sed 's/\x1b\[K//g' >"$TMP/few.lines"
expect_grep "^inferbench: curve: rate 1 of 1: 50 requests/s, .*; too few to judge$" "$TMP/few.lines" "  ... its line: too few to judge, the reports' verdict"

# Quiet, or not a terminal: no line.
on_tty "$TMP/quiet.tty" "$IB" "${FAKE[@]}" --quiet
if grep -q "inferbench: search:" "$TMP/quiet.tty"; then fail "--quiet: a rate's line"; else pass "--quiet: no rate's line"; fi
expect_exit 0 "the search off a terminal" -- "$IB" "${FAKE[@]}"
if grep -q "inferbench: search:" "$TMP/err"; then fail "off a terminal: a rate's line"; else pass "off a terminal: no rate's line"; fi
finish
