#!/usr/bin/env python3
"""What the Python modules cost beyond the engine (docs/python.md), best of N, interleaved:

  1. cgsolve.solve on the 2D Poisson matrix of gen:poisson2d:M with Jacobi, against the cgsolve
     program's own time for the same solve (its report: everything after reading the matrix);
  2. Solver.solve per call on a 100-row system, against the same solve repeated from C++;
  3. netsolve.run(NET, duration) against the netsolve program's wall time.

    PYTHONPATH=build/python /usr/bin/python3 bench/scripts/python_overhead.py [--build build]
        [--m 1000] [--network ../shared/data/networks/BWSN_Network_2.inp] [--repeat 5]
"""
import argparse
import json
import os
import subprocess
import tempfile
import time

import numpy as np
import scipy.sparse as sp

import _cgsolve_core
import cgsolve
import netsolve


def poisson2d(m):
    t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(m, m))
    return (sp.kron(sp.identity(m), t) + sp.kron(t, sp.identity(m))).tocsr()


ENGINE_TIMES = ("inspect", "thread_start", "reorder", "convert", "upload", "precond", "solve",
                "download")
REPORT_TIMES = ("inspect_s", "thread_start_s", "reorder_s", "build_format_s", "upload_s",
                "preconditioner_s", "solve_s", "download_s")


def solve_overhead(build, m, repeat):
    A = poisson2d(m)
    b = A @ np.ones(A.shape[0])
    program = os.path.join(build, "app", "cgsolve")
    cli, py, engine = [], [], []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as tmp:
            report = os.path.join(tmp, "r.json")
            subprocess.run([program, "--matrix", f"gen:poisson2d:{m}", "--precond", "jacobi",
                            "--quiet", "--report", report], check=True)
            with open(report) as f:
                r = json.load(f)
        cli.append(sum(r["times"][k] for k in REPORT_TIMES))
        start = time.perf_counter()
        _, info = cgsolve.solve(A, b, precond="jacobi")
        py.append(time.perf_counter() - start)
        engine.append(sum(info.times[k] for k in ENGINE_TIMES))
        assert info.iterations == r["result"]["iterations"], "not the program's system"
    best_cli, best_py = min(cli), min(py)
    print(f"cgsolve.solve gen:poisson2d:{m} jacobi ({info.iterations} iterations): Python "
          f"{best_py:.4f} s (engine {min(engine):.4f} s inside it), program {best_cli:.4f} s; "
          f"Python over the program {100 * (best_py - best_cli) / best_cli:+.2f}%, beyond the "
          f"engine's own times {100 * (best_py - min(engine)) / best_cli:.2f}% of the program's")


def per_call_overhead(repeat, calls=500, batches=40):
    """Batches of calls, Python's and C++'s alternating, in this thread's CPU time (the solve of
    100 rows runs on the calling thread); the fastest batch of each."""
    A = sp.diags([-1.0, 2.5, -1.0], [-1, 0, 1], shape=(100, 100), format="csr")
    b = np.ones(100)
    s = cgsolve.Solver(A, precond="jacobi")
    py, cpp = [], []
    for _ in range(batches * repeat // 5):
        start = time.thread_time()
        for _ in range(calls):
            s.solve(b)
        py.append((time.thread_time() - start) / calls)
        cpp.append(_cgsolve_core._time_solves(s._core, b, calls))
    print(f"Solver.solve, 100 rows: {1e6 * min(py):.2f} us a call from Python, "
          f"{1e6 * min(cpp):.2f} us from C++ (thread CPU time, fastest of {len(py)} batches of {calls}): "
          f"{1e6 * (min(py) - min(cpp)):.2f} us beyond the solve")


def network_overhead(build, network, duration, repeat):
    program = os.path.join(build, "app", "netsolve")
    cli, py = [], []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run([program, "--network", network, "--duration", duration, "--quiet"],
                       check=True)
        cli.append(time.perf_counter() - start)
        start = time.perf_counter()
        r = netsolve.run(network, duration=duration)
        py.append(time.perf_counter() - start)
    print(f"netsolve.run {os.path.basename(network)} {duration} ({len(r.nodes)} node rows): "
          f"Python {min(py):.3f} s, program {min(cli):.3f} s (a process): "
          f"{min(py) / min(cli):.3f}x")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--m", type=int, default=1000)
    parser.add_argument("--network",
                        default=os.path.join(here, "../../../shared/data/networks/BWSN_Network_2.inp"))
    parser.add_argument("--duration", default="24h")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", choices=["solve", "call", "network"])
    a = parser.parse_args()
    if a.only in (None, "call"):
        per_call_overhead(a.repeat)
    if a.only in (None, "network"):
        network_overhead(a.build, a.network, a.duration, a.repeat)
    if a.only in (None, "solve"):
        solve_overhead(a.build, a.m, a.repeat)


if __name__ == "__main__":
    main()
