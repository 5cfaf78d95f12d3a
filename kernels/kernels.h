/* Per-world math of sapsim, instantiated in fp32 (_f32) and fp64 (_f64).
 * Included by the CPU backend (gcc, C11) and the CUDA kernels (nvcc).
 * Each instance: sap_f32.h / sap_f64.h, template bodies, sap_end.h. */
#ifndef SAPSIM_KERNELS_H
#define SAPSIM_KERNELS_H

#include <stddef.h>

#include "sapsim/data.h"
#include "sapsim/model.h"
#include "sap_real.h"
#include "actuator.h"
#include "bits.h"
#include "pair.h"
#include "tendon.h"
#include "spring.h"

/* a world's contact list as the free motion reads it (the adhesion actuators' transmission,
 * dynamics_t.h sapw_adhesion): the first n slots of the world's sapData.con_* arrays, or n = 0 */
typedef struct sapWorldContacts {
  int n;
  const int* geom;      /* (n x 2) geom ids */
  const double* pos;    /* (n x 6) witness points on geom 0 and geom 1 */
  const double* frame;  /* (n x 9) rows t1, t2, n; n from geom 0 to geom 1 */
  const double* dist;   /* (n)     phi = dist - margin */
} sapWorldContacts;

/* world w's contact list from the last collision */
SAP_HD sapWorldContacts sapw_worldContacts(const sapData* d, int w) {
  size_t c0 = (size_t)w * d->ncon_max;
  sapWorldContacts c = {d->ncon ? d->ncon[w] : 0, d->con_geom + 2 * c0, d->con_pos + 6 * c0,
                        d->con_frame + 9 * c0, d->con_dist + c0};
  return c;
}

/* tree t sleeps in the world whose tree_asleep row is ta (kernels/sleep.h; MuJoCo 4's
 * encoding: >= 0 asleep); ta NULL: no tree sleeps, t < 0: a static body's "tree" */
SAP_HD int sapw_treeSleeps(const int* ta, int t) { return ta && t >= 0 && ta[t] >= 0; }

/* dof tree ranges from the dof parents (MuJoCo's order): lo[j] = the first dof of j's tree (the
 * ancestor without a parent dof), hi[j] one past its last. Returns 0 when a tree's dofs are not
 * contiguous; then every range is [0, nv), one block. The model's dof_Alo / dof_Ahi are these
 * (host/model_load.c), and so are the solve's tree ranges */
SAP_HD int sapw_dofTreeRanges(const int* parent, int nv, int* lo, int* hi) {
  int ok = 1;
  for (int j = 0; j < nv; j++) {
    int p = parent[j];
    lo[j] = p < 0 ? j : lo[p];
    if (p >= 0 && lo[j] != lo[j - 1]) ok = 0;  // a tree's dofs must follow one another
  }
  for (int j = nv - 1; j >= 0; j--) hi[j] = j + 1 < nv && lo[j + 1] == lo[j] ? hi[j + 1] : j + 1;
  if (!ok)
    for (int j = 0; j < nv; j++) lo[j] = 0, hi[j] = nv;
  return ok;
}

/* one world's A = M + armature + h damping by dof tree blocks (sapModel.dof_Alo, dof_Ahi,
 * dof_Aadr; sapData.qA): A[i][j] at A + Aadr[i] + j for j in [Alo, Ahi); A is zero outside.
 * m null or without the layout (the tests' hand-made problems): A dense nv x nv */
SAP_HD int sapw_Alo(const sapModel* m, int i) { return m && m->dof_Aadr ? m->dof_Alo[i] : 0; }
SAP_HD int sapw_Ahi(const sapModel* m, int nv, int i) { return m && m->dof_Aadr ? m->dof_Ahi[i] : nv; }
SAP_HD long sapw_Aoff(const sapModel* m, int nv, int i) { return m && m->dof_Aadr ? m->dof_Aadr[i] : (long)i * nv; }

/* row i of A, indexed by column: sapw_Arow(...)[j] = A[i][j] for j in [Alo(i), Ahi(i)) (the
 * pointer itself lies inside A: Aadr >= 0) */
SAP_HD const double* sapw_Arow(const sapModel* m, const double* A, int nv, int i) {
  return A + sapw_Aoff(m, nv, i);
}

/* A[i][j] (exactly 0 outside i's block) */
SAP_HD double sapw_Aat(const sapModel* m, const double* A, int nv, int i, int j) {
  return j >= sapw_Alo(m, i) && j < sapw_Ahi(m, nv, i) ? A[sapw_Aoff(m, nv, i) + j] : 0.0;
}

/* A[j][j] */
SAP_HD double sapw_Adiag(const sapModel* m, const double* A, int nv, int j) { return A[sapw_Aoff(m, nv, j) + j]; }

/* G(q + hs v) - G(q), the midpoint rule's gravity shift of the free motion (gravity_shift.h,
 * defined after the templates, whose kinematics it calls) */
SAP_HD const double* sapw_gravityShift(const sapModel* m, int pose_fp32, const double* qpos, const double* qvel,
                                       double hs, const double* xpos, const double* xquat, const double* xmat,
                                       const double* xipos, const double* xanchor, const double* xaxis,
                                       double* scratch, const int* ta);
SAP_HD long sapw_gravityShiftDoubles(const sapModel* m);

#include "sap_f32.h"
#include "math_t.h"
#include "sap_cholesky_t.h"
#include "sap_block_t.h"
#include "dynamics_t.h"
#include "sap_end.h"

#include "sap_f64.h"
#include "math_t.h"
#include "sap_cholesky_t.h"
#include "sap_block_t.h"
#include "dynamics_t.h"
#include "sap_end.h"

#include "gravity_shift.h"

#endif
