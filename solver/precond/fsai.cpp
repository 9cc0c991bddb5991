// FSAI: M^-1 = G^T G with G lower triangular on the pattern of tril(A^k), each row of G the
// solution of a small dense SPD system (Kolotilina and Yeremin): for row i with pattern P
// (its last column i), A[P,P] y = e_i and g = y / sqrt(y_i), so that (G A G^T)_ii = 1 and
// (G A)_ij = 0 for j in P, j < i. The apply is two sparse products (G, then G^T), each one
// parallel operation: the preconditioner for the GPU loops, where triangular solves serialise.
#include "solver/precond/fsai.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <limits>
#include <type_traits>

#include "formats/types.hpp"
#include "solver/precond/builtin.hpp"
#include "solver/precond/fsai_row.hpp"
#include "solver/precond/sparse_parts.hpp"
#include "solver/precond/spectrum_gpu.hpp"  // worth_device_setup

namespace cgs::precond {
namespace {

// Row i's columns <= i reached from i in at most k steps of A's graph, sorted, into `reached`
// (scratch: `frontier`, `next`, `merged`). Sorted sets instead of a mark array per row, so that
// rows run on every core without an n-long array each; the last step keeps only columns <= i
// before it sorts.
void reached_columns(const CsrMatrix<double>& A, index_t i, int k, std::vector<index_t>& reached,
                     std::vector<index_t>& frontier, std::vector<index_t>& next,
                     std::vector<index_t>& merged) {
  reached.assign(1, i);
  frontier.assign(1, i);
  for (int step = 0; step < k && !frontier.empty(); ++step) {
    const bool last = step + 1 == k;
    next.clear();
    for (index_t r : frontier)
      for (index_t e = A.row_ptr[r]; e < A.row_ptr[r + 1]; ++e)
        if (!last || A.col_idx[e] <= i) next.push_back(A.col_idx[e]);
    std::sort(next.begin(), next.end());
    next.erase(std::unique(next.begin(), next.end()), next.end());
    frontier.clear();  // the columns first reached at this step
    std::set_difference(next.begin(), next.end(), reached.begin(), reached.end(),
                        std::back_inserter(frontier));
    merged.clear();
    std::merge(reached.begin(), reached.end(), frontier.begin(), frontier.end(),
               std::back_inserter(merged));
    reached.swap(merged);
  }
  reached.erase(std::upper_bound(reached.begin(), reached.end(), i), reached.end());
}

// The pattern of tril(A^k): for each row, the columns <= row reached in at most k steps. Rows on
// every host core, each thread a block of consecutive rows into its own list, the lists then
// placed in block order: serial, this was most of fsai:2's set-up on a 9M-row grid.
CsrMatrix<double> power_pattern(const CsrMatrix<double>& A, int k) {
  const index_t n = A.rows;
  CsrMatrix<double> P;
  P.rows = P.cols = n;
  P.row_ptr.assign(std::size_t(n) + 1, 0);
  std::vector<std::vector<index_t>> columns;  // per thread, its block's rows one after another
#pragma omp parallel if (n > 20000)
  {
    const int team = omp_get_num_threads(), me = omp_get_thread_num();
#pragma omp single
    columns.resize(std::size_t(team));
    const index_t begin = index_t(std::int64_t(n) * me / team);
    const index_t end = index_t(std::int64_t(n) * (me + 1) / team);
    std::vector<index_t>& mine = columns[std::size_t(me)];
    std::vector<index_t> reached, frontier, next, merged;
    for (index_t i = begin; i < end; ++i) {
      reached_columns(A, i, k, reached, frontier, next, merged);
      P.row_ptr[std::size_t(i) + 1] = index_t(reached.size());
      mine.insert(mine.end(), reached.begin(), reached.end());
    }
#pragma omp barrier
#pragma omp single
    {
      for (index_t i = 0; i < n; ++i) P.row_ptr[std::size_t(i) + 1] += P.row_ptr[std::size_t(i)];
      P.col_idx.resize(std::size_t(P.row_ptr[std::size_t(n)]));
    }
    std::copy(mine.begin(), mine.end(), P.col_idx.begin() + P.row_ptr[std::size_t(begin)]);
  }
  P.values.assign(P.col_idx.size(), 0.0);
  return P;
}

}  // namespace

namespace {

// Row i's entry count in tril(A^k), its diagonal included: the columns <= i among those reached
// in at most k steps. `mark` (n entries, below 0 or stamped by earlier rows) is stamped with i.
index_t count_row(const CsrMatrix<double>& A, index_t i, int k, std::vector<index_t>& mark,
                  std::vector<index_t>& frontier, std::vector<index_t>& next) {
  index_t m = 1;
  mark[std::size_t(i)] = i;
  frontier.assign(1, i);
  for (int step = 0; step < k && !frontier.empty(); ++step) {
    next.clear();
    for (index_t r : frontier)
      for (index_t e = A.row_ptr[r]; e < A.row_ptr[r + 1]; ++e) {
        const index_t c = A.col_idx[e];
        if (mark[std::size_t(c)] == i) continue;
        mark[std::size_t(c)] = i;
        m += c <= i;
        next.push_back(c);
      }
    frontier.swap(next);
  }
  return m;
}

}  // namespace

FsaiPatternCount count_fsai_pattern(const CsrMatrix<double>& A, int k, double products) {
  FsaiPatternCount c;
  c.power = k;
  const index_t n = A.rows;
  if (n == 0) return c;
  // Each row's counting work (one visit per entry of each neighbour's row: k = 2's exactly).
  std::vector<double> work(std::size_t(n), 0.0);
  double total = 0;
  for (index_t i = 0; i < n; ++i) {
    for (index_t e = A.row_ptr[i]; e < A.row_ptr[i + 1]; ++e) {
      const index_t j = A.col_idx[e];
      work[std::size_t(i)] += double(A.row_ptr[j + 1] - A.row_ptr[j]);
      c.tril_entries += j <= i;
    }
    total += work[std::size_t(i)];
  }
  const double affordable = products * double(A.nnz()) + 4096;
  const index_t stride = total <= affordable ? 1 : index_t(std::ceil(total / affordable));
  c.sampled = stride > 1;
  const double heavy = double(stride) * total / double(n);  // a stride's share of the work
  std::vector<index_t> mark(std::size_t(n), -1), frontier, next;
  auto add = [&](index_t m, double weight) {
    c.longest_row = std::max(c.longest_row, m);
    c.pattern_entries += weight * double(m);
    c.factor_flops += weight * double(m) * double(m) * double(m) / 6;
  };
  // The heavy rows exactly; of the others every stride-th, weighted by how many they stand for.
  double light = 0, light_sampled = 0, sampled_entries = 0, sampled_flops = 0;
  for (index_t i = 0; i < n; ++i) {
    const bool is_heavy = c.sampled && work[std::size_t(i)] > heavy;
    if (!is_heavy) light += 1;
    if (!is_heavy && i % stride != 0) continue;
    const index_t m = count_row(A, i, k, mark, frontier, next);
    if (is_heavy) {
      add(m, 1);
      continue;
    }
    light_sampled += 1;
    c.longest_row = std::max(c.longest_row, m);
    sampled_entries += double(m);
    sampled_flops += double(m) * double(m) * double(m) / 6;
  }
  const double weight = light_sampled > 0 ? light / light_sampled : 0;
  c.pattern_entries += weight * sampled_entries;
  c.factor_flops += weight * sampled_flops;
  return c;
}

std::string describe(const FsaiPatternCount& c) {
  char text[240];
  std::snprintf(text, sizeof text,
                "tril(A^%d) has %.0f%s entries, %.1fx tril(A)'s, rows up to %ld: its "
                "factorization's %.2g flops",
                c.power, c.pattern_entries, c.sampled ? " (sampled)" : "",
                c.pattern_entries / std::max(c.tril_entries, 1.0), long(c.longest_row),
                c.factor_flops);
  return text;
}

std::string fsai_refusal(const FsaiPatternCount& c) {
  if (c.factor_flops <= kFsaiMaxFlops &&
      c.pattern_entries < 0.5 * double(std::numeric_limits<index_t>::max()))
    return "";
  char limit[64];
  std::snprintf(limit, sizeof limit, " (limit: %.0g flops, about 1 ns each on a host core)",
                kFsaiMaxFlops);
  return "fsai:" + std::to_string(c.power) + ": " + describe(c) + limit +
         ": use a smaller k, amg or ic0 on this matrix";
}

std::vector<index_t> fsai_row_pattern(const CsrMatrix<double>& A, index_t i, int k) {
  std::vector<index_t> reached, frontier, next, merged;
  reached_columns(A, i, k, reached, frontier, next, merged);
  return reached;
}

CsrMatrix<double> fsai_pattern(const CsrMatrix<double>& A, int k) { return power_pattern(A, k); }

// Row i of G on its pattern p (sorted, ending with the diagonal): B = A[p,p] gathered by merging
// each pattern row of A with the pattern (both sorted), so that rows need no shared scratch and
// run in parallel; B = L L^T in place, and then g = y / sqrt(y_m) for B y = e_m is L^-T e_m
// (y = L^-T L^-1 e_m = L^-T e_m / L_mm, y_m = 1 / L_mm^2): one back substitution. The device's
// kernels run the same function (fsai_small_row, fsai_row.hpp), on B's lower triangle packed in
// `block` (reused: Eigen's LLT on dynamic matrices spent most of fsai's values phase allocating).
bool fsai_row(const CsrMatrix<double>& A, const index_t* pattern, index_t m, double* g,
              std::vector<double>& block) {
  block.resize(std::size_t(m) * std::size_t(m + 1) / 2);
  return fsai_small_row(A.row_ptr.data(), A.col_idx.data(), A.values.data(), pattern, int(m),
                        block.data(), g);
}

std::vector<std::vector<index_t>> fsai_row_patterns(const CsrMatrix<double>& A,
                                                    const std::vector<index_t>& rows, int k) {
  std::vector<std::vector<index_t>> patterns(rows.size());
  const std::int64_t m = std::int64_t(rows.size());
#pragma omp parallel for schedule(dynamic, 16) if (m > 64)
  for (std::int64_t j = 0; j < m; ++j)
    patterns[std::size_t(j)] = fsai_row_pattern(A, rows[std::size_t(j)], k);
  return patterns;
}

index_t fsai_listed_rows(const CsrMatrix<double>& A, const std::vector<index_t>& rows,
                         const std::vector<std::vector<index_t>>& patterns,
                         std::vector<double>& packed) {
  std::vector<std::int64_t> offsets;
  std::int64_t total = 0;
  for (const auto& p : patterns) {
    offsets.push_back(total);
    total += std::int64_t(p.size());
  }
  packed.assign(std::size_t(total), 0.0);
  const std::int64_t m = std::int64_t(rows.size());
  index_t failed = A.rows;
#pragma omp parallel if (m > 64)
  {
    std::vector<double> block;
#pragma omp for schedule(dynamic, 4) reduction(min : failed)
    for (std::int64_t j = 0; j < m; ++j) {
      const std::vector<index_t>& p = patterns[std::size_t(j)];
      if (!fsai_row(A, p.data(), index_t(p.size()), packed.data() + offsets[std::size_t(j)], block))
        failed = std::min(failed, rows[std::size_t(j)]);
    }
  }
  return failed;
}

void throw_fsai_not_spd(index_t row) {
  throw InputError("fsai: the block of A on row " + std::to_string(row + 1) +
                   "'s pattern is not positive definite (A is not SPD)");
}

// The values of G on pattern P, rows on every host core (one core took 7-10 s on a 9M-row grid).
void fsai_rows(const CsrMatrix<double>& A, CsrMatrix<double>& G) {
  index_t failed = G.rows;  // the first row whose block is not SPD
#pragma omp parallel if (G.rows > 20000)
  {
    std::vector<double> block;
#pragma omp for schedule(dynamic, 1024) reduction(min : failed)
    for (index_t i = 0; i < G.rows; ++i) {
      const index_t first = G.row_ptr[i], m = G.row_ptr[i + 1] - first;
      if (!fsai_row(A, G.col_idx.data() + first, m, G.values.data() + first, block))
        failed = std::min(failed, i);
    }
  }
  if (failed < G.rows) throw_fsai_not_spd(failed);
}

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The set-up runs on the device when the solve does, A is large (worth_device_setup: below it
// the host's team finishes before the device's launches and its sort add up, and the cluster
// loop's one block may keep a small program's copied arrays in shared memory) and k is one the
// device's pattern kernel makes. The program then borrows G and G^T where the device set-up
// keeps them: the 9M-row grid's 63M-entry factor never crosses the bus.
// The refusal's count samples rows past this many products of A' work (a 2-D grid: every third
// row; its cost is then a small part of the pattern's own).
constexpr double kRefusalProducts = 2;

template <typename T>
class Fsai final : public Preconditioner<T> {
 public:
  Fsai(Device device, int threads, int power)
      : Preconditioner<T>(device, threads, false), power_(power) {}
  std::string name() const override { return "fsai:" + std::to_string(power_); }

 protected:
  void analyze_pattern(const CsrMatrix<double>& A) override {
    phases_ = {};
    gpu_.reset();
    // Counted first (a few products of A): a pattern whose factorizations cannot finish is
    // refused with its counts instead of running for hours.
    const std::string refusal = fsai_refusal(count_fsai_pattern(A, power_, kRefusalProducts));
    if (!refusal.empty()) throw InputError(refusal);
    if (this->device() == Device::gpu && worth_device_setup(A.rows) &&
        power_ <= kFsaiDevicePowerMax) {
      gpu_ = make_fsai_gpu<T>();
      gpu_->analyze(A, power_, this->lent_device_arrays());
      phases_.pattern += gpu_->seconds().pattern;
      phases_.transpose += gpu_->seconds().transpose;
      const index_t on_host = gpu_->rows_on_host();
      this->report_.set_fact("set-up on",
                             on_host == 0
                                 ? "the device"
                                 : "the device, " + std::to_string(on_host) + " rows longer than " +
                                       std::to_string(kFsaiDeviceRowMax) + " on the host");
      this->report_.set_fact("pattern", "tril(A^" + std::to_string(power_) + "), " +
                                            std::to_string(gpu_->g().nnz) + " entries");
      return;
    }
    const auto start = Clock::now();
    G_ = power_pattern(A, power_);
    phases_.pattern += seconds_since(start);
    this->report_.set_fact("set-up on", "the host");
    this->report_.set_fact("pattern", "tril(A^" + std::to_string(power_) + "), " +
                                          std::to_string(G_.values.size()) + " entries");
  }

  void compute_values(const CsrMatrix<double>& A, ProgramSpec<T>& spec) override {
    if (gpu_) {
      compute_on_device(A, spec);
    } else {
      compute_on_host(A, spec);
    }
    report_phases();
  }

 private:
  void compute_on_device(const CsrMatrix<double>& A, ProgramSpec<T>& spec) {
    gpu_->compute(
        A, this->lent_device_arrays());  // G and G^T rewritten in place: borrowed, nothing to copy
    phases_.rows += gpu_->seconds().rows;
    phases_.transpose += gpu_->seconds().transpose;
    if (!spec.ops.empty()) return;
    const FsaiDeviceCsr<T> g = gpu_->g(), gt = gpu_->gt();
    const int between = spec.add_work(std::size_t(A.rows));  // G r
    add_product(spec, A.rows, spec.borrow_indices(g.row_ptr), spec.borrow_indices(g.col_idx),
                spec.borrow_values(g.values), kSlotR, between, 0);
    add_product(spec, A.rows, spec.borrow_indices(gt.row_ptr), spec.borrow_indices(gt.col_idx),
                spec.borrow_values(gt.values), between, kSlotZ, 1);
  }

  void compute_on_host(const CsrMatrix<double>& A, ProgramSpec<T>& spec) {
    auto start = Clock::now();
    fsai_rows(A, G_);
    phases_.rows += seconds_since(start);
    start = Clock::now();
    const Transposed Gt = transpose_with_map(G_);
    phases_.transpose += seconds_since(start);
    if (!spec.ops.empty()) {
      spec.value_arrays[g_values_] = cast_to<T>(G_.values);
      spec.value_arrays[gt_values_] = cast_to<T>(Gt.At.values);
      return;
    }
    g_values_ = spec.add_values(cast_to<T>(G_.values));
    gt_values_ = spec.add_values(cast_to<T>(Gt.At.values));
    const int between = spec.add_work(std::size_t(A.rows));  // G r
    add_product(spec, A.rows, spec.add_indices(G_.row_ptr), spec.add_indices(G_.col_idx), g_values_,
                kSlotR, between, 0);
    add_product(spec, A.rows, spec.add_indices(Gt.At.row_ptr), spec.add_indices(Gt.At.col_idx),
                gt_values_, between, kSlotZ, 1);
  }

  static void add_product(ProgramSpec<T>& spec, index_t rows, int row_ptr, int col_idx, int values,
                          int x, int y, int dot) {
    OpSpec op;
    op.kind = OpKind::product;
    op.items = rows;
    op.row_ptr = row_ptr;
    op.col_idx = col_idx;
    op.values = values;
    op.x = x;
    op.y = y;
    op.alpha = 1;
    op.dot = dot;
    spec.ops.push_back(op);
  }

  // The phases since analyze (set_values adds its rows and transpose), inside analyze + values.
  void report_phases() {
    PrecondTable table;
    table.name = "fsai set-up";
    table.columns = {"phase", "seconds"};
    table.rows = {{"pattern", {phases_.pattern}},
                  {"rows", {phases_.rows}},
                  {"transpose", {phases_.transpose}}};
    this->report_.set_table(std::move(table));
  }

  int power_;
  CsrMatrix<double> G_;  // the host set-up's factor
  std::unique_ptr<FsaiGpu<T>> gpu_;
  FsaiPhaseSeconds phases_;
  int g_values_ = kNoArray, gt_values_ = kNoArray;
};

}  // namespace

template <typename T>
std::unique_ptr<Preconditioner<T>> make_fsai(const PrecondSpec& spec, Device device, int threads) {
  return std::make_unique<Fsai<T>>(device, threads, integer_argument(spec, 1, 1, 4));
}

template std::unique_ptr<Preconditioner<float>> make_fsai(const PrecondSpec&, Device, int);
template std::unique_ptr<Preconditioner<double>> make_fsai(const PrecondSpec&, Device, int);

}  // namespace cgs::precond
