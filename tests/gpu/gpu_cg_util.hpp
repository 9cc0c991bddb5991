// Running CG on one device for the GPU tests (test_gpu_cg.cpp, test_gpu_fused_cg.cpp): a plan
// for the backend, precision, preconditioner and loop asked for, its solver analyzed on A, one
// solve from x0 = 0; x comes back in double.
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "gpu_test_util.hpp"
#include "solver/solver.hpp"

namespace cgs::gputest {

struct Run {
  CgResult result;
  std::vector<double> x;
  Loop loop = Loop::generic;
  std::string kernel;   // the plan's SpMV kernel
  std::string reasons;  // the plan's reasons, one a line
};

// loop: on the GPU the loop asked for (automatic lets the plan choose); on the CPU devices
// generic asks for the generic loop, anything else the fused one.
// precond: a preconditioner as --precond names it ("jacobi", "ic0:colour", ...). (Not an
// overload of run_loop: a string literal would convert to its bool first.)
template <typename T>
Run run_loop_with(const CsrMatrix<double>& A, const std::vector<double>& b,
                  const std::string& precond, const BackendOptions& backend, GpuLoopAsk loop,
                  const CgOptions& cg) {
  SolveRequest r;
  r.backend = backend;
  r.precision = sizeof(T) == 4 ? Precision::single : Precision::double_;
  r.precond = parse_precond(precond);
  r.gpu_loop = loop;
  r.cpu_loop = loop == GpuLoopAsk::generic ? CpuLoopAsk::generic : CpuLoopAsk::automatic;
  r.cg = cg;
  const Plan plan = make_plan(r, A);
  if (backend.device == Device::gpu && loop == GpuLoopAsk::persistent)
    CHECK(plan.loop == Loop::persistent);
  if (backend.device == Device::gpu && loop == GpuLoopAsk::graph) CHECK(plan.loop == Loop::graph);
  auto solver = make_solver(plan);
  solver->analyze(A);
  Run run;
  const SolveReport report = solver->solve(b, run.x);
  run.result = report.cg;
  run.loop = report.plan.loop;
  run.kernel = report.plan.kernel;
  for (const std::string& why : report.plan.reasons) run.reasons += why + "\n";
  return run;
}

template <typename T>
Run run_loop(const CsrMatrix<double>& A, const std::vector<double>& b, bool jacobi,
             const BackendOptions& backend, GpuLoopAsk loop, const CgOptions& cg) {
  return run_loop_with<T>(A, b, jacobi ? "jacobi" : "none", backend, loop, cg);
}

// A preconditioner's report fact by key ("" where it has none).
inline std::string fact(const PrecondReport& report, const std::string& key) {
  for (const auto& [k, v] : report.facts)
    if (k == key) return v;
  return "";
}
template <typename T>
std::string fact(const Preconditioner<T>& M, const std::string& key) {
  return fact(M.report(), key);
}

// The SpMV backend's device CSR as the solver lends it to a preconditioner (solver.cpp,
// lend_device_matrix).
template <typename T>
CsrView<T> device_csr(const SpmvBackend<T>& backend) {
  const std::optional<Rows<T>> rows = backend.row_view();
  REQUIRE(rows);
  REQUIRE(rows->on_device);
  const auto* csr = std::get_if<CsrView<T>>(&rows->view);
  REQUIRE(csr);
  return *csr;
}

inline double true_relative_residual(const CsrMatrix<double>& A, const std::vector<double>& b,
                                     const std::vector<double>& x) {
  std::vector<double> r = multiply(A, x);
  for (std::size_t i = 0; i < r.size(); ++i) r[i] = b[i] - r[i];
  return norm2(r) / norm2(b);
}

}  // namespace cgs::gputest
