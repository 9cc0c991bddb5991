#include "solver/precond/amg_nullspace.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>

#include "formats/elasticity.hpp"
#include "formats/matrix_market.hpp"
#include "solver/precond/amg_aggregate.hpp"  // strong_connections
#include "solver/precond/spectrum.hpp"       // worth_threads

namespace cgs::precond::amg {
namespace {

// Below this relative pivot a column of an aggregate's B is a combination of the others (a
// rotation on one node is its translations'): the aggregate's rank stops there.
constexpr double kRankTolerance = 1e-10;
// Below this (smallest / largest eigenvalue of the Gram matrix of the unit-norm columns) the
// given columns are refused as linearly dependent.
constexpr double kDependentColumns = 1e-12;

std::string str(std::int64_t v) { return std::to_string(v); }

// Rows grouped by their group (of[i] in 0 .. count-1, -1: none): ptr[g] .. ptr[g+1] in `rows`,
// ascending within each.
void group_rows(const std::vector<index_t>& of, index_t count, std::vector<index_t>& ptr,
                std::vector<index_t>& rows) {
  ptr.assign(std::size_t(count) + 1, 0);
  for (index_t g : of)
    if (g >= 0) ++ptr[std::size_t(g) + 1];
  for (index_t g = 0; g < count; ++g) ptr[std::size_t(g) + 1] += ptr[std::size_t(g)];
  rows.resize(std::size_t(ptr[std::size_t(count)]));
  std::vector<index_t> at(ptr.begin(), ptr.end() - 1);
  for (index_t i = 0; i < index_t(of.size()); ++i)
    if (of[std::size_t(i)] >= 0) rows[std::size_t(at[std::size_t(of[std::size_t(i)])]++)] = i;
}

}  // namespace

NearNullspace rigid_body_modes(const std::vector<double>& coords, int dim) {
  const index_t nodes = index_t(coords.size() / std::size_t(dim)), n = nodes * dim;
  NearNullspace ns;
  ns.cols = dim == 2 ? 3 : 6;
  ns.nodes = nodes;
  ns.node_of.resize(std::size_t(n));
  ns.B.assign(std::size_t(n) * std::size_t(ns.cols), 0.0);
  double centre[3] = {0, 0, 0};
  for (index_t p = 0; p < nodes; ++p)
    for (int d = 0; d < dim; ++d) centre[d] += coords[std::size_t(p * dim + d)] / double(nodes);
  auto at = [&](index_t row, int col) -> double& {
    return ns.B[std::size_t(col) * std::size_t(n) + std::size_t(row)];
  };
  for (index_t p = 0; p < nodes; ++p) {
    double x[3] = {0, 0, 0};
    for (int d = 0; d < dim; ++d) {
      x[d] = coords[std::size_t(p * dim + d)] - centre[d];
      ns.node_of[std::size_t(p * dim + d)] = p;
      at(p * dim + d, d) = 1;  // translations
    }
    const index_t r = p * dim;
    at(r, dim) = -x[1];  // rotation about z: (-y, x, 0)
    at(r + 1, dim) = x[0];
    if (dim == 3) {
      at(r + 1, 4) = -x[2];  // about x: (0, -z, y)
      at(r + 2, 4) = x[1];
      at(r, 5) = x[2];  // about y: (z, 0, -x)
      at(r + 2, 5) = -x[0];
    }
  }
  return ns;
}

NearNullspace translation_modes(index_t rows, int block) {
  NearNullspace ns;
  ns.cols = block;
  ns.nodes = rows / block;
  ns.node_of.resize(std::size_t(rows));
  ns.B.assign(std::size_t(rows) * std::size_t(block), 0.0);
  for (index_t i = 0; i < rows; ++i) {
    ns.node_of[std::size_t(i)] = i / block;
    ns.B[std::size_t(i % block) * std::size_t(rows) + std::size_t(i)] = 1;
  }
  return ns;
}

void check_independent_columns(const NearNullspace& ns, const std::string& where) {
  const std::size_t n = std::size_t(ns.rows());
  const int k = ns.cols;
  std::vector<double> scale(static_cast<std::size_t>(k));
  for (int c = 0; c < k; ++c) {
    double sum = 0;
    for (std::size_t i = 0; i < n; ++i) sum += ns.B[std::size_t(c) * n + i] * ns.B[std::size_t(c) * n + i];
    if (!(sum > 0))
      throw InputError(where, 0, "near-nullspace column " + str(c + 1) + " is zero");
    scale[std::size_t(c)] = 1 / std::sqrt(sum);
  }
  Eigen::MatrixXd G = Eigen::MatrixXd::Zero(k, k);
  for (int a = 0; a < k; ++a)
    for (int b = 0; b <= a; ++b) {
      double sum = 0;
      for (std::size_t i = 0; i < n; ++i)
        sum += ns.B[std::size_t(a) * n + i] * ns.B[std::size_t(b) * n + i];
      G(a, b) = G(b, a) = sum * scale[std::size_t(a)] * scale[std::size_t(b)];
    }
  const Eigen::VectorXd l = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(G).eigenvalues();
  if (!(l(0) > kDependentColumns * l(k - 1)))
    throw InputError(where, 0,
                     "the near-nullspace's " + str(k) +
                         " columns are linearly dependent (rank-deficient: the smallest "
                         "eigenvalue of their Gram matrix, columns at unit norm, is " +
                         std::to_string(l(0)) + ")");
}

std::shared_ptr<const NearNullspace> load_near_nullspace(const std::string& nullspace_file,
                                                         const std::string& coords, int block,
                                                         index_t rows) {
  if (nullspace_file.empty() && coords.empty() && block <= 0) return nullptr;
  if (!nullspace_file.empty() && !coords.empty())
    throw InputError("amg: nullspace= and coords= exclude each other (coords= makes the "
                     "rigid-body modes): give one");
  if (!coords.empty()) {
    std::vector<double> xyz;
    int dim = 0;
    if (is_elasticity_spec(coords)) {
      ElasticityProblem p = elasticity_from_spec(coords, false);
      if (std::int64_t(p.coords.size()) != rows)
        throw InputError("amg: coords=" + coords + " is a problem of " + str(p.coords.size()) +
                         " rows but the matrix has " + str(rows));
      xyz = std::move(p.coords);
      dim = p.dim;
    } else {
      const DenseColumns d = read_dense_market(coords);
      if (d.cols != 2 && d.cols != 3)
        throw InputError(coords, d.size_line,
                         "coordinates must be n_nodes x 2 or n_nodes x 3 (x y [z]), got " +
                             str(d.rows) + " x " + str(d.cols));
      if (std::int64_t(d.rows) * d.cols != rows)
        throw InputError(coords, d.size_line,
                         str(d.rows) + " nodes of " + str(d.cols) + " dofs are " +
                             str(std::int64_t(d.rows) * d.cols) + " rows but the matrix has " +
                             str(rows));
      dim = int(d.cols);
      xyz.resize(d.values.size());
      for (index_t p = 0; p < d.rows; ++p)
        for (int c = 0; c < dim; ++c)
          xyz[std::size_t(p * dim + c)] = d.values[std::size_t(c) * std::size_t(d.rows) + p];
    }
    if (block > 0 && block != dim)
      throw InputError("amg: block=" + str(block) + " but coords=" + coords + " gives " +
                       str(dim) + " dofs a node (the block is the dimension)");
    auto ns = std::make_shared<NearNullspace>(rigid_body_modes(xyz, dim));
    check_independent_columns(*ns, coords);
    return ns;
  }
  const int b = std::max(block, 1);
  if (rows % b != 0)
    throw InputError("amg: block=" + str(b) + " does not divide the matrix's " + str(rows) +
                     " rows");
  if (nullspace_file.empty()) return std::make_shared<NearNullspace>(translation_modes(rows, b));
  DenseColumns d = read_dense_market(nullspace_file, rows);
  auto ns = std::make_shared<NearNullspace>();
  ns->B = std::move(d.values);
  ns->cols = int(d.cols);
  ns->nodes = rows / b;
  ns->node_of.resize(std::size_t(rows));
  for (index_t i = 0; i < rows; ++i) ns->node_of[std::size_t(i)] = i / b;
  check_independent_columns(*ns, nullspace_file);
  return ns;
}

NodeStrength node_strength(const CsrMatrix<double>& A, const NearNullspace& ns, double theta) {
  NodeStrength s;
  std::vector<index_t> ptr, rows;
  group_rows(ns.node_of, ns.nodes, ptr, rows);
  CsrMatrix<double>& C = s.C;
  C.rows = C.cols = ns.nodes;
  C.row_ptr.assign(std::size_t(ns.nodes) + 1, 0);
  std::vector<index_t> where(std::size_t(ns.nodes), -1);  // node J's entry in the row being made
  std::vector<std::pair<index_t, double>> row;
  for (index_t I = 0; I < ns.nodes; ++I) {
    row.clear();
    for (index_t r = ptr[std::size_t(I)]; r < ptr[std::size_t(I) + 1]; ++r) {
      const index_t i = rows[std::size_t(r)];
      for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
        const index_t J = ns.node_of[std::size_t(A.col_idx[k])];
        index_t& w = where[std::size_t(J)];
        if (w < 0 || w >= index_t(row.size()) || row[std::size_t(w)].first != J) {
          w = index_t(row.size());
          row.emplace_back(J, 0.0);
        }
        row[std::size_t(w)].second += A.values[k] * A.values[k];
      }
    }
    std::sort(row.begin(), row.end());
    for (const auto& e : row) {
      C.col_idx.push_back(e.first);
      C.values.push_back(std::sqrt(e.second));
    }
    C.row_ptr[std::size_t(I) + 1] = index_t(C.col_idx.size());
  }
  s.strong_nodes = strong_connections(C, theta);
  s.strong.assign(A.values.size(), 0);
  std::vector<index_t> stamp(std::size_t(ns.nodes), -1);  // J strong for node I: stamp[J] == I
  for (index_t I = 0; I < ns.nodes; ++I) {
    for (index_t k = C.row_ptr[I]; k < C.row_ptr[I + 1]; ++k)
      if (s.strong_nodes[std::size_t(k)]) stamp[std::size_t(C.col_idx[k])] = I;
    for (index_t r = ptr[std::size_t(I)]; r < ptr[std::size_t(I) + 1]; ++r) {
      const index_t i = rows[std::size_t(r)];
      for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
        const index_t j = A.col_idx[k], J = ns.node_of[std::size_t(j)];
        s.strong[std::size_t(k)] = J == I ? j != i : stamp[std::size_t(J)] == I;
      }
    }
  }
  return s;
}

Aggregates dof_aggregates(const Aggregates& nodes, const NearNullspace& ns) {
  Aggregates g;
  g.count = nodes.count;
  g.of.resize(ns.node_of.size());
  for (std::size_t i = 0; i < ns.node_of.size(); ++i)
    g.of[i] = nodes.of[std::size_t(ns.node_of[i])];
  return g;
}

Tentative tentative_prolongator(const Aggregates& aggregates, const NearNullspace& ns) {
  const index_t n = ns.rows(), count = aggregates.count;
  const int k = ns.cols;
  std::vector<index_t> ptr, rows;
  group_rows(aggregates.of, count, ptr, rows);
  // Per aggregate: B's rows there = Q R Pi^T (column-pivoted QR); its first `rank` columns of Q
  // go into T, R Pi^T's first `rank` rows into the coarse B.
  std::vector<Eigen::MatrixXd> Q(static_cast<std::size_t>(count)), R(Q.size());
#pragma omp parallel for schedule(dynamic, 64) if (worth_threads(n))
  for (index_t a = 0; a < count; ++a) {
    const index_t m = ptr[std::size_t(a) + 1] - ptr[std::size_t(a)];
    Eigen::MatrixXd Ba(m, k);
    for (index_t r = 0; r < m; ++r)
      for (int c = 0; c < k; ++c)
        Ba(r, c) = ns.B[std::size_t(c) * std::size_t(n) + std::size_t(rows[std::size_t(ptr[a] + r)])];
    Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(Ba);
    qr.setThreshold(kRankTolerance);
    const index_t rank = m == 0 ? 0 : index_t(qr.rank());
    Q[std::size_t(a)] = Eigen::MatrixXd(qr.householderQ()).leftCols(rank);
    const Eigen::MatrixXd upper = qr.matrixR().topRows(rank).triangularView<Eigen::Upper>();
    R[std::size_t(a)] = upper * qr.colsPermutation().transpose();
  }
  std::vector<index_t> first(std::size_t(count) + 1, 0);  // the aggregate's first coarse row
  for (index_t a = 0; a < count; ++a)
    first[std::size_t(a) + 1] = first[std::size_t(a)] + index_t(Q[std::size_t(a)].cols());
  const index_t nc = first[std::size_t(count)];
  Tentative t;
  CsrMatrix<double>& T = t.T;
  T.rows = n;
  T.cols = nc;
  T.row_ptr.assign(std::size_t(n) + 1, 0);
  std::vector<index_t> position(std::size_t(n), -1);  // row i's place in its aggregate
  for (index_t a = 0; a < count; ++a)
    for (index_t r = ptr[std::size_t(a)]; r < ptr[std::size_t(a) + 1]; ++r)
      position[std::size_t(rows[std::size_t(r)])] = r - ptr[std::size_t(a)];
  for (index_t i = 0; i < n; ++i) {
    const index_t a = aggregates.of[std::size_t(i)];
    if (a >= 0)
      for (index_t c = 0; c < index_t(Q[std::size_t(a)].cols()); ++c) {
        T.col_idx.push_back(first[std::size_t(a)] + c);
        T.values.push_back(Q[std::size_t(a)](position[std::size_t(i)], c));
      }
    T.row_ptr[std::size_t(i) + 1] = index_t(T.col_idx.size());
  }
  NearNullspace& coarse = t.coarse;
  coarse.cols = k;
  coarse.nodes = count;
  coarse.node_of.resize(std::size_t(nc));
  coarse.B.assign(std::size_t(nc) * std::size_t(k), 0.0);
  for (index_t a = 0; a < count; ++a)
    for (index_t r = 0; r < index_t(R[std::size_t(a)].rows()); ++r) {
      const index_t row = first[std::size_t(a)] + r;
      coarse.node_of[std::size_t(row)] = a;
      for (int c = 0; c < k; ++c)
        coarse.B[std::size_t(c) * std::size_t(nc) + std::size_t(row)] = R[std::size_t(a)](r, c);
    }
  return t;
}

namespace {

// The column ranges P's row i reaches: (first column, count) of T's rows i and j, j over A's
// diagonal and strong entries in row i (each T row is one aggregate's contiguous columns), sorted
// and each once.
void reached_ranges(const CsrMatrix<double>& A, const std::vector<char>& strong,
                    const CsrMatrix<double>& T, index_t i,
                    std::vector<std::pair<index_t, index_t>>& ranges) {
  ranges.clear();
  auto add = [&](index_t j) {
    const index_t count = T.row_ptr[j + 1] - T.row_ptr[j];
    if (count > 0) ranges.emplace_back(T.col_idx[T.row_ptr[j]], count);
  };
  add(i);
  for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
    if (A.col_idx[k] == i || strong[std::size_t(k)]) add(A.col_idx[k]);
  std::sort(ranges.begin(), ranges.end());
  ranges.erase(std::unique(ranges.begin(), ranges.end()), ranges.end());
}

}  // namespace

CsrMatrix<double> nullspace_prolongator_pattern(const CsrMatrix<double>& A,
                                                const std::vector<char>& strong,
                                                const CsrMatrix<double>& T) {
  CsrMatrix<double> P;
  P.rows = T.rows;
  P.cols = T.cols;
  P.row_ptr.assign(std::size_t(P.rows) + 1, 0);
#pragma omp parallel if (worth_threads(A.rows))
  {
    std::vector<std::pair<index_t, index_t>> ranges;
#pragma omp for schedule(static)
    for (index_t i = 0; i < P.rows; ++i) {
      reached_ranges(A, strong, T, i, ranges);
      index_t count = 0;
      for (const auto& r : ranges) count += r.second;
      P.row_ptr[std::size_t(i) + 1] = count;
    }
  }
  for (index_t i = 0; i < P.rows; ++i) P.row_ptr[std::size_t(i) + 1] += P.row_ptr[std::size_t(i)];
  P.col_idx.resize(std::size_t(P.row_ptr[std::size_t(P.rows)]));
  P.values.assign(P.col_idx.size(), 0.0);
#pragma omp parallel if (worth_threads(A.rows))
  {
    std::vector<std::pair<index_t, index_t>> ranges;
#pragma omp for schedule(static)
    for (index_t i = 0; i < P.rows; ++i) {
      reached_ranges(A, strong, T, i, ranges);
      index_t at = P.row_ptr[i];
      for (const auto& r : ranges)
        for (index_t c = 0; c < r.second; ++c) P.col_idx[std::size_t(at++)] = r.first + c;
    }
  }
  return P;
}

void smooth_tentative(const CsrMatrix<double>& A, const std::vector<char>& strong,
                      const std::vector<double>& diagonal, double omega,
                      const CsrMatrix<double>& T, CsrMatrix<double>& P) {
#pragma omp parallel for schedule(static) if (worth_threads(P.rows))
  for (index_t i = 0; i < P.rows; ++i) {
    const auto begin = P.col_idx.begin() + P.row_ptr[i], end = P.col_idx.begin() + P.row_ptr[i + 1];
    std::fill(P.values.begin() + P.row_ptr[i], P.values.begin() + P.row_ptr[i + 1], 0.0);
    // Adds x T's row j into P's row i: T's row is one aggregate's contiguous columns, and so is
    // its place in P's row.
    auto add_row = [&](index_t j, double x) {
      const index_t first = T.row_ptr[j], count = T.row_ptr[j + 1] - first;
      if (count == 0) return;
      const std::size_t at =
          std::size_t(std::lower_bound(begin, end, T.col_idx[first]) - P.col_idx.begin());
      for (index_t c = 0; c < count; ++c) P.values[at + std::size_t(c)] += x * T.values[first + c];
    };
    add_row(i, 1);  // T
    const double scale = omega / diagonal[std::size_t(i)];
    for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {  // - omega D_F^-1 A_F T
      const index_t j = A.col_idx[k];
      if (j != i && !strong[std::size_t(k)]) continue;
      add_row(j, -scale * (j == i ? diagonal[std::size_t(i)] : A.values[k]));
    }
  }
}

}  // namespace cgs::precond::amg
