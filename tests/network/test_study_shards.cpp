// A study cut into shards (StudyOptions::shard, shards: what each rank of an mpirun study runs)
// and put back together by merge_shards from the shards' texts gives the one process's rows
// exactly: fire flow, a 6 h closure study and demand draws (whose seeds follow the scenario
// numbers), with 1, 2, 3 and more shards than scenarios. tests/distributed/netsolve_study_test.sh
// does the same through mpirun.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "network/inp_reader.hpp"
#include "network/study.hpp"
#include "network_test_data.hpp"
#include "study_test_util.hpp"

using namespace cgs::net;

TEST_CASE("a study in shards, merged, gives the one process's rows") {
  const Network net = read_inp(test::repo_networks() + "/Net3.inp");
  auto direct = [] { return make_direct_solver(); };
  StudyOptions demand = test::study_options(StudyKind::demand);
  demand.spec.draws = 7;
  demand.spec.cv = 0.3;
  demand.spec.seed = 5;
  const StudyOptions studies[] = {test::study_options(StudyKind::fireflow),
                                  test::study_options(StudyKind::closure, 6 * 3600), demand};
  for (const StudyOptions& o : studies) {
    CAPTURE(to_string(o.spec.kind));
    const StudyResults whole = run_study(net, direct, o);
    const std::string want = test::study_csv_text(net, whole, o);
    for (const int shards : {1, 2, 3, 200}) {
      CAPTURE(shards);
      std::vector<std::string> texts;
      std::size_t rows = 0;
      for (int shard = 0; shard < shards; ++shard) {
        StudyOptions part = o;
        part.shard = shard, part.shards = shards;
        const StudyResults r = run_study(net, direct, part);
        rows += r.scenarios.size();
        for (const ScenarioResult& s : r.scenarios) CHECK((s.scenario - 1) % shards == shard);
        texts.push_back(shard_text(r));
      }
      CHECK(rows == whole.scenarios.size());
      StudyResults merged = run_study(net, direct, [&] {
        StudyOptions none = o;  // rank 0's own results, whose rows merge_shards replaces
        none.shard = 0, none.shards = shards;
        return none;
      }());
      merge_shards(merged, texts);
      CHECK(merged.shards == shards);
      CHECK(test::study_csv_text(net, merged, o) == want);
      // Exactly, beyond the CSV's digits.
      REQUIRE(merged.scenarios.size() == whole.scenarios.size());
      for (std::size_t i = 0; i < whole.scenarios.size(); ++i) {
        const ScenarioResult &a = merged.scenarios[i], &b = whole.scenarios[i];
        CHECK(a.periods == b.periods);
        CHECK((a.min_pressure == b.min_pressure ||
               (a.min_pressure != a.min_pressure && b.min_pressure != b.min_pressure)));
        CHECK(a.reason == b.reason);
      }
    }
  }
  StudyResults broken;
  CHECK_THROWS_AS(merge_shards(broken, {"1 0 0 0 0 0 0 0 0 0\n3\t-1\tbroken"}), std::runtime_error);
}
