// The tuning fields, their variables and options, in one table (see tuning.hpp).
#include "base/tuning.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace cgs {
namespace {

bool is(const char* text, const char* word) { return std::strcmp(text, word) == 0; }
std::string on_off(bool on) { return on ? "on" : "off"; }
std::string real_text(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

// One row of the table: how a variable's text sets the field (each keeps the parse its reader
// had before it moved here), and the field's value as text.
struct Row {
  const char* name;
  const char* variable;
  const char* option;
  TuningField::Kind kind;
  void (*read)(Tuning&, const char*);
  std::string (*text)(const Tuning&);
};

using K = TuningField::Kind;
const Row kRows[] = {
    {"device_pool", "CGSOLVE_DEVICE_POOL", "--device-pool", K::flag,
     [](Tuning& t, const char* v) { t.device_pool = v[0] != '0'; },
     [](const Tuning& t) { return on_off(t.device_pool); }},
    {"device_tally", "CGSOLVE_DEVICE_TALLY", "--device-tally", K::integer,
     [](Tuning& t, const char* v) { t.device_tally = !*v || *v == '0' ? 0
                                                     : is(v, "2")     ? 2
                                                                      : 1; },
     [](const Tuning& t) { return std::to_string(t.device_tally); }},
    {"huge_pages", "CGSOLVE_HUGE_PAGES", "--huge-pages", K::flag,
     [](Tuning& t, const char* v) { t.huge_pages = v[0] != '0'; },
     [](const Tuning& t) { return on_off(t.huge_pages); }},
    {"gpu_transport", "CGSOLVE_GPU_TRANSPORT", "--gpu-transport", K::choice,
     [](Tuning& t, const char* v) {
       t.gpu_transport = is(v, "mpi") ? GpuTransport::mpi : GpuTransport::nccl;
     },
     [](const Tuning& t) { return to_string(t.gpu_transport); }},
    {"cluster_phases", "CGSOLVE_CLUSTER_PHASES", "", K::flag,
     [](Tuning& t, const char* v) { t.cluster_phases = *v && *v != '0'; },
     [](const Tuning& t) { return on_off(t.cluster_phases); }},
    {"cluster_lean", "CGSOLVE_CLUSTER_LEAN", "", K::flag,
     [](Tuning& t, const char* v) { t.cluster_lean = !is(v, "0"); },
     [](const Tuning& t) { return on_off(t.cluster_lean); }},
    {"cluster_reductions", "CGSOLVE_CLUSTER_REDUCTIONS", "", K::integer,
     [](Tuning& t, const char* v) { t.cluster_reductions = is(v, "1") ? 1 : 2; },
     [](const Tuning& t) { return std::to_string(t.cluster_reductions); }},
    {"cluster_replacement_slack", "CGSOLVE_CLUSTER_REPLACEMENT_SLACK", "", K::real,
     [](Tuning& t, const char* v) {
       if (*v) t.cluster_replacement_slack = std::atof(v);
     },
     [](const Tuning& t) { return real_text(t.cluster_replacement_slack); }},
    {"cluster_threads", "CGSOLVE_CLUSTER_THREADS", "", K::integer,
     [](Tuning& t, const char* v) { t.cluster_threads = std::atoi(v); },
     [](const Tuning& t) { return std::to_string(t.cluster_threads); }},
    {"cluster_blocks", "CGSOLVE_CLUSTER_BLOCKS", "", K::integer,
     [](Tuning& t, const char* v) { t.cluster_blocks = std::atoi(v); },
     [](const Tuning& t) { return std::to_string(t.cluster_blocks); }},
    {"cluster_sweeps", "CGSOLVE_CLUSTER_SWEEPS", "", K::flag,
     [](Tuning& t, const char* v) { t.cluster_sweeps = !is(v, "0"); },
     [](const Tuning& t) { return on_off(t.cluster_sweeps); }},
    {"gpu_sweep_span", "CGSOLVE_GPU_SWEEP_SPAN", "", K::integer,
     [](Tuning& t, const char* v) { t.gpu_sweep_span = std::atoi(v); },
     [](const Tuning& t) { return std::to_string(t.gpu_sweep_span); }},
    {"amg_galerkin", "CGSOLVE_AMG_GALERKIN", "", K::choice,
     [](Tuning& t, const char* v) {
       t.amg_galerkin = is(v, "cusparse") ? AmgGalerkin::cusparse : AmgGalerkin::project;
     },
     [](const Tuning& t) { return to_string(t.amg_galerkin); }},
    {"ic0_team", "CGSOLVE_IC0_TEAM", "", K::integer,
     [](Tuning& t, const char* v) { t.ic0_team = std::atoi(v); },
     [](const Tuning& t) { return std::to_string(t.ic0_team); }},
    {"ic0_device_rows", "CGSOLVE_IC0_DEVICE_ROWS", "", K::integer,
     [](Tuning& t, const char* v) { t.ic0_device_rows = std::atol(v); },
     [](const Tuning& t) { return std::to_string(t.ic0_device_rows); }},
    {"test_perturb_x", "CGSOLVE_TEST_PERTURB_X", "", K::real,
     [](Tuning& t, const char* v) { t.test_perturb_x = std::atof(v); },
     [](const Tuning& t) { return real_text(t.test_perturb_x); }},
    {"netsolve_debug", "NETSOLVE_DEBUG", "", K::flag,
     [](Tuning& t, const char* v) { t.netsolve_debug = !is(v, "0"); },
     [](const Tuning& t) { return on_off(t.netsolve_debug); }},
};

Tuning& current() {
  static Tuning t = tuning_from_environment();
  return t;
}

}  // namespace

const Tuning& tuning() { return current(); }

void set_tuning(const Tuning& t) { current() = t; }

Tuning tuning_from_environment() {
  Tuning t;
  for (const Row& row : kRows)
    if (const char* value = std::getenv(row.variable)) row.read(t, value);
  return t;
}

std::vector<TuningField> tuning_fields(const Tuning& t) {
  const Tuning defaults;
  std::vector<TuningField> fields;
  for (const Row& row : kRows)
    fields.push_back(
        {row.name, row.variable, row.option, row.text(t), row.text(defaults), row.kind});
  return fields;
}

std::vector<std::string> tuning_differences(const Tuning& t) {
  std::vector<std::string> lines;
  for (const TuningField& f : tuning_fields(t))
    if (f.differs())
      lines.push_back("tuning: " + f.name + " = " + f.value + " (default " + f.default_value +
                      "; " + (f.option.empty() ? f.variable : f.option + " or " + f.variable) +
                      ")");
  return lines;
}

std::string to_string(GpuTransport t) {
  switch (t) {
    case GpuTransport::automatic: return "auto";
    case GpuTransport::nccl: return "nccl";
    case GpuTransport::mpi: return "mpi";
  }
  return "?";
}

std::string to_string(AmgGalerkin g) { return g == AmgGalerkin::cusparse ? "cusparse" : "project"; }

}  // namespace cgs
