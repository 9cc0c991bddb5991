// A preconditioner's program in GPU memory (solver/precond/device_program.hpp).
#include <algorithm>
#include <cstddef>
#include <cstdint>
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
  explicit CudaProgram(const ProgramSpec<T>& spec)
      : index_(pack(spec.index_arrays, index_at_, "preconditioner indices")),
        values_(pack(spec.value_arrays, values_at_, "preconditioner values")) {
    for (std::size_t n : spec.work) work_.emplace_back(n, "preconditioner work vector");
    std::vector<T*> table(std::size_t(spec.slots()), nullptr);
    for (std::size_t i = 0; i < work_.size(); ++i) table[kFirstWorkSlot + i] = work_[i].data();
    host_table_ = table;
    table_ = DeviceArray<T*>(table, "preconditioner slot table");
    const std::vector<Op<T>> ops = resolve_ops<T>(
        spec.ops, [&](int h) { return index_.data() + index_at_[std::size_t(h)]; },
        [&](int h) { return values_.data() + values_at_[std::size_t(h)]; });
    ops_ = DeviceArray<Op<T>>(ops, "preconditioner operations");
    view_.ops = ops_.data();
    view_.table = table_.data();
    for (const Op<T>& op : ops) {
      view_.items.push_back(op.items);
      view_.dot.push_back(op.dot);
    }
  }

  void update_values(const ProgramSpec<T>& spec) override {
    for (std::size_t h = 0; h < spec.value_arrays.size(); ++h)
      cuda::copy_to_device(values_.data() + values_at_[h], spec.value_arrays[h].data(),
                           spec.value_arrays[h].size() * sizeof(T));
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
  // The arrays one after another in one allocation (each at a multiple of 64 entries, so that
  // every array starts 256-byte aligned), copied in one upload: IC(0) on a 9M-row grid has
  // 12,000 level arrays, and one cudaMalloc and one synchronous copy each cost more than its rows.
  template <typename E>
  static DeviceArray<E> pack(const std::vector<std::vector<E>>& arrays,
                             std::vector<std::size_t>& at, const char* what) {
    constexpr std::size_t kAlign = 64;
    at.clear();
    std::size_t total = 0;
    for (const auto& a : arrays) {
      at.push_back(total);
      total += (a.size() + kAlign - 1) / kAlign * kAlign;
    }
    std::vector<E> packed(total);
    const std::int64_t count = std::int64_t(arrays.size());
#pragma omp parallel for schedule(dynamic, 1) if (total > 1000000)
    for (std::int64_t h = 0; h < count; ++h)
      std::copy(arrays[std::size_t(h)].begin(), arrays[std::size_t(h)].end(),
                packed.begin() + std::ptrdiff_t(at[std::size_t(h)]));
    return DeviceArray<E>(packed, what);
  }

  std::vector<std::size_t> index_at_, values_at_;  // each array's first entry in the pack
  DeviceArray<index_t> index_;
  DeviceArray<T> values_;
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
