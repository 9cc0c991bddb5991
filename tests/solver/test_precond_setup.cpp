// The preconditioners' set-up on every host core (issue 21 item 3): the paths that only large
// matrices take (ic0's factorisation level by level on a thread team, fsai's pattern in thread
// blocks) against independent references. Block-diagonal matrices of many small blocks keep the
// references exact and cheap: IC(0) of a tridiagonal block has no fill (so M^-1 = A^-1), and
// fsai:2's pattern covers a 3-row tridiagonal block's whole lower triangle (so G^T G = A^-1).
#include <doctest/doctest.h>
#include <omp.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <string>

#include "formats/convert.hpp"
#include "solver/precond/fsai.hpp"
#include "solver/precond/preconditioner.hpp"
#include "solver/precond/spectrum.hpp"
#include "solver/precond_test_util.hpp"
#include "test_matrices.hpp"

using namespace cgs;
using namespace cgs::testing;

namespace {

constexpr index_t kBlock = 3;

// `blocks` independent 3-row tridiagonal SPD blocks, values varying from block to block.
CsrMatrix<double> block_tridiagonal(index_t blocks) {
  std::vector<index_t> r, c;
  std::vector<double> v;
  for (index_t b = 0; b < blocks; ++b) {
    const index_t o = b * kBlock;
    const double off = -1.0 - 0.01 * double(b % 13);
    for (index_t i = 0; i < kBlock; ++i) {
      r.push_back(o + i), c.push_back(o + i), v.push_back(2.5 + 0.1 * double((b + i) % 7));
      if (i + 1 < kBlock) {
        r.insert(r.end(), {o + i, o + i + 1});
        c.insert(c.end(), {o + i + 1, o + i});
        v.insert(v.end(), {off, off});
      }
    }
  }
  return csr_from_triplets(blocks * kBlock, blocks * kBlock, r, c, v);
}

// A^-1 r block by block (Eigen's dense LU on each 3 x 3 block): the reference.
std::vector<double> block_solve(const CsrMatrix<double>& A, const std::vector<double>& r) {
  std::vector<double> x(r.size());
  for (index_t o = 0; o < A.rows; o += kBlock) {
    Eigen::Matrix3d B = Eigen::Matrix3d::Zero();
    for (index_t i = 0; i < kBlock; ++i)
      for (index_t k = A.row_ptr[o + i]; k < A.row_ptr[o + i + 1]; ++k)
        B(i, A.col_idx[k] - o) = A.values[k];
    const Eigen::Vector3d y = B.partialPivLu().solve(Eigen::Vector3d(r[o], r[o + 1], r[o + 2]));
    for (index_t i = 0; i < kBlock; ++i) x[std::size_t(o + i)] = y(i);
  }
  return x;
}

double relative_error(const std::vector<double>& a, const std::vector<double>& b) {
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::abs(a[i] - b[i]));
    norm = std::max(norm, std::abs(b[i]));
  }
  return diff / norm;
}

std::vector<double> applied(Preconditioner<double>& M, const std::vector<double>& r) {
  std::vector<double> z(r.size(), -1.0);
  M.apply(r.data(), z.data());
  return z;
}

std::vector<double> test_vector(index_t n) {
  std::vector<double> r(std::size_t(n), 0.0);
  for (index_t i = 0; i < n; ++i) r[std::size_t(i)] = std::sin(0.37 * double(i)) + 0.5;
  return r;
}

// OpenMP teams of `threads` for the set-ups while it lives, whatever the machine has: ic0
// factorises on a team only from 4 threads (on 2 cores they still run, time-shared), and in
// row order on 1.
struct Teams {
  int before = omp_get_max_threads();
  explicit Teams(int threads) { omp_set_num_threads(threads); }
  ~Teams() { omp_set_num_threads(before); }
};

std::unique_ptr<Preconditioner<double>> built_with(int threads, const std::string& name,
                                                   const CsrMatrix<double>& A, Device device) {
  const Teams teams(threads);
  return built(name, A, device, device == Device::omp ? 2 : 1);
}

std::string fact(const Preconditioner<double>& M, const std::string& key) {
  for (const auto& [k, v] : M.report().facts)
    if (k == key) return v;
  return "";
}

}  // namespace

TEST_CASE("ic0 on 210,003 rows: set up with a team of 4 it is exact, as serial") {
  // 3 levels of 70,001 rows each; a band of 70,001 rows leaves the team's pipeline (chunks of a
  // band, 8 a thread) nothing to share, so row order on one thread: the serial sweep's bits. The
  // pipeline itself: test_ic0_setup.cpp.
  const CsrMatrix<double> A = block_tridiagonal(70001);
  const std::vector<double> r = test_vector(A.rows);
  auto team = built_with(4, "ic0", A, Device::omp);
  CHECK(fact(*team, "levels") == "3 + 3");
  CHECK(fact(*team, "diagonal shift") == "none");
  const std::vector<double> z = applied(*team, r);
  CHECK(relative_error(z, block_solve(A, r)) < 1e-12);
  // The factor in row order on one thread, applied in one sweep a solve: the same bits.
  auto serial = built_with(1, "ic0", A, Device::serial);
  CHECK(applied(*serial, r) == z);
}

TEST_CASE("ic0 on a large matrix: a pivot that is not positive still shifts the diagonal") {
  // Each block's last pivot is 2.5 - ... < 0 without a shift: an indefinite block (not SPD), so
  // the factorisation must fail on the team as it does in row order, and shift.
  CsrMatrix<double> A = block_tridiagonal(50000);
  for (index_t i = 0; i < A.rows; ++i)
    for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
      if (A.col_idx[k] != i) A.values[k] = -2.0;
  auto team = built_with(4, "ic0", A, Device::omp);
  auto serial = built_with(1, "ic0", A, Device::serial);
  CHECK(fact(*team, "diagonal shift") != "none");
  CHECK(fact(*team, "diagonal shift") == fact(*serial, "diagonal shift"));
  const std::vector<double> r = test_vector(A.rows);
  CHECK(applied(*team, r) == applied(*serial, r));
}

TEST_CASE("fsai:2 on 210,003 rows: the pattern from thread blocks, G^T G = A^-1 on each block") {
  const CsrMatrix<double> A = block_tridiagonal(70001);
  auto M = built("fsai:2", A, Device::omp, 2);
  // tril(A^2) of a 3-row tridiagonal block is its whole lower triangle: 6 entries a block.
  CHECK(fact(*M, "pattern") == "tril(A^2), " + std::to_string(6 * 70001) + " entries");
  const std::vector<double> r = test_vector(A.rows);
  CHECK(relative_error(applied(*M, r), block_solve(A, r)) < 1e-12);
  // fsai:1 leaves out each block's (3,1) entry: no longer exact, still close.
  auto M1 = built("fsai:1", A, Device::omp, 2);
  CHECK(fact(*M1, "pattern") == "tril(A^1), " + std::to_string(5 * 70001) + " entries");
  const double e1 = relative_error(applied(*M1, r), block_solve(A, r));
  CHECK(e1 > 1e-6);
  CHECK(e1 < 1.0);
}

TEST_CASE("fsai:2 and fsai:3 on a random SPD matrix: G from the definition on tril(A^k)") {
  for (int k : {2, 3}) {
    CAPTURE(k);
    const CsrMatrix<double> A = random_spd(80, 3, 17u + unsigned(k));
    const Eigen::MatrixXd D = dense(A);
    // The pattern from the graph (entries of |A|^k, no cancellation), G row by row.
    Eigen::MatrixXd reach = D.cwiseAbs();
    for (int s = 1; s < k; ++s) reach = reach * D.cwiseAbs();
    const Eigen::Index n = D.rows();
    Eigen::MatrixXd G = Eigen::MatrixXd::Zero(n, n);
    long entries = 0;
    for (Eigen::Index i = 0; i < n; ++i) {
      std::vector<Eigen::Index> P;
      for (Eigen::Index j = 0; j <= i; ++j)
        if (reach(i, j) != 0) P.push_back(j);
      entries += long(P.size());
      Eigen::MatrixXd local(P.size(), P.size());
      for (std::size_t a = 0; a < P.size(); ++a)
        for (std::size_t b = 0; b < P.size(); ++b) local(a, b) = D(P[a], P[b]);
      Eigen::VectorXd e = Eigen::VectorXd::Zero(Eigen::Index(P.size()));
      e(e.size() - 1) = 1;
      const Eigen::VectorXd y = local.llt().solve(e);
      for (std::size_t a = 0; a < P.size(); ++a)
        G(i, P[a]) = y(Eigen::Index(a)) / std::sqrt(y(y.size() - 1));
    }
    auto M = built("fsai:" + std::to_string(k), A, Device::omp, 2);
    CHECK(fact(*M, "pattern") ==
          "tril(A^" + std::to_string(k) + "), " + std::to_string(entries) + " entries");
    const Eigen::MatrixXd reference = G.transpose() * G;
    CHECK((inverse_of(*M, A.rows) - reference).norm() / reference.norm() < 1e-12);
  }
}

// The host's share of fsai's device set-up (solver/precond/fsai_gpu.cu makes the rows longer than
// kFsaiDeviceRowMax with these): the listed rows' patterns and values, against the whole matrix's
// (fsai_pattern, fsai_rows), and the least listed row whose block is not SPD.
TEST_CASE("fsai's listed rows (the device set-up's long rows) are the whole set-up's rows") {
  CsrMatrix<double> A = irregular_spd(1013, 500, 7, 41);
  for (int k : {1, 2}) {
    CAPTURE(k);
    CsrMatrix<double> G = precond::fsai_pattern(A, k);
    precond::fsai_rows(A, G);
    std::vector<index_t> rows = {0, 1, 7, 499, 500, 501, 1012};
    const auto patterns = precond::fsai_row_patterns(A, rows, k);
    std::vector<double> packed;
    CHECK(precond::fsai_listed_rows(A, rows, patterns, packed) == A.rows);
    std::size_t at = 0;
    for (std::size_t j = 0; j < rows.size(); ++j) {
      const index_t first = G.row_ptr[rows[j]], last = G.row_ptr[rows[j] + 1];
      CHECK(patterns[j] ==
            std::vector<index_t>(G.col_idx.begin() + first, G.col_idx.begin() + last));
      for (index_t e = first; e < last; ++e) CHECK(packed[at++] == G.values[std::size_t(e)]);
    }
    CHECK(at == packed.size());
    // The hub's pattern is past the device's bound: this is the path it takes there.
    CHECK(patterns[4].size() > std::size_t(precond::kFsaiDeviceRowMax));
  }
  // Row 501's diagonal negative: the listed rows whose blocks hold it fail, the least is named.
  for (index_t e = A.row_ptr[501]; e < A.row_ptr[502]; ++e)
    if (A.col_idx[std::size_t(e)] == 501) A.values[std::size_t(e)] = -1;
  const std::vector<index_t> rows = {1012, 501, 0};
  std::vector<double> packed;
  CHECK(precond::fsai_listed_rows(A, rows, precond::fsai_row_patterns(A, rows, 2), packed) == 501);
  CsrMatrix<double> G = precond::fsai_pattern(A, 2);
  CHECK_THROWS_WITH_AS(precond::fsai_rows(A, G),
                       "fsai: the block of A on row 502's pattern is not positive definite (A is "
                       "not SPD)",
                       InputError);
}

// The device kernels' own row code (fsai_row.hpp, host-device), run here on every row: the
// pattern row equal to fsai_pattern's (or marked too long exactly where that row has more than
// kFsaiDeviceRowMax entries), G's row equal to fsai_rows' to rounding (the same operations in the
// same order: bit for bit on the host), and a block that is not SPD refused on the same rows.
TEST_CASE("fsai's device row code gives the host's pattern and rows on every row") {
  struct Case {
    std::string name;
    CsrMatrix<double> A;
  };
  const std::vector<Case> cases = {{"poisson 40x40", poisson2d(40)},
                                   {"random SPD 1013", random_spd(1013, 4, 41)},
                                   {"irregular SPD 1013", irregular_spd(1013, 500, 7, 41)},
                                   {"n = 1", poisson2d(1)}};
  for (const Case& c : cases) {
    for (int k : {1, 2}) {
      CAPTURE(c.name);
      CAPTURE(k);
      const CsrMatrix<double>& A = c.A;
      CsrMatrix<double> G = precond::fsai_pattern(A, k);
      precond::fsai_rows(A, G);
      index_t too_long = 0, mismatched = 0, unequal = 0;
      index_t set[precond::kFsaiDeviceRowMax];
      std::vector<double> L(std::size_t(precond::kFsaiDeviceRowMax) *
                            (precond::kFsaiDeviceRowMax + 1) / 2);
      std::vector<double> g(std::size_t(precond::kFsaiDeviceRowMax));
      for (index_t i = 0; i < A.rows; ++i) {
        const index_t first = G.row_ptr[i], m = G.row_ptr[i + 1] - first;
        const int size = precond::fsai_small_pattern(A.row_ptr.data(), A.col_idx.data(), i, k, set);
        if (size == precond::kFsaiRowTooLong) {
          ++too_long;
          if (m <= precond::kFsaiDeviceRowMax) ++mismatched;
          continue;
        }
        if (size != m || !std::equal(set, set + size, G.col_idx.begin() + first)) {
          ++mismatched;
          continue;
        }
        REQUIRE(precond::fsai_small_row(A.row_ptr.data(), A.col_idx.data(), A.values.data(), set,
                                        size, L.data(), g.data()));
        for (int a = 0; a < size; ++a)
          if (g[std::size_t(a)] != G.values[std::size_t(first + a)]) ++unequal;
      }
      CHECK(mismatched == 0);
      CHECK(unequal == 0);
      if (c.name.rfind("irregular", 0) == 0) CHECK(too_long > 0);  // the hub's rows
      if (c.name.rfind("poisson", 0) == 0) CHECK(too_long == 0);  // rows of at most 7
    }
  }
  // Row 37's diagonal negative: its block is refused, an earlier row's is not.
  CsrMatrix<double> A = poisson2d(20);
  for (index_t e = A.row_ptr[37]; e < A.row_ptr[38]; ++e)
    if (A.col_idx[std::size_t(e)] == 37) A.values[std::size_t(e)] = -1;
  index_t set[precond::kFsaiDeviceRowMax];
  double L[precond::kFsaiDeviceRowMax * (precond::kFsaiDeviceRowMax + 1) / 2];
  double g[precond::kFsaiDeviceRowMax];
  for (index_t i : {36, 37}) {
    const int m = precond::fsai_small_pattern(A.row_ptr.data(), A.col_idx.data(), i, 2, set);
    CHECK(precond::fsai_small_row(A.row_ptr.data(), A.col_idx.data(), A.values.data(), set, m, L,
                                  g) == (i != 37));
  }
}

TEST_CASE("fsai set up for the CPU reports where it ran and its three phases") {
  auto M = built("fsai:2", poisson2d(20), Device::omp, 2);
  CHECK(fact(*M, "set-up on") == "the host");
  const PrecondTable* phases = nullptr;
  for (const PrecondTable& t : M->report().tables)
    if (t.name == "fsai set-up") phases = &t;
  REQUIRE(phases);
  REQUIRE(phases->rows.size() == 3);
  CHECK(phases->rows[0].first == "pattern");
  CHECK(phases->rows[1].first == "rows");
  CHECK(phases->rows[2].first == "transpose");
  double inside = 0;
  for (const auto& [label, values] : phases->rows) inside += values.at(0);
  // Inside analyze + values (what the summary's phases already count).
  CHECK(inside <= M->report().total_seconds());
}

TEST_CASE("cheb:8 set up for the CPU says its Lanczos ran on the host") {
  auto M = built("cheb:8", poisson2d(20), Device::omp, 2);
  CHECK(fact(*M, "Lanczos on") == "the host");
}

TEST_CASE("the Lanczos start vector: a splitmix64 stream's numbers, unit norm, on any team") {
  // Independent reference: the splitmix64 generator run as a stream from the seed (state +=
  // golden ratio, then the mix), its 53 high bits scaled to [-1, 1); lanczos_start_entry(i) is
  // its (i + 1)-th number computed from i alone.
  std::uint64_t state = 20261123;
  auto next = [&] {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  };
  const index_t n = 300007;  // above worth_threads: the team path
  std::vector<double> raw(static_cast<std::size_t>(n));
  double norm = 0;
  for (double& x : raw) {
    x = 2 * (double(next() >> 11) * 0x1.0p-53) - 1;
    norm += x * x;
  }
  for (index_t i = 0; i < n; i += 997)
    CHECK(precond::lanczos_start_entry(i) == raw[std::size_t(i)]);
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  const std::vector<double> one = precond::lanczos_start(n);
  omp_set_num_threads(2);
  const std::vector<double> two = precond::lanczos_start(n);
  omp_set_num_threads(saved);
  CHECK(one == two);  // the same bits whatever the team
  double max_error = 0, sum = 0;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    max_error = std::max(max_error, std::abs(one[i] - raw[i] / std::sqrt(norm)));
    sum += one[i] * one[i];
  }
  CHECK(max_error <= 1e-15);
  CHECK(std::abs(sum - 1) <= 1e-12);
  CHECK(precond::lanczos_start(0).empty());
  CHECK(std::abs(precond::lanczos_start(1)[0]) == 1.0);
}
