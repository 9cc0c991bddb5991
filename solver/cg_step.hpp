// The conjugate gradient method, written once: its scalars, its stop rule and its breakdown
// tests, as host-and-device functions that every CG loop of cgsolve executes.
//
// Preconditioned CG (M^-1 ~ A^-1), iteration k = 1, 2, ...:
//   beta_k  = rz_{k-1} / rz_{k-2}      (k >= 2; p_1 = z_0)
//   p_k     = z_{k-1} + beta_k p_{k-1}
//   q_k     = A p_k
//   alpha_k = rz_{k-1} / (p_k . q_k)
//   x_k     = x_{k-1} + alpha_k p_k
//   r_k     = r_{k-1} - alpha_k q_k,    z_k = M^-1 r_k,    rz_k = r_k . z_k
// with r_0 = b - A x_0, z_0 = M^-1 r_0. The loops differ only in how they move the vectors
// (solver/generic_cg.hpp: one call per operation; solver/fused/: two passes over the rows per
// iteration, on one thread, a thread team or a GPU grid) and all take their decisions here:
//   begin()    ||b|| known: the stop threshold; b = 0 ends the solve (x = 0).
//   started()  r_0 and z_0 known: converged at iteration 0?
//   step()     p_k . q_k known: alpha_k, or a breakdown (p.Ap <= 0: A is not positive definite,
//              or a NaN/Inf) that leaves x and r at iteration k - 1.
//   stepped()  r_k . r_k and r_k . z_k known: converged (||r_k|| <= max(tol ||b||, atol)), a
//              non-finite residual, the iteration limit, or beta_{k+1} for the next step.
// A State is plain data: on the GPU it lives in device memory and every block can run the same
// function on the same inputs to the same bits, so no extra synchronisation decides anything.
#pragma once

#include <cmath>

#include "base/host_device.hpp"

namespace cgs::cg {

struct State {
  double bb;                             // b . b
  double rr_threshold;                   // stop when r . r <= this: max(tol ||b||, atol)^2
  long long max_iters;                   // iteration limit
  double rr, rz;                         // r_k . r_k and r_k . z_k of the latest residual
  double rz_old;                         // rz of the residual before
  double pq;                             // p_k . q_k of the latest step
  double alpha, beta;                    // of the latest step; beta for the next one
  long long iterations;                  // steps completed (x and r are at this iteration)
  long long converged_at, breakdown_at;  // -1: not (yet)
  int stopped;                           // nothing more to do: see done()
  int zero_rhs;                          // b = 0: x = 0 is the answer
};

// Before iteration 0, once b . b is known.
CGS_HD State begin(double bb, double tol, double atol, long long max_iters) {
  State s{};
  s.bb = bb;
  const double limit = std::fmax(tol * std::sqrt(bb), atol);
  s.rr_threshold = limit * limit;
  s.max_iters = max_iters;
  s.converged_at = s.breakdown_at = -1;
  if (bb == 0) {  // b = 0: x = 0, no iteration needed
    s.zero_rhs = 1;
    s.converged_at = 0;
    s.stopped = 1;
  }
  return s;
}

// Iteration 0: rr = r_0 . r_0, rz = r_0 . z_0. Returns true when the solve stops here.
CGS_HD bool started(State& s, double rr, double rz) {
  if (s.stopped) return true;
  s.rr = rr;
  s.rz = rz;
  s.iterations = 0;
  if (rr <= s.rr_threshold) {
    s.converged_at = 0;
    s.stopped = 1;
  } else if (s.max_iters <= 0) {
    s.stopped = 1;
  }
  return s.stopped != 0;
}

// Iteration k, once p_k . q_k is known. Returns false on a breakdown: then x and r stay at
// iteration k - 1 and the solve stops. (A NaN that appeared earlier surfaces here too.)
CGS_HD bool step(State& s, double pq, long long k) {
  if (s.stopped) return false;
  s.pq = pq;
  if (!(pq > 0) || !std::isfinite(pq) || !std::isfinite(s.rz)) {
    s.breakdown_at = k;
    s.stopped = 1;
    return false;
  }
  s.alpha = s.rz / pq;
  return true;
}

// Iteration k, once r_k . r_k and r_k . z_k are known. Returns true when the solve stops after
// it (x and r are then at iteration k); otherwise beta for iteration k + 1 is set.
CGS_HD bool stepped(State& s, double rr, double rz, long long k) {
  s.rz_old = s.rz;
  s.rr = rr;
  s.rz = rz;
  s.iterations = k;
  if (!std::isfinite(rr)) {  // reported as non-finite (rz = rr is not finite either)
    s.rz = rr;
    s.breakdown_at = k;
    s.stopped = 1;
  } else if (rr <= s.rr_threshold) {
    s.converged_at = k;
    s.stopped = 1;
  } else if (k >= s.max_iters) {
    s.stopped = 1;
  } else {
    s.beta = rz / s.rz_old;
  }
  return s.stopped != 0;
}

// The one-reduction iteration (the GPU cluster loop) has no p_{k+1} . q_{k+1} of its own: it
// reduces, with r . r and r . z, the dots of its latest vectors z_k, w_k = A z_k, p_k and s_k = A
// p_k (by recurrence) that p_{k+1} = z_k + beta p_k and s_{k+1} = w_k + beta s_k expand into:
//   p.q = z.w + beta (z.s + p.w) + beta^2 p.s      (dots = {z.w, z.s + p.w, p.s})
// Chronopoulos & Gear (1989) use z.w - beta rz / alpha instead (z.s = p.w = -rz / alpha and
// p.s = rz_old / alpha by the residuals' M-orthogonality), one dot rather than three, but those
// identities fail in rounding on ill-conditioned systems: on Exnet without a preconditioner (tol
// 1e-10, double) it took 1.66x the two-pass CG's iterations, 1.27x with these dots
// (BENCHMARKS 13e).
// z_0 . w_0 at k = 1 or after a restart. step() then takes it as any loop's p.q.
CGS_HD double one_reduction_pq(const State& s, const double* dots, bool first_step) {
  if (first_step) return dots[0];
  return dots[0] + s.beta * dots[1] + s.beta * s.beta * dots[2];
}

// After a residual replacement at a stop on the recursive residual: the true residual's r . r
// and r . z at the same iteration. Returns true when the stop stands (its norm within
// `slack` x the threshold); otherwise the solve reopens from these values and its next step
// starts again from p = z.
CGS_HD bool replaced(State& s, double rr, double rz, double slack) {
  if (rr <= s.rr_threshold * slack * slack || s.converged_at < 0) return true;
  s.rr = rr;
  s.rz = rz;
  s.converged_at = -1;
  s.stopped = 0;
  return false;
}

// The vector updates of an iteration, one rounding each, the same expression in every loop.
// p on the GPU is one fused multiply-add (__fma_rn, as nvcc would contract it anyway); the
// host builds for x86-64 without FMA instructions, so there it is a multiply and an add.
template <typename T>
CGS_HD T next_p(T z, T beta, T p) {
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(T) == 4) {
    return __fmaf_rn(beta, p, z);
  } else {
    return __fma_rn(beta, p, z);
  }
#else
  return z + beta * p;
#endif
}

template <typename T>
CGS_HD T next_r(T r, T alpha, T q) {
  return r - alpha * q;
}

template <typename T>
CGS_HD T next_x(T x, T alpha, T p) {
  return x + alpha * p;
}

}  // namespace cgs::cg
