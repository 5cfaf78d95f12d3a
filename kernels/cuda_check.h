/* Checked CUDA calls and launches (STYLE.md: errors, channel 4). Set the
 * environment variable SAPSIM_CUDA_SYNC=1 to synchronise after every launch. Built with
 * -DSAP_CUDA_SHIM -Itests/shim, <cuda_runtime.h> is the CPU emulation used by the tests. */
#ifndef SAPSIM_CUDA_CHECK_H
#define SAPSIM_CUDA_CHECK_H

#include <cuda_runtime.h>
#include <stdlib.h>

#include "launch.h"

/* the stream of a launch context (launch.h) */
#define SAPG_STREAM(L) ((cudaStream_t)(L)->stream)

#define SAPG_CHECK(call)                                                              \
  do {                                                                                \
    cudaError_t e_ = (call);                                                          \
    if (e_ != cudaSuccess)                                                            \
      return sap_fail(SAP_ERR_CUDA, "%s:%d: %s: %s", __FILE__, __LINE__, #call,       \
                      cudaGetErrorString(e_));                                        \
  } while (0)

static inline int sapg_syncEachLaunch(void) {
  static int flag = -1;
  if (flag < 0) {
    const char* e = getenv("SAPSIM_CUDA_SYNC");
    flag = e && e[0] == '1';
  }
  return flag;
}

#define SAPG_CHECK_LAUNCH(name)                                                       \
  do {                                                                                \
    cudaError_t e_ = cudaGetLastError();                                              \
    if (e_ == cudaSuccess && sapg_syncEachLaunch()) e_ = cudaDeviceSynchronize();     \
    if (e_ != cudaSuccess)                                                            \
      return sap_fail(SAP_ERR_CUDA, "kernel %s: %s", name, cudaGetErrorString(e_));   \
  } while (0)

static inline int sapg_blocks(int n, int threads) { return (n + threads - 1) / threads; }

/* Inside a capture on stream: a conditional while node on cond (made on the capture's graph with
 * cudaGraphConditionalHandleCreate and set upstream) is added to the graph being captured and
 * becomes the capture's dependency, then body_stream starts capturing the node's body, until
 * cudaStreamEndCapture(body_stream) (the CUDA programming guide's pattern for conditional nodes in
 * stream capture; the Newton loop of newton_loop=while, kernels/solve.cu, and the step retry's
 * rounds, kernels/retry.cu) */
#ifdef __cplusplus
static inline cudaError_t sapg_whileNodeBegin(cudaStream_t stream, cudaStream_t body_stream,
                                              cudaGraphConditionalHandle cond) {
  cudaStreamCaptureStatus cst;
  cudaGraph_t graph;
  const cudaGraphNode_t* deps = NULL;
  size_t ndeps = 0;
  cudaError_t e = cudaStreamGetCaptureInfo(stream, &cst, NULL, &graph, &deps, NULL, &ndeps);
  if (e != cudaSuccess) return e;
  cudaGraphNodeParams node_params = {cudaGraphNodeTypeConditional, {0, 0, 0}, {}, 0};  // reserved: zero
  node_params.conditional.handle = cond;
  node_params.conditional.type = cudaGraphCondTypeWhile;
  node_params.conditional.size = 1;
  cudaGraphNode_t node;
  if ((e = cudaGraphAddNode(&node, graph, deps, NULL, ndeps, &node_params)) != cudaSuccess) return e;
  e = cudaStreamUpdateCaptureDependencies(stream, &node, NULL, 1, cudaStreamSetCaptureDependencies);
  if (e != cudaSuccess) return e;
  return cudaStreamBeginCaptureToGraph(body_stream, node_params.conditional.phGraph_out[0], NULL, NULL, 0,
                                       cudaStreamCaptureModeThreadLocal);
}
#endif

/* qualifier of the by-value kernel parameters (sapModel, sapData, sapSolveParams) whose
 * address the per-world functions take: __grid_constant__ lets &m point at the parameter
 * in the constant bank, where a plain parameter is first copied to every thread's local
 * memory (760 bytes of sapModel, 48 local stores at each kernel entry, sm_90) */
#ifdef SAP_CUDA_SHIM
#define SAPG_PARAM const
#else
#define SAPG_PARAM const __grid_constant__
#endif

/* kernel<<<grid, block, 0, stream>>>(args) written SAPG_LAUNCH(kernel, grid, block, stream)(args),
 * so that tests/shim can run the same launch on the CPU (CUDA emulation for CI).
 * Dynamic shared memory: launch with SAPG_LAUNCH_SHARED(kernel, grid, block, bytes, stream)(args)
 * and declare it in the kernel with SAPG_DYNAMIC_SHARED(type, name); (name is then a
 * type* to the block's bytes, 16-byte aligned; several kernels in one file may each
 * declare it, with any types). Over 48 KiB needs cudaFuncSetAttribute (the shim refuses). */
#ifdef __CUDACC__
#define SAPG_LAUNCH(kernel, grid, block, stream) kernel<<<(grid), (block), 0, (stream)>>>
#define SAPG_LAUNCH_SHARED(kernel, grid, block, bytes, stream) \
  kernel<<<(grid), (block), (bytes), (stream)>>>
#define SAPG_DYNAMIC_SHARED(type, name)                                   \
  extern __shared__ __align__(16) unsigned char sapg_dynamic_shared_[]; \
  type* name = (type*)sapg_dynamic_shared_
#endif

#endif
