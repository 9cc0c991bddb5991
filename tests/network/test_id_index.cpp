// IdIndex (network/id_index.hpp), the ID lookup of nodes and links, against std::unordered_map
// on random IDs of EPANET's lengths (1 to 31 characters), through many growths.
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "network/id_index.hpp"

namespace cgs::net {
namespace {

std::string random_id(std::mt19937& rng) {
  static const char chars[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_-.";
  std::uniform_int_distribution<int> length(1, 31), pick(0, sizeof chars - 2);
  std::string id(static_cast<std::size_t>(length(rng)), ' ');
  for (char& c : id) c = chars[pick(rng)];
  return id;
}

TEST_CASE("IdIndex: empty, one ID, a duplicate refused, IDs that differ in one character") {
  IdIndex index;
  CHECK(index.find("J1") == -1);
  CHECK(index.find("") == -1);
  CHECK(index.insert("J1", 7));
  CHECK(index.find("J1") == 7);
  CHECK_FALSE(index.insert("J1", 8));  // the first stays
  CHECK(index.find("J1") == 7);
  CHECK(index.find("J10") == -1);
  CHECK(index.find("j1") == -1);  // EPANET's IDs are case-sensitive
  CHECK(index.find("J") == -1);
  CHECK(index.insert("J10", 9));
  CHECK(index.find("J10") == 9);
  CHECK(index.size() == 2);
}

TEST_CASE("IdIndex equals std::unordered_map on 100,000 random IDs, reserved or grown") {
  for (const bool reserve : {false, true}) {
    CAPTURE(reserve);
    std::mt19937 rng(20261129);
    IdIndex index;
    if (reserve) index.reserve(100'000);
    std::unordered_map<std::string, int> reference;
    std::vector<std::string> ids;
    for (int k = 0; k < 100'000; ++k) {
      std::string id = random_id(rng);
      const bool fresh = reference.emplace(id, k).second;
      REQUIRE(index.insert(id, k) == fresh);
      ids.push_back(std::move(id));
    }
    CHECK(index.size() == reference.size());
    int wrong = 0;
    for (const std::string& id : ids) wrong += index.find(id) != reference.at(id);
    CHECK(wrong == 0);
    int found_absent = 0;
    for (int k = 0; k < 10'000; ++k) {
      const std::string id = random_id(rng) + "#";  // '#' is in no ID above
      found_absent += index.find(id) != -1;
    }
    CHECK(found_absent == 0);
  }
}

}  // namespace
}  // namespace cgs::net
