#include "solver/cpu_ops.hpp"
#include "solver/cuda/cuda_ops.hpp"

namespace cgs {

template <typename T>
std::unique_ptr<VectorOps<T>> make_vector_ops(Device device, std::size_t n, int threads) {
  if (device == Device::gpu) return make_cuda_vector_ops<T>(n);
  return make_cpu_vector_ops<T>(n, threads, device);
}

template std::unique_ptr<VectorOps<float>> make_vector_ops(Device, std::size_t, int);
template std::unique_ptr<VectorOps<double>> make_vector_ops(Device, std::size_t, int);

}  // namespace cgs
