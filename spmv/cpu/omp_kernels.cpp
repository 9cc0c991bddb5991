// OpenMP CPU backends. Each splits the rows into one part per thread, once, at construction:
// by nonzeros (plus one per row, for its write) for CSR, COO and ELL, by stored slots for HLL
// (whose parts start on hack boundaries). No two threads write the same y entry. The fused CG
// team (solver/fused/) runs the same parts, through row_view().
#include <omp.h>

#include <algorithm>
#include <vector>

#include "spmv/cpu/cpu_backend.hpp"

namespace cgs {
namespace {

int thread_count(int requested) { return requested > 0 ? requested : omp_get_max_threads(); }

// Boundaries b[0] = 0 <= b[1] <= ... <= b[parts] = items, splitting a non-decreasing cumulative
// cost (cost(i) = work in items [0, i)) into parts of nearly equal cost.
template <typename CostFn>
std::vector<index_t> balanced_split(index_t items, int parts, CostFn cost) {
  std::vector<index_t> bounds(parts + 1, items);
  bounds[0] = 0;
  const double total = double(cost(items));
  index_t lo = 0;
  for (int p = 1; p < parts; ++p) {
    const double target = total * p / parts;
    index_t hi = items;
    while (lo < hi) {  // first i with cost(i) >= target
      const index_t mid = lo + (hi - lo) / 2;
      if (double(cost(mid)) < target)
        lo = mid + 1;
      else
        hi = mid;
    }
    bounds[p] = lo;
  }
  return bounds;
}

template <typename T>
std::vector<index_t> split_rows_by_nonzeros(const CsrMatrix<T>& A, int parts) {
  return balanced_split(A.rows, parts, [&](index_t r) { return std::int64_t(A.row_ptr[r]) + r; });
}

// Tail entries of the rows before `row` (the HYB tail, formats/hll.hpp).
template <typename T>
std::int64_t tail_before(const HllMatrix<T>& A, index_t row) {
  const auto t = std::lower_bound(A.tail_rows.begin(), A.tail_rows.end(), row);
  return A.tail_ptr.empty() ? 0 : A.tail_ptr[t - A.tail_rows.begin()];
}

// Hacks balanced by stored slots and tail entries, as row boundaries (the last one is the row
// count). Sorted (SELL-C-sigma), whole windows of sigma rows: a window's slots hold its rows,
// so no two parts write the same y entry.
template <typename T>
std::vector<index_t> split_hacks_by_slots(const HllMatrix<T>& A, int parts) {
  const index_t group = A.sorted() ? A.sigma : A.hack_size;  // rows per unit of the split
  const index_t units = A.rows == 0 ? 0 : (A.rows - 1) / group + 1;
  const auto first_row = [&](index_t unit) {
    return index_t(std::min<std::int64_t>(A.rows, std::int64_t(unit) * group));
  };
  std::vector<index_t> bounds = balanced_split(units, parts, [&](index_t unit) {
    const index_t row = first_row(unit);
    return A.hack_offset[(row + A.hack_size - 1) / A.hack_size] + tail_before(A, row);
  });
  for (index_t& b : bounds) b = first_row(b);
  return bounds;
}

template <typename T, typename Stored>
class OmpBackend final : public cpu::CpuBackend<T, Stored> {
 public:
  OmpBackend(Format format, const CsrMatrix<T>& A, Stored stored, std::vector<index_t> parts,
             index_t hack_size = 0)
      : cpu::CpuBackend<T, Stored>(Device::omp, format, A, std::move(stored), std::move(parts),
                                   hack_size) {}
  // Each part exactly once, whatever the team size OpenMP gives.
  void apply(const T* x, T* y) override {
    const std::vector<index_t>& bounds = this->parts();
    const int parts = int(bounds.size()) - 1;
#pragma omp parallel for num_threads(parts) schedule(static, 1)
    for (int p = 0; p < parts; ++p) this->multiply(x, y, bounds[p], bounds[p + 1]);
  }
};

}  // namespace

template <typename T>
std::unique_ptr<SpmvBackend<T>> make_omp_backend(const CsrMatrix<T>& A,
                                                 const BackendOptions& options) {
  const int threads = thread_count(options.threads);
  switch (options.format) {
    case Format::csr:
      return std::make_unique<OmpBackend<T, CsrMatrix<T>>>(Format::csr, A, A,
                                                           split_rows_by_nonzeros(A, threads));
    case Format::coo:
      return std::make_unique<OmpBackend<T, CooMatrix<T>>>(Format::coo, A, to_coo(A),
                                                           split_rows_by_nonzeros(A, threads));
    case Format::ell:
      return std::make_unique<OmpBackend<T, EllMatrix<T>>>(Format::ell, A, to_ell(A),
                                                           split_rows_by_nonzeros(A, threads));
    case Format::hll: {
      HllMatrix<T> hll = make_hll(A, options);
      std::vector<index_t> parts = split_hacks_by_slots(hll, threads);
      return std::make_unique<OmpBackend<T, HllMatrix<T>>>(Format::hll, A, std::move(hll),
                                                           std::move(parts), options.hack_size);
    }
  }
  throw InputError("unknown format");
}

template std::unique_ptr<SpmvBackend<float>> make_omp_backend(const CsrMatrix<float>&,
                                                              const BackendOptions&);
template std::unique_ptr<SpmvBackend<double>> make_omp_backend(const CsrMatrix<double>&,
                                                               const BackendOptions&);

}  // namespace cgs
