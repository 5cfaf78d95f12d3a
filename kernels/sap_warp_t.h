/* The SAP solve of one world on one warp (template body in the contact objective precision;
 * include via sap_warp.h). The same per-item functions as the one-thread reference
 * (sap_problem_t.h, sap_newton_t.h, sap_world_t.h) run on the 32 lanes, and the one Newton
 * loop (sap_loop_t.h) runs over this file's lane primitives: contacts, scalar rows,
 * dofs and Newton-matrix entries are strided over lanes, sums are warp reductions that give
 * every lane the same value, so the Newton and line-search control flow stays uniform. Writes
 * of one phase are separated from the reads of the next by __syncwarp. Ordering of the sums
 * differs from the reference, so results agree to rounding, not bitwise; reruns are bitwise
 * equal (no atomics: every output has one writer). */

/* sum over the lanes; every lane gets the same value (butterfly: each step adds the same two
 * partial sums in both lanes of a pair, and addition commutes) */
SAP_DEV SAP_REAL SAPT(sapv_sum)(SAP_REAL x) {
  for (int o = SAPV_LANES / 2; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
  return x;
}

/* out = [J; S] x */
SAP_DEV void SAPT(sapv_constraintVelocities)(const SAPT(sapProblem)* P, const SAP_REAL* x, SAP_REAL* out,
                                              int lane) {
  if (P->nc > 0) {
    if (lane < 6)
      for (int b = 0; b < P->m->nbody; b++) SAPT(sapw_bodyVelocity)(P, x, b, lane);
    __syncwarp();
    for (int i = lane; i < P->nc; i += SAPV_LANES) SAPT(sapw_contactVelocity)(P, i, out);
  }
  for (int s = lane; s < P->ns; s += SAPV_LANES) out[P->cd * P->nc + s] = SAPT(sapw_rowVelocity)(P, s, x);
  __syncwarp();
}

/* out = J' gamma + S' gamma_s: each lane gathers the contact wrenches of its bodies, lanes
 * 0-5 sum the subtrees (one wrench component each), lanes project on their dofs */
SAP_DEV void SAPT(sapv_generalizedImpulse)(const SAPT(sapProblem)* P, const SAP_REAL* gam, SAP_REAL* out,
                                            int lane) {
  const sapModel* m = P->m;
  if (P->nc > 0) {
    for (int b = lane; b < m->nbody; b += SAPV_LANES) {
      SAP_REAL acc[6] = {0, 0, 0, 0, 0, 0};
      for (int i = 0; i < P->nc; i++)
        for (int s = 0; s < 2; s++)
          if (m->geom_bodyid[P->con_geom[2 * i + s]] == b && !SAPT(sapw_contactIdle)(P, i, gam)) {
            SAP_REAL F[6];
            SAPT(sapw_contactWrench)(P, i, s, gam, F);
            for (int k = 0; k < 6; k++) acc[k] += F[k];
          }
      for (int k = 0; k < 6; k++) P->body6[6 * b + k] = acc[k];
    }
    __syncwarp();
    if (lane < 6) SAPT(sapw_subtreeWrenches)(P, lane);
    __syncwarp();
  }
  for (int j = lane; j < P->nv; j += SAPV_LANES) out[j] = P->nc > 0 ? SAPT(sapw_dofImpulse)(P, j) : 0;
  __syncwarp();
  if (lane == 0) SAPT(sapw_rowImpulses)(P, gam, out);
  __syncwarp();
}

/* (A x)_i over row i's block of A (the model's tree blocks, kernels.h sapw_Arow): the dense
 * row's sum bit for bit, the terms left out being exact zeros (sapw_treeDot) */
SAP_DEV SAP_REAL SAPT(sapv_Adot)(const SAPT(sapProblem)* P, int i, const SAP_REAL* x) {
  int lo = sapw_Alo(P->m, i);
  return SAPT(sapw_rowDot)(sapw_Arow(P->m, P->A, P->nv, i) + lo, x + lo, sapw_Ahi(P->m, P->nv, i) - lo);
}

/* l(v) at P->v: vc, gamma, r = A (v - v*), jc = J'gamma, grad = r - jc (sapw_evaluate) */
SAP_DEV SAP_REAL SAPT(sapv_evaluate)(SAPT(sapProblem)* P, int lane) {
  int nv = P->nv;
  SAPT(sapv_constraintVelocities)(P, P->v, P->vc, lane);
  SAP_REAL acc[3] = {0, 0, 0};
  for (int i = lane; i < P->nc; i += SAPV_LANES) SAPT(sapw_contactCost)(P, i, 0, 1, acc);
  for (int s = lane; s < P->ns; s += SAPV_LANES) SAPT(sapw_rowCost)(P, s, 0, 1, acc);
  for (int i = lane; i < nv; i += SAPV_LANES) P->dv[i] = P->v[i] - (SAP_REAL)P->vstar[i];
  __syncwarp();
  SAP_REAL mom = 0;
  for (int i = lane; i < nv; i += SAPV_LANES) {
    P->r[i] = SAPT(sapv_Adot)(P, i, P->dv);
    mom += P->dv[i] * P->r[i];
  }
  __syncwarp();
  SAPT(sapv_generalizedImpulse)(P, P->gam, P->jc, lane);
  for (int j = lane; j < nv; j += SAPV_LANES) P->grad[j] = P->r[j] - P->jc[j];
  __syncwarp();
  P->mom = SAPT(sapv_sum)(mom) / 2;
  return P->mom + SAPT(sapv_sum)(acc[0]);
}

/* l(v) after the step v += alpha dv with r carried by the step (sapw_evaluateStep) */
SAP_DEV SAP_REAL SAPT(sapv_evaluateStep)(SAPT(sapProblem)* P, SAP_REAL alpha, int lane) {
  int nv = P->nv;
  SAPT(sapv_constraintVelocities)(P, P->v, P->vc, lane);
  SAP_REAL acc[3] = {0, 0, 0};
  for (int i = lane; i < P->nc; i += SAPV_LANES) SAPT(sapw_contactCost)(P, i, 0, 1, acc);
  for (int s = lane; s < P->ns; s += SAPV_LANES) SAPT(sapw_rowCost)(P, s, 0, 1, acc);
  SAP_REAL mom = 0;
  for (int i = lane; i < nv; i += SAPV_LANES) {
    P->r[i] += alpha * P->Adv[i];
    P->dv[i] = P->v[i] - (SAP_REAL)P->vstar[i];
    mom += P->dv[i] * P->r[i];
  }
  __syncwarp();
  SAPT(sapv_generalizedImpulse)(P, P->gam, P->jc, lane);
  for (int j = lane; j < nv; j += SAPV_LANES) P->grad[j] = P->r[j] - P->jc[j];
  __syncwarp();
  P->mom = SAPT(sapv_sum)(mom) / 2;
  return P->mom + SAPT(sapv_sum)(acc[0]);
}

/* H = A + sum J'GJ + sum G_s S'S: per contact, lane 0 lists the chains' dofs, the lanes
 * compute their Jacobian columns, then add the (p, q) entries of the outer product (distinct
 * entries: one writer each) */
/* contact c's J_c' G_c J_c into H, G (cd x cd) held by every lane */
SAP_DEV void SAPT(sapv_contactHessianAdd)(SAPT(sapProblem)* P, int c, SAP_REAL* G, int lane) {
  if (!SAPT(sapw_contactHessian)(P, c, G)) return;  // every lane: the same cd x cd; idle: G = 0
  int n = lane == 0 ? SAPT(sapw_contactChain)(P, c) : 0;
  n = __shfl_sync(0xffffffffu, n, 0);
  __syncwarp();
  for (int k = lane; k < n; k += SAPV_LANES) SAPT(sapw_contactRowColumn)(P, c, P->chain[k]);
  __syncwarp();
  for (int t = lane; t < n * n; t += SAPV_LANES) SAPT(sapw_hessianEntry)(P, G, t / n, t % n);
  __syncwarp();
  for (int k = lane; k < n; k += SAPV_LANES) SAPT(sapw_clearColumn)(P, P->chain[k]);
  __syncwarp();
}

/* the same for 4- and 6-row contacts, in a frame of its own (SAP_HD_COLD) */
static __device__ __noinline__ void SAPT(sapv_contactHessianAddN)(SAPT(sapProblem)* P, int c, int lane) {
  SAP_REAL G[SAP_CDIM_MAX * SAP_CDIM_MAX];
  SAPT(sapv_contactHessianAdd)(P, c, G, lane);
}

SAP_DEV void SAPT(sapv_hessian)(SAPT(sapProblem)* P, int lane) {
  int nv = P->nv;
  for (int t = lane; t < nv * nv; t += SAPV_LANES)
    if (t % nv <= t / nv) P->H[t] = (SAP_REAL)sapw_Aat(P->m, P->A, nv, t / nv, t % nv);
  __syncwarp();
  for (int c = 0; c < P->nc; c++) {
    if (P->cd == 3) {
      SAP_REAL G[9];
      SAPT(sapv_contactHessianAdd)(P, c, G, lane);
    } else {
      SAPT(sapv_contactHessianAddN)(P, c, lane);
    }
  }
  if (lane == 0)
    for (int s = 0; s < P->ns; s++) SAPT(sapw_hessianRow)(P, s);
  __syncwarp();
}

/* Lbuf = H (lower triangle, row-major: cuSOLVER's column-major upper triangle) and x = -grad
 * right after it, in the linear-solve precision; Lbuf is P->L or its shared-memory place */
SAP_DEV void SAPT(sapv_directionSetup)(SAPT(sapProblem)* P, void* Lbuf, int lane) {
  int nv = P->nv;
  if (P->lin_fp32) {
    float *L = (float*)Lbuf, *x = L + nv * nv;
    for (int t = lane; t < nv * nv; t += SAPV_LANES)
      if (t % nv <= t / nv) L[t] = (float)P->H[t];
    for (int i = lane; i < nv; i += SAPV_LANES) x[i] = (float)-P->grad[i];
  } else {
    double *L = (double*)Lbuf, *x = L + nv * nv;
    for (int t = lane; t < nv * nv; t += SAPV_LANES)
      if (t % nv <= t / nv) L[t] = (double)P->H[t];
    for (int i = lane; i < nv; i += SAPV_LANES) x[i] = (double)-P->grad[i];
  }
  __syncwarp();
}

/* dv = x (the solution right after the factor in Lbuf) */
SAP_DEV void SAPT(sapv_directionRead)(SAPT(sapProblem)* P, const void* Lbuf, int lane) {
  int nv = P->nv;
  if (P->lin_fp32) {
    const float* x = (const float*)Lbuf + nv * nv;
    for (int i = lane; i < nv; i += SAPV_LANES) P->dv[i] = (SAP_REAL)x[i];
  } else {
    const double* x = (const double*)Lbuf + nv * nv;
    for (int i = lane; i < nv; i += SAPV_LANES) P->dv[i] = (SAP_REAL)x[i];
  }
  __syncwarp();
}

/* L = I, x = 0: what a batched factorization over every world finds for a world that stopped */
SAP_DEV void SAPT(sapv_directionIdentity)(SAPT(sapProblem)* P, int lane) {
  int nv = P->nv;
  for (int t = lane; t < nv * (nv + 1); t += SAPV_LANES) {
    int one = t < nv * nv && t % nv == t / nv;
    if (P->lin_fp32) ((float*)P->L)[t] = (float)one;
    else ((double*)P->L)[t] = (double)one;
  }
  __syncwarp();
}

/* dv = -H^-1 grad by the warp Cholesky, in shared memory when the kernel gave it a place
 * (P->Lfast), else in the scratch; returns 0 or the failed pivot + 1 */
SAP_DEV int SAPT(sapv_direction)(SAPT(sapProblem)* P, int lane) {
  int nv = P->nv, info;
  void* Lbuf = P->Lfast ? P->Lfast : P->L;
  SAPT(sapv_directionSetup)(P, Lbuf, lane);
  if (P->lin_fp32) {
    float* L = (float*)Lbuf;
    info = sapv_cholFactor_f32(L, nv, nv, lane);
    if (!info) sapv_cholSolve_f32(L, nv, nv, L + nv * nv, lane);
  } else {
    double* L = (double*)Lbuf;
    info = sapv_cholFactor_f64(L, nv, nv, lane);
    if (!info) sapv_cholSolve_f64(L, nv, nv, L + nv * nv, lane);
  }
  SAPT(sapv_directionRead)(P, Lbuf, lane);
  return info;
}

/* phi, phi', phi'' at alpha (sapw_lineEval) */
SAP_DEV void SAPT(sapv_lineEval)(SAPT(sapProblem)* P, SAP_REAL alpha, SAP_REAL* phi, SAP_REAL* d1, SAP_REAL* d2,
                                 int lane) {
  SAP_REAL acc[3] = {0, 0, 0};
  for (int i = lane; i < P->nc; i += SAPV_LANES) SAPT(sapw_contactCost)(P, i, alpha, 0, acc);
  for (int s = lane; s < P->ns; s += SAPV_LANES) SAPT(sapw_rowCost)(P, s, alpha, 0, acc);
  SAP_REAL c = SAPT(sapv_sum)(acc[0]), e1 = SAPT(sapv_sum)(acc[1]), e2 = SAPT(sapv_sum)(acc[2]);
  *phi = P->mom + alpha * P->m1 + alpha * alpha / 2 * P->m2 + c;
  *d1 = P->m1 + alpha * P->m2 + e1;
  *d2 = P->m2 + e2;
}

/* line data for dv (sapw_lineSetup); returns phi''(0) when need_d2, else 0 */
SAP_DEV SAP_REAL SAPT(sapv_lineSetup)(SAPT(sapProblem)* P, int need_d2, int lane) {
  int nv = P->nv;
  SAP_REAL m1 = 0, m2 = 0;
  for (int i = lane; i < nv; i += SAPV_LANES) {
    P->Adv[i] = SAPT(sapv_Adot)(P, i, P->dv);
    m1 += P->dv[i] * P->r[i];
    m2 += P->dv[i] * P->Adv[i];
  }
  P->m1 = SAPT(sapv_sum)(m1);
  P->m2 = SAPT(sapv_sum)(m2);
  SAPT(sapv_constraintVelocities)(P, P->dv, P->dvc, lane);
  if (!need_d2) return 0;
  SAP_REAL phi, d1, d2;
  SAPT(sapv_lineEval)(P, 0, &phi, &d1, &d2, lane);
  return d2;
}

/* optimality (sapw_optimal) */
SAP_DEV int SAPT(sapv_optimal)(SAPT(sapProblem)* P, const sapSolveParams* prm, int lane) {
  SAP_REAL res = 0, pn = 0, jn = 0;
  for (int i = lane; i < P->nv; i += SAPV_LANES) {
    SAP_REAL a = P->dscale[i] * P->grad[i], b = P->dscale[i] * (P->r[i] + P->pstar[i]), c = P->dscale[i] * P->jc[i];
    res += a * a;
    pn += b * b;
    jn += c * c;
  }
  res = SAP_SQRT(SAPT(sapv_sum)(res));
  pn = SAP_SQRT(SAPT(sapv_sum)(pn));
  jn = SAP_SQRT(SAPT(sapv_sum)(jn));
  SAP_REAL scale = pn > jn ? pn : jn;
  return res <= (SAP_REAL)prm->opt_abs + (SAP_REAL)prm->opt_rel * scale;
}

/* p* = A v* on the lanes (A's tree blocks; sap_loop_t.h's momentum scale) */
SAP_DEV void SAPT(sapv_momentumScale)(SAPT(sapProblem)* P, int lane) {
  int nv = P->nv;
  for (int i = lane; i < nv; i += SAPV_LANES) {
    SAP_REAL s = 0;
    const double* Ai = sapw_Arow(P->m, P->A, nv, i);  // A's tree block, by column
    for (int j = sapw_Alo(P->m, i), hi = sapw_Ahi(P->m, nv, i); j < hi; j++) s += (SAP_REAL)Ai[j] * (SAP_REAL)P->vstar[j];
    P->pstar[i] = s;
  }
  __syncwarp();
}

/* ---- the Newton loop on one warp: sapv_warmStart, sapv_newtonBegin, sapv_newtonStop,
 * sapv_newtonStep, sapv_newtonIterate, sapv_newton(P, prm, st, lane) (sap_loop_t.h) ---------- */
#define SAPL(name) SAPT(sapv_##name)
#define SAPL_FN SAP_DEV
#define SAPL_LANES SAPV_LANES
#define SAPL_LANE , int lane
#define SAPL_LANE_ARG , lane
#define SAPL_LANE_ID lane
#define SAPL_SUM(x) SAPT(sapv_sum)(x)
#define SAPL_SYNC() __syncwarp()
#define SAPL_NDOF(P) ((P)->nv)
#define SAPL_DOF(P, a) (a)
#include "sap_loop_t.h"

/* build world w's problem on one warp: lanes build the contacts, lane 0 the scalar rows and
 * the participation; returns nc + ns */
SAP_DEV int SAPT(sapv_buildWorld)(const sapModel* m, const sapData* d, int w, const sapSolveParams* prm,
                                  SAPT(sapProblem)* P, int lane) {
  int nv = m->nv;
  SAPT(sapw_worldProblem)(m, d, w, prm, P);
  for (int k = lane; k < P->cd * nv; k += SAPV_LANES) P->rows[k] = 0;
  __syncwarp();
  if (prm->weight_mode == SAP_WEIGHT_DIAG_DELASSUS) {  // shares the rows buffer: one lane
    if (lane == 0)
      for (int i = 0; i < P->nc; i++) SAPT(sapw_buildContact)(m, d, w, i, prm, P);
  } else {
    for (int i = lane; i < P->nc; i += SAPV_LANES) SAPT(sapw_buildContact)(m, d, w, i, prm, P);
  }
  int ns = 0;
  if (lane == 0) {
    ns = SAPT(sapw_buildRows)(m, d, w, prm, P);
    if (P->nc + P->ns > 0) SAPT(sapw_participation)(m, d, w, P);
  }
  P->ns = __shfl_sync(0xffffffffu, ns, 0);
  __syncwarp();
  return P->nc + P->ns;
}

/* the solve's outputs: vnext (when the world has constraints) and the diagnostics */
SAP_DEV void SAPT(sapv_writeResult)(const sapData* d, int w, const sapSolveParams* prm, const SAPT(sapProblem)* P,
                                    const sapSolveStats* st, int solved, int lane) {
  double* vnext = d->vnext + (long)w * P->nv;
  for (int j = lane; j < P->nv; j += SAPV_LANES) vnext[j] = solved ? (double)P->v[j] : P->vstar[j];
  if (lane == 0) sapw_recordSolve(d, w, st, st->flags);
  __syncwarp();  // vnext written by every lane
  if (lane == 0) SAPT(sapw_overflowFlag)(P->m, d, w, P, vnext, prm->h);
  __syncwarp();
}

/* solve world w on one warp (sapw_solveWorld), the whole Newton loop in this call; a world
 * without constraints takes v = v*. Lfast: the warp's shared-memory place for the Cholesky
 * (nv (nv + 1) values of the linear-solve precision), or null */
SAP_DEV void SAPT(sapv_solveWorld)(const sapModel* m, const sapData* d, int w, const sapSolveParams* prm,
                                   void* Lfast, int lane) {
  SAPT(sapProblem) P;
  sapSolveStats st = {0, 0, 0, SAP_WORLD_CONVERGED, 0};
  int solved = SAPT(sapv_buildWorld)(m, d, w, prm, &P, lane) > 0;
  P.Lfast = Lfast;
  if (solved) SAPT(sapv_newton)(&P, prm, &st, lane);
  SAPT(sapv_writeResult)(d, w, prm, &P, &st, solved, lane);
}

/* ---- per-iteration launches (newton_loop=while or fixed; kernels/solve.cu) -----------------
 * begin: build, start the loop; then per iteration either iterate (warp Cholesky) or
 * assemble, cuSOLVER's batched potrf/potrs, advance; then finish. The loop state is kept in
 * the world's scratch (P->loop); a world whose loop stopped returns at once from later
 * iterations. active, when not null, counts the worlds still iterating after the launch. */

/* world w's problem over its scratch with the loop state saved there; returns lp->active */
SAP_DEV int SAPT(sapv_loopLoad)(const sapModel* m, const sapData* d, int w, const sapSolveParams* prm,
                                SAPT(sapProblem)* P, SAPT(sapLoop)* lp) {
  SAPT(sapw_worldProblem)(m, d, w, prm, P);
  *lp = *P->loop;
  P->ns = lp->ns;
  P->mom = lp->mom;
  return lp->active;
}

/* save the loop state (every lane holds the same copy; lane 0 writes) and count the world */
SAP_DEV void SAPT(sapv_loopStore)(SAPT(sapProblem)* P, const SAPT(sapLoop)* lp, int* active, int lane) {
  __syncwarp();
  if (lane == 0) {
    *P->loop = *lp;
    if (active && lp->active) atomicAdd(active, 1);
  }
  __syncwarp();
}

/* build world w and start its loop; the address of its factor and right-hand side goes to
 * Lptr[w], Xptr[w] (cuSOLVER's batched arrays; skipped when null) */
SAP_DEV void SAPT(sapv_loopBegin)(const sapModel* m, const sapData* d, int w, const sapSolveParams* prm, void** Lptr,
                                  void** Xptr, int* active, int lane) {
  SAPT(sapProblem) P;
  SAPT(sapLoop) lp;
  lp.cost = lp.mom = 0;
  lp.cost_ok = lp.active = 0;
  lp.st.iters = lp.st.ls_iters = lp.st.nfactor = lp.st.ls_evals = 0;
  lp.st.flags = SAP_WORLD_CONVERGED;
  if (sapw_frozen(d, w)) {  // frozen: v = qvel (held by the retry: v as it is), diagnostics kept
    SAPT(sapw_worldProblem)(m, d, w, prm, &P);
    lp.solve = lp.ns = 0;
    for (int j = lane; j < m->nv && !sapw_held(d, w); j += SAPV_LANES)
      d->vnext[(long)w * m->nv + j] = d->qvel[(long)w * m->nv + j];
  } else {
    lp.solve = SAPT(sapv_buildWorld)(m, d, w, prm, &P, lane) > 0;
    lp.ns = P.ns;
    if (lp.solve) SAPT(sapv_newtonBegin)(&P, prm, &lp, lane);
  }
  if (Lptr) {
    if (!lp.active) SAPT(sapv_directionIdentity)(&P, lane);
    if (lane == 0) {
      int bytes = P.lin_fp32 ? 4 : 8;
      Lptr[w] = P.L;
      Xptr[w] = (char*)P.L + (long)bytes * P.nv * P.nv;
    }
  }
  SAPT(sapv_loopStore)(&P, &lp, active, lane);
}

/* one Newton iteration of world w with the warp Cholesky (Lfast as in sapv_solveWorld) */
SAP_DEV void SAPT(sapv_loopIterate)(const sapModel* m, const sapData* d, int w, const sapSolveParams* prm,
                                    void* Lfast, int* active, int lane) {
  SAPT(sapProblem) P;
  SAPT(sapLoop) lp;
  if (!SAPT(sapv_loopLoad)(m, d, w, prm, &P, &lp)) return;
  P.Lfast = Lfast;
  SAPT(sapv_newtonIterate)(&P, prm, &lp, lane);
  SAPT(sapv_loopStore)(&P, &lp, active, lane);
}

/* first half of an iteration for cuSOLVER: the stop rules, then H and x = -grad in L (or
 * L = I once the loop stopped) */
SAP_DEV void SAPT(sapv_loopAssemble)(const sapModel* m, const sapData* d, int w, const sapSolveParams* prm,
                                     int lane) {
  SAPT(sapProblem) P;
  SAPT(sapLoop) lp;
  if (!SAPT(sapv_loopLoad)(m, d, w, prm, &P, &lp)) return;
  if (SAPT(sapv_newtonStop)(&P, prm, &lp, lane)) {
    SAPT(sapv_directionIdentity)(&P, lane);
  } else {
    SAPT(sapv_hessian)(&P, lane);
    lp.st.nfactor++;
    SAPT(sapv_directionSetup)(&P, P.L, lane);
  }
  SAPT(sapv_loopStore)(&P, &lp, (int*)0, lane);
}

/* second half: the factorization's info (0: dv = x), then the line search and commit */
SAP_DEV void SAPT(sapv_loopAdvance)(const sapModel* m, const sapData* d, int w, const sapSolveParams* prm,
                                    const int* info, int* active, int lane) {
  SAPT(sapProblem) P;
  SAPT(sapLoop) lp;
  if (!SAPT(sapv_loopLoad)(m, d, w, prm, &P, &lp)) return;
  if (info[w] != 0) {
    lp.st.flags |= SAP_WORLD_FACTORFAIL;
    lp.active = 0;
  } else {
    SAPT(sapv_directionRead)(&P, P.L, lane);
    SAPT(sapv_newtonStep)(&P, prm, &lp, lane);
  }
  if (!lp.active) SAPT(sapv_directionIdentity)(&P, lane);
  SAPT(sapv_loopStore)(&P, &lp, active, lane);
}

/* after the last launch: the stop rules for a world still iterating (the cap; MAXITER too when
 * no rule holds, as the launches ran out), then vnext and the diagnostics as sapv_solveWorld
 * writes them */
SAP_DEV void SAPT(sapv_loopFinish)(const sapModel* m, const sapData* d, int w, const sapSolveParams* prm, int lane) {
  if (sapw_frozen(d, w)) return;
  SAPT(sapProblem) P;
  SAPT(sapLoop) lp;
  if (SAPT(sapv_loopLoad)(m, d, w, prm, &P, &lp) && !SAPT(sapv_newtonStop)(&P, prm, &lp, lane))
    lp.st.flags |= SAP_WORLD_MAXITER;  // still iterating when the launches ran out
  SAPT(sapv_writeResult)(d, w, prm, &P, &lp.st, lp.solve, lane);
}
