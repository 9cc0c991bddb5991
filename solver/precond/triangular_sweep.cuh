// A triangular solve's levels as one sweep on the GPU (solver/precond/triangular_sweep.hpp says
// how and why): the device side, shared by the generic loop's program (device_program.cu) and
// the fused persistent and graph loops (solver/cuda/fused_cg_impl.cuh).
#pragma once

#include "solver/precond/program.hpp"
#include "solver/precond/triangular_sweep.hpp"

namespace cgs::precond {

// Row j's posted y, as another thread wrote it (relaxed, through L2: the value is all it reads).
__device__ __forceinline__ unsigned long long sweep_read(const unsigned long long* p) {
  unsigned long long v;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p));
  return v;
}

__device__ __forceinline__ void sweep_post(unsigned long long* p, unsigned long long v) {
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

// This thread's share of sweep `s` (op: its first level, whose S, d, u, y all its levels share),
// `thread` of `grid_threads` in the launch; returns its share of r.z where the solve adds it.
// Every thread of the launch calls it (thread 0 advances the next sweep's epoch).
template <typename T>
__device__ double run_sweep(const Sweep& s, const Op<T>& op, T* const* table, long long thread,
                            long long grid_threads) {
  if (thread == 0) atomicAdd(s.next_epoch, 1);  // that sweep runs after this one has finished
  const long long threads = s.threads < grid_threads ? s.threads : grid_threads;
  if (thread >= threads) return 0;
  const int parity = __ldcg(s.epoch) & 1;
  const unsigned long long* read = s.posted + (parity ? s.items : 0);
  unsigned long long* reset = s.posted + (parity ? 0 : s.items);
  const OpVectors<T> v = vectors_of(op, table);
  const index_t* cols = op.col_idx;
  // Each column's posted y, read again until it is posted. (Reading a row's first 4 columns at
  // once before computing it was 1.7-2x slower an iteration on poisson2d:1000, H200.)
  auto y_at = [read, cols](index_t k) {
    unsigned long long bits;
    while ((bits = sweep_read(read + cols[k])) == kSweepUnposted) {
    }
    return __longlong_as_double((long long)bits);
  };
  double rz = 0;
  for (long long g = thread; g < s.items; g += threads) {
    const index_t row = s.rows[g];
    const double y = double(triangular_row(op, v, row, y_at));
    const unsigned long long bits = (unsigned long long)__double_as_longlong(y);
    reset[row] = kSweepUnposted;  // read only in the next apply, after this sweep has ended
    sweep_post(const_cast<unsigned long long*>(read) + row,
               bits == kSweepUnposted ? 0x7fffffffffffffffULL : bits);
    if (op.dot) rz += double(v.r[row]) * double(v.z[row]);
  }
  return rz;
}

}  // namespace cgs::precond
