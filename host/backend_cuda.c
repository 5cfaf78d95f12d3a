/* Device selection and the CUDA twins of the model and data (one device
 * allocation each, carved by the same field tables as the host copies).
 * Without CUDA, every batch runs on the CPU. */
#include <stdio.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "backend.h"
#include "model.h"
#include "world_view.h"

static void cpu_name(sapSim* s) {
  int n = 1;
#ifdef _OPENMP
  n = s->opt.threads > 0 ? s->opt.threads : omp_get_max_threads();
#endif
  snprintf(s->device_name, sizeof(s->device_name), "cpu (%d threads)", n);
}

#ifndef SAP_HAVE_CUDA

int sap_cudaUsable(char* name, int nname) {
  if (name && nname > 0) snprintf(name, nname, "none (built without CUDA)");
  return 0;
}

sapStatus sapb_init(sapSim* s) {
  if (s->opt.device == SAP_DEVICE_CUDA)
    return sap_fail(SAP_ERR_NO_DEVICE, "device=cuda: sapsim was built without CUDA (nvcc not found)");
  s->on_gpu = 0;
  cpu_name(s);
  return SAP_OK;
}
void sapb_free(sapSim* s) { (void)s; }
void* sap_cudaStream(const sapSim* s) { (void)s; return NULL; }
sapStatus sapb_fetch(sapSim* s, const void* p, size_t n) { (void)s; (void)p; (void)n; return SAP_OK; }
sapStatus sapb_push(sapSim* s, const void* p, size_t n) { (void)s; (void)p; (void)n; return SAP_OK; }
sapStatus sapb_kinematics(sapSim* s, const unsigned char* mask) {
  sapc_kinematicsMasked(s, mask);
  return SAP_OK;
}
sapStatus sapb_sensors(sapSim* s, const unsigned char* mask) {
  sapc_bodyOutputsState(s, mask);
  sapc_sensorPosVel(s, mask, SAP_WORLD_NONFINITE);
  return SAP_OK;
}
sapStatus sapb_worldTables(sapSim* s) { (void)s; return SAP_OK; }
sapStatus sapb_retryInit(sapSim* s) { (void)s; return SAP_OK; }
sapStatus sapb_retryFetch(sapSim* s) { (void)s; return SAP_OK; }
sapStatus sapb_retryPush(sapSim* s) { (void)s; return SAP_OK; }
sapStatus sap_sync(sapSim* s) {
  if (!s) return sap_fail(SAP_ERR_ARG, "sap_sync: null sim");
  return SAP_OK;
}
sapStatus sapb_waitStream(sapSim* s, void* stream) { (void)s; (void)stream; return SAP_OK; }
sapStatus sap_stepStream(sapSim* s, int nstep, void* stream) {
  (void)stream;
  return sap_step(s, nstep);
}
sapStatus sap_streamWait(sapSim* s, void* stream) {
  (void)stream;
  return s ? SAP_OK : sap_fail(SAP_ERR_ARG, "sap_streamWait: null sim");
}

#else

#include <stdlib.h>

#include <cuda_runtime.h>

#include "cuda_check.h"
#include "collision.h"
#include "sensor.h"
#include "stages.h"

/* each GPU sim has a stream of its own, its launch context's (s->gpu.stream, sim_stream),
 * created by sapb_init and destroyed by sapb_free: every launch and copy of the sim goes
 * there, so two sims' work may overlap and one sim's graph capture never records another's
 * launches. A blocking stream, so synchronous copies on the legacy default stream stay
 * ordered with it. */
void* sap_cudaStream(const sapSim* s) { return s && s->on_gpu ? s->gpu.stream : NULL; }

static cudaStream_t sim_stream(const sapSim* s) { return (cudaStream_t)s->gpu.stream; }

/* per-sim CUDA state: the instantiated graph of one step, when graph=1 */
typedef struct {
  cudaGraphExec_t step_graph;
  int have_graph;
  cudaEvent_t ev[SAPC_NTIMER + 1];  /* timer-slot boundaries of one step, when stage_timing=1 */
  int have_events;
  cudaEvent_t join[2]; /* ordering with a caller's stream: [0] caller -> sapsim, [1] back */
} sapCudaState;

#define CUDA_TRY(call)                                                                \
  do {                                                                                \
    cudaError_t e_ = (call);                                                          \
    if (e_ != cudaSuccess)                                                            \
      return sap_fail(SAP_ERR_CUDA, "%s: %s", #call, cudaGetErrorString(e_));         \
  } while (0)

int sap_cudaUsable(char* name, int nname) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    if (name && nname > 0)
      snprintf(name, nname, "%s", e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device");
    cudaGetLastError();  /* clear the sticky error */
    return 0;
  }
  struct cudaDeviceProp p;
  if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) return 0;
  if (name && nname > 0) snprintf(name, nname, "%s", p.name);
  return 1;
}

sapStatus sapb_init(sapSim* s) {
  char name[256];
  int usable = s->opt.device != SAP_DEVICE_CPU && sap_cudaUsable(name, sizeof(name));
  if (s->opt.device == SAP_DEVICE_CUDA && !usable)
    return sap_fail(SAP_ERR_NO_DEVICE, "device=cuda: no usable CUDA GPU (%s)", name);
  if (!usable) {
    s->on_gpu = 0;
    cpu_name(s);
    return SAP_OK;
  }
  s->on_gpu = 1;
  snprintf(s->device_name, sizeof(s->device_name), "%s", name);
  {
    cudaStream_t st;
    CUDA_TRY(cudaStreamCreate(&st));
    s->gpu.stream = st;
  }
  s->cuda = calloc(1, sizeof(sapCudaState));
  if (!s->cuda) return sap_fail(SAP_ERR_MEMORY, "sap_create: out of memory");
  {
    sapCudaState* cs = (sapCudaState*)s->cuda;
    for (int i = 0; i < 2; i++) CUDA_TRY(cudaEventCreate(&cs->join[i]));
  }
  if (s->opt.stage_timing) {
    sapCudaState* cs = (sapCudaState*)s->cuda;
    for (int i = 0; i <= SAPC_NTIMER; i++) CUDA_TRY(cudaEventCreate(&cs->ev[i]));
    cs->have_events = 1;
  }

  /* model twin: same layout, device base pointer */
  void* mbuf = NULL;
  CUDA_TRY(cudaMalloc(&mbuf, s->m->nbuffer ? s->m->nbuffer : 1));
  s->gpu.m = *s->m;
  sapm_carve(&s->gpu.m, mbuf);
  CUDA_TRY(cudaMemcpy(mbuf, s->m->buffer, s->m->nbuffer, cudaMemcpyHostToDevice));

  /* data twin */
  void* dbuf = NULL;
  cudaError_t e = cudaMalloc(&dbuf, s->d.nbuffer);
  if (e != cudaSuccess)
    return sap_fail(SAP_ERR_MEMORY, "device: cannot allocate %.1f MB for %d worlds: %s",
                    s->d.nbuffer / 1e6, s->d.nworld, cudaGetErrorString(e));
  s->gpu.d = s->d;
  sapd_carve(s->m, &s->gpu.d, dbuf);
  CUDA_TRY(cudaMemset(dbuf, 0, s->d.nbuffer));
  /* the rest of the launch context: what the launchers read on the host */
  s->gpu.hm = s->m;
  s->gpu.opt = &s->opt;
  s->gpu.h = s->h;
  s->gpu.sensor_work_off = s->sensor_work_off;
  s->gpu.collision_staged = sapc_collisionStaged(s);
  if (s->opt.body_outputs) CUDA_TRY(cudaMalloc((void**)&s->gpu.mask, (size_t)s->d.nworld));
  return sapg_solveInit(&s->gpu);
}

void sapb_free(sapSim* s) {
  if (!s->on_gpu) return;
  sapg_solveFree(&s->gpu);
  sapg_retryFree(&s->gpu);
  sapCudaState* cs = (sapCudaState*)s->cuda;
  if (cs && cs->have_graph) cudaGraphExecDestroy(cs->step_graph);
  if (cs && cs->have_events)
    for (int i = 0; i <= SAPC_NTIMER; i++) cudaEventDestroy(cs->ev[i]);
  for (int i = 0; cs && i < 2; i++)
    if (cs->join[i]) cudaEventDestroy(cs->join[i]);
  free(cs);
  s->cuda = NULL;
  if (s->gpu.m.buffer) cudaFree(s->gpu.m.buffer);
  if (s->gpu.d.buffer) cudaFree(s->gpu.d.buffer);
  if (s->gpu.mask) cudaFree(s->gpu.mask);
  s->gpu.mask = NULL;
  if (s->wp_device) cudaFree(s->wp_device);
  s->gpu.m.buffer = s->gpu.d.buffer = s->wp_device = NULL;
  if (s->gpu.stream) cudaStreamDestroy((cudaStream_t)s->gpu.stream);  /* after its work: the frees wait */
  s->gpu.stream = NULL;
}

/* the step retry's device state (option retry_depth; kernels/retry.cu), from the host's
 * (host/step.c sapc_retryInit) */
sapStatus sapb_retryInit(sapSim* s) {
  if (!s->on_gpu || !s->rt_level) return SAP_OK;
  return sapg_retryInit(&s->gpu, s->opt.retry_depth, s->opt.retry_recover_steps, s->rt_level, s->rt_clean,
                        s->rt_hlast);
}

/* the retry's counters between the host's arrays (sap_worldRetry, sap_run, qacc_free's h) and
 * the device's, after the sim's work so far: to the host (push 0) or to the device (push 1) */
static sapStatus retry_copy(sapSim* s, int push) {
  const sapgRetry* R = &s->gpu.retry;
  if (!s->on_gpu || !R->save) return SAP_OK;
  size_t nw = (size_t)s->d.nworld;
  struct { void* host; void* dev; size_t bytes; } part[5] = {
      {s->rt_level, R->level, sizeof(int) * nw},
      {s->rt_clean, R->clean, sizeof(int) * nw},
      {s->rt_level_max, R->level_max, sizeof(int) * nw},
      {s->rt_retries, R->retries, sizeof(long long) * nw},
      {s->rt_hlast, R->hlast, sizeof(double) * nw}};
  CUDA_TRY(cudaStreamSynchronize(sim_stream(s)));
  for (int i = 0; i < 5; i++)
    CUDA_TRY(push ? cudaMemcpy(part[i].dev, part[i].host, part[i].bytes, cudaMemcpyHostToDevice)
                  : cudaMemcpy(part[i].host, part[i].dev, part[i].bytes, cudaMemcpyDeviceToHost));
  return SAP_OK;
}

sapStatus sapb_retryFetch(sapSim* s) { return retry_copy(s, 0); }
sapStatus sapb_retryPush(sapSim* s) { return retry_copy(s, 1); }

/* the per-world parameter tables on the device: one allocation holding the override
 * bits and every table (gravity last), made at the first override; each call copies the
 * host tables that exist (rows of worlds without the bit are never read) */
sapStatus sapb_worldTables(sapSim* s) {
  const sapModel* m = s->m;
  if (!s->on_gpu || !m->world_override) return SAP_OK;
  size_t nw = (size_t)s->d.nworld, head = (sizeof(unsigned) * nw + 63) & ~(size_t)63;
  if (!s->wp_device) {
    size_t bytes = head + sizeof(double) * nw * 3;
#define X(name, bit, count) bytes += sizeof(double) * nw * (size_t)(count);
    SAP_WORLD_TABLES(X, m)
#undef X
    void* buf = NULL;
    cudaError_t e = cudaMalloc(&buf, bytes);
    if (e != cudaSuccess)
      return sap_fail(SAP_ERR_MEMORY, "device: cannot allocate %.1f MB of per-world parameters: %s",
                      bytes / 1e6, cudaGetErrorString(e));
    s->wp_device = buf;
    char* p = (char*)buf;
    s->gpu.m.world_override = (unsigned*)p;
    p += head;
#define X(name, bit, count)          \
    s->gpu.m.world_##name = (double*)p; \
    p += sizeof(double) * nw * (size_t)(count);
    SAP_WORLD_TABLES(X, m)
#undef X
    s->gpu.m.world_gravity = (double*)p;
    /* a captured step holds the old model twin as its kernels' argument */
    sapCudaState* cs = (sapCudaState*)s->cuda;
    if (cs && cs->have_graph) {
      cudaGraphExecDestroy(cs->step_graph);
      cs->have_graph = 0;
    }
  }
  CUDA_TRY(cudaStreamSynchronize(sim_stream(s)));
  CUDA_TRY(cudaMemcpy(s->gpu.m.world_override, m->world_override, sizeof(unsigned) * nw, cudaMemcpyHostToDevice));
#define X(name, bit, count)                                                                     \
  if (m->world_##name)                                                                          \
    CUDA_TRY(cudaMemcpy(s->gpu.m.world_##name, m->world_##name, sizeof(double) * nw * (size_t)(count), \
                        cudaMemcpyHostToDevice));
  SAP_WORLD_TABLES(X, m)
#undef X
  if (m->world_gravity)
    CUDA_TRY(cudaMemcpy(s->gpu.m.world_gravity, m->world_gravity, sizeof(double) * nw * 3, cudaMemcpyHostToDevice));
  return SAP_OK;
}

sapStatus sap_sync(sapSim* s) {
  if (!s) return sap_fail(SAP_ERR_ARG, "sap_sync: null sim");
  if (!s->on_gpu || !s->host_stale) return SAP_OK;
  CUDA_TRY(cudaStreamSynchronize(sim_stream(s)));
  CUDA_TRY(cudaMemcpy(s->d.buffer, s->gpu.d.buffer, s->d.nbuffer, cudaMemcpyDeviceToHost));
  s->host_stale = 0;
  return SAP_OK;
}

/* event i at a stage boundary, when timing stages */
#define MARK(i) \
  if (cs->have_events) CUDA_TRY(cudaEventRecord(cs->ev[i], sim_stream(s)))

/* device address of a host data address: the twins share one layout */
static void* device_twin(const sapSim* s, const void* host_ptr) {
  return (char*)s->gpu.d.buffer + ((const char*)host_ptr - (const char*)s->d.buffer);
}

sapStatus sapb_fetch(sapSim* s, const void* host_ptr, size_t bytes) {
  if (!s->on_gpu || !s->host_stale || !bytes) return SAP_OK;
  CUDA_TRY(cudaStreamSynchronize(sim_stream(s)));
  CUDA_TRY(cudaMemcpy((void*)host_ptr, device_twin(s, host_ptr), bytes, cudaMemcpyDeviceToHost));
  return SAP_OK;
}

sapStatus sapb_push(sapSim* s, const void* host_ptr, size_t bytes) {
  if (!s->on_gpu || !bytes) return SAP_OK;
  CUDA_TRY(cudaStreamSynchronize(sim_stream(s)));
  CUDA_TRY(cudaMemcpy(device_twin(s, host_ptr), host_ptr, bytes, cudaMemcpyHostToDevice));
  return SAP_OK;
}

sapStatus sapb_kinematics(sapSim* s, const unsigned char* mask) {
  if (!s->on_gpu) {
    sapc_kinematicsMasked(s, mask);
    return SAP_OK;
  }
  /* on the device every non-frozen world: kinematics depend only on qpos */
  sapStatus st = sapg_kinematics(&s->gpu);
  if (st == SAP_OK) s->host_stale = 1;
  return st;
}

sapStatus sapb_sensors(sapSim* s, const unsigned char* mask) {
  if (!s->on_gpu) {
    sapc_bodyOutputsState(s, mask);
    sapc_sensorPosVel(s, mask, SAP_WORLD_NONFINITE);
    return SAP_OK;
  }
  if (!s->opt.body_outputs && s->m->nsensor == 0) return SAP_OK;
  /* on the device every non-frozen world, as the kinematics: they depend only on the state */
  sapStatus st = SAP_OK;
  if (s->opt.body_outputs) {
    /* a masked reset leaves the other worlds' outputs those of their last step */
    if (mask) CUDA_TRY(cudaMemcpyAsync(s->gpu.mask, mask, (size_t)s->d.nworld, cudaMemcpyHostToDevice, sim_stream(s)));
    /* the poses of the edited state (a velocity edit leaves the last step's start poses) */
    st = sapg_kinematics(&s->gpu);
    if (st == SAP_OK) st = sapg_bodyState(&s->gpu, mask != NULL);
  }
  if (st == SAP_OK && s->m->nsensor) st = sapg_sensorPosVel(&s->gpu, SAP_WORLD_NONFINITE);
  if (st == SAP_OK) s->host_stale = 1;
  return st;
}

/* the GPU launchers of the stage table (host/stages.h), every world at once */
sapStatus sapb_stageClear(sapSim* s) { return sapg_clearFlags(&s->gpu); }
sapStatus sapb_stageKinematics(sapSim* s) { return sapg_kinematics(&s->gpu); }
sapStatus sapb_stageCollision(sapSim* s) { return s->opt.contacts ? sapg_collision(&s->gpu) : SAP_OK; }
sapStatus sapb_stageFreeMotion(sapSim* s) { return sapg_freeMotion(&s->gpu); }

sapStatus sapb_stageSolve(sapSim* s) {
  if (s->opt.contacts) return sapg_solve(&s->gpu);
  /* without contacts the solved velocity is the free motion (of the worlds the retry does not hold) */
  if (s->gpu.retry.save) return sapg_retryCopyFree(&s->gpu);
  size_t n = sizeof(double) * (size_t)s->gpu.d.nworld * s->m->nv;
  CUDA_TRY(cudaMemcpyAsync(s->gpu.d.vnext, s->gpu.d.vstar, n, cudaMemcpyDeviceToDevice, sim_stream(s)));
  return SAP_OK;
}

/* acceleration sensors of this step: after the solve, before integration */
sapStatus sapb_stageSensorAcc(sapSim* s) {
  if (!s->m->nsensor || !sapm_accSensors(s->m)) return SAP_OK;
  sapSensorSolve S;
  sapc_sensorSolveInfo(s, &S);
  return sapg_sensorAcc(&s->gpu, &S);
}

/* MuJoCo's com-based outputs of this step (option body_outputs) */
sapStatus sapb_stageBodyOutputs(sapSim* s) {
  if (!s->opt.body_outputs) return SAP_OK;
  sapSensorSolve S;
  sapc_sensorSolveInfo(s, &S);
  return sapg_bodyForces(&s->gpu, &S);
}

sapStatus sapb_stageIntegrate(sapSim* s) { return sapg_integrate(&s->gpu); }

/* position/velocity sensors of the new state */
sapStatus sapb_stageSensorPosVel(sapSim* s) {
  return s->m->nsensor ? sapg_sensorPosVel(&s->gpu, SAP_WORLD_SKIP) : SAP_OK;
}

/* add the last step's stage times (waits for it) */
static sapStatus add_stage_times(sapSim* s, sapCudaState* cs) {
  double* t[SAPC_NTIMER] = {&s->timers.kinematics, &s->timers.collision, &s->timers.free_motion,
                           &s->timers.solve, &s->timers.integrate};
  CUDA_TRY(cudaEventSynchronize(cs->ev[SAPC_NTIMER]));
  for (int i = 0; i < SAPC_NTIMER; i++) {
    float ms = 0;
    CUDA_TRY(cudaEventElapsedTime(&ms, cs->ev[i], cs->ev[i + 1]));
    *t[i] += 1e-3 * ms;
  }
  return SAP_OK;
}

/* the stage table's launchers in order, with an event at each timer boundary (event i starts
 * timer slot i, event SAPC_NTIMER ends the step) when timing stages */
static sapStatus step_stages(sapSim* s) {
  sapCudaState* cs = (sapCudaState*)s->cuda;
  sapStatus st;
  int slot = 0;
  MARK(0);
  for (int k = 0; k < SAPC_NSTAGE; k++) {
    while (slot < sapc_stages[k].timer) {
      slot++;
      MARK(slot);
    }
    if ((st = sapc_stages[k].gpu(s)) != SAP_OK) return st;
  }
  while (slot < SAPC_NTIMER) {
    slot++;
    MARK(slot);
  }
  return SAP_OK;
}

/* one round of the step retry (kernels/retry.cu): the stages on `stream` (the rounds' while-node
 * body inside a capture), the launch context's stream swapped for it; timed: the round's stage
 * times added (no capture then) */
typedef struct {
  sapSim* s;
  int timed;
} sapRetryRound;

static sapStatus retry_round(void* ctx, void* stream) {
  sapRetryRound* r = (sapRetryRound*)ctx;
  sapSim* s = r->s;
  void* own = s->gpu.stream;
  s->gpu.stream = stream;
  sapStatus st = step_stages(s);
  s->gpu.stream = own;
  if (st == SAP_OK && r->timed) st = add_stage_times(s, (sapCudaState*)s->cuda);
  return st;
}

/* one step; timed: its stage times added (waits for it). With the step retry, the masked rounds
 * of kernels/retry.cu, each world at its own step */
static sapStatus step_gpu(sapSim* s, int timed) {
  s->host_stale = 1;
  if (s->gpu.retry.save) {
    sapRetryRound r = {s, timed};
    return sapg_retryStep(&s->gpu, retry_round, &r);
  }
  sapStatus st = step_stages(s);
  if (st == SAP_OK && timed) st = add_stage_times(s, (sapCudaState*)s->cuda);
  return st;
}

sapStatus sapb_stepGPU(sapSim* s) { return step_gpu(s, 0); }

/* Capture one whole step (collision and the Newton loop, which runs inside the
 * solve kernel) into a graph. Kernel arguments are the sim's device twins, its
 * time step and options, fixed for the sim's life, so one capture serves every
 * later step. Capture records work without running it. */
static sapStatus capture_step(sapSim* s, sapCudaState* cs) {
  cudaGraph_t g;
  CUDA_TRY(cudaStreamBeginCapture(sim_stream(s), cudaStreamCaptureModeThreadLocal));
  sapStatus st = sapb_stepGPU(s);
  cudaError_t e = cudaStreamEndCapture(sim_stream(s), &g);
  if (st != SAP_OK) return st;
  if (e != cudaSuccess)
    return sap_fail(SAP_ERR_CUDA, "capturing the step graph: %s", cudaGetErrorString(e));
  e = cudaGraphInstantiate(&cs->step_graph, g, 0);
  cudaGraphDestroy(g);
  if (e != cudaSuccess)
    return sap_fail(SAP_ERR_CUDA, "instantiating the step graph: %s", cudaGetErrorString(e));
  cs->have_graph = 1;
  return SAP_OK;
}

sapStatus sapb_stepsGPU(sapSim* s, int nstep) {
  sapCudaState* cs = (sapCudaState*)s->cuda;
  /* graphs off, stage timing, or SAPSIM_CUDA_SYNC=1 (a synchronisation inside a
   * capture is illegal): direct launches */
  if (!s->opt.graph || cs->have_events || sapg_syncEachLaunch()) {
    for (int k = 0; k < nstep; k++) {
      sapStatus st = step_gpu(s, cs->have_events);
      if (st != SAP_OK) return st;
    }
    return SAP_OK;
  }
  if (nstep > 0 && !cs->have_graph) {
    sapStatus st = capture_step(s, cs);
    if (st != SAP_OK) return st;
  }
  for (int k = 0; k < nstep; k++) CUDA_TRY(cudaGraphLaunch(cs->step_graph, sim_stream(s)));
  s->host_stale = s->host_stale || nstep > 0;
  return SAP_OK;
}

/* ---- the caller's stream (sapsim.h: ordering) ------------------------------------ */

/* `waiter` runs its later work after what `signaler` has enqueued so far; no host wait */
static sapStatus stream_after(cudaStream_t waiter, cudaStream_t signaler, cudaEvent_t ev) {
  CUDA_TRY(cudaEventRecord(ev, signaler));
  CUDA_TRY(cudaStreamWaitEvent(waiter, ev, 0));
  return SAP_OK;
}

sapStatus sapb_waitStream(sapSim* s, void* stream) {
  if (!s->on_gpu) return SAP_OK;
  if (stream) CUDA_TRY(cudaStreamSynchronize((cudaStream_t)stream));
  else CUDA_TRY(cudaDeviceSynchronize());
  return SAP_OK;
}

sapStatus sap_streamWait(sapSim* s, void* stream) {
  if (!s) return sap_fail(SAP_ERR_ARG, "sap_streamWait: null sim");
  if (!s->on_gpu || (cudaStream_t)stream == sim_stream(s)) return SAP_OK;
  return stream_after((cudaStream_t)stream, sim_stream(s), ((sapCudaState*)s->cuda)->join[1]);
}

sapStatus sap_stepStream(sapSim* s, int nstep, void* stream) {
  if (!s) return sap_fail(SAP_ERR_ARG, "sap_stepStream: null sim");
  if (nstep < 0) return sap_fail(SAP_ERR_ARG, "sap_stepStream: nstep %d is negative", nstep);
  if (!s->on_gpu) return sap_step(s, nstep);
  sapCudaState* cs = (sapCudaState*)s->cuda;
  cudaStream_t caller = (cudaStream_t)stream;
  enum cudaStreamCaptureStatus cap = cudaStreamCaptureStatusNone;
  if (caller) CUDA_TRY(cudaStreamIsCapturing(caller, &cap));
  memset(&s->timers, 0, sizeof(s->timers));
  sapStatus st = SAP_OK;
  if (caller != sim_stream(s) && (st = stream_after(sim_stream(s), caller, cs->join[0])) != SAP_OK) return st;
  if (cap != cudaStreamCaptureStatusNone || !s->opt.graph) {
    /* direct launches: inside a caller's capture sapsim's stream is part of it */
    for (int k = 0; k < nstep && st == SAP_OK; k++) st = sapb_stepGPU(s);
  } else {
    st = sapb_stepsGPU(s, nstep);
  }
  if (st != SAP_OK) return st;
  s->host_stale = 1;
  if (caller != sim_stream(s) && (st = stream_after(caller, sim_stream(s), cs->join[1])) != SAP_OK) return st;
  CUDA_TRY(cudaGetLastError());
  return SAP_OK;
}

sapStatus sapb_finish(sapSim* s) {
  (void)s;
  CUDA_TRY(cudaStreamSynchronize(sim_stream(s)));
  CUDA_TRY(cudaGetLastError());
  return SAP_OK;
}

#endif
