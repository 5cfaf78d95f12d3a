/* Assembly of one world's SAP problem from the model and the stage outputs, and the solve
 * (template body in the contact objective precision; include via sap_solve.h): contact
 * Jacobians (witness_point / contact_midpoint), weights (body_inertia / diag_delassus in the
 * weight precision), cone parameters, PD drives of position/velocity actuators, joint and
 * tendon limits, dry friction of dofs and tendons, participation, warm start; then
 * Newton. Seed 002; sapwarp_spec.md §3-§6; drake_sap_spec.md §2-§5. Reference version: one
 * thread per world. */

/* contact i: weight w (from the witnesses always, sapwarp §3.5) and cone parameters */
SAP_HD void SAPT(sapw_buildContact)(const sapModel* m, const sapData* d, int w, int i,
                                    const sapSolveParams* prm, SAPT(sapProblem)* P) {
  long ci = (long)w * d->ncon_max + i;
  int g0 = d->con_geom[2 * ci], g1 = d->con_geom[2 * ci + 1];
  int b0 = m->geom_bodyid[g0], b1 = m->geom_bodyid[g1];
  const double* frame = d->con_frame + 9 * ci;
  const double* x0 = d->con_pos + 6 * ci;
  const double* x1 = x0 + 3;
  double wc;
  if (prm->weight_mode == SAP_WEIGHT_DIAG_DELASSUS) {
    int n = SAPT(sapw_contactRows)(P, i), fp32 = sizeof(SAP_REAL) == 4;
    const double* qpos = d->qpos + (long)w * m->nq;
    wc = prm->weight_fp32 ? sapw_weightDelassus_f32(m, qpos, P->rows, fp32, P->chain, n, P->A, P->nv)
                          : sapw_weightDelassus_f64(m, qpos, P->rows, fp32, P->chain, n, P->A, P->nv);
    SAPT(sapw_clearRows)(P, n);
  } else {
    int dyn0 = sapw_bodyLastDof(m, b0) >= 0, dyn1 = sapw_bodyLastDof(m, b1) >= 0;
    if (prm->weight_fp32)
      wc = sapw_weightBody_f32(m, d, w, b0, dyn0, x0, b1, dyn1, x1, frame);
    else
      wc = sapw_weightBody_f64(m, d, w, b0, dyn0, x0, b1, dyn1, x1, frame);
  }
  SAP_REAL* par = P->cpar + SAP_CPAR_OF(P->cd) * i;
  /* adhesion a (MuJoCo 4's geom / pair adhesion, kernels/pair.h): the cone translated by -a h
   * in impulse, gamma_n = net + a h (MuJoCo's aref += R a, mj_adhesionRef), with the explicit
   * pull -a J_n' of the free motion (sapw_adhesionPull) taking it off again. In the gap band no
   * friction (MuJoCo's dim 1). SAP's convex cone lifts a sliding contact: at the answer
   * vc_n = vhat_n - Rn gamma_n + mu (|vc_t| - Rt |gamma_t|) (the projection's stationarity), so
   * a contact pressed with net force N slides at phi = (h + taud) (mu (|v_t| - Rt |gamma_t|)
   * - Rn N h), above 0 however hard it is pressed. Its surfaces touch (MuJoCo keeps its
   * friction), so the band starts past that lift: phi >= (h + taud) mu |v_t|, v_t the slip at
   * the step's start (sapw_contactSlip); at rest the band is MuJoCo's phi >= 0 */
  double phi = d->con_dist[ci], adh = sapw_contactAdhesion(m, g0, g1, phi), mu = d->con_mu[ci];
  if (adh != 0 && !(phi < 0) &&
      !(phi < (prm->h + d->con_taud[ci]) * mu * sapw_contactSlip(m, d, w, i, P->cref, P->cdof)))
    mu = 0;
  SAPT(sapw_coneSetup)((SAP_REAL)wc, (SAP_REAL)d->con_k[ci], (SAP_REAL)d->con_taud[ci],
                       (SAP_REAL)mu, (SAP_REAL)phi, (SAP_REAL)prm->h,
                       (SAP_REAL)prm->beta, (SAP_REAL)prm->sigma, par);
  if (adh != 0) par[2] += par[1] * (SAP_REAL)(adh * prm->h);  // vhat_n += Rn a h
  // torsion and rolling (condim 4, 6) from the contact's pair: R_k = Rt (mu/mu_k)^2 (sap_cone_t.h)
  int p = P->cd > 3 ? sapw_findPair(m, g0 < g1 ? g0 : g1, g0 < g1 ? g1 : g0) : -1;
  if (p >= 0)
    SAPT(sapw_coneSetupAngular)(m->pair_condim[p], (SAP_REAL)m->pair_torsion[p], (SAP_REAL)m->pair_rolling[p], par);
  else if (P->cd > 3)
    par[10] = 0;
  if (m->nsurfacevel) {
    double vt[3];
    sapw_surfaceTarget(m, d, w, i, vt);
    par[6] = (SAP_REAL)vt[0];
    par[7] = (SAP_REAL)vt[1];
    if (P->cd > 3) par[10] = (SAP_REAL)vt[2];
  }
}

/* delassus estimate of one scalar row: w = sum_j s_j^2 / A_jj (drake §1.3 with n_i = 1; A by
 * m's tree blocks, sapw_Adiag) */
SAP_HD SAP_REAL SAPT(sapw_rowDelassus)(const sapRow* row, const sapModel* m, const double* A, int nv) {
  SAP_REAL wv = 0;
  for (int k = 0; k < row->n; k++) {
    int j = row->idx[k];
    SAP_REAL a = (SAP_REAL)sapw_Adiag(m, A, nv, j);
    wv += (SAP_REAL)(row->val[k] * row->val[k]) / (a > (SAP_REAL)1e-12 ? a : (SAP_REAL)1e-12);
  }
  return wv;
}

/* PD drives of position/velocity actuators (drake §3.1): vc = gear * transmission . v,
 * target t = gain x + bias, force y = kp (t - len) + kv (0 - vc) (position) or kv (t - vc)
 * (velocity), x the clamped ctrl or, for a servo with activation dynamics (e.g.
 * <intvelocity>), its activation (the next one when actearly; kernels/actuator.h): the drive
 * stays implicit with a target that follows act, which MuJoCo's explicit law
 * kp (gain act + b0 - l) - kv l' reaches as h -> 0,
 * clamped to forcerange when forcelimited. Rows go to P->sidx/sval from row 0; returns
 * the number written. */
SAP_HD int SAPT(sapw_buildDrives)(const sapModel* m, const sapData* d, int w, const sapSolveParams* prm,
                                  SAPT(sapProblem)* P) {
  int nv = m->nv, ns = 0;
  const double* qpos = d->qpos + (long)w * m->nq;
  SAP_REAL h = (SAP_REAL)prm->h;
  for (int u = 0; u < m->nu; u++) {
    int kind = m->actuator_kind[u];
    if (!sapa_isDrive(m, u)) continue;
    sapRow row = sapw_row(P->sidx, P->sval, ns, P->snz);
    int ok = 1;
    double gear = m->actuator_gear[u], len;
    const double *xpos = d->xpos + (long)w * 3 * m->nbody, *xmat = d->xmat + (long)w * 9 * m->nbody;
    if (m->actuator_trntype[u] == SAP_TRN_TENDON) {
      len = sapw_anyTendonRow(m, qpos, xpos, xmat, P->cref, P->cdof, m->actuator_trnid[u], gear, &row, &ok);
    } else if (m->actuator_trntype[u] == SAP_TRN_SITE) {  // a refsite (Cartesian) servo: the moment
      sapTenFrames_f64 fr = {xpos, xmat, P->cref, P->cdof};
      sapw_refsite_f64(m, &fr, u, (const double*)0, 0, (double*)0, &len, (double*)0, &row, &ok);
    } else if (m->actuator_trntype[u] == SAP_TRN_SLIDERCRANK) {  // a slider-crank servo: the moment
      sapTenFrames_f64 fr = {xpos, xmat, P->cref, P->cdof};
      sapw_sliderCrank_f64(m, &fr, u, (const double*)0, 0, (double*)0, &len, (double*)0, &row, &ok);
    } else if (sapa_jointDofs(m, m->actuator_trnid[u]) > 1) {  // a ball or free joint: its moment
      int j = m->actuator_trnid[u];
      double vel;
      sapw_actuatorLength_f64(m, qpos, d->qvel + (long)w * nv, (const sapTenFrames_f64*)0, u, &len, &vel);
      double gj[6];
      sapa_jointMoment(m, u, qpos, gj);
      for (int k = 0; k < sapa_jointDofs(m, j); k++)
        if (gj[k] != 0) sapw_rowAdd(&row, m->jnt_dofadr[j] + k, gj[k], &ok);
    } else {
      len = sapw_jointRow(m, qpos, m->actuator_trnid[u], gear, &row, &ok);
    }
    if (!ok) continue;
    double x = sapa_input(m, u, prm->h, d->ctrl_in + (long)w * m->nu, d->act + (long)w * m->na);
    x = sapa_wrapSetpoint(m, u, x, len);  // on a ball joint or a rotational refsite: nearest the length
    double t = m->actuator_gain[u] * x + m->actuator_bias[u];  // target length or velocity
    SAP_REAL kp = kind == SAP_ACT_POSITION ? (SAP_REAL)m->actuator_kp[u] : 0;
    SAP_REAL kd = (SAP_REAL)m->actuator_kv[u];
    SAP_REAL qd = kind == SAP_ACT_POSITION ? (SAP_REAL)t : (SAP_REAL)len;
    SAP_REAL vd = kind == SAP_ACT_VELOCITY ? (SAP_REAL)t : 0;
    SAP_REAL flo = -(SAP_REAL)INFINITY, fhi = (SAP_REAL)INFINITY;
    if (m->actuator_forcelimited[u]) {
      flo = (SAP_REAL)m->actuator_forcerange[2 * u];
      fhi = (SAP_REAL)m->actuator_forcerange[2 * u + 1];
    }
    SAPT(sapw_pdClipGains)(h, SAPT(sapw_rowDelassus)(&row, P->m, P->A, nv), &kp, &kd);
    P->stag[ns] = SAP_ROW_TAG(SAP_ROW_DRIVE, u);
    ns += SAPT(sapw_pdSetup)(h, kp, kd, (SAP_REAL)len, qd, vd, 0, flo, fhi, P->spar + SAP_SPAR * ns);
  }
  return ns;
}

/* one side of a limit on vc = row . v with gap g: included within the window
 * g <= 2 h max(|row . v0|, |row . v*|) (drake §3.2); k = 1e12, taud = h, beta = 0.1.
 * Returns 1 when the row was kept. */
SAP_HD int SAPT(sapw_limitSide)(const sapModel* m, const sapData* d, int w, const sapSolveParams* prm,
                                double g, const sapRow* row, SAP_REAL* par) {
  int nv = m->nv;
  double a = sapw_rowDotSparse(row, d->qvel + (long)w * nv);
  double b = sapw_rowDotSparse(row, d->vstar + (long)w * nv);
  double dq = prm->h * (fabs(a) > fabs(b) ? fabs(a) : fabs(b));
  if (!(g <= SAP_LIMIT_WINDOW * dq)) return 0;
  SAP_REAL h = (SAP_REAL)prm->h;
  SAPT(sapw_limitSetup)(h, (SAP_REAL)g, SAPT(sapw_rowDelassus)(row, m, d->qA + (long)w * m->nA, nv),
                        (SAP_REAL)SAP_LIMIT_K, h, (SAP_REAL)SAP_LIMIT_BETA, par);
  return 1;
}

/* both sides of limit id (sapw_buildLimits' numbering) on the value x = row . q in [lo, hi],
 * the row built in slot ns: the lower row +row with gap x - lo, the upper row -row with gap
 * hi - x; the kept rows end up in slots ns, ns + 1 (2 slots per limit are counted at load),
 * tagged SAP_ROW_LIMIT_LO / _HI. Returns the rows kept */
SAP_HD int SAPT(sapw_limitPair)(const sapModel* m, const sapData* d, int w, const sapSolveParams* prm, int id,
                                double x, double lo, double hi, SAPT(sapProblem)* P, int ns) {
  sapRow lower = sapw_rowAt(P->sidx, P->sval, ns, P->snz);
  int keep_lo = SAPT(sapw_limitSide)(m, d, w, prm, x - lo, &lower, P->spar + SAP_SPAR * ns);
  sapRow upper = {P->sidx + (long)(ns + keep_lo) * P->snz, P->sval + (long)(ns + keep_lo) * P->snz, 0, P->snz};
  for (int k = 0; k < lower.n; k++) {  // in place when the lower side was dropped
    upper.idx[k] = lower.idx[k];
    upper.val[k] = -lower.val[k];
  }
  upper.n = lower.n;
  if (upper.n < upper.cap) upper.idx[upper.n] = -1;
  int keep_up = SAPT(sapw_limitSide)(m, d, w, prm, hi - x, &upper, P->spar + SAP_SPAR * (ns + keep_lo));
  P->stag[ns] = SAP_ROW_TAG(SAP_ROW_LIMIT_LO, id);
  if (keep_up) P->stag[ns + keep_lo] = SAP_ROW_TAG(SAP_ROW_LIMIT_HI, id);
  return keep_lo + keep_up;
}

/* joint limits (hinge/slide: two sides; ball: one cone row) and tendon limits (fixed and
 * spatial) from row ns, each end moved inward by the limit's margin; returns the rows written */
SAP_HD int SAPT(sapw_buildLimits)(const sapModel* m, const sapData* d, int w, const sapSolveParams* prm,
                                  SAPT(sapProblem)* P, int ns) {
  int ns0 = ns;
  const double* qpos = d->qpos + (long)w * m->nq;
  for (int j = 0; j < m->njnt + m->ntendon; j++) {
    int isj = j < m->njnt, id = isj ? j : j - m->njnt;
    if (!(isj ? m->jnt_limited[id] : m->tendon_limited[id])) continue;
    sapRow row = sapw_row(P->sidx, P->sval, ns, P->snz);
    int ok = 1;
    if (isj && m->jnt_type[id] == SAP_JNT_BALL) {
      /* a ball joint's cone (MuJoCo's rule, linearized at the step's start): the angle at most
       * max(range) - margin, row -axis with gap dist - margin (sapw_ballLimit), the upper side's
       * tag */
      double dist = sapw_ballLimitRow(m, qpos, id, &row, &ok);
      if (ok && SAPT(sapw_limitSide)(m, d, w, prm, dist - m->jnt_margin[id], &row, P->spar + SAP_SPAR * ns))
        P->stag[ns++] = SAP_ROW_TAG(SAP_ROW_LIMIT_HI, j);
      continue;
    }
    double x = isj ? sapw_jointRow(m, qpos, id, 1, &row, &ok)
                   : sapw_anyTendonRow(m, qpos, d->xpos + (long)w * 3 * m->nbody, d->xmat + (long)w * 9 * m->nbody,
                                       P->cref, P->cdof, id, 1, &row, &ok);
    if (!ok) continue;
    const double* range = isj ? m->jnt_range + 2 * id : m->tendon_range + 2 * id;
    /* a margin moves both ends inward: MuJoCo's reference acceleration drives the distance
     * to the limit towards the margin (aref = -b v - k imp (pos - margin)) */
    double margin = isj ? m->jnt_margin[id] : m->tendon_margin[id];
    ns += SAPT(sapw_limitPair)(m, d, w, prm, j, x, range[0] + margin, range[1] - margin, P, ns);
  }
  return ns - ns0;
}

/* dry friction (frictionloss) from row ns: a unit row per dof with dof_frictionloss > 0, then
 * the tendon's row (fixed or spatial) per tendon with tendon_frictionloss > 0 (MuJoCo's order,
 * mj_instantiateFriction); box h [-f, f] with R = sigma w (sapw_frictionSetup), w the row's
 * Delassus estimate. Returns the rows written. */
SAP_HD int SAPT(sapw_buildFriction)(const sapModel* m, const sapData* d, int w, const sapSolveParams* prm,
                                    SAPT(sapProblem)* P, int ns) {
  int ns0 = ns, nv = m->nv;
  const double* qpos = d->qpos + (long)w * m->nq;
  SAP_REAL h = (SAP_REAL)prm->h;
  for (int j = 0; j < nv + m->ntendon; j++) {
    int isdof = j < nv, id = isdof ? j : j - nv;
    double f = isdof ? m->dof_frictionloss[id] : m->tendon_frictionloss[id];
    if (!(f > 0)) continue;
    sapRow row = sapw_row(P->sidx, P->sval, ns, P->snz);
    int ok = 1;
    if (isdof) sapw_dofRow(id, &row);
    else sapw_anyTendonRow(m, qpos, d->xpos + (long)w * 3 * m->nbody, d->xmat + (long)w * 9 * m->nbody, P->cref,
                           P->cdof, id, 1, &row, &ok);
    if (!ok) continue;
    SAPT(sapw_frictionSetup)(h, SAPT(sapw_rowDelassus)(&row, P->m, P->A, nv), (SAP_REAL)prm->sigma, (SAP_REAL)f,
                             P->spar + SAP_SPAR * ns);
    P->stag[ns++] = SAP_ROW_TAG(SAP_ROW_FRICTION, j);
  }
  return ns - ns0;
}

/* equality constraints as holonomic rows (sapw_buildEquality) */
#include "sap_equality_t.h"

/* the rows of the ns built whose dofs all sleep leave the problem (kernels/sleep.h: a sleeping
 * tree is in no island, its velocity stays 0); the others keep their order. Returns the rows
 * kept. */
SAP_HD int SAPT(sapw_sleepRows)(const sapModel* m, const sapData* d, int w, SAPT(sapProblem)* P, int ns) {
  int k = 0, snz = P->snz;
  for (int s = 0; s < ns; s++) {
    const int* idx = P->sidx + (long)s * snz;
    int awake = idx[0] < 0;  // a row without dofs stays
    for (int a = 0; a < snz && idx[a] >= 0; a++) awake |= !sapw_dofAsleep(m, d, w, idx[a]);
    if (!awake) continue;
    if (k != s) {
      for (int a = 0; a < snz; a++) {
        P->sidx[(long)k * snz + a] = idx[a];
        P->sval[(long)k * snz + a] = P->sval[(long)s * snz + a];
      }
      for (int a = 0; a < SAP_SPAR; a++) P->spar[SAP_SPAR * k + a] = P->spar[SAP_SPAR * s + a];
      P->stag[k] = P->stag[s];
    }
    k++;
  }
  return k;
}

/* every scalar row of world w after the contacts, in the order the tags document: drives,
 * limits, dry friction, equalities; sets P->ns and ends the tags with -1 */
SAP_HD int SAPT(sapw_buildRows)(const sapModel* m, const sapData* d, int w, const sapSolveParams* prm,
                                SAPT(sapProblem)* P) {
  int ns = SAPT(sapw_buildDrives)(m, d, w, prm, P);
  ns += SAPT(sapw_buildLimits)(m, d, w, prm, P, ns);
  ns += SAPT(sapw_buildFriction)(m, d, w, prm, P, ns);
  ns += SAPT(sapw_buildEquality)(m, d, w, prm, P, ns);
  if (m->sleep) ns = SAPT(sapw_sleepRows)(m, d, w, P, ns);
  if (ns < SAP_SOLVE_NS(m)) P->stag[ns] = -1;
  P->ns = ns;
  return ns;
}

/* participation (drake §1.1): a dof takes part when some dof of its tree is in a constraint
 * (the chains of a contact's bodies, a scalar row's dofs); dscale = diag(A)^-1/2 there (stopping
 * norms), 0 elsewhere. The warm start is v_n = qvel, the previous step's solution unless the
 * state was edited (sapwarp §6.1); other dofs start at v* and stay there (A is block diagonal by
 * trees), with zeros in the solve's vectors, and the one-lane solve's loops skip them and their
 * trees' bodies (P->adof, P->abody). */
SAP_HD void SAPT(sapw_participation)(const sapModel* m, const sapData* d, int w, SAPT(sapProblem)* P) {
  int nv = P->nv;
  const double* qvel = d->qvel + (long)w * nv;
  SAP_REAL* flag = P->jc;  // scratch flag per dof
  for (int j = 0; j < nv; j++) flag[j] = 0;
  for (int i = 0; i < P->nc; i++)
    for (int s = 0; s < 2; s++) {
      int b = m->geom_bodyid[P->con_geom[2 * i + s]];
      for (int j = sapw_bodyLastDof(m, b); j >= 0; j = m->dof_parentid[j]) flag[j] = 1;
    }
  for (int s = 0; s < P->ns; s++)
    for (int k = s * P->snz; k < (s + 1) * P->snz && P->sidx[k] >= 0; k++)
      if (P->sval[k] != 0) flag[P->sidx[k]] = 1;
  SAP_REAL* tree = P->body6;  // scratch flag per root body: a dof of its tree is flagged
  for (int b = 0; b < m->nbody; b++) tree[b] = 0;
  for (int j = 0; j < nv; j++)
    if (flag[j] != 0) tree[m->body_rootid[m->dof_bodyid[j]]] = 1;
  P->nadof = P->nabody = 0;
  for (int j = 0; j < nv; j++) {
    int part = tree[m->body_rootid[m->dof_bodyid[j]]] != 0;
    double a = P->A[P->Aadr[j] + j];
    P->dscale[j] = part ? (SAP_REAL)(1 / sqrt(a > 1e-12 ? a : 1e-12)) : 0;
    P->v[j] = part ? (SAP_REAL)qvel[j] : (SAP_REAL)P->vstar[j];
    if (part) P->adof[P->nadof++] = j;
    else P->r[j] = P->grad[j] = P->jc[j] = P->dv[j] = P->Adv[j] = P->pstar[j] = 0;
  }
  for (int b = 0; b < m->nbody; b++)
    if (m->body_treeid[b] < 0 || tree[m->body_rootid[b]] != 0) P->abody[P->nabody++] = b;
  if (P->nadof == nv) P->nadof = -1;  // all of them: the loops index directly
  if (P->nabody == m->nbody) P->nabody = -1;
}

/* world w's problem over its scratch (sapData.scratch, the solve's share of the stage-local
 * scratch, sapw_problemBytes); the caller zeroes P->rows (cd nv) */
SAP_HD void SAPT(sapw_worldProblem)(const sapModel* m, const sapData* d, int w, const sapSolveParams* prm,
                                    SAPT(sapProblem)* P) {
  int nv = m->nv, cmax = d->ncon_max;
  SAPT(sapw_carve)(P, d->scratch + (long)w * d->nscratch, nv, m->nbody, cmax, SAP_SOLVE_CD(m), SAP_SOLVE_NS(m),
                   SAP_SOLVE_NNZ(m), prm->linear_fp32 ? 4 : 8, SAP_SOLVE_NHALF(m), !prm->hl_grow);
  P->hl_grow = prm->hl_grow;  // H and L by the islands' sizes (CPU), else in the carve
  P->hl_ctx = prm->hl_ctx;
  P->A = d->qA + (long)w * m->nA;
  P->Aadr = m->dof_Aadr;
  P->vstar = d->vstar + (long)w * nv;
  P->vprev = d->vnext + (long)w * nv;
  P->lin_fp32 = prm->linear_fp32;
  P->m = m;
  P->cdof = d->cdof + (long)w * nv * 6;
  P->cref = d->cref + (long)w * m->nbody * 3;
  P->con_geom = d->con_geom + (long)w * cmax * 2;
  P->con_pos = d->con_pos + (long)w * cmax * 6;
  P->con_frame = d->con_frame + (long)w * cmax * 9;
  P->midpoint = prm->contact_point == SAP_POINT_MIDPOINT;
  P->kdef = prm->geom_k_default;
  int nc = d->ncon[w] < cmax ? d->ncon[w] : cmax;
  P->nc = nc > 0 ? nc : 0;
}

/* Contacts dropped by the capacity (collision.h sapw_pushContact keeps the deepest) that are
 * idle at the answer x cost nothing: a contact has no impulse in cone region 0,
 * vn >= vhat_n + mu |vt| with vhat_n = -phi/(h + taud) (sap_cone_t.h; up to SAP's 1e-7 soft-norm
 * term). If S bounds the relative speed of two geoms at any point within their inflated
 * bounding spheres, vn >= -S and |vt| <= S, so every dropped contact is idle when
 *   S <= min phi/(1 + mu) / (h + max taud)       (over the dropped contacts, sapData.con_drop).
 * S is the sum of the two largest speed bounds s_g = |v(x_g)| + |omega| (rbound_g + 2 detect_g)
 * of the geoms on moving bodies, from the body velocities of x (a moving plane or heightfield
 * has no bound: not shown), each plus its surface velocity's bound (sapw_surfaceSpeedBound, which
 * static geoms contribute alone): the friction target |vhat_t| is then within S as well. Returns 1 when shown; the caller clears the overflow flag then, so
 * SAP_WORLD_CONTACT_OVERFLOW means "a dropped contact may push". x goes through P->dv. */
SAP_HD int SAPT(sapw_droppedIdle)(const sapModel* m, const sapData* d, int w, const SAPT(sapProblem)* P, const double* x,
                                  double h) {
  const double* drop = d->con_drop + 2 * w;
  double q = drop[0] / (h + drop[1]);
  if (!(q > 0)) return 0;
  for (int j = 0; j < P->nv; j++) P->dv[j] = (SAP_REAL)x[j];
  for (int b = 0; b < m->nbody; b++)
    for (int k = 0; k < 6; k++) SAPT(sapw_bodyVelocity)(P, P->dv, b, k);
  double s1 = 0, s2 = 0;  // the two largest s_g
  for (int g = 0; g < m->ngeom; g++) {
    int b = m->geom_bodyid[g];
    double ss = sapw_surfaceSpeedBound(m, g);  // a surface velocity moves the material too
    if (sapw_bodyLastDof(m, b) < 0) {
      if (ss > s1) { s2 = s1; s1 = ss; }
      else if (ss > s2) s2 = ss;
      continue;
    }
    if (!(m->geom_rbound[g] > 0)) return 0;
    double V[6];  // [omega; v at cref] in double
    for (int k = 0; k < 6; k++) V[k] = (double)P->body6[6 * b + k];
    const double* xg = d->geom_xpos + ((long)w * m->ngeom + g) * 3;
    double r[3], u[3], om = 0, vv = 0;
    for (int k = 0; k < 3; k++) r[k] = xg[k] - P->cref[3 * b + k];
    u[0] = V[3] + V[1] * r[2] - V[2] * r[1];
    u[1] = V[4] + V[2] * r[0] - V[0] * r[2];
    u[2] = V[5] + V[0] * r[1] - V[1] * r[0];
    for (int k = 0; k < 3; k++) {
      vv += u[k] * u[k];
      om += V[k] * V[k];
    }
    double s = sqrt(vv) + sqrt(om) * (m->geom_rbound[g] + 2 * m->geom_detect[g]) + ss;
    s *= 1 + 1e-5;  // the body velocities' rounding (fp32 objective)
    if (s > s1) { s2 = s1; s1 = s; }
    else if (s > s2) s2 = s;
  }
  return s1 + s2 <= q;
}

/* the overflow flag of world w after its solve with answer x (sapw_droppedIdle) */
SAP_HD void SAPT(sapw_overflowFlag)(const sapModel* m, const sapData* d, int w, const SAPT(sapProblem)* P,
                                    const double* x, double h) {
  if (d->ncon_dropped[w] <= 0) return;
  if (SAPT(sapw_droppedIdle)(m, d, w, P, x, h)) d->world_flags[w] &= ~SAP_WORLD_CONTACT_OVERFLOW;
  else d->world_flags[w] |= SAP_WORLD_CONTACT_OVERFLOW;
}

/* P's islands (or its one block of all dofs) with H and L in place: 0 when H and L outside the
 * carve could not be had (sapProblem.hl_grow answered null). The world then keeps its velocity,
 * flagged SAP_WORLD_FACTORFAIL like a solve stopped before its first step */
SAP_HD int SAPT(sapw_islandsReady)(SAPT(sapProblem)* P) {
  if (!P->nisl) SAPT(sapw_islandsOne)(P);
  return !P->hl_fail;
}

/* solve world w: assemble, split into islands (else one dense block: the tests' reference),
 * Newton, write vnext and the diagnostics. islands: 0 one dense block; 1 islands, each dense;
 * 2 islands, those of several trees block-sparse where the flop estimate pays (the solve's
 * default, sapw_islandTrees); 3 block-sparse always, minimum degree; 4 always, natural order */
SAP_HD void SAPT(sapw_solveWorldIslands)(const sapModel* m, const sapData* d, int w, const sapSolveParams* prm,
                                         int islands) {
  int nv = m->nv;
  double* vnext = d->vnext + (long)w * nv;
  const double* vstar = d->vstar + (long)w * nv;
  SAPT(sapProblem) P;
  SAPT(sapw_worldProblem)(m, d, w, prm, &P);
  SAPT(sapw_contactPoints)(&P);
  for (int k = 0; k < P.cd * nv; k++) P.rows[k] = 0;
  // constraints: contacts, then drives, then limits, then dry friction, then equalities
  for (int i = 0; i < P.nc; i++) SAPT(sapw_buildContact)(m, d, w, i, prm, &P);
  SAPT(sapw_buildRows)(m, d, w, prm, &P);
  sapSolveStats st = {0, 0, 0, SAP_WORLD_CONVERGED, 0};
  if (P.nc + P.ns == 0) {
    // no constraints: v = v*
    for (int j = 0; j < nv; j++) vnext[j] = vstar[j];
  } else {
    SAPT(sapw_participation)(m, d, w, &P);
    P.sparse = islands >= 2 ? islands - 1 : 0;  // 2: block-sparse where it pays (sapw_islandTrees)
    if (islands) SAPT(sapw_islands)(m, &P);
    if (SAPT(sapw_islandsReady)(&P)) {
      SAPT(sapw_newtonIslands)(&P, prm, &st);
      for (int j = 0; j < nv; j++) vnext[j] = (double)P.v[j];
    } else {  // no memory for H and L: no impulses (sensors read them)
      for (int j = 0; j < nv; j++) vnext[j] = d->qvel[(long)w * nv + j];
      for (int k = 0; k < P.cd * P.nc + P.ns; k++) P.gam[k] = 0;
      st.flags = SAP_WORLD_FACTORFAIL;
    }
  }
  sapw_recordSolve(d, w, &st, st.flags);
  SAPT(sapw_overflowFlag)(m, d, w, &P, vnext, prm->h);
}

/* ---- screened solve (option contact_screen, CPU; issue 14) ------------------------------------
 * Contacts that cannot act take no row. A contact idle at the reduced problem's answer v (cone
 * region 0: zero impulse, so neither cost nor gradient) leaves the full problem's optimality
 * conditions at v those of the reduced one: v is the full problem's answer to the same
 * tolerance (the cost is strictly convex). So: screen (a contact enters when it is not idle at
 * Newton's warm start, 2 qvel - vprev or qvel; screening at qvel and v* as well cost more than
 * the promotions it saved on the pile), solve, verify
 * every screened-out contact at the answer, promote those that are not idle and solve again
 * (at most SAP_SCREEN_ROUNDS rounds, then with every contact). Velocity-only screens are not
 * exact: with SAP's regularized friction a sliding contact is active while separating
 * (vn < vhat_n + mu |vt|). The list (sapData con_*) keeps its order; the solve's rows are
 * compact copies in the screen's scratch (sapw_screenBytes past the problem's carve). */
#define SAP_SCREEN_ROUNDS 4

/* scratch of the screen for capacity c: rows' geoms (2c), original slots (c), flags (c),
 * points (6c), frames (9c), every contact's cone parameters */
SAP_HD long SAPT(sapw_screenBytes)(int c, int cd) {
  return 8 * ((16L * c + 7) / 8) + 8 * 15L * c + 8 * (((long)sizeof(SAP_REAL) * SAP_CPAR_OF(cd) * c + 7) / 8);
}

/* contact i of P is idle (zero impulse) at the constraint velocities vc (cd per contact) */
SAP_HD int SAPT(sapw_idleAt)(const SAPT(sapProblem)* P, const SAP_REAL* par, const SAP_REAL* vc) {
  SAP_REAL g[SAP_CDIM_MAX], l;
  if (P->cd == 3) SAPT(sapw_coneProject)(par, vc, g, &l, (SAP_REAL*)0);
  else SAPT(sapw_coneProjectN)(par, P->cd, vc, g, &l, (SAP_REAL*)0);
  for (int r = 0; r < P->cd; r++)
    if (g[r] != 0) return 0;
  return 1;
}

/* the rows in the order of the flags (flagged contacts first, each group by list slot):
 * compact geoms, points, frames and cone parameters; returns the flagged count */
SAP_HD int SAPT(sapw_screenRows)(const sapData* d, int w, SAPT(sapProblem)* P, int n, const int* act, int* slot,
                                 int* cg, double* cp, double* cf, const SAP_REAL* cpar0) {
  int na = 0, np = SAP_CPAR_OF(P->cd);
  for (int pass = 1; pass >= 0; pass--)
    for (int i = 0; i < n; i++) if (act[i] == pass) slot[na++] = i;
  for (int r = 0; r < n; r++) {
    long ci = (long)w * d->ncon_max + slot[r];
    for (int k = 0; k < 2; k++) cg[2 * r + k] = d->con_geom[2 * ci + k];
    for (int k = 0; k < 6; k++) cp[6 * r + k] = d->con_pos[6 * ci + k];
    for (int k = 0; k < 9; k++) cf[9 * r + k] = d->con_frame[9 * ci + k];
    for (int k = 0; k < np; k++) P->cpar[np * r + k] = cpar0[np * slot[r] + k];
  }
  int nact = 0;
  for (int i = 0; i < n; i++) nact += act[i] != 0;
  return nact;
}

/* flags the contacts (list slots) not idle at x (rows of the compact order from row r0:
 * slot[r]); velocities through P->dvc (cd n), x's body velocities through P->body6.
 * Returns the number flagged. */
SAP_HD int SAPT(sapw_screenAt)(SAPT(sapProblem)* P, const SAP_REAL* x, int r0, int n, const int* slot,
                               const SAP_REAL* cpar, int* act) {
  int cd = P->cd, np = SAP_CPAR_OF(cd), nf = 0;
  for (int b = 0; b < P->m->nbody; b++)
    for (int k = 0; k < 6; k++) SAPT(sapw_bodyVelocity)(P, x, b, k);
  for (int r = r0; r < n; r++) {
    SAPT(sapw_contactVelocity)(P, r, P->dvc);
    if (!SAPT(sapw_idleAt)(P, cpar + np * r, P->dvc + cd * r)) {
      nf += act[slot[r]] == 0;
      act[slot[r]] = 1;
    }
  }
  return nf;
}

SAP_HD void SAPT(sapw_solveWorldScreened)(const sapModel* m, const sapData* d, int w, const sapSolveParams* prm) {
  int nv = m->nv, cmax = d->ncon_max;
  double* vnext = d->vnext + (long)w * nv;
  const double* vstar = d->vstar + (long)w * nv;
  const double* qvel = d->qvel + (long)w * nv;
  d->ncon_promoted[w] = 0;
  if (d->ncon[w] <= 0 || !d->scratch) {  // no contacts: the plain solve, its bits
    SAPT(sapw_solveWorldIslands)(m, d, w, prm, 2);
    d->ncon_solved[w] = 0;
    return;
  }
  SAPT(sapProblem) P;
  SAPT(sapw_worldProblem)(m, d, w, prm, &P);
  int n = P.nc, cd = P.cd, np = SAP_CPAR_OF(cd), none = 0;
  // the screen's scratch past the problem's
  long off = SAPT(sapw_problemBytes)(nv, m->nbody, cmax, cd, SAP_SOLVE_NS(m), SAP_SOLVE_NNZ(m),
                                     prm->linear_fp32 ? 4 : 8, SAP_SOLVE_NHALF(m), !prm->hl_grow);
  unsigned char* base = d->scratch + (long)w * d->nscratch + off;
  int* cg = (int*)base;
  int* slot = cg + 2 * cmax;
  int* act = slot + cmax;
  double* cp = (double*)(base + 8 * ((16L * cmax + 7) / 8));
  double* cf = cp + 6 * (long)cmax;
  SAP_REAL* cpar0 = (SAP_REAL*)(cf + 9 * (long)cmax);
  // every contact's cone parameters, then the scalar rows
  for (int k = 0; k < cd * nv; k++) P.rows[k] = 0;
  for (int i = 0; i < n; i++) SAPT(sapw_buildContact)(m, d, w, i, prm, &P);
  for (int k = 0; k < np * n; k++) cpar0[k] = P.cpar[k];
  SAPT(sapw_buildRows)(m, d, w, prm, &P);
  // the screen over the list order (slot = identity): not idle at Newton's warm start
  for (int i = 0; i < n; i++) act[i] = 0, slot[i] = i;
  SAP_REAL* x = P.v;  // free until Newton's warm start
  for (int j = 0; j < nv; j++) x[j] = (SAP_REAL)(prm->warm_extrapolate ? 2 * qvel[j] - P.vprev[j] : qvel[j]);
  SAPT(sapw_screenAt)(&P, x, 0, n, slot, cpar0, act);
  P.con_geom = cg;
  P.con_pos = cp;
  P.con_frame = cf;
  sapSolveStats st = {0, 0, 0, SAP_WORLD_CONVERGED, 0}, sum = {0, 0, 0, 0, 0};
  int promoted = 0, na = 0;
  for (int round = 0;; round++) {
    na = SAPT(sapw_screenRows)(d, w, &P, n, act, slot, cg, cp, cf, cpar0);
    P.nc = n;  // every compact row's points: the verification reads rows na .. n - 1
    SAPT(sapw_contactPoints)(&P);
    P.nc = na;
    P.nisl = 0;
    none = P.nc + P.ns == 0;
    if (none) {
      for (int j = 0; j < nv; j++) P.v[j] = (SAP_REAL)vstar[j];
      st.iters = st.ls_iters = st.nfactor = st.ls_evals = 0;
      st.flags = SAP_WORLD_CONVERGED;
    } else {
      SAPT(sapw_participation)(m, d, w, &P);
      P.sparse = 1;
      SAPT(sapw_islands)(m, &P);
      if (!SAPT(sapw_islandsReady)(&P)) {  // no memory for H and L: as the plain solve
        for (int j = 0; j < nv; j++) P.v[j] = (SAP_REAL)qvel[j];
        for (int k = 0; k < P.cd * P.nc + P.ns; k++) P.gam[k] = 0;  // no impulses
        st.iters = st.ls_iters = st.nfactor = st.ls_evals = 0;
        st.flags = SAP_WORLD_FACTORFAIL;
        break;
      }
      SAPT(sapw_newtonIslands)(&P, prm, &st);
    }
    sum.iters += st.iters;
    sum.ls_iters += st.ls_iters;
    sum.nfactor += st.nfactor;
    sum.ls_evals += st.ls_evals;
    if (na == n) break;
    // verify the screened-out rows at the answer; promote those that would push
    int nf = SAPT(sapw_screenAt)(&P, P.v, na, n, slot, P.cpar, act);
    if (nf == 0) break;
    promoted += nf;
    if (round + 1 >= SAP_SCREEN_ROUNDS)
      for (int i = 0; i < n; i++) act[i] = 1;
  }
  for (int j = 0; j < nv; j++) vnext[j] = none ? vstar[j] : (double)P.v[j];
  // the impulses back in the list's order, as the plain solve leaves them (sensors and body
  // outputs read contact i's at cd i, the scalar rows' after cd ncon): a screened-out contact
  // was verified idle at the answer, its impulse is 0
  SAP_REAL* g = P.dvc;
  for (int k = 0; k < cd * na + P.ns; k++) g[k] = none ? 0 : P.gam[k];
  for (int k = 0; k < cd * n; k++) P.gam[k] = 0;
  for (int r = 0; r < na; r++)
    for (int k = 0; k < cd; k++) P.gam[cd * slot[r] + k] = g[cd * r + k];
  for (int k = 0; k < P.ns; k++) P.gam[cd * n + k] = g[cd * na + k];
  d->ncon_solved[w] = na;
  d->ncon_promoted[w] = promoted;
  sapw_recordSolve(d, w, &sum, st.flags);  // counters over every round, flags of the last
  SAPT(sapw_overflowFlag)(m, d, w, &P, vnext, prm->h);
}

SAP_HD void SAPT(sapw_solveWorld)(const sapModel* m, const sapData* d, int w, const sapSolveParams* prm) {
  SAPT(sapw_solveWorldIslands)(m, d, w, prm, 2);
}
