// Conjugate gradient and Jacobi-preconditioned CG, written once for every device.
//
// The algorithm only sequences operations: the SpMV backend does A*p, the VectorOps do the fused
// vector updates and reductions on the same device, and the scalars stay there. The host reads
// them every `check_every` iterations; the device records the exact iteration at which the
// tolerance was met, so at most check_every - 1 extra iterations run and the report is exact.
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "solver/vector_ops.hpp"
#include "spmv/backend.hpp"

namespace cgs {

struct CgOptions {
  double tol = 1e-8;    // stop when ||r|| <= tol * ||b|| ...
  double atol = 0;      // ... or when ||r|| <= atol
  long max_iters = 0;   // 0: 10 * n
  int check_every = 1;  // read the scalars back every k iterations
  bool record_history = false;
  // Called at every read of the scalars with the iteration and ||r||/||b|| (e.g. a progress
  // line); keep it cheap, it may run every iteration.
  std::function<void(long iteration, double relative_residual)> progress;
};

enum class CgStatus { converged, max_iterations, breakdown, non_finite, zero_rhs };
std::string to_string(CgStatus status);

struct CgResult {
  CgStatus status = CgStatus::max_iterations;
  long iterations = 0;                   // iterations run (>= converged_at when check_every > 1)
  long converged_at = -1;                // iteration at which the tolerance was met
  double residual_norm = 0;              // recursive ||r||, at the end
  double rhs_norm = 0;                   // ||b||
  std::vector<double> residual_history;  // ||r_k||, k = 0 .. iterations, when recorded
  double solve_seconds = 0;              // device clock, CG loop only
  std::vector<double> spmv_seconds;      // each SpMV of the loop

  bool ok() const { return status == CgStatus::converged || status == CgStatus::zero_rhs; }
  double relative_residual() const { return rhs_norm > 0 ? residual_norm / rhs_norm : 0.0; }
};

// A vector in a device's memory, released when it goes out of scope.
template <typename T>
class DeviceVector {
 public:
  DeviceVector(VectorOps<T>& ops, std::size_t n) : ops_(&ops), data_(ops.allocate(n)), n_(n) {}
  DeviceVector(const DeviceVector&) = delete;
  DeviceVector& operator=(const DeviceVector&) = delete;
  ~DeviceVector() { ops_->release(data_); }
  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return n_; }

 private:
  VectorOps<T>* ops_;
  T* data_;
  std::size_t n_;
};

// Solves A x = b. b and x are in the device's memory; x holds the initial guess on entry.
// inv_diag is the Jacobi preconditioner (1 / diag(A), in device memory) or null for plain CG.
template <typename T>
CgResult conjugate_gradient(SpmvBackend<T>& A, VectorOps<T>& ops, const T* inv_diag, const T* b,
                            T* x, const CgOptions& options) {
  const std::size_t n = ops.size();
  const long max_iters = options.max_iters > 0 ? options.max_iters : 10 * static_cast<long>(n);
  const long check_every = std::max(1, options.check_every);
  CgResult result;

  const std::size_t history_capacity = options.record_history ? std::size_t(max_iters) + 1 : 0;
  ops.reset(0.0, 0);
  ops.norm_b(b);
  result.rhs_norm = std::sqrt(ops.read_scalars().bb);
  if (result.rhs_norm == 0) {  // b = 0: x = 0 is the answer, no iteration needed
    std::vector<T> host_zero(n, T(0));
    ops.upload(host_zero.data(), x, n);
    result.status = CgStatus::zero_rhs;
    result.converged_at = 0;
    return result;
  }
  const double threshold = std::max(options.tol * result.rhs_norm, options.atol);
  ops.reset(threshold * threshold, history_capacity);

  DeviceVector<T> r(ops, n), p(ops, n), q(ops, n);
  DeviceVector<T> z(ops, inv_diag ? n : 0);
  T* z_or_r = inv_diag ? z.data() : r.data();  // without preconditioner z is r itself

  ops.mark_solve_begin();
  A.apply(x, q.data());
  ops.start(b, q.data(), inv_diag, r.data(), z.data());
  ops.copy(z_or_r, p.data());
  CgScalars s = ops.read_scalars();

  long k = 0;
  while (s.converged_at < 0 && s.breakdown_at < 0 && k < max_iters) {
    ++k;
    ops.mark_spmv_begin();
    A.apply(p.data(), q.data());
    ops.mark_spmv_end();
    ops.dot_pq(p.data(), q.data());
    ops.update_xrz(p.data(), q.data(), inv_diag, x, r.data(), z.data(), k);
    ops.update_p(z_or_r, p.data());
    if (k % check_every == 0 || k == max_iters) {
      s = ops.read_scalars();
      if (options.progress) options.progress(k, std::sqrt(s.rr) / result.rhs_norm);
    }
  }
  ops.mark_solve_end();
  ops.check_errors();

  result.iterations = k;
  result.converged_at = s.converged_at;
  result.residual_norm = std::sqrt(s.rr);
  result.solve_seconds = ops.solve_seconds();
  result.spmv_seconds = ops.spmv_seconds();
  if (options.record_history) {
    for (double rr : ops.history()) result.residual_history.push_back(std::sqrt(rr));
  }
  if (s.breakdown_at >= 0) {
    result.status =
        std::isfinite(s.pq) && std::isfinite(s.rz) ? CgStatus::breakdown : CgStatus::non_finite;
    result.iterations = s.breakdown_at;
  } else if (s.converged_at >= 0) {
    result.status = CgStatus::converged;
  } else {
    result.status = CgStatus::max_iterations;
  }
  return result;
}

}  // namespace cgs
