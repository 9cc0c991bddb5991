// Chebyshev: z = p(D^-1 A) D^-1 r, p of degree d - 1 the Chebyshev polynomial that best
// approximates 1/lambda on [a, b] (d steps of the Chebyshev iteration for A z = r from z = 0,
// Jacobi-scaled; Saad, Iterative Methods, alg. 12.1). Every step is one SpMV-like operation,
// so it runs inside the fused loops as easily as Jacobi.
//
// [a, b] comes from 40 Lanczos steps on D^-1/2 A D^-1/2: b is 1.1 times the largest Ritz value
// (never above the Gershgorin bound), because M must stay positive definite for CG and p goes
// negative beyond b; a is the smallest Ritz value (above the true smallest eigenvalue, where p
// is still positive, so only the quality suffers, never the definiteness). Where the solve runs
// on the GPU and A is large, the Lanczos steps run there too (spectrum_gpu.hpp): on 16 host
// cores they took 1.3 s of a 9M-row grid's set-up.
#include <algorithm>
#include <cmath>
#include <sstream>
#include <type_traits>

#include "formats/convert.hpp"
#include "formats/types.hpp"
#include "solver/precond/builtin.hpp"
#include "solver/precond/sparse_parts.hpp"
#include "solver/precond/spectrum.hpp"
#include "solver/precond/spectrum_gpu.hpp"

namespace cgs::precond {
namespace {

template <typename T>
class Chebyshev final : public Preconditioner<T> {
 public:
  Chebyshev(Device device, int threads, int degree)
      : Preconditioner<T>(device, threads, false), degree_(degree) {}
  std::string name() const override { return "cheb:" + std::to_string(degree_); }

 protected:
  void analyze_pattern(const CsrMatrix<double>&) override {}

  void compute_values(const CsrMatrix<double>& A, ProgramSpec<T>& spec) override {
    std::vector<double> scale, inverse;
    scaled_diagonals(A, scale, inverse);
    const bool on_device = this->device() == Device::gpu && worth_device_setup(A.rows);
    const Interval s = on_device ? spectrum_bounds_on_device(A, scale, 40, lent_arrays())
                                 : spectrum_bounds(A, scale, 40);
    this->report_.set_fact("Lanczos on", on_device ? "the device" : "the host");
    std::ostringstream what;
    what.precision(17);  // exact: a test rebuilds the polynomial from these
    what << "[" << s.a << ", " << s.b << "] (largest Ritz value " << s.ritz_max << ", Gershgorin "
         << s.gershgorin << ")";
    this->report_.set_fact("interval", what.str());
    const std::vector<OpSpec> ops = steps(spec, A, s, inverse);
    if (!spec.ops.empty()) {
      spec.value_arrays[inverse_] = cast_to<T>(inverse);
      spec.ops = ops;  // new coefficients for the new [a, b]: the seam places them again
      return;
    }
    spec.ops = ops;
  }

 private:
  // The backend's device copy of A as the Lanczos can read it (its values only in double).
  precond::CsrArrays lent_arrays() const {
    precond::CsrArrays arrays;
    if (const CsrView<T>* lent = this->lent_matrix()) {
      arrays.row_ptr = lent->row_ptr;
      arrays.col_idx = lent->col_idx;
      if constexpr (std::is_same_v<T, double>) arrays.values = lent->values;
    }
    return arrays;
  }

  // D^-1/2 and D^-1, rows on every host core (a serial pass was tens of ms on 9M rows).
  static void scaled_diagonals(const CsrMatrix<double>& A, std::vector<double>& scale,
                               std::vector<double>& inverse) {
    const index_t n = A.rows;
    scale.resize(std::size_t(n));
    inverse.resize(std::size_t(n));
#pragma omp parallel for schedule(static) if (worth_threads(n))
    for (index_t i = 0; i < n; ++i) {
      double d = 0;
      for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
        if (A.col_idx[k] == i) d += A.values[k];
      scale[std::size_t(i)] = 1 / std::sqrt(d);
      inverse[std::size_t(i)] = 1 / d;
    }
  }

  // Op 0: d0 = D^-1 r / theta (z itself when d = 1); op k = 1 .. d-1: res_k = res_{k-1} - A
  // d_{k-1}, d_k = rho_k rho_{k-1} d_{k-1} + 2 rho_k / delta D^-1 res_k, z += d_k.
  std::vector<OpSpec> steps(ProgramSpec<T>& spec, const CsrMatrix<double>& A, const Interval& s,
                            const std::vector<double>& inverse) {
    const bool first_time = spec.ops.empty();
    if (first_time) {
      inverse_ = spec.add_values(cast_to<T>(inverse));
      if (degree_ > 1) {
        add_matrix(spec, A);
        residual_ = spec.add_work(std::size_t(A.rows));
        direction_[0] = spec.add_work(std::size_t(A.rows));
        direction_[1] = spec.add_work(std::size_t(A.rows));
      }
    } else if (degree_ > 1 && !spec.borrowed_value_array(a_values_)) {
      spec.value_arrays[a_values_] =
          cast_to<T>(A.values);  // a borrowed A is refreshed by its owner
    }
    const double theta = (s.b + s.a) / 2, delta = (s.b - s.a) / 2, sigma = theta / delta;
    std::vector<OpSpec> ops;
    OpSpec start;
    start.kind = OpKind::product;
    start.items = A.rows;
    start.v = kSlotR;
    start.gamma = 1 / theta;
    start.d = inverse_;
    start.y = degree_ == 1 ? kSlotZ : direction_[0];
    start.dot = degree_ == 1;
    ops.push_back(start);
    double rho_prev = 1 / sigma;
    for (int k = 1; k < degree_; ++k) {
      const double rho = 1 / (2 * sigma - rho_prev);
      OpSpec op;
      op.kind = OpKind::chebyshev_step;
      op.items = A.rows;
      op.row_ptr = a_ptr_;
      op.col_idx = a_cols_;
      op.values = a_values_;
      op.d = inverse_;
      op.x = direction_[(k - 1) % 2];
      op.y = direction_[k % 2];
      op.v = k == 1 ? kSlotR : residual_;
      op.t = residual_;
      op.u = k == 1 ? direction_[0] : kSlotZ;
      op.w = kSlotZ;
      op.alpha = rho * rho_prev;
      op.beta = 2 * rho / delta;
      op.dot = k + 1 == degree_;
      ops.push_back(op);
      rho_prev = rho;
    }
    return ops;
  }

  // A for the steps' products: the backend's device copy where one is lent and A is large (a GPU
  // set-up reads it in place, no second upload), else a copy in the program's arrays. Small
  // systems keep the copy: it costs little, and the cluster loop's one block may hold the
  // program's packed arrays in shared memory, where a borrowed array is read from L2.
  void add_matrix(ProgramSpec<T>& spec, const CsrMatrix<double>& A) {
    const CsrView<T>* lent = this->lent_matrix();
    if (lent && worth_device_setup(A.rows)) {
      a_ptr_ = spec.borrow_indices(lent->row_ptr);
      a_cols_ = spec.borrow_indices(lent->col_idx);
      a_values_ = spec.borrow_values(lent->values);
      this->report_.set_fact("matrix", "the SpMV backend's device copy, read in place");
      return;
    }
    a_ptr_ = spec.add_indices(A.row_ptr);
    a_cols_ = spec.add_indices(A.col_idx);
    a_values_ = spec.add_values(cast_to<T>(A.values));
  }

  int degree_;
  int inverse_ = kNoArray, a_ptr_ = kNoArray, a_cols_ = kNoArray, a_values_ = kNoArray;
  int residual_ = kNoSlot, direction_[2] = {kNoSlot, kNoSlot};
};

}  // namespace

template <typename T>
std::unique_ptr<Preconditioner<T>> make_chebyshev(const PrecondSpec& spec, Device device,
                                                  int threads) {
  return std::make_unique<Chebyshev<T>>(device, threads, integer_argument(spec, 4, 1, 64));
}

template std::unique_ptr<Preconditioner<float>> make_chebyshev(const PrecondSpec&, Device, int);
template std::unique_ptr<Preconditioner<double>> make_chebyshev(const PrecondSpec&, Device, int);

}  // namespace cgs::precond
