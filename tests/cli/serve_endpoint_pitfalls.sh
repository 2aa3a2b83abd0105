#!/bin/bash
# inferbench serve --endpoint --pitfalls (docs/serve-endpoint.md, "Pitfalls")
# against the scripted server run as a process: every row present; the rows
# read off the run recomputed from the JSON's own requests and chunks
# (exact: 7 tokens at 3 a chunk make 2 chunk gaps for 6 token gaps, the
# chunk ITL 3 times the token ITL); the rows sent again measured; the rows a
# client cannot measure n/a with why. No timing is asserted.
. "$(dirname "$0")/lib.sh"

need_script_server

serve=(serve --rate 50 --arrivals constant --requests 8 --prompt-tokens 16 --new-tokens 7 --pitfalls)

script_server_start --model tiny --ttft-ms 2 --itl-ms 1 --tokens-per-chunk 3
expect_exit 0 "a run with --pitfalls" -- "$IB" "${serve[@]}" --warmup-requests 1 --endpoint "$url" --model tiny --json "$TMP/r.json"
for row in "TTFT from the send" "every request at time 0" "no warm-up  *n/a: the client warms the server up first by default" \
  "mean of per-request TPOT" "same seeded prompts twice" "decode-only TPOT  *n/a" "chunk gaps as token gaps .*+200.0% exact"; do
  grep -q "^$row" "$TMP/out" && pass "  ... its row: $row" || fail "  ... no row '$row': $(cat "$TMP/out")"
done
python3 - "$TMP/r.json" >"$TMP/py" 2>&1 <<'PY' && pass "  ... its JSON: the rows read off recomputed from the requests" || fail "  ... JSON: $(cat "$TMP/py")"
import json, math, sys
d = json.load(open(sys.argv[1]))
rows = {p["key"]: p for p in d["pitfalls"]}
assert len(rows) == 7, rows.keys()
def close(a, b): assert math.isclose(a, b, rel_tol=1e-9), (a, b)
def p99(x):
    x = sorted(x); h = (len(x) - 1) * 0.99; lo = int(h)
    return x[lo] + (h - lo) * (x[lo + 1] - x[lo]) if lo + 1 < len(x) else x[-1]
qs, eps = d["requests"], d["endpoint"]["requests"]
send = rows["ttft_from_admission"]
close(send["reports"], p99([q["first_token_ms"] - q["admitted_ms"] for q in qs]))
close(send["correct"], d["figures"]["ttft_ms"]["p99"])
assert send["no_interval"].startswith("read off"), send
chunk = rows["chunk_gaps_as_token_gaps"]
gaps = [e["chunk_ms"][k] - e["chunk_ms"][k - 1] for e in eps for k in range(1, len(e["chunk_ms"]))]
assert all(e["chunk_tokens_each"] == [3, 3, 1] for e in eps), eps
close(chunk["reports"], sum(gaps) / len(gaps))
close(chunk["correct"], sum(gaps) / (8 * 6))
close(chunk["error_pct"], 200)
assert chunk["verdict"] == "reads high", chunk
mean = rows["mean_of_request_tpot"]
close(mean["correct"], sum(q["end_ms"] - q["first_token_ms"] for q in qs) / (8 * 6))
for k in ("all_at_time_zero", "repeated_prompt"):
    r = rows[k]
    assert r["applies"] and r["status"] == "ok" and r["reports"] > 0 and r["correct"] > 0, r
    assert r["error_ci95_pct"] is not None, r  # compare's interval: 8 samples a side
for k in ("no_warmup", "decode_only_tpot"):
    assert not rows[k]["applies"] and rows[k]["not_applicable"], rows[k]
PY
script_server_stop

script_server_start --model tiny --ttft-ms 2 --itl-ms 1
expect_exit 0 "one token a chunk, no warm-up" -- "$IB" "${serve[@]}" --warmup-requests 0 --endpoint "$url" --model tiny
grep -q "^chunk gaps as token gaps .* +0.0% exact (same runs)  within noise" "$TMP/out" && pass "  ... chunk gaps are token gaps: within noise" || fail "  ... $(grep chunk "$TMP/out")"
grep -q "^no warm-up  *n/a: the run itself has no warm-up" "$TMP/out" && pass "  ... no warm-up: the run has none, said" || fail "  ... $(grep warm-up "$TMP/out")"
script_server_stop

finish
