#!/usr/bin/env python3
"""Draw a network from its .inp [COORDINATES]/[VERTICES], coloured by a column of a study CSV.

    scripts/plot_study.py NET.inp STUDY.csv [--column element_pressure] [-o map.png]
                          [--vmin V] [--vmax V] [--title TEXT] [--classes auto|nfpa291|none]

STUDY.csv is netsolve --study ... --study-csv (or epanet-scenarios' --csv). Each row's element is
coloured by --column: a fire-flow study's junctions as dots (e.g. element_pressure, the pressure
at the hydrant; available_flow with --residual-pressure), a closure study's pipes as thick
segments (e.g. below_threshold, the junctions cut below the threshold when that pipe is closed;
min_pressure). Links not studied are drawn thin and grey, reservoirs as squares, tanks as
triangles, in a legend. The colour bar names the column's units, read from the .inp's [OPTIONS]
UNITS and PRESSURE as netsolve writes the CSV (pressures in psi for US flow units, m for SI, or
PRESSURE's units; flows in the flow units). --classes nfpa291 (the default for available_flow)
colours hydrants by NFPA 291's classes of the flow available at the residual pressure: AA
(>= 1500 gpm) light blue, A (1000-1499) green, B (500-999) orange, C (< 500) red. The colour scale spans the 2nd to 98th percentile of the column unless --vmin/--vmax
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


US_FLOW = ("CFS", "GPM", "MGD", "IMGD", "AFD")
# Gallons per minute in one unit of each flow unit EPANET knows.
GPM_PER = {"CFS": 448.831, "GPM": 1.0, "MGD": 694.444, "IMGD": 833.952, "AFD": 226.286,
           "LPS": 15.8503, "LPM": 0.264172, "MLD": 183.452, "CMH": 4.40287, "CMD": 0.183453,
           "CMS": 15850.3}
KIND_OF_SECTION = {"[JUNCTIONS]": "junction", "[RESERVOIRS]": "reservoir", "[TANKS]": "tank"}
# NFPA 291's hydrant classes by the flow available at 20 psi residual, gpm: (lowest, class, colour)
NFPA291 = ((1500, "AA (>= 1500 gpm)", "#7ec8f0"), (1000, "A (1000-1499 gpm)", "#2ca02c"),
           (500, "B (500-999 gpm)", "#ff7f0e"), (-math.inf, "C (< 500 gpm)", "#d62728"))


def flow_unit(options):
    """EPANET's flow unit from [OPTIONS] UNITS (its prefix rule; GPM when absent)."""
    word = options.get("UNITS", "GPM").upper()
    for unit in GPM_PER:
        if unit.startswith(word) or word.startswith(unit):
            return unit
    return "GPM"


def column_unit(column, options):
    """The unit netsolve writes a study CSV column in, from the network's [OPTIONS]."""
    flow = flow_unit(options)
    if column in ("min_pressure", "element_pressure"):
        pressure = options.get("PRESSURE", "").upper()
        for name, unit in (("PSI", "psi"), ("KPA", "kPa"), ("MET", "m"), ("BAR", "bar"),
                           ("FEE", "ft")):
            if pressure.startswith(name):
                return unit
        return "psi" if flow in US_FLOW else "m"
    if column == "available_flow":
        return flow
    if column == "deficit_pct":
        return "%"
    return ""


def nfpa291_class(flow, unit):
    """The index in NFPA291 of a hydrant's available flow given in `unit`."""
    gpm = flow * GPM_PER.get(unit, 1.0)
    return next(i for i, (lowest, _, _) in enumerate(NFPA291) if gpm >= lowest)


def read_inp(path):
    """Node coordinates and kinds (junction, reservoir, tank), link end points and vertices, and
    [OPTIONS] (first word upper-cased -> the rest), from the .inp sections."""
    nodes, kinds, links, vertices, options = {}, {}, {}, {}, {}
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
            elif section in KIND_OF_SECTION:
                kinds[f[0]] = KIND_OF_SECTION[section]
            elif section == "[OPTIONS]" and len(f) >= 2:
                options[f[0].upper()] = " ".join(f[1:])
            elif section in ("[PIPES]", "[PUMPS]", "[VALVES]") and len(f) >= 3:
                links[f[0]] = (f[1], f[2])
        except ValueError:
            fail(f"{path}:{number}: bad coordinate in {section}: {raw.strip()}")
    if not nodes:
        fail(f"{path}: no [COORDINATES]: the network cannot be drawn")
    return nodes, kinds, links, vertices, options


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
    ap.add_argument("--classes", choices=("auto", "nfpa291", "none"), default="auto")
    a = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.collections import LineCollection
    except ImportError:
        fail("needs matplotlib (apt-get install python3-matplotlib; with another python3 first on "
             "PATH, run it as /usr/bin/python3 scripts/plot_study.py ...)")

    nodes, kinds, links, vertices, options = read_inp(a.network)
    unit = column_unit(a.column, options)
    classes = a.classes == "nfpa291" or (a.classes == "auto" and a.column == "available_flow")
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
    if on_nodes and classes:
        mapped = None
        for i, (_, label, colour) in enumerate(NFPA291):
            pts = [nodes[e] for e, v in values.items() if e in nodes and nfpa291_class(v, unit) == i]
            if pts:
                ax.scatter(*zip(*pts), c=colour, s=16, zorder=3, linewidths=0, label=label)
    elif on_nodes:
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
    label = f"{a.column} ({unit})" if unit else a.column
    if mapped is not None:
        bar = fig.colorbar(mapped, ax=ax, shrink=0.8, extend="both")
        bar.set_label(label)
    what = "junction" if on_nodes else "closed pipe"
    scale = "NFPA 291 classes" if mapped is None else f"scale {vmin:.4g} to {vmax:.4g} {unit}"
    ax.set_title(a.title or f"{a.network.split('/')[-1]}: {label} per {what} "
                 f"({len(values)} scenarios; {scale})")
    if mapped is None or any(k in ("reservoir", "tank") for k in kinds.values()):
        ax.legend(loc="best", fontsize=8)
    fig.tight_layout()
    fig.savefig(a.output, dpi=120)
    print(f"plot_study.py: wrote {a.output} ({len(values)} {what}s coloured by {a.column})")


if __name__ == "__main__":
    main()
