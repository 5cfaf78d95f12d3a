/* Checked CUDA calls and launches (STYLE.md: errors, channel 4). Set the
 * environment variable SAPSIM_CUDA_SYNC=1 to synchronise after every launch. Built with
 * -DSAP_CUDA_SHIM -Itests/shim, <cuda_runtime.h> is the CPU emulation used by the tests. */
#ifndef SAPSIM_CUDA_CHECK_H
#define SAPSIM_CUDA_CHECK_H

#include <cuda_runtime.h>
#include <stdlib.h>

#include "sim.h"

/* the stream every sapsim launch and copy goes to (host/backend_cuda.c) */
#ifdef __cplusplus
extern "C" cudaStream_t sapg_stream;
#else
extern cudaStream_t sapg_stream;
#endif

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

/* kernel<<<grid, block>>>(args) written SAPG_LAUNCH(kernel, grid, block)(args), so that
 * tests/shim can run the same launch on the CPU (CUDA emulation for CI) */
#ifdef __CUDACC__
#define SAPG_LAUNCH(kernel, grid, block) kernel<<<(grid), (block), 0, sapg_stream>>>
#endif

#endif
