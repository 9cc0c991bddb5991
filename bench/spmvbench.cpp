// spmvbench: y = A x for every matrix and every (format, kernel, device, row order), next to
// the references measured in the same run: cuSPARSE CSR on the GPU, Eigen on the CPU with the
// same threads. Every product is checked against an independent CPU product.
//
//   spmvbench [matrices...] [--devices auto|serial,cpu,gpu] [--threads T] [--sorted both]
//             [--gpu-kernels LIST|all] [--cpu-formats csr,coo,ell,hll] [--runs 50]
//             [--out-dir DIR | --csv FILE --json FILE]
//
// Matrices are files, directories, globs or generator specs (gen:poisson3d:128, see
// formats/generators.hpp). Per row: the median time over --runs samples after warm-up (CUDA
// events on the GPU), GFLOP/s = 2 nnz / t, the effective bandwidth min_bytes / t from the
// format's minimal-bytes model (BENCHMARKS.md), that bandwidth as a fraction of the device's
// copy bandwidth measured at the start of the run, and the speedup over the reference.
// Exit status: 0 all correct, 1 some product was wrong (FAIL), 2 bad input, 4 no usable GPU.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <limits>
#include <map>
#include <optional>

#include "bench/lib/bench_util.hpp"
#include "bench/lib/references.hpp"
#include "formats/row_order.hpp"
#include "formats/stats.hpp"
#include "solver/cg_types.hpp"
#include "solver/solver.hpp"
#include "solver/vector_ops.hpp"
#include "spmv/cpu/cpu_backends.hpp"

namespace cgs::bench {
namespace {

constexpr double kMaxError = 1e-10;  // |y - y_ref| / sum_j |a_ij x_j|, per row
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Options {
  std::vector<std::string> matrices;
  std::string devices = "auto";
  int threads = 0;
  std::string gpu_kernels = default_gpu_kernels();
  std::string cpu_formats = "csr,coo,ell,hll";
  std::string sorted = "both";
  TimingOptions timing;
  double min_sample_us = 20;
  index_t hack_size = 32;
  index_t hll_tail =
      -1;  // -1: as the backends decide (formats/stats.hpp, spmv/backend_factory.cpp)
  index_t hll_sigma = -1;  // -1: as the backends decide; a kernel item's @sigma=N wins
  double max_ell_fill = 10;
  std::size_t cpu_copy_mib = 256, gpu_copy_mib = 1024;
  std::uint64_t seed = 42;
  std::string out_dir, csv, json, commit;
  bool quiet = false;
};

// One matrix in one row order: the product every row must reproduce.
struct System {
  const CsrMatrix<double>* A = nullptr;
  bool sorted = false;
  std::vector<double> x, expected, scale;
};

class SpmvBench {
 public:
  SpmvBench(const Options& options, std::vector<DeviceRun> devices)
      : options_(options), devices_(std::move(devices)) {}

  void run_matrix(const std::string& spec, std::size_t index, std::size_t count);
  void write_outputs(const Json& meta) const;
  void print_summary() const;
  bool any_failure() const { return failures_ > 0; }

 private:
  void record_matrix(const LoadedMatrix& m);
  void run_system(const LoadedMatrix& m, const System& system);
  Json run_reference(const LoadedMatrix& m, const System& system, const DeviceRun& device);
  void measure_reference(Json& row, const System& system, const DeviceRun& device);
  Json run_ours(const LoadedMatrix& m, const System& system, const DeviceRun& device,
                const KernelChoice& choice, const Json& reference);
  void measure_ours(Json& row, const System& system, const DeviceRun& device,
                    SpmvBackend<double>& A, VectorOps<double>& ops, const Json& reference);
  Json unmeasured(Json row, const Json& reference, const std::string& check,
                  const std::string& why) const;
  Json base_row(const LoadedMatrix& m, const System& system, const DeviceRun& device) const;
  void fill_timing(Json& row, const Timing& t, std::size_t min_bytes, index_t nnz,
                   const DeviceRun& device) const;
  void fill_check(Json& row, const std::vector<double>& y, const System& system);
  void progress(const std::string& text) const {
    if (!options_.quiet) std::fprintf(stderr, "%s\n", text.c_str()), std::fflush(stderr);
  }
  std::vector<KernelChoice> choices_for(Device device) const;
  std::vector<Json> target_rows() const;

  Options options_;
  std::vector<DeviceRun> devices_;
  std::vector<Json> results_, matrices_, histogram_;
  int failures_ = 0;
};

// ---------------------------------------------------------------------------------------------
void SpmvBench::run_matrix(const std::string& spec, std::size_t index, std::size_t count) {
  const LoadedMatrix m = load_benchmark_matrix(spec);
  progress("[" + std::to_string(index + 1) + "/" + std::to_string(count) + "] " + m.label + ": " +
           std::to_string(m.A.rows) + " rows, " + std::to_string(m.A.nnz()) +
           " nonzeros, loaded in " + format_number(m.load_seconds) + " s");
  record_matrix(m);

  System as_given{&m.A, false, random_vector(m.A.cols, options_.seed, -1.0, 1.0), {}, {}};
  as_given.expected = multiply(m.A, as_given.x);
  as_given.scale = abs_product(m.A, as_given.x);
  for (bool sorted : parse_sorted_modes(options_.sorted)) {
    if (!sorted) {
      run_system(m, as_given);
      continue;
    }
    if (m.A.rows != m.A.cols) {
      progress("  rows not sorted: the matrix is not square");
      continue;
    }
    // P A P^T with x' = P x gives y' = P y: the sorted rows must reproduce the permuted product.
    const RowPermutation P = sort_rows_by_length(m.A);
    const CsrMatrix<double> permuted = permute_symmetric(m.A, P);
    run_system(m, System{&permuted, true, P.to_new(as_given.x), P.to_new(as_given.expected),
                         P.to_new(as_given.scale)});
  }
}

void SpmvBench::record_matrix(const LoadedMatrix& m) {
  const MatrixStats s = compute_stats(m.A, options_.hack_size);
  Json j;
  j["matrix"] = m.label;
  j["source"] = m.spec;
  j["rows"] = s.rows;
  j["cols"] = s.cols;
  j["nnz"] = s.nnz;
  j["min_row_length"] = s.min_row_length;
  j["max_row_length"] = s.max_row_length;
  j["mean_row_length"] = s.mean_row_length;
  j["row_length_avg_deviation_pct"] = s.row_length_avg_deviation_pct;
  j["empty_rows"] = s.empty_rows;
  j["ell_fill"] = s.ell_fill;
  j["hll_fill"] = s.hll_fill;
  j["load_seconds"] = m.load_seconds;
  matrices_.push_back(j);

  std::map<index_t, long> counts;
  for (index_t r = 0; r < m.A.rows; ++r) ++counts[m.A.row_length(r)];
  for (const auto& [length, rows] : counts)
    histogram_.push_back(Json{{"matrix", m.label}, {"row_length", length}, {"rows", rows}});
}

std::vector<KernelChoice> SpmvBench::choices_for(Device device) const {
  if (device == Device::gpu) {
    return parse_kernel_list(options_.gpu_kernels == "all" ? all_gpu_kernels()
                                                           : options_.gpu_kernels);
  }
  return parse_kernel_list(options_.cpu_formats);  // CPU backends have one kernel per format
}

void SpmvBench::run_system(const LoadedMatrix& m, const System& system) {
  for (const DeviceRun& device : devices_) {
    const Json reference = run_reference(m, system, device);
    results_.push_back(reference);
    for (const KernelChoice& choice : choices_for(device.device)) {
      results_.push_back(run_ours(m, system, device, choice, reference));
    }
  }
}

// ---------------------------------------------------------------------------------------------
Json SpmvBench::base_row(const LoadedMatrix& m, const System& system,
                         const DeviceRun& device) const {
  Json row;
  row["matrix"] = m.label;
  row["rows"] = system.A->rows;
  row["cols"] = system.A->cols;
  row["nnz"] = system.A->nnz();
  row["device"] = device.label();
  row["threads"] = device.threads;
  row["sorted"] = system.sorted;
  return row;
}

void SpmvBench::fill_timing(Json& row, const Timing& t, std::size_t min_bytes, index_t nnz,
                            const DeviceRun& device) const {
  row["median_us"] = t.median * 1e6;
  row["min_us"] = t.min * 1e6;
  row["max_us"] = t.max * 1e6;
  row["samples"] = t.samples;
  row["batch"] = t.batch;
  row["gflops"] = 2.0 * nnz / t.median / 1e9;
  row["min_bytes"] = min_bytes;
  row["gbps"] = double(min_bytes) / t.median / 1e9;
  row["copy_gbps"] = device.copy_bandwidth / 1e9;
  row["bw_fraction"] = double(min_bytes) / t.median / device.copy_bandwidth;
}

void SpmvBench::fill_check(Json& row, const std::vector<double>& y, const System& system) {
  const double error = max_scaled_error(y, system.expected, system.scale);
  const bool ok = y.size() == system.expected.size() && error <= kMaxError;  // NaN fails
  row["max_error"] = error;
  row["check"] = ok ? "PASS" : "FAIL";
  if (!ok) ++failures_;
}

// Fields every row has, in order, so that the CSV columns line up; a skipped row keeps NaNs.
Json empty_measurement(Json row) {
  for (const char* key : {"median_us", "min_us", "max_us"}) row[key] = kNaN;
  row["samples"] = 0;
  row["batch"] = 0;
  for (const char* key : {"gflops"}) row[key] = kNaN;
  row["min_bytes"] = 0;
  for (const char* key : {"gbps", "copy_gbps", "bw_fraction"}) row[key] = kNaN;
  return row;
}

Json SpmvBench::run_reference(const LoadedMatrix& m, const System& system,
                              const DeviceRun& device) {
  Json row = base_row(m, system, device);
  row["role"] = "reference";
  row["format"] = "csr";
  try {
    measure_reference(row, system, device);
  } catch (const std::exception& e) {  // a failed cuSPARSE or CUDA call
    ++failures_;
    row["kernel"] = device.device == Device::gpu ? "cusparse" : "eigen";
    row["backend"] = row["kernel"];
    row = empty_measurement(row);
    for (const char* key : {"reference", "ref_median_us", "speedup_vs_ref", "max_error"})
      row[key] = kNaN;
    row["reference"] = row["backend"];
    row["check"] = "FAIL";
    row["note"] = e.what();
    progress("  reference FAILED: " + std::string(e.what()));
  }
  return row;
}

void SpmvBench::measure_reference(Json& row, const System& system, const DeviceRun& device) {
  const std::size_t min_bytes = min_bytes_model(Format::csr, system.A->rows, system.A->cols,
                                                system.A->nnz(), sizeof(double), 0);
  std::vector<double> y;
  Timing best;
  std::string name;
  if (device.device == Device::gpu) {
    CusparseCsrSpmv ref(*system.A);
    ref.set_x(system.x);
    std::string fastest;
    for (const std::string& algorithm : ref.algorithms()) {  // the faster cuSPARSE algorithm
      ref.select(algorithm);
      const Timing t =
          measure([&](int s, int b) { return ref.timed_batches(s, b); }, options_.timing);
      if (fastest.empty() || t.median < best.median) best = t, fastest = algorithm;
    }
    ref.select(fastest);
    ref.timed_batches(1, 1);
    y = ref.y();
    row["kernel"] = "cusparse-" + fastest;
    name = "cuSPARSE CSR (" + fastest + ")";
  } else {
    EigenSpmv ref(*system.A, device.threads);
    ref.set_x(system.x);
    best = measure([&](int s, int b) { return ref.timed_batches(s, b); }, options_.timing);
    y = ref.y();
    row["kernel"] = "eigen";
    name = "Eigen " + eigen_version() + " SpMV, " + std::to_string(device.threads) + " thread(s)";
  }
  row["backend"] = name;
  fill_timing(row, best, min_bytes, system.A->nnz(), device);
  row["reference"] = name;
  row["ref_median_us"] = best.median * 1e6;
  row["speedup_vs_ref"] = 1.0;
  fill_check(row, y, system);
  row["note"] = "";
  progress("  " + device.label() + (system.sorted ? " sorted " : " ") + name + ": " +
           format_number(best.median * 1e6) + " us " + row["check"].get<std::string>());
}

Json SpmvBench::run_ours(const LoadedMatrix& m, const System& system, const DeviceRun& device,
                         const KernelChoice& choice, const Json& reference) {
  Json row = base_row(m, system, device);
  row["role"] = "ours";
  row["format"] = to_string(choice.format);
  row["kernel"] = choice.kernel.empty() ? "default" : choice.kernel;

  BackendOptions bo;
  bo.format = choice.format;
  bo.device = device.device;
  bo.threads = device.threads;
  bo.kernel = choice.kernel;
  bo.hack_size = options_.hack_size;
  bo.hll_tail = choice.hll_tail >= 0 ? choice.hll_tail : options_.hll_tail;
  bo.hll_sigma = choice.hll_sigma >= 0 ? choice.hll_sigma : options_.hll_sigma;
  bo.max_ell_fill = options_.max_ell_fill;
  std::unique_ptr<SpmvBackend<double>> backend;
  std::unique_ptr<VectorOps<double>> ops;
  try {
    backend = make_backend(*system.A, bo);
    ops = make_vector_ops<double>(device.device, std::size_t(system.A->rows), device.threads);
  } catch (const std::exception& e) {  // ELL too wide, kernel unknown, out of device memory
    row["backend"] = choice.label();
    return unmeasured(row, reference, "SKIP", e.what());
  }
  row["backend"] = backend->name() + choice.hll_settings();
  try {
    measure_ours(row, system, device, *backend, *ops, reference);
  } catch (const std::exception& e) {  // a failed CUDA call: reported, and the run goes on
    ++failures_;
    return unmeasured(row, reference, "FAIL", e.what());
  }
  return row;
}

Json SpmvBench::unmeasured(Json row, const Json& reference, const std::string& check,
                           const std::string& why) const {
  row = empty_measurement(row);
  row["reference"] = reference["backend"];
  row["ref_median_us"] = reference["median_us"];
  row["speedup_vs_ref"] = kNaN;
  row["max_error"] = kNaN;
  row["check"] = check;
  row["note"] = why;
  progress("  " + text(row["device"]) + " " + text(row["backend"]) + ": " + check + " (" + why +
           ")");
  return row;
}

void SpmvBench::measure_ours(Json& row, const System& system, const DeviceRun& device,
                             SpmvBackend<double>& A, VectorOps<double>& ops,
                             const Json& reference) {
  DeviceVector<double> x(ops, system.x.size()), y(ops, std::size_t(system.A->rows));
  ops.upload(system.x.data(), x.data(), system.x.size());
  // VectorOps' SpMV marks time each batch on the device's clock (CUDA events on the GPU).
  auto timer = [&](int samples, int batch) {
    ops.clear_spmv_seconds();
    for (int s = 0; s < samples; ++s) {
      ops.mark_spmv_begin();
      for (int b = 0; b < batch; ++b) A.apply(x.data(), y.data());
      ops.mark_spmv_end();
    }
    std::vector<double> seconds = ops.spmv_seconds();
    return std::vector<double>(seconds.end() - std::min<std::size_t>(seconds.size(), samples),
                               seconds.end());
  };
  const Timing t = measure(timer, options_.timing);
  ops.check_errors();
  std::vector<double> y_host(std::size_t(system.A->rows));
  ops.download(y.data(), y_host.data(), y_host.size());

  fill_timing(row, t, A.min_bytes(), system.A->nnz(), device);
  row["reference"] = reference["backend"];
  row["ref_median_us"] = reference["median_us"];
  row["speedup_vs_ref"] = reference["median_us"].get<double>() / (t.median * 1e6);
  fill_check(row, y_host, system);
  row["note"] = "";
  progress("  " + device.label() + (system.sorted ? " sorted " : " ") + A.name() + ": " +
           format_number(t.median * 1e6) + " us, x" +
           format_number(row["speedup_vs_ref"].get<double>()) + " vs ref " +
           row["check"].get<std::string>());
}

// ---------------------------------------------------------------------------------------------
// Issue 4, section 6: where the best GPU kernel stands (cgsolve's own kernels, not its cuSPARSE
// backend). Per matrix the best time over kernels and both row orders is compared with the
// best reference time over both orders.
std::vector<Json> SpmvBench::target_rows() const {
  struct Best {
    double ours_us = kNaN, ref_us = kNaN, fraction = kNaN;
    std::string kernel;
    long long nnz = 0;
  };
  std::map<std::string, Best> best;
  for (const Json& r : results_) {
    if (r["device"] != "gpu" || r["check"] != "PASS") continue;
    Best& b = best[r["matrix"].get<std::string>()];
    b.nnz = r["nnz"].get<long long>();
    const double us = r["median_us"].get<double>();
    if (r["role"] == "reference") {
      if (!(us >= b.ref_us)) b.ref_us = us;
    } else if (r["kernel"] != "cusparse") {
      if (!(us >= b.ours_us)) {
        b.ours_us = us;
        b.kernel = r["backend"].get<std::string>() + (r["sorted"].get<bool>() ? " sorted" : "");
      }
      if (!(r["bw_fraction"].get<double>() <= b.fraction))
        b.fraction = r["bw_fraction"].get<double>();
    }
  }
  std::vector<Json> targets;
  for (const auto& [matrix, b] : best) {
    if (!std::isfinite(b.ours_us)) continue;
    Json t;
    t["matrix"] = matrix;
    t["nnz"] = b.nnz;
    t["best_kernel"] = b.kernel;
    t["best_us"] = b.ours_us;
    t["cusparse_us"] = b.ref_us;
    t["speedup_vs_cusparse"] = b.ref_us / b.ours_us;
    t["best_bw_fraction"] = b.fraction;
    t["goal_not_slower"] = b.ref_us / b.ours_us >= 1.0 ? "met" : "MISSED";
    t["goal_bw_85pct"] = b.nnz < 10'000'000   ? "n/a (< 10M nnz)"
                         : b.fraction >= 0.85 ? "met"
                                              : "MISSED";
    t["goal_1.35x_poisson3d"] = matrix.rfind("gen:poisson3d", 0) != 0 ? "n/a"
                                : b.ref_us / b.ours_us >= 1.35        ? "met"
                                                                      : "MISSED";
    targets.push_back(t);
  }
  return targets;
}

void SpmvBench::write_outputs(const Json& meta) const {
  const std::string dir = options_.out_dir;
  write_csv(output_path(dir, "spmv.csv", options_.csv), results_);
  write_csv(output_path(dir, "spmv_matrices.csv", ""), matrices_);
  write_csv(output_path(dir, "rowlen.csv", ""), histogram_);
  write_csv(output_path(dir, "spmv_targets.csv", ""), target_rows());
  Json document;
  document["meta"] = meta;
  document["devices"] = Json::array();
  for (const DeviceRun& d : devices_) document["devices"].push_back(to_json(d));
  document["settings"] = {{"runs", options_.timing.runs},
                          {"warmup", options_.timing.warmup},
                          {"min_sample_us", options_.min_sample_us},
                          {"sorted", options_.sorted},
                          {"hack_size", options_.hack_size},
                          {"precision", "double"},
                          {"max_error", kMaxError}};
  document["matrices"] = matrices_;
  document["results"] = results_;
  document["targets"] = target_rows();
  write_json(output_path(dir, "spmv.json", options_.json), document);
}

void SpmvBench::print_summary() const {
  const std::vector<Json> targets = target_rows();
  if (!targets.empty()) {
    TextTable t({"GPU target (issue 4)", "nnz", "best kernel", "us", "x cuSPARSE", "%copy",
                 ">= cuSPARSE", ">= 85% (>=10M nnz)", ">= 1.35x (3D Poisson)"});
    for (const Json& r : targets) {
      t.add_row({text(r["matrix"]), std::to_string(r["nnz"].get<long long>()),
                 text(r["best_kernel"]), format_number(r["best_us"].get<double>()),
                 format_number(r["speedup_vs_cusparse"].get<double>()),
                 format_number(100 * r["best_bw_fraction"].get<double>()),
                 text(r["goal_not_slower"]), text(r["goal_bw_85pct"]),
                 text(r["goal_1.35x_poisson3d"])});
    }
    std::cout << t.str() << '\n';
  }
  TextTable table({"matrix", "nnz", "device", "sorted", "backend", "median us", "GFLOP/s", "GB/s",
                   "%copy", "x ref", "check"});
  std::string last_matrix;
  for (const Json& r : results_) {
    if (!last_matrix.empty() && r["matrix"] != last_matrix) table.add_separator();
    last_matrix = r["matrix"].get<std::string>();
    const bool ref = r["role"] == "reference";
    table.add_row({text(r["matrix"]), std::to_string(r["nnz"].get<long long>()), text(r["device"]),
                   r["sorted"].get<bool>() ? "yes" : "no",
                   (ref ? "[ref] " : "") + r["backend"].get<std::string>(),
                   format_number(r["median_us"].get<double>()),
                   format_number(r["gflops"].get<double>()), format_number(r["gbps"].get<double>()),
                   format_number(100 * r["bw_fraction"].get<double>()),
                   format_number(r["speedup_vs_ref"].get<double>()), text(r["check"])});
  }
  std::cout << table.str();
  std::cout << "x ref = reference time / this time (> 1: faster than the reference); %copy = "
               "min-bytes bandwidth / measured copy bandwidth\n";
  if (failures_ > 0)
    std::cout << failures_ << " product(s) FAILED the check against the CPU reference\n";
}

// ---------------------------------------------------------------------------------------------
Options parse_options(int argc, char** argv) {
  Options o;
  CLI::App app{"spmvbench: SpMV per format/kernel/device against cuSPARSE and Eigen"};
  app.add_option("matrices,--matrix", o.matrices,
                 "matrix files, directories, globs or generator specs (gen:poisson3d:128)")
      ->required();
  app.add_option("--devices", o.devices, "auto, or a list of serial, cpu, gpu")
      ->capture_default_str();
  app.add_option("--threads", o.threads, "CPU threads for cpu rows and Eigen (0 = all)")
      ->capture_default_str();
  app.add_option("--gpu-kernels", o.gpu_kernels, "format[:kernel][@sigma=N][@tail=K] list (HLL settings per item), or 'all'")
      ->capture_default_str();
  app.add_option("--cpu-formats", o.cpu_formats, "formats for serial and cpu rows")
      ->capture_default_str();
  app.add_option("--sorted", o.sorted, "row orders: no, yes (sorted by length) or both")
      ->capture_default_str();
  app.add_option("--runs", o.timing.runs, "timed samples per row (the median is reported)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--warmup", o.timing.warmup, "products before timing")->capture_default_str();
  app.add_option("--min-sample-us", o.min_sample_us, "batch products so a sample lasts this long")
      ->capture_default_str();
  app.add_option("--hack-size", o.hack_size, "HLL hack size")->capture_default_str();
  app.add_option("--hll-tail", o.hll_tail,
                 "HLL: rows longer than this continue in a CSR tail (-1: the backends decide)")
      ->capture_default_str();
  app.add_option("--hll-sigma", o.hll_sigma,
                 "HLL: rows sorted by length in windows of this many rows (0: not sorted, -1: "
                 "the backends decide); a kernel item's @sigma=N overrides it")
      ->capture_default_str();
  app.add_option("--max-ell-fill", o.max_ell_fill, "skip ELL beyond this padding factor")
      ->capture_default_str();
  app.add_option("--cpu-copy-mib", o.cpu_copy_mib, "array size for the CPU copy bandwidth")
      ->capture_default_str();
  app.add_option("--gpu-copy-mib", o.gpu_copy_mib, "buffer size for the GPU copy bandwidth")
      ->capture_default_str();
  app.add_option("--seed", o.seed, "seed of x")->capture_default_str();
  app.add_option("--out-dir", o.out_dir,
                 "write spmv.csv, spmv.json, spmv_matrices.csv, rowlen.csv here");
  app.add_option("--csv", o.csv, "results CSV (overrides --out-dir's)");
  app.add_option("--json", o.json, "results JSON (overrides --out-dir's)");
  app.add_option("--commit", o.commit,
                 "commit to record (default: git rev-parse of the source tree)");
  app.add_flag("--quiet", o.quiet, "no progress lines on stderr");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::exit(app.exit(e) == 0 ? 0 : 2);
  }
  o.timing.min_sample_seconds = o.min_sample_us * 1e-6;
  return o;
}

int run(int argc, char** argv) {
  const Options options = parse_options(argc, argv);
  const std::vector<std::string> specs = expand_matrix_args(options.matrices);
  parse_sorted_modes(options.sorted);  // bad values fail before any work
  const std::vector<Device> devices = parse_devices(options.devices);
  const Json meta = run_metadata(argc, argv, options.commit);
  std::vector<DeviceRun> runs = prepare_devices(
      devices, options.threads, options.cpu_copy_mib << 20, options.gpu_copy_mib << 20);
  print_run_header("spmvbench", meta, runs);

  SpmvBench bench(options, std::move(runs));
  return run_every_matrix(bench, specs, meta);
}

}  // namespace
}  // namespace cgs::bench

int main(int argc, char** argv) {
  return cgs::bench::guarded_main("spmvbench", cgs::bench::run, argc, argv);
}
