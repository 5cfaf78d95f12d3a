/* Collision stage helpers beyond the entry points declared in sim.h
 * (host/collision.c, kernels/collision.cu). */
#ifndef SAPSIM_HOST_COLLISION_H
#define SAPSIM_HOST_COLLISION_H

#include "sim.h"

/* broad phase that sapc_collision runs for this sim: SAP_BROAD_PAIRS or
 * SAP_BROAD_SWEEP (AUTO resolved: sweep when ngeom >= 32 and npair > 8 ngeom) */
int sapc_broadphaseMode(const sapSim* s);

/* per-world scratch bytes the collision stage uses from sapData.scratch:
 * CPU sweep-and-prune (geom intervals + pair bit mask) and the contact list's heap
 * (2 ncon_max ints, kernels/collision.h sapw_collideWorld); with gpu = 1 the GPU's per-pair
 * contact counts, and its one-pass staging (sapw_stageBytes) within the budget below. With
 * less, the CPU falls back to the pairs broad phase and the GPU to counting and redoing the
 * narrow phase, or to one thread per world (same results). */
long sapc_collisionScratchBytes(const sapModel* m, int ncon_max, int gpu);
/* bytes per world the GPU's one-pass staging may add to the scratch (default 1 MiB); a
 * batch created while it is smaller counts and redoes the narrow phase (tests set it) */
extern long sapc_collisionStageBudget;
/* 1 when the GPU's collision stages its contacts (one pass): the staging within the budget
 * and in the scratch */
int sapc_collisionStaged(const sapSim* s);

#endif
