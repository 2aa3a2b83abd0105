# serve --endpoint's curve over rates shows the line a rate of a
# generative model's curve (docs/serve-generative.md, "Progress"; the
# engine's own lines: serve_gen_progress_fake.sh), against the scripted
# server with one slot of 100 ms a request: two rates below its 10 a
# second, each line kept on the terminal, both met. Its figures come from
# the real clock: only the line's shape is checked.
. "$(dirname "$0")/lib.sh"

need_script_server
script_server_start --model tiny --slots 1 --ttft-ms 100
S=("$IB" serve --model tiny --arrivals constant --requests 8 --prompt-tokens 16 --new-tokens 1 --warmup-requests 1
   --slo-ttft-ms 130 --slo-percentile 0.5 --confidence 0.9 --endpoint "$url" --rates 4,8)
if on_tty "$TMP/tty" "${S[@]}"; then pass "the curve over HTTP on a terminal"; else fail "the curve over HTTP on a terminal"; fi
tr '\r' '\n' <"$TMP/tty" | sed 's/\x1b\[K//g' | grep '^inferbench: curve:' >"$TMP/lines"
expect_grep "^inferbench: curve: rate 1 of 2: 4 requests/s, achieved [0-9.]+, goodput [0-9.]+ requests/s; TTFT p99 [0-9.]+ ms, TPOT p99 - ms; met$" "$TMP/lines" "rate 1 of 2: its line, met"
expect_grep "^inferbench: curve: rate 2 of 2: 8 requests/s, achieved [0-9.]+, goodput [0-9.]+ requests/s; TTFT p99 [0-9.]+ ms, TPOT p99 - ms; met$" "$TMP/lines" "rate 2 of 2: its line, met"
[ "$(grep -c '' "$TMP/lines")" = 2 ] && pass "a line a rate" || fail "lines: $(cat "$TMP/lines")"
script_server_stop
finish
