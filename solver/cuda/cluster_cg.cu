// The cluster-resident CG loop: see cluster_cg.hpp.
#include <cooperative_groups.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "solver/cg_result.hpp"
#include "solver/cg_step.hpp"
#include "solver/cuda/cluster_cg.hpp"
#include "spmv/cuda/cuda_common.cuh"

namespace cgs {
namespace cluster {

namespace cgrp = cooperative_groups;
using cuda::DeviceArray;
using cuda::stream;

// Threads a block: at most kThreads (a program's one block and a batch's blocks run that many);
// one system's blocks run kSingleThreads (two rows a thread on poisson2d:122 in 16 blocks). On an
// H100 (BENCHMARKS 13e) 512 threads made one system's iteration 3-7% faster than 1,024 (cheaper
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
// shared-memory wavefronts excess: Nsight Compute on Exnet in one block, H100, 2026-11-25.)
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

inline std::size_t aligned16(std::size_t bytes) { return (bytes + 15) / 16 * 16; }

// The shared bytes of `entries` sliced entries in `slices` slices.
template <typename T>
std::size_t matrix_bytes(index_t slices, index_t entries) {
  return aligned16(sizeof(T) * std::size_t(entries)) +
         aligned16(sizeof(index_t) * std::size_t(entries)) +
         aligned16(sizeof(index_t) * (std::size_t(slices) + 1)) +
         aligned16(sizeof(index_t) * std::size_t(slices));
}

// The vectors first (with a program: its work vectors instead of d, then its operations, its
// index and value buffers and the matrix, each where it fits in `room`: latency-bound triangular
// levels gain more from shared memory than the one SpMV pass an iteration), then the matrix.
template <typename T>
Layout layout_of(index_t rows, index_t entries, bool shared_matrix,
                 const ClusterProgramShape* program = nullptr, std::size_t room = 0,
                 bool lean = false, bool one_reduction = false) {
  Layout l;
  l.rows = rows;
  l.lean = lean && !program;
  l.one_reduction = one_reduction && !program && !l.lean;
  l.slices = (rows + kSlice - 1) / kSlice;
  l.entries = entries;
  std::size_t at = 0;
  auto take = [&](std::size_t bytes) {
    const std::size_t start = at;
    at += aligned16(bytes);
    return start;
  };
  const std::size_t vector = sizeof(T) * std::size_t(rows);
  if (l.one_reduction) {
    l.stride = index_t(aligned16(vector) / sizeof(T));
    l.r = take(8 * aligned16(vector));  // the two sets: r, w, s, d each
    l.p0 = take(vector);
    l.x = take(vector);
  } else {
    for (std::size_t* v : {&l.z, &l.p0, &l.p1, &l.r, &l.q})
      *v = take(l.lean && v == &l.r ? 0 : vector);
    // With a program, x stays in global memory (pass A only updates it in place, row by row) and
    // there is no d: room for the program's arrays. The lean layout reads x and d there too.
    l.x = take(program || l.lean ? 0 : vector);
    l.d = take(program || l.lean ? 0 : vector);
    if (program) {
      l.works = int(std::min<std::size_t>(program->work.size(), kMaxWork));
      for (int i = 0; i < l.works; ++i) l.work[i] = take(sizeof(T) * program->work[i]);
      auto stage = [&](std::size_t bytes, std::size_t& at_out, std::size_t& bytes_out, bool& in) {
        bytes_out = bytes;
        in = bytes > 0 && at + aligned16(bytes) <= room;
        if (in) at_out = take(bytes);
      };
      stage(program->op_bytes, l.ops, l.op_bytes, l.ops_shared);
      stage(program->index_bytes, l.index, l.index_bytes, l.index_shared);
      stage(program->value_bytes, l.value, l.value_bytes, l.value_shared);
      shared_matrix = at + matrix_bytes<T>(l.slices, entries) <= room;
    }
  }
  l.shared_matrix = shared_matrix;
  const std::size_t stored = shared_matrix ? std::size_t(entries) : 0;
  const std::size_t slices = shared_matrix ? std::size_t(l.slices) : 0;
  l.values = take(sizeof(T) * stored);
  l.cols = take(sizeof(index_t) * stored);
  l.slice_ptr = take(sizeof(index_t) * (slices + (shared_matrix ? 1 : 0)));
  l.width = take(sizeof(index_t) * slices);
  l.bytes = at;
  return l;
}

// The phases of an iteration as block 0's thread 0 lives them (CGSOLVE_CLUSTER_PHASES=1: their
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
  bool trace_phases;  // CGSOLVE_CLUSTER_PHASES: block 0's thread 0 sums each phase's cycles
  // A program (one block): op_count operations whose pointers into the packed buffers are
  // tagged where the layout copies that buffer to shared memory (see untag).
  const precond::Op<T>* ops;
  precond::Op<T>* ops_scratch;  // where the kernel resolves them when not in shared memory
  int op_count;
  const unsigned char* index_buffer;
  const unsigned char* value_buffer;
  bool sweeps;  // run a solve's triangular levels as one sweep (see Sweeps); false: level by level
  double replacement_slack;  // the one-reduction kernel's (kReplacementSlack; tests: 0)
};

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
// of 32 warps (Nsight Compute on Richmond, H100: 31 warps waiting at the barrier while the first
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

template <typename T>
__device__ bool same_solve(const precond::Op<T>& a, const precond::Op<T>& b) {
  return b.kind == precond::OpKind::triangular_level && a.row_ptr == b.row_ptr &&
         a.col_idx == b.col_idx && a.values == b.values && a.d == b.d && a.u == b.u && a.y == b.y &&
         a.dot == b.dot;
}

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
    while (end < count && same_solve(ops[k], ops[end])) rows += ops[end++].items;
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
// different warps. (Measured on an H100, BENCHMARKS section 10i: 32 consecutive positions a warp,
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
// was 1.15-1.25x slower on an H100: BENCHMARKS section 10i.)
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
// (kTraced: CGSOLVE_CLUSTER_PHASES) each of kCount phases' cycles, summed in `cycles`, shared
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
// 16 blocks, H200, 2026-11-26); the select keeps both in registers (BENCHMARKS §13b: the batch of
// 64 BWSN systems 14.7x -> 16.1x one persistent system's rate).
// The program's one-block instance keeps the indexing: the select made it spill 12 bytes more
// (ptxas, sm_90), and its time is its levels.
template <bool kProgram, typename P>
__device__ __forceinline__ P buffer_of_pair(int which, P const (&pair)[2]) {
  if constexpr (kProgram) return pair[which];
  return which ? pair[1] : pair[0];
}

// kProgram: the one-block variant that runs a program (a separate instance, so that the
// pointwise kernel keeps its registers: the program's code in it made it spill).
// kTraced: the instance that sums its phases' cycles (CGSOLVE_CLUSTER_PHASES), apart so that the
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
  const Layout& l = a.layout;
  constexpr bool program = kProgram;
  const bool scaled = a.d != nullptr;         // z = d .* r
  const bool identity = !scaled && !program;  // z = r
  Shared<T> s = carve<T>(smem, l, identity);
  __shared__ T* table[kMaxSlots];  // a program's slots: r, z, work vectors
  __shared__ Sweeps sweeps;
  SweepRows my_sweep_rows;
  if constexpr (program) {
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
  const index_t first = index_t(rank) * l.rows;
  const index_t mine = first >= a.n ? 0 : min(l.rows, a.n - first);
  if (l.shared_matrix) {
    load_rows(a, smem, rank, sys);
  } else {  // the slices stay in global memory (L2): absolute offsets
    s.slice_ptr = a.slice_ptr + index_t(rank) * l.slices;
    s.width = a.width + index_t(rank) * l.slices;
    s.cols = a.cols;
    s.values = a.values + sys * a.values_stride;
  }
  const T* b = a.b + sys * a.n + first;
  T* x_out = a.x + sys * a.n + first;
  const T* d_in = scaled ? a.d + sys * a.d_stride + first : nullptr;
  const bool x_in_global = program || l.lean;
  T* x = x_in_global ? x_out : s.x;
  const T* d = l.lean ? d_in : s.d;
  if (l.lean && scaled) s.r = a.r_lean + sys * a.n + first;
  for (index_t i = threadIdx.x; i < mine; i += kBlock) {
    if (!x_in_global) x[i] = x_out[i];
    if (scaled && !l.lean) s.d[i] = d_in[i];
  }
  cluster.sync();

  // Start: r = b - A x0, z = d .* r; r.r, r.z, b.b.
  {
    auto x0_at = [&](unsigned owner, index_t j) {  // x0 in global memory: any block's rows
      return x_in_global ? a.x[sys * a.n + (long long)owner * l.rows + j]
                         : entry<T>(cluster, rank, x, owner, j);
    };
    double sums[3] = {0, 0, 0};
    for (index_t i = threadIdx.x; i < mine; i += kBlock) {
      const T ri = b[i] - T(row_product(s, i, x0_at));
      s.r[i] = ri;
      sums[0] += double(ri) * double(ri);
      if (scaled) {
        const T zi = d[i] * ri;
        s.z[i] = zi;
        sums[1] += double(ri) * double(zi);
      }
      sums[2] += double(b[i]) * double(b[i]);
    }
    if constexpr (program) sums[1] = run_program(a, smem, table, sweeps, my_sweep_rows);
    block_partials<kBlock / 32>(red, sums, {kRr, kRz, kBb});
    cluster.sync();
  }

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
      const double rr = total[kRr], rz = identity ? rr : total[kRz];
      bool stop;
      if (k == 1) {
        st = cg::begin(total[kBb], a.tol, a.atol, a.max_iters);
        stop = cg::started(st, rr, rz);
      } else {
        stop = cg::stepped(st, rr, rz, k - 1);
      }
      if (rank == 0 && sys == 0 && k - 1 < a.history_capacity) a.history[k - 1] = rr;
      go = !stop;
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
    if (timed && (k - 1) % a.spmv_every == 0) {
      const long long slot = (k - 1) / a.spmv_every;
      if (slot < a.spmv_capacity) a.spmv[slot] = double(clock64() - pass_start);
    }
    clocks.phase_done(3);

    // Pass B(k).
    cluster_totals(cluster, red, {kPq},
                   [&](const double* total) { go = cg::step(st, total[kPq], k); });
    clocks.phase_done(4);
    if (!go) break;  // breakdown: x, r stay at k - 1
    const T alpha = T(st.alpha);
    double sums[2] = {0, 0};
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
    clocks.phase_done(5);
    if constexpr (program) sums[1] = run_program(a, smem, table, sweeps, my_sweep_rows);
    block_partials<kBlock / 32>(red, sums, {kRr, kRz});
    clocks.phase_done(6);
    cluster.sync();
    clocks.phase_done(7);
  }
  if (!x_in_global)
    for (index_t i = threadIdx.x; i < mine; i += kBlock) x_out[i] = x[i];
  if (leader) a.out[sys] = st;
  if (timed) clocks.write(a.clocks);
  cluster.sync();  // no block leaves while another may still read its shared memory
}

// The one-reduction iteration (issue 27 item 1; opt-in: CGSOLVE_CLUSTER_REDUCTIONS=1, double
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
// norm is above kReplacementSlack x the threshold (at most kMaxRestarts times;
// CGSOLVE_CLUSTER_REPLACEMENT_SLACK=0 restarts at every stop: a test of the restart).
// Not the default: measured on an H100 (BENCHMARKS 13e) it is 9-10% faster an iteration on
// Poisson and Net3 but 2-5% slower on BWSN_Network_2 and Exnet with Jacobi (four remote loads
// an entry), and its recurrences cost iterations on the water networks (Exnet without a
// preconditioner +27%, Net3 +3%); reliable updating of r and s every 100-fold drop (as the
// distributed single-reduction CG) made that worse, and in float they drift until Exnet without
// a preconditioner does not converge.
constexpr double kReplacementSlack = 10;
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

template <typename T, bool kTraced = false, int kBlock = kThreads>
__global__ void __launch_bounds__(kBlock, 1) one_reduction_cg_kernel(Args<T> a) {
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ Reduction red;
  __shared__ cg::State st;
  // Thread 0's decisions for the block: go on; restart (the next totals are the true
  // residual's); form p and A p in this pass. And a count of the latter.
  __shared__ int go, restart, form_p, fallbacks;
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
  for (index_t i = threadIdx.x; i < mine; i += kBlock) {
    x[i] = x_out[i];
    const T di = scaled ? a.d[sys * a.d_stride + first + i] : T(1);
    sets[3 * V + i] = di;  // d in both sets
    sets[7 * V + i] = di;
  }
  if (threadIdx.x == 0) restart = form_p = fallbacks = 0;
  cluster.sync();

  // (A v)_i of a vector every block holds its rows of (x, p).
  auto product = [&](index_t i, const T* v) {
    return T(row_product(
        m, i, [&](unsigned owner, index_t j) { return entry<T>(cluster, rank, v, owner, j); }));
  };
  // r = b - A x into `set`; r.r (and b.b) into the set's slots.
  auto residual = [&](T* set, int slots, bool with_bb) {
    double sums[2] = {0, 0};
    for (index_t i = threadIdx.x; i < mine; i += kBlock) {
      const T ri = b[i] - product(i, x);
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
    cluster.sync();
  };
  // w = A u of the set's r (u = d .* r) into the set; r.r, r.u, w.u into slot set `slots` (a
  // first step: no p yet).
  auto w_of_u = [&](T* set, int slots) {
    double sums[3] = {0, 0, 0};
    for (index_t i = threadIdx.x; i < mine; i += kBlock) {
      const T ri = set[i], ui = set[3 * V + i] * ri;
      const T wi = T(row_product(m, i, [&](unsigned owner, index_t j) {
        const SetEntries<T> e = set_entries(cluster, rank, set, V, owner, j, false, scaled);
        return e.d * e.r;
      }));
      set[V + i] = wi;
      sums[0] += double(ri) * double(ri);
      sums[1] += double(ri) * double(ui);
      sums[2] += double(wi) * double(ui);
    }
    const int at = kOne + kOneSums * slots;
    block_partials<kBlock / 32>(red, sums, {at, at + 1, at + 2});
    cluster.sync();
  };
  residual(sets, 0, true);
  w_of_u(sets, 0);

  bool first_step = true;  // p = u: the first step, or the first after a restart
  int restarts = 0;
  for (long long k = 1;; ++k) {
    const int old = int((k - 1) % 2), now = int(k % 2);
    long long pass_start = 0;
    if (timed) pass_start = clock64();
    clocks.pass_begins(pass_start);
    const int at = kOne + kOneSums * old;
    cluster_totals(cluster, red, {at, at + 1, at + 2, at + 3, at + 4, kBb},
                   [&](const double* total) {
                     const double rr = total[at], rz = total[at + 1];
                     const bool first = k == 1 || restart;
                     bool stop = false;
                     if (k == 1) {
                       st = cg::begin(total[kBb], a.tol, a.atol, a.max_iters);
                       stop = cg::started(st, rr, rz);
                     } else if (restart) {  // the true residual's sums, at the same iteration
                       st.rr = rr;
                       st.rz = rz;
                     } else {
                       stop = cg::stepped(st, rr, rz, k - 1);
                     }
                     const double pq = cg::one_reduction_pq(st, total + at + 2, first);
                     // p.q lost to cancellation after all: form p and A p this pass (below)
                     form_p = !stop && !first && !(pq > 0 && isfinite(pq));
                     if (!stop && !form_p) stop = !cg::step(st, pq, k);
                     if (rank == 0 && sys == 0 && k - 1 < a.history_capacity && !restart)
                       a.history[k - 1] = rr;
                     go = !stop;
                     restart = 0;
                   });
    clocks.phase_done(0);
    T* const set_old = sets + 4 * V * old;
    T* const set_new = sets + 4 * V * now;
    if (!go) {
      // A stop on the recursive residual: replace it by b - A x and go on from there where the
      // two differ (x is at iteration k - 1, every block's rows written before the last barrier;
      // nobody reads the new set in this phase).
      if (st.converged_at <= 0 || restarts >= kMaxRestarts) break;
      residual(set_new, now, false);
      if (threadIdx.x == 0) {
        double rr = 0;
        for (unsigned blk = 0; blk < cluster.num_blocks(); ++blk)
          rr += *cluster.map_shared_rank(&red.partial[kOne + kOneSums * now], blk);
        go = !cg::replaced(st, rr, 0, a.replacement_slack);
        restart = go;
      }
      __syncthreads();
      if (!go) break;
      ++restarts;
      // Restart at this iteration from r = b - A x: w = A u into the set the next pass reads.
      for (index_t i = threadIdx.x; i < mine; i += kBlock) set_old[i] = set_new[i];
      cluster.sync();
      w_of_u(set_old, old);
      first_step = true;
      --k;  // the same iteration again, from the replaced residual
      continue;
    }
    // p.q from the recurrence lost to cancellation: form p and s = A p and reduce p.s as the
    // two-pass CG would, this pass only (two more cluster barriers); a true breakdown stays one.
    const bool formed = form_p;
    if (formed) {
      const T beta = T(st.beta);
      for (index_t i = threadIdx.x; i < mine; i += kBlock)
        p[i] = cg::next_p(set_old[3 * V + i] * set_old[i], beta, p[i]);
      cluster.sync();
      double pq[1] = {0};
      for (index_t i = threadIdx.x; i < mine; i += kBlock) {
        const T qi = product(i, p);
        set_old[2 * V + i] = qi;  // s = A p, read by the rows below (nobody reads it now)
        pq[0] += double(p[i]) * double(qi);
      }
      block_partials<kBlock / 32>(red, pq, {kPq});
      cluster.sync();
      cluster_totals(cluster, red, {kPq}, [&](const double* total) {
        go = cg::step(st, total[kPq], k);
        form_p = 0;
        ++fallbacks;
      });
      if (!go) break;  // a true breakdown: x and r stay at k - 1
    }
    const T alpha = T(st.alpha), beta = first_step ? T(0) : T(st.beta);
    // s_j and u_j of this pass from the previous pass's r_j, w_j, s_j, d_j (any block's row
    // j): one expression for the owner's update and for the SpMV's reads, the same bits.
    auto next_s = [&](T wj, T sj) {
      return formed ? sj : first_step ? wj : cg::next_p(wj, beta, sj);
    };
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
    if (timed && (k - 1) % a.spmv_every == 0) {
      const long long sample = (k - 1) / a.spmv_every;
      if (sample < a.spmv_capacity) a.spmv[sample] = double(clock64() - pass_start);
    }
    clocks.phase_done(3);
  }
  for (index_t i = threadIdx.x; i < mine; i += kBlock) x_out[i] = x[i];
  if (rank == 0 && threadIdx.x == 0) a.out[sys] = st;
  if (timed) {
    clocks.write(a.clocks);
    a.clocks[2 + kOnePhases] = fallbacks;  // passes that formed p and A p
    a.clocks[3 + kOnePhases] = restarts;   // from b - A x after a stop that did not stand
  }
  cluster.sync();  // no block leaves while another may still read its shared memory
}

// CGSOLVE_CLUSTER_PHASES=1: where an iteration's time goes, as block 0's thread 0 saw it (a
// diagnostic: its clock reads and shared-memory sums lengthen that thread's chain a little).
bool trace_phases() {  // read at each solve (a test turns it on and off)
  const char* env = std::getenv("CGSOLVE_CLUSTER_PHASES");
  return env && *env && *env != '0';
}

// Per iteration: each phase's cycles and microseconds (at the launch's own clock rate) to stderr.
void print_phases(const long long* clocks, long long iterations, const char* const* names,
                  int phases) {
  if (iterations <= 0 || clocks[0] <= 0) return;
  const double us_per_cycle = double(clocks[1]) * 1e-3 / double(clocks[0]);
  long long traced = 0;
  for (int i = 0; i < phases; ++i) traced += clocks[2 + i];
  std::fprintf(stderr, "cluster phases (block 0, thread 0; per iteration, %lld iterations):\n",
               iterations);
  for (int i = 0; i < phases; ++i)
    std::fprintf(stderr, "  %-44s %8.0f cycles %7.3f us\n", names[i],
                 double(clocks[2 + i]) / double(iterations),
                 double(clocks[2 + i]) * us_per_cycle / double(iterations));
  std::fprintf(stderr, "  %-44s %8.0f cycles %7.3f us\n", "all phases",
               double(traced) / double(iterations),
               double(traced) * us_per_cycle / double(iterations));
}

// The launch configuration of `blocks` per cluster and `count` clusters.
struct Launch {
  cudaLaunchConfig_t config{};
  cudaLaunchAttribute attribute[1]{};
  Launch(int blocks, int count, std::size_t bytes, int threads) {
    config.gridDim = dim3(unsigned(blocks) * unsigned(count));
    config.blockDim = dim3(unsigned(threads));
    config.dynamicSmemBytes = bytes;
    config.stream = stream();
    attribute[0].id = cudaLaunchAttributeClusterDimension;
    attribute[0].val.clusterDim.x = unsigned(blocks);
    attribute[0].val.clusterDim.y = 1;
    attribute[0].val.clusterDim.z = 1;
    config.attrs = attribute;
    config.numAttrs = 1;
  }
};

template <typename T>
using KernelFunction = void (*)(Args<T>);

// The kernel instance a launch runs: a program's; else the pointwise one of the iteration
// (one reduction or two passes), the block size (kSingleThreads or kThreads) and the trace.
template <typename T>
KernelFunction<T> kernel_of(bool program, bool one_reduction, int threads, bool traced) {
  if (program) return cluster_cg_kernel<T, true>;
  const bool single = threads == kSingleThreads;
  if (one_reduction) {
    if (single)
      return traced ? one_reduction_cg_kernel<T, true, kSingleThreads>
                    : one_reduction_cg_kernel<T, false, kSingleThreads>;
    return traced ? one_reduction_cg_kernel<T, true> : one_reduction_cg_kernel<T, false>;
  }
  if (single)
    return traced ? cluster_cg_kernel<T, false, true, kSingleThreads>
                  : cluster_cg_kernel<T, false, false, kSingleThreads>;
  return traced ? cluster_cg_kernel<T, false, true> : cluster_cg_kernel<T, false, false>;
}

// Lets every instance kernel_of can return take `bytes` of dynamic shared memory and clusters
// past the portable 8 blocks.
template <typename T>
void allow_large_clusters(std::size_t bytes) {
  const void* done[16];
  int count = 0;
  for (bool program : {false, true})
    for (bool one_reduction : {false, true})
      for (int threads : {kThreads, kSingleThreads})
        for (bool traced : {false, true}) {
          const auto* kernel =
              reinterpret_cast<const void*>(kernel_of<T>(program, one_reduction, threads, traced));
          if (std::find(done, done + count, kernel) != done + count) continue;  // the program's
          done[count++] = kernel;
          CGS_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              int(bytes)));
          CGS_CUDA_CHECK(
              cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
        }
}

// How many clusters of this shape the device holds at once (0: it cannot launch one).
template <typename T>
int active_clusters(int blocks, std::size_t bytes, int threads, bool program = false,
                    bool one_reduction = false) {
  allow_large_clusters<T>(bytes);
  Launch launch(blocks, 1, bytes, threads);
  int clusters = 0;
  const void* kernel =
      reinterpret_cast<const void*>(kernel_of<T>(program, one_reduction, threads, false));
  const cudaError_t status = cudaOccupancyMaxActiveClusters(&clusters, kernel, &launch.config);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return clusters;
}

// The sliced rows (see kSlice) of n rows in `blocks` blocks of `rows` rows each: per slice its
// first entry and width; per entry its recoded column and its index in A's values (-1: padding,
// which names the block's first row with the value 0). col_idx null: the sizes only.
struct Slices {
  std::vector<index_t> ptr, width, cols, source;
  index_t max_block_entries = 0;
};

inline Slices slice_rows(index_t n, const index_t* row_ptr, const index_t* col_idx, index_t rows,
                         int blocks) {
  Slices s;
  const index_t per_block = (rows + kSlice - 1) / kSlice;
  index_t at = 0;
  for (int b = 0; b < blocks; ++b) {
    const index_t first = std::min<index_t>(n, index_t(b) * rows);
    const index_t end = std::min<index_t>(n, first + rows), block_begin = at;
    for (index_t slice = 0; slice < per_block; ++slice) {
      const index_t r0 = first + slice * kSlice;
      index_t width = 0;
      for (index_t row = r0; row < std::min(end, r0 + kSlice); ++row)
        width = std::max(width, row_ptr[row + 1] - row_ptr[row]);
      s.ptr.push_back(at);
      s.width.push_back(width);
      for (index_t j = 0; col_idx && j < width; ++j)
        for (index_t lane = 0; lane < kSlice; ++lane) {
          const index_t row = r0 + lane;
          const bool real = row < end && j < row_ptr[row + 1] - row_ptr[row];
          const index_t col = real ? col_idx[row_ptr[row] + j] : index_t(b) * rows;
          const index_t owner = col / rows;
          s.cols.push_back((owner << kLocalBits) | (col - owner * rows));
          s.source.push_back(real ? row_ptr[row] + j : -1);
        }
      at += width * kSlice;
    }
    s.max_block_entries = std::max(s.max_block_entries, at - block_begin);
  }
  s.ptr.push_back(at);
  return s;
}

// Rows per block and the fullest block's sliced entries for `blocks` blocks.
inline std::pair<index_t, index_t> split(index_t n, const index_t* row_ptr, int blocks) {
  const index_t rows = (n + blocks - 1) / blocks;
  return {rows, slice_rows(n, row_ptr, nullptr, rows, blocks).max_block_entries};
}

// The dynamic shared memory one block may take beside the kernel's static shared memory (the
// Reduction, the CG state and its flag, a program's slot table and sweeps; 64 bytes of slack).
std::size_t shared_room() {
  int max_bytes = 0;
  CGS_CUDA_CHECK(cudaDeviceGetAttribute(&max_bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                        cuda::cuda_context().device));
  return std::size_t(max_bytes) - sizeof(Reduction) - sizeof(cg::State) - sizeof(int) -
         sizeof(void*) * kMaxSlots - sizeof(Sweeps) - 64;
}

// One block with a program: its vectors and work vectors must fit; the rest goes where it fits.
template <typename T>
ClusterFit program_fit(index_t n, const index_t* row_ptr, const ClusterProgramShape& program) {
  ClusterFit fit;
  fit.program = true;
  fit.threads = kThreads;  // the program's operations are laid out for kThreads
  const std::size_t room = shared_room();
  const auto [rows, nnz] = split(n, row_ptr, 1);
  const Layout l = layout_of<T>(rows, nnz, true, &program, room);
  char text[300];
  if (program.work.size() > std::size_t(kMaxWork)) {
    std::snprintf(text, sizeof text, "the program has %zu work vectors; one block holds %d",
                  program.work.size(), kMaxWork);
  } else if (l.bytes > room || active_clusters<T>(1, l.bytes, kThreads, true) < 1) {
    const std::size_t vectors = layout_of<T>(rows, nnz, true, &program, 0).bytes;  // nothing staged
    std::snprintf(text, sizeof text,
                  "n = %lld: the CG and program vectors need %zu KB of shared memory in one block "
                  "(a program runs in one block); a block has %zu KB",
                  (long long)n, vectors / 1024, room / 1024);
  } else {
    fit.fits = true;
    fit.blocks = 1;
    fit.bytes = l.bytes;
    fit.matrix_in_shared = l.shared_matrix;
    fit.program_in_shared = l.ops_shared && l.index_shared && l.value_shared;
    std::snprintf(text, sizeof text,
                  "n = %lld in one block (a program's operations meet at block barriers), %zu KB "
                  "of shared memory: vectors%s%s",
                  (long long)n, l.bytes / 1024, fit.program_in_shared ? ", the program" : "",
                  l.shared_matrix ? ", the matrix" : " (the matrix read from L2)");
  }
  fit.reason = text;
  return fit;
}

// CGSOLVE_CLUSTER_LEAN=0 keeps a batch's vectors all in shared memory (benchmarks compare).
bool lean_from_environment() {
  const char* text = std::getenv("CGSOLVE_CLUSTER_LEAN");
  return !(text && std::strcmp(text, "0") == 0);
}

// CGSOLVE_CLUSTER_REDUCTIONS=1 runs one system in double by the one-reduction iteration where its
// vectors fit (see one_reduction_cg_kernel; benchmarks and tests compare), else the two passes.
bool one_reduction_from_environment() {
  const char* text = std::getenv("CGSOLVE_CLUSTER_REDUCTIONS");
  return text && std::strcmp(text, "1") == 0;
}

double replacement_slack_from_environment() {
  const char* text = std::getenv("CGSOLVE_CLUSTER_REPLACEMENT_SLACK");
  return text && *text ? std::atof(text) : kReplacementSlack;
}

// CGSOLVE_CLUSTER_THREADS=512 or 1024 sets the threads of a pointwise loop's blocks (benchmarks
// compare; the kernels are instantiated for these two); otherwise `chosen`.
int threads_from_environment(int chosen) {
  const char* text = std::getenv("CGSOLVE_CLUSTER_THREADS");
  const int asked = text ? std::atoi(text) : 0;
  return asked == kSingleThreads || asked == kThreads ? asked : chosen;
}

int blocks_from_environment() {
  const char* text = std::getenv("CGSOLVE_CLUSTER_BLOCKS");
  return text ? std::atoi(text) : 0;
}

// CGSOLVE_CLUSTER_SWEEPS=0 runs a program's triangular levels one by one between barriers, as
// before the sweeps (benchmarks compare the two in one run; the results are the same bits).
bool sweeps_from_environment() {
  const char* text = std::getenv("CGSOLVE_CLUSTER_SWEEPS");
  return !(text && std::strcmp(text, "0") == 0);
}

}  // namespace cluster

template <typename T>
ClusterFit cluster_fit(index_t n, const index_t* row_ptr, int blocks, bool batch,
                       const ClusterProgramShape* program) {
  using namespace cluster;
  ClusterFit fit;
  fit.matrix_in_shared = !batch;
  if (n <= 0) {
    fit.reason = "the cluster loop needs a non-empty system";
    return fit;
  }
  if (program && batch) {
    fit.reason = "the cluster loop runs a program for one system, not a batch";
    return fit;
  }
  if (blocks == 0) blocks = blocks_from_environment();
  int major = 0;
  CGS_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor,
                                        cuda::cuda_context().device));
  if (major < 9) {
    fit.reason = "thread-block clusters need compute capability 9.0 (Hopper) or later";
    return fit;
  }
  if (program) return program_fit<T>(n, row_ptr, *program);
  const std::size_t room = shared_room();
  // One system: the most blocks (16, else 8, ...): measured on an H100 (2026-11-25), every
  // system was fastest in 16 blocks, even Exnet's 1,891 rows (6.45 us an iteration; 8.16 in one
  // block, 7.60 in the persistent loop). A batch: the fewest blocks that hold a system's vectors,
  // so that the most clusters run at once; where the lean layout (x, d, r in global memory, L2)
  // halves them, the lean one: BWSN_Network_2's 12,523 rows take 2 blocks instead of 4, so 64
  // systems run in one wave of an H100's 132 SMs instead of two.
  const int single_order[] = {16, 8, 4, 2, 1}, batch_order[] = {1, 2, 4, 8, 16};
  const int threads = threads_from_environment(batch ? kThreads : kSingleThreads);
  fit.threads = threads;
  for (int b : batch ? batch_order : single_order) {
    if (blocks > 0 && b != blocks) continue;
    const auto [rows, nnz] = split(n, row_ptr, b);
    // One system in double, asked for: the one-reduction iteration where its vectors fit.
    for (const int kind : {0, 1, 2}) {  // one reduction; two passes; two passes, lean
      const bool one_reduction = kind == 0, lean = kind == 2;
      if (one_reduction && (batch || sizeof(T) != 8 || !one_reduction_from_environment())) continue;
      if (lean && (!batch || !lean_from_environment())) continue;
      const Layout l = layout_of<T>(rows, nnz, !batch, nullptr, 0, lean, one_reduction);
      if (l.bytes > room || rows > kLocalMask ||
          active_clusters<T>(b, l.bytes, threads, false, one_reduction) < 1)
        continue;
      fit.fits = true;
      fit.blocks = b;
      fit.bytes = l.bytes;
      fit.lean = lean;
      fit.one_reduction = one_reduction;
      break;
    }
    if (fit.fits) break;
  }
  char text[220];
  if (fit.fits) {
    std::snprintf(text, sizeof text,
                  "n = %lld in one cluster of %d blocks of %d threads, %zu KB of shared memory "
                  "each%s",
                  (long long)n, fit.blocks, fit.threads, fit.bytes / 1024,
                  fit.one_reduction ? ", one reduction and one cluster barrier an iteration"
                  : !batch          ? ", two passes an iteration"
                  : fit.lean        ? " (z, p and q; x, d, r and the matrix read from L2)"
                                    : " (vectors; the matrix read from L2)");
  } else {
    const int b = blocks > 0 ? blocks : kMaxBlocks;
    const auto [rows, nnz] = split(n, row_ptr, b);
    std::snprintf(text, sizeof text,
                  "n = %lld, %lld entries need %zu KB of shared memory per block in a cluster of "
                  "%d; a block has %zu KB",
                  (long long)n, (long long)row_ptr[n], layout_of<T>(rows, nnz, !batch).bytes / 1024,
                  b, room / 1024);
  }
  fit.reason = text;
  return fit;
}

namespace cluster {

template <typename T>
class ClusterCgImpl final : public ClusterCg<T> {
 public:
  ClusterCgImpl(const CsrView<T>& A, index_t n, const T* d, const ClusterFit& fit,
                const std::vector<index_t>& row_ptr,
                const precond::DeviceProgramView<T>* program = nullptr,
                const ClusterProgramShape* shape = nullptr)
      : A_(A),
        n_(n),
        nnz_(row_ptr[std::size_t(n)]),
        d_(d),
        fit_(fit),
        clocks_(2 + kPhases, "cluster CG clocks") {
    const auto [rows, entries] = split(n, row_ptr.data(), fit.blocks);
    layout_ = program ? layout_of<T>(rows, entries, true, shape, shared_room())
                      : layout_of<T>(rows, entries, fit.matrix_in_shared, nullptr, 0, fit.lean,
                                     fit.one_reduction);
    if (program) place_program(*program);
    std::vector<index_t> col_idx(static_cast<std::size_t>(nnz_));
    cuda::copy_to_host(col_idx.data(), A_.col_idx, col_idx.size() * sizeof(index_t));
    const Slices slices = slice_rows(n, row_ptr.data(), col_idx.data(), rows, fit.blocks);
    entries_ = slices.ptr.back();
    slice_ptr_ = DeviceArray<index_t>(slices.ptr, "cluster CG slices");
    width_ = DeviceArray<index_t>(slices.width, "cluster CG slice widths");
    cols_ = DeviceArray<index_t>(slices.cols.empty() ? std::vector<index_t>{0} : slices.cols,
                                 "cluster CG columns");
    source_ = DeviceArray<index_t>(slices.source.empty() ? std::vector<index_t>{-1} : slices.source,
                                   "cluster CG value sources");
    allow_large_clusters<T>(layout_.bytes);
    CGS_CUDA_CHECK(cudaEventCreate(&begin_));
    CGS_CUDA_CHECK(cudaEventCreate(&end_));
  }
  ~ClusterCgImpl() override {
    (void)cudaEventDestroy(begin_);
    (void)cudaEventDestroy(end_);
  }

  const ClusterFit& fit() const override { return fit_; }

  CgResult solve(const T* b, T* x, const CgOptions& options) override {
    return solve_batch(b, x, 1, nullptr, nullptr, options).front();
  }

  std::vector<CgResult> solve_batch(const T* b, T* x, int count, const T* values, const T* d,
                                    const CgOptions& options) override {
    if (count < 1) return {};
    if (op_count_ > 0 && count > 1)
      throw DeviceError("the cluster CG loop runs a program for one system at a time");
    Args<T> a = args(b, x, count, values, d, options);
    Launch launch(fit_.blocks, count, layout_.bytes, fit_.threads);
    allow_large_clusters<T>(layout_.bytes);  // this loop's bytes: another loop may have set less
    CGS_CUDA_CHECK(cudaEventRecord(begin_, stream()));
    CGS_CUDA_CHECK(cudaLaunchKernelEx(
        &launch.config,
        kernel_of<T>(op_count_ > 0, layout_.one_reduction, fit_.threads, a.trace_phases), a));
    CGS_CUDA_CHECK(cudaEventRecord(end_, stream()));
    cuda::synchronize();
    return results(count, x, options);
  }

 private:
  // The program's operations as the kernel reads them: a pointer into a buffer the layout
  // copies to shared memory becomes its tagged shared offset (see untag).
  void place_program(const precond::DeviceProgramView<T>& program) {
    std::vector<precond::Op<T>> ops = program.host_ops;
    const auto* index = static_cast<const unsigned char*>(program.index_data);
    const auto* value = static_cast<const unsigned char*>(program.value_data);
    auto tag = [&](auto*& p) {
      if (!p) return;
      const auto* at = reinterpret_cast<const unsigned char*>(p);
      std::size_t offset = 0;
      if (layout_.index_shared && at >= index && at < index + program.index_bytes)
        offset = layout_.index + std::size_t(at - index);
      else if (layout_.value_shared && at >= value && at < value + program.value_bytes)
        offset = layout_.value + std::size_t(at - value);
      else
        return;
      p = reinterpret_cast<std::remove_reference_t<decltype(p)>>((offset << 1) | 1);
    };
    for (precond::Op<T>& op : ops) {
      tag(op.rows);
      tag(op.row_ptr);
      tag(op.col_idx);
      tag(op.values);
      tag(op.d);
      tag(op.blocks);
    }
    ops_ = DeviceArray<precond::Op<T>>(ops, "cluster CG program operations");
    ops_scratch_ = DeviceArray<precond::Op<T>>(ops.size(), "cluster CG program operations");
    op_count_ = int(ops.size());
    index_buffer_ = index;
    value_buffer_ = value;
  }

  Args<T> args(const T* b, T* x, int count, const T* values, const T* d, const CgOptions& o) {
    if (std::size_t(count) > out_.size()) out_ = DeviceArray<cg::State>(count, "cluster CG states");
    const std::size_t r_entries = layout_.lean ? std::size_t(count) * std::size_t(n_) : 0;
    if (r_entries > r_lean_.size()) r_lean_ = DeviceArray<T>(r_entries, "cluster CG residuals");
    history_capacity_ = o.record_history ? o.max_iters + 1 : 0;
    if (std::size_t(history_capacity_) > history_.size())
      history_ = DeviceArray<double>(history_capacity_, "cluster CG history");
    spmv_capacity_ = o.time_spmv ? std::min<long long>(o.max_iters, 1 << 20) : 0;
    if (std::size_t(spmv_capacity_) > spmv_.size())
      spmv_ = DeviceArray<double>(spmv_capacity_, "cluster CG SpMV times");
    Args<T> a{};
    a.n = n_;
    a.ops = ops_.data();
    a.ops_scratch = ops_scratch_.data();
    a.op_count = op_count_;
    a.index_buffer = index_buffer_;
    a.value_buffer = value_buffer_;
    a.sweeps = sweeps_;
    a.slice_ptr = slice_ptr_.data();
    a.width = width_.data();
    a.cols = cols_.data();
    a.values = sliced_values(values, count);
    a.values_stride = values ? (long long)entries_ : 0;
    a.d = d ? d : d_;
    a.d_stride = d ? n_ : 0;
    a.b = b;
    a.x = x;
    a.r_lean = r_lean_.data();
    a.layout = layout_;
    a.tol = o.tol;
    a.atol = o.atol;
    a.max_iters = o.max_iters;
    a.out = out_.data();
    a.history = history_.data();
    a.history_capacity = history_capacity_;
    a.spmv = spmv_.data();
    a.spmv_capacity = spmv_capacity_;
    a.spmv_every = spmv_capacity_ > 0
                       ? std::max<long long>(1, (o.max_iters + spmv_capacity_ - 1) / spmv_capacity_)
                       : 1;
    spmv_every_ = a.spmv_every;
    a.time_spmv = o.time_spmv;
    a.clocks = clocks_.data();
    a.trace_phases = trace_phases() && op_count_ == 0;  // the pointwise kernel's trace only
    a.replacement_slack = replacement_slack_from_environment();
    return a;
  }

  // The values (A's, or `count` systems' own) in the sliced order, gathered at every solve
  // (set_values may have changed them).
  const T* sliced_values(const T* values, int count) {
    const int systems = values ? count : 1;
    const std::size_t size = std::max<std::size_t>(1, std::size_t(entries_) * std::size_t(systems));
    if (size > sliced_.size()) sliced_ = DeviceArray<T>(size, "cluster CG sliced values");
    const long long total = (long long)entries_ * systems;
    if (total > 0) {
      const int grid = int(std::min<long long>((total + 255) / 256, 4096));
      gather_values<T><<<grid, 256, 0, stream()>>>(sliced_.data(), values ? values : A_.values,
                                                   source_.data(), entries_, values ? nnz_ : 0,
                                                   systems);
      CGS_CHECK_LAUNCH();
    }
    return sliced_.data();
  }

  std::vector<CgResult> results(int count, T* x, const CgOptions& o) {
    std::vector<cg::State> states(count);
    cuda::copy_to_host(states.data(), out_.data(), sizeof(cg::State) * std::size_t(count));
    float ms = 0;
    CGS_CUDA_CHECK(cudaEventElapsedTime(&ms, begin_, end_));
    std::vector<CgResult> out;
    for (int i = 0; i < count; ++i) {
      CgResult r = result_of(states[i]);
      r.solve_seconds = ms * 1e-3;
      if (states[i].zero_rhs)
        CGS_CUDA_CHECK(cudaMemsetAsync(x + std::size_t(i) * n_, 0, n_ * sizeof(T), stream()));
      out.push_back(std::move(r));
    }
    cuda::synchronize();
    CgResult& first = out.front();
    const long long iterations = states[0].iterations;
    if (o.record_history && history_capacity_ > 0) {
      std::vector<double> rr(std::size_t(std::min(iterations + 1, history_capacity_)));
      cuda::copy_to_host(rr.data(), history_.data(), rr.size() * sizeof(double));
      set_history(first, rr);
    }
    const long long samples =
        std::min(spmv_capacity_, (iterations + spmv_every_ - 1) / spmv_every_);
    if (o.time_spmv && samples > 0 && !states[0].zero_rhs) {
      long long clocks[2 + kPhases];
      cuda::copy_to_host(clocks, clocks_.data(), sizeof clocks);
      if (trace_phases() && op_count_ == 0) {
        if (layout_.one_reduction) {
          print_phases(clocks, iterations, kOnePhaseNames, kOnePhases);
          std::fprintf(stderr,
                       "  passes that formed p and A p: %lld; restarts from b - A x: %lld\n",
                       clocks[2 + kOnePhases], clocks[3 + kOnePhases]);
        } else
          print_phases(clocks, iterations, kPhaseNames, kPhases);
      }
      std::vector<double> ticks(static_cast<std::size_t>(samples));
      cuda::copy_to_host(ticks.data(), spmv_.data(), ticks.size() * sizeof(double));
      const double seconds_per_cycle =
          clocks[0] > 0 ? double(clocks[1]) * 1e-9 / double(clocks[0]) : 0;
      for (double& t : ticks) t *= seconds_per_cycle;
      first.spmv.samples = std::move(ticks);
      first.spmv.every = int(spmv_every_);
      first.spmv.what = layout_.one_reduction
                            ? "the iteration's one pass (SpMV w = A u, the updates fused in)"
                            : "SpMV pass (p and x updates fused in)";
    }
    return out;
  }

  CsrView<T> A_;
  index_t n_, nnz_;
  const T* d_;
  ClusterFit fit_;
  Layout layout_;
  index_t entries_ = 0;
  DeviceArray<index_t> slice_ptr_, width_, cols_, source_;
  DeviceArray<T> sliced_;
  DeviceArray<cg::State> out_;
  DeviceArray<T> r_lean_;  // the lean layout's r, count x n
  DeviceArray<double> history_, spmv_;
  DeviceArray<long long> clocks_;
  DeviceArray<precond::Op<T>> ops_, ops_scratch_;
  int op_count_ = 0;
  const unsigned char* index_buffer_ = nullptr;
  const unsigned char* value_buffer_ = nullptr;
  bool sweeps_ = sweeps_from_environment();
  long long history_capacity_ = 0, spmv_capacity_ = 0, spmv_every_ = 1;
  cudaEvent_t begin_ = nullptr, end_ = nullptr;
};

}  // namespace cluster

template <typename T>
std::unique_ptr<ClusterCg<T>> make_cluster_cg(const CsrView<T>& A, index_t n, const T* d,
                                              int blocks, bool batch,
                                              const precond::DeviceProgramView<T>* program) {
  std::vector<index_t> row_ptr(std::size_t(n) + 1);
  cuda::copy_to_host(row_ptr.data(), A.row_ptr, row_ptr.size() * sizeof(index_t));
  ClusterProgramShape shape;
  if (program) {
    if (d) throw DeviceError("the cluster CG loop takes a diagonal or a program, not both");
    shape.work = program->work;
    shape.op_bytes = sizeof(precond::Op<T>) * program->host_ops.size();
    shape.index_bytes = program->index_bytes;
    shape.value_bytes = program->value_bytes;
  }
  const ClusterFit fit =
      cluster_fit<T>(n, row_ptr.data(), blocks, batch, program ? &shape : nullptr);
  if (!fit.fits) throw DeviceError("the cluster CG loop cannot hold this system: " + fit.reason);
  return std::make_unique<cluster::ClusterCgImpl<T>>(A, n, d, fit, row_ptr, program,
                                                     program ? &shape : nullptr);
}

template ClusterFit cluster_fit<float>(index_t, const index_t*, int, bool,
                                       const ClusterProgramShape*);
template ClusterFit cluster_fit<double>(index_t, const index_t*, int, bool,
                                        const ClusterProgramShape*);
template std::unique_ptr<ClusterCg<float>> make_cluster_cg(
    const CsrView<float>&, index_t, const float*, int, bool,
    const precond::DeviceProgramView<float>*);
template std::unique_ptr<ClusterCg<double>> make_cluster_cg(
    const CsrView<double>&, index_t, const double*, int, bool,
    const precond::DeviceProgramView<double>*);

}  // namespace cgs
