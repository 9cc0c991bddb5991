// cuSPARSE's functions as the cuSPARSE backend and the GPU AMG set-up call them, resolved from
// libcusparse on first use (base/shared_library.hpp says why): a run that never asks for
// --kernel cusparse does not load it (with libnvJitLink, 15-20 ms of a CPU run's start-up on
// two cores). Code calling cuSPARSE calls it through this table only: the library is not linked.
#pragma once

#include <cusparse.h>

namespace cgs::cuda {

struct CusparseApi {
  decltype(&::cusparseCreate) create;
  decltype(&::cusparseSetStream) set_stream;
  decltype(&::cusparseGetErrorName) error_name;
  decltype(&::cusparseGetErrorString) error_string;
  decltype(&::cusparseCreateCsr) create_csr;
  decltype(&::cusparseCreateCoo) create_coo;
  decltype(&::cusparseCreateSlicedEll) create_sliced_ell;
  decltype(&::cusparseDestroySpMat) destroy_sp_mat;
  decltype(&::cusparseCreateDnVec) create_dn_vec;
  decltype(&::cusparseDestroyDnVec) destroy_dn_vec;
  decltype(&::cusparseDnVecSetValues) dn_vec_set_values;
  decltype(&::cusparseSpMV_bufferSize) spmv_buffer_size;
  decltype(&::cusparseSpMV_preprocess) spmv_preprocess;
  decltype(&::cusparseSpMV) spmv;
  // AMG's Galerkin product on the GPU (solver/precond/amg_gpu.cu)
  decltype(&::cusparseCsrSetPointers) csr_set_pointers;
  decltype(&::cusparseSpMatGetSize) sp_mat_get_size;
  decltype(&::cusparseSpGEMM_createDescr) spgemm_create_descr;
  decltype(&::cusparseSpGEMM_destroyDescr) spgemm_destroy_descr;
  decltype(&::cusparseSpGEMMreuse_workEstimation) spgemm_reuse_work_estimation;
  decltype(&::cusparseSpGEMMreuse_nnz) spgemm_reuse_nnz;
  decltype(&::cusparseSpGEMMreuse_copy) spgemm_reuse_copy;
  decltype(&::cusparseSpGEMMreuse_compute) spgemm_reuse_compute;
};

// The table, libcusparse loaded on the first call (thread-safe). Throws DeviceError naming the
// library and the loader's reason where it cannot be loaded.
const CusparseApi& cusparse_api();

}  // namespace cgs::cuda
