// setupbench: what a preconditioner's set-up costs fresh (analyze: pattern and numbers) against
// its reuse (set_values: numbers only, same pattern), the case of every Newton trial of netsolve
// and of any time-stepping user (issue 22's target for AMG: reuse <= 40% of a fresh set-up).
// The new values are A's times 1.5 (the same strong couplings, so an AMG hierarchy keeps its
// aggregates). Medians of --runs, on the host (the CPU devices) or, with --device gpu, for a
// solve on the GPU (AMG's numeric phases there, the program placed in device memory). On the
// GPU, as the solver does: a CSR SpMV backend on the device, its matrix lent to the set-up
// (Preconditioner::lend_matrix; --no-lend: not), and at set_values the backend's values
// written first (its own time, "backend", not in "reuse"), then the preconditioner's.
//
//   setupbench [--runs 5] [--threads 0] [--device omp|gpu] [--no-lend] [--phases] [--galerkin]
//              --precond amg MATRIX...
#include <omp.h>

#include <CLI/CLI.hpp>
#include <Eigen/SparseCore>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>
#include <variant>

#include "formats/generators.hpp"
#include "solver/precond/amg_setup.hpp"
#include "solver/precond/preconditioner.hpp"
#include "spmv/backend.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_of(const auto& work) {
  const auto start = Clock::now();
  work();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

using EigenCsr = Eigen::SparseMatrix<double, Eigen::RowMajor, int>;
EigenCsr to_eigen(const cgs::CsrMatrix<double>& A) {
  return Eigen::Map<const EigenCsr>(A.rows, A.cols, A.nnz(), A.row_ptr.data(), A.col_idx.data(),
                                    A.values.data());
}

// AMG's first Galerkin product R A P three ways: the set-up's own (symbolic + numeric, OpenMP),
// its numeric pass alone (what set_values runs), and Eigen's sparse products (one thread).
void compare_galerkin(const cgs::CsrMatrix<double>& A, int runs) {
  namespace amg = cgs::precond::amg;
  amg::HierarchyOptions o;
  o.max_levels = 2;
  const amg::Hierarchy h = amg::build_hierarchy(A, o);
  if (h.levels.size() < 2) return;
  const cgs::CsrMatrix<double>& P = h.levels[0].prolongator.P;
  const cgs::CsrMatrix<double>& R = h.levels[0].restriction.At;
  std::vector<double> own, numeric, eigen;
  cgs::CsrMatrix<double> Ac;
  const EigenCsr eA = to_eigen(A), eP = to_eigen(P), eR = to_eigen(R);
  for (int r = 0; r < runs; ++r) {
    own.push_back(seconds_of([&] {
      Ac = amg::galerkin_pattern(R, A, P);
      amg::galerkin_values(R, A, P, Ac);
    }));
    numeric.push_back(seconds_of([&] { amg::galerkin_values(R, A, P, Ac); }));
    EigenCsr product;
    eigen.push_back(seconds_of([&] { product = (eR * eA) * eP; }));
  }
  std::printf(
      "  R A P (%d x %d, %d nonzeros): own symbolic + numeric %.4f s, numeric alone %.4f s, "
      "Eigen (R A) P %.4f s\n",
      Ac.rows, Ac.cols, Ac.nnz(), median(own), median(numeric), median(eigen));
}

// The backend's device CSR, as the solver lends it (solver.cpp, lend_device_matrix).
const cgs::CsrView<double>* device_csr(const cgs::SpmvBackend<double>& backend,
                                       std::optional<cgs::Rows<double>>& rows) {
  rows = backend.row_view();
  if (!rows || !rows->on_device) return nullptr;
  return std::get_if<cgs::CsrView<double>>(&rows->view);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"setupbench: fresh preconditioner set-up against set_values on the same pattern"};
  int runs = 5, threads = 0;
  std::string precond = "amg";
  std::vector<std::string> matrices;
  app.add_option("--runs", runs, "runs per matrix (median)")->check(CLI::PositiveNumber);
  app.add_option("--threads", threads, "OpenMP threads (0: all cores)");
  app.add_option("--precond", precond, "preconditioner, as --precond of cgsolve");
  std::string device_name = "omp";
  app.add_option("--device", device_name, "omp (the host's cores) or gpu")
      ->check(CLI::IsMember({"omp", "gpu"}));
  bool phases = false, galerkin = false, no_lend = false;
  app.add_flag("--no-lend", no_lend, "GPU: the set-up uploads A itself (no backend lent)");
  app.add_flag("--galerkin", galerkin, "also time AMG's first R A P against Eigen's products");
  app.add_flag("--phases", phases, "print the set-up's phase table (the last run's)");
  app.add_option("matrices", matrices, "Matrix Market files or gen:... specs")->required();
  CLI11_PARSE(app, argc, argv);
  if (threads > 0) omp_set_num_threads(threads);
  const int team = threads > 0 ? threads : omp_get_max_threads();
  const cgs::Device device = device_name == "gpu" ? cgs::Device::gpu : cgs::Device::omp;
  const bool lend = device == cgs::Device::gpu && !no_lend;
  std::printf("%-28s %-14s %10s %10s %10s %7s %10s\n", "matrix", "precond", "rows", "fresh s",
              "reuse s", "ratio", lend ? "backend s" : "");
  for (const std::string& path : matrices) {
    const cgs::CsrMatrix<double> A = cgs::load_matrix(path);
    cgs::CsrMatrix<double> B = A;
    for (double& v : B.values) v *= 1.5;
    std::unique_ptr<cgs::SpmvBackend<double>> backend;
    if (lend) {
      cgs::BackendOptions options;
      options.device = cgs::Device::gpu;
      options.format = cgs::Format::csr;
      backend = cgs::make_backend(A, options);
    }
    std::vector<double> fresh, reuse, backend_values;
    std::vector<cgs::PrecondTable> fresh_tables, reuse_tables;  // the last run's details
    std::optional<cgs::Rows<double>> rows;
    for (int r = 0; r < runs; ++r) {
      auto M = cgs::make_preconditioner<double>(cgs::parse_precond(precond), device,
                                                device == cgs::Device::gpu ? 1 : team);
      if (backend) {  // A's values in the backend again (the last run left B's there)
        backend->set_values(A.values.data());
        const cgs::CsrView<double>* csr = device_csr(*backend, rows);
        if (!csr) throw std::runtime_error("setupbench: the CSR backend lends no device rows");
        M->lend_matrix(*csr);
      }
      fresh.push_back(seconds_of([&] { M->analyze(A); }));
      fresh_tables = M->report().tables;
      // The order the solver keeps: the backend's (lent) values first, then the set-up's.
      if (backend)
        backend_values.push_back(seconds_of([&] { backend->set_values(B.values.data()); }));
      reuse.push_back(seconds_of([&] { M->set_values(B); }));
      reuse_tables = M->report().tables;
    }
    const double f = median(fresh), s = median(reuse);
    std::printf("%-28s %-14s %10d %10.4f %10.4f %7.2f", path.c_str(), precond.c_str(), A.rows, f, s,
                s / f);
    if (backend) std::printf(" %10.4f", median(backend_values));
    std::printf("\n");
    if (galerkin) compare_galerkin(A, runs);
    if (phases)  // the set-up's own phase table, fresh and reused, where it has one
      for (std::size_t t = 0; t < fresh_tables.size() && t < reuse_tables.size(); ++t) {
        if (fresh_tables[t].name == "levels")
          for (const auto& [label, n] : fresh_tables[t].rows)
            std::printf("  level %-3s rows %10.0f  nonzeros %11.0f  fresh %9.4f s\n", label.c_str(),
                        n[0], n[1], n[2]);
        if (fresh_tables[t].name != "phases") continue;
        for (const auto& [label, numbers] : fresh_tables[t].rows) {
          double again = 0;
          for (const auto& [l, n] : reuse_tables[t].rows)
            if (l == label) again = n[0];
          std::printf("  %-20s fresh %9.4f s  reuse %9.4f s\n", label.c_str(), numbers[0], again);
        }
      }
  }
  return 0;
}
