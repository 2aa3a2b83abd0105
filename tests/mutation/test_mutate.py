#!/usr/bin/env python3
"""Tests of the mutator (no build, no run): which mutants a C snippet
yields, what is left alone, and that ids are stable."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mutator  # noqa: E402

SNIPPET = """\
#include <stdio.h> /* a < b */
#define LIMIT(a, b) ((a) < (b))
static const double table[3] = {1.5, 2.5, 3.5};

typedef struct pair { double lo, hi; } pair;

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b; // x < y
    return (x > y) - (x < y);
}

double f(const double *s, size_t n, ib_stats *out)
{
    double buf[16 - 1];
    if (n == 0) return -1;
    for (size_t i = 0; i < n; i++) out->mean += s[i] * sizeof *s;
    out->p99 = s[n - 1];
    puts("a < b && c");
    ib_free(buf);
    bool far = !ready && fabs(s[0] - s[1]) > 0.5;
    return far ? -s[0] : out->p99;
}
"""


def by_change(mutants):
    return {(m.operator, m.after.strip()) for m in mutants}


class MutantsOfASnippet(unittest.TestCase):
    def setUp(self):
        self.mutants = mutator.mutants(SNIPPET, "snippet.c")
        self.changes = by_change(self.mutants)

    def test_relational_swaps(self):
        self.assertIn(("relational", "if (n != 0) return -1;"), self.changes)
        self.assertIn(("relational", "for (size_t i = 0; i <= n; i++) out->mean += s[i] * sizeof *s;"),
                      self.changes)
        self.assertIn(("relational", "for (size_t i = 0; i >= n; i++) out->mean += s[i] * sizeof *s;"),
                      self.changes)
        self.assertIn(("relational", "return (x >= y) - (x < y);"), self.changes)

    def test_arithmetic_swaps_binary_operators_only(self):
        self.assertIn(("arithmetic", "out->p99 = s[n + 1];"), self.changes)
        self.assertIn(("arithmetic", "for (size_t i = 0; i < n; i++) out->mean -= s[i] * sizeof *s;"),
                      self.changes)
        self.assertIn(("arithmetic", "for (size_t i = 0; i < n; i++) out->mean += s[i] / sizeof *s;"),
                      self.changes)
        originals = [(m.line, m.original) for m in self.mutants if m.operator == "arithmetic"]
        # `sizeof *s` and the casts' `*` are not multiplications.
        self.assertEqual(sum(1 for line, op in originals if line == 17 and op == "*"), 1)
        self.assertFalse([o for line, o in originals if line == 9])

    def test_unary_operators_after_a_condition_or_a_cast(self):
        source = "void g(int *fit, int ok, double x)\n{\n    if (ok) *fit = (int)-x;\n}\n"
        changes = by_change(mutator.mutants(source, "g.c"))
        self.assertEqual(changes, {("remove", "if (ok) {}"), ("drop", "if (ok) *fit = (int)x;")})

    def test_off_by_one_in_bounds(self):
        self.assertIn(("bound", "if (n == 1) return -1;"), self.changes)
        self.assertIn(("bound", "for (size_t i = 0; i < (n + 1); i++) out->mean += s[i] * sizeof *s;"),
                      self.changes)
        self.assertIn(("bound", "for (size_t i = 0; i < (n - 1); i++) out->mean += s[i] * sizeof *s;"),
                      self.changes)

    def test_logical_and_dropped_negations(self):
        self.assertIn(("logical", "bool far = !ready || fabs(s[0] - s[1]) > 0.5;"), self.changes)
        self.assertIn(("drop", "bool far = ready && fabs(s[0] - s[1]) > 0.5;"), self.changes)
        self.assertIn(("drop", "bool far = !ready && (s[0] - s[1]) > 0.5;"), self.changes)
        self.assertIn(("drop", "return far ? s[0] : out->p99;"), self.changes)
        self.assertIn(("drop", "if (n == 0) return 1;"), self.changes)

    def test_swapped_fields(self):
        self.assertIn(("field", "out->p50 = s[n - 1];"), self.changes)
        self.assertIn(("field", "out->p999 = s[n - 1];"), self.changes)
        self.assertIn(("field", "return far ? -s[0] : out->p95;"), self.changes)
        # Designated initializers name fields: swapping them does not compile.
        source = "void g(ib_stats *o, double v)\n{\n    *o = (ib_stats){.min = v, .max = v};\n}\n"
        self.assertFalse([m for m in mutator.mutants(source, "g.c") if m.operator == "field"])
        # A field's declaration is not an expression.
        self.assertFalse([m for m in self.mutants if m.line == 5])

    def test_removed_statements(self):
        removed = {m.original for m in self.mutants if m.operator == "remove"}
        self.assertIn("out->p99 = s[n - 1];", removed)
        self.assertIn("out->mean += s[i] * sizeof *s;", removed)
        self.assertIn('puts("a < b && c");', removed)
        self.assertIn("return -1;", removed)
        self.assertNotIn("ib_free(buf);", removed)  # only a leak: not a result
        self.assertNotIn("return far ? -s[0] : out->p99;", removed)  # would not compile
        self.assertNotIn("return (x > y) - (x < y);", removed)
        for m in self.mutants:
            if m.operator == "remove":
                self.assertEqual(m.replacement, "{}")

    def test_comments_strings_preprocessor_and_declarations_untouched(self):
        for m in self.mutants:
            self.assertNotIn(m.line, (1, 2, 3, 15), f"mutated: {m}")
            if m.line == 19:
                self.assertEqual(m.operator, "remove", f"mutated inside a string: {m}")
            line = SNIPPET.splitlines()[m.line - 1]
            self.assertEqual(line, m.before)
            if "//" in line:
                comment = line.index("//")
                self.assertLess(m.col - 1, comment, f"mutated inside a comment: {m}")

    def test_apply_changes_only_the_span(self):
        for m in self.mutants:
            mutated = m.apply(SNIPPET)
            self.assertNotEqual(mutated, SNIPPET)
            self.assertEqual(mutated[: m.start], SNIPPET[: m.start])
            self.assertEqual(mutated[m.start + len(m.replacement):], SNIPPET[m.end:])
            self.assertEqual(SNIPPET[m.start:m.end], m.original)


class Ids(unittest.TestCase):
    def test_unique_and_stable(self):
        first = [m.id for m in mutator.mutants(SNIPPET, "snippet.c")]
        again = [m.id for m in mutator.mutants(SNIPPET, "snippet.c")]
        self.assertEqual(first, again)
        self.assertEqual(len(first), len(set(first)))

    def test_unmoved_by_edits_elsewhere(self):
        before = {m.id: m.after for m in mutator.mutants(SNIPPET, "snippet.c")}
        shifted = SNIPPET.replace("{\n    double buf", "{\n    /* a new comment */\n    double buf")
        after = {m.id: m.after for m in mutator.mutants(shifted, "snippet.c")}
        self.assertEqual(before, after)

    def test_depend_on_the_file(self):
        a = {m.id for m in mutator.mutants(SNIPPET, "a.c")}
        b = {m.id for m in mutator.mutants(SNIPPET, "b.c")}
        self.assertFalse(a & b)

    def test_operators_filter(self):
        only = mutator.mutants(SNIPPET, "snippet.c", ("logical",))
        self.assertEqual({m.operator for m in only}, {"logical"})
        everything = {m.id for m in mutator.mutants(SNIPPET, "snippet.c")}
        self.assertLessEqual({m.id for m in only}, everything)


class RepositorySources(unittest.TestCase):
    def test_every_file_of_the_run_is_read(self):
        root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
        for folder in ("src/core", "src/report", "cli"):
            for name in sorted(os.listdir(os.path.join(root, folder))):
                if name.endswith(".c"):
                    path = os.path.join(root, folder, name)
                    with open(path) as f:
                        found = mutator.mutants(f.read(), f"{folder}/{name}")
                    self.assertTrue(found, f"no mutant in {folder}/{name}")


if __name__ == "__main__":
    unittest.main()
