#!/usr/bin/env python3
"""Cuts an EPANET .inp network down to a small connected piece, as a fuzz seed (tests/fuzz/corpus/fuzz_inp).

    scripts/cut_inp_seeds.py NETWORK.inp OUT.inp [--nodes 12] [--rules 3] [--controls 4]
                             [--pda] [--emitters] [--duration H:MM]

The piece keeps what the fuzzer should start from: a source (the first reservoir or tank), every
element that the first few controls and rules name, and the shortest path from the source to each
(so the piece is connected: a seed the reader refuses at check_connectivity teaches nothing about
the sections after it); then neighbours up to --nodes. Links between kept nodes stay; patterns,
curves, demands, emitters, statuses, controls, rules and [ENERGY] lines stay when every element
they name stays; [TIMES] and [OPTIONS] stay whole. Comments, coordinates, vertices, labels, tags and
water-quality sections go. --pda adds EPANET 2.2's pressure-driven options, --emitters an emitter
on two junctions (no shared network has either); --duration replaces the DURATION of [TIMES] (a
steady-state network's controls only act over time).
"""
import argparse
import collections
import re

NODE_SECTIONS = ("JUNCTIONS", "RESERVOIRS", "TANKS")
LINK_SECTIONS = ("PIPES", "PUMPS", "VALVES")
KEPT_WHOLE = ("TIMES", "OPTIONS")
DROPPED = ("COORDINATES", "VERTICES", "LABELS", "TAGS", "BACKDROP", "QUALITY", "SOURCES",
           "REACTIONS", "MIXING", "REPORT", "ROUGHNESS", "LEAKAGE")
OBJECT_WORDS = ("NODE", "JUNCTION", "RESERVOIR", "TANK", "LINK", "PIPE", "PUMP", "VALVE")


def read_sections(path):
    text = open(path, "rb").read().decode("latin-1").replace("\r\n", "\n").replace("\r", "\n")
    sections = collections.OrderedDict()
    name = None
    for raw in text.split("\n"):
        line = raw.split(";", 1)[0].strip()
        if not line:
            continue
        match = re.match(r"\[(\w+)", line)
        if match:
            name = match.group(1).upper()
            sections.setdefault(name, [])
        elif name is not None:
            sections[name].append(line.split())
    return sections


def named_objects(tokens):
    """The ids a control or rule line names: the word after NODE/LINK/PUMP/..."""
    ids = []
    for i, word in enumerate(tokens[:-1]):
        if word.upper() in OBJECT_WORDS:
            ids.append(tokens[i + 1])
    return ids


def rule_blocks(lines):
    blocks = []
    for tokens in lines:
        if tokens[0].upper() == "RULE":
            blocks.append([])
        if blocks:
            blocks[-1].append(tokens)
    return blocks


def choose_nodes(sections, links, wanted_ids, max_nodes):
    adjacency = collections.defaultdict(list)
    for a, b in links.values():
        adjacency[a].append(b)
        adjacency[b].append(a)
    sources = [t[0] for s in ("RESERVOIRS", "TANKS") for t in sections.get(s, [])]
    root = sources[0]
    parent, order = {root: None}, [root]
    for node in order:  # breadth-first from the source: order grows as we go
        for other in adjacency[node]:
            if other not in parent:
                parent[other] = node
                order.append(other)
    kept = set()
    for node in wanted_ids:
        while node is not None and node in parent and node not in kept:
            kept.add(node)
            node = parent[node]
    kept.add(root)
    for node in order:  # the nearest neighbours, up to the size asked
        if len(kept) >= max_nodes:
            break
        if parent[node] in kept or parent[node] is None:
            kept.add(node)
    return kept


def cut(sections, max_nodes, max_rules, max_controls):
    links = {t[0]: (t[1], t[2]) for s in LINK_SECTIONS for t in sections.get(s, [])}
    controls = sections.get("CONTROLS", [])[:max_controls]
    rules = rule_blocks(sections.get("RULES", []))[:max_rules]
    wanted = [i for t in controls for i in named_objects(t)]
    wanted += [i for block in rules for t in block for i in named_objects(t)]
    wanted += [i for t in sections.get("PUMPS", [])[:2] for i in (t[0],)]
    wanted_nodes = []
    for object_id in wanted:
        wanted_nodes += list(links.get(object_id, (object_id,)))
    nodes = choose_nodes(sections, links, wanted_nodes, max_nodes)
    kept_links = {i for i, (a, b) in links.items() if a in nodes and b in nodes}
    elements = nodes | kept_links

    def all_kept(tokens):
        return all(i in elements for i in named_objects(tokens))

    out = collections.OrderedDict()
    for name in NODE_SECTIONS:
        out[name] = [t for t in sections.get(name, []) if t[0] in nodes]
    for name in LINK_SECTIONS:
        out[name] = [t for t in sections.get(name, []) if t[0] in kept_links]
    for name in ("DEMANDS", "EMITTERS", "STATUS"):
        out[name] = [t for t in sections.get(name, []) if t[0] in elements][:6]
    out["CONTROLS"] = [t for t in controls if all_kept(t)]
    out["RULES"] = [t for block in rules if all(all_kept(t) for t in block) for t in block]
    out["ENERGY"] = [t for t in sections.get("ENERGY", [])
                     if t[0].upper() != "PUMP" or t[1] in kept_links]
    words = {w for s in out.values() for t in s for w in t}
    words |= {t[-1] for t in sections.get("OPTIONS", []) if t[0].upper() == "PATTERN"}
    words.add("1")  # EPANET's default pattern id
    # Patterns: their first two lines (a pattern continues over lines), curves whole.
    seen = collections.Counter()
    out["PATTERNS"] = []
    for t in sections.get("PATTERNS", []):
        if t[0] in words and seen[t[0]] < 2:
            seen[t[0]] += 1
            out["PATTERNS"].append(t)
    out["CURVES"] = [t for t in sections.get("CURVES", []) if t[0] in words]
    for name in KEPT_WHOLE:
        out[name] = sections.get(name, [])
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("network")
    parser.add_argument("out")
    parser.add_argument("--nodes", type=int, default=12)
    parser.add_argument("--rules", type=int, default=3)
    parser.add_argument("--controls", type=int, default=4)
    parser.add_argument("--pda", action="store_true")
    parser.add_argument("--emitters", action="store_true")
    parser.add_argument("--duration")
    args = parser.parse_args()
    sections = read_sections(args.network)
    out = cut(sections, args.nodes, args.rules, args.controls)
    if args.pda:
        out["OPTIONS"] = [t for t in out["OPTIONS"] if t[0].upper() not in ("DEMAND", "MINIMUM", "REQUIRED", "PRESSURE")]
        out["OPTIONS"] += [["DEMAND", "MODEL", "PDA"], ["MINIMUM", "PRESSURE", "0"],
                           ["REQUIRED", "PRESSURE", "20"], ["PRESSURE", "EXPONENT", "0.5"]]
    if args.emitters:
        out["EMITTERS"] += [[t[0], coefficient] for t, coefficient
                            in zip(out["JUNCTIONS"], ("0.5", "2.0"))]
        out["OPTIONS"].append(["EMITTER", "EXPONENT", "0.5"])
    if args.duration:
        out["TIMES"] = [t for t in out["TIMES"] if t[0].upper() != "DURATION"]
        out["TIMES"].insert(0, ["DURATION", args.duration])
    with open(args.out, "w") as f:
        f.write("[TITLE]\ncut from %s by scripts/cut_inp_seeds.py\n" % args.network.split("/")[-1])
        for name, lines in out.items():
            if lines:
                f.write("[%s]\n" % name)
                f.writelines(" ".join(t) + "\n" for t in lines)
        f.write("[END]\n")


if __name__ == "__main__":
    main()
