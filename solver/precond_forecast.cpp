// --precond auto's forecasts (solver/precond_forecast.hpp): counted quantities times a device's
// measured rates.
#include "solver/precond_forecast.hpp"

#include <algorithm>
#include <cstdio>

#include "solver/plan.hpp"  // kAlwaysTeamWork

namespace cgs {

namespace {

std::string seconds_text(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g ms", s * 1e3);
  return text;
}

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
  r.amg_setup_per_entry = 4e-7;
  r.cholesky_per_flop = 1e-9;
  r.cholesky_per_entry = 3e-7;
  r.solve_per_entry = 2e-8;
  const bool team = threads > 1 && double(rows) + entries >= double(kAlwaysTeamWork);
  r.per_level = team ? 20e-6 : 0;
  r.jacobi_per_entry = 1.5e-9;
  r.per_iteration = 1e-6;
  return r;
}

// The GPU (H100/H200, BENCHMARKS 10h-10m, 20p): to be measured again with the device chooser
// (issue 50 item 2). AMG's set-up on gen:poisson2d:3000 (45M entries) ~0.2 s, and a fixed part
// not measured yet (a guess); chol's factor is
// made on the host and uploaded; a level-scheduled solve pays a grid sync per level (ic0's
// iterations 0.3-1.5 ms on EPANET's systems); a small system's iteration 7-8 us.
ProbeRates gpu_rates() {
  ProbeRates r;
  r.measured_on = "GPU";
  r.least_setup = 2e-3;
  r.amg_setup_per_entry = 5e-9;
  r.amg_setup_fixed = 10e-3;  // a guess: launches and round trips of ~5 levels' phases
  r.cholesky_per_flop = 1e-9;
  r.cholesky_per_entry = 5e-7;
  r.solve_per_entry = 1e-9;
  r.per_level = 4e-6;
  r.jacobi_per_entry = 2e-11;
  r.per_iteration = 8e-6;
  return r;
}

}  // namespace

ProbeRates probe_rates(Device device, int threads, index_t rows, double entries) {
  if (device == Device::gpu) return gpu_rates();
  return host_rates(device == Device::serial ? 1 : threads, rows, entries);
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
  return text + seconds_text(e.seconds);
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
                e.factor_entries, e.levels, seconds_text(chol.seconds).c_str(),
                seconds_text(chol.setup).c_str(), seconds_text(chol.apply).c_str(),
                rule.chol_first ? "below" : "above", kNetworkJacobiIterations,
                seconds_text(jacobi).c_str());
  rule.why = text;
  rule.why += rule.chol_first ? ": chol first" : ": Jacobi first";
  return rule;
}

}  // namespace cgs
