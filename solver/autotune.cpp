#include "solver/autotune.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>

#include "formats/convert.hpp"
#include "formats/row_order.hpp"
#include "formats/stats.hpp"
#include "solver/cg.hpp"
#include "solver/vector_ops.hpp"

namespace cgs {

namespace {

// Cost control: at most this many timed products per candidate (and at most 8 candidates), so
// the inspector does under ~200 SpMVs against the hundreds to millions of a solve.
constexpr int kWarmupProducts = 3;
constexpr int kMaxTimedProducts = 20;
constexpr int kCheckEvery = 5;          // look at the running median this often ...
constexpr double kClearlySlower = 1.3;  // ... and stop a candidate this far behind the best
// ELL pays for every padded slot; above this fill it loses to HLL/CSR, so it is not timed.
constexpr double kMaxEllFillWorthTiming = 2.0;
// Sorting only changes anything when row lengths vary (HLL padding, GPU warp divergence).
constexpr double kMinDeviationPctForSorting = 10.0;

using Clock = std::chrono::steady_clock;

std::string fixed(double value, int digits) {
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

// The GPU kernels worth timing per format (names from spmv/cuda/cuda_backends.cu). With
// --format auto the list stays short (8 candidates at most); with --kernel auto alone, every
// kernel of the one format is timed.
std::vector<std::string> gpu_kernels(Format format, bool all_formats) {
  switch (format) {
    case Format::csr:
      if (all_formats) return {"scalar", "adaptive", "cusparse"};
      return {"scalar", "vector", "adaptive", "cusparse"};
    case Format::ell: return {"thread"};
    case Format::hll:
      return all_formats ? std::vector<std::string>{""}
                         : std::vector<std::string>{"thread", "cusparse"};
    case Format::coo:
      return all_formats ? std::vector<std::string>{"cusparse"}
                         : std::vector<std::string>{"segscan", "cusparse"};
  }
  return {""};
}

// Sorting is tried only for the formats it can help: CSR (GPU: scalar, the kernel that suffers
// from uneven rows in a warp) and HLL (less padding per hack).
bool worth_sorting(const AutoCandidate& c, Device device) {
  if (c.format == Format::hll) return true;
  if (c.format != Format::csr) return false;
  return device != Device::gpu || c.kernel == "scalar";
}

std::vector<AutoCandidate> candidate_list(const MatrixStats& stats, const SolveOptions& options,
                                          std::vector<std::string>& skipped) {
  const bool gpu = options.backend.device == Device::gpu;
  const std::vector<Format> formats =
      options.auto_format ? std::vector<Format>{Format::csr, Format::hll, Format::ell, Format::coo}
                          : std::vector<Format>{options.backend.format};
  const bool try_sorting =
      options.auto_format && stats.row_length_avg_deviation_pct >= kMinDeviationPctForSorting;
  if (options.auto_format && !try_sorting)
    skipped.push_back("sorting (row lengths nearly uniform, deviation " +
                      fixed(stats.row_length_avg_deviation_pct, 1) + "%)");

  std::vector<AutoCandidate> list;
  for (Format format : formats) {
    if (format == Format::ell && options.auto_format) {
      const double limit = std::min(options.backend.max_ell_fill, kMaxEllFillWorthTiming);
      if (stats.ell_fill > limit) {
        skipped.push_back("ell (fill " + fixed(stats.ell_fill, 1) + " > " + fixed(limit, 1) + ")");
        continue;
      }
    }
    const std::vector<std::string> kernels = gpu && (options.auto_kernel || options.auto_format)
                                                 ? gpu_kernels(format, options.auto_format)
                                                 : std::vector<std::string>{options.backend.kernel};
    for (const std::string& kernel : kernels) {
      AutoCandidate c;
      c.format = format;
      c.sort_rows = !options.auto_format && options.sort_rows;  // with auto: timed both ways
      c.kernel = kernel;
      list.push_back(c);
      if (try_sorting && worth_sorting(c, options.backend.device)) {
        c.sort_rows = true;
        list.push_back(c);
      }
    }
  }
  return list;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

// Warm-up, then up to kMaxTimedProducts products on the device clock; stops early once the
// running median is clearly behind the best so far (0 = none yet).
template <typename T>
void time_products(SpmvBackend<T>& backend, VectorOps<T>& ops, const T* x, T* y, double best_so_far,
                   AutoCandidate& c) {
  for (int i = 0; i < kWarmupProducts; ++i) backend.apply(x, y);
  ops.reset(0, 0);  // clears the recorded SpMV times
  for (int i = 1; i <= kMaxTimedProducts; ++i) {
    ops.mark_spmv_begin();
    backend.apply(x, y);
    ops.mark_spmv_end();
    if (i % kCheckEvery == 0 && best_so_far > 0 &&
        median(ops.spmv_seconds()) > kClearlySlower * best_so_far)
      break;
  }
  const std::vector<double> times = ops.spmv_seconds();
  ops.check_errors();
  c.products = int(times.size());
  c.median_seconds = median(times);
}

// The matrix in the solve's precision, in file order and (built on first use) sorted.
template <typename T>
class CandidateMatrices {
 public:
  explicit CandidateMatrices(const CsrMatrix<double>& A) : A_(A) {}
  const CsrMatrix<T>& get(bool sorted) {
    std::optional<CsrMatrix<T>>& slot = sorted ? sorted_ : original_;
    if (!slot) {
      const CsrMatrix<double>& source = sorted ? sorted_double() : A_;
      if constexpr (std::is_same_v<T, double>)
        slot = source;
      else
        slot = cast_values<T>(source);
    }
    return *slot;
  }

 private:
  const CsrMatrix<double>& sorted_double() {
    if (!sorted_double_) sorted_double_ = permute_symmetric(A_, sort_rows_by_length(A_));
    return *sorted_double_;
  }
  const CsrMatrix<double>& A_;
  std::optional<CsrMatrix<double>> sorted_double_;
  std::optional<CsrMatrix<T>> original_, sorted_;
};

BackendOptions options_for(const AutoCandidate& c, const BackendOptions& asked) {
  BackendOptions o = asked;
  o.format = c.format;
  o.kernel = c.kernel;
  return o;
}

template <typename T>
void time_candidates(const CsrMatrix<double>& A, const SolveOptions& options,
                     std::vector<AutoCandidate>& list, AutoChoice& choice) {
  CandidateMatrices<T> matrices(A);
  const std::size_t n = std::size_t(A.rows);
  auto ops = make_vector_ops<T>(options.backend.device, n, options.backend.threads);
  DeviceVector<T> x(*ops, n), y(*ops, n);
  const std::vector<T> ones(n, T(1));
  ops->upload(ones.data(), x.data(), n);
  double best = 0;
  for (AutoCandidate& c : list) {
    std::unique_ptr<SpmvBackend<T>> backend;
    try {
      backend = make_backend(matrices.get(c.sort_rows), options_for(c, options.backend));
    } catch (const InputError& e) {  // e.g. the ELL guard, a kernel that does not fit
      choice.skipped.push_back(c.label() + " (" + e.what() + ")");
      continue;
    }
    time_products(*backend, *ops, x.data(), y.data(), best, c);
    if (best == 0 || c.median_seconds < best) best = c.median_seconds;
    choice.timed.push_back(c);
  }
}

std::string micro(double seconds) { return fixed(seconds * 1e6, 2) + " us"; }

std::string explain(const AutoChoice& choice) {
  const AutoCandidate& best = choice.timed.front();
  std::string text = best.label() + ": " + micro(best.median_seconds) + " per product";
  for (std::size_t i = 1; i < choice.timed.size(); ++i) {
    const AutoCandidate& c = choice.timed[i];
    text += (i == 1 ? " vs " : ", ") + c.label() + " " + micro(c.median_seconds);
    if (c.products < kMaxTimedProducts) text += " (stopped early)";
  }
  if (!choice.skipped.empty()) {
    text += "; skipped";
    for (std::size_t i = 0; i < choice.skipped.size(); ++i)
      text += (i == 0 ? " " : ", ") + choice.skipped[i];
  }
  return text;
}

}  // namespace

std::string AutoCandidate::label() const {
  std::string text = to_string(format);
  if (!kernel.empty()) text += "/" + kernel;
  if (sort_rows) text += " sorted";
  return text;
}

AutoChoice choose_backend(const CsrMatrix<double>& A, const SolveOptions& options) {
  const auto start = Clock::now();
  AutoChoice choice;
  std::vector<AutoCandidate> list =
      candidate_list(compute_stats(A, options.backend.hack_size), options, choice.skipped);
  if (options.precision == Precision::single)
    time_candidates<float>(A, options, list, choice);
  else
    time_candidates<double>(A, options, list, choice);
  if (choice.timed.empty())
    throw InputError("--format/--kernel auto: no candidate could be built for this matrix");
  std::stable_sort(choice.timed.begin(), choice.timed.end(),
                   [](const AutoCandidate& a, const AutoCandidate& b) {
                     return a.median_seconds < b.median_seconds;
                   });
  choice.backend = options_for(choice.timed.front(), options.backend);
  choice.sort_rows = choice.timed.front().sort_rows;
  choice.reason = explain(choice);
  choice.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return choice;
}

}  // namespace cgs
