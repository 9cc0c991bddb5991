#!/usr/bin/env python3
"""Draw a network from its .inp [COORDINATES]/[VERTICES], coloured by a column of a study CSV.

    scripts/plot_study.py NET.inp STUDY.csv [--column element_pressure] [-o map.png]
                          [--vmin V] [--vmax V] [--title TEXT]

STUDY.csv is netsolve --study ... --study-csv (or epanet-scenarios' --csv). Each row's element is
coloured by --column: a fire-flow study's junctions as dots (e.g. element_pressure, the pressure
at the hydrant; available_flow with --residual-pressure), a closure study's pipes as thick
segments (e.g. below_threshold, the junctions cut below the threshold when that pipe is closed;
min_pressure). Links not studied are drawn thin and grey, reservoirs as squares, tanks as
triangles. The colour scale spans the 2nd to 98th percentile of the column unless --vmin/--vmax
are given (demand-driven fire flow at a dead end gives -4.6e6 psi, which would flatten the rest);
values beyond it take the end colours. Needs matplotlib (scripts/setup.sh installs it when it
can: python3-matplotlib). Exit 2 on bad input, naming the file and line.
"""
import argparse
import csv
import math
import sys


def fail(message):
    print(f"plot_study.py: {message}", file=sys.stderr)
    sys.exit(2)


def read_inp(path):
    """Node coordinates and types, link end points and vertices, from the .inp sections."""
    nodes, kinds, links, vertices = {}, {}, {}, {}
    section = None
    try:
        lines = open(path, encoding="latin-1").read().splitlines()
    except OSError as e:
        fail(f"{path}: {e}")
    for number, raw in enumerate(lines, 1):
        line = raw.split(";", 1)[0].strip()
        if not line:
            continue
        if line.startswith("["):
            section = line.upper()
            continue
        f = line.split()
        try:
            if section == "[COORDINATES]" and len(f) >= 3:
                nodes[f[0]] = (float(f[1]), float(f[2]))
            elif section == "[VERTICES]" and len(f) >= 3:
                vertices.setdefault(f[0], []).append((float(f[1]), float(f[2])))
            elif section in ("[JUNCTIONS]", "[RESERVOIRS]", "[TANKS]"):
                kinds[f[0]] = section[1:-1].lower()
            elif section in ("[PIPES]", "[PUMPS]", "[VALVES]") and len(f) >= 3:
                links[f[0]] = (f[1], f[2])
        except ValueError:
            fail(f"{path}:{number}: bad coordinate in {section}: {raw.strip()}")
    if not nodes:
        fail(f"{path}: no [COORDINATES]: the network cannot be drawn")
    return nodes, kinds, links, vertices


def read_column(path, column):
    try:
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            if reader.fieldnames is None or "element" not in reader.fieldnames:
                fail(f"{path}: not a study CSV (no 'element' column)")
            if column not in reader.fieldnames:
                fail(f"{path}: no column '{column}' (columns: {', '.join(reader.fieldnames)})")
            values = {}
            for number, row in enumerate(reader, 2):
                if row.get("scenario") == "0" or row[column] in ("", None):
                    continue  # the baseline row, or nothing measured
                try:
                    values[row["element"]] = float(row[column])
                except ValueError:
                    fail(f"{path}:{number}: '{row[column]}' in column {column} is not a number")
    except OSError as e:
        fail(f"{path}: {e}")
    return values


def percentile(sorted_values, q):
    if not sorted_values:
        return 0.0
    k = (len(sorted_values) - 1) * q
    lo, hi = math.floor(k), math.ceil(k)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (k - lo)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("network")
    ap.add_argument("study_csv")
    ap.add_argument("--column", default="element_pressure")
    ap.add_argument("-o", "--output", default="study.png")
    ap.add_argument("--vmin", type=float)
    ap.add_argument("--vmax", type=float)
    ap.add_argument("--title")
    a = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.collections import LineCollection
    except ImportError:
        fail("needs matplotlib (apt-get install python3-matplotlib; with another python3 first on "
             "PATH, run it as /usr/bin/python3 scripts/plot_study.py ...)")

    nodes, kinds, links, vertices = read_inp(a.network)
    values = read_column(a.study_csv, a.column)
    if not values:
        fail(f"{a.study_csv}: no values in column {a.column}")
    on_nodes = sum(e in nodes for e in values) >= sum(e in links for e in values)
    unknown = [e for e in values if e not in (nodes if on_nodes else links)]
    if len(unknown) == len(values):
        fail(f"{a.study_csv}: its elements are neither nodes nor links of {a.network} "
             "(a demand study has no element to map)")
    ordered = sorted(values.values())
    vmin = a.vmin if a.vmin is not None else percentile(ordered, 0.02)
    vmax = a.vmax if a.vmax is not None else percentile(ordered, 0.98)
    if vmax <= vmin:
        vmax = vmin + 1.0

    def path_of(link):
        n1, n2 = links[link]
        if n1 not in nodes or n2 not in nodes:
            return None
        return [nodes[n1]] + vertices.get(link, []) + [nodes[n2]]

    fig, ax = plt.subplots(figsize=(10, 8))
    background = [p for k in links if (on_nodes or k not in values) and (p := path_of(k))]
    ax.add_collection(LineCollection(background, colors="0.75", linewidths=0.6, zorder=1))
    norm = plt.Normalize(vmin, vmax)
    cmap = plt.get_cmap("viridis")
    if on_nodes:
        xs, ys, cs = zip(*[(nodes[e][0], nodes[e][1], v) for e, v in values.items() if e in nodes])
        mapped = ax.scatter(xs, ys, c=cs, cmap=cmap, norm=norm, s=14, zorder=3, linewidths=0)
    else:
        studied = [(p, v) for k, v in values.items() if k in links and (p := path_of(k))]
        mapped = LineCollection([p for p, _ in studied], cmap=cmap, norm=norm, linewidths=2.2,
                                zorder=2)
        mapped.set_array([v for _, v in studied])
        ax.add_collection(mapped)
    for kind, marker in (("reservoir", "s"), ("tank", "^")):
        pts = [nodes[n] for n, k in kinds.items() if k == kind and n in nodes]
        if pts:
            ax.scatter(*zip(*pts), marker=marker, s=60, c="black", zorder=4, label=kind + "s")
    ax.autoscale()
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_xticks([])
    ax.set_yticks([])
    bar = fig.colorbar(mapped, ax=ax, shrink=0.8, extend="both")
    bar.set_label(a.column)
    what = "junction" if on_nodes else "closed pipe"
    ax.set_title(a.title or f"{a.network.split('/')[-1]}: {a.column} per {what} "
                 f"({len(values)} scenarios; scale {vmin:.4g} to {vmax:.4g})")
    if any(k in ("reservoir", "tank") for k in kinds.values()):
        ax.legend(loc="best", fontsize=8)
    fig.tight_layout()
    fig.savefig(a.output, dpi=120)
    print(f"plot_study.py: wrote {a.output} ({len(values)} {what}s coloured by {a.column})")


if __name__ == "__main__":
    main()
