#include "spmv/kernel_registry.hpp"

#include "spmv/views.hpp"

namespace cgs {

const std::vector<GpuKernel>& gpu_kernels() {
  static const std::vector<GpuKernel> table = {
      // format, name, row function, inspect, what, balanced
      {Format::csr, "scalar", true, true, "a thread per row (rows of a few entries)"},
      {Format::csr, "adaptive", true, true,
       "a group of 2-32 lanes per row, sized from the mean row length"},
      {Format::csr, "vector", true, false, "a warp (32 lanes) per row"},
      {Format::csr, "vector2", true, false, "2 lanes per row"},
      {Format::csr, "vector4", true, false, "4 lanes per row"},
      {Format::csr, "vector8", true, false, "8 lanes per row"},
      {Format::csr, "vector16", true, false, "16 lanes per row"},
      {Format::csr, "vector32", true, false, "32 lanes per row"},
      {Format::csr, "stream", false, true,
       "row blocks of equal nonzeros, long rows in pieces (whole-product kernel)", true},
      {Format::csr, "stream4", false, false, "stream with 4 loads per thread", true},
      {Format::csr, "stream8", false, false, "stream with 8 loads per thread", true},
      {Format::csr, "cusparse", false, true, "cuSPARSE cusparseSpMV (library)", true},
      // Not timed by --format auto until it has run on a GPU (it was written when no device time
      // was left): --kernel balanced asks for it.
      {Format::csr, "balanced", true, false,
       "a warp per unit of at most 256 nonzeros (32 short rows, or a piece of a long row); "
       "a row function, so the fused loops keep long rows balanced",
       true},
      {Format::ell, "thread", true, true, "a thread per row, column-major slots"},
      {Format::hll, "thread", true, true, "a thread per row, column-major within each hack"},
      {Format::hll, "cusparse", false, false, "cuSPARSE sliced ELL (library)"},
      {Format::coo, "segscan", true, false,
       "warp segmented scan for the SpMV; rows through row offsets in the fused loops"},
      {Format::coo, "segscan-shfl", true, false, "segscan, shuffle scan"},
      {Format::coo, "segscan-shared", true, false, "segscan, shared-memory scan"},
      {Format::coo, "cusparse", false, true, "cuSPARSE cusparseSpMV (library)", true},
  };
  return table;
}

const GpuKernel* find_gpu_kernel(Format format, const std::string& name) {
  for (const GpuKernel& k : gpu_kernels())
    if (k.format == format && name == k.name) return &k;
  return nullptr;
}

std::string gpu_kernel_names(Format format) {
  std::string names;
  for (const GpuKernel& k : gpu_kernels()) {
    if (k.format != format) continue;
    names += (names.empty() ? "" : ", ") + std::string(k.name);
  }
  return names;
}

const GpuKernel& require_gpu_kernel(Format format, const std::string& name) {
  if (const GpuKernel* k = find_gpu_kernel(format, name)) return *k;
  throw InputError("unknown " + to_string(format) + " GPU kernel '" + name + "' (expected " +
                   gpu_kernel_names(format) + ")");
}

std::string default_fused_gpu_kernel(Format format, double mean_row_length) {
  switch (format) {
    case Format::csr: return mean_row_length <= kScalarCsrMaxMeanLength ? "scalar" : "adaptive";
    case Format::ell: return "thread";
    case Format::hll: return "thread";
    case Format::coo: return "segscan";
  }
  return "";
}

int csr_lanes(const std::string& kernel, double mean_row_length) {
  if (kernel == "vector") return 32;
  if (kernel == "balanced") return kBalancedLanes;
  for (int lanes : {2, 4, 8, 16, 32})
    if (kernel == "vector" + std::to_string(lanes)) return lanes;
  if (kernel == "adaptive") {
    int lanes = 2;
    while (lanes < 32 && lanes < mean_row_length) lanes *= 2;
    return lanes;
  }
  return 1;
}

}  // namespace cgs
