// IC(0)'s set-up on the GPU (solver/precond/ic0_gpu.cu) for a solve that runs there, in the `levels`
// order (the matrix's own rows): on a 9M-row grid the host's set-up took
// 0.68 s of a 0.80 s set-up on 16 cores, most of it in serial passes (levels, the factor's rows)
// and fresh host arrays (pattern).
//
// The device set-up, from A's CSR where the SpMV backend keeps it (read in place) or uploaded:
//   - L's pattern (A's strictly lower part) and L^T's (A's strictly upper part) counted, scanned
//     (cub) and filled, one thread a row; A's pattern must be symmetric (each upper entry's mirror
//     found in L by a binary search, its position kept for the values): otherwise analyze says
//     so and the host path runs;
//   - both level schedules by Kahn's algorithm in one cooperative kernel, the two solves side by
//     side, a grid sync per level: a row is ready when the last row it reads is done (forward:
//     its strictly lower entries; backward: its strictly upper ones), and the forward rows are
//     factorised as they come (the host's factorize_row arithmetic, each operation rounded as
//     the host's, no FMA: the host's bits). Each level's rows are then sorted (cub's segmented
//     sort) as the host's schedules hold them: forward ascending, backward descending;
//   - new values (set_values), or a pivot that was not positive (the shifts A + alpha diag(A)),
//     factorise again level by level in the stored forward schedule (one cooperative kernel);
//   - L^T's values gathered from their mirrors, 1 / L's diagonal, and the casts to T, into the
//     arrays the program borrows: L, L^T, the schedules and 1/diag never leave the device; only
//     the level offsets come to the host, for the program's operation list.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "formats/csr.hpp"
#include "solver/precond/program_spec.hpp"  // CsrArrays
#include "solver/precond/sparse_parts.hpp"  // LevelSchedule

namespace cgs::precond {

// The rows from which ic0 sets up on the device when the solve runs there (the `levels` order):
// kDeviceSetupRows, or CGSOLVE_IC0_DEVICE_ROWS where set (tests force small systems through the
// device path with it).
index_t ic0_device_setup_rows();

// The host path's factor of A in A's own row order (ic0.cpp's factorisation, shifts included):
// L's strictly lower part (A's pattern below the diagonal) and L's diagonal, and the alpha of
// the shift it took (0: none). The reference of the device set-up's tests.
struct Ic0HostFactor {
  CsrMatrix<double> lower;
  std::vector<double> pivot;
  double alpha = 0;
};
Ic0HostFactor ic0_factor_on_host(const CsrMatrix<double>& A);

// The shifts the factorisation tries after alpha (0 first, then 1e-3, 1e-2, ...), and the
// report's sentence for the one it took; past the last, InputError.
double next_ic0_shift(double alpha);
std::string ic0_shift_fact(double alpha);

// What the program borrows, in device memory (values in T).
template <typename T>
struct Ic0DeviceArrays {
  const index_t* lower_ptr = nullptr;
  const index_t* lower_cols = nullptr;
  const T* lower_values = nullptr;
  const index_t* upper_ptr = nullptr;
  const index_t* upper_cols = nullptr;
  const T* upper_values = nullptr;
  const T* inverse_diagonal = nullptr;
  const index_t* forward_rows = nullptr;   // level by level, forward_start's offsets
  const index_t* backward_rows = nullptr;  // level by level, backward_start's offsets
};

struct Ic0GpuSeconds {
  double pattern = 0, levels = 0, factorisation = 0, program = 0;
};

template <typename T>
class Ic0Gpu {
 public:
  virtual ~Ic0Gpu() = default;
  // L's and L^T's patterns, both level schedules, and L's values for A (no shift) found on the
  // way. False when A's pattern is not symmetric (nothing else done). InputError as the host's
  // for a row without a diagonal entry. `on_device`: A's arrays where the device holds them
  // (values used only in double); what is missing is uploaded.
  virtual bool analyze(const CsrMatrix<double>& A, const CsrArrays& on_device) = 0;
  // Whether analyze's factor (A without a shift) had every pivot positive and finite.
  virtual bool analyze_factor_ok() const = 0;
  // L's values for A + alpha diag(A) in the stored forward schedule (same pattern as analyze
  // saw); false when a pivot is not positive and finite.
  virtual bool factorize(const CsrMatrix<double>& A, const CsrArrays& on_device, double alpha) = 0;
  // L^T's values, 1 / L's diagonal and the casts to T from the last factor: arrays() ready.
  virtual void write_program_values() = 0;
  virtual Ic0DeviceArrays<T> arrays() const = 0;
  // The level offsets (levels + 1 each), on the host.
  virtual const std::vector<index_t>& forward_start() const = 0;
  virtual const std::vector<index_t>& backward_start() const = 0;
  virtual std::int64_t lower_nnz() const = 0;
  // The last analyze's pattern and levels phases, the last factorize's and write_program_values'
  // seconds (each waited for).
  virtual Ic0GpuSeconds seconds() const = 0;
  virtual int grid_blocks() const = 0;  // the cooperative kernels' grid
  // Host copies, for the tests: L (strictly lower, values in double), its diagonal, and the two
  // schedules.
  virtual CsrMatrix<double> download_lower() const = 0;
  virtual std::vector<double> download_pivot() const = 0;
  virtual LevelSchedule download_forward() const = 0;
  virtual LevelSchedule download_backward() const = 0;
};

// Built without CUDA, it throws DeviceError.
template <typename T>
std::unique_ptr<Ic0Gpu<T>> make_ic0_gpu();

}  // namespace cgs::precond
