// CHOLMOD's functions as this project calls them, resolved from its shared library on first use
// (base/shared_library.hpp says why), so that only a run that factorises with CHOLMOD (netsolve
// --direct-backend cholmod, cgsolve --validate) loads it and what it pulls in (LAPACK, BLAS,
// gfortran, METIS, AMD...: about 4 ms of a process's start-up on a small machine).
// Only in builds that found CHOLMOD's header (CGSOLVE_HAVE_CHOLMOD).
#pragma once

#if CGSOLVE_HAVE_CHOLMOD
#include <cholmod.h>

#include <string>

namespace cgs::cholmod {

struct Api {
  decltype(&::cholmod_start) start;
  decltype(&::cholmod_finish) finish;
  decltype(&::cholmod_analyze) analyze;
  decltype(&::cholmod_factorize) factorize;
  decltype(&::cholmod_solve) solve;
  decltype(&::cholmod_solve2) solve2;
  decltype(&::cholmod_copy_factor) copy_factor;
  decltype(&::cholmod_allocate_sparse) allocate_sparse;
  decltype(&::cholmod_allocate_dense) allocate_dense;
  decltype(&::cholmod_free_factor) free_factor;
  decltype(&::cholmod_free_sparse) free_sparse;
  decltype(&::cholmod_free_dense) free_dense;
};

// The table, the library loaded on the first call (thread-safe). Throws std::runtime_error
// naming the library and the loader's reason where it cannot be loaded.
const Api& api();

// Whether the library loads (and loads it); `why` gets the reason where not.
bool available(std::string* why = nullptr);

}  // namespace cgs::cholmod
#endif
