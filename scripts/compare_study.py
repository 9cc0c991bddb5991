#!/usr/bin/env python3
"""Compare a netsolve study CSV (netsolve --study ... --study-csv) with epanet-scenarios' CSV.

    scripts/compare_study.py NETSOLVE.csv EPANET.csv [--tol 1e-3] [--quiet]

Rows are matched by element (the baseline row, scenario 0, has no counterpart). Per scenario the
ok flag must be equal; for scenarios EPANET solved, min_pressure and element_pressure must agree
within --tol, absolute or relative (the larger of the two allowances: DDA pressures of a dead end
under fire flow reach -4.6e6 psi), and min_node must be equal, unless the pressures at the two
nodes differ by less than --tol (a tie: the CSVs do not hold the other node's pressure, so a
different node with the same minimum within --tol counts as a tie). Pressures of junctions cut
off from every reservoir and tank are set by closed links' 1e-8 couplings, not by the network,
and differ between solvers and trial paths (netsolve --reference skips cut-off junctions the same
way): a scenario compares only the ok flag when netsolve's lowest junction was cut off
(min_cut_off = 1), or when junctions were cut off (cut_off > 0) and the two lowest junctions
differ (EPANET's may be one of them; with an older CSV without min_cut_off, any cut_off > 0). Prints one line (and the
first mismatches), exits 0 when everything matches, 1 otherwise, 2 on bad input.
"""
import argparse
import csv
import math
import sys


def read_rows(path):
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        sys.exit(f"compare_study.py: {path}: {e}")
    need = {"scenario", "element", "ok", "min_pressure", "min_node", "element_pressure"}
    if not rows or not need <= set(rows[0]):
        print(f"compare_study.py: {path}: not a study CSV (columns {sorted(need)})", file=sys.stderr)
        sys.exit(2)
    return rows


def number(text):
    return float(text) if text not in ("", None) else math.nan


def close(a, b, tol):
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= tol * max(1.0, abs(b))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("netsolve")
    ap.add_argument("epanet")
    ap.add_argument("--tol", type=float, default=1e-3)
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args()
    ours = {r["element"]: r for r in read_rows(a.netsolve) if r["scenario"] != "0"}
    theirs = read_rows(a.epanet)
    problems, worst, worst_at, ties, compared, undetermined = [], 0.0, "", 0, 0, 0
    for e in theirs:
        o = ours.get(e["element"])
        if o is None:
            problems.append(f"{e['element']}: not in {a.netsolve}")
            continue
        compared += 1
        if o["ok"] != e["ok"]:
            problems.append(f"{e['element']}: ok {o['ok']} (EPANET {e['ok']})")
            continue
        if e["ok"] != "1":
            continue
        some_cut_off = o.get("cut_off", "0") not in ("0", "")
        if o.get("min_cut_off", "1" if some_cut_off else "0") != "0" or (
                some_cut_off and o["min_node"] != e["min_node"]):
            undetermined += 1
            continue
        for column in ("min_pressure", "element_pressure"):
            x, y = number(o[column]), number(e[column])
            if not close(x, y, a.tol):
                problems.append(f"{e['element']}: {column} {x:.10g} (EPANET {y:.10g})")
            elif not math.isnan(x):
                d = abs(x - y) / max(1.0, abs(y))
                if d > worst:
                    worst, worst_at = d, f"{e['element']} {column}"
        if o["min_node"] != e["min_node"]:
            if close(number(o["min_pressure"]), number(e["min_pressure"]), a.tol):
                ties += 1
            else:
                problems.append(f"{e['element']}: min_node {o['min_node']} (EPANET {e['min_node']})")
    status = "match" if not problems else f"MISMATCH ({len(problems)})"
    print(f"{a.netsolve} vs {a.epanet}: {compared} scenarios, largest pressure difference "
          f"{worst:.3g} ({worst_at or '-'}), {ties} min-node ties, {undetermined} whose lowest junction "
          f"is or may be cut off (ok flag only): {status}")
    if not a.quiet:
        for p in problems[:10]:
            print("  " + p)
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
