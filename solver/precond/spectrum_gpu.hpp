// spectrum_bounds (solver/precond/spectrum.hpp) with the Lanczos products and sums on the GPU,
// for a preconditioner whose solve runs there (cheb:8's 40 Lanczos steps on a 9M-row grid
// took 1.3 s on 16 host cores, 40 SpMVs of 0.37 ms on the GPU). The same start
// vector, steps, stopping rule and reading of the tridiagonal as the host's; only the order of
// the sums differs (a fixed block tree instead of 256 chunks), and the products' rounding (the
// host scales A's entries once, spectrum.cpp), so the interval equals the host's to rounding,
// the same bits at every call. Built without CUDA, it throws DeviceError.
#pragma once

#include <vector>

#include "formats/csr.hpp"
#include "solver/precond/program_spec.hpp"  // CsrArrays
#include "solver/precond/spectrum.hpp"

namespace cgs::precond {

// Whether a set-up of n rows is worth the device when the solve runs there: below this, the
// host's loops (and their thread team) finish before the device's 2 launches a step add up.
// One constant for every such choice: Chebyshev's device Lanczos, FSAI's and IC(0)'s device
// set-ups, and where IC(0)'s program keeps its arrays.
inline constexpr index_t kDeviceSetupRows = 200000;
inline bool worth_device_setup(index_t n) { return n >= kDeviceSetupRows; }

// spectrum_bounds(A, scale, steps) on the device (no EntryFilter: AMG's filtered estimate is
// amg_gpu.cu's). `on_device`: A's arrays where the device already holds them (the SpMV backend's
// copy lent to the preconditioner, Preconditioner::lent_matrix), read in place; what is not
// there (values of a float backend, or nothing lent at all), and scale, are copied there and
// freed on return; the start vector is made there (lanczos_start_entry).
Interval spectrum_bounds_on_device(const CsrMatrix<double>& A, const std::vector<double>& scale,
                                   int steps, const CsrArrays& on_device = {});

}  // namespace cgs::precond
