// What spmvbench and cgbench share: timing by medians, the matrix list, the run's metadata,
// copy bandwidth on the CPU, and output as a text table, CSV and JSON.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "formats/csr.hpp"
#include "spmv/backend.hpp"

namespace cgs::bench {

using Json = nlohmann::ordered_json;

// ---------------------------------------------------------------------------------------------
// Timing. A sample is `batch` back-to-back operations timed together, divided by `batch`: tiny
// operations are batched so that a sample lasts at least min_sample_seconds and the clock's
// resolution and the per-sample overhead stay small against what is measured.
struct TimingOptions {
  int warmup = 10;                    // operations before the first sample (also estimates one)
  int runs = 50;                      // samples; the median of them is the result
  double min_sample_seconds = 20e-6;  // batch so a sample lasts at least this long
};

struct Timing {
  double median = 0, min = 0, max = 0;  // seconds per operation
  int samples = 0;
  int batch = 1;
};

// Runs `samples` samples of `batch` operations each and returns each sample's seconds, measured
// on the device's own clock. Implementations queue all samples before reading any time back,
// so that on the GPU the device stays busy and no host round trip is timed.
using BatchTimer = std::function<std::vector<double>(int samples, int batch)>;

Timing measure(const BatchTimer& timer, const TimingOptions& options);
Timing summarize(std::vector<double> seconds, int batch);
double median(std::vector<double> values);

// A BatchTimer for a host operation: the steady clock around each batch.
std::vector<double> time_on_host(const std::function<void()>& operation, int samples, int batch);

// ---------------------------------------------------------------------------------------------
// Matrices. Arguments are generator specs (gen:...), files, directories (their *.mtx and
// *.mtx.gz, without right-hand sides and solutions named *_b.mtx / *_x.mtx) or glob patterns.
std::vector<std::string> expand_matrix_args(const std::vector<std::string>& args);
std::string matrix_label(const std::string& path_or_spec);  // file name without .mtx(.gz)

std::vector<double> random_vector(std::size_t n, std::uint64_t seed, double lo, double hi);

// Per row sum |a_ij x_j|: the scale a product's rounding error is measured against.
std::vector<double> abs_product(const CsrMatrix<double>& A, const std::vector<double>& x);
// max_i |y_i - expected_i| / scale_i (NaN when any y_i is not finite).
double max_scaled_error(const std::vector<double>& y, const std::vector<double>& expected,
                        const std::vector<double>& scale);

// ---------------------------------------------------------------------------------------------
// Bandwidth. STREAM-copy-like a[i] = b[i] over two arrays of `bytes_per_array` with `threads`
// OpenMP threads; bytes read + written per second (write-allocate traffic not counted, as in
// STREAM), median of `runs`.
double cpu_copy_bandwidth(int threads, std::size_t bytes_per_array, int runs);
int resolve_threads(int requested);  // 0 = all

// ---------------------------------------------------------------------------------------------
// Devices and kernels on the command line.
struct DeviceRun {
  Device device = Device::omp;
  int threads = 1;            // CPU threads (1 for serial; unused on the GPU)
  double copy_bandwidth = 0;  // bytes/s, measured in this run
  std::string label() const;  // "gpu", "cpu x2", "serial"
};

// The devices of a run, each with its copy bandwidth measured now: the GPU by a device-to-device
// cudaMemcpy of gpu_copy_bytes, the CPU (threads, or 1 for serial) by cpu_copy_bandwidth.
std::vector<DeviceRun> prepare_devices(const std::vector<Device>& devices, int threads,
                                       std::size_t cpu_copy_bytes, std::size_t gpu_copy_bytes);
Json to_json(const DeviceRun& run);

// "auto" = cpu and, when one is usable, gpu; else a comma list of serial, cpu, gpu.
// Throws InputError for an unknown name, DeviceError when gpu is asked for and unusable.
std::vector<Device> parse_devices(const std::string& list);

struct KernelChoice {
  Format format = Format::csr;
  std::string kernel;         // empty = the format's default
  index_t hll_sigma = -1;     // HLL's sort window from "@sigma=N"; -1: the run's --hll-sigma
  index_t hll_tail = -1;      // HLL's tail threshold from "@tail=K"; -1: the run's --hll-tail
  std::string label() const;  // "csr/adaptive", "ell", "hll/thread@sigma=0"
  std::string hll_settings() const;  // "@sigma=N@tail=K", the parts given; "" for none
};
// "csr:adaptive,csr:scalar,ell,coo:cusparse,hll:thread@sigma=0@tail=64"
// (format[:kernel][@sigma=N][@tail=K], comma separated; @sigma=N: HLL rows sorted in windows of
// N, 0 unsorted, as --hll-sigma; @tail=K: as --hll-tail).
std::vector<KernelChoice> parse_kernel_list(const std::string& list);
std::string default_gpu_kernels();
std::string all_gpu_kernels();

// "no", "yes" or "both" -> the row orders to run (false = as given, true = sorted by length).
std::vector<bool> parse_sorted_modes(const std::string& mode);

// A matrix as loaded, and the same matrix with its rows sorted by length (P A P^T, see
// formats/row_order.hpp) when a benchmark runs that order too.
struct LoadedMatrix {
  std::string spec, label;
  CsrMatrix<double> A;
  double load_seconds = 0;
};
LoadedMatrix load_benchmark_matrix(const std::string& spec);

// ---------------------------------------------------------------------------------------------
// Metadata of a run: date, commit, command line, CPU and GPU.
Json run_metadata(int argc, char** argv, const std::string& commit_override);

// ---------------------------------------------------------------------------------------------
// Output.
std::string format_number(double value, int significant = 3);  // "-" for NaN
inline std::string text(const Json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

// A plain text table with right-aligned numbers and left-aligned text.
class TextTable {
 public:
  explicit TextTable(std::vector<std::string> headers) : headers_(std::move(headers)) {}
  void add_row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  void add_separator() { rows_.emplace_back(); }
  std::string str() const;

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

// Every record has the same keys (the first record's give the header).
void write_csv(const std::string& path, const std::vector<Json>& records);
void write_json(const std::string& path, const Json& document);
// "<dir>/<name>" when dir is set, else `explicit_path` (may be empty = not written).
std::string output_path(const std::string& dir, const std::string& name,
                        const std::string& explicit_path);

// The lines both programs open with: program, date, commit, CPU, GPU, `extra` (if any), and the
// copy bandwidth of every device measured in this run.
void print_run_header(const std::string& program, const Json& meta,
                      const std::vector<DeviceRun>& runs, const std::string& extra = "");

// Benchmarks every matrix (a matrix that cannot be read is reported and skipped, so the others'
// results are still written), writes the outputs and prints the summary. Exit code: 2 when a
// matrix was unreadable, 1 when a result was wrong, else 0.
template <typename Bench>
int run_every_matrix(Bench& bench, const std::vector<std::string>& specs, const Json& meta) {
  std::vector<std::string> unreadable;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    try {
      bench.run_matrix(specs[i], i, specs.size());
    } catch (const InputError& e) {
      unreadable.push_back(e.what());
      std::fprintf(stderr, "%s\n", e.what());
    }
  }
  bench.write_outputs(meta);
  bench.print_summary();
  for (const std::string& why : unreadable) std::cout << "not benchmarked: " << why << '\n';
  return !unreadable.empty() ? 2 : bench.any_failure() ? 1 : 0;
}

// main() of a benchmark program: runs `run` and turns its exceptions into exit codes
// (2 bad input, 4 GPU unavailable, 3 anything else).
int guarded_main(const char* program, int (*run)(int, char**), int argc, char** argv);

}  // namespace cgs::bench
