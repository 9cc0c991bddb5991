// What every part of AMG's device set-up (solver/precond/amg_gpu.cu) shares: the block size, the
// grid of a one-thread-an-item kernel, the phase clock. Included by amg_gpu.cu only (its kernels
// and helpers live in an unnamed namespace there).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "formats/types.hpp"
#include "solver/precond/setup_util.cuh"
#include "spmv/cuda/cuda_common.cuh"

namespace cgs::precond::amg {
namespace {

using cuda::counts_to_row_pointers;
using cuda::DeviceArray;
using Clock = std::chrono::steady_clock;

constexpr int kBlock = 256;

double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

int blocks_for(std::int64_t items) {
  return int(std::clamp<std::int64_t>((items + kBlock - 1) / kBlock, 1, 1 << 20));
}

}  // namespace
}  // namespace cgs::precond::amg
