// The inspector behind `--format auto` and `--kernel auto`: it picks the SpMV format, the GPU
// kernel and whether to sort rows by timing a short list of candidates on the matrix itself.
//
// Each candidate is built (rows sorted if it asks), given a few warm-up products and then up to
// kMaxTimedProducts products timed on the device's own clock (VectorOps::mark_spmv_*), the same
// clock the solve reports. The candidate with the lowest median wins. The list is pruned by the
// matrix statistics (formats/stats.hpp) so that the whole inspection costs a few percent of a
// typical solve: ELL only when its padding is small, sorting only when row lengths vary.
#pragma once

#include <string>
#include <vector>

#include "formats/csr.hpp"
#include "solver/solve.hpp"

namespace cgs {

struct AutoCandidate {
  Format format = Format::csr;
  bool sort_rows = false;
  std::string kernel;         // GPU kernel; empty = the format's default
  double median_seconds = 0;  // per product, device clock
  int products = 0;           // timed products (fewer when stopped early)
  std::string label() const;  // e.g. "hll sorted", "csr/scalar"
};

struct AutoChoice {
  BackendOptions backend;            // the winner's format and kernel, other fields as asked
  bool sort_rows = false;            // the winner's row order
  std::vector<AutoCandidate> timed;  // every candidate timed, fastest first
  std::vector<std::string> skipped;  // candidates left out, with why ("ell: fill 9.3")
  std::string reason;                // one line: the winner's time against the others'
  double seconds = 0;                // the inspector's whole cost (sorting, building, timing)
};

// Times the candidates allowed by options (auto_format: all formats and, when it helps, sorted
// rows; auto_kernel on the GPU: the format's kernels) and returns the fastest. A candidate whose
// backend cannot be built (e.g. the ELL guard) is skipped, not fatal.
AutoChoice choose_backend(const CsrMatrix<double>& A, const SolveOptions& options);

}  // namespace cgs
