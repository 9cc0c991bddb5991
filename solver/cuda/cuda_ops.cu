// CUDA VectorOps: fused CG vector kernels whose scalars never leave the device.
//
// Every reduction kernel also finishes the step it belongs to: each block reduces its part with
// CUB's BlockReduce (in double, also for float vectors) and writes one partial; the last block to
// finish (a ticket counter) sums the partials in block order and updates the scalars in device
// memory (alpha, beta, convergence and breakdown are decided there). Nothing is accumulated
// with floating-point atomics, so results are bit-for-bit repeatable for a given n and device.
// The next kernel reads the scalars it needs at its start; the host reads them only in
// read_state().
//
// The decisions are solver/cg_step.hpp's, taken by the last block of each reduction. Once the
// state says the solve stopped, every kernel leaves the vectors alone: iterations that run after
// convergence (before the host notices, check_every > 1) change nothing.
#include <algorithm>
#include <cmath>
#include <cub/block/block_reduce.cuh>

#include "solver/cg_step.hpp"
#include "solver/cuda/cuda_ops.hpp"
#include "spmv/cuda/cuda_common.cuh"

namespace cgs {
namespace {

using cuda::DeviceArray;
using cuda::stream;

constexpr int kBlock = 256;           // threads per block of every vector kernel
constexpr int kBlocksPerSm = 8;       // one full wave of 256-thread blocks on Hopper
constexpr int kMaxReduced = 2;        // rr and rz in one pass
constexpr int kEventChunk = 256;      // SpMV event pairs created at a time
constexpr int kMaxEventPairs = 4096;  // then timed products are read back and the pool reused

// What the device keeps of a solve: the cg::State (solver/cg_step.hpp) and, between a residual
// update and the preconditioner's r.z, the new r.r.
struct DeviceScalars {
  cg::State s;
  double rr_pending;
  long long recorded;  // history entries written (iterations 0 .. recorded - 1)
};

struct ReduceWork {
  DeviceScalars* scalars;
  double* partials;  // kMaxReduced * grid
  unsigned* ticket;
  double* history;
  long long history_capacity;
};

// r.r (kept) and r.z known: the decision of iteration k (cg::started or cg::stepped) and its
// history entry. One thread.
__device__ void finish_rz(DeviceScalars& d, const ReduceWork& work, double rz, long long k) {
  if (k == 0)
    cg::started(d.s, d.rr_pending, rz);
  else
    cg::stepped(d.s, d.rr_pending, rz, k);
  if (k < work.history_capacity) {
    work.history[k] = d.rr_pending;
    d.recorded = k + 1;
  }
}

// Reduces `local` over the grid; the last block calls finish(totals) with one thread.
template <int N, typename Finish>
__device__ void grid_reduce(const double (&local)[N], const ReduceWork& work, Finish finish) {
  using BlockReduce = cub::BlockReduce<double, kBlock>;
  __shared__ typename BlockReduce::TempStorage temp;
  __shared__ bool last_block;
  for (int q = 0; q < N; ++q) {
    const double block_sum = BlockReduce(temp).Sum(local[q]);
    if (threadIdx.x == 0) work.partials[q * gridDim.x + blockIdx.x] = block_sum;
    __syncthreads();  // temp is reused
  }
  if (threadIdx.x == 0) {
    __threadfence();  // partials visible device-wide before the ticket is taken
    last_block = atomicAdd(work.ticket, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last_block) return;
  __threadfence();
  double totals[N];
  for (int q = 0; q < N; ++q) {
    double sum = 0;
    for (unsigned b = threadIdx.x; b < gridDim.x; b += kBlock) {
      sum += __ldcg(&work.partials[q * gridDim.x + b]);  // from L2: other blocks wrote them
    }
    totals[q] = BlockReduce(temp).Sum(sum);
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    finish(totals);
    *work.ticket = 0;  // ready for the next reduction (the next kernel is stream-ordered)
  }
}

template <typename T>
__global__ void begin_kernel(long long n, const T* __restrict__ b, double tol, double atol,
                             long long max_iters, ReduceWork work) {
  double bb[1] = {0};
  for (long long i = blockIdx.x * (long long)kBlock + threadIdx.x; i < n;
       i += (long long)gridDim.x * kBlock) {
    bb[0] += double(b[i]) * double(b[i]);
  }
  grid_reduce(bb, work, [&](const double* total) {
    work.scalars->s = cg::begin(total[0], tol, atol, max_iters);
    work.scalars->recorded = 0;
  });
}

template <typename T>
__global__ void residual_kernel(long long n, const T* __restrict__ b, const T* __restrict__ Ax,
                                T* __restrict__ r, bool pointwise, const T* __restrict__ d,
                                T* __restrict__ z, ReduceWork work) {
  double sums[2] = {0, 0};  // r.r, r.z
  for (long long i = blockIdx.x * (long long)kBlock + threadIdx.x; i < n;
       i += (long long)gridDim.x * kBlock) {
    const T ri = b[i] - Ax[i];
    r[i] = ri;
    sums[0] += double(ri) * double(ri);
    if (d) {
      const T zi = d[i] * ri;
      z[i] = zi;
      sums[1] += double(ri) * double(zi);
    }
  }
  grid_reduce(sums, work, [&](const double* total) {
    DeviceScalars& ds = *work.scalars;
    ds.rr_pending = total[0];
    if (pointwise) finish_rz(ds, work, d ? total[1] : total[0], 0);
  });
}

template <typename T>
__global__ void dot_rz_kernel(long long n, const T* __restrict__ r, const T* __restrict__ z,
                              long long k, ReduceWork work) {
  if (k > 0 && work.scalars->s.stopped) return;  // uniform: written by an earlier kernel
  double rz[1] = {0};
  for (long long i = blockIdx.x * (long long)kBlock + threadIdx.x; i < n;
       i += (long long)gridDim.x * kBlock) {
    rz[0] += double(r[i]) * double(z[i]);
  }
  grid_reduce(rz, work, [&](const double* total) { finish_rz(*work.scalars, work, total[0], k); });
}

template <typename T>
__global__ void dot_pq_kernel(long long n, const T* __restrict__ p, const T* __restrict__ q,
                              long long k, ReduceWork work) {
  if (work.scalars->s.stopped) return;  // uniform: nothing writes the state in this kernel
  double pq[1] = {0};
  for (long long i = blockIdx.x * (long long)kBlock + threadIdx.x; i < n;
       i += (long long)gridDim.x * kBlock) {
    pq[0] += double(p[i]) * double(q[i]);
  }
  grid_reduce(pq, work, [&](const double* total) { cg::step(work.scalars->s, total[0], k); });
}

template <typename T>
__global__ void update_xr_kernel(long long n, const T* __restrict__ p, const T* __restrict__ q,
                                 T* __restrict__ x, T* __restrict__ r, bool pointwise,
                                 const T* __restrict__ d, T* __restrict__ z, long long k,
                                 ReduceWork work) {
  // Read before any block can finish: the last block writes the state only after every block
  // has taken its ticket, and so after every block has read it here.
  const cg::State s = work.scalars->s;
  if (s.stopped) return;  // converged earlier, or step() found a breakdown
  const T alpha = T(s.alpha);
  double sums[2] = {0, 0};  // r.r, r.z
  for (long long i = blockIdx.x * (long long)kBlock + threadIdx.x; i < n;
       i += (long long)gridDim.x * kBlock) {
    x[i] = cg::next_x(x[i], alpha, p[i]);
    const T ri = cg::next_r(r[i], alpha, q[i]);
    r[i] = ri;
    sums[0] += double(ri) * double(ri);
    if (d) {
      const T zi = d[i] * ri;
      z[i] = zi;
      sums[1] += double(ri) * double(zi);
    }
  }
  grid_reduce(sums, work, [&](const double* total) {
    DeviceScalars& ds = *work.scalars;
    ds.rr_pending = total[0];
    if (pointwise) finish_rz(ds, work, d ? total[1] : total[0], k);
  });
}

template <typename T>
__global__ void update_p_kernel(long long n, const T* __restrict__ z, T* __restrict__ p,
                                const DeviceScalars* __restrict__ scalars) {
  const cg::State s = scalars->s;
  if (s.stopped) return;
  const T beta = T(s.beta);
  for (long long i = blockIdx.x * (long long)kBlock + threadIdx.x; i < n;
       i += (long long)gridDim.x * kBlock) {
    p[i] = cg::next_p(z[i], beta, p[i]);
  }
}

class EventPair {
 public:
  EventPair() {
    CGS_CUDA_CHECK(cudaEventCreate(&begin));
    CGS_CUDA_CHECK(cudaEventCreate(&end));
  }
  ~EventPair() {
    (void)cudaEventDestroy(begin);
    (void)cudaEventDestroy(end);
  }
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
  double seconds() const {
    float ms = 0;
    CGS_CUDA_CHECK(cudaEventElapsedTime(&ms, begin, end));
    return ms * 1e-3;
  }
  cudaEvent_t begin = nullptr, end = nullptr;
};

template <typename T>
class CudaVectorOps final : public VectorOps<T> {
 public:
  explicit CudaVectorOps(std::size_t n)
      : n_(n),
        grid_(std::clamp<long long>((long long)(n + kBlock - 1) / kBlock, 1,
                                    (long long)cuda::cuda_context().sm_count * kBlocksPerSm)),
        scalars_(1, "CG scalars"),
        partials_(std::size_t(kMaxReduced) * grid_, "CG reduction partials"),
        ticket_(1, "CG reduction ticket") {
    CGS_CUDA_CHECK(cudaMemsetAsync(ticket_.data(), 0, ticket_.bytes(), stream()));
    CGS_CUDA_CHECK(cudaMallocHost(&host_scalars_, sizeof(DeviceScalars)));
    CGS_CUDA_CHECK(cudaMemsetAsync(scalars_.data(), 0, sizeof(DeviceScalars), stream()));
    grow_event_pool();
    warm_up();
    cuda::synchronize();
  }

  ~CudaVectorOps() override { (void)cudaFreeHost(host_scalars_); }

  Device device() const override { return Device::gpu; }
  std::size_t size() const override { return n_; }

  T* allocate(std::size_t n) override {
    return static_cast<T*>(cuda::device_allocate(n * sizeof(T), "a CG vector"));
  }
  void release(T* p) override { cuda::device_free(p); }
  void upload(const T* host, T* device_dst, std::size_t n) override {
    cuda::copy_to_device(device_dst, host, n * sizeof(T));
  }
  void download(const T* device_src, T* host, std::size_t n) override {
    cuda::copy_to_host(host, device_src, n * sizeof(T));
  }
  void copy(const T* src, T* dst) override { cuda::copy_on_device(dst, src, n_ * sizeof(T)); }

  void begin(const T* b, double tol, double atol, long long max_iters,
             std::size_t history_capacity) override {
    if (history_capacity > history_.size()) {
      history_ = DeviceArray<double>(history_capacity, "CG residual history");
    }
    history_capacity_ = history_capacity;
    spmv_times_.clear();
    pending_events_ = 0;
    begin_kernel<T><<<grid_, kBlock, 0, stream()>>>(n(), b, tol, atol, max_iters, work());
    CGS_CHECK_LAUNCH();
  }

  void residual(const T* b, const T* Ax, T* r, bool pointwise, const T* d, T* z) override {
    residual_kernel<T><<<grid_, kBlock, 0, stream()>>>(n(), b, Ax, r, pointwise, d, z, work());
    CGS_CHECK_LAUNCH();
  }

  void dot_rz(const T* r, const T* z, long k) override {
    dot_rz_kernel<T><<<grid_, kBlock, 0, stream()>>>(n(), r, z, k, work());
    CGS_CHECK_LAUNCH();
  }

  void dot_pq(const T* p, const T* q, long k) override {
    dot_pq_kernel<T><<<grid_, kBlock, 0, stream()>>>(n(), p, q, k, work());
    CGS_CHECK_LAUNCH();
  }

  void update_xr(const T* p, const T* q, T* x, T* r, bool pointwise, const T* d, T* z,
                 long k) override {
    update_xr_kernel<T>
        <<<grid_, kBlock, 0, stream()>>>(n(), p, q, x, r, pointwise, d, z, k, work());
    CGS_CHECK_LAUNCH();
  }

  void update_p(const T* z, T* p) override {
    update_p_kernel<T><<<grid_, kBlock, 0, stream()>>>(n(), z, p, scalars_.data());
    CGS_CHECK_LAUNCH();
  }

  cg::State read_state() override {
    CGS_CUDA_CHECK(cudaMemcpyAsync(host_scalars_, scalars_.data(), sizeof(DeviceScalars),
                                   cudaMemcpyDeviceToHost, stream()));
    cuda::synchronize();
    return host_scalars_->s;
  }

  // r.r of iterations 0 .. the last one recorded (stopped iterations record nothing).
  std::vector<double> history() override {
    read_state();
    std::vector<double> out(std::size_t(host_scalars_->recorded));
    cuda::copy_to_host(out.data(), history_.data(), out.size() * sizeof(double));
    return out;
  }

  void mark_solve_begin() override { CGS_CUDA_CHECK(cudaEventRecord(solve_.begin, stream())); }
  void mark_solve_end() override { CGS_CUDA_CHECK(cudaEventRecord(solve_.end, stream())); }
  double solve_seconds() override {
    CGS_CUDA_CHECK(cudaEventSynchronize(solve_.end));
    return solve_.seconds();
  }

  int spmv_sample_every() const override { return 16; }  // 2 events: ~1% of an iteration
  void mark_spmv_begin() override {
    if (pending_events_ == spmv_events_.size()) {
      if (spmv_events_.size() < std::size_t(kMaxEventPairs)) {
        grow_event_pool();  // host-side only: the device queue is not disturbed
      } else {
        harvest_spmv_times();  // waits for the last timed product, once per 4096
      }
    }
    CGS_CUDA_CHECK(cudaEventRecord(spmv_events_[pending_events_]->begin, stream()));
  }
  void mark_spmv_end() override {
    CGS_CUDA_CHECK(cudaEventRecord(spmv_events_[pending_events_]->end, stream()));
    ++pending_events_;
  }
  std::vector<double> spmv_seconds() override {
    harvest_spmv_times();
    return spmv_times_;
  }
  void clear_spmv_seconds() override {
    harvest_spmv_times();  // waits for the products in flight, then forgets them
    spmv_times_.clear();
  }

  void check_errors() override {
    CGS_CUDA_CHECK(cudaGetLastError());
    cuda::synchronize();  // surfaces an error of any kernel still in flight
  }

 private:
  long long n() const { return (long long)n_; }
  ReduceWork work() {
    return ReduceWork{scalars_.data(), partials_.data(), ticket_.data(), history_.data(),
                      (long long)history_capacity_};
  }

  // Launches every kernel once on empty vectors: CUDA loads kernels lazily at their first
  // launch, which would otherwise land inside the timed solve. The state they leave is
  // overwritten by begin().
  void warm_up() {
    const ReduceWork w = work();
    begin_kernel<T><<<1, kBlock, 0, stream()>>>(0, nullptr, 0.0, 0.0, 0, w);
    residual_kernel<T>
        <<<1, kBlock, 0, stream()>>>(0, nullptr, nullptr, nullptr, false, nullptr, nullptr, w);
    dot_rz_kernel<T><<<1, kBlock, 0, stream()>>>(0, nullptr, nullptr, 0, w);
    dot_pq_kernel<T><<<1, kBlock, 0, stream()>>>(0, nullptr, nullptr, 0, w);
    update_xr_kernel<T><<<1, kBlock, 0, stream()>>>(0, nullptr, nullptr, nullptr, nullptr, false,
                                                    nullptr, nullptr, 0, w);
    update_p_kernel<T><<<1, kBlock, 0, stream()>>>(0, nullptr, nullptr, scalars_.data());
    CGS_CUDA_CHECK(cudaGetLastError());
  }

  void grow_event_pool() {
    for (int i = 0; i < kEventChunk; ++i) spmv_events_.push_back(std::make_unique<EventPair>());
  }

  void harvest_spmv_times() {
    if (pending_events_ == 0) return;
    CGS_CUDA_CHECK(cudaEventSynchronize(spmv_events_[pending_events_ - 1]->end));
    for (std::size_t i = 0; i < pending_events_; ++i) {
      spmv_times_.push_back(spmv_events_[i]->seconds());
    }
    pending_events_ = 0;
  }

  std::size_t n_;
  int grid_;
  DeviceArray<DeviceScalars> scalars_;
  DeviceArray<double> partials_;
  DeviceArray<unsigned> ticket_;
  DeviceArray<double> history_;
  std::size_t history_capacity_ = 0;
  DeviceScalars* host_scalars_ = nullptr;  // pinned, for read_state()
  EventPair solve_;
  std::vector<std::unique_ptr<EventPair>> spmv_events_;
  std::size_t pending_events_ = 0;
  std::vector<double> spmv_times_;
};

}  // namespace

template <typename T>
std::unique_ptr<VectorOps<T>> make_cuda_vector_ops(std::size_t n) {
  return std::make_unique<CudaVectorOps<T>>(n);
}

template std::unique_ptr<VectorOps<float>> make_cuda_vector_ops(std::size_t);
template std::unique_ptr<VectorOps<double>> make_cuda_vector_ops(std::size_t);

}  // namespace cgs
