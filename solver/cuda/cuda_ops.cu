// CUDA VectorOps: fused CG vector kernels whose scalars never leave the device.
//
// Every reduction kernel also finishes the step it belongs to: each block reduces its part with
// CUB's BlockReduce (in double, also for float vectors) and writes one partial; the last block to
// finish (a ticket counter) sums the partials in block order and updates the scalars in device
// memory (alpha, beta, convergence and breakdown are decided there). Nothing is accumulated
// with floating-point atomics, so results are bit-for-bit repeatable for a given n and device.
// The next kernel reads the scalars it needs at its start; the host reads them only in
// read_scalars().
//
// Semantics follow solver/cpu_ops.cpp, plus one rule for check_every > 1: iterations that run
// after convergence (before the host notices) never record a breakdown; if one would break down
// (e.g. r became exactly 0) the vectors are simply frozen and the converged result stands.
#include <algorithm>
#include <cmath>
#include <cub/block/block_reduce.cuh>

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

// The CG scalars as the device keeps them (CgScalars plus what the kernels need internally).
struct DeviceScalars {
  double rr, rz, rz_old, pq, bb;
  double threshold;        // on r.r
  long long breakdown_at;  // -1: none
  long long converged_at;  // -1: not yet
  long long recorded;      // history entries written (iterations 0 .. recorded - 1)
  int halted;              // frozen after convergence without a breakdown (see top)
};

struct ReduceWork {
  DeviceScalars* scalars;
  double* partials;  // kMaxReduced * grid
  unsigned* ticket;
  double* history;
  long long history_capacity;
};

__device__ __forceinline__ bool stopped(const DeviceScalars& s) {
  return s.breakdown_at >= 0 || s.halted;
}

// Records r.r of `iteration` and the first iteration that meets the threshold (cpu_ops record()).
__device__ void record(DeviceScalars& s, const ReduceWork& work, long long iteration) {
  if (iteration < work.history_capacity) {
    work.history[iteration] = s.rr;
    s.recorded = iteration + 1;
  }
  if (s.converged_at < 0 && s.rr <= s.threshold) s.converged_at = iteration;
}

// A breakdown at `iteration`, unless the tolerance was already met: then the extra iterations
// just stop (see the top of this file).
__device__ void record_breakdown(DeviceScalars& s, long long iteration) {
  if (s.converged_at >= 0) {
    s.halted = 1;
  } else if (s.breakdown_at < 0) {
    s.breakdown_at = iteration;
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

__global__ void reset_kernel(DeviceScalars* s, double threshold) {
  *s = DeviceScalars{0, 0, 0, 0, 0, threshold, -1, -1, 0, 0};
}

template <typename T>
__global__ void norm_b_kernel(long long n, const T* __restrict__ b, ReduceWork work) {
  double bb[1] = {0};
  for (long long i = blockIdx.x * (long long)kBlock + threadIdx.x; i < n;
       i += (long long)gridDim.x * kBlock) {
    bb[0] += double(b[i]) * double(b[i]);
  }
  grid_reduce(bb, work, [&](const double* total) { work.scalars->bb = total[0]; });
}

template <typename T>
__global__ void start_kernel(long long n, const T* __restrict__ b, const T* __restrict__ Ax,
                             const T* __restrict__ inv_diag, T* __restrict__ r, T* __restrict__ z,
                             ReduceWork work) {
  double sums[2] = {0, 0};  // r.r, r.z
  for (long long i = blockIdx.x * (long long)kBlock + threadIdx.x; i < n;
       i += (long long)gridDim.x * kBlock) {
    const T ri = b[i] - Ax[i];
    r[i] = ri;
    sums[0] += double(ri) * double(ri);
    if (inv_diag) {
      const T zi = inv_diag[i] * ri;
      z[i] = zi;
      sums[1] += double(ri) * double(zi);
    }
  }
  const bool preconditioned = inv_diag != nullptr;
  grid_reduce(sums, work, [&](const double* total) {
    DeviceScalars& s = *work.scalars;
    s.rr = total[0];
    s.rz = preconditioned ? total[1] : total[0];
    record(s, work, 0);
  });
}

template <typename T>
__global__ void dot_pq_kernel(long long n, const T* __restrict__ p, const T* __restrict__ q,
                              ReduceWork work) {
  if (stopped(*work.scalars)) return;  // uniform: nothing writes the scalars in this kernel
  double pq[1] = {0};
  for (long long i = blockIdx.x * (long long)kBlock + threadIdx.x; i < n;
       i += (long long)gridDim.x * kBlock) {
    pq[0] += double(p[i]) * double(q[i]);
  }
  grid_reduce(pq, work, [&](const double* total) { work.scalars->pq = total[0]; });
}

template <typename T>
__global__ void update_xrz_kernel(long long n, const T* __restrict__ p, const T* __restrict__ q,
                                  const T* __restrict__ inv_diag, T* __restrict__ x,
                                  T* __restrict__ r, T* __restrict__ z, long long iteration,
                                  ReduceWork work) {
  // Read before any block can finish: the last block writes the scalars only after every block
  // has taken its ticket, and so after every block has read them here.
  const DeviceScalars s = *work.scalars;
  if (stopped(s)) return;
  const bool breaks_down = !(s.pq > 0) || !isfinite(s.pq) || !isfinite(s.rz);
  double sums[2] = {0, 0};  // r.r, r.z
  if (!breaks_down) {
    const T alpha = T(s.rz / s.pq);
    for (long long i = blockIdx.x * (long long)kBlock + threadIdx.x; i < n;
         i += (long long)gridDim.x * kBlock) {
      x[i] += alpha * p[i];
      const T ri = r[i] - alpha * q[i];
      r[i] = ri;
      sums[0] += double(ri) * double(ri);
      if (inv_diag) {
        const T zi = inv_diag[i] * ri;
        z[i] = zi;
        sums[1] += double(ri) * double(zi);
      }
    }
  }
  const bool preconditioned = inv_diag != nullptr;
  grid_reduce(sums, work, [&](const double* total) {
    DeviceScalars& scalars = *work.scalars;
    if (breaks_down) {  // p.Ap <= 0 (A not positive definite) or a non-finite scalar
      record_breakdown(scalars, iteration);
      return;
    }
    scalars.rz_old = scalars.rz;
    scalars.rr = total[0];
    scalars.rz = preconditioned ? total[1] : total[0];
    if (!isfinite(scalars.rr)) record_breakdown(scalars, iteration);
    record(scalars, work, iteration);
  });
}

template <typename T>
__global__ void update_p_kernel(long long n, const T* __restrict__ z, T* __restrict__ p,
                                const DeviceScalars* __restrict__ scalars) {
  const DeviceScalars s = *scalars;
  if (stopped(s)) return;
  const T beta = T(s.rz / s.rz_old);
  for (long long i = blockIdx.x * (long long)kBlock + threadIdx.x; i < n;
       i += (long long)gridDim.x * kBlock) {
    p[i] = z[i] + beta * p[i];
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
    grow_event_pool();
    warm_up();
    reset(0.0, 0);
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

  void reset(double rr_threshold, std::size_t history_capacity) override {
    if (history_capacity > history_.size()) {
      history_ = DeviceArray<double>(history_capacity, "CG residual history");
    }
    history_capacity_ = history_capacity;
    reset_kernel<<<1, 1, 0, stream()>>>(scalars_.data(), rr_threshold);
    CGS_CHECK_LAUNCH();
    spmv_times_.clear();
    pending_events_ = 0;
  }

  void norm_b(const T* b) override {
    norm_b_kernel<T><<<grid_, kBlock, 0, stream()>>>(n(), b, work());
    CGS_CHECK_LAUNCH();
  }

  void start(const T* b, const T* Ax, const T* inv_diag, T* r, T* z) override {
    start_kernel<T><<<grid_, kBlock, 0, stream()>>>(n(), b, Ax, inv_diag, r, z, work());
    CGS_CHECK_LAUNCH();
  }

  void dot_pq(const T* p, const T* q) override {
    dot_pq_kernel<T><<<grid_, kBlock, 0, stream()>>>(n(), p, q, work());
    CGS_CHECK_LAUNCH();
  }

  void update_xrz(const T* p, const T* q, const T* inv_diag, T* x, T* r, T* z,
                  long iteration) override {
    update_xrz_kernel<T>
        <<<grid_, kBlock, 0, stream()>>>(n(), p, q, inv_diag, x, r, z, iteration, work());
    CGS_CHECK_LAUNCH();
  }

  void update_p(const T* z, T* p) override {
    update_p_kernel<T><<<grid_, kBlock, 0, stream()>>>(n(), z, p, scalars_.data());
    CGS_CHECK_LAUNCH();
  }

  CgScalars read_scalars() override {
    CGS_CUDA_CHECK(cudaMemcpyAsync(host_scalars_, scalars_.data(), sizeof(DeviceScalars),
                                   cudaMemcpyDeviceToHost, stream()));
    cuda::synchronize();
    const DeviceScalars& d = *host_scalars_;
    CgScalars s;
    s.rr = d.rr;
    s.rz = d.rz;
    s.pq = d.pq;
    s.bb = d.bb;
    s.breakdown_at = long(d.breakdown_at);
    s.converged_at = long(d.converged_at);
    return s;
  }

  // r.r of iterations 0 .. the last one recorded (stopped iterations record nothing).
  std::vector<double> history() override {
    read_scalars();
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
  // launch, which would otherwise land inside the timed solve. reset() then clears the scalars.
  void warm_up() {
    const ReduceWork w = work();
    norm_b_kernel<T><<<1, kBlock, 0, stream()>>>(0, nullptr, w);
    start_kernel<T><<<1, kBlock, 0, stream()>>>(0, nullptr, nullptr, nullptr, nullptr, nullptr, w);
    dot_pq_kernel<T><<<1, kBlock, 0, stream()>>>(0, nullptr, nullptr, w);
    update_xrz_kernel<T>
        <<<1, kBlock, 0, stream()>>>(0, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, 0, w);
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
  DeviceScalars* host_scalars_ = nullptr;  // pinned, for read_scalars()
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
