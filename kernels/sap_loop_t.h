/* The SAP Newton loop (drake_sap_spec.md §4.2, sapwarp_spec.md §6.3), written once over a
 * small lane primitive and instantiated twice per precision: for one lane (the CPU solve and
 * the thread-per-world GPU solve, sap_newton_t.h: names sapw_) and for the 32 lanes of a warp
 * (sap_warp_t.h: names sapv_). The stop rules, the line-search driver, the commit and the cost
 * test live only here. Template body; the including file defines
 *   SAPL(name)      the instance's name of a loop function (SAPT(sapw_##name), SAPT(sapv_##name))
 *   SAPL_FN         the qualifier (SAP_HD, SAP_DEV)
 *   SAPL_LANES      lanes per world (1, SAPV_LANES)
 *   SAPL_LANE, SAPL_LANE_ARG   the lane parameter in declarations (", int lane") and calls
 *                   (", lane"); both empty for one lane, where SAPL_LANE_ID is 0
 *   SAPL_SUM(x)     x summed over the lanes, every lane gets the sum (x for one lane)
 *   SAPL_SYNC()     the barrier between one phase's writes and the next phase's reads
 *   SAPL_NDOF(P), SAPL_DOF(P, a)   the dofs of the loop's own vectors: every dof (the warp
 *                   solve; the one-lane solve of the whole problem), or one island's (the
 *                   one-lane solve's island view, sapw_newtonIslands)
 * and the per-instance primitives SAPL(evaluate), SAPL(evaluateStep) (l after v += alpha dv,
 * A (v - v*) carried by the step), SAPL(optimal), SAPL(hessian),
 * SAPL(direction), SAPL(lineSetup), SAPL(lineEval) and SAPL(momentumScale) (p* = A v*).
 * For one lane every loop below runs i = 0, 1, ..., nv - 1 in order, so the CPU results are
 * those of the loop as it was written for one lane alone, bit for bit (golden hashes). */

/* the warm start (sapwarp §6.1 takes v0 = qvel): with warm_start=extrapolate, the
 * extrapolation v0 = qvel + (qvel - v_prev) = qvel + h qacc of the last step on the
 * participating dofs (MuJoCo's qacc_warmstart in velocity form). It is taken without
 * comparing costs with qvel: on the humanoid with random controls that comparison kept qvel
 * often enough to cost more iterations (1.40 vs 1.30 per step with newton_wolfe), and a
 * choice between two costs that are nearly equal flips under rounding, which would part the
 * GPU's warp solve from the CPU's by the solve tolerance rather than by rounding. Returns
 * l(v) at the start, P evaluated there. */
SAPL_FN SAP_REAL SAPL(warmStart)(SAPT(sapProblem)* P, const sapSolveParams* prm SAPL_LANE) {
  if (prm->warm_extrapolate) {
    for (int a = SAPL_LANE_ID; a < SAPL_NDOF(P); a += SAPL_LANES) {
      int i = SAPL_DOF(P, a);
      if (P->dscale[i] != 0) P->v[i] = 2 * P->v[i] - (SAP_REAL)P->vprev[i];
    }
    SAPL_SYNC();
  }
  return SAPL(evaluate)(P SAPL_LANE_ARG);
}

/* loop start: p* = A v* (the momentum A v = A (v - v*) + p* of the optimality scale), l(v) at
 * the warm start */
SAPL_FN void SAPL(newtonBegin)(SAPT(sapProblem)* P, const sapSolveParams* prm, SAPT(sapLoop)* lp SAPL_LANE) {
  SAPL(momentumScale)(P SAPL_LANE_ARG);
  lp->st.iters = lp->st.ls_iters = lp->st.nfactor = lp->st.flags = lp->st.ls_evals = 0;
  lp->cost = SAPL(warmStart)(P, prm SAPL_LANE_ARG);
  lp->mom = P->mom;
  lp->cost_ok = 0;
  lp->active = 1;
}

/* the stop rules checked before each iteration, in order: a non-finite cost (line-search
 * failure), optimality or the last step's cost test (converged, checked before factorizing),
 * the iteration cap. Returns 1 (flag set, loop inactive) when the loop stops here */
SAPL_FN int SAPL(newtonStop)(SAPT(sapProblem)* P, const sapSolveParams* prm, SAPT(sapLoop)* lp SAPL_LANE) {
  if (!isfinite(lp->cost)) lp->st.flags |= SAP_WORLD_LSFAIL;
  else if (SAPL(optimal)(P, prm SAPL_LANE_ARG) || lp->cost_ok) lp->st.flags |= SAP_WORLD_CONVERGED;
  else if (lp->st.iters >= prm->max_iterations) lp->st.flags |= SAP_WORLD_MAXITER;
  else return 0;
  lp->active = 0;
  return 1;
}

/* with the direction dv: the line search on phi(alpha) = l(v + alpha dv), the commit
 * v += alpha dv, re-evaluation and the cost test |l_prev - l| < abs + rel (|l| + |l_prev|) / 2
 * with alpha > cost_min_alpha. Returns 1 (flag set, loop inactive) when the line search failed */
SAPL_FN int SAPL(newtonStep)(SAPT(sapProblem)* P, const sapSolveParams* prm, SAPT(sapLoop)* lp SAPL_LANE) {
  int nd = SAPL_NDOF(P);
  SAP_REAL d2phi0 = SAPL(lineSetup)(P, prm->line_search == SAP_LS_EXACT SAPL_LANE_ARG);
  SAP_REAL g = 0;
  for (int a = SAPL_LANE_ID; a < nd; a += SAPL_LANES) {
    int i = SAPL_DOF(P, a);
    g += P->grad[i] * P->dv[i];
  }
  SAPT(sapLineSearch) ls;
  SAPT(sapw_lsBegin)(&ls, prm, lp->cost, SAPL_SUM(g), d2phi0);
  while (ls.status == SAP_LS_RUNNING) {
    SAP_REAL phi, d1, d2;
    SAPL(lineEval)(P, ls.alpha, &phi, &d1, &d2 SAPL_LANE_ARG);
    SAPT(sapw_lsFeed)(&ls, phi, d1, d2);
  }
  lp->st.ls_iters += ls.iter;
  lp->st.ls_evals += ls.neval;
  if (ls.status != SAP_LS_DONE) {
    lp->st.flags |= SAP_WORLD_LSFAIL;
    lp->active = 0;
    return 1;
  }
  SAP_REAL alpha = ls.alpha;
  for (int a = SAPL_LANE_ID; a < nd; a += SAPL_LANES) {
    int i = SAPL_DOF(P, a);
    P->v[i] += alpha * P->dv[i];
  }
  SAPL_SYNC();
  SAP_REAL prev = lp->cost;
  lp->cost = SAPL(evaluateStep)(P, alpha SAPL_LANE_ARG);  // r carried by the step
  lp->mom = P->mom;
  lp->st.iters++;
  SAP_REAL m = (SAP_FABS(lp->cost) + SAP_FABS(prev)) / 2;
  lp->cost_ok = SAP_FABS(prev - lp->cost) < (SAP_REAL)prm->cost_abs + (SAP_REAL)prm->cost_rel * m &&
                alpha > (SAP_REAL)prm->cost_min_alpha;
  return 0;
}

/* one Newton iteration: the stop rules, H, the direction H dv = -grad, the step. Returns 1
 * when the loop stopped */
SAPL_FN int SAPL(newtonIterate)(SAPT(sapProblem)* P, const sapSolveParams* prm, SAPT(sapLoop)* lp SAPL_LANE) {
  if (SAPL(newtonStop)(P, prm, lp SAPL_LANE_ARG)) return 1;
  SAPL(hessian)(P SAPL_LANE_ARG);
  lp->st.nfactor++;
  if (SAPL(direction)(P SAPL_LANE_ARG)) {
    lp->st.flags |= SAP_WORLD_FACTORFAIL;
    lp->active = 0;
    return 1;
  }
  return SAPL(newtonStep)(P, prm, lp SAPL_LANE_ARG);
}

/* the whole loop from P->v with its state in registers; on return P->v holds the solution (or
 * the last iterate) and st the iterations, line-search work and stop flags */
SAPL_FN void SAPL(newton)(SAPT(sapProblem)* P, const sapSolveParams* prm, sapSolveStats* st SAPL_LANE) {
  SAPT(sapLoop) lp;
  SAPL(newtonBegin)(P, prm, &lp SAPL_LANE_ARG);
  while (!SAPL(newtonIterate)(P, prm, &lp SAPL_LANE_ARG)) {
  }
  *st = lp.st;
}

/* the lane parameters are this template's: its includer defines them for one instantiation */
#undef SAPL
#undef SAPL_FN
#undef SAPL_LANES
#undef SAPL_LANE
#undef SAPL_LANE_ARG
#undef SAPL_LANE_ID
#undef SAPL_SUM
#undef SAPL_SYNC
#undef SAPL_NDOF
#undef SAPL_DOF
