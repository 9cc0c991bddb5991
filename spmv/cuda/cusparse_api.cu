#include <stdexcept>

#include "base/shared_library.hpp"
#include "spmv/backend.hpp"
#include "spmv/cuda/cusparse_api.hpp"

namespace cgs::cuda {
namespace {

// The soname of the libcusparse found at build time, then its full path there (spmv/CMakeLists).
CusparseApi load() {
  static const SharedLibrary library({CGSOLVE_CUSPARSE_SONAME, CGSOLVE_CUSPARSE_PATH}, "cuSPARSE");
  CusparseApi api{};
  api.create = library.function<decltype(api.create)>("cusparseCreate");
  api.set_stream = library.function<decltype(api.set_stream)>("cusparseSetStream");
  api.error_name = library.function<decltype(api.error_name)>("cusparseGetErrorName");
  api.error_string = library.function<decltype(api.error_string)>("cusparseGetErrorString");
  api.create_csr = library.function<decltype(api.create_csr)>("cusparseCreateCsr");
  api.create_coo = library.function<decltype(api.create_coo)>("cusparseCreateCoo");
  api.create_sliced_ell =
      library.function<decltype(api.create_sliced_ell)>("cusparseCreateSlicedEll");
  api.destroy_sp_mat = library.function<decltype(api.destroy_sp_mat)>("cusparseDestroySpMat");
  api.create_dn_vec = library.function<decltype(api.create_dn_vec)>("cusparseCreateDnVec");
  api.destroy_dn_vec = library.function<decltype(api.destroy_dn_vec)>("cusparseDestroyDnVec");
  api.dn_vec_set_values =
      library.function<decltype(api.dn_vec_set_values)>("cusparseDnVecSetValues");
  api.spmv_buffer_size =
      library.function<decltype(api.spmv_buffer_size)>("cusparseSpMV_bufferSize");
  api.spmv_preprocess = library.function<decltype(api.spmv_preprocess)>("cusparseSpMV_preprocess");
  api.spmv = library.function<decltype(api.spmv)>("cusparseSpMV");
  api.csr_set_pointers = library.function<decltype(api.csr_set_pointers)>("cusparseCsrSetPointers");
  api.sp_mat_get_size = library.function<decltype(api.sp_mat_get_size)>("cusparseSpMatGetSize");
  api.spgemm_create_descr =
      library.function<decltype(api.spgemm_create_descr)>("cusparseSpGEMM_createDescr");
  api.spgemm_destroy_descr =
      library.function<decltype(api.spgemm_destroy_descr)>("cusparseSpGEMM_destroyDescr");
  api.spgemm_reuse_work_estimation = library.function<decltype(api.spgemm_reuse_work_estimation)>(
      "cusparseSpGEMMreuse_workEstimation");
  api.spgemm_reuse_nnz =
      library.function<decltype(api.spgemm_reuse_nnz)>("cusparseSpGEMMreuse_nnz");
  api.spgemm_reuse_copy =
      library.function<decltype(api.spgemm_reuse_copy)>("cusparseSpGEMMreuse_copy");
  api.spgemm_reuse_compute =
      library.function<decltype(api.spgemm_reuse_compute)>("cusparseSpGEMMreuse_compute");
  return api;
}

}  // namespace

const CusparseApi& cusparse_api() {
  try {
    static const CusparseApi table = load();  // a throw leaves it unset: the next call tries again
    return table;
  } catch (const std::runtime_error& e) {
    throw DeviceError(e.what());  // the GPU path's error (cgsolve exits 4)
  }
}

}  // namespace cgs::cuda
