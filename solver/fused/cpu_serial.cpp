// The serial fused CPU CG loop (solver/fused/cpu_loop.hpp).
#include <algorithm>
#include <chrono>
#include <vector>

#include "solver/cg_result.hpp"
#include "solver/fused/cpu_loop.hpp"
#include "solver/fused/cpu_passes.hpp"
#include "solver/fused/cpu_solve.hpp"
#include "solver/fused/spmv_timer.hpp"

namespace cgs::fused {
namespace {

// On one thread, pass A needs no second p buffer: p_k replaces p_{k-1} (and x catches up) row by
// row just ahead of the product, up to the furthest column the rows of the next chunk read, so
// the product gathers p_k alone instead of computing z_j + beta p_{k-1,j} at every entry (half
// the loads and flops per nonzero). On banded matrices the update runs a few rows ahead of the
// product, in cache; a matrix with far columns simply updates p sooner.
struct Chunk {
  index_t first, last;
  index_t reach;  // p_k must be ready in rows [0, reach) before the chunk's product
};

// One past the largest column of each of the rows [first, last) (walked with the format's own
// walker: the "product" records the largest column it reads).
template <typename View>
index_t furthest_column(const View& A, index_t first, index_t last) {
  index_t reach = 0;
  cpu::walk_rows(
      A, first, last,
      [&](index_t j) {
        reach = std::max(reach, j + 1);
        return 0.0;
      },
      [](index_t, index_t, const double*) {});
  return reach;
}

template <typename T>
index_t chunk_rows(const HllView<T>& A) {
  if (A.slot_row) return A.sigma;  // sorted: whole windows (spmv/cpu/kernels.hpp)
  return std::max<index_t>(1, 128 / A.hack_size) * A.hack_size;  // whole hacks
}
template <typename View>
index_t chunk_rows(const View&) {
  return 128;
}

template <typename View>
std::vector<Chunk> make_chunks(const View& A, index_t n) {
  const index_t size = chunk_rows(A);
  std::vector<Chunk> chunks;
  index_t furthest = 0;
  for (index_t first = 0; first < n; first += size) {
    const index_t last = std::min(n, first + size);
    furthest = std::max({furthest, furthest_column(A, first, last), last});  // own rows for p.q
    chunks.push_back({first, last, furthest});
  }
  return chunks;
}

// Pass A on one thread with one p buffer (v.p_old == v.p_new): returns p.q.
template <typename T, typename View>
double pass_a_one_buffer(const View& A, const std::vector<Chunk>& chunks, const Vectors<T>& v,
                         T beta, T alpha_prev) {
  const T* z = v.z;
  T* p = v.p_new;
  T* x = v.x;
  T* q = v.q;
  index_t ready = 0;
  double pq = 0;
  for (const Chunk& chunk : chunks) {
#pragma omp simd
    for (index_t i = ready; i < chunk.reach; ++i) {
      x[i] = cg::next_x(x[i], alpha_prev, p[i]);
      p[i] = cg::next_p(z[i], beta, p[i]);
    }
    ready = std::max(ready, chunk.reach);
    cpu::walk_rows(A, chunk.first, chunk.last, cpu::read_from(static_cast<const T*>(p)),
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

// r.z of a preconditioner's program run on r (all its operations, one after the other).
template <typename T>
double run_program(const precond::HostProgram<T>& program) {
  double rz = 0;
  for (int i = 0; i < program.size(); ++i) rz += program.run_part(i, 0, 1);
  return rz;
}

// The loop for one stored format: everything below inlines its row walker.
template <typename T, typename View>
void run(const View& A, index_t n, Vectors<T> v, const precond::HostProgram<T>* program,
         cg::State& s, Monitor& monitor, SpmvTimer& timer) {
  const std::vector<Chunk> chunks = make_chunks(A, n);
  v.p_old = v.p_new;  // one buffer (see Chunk)
  const Sums start = start_pass(A, 0, n, v);
  const double rz0 = program ? run_program(*program) : start.rz;
  const bool stop = cg::started(s, start.rr, rz0);
  monitor.record(0, s);
  if (stop) return;

  T alpha_prev = 0, beta = 0;  // iteration 1: p_1 = z, and x has nothing to catch up
  for (long k = 1;; ++k) {
    const bool timed = timer.wanted(k);
    if (timed) timer.begin();
    const double pq = pass_a_one_buffer(A, chunks, v, beta, alpha_prev);
    if (timed) timer.end(k);
    if (!cg::step(s, pq, k)) return;  // breakdown: x is x_{k-1}, as the generic loop leaves it
    const T alpha = T(s.alpha);
    const Sums b = pass_b(0, n, alpha, v);
    const double rz = program ? run_program(*program) : b.rz;
    const bool stopped = cg::stepped(s, b.rr, rz, k);
    monitor.record(k, s);
    if (stopped) {
      update_x(0, n, alpha, v.p_new, v.x);
      return;
    }
    beta = T(s.beta);
    alpha_prev = alpha;
  }
}

}  // namespace

template <typename T>
CgResult serial_loop(const Rows<T>& rows, index_t n, Preconditioner<T>& M, const T* b, T* x,
                     const CgOptions& options) {
  return solve_fused(
      rows, n, M, b, x, options,
      [&](const auto& A, const Vectors<T>& v, const precond::HostProgram<T>* program, cg::State& s,
          Monitor& monitor, SpmvTimer& timer) { run(A, n, v, program, s, monitor, timer); });
}

template CgResult serial_loop(const Rows<float>&, index_t, Preconditioner<float>&, const float*,
                              float*, const CgOptions&);
template CgResult serial_loop(const Rows<double>&, index_t, Preconditioner<double>&, const double*,
                              double*, const CgOptions&);

}  // namespace cgs::fused
