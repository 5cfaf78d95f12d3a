/* CUDA emulated on the CPU, for tests only: the subset of the CUDA runtime that
 * sapsim uses, over host memory, and kernel launches as loops over blocks and
 * threads (C++). Building kernels/ *.cu files and host/backend_cuda.c against this
 * header (-DSAP_CUDA_SHIM -Itests/shim) runs the CUDA backend's launchers and
 * kernels in CI without a GPU. It checks indexing, launch geometry, compaction and
 * memory traffic between backends, not the hardware: threads run one after
 * another, so it cannot show races; kernels using shared memory, barriers or
 * atomics would need a real device (there are none). */
#ifndef SAPSIM_TESTS_SHIM_CUDA_RUNTIME_H
#define SAPSIM_TESTS_SHIM_CUDA_RUNTIME_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { cudaSuccess = 0, cudaErrorMemoryAllocation = 2 } cudaError_t;
typedef enum {
  cudaMemcpyHostToHost = 0, cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3
} cudaMemcpyKind;
typedef void* cudaStream_t;
struct cudaDeviceProp { char name[256]; };

static inline const char* cudaGetErrorString(cudaError_t e) {
  return e == cudaSuccess ? "no error" : "out of memory (emulation)";
}
static inline cudaError_t cudaGetLastError(void) { return cudaSuccess; }
static inline cudaError_t cudaDeviceSynchronize(void) { return cudaSuccess; }
static inline cudaError_t cudaGetDeviceCount(int* n) { *n = 1; return cudaSuccess; }
static inline cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp* p, int dev) {
  (void)dev;
  snprintf(p->name, sizeof(p->name), "CUDA emulated on the CPU (tests/shim)");
  return cudaSuccess;
}
static inline cudaError_t cudaMalloc(void** p, size_t n) {
  *p = malloc(n ? n : 1);
  if (*p) memset(*p, 0xFF, n);  /* poison: nothing may rely on fresh device memory */
  return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
static inline cudaError_t cudaFree(void* p) { free(p); return cudaSuccess; }
static inline cudaError_t cudaMemcpy(void* d, const void* s, size_t n, cudaMemcpyKind k) {
  (void)k;
  memmove(d, s, n);
  return cudaSuccess;
}
static inline cudaError_t cudaMemcpyAsync(void* d, const void* s, size_t n, cudaMemcpyKind k,
                                          cudaStream_t st) {
  (void)st;
  return cudaMemcpy(d, s, n, k);
}
static inline cudaError_t cudaMemset(void* d, int v, size_t n) { memset(d, v, n); return cudaSuccess; }

#ifdef __cplusplus
/* ---- kernels: qualifiers, built-in indices, launches ---- */
#define __global__
#define __device__
#define __host__
#define __noinline__ __attribute__((noinline))
#define __forceinline__ inline

struct dim3 {
  unsigned x, y, z;
};
static dim3 blockIdx, threadIdx, blockDim, gridDim;

/* SAPG_LAUNCH(kernel, grid, block)(args...): every (block, thread) in order */
template <typename... P>
struct sapShimLaunch {
  void (*kernel)(P...);
  unsigned grid, block;
  template <typename... A>
  void operator()(A&&... args) const {
    gridDim = dim3{grid, 1, 1};
    blockDim = dim3{block, 1, 1};
    for (unsigned b = 0; b < grid; b++)
      for (unsigned t = 0; t < block; t++) {
        blockIdx = dim3{b, 0, 0};
        threadIdx = dim3{t, 0, 0};
        kernel(args...);
      }
  }
};
template <typename... P>
static inline sapShimLaunch<P...> sapShimMakeLaunch(void (*k)(P...), unsigned g, unsigned b) {
  return sapShimLaunch<P...>{k, g, b};
}
#define SAPG_LAUNCH(kernel, grid, block) sapShimMakeLaunch(kernel, (unsigned)(grid), (unsigned)(block))
#endif

#endif
