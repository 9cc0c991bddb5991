#!/usr/bin/env python3
"""Compare two EPANET binary output files (.out) field by field.

    scripts/compare_epanet_out.py REFERENCE.out CANDIDATE.out [--rel 1e-6] [--quality-rel 1e-4]
                                  [--skip-quality] [--quiet]

REFERENCE is EPANET's (runepanet's), CANDIDATE netsolve's (--out). Integers, codes, IDs and
titles must be equal; floats equal within --rel (default 1e-6) of the larger magnitude: the same
float32, or one rounding apart, where both programs computed the same doubles. The input file's
name in the prolog is not compared (each run names its own path). The water quality floats (node
and link quality, reaction rates, the epilog's network reaction rates) are compared within
--quality-rel relative (default 1e-6, as --rel: netsolve routes quality on the hydraulics rounded
to float32 as runepanet does; 1e-4 for a quality routed on the doubles, as EPANET's EN_runQ beside
EN_runH) or 1e-6 absolute. --skip-quality leaves the quality fields (flag, trace
node, chemical, units, values) out, for a candidate run with --no-quality. --loose T also accepts floats within T relative or absolute (for runs whose
hydraulics are not EPANET's to the last bit). Prints one line (and the first differences unless
--quiet); exit 0 equal, 1 different, 2 unreadable.
"""
import argparse
import array
import gzip
import sys

MAGIC = 516114521
NODE_FIELDS = ["demand", "head", "pressure", "quality"]
LINK_FIELDS = ["flow", "velocity", "headloss", "link quality", "status", "setting",
               "reaction rate", "friction"]
QUALITY_FIELDS = {"quality", "link quality", "reaction rate"}


def read_out(path):
    with open(path, "rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    with (gzip.open if gz else open)(path, "rb") as f:
        data = f.read()
    pos = 0

    def take(code, n=1):
        nonlocal pos
        a = array.array(code)
        size = a.itemsize * n
        if pos + size > len(data):
            raise ValueError(f"{path}: ends before its records do")
        a.frombytes(data[pos:pos + size])
        pos += size
        return list(a)

    def text(n):
        nonlocal pos
        s = data[pos:pos + n]
        pos += n
        return s

    out = {}
    prolog = take("i", 15)
    if prolog[0] != MAGIC:
        raise ValueError(f"{path}: not an EPANET output file")
    out["prolog"] = prolog
    nodes, tanks, links, pumps = prolog[2], prolog[3], prolog[4], prolog[5]
    out["title"] = [text(80) for _ in range(3)]
    out["files"] = [text(260), text(260)]
    out["chemical"], out["quality_units"] = text(32), text(32)
    out["node_ids"] = [text(32) for _ in range(nodes)]
    out["link_ids"] = [text(32) for _ in range(links)]
    for key in ["link_from", "link_to", "link_type"]:
        out[key] = take("i", links)
    out["tank_nodes"], out["tank_areas"] = take("i", tanks), take("f", tanks)
    out["elevations"], out["lengths"], out["diameters"] = take("f", nodes), take("f", links), take("f", links)
    out["energy_links"], out["energy"] = [], []
    for _ in range(pumps):
        out["energy_links"] += take("i")
        out["energy"] += take("f", 6)
    out["demand_charge"] = take("f")
    per = 4 * nodes + 8 * links
    rest = len(data) - pos - 28
    if rest < 0 or rest % (4 * per):
        raise ValueError(f"{path}: periods do not fill whole records")
    out["periods"] = [take("f", per) for _ in range(rest // (4 * per))]
    out["reactions"] = take("f", 4)
    out["period_count"], out["warning"], out["end_magic"] = take("i", 3)
    out["nodes"], out["links"] = nodes, links
    return out


def compare(ref, cand, rel, skip_quality, loose=None, quality_rel=1e-4):
    """Every difference found, as lines ("name[i]: reference against candidate")."""
    diffs = []
    worst = {}
    fields = set()  # the kinds of values that differ ("link friction", "prolog", ...)

    def check(name, a, b, quality=False):
        if len(a) != len(b):
            diffs.append(f"{name}: {len(a)} values against {len(b)}")
            return
        bad = 0
        for i, (x, y) in enumerate(zip(a, b)):
            if x == y:
                continue
            if isinstance(x, float) and isinstance(y, float):
                d = abs(x - y) / max(abs(x), abs(y))
                worst[name] = max(worst.get(name, 0.0), d)
                if d <= rel or (x != x and y != y):
                    continue
                if quality and (d <= quality_rel or abs(x - y) <= 1e-6):
                    continue
                if loose is not None and abs(x - y) <= loose * max(1.0, abs(x), abs(y)):
                    continue
            bad += 1
            fields.add(name.split(" ", 2)[2] if name.startswith("period ") else name)
            if bad <= 3:
                diffs.append(f"{name}[{i}]: {x!r} against {y!r}")
        if bad > 3:
            diffs.append(f"{name}: {bad} values differ")

    p_ref, p_cand = list(ref["prolog"]), list(cand["prolog"])
    if skip_quality:
        p_ref[7:9] = p_cand[7:9]
    check("prolog", p_ref, p_cand)
    check("title", ref["title"], cand["title"])
    check("report file", ref["files"][1:], cand["files"][1:])
    if not skip_quality:
        check("chemical", [ref["chemical"]], [cand["chemical"]])
        check("quality units", [ref["quality_units"]], [cand["quality_units"]])
    for key in ["node_ids", "link_ids", "link_from", "link_to", "link_type", "tank_nodes",
                "tank_areas", "elevations", "lengths", "diameters", "energy_links", "energy",
                "demand_charge"]:
        check(key, ref[key], cand[key])
    n, m = ref["nodes"], ref["links"]
    if len(ref["periods"]) != len(cand["periods"]):
        diffs.append(f"periods: {len(ref['periods'])} against {len(cand['periods'])}")
    else:
        for p, (a, b) in enumerate(zip(ref["periods"], cand["periods"])):
            for j, name in enumerate(NODE_FIELDS):
                if not (skip_quality and name in QUALITY_FIELDS):
                    check(f"period {p} node {name}", a[j * n:(j + 1) * n], b[j * n:(j + 1) * n],
                          name in QUALITY_FIELDS)
            for j, name in enumerate(LINK_FIELDS):
                o = 4 * n + j * m
                if not (skip_quality and name in QUALITY_FIELDS):
                    check(f"period {p} link {name}", a[o:o + m], b[o:o + m], name in QUALITY_FIELDS)
    if not skip_quality:
        check("reactions", ref["reactions"], cand["reactions"], True)
    for key in ["period_count", "warning", "end_magic"]:
        check(key, [ref[key]], [cand[key]])
    return diffs, max(worst.values(), default=0.0), sorted(fields)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("reference")
    ap.add_argument("candidate")
    ap.add_argument("--rel", type=float, default=1e-6)
    ap.add_argument("--loose", type=float,
                    help="also accept floats within this, relative or absolute (e.g. 1e-3: "
                         "netsolve --reference's tolerance), for runs whose hydraulics differ")
    ap.add_argument("--quality-rel", type=float, default=1e-6)
    ap.add_argument("--skip-quality", action="store_true",
                    help="leave the water quality fields out (a candidate run with --no-quality)")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args()
    try:
        ref, cand = read_out(args.reference), read_out(args.candidate)
    except (OSError, ValueError) as e:
        print(f"unreadable: {e}")
        return 2
    skip_quality = args.skip_quality
    diffs, worst, fields = compare(ref, cand, args.rel, skip_quality, args.loose, args.quality_rel)
    what = (f"{ref['period_count']} periods, {ref['nodes']} nodes, {ref['links']} links, "
            f"largest relative float difference {worst:.2g}")
    if skip_quality:
        what += ", quality fields skipped"
    if fields:
        what += "; differing: " + ", ".join(fields)
    print(("equal" if not diffs else f"DIFFERENT ({len(diffs)})") + ": " + what)
    if not args.quiet:
        for d in diffs[:40]:
            print("  " + d)
    return 0 if not diffs else 1


if __name__ == "__main__":
    sys.exit(main())
