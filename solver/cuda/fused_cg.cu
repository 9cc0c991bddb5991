// Fused GPU CG (fused_cg.hpp): an iteration is two row passes with one grid-wide reduction each.
//
//   pass A(k): p_k = z + beta_k p_{k-1} and q = A p_k in one sweep: the SpMV reads
//              z_j + beta_k p_{k-1,j} on the fly through the format's row function, so p_k is
//              written (to the other of two buffers) by the same pass that uses it; also
//              x += alpha_{k-1} p_{k-1} (x lags one iteration, which saves a pass) and p.q.
//   pass B(k): alpha_k = rz / pq; r -= alpha_k q; z = inv_diag .* r; r.r and r.z.
// Vector traffic is 9 n per iteration (11 n with Jacobi) besides the matrix, against 11 n and
// four reductions-or-passes for the generic loop. Between passes all blocks wait for each other:
// a grid-wide sync in the persistent kernel, a kernel boundary in the graph loop.
//
// The shared device pieces (state, reductions, stopping rule) are in fused_cg_device.cuh.
// Measured and dropped (H200, 2026-11-22): a one-sync Chronopoulos-Gear variant (one pass and
// one grid sync per iteration, residual replaced every 100 iterations) was only 1% faster on
// 2D Poisson / waternet at n ~ 15,000, slower on the EPANET systems and at n = 9M, and its
// p.Ap = delta - beta gamma / alpha lost all digits on Exnet (a false breakdown); what halved
// the per-pass cost instead was doing all of a pass's sums in one barrier round (block_sums).
//
// Semantics are those of solver/cg.hpp with CudaVectorOps, except that convergence is checked
// on the device at every iteration, so no iteration runs past it.
#include <algorithm>
#include <cmath>

#include "solver/cuda/fused_cg_device.cuh"

namespace cgs {
namespace {

using namespace fused;
using cuda::DeviceArray;
using cuda::stream;

// r = b - A x; z = inv_diag .* r; partial r.r, r.z, b.b.
template <typename T, typename View>
__device__ void start_pass(const Work<T, View>& w) {
  double sums[3] = {0, 0, 0};
  for_each_row(w.n, [&](long long i) {
    const T ax = T(row_product(w.A, i, [&](index_t j) { return w.x[j]; }));
    const T bi = w.b[i];
    const T ri = bi - ax;
    w.r[i] = ri;
    sums[0] += double(ri) * double(ri);
    if (w.inv_diag) {
      const T zi = w.inv_diag[i] * ri;
      w.z[i] = zi;
      sums[1] += double(ri) * double(zi);
    }
    sums[2] += double(bi) * double(bi);
  });
  write_partials(sums, {kRr, kRz, kBb}, w.partials);
}

// Pass A(k); false when the solve stopped before iteration k (x is then final).
template <typename T, typename View>
__device__ bool pass_a(const Work<T, View>& w, long long k) {
  const Sums<3> t = grid_totals(w.partials, {kRr, kRz, kBb});
  const double rr = t.v[0], rz = w.inv_diag ? t.v[1] : rr;
  const bool stop = check_before(w, k, rr, rz, t.v[2]);
  const T alpha_prev = k >= 2 ? T(load(&w.s->alpha)) : T(0);
  const T* p_old = w.p[(k - 1) % 2];
  if (stop) {  // x_{k-1} = x_{k-2} + alpha_{k-1} p_{k-1}: the update this pass would have made
    if (k >= 2) for_each_row(w.n, [&](long long i) { w.x[i] += alpha_prev * p_old[i]; });
    return false;
  }
  const bool first = k == 1;
  const T beta = first ? T(0) : T(rz / load(&w.s->rz_by_parity[k % 2]));
  const T* z = w.z;
  auto p_at = [&](index_t j) { return first ? z[j] : next_p(z[j], beta, p_old[j]); };
  T* p_new = w.p[k % 2];
  double pq[1] = {0};
  for_each_row(w.n, [&](long long i) {
    const T pi = p_at(index_t(i));
    const T qi = T(row_product(w.A, i, p_at));
    p_new[i] = pi;
    w.q[i] = qi;
    if (!first) w.x[i] += alpha_prev * p_old[i];
    pq[0] += double(pi) * double(qi);
  });
  write_partials(pq, {kPq}, w.partials);
  return true;
}

// Pass B(k); false on a breakdown (p.Ap <= 0 or a non-finite scalar): x, r stay as they were.
template <typename T, typename View>
__device__ bool pass_b(const Work<T, View>& w, long long k) {
  FusedScalars& s = *w.s;
  const double pq = grid_totals(w.partials, {kPq}).v[0];
  const double rz = load(&s.rz_by_parity[(k - 1) % 2]);
  const bool breaks_down = !(pq > 0) || !isfinite(pq) || !isfinite(rz);
  if (leader()) {
    s.pq = pq;
    if (breaks_down) {
      s.breakdown_at = k;
      s.iterations = k;
      s.stop_phase = 2 * k + 1;
    } else {
      s.alpha = rz / pq;
    }
  }
  if (breaks_down) return false;
  const T alpha = T(rz / pq);
  double sums[2] = {0, 0};
  for_each_row(w.n, [&](long long i) {
    const T ri = w.r[i] - alpha * w.q[i];
    w.r[i] = ri;
    sums[0] += double(ri) * double(ri);
    if (w.inv_diag) {
      const T zi = w.inv_diag[i] * ri;
      w.z[i] = zi;
      sums[1] += double(ri) * double(zi);
    }
  });
  write_partials(sums, {kRr, kRz}, w.partials);
  return true;
}

__global__ void reset_kernel(FusedScalars* s, double tol, double atol, long long max_iters) {
  FusedScalars init{};
  init.tol = tol;
  init.atol = atol;
  init.max_iters = max_iters;
  init.breakdown_at = init.converged_at = init.stop_phase = -1;
  init.base = 1;
  *s = init;
}

// The persistent loop: iterations k_first .. k_last in one cooperative launch.
template <typename T, typename View>
__global__ void __launch_bounds__(kBlock, kMinBlocksPerSm)
    persistent_kernel(Work<T, View> w, long long k_first, long long k_last) {
  if (stopped_before(w.s, 2 * k_first)) return;
  cgrp::grid_group grid = cgrp::this_grid();
  if (k_first == 1) {
    start_pass(w);
    grid.sync();
  }
  for (long long k = k_first; k <= k_last; ++k) {  // every block leaves at the same pass
    if (!pass_a(w, k)) return;
    grid.sync();
    if (!pass_b(w, k)) return;
    grid.sync();
  }
}

// The graph loop: one kernel per pass; iteration base + j, base advanced by the graph itself.
template <typename T, typename View>
__global__ void __launch_bounds__(kBlock, kMinBlocksPerSm) start_kernel(Work<T, View> w) {
  start_pass(w);
}

template <typename T, typename View>
__global__ void __launch_bounds__(kBlock, kMinBlocksPerSm)
    pass_a_kernel(Work<T, View> w, long long j) {
  const long long k = load(&w.s->base) + j;
  if (!stopped_before(w.s, 2 * k)) pass_a(w, k);
}

template <typename T, typename View>
__global__ void __launch_bounds__(kBlock, kMinBlocksPerSm)
    pass_b_kernel(Work<T, View> w, long long j) {
  const long long k = load(&w.s->base) + j;
  if (!stopped_before(w.s, 2 * k + 1)) pass_b(w, k);
}

__global__ void advance_kernel(FusedScalars* s, long long iterations) { s->base += iterations; }

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

int cooperative_blocks_per_sm(const void* kernel) {
  int blocks = 0;
  CGS_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, kBlock, 0));
  return blocks;
}

template <typename T, typename View>
class FusedCgImpl final : public FusedCg<T> {
 public:
  FusedCgImpl(const View& view, std::size_t n, GpuLoop loop, int grid)
      : view_(view),
        n_(n),
        loop_(loop),
        grid_(grid),
        r_(n, "CG r"),
        z_(n, "CG z"),
        p0_(n, "CG p"),
        p1_(n, "CG p"),
        q_(n, "CG q"),
        partials_(std::size_t(kSlots) * grid, "CG partial sums"),
        scalars_(1, "CG scalars") {
    CGS_CUDA_CHECK(cudaMallocHost(&host_scalars_, 2 * sizeof(FusedScalars)));
  }
  ~FusedCgImpl() override { (void)cudaFreeHost(host_scalars_); }

  GpuLoop loop() const override { return loop_; }

  CgResult solve(const T* inv_diag, const T* b, T* x, const CgOptions& options) override {
    const long long max_iters = options.max_iters > 0 ? options.max_iters : 10 * (long long)n_;
    const Work<T, View> w = work(inv_diag, b, x, options.record_history ? max_iters + 1 : 0);
    reset_kernel<<<1, 1, 0, stream()>>>(scalars_.data(), options.tol, options.atol, max_iters);
    CGS_CHECK_LAUNCH();
    // The persistent loop runs the whole solve in one launch unless the host must look in
    // between (progress); the graph loop replays check_every iterations at a time.
    const long long check_every = std::max(1, options.check_every);
    const long long chunk = loop_ == GpuLoop::persistent && !options.progress
                                ? max_iters + 1
                                : std::min(check_every, max_iters + 1);
    if (loop_ == GpuLoop::graph) prepare_graph(w, chunk);

    CGS_CUDA_CHECK(cudaEventRecord(events_.begin, stream()));
    if (loop_ == GpuLoop::graph) {
      start_kernel<T, View><<<grid_, kBlock, 0, stream()>>>(w);
      CGS_CHECK_LAUNCH();
    }
    const FusedScalars last = run_chunks(w, chunk, max_iters, options);
    CGS_CUDA_CHECK(cudaEventRecord(events_.end, stream()));
    CGS_CUDA_CHECK(cudaGetLastError());
    cuda::synchronize();
    return result_of(last, x, options);
  }

 private:
  Work<T, View> work(const T* inv_diag, const T* b, T* x, long long history_capacity) {
    if (std::size_t(history_capacity) > history_.size()) {
      history_ = DeviceArray<double>(std::size_t(history_capacity), "CG residual history");
    }
    Work<T, View> w{};
    w.A = view_;
    w.n = (long long)n_;
    w.b = b;
    w.inv_diag = inv_diag;
    w.x = x;
    w.r = r_.data();
    w.z = inv_diag ? z_.data() : r_.data();
    w.p[0] = p0_.data();
    w.p[1] = p1_.data();
    w.q = q_.data();
    w.s = scalars_.data();
    w.partials = partials_.data();
    w.history = history_.data();
    w.history_capacity = history_capacity;
    return w;
  }

  // Launches chunks of iterations until one reports a stop. The scalars of chunk i are copied
  // back while chunk i + 1 already runs, so the device never waits for the host; a chunk
  // enqueued after the stop does nothing (stopped_before).
  FusedScalars run_chunks(const Work<T, View>& w, long long chunk, long long max_iters,
                          const CgOptions& options) {
    long long k = 1;
    for (int i = 0;; ++i) {
      launch_chunk(w, k, chunk);
      k += chunk;
      FusedScalars* slot = &host_scalars_[i % 2];
      CGS_CUDA_CHECK(cudaMemcpyAsync(slot, scalars_.data(), sizeof(FusedScalars),
                                     cudaMemcpyDeviceToHost, stream()));
      CGS_CUDA_CHECK(cudaEventRecord(events_.chunk[i % 2], stream()));
      // The last chunk that can still do anything has been enqueued: wait for it.
      const bool last_possible = k > max_iters + 1;
      const int wait_for = last_possible ? i : i - 1;
      if (wait_for < 0) continue;
      CGS_CUDA_CHECK(cudaEventSynchronize(events_.chunk[wait_for % 2]));
      const FusedScalars s = host_scalars_[wait_for % 2];
      if (options.progress && s.bb > 0) options.progress(s.iterations, std::sqrt(s.rr / s.bb));
      if (s.stop_phase >= 0 || last_possible) {
        cuda::synchronize();  // a chunk enqueued after it may still be running
        return s.stop_phase >= 0 ? s : host_scalars_[i % 2];
      }
    }
  }

  void launch_chunk(const Work<T, View>& w, long long k_first, long long chunk) {
    if (loop_ == GpuLoop::graph) {
      graph_.launch();
      return;
    }
    Work<T, View> args_w = w;
    long long k_last = k_first + chunk - 1;
    void* args[] = {&args_w, &k_first, &k_last};
    CGS_CUDA_CHECK(
        cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(persistent_kernel<T, View>),
                                    grid_, kBlock, args, 0, stream()));
  }

  // Captures `chunk` iterations (two kernels each) and the advance of base, once per set of
  // vectors and chunk length (a benchmark's repeated solves reuse it).
  void prepare_graph(const Work<T, View>& w, long long chunk) {
    const auto key = std::make_tuple(w.b, w.inv_diag, w.x, w.history, chunk);
    if (!graph_.empty() && key == graph_key_) return;
    graph_.capture([&] {
      for (long long j = 0; j < chunk; ++j) {
        pass_a_kernel<T, View><<<grid_, kBlock, 0, stream()>>>(w, j);
        pass_b_kernel<T, View><<<grid_, kBlock, 0, stream()>>>(w, j);
      }
      advance_kernel<<<1, 1, 0, stream()>>>(w.s, chunk);
    });
    graph_key_ = key;
  }

  CgResult result_of(const FusedScalars& s, T* x, const CgOptions& options) {
    CgResult result;
    float ms = 0;
    CGS_CUDA_CHECK(cudaEventElapsedTime(&ms, events_.begin, events_.end));
    result.solve_seconds = ms * 1e-3;
    result.rhs_norm = std::sqrt(s.bb);
    if (s.bb == 0) {  // b = 0: x = 0 is the answer
      CGS_CUDA_CHECK(cudaMemsetAsync(x, 0, n_ * sizeof(T), stream()));
      cuda::synchronize();
      result.status = CgStatus::zero_rhs;
      result.converged_at = 0;
      result.solve_seconds = 0;
      return result;
    }
    result.iterations = long(s.iterations);
    result.converged_at = long(s.converged_at);
    result.residual_norm = std::sqrt(s.rr);
    if (options.record_history && s.recorded > 0) {
      std::vector<double> rr(std::size_t(s.recorded));
      cuda::copy_to_host(rr.data(), history_.data(), rr.size() * sizeof(double));
      for (double v : rr) result.residual_history.push_back(std::sqrt(v));
    }
    if (s.breakdown_at >= 0) {
      result.status =
          std::isfinite(s.pq) && std::isfinite(s.rz) ? CgStatus::breakdown : CgStatus::non_finite;
      result.iterations = long(s.breakdown_at);
    } else if (s.converged_at >= 0) {
      result.status = CgStatus::converged;
    } else {
      result.status = CgStatus::max_iterations;
    }
    return result;
  }

  View view_;
  std::size_t n_;
  GpuLoop loop_;
  int grid_;
  DeviceArray<T> r_, z_, p0_, p1_, q_;
  DeviceArray<double> partials_;
  DeviceArray<FusedScalars> scalars_;
  DeviceArray<double> history_;
  FusedScalars* host_scalars_ = nullptr;  // pinned, two slots (one per chunk in flight)
  Events events_;
  GraphExec graph_;
  std::tuple<const T*, const T*, T*, double*, long long> graph_key_{};
};

// auto, from cgbench on an H200 (2026-11-21, 200 iterations, csr scalar / ell / hll thread):
// at n ~ 15,000 the persistent kernel is 4-5% faster than the graph (7.6 against 8.0 us per
// iteration: a grid sync costs less than a kernel launch); at n = 9M the graph is 1-9% faster
// (362 against 395 us with ELL), its passes streaming better as separate kernels. So: the
// persistent kernel while one resident wave holds a thread per row, the graph beyond, and the
// graph wherever cooperative launch is refused.
template <typename T, typename View>
std::unique_ptr<FusedCg<T>> make_for_view(const View& view, std::size_t n, GpuLoop loop,
                                          std::string* why) {
  const cuda::CudaContext& context = cuda::cuda_context();
  int cooperative = 0;
  CGS_CUDA_CHECK(
      cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, context.device));
  const int per_sm =
      cooperative_blocks_per_sm(reinterpret_cast<const void*>(persistent_kernel<T, View>));
  const bool can_persist = cooperative != 0 && per_sm > 0;
  // One row per thread where the rows fit in one resident wave (every block on an SM at once);
  // larger systems loop over rows with that wave, which is what a cooperative grid allows.
  const long long wave = (long long)std::max(per_sm, 1) * context.sm_count;
  if (loop == GpuLoop::automatic) {
    const bool fits_one_wave = (long long)n <= wave * kBlock;
    loop = can_persist && fits_one_wave ? GpuLoop::persistent : GpuLoop::graph;
  }
  if (loop == GpuLoop::persistent && !can_persist) {
    if (why) *why = "the device cannot launch the persistent kernel cooperatively";
    return nullptr;
  }
  const int grid = int(std::clamp<long long>(((long long)n + kBlock - 1) / kBlock, 1, wave));
  return std::make_unique<FusedCgImpl<T, View>>(view, n, loop, grid);
}

}  // namespace

template <typename T>
std::unique_ptr<FusedCg<T>> make_fused_cg(SpmvBackend<T>& A, GpuLoop loop, std::string* why) {
  if (loop == GpuLoop::generic) {
    if (why) *why = "the generic loop was asked for";
    return nullptr;
  }
  auto* source = dynamic_cast<cuda::FusedSpmvSource<T>*>(&A);
  cuda::MatrixView<T> view;
  if (A.device() != Device::gpu || !source || !source->device_view(view)) {
    if (why) *why = A.name() + " has no row function for a fused loop";
    return nullptr;
  }
  if (A.rows() == 0) {
    if (why) *why = "empty system";
    return nullptr;
  }
  const std::size_t n = std::size_t(A.rows());
  switch (view.format) {
    case Format::csr: return make_for_view<T>(view.csr, n, loop, why);
    case Format::ell: return make_for_view<T>(view.ell, n, loop, why);
    case Format::hll: return make_for_view<T>(view.hll, n, loop, why);
    case Format::coo: break;
  }
  if (why) *why = "no fused loop for this format";
  return nullptr;
}

template std::unique_ptr<FusedCg<float>> make_fused_cg(SpmvBackend<float>&, GpuLoop, std::string*);
template std::unique_ptr<FusedCg<double>> make_fused_cg(SpmvBackend<double>&, GpuLoop,
                                                        std::string*);

}  // namespace cgs
