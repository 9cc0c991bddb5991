// The cluster loop's shared parts (see cluster_cg.hpp): the block's layout in shared memory, the
// kernels' arguments, the block and cluster sums, the sliced SpMV row. Included by
// cluster_cg.cu alone, which instantiates the kernels (one translation unit: the kernels'
// registers as before the split).
#pragma once

#include <cooperative_groups.h>

#include <algorithm>
#include <cstddef>

#include "solver/cg_step.hpp"
#include "solver/precond/device_program.hpp"
#include "spmv/cuda/cuda_common.cuh"

namespace cgs {
namespace cluster {

namespace cgrp = cooperative_groups;

// Threads a block: at most kThreads (a program's one block and a batch's blocks run that many);
// one system's blocks run kSingleThreads (two rows a thread on poisson2d:122 in 16 blocks).
// Measured (BENCHMARKS 13e): 512 threads made one system's iteration 3-7% faster than 1,024 (cheaper
// block barriers and sums; 256 was slower again), and the batch of 64 BWSN systems slower (27x ->
// 21x one persistent system: twice the rows a thread in its 2 blocks).
constexpr int kThreads = 1024;
constexpr int kWarps = kThreads / 32;
constexpr int kSingleThreads = 512;
constexpr int kMaxBlocks = 16;  // the largest (non-portable) cluster on Hopper
// A column is stored as (block << kLocalBits) | local row: one load finds the owner's entry.
constexpr int kLocalBits = 24;
constexpr index_t kLocalMask = (index_t(1) << kLocalBits) - 1;

// A block's rows are stored in slices of 32 (a warp's rows), each slice padded to its longest row
// and laid out column-major: lane l reads entry j of its row at slice start + 32 j + l, so a
// warp's loads are 32 consecutive words. (A row per thread in CSR order made 45% of the
// shared-memory wavefronts excess: Nsight Compute on Exnet in one block.)
constexpr int kSlice = 32;

// A program's slots in one block: r, z and at most kMaxWork work vectors.
constexpr int kMaxWork = 6;
constexpr int kMaxSlots = precond::kFirstWorkSlot + kMaxWork;

// Where a block's arrays sit in its dynamic shared memory (byte offsets; T arrays first, so
// every array stays aligned). With the matrix in L2 (batches: every cluster reads the same rows)
// the block holds its vectors only.
struct Layout {
  index_t rows = 0;     // rows per block (the last block may own fewer)
  index_t slices = 0;   // slices per block
  index_t entries = 0;  // sliced entries of the fullest block
  bool shared_matrix = true;
  // A batch's lean layout: only z, the two p buffers and q in shared memory (the vectors other
  // blocks read, and q between the passes); x and d in global memory, and r too where z is not r.
  bool lean = false;
  // The one-reduction iteration's layout (one_reduction_cg_kernel): two sets of (r, w, s, d),
  // the pass reading the previous pass's set (other blocks' rows too) while it writes its own,
  // each vector `stride` entries after the one before, so that one mapped address reaches a
  // row's four entries; then p (own rows only) and x. z, q, the second p and d unused.
  bool one_reduction = false;
  index_t stride = 0;
  std::size_t values = 0, z = 0, p0 = 0, p1 = 0, r = 0, q = 0, x = 0, d = 0, cols = 0,
              slice_ptr = 0, width = 0, bytes = 0;
  // A program (one block): its work vectors, always here; its operations and packed index and
  // value buffers where they fit (else read from global memory, L2).
  int works = 0;
  std::size_t work[kMaxWork] = {};
  std::size_t ops = 0, index = 0, value = 0;
  std::size_t op_bytes = 0, index_bytes = 0, value_bytes = 0;
  bool ops_shared = false, index_shared = false, value_shared = false;
};

// The phases of an iteration as block 0's thread 0 lives them (Tuning::cluster_phases: their
// cycles summed over the solve, printed after it): per pass, the cluster totals with the CG
// decision and the block barrier after it; this thread's rows; the block's partial sums (their
// barrier waits for every warp's rows); the cluster barrier.
constexpr int kPhases = 8;
const char* const kPhaseNames[kPhases] = {
    "A: totals + decision + block barrier",       "A: own rows (p, SpMV, x)",
    "A: block sums (waits for the block's rows)", "A: cluster barrier",
    "B: totals + decision + block barrier",       "B: own rows (r, z)",
    "B: block sums (waits for the block's rows)", "B: cluster barrier"};

// Partial sums of a block, in slots: pass A writes kPq, the start and pass B the others. The
// one-reduction iteration writes its kOneSums sums (r.r, r.u, w.u, u.s + p.w, p.s: cg_step.hpp's
// one_reduction_pq) into one of two sets (kOne + kOneSums x parity of the pass): with one
// cluster barrier an iteration a block may write pass k's sums while a slower one still reads
// pass k - 1's.
constexpr int kOneSums = 5;
constexpr int kRr = 0, kRz = 1, kBb = 2, kPq = 3, kOne = 4, kSlots = kOne + 2 * kOneSums;

template <typename T>
struct Args {
  index_t n;
  const index_t* slice_ptr;  // per slice of every block (blocks x slices + 1): first entry
  const index_t* width;      // per slice: its longest row
  const index_t* cols;       // sliced, recoded (block << kLocalBits | local row)
  const T* values;           // sliced
  long long values_stride;   // per system (0: one matrix for all)
  const T* d;                // pointwise preconditioner (null: none)
  long long d_stride;
  const T* b;
  T* x;       // system s at x + s n
  T* r_lean;  // the lean layout's r with a preconditioner: system s at r_lean + s n
  Layout layout;
  double tol, atol;
  long long max_iters;
  cg::State* out;  // the final state of each system
  double* history;
  long long history_capacity;
  double* spmv;
  long long spmv_capacity, spmv_every;
  bool time_spmv;
  long long* clocks;  // system 0's launch: SM cycles and global-timer ns, then kPhases sums
  bool trace_phases;  // Tuning::cluster_phases: block 0's thread 0 sums each phase's cycles
  // A program (one block): op_count operations whose pointers into the packed buffers are
  // tagged where the layout copies that buffer to shared memory (see untag).
  const precond::Op<T>* ops;
  precond::Op<T>* ops_scratch;  // where the kernel resolves them when not in shared memory
  int op_count;
  const unsigned char* index_buffer;
  const unsigned char* value_buffer;
  bool sweeps;  // run a solve's triangular levels as one sweep (see Sweeps); false: level by level
  double replacement_slack;  // the one-reduction kernel's (Tuning; tests: 0)
};

// A block's arrays: its vectors in its shared memory; its slices there too, or in global memory
// (slice_ptr then holds absolute offsets into cols and values).
template <typename T>
struct Shared {
  const T* values;
  T* z;
  T* p[2];
  T* r;
  T* q;
  T* x;
  T* d;
  const index_t* cols;
  const index_t* slice_ptr;
  const index_t* width;
};

template <typename T>
__device__ Shared<T> carve(unsigned char* base, const Layout& l, bool identity) {
  Shared<T> s;
  s.values = reinterpret_cast<T*>(base + l.values);
  // z = r without a preconditioner (the lean layout keeps that one vector in z's place; with a
  // preconditioner its r is in global memory: the kernel points s.r there).
  s.r = reinterpret_cast<T*>(base + (l.lean ? l.z : l.r));
  s.z = identity ? s.r : reinterpret_cast<T*>(base + l.z);
  s.p[0] = reinterpret_cast<T*>(base + l.p0);
  s.p[1] = reinterpret_cast<T*>(base + l.p1);
  s.q = reinterpret_cast<T*>(base + l.q);
  s.x = reinterpret_cast<T*>(base + l.x);
  s.d = reinterpret_cast<T*>(base + l.d);
  s.cols = reinterpret_cast<index_t*>(base + l.cols);
  s.slice_ptr = reinterpret_cast<index_t*>(base + l.slice_ptr);
  s.width = reinterpret_cast<index_t*>(base + l.width);
  return s;
}

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// A kernel's clocks, kept by the thread that is `timed` (block 0's thread 0 of system 0, when
// the solve is timed): the whole solve's cycles and nanoseconds, and in a traced instance
// (kTraced: Tuning::cluster_phases) each of kCount phases' cycles, summed in `cycles`, shared
// memory of kCount + 1 slots whose last holds the last phase's end, so that no register is held
// across the iterations for them (the kernels are at their 64 with 1,024 threads).
template <bool kTraced, int kCount>
struct KernelClocks {
  long long* cycles;
  bool timed;
  long long cycles0 = 0, ns0 = 0;

  __device__ __forceinline__ KernelClocks(long long* shared_cycles, bool is_timed)
      : cycles(shared_cycles), timed(is_timed) {
    if (kTraced && timed)
      for (int i = 0; i <= kCount; ++i) cycles[i] = 0;
    if (timed) {
      cycles0 = clock64();
      ns0 = (long long)global_ns();
    }
  }
  // A pass begins at `now`: its first phase counts from there.
  __device__ __forceinline__ void pass_begins(long long now) {
    if (kTraced && timed) cycles[kCount] = now;
  }
  __device__ __forceinline__ void phase_done(int phase) {
    if (!(kTraced && timed)) return;
    const long long now = clock64();
    cycles[phase] += now - cycles[kCount];
    cycles[kCount] = now;
  }
  // out[0]: the solve's cycles, out[1]: its nanoseconds, out[2 + i]: phase i's cycles.
  __device__ __forceinline__ void write(long long* out) const {
    out[0] = clock64() - cycles0;
    out[1] = (long long)global_ns() - ns0;
    if constexpr (kTraced)
      for (int i = 0; i < kCount; ++i) out[2 + i] = cycles[i];
  }
};

// The timed thread's sample of iteration k's first pass, every spmv_every-th iteration (its
// cycles; the host converts them at the launch's clock rate).
template <typename T>
__device__ __forceinline__ void sample_pass(const Args<T>& a, long long k, long long pass_start) {
  if ((k - 1) % a.spmv_every == 0) {
    const long long slot = (k - 1) / a.spmv_every;
    if (slot < a.spmv_capacity) a.spmv[slot] = double(clock64() - pass_start);
  }
}

// The partial sums and their totals, static shared memory of each block.
struct Reduction {
  double warp[kSlots][kWarps];
  double partial[kSlots];
  double total[kSlots];
};

// This block's sums of `local` (N slots) into red.partial; the caller then meets the cluster.
// The N shuffle trees run side by side (one latency chain, not N; each slot's sum in the same
// order as one tree at a time: the same bits).
// kBlockWarps: the block's warps (its threads / 32, a constant of the kernel's instance).
template <int kBlockWarps, int N>
__device__ void block_partials(Reduction& red, const double (&local)[N], const int (&slot)[N]) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  double v[N];
  for (int i = 0; i < N; ++i) v[i] = local[i];
  for (int offset = 16; offset > 0; offset /= 2)
    for (int i = 0; i < N; ++i) v[i] += __shfl_down_sync(0xffffffffu, v[i], offset);
  if (lane == 0)
    for (int i = 0; i < N; ++i) red.warp[slot[i]][warp] = v[i];
  __syncthreads();
  if (warp == 0) {
    for (int i = 0; i < N; ++i)
      v[i] = lane < kBlockWarps ? red.warp[slot[i]][lane] : 0.0;  // a lane a warp
    for (int offset = 16; offset > 0; offset /= 2)
      for (int i = 0; i < N; ++i) v[i] += __shfl_down_sync(0xffffffffu, v[i], offset);
    if (lane == 0)
      for (int i = 0; i < N; ++i) red.partial[slot[i]] = v[i];
  }
}
static_assert(kWarps <= 32, "block_partials sums the warps' sums with one warp");

// The cluster's totals of N slots (after the barrier that follows block_partials): lane b of the
// first warp reads block b's partials (all N loads in flight at once: the phase trace, BENCHMARKS
// 13d, put pass A's three one after the other at ~2,100 cycles with the decision), the same
// shuffle trees in every block give the same bits. Thread 0 then takes the CG decision on them
// (decide(totals)), which the block reads after the barrier here: one copy of the state per
// block, not one per thread (its 13 words in registers made the 1,024-thread kernel spill).
template <int N, typename Decide>
__device__ void cluster_totals(cgrp::cluster_group& cluster, Reduction& red, const int (&slot)[N],
                               Decide decide) {
  if (threadIdx.x < 32) {
    const unsigned lane = threadIdx.x;
    const unsigned blocks = cluster.num_blocks();
    double v[N];
    for (int i = 0; i < N; ++i)
      v[i] = lane < blocks ? *cluster.map_shared_rank(&red.partial[slot[i]], lane) : 0.0;
    for (int offset = 16; offset > 0; offset /= 2)
      for (int i = 0; i < N; ++i) v[i] += __shfl_down_sync(0xffffffffu, v[i], offset);
    if (lane == 0) {
      for (int i = 0; i < N; ++i) red.total[slot[i]] = v[i];
      decide(red.total);
    }
  }
  __syncthreads();
}

// Copies this block's slices of system `sys` into shared memory (offsets from the block's first).
template <typename T>
__device__ void load_rows(const Args<T>& a, unsigned char* smem, unsigned rank, long long sys) {
  const Layout& l = a.layout;
  index_t* slice_ptr = reinterpret_cast<index_t*>(smem + l.slice_ptr);
  index_t* width = reinterpret_cast<index_t*>(smem + l.width);
  index_t* cols = reinterpret_cast<index_t*>(smem + l.cols);
  T* values = reinterpret_cast<T*>(smem + l.values);
  const index_t first = index_t(rank) * l.slices;
  const index_t begin = a.slice_ptr[first], end = a.slice_ptr[first + l.slices];
  const T* from = a.values + sys * a.values_stride;
  for (index_t i = threadIdx.x; i <= l.slices; i += blockDim.x) {
    slice_ptr[i] = a.slice_ptr[first + i] - begin;
    if (i < l.slices) width[i] = a.width[first + i];
  }
  for (index_t k = begin + threadIdx.x; k < end; k += blockDim.x) {
    cols[k - begin] = a.cols[k];
    values[k - begin] = from[k];
  }
}

// Entry j of a vector owned by block `owner`: this block's own from its shared memory directly,
// another's through distributed shared memory (most columns of a banded matrix are local).
template <typename T>
__device__ __forceinline__ T entry(cgrp::cluster_group& cluster, unsigned rank, const T* v,
                                   unsigned owner, index_t j) {
  return owner == rank ? v[j] : *cluster.map_shared_rank(v + j, owner);
}

// (A v)_i for a local row, v_at(owner, local) giving the vector's entries.
// kUnroll: entries in flight (the one-reduction pass reads three or four vectors an entry: 2).
template <int kUnroll = 4, typename T, typename VAt>
__device__ __forceinline__ double row_product(const Shared<T>& s, index_t li, VAt v_at) {
  const index_t slice = li / kSlice;
  const index_t base = s.slice_ptr[slice] + li % kSlice, width = s.width[slice];
  double sum = 0;
#pragma unroll kUnroll
  for (index_t j = 0; j < width; ++j) {
    const index_t k = base + j * kSlice;
    const index_t c = s.cols[k];
    sum += double(s.values[k]) * double(v_at(unsigned(c >> kLocalBits), c & kLocalMask));
  }
  return sum;
}

// The values of `systems` matrices into the sliced order (source -1: padding, 0).
template <typename T>
__global__ void gather_values(T* sliced, const T* values, const index_t* source, index_t entries,
                              long long in_stride, int systems) {
  for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x;
       k < (long long)entries * systems; k += (long long)gridDim.x * blockDim.x) {
    const long long sys = k / entries, e = k - sys * entries;
    const index_t from = source[e];
    sliced[k] = from < 0 ? T(0) : values[sys * in_stride + from];
  }
}

// Buffer `which` (0 or 1) of a pair, by a select: indexing the pair at run time (s.p[k % 2]) put
// it in local memory, an LDL.64 after every pass's barrier (Nsight Compute, BWSN_Network_2 in
// 16 blocks); the select keeps both in registers (BENCHMARKS §13b: the batch of
// 64 BWSN systems 14.7x -> 16.1x one persistent system's rate).
// The program's one-block instance keeps the indexing: the select made it spill 12 bytes more
// (ptxas, sm_90), and its time is its levels.
template <bool kProgram, typename P>
__device__ __forceinline__ P buffer_of_pair(int which, P const (&pair)[2]) {
  if constexpr (kProgram) return pair[which];
  return which ? pair[1] : pair[0];
}

}  // namespace cluster
}  // namespace cgs
