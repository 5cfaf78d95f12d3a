/* The three SAP line searches on phi(alpha) = l(v + alpha dv) as resumable state machines
 * (template body; include via sap_solve.h). The caller evaluates phi (and phi', phi'' when
 * ls->need asks) at ls->alpha and feeds the values back until ls->status != SAP_LS_RUNNING;
 * the same code serves the CPU loop and a GPU thread. Constants: seed 002 "Line Search",
 * sapwarp_spec.md §7.1-7.3, drake_sap_spec.md §4.4-4.6 (reference version). */

typedef struct SAPT(sapLineSearch) {
  int kind;       /* SAP_LS_MONOTONE | SAP_LS_ARMIJO | SAP_LS_EXACT */
  int status;     /* SAP_LS_RUNNING, SAP_LS_DONE or a negative SAP_LS_FAIL_* code */
  int need;       /* values wanted at alpha: 1 phi, 2 phi and phi', 3 phi, phi' and phi'' */
  int iter;       /* iterations (drake's count: the alpha_max probe is not counted) */
  int neval;      /* evaluations fed (every trial, the probe included) */
  int stage;      /* 0: probing alpha_max (armijo, exact); 1: main loop; 2: armijo rescue */
  int maxit;
  SAP_REAL alpha;                 /* the trial to evaluate; the accepted step when done */
  SAP_REAL phi0, dphi0, d2phi0;   /* phi(0), phi'(0), phi''(0) */
  SAP_REAL c, rho, slop_rel, cost_abs, cost_rel;
  SAP_REAL aprev, phiprev, slop;          /* armijo */
  SAP_REAL xl, xu, fu, mdx, mdx_prev, xtol;  /* exact: bracket and Newton-bisection state */
  SAP_REAL fl, fprev, abest, phibest;        /* newton_wolfe: phi' at xl, |phi'| of the last
                                                trial, the lowest Armijo point */
  SAP_REAL w1, w2;                           /* newton_wolfe: the bracket's width one and two
                                                trials ago */
} SAPT(sapLineSearch);

SAP_HD void SAPT(sapw_lsFinish)(SAPT(sapLineSearch)* ls, int status, SAP_REAL alpha) {
  ls->status = status;
  ls->alpha = alpha;
  ls->need = 0;
}

/* start a search: phi(0), phi'(0) = grad . dv, phi''(0) = dv' H dv (exact fallback seed) */
SAP_HD void SAPT(sapw_lsBegin)(SAPT(sapLineSearch)* ls, const sapSolveParams* prm, SAP_REAL phi0,
                               SAP_REAL dphi0, SAP_REAL d2phi0) {
  ls->aprev = ls->phiprev = ls->slop = 0;
  ls->xl = ls->xu = ls->fu = ls->mdx = ls->mdx_prev = ls->xtol = 0;
  ls->fl = ls->fprev = ls->abest = 0;
  ls->w1 = ls->w2 = (SAP_REAL)INFINITY;
  ls->phibest = phi0;
  ls->kind = prm->line_search;
  ls->maxit = prm->ls_max_iterations;
  ls->c = (SAP_REAL)prm->armijo_c;
  ls->rho = (SAP_REAL)prm->rho;
  ls->slop_rel = (SAP_REAL)prm->ls_slop;
  ls->cost_abs = (SAP_REAL)prm->cost_abs;
  ls->cost_rel = (SAP_REAL)prm->cost_rel;
  ls->phi0 = phi0; ls->dphi0 = dphi0; ls->d2phi0 = d2phi0;
  ls->iter = 0; ls->neval = 0; ls->stage = 0; ls->status = SAP_LS_RUNNING;
  // a non-descent direction is a failure for every variant (never silently accepted)
  if (!(dphi0 < 0) || !isfinite(phi0)) { SAPT(sapw_lsFinish)(ls, SAP_LS_FAIL_DESCENT, 0); return; }
  if (ls->kind == SAP_LS_MONOTONE) { ls->alpha = 1; ls->need = 1; ls->stage = 1; }
  else if (ls->kind == SAP_LS_ARMIJO) { ls->alpha = 1 / ls->rho; ls->need = 2; }
  else if (ls->kind == SAP_LS_NEWTON) {
    ls->alpha = 1; ls->need = 3; ls->stage = 1;
    ls->xl = 0; ls->fl = dphi0; ls->xu = ls->fu = (SAP_REAL)INFINITY; ls->fprev = -dphi0;
    // a decrease already below the cost tolerance: the Newton step (as exact_root, drake §4.4)
    if (-dphi0 < ls->cost_abs + ls->cost_rel * SAP_FABS(phi0)) SAPT(sapw_lsFinish)(ls, SAP_LS_DONE, 1);
  }
  else { ls->alpha = (SAP_REAL)SAP_LS_EXACT_ALPHA_MAX; ls->need = 3; }
}

/* monotone_decay: alpha = 1, 1/2, 1/4, ...; accept phi <= phi0 + 1e-14 + 1e-12 |phi0|;
 * fail below alpha = 1e-8 or at the iteration cap */
SAP_HD void SAPT(sapw_lsMonotone)(SAPT(sapLineSearch)* ls, SAP_REAL phi) {
  ls->iter++;
  SAP_REAL phi0 = ls->phi0;
  if (phi <= phi0 + (SAP_REAL)1e-14 + (SAP_REAL)1e-12 * SAP_FABS(phi0)) {
    SAPT(sapw_lsFinish)(ls, SAP_LS_DONE, ls->alpha);
    return;
  }
  ls->alpha /= 2;
  if (ls->alpha < (SAP_REAL)1e-8 || ls->iter >= ls->maxit) SAPT(sapw_lsFinish)(ls, SAP_LS_FAIL_SMALL, 0);
}

/* armijo sufficient decrease phi(a) < phi0 + c a phi'(0) */
SAP_HD int SAPT(sapw_lsArmijoOk)(const SAPT(sapLineSearch)* ls, SAP_REAL a, SAP_REAL phi) {
  return phi < ls->phi0 + ls->c * a * ls->dphi0;
}

/* armijo_decay rescue past the iteration cap (stage 2). Neither Drake (§4.5, throws) nor
 * SAP Warp (§7.2, status -2 and v unchanged) goes on here, but the geometric schedule
 * 1.25, 1, 0.8, ... 0.8^38 cannot reach below alpha = 2.1e-4, and SAP needs smaller steps
 * whenever the Newton matrix was built with a near-rigid constraint inactive that the step
 * then drives deep into: a joint limit (beta = 0.1, R = 2.5e-4 w) whose iterate sits just
 * outside its kink (G = 0) while the direction pushes the joint through it, so phi rises with
 * a curvature ~1e4 times phi''(0) and the line minimum lies at alpha ~ 1e-4 (the humanoid
 * with random controls: ~1% of world-steps failed under approx32, approx64 and drake alike,
 * so not an fp32 linear-solve issue; the directions were exact Newton steps). The
 * cost is convex, so sufficient decrease holds for every small enough alpha; we shrink by the
 * minimiser of the quadratic through phi(0), phi'(0), phi(a) (Nocedal-Wright 3.58),
 * safeguarded to [a/10, a/2]; phi - phi0 - a phi'(0) > (c - 1) a phi'(0) > 0 since Armijo
 * failed, and a non-finite phi gives a/10. At most SAP_LS_ARMIJO_RESCUE more trials, then
 * the failure is flagged as before. Every search the references accept is unchanged. */
SAP_HD void SAPT(sapw_lsArmijoShrink)(SAPT(sapLineSearch)* ls, SAP_REAL a, SAP_REAL phi) {
  if (ls->iter >= ls->maxit + SAP_LS_ARMIJO_RESCUE) { SAPT(sapw_lsFinish)(ls, SAP_LS_FAIL_SMALL, 0); return; }
  SAP_REAL aq = -ls->dphi0 * a * a / (2 * (phi - ls->phi0 - a * ls->dphi0));
  if (!(aq >= a / 10)) aq = a / 10;
  if (aq > a / 2) aq = a / 2;
  ls->stage = 2; ls->need = 1;
  ls->alpha = aq;
}

SAP_HD void SAPT(sapw_lsArmijoRescue)(SAPT(sapLineSearch)* ls, SAP_REAL phi) {
  ls->iter++;
  if (SAPT(sapw_lsArmijoOk)(ls, ls->alpha, phi)) { SAPT(sapw_lsFinish)(ls, SAP_LS_DONE, ls->alpha); return; }
  SAPT(sapw_lsArmijoShrink)(ls, ls->alpha, phi);
}

/* armijo_decay (drake §4.5, sapwarp §7.2): probe alpha_max = 1/rho and keep it while
 * phi'(alpha_max) < slop; else alpha = 1, rho, rho^2, ... with a flat-slope exit and a
 * step back to the previous (larger) alpha once the cost rises again */
SAP_HD void SAPT(sapw_lsArmijo)(SAPT(sapLineSearch)* ls, SAP_REAL phi, SAP_REAL dphi) {
  if (ls->stage == 2) { SAPT(sapw_lsArmijoRescue)(ls, phi); return; }
  if (ls->stage == 0) {
    int ok = isfinite(phi) && isfinite(dphi);
    if (ok && dphi < 0) { SAPT(sapw_lsFinish)(ls, SAP_LS_DONE, ls->alpha); return; }
    SAP_REAL m = ((ok ? SAP_FABS(phi) : 0) + SAP_FABS(ls->phi0)) / 2;
    ls->slop = ls->slop_rel / 10 * (m > 1 ? m : 1);
    if (ok && dphi < ls->slop) { SAPT(sapw_lsFinish)(ls, SAP_LS_DONE, ls->alpha); return; }
    ls->stage = 1; ls->iter = 1;
    ls->aprev = ls->alpha; ls->phiprev = phi;
    ls->alpha *= ls->rho; ls->need = 1;
    return;
  }
  SAP_REAL a = ls->alpha, ap = ls->aprev, php = ls->phiprev;
  if (SAP_FABS((phi - php) / (a - ap)) < ls->slop) { SAPT(sapw_lsFinish)(ls, SAP_LS_DONE, a); return; }
  if (phi > php && SAPT(sapw_lsArmijoOk)(ls, a, phi)) {
    SAPT(sapw_lsFinish)(ls, SAP_LS_DONE, SAPT(sapw_lsArmijoOk)(ls, ap, php) ? ap : a);
    return;
  }
  if (ls->iter >= ls->maxit - 1) {
    ls->iter = ls->maxit;
    if (SAPT(sapw_lsArmijoOk)(ls, a, phi)) SAPT(sapw_lsFinish)(ls, SAP_LS_DONE, a);
    else SAPT(sapw_lsArmijoShrink)(ls, a, phi);  // drake/SAP Warp fail here: rescue instead
    return;
  }
  ls->iter++;
  ls->aprev = a; ls->phiprev = phi;
  ls->alpha = a * ls->rho;
}

/* cubic Hermite minimiser on [0, h] from (phi0, d0), (phi1, d1) (Nocedal-Wright 3.59):
 * theta = d0 + d1 - 3 (phi1 - phi0)/h, G = SAP_SQRT(theta^2 - d0 d1),
 * alpha = h - h (d1 + G - theta)/(d1 - d0 + 2 G); returns -1 when not usable */
SAP_HD SAP_REAL SAPT(sapw_cubicSeed)(SAP_REAL h, SAP_REAL phi0, SAP_REAL d0, SAP_REAL phi1, SAP_REAL d1) {
  SAP_REAL theta = d0 + d1 - 3 * (phi1 - phi0) / h;
  SAP_REAL disc = theta * theta - d0 * d1;
  if (!(disc >= 0)) return -1;
  SAP_REAL g = SAP_SQRT(disc);
  SAP_REAL a = h - h * (d1 + g - theta) / (d1 - d0 + 2 * g);
  return (isfinite(a) && a > 0 && a <= h) ? a : -1;
}

/* exact_root stage 0 (drake §4.4, sapwarp §7.3): alpha_max = 1.5 accepted when phi' <= 0
 * there; alpha = 1 when the initial decrease is below the cost tolerance; otherwise bracket
 * [0, alpha_max] on f = phi'/|phi'(0)| and seed with the cubic Hermite minimiser. The
 * fallback quadratic seed uses phi''(0) = dv'H dv (the curvature at the current iterate)
 * instead of SAP Warp's/Drake's phi''(alpha_max) (sapwarp §13.16), so it gives the Newton
 * step alpha = 1 on a quadratic. */
SAP_HD void SAPT(sapw_lsExactStart)(SAPT(sapLineSearch)* ls, SAP_REAL phi, SAP_REAL dphi) {
  SAP_REAL amax = ls->alpha, scale = -ls->dphi0;
  if (dphi <= 0) { SAPT(sapw_lsFinish)(ls, SAP_LS_DONE, amax); return; }
  if (scale < ls->cost_abs + ls->cost_rel * phi) { SAPT(sapw_lsFinish)(ls, SAP_LS_DONE, 1); return; }
  ls->fu = dphi / scale;
  if (!isfinite(ls->fu)) { SAPT(sapw_lsFinish)(ls, SAP_LS_FAIL_UPPER, 0); return; }
  if (ls->fu < (SAP_REAL)SAP_LS_EXACT_TOL) { SAPT(sapw_lsFinish)(ls, SAP_LS_DONE, amax); return; }
  SAP_REAL guess = SAPT(sapw_cubicSeed)(amax, ls->phi0, ls->dphi0, phi, dphi);
  if (guess < 0) guess = ls->d2phi0 > 0 ? scale / ls->d2phi0 : -1;
  if (guess > amax) guess = amax;
  if (!(guess > 0)) { SAPT(sapw_lsFinish)(ls, SAP_LS_FAIL_GUESS, 0); return; }
  ls->xl = 0; ls->xu = amax;
  ls->mdx = ls->mdx_prev = -amax;
  ls->xtol = (SAP_REAL)SAP_LS_EXACT_TOL * guess;
  ls->alpha = guess;
  ls->stage = 1;
}

/* exact_root main loop: Newton with bisection fallback on f(alpha) = 0 (drake §4.6) */
SAP_HD void SAPT(sapw_lsExact)(SAPT(sapLineSearch)* ls, SAP_REAL phi, SAP_REAL dphi, SAP_REAL d2phi) {
  if (ls->stage == 0) { SAPT(sapw_lsExactStart)(ls, phi, dphi); return; }
  SAP_REAL scale = -ls->dphi0, x = ls->alpha;
  SAP_REAL f = dphi / scale, df = d2phi / scale;
  ls->iter++;
  // keep the root bracketed: f(xl) < 0 < f(xu); a non-finite f counts as past the root
  if (!isfinite(f) || !isfinite(df)) { f = 1; df = 0; }
  if ((signbit(f) != 0) != (signbit(ls->fu) != 0)) ls->xl = x;
  else { ls->xu = x; ls->fu = f; }
  if (SAP_FABS(f) < (SAP_REAL)SAP_LS_EXACT_TOL) { SAPT(sapw_lsFinish)(ls, SAP_LS_DONE, x); return; }
  if (ls->iter >= ls->maxit) { SAPT(sapw_lsFinish)(ls, SAP_LS_FAIL_MAXIT, 0); return; }
  // Newton step unless it is slow, leaves the bracket or is not finite: then bisect
  int slow = 2 * SAP_FABS(f) > SAP_FABS(ls->mdx_prev * df);
  ls->mdx_prev = ls->mdx;
  SAP_REAL xn = x - f / df;
  if (!slow && isfinite(xn) && xn >= ls->xl && xn <= ls->xu) {
    ls->mdx = f / df;
    x = xn;
  } else {
    ls->mdx = (ls->xl - ls->xu) / 2;
    x = ls->xl - ls->mdx;
  }
  ls->alpha = x;
  if (SAP_FABS(ls->mdx) < ls->xtol) SAPT(sapw_lsFinish)(ls, SAP_LS_DONE, x);
}

/* newton_wolfe (ours; not one of seed 002's three): the first trial is the Newton step on
 * phi' from alpha = 0, alpha = -phi'(0)/phi''(0) = 1 for a Newton direction (phi''(0) =
 * dv' H dv = -phi'(0)), accepted under the strong Wolfe conditions (Nocedal-Wright 3.7,
 * c1 = armijo_c, c2 = SAP_LS_NEWTON_ETA): phi(a) < phi(0) + c1 a phi'(0) and |phi'(a)| <=
 * c2 |phi'(0)|. Otherwise the root of phi' (phi is convex) is kept bracketed, [xl, xu] with
 * phi'(xl) < 0 < phi'(xu), and the next trial is the Newton step a - phi'(a)/phi''(a) when it
 * falls inside the bracket and the last step more than halved |phi'| or the bracket halved
 * over the last two trials, else the secant of phi' over the bracket while it halves every two
 * trials, else its midpoint; without an upper end yet the step grows (at most 4x). At the cap
 * the lowest Armijo point is taken; none is a failure (SAP_LS_FAIL_MAXIT). Near the solution
 * the Newton step passes at once: one evaluation per Newton iteration. A trial that meets the
 * curvature condition but fails Armijo only by phi's rounding is taken (below). */
SAP_HD void SAPT(sapw_lsNewton)(SAPT(sapLineSearch)* ls, SAP_REAL phi, SAP_REAL dphi, SAP_REAL d2phi) {
  SAP_REAL a = ls->alpha;
  ls->iter++;
  int fin = isfinite(phi) && isfinite(dphi);
  int ok = fin && SAPT(sapw_lsArmijoOk)(ls, a, phi);
  int curv = fin && SAP_FABS(dphi) <= (SAP_REAL)SAP_LS_NEWTON_ETA * -ls->dphi0;
  if (curv && !ok) {
    // Armijo below phi's rounding (Hager-Zhang's approximate Wolfe conditions, 2005): near
    // the optimum of a stiff problem the whole decrease -phi'(0)/2 can be a few ulps of phi
    // (Menagerie's shadow hand: phi = 0.0734, phi'(0) = -9.3e-17), so phi(a) against phi(0)
    // is rounding noise while phi', a sum without phi's large constant, is still accurate.
    // phi is convex, so phi(a) <= phi(0) + a max(phi'(a), 0) exactly: a trial meeting the
    // curvature condition whose bound lies under the rounding level cannot have raised the
    // cost, and it is taken (before: it became the bracket's upper end and the search bisected
    // the noise down to alpha ~ 1e-12, a line-search failure). The bound rests on phi', so
    // the computed phi(a) is held to phi(0) only as Hager and Zhang's approximate Wolfe
    // conditions do (CG_DESCENT, 2006: phi(a) <= phi(0) + eps_k, eps_k = 1e-6 |phi(0)|; in
    // fp32 at least SAP_LS_NEWTON_SUM_NOISE eps |phi(0)|): phi's evaluation, a sum over every
    // constraint with cancellations, rounds far above 16 eps (flybody's fruit fly with 120
    // contacts: phi = 0.828, phi'(0) = -4.6e-13, phi(1) computed 3.5e-13 above phi(0) with
    // phi'(1) = -2.9e-18, a decrease of 2.3e-13 in exact arithmetic; before, a failure)
    SAP_REAL noise = (SAP_REAL)SAP_LS_NEWTON_NOISE * SAP_EPS * SAP_FABS(ls->phi0);
    SAP_REAL eps_k = (SAP_EPS * (SAP_REAL)SAP_LS_NEWTON_SUM_NOISE > (SAP_REAL)SAP_LS_HZ_EPS
                          ? SAP_EPS * (SAP_REAL)SAP_LS_NEWTON_SUM_NOISE : (SAP_REAL)SAP_LS_HZ_EPS) * SAP_FABS(ls->phi0);
    ok = a * (dphi > 0 ? dphi : 0) <= noise && phi <= ls->phi0 + eps_k;
  }
  if (ok && phi < ls->phibest) { ls->abest = a; ls->phibest = phi; }
  if (ok && curv) { SAPT(sapw_lsFinish)(ls, SAP_LS_DONE, a); return; }
  if (ok && dphi < 0) { ls->xl = a; ls->fl = dphi; }
  else { ls->xu = a; ls->fu = isfinite(dphi) && dphi > 0 ? dphi : (SAP_REAL)INFINITY; }
  int slow = !(SAP_FABS(dphi) < ls->fprev / 2);
  ls->fprev = SAP_FABS(dphi);
  SAP_REAL w = ls->xu - ls->xl;
  if (ls->iter >= ls->maxit || (isfinite(w) && w <= (SAP_REAL)SAP_LS_EXACT_TOL * ls->xu)) {
    if (ls->abest > 0) SAPT(sapw_lsFinish)(ls, SAP_LS_DONE, ls->abest);
    else SAPT(sapw_lsFinish)(ls, SAP_LS_FAIL_MAXIT, 0);
    return;
  }
  SAP_REAL xn = a - dphi / d2phi, x;
  if (!isfinite(ls->xu)) {
    x = isfinite(xn) && xn > a ? xn : 2 * a;
    if (x > 4 * a) x = 4 * a;
  } else {
    SAP_REAL lo = ls->xl + w / 100, hi = ls->xu - w / 100;
    // the secant only while the bracket keeps halving every two trials: with one end fixed
    // it can creep (regula falsi): a stiff constraint entering between xl and xu makes
    // phi'(xu) >> |phi'(xl)| and each secant trial lands just right of xl (Menagerie's shadow
    // hand: 40 trials from 0.07 to 0.74 of the bracket [0, 1], the cap)
    int creep = w > ls->w2 / 2;
    if ((!slow || !creep) && isfinite(xn) && xn > lo && xn < hi) {
      x = xn;
    } else {
      SAP_REAL xs = isfinite(ls->fu) ? ls->xl - ls->fl * w / (ls->fu - ls->fl) : -1;
      x = !creep && isfinite(xs) && xs > lo && xs < hi ? xs : ls->xl + w / 2;
    }
  }
  ls->w2 = ls->w1;
  ls->w1 = w;
  ls->alpha = x;
}

/* feed the values at ls->alpha; the state machine picks the next trial or finishes */
SAP_HD void SAPT(sapw_lsFeed)(SAPT(sapLineSearch)* ls, SAP_REAL phi, SAP_REAL dphi, SAP_REAL d2phi) {
  if (ls->status != SAP_LS_RUNNING) return;
  ls->neval++;
  if (!isfinite(phi)) {
    // a non-finite trial cost: shrink the step as a failed trial would
    phi = (SAP_REAL)INFINITY;
  }
  if (ls->kind == SAP_LS_MONOTONE) SAPT(sapw_lsMonotone)(ls, phi);
  else if (ls->kind == SAP_LS_ARMIJO) SAPT(sapw_lsArmijo)(ls, phi, dphi);
  else if (ls->kind == SAP_LS_NEWTON) SAPT(sapw_lsNewton)(ls, phi, dphi, d2phi);
  else SAPT(sapw_lsExact)(ls, phi, dphi, d2phi);
}
