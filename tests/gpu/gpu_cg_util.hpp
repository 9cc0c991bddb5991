// Running CG on one device for the GPU tests (test_gpu_cg.cpp, test_gpu_fused_cg.cpp): the
// matrix and b cast to T, x0 = 0, optional Jacobi, then the generic loop (solver/cg.hpp with the
// device's VectorOps) or a fused GPU loop; x comes back in double.
#pragma once

#include <string>
#include <vector>

#include "gpu_test_util.hpp"
#include "solver/cg.hpp"
#include "solver/cuda/fused_cg.hpp"
#include "solver/solve.hpp"

namespace cgs::gputest {

struct Run {
  CgResult result;
  std::vector<double> x;
};

template <typename T>
Run run_loop(const CsrMatrix<double>& A64, const std::vector<double>& b64, bool jacobi,
             const BackendOptions& backend_options, GpuLoop loop, const CgOptions& cg) {
  const CsrMatrix<T> A = cast_values<T>(A64);
  const std::size_t n = std::size_t(A.rows);
  auto backend = make_backend(A, backend_options);
  auto ops = make_vector_ops<T>(backend_options.device, n, backend_options.threads);
  DeviceVector<T> b(*ops, n), x(*ops, n), inv_diag(*ops, jacobi ? n : 0);
  const std::vector<T> b_host(b64.begin(), b64.end()), zero(n, T(0));
  ops->upload(b_host.data(), b.data(), n);
  ops->upload(zero.data(), x.data(), n);
  if (jacobi) {
    std::vector<T> d(n);
    const std::vector<double> diag = diagonal(A64);
    for (std::size_t i = 0; i < n; ++i) d[i] = T(1.0 / diag[i]);
    ops->upload(d.data(), inv_diag.data(), n);
  }
  const T* inv = jacobi ? inv_diag.data() : nullptr;
  Run run;
  if (loop == GpuLoop::generic) {
    run.result = conjugate_gradient(*backend, *ops, inv, b.data(), x.data(), cg);
  } else {
    std::string why;
    auto fused = make_fused_cg(*backend, loop, &why);
    INFO("no fused loop: " << why);
    REQUIRE(fused);
    CHECK(fused->loop() == loop);
    run.result = fused->solve(inv, b.data(), x.data(), cg);
  }
  std::vector<T> x_host(n);
  ops->download(x.data(), x_host.data(), n);
  run.x.assign(x_host.begin(), x_host.end());
  return run;
}

inline double true_relative_residual(const CsrMatrix<double>& A, const std::vector<double>& b,
                                     const std::vector<double>& x) {
  std::vector<double> r = multiply(A, x);
  for (std::size_t i = 0; i < r.size(); ++i) r[i] = b[i] - r[i];
  return norm2(r) / norm2(b);
}

}  // namespace cgs::gputest
