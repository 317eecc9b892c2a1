#!/usr/bin/env python3
"""Fails when a comment in a header under the given folder states a measured timing or ratio.

Comments state an algorithm, its invariant, a definition or a source; what a change measured
belongs in its commit message and in docs/analysis.md's table of measured figures. Read are
comments only (//, ///, /* */), never code, string or character literals. Flagged:
- a time in ms, us, µs or s ("12 ms", "3.4 us", "0.66 s"), or a fractional one in ns
  ("2.5 ns a value"); a whole number of ns is how nvscope states a definition (timestamps,
  bucket widths, thresholds), so "a span of up to 4,096 ns" passes;
- a signed time, a change ("-0.8 ms", "+3 us");
- a ratio: "x0.8", "x1.08", "1.2x", "1.6 times as long";
- a before -> after pair of figures ("20.4 -> 19.4", "39 -> 31 ms");
- a percentage of change ("10 % more time", "12 % faster", "-12 %");
- a rate ("20.1 M records a second").
A threshold that users set is stated in ns or in words ("a gap of a millisecond"), as the
options themselves are in ns.
Exit status 0 when no comment states one, 1 otherwise (each line listed).
"""
import os
import re
import sys

NUMBER = r"\d(?:[\d,']*\d)?(?:\.\d+)?"
FIGURES = re.compile("|".join([
    rf"(?<![\w.]){NUMBER}\s?(?:ms|us|µs|s|sec|secs|seconds)\b",   # 12 ms, 3.4 us, 0.66 s
    rf"(?<![\w.])\d+\.\d+\s?ns\b",                               # 2.5 ns (a whole ns passes)
    rf"(?<![\w.])[-+\u2212]{NUMBER}\s?(?:ns|us|µs|ms|s)\b",       # -0.8 ms, +40 ns
    rf"(?<![\w.])x{NUMBER}(?![\w.])",                             # x0.8, x1.08, x2
    rf"(?<![\w.]){NUMBER}x(?!\w)",                                # 1.2x
    rf"(?<![\w.]){NUMBER}\s+times\s+(?:as|faster|slower|longer|shorter|more|less)\b",
    rf"(?<![\w.]){NUMBER}\s?%?\s?(?:[a-zA-Zµ]+\s?)?(?:->|→)\s?{NUMBER}",  # 20.4 -> 19.4
    rf"(?<![\w.]){NUMBER}\s?%\s+(?:more|less|faster|slower|longer|shorter|of the (?:time|pass))\b",
    rf"(?<![\w.])[-+\u2212]{NUMBER}\s?%",                              # -12 %
    rf"(?<![\w.]){NUMBER}\s?[KMG]?\s+\w+\s+(?:a|per)\s+second\b",     # 20.1 M records a second
]))
RAW_STRING = re.compile(r'(?:u8|u|U|L)?R"([^()\\ ]{0,16})\(')


def comments(text):
    """(line number, text) of every comment line; string and character literals skipped."""
    out, i, n, line = [], 0, len(text), 1
    while i < n:
        c = text[i]
        if c == "\n":
            line, i = line + 1, i + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append((line, text[i:j]))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.extend((line + k, part) for k, part in enumerate(text[i:j].split("\n")))
            line, i = line + text[i:j].count("\n"), j
        elif c in "uULR" and RAW_STRING.match(text, i) and not (i and (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = RAW_STRING.match(text, i)
            end = ")" + m.group(1) + '"'
            j = text.find(end, m.end())
            j = n if j < 0 else j + len(end)
            line, i = line + text[i:j].count("\n"), j
        elif c == "'" and i and text[i - 1].isalnum() and text[i + 1:i + 2].isalnum():
            i += 1  # a digit separator, 1'000'000
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] not in (c, "\n"):
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        else:
            i += 1
    return out


def check(root):
    problems, files = [], 0
    for folder, _, names in os.walk(root):
        for name in sorted(names):
            if not name.endswith((".hpp", ".h", ".cuh", ".cpp", ".cu")):
                continue
            path = os.path.join(folder, name)
            files += 1
            with open(path, encoding="utf-8") as f:
                for number, text in comments(f.read()):
                    m = FIGURES.search(text)
                    if m:
                        problems.append(f"{os.path.relpath(path)}:{number}: a measured figure "
                                        f"'{m.group(0)}' in a comment (state it in docs/analysis.md)")
    return problems, files


def main(argv):
    if len(argv) != 2:
        print("usage: comment_figures.py <folder>")
        return 2
    problems, files = check(argv[1])
    if files == 0:
        print(f"nvscope: no header under {argv[1]}: nothing was checked")
        return 1
    for p in problems:
        print(p)
    print(f"{files} files checked, {len(problems)} comments with measured figures")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
