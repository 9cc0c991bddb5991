// IC(0): A ~ L L^T with L on the pattern of A's lower triangle in an elimination order (no
// fill), M^-1 r by two triangular solves run level by level (the rows of one level depend only
// on rows of earlier levels, so each level is one parallel operation). Three elimination orders:
//   levels  the matrix's own row order (the planner renumbers rows by reverse Cuthill-McKee
//           first, PrecondEntry::wants_rcm: on EPANET's systems that cut the iterations 2-4x
//           against the file's order). Exact sequential IC(0), but a long chain of levels: 122
//           on Exnet, 234 on BWSN_Network_2, one barrier or grid sync each.
//   colour  rows grouped by a greedy colouring of A's graph, colour by colour: no two rows of a
//           colour are neighbours, so each colour is one level of both solves (a handful on a
//           water network, 2 on a 5-point grid). More iterations than `levels` (1.5-40x on
//           EPANET's systems), far fewer syncs.
//   parts   rows cut into parts of N consecutive rows, each part's interior first, the rows
//           joined to a later part (separators) last: the levels of one part, not of the whole
//           band. Iterations very sensitive to N on EPANET's systems.
// The program is written in the solve's own row numbering whatever the elimination order (a
// triangular_level operation names its rows), so the system is not permuted again.
//
// When a pivot is not positive (IC(0) can break down on an SPD matrix that is not an
// M-matrix), the factorisation restarts on A + alpha diag(A), alpha = 1e-3, 1e-2, ..., and the
// report says which alpha it took.
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>
#include <tuple>
#include <type_traits>

#include "base/tuning.hpp"
#include "formats/row_order.hpp"
#include "formats/types.hpp"
#include "solver/precond/builtin.hpp"
#include "solver/precond/ic0_gpu.hpp"
#include "solver/precond/ic0_row.hpp"
#include "solver/precond/sparse_parts.hpp"
#include "solver/precond/spectrum.hpp"      // worth_threads
#include "solver/precond/spectrum_gpu.hpp"  // worth_device_setup
#include "solver/precond/triangular_solves.hpp"

namespace cgs::precond {
namespace {

// Threads from which ic0 factorises on a team (fewer: one thread in row order; on a shared
// two-core machine the team's waits cost more than it gains): Tuning::ic0_team, 4 unless set
// (CGSOLVE_IC0_TEAM), to measure the pipeline on a small machine.
int team_for_pipeline() { return tuning().ic0_team; }

bool factorize_in_order(const Ic0Factor& f, index_t n, double alpha) {
  for (index_t i = 0; i < n; ++i)
    if (!ic0_factorize_row(f, i, alpha)) return false;
  return true;
}

// The rows on a thread team in row order, as a pipeline: chunks of `chunk` consecutive rows dealt
// round robin, each row waiting until the rows it reads are done. With chunk at least the
// matrix's lower bandwidth a row reads only its own chunk and the one before, so each thread
// streams its rows a little behind the thread before it (a grid line behind the line below, on a
// grid in natural order). Rows read earlier rows only, so the least unfinished row can always go
// on: no deadlock. No barrier per level (§10d's team took one per level and its scattered level
// order: 1.2-1.5 s against 0.24-0.34 s serial at 9M rows on 2 threads). Each row's
// arithmetic is the serial sweep's, so the same bits.
bool factorize_on_team(const Ic0Factor& f, index_t n, index_t chunk, double alpha) {
  // Per chunk, how many of its rows are done, published every kPublish rows (and at its end), each
  // on its own cache line: a follower reads its leader's count, not a flag per row it reads, and
  // runs a few dozen rows behind instead of one (a flag per row: no gain on 2 threads, the two
  // cores trading the same lines every row).
  constexpr index_t kPublish = 64;
  struct alignas(64) Progress {
    std::atomic<index_t> done{0};
  };
  const index_t chunks = (n + chunk - 1) / chunk;
  std::unique_ptr<Progress[]> progress(new Progress[std::size_t(chunks)]);
  std::atomic<bool> failed{false};
#pragma omp parallel
  {
    const index_t team = omp_get_num_threads(), me = omp_get_thread_num();
    index_t known_chunk = -1, known_done = 0;  // the last count read, and whose
    auto wait_for = [&](index_t j, index_t mine) {
      const index_t c = j / chunk, offset = j - c * chunk;
      if (c == mine) return;  // this thread's own chunk: its earlier rows are done
      if (c == known_chunk && offset < known_done) return;
      known_chunk = c;
      for (int spins = 0;; ++spins) {
        known_done = progress[std::size_t(c)].done.load(std::memory_order_acquire);
        if (offset < known_done || failed.load(std::memory_order_relaxed)) return;
        if (spins % 64 == 63) std::this_thread::yield();  // a shared machine's cores
      }
    };
    for (index_t c = me; c < chunks; c += team) {
      const index_t first = c * chunk, end = std::min(n, first + chunk);
      for (index_t i = first; i < end; ++i) {
        for (index_t k = f.row_ptr[i]; k < f.row_ptr[i + 1]; ++k) wait_for(f.col_idx[k], c);
        if (!failed.load(std::memory_order_relaxed) && !ic0_factorize_row(f, i, alpha))
          failed.store(true, std::memory_order_relaxed);
        if ((i - first + 1) % kPublish == 0 || i + 1 == end)
          progress[std::size_t(c)].done.store(i - first + 1, std::memory_order_release);
      }
    }
  }
  return !failed.load();
}

// The largest distance i - j of an entry of L (its lower bandwidth).
index_t lower_bandwidth(const Ic0Factor& f, index_t n) {
  index_t widest = 0;
#pragma omp parallel for schedule(static) reduction(max : widest) if (worth_threads(n))
  for (index_t i = 0; i < n; ++i)
    if (f.row_ptr[i + 1] > f.row_ptr[i]) widest = std::max(widest, i - f.col_idx[f.row_ptr[i]]);
  return widest;
}

// L factorised in place with the diagonal shifted by alpha diag(A): one thread in row order, or
// the pipeline where a large matrix's band leaves every thread of a large team many chunks (a
// 9M-row grid: bandwidth 3,000; EPANET's systems are small, and rows in RCM order). False when
// a pivot is not positive and finite.
// `how` says which ran.
bool factorize(const Ic0Factor& f, index_t n, double alpha, std::string& how) {
  constexpr index_t kChunksPerThread = 8;
  const int team = omp_get_max_threads();
  how = "one thread, in row order";
  if (!worth_threads(n) || team < team_for_pipeline()) return factorize_in_order(f, n, alpha);
  const index_t chunk = std::max<index_t>(64, lower_bandwidth(f, n) + 1);
  if (std::int64_t(chunk) * team * kChunksPerThread > n) return factorize_in_order(f, n, alpha);
  how = std::to_string(team) + " threads, chunks of " + std::to_string(chunk) + " rows in turn";
  return factorize_on_team(f, n, chunk, alpha);
}

// L with the least shift that gives positive pivots (0, then 1e-3, 1e-2, ...): `load` puts A's
// values into f before each try. Returns the shift; `how` says which factorisation ran.
template <typename Load>
double factorize_shifted(const Ic0Factor& f, index_t n, Load load, std::string& how) {
  double alpha = 0;
  for (load(); !factorize(f, n, alpha, how); load()) alpha = next_ic0_shift(alpha);
  return alpha;
}

// A's entries below the diagonal into L's values, A's diagonal into the pivots (ic0_load_row).
void load_lower(const CsrMatrix<double>& E, CsrMatrix<double>& lower, std::vector<double>& pivot) {
  const std::int64_t n = E.rows;
#pragma omp parallel for schedule(static) if (worth_threads(E.rows))
  for (std::int64_t i = 0; i < n; ++i)
    ic0_load_row(E.row_ptr.data(), E.col_idx.data(), E.values.data(), index_t(i),
                 lower.values.data() + lower.row_ptr[std::size_t(i)], pivot.data());
}

enum class Ic0Order { levels, colour, parts };

// Rows cut into parts of `part_rows` consecutive rows (the planner's RCM order makes each a
// connected piece of the band); a row joined to a later part is a separator. Interior rows
// first, part by part, then the separators: the interiors of different parts share no entry, so
// their triangular solves run side by side (levels: the deepest part's, not the whole band's),
// and only the separators' couplings are eliminated out of RCM order. Returns the order and
// counts the separators.
RowPermutation part_order(const CsrMatrix<double>& A, index_t part_rows, index_t& separators) {
  const index_t n = A.rows;
  std::vector<char> separator(std::size_t(n), 0);
  for (index_t i = 0; i < n; ++i)
    for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
      if (A.col_idx[k] / part_rows > i / part_rows) separator[i] = 1;
  RowPermutation P;
  P.new_to_old.reserve(std::size_t(n));
  for (index_t i = 0; i < n; ++i)
    if (!separator[i]) P.new_to_old.push_back(i);
  separators = n - index_t(P.new_to_old.size());
  for (index_t i = 0; i < n; ++i)
    if (separator[i]) P.new_to_old.push_back(i);
  return P;
}

// Greedy colouring of A's graph in row order: each row takes the smallest colour none of its
// neighbours has taken. At most (largest row length) colours; 2 on a 5-point grid in natural
// or RCM order, 3-5 on EPANET's networks.
std::vector<index_t> greedy_colours(const CsrMatrix<double>& A, index_t& count) {
  const index_t n = A.rows;
  std::vector<index_t> colour(std::size_t(n), -1);
  std::vector<index_t> seen_by;  // seen_by[c] == i: a neighbour of row i has colour c
  count = 0;
  for (index_t i = 0; i < n; ++i) {
    for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
      const index_t c = colour[A.col_idx[k]];
      if (c >= 0) seen_by[c] = i;
    }
    index_t c = 0;
    while (c < count && seen_by[c] == i) ++c;
    if (c == count) {
      seen_by.push_back(-1);
      ++count;
    }
    colour[i] = c;
  }
  return colour;
}

// Rows colour by colour, each colour's rows in row order.
RowPermutation colour_order(const std::vector<index_t>& colour, index_t count) {
  std::vector<index_t> start(std::size_t(count) + 1, 0);
  for (index_t c : colour) ++start[c + 1];
  for (index_t c = 0; c < count; ++c) start[c + 1] += start[c];
  RowPermutation P;
  P.new_to_old.resize(colour.size());
  for (index_t i = 0; i < index_t(colour.size()); ++i) P.new_to_old[start[colour[i]]++] = i;
  return P;
}

// The permutation that undoes P: permute_symmetric(permute_symmetric(A, P), inverse(P)) == A.
RowPermutation inverse(const RowPermutation& P) {
  RowPermutation Q;
  Q.new_to_old.resize(P.new_to_old.size());
  for (index_t k = 0; k < index_t(P.new_to_old.size()); ++k) Q.new_to_old[P.new_to_old[k]] = k;
  return Q;
}

// Seconds since the last lap (or since it was made).
class Stopwatch {
 public:
  double lap() {
    const auto now = std::chrono::steady_clock::now();
    const double s = std::chrono::duration<double>(now - last_).count();
    last_ = now;
    return s;
  }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

// A triangle in the solve's numbering (colour and parts orders): its pattern, and for each entry
// the entry of the elimination-order triangle it holds.
struct Renumbered {
  CsrMatrix<double> matrix;       // values: gathered at each compute_values
  std::vector<index_t> entry_of;  // matrix entry k is the elimination-order entry entry_of[k]
};

Renumbered renumbered(const CsrMatrix<double>& triangle, const RowPermutation& back) {
  Renumbered r;
  r.matrix = permute_symmetric(numbered_entries(triangle), back);
  r.entry_of.resize(r.matrix.values.size());
  for (std::size_t k = 0; k < r.entry_of.size(); ++k) r.entry_of[k] = index_t(r.matrix.values[k]);
  return r;
}

// out[k] = in[map[k]] on every core when large.
void gather(const std::vector<double>& in, const std::vector<index_t>& map,
            std::vector<double>& out) {
  const std::int64_t n = std::int64_t(map.size());
#pragma omp parallel for schedule(static) if (n > 1000000)
  for (std::int64_t k = 0; k < n; ++k) out[std::size_t(k)] = in[std::size_t(map[std::size_t(k)])];
}

// The values of the arrays a program reads, in T, where they stay between set_values (the
// program borrows them on the host): v itself when T is double, else a cast kept in `storage`
// (sized once, so its address does not move).
template <typename T>
const T* in_precision(const std::vector<double>& v, std::vector<T>& storage) {
  if constexpr (std::is_same_v<T, double>) {
    return v.data();
  } else {
    storage.resize(v.size());
    const std::int64_t n = std::int64_t(v.size());
#pragma omp parallel for schedule(static) if (n > 1000000)
    for (std::int64_t k = 0; k < n; ++k) storage[std::size_t(k)] = T(v[std::size_t(k)]);
    return storage.data();
  }
}

template <typename T>
class Ic0 final : public Preconditioner<T> {
 public:
  Ic0(Device device, int threads, Ic0Order order, index_t part_rows)
      : Preconditioner<T>(device, threads, false), order_(order), part_rows_(part_rows) {}
  std::string name() const override {
    switch (order_) {
      case Ic0Order::colour: return "ic0:colour";
      case Ic0Order::parts: return "ic0:parts:" + std::to_string(part_rows_);
      default: return "ic0:levels";
    }
  }

 protected:
  // The symbolic part, once per pattern: the elimination order, the levels of both solves, L's
  // pattern and its transpose's (with where each entry goes), and the program's rows.
  void analyze_pattern(const CsrMatrix<double>& A) override {
    phases_ = {};
    gpu_.reset();
    fresh_factor_ = false;
    if (analyze_on_device(A)) return;
    Stopwatch watch;
    check_diagonal(A);
    choose_elimination_order(A);
    CsrMatrix<double> permuted;
    const CsrMatrix<double>& E = in_elimination_order(A, permuted);
    phases_.order = watch.lap();
    std::tie(forward_, backward_) = solve_levels(E);
    phases_.levels = watch.lap();
    lower_ = strictly_triangle(E, true);
    pivot_.assign(std::size_t(A.rows), 0.0);
    upper_position_.clear();
    if (std::optional<CsrMatrix<double>> mirrored = mirrored_upper(E, lower_)) {
      upper_ = std::move(*mirrored);
    } else {  // a pattern that is not symmetric: L^T by a transpose, with where each entry goes
      Transposed t = transpose_with_map(lower_);
      upper_ = std::move(t.At);
      upper_position_ = std::move(t.position);
    }
    solve_lower_ = {};
    solve_upper_ = {};
    if (!elimination_.empty()) {
      const RowPermutation back = inverse(elimination_);
      solve_lower_ = renumbered(lower_, back);
      solve_upper_ = renumbered(upper_, back);
    }
    make_program_rows(A.rows);
    phases_.pattern = watch.lap();
    report_levels();
  }

  void compute_values(const CsrMatrix<double>& A, ProgramSpec<T>& spec) override {
    if (gpu_) {
      compute_on_device(A, spec);
      report_phases();
      return;
    }
    Stopwatch watch;
    CsrMatrix<double> permuted;
    const CsrMatrix<double>& E = in_elimination_order(A, permuted);
    const Ic0Factor f{lower_.row_ptr.data(), lower_.col_idx.data(), lower_.values.data(),
                      pivot_.data()};
    std::string how;
    const double alpha = factorize_shifted(
        f, A.rows, [&] { load_lower(E, lower_, pivot_); }, how);
    this->report_.set_fact("diagonal shift", ic0_shift_fact(alpha));
    this->report_.set_fact("factorisation", how);
    phases_.factorisation = watch.lap();
    move_to_upper();
    write_program_values();
    if (spec.ops.empty())
      write_program(spec, A.rows);
    else
      refresh_program(spec);
    phases_.program = watch.lap();
    report_phases();
  }

 private:
  void report_levels() {
    this->report_.set_fact(
        "levels", std::to_string(forward_.levels()) + " + " + std::to_string(backward_.levels()));
  }

  // The set-up on the device (ic0_gpu.hpp) where the solve runs on the GPU, the system is large
  // (ic0_device_setup_rows) and the rows are eliminated in their own order: patterns, both
  // schedules and the factor (for A without a shift) stay there. False where the host's set-up
  // runs, also for a pattern that is not symmetric (the device finds L^T's values by mirror).
  bool analyze_on_device(const CsrMatrix<double>& A) {
    const bool wanted = this->device() == Device::gpu && order_ == Ic0Order::levels &&
                        A.rows >= ic0_device_setup_rows();
    this->report_.set_fact("set-up on", "the host");
    if (!wanted) return false;
    gpu_ = make_ic0_gpu<T>();
    if (!gpu_->analyze(A, this->lent_device_arrays())) {
      gpu_.reset();
      this->report_.set_fact("set-up on", "the host (A's pattern is not symmetric)");
      return false;
    }
    this->report_.set_fact("set-up on", "the device");
    elimination_ = {};
    lower_ = {};
    upper_ = {};
    pivot_ = {};
    upper_position_ = {};
    solve_lower_ = {};
    solve_upper_ = {};
    forward_rows_ = {};
    backward_rows_ = {};
    forward_ = {{}, gpu_->forward_start()};  // the rows stay on the device
    backward_ = {{}, gpu_->backward_start()};
    phases_.pattern = gpu_->seconds().pattern;
    phases_.levels = gpu_->seconds().levels;
    fresh_factor_ = true;
    report_levels();
    return true;
  }

  // L for these values on the device: analyze's factor when it is of these values and its pivots
  // were positive, else level by level in the stored schedule, with the host's shifts; then the
  // program's value arrays in place (the program borrows them: nothing to copy).
  void compute_on_device(const CsrMatrix<double>& A, ProgramSpec<T>& spec) {
    const CsrArrays lent = this->lent_device_arrays();
    const bool with_levels = fresh_factor_;
    bool ok = with_levels ? gpu_->analyze_factor_ok() : gpu_->factorize(A, lent, 0);
    phases_.factorisation = with_levels ? 0 : gpu_->seconds().factorisation;
    fresh_factor_ = false;
    double alpha = 0;
    while (!ok) {
      alpha = next_ic0_shift(alpha);
      ok = gpu_->factorize(A, lent, alpha);
      phases_.factorisation += gpu_->seconds().factorisation;
    }
    this->report_.set_fact("diagonal shift", ic0_shift_fact(alpha));
    const std::string grid = std::to_string(gpu_->grid_blocks()) + " blocks";
    this->report_.set_fact("factorisation",
                           with_levels && alpha == 0
                               ? "the device, in the forward levels' pass (" + grid + ")"
                               : "the device, level by level (" + grid + ")");
    Stopwatch watch;
    gpu_->write_program_values();
    if (spec.ops.empty()) write_device_program(spec, A.rows);
    phases_.program = watch.lap();
  }

  // The program on the device set-up's arrays, borrowed where they are.
  void write_device_program(ProgramSpec<T>& spec, index_t n) {
    placement_ = Placement::borrow_device;
    device_ = {};
    this->report_.set_fact("program arrays", "its own device buffers, read in place");
    const Ic0DeviceArrays<T> a = gpu_->arrays();
    lower_values_ = spec.borrow_values(a.lower_values);
    upper_values_ = spec.borrow_values(a.upper_values);
    inverse_diagonal_handle_ = spec.borrow_values(a.inverse_diagonal);
    const int lower_ptr = spec.borrow_indices(a.lower_ptr);
    const int lower_cols = spec.borrow_indices(a.lower_cols);
    const int upper_ptr = spec.borrow_indices(a.upper_ptr);
    const int upper_cols = spec.borrow_indices(a.upper_cols);
    const int forward_rows = spec.borrow_indices(a.forward_rows);
    const int backward_rows = spec.borrow_indices(a.backward_rows);
    add_solve_ops(spec, n,
                  {lower_ptr, lower_cols, upper_ptr, upper_cols, forward_rows, backward_rows});
  }

  void check_diagonal(const CsrMatrix<double>& A) const {
    index_t missing = A.rows;  // the first row without a diagonal entry
#pragma omp parallel for schedule(static) reduction(min : missing) if (worth_threads(A.rows))
    for (index_t i = 0; i < A.rows; ++i)
      if (!has_diagonal(A, i)) missing = std::min(missing, i);
    if (missing < A.rows)
      throw InputError("ic0: row " + std::to_string(missing + 1) + " has no diagonal entry");
  }

  void choose_elimination_order(const CsrMatrix<double>& A) {
    elimination_ = {};
    if (order_ == Ic0Order::colour) {
      index_t colours = 0;
      const std::vector<index_t> colour = greedy_colours(A, colours);
      elimination_ = colour_order(colour, colours);
      this->report_.set_fact("colours", std::to_string(colours));
    } else if (order_ == Ic0Order::parts) {
      index_t separators = 0;
      elimination_ = part_order(A, part_rows_, separators);
      this->report_.set_fact("parts", std::to_string((A.rows + part_rows_ - 1) / part_rows_) +
                                          " of " + std::to_string(part_rows_) + " rows, " +
                                          std::to_string(separators) + " separator rows last");
    }
  }

  // The rows of the program's operations, in the solve's numbering: the levels of each solve
  // one after the other in one array (for `levels`, the schedules themselves, not copied), or
  // (one thread: nothing splits an operation's rows) each solve as one sweep in the elimination
  // order.
  void make_program_rows(index_t n) {
    forward_rows_.clear();
    backward_rows_.clear();
    if (sequential()) {
      forward_rows_.resize(std::size_t(n));
      backward_rows_.resize(std::size_t(n));
      for (index_t i = 0; i < n; ++i) {
        forward_rows_[std::size_t(i)] = i;
        backward_rows_[std::size_t(n - 1 - i)] = i;
      }
    } else if (!elimination_.empty()) {
      forward_rows_ = forward_.rows;
      backward_rows_ = backward_.rows;
    }
    if (elimination_.empty()) return;
    for (std::vector<index_t>* rows : {&forward_rows_, &backward_rows_})
      for (index_t& r : *rows) r = elimination_.new_to_old[std::size_t(r)];
  }
  const std::vector<index_t>& program_rows(bool forward) const {
    const bool schedules = !sequential() && elimination_.empty();
    if (forward) return schedules ? forward_.rows : forward_rows_;
    return schedules ? backward_.rows : backward_rows_;
  }

  // L^T's values: each found in its mirror's row of L, or moved where the transpose put it.
  void move_to_upper() {
    if (upper_position_.empty()) {
      gather_mirrored_values(lower_, upper_);
      return;
    }
    const std::int64_t entries = std::int64_t(lower_.values.size());
#pragma omp parallel for schedule(static) if (entries > 1000000)
    for (std::int64_t k = 0; k < entries; ++k)
      upper_.values[std::size_t(upper_position_[std::size_t(k)])] = lower_.values[std::size_t(k)];
  }

  // The value arrays the program reads, in the solve's numbering and in T, in place.
  void write_program_values() {
    const std::int64_t n = std::int64_t(pivot_.size());
    inverse_diagonal_.resize(std::size_t(n));
    const index_t* solve_row = elimination_.empty() ? nullptr : elimination_.new_to_old.data();
#pragma omp parallel for schedule(static) if (n > 1000000)
    for (std::int64_t k = 0; k < n; ++k)
      inverse_diagonal_[std::size_t(solve_row ? solve_row[k] : k)] =
          T(1.0 / pivot_[std::size_t(k)]);
    if (elimination_.empty()) {
      lower_in_t_ = in_precision(lower_.values, lower_cast_);
      upper_in_t_ = in_precision(upper_.values, upper_cast_);
      return;
    }
    gather(lower_.values, solve_lower_.entry_of, solve_lower_.matrix.values);
    gather(upper_.values, solve_upper_.entry_of, solve_upper_.matrix.values);
    lower_in_t_ = in_precision(solve_lower_.matrix.values, lower_cast_);
    upper_in_t_ = in_precision(solve_upper_.matrix.values, upper_cast_);
  }

  const CsrMatrix<double>& program_lower() const {
    return elimination_.empty() ? lower_ : solve_lower_.matrix;
  }
  const CsrMatrix<double>& program_upper() const {
    return elimination_.empty() ? upper_ : solve_upper_.matrix;
  }

  // Where the program reads its arrays. On the host it borrows this object's (refreshed in place
  // at set_values: nothing copied, §10g's 0.49 s "upload" of a 9M-row grid was the host
  // program's copy of them). On the GPU from 200,000 rows they go up once, each array to its own
  // buffer, and the program borrows those (nothing packed and copied twice); smaller systems
  // keep the packed copy, which the cluster loop's one block can hold in shared memory.
  enum class Placement { borrow_host, borrow_device, copy };
  Placement placement(index_t n) const {
    if (this->device() != Device::gpu) return Placement::borrow_host;
    return worth_device_setup(n) ? Placement::borrow_device : Placement::copy;
  }

  void write_program(ProgramSpec<T>& spec, index_t n) {
    const CsrMatrix<double>& L = program_lower();
    const CsrMatrix<double>& U = program_upper();
    placement_ = placement(n);
    device_ = {};
    const char* where[] = {"read in place (host)", "its own device buffers, read in place",
                           "packed copy"};
    this->report_.set_fact("program arrays", where[int(placement_)]);
    auto indices = [&](const std::vector<index_t>& a) {
      if (placement_ == Placement::borrow_host) return spec.borrow_indices(a.data());
      if (placement_ == Placement::copy) return spec.add_indices(a);
      device_.indices.emplace_back(Device::gpu, a, "ic0's index arrays");
      return spec.borrow_indices(device_.indices.back().data());
    };
    auto values = [&](const T* v, std::size_t size) {
      if (placement_ == Placement::borrow_host) return spec.borrow_values(v);
      if (placement_ == Placement::copy) return spec.add_values(std::vector<T>(v, v + size));
      device_.values.emplace_back(Device::gpu, size, "ic0's values");
      device_.values.back().upload(v, size);
      return spec.borrow_values(device_.values.back().data());
    };
    device_.indices.reserve(6);
    device_.values.reserve(3);
    lower_values_ = values(lower_in_t_, L.values.size());
    upper_values_ = values(upper_in_t_, U.values.size());
    inverse_diagonal_handle_ = values(inverse_diagonal_.data(), inverse_diagonal_.size());
    const int lower_ptr = indices(L.row_ptr), lower_cols = indices(L.col_idx);
    const int upper_ptr = indices(U.row_ptr), upper_cols = indices(U.col_idx);
    const int forward_rows = indices(program_rows(true));
    const int backward_rows = indices(program_rows(false));
    add_solve_ops(spec, n,
                  {lower_ptr, lower_cols, upper_ptr, upper_cols, forward_rows, backward_rows});
  }

  // The index arrays' handles of the two solves' operations.
  struct SolveIndices {
    int lower_ptr, lower_cols, upper_ptr, upper_cols, forward_rows, backward_rows;
  };

  // The operations of the two solves (triangular_solves.hpp), on the value arrays' handles
  // already written.
  void add_solve_ops(ProgramSpec<T>& spec, index_t n, const SolveIndices& h) {
    add_triangular_solves(spec,
                          {h.lower_ptr, h.lower_cols, lower_values_, h.upper_ptr, h.upper_cols,
                           upper_values_, h.forward_rows, h.backward_rows,
                           inverse_diagonal_handle_},
                          n, sequential(), forward_, backward_);
  }

  // New values at the same handles: nothing to do where the program borrows this object's
  // arrays; the device's buffers written again; the copies replaced.
  void refresh_program(ProgramSpec<T>& spec) {
    const std::size_t lower = program_lower().values.size(), upper = program_upper().values.size();
    if (placement_ == Placement::borrow_host) return;
    if (placement_ == Placement::borrow_device) {
      device_.values[0].upload(lower_in_t_, lower);
      device_.values[1].upload(upper_in_t_, upper);
      device_.values[2].upload(inverse_diagonal_);
      return;
    }
    spec.value_arrays[lower_values_].assign(lower_in_t_, lower_in_t_ + lower);
    spec.value_arrays[upper_values_].assign(upper_in_t_, upper_in_t_ + upper);
    spec.value_arrays[inverse_diagonal_handle_] = inverse_diagonal_;
  }

  // A sweep in row order is a valid triangular solve only when nothing splits its rows among
  // threads: on the serial device, or an OpenMP team of one. (The operation contract, items
  // independent of each other, is then stronger than needed; the level sets cost a barrier
  // each and scattered rows.) The GPU always splits an operation's rows among its threads,
  // whatever the plan's thread count says (1 there): a sweep on the GPU was a race, and IC(0)
  // did not converge in any GPU loop.
  bool sequential() const {
    if (this->device() == Device::gpu) return false;
    return this->device() == Device::serial || this->threads() == 1;
  }

  // A in the elimination order: A itself for `levels` (no copy), else P A P^T kept in `storage`.
  const CsrMatrix<double>& in_elimination_order(const CsrMatrix<double>& A,
                                                CsrMatrix<double>& storage) const {
    if (elimination_.empty()) return A;
    storage = permute_symmetric(A, elimination_);
    return storage;
  }

  static bool has_diagonal(const CsrMatrix<double>& A, index_t i) {
    for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
      if (A.col_idx[k] == i) return true;
    return false;
  }

  // The phases inside analyze and values (the last set_values's factorisation and program).
  void report_phases() {
    PrecondTable table;
    table.name = "ic0 set-up";
    table.columns = {"phase", "seconds"};
    table.rows = {{"order", {phases_.order}},
                  {"levels", {phases_.levels}},
                  {"pattern", {phases_.pattern}},
                  {"factorisation", {phases_.factorisation}},
                  {"program", {phases_.program}}};
    this->report_.set_table(std::move(table));
  }

  struct PhaseSeconds {
    double order = 0, levels = 0, pattern = 0, factorisation = 0, program = 0;
  } phases_;
  Ic0Order order_;
  index_t part_rows_;
  RowPermutation elimination_;  // empty: the solve's own row order
  // In the elimination order: the levels of both solves, L below its diagonal (the factor's
  // values), L's diagonal, and L^T.
  LevelSchedule forward_, backward_;
  CsrMatrix<double> lower_;
  std::vector<double> pivot_;
  CsrMatrix<double> upper_;
  std::vector<index_t> upper_position_;  // L's entry k is upper_'s entry upper_position_[k]; empty
                                         // where A's pattern is symmetric (found by a search)
  // The colour and parts orders' triangles in the solve's numbering (empty for `levels`).
  Renumbered solve_lower_, solve_upper_;
  // What the program reads, in the solve's numbering: the operations' rows, 1 / L's diagonal,
  // and L's and L^T's values in T (casts kept here when T is float).
  std::vector<index_t> forward_rows_, backward_rows_;
  std::vector<T> inverse_diagonal_, lower_cast_, upper_cast_;
  const T* lower_in_t_ = nullptr;
  const T* upper_in_t_ = nullptr;
  Placement placement_ = Placement::borrow_host;
  std::unique_ptr<Ic0Gpu<T>> gpu_;  // the device set-up (null: the host's)
  bool fresh_factor_ = false;       // gpu_ holds analyze's factor, for the values analyze saw
  struct DeviceArrays {             // the program's arrays on the GPU (Placement::borrow_device)
    std::vector<DeviceBuffer<index_t>> indices;
    std::vector<DeviceBuffer<T>> values;
  } device_;
  int lower_values_ = kNoArray, upper_values_ = kNoArray, inverse_diagonal_handle_ = kNoArray;
};

}  // namespace

index_t ic0_device_setup_rows() {
  const long long rows = tuning().ic0_device_rows;  // CGSOLVE_IC0_DEVICE_ROWS; -1: unset
  return rows >= 0 ? index_t(rows) : kDeviceSetupRows;
}

double next_ic0_shift(double alpha) {
  alpha = alpha == 0 ? 1e-3 : alpha * 10;
  if (alpha > 1e3)
    throw InputError("ic0: no diagonal shift up to 1e3 diag(A) gives positive pivots");
  return alpha;
}

std::string ic0_shift_fact(double alpha) {
  std::ostringstream shift;
  if (alpha == 0)
    shift << "none";
  else
    shift << "A + " << alpha << " diag(A) (a pivot was not positive without it)";
  return shift.str();
}

Ic0HostFactor ic0_factor_on_host(const CsrMatrix<double>& A) {
  Ic0HostFactor h;
  h.lower = strictly_triangle(A, true);
  h.pivot.assign(std::size_t(A.rows), 0.0);
  const Ic0Factor f{h.lower.row_ptr.data(), h.lower.col_idx.data(), h.lower.values.data(),
                    h.pivot.data()};
  std::string how;
  h.alpha = factorize_shifted(
      f, A.rows, [&] { load_lower(A, h.lower, h.pivot); }, how);
  return h;
}

template <typename T>
std::unique_ptr<Preconditioner<T>> make_ic0(const PrecondSpec& spec, Device device, int threads) {
  // The exact order everywhere: on EPANET's systems the colour and parts orders cut the levels
  // 10-100x but multiplied the iterations (BWSN_Network_2 step 10: 460 -> 18,444 coloured,
  // 3,548-42,135 in parts; BENCHMARKS section 10), so they are offered, not chosen.
  Ic0Order order = Ic0Order::levels;
  (void)device;
  index_t part_rows = 128;
  const std::string& a = spec.argument;
  if (a == "levels") {
    order = Ic0Order::levels;
  } else if (a == "colour" || a == "color") {
    order = Ic0Order::colour;
  } else if (a == "parts" || a.rfind("parts:", 0) == 0) {
    order = Ic0Order::parts;
    if (a.size() > 6) {
      PrecondSpec rows{spec.name, a.substr(6), {}};
      part_rows = integer_argument(rows, 128, 2, 1 << 30);
    }
  } else if (!a.empty()) {
    throw InputError("the ic0 preconditioner's argument is levels, colour or parts[:rows] (got '" +
                     spec.text() + "')");
  }
  return std::make_unique<Ic0<T>>(device, threads, order, part_rows);
}

template std::unique_ptr<Preconditioner<float>> make_ic0(const PrecondSpec&, Device, int);
template std::unique_ptr<Preconditioner<double>> make_ic0(const PrecondSpec&, Device, int);

}  // namespace cgs::precond
