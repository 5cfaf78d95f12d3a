/* CUDA emulated on the CPU, for tests only: the subset of the CUDA runtime that
 * sapsim uses, over host memory (tests/shim/cuda_shim.cpp), and kernel launches run
 * on the host (C++). Building kernels/ *.cu files and host/backend_cuda.c against this
 * header (-DSAP_CUDA_SHIM -Itests/shim) runs the CUDA backend's launchers and kernels
 * in CI without a GPU. Stream capture is emulated too: launches and copies issued
 * while a stream captures are recorded, not run, and a graph launch replays them in
 * order. A conditional while node added to the graph being captured (cudaGraphAddNode,
 * its body captured with cudaStreamBeginCaptureToGraph on another stream) replays its
 * body while the handle's value, set by kernels with cudaGraphSetConditional, is
 * nonzero; cudaGraphCondAssignDefault resets it at each graph launch.
 *
 * Execution model. Launches are 1-D (grid and block are counts). Blocks run one after
 * another; the threads of a block run in thread order, each until it returns or waits
 * at a barrier, as coroutines (ucontext): a thread that waits keeps its stack (256 KiB,
 * SAPSIM_SHIM_STACK_KB to change it; a guard page turns an overflow into SIGSEGV) and
 * the next thread starts on another. A kernel without barriers thus runs its threads to
 * completion one after another on one stack, as before. Emulated for block-cooperative
 * kernels:
 *  - __syncthreads() (and _count/_and/_or): the block resumes past the barrier once
 *    all its threads have arrived, released threads in thread order. A thread that
 *    returns while others wait at a barrier (undefined on a GPU), or a deadlock between
 *    barriers, aborts with a message naming the kernel, block and threads.
 *  - __shared__: `#define __shared__ static`, so a static shared array declared in a
 *    kernel is one copy used by the threads of the block that runs now; as blocks run
 *    one after another, that is one copy per block. It keeps what the previous block
 *    left in it (a GPU gives no initial value either; don't rely on it).
 *  - dynamic shared memory: SAPG_LAUNCH_SHARED(kernel, grid, block, bytes, stream)(args...)
 *    and, in the kernel, SAPG_DYNAMIC_SHARED(type, name); (kernels/cuda_check.h
 *    defines both for nvcc). The buffer is per launch, 64-byte aligned, and filled
 *    with 0xFF (NaN as float/double) before each block; null when bytes is 0.
 *    bytes > 48 KiB fails the launch as on a device without cudaFuncSetAttribute
 *    (not emulated).
 *  - warps = 32 consecutive threads of the block (warpSize): __syncwarp, __shfl_sync,
 *    __shfl_up_sync, __shfl_down_sync, __shfl_xor_sync (any 1-8 byte trivially
 *    copyable type, width a power of two <= 32), __ballot_sync, __all_sync,
 *    __any_sync. Each is a barrier over the lanes named in mask (they must name the
 *    caller and make the same call; lanes past the end of the block count as absent);
 *    a lane reading a lane outside mask or outside the block gets all-one bits.
 *  - atomicAdd/Sub/Exch/Min/Max/CAS as plain read-modify-writes (threads never run
 *    at the same time, so they are atomic), __threadfence*() no-ops, __ldg identity.
 *  - launch errors: block 0 or > 1024 threads, grid 0, or dynamic shared memory over
 *    48 KiB are reported by the next cudaGetLastError, and the kernel does not run.
 * What it cannot show: threads interleave only at barriers and warp operations, in a
 * fixed order, so data races (two threads of a block touching the same word between
 * barriers, or blocks racing through global memory), a missing __threadfence or
 * volatile, memory-model and ordering bugs, warp divergence and independent thread
 * scheduling effects all pass here; so do timing, occupancy, register and
 * shared-memory limits (other than the 48 KiB launch check). A kernel that passes
 * here can still be wrong on a device: run make test-gpu on one. */
#ifndef SAPSIM_TESTS_SHIM_CUDA_RUNTIME_H
#define SAPSIM_TESTS_SHIM_CUDA_RUNTIME_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorMemoryAllocation = 2,
  cudaErrorInvalidConfiguration = 9, cudaErrorStreamCaptureUnsupported = 900
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

/* graph nodes: only what a conditional while node added during a capture needs */
typedef struct sapShimNode* cudaGraphNode_t;
typedef struct cudaGraphEdgeData { unsigned char from_port, to_port, type, reserved[5]; } cudaGraphEdgeData;
typedef unsigned long long cudaGraphConditionalHandle;
typedef enum cudaStreamCaptureStatus {
  cudaStreamCaptureStatusNone = 0, cudaStreamCaptureStatusActive = 1, cudaStreamCaptureStatusInvalidated = 2
} cudaStreamCaptureStatus;
enum cudaStreamUpdateCaptureDependenciesFlags { cudaStreamAddCaptureDependencies = 0, cudaStreamSetCaptureDependencies = 1 };
enum { cudaGraphCondAssignDefault = 1 };
enum cudaGraphConditionalNodeType { cudaGraphCondTypeIf = 0, cudaGraphCondTypeWhile = 1, cudaGraphCondTypeSwitch = 2 };
enum cudaGraphNodeType { cudaGraphNodeTypeKernel = 0, cudaGraphNodeTypeConditional = 0x0d };
struct cudaConditionalNodeParams {
  cudaGraphConditionalHandle handle;
  enum cudaGraphConditionalNodeType type;
  unsigned int size;
  cudaGraph_t* phGraph_out;  /* filled by cudaGraphAddNode: the body graph(s) */
};
struct cudaGraphNodeParams {
  enum cudaGraphNodeType type;
  int reserved0[3];
  union {
    long long reserved1[29];
    struct cudaConditionalNodeParams conditional;
  };
  long long reserved2;
};

const char* cudaGetErrorString(cudaError_t e);
cudaError_t cudaGetLastError(void);
cudaError_t cudaPeekAtLastError(void);
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
cudaError_t cudaStreamIsCapturing(cudaStream_t st, cudaStreamCaptureStatus* status);
/* the capture's graph (its dependencies: none are tracked, the emulation runs work in order) */
cudaError_t cudaStreamGetCaptureInfo(cudaStream_t st, cudaStreamCaptureStatus* status, unsigned long long* id,
                                     cudaGraph_t* graph, const cudaGraphNode_t** deps,
                                     const cudaGraphEdgeData** edge_data, size_t* ndeps);
cudaError_t cudaStreamUpdateCaptureDependencies(cudaStream_t st, cudaGraphNode_t* deps, const cudaGraphEdgeData* data,
                                                size_t n, unsigned int flags);
/* capture into an existing graph (a conditional node's body): work recorded there until
 * cudaStreamEndCapture, which returns that graph */
cudaError_t cudaStreamBeginCaptureToGraph(cudaStream_t st, cudaGraph_t g, const cudaGraphNode_t* deps,
                                          const cudaGraphEdgeData* data, size_t n, cudaStreamCaptureMode mode);
cudaError_t cudaGraphConditionalHandleCreate(cudaGraphConditionalHandle* h, cudaGraph_t g, unsigned int default_value,
                                             unsigned int flags);
/* conditional while nodes only: the body runs while the handle's value is nonzero */
cudaError_t cudaGraphAddNode(cudaGraphNode_t* node, cudaGraph_t g, const cudaGraphNode_t* deps,
                             const cudaGraphEdgeData* data, size_t n, struct cudaGraphNodeParams* params);
cudaError_t cudaMemsetAsync(void* d, int v, size_t n, cudaStream_t st);
cudaError_t cudaGraphInstantiate(cudaGraphExec_t* e, cudaGraph_t g, unsigned long long flags);
cudaError_t cudaGraphLaunch(cudaGraphExec_t e, cudaStream_t st);
cudaError_t cudaGraphDestroy(cudaGraph_t g);
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t e);
cudaError_t cudaEventCreate(cudaEvent_t* ev);
cudaError_t cudaEventDestroy(cudaEvent_t ev);
cudaError_t cudaEventRecord(cudaEvent_t ev, cudaStream_t st);
cudaError_t cudaEventSynchronize(cudaEvent_t ev);
/* work runs in submission order here, so a stream never has anything to wait for */
cudaError_t cudaStreamWaitEvent(cudaStream_t st, cudaEvent_t ev, unsigned int flags);
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t a, cudaEvent_t b);

#ifdef __cplusplus
}

#include <cstring>
#include <functional>
#include <type_traits>

/* ---- kernels: qualifiers, built-in indices, launches ---- */
#define __global__
#define __device__
#define __host__
#define __noinline__ __attribute__((noinline))
#define __forceinline__ inline
/* one copy per block-run, shared by the block's threads (see the top of this file) */
#define __shared__ static

struct dim3 {
  unsigned x, y, z;
};
extern dim3 blockIdx, threadIdx, blockDim, gridDim;
constexpr int warpSize = 32;

/* run now, or record while a stream captures */
void sapShimSubmit(std::function<void()> work);
/* checks a launch's geometry; nonzero (and the error kept for cudaGetLastError) when a
 * device would refuse it */
int sapShimLaunchRefused(unsigned grid, unsigned block, size_t shared_bytes);
/* runs body(ctx) once for every (block, thread), the threads of a block as coroutines */
void sapShimRun(const char* name, unsigned grid, unsigned block, size_t shared_bytes,
                void (*body)(const void*), const void* ctx);
/* the dynamic shared memory of the block running now (SAPG_DYNAMIC_SHARED) */
extern void* sapShimDynamicShared;

/* SAPG_LAUNCH(kernel, grid, block, stream)(args...),
 * SAPG_LAUNCH_SHARED(kernel, grid, block, bytes, stream)(args...); launches run in the order
 * they are submitted, whatever their stream */
template <typename... P>
struct sapShimLaunch {
  void (*kernel)(P...);
  const char* name;
  unsigned grid, block;
  size_t shared_bytes;
  template <typename... A>
  void operator()(A... args) const {
    if (sapShimLaunchRefused(grid, block, shared_bytes)) return;
    void (*k)(P...) = kernel;
    const char* nm = name;
    unsigned g = grid, b = block;
    size_t sb = shared_bytes;
    sapShimSubmit([=]() {
      auto call = [&]() { k(args...); };
      auto run = [](const void* c) { (*static_cast<const decltype(call)*>(c))(); };
      sapShimRun(nm, g, b, sb, run, &call);
    });
  }
};
template <typename... P>
static inline sapShimLaunch<P...> sapShimMakeLaunch(void (*k)(P...), const char* name, unsigned g,
                                                    unsigned b, size_t bytes) {
  return sapShimLaunch<P...>{k, name, g, b, bytes};
}
#define SAPG_LAUNCH(kernel, grid, block, stream) \
  sapShimMakeLaunch(kernel, #kernel, ((void)(stream), (unsigned)(grid)), (unsigned)(block), 0)
#define SAPG_LAUNCH_SHARED(kernel, grid, block, bytes, stream) \
  sapShimMakeLaunch(kernel, #kernel, ((void)(stream), (unsigned)(grid)), (unsigned)(block), (size_t)(bytes))
#define SAPG_DYNAMIC_SHARED(type, name) type* name = (type*)sapShimDynamicShared

/* ---- conditional nodes: set from a kernel ---- */
void cudaGraphSetConditional(cudaGraphConditionalHandle h, unsigned int value);

/* ---- block barriers ---- */
void __syncthreads(void);
int __syncthreads_count(int pred);
int __syncthreads_and(int pred);
int __syncthreads_or(int pred);

/* ---- warps: every operation is a barrier over the lanes in mask ---- */
enum { SAP_SHIM_SYNCWARP, SAP_SHIM_SHFL, SAP_SHIM_SHFL_UP, SAP_SHIM_SHFL_DOWN, SAP_SHIM_SHFL_XOR,
       SAP_SHIM_BALLOT };
/* returns what the calling lane receives (SHFL*: the bits of another lane's value;
 * BALLOT: the lanes in mask whose value is nonzero) */
unsigned long long sapShimWarpOp(int op, unsigned mask, unsigned long long bits, int arg,
                                 int width);

template <typename T>
static inline T sapShimShuffle(int op, unsigned mask, T v, int arg, int width) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable<T>::value,
                "warp shuffles move 1-8 byte trivially copyable values");
  unsigned long long bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  bits = sapShimWarpOp(op, mask, bits, arg, width);
  T r;
  std::memcpy(&r, &bits, sizeof(T));
  return r;
}
static inline void __syncwarp(unsigned mask = 0xffffffffu) {
  sapShimWarpOp(SAP_SHIM_SYNCWARP, mask, 0, 0, warpSize);
}
template <typename T>
static inline T __shfl_sync(unsigned mask, T v, int src_lane, int width = warpSize) {
  return sapShimShuffle(SAP_SHIM_SHFL, mask, v, src_lane, width);
}
template <typename T>
static inline T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = warpSize) {
  return sapShimShuffle(SAP_SHIM_SHFL_UP, mask, v, (int)delta, width);
}
template <typename T>
static inline T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = warpSize) {
  return sapShimShuffle(SAP_SHIM_SHFL_DOWN, mask, v, (int)delta, width);
}
template <typename T>
static inline T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = warpSize) {
  return sapShimShuffle(SAP_SHIM_SHFL_XOR, mask, v, lane_mask, width);
}
static inline unsigned __ballot_sync(unsigned mask, int pred) {
  return (unsigned)sapShimWarpOp(SAP_SHIM_BALLOT, mask, pred != 0, 0, warpSize);
}
static inline int __all_sync(unsigned mask, int pred) { return __ballot_sync(mask, !pred) == 0; }
static inline int __any_sync(unsigned mask, int pred) { return __ballot_sync(mask, pred) != 0; }

/* ---- atomics (plain read-modify-write: threads never run at the same time),
 * fences, read-only loads ---- */
#define SAP_SHIM_ATOMIC(T)                                                   \
  static inline T atomicAdd(T* p, T v) { T o = *p; *p = (T)(o + v); return o; } \
  static inline T atomicExch(T* p, T v) { T o = *p; *p = v; return o; }
SAP_SHIM_ATOMIC(int)
SAP_SHIM_ATOMIC(unsigned)
SAP_SHIM_ATOMIC(unsigned long long)
SAP_SHIM_ATOMIC(float)
SAP_SHIM_ATOMIC(double)
#undef SAP_SHIM_ATOMIC
#define SAP_SHIM_ATOMIC(T)                                                         \
  static inline T atomicSub(T* p, T v) { T o = *p; *p = (T)(o - v); return o; }       \
  static inline T atomicMin(T* p, T v) { T o = *p; *p = v < o ? v : o; return o; }    \
  static inline T atomicMax(T* p, T v) { T o = *p; *p = v > o ? v : o; return o; }    \
  static inline T atomicCAS(T* p, T cmp, T v) { T o = *p; if (o == cmp) *p = v; return o; }
SAP_SHIM_ATOMIC(int)
SAP_SHIM_ATOMIC(unsigned)
SAP_SHIM_ATOMIC(unsigned long long)
#undef SAP_SHIM_ATOMIC
static inline void __threadfence(void) {}
static inline void __threadfence_block(void) {}
static inline void __threadfence_system(void) {}
template <typename T>
static inline T __ldg(const T* p) { return *p; }
#endif

#endif
