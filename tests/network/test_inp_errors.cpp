// The .inp reader's errors name the file and the line, and what is wrong.
#include <doctest/doctest.h>

#include <sstream>

#include "formats/types.hpp"
#include "network/hydraulics.hpp"
#include "network/inp_reader.hpp"

namespace cgs::net {
namespace {

Network parse(const std::string& text) {
  std::istringstream in(text);
  return parse_inp(in, "net.inp");
}

const std::string kHeader = "[OPTIONS]\nUNITS LPS\n[RESERVOIRS]\nR 100\n";

TEST_CASE("parser errors name the file, the line and the problem") {
  CHECK_THROWS_WITH_AS(
      parse(kHeader + "[JUNKTIONS]\nJ 1\n"),
      doctest::Contains("net.inp:5: invalid section keyword (EPANET error 299): [JUNKTIONS]"),
      InputError);
  // EPANET 2.3.5 matches the whole keyword (2.0 matched four letters): runepanet refuses these.
  for (const char* header : {"[PIPE]", "[CONTROLZ]", "[JUNC]"})
    CHECK_THROWS_WITH_AS(parse(kHeader + "[JUNCTIONS]\nJ 1\n" + header + "\n"),
                         doctest::Contains("EPANET error 299"), InputError);
  CHECK_THROWS_WITH_AS(parse(kHeader + "[LEAKAGE]\nP 1 2\n"),  // read now (test_leakage.cpp)
                       doctest::Contains("net.inp:6: unknown link 'P'"), InputError);
  CHECK_THROWS_WITH_AS(parse(kHeader + "[JUNCTIONS]\nJ\n"), doctest::Contains("net.inp:6: missing"),
                       InputError);
  CHECK_THROWS_WITH_AS(parse(kHeader + "[JUNCTIONS]\nJ 1x\n"),
                       doctest::Contains("net.inp:6: bad number '1x'"), InputError);
  CHECK_THROWS_WITH_AS(parse(kHeader + "[JUNCTIONS]\nJ 1\n[PIPES]\nP R X 1 1 1\n"),
                       doctest::Contains("net.inp:8: unknown node 'X'"), InputError);
  CHECK_THROWS_WITH_AS(parse(kHeader + "[JUNCTIONS]\nJ 1\nJ 2\n"),
                       doctest::Contains("net.inp:7: duplicate node ID 'J'"), InputError);
  CHECK_THROWS_WITH_AS(parse(kHeader + "[JUNCTIONS]\nR 2\n"),
                       doctest::Contains("duplicate node ID 'R'"), InputError);
  CHECK_THROWS_WITH_AS(parse(kHeader + "[JUNCTIONS]\nJ 1\n[PIPES]\nP R J 1 1 1\nP J R 1 1 1\n"),
                       doctest::Contains("net.inp:9: duplicate link ID 'P'"), InputError);
  CHECK_THROWS_WITH_AS(parse(kHeader + "[OPTIONS]\nHYDRAULICS USE hyd.bin\n"),
                       doctest::Contains("net.inp:6: HYDRAULICS USE/SAVE files are not supported"),
                       InputError);
  CHECK_THROWS_WITH_AS(parse("[JUNCTIONS]\nJ 1\n"), doctest::Contains("no reservoir or tank"),
                       InputError);
}

// As runepanet reads them: a line before the first section is ignored, a header that starts
// with a whole keyword is that section, an empty [LEAKAGE] is nothing.
TEST_CASE("section headers as EPANET 2.3.5 reads them") {
  const Network net = parse("stray words\n" + kHeader +
                            "[junctions]junk\nJ 1\n[PIPES]\nP R J 10 6 100\n[LEAKAGE]\n[END]\n");
  CHECK(net.nodes.size() == 2);
  CHECK(net.links.size() == 1);
}

TEST_CASE("keywords are case-insensitive, comments and skipped sections are ignored") {
  const Network net = parse(
      "[title]\nanything ; here\n[options]\nunits gpm\nheadloss d-w\n"
      "[reservoirs]\n\"R 1\" 100 ; a quoted ID\n[junctions]\nJ 1 5\n"
      "[coordinates]\nJ 1 2\n[pipes]\nP \"R 1\" J 10 6 0.1\n[end]\nignored\n");
  CHECK(net.nodes.size() == 2);
  CHECK(net.find_node("R 1") == 1);
  CHECK(net.options.formula == HeadlossFormula::darcy_weisbach);
  CHECK(net.units.flow_units == FlowUnits::gpm);
}

TEST_CASE("a network with parts not connected to any reservoir or tank is refused by name") {
  const Network net = parse(kHeader +
                            "[JUNCTIONS]\nA 0 1\nB 0 1\nC 0 1\n[PIPES]\nP1 R A 1 100 100\n"
                            "P2 B C 1 100 100\n");
  CHECK_THROWS_WITH_AS(check_connectivity(net), doctest::Contains("B, C"), InputError);
}

}  // namespace
}  // namespace cgs::net
