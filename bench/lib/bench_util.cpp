#include "bench/lib/bench_util.hpp"

#include <glob.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <sstream>
#include <thread>

#include "bench/lib/references.hpp"
#include "base/atomic_file.hpp"
#include "formats/generators.hpp"
#include "spmv/cuda/cuda_backends.hpp"

namespace cgs::bench {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------------------------
// Timing

double median(std::vector<double> values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  const std::size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  if (values.size() % 2 == 1) return values[mid];
  const double upper = values[mid];
  return 0.5 * (upper + *std::max_element(values.begin(), values.begin() + mid));
}

Timing summarize(std::vector<double> seconds, int batch) {
  Timing t;
  t.batch = batch;
  t.samples = int(seconds.size());
  if (seconds.empty()) {
    t.median = t.min = t.max = std::numeric_limits<double>::quiet_NaN();
    return t;
  }
  for (double& s : seconds) s /= batch;
  t.min = *std::min_element(seconds.begin(), seconds.end());
  t.max = *std::max_element(seconds.begin(), seconds.end());
  t.median = median(std::move(seconds));
  return t;
}

Timing measure(const BatchTimer& timer, const TimingOptions& options) {
  // The warm-up is one sample of `warmup` operations: it absorbs first-call costs (cuSPARSE's
  // analysis, page faults, cold caches) and estimates one operation for choosing the batch.
  const int warmup = std::max(1, options.warmup);
  const std::vector<double> warm = timer(1, warmup);
  const double estimate = warm.empty() ? 0.0 : warm.front() / warmup;
  int batch = 1;
  if (estimate > 0 && estimate < options.min_sample_seconds)
    batch = int(std::min(10000.0, std::ceil(options.min_sample_seconds / estimate)));
  return summarize(timer(std::max(1, options.runs), batch), batch);
}

std::vector<double> time_on_host(const std::function<void()>& operation, int samples, int batch) {
  using Clock = std::chrono::steady_clock;
  std::vector<double> seconds;
  seconds.reserve(samples);
  for (int s = 0; s < samples; ++s) {
    const auto start = Clock::now();
    for (int b = 0; b < batch; ++b) operation();
    seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  return seconds;
}

// ---------------------------------------------------------------------------------------------
// Matrices

namespace {

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_matrix_file_name(const std::string& name) {
  const bool mtx = ends_with(name, ".mtx") || ends_with(name, ".mtx.gz");
  const bool vector = ends_with(name, "_b.mtx") || ends_with(name, "_b.mtx.gz") ||
                      ends_with(name, "_x.mtx") || ends_with(name, "_x.mtx.gz");
  return mtx && !vector;
}

std::vector<std::string> matrices_in_directory(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.is_regular_file() && is_matrix_file_name(entry.path().filename().string()))
      files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::string> glob_matches(const std::string& pattern) {
  glob_t found{};
  std::vector<std::string> files;
  if (::glob(pattern.c_str(), 0, nullptr, &found) == 0) {
    for (std::size_t i = 0; i < found.gl_pathc; ++i) files.emplace_back(found.gl_pathv[i]);
  }
  ::globfree(&found);
  return files;  // glob() returns them sorted
}

}  // namespace

std::vector<std::string> expand_matrix_args(const std::vector<std::string>& args) {
  std::vector<std::string> specs;
  for (const std::string& arg : args) {
    if (is_generator_spec(arg) || (fs::is_regular_file(arg))) {
      specs.push_back(arg);
    } else if (fs::is_directory(arg)) {
      const auto files = matrices_in_directory(arg);
      if (files.empty()) throw InputError("no *.mtx or *.mtx.gz matrix in directory '" + arg + "'");
      specs.insert(specs.end(), files.begin(), files.end());
    } else if (arg.find_first_of("*?[") != std::string::npos) {
      const auto files = glob_matches(arg);
      if (files.empty()) throw InputError("no file matches '" + arg + "'");
      specs.insert(specs.end(), files.begin(), files.end());
    } else {
      throw InputError("no such matrix file, directory or generator: '" + arg + "'");
    }
  }
  return specs;
}

std::string matrix_label(const std::string& path_or_spec) {
  if (is_generator_spec(path_or_spec)) return path_or_spec;
  std::string name = fs::path(path_or_spec).filename().string();
  for (const char* suffix : {".gz", ".mtx"}) {
    if (ends_with(name, suffix)) name.resize(name.size() - std::string(suffix).size());
  }
  return name;
}

std::vector<double> random_vector(std::size_t n, std::uint64_t seed, double lo, double hi) {
  std::vector<double> v(n);
  std::uint64_t state = seed;
  for (double& e : v) {  // splitmix64: the same vector everywhere
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    e = lo + (hi - lo) * double((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
  }
  return v;
}

std::vector<double> abs_product(const CsrMatrix<double>& A, const std::vector<double>& x) {
  std::vector<double> scale(A.rows, 0.0);
#pragma omp parallel for schedule(static)
  for (index_t r = 0; r < A.rows; ++r) {
    double sum = 0;
    for (index_t k = A.row_ptr[r]; k < A.row_ptr[r + 1]; ++k)
      sum += std::abs(A.values[k] * x[A.col_idx[k]]);
    scale[r] = sum;
  }
  return scale;
}

double max_scaled_error(const std::vector<double>& y, const std::vector<double>& expected,
                        const std::vector<double>& scale) {
  double worst = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    if (!std::isfinite(y[i])) return std::numeric_limits<double>::quiet_NaN();
    const double error = std::abs(y[i] - expected[i]);
    if (error == 0) continue;
    worst = std::max(worst, error / std::max(scale[i], std::numeric_limits<double>::min()));
  }
  return worst;
}

// ---------------------------------------------------------------------------------------------
// Bandwidth

int resolve_threads(int requested) { return requested > 0 ? requested : omp_get_max_threads(); }

double cpu_copy_bandwidth(int threads, std::size_t bytes_per_array, int runs) {
  const std::size_t n = bytes_per_array / sizeof(double);
  std::unique_ptr<double[]> a(new double[n]), b(new double[n]);
  // First touch by the same threads and schedule as the copy, so pages sit near their users.
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::size_t i = 0; i < n; ++i) a[i] = 0.0, b[i] = double(i);
  auto copy = [&] {
#pragma omp parallel for num_threads(threads) schedule(static)
    for (std::size_t i = 0; i < n; ++i) a[i] = b[i];
  };
  copy();  // warm-up
  const double seconds = median(time_on_host(copy, std::max(1, runs), 1));
  return 2.0 * double(n * sizeof(double)) / seconds;
}

// ---------------------------------------------------------------------------------------------
// Devices and kernels

std::string DeviceRun::label() const {
  switch (device) {
    case Device::gpu: return "gpu";
    case Device::serial: return "serial";
    case Device::omp: return "cpu x" + std::to_string(threads);
  }
  return "?";
}

std::vector<DeviceRun> prepare_devices(const std::vector<Device>& devices, int threads,
                                       std::size_t cpu_copy_bytes, std::size_t gpu_copy_bytes) {
  std::vector<DeviceRun> runs;
  for (Device device : devices) {
    DeviceRun run;
    run.device = device;
    run.threads = device == Device::omp ? resolve_threads(threads) : 1;
    run.copy_bandwidth = device == Device::gpu
                             ? gpu_copy_bandwidth(gpu_copy_bytes, 20)
                             : cpu_copy_bandwidth(run.threads, cpu_copy_bytes, 20);
    runs.push_back(run);
  }
  return runs;
}

Json to_json(const DeviceRun& run) {
  Json j;
  j["device"] = run.label();
  j["threads"] = run.threads;
  j["copy_gbps"] = run.copy_bandwidth / 1e9;
  j["copy_method"] = run.device == Device::gpu
                         ? "cudaMemcpy device to device, (read + write) bytes / time, median of 20"
                         : "STREAM-like copy a[i] = b[i] with the same threads, (read + write) "
                           "bytes / time, median of 20";
  return j;
}

std::vector<Device> parse_devices(const std::string& list) {
  std::string why;
  if (list == "auto") {
    std::vector<Device> devices{Device::omp};
    if (cuda_device_available(&why)) devices.push_back(Device::gpu);
    return devices;
  }
  std::vector<Device> devices;
  std::stringstream items(list);
  for (std::string item; std::getline(items, item, ',');) {
    const Device device = parse_device(item);
    if (device == Device::gpu && !cuda_device_available(&why))
      throw DeviceError("--devices asks for the GPU, but: " + why);
    devices.push_back(device);
  }
  if (devices.empty()) throw InputError("--devices lists no device");
  return devices;
}

std::string KernelChoice::label() const {
  const std::string text = kernel.empty() ? to_string(format) : to_string(format) + "/" + kernel;
  return text + hll_settings();
}

std::string KernelChoice::hll_settings() const {
  return (hll_sigma >= 0 ? "@sigma=" + std::to_string(hll_sigma) : std::string()) +
         (hll_tail >= 0 ? "@tail=" + std::to_string(hll_tail) : std::string());
}

namespace {

// The "@sigma=N" and "@tail=K" settings at the end of a kernel list item (HLL's sort window and
// HYB tail threshold), removed from it; -1 where absent.
void take_hll_settings(std::string& item, KernelChoice& choice) {
  const std::string whole = item;
  const std::size_t first = item.find('@');
  if (first == std::string::npos) return;
  std::stringstream settings(item.substr(first + 1));
  item.erase(first);
  for (std::string setting; std::getline(settings, setting, '@');) {
    const std::size_t equals = setting.find('=');
    const std::string key = setting.substr(0, equals);
    const std::string number = equals == std::string::npos ? "" : setting.substr(equals + 1);
    if ((key != "sigma" && key != "tail") || number.empty() || number.size() > 9 ||
        number.find_first_not_of("0123456789") != std::string::npos)
      throw InputError("kernel list item '" + whole + "': expected @sigma=N or @tail=K with " +
                       "non-negative integers, got '@" + setting + "'");
    (key == "sigma" ? choice.hll_sigma : choice.hll_tail) = index_t(std::stol(number));
  }
}

}  // namespace

std::vector<KernelChoice> parse_kernel_list(const std::string& list) {
  std::vector<KernelChoice> choices;
  std::stringstream items(list);
  for (std::string item; std::getline(items, item, ',');) {
    if (item.empty()) continue;
    KernelChoice choice;
    take_hll_settings(item, choice);
    const std::size_t colon = item.find(':');
    try {
      choice.format = parse_format(item.substr(0, colon));
    } catch (const std::exception&) {
      throw InputError("unknown format in kernel list item '" + item +
                       "' (expected csr, coo, ell or hll)");
    }
    if (colon != std::string::npos) choice.kernel = item.substr(colon + 1);
    choices.push_back(choice);
  }
  if (choices.empty()) throw InputError("empty kernel list '" + list + "'");
  return choices;
}

// The kernels spmv/cuda offers (see spmv/cuda/cuda_backends.cu); "cusparse" is cgsolve's own
// cuSPARSE backend, measured as one of ours next to the independent reference.
std::string default_gpu_kernels() {
  return "csr:adaptive,csr:scalar,csr:stream,csr:vector,csr:cusparse,ell:thread,hll:thread,"
         "hll:cusparse,coo:segscan-shfl,coo:segscan-shared,coo:cusparse";
}

std::string all_gpu_kernels() {
  return default_gpu_kernels() + ",csr:vector2,csr:vector4,csr:vector8,csr:vector16";
}

std::vector<bool> parse_sorted_modes(const std::string& mode) {
  if (mode == "no") return {false};
  if (mode == "yes") return {true};
  if (mode == "both") return {false, true};
  throw InputError("--sorted must be no, yes or both, got '" + mode + "'");
}

LoadedMatrix load_benchmark_matrix(const std::string& spec) {
  const auto start = std::chrono::steady_clock::now();
  LoadedMatrix m{spec, matrix_label(spec), load_matrix(spec), 0};
  m.load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return m;
}

// ---------------------------------------------------------------------------------------------
// Metadata

namespace {

std::string command_output(const std::string& command) {
  std::string output;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(command.c_str(), "r"), ::pclose);
  if (!pipe) return output;
  std::array<char, 256> buffer{};
  while (std::fgets(buffer.data(), int(buffer.size()), pipe.get())) output += buffer.data();
  while (!output.empty() && (output.back() == '\n' || output.back() == '\r')) output.pop_back();
  return output;
}

std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown CPU";
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return text;
}

std::string source_commit() {
  if (const char* env = std::getenv("CGS_COMMIT"); env && *env) return env;
  const std::string dir = CGSOLVE_SOURCE_DIR;
  std::string commit = command_output("git -C '" + dir + "' rev-parse --short HEAD 2>/dev/null");
  if (commit.empty()) return "unknown";
  const std::string changes =
      command_output("git -C '" + dir + "' status --porcelain --untracked-files=no 2>/dev/null");
  return changes.empty() ? commit : commit + " (with uncommitted changes)";
}

}  // namespace

Json run_metadata(int argc, char** argv, const std::string& commit_override) {
  std::string command;
  for (int i = 0; i < argc; ++i) {
    if (i > 0) command += ' ';
    command += argv[i];
  }
  char host[256] = "unknown";
  ::gethostname(host, sizeof host - 1);
  std::string gpu;
  const bool has_gpu = cuda_device_available(&gpu);
  if (has_gpu) gpu = cuda_device_description();
  Json meta;
  meta["date"] = utc_now();
  meta["commit"] = commit_override.empty() ? source_commit() : commit_override;
  meta["command"] = command;
  meta["host"] = host;
  meta["cpu"] = cpu_model();
  meta["cpu_hardware_threads"] = std::thread::hardware_concurrency();
  meta["omp_max_threads"] = omp_get_max_threads();
  meta["gpu"] = has_gpu ? gpu : std::string("none: ").append(gpu);
  return meta;
}

// ---------------------------------------------------------------------------------------------
// Output

std::string format_number(double value, int significant) {
  if (!std::isfinite(value)) return "-";
  char text[64];
  const double magnitude = std::abs(value);
  if (magnitude != 0 && (magnitude >= 1e7 || magnitude < 1e-3)) {
    std::snprintf(text, sizeof text, "%.*e", std::max(0, significant - 1), value);
  } else {
    // Fixed notation with `significant` digits: 12.3, 1234, 0.500, 0.0010.
    const int exponent = magnitude == 0 ? 0 : int(std::floor(std::log10(magnitude)));
    std::snprintf(text, sizeof text, "%.*f", std::max(0, significant - 1 - exponent), value);
  }
  return text;
}

std::string TextTable::str() const {
  std::vector<std::size_t> width(headers_.size(), 0);
  for (std::size_t c = 0; c < headers_.size(); ++c) width[c] = headers_[c].size();
  for (const auto& row : rows_)
    for (std::size_t c = 0; c < row.size() && c < width.size(); ++c)
      width[c] = std::max(width[c], row[c].size());
  auto numeric = [](const std::string& cell) {  // numbers and "-" (no value) align right
    char* end = nullptr;
    std::strtod(cell.c_str(), &end);
    return cell == "-" || (!cell.empty() && *end == '\0');
  };
  std::ostringstream out;
  auto line = [&](const std::vector<std::string>& cells) {
    for (std::size_t c = 0; c < width.size(); ++c) {
      const std::string cell = c < cells.size() ? cells[c] : "";
      const std::size_t pad = width[c] - cell.size();
      if (c) out << "  ";
      if (numeric(cell))
        out << std::string(pad, ' ') << cell;
      else
        out << cell << (c + 1 < width.size() ? std::string(pad, ' ') : "");
    }
    out << '\n';
  };
  std::size_t total = 0;
  for (std::size_t w : width) total += w + 2;
  line(headers_);
  out << std::string(total - 2, '-') << '\n';
  for (const auto& row : rows_) {
    if (row.empty())
      out << std::string(total - 2, '-') << '\n';
    else
      line(row);
  }
  return out.str();
}

namespace {

std::string csv_cell(const Json& value) {
  if (value.is_null()) return "";
  if (value.is_string()) {
    const std::string text = value.get<std::string>();
    if (text.find_first_of(",\"\n") == std::string::npos) return text;
    std::string quoted = "\"";
    for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    return quoted + "\"";
  }
  if (value.is_number_float() && !std::isfinite(value.get<double>())) return "";
  return value.dump();
}

}  // namespace

void write_csv(const std::string& path, const std::vector<Json>& records) {
  if (path.empty()) return;
  std::ostringstream out;
  if (!records.empty()) {
    bool first = true;
    for (const auto& [key, value] : records.front().items())
      out << (first ? "" : ",") << key, first = false;
    out << '\n';
    for (const Json& record : records) {
      first = true;
      for (const auto& [key, value] : records.front().items()) {
        out << (first ? "" : ",") << csv_cell(record.contains(key) ? record.at(key) : Json());
        first = false;
      }
      out << '\n';
    }
  }
  const std::string text = out.str();
  write_file_atomically(path,
                        [&](std::FILE* file) { std::fwrite(text.data(), 1, text.size(), file); });
}

void write_json(const std::string& path, const Json& document) {
  if (path.empty()) return;
  // NaN is not JSON; nlohmann writes it as null. `replace` keeps odd bytes in file names from
  // making the dump throw.
  const std::string text = document.dump(1, ' ', false, Json::error_handler_t::replace) + "\n";
  write_file_atomically(path,
                        [&](std::FILE* file) { std::fwrite(text.data(), 1, text.size(), file); });
}

std::string output_path(const std::string& dir, const std::string& name,
                        const std::string& explicit_path) {
  if (!explicit_path.empty()) return explicit_path;
  if (dir.empty()) return "";
  fs::create_directories(dir);
  return (fs::path(dir) / name).string();
}

void print_run_header(const std::string& program, const Json& meta,
                      const std::vector<DeviceRun>& runs, const std::string& extra) {
  std::cout << program << "  " << meta["date"].get<std::string>() << "  commit "
            << meta["commit"].get<std::string>() << "\nCPU: " << meta["cpu"].get<std::string>()
            << " (" << meta["cpu_hardware_threads"].get<int>()
            << " hardware threads)\nGPU: " << meta["gpu"].get<std::string>() << '\n';
  if (!extra.empty()) std::cout << extra << '\n';
  for (const DeviceRun& d : runs)
    std::cout << "copy bandwidth " << d.label() << ": " << format_number(d.copy_bandwidth / 1e9)
              << " GB/s\n";
  std::cout << '\n';
}

int guarded_main(const char* program, int (*run)(int, char**), int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const InputError& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
    return 2;
  } catch (const DeviceError& e) {
    std::fprintf(stderr, "%s: GPU: %s\n", program, e.what());
    return 4;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
    return 3;
  }
}

}  // namespace cgs::bench
