// CPU emulation of the CUDA runtime subset sapsim uses (see cuda_runtime.h beside
// this file): host memory stands for device memory, work runs in issue order, and
// stream capture records work into a graph that cudaGraphLaunch replays.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#include "cuda_runtime.h"

dim3 blockIdx, threadIdx, blockDim, gridDim;

struct sapShimStream { int capturing; };
struct sapShimGraph { std::vector<std::function<void()>> work; };
struct sapShimEvent { double t; int recorded; };  // host time when the work before it ran

static double now_ms() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

static sapShimGraph* capture_graph = nullptr;  // the graph being recorded, if any

void sapShimSubmit(std::function<void()> work) {
  if (capture_graph) capture_graph->work.push_back(work);
  else work();
}

extern "C" {

const char* cudaGetErrorString(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorMemoryAllocation: return "out of memory (emulation)";
    case cudaErrorStreamCaptureUnsupported: return "operation not permitted while capturing (emulation)";
    default: return "invalid value (emulation)";
  }
}
cudaError_t cudaGetLastError(void) { return cudaSuccess; }
cudaError_t cudaDeviceSynchronize(void) { return capture_graph ? cudaErrorStreamCaptureUnsupported : cudaSuccess; }
cudaError_t cudaGetDeviceCount(int* n) { *n = 1; return cudaSuccess; }
cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp* p, int) {
  std::snprintf(p->name, sizeof(p->name), "CUDA emulated on the CPU (tests/shim)");
  return cudaSuccess;
}
cudaError_t cudaMalloc(void** p, size_t n) {
  if (capture_graph) return cudaErrorStreamCaptureUnsupported;
  *p = std::malloc(n ? n : 1);
  if (*p) std::memset(*p, 0xFF, n);  // poison: nothing may rely on fresh device memory
  return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
cudaError_t cudaFree(void* p) { std::free(p); return cudaSuccess; }
// synchronous copies are not allowed while capturing (as on a device)
cudaError_t cudaMemcpy(void* d, const void* s, size_t n, cudaMemcpyKind) {
  if (capture_graph) return cudaErrorStreamCaptureUnsupported;
  std::memmove(d, s, n);
  return cudaSuccess;
}
cudaError_t cudaMemcpyAsync(void* d, const void* s, size_t n, cudaMemcpyKind, cudaStream_t) {
  sapShimSubmit([=]() { std::memmove(d, s, n); });
  return cudaSuccess;
}
cudaError_t cudaMemset(void* d, int v, size_t n) {
  if (capture_graph) return cudaErrorStreamCaptureUnsupported;
  std::memset(d, v, n);
  return cudaSuccess;
}
cudaError_t cudaStreamCreate(cudaStream_t* st) { *st = new sapShimStream{0}; return cudaSuccess; }
cudaError_t cudaStreamDestroy(cudaStream_t st) { delete st; return cudaSuccess; }
cudaError_t cudaStreamSynchronize(cudaStream_t st) {
  return st && st->capturing ? cudaErrorStreamCaptureUnsupported : cudaSuccess;
}
cudaError_t cudaStreamBeginCapture(cudaStream_t st, cudaStreamCaptureMode) {
  if (!st || capture_graph) return cudaErrorInvalidValue;
  st->capturing = 1;
  capture_graph = new sapShimGraph;
  return cudaSuccess;
}
cudaError_t cudaStreamEndCapture(cudaStream_t st, cudaGraph_t* g) {
  if (!st || !st->capturing) return cudaErrorInvalidValue;
  st->capturing = 0;
  *g = capture_graph;
  capture_graph = nullptr;
  return cudaSuccess;
}
cudaError_t cudaGraphInstantiate(cudaGraphExec_t* e, cudaGraph_t g, unsigned long long) {
  *e = new sapShimGraph(*g);
  return cudaSuccess;
}
cudaError_t cudaGraphLaunch(cudaGraphExec_t e, cudaStream_t) {
  for (auto& w : e->work) sapShimSubmit(w);
  return cudaSuccess;
}
cudaError_t cudaGraphDestroy(cudaGraph_t g) { delete g; return cudaSuccess; }
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t e) { delete e; return cudaSuccess; }

cudaError_t cudaEventCreate(cudaEvent_t* ev) { *ev = new sapShimEvent{0, 0}; return cudaSuccess; }
cudaError_t cudaEventDestroy(cudaEvent_t ev) { delete ev; return cudaSuccess; }
cudaError_t cudaEventRecord(cudaEvent_t ev, cudaStream_t) {
  sapShimSubmit([=]() { ev->t = now_ms(); ev->recorded = 1; });
  return cudaSuccess;
}
cudaError_t cudaEventSynchronize(cudaEvent_t ev) {
  return capture_graph ? cudaErrorStreamCaptureUnsupported : (ev->recorded ? cudaSuccess : cudaErrorInvalidValue);
}
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t a, cudaEvent_t b) {
  if (!a->recorded || !b->recorded) return cudaErrorInvalidValue;
  *ms = (float)(b->t - a->t);
  return cudaSuccess;
}

}  // extern "C"
