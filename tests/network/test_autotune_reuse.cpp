// --format auto in netsolve (network/cg_solver.cpp): the inspector runs on the first linear
// system only, and every later system with the same sparsity pattern (every trial of a network)
// only sets its values on the solver it built, giving what that choice asked for by hand gives.
#include <doctest/doctest.h>

#include "network/hydraulics.hpp"
#include "network/inp_reader.hpp"
#include "network_test_data.hpp"
#include "solver/inspector.hpp"
#include "test_matrices.hpp"

namespace cgs::net {
namespace {

SolveRequest serial_options(bool automatic) {
  SolveRequest o;
  o.backend.device = Device::serial;
  o.format_auto = automatic;
  o.cg.tol = 1e-12;
  o.cg.max_iters = 200000;
  return o;
}

TEST_CASE("netsolve --format auto inspects the first system only and reuses its choice") {
  const Network net = read_inp(test::repo_networks() + "/Net3.inp");
  auto solver = make_cg_solver(serial_options(true));
  const long before = inspector_runs();
  const HydraulicResults automatic = solve_hydraulics(net, *solver);
  const AutotuneRecord a = solver->autotune();

  REQUIRE(automatic.trials >= 2);
  CHECK(inspector_runs() - before == 1);
  CHECK(a.inspections == 1);
  CHECK(a.reused == automatic.trials - 1);  // every later trial only set its values
  CHECK_FALSE(a.reason.empty());
  CHECK(solver->name().find("auto:" + to_string(a.format)) != std::string::npos);

  // The same choice by hand: the same trials, iterations and heads.
  SolveRequest by_hand = serial_options(false);
  by_hand.backend.format = a.format;
  by_hand.sort_rows = a.sort_rows;
  auto hand_solver = make_cg_solver(by_hand);
  const HydraulicResults hand = solve_hydraulics(net, *hand_solver);
  CHECK(inspector_runs() - before == 1);
  CHECK(hand_solver->autotune().inspections == 0);
  REQUIRE(hand.trials == automatic.trials);
  for (std::size_t i = 0; i < hand.trial_reports.size(); ++i)
    CHECK(hand.trial_reports[i].cg_iterations == automatic.trial_reports[i].cg_iterations);
  CHECK(hand.head == automatic.head);
}

TEST_CASE("a system with another sparsity pattern is inspected again") {
  auto solver = make_cg_solver(serial_options(true), RefinementOptions{1e-15, 1});
  const CsrMatrix<double> A = cgs::testing::poisson2d(12), B = cgs::testing::poisson2d(13);
  std::vector<double> x;
  for (const CsrMatrix<double>* M : {&A, &A, &B, &B}) {
    x.clear();
    const std::vector<double> b(M->rows, 1.0);
    CHECK(solver->solve(*M, b, x).converged);
  }
  CHECK(solver->autotune().inspections == 2);
  CHECK(solver->autotune().reused == 2);
}

}  // namespace
}  // namespace cgs::net
