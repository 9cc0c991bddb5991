#include "solver/precond/pointwise.hpp"

#include "formats/convert.hpp"

namespace cgs::precond {

template <typename T>
std::vector<T> Jacobi<T>::pointwise_diagonal(const CsrMatrix<double>& A) {
  const std::vector<double> d = diagonal(A);
  std::vector<T> inverse(d.size());
  for (std::size_t i = 0; i < d.size(); ++i) inverse[i] = T(1.0 / d[i]);
  return inverse;
}

template class Jacobi<float>;
template class Jacobi<double>;

}  // namespace cgs::precond
