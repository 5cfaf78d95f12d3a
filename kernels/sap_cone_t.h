/* SAP friction-cone contact constraint (template body; include via sap_solve.h).
 * Regularization R and bias vhat, the soft-norm analytic projection with its three
 * regions, impulse gamma, Hessian G = (dP/dy) R^-1 and cost, per contact.
 * Follows drake_sap_spec.md §2.1 and sapwarp_spec.md §5.1-5.3 (reference version). */

/* contact parameters once per solve (sapwarp §5.1, drake §2.1 MakeData):
 *   Rn = max(beta^2/(4 pi^2) w, 1/(h k (h + taud))),  Rt = sigma w,  vhat_n = -phi/(h + taud)
 * par = (Rt, Rn, vhat_n, mu, w, condim 3, vhat_t1 0, vhat_t2 0); bad inputs are sanitised as
 * in sapwarp §5.1. The tangential targets vhat_t (and vhat_spin, par[10]) are SAP's bias on
 * the friction rows, y_t = (vhat_t - vc_t)/Rt: zero unless a geom has a surface velocity
 * (sap_solve.h sapw_surfaceTarget), so that friction drives vc_t towards vhat_t. They enter
 * as vc - vhat, which is vc's own bits when vhat = 0. */
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
  par[5] = 3;
  par[6] = par[7] = 0;
}

/* torsional and rolling rows (condim 4, 6) of the parameters set by sapw_coneSetup:
 * par[5] = the contact's condim (1 and 3 keep the 3-row cone), and for 4 and 6 the ratios
 * par[8] = torsion/mu, par[9] = rolling/mu, with par[10] = vhat_spin = 0 (par has
 * SAP_CPAR_ANG entries then). mu, torsion and rolling are > 0 there (clamped to 1e-5 at
 * load, as MuJoCo's mjMINMU). */
SAP_HD void SAPT(sapw_coneSetupAngular)(int condim, SAP_REAL torsion, SAP_REAL rolling, SAP_REAL* par) {
  SAP_REAL mu = par[3];
  par[5] = (SAP_REAL)(condim >= 4 && mu > 0 && torsion > 0 ? condim : (condim == 1 ? 1 : 3));
  par[10] = 0;
  if (par[5] < 4) return;
  par[8] = torsion / mu;
  par[9] = condim == 6 && rolling > 0 ? rolling / mu : 0;
  if (par[9] == 0) par[5] = 4;
}

/* The scaled cone of condim 4 and 6 (MuJoCo's elliptic cone, mujoco_semantics.md §1.6):
 *   K = { gamma : ||(g_t1/mu, g_t2/mu, g_spin/mu3, g_r1/mu4, g_r2/mu4)|| <= g_n }
 * Rows per contact: (t1, t2, n, spin, roll1, roll2), impulses in N s and N m s. SAP's
 * projection gamma = argmin_{g in K} 1/2 ||g - y||_R^2 (drake §2.1) is analytic when R is
 * isotropic over the tangential rows; here the rows differ in units, so we choose
 *   R_k = Rt / s_k^2,  s_k = mu_k / mu  (s = 1 for sliding, torsion/mu, rolling/mu),
 * which is MuJoCo's own choice for elliptic cones (mj_makeImpedance: R_j = R_1 mu_1^2 / mu_j^2;
 * checked on MuJoCo 4.0: efc_R ratios 1/s_k^2). In u_k = g_k / s_k the cone becomes SAP's
 * isotropic cone ||u|| <= mu g_n and the cost 1/2 sum_k R_k (g_k - y_k)^2 becomes
 * 1/2 Rt ||u - z||^2 with z_k = y_k / s_k = -s_k vc_k / Rt: the 3-row projection applies to
 * (z, yn) with z in 5 (or 3) dimensions, and gamma_k = s_k u_k. By the chain rule,
 *   G_kl = s_k s_l Gu_kl / Rt,  G_kn = G_nk = s_k mu f t_k / Rn,  G_nn = f / Rn,
 * with Gu = a (I - t t') + b t t' SAP's sliding block in z. With s = 1 every operation of the
 * 3-row formulas is reproduced exactly (multiplications by 1), so condim 1 and 3 are
 * unchanged. This generalisation is ours: neither Drake nor SAP Warp has condim 4/6. */

/* projection gamma = P(y), y = R^-1 (vhat - vc), onto the friction cone in the R norm, for a
 * contact of cd rows (3, 4 or 6; rows 3.. are zero beyond the contact's own condim par[5]).
 * z_k = y_k / s_k over the tangential rows, zr = SAP_SQRT(|z|^2 + eps^2) (soft norm, eps = 1e-7),
 * t = z/zr.
 *   region 1 stiction   zr <= mu yn:               gamma = y
 *   region 2 sliding    -mu_hat zr < yn (< zr/mu): gamma_n = (yn + mu_hat zr)/(1 + mu_tilde^2),
 *                                                  gamma_k = s_k mu gamma_n t_k
 *   region 0 no contact otherwise:                 gamma = 0
 * mu = 0 takes the sliding branch when yn > 0 without dividing by mu (drake §2.1).
 * cost l = 1/2 (sum_k R_k gamma_k^2 + Rn gamma_n^2); G (cd x cd row-major, symmetric PSD) =
 * d gamma/d y R^-1 = -d gamma/d vc, the Hessian of l in vc; G may be NULL. Returns the region. */
SAP_HD int SAPT(sapw_coneProjectN)(const SAP_REAL* par, int cd, const SAP_REAL* vc, SAP_REAL* gamma,
                                   SAP_REAL* cost, SAP_REAL* G) {
  SAP_REAL rt = par[0], rn = par[1], mu = par[3];
  int dim = (int)par[5], nt = dim == 6 ? 5 : dim == 4 ? 3 : 2;
  int row[5] = {0, 1, 3, 4, 5};  // tangential rows
  SAP_REAL sc[5] = {1, 1, 1, 1, 1}, vh[5] = {par[6], par[7], 0, 0, 0}, z[5];
  if (nt > 2) sc[2] = par[8], vh[2] = par[10];
  if (nt > 3) sc[3] = sc[4] = par[9];
  SAP_REAL zz = 0;
  for (int k = 0; k < nt; k++) {
    z[k] = -(sc[k] * (vc[row[k]] - vh[k])) / rt;
    zz += z[k] * z[k];
  }
  SAP_REAL yn = (par[2] - vc[2]) / rn;
  SAP_REAL zr = SAP_SQRT(zz + (SAP_REAL)1e-14);
  SAP_REAL mu_hat = mu * rt / rn;
  int region;
  if (zr <= mu * yn) region = 1;
  else if (-mu_hat * zr < yn && (mu == 0 || yn < zr / mu)) region = 2;
  else region = 0;

  if (G) for (int i = 0; i < cd * cd; i++) G[i] = 0;
  for (int k = 0; k < cd; k++) gamma[k] = 0;
  SAP_REAL u[5] = {0, 0, 0, 0, 0}, gn = 0;
  if (region == 1) {
    // stiction: gamma = y, G = R^-1
    for (int k = 0; k < nt; k++) u[k] = z[k];
    gn = yn;
    if (G) {
      for (int k = 0; k < nt; k++) G[row[k] * (cd + 1)] = sc[k] * sc[k] / rt;
      G[2 * (cd + 1)] = 1 / rn;
    }
  } else if (region == 2) {
    // sliding: project along the cone's generator through t
    SAP_REAL f = 1 / (1 + mu * mu_hat);  // mu_tilde^2 = mu mu_hat
    gn = (yn + mu_hat * zr) * f;
    SAP_REAL t[5];
    for (int k = 0; k < nt; k++) {
      t[k] = z[k] / zr;
      u[k] = mu * gn * t[k];
    }
    if (G) {
      // Gu = a (I - t t') + b t t', a = mu gn/zr, b = mu mu_hat f; G_kn = s_k mu f t_k / Rn
      SAP_REAL a = mu * gn / zr, b = mu * mu_hat * f;
      for (int i = 0; i < nt; i++) {
        for (int j = 0; j < nt; j++) {
          SAP_REAL p = t[i] * t[j];
          G[row[i] * cd + row[j]] = sc[i] * sc[j] * (a * ((i == j ? 1 : 0) - p) + b * p) / rt;
        }
        G[row[i] * cd + 2] = G[2 * cd + row[i]] = sc[i] * (mu * f * t[i]) / rn;
      }
      G[2 * (cd + 1)] = f / rn;
    }
  }
  // gamma_k = s_k u_k; cost = 1/2 (Rt |u|^2 + Rn gn^2) (R_k gamma_k^2 = Rt u_k^2)
  SAP_REAL uu = 0;
  for (int k = 0; k < nt; k++) {
    gamma[row[k]] = sc[k] * u[k];
    uu += u[k] * u[k];
  }
  gamma[2] = gn;
  *cost = (rt * uu + rn * gn * gn) / 2;
  return region;
}

/* the 3-row cone (condim 1, 3): sapw_coneProjectN with cd = 3 and every s_k = 1, written
 * with fixed-size locals (registers on the GPU; the general form's indexed arrays would put
 * the warp solve's state on the stack); G is 3x3 */
SAP_HD int SAPT(sapw_coneProject)(const SAP_REAL* par, const SAP_REAL* vc, SAP_REAL* gamma,
                                  SAP_REAL* cost, SAP_REAL* G) {
  SAP_REAL rt = par[0], rn = par[1], mu = par[3];
  SAP_REAL y0 = -(vc[0] - par[6]) / rt, y1 = -(vc[1] - par[7]) / rt, yn = (par[2] - vc[2]) / rn;
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
