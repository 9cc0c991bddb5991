// The rows of A spread over P ranks, and each rank's rows split as PETSc splits an MPIAIJ
// matrix: a local (diagonal) block on the columns the rank owns, and a halo (off-diagonal) block
// on the columns other ranks own, compressed to the few it touches. Nothing here needs MPI: the
// partition is computed where the whole matrix is (rank 0), the split on each rank.
//
// Ranks own contiguous ranges of rows in the numbering the solve uses. A graph partition
// (METIS) that gives a rank scattered rows is followed by a renumbering (`order`) that makes
// them contiguous, so the rest of the code knows only contiguous blocks.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "formats/csr.hpp"
#include "formats/row_order.hpp"

namespace cgs::dist {

// Rank r owns rows [offsets[r], offsets[r + 1]); offsets has ranks + 1 entries.
struct RowBlocks {
  std::vector<index_t> offsets{0};
  int ranks() const { return int(offsets.size()) - 1; }
  index_t first(int rank) const { return offsets[rank]; }
  index_t rows(int rank) const { return offsets[rank + 1] - offsets[rank]; }
  int owner(index_t row) const;  // the rank whose block holds `row`
};

enum class PartitionKind { contiguous, metis };
PartitionKind parse_partition(const std::string& name);  // "contiguous" | "metis"; InputError
std::string to_string(PartitionKind kind);
bool metis_available();  // built with libmetis

// Contiguous blocks with about nnz / ranks entries each: the block boundaries are the rows where
// the running count of entries (plus one per row, so empty rows still count) passes r / ranks of
// the total. With more ranks than rows some blocks are empty.
RowBlocks partition_by_nonzeros(const std::vector<index_t>& row_ptr, int ranks);

// Equal row counts (for generated stencils, whose rows are all about as long).
RowBlocks partition_by_rows(index_t rows, int ranks);

// Where the solve's numbering comes from: `order` (empty: A's own) and the blocks in it.
struct Partition {
  PartitionKind kind = PartitionKind::contiguous;
  RowPermutation order;  // row k of the solve is row order.new_to_old[k] of A
  RowBlocks blocks;
};
// Contiguous: no renumbering. METIS: a k-way partition of A's graph with vertex weights =
// row lengths (so the parts balance nonzeros, not rows), cutting as few edges as it can (the
// halo), then the rows renumbered part by part. InputError when built without METIS.
Partition make_partition(const CsrMatrix<double>& A, int ranks, PartitionKind kind);

// Rows [first, first + count) of A, column indices unchanged (global).
CsrMatrix<double> row_block(const CsrMatrix<double>& A, index_t first, index_t count);

// One rank's share of A in the PETSc split.
struct RankBlock {
  index_t first_row = 0;    // global number of local row 0 (before the local reordering)
  index_t global_rows = 0;  // n of the whole system
  CsrMatrix<double> local;  // rows x rows: the entries whose column this rank owns
  CsrMatrix<double> halo;   // rows x halo_columns.size(): the other entries, columns compressed
  std::vector<index_t> halo_columns;  // the global column of each halo column, increasing
  // The rank's own reordering of its rows (--rcm, --sort-rows) applied to local (P A P^T) and to
  // the rows of halo: local row k is block row order.new_to_old[k]. Empty: none.
  RowPermutation order;
  index_t nnz() const { return local.nnz() + halo.nnz(); }
};
// rows: the rank's rows with global column indices (row_block of the renumbered A); blocks: who
// owns which columns.
RankBlock split_rows(const CsrMatrix<double>& rows, index_t first_row, index_t global_rows);
// Renumbers the rank's rows (local block symmetrically, halo block by rows).
void reorder_locally(RankBlock& block, const RowPermutation& order);

// What a rank receives: from each neighbour a contiguous range of the halo (the halo columns are
// increasing and the owners' blocks contiguous, so each owner's columns are one range).
struct HaloReceive {
  int rank;
  index_t offset, count;  // halo[offset .. offset + count)
};
std::vector<HaloReceive> halo_receives(const RankBlock& block, const RowBlocks& blocks);

// What a rank sends: the local entries (in the rank's reordered numbering) a neighbour asked for,
// in the order of the neighbour's halo (increasing global row).
struct HaloSend {
  int rank;
  std::vector<index_t> local_rows;
};
// requested_globals: the global rows the neighbour asked this rank for, increasing.
HaloSend halo_send(int rank, const std::vector<index_t>& requested_globals,
                   const RankBlock& block);

}  // namespace cgs::dist
