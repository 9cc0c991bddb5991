// The trials engine on the device (batch_trials.hpp): one thread a scenario, its arrays
// interleaved with the other scenarios' (slot i of scenario s at i * count + s) so that a warp's
// loads of one slot are one transaction while every thread walks the same links and junctions.
// A call: the common start broadcast into that layout and each scenario's changes written over
// it, the trials, the final statuses back.
// Built without contracted multiply-adds (CMakeLists: --fmad=false), as the host rounds.
#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "network/batch_trials.hpp"
#include "spmv/device_buffer.hpp"
#include "spmv/cuda/cuda_backends.hpp"
#include "spmv/cuda/cuda_common.cuh"

namespace cgs {
namespace {

namespace tr = net::trials;

constexpr int kThreads = 256;
// The trials' blocks are one warp each, as the batched Cholesky's: every thread walks long chains
// of dependent loads, so the warps are best spread over as many SMs as there are.
constexpr int kTrialThreads = 32;

int blocks_for(long items) { return static_cast<int>((items + kThreads - 1) / kThreads); }

// Thread (i, s), s fastest: element i of the common start into scenario s's interleaved state.
template <typename T>
__global__ void broadcast_kernel(const T* __restrict__ base, long width, int count,
                                 T* __restrict__ out) {
  const long id = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (id >= width * count) return;
  out[id] = base[id / count];
}

// Thread s: scenario s's own changes of the common start.
template <typename T>
__global__ void change_kernel(const long* __restrict__ ptr, const int* __restrict__ index,
                              const T* __restrict__ value, int count, T* __restrict__ out) {
  const int s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= count) return;
  for (long c = ptr[s]; c < ptr[s + 1]; ++c)
    out[static_cast<long>(index[c]) * count + s] = value[c];
}

// The reverse: interleaved element i of scenario s to s's own slice.
template <typename T>
__global__ void gather_kernel(const T* __restrict__ in, long width, int count,
                              T* __restrict__ out) {
  const long id = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (id >= width * count) return;
  const long i = id / count;
  const int s = static_cast<int>(id % count);
  out[static_cast<long>(s) * width + i] = in[id];
}

__global__ void trials_kernel(tr::NetworkView view, tr::Layout layout, double* state,
                              signed char* status, const tr::ScenarioSpec* __restrict__ specs,
                              tr::Outcome* __restrict__ outcomes, int count) {
  const int s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= count) return;
  tr::State st = tr::state_at(layout, state + s, count, status + s);
  outcomes[s] = tr::run_period(view, st, specs[s]);
}

class DeviceBatchTrials final : public BatchTrials {
 public:
  DeviceBatchTrials(const tr::NetworkView& host, const int* ints, std::size_t int_count,
                    const double* reals, std::size_t real_count)
      : layout_(tr::layout_of(host)) {
    std::string why;
    if (!cuda_device_available(&why)) throw DeviceError("the trials engine needs a GPU: " + why);
    ints_ = DeviceBuffer<int>(Device::gpu, std::max<std::size_t>(1, int_count), "trials: network");
    reals_ =
        DeviceBuffer<double>(Device::gpu, std::max<std::size_t>(1, real_count), "trials: network");
    if (int_count) gpu_upload(ints_.data(), ints, sizeof(int) * int_count);
    if (real_count) gpu_upload(reals_.data(), reals, sizeof(double) * real_count);
    view_ = tr::rebase(host, ints, ints_.data(), reals, reals_.data());
    std::size_t free_bytes = 0, total_bytes = 0;
    CGS_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const double per_scenario = sizeof(double) * layout_.total() + 2.0 * layout_.links +
                                sizeof(tr::ScenarioSpec) + sizeof(tr::Outcome);
    capacity_ = static_cast<int>(std::clamp(0.5 * free_bytes / per_scenario, 1.0, 1e6));
    CGS_CUDA_CHECK(cudaEventCreate(&begin_));
    CGS_CUDA_CHECK(cudaEventCreate(&end_));
  }
  ~DeviceBatchTrials() override {
    cudaEventDestroy(begin_);
    cudaEventDestroy(end_);
  }

  int capacity() const override { return capacity_; }

  void set_base(const double* start, const signed char* statuses) override {
    base_ = DeviceBuffer<double>(Device::gpu, std::max(1L, layout_.start()), "trials: base");
    base_status_ =
        DeviceBuffer<signed char>(Device::gpu, std::max(1L, layout_.links), "trials: base");
    gpu_upload(base_.data(), start, sizeof(double) * layout_.start());
    gpu_upload(base_status_.data(), statuses, layout_.links);
  }

  void run(const tr::StartChanges& changes, const tr::ScenarioSpec* specs, int count,
           tr::Outcome* outcomes, signed char* final_statuses) override {
    if (count <= 0) return;
    if (count > capacity_)
      throw DeviceError("trials engine: " + std::to_string(count) +
                        " scenarios in one call, more than the " + std::to_string(capacity_) +
                        " that fit");
    if (base_.empty()) throw std::logic_error("trials engine: run() before set_base()");
    const auto started = std::chrono::steady_clock::now();
    const long start = layout_.start(), links = layout_.links;
    const long values = changes.ptr[count], states = changes.status_ptr[count];
    reserve(state_, static_cast<std::size_t>(count) * layout_.total(), "trials: state");
    reserve(status_, static_cast<std::size_t>(count) * links, "trials: statuses");
    reserve(final_status_, static_cast<std::size_t>(count) * links, "trials: statuses");
    reserve(ptr_, 2 * (static_cast<std::size_t>(count) + 1), "trials: changes");
    reserve(index_, static_cast<std::size_t>(values + states), "trials: changes");
    reserve(value_, static_cast<std::size_t>(values), "trials: changes");
    reserve(status_value_, static_cast<std::size_t>(states), "trials: changes");
    reserve(specs_, sizeof(tr::ScenarioSpec) * count, "trials: scenarios");
    reserve(outcomes_, sizeof(tr::Outcome) * count, "trials: outcomes");
    auto* device_specs = reinterpret_cast<tr::ScenarioSpec*>(specs_.data());
    auto* device_outcomes = reinterpret_cast<tr::Outcome*>(outcomes_.data());
    long* ptr = ptr_.data();
    long* status_ptr = ptr + count + 1;
    int* status_index = index_.data() + values;
    cudaStream_t stream = cuda::stream();
    auto up = [&](void* to, const void* from, std::size_t bytes) {
      if (bytes) CGS_CUDA_CHECK(cudaMemcpyAsync(to, from, bytes, cudaMemcpyHostToDevice, stream));
    };
    up(ptr, changes.ptr, sizeof(long) * (count + 1));
    up(status_ptr, changes.status_ptr, sizeof(long) * (count + 1));
    up(index_.data(), changes.index, sizeof(int) * values);
    up(status_index, changes.status_index, sizeof(int) * states);
    up(value_.data(), changes.value, sizeof(double) * values);
    up(status_value_.data(), changes.status_value, states);
    up(device_specs, specs, sizeof(tr::ScenarioSpec) * count);
    CGS_CUDA_CHECK(cudaEventRecord(begin_, stream));
    const int scenario_blocks = (count + kThreads - 1) / kThreads;
    broadcast_kernel<<<blocks_for(start * count), kThreads, 0, stream>>>(base_.data(), start, count,
                                                                         state_.data());
    CGS_CHECK_LAUNCH();
    broadcast_kernel<<<blocks_for(links * count), kThreads, 0, stream>>>(base_status_.data(), links,
                                                                         count, status_.data());
    CGS_CHECK_LAUNCH();
    change_kernel<<<scenario_blocks, kThreads, 0, stream>>>(ptr, index_.data(), value_.data(),
                                                            count, state_.data());
    CGS_CHECK_LAUNCH();
    change_kernel<<<scenario_blocks, kThreads, 0, stream>>>(
        status_ptr, status_index, status_value_.data(), count, status_.data());
    CGS_CHECK_LAUNCH();
    trials_kernel<<<(count + kTrialThreads - 1) / kTrialThreads, kTrialThreads, 0, stream>>>(
        view_, layout_, state_.data(), status_.data(), device_specs, device_outcomes, count);
    CGS_CHECK_LAUNCH();
    gather_kernel<<<blocks_for(links * count), kThreads, 0, stream>>>(status_.data(), links, count,
                                                                      final_status_.data());
    CGS_CHECK_LAUNCH();
    CGS_CUDA_CHECK(cudaEventRecord(end_, stream));
    gpu_download(outcomes, device_outcomes, sizeof(tr::Outcome) * count);  // waits
    gpu_download(final_statuses, final_status_.data(), count * links);
    float ms = 0;
    CGS_CUDA_CHECK(cudaEventElapsedTime(&ms, begin_, end_));
    kernel_ms_ = ms;
    call_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
                   .count();
  }
  double kernel_ms() const override { return kernel_ms_; }
  double call_ms() const override { return call_ms_; }

 private:
  template <typename T>
  static void reserve(DeviceBuffer<T>& buffer, std::size_t size, const char* what) {
    if (buffer.size() < size) buffer = DeviceBuffer<T>(Device::gpu, size, what);
  }

  tr::Layout layout_;
  tr::NetworkView view_;
  int capacity_ = 1;
  DeviceBuffer<int> ints_;
  DeviceBuffer<double> reals_, base_, state_, value_;
  DeviceBuffer<signed char> base_status_, status_, final_status_, status_value_;
  DeviceBuffer<long> ptr_;                        // the changes' pointers: values', then statuses'
  DeviceBuffer<int> index_;                       // the changes' indices: values', then statuses'
  DeviceBuffer<unsigned char> specs_, outcomes_;  // ScenarioSpec, Outcome records
  cudaEvent_t begin_ = nullptr, end_ = nullptr;
  double kernel_ms_ = 0, call_ms_ = 0;
};

}  // namespace

std::unique_ptr<BatchTrials> make_batch_trials(const net::trials::NetworkView& view,
                                               const int* ints, std::size_t int_count,
                                               const double* reals, std::size_t real_count) {
  return std::make_unique<DeviceBatchTrials>(view, ints, int_count, reals, real_count);
}

}  // namespace cgs
