# --csv and --md on every measuring command: the CSV read back by Python's
# csv module agrees with the JSON of the same run (same n, the same values
# to the printed precision), the Markdown tables are well-formed, and the
# outputs obey the rules of every output file (docs/cli.md).
. "$(dirname "$0")/lib.sh"

# py_check PYTHON-CODE DESCRIPTION ARGS...: the code, with sys.argv[1:] the
# args and the helpers csv_rows(path) and md_tables(path), must exit 0.
py_check() {
  local code=$1 what=$2
  shift 2
  if python3 - "$@" 2>"$TMP/pyerr" <<PY
import csv, json, math, sys
def same(text, v):
    """A CSV figure against the JSON's: cJSON prints 15 significant digits
    where they nearly read back, the CSV every digit needed."""
    return math.isclose(float(text), v, rel_tol=1e-14, abs_tol=0)
def csv_rows(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f, strict=True))
def md_tables(path):
    """The tables of a Markdown file; fails unless each has a separator
    line second and the header's cell count on every line."""
    tables, cur = [], None
    for line in open(path, encoding="utf-8").read().split("\n"):
        if line.startswith("|"):
            assert line.endswith("|"), line
            cells = [c.strip() for c in line.replace("\\\\|", "\0")[1:-1].split("|")]
            if cur is None:
                cur = [cells]
            else:
                assert len(cells) == len(cur[0]), (line, cur[0])
                cur.append(cells)
        elif cur is not None:
            assert all(set(c) <= set("-:") and c for c in cur[1]), cur[1]
            tables.append(cur)
            cur = None
    if cur is not None:
        tables.append(cur)
    return tables
$code
PY
  then pass "$what"; else fail "$what: $(tail -c 400 "$TMP/pyerr")"; fi
}

# A model path with a comma and a quote: quoted in the CSV, read back whole.
expect_exit 0 "export a model to a path with a comma" -- "$IB" zoo export mlp -o "$TMP/m,\"1\".onnx"
M="$TMP/m,\"1\".onnx"

expect_exit 0 "latency --json --csv --md" -- \
  "$IB" latency "$M" --device cpu --runs 50 --json "$TMP/l.json" --csv "$TMP/l.csv" --md "$TMP/l.md"
py_check '
d = json.load(open(sys.argv[1]))
rows = csv_rows(sys.argv[2])
host = d["samples"]["host_ms"]
assert len(rows) == d["latency_ms"]["n"] == len(host) == 50, len(rows)
assert [int(r["run"]) for r in rows] == list(range(1, 51))
assert all(same(r["host_ms"], h) for r, h in zip(rows, host))
assert all(r["device_ms"] == "" for r in rows)  # no device timer on the CPU
assert all(r["model"] == sys.argv[3] and r["device"] == "cpu" and r["batch"] == "1" for r in rows)
' "latency: the CSV has the JSON's runs, values and model path" "$TMP/l.json" "$TMP/l.csv" "$M"
py_check '
t = md_tables(sys.argv[1])
assert len(t) == 1 and t[0][0][:3] == ["timing", "n", "min"] and t[0][2][:2] == ["host", "50"], t
' "latency: one Markdown table, well-formed" "$TMP/l.md"
expect_grep 'm,"1"\.onnx, cpu' "$TMP/l.md" "latency: the Markdown names the model"

expect_exit 0 "throughput --json --csv --md" -- \
  "$IB" throughput zoo:mlp --device cpu --batches 1,2,8 --runs 10 --json "$TMP/t.json" --csv "$TMP/t.csv" --md "$TMP/t.md"
py_check '
d = json.load(open(sys.argv[1]))
rows = csv_rows(sys.argv[2])
pts = d["curve"]
assert len(rows) == len(pts) == 3
for r, p in zip(rows, pts):
    assert int(r["batch"]) == p["batch"] and r["status"] == p["status"] == "ok"
    assert same(r["items_per_s"], p["items_per_s"])
    assert same(r["median_ms"], p["latency_ms"]["p50"]) and int(r["n"]) == p["latency_ms"]["n"]
peak = [r["batch"] for r in rows if r["peak"] == "true"]
assert peak == [str(d["peak"]["batch"])], (peak, d["peak"])
' "throughput: one CSV row per curve point, as in the JSON" "$TMP/t.json" "$TMP/t.csv"
py_check '
t = md_tables(sys.argv[1])
assert len(t) == 1 and [r[0] for r in t[0][2:]] == ["1", "2", "8"], t
' "throughput: a Markdown row per batch" "$TMP/t.md"

expect_exit 0 "pitfalls --json --csv --md" -- \
  "$IB" pitfalls zoo:mlp --device cpu --runs 20 --json "$TMP/p.json" --csv "$TMP/p.csv" --md "$TMP/p.md"
py_check '
d = json.load(open(sys.argv[1]))
rows = csv_rows(sys.argv[2])
assert len(rows) == len(d["rows"]) == 7
assert rows[1]["method"] == "host clock, no sync" and rows[1]["applies"] == "false"
correct = rows[0]
assert correct["method"] == "correct" and int(correct["n"]) == 20
' "pitfalls: one CSV row per method, a comma in a name quoted" "$TMP/p.json" "$TMP/p.csv"
py_check 't = md_tables(sys.argv[1]); assert len(t) == 1 and len(t[0]) == 2 + 7, t' \
  "pitfalls: a Markdown row per method" "$TMP/p.md"

expect_exit 0 "latency for compare (A)" -- "$IB" latency zoo:mlp --device cpu --runs 30 --json "$TMP/a.json"
cp "$TMP/a.json" "$TMP/b,2.json"
expect_exit 0 "compare --json --csv --md" -- \
  "$IB" compare "$TMP/a.json" "$TMP/b,2.json" --json "$TMP/c.json" --csv "$TMP/c.csv" --md "$TMP/c.md"
py_check '
d = json.load(open(sys.argv[1]))
rows = csv_rows(sys.argv[2])
assert len(rows) == 1
r = rows[0]
assert r["b_file"] == sys.argv[3] and int(r["a_n"]) == d["a"]["n"] == 30
assert same(r["change_pct"], d["change"]["pct"]) and r["verdict"] == d["verdict"]
assert r["warnings"] == ";".join(d["warnings"])
' "compare: one CSV summary row, as in the JSON" "$TMP/c.json" "$TMP/c.csv" "$TMP/b,2.json"
py_check '
t = md_tables(sys.argv[1])
d = json.load(open(sys.argv[2]))
assert len(t) == 2 and t[1][2][-1] == d["verdict"] and t[0][3][1] == sys.argv[3], t
' "compare: two Markdown tables, the verdict" "$TMP/c.md" "$TMP/c.json" "$TMP/b,2.json"

# Standard output: the document alone on stdout, the report on stderr.
expect_exit 0 "latency --csv -" -- "$IB" latency zoo:mlp --device cpu --runs 7 --csv -
py_check 'assert len(csv_rows(sys.argv[1])) == 7' "--csv -: the CSV alone on standard output" "$TMP/out"
expect_grep '^median' "$TMP/err" "--csv -: the report on standard error"
expect_exit 0 "latency --md -" -- "$IB" latency zoo:mlp --device cpu --runs 7 --md -
py_check 'assert len(md_tables(sys.argv[1])) == 1' "--md -: the Markdown on standard output" "$TMP/out"

# The rules of every output: one standard output, distinct files, checked
# before measuring, never a file the command reads.
expect_exit 2 "--csv - and --json - refused" -- "$IB" latency zoo:mlp --device cpu --runs 7 --json - --csv -
expect_grep "goes to standard output already" "$TMP/err" "one output on standard output"
expect_exit 2 "--md and --csv on one file refused" -- "$IB" latency zoo:mlp --device cpu --csv "$TMP/x" --md "$TMP/x"
expect_grep "'--csv' ... is the same file|--csv '.*' is the same file" "$TMP/err" "the same file named"
expect_exit 2 "--csv onto the model refused" -- "$IB" latency "$M" --device cpu --csv "$M"
expect_exit 2 "--md into a missing folder refused before measuring" -- \
  "$IB" throughput zoo:mlp --device cpu --md "$TMP/no/such/t.md"
expect_exit 2 "compare --csv onto an input refused" -- "$IB" compare "$TMP/a.json" "$TMP/b,2.json" --csv "$TMP/a.json"
json_check "$TMP/a.json" "d['schema'] == 'inferbench.latency/2'" "the input compared is intact"
expect_exit 2 "zoo export takes no --csv" -- "$IB" zoo export mlp -o "$TMP/z.onnx" --csv "$TMP/z.csv"
[ ! -e "$TMP/x" ] && [ ! -e "$TMP/z.csv" ] && pass "nothing written by a refused run" || fail "a refused run wrote a file"

finish
