/* Per-world model view (domain randomization): a world whose parameters were
 * overridden (sap_setParam, host/world_params.c) reads each overridden array from
 * its own row of the batch's table (sapModel.world_*), every other array from the
 * shared model. Worlds without overrides use the model itself: the view costs them
 * one load and a branch, and no copy. The CPU drivers and the CUDA kernels of the
 * stages that read these arrays (free motion, collision's contact material, solve)
 * take the same view, so both backends see the same per-world values.
 * Pattern after MuJoCo Warp's batched model fields (per-world leading dimension on
 * the randomized fields only), here as an indirection on the shared model. */
#ifndef SAPSIM_KERNELS_WORLD_VIEW_H
#define SAPSIM_KERNELS_WORLD_VIEW_H

#include <stddef.h>

#include "sapsim/model.h"
#include "sap_real.h"

/* X(array, bit, elements per world): the per-world tables the view redirects;
 * gravity (a vector inside sapModel, SAP_WO_GRAVITY) is copied separately */
#define SAP_WORLD_TABLES(X, m)                                   \
  X(body_mass, SAP_WO_BODY_MASS, (m)->nbody)                     \
  X(body_inertia, SAP_WO_BODY_INERTIA, (m)->nbody * 3)           \
  X(geom_k, SAP_WO_GEOM_K, (m)->ngeom)                           \
  X(dof_damping, SAP_WO_DOF_DAMPING, (m)->nv)                    \
  X(dof_armature, SAP_WO_DOF_ARMATURE, (m)->nv)                  \
  X(dof_frictionloss, SAP_WO_DOF_FRICTIONLOSS, (m)->nv)          \
  X(actuator_gain, SAP_WO_ACTUATOR_GAIN, (m)->nu)                \
  X(actuator_bias, SAP_WO_ACTUATOR_BIAS, (m)->nu)                \
  X(actuator_kp, SAP_WO_ACTUATOR_KP, (m)->nu)                    \
  X(actuator_kv, SAP_WO_ACTUATOR_KV, (m)->nu)                    \
  X(pair_mu, SAP_WO_PAIRS, (m)->npair_max)                       \
  X(pair_torsion, SAP_WO_PAIRS, (m)->npair_max)                  \
  X(pair_rolling, SAP_WO_PAIRS, (m)->npair_max)                  \
  X(pair_k, SAP_WO_PAIRS, (m)->npair_max)                        \
  X(pair_taud, SAP_WO_PAIRS, (m)->npair_max)

/* point m's overridden arrays at world w's rows (in place) */
SAP_HD void sapw_worldApply(sapModel* m, int w) {
  unsigned bits = m->world_override ? m->world_override[w] : 0u;
  if (!bits) return;
  size_t row = (size_t)w;
#define SAP_VIEW_ROW(name, bit, count) \
  if (bits & (bit)) m->name = m->world_##name + row * (size_t)(count);
  SAP_WORLD_TABLES(SAP_VIEW_ROW, m)
#undef SAP_VIEW_ROW
  if (bits & SAP_WO_GRAVITY)
    for (int k = 0; k < 3; k++) m->gravity[k] = m->world_gravity[3 * row + k];
}

/* the model world w sees: m itself when w has no override, else *tmp, a copy of m whose
 * overridden arrays point at w's rows. The CPU drivers and the CUDA kernels both take it;
 * a kernel's m is a __grid_constant__ parameter, so worlds without overrides read the
 * parameter bank and only an overriding world copies the model to its local memory */
SAP_HD const sapModel* sapw_worldView(const sapModel* m, int w, sapModel* tmp) {
  if (!m->world_override || !m->world_override[w]) return m;
  *tmp = *m;
  sapw_worldApply(tmp, w);
  return tmp;
}

#endif
