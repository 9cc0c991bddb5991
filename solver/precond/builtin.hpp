// The preconditioners beyond the pointwise ones, each in its own file with its set-up; the
// registry (registry.cpp) makes them through these functions. Every one turns A into a program
// (program.hpp), so it runs in every CG loop on every device without code of its own there.
//   ic0.cpp        incomplete Cholesky, zero fill; triangular solves by level sets
//   fsai.cpp       factorized sparse approximate inverse G^T G on the pattern of tril(A^k)
//   bjacobi.cpp    exact inverses of diagonal blocks of N rows
//   chebyshev.cpp  a Chebyshev polynomial in D^-1 A of degree d
//   amg.cpp        smoothed-aggregation algebraic multigrid, one V-cycle (set-up: amg_setup.cpp)
//   cholesky.cpp   the complete sparse Cholesky factor (Eigen, AMD order); CG in 1-3 steps
#pragma once

#include <memory>

#include "solver/precond/preconditioner.hpp"

namespace cgs::precond {

template <typename T>
std::unique_ptr<Preconditioner<T>> make_ic0(const PrecondSpec& spec, Device device, int threads);
template <typename T>
std::unique_ptr<Preconditioner<T>> make_fsai(const PrecondSpec& spec, Device device, int threads);
template <typename T>
std::unique_ptr<Preconditioner<T>> make_bjacobi(const PrecondSpec& spec, Device device,
                                                int threads);
template <typename T>
std::unique_ptr<Preconditioner<T>> make_chebyshev(const PrecondSpec& spec, Device device,
                                                  int threads);
template <typename T>
std::unique_ptr<Preconditioner<T>> make_amg(const PrecondSpec& spec, Device device, int threads);
template <typename T>
std::unique_ptr<Preconditioner<T>> make_cholesky(const PrecondSpec& spec, Device device,
                                                 int threads);

// The integer argument of `spec` ("fsai:2" -> 2), `fallback` when there is none; InputError
// naming the preconditioner when it is not an integer in [low, high].
int integer_argument(const PrecondSpec& spec, int fallback, int low, int high);

}  // namespace cgs::precond
