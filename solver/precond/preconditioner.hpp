// The preconditioner seam: every preconditioner is one class behind this interface, with its
// set-up on the matrix (analyze: the pattern; set_values: the numbers) and its apply in one of
// two forms every CG loop runs:
//   - pointwise, z_i = d_i r_i (the identity and Jacobi): the loops fuse it with the residual
//     update, as they always have;
//   - a program (solver/precond/program.hpp): operations separated by barriers, which the fused
//     loops run between their passes (on a thread team or a GPU grid) and the generic loop runs
//     through apply().
// A preconditioner writes its set-up only; where its program runs is not its concern. Adding one:
// a class deriving from Preconditioner<T> (analyze, set_values, and build_program() or
// pointwise_diagonal()), and one line in solver/precond/registry.cpp.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "formats/csr.hpp"
#include "spmv/device_buffer.hpp"
#include "solver/precond/device_program.hpp"
#include "solver/precond/host_program.hpp"
#include "spmv/backend.hpp"

namespace cgs {

// An elimination order a caller gives chol (order[k]: the row eliminated k-th), shared by the
// copies of a request.
using ElimOrder = std::shared_ptr<const std::vector<int>>;

// What was asked: a name and an optional argument ("fsai:2" -> fsai, 2; "bjacobi:64").
struct PrecondSpec {
  std::string name = "none";
  std::string argument;  // empty: the preconditioner's default
  // chol:order=given: the caller's order (netsolve gives EPANET's); no text of its own.
  ElimOrder elimination_order;
  std::string text() const { return argument.empty() ? name : name + ":" + argument; }
  bool is(const char* n) const { return name == n; }
};
PrecondSpec parse_precond(const std::string& text);  // throws InputError for an unknown name

// A table of numbers a set-up reports beside its facts (AMG: rows, nonzeros and seconds per
// level; the seconds of each phase inside analyze and values). columns[0] names the rows'
// labels; each row is a label and one number per further column.
struct PrecondTable {
  std::string name;
  std::vector<std::string> columns;
  std::vector<std::pair<std::string, std::vector<double>>> rows;
};

// What the set-up did, for the report: time per phase, and facts ("levels", "45 + 45").
struct PrecondReport {
  std::string name;
  std::vector<std::pair<std::string, double>> seconds;  // phase, seconds
  std::vector<std::pair<std::string, std::string>> facts;
  std::vector<PrecondTable> tables;  // details; their times are inside `seconds` already
  double total_seconds() const;
  void add_time(const std::string& phase, double s);  // adds to the phase, or appends it
  void set_fact(const std::string& key, const std::string& value);
  void set_table(PrecondTable table);  // replaces the table of that name, or appends it
};

template <typename T>
class Preconditioner {
 public:
  virtual ~Preconditioner();
  Preconditioner(const Preconditioner&) = delete;
  Preconditioner& operator=(const Preconditioner&) = delete;

  virtual std::string name() const = 0;  // as it would be asked for: "ic0", "fsai:2"

  // The sparsity pattern: orderings, symbolic factorisation, levels, aggregates. A is the
  // system in the solve's row order, in double, on the host.
  void analyze(const CsrMatrix<double>& A);
  // New values for the same pattern (every Newton trial of a network): the numeric part only.
  void set_values(const CsrMatrix<double>& A);

  // The pointwise form: z_i = d_i r_i with d in the device's memory; null d: the identity.
  bool pointwise() const { return pointwise_; }
  const T* diagonal() const { return diagonal_.empty() ? nullptr : diagonal_.data(); }

  // The program form, placed on the device (exactly one of the two is set when !pointwise()).
  const precond::HostProgram<T>* host_program() const { return host_.get(); }
  const precond::DeviceProgramView<T>* device_program() const {
    return gpu_ ? &gpu_->view() : nullptr;
  }
  // Number of operations (barriers) of one apply; 0 for a pointwise preconditioner.
  int program_size() const;

  // Points the program at r and z (vectors in the device's memory): the fused loops bind their
  // own before they run the program; apply() binds what it is given.
  void bind(const T* r, T* z);
  // z = M^-1 r on vectors in the device's memory (the generic loop; r.z is not computed).
  void apply(const T* r, T* z);

  const PrecondReport& report() const { return report_; }
  Device device() const { return device_; }

  // The solve's matrix where the SpMV backend keeps it on the GPU (its CSR arrays in T, in the
  // row order analyze gets), lent before analyze so that a set-up that multiplies by A (the
  // device Lanczos, Chebyshev's program) reads it in place instead of uploading a second copy
  // (0.6 s of cheb:8's set-up on a 9M-row grid). The lender (the solver) keeps it
  // alive as long as this preconditioner and writes new values into it before each
  // set_values. On the CPU devices the lender's CSR in host memory (AMG's host program reads
  // the finest level's A there instead of two copies: lent_host_matrix).
  void lend_matrix(const CsrView<T>& A) { lent_ = A; }

 protected:
  Preconditioner(Device device, int threads, bool pointwise);

  // What a preconditioner implements. analyze_pattern runs once per pattern; compute_values
  // after it and at every set_values. A pointwise one returns its diagonal from
  // pointwise_diagonal() (empty: the identity); the others fill `spec` in compute_values (the
  // first time: everything; later: the value arrays only, same handles and sizes).
  virtual void analyze_pattern(const CsrMatrix<double>& A) = 0;
  virtual void compute_values(const CsrMatrix<double>& A, precond::ProgramSpec<T>& spec) = 0;
  virtual std::vector<T> pointwise_diagonal(const CsrMatrix<double>&) { return {}; }

  PrecondReport report_;
  int threads() const { return threads_; }
  // The lent device matrix (lend_matrix), or null: nothing lent, or not a GPU set-up.
  const CsrView<T>* lent_matrix() const {
    return device_ == Device::gpu && lent_ ? &*lent_ : nullptr;
  }
  // The lent device matrix's arrays where a device set-up reads them in place (its values only
  // in double), or null pointers.
  precond::CsrArrays lent_device_arrays() const {
    precond::CsrArrays arrays;
    if (const CsrView<T>* lent = lent_matrix()) {
      arrays.row_ptr = lent->row_ptr;
      arrays.col_idx = lent->col_idx;
      if constexpr (std::is_same_v<T, double>) arrays.values = lent->values;
    }
    return arrays;
  }
  // The lent host matrix, or null: nothing lent, or a GPU set-up.
  const CsrView<T>* lent_host_matrix() const {
    return device_ != Device::gpu && lent_ ? &*lent_ : nullptr;
  }

 private:
  void place();

  Device device_;
  int threads_;
  bool pointwise_;
  bool placed_ = false;
  DeviceBuffer<T> diagonal_;
  std::optional<CsrView<T>> lent_;
  precond::ProgramSpec<T> spec_;
  std::vector<precond::OpSpec> placed_ops_;  // the operations as place() last placed them
  std::unique_ptr<precond::HostProgram<T>> host_;
  std::unique_ptr<precond::DeviceProgram<T>> gpu_;
  const T* bound_r_ = nullptr;
  T* bound_z_ = nullptr;
};

// One registered preconditioner: its name, what it is, its argument, and how to make it. `what`
// and `argument` are the CLI's help (preconditioner_list, preconditioner_help).
struct PrecondEntry {
  const char* name;
  const char* what;              // one line
  const char* argument;          // "" or "syntax: meaning", e.g. "k: ..., 1..4, default 1"
  bool wants_rcm;                // the planner renumbers rows by reverse Cuthill-McKee for it
  bool needs_positive_diagonal;  // the solver refuses A with a diagonal entry <= 0 first
  std::unique_ptr<Preconditioner<float>> (*make_float)(const PrecondSpec&, Device, int);
  std::unique_ptr<Preconditioner<double>> (*make_double)(const PrecondSpec&, Device, int);
  std::string (*options)() = nullptr;  // a table of key=value options, as text (amg's)
};

const std::vector<PrecondEntry>& preconditioners();
const PrecondEntry& find_preconditioner(const std::string& name);  // InputError if unknown
std::string preconditioner_names();                                // "none, jacobi, ..."
// Every preconditioner a line: "name[:argument]: what it is; what the argument means".
std::string preconditioner_list();
// One preconditioner's help: what it is, its argument, its options' table where it has one.
std::string preconditioner_help(const std::string& name);  // InputError if unknown

template <typename T>
std::unique_ptr<Preconditioner<T>> make_preconditioner(const PrecondSpec& spec, Device device,
                                                       int threads);

}  // namespace cgs
