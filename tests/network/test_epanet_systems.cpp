// The first trial's junction system equals the one EPANET 2.3.5 built for the same network
// (../shared/data/epanet-systems): same flows, statuses and settings in, same A and b out.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "formats/convert.hpp"
#include "formats/matrix_market.hpp"
#include "network/hydraulics.hpp"
#include "network/inp_reader.hpp"
#include "network_test_data.hpp"

namespace cgs::net {
namespace {

struct Difference {
  double matrix = 0, rhs = 0;
};

// Largest entry difference relative to the largest entry of the same row (matrix) or to the row's
// scale (right-hand side: rows held by active valves carry 1e8-sized terms).
Difference compare(const JunctionSystem& ours, const CsrMatrix<double>& A,
                   const std::vector<double>& b) {
  Difference d;
  REQUIRE(ours.A.rows == A.rows);
  const auto mine = to_dense(ours.A), theirs = to_dense(A);
  const std::size_t n = A.rows;
  for (std::size_t i = 0; i < n; ++i) {
    double row_scale = 0;
    for (std::size_t j = 0; j < n; ++j)
      row_scale = std::max(row_scale, std::abs(theirs[i * n + j]));
    for (std::size_t j = 0; j < n; ++j)
      d.matrix = std::max(d.matrix, std::abs(mine[i * n + j] - theirs[i * n + j]) / row_scale);
    const double b_scale = std::max(std::abs(b[i]), 1.0);
    d.rhs = std::max(d.rhs, std::abs(ours.b[i] - b[i]) / b_scale);
  }
  return d;
}

TEST_CASE("first-trial systems equal EPANET's") {
  if (!test::have_shared_data()) return;
  const std::string dir = test::shared_data();
  for (const std::string name :
       {"Net3", "Richmond_standard", "ky2", "Exnet_EXN", "Wolf-Cordera_wolf-3", "BWSN_Network_2"}) {
    CAPTURE(name);
    const Network net = read_inp(dir + "/networks/" + name + ".inp");
    GradientAlgorithm gga(net);
    gga.initialise();
    gga.start_period(0);
    const JunctionSystem& system = gga.assemble();
    const std::string base = dir + "/epanet-systems/" + name + "_step1";
    const auto A = read_matrix_market(base + ".mtx.gz");
    const auto b = read_vector_market(base + "_b.mtx.gz");
    if (A.rows > 3000) {  // dense comparison too big: compare by entries
      REQUIRE(system.A.nnz() >= A.nnz());
      double worst = 0;
      for (index_t r = 0; r < A.rows; ++r) {
        double scale = 0;
        for (index_t k = A.row_ptr[r]; k < A.row_ptr[r + 1]; ++k)
          scale = std::max(scale, std::abs(A.values[k]));
        for (index_t k = A.row_ptr[r]; k < A.row_ptr[r + 1]; ++k) {
          const auto& S = system.A;
          auto first = S.col_idx.begin() + S.row_ptr[r],
               last = S.col_idx.begin() + S.row_ptr[r + 1];
          auto it = std::lower_bound(first, last, A.col_idx[k]);
          REQUIRE(it != last);
          worst = std::max(worst, std::abs(S.values[it - S.col_idx.begin()] - A.values[k]) / scale);
        }
      }
      double worst_b = 0;
      for (index_t r = 0; r < A.rows; ++r)
        worst_b = std::max(worst_b, std::abs(system.b[r] - b[r]) / std::max(std::abs(b[r]), 1.0));
      MESSAGE(name << ": matrix " << worst << ", rhs " << worst_b);
      CHECK(worst <= 1e-12);
      CHECK(worst_b <= 1e-12);
      continue;
    }
    const Difference d = compare(system, A, b);
    MESSAGE(name << ": matrix " << d.matrix << ", rhs " << d.rhs);
    CHECK(d.matrix <= 1e-12);
    CHECK(d.rhs <= 1e-12);
  }
}

}  // namespace
}  // namespace cgs::net
