/* SAP friction-cone contact constraint (template body; include via sap_solve.h).
 * Regularization R and bias vhat, the soft-norm analytic projection with its three
 * regions, impulse gamma, Hessian G = (dP/dy) R^-1 and cost, per contact.
 * Follows drake_sap_spec.md §2.1 and sapwarp_spec.md §5.1-5.3 (reference version). */

/* contact parameters once per solve (sapwarp §5.1, drake §2.1 MakeData):
 *   Rn = max(beta^2/(4 pi^2) w, 1/(h k (h + taud))),  Rt = sigma w,  vhat_n = -phi/(h + taud)
 * par = (Rt, Rn, vhat_n, mu, w); bad inputs are sanitised as in sapwarp §5.1 */
SAP_HD void SAPT(sapw_coneSetup)(SAP_REAL w, SAP_REAL k, SAP_REAL taud, SAP_REAL mu, SAP_REAL phi,
                                 SAP_REAL h, SAP_REAL beta, SAP_REAL sigma, SAP_REAL* par) {
  if (!(w >= (SAP_REAL)1e-12) || !isfinite(w)) w = (SAP_REAL)1e-12;
  if (!(k > 0) || !isfinite(k)) k = 1;
  if (!(taud > 0)) taud = 0;
  if (!(mu > 0) || !isfinite(mu)) mu = 0;
  SAP_REAL rn_rigid = beta * beta / (SAP_REAL)(4 * SAP_PI * SAP_PI) * w;
  SAP_REAL rn_soft = 1 / (h * k * (h + taud));
  SAP_REAL rn = rn_rigid > rn_soft ? rn_rigid : rn_soft;
  SAP_REAL rt = sigma * w;
  par[0] = rt > (SAP_REAL)1e-30 ? rt : (SAP_REAL)1e-30;
  par[1] = rn > (SAP_REAL)1e-30 ? rn : (SAP_REAL)1e-30;
  par[2] = -phi / (h + taud);
  par[3] = mu;
  par[4] = w;
}

/* projection gamma = P(y), y = R^-1 (vhat - vc), onto the friction cone in the R norm.
 * yr = SAP_SQRT(yt1^2 + yt2^2 + eps^2) (soft norm, eps = 1e-7), that = yt/yr.
 *   region 1 stiction   yr <= mu yn:               gamma = y
 *   region 2 sliding    -mu_hat yr < yn (< yr/mu): gamma_n = (yn + mu_hat yr)/(1 + mu_tilde^2),
 *                                                  gamma_t = mu gamma_n that
 *   region 0 no contact otherwise:                 gamma = 0
 * mu = 0 takes the sliding branch when yn > 0 without dividing by mu (drake §2.1).
 * cost l = 1/2 (Rt |gamma_t|^2 + Rn gamma_n^2); G (3x3 row-major, symmetric PSD) = d gamma/d y R^-1
 * = -d gamma/d vc, the Hessian of l in vc; G may be NULL. Returns the region. */
SAP_HD int SAPT(sapw_coneProject)(const SAP_REAL* par, const SAP_REAL* vc, SAP_REAL* gamma,
                                  SAP_REAL* cost, SAP_REAL* G) {
  SAP_REAL rt = par[0], rn = par[1], mu = par[3];
  SAP_REAL y0 = -vc[0] / rt, y1 = -vc[1] / rt, yn = (par[2] - vc[2]) / rn;
  SAP_REAL yr = SAP_SQRT(y0 * y0 + y1 * y1 + (SAP_REAL)1e-14);
  SAP_REAL mu_hat = mu * rt / rn;
  int region;
  if (yr <= mu * yn) region = 1;
  else if (-mu_hat * yr < yn && (mu == 0 || yn < yr / mu)) region = 2;
  else region = 0;

  if (G) for (int i = 0; i < 9; i++) G[i] = 0;
  if (region == 1) {
    // stiction: gamma = y, G = R^-1
    gamma[0] = y0; gamma[1] = y1; gamma[2] = yn;
    if (G) { G[0] = 1 / rt; G[4] = 1 / rt; G[8] = 1 / rn; }
  } else if (region == 2) {
    // sliding: project along the cone's generator through that
    SAP_REAL f = 1 / (1 + mu * mu_hat);  // mu_tilde^2 = mu mu_hat
    SAP_REAL gn = (yn + mu_hat * yr) * f;
    SAP_REAL t0 = y0 / yr, t1 = y1 / yr;
    gamma[0] = mu * gn * t0; gamma[1] = mu * gn * t1; gamma[2] = gn;
    if (G) {
      // tt = mu (gn/yr Pperp + mu_hat f P)/Rt, tn = nt = mu f that/Rn, nn = f/Rn
      SAP_REAL a = mu * gn / yr, b = mu * mu_hat * f;
      SAP_REAL t[2] = {t0, t1};
      for (int i = 0; i < 2; i++) {
        for (int j = 0; j < 2; j++) {
          SAP_REAL p = t[i] * t[j];
          G[3 * i + j] = (a * ((i == j ? 1 : 0) - p) + b * p) / rt;
        }
        G[3 * i + 2] = G[6 + i] = mu * f * t[i] / rn;
      }
      G[8] = f / rn;
    }
  } else {
    gamma[0] = gamma[1] = gamma[2] = 0;
  }
  *cost = (rt * (gamma[0] * gamma[0] + gamma[1] * gamma[1]) + rn * gamma[2] * gamma[2]) / 2;
  return region;
}
