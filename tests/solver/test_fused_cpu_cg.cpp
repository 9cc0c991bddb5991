// The fused CPU CG loops (solver/fused/cpu_loop.hpp: serial, and the OpenMP team) against the
// generic loop of solver/generic_cg.hpp on the same backend, and against the known solution.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "formats/row_order.hpp"
#include "solver/fused/cpu_loop.hpp"
#include "solver/generic_cg.hpp"
#include "solver/solve.hpp"
#include "test_matrices.hpp"

using namespace cgs;
using namespace cgs::testing;

namespace {

// One way to run CG on a CPU backend: the generic loop, or a fused one.
struct LoopCase {
  const char* name;
  Device device;
  int threads;
  bool fused;
  bool team = false;
};

const LoopCase kGeneric{"generic serial", Device::serial, 1, false};
const LoopCase kFusedLoops[] = {{"fused serial device", Device::serial, 1, true},
                                {"fused serial on OpenMP", Device::omp, 2, true, false},
                                {"fused team of 2", Device::omp, 2, true, true},
                                {"fused team of 5", Device::omp, 5, true, true}};

struct Run {
  CgResult cg;
  std::vector<double> x;
  std::string loop;
};

// Solves A x = b in precision T from x0 with the loop, on a backend of the format.
template <typename T>
Run run_loop(const LoopCase& loop, const CsrMatrix<double>& A, Format format, bool jacobi,
             const std::vector<double>& b, const std::vector<double>& x0, CgOptions cg,
             index_t hll_tail = -1, index_t hll_sigma = -1) {
  BackendOptions bo;
  bo.hll_tail = hll_tail;
  bo.hll_sigma = hll_sigma;
  bo.format = format;
  bo.device = loop.device;
  bo.threads = loop.threads;
  bo.hack_size = 4;  // several hacks, the last one partial, also on small matrices
  auto backend = make_backend(cast_values<T>(A), bo);
  const std::size_t n = b.size();
  if (cg.max_iters <= 0) cg.max_iters = 10 * long(n);
  auto M =
      make_preconditioner<T>(parse_precond(jacobi ? "jacobi" : "none"), loop.device, loop.threads);
  M->analyze(A);
  std::vector<T> b_t(b.begin(), b.end()), x(x0.begin(), x0.end());
  Run run;
  if (loop.fused) {
    const std::optional<Rows<T>> rows = backend->row_view();
    REQUIRE(rows);
    run.cg =
        fused_cpu_conjugate_gradient(*rows, index_t(n), *M, b_t.data(), x.data(), cg, loop.team);
    run.loop = loop.team ? "fused-team" : "fused-serial";
  } else {
    auto ops = make_vector_ops<T>(loop.device, n, loop.threads);
    DeviceVector<T> b_dev(*ops, n), x_dev(*ops, n);
    ops->upload(b_t.data(), b_dev.data(), n);
    ops->upload(x.data(), x_dev.data(), n);
    run.cg = generic_conjugate_gradient(*backend, *M, *ops, b_dev.data(), x_dev.data(), cg);
    ops->download(x_dev.data(), x.data(), n);
    run.loop = "generic";
  }
  run.x.assign(x.begin(), x.end());
  return run;
}

double relative_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff += (a[i] - b[i]) * (a[i] - b[i]);
    norm += b[i] * b[i];
  }
  return std::sqrt(diff / std::max(norm, 1e-300));
}

// Poisson 2D with row and column `gone` emptied: singular, but consistent when b_gone = 0 (CG
// never touches that entry of x).
CsrMatrix<double> poisson_with_empty_row(index_t m, index_t gone) {
  const CsrMatrix<double> P = poisson2d(m);
  std::vector<index_t> rows, cols;
  std::vector<double> vals;
  for (index_t r = 0; r < P.rows; ++r)
    for (index_t k = P.row_ptr[r]; k < P.row_ptr[r + 1]; ++k)
      if (r != gone && P.col_idx[k] != gone) {
        rows.push_back(r);
        cols.push_back(P.col_idx[k]);
        vals.push_back(P.values[k]);
      }
  return csr_from_triplets(P.rows, P.cols, rows, cols, vals);
}

struct System {
  std::string name;
  CsrMatrix<double> A;
  std::vector<double> x_star;
  bool jacobi_possible = true;
};

std::vector<System> systems() {
  std::vector<System> s;
  s.push_back({"n = 1", CsrMatrix<double>{1, 1, {0, 1}, {0}, {4.0}}, {0.75}});
  s.push_back({"n = 33", random_spd(33, 3, 41), random_vector(33, 42)});
  s.push_back({"random SPD 300", random_spd(300, 6, 43), random_vector(300, 44)});
  const CsrMatrix<double> P = poisson2d(9);
  const RowPermutation order = sort_rows_by_length(P);
  s.push_back({"poisson 9x9, rows sorted", permute_symmetric(P, order), random_vector(81, 45)});
  std::vector<double> x_gone = random_vector(49, 46);
  x_gone[20] = 0;  // the solution CG finds from x0 = 0: that entry never moves
  s.push_back({"poisson 7x7 with an empty row", poisson_with_empty_row(7, 20), x_gone, false});
  return s;
}

}  // namespace

TEST_CASE("fused CPU loops: every format, Jacobi or not, float or double, match the generic loop") {
  for (const System& sys : systems())
    for (Format format : {Format::coo, Format::csr, Format::ell, Format::hll})
      for (bool jacobi : {false, true})
        for (bool single : {false, true}) {
          if (jacobi && !sys.jacobi_possible) continue;
          CAPTURE(sys.name);
          CAPTURE(to_string(format));
          CAPTURE(jacobi);
          CAPTURE(single);
          const std::vector<double> b = multiply(sys.A, sys.x_star);
          const std::vector<double> x0(b.size(), 0.0);
          CgOptions cg;
          cg.tol = single ? 1e-5 : 1e-11;
          cg.record_history = true;
          auto run = [&](const LoopCase& loop) {
            return single ? run_loop<float>(loop, sys.A, format, jacobi, b, x0, cg)
                          : run_loop<double>(loop, sys.A, format, jacobi, b, x0, cg);
          };
          const Run generic = run(kGeneric);
          REQUIRE(generic.cg.status == CgStatus::converged);
          for (const LoopCase& loop : kFusedLoops) {
            CAPTURE(std::string(loop.name));
            const Run fused = run(loop);
            REQUIRE(fused.cg.status == CgStatus::converged);
            // Same steps: the same iteration, up to rounding in the order of the dot products.
            CHECK(std::abs(fused.cg.converged_at - generic.cg.converged_at) <= (single ? 3 : 1));
            CHECK(fused.cg.iterations == fused.cg.converged_at);
            CHECK(fused.cg.residual_history.size() == std::size_t(fused.cg.iterations) + 1);
            CHECK(fused.cg.residual_history.front() == doctest::Approx(generic.cg.rhs_norm));
            CHECK(fused.cg.residual_norm <= cg.tol * fused.cg.rhs_norm);
            CHECK(fused.cg.spmv.measured());  // the SpMV pass, timed inside the loop
            // And the answer: the generic loop's, and x* (all these are well conditioned).
            CHECK(relative_difference(fused.x, generic.x) <= (single ? 1e-4 : 1e-9));
            CHECK(relative_difference(fused.x, sys.x_star) <= (single ? 1e-3 : 1e-8));
          }
        }
}

TEST_CASE("fused CPU loops: HLL with a HYB tail walks each row's tail, as the generic loop") {
  std::vector<System> all = systems();
  all.push_back({"hub and chain 301", hub_and_chain(301), random_vector(301, 47)});
  for (const System& sys : all)
    for (index_t tail : {0, 2}) {
      CAPTURE(sys.name);
      CAPTURE(tail);
      const std::vector<double> b = multiply(sys.A, sys.x_star);
      const std::vector<double> x0(b.size(), 0.0);
      CgOptions cg;
      cg.tol = 1e-11;
      const bool jacobi = sys.jacobi_possible;
      const Run generic = run_loop<double>(kGeneric, sys.A, Format::csr, jacobi, b, x0, cg);
      REQUIRE(generic.cg.status == CgStatus::converged);
      for (const LoopCase& loop : kFusedLoops) {
        CAPTURE(std::string(loop.name));
        const Run fused = run_loop<double>(loop, sys.A, Format::hll, jacobi, b, x0, cg, tail);
        REQUIRE(fused.cg.status == CgStatus::converged);
        CHECK(std::abs(fused.cg.converged_at - generic.cg.converged_at) <= 1);
        CHECK(relative_difference(fused.x, sys.x_star) <= 1e-8);
      }
    }
}

// Sorted HLL (SELL-C-sigma, hacks of 4): the walkers finish whole windows in row order, the
// serial loop's chunks and the team's parts are whole windows. Windows of 8 and 12 rows (n = 33
// and 81 not multiples), one past n, and the choice from the row lengths (the hub row sorts).
TEST_CASE("fused CPU loops: HLL sorted in windows converges as the generic loop") {
  std::vector<System> all = systems();
  all.push_back({"hub and chain 301", hub_and_chain(301), random_vector(301, 48)});
  for (const System& sys : all)
    for (index_t sigma : {-1, 8, 12, 4096})
      for (index_t tail : {-1, 0, 2}) {
        CAPTURE(sys.name);
        CAPTURE(sigma);
        CAPTURE(tail);
        const std::vector<double> b = multiply(sys.A, sys.x_star);
        const std::vector<double> x0(b.size(), 0.0);
        CgOptions cg;
        cg.tol = 1e-11;
        const bool jacobi = sys.jacobi_possible;
        const Run generic = run_loop<double>(kGeneric, sys.A, Format::csr, jacobi, b, x0, cg);
        REQUIRE(generic.cg.status == CgStatus::converged);
        for (const LoopCase& loop : kFusedLoops) {
          CAPTURE(std::string(loop.name));
          const Run fused =
              run_loop<double>(loop, sys.A, Format::hll, jacobi, b, x0, cg, tail, sigma);
          REQUIRE(fused.cg.status == CgStatus::converged);
          CHECK(std::abs(fused.cg.converged_at - generic.cg.converged_at) <= 1);
          CHECK(relative_difference(fused.x, sys.x_star) <= 1e-8);
        }
      }
}

TEST_CASE("fused CPU loops: the residual history follows the generic loop's, step by step") {
  const CsrMatrix<double> A = random_spd(500, 5, 51);
  const std::vector<double> b = multiply(A, random_vector(500, 52));
  const std::vector<double> x0 = random_vector(500, 53);  // an initial guess, too
  CgOptions cg;
  cg.tol = 1e-12;
  cg.record_history = true;
  for (Format format : {Format::coo, Format::csr, Format::ell, Format::hll})
    for (bool jacobi : {false, true}) {
      CAPTURE(to_string(format));
      CAPTURE(jacobi);
      const Run generic = run_loop<double>(kGeneric, A, format, jacobi, b, x0, cg);
      for (const LoopCase& loop : kFusedLoops) {
        CAPTURE(std::string(loop.name));
        const Run fused = run_loop<double>(loop, A, format, jacobi, b, x0, cg);
        REQUIRE(fused.cg.converged_at == generic.cg.converged_at);
        REQUIRE(fused.cg.residual_history.size() == generic.cg.residual_history.size());
        const double r0 = generic.cg.residual_history[0];
        for (std::size_t k = 0; k < fused.cg.residual_history.size(); ++k) {
          CAPTURE(k);
          CHECK(std::abs(fused.cg.residual_history[k] - generic.cg.residual_history[k]) <=
                1e-10 * r0);
        }
        CHECK(fused.cg.residual_history.back() == doctest::Approx(fused.cg.residual_norm));
        CHECK(relative_difference(fused.x, generic.x) <= 1e-10);
      }
    }
}

TEST_CASE("fused CPU loops: the iteration limit leaves x where the generic loop leaves it") {
  // x lags one iteration inside the fused loops; the last step must still reach x.
  const CsrMatrix<double> A = poisson2d(20);
  const std::vector<double> b = multiply(A, random_vector(400, 61));
  const std::vector<double> x0(400, 0.0);
  for (long limit : {1L, 2L, 5L}) {
    CgOptions cg;
    cg.max_iters = limit;
    for (bool jacobi : {false, true}) {
      CAPTURE(limit);
      CAPTURE(jacobi);
      const Run generic = run_loop<double>(kGeneric, A, Format::csr, jacobi, b, x0, cg);
      for (const LoopCase& loop : kFusedLoops) {
        CAPTURE(std::string(loop.name));
        const Run fused = run_loop<double>(loop, A, Format::csr, jacobi, b, x0, cg);
        CHECK(fused.cg.status == CgStatus::max_iterations);
        CHECK(fused.cg.iterations == limit);
        CHECK(fused.cg.converged_at == -1);
        CHECK(fused.cg.residual_norm == doctest::Approx(generic.cg.residual_norm).epsilon(1e-12));
        CHECK(relative_difference(fused.x, generic.x) <= 1e-13);
      }
    }
  }
}

TEST_CASE("fused CPU loops: an indefinite matrix breaks down where the generic loop does") {
  // Poisson 5x5 - 0.6 I: one eigenvalue below 0 (0.536 - 0.6), found at iteration 5.
  CsrMatrix<double> A = poisson2d(5);
  for (index_t r = 0; r < A.rows; ++r)
    for (index_t k = A.row_ptr[r]; k < A.row_ptr[r + 1]; ++k)
      if (A.col_idx[k] == r) A.values[k] -= 0.6;
  const std::vector<double> b = multiply(A, std::vector<double>(A.rows, 1.0));
  const std::vector<double> x0(A.rows, 0.0);
  CgOptions cg;
  const Run generic = run_loop<double>(kGeneric, A, Format::ell, false, b, x0, cg);
  REQUIRE(generic.cg.status == CgStatus::breakdown);
  REQUIRE(generic.cg.iterations >= 3);  // x has moved before the breakdown
  for (const LoopCase& loop : kFusedLoops) {
    CAPTURE(std::string(loop.name));
    const Run fused = run_loop<double>(loop, A, Format::ell, false, b, x0, cg);
    CHECK(fused.cg.status == CgStatus::breakdown);
    CHECK_FALSE(fused.cg.ok());
    CHECK(fused.cg.iterations == generic.cg.iterations);
    CHECK(fused.cg.residual_norm == doctest::Approx(generic.cg.residual_norm).epsilon(1e-12));
    // x is x_{k-1}, the last complete step, as the generic loop leaves it.
    CHECK(relative_difference(fused.x, generic.x) <= 1e-13);
  }
}

TEST_CASE("fused CPU loops: NaN in the matrix, b = 0 and x0 = the answer") {
  for (const LoopCase& loop : kFusedLoops) {
    CAPTURE(std::string(loop.name));
    CgOptions cg;
    cg.record_history = true;
    CsrMatrix<double> A = poisson2d(4);
    const std::vector<double> ones(A.rows, 1.0), zeros(A.rows, 0.0);
    const std::vector<double> b = multiply(A, ones);

    const Run answer = run_loop<double>(loop, A, Format::hll, true, b, ones, cg);
    CHECK(answer.cg.status == CgStatus::converged);
    CHECK(answer.cg.converged_at == 0);
    CHECK(answer.cg.iterations == 0);
    CHECK(answer.cg.residual_history.size() == 1);
    CHECK(answer.x == ones);

    const Run zero =
        run_loop<double>(loop, A, Format::coo, false, zeros, std::vector<double>(A.rows, 5.0), cg);
    CHECK(zero.cg.status == CgStatus::zero_rhs);
    CHECK(zero.cg.iterations == 0);
    CHECK(zero.x == zeros);

    A.values[5] = std::nan("");
    const Run nan = run_loop<double>(loop, A, Format::csr, false, b, zeros, cg);
    CHECK(nan.cg.status == CgStatus::non_finite);
    CHECK(nan.cg.iterations == 1);
  }
}

TEST_CASE("fused CPU loops: converged_at is exact whatever check_every, and atol stops too") {
  const CsrMatrix<double> A = poisson2d(10);
  const std::vector<double> b = multiply(A, std::vector<double>(A.rows, 1.0));
  const std::vector<double> x0(A.rows, 0.0);
  CgOptions every1;
  every1.tol = 1e-10;
  const Run reference = run_loop<double>(kGeneric, A, Format::csr, false, b, x0, every1);
  REQUIRE(reference.cg.status == CgStatus::converged);
  CgOptions every7 = every1;
  every7.check_every = 7;
  std::vector<long> progress;
  every7.progress = [&](long k, double) { progress.push_back(k); };
  const Run generic7 = run_loop<double>(kGeneric, A, Format::csr, false, b, x0, every7);
  CHECK(generic7.cg.converged_at == reference.cg.converged_at);
  REQUIRE(reference.cg.converged_at % 7 != 0);  // else the test could not tell
  CHECK(generic7.cg.iterations > generic7.cg.converged_at);
  for (const LoopCase& loop : kFusedLoops) {
    CAPTURE(std::string(loop.name));
    progress.clear();
    const Run fused = run_loop<double>(loop, A, Format::csr, false, b, x0, every7);
    CHECK(fused.cg.converged_at == reference.cg.converged_at);
    CHECK(fused.cg.iterations == fused.cg.converged_at);  // the host checks every iteration
    // progress is paced by check_every, and told of the last iteration
    REQUIRE_FALSE(progress.empty());
    for (std::size_t i = 0; i + 1 < progress.size(); ++i) CHECK(progress[i] == long(7 * (i + 1)));
    CHECK(progress.back() == fused.cg.converged_at);

    CgOptions loose = every1;
    loose.tol = 1e-14;
    loose.atol = 1e-3;
    const Run with_atol = run_loop<double>(loop, A, Format::csr, false, b, x0, loose);
    CHECK(with_atol.cg.status == CgStatus::converged);
    CHECK(with_atol.cg.residual_norm <= 1e-3);
    CHECK(with_atol.cg.converged_at < reference.cg.converged_at);
  }
}

TEST_CASE("the plan routes the CPU devices to the fused loops and says which ran and why") {
  auto plan = [](const CsrMatrix<double>& A, Device device, int threads, CpuLoopAsk ask) {
    SolveRequest r;
    r.backend.device = device;
    r.backend.threads = threads;
    r.cpu_loop = ask;
    return make_plan(r, A);
  };
  auto said = [](const Plan& p, const std::string& text) {
    for (const std::string& why : p.reasons)
      if (why.find(text) != std::string::npos) return true;
    return false;
  };
  // Below kNeverTeamWork and above kAlwaysTeamWork the choice does not depend on the machine.
  const CsrMatrix<double> small = poisson2d(10), large = poisson2d(200);
  REQUIRE(long(large.nnz()) + large.rows >= kAlwaysTeamWork);
  REQUIRE(long(small.nnz()) + small.rows < kNeverTeamWork);
  CHECK(plan(small, Device::serial, 1, CpuLoopAsk::automatic).loop == Loop::serial);
  CHECK(plan(small, Device::serial, 1, CpuLoopAsk::generic).loop == Loop::generic);
  const Plan tiny = plan(small, Device::omp, 2, CpuLoopAsk::automatic);
  CHECK(tiny.loop == Loop::serial);
  CHECK(said(tiny, "too small for threads"));
  const Plan one = plan(small, Device::omp, 1, CpuLoopAsk::automatic);
  CHECK(one.loop == Loop::serial);
  CHECK(said(one, "one thread"));
  CHECK(plan(large, Device::omp, 2, CpuLoopAsk::automatic).loop == Loop::team);
  CHECK(plan(large, Device::omp, 2, CpuLoopAsk::generic).loop == Loop::generic);
  CHECK(plan(small, Device::omp, 2, CpuLoopAsk::team).loop == Loop::team);
  CHECK(plan(large, Device::omp, 2, CpuLoopAsk::serial).loop == Loop::serial);
  CHECK(plan(large, Device::omp, 1, CpuLoopAsk::team).loop == Loop::serial);
  CHECK(plan(large, Device::serial, 1, CpuLoopAsk::team).loop == Loop::serial);

  SolveRequest r;
  r.backend.device = Device::serial;
  r.cpu_loop = CpuLoopAsk::generic;
  std::vector<double> x;
  const SolveReport generic =
      solve_system(small, multiply(small, std::vector<double>(small.rows, 1.0)), x, r);
  CHECK(generic.plan.loop == Loop::generic);
  CHECK(generic.cg.spmv.samples.size() == std::size_t(generic.cg.iterations));
}

TEST_CASE("between the size bounds the planner times serial against team and runs the faster") {
  const CsrMatrix<double> A = poisson2d(40);  // 9,600 entries and rows
  REQUIRE(long(A.nnz()) + A.rows > kNeverTeamWork);
  REQUIRE(long(A.nnz()) + A.rows < kAlwaysTeamWork);
  SolveRequest r;
  r.backend.device = Device::omp;
  r.backend.threads = 2;
  r.cg.tol = 1e-10;
  const Plan timed = make_plan(r, A);
  REQUIRE((timed.loop == Loop::serial || timed.loop == Loop::team));
  bool said_times = false;
  for (const std::string& why : timed.reasons)
    said_times = said_times || why.find("a team of 2 timed ") != std::string::npos;
  CHECK(said_times);
  // The same answer, bit for bit, as that loop asked for by name.
  const std::vector<double> b = multiply(A, std::vector<double>(A.rows, 1.0));
  std::vector<double> x, x_named;
  auto solver = make_solver(timed);
  solver->analyze(A);
  const SolveReport rep = solver->solve(b, x);
  r.cpu_loop = timed.loop == Loop::team ? CpuLoopAsk::team : CpuLoopAsk::serial;
  const SolveReport named = solve_system(A, b, x_named, r);
  CHECK(rep.cg.status == CgStatus::converged);
  CHECK(rep.cg.iterations == named.cg.iterations);
  CHECK(x == x_named);
  for (double e : x) CHECK(e == doctest::Approx(1.0).epsilon(1e-8));
}
