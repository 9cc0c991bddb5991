#include "solver/precond/amg_options.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace cgs::precond {
namespace {

// `value` as the whole text of an integer or a real; false when it is not.
bool parse_number(const std::string& value, int& v) {
  const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  return ec == std::errc() && ptr == value.data() + value.size();
}
bool parse_number(const std::string& value, double& v) {
  char* end = nullptr;
  v = value.empty() ? NAN : std::strtod(value.c_str(), &end);
  return end == value.c_str() + value.size();
}
// What a value of the range must be, for the error.
std::string range_rule(int low, int high) {
  return "an integer in " + std::to_string(low) + ".." + std::to_string(high);
}
std::string range_rule(double low, double high) {
  return "a number in [" + std::to_string(low) + ", " + std::to_string(high) + "]";
}

// A number field in [low, high] (a NaN is in no range).
template <typename V>
AmgKey number_key(const char* name, V low, V high, V& (*field)(AmgOptions&), const char* help) {
  const auto set = [=](AmgOptions& o, const std::string& value) -> std::string {
    V v{};
    if (!parse_number(value, v) || !(v >= low && v <= high))
      return std::string(name) + " must be " + range_rule(low, high) + " (got '" + value + "')";
    field(o) = v;
    return "";
  };
  const auto show = [=](const AmgOptions& o) {
    AmgOptions copy = o;
    std::ostringstream text;
    text << field(copy);
    return text.str();
  };
  std::ostringstream values;
  values << low << ".." << high;
  return {name, values.str(), help, set, show};
}

// A word among `choices`, each setting the fields its own way.
struct Choice {
  const char* word;
  void (*apply)(AmgOptions&);
};
AmgKey choice_key(const char* name, std::vector<Choice> choices,
                  std::string (*show)(const AmgOptions&), const char* help) {
  std::string values, listed;  // "a|b|c", and "a, b or c" for the error
  for (std::size_t c = 0; c < choices.size(); ++c) {
    values += (c ? "|" : "") + std::string(choices[c].word);
    listed += (c == 0                    ? ""
               : c + 1 == choices.size() ? " or "
                                         : ", ") +
              std::string(choices[c].word);
  }
  const auto set = [=](AmgOptions& o, const std::string& value) -> std::string {
    for (const Choice& c : choices)
      if (value == c.word) {
        c.apply(o);
        return "";
      }
    return std::string(name) + " must be " + listed + " (got '" + value + "')";
  };
  return {name, values, help, set, show};
}

std::string shown_smoother(const AmgOptions& o) {
  return o.smoother == Smoother::chebyshev ? "cheb" : "jacobi";
}
std::string shown_aggregation(const AmgOptions& o) {
  const amg::HierarchyOptions& h = o.hierarchy;
  return h.device_aggregation ? "device" : h.mis2 ? "mis2" : h.blocked ? "blocks" : "greedy";
}
std::string shown_spectrum(const AmgOptions& o) {
  return o.hierarchy.gershgorin_damping ? "gershgorin" : "lanczos";
}

// A file name (or a generator spec), stored as given; read at the set-up.
AmgKey text_key(const char* name, std::string AmgOptions::*field, const char* values,
                const char* help) {
  const auto set = [=](AmgOptions& o, const std::string& value) -> std::string {
    if (value.empty()) return std::string(name) + " needs a file name (or none)";
    o.*field = value == "none" ? "" : value;
    return "";
  };
  const auto show = [=](const AmgOptions& o) { return (o.*field).empty() ? "none" : o.*field; };
  return {name, values, help, set, show};
}

std::vector<AmgKey> make_keys() {
  std::vector<AmgKey> keys = {
      number_key<int>(
          "levels", 1, 20, [](AmgOptions& o) -> int& { return o.hierarchy.max_levels; },
          "levels at most, the finest included"),
      choice_key("smoother",
                 {{"cheb", [](AmgOptions& o) { o.smoother = Smoother::chebyshev; }},
                  {"jacobi", [](AmgOptions& o) { o.smoother = Smoother::jacobi; }}},
                 &shown_smoother,
                 "Chebyshev on [g/4, g], g D^-1 A's Gershgorin bound, or Jacobi damped by 4/(3g)"),
      number_key<int>(
          "sweeps", 1, 8, [](AmgOptions& o) -> int& { return o.sweeps; },
          "the smoother's degree, or its steps, before and after each coarse correction"),
      number_key<double>(
          "theta", 0, 1, [](AmgOptions& o) -> double& { return o.hierarchy.theta; },
          "strength threshold on the finest level: |a_ij| >= theta sqrt(|a_ii a_jj|) is strong"),
      number_key<double>(
          "theta_decay", 0, 1, [](AmgOptions& o) -> double& { return o.hierarchy.theta_decay; },
          "level l's threshold is theta * theta_decay^l (BENCHMARKS.md §20c)"),
      number_key<int>(
          "coarse", 1, 4000, [](AmgOptions& o) -> int& { return o.hierarchy.coarse; },
          "stop coarsening at this many rows or fewer"),
      choice_key("aggregation",
                 {{"greedy", [](AmgOptions& o) { o.hierarchy.mis2 = o.hierarchy.blocked = false; }},
                  {"host", [](AmgOptions& o) { o.hierarchy.mis2 = o.hierarchy.blocked = false; }},
                  {"blocks",
                   [](AmgOptions& o) {
                     o.hierarchy.mis2 = false;
                     o.hierarchy.blocked = true;
                   }},
                  {"mis2",
                   [](AmgOptions& o) {
                     o.hierarchy.mis2 = true;
                     o.hierarchy.blocked = false;
                   }},
                  {"device", [](AmgOptions& o) { o.hierarchy.device_aggregation = true; }}},
                 &shown_aggregation,
                 "Vanek's greedy (host: the same), the greedy by row blocks on every core, "
                 "MIS(2), or MIS(2) on the GPU (BENCHMARKS.md §20e, §20f)"),
      choice_key("spectrum",
                 {{"lanczos", [](AmgOptions& o) { o.hierarchy.gershgorin_damping = false; }},
                  {"gershgorin", [](AmgOptions& o) { o.hierarchy.gershgorin_damping = true; }}},
                 &shown_spectrum,
                 "P's damping from a Lanczos estimate of rho(D_F^-1 A_F), or from Gershgorin's "
                 "bound (BENCHMARKS.md §20h)"),
      number_key<int>(
          "coarse_lanczos", 0, 50,
          [](AmgOptions& o) -> int& { return o.hierarchy.coarse_lanczos_steps; },
          "Lanczos steps for P's damping below the finest level (0: Gershgorin's bound)"),
  };
  keys.back().show = [](const AmgOptions& o) {
    return o.hierarchy.coarse_lanczos_steps < 0
               ? "as on the finest, " + std::to_string(o.hierarchy.lanczos_steps)
               : std::to_string(o.hierarchy.coarse_lanczos_steps);
  };
  keys.push_back(text_key("nullspace", &AmgOptions::nullspace_file, "FILE",
                          "near-nullspace, n x k dense Matrix Market: T from each aggregate's "
                          "QR (set-up on the host)"));
  keys.push_back(text_key("coords", &AmgOptions::coords, "FILE|gen:elasticity3d:M",
                          "node coordinates, n/d x d (d = 2, 3): the rigid-body modes (3, 6) "
                          "as the near-nullspace"));
  keys.push_back(number_key<int>(
      "block", 0, 64, [](AmgOptions& o) -> int& { return o.block; },
      "rows a node, aggregated together (0: 1, or d with coords); alone: the block's "
      "translations as the near-nullspace"));
  return keys;
}

// The error: what is wrong, where, and every key with what it takes.
[[noreturn]] void bad_option(const PrecondSpec& spec, const std::string& why) {
  std::string known;
  for (const AmgKey& k : amg_keys())
    known += (known.empty() ? "" : ", ") + std::string(k.name) + "=" + k.values;
  throw InputError("amg: " + why + " in '" + spec.text() + "' (options: " + known +
                   ", comma-separated)");
}

}  // namespace

const std::vector<AmgKey>& amg_keys() {
  static const std::vector<AmgKey> keys = make_keys();
  return keys;
}

AmgOptions parse_amg_options(const PrecondSpec& spec) {
  AmgOptions o;
  std::stringstream items(spec.argument);
  for (std::string item; std::getline(items, item, ',');) {
    const auto eq = item.find('=');
    if (eq == std::string::npos) bad_option(spec, "'" + item + "' is not key=value");
    const std::string name = item.substr(0, eq), value = item.substr(eq + 1);
    const AmgKey* key = nullptr;
    for (const AmgKey& k : amg_keys())
      if (name == k.name) key = &k;
    if (!key) bad_option(spec, "unknown option '" + name + "'");
    const std::string why = key->set(o, value);
    if (!why.empty()) bad_option(spec, why);
  }
  if (!spec.argument.empty() && spec.argument.back() == ',') bad_option(spec, "a trailing ','");
  const amg::HierarchyOptions& h = o.hierarchy;
  if (o.has_nullspace() && (h.device_aggregation || h.blocked))
    bad_option(spec, "aggregation=" + shown_aggregation(o) +
                         " takes no near-nullspace (nullspace, coords, block: greedy or mis2)");
  return o;
}

std::string amg_options_help() {
  const AmgOptions defaults;
  std::string text = "amg[:key=value,...], each key with what it takes [its default]:\n";
  for (const AmgKey& k : amg_keys())
    text += "  " + std::string(k.name) + "=" + k.values + " [" + k.show(defaults) + "]\n      " +
            k.help + "\n";
  return text;
}

}  // namespace cgs::precond
