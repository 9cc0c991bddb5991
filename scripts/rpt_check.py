#!/usr/bin/env python3
"""netsolve's .rpt against EPANET 2.3.5's runepanet, line by line, on the shared networks.

Each network is run as a variant: [REPORT] replaced by the options given (default STATUS YES,
NODES ALL, LINKS ALL), DURATION 24 h, QUALITY NONE (netsolve reports as EPANET does a run
without quality). The lines that carry the date (page header, "Analysis begun/ended") and the
input file's name are left out of the comparison. With --time N, also the best of N runs (one
thread) of runepanet, of netsolve with --rpt and of netsolve without, side by side.

  scripts/rpt_check.py [--build DIR] [--networks a,b] [--report "STATUS YES" ...] [--time N]
                       [--keep DIR]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SHARED = os.path.join(ROOT, "..", "shared")
RUNEPANET = os.path.join(SHARED, "tools", "epanet", "runepanet")
NETWORKS = os.path.join(SHARED, "data", "networks")
DATED = re.compile(r"^(  Page 1 |  Analysis begun |  Analysis ended |      Input Data File )")


def variant(text, report_lines, duration="24:00"):
    """The .inp text with [REPORT] replaced, DURATION set and the quality option removed."""
    out, section = [], None
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("["):
            section = stripped.split("]")[0].upper() + "]"
            if section == "[END]":
                break
            out.append(line)
            if section == "[TIMES]":
                out.append(" DURATION " + duration)
            continue
        key = stripped.split()[0].upper() if stripped.split() else ""
        if section == "[REPORT]":
            continue
        if section == "[TIMES]" and key.startswith("DURA"):
            continue
        if section == "[OPTIONS]" and key.startswith("QUAL"):
            continue
        out.append(line)
    if not any(l.strip().upper().startswith("[TIMES]") for l in out):
        out += ["[TIMES]", " DURATION " + duration]
    out += ["[REPORT]"] + [" " + r for r in report_lines] + ["[END]", ""]
    return "\n".join(out)


def comparable(path):
    with open(path, "rb") as f:
        lines = f.read().decode("latin-1").split("\n")
    return [l for l in lines if not DATED.match(l)]


def best_of(n, cmd):
    best = None
    for _ in range(n):
        t0 = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        t = time.perf_counter() - t0
        best = t if best is None else min(best, t)
    return best


def check(name, netsolve, report_lines, work, runs):
    with open(os.path.join(NETWORKS, name + ".inp"), "rb") as f:
        text = f.read().decode("latin-1")
    inp = os.path.join(work, name + ".inp")
    with open(inp, "w", encoding="latin-1") as f:
        f.write(variant(text, report_lines))
    ref, out = os.path.join(work, name + ".ref.rpt"), os.path.join(work, name + ".rpt")
    binary = os.path.join(work, name + ".out")
    for stale in (ref, out):
        if os.path.exists(stale):
            os.remove(stale)
    subprocess.run([RUNEPANET, inp, ref, binary], stdout=subprocess.DEVNULL)
    run = subprocess.run([netsolve, "--network", inp, "--rpt", out, "--quiet", "--threads", "1"],
                         stderr=subprocess.PIPE, text=True)
    if not os.path.exists(out):
        return name, "netsolve wrote no report (exit %d): %s" % (run.returncode,
                                                                run.stderr.strip()[:200]), None
    a, b = comparable(ref), comparable(out)
    differ = [i for i in range(max(len(a), len(b)))
              if i >= len(a) or i >= len(b) or a[i] != b[i]]
    verdict = "equal (%d lines)" % len(a) if not differ else \
        "%d of %d lines differ, first at %d:\n      epanet:   %r\n      netsolve: %r" % (
            len(differ), len(a), differ[0] + 1, a[differ[0]] if differ[0] < len(a) else None,
            b[differ[0]] if differ[0] < len(b) else None)
    times = None
    if runs:
        base = [netsolve, "--network", inp, "--quiet", "--threads", "1"]
        times = (best_of(runs, [RUNEPANET, inp, ref, binary]),
                 best_of(runs, base + ["--rpt", out]), best_of(runs, base))
    return name, verdict, times


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--networks", default="")
    p.add_argument("--report", nargs="*", default=["STATUS YES", "NODES ALL", "LINKS ALL"])
    p.add_argument("--time", type=int, default=0, help="best of N runs of each (one thread)")
    p.add_argument("--keep", default="")
    args = p.parse_args()
    netsolve = os.path.join(args.build, "app", "netsolve")
    names = args.networks.split(",") if args.networks else sorted(
        f[:-4] for f in os.listdir(NETWORKS) if f.endswith(".inp"))
    work = args.keep or tempfile.mkdtemp(prefix="rpt_check_")
    os.makedirs(work, exist_ok=True)
    equal = 0
    for name in names:
        name, verdict, times = check(name, netsolve, args.report, work, args.time)
        equal += verdict.startswith("equal")
        line = "%-26s %s" % (name, verdict)
        if times:
            e, with_rpt, without = times
            line += "\n      best of %d: runepanet %.3f s, netsolve --rpt %.3f s, without %.3f s " \
                    "(rpt costs %.1f%%; netsolve/runepanet %.2f)" % (
                        args.time, e, with_rpt, without, 100 * (with_rpt - without) / without,
                        with_rpt / e)
        print(line, flush=True)
    print("%d of %d reports equal line by line (dates and file names apart)" % (equal, len(names)))
    return 0 if equal == len(names) else 1


if __name__ == "__main__":
    sys.exit(main())
