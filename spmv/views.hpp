// What a backend lends to the fused CG loops: its stored matrix as a plain view (pointers and
// sizes, in host or device memory) that the format's row function walks.
//
// The same view types serve the CPU row walkers (spmv/cpu/kernels.hpp) and the CUDA row
// functions (spmv/cuda/*_device.cuh), so a format's product is written once per device and the
// fused loops reuse it with a vector computed on the fly (p = z + beta p). A backend either
// returns its Rows (SpmvBackend::rows()) or says why it cannot (SpmvBackend::no_rows_reason()):
// the cuSPARSE kernels and the CSR stream kernel are whole-product kernels with no row function.
// The matrix arrays are read-only while a view is in use: __restrict__ lets the GPU read them
// through the read-only data path.
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "formats/types.hpp"

namespace cgs {

// Units of about equal nonzeros over CSR rows, for the GPU's "balanced" kernel and fused loops
// (spmv/cuda/csr_balanced.cuh), in device memory. Unit u covers nonzeros
// [start[u], start[u + 1]) from row first_row[u] (count + 1 entries each, the last the row
// count): up to kBalancedUnitRows whole rows of at most kBalancedUnit nonzeros in all, or one
// piece of kBalancedUnit nonzeros of a longer row. partial and arrivals (one per unit) are
// scratch where the pieces of a long row meet.
inline constexpr int kBalancedUnit = 256;
inline constexpr int kBalancedUnitRows = 32;
inline constexpr int kBalancedLanes = -1;  // CsrView::lanes of the balanced kernel
struct CsrUnits {
  index_t count = 0;
  const index_t* __restrict__ start = nullptr;
  const index_t* __restrict__ first_row = nullptr;
  double* partial = nullptr;
  unsigned* arrivals = nullptr;
};

// CSR. lanes: threads per row of the GPU row function (1: a thread per row; 2..32: a group of
// lanes per row, for long rows; kBalancedLanes: a warp per unit of `units`); the CPU walkers
// ignore it and units.
template <typename T>
struct CsrView {
  index_t rows;
  const index_t* __restrict__ row_ptr;
  const index_t* __restrict__ col_idx;
  const T* __restrict__ values;
  int lanes;
  CsrUnits units;
};

// ELLPACK, column-major (slot j * rows + row). full_width > 0: every row runs to it, padding
// included (value 0, a valid column); 0: each row stops at row_length.
template <typename T>
struct EllView {
  index_t rows;
  index_t width;
  index_t full_width;
  const index_t* __restrict__ row_length;
  const index_t* __restrict__ col_idx;
  const T* __restrict__ values;
};

// Hacked ELLPACK: entry j of local slot r of hack h at hack_offset[h] + j * hack_size + r, for
// j < min(row_length[r], tail_from). A row longer than tail_from continues in the HYB tail
// (formats/hll.hpp): tail row t (tail_rows ascending) holds entries tail_ptr[t]..tail_ptr[t+1].
// Sorted (SELL-C-sigma, slot_row not null): slot s holds row slot_row[s], row i sits in slot
// row_slot[i], and every per-row array (row_length, tail_rows) is by slot; the slots of window w
// (sigma rows) are the rows of window w. Unsorted: slot = row, both pointers null.
template <typename T>
struct HllView {
  index_t rows;
  index_t hack_size;
  const offset_t* __restrict__ hack_offset;
  const index_t* __restrict__ hack_width;
  const index_t* __restrict__ row_length;
  const index_t* __restrict__ col_idx;
  const T* __restrict__ values;
  index_t tail_from;
  index_t tail_count;  // rows in the tail
  const index_t* __restrict__ tail_rows;
  const index_t* __restrict__ tail_ptr;
  const index_t* __restrict__ tail_col_idx;
  const T* __restrict__ tail_values;
  index_t sigma;                         // sort window; meaningful where slot_row is set
  const index_t* __restrict__ slot_row;  // slot -> row; null: unsorted
  const index_t* __restrict__ row_slot;  // row -> slot; null: unsorted
};

// COO, sorted by row. row_start (rows + 1 entries, built once with the backend) gives each row's
// first entry, so that a row can be walked on its own; the product reads no more than the
// entries themselves (row_idx is not read by the row functions).
template <typename T>
struct CooView {
  index_t rows;
  const index_t* __restrict__ row_start;
  const index_t* __restrict__ row_idx;
  const index_t* __restrict__ col_idx;
  const T* __restrict__ values;
};

template <typename T>
using RowView = std::variant<CsrView<T>, EllView<T>, HllView<T>, CooView<T>>;

// A backend's rows for the fused loops. parts: on the OpenMP device the row boundaries of the
// thread parts the backend balanced by nonzeros (parts.size() - 1 parts; for HLL on hack
// boundaries); empty elsewhere.
template <typename T>
struct Rows {
  RowView<T> view;
  bool on_device = false;  // pointers into GPU memory
  std::vector<index_t> parts;
};

}  // namespace cgs
