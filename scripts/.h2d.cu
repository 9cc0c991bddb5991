// H2D upload of a 0.54 GB pageable array: where the bimodal rate comes from (session experiment,
// untracked). Variants: the staged copy as spmv/cuda/device.cu does it, other chunk/buffer
// counts, fewer copy threads, the pageable cudaMemcpy, cudaHostRegister, DMA alone, host copy alone.
#include <cuda_runtime.h>
#include <omp.h>
#include <sched.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
using C = std::chrono::steady_clock;
static double ms(C::time_point t) {
  return std::chrono::duration<double, std::milli>(C::now() - t).count();
}
static void pcopy(char* to, const char* from, size_t bytes, int threads) {
  const size_t slice = size_t(1) << 20;
  const long slices = long((bytes + slice - 1) / slice);
#pragma omp parallel for schedule(static) num_threads(threads)
  for (long s = 0; s < slices; ++s) {
    size_t off = size_t(s) * slice;
    memcpy(to + off, from + off, std::min(slice, bytes - off));
  }
}
struct Stage {
  std::vector<void*> buf;
  std::vector<cudaEvent_t> ev;
  size_t chunk;
};
static Stage make_stage(int nbuf, size_t chunk) {
  Stage s;
  s.chunk = chunk;
  for (int k = 0; k < nbuf; ++k) {
    void* p;
    cudaMallocHost(&p, chunk);
    cudaEvent_t e;
    cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
    s.buf.push_back(p);
    s.ev.push_back(e);
  }
  return s;
}
static void staged(char* dst, const char* src, size_t bytes, Stage& s, cudaStream_t st,
                   int threads) {
  const int nb = int(s.buf.size());
  std::vector<bool> inflight(nb, false);
  int k = 0;
  for (size_t done = 0; done < bytes; done += s.chunk, k = (k + 1) % nb) {
    size_t n = std::min(s.chunk, bytes - done);
    if (inflight[k]) cudaEventSynchronize(s.ev[k]);
    pcopy((char*)s.buf[k], src + done, n, threads);
    cudaMemcpyAsync(dst + done, s.buf[k], n, cudaMemcpyHostToDevice, st);
    cudaEventRecord(s.ev[k], st);
    inflight[k] = true;
  }
  cudaStreamSynchronize(st);
}
int main(int argc, char** argv) {
  const size_t bytes = size_t(540) << 20;
  int cpu0 = sched_getcpu();
  cudaFree(0);
  cudaStream_t st;
  cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking);
  char* d;
  cudaMalloc(&d, bytes);
  std::vector<char> h;
  h.reserve(bytes);
  char* hp = h.data();
  auto t = C::now();
#pragma omp parallel for schedule(static)
  for (long k = 0; k < long(bytes); k += 4096) hp[k] = char(k);
  h.resize(bytes);
  double touch = ms(t);
  Stage s2x16 = make_stage(2, size_t(16) << 20), s4x16 = make_stage(4, size_t(16) << 20),
        s2x64 = make_stage(2, size_t(64) << 20), s3x4 = make_stage(3, size_t(4) << 20);
  const int T = omp_get_max_threads();
  auto gbs = [&](double m) { return bytes / (m * 1e-3) / 1e9; };
  printf("proc cpu0 %d threads %d touch %.1f ms\n", cpu0, T, touch);
  for (int rep = 0; rep < 3; ++rep) {
    char line[1024];
    int o = 0;
    t = C::now(); staged(d, hp, bytes, s2x16, st, T); o += snprintf(line + o, 200, "2x16 %.1f ", gbs(ms(t)));
    t = C::now(); staged(d, hp, bytes, s4x16, st, T); o += snprintf(line + o, 200, "4x16 %.1f ", gbs(ms(t)));
    t = C::now(); staged(d, hp, bytes, s2x64, st, T); o += snprintf(line + o, 200, "2x64 %.1f ", gbs(ms(t)));
    t = C::now(); staged(d, hp, bytes, s3x4, st, T); o += snprintf(line + o, 200, "3x4 %.1f ", gbs(ms(t)));
    t = C::now(); staged(d, hp, bytes, s2x16, st, 8); o += snprintf(line + o, 200, "2x16t8 %.1f ", gbs(ms(t)));
    t = C::now(); staged(d, hp, bytes, s4x16, st, 4); o += snprintf(line + o, 200, "4x16t4 %.1f ", gbs(ms(t)));
    t = C::now(); cudaMemcpyAsync(d, hp, bytes, cudaMemcpyHostToDevice, st); cudaStreamSynchronize(st);
    o += snprintf(line + o, 200, "pageable %.1f ", gbs(ms(t)));
    // DMA alone: the pinned 64 MB buffer sent over and over
    t = C::now();
    for (size_t done = 0; done < bytes; done += s2x64.chunk)
      cudaMemcpyAsync(d + done, s2x64.buf[0], std::min(s2x64.chunk, bytes - done), cudaMemcpyHostToDevice, st);
    cudaStreamSynchronize(st);
    o += snprintf(line + o, 200, "dma %.1f ", gbs(ms(t)));
    // host copy alone into the pinned buffers
    t = C::now();
    for (size_t done = 0, k = 0; done < bytes; done += s2x16.chunk, k ^= 1)
      pcopy((char*)s2x16.buf[k], hp + done, std::min(s2x16.chunk, bytes - done), T);
    o += snprintf(line + o, 200, "hostcopy %.1f ", gbs(ms(t)));
    if (rep == 2) {
      t = C::now(); cudaHostRegister(hp, bytes, 0); double reg = ms(t); t = C::now();
      cudaMemcpyAsync(d, hp, bytes, cudaMemcpyHostToDevice, st); cudaStreamSynchronize(st); double cp = ms(t);
      t = C::now(); cudaHostUnregister(hp);
      o += snprintf(line + o, 300, "register %.1f ms copy %.1f GB/s unregister %.1f ms", reg, gbs(cp), ms(t));
    }
    printf("  rep %d GB/s: %s\n", rep, line);
  }
  printf("  cpu at end %d\n", sched_getcpu());
  return 0;
}
