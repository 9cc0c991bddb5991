// D2H into fresh std::vector: where the time goes (session experiment, untracked).
#include <cuda_runtime.h>
#include <omp.h>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>
#include <sys/mman.h>
using C = std::chrono::steady_clock;
double ms(C::time_point t) { return std::chrono::duration<double, std::milli>(C::now() - t).count(); }
int main() {
  const size_t n = 13500000;  // doubles: level 1 values of poisson2d:3000 (108 MB)
  double* d; cudaMalloc(&d, n * 8); cudaMemset(d, 1, n * 8); cudaDeviceSynchronize();
  for (int rep = 0; rep < 2; ++rep) {
    { auto t = C::now(); std::vector<double> v; v.resize(n); double a = ms(t); t = C::now();
      cudaMemcpy(v.data(), d, n * 8, cudaMemcpyDeviceToHost); printf("A resize %.1f ms, memcpy %.1f ms\n", a, ms(t)); }
    { auto t = C::now(); std::vector<double> v; v.reserve(n);
      char* p = (char*)v.data();
#pragma omp parallel for schedule(static)
      for (long k = 0; k < (long)(n * 8); k += 4096) p[k] = 0;
      double a = ms(t); t = C::now(); v.resize(n); double b = ms(t); t = C::now();
      cudaMemcpy(v.data(), d, n * 8, cudaMemcpyDeviceToHost); printf("B reserve+parallel touch %.1f, resize %.1f, memcpy %.1f ms\n", a, b, ms(t)); }
    { auto t = C::now(); std::vector<double> v; v.resize(n); double a = ms(t); t = C::now();
      cudaHostRegister(v.data(), n * 8, 0); double b = ms(t); t = C::now();
      cudaMemcpy(v.data(), d, n * 8, cudaMemcpyDeviceToHost); double c = ms(t); t = C::now(); cudaHostUnregister(v.data());
      printf("C resize %.1f, register %.1f, memcpy %.1f, unregister %.1f ms\n", a, b, c, ms(t)); }
    { auto t = C::now(); double* h; cudaMallocHost(&h, n * 8); double a = ms(t); t = C::now();
      cudaMemcpy(h, d, n * 8, cudaMemcpyDeviceToHost); double b = ms(t); t = C::now(); std::vector<double> v; v.reserve(n);
      char* p = (char*)v.data();
#pragma omp parallel for schedule(static)
      for (long k = 0; k < (long)(n * 8); k += 4096) p[k] = 0;
      v.resize(n);
#pragma omp parallel for schedule(static)
      for (long k = 0; k < (long)n; ++k) v[k] = h[k];
      double c = ms(t); t = C::now(); cudaFreeHost(h);
      printf("D mallochost %.1f, memcpy pinned %.1f, touch+resize+copy %.1f, freehost %.1f ms\n", a, b, c, ms(t)); }
    { auto t = C::now(); std::vector<double> v; v.reserve(n); madvise(v.data(), n*8, MADV_HUGEPAGE); v.resize(n); double a = ms(t); t = C::now();
      cudaMemcpy(v.data(), d, n * 8, cudaMemcpyDeviceToHost); printf("E hugepage resize %.1f ms, memcpy %.1f ms\n", a, ms(t)); }
  }
  printf("THP: "); fflush(stdout); system("cat /sys/kernel/mm/transparent_hugepage/enabled");
}
