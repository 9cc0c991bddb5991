#include "solver/distributed/distributed_cg.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>

#include "formats/types.hpp"
#include "solver/cg_result.hpp"
#include "solver/cg_step.hpp"

namespace cgs::dist {

CgVariant parse_cg_variant(const std::string& name) {
  if (name == "classic") return CgVariant::classic;
  if (name == "single-reduction") return CgVariant::single_reduction;
  throw InputError("--cg-variant must be classic or single-reduction, got '" + name + "'");
}

std::string to_string(CgVariant variant) {
  return variant == CgVariant::classic ? "classic" : "single-reduction";
}

DistLoop parse_dist_loop(const std::string& name) {
  if (name == "fused") return DistLoop::fused;
  if (name == "plain") return DistLoop::plain;
  throw InputError("--dist-loop must be fused or plain, got '" + name + "'");
}

std::string to_string(DistLoop loop) { return loop == DistLoop::fused ? "fused" : "plain"; }

bool fused_offered(const RankOps& ops, const DistributedCgOptions& options) {
  return options.loop == DistLoop::fused && options.variant == CgVariant::classic &&
         ops.has_fused_passes();
}

namespace {

// A vector in ops' memory, released at scope exit.
class Vec {
 public:
  explicit Vec(RankOps& ops) : ops_(ops), data_(ops.allocate()) {}
  ~Vec() { ops_.release(data_); }
  Vec(const Vec&) = delete;
  Vec& operator=(const Vec&) = delete;
  double* get() const { return data_; }
  operator double*() const { return data_; }

 private:
  RankOps& ops_;
  double* data_;
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

constexpr double kReplaceDrop = 1e-2;

struct Loop {
  RankOps& ops;
  const DistributedCgOptions& options;
  std::vector<double> history;  // r.r per iteration, when recorded
  long replacements = 0, fallbacks = 0;

  void record(double rr) {
    if (options.cg.record_history) history.push_back(rr);
  }
  void report(long k, const cg::State& s) {
    if (options.cg.progress) options.cg.progress(k, std::sqrt(s.rr / s.bb));
  }
  DistributedCgResult finish(const cg::State& s, long k, double seconds) {
    DistributedCgResult result{result_of(s), replacements, fallbacks};
    if (s.breakdown_at < 0) result.cg.iterations = k;
    result.cg.solve_seconds = seconds;
    if (options.cg.record_history) set_history(result.cg, history);
    return result;
  }
};

DistributedCgResult classic(Loop& loop, const double* b, double* x, cg::State s) {
  RankOps& ops = loop.ops;
  const auto start = std::chrono::steady_clock::now();
  Vec r(ops), z_storage(ops), p(ops), q(ops);
  double* z = ops.identity_preconditioner() ? r.get() : z_storage.get();  // z = r for M = I
  ops.multiply(x, q);
  ops.residual(b, q, r);
  if (z != r) ops.precondition(r, z);
  double sums[2];
  const DotPair residual_dots[2] = {{r, r}, {r, z}};
  ops.dots(residual_dots, 2, sums);
  cg::started(s, sums[0], sums[1]);
  loop.record(sums[0]);
  ops.copy(z, p);
  const long max_iters = loop.options.cg.max_iters;
  long k = 0;
  while (!s.stopped && k < max_iters) {
    ++k;
    ops.multiply(p, q);
    const DotPair pq{p, q};
    ops.dots(&pq, 1, sums);
    if (!cg::step(s, sums[0], k)) break;
    ops.update_xr_precondition_dots(s.alpha, p, q, x, r, z, sums);
    loop.record(sums[0]);
    const bool stop = cg::stepped(s, sums[0], sums[1], k);
    loop.report(k, s);
    if (stop) break;
    ops.update_p(s.beta, z, p);
  }
  return loop.finish(s, k, seconds_since(start));
}

// Classic CG in two passes over the rows per iteration (solver/fused/cpu_passes.hpp's order):
//   pass A(k): p_k = z + beta_k p_{k-1} formed inside q = A p_k, x += alpha_{k-1} p_{k-1}; p.q
//   pass B(k): r -= alpha_k q, z = M^-1 r; r.r and r.z
// one reduction after each. x lags one iteration; the last step's update is made at the end. p
// lives in two buffers, since a row's neighbours still read p_{k-1} while pass A writes p_k.
DistributedCgResult fused_classic(Loop& loop, const double* b, double* x, cg::State s) {
  RankOps& ops = loop.ops;
  const auto start = std::chrono::steady_clock::now();
  Vec r(ops), z_storage(ops), p_old(ops), p_new(ops), q(ops);  // p_old: p_0 = 0, so p_1 = z_0
  double* z = ops.identity_preconditioner() ? r.get() : z_storage.get();
  ops.multiply(x, q);
  ops.residual(b, q, r);
  double sums[2];
  ops.fused_residual(0.0, q, r, z, sums);  // alpha = 0: r stays b - A x; z = M^-1 r and the dots
  ops.reduce(sums, 2);
  cg::started(s, sums[0], sums[1]);
  loop.record(sums[0]);
  const long max_iters = loop.options.cg.max_iters;
  double beta = 0, alpha_prev = 0;
  double* p_k1 = p_old;  // p_{k-1}
  double* p_k = p_new;   // p_k
  long k = 0;
  while (!s.stopped && k < max_iters) {
    ++k;
    double pq = ops.fused_product(beta, alpha_prev, z, p_k1, p_k, q, x);
    ops.reduce(&pq, 1);
    if (!cg::step(s, pq, k)) break;  // x stays at iteration k - 1
    ops.fused_residual(s.alpha, q, r, z, sums);
    ops.reduce(sums, 2);
    loop.record(sums[0]);
    const bool stop = cg::stepped(s, sums[0], sums[1], k);
    loop.report(k, s);
    if (stop) {
      ops.fused_update_x(s.alpha, p_k, x);
      break;
    }
    beta = s.beta;
    alpha_prev = s.alpha;
    std::swap(p_k1, p_k);
  }
  return loop.finish(s, k, seconds_since(start));
}

// Chronopoulos-Gear. With u = M^-1 r, w = A u, p = u + beta p, s = A p = w + beta s:
//   p.A p = u.A u + beta^2 p_old.A p_old + 2 beta u.A p_old, and u.A p_old = r.u / ... gives
//   p.q = w.u - beta * (r.u) / alpha_old   (Chronopoulos & Gear, J. Comput. Appl. Math. 1989)
// so one reduction (r.r, r.u, w.u) per iteration feeds cg::stepped (beta) and cg::step (alpha).
DistributedCgResult single_reduction(Loop& loop, const double* b, double* x, cg::State s) {
  RankOps& ops = loop.ops;
  const auto start = std::chrono::steady_clock::now();
  Vec r(ops), u_storage(ops), w(ops), p(ops), q(ops), t(ops);             // q: s = A p; t: for A x
  double* u = ops.identity_preconditioner() ? r.get() : u_storage.get();  // u = r for M = I
  ops.multiply(x, t);
  ops.residual(b, t, r);
  if (u != r) ops.precondition(r, u);
  ops.multiply(u, w);
  double sums[3];
  const DotPair dots[3] = {{r, r}, {r, u}, {w, u}};
  ops.dots(dots, 3, sums);
  cg::started(s, sums[0], sums[1]);
  loop.record(sums[0]);
  const long max_iters = loop.options.cg.max_iters;
  const long replace_every = loop.options.replace_every;
  double rr_peak = sums[0];  // the largest r.r since the last replacement (the criterion's)
  bool replace_next = false;
  long k = 0;
  double beta = 0;                          // p_1 = u_0 (p and q start at zero)
  if (!s.stopped) cg::step(s, sums[2], 1);  // p_1 . A p_1 = u_0 . w_0
  bool p_formed = false;  // p_k and q = A p_k formed already (after a fallback below)
  while (!s.stopped && k < max_iters) {
    ++k;
    if (!p_formed) {
      ops.update_p(beta, u, p);  // p_k = u_{k-1} + beta_k p_{k-1}
      ops.update_p(beta, w, q);  // s_k = w_{k-1} + beta_k s_{k-1} = A p_k
    }
    p_formed = false;
    ops.update_xr(s.alpha, p, q, x, r);
    const bool replace = replace_every > 0 ? k % replace_every == 0 : replace_next;
    if (replace) {
      // Residual replacement: the recurrences for r and s drift from b - A x and A p.
      ops.multiply(x, t);
      ops.residual(b, t, r);
      ops.multiply(p, q);
      rr_peak = 0;
      replace_next = false;
      ++loop.replacements;
    }
    if (u != r) ops.precondition(r, u);
    ops.multiply(u, w);
    ops.dots(dots, 3, sums);
    loop.record(sums[0]);
    rr_peak = std::max(rr_peak, sums[0]);
    // Reliable updating (Sleijpen and van der Vorst, 1996): replace once ||r|| has fallen 100-fold
    // since the last replacement, so a handful of times in a solve, not at a fixed period that
    // would disturb the recurrences of an ill-conditioned system more often than it needs.
    replace_next = sums[0] < kReplaceDrop * kReplaceDrop * rr_peak;
    const double alpha_old = s.alpha;
    const bool stop = cg::stepped(s, sums[0], sums[1], k);
    loop.report(k, s);
    if (stop) break;
    beta = s.beta;
    double pq = sums[2] - beta * s.rz / alpha_old;
    if (replace || !(pq > 0) || !std::isfinite(pq)) {
      // The recurrence can lose p.Ap to cancellation on an ill-conditioned system, where the
      // classic iteration would go on: form p and A p and take the dot as classic CG does (one
      // more reduction, this iteration only); a true breakdown stays one.
      ops.update_p(beta, u, p);
      ops.multiply(p, q);
      const DotPair pq_pair{p, q};
      ops.dots(&pq_pair, 1, &pq);
      p_formed = true;
      ++loop.fallbacks;
    }
    if (!cg::step(s, pq, k + 1)) break;
  }
  return loop.finish(s, k, seconds_since(start));
}

}  // namespace

DistributedCgResult distributed_cg(RankOps& ops, const double* b, double* x,
                                   const DistributedCgOptions& options) {
  double bb = 0;
  const DotPair b_dot{b, b};
  ops.dots(&b_dot, 1, &bb);
  const cg::State s = cg::begin(bb, options.cg.tol, options.cg.atol, options.cg.max_iters);
  Loop loop{ops, options, {}};
  if (s.zero_rhs) {  // b = 0: x = 0
    ops.upload(std::vector<double>(ops.local_rows(), 0.0), x);
    return {result_of(s), 0, 0, DistLoop::plain};
  }
  if (fused_offered(ops, options)) {
    DistributedCgResult result = fused_classic(loop, b, x, s);
    result.loop = DistLoop::fused;
    return result;
  }
  return options.variant == CgVariant::classic ? classic(loop, b, x, s)
                                               : single_reduction(loop, b, x, s);
}

}  // namespace cgs::dist
