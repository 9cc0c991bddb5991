// The two-pass cluster CG kernel (cluster_cg.hpp: pass A, q = A p with the p and x updates, then
// pass B, the r and z updates): the default iteration, for one system or a batch, with or
// without a program. Included by cluster_cg.cu alone, which instantiates it.
#pragma once

#include "solver/cuda/cluster_common.cuh"
#include "solver/cuda/cluster_program.cuh"

namespace cgs {
namespace cluster {

// The kernel's steps, each inlined into it (the instances' registers and spills as with one body:
// checked with -Xptxas -v).

// A program's slots (r, z, work vectors), its operations staged and resolved, and this thread's
// rows of its sweeps.
template <typename T>
__device__ __forceinline__ void prepare_program(const Args<T>& a, unsigned char* smem,
                                                const Shared<T>& s, T** table, Sweeps& sweeps,
                                                SweepRows& my_sweep_rows) {
  const Layout& l = a.layout;
  if (threadIdx.x == 0) {
    table[precond::kSlotR] = s.r;
    table[precond::kSlotZ] = s.z;
    for (int i = 0; i < l.works; ++i)
      table[precond::kFirstWorkSlot + i] = reinterpret_cast<T*>(smem + l.work[i]);
  }
  stage_program(a, smem);
  __syncthreads();  // the operations resolved
  if (threadIdx.x == 0) {
    if (a.sweeps)
      find_sweeps(program_ops(a, smem), a.op_count, sweeps);
    else
      sweeps.count = 0;
  }
  __syncthreads();
  assign_sweep_rows(program_ops(a, smem), sweeps, my_sweep_rows);
}

// This block's rows of system `sys`: where its b, x and d are (x in global memory with a program
// or the lean layout, else copied into shared memory, as d is).
template <typename T>
struct BlockRows {
  index_t first, mine;
  const T* b;
  T* x_out;
  T* x;
  const T* d;
  bool x_in_global;
};

// Loads the block's slices into shared memory, or points s at them in global memory (L2:
// absolute offsets), and places x, d and (lean) r; the caller meets the cluster after.
template <int kBlock, bool kProgram, typename T>
__device__ __forceinline__ BlockRows<T> place_rows(const Args<T>& a, unsigned char* smem,
                                                   Shared<T>& s, unsigned rank, long long sys,
                                                   bool scaled) {
  const Layout& l = a.layout;
  BlockRows<T> rows;
  rows.first = index_t(rank) * l.rows;
  rows.mine = rows.first >= a.n ? 0 : min(l.rows, a.n - rows.first);
  if (l.shared_matrix) {
    load_rows(a, smem, rank, sys);
  } else {
    s.slice_ptr = a.slice_ptr + index_t(rank) * l.slices;
    s.width = a.width + index_t(rank) * l.slices;
    s.cols = a.cols;
    s.values = a.values + sys * a.values_stride;
  }
  rows.b = a.b + sys * a.n + rows.first;
  rows.x_out = a.x + sys * a.n + rows.first;
  const T* d_in = scaled ? a.d + sys * a.d_stride + rows.first : nullptr;
  rows.x_in_global = kProgram || l.lean;
  rows.x = rows.x_in_global ? rows.x_out : s.x;
  rows.d = l.lean ? d_in : s.d;
  if (l.lean && scaled) s.r = a.r_lean + sys * a.n + rows.first;
  for (index_t i = threadIdx.x; i < rows.mine; i += kBlock) {
    if (!rows.x_in_global) rows.x[i] = rows.x_out[i];
    if (scaled && !l.lean) s.d[i] = d_in[i];
  }
  return rows;
}

// The start: r = b - A x0, z = d .* r (or the program's z); r.r, r.z, b.b, then the cluster
// barrier.
template <int kBlock, bool kProgram, typename T>
__device__ __forceinline__ void start_sums(const Args<T>& a, unsigned char* smem,
                                           cgrp::cluster_group& cluster, unsigned rank,
                                           long long sys, const Shared<T>& s,
                                           const BlockRows<T>& rows, bool scaled, T* const* table,
                                           Sweeps& sweeps, const SweepRows& my_sweep_rows,
                                           Reduction& red) {
  const Layout& l = a.layout;
  auto x0_at = [&](unsigned owner, index_t j) {  // x0 in global memory: any block's rows
    return rows.x_in_global ? a.x[sys * a.n + (long long)owner * l.rows + j]
                            : entry<T>(cluster, rank, rows.x, owner, j);
  };
  double sums[3] = {0, 0, 0};
  for (index_t i = threadIdx.x; i < rows.mine; i += kBlock) {
    const T ri = rows.b[i] - T(row_product(s, i, x0_at));
    s.r[i] = ri;
    sums[0] += double(ri) * double(ri);
    if (scaled) {
      const T zi = rows.d[i] * ri;
      s.z[i] = zi;
      sums[1] += double(ri) * double(zi);
    }
    sums[2] += double(rows.b[i]) * double(rows.b[i]);
  }
  if constexpr (kProgram) sums[1] = run_program(a, smem, table, sweeps, my_sweep_rows);
  block_partials<kBlock / 32>(red, sums, {kRr, kRz, kBb});
  cluster.sync();
}

// Pass A's decision (thread 0 of each block): the start's (k = 1) or iteration k - 1's stop
// test on the totals; system 0's first block records r.r. Whether the solve goes on.
template <typename T>
__device__ __forceinline__ bool first_pass_decision(cg::State& st, const Args<T>& a,
                                                    const double* total, long long k, bool identity,
                                                    unsigned rank, long long sys) {
  const double rr = total[kRr], rz = identity ? rr : total[kRz];
  bool stop;
  if (k == 1) {
    st = cg::begin(total[kBb], a.tol, a.atol, a.max_iters);
    stop = cg::started(st, rr, rz);
  } else {
    stop = cg::stepped(st, rr, rz, k - 1);
  }
  if (rank == 0 && sys == 0 && k - 1 < a.history_capacity) a.history[k - 1] = rr;
  return !stop;
}

// Pass B's rows: r -= alpha q, z = d .* r; this thread's r.r and r.z.
template <int kBlock, typename T>
__device__ __forceinline__ void update_residual(const Shared<T>& s, const T* d, index_t mine,
                                                T alpha, bool scaled, double (&sums)[2]) {
  for (index_t i = threadIdx.x; i < mine; i += kBlock) {
    const T ri = cg::next_r(s.r[i], alpha, s.q[i]);
    s.r[i] = ri;
    sums[0] += double(ri) * double(ri);
    if (scaled) {
      const T zi = d[i] * ri;
      s.z[i] = zi;
      sums[1] += double(ri) * double(zi);
    }
  }
}

// kProgram: the one-block variant that runs a program (a separate instance, so that the
// pointwise kernel keeps its registers: the program's code in it made it spill).
// kTraced: the instance that sums its phases' cycles (Tuning::cluster_phases), apart so that the
// kernel every solve runs keeps its registers (the trace's state made it spill).
// kBlock: the threads a block (the launch's blockDim), a constant so that the row loops' stride
// costs no register (the 1,024-thread instance is at its 64).
template <typename T, bool kProgram, bool kTraced = false, int kBlock = kThreads>
__global__ void __launch_bounds__(kBlock, 1) cluster_cg_kernel(Args<T> a) {
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ Reduction red;
  cgrp::cluster_group cluster = cgrp::this_cluster();
  const unsigned rank = cluster.block_rank();
  const long long sys = blockIdx.x / cluster.num_blocks();
  const bool leader = rank == 0 && threadIdx.x == 0;
  const bool timed = leader && sys == 0 && a.time_spmv;
  __shared__ long long phase_cycles[kTraced ? kPhases + 1 : 1];
  KernelClocks<kTraced, kPhases> clocks(phase_cycles, timed);
  constexpr bool program = kProgram;
  const bool scaled = a.d != nullptr;         // z = d .* r
  const bool identity = !scaled && !program;  // z = r
  Shared<T> s = carve<T>(smem, a.layout, identity);
  __shared__ T* table[kMaxSlots];  // a program's slots: r, z, work vectors
  __shared__ Sweeps sweeps;
  SweepRows my_sweep_rows;
  if constexpr (program) prepare_program(a, smem, s, table, sweeps, my_sweep_rows);
  const BlockRows<T> rows = place_rows<kBlock, program>(a, smem, s, rank, sys, scaled);
  const index_t mine = rows.mine;
  T* const x = rows.x;
  cluster.sync();
  start_sums<kBlock, program>(a, smem, cluster, rank, sys, s, rows, scaled, table, sweeps,
                              my_sweep_rows, red);

  // The CG state, kept by thread 0 of each block (every block computes the same from the same
  // totals); `go` tells the block whether the solve goes on.
  __shared__ cg::State st;
  __shared__ int go;
  for (long long k = 1;; ++k) {
    // Pass A(k).
    long long pass_start = 0;
    if (timed) pass_start = clock64();
    clocks.pass_begins(pass_start);
    cluster_totals(cluster, red, {kRr, kRz, kBb}, [&](const double* total) {
      go = first_pass_decision(st, a, total, k, identity, rank, sys);
    });
    clocks.phase_done(0);
    const T alpha_prev = T(st.alpha);
    const T* p_old = buffer_of_pair<program>(int((k - 1) % 2), s.p);
    if (!go) {  // x_{k-1}: the update this pass would have made
      if (k >= 2)
        for (index_t i = threadIdx.x; i < mine; i += kBlock)
          x[i] = cg::next_x(x[i], alpha_prev, p_old[i]);
      break;
    }
    const bool first_step = k == 1;
    const T beta = first_step ? T(0) : T(st.beta);
    const T* z = s.z;
    auto p_at = [&](unsigned owner, index_t j) {
      if (owner == rank) return first_step ? z[j] : cg::next_p(z[j], beta, p_old[j]);
      const T zj = *cluster.map_shared_rank(z + j, owner);
      return first_step ? zj : cg::next_p(zj, beta, *cluster.map_shared_rank(p_old + j, owner));
    };
    T* p_new = buffer_of_pair<program>(int(k % 2), s.p);
    double pq[1] = {0};
    for (index_t i = threadIdx.x; i < mine; i += kBlock) {
      const T pi = first_step ? z[i] : cg::next_p(z[i], beta, p_old[i]);
      const T qi = T(row_product(s, i, p_at));
      p_new[i] = pi;
      s.q[i] = qi;
      if (!first_step) x[i] = cg::next_x(x[i], alpha_prev, p_old[i]);
      pq[0] += double(pi) * double(qi);
    }
    clocks.phase_done(1);
    block_partials<kBlock / 32>(red, pq, {kPq});
    clocks.phase_done(2);
    cluster.sync();
    if (timed) sample_pass(a, k, pass_start);
    clocks.phase_done(3);

    // Pass B(k).
    cluster_totals(cluster, red, {kPq},
                   [&](const double* total) { go = cg::step(st, total[kPq], k); });
    clocks.phase_done(4);
    if (!go) break;  // breakdown: x, r stay at k - 1
    double sums[2] = {0, 0};
    update_residual<kBlock>(s, rows.d, mine, T(st.alpha), scaled, sums);
    clocks.phase_done(5);
    if constexpr (program) sums[1] = run_program(a, smem, table, sweeps, my_sweep_rows);
    block_partials<kBlock / 32>(red, sums, {kRr, kRz});
    clocks.phase_done(6);
    cluster.sync();
    clocks.phase_done(7);
  }
  if (!rows.x_in_global)
    for (index_t i = threadIdx.x; i < mine; i += kBlock) rows.x_out[i] = x[i];
  if (leader) a.out[sys] = st;
  if (timed) clocks.write(a.clocks);
  cluster.sync();  // no block leaves while another may still read its shared memory
}

}  // namespace cluster
}  // namespace cgs
