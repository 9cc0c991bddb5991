"""import netsolve against the netsolve program: DataFrames equal to the CSVs it writes (the CSV's
10 significant digits), the summary equal to its JSON report's, the study table equal to its
--study-csv, errors with its messages, the GPU path skipping without a device (docs/python.md)."""
import json
import os
import subprocess

import numpy as np
import pandas as pd
import pytest

netsolve = pytest.importorskip("netsolve")

SOURCE = os.environ.get("CGSOLVE_SOURCE_DIR", ".")
BINARY = os.environ.get("CGSOLVE_BINARY_DIR", "build")
PROGRAM = os.path.join(BINARY, "app", "netsolve")
NET1 = os.path.join(SOURCE, "data", "networks", "Net1.inp")
NET3 = os.path.join(SOURCE, "data", "networks", "Net3.inp")


def program(tmp_path, *flags):
    if not os.path.exists(PROGRAM):
        pytest.skip(f"{PROGRAM} is not built")
    return subprocess.run([PROGRAM, "--quiet", *flags], capture_output=True, text=True)


def as_csv_text(frame):
    """The frame's numbers as the program writes them (to_chars, 10 significant digits)."""
    out = frame.copy()
    for column in out.columns:
        if out[column].dtype == np.float64:
            out[column] = [format(v, ".10g") for v in out[column]]
        else:
            out[column] = out[column].astype(str)
    return out


@pytest.mark.parametrize("network,options", [
    (NET1, {"duration": "24h"}),
    (NET3, {"duration": "24h"}),
    (NET3, {"duration": "6h", "solver": "cg", "precond": "jacobi"}),
    (NET1, {"duration": "0", "demand_model": "pda", "minimum_pressure": 0,
            "required_pressure": 120}),
])
def test_frames_equal_the_programs_csvs(tmp_path, network, options):
    flags = []
    for name, value in options.items():
        flags += ["--" + name.replace("_", "-"), str(value)]
    paths = {what: str(tmp_path / f"{what}.csv") for what in ("nodes", "links", "tanks")}
    done = program(tmp_path, "--network", network, "--nodes", paths["nodes"], "--links",
                   paths["links"], "--tanks", paths["tanks"], "--report",
                   str(tmp_path / "r.json"), *flags)
    assert done.returncode == 0, done.stderr
    r = netsolve.run(network, **options)
    for what in ("nodes", "links", "tanks"):
        expected = pd.read_csv(paths[what], dtype=str, keep_default_na=False)
        got = as_csv_text(getattr(r, what))
        assert list(got.columns) == list(expected.columns)
        pd.testing.assert_frame_equal(got.reset_index(drop=True), expected)
    with open(tmp_path / "r.json") as f:
        report = json.load(f)
    for key in ("steps", "reporting_times", "trials", "linear_solves", "linear_iterations",
                "completed", "unbalanced", "error", "duration_s"):
        assert r.summary["series"][key] == report["series"][key], key
    assert r.summary["network"] == report["network"]
    assert r.completed and not r.unbalanced and r.error == ""


def test_a_network_from_a_string_runs_as_its_file():
    with open(NET1) as f:
        text = f.read()
    a = netsolve.run(NET1, duration="3h")
    b = netsolve.run(netsolve.Network.from_string(text, "Net1.inp"), duration="3h")
    pd.testing.assert_frame_equal(a.nodes, b.nodes)
    pd.testing.assert_frame_equal(a.links, b.links)
    net = netsolve.Network(NET1)  # read once, run twice
    pd.testing.assert_frame_equal(netsolve.run(net, duration="3h").tanks, a.tanks)
    assert "9" in net.node_ids and len(net.link_ids) == 13


def test_study_equals_the_programs_csv(tmp_path):
    csv = str(tmp_path / "study.csv")
    done = program(tmp_path, "--network", NET1, "--study", "fireflow", "--flow", "1500",
                   "--study-csv", csv)
    assert done.returncode in (0, 5), done.stderr
    got = netsolve.study(NET1, "fireflow", flow=1500)
    pd.testing.assert_frame_equal(got, pd.read_csv(csv))
    assert got["element"].iloc[0] == "baseline" and len(got) > 1


def test_errors_carry_the_programs_messages(tmp_path):
    missing = str(tmp_path / "nothere.inp")
    with pytest.raises(FileNotFoundError) as caught:
        netsolve.run(missing)
    assert str(caught.value) in program(tmp_path, "--network", missing).stderr
    with pytest.raises(ValueError) as caught:
        netsolve.run(NET1, duration="xyz")
    assert str(caught.value) in program(tmp_path, "--network", NET1, "--duration", "xyz").stderr
    bad = tmp_path / "bad.inp"
    bad.write_text("[JUNCTIONS]\n J1 10 x\n[END]\n")
    with pytest.raises(ValueError) as caught:
        netsolve.run(str(bad))
    assert str(caught.value) in program(tmp_path, "--network", str(bad)).stderr
    with pytest.raises(ValueError, match="--solver"):
        netsolve.run(NET1, solver="bogus")


def test_gpu_matches_cpu_or_skips_without_a_device():
    try:
        r = netsolve.run(NET3, duration="2h", solver="cg", device="gpu")
    except RuntimeError as e:  # _cgsolve_core.DeviceError
        pytest.skip(f"no GPU: {e}")
    cpu = netsolve.run(NET3, duration="2h")
    assert np.allclose(r.nodes["head"], cpu.nodes["head"], rtol=0, atol=1e-6)
