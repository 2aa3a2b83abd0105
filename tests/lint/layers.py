#!/usr/bin/env python3
"""The layers of docs/architecture.md, read from the sources (issue 26).

Reads every C file of the library, the program and the examples: the
#include "..." lines, the functions and tables each file defines, and the
names each file uses (calls, tables named in initializers, names in macro
bodies). A name used in one file and defined, not static, in another is a
use of that file. Each file belongs to one unit of layers.rules; a use or
an include between units must be one the table allows, and the units'
graph, and the files' graph inside the folders the table names, must have
no circle. Each failure names the file, the name (or header) and the rule.

Usage: layers.py SOURCE_ROOT [RULES]      (RULES: layers.rules beside this)
       layers.py --graph SOURCE_ROOT      (prints the units' uses, to read)
Exit 0: the layers hold; 1: a failure (each one line "FAIL ..."); 2: bad
usage or a rules table that cannot be read.
"""
import fnmatch
import os
import re
import sys

SCANNED = ("include", "src", "cli", "examples")
INCLUDE_DIRS = ("src", "include", "cli")  # the build's -I, in its order
KEYWORDS = set(
    "if else for while do switch case default return sizeof goto break continue typedef struct union enum "
    "static extern const volatile inline register auto signed unsigned void char short int long float "
    "double _Bool bool _Alignof _Static_assert _Thread_local _Atomic _Noreturn _Generic restrict "
    "defined".split())
TOKEN = re.compile(r"[A-Za-z_]\w*|\d[\w.]*|->|.", re.S)


class RulesError(Exception):
    pass


# --- reading the C sources ----------------------------------------------------
def strip(text):
    """The text without comments, string and character literals (each a
    blank of the same lines), line continuations joined."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j) or " ")
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append('""' if c == '"' else "0")
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out).replace("\\\n", " ")


class Source:
    """One file: its includes, its definitions (name -> static?) and the
    names it uses (name -> first line)."""

    def __init__(self, root, path):
        self.path = path
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            raw = f.read()
        self.includes = []  # (header text, line)
        for no, line in enumerate(raw.split("\n"), 1):
            m = re.match(r'\s*#\s*include\s*"([^"]+)"', line)
            if m:
                self.includes.append((m.group(1), no))
        self.defines = {}
        self.uses = {}
        self._read(strip(raw))

    def _use(self, name, line):
        self.uses.setdefault(name, line)

    def _read(self, text):
        code_lines = []
        for no, line in enumerate(text.split("\n"), 1):
            m = re.match(r"\s*#\s*(\w+)(.*)", line)
            if not m:
                code_lines.append((no, line))
                continue
            if m.group(1) == "define":  # a macro's body uses what it names
                d = re.match(r"\s*(\w+)(\([^)]*\))?(.*)", m.group(2))
                if d:
                    params = set(re.findall(r"\w+", d.group(2) or ""))
                    for t in re.findall(r"[A-Za-z_]\w*", d.group(3)):
                        if t not in params and t not in KEYWORDS:
                            self._use(t, no)
        tokens = []
        for no, line in code_lines:
            tokens += [(t, no) for t in TOKEN.findall(line) if not t.isspace()]
        self._walk(tokens)

    def _walk(self, tokens):
        """Top level: definitions; inside bodies and initializers: uses."""
        i, n = 0, len(tokens)
        stmt = []  # the top-level tokens of the current declaration
        while i < n:
            t, no = tokens[i]
            if t == ";":
                self._declaration(stmt)
                stmt = []
                i += 1
            elif t == "(":
                j = self._close(tokens, i, "(", ")")
                # name(...) { : a function's definition and its body
                if j + 1 < n and tokens[j + 1][0] == "{" and stmt and re.match(r"[A-Za-z_]", stmt[-1][0]):
                    name = stmt[-1][0]
                    self.defines[name] = "static" in (s for s, _ in stmt)
                    k = self._close(tokens, j + 1, "{", "}")
                    self._uses(tokens[i:k + 1])
                    stmt, i = [], k + 1
                    continue
                stmt.append(("(", no))
                self._uses(tokens[i:j + 1])
                i = j + 1
            elif t == "{":
                j = self._close(tokens, i, "{", "}")
                if any(s == "=" for s, _ in stmt):
                    self._uses(tokens[i:j + 1])
                stmt.append(("{}", no))
                i = j + 1
            elif t == "=":
                stmt.append((t, no))
                # the initializer, to the declaration's end
                j = i + 1
                while j < n and tokens[j][0] not in ";{":
                    j += 1
                if j < n and tokens[j][0] == "{":
                    j = self._close(tokens, j, "{", "}") + 1
                    while j < n and tokens[j][0] != ";":
                        j += 1
                self._uses(tokens[i + 1:j])
                i = j
            else:
                stmt.append((t, no))
                i += 1

    @staticmethod
    def _close(tokens, i, a, b):
        depth = 0
        for j in range(i, len(tokens)):
            if tokens[j][0] == a:
                depth += 1
            elif tokens[j][0] == b:
                depth -= 1
                if depth == 0:
                    return j
        return len(tokens) - 1

    def _declaration(self, stmt):
        words = [s for s, _ in stmt]
        end = words.index("=") if "=" in words else len(words)
        if not words or "typedef" in words or "extern" in words or "(" in words[:end]:
            return  # a type, a declaration of what another file defines, a prototype
        head = [w for w in words[:end] if w not in ("[", "]") and not w[0].isdigit()]
        # the declarator: a name that is not a struct's, union's or enum's tag
        if len(head) >= 2 and re.match(r"[A-Za-z_]\w*$", head[-1]) and head[-1] not in KEYWORDS \
                and head[-2] not in ("struct", "union", "enum"):
            self.defines[head[-1]] = "static" in words

    def _uses(self, tokens):
        prev = ""
        for t, no in tokens:
            if re.match(r"[A-Za-z_]", t) and t not in KEYWORDS and prev not in (".", "->"):
                self._use(t, no)
            prev = t


# --- the rules table ------------------------------------------------------------
class Rules:
    def __init__(self, path):
        self.path = path
        self.units = []  # (name, pattern, may use)
        self.registers = []  # (unit, units it registers, name patterns)
        self.public_only = set()  # units that use others through the public API alone
        self.public_unit = None
        self.file_circles = []
        self.allow = []  # (file, name, why)
        self.allow_circle = {}  # unit -> the files of a circle still allowed there
        with open(path, encoding="utf-8") as f:
            for no, line in enumerate(f, 1):
                line = line.split("#", 1)[0].split()
                if line:
                    self._line(line, no)
        names = {u[0] for u in self.units}
        for name, _, may in self.units:
            for m in may:
                if m not in names and m != "*":
                    raise RulesError(f"{path}: unit {name} may use '{m}', which is no unit")
        self.check_acyclic()

    def _line(self, w, no):
        kind = w[0]
        if kind == "unit" and len(w) >= 3:
            self.units.append((w[1], w[2], [x for x in w[3:] if x != "-"]))
        elif kind == "registers" and len(w) >= 4:
            self.registers.append((w[1], w[2], w[3:]))
        elif kind == "public-only" and len(w) == 3:
            self.public_only.add(w[1])
            self.public_unit = w[2]
        elif kind == "no-file-circles" and len(w) >= 2:
            self.file_circles += w[1:]
        elif kind == "allow-circle" and len(w) >= 3:
            self.allow_circle[w[1]] = {f if "/" in f else os.path.join(self.unit_pattern(w[1]), f) for f in w[2:]}
        elif kind == "allow" and len(w) >= 4:
            self.allow.append((w[1], w[2], " ".join(w[3:])))
        else:
            raise RulesError(f"{self.path}:{no}: cannot read '{' '.join(w)}'")

    def unit_of(self, path):
        """The unit a file belongs to: the first pattern that matches. A
        pattern ending in '*/' makes each of the folder's subfolders a unit
        of its own (UNIT/SUBFOLDER), under the same row."""
        for name, pats, may in self.units:
            for pat in pats.split(","):
                if pat.endswith("*/"):
                    base = pat[:-2]
                    rest = path[len(base):] if path.startswith(base) else ""
                    if "/" in rest:
                        return name + "/" + rest.split("/", 1)[0], name
                elif pat.endswith("/"):
                    if path.startswith(pat) and "/" not in path[len(pat):]:
                        return name, name
                elif fnmatch.fnmatchcase(path, pat):
                    return name, name
        return None, None

    def unit_pattern(self, name):
        for u, pats, _ in self.units:
            if u == name:
                return pats.split(",")[0]
        raise RulesError(f"{self.path}: allow-circle of '{name}', which is no unit")

    def may(self, row, target_row):
        return any(target_row == m or m == "*" for u, _, may in self.units if u == row for m in may)

    def check_acyclic(self):
        graph = {u: [m for m in may if m not in (u, "*")] for u, _, may in self.units}
        for cycle in circles(graph):
            raise RulesError(f"{self.path}: the table itself has a circle: {' -> '.join(cycle)}")


def circles(graph):
    """One circle (a list of nodes, first repeated last) of each strongly
    connected part of graph (node -> successors) that has one."""
    index, low, stack, on, parts, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                parts.append(part)

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    out = []
    for part in parts:
        members = set(part)
        start = min(part)
        # the shortest way back to start, inside the part
        prev, frontier = {start: None}, [start]
        found = None
        while frontier and not found:
            nxt = []
            for v in frontier:
                for w in sorted(graph.get(v, ())):
                    if w == start:
                        found = v
                        break
                    if w in members and w not in prev:
                        prev[w] = v
                        nxt.append(w)
                if found:
                    break
            frontier = nxt
        path = [start]
        v = found
        while v is not None and v != start:
            path.append(v)
            v = prev[v]
        path = [start] + list(reversed(path[1:])) + [start]
        out.append(path)
    return out


# --- the check ------------------------------------------------------------------
def sources(root):
    out = []
    for top in SCANNED:
        for d, dirs, files in os.walk(os.path.join(root, top)):
            dirs.sort()
            for f in sorted(files):
                if f.endswith((".c", ".h", ".cu")):
                    out.append(os.path.relpath(os.path.join(d, f), root))
    return out


def resolve(root, src, header):
    here = os.path.normpath(os.path.join(os.path.dirname(src), header))
    if os.path.isfile(os.path.join(root, here)):
        return here
    for d in INCLUDE_DIRS:
        p = os.path.normpath(os.path.join(d, header))
        if os.path.isfile(os.path.join(root, p)):
            return p
    return None  # generated or outside the tree (onnx.pb-c.h, a runtime's own header)


def check(root, rules, graph_only=False):
    files = {p: Source(root, p) for p in sources(root)}
    definers = {}
    for p, s in files.items():
        for name, static in s.defines.items():
            if not static and name != "main":
                definers.setdefault(name, []).append(p)
    unit = {p: rules.unit_of(p) for p in files}
    failures, used_allow, used_circles, file_names = [], set(), set(), {}
    unit_graph, file_edges = {}, {}

    def allowed(src, name):
        for f, n, _ in rules.allow:
            if f == src and n == name:
                used_allow.add((f, n))
                return True
        return False

    def registration(src_row, dst_row, name):
        return any(r == src_row and d == dst_row and any(fnmatch.fnmatchcase(name, p) for p in pats)
                   for r, d, pats in rules.registers)

    def edge(src, dst, name, what, line):
        (su, srow), (du, drow) = unit[src], unit[dst]
        file_edges.setdefault(src, set()).add(dst)
        file_names.setdefault((src, dst), set()).add(name)
        if su == du:
            return
        if registration(srow, drow, name):
            return  # a registration line: a list entry, no use (not in the graph)
        # a row's units may use the rows it names; two units of one row
        # (two backends) may not use each other
        ok = srow != drow and rules.may(srow, drow)
        if ok and srow in rules.public_only and drow != rules.public_unit and \
                (what == "includes" or not re.match(r"(ib|IB)_[A-Za-z0-9]", name) or name.startswith("ib__")):
            ok = False  # only the public API's headers and names
        if not ok and allowed(src, name):
            return  # a crossing the table still allows: not in the graph either
        unit_graph.setdefault(su, {}).setdefault(du, []).append((src, name))
        if not ok:
            failures.append(f"FAIL {src}:{line}: {what} {name} of {dst}: {su} may not use {du} "
                            f"(tests/lint/layers.rules)")

    for p, s in sorted(files.items()):
        if unit[p][0] is None:
            failures.append(f"FAIL {p}: in no unit of layers.rules (add its folder to the table)")
            continue
        for header, line in s.includes:
            dst = resolve(root, p, header)
            if dst and unit[dst][0]:
                edge(p, dst, header, "includes", line)
        for name, line in sorted(s.uses.items()):
            if name in s.defines:
                continue
            for dst in definers.get(name, ()):
                if dst != p and unit[dst][0]:
                    edge(p, dst, name, "uses", line)

    if graph_only:
        for su in sorted(unit_graph):
            for du in sorted(unit_graph[su]):
                ex = unit_graph[su][du]
                print(f"{su} -> {du}: {len(ex)} ({', '.join(sorted({f'{a}:{b}' for a, b in ex})[:4])})")
        return 0

    for cycle in circles({u: list(d) for u, d in unit_graph.items()}):
        steps = []
        for a, b in zip(cycle, cycle[1:]):
            f, n = unit_graph[a][b][0]
            steps.append(f"{a} -> {b} ({f}: {n})")
        failures.append("FAIL a circle between folders: " + ", ".join(steps))
    for folder in rules.file_circles:
        g = {a: [b for b in bs if unit[b][0] == folder] for a, bs in file_edges.items() if unit[a][0] == folder}
        for cycle in circles(g):
            if set(cycle) <= rules.allow_circle.get(folder, set()):
                used_circles.add(folder)
                continue
            steps = [f"{a} -> {b} ({', '.join(sorted(file_names[a, b])[:3])})" for a, b in zip(cycle, cycle[1:])]
            failures.append(f"FAIL a circle between the files of {folder}: {', '.join(steps)}")
    for folder in rules.allow_circle:
        if folder not in used_circles:
            failures.append(f"FAIL allowed circle of {folder} is not in the code any more: remove its line")
    for f, n, why in rules.allow:
        if (f, n) not in used_allow:
            failures.append(f"FAIL allowed crossing {f} {n} is not in the code any more: remove its line")
    for line in failures:
        print(line)
    if failures:
        return 1
    print(f"PASS the layers of layers.rules hold: {len(files)} files, {len(rules.units)} rows, "
          f"{len(rules.allow)} crossings still allowed")
    return 0


def main(argv):
    graph = argv[1:2] == ["--graph"]
    args = argv[2:] if graph else argv[1:]
    if not args or len(args) > 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    rules_path = args[1] if len(args) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                            "layers.rules")
    try:
        rules = Rules(rules_path)
    except (OSError, RulesError) as e:
        print(f"layers: {e}", file=sys.stderr)
        return 2
    return check(args[0], rules, graph)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
