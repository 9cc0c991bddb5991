// Shared by the batched-study tests (tests/network/test_batch_study.cpp on the CPU batch CG,
// tests/gpu/test_gpu_study.cpp on the GPU): study options as netsolve sets them, the CG solver
// of netsolve --solver cg, the study CSV as text, and rows compared with another study's.
#pragma once

#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "network/inp_reader.hpp"
#include "network/study.hpp"
#include "network_test_data.hpp"

namespace cgs::net::test {

// A study the engines' tests run: a network, the options, a name for the failure messages, and
// whether its demands are pressure-driven (PDA, a required pressure of 20 in the file's units).
struct StudyCase {
  std::string network;
  StudyOptions options;
  std::string what;
  bool pda = false;
};

// The case's network as read, PDA set where the case asks.
inline Network case_network(const StudyCase& c) {
  Network net = read_inp(c.network);
  if (c.pda) {
    net.options.demand.model = DemandModel::pda;
    net.options.demand.required_pressure = 20;
  }
  return net;
}

inline StudyOptions study_options(StudyKind kind, long duration = 0, int threads = 2) {
  StudyOptions o;
  o.spec.kind = kind;
  o.duration = duration;
  o.run.threads = threads;
  o.fire_flow = 1000.0 / 448.831;  // 1000 gpm in cfs (Net1 and Net3 are in GPM)
  o.pressure_threshold = 20;
  return o;
}

// netsolve --solver cg's request: the scaled system to 1e-12, its iteration limit, one thread.
inline SolveRequest network_cg() {
  SolveRequest r;
  r.cg.tol = 1e-12;
  r.cg.max_iters = 200000;
  r.backend.threads = 1;
  return r;
}

inline std::string study_csv_text(const Network& net, const StudyResults& r,
                                  const StudyOptions& o) {
  const std::filesystem::path path = std::filesystem::temp_directory_path() /
                                     ("batch-study-test-" + std::to_string(::getpid()) + ".csv");
  write_study_csv(path.string(), net, r, o);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::filesystem::remove(path);
  return text.str();
}

inline bool close_to(double value, double reference, double tol) {
  return std::abs(value - reference) <= tol * std::max(1.0, std::abs(reference));
}

// Row by row: the same scenarios, ok flags and cut-off counts; where no junction was cut off
// (pressures there are set by closed links' 1e-8 couplings, not by the network: test_study.cpp),
// the lowest junction and the pressures to tol (relative above 1). Returns the rows compared.
inline int check_same_rows(const Network& net, StudyKind kind, const StudyResults& got,
                           const StudyResults& want, double tol = 1e-3) {
  REQUIRE(got.scenarios.size() == want.scenarios.size());
  int compared = 0;
  for (std::size_t i = 0; i < got.scenarios.size(); ++i) {
    const ScenarioResult &g = got.scenarios[i], &w = want.scenarios[i];
    CAPTURE(study_element_name(net, kind, w));
    REQUIRE(g.element == w.element);
    CHECK(g.ok == w.ok);
    CHECK(g.cut_off == w.cut_off);
    if (!w.ok || w.cut_off > 0) continue;
    ++compared;
    CHECK(g.min_node == w.min_node);
    CHECK(close_to(g.min_pressure, w.min_pressure, tol));
    if (kind == StudyKind::fireflow) CHECK(close_to(g.element_pressure, w.element_pressure, tol));
  }
  return compared;
}

}  // namespace cgs::net::test
