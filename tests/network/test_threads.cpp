// A run's answer does not depend on --threads: the native direct solver's subtrees
// (cholesky_subtrees.hpp) and the head loss coefficients on several threads (RunOptions::threads)
// give the same bits as one thread at every reporting time, on BWSN_Network_2 (../shared: 12,523
// junctions) over 6 h and Net3 over 24 h, the team's loops asked for on any size.
#include <doctest/doctest.h>

#include <string>

#include "network/host_team.hpp"
#include "network/inp_reader.hpp"
#include "network/linear_solver.hpp"
#include "network/network_test_data.hpp"
#include "network/simulation.hpp"

namespace cgs::net {
namespace {

SimulationResults run_on(const Network& net, int threads, long duration) {
  auto solver = make_direct_solver(DirectBackend::native);
  solver->set_threads(threads);
  SimulationOptions options;
  options.duration = duration;
  options.run.threads = threads;
  options.run.parallel_links = 0;  // the team's loops on any network
  return simulate(net, *solver, options);
}

void check_same_bits(const Network& net, long duration) {
  const SimulationResults one = run_on(net, 1, duration);
  REQUIRE(one.error.empty());
  REQUIRE(!one.reports.empty());
  for (const int threads : {2, 3}) {
    CAPTURE(threads);
    const SimulationResults many = run_on(net, threads, duration);
    REQUIRE(many.reports.size() == one.reports.size());
    CHECK(many.steps.size() == one.steps.size());
    for (std::size_t r = 0; r < one.reports.size(); ++r) {
      CAPTURE(one.reports[r].time);
      CHECK(many.reports[r].head == one.reports[r].head);  // exactly: the same operations
      CHECK(many.reports[r].flow == one.reports[r].flow);
      CHECK(many.reports[r].demand == one.reports[r].demand);
      CHECK(many.reports[r].status == one.reports[r].status);
    }
  }
}

}  // namespace

TEST_CASE("a host team runs every member once per run and shares items without gaps") {
  for (int size = 1; size <= 4; ++size) {
    CAPTURE(size);
    HostTeam team(size);
    CHECK(team.size() == size);
    std::vector<int> calls(size, 0);
    for (int run = 0; run < 500; ++run) {  // runs back to back: no call lost or doubled
      auto f = [&](int member) { ++calls[member]; };
      team.run(f);
    }
    for (int c : calls) CHECK(c == 500);
    for (const int items : {0, 1, 7, 4096}) {
      int expected_begin = 0;
      for (int member = 0; member < size; ++member) {
        int begin = -1, end = -1;
        HostTeam::share(items, member, size, begin, end);
        CHECK(begin == expected_begin);
        CHECK(end - begin <= items / size + 1);
        expected_begin = end;
      }
      CHECK(expected_begin == items);
    }
  }
  TeamSlot slot;
  CHECK(slot.get(1) == nullptr);
  HostTeam* two = slot.get(2);
  CHECK(slot.get(2) == two);
  CHECK(slot.get(3)->size() == 3);
  const TeamSlot copy = slot;  // a copy starts without a team of its own
  CHECK(TeamSlot(copy).get(2) != slot.get(2));
}

TEST_CASE("Net3's 24 h are the same bits on 1, 2 and 3 threads") {
  check_same_bits(read_inp(test::repo_networks() + "/Net3.inp"), 86400);
}

TEST_CASE("BWSN_Network_2's first 6 h are the same bits on 1, 2 and 3 threads") {
  if (!test::have_shared_data()) return;
  const Network net = read_inp(test::shared_data() + "/networks/BWSN_Network_2.inp");
  check_same_bits(net, 6 * 3600);
}

}  // namespace cgs::net
