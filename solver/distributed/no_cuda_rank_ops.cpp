// Without CUDA and NCCL: GPU ranks are not available.
#include "solver/distributed/cuda_rank_ops.hpp"

namespace cgs::dist {

std::unique_ptr<RankOps> make_cuda_rank_ops(MPI_Comm, const RankBlock&, const RowBlocks&,
                                            const RankSetup&) {
  throw DeviceError(
      "a distributed solve on GPUs needs cgsolve built with CUDA and NCCL (NCCL_ROOT); this "
      "one has no GPU ranks, use --device cpu");
}

RankGpu bind_rank_gpu(MPI_Comm) {
  throw DeviceError("GPU ranks need cgsolve built with CUDA and NCCL");
}

std::string gpu_rank_ops_name(const RankOps&) { return "(no GPU ranks)"; }

}  // namespace cgs::dist
