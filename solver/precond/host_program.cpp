#include "solver/precond/host_program.hpp"

#include <omp.h>


namespace cgs::precond {

template <typename T>
HostProgram<T>::HostProgram(ProgramSpec<T> spec) : spec_(std::move(spec)) {
  for (std::size_t n : spec_.work) work_.emplace_back(n, T(0));
  table_.assign(std::size_t(spec_.slots()), nullptr);
  for (std::size_t i = 0; i < work_.size(); ++i) table_[kFirstWorkSlot + i] = work_[i].data();
  // A borrowed array is read where its owner keeps it (host memory, program_spec.hpp).
  ops_ = resolve_ops<T>(
      spec_.ops,
      [&](int h) {
        const index_t* borrowed = spec_.borrowed_index_array(h);
        return borrowed ? borrowed : spec_.index_arrays[h].data();
      },
      [&](int h) {
        const T* borrowed = spec_.borrowed_value_array(h);
        return borrowed ? borrowed : spec_.value_arrays[h].data();
      });
}

template <typename T>
void HostProgram<T>::update_values(const ProgramSpec<T>& spec) {
  for (std::size_t h = 0; h < spec_.value_arrays.size(); ++h)
    std::copy(spec.value_arrays[h].begin(), spec.value_arrays[h].end(),
              spec_.value_arrays[h].begin());
}

template <typename T>
void HostProgram<T>::bind(const T* r, T* z) {
  table_[kSlotR] = const_cast<T*>(r);  // slot 0 is only read
  table_[kSlotZ] = z;
}

template <typename T>
double HostProgram<T>::run_part(int i, int part, int parts) const {
  const Op<T>& op = ops_[i];
  const long long items = op.items;
  const long long first = items * part / parts, end = items * (part + 1) / parts;
  return run_items(op, table_.data(), first, end, 1);
}

template <typename T>
void HostProgram<T>::apply(int threads) const {
  if (threads <= 1) {
    for (int i = 0; i < size(); ++i) run_part(i, 0, 1);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    const int team = omp_get_num_threads(), me = omp_get_thread_num();
    for (int i = 0; i < size(); ++i) {
      run_part(i, me, team);
#pragma omp barrier
    }
  }
}

template class HostProgram<float>;
template class HostProgram<double>;

}  // namespace cgs::precond
