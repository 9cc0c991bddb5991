// The quality input as EPANET 2.3.5 reads it (input3.c optionchoice, optionvalue, qualdata,
// reactdata, sourcedata, mixingdata; input1.c adjustdata, convertunits): its error numbers for bad
// lines (each checked with ../shared/tools/epanet/epanet-run), and the values it keeps, in its
// internal units.
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>
#include <string>

#include "formats/types.hpp"
#include "network/inp_reader.hpp"

namespace cgs::net {
namespace {

Network parse(const std::string& text) {
  std::istringstream in(text);
  return parse_inp(in, "q.inp");
}

std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

const std::string kBase =
    "[RESERVOIRS]\nR 100\n[TANKS]\nT 50 10 0 20 40\n[JUNCTIONS]\n11 10 5\n12 20 2\nA 5 1\n"
    "[PIPES]\n101 R 11 1000 300 120\n102 11 12 800 200 100\n103 12 T 500 250 130\n"
    "104 12 A 100 100 80\n[PATTERNS]\nPT 1 2\n";

TEST_CASE("quality input: EPANET's error numbers, with the line") {
  struct Case {
    const char* lines;
    int error;  // 0: read
  };
  for (const Case c :
       {Case{"[OPTIONS]\nQUALITY TRACE T", 0}, Case{"[OPTIONS]\nQUALITY TRACE X", 212},
        Case{"[OPTIONS]\nQUALITY TRACE", 201}, Case{"[OPTIONS]\nDIFFUSIVITY -1", 213},
        Case{"[OPTIONS]\nTOLERANCE -0.1", 213}, Case{"[OPTIONS]\nDIFFUSIVITY x", 202},
        Case{"[REACTIONS]\nORDER WALL 2", 213}, Case{"[REACTIONS]\nORDER PIPE 1", 213},
        Case{"[REACTIONS]\nORDER BULK 1.5", 0}, Case{"[REACTIONS]\nGLOBAL TANK 1", 213},
        Case{"[REACTIONS]\nFOO 101 1", 213}, Case{"[REACTIONS]\nBULK 101 x", 202},
        Case{"[REACTIONS]\nBULK NOPIPE -1", 0}, Case{"[REACTIONS]\nTANK 11 -1", 0},
        Case{"[REACTIONS]\nBULK 101", 0}, Case{"[MIXING]\nX MIXED", 203},
        Case{"[MIXING]\nT STIRRED", 213}, Case{"[MIXING]\nT 2COMP x", 202},
        Case{"[MIXING]\nT 2COMP 0.5", 0}, Case{"[MIXING]\n11 FIFO", 0},
        Case{"[QUALITY]\nX 1", 203}, Case{"[QUALITY]\n11 -1", 209}, Case{"[QUALITY]\n11 x", 202},
        Case{"[QUALITY]\n11 12 x", 202}, Case{"[SOURCES]\nX CONCEN 1", 203},
        Case{"[SOURCES]\n11 CONCEN x", 202}, Case{"[SOURCES]\n11 x", 213},
        Case{"[SOURCES]\n11 MASS 1 NOPAT", 205}, Case{"[SOURCES]\n11 SETPOINT 1 PT", 0}}) {
    CAPTURE(std::string(c.lines));
    const std::string error = error_of(kBase + c.lines + "\n");
    CAPTURE(error);
    if (c.error == 0) {
      CHECK(error.empty());
    } else {
      CHECK(error.find("q.inp:17: ") != std::string::npos);
      CHECK(error.find("(EPANET error " + std::to_string(c.error) + ")") != std::string::npos);
    }
  }
}

TEST_CASE("quality input: a line naming what the file defines further down finds nothing") {
  // EPANET reads the file once: the trace node and [QUALITY]'s node are not yet defined there.
  CHECK(error_of("[OPTIONS]\nQUALITY TRACE T\n" + kBase).find("(EPANET error 212)") !=
        std::string::npos);
  CHECK(error_of("[QUALITY]\n11 1\n" + kBase).find("(EPANET error 203)") != std::string::npos);
  // A coefficient for a pipe defined later is passed over (EPANET's reactdata returns 0).
  const Network net = parse("[REACTIONS]\nBULK 101 -3\n" + kBase);
  CHECK(net.quality.bulk[0] == 0.0);
}

TEST_CASE("quality input: the values EPANET keeps, in its internal units") {
  const Network net = parse(kBase +
                            "[OPTIONS]\nQUALITY Chlorine mg/L\nTOLERANCE 0.02\n"
                            "[TIMES]\nHYDRAULIC TIMESTEP 0:30\n"
                            "[REACTIONS]\nGLOBAL BULK -0.5\nGLOBAL WALL -1\nBULK 102 -2\n"
                            "WALL 102 103 -0.25\nTANK T -0.1\nLIMITING POTENTIAL 4\n"
                            "[QUALITY]\n11 12 0.5\nA 2\n"
                            "[SOURCES]\nR CONCEN 1.2 PT\n11 MASS 60\n11 FLOWPACED 0.5\n"
                            "[MIXING]\nT 2COMP 0.3\n");
  const QualityInput& q = net.quality;
  CHECK(q.type == QualityType::chemical);
  CHECK(q.chemical == "Chlorine");
  CHECK(q.units == "mg/L");
  CHECK(q.step == 180);  // a tenth of the hydraulic step
  CHECK(q.to_user == doctest::Approx(1 / 28.317));
  CHECK(q.tolerance == doctest::Approx(0.02 * 28.317));
  CHECK(q.limiting_potential == doctest::Approx(4 * 28.317));
  CHECK(q.diffusivity == 1.3e-8);
  // Per pipe: the global coefficient unless given; per second.
  CHECK(q.bulk[0] == doctest::Approx(-0.5 / 86400));
  CHECK(q.bulk[1] == doctest::Approx(-2.0 / 86400));
  CHECK(q.wall[0] == doctest::Approx(-1.0 / 86400));
  CHECK(q.wall[1] == doctest::Approx(-0.25 / 86400));  // the range 102..103, numerically
  CHECK(q.wall[2] == doctest::Approx(-0.25 / 86400));
  CHECK(q.wall[3] == doctest::Approx(-1.0 / 86400));
  const int t = net.find_node("T"), r = net.find_node("R");
  CHECK(q.tank_bulk[t] == doctest::Approx(-0.1 / 86400));
  CHECK(q.tank_bulk[r] == doctest::Approx(-0.5 / 86400));  // reservoirs take the global one
  CHECK(q.initial[net.find_node("11")] == doctest::Approx(0.5 * 28.317));
  CHECK(q.initial[net.find_node("12")] == doctest::Approx(0.5 * 28.317));
  CHECK(q.initial[net.find_node("A")] == doctest::Approx(2 * 28.317));
  REQUIRE(q.source[r] >= 0);
  CHECK(q.sources[q.source[r]].type == SourceType::concen);
  CHECK(q.sources[q.source[r]].pattern == 0);
  const int j = net.find_node("11");
  REQUIRE(q.source[j] >= 0);
  CHECK(q.sources[q.source[j]].type == SourceType::flowpaced);  // the later line replaces
  CHECK(q.sources.size() == 2);
  CHECK(q.mixing[t] == MixModel::two_compartment);
  CHECK(q.mixing_fraction[t] == 0.3);
}

TEST_CASE("quality input: roughness correlation, diffusivity forms, the quality step") {
  // H-W: wall coefficient = F / C; an SI diffusivity below 1e-4 is m^2/s, above a multiplier.
  Network net = parse(kBase + "[OPTIONS]\nUNITS LPS\nQUALITY AGE\nDIFFUSIVITY 1e-9\n"
                              "[REACTIONS]\nROUGHNESS CORRELATION 50\nWALL 104 -3\n"
                              "[TIMES]\nQUALITY TIMESTEP 2:00\n");
  CHECK(net.quality.type == QualityType::age);
  CHECK(net.quality.wall[0] == doctest::Approx(50.0 / 120 / 86400));
  CHECK(net.quality.wall[3] == doctest::Approx(-3.0 / 86400));  // given: no correlation
  CHECK(net.quality.diffusivity == doctest::Approx(1e-9 / (0.3048 * 0.3048)));
  CHECK(net.quality.step == 3600);  // never more than the hydraulic step
  CHECK(net.quality.to_user == 1.0);
  net = parse(kBase + "[OPTIONS]\nQUALITY TRACE R\nDIFFUSIVITY 2\n");
  CHECK(net.quality.trace_node == net.find_node("R"));
  CHECK(net.quality.diffusivity == doctest::Approx(2 * 1.3e-8));
  // A hydraulic step under 10 s makes EPANET's default quality step 0 (it would loop forever).
  CHECK(error_of(kBase + "[OPTIONS]\nQUALITY AGE\n[TIMES]\nHYDRAULIC TIMESTEP 0:00:05\n")
            .find("quality time step is 0 s") != std::string::npos);
  CHECK(error_of(kBase + "[TIMES]\nHYDRAULIC TIMESTEP 0:00:05\n").empty());  // no quality
}

}  // namespace
}  // namespace cgs::net
