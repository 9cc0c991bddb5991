// FSAI's factor G (solver/precond/fsai.cpp): the host's pattern and rows, and the same set-up on
// the GPU (solver/precond/fsai_gpu.cu) for a solve that runs there (on a 9M-row grid fsai:2's
// host set-up took 3.1 s on 16 cores, Jacobi's whole set-up 0.26 s).
//
// The device set-up: the pattern of tril(A^k) (k <= kFsaiDevicePowerMax) one thread a row
// (counted, scanned, filled sorted), G's rows one thread a row (A[p,p] gathered, factored and
// solved in local memory, the host's arithmetic in the host's order), G^T's pattern by a stable
// radix sort of G's entries by column and its values gathered through that order. Rows whose
// pattern is longer than kFsaiDeviceRowMax (a hub of an irregular matrix) are made on the host,
// pattern and values, and scattered into place: the device keeps every array, nothing of G
// travels back. Results equal the host's to rounding (FMA contraction on the device).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "formats/csr.hpp"
#include "solver/precond/fsai_row.hpp"      // kFsaiDeviceRowMax
#include "solver/precond/program_spec.hpp"  // CsrArrays

namespace cgs::precond {

// tril(A^k)'s size and its set-up's cost, counted before the pattern is built: row i's pattern
// (m entries) costs a dense Cholesky of A[p,p], m^3/6 flops. Rows are counted exactly where that
// costs at most `products` products of A (one visit per entry of each neighbour's row for k = 2);
// beyond, every stride-th row, scaled up, and every row heavier than a stride's share exactly (a
// hub's neighbours, which hold most of the flops on a power-law graph).
struct FsaiPatternCount {
  int power = 1;
  double tril_entries = 0;     // nnz of tril(A)
  double pattern_entries = 0;  // nnz of tril(A^k)
  index_t longest_row = 0;     // of tril(A^k) (of the rows counted)
  double factor_flops = 0;     // sum over rows of m^3 / 6
  bool sampled = false;        // counted on a sample of the rows
};
FsaiPatternCount count_fsai_pattern(const CsrMatrix<double>& A, int k, double products = 64);

// fsai:k is refused, before anything is built, where its rows' factorizations would cost more
// than kFsaiMaxFlops (about 1 ns a flop on a host core, so ~10 s on one core: fsai:2 on
// gen:powerlaw:20000 counts 2e13 and ran past 10 minutes; bcsstk13's 8e8 took 0.5-1.3 s, a 9M-row
// 2-D grid's 5e8) or its pattern would pass index_t's range. The refusal names the counts.
inline constexpr double kFsaiMaxFlops = 1e10;
std::string fsai_refusal(const FsaiPatternCount& count);
// The count in words: "tril(A^2) has N entries, R x tril(A)'s, rows up to M: its
// factorization's F flops" ("(sampled)" after N where it was).
std::string describe(const FsaiPatternCount& count);

// Row i's pattern: the columns <= i reached from i in at most k steps of A's graph, sorted.
std::vector<index_t> fsai_row_pattern(const CsrMatrix<double>& A, index_t i, int k);
// The pattern of tril(A^k), rows on every host core (values zero).
CsrMatrix<double> fsai_pattern(const CsrMatrix<double>& A, int k);
// Row g (m entries) of G on `pattern` (sorted, ending with the row's diagonal), `block` scratch.
// False when A[p,p] is not positive definite.
bool fsai_row(const CsrMatrix<double>& A, const index_t* pattern, index_t m, double* g,
              std::vector<double>& block);
// G's values on its pattern, rows on every host core; InputError naming the first row whose block
// is not positive definite.
void fsai_rows(const CsrMatrix<double>& A, CsrMatrix<double>& G);
// The patterns of the listed rows (fsai_row_pattern), on every host core when many.
std::vector<std::vector<index_t>> fsai_row_patterns(const CsrMatrix<double>& A,
                                                    const std::vector<index_t>& rows, int k);
// The listed rows of G on their patterns, concatenated into `packed` in the list's order, on
// every host core when many; the least listed row whose block is not SPD, or A.rows.
index_t fsai_listed_rows(const CsrMatrix<double>& A, const std::vector<index_t>& rows,
                         const std::vector<std::vector<index_t>>& patterns,
                         std::vector<double>& packed);
// The error fsai_rows throws for row `row` (0-based), shared with the device set-up.
[[noreturn]] void throw_fsai_not_spd(index_t row);

inline constexpr int kFsaiDevicePowerMax = 2;  // larger k: the host makes the pattern and rows

// A CSR matrix on the device, values in T, owned by the set-up that made it.
template <typename T>
struct FsaiDeviceCsr {
  index_t rows = 0;
  const index_t* row_ptr = nullptr;
  const index_t* col_idx = nullptr;
  const T* values = nullptr;
  std::int64_t nnz = 0;
};

struct FsaiPhaseSeconds {
  double pattern = 0, rows = 0, transpose = 0;
};

template <typename T>
class FsaiGpu {
 public:
  virtual ~FsaiGpu() = default;
  // G's pattern (tril(A^k), 1 <= k <= kFsaiDevicePowerMax) and G^T's, from A's pattern where
  // `on_device` has it (the SpMV backend's copy, read in place), else from A's uploaded here.
  virtual void analyze(const CsrMatrix<double>& A, int k, const CsrArrays& on_device) = 0;
  // G's values and G^T's, from A's values where `on_device` has them (double), else A.values
  // uploaded. Same pattern as analyze saw. InputError as fsai_rows for a block not SPD.
  virtual void compute(const CsrMatrix<double>& A, const CsrArrays& on_device) = 0;
  virtual FsaiDeviceCsr<T> g() const = 0;
  virtual FsaiDeviceCsr<T> gt() const = 0;
  // Seconds of the last analyze (pattern, transpose's pattern) and compute (rows, transpose's
  // values), each phase waited for.
  virtual FsaiPhaseSeconds seconds() const = 0;
  virtual index_t rows_on_host() const = 0;  // rows longer than kFsaiDeviceRowMax
  // Host copies, for the tests: G and G^T with their values in double.
  virtual CsrMatrix<double> download_g() const = 0;
  virtual CsrMatrix<double> download_gt() const = 0;
};

// Built without CUDA, it throws DeviceError.
template <typename T>
std::unique_ptr<FsaiGpu<T>> make_fsai_gpu();

}  // namespace cgs::precond
