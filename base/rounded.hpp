// Double arithmetic rounded as the host rounds it, written once for host-device code whose
// device results must equal the host's bit for bit: on the device each product, sum, difference,
// quotient and square root is rounded on its own (nvcc would contract a * b + c into a fused
// multiply-add, which rounds once); on the host, built without FMA contraction across these
// calls' operations, they are the plain operators.
#pragma once

#include <cmath>

#include "base/host_device.hpp"

namespace cgs::rounded {

CGS_HD double mul(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
CGS_HD double add(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
CGS_HD double sub(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dsub_rn(a, b);
#else
  return a - b;
#endif
}
CGS_HD double div(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __ddiv_rn(a, b);
#else
  return a / b;
#endif
}
CGS_HD double sqrt(double a) {
#if defined(__CUDA_ARCH__)
  return __dsqrt_rn(a);
#else
  return std::sqrt(a);
#endif
}

}  // namespace cgs::rounded
