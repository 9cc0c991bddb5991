#include "solver/precond/amg_setup.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

#include "formats/convert.hpp"
#include "solver/precond/amg_nullspace.hpp"
#include "solver/precond/amg_start.hpp"
#include "base/prefault.hpp"

namespace cgs::precond::amg {

std::vector<double> filtered_diagonal(const CsrMatrix<double>& A, const std::vector<char>& strong) {
  std::vector<double> d(std::size_t(A.rows), 0.0);
#pragma omp parallel for schedule(static) if (worth_threads(A.rows))
  for (index_t i = 0; i < A.rows; ++i) {
    double a_ii = 0, weak = 0;
    for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
      if (A.col_idx[k] == i)
        a_ii += A.values[k];
      else if (!strong[k])
        weak += A.values[k];
    }
    d[i] = a_ii + weak > 0 ? a_ii + weak : a_ii;
  }
  return d;
}

CsrMatrix<double> filtered_matrix(const CsrMatrix<double>& A, const std::vector<char>& strong,
                                  const std::vector<double>& diagonal) {
  CsrMatrix<double> F = A;
#pragma omp parallel for schedule(static) if (worth_threads(A.rows))
  for (index_t i = 0; i < A.rows; ++i)
    for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
      F.values[k] = A.col_idx[k] == i ? diagonal[i] : strong[k] ? A.values[k] : 0.0;
  return F;
}

Prolongator prolongator_pattern(const CsrMatrix<double>& A, const std::vector<char>& strong,
                                const Aggregates& aggregates) {
  const index_t n = A.rows;
  const std::vector<index_t>& of = aggregates.of;
  Prolongator p;
  CsrMatrix<double>& P = p.P;
  P.rows = n;
  P.cols = aggregates.count;
  P.row_ptr.assign(std::size_t(n) + 1, 0);
  p.position.assign(A.values.size(), -1);
  // The aggregates row i reaches: its own, and those of its strong neighbours.
  auto reached = [&](index_t i, std::vector<index_t>& columns) {
    columns.clear();
    for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
      const index_t j = A.col_idx[k];
      if ((j == i || strong[k]) && of[j] >= 0) columns.push_back(of[j]);
    }
    if (of[i] >= 0) columns.push_back(of[i]);  // also where A lacks the diagonal entry
    std::sort(columns.begin(), columns.end());
    columns.erase(std::unique(columns.begin(), columns.end()), columns.end());
  };
#pragma omp parallel if (worth_threads(n))
  {
    std::vector<index_t> columns;
#pragma omp for schedule(static)
    for (index_t i = 0; i < n; ++i) {
      reached(i, columns);
      P.row_ptr[i + 1] = index_t(columns.size());
    }
  }
  for (index_t i = 0; i < n; ++i) P.row_ptr[i + 1] += P.row_ptr[i];
  P.col_idx.resize(std::size_t(P.row_ptr[n]));
  P.values.assign(P.col_idx.size(), 0.0);
#pragma omp parallel if (worth_threads(n))
  {
    std::vector<index_t> columns;
#pragma omp for schedule(static)
    for (index_t i = 0; i < n; ++i) {
      reached(i, columns);
      std::copy(columns.begin(), columns.end(), P.col_idx.begin() + P.row_ptr[i]);
      for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
        const index_t j = A.col_idx[k];
        if ((j == i || strong[k]) && of[j] >= 0)
          p.position[k] =
              P.row_ptr[i] +
              index_t(std::lower_bound(columns.begin(), columns.end(), of[j]) - columns.begin());
      }
    }
  }
  std::vector<index_t> size(std::size_t(aggregates.count), 0);
  for (index_t a : of)
    if (a >= 0) ++size[a];
  p.weight.resize(size.size());
  for (std::size_t a = 0; a < size.size(); ++a) p.weight[a] = 1 / std::sqrt(double(size[a]));
  return p;
}

void smooth_prolongator(const CsrMatrix<double>& A, const Aggregates& aggregates,
                        const std::vector<double>& diagonal, double omega, Prolongator& p) {
  const std::vector<index_t>& of = aggregates.of;
  CsrMatrix<double>& P = p.P;
#pragma omp parallel for schedule(static) if (worth_threads(A.rows))
  for (index_t i = 0; i < A.rows; ++i) {
    const index_t begin = P.row_ptr[i], end = P.row_ptr[i + 1];
    std::fill(P.values.begin() + begin, P.values.begin() + end, 0.0);
    if (of[i] >= 0) {  // T
      const index_t at =
          index_t(std::lower_bound(P.col_idx.begin() + begin, P.col_idx.begin() + end, of[i]) -
                  P.col_idx.begin());
      P.values[at] += p.weight[of[i]];
    }
    const double scale = omega / diagonal[i];
    for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {  // - omega D_F^-1 A_F T
      if (p.position[k] < 0) continue;
      const index_t j = A.col_idx[k];
      const double a = j == i ? diagonal[i] : A.values[k];
      P.values[p.position[k]] -= scale * a * p.weight[of[j]];
    }
  }
}

CsrMatrix<double> galerkin_pattern(const CsrMatrix<double>& R, const CsrMatrix<double>& A,
                                   const CsrMatrix<double>& P) {
  const index_t nc = R.rows;
  CsrMatrix<double> Ac;
  Ac.rows = Ac.cols = nc;
  Ac.row_ptr.assign(std::size_t(nc) + 1, 0);
  // Calls emit(J) once for each column J of row I of R A P (in no particular order).
  auto columns = [&](index_t I, std::vector<index_t>& mark, auto emit) {
    for (index_t r = R.row_ptr[I]; r < R.row_ptr[I + 1]; ++r) {
      const index_t i = R.col_idx[r];
      for (index_t e = A.row_ptr[i]; e < A.row_ptr[i + 1]; ++e) {
        const index_t j = A.col_idx[e];
        for (index_t f = P.row_ptr[j]; f < P.row_ptr[j + 1]; ++f) {
          const index_t J = P.col_idx[f];
          if (mark[J] != I) {
            mark[J] = I;
            emit(J);
          }
        }
      }
    }
  };
#pragma omp parallel if (worth_threads(R.nnz()))
  {
    std::vector<index_t> mark(std::size_t(nc), -1);
#pragma omp for schedule(dynamic, 256)
    for (index_t I = 0; I < nc; ++I) {
      index_t count = 0;
      columns(I, mark, [&](index_t) { ++count; });
      Ac.row_ptr[I + 1] = count;
    }
  }
  for (index_t I = 0; I < nc; ++I) Ac.row_ptr[I + 1] += Ac.row_ptr[I];
  Ac.col_idx.resize(std::size_t(Ac.row_ptr[nc]));
  Ac.values.assign(Ac.col_idx.size(), 0.0);
#pragma omp parallel if (worth_threads(R.nnz()))
  {
    std::vector<index_t> mark(std::size_t(nc), -1);
#pragma omp for schedule(dynamic, 256)
    for (index_t I = 0; I < nc; ++I) {
      index_t at = Ac.row_ptr[I];
      columns(I, mark, [&](index_t J) { Ac.col_idx[at++] = J; });
      std::sort(Ac.col_idx.begin() + Ac.row_ptr[I], Ac.col_idx.begin() + Ac.row_ptr[I + 1]);
    }
  }
  return Ac;
}

namespace {

// A sparse product's rows 0 .. rows-1 (columns 0 .. cols-1), each made by row(I, add), which
// calls add(J, x) for each term x of column J in the order they are to be summed (a column's
// first term is added to 0). Row blocks of equal size, one to a thread, each into the thread's
// own arrays, stitched in row order: the same bits whatever the thread count. Each row's
// columns ascend, or with sorted_rows false come in the order first reached.
template <typename Row>
CsrMatrix<double> product_by_row_blocks(index_t rows, index_t cols, bool parallel, bool sorted_rows,
                                        Row row) {
  CsrMatrix<double> C;
  C.rows = rows;
  C.cols = cols;
  C.row_ptr.assign(std::size_t(rows) + 1, 0);
  const int teams = parallel ? omp_get_max_threads() : 1;
  std::vector<std::vector<index_t>> columns(std::size_t(teams), std::vector<index_t>{});
  std::vector<std::vector<double>> values(std::size_t(teams), std::vector<double>{});
  std::vector<index_t> first_row(std::size_t(teams) + 1, rows);
#pragma omp parallel num_threads(teams)
  {
    const int t = omp_get_thread_num(), team = omp_get_num_threads();
    const index_t begin = index_t(std::int64_t(rows) * t / team);
    const index_t end = index_t(std::int64_t(rows) * (t + 1) / team);
    first_row[std::size_t(t)] = begin;
    std::vector<index_t>& c = columns[std::size_t(t)];
    std::vector<double>& v = values[std::size_t(t)];
    // Each column's sum in a dense accumulator indexed by the column (not through a position
    // into v: a second dependent load per term, half of R A P's time at poisson2d:1000's first
    // level), and the row that last reached it. The same terms in the same order: the same bits.
    std::vector<double> sum(std::size_t(cols), 0.0);
    std::vector<index_t> reached_by(std::size_t(cols), -1);
    double* const acc = sum.data();
    index_t* const last = reached_by.data();
    for (index_t I = begin; I < end; ++I) {
      const std::size_t start = c.size();
      row(I, [&](index_t J, double x) {
        if (last[J] != I) {  // first in this row: 0 + x
          last[J] = I;
          c.push_back(J);
        }
        acc[J] += x;
      });
      if (sorted_rows) std::sort(c.begin() + std::ptrdiff_t(start), c.end());
      for (std::size_t k = start; k < c.size(); ++k) {
        v.push_back(acc[c[k]]);
        acc[c[k]] = 0;
      }
      C.row_ptr[I + 1] = index_t(c.size() - start);
    }
  }
  for (index_t I = 0; I < rows; ++I) C.row_ptr[I + 1] += C.row_ptr[I];
  C.col_idx.resize(std::size_t(C.row_ptr[rows]));
  C.values.resize(C.col_idx.size());
  for (int t = 0; t < teams; ++t) {
    const std::size_t at = std::size_t(C.row_ptr[first_row[std::size_t(t)]]);
    std::copy(columns[std::size_t(t)].begin(), columns[std::size_t(t)].end(),
              C.col_idx.begin() + std::ptrdiff_t(at));
    std::copy(values[std::size_t(t)].begin(), values[std::size_t(t)].end(),
              C.values.begin() + std::ptrdiff_t(at));
  }
  return C;
}

// R A P row by row of R through A's rows and P's (Gustavson over three factors): the product
// of an A entry with a P row is made again for each aggregate its row reaches, but no A P is
// stored. Where A's rows are short that is the cheaper way (poisson2d:1000's first level, one
// thread: numeric 0.29 s against R (A P)'s 0.47; poisson3d:100's 0.58 against 1.02); where they
// are long, R (A P) is (the levels below: 0.087 against 0.043, and 0.73 against 0.28).
// Row I of R A P, term by term (column, value) in one fixed order: the pattern pass and the
// values pass sum the same terms in the same order, so their values agree bit for bit.
template <typename Add>
void for_each_triple_term(const CsrMatrix<double>& R, const CsrMatrix<double>& A,
                          const CsrMatrix<double>& P, index_t I, Add add) {
  for (index_t r = R.row_ptr[I]; r < R.row_ptr[I + 1]; ++r) {
    const index_t i = R.col_idx[r];
    for (index_t e = A.row_ptr[i]; e < A.row_ptr[i + 1]; ++e) {
      const double ra = R.values[r] * A.values[e];
      const index_t j = A.col_idx[e];
      for (index_t f = P.row_ptr[j]; f < P.row_ptr[j + 1]; ++f) add(P.col_idx[f], ra * P.values[f]);
    }
  }
}

// Pattern and values in one pass, and the values alone on that pattern, bit for bit alike.
CsrMatrix<double> triple_product(const CsrMatrix<double>& R, const CsrMatrix<double>& A,
                                 const CsrMatrix<double>& P) {
  const index_t nc = R.rows;
  auto row = [&](index_t I, auto add) { for_each_triple_term(R, A, P, I, add); };
  return product_by_row_blocks(nc, nc, worth_threads(R.nnz()), true, row);
}

// Row I of X Y, term by term in one fixed order (sparse_product's pattern pass and
// galerkin_values's values pass alike).
template <typename Add>
void for_each_product_term(const CsrMatrix<double>& X, const CsrMatrix<double>& Y, index_t I,
                           Add add) {
  for (index_t r = X.row_ptr[I]; r < X.row_ptr[I + 1]; ++r) {
    const double x = X.values[r];
    const index_t i = X.col_idx[r];
    for (index_t f = Y.row_ptr[i]; f < Y.row_ptr[i + 1]; ++f) add(Y.col_idx[f], x * Y.values[f]);
  }
}

// Ac's values on its known pattern: each row's terms (row(I, add), add(column, value)) summed
// into their entries, in the order row gives them.
template <typename RowTerms>
void values_on_pattern(CsrMatrix<double>& Ac, bool parallel, RowTerms row) {
  const index_t nc = Ac.rows;
#pragma omp parallel if (parallel)
  {
    // Summed by column in a dense accumulator, then read out in the row's order (as
    // product_by_row_blocks: one dependent load per term fewer, the same sums bit for bit).
    std::vector<double> sum(std::size_t(nc), 0.0);  // Ac is square
    double* const acc = sum.data();
#pragma omp for schedule(dynamic, 256)
    for (index_t I = 0; I < nc; ++I) {
      row(I, [&](index_t col, double v) { acc[col] += v; });
      for (index_t c = Ac.row_ptr[I]; c < Ac.row_ptr[I + 1]; ++c) {
        Ac.values[c] = acc[Ac.col_idx[c]];
        acc[Ac.col_idx[c]] = 0;
      }
    }
  }
}

void triple_values(const CsrMatrix<double>& R, const CsrMatrix<double>& A,
                   const CsrMatrix<double>& P, CsrMatrix<double>& Ac) {
  values_on_pattern(Ac, worth_threads(R.nnz()),
                    [&](index_t I, auto add) { for_each_triple_term(R, A, P, I, add); });
}

// Whether R A P goes as R (A P): A's rows longer than 8 entries on average (above).
bool product_first(const CsrMatrix<double>& A) { return A.nnz() > 8 * std::int64_t(A.rows); }

}  // namespace

CsrMatrix<double> sparse_product(const CsrMatrix<double>& X, const CsrMatrix<double>& Y,
                                 bool sorted_rows) {
  auto row = [&](index_t I, auto add) { for_each_product_term(X, Y, I, add); };
  return product_by_row_blocks(X.rows, Y.cols, worth_threads(X.nnz()), sorted_rows, row);
}

CsrMatrix<double> galerkin_product(const CsrMatrix<double>& R, const CsrMatrix<double>& A,
                                   const CsrMatrix<double>& P) {
  if (!product_first(A)) return triple_product(R, A, P);
  return sparse_product(R, sparse_product(A, P, false));  // A P's order: galerkin_values's
}

void galerkin_values(const CsrMatrix<double>& R, const CsrMatrix<double>& A,
                     const CsrMatrix<double>& P, CsrMatrix<double>& Ac) {
  if (!product_first(A)) {
    triple_values(R, A, P, Ac);
    return;
  }
  const CsrMatrix<double> AP = sparse_product(A, P, false);  // as galerkin_product's
  values_on_pattern(Ac, worth_threads(R.nnz()),
                    [&](index_t I, auto add) { for_each_product_term(R, AP, I, add); });
}

namespace {

using Clock = std::chrono::steady_clock;

// Adds s seconds to the phase's time and the level's.
void add_seconds(Hierarchy& h, Level& level, const char* phase, double s) {
  level.seconds += s;
  for (auto& [name, total] : h.phase_seconds)
    if (name == phase) {
      total += s;
      return;
    }
  h.phase_seconds.emplace_back(phase, s);
}

// Runs `work`, adding its time to the phase's and the level's.
template <typename Work>
void timed(Hierarchy& h, Level& level, const char* phase, Work work) {
  const auto start = Clock::now();
  work();
  add_seconds(h, level, phase, std::chrono::duration<double>(Clock::now() - start).count());
}

std::vector<double> inverse_sqrt(const std::vector<double>& d) {
  const index_t n = index_t(d.size());
  std::vector<double> s(d.size());
#pragma omp parallel for schedule(static) if (worth_threads(n))
  for (index_t i = 0; i < n; ++i) s[i] = 1 / std::sqrt(d[i]);
  return s;
}

// Level l's GPU set-up object. It reads its operator where the device already holds it: the
// finest level's where the caller lent that copy (HierarchyOptions::finest_on_device), a coarse
// level's where the level above left its R A P (GpuLevelValues::device_next), so that no
// level's operator is uploaded again after its download.
std::shared_ptr<GpuLevelValues> gpu_level(const Hierarchy& h, std::size_t l,
                                          const CsrMatrix<double>& Al,
                                          const HierarchyOptions& options) {
  std::shared_ptr<GpuLevelValues> gpu = make_gpu_level_values();
  gpu->keep_host_copies(options.host_copies);
  const CsrArrays on_device = l == 0                ? options.finest_on_device
                              : h.levels[l - 1].gpu ? h.levels[l - 1].gpu->device_next()
                                                    : CsrArrays{};
  if (on_device.values) gpu->lend_operator(Al, on_device);
  return gpu;
}

// rho(D_F^-1 A_F) on the host from the hashed start (the device's start, amg_start.hpp).
double host_filtered_radius(const CsrMatrix<double>& A, const std::vector<double>& diagonal,
                            int steps, const EntryFilter& filter) {
  const std::vector<double> start =
      steps > 0 ? hashed_lanczos_start(A.rows) : std::vector<double>{};
  return spectrum_bounds(A, inverse_sqrt(diagonal), steps, filter, &start).ritz_max;
}

// The smoothers' interval of a level as spectrum_bounds(A, D^-1/2, 0) gives it: Gershgorin's
// bound g of D^-1 A alone, no iterations.
Interval gershgorin_interval(double g) { return {g / 2, g, g, g}; }

// Whether level `level` of `rows` rows may have a level below it: more rows than `coarse`, and
// fewer levels than max_levels so far (build_hierarchy's rule; aggregation may still fail).
bool may_coarsen(index_t rows, std::size_t level, const HierarchyOptions& options) {
  return rows > options.coarse && int(level) + 1 < options.max_levels;
}

// Level l's numbers with the GPU set-up: everything by kernels on the level's operator where
// the device holds it (GpuLevelValues's device path): no pass over its rows on the host, D_F
// not copied, the next operator downloaded only at the first set-up, with host copies, or
// where it is the coarsest (whose inverse the host makes).
void device_level_values(Hierarchy& h, std::size_t l, const CsrMatrix<double>& A,
                         const HierarchyOptions& options) {
  Level& level = h.levels[l];
  const CsrMatrix<double>& Al = h.op(A, l);
  GpuLevelValues& gpu = *level.gpu;
  timed(h, level, "spectra",
        [&] { level.spectrum = gershgorin_interval(gpu.operator_gershgorin(Al)); });
  timed(h, level, "spectra", [&] {
    const int steps = options.lanczos_steps_at(l);
    level.omega = 4 / (3 * gpu.device_filtered_radius(Al, steps));
  });
  // The next operator's values come to the host only where they are read there: host copies,
  // or its level is the coarsest. At the first set-up (its pattern not yet here) that is known
  // only for a level too small or too deep to coarsen; others that fail to coarsen have theirs
  // downloaded then (build_hierarchy). The host greedy of the next level reads its pattern and
  // runs its pass 2 on the device (GpuLevelValues::join_strongest): 0.11 GB at poisson2d:3000's
  // level 1 not copied (BENCHMARKS 20l).
  CsrMatrix<double>& next = h.levels[l + 1].A;
  const bool first_setup = next.rows == 0;
  const index_t next_rows = level.aggregates.count;
  const bool next_is_coarsest =
      first_setup ? !may_coarsen(next_rows, l + 1, options) : !h.has_next(l + 1);
  // The blocks' greedy and the host's MIS(2) read the next level's values on the host.
  const bool aggregation_reads_values =
      options.blocked || (options.mis2 && !options.device_aggregation);
  const bool next_on_host = options.host_copies || next_is_coarsest || aggregation_reads_values;
  const GpuPhaseSeconds s = gpu.device_compute(Al, level.omega, level, next, next_on_host);
  add_seconds(h, level, "prolongator", s.prolongator);
  add_seconds(h, level, "restriction", s.restriction);
  add_seconds(h, level, "galerkin R A P", s.galerkin);
  if (s.download > 0) add_seconds(h, level, "coarse download", s.download);
}

// The numbers of level l towards level l + 1 on patterns already made: the spectra, P, R and
// the next level's operator.
void level_values(Hierarchy& h, std::size_t l, const CsrMatrix<double>& A,
                  const HierarchyOptions& options) {
  Level& level = h.levels[l];
  if (options.gpu && level.gpu && h.has_next(l)) {
    device_level_values(h, l, A, options);
    return;
  }
  const CsrMatrix<double>& Al = h.op(A, l);
  timed(h, level, "spectra", [&] {  // the smoothers' bound: Gershgorin's, no iterations
    level.spectrum = spectrum_bounds(Al, inverse_sqrt(diagonal_of(Al)), 0);
  });
  if (!h.has_next(l)) return;
  std::vector<double> diagonal;
  timed(h, level, "prolongator", [&] { diagonal = filtered_diagonal(Al, level.strong); });
  timed(h, level, "spectra", [&] {
    // rho(D_F^-1 A_F) by Lanczos, on A's entries through the strength filter (no copy of A as
    // A_F). With gershgorin_damping (or no steps) Gershgorin's bound of the same matrix
    // instead: no iterations, but 3-4 more CG iterations on Poisson (BENCHMARKS 20h).
    const EntryFilter filter{&level.strong, &diagonal};
    const int steps = options.lanczos_steps_at(l);
    level.omega = 4 / (3 * host_filtered_radius(Al, diagonal, steps, filter));
  });
  timed(h, level, "prolongator", [&] {
    if (level.nullspace)  // T from the aggregates' QR (amg_nullspace.hpp)
      smooth_tentative(Al, level.strong, diagonal, level.omega, level.tentative,
                       level.prolongator.P);
    else
      smooth_prolongator(Al, level.aggregates, diagonal, level.omega, level.prolongator);
  });
  timed(h, level, "restriction", [&] {
    const CsrMatrix<double>& P = level.prolongator.P;
    CsrMatrix<double>& R = level.restriction.At;
    const std::vector<index_t>& to = level.restriction.position;
#pragma omp parallel for schedule(static) if (worth_threads(P.nnz()))
    for (index_t k = 0; k < P.nnz(); ++k) R.values[to[k]] = P.values[k];
  });
  timed(h, level, "galerkin R A P", [&] {
    CsrMatrix<double>& next = h.levels[l + 1].A;
    if (next.rows == 0)  // the first set-up: pattern and values in one pass
      next = galerkin_product(level.restriction.At, Al, level.prolongator.P);
    else
      galerkin_values(level.restriction.At, Al, level.prolongator.P, next);
  });
}

// Whether a level's operator came down from the GPU set-up as its pattern only (its values
// stay on the device unless the level turns out to be the coarsest: build_hierarchy).
bool values_on_device_only(const CsrMatrix<double>& A) {
  return A.values.size() != A.col_idx.size();
}

// greedy_aggregate with its pass 2 on the device, where A's values are (a coarse level whose
// values the first set-up left there).
Aggregates greedy_with_device_pass2(const CsrMatrix<double>& A, const std::vector<char>& strong,
                                    GpuLevelValues& gpu) {
  Aggregates g = greedy_roots(A, strong);
  std::vector<index_t> first;
  reserve_prefaulted(first, g.of.size());
  first = g.of;
  gpu.join_strongest(first, g.of);
  start_leftover_aggregates(A, strong, g);
  return g;
}

// level_pattern with a near-nullspace (amg_nullspace.hpp), on the host: strength and
// aggregation by nodes, T from each aggregate's QR, P's pattern, R's; the next level's
// near-nullspace from the QRs' R factors. False (and nothing kept) when it does not coarsen.
bool nullspace_level_pattern(Hierarchy& h, std::size_t l, const CsrMatrix<double>& A,
                             const HierarchyOptions& options) {
  Level& level = h.levels[l];
  const CsrMatrix<double>& Al = h.op(A, l);
  const NearNullspace& ns = *level.nullspace;
  level.theta = options.theta * std::pow(options.theta_decay, double(l));
  NodeStrength s;
  timed(h, level, "strength", [&] { s = node_strength(Al, ns, level.theta); });
  timed(h, level, "aggregation", [&] {
    const Aggregates nodes = options.mis2 ? mis2_aggregate(s.C, s.strong_nodes)
                                          : greedy_aggregate(s.C, s.strong_nodes);
    level.aggregates = dof_aggregates(nodes, ns);
  });
  Tentative t;
  timed(h, level, "prolongator", [&] { t = tentative_prolongator(level.aggregates, ns); });
  if (level.aggregates.count == 0 || t.T.cols >= Al.rows) {
    level.aggregates = {};
    return false;
  }
  level.strong = std::move(s.strong);
  timed(h, level, "prolongator", [&] {
    level.prolongator.P = nullspace_prolongator_pattern(Al, level.strong, t.T);
    level.tentative = std::move(t.T);
  });
  timed(h, level, "restriction",
        [&] { level.restriction = transpose_with_map(level.prolongator.P); });
  h.levels.emplace_back();  // its operator: galerkin_product, once P has values
  h.levels.back().nullspace = std::make_shared<const NearNullspace>(std::move(t.coarse));
  return true;
}

// How often a level that coarsens by more than HierarchyOptions::max_coarsening is aggregated
// again with a larger threshold before its aggregates are kept as they are.
constexpr int kCoarseningRetries = 3;

// The patterns of level l towards a next one: strength, aggregates, P's pattern and R's (the
// next operator comes with the values). False (and nothing kept) when aggregation does not
// coarsen.
bool level_pattern(Hierarchy& h, std::size_t l, const CsrMatrix<double>& A,
                   const HierarchyOptions& options) {
  if (h.levels[l].nullspace) return nullspace_level_pattern(h, l, A, options);
  Level& level = h.levels[l];
  const CsrMatrix<double>& Al = h.op(A, l);
  double theta = options.theta * std::pow(options.theta_decay, double(l));
  // With the GPU set-up strength runs on the device whatever the aggregation (a kernel and
  // the download of one byte an entry, where the host's pass over A took 0.1 s at 9M rows);
  // the aggregation too with device_aggregation.
  const bool on_device = options.gpu && options.device_aggregation;
  if (options.gpu) level.gpu = gpu_level(h, l, Al, options);
  for (int attempt = 0; attempt <= kCoarseningRetries; ++attempt) {
    std::vector<char> strong;
    Aggregates aggregates;
    timed(h, level, "strength", [&] {
      if (options.gpu)
        level.gpu->strength(Al, theta, strong);
      else
        strong = strong_connections(Al, theta);
    });
    timed(h, level, "aggregation", [&] {
      if (on_device)
        aggregates = level.gpu->mis2_aggregate(Al);
      else if (options.mis2 || options.device_aggregation)  // the device's algorithm
        aggregates = mis2_aggregate(Al, strong);
      else if (options.blocked)
        aggregates = blocked_greedy_aggregate(Al, strong, greedy_block_rows(Al.rows));
      else if (values_on_device_only(Al))
        aggregates = greedy_with_device_pass2(Al, strong, *level.gpu);
      else
        aggregates = greedy_aggregate(Al, strong);
    });
    if (attempt > 0 && aggregates.count == 0)
      break;  // a retry that left no couplings: keep the last
    level.theta = theta;
    level.strong = std::move(strong);
    level.aggregates = std::move(aggregates);
    if (double(level.aggregates.count) * options.max_coarsening >= double(Al.rows)) break;
    theta = std::min(1.0, std::max(4 * theta, 0.02));  // fewer couplings, smaller aggregates
  }
  if (level.aggregates.count == 0 || level.aggregates.count >= Al.rows) {
    level.strong = {};
    level.aggregates = {};
    level.gpu.reset();
    return false;
  }
  if (options.gpu) {  // the patterns on the device, where their values will be made
    const GpuPatternSeconds s = level.gpu->make_patterns(Al, level);
    add_seconds(h, level, "prolongator", s.prolongator);
    add_seconds(h, level, "restriction", s.restriction);
  } else {
    timed(h, level, "prolongator",
          [&] { level.prolongator = prolongator_pattern(Al, level.strong, level.aggregates); });
    timed(h, level, "restriction",
          [&] { level.restriction = transpose_with_map(level.prolongator.P); });
  }
  h.levels.emplace_back();  // its operator: galerkin_product, once P has values
  return true;
}

}  // namespace

Hierarchy build_hierarchy(const CsrMatrix<double>& A, const HierarchyOptions& options) {
  if (options.nullspace && options.gpu)
    throw std::logic_error("amg: the GPU set-up takes no near-nullspace (build on the host)");
  Hierarchy h;
  h.levels.emplace_back();
  h.levels.front().nullspace = options.nullspace;
  for (std::size_t l = 0;; ++l) {
    const bool coarsen =
        may_coarsen(h.op(A, l).rows, l, options) && level_pattern(h, l, A, options);
    if (!coarsen && l > 0 && values_on_device_only(h.levels[l].A))  // the coarsest after all
      h.levels[l - 1].gpu->download_next_values(h.levels[l].A);
    level_values(h, l, A, options);
    if (!coarsen) return h;
  }
}

void refresh_hierarchy(Hierarchy& h, const CsrMatrix<double>& A, const HierarchyOptions& options) {
  h.phase_seconds.clear();
  for (Level& level : h.levels) level.seconds = 0;
  for (std::size_t l = 0; l < h.levels.size(); ++l) level_values(h, l, A, options);
}

double operator_complexity(const Hierarchy& h, const CsrMatrix<double>& A) {
  double total = 0;
  for (std::size_t l = 0; l < h.levels.size(); ++l)  // values may be on the device only
    total += double(h.op(A, l).col_idx.size());
  return A.nnz() > 0 ? total / double(A.nnz()) : 1.0;
}

}  // namespace cgs::precond::amg
