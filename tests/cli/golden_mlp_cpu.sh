#!/usr/bin/env bash
# zoo:mlp on the CPU through ONNX Runtime, compared with the files under
# tests/cli/golden/mlp/ (issue 26, beside golden_fake.sh): what does not
# depend on timing stays byte for byte the same. Real runs vary, so every
# number is masked (N) except in the lines and keys that name the model,
# its inputs, outputs, options and arithmetic; the warnings (which depend
# on the spread of the runs: high variation, two modes) and the machine's
# facts are masked too (and the warm-up's line: steady or not depends on
# the machine's load), a pitfall row's reading (and the why chosen by
# it), and the HTML page (its histogram's bars follow the samples) is
# left out. What remains is the shape of every document:
# its keys, its lines, its columns and its words.
# IB_GOLDEN_UPDATE=1 rewrites the golden files. Usage: golden_mlp_cpu.sh PATH/TO/inferbench
source "$(dirname "$0")/lib.sh"
IB=$(cd "$(dirname "$IB")" && pwd)/$(basename "$IB")
GOLDEN=${IB_GOLDEN_DIR:-$(cd "$(dirname "$0")" && pwd)/golden/mlp}

mask() {
  python3 - "$1" <<'PY'
import json, re, sys
path = sys.argv[1]
text = open(path, encoding="utf-8").read()
def numbers(s):
    # a figure with its sign and its unit (the reports pick us, ms or s by
    # size), and the padding that aligns the columns it is in
    s = re.sub(r"(?<![\w.])[-+]?\d+(\.\d+)?([eE][-+]?\d+)?( ?(ns|us|ms|s)\b)?", "N", s)
    s = re.sub(r"(?<=\]) ?(ns|us|ms|s)\b", "", s)  # an interval's unit, after it
    return re.sub(r" +", " ", s)
if path.endswith(".json"):
    def walk(v, key=""):
        if isinstance(v, dict):
            # a pitfall row's reading follows the runs' noise, and its why
            # is chosen by it
            read = "verdict" in v
            return {k: "MASKED" if read and k in ("verdict", "why") else walk(x, k) for k, x in v.items()}
        if isinstance(v, list):
            return "MASKED" if key in ("warnings", "samples", "host_ms", "device_ms") else [walk(x) for x in v]
        if key in ("load_average_1m", "n_cpus", "other_cpu_cores", "steady"):
            return "MASKED"  # the machine's; whether a loaded machine let the warm-up settle
        if isinstance(v, bool) or v is None:
            return v
        if isinstance(v, (int, float)):
            return "N"
        if key in ("host_cpu", "library", "version", "message", "load_average_1m", "n_cpus", "other_cpu_cores"):
            return "MASKED"
        return numbers(v) if key in ("timing_note",) else v
    d = walk(json.loads(text))
    text = json.dumps(d, indent=1, sort_keys=False) + "\n"
else:
    keep = []
    for line in text.split("\n"):
        if "warning" in line or line.startswith(("Intel", "AMD", "warm-up:", "note:")) or "ONNX Runtime" in line:
            continue
        # a pitfall row's reading, and the why chosen by it, follow the
        # runs' noise
        if not line.startswith("each row against"):  # the line that says how a row is read
            line = re.sub(r"\b(within noise|reads low|reads high|no interval)\b.*$", "READING", line)
        keep.append(numbers(line))
    # one row a run: the CSV's rows collapse to the first (the count is
    # the run count, masked like every number)
    if path.endswith(".csv"):
        keep = keep[:2] + [""]
    text = "\n".join(keep)
open(path, "w", encoding="utf-8").write(text)
PY
}

run_case() {
  local name=$1
  shift
  local dir="$TMP/cases/$name"
  mkdir -p "$dir"
  (cd "$dir" && "$@" >stdout.txt 2>stderr.txt </dev/null; echo $? >exit.txt)
  rm -f "$dir/out.html"
  golden_files "$name" "$dir" "$GOLDEN"
}

OUTS=(--json out.json --csv out.csv --md out.md --html out.html)
M=(zoo:mlp --device cpu --threads 1)
run_case latency "$IB" latency "${M[@]}" --runs 20 --warmup-ms 0 "${OUTS[@]}"
run_case latency_fp16 "$IB" latency "${M[@]}" --runs 20 --warmup-ms 0 --math fp16 "${OUTS[@]}"
run_case pitfalls "$IB" pitfalls "${M[@]}" --runs 20 --warmup-ms 0 "${OUTS[@]}"
finish
