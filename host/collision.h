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
 * (2 ncon_max ints, kernels/collision.h sapw_collideWorld), and the GPU's per-pair
 * contact counts. With less, the CPU falls back to the pairs broad phase and the
 * GPU to one thread per world (same results). */
int sapc_collisionScratchBytes(const sapModel* m, int ncon_max);

#endif
