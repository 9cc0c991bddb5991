// The trials engine's network and its host executor (trial_batch.hpp).
#include "network/trial_batch.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "network/sparse_cholesky.hpp"

namespace cgs::net {
namespace {

// The pools are sized before anything goes in, so the view's pointers stay where they were put.
struct Pools {
  std::vector<int>& ints;
  std::vector<double>& reals;
  const int* put(const std::vector<int>& v) {
    const int* at = ints.data() + ints.size();
    ints.insert(ints.end(), v.begin(), v.end());
    return at;
  }
  const double* put(const std::vector<double>& v) {
    const double* at = reals.data() + reals.size();
    reals.insert(reals.end(), v.begin(), v.end());
    return at;
  }
};

template <typename T, typename F>
std::vector<T> map(std::size_t n, F f) {
  std::vector<T> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = f(i);
  return out;
}

}  // namespace

std::string trial_engine_limits(const Network& net) {
  if (net.options.head_error_limit > 0 || net.options.flow_change_limit > 0)
    return "HEADERROR / FLOWCHANGE limits are not supported";
  return "";
}

std::unique_ptr<TrialNetwork> build_trial_network(const Network& net,
                                                  const GradientAlgorithm& structure,
                                                  double accuracy, double pressure_threshold) {
  auto out = std::make_unique<TrialNetwork>();
  const JunctionSystem& system = structure.system();
  SparseCholesky analysis;
  analysis.analyse(system.A, system.elimination_order);
  out->schedule = compile_schedule(analysis, system.A.nnz());
  const CholeskySchedule& c = out->schedule;

  const std::size_t m = net.links.size(), n = net.nodes.size(), np = net.pumps.size();
  const HydraulicOptions& opt = net.options;
  trials::NetworkView& v = out->view;
  trials::Options& o = v.o;
  o.nj = net.junction_count, o.nodes = static_cast<int>(n), o.links = static_cast<int>(m);
  o.formula = static_cast<int>(opt.formula);
  o.viscosity = opt.viscosity, o.rq_tolerance = opt.rq_tolerance, o.accuracy = accuracy;
  o.head_tolerance = opt.head_tolerance, o.flow_tolerance = opt.flow_tolerance;
  o.damp_limit = opt.damp_limit, o.emitter_exponent = opt.emitter_exponent;
  o.max_trials = opt.max_trials, o.extra_trials = opt.extra_trials;
  o.check_frequency = opt.check_frequency, o.max_check = opt.max_check;
  o.emitter_backflow = opt.emitter_backflow;
  // As GradientAlgorithm's constructor converts them.
  o.pda = opt.demand.model == DemandModel::pda;
  o.pmin = opt.demand.minimum_pressure / net.units.pressure;
  o.preq = opt.demand.required_pressure / net.units.pressure;
  o.pexp = opt.demand.exponent;
  o.unit_flow = net.units.flow, o.unit_length = net.units.length;
  o.unit_pressure = net.units.pressure, o.pressure_threshold = pressure_threshold;

  const auto link = [&](auto f) { return map<decltype(f(std::size_t{}))>(m, f); };
  const auto node = [&](auto f) { return map<decltype(f(std::size_t{}))>(n, f); };
  const auto pump = [&](auto f) { return map<decltype(f(std::size_t{}))>(np, f); };
  std::vector<int> curve_ptr{0}, valves(net.valves.begin(), net.valves.end()), emitters;
  std::vector<double> curve_x, curve_y;
  for (const Curve& cv : net.curves) {
    curve_x.insert(curve_x.end(), cv.x.begin(), cv.x.end());
    curve_y.insert(curve_y.end(), cv.y.begin(), cv.y.end());
    curve_ptr.push_back(static_cast<int>(curve_x.size()));
  }
  for (int i = 0; i < net.junction_count; ++i)
    if (net.nodes[i].emitter != 0.0) emitters.push_back(i);
  std::vector<const Control*> controls;  // on junction pressures: the ones trials apply
  for (const Control& ctl : net.controls)
    if (ctl.node >= 0 && net.is_junction(ctl.node)) controls.push_back(&ctl);
  const auto control = [&](auto f) { return map<decltype(f(std::size_t{}))>(controls.size(), f); };

  const std::vector<std::vector<int>> int_arrays = {
      link([&](std::size_t k) { return net.links[k].from; }),
      link([&](std::size_t k) { return net.links[k].to; }),
      link([&](std::size_t k) { return static_cast<int>(net.links[k].type); }),
      link([&](std::size_t k) { return net.links[k].pump; }),
      pump([&](std::size_t p) { return static_cast<int>(net.pumps[p].type); }),
      pump([&](std::size_t p) { return net.pumps[p].head_curve; }),
      curve_ptr,
      valves,
      emitters,
      node([&](std::size_t i) { return net.nodes[i].type == NodeType::tank ? 1 : 0; }),
      node([&](std::size_t i) { return net.nodes[i].can_overflow ? 1 : 0; }),
      control([&](std::size_t j) { return controls[j]->node; }),
      control([&](std::size_t j) { return controls[j]->link; }),
      control([&](std::size_t j) { return static_cast<int>(controls[j]->type); }),
      control([&](std::size_t j) { return static_cast<int>(controls[j]->status); }),
      structure.diagonal_slots(),
      structure.link_slots_ij(),
      structure.link_slots_ji(),
      c.order,
      c.diag_source,
      c.value_source,
      c.col_ptr,
      c.row,
      c.pivot_ptr,
      c.pivot_terms,
      c.update_ptr,
      c.update_source,
      c.update_multiplier};
  const std::vector<std::vector<double>> real_arrays = {
      link([&](std::size_t k) { return net.links[k].minor_loss; }),
      structure.resistances(),
      link([&](std::size_t k) { return net.links[k].roughness; }),
      link([&](std::size_t k) { return net.links[k].diameter; }),
      pump([&](std::size_t p) { return net.pumps[p].h0; }),
      pump([&](std::size_t p) { return net.pumps[p].r; }),
      pump([&](std::size_t p) { return net.pumps[p].n; }),
      pump([&](std::size_t p) { return net.pumps[p].max_head; }),
      curve_x,
      curve_y,
      node([&](std::size_t i) { return net.nodes[i].elevation; }),
      node([&](std::size_t i) { return net.nodes[i].emitter; }),
      node([&](std::size_t i) { return net.nodes[i].max_head; }),
      node([&](std::size_t i) { return net.nodes[i].min_head; }),
      control([&](std::size_t j) { return controls[j]->grade; }),
      control([&](std::size_t j) { return controls[j]->setting; })};
  std::size_t int_total = 0, real_total = 0;
  for (const auto& a : int_arrays) int_total += a.size();
  for (const auto& a : real_arrays) real_total += a.size();
  out->ints.reserve(int_total);
  out->reals.reserve(real_total);
  Pools pools{out->ints, out->reals};
  auto in = int_arrays.begin();
  auto re = real_arrays.begin();
  v.from = pools.put(*in++), v.to = pools.put(*in++), v.type = pools.put(*in++);
  v.pump = pools.put(*in++), v.pump_type = pools.put(*in++), v.pump_curve = pools.put(*in++);
  v.curve_ptr = pools.put(*in++), v.valves = pools.put(*in++), v.emitters = pools.put(*in++);
  v.tank = pools.put(*in++), v.can_overflow = pools.put(*in++);
  v.control_node = pools.put(*in++), v.control_link = pools.put(*in++);
  v.control_type = pools.put(*in++), v.control_status = pools.put(*in++);
  v.diag_slot = pools.put(*in++), v.slot_ij = pools.put(*in++), v.slot_ji = pools.put(*in++);
  CholeskyScheduleView& s = v.schedule;
  s = c.view();
  s.order = pools.put(*in++), s.diag_source = pools.put(*in++);
  s.value_source = pools.put(*in++), s.col_ptr = pools.put(*in++), s.row = pools.put(*in++);
  s.pivot_ptr = pools.put(*in++), s.pivot_terms = pools.put(*in++);
  s.update_ptr = pools.put(*in++), s.update_source = pools.put(*in++);
  s.update_multiplier = pools.put(*in++);
  v.minor_loss = pools.put(*re++), v.resistance = pools.put(*re++);
  v.roughness = pools.put(*re++), v.diameter = pools.put(*re++);
  v.pump_h0 = pools.put(*re++), v.pump_r = pools.put(*re++), v.pump_n = pools.put(*re++);
  v.pump_max_head = pools.put(*re++), v.curve_x = pools.put(*re++), v.curve_y = pools.put(*re++);
  v.elevation = pools.put(*re++), v.emitter = pools.put(*re++);
  v.max_head = pools.put(*re++), v.min_head = pools.put(*re++);
  v.control_grade = pools.put(*re++), v.control_setting = pools.put(*re++);
  v.pump_count = static_cast<int>(np);
  v.curve_count = static_cast<int>(net.curves.size());
  v.valve_count = static_cast<int>(valves.size());
  v.emitter_count = static_cast<int>(emitters.size());
  v.control_count = static_cast<int>(controls.size());
  v.a_nnz = static_cast<int>(system.A.nnz());
  return out;
}

namespace {

class HostBatchTrials final : public BatchTrials {
 public:
  explicit HostBatchTrials(const TrialNetwork& network)
      : view_(network.view), layout_(network.layout()) {}

  void set_base(const double* start, const signed char* statuses) override {
    base_.assign(start, start + layout_.start());
    base_status_.assign(statuses, statuses + layout_.links);
  }

  void run(const trials::StartChanges& c, const trials::ScenarioSpec* specs, int count,
           trials::Outcome* outcomes, signed char* final_statuses) override {
    const auto started = std::chrono::steady_clock::now();
    const long links = layout_.links;
#pragma omp parallel
    {
      std::vector<double> state(static_cast<std::size_t>(layout_.total()));
#pragma omp for schedule(dynamic, 1)
      for (int s = 0; s < count; ++s) {
        std::copy(base_.begin(), base_.end(), state.begin());
        for (long k = c.ptr[s]; k < c.ptr[s + 1]; ++k) state[c.index[k]] = c.value[k];
        signed char* status = final_statuses + s * links;
        std::copy(base_status_.begin(), base_status_.end(), status);
        for (long k = c.status_ptr[s]; k < c.status_ptr[s + 1]; ++k)
          status[c.status_index[k]] = c.status_value[k];
        trials::State st = trials::state_at(layout_, state.data(), 1, status);
        outcomes[s] = trials::run_period(view_, st, specs[s]);
      }
    }
    call_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
                   .count();
  }
  int capacity() const override { return 1 << 20; }
  double kernel_ms() const override { return call_ms_; }
  double call_ms() const override { return call_ms_; }

 private:
  trials::NetworkView view_;
  trials::Layout layout_;
  std::vector<double> base_;
  std::vector<signed char> base_status_;
  double call_ms_ = 0;
};

}  // namespace

std::unique_ptr<BatchTrials> make_host_batch_trials(const TrialNetwork& network) {
  return std::make_unique<HostBatchTrials>(network);
}

std::unique_ptr<BatchTrials> make_device_batch_trials(const TrialNetwork& network) {
  return make_batch_trials(network.view, network.ints.data(), network.ints.size(),
                           network.reals.data(), network.reals.size());
}

}  // namespace cgs::net
