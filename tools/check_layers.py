#!/usr/bin/env python3
"""Checks that every #include in the library goes down the layers (or stays
inside one layer). The order is the one src/CMakeLists.txt builds:

    base < bootstrap < topo < transports < collectives < comm

Public headers (include/weft) may be included from anywhere. Tools, perf
programs, tests and integrations sit above the library and are not checked.
Prints each violation as file:line and exits 1 when there is any."""

import argparse
import os
import re
import sys

# Folder (relative to the repository root) -> layer index, and the include
# prefix that names the same folder (includes are written from src/ or from
# the root).
LAYERS = [
    ("base", ["src/base"]),
    ("bootstrap", ["src/bootstrap"]),
    ("topo", ["src/topo"]),
    ("transports", ["transports"]),
    ("collectives", ["collectives"]),
    ("comm", ["src/core", "src/device"]),
]
# How an #include names a folder: "core/comm.h" is src/core, "transports/..."
# is the root's transports.
INCLUDE_ROOTS = ["src", "."]
SOURCE_EXT = (".h", ".cc", ".cu", ".cuh", ".hpp", ".cpp")
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def layer_of(path):
    """Layer index of a repository-relative path, or None outside the library."""
    best = None
    for index, (_, folders) in enumerate(LAYERS):
        for folder in folders:
            if path == folder or path.startswith(folder + "/"):
                if best is None or len(folder) > len(best[1]):
                    best = (index, folder)
    return None if best is None else best[0]


def resolve(root, including_dir, name):
    """The repository-relative path an #include "name" reaches, or None."""
    for base in [including_dir] + INCLUDE_ROOTS:
        candidate = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(os.path.join(root, candidate)):
            return candidate
    return None


def check(root):
    violations = []
    for _, folders in LAYERS:
        for folder in folders:
            for dirpath, _, files in os.walk(os.path.join(root, folder)):
                for fname in sorted(files):
                    if not fname.endswith(SOURCE_EXT):
                        continue
                    full = os.path.join(dirpath, fname)
                    rel = os.path.relpath(full, root)
                    mine = layer_of(rel)
                    with open(full, encoding="utf-8", errors="replace") as f:
                        for lineno, line in enumerate(f, 1):
                            m = INCLUDE_RE.match(line)
                            if not m:
                                continue
                            target = resolve(root, os.path.dirname(rel), m.group(1))
                            if target is None:
                                if m.group(1).startswith("weft/"):
                                    continue  # a public header under include/
                                violations.append(
                                    f"{rel}:{lineno}: #include \"{m.group(1)}\" names no file "
                                    "of the repository")
                                continue
                            theirs = layer_of(target)
                            if theirs is not None and theirs > mine:
                                violations.append(
                                    f"{rel}:{lineno}: #include \"{m.group(1)}\": layer "
                                    f"'{LAYERS[mine][0]}' may not include layer "
                                    f"'{LAYERS[theirs][0]}' above it")
    return violations


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."),
                        help="repository root (default: this script's)")
    args = parser.parse_args()
    violations = check(os.path.abspath(args.root))
    for v in violations:
        print(v)
    if violations:
        print(f"check_layers: {len(violations)} include(s) go up a layer "
              "(docs/architecture.md lists the layers)")
        return 1
    print("check_layers: every include goes down the layers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
