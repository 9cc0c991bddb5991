// The GPU batch CG of the study engine (batch_cg.hpp): every system of a batch in one launch of
// the cluster-resident CG (solver/cuda/cluster_cg.hpp, ClusterCg::solve_batch), one system per
// thread-block cluster. Plain C++: DeviceBuffer and make_cluster_cg answer DeviceError in a build
// without CUDA, so this file needs no #ifdef.
#include <algorithm>
#include <cstdio>

#include "network/batch_cg.hpp"
#include "solver/cuda/cluster_cg.hpp"
#include "spmv/device_buffer.hpp"
#include "spmv/cuda/cuda_backends.hpp"

namespace cgs::net {
namespace {

class GpuBatchCg final : public BatchCg {
 public:
  explicit GpuBatchCg(const CgOptions& options) : options_(options) {
    options_.time_spmv = false;  // one launch per batch: nothing to time per iteration here
    options_.record_history = false;
    std::string why;
    if (!cuda_device_available(&why))
      throw DeviceError("--device gpu (the batched study engine) needs a GPU: " + why);
  }

  void solve(const std::vector<BatchCgSystem*>& systems) override {
    if (systems.empty()) return;
    if (!engine_) build(*systems.front()->A);
    const int count = static_cast<int>(systems.size());
    const std::size_t n = static_cast<std::size_t>(pattern_.rows), nnz = pattern_.values.size();
    values_.resize(nnz * count);
    b_.resize(n * count);
    x_.resize(n * count);
    // Packed on this thread (the member that completed the batch): O(nnz) a system, small beside
    // the launch, which lasts thousands of iterations. Not OpenMP: a different member dispatches
    // each batch, and each would start a team of its own.
    for (int s = 0; s < count; ++s) {
      const BatchCgSystem& system = *systems[s];
      check_same_pattern(*system.A, pattern_);
      std::copy(system.A->values.begin(), system.A->values.end(), values_.begin() + s * nnz);
      std::copy(system.b->begin(), system.b->end(), b_.begin() + s * n);
      if (system.x->size() == n)
        std::copy(system.x->begin(), system.x->end(), x_.begin() + s * n);
      else
        std::fill(x_.begin() + s * n, x_.begin() + (s + 1) * n, 0.0);
    }
    reserve(values_gpu_, values_.size(), "batch study values");
    reserve(b_gpu_, b_.size(), "batch study right-hand sides");
    reserve(x_gpu_, x_.size(), "batch study solutions");
    values_gpu_.upload(values_.data(), values_.size());
    b_gpu_.upload(b_.data(), b_.size());
    x_gpu_.upload(x_.data(), x_.size());
    const std::vector<CgResult> results = engine_->solve_batch(
        b_gpu_.data(), x_gpu_.data(), count, values_gpu_.data(), nullptr, options_);
    gpu_download(x_.data(), x_gpu_.data(), x_.size() * sizeof(double));
    for (int s = 0; s < count; ++s) {
      systems[s]->x->assign(x_.begin() + s * n, x_.begin() + (s + 1) * n);
      systems[s]->result = results[s];
    }
  }

  std::string name() const override {
    if (!engine_) return "gpu batch cg (cluster-resident CG, one system per cluster)";
    char text[200];
    std::snprintf(text, sizeof text,
                  "gpu batch cg (cluster-resident CG, one system per cluster of %d blocks)",
                  engine_->fit().blocks);
    return text;
  }

 private:
  // The pattern (and the first system's values, which the batch replaces) on the device, and the
  // cluster loop laid out for batches.
  void build(const CsrMatrix<double>& A) {
    pattern_ = A;
    row_ptr_ = DeviceBuffer<index_t>(Device::gpu, A.row_ptr, "batch study row pointers");
    col_idx_ = DeviceBuffer<index_t>(Device::gpu, A.col_idx, "batch study columns");
    a_values_ = DeviceBuffer<double>(Device::gpu, A.values, "batch study matrix");
    const CsrView<double> view{A.rows, row_ptr_.data(), col_idx_.data(), a_values_.data(), 1, {}};
    engine_ = make_cluster_cg<double>(view, A.rows, nullptr, 0, true);
  }

  // Device arrays grow to the largest batch seen and are kept (no allocation per batch).
  static void reserve(DeviceBuffer<double>& buffer, std::size_t size, const char* what) {
    if (buffer.size() < size) buffer = DeviceBuffer<double>(Device::gpu, size, what);
  }

  CgOptions options_;
  CsrMatrix<double> pattern_;
  DeviceBuffer<index_t> row_ptr_, col_idx_;
  DeviceBuffer<double> a_values_;
  std::unique_ptr<ClusterCg<double>> engine_;
  std::vector<double> values_, b_, x_;  // host staging, count systems after one another
  DeviceBuffer<double> values_gpu_, b_gpu_, x_gpu_;
};

}  // namespace

std::unique_ptr<BatchCg> make_gpu_batch_cg(const CgOptions& options) {
  return std::make_unique<GpuBatchCg>(options);
}

}  // namespace cgs::net
