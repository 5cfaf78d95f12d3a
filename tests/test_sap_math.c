/* Unit tests of the SAP per-world math (kernels/sap_solve.h): friction cone (drake_sap_spec
 * §6.1-6.7 numbers), PD drives and limits (§6.14-6.15), finite-difference gradients and
 * Hessians, blocked and tree-sparse Cholesky against LAPACKE (fp32, fp64), the three line searches on
 * analytic 1-D costs, and small Newton problems (§6.11 pizza saver, §6.12, §6.14, §6.15). */
#include <lapacke.h>

#include "check.h"
#include "sap_solve.h"

/* ---- friction cone ------------------------------------------------------------- */

/* P0: mu 0.5, k 3e5, taud 0.02, beta 1, sigma 1e-3, dt 0.01, w 1, phi0 -2.5e-3 */
static void cone_p0(double mu, double* par) {
  sapw_coneSetup_f64(1.0, 3e5, 0.02, mu, -2.5e-3, 0.01, 1.0, 1e-3, par);
}

static void test_cone_regularization(void) {
  double par[SAP_CPAR_ANG] = {0};
  cone_p0(0.5, par);
  CHECK_CLOSE(par[0], 1e-3, 0, 1e-12, "Rt");
  CHECK_CLOSE(par[1], 0.025330295910584444, 0, 1e-12, "Rn near-rigid");
  CHECK_CLOSE(par[2], 0.083333333333333333, 0, 1e-12, "vhat_n");
  // 6.1: beta 0, sigma 1e-4, k 1e5, taud 0.01, dt 5e-3, w 3
  sapw_coneSetup_f64(3.0, 1e5, 0.01, 0.5, -2.5e-3, 5e-3, 0.0, 1e-4, par);
  CHECK_CLOSE(par[0], 3e-4, 0, 1e-12, "6.1 Rt");
  CHECK_CLOSE(par[1], 0.13333333333333333, 0, 1e-12, "6.1 Rn");
  CHECK_CLOSE(par[2], 0.16666666666666667, 0, 1e-12, "6.1 vhat");
}

typedef struct { double vc[3], gamma[3], cost; int region; } ConeCase;

static void test_cone_regions(void) {
  double par[SAP_CPAR_ANG] = {0};
  cone_p0(0.5, par);
  // drake_sap_spec §6.2-6.4 (ref numbers); cost < 0 means not listed
  ConeCase cases[] = {
      {{1e-4, 0, -0.1}, {-0.1, 0, 7.237709894}, 0.6634617403, 1},
      {{1e-4, 1e-4, -0.1}, {-0.1, -0.1, 7.237709894}, 0.6634667403, 1},
      {{-1e-5, 1e-4, -0.05}, {0.01, -0.1, 5.263789014}, -1, 1},
      {{0.1, 0, -0.1}, {-4.560802075, 0, 9.12160415}, 1.064187151, 2},
      {{0.1, -0.2, -0.1}, {-2.57989899, 5.15979798, 11.53765903}, -1, 2},
      {{0.1, 0.05, 0.0}, {-2.434209512, -1.217104756, 5.44305794}, -1, 2},
      {{0.1, 0, 0.1}, {-0.6515431536, 0, 1.303086307}, -1, 2},
      {{1e-4, -2e-3, 0.01}, {-0.07255764207, 1.451152841, 2.9059313}, -1, 2},
      {{-0.1, 0.1, 0.2}, {0, 0, 0}, 0, 0},
      {{0, 0, 0.2}, {0, 0, 0}, 0, 0},
  };
  for (unsigned c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
    double g[3], cost, G[9];
    int region = sapw_coneProject_f64(par, cases[c].vc, g, &cost, G);
    CHECK(region == cases[c].region, "case %u region %d want %d", c, region, cases[c].region);
    for (int k = 0; k < 3; k++) CHECK_CLOSE(g[k], cases[c].gamma[k], 1e-12, 1e-9, "case %u gamma[%d]", c, k);
    if (cases[c].cost >= 0) CHECK_CLOSE(cost, cases[c].cost, 1e-12, 1e-9, "case %u cost", c);
  }
  // G in stiction and sliding (6.2, 6.3)
  double g[3], cost, G[9];
  double vc0[3] = {1e-4, 0, -0.1}, vc1[3] = {0.1, -0.2, -0.1};
  sapw_coneProject_f64(par, vc0, g, &cost, G);
  CHECK_CLOSE(G[0], 1000, 0, 1e-9, "stiction G00");
  CHECK_CLOSE(G[8], 39.478418, 0, 1e-7, "stiction G22");
  sapw_coneProject_f64(par, vc1, g, &cost, G);
  double want[9] = {22.593821, 6.410337, -8.7413687, 6.410337, 12.978316, 17.482737, -8.7413687, 17.482737, 39.092589};
  check_arrays("sliding G", G, want, 9, 0, 1e-6);
  // 6.5 zero friction
  cone_p0(0.0, par);
  double vz[3] = {0.1, 0, -0.1};
  sapw_coneProject_f64(par, vz, g, &cost, G);
  CHECK_CLOSE(g[2], 7.2377098941, 0, 1e-9, "mu=0 gamma_n");
  CHECK(g[0] == 0 && g[1] == 0 && G[0] == 0 && G[4] == 0, "mu=0 no friction");
  CHECK_CLOSE(G[8], 39.478418, 0, 1e-7, "mu=0 G22");
}

/* central differences: -dl/dvc = gamma, -dgamma/dvc = G; G symmetric PSD; KKT (6.6, 6.7) */
static void test_cone_fd(void) {
  double par[SAP_CPAR_ANG] = {0};
  cone_p0(0.5, par);
  double pts[][3] = {{1e-4, 0, -0.1}, {1e-4, 1e-4, -0.1}, {0.1, 0, -0.1}, {0.1, -0.2, -0.1},
                     {0.1, 0.05, 0.0}, {0.1, 0, 0.1}, {1e-4, -2e-3, 0.01}, {-0.1, 0.1, 0.2}};
  const double h = 1e-7;
  for (unsigned p = 0; p < sizeof(pts) / sizeof(pts[0]); p++) {
    double g[3], cost, G[9], gmax = 1e-300, Gmax = 1e-300;
    sapw_coneProject_f64(par, pts[p], g, &cost, G);
    for (int k = 0; k < 3; k++) gmax = fmax(gmax, fabs(g[k]));
    for (int k = 0; k < 9; k++) Gmax = fmax(Gmax, fabs(G[k]));
    for (int j = 0; j < 3; j++) {
      double vp[3], vm[3], gp[3], gm[3], cp, cm;
      for (int k = 0; k < 3; k++) vp[k] = vm[k] = pts[p][k];
      vp[j] += h; vm[j] -= h;
      sapw_coneProject_f64(par, vp, gp, &cp, NULL);
      sapw_coneProject_f64(par, vm, gm, &cm, NULL);
      CHECK_CLOSE(-(cp - cm) / (2 * h), g[j], 1e-6 * gmax, 0, "pt %u dl/dvc[%d]", p, j);
      for (int i = 0; i < 3; i++)
        CHECK_CLOSE(-(gp[i] - gm[i]) / (2 * h), G[3 * i + j], 1e-6 * Gmax, 0, "pt %u G[%d][%d]", p, i, j);
    }
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) CHECK(G[3 * i + j] == G[3 * j + i], "pt %u G symmetric", p);
    // PSD: random quadratic forms
    for (int t = 0; t < 20; t++) {
      double x[3] = {check_uniform(-1, 1), check_uniform(-1, 1), check_uniform(-1, 1)}, q = 0;
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) q += x[i] * G[3 * i + j] * x[j];
      CHECK(q >= -1e-12 * Gmax, "pt %u G PSD (%g)", p, q);
    }
    // KKT: gamma in the cone, R (y - gamma) in the polar cone, complementarity
    double y[3] = {-pts[p][0] / par[0], -pts[p][1] / par[0], (par[2] - pts[p][2]) / par[1]};
    double r[3] = {par[0] * (y[0] - g[0]), par[0] * (y[1] - g[1]), par[1] * (y[2] - g[2])};
    CHECK(hypot(g[0], g[1]) <= 0.5 * g[2] * (1 + 1e-9) + 1e-15, "pt %u gamma in cone", p);
    CHECK(0.5 * hypot(r[0], r[1]) <= -r[2] + 1e-9 * fmax(1, fabs(r[2])), "pt %u r in polar cone", p);
    CHECK(fabs(g[0] * r[0] + g[1] * r[1] + g[2] * r[2]) <= 1e-9 * fmax(1, fabs(g[2] * r[2])), "pt %u complementarity", p);
  }
}

/* fp32 cone agrees with fp64 */
static void test_cone_f32(void) {
  double par[SAP_CPAR_ANG] = {0};
  float parf[SAP_CPAR_ANG] = {0};
  cone_p0(0.5, par);
  sapw_coneSetup_f32(1.0f, 3e5f, 0.02f, 0.5f, -2.5e-3f, 0.01f, 1.0f, 1e-3f, parf);
  double vc[3] = {0.1, -0.2, -0.1}, g[3], cost;
  float vcf[3] = {0.1f, -0.2f, -0.1f}, gf[3], costf;
  sapw_coneProject_f64(par, vc, g, &cost, NULL);
  sapw_coneProject_f32(parf, vcf, gf, &costf, NULL);
  for (int k = 0; k < 3; k++) CHECK_CLOSE(gf[k], g[k], 1e-5, 1e-5, "f32 gamma[%d]", k);
}

/* ---- PD drives and limits ------------------------------------------------------ */

static void test_pd(void) {
  // drake §6.14: Kp 1.1, Kd 1.2, e 1.3, q0 0.1, qd 0.2, vd 0.3, u0 0.4, dt 0.015, w = 0
  double h = 0.015, kp = 1.1, kd = 1.2, par[SAP_SPAR];
  sapw_pdClipGains_f64(h, 0, &kp, &kd);
  CHECK(kp == 1.1 && kd == 1.2, "gains unclipped");
  sapw_pdSetup_f64(h, kp, kd, 0.1, 0.2, 0.3, 0.4, -1.3, 1.3, par);
  double us[3] = {0.26, 1.56, -1.56}, vs[3] = {0.5014385532, -0.5672009864, 1.997533909};
  double gw[3] = {0.26, 1.3, -1.3}, costs[3] = {4.167694204685576e-4, 0.014586929716399508, 0.014586929716399502};
  double Gw[3] = {0.0182475, 0, 0};
  for (int c = 0; c < 3; c++) {
    double v = (0.4 - us[c] + kp * (0.2 - 0.1) + kd * 0.3) / (h * kp + kd), g, cost, G;
    CHECK_CLOSE(v, vs[c], 0, 1e-9, "v(u=%g)", us[c]);
    sapw_boxEval_f64(par, v, &g, &cost, &G);
    CHECK_CLOSE(g / h, gw[c], 1e-13, 1e-12, "gamma/dt at u=%g", us[c]);
    CHECK_CLOSE(cost, costs[c], 0, 1e-9, "cost at u=%g", us[c]);
    CHECK_CLOSE(G, Gw[c], 1e-15, 1e-9, "G at u=%g", us[c]);
  }
  // near-rigid clipping with w = 1.6 (6.14)
  double kk[3][4] = {{1e8, 1.3e7, 1134437.2874815352, 147476.8473725996},
                     {0, 1e8, 0, 164493.4066848226},
                     {1e8, 0, 10966227.112321507, 0}};
  for (int c = 0; c < 3; c++) {
    double p = kk[c][0], d = kk[c][1];
    sapw_pdClipGains_f64(h, 1.6, &p, &d);
    CHECK_CLOSE(p, kk[c][2], 1e-9, 1e-10, "clip kp case %d", c);
    CHECK_CLOSE(d, kk[c][3], 1e-9, 1e-10, "clip kd case %d", c);
  }
  kp = 1.1; kd = 1.2;
  sapw_pdClipGains_f64(h, 1.6, &kp, &kd);
  CHECK(kp == 1.1 && kd == 1.2, "w=1.6 small gains unchanged");
}

static void test_limit(void) {
  // drake §6.15: q0 3.1, k 1e5, taud 0.01, beta 0.5, dt 5e-3, w 1.5
  double par[SAP_SPAR];
  sapw_limitSetup_f64(5e-3, 3.1 - 0.5, 1.5, 1e5, 0.01, 0.5, par);
  CHECK_CLOSE(par[0], 0.13333333333333333, 0, 1e-12, "R compliant");
  CHECK_CLOSE(par[1], -173.33333333333334, 0, 1e-12, "vhat lower");
  sapw_limitSetup_f64(5e-3, 2.3 - 3.1, 1.5, 0.5, 0.01, 0.5, par);
  CHECK_CLOSE(par[0], 26666.666666666668, 0, 1e-12, "R soft");
  CHECK_CLOSE(par[1], 53.33333333333335, 0, 1e-12, "vhat upper");
  sapw_limitSetup_f64(5e-3, 2.3 - 3.1, 1.5, 1e12, 0.01, 0.5, par);
  CHECK_CLOSE(par[0], 0.009498860966469166, 0, 1e-12, "R near-rigid");
}

/* FD of box constraints: PD inside and beyond the effort limit, limit active and inactive */
static void test_box_fd(void) {
  double pd[SAP_SPAR], lim[SAP_SPAR];
  sapw_pdSetup_f64(0.015, 1.1, 1.2, 0.1, 0.2, 0.3, 0.4, -1.3, 1.3, pd);
  sapw_limitSetup_f64(0.01, 1e-3, 1.0, 1e12, 0.01, 0.1, lim);
  struct { const double* par; double vc; } pts[] = {
      {pd, 0.5}, {pd, -0.56}, {pd, 1.99}, {pd, 5.0}, {pd, -5.0}, {lim, -0.2}, {lim, 0.3}};
  const double h = 1e-7;
  for (unsigned p = 0; p < sizeof(pts) / sizeof(pts[0]); p++) {
    double g, c, G, gp, gm, cp, cm;
    sapw_boxEval_f64(pts[p].par, pts[p].vc, &g, &c, &G);
    sapw_boxEval_f64(pts[p].par, pts[p].vc + h, &gp, &cp, NULL);
    sapw_boxEval_f64(pts[p].par, pts[p].vc - h, &gm, &cm, NULL);
    CHECK_CLOSE(-(cp - cm) / (2 * h), g, 1e-8, 1e-6, "point %u dl/dvc", p);
    CHECK_CLOSE(-(gp - gm) / (2 * h), G, 1e-8, 1e-6, "point %u dgamma/dvc", p);
  }
}

/* ---- blocked Cholesky vs LAPACKE ------------------------------------------------- */

static void test_cholesky(void) {
  int sizes[] = {1, 3, 7, 16, 17, 33, 50};
  for (unsigned t = 0; t < sizeof(sizes) / sizeof(sizes[0]); t++) {
    int n = sizes[t];
    double* B = malloc(sizeof(double) * n * n);
    double* A = malloc(sizeof(double) * n * n);
    double* L = malloc(sizeof(double) * n * n);
    float* Lf = malloc(sizeof(float) * n * n);
    double *x = malloc(sizeof(double) * n), *xr = malloc(sizeof(double) * n), *b = malloc(sizeof(double) * n);
    float* xf = malloc(sizeof(float) * n);
    for (int i = 0; i < n * n; i++) B[i] = check_uniform(-1, 1);
    // A = B B' + n I (SPD, well conditioned)
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) {
        double s = i == j ? n : 0;
        for (int k = 0; k < n; k++) s += B[i * n + k] * B[j * n + k];
        A[i * n + j] = s;
      }
    for (int i = 0; i < n; i++) b[i] = check_uniform(-1, 1);
    for (int bs = 1; bs <= 16; bs *= 4) {
      for (int i = 0; i < n * n; i++) { L[i] = A[i]; Lf[i] = (float)A[i]; }
      CHECK(sapw_cholFactor_f64(L, n, n, bs) == 0, "n %d bs %d factor", n, bs);
      CHECK(sapw_cholFactor_f32(Lf, n, n, bs) == 0, "n %d bs %d factor f32", n, bs);
      for (int i = 0; i < n; i++) { x[i] = b[i]; xf[i] = (float)b[i]; }
      sapw_cholSolve_f64(L, n, n, x);
      sapw_cholSolve_f32(Lf, n, n, xf);
      // LAPACKE reference
      double* R = malloc(sizeof(double) * n * n);
      for (int i = 0; i < n * n; i++) R[i] = A[i];
      for (int i = 0; i < n; i++) xr[i] = b[i];
      CHECK(LAPACKE_dposv(LAPACK_ROW_MAJOR, 'L', n, 1, R, n, xr, 1) == 0, "dposv");
      // lower factors agree
      double err = 0, errf = 0, Lmax = 0;
      for (int i = 0; i < n; i++)
        for (int j = 0; j <= i; j++) {
          err = fmax(err, fabs(L[i * n + j] - R[i * n + j]));
          errf = fmax(errf, fabs(Lf[i * n + j] - R[i * n + j]));
          Lmax = fmax(Lmax, fabs(R[i * n + j]));
        }
      CHECK(err <= 1e-13 * Lmax, "n %d bs %d L f64 err %g", n, bs, err);
      CHECK(errf <= 1e-5 * Lmax, "n %d bs %d L f32 err %g", n, bs, errf);
      double xd[64];
      for (int i = 0; i < n; i++) xd[i] = xf[i];
      check_arrays("x f64", x, xr, n, 1e-13, 1e-12);
      check_arrays("x f32", xd, xr, n, 1e-5, 1e-4);
      free(R);
    }
    // an indefinite matrix reports its pivot
    for (int i = 0; i < n * n; i++) L[i] = A[i];
    L[(n - 1) * n + n - 1] = -1;
    CHECK(sapw_cholFactor_f64(L, n, n, 4) == n, "n %d non-SPD detected", n);
    free(B); free(A); free(L); free(Lf); free(x); free(xr); free(b); free(xf);
  }
}

/* ---- tree-sparse factorization vs LAPACKE ------------------------------------------ */

/* parent lists of several shapes over n dofs (par[j] < j, -1 at roots) */
static void forest(int shape, int n, int* par) {
  for (int j = 0; j < n; j++) {
    switch (shape) {
      case 0: par[j] = j - 1; break;                                         // one chain
      case 1: par[j] = j == 0 ? -1 : 0; break;                               // a star
      case 2: par[j] = j == 0 ? -1 : (j - 1) / 2; break;                     // a binary tree
      case 3: par[j] = j % 7 == 0 ? -1 : j - 1; break;                       // chains of 7
      case 4: par[j] = j == 0 || check_uniform(0, 1) < 0.1 ? -1 : (int)check_uniform(0, j); break;
      default: par[j] = j < 6 ? j - 1 : (j % 3 == 0 ? 5 : j - 1);           // a free root, 3-dof limbs
    }
    if (par[j] >= j) par[j] = j - 1;
  }
  if (shape == 6) {  // the random forest renumbered depth-first, children in index order
    int *id = malloc(sizeof(int) * n), *stack = malloc(sizeof(int) * n), *old = malloc(sizeof(int) * n), m = 0;
    for (int j = 0; j < n; j++) old[j] = j == 0 || check_uniform(0, 1) < 0.1 ? -1 : (int)check_uniform(0, j);
    for (int r = 0; r < n; r++) {
      if (old[r] >= 0) continue;
      int top = 0;
      stack[top++] = r;
      while (top) {
        int v = stack[--top];
        id[v] = m++;
        for (int c = n - 1; c > v; c--)  // pushed last to first: popped first to last
          if (old[c] == v) stack[top++] = c;
      }
    }
    for (int j = 0; j < n; j++) par[id[j]] = old[j] < 0 ? -1 : id[old[j]];
    free(id); free(stack); free(old);
  }
}

/* 1 if the forest over [k0, k1) is numbered in depth-first pre-order: a walk from each root
 * in turn, children in index order, visits k0, k0 + 1, ... */
static int is_preorder(const int* par, int k0, int k1) {
  int* stack = malloc(sizeof(int) * (k1 - k0 + 1));
  int next = k0, ok = 1;
  for (int r = k0; r < k1 && ok; r++) {
    if (par[r] >= 0) continue;
    int top = 0;
    stack[top++] = r;
    while (top && ok) {
      int v = stack[--top];
      ok = v == next++;
      for (int c = k1 - 1; c > v; c--)
        if (par[c] == v) stack[top++] = c;
    }
  }
  free(stack);
  return ok;
}

static int is_ancestor(const int* par, int i, int j) {  // j is i or an ancestor of i
  for (int k = i; k >= 0; k = par[k])
    if (k == j) return 1;
  return 0;
}

/* a = sum_k l_k l_k' + diag (l_k on k and its ancestors), rows scaled by s: SPD with the
 * forest's pattern; lda >= n0 + n, the forest's rows at [n0, n0 + n) (par global) */
static void forest_matrix(const int* par, int n0, int n, int lda, double scale_decades, double* a) {
  double* sc = malloc(sizeof(double) * lda);
  for (int i = 0; i < lda; i++) sc[i] = pow(10, check_uniform(-scale_decades, scale_decades));
  for (int i = 0; i < lda * lda; i++) a[i] = 0;
  for (int k = n0; k < n0 + n; k++) {
    double l[128] = {0};
    for (int j = k; j >= 0; j = par[j]) l[j] = check_uniform(-1, 1);
    l[k] = 1 + check_uniform(0, 1);
    for (int i = n0; i < n0 + n; i++)
      for (int j = n0; j < n0 + n; j++) a[i * lda + j] += l[i] * l[j];
  }
  for (int i = n0; i < n0 + n; i++) {
    a[i * lda + i] += 0.1;
    for (int j = n0; j < n0 + n; j++) a[i * lda + j] *= sc[i] * sc[j];
  }
  free(sc);
}

static void test_tree_cholesky(void) {
  int sizes[] = {1, 2, 5, 13, 27, 64};
  int npre = 0, nnot = 0;
  for (int shape = 0; shape < 7; shape++)
    for (unsigned t = 0; t < sizeof(sizes) / sizeof(sizes[0]); t++) {
      int n = sizes[t], lda = n + 3, n0 = 2, N = n0 + n;  // a forest at rows [2, 2 + n) of a larger array
      int *par = malloc(sizeof(int) * lda), *seg = malloc(sizeof(int) * lda), *lp = malloc(sizeof(int) * n);
      forest(shape, n, lp);
      for (int j = 0; j < lda; j++) par[j] = -1;
      for (int j = 0; j < n; j++) par[n0 + j] = lp[j] < 0 ? -1 : n0 + lp[j];
      sapw_treeSegments_f64(par, n0, N, seg);
      for (int j = n0; j < N; j++) {  // segments: [seg, j] consecutive parent links, maximal
        for (int x = seg[j] + 1; x <= j; x++) CHECK(par[x] == x - 1, "shape %d n %d seg of %d", shape, n, j);
        CHECK(seg[j] == n0 || par[seg[j]] != seg[j] - 1, "shape %d n %d seg of %d not maximal", shape, n, j);
      }
      for (int decades = 0; decades <= 3; decades += 3) {
        double *A = malloc(sizeof(double) * lda * lda), *L = malloc(sizeof(double) * lda * lda);
        float* Lf = malloc(sizeof(float) * lda * lda);
        double *b = malloc(sizeof(double) * lda), *x = malloc(sizeof(double) * lda), *xr = malloc(sizeof(double) * n);
        float* xf = malloc(sizeof(float) * lda);
        forest_matrix(par, n0, n, lda, decades, A);
        for (int i = 0; i < lda * lda; i++) L[i] = A[i], Lf[i] = (float)A[i];
        for (int i = 0; i < lda; i++) b[i] = x[i] = check_uniform(-1, 1), xf[i] = (float)b[i];
        CHECK(sapw_treePattern_f64(L, n0, N, lda, par, seg), "shape %d n %d: pattern", shape, n);
        CHECK(sapw_treeFactor_f64(L, n0, N, lda, par, seg) == 0, "shape %d n %d: factor", shape, n);
        CHECK(sapw_treeFactor_f32(Lf, n0, N, lda, par, seg) == 0, "shape %d n %d: factor f32", shape, n);
        sapw_treeSolve_f64(L, n0, N, lda, par, seg, x);
        sapw_treeSolve_f32(Lf, n0, N, lda, par, seg, xf);
        /* the left-looking factorization (the Newton solve's on pre-order forests): the
           pre-order test against a depth-first walk, then the same factor bit for bit */
        int pre = sapw_treePreorder_f64(par, n0, N);
        CHECK(pre == is_preorder(par, n0, N), "shape %d n %d: pre-order %d, walk says %d", shape, n, pre,
              is_preorder(par, n0, N));
        npre += pre;
        nnot += !pre;
        if (pre) {
          int* end = malloc(sizeof(int) * lda);
          sapw_treeEnds_f64(par, n0, N, end);
          for (int i = n0; i < N; i++) {  // the last k whose root path holds i
            int e = i;
            for (int k = i; k < N; k++)
              if (is_ancestor(par, k, i)) e = k;
            CHECK(end[i] == e, "shape %d n %d: subtree of %d ends at %d, not %d", shape, n, i, end[i], e);
          }
          double* L2 = malloc(sizeof(double) * lda * lda);
          float* Lf2 = malloc(sizeof(float) * lda * lda);
          for (int i = 0; i < lda * lda; i++) L2[i] = A[i], Lf2[i] = (float)A[i];
          CHECK(sapw_treeFactorPre_f64(L2, n0, N, lda, par, seg, end) == 0, "shape %d n %d: left-looking", shape, n);
          CHECK(sapw_treeFactorPre_f32(Lf2, n0, N, lda, par, seg, end) == 0, "shape %d n %d: left-looking f32", shape, n);
          CHECK(!memcmp(L2, L, sizeof(double) * lda * lda), "shape %d n %d: left-looking factor differs", shape, n);
          CHECK(!memcmp(Lf2, Lf, sizeof(float) * lda * lda), "shape %d n %d: left-looking f32 factor differs", shape,
                n);
          // the left-looking forward pass: sapw_treeSolve's x bit for bit
          double* x2 = malloc(sizeof(double) * lda);
          float* xf2 = malloc(sizeof(float) * lda);
          for (int i = 0; i < lda; i++) x2[i] = b[i], xf2[i] = (float)b[i];
          sapw_treeSolvePre_f64(L2, n0, N, lda, par, seg, end, x2);
          sapw_treeSolvePre_f32(Lf2, n0, N, lda, par, seg, end, xf2);
          CHECK(!memcmp(x2, x, sizeof(double) * lda), "shape %d n %d: left-looking solve differs", shape, n);
          CHECK(!memcmp(xf2, xf, sizeof(float) * lda), "shape %d n %d: left-looking f32 solve differs", shape, n);
          free(x2); free(xf2);
          free(L2); free(Lf2); free(end);
        }
        // L' L = A on the pattern, and the entries off the pattern were left alone
        double ferr = 0, amax = 0;
        for (int i = n0; i < N; i++)
          for (int j = n0; j <= i; j++) {
            amax = fmax(amax, fabs(A[i * lda + j]));
            if (!is_ancestor(par, i, j)) {
              CHECK(L[i * lda + j] == 0, "shape %d n %d: entry (%d, %d) off the pattern written", shape, n, i, j);
              continue;
            }
            double s = 0;
            for (int k = i; k < N; k++)
              if (is_ancestor(par, k, i)) s += L[k * lda + i] * L[k * lda + j];
            ferr = fmax(ferr, fabs(s - A[i * lda + j]));
          }
        CHECK(ferr <= 1e-14 * amax * n, "shape %d n %d decades %d: |L'L - A| %g of %g", shape, n, decades, ferr,
              amax);
        // LAPACKE's solve of the dense block
        double* R = malloc(sizeof(double) * n * n);
        for (int i = 0; i < n; i++) {
          xr[i] = b[n0 + i];
          for (int j = 0; j < n; j++) R[i * n + j] = A[(n0 + i) * lda + n0 + j];
        }
        CHECK(LAPACKE_dposv(LAPACK_ROW_MAJOR, 'L', n, 1, R, n, xr, 1) == 0, "dposv");
        double xd[128];
        for (int i = 0; i < n; i++) xd[i] = xf[n0 + i];
        double tol = decades ? 1e-9 : 1e-12, tolf = decades ? 2e-1 : 1e-4;
        check_arrays("tree x f64", x + n0, xr, n, tol, tol);
        check_arrays("tree x f32", xd, xr, n, tolf, tolf);
        for (int i = 0; i < n0; i++) CHECK(x[i] == b[i], "shape %d n %d: x outside the range changed", shape, n);
        free(R);
        // an entry off the pattern is seen; a non-positive pivot is reported at its row
        if (n > 2) {
          int i = -1, j = -1;
          for (int r = n0 + 1; r < N && i < 0; r++)
            for (int c = n0; c < r && i < 0; c++)
              if (!is_ancestor(par, r, c)) i = r, j = c;
          if (i >= 0) {
            for (int q = 0; q < lda * lda; q++) L[q] = A[q];
            L[i * lda + j] = 1e-300;
            CHECK(!sapw_treePattern_f64(L, n0, N, lda, par, seg), "shape %d n %d: (%d, %d) off the pattern not seen",
                  shape, n, i, j);
          }
          for (int q = 0; q < lda * lda; q++) L[q] = A[q];
          int k = n0 + n / 2;
          L[k * lda + k] = -1;
          int f = sapw_treeFactor_f64(L, n0, N, lda, par, seg);
          CHECK(f >= k + 1 && f <= N, "shape %d n %d: pivot %d reported as %d", shape, n, k, f - 1);
          if (sapw_treePreorder_f64(par, n0, N)) {  // the left-looking one fails at the same row
            for (int q = 0; q < lda * lda; q++) L[q] = A[q];
            L[k * lda + k] = -1;
            int* end = malloc(sizeof(int) * lda);
            sapw_treeEnds_f64(par, n0, N, end);
            int f2 = sapw_treeFactorPre_f64(L, n0, N, lda, par, seg, end);
            free(end);
            CHECK(f2 == f, "shape %d n %d: left-looking pivot %d, right-looking %d", shape, n, f2 - 1, f - 1);
          }
        }
        free(A); free(L); free(Lf); free(b); free(x); free(xr); free(xf);
      }
      free(par); free(seg); free(lp);
    }
  CHECK(npre > 0 && nnot > 0, "forests in pre-order %d, not %d: both kinds needed", npre, nnot);
}

/* ---- line searches on analytic 1-D costs ----------------------------------------- */

typedef double (*Phi)(double a, double* d1, double* d2);
static double phi_quad(double a, double* d1, double* d2) {  // (a - 1)^2 - 1: minimum at 1
  *d1 = 2 * (a - 1); *d2 = 2;
  return (a - 1) * (a - 1) - 1;
}
static double phi_exp(double a, double* d1, double* d2) {  // e^a - 2a: minimum at ln 2
  *d1 = exp(a) - 2; *d2 = exp(a);
  return exp(a) - 2 * a;
}
static double phi_far(double a, double* d1, double* d2) {  // (a - 3)^2: minimum beyond alpha_max
  *d1 = 2 * (a - 3); *d2 = 2;
  return (a - 3) * (a - 3);
}
static double phi_quartic(double a, double* d1, double* d2) {  // (a - 0.3)^4/4
  double x = a - 0.3;
  *d1 = x * x * x; *d2 = 3 * x * x;
  return x * x * x * x / 4;
}

/* a stiff kink just past 0, as a near-rigid limit the Newton step drives into:
 * 1/2 a^2 - a + K/2 max(0, a - ak)^2, K = 1e5, ak = 1e-6; minimum a* = (1 + K ak)/(1 + K) */
static double phi_kink(double a, double* d1, double* d2) {
  const double K = 1e5, ak = 1e-6, x = a > ak ? a - ak : 0;
  *d1 = a - 1 + K * x; *d2 = 1 + (a > ak ? K : 0);
  return a * a / 2 - a + K / 2 * x * x;
}
static double phi_nan(double a, double* d1, double* d2) {  // descent at 0, NaN beyond
  *d1 = a == 0 ? -1 : NAN; *d2 = 1;
  return a == 0 ? 0 : NAN;
}

static sapSolveParams ls_params(int kind) {
  sapSolveParams p;
  memset(&p, 0, sizeof(p));
  p.line_search = kind;
  p.ls_max_iterations = kind == SAP_LS_EXACT ? 100 : 40;
  p.armijo_c = 1e-4; p.rho = 0.8; p.ls_slop = 1000 * 2.220446049250313e-16;
  p.cost_abs = kind == SAP_LS_MONOTONE ? 0 : 1e-30;
  p.cost_rel = kind == SAP_LS_MONOTONE ? 5e-3 : 1e-15;
  return p;
}

static sapLineSearch_f64 run_ls(int kind, Phi f, int* nevals) {
  sapSolveParams p = ls_params(kind);
  sapLineSearch_f64 ls;
  double d1, d2, phi0 = f(0, &d1, &d2);
  sapw_lsBegin_f64(&ls, &p, phi0, d1, d2);
  *nevals = 0;
  while (ls.status == SAP_LS_RUNNING) {
    double e1, e2, v = f(ls.alpha, &e1, &e2);
    sapw_lsFeed_f64(&ls, v, e1, e2);
    (*nevals)++;
  }
  return ls;
}

static void test_linesearch(void) {
  int ne;
  sapLineSearch_f64 ls;
  // quadratic (drake §6.22): exact alpha = 1 in 1 evaluation, armijo alpha = 1 in 2 iterations
  ls = run_ls(SAP_LS_EXACT, phi_quad, &ne);
  CHECK(ls.status == SAP_LS_DONE && ls.iter == 1, "exact quad status %d iter %d", ls.status, ls.iter);
  CHECK_CLOSE(ls.alpha, 1, 1e-12, 0, "exact quad alpha");
  ls = run_ls(SAP_LS_ARMIJO, phi_quad, &ne);
  CHECK(ls.status == SAP_LS_DONE && ls.iter == 2, "armijo quad status %d iter %d", ls.status, ls.iter);
  CHECK_CLOSE(ls.alpha, 1, 1e-15, 0, "armijo quad alpha");
  ls = run_ls(SAP_LS_MONOTONE, phi_quad, &ne);
  CHECK(ls.status == SAP_LS_DONE && ls.iter == 1 && ls.alpha == 1, "monotone quad");
  // minimum beyond alpha_max: exact takes 1.5, armijo 1.25, with 0 iterations
  ls = run_ls(SAP_LS_EXACT, phi_far, &ne);
  CHECK(ls.status == SAP_LS_DONE && ls.iter == 0 && ls.alpha == 1.5, "exact far");
  ls = run_ls(SAP_LS_ARMIJO, phi_far, &ne);
  CHECK(ls.status == SAP_LS_DONE && ls.iter == 0 && ls.alpha == 1.25, "armijo far");
  // e^a - 2a: exact finds ln 2; armijo satisfies sufficient decrease
  ls = run_ls(SAP_LS_EXACT, phi_exp, &ne);
  CHECK(ls.status == SAP_LS_DONE, "exact exp status %d", ls.status);
  CHECK_CLOSE(ls.alpha, log(2.0), 1e-8, 0, "exact exp alpha");
  ls = run_ls(SAP_LS_ARMIJO, phi_exp, &ne);
  double d1, d2, f0 = phi_exp(0, &d1, &d2), fa = phi_exp(ls.alpha, &d1, &d2);
  CHECK(ls.status == SAP_LS_DONE && fa < f0 + 1e-4 * ls.alpha * -1, "armijo exp decrease");
  // line minimum below armijo_decay's smallest scheduled step 0.8^38 = 2.1e-4: drake and
  // SAP Warp fail at the cap; the rescue shrinks by quadratic interpolation to an Armijo point
  ls = run_ls(SAP_LS_ARMIJO, phi_kink, &ne);
  double astar = (1 + 1e5 * 1e-6) / (1 + 1e5), fk = phi_kink(ls.alpha, &d1, &d2);
  CHECK(ls.status == SAP_LS_DONE && ls.iter > 40 && ls.iter <= 40 + SAP_LS_ARMIJO_RESCUE,
        "armijo kink status %d iter %d", ls.status, ls.iter);
  CHECK(fk < 1e-4 * ls.alpha * -1, "armijo kink: sufficient decrease (alpha %g)", ls.alpha);
  CHECK(ls.alpha > astar / 10 && ls.alpha < 2 * astar, "armijo kink alpha %g near a* %g", ls.alpha, astar);
  ls = run_ls(SAP_LS_EXACT, phi_kink, &ne);
  CHECK_CLOSE(ls.alpha, astar, 0, 1e-6, "exact kink alpha");
  // nothing acceptable: the rescue gives up after its budget and says so
  ls = run_ls(SAP_LS_ARMIJO, phi_nan, &ne);
  CHECK(ls.status == SAP_LS_FAIL_SMALL && ls.iter == 40 + SAP_LS_ARMIJO_RESCUE, "armijo NaN fails (%d, %d)",
        ls.status, ls.iter);
  // flat triple root: Newton slows down, bisection takes over
  ls = run_ls(SAP_LS_EXACT, phi_quartic, &ne);
  CHECK(ls.status == SAP_LS_DONE, "exact quartic status %d", ls.status);
  CHECK_CLOSE(ls.alpha, 0.3, 2e-3, 0, "exact quartic alpha");
  // not a descent direction: every variant fails
  for (int k = 0; k < 3; k++) {
    sapSolveParams p = ls_params(k);
    sapw_lsBegin_f64(&ls, &p, 1.0, 0.5, 1.0);
    CHECK(ls.status == SAP_LS_FAIL_DESCENT, "kind %d non-descent fails", k);
  }
}

/* newton_wolfe on the failing search of Menagerie's shadow hand (right hand scene, 4 worlds,
 * defaults, one of 800 world-steps flagged line-search-failure before the fix): at the 8th
 * Newton iteration phi(0) = 0.073372224673446493, phi'(0) = -9.3340449248847876e-17,
 * phi'' = 9.334086766863e-17 (all read from the run), so the whole decrease along the line is
 * phi'(0)^2 / (2 phi'') = 4.7e-17, 3.4 ulps of phi(0), while the evaluations of phi scattered
 * by 6 ulps. Model: the exact quadratic plus a rounding error of +4 ulps at every trial
 * (phi's evaluation noise, the worst sign), phi' exact. No trial can then pass Armijo; the
 * search bisected the noise down to alpha ~ 1e-12 and failed. Oracle: the exact line
 * minimiser a* = -phi'(0)/phi'' of the quadratic. */
static const double sh_c = 0.073372224673446493, sh_d0 = -9.3340449248847876e-17, sh_k = 9.334086766863e-17;
static double sh_noise = 4;  /* ulps of phi(0) added to every trial's phi */
static double phi_shadow(double a, double* d1, double* d2) {
  *d1 = sh_d0 + sh_k * a; *d2 = sh_k;
  if (a == 0) return sh_c;
  double ulp = nextafter(sh_c, 1) - sh_c;
  return sh_c + (sh_d0 * a + sh_k / 2 * a * a) + sh_noise * ulp;
}
/* a stiff constraint entering at ak and saturating at ak + w (phi' jumps by K w, its
 * curvature K only inside [ak, ak + w]: a near-rigid contact reaching its friction limit),
 * phi' = -1 + a + K clamp(a - ak, 0, w); the smooth part alone would put the minimum at 1,
 * past the constraint. Oracle: the root a* = (1 + K ak)/(1 + K) inside the stiff stretch */
static const double sk_K = 2000, sk_ak = 0.73, sk_w = 0.01;
static double phi_stiff(double a, double* d1, double* d2) {
  double x = a - sk_ak, in = x < 0 ? 0 : x > sk_w ? sk_w : x;
  *d1 = -1 + a + sk_K * in;
  *d2 = 1 + (x > 0 && x < sk_w ? sk_K : 0);
  return -a + a * a / 2 + sk_K / 2 * in * in + sk_K * sk_w * (x > sk_w ? x - sk_w : 0);
}

static void test_linesearch_newton_wolfe(void) {
  int ne;
  sapLineSearch_f64 ls;
  double d1, d2, eta = SAP_LS_NEWTON_ETA;
  // quadratic: the Newton step alpha = 1 in one evaluation
  ls = run_ls(SAP_LS_NEWTON, phi_quad, &ne);
  CHECK(ls.status == SAP_LS_DONE && ne == 1 && ls.alpha == 1, "newton_wolfe quad (%d, %d, %g)", ls.status, ne,
        ls.alpha);
  ls = run_ls(SAP_LS_NEWTON, phi_exp, &ne);
  phi_exp(ls.alpha, &d1, &d2);
  CHECK(ls.status == SAP_LS_DONE && fabs(d1) <= eta * 1, "newton_wolfe exp: Wolfe point (phi' %g)", d1);
  // the shadow hand's search: the model really defeats Armijo (every trial's phi is above
  // phi(0) + c1 a phi'(0)), and the Newton step alpha = 1 is taken at once
  double p1 = phi_shadow(1, &d1, &d2), astar = -sh_d0 / sh_k;
  CHECK(!(p1 < sh_c + 1e-4 * sh_d0) && !(phi_shadow(astar, &d1, &d2) < sh_c), "shadow model defeats Armijo");
  ls = run_ls(SAP_LS_NEWTON, phi_shadow, &ne);
  CHECK(ls.status == SAP_LS_DONE && ne == 1, "newton_wolfe shadow hand: status %d after %d evaluations", ls.status,
        ne);
  CHECK_CLOSE(ls.alpha, astar, 0, eta, "newton_wolfe shadow hand alpha vs the line minimiser");
  // flybody's fruit fly (Menagerie, 120 contacts; 12 of 3200 world-steps flagged before the
  // fix): phi(0) = 0.828, phi'(0) = -4.6441e-13 = -phi'', the Newton step's phi computed 3.5e-13
  // (~3200 ulps) above phi(0) with phi'(1) = -2.9e-18. phi' says the convex phi fell on [0, 1],
  // so the rise is phi's evaluation rounding: the step is taken (Hager-Zhang's approximate Wolfe
  // conditions, eps_k = 1e-6 |phi(0)|). Model: the shadow hand's quadratic above with that
  // level of evaluation noise, 3200 ulps, then 1e4 ulps (1.4e-12 relative)
  sh_noise = 3200;
  ls = run_ls(SAP_LS_NEWTON, phi_shadow, &ne);
  CHECK(ls.status == SAP_LS_DONE && ne == 1 && ls.alpha == 1, "newton_wolfe flybody: status %d after %d evaluations",
        ls.status, ne);
  sh_noise = 1e4;
  ls = run_ls(SAP_LS_NEWTON, phi_shadow, &ne);
  CHECK(ls.status == SAP_LS_DONE && ls.alpha == 1, "newton_wolfe: 1e4 ulps of evaluation noise (status %d)", ls.status);
  // a rise beyond eps_k (1e11 ulps, 1.4e-5 relative) is no rounding: phi and phi' disagree,
  // nothing is acceptable and the search reports the failure
  sh_noise = 1e11;
  ls = run_ls(SAP_LS_NEWTON, phi_shadow, &ne);
  CHECK(ls.status == SAP_LS_FAIL_MAXIT, "newton_wolfe: a real rise is no noise (status %d)", ls.status);
  sh_noise = 4;
  // the stiff stretch: the secant crept from the left end (phi'(xu) >> |phi'(xl)|); the
  // bracket must halve every two trials, so the Wolfe interval around a* (width
  // 2 eta / (1 + K)) is reached within 2 log2((1 + K) / (2 eta)) + 2 trials
  double as = (1 + sk_K * sk_ak) / (1 + sk_K);
  ls = run_ls(SAP_LS_NEWTON, phi_stiff, &ne);
  phi_stiff(ls.alpha, &d1, &d2);
  int bound = 2 * (int)ceil(log2((1 + sk_K) / (2 * eta))) + 2;
  CHECK(ls.status == SAP_LS_DONE && fabs(d1) <= eta, "newton_wolfe stiff: status %d phi' %g", ls.status, d1);
  CHECK_CLOSE(ls.alpha, as, eta / (1 + sk_K), 0, "newton_wolfe stiff alpha vs the root of phi'");
  CHECK(ne <= bound, "newton_wolfe stiff: %d evaluations, bound %d", ne, bound);
  printf("  newton_wolfe stiff stretch: %d evaluations (bound %d)\n", ne, bound);
}

/* ---- scratch layout ---------------------------------------------------------------- */

/* the solve's scratch size is its carve's: carve a buffer of exactly sapw_problemBytes bytes
 * followed by guard bytes, then fill each array over the extent its shape comment in
 * kernels/sap_problem_t.h states (an independent count), each with its own byte; afterwards
 * every array must still hold its own byte (no two overlap) and start aligned to its elements, the last byte filled must be the
 * buffer's last padded byte (the size is not larger than the layout) and no guard byte may
 * change (not smaller). Sizes over decades, 3/4/6 rows per contact, fp32/fp64 objective and
 * fp32/fp64 linear solve, H and L in the carve (GPU) or not (the CPU's thread buffers: then
 * H, L and the pattern's block numbers trk are null until sapw_islandOffsets) */
#define CARVE_GUARD 256
typedef struct { unsigned char* p; long bytes; int elem; } CarveArr;  /* elem: element bytes */

#define CARVE_ARRAYS(T, P, R)                                                                                   \
  do {                                                                                                          \
    long nr_ = cd * (long)c + ns;                                                                               \
    n = 0;                                                                                                      \
    a[n++] = (CarveArr){(unsigned char*)(P)->sval, 8L * ns * snz, 8};                                           \
    if (hl && lin != (R)) a[n++] = (CarveArr){(unsigned char*)(P)->H, (R) * (long)nv * nv, (R)};                \
    if (hl) a[n++] = (CarveArr){(unsigned char*)(P)->L, (long)lin * nv * (nv + 1), lin};                        \
    T* vecs_[8] = {(P)->v, (P)->r, (P)->grad, (P)->jc, (P)->dv, (P)->Adv, (P)->pstar, (P)->dscale};             \
    for (int k_ = 0; k_ < 8; k_++) a[n++] = (CarveArr){(unsigned char*)vecs_[k_], (R) * nv, (R)};               \
    a[n++] = (CarveArr){(unsigned char*)(P)->rows, (R) * cd * nv, (R)};                                         \
    a[n++] = (CarveArr){(unsigned char*)(P)->body6, (R) * 6 * nbody, (R)};                                      \
    a[n++] = (CarveArr){(unsigned char*)(P)->cpar, (R) * SAP_CPAR_OF(cd) * c, (R)};                             \
    a[n++] = (CarveArr){(unsigned char*)(P)->spar, (R) * SAP_SPAR * ns, (R)};                                   \
    a[n++] = (CarveArr){(unsigned char*)(P)->vc, (R) * nr_, (R)};                                               \
    a[n++] = (CarveArr){(unsigned char*)(P)->dvc, (R) * nr_, (R)};                                              \
    a[n++] = (CarveArr){(unsigned char*)(P)->gam, (R) * nr_, (R)};                                              \
    a[n++] = (CarveArr){(unsigned char*)(P)->sidx, 4L * ns * snz, 4};                                           \
    a[n++] = (CarveArr){(unsigned char*)(P)->chain, 4L * nv, 4};                                                \
    int* ivec_[5] = {(P)->isl, (P)->iloc, (P)->idof, (P)->tlo, (P)->thi};                                       \
    for (int k_ = 0; k_ < 5; k_++) a[n++] = (CarveArr){(unsigned char*)ivec_[k_], 4L * nv, 4};                  \
    a[n++] = (CarveArr){(unsigned char*)(P)->ibeg, 4L * (nv + 1), 4};                                           \
    a[n++] = (CarveArr){(unsigned char*)(P)->hoff, 8L * (nv + 1), 8};                                           \
    long T_ = nv < nbody ? nv : nbody; /* trees: each has a dof and a body */                                   \
    a[n++] = (CarveArr){(unsigned char*)(P)->tpat, 4 * (T_ + 1) * ((T_ + 31) / 32), 4};                         \
    if (hl) a[n++] = (CarveArr){(unsigned char*)(P)->trk, 4 * T_ * ((T_ + 31) / 32), 4};                        \
    a[n++] = (CarveArr){(unsigned char*)(P)->tbo, 4L * nv, 4};                                                  \
    a[n++] = (CarveArr){(unsigned char*)(P)->loop, (long)sizeof(*(P)->loop), 8};                                \
    a[n++] = (CarveArr){(unsigned char*)(P)->adof, 4L * nv, 4};                                                 \
    a[n++] = (CarveArr){(unsigned char*)(P)->abody, 4L * nbody, 4};                                             \
    a[n++] = (CarveArr){(unsigned char*)(P)->cptw, (R) * 6 * c, (R)};                                          \
    a[n++] = (CarveArr){(unsigned char*)(P)->cbody, 4L * 2 * c, 4};                                             \
    if (nhalf) a[n++] = (CarveArr){(unsigned char*)(P)->half, 8L * nhalf, 8};                                   \
    a[n++] = (CarveArr){(unsigned char*)(P)->icon, 4L * c, 4};                                                  \
    a[n++] = (CarveArr){(unsigned char*)(P)->irow, 4L * ns, 4};                                                 \
    a[n++] = (CarveArr){(unsigned char*)(P)->ibody, 4L * nbody, 4};                                             \
    a[n++] = (CarveArr){(unsigned char*)(P)->sbody, 4L * nbody, 4};                                             \
    a[n++] = (CarveArr){(unsigned char*)(P)->vbody, 4L * nbody, 4};                                             \
    int* vbeg_[3] = {(P)->cbeg, (P)->rbeg, (P)->bbeg};                                                          \
    for (int k_ = 0; k_ < 3; k_++) a[n++] = (CarveArr){(unsigned char*)vbeg_[k_], 4L * (nv + 2), 4};            \
  } while (0)

static void test_problem_scratch_from_carve(void) {
  const int sizes[][5] = {/* nv, nbody, contacts, scalar rows, row entries */
                          {1, 2, 0, 0, 1},     {6, 2, 1, 1, 1},      {7, 9, 3, 5, 2},
                          {27, 14, 120, 40, 7}, {162, 28, 480, 3, 1}, {301, 60, 33, 250, 19}};
  const int cds[3] = {3, 4, 6};
  CarveArr a[48];
  int checked = 0;
  for (unsigned si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++)
    for (int ci = 0; ci < 3; ci++)
      for (int fp32 = 0; fp32 < 2; fp32++)
        for (int lhl = 0; lhl < 4; lhl++) {
          int lin = lhl & 1 ? 8 : 4, hl = lhl >> 1;
          int nv = sizes[si][0], nbody = sizes[si][1], c = sizes[si][2], ns = sizes[si][3], snz = sizes[si][4];
          int cd = cds[ci], n;
          long nhalf = si % 2 ? 14L * nv + 22L * nbody : 0;  // half-step frames of equality rows (or none)
          long bytes = fp32 ? sapw_problemBytes_f32(nv, nbody, c, cd, ns, snz, lin, nhalf, hl)
                            : sapw_problemBytes_f64(nv, nbody, c, cd, ns, snz, lin, nhalf, hl);
          unsigned char* buf = aligned_alloc(64, (size_t)(bytes + CARVE_GUARD + 63) / 64 * 64);
          memset(buf, 0xA5, (size_t)(bytes + CARVE_GUARD));
          sapProblem_f32 P32;
          sapProblem_f64 P64;
          if (fp32) {
            long got = sapw_carve_f32(&P32, buf, nv, nbody, c, cd, ns, snz, lin, nhalf, hl);
            CHECK(hl || (!P32.H && !P32.L && !P32.trk), "H, L or trk carved with hl_carved 0");
            CHECK(got == bytes, "carve returns %ld, problemBytes %ld", got, bytes);
            CARVE_ARRAYS(float, &P32, 4L);
          } else {
            long got = sapw_carve_f64(&P64, buf, nv, nbody, c, cd, ns, snz, lin, nhalf, hl);
            CHECK(hl || (!P64.H && !P64.L && !P64.trk), "H, L or trk carved with hl_carved 0");
            CHECK(got == bytes, "carve returns %ld, problemBytes %ld", got, bytes);
            CARVE_ARRAYS(double, &P64, 8L);
          }
          long end = 0;
          for (int k = 0; k < n; k++) {
            CHECK(a[k].p >= buf && (a[k].p - buf) % a[k].elem == 0,
                  "array %d starts at offset %ld (not inside or not %d-aligned)", k, (long)(a[k].p - buf), a[k].elem);
            memset(a[k].p, k + 1, (size_t)a[k].bytes);
            long e = (long)(a[k].p - buf) + a[k].bytes;
            if (e > end) end = e;
          }
          for (int k = 0; k < n; k++) {
            long bad = 0;
            for (long b = 0; b < a[k].bytes; b++) bad += a[k].p[b] != k + 1;
            CHECK(bad == 0, "nv %d cd %d fp%d lin %d: array %d overlaps another (%ld bytes changed)", nv, cd,
                  fp32 ? 32 : 64, lin * 8, k, bad);
          }
          long guard = 0;
          for (long b = bytes; b < bytes + CARVE_GUARD; b++) guard += buf[b] != 0xA5;
          CHECK(guard == 0, "nv %d cd %d fp%d lin %d: %ld guard bytes written (size %ld too small)", nv, cd,
                fp32 ? 32 : 64, lin * 8, guard, bytes);
          CHECK(bytes - end >= 0 && bytes - end < 8, "nv %d cd %d fp%d lin %d: arrays end at %ld, size %ld", nv, cd,
                fp32 ? 32 : 64, lin * 8, end, bytes);
          free(buf);
          checked++;
        }
  CHECK(checked == 144, "layouts checked: %d", checked);
}

/* ---- Newton on small problems ---------------------------------------------------- */

typedef struct {
  sapProblem_f64 P;
  double work[4096];
  int aadr[64];  // A dense: row i at i nv (sapProblem.Aadr)
} Prob;

/* carve a problem with nv dofs, nc contacts (of a model with nbody bodies), ns scalar rows of
 * up to nv entries (prob_entry) from a static buffer */
static void prob_init(Prob* q, int nv, int nc, int ns, const double* A, const double* vstar) {
  memset(q, 0, sizeof(*q));
  int nbody = 2;
  CHECK(sapw_problemBytes_f64(nv, nbody, nc, 3, ns, nv, 8, 0, 1) <= (long)sizeof(q->work), "work size");
  sapw_carve_f64(&q->P, q->work, nv, nbody, nc, 3, ns, nv, 8, 0, 1);
  q->P.nv = nv; q->P.nc = nc; q->P.ns = ns;
  q->P.A = A; q->P.vstar = vstar;
  CHECK(nv <= 64, "nv %d", nv);
  for (int i = 0; i < nv; i++) q->aadr[i] = i * nv;
  q->P.Aadr = q->aadr;
  for (int j = 0; j < nv; j++) q->P.dscale[j] = 1 / sqrt(A[j * nv + j]);
  for (int k = 0; k < ns * nv; k++) q->P.sidx[k] = -1;
}

/* scalar row s gets the entry val at dof j */
static void prob_entry(Prob* q, int s, int j, double val) {
  int k = s * q->P.snz;
  while (q->P.sidx[k] >= 0) k++;
  q->P.sidx[k] = j;
  q->P.sval[k] = val;
}

static sapSolveParams newton_params(int kind) {
  sapSolveParams p = ls_params(kind);
  p.max_iterations = 100; p.opt_abs = 1e-14; p.opt_rel = 1e-6;
  p.cost_min_alpha = kind == SAP_LS_MONOTONE ? 0 : 0.5;
  return p;
}

/* drake §6.12: 9 dofs, box velocity constraint on dofs 2..4 as six scalar rows, R = 1000 */
static void test_newton_box(void) {
  static double A[81];
  double S22[4] = {2, 1, 1, 2}, S33[9] = {4, 1, 2, 1, 5, 3, 2, 3, 6};
  double S44[16] = {7, 1, 2, 3, 1, 8, 4, 5, 2, 4, 9, 6, 3, 5, 6, 10};
  for (int i = 0; i < 81; i++) A[i] = 0;
  for (int i = 0; i < 2; i++) for (int j = 0; j < 2; j++) A[i * 9 + j] = S22[2 * i + j];
  for (int i = 0; i < 3; i++) for (int j = 0; j < 3; j++) A[(2 + i) * 9 + 2 + j] = S33[3 * i + j];
  for (int i = 0; i < 4; i++) for (int j = 0; j < 4; j++) A[(5 + i) * 9 + 5 + j] = S44[4 * i + j];
  double vstar[9] = {1, 2, -1, 0, 1, 6, 7, 8, 9}, vl[3] = {-3, -2, -1}, vu[3] = {1, 2, 3};
  for (int kind = 0; kind < 3; kind++) {
    for (int guess = 0; guess < 2; guess++) {
      Prob q;
      prob_init(&q, 9, 0, 6, A, vstar);
      for (int k = 0; k < 3; k++) {
        prob_entry(&q, k, 2 + k, 1);       // v >= vl: y = (vl - v)/R
        prob_entry(&q, 3 + k, 2 + k, -1);  // v <= vu: y = (-vu + v)/R
        double* p0 = q.P.spar + SAP_SPAR * k;
        double* p1 = q.P.spar + SAP_SPAR * (3 + k);
        p0[0] = p1[0] = 1000; p0[1] = vl[k]; p1[1] = -vu[k];
        p0[2] = p1[2] = 0; p0[3] = p1[3] = INFINITY;
      }
      for (int j = 0; j < 9; j++) q.P.v[j] = vstar[j];
      if (guess == 0) for (int k = 0; k < 3; k++) q.P.v[2 + k] = 0.9 * vl[k] + 0.1 * vu[k];
      else { q.P.v[2] = 1.2 * vl[0]; q.P.v[4] = 1.1 * vu[2]; }
      sapSolveParams p = newton_params(kind);
      sapSolveStats st;
      sapw_newton_f64(&q.P, &p, &st);
      CHECK(st.flags == SAP_WORLD_CONVERGED, "kind %d guess %d flags %d", kind, guess, st.flags);
      check_arrays("v = v*", q.P.v, vstar, 9, 1e-14, 1e-14);
      if (guess == 0) {
        CHECK(st.iters == 1, "kind %d inside: 1 iteration (%d)", kind, st.iters);
        if (kind == SAP_LS_EXACT) CHECK(st.ls_iters == 1, "exact: 1 evaluation (%d)", st.ls_iters);
        if (kind == SAP_LS_ARMIJO) CHECK(st.ls_iters == 2, "armijo: 2 iterations (%d)", st.ls_iters);
      } else {
        CHECK(st.iters > 1, "kind %d outside: > 1 iteration (%d)", kind, st.iters);
      }
    }
  }
}

/* an indefinite Newton matrix is flagged as a factorization failure, v left as it was */
static void test_newton_factorfail(void) {
  double A[4] = {1, 2, 2, 1}, vstar[2] = {1, 0};
  Prob q;
  prob_init(&q, 2, 0, 0, A, vstar);
  q.P.v[0] = q.P.v[1] = 0;
  sapSolveParams p = newton_params(SAP_LS_ARMIJO);
  sapSolveStats st;
  sapw_newton_f64(&q.P, &p, &st);
  CHECK(st.flags == SAP_WORLD_FACTORFAIL && st.nfactor == 1 && st.iters == 0, "flags 0x%x nfactor %d",
        st.flags, st.nfactor);
  CHECK(q.P.v[0] == 0 && q.P.v[1] == 0, "v unchanged");
}

/* drake §6.14 / §6.15 one-dof scenarios: A = 1, v* = 0, dt 0.01 */
static void test_newton_pd_limit(void) {
  double A[1] = {1}, vstar[1] = {0};
  for (int kind = 0; kind < 3; kind++) {
    double eff[2] = {1000, 10}, want[2] = {1 / 1.21, 0.1};
    for (int e = 0; e < 2; e++) {
      Prob q;
      prob_init(&q, 1, 0, 1, A, vstar);
      prob_entry(&q, 0, 0, 1);
      sapw_pdSetup_f64(0.01, 100, 20, 0, 1, 0, 0, -eff[e], eff[e], q.P.spar);
      q.P.v[0] = 0;
      sapSolveParams p = newton_params(kind);
      sapSolveStats st;
      sapw_newton_f64(&q.P, &p, &st);
      CHECK(st.flags == SAP_WORLD_CONVERGED, "pd kind %d flags %d", kind, st.flags);
      CHECK_CLOSE(q.P.v[0], want[e], 1e-12, 1e-9, "pd kind %d effort %g", kind, eff[e]);
    }
    // upper limit 0, q0 = 1 mm: gamma = 0.05/(1 + R), v = -gamma, one iteration
    Prob q;
    prob_init(&q, 1, 0, 1, A, vstar);
    prob_entry(&q, 0, 0, -1);
    sapw_limitSetup_f64(0.01, 0 - 0.001, 1.0, 1e12, 0.01, 0.1, q.P.spar);
    CHECK_CLOSE(q.P.spar[0], 2.533029591e-4, 0, 1e-9, "limit R");
    q.P.v[0] = 0;
    sapSolveParams p = newton_params(kind);
    sapSolveStats st;
    sapw_newton_f64(&q.P, &p, &st);
    CHECK_CLOSE(q.P.v[0], -0.049987338059351745, 1e-12, 1e-9, "limit kind %d v", kind);
    CHECK(st.iters == 1, "limit kind %d iterations %d", kind, st.iters);
  }
}

/* drake §6.11 pizza saver: q = (x, y, z, theta), three point contacts, A = diag(m, m, m, m r^2).
 * The disk is body 1 of a two-body model with slides x, y, z and a hinge about z (cdof), its
 * tree's reference point at the disk centre; the ground is geom 0 on the world body. */
static const int pz_geom_body[2] = {0, 1}, pz_parent[2] = {0, 0}, pz_root[2] = {0, 1};
static const int pz_dofadr[2] = {-1, 0}, pz_dofnum[2] = {0, 4}, pz_dofparent[4] = {-1, 0, 1, 2};
static const int pz_dofbody[4] = {1, 1, 1, 1};
static const double pz_cdof[24] = {0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0};
static const double pz_cref[6] = {0, 0, 0, 0, 0, 0};

static void pizza_model(sapModel* m, Prob* pb, int* con_geom, double* con_pos, double* con_frame) {
  memset(m, 0, sizeof(*m));
  m->nbody = 2; m->nv = 4; m->ngeom = 2;
  m->geom_bodyid = (int*)pz_geom_body; m->body_parentid = (int*)pz_parent; m->body_rootid = (int*)pz_root;
  m->body_dofadr = (int*)pz_dofadr; m->body_dofnum = (int*)pz_dofnum; m->dof_parentid = (int*)pz_dofparent;
  m->dof_bodyid = (int*)pz_dofbody;
  pb->P.m = m; pb->P.cdof = pz_cdof; pb->P.cref = pz_cref;
  pb->P.con_geom = con_geom; pb->P.con_pos = con_pos; pb->P.con_frame = con_frame;
}
typedef struct { double wz, vmax, gn[3], gt[3], z, jc[4]; int conv_all; } PizzaOut;

static PizzaOut pizza_run(int kind, double mu, double k, double taud, double beta, double fx, double Mz, int nstep) {
  const double m = 3, rad = 1.5, g = 10, dt = 0.01;
  double A[16] = {0}, q[4] = {0, 0, 0, SAP_PI / 5}, v[4] = {0}, vstar[4], tau[4] = {fx, 0, -m * g, Mz};
  A[0] = A[5] = A[10] = m; A[15] = m * rad * rad;
  PizzaOut o;
  memset(&o, 0, sizeof(o));
  o.conv_all = 1;
  static Prob pb;
  sapModel pm;
  int con_geom[6] = {0, 1, 0, 1, 0, 1};
  double con_pos[18], con_frame[27];
  for (int n = 0; n < nstep; n++) {
    for (int i = 0; i < 4; i++) vstar[i] = v[i] + dt * tau[i] / A[5 * i];
    prob_init(&pb, 4, 3, 0, A, vstar);
    pizza_model(&pm, &pb, con_geom, con_pos, con_frame);
    double c = cos(q[3]), s = sin(q[3]);
    double pts[3][2] = {{-sqrt(3) / 2, -0.5}, {sqrt(3) / 2, -0.5}, {0, 1}};
    for (int i = 0; i < 3; i++) {
      double px = rad * (c * pts[i][0] + s * pts[i][1]), py = rad * (-s * pts[i][0] + c * pts[i][1]);
      double rows[12] = {1, 0, 0, -py, 0, 1, 0, px, 0, 0, 1, 0};  // J_i (drake §6.11)
      double frame[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, x[6] = {px, py, 0, px, py, 0};
      memcpy(con_pos + 6 * i, x, sizeof(x));
      memcpy(con_frame + 9 * i, frame, sizeof(frame));
      double w = sapw_weightDelassus_f64(NULL, NULL, rows, 0, NULL, 4, A, 4);
      sapw_coneSetup_f64(w, k, taud, mu, q[2], dt, beta, 1e-3, pb.P.cpar + SAP_CPAR * i);
    }
    double guess[4] = {1, 2, 3, 4};
    for (int i = 0; i < 4; i++) pb.P.v[i] = guess[i];
    sapSolveParams p = newton_params(kind);
    // monotone_decay's default 5e-3 relative cost exit stops early by design (sapwarp §13.1):
    // test the line search itself with the tight cost tolerances of the other variants
    p.cost_abs = 1e-30; p.cost_rel = 1e-15;
    sapSolveStats st;
    sapw_newton_f64(&pb.P, &p, &st);
    if (!(st.flags & SAP_WORLD_CONVERGED)) o.conv_all = 0;
    for (int i = 0; i < 4; i++) { v[i] = pb.P.v[i]; q[i] += dt * v[i]; }
  }
  o.wz = v[3];
  o.vmax = fmax(fabs(v[0]), fmax(fabs(v[1]), fabs(v[2])));
  for (int i = 0; i < 3; i++) { o.gn[i] = pb.P.gam[3 * i + 2]; o.gt[i] = hypot(pb.P.gam[3 * i], pb.P.gam[3 * i + 1]); }
  for (int i = 0; i < 4; i++) o.jc[i] = pb.P.jc[i];
  o.z = q[2];
  return o;
}

static void test_newton_pizza(void) {
  const double eps = 2.220446049250313e-16;
  for (int kind = 0; kind < 3; kind++) {
    // (c) stiction: mu 2/3, k 1e4, taud 2 dt, beta 1, Mz 20, 40 steps
    PizzaOut o = pizza_run(kind, 2.0 / 3, 1e4, 0.02, 1.0, 0, 20, 40);
    double tol = 1e-6;
    CHECK(o.conv_all, "stiction kind %d converged every step", kind);
    CHECK(o.vmax < 1e-10, "stiction kind %d |v_xyz| %g", kind, o.vmax);
    CHECK_CLOSE(o.jc[2], 0.3, 0, tol, "stiction kind %d j_z", kind);
    CHECK_CLOSE(o.jc[3], -0.2, 0, tol, "stiction kind %d j_theta", kind);
    for (int i = 0; i < 3; i++) {
      CHECK_CLOSE(o.gn[i], 0.1, 0, tol, "stiction kind %d gamma_n[%d]", kind, i);
      CHECK_CLOSE(o.gt[i], 0.01 * 20 / (3 * 1.5), 0, tol, "stiction kind %d |gamma_t|[%d]", kind, i);
    }
    CHECK_CLOSE(o.wz, 8.064e-6, 0, 1e-3, "stiction kind %d wz", kind);
    CHECK_CLOSE(o.z, -1.0e-3, 0, 1e-3, "stiction kind %d z", kind);
    // (e) no friction: fx = 1, 30 steps: v = (0.1, 0, 0, 0)
    o = pizza_run(kind, 0, 1e4, 0.01, eps, 1, 0, 30);
    CHECK_CLOSE(o.jc[2], 0.3, 0, 2e-6, "nofriction kind %d j_z", kind);
    CHECK_CLOSE(o.wz, 0, 1e-9, 0, "nofriction kind %d wz", kind);
    // (f) sliding: Mz 40 > 30, 10 steps: wz = 0.13517, |gamma_t| = mu gamma_n
    o = pizza_run(kind, 2.0 / 3, 1e4, 0.01, eps, 0, 40, 10);
    CHECK_CLOSE(o.wz, 0.13517, 0, 1e-4, "sliding kind %d wz", kind);
    for (int i = 0; i < 3; i++) CHECK_CLOSE(o.gt[i], 2.0 / 3 * o.gn[i], 1e-12, 1e-6, "sliding kind %d cone edge", kind);
    // (g) near-rigid stiction with beta = 1: k = 1e20, 30 steps
    o = pizza_run(kind, 2.0 / 3, 1e20, 0.01, 1.0, 0, 20, 30);
    CHECK(o.vmax < 1e-9, "near-rigid kind %d |v_xyz| %g", kind, o.vmax);
    for (int i = 0; i < 3; i++) CHECK_CLOSE(o.gn[i], 0.1, 0, tol, "near-rigid kind %d gamma_n", kind);
    CHECK_CLOSE(o.z, -1.379e-5, 0, 2e-3, "near-rigid kind %d z", kind);
  }
}

int main(void) {
  RUN(test_cone_regularization);
  RUN(test_cone_regions);
  RUN(test_cone_fd);
  RUN(test_cone_f32);
  RUN(test_pd);
  RUN(test_limit);
  RUN(test_box_fd);
  RUN(test_cholesky);
  RUN(test_tree_cholesky);
  RUN(test_problem_scratch_from_carve);
  RUN(test_linesearch);
  RUN(test_linesearch_newton_wolfe);
  RUN(test_newton_box);
  RUN(test_newton_pd_limit);
  RUN(test_newton_factorfail);
  RUN(test_newton_pizza);
  return check_summary("test_sap_math");
}
