// Smoothed-aggregation algebraic multigrid: z = M^-1 r is one V-cycle from z = 0 on the
// hierarchy amg_setup.hpp builds (strength, MIS(2) aggregates, Jacobi-smoothed P, R = P^T,
// Galerkin R A P), written as a program (program.hpp), so it runs in every CG loop on every
// device without loop code of its own. Per level l < last, with b_0 = r:
//   x_l  = S_l b_l                         pre-smoothing from 0 (no product with A for its start)
//   r_l  = b_l - A_l x_l                   product
//   b_l+1 = R_l r_l                        product, one item per coarse row
//   x_l+1 = the same on level l + 1
//   x_l += P_l x_l+1                       product in place (reads x_l at its own row only)
//   x'_l = x_l + S_l (b_l - A_l x_l)       post-smoothing into another slot (z at level 0)
// and on the last level x = A_c^-1 b as one dense block product (or the smoother from 0 where
// A_c is too large to invert densely). The smoother S_l is a polynomial in D^-1 A_l (Chebyshev
// of degree `sweeps`, or `sweeps` damped-Jacobi steps), the same before and after, so M^-1 is
// symmetric; each smoother converges in the A-norm (its interval reaches D^-1 A's Gershgorin
// bound, never an estimate below lambda_max), so M^-1 is positive definite and CG holds.
#include <Eigen/Dense>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <type_traits>

#include "formats/types.hpp"
#include "solver/precond/amg_nullspace.hpp"
#include "solver/precond/amg_options.hpp"
#include "solver/precond/amg_setup.hpp"
#include "solver/precond/builtin.hpp"
#include "solver/precond/sparse_parts.hpp"

namespace cgs::precond {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The coarsest level is inverted densely up to this many rows (or `coarse` if larger); past it
// (coarsening that stalled) the smoother stands in for the coarse solve.
constexpr index_t kDenseRows = 1000;
// Chebyshev smooths the upper part of D^-1 A's spectrum, [b / kChebyshevRatio, b]: the low
// part is the coarse levels' (hypre's default is 0.3 b). On poisson2d:1000, degree 1 (2): 19
// (14) iterations with a ratio of 30, 13 (11) with 10 or 4.
constexpr double kChebyshevRatio = 4;

// ---- the program ----

// Arrays and work slots by order of request: the first compute_values adds them to the spec,
// later ones (same hierarchy, same order) find them at the same handles and rewrite the value
// arrays only, as the seam asks.
// to = from (cast to To), on every host core for long arrays.
template <typename From, typename To>
void parallel_copy(const std::vector<From>& from, std::vector<To>& to) {
  to.resize(from.size());
  const auto n = std::int64_t(from.size());
#pragma omp parallel for schedule(static) if (n > 100000)
  for (std::int64_t i = 0; i < n; ++i) to[std::size_t(i)] = To(from[std::size_t(i)]);
}

template <typename T>
class SpecWriter {
 public:
  explicit SpecWriter(ProgramSpec<T>& spec) : spec_(spec), first_(spec.ops.empty()) {
    spec_.ops.clear();
  }
  int indices(const std::vector<index_t>& a) {
    if (!first_) return next_index_++;
    std::vector<index_t> copy;
    parallel_copy(a, copy);
    return spec_.add_indices(std::move(copy));
  }
  // Later calls copy into the arrays already there (no allocation, no page faults: at 9M rows
  // the value arrays are 0.8 GB, and set_values spent 0.87 s here making them anew serially).
  int values(const std::vector<double>& a) {
    if (first_) {
      std::vector<T> copy;
      parallel_copy(a, copy);
      return spec_.add_values(std::move(copy));
    }
    parallel_copy(a, spec_.value_arrays[next_value_]);
    return next_value_++;
  }
  int typed_values(std::vector<T> a) {
    if (first_) return spec_.add_values(std::move(a));
    spec_.value_arrays[next_value_] = std::move(a);
    return next_value_++;
  }
  // Device arrays the program reads where they lie (program_spec.hpp's borrowed arrays: the GPU
  // hierarchy's A, P and R, 0.83 s of copies on poisson2d:3000 otherwise). Later calls find
  // them at the same handles; their owner refreshed them in place, so they must not have moved.
  int borrowed_indices(const index_t* device) {
    if (first_) return spec_.borrow_indices(device);
    return same_place(spec_.borrowed_index_array(next_index_), device, next_index_);
  }
  int borrowed_values(const T* device) {
    if (first_) return spec_.borrow_values(device);
    return same_place(spec_.borrowed_value_array(next_value_), device, next_value_);
  }
  int work(index_t n) {
    return first_ ? spec_.add_work(std::size_t(n)) : kFirstWorkSlot + next_work_++;
  }
  void op(const OpSpec& o) { spec_.ops.push_back(o); }
  std::vector<OpSpec>& ops() { return spec_.ops; }

 private:
  template <typename P>
  static int same_place(const P* before, const P* now, int& next) {
    if (before != now) throw std::logic_error("amg: a level's device array moved between set-ups");
    return next++;
  }

  ProgramSpec<T>& spec_;
  bool first_;
  int next_index_ = 0, next_value_ = 0, next_work_ = 0;
};

struct MatrixHandles {
  index_t rows = 0;
  int row_ptr = kNoArray, col_idx = kNoArray, values = kNoArray;
};

// What the program of one level reads.
struct LevelHandles {
  index_t n = 0;
  MatrixHandles A, P, R;
  int scale = kNoArray;  // D^-1 (Chebyshev) or omega D^-1 (Jacobi)
  Interval spectrum{};
  int inverse = kNoArray;  // the last level's dense inverse, when it has one
};

// The inverse of the small SPD matrix A, column-major, symmetrised (as bjacobi's blocks):
// Cholesky, or where A is only semidefinite (a coarse level of a singular system), the
// pseudo-inverse over the eigenvalues above rounding.
template <typename T>
std::vector<T> dense_inverse(const CsrMatrix<double>& A) {
  const index_t n = A.rows;
  Eigen::MatrixXd D = Eigen::MatrixXd::Zero(n, n);
  for (index_t i = 0; i < n; ++i)
    for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) D(i, A.col_idx[k]) = A.values[k];
  Eigen::MatrixXd inverse;
  const Eigen::LLT<Eigen::MatrixXd> llt(D);
  if (llt.info() == Eigen::Success) {
    inverse = llt.solve(Eigen::MatrixXd::Identity(n, n));
  } else {
    const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(D);
    const Eigen::VectorXd l = eig.eigenvalues();
    const double cut = 1e-12 * l.cwiseAbs().maxCoeff();
    Eigen::VectorXd inv = Eigen::VectorXd::Zero(n);
    for (index_t i = 0; i < n; ++i)
      if (l(i) > cut) inv(i) = 1 / l(i);
    inverse = eig.eigenvectors() * inv.asDiagonal() * eig.eigenvectors().transpose();
  }
  inverse = (0.5 * (inverse + inverse.transpose())).eval();
  std::vector<T> out(std::size_t(n) * std::size_t(n));
  for (index_t c = 0; c < n; ++c)
    for (index_t r = 0; r < n; ++r) out[std::size_t(c) * n + r] = T(inverse(r, c));
  return out;
}

template <typename T>
class VCycleWriter {
 public:
  VCycleWriter(SpecWriter<T>& w, const std::vector<LevelHandles>& levels, const AmgOptions& o)
      : w_(w), levels_(levels), o_(o) {}

  // Ops leaving x_l ~= A_l^-1 b_l in slot `out` (b in slot `b`).
  void cycle(std::size_t l, int b, int out) {
    const LevelHandles& L = levels_[l];
    if (l + 1 == levels_.size()) {
      coarse_solve(L, b, out);
      return;
    }
    const LevelHandles& C = levels_[l + 1];
    const int x = w_.work(L.n), residual = scratch(L).residual;
    smooth_from_zero(L, b, x);
    w_.op(product(L.A, x, residual, -1, b, 1));  // r_l = b_l - A_l x_l
    const int coarse_b = w_.work(C.n), coarse_x = w_.work(C.n);
    w_.op(product(L.R, residual, coarse_b, 1, kNoSlot, 0));  // b_l+1 = R r_l
    cycle(l + 1, coarse_b, coarse_x);
    OpSpec correct = product(L.P, coarse_x, x, 1, kNoSlot, 0);  // x_l += P x_l+1
    correct.u = x;
    correct.beta = 1;
    w_.op(correct);
    smooth_from(L, b, x, out);
  }

 private:
  // An operation over `items` rows of M reading x and writing y; the rest set by the caller.
  static OpSpec on_matrix(OpKind kind, index_t items, const MatrixHandles& M, int x, int y) {
    OpSpec op;
    op.kind = kind;
    op.items = items;
    op.row_ptr = M.row_ptr;
    op.col_idx = M.col_idx;
    op.values = M.values;
    op.x = x;
    op.y = y;
    return op;
  }

  // y = alpha S x + gamma v over S's rows.
  static OpSpec product(const MatrixHandles& S, int x, int y, double alpha, int v, double gamma) {
    OpSpec op = on_matrix(OpKind::product, S.rows, S, x, y);
    op.alpha = alpha;
    op.v = v;
    op.gamma = gamma;
    return op;
  }

  void coarse_solve(const LevelHandles& L, int b, int out) {
    if (L.inverse == kNoArray) {
      smooth_from_zero(L, b, out);
      return;
    }
    OpSpec op;
    op.kind = OpKind::block_product;
    op.items = L.n;
    op.block = L.n;
    op.blocks = L.inverse;
    op.x = b;
    op.y = out;
    op.alpha = 1;
    w_.op(op);
  }

  // Where each of `count` Jacobi steps writes so that the last writes `out` and none writes
  // the vector it reads (out and tmp alternate, counted back from the last).
  static int jacobi_target(int step, int count, int out, int tmp) {
    return (count - 1 - step) % 2 == 0 ? out : tmp;
  }

  void smooth_from_zero(const LevelHandles& L, int b, int out) {
    if (o_.smoother == Smoother::jacobi) {
      const int tmp = scratch(L).direction[0];
      OpSpec first;  // x = omega D^-1 b
      first.kind = OpKind::product;
      first.items = L.n;
      first.v = b;
      first.gamma = 1;
      first.d = L.scale;
      first.y = jacobi_target(0, o_.sweeps, out, tmp);
      w_.op(first);
      jacobi_steps(L, b, first.y, 1, out, tmp);
      return;
    }
    chebyshev_from(L, b, kNoSlot, out);
  }

  void smooth_from(const LevelHandles& L, int b, int x, int out) {
    if (o_.smoother == Smoother::jacobi) {
      jacobi_steps(L, b, x, 0, out, scratch(L).direction[0]);
      return;
    }
    chebyshev_from(L, b, x, out);
  }

  // Steps first .. sweeps-1 of x <- x + omega D^-1 (b - A x), from slot x.
  void jacobi_steps(const LevelHandles& L, int b, int x, int first, int out, int tmp) {
    for (int step = first; step < o_.sweeps; ++step) {
      OpSpec op = product(L.A, x, jacobi_target(step, o_.sweeps, out, tmp), -1, b, 1);
      op.d = L.scale;
      op.u = x;
      op.beta = 1;
      w_.op(op);
      x = op.y;
    }
  }

  // Chebyshev iteration of degree `sweeps` for A_l y = b from y = x (x = kNoSlot: from 0) into
  // `out` (Saad, alg. 12.1, as chebyshev.cpp; from x != 0 the first step also forms b - A x).
  void chebyshev_from(const LevelHandles& L, int b, int x, int out) {
    const double upper = L.spectrum.gershgorin, lower = upper / kChebyshevRatio;
    const double theta = (upper + lower) / 2, delta = (upper - lower) / 2, sigma = theta / delta;
    const int k = o_.sweeps;
    if (x == kNoSlot && k == 1) {  // one step from 0: out = D^-1 b / theta, no work vectors
      OpSpec op;
      op.kind = OpKind::product;
      op.items = L.n;
      op.v = b;
      op.gamma = 1 / theta;
      op.d = L.scale;
      op.y = out;
      w_.op(op);
      return;
    }
    const int residual = scratch(L).residual;
    const int* direction = scratch(L).direction;
    OpSpec op;
    if (x == kNoSlot) {  // d_0 = D^-1 b / theta; the residual is b itself
      op.kind = OpKind::product;
      op.items = L.n;
      op.v = b;
      op.gamma = 1 / theta;
      op.d = L.scale;
      op.y = direction[0];
    } else {  // res = b - A x, d_0 = D^-1 res / theta, out = x + d_0
      op = chebyshev_step(L, x, direction[0], b, x, out);
      op.t = residual;
      op.alpha = 0;
      op.beta = 1 / theta;
    }
    w_.op(op);
    double rho_prev = 1 / sigma;
    for (int step = 1; step < k; ++step) {
      const double rho = 1 / (2 * sigma - rho_prev);
      const bool from_zero_first = x == kNoSlot && step == 1;
      OpSpec s =
          chebyshev_step(L, direction[(step - 1) % 2], direction[step % 2],
                         from_zero_first ? b : residual, from_zero_first ? direction[0] : out, out);
      s.t = residual;
      s.alpha = rho * rho_prev;
      s.beta = 2 * rho / delta;
      w_.op(s);
      rho_prev = rho;
    }
    // The last step's residual and direction are read by no later operation: it writes w (out)
    // alone, two of its three vectors not written (level 0 of poisson2d:1000: 32 MB of writes
    // fewer in each V-cycle of ~530 MB).
    OpSpec& last = w_.ops().back();
    last.t = kNoSlot;
    last.y = kNoSlot;
  }

  // res = v - A x; dir = alpha x + beta D^-1 res; w = u + dir (slots: res -> t, set by caller).
  OpSpec chebyshev_step(const LevelHandles& L, int x, int dir, int v, int u, int w) {
    OpSpec op = on_matrix(OpKind::chebyshev_step, L.n, L.A, x, dir);
    op.d = L.scale;
    op.v = v;
    op.u = u;
    op.w = w;
    return op;
  }

  // A level's scratch vectors, made at its first use and shared by its pre-smoothing, its
  // residual b - A x (read by R before the coarse levels run) and its post-smoothing: none is
  // live across another. (Each had its own: 8 vectors of level 0's rows where 4 do, memory a
  // placed program zero-fills and a V-cycle streams through.) direction[0] is also Jacobi's
  // second vector; direction[1] is Chebyshev's, from degree 2.
  struct Scratch {
    int residual = kNoSlot;
    int direction[2] = {kNoSlot, kNoSlot};
  };
  const Scratch& scratch(const LevelHandles& L) {
    Scratch& s = scratch_[std::size_t(&L - levels_.data())];
    if (s.residual == kNoSlot) {
      s.residual = w_.work(L.n);
      s.direction[0] = w_.work(L.n);
      if (o_.sweeps > 1) s.direction[1] = w_.work(L.n);
    }
    return s;
  }

  SpecWriter<T>& w_;
  const std::vector<LevelHandles>& levels_;
  const AmgOptions& o_;
  std::vector<Scratch> scratch_ = std::vector<Scratch>(levels_.size());
};

template <typename T>
class Amg final : public Preconditioner<T> {
 public:
  Amg(Device device, int threads, const PrecondSpec& spec)
      : Preconditioner<T>(device, threads, false),
        argument_(spec.argument),
        options_(parse_amg_options(spec)) {
    // The numeric set-up where the solve runs; with a near-nullspace on the host (the GPU set-up
    // makes the constant vector's T only), the program copied to the device as a float one's is.
    options_.hierarchy.gpu = device == Device::gpu && !options_.has_nullspace();
    // A double program reads P and R on the device (borrowed): no host copies to make.
    options_.hierarchy.host_copies = !(options_.hierarchy.gpu && std::is_same_v<T, double>);
  }
  std::string name() const override { return argument_.empty() ? "amg" : "amg:" + argument_; }

 protected:
  void analyze_pattern(const CsrMatrix<double>& A) override {
    const std::shared_ptr<const amg::NearNullspace>& ns = options_.hierarchy.nullspace;
    if (options_.has_nullspace() && (!ns || ns->rows() != A.rows))
      options_.hierarchy.nullspace = amg::load_near_nullspace(
          options_.nullspace_file, options_.coords, options_.block, A.rows);
    lend_finest(A);
    h_ = amg::build_hierarchy(A, options_.hierarchy);
    fresh_ = true;  // its numbers are A's: compute_values need not make them again
  }

  void compute_values(const CsrMatrix<double>& A, ProgramSpec<T>& spec) override {
    if (!fresh_) {
      lend_finest(A);
      amg::refresh_hierarchy(h_, A, options_.hierarchy);
    }
    fresh_ = false;
    std::vector<std::pair<std::string, double>> phases = h_.phase_seconds;
    const auto start = Clock::now();
    coarse_seconds_ = 0;
    SpecWriter<T> writer(spec);
    std::vector<LevelHandles> levels = handles(writer, A);
    VCycleWriter<T>(writer, levels, options_).cycle(0, kSlotR, kSlotZ);
    writer.ops().back().dot = 1;  // the last operation writes z, every row
    phases.emplace_back("coarse inverse", coarse_seconds_);
    phases.emplace_back("program arrays", since(start) - coarse_seconds_);
    report(A, phases);
  }

 private:
  // The GPU set-up's finest operator is the SpMV backend's device CSR where the solver lent it
  // (lend_matrix; in double, so its values are A's), read in place: no upload of A's 0.54 GB at
  // each set-up of poisson2d:3000 (BENCHMARKS 20g: fresh 0.92 -> 0.77 s on the GPU). Its GPU test
  // (tests/gpu/test_gpu_amg.cpp, "on the backend's lent device matrix") compares fresh and
  // set_values on the lent A with the copied A's, which take the same decisions.
  static constexpr bool kLendFinestOnGpu = true;
  void lend_finest(const CsrMatrix<double>& A) {
    options_.hierarchy.finest_on_device = {};
    if constexpr (std::is_same_v<T, double>) {
      const CsrView<T>* lent = this->lent_matrix();
      if (!kLendFinestOnGpu || !options_.hierarchy.gpu || !lent) return;
      if (lent->rows != A.rows) throw std::logic_error("amg: the lent matrix has another size");
      options_.hierarchy.finest_on_device = {lent->row_ptr, lent->col_idx, lent->values, A.nnz()};
    }
  }

  // M's arrays in the spec: borrowed where `arrays` has them in place (in_place(); values only in
  // double: a float program needs its own converted copy), copied otherwise.
  MatrixHandles matrix(SpecWriter<T>& w, const CsrMatrix<double>& M, const CsrArrays& arrays = {}) {
    MatrixHandles h;
    h.rows = M.rows;
    h.row_ptr = arrays.row_ptr ? w.borrowed_indices(arrays.row_ptr) : w.indices(M.row_ptr);
    h.col_idx = arrays.col_idx ? w.borrowed_indices(arrays.col_idx) : w.indices(M.col_idx);
    if constexpr (std::is_same_v<T, double>)
      if (arrays.values) {
        h.values = w.borrowed_values(arrays.values);
        borrowed_bytes_ += 8.0 * double(arrays.nnz);
        return h;
      }
    h.values = w.values(M.values);
    return h;
  }

  // The level's A, P and R where the program can read them in place (empty: copied into the
  // spec): on the device where the GPU set-up made them; for a host program, the hierarchy's
  // own host arrays (its values rewritten in place at set_values), and level 0's A where the
  // solver lent its SpMV backend's CSR (lent_host_matrix; values only in double), not the
  // caller's matrix, which may be another object at the next set_values. (The copies cost
  // 0.12-0.15 s of poisson2d:1000's 1.65 s to solution on 2 cores, and a second hierarchy's
  // memory; level 0's A was copied twice, into the spec and with it into the program: 115 MB of
  // page faults at 1M rows.)
  struct InPlace {
    CsrArrays A, P, R;
  };
  InPlace in_place(std::size_t l, const CsrMatrix<double>& A) const {
    if (this->device() == Device::gpu) {
      const amg::GpuLevelValues* gpu = h_.levels[l].gpu.get();
      if (!gpu) return {};
      return {gpu->device_operator(), gpu->device_prolongator(), gpu->device_restriction()};
    }
    const amg::Level& level = h_.levels[l];
    InPlace host;
    if (l > 0) host.A = view(level.A);
    if (l == 0) host.A = lent_finest_on_host(A);
    if (h_.has_next(l)) {
      host.P = view(level.prolongator.P);
      host.R = view(level.restriction.At);
    }
    return host;
  }
  CsrArrays lent_finest_on_host(const CsrMatrix<double>& A) const {
    const CsrView<T>* lent = this->lent_host_matrix();
    if (!lent) return {};
    if (lent->rows != A.rows) throw std::logic_error("amg: the lent matrix has another size");
    const std::int64_t nnz = A.nnz();
    if constexpr (std::is_same_v<T, double>)
      return {lent->row_ptr, lent->col_idx, lent->values, nnz};
    else
      return {lent->row_ptr, lent->col_idx, nullptr, nnz};  // a float program converts A's values
  }
  static CsrArrays view(const CsrMatrix<double>& M) {
    return {M.row_ptr.data(), M.col_idx.data(), M.values.data(), std::int64_t(M.nnz())};
  }

  // Every level's arrays in the spec: operator, P, R, smoother scale; the last level's inverse.
  std::vector<LevelHandles> handles(SpecWriter<T>& w, const CsrMatrix<double>& A) {
    std::vector<LevelHandles> levels(h_.levels.size());
    borrowed_bytes_ = 0;
    for (std::size_t l = 0; l < levels.size(); ++l) {
      const CsrMatrix<double>& Al = h_.op(A, l);
      LevelHandles& L = levels[l];
      L.n = Al.rows;
      L.spectrum = h_.levels[l].spectrum;
      const bool last = l + 1 == levels.size();
      if (last && inverted_densely(Al.rows)) {
        const auto start = Clock::now();
        std::vector<T> inverse = dense_inverse<T>(Al);
        coarse_seconds_ += since(start);
        L.inverse = w.typed_values(std::move(inverse));
        continue;
      }
      const InPlace arrays = in_place(l, A);
      L.A = matrix(w, Al, arrays.A);
      L.scale = scale_handle(w, l, Al);
      if (last) continue;
      L.P = matrix(w, h_.levels[l].prolongator.P, arrays.P);
      L.R = matrix(w, h_.levels[l].restriction.At, arrays.R);
    }
    return levels;
  }

  bool inverted_densely(index_t coarsest_rows) const {
    return coarsest_rows <= std::max(kDenseRows, options_.hierarchy.coarse);
  }

  // Level l's smoother scale in the spec: made on the device by the GPU set-up where it keeps
  // the level (double: the program borrows it; no pass over the level's rows on the host, whose
  // copy of a coarse operator is not refreshed at set_values), else on the host and copied.
  int scale_handle(SpecWriter<T>& w, std::size_t l, const CsrMatrix<double>& Al) {
    const double factor = smoother_factor(h_.levels[l].spectrum);
    if constexpr (std::is_same_v<T, double>)
      if (this->device() == Device::gpu && h_.levels[l].gpu && h_.has_next(l)) {
        borrowed_bytes_ += 8.0 * double(Al.rows);
        return w.borrowed_values(h_.levels[l].gpu->smoother_scale(factor));
      }
    return w.values(smoother_scale(Al, factor));
  }

  // 1 for Chebyshev (its scale is D^-1); omega = 4 / (3 g) for Jacobi, g the Gershgorin bound
  // of D^-1 A (so omega lambda_max <= 4/3 < 2: the smoother converges, M^-1 stays SPD).
  double smoother_factor(const Interval& s) const {
    return options_.smoother == Smoother::jacobi ? 4 / (3 * s.gershgorin) : 1.0;
  }

  // omega D^-1 on the host.
  std::vector<double> smoother_scale(const CsrMatrix<double>& A, double omega) const {
    std::vector<double> d(std::size_t(A.rows), 0.0);
#pragma omp parallel for schedule(static) if (worth_threads(A.rows))
    for (index_t i = 0; i < A.rows; ++i) {
      for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
        if (A.col_idx[k] == i) d[i] += A.values[k];
      d[i] = omega / d[i];
    }
    return d;
  }

  void report(const CsrMatrix<double>& A, const std::vector<std::pair<std::string, double>>& ph) {
    PrecondTable levels{"levels", {"level", "rows", "nonzeros", "set-up s"}, {}};
    std::string rows;
    for (std::size_t l = 0; l < h_.levels.size(); ++l) {
      const CsrMatrix<double>& Al = h_.op(A, l);
      levels.rows.push_back(
          {std::to_string(l),  // entries by the pattern: a GPU level's values may be there only
           {double(Al.rows), double(Al.col_idx.size()), h_.levels[l].seconds}});
      rows += (l ? ", " : "") + std::to_string(Al.rows);
    }
    PrecondTable phases{"phases", {"phase", "seconds"}, {}};
    for (const auto& [name, s] : ph) phases.rows.push_back({name, {s}});
    this->report_.set_table(std::move(levels));
    this->report_.set_table(std::move(phases));
    std::ostringstream complexity;
    complexity.precision(3);
    complexity << amg::operator_complexity(h_, A);
    this->report_.set_fact("levels", std::to_string(h_.levels.size()) + " (" + rows + " rows)");
    this->report_.set_fact("operator complexity", complexity.str());
    const bool dense = inverted_densely(h_.op(A, h_.levels.size() - 1).rows);
    this->report_.set_fact(
        "smoother", std::string(options_.smoother == Smoother::chebyshev ? "Chebyshev degree "
                                                                         : "damped Jacobi x") +
                        std::to_string(options_.sweeps) + " before and after");
    this->report_.set_fact("coarsest", dense ? "dense inverse" : "smoother (too large to invert)");
    if (const amg::NearNullspace* ns = options_.hierarchy.nullspace.get())
      this->report_.set_fact(
          "near-nullspace",
          std::to_string(ns->cols) + " columns (" +
              (!options_.coords.empty()           ? "rigid-body modes of " + options_.coords
               : !options_.nullspace_file.empty() ? options_.nullspace_file
                                                  : std::string("the block's translations")) +
              "), nodes of " + std::to_string(ns->rows() / std::max<index_t>(ns->nodes, 1)) +
              " rows; set-up on the host" +
              (this->device() == Device::gpu ? " (the GPU set-up takes no near-nullspace)" : ""));
    const std::string whose = this->device() == Device::gpu
                                  ? "the GPU set-up's A, P and R"
                                  : "the hierarchy's P, R and coarse operators";
    if (options_.hierarchy.finest_on_device.values)
      this->report_.set_fact("finest operator", "the SpMV backend's device copy, read in place");
    else if (this->lent_host_matrix())
      this->report_.set_fact("finest operator",
                             std::is_same_v<T, double>
                                 ? "the SpMV backend's CSR, read in place"
                                 : "the SpMV backend's CSR indices, read in place (values copied)");
    this->report_.set_fact("program arrays",
                           borrowed_bytes_ > 0
                               ? whose + ", read in place (" +
                                     std::to_string(std::llround(borrowed_bytes_ / 1e6)) +
                                     " MB of values not copied)"
                               : "copies");
  }

  std::string argument_;
  AmgOptions options_;
  amg::Hierarchy h_;
  bool fresh_ = false;
  double coarse_seconds_ = 0;
  double borrowed_bytes_ = 0;  // value arrays the program reads in place (in_place)
};

}  // namespace

template <typename T>
std::unique_ptr<Preconditioner<T>> make_amg(const PrecondSpec& spec, Device device, int threads) {
  return std::make_unique<Amg<T>>(device, threads, spec);
}

template std::unique_ptr<Preconditioner<float>> make_amg(const PrecondSpec&, Device, int);
template std::unique_ptr<Preconditioner<double>> make_amg(const PrecondSpec&, Device, int);

}  // namespace cgs::precond
