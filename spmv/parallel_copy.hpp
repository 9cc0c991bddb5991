// memcpy on every host core, for the large copies of a set-up (the GPU's pinned staging
// buffers, spmv/cuda/device.cu). Compiled as C++ with OpenMP: nvcc builds the .cu files without
// it.
#pragma once

#include <cstddef>

namespace cgs {

// Copies `bytes` from src to dst (not overlapping) in 1 MiB slices shared by the host's threads;
// one memcpy below two slices.
void parallel_copy(void* dst, const void* src, std::size_t bytes);

}  // namespace cgs
