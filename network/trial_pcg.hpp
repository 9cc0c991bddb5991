// The trials engine's CG (netsolve --study ... --solver cg): each trial's junction system solved
// by CG preconditioned by EPANET's own factor, on one scenario's strided arrays -- the same
// algorithm as netsolve's CG solver for single runs (network/cg_solver.cpp, CgSolver::refine),
// one GPU thread a scenario or one host thread (trial_kernels.hpp).
//
//   x0 = M^-1 b             M = L L^T, the factor of the direct path (EPANET's order of
//                           operations): its answer, EPANET's rounding included
//   accept                  where x0's componentwise backward error max_i |b - A x|_i /
//                           (|A| |x| + |b|)_i is within PcgOptions::accept, as the direct
//                           solve's always is on these systems: the direct path's bits
//   refine                  else x += PCG(A, b - A x) with M, each correction kept only where it
//                           lowers the backward error, until it is accepted, a correction gains
//                           less than a factor 2 (rounding level), or max_steps
// A system that is still not accepted goes to the host (the caller's needs_host), which runs
// netsolve's CG solver on it. The inner CG takes its decisions in solver/cg_step.hpp.
#pragma once

#include <cmath>

#include "base/host_device.hpp"
#include "network/cholesky_executor.hpp"
#include "network/gga_state.hpp"
#include "solver/cg_step.hpp"

namespace cgs::net::trials {

// What a trial's linear solve is (NetworkView::pcg). max_steps 0: the factor's answer as it is,
// the direct solver's (the trials engine's default).
struct PcgOptions {
  int max_steps = 0;             // corrections (RefinementOptions::max_steps)
  double accept = 1e-12;         // backward error that stands (accept_backward_error)
  double inner_tol = 1e-12;      // each correction's CG: ||r|| <= inner_tol ||b||
  int inner_iterations = 50;     // and at most this many iterations (M ~ A: a few suffice)
};

// The junction matrix: A's CSR pattern (shared) and one scenario's values.
struct JunctionMatrix {
  int n = 0;
  const int* row_ptr = nullptr;
  const int* col = nullptr;
  gga::Column values;
};

// The factor M = L L^T as the schedule lays it out, and a scratch column in its numbering.
struct Factor {
  const CholeskyScheduleView* schedule = nullptr;
  gga::Column slots, scratch;
};

// One scenario's work vectors (n each).
struct PcgVectors {
  gga::Column r, dy, z, p, q, candidate;
};

// out = M^-1 in (out may be in).
CGS_HD void apply_factor(const Factor& m, gga::Column in, gga::Column out) {
  const CholeskyScheduleView& c = *m.schedule;
  const chol::Strided rhs{m.scratch.data, m.scratch.stride};
  for (int k = 0; k < c.n; ++k) rhs[k] = in[c.order[k]];
  chol::substitute(c, {m.slots.data, m.slots.stride}, rhs);
  for (int k = 0; k < c.n; ++k) out[c.order[k]] = rhs[k];
}

// y = A x.
CGS_HD void multiply(const JunctionMatrix& a, gga::Column x, gga::Column y) {
  for (int i = 0; i < a.n; ++i) {
    double sum = 0;
    for (int k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) sum += a.values[k] * x[a.col[k]];
    y[i] = sum;
  }
}

// r = b - A x, row by row as network/linear_solver.hpp's row_residual; returns the
// componentwise backward error.
CGS_HD double residual(const JunctionMatrix& a, gga::Column b, gga::Column x, gga::Column r) {
  double omega = 0;
  for (int i = 0; i < a.n; ++i) {
    double ax = 0, magnitude = fabs(b[i]);
    for (int k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
      const double t = a.values[k] * x[a.col[k]];
      ax += t;
      magnitude += fabs(t);
    }
    r[i] = b[i] - ax;
    if (magnitude > 0 && fabs(r[i]) / magnitude > omega) omega = fabs(r[i]) / magnitude;
  }
  return omega;
}

CGS_HD double dot(gga::Column u, gga::Column w, int n) {
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += u[i] * w[i];
  return sum;
}

// dy = PCG(A, r) from dy = 0 with M; returns its iterations, negative where it did not converge.
CGS_HD int correction(const JunctionMatrix& a, const Factor& m, const PcgOptions& o,
                      const PcgVectors& v) {
  const int n = a.n;
  cg::State s = cg::begin(dot(v.r, v.r, n), o.inner_tol, 0.0, o.inner_iterations);
  for (int i = 0; i < n; ++i) v.dy[i] = 0, v.q[i] = v.r[i];  // q: the inner residual
  apply_factor(m, v.q, v.z);
  if (!cg::started(s, s.bb, dot(v.q, v.z, n))) {
    for (long long k = 1;; ++k) {
      const double beta = k == 1 ? 0.0 : s.beta;
      for (int i = 0; i < n; ++i) v.p[i] = cg::next_p(v.z[i], beta, v.p[i]);
      multiply(a, v.p, v.candidate);  // candidate: A p until the caller needs it
      if (!cg::step(s, dot(v.p, v.candidate, n), k)) break;
      for (int i = 0; i < n; ++i) {
        v.dy[i] = cg::next_x(v.dy[i], s.alpha, v.p[i]);
        v.q[i] = cg::next_r(v.q[i], s.alpha, v.candidate[i]);
      }
      apply_factor(m, v.q, v.z);
      if (cg::stepped(s, dot(v.q, v.q, n), dot(v.q, v.z, n), k)) break;
    }
  }
  const int its = static_cast<int>(s.iterations);
  return s.converged_at >= 0 ? its : -1 - its;
}

// The solve from x = M^-1 b (already in x): returns true where x is accepted. Counts the inner
// CG iterations it took, and the systems it had to correct.
CGS_HD bool refine(const JunctionMatrix& a, const Factor& m, const PcgOptions& o,
                   const PcgVectors& v, gga::Column b, gga::Column x, int& iterations,
                   int& corrected) {
  double omega = residual(a, b, x, v.r);
  if (o.max_steps > 0 && omega > o.accept) ++corrected;  // a system the factor alone missed
  for (int step = 0; step < o.max_steps && omega > o.accept; ++step) {
    const int its = correction(a, m, o, v);
    iterations += its >= 0 ? its : -1 - its;
    for (int i = 0; i < a.n; ++i) v.candidate[i] = x[i] + v.dy[i];
    const double next = residual(a, b, v.candidate, v.q);
    const bool stalled = !(next < 0.5 * omega);
    if (next < omega) {
      for (int i = 0; i < a.n; ++i) x[i] = v.candidate[i], v.r[i] = v.q[i];
      omega = next;
    }
    if (stalled || its < 0) break;
  }
  return omega <= o.accept;
}

}  // namespace cgs::net::trials
