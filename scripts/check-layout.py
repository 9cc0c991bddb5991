#!/usr/bin/env python3
"""The house's rules for includes, checked over the product code (CTest runs it as `layout`).

Rooms are stacked: base <- formats <- spmv <- solver <- network <- app, and bench beside app.
A file may include its own room and the rooms below it, never one above (no back arrows), and
no two units include each other, directly or through a longer cycle: a unit is a header with
its sources (solver/solver.hpp + solver.cpp; ic0.cpp + ic0_gpu.cu + ic0_gpu.hpp are two units,
ic0 and ic0_gpu), so that solver.cpp calling a chooser whose header needs solver.hpp is a cycle.

    scripts/check-layout.py [ROOT]      exit 1 and a line per breach
"""
import os
import re
import sys

ORDER = ["base", "formats", "spmv", "solver", "network", "app"]
RANK = {room: i for i, room in enumerate(ORDER)}
RANK["bench"] = RANK["app"]
SOURCES = (".cpp", ".hpp", ".cu", ".cuh", ".h")
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
    for line in breaches:
        print(line)
    print(f"check-layout: {len(graph)} units, {len(breaches)} breaches")
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main())
