/* The step's stages, in order, in one table (DESIGN.md §2):
 *   clear flags -> kinematics -> collision -> free motion -> solve -> acceleration sensors
 *   -> body outputs (option body_outputs) -> integrate -> position/velocity sensors
 * Both orchestrators walk it: the CPU's (host/step.c step_world: every stage of one world, the
 * worlds over OpenMP threads) and the GPU's (host/backend_cuda.c sapb_stepGPU: one launch group
 * per stage over every world). Each row names its CPU driver for one world, its GPU launcher for
 * every world, and the sapTimers slot its time goes to. A stage that does not apply (collision
 * and solve without contacts, sensors in a model without them) returns at once from both. */
#ifndef SAPSIM_HOST_STAGES_H
#define SAPSIM_HOST_STAGES_H

#include "sim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* sapTimers slots, in the step's order */
enum { SAPC_TIMER_KINEMATICS, SAPC_TIMER_COLLISION, SAPC_TIMER_FREE_MOTION, SAPC_TIMER_SOLVE, SAPC_TIMER_INTEGRATE,
       SAPC_NTIMER };

typedef struct {
  const char* name;
  int timer;                                /* SAPC_TIMER_*: where the stage's time is counted */
  void (*cpu)(sapSim* s, int w, double h);  /* world w with step h (the retry's substeps differ) */
  sapStatus (*gpu)(sapSim* s);              /* every world, enqueued on the sim's stream; NULL
                                               without CUDA */
} sapcStage;

#define SAPC_NSTAGE 9
extern const sapcStage sapc_stages[SAPC_NSTAGE];

/* the CPU drivers (host/step.c) */
void sapc_stageClear(sapSim* s, int w, double h);
void sapc_stageKinematics(sapSim* s, int w, double h);
void sapc_stageCollision(sapSim* s, int w, double h);
void sapc_stageFreeMotion(sapSim* s, int w, double h);
void sapc_stageSolve(sapSim* s, int w, double h);
void sapc_stageSensorAcc(sapSim* s, int w, double h);
void sapc_stageBodyOutputs(sapSim* s, int w, double h);
void sapc_stageIntegrate(sapSim* s, int w, double h);
void sapc_stageSensorPosVel(sapSim* s, int w, double h);

#ifdef SAP_HAVE_CUDA
/* the GPU launchers (host/backend_cuda.c) */
sapStatus sapb_stageClear(sapSim* s);
sapStatus sapb_stageKinematics(sapSim* s);
sapStatus sapb_stageCollision(sapSim* s);
sapStatus sapb_stageFreeMotion(sapSim* s);
sapStatus sapb_stageSolve(sapSim* s);
sapStatus sapb_stageSensorAcc(sapSim* s);
sapStatus sapb_stageBodyOutputs(sapSim* s);
sapStatus sapb_stageIntegrate(sapSim* s);
sapStatus sapb_stageSensorPosVel(sapSim* s);
#endif

#ifdef __cplusplus
}
#endif

#endif
