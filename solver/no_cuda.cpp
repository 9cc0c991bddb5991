// Built instead of solver/cuda/*.cu and solver/precond/*.cu when no CUDA compiler was found: every
// GPU request of the solver fails with a DeviceError that says so (cgsolve exits 4).
#include "solver/cuda/cluster_cg.hpp"
#include "solver/cuda/cuda_ops.hpp"
#include "solver/cuda/fused_cg.hpp"
#include "solver/precond/amg_gpu.hpp"
#include "solver/precond/device_program.hpp"
#include "solver/precond/fsai.hpp"
#include "solver/precond/ic0_gpu.hpp"
#include "solver/precond/spectrum_gpu.hpp"

namespace cgs {

namespace {
constexpr const char* kNoCuda = "this cgsolve was built without CUDA (no nvcc found at build time)";
}

template <typename T>
std::unique_ptr<VectorOps<T>> make_cuda_vector_ops(std::size_t) {
  throw DeviceError(kNoCuda);
}

template <typename T>
std::unique_ptr<FusedGpuLoop<T>> make_fused_gpu_loop(const Rows<T>&, index_t, Preconditioner<T>&,
                                                     Loop) {
  throw DeviceError(kNoCuda);
}

template <typename T>
PersistentLimits persistent_limits(Format, int) {
  throw DeviceError(kNoCuda);
}

template <typename T>
ClusterFit cluster_fit(index_t, const index_t*, int, bool, const ClusterProgramShape*) {
  throw DeviceError(kNoCuda);
}

template <typename T>
std::unique_ptr<ClusterCg<T>> make_cluster_cg(const CsrView<T>&, index_t, const T*, int, bool,
                                              const precond::DeviceProgramView<T>*) {
  throw DeviceError(kNoCuda);
}

namespace precond {
template <typename T>
std::unique_ptr<DeviceProgram<T>> make_device_program(const ProgramSpec<T>&) {
  throw DeviceError(kNoCuda);
}
template std::unique_ptr<DeviceProgram<float>> make_device_program(const ProgramSpec<float>&);
template std::unique_ptr<DeviceProgram<double>> make_device_program(const ProgramSpec<double>&);
Interval spectrum_bounds_on_device(const CsrMatrix<double>&, const std::vector<double>&, int,
                                   const CsrArrays&) {
  throw DeviceError(kNoCuda);
}
template <typename T>
std::unique_ptr<FsaiGpu<T>> make_fsai_gpu() {
  throw DeviceError(kNoCuda);
}
template std::unique_ptr<FsaiGpu<float>> make_fsai_gpu();
template std::unique_ptr<FsaiGpu<double>> make_fsai_gpu();
template <typename T>
std::unique_ptr<Ic0Gpu<T>> make_ic0_gpu() {
  throw DeviceError(kNoCuda);
}
template std::unique_ptr<Ic0Gpu<float>> make_ic0_gpu();
template std::unique_ptr<Ic0Gpu<double>> make_ic0_gpu();
namespace amg {
std::unique_ptr<GpuLevelValues> make_gpu_level_values() { throw DeviceError(kNoCuda); }
CsrMatrix<double> device_galerkin_product(const CsrMatrix<double>&, const CsrMatrix<double>&,
                                          const CsrMatrix<double>&, index_t*) {
  throw DeviceError(kNoCuda);
}
}  // namespace amg
}  // namespace precond

#define CGS_NO_CUDA(T)                                                                     \
  template std::unique_ptr<VectorOps<T>> make_cuda_vector_ops(std::size_t);                \
  template std::unique_ptr<FusedGpuLoop<T>> make_fused_gpu_loop(const Rows<T>&, index_t,   \
                                                                Preconditioner<T>&, Loop); \
  template PersistentLimits persistent_limits<T>(Format, int);                             \
  template ClusterFit cluster_fit<T>(index_t, const index_t*, int, bool,                   \
                                     const ClusterProgramShape*);                          \
  template std::unique_ptr<ClusterCg<T>> make_cluster_cg(                                  \
      const CsrView<T>&, index_t, const T*, int, bool, const precond::DeviceProgramView<T>*);
CGS_NO_CUDA(float)
CGS_NO_CUDA(double)
#undef CGS_NO_CUDA

}  // namespace cgs
