#include "solver/precond/preconditioner.hpp"

#include <chrono>
#include <utility>

namespace cgs {

double PrecondReport::total_seconds() const {
  double total = 0;
  for (const auto& [phase, s] : seconds) total += s;
  return total;
}

void PrecondReport::add_time(const std::string& phase, double s) {
  for (auto& [p, t] : seconds)
    if (p == phase) {
      t += s;
      return;
    }
  seconds.emplace_back(phase, s);
}

void PrecondReport::set_fact(const std::string& key, const std::string& value) {
  for (auto& [k, v] : facts)
    if (k == key) {
      v = value;
      return;
    }
  facts.emplace_back(key, value);
}

void PrecondReport::set_table(PrecondTable table) {
  for (PrecondTable& t : tables)
    if (t.name == table.name) {
      t = std::move(table);
      return;
    }
  tables.push_back(std::move(table));
}

PrecondSpec parse_precond(const std::string& text) {
  PrecondSpec spec;
  const auto colon = text.find(':');
  spec.name = text.substr(0, colon);
  if (colon != std::string::npos) {
    spec.argument = text.substr(colon + 1);
    if (spec.argument.empty())
      throw InputError("'" + text + "': nothing after the ':' (leave it out for the default)");
  }
  if (spec.name != "auto") find_preconditioner(spec.name);  // InputError if unknown
  return spec;
}

const PrecondEntry& find_preconditioner(const std::string& name) {
  for (const PrecondEntry& e : preconditioners())
    if (name == e.name) return e;
  throw InputError("unknown preconditioner '" + name + "' (expected " + preconditioner_names() +
                   " or auto)");
}

std::string preconditioner_names() {
  std::string names;
  for (const PrecondEntry& e : preconditioners())
    names += (names.empty() ? "" : ", ") + std::string(e.name);
  return names;
}

namespace {

// "name[:syntax]" and the argument's meaning, from an entry's "syntax: meaning" (the name alone
// where it takes no argument).
std::pair<std::string, std::string> usage(const PrecondEntry& e) {
  const std::string argument = e.argument;
  if (argument.empty()) return {e.name, ""};
  const auto colon = argument.find(": ");
  return {std::string(e.name) + "[:" + argument.substr(0, colon) + "]", argument.substr(colon + 2)};
}

}  // namespace

std::string preconditioner_list() {
  std::string text;
  for (const PrecondEntry& e : preconditioners()) {
    const auto [syntax, meaning] = usage(e);
    text += syntax + ": " + e.what + (meaning.empty() ? "" : "; " + meaning) + "\n";
  }
  return text;
}

std::string preconditioner_help(const std::string& name) {
  const PrecondEntry& e = find_preconditioner(name);
  const auto [syntax, meaning] = usage(e);
  std::string text = std::string(e.name) + ": " + e.what + "\n";
  if (e.options)
    text += e.options();
  else if (!meaning.empty())
    text += syntax + ": " + meaning + "\n";
  return text;
}

template <typename T>
std::unique_ptr<Preconditioner<T>> make_preconditioner(const PrecondSpec& spec, Device device,
                                                       int threads) {
  const PrecondEntry& entry = find_preconditioner(spec.name);
  if constexpr (std::is_same_v<T, float>)
    return entry.make_float(spec, device, threads);
  else
    return entry.make_double(spec, device, threads);
}

template std::unique_ptr<Preconditioner<float>> make_preconditioner(const PrecondSpec&, Device,
                                                                    int);
template std::unique_ptr<Preconditioner<double>> make_preconditioner(const PrecondSpec&, Device,
                                                                     int);

namespace {
using Clock = std::chrono::steady_clock;
// Whether the operations' scalar coefficients are those already placed (Chebyshev's change
// with the spectrum at set_values; the others' never do).
bool same_coefficients(const std::vector<precond::OpSpec>& a,
                       const std::vector<precond::OpSpec>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].alpha != b[i].alpha || a[i].beta != b[i].beta || a[i].gamma != b[i].gamma)
      return false;
  return true;
}
double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}
}  // namespace

template <typename T>
Preconditioner<T>::Preconditioner(Device device, int threads, bool pointwise)
    : device_(device), threads_(threads), pointwise_(pointwise) {}

template <typename T>
Preconditioner<T>::~Preconditioner() = default;

template <typename T>
void Preconditioner<T>::analyze(const CsrMatrix<double>& A) {
  report_.name = name();
  const auto start = Clock::now();
  analyze_pattern(A);
  report_.add_time("analyze", since(start));
  placed_ = false;
  spec_ = {};
  set_values(A);
}

template <typename T>
void Preconditioner<T>::set_values(const CsrMatrix<double>& A) {
  auto start = Clock::now();
  if (pointwise_) {
    const std::vector<T> d = pointwise_diagonal(A);
    if (d.empty()) {
      diagonal_ = {};
    } else if (diagonal_.size() == d.size()) {
      diagonal_.upload(d);
    } else {
      diagonal_ = DeviceBuffer<T>(device_, d, "the preconditioner's diagonal");
    }
    report_.add_time("values", since(start));
    return;
  }
  compute_values(A, spec_);
  report_.add_time("values", since(start));
  start = Clock::now();
  if (placed_ && !same_coefficients(spec_.ops, placed_ops_)) placed_ = false;
  if (!placed_) {
    place();
  } else if (host_) {
    host_->update_values(spec_);
  } else {
    gpu_->update_values(spec_);
  }
  report_.add_time("upload", since(start));
}

template <typename T>
void Preconditioner<T>::place() {
  placed_ops_ = spec_.ops;
  host_.reset();
  gpu_.reset();
  if (device_ == Device::gpu)
    gpu_ = precond::make_device_program(spec_);
  else
    host_ = std::make_unique<precond::HostProgram<T>>(spec_);
  placed_ = true;
  bound_r_ = nullptr;
  bound_z_ = nullptr;
  report_.set_fact("operations per apply", std::to_string(spec_.ops.size()));
  if (gpu_) report_.set_fact("GPU apply", gpu_->view().apply_launch);
  if (gpu_ && !gpu_->view().sweep_fact.empty())
    report_.set_fact("GPU sweeps", gpu_->view().sweep_fact);
}

template <typename T>
int Preconditioner<T>::program_size() const {
  if (host_) return host_->size();
  if (gpu_) return gpu_->view().size();
  return 0;
}

template <typename T>
void Preconditioner<T>::bind(const T* r, T* z) {
  if (pointwise_ || (r == bound_r_ && z == bound_z_)) return;
  if (host_)
    host_->bind(r, z);
  else
    gpu_->bind(r, z);
  bound_r_ = r;
  bound_z_ = z;
}

template <typename T>
void Preconditioner<T>::apply(const T* r, T* z) {
  if (pointwise_)
    throw std::logic_error("apply() of a pointwise preconditioner: the loops fuse it");
  bind(r, z);
  if (host_)
    host_->apply(device_ == Device::serial ? 1 : threads_);
  else
    gpu_->apply();
}

template class Preconditioner<float>;
template class Preconditioner<double>;

}  // namespace cgs
