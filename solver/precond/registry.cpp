// The preconditioners cgsolve and netsolve know: one line each.
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
      {"none", "plain CG", "", false, false, &make_simple<precond::Identity, float>,
       &make_simple<precond::Identity, double>},
      {"jacobi", "diagonal scaling, z = r / diag(A)", "", false, true,
       &make_simple<precond::Jacobi, float>, &make_simple<precond::Jacobi, double>},
  };
  return table;
}

}  // namespace cgs
