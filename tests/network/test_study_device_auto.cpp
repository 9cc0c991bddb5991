// netsolve --device auto (network/study_plan.hpp): a study goes to the GPU only where the trials
// engine takes it and its forecast, the fixed start included, beats the host threads'; a single
// run stays on the host. The plan is tested without a device (gpu_absent empty means "present"),
// the program on this machine (the CPU, with the reason said).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "network/inp_reader.hpp"
#include "network/study_plan.hpp"
#include "network_test_data.hpp"
#include "run_command.hpp"

namespace cgs::net {
namespace {

const std::string kNet3 = test::repo_networks() + "/Net3.inp";

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST_CASE(
    "--device auto: the forecast grows with junctions x scenarios, the GPU's from its start") {
  // Net3's 92 fire flows on 2 threads: the host in ~6 ms, the GPU's start alone is 2.3 s.
  const StudyDeviceForecast small = forecast_study_devices(92, 92, 2);
  CHECK(small.host == doctest::Approx(92.0 * 92 * 1.34e-6 / 2));
  CHECK(small.gpu > 2.3);
  CHECK(small.host < small.gpu);
  // BWSN_Network_2's fire flows on an H200's 16-core host, whole processes (BENCHMARKS.md §30):
  // 1,000 scenarios 1.18 s on the host against 2.57 s on the GPU, 4,000 4.17 s against 2.82 s,
  // all 12,523 13.2 s against 3.77 s. The forecast takes the same side each time.
  const StudyDeviceForecast thousand = forecast_study_devices(12523, 1000, 16);
  CHECK(thousand.host < thousand.gpu);
  const StudyDeviceForecast four = forecast_study_devices(12523, 4000, 16);
  CHECK(four.gpu < four.host);
  const StudyDeviceForecast all = forecast_study_devices(12523, 12523, 16);
  CHECK(all.host == doctest::Approx(13.13).epsilon(0.01));
  CHECK(all.gpu == doctest::Approx(3.76).epsilon(0.01));
}

TEST_CASE("--device auto in the study's plan: the device first among the reasons") {
  const Network net = read_inp(kNet3);
  StudyRunRequest r;
  r.device_auto = true;
  r.threads = 16;
  const StudyScope few{92, 0, false}, many{1000000, 0, false}, day{1000000, 86400, false};
  StudyPlan plan = make_study_plan(r, net, few);
  CHECK_FALSE(plan.gpu);
  CHECK(plan.engine == StudyEngine::host);
  REQUIRE_FALSE(plan.reasons.empty());
  CHECK(contains(plan.reasons[0], "device: host (--device auto: forecast"));
  plan = make_study_plan(r, net, many);  // 92 million junction-scenarios
  CHECK(plan.gpu);
  CHECK(plan.engine == StudyEngine::trials);
  CHECK(contains(plan.reasons[0], "device: gpu (--device auto: forecast"));
  CHECK(contains(plan.reason("engine"), "--device auto"));
  // An extended period: the trials engine declines it, and the batched engines' GPU paths are
  // not forecast to win: the host.
  plan = make_study_plan(r, net, day);
  CHECK_FALSE(plan.gpu);
  CHECK(plan.engine == StudyEngine::host);
  CHECK(contains(plan.reasons[0], "the trials engine declines the study"));
  // --batch-engine cholesky asks for an engine that is not the trials engine.
  r.batch_engine = BatchEngineChoice::cholesky;
  plan = make_study_plan(r, net, many);
  CHECK_FALSE(plan.gpu);
  CHECK(contains(plan.reasons[0], "runs EPANET's factor only"));
  // No GPU: the host, and why.
  r.batch_engine = BatchEngineChoice::automatic;
  r.gpu_absent = "no CUDA device";
  plan = make_study_plan(r, net, many);
  CHECK_FALSE(plan.gpu);
  CHECK(plan.engine == StudyEngine::host);
  CHECK(plan.reasons[0] == "device: host (--device auto: no GPU: no CUDA device)");
}

TEST_CASE("netsolve --device auto: a single run on the CPU, a study's plan says its device") {
  const std::string netsolve = CGSOLVE_BINARY_DIR "/app/netsolve";
  const testing::Run single =
      testing::run_command(netsolve + " --network " + kNet3 + " --duration 2h --device auto");
  CHECK(single.exit_code == 0);
  CHECK(contains(single.output, "device: cpu (--device auto: a single run stays on the host"));
  const testing::Run study = testing::run_command(netsolve + " --network " + kNet3 +
                                                  " --study fireflow --device auto --threads 2");
  CHECK(study.exit_code == 0);
  // This machine may or may not have a GPU: either way Net3's 92 fire flows stay on the host.
  CHECK(contains(study.output, "device: host (--device auto: "));
}

}  // namespace
}  // namespace cgs::net
