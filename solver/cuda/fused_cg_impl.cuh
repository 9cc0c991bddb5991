// The fused GPU CG loops (fused_cg.hpp), for one way of walking the rows (a Source of
// fused_cg_device.cuh); instantiated per source by fused_cg_*.cu.
//
//   start:     r = b - A x0; z = d .* r (pointwise preconditioner) ; r.r, r.z, b.b.
//   pass A(k): the decision of iteration k - 1 (cg::started / cg::stepped, from the totals of
//              the passes before it); then p_k = z + beta_k p_{k-1} and q = A p_k in one sweep
//              (the SpMV reads z_j + beta_k p_{k-1,j} on the fly through the row function, so
//              p_k is written, to the other of two buffers, by the same pass that uses it); also
//              x += alpha_{k-1} p_{k-1} (x lags one iteration, which saves a pass) and p.q.
//   pass B(k): cg::step (alpha_k, or a breakdown); r -= alpha_k q; z = d .* r; r.r, r.z.
//   program:   after the start and after each pass B, the preconditioner's operations (if it
//              is not pointwise), a grid-wide sync between them; they give z and r.z. A
//              triangular solve's levels run as one sweep (solver/precond/triangular_sweep.hpp):
//              one stretch of the persistent kernel, one kernel of the graph.
// Between passes all blocks wait for each other: a grid-wide sync in the persistent kernel, a
// kernel boundary in the graph. Vector traffic is 9 n per iteration (11 n with Jacobi) besides
// the matrix and the program.
//
// The state: every block computes the same cg::State from the same totals. In the persistent
// loop each block keeps its own; the leader (block 0, thread 0) also stores it, in state[0]
// during pass A and state[1] during pass B, for the host and for the graph loop, whose kernels
// read the one the pass before wrote (once per block), so nothing is read in the pass that
// writes it.
//
// Measured and dropped: a one-sync Chronopoulos-Gear variant (one pass and
// one grid sync per iteration, residual replaced every 100 iterations) was only 1% faster on
// 2D Poisson / waternet at n ~ 15,000, slower on the EPANET systems and at n = 9M, and its
// p.Ap = delta - beta gamma / alpha lost all digits on Exnet (a false breakdown); what halved
// the per-pass cost instead was doing all of a pass's sums in one barrier round (block_sums).
#pragma once

#include <algorithm>
#include <cmath>
#include <tuple>
#include <vector>

#include "solver/cg_result.hpp"
#include "solver/cuda/fused_cg.hpp"
#include "solver/cuda/fused_cg_device.cuh"
#include "solver/precond/device_program.hpp"
#include "solver/precond/triangular_sweep.cuh"

namespace cgs::fused {

using cuda::DeviceArray;
using cuda::stream;

// The solve's state in device memory (see the top of the file).
struct Scalars {
  cg::State state[2];  // [0] written in pass A, [1] in pass B
  double tol, atol;
  long long max_iters;
  long long stop_phase;     // the phase (see phase_*) whose decision stopped the solve; -1
  long long base;           // graph loop: the iteration of the next replay
  long long recorded;       // history entries written
  long long spmv_recorded;  // SpMV samples written
  long long pass_start_ns;  // graph loop: the global timer at the start of the last pass A
  long long cycles, ns;     // persistent loop: the leader's clock spans, for cycles -> seconds
};
static_assert(sizeof(cg::State) % sizeof(long long) == 0, "load_state copies 8-byte words");

// A state written by the leader in an earlier pass, read through L2 (another SM's L1 may hold
// an old copy) once per block and shared: thousands of warps loading the same 13 words hit one
// L2 slice and queue there (BENCHMARKS.md §8: each thread loading the state cost 15 us per
// iteration at n = 90,000). Every thread of the block must call it.
constexpr int kStateWords = int(sizeof(cg::State) / sizeof(long long));
__device__ __forceinline__ cg::State load_state(const cg::State* p) {
  __shared__ long long words[kStateWords];
  if (threadIdx.x < kStateWords)
    words[threadIdx.x] = __ldcg(reinterpret_cast<const long long*>(p) + threadIdx.x);
  __syncthreads();
  cg::State s;
  long long* to = reinterpret_cast<long long*>(&s);
  for (int i = 0; i < kStateWords; ++i) to[i] = words[i];
  __syncthreads();  // words is reused by the next call
  return s;
}

// One word written by the leader, loaded once per block (as load_state); every thread calls it.
__device__ __forceinline__ long long block_load(const long long* p) {
  __shared__ long long word;
  if (threadIdx.x == 0) word = __ldcg(p);
  __syncthreads();
  const long long value = word;
  __syncthreads();
  return value;
}

template <typename T, typename Source>
struct Work {
  Source A;
  long long n;
  const T* b;
  const T* d;                 // pointwise preconditioner's diagonal; null: none or a program
  const precond::Op<T>* ops;  // the program's operations (device memory), op_count of them
  int op_count;
  T* const* table;  // the program's slots
  const precond::Sweep* sweeps;  // its triangular solves run as sweeps (device memory)
  int sweep_count;
  // Written during a pass and read by other blocks after it: plain (coherent) loads, never the
  // read-only path, hence no __restrict__.
  T* x;
  T* r;
  T* z;
  T* p[2];  // p_k in p[k % 2]
  T* q;
  Scalars* s;
  double* partials;  // kSlots * gridDim.x
  double* history;
  long long history_capacity;
  double* spmv;  // one sample per spmv_every iterations
  long long spmv_capacity, spmv_every;
  bool time_spmv;
};

// Phases, in order: the start is 1, then per iteration k pass A, pass B and the program's
// operations: a kernel or a stretch of the persistent kernel skips itself once an earlier phase
// stopped the solve.
template <typename T, typename Source>
__device__ __forceinline__ long long phase_a(const Work<T, Source>& w, long long k) {
  return k * (w.op_count + 2);
}
template <typename T, typename Source>
__device__ __forceinline__ long long phase_op(const Work<T, Source>& w, long long k, int op) {
  return k * (w.op_count + 2) + 2 + op;
}

__device__ __forceinline__ bool stopped_before(const Scalars* s, long long phase) {
  const long long stop = block_load(&s->stop_phase);
  return stop >= 0 && stop < phase;
}

// r = b - A x; z = d .* r; partial r.r, r.z, b.b.
template <typename T, typename Source>
__device__ void start_pass(const Work<T, Source>& w) {
  double sums[3] = {0, 0, 0};
  const T* x = w.x;
  w.A.products(
      w.n, [x](index_t j) { return x[j]; },
      [&](long long i, double ax) {
        const T bi = w.b[i];
        const T ri = bi - T(ax);
        w.r[i] = ri;
        sums[0] += double(ri) * double(ri);
        if (w.d) {
          const T zi = w.d[i] * ri;
          w.z[i] = zi;
          sums[1] += double(ri) * double(zi);
        }
        sums[2] += double(bi) * double(bi);
      });
  write_partials(sums, {kRr, kRz, kBb}, w.partials);
}

// This thread's share of operation `op` of the program (grid-stride over its items).
template <typename T, typename Source>
__device__ double program_op(const Work<T, Source>& w, int op) {
  const precond::Op<T> o = w.ops[op];
  return precond::run_items(o, w.table, blockIdx.x * (long long)kBlock + threadIdx.x,
                            (long long)o.items, (long long)gridDim.x * kBlock);
}

// This thread's share of sweep `sweep` of the program (triangular_sweep.hpp): a triangular
// solve's levels in one stretch, no grid sync between them.
template <typename T, typename Source>
__device__ double program_sweep(const Work<T, Source>& w, int sweep) {
  const precond::Sweep s = w.sweeps[sweep];
  const precond::Op<T> o = w.ops[s.first_op];
  return precond::run_sweep(s, o, w.table, blockIdx.x * (long long)kBlock + threadIdx.x,
                            (long long)gridDim.x * kBlock);
}

// Pass A(k): false when the solve stopped before iteration k (x is then final). s: the state
// after pass B(k - 1) on entry (ignored for k = 1), after the decision of pass A on return.
template <typename T, typename Source>
__device__ bool pass_a(const Work<T, Source>& w, long long k, cg::State& s) {
  const Sums<3> t = grid_totals(w.partials, {kRr, kRz, kBb});
  const bool identity = !w.d && w.op_count == 0;
  const double rr = t.v[0], rz = identity ? rr : t.v[1];
  bool stop;
  if (k == 1) {
    s = cg::begin(t.v[2], load(&w.s->tol), load(&w.s->atol), load(&w.s->max_iters));
    stop = cg::started(s, rr, rz);
  } else {
    stop = cg::stepped(s, rr, rz, k - 1);
  }
  if (leader()) {
    w.s->state[0] = s;
    if (k - 1 < w.history_capacity) {
      w.history[k - 1] = rr;
      w.s->recorded = k;
    }
    if (stop) w.s->stop_phase = phase_a(w, k);
  }
  const T alpha_prev = T(s.alpha);  // alpha_{k-1}; stepped() leaves it
  const T* p_old = w.p[(k - 1) % 2];
  if (stop) {  // x_{k-1} = x_{k-2} + alpha_{k-1} p_{k-1}: the update this pass would have made
    if (k >= 2)
      for_each_row(w.n, [&](long long i) { w.x[i] = cg::next_x(w.x[i], alpha_prev, p_old[i]); });
    return false;
  }
  const bool first = k == 1;
  const T beta = first ? T(0) : T(s.beta);
  const T* z = w.z;
  auto p_at = [&](index_t j) { return first ? z[j] : cg::next_p(z[j], beta, p_old[j]); };
  T* p_new = w.p[k % 2];
  double pq[1] = {0};
  w.A.products(w.n, p_at, [&](long long i, double qi_sum) {
    const T pi = p_at(index_t(i));
    const T qi = T(qi_sum);
    p_new[i] = pi;
    w.q[i] = qi;
    if (!first) w.x[i] = cg::next_x(w.x[i], alpha_prev, p_old[i]);
    pq[0] += double(pi) * double(qi);
  });
  write_partials(pq, {kPq}, w.partials);
  return true;
}

// Pass B(k): false on a breakdown (p.Ap <= 0 or a non-finite scalar): x, r stay as they were.
// s: the state after pass A(k) on entry, after the step on return.
template <typename T, typename Source>
__device__ bool pass_b(const Work<T, Source>& w, long long k, cg::State& s) {
  const double pq = grid_totals(w.partials, {kPq}).v[0];
  const bool ok = cg::step(s, pq, k);
  if (leader()) {
    w.s->state[1] = s;
    if (!ok) w.s->stop_phase = phase_a(w, k) + 1;
  }
  if (!ok) return false;
  const T alpha = T(s.alpha);
  double sums[2] = {0, 0};
  for_each_row(w.n, [&](long long i) {
    const T ri = cg::next_r(w.r[i], alpha, w.q[i]);
    w.r[i] = ri;
    sums[0] += double(ri) * double(ri);
    if (w.d) {
      const T zi = w.d[i] * ri;
      w.z[i] = zi;
      sums[1] += double(ri) * double(zi);
    }
  });
  write_partials(sums, {kRr, kRz}, w.partials);
  return true;
}

// One SpMV sample of iteration k (clock units: SM cycles or ns, see the loops).
template <typename T, typename Source>
__device__ void record_spmv(const Work<T, Source>& w, long long k, long long ticks) {
  if (!w.time_spmv || (k - 1) % w.spmv_every != 0) return;
  const long long slot = (k - 1) / w.spmv_every;
  if (slot >= w.spmv_capacity) return;
  w.spmv[slot] = double(ticks);
  w.s->spmv_recorded = slot + 1;
}

static __global__ void reset_kernel(Scalars* s, double tol, double atol, long long max_iters) {
  Scalars init{};
  init.tol = tol;
  init.atol = atol;
  init.max_iters = max_iters;
  init.stop_phase = -1;
  init.base = 1;
  *s = init;
}

// Iterations k_first .. k_last of the persistent loop; returns at the stop.
template <typename T, typename Source>
__device__ void persistent_iterations(const Work<T, Source>& w, long long k_first,
                                      long long k_last) {
  cgrp::grid_group grid = cgrp::this_grid();
  auto program = [&](long long k) {  // z and r.z after the start (k = 0) or pass B(k)
    double rz[1] = {0};
    int sweep = 0;
    for (int op = 0; op < w.op_count;) {
      if (sweep < w.sweep_count && op == w.sweeps[sweep].first_op) {
        rz[0] += program_sweep(w, sweep);
        op = w.sweeps[sweep++].end_op;
      } else {
        rz[0] += program_op(w, op++);
      }
      if (op < w.op_count) grid.sync();
    }
    write_partials(rz, {kRz}, w.partials);
    grid.sync();
  };
  if (k_first == 1) {
    start_pass(w);
    grid.sync();
    if (w.op_count > 0) program(0);
  }
  // Every block computes the same state from the same totals, so within one launch each keeps
  // its own and never reads the leader's (loading it cost 2-3 us per iteration on small
  // systems, BENCHMARKS.md §8); a later launch (progress chunks) starts from the leader's.
  cg::State s{};
  if (k_first > 1) s = load_state(&w.s->state[1]);
  for (long long k = k_first; k <= k_last; ++k) {  // every block leaves at the same pass
    long long pass_start = 0;
    if (leader() && w.time_spmv) pass_start = clock64();
    if (!pass_a(w, k, s)) return;
    grid.sync();
    if (leader() && w.time_spmv) record_spmv(w, k, clock64() - pass_start);
    if (!pass_b(w, k, s)) return;
    grid.sync();
    if (w.op_count > 0) program(k);
  }
}

// The persistent loop: iterations k_first .. k_last in one cooperative launch. The leader also
// measures the launch on its SM clock and on the global timer, so that the SpMV samples (in
// cycles: the global timer ticks too coarsely for passes of a few microseconds) convert to
// seconds at the clock rate the kernel actually ran at.
template <typename T, typename Source>
__global__ void __launch_bounds__(kBlock, kMinBlocksPerSm)
    persistent_kernel(Work<T, Source> w, long long k_first, long long k_last) {
  if (stopped_before(w.s, phase_a(w, k_first))) return;
  long long cycles0 = 0, ns0 = 0;
  if (leader()) {
    cycles0 = clock64();
    ns0 = (long long)global_ns();
  }
  persistent_iterations(w, k_first, k_last);
  if (leader()) {
    w.s->cycles += clock64() - cycles0;
    w.s->ns += (long long)global_ns() - ns0;
  }
}

// The graph loop: one kernel per pass or operation; iteration base + j, base advanced by the
// graph itself. The SpMV sample is the global timer from the start of pass A to the start of
// pass B (its kernel starts when every block of pass A has finished).
template <typename T, typename Source>
__global__ void __launch_bounds__(kBlock, kMinBlocksPerSm) start_kernel(Work<T, Source> w) {
  start_pass(w);
}

template <typename T, typename Source>
__global__ void __launch_bounds__(kBlock, kMinBlocksPerSm)
    pass_a_kernel(Work<T, Source> w, long long j) {
  const long long k = block_load(&w.s->base) + j;
  if (stopped_before(w.s, phase_a(w, k))) return;
  if (leader() && w.time_spmv && (k - 1) % w.spmv_every == 0)
    w.s->pass_start_ns = (long long)global_ns();
  cg::State s{};
  if (k > 1) s = load_state(&w.s->state[1]);
  pass_a(w, k, s);
}

template <typename T, typename Source>
__global__ void __launch_bounds__(kBlock, kMinBlocksPerSm)
    pass_b_kernel(Work<T, Source> w, long long j) {
  const long long k = block_load(&w.s->base) + j;
  if (stopped_before(w.s, phase_a(w, k) + 1)) return;
  if (leader() && w.time_spmv && (k - 1) % w.spmv_every == 0)
    record_spmv(w, k, (long long)global_ns() - load(&w.s->pass_start_ns));
  cg::State s = load_state(&w.s->state[0]);
  pass_b(w, k, s);
}

// Operation `op` of the program after pass B(base + j) (after the start: `start` true). The
// operations that finish z add r.z to the partials (the first of them overwrites).
template <typename T, typename Source>
__global__ void __launch_bounds__(kBlock, kMinBlocksPerSm)
    program_op_kernel(Work<T, Source> w, long long j, int op, bool start, int first_dot) {
  if (!start && stopped_before(w.s, phase_op(w, block_load(&w.s->base) + j, op))) return;
  const double rz = program_op(w, op);
  if (w.ops[op].dot) {
    const double mine[1] = {rz};
    write_partials(mine, {kRz}, w.partials, op != first_dot);
  }
}

// Sweep `sweep` of the program after pass B(base + j), as program_op_kernel its first level.
template <typename T, typename Source>
__global__ void __launch_bounds__(kBlock, kMinBlocksPerSm)
    program_sweep_kernel(Work<T, Source> w, long long j, int sweep, bool start, int first_dot) {
  const int op = w.sweeps[sweep].first_op;
  if (!start && stopped_before(w.s, phase_op(w, block_load(&w.s->base) + j, op))) return;
  const double rz = program_sweep(w, sweep);
  if (w.ops[op].dot) {
    const double mine[1] = {rz};
    write_partials(mine, {kRz}, w.partials, op != first_dot);
  }
}

static __global__ void advance_kernel(Scalars* s, long long iterations) { s->base += iterations; }

// -------------------------------------------------------------------------------------------
class GraphExec {
 public:
  GraphExec() = default;
  GraphExec(const GraphExec&) = delete;
  GraphExec& operator=(const GraphExec&) = delete;
  ~GraphExec() { reset(); }
  void reset() {
    if (exec_) (void)cudaGraphExecDestroy(exec_);
    exec_ = nullptr;
  }
  template <typename Enqueue>
  void capture(Enqueue enqueue) {
    reset();
    cudaGraph_t graph = nullptr;
    CGS_CUDA_CHECK(cudaStreamBeginCapture(stream(), cudaStreamCaptureModeThreadLocal));
    enqueue();
    CGS_CUDA_CHECK(cudaStreamEndCapture(stream(), &graph));
    const cudaError_t status = cudaGraphInstantiate(&exec_, graph, 0);
    (void)cudaGraphDestroy(graph);
    CGS_CUDA_CHECK(status);
  }
  void launch() { CGS_CUDA_CHECK(cudaGraphLaunch(exec_, stream())); }
  bool empty() const { return exec_ == nullptr; }

 private:
  cudaGraphExec_t exec_ = nullptr;
};

struct Events {
  Events() {
    CGS_CUDA_CHECK(cudaEventCreate(&begin));
    CGS_CUDA_CHECK(cudaEventCreate(&end));
    for (auto& e : chunk) CGS_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  }
  ~Events() {
    (void)cudaEventDestroy(begin);
    (void)cudaEventDestroy(end);
    for (auto& e : chunk) (void)cudaEventDestroy(e);
  }
  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;
  cudaEvent_t begin = nullptr, end = nullptr, chunk[2] = {nullptr, nullptr};
};

template <typename T, typename Source>
int cooperative_blocks_per_sm() {
  int blocks = 0;
  CGS_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &blocks, reinterpret_cast<const void*>(persistent_kernel<T, Source>), kBlock, 0));
  return blocks;
}

// SpMV samples kept per solve at most (8 MB); a longer solve keeps every k-th iteration's.
constexpr long long kMaxSpmvSamples = 1 << 20;

template <typename T, typename Source>
class FusedGpuLoopImpl final : public FusedGpuLoop<T> {
 public:
  FusedGpuLoopImpl(const Source& source, std::size_t n, Preconditioner<T>& M, Loop loop, int grid)
      : source_(source),
        n_(n),
        M_(M),
        loop_(loop),
        grid_(grid),
        r_(n, "CG r"),
        z_(M.pointwise() && !M.diagonal() ? 0 : n, "CG z"),
        p0_(n, "CG p"),
        p1_(n, "CG p"),
        q_(n, "CG q"),
        partials_(std::size_t(kSlots) * grid, "CG partial sums"),
        scalars_(1, "CG scalars") {
    CGS_CUDA_CHECK(cudaMallocHost(&host_scalars_, 2 * sizeof(Scalars)));
  }
  ~FusedGpuLoopImpl() override { (void)cudaFreeHost(host_scalars_); }

  Loop loop() const override { return loop_; }

  CgResult solve(const T* b, T* x, const CgOptions& options) override {
    const long long max_iters = options.max_iters;
    const Work<T, Source> w = work(b, x, options);
    reset_kernel<<<1, 1, 0, stream()>>>(scalars_.data(), options.tol, options.atol, max_iters);
    CGS_CHECK_LAUNCH();
    // The persistent loop runs the whole solve in one launch unless the host must look in
    // between (progress); the graph loop replays check_every iterations at a time.
    const long long check_every = std::max(1, options.check_every);
    const long long chunk = loop_ == Loop::persistent && !options.progress
                                ? max_iters + 1
                                : std::min(check_every, max_iters + 1);
    if (loop_ == Loop::graph) prepare_graph(w, chunk);

    CGS_CUDA_CHECK(cudaEventRecord(events_.begin, stream()));
    if (loop_ == Loop::graph) start_graph_solve(w);
    const Scalars last = run_chunks(w, chunk, max_iters, options);
    CGS_CUDA_CHECK(cudaEventRecord(events_.end, stream()));
    CGS_CUDA_CHECK(cudaGetLastError());
    cuda::synchronize();
    return result_of_solve(last, x, options);
  }

 private:
  Work<T, Source> work(const T* b, T* x, const CgOptions& options) {
    const long long history_capacity = options.record_history ? options.max_iters + 1 : 0;
    if (std::size_t(history_capacity) > history_.size())
      history_ = DeviceArray<double>(std::size_t(history_capacity), "CG residual history");
    const long long spmv_capacity =
        options.time_spmv ? std::min<long long>(options.max_iters, kMaxSpmvSamples) : 0;
    if (std::size_t(spmv_capacity) > spmv_.size())
      spmv_ = DeviceArray<double>(std::size_t(spmv_capacity), "CG SpMV times");
    Work<T, Source> w{};
    w.A = source_;
    w.n = (long long)n_;
    w.b = b;
    w.d = M_.pointwise() ? M_.diagonal() : nullptr;
    w.x = x;
    w.r = r_.data();
    w.z = M_.pointwise() && !M_.diagonal() ? r_.data() : z_.data();
    if (!M_.pointwise()) {
      M_.bind(w.r, w.z);
      const precond::DeviceProgramView<T>& program = *M_.device_program();
      w.ops = program.ops;
      w.op_count = program.size();
      w.table = program.table;
      w.sweeps = program.sweeps;
      w.sweep_count = int(program.host_sweeps.size());
      sweeps_ = program.host_sweeps;
      op_dot_ = program.dot;
    }
    w.p[0] = p0_.data();
    w.p[1] = p1_.data();
    w.q = q_.data();
    w.s = scalars_.data();
    w.partials = partials_.data();
    w.history = history_.data();
    w.history_capacity = history_capacity;
    w.spmv = spmv_.data();
    w.spmv_capacity = spmv_capacity;
    // The graph loop's leader stores and reloads a global time per sample, which cost 5-7% of a
    // 7.8 us iteration on small systems when every iteration was timed (BENCHMARKS.md §8): it
    // times every 8th; the persistent loop's SM clock costs 2-3% timing every one.
    const long long every_for_cost = loop_ == Loop::graph ? 8 : 1;
    w.spmv_every =
        std::max(every_for_cost,
                 spmv_capacity > 0 ? (options.max_iters + spmv_capacity - 1) / spmv_capacity : 1);
    spmv_every_ = w.spmv_every;
    w.time_spmv = options.time_spmv;
    return w;
  }

  // The graph loop's start: r, z and r.z of iteration 0 (outside the replayed graph).
  void start_graph_solve(const Work<T, Source>& w) {
    start_kernel<T, Source><<<grid_, kBlock, 0, stream()>>>(w);
    CGS_CHECK_LAUNCH();
    launch_program_ops(w, 0, true);
  }

  void launch_program_ops(const Work<T, Source>& w, long long j, bool start) {
    int first_dot = -1;
    for (int op = 0; op < w.op_count; ++op)
      if (first_dot < 0 && op_dot_[op]) first_dot = op;
    std::size_t sweep = 0;
    for (int op = 0; op < w.op_count; ++op) {
      if (sweep < sweeps_.size() && op == sweeps_[sweep].first_op) {
        // grid_ is at most one resident wave: every block of the sweep runs at once.
        program_sweep_kernel<T, Source>
            <<<grid_, kBlock, 0, stream()>>>(w, j, int(sweep), start, first_dot);
        CGS_CHECK_LAUNCH();
        op = sweeps_[sweep++].end_op - 1;
        continue;
      }
      program_op_kernel<T, Source><<<grid_, kBlock, 0, stream()>>>(w, j, op, start, first_dot);
      CGS_CHECK_LAUNCH();
    }
  }

  // Launches chunks of iterations until one reports a stop. The scalars of chunk i are copied
  // back while chunk i + 1 already runs, so the device never waits for the host; a chunk
  // enqueued after the stop does nothing (stopped_before).
  Scalars run_chunks(const Work<T, Source>& w, long long chunk, long long max_iters,
                     const CgOptions& options) {
    long long k = 1;
    for (int i = 0;; ++i) {
      launch_chunk(w, k, chunk);
      k += chunk;
      Scalars* slot = &host_scalars_[i % 2];
      CGS_CUDA_CHECK(cudaMemcpyAsync(slot, scalars_.data(), sizeof(Scalars), cudaMemcpyDeviceToHost,
                                     stream()));
      CGS_CUDA_CHECK(cudaEventRecord(events_.chunk[i % 2], stream()));
      // The last chunk that can still do anything has been enqueued: wait for it.
      const bool last_possible = k > max_iters + 1;
      const int wait_for = last_possible ? i : i - 1;
      if (wait_for < 0) continue;
      CGS_CUDA_CHECK(cudaEventSynchronize(events_.chunk[wait_for % 2]));
      const Scalars s = host_scalars_[wait_for % 2];
      const cg::State& latest = s.state[0];
      if (options.progress && latest.bb > 0)
        options.progress(long(latest.iterations), std::sqrt(latest.rr / latest.bb));
      if (s.stop_phase >= 0 || last_possible) {
        cuda::synchronize();  // a chunk enqueued after it may still be running
        return s.stop_phase >= 0 ? s : host_scalars_[i % 2];
      }
    }
  }

  void launch_chunk(const Work<T, Source>& w, long long k_first, long long chunk) {
    if (loop_ == Loop::graph) {
      graph_.launch();
      return;
    }
    Work<T, Source> args_w = w;
    long long k_last = k_first + chunk - 1;
    void* args[] = {&args_w, &k_first, &k_last};
    CGS_CUDA_CHECK(
        cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(persistent_kernel<T, Source>),
                                    grid_, kBlock, args, 0, stream()));
  }

  // Captures `chunk` iterations (two kernels each, plus the program's operations) and the
  // advance of base, once per set of vectors and chunk length (repeated solves reuse it).
  void prepare_graph(const Work<T, Source>& w, long long chunk) {
    const auto key = std::make_tuple(w.b, w.x, w.history, w.spmv, w.time_spmv, chunk);
    if (!graph_.empty() && key == graph_key_) return;
    graph_.capture([&] {
      for (long long j = 0; j < chunk; ++j) {
        pass_a_kernel<T, Source><<<grid_, kBlock, 0, stream()>>>(w, j);
        pass_b_kernel<T, Source><<<grid_, kBlock, 0, stream()>>>(w, j);
        launch_program_ops(w, j, false);
      }
      advance_kernel<<<1, 1, 0, stream()>>>(w.s, chunk);
    });
    graph_key_ = key;
  }

  CgResult result_of_solve(const Scalars& s, T* x, const CgOptions& options) {
    // The stop was decided in pass A (state[0]) or, on a breakdown, in pass B (state[1]).
    const long long a_phase = (s.stop_phase / (op_count() + 2)) * (op_count() + 2);
    const cg::State& final_state = s.stop_phase == a_phase ? s.state[0] : s.state[1];
    CgResult result = result_of(final_state);
    float ms = 0;
    CGS_CUDA_CHECK(cudaEventElapsedTime(&ms, events_.begin, events_.end));
    result.solve_seconds = ms * 1e-3;
    if (final_state.zero_rhs) {  // b = 0: x = 0 is the answer
      CGS_CUDA_CHECK(cudaMemsetAsync(x, 0, n_ * sizeof(T), stream()));
      cuda::synchronize();
      result.solve_seconds = 0;
      return result;
    }
    if (options.record_history && s.recorded > 0) {
      std::vector<double> rr(std::size_t(s.recorded));
      cuda::copy_to_host(rr.data(), history_.data(), rr.size() * sizeof(double));
      set_history(result, rr);
    }
    if (options.time_spmv && s.spmv_recorded > 0) {
      std::vector<double> ticks(std::size_t(s.spmv_recorded));
      cuda::copy_to_host(ticks.data(), spmv_.data(), ticks.size() * sizeof(double));
      // persistent: SM cycles, at the rate measured over the launches; graph: nanoseconds.
      const double seconds_per_tick =
          loop_ == Loop::persistent ? (s.cycles > 0 ? double(s.ns) * 1e-9 / double(s.cycles) : 0)
                                    : 1e-9;
      for (double& t : ticks) t *= seconds_per_tick;
      result.spmv.samples = std::move(ticks);
      result.spmv.every = int(spmv_every_);
      result.spmv.what = "SpMV pass (p and x updates fused in)";
    }
    return result;
  }

  int op_count() const { return M_.pointwise() ? 0 : M_.program_size(); }

  Source source_;
  std::size_t n_;
  Preconditioner<T>& M_;
  Loop loop_;
  int grid_;
  DeviceArray<T> r_, z_, p0_, p1_, q_;
  DeviceArray<double> partials_;
  DeviceArray<Scalars> scalars_;
  DeviceArray<double> history_, spmv_;
  long long spmv_every_ = 1;         // iterations per SpMV sample in the last solve
  std::vector<int> op_dot_;          // host copy of the program's dot flags
  std::vector<precond::Sweep> sweeps_;  // host copy of the program's sweeps
  Scalars* host_scalars_ = nullptr;  // pinned, two slots (one per chunk in flight)
  Events events_;
  GraphExec graph_;
  std::tuple<const T*, T*, double*, double*, bool, long long> graph_key_{};
};

// auto (the planner, solver/plan.cpp) takes the persistent kernel while one resident wave holds
// a thread per row, the graph beyond (measured: 4-5% faster persistent at n ~ 15,000,
// 1-9% faster graph at n = 9M), and the graph wherever cooperative launch is
// refused. Here: the wave and the loop asked for.
template <typename T, typename Source>
PersistentLimits limits_for() {
  const cuda::CudaContext& context = cuda::cuda_context();
  int cooperative = 0;
  CGS_CUDA_CHECK(
      cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, context.device));
  const int per_sm = cooperative_blocks_per_sm<T, Source>();
  PersistentLimits limits;
  limits.cooperative = cooperative != 0 && per_sm > 0;
  limits.wave_rows = (long long)std::max(per_sm, 1) * context.sm_count * kBlock;
  return limits;
}

template <typename T, typename Source>
std::unique_ptr<FusedGpuLoop<T>> make_for_source(const Source& source, std::size_t n,
                                                 Preconditioner<T>& M, Loop loop) {
  const PersistentLimits limits = limits_for<T, Source>();
  if (loop == Loop::persistent && !limits.cooperative)
    throw DeviceError("the device cannot launch the persistent CG kernel cooperatively");
  // One row per thread where the rows fit in one resident wave (every block on an SM at once);
  // larger systems loop over rows with that wave, which is what a cooperative grid allows.
  const long long wave_blocks = limits.wave_rows / kBlock;
  const int grid = int(std::clamp<long long>(((long long)n + kBlock - 1) / kBlock, 1, wave_blocks));
  return std::make_unique<FusedGpuLoopImpl<T, Source>>(source, n, M, loop, grid);
}

}  // namespace cgs::fused
