// A water network as EPANET describes it, held in EPANET's internal units (feet, cubic feet per
// second, seconds) so the hydraulic formulas are the same whatever units the .inp file used.
// `UnitSystem` converts back to the file's units for reports.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "network/id_index.hpp"
#include "network/quality/quality_input.hpp"

namespace cgs::net {

// "No value given" marker for settings, as EPANET's MISSING: a valve whose setting is missing has
// its status fixed to OPEN or CLOSED.
inline constexpr double kMissing = -1.0e10;

enum class FlowUnits { cfs, gpm, mgd, imgd, afd, lps, lpm, mld, cmh, cmd, cms };
enum class PressureUnits { psi, meters, kpa, bar, feet };
enum class HeadlossFormula { hazen_williams, darcy_weisbach, chezy_manning };

// Factors from internal units to the file's units: user = internal * factor.
struct UnitSystem {
  FlowUnits flow_units = FlowUnits::gpm;
  PressureUnits pressure_units = PressureUnits::psi;
  double flow = 1;      // per cfs
  double length = 1;    // ft or m per ft (elevation, head, length)
  double diameter = 1;  // inches or mm per ft
  double pressure = 1;  // psi, m or kPa per ft of water
  double power = 1;     // hp or kW per hp
  double volume = 1;    // ft^3 or m^3 per ft^3
  bool si() const { return flow_units >= FlowUnits::lps; }
};

enum class NodeType { junction, reservoir, tank };

struct Demand {
  double base = 0;   // cfs
  int pattern = -1;  // index into Network::patterns, -1: the default pattern
};

struct Node {
  std::string id;
  NodeType type = NodeType::junction;
  double elevation = 0;  // ft; for a reservoir, its head
  std::vector<Demand> demands;
  double emitter = 0;     // head loss coefficient (ft per cfs^emitter_exponent), 0: none
  int head_pattern = -1;  // reservoirs
  // Tanks, as EPANET's Stank in internal units and computed in EPANET's order (tankdata,
  // inittanks, convertunits), so that volumes and the full/empty tests agree to the last bit:
  // levels become heads; volumes come from the diameter (or the volume curve), the minimum volume
  // given in the file replacing area x minimum level.
  double initial_head = 0, min_head = 0, max_head = 0;  // ft; a reservoir's initial_head: its head
  double diameter = 0;                                  // ft, nominal for a volume-curve tank
  double area = 0;                                      // ft^2, EPANET's tank->A
  double initial_volume = 0, min_volume = 0, max_volume = 0;  // ft^3
  int volume_curve = -1;
  bool can_overflow = false;
  long line = 0;               // where it was defined, for messages
};

// In EPANET's order (a type > pump is a valve); pcv: EPANET 2.3's positional control valve.
enum class LinkType { cv_pipe, pipe, pump, prv, psv, pbv, fcv, tcv, gpv, pcv };

// Ordered as EPANET's status codes: everything up to `closed` means "no flow".
enum class LinkStatus { xhead, temp_closed, closed, open, active, xflow, xfcv, xpressure };
inline bool is_closed(LinkStatus s) { return s <= LinkStatus::closed; }

enum class PumpCurveType { constant_power, power_function, custom };

struct Pump {
  PumpCurveType type = PumpCurveType::power_function;
  int head_curve = -1;  // custom curves, in the file's units
  double power = 0;     // hp (constant power pumps)
  // Head gain = h0 - r q^n for power-function pumps (internal units); for constant power,
  // head gain = r / q with r = 8.814 * hp.
  double h0 = 0, r = 0, n = 1;
  double q0 = 0;        // initial flow (cfs) at speed 1
  double max_head = 0;  // shutoff head (ft), the limit pumpstatus checks
  double max_flow = 0;  // cfs at speed 1 where the curve ends (EPANET's Qmax; 1e10: no limit)
  int speed_pattern = -1;
  // [ENERGY] PUMP id EFFIC / PRICE / PATTERN (network/energy.hpp): -1 or 0 where not given, the
  // global values then apply.
  int efficiency_curve = -1;  // percent against flow in the file's units
  double price = 0;           // per kWh
  int price_pattern = -1;
};

// [ENERGY]'s global values (EPANET's Epump, Ecost, Epat, Dcost).
struct EnergyOptions {
  double efficiency = 75;  // percent, for pumps without an efficiency curve
  double price = 0;        // per kWh
  int price_pattern = -1;
  double demand_charge = 0;  // per kW of the run's peak total pump power
};

struct Link {
  std::string id;
  LinkType type = LinkType::pipe;
  int from = 0, to = 0;   // node indices
  double length = 0;      // ft
  double diameter = 0;    // ft
  double roughness = 0;   // H-W C, D-W roughness (ft) or Manning n
  double minor_loss = 0;  // converted to a Q^2 basis: h = minor_loss * q^2
  // Initial status and setting: pump speed, valve setting (internal units), TCV loss coefficient,
  // GPV curve index, PCV % open; kMissing where the status is fixed.
  LinkStatus status = LinkStatus::open;
  double setting = 0;
  // A PCV's curve (EPANET's Valve.Curve: x % open, y the flow coefficient Kv as % of the fully
  // open one; -1: none, Kv linear in % open), and the % open that [VALVES] or a [STATUS] number
  // last gave (EPANET's Kc, kept where [STATUS] fixes the status: inithyd's resistcoeff computes
  // the valve's loss coefficient from it whatever the status).
  int valve_curve = -1;
  double pcv_setting = 0;
  // A pipe's leaks ([LEAKAGE], EPANET 2.3's FAVAD model): the leak area (mm^2) and its growth
  // with pressure head (mm^2 per m of head), per 100 ft of pipe (the file's per 100 m or 100 ft,
  // times its length unit per ft, as EPANET's convertunits).
  double leak_area = 0, leak_expansion = 0;
  int pump = -1;  // index into Network::pumps
  long line = 0;
};

struct Pattern {
  std::string id;
  std::vector<double> factors;
};

struct Curve {
  std::string id;
  std::vector<double> x, y;  // in the file's units
};

enum class ControlType { low_level, high_level, timer, time_of_day };

// A simple control ([CONTROLS]); levels are heads (tanks) or heads (junction pressure + elevation).
struct Control {
  int link = 0;
  ControlType type = ControlType::timer;
  int node = -1;
  double grade = 0;  // ft
  long time = 0;     // s
  LinkStatus status = LinkStatus::active;
  double setting = kMissing;
  long line = 0;
};

enum class DemandModel { dda, pda };

// EPANET's MINPDIFF: the smallest gap between the minimum and the required pressure of
// pressure-driven demand, in the file's pressure units (psi, m or kPa) as EPANET checks it.
inline constexpr double kMinPressureDifference = 0.1;

// Pressure-driven demand (EPANET 2.2+'s DEMAND MODEL PDA): a junction delivers nothing at or below
// the minimum pressure, its full demand at or above the required pressure, and
// full x ((p - min) / (req - min))^exponent between. The pressures are kept in the file's units,
// as EPANET keeps them until it converts its units, so its limits are checked on the numbers the
// file (or the command line) gave; the gradient algorithm converts them.
struct DemandModelOptions {
  DemandModel model = DemandModel::dda;
  double minimum_pressure = 0;
  double required_pressure = kMinPressureDifference;  // EPANET's default
  double exponent = 0.5;
};

// EPANET's rules for the PDA limits, as the .inp reader applies them line by line (input3.c): a
// MINIMUM PRESSURE given while the required pressure is still at its default moves the required
// pressure to minimum + MINPDIFF; otherwise the two must stay MINPDIFF apart (error 208). Each
// returns an empty string, or why the value is refused with EPANET's error code.
std::string set_minimum_pressure(DemandModelOptions& d, double value);
std::string set_required_pressure(DemandModelOptions& d, double value);
std::string set_pressure_exponent(DemandModelOptions& d, double value);
// EPANET's EN_setdemandmodel check of the whole set for PDA (error 208): exponent > 0, minimum
// >= 0, required >= minimum + MINPDIFF. Empty when valid (or DDA).
std::string pda_limits_error(const DemandModelOptions& d);
std::string to_string(DemandModel model);

struct HydraulicOptions {
  HeadlossFormula formula = HeadlossFormula::hazen_williams;
  double viscosity = 1.1e-5;  // ft^2/s
  double specific_gravity = 1;
  int max_trials = 200;
  double accuracy = 0.001;
  int extra_trials = -1;  // UNBALANCED: -1 stop, n >= 0 continue n more trials
  double demand_multiplier = 1;
  double emitter_exponent = 2;     // internal: head loss ~ q^(1/user exponent)
  double head_tolerance = 0.0005;  // ft (EPANET's Htol)
  double flow_tolerance = 0.0001;  // cfs (Qtol)
  double rq_tolerance = 1e-7;      // low-flow linearisation limit of the head loss gradient
  int check_frequency = 2;
  int max_check = 10;
  double damp_limit = 0;
  // HEADERROR and FLOWCHANGE, in the file's units (head, flow) as read; 0: not checked.
  double head_error_limit = 0;
  double flow_change_limit = 0;
  bool emitter_backflow = true;
  std::string default_pattern_id = "1";
  DemandModelOptions demand;
};

// [TIMES], in seconds, after EPANET's adjustdata: a hydraulic step no longer than the pattern
// and report steps, a report step of 0 taking the pattern step, a rule step of 0 a tenth of the
// hydraulic step (and never more than it), a report start beyond the duration reset to 0.
struct TimeOptions {
  long duration = 0;
  long hydraulic_step = 3600;
  long pattern_step = 3600, pattern_start = 0;
  long report_step = 3600, report_start = 0;
  long rule_step = 360;
  long start_clocktime = 0;  // time of day at time 0, mod 24 h
  // STATISTIC: what EPANET's output file and report hold instead of the series (EPANET's
  // Tstatflag, in its order): the .out's and the .rpt's one table of the reporting times'
  // average, minimum, maximum or range.
  enum class Statistic { series, average, minimum, maximum, range } statistic = Statistic::series;
};

// [RULES]: IF/AND/OR premises, THEN/ELSE actions, PRIORITY (EPANET's rules.c). Values are kept in
// the file's units, as EPANET compares them (with its tolerance of 0.001) in those units.
enum class RuleObject { node, link, system };
enum class RuleVariable {
  demand,
  head,
  grade,
  level,
  pressure,
  flow,
  status,
  setting,
  power,
  time,
  clocktime,
  filltime,
  draintime
};
enum class RuleRelation { eq, ne, le, ge, lt, gt };
enum class RuleState { none, open, closed, active };  // a status value; none: a number

struct RulePremise {
  bool or_ = false;  // joined to the ones before by OR (else AND)
  RuleObject object = RuleObject::system;
  int index = -1;  // node or link
  RuleVariable variable = RuleVariable::demand;
  RuleRelation relation = RuleRelation::eq;
  RuleState state = RuleState::none;
  double value = kMissing;  // seconds for TIME, CLOCKTIME, FILLTIME, DRAINTIME
};

struct RuleAction {
  int link = -1;
  RuleState state = RuleState::none;
  double setting = kMissing;  // the file's units; kMissing: a status action
};

struct Rule {
  std::string label;
  double priority = 0;
  std::vector<RulePremise> premises;
  std::vector<RuleAction> then_actions, else_actions;
  long line = 0;
};

// [REPORT] as EPANET 2.3.5 reads it (input3.c reportdata, input1.c initreport): what the report
// file (network/epanet_report.hpp) shows. The fields in EPANET's order (enumstxt.h Fldname).
enum class ReportField {
  elevation,
  demand,
  head,
  pressure,
  quality,
  length,
  diameter,
  flow,
  velocity,
  headloss,
  link_quality,
  status,
  setting,
  reaction,
  friction,
  count
};
struct ReportFieldOptions {
  bool enabled = false;
  int precision = 2;
  // Shown only where value <= below and value >= above (EPANET's RptLim, SQR(BIG) when unset).
  double below = 1e20, above = -1e20;
};
struct ReportOptions {
  enum class Status { no, yes, full };
  enum class Selection { none, all, some };
  int page_size = 0;  // lines a page, 0: no pages
  Status status = Status::no;
  bool summary = true, messages = true, energy = false;
  Selection nodes = Selection::none, links = Selection::none;
  std::vector<char> node_listed, link_listed;  // Selection::some: per node / link
  std::string file;                            // FILE: EPANET's second report file
  ReportFieldOptions fields[static_cast<int>(ReportField::count)];
  double relative_diffusivity = 1.0;  // [OPTIONS] DIFFUSIVITY, as the summary shows it
  ReportOptions();                    // EPANET's defaults: demand to quality, flow to headloss
  ReportFieldOptions& field(ReportField f) { return fields[static_cast<int>(f)]; }
  const ReportFieldOptions& field(ReportField f) const { return fields[static_cast<int>(f)]; }
};

struct Network {
  std::string source;  // file name, for messages
  std::string title;
  std::vector<std::string> title_lines;  // EPANET's three: the first lines of [TITLE], 79 chars
  std::vector<Node> nodes;  // junctions first, then tanks and reservoirs, each in file order
  std::vector<Link> links;  // file order
  std::vector<Pump> pumps;
  std::vector<Pattern> patterns;
  std::vector<Curve> curves;
  std::vector<Control> controls;
  std::vector<Rule> rules;
  std::vector<int> valves;  // link indices of valves, in file order
  HydraulicOptions options;
  EnergyOptions energy;
  TimeOptions times;
  QualityInput quality;  // [OPTIONS] QUALITY and the quality sections
  UnitSystem units;
  ReportOptions report;
  std::vector<std::string> notes;  // what was read but is not applied (rules, energy, ...)
  int junction_count = 0;

  bool is_junction(int node) const { return node < junction_count; }
  std::size_t node_count() const { return nodes.size(); }
  int find_node(std::string_view id) const;  // -1 if absent
  int find_link(std::string_view id) const;
  int default_pattern() const;  // -1: constant 1

  IdIndex node_index, link_index;
};

// EPANET's interp(): linear interpolation in a table, constant beyond its ends.
double interpolate(const std::vector<double>& x, const std::vector<double>& y, double at);

// EPANET 2.3's pcvlosscoeff: a PCV's minor loss coefficient (Q^2 basis) at `setting` % open:
// the fully open one (Link::minor_loss) over (Kv / Kv open)^2, the Kv ratio from the valve's curve
// (or the setting itself), held within [1e-6, 1]; 0 for kMissing, 1e8 at or below 0% open.
double pcv_loss_coefficient(const Network& net, const Link& valve, double setting);

std::string to_string(LinkType type);
std::string to_string(NodeType type);
std::string to_string(FlowUnits units);
// "psi", "m", "kPa", "bar", "ft": as reports write the pressure unit.
const char* to_string(PressureUnits units);

}  // namespace cgs::net
