// How a CUDA SpMV backend lends its matrix to a fused CG loop (solver/cuda/fused_cg.cu): the
// backends whose kernel is a device function of the row (csr scalar, ell, hll thread) also
// implement FusedSpmvSource, and the solver finds it with dynamic_cast. The others (CSR vector
// kernels, COO segmented scan, cuSPARSE) do not, and CG runs the generic loop with them.
#pragma once

#include "spmv/cuda/csr_device.cuh"
#include "spmv/cuda/ell_device.cuh"
#include "spmv/cuda/hll_device.cuh"

namespace cgs::cuda {

// The device arrays of one format; `format` says which member is set.
template <typename T>
struct MatrixView {
  Format format = Format::csr;
  CsrView<T> csr{};
  EllView<T> ell{};
  HllView<T> hll{};
};

template <typename T>
class FusedSpmvSource {
 public:
  virtual ~FusedSpmvSource() = default;
  // Fills `view` and returns true, or false when this backend's kernel is not a row function
  // (the CSR vector kernels, which share a row among lanes).
  virtual bool device_view(MatrixView<T>& view) const = 0;
};

}  // namespace cgs::cuda
