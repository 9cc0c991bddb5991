// EPANET's factorisation on several threads (network/cholesky_subtrees.hpp) against
// precond::SparseCholesky on one: the same solution bit for bit on EPANET's trial systems (Net3;
// Exnet_EXN and BWSN_Network_2 from ../shared) for 1 to 4 threads, in the minimum degree order and
// the file's; the same failing row wherever the pivot <= 0 is (a subtree's or the top's); and
// partitions whose subtrees are closed below (a column's parent is in its part or the top).
#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>

#include "network/cholesky_subtrees.hpp"
#include "schedule_test_systems.hpp"

namespace cgs::net {
namespace {

std::vector<int> identity_order(index_t n) {
  std::vector<int> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  return order;
}

TEST_CASE("the subtree factorisation equals precond::SparseCholesky bit for bit on any threads") {
  for (const test::TrialSystem& system : test::trial_systems()) {
    CAPTURE(system.name);
    for (const bool amd : {true, false}) {
      CAPTURE(amd);
      precond::SparseCholesky reference;
      reference.analyse(
          system.A, amd ? precond::minimum_degree_order(system.A) : identity_order(system.A.rows));
      for (int threads = 1; threads <= 4; ++threads) {
        CAPTURE(threads);
        SubtreeCholesky subtrees;
        subtrees.analyse(reference, system.A.nnz(), threads, 0.0);
        for (unsigned seed = 0; seed < 2; ++seed) {
          CAPTURE(seed);
          const CsrMatrix<double> A = seed == 0 ? system.A : test::perturbed(system.A, seed);
          int failed = -1;
          REQUIRE(reference.factorize(A, &failed));
          REQUIRE(subtrees.factorize(A, &failed));
          std::vector<double> x_reference, x;
          reference.solve(system.b, x_reference);
          subtrees.solve(system.b, x);
          CHECK(x == x_reference);
          CHECK(test::relative_residual(A, system.b, x) < 1e-10);
        }
      }
    }
  }
}

TEST_CASE("the subtree factorisation stops at the pivot the serial one stops at") {
  for (const test::TrialSystem& system : test::trial_systems()) {
    CAPTURE(system.name);
    precond::SparseCholesky reference;
    reference.analyse(system.A, precond::minimum_degree_order(system.A));
    SubtreeCholesky subtrees;
    subtrees.analyse(reference, system.A.nnz(), 2, 0.0);
    // Rows in the subtrees and in the top (the last eliminated), two at once: the earlier wins.
    const std::vector<int>& order = reference.order();
    const index_t n = system.A.rows;
    const std::vector<std::vector<index_t>> cases{
        {0}, {n / 2}, {n - 1}, {order[n - 1]}, {order[n / 3], order[n - 2]}, {n - 1, 0}};
    for (const std::vector<index_t>& rows : cases) {
      for (const double value : {0.0, -1.0, std::nan("")}) {
        CAPTURE(rows.front());
        CAPTURE(value);
        CsrMatrix<double> A = system.A;
        for (index_t row : rows) A = test::with_diagonal(A, row, value);
        int reference_failed = -2, failed = -2;
        CHECK_FALSE(reference.factorize(A, &reference_failed));
        CHECK_FALSE(subtrees.factorize(A, &failed));
        CHECK(failed == reference_failed);
      }
    }
    int failed = -1;  // and the next system factorises as before
    REQUIRE(subtrees.factorize(system.A, &failed));
    REQUIRE(reference.factorize(system.A, &failed));
    std::vector<double> x, x_reference;
    subtrees.solve(system.b, x);
    reference.solve(system.b, x_reference);
    CHECK(x == x_reference);
  }
}

TEST_CASE("a partition holds every column once, each part closed below its columns") {
  for (const test::TrialSystem& system : test::trial_systems()) {
    CAPTURE(system.name);
    precond::SparseCholesky analysed;
    analysed.analyse(system.A, precond::minimum_degree_order(system.A));
    const CholeskySchedule s = compile_schedule(analysed, system.A.nnz());
    for (int threads = 1; threads <= 4; ++threads) {
      CAPTURE(threads);
      const SubtreePartition p = partition_subtrees(s, threads, 0.0);
      std::vector<int> part_of(s.n, -2);
      for (std::size_t t = 0; t < p.parts.size(); ++t)
        for (int j : p.parts[t]) {
          CHECK(part_of[j] == -2);
          part_of[j] = static_cast<int>(t);
        }
      for (int j : p.top) {
        CHECK(part_of[j] == -2);
        part_of[j] = -1;
      }
      CHECK(std::count(part_of.begin(), part_of.end(), -2) == 0);
      for (int j = 0; j < s.n; ++j) {
        if (s.col_ptr[j] == s.col_ptr[j + 1]) continue;  // a root
        const int parent = s.row[s.col_ptr[j]];
        CHECK((part_of[parent] == part_of[j] || part_of[parent] == -1));
        if (part_of[j] == -1) CHECK(part_of[parent] == -1);  // the top is closed above
      }
      for (const auto& part : p.parts) CHECK(std::is_sorted(part.begin(), part.end()));
      CHECK(std::is_sorted(p.top.begin(), p.top.end()));
      // A network's tree shares out: every thread has columns, the top is the smaller share.
      // Below kMinSubtreeWork operations (these networks' factorisations) one thread does it.
      CHECK(partition_subtrees(s, threads).parts.size() == 1);
      if (threads > 1 && s.n > 10000) {
        CHECK(static_cast<int>(p.parts.size()) == threads);
        for (const auto& part : p.parts) CHECK(!part.empty());
        CHECK(p.top.size() * 10 < static_cast<std::size_t>(s.n));
      }
    }
  }
}

}  // namespace
}  // namespace cgs::net
