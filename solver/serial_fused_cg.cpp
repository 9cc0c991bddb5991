#include "solver/serial_fused_cg.hpp"

#include <algorithm>
#include <chrono>
#include <vector>

#include "solver/fused_cpu_passes.hpp"

namespace cgs {
namespace {

using Clock = std::chrono::steady_clock;

// On one thread, pass A needs no second p buffer: p_k replaces p_{k-1} (and x catches up) row by
// row just ahead of the product, up to the furthest column the rows of the next chunk read, so
// the product gathers p_k alone instead of computing z_j + beta p_{k-1,j} at every entry (half
// the loads and flops per nonzero). On banded matrices the update runs a few rows ahead of the
// product, in cache; a matrix with far columns simply updates p sooner.
struct Chunk {
  fused::RowRange rows;
  index_t reach;  // p_k must be ready in rows [0, reach) before the chunk's product
};

// For every row, one past its largest column (0 for an empty row).
template <typename T>
std::vector<index_t> row_reach(const CsrMatrix<T>& A) {
  std::vector<index_t> reach(A.rows, 0);
  for (index_t r = 0; r < A.rows; ++r)
    for (index_t k = A.row_ptr[r]; k < A.row_ptr[r + 1]; ++k)
      reach[r] = std::max(reach[r], A.col_idx[k] + 1);
  return reach;
}
template <typename T>
std::vector<index_t> row_reach(const CooMatrix<T>& A) {
  std::vector<index_t> reach(A.rows, 0);
  for (index_t k = 0; k < A.nnz(); ++k)
    reach[A.row_idx[k]] = std::max(reach[A.row_idx[k]], A.col_idx[k] + 1);
  return reach;
}
template <typename T>
std::vector<index_t> row_reach(const EllMatrix<T>& A) {
  std::vector<index_t> reach(A.rows, 0);
  for (index_t r = 0; r < A.rows; ++r)
    for (index_t j = 0; j < A.row_length[r]; ++j)
      reach[r] = std::max(reach[r], A.col_idx[A.slot(r, j)] + 1);
  return reach;
}
template <typename T>
std::vector<index_t> row_reach(const HllMatrix<T>& A) {
  std::vector<index_t> reach(A.rows, 0);
  for (index_t r = 0; r < A.rows; ++r) {
    const index_t h = r / A.hack_size, i = r % A.hack_size;
    for (index_t j = 0; j < A.row_length[r]; ++j)
      reach[r] = std::max(reach[r], A.col_idx[A.hack_offset[h] + j * A.hack_size + i] + 1);
  }
  return reach;
}

template <typename T>
index_t chunk_rows(const HllMatrix<T>& A) {
  return std::max<index_t>(1, 128 / A.hack_size) * A.hack_size;  // whole hacks
}
template <typename Matrix>
index_t chunk_rows(const Matrix&) {
  return 128;
}

template <typename Matrix>
std::vector<Chunk> make_chunks(const Matrix& A, index_t n) {
  const std::vector<index_t> reach = row_reach(A);
  const index_t size = chunk_rows(A);
  std::vector<Chunk> chunks;
  index_t furthest = 0;
  for (index_t first = 0; first < n; first += size) {
    const index_t last = std::min(n, first + size);
    for (index_t r = first; r < last; ++r) furthest = std::max(furthest, reach[r]);
    furthest = std::max(furthest, last);  // the chunk's own rows, for p.q
    chunks.push_back({fused::row_range(A, first, last), furthest});
  }
  return chunks;
}

// Pass A on one thread with one p buffer (v.p_old == v.p_new): returns p.q.
template <typename T, typename Matrix>
double pass_a(const Matrix& A, const std::vector<Chunk>& chunks, const fused::Vectors<T>& v, T beta,
              T alpha_prev) {
  const T* z = v.z;
  T* p = v.p_new;
  T* x = v.x;
  T* q = v.q;
  index_t ready = 0;
  double pq = 0;
  for (const Chunk& chunk : chunks) {
#pragma omp simd
    for (index_t i = ready; i < chunk.reach; ++i) {
      x[i] += alpha_prev * p[i];
      p[i] = fused::next_p(z[i], beta, p[i]);
    }
    ready = std::max(ready, chunk.reach);
    fused::walk_rows(A, chunk.rows, cpu::read_from(static_cast<const T*>(p)),
                     [&](index_t first, index_t count, const double* Ap) {
                       double sum = 0;
#pragma omp simd reduction(+ : sum)
                       for (index_t i = first; i < first + count; ++i) {
                         const T qi = T(Ap[i - first]);
                         q[i] = qi;
                         sum += double(p[i]) * double(qi);
                       }
                       pq += sum;
                     });
  }
  return pq;
}

// The loop for one stored format: everything below inlines its row walker.
template <typename T, typename Matrix>
void run(const Matrix& A, index_t n, fused::Vectors<T> v, double rr_threshold, long max_iters,
         fused::Outcome& out) {
  const fused::RowRange all = fused::row_range(A, 0, n);
  const std::vector<Chunk> chunks = make_chunks(A, n);
  v.p_old = v.p_new;  // one buffer (see Chunk)
  const fused::Sums start = fused::start_pass(A, all, v);
  double rr = start.rr, rz = start.rz;
  if (out.record(0, rr, rr_threshold)) return;

  T alpha_prev = 0, beta = 0;  // iteration 1: p_1 = z, and x has nothing to catch up
  for (long k = 1; k <= max_iters; ++k) {
    const double pq = pass_a(A, chunks, v, beta, alpha_prev);
    if (fused::breaks_down(pq, rz)) {  // x is x_{k-1}, as the generic loop leaves it
      out.breakdown(k, pq, rz);
      return;
    }
    const T alpha = T(rz / pq);
    const fused::Sums s = fused::pass_b(0, n, alpha, v);
    const double rz_old = rz;
    rr = s.rr;
    rz = s.rz;
    if (!std::isfinite(rr)) {
      fused::update_x(0, n, alpha, v.p_new, v.x);
      out.breakdown(k, pq, rr);
      return;
    }
    if (out.record(k, rr, rr_threshold) || k == max_iters) {
      fused::update_x(0, n, alpha, v.p_new, v.x);
      return;
    }
    beta = T(rz / rz_old);
    alpha_prev = alpha;
  }
}

}  // namespace

template <typename T>
CgResult serial_fused_conjugate_gradient(const HostMatrix<T>& A, index_t n, const T* inv_diag,
                                         const T* b, T* x, const CgOptions& options) {
  const fused::Limits limits = fused::limits(b, n, options);
  if (limits.rhs_norm == 0) return fused::zero_rhs(n, x);

  fused::Workspace<T> w(n, inv_diag != nullptr);
  fused::Outcome out(options, limits.rhs_norm, limits.max_iters);
  const auto begin = Clock::now();
  fused::visit(A, [&](const auto& matrix) {
    run(matrix, n, w.vectors(b, inv_diag, x), limits.rr_threshold, limits.max_iters, out);
  });
  return out.result(std::chrono::duration<double>(Clock::now() - begin).count());
}

template CgResult serial_fused_conjugate_gradient(const HostMatrix<float>&, index_t, const float*,
                                                  const float*, float*, const CgOptions&);
template CgResult serial_fused_conjugate_gradient(const HostMatrix<double>&, index_t, const double*,
                                                  const double*, double*, const CgOptions&);

}  // namespace cgs
