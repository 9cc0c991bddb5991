// A preconditioner's program in GPU memory (solver/precond/device_program.hpp).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "base/tuning.hpp"
#include "solver/precond/device_program.hpp"
#include "solver/precond/triangular_sweep.cuh"
#include "spmv/cuda/cuda_common.cuh"
#include "spmv/parallel_copy.hpp"

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

// Sweep `s` of the program (its first level's operation `op`).
template <typename T>
__global__ void program_sweep_kernel(const Op<T>* ops, Sweep s, T* const* table) {
  run_sweep(s, ops[s.first_op], table, blockIdx.x * (long long)kBlock + threadIdx.x,
            (long long)gridDim.x * kBlock);
}

// A narrow program -- every operation at most kOneBlockItems items, as a factor's levels on a
// network's near-tree graph (tens of rows a level, hundreds of levels) -- runs in one block: a
// block barrier between operations instead of a kernel launch each (a launch costs several
// microseconds, a barrier of 1,024 threads well under one). The rows and their arithmetic are
// those of the kernel per operation.
constexpr int kOneBlockThreads = 1024;
constexpr long long kOneBlockItems = 4096;

template <typename T>
__global__ void __launch_bounds__(kOneBlockThreads)
    program_one_block_kernel(const Op<T>* ops, int count, T* const* table) {
  for (int op = 0; op < count; ++op) {
    run_items(ops[op], table, threadIdx.x, (long long)ops[op].items, kOneBlockThreads);
    __syncthreads();  // this operation's writes seen by the whole block before the next
  }
}

// Where each array of a kind starts in its packed buffer (bytes, 16-aligned), and the total.
template <typename E>
std::vector<std::size_t> packed_offsets(const std::vector<std::vector<E>>& arrays,
                                        std::size_t& total) {
  std::vector<std::size_t> offsets;
  total = 0;
  for (const auto& a : arrays) {
    offsets.push_back(total);
    total += (a.size() * sizeof(E) + 15) / 16 * 16;
  }
  if (total == 0) total = 16;  // an allocation even for a program without arrays of the kind
  return offsets;
}

// The arrays of one kind copied into one host buffer at their offsets, then to the device. Each
// copy runs on every core (parallel_copy: nvcc builds this file without OpenMP, so the
// `omp parallel for` that stood here ran on one core). The buffer is not value-initialised (a
// serial memset of it all, 1 GB for fsai:2 on a 9M-row grid); each array's padding is zeroed
// beside its copy, so every byte sent is defined.
template <typename E>
void upload_packed(unsigned char* device, const std::vector<std::vector<E>>& arrays,
                   const std::vector<std::size_t>& offsets, std::size_t total) {
  std::unique_ptr<unsigned char[]> host(new unsigned char[total]);
  if (arrays.empty()) std::memset(host.get(), 0, total);
  for (std::size_t h = 0; h < arrays.size(); ++h) {
    const std::size_t begin = offsets[h], bytes = arrays[h].size() * sizeof(E);
    const std::size_t end = h + 1 < arrays.size() ? offsets[h + 1] : total;
    parallel_copy(host.get() + begin, arrays[h].data(), bytes);
    std::memset(host.get() + begin + bytes, 0, end - begin - bytes);
  }
  cuda::copy_to_device(device, host.get(), total);
}

template <typename T>
class CudaProgram final : public DeviceProgram<T> {
 public:
  explicit CudaProgram(const ProgramSpec<T>& spec) {
    std::size_t index_bytes = 0, value_bytes = 0;
    index_offsets_ = packed_offsets(spec.index_arrays, index_bytes);
    value_offsets_ = packed_offsets(spec.value_arrays, value_bytes);
    index_ = DeviceArray<unsigned char>(index_bytes, "preconditioner indices");
    values_ = DeviceArray<unsigned char>(value_bytes, "preconditioner values");
    upload_packed(index_.data(), spec.index_arrays, index_offsets_, index_bytes);
    upload_packed(values_.data(), spec.value_arrays, value_offsets_, value_bytes);
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
          return borrowed ? borrowed
                          : reinterpret_cast<const index_t*>(index_.data() + index_offsets_[h]);
        },
        [&](int h) {
          const T* borrowed = spec.borrowed_value_array(h);
          return borrowed ? borrowed
                          : reinterpret_cast<const T*>(values_.data() + value_offsets_[h]);
        });
    ops_ = DeviceArray<Op<T>>(ops, "preconditioner operations");
    view_.ops = ops_.data();
    view_.table = table_.data();
    for (const Op<T>& op : ops) {
      view_.items.push_back(op.items);
      view_.dot.push_back(op.dot);
    }
    view_.host_ops = ops;
    view_.index_data = index_.data();
    view_.index_bytes = index_bytes;
    view_.value_data = values_.data();
    view_.value_bytes = value_bytes;
    view_.work = spec.work;
    view_.slots = spec.slots();
    const long long widest =
        view_.items.empty() ? 0 : *std::max_element(view_.items.begin(), view_.items.end());
    one_block_ = view_.size() >= 2 && widest <= kOneBlockItems;
    make_sweeps(spec, ops);
    view_.apply_launch =
        one_block_ ? "one block (" + std::to_string(view_.size()) + " operations of at most " +
                         std::to_string(widest) + " items: a barrier each, not a launch)"
        : view_.host_sweeps.empty() ? "a kernel per operation"
                                    : "a kernel per operation, a triangular solve's levels one";
  }

  void update_values(const ProgramSpec<T>& spec) override {
    // Borrowed arrays are empty here (their owner refreshes them): upload_packed skips them.
    upload_packed(values_.data(), spec.value_arrays, value_offsets_, values_.bytes());
  }

  void bind(const T* r, T* z) override {
    host_table_[kSlotR] = const_cast<T*>(r);
    host_table_[kSlotZ] = z;
    cuda::copy_to_device(table_.data(), host_table_.data(), 2 * sizeof(T*));
  }

  void apply() override {
    if (one_block_) {
      program_one_block_kernel<T>
          <<<1, kOneBlockThreads, 0, stream()>>>(ops_.data(), view_.size(), table_.data());
      CGS_CHECK_LAUNCH();
      return;
    }
    const int sm = cuda::cuda_context().sm_count;
    std::size_t sweep = 0;
    for (int op = 0; op < view_.size(); ++op) {
      if (sweep < view_.host_sweeps.size() && op == view_.host_sweeps[sweep].first_op) {
        const Sweep& s = view_.host_sweeps[sweep++];
        // No more blocks than resident at once (the rows wait for each other: triangular_sweep.hpp).
        const int grid = int(std::clamp<long long>((s.threads + kBlock - 1) / kBlock, 1, sm));
        program_sweep_kernel<T><<<grid, kBlock, 0, stream()>>>(ops_.data(), s, table_.data());
        CGS_CHECK_LAUNCH();
        op = s.end_op - 1;
        continue;
      }
      const long long items = view_.items[op];
      const int grid = int(std::clamp<long long>((items + kBlock - 1) / kBlock, 1, 8LL * sm));
      program_op_kernel<T><<<grid, kBlock, 0, stream()>>>(ops_.data(), op, table_.data());
      CGS_CHECK_LAUNCH();
    }
  }

  const DeviceProgramView<T>& view() const override { return view_; }

 private:
  // The program's triangular solves as sweeps (triangular_sweep.hpp), unless
  // Tuning::gpu_sweep_span is 0: each sweep's levels must hold every row of its solve, rows 0 ..
  // items - 1 (ic0's and cholesky's), so its posted values are indexed by row.
  void make_sweeps(const ProgramSpec<T>& spec, const std::vector<Op<T>>& ops) {
    const int span = tuning().gpu_sweep_span;
    if (span <= 0) return;
    const std::vector<SweepPlan> plans = find_sweeps(ops);
    if (plans.empty()) return;
    const index_t items = plans[0].items;
    for (const SweepPlan& p : plans) {
      const int y = ops[std::size_t(p.first_op)].y;
      if (p.items != items) return;
      if (y >= kFirstWorkSlot && spec.work[std::size_t(y - kFirstWorkSlot)] != std::size_t(items))
        return;
    }
    const std::size_t count = plans.size(), n = std::size_t(items);
    posted_ = DeviceArray<unsigned long long>(
        std::vector<unsigned long long>(2 * count * n, kSweepUnposted), "sweeps' posted rows");
    epochs_ = DeviceArray<int>(std::vector<int>(count, 1), "sweeps' epochs");
    std::string fact;
    for (std::size_t i = 0; i < count; ++i) {
      const SweepPlan& p = plans[i];
      Sweep s;
      s.first_op = p.first_op;
      s.end_op = p.end_op;
      s.items = p.items;
      s.threads = sweep_threads(p.widest, span);
      s.posted = posted_.data() + 2 * i * n;
      s.epoch = epochs_.data() + i;
      s.next_epoch = epochs_.data() + (i + 1) % count;
      s.rows = ops[std::size_t(p.first_op)].rows;
      if (!p.contiguous) {  // the levels' rows gathered into one array, in order
        sweep_rows_.reserve(count);
        sweep_rows_.emplace_back(n, "a sweep's rows");
        std::size_t at = 0;
        for (int op = p.first_op; op < p.end_op; ++op) {
          const Op<T>& o = ops[std::size_t(op)];
          cuda::copy_on_device(sweep_rows_.back().data() + at, o.rows,
                               std::size_t(o.items) * sizeof(index_t));
          at += std::size_t(o.items);
        }
        s.rows = sweep_rows_.back().data();
      }
      view_.host_sweeps.push_back(s);
      fact += (i ? "; " : "") + std::to_string(p.end_op - p.first_op) + " levels, " +
              std::to_string(p.items) + " rows, " + std::to_string(s.threads) + " threads";
    }
    sweeps_ = DeviceArray<Sweep>(view_.host_sweeps, "sweeps");
    view_.sweeps = sweeps_.data();
    view_.sweep_fact = std::to_string(count) + " sweeps (" + fact + ")";
  }

  std::vector<std::size_t> index_offsets_, value_offsets_;
  DeviceArray<unsigned char> index_, values_;
  std::vector<DeviceArray<T>> work_;
  std::vector<T*> host_table_;
  DeviceArray<T*> table_;
  DeviceArray<Op<T>> ops_;
  DeviceProgramView<T> view_;
  bool one_block_ = false;  // apply() in one block (view_.apply_launch)
  std::vector<DeviceArray<index_t>> sweep_rows_;  // gathered where the levels' rows are apart
  DeviceArray<unsigned long long> posted_;
  DeviceArray<int> epochs_;
  DeviceArray<Sweep> sweeps_;
};

}  // namespace

template <typename T>
std::unique_ptr<DeviceProgram<T>> make_device_program(const ProgramSpec<T>& spec) {
  return std::make_unique<CudaProgram<T>>(spec);
}

template std::unique_ptr<DeviceProgram<float>> make_device_program(const ProgramSpec<float>&);
template std::unique_ptr<DeviceProgram<double>> make_device_program(const ProgramSpec<double>&);

}  // namespace cgs::precond
