// Device discovery, the shared stream, checked memory and copies.
#include <atomic>
#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <sstream>

#include "base/tuning.hpp"
#include "spmv/cuda/cuda_backends.hpp"
#include "spmv/cuda/cuda_common.cuh"
#include "spmv/cuda/cusparse_api.hpp"
#include "spmv/parallel_copy.hpp"

namespace cgs {
namespace cuda {
namespace {

std::string mib(std::size_t bytes) {
  char text[64];
  std::snprintf(text, sizeof text, "%.1f MiB", double(bytes) / (1024.0 * 1024.0));
  return text;
}

std::string version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

// Device memory comes from the device's stream-ordered pool (cudaMallocAsync / cudaFreeAsync on
// the shared stream), which keeps what is freed for the next allocations instead of handing it
// back: cudaFree waits for the device, and the GPU AMG set-up makes ~285 allocations and frees
// (the frees 16 ms of host time on poisson2d:3000, 0.6 ms from the pool: BENCHMARKS 20p).
// Tuning::device_pool off goes back to cudaMalloc / cudaFree. Fixed at the first use: memory
// from the pool must go back to it.
bool pool_on() {
  static const bool on = tuning().device_pool;
  return on;
}

cudaMemPool_t device_pool(int device) {
  cudaMemPool_t pool;
  CGS_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
  return pool;
}

void keep_freed_memory(int device) {
  if (!pool_on()) return;
  std::uint64_t keep = UINT64_MAX;
  CGS_CUDA_CHECK(
      cudaMemPoolSetAttribute(device_pool(device), cudaMemPoolAttrReleaseThreshold, &keep));
}

std::atomic<bool> context_made{false};

CudaContext* create_context() {
  std::string why;
  if (!cuda_device_available(&why)) throw DeviceError("no usable CUDA device: " + why);
  auto* context = new CudaContext;
  CGS_CUDA_CHECK(cudaGetDevice(&context->device));
  cudaDeviceProp props{};
  CGS_CUDA_CHECK(cudaGetDeviceProperties(&props, context->device));
  context->sm_count = props.multiProcessorCount;
  context->max_threads_per_sm = props.maxThreadsPerMultiProcessor;
  CGS_CUDA_CHECK(cudaStreamCreate(&context->stream));
  keep_freed_memory(context->device);
  int runtime = 0, driver = 0;
  CGS_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  CGS_CUDA_CHECK(cudaDriverGetVersion(&driver));
  std::ostringstream text;
  text << props.name << ", " << props.multiProcessorCount << " SMs, sm_" << props.major
       << props.minor << ", " << mib(props.totalGlobalMem) << ", CUDA runtime "
       << version_text(runtime) << ", driver " << version_text(driver);
  context->description = text.str();
  context_made = true;
  return context;
}

}  // namespace

void throw_call_error(const char* call, const char* file, int line, const std::string& error) {
  std::ostringstream text;
  text << "CUDA call failed: " << call << " at " << file << ":" << line << ": " << error;
  throw DeviceError(text.str());
}

std::string describe(cudaError_t error) {
  return std::string(cudaGetErrorName(error)) + " (" + cudaGetErrorString(error) + ")";
}

std::string describe(cusparseStatus_t status) {
  const CusparseApi& lib = cusparse_api();  // loaded: a status came from it
  return std::string(lib.error_name(status)) + " (" + lib.error_string(status) + ")";
}

cusparseHandle_t CudaContext::cusparse() {
  if (!cusparse_) {
    const CusparseApi& lib = cusparse_api();
    CGS_CUSPARSE_CHECK(lib.create(&cusparse_));
    CGS_CUSPARSE_CHECK(lib.set_stream(cusparse_, stream));
  }
  return cusparse_;
}

// Deliberately never destroyed: tearing down a stream or handle during static destruction can
// race the CUDA runtime's own shutdown; the driver reclaims everything at process exit.
CudaContext& cuda_context() {
  static CudaContext* context = create_context();
  return *context;
}

namespace {

// Tuning::device_tally 1: at exit, stderr gets how many device allocations, frees, copies and
// synchronisations the process made and the host seconds each kind took (what a small system's
// fixed set-up cost is made of; no profiler needed on the GPU host).
struct Tally {
  struct Kind {
    long long calls = 0;
    double seconds = 0, bytes = 0;
  };
  Kind allocate, free, to_device, to_host, sync;
  bool on = false;
  bool each_copy = false;  // 2: also a line per upload >= 1 MB and allocation >= 16 MB
};

Tally& tally() {
  static Tally* t = [] {
    auto* made = new Tally;
    made->on = tuning().device_tally > 0;
    made->each_copy = tuning().device_tally == 2;
    if (made->on)
      std::atexit([] {
        const Tally& s = tally();
        auto line = [](const char* name, const Tally::Kind& k) {
          std::fprintf(stderr, "device tally: %-10s %6lld calls %9.3f ms %12.0f bytes\n", name,
                       k.calls, k.seconds * 1e3, k.bytes);
        };
        line("allocate", s.allocate);
        line("free", s.free);
        line("to device", s.to_device);
        line("to host", s.to_host);
        line("sync", s.sync);
        cudaMemPool_t pool;
        std::uint64_t used = 0, reserved = 0;
        if (pool_on() && cudaDeviceGetDefaultMemPool(&pool, cuda_context().device) == cudaSuccess &&
            cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &used) == cudaSuccess &&
            cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemHigh, &reserved) == cudaSuccess)
          std::fprintf(stderr, "device tally: pool high water %.1f MB used, %.1f MB reserved\n",
                       double(used) / 1e6, double(reserved) / 1e6);
      });
    return made;
  }();
  return *t;
}

// Adds the host time from `start` to `kind` when the tally is on.
class Counted {
 public:
  Counted(Tally::Kind Tally::*kind, std::size_t bytes = 0) : kind_(kind), bytes_(bytes) {
    if (tally().on) start_ = std::chrono::steady_clock::now();
  }
  ~Counted() {
    Tally& t = tally();
    if (!t.on) return;
    Tally::Kind& k = t.*kind_;
    ++k.calls;
    k.bytes += double(bytes_);
    k.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  Tally::Kind Tally::*kind_;
  std::size_t bytes_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace

void* device_allocate(std::size_t bytes, const char* what) {
  if (bytes == 0) return nullptr;
  cuda_context();  // a clear DeviceError when there is no device at all
  const Counted counted(&Tally::allocate, bytes);
  void* p = nullptr;
  const auto start = std::chrono::steady_clock::now();
  cudaError_t status =
      pool_on() ? cudaMallocAsync(&p, bytes, cuda_context().stream) : cudaMalloc(&p, bytes);
  if (status == cudaErrorMemoryAllocation && pool_on()) {
    // What the pool keeps may be what is missing: hand it back and ask once more.
    (void)cudaGetLastError();
    CGS_CUDA_CHECK(cudaStreamSynchronize(cuda_context().stream));
    CGS_CUDA_CHECK(cudaMemPoolTrimTo(device_pool(cuda_context().device), 0));
    status = cudaMallocAsync(&p, bytes, cuda_context().stream);
  }
  if (tally().each_copy && bytes >= (std::size_t(16) << 20))
    std::fprintf(
        stderr, "device tally: allocate %10zu bytes %7.2f ms (%s)\n", bytes,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() * 1e3,
        what);
  if (status == cudaSuccess) return p;
  (void)cudaGetLastError();  // an allocation failure is not sticky: clear it
  std::size_t free_bytes = 0, total_bytes = 0;
  const bool known = cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess;
  std::ostringstream text;
  if (status == cudaErrorMemoryAllocation) {
    text << "out of device memory allocating " << what << ": asked for " << bytes << " bytes ("
         << mib(bytes) << ")";
  } else {
    text << "cudaMalloc of " << bytes << " bytes for " << what << " failed: " << describe(status);
  }
  if (known) {
    text << "; " << free_bytes << " bytes (" << mib(free_bytes) << ") free of " << total_bytes
         << " (" << mib(total_bytes) << ")";
  }
  throw DeviceError(text.str());
}

void device_free(void* p) noexcept {
  if (!p) return;
  const Counted counted(&Tally::free);
  // nothing useful to do with an error in a destructor
  (void)(pool_on() ? cudaFreeAsync(p, cuda_context().stream) : cudaFree(p));
}

namespace {
double host_to_device_total = 0;  // host thread only: copies are issued from one thread

// Large uploads go through two pinned staging buffers in turn: the host copies chunk k + 1 into
// one while the DMA engine sends chunk k from the other. A pageable copy of that size is
// staged by the driver one piece at a time, without the overlap; a 9M-row matrix (0.54 GB) is
// most of Jacobi-CG's set-up on the GPU. The host's part is a copy on every
// core (parallel_copy): one core's memcpy into the staging buffer ran at ~2.3 GB/s, the rate
// §10d measured for the whole upload, well below the link's. Null where pinned memory is
// refused: the plain copy then.
struct Staging {
  static constexpr std::size_t kChunk = std::size_t(16) << 20;
  void* buffer[2] = {nullptr, nullptr};
  cudaEvent_t sent[2] = {nullptr, nullptr};
  std::mutex in_use;  // one large copy at a time, whichever host thread asks
};

Staging* staging() {
  static Staging* staged = [] {
    auto* s = new Staging;
    for (int k = 0; k < 2; ++k) {
      if (cudaMallocHost(&s->buffer[k], Staging::kChunk) != cudaSuccess ||
          cudaEventCreateWithFlags(&s->sent[k], cudaEventDisableTiming) != cudaSuccess) {
        (void)cudaGetLastError();
        return static_cast<Staging*>(nullptr);  // leaked on purpose: rare, and process-long
      }
    }
    return s;
  }();
  return staged;
}

void staged_copy_to_device(char* dst, const char* src, std::size_t bytes, Staging& s) {
  const std::lock_guard<std::mutex> lock(s.in_use);
  bool in_flight[2] = {false, false};
  int k = 0;
  for (std::size_t done = 0; done < bytes; done += Staging::kChunk, k ^= 1) {
    const std::size_t n = std::min(Staging::kChunk, bytes - done);
    if (in_flight[k]) CGS_CUDA_CHECK(cudaEventSynchronize(s.sent[k]));  // buffer k free again
    parallel_copy(s.buffer[k], src + done, n);
    CGS_CUDA_CHECK(cudaMemcpyAsync(dst + done, s.buffer[k], n, cudaMemcpyHostToDevice, stream()));
    CGS_CUDA_CHECK(cudaEventRecord(s.sent[k], stream()));
    in_flight[k] = true;
  }
}

}  // namespace

void copy_to_device(void* dst, const void* src, std::size_t bytes) {
  if (bytes == 0) return;
  const Counted counted(&Tally::to_device, bytes);
  const auto start = std::chrono::steady_clock::now();
  Staging* s = bytes >= 2 * Staging::kChunk ? staging() : nullptr;
  const double staging_made =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (s)
    staged_copy_to_device(static_cast<char*>(dst), static_cast<const char*>(src), bytes, *s);
  else
    CGS_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream()));
  synchronize();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  host_to_device_total += seconds;
  if (tally().each_copy && bytes >= (std::size_t(1) << 20))
    std::fprintf(
        stderr,
        "device tally: upload %10zu bytes %7.2f ms (%5.1f GB/s; staging found in %.2f ms)\n", bytes,
        seconds * 1e3, double(bytes) / seconds * 1e-9, staging_made * 1e3);
}

double host_to_device_seconds() { return host_to_device_total; }

void prepare_staging() { (void)staging(); }

namespace {

// Large downloads the other way round: the DMA engine fills one staging buffer with chunk k + 1
// while every core copies chunk k out of the other. A pageable download is staged by the driver
// one piece at a time; the GPU AMG set-up's downloads (strength, aggregates, coarse patterns:
// ~0.2-0.3 GB at 9M rows) ran at ~4.5 GB/s that way (BENCHMARKS 20p).
void staged_copy_to_host(char* dst, const char* src, std::size_t bytes, Staging& s) {
  const std::lock_guard<std::mutex> lock(s.in_use);
  const std::size_t chunks = (bytes + Staging::kChunk - 1) / Staging::kChunk;
  auto fetch = [&](std::size_t c) {  // chunk c into buffer c % 2, whose last chunk is copied out
    const std::size_t at = c * Staging::kChunk;
    CGS_CUDA_CHECK(cudaMemcpyAsync(s.buffer[c % 2], src + at, std::min(Staging::kChunk, bytes - at),
                                   cudaMemcpyDeviceToHost, stream()));
    CGS_CUDA_CHECK(cudaEventRecord(s.sent[c % 2], stream()));
  };
  fetch(0);
  for (std::size_t c = 0; c < chunks; ++c) {
    if (c + 1 < chunks) fetch(c + 1);
    CGS_CUDA_CHECK(cudaEventSynchronize(s.sent[c % 2]));
    const std::size_t at = c * Staging::kChunk;
    parallel_copy(dst + at, s.buffer[c % 2], std::min(Staging::kChunk, bytes - at));
  }
}

}  // namespace

void copy_to_host(void* dst, const void* src, std::size_t bytes) {
  if (bytes == 0) return;
  const Counted counted(&Tally::to_host, bytes);
  Staging* s = bytes >= 2 * Staging::kChunk ? staging() : nullptr;
  if (s) {
    staged_copy_to_host(static_cast<char*>(dst), static_cast<const char*>(src), bytes, *s);
    return;
  }
  CGS_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream()));
  synchronize();
}

void copy_on_device(void* dst, const void* src, std::size_t bytes) {
  if (bytes == 0) return;
  CGS_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream()));
}

void synchronize() {
  const Counted counted(&Tally::sync);
  CGS_CUDA_CHECK(cudaStreamSynchronize(stream()));
}

int grid_for(long long work, int per_block, int user_blocks) {
  long long blocks = (work + per_block - 1) / per_block;
  if (user_blocks > 0) blocks = std::min<long long>(blocks, user_blocks);
  return int(std::clamp<long long>(blocks, 1, INT_MAX));
}

}  // namespace cuda

bool cuda_device_available(std::string* why) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    if (why) {
      *why = status == cudaErrorInsufficientDriver || status == cudaErrorNoDevice
                 ? "no CUDA driver or device (" + cuda::describe(status) + ")"
                 : "cudaGetDeviceCount failed: " + cuda::describe(status);
    }
    return false;
  }
  if (count == 0) {
    if (why) *why = "the CUDA driver reports no device";
    return false;
  }
  if (why) why->clear();
  return true;
}

void* gpu_allocate(std::size_t bytes, const char* what) {
  return cuda::device_allocate(bytes, what);
}
void gpu_free(void* p) noexcept { cuda::device_free(p); }
void gpu_upload(void* device_dst, const void* host_src, std::size_t bytes) {
  cuda::copy_to_device(device_dst, host_src, bytes);
}
void gpu_download(void* host_dst, const void* device_src, std::size_t bytes) {
  cuda::copy_to_host(host_dst, device_src, bytes);
}

bool cuda_context_made() { return cuda::context_made; }

bool cuda_device_present(std::string* why) {
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  if (visible && (visible[0] == '\0' || std::strcmp(visible, "-1") == 0)) {
    if (why) *why = "CUDA_VISIBLE_DEVICES hides every device";
    return false;
  }
  std::error_code error;
  for (const char* node : {"/dev/nvidia0", "/dev/dxg"})
    if (std::filesystem::exists(node, error)) return true;
  if (why) *why = "no NVIDIA device node (/dev/nvidia0)";
  return false;
}

void cuda_prepare_uploads() {
  cuda::cuda_context();
  cuda::prepare_staging();
}

std::string cuda_device_description() {
  std::string why;
  if (!cuda_device_available(&why)) return "no CUDA device: " + why;
  return cuda::cuda_context().description;
}

}  // namespace cgs
