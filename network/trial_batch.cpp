// The trials engine's network and its host executor (trial_batch.hpp).
#include "network/trial_batch.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <type_traits>
#include <utility>

#include "solver/precond/sparse_cholesky.hpp"

namespace cgs::net {
namespace {

// Copies n elements from `from` to the end of `pool` (reserved beforehand, so that what is
// already there stays where it was put) and returns where they went.
template <typename T>
const T* put(std::vector<T>& pool, const T* from, std::size_t n) {
  const T* at = pool.data() + pool.size();
  pool.insert(pool.end(), from, from + n);
  return at;
}

// The view's arrays and the schedule's, moved into the two pools that the device copies whole.
void pool_arrays(TrialNetwork& t) {
  trials::NetworkView& v = t.view;
  const CholeskySchedule& c = t.schedule;
  CholeskyScheduleView& s = v.schedule;
  s = c.view();
  const std::pair<const int**, const std::vector<int>*> schedule[] = {
      {&s.order, &c.order},
      {&s.diag_source, &c.diag_source},
      {&s.value_source, &c.value_source},
      {&s.col_ptr, &c.col_ptr},
      {&s.row, &c.row},
      {&s.pivot_ptr, &c.pivot_ptr},
      {&s.pivot_terms, &c.pivot_terms},
      {&s.update_ptr, &c.update_ptr},
      {&s.update_source, &c.update_source},
      {&s.update_multiplier, &c.update_multiplier}};
  std::size_t ints = 0, reals = 0;
  gga::for_each_array(v, [&](auto& p, long n) {
    if constexpr (std::is_same_v<std::remove_reference_t<decltype(p)>, const int*>)
      ints += n;
    else
      reals += n;
  });
  for (const auto& [view, array] : schedule) ints += array->size();
  ints += t.a_row_ptr.size() + t.a_col.size();
  t.ints.reserve(ints);
  t.reals.reserve(reals);
  gga::for_each_array(v, [&](auto& p, long n) {
    if constexpr (std::is_same_v<std::remove_reference_t<decltype(p)>, const int*>)
      p = put(t.ints, p, n);
    else
      p = put(t.reals, p, n);
  });
  for (const auto& [view, array] : schedule) *view = put(t.ints, array->data(), array->size());
  if (v.pcg.max_steps > 0) {
    v.a_row_ptr = put(t.ints, t.a_row_ptr.data(), t.a_row_ptr.size());
    v.a_col = put(t.ints, t.a_col.data(), t.a_col.size());
  }
}

}  // namespace

std::string trial_engine_limits(const Network& /*net*/) { return ""; }

std::unique_ptr<TrialNetwork> build_trial_network(const Network& /*net: structure's*/,
                                                  const GradientAlgorithm& structure,
                                                  double accuracy, double pressure_threshold,
                                                  const trials::PcgOptions& pcg) {
  auto out = std::make_unique<TrialNetwork>();
  const JunctionSystem& system = structure.system();
  precond::SparseCholesky analysis;
  analysis.analyse(system.A, system.elimination_order);
  out->schedule = compile_schedule(analysis, system.A.nnz());
  static_cast<gga::NetworkView&>(out->view) = structure.view();
  out->view.o.accuracy = accuracy;
  out->view.o.pressure_threshold = pressure_threshold;
  out->view.pcg = pcg;
  if (pcg.max_steps > 0) {  // CG multiplies by A: its pattern goes with the view
    out->a_row_ptr.assign(system.A.row_ptr.begin(), system.A.row_ptr.end());
    out->a_col.assign(system.A.col_idx.begin(), system.A.col_idx.end());
  }
  pool_arrays(*out);
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
