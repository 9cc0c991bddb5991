#include "solver/cholmod_api.hpp"

#if CGSOLVE_HAVE_CHOLMOD
#include <stdexcept>

#include "base/shared_library.hpp"

namespace cgs::cholmod {
namespace {

// The soname of the library found at build time, then its full path there (CMakeLists.txt).
Api load() {
  static const SharedLibrary library({CGSOLVE_CHOLMOD_SONAME, CGSOLVE_CHOLMOD_PATH}, "CHOLMOD");
  Api api{};
  api.start = library.function<decltype(api.start)>("cholmod_start");
  api.finish = library.function<decltype(api.finish)>("cholmod_finish");
  api.analyze = library.function<decltype(api.analyze)>("cholmod_analyze");
  api.factorize = library.function<decltype(api.factorize)>("cholmod_factorize");
  api.solve = library.function<decltype(api.solve)>("cholmod_solve");
  api.solve2 = library.function<decltype(api.solve2)>("cholmod_solve2");
  api.copy_factor = library.function<decltype(api.copy_factor)>("cholmod_copy_factor");
  api.allocate_sparse = library.function<decltype(api.allocate_sparse)>("cholmod_allocate_sparse");
  api.allocate_dense = library.function<decltype(api.allocate_dense)>("cholmod_allocate_dense");
  api.free_factor = library.function<decltype(api.free_factor)>("cholmod_free_factor");
  api.free_sparse = library.function<decltype(api.free_sparse)>("cholmod_free_sparse");
  api.free_dense = library.function<decltype(api.free_dense)>("cholmod_free_dense");
  return api;
}

}  // namespace

const Api& api() {
  static const Api table = load();  // a throw leaves it unset: the next call tries again
  return table;
}

bool available(std::string* why) {
  try {
    api();
    return true;
  } catch (const std::runtime_error& e) {
    if (why) *why = e.what();
    return false;
  }
}

}  // namespace cgs::cholmod
#endif
