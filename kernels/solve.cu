/* CUDA launchers of the SAP velocity solve.
 * Option solve_kernel:
 *   warp (default): one warp per world (kernels/sap_warp_t.h): contacts, Newton-matrix entries,
 *     Cholesky rows and line-search terms over the lanes, warp reductions;
 *   thread: one thread per world runs the CPU backend's code (kernels/sap_solve.h) as is.
 * Option newton_loop (warp solve):
 *   kernel (default): the whole Newton loop inside one launch;
 *   while: begin, then one launch group per Newton iteration, then finish. Inside a stream
 *     capture (graph=1, or a caller capturing sap_stepAsync) the iterations are the body of a
 *     conditional while node that repeats while some world iterates (at most max_iterations
 *     times); without a capture there is no way to stop early without a host synchronisation,
 *     so the group is launched max_iterations times, as in fixed;
 *   fixed: the group is launched max_iterations times, in graphs too (no conditional nodes).
 *   A world whose loop stopped returns at once from later iterations.
 * Option linear_solver (per-iteration loops): custom (the warp Cholesky inside the iteration
 * launch) or cusolver (assemble, cusolverDn{S,D}potrfBatched + potrsBatched over every world,
 * advance). cuSOLVER's batched calls factor every world's matrix, stopped worlds included (they
 * hold the identity).
 * Option chol_memory: the warp Cholesky factors a copy of H in the block's shared memory
 * (default; global when a block's share would pass 48 KiB) or in the world's scratch.
 * Option solve_block_worlds: warps (worlds) per block of the warp kernels (2).
 * None of these has been timed on a device yet (docs/performance.md). */
#include <cusolverDn.h>

#include "cuda_check.h"
#include "sap_warp.h"
#include "world_view.h"

#define THREADS 64  /* thread kernel: worlds per block */
/* warp kernels: option solve_block_worlds warps (worlds) per block */
#define SHARED_MAX (48 * 1024)  /* dynamic shared memory without cudaFuncSetAttribute */

static __global__ void solve_kernel(SAPG_PARAM sapModel m, SAPG_PARAM sapData d, SAPG_PARAM sapSolveParams prm) {
  int w = blockIdx.x * blockDim.x + threadIdx.x;
  if (w >= d.nworld || sapw_held(&d, w)) return;
  if (sapw_frozen(&d, w)) {
    for (int j = 0; j < m.nv; j++) d.vnext[(long)w * m.nv + j] = d.qvel[(long)w * m.nv + j];
    return;
  }
  sapModel view;  /* the world's parameters: the model itself unless w overrides some */
  const sapModel* mw = sapw_worldView(&m, w, &view);
  sapSolveParams own;  /* the world's step (retry) */
  const sapSolveParams* pw = sapw_worldParams(&prm, w, &own);
  if (prm.contact_fp32) sapw_solveWorld_f32(mw, &d, w, pw);
  else sapw_solveWorld_f64(mw, &d, w, pw);
}

/* world and lane of a warp kernel's thread; the whole warp returns past the last world; the
 * world's parameters mw (the model unless w overrides some) and solver parameters pw (prm at
 * the world's own step under the retry) */
#define SAPV_WORLD_LANE                                                                   \
  int w = (blockIdx.x * blockDim.x + threadIdx.x) / SAPV_LANES, lane = threadIdx.x % SAPV_LANES; \
  if (w >= d.nworld) return;                                                              \
  sapModel view_;                                                                         \
  const sapModel* mw = sapw_worldView(&m, w, &view_);                                     \
  sapSolveParams prm_own_;                                                                \
  const sapSolveParams* pw = sapw_worldParams(&prm, w, &prm_own_)

/* this warp's share of the block's dynamic shared memory for the Cholesky (chol_bytes per
 * warp), or null when the kernel got none */
#define SAPV_CHOL_PLACE                                                                           \
  SAPG_DYNAMIC_SHARED(unsigned char, chol_shared);                                                \
  void* Lfast = chol_bytes > 0 ? (void*)(chol_shared + (long)(threadIdx.x / SAPV_LANES) * chol_bytes) : (void*)0

/* one kernel per objective precision: a kernel holding both paths pays the larger register
 * count of the two (255 registers with spills when both were in one kernel, sm_90) */
#define SAPV_KERNELS(p)                                                                              \
  static __global__ void solve_warp_kernel_##p(SAPG_PARAM sapModel m, SAPG_PARAM sapData d, SAPG_PARAM sapSolveParams prm, int chol_bytes) { \
    SAPV_WORLD_LANE;                                                                                 \
    if (sapw_held(&d, w)) return;                                                                    \
    if (sapw_frozen(&d, w)) {                                                    \
      for (int j = lane; j < m.nv; j += SAPV_LANES) d.vnext[(long)w * m.nv + j] = d.qvel[(long)w * m.nv + j]; \
      return;                                                                                        \
    }                                                                                                \
    SAPV_CHOL_PLACE;                                                                                 \
    sapv_solveWorld_##p(mw, &d, w, pw, Lfast, lane);                                               \
  }                                                                                                  \
  static __global__ void loop_begin_kernel_##p(SAPG_PARAM sapModel m, SAPG_PARAM sapData d, SAPG_PARAM sapSolveParams prm, void** Lptr, \
                                               void** Xptr, int* active) {                          \
    SAPV_WORLD_LANE;                                                                                 \
    sapv_loopBegin_##p(mw, &d, w, pw, Lptr, Xptr, active, lane);                                   \
  }                                                                                                  \
  static __global__ void loop_iterate_kernel_##p(SAPG_PARAM sapModel m, SAPG_PARAM sapData d, SAPG_PARAM sapSolveParams prm, int chol_bytes, \
                                                 int* active) {                                      \
    SAPV_WORLD_LANE;                                                                                 \
    SAPV_CHOL_PLACE;                                                                                 \
    sapv_loopIterate_##p(mw, &d, w, pw, Lfast, active, lane);                                      \
  }                                                                                                  \
  static __global__ void loop_assemble_kernel_##p(SAPG_PARAM sapModel m, SAPG_PARAM sapData d, SAPG_PARAM sapSolveParams prm) {      \
    SAPV_WORLD_LANE;                                                                                 \
    sapv_loopAssemble_##p(mw, &d, w, pw, lane);                                                    \
  }                                                                                                  \
  static __global__ void loop_advance_kernel_##p(SAPG_PARAM sapModel m, SAPG_PARAM sapData d, SAPG_PARAM sapSolveParams prm, const int* info, \
                                                 int* active) {                                      \
    SAPV_WORLD_LANE;                                                                                 \
    sapv_loopAdvance_##p(mw, &d, w, pw, info, active, lane);                                       \
  }                                                                                                  \
  static __global__ void loop_finish_kernel_##p(SAPG_PARAM sapModel m, SAPG_PARAM sapData d, SAPG_PARAM sapSolveParams prm) {        \
    SAPV_WORLD_LANE;                                                                                 \
    sapv_loopFinish_##p(mw, &d, w, pw, lane);                                                      \
  }
SAPV_KERNELS(f32)
SAPV_KERNELS(f64)

/* the while node's condition: counters[0] worlds still iterate after the last launch,
 * counters[1] iterations launched so far (the cap); counters[0] restarts for the next count */
static __global__ void loop_continue_kernel(int* counters, cudaGraphConditionalHandle cond, int max_iterations,
                                            int after_iteration) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  counters[1] += after_iteration;
  cudaGraphSetConditional(cond, counters[0] > 0 && counters[1] < max_iterations);
  counters[0] = 0;
}

/* launch kernel_f32 or kernel_f64 (objective precision) of launch context L with one warp per
 * world, solve_block_worlds warps per block, bytes of dynamic shared memory per warp */
#define SAPV_LAUNCH(L, kernel, fp32, bytes, ...)                                                     \
  do {                                                                                               \
    int wpb_ = (L)->opt->solve_block_worlds;                                                         \
    long blocks_ = ((long)(L)->d.nworld + wpb_ - 1) / wpb_;                                          \
    size_t shared_ = (size_t)(bytes) * wpb_;                                                         \
    if (fp32)                                                                                        \
      SAPG_LAUNCH_SHARED(kernel##_f32, blocks_, wpb_ * SAPV_LANES, shared_, SAPG_STREAM(L))((L)->m, (L)->d, __VA_ARGS__); \
    else                                                                                             \
      SAPG_LAUNCH_SHARED(kernel##_f64, blocks_, wpb_ * SAPV_LANES, shared_, SAPG_STREAM(L))((L)->m, (L)->d, __VA_ARGS__); \
    SAPG_CHECK_LAUNCH(#kernel);                                                                      \
  } while (0)

/* bytes per warp of the Cholesky's shared-memory copy (nv x (nv + 1) values, 16-byte
 * multiple), 0 when chol_memory=global or a block's share would pass SHARED_MAX */
static int chol_shared_bytes(const sapgLaunch* L, const sapSolveParams* prm) {
  long bytes = (long)(prm->linear_fp32 ? 4 : 8) * L->m.nv * (L->m.nv + 1);
  bytes = (bytes + 15) / 16 * 16;
  if (L->opt->chol_memory == SAP_CHOL_GLOBAL || bytes * L->opt->solve_block_worlds > SHARED_MAX) return 0;
  return (int)bytes;
}

/* state of the per-iteration loops (sapg_solveInit) */
typedef struct {
  int* counters;             /* device [2]: loop_continue_kernel */
  int* info;                 /* device [nworld + 1]: potrfBatched per world, potrsBatched */
  void** ptrs;               /* device [2 nworld]: each world's factor, then its right-hand side */
  cusolverDnHandle_t solver; /* linear_solver=cusolver */
  int have_solver;
  cudaStream_t body_stream;  /* captures the while node's body */
  int have_stream;
} sapgSolve;

#define CUSOLVER_TRY(call)                                                                          \
  do {                                                                                              \
    cusolverStatus_t e_ = (call);                                                                   \
    if (e_ != CUSOLVER_STATUS_SUCCESS) return sap_fail(SAP_ERR_CUDA, "%s: cuSOLVER status %d", #call, (int)e_); \
  } while (0)

sapStatus sapg_solveInit(sapgLaunch* L) {
  if (L->opt->newton_loop == SAP_NEWTON_KERNEL || !L->opt->contacts) return SAP_OK;
  sapgSolve* gs = (sapgSolve*)calloc(1, sizeof(sapgSolve));
  if (!gs) return sap_fail(SAP_ERR_MEMORY, "sap_create: out of memory");
  L->solve = gs;
  int n = L->d.nworld > 0 ? L->d.nworld : 1;
  SAPG_CHECK(cudaMalloc((void**)&gs->counters, 2 * sizeof(int)));
  SAPG_CHECK(cudaMalloc((void**)&gs->info, (n + 1) * sizeof(int)));
  SAPG_CHECK(cudaMalloc((void**)&gs->ptrs, 2 * (size_t)n * sizeof(void*)));
  SAPG_CHECK(cudaStreamCreate(&gs->body_stream));
  gs->have_stream = 1;
  if (L->opt->linear_solver == SAP_LINSOLVE_CUSOLVER) {
    CUSOLVER_TRY(cusolverDnCreate(&gs->solver));
    gs->have_solver = 1;
  }
  return SAP_OK;
}

void sapg_solveFree(sapgLaunch* L) {
  sapgSolve* gs = (sapgSolve*)L->solve;
  if (!gs) return;
  if (gs->have_solver) cusolverDnDestroy(gs->solver);
  if (gs->have_stream) cudaStreamDestroy(gs->body_stream);
  cudaFree(gs->counters);
  cudaFree(gs->info);
  cudaFree(gs->ptrs);
  free(gs);
  L->solve = NULL;
}

/* dv for every world by cuSOLVER: each factor holds H row-major lower = column-major upper */
static sapStatus cusolver_direction(const sapgLaunch* L, sapgSolve* gs, const sapSolveParams* prm) {
  int n = L->m.nv, nw = L->d.nworld;
  CUSOLVER_TRY(cusolverDnSetStream(gs->solver, SAPG_STREAM(L)));
  if (prm->linear_fp32) {
    float** F = (float**)gs->ptrs;  /* every world's factor, then its right-hand side */
    CUSOLVER_TRY(cusolverDnSpotrfBatched(gs->solver, CUBLAS_FILL_MODE_UPPER, n, F, n, gs->info, nw));
    CUSOLVER_TRY(cusolverDnSpotrsBatched(gs->solver, CUBLAS_FILL_MODE_UPPER, n, 1, F, n, F + nw, n, gs->info + nw, nw));
  } else {
    double** F = (double**)gs->ptrs;
    CUSOLVER_TRY(cusolverDnDpotrfBatched(gs->solver, CUBLAS_FILL_MODE_UPPER, n, F, n, gs->info, nw));
    CUSOLVER_TRY(cusolverDnDpotrsBatched(gs->solver, CUBLAS_FILL_MODE_UPPER, n, 1, F, n, F + nw, n, gs->info + nw, nw));
  }
  return SAP_OK;
}

/* one Newton iteration of every world still iterating; active (or null) counts them after it */
static sapStatus loop_iteration(const sapgLaunch* L, sapgSolve* gs, const sapSolveParams* prm, int* active) {
  if (L->opt->linear_solver == SAP_LINSOLVE_CUSTOM) {
    int bytes = chol_shared_bytes(L, prm);
    SAPV_LAUNCH(L, loop_iterate_kernel, prm->contact_fp32, bytes, *prm, bytes, active);
    return SAP_OK;
  }
  SAPV_LAUNCH(L, loop_assemble_kernel, prm->contact_fp32, 0, *prm);
  sapStatus st = cusolver_direction(L, gs, prm);
  if (st != SAP_OK) return st;
  SAPV_LAUNCH(L, loop_advance_kernel, prm->contact_fp32, 0, *prm, gs->info, active);
  return SAP_OK;
}

/* Inside a capture: a conditional while node whose body is one iteration and the condition
 * update (the CUDA programming guide's pattern for conditional nodes in stream capture: the
 * node is added to the graph being captured and becomes the capture's dependency; its body is
 * captured on a second stream). The condition is first set after begin, upstream of the node. */
static sapStatus loop_while(const sapgLaunch* L, sapgSolve* gs, const sapSolveParams* prm) {
  cudaStream_t stream = SAPG_STREAM(L);
  cudaStreamCaptureStatus cst;
  cudaGraph_t graph;
  cudaGraphConditionalHandle cond;
  SAPG_CHECK(cudaStreamGetCaptureInfo(stream, &cst, NULL, &graph, NULL, NULL, NULL));
  SAPG_CHECK(cudaGraphConditionalHandleCreate(&cond, graph, 0, cudaGraphCondAssignDefault));
  SAPG_LAUNCH(loop_continue_kernel, 1, 1, stream)(gs->counters, cond, prm->max_iterations, 0);
  SAPG_CHECK_LAUNCH("loop_continue_kernel");
  SAPG_CHECK(sapg_whileNodeBegin(stream, gs->body_stream, cond));
  sapgLaunch body_launch = *L;  // the same batch, its launches on the body's stream
  body_launch.stream = gs->body_stream;
  sapStatus st = loop_iteration(&body_launch, gs, prm, gs->counters);
  if (st == SAP_OK) {
    SAPG_LAUNCH(loop_continue_kernel, 1, 1, gs->body_stream)(gs->counters, cond, prm->max_iterations, 1);
    if (cudaGetLastError() != cudaSuccess) st = sap_fail(SAP_ERR_CUDA, "kernel loop_continue_kernel: launch failed");
  }
  cudaGraph_t captured;
  cudaError_t e = cudaStreamEndCapture(gs->body_stream, &captured);
  if (st != SAP_OK) return st;
  if (e != cudaSuccess)
    return sap_fail(SAP_ERR_CUDA, "capturing the Newton while node's body: %s", cudaGetErrorString(e));
  return SAP_OK;
}

/* newton_loop=while or fixed */
static sapStatus solve_loop(const sapgLaunch* L, const sapSolveParams* prm) {
  sapgSolve* gs = (sapgSolve*)L->solve;
  if (!gs) return sap_fail(SAP_ERR_CUDA, "newton_loop=%d: the loop's device state was not made", L->opt->newton_loop);
  int cusolver = L->opt->linear_solver == SAP_LINSOLVE_CUSOLVER;
  SAPG_CHECK(cudaMemsetAsync(gs->counters, 0, 2 * sizeof(int), SAPG_STREAM(L)));
  SAPV_LAUNCH(L, loop_begin_kernel, prm->contact_fp32, 0, *prm, cusolver ? gs->ptrs : NULL,
              cusolver ? gs->ptrs + L->d.nworld : NULL, gs->counters);
  cudaStreamCaptureStatus cst = cudaStreamCaptureStatusNone;
  SAPG_CHECK(cudaStreamIsCapturing(SAPG_STREAM(L), &cst));
  sapStatus st = SAP_OK;
  if (L->opt->newton_loop == SAP_NEWTON_WHILE && cst == cudaStreamCaptureStatusActive) {
    st = loop_while(L, gs, prm);
  } else {
    for (int k = 0; k < prm->max_iterations && st == SAP_OK; k++) st = loop_iteration(L, gs, prm, NULL);
  }
  if (st != SAP_OK) return st;
  SAPV_LAUNCH(L, loop_finish_kernel, prm->contact_fp32, 0, *prm);
  return SAP_OK;
}

sapStatus sapg_solve(const sapgLaunch* L) {
  sapSolveParams prm;
  sap_solveParams(L->opt, L->hm, L->h, &prm);
  prm.world_h = L->world_h;
  if (L->d.nworld <= 0) return SAP_OK;
  if (L->opt->solve_kernel == SAP_SOLVE_THREAD) {
    SAPG_LAUNCH(solve_kernel, sapg_blocks(L->d.nworld, THREADS), THREADS, SAPG_STREAM(L))(L->m, L->d, prm);
    SAPG_CHECK_LAUNCH("solve_kernel");
    return SAP_OK;
  }
  if (L->opt->newton_loop != SAP_NEWTON_KERNEL) return solve_loop(L, &prm);
  int bytes = chol_shared_bytes(L, &prm);
  SAPV_LAUNCH(L, solve_warp_kernel, prm.contact_fp32, bytes, prm, bytes);
  return SAP_OK;
}
