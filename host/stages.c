/* The step's stage table (host/stages.h). */
#include <stddef.h>

#include "stages.h"

#ifdef SAP_HAVE_CUDA
#define GPU(f) f
#else
#define GPU(f) NULL
#endif

const sapcStage sapc_stages[SAPC_NSTAGE] = {
    {"clear_flags", SAPC_TIMER_KINEMATICS, sapc_stageClear, GPU(sapb_stageClear)},
    {"kinematics", SAPC_TIMER_KINEMATICS, sapc_stageKinematics, GPU(sapb_stageKinematics)},
    {"collision", SAPC_TIMER_COLLISION, sapc_stageCollision, GPU(sapb_stageCollision)},
    {"free_motion", SAPC_TIMER_FREE_MOTION, sapc_stageFreeMotion, GPU(sapb_stageFreeMotion)},
    {"solve", SAPC_TIMER_SOLVE, sapc_stageSolve, GPU(sapb_stageSolve)},
    {"sensors_acc", SAPC_TIMER_SOLVE, sapc_stageSensorAcc, GPU(sapb_stageSensorAcc)},
    {"body_outputs", SAPC_TIMER_SOLVE, sapc_stageBodyOutputs, GPU(sapb_stageBodyOutputs)},
    {"integrate", SAPC_TIMER_INTEGRATE, sapc_stageIntegrate, GPU(sapb_stageIntegrate)},
    {"sensors_posvel", SAPC_TIMER_INTEGRATE, sapc_stageSensorPosVel, GPU(sapb_stageSensorPosVel)},
};
