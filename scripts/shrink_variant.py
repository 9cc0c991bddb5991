#!/usr/bin/env python3
"""Shrinks a network on which netsolve differs from EPANET to a smaller one that still differs
(issue 29: reproducers for regression tests).

  scripts/shrink_variant.py (--inp FILE | --seed S --only I [--networks ...]) --out FILE
                            [--netsolve ...] [--epanet ...] [--data ...]

Greedy, one line at a time, keeping every cut after which netsolve still differs from EPANET
(the comparison of scripts/diff_epanet.py: heads, tank levels, flows, statuses at every reporting
time) and EPANET still runs without error: the DURATION is cut to the first differing reporting
time, then each [CONTROLS] and [RULES] line (a rule as a whole), each [STATUS] line and each
[PATTERNS] line not needed by the rest is dropped. The network itself (nodes and links) is kept:
removing those changes the hydraulics everywhere. Writes the smallest file that still differs.
"""
import argparse
import os
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import diff_epanet as de  # noqa: E402


def outcome(args, text):
    """(differs, first differing time) of netsolve against EPANET on `text`."""
    work = tempfile.mkdtemp(prefix="shrink.")
    try:
        inp = os.path.join(work, "net.inp")
        with open(inp, "w", encoding="latin-1") as f:
            f.write(text)
        for d in ("epanet", "netsolve"):
            os.makedirs(os.path.join(work, d))
        erc, _ = de.run([args.epanet, inp, "--runs", "1", "--nodes", work + "/epanet/nodes.csv",
                         "--links", work + "/epanet/links.csv"], args.timeout)
        if erc != 0:
            return False, None
        nrc, _ = de.run([args.netsolve, "--network", inp, "--quiet", "--nodes",
                         work + "/netsolve/nodes.csv", "--links", work + "/netsolve/links.csv"],
                        args.timeout)
        if nrc not in (0, 5):
            return True, 0
        diffs, _ = de.compare(text, work + "/epanet", work + "/netsolve")
        return de.differs(diffs), diffs.get("first_time")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def rule_blocks(inp):
    """[RULES] as blocks of line indices, one per RULE."""
    blocks, current = [], None
    for i, fields, _ in inp.data_lines("RULES"):
        if fields[0].upper() == "RULE":
            current = [i]
            blocks.append(current)
        elif current is not None:
            current.append(i)
    return blocks


def without(text, section, indices):
    inp = de.Inp(text)
    lines = inp.section(section)
    for i in sorted(indices, reverse=True):
        del lines[i]
    return inp.text()


def shrink(args, text):
    ok, first = outcome(args, text)
    if not ok:
        sys.exit("shrink_variant: netsolve does not differ from EPANET on this network")
    # The duration: up to the first differing reporting time.
    if first:
        inp = de.Inp(text)
        inp.set_option("TIMES", ["DURATION"], de.hms(first / 3600.0))
        shorter = inp.text()
        ok, t = outcome(args, shorter)
        if ok:
            text, first = shorter, t
            print("duration cut to %s" % de.hms(first / 3600.0))
    # Lines and rules, one at a time, from the end (indices stay valid before the cut).
    for section in ("CONTROLS", "STATUS", "PATTERNS"):
        for i, fields, _ in reversed(list(de.Inp(text).data_lines(section))):
            if section == "PATTERNS" and re.search(r"\b%s\b" % re.escape(fields[0]),
                                                   without(text, section, [i])):
                continue  # still named elsewhere
            candidate = without(text, section, [i])
            ok, _ = outcome(args, candidate)
            if ok:
                text = candidate
                print("dropped [%s] %s" % (section, " ".join(fields)))
    for block in reversed(rule_blocks(de.Inp(text))):
        candidate = without(text, "RULES", block)
        ok, _ = outcome(args, candidate)
        if ok:
            text = candidate
            print("dropped a rule (%d lines)" % len(block))
    return text


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--inp")
    p.add_argument("--seed", type=int, default=29)
    p.add_argument("--only", type=int)
    p.add_argument("--networks", default=",".join(de.DEFAULT_NETWORKS))
    p.add_argument("--netsolve", default=os.path.join(de.ROOT, "build/app/netsolve"))
    p.add_argument("--epanet", default=os.path.join(de.ROOT, "../shared/tools/epanet/epanet-run"))
    p.add_argument("--data", default=os.path.join(de.ROOT, "../shared/data/networks"))
    p.add_argument("--timeout", type=int, default=300)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    if args.inp:
        with open(args.inp, encoding="latin-1") as f:
            text = f.read()
    elif args.only is not None:
        text = de.make_variant(args.data, args.networks.split(","), args.seed, args.only)[1]
    else:
        sys.exit("shrink_variant: give --inp FILE or --only I")
    text = shrink(args, text)
    with open(args.out, "w", encoding="latin-1") as f:
        f.write(text)
    print("shrink_variant: %s (%d lines)" % (args.out, text.count("\n")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
