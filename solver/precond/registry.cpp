// The preconditioners cgsolve and netsolve know, a line each: what it is and its argument (the
// CLI's help prints them), whether it wants RCM or a positive diagonal, and how to make it.
#include <charconv>

#include "solver/precond/amg_options.hpp"  // amg_options_help
#include "solver/precond/builtin.hpp"
#include "solver/precond/pointwise.hpp"
#include "solver/precond/preconditioner.hpp"

namespace cgs {
namespace {

template <template <typename> class P, typename T>
std::unique_ptr<Preconditioner<T>> make_simple(const PrecondSpec& spec, Device device,
                                               int threads) {
  if (!spec.argument.empty())
    throw InputError("the " + spec.name + " preconditioner takes no argument (got '" + spec.text() +
                     "')");
  return std::make_unique<P<T>>(device, threads);
}

}  // namespace

const std::vector<PrecondEntry>& preconditioners() {
  static const std::vector<PrecondEntry> table = {
      {"none", "plain CG, no preconditioner", "", false, false,
       &make_simple<precond::Identity, float>, &make_simple<precond::Identity, double>},
      {"jacobi", "diagonal scaling, z = r / diag(A)", "", false, true,
       &make_simple<precond::Jacobi, float>, &make_simple<precond::Jacobi, double>},
      {"ic0", "incomplete Cholesky, zero fill, triangular solves level by level",
       "levels|colour|parts[:N]: the elimination order, levels (exact, the default), colour (a "
       "level per colour of A's graph) or parts of N rows (default 128, separators last)",
       true, true, &precond::make_ic0<float>, &precond::make_ic0<double>},
      {"fsai", "factorized sparse approximate inverse G^T G",
       "k: G on the pattern of tril(A^k), 1..4, default 1", false, true, &precond::make_fsai<float>,
       &precond::make_fsai<double>},
      {"bjacobi", "exact inverses of diagonal blocks", "N: rows per block, 1..4096, default 64",
       true, true, &precond::make_bjacobi<float>, &precond::make_bjacobi<double>},
      {"cheb", "Chebyshev polynomial in D^-1 A", "d: degree, 1..64, default 4", false, true,
       &precond::make_chebyshev<float>, &precond::make_chebyshev<double>},
      {"amg", "smoothed-aggregation algebraic multigrid, one V-cycle",
       "key=value,...: the options --help-precond amg lists", false, true,
       &precond::make_amg<float>, &precond::make_amg<double>, &precond::amg_options_help},
      {"chol", "the complete sparse Cholesky factor, triangular solves level by level",
       "maxfill=N,order=O: refuse a factor of more than N x tril(A)'s entries (N >= 1, default "
       "20); eliminate in Eigen's AMD order (O = amd, the default), A's own (natural) or the "
       "caller's (given: netsolve gives EPANET's), the last two factorised left-looking in "
       "EPANET's order of operations; pivot=shift|fail: in those, a pivot <= 0 is passed with a "
       "small diagonal shift (the default) or is an error",
       false,
       false /* its factorisation tests every pivot */, &precond::make_cholesky<float>, &precond::make_cholesky<double>},
  };
  return table;
}

namespace precond {
int integer_argument(const PrecondSpec& spec, int fallback, int low, int high) {
  if (spec.argument.empty()) return fallback;
  int value = 0;
  const char* end = spec.argument.data() + spec.argument.size();
  const auto [ptr, ec] = std::from_chars(spec.argument.data(), end, value);
  if (ec != std::errc() || ptr != end || value < low || value > high)
    throw InputError("the " + spec.name + " preconditioner's argument must be an integer in " +
                     std::to_string(low) + ".." + std::to_string(high) + " (got '" + spec.text() +
                     "')");
  return value;
}
}  // namespace precond

}  // namespace cgs
