"""import cgsolve against the cgsolve program: the same iterations and the same bits for the same
options, every scipy.sparse input the same answer, set_values reading the caller's buffer, errors
with the program's messages, the GPU path skipping without a device (docs/python.md)."""
import json
import os
import subprocess
import threading

import numpy as np
import pytest
import scipy.sparse as sp

cgsolve = pytest.importorskip("cgsolve")

BINARY = os.environ.get("CGSOLVE_BINARY_DIR", "build")
PROGRAM = os.path.join(BINARY, "app", "cgsolve")


def poisson2d(m):
    """The 5-point Laplacian on an m x m grid (integer values: exact in any file)."""
    t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(m, m))
    identity = sp.identity(m)
    return (sp.kron(identity, t) + sp.kron(t, identity)).tocsr()


def write_matrix(path, A):
    A = sp.coo_matrix(A)
    with open(path, "w") as f:
        f.write("%%MatrixMarket matrix coordinate real general\n")
        f.write(f"{A.shape[0]} {A.shape[1]} {A.nnz}\n")
        for i, j, v in zip(A.row, A.col, A.data):
            f.write(f"{i + 1} {j + 1} {v!r}\n")


def write_vector(path, v):
    with open(path, "w") as f:
        f.write("%%MatrixMarket matrix array real general\n")
        f.write(f"{len(v)} 1\n")
        f.writelines(f"{x!r}\n" for x in v)


def read_vector(path):
    with open(path) as f:
        lines = [line for line in f if not line.startswith("%")]
    return np.array([float(line) for line in lines[1:]])


def run_program(tmp_path, A, b, *options):
    """The program on A and b: (x, its JSON report)."""
    if not os.path.exists(PROGRAM):
        pytest.skip(f"{PROGRAM} is not built")
    write_matrix(tmp_path / "A.mtx", A)
    write_vector(tmp_path / "b.mtx", b)
    subprocess.run([PROGRAM, "--matrix", str(tmp_path / "A.mtx"), "--rhs",
                    str(tmp_path / "b.mtx"), "--output", str(tmp_path / "x.mtx"), "--report",
                    str(tmp_path / "r.json"), "--quiet", *options], check=True)
    with open(tmp_path / "r.json") as f:
        return read_vector(tmp_path / "x.mtx"), json.load(f)


def rhs(n):
    return (np.arange(n) % 7 - 3).astype(np.float64)  # exact in any file


@pytest.mark.parametrize("precond,extra", [("jacobi", {}), ("none", {}), ("ic0", {}),
                                           ("jacobi", {"sort_rows": True})])
def test_same_iterations_and_bits_as_the_program(tmp_path, precond, extra):
    A = poisson2d(30)
    b = rhs(A.shape[0])
    # One loop on both sides (the team's choice is timed, and its sums differ in the last bits).
    flags = ["--precond", precond, "--tol", "1e-10", "--cpu-loop", "fused-serial"] + (
        ["--sort-rows"] if extra else [])
    x_cli, report = run_program(tmp_path, A, b, *flags)
    x, info = cgsolve.solve(A, b, precond=precond, tol=1e-10, cpu_loop="fused-serial", **extra)
    assert info.iterations == report["result"]["iterations"]
    assert info.converged
    assert np.array_equal(x, x_cli)  # the same bits


def test_solver_equals_one_call_solve():
    A = poisson2d(20)
    b = rhs(A.shape[0])
    x1, info1 = cgsolve.solve(A, b, precond="jacobi", cpu_loop="fused-serial")
    s = cgsolve.Solver(A, precond="jacobi", cpu_loop="fused-serial")
    x2, info2 = s.solve(b)
    assert info2.iterations == info1.iterations and np.array_equal(x1, x2)
    x3, _ = s.solve(b)  # reused: the same answer again
    assert np.array_equal(x2, x3)


@pytest.mark.parametrize("convert", [
    lambda A: A.tocsc(), lambda A: A.tocoo(), lambda A: A.astype(np.float32),
    lambda A: sp.csr_matrix((A.data, A.indices.astype(np.int64), A.indptr.astype(np.int64)),
                            shape=A.shape),
    lambda A: sp.csr_array(A)])
def test_every_sparse_input_gives_the_same_answer(convert):
    A = poisson2d(15)  # float32 holds its integer values exactly
    b = rhs(A.shape[0])
    x_ref, info_ref = cgsolve.solve(A, b, precond="jacobi", cpu_loop="fused-serial")
    x, info = cgsolve.solve(convert(A), b, precond="jacobi", cpu_loop="fused-serial")
    assert info.iterations == info_ref.iterations and np.array_equal(x, x_ref)


def test_unsorted_and_duplicate_entries_are_summed_as_scipy_does():
    A = poisson2d(6).tocoo()
    # Each entry split in two halves, in reverse order: the same matrix once summed.
    rows = np.concatenate([A.row, A.row])[::-1]
    cols = np.concatenate([A.col, A.col])[::-1]
    vals = np.concatenate([A.data / 2, A.data / 2])[::-1]
    B = sp.csr_matrix((vals, (rows, cols)), shape=A.shape)
    x, info = cgsolve.solve(B, rhs(36), precond="none")
    x_ref, _ = cgsolve.solve(A.tocsr(), rhs(36), precond="none")
    assert info.converged and np.allclose(x, x_ref, rtol=1e-12)


def test_set_values_reads_the_callers_buffer():
    A = poisson2d(10)
    b = rhs(A.shape[0])
    s = cgsolve.Solver(A, precond="jacobi")
    x1, _ = s.solve(b)
    s.set_values(A)
    diagonal = A.indices == np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
    A.data[diagonal] += 1.0  # the caller's own array, changed in place
    s.set_values(A)
    x2, info2 = s.solve(b)
    x_ref, info_ref = cgsolve.solve(A, b, precond="jacobi")
    assert not np.array_equal(x1, x2)
    assert info2.iterations == info_ref.iterations and np.array_equal(x2, x_ref)
    s.set_values(A.data * 2)  # the values alone, in the pattern's order
    x3, _ = s.solve(2 * b)
    assert np.allclose(x3, x_ref, rtol=1e-8)


def test_set_values_refuses_another_pattern():
    s = cgsolve.Solver(poisson2d(5), precond="none")
    with pytest.raises(ValueError, match="another sparsity pattern"):
        s.set_values(poisson2d(5) + sp.eye(25, k=3) + sp.eye(25, k=-3))


def test_info_has_the_reports_fields():
    A = poisson2d(20)
    _, info = cgsolve.solve(A, rhs(400), precond="jacobi", record_history=True)
    assert info.converged and info.status == "converged"
    assert info.relative_residual <= 1e-8 and info.true_relative_residual <= 1e-7
    assert set(info.times) >= {"solve", "convert", "precond", "inspect"}
    assert info.plan.format == "csr" and info.plan.preconditioner == "jacobi"
    assert info.plan.reasons and isinstance(info.plan.reasons[0], str)
    assert info.spmv_measured and info.spmv_median_s > 0
    assert len(info.residual_history) == info.iterations + 1


def test_auto_preconditioner_is_the_default_and_reported():
    x, info = cgsolve.solve(poisson2d(20), rhs(400))
    assert info.converged and info.plan.preconditioner != "auto"


def test_not_converged_is_reported_and_raised_only_when_asked():
    A, b = poisson2d(20), rhs(400)
    _, info = cgsolve.solve(A, b, precond="none", max_iters=3)
    assert not info.converged and info.iterations == 3
    with pytest.raises(cgsolve.NotConvergedError) as caught:
        cgsolve.solve(A, b, precond="none", max_iters=3, check=True)
    assert caught.value.info.iterations == 3


def program_error(tmp_path, A, *flags):
    if not os.path.exists(PROGRAM):
        pytest.skip(f"{PROGRAM} is not built")
    write_matrix(tmp_path / "A.mtx", A)
    r = subprocess.run([PROGRAM, "--matrix", str(tmp_path / "A.mtx"), "--quiet", *flags],
                       capture_output=True, text=True)
    assert r.returncode == 2
    return r.stderr


def test_errors_carry_the_programs_messages(tmp_path):
    A = poisson2d(4).tolil()
    A[0, 1] = 5.0  # no longer symmetric
    with pytest.raises(ValueError) as caught:
        cgsolve.solve(A.tocsr(), rhs(16))
    assert "is not symmetric (A(1,2) differs from A(2,1))" in str(caught.value)
    assert str(caught.value) in program_error(tmp_path, A)
    with pytest.raises(ValueError) as caught:
        cgsolve.solve(poisson2d(4), rhs(16), format="bogus")
    assert str(caught.value) in program_error(tmp_path, poisson2d(4), "--format", "bogus")
    with pytest.raises(ValueError, match="entries but the matrix has 16 rows"):
        cgsolve.solve(poisson2d(4), rhs(15))
    with pytest.raises(ValueError, match="32 x 16"):
        cgsolve.solve(sp.random(32, 16, density=0.2, format="csr"), rhs(32))
    with pytest.raises(TypeError):
        cgsolve.solve(poisson2d(4).toarray(), rhs(16))


def test_other_options_by_their_program_names():
    x, info = cgsolve.solve(poisson2d(16), rhs(256), precond="none", format="hll", hack_size=8)
    assert info.converged and info.plan.format == "hll"


def test_solves_run_without_the_gil():
    A, b = poisson2d(60), rhs(3600)
    s = cgsolve.Solver(A, precond="none", tol=1e-14)
    ticks = []
    done = threading.Event()

    def count():
        while not done.is_set():
            ticks.append(1)

    counter = threading.Thread(target=count)
    counter.start()
    try:
        for _ in range(5):
            s.solve(b)
    finally:
        done.set()
        counter.join()
    assert len(ticks) > 100  # Python ran beside the solves


def test_gpu_matches_cpu_or_skips_without_a_device():
    A, b = poisson2d(20), rhs(400)
    try:
        x, info = cgsolve.solve(A, b, precond="jacobi", device="gpu", tol=1e-10)
    except cgsolve.DeviceError as e:
        pytest.skip(f"no GPU: {e}")
    x_cpu, _ = cgsolve.solve(A, b, precond="jacobi", tol=1e-10)
    assert info.converged and info.plan.device == "gpu"
    assert np.allclose(x, x_cpu, rtol=1e-8)
