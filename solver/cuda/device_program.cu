// A preconditioner's program in GPU memory (solver/precond/device_program.hpp).
#include <algorithm>
#include <vector>

#include "solver/precond/device_program.hpp"
#include "spmv/cuda/cuda_common.cuh"

namespace cgs::precond {
namespace {

using cuda::DeviceArray;
using cuda::stream;

constexpr int kBlock = 256;

template <typename T>
__global__ void program_op_kernel(const Op<T>* ops, int op, T* const* table) {
  const Op<T> o = ops[op];
  run_items(o, table, blockIdx.x * (long long)kBlock + threadIdx.x, (long long)o.items,
            (long long)gridDim.x * kBlock);
}

template <typename T>
class CudaProgram final : public DeviceProgram<T> {
 public:
  explicit CudaProgram(const ProgramSpec<T>& spec) {
    for (const auto& a : spec.index_arrays) index_.emplace_back(a, "preconditioner indices");
    for (const auto& a : spec.value_arrays) values_.emplace_back(a, "preconditioner values");
    for (std::size_t n : spec.work) work_.emplace_back(n, "preconditioner work vector");
    std::vector<T*> table(std::size_t(spec.slots()), nullptr);
    for (std::size_t i = 0; i < work_.size(); ++i) table[kFirstWorkSlot + i] = work_[i].data();
    host_table_ = table;
    table_ = DeviceArray<T*>(table, "preconditioner slot table");
    // A borrowed array (program_spec.hpp) is read where its owner keeps it.
    const std::vector<Op<T>> ops = resolve_ops<T>(
        spec.ops,
        [&](int h) {
          const index_t* borrowed = spec.borrowed_index_array(h);
          return borrowed ? borrowed : index_[h].data();
        },
        [&](int h) {
          const T* borrowed = spec.borrowed_value_array(h);
          return borrowed ? borrowed : values_[h].data();
        });
    ops_ = DeviceArray<Op<T>>(ops, "preconditioner operations");
    view_.ops = ops_.data();
    view_.table = table_.data();
    for (const Op<T>& op : ops) {
      view_.items.push_back(op.items);
      view_.dot.push_back(op.dot);
    }
  }

  void update_values(const ProgramSpec<T>& spec) override {
    for (std::size_t h = 0; h < values_.size(); ++h)  // borrowed ones: empty, their owner's
      cuda::copy_to_device(values_[h].data(), spec.value_arrays[h].data(), values_[h].bytes());
  }

  void bind(const T* r, T* z) override {
    host_table_[kSlotR] = const_cast<T*>(r);
    host_table_[kSlotZ] = z;
    cuda::copy_to_device(table_.data(), host_table_.data(), 2 * sizeof(T*));
  }

  void apply() override {
    const int sm = cuda::cuda_context().sm_count;
    for (int op = 0; op < view_.size(); ++op) {
      const long long items = view_.items[op];
      const int grid = int(std::clamp<long long>((items + kBlock - 1) / kBlock, 1, 8LL * sm));
      program_op_kernel<T><<<grid, kBlock, 0, stream()>>>(ops_.data(), op, table_.data());
      CGS_CHECK_LAUNCH();
    }
  }

  const DeviceProgramView<T>& view() const override { return view_; }

 private:
  std::vector<DeviceArray<index_t>> index_;
  std::vector<DeviceArray<T>> values_;
  std::vector<DeviceArray<T>> work_;
  std::vector<T*> host_table_;
  DeviceArray<T*> table_;
  DeviceArray<Op<T>> ops_;
  DeviceProgramView<T> view_;
};

}  // namespace

template <typename T>
std::unique_ptr<DeviceProgram<T>> make_device_program(const ProgramSpec<T>& spec) {
  return std::make_unique<CudaProgram<T>>(spec);
}

template std::unique_ptr<DeviceProgram<float>> make_device_program(const ProgramSpec<float>&);
template std::unique_ptr<DeviceProgram<double>> make_device_program(const ProgramSpec<double>&);

}  // namespace cgs::precond
