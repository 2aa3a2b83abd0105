#!/bin/bash
# The client's ceiling (docs/serve-endpoint.md, "The client's ceiling"):
# serve --endpoint against the scripted server states the calibration on
# file in its text and JSON: within, ABOVE, stale (another host, another
# version), missing, malformed (one line, the run goes on); calibrate
# client keeps only a whole calibration (interrupted: the old file left
# as it was; a place it cannot write: one line, exit 1). The files are
# written by hand: no timing is asserted.
. "$(dirname "$0")/lib.sh"

need_script_server

script_server_start --model tiny --ttft-ms 1 --itl-ms 0.5

export INFERBENCH_CLIENT_CALIBRATION="$TMP/cal.json"
host=$(hostname)
version=$("$IB" --version | cut -d' ' -f2)
# calibration HOST VERSION RATE STREAMS TOKENS_PER_S: the file, by hand.
calibration() {
  printf '{"schema": "inferbench.client_calibration/1", "date": "2026-12-01T10:00:00Z", "host": "%s", "version": "%s", "rate": %s, "streams": %s, "tokens_per_s": %s, "bound_ms": 1}\n' "$@" >"$TMP/cal.json"
}
# 4 requests at 50/s, 5 tokens each: one stream at a time on an idle
# machine (each ends in about 3.5 ms, the next comes 20 ms later), two
# on a loaded one: the streams open at once are checked against the
# run's own requests, not as 1; 50 requests/s offered.
serve=(serve --endpoint "$url" --model tiny --rate 50 --arrivals constant --requests 4 --prompt-tokens 16 --new-tokens 5 --warmup-requests 1)
ceiling_line() { grep '^client ceiling: ' "$TMP/out"; }

expect_exit 0 "no calibration on file: the run goes on" -- "$IB" "${serve[@]}" --json "$TMP/r.json"
[ "$(ceiling_line)" = "client ceiling: not calibrated on this machine ($TMP/cal.json: none on file): run \`inferbench calibrate client\`" ] \
  && pass "  ... one line saying so and how to make one" || fail "  ... got $(ceiling_line)"
python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["endpoint"]["client_ceiling"]; assert c["state"]=="missing" and "rate" not in c, c' "$TMP/r.json" \
  && pass "  ... its JSON: missing" || fail "  ... JSON"

calibration "$host" "$version" 512 40 16000
expect_exit 0 "a run within the ceiling" -- "$IB" "${serve[@]}" --json "$TMP/r.json"
ceiling_line | grep -q "^client ceiling: calibrated on this machine (2026-12-01T10:00:00Z): accurate up to 512 requests/s, 40 streams, 16000 tokens/s; this run: 50 requests/s, [1-4] streams at most, [0-9]* tokens/s: within the ceiling$" \
  && pass "  ... stated: within" || fail "  ... got $(ceiling_line)"
python3 - "$TMP/r.json" >"$TMP/py" 2>&1 <<'PY' && pass "  ... its JSON: the figures, the run's, within" || fail "  ... JSON: $(cat "$TMP/py")"
import json, sys
c = json.load(open(sys.argv[1]))["endpoint"]["client_ceiling"]
assert c["state"] == "current" and c["date"] == "2026-12-01T10:00:00Z", c
assert (c["rate"], c["streams"], c["tokens_per_s"], c["bound_ms"]) == (512, 40, 16000, 1), c
assert c["run"]["rate"] == 50 and c["above"] is False, c
# The most requests open (sent, last chunk not yet in) when one is sent.
e = json.load(open(sys.argv[1]))["endpoint"]["requests"]
peak = max(sum(o["sent_ms"] <= q["sent_ms"] <= o["chunk_ms"][-1] for o in e if o["chunk_ms"]) for q in e if q["chunk_ms"])
assert c["run"]["streams_peak"] == peak, (c, peak)
PY

# The same block in the Markdown and HTML reports (the HTML of a run over
# HTTP: its ITL histogram from the chunks, the engine's steps being none).
expect_exit 0 "the endpoint block in Markdown and HTML" -- "$IB" "${serve[@]}" --md "$TMP/r.md" --html "$TMP/r.html"
grep -q "^The client (over HTTP):$" "$TMP/r.md" && grep -q "^- failures: none of 4 requests$" "$TMP/r.md" \
  && grep -q "^- client ceiling: calibrated on this machine (2026-12-01T10:00:00Z): accurate up to 512 requests/s, .*: within the ceiling$" "$TMP/r.md" \
  && pass "  ... Markdown: lateness, failures, chunks, the ceiling" || fail "  ... $(tail -6 "$TMP/r.md")"
grep -qx "<h2>The client (over HTTP)</h2>" "$TMP/r.html" && grep -qx "<li>chunks: 20, 0 carrying several tokens .*</li>" "$TMP/r.html" \
  && grep -q "^<li>client ceiling: calibrated on this machine .*: within the ceiling</li>$" "$TMP/r.html" \
  && grep -qx "<tr><td>endpoint</td><td>$url</td></tr>" "$TMP/r.html" && grep -qx "<h2>Inter-token gaps</h2>" "$TMP/r.html" \
  && pass "  ... HTML: the same, the endpoint named, the gaps drawn" || fail "  ... $(grep -c '' "$TMP/r.html") lines"

calibration "$host" "$version" 20 40 16000
expect_exit 0 "a run above the ceiling's rate: flagged, not an error" -- "$IB" "${serve[@]}" --json "$TMP/r.json"
ceiling_line | grep -q "this run: 50 requests/s, [1-4] streams at most, [0-9]* tokens/s: ABOVE the ceiling: the figures may be the client's limit, not the server's$" \
  && pass "  ... flagged as the client's limit" || fail "  ... got $(ceiling_line)"
python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["endpoint"]["client_ceiling"]; assert c["above"] is True, c' "$TMP/r.json" \
  && pass "  ... its JSON: above" || fail "  ... JSON"
calibration "$host" "$version" 512 40 10
expect_exit 0 "a run above the ceiling's tokens/s" -- "$IB" "${serve[@]}"
ceiling_line | grep -q ": ABOVE the ceiling" && pass "  ... flagged" || fail "  ... got $(ceiling_line)"

calibration elsewhere "$version" 512 40 16000
expect_exit 0 "a calibration of another host" -- "$IB" "${serve[@]}" --json "$TMP/r.json"
ceiling_line | grep -q "^client ceiling: calibrated elsewhere (STALE) (2026-12-01T10:00:00Z): accurate up to 512 requests/s" \
  && pass "  ... stated as stale" || fail "  ... got $(ceiling_line)"
grep -qx "  stale: made on host elsewhere by inferbench $version; this is $host, inferbench $version: run \`inferbench calibrate client\` again" "$TMP/out" \
  && pass "  ... saying what differs" || fail "  ... $(grep stale: "$TMP/out")"
calibration "$host" 0.0.1 512 40 16000
expect_exit 0 "a calibration of another version" -- "$IB" "${serve[@]}" --json "$TMP/r.json"
python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["endpoint"]["client_ceiling"]; assert c["state"]=="stale" and c["version"]=="0.0.1", c' "$TMP/r.json" \
  && pass "  ... stale in the JSON" || fail "  ... JSON"

for bad in '{"schema": "inferbench.client_calibration/1"' '{"schema": "other/1"}' \
  '{"schema": "inferbench.client_calibration/1", "date": "d", "host": "h", "version": "v", "rate": -1, "streams": 1, "tokens_per_s": 1, "bound_ms": 1}'; do
  printf '%s\n' "$bad" >"$TMP/cal.json"
  expect_exit 0 "a malformed calibration: the run goes on" -- "$IB" "${serve[@]}"
  [ "$(ceiling_line | wc -l)" = 1 ] && ceiling_line | grep -q "^client ceiling: not calibrated on this machine ($TMP/cal.json: the file is not one: .*): run \`inferbench calibrate client\`$" \
    && pass "  ... one line: $(ceiling_line | sed 's/.*is not one: //')" || fail "  ... got $(ceiling_line)"
done

# A whole calibration is kept, and read back as this machine's (its
# figures are the machine's: only what they are is asserted).
rm -f "$TMP/cal.json"
expect_exit 0 "calibrate client keeps its ceiling" -- "$IB" calibrate client
grep -qx "kept for serve --endpoint in $TMP/cal.json" "$TMP/out" && pass "  ... saying where" || fail "  ... $(tail -2 "$TMP/out")"
python3 - "$TMP/cal.json" "$host" "$version" >"$TMP/py" 2>&1 <<'PY' && pass "  ... the file: this host, this version, the ceiling" || fail "  ... $(cat "$TMP/py")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "inferbench.client_calibration/1" and d["host"] == sys.argv[2] and d["version"] == sys.argv[3], d
assert d["rate"] >= 0 and d["streams"] >= 0 and d["tokens_per_s"] >= 0 and d["bound_ms"] == 1, d
assert len(d["date"]) == 20 and d["date"].endswith("Z"), d
PY
expect_exit 0 "  ... which serve --endpoint states as this machine's" -- "$IB" "${serve[@]}"
ceiling_line | grep -q "^client ceiling: calibrated on this machine (" && pass "  ... current" || fail "  ... got $(ceiling_line)"
script_server_stop

# calibrate client keeps only a whole calibration.
calibration "$host" "$version" 512 40 16000
cp "$TMP/cal.json" "$TMP/old.json"
"$IB" calibrate client >"$TMP/out" 2>"$TMP/err" &
cpid=$!
sleep 1
kill -INT "$cpid"; wait "$cpid"; code=$?
[ "$code" = 130 ] && cmp -s "$TMP/cal.json" "$TMP/old.json" && ! ls "$TMP"/cal.json.tmp.* >/dev/null 2>&1 \
  && pass "an interrupted calibration leaves the one on file as it was" || fail "exit $code; $(diff "$TMP/cal.json" "$TMP/old.json")"
: >"$TMP/plain"
INFERBENCH_CLIENT_CALIBRATION="$TMP/plain/cal.json" expect_exit 2 "calibrate client where it cannot keep it: refused before the run" -- "$IB" calibrate client
[ "$(wc -l <"$TMP/err")" = 1 ] && grep -q "$TMP/plain/cal.json" "$TMP/err" && pass "  ... one line naming the file" || fail "  ... $(cat "$TMP/err")"
finish
