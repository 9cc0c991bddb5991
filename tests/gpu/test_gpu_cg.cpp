// GPU CG against CPU CG: the same solver code (solver/cg.hpp) on both devices must agree in
// status, iteration count (within a few) and solution (to the tolerance), for every format,
// plain and Jacobi, float and double, with rows sorted or not.
#include <array>
#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <numeric>
#include <set>

#include "formats/row_order.hpp"
#include "gpu_cg_util.hpp"
#include "solver/cpu_ops.hpp"
#include "solver/cuda/cuda_ops.hpp"
#include "solver/solve.hpp"

namespace cgs {
namespace {

using namespace gputest;

// Symmetric positive definite test systems -------------------------------------------------

// Assembles a symmetric matrix from undirected weighted edges: A = L(graph) + shift * I.
CsrMatrix<double> graph_laplacian(index_t n, const std::vector<std::array<double, 3>>& edges,
                                  double shift) {
  std::vector<std::map<index_t, double>> rows(n);
  for (index_t i = 0; i < n; ++i) rows[i][i] = shift;
  for (const auto& [a, b, w] : edges) {
    const index_t i = index_t(a), j = index_t(b);
    if (i == j) continue;
    rows[i][i] += w;
    rows[j][j] += w;
    rows[i][j] -= w;
    rows[j][i] -= w;
  }
  CsrMatrix<double> A;
  A.rows = A.cols = n;
  for (index_t i = 0; i < n; ++i) {
    for (const auto& [j, v] : rows[i]) {
      A.col_idx.push_back(j);
      A.values.push_back(v);
    }
    A.row_ptr.push_back(index_t(A.col_idx.size()));
  }
  return A;
}

CsrMatrix<double> laplacian_2d(index_t m) {
  std::vector<std::array<double, 3>> edges;
  for (index_t i = 0; i < m; ++i) {
    for (index_t j = 0; j < m; ++j) {
      const index_t k = i * m + j;
      if (j + 1 < m) edges.push_back({double(k), double(k + 1), 1.0});
      if (i + 1 < m) edges.push_back({double(k), double(k + m), 1.0});
    }
  }
  return graph_laplacian(m * m, edges, 1e-2);
}

// A hub joined to 2000 nodes (one row of 2001 entries) among nodes of degree 1-4.
CsrMatrix<double> hub_graph(index_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<index_t> node(0, n - 1);
  std::uniform_real_distribution<double> weight(0.5, 2.0);
  std::vector<std::array<double, 3>> edges;
  for (index_t k = 0; k < 2000; ++k) edges.push_back({0.0, double(node(rng)), weight(rng)});
  for (index_t i = 1; i < n; ++i) {
    const int degree = 1 + int(rng() % 3);
    for (int d = 0; d < degree; ++d) edges.push_back({double(i), double(node(rng)), weight(rng)});
  }
  return graph_laplacian(n, edges, 1.0);
}

// Water-network-like: a chain with a few loops, conductances over two orders of magnitude,
// rows of 2-4 entries.
CsrMatrix<double> water_network(index_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<std::array<double, 3>> edges;
  for (index_t i = 1; i < n; ++i) {
    edges.push_back({double(i - 1 - index_t(u(rng) * std::min<index_t>(i - 1, 3))), double(i),
                     std::pow(10.0, 2 * u(rng) - 1)});
  }
  for (index_t k = 0; k < n / 10; ++k) {
    const index_t i = index_t(u(rng) * n), j = index_t(u(rng) * n);
    edges.push_back({double(i), double(j), std::pow(10.0, 2 * u(rng) - 1)});
  }
  return graph_laplacian(n, edges, 0.1);
}

// Light runs (see light_level()): the smallest system only, still with every kernel.
std::vector<NamedMatrix> spd_matrices() {
  if (light_level() > 0) return {{"2D Laplacian 40x40", laplacian_2d(40)}};
  return {{"2D Laplacian 40x40", laplacian_2d(40)},
          {"hub graph n=5000", hub_graph(5000, 11)},
          {"water network n=3000", water_network(3000, 12)}};
}

// Running CG on either device -----------------------------------------------------------------

// b and x on the device, the generic loop (solver/generic_cg.hpp) as the CPU runs it.
template <typename T>
Run run_cg(const CsrMatrix<double>& A, const std::vector<double>& b, bool jacobi,
           const BackendOptions& backend_options, const CgOptions& cg_options) {
  return run_loop<T>(A, b, jacobi, backend_options, GpuLoopAsk::generic, cg_options);
}

struct GpuKernel {
  Format format;
  const char* kernel;
};

const std::vector<GpuKernel>& cg_kernels() {
  static const std::vector<GpuKernel> kernels = {{Format::csr, ""},
                                                 {Format::csr, "scalar"},
                                                 {Format::csr, "adaptive"},
                                                 {Format::csr, "cusparse"},
                                                 {Format::ell, ""},
                                                 {Format::hll, ""},
                                                 {Format::hll, "thread"},
                                                 {Format::coo, ""},
                                                 {Format::coo, "segscan-shfl"},
                                                 {Format::coo, "segscan-shared"}};
  return kernels;
}

template <typename T>
void compare_devices(const NamedMatrix& matrix, bool sorted, bool jacobi) {
  const CsrMatrix<double> A =
      sorted ? permute_symmetric(matrix.A, sort_rows_by_length(matrix.A)) : matrix.A;
  const std::vector<double> b = random_vector<double>(std::size_t(A.rows), 21);
  const bool is_double = sizeof(T) == 8;
  CgOptions cg;
  cg.tol = is_double ? 1e-10 : 1e-5;
  cg.max_iters = 20000;

  BackendOptions cpu;
  cpu.device = Device::serial;  // small systems: one thread is fastest and shares the machine
  const Run reference = run_cg<T>(A, b, jacobi, cpu, cg);
  REQUIRE(reference.result.status == CgStatus::converged);
  const double cpu_residual = true_relative_residual(A, b, reference.x);

  index_t width = 0;
  for (index_t r = 0; r < A.rows; ++r) width = std::max(width, A.row_length(r));
  const bool ell_refused = double(width) * A.rows > 10.0 * A.nnz();  // make_backend's ELL guard

  for (const GpuKernel& k : cg_kernels()) {
    if (k.format == Format::ell && ell_refused) continue;
    INFO(matrix.name << std::string(sorted ? ", sorted" : ", unsorted")
                     << std::string(jacobi ? ", Jacobi" : "") << ", "
                     << std::string(is_double ? "double" : "float") << ", " << to_string(k.format)
                     << "/" << std::string(k.kernel));
    BackendOptions gpu;
    gpu.device = Device::gpu;
    gpu.format = k.format;
    gpu.kernel = k.kernel;
    const Run run = run_cg<T>(A, b, jacobi, gpu, cg);
    const CgResult& r = run.result;
    INFO("GPU " << r.iterations << " iterations, CPU " << reference.result.iterations);
    CHECK(r.status == CgStatus::converged);
    const long slack = is_double ? 2 : std::max(5L, reference.result.iterations / 5);
    CHECK(std::abs(r.iterations - reference.result.iterations) <= slack);
    CHECK(r.converged_at == r.iterations);  // check_every = 1: stops right there
    const double residual = true_relative_residual(A, b, run.x);
    INFO("true residual GPU " << residual << ", CPU " << cpu_residual);
    if (is_double) {
      CHECK(residual <= 10 * cg.tol);
      CHECK(relative_difference(run.x, reference.x) <= 1e-5);
    } else {
      CHECK(residual <= 10 * std::max(cg.tol, cpu_residual));
    }
    // Timing: an event pair around every `every`-th SpMV of the loop (16: timing each cost
    // 15-20% of an iteration), inside the solve's own span.
    CHECK(r.spmv.every == 16);
    REQUIRE(r.spmv.samples.size() == std::size_t((r.iterations + r.spmv.every - 1) / r.spmv.every));
    const double spmv_total = std::accumulate(r.spmv.samples.begin(), r.spmv.samples.end(), 0.0);
    CHECK(spmv_total > 0);
    CHECK(r.solve_seconds >= spmv_total);
    for (double t : r.spmv.samples) CHECK(t > 0);
  }
}

TEST_CASE("GPU CG agrees with CPU CG: every format, plain and Jacobi, float and double") {
  CGS_REQUIRE_GPU_OR_SKIP();
  for (const NamedMatrix& matrix : spd_matrices()) {
    for (bool sorted : {false, true}) {
      for (bool jacobi : {false, true}) {
        compare_devices<double>(matrix, sorted, jacobi);
        if (light_level() < 2) compare_devices<float>(matrix, sorted, jacobi);
      }
    }
  }
}

TEST_CASE("GPU CG: reading the scalars every k iterations still reports the exact iteration") {
  CGS_REQUIRE_GPU_OR_SKIP();
  const CsrMatrix<double> A = light_level() < 2 ? hub_graph(5000, 31) : laplacian_2d(20);
  const std::vector<double> b = random_vector<double>(std::size_t(A.rows), 32);
  BackendOptions gpu;
  gpu.device = Device::gpu;
  CgOptions every;
  every.tol = 1e-10;
  every.record_history = true;
  const Run one = run_cg<double>(A, b, false, gpu, every);
  REQUIRE(one.result.status == CgStatus::converged);
  CHECK(one.result.residual_history.size() == std::size_t(one.result.iterations) + 1);

  for (int k : {2, 8, 16, 64}) {
    INFO("check_every " << k);
    CgOptions sparse = every;
    sparse.check_every = k;
    const Run run = run_cg<double>(A, b, false, gpu, sparse);
    CHECK(run.result.status == CgStatus::converged);
    CHECK(run.result.converged_at == one.result.converged_at);
    CHECK(run.result.iterations >= run.result.converged_at);
    CHECK(run.result.iterations <= run.result.converged_at + k - 1);
    // Deterministic reductions: the same history, bit for bit, up to convergence.
    REQUIRE(run.result.residual_history.size() >= one.result.residual_history.size());
    for (std::size_t i = 0; i < one.result.residual_history.size(); ++i) {
      CHECK(run.result.residual_history[i] == one.result.residual_history[i]);
    }
    CHECK(true_relative_residual(A, b, run.x) <= 1e-9);
  }
}

TEST_CASE("GPU CG: breakdown on an indefinite matrix, and b = 0, as on the CPU") {
  CGS_REQUIRE_GPU_OR_SKIP();
  CsrMatrix<double> A;  // diag(1, -1): p'Ap = 0 at the first iteration for b = (1, 1)
  A.rows = A.cols = 2;
  A.row_ptr = {0, 1, 2};
  A.col_idx = {0, 1};
  A.values = {1.0, -1.0};
  for (int k : {1, 4}) {
    CgOptions cg;
    cg.check_every = k;
    BackendOptions cpu, gpu;
    cpu.device = Device::serial;
    gpu.device = Device::gpu;
    const Run on_cpu = run_cg<double>(A, {1.0, 1.0}, false, cpu, cg);
    const Run on_gpu = run_cg<double>(A, {1.0, 1.0}, false, gpu, cg);
    CHECK(on_cpu.result.status == CgStatus::breakdown);
    CHECK(on_gpu.result.status == CgStatus::breakdown);
    CHECK(on_gpu.result.iterations == on_cpu.result.iterations);
    CHECK(on_gpu.x == on_cpu.x);  // x untouched by the broken iteration
  }
  BackendOptions gpu;
  gpu.device = Device::gpu;
  const Run zero = run_cg<float>(laplacian_2d(8), std::vector<double>(64, 0.0), true, gpu, {});
  CHECK(zero.result.status == CgStatus::zero_rhs);
  CHECK(zero.x == std::vector<double>(64, 0.0));
}

TEST_CASE("GPU solve_system matches the CPU path: sorted rows, Jacobi, float and double") {
  CGS_REQUIRE_GPU_OR_SKIP();
  const CsrMatrix<double> A = water_network(3000, 41);
  const std::vector<double> b = random_vector<double>(std::size_t(A.rows), 42);
  for (Precision precision : {Precision::double_, Precision::single}) {
    for (Format format : {Format::csr, Format::ell, Format::hll, Format::coo}) {
      INFO(to_string(format) << std::string(precision == Precision::single ? " float" : " double"));
      SolveRequest options;
      options.precision = precision;
      options.sort_rows = true;
      options.precond = parse_precond("jacobi");
      options.backend.format = format;
      options.cg.tol = precision == Precision::single ? 1e-5 : 1e-10;
      options.cg.check_every = 0;  // the device's default
      options.backend.device = Device::omp;
      options.backend.threads = 2;
      std::vector<double> x_cpu, x_gpu;
      const SolveReport cpu = solve_system(A, b, x_cpu, options);
      options.backend.device = Device::gpu;
      const SolveReport gpu = solve_system(A, b, x_gpu, options);
      INFO("backend " << gpu.backend_name << ": " << gpu.cg.iterations << " iterations (CPU "
                      << cpu.cg.iterations << "), converged at " << gpu.cg.converged_at);
      CHECK(gpu.cg.ok());
      CHECK((gpu.backend_name.find("cuda") != std::string::npos ||
             gpu.backend_name.find("cusparse") != std::string::npos));
      CHECK(std::abs(gpu.cg.converged_at - cpu.cg.converged_at) <=
            (precision == Precision::single ? std::max(5L, cpu.cg.converged_at / 5) : 2));
      CHECK(gpu.true_relative_residual <=
            10 * std::max(options.cg.tol, cpu.true_relative_residual));
      // Every loop times its SpMV (the fused ones the pass that holds it).
      CHECK(gpu.spmv.measured);
      CHECK(gpu.spmv.median > 0);
      CHECK(gpu.spmv_gflops() > 0);
      CHECK(is_fused(gpu.plan.loop));  // every format has a row function now
    }
  }
}

}  // namespace
}  // namespace cgs
