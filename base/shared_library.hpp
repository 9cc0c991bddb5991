// An optional shared library opened when a run first needs it (dlopen), not at start-up.
//
// CHOLMOD (with LAPACK, BLAS, gfortran, METIS...) and cuSPARSE cost milliseconds to load -- more
// than a small network's whole simulation -- and most runs never call them. Code that uses one
// asks for its functions through a table filled here on first use (solver/cholmod_api.hpp,
// spmv/cuda/cusparse_api.hpp); a run that does not use it never maps it. Where the library is
// absent the first use fails with an error naming it and the loader's reason.
#pragma once

#include <string>
#include <vector>

namespace cgs {

class SharedLibrary {
 public:
  // Tries each candidate in turn (a soname goes through the loader's search: LD_LIBRARY_PATH,
  // ld.so.cache; an absolute path is opened as is) and keeps the first that opens. `what` names
  // the library for the error, e.g. "CHOLMOD". Throws std::runtime_error when none opens.
  SharedLibrary(const std::vector<std::string>& candidates, const std::string& what);
  // The library stays loaded for the life of the process (no dlclose): libraries such as
  // cuSPARSE keep state that must outlive every object using them.
  ~SharedLibrary() = default;
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;

  // The address of `symbol`; throws std::runtime_error naming the library and the symbol when the
  // library lacks it (another version than the one built against).
  void* symbol(const char* name) const;

  // `symbol` as a pointer of the function's own type: f = lib.function<decltype(&::fn)>("fn").
  template <typename Function>
  Function function(const char* name) const {
    return reinterpret_cast<Function>(symbol(name));
  }

  const std::string& path() const { return path_; }  // the candidate that opened

 private:
  void* handle_ = nullptr;
  std::string path_, what_;
};

}  // namespace cgs
