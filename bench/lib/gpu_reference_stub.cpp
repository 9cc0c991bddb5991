// Built instead of gpu_reference.cpp when CUDA is not: every GPU reference says so.
#include "bench/lib/references.hpp"
#include "spmv/backend.hpp"

namespace cgs::bench {
namespace {
[[noreturn]] void no_gpu() { throw DeviceError("the benchmarks were built without CUDA"); }
}  // namespace

double gpu_copy_bandwidth(std::size_t, int) { no_gpu(); }

struct CusparseCsrSpmv::Impl {};
CusparseCsrSpmv::CusparseCsrSpmv(const CsrMatrix<double>&) { no_gpu(); }
CusparseCsrSpmv::~CusparseCsrSpmv() = default;
std::vector<std::string> CusparseCsrSpmv::algorithms() const { no_gpu(); }
void CusparseCsrSpmv::select(const std::string&) { no_gpu(); }
void CusparseCsrSpmv::set_x(const std::vector<double>&) { no_gpu(); }
std::vector<double> CusparseCsrSpmv::timed_batches(int, int) { no_gpu(); }
std::vector<double> CusparseCsrSpmv::y() { no_gpu(); }

struct SampleStyleCg::Impl {};
SampleStyleCg::SampleStyleCg(const CsrMatrix<double>&) { no_gpu(); }
SampleStyleCg::~SampleStyleCg() = default;
CgRun SampleStyleCg::run(const std::vector<double>&, const std::vector<double>&, const CgRequest&) {
  no_gpu();
}

struct CusparseIc0Cg::Impl {};
CusparseIc0Cg::CusparseIc0Cg(const CsrMatrix<double>&) { no_gpu(); }
CusparseIc0Cg::~CusparseIc0Cg() = default;
double CusparseIc0Cg::setup() { no_gpu(); }
double CusparseIc0Cg::setup_seconds() const { no_gpu(); }
CgRun CusparseIc0Cg::run(const std::vector<double>&, const CgRequest&) { no_gpu(); }

}  // namespace cgs::bench
