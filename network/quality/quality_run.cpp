#include "network/quality/quality_run.hpp"

#include <chrono>
#include <stdexcept>

#include "base/atomic_file.hpp"
#include "network/results_io.hpp"

namespace cgs::net {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

}  // namespace

QualityRun::QualityRun(const Network& net, QualityHydraulics mode)
    : net_(net), engine_(net, mode) {}

void QualityRun::attach(SimulationOptions& options) {
  if (options.on_advance)
    throw std::logic_error("QualityRun::attach: the simulation's on_advance is taken");
  duration_ = options.duration >= 0 ? options.duration : net_.times.duration;
  results_ = {};
  // EPANET's initqual, before the run: the hooks chained below (the .out, the report) read the
  // initial qualities at time 0.
  const auto initialise_start = Clock::now();
  engine_.initialise();
  results_.seconds += since(initialise_start);
  // A hook already there (the energy meter, the output file) runs before the period starts: the
  // .out reads the engine there, as EPANET's runqual saves its output before its ratecoeffs and
  // flowdirchanged.
  options.on_period = [this, before = std::move(options.on_period)](long time,
                                                                    const GradientAlgorithm& h) {
    if (before) before(time, h);
    const auto start = Clock::now();
    engine_.start_period(h, time >= duration_);
    if (is_report_time(net_.times, time)) {
      results_.times.push_back(time);
      std::vector<double>& nodes = results_.nodes.emplace_back(net_.nodes.size());
      for (std::size_t n = 0; n < nodes.size(); ++n) nodes[n] = engine_.node_quality(int(n));
      std::vector<double>& links = results_.links.emplace_back(net_.links.size());
      for (std::size_t k = 0; k < links.size(); ++k) links[k] = engine_.link_quality(int(k));
    }
    results_.seconds += since(start);
  };
  options.on_advance = [this](long time, long length, const GradientAlgorithm& h) {
    const auto start = Clock::now();
    engine_.advance(h, time, length);
    results_.balance = engine_.mass_balance();
    results_.seconds += since(start);
  };
}

void write_quality_csv(const std::string& path, const Network& net, const QualityResults& q) {
  std::vector<std::string> nodes, links;
  for (const Node& n : net.nodes) nodes.push_back(",node," + csv_field(n.id) + ",");
  for (const Link& l : net.links) links.push_back(",link," + csv_field(l.id) + ",");
  write_file_atomically(path, [&](std::FILE* file) {
    std::fputs("time_s,kind,id,quality\n", file);
    std::string text;
    char number[32];
    for (std::size_t t = 0; t < q.times.size(); ++t) {
      text.clear();
      const std::string time = std::to_string(q.times[t]);
      auto row = [&](const std::string& middle, double v) {
        text += time;
        text += middle;
        text.append(number, static_cast<std::size_t>(std::snprintf(number, sizeof number, "%.10g", v)));
        text += '\n';
      };
      for (std::size_t n = 0; n < nodes.size(); ++n) row(nodes[n], q.nodes[t][n]);
      for (std::size_t k = 0; k < links.size(); ++k) row(links[k], q.links[t][k]);
      std::fwrite(text.data(), 1, text.size(), file);
    }
  });
}

}  // namespace cgs::net
