#!/usr/bin/env python3
"""scripts/plot_study.py's reading of a network (kinds of nodes, [OPTIONS]), the units it labels
a column with, and NFPA 291's hydrant classes; the drawing itself needs matplotlib and is not run
here. Plain unittest (no pytest on the CI machine); CTest runs it as "scripts: plot_study.py"."""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "scripts"))
import plot_study  # noqa: E402

NET = """[TITLE]
a made-up network
[JUNCTIONS]
 J1 10 5
 J2 12 0
[RESERVOIRS]
 R1 100
[TANKS]
 T1 50 3 0 6 40 0
[PIPES]
 P1 R1 J1 100 12 100 0 Open
 P2 J1 J2 100 12 100 0 Open
 P3 J2 T1 100 12 100 0 Open
[OPTIONS]
 Units LPS
 Pressure kPa
[COORDINATES]
 J1 0 0
 J2 1 0
 R1 -1 0
 T1 2 0
[END]
"""


class PlotStudyTest(unittest.TestCase):
    def read(self, text):
        with tempfile.NamedTemporaryFile("w", suffix=".inp", delete=False) as f:
            f.write(text)
        try:
            return plot_study.read_inp(f.name)
        finally:
            os.unlink(f.name)

    def test_kinds_are_what_the_drawing_looks_for(self):
        nodes, kinds, links, _, options = self.read(NET)
        self.assertEqual(kinds, {"J1": "junction", "J2": "junction", "R1": "reservoir",
                                 "T1": "tank"})
        self.assertEqual(links["P3"], ("J2", "T1"))
        self.assertEqual(nodes["T1"], (2.0, 0.0))
        self.assertEqual(options["UNITS"], "LPS")

    def test_units_as_netsolve_writes_the_csv(self):
        si = {"UNITS": "LPS"}
        self.assertEqual(plot_study.column_unit("element_pressure", si), "m")
        self.assertEqual(plot_study.column_unit("min_pressure", {"UNITS": "GPM"}), "psi")
        self.assertEqual(plot_study.column_unit("min_pressure", {}), "psi")  # EPANET's default
        self.assertEqual(plot_study.column_unit("min_pressure", {"UNITS": "LPS",
                                                                 "PRESSURE": "kPa"}), "kPa")
        self.assertEqual(plot_study.column_unit("available_flow", {"UNITS": "cms"}), "CMS")
        self.assertEqual(plot_study.column_unit("available_flow", {"UNITS": "Mg"}), "MGD")
        self.assertEqual(plot_study.column_unit("below_threshold", si), "")

    def test_nfpa291_classes_at_their_edges(self):
        label = lambda flow, unit: plot_study.NFPA291[plot_study.nfpa291_class(flow, unit)][1]
        self.assertTrue(label(1500, "GPM").startswith("AA"))
        self.assertTrue(label(1499.9, "GPM").startswith("A "))
        self.assertTrue(label(1000, "GPM").startswith("A "))
        self.assertTrue(label(999, "GPM").startswith("B"))
        self.assertTrue(label(499, "GPM").startswith("C"))
        self.assertTrue(label(-5, "GPM").startswith("C"))
        # 100 L/s = 1585 gpm; 60 L/s = 951 gpm
        self.assertTrue(label(100, "LPS").startswith("AA"))
        self.assertTrue(label(60, "LPS").startswith("B"))


if __name__ == "__main__":
    unittest.main()
