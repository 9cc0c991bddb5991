// The one-reduction cluster CG kernel (one pass and one cluster barrier an iteration), opt-in
// for one system in double (Tuning::cluster_reductions). Included by cluster_cg.cu alone, which
// instantiates it.
#pragma once

#include "solver/cuda/cluster_common.cuh"

namespace cgs {
namespace cluster {

// The one-reduction iteration (opt-in: Tuning::cluster_reductions = 1, double
// only): one pass and ONE cluster barrier an iteration instead of two. With w = A u, u = M^-1 r
// (u = d .* r, or r without a preconditioner) and s = A p by recurrence:
//   pass k: the totals of pass k - 1 give beta_k and alpha_k (cg_step.hpp's decisions, p.q by
//   one_reduction_pq from r.r, r.u, w.u, u.s + p.w, p.s); then, row by row, p = u + beta p,
//   s = w + beta s, x += alpha p, r -= alpha s, u = d .* r, and w = A u, whose entries u_j of
//   other rows are computed on the fly from the previous pass's r_j, w_j, s_j, d_j (one mapped
//   address: the set's four vectors at a stride): the same expressions, the same bits as their
//   owner's, so the SpMV need not wait for a barrier after the updates.
// r, w and s have two buffers (pass k reads k - 1's and writes its own), the partial sums two
// slot sets. Where p.q comes out non-positive anyway, the pass forms p and A p and reduces p.q
// as the two-pass CG does (two more barriers, that pass only). A stop on the recursive residual
// is checked against b - A x and the solve restarts from it, p = u, where the true residual's
// norm is above Tuning::cluster_replacement_slack (10) x the threshold (at most kMaxRestarts
// times; a slack of 0 restarts at every stop: a test of the restart).
// Not the default: measured (BENCHMARKS 13e) it is 9-10% faster an iteration on
// Poisson and Net3 but 2-5% slower on BWSN_Network_2 and Exnet with Jacobi (four remote loads
// an entry), and its recurrences cost iterations on the water networks (Exnet without a
// preconditioner +27%, Net3 +3%); reliable updating of r and s every 100-fold drop (as the
// distributed single-reduction CG) made that worse, and in float they drift until Exnet without
// a preconditioner does not converge.
constexpr int kMaxRestarts = 3;
constexpr int kOneUnroll = 1;
constexpr int kOnePhases = 4;  // + 2 counts after them in the clocks
static_assert(kOnePhases + 2 <= kPhases, "the clocks hold the phases and the counts");
const char* const kOnePhaseNames[kOnePhases] = {
    "totals + decision + block barrier", "own rows (p, s, x, r, SpMV w = A u)",
    "block sums (waits for the block's rows)", "cluster barrier"};

// A row's entries of one set (r, w, s, d at a stride): the owner's shared memory mapped once.
template <typename T>
struct SetEntries {
  T r, w, s, d;
};

template <typename T>
__device__ __forceinline__ SetEntries<T> set_entries(cgrp::cluster_group& cluster, unsigned rank,
                                                     const T* set, index_t stride, unsigned owner,
                                                     index_t j, bool s_too, bool d_too) {
  const T* at = owner == rank ? set + j : cluster.map_shared_rank(set + j, owner);
  return {at[0], at[stride], s_too ? at[2 * stride] : T(0), d_too ? at[3 * stride] : T(1)};
}

// The kernel's steps, each inlined into it (the instances' registers and spills as with one body:
// checked with -Xptxas -v). What every step of a block reads: the cluster, the block's rank, its
// matrix rows, the sets' stride V and its row count.
template <typename T>
struct OneBlock {
  cgrp::cluster_group& cluster;
  unsigned rank;
  const Shared<T>& m;  // the matrix's arrays
  index_t V, mine;
  bool scaled;
};

// x0 of this block's rows into shared memory, d (1 without a preconditioner) into both sets.
template <int kBlock, typename T>
__device__ __forceinline__ void load_x_and_d(const Args<T>& a, long long sys, index_t first,
                                             index_t mine, T* x, T* sets, index_t V, bool scaled) {
  const T* x0 = a.x + sys * a.n + first;
  for (index_t i = threadIdx.x; i < mine; i += kBlock) {
    x[i] = x0[i];
    const T di = scaled ? a.d[sys * a.d_stride + first + i] : T(1);
    sets[3 * V + i] = di;
    sets[7 * V + i] = di;
  }
}

// (A v)_i of a vector every block holds its rows of (x, p).
template <typename T>
__device__ __forceinline__ T product(const OneBlock<T>& o, index_t i, const T* v) {
  return T(row_product(
      o.m, i, [&](unsigned owner, index_t j) { return entry<T>(o.cluster, o.rank, v, owner, j); }));
}

// r = b - A x into `set`; r.r (and b.b) into the set's slots; then the cluster barrier.
template <int kBlock, typename T>
__device__ __forceinline__ void residual(const OneBlock<T>& o, Reduction& red, const T* b,
                                         const T* x, T* set, int slots, bool with_bb) {
  double sums[2] = {0, 0};
  for (index_t i = threadIdx.x; i < o.mine; i += kBlock) {
    const T ri = b[i] - product(o, i, x);
    set[i] = ri;
    sums[0] += double(ri) * double(ri);
    sums[1] += double(b[i]) * double(b[i]);
  }
  if (with_bb) {
    block_partials<kBlock / 32>(red, sums, {kOne + kOneSums * slots, kBb});
  } else {  // b.b's slot is read at the first decision only, but read by every pass
    const double rr[1] = {sums[0]};
    block_partials<kBlock / 32>(red, rr, {kOne + kOneSums * slots});
  }
  o.cluster.sync();
}

// w = A u of the set's r (u = d .* r) into the set; r.r, r.u, w.u into slot set `slots` (a
// first step: no p yet); then the cluster barrier.
template <int kBlock, typename T>
__device__ __forceinline__ void w_of_u(const OneBlock<T>& o, Reduction& red, T* set, int slots) {
  const index_t V = o.V;
  double sums[3] = {0, 0, 0};
  for (index_t i = threadIdx.x; i < o.mine; i += kBlock) {
    const T ri = set[i], ui = set[3 * V + i] * ri;
    const T wi = T(row_product(o.m, i, [&](unsigned owner, index_t j) {
      const SetEntries<T> e = set_entries(o.cluster, o.rank, set, V, owner, j, false, o.scaled);
      return e.d * e.r;
    }));
    set[V + i] = wi;
    sums[0] += double(ri) * double(ri);
    sums[1] += double(ri) * double(ui);
    sums[2] += double(wi) * double(ui);
  }
  const int at = kOne + kOneSums * slots;
  block_partials<kBlock / 32>(red, sums, {at, at + 1, at + 2});
  o.cluster.sync();
}

// The pass's decision (thread 0 of each block) on the totals of slot set `at`: the start's, a
// restart's (the true residual's sums, at the same iteration) or iteration k - 1's stop test,
// then alpha_k from the recurrence's p.q, or form_p where p.q lost to cancellation after all.
// Whether the solve goes on.
template <typename T>
__device__ __forceinline__ bool one_reduction_decision(cg::State& st, const Args<T>& a,
                                                       const double* total, int at, long long k,
                                                       int& restart, int& form_p, bool records) {
  const double rr = total[at], rz = total[at + 1];
  const bool first = k == 1 || restart;
  bool stop = false;
  if (k == 1) {
    st = cg::begin(total[kBb], a.tol, a.atol, a.max_iters);
    stop = cg::started(st, rr, rz);
  } else if (restart) {
    st.rr = rr;
    st.rz = rz;
  } else {
    stop = cg::stepped(st, rr, rz, k - 1);
  }
  const double pq = cg::one_reduction_pq(st, total + at + 2, first);
  form_p = !stop && !first && !(pq > 0 && isfinite(pq));  // form p and A p this pass
  if (!stop && !form_p) stop = !cg::step(st, pq, k);
  if (records && k - 1 < a.history_capacity && !restart) a.history[k - 1] = rr;
  restart = 0;
  return !stop;
}

// After a stop on the recursive residual (x is at iteration k - 1, every block's rows written
// before the last barrier; nobody reads the new set in this phase): b - A x into set_new and its
// r.r; where that does not stand, the solve restarts at this iteration from it (into set_old,
// with w = A u: the set the next pass reads). Whether it restarts.
template <int kBlock, typename T>
__device__ __forceinline__ bool restarted(const OneBlock<T>& o, Reduction& red, cg::State& st,
                                          const Args<T>& a, const T* b, const T* x, T* set_old,
                                          T* set_new, int old, int now, int& go, int& restart) {
  residual<kBlock>(o, red, b, x, set_new, now, false);
  if (threadIdx.x == 0) {
    double rr = 0;
    for (unsigned blk = 0; blk < o.cluster.num_blocks(); ++blk)
      rr += *o.cluster.map_shared_rank(&red.partial[kOne + kOneSums * now], blk);
    go = !cg::replaced(st, rr, 0, a.replacement_slack);
    restart = go;
  }
  __syncthreads();
  if (!go) return false;
  for (index_t i = threadIdx.x; i < o.mine; i += kBlock) set_old[i] = set_new[i];
  o.cluster.sync();
  w_of_u<kBlock>(o, red, set_old, old);
  return true;
}

// p.q from the recurrence lost to cancellation: forms p and s = A p and reduces p.s as the
// two-pass CG would, this pass only (two more cluster barriers); go says whether alpha_k came
// out (a true breakdown stays one).
template <int kBlock, typename T>
__device__ __forceinline__ void form_p_and_ap(const OneBlock<T>& o, Reduction& red, cg::State& st,
                                              T* set_old, T* p, long long k, int& go, int& form_p,
                                              int& fallbacks) {
  const index_t V = o.V;
  const T beta = T(st.beta);
  for (index_t i = threadIdx.x; i < o.mine; i += kBlock)
    p[i] = cg::next_p(set_old[3 * V + i] * set_old[i], beta, p[i]);
  o.cluster.sync();
  double pq[1] = {0};
  for (index_t i = threadIdx.x; i < o.mine; i += kBlock) {
    const T qi = product(o, i, p);
    set_old[2 * V + i] = qi;  // s = A p, read by the rows below (nobody reads it now)
    pq[0] += double(p[i]) * double(qi);
  }
  block_partials<kBlock / 32>(red, pq, {kPq});
  o.cluster.sync();
  cluster_totals(o.cluster, red, {kPq}, [&](const double* total) {
    go = cg::step(st, total[kPq], k);
    form_p = 0;
    ++fallbacks;
  });
}

// s = w + beta s (the pass's s_j from the previous pass's w_j and s_j): s itself where this pass
// formed p and A p, w on a first step.
template <typename T>
__device__ __forceinline__ T next_s_of(bool formed, bool first_step, T beta, T wj, T sj) {
  return formed ? sj : first_step ? wj : cg::next_p(wj, beta, sj);
}

// The timed thread's clocks, and the counts of passes that formed p and A p and of restarts
// from b - A x after a stop that did not stand.
template <typename T, typename Clocks>
__device__ __forceinline__ void write_clocks(const Args<T>& a, const Clocks& clocks, int fallbacks,
                                             int restarts) {
  clocks.write(a.clocks);
  a.clocks[2 + kOnePhases] = fallbacks;
  a.clocks[3 + kOnePhases] = restarts;
}

template <typename T, bool kTraced = false, int kBlock = kThreads>
__global__ void __launch_bounds__(kBlock, 1) one_reduction_cg_kernel(Args<T> a) {
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ Reduction red;
  __shared__ cg::State st;
  __shared__ int go, restart, form_p, fallbacks;  // go on; restart; form p, A p; how often
  cgrp::cluster_group cluster = cgrp::this_cluster();
  const unsigned rank = cluster.block_rank();
  const long long sys = blockIdx.x / cluster.num_blocks();  // a batch: one system a cluster
  const bool timed = rank == 0 && threadIdx.x == 0 && sys == 0 && a.time_spmv;
  __shared__ long long phase_cycles[kTraced ? kOnePhases + 1 : 1];
  KernelClocks<kTraced, kOnePhases> clocks(phase_cycles, timed);
  const Layout& l = a.layout;
  const bool scaled = a.d != nullptr;
  const index_t V = l.stride;
  Shared<T> m = carve<T>(smem, l, true);             // the matrix's arrays
  T* const sets = reinterpret_cast<T*>(smem + l.r);  // set k: sets + 4 V k: r, w, s, d
  T* const p = reinterpret_cast<T*>(smem + l.p0);
  T* const x = reinterpret_cast<T*>(smem + l.x);
  const index_t first = index_t(rank) * l.rows;
  const index_t mine = first >= a.n ? 0 : min(l.rows, a.n - first);
  load_rows(a, smem, rank, sys);
  const T* b = a.b + sys * a.n + first;
  T* x_out = a.x + sys * a.n + first;
  load_x_and_d<kBlock>(a, sys, first, mine, x, sets, V, scaled);
  if (threadIdx.x == 0) restart = form_p = fallbacks = 0;
  cluster.sync();
  const OneBlock<T> o{cluster, rank, m, V, mine, scaled};
  residual<kBlock>(o, red, b, x, sets, 0, true);
  w_of_u<kBlock>(o, red, sets, 0);

  bool first_step = true;  // p = u: the first step, or the first after a restart
  int restarts = 0;
  for (long long k = 1;; ++k) {
    const int old = int((k - 1) % 2), now = int(k % 2);
    long long pass_start = 0;
    if (timed) pass_start = clock64();
    clocks.pass_begins(pass_start);
    const int at = kOne + kOneSums * old;
    cluster_totals(
        cluster, red, {at, at + 1, at + 2, at + 3, at + 4, kBb}, [&](const double* total) {
          go = one_reduction_decision(st, a, total, at, k, restart, form_p, rank == 0 && sys == 0);
        });
    clocks.phase_done(0);
    T* const set_old = sets + 4 * V * old;
    T* const set_new = sets + 4 * V * now;
    if (!go) {  // a stop on the recursive residual: b - A x replaces it where the two differ
      if (st.converged_at <= 0 || restarts >= kMaxRestarts) break;
      if (!restarted<kBlock>(o, red, st, a, b, x, set_old, set_new, old, now, go, restart)) break;
      ++restarts;
      first_step = true;
      --k;  // the same iteration again, from the replaced residual
      continue;
    }
    const bool formed = form_p;  // p.q from the recurrence lost to cancellation
    if (formed) {
      form_p_and_ap<kBlock>(o, red, st, set_old, p, k, go, form_p, fallbacks);
      if (!go) break;  // a true breakdown: x and r stay at k - 1
    }
    const T alpha = T(st.alpha), beta = first_step ? T(0) : T(st.beta);
    // s_j, u_j from the previous pass's r_j, w_j, s_j, d_j (any block's row j): one expression
    // for the owner's update and the SpMV's reads. (A function of its own: other registers.)
    auto next_s = [&](T wj, T sj) { return next_s_of(formed, first_step, beta, wj, sj); };
    auto u_new_at = [&](unsigned owner, index_t j) {
      const SetEntries<T> e =
          set_entries(cluster, rank, set_old, V, owner, j, formed || !first_step, scaled);
      return e.d * cg::next_r(e.r, alpha, next_s(e.w, e.s));
    };
    double sums[kOneSums] = {0, 0, 0, 0, 0};
    for (index_t i = threadIdx.x; i < mine; i += kBlock) {
      const T ri = set_old[i], di = set_old[3 * V + i], ui = di * ri;
      const T pi = formed ? p[i] : first_step ? ui : cg::next_p(ui, beta, p[i]);
      const T si = next_s(set_old[V + i], formed || !first_step ? set_old[2 * V + i] : T(0));
      p[i] = pi;
      x[i] = cg::next_x(x[i], alpha, pi);
      const T rn = cg::next_r(ri, alpha, si), un = di * rn;
      const T wn = T(row_product<kOneUnroll>(m, i, u_new_at));
      set_new[i] = rn;
      set_new[V + i] = wn;
      set_new[2 * V + i] = si;
      sums[0] += double(rn) * double(rn);
      sums[1] += double(rn) * double(un);
      sums[2] += double(wn) * double(un);
      sums[3] += double(un) * double(si) + double(pi) * double(wn);
      sums[4] += double(pi) * double(si);
    }
    first_step = false;
    clocks.phase_done(1);
    const int out = kOne + kOneSums * now;
    block_partials<kBlock / 32>(red, sums, {out, out + 1, out + 2, out + 3, out + 4});
    clocks.phase_done(2);
    cluster.sync();
    if (timed) sample_pass(a, k, pass_start);
    clocks.phase_done(3);
  }
  for (index_t i = threadIdx.x; i < mine; i += kBlock) x_out[i] = x[i];
  if (rank == 0 && threadIdx.x == 0) a.out[sys] = st;
  if (timed) write_clocks(a, clocks, fallbacks, restarts);
  cluster.sync();  // no block leaves while another may still read its shared memory
}

}  // namespace cluster
}  // namespace cgs
