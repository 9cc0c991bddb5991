// Helpers for the small hand-built networks whose answers the tests work out independently of the
// solver: textbook head-loss formulas in SI (not EPANET's US-unit constants), an .inp text solved
// with the independent direct solver of direct_solver.hpp, results in the file's units.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <sstream>
#include <string>

#include "direct_solver.hpp"
#include "network/hydraulics.hpp"
#include "network/inp_reader.hpp"
#include "network/results_io.hpp"

namespace cgs::net::test {

inline constexpr double kPi = 3.14159265358979323846;
inline constexpr double kG = 9.80665;

struct Solved {
  Network net;
  HydraulicResults r;
  double head(const std::string& id) const { return user_head(net, r.head[net.find_node(id)]); }
  double flow(const std::string& id) const { return user_flow(net, r.flow[net.find_link(id)]); }
  LinkStatus status(const std::string& id) const { return r.status[net.find_link(id)]; }
};

inline Solved solve_text(const std::string& text) {
  std::istringstream in(text);
  Solved s{parse_inp(in, "test.inp"), {}};
  DirectSolver solver;
  s.r = solve_hydraulics(s.net, solver);
  CAPTURE(text);
  REQUIRE(s.r.error.empty());
  REQUIRE(s.r.converged);
  return s;
}

inline std::string options(const std::string& headloss) {
  return "[OPTIONS]\nUNITS LPS\nHEADLOSS " + headloss + "\nACCURACY 1e-8\nTRIALS 100\n";
}

// Hazen-Williams in SI: h = 10.67 L Q^1.852 / (C^1.852 D^4.871), Q in m3/s (here from LPS).
inline double hazen_williams_m(double L, double D, double C, double q_lps) {
  return 10.67 * L * std::pow(q_lps / 1000.0, 1.852) / std::pow(C, 1.852) / std::pow(D, 4.871);
}

// A minor loss K v^2 / 2g (m) in a pipe of diameter D (m) at q LPS.
inline double minor_loss_m(double K, double D, double q_lps) {
  const double v = q_lps / 1000.0 / (kPi * D * D / 4.0);
  return K * v * v / (2.0 * kG);
}

// The root of a function that changes sign on [low, high], by bisection.
inline double bisect(const std::function<double(double)>& f, double low, double high) {
  double f_low = f(low);
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (low + high);
    const double f_mid = f(mid);
    if ((f_mid < 0) == (f_low < 0))
      low = mid, f_low = f_mid;
    else
      high = mid;
  }
  return 0.5 * (low + high);
}

// EPANET's curve for a pump given one point (q1, h1): the power function through (0, 4/3 h1)
// (EPANET's 1.33334), (q1, h1) and (2 q1, 0). Head gain (m) at q (LPS).
inline double one_point_pump_gain(double q1, double h1, double q) {
  const double h0 = 1.33334 * h1;
  const double n = std::log(h0 / (h0 - h1)) / std::log(2.0);
  const double r = (h0 - h1) / std::pow(q1, n);
  return h0 - r * std::pow(q, n);
}

}  // namespace cgs::net::test
