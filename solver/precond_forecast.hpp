// --precond auto's forecasts, made before anything is built: what a candidate's set-up and solves
// will cost, from counted quantities (rows, entries, a factor's flops and levels) times a
// device's measured rates (ProbeRates). The probe (precond_probe.cpp) reads them to order,
// skip and bound its candidates, and prints them as its reasons. The rates are per device, so
// that a chooser of the device (--device auto) can hold the same forecasts against each other.
#pragma once

#include <string>
#include <vector>

#include "formats/csr.hpp"
#include "solver/precond/cholesky.hpp"
#include "spmv/backend.hpp"  // Device

namespace cgs {

// What a device pays per counted quantity, measured (docs/preconditioners.md, "auto's rates").
struct ProbeRates {
  std::string measured_on;          // where the numbers come from, for the reasons
  double least_setup = 0;           // any candidate but Jacobi, before its first iteration
  double amg_setup_per_entry = 0;   // AMG's whole set-up per entry of A (strength to program)
  double amg_setup_fixed = 0;       // ... and besides (a GPU's launches per level and phase)
  double cholesky_per_flop = 0;     // chol's numeric factorization
  double cholesky_per_entry = 0;    // chol's ordering, symbolic analysis, levels and layout
  double solve_per_entry = 0;       // a triangular solve's (or a product's) time per entry
  double per_level = 0;             // a level-scheduled solve's wait between two levels
  double jacobi_per_entry = 0;      // a Jacobi-CG iteration per entry of A
  double per_iteration = 0;         // what any CG iteration pays besides (a GPU's launches)
};

// The rates of `device` for a system of `rows` and `entries`: on the CPU a solve's levels wait
// at a barrier only where the plan runs a team of threads (kAlwaysTeamWork and up; below, the
// serial loop, whose levels cost nothing).
ProbeRates probe_rates(Device device, int threads, index_t rows, double entries);

// The right-hand side a probe runs on: the solve's own where it is given and not zero (`own`
// true: the residual history the solve will see), else a fixed random one.
std::vector<double> probe_rhs(const std::vector<double>* rhs, index_t n, bool& own);

// Seconds as the choosers' reasons print them: "12.3 ms".
std::string format_ms(double s);

// CG's iterations to reach `target` from a probe's residual history ||r_0|| .. ||r_K|| that did
// not converge: the rate of its running minimum over the last third, extrapolated (infinite where
// the residual does not fall). Read by --precond auto's probes and --device auto's.
double forecast_iterations(const std::vector<double>& history, double target);

// The rates scaled by how Jacobi's probe ran against its forecast (`measured` seconds an
// iteration on `entries`): a machine shared with other jobs runs every phase slower alike
// (gen:poisson3d:50 under a load of 13 on 2 cores: Jacobi 4.9x its rate, AMG's set-up 4.8x),
// within [0.5, 20]. `factor` says by how much, for the reasons.
ProbeRates calibrated(const ProbeRates& rates, double measured, double entries, double& factor);

// AMG's set-up before it is built: A's entries at the device's rate per entry (the hierarchy's
// strength, aggregation, smoothed P, R A P and Lanczos all scale with them at an operator
// complexity of 1.3-1.6).
struct AmgSetupEstimate {
  index_t rows = 0;
  double entries = 0;
  double seconds = 0;
};
AmgSetupEstimate estimate_amg_setup(const CsrMatrix<double>& A, const ProbeRates& rates);
std::string describe(const AmgSetupEstimate& e, const ProbeRates& rates);

// chol's cost from its count: set-up (ordering and layout per entry of A, factorization per
// flop) and one apply (two triangular solves: the factor's entries, and its levels at the
// device's wait per level); `seconds` is the set-up and two applies (chol solves in 1-2
// iterations).
struct CholeskyForecast {
  double setup = 0, apply = 0, seconds = 0;
};
CholeskyForecast forecast_cholesky(const precond::CholeskyEstimate& e, double entries,
                                   const ProbeRates& rates);

// A network's graph (mean off-diagonal entries a row at most kNetworkDegree, from 201 rows up
// to kCholeskyCountedRows) sends chol first, before Jacobi's probe, only where chol's forecast
// (its count: factor, flops, levels) beats what Jacobi needs there at the least,
// kNetworkJacobiIterations iterations (EPANET's systems took 1,851-121,203): a tree with few
// loops has thousands of levels, each a wait on a device that synchronises per level.
inline constexpr double kNetworkDegree = 3.0;
inline constexpr index_t kCholeskyCountedRows = 200000;
inline constexpr double kNetworkJacobiIterations = 2000;
bool network_graph(const CsrMatrix<double>& A, index_t least_rows);
struct NetworkRule {
  bool chol_first = false;
  std::string why;  // the forecasts, for the plan's reasons
};
NetworkRule network_rule(const precond::CholeskyEstimate& e, const CsrMatrix<double>& A,
                         const ProbeRates& rates);

}  // namespace cgs
