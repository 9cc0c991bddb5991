"""cgsolve: conjugate gradient for sparse symmetric positive definite systems (docs/python.md).

    x, info = cgsolve.solve(A, b, precond="auto")      # A: any scipy.sparse matrix
    s = cgsolve.Solver(A, precond="jacobi")            # analyzed once
    x, info = s.solve(b); s.set_values(A2); x2, info2 = s.solve(b)

The options are the cgsolve program's, by the same names with underscores (format, device,
precond, precision, threads, tol, atol, max_iters, check_every, sort_rows, rcm, cpu_loop,
gpu_loop, kernel, and any other as a keyword: hack_size=64 is --hack-size 64). Bad input raises
ValueError with the program's message; no GPU raises cgsolve.DeviceError; not converging is
reported in info (info.converged), and raised as NotConvergedError only with check=True.
"""
import numpy as np
import scipy.sparse as sp

from _cgsolve_core import DeviceError, Info, Plan, built_with_cuda, version  # noqa: F401
import _cgsolve_core as _core

__all__ = ["solve", "Solver", "DeviceError", "NotConvergedError", "Info", "Plan", "version",
           "built_with_cuda"]

# The Options fields; any other keyword goes to the program's option of that name.
_FIELDS = {"format", "device", "precond", "precision", "cpu_loop", "gpu_loop", "kernel", "threads",
           "sort_rows", "rcm", "tol", "atol", "max_iters", "check_every", "record_history",
           "check_symmetry"}


class NotConvergedError(RuntimeError):
    """check=True and CG did not converge; .info holds what the solve did."""

    def __init__(self, info):
        super().__init__(f"CG did not converge: {info.status} after {info.iterations} iterations "
                         f"(relative residual {info.relative_residual:.3e})")
        self.info = info


def _options(kwargs):
    options = _core.Options()
    more = []
    for name, value in kwargs.items():
        if name in _FIELDS:
            setattr(options, name, value)
            continue
        flag = "--" + name.replace("_", "-")
        if value is True:
            more.append((flag, ""))
        elif value is not False and value is not None:
            more.append((flag, str(value)))
    options.more = more
    return options


def _csr(A):
    """A as a canonical CSR matrix with float64 values: A itself when it is one (no copy)."""
    if not sp.issparse(A):
        raise TypeError(f"A must be a scipy.sparse matrix, not {type(A).__name__}")
    if A.format != "csr":
        A = A.tocsr()
    if A.dtype != np.float64:
        if not (np.issubdtype(A.dtype, np.floating) or np.issubdtype(A.dtype, np.integer)):
            raise ValueError(f"A has {A.dtype} values; cgsolve takes real matrices")
        A = A.astype(np.float64)
    if not A.has_canonical_format:  # sorted columns, no duplicates: what the engine reads
        A = A.copy()
        A.sum_duplicates()
    if A.indptr.dtype != A.indices.dtype:
        A = sp.csr_matrix((A.data, A.indices.astype(np.int64), A.indptr.astype(np.int64)),
                          shape=A.shape)
    return A


def _arrays(A):
    rows, cols = A.shape
    return rows, cols, A.indptr, A.indices, A.data


def solve(A, b, x0=None, *, check=False, precond="auto", **options):
    """Solve A x = b by CG as the cgsolve program does (plan, or inspect where an option says
    auto, probing on this b; analyze; solve). Returns (x, info)."""
    A = _csr(A)
    opts = _options(dict(options, precond=precond))
    x, info = _core._solve(*_arrays(A), np.asarray(b, dtype=np.float64), x0, opts)
    if check and not info.converged:
        raise NotConvergedError(info)
    return x, info


class Solver:
    """A solver analyzed on A once (the plan, the format, the preconditioner's set-up), for many
    right-hand sides and new values of the same sparsity pattern."""

    def __init__(self, A, *, precond="auto", **options):
        A = _csr(A)
        self._shape = A.shape
        self._indptr, self._indices = A.indptr, A.indices
        self._core = _core._Solver(*_arrays(A), _options(dict(options, precond=precond)))

    def set_values(self, A):
        """New values: a sparse matrix of the analyzed pattern (checked), or the nnz values in
        its CSR order as a float64 array (read in place)."""
        if isinstance(A, np.ndarray):
            self._core.set_values(np.ascontiguousarray(A, dtype=np.float64))
            return
        A = _csr(A)
        if A.indptr is self._indptr and A.indices is self._indices:  # the same arrays
            self._core.set_values(A.data)
        else:
            self._core.set_matrix(*_arrays(A))

    def solve(self, b, x0=None, *, check=False):
        """Returns (x, info); x0 the initial guess (zeros without it)."""
        x, info = self._core.solve(b, x0)
        if check and not info.converged:
            raise NotConvergedError(info)
        return x, info

    @property
    def plan(self):
        return self._core.plan

    @property
    def shape(self):
        return self._shape
