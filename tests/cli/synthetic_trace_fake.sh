# scripts/synthetic_azure_trace.py (a synthetic trace of the Azure LLM
# inference trace's shape, docs/serve-generative.md "The requests") read
# by serve --arrivals on the generation fake: the same seed writes the
# same bytes, another seed other requests; its lengths within the clip;
# serve reads every row: the request count, each request's prompt and
# output tokens and its arrival (from the first row's time) exactly the
# file's; its bad options refused. tests/cli/synthetic_trace_llama_cpu.sh
# serves one on llama.cpp's CPU build, tests/gpu/serve_llama_gpu.sh (part
# trace) on the GPU.
. "$(dirname "$0")/lib.sh"

GEN=(python3 "$(dirname "$0")/../../scripts/synthetic_azure_trace.py")
SMALL=(--requests 30 --rate 200 --context-median 12 --context-sigma 0.8 --generated-median 4 --generated-sigma 0.6
       --max-context 40 --max-generated 10)

"${GEN[@]}" "${SMALL[@]}" --seed 7 >"$TMP/a.csv" && "${GEN[@]}" "${SMALL[@]}" --seed 7 >"$TMP/b.csv" &&
  "${GEN[@]}" "${SMALL[@]}" --seed 8 >"$TMP/c.csv"
if cmp -s "$TMP/a.csv" "$TMP/b.csv"; then pass "the same seed, the same bytes"; else fail "the same seed wrote two files"; fi
if cmp -s "$TMP/a.csv" "$TMP/c.csv"; then fail "seeds 7 and 8 wrote the same file"; else pass "another seed, other requests"; fi
python3 - "$TMP/a.csv" >"$TMP/check" 2>&1 <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
assert rows[0] == ["TIMESTAMP", "ContextTokens", "GeneratedTokens"], rows[0]
body = rows[1:]
assert len(body) == 30, len(body)
assert body[0][0] == "2023-11-16 18:15:46.0000000", body[0][0]
assert [r[0] for r in body] == sorted(r[0] for r in body), "unsorted"
for t, c, g in body:
    assert len(t) == 27 and 1 <= int(g) <= 10 and 1 <= int(c) and int(c) + int(g) <= 40, (t, c, g)
assert len({r[1] for r in body}) > 5, "the prompts' lengths drawn, not one"
print("ok")
PY
if [ "$(cat "$TMP/check")" = ok ]; then pass "the header, 30 rows in order, lengths within the clip (prompt + output <= 40, output <= 10)"; else fail "the file: $(cat "$TMP/check")"; fi

FAKE=(serve m.gguf --backend fake --option cold_calls=0 --option batch_us=1000 --option batch_decode_us=500
      --option batch_prefill_ns=100000 --slots 4 --warmup-requests 2 --quiet)
expect_exit 0 "serve --arrivals the synthetic trace" -- "$IB" "${FAKE[@]}" --arrivals "$TMP/a.csv" --json "$TMP/a.json"
python3 - "$TMP/a.csv" "$TMP/a.json" >"$TMP/check" 2>&1 <<'PY'
import csv, datetime, json, sys
rows = list(csv.reader(open(sys.argv[1])))[1:]
d = json.load(open(sys.argv[2]))
rq = d["requests"]
# the trace's seven digits: Python reads six (the seventh is always 0 here)
t0 = datetime.datetime.fromisoformat(rows[0][0][:26])
want = [((datetime.datetime.fromisoformat(t[:26]) - t0).total_seconds() * 1e3, int(c), int(g)) for t, c, g in rows]
got = [(r["scheduled_ms"], r["prompt_tokens"], r["output_tokens"]) for r in rq]
assert len(got) == len(want) == 30, (len(got), len(want))
for (ws, wc, wg), (gs, gc, gg) in zip(want, got):
    assert abs(ws - gs) < 1e-6 and wc == gc and wg == gg, ((ws, wc, wg), (gs, gc, gg))
assert d["figures"]["completed"] == 30 and all(r["generated_tokens"] == r["output_tokens"] for r in rq)
assert d["settings"]["ctx_per_slot"] == max(c + g for _, c, g in want), d["settings"]["ctx_per_slot"]
print("ok")
PY
if [ "$(cat "$TMP/check")" = ok ]; then pass "json: 30 requests, each one's arrival, prompt and output the file's; every one completed; a slot's context the longest row"; else fail "json against the file: $(cat "$TMP/check")"; fi
expect_grep "^requests: 30 measured, arrivals and lengths from a trace" "$TMP/out" "text: the trace's 30 requests"

# Bad options: one line from argparse's usage, exit 2, no file.
for bad in "--requests 0" "--rate -1" "--max-context 1" "--context-sigma -1" "--start junk"; do
  # shellcheck disable=SC2086
  "${GEN[@]}" $bad >"$TMP/bad.csv" 2>"$TMP/err"
  rc=$?
  if [ $rc = 2 ] && [ ! -s "$TMP/bad.csv" ] && grep -q "error:" "$TMP/err"; then pass "generator $bad: refused, exit 2"; else fail "generator $bad: exit $rc, $(head -c 200 "$TMP/bad.csv")"; fi
done
finish
