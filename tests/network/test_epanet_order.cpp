// EPANET's junction elimination order (network/epanet_order.hpp) against EPANET 2.3.5's own:
// data/networks/epanet-order/<net>.txt lists the junctions in the order EPANET's smatrix.c
// eliminates them (its Order array after reordernodes, written by scripts/epanet_order_dump.c
// built against EPANET's source, commit 473b87d).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "network/epanet_order.hpp"
#include "network/inp_reader.hpp"
#include "network_test_data.hpp"

namespace cgs::net {
namespace {

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);
  return lines;
}

std::vector<std::string> order_ids(const Network& net) {
  std::vector<std::string> ids;
  for (int junction : epanet_elimination_order(net)) ids.push_back(net.nodes[junction].id);
  return ids;
}

}  // namespace

TEST_CASE("EPANET's elimination order of the junctions, as EPANET 2.3.5 eliminates them") {
  const std::string orders = test::repo_networks() + "/epanet-order/";
  const bool shared = test::have_shared_data();
  int compared = 0;
  for (const auto& entry : std::filesystem::directory_iterator(orders)) {
    if (entry.path().extension() != ".txt") continue;
    const std::string name = entry.path().stem().string();
    std::string inp = test::repo_networks() + "/" + name + ".inp";
    if (!std::filesystem::exists(inp)) {
      if (!shared) continue;
      inp = test::shared_data() + "/networks/" + name + ".inp";
    }
    CAPTURE(name);
    const std::vector<std::string> expected = lines_of(entry.path().string());
    const Network net = read_inp(inp);
    REQUIRE(static_cast<int>(expected.size()) == net.junction_count);
    CHECK(order_ids(net) == expected);
    ++compared;
  }
  CHECK(compared >= (shared ? 12 : 2));
}

TEST_CASE("multiple minimum degree: isolated nodes first, then the least connected") {
  // A star (0 at the centre of 1, 2, 3) and an isolated node 4: 4 goes first (no neighbours);
  // two leaves (degree 1) before the centre (degree 3).
  const std::vector<std::vector<int>> star{{1, 2, 3}, {0}, {0}, {0}, {}};
  const std::vector<int> order = multiple_minimum_degree(star);
  REQUIRE(order.size() == 5);
  CHECK(order[0] == 4);
  CHECK(order[4] != 4);
  std::vector<int> seen(5, 0);
  for (int v : order) ++seen[v];
  CHECK(seen == std::vector<int>{1, 1, 1, 1, 1});
  // The centre is eliminated after at least two leaves (their degree is 1, its 3).
  int centre_at = -1;
  for (int k = 0; k < 5; ++k)
    if (order[k] == 0) centre_at = k;
  CHECK(centre_at >= 3);
}

TEST_CASE("multiple minimum degree of an empty graph and of one node") {
  CHECK(multiple_minimum_degree({}).empty());
  CHECK(multiple_minimum_degree({{}}) == std::vector<int>{0});
}

TEST_CASE("EPANET's junction graph: neighbours in reverse link order, parallel links once") {
  Network net;
  net.junction_count = 3;
  for (const char* id : {"A", "B", "C", "T"}) net.nodes.push_back(Node{.id = id});
  auto link = [&](int from, int to) {
    Link l;
    l.from = from, l.to = to;
    net.links.push_back(l);
  };
  link(0, 1);  // A-B
  link(1, 2);  // B-C
  link(0, 1);  // A-B again: parallel, dropped
  link(2, 3);  // C-T: T is no junction
  link(2, 0);  // C-A
  const auto graph = epanet_junction_graph(net);
  CHECK(graph[0] == std::vector<int>{2, 1});  // A: C (last link first), then B
  CHECK(graph[1] == std::vector<int>{2, 0});  // B: C, A
  CHECK(graph[2] == std::vector<int>{0, 1});  // C: A, B (T left out)
}

}  // namespace cgs::net
