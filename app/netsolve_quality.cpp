#include "app/netsolve_quality.hpp"

#include <cstdio>
#include <string>

namespace cgs::net {
namespace {

std::string describe(const QualityInput& in, const Network& net) {
  switch (in.type) {
    case QualityType::none: return "NONE";
    case QualityType::age: return "AGE (hrs)";
    case QualityType::trace: return "TRACE " + net.nodes[in.trace_node].id + " (%)";
    case QualityType::chemical: return "CHEMICAL " + in.chemical + " (" + in.units + ")";
  }
  return "";
}

}  // namespace

void print_quality_summary(const Network& net, const QualityResults& q) {
  const QualityMassBalance& b = q.balance;
  std::printf("water quality %s: %zu reporting times, quality step %ld s, %.4g s in the quality "
              "engine\n",
              describe(net.quality, net).c_str(), q.times.size(), net.quality.step, q.seconds);
  std::printf("mass balance (EPANET's): initial %.5e, inflow %.5e, outflow %.5e, reacted %.5e, "
              "final %.5e, ratio %.5f, %d segments\n",
              b.initial, b.inflow, b.outflow, b.reacted, b.final, b.ratio, b.segments);
}

nlohmann::json quality_json(const Network& net, const QualityResults& q) {
  const QualityMassBalance& b = q.balance;
  return {{"type", describe(net.quality, net)},
          {"quality_step_s", net.quality.step},
          {"reporting_times", q.times.size()},
          {"seconds", q.seconds},
          {"mass_balance",
           {{"initial", b.initial},
            {"inflow", b.inflow},
            {"outflow", b.outflow},
            {"reacted", b.reacted},
            {"final", b.final},
            {"ratio", b.ratio},
            {"segments", b.segments}}}};
}

}  // namespace cgs::net
