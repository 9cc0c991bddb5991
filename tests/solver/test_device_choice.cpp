// --device auto (solver/device_choice.hpp): the decision from its figures (the GPU only where its
// forecast, fixed cost included, is below the CPU's; chol's forecast on a network's graph; the
// CPU without a GPU or where the CPU's probe solved the system), and the whole path on a machine
// without a GPU: the CPU, the reason in the plan, the answer the CPU's.
#include <doctest/doctest.h>

#include <limits>
#include <string>

#include "solver/device_choice.hpp"
#include "solver/solve.hpp"
#include "spmv/cuda/cuda_backends.hpp"
#include "test_matrices.hpp"

using namespace cgs;

namespace {

DeviceFigures figures(double fixed, double cpu_iteration, double gpu_iteration, double iterations) {
  DeviceFigures f;
  f.gpu_fixed = fixed;
  f.cpu_iteration = cpu_iteration;
  f.gpu_iteration = gpu_iteration;
  f.iterations = iterations;
  f.cpu_measured = true;
  return f;
}

}  // namespace

TEST_CASE("--device auto: the GPU only where its forecast, fixed cost included, is the smaller") {
  // 1,000 iterations: 1 s on the CPU against 0.1 + 0.01 s on the GPU.
  DeviceChoice c = decide_device(figures(0.1, 1e-3, 1e-5, 1000));
  CHECK(c.device == Device::gpu);
  CHECK(c.why.find("device: gpu") == 0);
  CHECK(c.why.find("forecast 1e+03 ms on the CPU against 110 ms on the GPU") != std::string::npos);
  // 50 iterations: 50 ms on the CPU, 100.5 ms on the GPU (its fixed cost decides).
  c = decide_device(figures(0.1, 1e-3, 1e-5, 50));
  CHECK(c.device == Device::omp);
  CHECK(c.why.find("device: cpu") == 0);
  // At the break-even (fixed = iterations x the saving) the CPU: the GPU must win.
  c = decide_device(figures(0.099, 1e-3, 1e-5, 100));
  CHECK(c.device == Device::omp);
  c = decide_device(figures(0.098, 1e-3, 1e-5, 100));
  CHECK(c.device == Device::gpu);
}

TEST_CASE("--device auto: AMG's forecast on each device, the GPU's fixed cost on top") {
  DeviceFigures f = figures(0.34, 1e-3, 5e-5, std::numeric_limits<double>::infinity());
  f.amg_cpu = 0.30;  // gen:poisson2d:1000 on 16 cores: 0.3 s; on the GPU 0.03 s + its context
  f.amg_gpu = 0.03;
  DeviceChoice c = decide_device(f);
  CHECK(c.device == Device::omp);
  CHECK(c.why.find("AMG's forecast 300 ms on the CPU, 30 ms on the GPU") != std::string::npos);
  f.gpu_fixed = 0.02;  // the context made while the input was read
  c = decide_device(f);
  CHECK(c.device == Device::gpu);
  CHECK(c.why.find("forecast 300 ms on the CPU against 50 ms on the GPU") != std::string::npos);
  // Jacobi's probe, where it ran, is a candidate beside AMG on both.
  f.iterations = 100;  // 0.1 s on the CPU: below AMG's 0.3 s, still above the GPU's 0.025 s
  CHECK(decide_device(f).device == Device::gpu);
  f.iterations = 10;  // 0.01 s on the CPU against the GPU's 0.0205 s
  CHECK(decide_device(f).device == Device::omp);
}

TEST_CASE("--device auto: a network's graph is held at chol's forecast on each device") {
  // Jacobi alone would go to the GPU (5,000 iterations: 0.1 s against 0.02 + 0.05 s) ...
  DeviceFigures f = figures(0.02, 2e-5, 1e-5, 5000);
  CHECK(decide_device(f).device == Device::gpu);
  // ... but chol solves on the CPU in 10 ms, and on the GPU in 30 ms besides its fixed cost.
  f.chol_cpu = 0.01;
  f.chol_gpu = 0.03;
  const DeviceChoice c = decide_device(f);
  CHECK(c.device == Device::omp);
  CHECK(c.why.find("chol's forecast 10 ms on the CPU, 30 ms on the GPU") != std::string::npos);
}

TEST_CASE("--device auto: the CPU without a GPU, or where its probe solved the system") {
  DeviceFigures f = figures(0.1, 1e-3, 1e-5, 1e6);
  f.no_gpu = "the CUDA driver reports no device";
  DeviceChoice c = decide_device(f);
  CHECK(c.device == Device::omp);
  CHECK(c.why == "device: cpu (--device auto: no GPU: the CUDA driver reports no device)");
  f.no_gpu.clear();
  f.solved_by_probe = true;
  c = decide_device(f);
  CHECK(c.device == Device::omp);
  CHECK(c.why.find("Jacobi's probe solved the system on the CPU") != std::string::npos);
  // No forecast on either (a residual that did not fall): the faster iteration decides.
  f.solved_by_probe = false;
  f.iterations = std::numeric_limits<double>::infinity();
  CHECK(decide_device(f).device == Device::gpu);
  f.gpu_iteration = 2e-3;
  CHECK(decide_device(f).device == Device::omp);
}

TEST_CASE("--device auto without a GPU: the CPU's plan, its reason and its answer") {
  std::string why;
  if (cuda_device_present(&why)) {
    MESSAGE("skipped: a GPU is present (tests/gpu/test_gpu_device_auto.cpp covers it)");
    return;
  }
  const CsrMatrix<double> A = testing::poisson2d(30);
  const std::vector<double> b = multiply(A, std::vector<double>(std::size_t(A.rows), 1.0));
  SolveRequest request;
  request.device_auto = true;
  request.precond = parse_precond("jacobi");
  request.cg.tol = 1e-10;
  // One CPU loop for both solves: the automatic choice is timed, and under load the team's
  // sums (another order) can win one run and not the other.
  request.cpu_loop = CpuLoopAsk::serial;
  std::vector<double> x;
  const SolveReport r = solve_system(A, b, x, request);
  REQUIRE(r.cg.ok());
  CHECK(r.plan.device == Device::omp);
  REQUIRE(!r.plan.reasons.empty());
  CHECK(r.plan.reasons.front() == "device: cpu (--device auto: no GPU: " + why + ")");
  CHECK(!why.empty());
  // The same answer, bit for bit, as --device cpu asked for.
  request.device_auto = false;
  std::vector<double> x_cpu;
  const SolveReport cpu = solve_system(A, b, x_cpu, request);
  CHECK(cpu.cg.iterations == r.cg.iterations);
  CHECK(x_cpu == x);
}
