#include "formats/elasticity.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>

namespace cgs {
namespace {

constexpr double kYoung = 1.0, kPoisson = 0.3;

// The element stiffness of a cube element of side h in `dim` dimensions, (2^dim dim)^2 entries
// row by row; local node a has corner bits a (bit d: the +1 side along axis d).
std::vector<double> element_stiffness(int dim, double h) {
  const int nodes = 1 << dim, dofs = nodes * dim, strains = dim == 2 ? 3 : 6;
  const double lambda = kYoung * kPoisson / ((1 + kPoisson) * (1 - 2 * kPoisson));
  const double mu = kYoung / (2 * (1 + kPoisson));
  const int shear[3][2] = {{0, 1}, {1, 2}, {0, 2}};
  std::vector<double> K(std::size_t(dofs * dofs), 0.0);
  const double g = 1 / std::sqrt(3.0), jacobian = std::pow(h / 2, dim);
  for (int point = 0; point < nodes; ++point) {  // the Gauss points: corner bits again
    std::vector<double> B(std::size_t(strains * dofs), 0.0);
    for (int a = 0; a < nodes; ++a)
      for (int d = 0; d < dim; ++d) {
        // dN_a/dx_d: the derivative along d of prod_e (1 + s_e xi_e) / 2, times 2/h.
        double dn = 1;
        for (int e = 0; e < dim; ++e) {
          const double s = (a >> e & 1) ? 1 : -1, xi = (point >> e & 1) ? g : -g;
          dn *= e == d ? s / 2 : (1 + s * xi) / 2;
        }
        dn *= 2 / h;
        B[std::size_t(d * dofs + a * dim + d)] = dn;  // normal strain d
        for (int s = 0; s < strains - dim; ++s) {     // shear strains (p, q)
          const int p = shear[s][0], q = shear[s][1], row = (dim + s) * dofs + a * dim;
          if (d == q) B[std::size_t(row + p)] = dn;
          if (d == p) B[std::size_t(row + q)] = dn;
        }
      }
    // D: lambda + 2 mu on the normal diagonal, lambda off it, mu on the shears.
    auto D = [&](int i, int j) {
      if (i < dim && j < dim) return lambda + (i == j ? 2 * mu : 0);
      return i == j ? mu : 0.0;
    };
    for (int r = 0; r < dofs; ++r)
      for (int c = 0; c < dofs; ++c) {
        double sum = 0;
        for (int i = 0; i < strains; ++i)
          for (int j = 0; j < strains; ++j)
            sum += B[std::size_t(i * dofs + r)] * D(i, j) * B[std::size_t(j * dofs + c)];
        K[std::size_t(r * dofs + c)] += sum * jacobian;
      }
  }
  return K;
}

}  // namespace

ElasticityProblem elasticity_problem(int dim, index_t m, bool clamped, bool matrix) {
  if (dim != 2 && dim != 3) throw InputError("elasticity: dim must be 2 or 3");
  const std::int64_t side = std::int64_t(m) + 1;
  const std::int64_t all = dim == 2 ? side * side : side * side * side;
  const double rows = double(all) * dim, nnz = rows * dim * (dim == 2 ? 9 : 27);
  if (m < 1 || nnz > double(std::numeric_limits<index_t>::max()))
    throw InputError("elasticity: M must be 1 or more, and the matrix under 2^31 - 1 nonzeros");
  const double h = 1.0 / double(m);
  const std::vector<double> Ke = element_stiffness(dim, h);
  const int local = (1 << dim) * dim;
  // Grid position of node n, and the free nodes' numbers (-1: clamped).
  auto position = [&](std::int64_t n, int d) {
    return d == 0 ? n % side : d == 1 ? (n / side) % side : n / (side * side);
  };
  std::vector<index_t> number(std::size_t(all), -1);
  ElasticityProblem p;
  p.dim = dim;
  index_t free = 0;
  for (std::int64_t n = 0; n < all; ++n)
    if (!clamped || position(n, 0) > 0) {
      number[std::size_t(n)] = free++;
      for (int d = 0; d < dim; ++d) p.coords.push_back(double(position(n, d)) * h);
    }
  if (!matrix) return p;
  CsrMatrix<double>& A = p.A;
  A.rows = A.cols = free * dim;
  const std::size_t longest = std::size_t(dim) * (dim == 2 ? 9 : 27);
  A.col_idx.reserve(std::size_t(A.rows) * longest);
  A.values.reserve(std::size_t(A.rows) * longest);
  A.row_ptr.assign(std::size_t(A.rows) + 1, 0);
  const int offsets = dim == 2 ? 9 : 27;
  for (std::int64_t n = 0; n < all; ++n) {
    if (number[std::size_t(n)] < 0) continue;
    std::array<std::int64_t, 3> at{position(n, 0), position(n, 1), dim == 3 ? position(n, 2) : 0};
    for (int di = 0; di < dim; ++di) {
      const index_t row = number[std::size_t(n)] * dim + di;
      // Neighbours in increasing node order: offsets with z slowest, x fastest.
      for (int o = 0; o < offsets; ++o) {
        const std::array<int, 3> off{o % 3 - 1, (o / 3) % 3 - 1, dim == 3 ? o / 9 - 1 : 0};
        std::array<std::int64_t, 3> q{};
        bool inside = true;
        for (int d = 0; d < dim; ++d) {
          q[std::size_t(d)] = at[std::size_t(d)] + off[std::size_t(d)];
          inside = inside && q[std::size_t(d)] >= 0 && q[std::size_t(d)] < side;
        }
        if (!inside) continue;
        const std::int64_t nb = q[0] + side * (q[1] + side * q[2]);
        if (number[std::size_t(nb)] < 0) continue;
        std::array<double, 3> block{};
        bool any = false;
        // Elements holding both: corner c = at - bits b, node n local b, nb local b + off.
        for (int b = 0; b < (1 << dim); ++b) {
          int a = b, a2 = 0;
          bool ok = true;
          for (int d = 0; d < dim; ++d) {
            const int bit = b >> d & 1, bit2 = bit + off[std::size_t(d)];
            const std::int64_t corner = at[std::size_t(d)] - bit;
            ok = ok && corner >= 0 && corner < m && (bit2 == 0 || bit2 == 1);
            a2 |= (bit2 & 1) << d;
          }
          if (!ok) continue;
          any = true;
          for (int dj = 0; dj < dim; ++dj)
            block[std::size_t(dj)] += Ke[std::size_t((a * dim + di) * local + a2 * dim + dj)];
        }
        if (!any) continue;
        for (int dj = 0; dj < dim; ++dj) {
          A.col_idx.push_back(number[std::size_t(nb)] * dim + dj);
          A.values.push_back(block[std::size_t(dj)]);
        }
      }
      A.row_ptr[std::size_t(row) + 1] = index_t(A.col_idx.size());
    }
  }
  return p;
}

bool is_elasticity_spec(const std::string& spec) {
  return spec.rfind("gen:elasticity2d:", 0) == 0 || spec.rfind("gen:elasticity3d:", 0) == 0;
}

ElasticityProblem elasticity_from_spec(const std::string& spec, bool matrix) {
  const std::string prefix = "gen:elasticity2d:";
  const std::string text = spec.substr(prefix.size());
  index_t m = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), m);
  if (!is_elasticity_spec(spec) || text.empty() || error != std::errc() ||
      end != text.data() + text.size() || m < 1)
    throw InputError("bad matrix generator '" + spec +
                     "': gen:elasticity2d:M and gen:elasticity3d:M take one positive integer M");
  return elasticity_problem(spec[14] == '2' ? 2 : 3, m, true, matrix);
}

}  // namespace cgs
