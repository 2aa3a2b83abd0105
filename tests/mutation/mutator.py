"""Mutants of a C source file: small, realistic bugs, one change each.

The file is split into tokens (comments, strings, character constants and
preprocessor lines are single tokens that no operator touches). Only tokens
inside function bodies that belong to expressions are mutated: the
conditions of if/while/for/switch, expression statements, `return`
values and the initializers of local declarations. Types, array sizes,
file-scope tables and declarators are left alone.

A mutant's id is a hash of the file, the operator, the text replaced, its
replacement and the line's text (plus an occurrence count for repeats on
identical lines), so ids stay the same from run to run and do not move
when lines elsewhere in the file are added or removed.
"""

import hashlib
import re
from dataclasses import dataclass

_TOKEN_RE = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<string>"(?:\\.|[^"\\\n])*")
  | (?P<char>'(?:\\.|[^'\\\n])*')
  | (?P<num>\.?\d(?:[eEpP][+-]|[\w.])*)
  | (?P<id>[A-Za-z_]\w*)
  | (?P<op>->|\+\+|--|<<=|>>=|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&|^]=|\.\.\.
         |[][(){}.,;:?~!<>=+\-*/%&|^#])
    """,
    re.VERBOSE | re.DOTALL,
)

# Keywords after which a `-`, `*` or `+` is unary, and the builtin type
# words after which a `*` declares a pointer (`(const double *)x`).
_TYPE_WORDS = {
    "void", "char", "short", "int", "long", "float", "double", "signed",
    "unsigned", "bool", "_Bool", "const", "volatile", "struct", "union", "enum",
}
_QUALIFIERS = {"static", "const", "volatile", "register", "extern", "inline",
               "unsigned", "signed", "short", "long"}
_NOT_OPERANDS = {"return", "sizeof", "case", "else", "do", "goto"} | _TYPE_WORDS
_CONTROL = {"if", "while", "switch", "for", "do", "else", "case", "default",
            "break", "continue", "goto", "return"}

RELATIONAL = {
    "<": ["<=", ">="], "<=": ["<", ">"], ">": [">=", "<="], ">=": [">", "<"],
    "==": ["!="], "!=": ["=="],
}
ARITHMETIC = {"+": ["-"], "-": ["+"], "*": ["/"], "/": ["*"],
              "+=": ["-="], "-=": ["+="], "*=": ["/="], "/=": ["*="]}
LOGICAL = {"&&": ["||"], "||": ["&&"]}

# Fields of the same type that a slip of the finger swaps (ib_stats, the
# run and throughput results, the stopping rule, the GPU samples).
FIELD_PAIRS = [
    ("p50", "p99"), ("p90", "p95"), ("p95", "p99"), ("p99", "p999"),
    ("min", "max"), ("mean", "p50"), ("device_ms", "host_ms"),
    ("items_per_s", "items_per_s_sync"), ("min_runs", "max_runs"),
    ("warmup_runs", "runs"), ("cold_host_ms", "cold_device_ms"),
    ("single_p5_pct", "single_p95_pct"), ("sm_clock_mhz", "mem_clock_mhz"),
    ("warmup_ms", "warmup_max_ms"), ("search_ms", "sweep_ms"),
    ("n_inputs", "n_outputs"), ("lo", "hi"),
]
_FIELD_SWAPS = {}
for _a, _b in FIELD_PAIRS:
    _FIELD_SWAPS.setdefault(_a, []).append(_b)
    _FIELD_SWAPS.setdefault(_b, []).append(_a)

# Calls whose removal only leaks or leaves a handle open: not the kind of
# bug the tests are meant to catch.
_CLEANUP_CALL = re.compile(r"(^|_)(free|destroy|release|close|unlock|cleanup)$|^free$")

OPERATORS = ("relational", "arithmetic", "bound", "logical", "drop", "field", "remove")


@dataclass
class Token:
    kind: str
    text: str
    start: int
    end: int
    line: int
    expr: bool = False  # part of an expression the mutator may change


@dataclass
class Mutant:
    id: str
    file: str
    line: int
    col: int
    operator: str
    original: str
    replacement: str
    start: int
    end: int
    before: str  # the line as it is
    after: str   # the line as the mutant has it

    def apply(self, source):
        return source[: self.start] + self.replacement + source[self.end:]


def tokenize(source):
    """Code tokens of source (whitespace and comments dropped; a
    preprocessor line, continuations included, is one 'pp' token)."""
    tokens, pos, line = [], 0, 1
    at_line_start = True
    while pos < len(source):
        if at_line_start and source[pos] == "#":
            end = pos
            while True:
                nl = source.find("\n", end)
                if nl < 0:
                    end = len(source)
                    break
                if source[nl - 1] != "\\":
                    end = nl
                    break
                end = nl + 1
            tokens.append(Token("pp", source[pos:end], pos, end, line))
        else:
            m = _TOKEN_RE.match(source, pos)
            if not m:
                raise ValueError(f"line {line}: cannot read {source[pos:pos + 20]!r}")
            end, kind = m.end(), m.lastgroup
            if kind not in ("ws", "comment"):
                tokens.append(Token(kind, m.group(), pos, end, line))
        text = source[pos:end]
        if "\n" in text:
            at_line_start = True
        elif text.strip():
            at_line_start = False
        line += text.count("\n")
        pos = end
    return tokens


class _Scanner:
    """Marks the expression tokens of function bodies and records the
    statements that the 'remove' operator may delete."""

    def __init__(self, tokens):
        self.t = tokens
        self.removable = []  # (first token index, last token index)
        self.function_close = -1

    def text(self, i):
        return self.t[i].text if i < len(self.t) else ""

    def match(self, i, open_, close):
        """Index of the bracket closing the one at i."""
        depth = 0
        for j in range(i, len(self.t)):
            if self.t[j].text == open_:
                depth += 1
            elif self.t[j].text == close:
                depth -= 1
                if depth == 0:
                    return j
        raise ValueError(f"line {self.t[i].line}: unbalanced {open_}")

    def end_of(self, i):
        """Index of the `;` ending the statement starting at i."""
        depth = 0
        for j in range(i, len(self.t)):
            c = self.t[j].text
            if c in "([{":
                depth += 1
            elif c in ")]}":
                depth -= 1
            elif c == ";" and depth == 0:
                return j
        raise ValueError(f"line {self.t[i].line}: no ';'")

    def mark(self, first, last):
        for j in range(first, last):
            if self.t[j].kind != "pp":
                self.t[j].expr = True

    def file(self):
        i = 0
        while i < len(self.t):
            if self.text(i) == "{":
                close = self.match(i, "{", "}")
                if i > 0 and self.text(i - 1) == ")":
                    self.function_close = close
                    self.block(i + 1, close)
                i = close
            i += 1

    def block(self, i, close):
        while i < close:
            i = self.statement(i)

    def statement(self, i):
        """Scans the statement at i; returns the index after it."""
        word = self.text(i)
        if word == "{":
            close = self.match(i, "{", "}")
            self.block(i + 1, close)
            return close + 1
        if word in ("if", "while", "switch"):
            close = self.match(i + 1, "(", ")")
            self.mark(i + 2, close)
            return self.statement(close + 1)
        if word == "for":
            return self.for_statement(i)
        if word == "do":
            i = self.statement(i + 1)  # the body; then `while (...);`
            close = self.match(i + 1, "(", ")")
            self.mark(i + 2, close)
            return close + 2
        if word == "else":
            return self.statement(i + 1)
        if word in ("case", "default"):
            while self.text(i) != ":":
                i += 1
            return i + 1
        if self.t[i].kind == "pp" or word == ";":
            return i + 1
        if self.t[i].kind == "id" and self.text(i + 1) == ":" and word not in _CONTROL:
            return i + 2  # a label
        end = self.end_of(i)
        if word in ("break", "continue", "goto"):
            return end + 1
        if word == "return":
            self.mark(i + 1, end)
            # A function's last `return X;` removed does not compile.
            if end > i + 1 and end + 1 != self.function_close:
                self.removable.append((i, end))
        elif self.is_declaration(i):
            self.mark_initializers(i, end)
        else:
            self.mark(i, end)
            if self.computes(i, end):
                self.removable.append((i, end))
        return end + 1

    def for_statement(self, i):
        close = self.match(i + 1, "(", ")")
        first_semi = self.end_of(i + 2)
        if self.is_declaration(i + 2):
            self.mark_initializers(i + 2, first_semi)
        else:
            self.mark(i + 2, first_semi)
        self.mark(first_semi + 1, close)
        return self.statement(close + 1)

    def is_declaration(self, i):
        while self.text(i) in _QUALIFIERS:
            i += 1
        if self.text(i) in ("struct", "union", "enum"):
            return True
        if self.text(i) in _TYPE_WORDS:
            return True
        if self.t[i].kind != "id":
            return False
        j = i + 1
        while self.text(j) in ("*", "const"):
            j += 1
        return self.t[j].kind == "id" if j < len(self.t) else False

    def mark_initializers(self, i, end):
        """Marks `= value` parts of a declaration (not braced initializers,
        not array sizes)."""
        depth, j = 0, i
        while j < end:
            c = self.text(j)
            if c in "([{":
                depth += 1
            elif c in ")]}":
                depth -= 1
            elif c == "=" and depth == 0:
                if self.text(j + 1) == "{":
                    j = self.match(j + 1, "{", "}")
                    continue
                k = j + 1
                d = 0
                while k < end and not (d == 0 and self.text(k) == ","):
                    c2 = self.text(k)
                    d += c2 in "([{"
                    d -= c2 in ")]}"
                    k += 1
                self.mark(j + 1, k)
                j = k
                continue
            j += 1

    def computes(self, i, end):
        """Whether an expression statement assigns or calls something other
        than a clean-up function."""
        depth = 0
        for j in range(i, end):
            c = self.text(j)
            if c in "([":
                depth += 1
            elif c in ")]":
                depth -= 1
            elif depth == 0 and (c in ("=", "++", "--") or (c.endswith("=") and c in ARITHMETIC)):
                return True
            elif depth == 0 and c in ("<<=", ">>=", "|=", "&=", "^=", "%="):
                return True
        if self.t[i].kind == "id" and self.text(i + 1) == "(":
            return not _CLEANUP_CALL.search(self.text(i))
        return False


def _is_operand_end(tokens, i):
    """Whether tokens[i] ends an operand, so that an operator after it is
    binary."""
    if i < 0:
        return False
    tok = tokens[i]
    if tok.kind in ("num", "string", "char"):
        return True
    if tok.kind == "id":
        return tok.text not in _NOT_OPERANDS
    return tok.text in (")", "]", "++", "--")


def _opening_paren(tokens, i):
    depth = 0
    for j in range(i, -1, -1):
        if tokens[j].text == ")":
            depth += 1
        elif tokens[j].text == "(":
            depth -= 1
            if depth == 0:
                return j
    return 0


def _ends_operand_paren(tokens, i):
    """Whether the `)` at i closes an operand, not a cast such as
    `(double)` nor the head of `if (...)`, after which `*` and `-` are
    unary."""
    j = _opening_paren(tokens, i)
    if j > 0 and tokens[j - 1].text in ("if", "while", "for", "switch"):
        return False
    return not _is_cast(tokens, j, i)


def _is_cast(tokens, j, i):
    """Whether the parenthesis tokens[j..i] names a type: `(double)`,
    `(size_t)`, `(const ib_stats *)`."""
    inside = [t.text for t in tokens[j + 1:i]]
    words = [w for w in inside if w not in ("*", "const")]
    if not words or not all(re.fullmatch(r"[A-Za-z_]\w*", w) for w in words):
        return False
    return (words[0] in _TYPE_WORDS or words[-1].endswith("_t") or "*" in inside
            or len(words) > 1 or words[0].startswith("ib_"))


def _binary(tokens, i):
    prev = i - 1
    if not _is_operand_end(tokens, prev):
        return False
    if tokens[prev].text == ")" and not _ends_operand_paren(tokens, prev):
        return False
    if tokens[i].text == "*" and i + 1 < len(tokens) and tokens[i + 1].text == ")":
        return False  # `(ib_stats *)p`
    return True


_SIMPLE_OPERAND_END = {")", ";", "&&", "||", "?", ",", ":"}


def _simple_operand(tokens, i):
    """End index (exclusive) of a simple operand at i (a name, a member
    chain or an integer), or None."""
    tok = tokens[i]
    if tok.kind == "num":
        j = i + 1
    elif tok.kind == "id" and tok.text not in _NOT_OPERANDS:
        j = i + 1
        while j + 1 < len(tokens) and tokens[j].text in (".", "->") and tokens[j + 1].kind == "id":
            j += 2
    else:
        return None
    if j < len(tokens) and tokens[j].text in _SIMPLE_OPERAND_END:
        return j
    return None


def _integer(text):
    m = re.fullmatch(r"(0[xX][0-9a-fA-F]+|\d+)([uUlL]*)", text)
    return (int(m.group(1), 0), m.group(2)) if m else None


def _candidates(tokens, i):
    """(operator, first token, last token + 1, replacement) of the mutants
    at expression token i."""
    tok, text = tokens[i], tokens[i].text
    if text in RELATIONAL:
        for repl in RELATIONAL[text]:
            yield "relational", i, i + 1, repl
        end = _simple_operand(tokens, i + 1)
        if end is not None:
            operand = " ".join(t.text for t in tokens[i + 1:end]).replace(" -> ", "->").replace(" . ", ".")
            value = _integer(operand)
            if value is not None:
                n, suffix = value
                yield "bound", i + 1, end, f"{n + 1}{suffix}"
                if n > 0:
                    yield "bound", i + 1, end, f"{n - 1}{suffix}"
            elif tokens[i + 1].kind == "id" and not re.fullmatch(r"[A-Z_][A-Z0-9_]*", operand):
                # (names in capitals are status codes and macros: +1 on
                # IB_OK or NULL is no bound)
                yield "bound", i + 1, end, f"({operand} + 1)"
                yield "bound", i + 1, end, f"({operand} - 1)"
    elif text in ARITHMETIC:
        if len(text) == 2 or _binary(tokens, i):
            for repl in ARITHMETIC[text]:
                yield "arithmetic", i, i + 1, repl
        elif text == "-":
            yield "drop", i, i + 1, ""
    elif text in LOGICAL:
        for repl in LOGICAL[text]:
            yield "logical", i, i + 1, repl
    elif text == "!":
        yield "drop", i, i + 1, ""
    elif tok.kind == "id" and text in ("fabs", "fabsf") and i + 1 < len(tokens) and tokens[i + 1].text == "(":
        yield "drop", i, i + 1, ""
    elif tok.kind == "id" and text in _FIELD_SWAPS and i > 1 and tokens[i - 1].text in (".", "->") \
            and tokens[i - 2].text not in ("{", ","):  # `{.min = 1, .max = 2}` names, not reads
        for repl in _FIELD_SWAPS[text]:
            yield "field", i, i + 1, repl


def _line_bounds(source, offset):
    start = source.rfind("\n", 0, offset) + 1
    end = source.find("\n", offset)
    return start, len(source) if end < 0 else end


def mutants(source, path, operators=OPERATORS):
    """Every mutant of source (the text of the file at path, relative to
    the repository root) made by the given operators, in file order."""
    tokens = tokenize(source)
    scanner = _Scanner(tokens)
    scanner.file()
    raw = []
    for i, tok in enumerate(tokens):
        if tok.expr:
            for op, first, last, repl in _candidates(tokens, i):
                raw.append((op, tokens[first].start, tokens[last - 1].end, repl))
    for first, last in scanner.removable:
        raw.append(("remove", tokens[first].start, tokens[last].end, "{}"))
    raw.sort(key=lambda r: (r[1], r[2], r[0], r[3]))

    out, seen = [], {}
    for op, start, end, repl in raw:
        if op not in operators:
            continue
        line_start, line_end = _line_bounds(source, start)
        before = source[line_start:line_end]
        after = source[line_start:start] + repl + source[end:line_end] if end <= line_end else \
            source[line_start:start] + repl + " ..."
        original = source[start:end]
        key = (op, original, repl, before.strip())
        seen[key] = seen.get(key, 0) + 1
        digest = hashlib.sha1("|".join((path, *key, str(seen[key]))).encode()).hexdigest()[:10]
        out.append(Mutant(digest, path, source.count("\n", 0, start) + 1, start - line_start + 1,
                          op, original, repl, start, end, before, after))
    return out
