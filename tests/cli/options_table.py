"""docs/cli.md's table of options by command against what each command's
--help lists (issue 28, point 5: so that the doc cannot drift).

    options_table.py INFERBENCH DOCS/CLI.md          check: exit 1 and the differences
    options_table.py INFERBENCH --print              the table as it should be
"""
import re
import subprocess
import sys

BEGIN, END = "<!-- options-by-command -->", "<!-- /options-by-command -->"


def commands(ib):
    """The commands in the table's order, as typed ("zoo list")."""
    out = subprocess.run([ib, "--list-options"], capture_output=True, text=True, check=True).stdout
    seen = []
    for line in out.splitlines():
        name = line.split("\t")[0]
        if name not in seen:
            seen.append(name)
    return [c.replace("-", " ", 1) if c.startswith("zoo-") else c for c in seen]


def help_options(ib, command):
    """The options a command's --help lists, in its order (--help left out:
    every command takes it)."""
    out = subprocess.run([ib, *command.split(), "--help"], capture_output=True, text=True, check=True).stdout
    names = re.findall(r"^  (--[a-z0-9-]+)", out, re.M)
    return [n for n in names if n != "--help"]


def expected(ib):
    cmds = commands(ib)
    taken = {c: help_options(ib, c) for c in cmds}
    rows = []
    for c in cmds:
        for o in taken[c]:
            if o not in rows:
                rows.append(o)
    return cmds, rows, taken


def render(cmds, rows, taken):
    lines = ["| option | " + " | ".join(cmds) + " |", "|---|" + "---|" * len(cmds)]
    for o in rows:
        lines.append(f"| `{o}` | " + " | ".join("x" if o in taken[c] else "" for c in cmds) + " |")
    return "\n".join(lines)


def documented(path):
    text = open(path, encoding="utf-8").read()
    if BEGIN not in text or END not in text:
        sys.exit(f"{path}: no table between {BEGIN} and {END}")
    table = text.split(BEGIN, 1)[1].split(END, 1)[0].strip().splitlines()
    cells = [[c.strip() for c in line.strip().strip("|").split("|")] for line in table]
    cmds = cells[0][1:]
    taken = {c: [] for c in cmds}
    rows = []
    for row in cells[2:]:
        option = row[0].strip("`")
        rows.append(option)
        for c, mark in zip(cmds, row[1:]):
            if mark == "x":
                taken[c].append(option)
            elif mark:
                sys.exit(f"{path}: cell '{mark}' of {option} under {c}: expected x or nothing")
    return cmds, rows, taken


def main():
    ib = sys.argv[1]
    want = expected(ib)
    if sys.argv[2] == "--print":
        print(render(*want))
        return 0
    have = documented(sys.argv[2])
    bad = []
    if have[0] != want[0]:
        bad.append(f"commands: documented {have[0]}, the program has {want[0]}")
    for c in want[0]:
        doc, real = set(have[2].get(c, [])), set(want[2][c])
        for o in sorted(real - doc):
            bad.append(f"{c} --help lists {o}, the table does not")
        for o in sorted(doc - real):
            bad.append(f"the table gives {c} {o}, its --help does not list it")
    if have[1] != want[1] and not bad:
        bad.append("the rows are not in the order of the commands' --help")
    for b in bad:
        print(b)
    if bad:
        print("the table as it should be (options_table.py INFERBENCH --print):")
        print(render(*want))
    return 1 if bad else 0


sys.exit(main())
