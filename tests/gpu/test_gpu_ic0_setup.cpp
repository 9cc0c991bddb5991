// IC(0)'s set-up on the GPU, checked against the host's:
//   - the device set-up itself (solver/precond/ic0_gpu.cu, ic0_gpu.hpp) on a 5-point grid in
//     natural order, random SPD matrices with irregular rows (n = 1013, not a multiple of 32),
//     rows without off-diagonal entries, one long row, n = 1: L's pattern the host's arrays, its
//     values and diagonal the host's factor (ic0_factor_on_host) to 1e-12 entrywise (the device
//     rounds each operation as the host does: 0 expected), both schedules the host's
//     (solve_levels: the same rows, levels and offsets, so each row's level too), with A read in
//     place as the SpMV backend lends it or uploaded; a refactorisation in the stored schedule
//     gives analyze's factor bit for bit;
//   - a matrix whose IC(0) breaks down: the same shift as the host's, the same factor;
//   - a pattern that is not symmetric: the device declines and the host's set-up runs;
//   - the preconditioner with the device set-up forced on small systems
//     (Tuning::ic0_device_rows = 0): one apply z = M^-1 r equal to the host program's (omp, level
//     by level) to 1e-12 relative in double (1e-4 in float), the same levels and shift facts;
//     set_values equal to a fresh device set-up on the new values, bit for bit;
//   - from 200,000 rows without forcing: the program on the device set-up's buffers (250,000-row
//     grid), smaller systems the host's set-up and the packed copy;
//   - CG through the solver on a 600x600 grid (rows in the file's order: the planner skips RCM
//     there), the default and the generic GPU loops, with the device set-up (A lent by the SpMV
//     backend), in the CPU team's iterations within 2%.
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "base/tuning.hpp"
#include "gpu_cg_util.hpp"
#include "spmv/device_buffer.hpp"
#include "solver/precond/ic0_gpu.hpp"
#include "solver/precond/preconditioner.hpp"
#include "solver/precond/sparse_parts.hpp"
#include "solver/precond/spectrum_gpu.hpp"

namespace cgs {
namespace {

using namespace gputest;

// Tuning::ic0_device_rows set for the scope (the rows from which ic0 sets up on the device),
// the previous tuning restored after.
struct DeviceRows : ScopedTuning {
  explicit DeviceRows(index_t rows)
      : ScopedTuning(tuning_with([&](Tuning& t) { t.ic0_device_rows = rows; })) {}
};

// The largest entrywise difference over the largest entry of the reference.
double entrywise_relative(const std::vector<double>& a, const std::vector<double>& b) {
  REQUIRE(a.size() == b.size());
  double diff = 0, scale = 0;
  for (std::size_t k = 0; k < a.size(); ++k) {
    diff = std::max(diff, std::abs(a[k] - b[k]));
    scale = std::max(scale, std::abs(b[k]));
  }
  return scale > 0 ? diff / scale : diff;
}

// A's symmetric pattern with every `every`-th row's couplings dropped (both ways): rows with no
// off-diagonal entry, each level 0 of both solves.
CsrMatrix<double> with_isolated_rows(const CsrMatrix<double>& A, index_t every) {
  std::vector<index_t> rows, cols;
  std::vector<double> vals;
  for (index_t i = 0; i < A.rows; ++i)
    for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
      const index_t j = A.col_idx[k];
      if (i != j && (i % every == 0 || j % every == 0)) continue;
      rows.push_back(i);
      cols.push_back(j);
      vals.push_back(A.values[k]);
    }
  return csr_from_triplets(A.rows, A.cols, rows, cols, vals);
}

// Not an M-matrix: off-diagonal -2 against a diagonal of 4, so a pivot fails without a shift
// (as tests/solver/test_ic0_setup.cpp).
CsrMatrix<double> breaking_down(index_t m) {
  CsrMatrix<double> A = testing::poisson2d(m);
  for (index_t i = 0; i < A.rows; ++i)
    for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
      if (A.col_idx[k] != i) A.values[k] = -2.0;
  return A;
}

struct System {
  std::string name;
  CsrMatrix<double> A;
};

std::vector<System> systems() {
  return {
      {"poisson 70x70, natural order", testing::poisson2d(70)},
      {"random SPD 1013", testing::random_spd(1013, 4, 41)},
      {"irregular SPD 1013 (a hub row)", testing::irregular_spd(1013, 500, 7, 41)},
      {"rows without off-diagonal entries", with_isolated_rows(testing::random_spd(999, 3, 5), 4)},
      {"one long row (hub and chain, 1000)", testing::hub_and_chain(1000)},
      {"n = 33", testing::random_spd(33, 3, 9)},
      {"n = 1", testing::poisson2d(1)}};
}

// A's CSR arrays on the device, as the SpMV backend would lend them.
struct DeviceA {
  explicit DeviceA(const CsrMatrix<double>& A)
      : row_ptr(Device::gpu, A.row_ptr),
        col_idx(Device::gpu, A.col_idx),
        values(Device::gpu, A.values) {}
  precond::CsrArrays arrays() const {
    return {row_ptr.data(), col_idx.data(), values.data(), std::int64_t(values.size())};
  }
  DeviceBuffer<index_t> row_ptr, col_idx;
  DeviceBuffer<double> values;
};

// Each row's level in a schedule.
std::vector<index_t> level_of_rows(const precond::LevelSchedule& s, index_t n) {
  std::vector<index_t> level(std::size_t(n), -1);
  for (index_t l = 0; l < s.levels(); ++l)
    for (index_t q = s.start[std::size_t(l)]; q < s.start[std::size_t(l) + 1]; ++q)
      level[std::size_t(s.rows[std::size_t(q)])] = l;
  return level;
}

void check_schedule(const precond::LevelSchedule& device, const precond::LevelSchedule& host,
                    index_t n) {
  CHECK(device.levels() == host.levels());
  CHECK(device.start == host.start);
  CHECK(device.rows == host.rows);  // each level's rows in the host's order
  CHECK(level_of_rows(device, n) == level_of_rows(host, n));
}

// The device's factor against the host's: the same pattern, values and diagonal to 1e-12.
void check_factor(const precond::Ic0Gpu<double>& gpu, const precond::Ic0HostFactor& host) {
  const CsrMatrix<double> L = gpu.download_lower();
  CHECK(L.row_ptr == host.lower.row_ptr);
  CHECK(L.col_idx == host.lower.col_idx);
  const double values = entrywise_relative(L.values, host.lower.values);
  const double pivots = entrywise_relative(gpu.download_pivot(), host.pivot);
  INFO("L's values differ by " << values << ", its diagonal by " << pivots);
  CHECK(values <= 1e-12);
  CHECK(pivots <= 1e-12);
}

TEST_CASE("GPU ic0 device set-up: the factor and both schedules are the host's") {
  CGS_REQUIRE_GPU_OR_SKIP();
  for (const System& s : systems()) {
    CAPTURE(s.name);
    const CsrMatrix<double>& A = s.A;
    const precond::Ic0HostFactor host = precond::ic0_factor_on_host(A);
    REQUIRE(host.alpha == 0);  // SPD, diagonally dominant: no shift
    const auto [forward, backward] = precond::solve_levels(A);
    const DeviceA lent(A);
    for (const bool in_place : {false, true}) {
      CAPTURE(in_place);
      auto gpu = precond::make_ic0_gpu<double>();
      const precond::CsrArrays on_device = in_place ? lent.arrays() : precond::CsrArrays{};
      REQUIRE(gpu->analyze(A, on_device));
      CHECK(gpu->analyze_factor_ok());
      CHECK(gpu->lower_nnz() == host.lower.nnz());
      check_factor(*gpu, host);
      check_schedule(gpu->download_forward(), forward, A.rows);
      check_schedule(gpu->download_backward(), backward, A.rows);
      // Again in the stored schedule (set_values' path): the same bits as the levels' pass.
      const std::vector<double> first = gpu->download_lower().values;
      const std::vector<double> first_pivot = gpu->download_pivot();
      REQUIRE(gpu->factorize(A, on_device, 0));
      CHECK(gpu->download_lower().values == first);
      CHECK(gpu->download_pivot() == first_pivot);
    }
  }
}

TEST_CASE("GPU ic0 device set-up: a breakdown takes the host's shift and factor") {
  CGS_REQUIRE_GPU_OR_SKIP();
  const CsrMatrix<double> A = breaking_down(30);
  const precond::Ic0HostFactor host = precond::ic0_factor_on_host(A);
  REQUIRE(host.alpha > 0);
  auto gpu = precond::make_ic0_gpu<double>();
  REQUIRE(gpu->analyze(A, {}));
  CHECK_FALSE(gpu->analyze_factor_ok());
  double alpha = 0;
  bool ok = false;
  while (!ok && alpha < host.alpha) {
    alpha = precond::next_ic0_shift(alpha);
    ok = gpu->factorize(A, {}, alpha);
  }
  CHECK(ok);
  CHECK(alpha == host.alpha);
  check_factor(*gpu, host);

  // Through the preconditioner, forced onto the device: the host's fact and apply.
  const DeviceRows forced(0);
  auto device = make_preconditioner<double>(parse_precond("ic0"), Device::gpu, 1);
  device->analyze(A);
  auto cpu = make_preconditioner<double>(parse_precond("ic0"), Device::omp, 2);
  cpu->analyze(A);
  CHECK(fact(*device, "set-up on") == "the device");
  CHECK(fact(*device, "diagonal shift") == fact(*cpu, "diagonal shift"));
  CHECK(fact(*device, "diagonal shift") != "none");
}

TEST_CASE("GPU ic0 device set-up: a pattern that is not symmetric is left to the host") {
  CGS_REQUIRE_GPU_OR_SKIP();
  const CsrMatrix<double> grid = testing::poisson2d(20);
  std::vector<index_t> rows, cols;
  std::vector<double> vals;
  for (index_t i = 0; i < grid.rows; ++i)
    for (index_t k = grid.row_ptr[i]; k < grid.row_ptr[i + 1]; ++k) {
      rows.push_back(i);
      cols.push_back(grid.col_idx[k]);
      vals.push_back(grid.values[k]);
    }
  rows.push_back(3);  // (3, 250) without (250, 3): only ic0's L^T by a transpose reads it right
  cols.push_back(250);
  vals.push_back(-0.25);
  const CsrMatrix<double> A = csr_from_triplets(grid.rows, grid.cols, rows, cols, vals);
  auto gpu = precond::make_ic0_gpu<double>();
  CHECK_FALSE(gpu->analyze(A, {}));
  const DeviceRows forced(0);
  auto device = make_preconditioner<double>(parse_precond("ic0"), Device::gpu, 1);
  device->analyze(A);
  CHECK(fact(*device, "set-up on") == "the host (A's pattern is not symmetric)");
}

// One apply of `device` against `host`'s on the same r.
template <typename T>
double apply_difference(Preconditioner<T>& device, Preconditioner<T>& host, index_t n) {
  const std::vector<double> r64 = random_vector<double>(std::size_t(n), 23);
  const std::vector<T> r(r64.begin(), r64.end());
  std::vector<T> z_host(r.size());
  host.apply(r.data(), z_host.data());
  DeviceBuffer<T> r_gpu(Device::gpu, r), z_gpu(Device::gpu, r.size());
  device.apply(r_gpu.data(), z_gpu.data());
  const std::vector<T> z = z_gpu.download();
  return relative_difference(std::vector<double>(z.begin(), z.end()),
                             std::vector<double>(z_host.begin(), z_host.end()));
}

template <typename T>
std::vector<T> device_applied(Preconditioner<T>& device, index_t n) {
  const std::vector<double> r64 = random_vector<double>(std::size_t(n), 29);
  const std::vector<T> r(r64.begin(), r64.end());
  DeviceBuffer<T> r_gpu(Device::gpu, r), z_gpu(Device::gpu, r.size());
  device.apply(r_gpu.data(), z_gpu.data());
  return z_gpu.download();
}

// A's diagonal raised: new values on the same pattern, a new factor.
CsrMatrix<double> raised_diagonal(CsrMatrix<double> B) {
  for (index_t i = 0; i < B.rows; ++i)
    for (index_t k = B.row_ptr[i]; k < B.row_ptr[i + 1]; ++k)
      if (B.col_idx[k] == i) B.values[k] *= 1.5;
  return B;
}

template <typename T>
void check_forced_apply(const CsrMatrix<double>& A, double tolerance) {
  const DeviceRows forced(0);
  auto host = make_preconditioner<T>(parse_precond("ic0"), Device::omp, 2);
  host->analyze(A);
  auto gpu = make_preconditioner<T>(parse_precond("ic0"), Device::gpu, 1);
  gpu->analyze(A);
  CHECK(fact(*gpu, "set-up on") == "the device");
  CHECK(fact(*gpu, "program arrays") == "its own device buffers, read in place");
  CHECK(fact(*gpu, "levels") == fact(*host, "levels"));
  CHECK(fact(*gpu, "diagonal shift") == fact(*host, "diagonal shift"));
  CHECK(gpu->program_size() == host->program_size());
  CHECK(apply_difference(*gpu, *host, A.rows) <= tolerance);
  // set_values: the host's again, and a fresh device set-up's on the new values, bit for bit.
  const CsrMatrix<double> B = raised_diagonal(A);
  host->set_values(B);
  gpu->set_values(B);
  CHECK(apply_difference(*gpu, *host, A.rows) <= tolerance);
  auto fresh = make_preconditioner<T>(parse_precond("ic0"), Device::gpu, 1);
  fresh->analyze(B);
  CHECK(device_applied(*gpu, A.rows) == device_applied(*fresh, A.rows));
}

TEST_CASE("GPU ic0 device set-up forced on small systems: the apply is the host program's") {
  CGS_REQUIRE_GPU_OR_SKIP();
  SUBCASE("double, each system") {
    for (const System& s : systems()) {
      CAPTURE(s.name);
      check_forced_apply<double>(s.A, 1e-12);
    }
  }
  SUBCASE("float") { check_forced_apply<float>(testing::irregular_spd(1013, 500, 7, 41), 1e-4); }
  SUBCASE("a breakdown (shifted)") { check_forced_apply<double>(breaking_down(30), 1e-12); }
}

template <typename T>
void check_ic0_apply(const CsrMatrix<double>& A, const std::string& setup,
                     const std::string& arrays, double tolerance) {
  const std::vector<double> r64 = random_vector<double>(std::size_t(A.rows), 23);
  const std::vector<T> r(r64.begin(), r64.end());
  auto host = make_preconditioner<T>(parse_precond("ic0"), Device::omp, 2);
  host->analyze(A);
  auto gpu = make_preconditioner<T>(parse_precond("ic0"), Device::gpu, 1);
  gpu->analyze(A);
  CHECK(fact(*gpu, "set-up on") == setup);
  CHECK(fact(*gpu, "program arrays") == arrays);
  CHECK(fact(*gpu, "levels") == fact(*host, "levels"));
  CHECK(gpu->program_size() == host->program_size());
  CHECK(apply_difference(*gpu, *host, A.rows) <= tolerance);
  const CsrMatrix<double> B = raised_diagonal(A);
  host->set_values(B);
  gpu->set_values(B);
  CHECK(apply_difference(*gpu, *host, A.rows) <= tolerance);
}

TEST_CASE("GPU ic0 set-up: from 200,000 rows on the device, below on the host") {
  CGS_REQUIRE_GPU_OR_SKIP();
  const CsrMatrix<double> grid = testing::poisson2d(500);
  REQUIRE(grid.rows >= precond::ic0_device_setup_rows());
  REQUIRE(precond::worth_device_setup(grid.rows));
  const CsrMatrix<double> small = testing::random_spd(1013, 4, 41);
  REQUIRE(small.rows < precond::ic0_device_setup_rows());
  const std::string own = "its own device buffers, read in place";
  SUBCASE("double, 250,000 rows") { check_ic0_apply<double>(grid, "the device", own, 1e-12); }
  SUBCASE("float, 250,000 rows") { check_ic0_apply<float>(grid, "the device", own, 1e-4); }
  SUBCASE("double, 1,013 rows (packed)") {
    check_ic0_apply<double>(small, "the host", "packed copy", 1e-12);
  }
}

TEST_CASE("GPU ic0 set-up: CG with ic0 on a grid takes the CPU's iterations") {
  CGS_REQUIRE_GPU_OR_SKIP();
  if (testing::light_level() > 0) return;  // compute-sanitizer: the apply tests above suffice
  const CsrMatrix<double> A = testing::poisson2d(600);
  const std::vector<double> b = random_vector<double>(std::size_t(A.rows), 31);
  CgOptions cg;
  cg.tol = 1e-8;
  cg.max_iters = 20000;
  auto solve = [&](Device device, GpuLoopAsk loop, std::vector<double>& x) {
    SolveRequest r;
    r.backend.device = device;
    r.backend.threads = device == Device::omp ? 2 : 0;
    r.cpu_loop = CpuLoopAsk::team;
    r.precond = parse_precond("ic0");
    r.gpu_loop = loop;
    r.cg = cg;
    auto solver = make_solver(make_plan(r, A));
    solver->analyze(A);
    return solver->solve(b, x);
  };
  std::vector<double> x_cpu;
  const SolveReport cpu = solve(Device::omp, GpuLoopAsk::automatic, x_cpu);
  REQUIRE(cpu.cg.status == CgStatus::converged);
  CHECK_FALSE(cpu.plan.rcm);  // a grid in natural order: the file's order
  CHECK(fact(cpu.precond, "set-up on") == "the host");
  const long its = cpu.cg.iterations;
  for (GpuLoopAsk loop : {GpuLoopAsk::automatic, GpuLoopAsk::generic}) {
    CAPTURE(to_string(loop));
    std::vector<double> x;
    const SolveReport gpu = solve(Device::gpu, loop, x);
    INFO("GPU " << gpu.cg.iterations << " iterations, CPU " << its);
    CHECK(fact(gpu.precond, "set-up on") == "the device");
    CHECK(gpu.cg.status == CgStatus::converged);
    CHECK(std::abs(gpu.cg.iterations - its) <= std::max(2L, long(std::ceil(0.02 * double(its)))));
    CHECK(true_relative_residual(A, b, x) <= 10 * cg.tol);
  }
}

}  // namespace
}  // namespace cgs
