// The partition and the PETSc-style split against dense references; no communication.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>

#include "distributed_test_util.hpp"
#include "solver/distributed/partition.hpp"
#include "test_matrices.hpp"

using namespace cgs;
using namespace cgs::dist;
using namespace cgs::testing;

namespace {

// Checks that blocks cover [0, n) in order.
void check_cover(const RowBlocks& blocks, index_t n, int ranks) {
  REQUIRE(blocks.ranks() == ranks);
  CHECK(blocks.offsets.front() == 0);
  CHECK(blocks.offsets.back() == n);
  for (int r = 0; r < ranks; ++r) CHECK(blocks.rows(r) >= 0);
}

// The dense reference of rank r's halo: every column outside the block that a row of the block
// touches (a set, so each once).
std::set<index_t> dense_halo(const CsrMatrix<double>& A, index_t first, index_t count) {
  std::set<index_t> needed;
  for (index_t i = first; i < first + count; ++i) {
    std::vector<char> row(std::size_t(A.cols), 0);
    for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) row[A.col_idx[k]] = 1;
    for (index_t j = 0; j < A.cols; ++j)
      if (row[j] && (j < first || j >= first + count)) needed.insert(j);
  }
  return needed;
}

}  // namespace

TEST_CASE("partition by nonzeros: balanced blocks that cover the rows") {
  const CsrMatrix<double> A = random_matrix(500, 40, 7);  // lengths vary from 0 to 40
  for (int ranks : {1, 2, 3, 4, 7}) {
    CAPTURE(ranks);
    const RowBlocks blocks = partition_by_nonzeros(A.row_ptr, ranks);
    check_cover(blocks, A.rows, ranks);
    const double total = A.nnz() + A.rows, target = total / ranks;
    index_t longest = 0;
    for (index_t i = 0; i < A.rows; ++i) longest = std::max(longest, A.row_length(i));
    for (int r = 0; r < ranks; ++r) {
      const index_t first = blocks.first(r), last = first + blocks.rows(r);
      const double work = A.row_ptr[last] - A.row_ptr[first] + (last - first);
      CHECK(std::abs(work - target) <= 2.0 * (longest + 1));  // off by at most a row per side
    }
  }
}

TEST_CASE("partition: more ranks than rows leaves ranks without rows; n = 1") {
  const CsrMatrix<double> A = poisson2d(2);  // 4 rows
  const RowBlocks blocks = partition_by_nonzeros(A.row_ptr, 7);
  check_cover(blocks, 4, 7);
  int empty = 0;
  for (int r = 0; r < 7; ++r) empty += blocks.rows(r) == 0;
  CHECK(empty == 3);
  for (index_t row = 0; row < 4; ++row) {
    const int owner = blocks.owner(row);
    CHECK(row >= blocks.first(owner));
    CHECK(row < blocks.first(owner) + blocks.rows(owner));
  }
  const RowBlocks one = partition_by_nonzeros({0, 1}, 3);
  check_cover(one, 1, 3);
  CHECK(one.rows(0) + one.rows(1) + one.rows(2) == 1);
  CHECK(one.rows(one.owner(0)) == 1);
}

TEST_CASE("split: local + halo blocks reproduce the rows; the halo is exactly the off-block "
          "columns") {
  const CsrMatrix<double> A = random_spd(300, 4, 11);
  const std::vector<double> x = random_vector(std::size_t(A.rows), 3);
  const std::vector<double> Ax = dense_product(A, x);
  for (int ranks : {1, 2, 4, 5}) {
    CAPTURE(ranks);
    const RowBlocks blocks = partition_by_nonzeros(A.row_ptr, ranks);
    for (int r = 0; r < ranks; ++r) {
      const index_t first = blocks.first(r), n = blocks.rows(r);
      const RankBlock b = split_rows(row_block(A, first, n), first, A.rows);
      const std::set<index_t> needed = dense_halo(A, first, n);
      CHECK(std::vector<index_t>(needed.begin(), needed.end()) == b.halo_columns);
      // Receives: contiguous halo ranges, one per owner, each owned by that rank.
      index_t covered = 0;
      for (const HaloReceive& rcv : halo_receives(b, blocks)) {
        CHECK(rcv.rank != r);
        CHECK(rcv.offset == covered);
        for (index_t h = rcv.offset; h < rcv.offset + rcv.count; ++h)
          CHECK(blocks.owner(b.halo_columns[h]) == rcv.rank);
        covered += rcv.count;
      }
      CHECK(covered == index_t(b.halo_columns.size()));
      // y = A_local x_own + A_halo x_halo equals the dense product's rows.
      std::vector<double> own(x.begin() + first, x.begin() + first + n), halo;
      for (index_t col : b.halo_columns) halo.push_back(x[col]);
      const std::vector<double> y_local = dense_product(b.local, own);
      const std::vector<double> y_halo = b.halo.cols ? dense_product(b.halo, halo)
                                                     : std::vector<double>(std::size_t(n), 0.0);
      for (index_t i = 0; i < n; ++i)
        CHECK(y_local[i] + y_halo[i] == doctest::Approx(Ax[first + i]).epsilon(1e-12));
    }
  }
}

TEST_CASE("local reordering: the rank's rows renumbered, halo rows with them, sends mapped") {
  const CsrMatrix<double> A = poisson2d(12);
  const RowBlocks blocks = partition_by_nonzeros(A.row_ptr, 3);
  const index_t first = blocks.first(1), n = blocks.rows(1);
  const RankBlock plain = split_rows(row_block(A, first, n), first, A.rows);
  RankBlock b = plain;
  reorder_locally(b, reverse_cuthill_mckee(b.local));
  reorder_locally(b, sort_rows_by_length(b.local));
  REQUIRE(b.order.new_to_old.size() == std::size_t(n));
  for (index_t k = 0; k < n; ++k) {  // row k of b is row order[k] of the plain block
    const index_t old = b.order.new_to_old[k];
    CHECK(b.halo.row_length(k) == plain.halo.row_length(old));
    CHECK(b.local.row_length(k) == plain.local.row_length(old));
  }
  // A neighbour that asks for global row g gets local entry k with order[k] = g - first.
  const std::vector<index_t> asked = {first, first + 5, first + n - 1};
  const HaloSend send = halo_send(0, asked, b);
  for (std::size_t i = 0; i < asked.size(); ++i)
    CHECK(b.order.new_to_old[send.local_rows[i]] == asked[i] - first);
  CHECK_THROWS(halo_send(0, {first + n}, b));  // not this rank's row
}

TEST_CASE("METIS partition: a renumbering whose blocks cut fewer entries than row blocks") {
  if (!metis_available()) {
    CHECK_THROWS_AS(make_partition(poisson2d(4), 2, PartitionKind::metis), InputError);
    return;
  }
  // A 2D grid numbered row by row, cut into 4: row blocks are strips (3 cuts of 60 edges);
  // a graph partition finds quadrants (about 2 cuts of 30).
  const CsrMatrix<double> A = poisson2d(60);
  auto cut_entries = [&](const Partition& p) {
    const CsrMatrix<double> B = p.order.empty() ? A : permute_symmetric(A, p.order);
    long cut = 0;
    for (index_t i = 0; i < B.rows; ++i)
      for (index_t k = B.row_ptr[i]; k < B.row_ptr[i + 1]; ++k)
        cut += p.blocks.owner(i) != p.blocks.owner(B.col_idx[k]);
    return cut;
  };
  const Partition strips = make_partition(A, 4, PartitionKind::contiguous);
  const Partition metis = make_partition(A, 4, PartitionKind::metis);
  check_cover(metis.blocks, A.rows, 4);
  std::vector<index_t> sorted = metis.order.new_to_old;
  std::sort(sorted.begin(), sorted.end());
  for (index_t i = 0; i < A.rows; ++i) CHECK(sorted[i] == i);  // a permutation
  CHECK(cut_entries(metis) < cut_entries(strips));
  for (int r = 0; r < 4; ++r) CHECK(metis.blocks.rows(r) == doctest::Approx(900).epsilon(0.1));
}
