#!/usr/bin/env python3
"""Checks the library's sizes: no source file over 500 lines and no function
body over 80 lines (src/, collectives/, transports/, include/). A function is
found as a brace that follows a closing parenthesis (qualifiers allowed) and
is not a control statement or a lambda; its length runs from that line to the
matching brace. Prints each violation and exits 1 when there is any."""

import argparse
import os
import re
import sys

MAX_FILE_LINES = 500
MAX_FUNCTION_LINES = 80
FOLDERS = ["src", "collectives", "transports", "include"]
EXTENSIONS = (".h", ".cc", ".cu", ".cuh", ".hpp")
CONTROL = {"if", "for", "while", "switch", "catch", "return", "sizeof", "decltype"}
HEAD_RE = re.compile(r"\)\s*(const)?\s*(noexcept)?\s*(override)?\s*(final)?\s*(->\s*[\w:<>*& ]+)?$")


def strip(text):
    """The text with comments, strings and characters blanked, lines kept."""
    text = re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)
    out = []
    for line in text.split("\n"):
        line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
        line = re.sub(r"'(\\.|[^'\\])*'", "''", line)
        out.append(re.sub(r"//.*", "", line))
    return "\n".join(out)


def function_name(before):
    """The name before a function body's parameter list, or None."""
    depth, j = 0, len(before) - 1
    while j >= 0:
        if before[j] == ")":
            depth += 1
        elif before[j] == "(":
            depth -= 1
            if depth == 0:
                break
        j -= 1
    m = re.search(r"([\w:~<>]+)\s*$", before[:j]) if j > 0 else None
    if m is None or m.group(1) in CONTROL:
        return None
    return m.group(1)


def long_functions(path):
    text = strip(open(path, encoding="utf-8", errors="replace").read())
    stack, found, line = [], [], 1
    for i, c in enumerate(text):
        if c == "\n":
            line += 1
        elif c == "{":
            before = text[max(0, i - 400):i].rstrip()
            name = function_name(before) if HEAD_RE.search(before) else None
            stack.append((name, line))
        elif c == "}" and stack:
            name, start = stack.pop()
            outermost = not any(n for n, _ in stack)
            if name and outermost and line - start + 1 > MAX_FUNCTION_LINES:
                found.append((start, name, line - start + 1))
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    root = os.path.abspath(parser.parse_args().root)
    files = sorted(os.path.relpath(os.path.join(d, f), root)
                   for folder in FOLDERS for d, _, names in os.walk(os.path.join(root, folder))
                   for f in names)
    problems = []
    for rel in files:
        if not rel.endswith(EXTENSIONS):
            continue
        path = os.path.join(root, rel)
        nlines = open(path, encoding="utf-8", errors="replace").read().count("\n")
        if nlines > MAX_FILE_LINES:
            problems.append(f"{rel}: {nlines} lines (at most {MAX_FILE_LINES})")
        for start, name, length in long_functions(path):
            problems.append(f"{rel}:{start}: {name} is {length} lines (at most "
                            f"{MAX_FUNCTION_LINES})")
    for p in problems:
        print(p)
    if problems:
        print(f"check_sizes: {len(problems)} file(s) or function(s) too long")
        return 1
    print(f"check_sizes: no file over {MAX_FILE_LINES} lines, no function over "
          f"{MAX_FUNCTION_LINES}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
