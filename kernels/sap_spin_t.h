/* Torsional and rolling rows of condim 4 and 6 contacts (template body; included by
 * sap_problem_t.h). Rows 3-5 of a contact measure the relative angular velocity
 * w_rel = w1 - w0 in the contact frame: n . w_rel (spin), t1 . w_rel, t2 . w_rel (rolling),
 * as MuJoCo's rows 3-5 (mujoco_semantics.md §1.6); their impulses are pure torques,
 * tau = g_spin n + g_r1 t1 + g_r2 t2 on body 1 and -tau on body 0. A problem of cd rows per
 * contact has rows 3 .. cd - 1 (cd = 4: spin only). Reference version. */

/* frame row (0 t1, 1 t2, 2 n) of the angular row r = 3, 4, 5 (n, t1, t2) */
SAP_HD int SAPT(sapw_spinAxis)(int r) { return r == 3 ? 2 : r - 4; }

/* o[3 ..] = frame rows . (w1 - w0) from the body velocities in P->body6 */
SAP_HD void SAPT(sapw_contactSpin)(const SAPT(sapProblem)* P, int i, SAP_REAL* o) {
  const sapModel* m = P->m;
  const SAP_REAL* V0 = P->body6 + 6 * m->geom_bodyid[P->con_geom[2 * i]];
  const SAP_REAL* V1 = P->body6 + 6 * m->geom_bodyid[P->con_geom[2 * i + 1]];
  SAP_REAL w[3] = {V1[0] - V0[0], V1[1] - V0[1], V1[2] - V0[2]};
  const double* f = P->con_frame + 9 * i;
  for (int r = 3; r < P->cd; r++) {
    const double* a = f + 3 * SAPT(sapw_spinAxis)(r);
    o[r] = (SAP_REAL)a[0] * w[0] + (SAP_REAL)a[1] * w[1] + (SAP_REAL)a[2] * w[2];
  }
}

/* F[0..2] += sign * tau, tau = sum_r g[r] axis_r (r >= 3): the angular impulses of side s */
SAP_HD void SAPT(sapw_spinTorque)(const SAPT(sapProblem)* P, int i, SAP_REAL sign, const SAP_REAL* g, SAP_REAL* F) {
  const double* f = P->con_frame + 9 * i;
  for (int r = 3; r < P->cd; r++) {
    const double* a = f + 3 * SAPT(sapw_spinAxis)(r);
    for (int k = 0; k < 3; k++) F[k] += sign * (SAP_REAL)a[k] * g[r];
  }
}

/* out[r * stride] += sign * axis_r . (angular motion of dof j), r >= 3 */
SAP_HD void SAPT(sapw_dofSpinRows)(const SAPT(sapProblem)* P, int i, int j, SAP_REAL sign, SAP_REAL* out,
                                   int stride) {
  const double* f = P->con_frame + 9 * i;
  const double* om = P->cdof + 6 * j;  // angular part of dof j's motion
  for (int r = 3; r < P->cd; r++) {
    const double* a = f + 3 * SAPT(sapw_spinAxis)(r);
    out[r * stride] += sign * ((SAP_REAL)a[0] * (SAP_REAL)om[0] + (SAP_REAL)a[1] * (SAP_REAL)om[1] +
                               (SAP_REAL)a[2] * (SAP_REAL)om[2]);
  }
}

