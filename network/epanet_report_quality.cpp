// The report's words for a run's water quality (epanet_report.hpp): EPANET 2.3.5's report.c
// writesummary lines, writemassbalance, and the names its input3.c and input1.c give the fields.
#include <cctype>
#include <cstdio>

#include "network/epanet_report.hpp"

namespace cgs::net {
namespace {

std::string format(const char* fmt, double value, const char* text = "") {
  char buffer[160];
  std::snprintf(buffer, sizeof buffer, fmt, value, text);
  return buffer;
}

// EPANET's match: `text`, its leading blanks skipped, begins with `prefix` (any case).
bool match(const std::string& text, const char* prefix) {
  std::size_t i = text.find_first_not_of(' ');
  if (i == std::string::npos) i = text.size();
  for (const char* p = prefix; *p; ++p, ++i)
    if (i >= text.size() || std::toupper(static_cast<unsigned char>(text[i])) !=
                                std::toupper(static_cast<unsigned char>(*p)))
      return false;
  return true;
}

}  // namespace

ReportQualityText report_quality_text(const Network& net) {
  const QualityInput& q = net.quality;
  switch (q.type) {
    case QualityType::chemical: return {q.chemical, q.units, q.units, q.units + "/day"};
    case QualityType::age: return {"AGE", "hrs", "hrs", ""};
    case QualityType::trace: return {"% from", net.nodes[q.trace_node].id, "% from", ""};
    case QualityType::none: break;
  }
  return {"Chemical", "mg/L", "", ""};
}

std::vector<std::string> quality_summary_lines(const Network& net, long duration, bool running) {
  const QualityInput& q = net.quality;
  std::vector<std::string> lines;
  if (!running || duration == 0) {
    lines.push_back("    Quality Analysis .................. None");
    return lines;
  }
  const std::string prefix = "    Quality Analysis .................. ";
  switch (q.type) {
    case QualityType::chemical: lines.push_back(prefix + q.chemical); break;
    case QualityType::trace:
      lines.push_back(prefix + "Trace From Node " + net.nodes[q.trace_node].id);
      break;
    case QualityType::age: lines.push_back(prefix + "Age"); break;
    case QualityType::none: break;
  }
  lines.push_back(format("    Water Quality Time Step ........... %-.2f min",
                         static_cast<float>(q.step) / 60.0));
  lines.push_back(format("    Water Quality Tolerance ........... %-.2f %s",
                         q.tolerance * q.to_user, report_quality_text(net).field_units.c_str()));
  return lines;
}

void capture_quality(const QualityEngine& quality, std::vector<float>& node_quality,
                     std::vector<float>& link_quality, std::vector<float>& reaction) {
  for (std::size_t i = 0; i < node_quality.size(); ++i)
    node_quality[i] = static_cast<float>(quality.node_quality(static_cast<int>(i)));
  for (std::size_t k = 0; k < link_quality.size(); ++k) {
    link_quality[k] = static_cast<float>(quality.link_quality(static_cast<int>(k)));
    reaction[k] = static_cast<float>(quality.link_reaction_rate(static_cast<int>(k)));
  }
}

std::vector<std::string> mass_balance_lines(const Network& net, const QualityMassBalance& b) {
  std::vector<std::string> lines;
  const QualityType type = net.quality.type;
  const std::string& units = net.quality.units;
  const char* kind = type == QualityType::trace ? " (mg)"
                     : type == QualityType::age ? " (hrs)"
                     : match(units, "mg")       ? " (mg)"
                     : match(units, "ug")       ? " (ug)"
                                                : "";
  lines.push_back(std::string("Water Quality Mass Balance") + kind);
  lines.push_back("================================");
  lines.push_back(format("Initial Mass:      %12.5e", b.initial));
  lines.push_back(format("Mass Inflow:       %12.5e", b.inflow));
  lines.push_back(format("Mass Outflow:      %12.5e", b.outflow));
  lines.push_back(format("Mass Reacted:      %12.5e", b.reacted));
  lines.push_back(format("Final Mass:        %12.5e", b.final));
  lines.push_back(format("Mass Ratio:         %-.5f", b.ratio));
  lines.push_back("Total Segments:     " + std::to_string(b.segments));
  lines.push_back("================================\n");
  return lines;
}

}  // namespace cgs::net
