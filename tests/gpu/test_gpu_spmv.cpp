// Every CUDA SpMV kernel, sorted and unsorted, in float and double, against a host reference
// computed in double on the same (cast) matrix.
#include <limits>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "formats/row_order.hpp"
#include "gpu_test_util.hpp"
#include "solver/cuda/cuda_ops.hpp"

namespace cgs {
namespace {

using namespace gputest;

struct KernelCase {
  Format format;
  std::string kernel;
  index_t hack_size = 32;
  int block_size = 0;
  int blocks = 0;
  index_t hll_tail = -1;   // HLL's HYB tail: -1 from the row lengths
  index_t hll_sigma = -1;  // HLL's sort window (SELL-C-sigma): -1 from the row lengths, 0 none

  std::string label() const {
    std::string text = to_string(format) + "/" + (kernel.empty() ? "default" : kernel);
    if (format == Format::hll) text += " hack " + std::to_string(hack_size);
    if (block_size) text += " block " + std::to_string(block_size);
    if (blocks) text += " blocks " + std::to_string(blocks);
    if (hll_tail >= 0) text += " tail past " + std::to_string(hll_tail);
    if (hll_sigma >= 0) text += " sigma " + std::to_string(hll_sigma);
    return text;
  }
};

std::vector<KernelCase> kernel_cases() {
  std::vector<KernelCase> cases;
  for (const char* k :
       {"", "scalar", "stream", "stream4", "stream8", "vector", "adaptive", "vector2", "vector4",
        "vector8", "vector16", "vector32", "cusparse", "balanced"}) {
    cases.push_back({Format::csr, k});
  }
  cases.push_back({Format::csr, "vector4", 32, 64, 2});
  cases.push_back({Format::csr, "scalar", 32, 32, 1});
  cases.push_back({Format::csr, "balanced", 32, 0, 1});  // one block strides over every unit
  cases.push_back({Format::ell, ""});
  cases.push_back({Format::ell, "thread", 32, 1024, 1});
  cases.push_back({Format::hll, ""});
  cases.push_back({Format::hll, "thread"});
  cases.push_back({Format::hll, "thread", 7});
  cases.push_back({Format::hll, "thread", 1, 32, 3});
  // The HYB tail at forced thresholds (every entry in the tail; short rows too; a grid of 3
  // blocks striding over the tail's pieces).
  cases.push_back({Format::hll, "thread", 32, 0, 0, 0});
  cases.push_back({Format::hll, "thread", 7, 0, 0, 1});
  cases.push_back({Format::hll, "thread", 32, 32, 3, 3});
  // SELL-C-sigma: rows sorted in windows (of one hack; of 2; of 3 hacks of 7, which divides
  // no test size; past n), the product written through the storage order; with the tail
  // chosen, everything in the tail, and a grid of 3 blocks striding over the slots; and the
  // rows' own order asked for.
  cases.push_back({Format::hll, "thread", 32, 0, 0, -1, 32});
  cases.push_back({Format::hll, "thread", 32, 0, 0, -1, 64});
  cases.push_back({Format::hll, "thread", 32, 0, 0, 0, 64});
  cases.push_back({Format::hll, "thread", 7, 0, 0, 1, 21});
  cases.push_back({Format::hll, "thread", 32, 32, 3, 3, 4096});
  cases.push_back({Format::hll, "thread", 32, 0, 0, -1, 0});
  cases.push_back({Format::hll, "cusparse"});
  cases.push_back({Format::hll, "cusparse", 8});
  for (const char* k : {"", "segscan", "segscan-shfl", "segscan-shared", "cusparse"}) {
    cases.push_back({Format::coo, k});
  }
  // Launch shapes that move the COO warp and block boundaries across the rows.
  cases.push_back({Format::coo, "segscan-shfl", 32, 32, 1});
  cases.push_back({Format::coo, "segscan-shared", 32, 64, 3});
  cases.push_back({Format::coo, "segscan-shfl", 32, 96, 5});
  cases.push_back({Format::coo, "segscan-shared", 32, 1024, 7});
  cases.push_back({Format::coo, "segscan-shfl", 32, 1024, 0});
  cases.push_back({Format::coo, "segscan-shared", 32, 32, 4000});
  return cases;
}

// ELL pads every row to the longest: skip it where that would not fit comfortably.
bool ell_fits(const CsrMatrix<double>& A) {
  index_t width = 0;
  for (index_t r = 0; r < A.rows; ++r) width = std::max(width, A.row_length(r));
  return double(width) * A.rows <= 5e7;
}

// only: check the kernels of this format alone (all where absent).
template <typename T>
void check_all_kernels(const NamedMatrix& matrix, bool sorted,
                       std::optional<Format> only = std::nullopt) {
  const CsrMatrix<double>& original = matrix.A;
  const CsrMatrix<double> A64 =
      sorted ? permute_symmetric(original, sort_rows_by_length(original)) : original;
  const CsrMatrix<T> A = cast_values<T>(A64);
  const std::vector<T> x = random_vector<T>(std::size_t(A.cols), 7);
  const Reference ref = reference_product(A, x);
  const double tolerance = sizeof(T) == 8 ? 1e-12 : 1e-5;

  const std::size_t n = std::size_t(std::max(A.rows, A.cols));
  auto ops = make_cuda_vector_ops<T>(n);
  T* x_dev = ops->allocate(std::size_t(A.cols));
  T* y_dev = ops->allocate(std::size_t(A.rows));
  ops->upload(x.data(), x_dev, x.size());
  const std::vector<T> poison(std::size_t(A.rows), std::numeric_limits<T>::quiet_NaN());

  for (const KernelCase& c : kernel_cases()) {
    if (only && c.format != *only) continue;
    if (c.format == Format::ell && !ell_fits(original)) continue;
    INFO(matrix.name << std::string(sorted ? ", sorted" : ", unsorted") << ", "
                     << std::string(sizeof(T) == 8 ? "double" : "float") << ", " << c.label());
    BackendOptions options;
    options.format = c.format;
    options.device = Device::gpu;
    options.kernel = c.kernel;
    options.hack_size = c.hack_size;
    options.block_size = c.block_size;
    options.blocks = c.blocks;
    options.hll_tail = c.hll_tail;
    options.hll_sigma = c.hll_sigma;
    std::unique_ptr<SpmvBackend<T>> backend = make_cuda_backend(A, options);
    CHECK(backend->rows() == A.rows);
    CHECK(backend->cols() == A.cols);
    CHECK(backend->nnz() == A.nnz());
    CHECK(backend->device() == Device::gpu);
    if (A.rows > 0) CHECK(backend->min_bytes() > 0);

    ops->upload(poison.data(), y_dev, poison.size());  // every row must be written
    backend->apply(x_dev, y_dev);
    backend->apply(x_dev, y_dev);  // twice: no state may leak from one product to the next
    ops->check_errors();
    std::vector<T> y(std::size_t(A.rows));
    ops->download(y_dev, y.data(), y.size());
    const double error = worst_row_error(y, ref);
    INFO("backend " << backend->name() << ", worst row error " << error);
    CHECK(error <= tolerance);
  }
  ops->release(x_dev);
  ops->release(y_dev);
}

TEST_CASE("GPU SpMV: every kernel matches the host reference, sorted and unsorted") {
  CGS_REQUIRE_GPU_OR_SKIP();
  MESSAGE("device: " << cuda_device_description());
  for (const NamedMatrix& matrix : spmv_test_matrices()) {
    for (bool sorted : {false, true}) {
      if (sorted && matrix.A.rows != matrix.A.cols) continue;  // P A P^T needs a square A
      check_all_kernels<double>(matrix, sorted);
      check_all_kernels<float>(matrix, sorted);
    }
  }
}

// The HLL kernels alone (SELL-C-sigma windows, HYB tails, cuSPARSE's sliced ELL): what
// a selection short enough for compute-sanitizer, in less time than every kernel.
TEST_CASE("GPU SpMV: the HLL kernels (sorted windows, HYB tails) match the host reference") {
  CGS_REQUIRE_GPU_OR_SKIP();
  for (const NamedMatrix& matrix : spmv_test_matrices()) {
    check_all_kernels<double>(matrix, false, Format::hll);
    check_all_kernels<float>(matrix, false, Format::hll);
  }
}

TEST_CASE("GPU SpMV: bad launch options and kernel names are input errors") {
  CsrMatrix<double> A;
  A.rows = A.cols = 1;
  A.row_ptr = {0, 1};
  A.col_idx = {0};
  A.values = {1.0};
  BackendOptions options;
  options.device = Device::gpu;
#ifdef CGSOLVE_HAVE_CUDA     // the no-CUDA stub answers everything with DeviceError
  options.block_size = 100;  // not a multiple of 32: refused before the device is touched
  CHECK_THROWS_AS(make_cuda_backend(A, options), InputError);
  options.block_size = 2048;
  CHECK_THROWS_AS(make_cuda_backend(A, options), InputError);
#endif

  CGS_REQUIRE_GPU_OR_SKIP();
  options.block_size = 0;
  for (Format format : {Format::csr, Format::ell, Format::hll, Format::coo}) {
    options.format = format;
    options.kernel = "no-such-kernel";
    CHECK_THROWS_AS(make_cuda_backend(A, options), InputError);
  }
  options.format = Format::ell;
  options.kernel = "cusparse";
  CHECK_THROWS_AS(make_cuda_backend(A, options), InputError);
  // The stream kernel's shape is fixed by its row blocks.
  options.format = Format::csr;
  options.kernel = "stream";
  options.block_size = 512;
  CHECK_THROWS_AS(make_cuda_backend(A, options), InputError);
  options.block_size = 0;
  options.blocks = 4;
  CHECK_THROWS_AS(make_cuda_backend(A, options), InputError);
}

TEST_CASE("GPU: without a device every entry point says so with a DeviceError") {
  std::string why;
  if (cuda_device_available(&why)) {
    const std::string description = cuda_device_description();
    MESSAGE("device: " << description);
    CHECK(description.find("SMs") != std::string::npos);
    return;
  }
  MESSAGE("no GPU here (" << why << "): checking the errors");
  CHECK(!why.empty());
  CsrMatrix<double> A;
  BackendOptions options;
  options.device = Device::gpu;
  CHECK_THROWS_AS(make_cuda_backend(A, options), DeviceError);
  CHECK_THROWS_AS(make_cuda_vector_ops<double>(10), DeviceError);
  CHECK_THROWS_AS(make_cuda_vector_ops<float>(10), DeviceError);
  CHECK_THROWS_AS(cuda_prepare_uploads(), DeviceError);
}

TEST_CASE("GPU: upload buffers made ahead on another thread serve staged uploads") {
  CGS_REQUIRE_GPU_OR_SKIP();
  std::thread ahead(cuda_prepare_uploads);  // as cgsolve does while it reads its input
  ahead.join();
  cuda_prepare_uploads();  // a second call changes nothing
  // 40 MB: above the size that is staged (two 16 MB chunks and a partial one).
  const std::size_t count = (std::size_t(40) << 20) / sizeof(double) + 3;
  std::vector<double> host(count), back(count, 0.0);
  for (std::size_t i = 0; i < count; ++i) host[i] = double(i % 1000003) * 0.5 - 7.0;
  void* device = gpu_allocate(count * sizeof(double), "test upload");
  gpu_upload(device, host.data(), count * sizeof(double));
  gpu_download(back.data(), device, count * sizeof(double));
  gpu_free(device);
  CHECK(back == host);
}

TEST_CASE("GPU: an allocation larger than the device reports the bytes asked for and free") {
  CGS_REQUIRE_GPU_OR_SKIP();
  auto ops = make_cuda_vector_ops<double>(16);
  const std::size_t huge = std::size_t(1) << 47;  // 128 Ti entries: no device has that
  try {
    ops->allocate(huge);
    FAIL("the allocation should have failed");
  } catch (const DeviceError& e) {
    const std::string message = e.what();
    MESSAGE(message);
    CHECK(message.find("asked for " + std::to_string(huge * sizeof(double)) + " bytes") !=
          std::string::npos);
    CHECK(message.find("free") != std::string::npos);
  }
  // The failure must not poison the context: later work still runs.
  double* v = ops->allocate(16);
  std::vector<double> host(16, 1.0), back(16, 0.0);
  ops->upload(host.data(), v, 16);
  ops->download(v, back.data(), 16);
  CHECK(back == host);
  ops->release(v);
  ops->check_errors();
}

}  // namespace
}  // namespace cgs
