#!/usr/bin/env python3
"""The house's rules for includes, checked over the product code (CTest runs it as `layout`).

Rooms are stacked: base <- formats <- spmv <- solver <- network <- app <- api (the installed
library, docs/cpp-api.md), bench beside app, python (the modules over api) beside api.
A file may include its own room and the rooms below it, never one above (no back arrows), and
no two units include each other, directly or through a longer cycle: a unit is a header with
its sources (solver/solver.hpp + solver.cpp; ic0.cpp + ic0_gpu.cu + ic0_gpu.hpp are two units,
ic0 and ic0_gpu), so that solver.cpp calling a chooser whose header needs solver.hpp is a cycle.

And every room stays readable at once: no source file over 1,000 lines, no function over 100
(functions are found by universal-ctags where it is installed; without it that part is skipped
and says so). A kernel whose body cannot be split without cost is named in LONG_KERNELS with
the reason.

    scripts/check-layout.py [ROOT]      exit 1 and a line per breach
"""
import os
import re
import shutil
import subprocess
import sys

ORDER = ["base", "formats", "spmv", "solver", "network", "app", "api"]
RANK = {room: i for i, room in enumerate(ORDER)}
RANK["bench"] = RANK["app"]
RANK["python"] = RANK["api"]
SOURCES = (".cpp", ".hpp", ".cu", ".cuh", ".h")
PRODUCT = ["base", "formats", "spmv", "solver", "network", "app", "api", "python"]
MAX_FILE_LINES = 1000
MAX_FUNCTION_LINES = 100
# Kernels left long on purpose: name -> why.
LONG_KERNELS = {}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def product_files(root):
    for room in RANK:
        for folder, _, names in os.walk(os.path.join(root, room)):
            for name in names:
                if name.endswith(SOURCES):
                    yield os.path.relpath(os.path.join(folder, name), root)


def resolve(root, including, target):
    """The repository path an include names: relative to the root, else to the including file."""
    for candidate in (target, os.path.join(os.path.dirname(including), target)):
        candidate = os.path.normpath(candidate)
        if os.path.isfile(os.path.join(root, candidate)):
            return candidate
    return None


def size_breaches(root):
    out = []
    files = [f for f in product_files(root) if f.split(os.sep)[0] in PRODUCT]
    for path in sorted(files):
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            lines = sum(1 for _ in f)
        if lines > MAX_FILE_LINES:
            out.append(f"{path}: {lines} lines (at most {MAX_FILE_LINES})")
    if not shutil.which("ctags"):
        print("check-layout: no ctags here, function lengths not checked")
        return out
    tags = subprocess.run(
        ["ctags", "--fields=+ne", "--kinds-c++=f", "--language-force=c++", "-x",
         "--_xformat=%{end} %{line} %{input} %{name}", "-f", "-"] + files,
        cwd=root, capture_output=True, text=True, check=False).stdout
    for row in tags.splitlines():
        parts = row.split()
        if len(parts) != 4 or not parts[0].isdigit():
            continue
        length = int(parts[0]) - int(parts[1]) + 1
        if length > MAX_FUNCTION_LINES and parts[3] not in LONG_KERNELS:
            out.append(f"{parts[2]}:{parts[1]}: {parts[3]} is {length} lines "
                       f"(at most {MAX_FUNCTION_LINES})")
    return out


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    graph = {}
    for path in product_files(root):
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            text = f.read()
        graph[path] = {r for r in (resolve(root, path, t) for t in INCLUDE.findall(text)) if r}
    breaches = []
    for path, includes in sorted(graph.items()):
        room = path.split(os.sep)[0]
        for inc in sorted(includes):
            inc_room = inc.split(os.sep)[0]
            if inc_room in RANK and RANK[inc_room] > RANK[room]:
                breaches.append(f"{path} includes {inc}: {room}/ is below {inc_room}/")
    # Cycles between units: a depth-first search that reports each back edge once.
    units = {}
    for path, includes in graph.items():
        unit = os.path.splitext(path)[0]
        units.setdefault(unit, set()).update(os.path.splitext(i)[0] for i in includes)
        units[unit].discard(unit)
    graph = units
    state = {}

    def visit(node, stack):
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycle = stack[stack.index(nxt):] + [nxt]
                breaches.append("include cycle: " + " -> ".join(cycle))
            elif nxt in graph and not state.get(nxt):
                visit(nxt, stack)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if not state.get(node):
            visit(node, [])
    breaches += size_breaches(root)
    for line in breaches:
        print(line)
    print(f"check-layout: {len(graph)} units, {len(breaches)} breaches")
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main())
