// A program as a preconditioner's set-up writes it: operations that name their arrays by handle,
// and the arrays themselves in host memory. Placing it on a device (HostProgram here,
// DeviceProgram in solver/precond/device_program.cuh) copies the arrays there and resolves the
// handles; new values for the same pattern (set_values) rewrite the value arrays only, same
// handles and sizes, and the placed program copies just those again.
// An array may instead be borrowed: memory already where the program runs (the AMG hierarchy's
// levels: on the device for a GPU set-up, its host arrays for a host program), owned by the
// preconditioner and alive as long as it, refreshed in place by its owner at set_values. Its
// host vector stays empty; the placement reads the pointer and never copies it. Whoever borrows
// passes memory of the placement's side (device pointers to a device program, host pointers to
// a host program).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "solver/precond/program.hpp"

namespace cgs::precond {

inline constexpr int kNoArray = -1;

// A CSR matrix's arrays where their owner keeps them, for a reader that uses them in place and
// never frees them: the SpMV backend's device copy lent to a set-up (the device Lanczos), the GPU
// AMG hierarchy's device levels, or the host hierarchy's arrays for a host program. A null
// pointer: that array is not available in place (the reader copies it).
struct CsrArrays {
  const index_t* row_ptr = nullptr;
  const index_t* col_idx = nullptr;
  const double* values = nullptr;
  std::int64_t nnz = 0;
};

struct OpSpec {
  OpKind kind = OpKind::product;
  index_t items = 0;
  int rows = kNoArray, row_ptr = kNoArray, col_idx = kNoArray;  // index arrays
  int values = kNoArray, d = kNoArray, blocks = kNoArray;       // value arrays
  index_t rows_from = 0;  // the operation's rows start this far into `rows` (levels in one array)
  index_t block = 0;
  int x = kNoSlot, u = kNoSlot, v = kNoSlot, y = kNoSlot, w = kNoSlot, t = kNoSlot;
  double alpha = 1, beta = 0, gamma = 0;
  int dot = 0;
  int substitution = 0;  // triangular_level: a direct solver's rounding (program.hpp)
};

template <typename T>
struct ProgramSpec {
  std::vector<std::vector<index_t>> index_arrays;
  std::vector<std::vector<T>> value_arrays;
  std::vector<std::size_t> work;  // sizes of the work slots kFirstWorkSlot, ...
  std::vector<OpSpec> ops;
  // Per handle, the borrowed pointer, or null (absent past the end: not borrowed).
  std::vector<const index_t*> borrowed_indices;
  std::vector<const T*> borrowed_values;

  int add_indices(std::vector<index_t> a) {
    index_arrays.push_back(std::move(a));
    return int(index_arrays.size()) - 1;
  }
  int add_values(std::vector<T> a) {
    value_arrays.push_back(std::move(a));
    return int(value_arrays.size()) - 1;
  }
  int borrow_indices(const index_t* device) {
    borrowed_indices.resize(index_arrays.size() + 1, nullptr);
    borrowed_indices.back() = device;
    return add_indices({});
  }
  int borrow_values(const T* device) {
    borrowed_values.resize(value_arrays.size() + 1, nullptr);
    borrowed_values.back() = device;
    return add_values({});
  }
  const index_t* borrowed_index_array(int h) const {
    return std::size_t(h) < borrowed_indices.size() ? borrowed_indices[std::size_t(h)] : nullptr;
  }
  const T* borrowed_value_array(int h) const {
    return std::size_t(h) < borrowed_values.size() ? borrowed_values[std::size_t(h)] : nullptr;
  }
  bool borrows() const {
    for (const index_t* p : borrowed_indices)
      if (p) return true;
    for (const T* p : borrowed_values)
      if (p) return true;
    return false;
  }
  int add_work(std::size_t n) {
    work.push_back(n);
    return kFirstWorkSlot + int(work.size()) - 1;
  }
  int slots() const { return kFirstWorkSlot + int(work.size()); }
};

// The operations with their array handles resolved against arrays already placed somewhere.
template <typename T, typename IndexPtr, typename ValuePtr>
std::vector<Op<T>> resolve_ops(const std::vector<OpSpec>& specs, IndexPtr index_ptr,
                               ValuePtr value_ptr) {
  std::vector<Op<T>> ops;
  for (const OpSpec& s : specs) {
    Op<T> op{};
    op.kind = s.kind;
    op.items = s.items;
    op.rows = s.rows == kNoArray ? nullptr : index_ptr(s.rows) + s.rows_from;
    op.row_ptr = s.row_ptr == kNoArray ? nullptr : index_ptr(s.row_ptr);
    op.col_idx = s.col_idx == kNoArray ? nullptr : index_ptr(s.col_idx);
    op.values = s.values == kNoArray ? nullptr : value_ptr(s.values);
    op.d = s.d == kNoArray ? nullptr : value_ptr(s.d);
    op.blocks = s.blocks == kNoArray ? nullptr : value_ptr(s.blocks);
    op.block = s.block;
    op.x = s.x, op.u = s.u, op.v = s.v, op.y = s.y, op.w = s.w, op.t = s.t;
    op.alpha = s.alpha, op.beta = s.beta, op.gamma = s.gamma;
    op.dot = s.dot;
    op.substitution = s.substitution;
    ops.push_back(op);
  }
  return ops;
}

}  // namespace cgs::precond
