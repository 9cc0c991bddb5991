// What the device set-ups (amg_gpu.cu, fsai_gpu.cu, ic0_gpu.cu) share: row pointers from row
// counts, values read back, and a phase's seconds once the stream has finished it.
#pragma once

#include <chrono>
#include <cub/device/device_scan.cuh>
#include <vector>

#include "base/prefault.hpp"
#include "spmv/cuda/cuda_common.cuh"

namespace cgs::cuda {

// row_ptr[0] = 0, row_ptr[i + 1] = counts[0] + ... + counts[i] (cub's scan, deterministic).
inline void counts_to_row_pointers(const DeviceArray<index_t>& counts,
                                   DeviceArray<index_t>& row_ptr) {
  CGS_CUDA_CHECK(cudaMemsetAsync(row_ptr.data(), 0, sizeof(index_t), stream()));
  const int n = int(counts.size());
  if (n == 0) return;
  std::size_t bytes = 0;
  CGS_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, bytes, counts.data(), row_ptr.data() + 1, n,
                                               stream()));
  DeviceArray<char> scratch(bytes, "row pointers' scan scratch");
  CGS_CUDA_CHECK(cub::DeviceScan::InclusiveSum(scratch.data(), bytes, counts.data(),
                                               row_ptr.data() + 1, n, stream()));
}

template <typename E>
E download_one(const E* device) {
  E value{};
  copy_to_host(&value, device, sizeof(E));
  return value;
}

// host = the device's `count` elements; host's pages faulted in on every core first
// (base/prefault.hpp: a fresh 108 MB vector's resize took 60-65 ms on one thread
// against 10 ms for the copy into it, BENCHMARKS 20j).
template <typename E>
void download_into(std::vector<E>& host, const E* device, std::size_t count) {
  reserve_prefaulted(host, count);
  host.resize(count);
  if (count > 0) copy_to_host(host.data(), device, count * sizeof(E));
}

template <typename E>
std::vector<E> download(const E* device, std::size_t count) {
  std::vector<E> host;
  download_into(host, device, count);
  return host;
}

// Seconds since `start`, once the stream has done what was queued.
inline double waited_since(std::chrono::steady_clock::time_point start) {
  synchronize();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace cgs::cuda
