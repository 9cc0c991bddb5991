// A rank of the distributed CG on a GPU (one rank per GPU): the local block through the
// project's CUDA backends (spmv/cuda), the halo block by a CSR kernel, vector updates and local
// dot products in kernels, and between the ranks either NCCL (ncclAllReduce for the dots,
// ncclSend/ncclRecv in a group on a second stream for the halo, overlapping the local product)
// or, where NCCL refuses (two ranks on one GPU: "duplicate GPU"), MPI through host buffers.
// Built only with CUDA and NCCL (CGSOLVE_HAVE_NCCL); otherwise asking for it is a DeviceError.
#pragma once

#include <memory>
#include <string>

#include "solver/distributed/cpu_rank_ops.hpp"

namespace cgs::dist {

std::unique_ptr<RankOps> make_cuda_rank_ops(MPI_Comm comm, const RankBlock& block,
                                            const RowBlocks& blocks, const RankSetup& setup);
// Binds this rank to its GPU (local rank r of a host takes device r % devices) and says whether
// two ranks of the job share a GPU. Collective, once per process (later calls return the first
// answer). Call it before anything else touches CUDA in a rank (the project's CUDA context is made
// on the device current at its first use); make_cuda_rank_ops calls it, and refuses a context
// made on another device.
struct RankGpu {
  int device = 0;
  bool shared = false;
};
RankGpu bind_rank_gpu(MPI_Comm comm);

// "csr/cuda local block + halo block, halo over NCCL" for the report.
std::string gpu_rank_ops_name(const RankOps& ops);

}  // namespace cgs::dist
