#!/usr/bin/env python3
"""Write a synthetic EPANET network of any size, shaped like a city's all-mains model.

    scripts/generate_network.py --junctions N [--seed S] [-o net.inp] [--spacing 60]
                                [--loops 0.25] [--duration 24]

For scale tests and differential tests beyond the sizes public networks reach (issue 51): EPANET
and netsolve both run the file, so their results can be compared at every reporting time.
The same arguments always give the same file (Python's own random, seeded).

What it builds (SI units: LPS, m, Hazen-Williams):
- Junctions on a jittered square grid `--spacing` m apart, elevations from a smooth terrain
  (two hills and a valley, 0-60 m) plus a little noise.
- Mains: a spanning forest grown breadth-first from the sources over the grid (each junction fed
  from its nearest source), then `--loops` of the remaining grid edges as loops. Diameters from
  the demand each forest edge carries at 0.7 m/s (commercial sizes 100-1200 mm), loop pipes
  100-200 mm; roughness 100-140.
- Sources: one per ~5,000 junctions (at least 2), each a reservoir at ground level feeding the
  grid through a pump with a three-point curve sized for its zone's peak demand and lift.
- Tanks: one per ~10,000 junctions (at least 1), each on a riser pipe from a junction near the
  middle of a zone; its zone's pump is closed above a level and opened below another (simple
  controls), so the tanks fill and drain over the day.
- PRVs: one per ~20,000 junctions (at least 1) on forest edges some way from a source, set to
  35 m of pressure.
- Demands: a log-normal base demand per junction (mean 0.05 L/s), one of two 24-hour patterns
  (residential, with morning and evening peaks; commercial, flat over the working day).
"""
import argparse
import collections
import math
import random
import sys

DIAMETERS_MM = (100, 150, 200, 250, 300, 350, 400, 450, 500, 600, 700, 800, 900, 1000, 1200)
RESIDENTIAL = (0.5, 0.4, 0.35, 0.35, 0.45, 0.8, 1.4, 1.7, 1.5, 1.2, 1.1, 1.05,
               1.1, 1.0, 0.95, 0.95, 1.05, 1.3, 1.6, 1.5, 1.25, 1.0, 0.75, 0.6)
COMMERCIAL = (0.3, 0.3, 0.3, 0.3, 0.3, 0.4, 0.8, 1.4, 1.6, 1.6, 1.6, 1.6,
              1.5, 1.6, 1.6, 1.6, 1.5, 1.3, 0.9, 0.6, 0.4, 0.35, 0.3, 0.3)
VELOCITY = 0.7  # m/s: the velocity the forest's mains are sized for at peak demand
PEAK = 1.7      # peak over average demand


def terrain(x, y, size):
    """Ground elevation, m: two hills and a valley over a field `size` m across."""
    u, v = x / size, y / size
    return (25 + 20 * math.exp(-((u - 0.3) ** 2 + (v - 0.7) ** 2) / 0.05)
            + 15 * math.exp(-((u - 0.75) ** 2 + (v - 0.25) ** 2) / 0.08)
            - 10 * math.exp(-((u - 0.5) ** 2) / 0.02))


def diameter_for(flow_lps, rng):
    """The smallest commercial size carrying flow_lps at VELOCITY or less."""
    need = math.sqrt(4 * flow_lps / 1000 / (math.pi * VELOCITY)) * 1000
    for d in DIAMETERS_MM:
        if d >= need:
            return d
    return DIAMETERS_MM[-1]


class Grid:
    def __init__(self, n, spacing, rng):
        self.side = max(2, math.ceil(math.sqrt(n)))
        self.n = n
        self.spacing = spacing
        size = self.side * spacing
        self.xy = []
        self.elevation = []
        for k in range(n):
            i, j = divmod(k, self.side)
            x = j * spacing + rng.uniform(-0.2, 0.2) * spacing
            y = i * spacing + rng.uniform(-0.2, 0.2) * spacing
            self.xy.append((x, y))
            self.elevation.append(max(0.0, terrain(x, y, size) + rng.uniform(-0.5, 0.5)))

    def neighbours(self, k):
        i, j = divmod(k, self.side)
        for di, dj in ((0, 1), (1, 0), (0, -1), (-1, 0)):
            a, b = i + di, j + dj
            m = a * self.side + b
            if 0 <= a and 0 <= b < self.side and m < self.n:
                yield m

    def edges(self):
        for k in range(self.n):
            for m in self.neighbours(k):
                if k < m:
                    yield k, m


def evenly(count, n, side, rng):
    """count distinct grid positions spread over the field (a coarse lattice, jittered)."""
    per_row = max(1, math.ceil(math.sqrt(count)))
    picks = []
    for c in range(count):
        a, b = divmod(c, per_row)
        i = int((a + 0.5) / per_row * side)
        j = int((b + 0.5) / per_row * side)
        i = min(side - 1, max(0, i + rng.randint(-1, 1)))
        j = min(side - 1, max(0, j + rng.randint(-1, 1)))
        k = min(n - 1, i * side + j)
        while k in picks:
            k = (k + 1) % n
        picks.append(k)
    return picks


def grow_forest(grid, roots):
    """Breadth-first from every root at once: parent per junction, zone (root index), order."""
    parent = [-1] * grid.n
    zone = [-1] * grid.n
    order = []
    queue = collections.deque()
    for z, r in enumerate(roots):
        zone[r] = z
        queue.append(r)
    while queue:
        k = queue.popleft()
        order.append(k)
        for m in grid.neighbours(k):
            if zone[m] < 0:
                zone[m], parent[m] = zone[k], k
                queue.append(m)
    return parent, zone, order


def build(args):
    rng = random.Random(args.seed)
    n = args.junctions
    grid = Grid(n, args.spacing, rng)
    demand = [rng.lognormvariate(math.log(0.05) - 0.5 * 0.6 ** 2, 0.6) for _ in range(n)]
    pattern = [1 if rng.random() < 0.8 else 2 for _ in range(n)]
    sources = evenly(max(2, n // 5000), n, grid.side, rng)
    parent, zone, order = grow_forest(grid, sources)
    carried = demand[:]  # each forest edge carries its subtree's demand
    for k in reversed(order):
        if parent[k] >= 0:
            carried[parent[k]] += carried[k]
    zone_demand = [carried[r] for r in sources]
    return rng, grid, demand, pattern, sources, parent, zone, order, carried, zone_demand


def write(args, out):
    rng, grid, demand, pattern, sources, parent, zone, order, carried, zone_demand = build(args)
    n, side = grid.n, grid.side
    name = lambda k: f"J{k}"
    w = out.write
    w(f"[TITLE]\nsynthetic network: {n} junctions, seed {args.seed} "
      f"(scripts/generate_network.py)\n\n[JUNCTIONS]\n")
    for k in range(n):
        w(f" {name(k)} {grid.elevation[k]:.2f} {demand[k]:.5f} {pattern[k]}\n")
    w("\n[RESERVOIRS]\n")
    for z, r in enumerate(sources):
        w(f" R{z} {max(0.0, grid.elevation[r] - 5):.2f}\n")
    tanks = evenly(max(1, n // 10000), n, side, rng)
    tanks = [t for t in tanks if t not in sources] or [(sources[0] + side // 2) % n]
    w("\n[TANKS]\n")
    for t, k in enumerate(tanks):
        w(f" T{t} {grid.elevation[k] + 30:.2f} 5 0 10 {max(10, int(zone_demand[zone[k]] ** 0.5 * 2))} 0\n")
    w("\n[PIPES]\n")
    prv_edges = set()
    depth = [0] * n  # forest edges from the junction's source
    for k in order:
        if parent[k] >= 0:
            depth[k] = depth[parent[k]] + 1
    far = max(depth) // 3
    candidates = [k for k in order if parent[k] >= 0 and depth[k] >= max(1, far)]
    rng.shuffle(candidates)
    prv_edges.update(candidates[:max(1, n // 20000)])
    pipe = 0
    for k in order:
        if parent[k] >= 0 and k not in prv_edges:
            d = diameter_for(PEAK * carried[k], rng)
            w(f" P{pipe} {name(parent[k])} {name(k)} {args.spacing:.1f} {d} {rng.randint(100, 140)} 0 Open\n")
            pipe += 1
    forest = {(min(k, parent[k]), max(k, parent[k])) for k in range(n) if parent[k] >= 0}
    for a, b in grid.edges():
        if (a, b) not in forest and rng.random() < args.loops:
            w(f" P{pipe} {name(a)} {name(b)} {args.spacing:.1f} {rng.choice((100, 150, 200))} "
              f"{rng.randint(100, 140)} 0 Open\n")
            pipe += 1
    for t, k in enumerate(tanks):
        w(f" RISER{t} {name(k)} T{t} 20 {diameter_for(PEAK * zone_demand[zone[k]] / 2, rng)} 130 0 Open\n")
    w("\n[PUMPS]\n")
    for z, r in enumerate(sources):
        w(f" PU{z} R{z} {name(r)} HEAD C{z}\n")
    w("\n[VALVES]\n")
    for v, k in enumerate(sorted(prv_edges)):
        d = diameter_for(PEAK * carried[k], rng)
        w(f" V{v} {name(parent[k])} {name(k)} {d} PRV 35 0\n")
    w("\n[CURVES]\n")
    top = max(grid.elevation)
    for z, r in enumerate(sources):
        q = PEAK * zone_demand[z] * 1.2
        h = top - max(0.0, grid.elevation[r] - 5) + 45
        w(f" C{z} {0.0:.2f} {1.33 * h:.2f}\n C{z} {q:.2f} {h:.2f}\n C{z} {2 * q:.2f} {0.0:.2f}\n")
    w("\n[PATTERNS]\n")
    for p, values in ((1, RESIDENTIAL), (2, COMMERCIAL)):
        for i in range(0, 24, 6):
            w(f" {p} " + " ".join(f"{v:.2f}" for v in values[i:i + 6]) + "\n")
    w("\n[CONTROLS]\n")
    for t, k in enumerate(tanks):
        w(f" LINK PU{zone[k]} CLOSED IF NODE T{t} ABOVE 9\n")
        w(f" LINK PU{zone[k]} OPEN IF NODE T{t} BELOW 3\n")
    w(f"\n[TIMES]\n DURATION {args.duration}:00\n HYDRAULIC TIMESTEP 1:00\n"
      " PATTERN TIMESTEP 1:00\n REPORT TIMESTEP 1:00\n\n[OPTIONS]\n UNITS LPS\n"
      " HEADLOSS H-W\n TRIALS 100\n ACCURACY 0.001\n UNBALANCED CONTINUE 10\n\n[COORDINATES]\n")
    for k in range(n):
        w(f" {name(k)} {grid.xy[k][0]:.1f} {grid.xy[k][1]:.1f}\n")
    for z, r in enumerate(sources):
        w(f" R{z} {grid.xy[r][0] - 20:.1f} {grid.xy[r][1] - 20:.1f}\n")
    for t, k in enumerate(tanks):
        w(f" T{t} {grid.xy[k][0] + 15:.1f} {grid.xy[k][1] + 15:.1f}\n")
    w("\n[END]\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--junctions", type=int, required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("-o", "--output", default="-")
    ap.add_argument("--spacing", type=float, default=60.0, help="m between grid neighbours")
    ap.add_argument("--loops", type=float, default=0.25,
                    help="share of the grid edges outside the forest laid as loop pipes")
    ap.add_argument("--duration", type=int, default=24, help="hours")
    a = ap.parse_args()
    if a.junctions < 10:
        ap.error("--junctions must be at least 10")
    if not 0 <= a.loops <= 1:
        ap.error("--loops must be in [0, 1]")
    if a.output == "-":
        write(a, sys.stdout)
    else:
        tmp = a.output + ".tmp"
        with open(tmp, "w") as f:
            write(a, f)
        import os
        os.replace(tmp, a.output)


if __name__ == "__main__":
    main()
