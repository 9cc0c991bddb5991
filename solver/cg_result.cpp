#include "solver/cg_result.hpp"

#include <cmath>

namespace cgs {

std::string to_string(CgStatus status) {
  switch (status) {
    case CgStatus::converged: return "converged";
    case CgStatus::max_iterations: return "not converged (maximum iterations reached)";
    case CgStatus::breakdown: return "breakdown: p'Ap <= 0, the matrix is not positive definite";
    case CgStatus::non_finite: return "breakdown: NaN or Inf appeared";
    case CgStatus::zero_rhs: return "converged (b = 0, so x = 0)";
  }
  return "?";
}

CgResult result_of(const cg::State& s) {
  CgResult result;
  result.rhs_norm = std::sqrt(s.bb);
  if (s.zero_rhs) {
    result.status = CgStatus::zero_rhs;
    result.converged_at = 0;
    return result;
  }
  result.iterations = long(s.iterations);
  result.converged_at = long(s.converged_at);
  result.residual_norm = std::sqrt(s.rr);
  if (s.breakdown_at >= 0) {
    // p.Ap <= 0 with finite numbers: A is not positive definite; else a NaN or Inf appeared.
    result.status =
        std::isfinite(s.pq) && std::isfinite(s.rz) ? CgStatus::breakdown : CgStatus::non_finite;
    result.iterations = long(s.breakdown_at);
  } else {
    result.status = s.converged_at >= 0 ? CgStatus::converged : CgStatus::max_iterations;
  }
  return result;
}

void set_history(CgResult& result, const std::vector<double>& rr) {
  result.residual_history.clear();
  result.residual_history.reserve(rr.size());
  for (double v : rr) result.residual_history.push_back(std::sqrt(v));
}

}  // namespace cgs
