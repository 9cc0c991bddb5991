// [REPORT] as EPANET 2.3.5 reads it (input3.c reportdata): the report file's options, with
// EPANET's errors for what it refuses (201 syntax, 202 number, 203 node, 204 link, 213 value).
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "network/inp_reader_impl.hpp"

namespace cgs::net::inp {
namespace {

// EPANET's getfloat: strtod over the whole token.
bool epanet_float(const std::string& s, double& y) {
  char* end = nullptr;
  y = std::strtod(s.c_str(), &end);
  return *end == '\0';
}

// EPANET's ROUND, for PRECISION; held to what a 10-character column can show (EPANET itself
// overruns its buffer beyond; a negative precision prints as printf's default, as EPANET's).
int epanet_round(double x) {
  x = std::max(-1.0, std::min(x, 15.0));
  return x >= 0 ? static_cast<int>(x + 0.5) : static_cast<int>(x - 0.5);
}

// EPANET's field names (enumstxt.h Fldname), matched as its findmatch does: the line's first
// word starts with the whole name ("Elevation", not "ELEV"); only HEADLOSS is compared whole
// (so that "Headloss" is not "Head").
int report_field_of(const std::string& word) {
  static const char* names[] = {"ELEVATION", "DEMAND",  "HEAD",     "PRESSURE", "QUALITY",
                                "LENGTH",    "DIAMETER", "FLOW",    "VELOCITY", "HEADLOSS",
                                "QUALITY",   "STATE",   "SETTING",  "REACTION", "F-FACTOR"};
  if (upper(word) == "HEADLOSS") return static_cast<int>(ReportField::headloss);
  for (int i = 0; i < static_cast<int>(ReportField::count); ++i)
    if (starts_with_keyword(word, names[i])) return i;
  return -1;
}

// EPANET's message for a refused [REPORT] line (input2.c inperrmsg): its words, the token.
std::string report_error(int code, const char* words, const std::string& token) {
  return std::string(words) + (token.empty() ? "" : " " + token) +
         " in [REPORT] section (EPANET error " + std::to_string(code) + ")";
}

}  // namespace

// [REPORT], with what the report takes from [OPTIONS] (DIFFUSIVITY); [TIMES] STATISTIC is
// TimeOptions::statistic (read_statistic), which the report and the .out both use.
void InpReader::read_report() {
  ReportOptions& rpt = net_.report;
  // The relative diffusivity the summary shows (input1.c: a value above 1e-4 is a multiple of
  // the molecular diffusivity of chlorine, a smaller one the diffusivity itself).
  for_section(Section::options, [&](const Record& r) {
    double y = 0;
    if (!starts_with_keyword(r.tokens[0], "DIFF") || r.tokens.size() < 2) return;
    const std::string where = " in [OPTIONS] section (EPANET error ";
    if (!epanet_float(r.tokens[1], y))
      fail(r.line, "illegal numeric value " + r.tokens[1] + where + "202)");
    if (y < 0.0) fail(r.line, "invalid option value " + r.tokens[1] + where + "213)");
    const double si = net_.units.si() ? 0.3048 * 0.3048 : 1.0;
    rpt.relative_diffusivity = y > 1e-4 ? y : y / si / 1.3e-8;
  });
  for_section(Section::report, [&](const Record& r) { read_report_line(r); });
}

void InpReader::read_report_line(const Record& r) {
  ReportOptions& rpt = net_.report;
  const auto& t = r.tokens;
  const std::size_t n = t.size() - 1;
  auto error = [&](int code, const char* words, const std::string& token) {
    fail(r.line, report_error(code, words, token));
  };
  if (n < 1) error(201, "syntax error", "");
  auto is = [&](std::size_t i, const char* keyword) { return starts_with_keyword(t[i], keyword); };
  if (is(0, "PAGE")) {
    double y = 0;
    if (!epanet_float(t[n], y)) error(202, "illegal numeric value", t[n]);
    if (y < 0.0 || y > 255.0) error(213, "invalid option value", t[n]);
    rpt.page_size = static_cast<int>(y);
  } else if (is(0, "STATUS")) {
    if (is(n, "NO")) rpt.status = ReportOptions::Status::no;
    if (is(n, "YES")) rpt.status = ReportOptions::Status::yes;
    if (is(n, "FULL")) rpt.status = ReportOptions::Status::full;
  } else if (is(0, "SUMM") || is(0, "MESS") || is(0, "ENER")) {
    bool& flag = is(0, "SUMM") ? rpt.summary : is(0, "MESS") ? rpt.messages : rpt.energy;
    if (is(n, "NO")) flag = false;
    if (is(n, "YES")) flag = true;
  } else if (is(0, "NODE") || is(0, "LINK")) {
    read_report_selection(r, is(0, "NODE"));
  } else if (read_report_field(r)) {
  } else if (is(0, "FILE")) {
    rpt.file = t[1];
  } else {
    error(201, "syntax error", "");
  }
}

// NODES/LINKS: NONE, ALL, or IDs (several lines add up). As EPANET reads the file in one pass, an
// ID must be defined above the [REPORT] line naming it.
void InpReader::read_report_selection(const Record& r, bool nodes) {
  ReportOptions& rpt = net_.report;
  const auto& t = r.tokens;
  const std::size_t n = t.size() - 1;
  ReportOptions::Selection& selection = nodes ? rpt.nodes : rpt.links;
  if (starts_with_keyword(t[n], "NONE")) {
    selection = ReportOptions::Selection::none;
    return;
  }
  if (starts_with_keyword(t[n], "ALL")) {
    selection = ReportOptions::Selection::all;
    return;
  }
  std::vector<char>& listed = nodes ? rpt.node_listed : rpt.link_listed;
  listed.resize(nodes ? net_.nodes.size() : net_.links.size());
  for (std::size_t i = 1; i <= n; ++i) {
    const int k = nodes ? net_.find_node(t[i]) : net_.find_link(t[i]);
    const long defined = k < 0 ? 0 : nodes ? net_.nodes[k].line : net_.links[k].line;
    if (k < 0 || defined > r.line)
      fail(r.line, nodes ? report_error(203, "undefined node", t[i])
                         : report_error(204, "undefined link", t[i]));
    listed[k] = 1;
  }
  selection = ReportOptions::Selection::some;
}

// A field line: NAME YES|NO, NAME BELOW|ABOVE|PRECISION value. False: not a field's name.
bool InpReader::read_report_field(const Record& r) {
  const auto& t = r.tokens;
  const int i = report_field_of(t[0]);
  if (i < 0) return false;
  ReportFieldOptions& f = net_.report.fields[i];
  auto error = [&](int code, const char* words, const std::string& token) {
    fail(r.line, report_error(code, words, token));
  };
  if (starts_with_keyword(t[1], "YES")) {
    f.enabled = true;
    return true;
  }
  if (starts_with_keyword(t[1], "NO")) {
    f.enabled = false;
    return true;
  }
  if (t.size() < 3) error(201, "syntax error", "");
  const bool below = starts_with_keyword(t[1], "BELOW"), above = starts_with_keyword(t[1], "ABOVE");
  if (!below && !above && !starts_with_keyword(t[1], "PREC"))
    error(213, "invalid option value", t[1]);
  double y = 0;
  if (!epanet_float(t[2], y)) error(202, "illegal numeric value", t[2]);
  if (below)
    f.below = y;
  else if (above)
    f.above = y;
  else {
    f.enabled = true;
    f.precision = epanet_round(y);
  }
  return true;
}

}  // namespace cgs::net::inp
