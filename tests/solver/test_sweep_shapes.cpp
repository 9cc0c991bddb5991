// The level shapes of the systems that the GPU tests of the cluster loop's narrow levels run on
// (tests/gpu/test_gpu_cluster_program.cpp, "Cluster CG with chol and ic0: narrow levels on one
// warp"; solver/cuda/cluster_cg.cu, the sweeps' head and tail on warp 0): each solve of chol's and
// ic0's programs as its levels' row counts and longest rows, checked here on the host so that
// those tests keep covering what they claim (a wide part, then a long chain of one-row levels
// with long rows; a level of exactly 32 and of 33 rows; a solve of narrow levels only).
#include <doctest/doctest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "formats/matrix_market.hpp"
#include "formats/row_order.hpp"
#include "solver/precond_test_util.hpp"
#include "test_matrices.hpp"

namespace cgs {
namespace {

using namespace testing;

struct Level {
  index_t rows = 0;
  index_t longest = 0;  // the longest row of the level's off-diagonal part
};
using Solve = std::vector<Level>;

// The program's triangular solves (consecutive triangular_level operations of one matrix), as
// the cluster loop's find_sweeps groups them.
std::vector<Solve> solves_of(const Preconditioner<double>& M) {
  const precond::HostProgram<double>* program = M.host_program();
  REQUIRE(program);
  std::vector<Solve> solves;
  const index_t* matrix = nullptr;
  for (int i = 0; i < program->size(); ++i) {
    const precond::Op<double>& op = program->op(i);
    if (op.kind != precond::OpKind::triangular_level) {
      matrix = nullptr;
      continue;
    }
    if (op.row_ptr != matrix) solves.emplace_back();
    matrix = op.row_ptr;
    Level level{op.items, 0};
    for (index_t k = 0; k < op.items; ++k) {
      const index_t row = op.rows ? op.rows[k] : k;
      level.longest = std::max(level.longest, op.row_ptr[row + 1] - op.row_ptr[row]);
    }
    solves.back().push_back(level);
  }
  return solves;
}

std::string text(const Solve& s) {
  std::ostringstream out;
  for (std::size_t i = 0; i < s.size(); ++i)
    out << i << ":" << s[i].rows << "/" << s[i].longest << " ";
  return out.str();
}

// Levels of at most 32 rows at the start (head) and at the end (tail), as find_sweeps splits.
struct Ends {
  std::size_t head = 0, tail = 0, wide = 0;
};
Ends ends_of(const Solve& s) {
  Ends e;
  while (e.head < s.size() && s[e.head].rows <= 32) ++e.head;
  while (e.tail < s.size() - e.head && s[s.size() - 1 - e.tail].rows <= 32) ++e.tail;
  e.wide = s.size() - e.head - e.tail;
  return e;
}

// The solves of `precond` as the GPU tests' plan numbers the rows: ic0 by reverse
// Cuthill-McKee unless already a wavefront (solver/plan.cpp), chol in its own AMD order; the host
// program on a team of two (the level-scheduled form; one thread runs one sweep of all rows).
std::vector<Solve> solves(const char* precond, const CsrMatrix<double>& A) {
  const bool rcm = std::string(precond) == "ic0" && !is_wavefront_order(A);
  auto M = built(precond, rcm ? permute_symmetric(A, reverse_cuthill_mckee(A)) : A, Device::omp, 2);
  std::vector<Solve> list = solves_of(*M);
  REQUIRE(list.size() == 2);  // L, then L^T
  return list;
}

// One-row levels of at least `entries` entries among the levels [from, to).
std::size_t long_single_rows(const Solve& s, std::size_t from, std::size_t to, index_t entries) {
  std::size_t count = 0;
  for (std::size_t i = from; i < to; ++i) count += s[i].rows == 1 && s[i].longest >= entries;
  return count;
}

TEST_CASE("Sweep shapes: a grid with a clique has a wide part, then a chain of long rows") {
  const CsrMatrix<double> A = grid_with_clique(24, 140, 4, 5);
  for (const char* precond : {"chol", "ic0"}) {
    CAPTURE(std::string(precond));
    const std::vector<Solve> s = solves(precond, A);
    const Ends forward = ends_of(s[0]);
    INFO(text(s[0]));
    CHECK(forward.head == 0);
    CHECK(forward.wide >= 4);
    CHECK(forward.tail >= 140);
    // ky2's chol made sharper: the tail's one-row levels with rows of 40 to 200 entries.
    CHECK(long_single_rows(s[0], s[0].size() - forward.tail, s[0].size(), 40) >= 90);
    index_t longest = 0;
    for (const Level& l : s[0]) longest = std::max(longest, l.longest);
    CHECK(longest >= 139);
  }
  // chol's backward solve: the mirror image (a narrow head of one-row levels, then wide levels,
  // then a short narrow tail): all three parts of a sweep.
  const std::vector<Solve> chol = solves("chol", A);
  const Ends backward = ends_of(chol[1]);
  INFO(text(chol[1]));
  CHECK(backward.head >= 140);
  CHECK(backward.wide >= 1);
  CHECK(backward.tail >= 1);
  CHECK(long_single_rows(chol[1], 0, backward.head, 40) >= 100);
}

TEST_CASE("Sweep shapes: a star with a path gives a first level of exactly 32 or 33 rows") {
  // chol's first level holds the leaves and the path's far end; ic0's the leaves alone.
  for (auto [precond, leaves, rows] : {std::tuple{"chol", 31, 32}, std::tuple{"chol", 32, 33},
                                       std::tuple{"ic0", 32, 32}, std::tuple{"ic0", 33, 33}}) {
    CAPTURE(std::string(precond));
    CAPTURE(leaves);
    const std::vector<Solve> s = solves(precond, star_and_path(leaves, 100));
    const Solve& with_leaves = s[0][0].rows >= 32 ? s[0] : s[1];
    INFO(text(with_leaves));
    CHECK(with_leaves.front().rows == rows);
    const Ends e = ends_of(with_leaves);
    CHECK(e.wide == (rows > 32 ? 1u : 0u));
    CHECK(e.head + e.tail + e.wide == with_leaves.size());
    CHECK(with_leaves.size() >= 100);
  }
  // ic0's other solve of the star of 32 ends with the leaves' level: every level narrow, the
  // whole solve one warp's head.
  const std::vector<Solve> s = solves("ic0", star_and_path(32, 100));
  CHECK(ends_of(s[1]).head == s[1].size());
  CHECK(s[1].back().rows == 32);
}

TEST_CASE("Sweep shapes: dense 33 is a chain of 33 levels; Exnet's solves have narrow ends") {
  for (const char* precond : {"chol", "ic0"}) {
    CAPTURE(std::string(precond));
    const std::vector<Solve> dense = solves(precond, dense_m_matrix(33));
    for (const Solve& s : dense) {
      CHECK(s.size() == 33);
      CHECK(ends_of(s).head == 33);
    }
    CHECK(dense[0].back().longest == 32);
    const std::vector<Solve> exnet =
        solves(precond, read_matrix_market(std::string(CGSOLVE_SOURCE_DIR) +
                                           "/data/systems/Exnet_EXN_step3.mtx.gz"));
    INFO(text(exnet[0]));
    INFO(text(exnet[1]));
    CHECK(ends_of(exnet[0]).tail >= 40);  // L: wide, then narrow
    CHECK(ends_of(exnet[1]).head >= 10);  // L^T: narrow, wide, narrow
    CHECK(ends_of(exnet[1]).wide >= 10);
    CHECK(ends_of(exnet[1]).tail >= 10);
  }
}

}  // namespace
}  // namespace cgs
