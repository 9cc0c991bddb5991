// IC(0)'s set-up (issue 21 item 3): the level schedules of both triangular solves against their
// definition, the factor against a dense IC(0) written here, the transpose read off A's
// symmetric pattern, and the planner's choice to skip reverse Cuthill-McKee where A's rows are
// already numbered as wavefronts (a grid in natural order) but not on a water network.
#include <doctest/doctest.h>
#include <omp.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "formats/generators.hpp"
#include "formats/matrix_market.hpp"
#include "formats/row_order.hpp"
#include "precond_test_util.hpp"
#include "solver/plan.hpp"
#include "solver/precond/sparse_parts.hpp"
#include "solver/solve.hpp"
#include "test_matrices.hpp"

using namespace cgs;
using namespace cgs::testing;

namespace {

// A row's level by the definition, relaxed until nothing changes (no row order assumed): one
// past the highest level of the rows it reads. Forward: row i reads its columns j < i; backward
// (L^T): row j reads the rows i > j with an entry (i, j). Grouped with each level's rows
// ascending (forward) or descending (backward).
std::vector<std::vector<index_t>> reference_levels(const CsrMatrix<double>& A, bool forward) {
  const index_t n = A.rows;
  std::vector<index_t> level(std::size_t(n), 0);
  for (bool changed = true; changed;) {
    changed = false;
    for (index_t i = 0; i < n; ++i)
      for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
        const index_t j = A.col_idx[k];
        if (j >= i) continue;
        const index_t reader = forward ? i : j, read = forward ? j : i;
        if (level[reader] < level[read] + 1) {
          level[reader] = level[read] + 1;
          changed = true;
        }
      }
  }
  const index_t levels = n == 0 ? 0 : *std::max_element(level.begin(), level.end()) + 1;
  std::vector<std::vector<index_t>> sets(static_cast<std::size_t>(levels));
  for (index_t step = 0; step < n; ++step) {
    const index_t i = forward ? step : n - 1 - step;
    sets[std::size_t(level[i])].push_back(i);
  }
  return sets;
}

void check_schedule(const precond::LevelSchedule& s,
                    const std::vector<std::vector<index_t>>& reference) {
  REQUIRE(s.levels() == index_t(reference.size()));
  REQUIRE(s.start.front() == 0);
  REQUIRE(s.start.back() == index_t(s.rows.size()));
  for (index_t l = 0; l < s.levels(); ++l) {
    CAPTURE(l);
    CHECK(std::vector<index_t>(s.level(l), s.level(l) + s.size(l)) == reference[std::size_t(l)]);
  }
}

CsrMatrix<double> diagonal_only(index_t n) {
  std::vector<index_t> rows, cols;
  std::vector<double> vals;
  for (index_t i = 0; i < n; ++i) rows.push_back(i), cols.push_back(i), vals.push_back(2.0 + i);
  return csr_from_triplets(n, n, rows, cols, vals);
}

// A with `extra` rows joined to nothing (empty off-diagonal rows) spread among its own: row r of
// the result is A's row r - r / (gap + 1) unless it is one of the isolated rows.
CsrMatrix<double> with_isolated_rows(const CsrMatrix<double>& A, index_t gap) {
  const index_t n = A.rows, extra = n / gap, total = n + extra;
  std::vector<index_t> new_of(static_cast<std::size_t>(n));
  std::vector<bool> isolated(static_cast<std::size_t>(total), false);
  for (index_t i = 0, at = 0; i < n; ++i, ++at) {
    if (i > 0 && i % gap == 0) isolated[std::size_t(at++)] = true;
    new_of[std::size_t(i)] = at;
  }
  std::vector<index_t> rows, cols;
  std::vector<double> vals;
  for (index_t i = 0; i < n; ++i)
    for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
      rows.push_back(new_of[std::size_t(i)]);
      cols.push_back(new_of[std::size_t(A.col_idx[k])]);
      vals.push_back(A.values[k]);
    }
  for (index_t r = 0; r < total; ++r)
    if (isolated[std::size_t(r)]) rows.push_back(r), cols.push_back(r), vals.push_back(3.0);
  return csr_from_triplets(total, total, rows, cols, vals);
}

// IC(0) by its definition on a dense copy: L on tril(A)'s pattern,
// L(i,j) = (A(i,j) - sum_{m<j} L(i,m) L(j,m)) / L(j,j), L(i,i) = sqrt(A(i,i) - sum_{m<i} L(i,m)^2).
Eigen::MatrixXd dense_ic0(const CsrMatrix<double>& A) {
  const Eigen::MatrixXd D = dense(A);
  const index_t n = A.rows;
  Eigen::MatrixXd L = Eigen::MatrixXd::Zero(n, n);
  for (index_t i = 0; i < n; ++i) {
    for (index_t j = 0; j < i; ++j) {
      if (D(i, j) == 0) continue;  // outside the pattern: no fill
      double sum = D(i, j);
      for (index_t m = 0; m < j; ++m) sum -= L(i, m) * L(j, m);
      L(i, j) = sum / L(j, j);
    }
    double pivot = D(i, i);
    for (index_t m = 0; m < i; ++m) pivot -= L(i, m) * L(i, m);
    L(i, i) = std::sqrt(pivot);
  }
  return L;
}

double relative(const std::vector<double>& a, const Eigen::VectorXd& b) {
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::abs(a[i] - b(Eigen::Index(i))));
    norm = std::max(norm, std::abs(b(Eigen::Index(i))));
  }
  return diff / norm;
}

// z = M^-1 r for ic0 on `device` with `threads` against (L L^T)^-1 r with the dense L.
void check_against_dense(const CsrMatrix<double>& A, Device device, int threads) {
  const Eigen::MatrixXd L = dense_ic0(A);
  Eigen::VectorXd r(A.rows);
  for (index_t i = 0; i < A.rows; ++i) r(i) = std::sin(0.7 * double(i)) + 0.3;
  const Eigen::VectorXd y = L.triangularView<Eigen::Lower>().solve(r);
  const Eigen::VectorXd expected = L.transpose().triangularView<Eigen::Upper>().solve(y);
  auto M = built("ic0", A, device, threads);
  std::vector<double> in(r.data(), r.data() + r.size()), z(in.size());
  M->apply(in.data(), z.data());
  CHECK(relative(z, expected) < 1e-12);
}

SolveRequest ic0_request(const std::string& precond = "ic0") {
  SolveRequest r;
  r.backend.device = Device::omp;
  r.backend.threads = 2;
  r.precond = parse_precond(precond);
  return r;
}

bool says(const Plan& plan, const std::string& text) {
  for (const std::string& reason : plan.reasons)
    if (reason.find(text) != std::string::npos) return true;
  return false;
}

std::string fact(const Preconditioner<double>& M, const std::string& key) {
  for (const auto& [k, v] : M.report().facts)
    if (k == key) return v;
  return "";
}

// OpenMP teams of `threads` for the set-ups while it lives (ic0 factorises on a team from 4).
struct Teams {
  int before = omp_get_max_threads();
  explicit Teams(int threads) { omp_set_num_threads(threads); }
  ~Teams() { omp_set_num_threads(before); }
};

std::vector<double> applied(Preconditioner<double>& M, const std::vector<double>& r) {
  std::vector<double> z(r.size());
  M.apply(r.data(), z.data());
  return z;
}

CsrMatrix<double> exnet() {
  return read_matrix_market(std::string(CGSOLVE_SOURCE_DIR) +
                            "/data/systems/Exnet_EXN_step3.mtx.gz");
}

}  // namespace

TEST_CASE("ic0's level schedules, one pass and a counting sort, are the levels by definition") {
  std::mt19937_64 rng(20261126);
  std::vector<CsrMatrix<double>> cases = {poisson2d(9),
                                          random_spd(101, 3, 7),
                                          irregular_spd(333, 5, 4, 11),
                                          hub_and_chain(77),
                                          diagonal_only(1),
                                          diagonal_only(37),
                                          with_isolated_rows(random_spd(61, 2, 3), 5),
                                          random_matrix(97, 6, 19)};  // pattern not symmetric
  for (const CsrMatrix<double>& A : cases) {
    CAPTURE(A.rows);
    check_schedule(precond::forward_levels(A), reference_levels(A, true));
    check_schedule(precond::backward_levels(A), reference_levels(A, false));
    const auto [forward, backward] = precond::solve_levels(A);
    check_schedule(forward, reference_levels(A, true));
    check_schedule(backward, reference_levels(A, false));
  }
  // Over 100,000 rows: the counting sort on the team, the same schedules.
  const CsrMatrix<double> large = poisson2d(350);
  check_schedule(precond::backward_levels(large), reference_levels(large, false));
  // Entries above the diagonal are not read: only upper entries, every row on level 0.
  const CsrMatrix<double> upper = precond::triangle(poisson2d(5), false);
  CHECK(precond::forward_levels(upper).levels() == 1);
  CHECK(precond::backward_levels(upper).levels() == 1);
  // A 5-point grid in natural order: its 2m - 1 antidiagonals.
  CHECK(precond::forward_levels(poisson2d(30)).levels() == 59);
  CHECK(precond::backward_levels(poisson2d(30)).levels() == 59);
  // No rows: no levels.
  CsrMatrix<double> empty;
  empty.row_ptr = {0};
  CHECK(precond::forward_levels(empty).levels() == 0);
}

TEST_CASE("ic0's factor is dense IC(0)'s: n = 1, empty off-diagonal rows, n not a multiple of 32") {
  const std::vector<CsrMatrix<double>> cases = {diagonal_only(1),
                                                diagonal_only(37),
                                                poisson2d(9),
                                                random_spd(77, 3, 5),
                                                irregular_spd(333, 5, 4, 11),
                                                hub_and_chain(45),
                                                with_isolated_rows(random_spd(61, 2, 3), 5)};
  for (const CsrMatrix<double>& A : cases) {
    CAPTURE(A.rows);
    check_against_dense(A, Device::serial, 1);  // one sweep a solve
    check_against_dense(A, Device::omp, 2);     // level by level
  }
}

TEST_CASE("mirrored_upper reads L^T off A's upper part, as transpose_with_map makes it") {
  for (const CsrMatrix<double>& A :
       {poisson2d(12), random_spd(500, 3, 9), irregular_spd(333, 5, 4, 11), diagonal_only(3),
        poisson2d(400)}) {  // the last on every core (over 100,000 rows)
    CAPTURE(A.rows);
    CsrMatrix<double> L = precond::strictly_triangle(A, true);
    for (std::size_t k = 0; k < L.values.size(); ++k) L.values[k] = double(k) + 0.5;  // distinct
    std::optional<CsrMatrix<double>> U = precond::mirrored_upper(A, L);
    REQUIRE(U);
    precond::gather_mirrored_values(L, *U);
    const precond::Transposed reference = precond::transpose_with_map(L);
    CHECK(U->row_ptr == reference.At.row_ptr);
    CHECK(U->col_idx == reference.At.col_idx);
    CHECK(U->values == reference.At.values);
  }
  // A pattern that is not symmetric: no mirror for some entry, so none is made.
  const CsrMatrix<double> skew = random_matrix(97, 6, 19);
  CHECK_FALSE(precond::mirrored_upper(skew, precond::strictly_triangle(skew, true)));
}

TEST_CASE("is_wavefront_order: a grid in natural order is one, not once shuffled or split") {
  CHECK(is_wavefront_order(poisson2d(30)));
  CHECK(is_wavefront_order(generate_matrix("gen:poisson3d:9")));
  CHECK(is_wavefront_order(diagonal_only(1)));
  CHECK_FALSE(is_wavefront_order(diagonal_only(2)));  // row 1 starts a second part
  CHECK_FALSE(is_wavefront_order(hub_and_chain(50)));
  // The same grid with two rows swapped: a row's earlier neighbours on two levels.
  RowPermutation swap;
  swap.new_to_old.resize(900);
  for (index_t i = 0; i < 900; ++i) swap.new_to_old[std::size_t(i)] = i;
  std::swap(swap.new_to_old[31], swap.new_to_old[32]);
  CHECK_FALSE(is_wavefront_order(permute_symmetric(poisson2d(30), swap)));
  CHECK_FALSE(is_wavefront_order(exnet()));
}

TEST_CASE("the planner skips RCM for ic0 on a grid in natural order, keeps it on EPANET's") {
  const Plan grid = make_plan(ic0_request(), poisson2d(40));
  CHECK_FALSE(grid.rcm);
  CHECK(says(grid, "wavefronts"));
  CHECK_FALSE(make_plan(ic0_request("ic0:levels"), generate_matrix("gen:poisson3d:9")).rcm);
  const Plan network = make_plan(ic0_request(), exnet());
  CHECK(network.rcm);
  CHECK(says(network, "reverse Cuthill-McKee"));
  CHECK(make_plan(ic0_request(), generate_matrix("gen:waternet:2000")).rcm);
  // Asked for, or another preconditioner's preference: RCM as before.
  SolveRequest forced = ic0_request();
  forced.rcm = true;
  CHECK(make_plan(forced, poisson2d(40)).rcm);
  CHECK(make_plan(ic0_request("ic0:colour"), poisson2d(40)).rcm);
  CHECK(make_plan(ic0_request("bjacobi:8"), poisson2d(40)).rcm);
}

TEST_CASE("ic0 on a grid: the file's order takes the iterations RCM's does") {
  const CsrMatrix<double> A = poisson2d(40);
  const std::vector<double> b = dense_product(A, std::vector<double>(std::size_t(A.rows), 1.0));
  SolveRequest natural = ic0_request(), renumbered = ic0_request();
  natural.cg.tol = renumbered.cg.tol = 1e-10;
  renumbered.rcm = true;
  std::vector<double> x1, x2;
  const SolveReport a = solve_system(A, b, x1, natural);
  const SolveReport c = solve_system(A, b, x2, renumbered);
  CHECK_FALSE(a.plan.rcm);
  CHECK(c.plan.rcm);
  CHECK(a.cg.ok());
  CHECK(a.cg.iterations == c.cg.iterations);
}

TEST_CASE("ic0's factorisation on a team of 4, row chunks in turn, is the serial factor's bits") {
  // A 400 x 400 grid: lower bandwidth 400, so chunks of 401 rows, 8+ a thread: the pipeline.
  CsrMatrix<double> A = poisson2d(400);
  std::vector<double> r(std::size_t(A.rows));
  for (std::size_t i = 0; i < r.size(); ++i) r[i] = std::cos(0.3 * double(i)) + 0.2;
  std::unique_ptr<Preconditioner<double>> team, serial;
  {
    const Teams teams(4);
    team = built("ic0", A, Device::omp, 2);
  }
  {
    const Teams teams(1);
    serial = built("ic0", A, Device::omp, 2);  // the same level program, factorised in row order
  }
  CHECK(fact(*team, "factorisation") == "4 threads, chunks of 401 rows in turn");
  CHECK(fact(*serial, "factorisation") == "one thread, in row order");
  CHECK(applied(*team, r) == applied(*serial, r));
  // Not an M-matrix: a pivot fails (off-diagonal -2 against a diagonal of 4), on the team as in
  // row order, and both take the same shift.
  for (index_t i = 0; i < A.rows; ++i)
    for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
      if (A.col_idx[k] != i) A.values[k] = -2.0;
  {
    const Teams teams(4);
    team = built("ic0", A, Device::omp, 2);
  }
  {
    const Teams teams(1);
    serial = built("ic0", A, Device::omp, 2);
  }
  CHECK(fact(*team, "diagonal shift") != "none");
  CHECK(fact(*team, "diagonal shift") == fact(*serial, "diagonal shift"));
  CHECK(applied(*team, r) == applied(*serial, r));
}
