// The compiled Cholesky schedule (network/cholesky_schedule.hpp) run on the host against
// precond::SparseCholesky, whose order of operations it replays: the same solution bit for bit on EPANET's
// trial systems (Net3; Exnet_EXN and BWSN_Network_2 from ../shared), in the minimum degree order
// and in the file's order, on perturbed values; the same failing row; and, independently of both,
// a small residual.
#include <doctest/doctest.h>

#include <numeric>

#include "network/cholesky_schedule.hpp"
#include "schedule_test_systems.hpp"

namespace cgs::net {
namespace {

std::vector<int> identity_order(index_t n) {
  std::vector<int> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  return order;
}

TEST_CASE("the schedule's executor equals precond::SparseCholesky bit for bit on EPANET's systems") {
  for (const test::TrialSystem& system : test::trial_systems()) {
    CAPTURE(system.name);
    for (const bool amd : {true, false}) {
      CAPTURE(amd);
      precond::SparseCholesky reference;
      reference.analyse(system.A,
                        amd ? precond::minimum_degree_order(system.A) : identity_order(system.A.rows));
      const CholeskySchedule schedule = compile_schedule(reference, system.A.nnz());
      CHECK(schedule.factor_slots() == system.A.rows + reference.factor_nonzeros());
      CHECK(schedule.updates() > 0);
      CholeskyScheduleExecutor executor(schedule);
      for (unsigned seed = 0; seed < 3; ++seed) {
        CAPTURE(seed);
        const CsrMatrix<double> A = seed == 0 ? system.A : test::perturbed(system.A, seed);
        int reference_failed = -1, failed = -1;
        REQUIRE(reference.factorize(A, &reference_failed));
        REQUIRE(executor.factorize(A, &failed));
        std::vector<double> x_reference, x;
        reference.solve(system.b, x_reference);
        executor.solve(system.b, x);
        CHECK(x == x_reference);  // the same operations in the same order
        CHECK(test::relative_residual(A, system.b, x) < 1e-10);
      }
    }
  }
}

TEST_CASE("the schedule's executor stops at the pivot precond::SparseCholesky stops at") {
  const test::TrialSystem system = test::trial_systems().front();  // Net3
  precond::SparseCholesky reference;
  reference.analyse(system.A, precond::minimum_degree_order(system.A));
  const CholeskySchedule schedule = compile_schedule(reference, system.A.nnz());
  CholeskyScheduleExecutor executor(schedule);
  for (const index_t row : {index_t{0}, system.A.rows / 2, system.A.rows - 1}) {
    for (const double value : {0.0, -1.0, std::nan("")}) {
      CAPTURE(row);
      CAPTURE(value);
      const CsrMatrix<double> A = test::with_diagonal(system.A, row, value);
      int reference_failed = -2, failed = -2;
      const bool reference_ok = reference.factorize(A, &reference_failed);
      CHECK_FALSE(reference_ok);
      CHECK_FALSE(executor.factorize(A, &failed));
      CHECK(failed == reference_failed);
    }
  }
  // After a failure the next system factorises as before (nothing left over from the failure).
  int failed = -1;
  REQUIRE(executor.factorize(system.A, &failed));
  REQUIRE(reference.factorize(system.A, &failed));
  std::vector<double> x, x_reference;
  executor.solve(system.b, x);
  reference.solve(system.b, x_reference);
  CHECK(x == x_reference);
}

TEST_CASE("the schedule of a diagonal or one-row system has no updates") {
  CsrMatrix<double> D;
  D.rows = D.cols = 3;
  D.row_ptr = {0, 1, 2, 3};
  D.col_idx = {0, 1, 2};
  D.values = {4.0, 9.0, 16.0};
  precond::SparseCholesky c;
  c.analyse(D, identity_order(3));
  const CholeskySchedule s = compile_schedule(c, D.nnz());
  CHECK(s.updates() == 0);
  CHECK(s.pivot_terms.empty());
  CholeskyScheduleExecutor executor(s);
  int failed = -1;
  REQUIRE(executor.factorize(D, &failed));
  std::vector<double> x;
  executor.solve({8.0, 9.0, 4.0}, x);
  CHECK(x == std::vector<double>{2.0, 1.0, 0.25});
  CHECK_THROWS_AS(compile_schedule(precond::SparseCholesky(), 3), std::logic_error);
}

}  // namespace
}  // namespace cgs::net
