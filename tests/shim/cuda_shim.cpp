// CPU emulation of the CUDA runtime subset sapsim uses (see cuda_runtime.h beside
// this file): host memory stands for device memory, work runs in issue order, and
// stream capture records work into a graph that cudaGraphLaunch replays. Kernel
// threads run as coroutines (ucontext) so that barriers and warp operations work.
// A worker is entered through its ucontext once; after that every switch is a
// _setjmp/_longjmp pair, which saves no signal mask (swapcontext makes two sigprocmask
// system calls per switch: the warp solver's emulated parity tests took 78 s with it).
// Under AddressSanitizer every switch stays a swapcontext, which ASan knows about.
#undef _FORTIFY_SOURCE  // longjmp between stacks is the point here
#include <setjmp.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <chrono>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include "cuda_runtime.h"

dim3 blockIdx, threadIdx, blockDim, gridDim;
void* sapShimDynamicShared = nullptr;

static cudaError_t last_error = cudaSuccess;  // kept for cudaGetLastError

[[noreturn]] static void die(const char* fmt, ...) {
  std::fflush(stdout);
  std::fprintf(stderr, "sapsim CUDA shim: ");
  va_list ap;
  va_start(ap, fmt);
  std::vfprintf(stderr, fmt, ap);
  va_end(ap);
  std::fputc('\n', stderr);
  std::abort();
}

// ---- kernel threads as coroutines ----
// A worker is a coroutine with its own stack that starts the block's threads one
// after another (the body of each runs as a plain call) until one of them waits at
// __syncthreads or a warp operation; that thread keeps the worker, and the next
// worker starts the following threads. Without barriers one worker runs every
// thread of every block, going on to the next block itself, so a launch costs two
// context switches. Once all threads of a block have started, a block where some
// wait runs in rounds: the waits that are complete are released, and the released
// threads resume in thread order until they return or wait again.

namespace {

enum { T_READY, T_BARRIER, T_WARP, T_DONE };

#if defined(__SANITIZE_ADDRESS__)
#define SHIM_JMP 0
#else
#define SHIM_JMP 1
#endif

struct Worker {
  ucontext_t ctx;  // its entry (and every switch under ASan)
  jmp_buf jb;      // where it resumes
  bool started;
  char* stack;
  bool idle;     // waiting for threads to start; else a thread of the block owns it
  Worker* next;  // in idle_workers
};

struct ShimThread {
  Worker* w;  // the worker it runs on, once started
  int state;
  int pred;                 // __syncthreads_count: predicate in, count out
  int op, arg, width;       // warp operation (sapShimWarpOp)
  unsigned mask;
  unsigned long long bits;  // warp operation: value in, result out
};

struct ShimBlock {
  const char* name = "";  // the kernel
  void (*body)(const void*) = nullptr;
  const void* ctx = nullptr;
  unsigned grid = 0, n = 0;  // blocks, threads per block
  size_t shared_bytes = 0;   // dynamic shared memory
  unsigned bx = 0;           // the block running now
  unsigned next = 0;         // its next thread to start
  unsigned done = 0;         // its threads that returned
  bool rounds = false;       // it runs in rounds (workers must not go on to the next block)
  int cur = -1;              // the thread running now; -1 while the scheduler runs
  ucontext_t sched;
  jmp_buf sched_jb;
  std::vector<ShimThread> th;
};

ShimBlock blk;
Worker* idle_workers = nullptr;     // a list, kept across launches (never freed)
Worker* new_worker_self = nullptr;  // hands a fresh worker its identity
size_t stack_bytes = 0;
unsigned char* dyn_buf = nullptr;   // dynamic shared memory
size_t dyn_cap = 0;

const char* op_name(int op) {
  switch (op) {
    case SAP_SHIM_SYNCWARP: return "__syncwarp";
    case SAP_SHIM_SHFL: return "__shfl_sync";
    case SAP_SHIM_SHFL_UP: return "__shfl_up_sync";
    case SAP_SHIM_SHFL_DOWN: return "__shfl_down_sync";
    case SAP_SHIM_SHFL_XOR: return "__shfl_xor_sync";
    default: return "__ballot_sync/__all_sync/__any_sync";
  }
}

void begin_block(unsigned bx) {
  blk.bx = bx;
  blockIdx = dim3{bx, 0, 0};
  blk.next = 0;
  blk.done = 0;
  if (blk.shared_bytes) std::memset(dyn_buf, 0xFF, blk.shared_bytes);  // poison, as fresh memory
}

// suspend the worker's thread and go back to the scheduler
void to_scheduler(Worker* self) {
  if (!SHIM_JMP) {
    if (swapcontext(&self->ctx, &blk.sched) != 0) die("swapcontext failed");
  } else if (!_setjmp(self->jb)) {
    _longjmp(blk.sched_jb, 1);
  }
}

void worker_main() {
  Worker* self = new_worker_self;
  for (;;) {
    while (blk.next < blk.n) {
      unsigned t = blk.next++;
      blk.th[t].w = self;
      blk.th[t].state = T_READY;
      threadIdx = dim3{t, 0, 0};
      blk.cur = (int)t;
      blk.body(blk.ctx);
      blk.th[t].state = T_DONE;
      blk.th[t].w = nullptr;
      blk.done++;
    }
    if (!blk.rounds && blk.done == blk.n && blk.bx + 1 < blk.grid) {
      begin_block(blk.bx + 1);  // every thread returned without waiting
      continue;
    }
    blk.cur = -1;
    self->idle = true;
    to_scheduler(self);
  }
}

// a fresh worker, suspended at the start of worker_main
__attribute__((noinline)) Worker* new_worker() {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  if (!stack_bytes) {
    const char* e = std::getenv("SAPSIM_SHIM_STACK_KB");
    long kb = e ? std::atol(e) : 256;
    stack_bytes = ((size_t)(kb > 16 ? kb : 16) * 1024 + page - 1) / page * page;
  }
  // the lowest page is a guard: stacks grow down, an overflow faults
  void* p = mmap(nullptr, stack_bytes + page, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) die("cannot map a %zu-byte thread stack", stack_bytes);
  if (mprotect(p, page, PROT_NONE) != 0) die("cannot protect a stack guard page");
  Worker* w = new Worker;
  w->started = false;
  w->stack = (char*)p + page;
  if (getcontext(&w->ctx) != 0) die("getcontext failed");
  w->ctx.uc_stack.ss_sp = w->stack;
  w->ctx.uc_stack.ss_size = stack_bytes;
  w->ctx.uc_link = nullptr;
  makecontext(&w->ctx, worker_main, 0);
  new_worker_self = w;
  return w;
}

Worker* get_worker() {
  Worker* w = idle_workers;
  if (!w) return new_worker();
  idle_workers = w->next;
  return w;
}

// runs w until its thread waits or it has no thread to start
void run_worker(Worker* w) {
  w->idle = false;
  if (!SHIM_JMP) {
    if (swapcontext(&blk.sched, &w->ctx) != 0) die("swapcontext failed");
  } else if (!_setjmp(blk.sched_jb)) {
    if (!w->started) {
      w->started = true;
      setcontext(&w->ctx);
      die("setcontext failed");
    }
    _longjmp(w->jb, 1);
  }
  blk.cur = -1;
  if (w->idle) {
    w->next = idle_workers;
    idle_workers = w;
  }
}

// called by a kernel thread: wait in state until the scheduler releases it
ShimThread& current(const char* what) {
  if (blk.cur < 0) die("%s called outside a kernel thread", what);
  return blk.th[(unsigned)blk.cur];
}
void wait_as(ShimThread& x, int state) {
  x.state = state;
  to_scheduler(x.w);
}

// __syncthreads: all threads of the block there
bool release_barrier() {
  int count = 0;
  for (unsigned t = 0; t < blk.n; t++) {
    if (blk.th[t].state != T_BARRIER) return false;
    count += blk.th[t].pred != 0;
  }
  for (unsigned t = 0; t < blk.n; t++) {
    blk.th[t].pred = count;
    blk.th[t].state = T_READY;
  }
  return true;
}

// warp operations whose lanes (those named in mask that exist) all wait at it
bool release_warps() {
  bool any = false;
  for (unsigned w0 = 0; w0 < blk.n; w0 += 32) {
    unsigned nl = blk.n - w0 < 32 ? blk.n - w0 : 32;
    unsigned present = nl == 32 ? 0xffffffffu : (1u << nl) - 1;
    ShimThread* lane = &blk.th[w0];
    for (unsigned l = 0; l < nl; l++) {
      const ShimThread& x = lane[l];
      if (x.state != T_WARP) continue;
      unsigned m = x.mask & present;
      bool met = true;
      for (unsigned j = 0; j < nl && met; j++)
        if (m >> j & 1)
          met = lane[j].state == T_WARP && lane[j].mask == x.mask && lane[j].op == x.op &&
                lane[j].width == x.width;
      if (!met) continue;
      unsigned long long in[32];
      unsigned ballot = 0;
      for (unsigned j = 0; j < nl; j++)
        if (m >> j & 1) {
          in[j] = lane[j].bits;
          if (in[j]) ballot |= 1u << j;
        }
      for (unsigned j = 0; j < nl; j++) {
        if (!(m >> j & 1)) continue;
        ShimThread& y = lane[j];
        unsigned w = (unsigned)y.width, a = (unsigned)y.arg, src = j;
        switch (y.op) {
          case SAP_SHIM_SHFL: src = (j & ~(w - 1)) + (a & (w - 1)); break;
          case SAP_SHIM_SHFL_UP: src = (j & (w - 1)) < a ? j : j - a; break;
          case SAP_SHIM_SHFL_DOWN: src = (j & (w - 1)) + a >= w ? j : j + a; break;
          case SAP_SHIM_SHFL_XOR: src = j ^ (a & 31); if (src / w > j / w) src = j; break;
          default: break;
        }
        if (y.op == SAP_SHIM_BALLOT) y.bits = ballot;
        else if (y.op != SAP_SHIM_SYNCWARP) y.bits = (m >> src & 1) ? in[src] : ~0ull;
        y.state = T_READY;
      }
      any = true;
    }
  }
  return any;
}

// nothing can run and not every thread returned: say why, then abort
[[noreturn]] void stuck(unsigned bx) {
  int done = -1, barrier = -1, warp = -1, ndone = 0, nbarrier = 0, nwarp = 0;
  for (unsigned t = 0; t < blk.n; t++) {
    int s = blk.th[t].state;
    if (s == T_DONE && !ndone++) done = (int)t;
    if (s == T_BARRIER && !nbarrier++) barrier = (int)t;
    if (s == T_WARP && !nwarp++) warp = (int)t;
  }
  if (nbarrier && ndone)
    die("%s, block %u: %d thread(s) returned (first: thread %d) while %d wait at __syncthreads "
        "(first: thread %d); every thread of a block must reach each __syncthreads "
        "(undefined behaviour on a GPU)", blk.name, bx, ndone, done, nbarrier, barrier);
  for (unsigned t = 0; t < blk.n; t++) {
    const ShimThread& x = blk.th[t];
    if (x.state != T_WARP) continue;
    unsigned w0 = t / 32 * 32;
    for (unsigned j = 0; j < 32 && w0 + j < blk.n; j++)
      if ((x.mask >> j & 1) && blk.th[w0 + j].state == T_DONE)
        die("%s, block %u, thread %u: %s(mask 0x%08x) waits for lane %u (thread %u), which "
            "returned (undefined behaviour on a GPU)", blk.name, bx, t, op_name(x.op), x.mask, j,
            w0 + j);
  }
  if (warp >= 0) {
    const ShimThread& x = blk.th[(unsigned)warp];
    die("%s, block %u: deadlock: %d thread(s) wait at warp operations (first: thread %d at "
        "%s(mask 0x%08x)) and %d at __syncthreads (first: thread %d); the lanes named in a "
        "mask must all make the same call", blk.name, bx, nwarp, warp, op_name(x.op), x.mask,
        nbarrier, barrier);
  }
  die("%s, block %u: no thread can run", blk.name, bx);
}

// runs block blk.bx to its end; workers may have gone on to later blocks
void run_block() {
  while (blk.next < blk.n) run_worker(get_worker());
  blk.rounds = true;
  while (blk.done < blk.n) {
    bool released = release_warps();
    released = release_barrier() || released;
    if (!released) stuck(blk.bx);
    for (unsigned t = 0; t < blk.n; t++)
      if (blk.th[t].state == T_READY) {
        blk.cur = (int)t;
        threadIdx = dim3{t, 0, 0};
        run_worker(blk.th[t].w);
      }
  }
  blk.rounds = false;
}

}  // namespace

int sapShimLaunchRefused(unsigned grid, unsigned block, size_t shared_bytes) {
  if (grid == 0 || block == 0 || block > 1024) last_error = cudaErrorInvalidConfiguration;
  else if (shared_bytes > 48 * 1024) last_error = cudaErrorInvalidValue;
  else return 0;
  return 1;
}

void sapShimRun(const char* name, unsigned grid, unsigned block, size_t shared_bytes,
                void (*body)(const void*), const void* ctx) {
  if (blk.cur >= 0) die("%s: a kernel thread launched a kernel (not emulated)", blk.name);
  blk.name = name;
  gridDim = dim3{grid, 1, 1};
  blockDim = dim3{block, 1, 1};
  blk.body = body;
  blk.ctx = ctx;
  blk.grid = grid;
  blk.n = block;
  blk.shared_bytes = shared_bytes;
  if (blk.th.size() < block) blk.th.resize(block);
  if (shared_bytes > dyn_cap) {
    std::free(dyn_buf);
    dyn_cap = (shared_bytes + 63) / 64 * 64;
    dyn_buf = (unsigned char*)std::aligned_alloc(64, dyn_cap);
    if (!dyn_buf) die("cannot allocate %zu bytes of dynamic shared memory", shared_bytes);
  }
  sapShimDynamicShared = shared_bytes ? dyn_buf : nullptr;
  for (begin_block(0);; begin_block(blk.bx + 1)) {
    run_block();
    if (blk.bx + 1 >= grid) break;
  }
  sapShimDynamicShared = nullptr;
}

void __syncthreads(void) { (void)__syncthreads_count(0); }
int __syncthreads_count(int pred) {
  ShimThread& x = current("__syncthreads");
  x.pred = pred;
  wait_as(x, T_BARRIER);
  return x.pred;
}
int __syncthreads_and(int pred) { return __syncthreads_count(pred) == (int)blockDim.x; }
int __syncthreads_or(int pred) { return __syncthreads_count(pred) != 0; }

unsigned long long sapShimWarpOp(int op, unsigned mask, unsigned long long bits, int arg,
                                 int width) {
  ShimThread& x = current(op_name(op));
  unsigned t = (unsigned)blk.cur, lane = t % 32;
  if (!(mask >> lane & 1))
    die("%s, block %u, thread %u: %s(mask 0x%08x) does not name the calling lane %u", blk.name,
        blockIdx.x, t, op_name(op), mask, lane);
  if (width < 1 || width > 32 || (width & (width - 1)))
    die("%s, block %u, thread %u: %s width %d is not a power of two <= 32", blk.name,
        blockIdx.x, t, op_name(op), width);
  x.op = op;
  x.mask = mask;
  x.bits = bits;
  x.arg = arg;
  x.width = width;
  wait_as(x, T_WARP);
  return x.bits;
}

// a conditional handle: its value, and the value a graph launch gives it (AssignDefault)
struct sapShimCond { unsigned value, default_value; int assign_default; };
struct sapShimGraph {
  std::vector<std::function<void()>> work;           // in capture order
  std::vector<std::shared_ptr<sapShimCond>> conds;    // handles created on this graph
  std::vector<std::shared_ptr<sapShimNode>> nodes;    // conditional nodes (their bodies)
};
struct sapShimNode { std::shared_ptr<sapShimGraph> body; cudaGraph_t out[1]; };
struct sapShimStream {
  int capturing;
  sapShimGraph* graph;  // the graph this stream's capture records into
  sapShimGraph* outer;  // the capture it interrupted (a body captured inside a capture)
  int to_existing;      // cudaStreamBeginCaptureToGraph: EndCapture does not hand over a new graph
};
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
    case cudaErrorInvalidConfiguration: return "invalid configuration argument (emulation)";
    case cudaErrorStreamCaptureUnsupported: return "operation not permitted while capturing (emulation)";
    default: return "invalid value (emulation)";
  }
}
cudaError_t cudaGetLastError(void) {
  cudaError_t e = last_error;
  last_error = cudaSuccess;
  return e;
}
cudaError_t cudaPeekAtLastError(void) { return last_error; }
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
cudaError_t cudaStreamCreate(cudaStream_t* st) { *st = new sapShimStream{0, nullptr, nullptr, 0}; return cudaSuccess; }
cudaError_t cudaStreamDestroy(cudaStream_t st) { delete st; return cudaSuccess; }
cudaError_t cudaStreamSynchronize(cudaStream_t st) {
  return st && st->capturing ? cudaErrorStreamCaptureUnsupported : cudaSuccess;
}
cudaError_t cudaStreamBeginCapture(cudaStream_t st, cudaStreamCaptureMode) {
  if (!st || capture_graph) return cudaErrorInvalidValue;
  *st = sapShimStream{1, new sapShimGraph, nullptr, 0};
  capture_graph = st->graph;
  return cudaSuccess;
}
cudaError_t cudaStreamBeginCaptureToGraph(cudaStream_t st, cudaGraph_t g, const cudaGraphNode_t*,
                                          const cudaGraphEdgeData*, size_t, cudaStreamCaptureMode) {
  if (!st || !g || st->capturing) return cudaErrorInvalidValue;
  *st = sapShimStream{1, g, capture_graph, 1};
  capture_graph = g;
  return cudaSuccess;
}
cudaError_t cudaStreamEndCapture(cudaStream_t st, cudaGraph_t* g) {
  if (!st || !st->capturing || capture_graph != st->graph) return cudaErrorInvalidValue;
  *g = st->graph;
  capture_graph = st->outer;
  *st = sapShimStream{0, nullptr, nullptr, 0};
  return cudaSuccess;
}
cudaError_t cudaStreamIsCapturing(cudaStream_t st, cudaStreamCaptureStatus* status) {
  if (!st || !status) return cudaErrorInvalidValue;
  *status = st->capturing ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
  return cudaSuccess;
}
cudaError_t cudaStreamGetCaptureInfo(cudaStream_t st, cudaStreamCaptureStatus* status, unsigned long long* id,
                                     cudaGraph_t* graph, const cudaGraphNode_t** deps,
                                     const cudaGraphEdgeData** edge_data, size_t* ndeps) {
  if (!st || !status) return cudaErrorInvalidValue;
  *status = st->capturing ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
  if (id) *id = (unsigned long long)(uintptr_t)st->graph;
  if (graph) *graph = st->graph;
  if (deps) *deps = nullptr;
  if (edge_data) *edge_data = nullptr;
  if (ndeps) *ndeps = 0;
  return cudaSuccess;
}
cudaError_t cudaStreamUpdateCaptureDependencies(cudaStream_t st, cudaGraphNode_t*, const cudaGraphEdgeData*, size_t,
                                                unsigned int) {
  return st && st->capturing ? cudaSuccess : cudaErrorInvalidValue;
}
cudaError_t cudaGraphConditionalHandleCreate(cudaGraphConditionalHandle* h, cudaGraph_t g, unsigned int default_value,
                                             unsigned int flags) {
  if (!h || !g || flags > cudaGraphCondAssignDefault) return cudaErrorInvalidValue;
  auto c = std::make_shared<sapShimCond>(sapShimCond{default_value, default_value, (int)(flags & 1)});
  g->conds.push_back(c);
  *h = (cudaGraphConditionalHandle)(uintptr_t)c.get();
  return cudaSuccess;
}
cudaError_t cudaGraphAddNode(cudaGraphNode_t* node, cudaGraph_t g, const cudaGraphNode_t*, const cudaGraphEdgeData*,
                             size_t, struct cudaGraphNodeParams* p) {
  if (!node || !g || !p || p->type != cudaGraphNodeTypeConditional || p->conditional.type != cudaGraphCondTypeWhile ||
      p->conditional.size != 1 || !p->conditional.handle)
    return cudaErrorInvalidValue;  // only conditional while nodes are emulated
  auto n = std::make_shared<sapShimNode>();
  n->body = std::make_shared<sapShimGraph>();
  n->out[0] = n->body.get();
  p->conditional.phGraph_out = n->out;
  g->nodes.push_back(n);
  sapShimCond* c = (sapShimCond*)(uintptr_t)p->conditional.handle;
  std::shared_ptr<sapShimGraph> body = n->body;
  g->work.push_back([body, c]() {
    while (c->value)
      for (auto& w : body->work) w();
  });
  *node = n.get();
  return cudaSuccess;
}
cudaError_t cudaMemsetAsync(void* d, int v, size_t n, cudaStream_t) {
  sapShimSubmit([=]() { std::memset(d, v, n); });
  return cudaSuccess;
}
cudaError_t cudaGraphInstantiate(cudaGraphExec_t* e, cudaGraph_t g, unsigned long long) {
  *e = new sapShimGraph(*g);
  return cudaSuccess;
}
cudaError_t cudaGraphLaunch(cudaGraphExec_t e, cudaStream_t) {
  sapShimSubmit([e]() {
    for (auto& c : e->conds)
      if (c->assign_default) c->value = c->default_value;
  });
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
cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t ev, unsigned int flags) {
  return ev && flags == 0 ? cudaSuccess : cudaErrorInvalidValue;
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

void cudaGraphSetConditional(cudaGraphConditionalHandle h, unsigned int value) {
  ((sapShimCond*)(uintptr_t)h)->value = value;
}
