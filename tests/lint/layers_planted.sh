#!/usr/bin/env bash
# The layers lint (layers.py) on copies of the tree with one line planted:
# each planted crossing must fail it, naming the file and the name, and
# the tree as it is must pass. So the lint cannot rot into a test that
# passes whatever the code does.
# Usage: layers_planted.sh SOURCE_ROOT
set -u
root=${1:?usage: layers_planted.sh SOURCE_ROOT}
lint="$(cd "$(dirname "$0")" && pwd)/layers.py"
rules="$(cd "$(dirname "$0")" && pwd)/layers.rules"
tmp=$(mktemp -d "${IB_TEST_TMP:-/tmp}/layers.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok   $*"; }
bad() { failed=$((failed + 1)); echo "FAIL $*"; }

# copy: a fresh copy of the scanned folders in $tmp/tree.
copy() {
  rm -rf "$tmp/tree"
  mkdir -p "$tmp/tree"
  (cd "$root" && cp -r include src cli examples "$tmp/tree/")
}

# expect CODE WHAT [RULES] -- then each PATTERN the output must hold.
expect() {
  local want=$1 what=$2 table=$3
  shift 3
  python3 "$lint" "$tmp/tree" "$table" >"$tmp/out" 2>&1
  local got=$?
  if [ "$got" -ne "$want" ]; then
    bad "$what: exit $got, expected $want: $(head -c 400 "$tmp/out")"
    return
  fi
  for pattern in "$@"; do
    if ! grep -qF -- "$pattern" "$tmp/out"; then
      bad "$what: '$pattern' not in: $(head -c 400 "$tmp/out")"
      return
    fi
  done
  ok "$what"
}

copy
expect 0 "the tree as it is" "$rules" "PASS"

# The crossing of the issue: a backend's header included in the method.
copy
echo '#include "backend/onnxruntime/ort.h"' >>"$tmp/tree/src/core/stats.c"
expect 1 "core includes a backend's header" "$rules" \
  "FAIL src/core/stats.c:" "includes backend/onnxruntime/ort.h" "core may not use backend/onnxruntime"

# A name in a comment or a string is no use.
copy
printf '%s\n' '/* ib__fake_runs, "backend/fake" */' 'static const char *planted = "ib__fake_runs";' >>"$tmp/tree/src/core/stats.c"
expect 0 "a backend's name in a comment and a string" "$rules" "PASS"

# A call from the method into a backend, with no include (a prototype of its own).
copy
printf '%s\n' 'int ib__fake_runs_planted(void);' 'int ib__fake_runs_planted(void) { return (int)ib__fake_runs(0); }' \
  >>"$tmp/tree/src/core/stats.c"
expect 1 "core calls a backend's function" "$rules" \
  "FAIL src/core/stats.c:" "uses ib__fake_runs of src/backend/fake/fake.c" "core may not use backend/fake"

# A new circle between folders: the GPU layer calling up into the method.
copy
printf '%s\n' 'void ib__gpu_planted(void);' 'void ib__gpu_planted(void) { ib__stats_widen_to_resolution(0, 0); }' \
  >>"$tmp/tree/src/gpu/gpu_none.c"
expect 1 "gpu calls the method (a circle)" "$rules" \
  "FAIL src/gpu/gpu_none.c:" "uses ib__stats_widen_to_resolution" "gpu may not use core" "FAIL a circle between folders: "

# A backend using another backend.
copy
printf '%s\n' 'void ib__aoti_planted(void);' 'void ib__aoti_planted(void) { ib__fake_runs(0); }' \
  >>"$tmp/tree/src/backend/aoti/pt2.c"
expect 1 "a backend calls another backend" "$rules" \
  "FAIL src/backend/aoti/pt2.c:" "uses ib__fake_runs" "backend/aoti may not use backend/fake"

# The program reaching past the public API: an internal header, an ib__ name.
copy
echo '#include "core/stats.h"' >>"$tmp/tree/cli/cmd_info.c"
expect 1 "the program includes an internal header" "$rules" \
  "FAIL cli/cmd_info.c:" "includes core/stats.h" "cli may not use core"
copy
printf '%s\n' 'void cli_planted(void);' 'void cli_planted(void) { ib__stats_widen_to_resolution(0, 0); }' >>"$tmp/tree/cli/cmd_info.c"
expect 1 "the program calls an internal function" "$rules" \
  "FAIL cli/cmd_info.c:" "uses ib__stats_widen_to_resolution" "cli may not use core"

# The workload contract includes neither the method nor a backend; the
# generation method and a generation backend may include it.
copy
echo '#include "core/latency.h"' >>"$tmp/tree/src/workload/generation.h"
expect 1 "the contract includes the method" "$rules" \
  "FAIL src/workload/generation.h:" "includes core/latency.h" "workload may not use core"
copy
mkdir -p "$tmp/tree/src/backend/llama"
printf '%s\n' '#include "workload/generation.h"' '#include "backend/registry.h"' >"$tmp/tree/src/backend/llama/llama.c"
printf '%s\n' '#include "workload/generation.h"' '#include "core/stats.h"' >"$tmp/tree/src/core/generate.c"
expect 0 "a generation backend and method on the contract" "$rules" "PASS"
echo '#include "backend/llama/llama.h"' >>"$tmp/tree/src/core/generate.c"
echo '/* */' >"$tmp/tree/src/backend/llama/llama.h"
expect 1 "the generation method includes the llama backend" "$rules" \
  "FAIL src/core/generate.c:" "includes backend/llama/llama.h" "core may not use backend/llama"

# A printer naming the registry.
copy
echo '#include "backend/registry.h"' >>"$tmp/tree/src/report/svg.c"
expect 1 "a printer includes the registry" "$rules" "FAIL src/report/svg.c:" "report may not use registry"

# A new circle between the files of the program.
copy
printf '%s\n' 'int cli_planted_a(void);' 'int cli_planted_a(void) { return cmd_zoo_list(0); }' >>"$tmp/tree/cli/cmd_info.c"
printf '%s\n' 'int cli_planted_b(void);' 'int cli_planted_b(void) { return cli_planted_a(); }' >>"$tmp/tree/cli/cmd_zoo.c"
expect 1 "a circle between two files of the program" "$rules" \
  "FAIL a circle between the files of cli: cli/cmd_info.c -> cli/cmd_zoo.c (cmd_zoo_list)"

# A folder in no row, and the table's own checks.
copy
mkdir -p "$tmp/tree/src/newthing"
echo 'int ib__newthing(void);' >"$tmp/tree/src/newthing/x.c"
expect 1 "a folder in no row" "$rules" "FAIL src/newthing/x.c: in no unit"
copy
cp "$rules" "$tmp/stale.rules"
echo 'allow src/core/stats.c ib_nothing_of_the_kind  a crossing long gone' >>"$tmp/stale.rules"
expect 1 "an allowed crossing that is gone" "$tmp/stale.rules" \
  "FAIL allowed crossing src/core/stats.c ib_nothing_of_the_kind is not in the code any more"
sed 's/^unit timer .*/unit timer    src\/timer\/  api base gpu/' "$rules" >"$tmp/circle.rules"
expect 2 "a table with a circle" "$tmp/circle.rules" "the table itself has a circle"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
