#!/usr/bin/env python3
"""Mutation testing of inferbench: plants one small bug at a time (see
mutator.py for the operators) and checks that the unit and CLI tests fail.

The working tree is never modified: the sources are copied to
<work>/tree, built in <work>/build (configured once, without CUDA), and
each mutant is written to the copy, built incrementally, tested with
ctest and restored, also on Ctrl-C or a crash (and the next run re-syncs
the copy from the working tree before anything else).

A mutant is
  killed      a test failed;
  timeout     the tests ran past the limit (counted as killed);
  survived    every test passed;
  not viable  it does not compile (left out of the score).
The score is (killed + timeout) / (killed + timeout + survived).

Only the tests that can reach the mutated file run: the unit test programs
whose link pulled its object file out of the static library (read from
their symbol tables), and the CLI tests when the program itself links it.

Examples:
  tests/mutation/mutate.py --files 'src/core/*.c' --list
  tests/mutation/mutate.py --files 'src/core/*.c' --sample 100 --seed 1 --report m.json
  tests/mutation/mutate.py --ids 3f2a9c01de,77b0e1c2aa
"""

import argparse
import glob
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter, defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mutator  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DEFAULT_FILES = ["src/base/*.c", "src/core/*.c", "src/report/*.c", "cli/*.c"]
LABELS = "unit|cli"


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog=__doc__[__doc__.index("Examples:"):])
    p.add_argument("--files", nargs="+", default=DEFAULT_FILES,
                   help="C files or globs, relative to the repository root (default: %(default)s)")
    p.add_argument("--operators", default=",".join(mutator.OPERATORS),
                   help="comma-separated operators (default: all: %(default)s)")
    p.add_argument("--ids", help="comma-separated mutant ids: run only these")
    p.add_argument("--sample", type=int, help="a random sample of N mutants (see --seed)")
    p.add_argument("--seed", type=int, default=1, help="seed of --sample (default 1)")
    p.add_argument("--limit", type=int, help="at most N mutants (after --sample)")
    p.add_argument("--list", action="store_true", help="print the mutants, run nothing")
    p.add_argument("--report", help="write the results as JSON to this file")
    p.add_argument("--work", default=os.path.join(ROOT, "build-mutation"),
                   help="copy of the sources and its build (default: build-mutation)")
    p.add_argument("--jobs", type=int, default=2, help="ctest -j (default 2)")
    p.add_argument("--timeout-factor", type=float, default=3.0,
                   help="a mutant's tests may take this many times their baseline time "
                        "(divided by --jobs), plus 30 s (default 3)")
    args = p.parse_args(argv)
    args.operators = [o for o in args.operators.split(",") if o]
    unknown = set(args.operators) - set(mutator.OPERATORS)
    if unknown:
        p.error(f"unknown operator(s): {', '.join(sorted(unknown))}")
    return args


# --- choosing the mutants ------------------------------------------------------

def source_files(patterns):
    files = set()
    for pattern in patterns:
        matches = glob.glob(os.path.join(ROOT, pattern))
        if not matches:
            sys.exit(f"mutate: no file matches {pattern}")
        files.update(os.path.relpath(m, ROOT) for m in matches if m.endswith(".c"))
    return sorted(files)


def select_mutants(args):
    found = []
    for path in source_files(args.files):
        with open(os.path.join(ROOT, path)) as f:
            found += mutator.mutants(f.read(), path, args.operators)
    if args.ids:
        wanted = set(args.ids.split(","))
        found = [m for m in found if m.id in wanted]
        missing = wanted - {m.id for m in found}
        if missing:
            sys.exit(f"mutate: no such mutant: {', '.join(sorted(missing))}")
    if args.sample is not None and args.sample < len(found):
        # In random order, so that a run cut short is still a random sample.
        found = random.Random(args.seed).sample(found, args.sample)
    if args.limit is not None:
        found = found[: args.limit]
    return found


def describe(m):
    change = "deleted: " + " ".join(m.original.split()) if m.operator == "remove" else m.after.strip()
    return f"{m.id}  {m.file}:{m.line}:{m.col}  {m.operator:<10}  {change}"


# --- the build tree ------------------------------------------------------------

def run(cmd, cwd=None, timeout=None, log=None):
    """Runs cmd in its own process group (killed whole on timeout or
    Ctrl-C); returns (exit code or None on timeout, output)."""
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
        return proc.returncode, out
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        return None, out
    except BaseException:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise


def sync_tree(tree):
    """Makes tree a copy of the working tree's sources (tracked and
    untracked, not ignored), touching only the files that differ so that
    the build stays incremental."""
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                         cwd=ROOT, check=True, capture_output=True).stdout.decode()
    wanted = {p for p in out.split("\0") if p and os.path.isfile(os.path.join(ROOT, p))}
    for path in wanted:
        src, dst = os.path.join(ROOT, path), os.path.join(tree, path)
        if not os.path.exists(dst) or not same_content(src, dst):
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copyfile(src, dst)
    for dirpath, _, names in os.walk(tree):
        for name in names:
            rel = os.path.relpath(os.path.join(dirpath, name), tree)
            if rel not in wanted:
                os.remove(os.path.join(tree, rel))


def same_content(a, b):
    with open(a, "rb") as fa, open(b, "rb") as fb:
        return fa.read() == fb.read()


def configure(tree, build):
    if os.path.exists(os.path.join(build, "CMakeCache.txt")):
        return
    rc, ort = run([os.path.join(ROOT, "scripts", "setup.sh")], cwd=ROOT)
    if rc != 0:
        sys.exit(f"mutate: scripts/setup.sh failed:\n{ort}")
    cmd = ["cmake", "-S", tree, "-B", build, "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
           "-DIB_WITH_CUDA=OFF", f"-DORT_ROOT={ort.strip().splitlines()[-1]}"]
    if shutil.which("ninja"):
        cmd[1:1] = ["-G", "Ninja"]
    rc, out = run(cmd)
    if rc != 0:
        sys.exit(f"mutate: cmake configure failed:\n{out}")


def build(build_dir, targets):
    rc, out = run(["cmake", "--build", build_dir, "-j2", "--target", *targets])
    return rc == 0, out


# --- which tests reach which file ---------------------------------------------

def defined_globals(path):
    """Names of the functions and data an object file or program defines."""
    rc, out = run(["nm", "--defined-only", "-g", path])
    if rc != 0:
        return set()
    names = {line.split()[-1] for line in out.splitlines() if len(line.split()) >= 3}
    return names - {"main"}  # every program has one


def ctest_tests(build_dir):
    rc, out = run(["ctest", "-N", "-L", LABELS], cwd=build_dir)
    if rc != 0:
        sys.exit(f"mutate: ctest -N failed:\n{out}")
    return re.findall(r"Test +#\d+: (\S+)", out)


def object_of(build_dir, path):
    found = glob.glob(os.path.join(build_dir, "**", path + ".o"), recursive=True)
    return found[0] if found else None


def test_map(build_dir, tests, files):
    """{file: [tests that can reach it]}: a unit test when its program
    links the file's object, every CLI test when the program does."""
    programs = {"cli": os.path.join(build_dir, "inferbench")}
    for t in tests:
        if t.startswith("unit/"):
            programs[t] = os.path.join(build_dir, "tests", t.split("/", 1)[1])
    linked = {name: defined_globals(path) for name, path in programs.items()}
    reach = {}
    for f in files:
        obj = object_of(build_dir, f)
        symbols = defined_globals(obj) if obj else set()
        if not symbols:  # cannot tell: run everything
            reach[f] = list(tests)
            continue
        reach[f] = [t for t in tests
                    if (linked["cli"] if t.startswith("cli/") else linked.get(t, set())) & symbols]
    return reach


def targets_of(tests):
    names = {"inferbench"}
    names.update(t.split("/", 1)[1] for t in tests if t.startswith("unit/"))
    return sorted(names)


# --- running the tests ----------------------------------------------------------

_RESULT_RE = re.compile(r"Test +#\d+: (\S+) \.*\s*(.*?)\s+([\d.]+) sec")


def ctest(build_dir, tests, jobs, timeout):
    """(status, failed tests, {test: seconds}) for running tests."""
    regex = "^(" + "|".join(re.escape(t) for t in tests) + ")$"
    cmd = ["ctest", "-L", LABELS, "-R", regex, "--stop-on-failure", f"-j{jobs}", "--output-on-failure"]
    rc, out = run(cmd, cwd=build_dir, timeout=timeout)
    times = {m.group(1): float(m.group(3)) for m in _RESULT_RE.finditer(out)}
    failed = [m.group(1) for m in _RESULT_RE.finditer(out)
              if "Passed" not in m.group(2) and "Skipped" not in m.group(2)
              and "Not Run" not in m.group(2)]
    if rc is None:
        return "timeout", failed, times, out
    return ("survived" if rc == 0 else "killed"), failed, times, out


def build_all(build_dir):
    ok, out = build(build_dir, ["all"])
    if not ok:
        sys.exit(f"mutate: the unmutated tree does not build:\n{out[-3000:]}")


def baseline(build_dir, tests, jobs):
    print(f"baseline: running {len(tests)} tests ...", flush=True)
    start = time.monotonic()
    status, failed, times, out = ctest(build_dir, tests, jobs, None)
    wall = time.monotonic() - start
    if status != "survived":
        sys.exit(f"mutate: the tests fail without any mutant ({', '.join(failed)}):\n{out[-3000:]}")
    print(f"baseline: {wall:.1f} s wall with -j{jobs} ({sum(times.values()):.1f} s of tests)", flush=True)
    return times, wall


def run_mutant(m, tree, build_dir, reach, times, args):
    path = os.path.join(tree, m.file)
    with open(path) as f:
        original = f.read()
    tests = reach[m.file]
    result = {"id": m.id, "file": m.file, "line": m.line, "col": m.col, "operator": m.operator,
              "original": m.original, "replacement": m.replacement,
              "before": m.before.strip(), "after": m.after.strip(), "tests": len(tests)}
    start = time.monotonic()
    try:
        write_fresh(path, m.apply(original))
        ok, out = build(build_dir, targets_of(tests))
        if not ok:
            result["status"] = "not viable"
            errors = [line for line in out.splitlines() if "error" in line]
            result["build_error"] = errors[0].strip() if errors else out.strip()[-300:]
        elif not tests:
            result["status"] = "survived"
            result["note"] = "no unit or CLI test links this file"
        else:
            limit = args.timeout_factor * sum(times.get(t, 10.0) for t in tests) / args.jobs + 30
            status, failed, _, _ = ctest(build_dir, tests, args.jobs, limit)
            result["status"] = status
            result["failed"] = failed
    finally:
        write_fresh(path, original)
    result["seconds"] = round(time.monotonic() - start, 1)
    return result


def write_fresh(path, text):
    """Writes text to path with a modification time the build tool sees as
    newer than anything built from it."""
    before = os.stat(path).st_mtime_ns
    with open(path, "w") as f:
        f.write(text)
    now = max(time.time_ns(), before + 1_000_000)
    os.utime(path, ns=(now, now))


# --- the report ------------------------------------------------------------------

def score_table(results, key):
    groups = defaultdict(Counter)
    for r in results:
        groups[key(r)][r["status"]] += 1
    rows = []
    for name in sorted(groups):
        c = groups[name]
        scored = c["killed"] + c["timeout"] + c["survived"]
        rows.append({"name": name, "killed": c["killed"], "timeout": c["timeout"],
                     "survived": c["survived"], "not_viable": c["not viable"],
                     "score": round((c["killed"] + c["timeout"]) / scored, 4) if scored else None})
    return rows


def print_table(title, rows):
    print(f"\n{title:<34} {'killed':>6} {'timeout':>7} {'survived':>8} {'not viable':>10} {'score':>6}")
    for r in rows:
        score = f"{100 * r['score']:.0f}%" if r["score"] is not None else "-"
        print(f"{r['name']:<34} {r['killed']:>6} {r['timeout']:>7} {r['survived']:>8} "
              f"{r['not_viable']:>10} {score:>6}")


def summarize(results, total_generated, args, baseline_info, interrupted):
    survivors = [r for r in results if r["status"] == "survived"]
    print(f"\nsurviving mutants ({len(survivors)}):")
    for r in survivors:
        print(f"  {r['id']}  {r['file']}:{r['line']}  {r['operator']}")
        print(f"      - {r['before']}")
        print(f"      + {r['after']}")
    per_file = score_table(results, lambda r: r["file"])
    per_folder = score_table(results, lambda r: os.path.dirname(r["file"]))
    overall = score_table(results, lambda r: "all")
    print_table("file", per_file)
    print_table("folder", per_folder)
    print_table("total", overall)
    sampled = f" (a sample of {len(results)} of {total_generated} mutants, seed {args.seed})" \
        if args.sample is not None else ""
    print(f"\n{len(results)} mutants run{sampled}{', INTERRUPTED' if interrupted else ''}")
    if args.report:
        report = {"generated": total_generated, "run": len(results), "sample": args.sample,
                  "seed": args.seed, "operators": args.operators, "files": args.files,
                  "interrupted": interrupted, "baseline": baseline_info,
                  "total": overall[0] if overall else None,
                  "per_folder": per_folder, "per_file": per_file, "mutants": results}
        with open(args.report, "w") as f:
            json.dump(report, f, indent=1)
        print(f"report: {args.report}")


def count_generated(args):
    return sum(len(mutator.mutants(open(os.path.join(ROOT, p)).read(), p, args.operators))
               for p in source_files(args.files))


def interrupt(signum, frame):
    raise KeyboardInterrupt


def main(argv):
    # Restore the copy on a kill as on Ctrl-C (also where a background
    # start left SIGINT ignored).
    signal.signal(signal.SIGTERM, interrupt)
    signal.signal(signal.SIGINT, interrupt)
    args = parse_args(argv)
    chosen = select_mutants(args)
    if args.list:
        for m in chosen:
            print(describe(m))
        print(f"{len(chosen)} mutants", file=sys.stderr)
        return 0
    tree, build_dir = os.path.join(args.work, "tree"), os.path.join(args.work, "build")
    try:
        os.makedirs(tree, exist_ok=True)
        sync_tree(tree)
        configure(tree, build_dir)
        build_all(build_dir)  # first: it re-globs the test files
        tests = ctest_tests(build_dir)
        times, wall = baseline(build_dir, tests, args.jobs)
        reach = test_map(build_dir, tests, sorted({m.file for m in chosen}))
    except KeyboardInterrupt:
        print("\ninterrupted before any mutant ran", file=sys.stderr)
        return 130
    results, interrupted = [], False
    try:
        for n, m in enumerate(chosen, 1):
            r = run_mutant(m, tree, build_dir, reach, times, args)
            results.append(r)
            print(f"[{n}/{len(chosen)}] {r['status']:<10} {r['seconds']:>5.1f}s  {describe(m)}", flush=True)
    except KeyboardInterrupt:
        interrupted = True
        print("\ninterrupted: the copy is restored; results so far:", flush=True)
    baseline_info = {"wall_s": round(wall, 1), "jobs": args.jobs, "tests": times}
    summarize(results, count_generated(args), args, baseline_info, interrupted)
    return 130 if interrupted else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
