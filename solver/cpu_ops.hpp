// VectorOps on the host: OpenMP loops (threads > 1) or plain loops (threads == 1).
#pragma once

#include <memory>

#include "solver/vector_ops.hpp"

namespace cgs {

template <typename T>
std::unique_ptr<VectorOps<T>> make_cpu_vector_ops(std::size_t n, int threads, Device device);

}  // namespace cgs
