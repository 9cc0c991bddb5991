// EPANET 2.3's status rules (hydstatus.c) on small networks built to force each one, with the
// expected statuses, heads and flows worked out here: with the link closed, the rest of the
// network is a few pipes whose heads follow from textbook head losses; with it open, an energy
// balance solved by bisection.
#include <doctest/doctest.h>

#include <cmath>

#include "hand_built.hpp"

namespace cgs::net {
namespace {

using test::bisect;
using test::hazen_williams_m;
using test::minor_loss_m;
using test::one_point_pump_gain;
using test::options;
using test::solve_text;

bool closed(LinkStatus s) { return is_closed(s); }

TEST_CASE("a pump that would have to add more than its shutoff head is closed (XHEAD)") {
  // Shutoff head 1.33334 x 30 = 40 m, but J is held at 60 m by R2: the pump cannot lift to it.
  const auto s = solve_text(options("H-W") +
                            "[RESERVOIRS]\nR1 0\nR2 60\n[JUNCTIONS]\nJ 0 0\n"
                            "[PUMPS]\nPU R1 J HEAD C1\n[CURVES]\nC1 20 30\n"
                            "[PIPES]\nP J R2 500 300 120\n");
  CHECK(s.status("PU") == LinkStatus::xhead);
  CHECK(s.flow("PU") == 0.0);
  CHECK(std::abs(s.flow("P")) < 1e-4);  // the closed pump's 1e-8 coupling: 60 m leak 6e-5 LPS
  CHECK(s.head("J") == doctest::Approx(60).epsilon(1e-7));
}

TEST_CASE("a pump below its shutoff head delivers what its curve and the pipe allow") {
  // R2 at 35 m < 40 m: the pump runs; gain(q) = 35 + pipe loss(q) fixes q.
  const auto s = solve_text(options("H-W") +
                            "[RESERVOIRS]\nR1 0\nR2 35\n[JUNCTIONS]\nJ 0 0\n"
                            "[PUMPS]\nPU R1 J HEAD C1\n[CURVES]\nC1 20 30\n"
                            "[PIPES]\nP J R2 500 300 120\n");
  const double q = bisect(
      [](double q) {
        return one_point_pump_gain(20, 30, q) - 35 - hazen_williams_m(500, 0.3, 120, q);
      },
      0.0, 40.0);
  CHECK(s.status("PU") == LinkStatus::open);
  CHECK(s.flow("PU") == doctest::Approx(q).epsilon(1e-3));  // 10.67 vs EPANET's 4.727 constant
  CHECK(s.head("J") == doctest::Approx(one_point_pump_gain(20, 30, s.flow("PU"))).epsilon(1e-6));
}

TEST_CASE("a constant-power pump that can move almost nothing is closed (EPANET 2.3)") {
  // 0.001 hp against 3,000 m: q = 8.814 x 0.001 / head(ft) = 9e-7 cfs, below EPANET's TINY
  // (1e-6 cfs): 2.3 closes the pump (TEMPCLOSED); 2.2 left it open with that trickle.
  const auto s = solve_text(
      "[OPTIONS]\nUNITS LPS\nACCURACY 1e-8\nTRIALS 200\n"
      "[RESERVOIRS]\nR1 0\nR2 3000\n[JUNCTIONS]\nJ 0 0\n"
      "[PUMPS]\nPU R1 J POWER 0.001\n[PIPES]\nP J R2 500 300 120\n");
  CHECK(s.status("PU") == LinkStatus::temp_closed);
  CHECK(s.flow("PU") == 0.0);
  CHECK(s.head("J") == doctest::Approx(3000).epsilon(1e-7));
}

TEST_CASE("a PRV with reverse flow closes as a check valve") {
  // Open, the PRV would pass water from B (fed by R2 at 120 m) back to A (R1 at 100 m).
  const auto s = solve_text(options("H-W") +
                            "[RESERVOIRS]\nR1 100\nR2 120\n[JUNCTIONS]\nA 0 5\nB 0 5\n"
                            "[PIPES]\nP1 R1 A 500 200 120\nP2 B R2 500 200 120\n"
                            "[VALVES]\nV A B 200 PRV 20\n");
  CHECK(s.status("V") == LinkStatus::closed);
  CHECK(s.flow("V") == 0.0);
  // A closed link keeps a 1e-8 coupling (as in EPANET): 20 m across it leak 2e-5 LPS.
  CHECK(s.flow("P1") == doctest::Approx(5).epsilon(1e-5));
  CHECK(s.flow("P2") == doctest::Approx(-5).epsilon(1e-5));
  CHECK(s.head("A") == doctest::Approx(100 - hazen_williams_m(500, 0.2, 120, 5)).epsilon(1e-5));
  CHECK(s.head("B") == doctest::Approx(120 - hazen_williams_m(500, 0.2, 120, 5)).epsilon(1e-5));
}

TEST_CASE("a PSV with reverse flow closes as a check valve") {
  const auto s = solve_text(options("H-W") +
                            "[RESERVOIRS]\nR1 100\nR2 120\n[JUNCTIONS]\nA 0 5\nB 0 5\n"
                            "[PIPES]\nP1 R1 A 500 200 120\nP2 B R2 500 200 120\n"
                            "[VALVES]\nV A B 200 PSV 50\n");
  CHECK(s.status("V") == LinkStatus::closed);
  CHECK(s.flow("V") == 0.0);
  CHECK(s.head("A") == doctest::Approx(100 - hazen_williams_m(500, 0.2, 120, 5)).epsilon(1e-5));
  CHECK(s.head("B") == doctest::Approx(120 - hazen_williams_m(500, 0.2, 120, 5)).epsilon(1e-5));
}

TEST_CASE("an FCV set above what it can pass fully open becomes XFCV (EPANET 2.3)") {
  // Fully open (loss 50 v^2/2g) the valve passes q_open; set to 1.05 q_open, an active valve
  // would need a loss coefficient below the fully open one's: 2.3 makes it an open valve (XFCV),
  // 2.2 kept it active at the setting with heads no valve could produce.
  const auto energy = [](double q) {
    return 100 - hazen_williams_m(500, 0.2, 120, q) - minor_loss_m(50, 0.2, q) -
           hazen_williams_m(500, 0.2, 120, q);
  };
  const double q_open = bisect(energy, 0.0, 500.0);
  const std::string setting = std::to_string(1.05 * q_open);
  const auto s = solve_text(options("H-W") +
                            "[RESERVOIRS]\nR1 100\nR2 0\n[JUNCTIONS]\nA 0 0\nB 0 0\n"
                            "[PIPES]\nP1 R1 A 500 200 120\nP2 B R2 500 200 120\n"
                            "[VALVES]\nV A B 200 FCV " +
                            setting + " 50\n");
  CHECK(s.status("V") == LinkStatus::xfcv);
  CHECK(s.flow("V") == doctest::Approx(q_open).epsilon(1e-3));
}

TEST_CASE("an FCV that can pass its setting holds it") {
  const auto energy = [](double q) {
    return 100 - hazen_williams_m(500, 0.2, 120, q) - minor_loss_m(50, 0.2, q) -
           hazen_williams_m(500, 0.2, 120, q);
  };
  const double q_set = 0.5 * bisect(energy, 0.0, 500.0);
  const auto s = solve_text(options("H-W") +
                            "[RESERVOIRS]\nR1 100\nR2 0\n[JUNCTIONS]\nA 0 0\nB 0 0\n"
                            "[PIPES]\nP1 R1 A 500 200 120\nP2 B R2 500 200 120\n"
                            "[VALVES]\nV A B 200 FCV " +
                            std::to_string(q_set) + " 50\n");
  CHECK(s.status("V") == LinkStatus::active);
  CHECK(s.flow("V") == doctest::Approx(q_set).epsilon(1e-5));  // 1e-8 coupling across it
}

TEST_CASE("a full tank takes no more water and an empty one gives none") {
  SUBCASE("full: the pipe that would fill it is closed") {
    // T: bottom 50 m, level 10 = maximum -> head 60 m; R at 100 m would push water in.
    const auto s = solve_text(options("H-W") +
                              "[RESERVOIRS]\nR 100\n[JUNCTIONS]\nJ 0 10\n"
                              "[TANKS]\nT 50 10 0 10 10\n"
                              "[PIPES]\nP1 R J 500 200 120\nP2 J T 500 200 120\n");
    CHECK(s.status("P2") == LinkStatus::temp_closed);
    CHECK(s.flow("P2") == 0.0);
    CHECK(s.flow("P1") == doctest::Approx(10).epsilon(1e-5));  // 1e-8 coupling into T
    CHECK(s.head("J") == doctest::Approx(100 - hazen_williams_m(500, 0.2, 120, 10)).epsilon(1e-5));
    CHECK(s.head("T") == doctest::Approx(60));
  }
  SUBCASE("full: a pump that would fill it is closed") {
    const auto s = solve_text(options("H-W") +
                              "[RESERVOIRS]\nR 0\n[JUNCTIONS]\nJ 0 10\n"
                              "[TANKS]\nT 20 5 0 5 10\n"
                              "[PUMPS]\nPU R T HEAD C1\n[CURVES]\nC1 20 30\n"
                              "[PIPES]\nP1 R J 500 200 120\n");
    CHECK(s.status("PU") == LinkStatus::temp_closed);
    CHECK(s.flow("PU") == 0.0);
  }
  SUBCASE("full: water may still leave it") {
    // T full at 60 m feeds J; R at 40 m is lower: T's outflow stays open.
    const auto s = solve_text(options("H-W") +
                              "[RESERVOIRS]\nR 40\n[JUNCTIONS]\nJ 0 10\n"
                              "[TANKS]\nT 50 10 0 10 10\n"
                              "[PIPES]\nP1 R J 500 200 120\nP2 J T 500 200 120\n");
    CHECK(s.status("P2") == LinkStatus::open);
    CHECK(s.flow("P2") < -1.0);  // from T to J
  }
  SUBCASE("empty: the pipe that would drain it is closed") {
    // T: bottom 70 m, level 0 = minimum -> head 70 m; J below would drain it.
    const auto s = solve_text(options("H-W") +
                              "[RESERVOIRS]\nR 50\n[JUNCTIONS]\nJ 0 10\n"
                              "[TANKS]\nT 70 0 0 10 10\n"
                              "[PIPES]\nP1 R J 500 200 120\nP2 J T 500 200 120\n");
    CHECK(s.status("P2") == LinkStatus::temp_closed);
    CHECK(s.flow("P2") == 0.0);
    CHECK(s.head("J") == doctest::Approx(50 - hazen_williams_m(500, 0.2, 120, 10)).epsilon(1e-5));
  }
}

}  // namespace
}  // namespace cgs::net
