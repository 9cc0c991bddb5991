// Factories for the CPU backends: serial (spmv/cpu/serial_kernels.cpp, built without OpenMP)
// and OpenMP (spmv/cpu/omp_kernels.cpp).
#pragma once

#include <memory>

#include "spmv/backend.hpp"

namespace cgs {

template <typename T>
std::unique_ptr<SpmvBackend<T>> make_serial_backend(const CsrMatrix<T>& A,
                                                    const BackendOptions& options);

template <typename T>
std::unique_ptr<SpmvBackend<T>> make_omp_backend(const CsrMatrix<T>& A,
                                                 const BackendOptions& options);

// Bytes one product must move at least, for each format (see BENCHMARKS.md): the real entries
// (value + column index; COO also the row index), the row pointers or lengths, x read once and
// y written once. Padding is not counted: a kernel that stops at each row's length need not
// move it, so ELL and HLL pay for their padding in time, not in the model.
std::size_t min_bytes_model(Format format, index_t rows, index_t cols, index_t nnz,
                            std::size_t value_size, index_t hack_size);

}  // namespace cgs
