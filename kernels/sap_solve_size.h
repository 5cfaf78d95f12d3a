/* Per-world scratch size of the SAP solve, shared by the data table (host/data_fields.h)
 * and the solver that carves it (kernels/sap_world_t.h, sapw_carve). No dependencies. */
#ifndef SAPSIM_SAP_SOLVE_SIZE_H
#define SAPSIM_SAP_SOLVE_SIZE_H

/* scalar constraints per world at most: PD drives + both sides of joint and tendon
 * limits + dry-friction rows of dofs and tendons + equality rows (counted at load,
 * host/model_load.c) */
#define SAP_SOLVE_NS(m) ((m)->nsolve_rows)

/* entries of one scalar row at most: 1, the longest fixed tendon, or the longest equality
 * row (host/model_load.c) */
#define SAP_SOLVE_NNZ(m) ((m)->nsolve_nnz)

/* doubles of the half-step frames that equality rows are built at under the midpoint rule
 * (sap_solve.h sapw_eqFrames): q_h, body poses (pos, quat, mat, com: 19 per body), joint
 * anchors and axes, tree reference points, motion subspaces; 0 without equalities */
#define SAP_SOLVE_NHALF(m) \
  ((m)->neq > 0 ? (long)(m)->nq + 22L * (m)->nbody + 6L * (m)->njnt + 6L * (m)->nv : 0L)

/* dofs of one contact's two chains at most (the CPU solve's Jacobian row cache, sapw_islandOffsets) */
#define SAP_SOLVE_NCHAIN(m) ((m)->nsolve_chain)

/* rows of one contact: 3, or 4 / 6 when the model has torsional / rolling contacts */
#define SAP_SOLVE_CD(m) ((m)->ncondim > 3 ? (m)->ncondim : 3)

#endif
