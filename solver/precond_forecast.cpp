// --precond auto's forecasts (solver/precond_forecast.hpp): counted quantities times a device's
// measured rates.
#include "solver/precond_forecast.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>

#include "solver/plan.hpp"  // kAlwaysTeamWork
#include "solver/solver.hpp"  // norm2

namespace cgs {

std::string format_ms(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g ms", s * 1e3);
  return text;
}

// The solve's own right-hand side where it is known: its residual history is the one the solve
// will see (a random one made ic0 look 8x slower than it is on BWSN_Network_2 and bjacobi:64
// converge where it does not); else a fixed random one. `own` says which.
std::vector<double> probe_rhs(const std::vector<double>* rhs, index_t n, bool& own) {
  own = rhs && rhs->size() == std::size_t(n) && norm2(*rhs) > 0;
  if (own) return *rhs;
  std::vector<double> b(static_cast<std::size_t>(n));
  std::mt19937_64 rng(20261123);
  std::uniform_real_distribution<double> uniform(-1, 1);
  for (double& v : b) v = uniform(rng);
  return b;
}

namespace {

// The host: this 2-core VM (AMD EPYC, 2 threads, shared with other jobs, 2026-11-29), medians of
// cgsolve's own phase times (docs/preconditioners.md, "auto's rates"):
// - AMG's set-up over A's entries: gen:poisson2d:300 4.3e-7 s, gen:poisson2d:1000 2.8e-7 (idle,
//   BENCHMARKS 17) to 1.7e-6 (load 13), gen:poisson3d:50 1.2e-6, bcsstk13 5.5e-7.
// - chol's analysis and values past its flops, per factor entry: 1.2e-7 (bcsstk13's analysis)
//   to 2.8e-7 (Exnet step 3), 6.6e-7 under load (gen:waternet:100000); its flops ~1 Gflop/s
//   (Eigen's simplicial; 5e-9 s a flop under load, gen:poisson2d:300).
// - a serial triangular solve per factor entry: 1.6e-8 (Exnet) to 4e-8 (gen:waternet:100000).
// - a team's wait per level: 2 threads at barriers, 5-20 us idle, up to 170 us under the
//   shared load (bcsstk13's chol: 1,210 level steps an apply, 0.21 s against 2.5 ms serial).
// - a Jacobi-CG iteration per entry: 1.0e-9 (gen:poisson2d:300, 2 threads) to 1.5e-9 (serial).
ProbeRates host_rates(int threads, index_t rows, double entries) {
  ProbeRates r;
  r.measured_on = "host";
  r.least_setup = 0.2e-3;
  // AMG's set-up runs on every thread: 4.1-4.5e-8 s an entry with 16 on the H200's host
  // (BENCHMARKS §27), the 2-thread rate over threads / 2.
  r.amg_setup_per_entry = threads > 2 ? 4e-7 * 2 / threads : 4e-7;
  r.cholesky_per_flop = 1e-9;
  r.cholesky_per_entry = 3e-7;
  r.solve_per_entry = 2e-8;
  const bool team = threads > 1 && double(rows) + entries >= double(kAlwaysTeamWork);
  r.per_level = team ? 20e-6 : 0;
  r.jacobi_per_entry = 1.5e-9;
  r.per_iteration = 1e-6;
  return r;
}

// The GPU: one H200 (cgsolve's phase times, medians, BENCHMARKS §27, 2026-11-29): AMG's
// set-up 8.9-10.4 ms on systems of 0.05-0.45M entries, 39.7 ms on gen:poisson2d:1000 (5M),
// 48 ms on gen:poisson3d:100 (7M), 171 ms on gen:poisson2d:3000 (45M): ~8 ms and 3.5e-9 s an
// entry. A Jacobi-CG iteration: 5-11 us up to 0.45M entries, 54 us at 5M, 60 us at 7M, 378 us
// at 45M: ~5 us and 1e-11 s an entry. chol's factor is made on the host and uploaded; a
// level-scheduled solve pays a grid sync per level (ic0's iterations 0.3-1.5 ms on EPANET's
// systems).
ProbeRates gpu_rates() {
  ProbeRates r;
  r.measured_on = "GPU";
  r.least_setup = 2e-3;
  r.amg_setup_per_entry = 3.5e-9;
  r.amg_setup_fixed = 8e-3;
  r.cholesky_per_flop = 1e-9;
  r.cholesky_per_entry = 5e-7;
  r.solve_per_entry = 1e-9;
  r.per_level = 4e-6;
  r.jacobi_per_entry = 1e-11;
  r.per_iteration = 5e-6;
  return r;
}

}  // namespace

ProbeRates probe_rates(Device device, int threads, index_t rows, double entries) {
  if (device == Device::gpu) return gpu_rates();
  return host_rates(device == Device::serial ? 1 : threads, rows, entries);
}

// Iterations to reach tol from the history ||r_0|| .. ||r_K|| of a probe that did not converge:
// the rate over its last third, extrapolated. Infinite when the residual does not fall. (The
// slower of the last third's and the last sixth's rates was tried: on BWSN_Network_2 it called
// every candidate but fsai:2 not falling, ic0 included, which converges in 460; CG's running
// minimum plateaus for longer than a sixth of 150 iterations.)
double forecast_iterations(const std::vector<double>& history, double target) {
  const std::size_t K = history.size() - 1, half = K - K / 3;
  if (K < 2 || history[K] <= 0) return double(K);
  // CG's residual norm is not monotone: the rate of its running minimum.
  double low_half = history[0];
  for (std::size_t k = 0; k <= half; ++k) low_half = std::min(low_half, history[k]);
  double low = low_half;
  for (std::size_t k = half; k <= K; ++k) low = std::min(low, history[k]);
  const double rate = std::pow(low / low_half, 1.0 / double(K - half));
  if (!(rate < 1)) return std::numeric_limits<double>::infinity();
  return double(K) + std::max(0.0, std::log(target / low) / std::log(rate));
}

ProbeRates calibrated(const ProbeRates& rates, double measured, double entries, double& factor) {
  const double nominal = entries * rates.jacobi_per_entry + rates.per_iteration;
  factor = nominal > 0 && measured > 0 ? std::clamp(measured / nominal, 0.5, 20.0) : 1.0;
  ProbeRates r = rates;
  for (double* rate : {&r.amg_setup_per_entry, &r.amg_setup_fixed, &r.cholesky_per_flop,
                       &r.cholesky_per_entry,
                       &r.solve_per_entry, &r.per_level, &r.jacobi_per_entry})
    *rate *= factor;
  return r;
}

AmgSetupEstimate estimate_amg_setup(const CsrMatrix<double>& A, const ProbeRates& rates) {
  AmgSetupEstimate e;
  e.rows = A.rows;
  e.entries = double(A.nnz());
  e.seconds = rates.least_setup + rates.amg_setup_fixed + e.entries * rates.amg_setup_per_entry;
  return e;
}

std::string describe(const AmgSetupEstimate& e, const ProbeRates& rates) {
  char text[160];
  std::snprintf(text, sizeof text, "its estimated set-up, %.0f entries x %.2g s (the %s's rate), ",
                e.entries, rates.amg_setup_per_entry, rates.measured_on.c_str());
  return text + format_ms(e.seconds);
}

CholeskyForecast forecast_cholesky(const precond::CholeskyEstimate& e, double entries,
                                   const ProbeRates& rates) {
  CholeskyForecast f;
  f.setup = rates.least_setup + e.flops * rates.cholesky_per_flop +
            std::max(e.factor_entries, entries) * rates.cholesky_per_entry;
  f.apply = 2 * (e.factor_entries * rates.solve_per_entry + e.levels * rates.per_level);
  f.seconds = f.setup + 2 * (f.apply + entries * rates.jacobi_per_entry + rates.per_iteration);
  return f;
}

bool network_graph(const CsrMatrix<double>& A, index_t least_rows) {
  return A.rows > least_rows && A.rows <= kCholeskyCountedRows &&
         double(A.nnz() - A.rows) <= kNetworkDegree * double(A.rows);
}

NetworkRule network_rule(const precond::CholeskyEstimate& e, const CsrMatrix<double>& A,
                         const ProbeRates& rates) {
  NetworkRule rule;
  const double entries = double(A.nnz());
  if (!e.refusal.empty()) {
    rule.why = "a network's graph, but " + e.refusal;
    return rule;
  }
  const CholeskyForecast chol = forecast_cholesky(e, entries, rates);
  const double jacobi = kNetworkJacobiIterations *
                        (entries * rates.jacobi_per_entry + rates.per_iteration);
  rule.chol_first = chol.seconds < jacobi;
  char text[300];
  std::snprintf(text, sizeof text,
                "a network's graph: chol's factor %.0f entries, %.0f levels a solve, forecast "
                "%s (set-up %s, an apply %s) %s Jacobi's %.0f iterations at the least, %s",
                e.factor_entries, e.levels, format_ms(chol.seconds).c_str(),
                format_ms(chol.setup).c_str(), format_ms(chol.apply).c_str(),
                rule.chol_first ? "below" : "above", kNetworkJacobiIterations,
                format_ms(jacobi).c_str());
  rule.why = text;
  rule.why += rule.chol_first ? ": chol first" : ": Jacobi first";
  return rule;
}

}  // namespace cgs
