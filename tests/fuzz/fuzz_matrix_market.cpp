// libFuzzer target: the Matrix Market readers on bytes in memory (plain or gzip), as a matrix
// and as a vector, the way cgsolve reads --matrix, --rhs and --x0. An InputError is the
// expected answer to bad input; anything else escaping, a crash, a sanitizer report or an
// allocation past -rss_limit_mb (scripts/fuzz.sh) is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "formats/matrix_market.hpp"

namespace {

// A matrix the reader returns is one every later stage trusts without checking: say so here.
void check_csr(const cgs::CsrMatrix<double>& A) {
  if (A.rows < 0 || A.cols < 0 || A.row_ptr.size() != static_cast<std::size_t>(A.rows) + 1 ||
      A.row_ptr.front() != 0 || A.row_ptr.back() != A.nnz() ||
      A.col_idx.size() != A.values.size())
    std::abort();
  for (cgs::index_t r = 0; r < A.rows; ++r) {
    if (A.row_ptr[r] > A.row_ptr[r + 1]) std::abort();
    for (cgs::index_t k = A.row_ptr[r]; k < A.row_ptr[r + 1]; ++k) {
      if (A.col_idx[k] < 0 || A.col_idx[k] >= A.cols) std::abort();
      if (k > A.row_ptr[r] && A.col_idx[k] <= A.col_idx[k - 1]) std::abort();  // sorted, unique
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    check_csr(cgs::read_matrix_market_bytes(bytes, "fuzz.mtx"));
  } catch (const cgs::InputError&) {
  }
  try {
    cgs::read_vector_market_bytes(bytes, "fuzz.mtx");
  } catch (const cgs::InputError&) {
  }
  try {
    // As --rhs against a matrix of order 5: a vector of another length is refused early.
    if (cgs::read_vector_market_bytes(bytes, "fuzz.mtx", 5).size() != 5) std::abort();
  } catch (const cgs::InputError&) {
  }
  return 0;
}
