// Every GPU SpMV kernel, in one table: its format, its --kernel name, whether it has a row
// function (and so runs inside the fused CG loops) and what it is. The CLI's messages, the
// planner's defaults, the inspector's candidates and the benchmarks read this table; the CUDA
// factories (spmv/cuda/*.cu) build what it names. Adding a kernel: its .cu file, one line here,
// one line in its format's factory.
#pragma once

#include <string>
#include <vector>

#include "formats/types.hpp"

namespace cgs {

struct GpuKernel {
  Format format;
  const char* name;   // --kernel
  bool row_function;  // a device function of one row: runs in the fused CG loops
  bool inspect;       // worth timing under --format auto (the rest only under --kernel auto)
  const char* what;
  // Work split by nonzeros, not rows: long rows cost no more than their share, so
  // the inspector keeps these, and only these, for matrices with long rows.
  bool balanced = false;
};

const std::vector<GpuKernel>& gpu_kernels();

// The kernel `name` of `format`, or null.
const GpuKernel* find_gpu_kernel(Format format, const std::string& name);

// "scalar, vector, ..." for messages and help.
std::string gpu_kernel_names(Format format);

// Throws InputError naming the known kernels when `name` is not one of `format`'s.
const GpuKernel& require_gpu_kernel(Format format, const std::string& name);

// The kernel a format runs when none is named, for the fused CG loops (a row function):
// csr scalar when rows are short (mean length <= kScalarCsrMaxMeanLength), else adaptive (a
// group of lanes per row); ell and hll thread; coo segscan. The planner (solver/plan.cpp) also
// knows the defaults for the generic loop, where library kernels without a row function win.
inline constexpr double kScalarCsrMaxMeanLength = 10;
std::string default_fused_gpu_kernel(Format format, double mean_row_length);

// Lanes per row of a CSR kernel's row function (1: a thread per row); the adaptive kernel takes
// the smallest power of two, 2 to 32, that covers the mean row length.
int csr_lanes(const std::string& kernel, double mean_row_length);

}  // namespace cgs
