// EPANET's binary output file, written along a run (epanet_out.hpp says the layout).
#include "network/epanet_out.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "base/atomic_file.hpp"

namespace cgs::net {
namespace {

// Adds the time from its construction to its end to `total`.
class Timer {
 public:
  explicit Timer(double& total) : total_(total), start_(std::chrono::steady_clock::now()) {}
  ~Timer() {
    total_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  double& total_;
  std::chrono::steady_clock::time_point start_;
};

constexpr double kPi = 3.14159265358979323846;  // EPANET's PI (M_PI)
constexpr double kTiny = 1.0e-6;                // EPANET's TINY
constexpr std::size_t kTitleBytes = 80, kFileNameBytes = 260, kIdBytes = 32;
constexpr int kNodeFields = 4, kLinkFields = 8;

void put(std::FILE* f, const void* data, std::size_t bytes) {
  if (bytes > 0) std::fwrite(data, 1, bytes, f);
}
void put_int(std::FILE* f, std::int32_t v) { put(f, &v, sizeof v); }
void put_float(std::FILE* f, float v) { put(f, &v, sizeof v); }
// A text field of `bytes`, NUL-padded (EPANET's fixed char arrays of a zeroed project).
void put_text(std::FILE* f, const std::string& text, std::size_t bytes) {
  std::string field(bytes, '\0');
  std::memcpy(field.data(), text.data(), std::min(text.size(), bytes - 1));
  put(f, field.data(), bytes);
}

// EPANET's codes: PressureUnitsType is PSI, KPA, METERS, BAR, FEET (network.hpp's order
// differs); FlowUnits, LinkType and the statistic are in EPANET's order.
std::int32_t pressure_code(PressureUnits p) {
  switch (p) {
    case PressureUnits::psi: return 0;
    case PressureUnits::kpa: return 1;
    case PressureUnits::meters: return 2;
    case PressureUnits::bar: return 3;
    case PressureUnits::feet: return 4;
  }
  return 0;
}

double rounded(double v) { return static_cast<double>(static_cast<float>(v)); }

}  // namespace

EpanetOutWriter::EpanetOutWriter(const Network& net, const std::string& path,
                                 const std::string& input_name, long duration,
                                 const QualityEngine* quality)
    : net_(net),
      quality_engine_(quality),
      file_(std::make_unique<AtomicOutput>(path)),
      duration_(duration),
      report_time_(net.times.report_start) {
  Timer timer(seconds_);
  std::setvbuf(file_->get(), nullptr, _IOFBF, 1 << 20);
  for (std::size_t n = 0; n < net.nodes.size(); ++n) {
    elevation_.push_back(net.nodes[n].elevation);
    // What EPANET writes for a run without quality: [QUALITY]'s initial value, in the file's units.
    quality_.push_back(static_cast<float>(net.quality.initial[n] * net.quality.to_user));
  }
  for (const Link& l : net.links) {
    if (l.type == LinkType::pump)
      pump_max_flow_.emplace_back(static_cast<int>(from_.size()), net.pumps[l.pump].max_flow);
    from_.push_back(l.from), to_.push_back(l.to), type_.push_back(l.type);
    length_.push_back(l.length), roughness_.push_back(l.roughness);
    area_.push_back(kPi * (l.diameter * l.diameter) / 4.0);
    diameter5_.push_back(std::pow(l.diameter, 5));
  }
  write_prolog(input_name, duration);
  // The energy section's place, filled by finish() once the run is over (as EPANET writes it
  // after the hydraulics): a link number and 6 floats a pump, the demand charge.
  energy_offset_ = std::ftell(file_->get());
  int pumps = 0;
  for (const Link& l : net.links) pumps += l.type == LinkType::pump;
  const std::vector<char> zeros(static_cast<std::size_t>(pumps) * 28 + 4, 0);
  put(file_->get(), zeros.data(), zeros.size());
}

EpanetOutWriter::~EpanetOutWriter() = default;

// EPANET's savenetdata.
void EpanetOutWriter::write_prolog(const std::string& input_name, long duration) {
  std::FILE* f = file_->get();
  const UnitSystem& u = net_.units;
  const int nodes = static_cast<int>(net_.nodes.size()), links = static_cast<int>(net_.links.size());
  std::vector<int> tanks;
  int pumps = 0;
  for (int i = net_.junction_count; i < nodes; ++i) tanks.push_back(i);
  for (const Link& l : net_.links) pumps += l.type == LinkType::pump;
  const std::int32_t head[15] = {kEpanetOutMagic,
                                 kEpanetOutVersion,
                                 nodes,
                                 static_cast<std::int32_t>(tanks.size()),
                                 links,
                                 pumps,
                                 static_cast<std::int32_t>(net_.valves.size()),
                                 quality_code(),
                                 trace_node(),
                                 static_cast<std::int32_t>(u.flow_units),
                                 pressure_code(u.pressure_units),
                                 static_cast<std::int32_t>(net_.times.statistic),
                                 static_cast<std::int32_t>(net_.times.report_start),
                                 static_cast<std::int32_t>(net_.times.report_step),
                                 static_cast<std::int32_t>(duration)};
  put(f, head, sizeof head);
  for (std::size_t t = 0; t < 3; ++t)
    put_text(f, t < net_.title_lines.size() ? net_.title_lines[t] : "", kTitleBytes);
  put_text(f, input_name, kFileNameBytes);
  put_text(f, "", kFileNameBytes);        // [REPORT] FILE: no second report
  const auto [chemical, units] = quality_names();
  put_text(f, chemical, kIdBytes);
  put_text(f, units, kIdBytes);
  for (const Node& n : net_.nodes) put_text(f, n.id, kIdBytes);
  for (const Link& l : net_.links) put_text(f, l.id, kIdBytes);
  for (const Link& l : net_.links) put_int(f, l.from + 1);
  for (const Link& l : net_.links) put_int(f, l.to + 1);
  for (const Link& l : net_.links) put_int(f, static_cast<std::int32_t>(l.type));
  for (int i : tanks) put_int(f, i + 1);
  for (int i : tanks) put_float(f, static_cast<float>(net_.nodes[i].area));
  for (const Node& n : net_.nodes) put_float(f, static_cast<float>(n.elevation * u.length));
  for (const Link& l : net_.links) put_float(f, static_cast<float>(l.length * u.length));
  for (const Link& l : net_.links)
    put_float(f, l.type == LinkType::pump ? 0.0f : static_cast<float>(l.diameter * u.diameter));
}

// EPANET's Qualflag (NONE, CHEM, AGE, TRACE) and TraceNode (numbered from 1, 0 for none).
std::int32_t EpanetOutWriter::quality_code() const {
  if (!quality_engine_) return 0;
  switch (net_.quality.type) {
    case QualityType::none: return 0;
    case QualityType::chemical: return 1;
    case QualityType::age: return 2;
    case QualityType::trace: return 3;
  }
  return 0;
}

std::int32_t EpanetOutWriter::trace_node() const {
  return quality_code() == 3 ? net_.quality.trace_node + 1 : 0;
}

// The prolog's ChemName and Field[QUALITY].Units as EPANET's input3.c and input1.c leave them:
// a trace's name is its unit "% from" (the node's ID goes to ChemUnits, which is not written).
std::pair<std::string, std::string> EpanetOutWriter::quality_names() const {
  switch (quality_code()) {
    case 1: return {net_.quality.chemical, net_.quality.units};
    case 2: return {"AGE", "hrs"};
    case 3: return {"% from", "% from"};
    default: return {"Chemical", ""};  // EPANET's default name, kept without quality
  }
}

void EpanetOutWriter::period(long time, const GradientAlgorithm& state) {
  Timer timer(seconds_);
  state_warning_ = state_warning(state);
  if (time < report_time_) return;
  write_period(state);
  ++periods_;
  report_time_ += net_.times.report_step;
}

// EPANET's writehydwarn, the conditions read from the state, in its order (a later one's code
// wins): junctions below their elevation with demand (demand-driven runs), valves that cannot
// hold their setting (XFCV, XPRESSURE), pumps closed for head or run past their curve's flow.
int EpanetOutWriter::state_warning(const GradientAlgorithm& s) const {
  int flag = 0;
  if (net_.options.demand.model == DemandModel::dda)
    for (int i = 0; i < net_.junction_count; ++i)
      if (s.head(i) < elevation_[i] && s.node_demand(i) > 0.0) {
        flag = 6;
        break;
      }
  for (int k : net_.valves)
    if (s.status(k) >= LinkStatus::xfcv) flag = 5;
  for (const auto& [j, max_flow] : pump_max_flow_) {
    LinkStatus status = s.status(j);
    if (status >= LinkStatus::open) {
      if (s.flow(j) > s.setting(j) * max_flow) status = LinkStatus::xflow;
      if (s.flow(j) < 0.0) status = LinkStatus::xhead;
    }
    if (status == LinkStatus::xhead || status == LinkStatus::xflow) flag = 4;
  }
  return flag;
}

// The trials' part of writehydwarn: past the trial limit (into UNBALANCED CONTINUE's extra
// trials, or out of trials) within ACCURACY is "unstable" (2), beyond it "unbalanced" (1).
void EpanetOutWriter::step(const StepReport& r) {
  if (!r.solve.error.empty()) return;
  const bool past_limit = !r.solve.converged || r.solve.trials > net_.options.max_trials;
  const bool within = r.solve.relative_flow_change <= net_.options.accuracy;
  int flag = past_limit && within ? 2 : 0;
  if (state_warning_ != 0) flag = state_warning_;
  if (past_limit && !within) flag = 1;
  if (flag != 0) warning_ = flag;
}

void EpanetOutWriter::write_field(std::size_t count, const auto& value) {
  values_.resize(count);
  for (std::size_t i = 0; i < count; ++i) values_[i] = static_cast<float>(value(i));
  if (net_.times.statistic != TimeOptions::Statistic::series)
    statistic_.insert(statistic_.end(), values_.begin(), values_.end());
  else
    put(file_->get(), values_.data(), count * sizeof(float));
}

// EPANET's saveoutput on the hydraulics as its scratch file holds them (float32): node demand,
// head, pressure, quality; link flow, velocity, head loss, quality, status, setting, reaction
// rate, friction factor.
void EpanetOutWriter::write_period(const GradientAlgorithm& s) {
  const UnitSystem& u = net_.units;
  const std::size_t nodes = net_.nodes.size(), links = net_.links.size();
  head_.resize(nodes), demand_.resize(nodes);
  flow_.resize(links), setting_.resize(links), status_.resize(links);
  for (std::size_t i = 0; i < nodes; ++i) {
    head_[i] = rounded(s.head(static_cast<int>(i)));
    demand_[i] = rounded(s.node_demand(static_cast<int>(i)));
  }
  for (std::size_t k = 0; k < links; ++k) {
    const int j = static_cast<int>(k);
    status_[k] = static_cast<signed char>(s.status(j));
    flow_[k] = is_closed(s.status(j)) ? 0.0 : rounded(s.flow(j));
    // A pipe's setting is its roughness coefficient (EPANET's Kc, internal units).
    setting_[k] = rounded(type_[k] <= LinkType::pipe ? roughness_[k] : s.setting(j));
  }
  write_field(nodes, [&](std::size_t i) { return demand_[i] * u.flow; });
  write_field(nodes, [&](std::size_t i) { return head_[i] * u.length; });
  write_field(nodes, [&](std::size_t i) { return (head_[i] - elevation_[i]) * u.pressure; });
  const QualityEngine* q = quality_engine_;
  if (q)
    write_field(nodes, [&](std::size_t i) { return q->node_quality(static_cast<int>(i)); });
  else
    write_field(nodes, [&](std::size_t i) { return quality_[i]; });
  write_field(links, [&](std::size_t k) { return flow_[k] * u.flow; });
  write_field(links, [&](std::size_t k) {
    return type_[k] == LinkType::pump ? 0.0 : std::abs(flow_[k]) / area_[k] * u.length;
  });
  auto head_change = [&](std::size_t k) { return head_[from_[k]] - head_[to_[k]]; };
  write_field(links, [&](std::size_t k) {
    if (status_[k] <= static_cast<signed char>(LinkStatus::closed)) return 0.0;
    const double h = type_[k] == LinkType::pump ? head_change(k) : std::abs(head_change(k));
    return type_[k] <= LinkType::pipe ? 1000.0 * h / length_[k] : h * u.length;
  });
  write_field(links, [&](std::size_t k) { return q ? q->link_quality(static_cast<int>(k)) : 0.0; });
  write_field(links, [&](std::size_t k) { return static_cast<double>(status_[k]); });
  write_field(links, [&](std::size_t k) {
    const double k1 = setting_[k];
    if (k1 == kMissing) return 0.0;
    switch (type_[k]) {
      case LinkType::prv:
      case LinkType::psv:
      case LinkType::pbv: return k1 * u.pressure;
      case LinkType::fcv: return k1 * u.flow;
      case LinkType::gpv: return 0.0;
      default: return k1;
    }
  });
  write_field(links,
              [&](std::size_t k) { return q ? q->link_reaction_rate(static_cast<int>(k)) : 0.0; });
  write_field(links, [&](std::size_t k) {
    if (type_[k] > LinkType::pipe || !(std::abs(flow_[k]) > kTiny)) return 0.0;
    const double h = std::abs(head_change(k));
    return 39.725 * h * diameter5_[k] / length_[k] / (flow_[k] * flow_[k]);
  });
}

// EPANET's savetimestat: one period of the statistic over every period's values, in float as
// its arithmetic (flows as magnitudes, statuses as open 1 / closed 0 and back to OPEN/CLOSED).
void EpanetOutWriter::write_statistic() {
  using S = TimeOptions::Statistic;
  const S stat = net_.times.statistic;
  const std::size_t nodes = net_.nodes.size(), links = net_.links.size();
  const std::size_t per_period = kNodeFields * nodes + kLinkFields * links;
  auto field = [&](std::size_t offset, std::size_t count, int link_field) {
    std::vector<float> a(count, stat == S::average ? 0.0f : 1e10f), b(count, -1e10f);
    for (int p = 0; p < periods_; ++p) {
      const float* x = statistic_.data() + p * per_period + offset;
      for (std::size_t i = 0; i < count; ++i) {
        float v = x[i];
        if (link_field == 0) v = std::abs(v);
        if (link_field == 4) v = v >= 3.0f ? 1.0f : 0.0f;  // OPEN or beyond
        if (stat == S::average) {
          a[i] += v;
        } else {
          a[i] = a[i] < v ? a[i] : v;  // EPANET's MIN and MAX macros (signed zeros as its)
          b[i] = b[i] > v ? b[i] : v;
        }
      }
    }
    for (std::size_t i = 0; i < count; ++i) {
      float v = stat == S::average   ? a[i] / static_cast<float>(periods_)
                : stat == S::minimum ? a[i]
                : stat == S::maximum ? b[i]
                                     : b[i] - a[i];
      if (link_field == 4) v = v < 0.5f ? 2.0f : 3.0f;  // CLOSED, OPEN
      a[i] = v;
    }
    put(file_->get(), a.data(), count * sizeof(float));
  };
  for (int j = 0; j < kNodeFields; ++j) field(j * nodes, nodes, -1);
  for (int j = 0; j < kLinkFields; ++j) field(kNodeFields * nodes + j * links, links, j);
  periods_ = 1;
}

// EPANET's saveenergy (at its place after the prolog) and saveepilog.
void EpanetOutWriter::finish(const EnergyReport& energy) {
  Timer timer(seconds_);
  std::FILE* f = file_->get();
  if (net_.times.statistic != TimeOptions::Statistic::series && periods_ > 0) write_statistic();
  // EPANET's savenetreacts: the mass reacted and added, per hour of the run.
  const QualityReactions w = quality_engine_ ? quality_engine_->reactions() : QualityReactions{};
  const double hours = duration_ > 0 ? static_cast<double>(duration_) / 3600.0 : 1.0;
  const float reactions[4] = {
      static_cast<float>(w.bulk / hours), static_cast<float>(w.wall / hours),
      static_cast<float>(w.tank / hours), static_cast<float>(w.source / hours)};
  put(f, reactions, sizeof reactions);
  put_int(f, periods_);
  put_int(f, warning_);
  put_int(f, kEpanetOutMagic);
  std::fseek(f, energy_offset_, SEEK_SET);
  for (const PumpEnergy& p : energy.pumps) {
    put_int(f, p.link + 1);
    const float row[6] = {static_cast<float>(p.utilization),   static_cast<float>(p.efficiency),
                          static_cast<float>(p.kwh_per_volume), static_cast<float>(p.average_kw),
                          static_cast<float>(p.peak_kw),        static_cast<float>(p.cost_per_day)};
    put(f, row, sizeof row);
  }
  put_float(f, static_cast<float>(energy.demand_charge));
  file_->commit();
}

void record_energy_and_output(SimulationOptions& sim, EnergyMeter& energy, EpanetOutWriter* out) {
  sim.on_period = [&energy, out](long time, const GradientAlgorithm& state) {
    energy.measure(state);
    if (out) out->period(time, state);
  };
  sim.on_step = [&energy, out](const StepReport& step) {
    if (!step.solve.error.empty()) return;
    energy.accumulate(step.time, step.length);
    if (out) out->step(step);
  };
}

}  // namespace cgs::net
