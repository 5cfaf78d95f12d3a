/* CUDA emulated on the CPU, for tests only: the subset of the CUDA runtime that
 * sapsim uses, over host memory (tests/shim/cuda_shim.cpp), and kernel launches
 * as loops over blocks and threads (C++). Building kernels/ *.cu files and
 * host/backend_cuda.c against this header (-DSAP_CUDA_SHIM -Itests/shim) runs the
 * CUDA backend's launchers and kernels in CI without a GPU. Stream capture is
 * emulated too: launches and copies issued while a stream captures are recorded,
 * not run, and a graph launch replays them in order. It checks indexing, launch
 * geometry, compaction and data flow, not the hardware: threads run one after
 * another, so it cannot show races; kernels with shared memory, barriers or
 * atomics would need a real device (sapsim has none). */
#ifndef SAPSIM_TESTS_SHIM_CUDA_RUNTIME_H
#define SAPSIM_TESTS_SHIM_CUDA_RUNTIME_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorMemoryAllocation = 2,
  cudaErrorStreamCaptureUnsupported = 900
} cudaError_t;
typedef enum {
  cudaMemcpyHostToHost = 0, cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3
} cudaMemcpyKind;
typedef enum { cudaStreamCaptureModeGlobal = 0, cudaStreamCaptureModeThreadLocal = 1 } cudaStreamCaptureMode;
typedef struct sapShimStream* cudaStream_t;
typedef struct sapShimGraph* cudaGraph_t;
typedef struct sapShimGraph* cudaGraphExec_t;
typedef struct sapShimEvent* cudaEvent_t;
struct cudaDeviceProp { char name[256]; };

const char* cudaGetErrorString(cudaError_t e);
cudaError_t cudaGetLastError(void);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaGetDeviceCount(int* n);
cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp* p, int dev);
cudaError_t cudaMalloc(void** p, size_t n);
cudaError_t cudaFree(void* p);
cudaError_t cudaMemcpy(void* d, const void* s, size_t n, cudaMemcpyKind k);
cudaError_t cudaMemcpyAsync(void* d, const void* s, size_t n, cudaMemcpyKind k, cudaStream_t st);
cudaError_t cudaMemset(void* d, int v, size_t n);
cudaError_t cudaStreamCreate(cudaStream_t* st);
cudaError_t cudaStreamDestroy(cudaStream_t st);
cudaError_t cudaStreamSynchronize(cudaStream_t st);
cudaError_t cudaStreamBeginCapture(cudaStream_t st, cudaStreamCaptureMode mode);
cudaError_t cudaStreamEndCapture(cudaStream_t st, cudaGraph_t* g);
cudaError_t cudaGraphInstantiate(cudaGraphExec_t* e, cudaGraph_t g, unsigned long long flags);
cudaError_t cudaGraphLaunch(cudaGraphExec_t e, cudaStream_t st);
cudaError_t cudaGraphDestroy(cudaGraph_t g);
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t e);
cudaError_t cudaEventCreate(cudaEvent_t* ev);
cudaError_t cudaEventDestroy(cudaEvent_t ev);
cudaError_t cudaEventRecord(cudaEvent_t ev, cudaStream_t st);
cudaError_t cudaEventSynchronize(cudaEvent_t ev);
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t a, cudaEvent_t b);

#ifdef __cplusplus
}

#include <functional>

/* ---- kernels: qualifiers, built-in indices, launches ---- */
#define __global__
#define __device__
#define __host__
#define __noinline__ __attribute__((noinline))
#define __forceinline__ inline

struct dim3 {
  unsigned x, y, z;
};
extern dim3 blockIdx, threadIdx, blockDim, gridDim;

/* run now, or record while a stream captures */
void sapShimSubmit(std::function<void()> work);

/* SAPG_LAUNCH(kernel, grid, block)(args...): every (block, thread) in order */
template <typename... P>
struct sapShimLaunch {
  void (*kernel)(P...);
  unsigned grid, block;
  template <typename... A>
  void operator()(A... args) const {
    void (*k)(P...) = kernel;
    unsigned g = grid, b = block;
    sapShimSubmit([=]() {
      gridDim = dim3{g, 1, 1};
      blockDim = dim3{b, 1, 1};
      for (unsigned bx = 0; bx < g; bx++)
        for (unsigned tx = 0; tx < b; tx++) {
          blockIdx = dim3{bx, 0, 0};
          threadIdx = dim3{tx, 0, 0};
          k(args...);
        }
    });
  }
};
template <typename... P>
static inline sapShimLaunch<P...> sapShimMakeLaunch(void (*k)(P...), unsigned g, unsigned b) {
  return sapShimLaunch<P...>{k, g, b};
}
#define SAPG_LAUNCH(kernel, grid, block) sapShimMakeLaunch(kernel, (unsigned)(grid), (unsigned)(block))
#endif

#endif
