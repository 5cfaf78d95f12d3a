/* The step retry on the CUDA backend (option retry_depth > 0): the rules of the CPU's
 * host/step.c step_world_retry, for every world at once, as masked rounds. A batch step is
 *   begin -> rounds -> end
 * and each round is
 *   save -> the step's stages at each world's own step (sapgLaunch.world_h) -> commit
 * where save keeps the state a substep changes (qpos, qvel, vnext, act, histories, time) and
 * commit either restores it and deepens the world's level (a failed solve above retry_depth) or
 * accepts the substep; a world that has covered h (2^depth units of h / 2^depth) is held
 * (SAPW_WORLD_HELD, world_flags.h): every stage of the later rounds leaves it alone. A frozen
 * world, or one whose inputs are refused, takes the plain step (one round at h, no counters), as
 * on the CPU. Rounds repeat while some world is unfinished, at most 2^depth + depth (a world
 * deepens at most depth times in a step, then each round covers at least one unit). Inside a
 * capture (graph=1, or a caller capturing sap_stepAsync) the rounds are the body of a conditional
 * while node; without one, a host loop reads the count of unfinished worlds after each round. */
#include <string.h>

#include "cuda_check.h"
#include "world_stages.h"

#define THREADS (L->opt->world_block_threads)

/* a solve that failed (host/step.c SAP_RETRY_FAIL) */
#define RETRY_FAIL (SAP_WORLD_MAXITER | SAP_WORLD_LSFAIL | SAP_WORLD_FACTORFAIL | SAP_WORLD_NONFINITE)

static __host__ __device__ long retry_stride(const sapModel* m) {
  return (long)m->nq + 2L * m->nv + m->na + m->nhistory + 1;
}

/* world w's state that a substep changes, to b (restore 0) or from b (host/step.c retry_save) */
static __device__ void retry_copy(const sapModel* m, const sapData* d, int w, double* b, int restore) {
  struct { double* x; long n; } part[6] = {{d->qpos + (long)w * m->nq, m->nq},
                                           {d->qvel + (long)w * m->nv, m->nv},
                                           {d->vnext + (long)w * m->nv, m->nv},
                                           {d->act + (long)w * m->na, m->na},
                                           {d->history + (long)w * m->nhistory, m->nhistory},
                                           {d->time + w, 1}};
  for (int i = 0; i < 6; i++) {
    for (long k = 0; k < part[i].n; k++) {
      if (restore) part[i].x[k] = b[k];
      else b[k] = part[i].x[k];
    }
    b += part[i].n;
  }
}

/* the batch step's start: sums cleared, the plain step for frozen worlds and refused inputs
 * (step_world_retry's first test), each world's step h / 2^level */
static __global__ void retry_begin_kernel(SAPG_PARAM sapModel m, SAPG_PARAM sapData d, sapgRetry R, double* world_h,
                                          double h) {
  int w = blockIdx.x * blockDim.x + threadIdx.x;
  if (w >= d.nworld) return;
  int* sum = R.sums + (long)w * SAPG_RETRY_NSUM;
  for (int k = 0; k < SAPG_RETRY_NSUM; k++) sum[k] = 0;
  sum[SAPG_RETRY_FAND] = ~0;
  int plain = (d.world_flags[w] & SAP_WORLD_NONFINITE) || !sapw_allFinite(d.ctrl + (long)w * m.nu, m.nu) ||
              !sapw_allFinite(d.qfrc_applied + (long)w * m.nv, m.nv) ||
              !sapw_allFinite(d.xfrc_applied + (long)w * m.nbody * 6, m.nbody * 6);
  R.done[w] = plain ? -1 : 0;
  world_h[w] = plain ? h : ldexp(h, -R.level[w]);
}

/* before a round: the state of every world that takes a (non-plain) substep */
static __global__ void retry_save_kernel(SAPG_PARAM sapModel m, SAPG_PARAM sapData d, sapgRetry R) {
  int w = blockIdx.x * blockDim.x + threadIdx.x;
  if (w >= d.nworld || sapw_held(&d, w) || R.done[w] < 0) return;
  retry_copy(&m, &d, w, R.save + (long)w * retry_stride(&m), 0);
}

/* after a round: restore and deepen, or accept; a world done with its batch step gets the step's
 * diagnostics and counters (step_world_retry's loop and tail) and is held; counters[0] counts the
 * worlds still unfinished */
static __global__ void retry_commit_kernel(SAPG_PARAM sapModel m, SAPG_PARAM sapData d, sapgRetry R, double* world_h,
                                           double h) {
  int w = blockIdx.x * blockDim.x + threadIdx.x;
  if (w >= d.nworld || sapw_held(&d, w)) return;
  if (R.done[w] < 0) {  // the plain step: as it left the world
    d.world_flags[w] |= SAPW_WORLD_HELD;
    return;
  }
  int* sum = R.sums + (long)w * SAPG_RETRY_NSUM;
  int f = d.world_flags[w], depth = R.depth, level = R.level[w];
  sum[SAPG_RETRY_NEWTON] += d.newton_iter[w];
  sum[SAPG_RETRY_LS] += d.ls_iter[w];
  sum[SAPG_RETRY_NFACTOR] += d.nfactor[w];
  sum[SAPG_RETRY_LS_EVAL] += d.ls_eval[w];
  if ((f & RETRY_FAIL) && level < depth) {
    retry_copy(&m, &d, w, R.save + (long)w * retry_stride(&m), 1);
    d.world_flags[w] &= ~SAP_WORLD_NONFINITE;
    R.level[w] = ++level;
    sum[SAPG_RETRY_REDONE]++;
    world_h[w] = ldexp(h, -level);
    atomicAdd(&R.counters[0], 1);
    return;
  }
  sum[SAPG_RETRY_FOR] |= f;
  sum[SAPG_RETRY_FAND] &= f;
  R.done[w] += 1LL << (depth - level);
  R.hlast[w] = ldexp(h, -level);
  if (R.done[w] < (1LL << depth) && !(f & SAP_WORLD_NONFINITE)) {  // NONFINITE: frozen at the smallest step
    atomicAdd(&R.counters[0], 1);
    return;
  }
  int f_or = sum[SAPG_RETRY_FOR], redone = sum[SAPG_RETRY_REDONE];
  d.world_flags[w] = (f_or & ~SAP_WORLD_CONVERGED) | (sum[SAPG_RETRY_FAND] & SAP_WORLD_CONVERGED) | SAPW_WORLD_HELD;
  d.newton_iter[w] = sum[SAPG_RETRY_NEWTON];
  d.ls_iter[w] = sum[SAPG_RETRY_LS];
  d.nfactor[w] = sum[SAPG_RETRY_NFACTOR];
  d.ls_eval[w] = sum[SAPG_RETRY_LS_EVAL];
  R.retries[w] += redone;
  if (redone || (f_or & RETRY_FAIL)) R.clean[w] = 0;
  else if (level > 0 && ++R.clean[w] >= R.recover_steps) level = R.clean[w] = 0;
  R.level[w] = level;
  if (level > R.level_max[w]) R.level_max[w] = level;
}

/* the batch step's end: no world held */
static __global__ void retry_end_kernel(SAPG_PARAM sapData d) {
  int w = blockIdx.x * blockDim.x + threadIdx.x;
  if (w < d.nworld) d.world_flags[w] &= ~SAPW_WORLD_HELD;
}

/* the while node's condition: another round while a world is unfinished after the last one
 * (before the first: every world is), at most max_rounds; counters[0] restarts for the next count */
static __global__ void retry_continue_kernel(int* counters, cudaGraphConditionalHandle cond, int max_rounds,
                                             int after_round) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  int left = after_round ? counters[0] : 1;
  counters[1] += after_round;
  cudaGraphSetConditional(cond, left > 0 && counters[1] < max_rounds);
  counters[0] = 0;
}

static __global__ void retry_copy_free_kernel(SAPG_PARAM sapModel m, SAPG_PARAM sapData d) {
  int w = blockIdx.x * blockDim.x + threadIdx.x;
  if (w >= d.nworld || sapw_held(&d, w)) return;
  for (int j = 0; j < m.nv; j++) d.vnext[(long)w * m.nv + j] = d.vstar[(long)w * m.nv + j];
}

sapStatus sapg_retryCopyFree(const sapgLaunch* L) {
  SAPG_LAUNCH(retry_copy_free_kernel, sapg_blocks(L->d.nworld, THREADS), THREADS, SAPG_STREAM(L))(L->m, L->d);
  SAPG_CHECK_LAUNCH("retry_copy_free");
  return SAP_OK;
}

sapStatus sapg_retryInit(sapgLaunch* L, int depth, int recover_steps, const int* level, const int* clean,
                         const double* hlast) {
  sapgRetry* R = &L->retry;
  size_t nw = L->d.nworld > 0 ? (size_t)L->d.nworld : 1;
  R->depth = depth;
  R->recover_steps = recover_steps;
  SAPG_CHECK(cudaMalloc((void**)&R->save, sizeof(double) * nw * retry_stride(&L->m)));
  SAPG_CHECK(cudaMalloc((void**)&L->world_h, sizeof(double) * nw));
  SAPG_CHECK(cudaMalloc((void**)&R->hlast, sizeof(double) * nw));
  SAPG_CHECK(cudaMalloc((void**)&R->retries, sizeof(long long) * nw));
  SAPG_CHECK(cudaMalloc((void**)&R->done, sizeof(long long) * nw));
  SAPG_CHECK(cudaMalloc((void**)&R->level, sizeof(int) * nw));
  SAPG_CHECK(cudaMalloc((void**)&R->clean, sizeof(int) * nw));
  SAPG_CHECK(cudaMalloc((void**)&R->level_max, sizeof(int) * nw));
  SAPG_CHECK(cudaMalloc((void**)&R->sums, sizeof(int) * nw * SAPG_RETRY_NSUM));
  SAPG_CHECK(cudaMalloc((void**)&R->counters, 2 * sizeof(int)));
  cudaStream_t body;
  SAPG_CHECK(cudaStreamCreate(&body));
  R->body_stream = body;
  SAPG_CHECK(cudaMemset(R->retries, 0, sizeof(long long) * nw));
  SAPG_CHECK(cudaMemset(R->level_max, 0, sizeof(int) * nw));
  SAPG_CHECK(cudaMemcpy(R->level, level, sizeof(int) * L->d.nworld, cudaMemcpyHostToDevice));
  SAPG_CHECK(cudaMemcpy(R->clean, clean, sizeof(int) * L->d.nworld, cudaMemcpyHostToDevice));
  SAPG_CHECK(cudaMemcpy(R->hlast, hlast, sizeof(double) * L->d.nworld, cudaMemcpyHostToDevice));
  return SAP_OK;
}

void sapg_retryFree(sapgLaunch* L) {
  sapgRetry* R = &L->retry;
  void* p[10] = {R->save, L->world_h, R->hlast, R->retries, R->done, R->level, R->clean, R->level_max, R->sums,
                 R->counters};
  for (int i = 0; i < 10; i++)
    if (p[i]) cudaFree(p[i]);
  if (R->body_stream) cudaStreamDestroy((cudaStream_t)R->body_stream);
  memset(R, 0, sizeof(*R));
  L->world_h = NULL;
}

/* one round on L's stream: save, the stages (round), commit */
static sapStatus retry_round(const sapgLaunch* L, sapStatus (*round)(void* ctx, void* stream), void* ctx) {
  SAPG_LAUNCH(retry_save_kernel, sapg_blocks(L->d.nworld, THREADS), THREADS, SAPG_STREAM(L))(L->m, L->d, L->retry);
  SAPG_CHECK_LAUNCH("retry_save");
  sapStatus st = round(ctx, L->stream);
  if (st != SAP_OK) return st;
  SAPG_LAUNCH(retry_commit_kernel, sapg_blocks(L->d.nworld, THREADS), THREADS, SAPG_STREAM(L))(
      L->m, L->d, L->retry, L->world_h, L->h);
  SAPG_CHECK_LAUNCH("retry_commit");
  return SAP_OK;
}

/* the rounds inside a capture: a conditional while node, its body one round and the condition */
static sapStatus rounds_while(const sapgLaunch* L, sapStatus (*round)(void* ctx, void* stream), void* ctx,
                              int max_rounds) {
  cudaStream_t stream = SAPG_STREAM(L), body = (cudaStream_t)L->retry.body_stream;
  cudaStreamCaptureStatus cst;
  cudaGraph_t graph;
  cudaGraphConditionalHandle cond;
  SAPG_CHECK(cudaStreamGetCaptureInfo(stream, &cst, NULL, &graph, NULL, NULL, NULL));
  SAPG_CHECK(cudaGraphConditionalHandleCreate(&cond, graph, 0, cudaGraphCondAssignDefault));
  SAPG_LAUNCH(retry_continue_kernel, 1, 1, stream)(L->retry.counters, cond, max_rounds, 0);
  SAPG_CHECK_LAUNCH("retry_continue");
  SAPG_CHECK(sapg_whileNodeBegin(stream, body, cond));
  sapgLaunch body_launch = *L;  // the same batch, its launches on the body's stream
  body_launch.stream = body;
  sapStatus st = retry_round(&body_launch, round, ctx);
  if (st == SAP_OK) {
    SAPG_LAUNCH(retry_continue_kernel, 1, 1, body)(L->retry.counters, cond, max_rounds, 1);
    if (cudaGetLastError() != cudaSuccess) st = sap_fail(SAP_ERR_CUDA, "kernel retry_continue: launch failed");
  }
  cudaGraph_t captured;
  cudaError_t e = cudaStreamEndCapture(body, &captured);
  if (st != SAP_OK) return st;
  if (e != cudaSuccess) return sap_fail(SAP_ERR_CUDA, "capturing the retry rounds' body: %s", cudaGetErrorString(e));
  return SAP_OK;
}

/* the rounds without a capture: the host reads the count of unfinished worlds after each */
static sapStatus rounds_host(const sapgLaunch* L, sapStatus (*round)(void* ctx, void* stream), void* ctx,
                             int max_rounds) {
  cudaStream_t stream = SAPG_STREAM(L);
  for (int r = 0; r < max_rounds; r++) {
    SAPG_CHECK(cudaMemsetAsync(L->retry.counters, 0, sizeof(int), stream));
    sapStatus st = retry_round(L, round, ctx);
    if (st != SAP_OK) return st;
    int left = 0;
    SAPG_CHECK(cudaMemcpyAsync(&left, L->retry.counters, sizeof(int), cudaMemcpyDeviceToHost, stream));
    SAPG_CHECK(cudaStreamSynchronize(stream));
    if (!left) break;
  }
  return SAP_OK;
}

sapStatus sapg_retryStep(const sapgLaunch* L, sapStatus (*round)(void* ctx, void* stream), void* ctx) {
  if (L->d.nworld <= 0) return SAP_OK;
  cudaStream_t stream = SAPG_STREAM(L);
  int max_rounds = (1 << L->retry.depth) + L->retry.depth;
  SAPG_CHECK(cudaMemsetAsync(L->retry.counters, 0, 2 * sizeof(int), stream));
  SAPG_LAUNCH(retry_begin_kernel, sapg_blocks(L->d.nworld, THREADS), THREADS, stream)(L->m, L->d, L->retry,
                                                                                      L->world_h, L->h);
  SAPG_CHECK_LAUNCH("retry_begin");
  cudaStreamCaptureStatus cst = cudaStreamCaptureStatusNone;
  SAPG_CHECK(cudaStreamIsCapturing(stream, &cst));
  sapStatus st = cst == cudaStreamCaptureStatusActive ? rounds_while(L, round, ctx, max_rounds)
                                                       : rounds_host(L, round, ctx, max_rounds);
  if (st != SAP_OK) return st;
  SAPG_LAUNCH(retry_end_kernel, sapg_blocks(L->d.nworld, THREADS), THREADS, stream)(L->d);
  SAPG_CHECK_LAUNCH("retry_end");
  return SAP_OK;
}
