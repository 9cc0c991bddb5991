// Small networks whose answers are worked out here, independently of the solver: textbook
// head-loss formulas (SI forms, not EPANET's US-unit constants), continuity and energy balances.
#include <doctest/doctest.h>

#include <cmath>

#include "hand_built.hpp"

namespace cgs::net {
namespace {

using test::hazen_williams_m;
using test::kG;
using test::kPi;
using test::options;
using test::solve_text;

TEST_CASE("one reservoir, one pipe, one junction (Hazen-Williams)") {
  const auto s = solve_text(options("H-W") +
                            "[RESERVOIRS]\nR 100\n[JUNCTIONS]\nJ 20 30\n"
                            "[PIPES]\nP R J 1000 300 120\n[END]\n");
  CHECK(s.flow("P") == doctest::Approx(30).epsilon(1e-9));
  const double expected = 100 - hazen_williams_m(1000, 0.3, 120, 30);
  CHECK(s.head("J") == doctest::Approx(expected).epsilon(1e-5));
  CHECK(s.head("R") == doctest::Approx(100));
}

TEST_CASE("pipes in series and in parallel") {
  const auto series = solve_text(options("H-W") +
                                 "[RESERVOIRS]\nR 100\n[JUNCTIONS]\nA 10 5\nB 10 20\n"
                                 "[PIPES]\nP1 R A 500 300 100\nP2 A B 800 200 110\n");
  CHECK(series.flow("P1") == doctest::Approx(25).epsilon(1e-9));
  CHECK(series.flow("P2") == doctest::Approx(20).epsilon(1e-9));
  const double hA = 100 - hazen_williams_m(500, 0.3, 100, 25);
  CHECK(series.head("A") == doctest::Approx(hA).epsilon(1e-5));
  CHECK(series.head("B") ==
        doctest::Approx(hA - hazen_williams_m(800, 0.2, 110, 20)).epsilon(1e-5));

  // Parallel: equal head loss h in both; Q_i = (h / r_i)^(1/1.852) with r_i the SI resistance.
  const auto parallel = solve_text(options("H-W") +
                                   "[RESERVOIRS]\nR 100\n[JUNCTIONS]\nJ 0 50\n"
                                   "[PIPES]\nP1 R J 1000 250 100\nP2 R J 600 150 130\n");
  const double r1 = hazen_williams_m(1000, 0.25, 100, 1000);  // h = r Q^1.852, Q in m3/s
  const double r2 = hazen_williams_m(600, 0.15, 130, 1000);
  // sum (h/r_i)^(1/n) = Q  ->  h = (Q / sum r_i^(-1/n))^n, Q in m3/s
  const double n = 1.852;
  const double h = std::pow(0.05 / (std::pow(r1, -1 / n) + std::pow(r2, -1 / n)), n);
  CHECK(100 - parallel.head("J") == doctest::Approx(h).epsilon(1e-3));
  CHECK(parallel.flow("P1") == doctest::Approx(1000 * std::pow(h / r1, 1 / n)).epsilon(1e-4));
  CHECK(parallel.flow("P1") + parallel.flow("P2") == doctest::Approx(50).epsilon(1e-9));
}

TEST_CASE("a loop balances continuity and energy") {
  const auto s = solve_text(options("H-W") +
                            "[RESERVOIRS]\nR 80\n[JUNCTIONS]\nA 0 10\nB 0 15\nC 0 20\nD 0 5\n"
                            "[PIPES]\nP0 R A 100 400 120\nAB A B 400 200 100\nBC B C 300 150 100\n"
                            "CD C D 500 200 100\nDA D A 350 250 100\nBD B D 450 100 100\n");
  // Continuity at every junction (demands in LPS).
  CHECK(s.flow("P0") - s.flow("AB") + s.flow("DA") == doctest::Approx(10).epsilon(1e-7));
  CHECK(s.flow("AB") - s.flow("BC") - s.flow("BD") == doctest::Approx(15).epsilon(1e-7));
  CHECK(s.flow("BC") - s.flow("CD") == doctest::Approx(20).epsilon(1e-7));
  CHECK(s.flow("CD") + s.flow("BD") - s.flow("DA") == doctest::Approx(5).epsilon(1e-7));
  // Energy: head losses around the loop A-B-C-D-A sum to zero, each given by Hazen-Williams.
  auto loss = [&](const char* id, double L, double D) {
    const double q = s.flow(id);
    return (q >= 0 ? 1 : -1) * hazen_williams_m(L, D, 100, std::abs(q));
  };
  const double around =
      loss("AB", 400, 0.2) + loss("BC", 300, 0.15) + loss("CD", 500, 0.2) + loss("DA", 350, 0.25);
  CHECK(std::abs(around) < 1e-4);
  // 10.67 is the rounded SI constant; EPANET's 4.727 (US units) converts to 10.668.
  CHECK(s.head("A") - s.head("B") == doctest::Approx(loss("AB", 400, 0.2)).epsilon(1e-3));
}

// Swamee-Jain friction factor (turbulent) and 64/Re (laminar), SI.
double darcy_weisbach_m(double L, double D, double eps_mm, double q_lps) {
  const double nu = 1.1e-5 * 0.3048 * 0.3048;  // EPANET's water at 20 C, m2/s
  const double area = kPi * D * D / 4, v = q_lps / 1000 / area, re = v * D / nu;
  double f;
  if (re < 2000)
    f = 64 / re;
  else
    f = 0.25 / std::pow(std::log10(eps_mm / 1000 / (3.7 * D) + 5.74 / std::pow(re, 0.9)), 2);
  return f * L / D * v * v / (2 * kG);
}

TEST_CASE("each head-loss formula against its textbook form") {
  SUBCASE("Darcy-Weisbach, turbulent") {
    const auto s = solve_text(options("D-W") +
                              "[RESERVOIRS]\nR 50\n[JUNCTIONS]\nJ 0 40\n"
                              "[PIPES]\nP R J 1000 200 0.5\n");
    CHECK(50 - s.head("J") == doctest::Approx(darcy_weisbach_m(1000, 0.2, 0.5, 40)).epsilon(2e-3));
  }
  SUBCASE("Darcy-Weisbach, laminar") {
    const auto s = solve_text(options("D-W") +
                              "[RESERVOIRS]\nR 50\n[JUNCTIONS]\nJ 0 0.001\n"
                              "[PIPES]\nP R J 100 50 0.1\n");
    CHECK(50 - s.head("J") ==
          doctest::Approx(darcy_weisbach_m(100, 0.05, 0.1, 0.001)).epsilon(1e-3));
  }
  SUBCASE("Chezy-Manning") {
    const auto s = solve_text(options("C-M") +
                              "[RESERVOIRS]\nR 50\n[JUNCTIONS]\nJ 0 40\n"
                              "[PIPES]\nP R J 1000 200 0.011\n");
    // Manning, SI: h = L (n Q)^2 / (A^2 R^(4/3)), R = D / 4.
    const double area = kPi * 0.04 / 4, q = 0.04;
    const double expected = 1000 * std::pow(0.011 * q, 2) / (area * area * std::pow(0.05, 4.0 / 3));
    // EPANET uses 1.49 for Manning's 1.486 (ft^(1/3)/s, head losses 0.54% lower than exact) and
    // 1.333 for 4/3 (0.06% lower here).
    CHECK(50 - s.head("J") == doctest::Approx(expected * std::pow(1.486 / 1.49, 2)).epsilon(1e-3));
  }
  SUBCASE("minor loss adds K v^2 / 2g") {
    const auto s = solve_text(options("H-W") +
                              "[RESERVOIRS]\nR 50\n[JUNCTIONS]\nJ 0 40\n"
                              "[PIPES]\nP R J 1000 200 100 10\n");
    const double v = 0.04 / (kPi * 0.04 / 4);
    CHECK(50 - s.head("J") ==
          doctest::Approx(hazen_williams_m(1000, 0.2, 100, 40) + 10 * v * v / (2 * kG))
              .epsilon(1e-3));
  }
}

TEST_CASE("pumps, valves, closed links and check valves") {
  SUBCASE("a one-point pump curve delivers its design head at its design flow") {
    const auto s = solve_text(options("H-W") +
                              "[RESERVOIRS]\nR 0\n[JUNCTIONS]\nJ 0 30\n"
                              "[PUMPS]\nPU R J HEAD C1\n[CURVES]\nC1 30 45\n");
    CHECK(s.head("J") == doctest::Approx(45).epsilon(1e-6));
    CHECK(s.flow("PU") == doctest::Approx(30).epsilon(1e-9));
  }
  SUBCASE("an active PRV holds its downstream pressure") {
    const auto s = solve_text(options("H-W") +
                              "[RESERVOIRS]\nR 100\n[JUNCTIONS]\nA 0 0\nB 10 20\n"
                              "[PIPES]\nP1 R A 100 300 120\nP2 B C 100 300 120\n"
                              "[JUNCTIONS]\nC 5 5\n[VALVES]\nV A B 300 PRV 30\n");
    CHECK(s.head("B") == doctest::Approx(40).epsilon(1e-6));
    CHECK(s.flow("V") == doctest::Approx(25).epsilon(1e-9));
  }
  SUBCASE("an active FCV passes its setting") {
    const auto s = solve_text(options("H-W") +
                              "[RESERVOIRS]\nHIGH 100\nLOW 0\n[JUNCTIONS]\nA 0 0\nB 0 0\n"
                              "[PIPES]\nP1 HIGH A 100 300 120\nP2 B LOW 100 300 120\n"
                              "[VALVES]\nV A B 300 FCV 5\n");
    // An active FCV keeps a 1e-8 coupling across it (as EPANET): 1e-8 x head difference leaks.
    CHECK(s.flow("V") == doctest::Approx(5).epsilon(1e-4));
  }
  SUBCASE("a closed pipe carries nothing and a check valve stops reverse flow") {
    const auto s = solve_text(options("H-W") +
                              "[RESERVOIRS]\nR 100\nR2 50\n[JUNCTIONS]\nJ 0 10\n"
                              "[PIPES]\nP1 R J 100 300 120\nP2 R J 100 300 120 0 CLOSED\n"
                              "P3 R2 J 100 300 120 0 CV\n");
    CHECK(s.flow("P2") == 0.0);
    CHECK(s.flow("P3") == 0.0);
    CHECK(s.flow("P1") == doctest::Approx(10).epsilon(1e-5));  // closed links keep 1e-8 couplings
  }
}

}  // namespace
}  // namespace cgs::net
