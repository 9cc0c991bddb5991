// A preconditioner's program in the cluster loop's one block (see cluster_cg.hpp): its
// operations staged into shared memory, the triangular solves' sweeps, and the apply z = M^-1 r.
// Included by cluster_cg.cu alone (after cluster_common.cuh).
#pragma once

#include "solver/cuda/cluster_common.cuh"
#include "solver/precond/triangular_sweep.hpp"  // same_solve

namespace cgs {
namespace cluster {

// A pointer of a staged operation: bit 0 set means (offset << 1 | 1) into the block's dynamic
// shared memory (device pointers and shared offsets of these arrays are all 4-byte aligned).
template <typename P>
__device__ __forceinline__ P* untag(P* p, unsigned char* smem) {
  const auto u = reinterpret_cast<unsigned long long>(p);
  return (u & 1) ? reinterpret_cast<P*>(smem + (u >> 1)) : p;
}

// Copies `bytes` (a multiple of 4) from global to shared memory.
__device__ void stage_words(unsigned char* to, const unsigned char* from, std::size_t bytes) {
  auto* dst = reinterpret_cast<unsigned*>(to);
  const auto* src = reinterpret_cast<const unsigned*>(from);
  for (std::size_t i = threadIdx.x; i < bytes / 4; i += blockDim.x) dst[i] = src[i];
}

// Where the kernel keeps the program's operations: shared memory, else the global scratch copy
// (one block a launch: nobody else writes it).
template <typename T>
__device__ precond::Op<T>* program_ops(const Args<T>& a, unsigned char* smem) {
  return a.layout.ops_shared ? reinterpret_cast<precond::Op<T>*>(smem + a.layout.ops)
                             : a.ops_scratch;
}

// The program's operations and the buffers the layout holds into shared memory, then each
// operation's tagged pointers resolved in place (once a launch, not once a level: an operation
// copied into registers at every level made the kernel spill).
template <typename T>
__device__ void stage_program(const Args<T>& a, unsigned char* smem) {
  const Layout& l = a.layout;
  if (l.index_shared) stage_words(smem + l.index, a.index_buffer, l.index_bytes);
  if (l.value_shared) stage_words(smem + l.value, a.value_buffer, l.value_bytes);
  precond::Op<T>* ops = program_ops(a, smem);
  stage_words(reinterpret_cast<unsigned char*>(ops), reinterpret_cast<const unsigned char*>(a.ops),
              l.op_bytes);
  __syncthreads();
  for (int k = threadIdx.x; k < a.op_count; k += blockDim.x) {
    precond::Op<T>& o = ops[k];
    o.rows = untag(o.rows, smem);
    o.row_ptr = untag(o.row_ptr, smem);
    o.col_idx = untag(o.col_idx, smem);
    o.values = untag(o.values, smem);
    o.d = untag(o.d, smem);
    o.blocks = untag(o.blocks, smem);
  }
}

// An operation of at most this many items (a narrow triangular level: ~15 rows on Exnet) runs
// on the first warp alone: a run of such operations meets at __syncwarp, not at a block barrier
// of 32 warps, and the other warps wait at one barrier after the run.
constexpr index_t kWarpItems = 32;

// A sweep: the triangular levels of one solve (consecutive triangular_level operations sharing
// S, d, u and y: ic0's L, then its L^T) run as ONE operation with no barrier between levels. Each
// row waits only until every row of the earlier levels is done, which a counter in shared memory
// tells (rows finished so far in this sweep: once it reaches the level's first position, all
// earlier levels are done, since no row of a later level can finish before that). A level of 3
// rows then costs its rows' own chain of loads and a counter increment instead of a block barrier
// of 32 warps (Nsight Compute on Richmond: 31 warps waiting at the barrier while the first
// one ran ~1,000 cycles a level, BENCHMARKS section 10h). Every row is computed by the same code in
// the same order as level by level (the same y); only r.z's partial sums fall to other threads.
constexpr int kMaxSweeps = 2;    // ic0: forward and backward
constexpr int kSweepRounds = 4;  // rows per thread: sweeps of at most 4 x 1024 rows

struct Sweeps {
  int count;
  int first_op[kMaxSweeps], end_op[kMaxSweeps];
  int done[kMaxSweeps];  // rows finished in the current apply
};

// A thread's rows of each sweep, in the sweep's order, with the count each must wait for
// (the position of its level's first row); row -1 ends the list.
struct SweepRows {
  index_t row[kMaxSweeps][kSweepRounds];
  index_t wait[kMaxSweeps][kSweepRounds];
};

// Thread 0 finds the sweeps among the (resolved) operations: runs of at least two levels of one
// solve whose rows fit kSweepRounds per thread.
template <typename T>
__device__ void find_sweeps(const precond::Op<T>* ops, int count, Sweeps& sweeps) {
  sweeps.count = 0;
  for (int k = 0; k < count && sweeps.count < kMaxSweeps;) {
    if (ops[k].kind != precond::OpKind::triangular_level) {
      ++k;
      continue;
    }
    int end = k + 1;
    long long rows = ops[k].items;
    while (end < count && precond::same_solve(ops[k], ops[end])) rows += ops[end++].items;
    if (end - k >= 2 && rows <= (long long)kThreads * kSweepRounds) {
      sweeps.first_op[sweeps.count] = k;
      sweeps.end_op[sweeps.count] = end;
      ++sweeps.count;
    }
    k = end;
  }
}

// This thread's rows of every sweep. Position g of a sweep goes to warp g % kWarps, lane (g /
// kWarps) % 32, round g / kThreads: consecutive positions (often a chain, one row a level) sit in
// different warps. (Measured, BENCHMARKS section 10i: 32 consecutive positions a warp,
// waiting as one warp, was slower, and so was loading a row's entries before its wait.)
template <typename T>
__device__ void assign_sweep_rows(const precond::Op<T>* ops, const Sweeps& sweeps,
                                  SweepRows& mine) {
  const int warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
  for (int s = 0; s < kMaxSweeps; ++s) {
    int op = s < sweeps.count ? sweeps.first_op[s] : 0;
    const int end = s < sweeps.count ? sweeps.end_op[s] : 0;
    long long start = 0;  // position of op's first row in the sweep
    for (int round = 0; round < kSweepRounds; ++round) {
      const long long g = (long long)round * kThreads + lane * kWarps + warp;
      while (op < end && g >= start + ops[op].items) start += ops[op++].items;
      const bool has = op < end;
      const index_t local = index_t(g - start);
      mine.row[s][round] = has ? (ops[op].rows ? ops[op].rows[local] : local) : -1;
      mine.wait[s][round] = has ? index_t(start) : 0;
    }
  }
}

// One sweep: this thread's rows in order, each after its earlier levels. Returns this thread's
// share of r.z. (Sleeping 20 or 100 ns between polls, to leave issue slots to the working lanes,
// was 1.15-1.25x slower: BENCHMARKS section 10i.)
template <typename T>
__device__ double run_sweep(const precond::Op<T>& op, T* const* table, const index_t* rows,
                            const index_t* waits, int* done) {
  const precond::OpVectors<T> v = precond::vectors_of(op, table);
  double rz = 0;
  for (int i = 0; i < kSweepRounds && rows[i] >= 0; ++i) {
    const index_t row = rows[i];
    while (*reinterpret_cast<const volatile int*>(done) < waits[i]) {
    }
    __threadfence_block();  // acquire: the earlier levels' y before this row reads them
    precond::triangular_row(op, v, row);
    if (op.dot) rz += double(v.r[row]) * double(v.z[row]);
    __threadfence_block();  // release: this row's y before the count says it is done
    atomicAdd(done, 1);
  }
  return rz;
}

// z = M^-1 r by the program, its operations separated by block barriers (one block holds every
// row), or by warp barriers within a run of narrow ones, or none within a sweep; returns this
// thread's share of r.z. The first barrier waits for r.
template <typename T>
__device__ double run_program(const Args<T>& a, unsigned char* smem, T* const* table,
                              Sweeps& sweeps, const SweepRows& mine) {
  const precond::Op<T>* ops = program_ops(a, smem);
  const int count = a.op_count;
  double rz = 0;
  if (threadIdx.x < kMaxSweeps) sweeps.done[threadIdx.x] = 0;
  __syncthreads();
  int sweep = 0;
  for (int k = 0; k < count;) {
    if (sweep < sweeps.count && k == sweeps.first_op[sweep]) {
      rz += run_sweep(ops[k], table, mine.row[sweep], mine.wait[sweep], &sweeps.done[sweep]);
      k = sweeps.end_op[sweep++];
    } else if (ops[k].items > kWarpItems) {
      rz += precond::run_items(ops[k], table, threadIdx.x, (long long)ops[k].items, kThreads);
      ++k;
    } else {
      int end = k;
      while (end < count && ops[end].items <= kWarpItems &&
             !(sweep < sweeps.count && end == sweeps.first_op[sweep]))
        ++end;
      if (threadIdx.x < 32) {
        for (int j = k; j < end; ++j) {
          rz += precond::run_items(ops[j], table, threadIdx.x, (long long)ops[j].items, 32);
          __syncwarp();  // orders the warp's shared-memory writes before the next level reads
        }
      }
      k = end;
    }
    __syncthreads();
  }
  return rz;
}

}  // namespace cluster
}  // namespace cgs
