#include "solver/precond/pointwise.hpp"

#include <cstdint>

#include "formats/convert.hpp"

namespace cgs::precond {

template <typename T>
std::vector<T> Jacobi<T>::pointwise_diagonal(const CsrMatrix<double>& A) {
  const std::vector<double> d = diagonal(A);
  std::vector<T> inverse(d.size());
  const std::int64_t n = std::int64_t(d.size());
#pragma omp parallel for schedule(static) if (n > 100000)
  for (std::int64_t i = 0; i < n; ++i) inverse[std::size_t(i)] = T(1.0 / d[std::size_t(i)]);
  return inverse;
}

template class Jacobi<float>;
template class Jacobi<double>;

}  // namespace cgs::precond
