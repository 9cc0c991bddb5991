// make_fused_gpu_loop and persistent_limits: the fused loop for whichever format view a
// backend lends (solver/cuda/fused_cg_dispatch.hpp).
#include <cstring>
#include <utility>
#include <vector>

#include "solver/cuda/cluster_cg.hpp"
#include "solver/cuda/fused_cg_dispatch.hpp"

namespace cgs {

namespace {
// The cluster loop (cluster_cg.hpp) as one of the fused loops: CSR rows, a pointwise
// preconditioner whose diagonal is read at every solve (set_values may move it), or a program
// run in one block (its values read at every solve; a program placed anew by set_values, with
// other operations or arrays, makes the loop anew).
template <typename T>
class ClusterLoop final : public FusedGpuLoop<T> {
 public:
  ClusterLoop(const CsrView<T>& A, index_t n, Preconditioner<T>& M) : A_(A), n_(n), M_(M) {
    make();
  }
  Loop loop() const override { return Loop::cluster; }
  CgResult solve(const T* b, T* x, const CgOptions& options) override {
    if (!M_.pointwise() && !same_program(*M_.device_program())) make();
    return cluster_->solve_batch(b, x, 1, nullptr, M_.diagonal(), options).front();
  }

 private:
  void make() {
    const precond::DeviceProgramView<T>* program = M_.pointwise() ? nullptr : M_.device_program();
    if (program) {
      placed_ops_ = program->host_ops;
      placed_buffers_ = {program->index_data, program->value_data};
    }
    cluster_ = make_cluster_cg<T>(A_, n_, M_.diagonal(), 0, false, program);
  }

  // The same operations (pointers and coefficients, byte for byte) on the same buffers: what
  // the loop staged is still right, even where a new program took the old one's addresses.
  bool same_program(const precond::DeviceProgramView<T>& program) const {
    const std::vector<precond::Op<T>>& ops = program.host_ops;
    return program.index_data == placed_buffers_.first &&
           program.value_data == placed_buffers_.second && ops.size() == placed_ops_.size() &&
           std::memcmp(ops.data(), placed_ops_.data(), ops.size() * sizeof(precond::Op<T>)) == 0;
  }

  CsrView<T> A_;
  index_t n_;
  Preconditioner<T>& M_;
  std::vector<precond::Op<T>> placed_ops_;
  std::pair<const void*, const void*> placed_buffers_{nullptr, nullptr};
  std::unique_ptr<ClusterCg<T>> cluster_;
};

template <typename T>
std::unique_ptr<FusedGpuLoop<T>> make_cluster_loop(const Rows<T>& rows, index_t n,
                                                   Preconditioner<T>& M) {
  const auto* csr = std::get_if<CsrView<T>>(&rows.view);
  if (!csr) throw InputError("the cluster CG loop runs CSR rows only");
  if (!M.pointwise() && !M.device_program())
    throw InputError("the cluster CG loop needs the preconditioner's program on the GPU");
  return std::make_unique<ClusterLoop<T>>(*csr, n, M);
}
}  // namespace

template <typename T>
std::unique_ptr<FusedGpuLoop<T>> make_fused_gpu_loop(const Rows<T>& rows, index_t n,
                                                     Preconditioner<T>& M, Loop loop) {
  if (!rows.on_device) throw InputError("the fused GPU loop needs the matrix in GPU memory");
  if (n == 0) throw InputError("the fused GPU loop needs a non-empty system");
  if (loop == Loop::cluster) return make_cluster_loop(rows, n, M);
  if (loop != Loop::persistent && loop != Loop::graph)
    throw InputError("the fused GPU loops are persistent, graph and cluster, not " +
                     to_string(loop));
  return std::visit(
      [&](const auto& view) { return fused::make_for_view<T>(view, std::size_t(n), M, loop); },
      rows.view);
}

// The occupancy of the persistent kernel depends on the view's type (and CSR's lanes), not on
// its arrays: an empty view of the kind asks.
template <typename T>
PersistentLimits persistent_limits(Format format, int lanes) {
  switch (format) {
    case Format::csr:
      return fused::limits_for_view(CsrView<T>{0, nullptr, nullptr, nullptr, lanes, {}});
    case Format::ell: return fused::limits_for_view(EllView<T>{});
    case Format::hll: return fused::limits_for_view(HllView<T>{});
    case Format::coo: return fused::limits_for_view(CooView<T>{});
  }
  return {};
}

template std::unique_ptr<FusedGpuLoop<float>> make_fused_gpu_loop(const Rows<float>&, index_t,
                                                                  Preconditioner<float>&, Loop);
template std::unique_ptr<FusedGpuLoop<double>> make_fused_gpu_loop(const Rows<double>&, index_t,
                                                                   Preconditioner<double>&, Loop);
template PersistentLimits persistent_limits<float>(Format, int);
template PersistentLimits persistent_limits<double>(Format, int);

}  // namespace cgs
