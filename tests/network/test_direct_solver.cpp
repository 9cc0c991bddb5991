// network/direct_solver.cpp against independent references: Eigen's dense Cholesky on small
// systems, EPANET's own solution of Net3's first trial, and hand-made matrices whose failing
// pivot is known. Every backend runs: the native one and Eigen's SimplicialLDLT always, CHOLMOD
// when built with it.
#include <doctest/doctest.h>

#include <Eigen/Dense>
#include <cmath>
#include <random>
#include <sstream>
#include <tuple>

#include "formats/convert.hpp"
#include "formats/matrix_market.hpp"
#include "network/hydraulics.hpp"
#include "network/inp_reader.hpp"
#include "network/linear_solver.hpp"
#include "network/results_io.hpp"
#include "network_test_data.hpp"

namespace cgs::net {
namespace {

std::vector<DirectBackend> backends() {
  std::vector<DirectBackend> b{DirectBackend::native, DirectBackend::eigen};
  if (cholmod_available()) b.push_back(DirectBackend::cholmod);
  return b;
}

const char* name_of(DirectBackend b) {
  switch (b) {
    case DirectBackend::native: return "native";
    case DirectBackend::eigen: return "eigen";
    default: return "cholmod";
  }
}

CsrMatrix<double> from_triplets(index_t n, const std::vector<std::tuple<int, int, double>>& t) {
  std::vector<index_t> r, c;
  std::vector<double> v;
  for (const auto& [i, j, x] : t) r.push_back(i), c.push_back(j), v.push_back(x);
  return csr_from_triplets<double>(n, n, r, c, v);
}

// A random SPD matrix shaped like a water network's: a weighted graph Laplacian (a ring plus
// random chords) with a positive shift on some rows (the fixed-head nodes' couplings).
CsrMatrix<double> random_spd(index_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> weight(0.01, 100.0);
  std::uniform_int_distribution<int> node(0, n - 1);
  std::vector<double> diag(n, 0.0);
  std::vector<std::tuple<int, int, double>> t;
  auto add_edge = [&](int i, int j) {
    if (i == j) return;
    const double w = weight(rng);
    t.emplace_back(i, j, -w);
    t.emplace_back(j, i, -w);
    diag[i] += w;
    diag[j] += w;
  };
  for (int i = 0; i < n; ++i) add_edge(i, (i + 1) % n);
  for (int e = 0; e < n / 2; ++e) add_edge(node(rng), node(rng));
  for (int i = 0; i < n; i += 7) diag[i] += weight(rng);
  for (int i = 0; i < n; ++i) t.emplace_back(i, i, diag[i]);
  return from_triplets(n, t);  // duplicates (repeated chords) are summed
}

Eigen::MatrixXd dense(const CsrMatrix<double>& A) {
  Eigen::MatrixXd M = Eigen::MatrixXd::Zero(A.rows, A.cols);
  for (index_t i = 0; i < A.rows; ++i)
    for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) M(i, A.col_idx[k]) = A.values[k];
  return M;
}

double relative_error(const std::vector<double>& x, const Eigen::VectorXd& ref) {
  Eigen::Map<const Eigen::VectorXd> v(x.data(), static_cast<Eigen::Index>(x.size()));
  return (v - ref).norm() / ref.norm();
}

TEST_CASE("the direct solver equals a dense Cholesky solve on small SPD systems") {
  for (DirectBackend backend : backends()) {
    CAPTURE(name_of(backend));
    for (unsigned seed : {1u, 2u, 3u}) {
      CAPTURE(seed);
      const CsrMatrix<double> A = random_spd(60, seed);
      std::vector<double> b(A.rows);
      for (index_t i = 0; i < A.rows; ++i) b[i] = std::sin(1.0 + i);
      const Eigen::VectorXd ref =
          dense(A).llt().solve(Eigen::Map<const Eigen::VectorXd>(b.data(), A.rows));
      auto solver = make_direct_solver(backend);
      std::vector<double> x;
      const LinearSolveStats s = solver->solve(A, b, x);
      CHECK(s.converged);
      CHECK(s.failed_row == -1);
      CHECK(relative_error(x, ref) < 1e-12);
      CHECK(s.backward_error < 1e-14);
    }
  }
}

TEST_CASE("the symbolic analysis runs once per sparsity pattern") {
  for (DirectBackend backend : backends()) {
    CAPTURE(name_of(backend));
    auto solver = make_direct_solver(backend);
    CsrMatrix<double> A = random_spd(40, 7);
    std::vector<double> b(A.rows, 1.0), x;
    for (int round = 0; round < 3; ++round) {
      // New values on the same pattern (as every trial of a network): still exact.
      for (double& v : A.values) v *= 1.5;
      for (index_t i = 0; i < A.rows; ++i)
        for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
          if (A.col_idx[k] == i) A.values[k] += round;
      solver->solve(A, b, x);
      const Eigen::VectorXd ref =
          dense(A).llt().solve(Eigen::Map<const Eigen::VectorXd>(b.data(), A.rows));
      CHECK(relative_error(x, ref) < 1e-12);
    }
    CHECK(solver->name().find("analysed 1 time") != std::string::npos);
    const CsrMatrix<double> other = random_spd(40, 8);  // another pattern: analysed again
    solver->solve(other, b, x);
    const Eigen::VectorXd ref =
        dense(other).llt().solve(Eigen::Map<const Eigen::VectorXd>(b.data(), other.rows));
    CHECK(relative_error(x, ref) < 1e-12);
    CHECK(solver->name().find("analysed 2 times") != std::string::npos);
  }
}

TEST_CASE("the direct solver reproduces EPANET's own solution of Net3's first trial") {
  const std::string dir = test::repo_networks() + "/epanet-systems/";
  const auto A = read_matrix_market(dir + "Net3_step1.mtx.gz");
  const auto b = read_vector_market(dir + "Net3_step1_b.mtx.gz");
  const auto epanet_x = read_vector_market(dir + "Net3_step1_x.mtx.gz");
  for (DirectBackend backend : backends()) {
    CAPTURE(name_of(backend));
    std::vector<double> x;
    make_direct_solver(backend)->solve(A, b, x);
    REQUIRE(x.size() == epanet_x.size());
    double worst = 0;
    for (std::size_t i = 0; i < x.size(); ++i)
      worst = std::max(worst, std::abs(x[i] - epanet_x[i]) / std::max(1.0, std::abs(epanet_x[i])));
    CHECK(worst < 1e-9);  // heads of ~100 ft: agreement to rounding
  }
}

// Tridiagonal, diagonally dominant, except one row: the factorisation must stop there, whatever
// the ordering (every other pivot only depends on rows of positive pivots).
CsrMatrix<double> tridiagonal_with(index_t n, int bad_row, double bad_diagonal) {
  std::vector<std::tuple<int, int, double>> t;
  for (int i = 0; i < n; ++i) {
    t.emplace_back(i, i, i == bad_row ? bad_diagonal : 4.0);
    if (i + 1 < n) t.emplace_back(i, i + 1, -1.0), t.emplace_back(i + 1, i, -1.0);
  }
  return from_triplets(n, t);
}

TEST_CASE("a pivot <= 0 is reported with its row, not solved through") {
  for (DirectBackend backend : backends()) {
    CAPTURE(name_of(backend));
    for (double bad : {-3.0, 0.0}) {
      CAPTURE(bad);
      for (int row : {0, 7, 11}) {
        CAPTURE(row);
        auto solver = make_direct_solver(backend);
        std::vector<double> b(12, 1.0), x(12, 42.0);
        // A zero diagonal with its couplings removed is a singular row: build it apart.
        CsrMatrix<double> A = tridiagonal_with(12, row, bad);
        if (bad == 0.0) {
          for (index_t i = 0; i < A.rows; ++i)
            for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
              if ((i == row) != (A.col_idx[k] == row)) A.values[k] = 0.0;
        }
        const LinearSolveStats s = solver->solve(A, b, x);
        CHECK(s.failed_row == row);
        CHECK_FALSE(s.converged);
        CHECK(x == std::vector<double>(12, 42.0));  // untouched
      }
    }
  }
}

// A solver that fails where it is told to, to check what the trial loop does with a failure.
class FailingSolver final : public LinearSolver {
 public:
  FailingSolver(int row, int at_solve) : row_(row), at_solve_(at_solve) {}
  LinearSolveStats solve(const CsrMatrix<double>& A, const std::vector<double>& b,
                         std::vector<double>& x) override {
    if (++solves_ == at_solve_) {
      LinearSolveStats s;
      s.failed_row = row_;
      s.converged = false;
      return s;
    }
    return inner_->solve(A, b, x);
  }
  std::string name() const override { return "failing"; }

 private:
  int row_, at_solve_, solves_ = 0;
  std::unique_ptr<LinearSolver> inner_ = make_direct_solver();
};

Network parse(const std::string& text) {
  std::istringstream in(text);
  return parse_inp(in, "test.inp");
}

TEST_CASE("a factorisation that fails at a junction without a control valve stops with error 110") {
  const Network net = parse(
      "[OPTIONS]\nUNITS LPS\n[RESERVOIRS]\nR 100\n[JUNCTIONS]\nA 0 10\nB 0 5\n"
      "[PIPES]\nP1 R A 100 300 120\nP2 A B 100 200 120\n");
  FailingSolver solver(net.find_node("B"), 2);
  const HydraulicResults r = solve_hydraulics(net, solver);
  CHECK_FALSE(r.converged);
  CHECK(r.trials == 2);
  CHECK(r.error.find("EPANET error 110") != std::string::npos);
  CHECK(r.error.find("junction 'B'") != std::string::npos);
  CHECK(r.error.find("trial 2") != std::string::npos);
  REQUIRE(r.trial_reports.size() == 2);
  CHECK(r.trial_reports[1].failed_junction == net.find_node("B"));
  CHECK(r.trial_reports[1].fixed_valve == -1);
}

TEST_CASE("a junction fed only through an active PRV's upstream side: the valve is fixed open") {
  // U's only link is the PRV's upstream end: with the PRV active its row of the matrix is empty,
  // the factorisation fails at U, and EPANET's badvalve fixes the valve (XPRESSURE, an open valve
  // of small resistance) and repeats the trial. Then U carries D's head and no flow.
  const Network net = parse(
      "[OPTIONS]\nUNITS LPS\nACCURACY 1e-8\n[RESERVOIRS]\nR 100\n[JUNCTIONS]\nD 0 10\nU 0 0\n"
      "[PIPES]\nP R D 100 300 120\n[VALVES]\nV U D 300 PRV 30\n");
  for (DirectBackend backend : backends()) {
    CAPTURE(name_of(backend));
    auto solver = make_direct_solver(backend);
    const HydraulicResults r = solve_hydraulics(net, *solver);
    REQUIRE(r.error.empty());
    CHECK(r.converged);
    REQUIRE(!r.trial_reports.empty());
    CHECK(r.trial_reports[0].failed_junction == net.find_node("U"));
    CHECK(r.trial_reports[0].fixed_valve == net.find_link("V"));
    CHECK(r.trial_reports[1].trial == 1);  // the same trial, repeated
    CHECK(r.status[net.find_link("V")] == LinkStatus::xpressure);
    CHECK(std::abs(r.head[net.find_node("U")] - r.head[net.find_node("D")]) < 1e-9);
    CHECK(std::abs(user_flow(net, r.flow[net.find_link("V")])) < 1e-9);
    CHECK(user_flow(net, r.flow[net.find_link("P")]) == doctest::Approx(10).epsilon(1e-6));
  }
}

}  // namespace
}  // namespace cgs::net
