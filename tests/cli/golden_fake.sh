#!/usr/bin/env bash
# Every command's output in every format on the fake backend, compared
# byte for byte with the files under tests/cli/golden/fake/ (issue 26: the
# layering refactor changes no output). The fake's virtual clock makes the
# figures exact; only the machine's own facts are masked (the host CPU's
# name, the load average, the CPU count, other cores' use), since the
# suite runs on other machines too (and serve --best's time opening its
# candidates, on the host's clock).
#
# Each case runs one command in a fresh folder and keeps its exit code,
# stdout, stderr and each file it wrote (--json, --csv, --md, --html).
# IB_GOLDEN_UPDATE=1 rewrites the golden files instead (review the diff:
# a change there is a change of the program's behaviour).
# Usage: golden_fake.sh PATH/TO/inferbench
source "$(dirname "$0")/lib.sh"
IB=$(cd "$(dirname "$IB")" && pwd)/$(basename "$IB") # the cases run in folders of their own
GOLDEN=${IB_GOLDEN_DIR:-$(cd "$(dirname "$0")" && pwd)/golden/fake}
OUTS=(--json out.json --csv out.csv --md out.md --html out.html)
F=(--backend fake --device cpu)

# The masks: what differs from machine to machine, never from run to run
# of the same program on one machine: the host CPU's name (the program's
# own reading, the JSON's environment.host_cpu of the first case), the
# load average, the CPU count, other processes' use of the CPUs, and the
# warning that use raises (cpu_busy: on a loaded machine other processes
# take cores during the virtual clock's instants too): its key is taken
# out of the JSON's lists, its line out of the text, Markdown and HTML
# (an emptied list as the report prints no list).
host_cpu=""
# The llama backend's entry of a backends list: its line and its options'.
llama_entry() {
  awk '/^[^ ]/ { in_llama = ($1 == "llama") } in_llama' "$1"
}
# The list without it, a line in its place (the backends case, with
# cut_llama=1; the list as printed kept in $TMP/backends.raw).
cut_llama_entry() {
  cp "$1" "$TMP/backends.raw"
  awk '/^[^ ]/ { in_llama = ($1 == "llama")
                 if (in_llama) print "llama          (its entry: the case backends_llama, or one line without the backend)" }
       !in_llama' "$TMP/backends.raw" >"$1"
}
mask() {
  if [ "${cut_llama:-0}" = 1 ] && [ "$(basename "$1")" = stdout.txt ]; then cut_llama_entry "$1"; fi
  python3 - "$1" "$host_cpu" <<'PY'
import re, sys
path, cpu = sys.argv[1], sys.argv[2]
text = open(path, encoding="utf-8", errors="surrogateescape").read()
if cpu:
    text = text.replace(cpu, "HOST-CPU")
    # A table's column cuts a long name ("Intel(R) Xeon(R) Process"), and
    # pads a short one to its width: both read the same on any machine.
    for k in range(len(cpu) - 1, 11, -1):
        text = text.replace(cpu[:k] + " ", "HOST-CPU ")
    text = re.sub(r"HOST-CPU {2,}", "HOST-CPU  ", text)
for key in ("load_average_1m", "n_cpus", "other_cpu_cores"):
    text = re.sub(r'("%s":\s*)[^,\n}]+' % key, r"\1MASKED", text)
# serve --best's time opening each candidate: the host's clock (the model
# is opened before its virtual clock exists), in the JSON and the line
text = re.sub(r'("opening":\s*)[^,\n}]+', r"\1MASKED", text)
text = re.sub(r"opening [0-9.]+ s", "opening MASKED s", text)
text = text.replace('["cpu_busy"]', "[]").replace('"cpu_busy", ', "").replace(', "cpu_busy"', "")
# a CSV cell of warning keys (compare's a_warnings, b_warnings)
text = re.sub(r"(?<=,)cpu_busy;|;cpu_busy(?=[,;\n])|(?<=,)cpu_busy(?=[,\n])", "", text)
lines, out = text.split("\n"), []
for i, line in enumerate(lines):
    if "machine was busy" not in line:
        out.append(line)
        continue
    rest = lines[i + 1] if i + 1 < len(lines) else ""
    if out and out[-1] == "" and not rest.startswith("- "):
        out.pop()  # a Markdown list of warnings left empty: no list
text = "\n".join(out).replace('<ul class="warnings">\n</ul>', "<p>none</p>")
open(path, "w", encoding="utf-8", errors="surrogateescape").write(text)
PY
}

# run_case NAME COMMAND...: runs it in $TMP/NAME, masks what it wrote, and
# compares (or, updating, copies) each file with golden/fake/NAME.*.
run_case() {
  local name=$1
  shift
  local dir="$TMP/cases/$name"
  mkdir -p "$dir"
  (cd "$dir" && "$@" >stdout.txt 2>stderr.txt </dev/null; echo $? >exit.txt)
  if [ -z "$host_cpu" ] && [ -f "$dir/out.json" ]; then
    host_cpu=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['environment']['host_cpu'])" \
      "$dir/out.json" 2>/dev/null)
  fi
  golden_files "$name" "$dir" "$GOLDEN"
}

# A first case before everything: the host CPU's name for the masks.
run_case latency "$IB" latency "${F[@]}" --option us=500 "${OUTS[@]}"
run_case latency_batch "$IB" latency "${F[@]}" --option us=200 --option item_us=30 --batch 8 --runs 40 "${OUTS[@]}"
run_case latency_precision "$IB" latency "${F[@]}" --option us=700 --precision 1% "${OUTS[@]}"
run_case latency_partial "$IB" latency "${F[@]}" --option us=300 --option fail_at_run=40 --runs 100 "${OUTS[@]}"
run_case latency_oom "$IB" latency "${F[@]}" --option oom_above=4 --batch 8 "${OUTS[@]}"
run_case throughput "$IB" throughput "${F[@]}" --option us=100 --option item_us=20 --option oom_above=96 "${OUTS[@]}"
run_case throughput_budget "$IB" throughput "${F[@]}" --option us=100 --option item_us=20 --option oom_above=96 \
  --latency-budget-ms 0.9 "${OUTS[@]}"
run_case pitfalls "$IB" pitfalls "${F[@]}" --option us=400 --batch 4 "${OUTS[@]}"
run_case serve "$IB" serve "${F[@]}" --option us=800 --rates 200,600,1500 --requests 300 "${OUTS[@]}"
run_case serve_slo "$IB" serve "${F[@]}" --option us=800 --slo-p99-ms 20 --requests 300 "${OUTS[@]}"
run_case serve_batching "$IB" serve "${F[@]}" --option us=800 --option item_us=50 --rate 2000 --requests 300 \
  --max-batch 8 --max-delay-us 200 "${OUTS[@]}" --requests-csv requests.csv
run_case best_refused "$IB" best "${F[@]}" --option us=600 "${OUTS[@]}"
run_case fleet "$IB" latency "${F[@]}" --option us=1000 --devices 0,1 --runs 50 "${OUTS[@]}"
run_case fleet_throughput "$IB" throughput "${F[@]}" --option us=100 --option item_us=20 --option oom_above=32 \
  --devices 0,1 "${OUTS[@]}"
run_case fleet_serve "$IB" serve "${F[@]}" --option us=1000 --devices 0,1 --rates 100,400 --requests 200 "${OUTS[@]}"
run_case sessions "$IB" latency "${F[@]}" --option us=900 --sessions 3 --runs 30 "${OUTS[@]}"
run_case throughput_sessions "$IB" throughput "${F[@]}" --option us=100 --option item_us=20 --option oom_above=16 \
  --sessions 2 "${OUTS[@]}"
run_case pitfalls_sessions "$IB" pitfalls "${F[@]}" --option us=400 --sessions 2 "${OUTS[@]}"
# generate on the generation fake: without a counter (the default) and
# with its scripted one (docs/energy.md, "For generation"), a sequence
# curve whose most efficient count is not the fastest.
G=(m --backend fake --prompt-tokens 64 --new-tokens 16 --runs 10 --warmup-runs 3 --warmup-ms 0 --no-steady)
GE=(--option energy_step_ms=100 --option idle_w=60 --option busy_w=100 --option busy_w_per_seq=100 --option pos_ns=0)
run_case generate "$IB" generate "${G[@]}" --sequences 1,2 "${OUTS[@]}"
run_case generate_energy "$IB" generate "${G[@]}" "${GE[@]}" --sequences 1,2,4,8 "${OUTS[@]}"

# serve of a generative model on the generation fake (a step of 1 ms, 0.5
# a decode token, 0.1 a prompt token): every format, its steps too.
SG=(serve m.gguf --backend fake --option cold_calls=0 --option batch_us=1000 --option batch_decode_us=500
    --option batch_prefill_ns=100000 --rate 200 --requests 12 --prompt-tokens 8..24 --new-tokens 3..6 --slots 3
    --prefill-chunk 16 --warmup-requests 1 --slo-ttft-ms 20 --slo-tpot-ms 3)
run_case serve_gen "$IB" "${SG[@]}" "${OUTS[@]}" --steps-csv steps.csv
# Its SLO search (on the fake without an energy counter: no figure, said)
# and its curve (on the scripted counter: the energy per output token at
# each rate) on one slot of 8 ms a request (tests/cli/serve_gen_fake.sh).
SR=(serve m.gguf --backend fake --option cold_calls=0 --option batch_us=1000 --option batch_decode_us=500
    --option batch_prefill_ns=100000 --slots 1 --prompt-tokens 10 --new-tokens 5 --arrivals constant
    --requests 50 --warmup-requests 2 --slo-ttft-ms 3 --slo-tpot-ms 2 --slo-percentile 90 --confidence 0.9)
run_case serve_gen_search "$IB" "${SR[@]}" "${OUTS[@]}"
run_case serve_gen_curve "$IB" "${SR[@]}" --option energy_step_ms=10 --option idle_w=50 --option busy_w=150 \
  --rates 50,125,200 "${OUTS[@]}"
# serve --best: the engine's settings raced on sixteen requests at once,
# every step 1 ms (tests/cli/best_serve_fake.sh): every format.
for i in $(seq 16); do echo "0 4 2"; done >"$TMP/sixteen.txt"
run_case serve_best "$IB" serve m.gguf --backend fake --option cold_calls=0 --option batch_us=1000 \
  --option batch_decode_us=0 --option batch_prefill_ns=0 --warmup-requests 0 --best --arrivals ../../sixteen.txt \
  --slo-ttft-ms 2 --slo-tpot-ms 1 "${OUTS[@]}"

# compare: two results of the fake read back (the reader, and compare's
# report in each format).
mkdir -p "$TMP/pair"
(cd "$TMP/pair" && "$IB" latency "${F[@]}" --option us=500 --runs 60 --json a.json >/dev/null 2>&1 &&
  "$IB" latency "${F[@]}" --option us=530 --runs 60 --json b.json >/dev/null 2>&1)
run_case compare "$IB" compare ../../pair/a.json ../../pair/b.json --json out.json --csv out.csv --md out.md
run_case compare_same "$IB" compare ../../pair/a.json ../../pair/a.json --json out.json --csv out.csv --md out.md
run_case compare_slower "$IB" compare ../../pair/a.json ../../pair/b.json --fail-if-slower
(cd "$TMP/pair" && "$IB" generate "${G[@]}" "${GE[@]}" --json ga.json >/dev/null 2>&1 &&
  "$IB" generate "${G[@]}" "${GE[@]}" --option busy_w=110 --json gb.json >/dev/null 2>&1)
run_case compare_generate "$IB" compare ../../pair/ga.json ../../pair/gb.json --json out.json
(cd "$TMP/pair" && "$IB" "${SG[@]}" --json sa.json >/dev/null 2>&1 &&
  "$IB" "${SG[@]}" --option batch_us=1500 --json sb.json >/dev/null 2>&1)
run_case compare_serve_gen "$IB" compare ../../pair/sa.json ../../pair/sb.json --json out.json --csv out.csv --md out.md
run_case compare_serve_gen_mixed "$IB" compare ../../pair/sa.json ../../pair/a.json

# What needs no model, and the refusals (one line, their exit codes).
# (The backends' list and the help name the onnxruntime backend's options:
# a build without it prints others, so they are compared where it is in.)
# The llama backend's entry depends on what the set-up could fetch
# (llama.cpp comes from the npm registry; without it the build leaves the
# backend out, by design: docs/backend-llama.md), so the list is compared
# with that entry cut out (backends), and the entry apart: byte for byte
# where it is built (backends_llama), else its one line saying it is not.
if "$IB" backends 2>/dev/null | grep -q '^onnxruntime '; then
  cut_llama=1 run_case backends "$IB" backends
  llama_entry "$TMP/backends.raw" >"$TMP/llama_entry"
  if grep -q "not in this build" "$TMP/llama_entry"; then
    expect_grep "^llama  +generative models on llama.cpp: not in this build \(run scripts/setup.sh and rebuild\)$" \
      "$TMP/llama_entry" "backends: the llama entry of a build without it says so, in one line"
    [ "$(wc -l <"$TMP/llama_entry")" = 1 ] && pass "backends: no llama options without the backend" ||
      fail "backends: llama options listed without the backend: $(cat "$TMP/llama_entry")"
  else
    run_case backends_llama llama_entry "$TMP/backends.raw"
  fi
  run_case help "$IB" --help
  run_case latency_help "$IB" latency --help
fi
run_case zoo_list "$IB" zoo list
run_case bad_option "$IB" latency "${F[@]}" --option nope=1
run_case bad_format "$IB" latency "${F[@]}" --csv
run_case no_backend "$IB" latency --backend nothing
finish
