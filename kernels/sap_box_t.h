/* SAP scalar constraints (template body; include via sap_solve.h): PD drives with an
 * effort limit, one-sided joint/tendon limits and dry friction (frictionloss), all written as
 * one "box" law
 *   y = (vhat - vc)/R,  gamma = clamp(y, lo, hi),  cost = R N(y),  G = 1/R inside [lo, hi]
 * with N the antiderivative of the clamp. Follows drake_sap_spec.md §3.1-3.2 and
 * sapwarp_spec.md §5.5-5.7 (reference version). par = (R, vhat, lo, hi). */

/* clamp antiderivative N(y): y^2/2 inside [lo, hi], hi (y - hi/2) above, lo (y - lo/2) below;
 * continuous with a continuous derivative clamp(y, lo, hi), so the cost is convex and C1 */
SAP_HD SAP_REAL SAPT(sapw_clampAntideriv)(SAP_REAL y, SAP_REAL lo, SAP_REAL hi) {
  if (y > hi) return hi * (y - hi / 2);
  if (y < lo) return lo * (y - lo / 2);
  return y * y / 2;
}

/* gamma, cost and G (may be NULL) of one box constraint at constraint velocity vc */
SAP_HD void SAPT(sapw_boxEval)(const SAP_REAL* par, SAP_REAL vc, SAP_REAL* gamma, SAP_REAL* cost,
                               SAP_REAL* G) {
  SAP_REAL R = par[0], y = (par[1] - vc) / R, lo = par[2], hi = par[3];
  *gamma = y < lo ? lo : (y > hi ? hi : y);
  *cost = R * SAPT(sapw_clampAntideriv)(y, lo, hi);
  if (G) *G = (y >= lo && y <= hi) ? 1 / R : 0;
}

/* near-rigid gain clipping of a PD drive (drake §3.1 MakeData, sapwarp §5.5), beta = 0.1:
 * r = 1/(h (h kp + kd)) is kept when r >= r_nr = beta^2/(4 pi^2) w; otherwise the gains are
 * rescaled to r = r_nr keeping the ratio kd/kp. kp, kd are in/out. */
SAP_HD void SAPT(sapw_pdClipGains)(SAP_REAL h, SAP_REAL w, SAP_REAL* kp, SAP_REAL* kd) {
  SAP_REAL p = *kp > 0 ? *kp : 0, d = *kd > 0 ? *kd : 0;
  SAP_REAL beta = (SAP_REAL)SAP_BETA_PD;
  SAP_REAL r_nr = beta * beta / (SAP_REAL)(4 * SAP_PI * SAP_PI) * (w > (SAP_REAL)1e-12 ? w : (SAP_REAL)1e-12);
  if (p == 0 && d == 0) { *kp = 0; *kd = 0; return; }
  if (1 / (h * (h * p + d)) >= r_nr) { *kp = p; *kd = d; return; }
  if (h * p > d) {
    SAP_REAL tau = d / p;
    p = 1 / (h * (h + tau) * r_nr);
    d = tau * p;
  } else {
    SAP_REAL s = p / d;
    d = 1 / (h * (1 + h * s) * r_nr);
    p = s * d;
  }
  *kp = p; *kd = d;
}

/* PD drive as a box constraint on vc = row . v (drake §3.1):
 *   force y = kp (qd - q0 - h vc) + kd (vd - vc) + u0 = a - c vc,  c = h kp + kd,
 *   gamma = h clamp(y, flo, fhi)  <=>  R = 1/(h c), vhat = a/c, [lo, hi] = h [flo, fhi].
 * gains already clipped; returns 0 (no constraint) when c <= 0 */
SAP_HD int SAPT(sapw_pdSetup)(SAP_REAL h, SAP_REAL kp, SAP_REAL kd, SAP_REAL q0, SAP_REAL qd,
                              SAP_REAL vd, SAP_REAL u0, SAP_REAL flo, SAP_REAL fhi, SAP_REAL* par) {
  SAP_REAL c = h * kp + kd;
  if (!(c > 0)) return 0;
  par[0] = 1 / (h * c);
  par[1] = (kp * (qd - q0) + kd * vd + u0) / c;
  par[2] = h * flo;
  par[3] = h * fhi;
  return 1;
}

/* one-sided limit on a constraint value g >= 0 (drake §3.2; gap g at the step start):
 *   R = max(beta^2/(4 pi^2) w, 1/(h k (h + taud))),  vhat = -g/(h + taud),  gamma in [0, inf) */
SAP_HD void SAPT(sapw_limitSetup)(SAP_REAL h, SAP_REAL g, SAP_REAL w, SAP_REAL k, SAP_REAL taud,
                                  SAP_REAL beta, SAP_REAL* par) {
  SAP_REAL r_rigid = beta * beta / (SAP_REAL)(4 * SAP_PI * SAP_PI) * (w > (SAP_REAL)1e-12 ? w : (SAP_REAL)1e-12);
  SAP_REAL r_soft = 1 / (h * k * (h + taud));
  par[0] = r_rigid > r_soft ? r_rigid : r_soft;
  par[1] = -g / (h + taud);
  par[2] = 0;
  par[3] = (SAP_REAL)INFINITY;
}

/* dry friction (MJCF frictionloss f) on vc = row . v: |generalized force| <= f whatever the
 * load, i.e. gamma in h [-f, f] (a box, not a cone), no position term (vhat = 0). MJCF gives
 * it no compliance (MuJoCo's solreffriction/solimpfriction belong to MuJoCo's solver and are
 * ignored, as for contacts). It is the load-independent twin of the contact's Coulomb
 * friction, so it takes SAP's regularization of friction (Castro et al. 2022 §V; drake §2.1:
 * R_t = sigma w, sigma = contact_sigma, default 1e-3):
 *   R = sigma w,  vhat = 0,  [lo, hi] = h [-f, f]
 * (equivalently an effort-limited drive with kp = 0 and kd = 1/(h R), limit f, drake §3.1).
 * While it sticks, a dof of inertia a (w = 1/a) under a net load tau creeps at
 * v = sigma h tau / a (the fixed point of v = (v + h tau/a) sigma/(1 + sigma)); while it slips
 * the impulse is exactly -h f sign(v). Why not the near-rigid R = beta^2/(4 pi^2) w, beta = 0.1,
 * of Drake's bilateral constraints (4x stiffer, creep 2.5e-4 instead of 1e-3): with it Newton
 * under armijo_decay cycled at round-off across a friction kink coupled to foot contacts
 * (humanoid with frictionloss 0.5 on every hinge, 32 worlds x 600 steps, random controls:
 * 6 / 4 / 1 world-steps at max_iterations under approx64 / approx32 / drake; 0 with sigma w). */
SAP_HD void SAPT(sapw_frictionSetup)(SAP_REAL h, SAP_REAL w, SAP_REAL sigma, SAP_REAL f, SAP_REAL* par) {
  par[0] = sigma * (w > (SAP_REAL)1e-12 ? w : (SAP_REAL)1e-12);
  par[1] = 0;
  par[2] = -h * f;
  par[3] = h * f;
}
