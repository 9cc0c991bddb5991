// OpenMP CPU backends. Each splits the work into one part per thread, once, at construction:
// by nonzeros (plus one per row, for its write) for CSR, COO and ELL, by stored slots for HLL.
// Parts start and end at row boundaries, so no two threads write the same y entry.
#include <omp.h>

#include <algorithm>
#include <vector>

#include "formats/convert.hpp"
#include "spmv/cpu/cpu_backend_base.hpp"
#include "spmv/cpu/kernels.hpp"

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

// Runs body(part) for every part, each part exactly once whatever the team size.
template <typename Body>
void for_each_part(int parts, Body body) {
#pragma omp parallel for num_threads(parts) schedule(static, 1)
  for (int p = 0; p < parts; ++p) body(p);
}

// Every OpenMP backend: the product is split into parts, one per thread, and apply() runs them
// all on the team; apply_part() lets a solver run them on its own team (omp_fused_cg).
template <typename T>
class OmpBackend : public cpu::BackendBase<T, Device::omp> {
 public:
  using cpu::BackendBase<T, Device::omp>::BackendBase;
  void apply(const T* x, T* y) final {
    for_each_part(this->parts(), [&](int p) { this->apply_part(p, x, y); });
  }
};

// CSR and ELL: each part a range of rows.
template <typename T, typename Matrix>
class OmpRows final : public OmpBackend<T> {
 public:
  OmpRows(Format format, const CsrMatrix<T>& A, Matrix stored, int threads)
      : OmpBackend<T>(format, A),
        A_(std::move(stored)),
        bounds_(split_rows_by_nonzeros(A, threads)) {}
  int parts() const override { return int(bounds_.size()) - 1; }
  index_t part_begin(int p) const override { return bounds_[p]; }
  void apply_part(int p, const T* x, T* y) override {
    cpu::multiply_rows(A_, x, y, bounds_[p], bounds_[p + 1]);
  }
  HostMatrix<T> host_matrix() const override { return cpu::host_view(A_); }

 private:
  Matrix A_;
  std::vector<index_t> bounds_;
};

// COO: each part a range of rows and the entries of those rows.
template <typename T>
class OmpCoo final : public OmpBackend<T> {
 public:
  OmpCoo(const CsrMatrix<T>& A, int threads)
      : OmpBackend<T>(Format::coo, A), A_(to_coo(A)), rows_(split_rows_by_nonzeros(A, threads)) {
    for (index_t r : rows_) entries_.push_back(A.row_ptr[r]);
  }
  int parts() const override { return int(rows_.size()) - 1; }
  index_t part_begin(int p) const override { return rows_[p]; }
  void apply_part(int p, const T* x, T* y) override {
    cpu::coo_rows(A_, x, y, rows_[p], rows_[p + 1], entries_[p]);
  }
  HostMatrix<T> host_matrix() const override { return cpu::host_view(A_); }

 private:
  CooMatrix<T> A_;
  std::vector<index_t> rows_, entries_;  // each part's first row and first entry
};

template <typename T>
class OmpHll final : public OmpBackend<T> {
 public:
  OmpHll(const CsrMatrix<T>& A, index_t hack_size, int threads)
      : OmpBackend<T>(Format::hll, A, hack_size), A_(to_hll(A, hack_size)) {
    bounds_ = balanced_split(A_.hacks(), threads, [&](index_t h) { return A_.hack_offset[h]; });
  }
  int parts() const override { return int(bounds_.size()) - 1; }
  index_t part_begin(int p) const override {
    return std::min<std::int64_t>(A_.rows, std::int64_t(bounds_[p]) * A_.hack_size);
  }
  void apply_part(int p, const T* x, T* y) override {
    cpu::hll_hacks(A_, x, y, bounds_[p], bounds_[p + 1]);
  }
  HostMatrix<T> host_matrix() const override { return cpu::host_view(A_); }

 private:
  HllMatrix<T> A_;
  std::vector<index_t> bounds_;
};

}  // namespace

template <typename T>
std::unique_ptr<SpmvBackend<T>> make_omp_backend(const CsrMatrix<T>& A,
                                                 const BackendOptions& options) {
  const int threads = thread_count(options.threads);
  switch (options.format) {
    case Format::csr: return std::make_unique<OmpRows<T, CsrMatrix<T>>>(Format::csr, A, A, threads);
    case Format::coo: return std::make_unique<OmpCoo<T>>(A, threads);
    case Format::ell:
      return std::make_unique<OmpRows<T, EllMatrix<T>>>(Format::ell, A, to_ell(A), threads);
    case Format::hll: return std::make_unique<OmpHll<T>>(A, options.hack_size, threads);
  }
  throw InputError("unknown format");
}

template std::unique_ptr<SpmvBackend<float>> make_omp_backend(const CsrMatrix<float>&,
                                                              const BackendOptions&);
template std::unique_ptr<SpmvBackend<double>> make_omp_backend(const CsrMatrix<double>&,
                                                               const BackendOptions&);

}  // namespace cgs
