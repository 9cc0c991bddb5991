// Systems for the Cholesky schedule's tests (CPU: test_cholesky_schedule.cpp; GPU:
// tests/gpu/test_gpu_batch_cholesky.cpp): EPANET's own trial matrices (Net3 in the repository,
// Exnet_EXN and BWSN_Network_2 from ../shared when present), and perturbations of them that stay
// positive definite.
#pragma once

#include <cmath>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "formats/csr.hpp"
#include "formats/matrix_market.hpp"
#include "solver/precond/sparse_cholesky.hpp"

namespace cgs::net::test {

struct TrialSystem {
  std::string name;
  CsrMatrix<double> A;
  std::vector<double> b;
};

// Net3 always; Exnet_EXN and BWSN_Network_2 where ../shared/data/epanet-systems holds them, or
// the GPU machine's .gpu-data (other trials of the same networks).
inline std::vector<TrialSystem> trial_systems() {
  const std::string source = CGSOLVE_SOURCE_DIR;
  std::vector<std::pair<std::string, std::string>> files{
      {"Net3", source + "/data/networks/epanet-systems/Net3_step1"}};
  const std::string shared = source + "/../shared/data/epanet-systems/",
                    gpu_data = source + "/.gpu-data/";
  for (const auto& [mine, theirs] :
       {std::pair<const char*, const char*>{"Exnet_EXN_step1", "Exnet_EXN_step3"},
        {"BWSN_Network_2_step5", "BWSN_Network_2_step10"}}) {
    if (std::filesystem::exists(shared + mine + ".mtx.gz"))
      files.emplace_back(mine, shared + mine);
    else if (std::filesystem::exists(gpu_data + theirs + ".mtx.gz"))
      files.emplace_back(theirs, gpu_data + theirs);
  }
  std::vector<TrialSystem> out;
  for (const auto& [name, stem] : files)
    out.push_back(
        {name, read_matrix_market(stem + ".mtx.gz"), read_vector_market(stem + "_b.mtx.gz")});
  return out;
}

// D A D with D's entries in [1 - spread, 1 + spread] (seeded): still symmetric positive
// definite, every value changed, as the trials of a study change them.
inline CsrMatrix<double> perturbed(const CsrMatrix<double>& A, unsigned seed, double spread = 0.3) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> factor(1.0 - spread, 1.0 + spread);
  std::vector<double> d(static_cast<std::size_t>(A.rows));
  for (double& v : d) v = factor(rng);
  CsrMatrix<double> B = A;
  for (index_t i = 0; i < A.rows; ++i)
    for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) B.values[k] *= d[i] * d[A.col_idx[k]];
  return B;
}

// ||A x - b|| / ||b||, for a check that does not trust any factorisation.
inline double relative_residual(const CsrMatrix<double>& A, const std::vector<double>& b,
                                const std::vector<double>& x) {
  double rr = 0, bb = 0;
  for (index_t i = 0; i < A.rows; ++i) {
    double ax = 0;
    for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) ax += A.values[k] * x[A.col_idx[k]];
    rr += (b[i] - ax) * (b[i] - ax);
    bb += b[i] * b[i];
  }
  return std::sqrt(rr / bb);
}

// A's diagonal entry of row `row` set to `value` (it exists in every network system).
inline CsrMatrix<double> with_diagonal(CsrMatrix<double> A, index_t row, double value) {
  for (index_t k = A.row_ptr[row]; k < A.row_ptr[row + 1]; ++k)
    if (A.col_idx[k] == row) A.values[k] = value;
  return A;
}

}  // namespace cgs::net::test
