// The CUDA VectorOps (solver/vector_ops.hpp), implemented in solver/cuda/*.cu; without CUDA,
// spmv/cuda/no_cuda.cpp provides a version that throws DeviceError.
#pragma once

#include <memory>

#include "solver/vector_ops.hpp"

namespace cgs {

template <typename T>
std::unique_ptr<VectorOps<T>> make_cuda_vector_ops(std::size_t n);

}  // namespace cgs
