// The sweeps a GPU program's triangular solves run as (solver/precond/triangular_sweep.hpp),
// checked on the host:
//   - find_sweeps on the operations add_triangular_solves writes (ic0's and cholesky's two
//     solves): one sweep per solve, its operations, rows, widest level and contiguity those of
//     the level schedules (solve_levels); none for one solve alone, for a solve whose levels are
//     split by another operation, or for levels without named rows; sweep_threads in whole warps;
//   - the order a sweep relies on, directly: every row a level reads (S's columns in its row)
//     lies at an earlier position of the sweep, in an earlier level;
//   - the sweep's rules (rows by position to `threads` threads, each thread in increasing
//     position, a row waiting until its columns are posted, posting its y and clearing its entry
//     of the other array, each sweep advancing the next one's epoch) emulated with threads
//     interleaved one step at a time: no step ever finds every thread waiting, and z is the
//     levels' bit for bit, over three applies on the same arrays (nothing cleared between them),
//     for several thread counts.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <tuple>
#include <vector>

#include "solver/precond/program_spec.hpp"
#include "solver/precond/sparse_parts.hpp"
#include "solver/precond/triangular_solves.hpp"
#include "solver/precond/triangular_sweep.hpp"
#include "test_matrices.hpp"

using namespace cgs;
using namespace cgs::precond;

namespace {

// The two solves of a unit-diagonal IC(0)-like program on A's pattern, with the arrays on the
// host (L = A's strictly lower part scaled, L^T its mirror), resolved as a placement would.
struct Program {
  CsrMatrix<double> L, U;
  std::vector<double> inverse_diagonal;
  LevelSchedule forward, backward;
  ProgramSpec<double> spec;
  std::vector<Op<double>> ops;
};

void make_program(const CsrMatrix<double>& A, Program& p) {
  p.L = strictly_triangle(A, true);
  p.U = strictly_triangle(A, false);
  for (double& v : p.L.values) v *= 0.25;
  for (double& v : p.U.values) v *= 0.25;
  p.inverse_diagonal.assign(std::size_t(A.rows), 0.5);
  std::tie(p.forward, p.backward) = solve_levels(A);
  ProgramSpec<double>& s = p.spec;
  const int lp = s.add_indices(p.L.row_ptr), lc = s.add_indices(p.L.col_idx);
  const int up = s.add_indices(p.U.row_ptr), uc = s.add_indices(p.U.col_idx);
  const int fr = s.add_indices(p.forward.rows), br = s.add_indices(p.backward.rows);
  const int lv = s.add_values(p.L.values), uv = s.add_values(p.U.values);
  const int d = s.add_values(p.inverse_diagonal);
  add_triangular_solves(s, {lp, lc, lv, up, uc, uv, fr, br, d}, A.rows, false, p.forward,
                        p.backward);
  p.ops = resolve_ops<double>(
      s.ops, [&](int h) { return s.index_arrays[std::size_t(h)].data(); },
      [&](int h) { return s.value_arrays[std::size_t(h)].data(); });
}

index_t widest(const LevelSchedule& s) {
  index_t w = 0;
  for (index_t l = 0; l < s.levels(); ++l) w = std::max(w, s.size(l));
  return w;
}

std::vector<CsrMatrix<double>> matrices() {
  return {testing::poisson2d(23), testing::random_spd(777, 4, 11),
          testing::irregular_spd(500, 250, 7, 3), testing::poisson2d(1)};
}

TEST_CASE("find_sweeps: one sweep per triangular solve, as the level schedules") {
  for (const CsrMatrix<double>& A : matrices()) {
    CAPTURE(A.rows);
    Program p;
    make_program(A, p);
    const index_t f = p.forward.levels(), b = p.backward.levels();
    const std::vector<SweepPlan> sweeps = find_sweeps(p.ops);
    if (f < 2 || b < 2) {  // n = 1: a level each, nothing to sweep
      CHECK(sweeps.empty());
      continue;
    }
    REQUIRE(sweeps.size() == 2);
    CHECK(sweeps[0].first_op == 0);
    CHECK(sweeps[0].end_op == f);
    CHECK(sweeps[1].first_op == f);
    CHECK(sweeps[1].end_op == f + b);
    CHECK(sweeps[0].items == A.rows);
    CHECK(sweeps[1].items == A.rows);
    CHECK(sweeps[0].widest == widest(p.forward));
    CHECK(sweeps[1].widest == widest(p.backward));
    CHECK(sweeps[0].contiguous);
    CHECK(sweeps[1].contiguous);
    CHECK(p.ops[0].rows == p.spec.index_arrays[4].data());
  }
}

TEST_CASE("find_sweeps: no sweep where a solve's levels are not all in one run") {
  Program p;
  make_program(testing::poisson2d(12), p);
  const index_t f = p.forward.levels();
  SUBCASE("one solve alone (a sweep must not advance its own epoch)") {
    p.ops.resize(std::size_t(f));
    CHECK(find_sweeps(p.ops).empty());
  }
  SUBCASE("the forward levels split by another operation") {
    Op<double> product = p.ops[0];
    product.kind = OpKind::product;
    p.ops.insert(p.ops.begin() + 3, product);
    const std::vector<SweepPlan> sweeps = find_sweeps(p.ops);
    CHECK(sweeps.empty());  // the backward solve alone is left: one sweep, so none
  }
  SUBCASE("levels without named rows") {
    for (Op<double>& op : p.ops) op.rows = nullptr;
    CHECK(find_sweeps(p.ops).empty());
  }
  SUBCASE("rows gathered from apart: not contiguous") {
    std::swap(p.ops[1], p.ops[2]);
    const std::vector<SweepPlan> sweeps = find_sweeps(p.ops);
    REQUIRE(sweeps.size() == 2);
    CHECK_FALSE(sweeps[0].contiguous);
    CHECK(sweeps[1].contiguous);
  }
}

TEST_CASE("sweep_threads: span x the widest level, whole warps, one at least") {
  CHECK(sweep_threads(1, 4) == 32);
  CHECK(sweep_threads(300, 4) == 1216);
  CHECK(sweep_threads(1000, 4) == 4000);
  CHECK(sweep_threads(1001, 1) == 1024);
}

TEST_CASE("a sweep's rows read only rows at earlier positions, in earlier levels") {
  for (const CsrMatrix<double>& A : matrices()) {
    CAPTURE(A.rows);
    Program p;
    make_program(A, p);
    for (const bool forward : {true, false}) {
      const LevelSchedule& s = forward ? p.forward : p.backward;
      const CsrMatrix<double>& S = forward ? p.L : p.U;
      std::vector<index_t> level(std::size_t(A.rows), -1);
      for (index_t l = 0; l < s.levels(); ++l)
        for (index_t q = s.start[std::size_t(l)]; q < s.start[std::size_t(l) + 1]; ++q)
          level[std::size_t(s.rows[std::size_t(q)])] = l;
      bool ordered = true;
      for (index_t i = 0; i < A.rows; ++i)
        for (index_t k = S.row_ptr[i]; k < S.row_ptr[i + 1]; ++k)
          ordered = ordered && level[std::size_t(S.col_idx[k])] < level[std::size_t(i)];
      CHECK(std::count(level.begin(), level.end(), -1) == 0);
      CHECK(ordered);
    }
  }
}

// The sweep's rules with `threads` threads interleaved one step at a time (a step: a thread's
// current row, if every row it reads is posted in `read`; its y then read from there, posted,
// and its entry of `reset` cleared). False when a round finds every unfinished thread waiting (a
// deadlock on the device).
bool emulate_sweep(const Op<double>& op, const std::vector<index_t>& rows, int threads,
                   std::vector<unsigned long long>& read, std::vector<unsigned long long>& reset,
                   double* const* table) {
  const OpVectors<double> v = vectors_of(op, table);
  auto y_at = [&](index_t k) {
    double y;
    std::memcpy(&y, &read[std::size_t(op.col_idx[k])], sizeof y);
    return y;
  };
  std::vector<std::size_t> at(static_cast<std::size_t>(threads));
  for (int t = 0; t < threads; ++t) at[std::size_t(t)] = std::size_t(t);
  for (bool moved = true; moved;) {
    moved = false;
    bool left = false;
    for (int t = 0; t < threads; ++t) {
      std::size_t& g = at[std::size_t(t)];
      if (g >= rows.size()) continue;
      left = true;
      const index_t row = rows[g];
      bool posted = true;
      for (index_t k = op.row_ptr[row]; k < op.row_ptr[row + 1]; ++k)
        posted = posted && read[std::size_t(op.col_idx[k])] != kSweepUnposted;
      if (!posted) continue;
      const double y = triangular_row(op, v, row, y_at);
      std::memcpy(&read[std::size_t(row)], &y, sizeof y);
      reset[std::size_t(row)] = kSweepUnposted;
      g += std::size_t(threads);
      moved = true;
    }
    if (!moved) return !left;
  }
  return true;
}

TEST_CASE("the sweep's rules, emulated: no deadlock, the levels' z, applies on the same arrays") {
  const CsrMatrix<double> A = testing::irregular_spd(600, 300, 5, 19);
  Program p;
  make_program(A, p);
  const std::vector<SweepPlan> sweeps = find_sweeps(p.ops);
  REQUIRE(sweeps.size() == 2);
  const std::size_t n = std::size_t(A.rows);
  std::vector<double> r(n), between(n), z_levels(n), z(n);
  for (std::size_t i = 0; i < n; ++i) r[i] = double((i * 7919) % 101) - 50.0;
  std::vector<double*> table{r.data(), z_levels.data(), between.data()};
  for (const Op<double>& op : p.ops) run_items(op, table.data(), 0, op.items, 1);
  for (const int threads : {1, 7, 32, 1000}) {
    CAPTURE(threads);
    // Per sweep, its two posting arrays, as the device program makes them.
    std::vector<std::vector<unsigned long long>> posted(
        2 * sweeps.size(), std::vector<unsigned long long>(n, kSweepUnposted));
    std::vector<int> epoch(sweeps.size(), 1);
    table[1] = z.data();
    for (int apply = 0; apply < 3; ++apply) {
      std::fill(z.begin(), z.end(), -1.0);
      std::fill(between.begin(), between.end(), -1.0);
      for (std::size_t s = 0; s < sweeps.size(); ++s) {
        const SweepPlan& plan = sweeps[s];
        const Op<double>& first = p.ops[std::size_t(plan.first_op)];
        const std::vector<index_t> rows(first.rows, first.rows + plan.items);
        ++epoch[(s + 1) % sweeps.size()];  // as run_sweep's thread 0
        const int parity = epoch[s] & 1;
        REQUIRE(emulate_sweep(first, rows, threads, posted[2 * s + std::size_t(parity)],
                              posted[2 * s + std::size_t(1 - parity)], table.data()));
      }
      CHECK(z == z_levels);
      for (const auto& array : posted) {  // each sweep's other array ready for the next apply
        const auto unposted = std::count(array.begin(), array.end(), kSweepUnposted);
        CHECK((unposted == 0 || unposted == std::ptrdiff_t(n)));
      }
    }
  }
}

}  // namespace
