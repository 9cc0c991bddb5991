// Every CPU backend (format x serial/OpenMP x sorted/unsorted x float/double) against the dense
// reference product.
#include <doctest/doctest.h>

#include <algorithm>

#include "formats/generators.hpp"
#include "formats/row_order.hpp"
#include "formats/stats.hpp"
#include "spmv/backend.hpp"
#include "spmv/balanced_units.hpp"
#include "spmv/parallel_copy.hpp"
#include "test_matrices.hpp"

using namespace cgs;
using namespace cgs::testing;

namespace {

template <typename T>
std::vector<T> apply_backend(const CsrMatrix<double>& A, const std::vector<double>& x,
                             const BackendOptions& options) {
  auto backend = make_backend(cast_values<T>(A), options);
  const std::vector<T> x_t(x.begin(), x.end());
  std::vector<T> y(A.rows, T(-7));  // garbage: every entry must be overwritten
  backend->apply(x_t.data(), y.data());
  return y;
}

template <typename T>
void check_all_backends(double tolerance) {
  for (const auto& [name, A] : spmv_test_matrices()) {
    const std::vector<double> x = random_vector(A.cols, 42);
    for (Format format : {Format::coo, Format::csr, Format::ell, Format::hll}) {
      for (Device device : {Device::serial, Device::omp}) {
        for (bool sorted : {false, true}) {
          for (int threads : {1, 2, 3, 7}) {
            if (device == Device::serial && threads > 1) continue;
            if (sorted && A.rows != A.cols) continue;  // P A P^T needs a square matrix
            CAPTURE(name);
            CAPTURE(to_string(format));
            CAPTURE(to_string(device));
            CAPTURE(sorted);
            CAPTURE(threads);
            BackendOptions options;
            options.format = format;
            options.device = device;
            options.threads = threads;
            options.hack_size = format == Format::hll && threads == 3 ? 5 : 32;  // odd hacks too
            options.max_ell_fill = 1e9;  // the long-row matrices are deliberate ELL worst cases
            if (format == Format::ell && compute_stats(A, 32).bytes_ell > (std::size_t(1) << 30)) {
              // Padding 120,000 rows to 100,000 entries: the guard must refuse, not allocate.
              CHECK_THROWS_AS(make_backend(A, options), InputError);
              continue;
            }
            std::vector<double> expected;
            std::vector<T> y;
            if (sorted) {
              const RowPermutation P = sort_rows_by_length(A);
              const CsrMatrix<double> B = permute_symmetric(A, P);
              expected = P.to_original(reference_product(B, P.to_new(x)));
              std::vector<T> y_sorted = apply_backend<T>(B, P.to_new(x), options);
              y = P.to_original(y_sorted);
            } else {
              expected = reference_product(A, x);
              y = apply_backend<T>(A, x, options);
            }
            CHECK(relative_error(y, expected) <= tolerance);
          }
        }
      }
    }
  }
}

}  // namespace

TEST_CASE("every CPU backend agrees with the dense product in double to 1e-12") {
  check_all_backends<double>(1e-12);
}

TEST_CASE("every CPU backend agrees with the dense product in float to 1e-5") {
  check_all_backends<float>(1e-5);
}

// The HYB tail (formats/hll.hpp) at forced thresholds (0: every entry in the tail; 1, 3, 40) and
// chosen from the row lengths, serial and OpenMP, hacks of 32 and of 5 (n = 33 and 4,099 are
// not multiples of either).
TEST_CASE("HLL with a HYB tail agrees with the dense product, set_values included") {
  for (const auto& [name, A] : spmv_test_matrices()) {
    const std::vector<double> x = random_vector(A.cols, 43);
    const std::vector<double> expected = reference_product(A, x);
    for (index_t tail : {-1, 0, 1, 3, 40}) {
      for (Device device : {Device::serial, Device::omp}) {
        for (index_t hack_size : {32, 5}) {
          CAPTURE(name);
          CAPTURE(tail);
          CAPTURE(to_string(device));
          CAPTURE(hack_size);
          BackendOptions options;
          options.format = Format::hll;
          options.device = device;
          options.threads = 3;
          options.hack_size = hack_size;
          options.hll_tail = tail;
          CHECK(relative_error(apply_backend<double>(A, x, options), expected) <= 1e-12);
          // New values on the same pattern: 2A x = 2 y.
          auto backend = make_backend(A, options);
          std::vector<double> twice(A.values.size());
          for (std::size_t k = 0; k < twice.size(); ++k) twice[k] = 2 * A.values[k];
          backend->set_values(twice.data());
          std::vector<double> y(A.rows, -7.0), expected2(expected);
          for (double& e : expected2) e *= 2;
          backend->apply(x.data(), y.data());
          CHECK(relative_error(y, expected2) <= 1e-12);
        }
      }
    }
  }
}

// SELL-C-sigma (formats/hll.hpp): rows sorted by length inside windows of sigma rows, the
// product written through the storage order. Windows of one hack, of two, one not dividing n,
// one past n, and the chosen one; with the tail chosen, everything in the tail, and a short
// threshold; serial and OpenMP (its parts on window boundaries), set_values included.
TEST_CASE("sorted HLL (SELL-C-sigma) agrees with the dense product, set_values included") {
  for (const auto& [name, A] : spmv_test_matrices()) {
    const std::vector<double> x = random_vector(A.cols, 44);
    const std::vector<double> expected = reference_product(A, x);
    for (index_t hack_size : {32, 5})
      for (index_t windows : {-1, 1, 2, 7, 4000})  // -1: chosen from the row lengths
        for (index_t tail : {-1, 0, 3})
          for (Device device : {Device::serial, Device::omp}) {
            CAPTURE(name);
            CAPTURE(hack_size);
            CAPTURE(windows);
            CAPTURE(tail);
            CAPTURE(to_string(device));
            BackendOptions options;
            options.format = Format::hll;
            options.device = device;
            options.threads = 3;
            options.hack_size = hack_size;
            options.hll_sigma = windows < 0 ? -1 : windows * hack_size;
            options.hll_tail = tail;
            CHECK(relative_error(apply_backend<double>(A, x, options), expected) <= 1e-12);
            CHECK(relative_error(apply_backend<float>(A, x, options), expected) <= 1e-5);
            auto backend = make_backend(A, options);
            std::vector<double> twice(A.values.size());
            for (std::size_t k = 0; k < twice.size(); ++k) twice[k] = 2 * A.values[k];
            backend->set_values(twice.data());
            std::vector<double> y(A.rows, -7.0), expected2(expected);
            for (double& e : expected2) e *= 2;
            backend->apply(x.data(), y.data());
            CHECK(relative_error(y, expected2) <= 1e-12);
          }
  }
}

// The OpenMP parts of a sorted HLL start on window boundaries (a part inside a window would
// write rows of another part's slots), and the chosen layout of regular rows is today's.
TEST_CASE("sorted HLL: OpenMP parts on window boundaries; regular rows keep the unsorted layout") {
  const CsrMatrix<double> P = generate_matrix("gen:powerlaw:20000");
  BackendOptions options;
  options.format = Format::hll;
  options.device = Device::omp;
  options.threads = 7;
  const HllMatrix<double> H = make_hll(P, options);
  REQUIRE(H.sorted());
  auto backend = make_backend(P, options);
  const std::optional<Rows<double>> rows = backend->row_view();
  REQUIRE(rows);
  REQUIRE(rows->parts.size() == 8);
  for (index_t b : rows->parts) CHECK((b % H.sigma == 0 || b == P.rows));
  const std::vector<double> x = random_vector(P.cols, 45);
  std::vector<double> y(P.rows, -7.0);
  backend->apply(x.data(), y.data());
  CHECK(relative_error(y, reference_product(P, x)) <= 1e-12);
  for (const CsrMatrix<double>& A : {poisson2d(50), generate_matrix("gen:waternet:3000")}) {
    const HllMatrix<double> chosen = make_hll(A, options);
    const HllMatrix<double> today = to_hll(A, 32, choose_hll_tail(A, 32).from);
    CHECK_FALSE(chosen.sorted());
    CHECK(chosen.values == today.values);
    CHECK(chosen.col_idx == today.col_idx);
    CHECK(chosen.tail_from == today.tail_from);
  }
}

// The GPU balanced kernel's units (spmv/balanced_units.hpp), checked on the host: every row in
// exactly one unit (a long row in pieces), units within their limits, tiling the nonzeros.
TEST_CASE("balanced units tile the nonzeros: whole short rows, long rows in pieces") {
  for (const auto& [name, A] : spmv_test_matrices()) {
    CAPTURE(name);
    const BalancedUnits units = balanced_units(A.row_ptr, A.rows);
    REQUIRE(units.start.size() == units.first_row.size());
    CHECK(units.start.back() == (A.rows > 0 ? A.nnz() : 0));
    CHECK(units.first_row.back() == A.rows);
    std::vector<int> seen(std::size_t(A.rows), 0);
    for (index_t u = 0; u < units.count(); ++u) {
      const index_t row = units.first_row[u], next = units.first_row[u + 1];
      const index_t begin = units.start[u], end = units.start[u + 1];
      CHECK(begin <= end);
      CHECK(end - begin <= kBalancedUnit);
      if (A.row_length(row) > kBalancedUnit) {  // a piece: within its row, pieces in order
        CHECK(begin >= A.row_ptr[row]);
        CHECK(end <= A.row_ptr[row + 1]);
        CHECK((begin - A.row_ptr[row]) % kBalancedUnit == 0);
        if (begin == A.row_ptr[row]) ++seen[row];
      } else {  // whole rows
        CHECK(next > row);
        CHECK(next - row <= kBalancedUnitRows);
        CHECK(begin == A.row_ptr[row]);
        CHECK(end == A.row_ptr[next]);
        for (index_t r = row; r < next; ++r) ++seen[r];
      }
    }
    CHECK(std::all_of(seen.begin(), seen.end(), [](int s) { return s == 1; }));
  }
}

TEST_CASE("sorted products equal A x in the original order") {
  // Independent of the permutation code's own inverse: compare against A x directly.
  const CsrMatrix<double> A = random_matrix(100, 30, 9);
  const std::vector<double> x = random_vector(100, 10);
  const RowPermutation P = sort_rows_by_length(A);
  const std::vector<double> y_permuted = dense_product(permute_symmetric(A, P), P.to_new(x));
  const std::vector<double> expected = dense_product(A, x);
  for (index_t k = 0; k < A.rows; ++k)
    CHECK(y_permuted[k] == doctest::Approx(expected[P.new_to_old[k]]).epsilon(1e-12));
}

TEST_CASE("backend names, sizes and the bytes model") {
  const CsrMatrix<double> A = poisson2d(4);  // 16 rows, 64 nonzeros
  BackendOptions options;
  options.format = Format::csr;
  options.device = Device::omp;
  auto backend = make_backend(A, options);
  CHECK(backend->name() == "csr/omp");
  CHECK(backend->rows() == 16);
  CHECK(backend->nnz() == 64);
  // 64 * (8 + 4) entries + 17 * 4 row pointers + 16 * 8 x + 16 * 8 y
  CHECK(backend->min_bytes() == 64 * 12 + 17 * 4 + 16 * 8 * 2);
  options.format = Format::coo;
  options.device = Device::serial;
  CHECK(make_backend(cast_values<float>(A), options)->min_bytes() == 64 * 12 + 16 * 4 * 2);
}

TEST_CASE("ELL guard refuses a matrix whose padding would explode, naming the sizes") {
  CsrMatrix<double> A = random_matrix(2000, 4, 3, 0, 1500);  // one row of 1500, others short
  BackendOptions options;
  options.format = Format::ell;
  options.device = Device::serial;
  try {
    make_backend(A, options);
    FAIL("ELL should have been refused");
  } catch (const InputError& e) {
    const std::string message = e.what();
    CHECK(message.find("ELLPACK would need") != std::string::npos);
    CHECK(message.find("2000 rows padded to") != std::string::npos);
    CHECK(message.find("--format hll") != std::string::npos);
  }
  options.format = Format::hll;
  CHECK_NOTHROW(make_backend(A, options));
}

TEST_CASE("asking for the GPU in a build or machine without one is a DeviceError") {
#ifndef CGSOLVE_HAVE_CUDA
  BackendOptions options;
  options.device = Device::gpu;
  CHECK_THROWS_AS(make_backend(poisson2d(3), options), DeviceError);
#else
  MESSAGE("built with CUDA: the no-GPU path is covered by tests/app (exit code 4)");
#endif
}

TEST_CASE("parallel_copy copies every byte, whole slices, a partial last slice and nothing") {
  for (std::size_t bytes : {std::size_t(0), std::size_t(1), std::size_t(1 << 20) - 1,
                            std::size_t(1 << 20), std::size_t(5 << 20) + 7}) {
    CAPTURE(bytes);
    std::vector<unsigned char> from(bytes), to(bytes + 1, 0xAB);
    for (std::size_t i = 0; i < bytes; ++i) from[i] = static_cast<unsigned char>(i * 131 + 7);
    cgs::parallel_copy(to.data(), from.data(), bytes);
    CHECK(std::equal(from.begin(), from.end(), to.begin()));
    CHECK(to[bytes] == 0xAB);  // nothing past the end
  }
}
