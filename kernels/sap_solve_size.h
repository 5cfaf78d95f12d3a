/* Per-world scratch size of the SAP solve, shared by the data table (host/data_fields.h)
 * and the solver that carves it (kernels/sap_world_t.h, sapw_carve). No dependencies. */
#ifndef SAPSIM_SAP_SOLVE_SIZE_H
#define SAPSIM_SAP_SOLVE_SIZE_H

/* scalar constraints per world at most: PD drives + both sides of joint and tendon
 * limits (counted at load, host/model_load.c) */
#define SAP_SOLVE_NS(m) ((m)->nsolve_rows)

/* fp64 words per world: J (3c x nv), S (ns x nv), H (nv x nv), L (nv x (nv + 1)),
 * 8 vectors (nv), cone parameters (c x 6), box parameters (ns x 4),
 * vc, dvc, gamma (3 x (3c + ns)), G (9c + ns) */
#define SAP_SOLVE_NWORK_(nv, c, ns) \
  ((nv) * (3 * (c) + (ns) + 2 * (nv) + 9) + 24 * (c) + 8 * (ns))
#define SAP_SOLVE_NWORK(m, c) SAP_SOLVE_NWORK_((m)->nv, (c), SAP_SOLVE_NS(m))

#endif
