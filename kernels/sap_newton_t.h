/* SAP Newton iteration on an assembled per-world problem (sap_problem_t.h; template body
 * in the contact objective precision; include via sap_solve.h):
 *   grad = A (v - v*) - J' gamma,  H = A + J' G J  (contacts and scalar box constraints)
 * with H dv = -grad by the blocked Cholesky in the linear-solve precision and one of the three
 * line searches. The loop itself (stop rules: drake_sap_spec.md §4.2, sapwarp_spec.md §6.3;
 * line-search driver, commit, cost test) is sap_loop_t.h, shared with the warp solve; this file
 * gives it its one-lane primitives. */

/* x . row of a fp64 matrix */
SAP_HD SAP_REAL SAPT(sapw_rowDot)(const double* row, const SAP_REAL* x, int n) {
  SAP_REAL s = 0;
  for (int j = 0; j < n; j++) s += (SAP_REAL)row[j] * x[j];
  return s;
}

/* (A x)_i over dof i's tree block [tlo, thi) of the fp64 matrix A (by tree blocks), and only up to
 * the end of i's subtree where the island's flags say that A's row is zero after it (itree
 * bit 2: MuJoCo's pre-order, no tendon armature linking branches): the entries skipped are
 * exact zeros, and so are the dense sum's terms skipped (the partial sum starts at +0 and
 * adding +-0 changes no sum), so the result is the dense row's bit for bit for finite x
 * (sapw_islands / sapw_islandsOne set the ranges and flags) */
SAP_HD int SAPT(sapw_treeDotEnd)(const SAPT(sapProblem)* P, int i) {
  int hi = P->thi[i], k = P->isl[i];
  if (k >= 0 && (P->itree[k] & 4)) hi = i + P->iend[P->ibeg[k] + P->iloc[i]] - P->iloc[i] + 1;  // subtree's end
  return hi;
}
SAP_HD SAP_REAL SAPT(sapw_treeDot)(const SAPT(sapProblem)* P, const double* A, int i, const SAP_REAL* x) {
  int lo = P->tlo[i], hi = SAPT(sapw_treeDotEnd)(P, i);
  return SAPT(sapw_rowDot)(SAPT(sapw_Atree)(P, A, i) + lo, x + lo, hi - lo);
}

/* out[i] = sapw_treeDot(P, A, i, x) for every visited dof i. On the CPU consecutive rows over
 * the same range (the dofs of one body, a free joint's six) four or two at a time: x[j] loaded
 * once for them, each row's sum in its own register in sapw_rowDot's order (the same values
 * bit for bit) */
SAP_HD void SAPT(sapw_treeDots)(const SAPT(sapProblem)* P, const double* A, const SAP_REAL* x, SAP_REAL* out) {
  int a = 0, nd = SAPT(sapw_ndof)(P);
#if !defined(__CUDACC__)
  while (a + 1 < nd) {
    int i = SAPT(sapw_dofAt)(P, a), lo = P->tlo[i], hi = SAPT(sapw_treeDotEnd)(P, i), k = 1;
    for (; k < 4 && a + k < nd; k++) {  // the run of rows i, i + 1, ... over [lo, hi)
      int it = SAPT(sapw_dofAt)(P, a + k);
      if (it != i + k || P->tlo[it] != lo || SAPT(sapw_treeDotEnd)(P, it) != hi) break;
    }
    const double *r0 = SAPT(sapw_Atree)(P, A, i), *r1 = r0, *r2 = r0, *r3 = r0;
    if (k == 4) {
      r1 = SAPT(sapw_Atree)(P, A, i + 1);
      r2 = SAPT(sapw_Atree)(P, A, i + 2);
      r3 = SAPT(sapw_Atree)(P, A, i + 3);
      SAP_REAL s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      for (int j = lo; j < hi; j++) {
        SAP_REAL xj = x[j];
        s0 += (SAP_REAL)r0[j] * xj;
        s1 += (SAP_REAL)r1[j] * xj;
        s2 += (SAP_REAL)r2[j] * xj;
        s3 += (SAP_REAL)r3[j] * xj;
      }
      out[i] = s0;
      out[i + 1] = s1;
      out[i + 2] = s2;
      out[i + 3] = s3;
      a += 4;
    } else if (k >= 2) {
      r1 = SAPT(sapw_Atree)(P, A, i + 1);
      SAP_REAL s0 = 0, s1 = 0;
      for (int j = lo; j < hi; j++) {
        SAP_REAL xj = x[j];
        s0 += (SAP_REAL)r0[j] * xj;
        s1 += (SAP_REAL)r1[j] * xj;
      }
      out[i] = s0;
      out[i + 1] = s1;
      a += 2;
    } else {
      out[i] = SAPT(sapw_rowDot)(r0 + lo, x + lo, hi - lo);
      a++;
    }
  }
#endif
  for (; a < nd; a++) {
    int i = SAPT(sapw_dofAt)(P, a);
    out[i] = SAPT(sapw_treeDot)(P, A, i, x);
  }
}

/* contact i's cost at vc + alpha dvc, added to acc[0], with -gamma . dvc (d/dalpha) and
 * dvc' G dvc added to acc[1], acc[2]; store: alpha = 0 without dvc, cost only, gamma stored */
SAP_HD_COLD void SAPT(sapw_contactCostN)(SAPT(sapProblem)* P, int i, SAP_REAL alpha, int store,
                                          SAP_REAL* acc) {
  int cd = P->cd;
  SAP_REAL vc[SAP_CDIM_MAX] = {0, 0, 0, 0, 0, 0}, dvc[SAP_CDIM_MAX] = {0, 0, 0, 0, 0, 0};
  SAP_REAL g[SAP_CDIM_MAX], G[SAP_CDIM_MAX * SAP_CDIM_MAX], li;
  for (int k = 0; k < cd; k++) {
    dvc[k] = store ? 0 : P->dvc[cd * i + k];
    vc[k] = P->vc[cd * i + k] + alpha * dvc[k];
  }
  SAPT(sapw_coneProjectN)(P->cpar + SAP_CPAR_OF(cd) * i, cd, vc, store ? P->gam + cd * i : g, &li,
                          store ? (SAP_REAL*)0 : G);
  acc[0] += li;
  if (!store) {
    SAP_REAL gd = g[0] * dvc[0] + g[1] * dvc[1] + g[2] * dvc[2];
    for (int a = 3; a < cd; a++) gd += g[a] * dvc[a];
    acc[1] -= gd;
    for (int a = 0; a < cd; a++)
      for (int b = 0; b < cd; b++) acc[2] += dvc[a] * G[cd * a + b] * dvc[b];
  }
}

/* the 3-row contact (every model without condim 4 or 6): fixed-size locals */
SAP_HD void SAPT(sapw_contactCost)(SAPT(sapProblem)* P, int i, SAP_REAL alpha, int store, SAP_REAL* acc) {
  if (P->cd != 3) {
    SAPT(sapw_contactCostN)(P, i, alpha, store, acc);
    return;
  }
  SAP_REAL vc[3], dvc[3], g[3], G[9], li;
  for (int k = 0; k < 3; k++) {
    dvc[k] = store ? 0 : P->dvc[3 * i + k];
    vc[k] = P->vc[3 * i + k] + alpha * dvc[k];
  }
  SAPT(sapw_coneProject)(P->cpar + SAP_CPAR * i, vc, store ? P->gam + 3 * i : g, &li, store ? (SAP_REAL*)0 : G);
  acc[0] += li;
  if (!store) {
    acc[1] -= g[0] * dvc[0] + g[1] * dvc[1] + g[2] * dvc[2];
    for (int a = 0; a < 3; a++)
      for (int b = 0; b < 3; b++) acc[2] += dvc[a] * G[3 * a + b] * dvc[b];
  }
}

/* the same for scalar row s */
SAP_HD void SAPT(sapw_rowCost)(SAPT(sapProblem)* P, int s, SAP_REAL alpha, int store, SAP_REAL* acc) {
  int o = P->cd * P->nc;
  SAP_REAL dv = store ? 0 : P->dvc[o + s], g, Gs, ls;
  SAPT(sapw_boxEval)(P->spar + SAP_SPAR * s, P->vc[o + s] + alpha * dv, store ? P->gam + o + s : &g, &ls,
                     store ? (SAP_REAL*)0 : &Gs);
  acc[0] += ls;
  if (!store) { acc[1] -= g * dv; acc[2] += dv * Gs * dv; }
}

/* constraint costs at vc + alpha dvc: sum l, -sum gamma . dvc (d/dalpha), sum dvc' G dvc;
 * store: alpha = 0 without dvc, cost only, gamma stored */
SAP_HD void SAPT(sapw_constraints)(SAPT(sapProblem)* P, SAP_REAL alpha, int store, SAP_REAL* cost, SAP_REAL* d1,
                                   SAP_REAL* d2) {
  SAP_REAL acc[3] = {0, 0, 0};
  if (P->vk < 0) {  // the whole problem: every contact and row in order (the hot line search)
    for (int i = 0; i < P->nc; i++) SAPT(sapw_contactCost)(P, i, alpha, store, acc);
    for (int s = 0; s < P->ns; s++) SAPT(sapw_rowCost)(P, s, alpha, store, acc);
  } else {  // island vk's contacts and rows
    for (int a = 0, n = SAPT(sapw_ncon)(P); a < n; a++) SAPT(sapw_contactCost)(P, SAPT(sapw_conAt)(P, a), alpha, store, acc);
    for (int a = 0, n = SAPT(sapw_nrow)(P); a < n; a++) SAPT(sapw_rowCost)(P, SAPT(sapw_rowAt)(P, a), alpha, store, acc);
  }
  *cost = acc[0];
  if (d1) *d1 = acc[1];
  if (d2) *d2 = acc[2];
}

/* l(v) at P->v: vc = [J; S] v, gamma, r = A (v - v*), jc = J'gamma, grad = r - jc */
SAP_HD SAP_REAL SAPT(sapw_evaluate)(SAPT(sapProblem)* P) {
  int nd = SAPT(sapw_ndof)(P);  // the visited dofs: the others' terms are exact zeros
  if (!P->nisl) SAPT(sapw_islandsOne)(P);
  SAPT(sapw_constraintVelocities)(P, P->v, P->vc);
  SAP_REAL lc;
  SAPT(sapw_constraints)(P, 0, 1, &lc, (SAP_REAL*)0, (SAP_REAL*)0);
  // momentum: r = A (v - v*), 1/2 (v - v*) . r
  SAP_REAL mom = 0;
  for (int a = 0; a < nd; a++) {
    int i = SAPT(sapw_dofAt)(P, a);
    P->dv[i] = P->v[i] - (SAP_REAL)P->vstar[i];
  }
  SAPT(sapw_treeDots)(P, P->A, P->dv, P->r);
  for (int a = 0; a < nd; a++) {
    int i = SAPT(sapw_dofAt)(P, a);
    mom += P->dv[i] * P->r[i];
  }
  P->mom = mom / 2;
  // generalized impulse jc = J' gamma + S' gamma_s
  SAPT(sapw_generalizedImpulse)(P, P->gam, P->jc);
  for (int a = 0; a < nd; a++) {
    int j = SAPT(sapw_dofAt)(P, a);
    P->grad[j] = P->r[j] - P->jc[j];
  }
  return P->mom + lc;
}

/* l(v) after the step v += alpha dv, as sapw_evaluate but with the momentum residual carried
 * by the step (MuJoCo's mj_solNewton updates Ma the same way): r += alpha A dv from the line
 * setup (sapw_lineSetup: Adv = A dv) instead of A (v - v*) afresh. Equal to sapw_evaluate up
 * to rounding of r's size; the loop's first evaluation (the warm start) is the full one. The
 * constraint velocities are computed afresh, J v: carried by the step (MuJoCo's Jaref) their
 * error would be rounding of the warm start's velocities, and a near-rigid row multiplies it
 * by 1/R (box_stack under approx64: a solve to optimality_rel_tol 1e-12 stopped by a
 * line-search failure) */
SAP_HD SAP_REAL SAPT(sapw_evaluateStep)(SAPT(sapProblem)* P, SAP_REAL alpha) {
  int nd = SAPT(sapw_ndof)(P);
  if (!P->nisl) SAPT(sapw_islandsOne)(P);
  SAPT(sapw_constraintVelocities)(P, P->v, P->vc);
  SAP_REAL lc;
  SAPT(sapw_constraints)(P, 0, 1, &lc, (SAP_REAL*)0, (SAP_REAL*)0);
  SAP_REAL mom = 0;
  for (int a = 0; a < nd; a++) {
    int i = SAPT(sapw_dofAt)(P, a);
    P->r[i] += alpha * P->Adv[i];
    P->dv[i] = P->v[i] - (SAP_REAL)P->vstar[i];
    mom += P->dv[i] * P->r[i];
  }
  P->mom = mom / 2;
  SAPT(sapw_generalizedImpulse)(P, P->gam, P->jc);
  for (int a = 0; a < nd; a++) {
    int j = SAPT(sapw_dofAt)(P, a);
    P->grad[j] = P->r[j] - P->jc[j];
  }
  return P->mom + lc;
}

/* G_c (cd x cd) of contact c at P->vc (recomputed rather than stored: 8 cd^2 bytes less per
 * contact); returns the cone region, 0 when the contact is idle there (G = 0, no impulse) */
SAP_HD_COLD int SAPT(sapw_contactHessianN)(const SAPT(sapProblem)* P, int c, SAP_REAL* G) {
  SAP_REAL g[SAP_CDIM_MAX], l;
  return SAPT(sapw_coneProjectN)(P->cpar + SAP_CPAR_OF(P->cd) * c, P->cd, P->vc + P->cd * c, g, &l, G);
}
SAP_HD int SAPT(sapw_contactHessian)(const SAPT(sapProblem)* P, int c, SAP_REAL* G) {
  if (P->cd != 3) return SAPT(sapw_contactHessianN)(P, c, G);
  SAP_REAL g[3], l;
  return SAPT(sapw_coneProject)(P->cpar + SAP_CPAR * c, P->vc + 3 * c, g, &l, G);
}

/* the same for cd > 3 rows (G cd x cd), dof indices i >= j */
SAP_HD void SAPT(sapw_hessianEntrySpin)(SAPT(sapProblem)* P, const SAP_REAL* G, int i, int j) {
  int nv = P->nv, cd = P->cd;
  const SAP_REAL* J = P->rows;
  SAP_REAL h = 0;
  for (int b = 0; b < cd; b++) {
    SAP_REAL gi = 0;  // ((J_:i)' G)_b
    for (int a = 0; a < cd; a++) gi += J[a * nv + i] * G[cd * a + b];
    h += gi * J[b * nv + j];
  }
  P->H[i * nv + j] += h;
}

/* H[i][j] += J_:i' G J_:j for the entry (p, q) of the chain list of the rows in P->rows
 * (lower triangle: entries with j > i are skipped) */
SAP_HD void SAPT(sapw_hessianEntry)(SAPT(sapProblem)* P, const SAP_REAL* G, int p, int q) {
  int nv = P->nv, i = P->chain[p], j = P->chain[q];
  if (j > i) return;
  const SAP_REAL* J = P->rows;
  if (P->cd > 3) {
    SAPT(sapw_hessianEntrySpin)(P, G, i, j);
    return;
  }
  SAP_REAL gi[3];  // (J_:i)' G
  for (int b = 0; b < 3; b++) gi[b] = J[i] * G[b] + J[nv + i] * G[3 + b] + J[2 * nv + i] * G[6 + b];
  P->H[i * nv + j] += gi[0] * J[j] + gi[1] * J[nv + j] + gi[2] * J[2 * nv + j];
}

/* row i = chain[p] of H += J' G J over the chain list (lower triangle): (J_:i)' G formed once
 * for the row, then dotted with each column J_:j, j <= i. The same operations in the same
 * order as sapw_hessianEntry per (p, q) (the warp solve's split), so the sums agree bitwise;
 * (J_:i)' G is not recomputed for every q. The list is descending on [0, r) and on [r, n)
 * (two root paths, sapw_contactChain): there j <= i exactly for q >= p, and only the pairs
 * across the two runs need the test. A dense island: row i of its block, columns by iloc. */
SAP_HD void SAPT(sapw_hessianRowOfContact)(SAPT(sapProblem)* P, const SAP_REAL* G, int p, int r, int n) {
  int nv = P->nv, cd = P->cd, i = P->chain[p];
  const SAP_REAL* J = P->rows;
  SAP_REAL* Hi = SAPT(sapw_hRow)(P, i);  // row i of its island's block, columns by iloc
  const int *loc = P->iloc, *chain = P->chain;
  if (cd > 3) {
    SAP_REAL gi[SAP_CDIM_MAX];
    for (int b = 0; b < cd; b++) {
      gi[b] = 0;
      for (int a = 0; a < cd; a++) gi[b] += J[a * nv + i] * G[cd * a + b];
    }
    for (int q = 0; q < n; q++) {
      int j = chain[q];
      if (j > i) continue;
      SAP_REAL h = 0;
      for (int b = 0; b < cd; b++) h += gi[b] * J[b * nv + j];
      Hi[loc[j]] += h;
    }
    return;
  }
  SAP_REAL gi[3];  // (J_:i)' G
  for (int b = 0; b < 3; b++) gi[b] = J[i] * G[b] + J[nv + i] * G[3 + b] + J[2 * nv + i] * G[6 + b];
  const SAP_REAL *J0 = J, *J1 = J + nv, *J2 = J + 2 * nv;
  if (p < r) {
    for (int q = p; q < r; q++) {  // i's own run, from i down: j <= i
      int j = chain[q];
      Hi[loc[j]] += gi[0] * J0[j] + gi[1] * J1[j] + gi[2] * J2[j];
    }
    for (int q = r; q < n; q++) {
      int j = chain[q];
      if (j <= i) Hi[loc[j]] += gi[0] * J0[j] + gi[1] * J1[j] + gi[2] * J2[j];
    }
  } else {
    for (int q = 0; q < r; q++) {
      int j = chain[q];
      if (j <= i) Hi[loc[j]] += gi[0] * J0[j] + gi[1] * J1[j] + gi[2] * J2[j];
    }
    for (int q = p; q < n; q++) {  // i's own run
      int j = chain[q];
      Hi[loc[j]] += gi[0] * J0[j] + gi[1] * J1[j] + gi[2] * J2[j];
    }
  }
}

/* sapw_hessianRowOfContact over the contact's cached rows (sapw_contactRowsCached): row r of
 * chain position p at J[r jm + p], its dof chain[p]. The same operations in the same order on
 * the same values, so H is bit for bit the uncached one; no row rebuilt, no column cleared */
SAP_HD void SAPT(sapw_hessianRowCached)(SAPT(sapProblem)* P, const SAP_REAL* G, int p, int r, int n,
                                         const int* chain, const SAP_REAL* J, int jm) {
  int cd = P->cd, i = chain[p];
  SAP_REAL* Hi = SAPT(sapw_hRow)(P, i);  // row i of its island's block, columns by iloc
  const int* loc = P->iloc;
  if (cd > 3) {
    SAP_REAL gi[SAP_CDIM_MAX];
    for (int b = 0; b < cd; b++) {
      gi[b] = 0;
      for (int a = 0; a < cd; a++) gi[b] += J[a * jm + p] * G[cd * a + b];
    }
    for (int q = 0; q < n; q++) {
      int j = chain[q];
      if (j > i) continue;
      SAP_REAL h = 0;
      for (int b = 0; b < cd; b++) h += gi[b] * J[b * jm + q];
      Hi[loc[j]] += h;
    }
    return;
  }
  const SAP_REAL *J0 = J, *J1 = J + jm, *J2 = J + 2 * jm;
  SAP_REAL gi[3];  // (J_:i)' G
  for (int b = 0; b < 3; b++) gi[b] = J0[p] * G[b] + J1[p] * G[3 + b] + J2[p] * G[6 + b];
  if (p < r) {
    for (int q = p; q < r; q++) Hi[loc[chain[q]]] += gi[0] * J0[q] + gi[1] * J1[q] + gi[2] * J2[q];
    for (int q = r; q < n; q++)
      if (chain[q] <= i) Hi[loc[chain[q]]] += gi[0] * J0[q] + gi[1] * J1[q] + gi[2] * J2[q];
  } else {
    for (int q = 0; q < r; q++)
      if (chain[q] <= i) Hi[loc[chain[q]]] += gi[0] * J0[q] + gi[1] * J1[q] + gi[2] * J2[q];
    for (int q = p; q < n; q++) Hi[loc[chain[q]]] += gi[0] * J0[q] + gi[1] * J1[q] + gi[2] * J2[q];
  }
}

#if !defined(__CUDACC__)
/* CPU (gcc) form of sapw_hessianRowCached for the rows of chain positions p and p + 1 on the
 * same run (both < r or both >= r; cd = 3): each column's index and rows loaded once for the
 * two. Every entry is the same single update with the same operands as in
 * sapw_hessianRowCached, and no entry is updated twice within a contact, so H is bit for bit
 * the one of two sapw_hessianRowCached calls */
SAP_HD void SAPT(sapw_hessianRowsCached2)(SAPT(sapProblem)* P, const SAP_REAL* G, int p, int r, int n,
                                           const int* chain, const SAP_REAL* J, int jm) {
  int ia = chain[p], ib = chain[p + 1];  // ia > ib: each run descends
  SAP_REAL *Ha = SAPT(sapw_hRow)(P, ia), *Hb = SAPT(sapw_hRow)(P, ib);
  const int* loc = P->iloc;
  const SAP_REAL *J0 = J, *J1 = J + jm, *J2 = J + 2 * jm;
  SAP_REAL ga[3], gb[3];  // (J_:ia)' G, (J_:ib)' G
  for (int b = 0; b < 3; b++) {
    ga[b] = J0[p] * G[b] + J1[p] * G[3 + b] + J2[p] * G[6 + b];
    gb[b] = J0[p + 1] * G[b] + J1[p + 1] * G[3 + b] + J2[p + 1] * G[6 + b];
  }
#define SAPW_HPAIR_ENTRY(H, g, l, x0, x1, x2) H[l] += g[0] * x0 + g[1] * x1 + g[2] * x2
  int q0 = p < r ? r : 0, q1 = p < r ? n : r;  // the other run: entries j <= i only
  if (p >= r)
    for (int q = q0; q < q1; q++) {
      int j = chain[q], l = loc[j];
      SAP_REAL x0 = J0[q], x1 = J1[q], x2 = J2[q];
      if (j <= ia) SAPW_HPAIR_ENTRY(Ha, ga, l, x0, x1, x2);
      if (j <= ib) SAPW_HPAIR_ENTRY(Hb, gb, l, x0, x1, x2);
    }
  SAPW_HPAIR_ENTRY(Ha, ga, loc[ia], J0[p], J1[p], J2[p]);
  for (int q = p + 1, e = p < r ? r : n; q < e; q++) {  // the own run from ib down: j <= ib < ia
    int l = loc[chain[q]];
    SAP_REAL x0 = J0[q], x1 = J1[q], x2 = J2[q];
    SAPW_HPAIR_ENTRY(Ha, ga, l, x0, x1, x2);
    SAPW_HPAIR_ENTRY(Hb, gb, l, x0, x1, x2);
  }
  if (p < r)
    for (int q = q0; q < q1; q++) {
      int j = chain[q], l = loc[j];
      SAP_REAL x0 = J0[q], x1 = J1[q], x2 = J2[q];
      if (j <= ia) SAPW_HPAIR_ENTRY(Ha, ga, l, x0, x1, x2);
      if (j <= ib) SAPW_HPAIR_ENTRY(Hb, gb, l, x0, x1, x2);
    }
#undef SAPW_HPAIR_ENTRY
}
#endif

/* where one contact's entries of H lie in a block-sparse island (sapw_hPair): for the trees
 * t[s] of its two root paths (side s: s = 0 chain[0]'s, 1 chain[n - 1]'s; sapw_contactChain
 * lists one path, then the other: chain[q] is in t[0] for q < qs), the diagonal block
 * d[s] (n_t x n_t, its first local dof c0[s]) and the pair's block, where row a of side s
 * starts at o[s] + a rs[s] and steps by cs[s] over the other tree's columns (sapw_hRowTree's
 * orientation) */
typedef struct SAPT(sapHPair) {
  int qs;  // chain[q] is in t[0] for q < qs, in t[1] after
  int t[2], c0[2], nd[2], rs[2], cs[2];
  SAP_REAL *d[2], *o[2];
} SAPT(sapHPair);

SAP_HD void SAPT(sapw_hPair)(const SAPT(sapProblem)* P, const int* chain, int n, SAPT(sapHPair)* hp) {
  int k = P->isl[chain[0]], T = P->ntr[k], o = P->ibeg[k], nk = P->ibeg[k + 1] - o, W = (T + 31) / 32;
  SAP_REAL* Hk = P->H + P->hoff[k];
  for (int s = 0; s < 2; s++) {
    int t = P->tix[chain[s ? n - 1 : 0]];
    hp->t[s] = t;
    hp->c0[s] = P->tst[o + t];
    hp->nd[s] = SAPT(sapb_size)(P->tst + o, T, nk, t);
    hp->d[s] = Hk + P->tbo[o + t];
    hp->o[s] = hp->d[s];  // one tree: no entry across
    hp->rs[s] = hp->cs[s] = 0;
  }
  hp->qs = n;
  if (hp->t[0] == hp->t[1]) return;
  while (P->tix[chain[hp->qs - 1]] == hp->t[1]) hp->qs--;  // side 1's root path ends the list
  // the pair's block in the column of the tree eliminated first (side f): L_{t[g] t[f]}, rows t[g]
  int f = P->tpos[o + hp->t[0]] < P->tpos[o + hp->t[1]] ? 0 : 1, g = 1 - f;
  SAP_REAL* blk = Hk + sapb_blockAt(P->tpat + P->poff[k], P->trk + P->poff[k], P->bofs, W, hp->t[f], hp->t[g]);
  hp->o[g] = hp->o[f] = blk;
  hp->rs[g] = hp->nd[f];  // side g: the block's row a
  hp->cs[g] = 1;
  hp->rs[f] = 1;  // side f: the block's column a
  hp->cs[f] = hp->nd[f];
}

/* a block-sparse island: the rows of one contact's chain list of H += J' G J, each entry
 * (i, j <= i) the same sum as sapw_hessianRowOfContact's (one term per contact: the order of
 * the rows and within a row does not matter), by the two root paths. Row i of side s: its own
 * path from i down (descending: j <= i exactly there) in its side's diagonal block; the other
 * side's path in the pair's block, whole when the other tree comes first in the island's dof
 * order (every j < i: trees are dof ranges), else not at all. Both sides in one tree: every
 * q with j <= i, in the diagonal block. */
SAP_HD void SAPT(sapw_hessianContactBlocks)(SAPT(sapProblem)* P, const SAP_REAL* G, int n, const SAPT(sapHPair)* hp,
                                            const int* chain, const SAP_REAL* J, int ld, int bypos) {
  int cd = P->cd, qs = hp->qs, one = hp->t[0] == hp->t[1];
  const SAP_REAL *J0 = J, *J1 = J + ld, *J2 = J + 2 * ld;
  const int* loc = P->iloc;
#define SAPW_JX(q) (bypos ? (q) : chain[q])  // J's column of chain position q
  for (int s = 0; s < 2 - one; s++) {
    int ci = hp->c0[s], co = hp->c0[1 - s], so = hp->cs[s], nd = hp->nd[s], rs = hp->rs[s];
    int p0 = s ? qs : 0, p1 = s ? n : qs;                      // side s's rows and own path
    int o0 = s ? 0 : qs, o1 = one || co > ci ? o0 : s ? qs : n;  // the other path, or none
    for (int p = p0; p < p1; p++) {
      int i = chain[p], a = loc[i] - ci, x = SAPW_JX(p);
      SAP_REAL *Hi = hp->d[s] + (long)a * nd, *Ho = hp->o[s] + (long)a * rs;
      SAP_REAL gi[SAP_CDIM_MAX];  // (J_:i)' G
      if (cd > 3) {
        for (int b = 0; b < cd; b++) {
          gi[b] = 0;
          for (int c = 0; c < cd; c++) gi[b] += J[c * ld + x] * G[cd * c + b];
        }
        for (int q = one ? p0 : p; q < p1; q++) {
          int j = chain[q], y = SAPW_JX(q);
          if (j > i) continue;
          SAP_REAL h = 0;
          for (int b = 0; b < cd; b++) h += gi[b] * J[b * ld + y];
          Hi[loc[j] - ci] += h;
        }
        for (int q = o0; q < o1; q++) {
          int j = chain[q], y = SAPW_JX(q);
          SAP_REAL h = 0;
          for (int b = 0; b < cd; b++) h += gi[b] * J[b * ld + y];
          Ho[(long)(loc[j] - co) * so] += h;
        }
        continue;
      }
      for (int b = 0; b < 3; b++) gi[b] = J0[x] * G[b] + J1[x] * G[3 + b] + J2[x] * G[6 + b];
      if (one) {
        for (int q = p0; q < p1; q++) {
          int j = chain[q], y = SAPW_JX(q);
          if (j <= i) Hi[loc[j] - ci] += gi[0] * J0[y] + gi[1] * J1[y] + gi[2] * J2[y];
        }
        continue;
      }
      for (int q = p; q < p1; q++) {  // own path from i down
        int j = chain[q], y = SAPW_JX(q);
        Hi[loc[j] - ci] += gi[0] * J0[y] + gi[1] * J1[y] + gi[2] * J2[y];
      }
      for (int q = o0; q < o1; q++) {
        int j = chain[q], y = SAPW_JX(q);
        Ho[(long)(loc[j] - co) * so] += gi[0] * J0[y] + gi[1] * J1[y] + gi[2] * J2[y];
      }
    }
  }
#undef SAPW_JX
}

/* H += G_s S_s' S_s (lower triangle) for scalar row s at P->vc */
SAP_HD void SAPT(sapw_hessianRow)(SAPT(sapProblem)* P, int s) {
  SAP_REAL gam, l, g;
  SAPT(sapw_boxEval)(P->spar + SAP_SPAR * s, P->vc[P->cd * P->nc + s], &gam, &l, &g);
  if (g == 0) return;
  const int* idx = P->sidx + s * P->snz;
  const double* val = P->sval + s * P->snz;
  for (int p = 0; p < P->snz && idx[p] >= 0; p++)
    for (int q = 0; q < P->snz && idx[q] >= 0; q++)
      if (idx[q] <= idx[p]) *SAPT(sapw_hAt)(P, idx[p], idx[q]) += g * (SAP_REAL)val[p] * (SAP_REAL)val[q];
}

/* H = A + sum_c J_c' G_c J_c + sum_s G_s S_s' S_s (lower triangle) with the constraint
 * Hessians G at P->vc, one block per island (sapw_islands; one block of all dofs if none was
 * split); each contact's rows cover only the dofs of its two chains. A enters by its tree
 * blocks: an island of one tree is copied whole, one of several trees is cleared first (A is
 * zero between trees); a block-sparse island's storage (its trees' blocks, sapw_islandOffsets)
 * is cleared whole, the fill's blocks included, and A's tree blocks go to the diagonal blocks.
 * An idle contact (cone region 0: G = 0, e.g. a speculative one that is not closing) is
 * skipped: it would add exact zeros. */
SAP_HD void SAPT(sapw_hessian)(SAPT(sapProblem)* P) {
  if (!P->nisl) SAPT(sapw_islandsOne)(P);
  int k0 = P->vk < 0 ? 0 : P->vk, k1 = P->vk < 0 ? P->nisl : P->vk + 1;  // every island, or the view's
  for (int k = k0; k < k1; k++) {
    const int* dofs = P->idof + P->ibeg[k];
    int n = P->ibeg[k + 1] - P->ibeg[k];
    SAP_REAL* Hk = P->H + P->hoff[k];
    if (P->ntr[k]) {  // block-sparse: row a of tree t at tbo[t] + (a - st[t]) n_t
      for (long x = 0, e = P->hoff[k + 1] - P->hoff[k]; x < e; x++) Hk[x] = 0;
      const int *st = P->tst + P->ibeg[k], *bo = P->tbo + P->ibeg[k];
      for (int a = 0; a < n; a++) {
        int i = dofs[a], t = P->tix[i], lo = P->tlo[i], nt = P->thi[i] - lo;
        const double* Ai = SAPT(sapw_Atree)(P, P->A, i);
        SAP_REAL* Ha = Hk + bo[t] + (long)(a - st[t]) * nt;
        for (int j = lo; j <= i; j++) Ha[j - lo] = (SAP_REAL)Ai[j];
      }
      continue;
    }
    if (P->thi[dofs[0]] - P->tlo[dofs[0]] != n)
      for (int a = 0; a < n; a++)
        for (int b = 0; b <= a; b++) Hk[a * n + b] = 0;
    for (int a = 0; a < n; a++) {
      int i = dofs[a];
      const double* Ai = SAPT(sapw_Atree)(P, P->A, i);
      SAP_REAL* Ha = Hk + (long)a * n;  // Ha[iloc[j]]: j of i's tree (all in island k)
      /* a tree's dofs are consecutive in the island's ascending list too (the island holds all
         of them, and no other dof lies between), so iloc[j] = j + off on i's tree: a straight
         copy instead of one index load per entry */
      int lo = P->tlo[i], off = P->iloc[lo] - lo;
      for (int j = lo; j <= i; j++) Ha[j + off] = (SAP_REAL)Ai[j];
    }
  }
  for (int a = 0, nci = SAPT(sapw_ncon)(P); a < nci; a++) {
    SAP_REAL G[SAP_CDIM_MAX * SAP_CDIM_MAX];  // cd x cd; one thread per world here
    int c = SAPT(sapw_conAt)(P, a);
    if (!SAPT(sapw_contactHessian)(P, c, G)) continue;
    if (P->jmax) {  // the rows cached at the first iteration
      const int* chain;
      const SAP_REAL* J;
      int n = SAPT(sapw_contactRowsCached)(P, c, &chain, &J), r = 1;
      if (P->ntr[P->isl[chain[0]]]) {  // a block-sparse island
        SAPT(sapHPair) hp;
        SAPT(sapw_hPair)(P, chain, n, &hp);
        SAPT(sapw_hessianContactBlocks)(P, G, n, &hp, chain, J, P->jmax, 1);
        continue;
      }
      while (r < n && chain[r] < chain[r - 1]) r++;  // the descending first run
      int p = 0;
#if !defined(__CUDACC__)
      if (P->cd == 3)  // two rows of a run at a time: p, p + 1 < r, then both >= r
        for (int e = r; p < n; e = n) {
          for (; p + 1 < e; p += 2) SAPT(sapw_hessianRowsCached2)(P, G, p, r, n, chain, J, P->jmax);
          if (p < e) SAPT(sapw_hessianRowCached)(P, G, p++, r, n, chain, J, P->jmax);
        }
#endif
      for (; p < n; p++) SAPT(sapw_hessianRowCached)(P, G, p, r, n, chain, J, P->jmax);
      continue;
    }
    int n = SAPT(sapw_contactRows)(P, c), r = 1;
    while (r < n && P->chain[r] < P->chain[r - 1]) r++;  // the descending first run
    if (!P->ntr[P->isl[P->chain[0]]]) {  // a dense island
      for (int p = 0; p < n; p++) SAPT(sapw_hessianRowOfContact)(P, G, p, r, n);
    } else {
      SAPT(sapHPair) hp;
      SAPT(sapw_hPair)(P, P->chain, n, &hp);
      SAPT(sapw_hessianContactBlocks)(P, G, n, &hp, P->chain, P->rows, P->nv, 0);
    }
    SAPT(sapw_clearRows)(P, n);
  }
  for (int a = 0, n = SAPT(sapw_nrow)(P); a < n; a++) SAPT(sapw_hessianRow)(P, SAPT(sapw_rowAt)(P, a));
}

/* dv = -H^-1 grad in the linear-solve precision, island by island: each island's block of H
 * (at hoff[k], n_k x n_k, or its trees' blocks) is factored where it lies in L (in place when
 * H is L), its right-hand side at L + lrhs + ibeg[k]; dofs in no island get dv = 0. One
 * island of all dofs in order is the dense solve of H. Returns 0 or 1 + the dof (world index)
 * of the first failed pivot. */
/* island k's factor L (lin: its precision) loaded from H for the block-sparse factorization
 * (sap_block_t.h): H's storage is the factor's (its trees' blocks in L's orientation,
 * sapw_hRowTree), so a copy entry by entry, the fill's blocks as H's zeros; nothing when H is
 * L (in place) */
#define SAPW_BLOCK_LOAD(lin)                                                                       \
  SAP_HD void SAPT(sapw_blockLoad_##lin)(const SAPT(sapProblem)* P, int k, lin* L) {               \
    const SAP_REAL* H = P->H + P->hoff[k];                                                         \
    if ((const void*)H == (const void*)L) return;                                                  \
    for (long x = 0, e = P->hoff[k + 1] - P->hoff[k]; x < e; x++) L[x] = (lin)H[x];                \
  }
SAPW_BLOCK_LOAD(float)
SAPW_BLOCK_LOAD(double)
#undef SAPW_BLOCK_LOAD

SAP_HD int SAPT(sapw_direction)(SAPT(sapProblem)* P) {
  int nv = P->nv, info = 0;
  int k0 = P->vk < 0 ? 0 : P->vk, k1 = P->vk < 0 ? P->nisl : P->vk + 1;  // every island, or the view's
  if (P->vk < 0)
    for (int j = 0; j < nv; j++)
      if (P->isl[j] < 0) P->dv[j] = 0;
  for (int k = k0; k < k1 && !info; k++) {
    const int* dofs = P->idof + P->ibeg[k];
    int n = P->ibeg[k + 1] - P->ibeg[k];
    const SAP_REAL* H = P->H + P->hoff[k];
    int T = P->ntr[k], o = P->ibeg[k];
    if (T > 0) {  // block-sparse over the island's trees (sap_block_t.h)
      int W = (T + 31) / 32;
      const unsigned* pat = P->tpat + P->poff[k];
      const int* rk = P->trk + P->poff[k];
      if (P->lin_fp32) {
        float* L = (float*)P->L + P->hoff[k];
        float* x = (float*)P->L + P->lrhs + o;
        SAPT(sapw_blockLoad_float)(P, k, L);
        for (int i = 0; i < n; i++) x[i] = (float)-P->grad[dofs[i]];
        info = sapb_factor_f32(L, n, T, P->tst + o, P->tord + o, P->tpos + o, pat, W, P->tbo + o, rk, P->bofs);
        if (!info) sapb_solve_f32(L, n, T, P->tst + o, P->tord + o, pat, W, P->tbo + o, x);
        for (int i = 0; i < n; i++) P->dv[dofs[i]] = (SAP_REAL)x[i];
      } else {
        double* L = (double*)P->L + P->hoff[k];
        double* x = (double*)P->L + P->lrhs + o;
        SAPT(sapw_blockLoad_double)(P, k, L);
        for (int i = 0; i < n; i++) x[i] = (double)-P->grad[dofs[i]];
        info = sapb_factor_f64(L, n, T, P->tst + o, P->tord + o, P->tpos + o, pat, W, P->tbo + o, rk, P->bofs);
        if (!info) sapb_solve_f64(L, n, T, P->tst + o, P->tord + o, pat, W, P->tbo + o, x);
        for (int i = 0; i < n; i++) P->dv[dofs[i]] = (SAP_REAL)x[i];
      }
      if (info) info = dofs[info - 1] + 1;
      continue;
    }
    /* dense block, or by the dof forest when every entry off the forest's pattern is zero
     * (each contact and row of the island acts along one root path, A's tree pattern) */
    const int *par = P->ipar + o, *seg = P->iseg + o;
    int tree = (P->itree[k] & 1) && SAPT(sapw_treePattern)(H, 0, n, n, par, seg);
    if (P->lin_fp32) {
      float* L = (float*)P->L + P->hoff[k];
      float* x = (float*)P->L + P->lrhs + o;
      for (int i = 0; i < n; i++) {
        for (int j = 0; j <= i; j++) L[i * n + j] = (float)H[i * n + j];
        x[i] = (float)-P->grad[dofs[i]];
      }
      if (tree) {
        if (P->itree[k] & 2) {  // pre-order: left-looking factor and forward pass
          info = sapw_treeFactorPre_f32(L, 0, n, n, par, seg, P->iend + o);
          if (!info) sapw_treeSolvePre_f32(L, 0, n, n, par, seg, P->iend + o, x);
        } else {
          info = sapw_treeFactor_f32(L, 0, n, n, par, seg);
          if (!info) sapw_treeSolve_f32(L, 0, n, n, par, seg, x);
        }
      } else {
        info = sapw_cholFactor_f32(L, n, n, SAP_CHOL_BLOCK);
        if (!info) sapw_cholSolve_f32(L, n, n, x);
      }
      for (int i = 0; i < n; i++) P->dv[dofs[i]] = (SAP_REAL)x[i];
    } else {
      double* L = (double*)P->L + P->hoff[k];
      double* x = (double*)P->L + P->lrhs + o;
      for (int i = 0; i < n; i++) {
        for (int j = 0; j <= i; j++) L[i * n + j] = (double)H[i * n + j];
        x[i] = (double)-P->grad[dofs[i]];
      }
      if (tree) {
        if (P->itree[k] & 2) {  // pre-order: left-looking factor and forward pass
          info = sapw_treeFactorPre_f64(L, 0, n, n, par, seg, P->iend + o);
          if (!info) sapw_treeSolvePre_f64(L, 0, n, n, par, seg, P->iend + o, x);
        } else {
          info = sapw_treeFactor_f64(L, 0, n, n, par, seg);
          if (!info) sapw_treeSolve_f64(L, 0, n, n, par, seg, x);
        }
      } else {
        info = sapw_cholFactor_f64(L, n, n, SAP_CHOL_BLOCK);
        if (!info) sapw_cholSolve_f64(L, n, n, x);
      }
      for (int i = 0; i < n; i++) P->dv[dofs[i]] = (SAP_REAL)x[i];
    }
    if (info) info = dofs[info - 1] + 1;
  }
  return info;
}

/* phi(alpha) = mom + alpha m1 + alpha^2/2 m2 + constraint costs at vc + alpha dvc,
 * phi' = m1 + alpha m2 - gamma(alpha) . dvc, phi'' = m2 + dvc' G(alpha) dvc */
SAP_HD void SAPT(sapw_lineEval)(SAPT(sapProblem)* P, SAP_REAL alpha, SAP_REAL* phi, SAP_REAL* d1,
                                SAP_REAL* d2) {
  SAP_REAL c, e1, e2;
  SAPT(sapw_constraints)(P, alpha, 0, &c, &e1, &e2);
  *phi = P->mom + alpha * P->m1 + alpha * alpha / 2 * P->m2 + c;
  *d1 = P->m1 + alpha * P->m2 + e1;
  *d2 = P->m2 + e2;
}

/* line data for dv: Adv = A dv, m1 = dv . A(v - v*), m2 = dv . A dv, dvc = [J; S] dv;
 * returns phi''(0) = m2 + dvc' G dvc (G at the current iterate) when need_d2 (exact_root's
 * fallback seed: one more pass over the constraints), else 0 */
SAP_HD SAP_REAL SAPT(sapw_lineSetup)(SAPT(sapProblem)* P, int need_d2) {
  if (!P->nisl) SAPT(sapw_islandsOne)(P);
  SAP_REAL m1 = 0, m2 = 0;  // over the visited dofs: the others' terms are exact zeros
  SAPT(sapw_treeDots)(P, P->A, P->dv, P->Adv);
  for (int a = 0, nd = SAPT(sapw_ndof)(P); a < nd; a++) {
    int i = SAPT(sapw_dofAt)(P, a);
    m1 += P->dv[i] * P->r[i];
    m2 += P->dv[i] * P->Adv[i];
  }
  P->m1 = m1;
  P->m2 = m2;
  SAPT(sapw_constraintVelocities)(P, P->dv, P->dvc);
  if (!need_d2) return 0;
  SAP_REAL phi, d1, d2;
  SAPT(sapw_lineEval)(P, 0, &phi, &d1, &d2);
  return d2;
}

/* weighted norm ||dscale o x|| over the visited dofs (dscale is 0 on the others) */
SAP_HD SAP_REAL SAPT(sapw_scaledNorm)(const SAPT(sapProblem)* P, const SAP_REAL* x) {
  const SAP_REAL* s = P->dscale;
  SAP_REAL t = 0;
  for (int a = 0, nd = SAPT(sapw_ndof)(P); a < nd; a++) {
    int i = SAPT(sapw_dofAt)(P, a);
    t += (s[i] * x[i]) * (s[i] * x[i]);
  }
  return SAP_SQRT(t);
}

/* optimality (drake §4.2): ||D grad|| <= abs + rel max(||D A v||, ||D J'gamma||), D = diag(A)^-1/2 */
SAP_HD int SAPT(sapw_optimal)(SAPT(sapProblem)* P, const sapSolveParams* prm) {
  SAP_REAL res = SAPT(sapw_scaledNorm)(P, P->grad);
  SAP_REAL pn = 0, jn = SAPT(sapw_scaledNorm)(P, P->jc);
  for (int a = 0, nd = SAPT(sapw_ndof)(P); a < nd; a++) {
    int i = SAPT(sapw_dofAt)(P, a);
    SAP_REAL p = P->dscale[i] * (P->r[i] + P->pstar[i]);  // A v = A (v - v*) + A v*
    pn += p * p;
  }
  pn = SAP_SQRT(pn);
  SAP_REAL scale = pn > jn ? pn : jn;
  return res <= (SAP_REAL)prm->opt_abs + (SAP_REAL)prm->opt_rel * scale;
}

/* p* = A v* by tree blocks (the loop's momentum scale; sap_loop_t.h), after the one-island
 * split when the islands were not split */
SAP_HD void SAPT(sapw_momentumScale)(SAPT(sapProblem)* P) {
  if (!P->nisl) SAPT(sapw_islandsOne)(P);  // no islands split: one dense block
  for (int a = 0, nd = SAPT(sapw_ndof)(P); a < nd; a++) {
    int i = SAPT(sapw_dofAt)(P, a);
    SAP_REAL s = 0;
    const double* Ai = SAPT(sapw_Atree)(P, P->A, i);
    for (int j = P->tlo[i]; j < P->thi[i]; j++) s += (SAP_REAL)Ai[j] * (SAP_REAL)P->vstar[j];
    P->pstar[i] = s;
  }
}

/* the Newton loop on one lane: sapw_warmStart, sapw_newtonBegin, sapw_newtonStop,
 * sapw_newtonStep, sapw_newtonIterate, sapw_newton(P, prm, st) */
#define SAPL(name) SAPT(sapw_##name)
#define SAPL_FN SAP_HD
#define SAPL_LANES 1
#define SAPL_LANE
#define SAPL_LANE_ARG
#define SAPL_LANE_ID 0
#define SAPL_SUM(x) (x)
#define SAPL_SYNC() ((void)0)
#define SAPL_NDOF(P) SAPT(sapw_loopDofs)(P)
#define SAPL_DOF(P, a) SAPT(sapw_loopDofAt)(P, a)
#include "sap_loop_t.h"

/* each island solved on its own (issue 16): the loop above on island k's view (P->vk = k: its
 * dofs, bodies, contacts, rows and block of H), one island after the other, each with its own
 * warm start, iterations, line searches (its own alpha) and stop rules (optimality scaled by
 * its own momentum, its cost test, the iteration cap): an island that has converged costs
 * nothing more, and a world of separated objects costs the sum of the objects alone. The
 * world's counters: newton_iter, ls_iter and ls_eval of the island that needed the most (the
 * critical path, each counter's own maximum), nfactor the factorizations of every island (the
 * work, = total island-iterations that factored). Flags: CONVERGED when every island
 * converged, else the failure bits of the islands that failed, OR'ed (a failure wins over
 * CONVERGED). With one island, or prm->island_newton = 0, the whole problem's loop
 * (sapw_newton, its bits). */
SAP_HD void SAPT(sapw_newtonIslands)(SAPT(sapProblem)* P, const sapSolveParams* prm, sapSolveStats* st) {
  if (!prm->island_newton || P->nisl <= 1) {
    SAPT(sapw_newton)(P, prm, st);
    return;
  }
  sapSolveStats all = {0, 0, 0, 0, 0};
  int fail = 0, nadof = P->nadof, nabody = P->nabody, *adof = P->adof, *abody = P->abody;
  SAPT(sapw_islandViews)(P->m, P);
  for (int k = 0; k < P->nisl; k++) {
    sapSolveStats sk;
    SAPT(sapw_setView)(P, k);
    SAPT(sapw_newton)(P, prm, &sk);
    if (sk.iters > all.iters) all.iters = sk.iters;
    if (sk.ls_iters > all.ls_iters) all.ls_iters = sk.ls_iters;
    if (sk.ls_evals > all.ls_evals) all.ls_evals = sk.ls_evals;
    all.nfactor += sk.nfactor;
    fail |= sk.flags & ~SAP_WORLD_CONVERGED;
  }
  P->vk = -1;  // the whole problem again
  P->nadof = nadof;
  P->nabody = nabody;
  P->adof = adof;
  P->abody = abody;
  all.flags = fail ? fail : SAP_WORLD_CONVERGED;
  *st = all;
}
