#include "solver/distributed/partition.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "formats/types.hpp"

#if defined(CGSOLVE_HAVE_METIS)
#include <metis.h>
#endif

namespace cgs::dist {

int RowBlocks::owner(index_t row) const {
  // The last block starting at or before `row` that is not empty.
  const auto it = std::upper_bound(offsets.begin(), offsets.end(), row);
  return int(it - offsets.begin()) - 1;
}

PartitionKind parse_partition(const std::string& name) {
  if (name == "contiguous") return PartitionKind::contiguous;
  if (name == "metis") return PartitionKind::metis;
  throw InputError("--partition must be contiguous or metis, got '" + name + "'");
}

std::string to_string(PartitionKind kind) {
  return kind == PartitionKind::metis ? "metis" : "contiguous";
}

bool metis_available() {
#if defined(CGSOLVE_HAVE_METIS)
  return true;
#else
  return false;
#endif
}

RowBlocks partition_by_nonzeros(const std::vector<index_t>& row_ptr, int ranks) {
  if (ranks < 1) throw std::invalid_argument("partition_by_nonzeros: ranks < 1");
  const index_t rows = index_t(row_ptr.size()) - 1;
  // Work of row i: its entries plus one (the row's own vector entries), so empty rows count.
  auto work_before = [&](index_t row) { return double(row_ptr[row]) + double(row); };
  const double total = work_before(rows);
  RowBlocks blocks;
  blocks.offsets.assign(std::size_t(ranks) + 1, rows);
  blocks.offsets[0] = 0;
  index_t row = 0;
  for (int r = 1; r < ranks; ++r) {
    const double target = total * r / ranks;
    while (row < rows && work_before(row + 1) <= target) ++row;
    // Take the row that crosses the target where that leaves the boundary nearer to it.
    if (row < rows && work_before(row + 1) - target < target - work_before(row)) ++row;
    blocks.offsets[r] = std::max(row, blocks.offsets[r - 1]);
  }
  return blocks;
}

RowBlocks partition_by_rows(index_t rows, int ranks) {
  RowBlocks blocks;
  blocks.offsets.resize(std::size_t(ranks) + 1);
  for (int r = 0; r <= ranks; ++r) blocks.offsets[r] = index_t(std::int64_t(rows) * r / ranks);
  return blocks;
}

namespace {

#if defined(CGSOLVE_HAVE_METIS)
// METIS wants the graph without self-loops; vertex weight = row length balances nonzeros.
std::vector<idx_t> metis_parts(const CsrMatrix<double>& A, int ranks) {
  idx_t n = A.rows, constraints = 1, parts = ranks, cut = 0;
  std::vector<idx_t> xadj{0}, adjncy, weight(std::size_t(A.rows));
  for (index_t i = 0; i < A.rows; ++i) {
    for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
      if (A.col_idx[k] != i) adjncy.push_back(A.col_idx[k]);
    xadj.push_back(idx_t(adjncy.size()));
    weight[i] = std::max<idx_t>(1, A.row_length(i));
  }
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_SEED] = 1;  // the same partition on every run
  std::vector<idx_t> part(std::size_t(A.rows), 0);
  const int status = METIS_PartGraphKway(&n, &constraints, xadj.data(), adjncy.data(),
                                         weight.data(), nullptr, nullptr, &parts, nullptr,
                                         nullptr, options, &cut, part.data());
  if (status != METIS_OK)
    throw InputError("METIS could not partition the matrix (status " + std::to_string(status) +
                     ")");
  return part;
}
#endif

// Rows renumbered part by part (stable within a part), and the blocks of the parts.
Partition renumber_by_part(const std::vector<int>& part, int ranks) {
  Partition p;
  p.kind = PartitionKind::metis;
  p.blocks.offsets.assign(std::size_t(ranks) + 1, 0);
  for (int owner : part) ++p.blocks.offsets[owner + 1];
  std::partial_sum(p.blocks.offsets.begin(), p.blocks.offsets.end(), p.blocks.offsets.begin());
  std::vector<index_t> next(p.blocks.offsets.begin(), p.blocks.offsets.end() - 1);
  p.order.new_to_old.resize(part.size());
  for (std::size_t old = 0; old < part.size(); ++old)
    p.order.new_to_old[next[part[old]]++] = index_t(old);
  return p;
}

}  // namespace

Partition make_partition(const CsrMatrix<double>& A, int ranks, PartitionKind kind) {
  if (kind == PartitionKind::contiguous || ranks == 1 || A.rows <= 1) {
    Partition p;
    p.blocks = partition_by_nonzeros(A.row_ptr, ranks);
    return p;
  }
#if defined(CGSOLVE_HAVE_METIS)
  const std::vector<idx_t> parts = metis_parts(A, ranks);
  return renumber_by_part(std::vector<int>(parts.begin(), parts.end()), ranks);
#else
  (void)renumber_by_part;
  throw InputError(
      "--partition metis: this cgsolve was built without METIS (install libmetis-dev and "
      "configure again), use --partition contiguous");
#endif
}

CsrMatrix<double> row_block(const CsrMatrix<double>& A, index_t first, index_t count) {
  CsrMatrix<double> block;
  block.rows = count;
  block.cols = A.cols;
  const index_t begin = A.row_ptr[first], end = A.row_ptr[first + count];
  block.row_ptr.resize(std::size_t(count) + 1);
  for (index_t i = 0; i <= count; ++i) block.row_ptr[i] = A.row_ptr[first + i] - begin;
  block.col_idx.assign(A.col_idx.begin() + begin, A.col_idx.begin() + end);
  block.values.assign(A.values.begin() + begin, A.values.begin() + end);
  return block;
}

RankBlock split_rows(const CsrMatrix<double>& rows, index_t first_row, index_t global_rows) {
  RankBlock b;
  b.first_row = first_row;
  b.global_rows = global_rows;
  const index_t n = rows.rows, last_row = first_row + n;
  auto owned = [&](index_t col) { return col >= first_row && col < last_row; };
  for (index_t col : rows.col_idx)
    if (!owned(col)) b.halo_columns.push_back(col);
  std::sort(b.halo_columns.begin(), b.halo_columns.end());
  b.halo_columns.erase(std::unique(b.halo_columns.begin(), b.halo_columns.end()),
                       b.halo_columns.end());
  auto halo_index = [&](index_t col) {
    return index_t(std::lower_bound(b.halo_columns.begin(), b.halo_columns.end(), col) -
                   b.halo_columns.begin());
  };
  b.local.rows = b.local.cols = n;
  b.halo.rows = n;
  b.halo.cols = index_t(b.halo_columns.size());
  for (index_t i = 0; i < n; ++i) {
    for (index_t k = rows.row_ptr[i]; k < rows.row_ptr[i + 1]; ++k) {
      const index_t col = rows.col_idx[k];
      CsrMatrix<double>& part = owned(col) ? b.local : b.halo;
      part.col_idx.push_back(owned(col) ? col - first_row : halo_index(col));
      part.values.push_back(rows.values[k]);
    }
    b.local.row_ptr.push_back(b.local.nnz());
    b.halo.row_ptr.push_back(b.halo.nnz());
  }
  return b;
}

void reorder_locally(RankBlock& block, const RowPermutation& order) {
  if (order.empty()) return;
  block.local = permute_symmetric(block.local, order);
  CsrMatrix<double> halo;
  halo.rows = block.halo.rows;
  halo.cols = block.halo.cols;
  for (index_t i = 0; i < halo.rows; ++i) {
    const index_t old = order.new_to_old[i];
    for (index_t k = block.halo.row_ptr[old]; k < block.halo.row_ptr[old + 1]; ++k) {
      halo.col_idx.push_back(block.halo.col_idx[k]);
      halo.values.push_back(block.halo.values[k]);
    }
    halo.row_ptr.push_back(halo.nnz());
  }
  block.halo = std::move(halo);
  // Composed with an earlier local order: local row k was block row earlier[order[k]].
  if (block.order.empty()) {
    block.order = order;
  } else {
    std::vector<index_t> composed(order.new_to_old.size());
    for (std::size_t k = 0; k < composed.size(); ++k)
      composed[k] = block.order.new_to_old[order.new_to_old[k]];
    block.order.new_to_old = std::move(composed);
  }
}

std::vector<HaloReceive> halo_receives(const RankBlock& block, const RowBlocks& blocks) {
  std::vector<HaloReceive> receives;
  for (index_t h = 0; h < index_t(block.halo_columns.size()); ++h) {
    const int owner = blocks.owner(block.halo_columns[h]);
    if (receives.empty() || receives.back().rank != owner) receives.push_back({owner, h, 0});
    ++receives.back().count;
  }
  return receives;
}

HaloSend halo_send(int rank, const std::vector<index_t>& requested_globals,
                   const RankBlock& block) {
  std::vector<index_t> new_of_old(std::size_t(block.local.rows));
  for (index_t k = 0; k < block.local.rows; ++k)
    new_of_old[block.order.empty() ? k : block.order.new_to_old[k]] = k;
  HaloSend send{rank, {}};
  send.local_rows.reserve(requested_globals.size());
  for (index_t global : requested_globals) {
    const index_t old = global - block.first_row;
    if (old < 0 || old >= block.local.rows)
      throw std::logic_error("halo_send: rank " + std::to_string(rank) + " asked for row " +
                             std::to_string(global) + ", which this rank does not own");
    send.local_rows.push_back(new_of_old[old]);
  }
  return send;
}

}  // namespace cgs::dist
