#!/bin/bash
# serve --endpoint over rates (docs/serve-endpoint.md, "Rates: the search
# and the curve") against the scripted server run as a process, with one
# slot (script-server --slots 1; one output token a request): a request
# arriving while the slot is held waits for it. The curve over --rates
# (every rate's requests counted, both met, the knee the higher, each
# format written with the client's columns), the SLO search from the
# warm-up's rate (its logic: the answer met, the last failed not, the rates
# above capacity ended early with their requests cut, not failed),
# --sessions N at one rate, every request failing, the refusals. No timing
# is asserted, and what is asserted holds on a loaded machine: a delay
# only adds to a TTFT (the slot starts a request at the later of its
# arrival and its planned end; a TTFT counts from the scheduled arrival),
# so only what meets needs margins (tests/unit/test_endpoint_rates.c says
# the same arithmetic).
. "$(dirname "$0")/lib.sh"

need_script_server

# 8 requests a rate of one token, one warm-up; the median TTFT held at
# 90% confidence (4 requests can meet it; 1 of 8 over still meets).
one=(serve --model tiny --arrivals constant --requests 8 --prompt-tokens 16 --new-tokens 1 --warmup-requests 1)
judged=(--slo-percentile 0.5 --confidence 0.9)
serve=("${one[@]}" --slo-ttft-ms 250 "${judged[@]}")

expect_exit 2 "--sessions with --rates is refused" -- "$IB" "${serve[@]}" --endpoint http://127.0.0.1:1 --rates 4,8 --sessions 2
expect_exit 2 "--pitfalls with --rates is refused" -- "$IB" "${serve[@]}" --endpoint http://127.0.0.1:1 --rates 4,8 --pitfalls
expect_exit 2 "--rates with a bad list is refused" -- "$IB" "${serve[@]}" --endpoint http://127.0.0.1:1 --rates 4,-1

# The curve at 2 and 3/s on a slot of 280 ms (capacity 3.57/s), the TTFT
# target 430 ms: requests 500 and 333 ms apart, the slot free 220 and 53 ms
# before each arrives, none waits: every TTFT 280 ms, 150 ms under the
# target (two requests must each be that late to fail a rate), within twice
# the curve's floor by 280 ms (the knee the higher), and neither rate
# saturated (its last 2 requests would have to be 560 ms late between
# them, its last completion 123 ms and more).
script_server_start --model tiny --slots 1 --ttft-ms 280
expect_exit 0 "the curve over 2 rates" -- "$IB" "${one[@]}" --slo-ttft-ms 430 "${judged[@]}" --endpoint "$url" --rates 2,3 \
  --json "$TMP/c.json" --csv "$TMP/c.csv" --md "$TMP/c.md" --html "$TMP/c.html"
expect_grep "^the curve over 2 rates:" "$TMP/out" "  ... its table"
expect_grep "late p99  failed    cut" "$TMP/out" "  ... with the client's columns"
expect_grep "^the run above: the knee's, at 3 requests/s" "$TMP/out" "  ... the knee's run (both rates below the capacity)"
expect_grep "^failures: none of 8 requests" "$TMP/out" "  ... its endpoint block"
expect_grep "^client ceiling: " "$TMP/out" "  ... and the client's ceiling"
expect_grep "^over HTTP: $url, model tiny;.* 0 requests failed over the rates" "$TMP/out" "  ... and the rates' client line"
json_check "$TMP/c.json" 'd["kind"] == "curve" and len(d["points"]) == 2 and [p["offered_rate"] for p in d["points"]] == [2, 3]' "  ... its JSON: 2 points"
json_check "$TMP/c.json" 'all(p["scheduled"] == p["admitted"] == p["completed"] == 8 and p["failed"] == 0 and p["cut"] == 0 and p["met"] for p in d["points"])' "  ... every rate's requests sent and completed, none failed or cut, both met"
json_check "$TMP/c.json" 'd["endpoint"]["url"] == "'"$url"'" and d["at"]["endpoint"]["failed"] == 0 and len(d["at"]["endpoint"]["requests"]) == 8' "  ... the run at the knee with its endpoint block"
expect_grep "client_lateness_p99_ms,client_late,failed,cut" "$TMP/c.csv" "  ... CSV: the client's columns"
[ "$(grep -c '^curve,' "$TMP/c.csv")" -eq 2 ] && pass "  ... CSV: a row a rate" || fail "  ... CSV: $(cat "$TMP/c.csv")"
expect_grep "over HTTP: $url" "$TMP/c.md" "  ... Markdown: the client's line"
[ "$(grep -cE '^\| 2 .*\| met; client late p99 [0-9.]+ ms( \(past its bound\))?, 0 failed, 0 cut \|$|^\| 3 .*\| met, knee; client late p99 [0-9.]+ ms( \(past its bound\))?, 0 failed, 0 cut \|$' "$TMP/c.md")" -eq 2 ] &&
  pass "  ... Markdown: each rate's client figures" || fail "  ... Markdown: $(grep '^| [23] ' "$TMP/c.md")"
expect_grep "over HTTP: $url" "$TMP/c.html" "  ... HTML: the client's line"
expect_grep "<td class=\"text\">met, knee; client late p99 [0-9.]+ ms( \(past its bound\))?, 0 failed, 0 cut</td>" "$TMP/c.html" "  ... HTML: each rate's client figures"
script_server_stop

# The search on a slot of 100 ms (10 requests/s), the TTFT target 250 ms,
# starts at the warm-up's rate (one request: about 10/s, the slot's own;
# lower when the warm-up was late). Where it ends depends on the real
# clock (at about the capacity the slot is never idle: a late request
# holds up every one after it), so what is asserted is the search's own
# logic, whichever way the clock took it: the answer's rate met; the last
# failed not, the two neighbours on the grid, or none failed: the search
# stopped going up at its answer, the last rate measured (met while
# saturated: at 10/s its last 2 requests 200 ms late between them); every
# rate of 15/s and more failed, ended early, its requests in flight cut
# (request i waits i x 33 ms and more: requests 5 to 7 pass the target,
# the rate ends at request 6's first token at the latest, request 7 sent
# by then). At 5/s and below the slot is idle 100 ms before each request
# and every TTFT 150 ms under the target: two requests each that late
# fail a rate, so the search finds one.
script_server_start --model tiny --slots 1 --ttft-ms 100
expect_exit 0 "the SLO search" -- "$IB" "${serve[@]}" --endpoint "$url" --json "$TMP/s.json"
expect_grep "^answer: [0-9.]+ requests/s meets TTFT p50 <= 250 ms" "$TMP/out" "  ... its answer"
json_check "$TMP/s.json" 'd["kind"] == "search" and [p["met"] for p in d["points"] if p["offered_rate"] == d["search"]["rate_found"]] == [True]' "  ... its answer met"
json_check "$TMP/s.json" '(lambda s, P: [p["met"] for p in P if p["offered_rate"] == s["last_failed_rate"]] == [False] and abs(s["last_failed_rate"] / s["rate_found"] - 1 - s["grid_step"]) < 1e-9 if s["last_failed_rate"] is not None else P[-1]["offered_rate"] == s["rate_found"])(d["search"], d["points"])' "  ... the last failed not, the two neighbours on the grid (or none failed: it stopped at its answer)"
json_check "$TMP/s.json" 'all(p["ended_early"] and p["cut"] > 0 and not p["met"] for p in d["points"] if p["offered_rate"] >= 15)' "  ... every rate of 15/s and more ended early, its requests in flight cut"
json_check "$TMP/s.json" 'all(p["admitted"] == p["completed"] + p["cut"] and p["failed"] == 0 for p in d["points"])' "  ... every request sent completed or cut, none failed"
json_check "$TMP/s.json" 'd["search"]["requests_served"] == sum(p["admitted"] for p in d["points"])' "  ... its requests served counted"
json_check "$TMP/s.json" 'd["at"]["endpoint"]["failed"] == 0 and len(d["at"]["requests"]) == 8' "  ... the answer's run kept with its endpoint block"

expect_exit 0 "--sessions 2 at one rate" -- "$IB" "${one[@]}" --endpoint "$url" --rate 4 --sessions 2 --json "$TMP/ss.json" --html "$TMP/ss.html"
expect_grep "^inferbench serve: tiny at $url \(an OpenAI-compatible endpoint\), 2 sessions" "$TMP/out" "  ... the endpoint named"
expect_grep "<h1>inferbench serve: tiny</h1>" "$TMP/ss.html" "  ... its HTML page a serve's (not throughput's)"
json_check "$TMP/ss.json" 'd["sessions"]["count"] == 2 and d["endpoint"]["url"] == "'"$url"'"' "  ... merged, the first session's endpoint block kept"
script_server_stop

script_server_start --model tiny --fail 500
expect_exit 1 "every request of every rate failing: exit 1" -- "$IB" "${serve[@]}" --endpoint "$url" --rates 20,40 --json "$TMP/f.json"
expect_grep "every request to $url failed \(16 over 2 rates" "$TMP/err" "  ... saying so"
json_check "$TMP/f.json" '[p["failed"] for p in d["points"]] == [8, 8] and d["at"]["endpoint"]["failures"]["http"] == 8' "  ... what was measured kept, by cause"
script_server_stop

finish
