// The batched sparse Cholesky on the device (batch_cholesky.hpp): one thread a system, the
// systems' factors interleaved (slot i of system s at i * count + s) so that a warp's 32 loads of
// one slot are one coalesced transaction, and the schedule -- the same indices for every thread
// -- read once a warp. Three kernels a call: the gather of A's values and b into that layout, the
// factorisation and both sweeps, the solutions back in A's order.
#include <algorithm>
#include <chrono>
#include <cstring>

#include "network/batch_cholesky.hpp"
#include "spmv/device_buffer.hpp"
#include "spmv/cuda/cuda_backends.hpp"
#include "spmv/cuda/cuda_common.cuh"

namespace cgs {
namespace {

constexpr int kThreads = 128;
// The factorisation's blocks are one warp: a batch of a thousand systems then spreads over 32
// SMs instead of 8, each warp with an SM's L1 and load queues to itself (every thread walks a
// long chain of dependent loads; there is no work to share between the threads of a block).
constexpr int kFactorThreads = 32;

int blocks_for(long items) { return static_cast<int>((items + kThreads - 1) / kThreads); }

// Thread (i, s), s fastest: the factor's slot i and rhs's row i of system s from that system's
// A values and b (read strided, written coalesced).
__global__ void gather_kernel(CholeskyScheduleView s, const double* __restrict__ values,
                              const double* __restrict__ b, double* __restrict__ factor,
                              double* __restrict__ rhs, int count) {
  const long slots = static_cast<long>(s.n) + s.entries;
  const long id = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (id >= (slots + s.n) * count) return;
  const long i = id / count;
  const int system = static_cast<int>(id % count);
  if (i < slots) {
    const int source = i < s.n ? s.diag_source[i] : s.value_source[i - s.n];
    factor[id] =
        source >= 0 ? __dadd_rn(0.0, values[static_cast<long>(system) * s.a_nnz + source]) : 0.0;
  } else {
    const long k = i - slots;
    rhs[k * count + system] = b[static_cast<long>(system) * s.n + s.order[k]];
  }
}

// One thread a system: factorise (stopping at its own failing pivot; the others go on) and
// sweep. failed[s]: -1 or the row of A whose pivot was <= 0.
__global__ void factorize_solve_kernel(CholeskyScheduleView s, double* __restrict__ factor,
                                       double* __restrict__ rhs, int* __restrict__ failed,
                                       int count) {
  const int system = blockIdx.x * blockDim.x + threadIdx.x;
  if (system >= count) return;
  const chol::Strided f{factor + system, count};
  const int column = chol::factorize(s, f);
  if (column < 0) chol::substitute(s, {factor + system, count}, {rhs + system, count});
  failed[system] = column < 0 ? -1 : s.order[column];
}

// x[s * n + order[k]] = rhs of system s at k: thread (k, s), s fastest.
__global__ void scatter_kernel(CholeskyScheduleView s, const double* __restrict__ rhs,
                               double* __restrict__ x, int count) {
  const long id = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (id >= static_cast<long>(s.n) * count) return;
  const long k = id / count;
  const int system = static_cast<int>(id % count);
  x[static_cast<long>(system) * s.n + s.order[k]] = rhs[id];
}

class DeviceBatchCholesky final : public BatchCholesky {
 public:
  explicit DeviceBatchCholesky(const CholeskyScheduleView& host) : host_(host) {
    std::string why;
    if (!cuda_device_available(&why))
      throw DeviceError("the batched sparse Cholesky needs a GPU: " + why);
    device_ = host;
    device_.order = upload(order_, host.order, host.n, "schedule: order");
    device_.diag_source = upload(diag_source_, host.diag_source, host.n, "schedule: diagonal");
    device_.value_source =
        upload(value_source_, host.value_source, host.entries, "schedule: values");
    device_.col_ptr = upload(col_ptr_, host.col_ptr, host.n + 1, "schedule: columns");
    device_.row = upload(row_, host.row, host.entries, "schedule: rows");
    device_.pivot_ptr = upload(pivot_ptr_, host.pivot_ptr, host.n + 1, "schedule: pivots");
    device_.pivot_terms =
        upload(pivot_terms_, host.pivot_terms, host.pivot_ptr[host.n], "schedule: pivot terms");
    device_.update_ptr =
        upload(update_ptr_, host.update_ptr, host.entries + 1, "schedule: update pointers");
    const long updates = host.update_ptr[host.entries];
    device_.update_source =
        upload(update_source_, host.update_source, updates, "schedule: updates");
    device_.update_multiplier =
        upload(update_multiplier_, host.update_multiplier, updates, "schedule: multipliers");
    CGS_CUDA_CHECK(cudaEventCreate(&begin_));
    CGS_CUDA_CHECK(cudaEventCreate(&end_));
  }
  ~DeviceBatchCholesky() override {
    for (void* p : pinned_) (void)cudaHostUnregister(p);
    cudaEventDestroy(begin_);
    cudaEventDestroy(end_);
  }

  void pin(void* host, std::size_t bytes) override {
    if (bytes == 0) return;
    if (cudaHostRegister(host, bytes, cudaHostRegisterDefault) == cudaSuccess)
      pinned_.push_back(host);
    else
      (void)cudaGetLastError();  // pageable copies, as before
  }

  void factorize_solve(const double* values, const double* b, double* x, int count,
                       int* failed_row) override {
    if (count <= 0) return;
    const auto started = std::chrono::steady_clock::now();
    const long n = host_.n, slots = n + host_.entries;
    reserve(values_, static_cast<std::size_t>(count) * host_.a_nnz, "batch Cholesky: A");
    reserve(b_, static_cast<std::size_t>(count) * n, "batch Cholesky: b");
    reserve(factor_, static_cast<std::size_t>(count) * slots, "batch Cholesky: factors");
    reserve(rhs_, static_cast<std::size_t>(count) * n, "batch Cholesky: sweeps");
    reserve(x_, static_cast<std::size_t>(count) * n, "batch Cholesky: x");
    if (failed_.size() < static_cast<std::size_t>(count))
      failed_ = DeviceBuffer<int>(Device::gpu, count, "batch Cholesky: failures");
    // In stream order, straight from the caller's arrays (by DMA where they are pinned).
    CGS_CUDA_CHECK(cudaMemcpyAsync(values_.data(), values, sizeof(double) * count * host_.a_nnz,
                                   cudaMemcpyHostToDevice, cuda::stream()));
    CGS_CUDA_CHECK(cudaMemcpyAsync(b_.data(), b, sizeof(double) * count * n, cudaMemcpyHostToDevice,
                                   cuda::stream()));
    CGS_CUDA_CHECK(cudaEventRecord(begin_, cuda::stream()));
    gather_kernel<<<blocks_for((slots + n) * count), kThreads, 0, cuda::stream()>>>(
        device_, values_.data(), b_.data(), factor_.data(), rhs_.data(), count);
    CGS_CHECK_LAUNCH();
    factorize_solve_kernel<<<(count + kFactorThreads - 1) / kFactorThreads, kFactorThreads, 0,
                             cuda::stream()>>>(device_, factor_.data(), rhs_.data(), failed_.data(),
                                               count);
    CGS_CHECK_LAUNCH();
    scatter_kernel<<<blocks_for(n * count), kThreads, 0, cuda::stream()>>>(device_, rhs_.data(),
                                                                           x_.data(), count);
    CGS_CHECK_LAUNCH();
    CGS_CUDA_CHECK(cudaEventRecord(end_, cuda::stream()));
    gpu_download(failed_row, failed_.data(), sizeof(int) * count);  // waits for the kernels
    float ms = 0;
    CGS_CUDA_CHECK(cudaEventElapsedTime(&ms, begin_, end_));
    kernel_ms_ = ms;
    const bool all_solved =
        std::all_of(failed_row, failed_row + count, [](int row) { return row < 0; });
    if (all_solved) {  // the usual case: straight into x
      gpu_download(x, x_.data(), sizeof(double) * count * n);
    } else {  // a failed system's x is left as it was
      staging_.resize(static_cast<std::size_t>(count) * n);
      gpu_download(staging_.data(), x_.data(), sizeof(double) * count * n);
      for (int s = 0; s < count; ++s)
        if (failed_row[s] < 0) std::memcpy(x + s * n, staging_.data() + s * n, sizeof(double) * n);
    }
    call_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
                   .count();
  }
  double kernel_ms() const override { return kernel_ms_; }
  double call_ms() const override { return call_ms_; }

 private:
  static const int* upload(DeviceBuffer<int>& buffer, const int* host, long size,
                           const char* what) {
    buffer = DeviceBuffer<int>(Device::gpu, static_cast<std::size_t>(std::max(1L, size)), what);
    if (size > 0) gpu_upload(buffer.data(), host, sizeof(int) * size);
    return buffer.data();
  }
  // Device arrays grow to the largest batch seen and are kept.
  static void reserve(DeviceBuffer<double>& buffer, std::size_t size, const char* what) {
    if (buffer.size() < size) buffer = DeviceBuffer<double>(Device::gpu, size, what);
  }

  CholeskyScheduleView host_, device_;
  DeviceBuffer<int> order_, diag_source_, value_source_, col_ptr_, row_, pivot_ptr_, pivot_terms_,
      update_ptr_, update_source_, update_multiplier_, failed_;
  DeviceBuffer<double> values_, b_, factor_, rhs_, x_;
  std::vector<double> staging_;
  std::vector<void*> pinned_;
  cudaEvent_t begin_ = nullptr, end_ = nullptr;
  double kernel_ms_ = 0, call_ms_ = 0;
};

}  // namespace

std::unique_ptr<BatchCholesky> make_batch_cholesky(const CholeskyScheduleView& schedule) {
  return std::make_unique<DeviceBatchCholesky>(schedule);
}

}  // namespace cgs
