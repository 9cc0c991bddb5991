#!/usr/bin/env python3
"""netsolve's water quality against EPANET 2.3.5's (issue 49): random variants of the shared
networks' quality input, both programs run on each, every reporting time compared.

Variant i of seed S depends on (S, i) only (`--only i --print-variant` writes it). What it varies:
the quality type (CHEMICAL most often, AGE, TRACE a random node), bulk reaction order (0, 1, 2,
1.5, 0.5) and coefficient (either sign), LIMITING POTENTIAL, wall order (0, 1) and coefficient, or
ROUGHNESS CORRELATION, per-pipe and per-tank coefficients, tank order, DIFFUSIVITY (0, a multiplier,
a value), TOLERANCE, QUALITY TIMESTEP, [QUALITY] initial values, [SOURCES] (CONCEN, MASS,
SETPOINT, FLOWPACED, with or without a pattern) and [MIXING] (MIXED, 2COMP with a fraction, FIFO,
LIFO). The hydraulics are the network's own; the run is 24 h.

A value matches within 1e-4 relative or 1e-6 absolute (the file's units; AGE in hours). Where
values differ, the link flows are compared too: "hydraulics-differ" where they already differ
(beyond 1e-6 relative: networks whose hydraulic answer EPANET's rounding sets, network/
DIFFERENTIAL.md), "differ" (a failure of the quality engine) otherwise.
    scripts/diff_quality.py --variants 200 --seed 49 --csv out.csv --keep failures/
"""
import argparse
import csv
import gzip
import os
import random
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(ROOT, "..", "shared")
NETWORKS = ["Net1", "Net2", "Net3", "Anytown", "BWSN_Network_1", "Fossolo_FOS", "Hanoi",
            "ky1", "ky2", "ky3", "ky4", "ky5", "ky6", "ky7", "ky14", "C-Town", "Exnet_EXN",
            "RuralNetwork", "Richmond_skeleton", "Wolf-Cordera_wolf-3", "Modena_MOD",
            "Pescara_PES", "ZJ", "Balerma"]
QUALITY_SECTIONS = {"[QUALITY]", "[REACTIONS]", "[SOURCES]", "[MIXING]"}


def read_text(path):
    with open(path, "rb") as f:
        return f.read().decode("latin-1")


def section_lines(text):
    """(section, line) for every line."""
    section = None
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("["):
            section = s.split()[0].upper()
        yield section, line


def element_ids(text, sections):
    ids = []
    for section, line in section_lines(text):
        if section in sections:
            t = line.split(";")[0].split()
            if t and not t[0].startswith("["):
                ids.append(t[0])
    return ids


def pattern_ids(text):
    return sorted(set(element_ids(text, {"[PATTERNS]"})))


def strip_quality(text):
    """The file without its quality sections and quality options."""
    out = []
    for section, line in section_lines(text):
        if section in QUALITY_SECTIONS:
            continue
        t = line.split(";")[0].split()
        if section == "[OPTIONS]" and t and re.match(r"(?i)(QUAL|DIFF|TOLER)", t[0]):
            continue
        if section == "[TIMES]" and t and re.match(r"(?i)QUAL", t[0]):
            continue
        if section == "[END]":
            continue
        out.append(line)
    return "\n".join(out) + "\n"


def variant(text, rng):
    """The quality sections of one variant, appended to the stripped file."""
    junctions = element_ids(text, {"[JUNCTIONS]"})
    tanks = element_ids(text, {"[TANKS]"})
    reservoirs = element_ids(text, {"[RESERVOIRS]"})
    pipes = element_ids(text, {"[PIPES]"})
    patterns = pattern_ids(text)
    nodes = junctions + tanks + reservoirs
    kind = rng.choices(["CHEMICAL", "AGE", "TRACE"], [6, 2, 2])[0]
    opts, times, react, qual, src, mix = [], [], [], [], [], []
    if kind == "CHEMICAL":
        opts.append("QUALITY Chlorine mg/L")
    elif kind == "AGE":
        opts.append("QUALITY AGE")
    else:
        opts.append("QUALITY TRACE " + rng.choice(reservoirs + tanks + junctions[:3]))
    if rng.random() < 0.4:
        opts.append("DIFFUSIVITY " + rng.choice(["0", "0.5", "2", "1.0e-9", "1.5e-8"]))
    if rng.random() < 0.3:
        opts.append("TOLERANCE " + rng.choice(["0", "0.001", "0.05", "0.2"]))
    if rng.random() < 0.6:
        times.append("QUALITY TIMESTEP " + rng.choice(["0:01", "0:02", "0:05", "0:07", "0:10",
                                                        "0:15", "0:30", "1:00"]))
    if kind == "CHEMICAL":
        order = rng.choice(["1", "1", "0", "2", "1.5", "0.5"])
        react.append("ORDER BULK " + order)
        react.append("ORDER WALL " + rng.choice(["0", "1"]))
        react.append("ORDER TANK " + rng.choice(["1", "0", "2"]))
        react.append("GLOBAL BULK %.3g" % rng.uniform(-2.0, 0.5 if order != "0" else 0.05))
        if rng.random() < 0.3:
            react.append("ROUGHNESS CORRELATION %.3g" % rng.uniform(-2, 2))
        else:
            react.append("GLOBAL WALL %.3g" % rng.uniform(-1.5, 0.2))
        if rng.random() < 0.3:
            react.append("LIMITING POTENTIAL %.3g" % rng.uniform(0.1, 4))
        for p in rng.sample(pipes, min(len(pipes), rng.randint(0, 5))):
            react.append("%s %s %.3g" % (rng.choice(["BULK", "WALL"]), p, rng.uniform(-3, 0)))
        for t in rng.sample(tanks, min(len(tanks), rng.randint(0, 2))):
            react.append("TANK %s %.3g" % (t, rng.uniform(-2, 0.1)))
        for n in rng.sample(nodes, min(len(nodes), rng.randint(0, 6))):
            qual.append("%s %.3g" % (n, rng.uniform(0, 2)))
        for n in rng.sample(nodes, min(len(nodes), rng.randint(1, 3))):
            typ = rng.choice(["CONCEN", "MASS", "SETPOINT", "FLOWPACED"])
            strength = rng.uniform(0.2, 4) * (100 if typ == "MASS" else 1)
            pat = rng.choice(patterns) if patterns and rng.random() < 0.4 else ""
            src.append("%s %s %.4g %s" % (n, typ, strength, pat))
    elif kind == "AGE":
        for n in rng.sample(nodes, min(len(nodes), rng.randint(0, 4))):
            qual.append("%s %.3g" % (n, rng.uniform(0, 30)))
    for t in tanks:
        if rng.random() < 0.6:
            m = rng.choice(["MIXED", "2COMP", "FIFO", "LIFO"])
            mix.append("%s %s %s" % (t, m, "%.2f" % rng.uniform(0.1, 0.9) if m == "2COMP" else ""))
    body = strip_quality(text)
    parts = [body, "[OPTIONS]"] + opts + ["[TIMES]"] + times + ["[REACTIONS]"] + react
    parts += ["[QUALITY]"] + qual + ["[SOURCES]"] + src + ["[MIXING]"] + mix + ["[END]"]
    return "\n".join(parts) + "\n"


def load(path):
    with open(path) as f:
        r = csv.reader(f)
        next(r)
        return {(int(a), b, c): float(d) for a, b, c, d in r}


def compare(ns, ep):
    """(mismatches, values, first mismatch)."""
    bad, first = 0, None
    for k, v in ep.items():
        w = ns.get(k)
        if w is not None and (w == v or (w != w and v != v)):  # equal, inf, or NaN as EPANET's
            continue
        if w is None or not (abs(w - v) <= 1e-6 or abs(w - v) <= 1e-4 * abs(v)):
            bad += 1
            if first is None:
                first = (k, w, v)
    return bad, len(ep), first


def run_variant(name, text, work, netsolve, timeout):
    inp = os.path.join(work, name + ".inp")
    with open(inp, "w", encoding="latin-1") as f:
        f.write(text)
    ep_csv, ns_csv = inp + ".ep.csv", inp + ".ns.csv"
    try:  # a NaN concentration never merges: segments pile up, a run can take minutes
        ep = subprocess.run([os.path.join(SHARED, "tools/epanet/epanet-run"), inp, "--runs", "1",
                             "--duration", "86400", "--quality", ep_csv],
                            capture_output=True, text=True, timeout=timeout)
        # epanet-run calls EN_runQ beside EN_runH: the quality on the doubles.
        ns = subprocess.run([netsolve, "--network", inp, "--quiet", "--duration", "24h",
                             "--quality-hydraulics", "doubles", "--quality", ns_csv],
                            capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", "over %d s" % timeout
    if ep.returncode != 0:
        return ("epanet-error" if ns.returncode not in (0, 5) else "epanet-error-only"), ep.stderr
    if ns.returncode not in (0, 5):
        return "netsolve-error", ns.stderr.strip()
    bad, n, first = compare(load(ns_csv), load(ep_csv))
    if bad == 0:
        return "match", ""
    detail = "%d of %d values; first %s" % (bad, n, first)
    flow = flow_difference(inp, work, netsolve)
    if flow > 1e-6:  # the hydraulics differ already (a network whose answer rounding sets)
        return "hydraulics-differ", detail + "; flows differ up to %.2g relative" % flow
    return "differ", detail


def flow_difference(inp, work, netsolve):
    """The largest relative difference of the two programs' link flows (above 1e-6 cfs-ish)."""
    ep_links, ns_links = inp + ".ep_links.csv", inp + ".ns_links.csv"
    subprocess.run([os.path.join(SHARED, "tools/epanet/epanet-run"), inp, "--runs", "1",
                    "--duration", "86400", "--links", ep_links], capture_output=True)
    subprocess.run([netsolve, "--network", inp, "--quiet", "--duration", "24h", "--no-quality",
                    "--links", ns_links], capture_output=True)

    def flows(path):
        with open(path) as f:
            r = csv.reader(f)
            next(r)
            return {(int(x[0]), x[1]): float(x[2]) for x in r}
    a, b = flows(ep_links), flows(ns_links)
    worst = 0.0
    for k, v in a.items():
        if k in b and abs(v) > 1e-5:
            worst = max(worst, abs(b[k] - v) / abs(v))
    for p in (ep_links, ns_links):
        os.remove(p)
    return worst


def main():
    a = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    a.add_argument("--variants", type=int, default=50)
    a.add_argument("--seed", type=int, default=49)
    a.add_argument("--networks", default=",".join(NETWORKS))
    a.add_argument("--only", type=int, default=-1)
    a.add_argument("--print-variant", action="store_true")
    a.add_argument("--netsolve", default=os.path.join(ROOT, "build/app/netsolve"))
    a.add_argument("--csv")
    a.add_argument("--keep", help="folder for the variants that do not match")
    a.add_argument("--timeout", type=int, default=60, help="seconds per program and variant")
    args = a.parse_args()
    networks = args.networks.split(",")
    rows, counts = [], {}
    work = tempfile.mkdtemp(prefix="diff_quality")
    for i in range(args.variants) if args.only < 0 else [args.only]:
        rng = random.Random(args.seed * 1000003 + i)
        net = networks[rng.randrange(len(networks))]
        text = variant(read_text(os.path.join(SHARED, "data/networks", net + ".inp")), rng)
        name = "%s_s%d_v%d" % (net, args.seed, i)
        if args.print_variant:
            sys.stdout.write(text)
            return
        outcome, detail = run_variant(name, text, work, args.netsolve, args.timeout)
        counts[outcome] = counts.get(outcome, 0) + 1
        rows.append((i, net, outcome, detail))
        print("%4d %-22s %-16s %s" % (i, net, outcome, detail if outcome != "match" else ""),
              flush=True)
        if outcome not in ("match", "epanet-error", "timeout") and args.keep:
            os.makedirs(args.keep, exist_ok=True)
            with open(os.path.join(args.keep, name + ".inp"), "w", encoding="latin-1") as f:
                f.write(text)
        for suffix in (".inp", ".inp.ep.csv", ".inp.ns.csv"):
            p = os.path.join(work, name + suffix)
            if os.path.exists(p):
                os.remove(p)
    print("outcomes:", ", ".join("%s %d" % kv for kv in sorted(counts.items())))
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["variant", "network", "outcome", "detail"])
            w.writerows(rows)
    return 0 if counts.get("differ", 0) + counts.get("netsolve-error", 0) == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
