// libFuzzer target: cgsolve's --precond values ("ic0", "fsai:2", "bjacobi:64", "cheby:..."):
// parse_precond, then the preconditioner made, set up and applied once on a small fixed SPD
// matrix in float and double, as the solver would. An InputError is the expected answer to a
// bad name or argument; anything else escaping (std::invalid_argument from a stray stoi, say),
// a crash, a non-finite result or a sanitizer report is a finding.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "formats/generators.hpp"
#include "formats/types.hpp"
#include "solver/precond/preconditioner.hpp"

namespace {

template <typename T>
void set_up_and_apply(const cgs::PrecondSpec& spec, const cgs::CsrMatrix<double>& A) {
  auto M = cgs::make_preconditioner<T>(spec, cgs::Device::serial, 1);
  M->analyze(A);
  M->set_values(A);  // the second set-up every Newton trial of netsolve makes
  const std::vector<T> r(static_cast<std::size_t>(A.rows), T(1));
  std::vector<T> z(r.size(), T(0));
  if (M->pointwise()) {
    // none and jacobi: the loops fuse z = d r with the residual update; apply() is not theirs.
    const T* d = M->diagonal();
    for (std::size_t i = 0; i < z.size(); ++i) z[i] = d ? d[i] * r[i] : r[i];
  } else {
    M->apply(r.data(), z.data());
  }
  // On an SPD M-matrix every preconditioner here gives a finite z.
  for (T v : z)
    if (!std::isfinite(v)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // A command-line value: longer ones add nothing but time.
  if (size > 64) return 0;
  // 2-D Laplacian, n = 36: small enough for thousands of set-ups a second, with enough rows
  // for block sizes, levels and polynomial degrees to matter.
  static const cgs::CsrMatrix<double> A = cgs::generate_matrix("gen:poisson2d:6");
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const cgs::PrecondSpec spec = cgs::parse_precond(text);
    if (spec.is("auto")) return 0;  // chosen by the planner, not made from the text
    set_up_and_apply<double>(spec, A);
    set_up_and_apply<float>(spec, A);
  } catch (const cgs::InputError&) {
  }
  return 0;
}
