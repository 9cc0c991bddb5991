#include "formats/generators.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "formats/elasticity.hpp"
#include "formats/matrix_market.hpp"

namespace cgs {
namespace {

constexpr const char* kValidSpecs =
    "valid generators: gen:poisson2d:M (M x M grid), gen:poisson3d:M (M x M x M grid) or "
    "gen:poisson3d:NX:NY:NZ (a box), "
    "gen:powerlaw:N[:seed], gen:banded:N:B (half-bandwidth B < N), gen:waternet:N[:seed[:loops[:decades]]] "
    "(N >= 2), gen:elasticity2d:M, gen:elasticity3d:M; all sizes positive integers";

[[noreturn]] void bad_spec(const std::string& spec, const std::string& why) {
  throw InputError("bad matrix generator '" + spec + "': " + why + "; " + kValidSpecs);
}

// ---------------------------------------------------------------------------------------------
// Random numbers: splitmix64, defined bit for bit, so a seed means the same matrix everywhere.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  // [0, bound); the modulo bias, bound / 2^64, is far below anything a matrix could show.
  std::uint64_t below(std::uint64_t bound) { return next() % bound; }
  double log_uniform(double lo, double hi) { return lo * std::pow(hi / lo, uniform()); }

 private:
  std::uint64_t state_;
};

template <typename V>
void shuffle(std::vector<V>& items, Rng& rng) {  // Fisher-Yates with our own RNG
  for (std::size_t i = items.size(); i > 1; --i) std::swap(items[i - 1], items[rng.below(i)]);
}

// ---------------------------------------------------------------------------------------------
// Parsing.
std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t at; (at = text.find(sep, start)) != std::string::npos; start = at + 1)
    parts.push_back(text.substr(start, at - start));
  parts.push_back(text.substr(start));
  return parts;
}

std::uint64_t parse_number(const std::string& spec, const std::string& text, const char* what) {
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size())
    bad_spec(spec, std::string(what) + " '" + text + "' is not a non-negative integer");
  return value;
}

// Sizes must give an index_t matrix: rows and nonzeros both within 2^31 - 1.
void check_size(const std::string& spec, double rows, double nnz) {
  const double limit = double(std::numeric_limits<index_t>::max());
  if (rows > limit || nnz > limit)
    bad_spec(spec, "the matrix would have " + std::to_string(std::llround(rows)) +
                       " rows and about " + std::to_string(std::llround(nnz)) +
                       " nonzeros, over the 2^31 - 1 limit");
}

// ---------------------------------------------------------------------------------------------
// Stencils, written row by row straight into CSR (no triplet sort: poisson3d:215 has 69M
// nonzeros). Neighbour offsets are listed in increasing order, so columns come out sorted.
struct Stencil {
  double diagonal;
  std::vector<long long> offsets;  // column - row, increasing, 0 = the diagonal
};

// Rows [first, first + count) of a generated matrix (all of it: {0, -1}); columns stay global.
struct RowRange {
  index_t first = 0, count = -1;
  index_t rows_of(index_t n) const {
    return count < 0 ? n : std::clamp<index_t>(count, 0, n - std::min(first, n));
  }
};

template <typename InGrid>
CsrMatrix<double> stencil_matrix(index_t n, std::size_t nnz_hint, const Stencil& stencil,
                                 InGrid in_grid, RowRange range) {
  CsrMatrix<double> A;
  A.cols = n;
  A.rows = range.rows_of(n);
  const index_t first = std::min(range.first, n);
  if (A.rows < n) nnz_hint = std::size_t(double(nnz_hint) * A.rows / std::max<index_t>(1, n)) + 1;
  A.row_ptr.reserve(std::size_t(A.rows) + 1);
  A.col_idx.reserve(nnz_hint);
  A.values.reserve(nnz_hint);
  for (index_t row = first; row < first + A.rows; ++row) {
    for (std::size_t k = 0; k < stencil.offsets.size(); ++k) {
      const long long offset = stencil.offsets[k];
      if (!in_grid(row, k)) continue;
      A.col_idx.push_back(index_t(row + offset));
      A.values.push_back(offset == 0 ? stencil.diagonal : -1.0);
    }
    A.row_ptr.push_back(index_t(A.col_idx.size()));
  }
  return A;
}

CsrMatrix<double> poisson2d(const std::string& spec, std::uint64_t m, RowRange range) {
  check_size(spec, double(m) * m, 5.0 * m * m);
  const long long M = (long long)m;
  const Stencil stencil{4.0, {-M, -1, 0, 1, M}};
  // Neighbour k of (i, j) exists unless it would leave the grid.
  auto in_grid = [M](index_t row, std::size_t k) {
    const long long i = row / M, j = row % M;
    switch (k) {
      case 0: return i > 0;
      case 1: return j > 0;
      case 3: return j + 1 < M;
      case 4: return i + 1 < M;
      default: return true;
    }
  };
  return stencil_matrix(index_t(M * M), std::size_t(5 * M * M), stencil, in_grid, range);
}

// An NX x NY x NZ box, x fastest: row = (k * NY + j) * NX + i. Equal row blocks are then slabs
// of whole xy-planes, so a distributed solve's ranks each hold a box and share planes.
CsrMatrix<double> poisson3d(const std::string& spec, std::uint64_t nx, std::uint64_t ny,
                            std::uint64_t nz, RowRange range) {
  check_size(spec, double(nx) * ny * nz, 7.0 * nx * ny * nz);
  const long long X = (long long)nx, Y = (long long)ny, Z = (long long)nz, plane = X * Y;
  const Stencil stencil{6.0, {-plane, -X, -1, 0, 1, X, plane}};
  auto in_grid = [X, Y, Z, plane](index_t row, std::size_t k) {
    const long long z = row / plane, y = (row / X) % Y, x = row % X;
    switch (k) {
      case 0: return z > 0;
      case 1: return y > 0;
      case 2: return x > 0;
      case 4: return x + 1 < X;
      case 5: return y + 1 < Y;
      case 6: return z + 1 < Z;
      default: return true;
    }
  };
  return stencil_matrix(index_t(plane * Z), std::size_t(7 * plane * Z), stencil, in_grid, range);
}

CsrMatrix<double> banded(const std::string& spec, std::uint64_t n, std::uint64_t b,
                         RowRange range) {
  if (b >= n) bad_spec(spec, "the half-bandwidth must be smaller than N");
  check_size(spec, double(n), double(n) * (2.0 * b + 1));
  const long long B = (long long)b, N = (long long)n;
  Stencil stencil{2.0 * B + 1.0, {}};  // strictly diagonally dominant: off-diagonal sum <= 2B
  for (long long offset = -B; offset <= B; ++offset) stencil.offsets.push_back(offset);
  auto in_grid = [B, N](index_t row, std::size_t k) {
    const long long column = row + (long long)k - B;
    return column >= 0 && column < N;
  };
  return stencil_matrix(index_t(N), std::size_t(N * (2 * B + 1)), stencil, in_grid, range);
}

// ---------------------------------------------------------------------------------------------
// Weighted graph Laplacians: A = D - W + diag(extra), symmetric; D the weighted degrees.
struct Edge {
  index_t a, b;  // a < b
  double weight;
};

// Sorts each row's (column, value) pairs by column; rows are short except for power-law hubs.
void sort_columns(CsrMatrix<double>& A) {
  std::vector<std::pair<index_t, double>> row;
  for (index_t r = 0; r < A.rows; ++r) {
    const index_t begin = A.row_ptr[r], end = A.row_ptr[r + 1];
    row.clear();
    for (index_t k = begin; k < end; ++k) row.emplace_back(A.col_idx[k], A.values[k]);
    std::sort(row.begin(), row.end());
    for (index_t k = begin; k < end; ++k) std::tie(A.col_idx[k], A.values[k]) = row[k - begin];
  }
}

CsrMatrix<double> laplacian(index_t n, const std::vector<Edge>& edges,
                            const std::vector<double>& extra_diagonal) {
  CsrMatrix<double> A;
  A.rows = A.cols = n;
  A.row_ptr.assign(std::size_t(n) + 1, 0);
  for (index_t i = 0; i < n; ++i) A.row_ptr[i + 1] = 1;  // the diagonal
  for (const Edge& e : edges) ++A.row_ptr[e.a + 1], ++A.row_ptr[e.b + 1];
  std::partial_sum(A.row_ptr.begin(), A.row_ptr.end(), A.row_ptr.begin());
  A.col_idx.resize(A.row_ptr[n]);
  A.values.resize(A.row_ptr[n]);

  std::vector<index_t> fill(A.row_ptr.begin(), A.row_ptr.end() - 1);
  auto put = [&](index_t row, index_t col, double value) {
    A.col_idx[fill[row]] = col;
    A.values[fill[row]++] = value;
  };
  std::vector<double> degree(extra_diagonal);
  for (const Edge& e : edges) {
    put(e.a, e.b, -e.weight);
    put(e.b, e.a, -e.weight);
    degree[e.a] += e.weight;
    degree[e.b] += e.weight;
  }
  for (index_t i = 0; i < n; ++i) put(i, i, degree[i]);
  sort_columns(A);
  return A;
}

// Chung-Lu graph: node i has expected degree w_i = 2 (n / (i + 1))^(2/3), a power law with
// exponent 2.5 (mean degree about 6); each of sum(w) / 2 edges picks both ends in proportion to w.
// Self-loops and repeated edges are dropped, and the labels are shuffled so that the long rows
// are scattered through the matrix, as in real graphs, rather than all at the top.
CsrMatrix<double> powerlaw(const std::string& spec, std::uint64_t n, std::uint64_t seed) {
  check_size(spec, double(n), 8.0 * double(n));
  Rng rng(seed);
  std::vector<double> cumulative(n);
  double total = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    total += std::min(double(n - 1), 2.0 * std::pow(double(n) / double(i + 1), 2.0 / 3.0));
    cumulative[i] = total;
  }
  auto pick = [&] {
    const double u = rng.uniform() * total;
    const auto at = std::upper_bound(cumulative.begin(), cumulative.end(), u) - cumulative.begin();
    return index_t(std::min<std::ptrdiff_t>(at, std::ptrdiff_t(n) - 1));
  };
  std::vector<std::pair<index_t, index_t>> pairs;
  const std::uint64_t edge_count = std::uint64_t(std::llround(total / 2));
  pairs.reserve(edge_count);
  for (std::uint64_t e = 0; e < edge_count; ++e) {
    const index_t a = pick(), b = pick();
    if (a != b) pairs.emplace_back(std::min(a, b), std::max(a, b));
  }
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());

  std::vector<index_t> label(n);
  std::iota(label.begin(), label.end(), 0);
  shuffle(label, rng);
  std::vector<Edge> edges;
  edges.reserve(pairs.size());
  for (const auto& [a, b] : pairs) {
    const index_t la = label[a], lb = label[b];
    edges.push_back({std::min(la, lb), std::max(la, lb), 0.5 + rng.uniform()});
  }
  // The shift makes L + 0.1 I strictly diagonally dominant: SPD, also with isolated nodes.
  return laplacian(index_t(n), edges, std::vector<double>(n, 0.1));
}

// Union-find for Kruskal's spanning tree.
class DisjointSets {
 public:
  explicit DisjointSets(std::size_t n) : parent_(n) {
    std::iota(parent_.begin(), parent_.end(), 0);
  }
  index_t find(index_t i) {
    while (parent_[i] != i) i = parent_[i] = parent_[parent_[i]];  // path halving
    return i;
  }
  bool join(index_t a, index_t b) {
    a = find(a), b = find(b);
    if (a == b) return false;
    parent_[std::max(a, b)] = std::min(a, b);
    return true;
  }

 private:
  std::vector<index_t> parent_;
};

// A water-distribution-like network on a grid of width ceil(sqrt(n)) (the last row partial):
// a random spanning tree of the grid's edges (Kruskal over shuffled edges), then loops: each
// other grid edge with probability loops% (20 by default) and one diagonal in loops/5 % of the
// cells (at most one per cell, so the graph stays planar), both only between nodes of degree
// < 5. So every node has degree 1..5, rows have 2..6 nonzeros (mean about 3.4 by default, like
// EPANET's head matrices). Pipe conductances are log-uniform over `decades` decades around 1
// ([0.1, 10] by default); one node in 2000 (at least one) is tied to a fixed-head reservoir,
// adding a conductance to its diagonal. With the tree connecting every node this is an
// irreducibly diagonally dominant M-matrix: SPD. (gen:waternet:30000:1:2:6, a tree with few
// loops and conductances over six decades, is the case where a complete factor's thousands of
// levels cost more than Jacobi.)
CsrMatrix<double> waternet(const std::string& spec, std::uint64_t n, std::uint64_t seed,
                           std::uint64_t loops, std::uint64_t decades) {
  if (n < 2) bad_spec(spec, "a water network needs N >= 2 nodes");
  if (loops > 100) bad_spec(spec, "loops is a percentage, 0..100");
  if (decades > 30) bad_spec(spec, "decades must be at most 30");
  const double loop_share = double(loops) / 100, high = std::pow(10.0, double(decades) / 2);
  check_size(spec, double(n), 6.0 * double(n));
  Rng rng(seed);
  const index_t N = index_t(n);
  const index_t width = index_t(std::ceil(std::sqrt(double(n))));
  std::vector<std::pair<index_t, index_t>> grid_edges;
  for (index_t k = 0; k < N; ++k) {
    if ((k + 1) % width != 0 && k + 1 < N) grid_edges.emplace_back(k, k + 1);
    if (k + width < N) grid_edges.emplace_back(k, k + width);
  }
  shuffle(grid_edges, rng);

  std::vector<Edge> edges;
  std::vector<int> degree(n, 0);
  auto add = [&](index_t a, index_t b) {
    edges.push_back({std::min(a, b), std::max(a, b), rng.log_uniform(1 / high, high)});
    ++degree[a], ++degree[b];
  };
  DisjointSets sets(n);
  std::vector<std::pair<index_t, index_t>> spare;
  for (const auto& [a, b] : grid_edges) {
    if (sets.join(a, b))
      add(a, b);
    else
      spare.emplace_back(a, b);
  }
  auto room = [&](index_t a, index_t b) { return degree[a] < 5 && degree[b] < 5; };
  for (const auto& [a, b] : spare) {
    if (rng.uniform() < loop_share && room(a, b)) add(a, b);
  }
  for (index_t k = 0; k + width + 1 < N; ++k) {  // cell with top-left corner k
    if ((k + 1) % width == 0 || rng.uniform() >= loop_share / 5) continue;
    const bool down_right = rng.uniform() < 0.5;
    const index_t a = down_right ? k : k + 1, b = down_right ? k + width + 1 : k + width;
    if (room(a, b)) add(a, b);
  }
  std::sort(edges.begin(), edges.end(),
            [](const Edge& x, const Edge& y) { return std::tie(x.a, x.b) < std::tie(y.a, y.b); });

  std::vector<double> reservoir(n, 0.0);
  const std::uint64_t reservoirs = std::max<std::uint64_t>(1, n / 2000);
  for (std::uint64_t r = 0; r < reservoirs; ++r)
    reservoir[rng.below(n)] += rng.log_uniform(0.1, 10.0);
  return laplacian(N, edges, reservoir);
}

}  // namespace

bool is_generator_spec(const std::string& spec) { return spec.rfind("gen:", 0) == 0; }

namespace {

// The matrix a spec names, or rows of it; nothing for a partial range of a generator whose rows
// depend on the whole (the random graphs).
std::optional<CsrMatrix<double>> generate(const std::string& spec, RowRange range) {
  if (!is_generator_spec(spec)) bad_spec(spec, "a generator spec starts with 'gen:'");
  const std::vector<std::string> parts = split(spec, ':');
  const std::string kind = parts.size() > 1 ? parts[1] : "";
  const std::size_t args = parts.size() - 2;
  auto number = [&](std::size_t i, const char* what) {
    return parse_number(spec, parts[i + 2], what);
  };
  auto positive = [&](std::size_t i, const char* what) {
    const std::uint64_t value = number(i, what);
    if (value == 0) bad_spec(spec, std::string(what) + " must be positive");
    return value;
  };
  auto expect_args = [&](std::size_t least, std::size_t most) {
    if (args < least || args > most)
      bad_spec(spec, "'" + kind + "' takes " + std::to_string(least) +
                         (least == most ? "" : " or " + std::to_string(most)) +
                         " argument(s), got " + std::to_string(args));
  };
  auto seed = [&] { return args > 1 ? number(1, "the seed") : std::uint64_t(1); };

  if (kind == "poisson2d") {
    expect_args(1, 1);
    return poisson2d(spec, positive(0, "M"), range);
  }
  if (kind == "poisson3d") {  // M (a cube) or NX:NY:NZ (a box)
    if (args == 3)
      return poisson3d(spec, positive(0, "NX"), positive(1, "NY"), positive(2, "NZ"), range);
    if (args != 1)
      bad_spec(spec,
               "'poisson3d' takes M or NX:NY:NZ, got " + std::to_string(args) + " argument(s)");
    const std::uint64_t m = positive(0, "M");
    return poisson3d(spec, m, m, m, range);
  }
  if (kind == "banded") {
    expect_args(2, 2);
    return banded(spec, positive(0, "N"), number(1, "B"), range);
  }
  if (kind == "powerlaw") {
    expect_args(1, 2);
    if (range.count >= 0) return std::nullopt;
    return powerlaw(spec, positive(0, "N"), seed());
  }
  if (kind == "elasticity2d" || kind == "elasticity3d") {  // formats/elasticity.hpp
    expect_args(1, 1);
    if (range.count >= 0) return std::nullopt;
    return elasticity_from_spec(spec).A;
  }
  if (kind == "waternet") {  // N[:seed[:loops[:decades]]]
    expect_args(1, 4);
    if (range.count >= 0) return std::nullopt;
    return waternet(spec, positive(0, "N"), seed(), args > 2 ? number(2, "loops") : 20,
                    args > 3 ? number(3, "decades") : 2);
  }
  bad_spec(spec, "unknown generator '" + kind + "'");
}

}  // namespace

CsrMatrix<double> generate_matrix(const std::string& spec) { return *generate(spec, RowRange{}); }

std::optional<CsrMatrix<double>> generate_matrix_rows(const std::string& spec, index_t first,
                                                      index_t count) {
  return generate(spec, RowRange{first, std::max<index_t>(count, 0)});
}

CsrMatrix<double> load_matrix(const std::string& path_or_spec) {
  if (is_generator_spec(path_or_spec)) return generate_matrix(path_or_spec);
  return read_matrix_market(path_or_spec);
}

}  // namespace cgs
