#include "solver/precond/pointwise.hpp"

#include <algorithm>
#include <cstdint>

#include "formats/convert.hpp"
#include "base/prefault.hpp"

namespace cgs::precond {

// One pass over the rows on every core into pages faulted in on every core: diag(A) and then
// 1 / diag(A) as two fresh vectors written by one thread cost 0.08-0.13 s of page faults at 9M
// rows (BENCHMARKS 20n), against 2.5 ms for the kernel that reads it.
template <typename T>
std::vector<T> Jacobi<T>::pointwise_diagonal(const CsrMatrix<double>& A) {
  const std::int64_t n = std::min(A.rows, A.cols);
  std::vector<T> inverse;
  reserve_prefaulted(inverse, std::size_t(n));
  inverse.resize(std::size_t(n));
#pragma omp parallel for schedule(static) if (n > 100000)
  for (std::int64_t i = 0; i < n; ++i)
    inverse[std::size_t(i)] = T(1.0 / diagonal_entry(A, index_t(i)));
  return inverse;
}

template class Jacobi<float>;
template class Jacobi<double>;

}  // namespace cgs::precond
