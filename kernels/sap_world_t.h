/* Assembly of one world's SAP problem from the model and the stage outputs, and the solve
 * (template body in the contact objective precision; include via sap_solve.h): contact
 * Jacobians (witness_point / contact_midpoint), weights (body_inertia / diag_delassus in the
 * weight precision), cone parameters, PD drives of position/velocity actuators, joint and
 * fixed-tendon limits, participation, warm start; then Newton. Seed 002; sapwarp_spec.md
 * §3-§6; drake_sap_spec.md §2-§5. Reference version: one thread per world. */

/* J3 rows r += sign * frame_r . (lin_i + ang_i x (p - cref_b)) for the dofs i of b's chain */
SAP_HD void SAPT(sapw_pointJacobian)(const sapModel* m, const sapData* d, int w, int b, const double* p,
                                     const double* frame, double sign, double* J3) {
  int nv = m->nv;
  const double* cref = d->cref + ((long)w * m->nbody + b) * 3;
  double x[3] = {p[0] - cref[0], p[1] - cref[1], p[2] - cref[2]};
  for (int i = sapw_bodyLastDof(m, b); i >= 0; i = m->dof_parentid[i]) {
    const double* cd = d->cdof + ((long)w * nv + i) * 6;  // [ang; lin]
    double u[3] = {cd[3] + cd[1] * x[2] - cd[2] * x[1], cd[4] + cd[2] * x[0] - cd[0] * x[2],
                   cd[5] + cd[0] * x[1] - cd[1] * x[0]};
    for (int r = 0; r < 3; r++)
      J3[r * nv + i] += sign * (frame[3 * r] * u[0] + frame[3 * r + 1] * u[1] + frame[3 * r + 2] * u[2]);
  }
}

/* contact i: Jacobian rows (vc = R_WC' (V1 - V0)), weight w and cone parameters */
SAP_HD void SAPT(sapw_buildContact)(const sapModel* m, const sapData* d, int w, int i,
                                    const sapSolveParams* prm, double* J3, SAP_REAL* cpar) {
  int nv = m->nv;
  long ci = (long)w * d->ncon_max + i;
  int g0 = d->con_geom[2 * ci], g1 = d->con_geom[2 * ci + 1];
  int b0 = m->geom_bodyid[g0], b1 = m->geom_bodyid[g1];
  const double* frame = d->con_frame + 9 * ci;
  const double* x0 = d->con_pos + 6 * ci;
  const double* x1 = x0 + 3;
  // velocity points: the witnesses, or the stiffness-weighted point pC = a0 x0 + a1 x1
  double pc[3];
  const double *p0 = x0, *p1 = x1;
  if (prm->contact_point == SAP_POINT_MIDPOINT) {
    double a0 = sapw_midpointAlpha0(m->geom_k[g0], m->geom_k[g1], prm->geom_k_default);
    for (int k = 0; k < 3; k++) pc[k] = a0 * x0[k] + (1 - a0) * x1[k];
    p0 = p1 = pc;
  }
  for (int k = 0; k < 3 * nv; k++) J3[k] = 0;
  SAPT(sapw_pointJacobian)(m, d, w, b1, p1, frame, 1, J3);
  SAPT(sapw_pointJacobian)(m, d, w, b0, p0, frame, -1, J3);
  // weight (the witnesses always, sapwarp §3.5)
  double wc;
  const double* A = d->qA + (long)w * nv * nv;
  int dyn0 = sapw_bodyLastDof(m, b0) >= 0, dyn1 = sapw_bodyLastDof(m, b1) >= 0;
  if (prm->weight_mode == SAP_WEIGHT_DIAG_DELASSUS)
    wc = prm->weight_fp32 ? sapw_weightDelassus_f32(J3, A, nv) : sapw_weightDelassus_f64(J3, A, nv);
  else if (prm->weight_fp32)
    wc = sapw_weightBody_f32(m, d, w, b0, dyn0, x0, b1, dyn1, x1, frame);
  else
    wc = sapw_weightBody_f64(m, d, w, b0, dyn0, x0, b1, dyn1, x1, frame);
  SAPT(sapw_coneSetup)((SAP_REAL)wc, (SAP_REAL)d->con_k[ci], (SAP_REAL)d->con_taud[ci],
                       (SAP_REAL)d->con_mu[ci], (SAP_REAL)d->con_dist[ci], (SAP_REAL)prm->h,
                       (SAP_REAL)prm->beta, (SAP_REAL)prm->sigma, cpar);
}

/* delassus estimate of one scalar row: w = sum_j s_j^2 / A_jj (drake §1.3 with n_i = 1) */
SAP_HD SAP_REAL SAPT(sapw_rowDelassus)(const double* s, const double* A, int nv) {
  SAP_REAL wv = 0;
  for (int j = 0; j < nv; j++) {
    if (s[j] == 0) continue;
    SAP_REAL a = (SAP_REAL)A[j * nv + j];
    wv += (SAP_REAL)(s[j] * s[j]) / (a > (SAP_REAL)1e-12 ? a : (SAP_REAL)1e-12);
  }
  return wv;
}

/* PD drives of position/velocity actuators (drake §3.1): vc = gear * transmission . v,
 * force y = kp (ctrl - len) + kv (0 - vc) (position) or kv (ctrl - vc) (velocity),
 * clamped to forcerange when forcelimited. Returns the number of rows written. */
SAP_HD int SAPT(sapw_buildDrives)(const sapModel* m, const sapData* d, int w, const sapSolveParams* prm,
                                  double* S, SAP_REAL* spar) {
  int nv = m->nv, ns = 0;
  const double* qpos = d->qpos + (long)w * m->nq;
  const double* A = d->qA + (long)w * nv * nv;
  SAP_REAL h = (SAP_REAL)prm->h;
  for (int u = 0; u < m->nu; u++) {
    int kind = m->actuator_kind[u];
    if (kind != SAP_ACT_POSITION && kind != SAP_ACT_VELOCITY) continue;
    double* row = S + (long)ns * nv;
    for (int j = 0; j < nv; j++) row[j] = 0;
    int ok = 1;
    double gear = m->actuator_gear[u], len;
    if (m->actuator_trntype[u] == SAP_TRN_TENDON) len = sapw_tendonRow(m, qpos, m->actuator_trnid[u], gear, row, &ok);
    else len = sapw_jointRow(m, qpos, m->actuator_trnid[u], gear, row, &ok);
    if (!ok) continue;
    double ctrl = d->ctrl[(long)w * m->nu + u];
    if (m->actuator_ctrllimited[u]) {
      const double* cr = m->actuator_ctrlrange + 2 * u;
      ctrl = ctrl < cr[0] ? cr[0] : (ctrl > cr[1] ? cr[1] : ctrl);
    }
    SAP_REAL kp = kind == SAP_ACT_POSITION ? (SAP_REAL)m->actuator_kp[u] : 0;
    SAP_REAL kd = (SAP_REAL)m->actuator_kv[u];
    SAP_REAL qd = kind == SAP_ACT_POSITION ? (SAP_REAL)ctrl : (SAP_REAL)len;
    SAP_REAL vd = kind == SAP_ACT_VELOCITY ? (SAP_REAL)ctrl : 0;
    SAP_REAL flo = -(SAP_REAL)INFINITY, fhi = (SAP_REAL)INFINITY;
    if (m->actuator_forcelimited[u]) {
      flo = (SAP_REAL)m->actuator_forcerange[2 * u];
      fhi = (SAP_REAL)m->actuator_forcerange[2 * u + 1];
    }
    SAPT(sapw_pdClipGains)(h, SAPT(sapw_rowDelassus)(row, A, nv), &kp, &kd);
    ns += SAPT(sapw_pdSetup)(h, kp, kd, (SAP_REAL)len, qd, vd, 0, flo, fhi, spar + SAP_SPAR * ns);
  }
  return ns;
}

/* one side of a limit on vc = row . v with gap g: included within the window
 * g <= 2 h max(|row . v0|, |row . v*|) (drake §3.2); k = 1e12, taud = h, beta = 0.1.
 * Returns 1 when the row was kept. */
SAP_HD int SAPT(sapw_limitSide)(const sapModel* m, const sapData* d, int w, const sapSolveParams* prm,
                                double g, double* row, SAP_REAL* par) {
  int nv = m->nv;
  const double* v0 = d->qvel + (long)w * nv;
  const double* vs = d->vstar + (long)w * nv;
  double a = 0, b = 0;
  for (int j = 0; j < nv; j++) { a += row[j] * v0[j]; b += row[j] * vs[j]; }
  double dq = prm->h * (fabs(a) > fabs(b) ? fabs(a) : fabs(b));
  if (!(g <= SAP_LIMIT_WINDOW * dq)) return 0;
  SAP_REAL h = (SAP_REAL)prm->h;
  SAPT(sapw_limitSetup)(h, (SAP_REAL)g, SAPT(sapw_rowDelassus)(row, d->qA + (long)w * nv * nv, nv),
                        (SAP_REAL)SAP_LIMIT_K, h, (SAP_REAL)SAP_LIMIT_BETA, par);
  return 1;
}

/* both sides of a limit on the value x = row . q in [lo, hi]: lower row +row with gap x - lo,
 * upper row -row with gap hi - x. S holds +row and room for a second row; returns rows kept */
SAP_HD int SAPT(sapw_limitPair)(const sapModel* m, const sapData* d, int w, const sapSolveParams* prm,
                                double x, double lo, double hi, double* S, SAP_REAL* spar) {
  int nv = m->nv;
  double *lo_row = S, *up_row = S + nv;
  for (int j = 0; j < nv; j++) up_row[j] = -lo_row[j];
  int keep_lo = SAPT(sapw_limitSide)(m, d, w, prm, x - lo, lo_row, spar);
  if (!keep_lo) {
    for (int j = 0; j < nv; j++) lo_row[j] = up_row[j];
    up_row = lo_row;
  }
  int keep_up = SAPT(sapw_limitSide)(m, d, w, prm, hi - x, up_row, spar + SAP_SPAR * keep_lo);
  return keep_lo + keep_up;
}

/* joint limits (hinge/slide) and fixed-tendon limits; returns the rows written */
SAP_HD int SAPT(sapw_buildLimits)(const sapModel* m, const sapData* d, int w, const sapSolveParams* prm,
                                  double* S, SAP_REAL* spar) {
  int nv = m->nv, ns = 0;
  const double* qpos = d->qpos + (long)w * m->nq;
  for (int j = 0; j < m->njnt + m->ntendon; j++) {
    int isj = j < m->njnt, id = isj ? j : j - m->njnt;
    if (!(isj ? m->jnt_limited[id] : m->tendon_limited[id])) continue;
    double* row = S + (long)ns * nv;
    for (int k = 0; k < 2 * nv; k++) row[k] = 0;
    int ok = 1;
    double x = isj ? sapw_jointRow(m, qpos, id, 1, row, &ok) : sapw_tendonRow(m, qpos, id, 1, row, &ok);
    if (!ok) continue;
    const double* range = isj ? m->jnt_range + 2 * id : m->tendon_range + 2 * id;
    ns += SAPT(sapw_limitPair)(m, d, w, prm, x, range[0], range[1], row, spar + SAP_SPAR * ns);
  }
  return ns;
}

/* participation (drake §1.1): a dof takes part when some dof of its tree has a non-zero
 * constraint column; dscale = diag(A)^-1/2 there (stopping norms), 0 elsewhere. The warm start
 * is v_n = qvel, the previous step's solution unless the state was edited (sapwarp §6.1);
 * other dofs start at v* and stay there (A is block diagonal by trees). */
SAP_HD void SAPT(sapw_participation)(const sapModel* m, const sapData* d, int w, SAPT(sapProblem)* P) {
  int nv = P->nv, nr = 3 * P->nc;
  const double* qvel = d->qvel + (long)w * nv;
  for (int j = 0; j < nv; j++) {
    int nz = 0;
    for (int i = 0; i < nr && !nz; i++) nz = P->J[(long)i * nv + j] != 0;
    for (int s = 0; s < P->ns && !nz; s++) nz = P->S[(long)s * nv + j] != 0;
    P->jc[j] = (SAP_REAL)nz;  // scratch flag
  }
  for (int j = 0; j < nv; j++) {
    int root = m->body_rootid[m->dof_bodyid[j]], part = 0;
    for (int k = 0; k < nv && !part; k++)
      part = P->jc[k] != 0 && m->body_rootid[m->dof_bodyid[k]] == root;
    double a = P->A[(long)j * nv + j];
    P->dscale[j] = part ? (SAP_REAL)(1 / sqrt(a > 1e-12 ? a : 1e-12)) : 0;
    P->v[j] = part ? (SAP_REAL)qvel[j] : (SAP_REAL)P->vstar[j];
  }
}

/* carve world w's scratch (SAP_SOLVE_NWORK_ fp64 words) into the problem arrays */
SAP_HD void SAPT(sapw_carve)(SAPT(sapProblem)* P, double* work, int nv, int c, int nsmax) {
  double* p = work;
  P->J = p; p += (long)3 * c * nv;
  P->S = p; p += (long)nsmax * nv;
  P->H = (SAP_REAL*)p; p += (long)nv * nv;
  P->L = p; p += (long)nv * (nv + 1);
  SAP_REAL** vec[8] = {&P->v, &P->r, &P->grad, &P->jc, &P->dv, &P->Adv, &P->pstar, &P->dscale};
  for (int k = 0; k < 8; k++) { *vec[k] = (SAP_REAL*)p; p += nv; }
  P->cpar = (SAP_REAL*)p; p += (long)SAP_CPAR * c;
  P->spar = (SAP_REAL*)p; p += (long)SAP_SPAR * nsmax;
  P->vc = (SAP_REAL*)p; p += 3 * c + nsmax;
  P->dvc = (SAP_REAL*)p; p += 3 * c + nsmax;
  P->gam = (SAP_REAL*)p; p += 3 * c + nsmax;
  P->G = (SAP_REAL*)p;
}

/* solve world w: assemble, Newton, write vnext and the diagnostics */
SAP_HD void SAPT(sapw_solveWorld)(const sapModel* m, const sapData* d, int w, const sapSolveParams* prm) {
  int nv = m->nv, cmax = d->ncon_max, nsmax = SAP_SOLVE_NS(m);
  double* vnext = d->vnext + (long)w * nv;
  const double* vstar = d->vstar + (long)w * nv;
  SAPT(sapProblem) P;
  SAPT(sapw_carve)(&P, d->sap_work + (long)w * SAP_SOLVE_NWORK_(nv, cmax, nsmax), nv, cmax, nsmax);
  P.nv = nv;
  P.A = d->qA + (long)w * nv * nv;
  P.vstar = vstar;
  P.lin_fp32 = prm->linear_fp32;
  // constraints: contacts, then drives, then limits
  int nc = d->ncon[w] < cmax ? d->ncon[w] : cmax;
  P.nc = nc > 0 ? nc : 0;
  for (int i = 0; i < P.nc; i++)
    SAPT(sapw_buildContact)(m, d, w, i, prm, (double*)P.J + (long)3 * i * nv, P.cpar + SAP_CPAR * i);
  int ns = SAPT(sapw_buildDrives)(m, d, w, prm, (double*)P.S, P.spar);
  ns += SAPT(sapw_buildLimits)(m, d, w, prm, (double*)P.S + (long)ns * nv, P.spar + SAP_SPAR * ns);
  P.ns = ns;
  sapSolveStats st = {0, 0, 0, SAP_WORLD_CONVERGED};
  if (P.nc + P.ns == 0) {
    // no constraints: v = v*
    for (int j = 0; j < nv; j++) vnext[j] = vstar[j];
  } else {
    SAPT(sapw_participation)(m, d, w, &P);
    SAPT(sapw_newton)(&P, prm, &st);
    for (int j = 0; j < nv; j++) vnext[j] = (double)P.v[j];
  }
  d->newton_iter[w] = st.iters;
  d->ls_iter[w] = st.ls_iters;
  d->nfactor[w] = st.nfactor;
  d->world_flags[w] = (d->world_flags[w] & ~(SAP_WORLD_CONVERGED | SAP_WORLD_MAXITER | SAP_WORLD_LSFAIL |
                                            SAP_WORLD_FACTORFAIL)) | st.flags;
}
