// The report file as EPANET 2.3.5's report.c writes it (epanet_report.hpp): its format strings
// (text.h) and its order of writing, line by line, pages included.
#include "network/epanet_report.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <ctime>

namespace cgs::net {
namespace {

constexpr double kBig = 1e10;  // EPANET's BIG: a limit beyond it is unset
constexpr double kTiny = 1e-6;
constexpr double kPi = M_PI;   // EPANET's PI where math.h defines M_PI

std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* fmt, ...) {
  char buffer[1024];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buffer, sizeof buffer, fmt, args);
  va_end(args);
  return buffer;
}

// EPANET's clocktime: h:mm:ss.
std::string clock(long seconds) {
  const long h = seconds / 3600, m = seconds % 3600 / 60, s = seconds - 3600 * h - 60 * m;
  return format("%01d:%02d:%02d", static_cast<int>(h), static_cast<int>(m), static_cast<int>(s));
}

std::string now_text() {  // ctime's text, its newline included
  const std::time_t t = std::time(nullptr);
  char buffer[64];
  return ctime_r(&t, buffer);
}

const char* link_word(LinkType t) {  // enumstxt.h LinkTxt
  switch (t) {
    case LinkType::cv_pipe: return "CV";
    case LinkType::pipe: return "Pipe";
    case LinkType::pump: return "Pump";
    case LinkType::prv: return "PRV";
    case LinkType::psv: return "PSV";
    case LinkType::pbv: return "PBV";
    case LinkType::fcv: return "FCV";
    case LinkType::tcv: return "TCV";
    case LinkType::gpv: return "GPV";
    case LinkType::pcv: return "PCV";
  }
  return "";
}

// enumstxt.h StatTxt, indexed as EPANET's status codes (LinkStatus, then the tanks' three).
enum TankState { kFilling = 8, kEmptying = 9, kOverflowing = 10 };
const char* status_text(int s) {
  static const char* text[] = {"closed because cannot deliver head",
                               "temporarily closed",
                               "closed",
                               "open",
                               "active",
                               "open but exceeds maximum flow",
                               "open but cannot deliver flow",
                               "open but cannot deliver pressure",
                               "filling",
                               "emptying",
                               "overflowing"};
  return s >= 0 && s <= 10 ? text[s] : "";
}
constexpr int kClosed = static_cast<int>(LinkStatus::closed);
constexpr int kOpen = static_cast<int>(LinkStatus::open);
constexpr int kActive = static_cast<int>(LinkStatus::active);
constexpr int kXhead = static_cast<int>(LinkStatus::xhead);
constexpr int kXflow = static_cast<int>(LinkStatus::xflow);
constexpr int kXfcv = static_cast<int>(LinkStatus::xfcv);

const char* flow_units_text(FlowUnits u) {  // enumstxt.h RptFlowUnitsTxt
  static const char* text[] = {"cfs", "gpm", "mgd", "Imgd", "a-f/d", "L/s",
                               "Lpm", "ML/d", "m3/h", "m3/d", "m3/s"};
  return text[static_cast<int>(u)];
}
const char* pressure_units_text(PressureUnits u) {  // enumstxt.h PressUnitsTxt
  switch (u) {
    case PressureUnits::psi: return "PSI";
    case PressureUnits::kpa: return "KPA";
    case PressureUnits::meters: return "METERS";
    case PressureUnits::bar: return "BAR";
    case PressureUnits::feet: return "FEET";
  }
  return "";
}

const char* node_word(const Node& n) {  // enumstxt.h NodeTxt
  return n.type == NodeType::junction ? "Junction" : n.type == NodeType::reservoir ? "Reservoir"
                                                                                   : "Tank";
}

// The fields' names and units as the tables' headers show them (input1.c initunits).
struct FieldText {
  const char* name;
  std::string units;
};
std::vector<FieldText> field_texts(const Network& net) {
  const bool si = net.units.si();
  const std::string flow = flow_units_text(net.units.flow_units);
  const std::string length = si ? "m" : "ft";
  return {{"Elevation", length},
          {"Demand", flow},
          {"Head", length},
          {"Pressure", pressure_units_text(net.units.pressure_units)},
          {"Quality", ""},
          {"Length", length},
          {"Diameter", si ? "mm" : "in"},
          {"Flow", flow},
          {"Velocity", si ? "m/s" : "fps"},
          {"Headloss", si ? "/1000m" : "/1000ft"},
          {"Quality", ""},
          {"State", ""},
          {"Setting", ""},
          {"Reaction", ""},
          {"F-Factor", ""}};
}

// EPANET's writeline: every line "\n  " + text, a page header where a page is full.
struct Lines {
  std::string out;
  long line_num = 0;
  int page_num = 1;
  int page_size = 0;
  std::string title;
  std::FILE* sink = nullptr;  // where the text goes once it is long (the tables), else kept

  void flush() {  // a failed write is the file's error (ferror), which its writer reports
    if (sink && !out.empty()) std::fwrite(out.data(), 1, out.size(), sink);
    out.clear();
  }
  void line(const std::string& s) {
    if (sink && out.size() > (1u << 20)) flush();
    if (line_num == page_size) {
      ++page_num;
      out += format("\n\f\n  Page %-d    %60.60s\n", page_num, title.c_str());
      line_num = 3;
    }
    out += "\n  ";
    out += s;
    ++line_num;
  }
  // writeheader's start: a new page where fewer than 11 lines remain, then a blank line.
  void table_gap() {
    if (line_num + 11 > page_size)
      while (line_num < page_size) line(" ");
    line(" ");
  }
};

// One reporting time as EPANET's output file holds it (output.c nodeoutput, linkoutput): per
// field (indexed by ReportField; elevation, length and diameter come from the network) a float32
// per node or link.
struct Period {
  long time = 0;
  std::vector<float> field[static_cast<int>(ReportField::count)];
  std::vector<float>& operator[](ReportField f) { return field[static_cast<int>(f)]; }
  const std::vector<float>& operator[](ReportField f) const { return field[static_cast<int>(f)]; }
};

// A pump's largest flow at speed 1 (EPANET's Qmax, cfs): where the curve's head reaches zero.
double pump_max_flow(const Network& net, const Pump& p) {
  if (p.type == PumpCurveType::constant_power) return kBig;
  if (p.type == PumpCurveType::custom) return net.curves[p.head_curve].x.back() / net.units.flow;
  return std::pow(-p.h0 / p.r, 1.0 / p.n);
}

// output.c linkoutput's setting: pipes' roughness and pumps' speed as they are, pressure and flow
// settings in the file's units, a general-purpose valve's 0.
double user_setting(const Network& net, const Link& l, double setting) {
  if (setting == static_cast<double>(static_cast<float>(kMissing))) return 0.0;
  switch (l.type) {
    case LinkType::prv:
    case LinkType::psv:
    case LinkType::pbv: return static_cast<float>(setting * net.units.pressure);
    case LinkType::fcv: return static_cast<float>(setting * net.units.flow);
    case LinkType::gpv: return 0.0;
    default: return static_cast<float>(setting);
  }
}
}  // namespace

struct EpanetReport::State {
  const Network& net;
  const ReportOptions& opt;
  std::string input_name;
  Lines lines;
  std::vector<FieldText> fields;
  const QualityEngine* quality = nullptr;  // the run's, where it has water quality
  ReportQualityText quality_text;
  std::vector<Period> periods;
  std::vector<int> old_status;  // links, then the tanks and reservoirs (EPANET's OldStatus)
  std::vector<double> pump_qmax;
  // The flow balance (flowbalance.c): the period's rates, then their sums over the run.
  double rates[7] = {}, sums[7] = {};
  bool rates_pending = false;
  bool failed = false;  // a period ended in EPANET's error 110: the report ends there
  std::string row;      // a table's line, its memory kept from line to line
  long duration = 0;
  // EPANET's Rtime for its output file: the first period at or after it is reported under its
  // clock (a later period's results where REPORT START is off the hydraulic steps, as EPANET's).
  long report_time = 0;

  State(const Network& n, std::string name)
      : net(n), opt(n.report), input_name(std::move(name)), fields(field_texts(n)) {
    lines.page_size = opt.page_size;
    lines.title = net.title_lines.empty() ? "" : net.title_lines[0];
    for (const Link& l : net.links)
      pump_qmax.push_back(l.pump >= 0 ? pump_max_flow(net, net.pumps[l.pump]) : 0.0);
  }
  bool enabled(ReportField f) const {
    // Without quality EPANET disables the node quality field (input1.c adjustdata).
    return (f != ReportField::quality || quality) && opt.field(f).enabled;
  }
  const std::string& units(ReportField f) const { return fields[static_cast<int>(f)].units; }
  bool time_in_minutes() const { return net.times.hydraulic_step < 1800; }
  double user_time(long s) const { return s / (time_in_minutes() ? 60.0 : 3600.0); }

  // EPANET's iteration count: the trial that balanced, or one past the last one allowed.
  int epanet_iterations(const PeriodSolve& p) const {
    if (p.converged) return p.trials;
    const HydraulicOptions& o = net.options;
    return o.max_trials + (o.extra_trials > 0 ? o.extra_trials : 0) + 1;
  }
  void logo();
  void summary();
  void limits(ReportField first, ReportField last);
  void status(long time, const PeriodSolve& p, const GradientAlgorithm& g);
  int warnings(long time, const PeriodSolve& p, const GradientAlgorithm& g);
  void disconnected(long time, const GradientAlgorithm& g);
  void hydraulic_error(long time, const PeriodSolve& p, const GradientAlgorithm& g);
  void balance_rates(const GradientAlgorithm& g);
  void trial(long time, const TrialReport& t);
  void capture(long time, const GradientAlgorithm& g);
  void flow_balance();
  void energy_table(const EnergyTable& e);
  void energy_header(bool continued);
  void results();
  Period statistic() const;
  void node_table(const Period& p);
  void link_table(const Period& p);
  void table_header(bool nodes, long time, bool continued);
};

void EpanetReport::State::logo() {
  lines.out = "  Page 1                                    " + now_text();
  lines.line_num = 2;
  lines.line("******************************************************************");
  lines.line("*                           E P A N E T                          *");
  lines.line("*                   Hydraulic and Water Quality                  *");
  lines.line("*                   Analysis for Pipe Networks                   *");
  lines.line("*                          Version 2.3.05                        *");
  lines.line("******************************************************************");
  lines.line("");
}

void EpanetReport::State::summary() {
  const HydraulicOptions& o = net.options;
  for (const std::string& t : net.title_lines) lines.line(format("%-.70s", t.c_str()));
  lines.line(" ");
  int junctions = net.junction_count, reservoirs = 0, tanks = 0, pipes = 0, pumps = 0, valves = 0;
  for (const Node& n : net.nodes) {
    reservoirs += n.type == NodeType::reservoir;
    tanks += n.type == NodeType::tank;
  }
  for (const Link& l : net.links) {
    pipes += l.type <= LinkType::pipe;
    pumps += l.type == LinkType::pump;
    valves += l.type > LinkType::pump;
  }
  static const char* formula[] = {"Hazen-Williams", "Darcy-Weisbach", "Chezy-Manning"};
  const char* time_units = time_in_minutes() ? "min" : "hrs";
  lines.line(format("    Input Data File ................... %s", input_name.c_str()));
  lines.line(format("    Number of Junctions................ %-d", junctions));
  lines.line(format("    Number of Reservoirs............... %-d", reservoirs));
  lines.line(format("    Number of Tanks ................... %-d", tanks));
  lines.line(format("    Number of Pipes ................... %-d", pipes));
  lines.line(format("    Number of Pumps ................... %-d", pumps));
  lines.line(format("    Number of Valves .................. %-d", valves));
  lines.line(format("    Headloss Formula .................. %s",
                    formula[static_cast<int>(o.formula)]));
  lines.line(format("    Nodal Demand Model ................ %s",
                    o.demand.model == DemandModel::pda ? "PDA" : "DDA"));
  lines.line(format("    Hydraulic Timestep ................ %-.2f %s",
                    user_time(net.times.hydraulic_step), time_units));
  lines.line(format("    Hydraulic Accuracy ................ %-.6f", o.accuracy));
  if (o.head_error_limit > 0)
    lines.line(format("    Headloss Error Limit .............. %-.6f %s",
                      o.head_error_limit * net.units.length, units(ReportField::head).c_str()));
  if (o.flow_change_limit > 0)
    lines.line(format("    Flow Change Limit ................. %-.6f %s",
                      o.flow_change_limit * net.units.flow, units(ReportField::flow).c_str()));
  lines.line(format("    Status Check Frequency ............ %-d", o.check_frequency));
  lines.line(format("    Maximum Trials Checked ............ %-d", o.max_check));
  lines.line(format("    Damping Limit Threshold ........... %-.6f", o.damp_limit));
  lines.line(format("    Maximum Trials .................... %-d", o.max_trials));
  for (const std::string& l : quality_summary_lines(net, duration, quality != nullptr))
    lines.line(l);
  lines.line(format("    Specific Gravity .................. %-.2f", o.specific_gravity));
  lines.line(format("    Relative Kinematic Viscosity ...... %-.2f", o.viscosity / 1.1e-5));
  lines.line(format("    Relative Chemical Diffusivity ..... %-.2f", opt.relative_diffusivity));
  lines.line(format("    Demand Multiplier ................. %-.2f", o.demand_multiplier));
  lines.line(format("    Total Duration .................... %-.2f %s", user_time(duration),
                    time_units));
  static const char* nodes[] = {"       No Nodes", "       All Nodes", "       Selected Nodes"};
  static const char* links[] = {"       No Links", "       All Links", "       Selected Links"};
  lines.line("    Reporting Criteria:");
  lines.line(nodes[static_cast<int>(opt.nodes)]);
  limits(ReportField::demand, ReportField::quality);
  lines.line(links[static_cast<int>(opt.links)]);
  limits(ReportField::diameter, ReportField::headloss);
  lines.line(" ");
}

void EpanetReport::State::limits(ReportField first, ReportField last) {
  for (int j = static_cast<int>(first); j <= static_cast<int>(last); ++j) {
    const ReportFieldOptions& f = opt.fields[j];
    if (f.below < kBig)
      lines.line(format("       with %s below %-.2f %s", fields[j].name, f.below,
                        fields[j].units.c_str()));
    if (f.above > -kBig)
      lines.line(format("       with %s above %-.2f %s", fields[j].name, f.above,
                        fields[j].units.c_str()));
  }
}

// EPANET's writehydstat: the trials, then the tanks and links whose status changed.
void EpanetReport::State::status(long time, const PeriodSolve& p, const GradientAlgorithm& g) {
  const std::string at = clock(time);
  const int iter = p.trials > 0 ? epanet_iterations(p) : 0;
  if (iter > 0) {
    if (p.relative_flow_change <= net.options.accuracy)
      lines.line(format("%10s: Balanced after %-d trials", at.c_str(), iter));
    else
      lines.line(format("%10s: Unbalanced after %-d trials (flow change = %-.6f)", at.c_str(),
                        iter, p.relative_flow_change));
    if (net.options.demand.model == DemandModel::pda && p.deficient_nodes > 0) {
      if (p.deficient_nodes == 1)
        lines.line(format("            1 node had its demand reduced by a total of %.2f%%",
                          p.demand_reduction));
      else
        lines.line(format("            %-d nodes had demands reduced by a total of %.2f%%",
                          p.deficient_nodes, p.demand_reduction));
    }
  }
  const int nlinks = static_cast<int>(net.links.size());
  for (int i = net.junction_count; i < static_cast<int>(net.nodes.size()); ++i) {
    const Node& n = net.nodes[i];
    const double q = g.node_demand(i);
    int s = old_status[nlinks + i - net.junction_count];
    if (std::abs(q) < 0.001)
      s = kClosed;
    else if (q < 0.0)
      s = kEmptying;
    else if (q > 0.0)
      s = n.type == NodeType::tank && std::abs(g.head(i) - n.max_head) < 0.001 ? kOverflowing
                                                                                : kFilling;
    int& old = old_status[nlinks + i - net.junction_count];
    if (s == old) continue;
    if (n.type == NodeType::tank)
      lines.line(format("%10s: Tank %s is %s at %-.2f %s", at.c_str(), n.id.c_str(), status_text(s),
                        (g.head(i) - n.elevation) * net.units.length,
                        units(ReportField::head).c_str()));
    else
      lines.line(format("%10s: Reservoir %s is %s", at.c_str(), n.id.c_str(), status_text(s)));
    old = s;
  }
  for (int k = 0; k < nlinks; ++k) {
    const int s = static_cast<int>(g.status(k));
    if (s == old_status[k]) continue;
    const Link& l = net.links[k];
    if (time == 0)
      lines.line(format("%10s: %s %s %s", at.c_str(), link_word(l.type), l.id.c_str(),
                        status_text(s)));
    else
      lines.line(format("%10s: %s %s changed from %s to %s", at.c_str(), link_word(l.type),
                        l.id.c_str(), status_text(old_status[k]), status_text(s)));
    old_status[k] = s;
  }
  lines.line(" ");
}

// EPANET's writehydwarn: unstable or unbalanced periods, negative pressures, valves and pumps
// that cannot do what is asked, then the disconnected junctions. Returns EPANET's warning flag.
int EpanetReport::State::warnings(long time, const PeriodSolve& p, const GradientAlgorithm& g) {
  const std::string at = clock(time);
  const HydraulicOptions& o = net.options;
  const int iter = epanet_iterations(p);
  const double relerr = p.relative_flow_change;
  int flag = 0;
  auto warn = [&](const std::string& text) {
    if (opt.messages) lines.line(text);
  };
  if (iter > o.max_trials && relerr <= o.accuracy) {
    warn(format("WARNING: Maximum trials exceeded at %s hrs. System may be unstable.", at.c_str()));
    flag = 2;
  }
  if (o.demand.model == DemandModel::dda) {
    int deficient = 0;
    for (int i = 0; i < net.junction_count; ++i)
      deficient += g.head(i) < net.nodes[i].elevation && g.node_demand(i) > 0.0;
    if (deficient > 0) {
      warn(format("WARNING: Negative pressures at %s hrs.", at.c_str()));
      flag = 6;
    }
  }
  for (int k : net.valves) {
    const int s = static_cast<int>(g.status(k));
    if (s < kXfcv) continue;
    const Link& l = net.links[k];
    warn(format("WARNING: %s %s %s at %s hrs.", link_word(l.type), l.id.c_str(), status_text(s),
                at.c_str()));
    flag = 5;
  }
  for (int k = 0; k < static_cast<int>(net.links.size()); ++k) {
    if (net.links[k].type != LinkType::pump) continue;
    int s = static_cast<int>(g.status(k));
    if (s >= kOpen) {
      if (g.flow(k) > g.setting(k) * pump_qmax[k]) s = kXflow;
      if (g.flow(k) < 0.0) s = kXhead;
    }
    if (s != kXhead && s != kXflow) continue;
    warn(format("WARNING: Pump %s %s at %s hrs.", net.links[k].id.c_str(), status_text(s),
                at.c_str()));
    flag = 4;
  }
  if (iter > o.max_trials && relerr > o.accuracy) {
    warn(format("WARNING: System unbalanced at %s hrs.%s", at.c_str(),
                o.extra_trials == -1 ? " EXECUTION HALTED." : ""));
    flag = 1;
  }
  if (flag > 0) {
    disconnected(time, g);
    if (opt.messages) lines.line(" ");
  }
  return flag;
}

// EPANET's disconnected, marknodes and getclosedlink: junctions with a demand that no tank,
// reservoir or supplying junction reaches through open links (check valves, PRVs and PSVs one
// way), the first ten named, and a closed link on the way from the last one.
void EpanetReport::State::disconnected(long time, const GradientAlgorithm& g) {
  const int nn = static_cast<int>(net.nodes.size()), nj = net.junction_count;
  // EPANET's adjacency lists: each link put at the head of both its ends' lists.
  std::vector<std::vector<std::pair<int, int>>> adj(nn);  // (link, other node), newest last
  for (int k = 0; k < static_cast<int>(net.links.size()); ++k) {
    adj[net.links[k].from].push_back({k, net.links[k].to});
    adj[net.links[k].to].push_back({k, net.links[k].from});
  }
  std::vector<char> marked(nn, 0);
  std::vector<int> list;
  for (int i = nj; i < nn; ++i) {
    list.push_back(i);
    marked[i] = 1;
  }
  for (int i = 0; i < nj; ++i)
    if (g.node_demand(i) < 0.0) {
      list.push_back(i);
      marked[i] = 1;
    }
  for (std::size_t n = 0; n < list.size(); ++n) {
    const auto& a = adj[list[n]];
    for (auto it = a.rbegin(); it != a.rend(); ++it) {
      const auto [k, j] = *it;
      if (marked[j]) continue;
      const Link& l = net.links[k];
      const bool one_way =
          l.type == LinkType::cv_pipe || l.type == LinkType::prv || l.type == LinkType::psv;
      if (one_way && j == l.from) continue;
      if (is_closed(g.status(k))) continue;
      marked[j] = 1;
      list.push_back(j);
    }
  }
  const std::string at = clock(time);
  int count = 0, last = -1;
  for (int i = 0; i < nj; ++i) {
    if (marked[i] || g.node_demand(i) == 0.0) continue;
    ++count;
    if (count <= 10 && opt.messages)
      lines.line(format("WARNING: Node %s disconnected at %s hrs", net.nodes[i].id.c_str(),
                        at.c_str()));
    last = i;
  }
  if (count == 0 || !opt.messages) return;
  if (count > 10)
    lines.line(format("WARNING: %d additional nodes disconnected at %s hrs", count - 10,
                      at.c_str()));
  std::vector<int> stack{last};
  marked[last] = 2;
  while (!stack.empty()) {
    const int i = stack.back();
    stack.pop_back();
    const auto& a = adj[i];
    for (auto it = a.rbegin(); it != a.rend(); ++it) {
      const int k = it->first, j = it->second;
      if (marked[j] == 2) continue;
      if (marked[j] == 1) {
        lines.line(format("WARNING: System disconnected because of Link %s",
                          net.links[k].id.c_str()));
        return;
      }
      marked[j] = 2;
      stack.push_back(j);
    }
  }
}

// report.c writehyderr: a period whose equations could not be solved (EPANET's error 110).
void EpanetReport::State::hydraulic_error(long time, const PeriodSolve& p,
                                          const GradientAlgorithm& g) {
  failed = true;
  int node = -1;
  for (const TrialReport& t : p.trial_reports)
    if (t.failed_junction >= 0) node = t.failed_junction;
  if (opt.messages && node >= 0)
    lines.line(format("%10s: System ill-conditioned at node %s", clock(time).c_str(),
                      net.nodes[node].id.c_str()));
  PeriodSolve none;  // writehydstat with no trials: the status changes alone
  none.converged = true;
  status(time, none, g);
  disconnected(time, g);
}

// flowbalance.c updateflowbalance: the rates of the period just solved (cfs).
void EpanetReport::State::balance_rates(const GradientAlgorithm& g) {
  enum { inflow, outflow, consumer, emitter, leakage, deficit, storage };
  double r[7] = {};
  for (int i = 0; i < net.junction_count; ++i) {
    const double v = g.delivered_demand(i);
    if (v < 0.0) {
      r[inflow] += -v;
    } else {
      r[consumer] += v;
      r[outflow] += v;
    }
    r[emitter] += g.emitter_flow(i);
    r[outflow] += g.emitter_flow(i);
    const double full = g.full_demand(i);
    if (net.options.demand.model == DemandModel::pda && full > 0.0 && full - v > 0.0)
      r[deficit] += full - v;
  }
  for (int i = net.junction_count; i < static_cast<int>(net.nodes.size()); ++i) {
    const double v = g.node_demand(i);
    if (net.nodes[i].type == NodeType::tank)
      r[storage] += v;
    else if (v >= 0.0)
      r[outflow] += v;
    else
      r[inflow] += -v;
  }
  for (int j = 0; j < 7; ++j) rates[j] = r[j];
  rates_pending = true;
}

// flowbalance.c endflowbalance and report.c writeflowbalance.
void EpanetReport::State::flow_balance() {
  const double seconds = duration > 0 ? static_cast<double>(duration) : 1.0;
  double q[7];
  for (int j = 0; j < 7; ++j) q[j] = sums[j] / seconds;
  double qin = q[0], qout = q[1];
  if (q[6] > 0.0)
    qout += q[6];
  else
    qin -= q[6];
  const double ratio = qin == qout ? 1.0 : qin > 0.0 ? qout / qin : 0.0;
  const double u = net.units.flow;
  lines.line(format("Hydraulic Flow Balance (%s)", units(ReportField::demand).c_str()));
  lines.line("================================");
  lines.line(format("Total Inflow:      %12.3f", q[0] * u));
  lines.line(format("Consumer Demand:   %12.3f", q[2] * u));
  lines.line(format("Demand Deficit:    %12.3f", q[5] * u));
  lines.line(format("Emitter Flow:      %12.3f", q[3] * u));
  lines.line(format("Leakage Flow:      %12.3f", q[4] * u));
  lines.line(format("Total Outflow:     %12.3f", q[1] * u));
  lines.line(format("Storage Flow:      %12.3f", q[6] * u));
  lines.line(format("Flow Ratio:        %12.3f", ratio));
  lines.line("================================\n");
}

// STATUS FULL (hydsolver.c): a period's first trial opens with "Balancing the network", each
// trial its relative flow change, the control valves' switches (valvestatus), the largest flow
// change and head loss error where the flows are within ACCURACY (reporthydbal), then the other
// links' switches (linkstatus, pswitch); a switch as writestatchange groups statuses (open,
// closed or active).
void EpanetReport::State::trial(long time, const TrialReport& t) {
  if (t.failed_junction >= 0) return;
  if (t.trial == 1) lines.line(format("%10s: Balancing the network:\n", clock(time).c_str()));
  lines.line(format("            Trial %2d: relative flow change = %-.6f", t.trial,
                    t.relative_flow_change));
  auto group = [](LinkStatus s) {
    return s == LinkStatus::active ? kActive : is_closed(s) ? kClosed : kOpen;
  };
  auto switches = [&](bool control_valves) {
    for (std::size_t c = 0; c < t.status_changes.size(); ++c) {
      const Link& l = net.links[t.status_changes[c].first];
      const bool valve =
          l.type == LinkType::prv || l.type == LinkType::psv || l.type == LinkType::fcv;
      const int from = group(t.previous_statuses[c]), to = group(t.status_changes[c].second);
      if (valve == control_valves && from != to)
        lines.line(format("            %s %s switched from %s to %s", link_word(l.type),
                          l.id.c_str(), status_text(from), status_text(to)));
    }
  };
  switches(true);
  if (t.balance_checked) {
    const double q = t.max_flow_change * net.units.flow;
    if (t.max_flow_link >= 0)
      lines.line(format("                      maximum  flow change = %.4f for Link %s", q,
                        net.links[t.max_flow_link].id.c_str()));
    else if (t.max_flow_node >= 0)
      lines.line(format("                      maximum  flow change = %.4f for Node %s", q,
                        net.nodes[t.max_flow_node].id.c_str()));
    lines.line(format("                      maximum  head error  = %.4f for Link %s\n",
                      t.max_head_error * net.units.length,
                      net.links[t.max_head_link].id.c_str()));
  }
  switches(false);
}

// A reporting time's results as EPANET writes them: its hydraulics file's float32 demands, heads,
// flows (0 for closed links), statuses and settings (savehyd), read back and turned into the
// output file's values (output.c nodeoutput, linkoutput).
void EpanetReport::State::capture(long time, const GradientAlgorithm& g) {
  Period p;
  p.time = time;
  const UnitSystem& u = net.units;
  const std::size_t nn = net.nodes.size(), nl = net.links.size();
  std::vector<double> head(nn);
  for (ReportField f : {ReportField::demand, ReportField::head, ReportField::pressure,
                        ReportField::quality})
    p[f].resize(nn);
  for (std::size_t i = 0; i < nn; ++i) {
    const int n = static_cast<int>(i);
    const double demand = static_cast<float>(g.node_demand(n));
    head[i] = static_cast<float>(g.head(n));
    p[ReportField::demand][i] = static_cast<float>(demand * u.flow);
    p[ReportField::head][i] = static_cast<float>(head[i] * u.length);
    p[ReportField::pressure][i] = static_cast<float>((head[i] - net.nodes[i].elevation) * u.pressure);
  }
  for (int f = static_cast<int>(ReportField::flow); f < static_cast<int>(ReportField::count); ++f)
    p.field[f].resize(nl);
  // The friction factor costs a power per link: only where it is shown or limits the table.
  const ReportFieldOptions& ff = opt.field(ReportField::friction);
  const bool friction = ff.enabled || ff.below < kBig || ff.above > -kBig;
  for (std::size_t k = 0; k < nl; ++k) {
    const int kk = static_cast<int>(k);
    const Link& l = net.links[k];
    const int status = static_cast<int>(g.status(kk));
    const double q = status <= kClosed ? 0.0 : static_cast<double>(static_cast<float>(g.flow(kk)));
    const double dh = head[l.from] - head[l.to];
    const bool pipe = l.type <= LinkType::pipe, pump = l.type == LinkType::pump;
    p[ReportField::flow][k] = static_cast<float>(q * u.flow);
    if (!pump)
      p[ReportField::velocity][k] =
          static_cast<float>(std::abs(q) / (kPi * l.diameter * l.diameter / 4.0) * u.length);
    if (status > kClosed) {
      const double h = pump ? dh : std::abs(dh);
      p[ReportField::headloss][k] = static_cast<float>(pipe ? 1000.0 * h / l.length : h * u.length);
    }
    p[ReportField::status][k] = static_cast<float>(status);
    // A pipe's setting is its roughness (EPANET's LinkSetting = Kc).
    const double setting = static_cast<float>(pipe ? l.roughness : g.setting(kk));
    p[ReportField::setting][k] = static_cast<float>(user_setting(net, l, setting));
    if (friction && pipe && std::abs(q) > kTiny)
      p[ReportField::friction][k] =
          static_cast<float>(39.725 * std::abs(dh) * std::pow(l.diameter, 5) / l.length / (q * q));
  }
  if (quality)  // the engine before its period starts, as the .out's
    capture_quality(*quality, p[ReportField::quality], p[ReportField::link_quality],
                    p[ReportField::reaction]);
  periods.push_back(std::move(p));
}

// THE ENERGY TABLE (report.c writeenergy): its numbers come from the energy computation
// (network/energy.hpp's EnergyReport, per pump: utilisation %, efficiency %, kWh per volume,
// average kW, peak kW, cost per day; the demand charge).
void EpanetReport::State::energy_table(const EnergyTable& e) {
  if (e.pumps.empty()) return;
  lines.line(" ");
  energy_header(false);
  double total = 0;
  for (const EnergyTableRow& r : e.pumps) {
    total += r.cost_per_day;
    if (lines.line_num == lines.page_size) energy_header(true);
    lines.line(format("%-8s  %6.2f %6.2f %9.2f %9.2f %9.2f %9.2f", r.pump.c_str(), r.utilisation,
                      r.efficiency, r.kwh_per_volume, r.average_kw, r.peak_kw, r.cost_per_day));
  }
  lines.line(std::string(64, '-'));
  lines.line(format("%38s Demand Charge: %9.2f", "", e.demand_charge));
  lines.line(format("%38s Total Cost:    %9.2f", "", total + e.demand_charge));
  lines.line(" ");
}

void EpanetReport::State::energy_header(bool continued) {
  lines.table_gap();
  lines.line(std::string("Energy Usage:") + (continued ? " (continued)" : ""));
  lines.line(std::string(64, '-'));
  lines.line("           Usage   Avg.     Kw-hr      Avg.      Peak      Cost");
  lines.line(format("Pump      Factor Effic.     %s        Kw        Kw      /day",
                    net.units.si() ? "  /m3" : "/Mgal"));
  lines.line(std::string(64, '-'));
}

// report.c writeheader for the node and link tables.
void EpanetReport::State::table_header(bool nodes, long time, bool continued) {
  lines.table_gap();
  const char* what = nodes ? "Node" : "Link";
  static const char* statistic[] = {"NONE", "AVERAGE", "MINIMUM", "MAXIMUM", "DIFFERENTIAL"};
  std::string title =
      net.times.statistic != TimeOptions::Statistic::series
          ? format("%s %s Results:", statistic[static_cast<int>(net.times.statistic)], what)
      : duration == 0 ? format("%s Results:", what)
                      : format("%s Results at %s hrs:", what, clock(time).c_str());
  if (continued) title += " (continued)";
  lines.line(title);
  std::string names(15, ' '), units_line = format("%-15s", what);
  const int first = nodes ? 0 : static_cast<int>(ReportField::length);
  const int last = nodes ? static_cast<int>(ReportField::quality)
                         : static_cast<int>(ReportField::friction);
  for (int j = first; j <= last; ++j) {
    if (!enabled(static_cast<ReportField>(j))) continue;
    const bool chemical = j == static_cast<int>(ReportField::quality);  // ChemName, ChemUnits
    names += format("%10s", chemical ? quality_text.name.c_str() : fields[j].name);
    units_line += format("%10s", (chemical ? quality_text.units : fields[j].units).c_str());
  }
  const std::string dashes(names.size() + 1, '-');
  lines.line(dashes);
  lines.line(names);
  lines.line(units_line);
  lines.line(dashes);
}

namespace {
// A table's value as EPANET's "%10.2e" (beyond a million) or "%10.*f": std::to_chars writes what
// printf writes (the exact value rounded, C locale), several times faster (a report of every node
// and link has millions of them).
void append_value(std::string& s, double y, int precision) {
  if (precision < 0) precision = 6;  // printf's default for a negative precision
  char buffer[400];
  const bool big = std::fabs(y) > 1e6;
  const auto r = big ? std::to_chars(buffer, buffer + sizeof buffer, y,
                                     std::chars_format::scientific, 2)
                     : std::to_chars(buffer, buffer + sizeof buffer, y, std::chars_format::fixed,
                                     precision);
  const std::size_t n = r.ec == std::errc() ? static_cast<std::size_t>(r.ptr - buffer) : 0;
  if (n < 10) s.append(10 - n, ' ');
  s.append(buffer, n);
}

// An ID as "%-15s".
void append_id(std::string& s, const std::string& id) {
  s += id;
  if (id.size() < 15) s.append(15 - id.size(), ' ');
}
}  // namespace

// report.c writenodetable: the values as EPANET's output file holds them (float32).
void EpanetReport::State::node_table(const Period& p) {
  table_header(true, p.time, false);
  constexpr int kFields = static_cast<int>(ReportField::quality) + 1;
  for (std::size_t i = 0; i < net.nodes.size(); ++i) {
    const Node& node = net.nodes[i];
    if (opt.nodes != ReportOptions::Selection::all &&
        (i >= opt.node_listed.size() || !opt.node_listed[i]))
      continue;
    double y[kFields];
    y[0] = node.elevation * net.units.length;
    for (int j = 1; j < kFields; ++j) y[j] = p.field[j][i];
    bool shown = true;
    for (int j = 0; j < kFields; ++j)
      shown = shown && !(y[j] > opt.fields[j].below || y[j] < opt.fields[j].above);
    if (!shown) continue;
    if (lines.line_num == lines.page_size) table_header(true, p.time, true);
    std::string& s = row;
    s.clear();
    append_id(s, node.id);
    for (int j = 0; j < kFields; ++j)
      if (enabled(static_cast<ReportField>(j))) append_value(s, y[j], opt.fields[j].precision);
    if (node.type != NodeType::junction) s += std::string("  ") + node_word(node);
    lines.line(s);
  }
  lines.line(" ");
}

// report.c writelinktable, from output.c linkoutput's values.
void EpanetReport::State::link_table(const Period& p) {
  table_header(false, p.time, false);
  const UnitSystem& u = net.units;
  constexpr int kFirst = static_cast<int>(ReportField::length);
  constexpr int kCount = static_cast<int>(ReportField::count);
  for (std::size_t k = 0; k < net.links.size(); ++k) {
    const Link& l = net.links[k];
    if (opt.links != ReportOptions::Selection::all &&
        (k >= opt.link_listed.size() || !opt.link_listed[k]))
      continue;
    double y[kCount];
    y[kFirst] = l.length * u.length;
    y[kFirst + 1] = l.diameter * u.diameter;
    for (int j = kFirst + 2; j < kCount; ++j) y[j] = p.field[j][k];
    const int status = static_cast<int>(y[static_cast<int>(ReportField::status)]);
    bool shown = true;
    for (int j = kFirst + 1; j < kCount; ++j)
      shown = shown && !(y[j] > opt.fields[j].below || y[j] < opt.fields[j].above);
    if (!shown) continue;
    if (lines.line_num == lines.page_size) table_header(false, p.time, true);
    std::string& s = row;
    s.clear();
    append_id(s, l.id);
    for (int j = kFirst; j < kCount; ++j) {
      if (!enabled(static_cast<ReportField>(j))) continue;
      if (j == static_cast<int>(ReportField::status))
        s += format("%10s", status_text(status <= kClosed ? kClosed
                                        : status == kActive ? kActive
                                                            : kOpen));
      else
        append_value(s, y[j], opt.fields[j].precision);
    }
    if (l.type > LinkType::pipe) s += std::string("  ") + link_word(l.type);
    lines.line(s);
  }
  lines.line(" ");
}

// output.c savetimestat: STATISTIC's one period, in float32 as EPANET sums it; flows as their
// size, statuses as open (1) or not (0), then open where at least half.
Period EpanetReport::State::statistic() const {
  using S = TimeOptions::Statistic;
  const S stat = net.times.statistic;
  Period out;
  out.time = periods.front().time;
  const float count = static_cast<float>(periods.size());
  for (int j = 1; j < static_cast<int>(ReportField::count); ++j) {
    const std::size_t n = periods.front().field[j].size();
    std::vector<float> low(n, 1e10f), high(n, -1e10f), sum(n, 0.0f);
    for (const Period& p : periods)
      for (std::size_t i = 0; i < n; ++i) {
        float x = p.field[j][i];
        if (j == static_cast<int>(ReportField::flow)) x = std::fabs(x);
        if (j == static_cast<int>(ReportField::status)) x = x >= kOpen ? 1.0f : 0.0f;
        sum[i] += x;
        low[i] = std::min(low[i], x);
        high[i] = std::max(high[i], x);
      }
    std::vector<float>& x = out.field[j];
    x.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      x[i] = stat == S::average   ? sum[i] / count
             : stat == S::minimum ? low[i]
             : stat == S::maximum ? high[i]
                                  : high[i] - low[i];
      if (j == static_cast<int>(ReportField::status)) x[i] = x[i] < 0.5f ? kClosed : kOpen;
    }
  }
  return out;
}

// report.c writeresults: the tables of every reporting time, where any are asked for.
void EpanetReport::State::results() {
  if (opt.nodes == ReportOptions::Selection::none && opt.links == ReportOptions::Selection::none)
    return;
  int node_fields = 0, link_fields = 0;
  for (int j = 0; j < static_cast<int>(ReportField::count); ++j)
    (j <= static_cast<int>(ReportField::quality) ? node_fields : link_fields) +=
        enabled(static_cast<ReportField>(j));
  // Room for the tables at once where they stay in memory (a report of every node and link can
  // be tens of megabytes; written to a file, they go out a megabyte at a time).
  const std::size_t rows = (opt.nodes == ReportOptions::Selection::all ? net.nodes.size() : 0) *
                               (24 + 10 * node_fields) +
                           (opt.links == ReportOptions::Selection::all ? net.links.size() : 0) *
                               (24 + 10 * link_fields);
  if (!lines.sink) lines.out.reserve(lines.out.size() + periods.size() * rows);
  if (net.times.statistic != TimeOptions::Statistic::series && !periods.empty()) {
    periods = {statistic()};
  }
  for (const Period& p : periods) {
    if (node_fields > 0 && opt.nodes != ReportOptions::Selection::none) node_table(p);
    if (link_fields > 0 && opt.links != ReportOptions::Selection::none) link_table(p);
  }
}

EpanetReport::EpanetReport(const Network& net, std::string input_name)
    : state_(std::make_unique<State>(net, std::move(input_name))) {}
EpanetReport::~EpanetReport() = default;

void EpanetReport::attach(SimulationOptions& sim, const QualityEngine* quality) {
  State& st = *state_;
  st.duration = sim.duration >= 0 ? sim.duration : st.net.times.duration;
  st.report_time = st.net.times.report_start;
  st.quality = quality;
  if (quality) {
    st.quality_text = report_quality_text(st.net);
    st.fields[static_cast<int>(ReportField::quality)].units = st.quality_text.field_units;
    st.fields[static_cast<int>(ReportField::reaction)].units = st.quality_text.reaction_units;
  }
  st.logo();
  if (st.opt.summary) st.summary();
  st.lines.line("Analysis begun " + now_text());
  const bool status = st.opt.status != ReportOptions::Status::no;
  const bool full = st.opt.status == ReportOptions::Status::full;
  if (status) {
    st.lines.table_gap();
    st.lines.line("Hydraulic Status:");
    st.lines.line(std::string(71, '-'));
  }
  sim.on_start = [&st](GradientAlgorithm& g, std::vector<double>&) {
    const int nl = static_cast<int>(st.net.links.size());
    st.old_status.assign(nl + st.net.nodes.size() - st.net.junction_count,
                         static_cast<int>(LinkStatus::temp_closed));
    for (int k = 0; k < nl; ++k) st.old_status[k] = static_cast<int>(g.status(k));
  };
  if (status) {
    sim.on_control = [&st](long time, int link, int control) {
      const Link& l = st.net.links[link];
      const Control& c = st.net.controls[control];
      const std::string at = clock(time);
      if (c.node >= 0)
        st.lines.line(format("%10s: %s %s changed by %s %s control", at.c_str(),
                             link_word(l.type), l.id.c_str(), node_word(st.net.nodes[c.node]),
                             st.net.nodes[c.node].id.c_str()));
      else
        st.lines.line(format("%10s: %s %s changed by timer control", at.c_str(),
                             link_word(l.type), l.id.c_str()));
    };
    sim.on_rule = [&st](long time, int link, int rule) {
      const Link& l = st.net.links[link];
      st.lines.line(format("%10s: %s %s changed by rule %s", clock(time).c_str(),
                           link_word(l.type), l.id.c_str(), st.net.rules[rule].label.c_str()));
    };
  }
  if (full) {
    sim.run.trace = true;
    sim.on_trial = [&st](long time, const TrialReport& t) { st.trial(time, t); };
  }
  sim.on_solved = [&st, status](long time, const PeriodSolve& p, const GradientAlgorithm& g) {
    if (!p.error.empty()) return st.hydraulic_error(time, p, g);
    if (status) st.status(time, p, g);
    st.warnings(time, p, g);
    st.balance_rates(g);
    if (time >= st.report_time && time <= st.duration) {
      st.capture(st.report_time, g);
      st.report_time += st.net.times.report_step;
    }
  };
  // A step hook already there (the energy meter and the .out's warnings) runs first, as before.
  sim.on_step = [&st, before = std::move(sim.on_step)](const StepReport& r) {
    if (before) before(r);
    if (!st.rates_pending) return;
    st.rates_pending = false;
    const double dt = st.duration == 0 ? 1.0 : r.time < st.duration ? r.length : 0.0;
    for (int j = 0; j < 7; ++j) st.sums[j] += st.rates[j] * dt;
  };
}

std::string EpanetReport::text(const SimulationResults& run, const EnergyTable* energy) {
  finish(run, energy);
  return std::move(state_->lines.out);
}

void EpanetReport::write(std::FILE* file, const SimulationResults& run,
                         const EnergyTable* energy) {
  state_->lines.sink = file;
  finish(run, energy);
  state_->lines.flush();
  state_->lines.sink = nullptr;
}

void EpanetReport::finish(const SimulationResults& run, const EnergyTable* energy) {
  State& st = *state_;
  if (st.failed) {  // EPANET's errmsg, and nothing after it
    if (st.opt.messages)
      st.lines.line("Error 110: cannot solve network hydraulic equations");
    return;
  }
  if (run.error.empty()) {
    const bool status = st.opt.status != ReportOptions::Status::no;
    if (status) st.flow_balance();
    if (status && st.quality)
      for (const std::string& l : mass_balance_lines(st.net, st.quality->mass_balance()))
        st.lines.line(l);
    st.lines.line("Analysis ended " + now_text());
  }
  if (st.opt.energy && energy) st.energy_table(*energy);
  st.results();
}

}  // namespace cgs::net
