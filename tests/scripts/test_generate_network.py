#!/usr/bin/env python3
"""scripts/generate_network.py: the same arguments give the same file; the network it writes has
what its header promises (every junction joined to a source through pipes, pumps with three-point
curves, tanks, PRVs, controls, both patterns) at several sizes; bad arguments are refused.
Plain unittest; CTest runs it as "scripts: generate_network.py"."""
import collections
import os
import subprocess
import sys
import unittest

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "generate_network.py")


def generate(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)


def sections(text):
    out, name = collections.defaultdict(list), None
    for line in text.splitlines():
        line = line.split(";")[0].strip()
        if line.startswith("["):
            name = line
        elif line and name:
            out[name].append(line.split())
    return out


class GenerateNetworkTest(unittest.TestCase):
    def test_deterministic(self):
        a = generate("--junctions", "300", "--seed", "5").stdout
        self.assertEqual(a, generate("--junctions", "300", "--seed", "5").stdout)
        self.assertNotEqual(a, generate("--junctions", "300", "--seed", "6").stdout)

    def test_structure(self):
        for n in (50, 1234, 12000):
            with self.subTest(junctions=n):
                s = sections(generate("--junctions", str(n), "--seed", "2").stdout)
                junctions = {f[0] for f in s["[JUNCTIONS]"]}
                self.assertEqual(len(junctions), n)
                reservoirs = {f[0] for f in s["[RESERVOIRS]"]}
                self.assertEqual(len(reservoirs), max(2, n // 5000))
                self.assertEqual(len(s["[TANKS]"]), max(1, n // 10000))
                self.assertEqual(len(s["[PUMPS]"]), len(reservoirs))
                self.assertEqual(len(s["[CURVES]"]), 3 * len(reservoirs))
                self.assertEqual(len(s["[VALVES]"]), max(1, n // 20000))
                self.assertTrue(all(v[4] == "PRV" for v in s["[VALVES]"]))
                self.assertEqual(len(s["[CONTROLS]"]), 2 * len(s["[TANKS]"]))
                self.assertEqual({p[0] for p in s["[PATTERNS]"]}, {"1", "2"})
                # every junction reaches a reservoir through pipes, pumps and valves
                adjacent = collections.defaultdict(set)
                for sec in ("[PIPES]", "[PUMPS]", "[VALVES]"):
                    for f in s[sec]:
                        adjacent[f[1]].add(f[2]), adjacent[f[2]].add(f[1])
                seen, stack = set(reservoirs), list(reservoirs)
                while stack:
                    for m in adjacent[stack.pop()] - seen:
                        seen.add(m), stack.append(m)
                self.assertTrue(junctions <= seen)

    def test_bad_arguments(self):
        self.assertEqual(generate("--junctions", "3").returncode, 2)
        self.assertEqual(generate("--junctions", "100", "--loops", "2").returncode, 2)


if __name__ == "__main__":
    unittest.main()
