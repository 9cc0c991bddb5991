// --device auto with a GPU present (solver/device_choice.hpp): a system of a million rows, whose
// CPU iteration costs many times the GPU's, goes to the GPU; a small one, where the GPU's fixed
// cost is more than the CPU's whole solve, stays on the CPU; either way the answer is the one the
// chosen device gives when asked for directly.
#include <string>

#include "gpu_test_util.hpp"
#include "solver/device_choice.hpp"
#include "solver/solve.hpp"

namespace cgs {
namespace {

std::vector<double> ones_times(const CsrMatrix<double>& A) {
  return multiply(A, std::vector<double>(std::size_t(A.rows), 1.0));
}

SolveReport solve_on(const CsrMatrix<double>& A, bool automatic, Device device,
                     std::vector<double>& x) {
  SolveRequest request;
  request.device_auto = automatic;
  request.backend.device = device;
  request.precond = parse_precond("jacobi");
  request.cg.tol = 1e-8;
  x.clear();
  return solve_system(A, ones_times(A), x, request);
}

TEST_CASE("GPU --device auto: a large system on the GPU, a small one on the CPU") {
  CGS_REQUIRE_GPU_OR_SKIP();
  struct Case {
    index_t m;
    Device expected;
  };
  for (const Case& c : {Case{1000, Device::gpu}, Case{30, Device::omp}}) {
    const CsrMatrix<double> A = testing::poisson2d(c.m);
    std::vector<double> x, x_asked;
    const SolveReport r = solve_on(A, true, Device::omp, x);
    REQUIRE(!r.plan.reasons.empty());
    MESSAGE(r.plan.reasons.front());
    REQUIRE(r.cg.ok());
    CHECK(r.plan.device == c.expected);
    CHECK(r.plan.reasons.front().find(c.expected == Device::gpu ? "device: gpu (--device auto: "
                                                                : "device: cpu (--device auto: ") ==
          0);
    const SolveReport asked = solve_on(A, false, c.expected, x_asked);
    CHECK(asked.cg.iterations == r.cg.iterations);
    CHECK(r.true_relative_residual <= 1e-8);
    double diff = 0;
    for (std::size_t i = 0; i < x.size(); ++i) diff = std::max(diff, std::abs(x[i] - x_asked[i]));
    // The CPU's loops are deterministic; the GPU's reductions (atomics) may differ in the last
    // bits from run to run.
    CHECK(diff <= (c.expected == Device::gpu ? 1e-12 : 0.0));
  }
}

}  // namespace
}  // namespace cgs
