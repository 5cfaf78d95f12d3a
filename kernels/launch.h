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
/* device buffers, cuSOLVER handle and capture stream of newton_loop=while/fixed in L->solve,
 * made at sap_create so that no step allocates */
sapStatus sapg_solveInit(sapgLaunch* L);
void sapg_solveFree(sapgLaunch* L);
#endif

#ifdef __cplusplus
}
#endif

#endif
