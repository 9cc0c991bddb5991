// chol's set-up counted before it is built (cholesky.cpp): Eigen's approximate-minimum-degree
// order and symbolic analysis, what chol's analyze does first. `--precond auto` reads it to skip
// chol where its factor would be refused or cost more than the best candidate's remaining time.
#pragma once

#include <string>

#include "base/input_error.hpp"
#include "formats/csr.hpp"

namespace cgs {
struct PrecondSpec;
}

namespace cgs::precond {

struct CholeskyEstimate {
  double factor_entries = 0;  // L's, diagonal included
  double tril_entries = 0;    // tril(A)'s (A symmetric)
  double flops = 0;           // sum over L's columns of their entries squared
  double levels = 0;          // each triangular solve's levels (the elimination tree's height)
  std::string refusal;        // non-empty: chol would refuse the factor, and why
};

// chol:pivot=fail met a pivot <= 0 (in a fixed order): the row of A it belongs to, for a caller
// with fallbacks of its own (netsolve's CG tries the direct path's other orders).
class NotPositiveDefinite : public InputError {
 public:
  NotPositiveDefinite(const std::string& message, int row) : InputError(message), row(row) {}
  int row;
};

// Whether chol's argument fixes the elimination order (order=natural or order=given): then the
// factorisation is the left-looking one and M^-1 b its own solve, an answer a caller may start CG
// from (netsolve does). InputError for an argument chol refuses.
bool chol_fixed_order(const PrecondSpec& spec);
// order=given: the order comes with the request (PrecondSpec::elimination_order).
bool chol_given_order(const PrecondSpec& spec);

// `max_fill` as chol:maxfill=N (default 20).
CholeskyEstimate estimate_cholesky(const CsrMatrix<double>& A, double max_fill = 20);

}  // namespace cgs::precond
