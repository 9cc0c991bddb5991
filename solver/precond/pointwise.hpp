// The pointwise preconditioners, z_i = d_i r_i: the identity (plain CG, z is r itself) and
// Jacobi (d = 1 / diag(A)). The CG loops fuse them into the residual update.
#pragma once

#include "solver/precond/preconditioner.hpp"

namespace cgs::precond {

template <typename T>
class Identity final : public Preconditioner<T> {
 public:
  Identity(Device device, int threads) : Preconditioner<T>(device, threads, true) {}
  std::string name() const override { return "none"; }

 protected:
  void analyze_pattern(const CsrMatrix<double>&) override {}
  void compute_values(const CsrMatrix<double>&, ProgramSpec<T>&) override {}
};

// 1 / diag(A). The solver refuses a matrix with a non-positive diagonal before any set-up
// (naming the entry in the file's numbering), so every d_i here is finite and positive.
template <typename T>
class Jacobi final : public Preconditioner<T> {
 public:
  Jacobi(Device device, int threads) : Preconditioner<T>(device, threads, true) {}
  std::string name() const override { return "jacobi"; }

 protected:
  void analyze_pattern(const CsrMatrix<double>&) override {}
  void compute_values(const CsrMatrix<double>&, ProgramSpec<T>&) override {}
  std::vector<T> pointwise_diagonal(const CsrMatrix<double>& A) override;
};

}  // namespace cgs::precond
