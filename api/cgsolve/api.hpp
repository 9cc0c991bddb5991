// cgsolve's stable C++ API (docs/cpp-api.md): CG on a sparse symmetric positive definite matrix
// given as the caller's CSR arrays, in the stages of solver/solver.hpp:
//   cgsolve::Solver s(A, options);   analyze: the plan (format, loop, preconditioner) and its set-up
//   s.set_values(values);            new values for the same pattern
//   cgsolve::Result r = s.solve(b, x);
// or all at once, as the cgsolve program does: cgsolve::solve(A, b, x, options).
// This header needs nothing but the standard library; the engine's own headers are not installed
// (they change). Link cgsolve::cgsolve (find_package(cgsolve)).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace cgsolve {

// Bad input (a matrix, a vector or an option): the message is the cgsolve program's.
class InputError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};
// The GPU was asked for and none is usable (the program's exit 4).
class DeviceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class IndexType { int32, int64 };

// The caller's CSR arrays. They are read during the call that takes them (Solver's constructor,
// set_values, solve) and not kept: the engine holds its own copy in its format.
struct CsrRef {
  std::int64_t rows = 0, cols = 0;
  IndexType index_type = IndexType::int32;
  const void* row_ptr = nullptr;   // rows + 1 entries of index_type, row_ptr[0] = 0
  const void* col_idx = nullptr;   // row_ptr[rows] entries of index_type, ascending in each row
  const double* values = nullptr;  // row_ptr[rows] entries
};

// The cgsolve program's options, by the same names and values (README.md, cgsolve --help).
struct Options {
  std::string format = "csr";  // coo, csr, ell, hll or auto
  std::string device = "cpu";  // cpu, serial or gpu
  std::string precond = "none";  // e.g. jacobi, ic0, amg, auto (--precond)
  std::string precision = "double";  // or float
  std::string cpu_loop = "fused", gpu_loop = "auto";
  std::string kernel;  // the GPU kernel; empty: the format's default
  int threads = 0;     // OpenMP threads; 0: all cores
  bool sort_rows = false;
  std::optional<bool> rcm;  // --rcm / --no-rcm; unset: the preconditioner's preference
  double tol = 1e-8, atol = 0;
  long max_iters = 0;   // 0: 10 n
  int check_every = 0;  // 0: the device's default
  bool record_history = false;  // Result::residual_history
  bool check_symmetry = true;   // refuse A != A^T as the program does (relative 1e-12)
  // Any other option of the program by its name and value, e.g. {"--hack-size", "64"}; a flag
  // takes an empty value.
  std::vector<std::pair<std::string, std::string>> more;
};

// What ran: every decision that was not simply what was asked has its reason.
struct PlanInfo {
  std::string format, device, loop, precond, precision, kernel;  // device: cpu, serial or gpu
  int threads = 1;
  bool rcm = false, sort_rows = false;
  std::string summary;               // one line, as the program's report prints it
  std::vector<std::string> reasons;  // one per decision
  std::string inspection;            // what an "auto" inspector timed (empty without one)
};

struct Result {
  long iterations = 0;
  bool converged = false;      // converged, or b = 0
  std::string status;          // "converged", "max iterations", ...
  double relative_residual = 0;       // CG's ||r|| / ||b||
  double true_relative_residual = 0;  // ||b - A x|| / ||b|| in double on A itself
  std::vector<double> residual_history;  // ||r_k|| when Options::record_history
  // The report's times in seconds, by name: inspect, probe_kept, thread_start, reorder, convert,
  // upload, precond, set_values, solve, download.
  std::map<std::string, double> times;
  PlanInfo plan;
  std::string backend;          // e.g. "csr/omp"
  bool spmv_measured = false;   // false: spmv_median_s is 0, not a time
  double spmv_median_s = 0;
  long probe_iterations = 0;    // --precond auto: the chosen candidate's probe, kept as the start
};

// A solver analyzed on A once, for many right-hand sides and new values of the same pattern.
class Solver {
 public:
  // Plans (the inspector where options say "auto") and analyzes A; A is copied.
  explicit Solver(const CsrRef& A, const Options& options = {});
  ~Solver();
  Solver(Solver&&) noexcept;
  Solver& operator=(Solver&&) noexcept;

  // New values for the analyzed pattern: nnz() doubles in the pattern's order, read now.
  void set_values(const double* values);
  // The same with the pattern given again and checked (InputError when it differs).
  void set_values(const CsrRef& A);
  // b: rows() entries. x: rows() entries, the initial guess in (guess false: zeros), the
  // solution out. Not converged is reported in the result, not thrown.
  Result solve(const double* b, double* x, bool guess = false);
  std::int64_t rows() const;
  std::int64_t nnz() const;
  PlanInfo plan() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// One call, as the cgsolve program solves: plan (or inspect, probing on this b), analyze, solve.
// x: rows entries, the initial guess in (guess false: zeros), the solution out.
Result solve(const CsrRef& A, const double* b, double* x, const Options& options = {},
             bool guess = false);

// The library's version, e.g. "0.1.0", and whether it was built with the GPU backends.
std::string version();
bool built_with_cuda();

}  // namespace cgsolve
