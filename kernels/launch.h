/* The launch context of the CUDA launchers (kernels/, the .cu files): what a stage launch needs of its
 * batch (the device twins, the stream, the step's parameters), filled by the host
 * (host/backend_cuda.c) once per batch. Launchers take a const sapgLaunch* and know nothing
 * of the host's sapSim; every launch and copy of a batch goes to its context's stream. */
#ifndef SAPSIM_KERNELS_LAUNCH_H
#define SAPSIM_KERNELS_LAUNCH_H

#include "sapsim/sapsim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* error reporting (host/errors.c): sets the thread's message (sap_lastError), returns s */
sapStatus sap_fail(sapStatus s, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

struct sapSensorSolve; /* kernels/sensor.h */

/* the step retry's device state (option retry_depth > 0, kernels/retry.cu; the rules are the CPU's,
 * host/step.c step_world_retry): every array (nworld) unless said */
typedef struct sapgRetry {
  double* save;          /* (nworld x stride) qpos, qvel, vnext, act, history, time before a substep */
  double* hlast;         /* step of the last accepted substep (qacc_free) */
  long long* retries;    /* substeps redone since creation or sap_retryClear */
  long long* done;       /* units of h / 2^depth the batch step has covered; -1: a plain step
                            (frozen world or refused inputs) */
  int* level;            /* substep depth in force: steps of h / 2^level */
  int* clean;            /* clean steps at that depth */
  int* level_max;        /* deepest depth since creation or sap_retryClear */
  int* sums;             /* (nworld x SAPG_RETRY_NSUM) the batch step's diagnostics so far */
  int* counters;         /* [2]: worlds unfinished after the last round, rounds so far */
  void* body_stream;     /* cudaStream_t that captures the rounds' while-node body */
  int depth, recover_steps;
} sapgRetry;

/* the sums of sapgRetry: Newton iterations, line-search iterations, factorizations, line-search
 * evaluations, flags OR-ed and AND-ed over the accepted substeps, substeps redone */
enum { SAPG_RETRY_NEWTON, SAPG_RETRY_LS, SAPG_RETRY_NFACTOR, SAPG_RETRY_LS_EVAL, SAPG_RETRY_FOR, SAPG_RETRY_FAND,
       SAPG_RETRY_REDONE, SAPG_RETRY_NSUM };

typedef struct sapgLaunch {
  sapModel m;             /* device twin of the model: the host's sizes, device pointers */
  sapData d;              /* device twin of the data */
  const sapModel* hm;     /* the host model, for what a launcher reads on the host */
  const sapOptions* opt;  /* expanded options (host memory) */
  double h;               /* time step */
  void* stream;           /* cudaStream_t of every launch and copy of this batch */
  void* solve;            /* device state of the per-iteration Newton loops (kernels/solve.cu) */
  long sensor_work_off;   /* byte offset of the sensor work area in a world's scratch */
  int collision_staged;   /* 1: collision's one pass stages the contacts in the scratch (room and
                             the budget, host/collision.c sapc_collisionStaged); 0: count and redo */
  unsigned char* mask;    /* (nworld) device bytes: the worlds of a masked state edit (option
                             body_outputs; NULL without it) */
  double* world_h;        /* (nworld) device: each world's own step, read by every kernel that
                             reads h (the retry's substeps); NULL: every world steps h */
  sapgRetry retry;        /* option retry_depth > 0; retry.save is NULL without it */
} sapgLaunch;

#ifdef SAP_HAVE_CUDA
/* stage launchers (kernels/dynamics.cu, collision.cu, solve.cu, sensor.cu): asynchronous on
 * L->stream, launch errors checked (sap_fail) */
sapStatus sapg_clearFlags(const sapgLaunch* L); /* keep only SAP_WORLD_NONFINITE */
sapStatus sapg_kinematics(const sapgLaunch* L);
sapStatus sapg_collision(const sapgLaunch* L);
sapStatus sapg_freeMotion(const sapgLaunch* L);
sapStatus sapg_solve(const sapgLaunch* L);
sapStatus sapg_integrate(const sapgLaunch* L);
/* position/velocity sensors of every world without a flag of skip; acceleration sensors after
 * the solve, where S tells where the solve left its impulses (host/sensor.c) */
sapStatus sapg_sensorPosVel(const sapgLaunch* L, int skip);
sapStatus sapg_sensorAcc(const sapgLaunch* L, const struct sapSensorSolve* S);
/* MuJoCo's com-based body outputs (option body_outputs, kernels/body_out.h): of the state after a
 * reset or state edit (the worlds whose byte in L->mask is set when masked, else every world not
 * frozen), and of a step after its solve */
sapStatus sapg_bodyState(const sapgLaunch* L, int masked);
sapStatus sapg_bodyForces(const sapgLaunch* L, const struct sapSensorSolve* S);
/* the step retry (kernels/retry.cu): device state made at sap_create (world_h and retry, the
 * host's level, clean and hlast copied in) and freed; one batch step of masked rounds, each round
 * one substep of every unfinished world: round(ctx, stream) enqueues the step's stages on stream
 * (inside a capture: the body of a conditional while node; else a host loop that reads the count
 * of unfinished worlds after each round) */
sapStatus sapg_retryInit(sapgLaunch* L, int depth, int recover_steps, const int* level, const int* clean,
                         const double* hlast);
void sapg_retryFree(sapgLaunch* L);
sapStatus sapg_retryStep(const sapgLaunch* L, sapStatus (*round)(void* ctx, void* stream), void* ctx);
/* without contacts the solved velocity is the free motion: vnext = vstar of every world not held */
sapStatus sapg_retryCopyFree(const sapgLaunch* L);
/* device buffers, cuSOLVER handle and capture stream of newton_loop=while/fixed in L->solve,
 * made at sap_create so that no step allocates */
sapStatus sapg_solveInit(sapgLaunch* L);
void sapg_solveFree(sapgLaunch* L);
#endif

#ifdef __cplusplus
}
#endif

#endif
