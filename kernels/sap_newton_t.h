/* SAP Newton iteration on an assembled per-world problem (template body in the contact
 * objective precision; include via sap_solve.h):
 *   l(v) = 1/2 (v - v*)' A (v - v*) + sum_c l_c(J_c v) + sum_s l_s(S_s v)
 *   grad = A (v - v*) - J' gamma,  H = A + J' G J  (contacts and scalar box constraints)
 * with H dv = -grad by the blocked Cholesky in the linear-solve precision and one of the three
 * line searches. Stopping rules: drake_sap_spec.md §4.2, sapwarp_spec.md §6.3 (reference). */

typedef struct SAPT(sapProblem) {
  int nv, nc, ns;           /* dofs, contacts, scalar constraints */
  const double* A;          /* (nv x nv) dynamics matrix, fp64 storage */
  const double* vstar;      /* (nv) free-motion velocity */
  const double* J;          /* (3nc x nv) contact rows t1, t2, n (fp64 storage) */
  const double* S;          /* (ns x nv) scalar constraint rows */
  SAP_REAL* cpar;           /* (nc x SAP_CPAR) cone parameters */
  SAP_REAL* spar;           /* (ns x SAP_SPAR) box parameters */
  SAP_REAL* dscale;         /* (nv) diag(A)^-1/2 on participating dofs, 0 elsewhere */
  SAP_REAL *v, *r, *grad, *jc, *dv, *Adv, *pstar; /* (nv) iterate, A(v-v*), gradient, J'gamma, step, A dv, A v* */
  SAP_REAL *vc, *dvc, *gam; /* (3nc + ns) constraint velocities, J dv, impulses */
  SAP_REAL* G;              /* (9nc + ns) constraint Hessians at vc */
  SAP_REAL* H;              /* (nv x nv) Newton matrix (lower triangle) */
  void* L;                  /* (nv x (nv + 1)) factor and right-hand side, linear-solve precision */
  int lin_fp32;             /* the linear solve runs in fp32 */
  SAP_REAL mom;             /* momentum cost 1/2 (v - v*)' A (v - v*) at v */
  SAP_REAL m1, m2;          /* line coefficients dv' A (v - v*), dv' A dv */
} SAPT(sapProblem);

/* x . row of a fp64 matrix */
SAP_HD SAP_REAL SAPT(sapw_rowDot)(const double* row, const SAP_REAL* x, int n) {
  SAP_REAL s = 0;
  for (int j = 0; j < n; j++) s += (SAP_REAL)row[j] * x[j];
  return s;
}

SAP_HD SAP_REAL SAPT(sapw_dot)(const SAP_REAL* a, const SAP_REAL* b, int n) {
  SAP_REAL s = 0;
  for (int j = 0; j < n; j++) s += a[j] * b[j];
  return s;
}

/* constraint costs at vc0 + alpha dvc: sum l, -sum gamma . dvc (d/dalpha), sum dvc' G dvc.
 * alpha = 0 with dvc = NULL evaluates at vc0 and stores gamma (and G when withG) */
SAP_HD void SAPT(sapw_constraints)(SAPT(sapProblem)* P, SAP_REAL alpha, int store, int withG,
                                   SAP_REAL* cost, SAP_REAL* d1, SAP_REAL* d2) {
  SAP_REAL c = 0, e1 = 0, e2 = 0;
  for (int i = 0; i < P->nc; i++) {
    SAP_REAL vc[3], dvc[3], g[3], Gl[9], li;
    for (int k = 0; k < 3; k++) {
      dvc[k] = store ? 0 : P->dvc[3 * i + k];
      vc[k] = P->vc[3 * i + k] + alpha * dvc[k];
    }
    SAP_REAL* Gi = store ? P->G + 9 * i : Gl;
    SAPT(sapw_coneProject)(P->cpar + SAP_CPAR * i, vc, store ? P->gam + 3 * i : g, &li,
                           (withG || !store) ? Gi : (SAP_REAL*)0);
    c += li;
    if (!store) {
      e1 -= g[0] * dvc[0] + g[1] * dvc[1] + g[2] * dvc[2];
      for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) e2 += dvc[a] * Gl[3 * a + b] * dvc[b];
    }
  }
  int o = 3 * P->nc, og = 9 * P->nc;
  for (int s = 0; s < P->ns; s++) {
    SAP_REAL dv = store ? 0 : P->dvc[o + s], g, Gs, ls;
    SAPT(sapw_boxEval)(P->spar + SAP_SPAR * s, P->vc[o + s] + alpha * dv, store ? P->gam + o + s : &g,
                       &ls, store ? (withG ? P->G + og + s : (SAP_REAL*)0) : &Gs);
    c += ls;
    if (!store) { e1 -= g * dv; e2 += dv * Gs * dv; }
  }
  *cost = c;
  if (d1) *d1 = e1;
  if (d2) *d2 = e2;
}

/* l(v) at P->v: vc = [J; S] v, gamma (and G), r = A (v - v*), jc = J'gamma, grad = r - jc */
SAP_HD SAP_REAL SAPT(sapw_evaluate)(SAPT(sapProblem)* P, int withG) {
  int nv = P->nv, nc3 = 3 * P->nc;
  for (int i = 0; i < nc3; i++) P->vc[i] = SAPT(sapw_rowDot)(P->J + (long)i * nv, P->v, nv);
  for (int s = 0; s < P->ns; s++) P->vc[nc3 + s] = SAPT(sapw_rowDot)(P->S + (long)s * nv, P->v, nv);
  SAP_REAL lc;
  SAPT(sapw_constraints)(P, 0, 1, withG, &lc, (SAP_REAL*)0, (SAP_REAL*)0);
  // momentum: r = A (v - v*), 1/2 (v - v*) . r
  SAP_REAL mom = 0;
  for (int i = 0; i < nv; i++) P->dv[i] = P->v[i] - (SAP_REAL)P->vstar[i];
  for (int i = 0; i < nv; i++) {
    P->r[i] = SAPT(sapw_rowDot)(P->A + (long)i * nv, P->dv, nv);
    mom += P->dv[i] * P->r[i];
  }
  P->mom = mom / 2;
  // generalized impulse jc = J' gamma + S' gamma_s
  for (int j = 0; j < nv; j++) {
    SAP_REAL s = 0;
    for (int i = 0; i < nc3; i++) s += (SAP_REAL)P->J[(long)i * nv + j] * P->gam[i];
    for (int k = 0; k < P->ns; k++) s += (SAP_REAL)P->S[(long)k * nv + j] * P->gam[nc3 + k];
    P->jc[j] = s;
    P->grad[j] = P->r[j] - s;
  }
  return P->mom + lc;
}

/* H = A + sum_c J_c' G_c J_c + sum_s G_s S_s' S_s (lower triangle) */
SAP_HD void SAPT(sapw_hessian)(SAPT(sapProblem)* P) {
  int nv = P->nv;
  for (int i = 0; i < nv; i++)
    for (int j = 0; j <= i; j++) P->H[i * nv + j] = (SAP_REAL)P->A[i * nv + j];
  for (int c = 0; c < P->nc; c++) {
    const double* Jc = P->J + (long)3 * c * nv;
    const SAP_REAL* G = P->G + 9 * c;
    for (int i = 0; i < nv; i++) {
      SAP_REAL ji[3] = {(SAP_REAL)Jc[i], (SAP_REAL)Jc[nv + i], (SAP_REAL)Jc[2 * nv + i]};
      if (ji[0] == 0 && ji[1] == 0 && ji[2] == 0) continue;
      SAP_REAL gi[3];  // (J_:i)' G
      for (int b = 0; b < 3; b++) gi[b] = ji[0] * G[b] + ji[1] * G[3 + b] + ji[2] * G[6 + b];
      for (int j = 0; j <= i; j++)
        P->H[i * nv + j] += gi[0] * (SAP_REAL)Jc[j] + gi[1] * (SAP_REAL)Jc[nv + j] + gi[2] * (SAP_REAL)Jc[2 * nv + j];
    }
  }
  for (int s = 0; s < P->ns; s++) {
    const double* Ss = P->S + (long)s * nv;
    SAP_REAL g = P->G[9 * P->nc + s];
    if (g == 0) continue;
    for (int i = 0; i < nv; i++) {
      if (Ss[i] == 0) continue;
      for (int j = 0; j <= i; j++) P->H[i * nv + j] += g * (SAP_REAL)Ss[i] * (SAP_REAL)Ss[j];
    }
  }
}

/* dv = -H^-1 grad in the linear-solve precision; returns 0 or the failed pivot + 1 */
SAP_HD int SAPT(sapw_direction)(SAPT(sapProblem)* P) {
  int nv = P->nv, info;
  if (P->lin_fp32) {
    float* L = (float*)P->L;
    float* x = L + nv * nv;
    for (int i = 0; i < nv; i++) {
      for (int j = 0; j <= i; j++) L[i * nv + j] = (float)P->H[i * nv + j];
      x[i] = (float)-P->grad[i];
    }
    info = sapw_cholFactor_f32(L, nv, nv, SAP_CHOL_BLOCK);
    if (!info) sapw_cholSolve_f32(L, nv, nv, x);
    for (int i = 0; i < nv; i++) P->dv[i] = (SAP_REAL)x[i];
  } else {
    double* L = (double*)P->L;
    double* x = L + nv * nv;
    for (int i = 0; i < nv; i++) {
      for (int j = 0; j <= i; j++) L[i * nv + j] = (double)P->H[i * nv + j];
      x[i] = (double)-P->grad[i];
    }
    info = sapw_cholFactor_f64(L, nv, nv, SAP_CHOL_BLOCK);
    if (!info) sapw_cholSolve_f64(L, nv, nv, x);
    for (int i = 0; i < nv; i++) P->dv[i] = (SAP_REAL)x[i];
  }
  return info;
}

/* line data for dv: Adv = A dv, m1 = dv . A(v - v*), m2 = dv . A dv, dvc = [J; S] dv;
 * returns phi''(0) = m2 + dvc' G dvc (G at the current iterate) */
SAP_HD SAP_REAL SAPT(sapw_lineSetup)(SAPT(sapProblem)* P) {
  int nv = P->nv, nc3 = 3 * P->nc;
  for (int i = 0; i < nv; i++) P->Adv[i] = SAPT(sapw_rowDot)(P->A + (long)i * nv, P->dv, nv);
  P->m1 = SAPT(sapw_dot)(P->dv, P->r, nv);
  P->m2 = SAPT(sapw_dot)(P->dv, P->Adv, nv);
  for (int i = 0; i < nc3; i++) P->dvc[i] = SAPT(sapw_rowDot)(P->J + (long)i * nv, P->dv, nv);
  for (int s = 0; s < P->ns; s++) P->dvc[nc3 + s] = SAPT(sapw_rowDot)(P->S + (long)s * nv, P->dv, nv);
  SAP_REAL d2 = P->m2;
  for (int c = 0; c < P->nc; c++) {
    const SAP_REAL* G = P->G + 9 * c;
    const SAP_REAL* x = P->dvc + 3 * c;
    for (int a = 0; a < 3; a++)
      for (int b = 0; b < 3; b++) d2 += x[a] * G[3 * a + b] * x[b];
  }
  for (int s = 0; s < P->ns; s++) d2 += P->dvc[nc3 + s] * P->G[9 * P->nc + s] * P->dvc[nc3 + s];
  return d2;
}

/* phi(alpha) = mom + alpha m1 + alpha^2/2 m2 + constraint costs at vc + alpha dvc,
 * phi' = m1 + alpha m2 - gamma(alpha) . dvc, phi'' = m2 + dvc' G(alpha) dvc */
SAP_HD void SAPT(sapw_lineEval)(SAPT(sapProblem)* P, SAP_REAL alpha, SAP_REAL* phi, SAP_REAL* d1,
                                SAP_REAL* d2) {
  SAP_REAL c, e1, e2;
  SAPT(sapw_constraints)(P, alpha, 0, 0, &c, &e1, &e2);
  *phi = P->mom + alpha * P->m1 + alpha * alpha / 2 * P->m2 + c;
  *d1 = P->m1 + alpha * P->m2 + e1;
  *d2 = P->m2 + e2;
}

/* weighted norm ||dscale o x|| over participating dofs */
SAP_HD SAP_REAL SAPT(sapw_scaledNorm)(const SAP_REAL* s, const SAP_REAL* x, int n) {
  SAP_REAL t = 0;
  for (int i = 0; i < n; i++) t += (s[i] * x[i]) * (s[i] * x[i]);
  return SAP_SQRT(t);
}

/* optimality (drake §4.2): ||D grad|| <= abs + rel max(||D A v||, ||D J'gamma||), D = diag(A)^-1/2 */
SAP_HD int SAPT(sapw_optimal)(SAPT(sapProblem)* P, const sapSolveParams* prm) {
  int nv = P->nv;
  SAP_REAL res = SAPT(sapw_scaledNorm)(P->dscale, P->grad, nv);
  SAP_REAL pn = 0, jn = SAPT(sapw_scaledNorm)(P->dscale, P->jc, nv);
  for (int i = 0; i < nv; i++) {
    SAP_REAL p = P->dscale[i] * (P->r[i] + P->pstar[i]);  // A v = A (v - v*) + A v*
    pn += p * p;
  }
  pn = SAP_SQRT(pn);
  SAP_REAL scale = pn > jn ? pn : jn;
  return res <= (SAP_REAL)prm->opt_abs + (SAP_REAL)prm->opt_rel * scale;
}

/* run the Newton loop from P->v; on return P->v holds the solution (or the last iterate) */
SAP_HD void SAPT(sapw_newton)(SAPT(sapProblem)* P, const sapSolveParams* prm, sapSolveStats* st) {
  int nv = P->nv;
  // p* = A v* (the momentum A v = A (v - v*) + p* of the optimality scale)
  for (int i = 0; i < nv; i++) {
    SAP_REAL s = 0;
    for (int j = 0; j < nv; j++) s += (SAP_REAL)P->A[(long)i * nv + j] * (SAP_REAL)P->vstar[j];
    P->pstar[i] = s;
  }
  st->iters = st->ls_iters = st->nfactor = st->flags = 0;
  SAP_REAL cost = SAPT(sapw_evaluate)(P, 1), prev = cost, alpha = 1;
  int cost_ok = 0, k = 0;
  for (;;) {
    if (!isfinite(cost)) { st->flags |= SAP_WORLD_LSFAIL; break; }
    // stop before factorizing: optimality or the cost test of the last step
    if (SAPT(sapw_optimal)(P, prm) || cost_ok) { st->flags |= SAP_WORLD_CONVERGED; break; }
    if (k >= prm->max_iterations) { st->flags |= SAP_WORLD_MAXITER; break; }
    // Newton direction H dv = -grad
    SAPT(sapw_hessian)(P);
    st->nfactor++;
    if (SAPT(sapw_direction)(P)) { st->flags |= SAP_WORLD_FACTORFAIL; break; }
    // line search on phi(alpha) = l(v + alpha dv)
    SAP_REAL d2phi0 = SAPT(sapw_lineSetup)(P);
    SAPT(sapLineSearch) ls;
    SAPT(sapw_lsBegin)(&ls, prm, cost, SAPT(sapw_dot)(P->grad, P->dv, nv), d2phi0);
    while (ls.status == SAP_LS_RUNNING) {
      SAP_REAL phi, d1, d2;
      SAPT(sapw_lineEval)(P, ls.alpha, &phi, &d1, &d2);
      SAPT(sapw_lsFeed)(&ls, phi, d1, d2);
    }
    st->ls_iters += ls.iter;
    if (ls.status != SAP_LS_DONE) { st->flags |= SAP_WORLD_LSFAIL; break; }
    // commit v += alpha dv, re-evaluate, cost test (needs alpha > cost_min_alpha)
    alpha = ls.alpha;
    for (int i = 0; i < nv; i++) P->v[i] += alpha * P->dv[i];
    prev = cost;
    cost = SAPT(sapw_evaluate)(P, 1);
    k++;
    SAP_REAL m = (SAP_FABS(cost) + SAP_FABS(prev)) / 2;
    cost_ok = SAP_FABS(prev - cost) < (SAP_REAL)prm->cost_abs + (SAP_REAL)prm->cost_rel * m &&
              alpha > (SAP_REAL)prm->cost_min_alpha;
  }
  st->iters = k;
}
