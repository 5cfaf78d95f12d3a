#define _POSIX_C_SOURCE 200809L
/* Torsional (condim 4) and rolling (condim 6) friction: the scaled cone projection
 * (kernels/sap_cone_t.h) against central differences and its optimality conditions on
 * random 4- and 6-row inputs; a spinning sphere stops its spin at the rate
 * I dw/dt = -mu3 m g; a rolling ball decelerates at a = -mu4 g r / (I/m + r^2); both
 * compared with MuJoCo 4 (elliptic cone) on the same MJCF. */
#include <unistd.h>

#include <mujoco/mujoco.h>

#include "fixture.h"
#include "sap_solve.h"

/* ---- the scaled cone on random inputs --------------------------------------------------- */

/* random parameters of a cd-row contact (condim cd): Rt, Rn, vhat, mu, s_spin, s_roll, around
 * drake_sap_spec §6's P0 (impulses O(1), so that the soft norm's eps = 1e-7 stays at 1e-7
 * relative) */
static void random_par(int cd, double* par) {
  double w = exp(check_uniform(-1, 1));
  sapw_coneSetup_f64(w, 3e5 * exp(check_uniform(-1, 1)), 0.02, check_uniform(0.1, 1.5),
                     check_uniform(-5e-3, -1e-3), 0.01, 1.0, 1e-3, par);
  double mu = par[3];
  sapw_coneSetupAngular_f64(cd, mu * exp(check_uniform(-4, 0)), mu * exp(check_uniform(-5, 0)), par);
}

/* gamma in K, r = R (y - gamma) in the polar cone (-K*: ||(mu_k r_k)|| <= -r_n), gamma . r = 0:
 * the optimality conditions of min 1/2 ||g - y||_R^2 over K, which fix the unique minimizer */
static void check_kkt(int cd, const double* par, const double* vc, const double* g, const char* tag) {
  double s[6] = {1, 1, 0, par[8], par[9], par[9]}, R[6], y[6], r[6];
  double vhat[6] = {par[6], par[7], par[2], cd > 3 ? par[10] : 0, 0, 0};  // targets (surface velocities)
  double mu = par[3], gt = 0, rt = 0, gr = 0, scale = 0;
  for (int k = 0; k < cd; k++) {
    R[k] = k == 2 ? par[1] : par[0] / (s[k] * s[k]);
    y[k] = (vhat[k] - vc[k]) / R[k];
    r[k] = R[k] * (y[k] - g[k]);
    gr += g[k] * r[k];
    if (k == 2) continue;
    double m = mu * s[k];  // mu_k
    gt += (g[k] / m) * (g[k] / m);
    rt += (m * r[k]) * (m * r[k]);
  }
  CHECK(sqrt(gt) <= g[2] * (1 + 1e-8) + 1e-14, "%s: gamma in the cone (%g > %g)", tag, sqrt(gt), g[2]);
  CHECK(sqrt(rt) <= -r[2] + 1e-6 * fmax(1e-9, fabs(r[2])) + 1e-12, "%s: r in the polar cone (%g, %g)", tag,
        sqrt(rt), -r[2]);
  double gm = 0, rm = 0;
  for (int k = 0; k < cd; k++) gm = fmax(gm, fabs(g[k])), rm = fmax(rm, fabs(R[k] * y[k]));
  scale = gm * rm;  // r = R y - R gamma: rounding of gamma . r is relative to max|g| max|R y|
  CHECK(fabs(gr) <= 1e-9 * scale + 1e-300, "%s: complementarity %g (scale %g)", tag, gr, scale);
}

static void test_cone_random(void) {
  const double h = 1e-7;
  int regions[3] = {0, 0, 0};
  for (int cd = 4; cd <= 6; cd += 2)
    for (int t = 0; t < 400; t++) {
      double par[SAP_CPAR_ANG] = {0}, vc[6], g[6], G[36], cost;
      random_par(cd, par);
      // velocities around the stick/slip boundary: tangential ~ Rt mu yn / s_k scales; every
      // other case with tangential and spin targets (surface velocities) of that scale too
      double yn0 = par[2] / par[1];
      for (int k = 0; k < cd; k++) {
        double sk = k < 2 ? 1 : (k == 3 ? par[8] : par[9]);
        vc[k] = k == 2 ? check_uniform(-1, 1) * par[2] * 2
                       : check_uniform(-3, 3) * par[0] * par[3] * fabs(yn0) / sk;
        double vh = t % 2 ? check_uniform(-3, 3) * par[0] * par[3] * fabs(yn0) / sk : 0;
        if (k < 2) par[6 + k] = vh;
        if (k == 3) par[10] = vh;
      }
      char tag[48];
      snprintf(tag, sizeof(tag), "cd %d case %d", cd, t);
      int reg = sapw_coneProjectN_f64(par, cd, vc, g, &cost, G);
      regions[reg]++;
      double gmax = 1e-300, Gmax = 1e-300, vmax = 1e-300;  // steps h max|vc|: rounding of l stays small
      for (int k = 0; k < cd; k++) vmax = fmax(vmax, fabs(vc[k]));
      for (int k = 0; k < cd; k++) gmax = fmax(gmax, fabs(g[k]));
      for (int k = 0; k < cd * cd; k++) Gmax = fmax(Gmax, fabs(G[k]));
      // central differences: -dl/dvc = gamma, -dgamma/dvc = G (per column, relative to its size)
      for (int j = 0; j < cd; j++) {
        double hj = h * vmax, vp[6], vm[6], gp[6], gm[6], cp, cm;
        for (int k = 0; k < cd; k++) vp[k] = vm[k] = vc[k];
        vp[j] += hj;
        vm[j] -= hj;
        int rp = sapw_coneProjectN_f64(par, cd, vp, gp, &cp, NULL);
        int rm = sapw_coneProjectN_f64(par, cd, vm, gm, &cm, NULL);
        if (rp != reg || rm != reg) continue;  // a region boundary within h: skip
        CHECK_CLOSE(-(cp - cm) / (2 * hj), g[j], 1e-5 * gmax, 1e-5, "%s dl/dvc[%d]", tag, j);
        for (int i = 0; i < cd; i++)
          CHECK_CLOSE(-(gp[i] - gm[i]) / (2 * hj), G[cd * i + j], 1e-5 * Gmax, 1e-5, "%s G[%d][%d]", tag, i, j);
      }
      for (int i = 0; i < cd; i++)
        for (int j = 0; j < cd; j++) CHECK(G[cd * i + j] == G[cd * j + i], "%s G symmetric", tag);
      for (int k = 0; k < 10; k++) {  // PSD
        double x[6], q = 0;
        for (int i = 0; i < cd; i++) x[i] = check_uniform(-1, 1);
        for (int i = 0; i < cd; i++)
          for (int j = 0; j < cd; j++) q += x[i] * G[cd * i + j] * x[j];
        CHECK(q >= -1e-12 * Gmax, "%s G PSD (%g)", tag, q);
      }
      check_kkt(cd, par, vc, g, tag);
    }
  CHECK(regions[0] > 20 && regions[1] > 20 && regions[2] > 20, "all regions sampled (%d, %d, %d)", regions[0],
        regions[1], regions[2]);
  // a condim-3 contact in a 6-row problem: rows 3-5 carry nothing and equal the 3-row cone
  double par[SAP_CPAR_ANG] = {0}, vc[6] = {0.1, -0.2, -0.1, 0.3, -0.2, 0.5}, g[6], G[36], g3[3], G3[9], c6, c3;
  sapw_coneSetup_f64(1.0, 3e5, 0.02, 0.5, -2.5e-3, 0.01, 1.0, 1e-3, par);
  sapw_coneSetupAngular_f64(3, 0.01, 0.001, par);
  sapw_coneProjectN_f64(par, 6, vc, g, &c6, G);
  sapw_coneProject_f64(par, vc, g3, &c3, G3);
  CHECK(g[3] == 0 && g[4] == 0 && g[5] == 0 && G[21] == 0 && G[35] == 0, "condim 3 in 6 rows: no torque");
  CHECK(g[0] == g3[0] && g[2] == g3[2] && c6 == c3 && G[6 * 1 + 2] == G3[5], "condim 3 in 6 rows: same cone");
  // the 3-row cone with tangential targets (a surface velocity): its optimality conditions,
  // over every region, and the general form's answer
  int reg3[3] = {0, 0, 0};
  for (int t = 0; t < 300; t++) {
    double p3[SAP_CPAR_ANG] = {0}, v3[3], gg[3], gn[6], cc, cn, v6[6] = {0};
    random_par(3, p3);
    double yn0 = p3[2] / p3[1], ts = p3[0] * p3[3] * fabs(yn0);
    p3[6] = check_uniform(-3, 3) * ts, p3[7] = check_uniform(-3, 3) * ts;
    v3[0] = check_uniform(-3, 3) * ts, v3[1] = check_uniform(-3, 3) * ts, v3[2] = check_uniform(-1, 1) * p3[2] * 2;
    for (int k = 0; k < 3; k++) v6[k] = v3[k];
    reg3[sapw_coneProject_f64(p3, v3, gg, &cc, NULL)]++;
    sapw_coneProjectN_f64(p3, 3, v6, gn, &cn, NULL);
    char tag[48];
    snprintf(tag, sizeof(tag), "3 rows with targets, case %d", t);
    check_kkt(3, p3, v3, gg, tag);
    CHECK(gg[0] == gn[0] && gg[1] == gn[1] && gg[2] == gn[2] && cc == cn, "%s: the general form agrees", tag);
  }
  CHECK(reg3[0] > 20 && reg3[1] > 20 && reg3[2] > 20, "3 rows with targets: all regions (%d, %d, %d)", reg3[0],
        reg3[1], reg3[2]);
}

/* ---- spinning and rolling spheres, against the analytic rates and MuJoCo ----------------- */

static const char* write_xml(const char* xml) { return fx_tempFile("condim.xml", xml); }

/* sphere (r 0.1 m, 1 kg) on a floor, both condim cd with friction (mu, mu3, mu4) */
static void sphere_xml(char* xml, int n, int cd, double mu, double mu3, double mu4) {
  snprintf(xml, n,
           "<mujoco><option timestep='0.002' cone='elliptic'/>"
           "<worldbody><geom name='floor' type='plane' size='50 50 0.1' condim='%d' friction='%g %g %g'/>"
           "<body pos='0 0 0.1'><freejoint/><geom name='ball' size='0.1' mass='1' condim='%d' "
           "friction='%g %g %g'/></body></worldbody></mujoco>",
           cd, mu, mu3, mu4, cd, mu, mu3, mu4);
}

/* qvel of both simulators after settling 0.3 s, then setting qvel0 and running T s; sapsim
 * under preset, world 0 */
static int run_pair(const char* xml, const char* preset, const double* qvel0, double T, double* v_sap, double* v_mj,
                    double* phi) {
  const char* path = write_xml(xml);
  sapModel* m = NULL;
  if (sap_loadModel(path, &m) != SAP_OK) {
    fprintf(stderr, "  load: %s\n", sap_lastError());
    unlink(path);
    return 0;
  }
  char err[512] = "";
  mjModel* mj = mj_loadXML(path, NULL, err, sizeof(err));
  unlink(path);
  sapOptions o;
  sap_optionsDefault(&o);
  o.device = SAP_DEVICE_CPU;
  sap_optionsSet(&o, "preset", preset);
  sapSim* s = NULL;
  int ok = sap_create(m, &o, 1, &s) == SAP_OK && mj;
  if (ok) {
    int settle = (int)lround(0.3 / 0.002), n = (int)lround(T / 0.002);
    ok = sap_step(s, settle) == SAP_OK;
    sap_set(s, SAP_FIELD_QVEL, NULL, 1, qvel0);
    ok = ok && sap_step(s, n) == SAP_OK && sap_get(s, SAP_FIELD_QVEL, NULL, 1, v_sap) == SAP_OK;
    const sapData* d = sap_data(s);
    *phi = d->ncon[0] > 0 ? d->con_dist[0] : 0;
    mjData* md = mj_makeData(mj);
    for (int k = 0; k < settle; k++) mj_step(mj, md);
    for (int k = 0; k < 6; k++) md->qvel[k] = qvel0[k];
    for (int k = 0; k < n; k++) mj_step(mj, md);
    for (int k = 0; k < 6; k++) v_mj[k] = md->qvel[k];
    mj_deleteData(md);
  }
  sap_free(s);
  sap_freeModel(m);
  mj_deleteModel(mj);
  return ok;
}

/* spin: I dw/dt = -mu3 N, I = 2/5 m r^2 (no sliding, no rolling). Two references:
 *  - momentum balance (exact for any normal force history): the normal impulse over [0, T] is
 *    m (g T + vz(T) - vz(0)), so w(T) = w0 - mu3 m (g T + dvz) / I while the spin slides;
 *  - rigid contact N = m g: w(T) = w0 - mu3 g T/(0.4 r^2). SAP's regularized cone lifts a
 *    sliding contact (phi ~ (h + taud) mu3 w, the "gliding" of drake §2.1), and the ball
 *    sinks back as the spin decays, so N falls short of m g by m dvz / T; the analytic value
 *    is met within mu3 m |dvz| / I (from the first reference) + 0.5%.
 * MuJoCo 4 (elliptic cone) against the rigid value within 1% (measured 0.5%). */
static void test_spin(void) {
  const double r = 0.1, g = 9.81, mu3 = 0.02, w0 = 5, T = 0.05, I = 0.4 * r * r;
  double rate = mu3 * g / I, qv[6] = {0, 0, 0, 0, 0, w0}, phi;
  char xml[1024];
  for (int cd = 4; cd <= 6; cd += 2) {
    sphere_xml(xml, sizeof(xml), cd, 1, mu3, 0.001);
    const char* presets[3] = {"approx32", "approx64", "drake"};
    for (int p = 0; p < 3; p++) {
      double vs[6], vm[6];
      CHECK(run_pair(xml, presets[p], qv, T, vs, vm, &phi), "cd %d %s: run", cd, presets[p]);
      double rigid = w0 - rate * T, balance = w0 - mu3 * (g * T + vs[2]) / I;
      CHECK_CLOSE(vs[5], balance, 0, 2e-3, "cd %d %s: spin at %g s (momentum balance %g)", cd, presets[p], T, balance);
      double allow = mu3 * fabs(vs[2]) / I + 0.005 * rigid;
      CHECK_CLOSE(vs[5], rigid, allow, 0, "cd %d %s: spin at %g s (rigid analytic %g)", cd, presets[p], T, rigid);
      if (p == 1) {
        CHECK_CLOSE(vm[5], rigid, 0, 0.01, "cd %d MuJoCo: spin at %g s", cd, T);
        CHECK_CLOSE(vs[5], vm[5], allow + 0.01 * rigid, 0, "cd %d: sapsim vs MuJoCo spin", cd);
        printf("  cd %d spin at %g s: sapsim %.5f, momentum balance %.5f, rigid %.5f, MuJoCo %.5f\n", cd, T, vs[5],
               balance, rigid, vm[5]);
      }
      CHECK(run_pair(xml, presets[p], qv, 0.15, vs, vm, &phi), "cd %d %s: run", cd, presets[p]);
      CHECK(fabs(vs[5]) < 0.01 * w0, "cd %d %s: spin stopped %g s after the rigid stop %g s (w %g)", cd,
            presets[p], 0.15 - w0 / rate, w0 / rate, vs[5]);
      double vlin = fmax(fabs(vs[0]), fabs(vs[1]));
      CHECK(vlin < 1e-4, "cd %d %s: spin moves the ball (%g m/s)", cd, presets[p], vlin);
    }
  }
}

/* rolling without slip, resisted by the torque mu4 N: m a = F, I dw/dt = -r F - mu4 N,
 * v = r w  =>  a = -mu4 g r / (I/m + r^2) = -mu4 g / (1.4 r). v0 = 1 m/s along x (w_y = v0/r),
 * measured after 0.5 s. While rolling slides, the elliptic cone's maximum dissipation makes the
 * scaled velocity parallel to the scaled force: the contact point slips at
 * v_slip = mu4 w |F| / (mu^2 N) (2.7e-4 m/s here), in MuJoCo as in sapsim. */
static void test_roll(void) {
  const double r = 0.1, g = 9.81, mu = 1, mu4 = 0.002, v0 = 1, T = 0.5;
  double a = -mu4 * g / (1.4 * r), qv[6] = {v0, 0, 0, 0, v0 / r, 0}, phi;
  char xml[1024];
  sphere_xml(xml, sizeof(xml), 6, mu, 0.005, mu4);
  const char* presets[3] = {"approx32", "approx64", "drake"};
  for (int p = 0; p < 3; p++) {
    double vs[6], vm[6];
    CHECK(run_pair(xml, presets[p], qv, T, vs, vm, &phi), "%s: run", presets[p]);
    // the speed lost (a T = 0.07 m/s) to 2%: the elliptic cone takes |F|/mu = 0.14 N of the
    // 9.81 N budget (1e-4 relative); the gliding lift as in test_spin (mu4 w = 0.02 m/s, 10x
    // smaller than the spin's)
    CHECK_CLOSE(v0 - vs[0], -a * T, 0, 0.02, "%s: speed lost in %g s (analytic %g)", presets[p], T, -a * T);
    // slip at the velocity point: the witness on the sphere (r), or the midpoint (drake:
    // r - |phi|/2)
    double reff = p == 2 ? r + phi / 2 : r, slip = vs[0] - reff * vs[4];
    double want = mu4 * vs[4] * fabs(a) / (mu * mu * g);
    CHECK_CLOSE(slip, want, 0, 0.05, "%s: slip %g m/s (elliptic cone %g)", presets[p], slip, want);
    if (p == 1) {
      CHECK_CLOSE(v0 - vm[0], -a * T, 0, 0.02, "MuJoCo: speed lost (analytic %g)", -a * T);
      CHECK_CLOSE(v0 - vs[0], v0 - vm[0], 0, 0.04, "sapsim vs MuJoCo: speed lost");
      printf("  rolling: speed lost in %g s: sapsim %.6f, analytic %.6f, MuJoCo %.6f; slip %.3g (cone %.3g)\n", T,
             v0 - vs[0], -a * T, v0 - vm[0], slip, want);
    }
  }
  // condim 4 on the same ball: no rolling resistance (MuJoCo's rows 4-5 absent)
  sphere_xml(xml, sizeof(xml), 4, mu, 0.005, mu4);
  double vs[6], vm[6];
  CHECK(run_pair(xml, "approx64", qv, T, vs, vm, &phi), "condim 4: run");
  CHECK(fabs(vs[0] - v0) < 1e-3, "condim 4: keeps rolling (%g)", vs[0]);
}

/* the quadruped scene (condim-6 sphere feet) loads and stands: 1 s, every world finite */
static void test_quadruped(void) {
  sapModel* m = NULL;
  CHECK(sap_loadModel("scenes/quadruped_roll.xml", &m) == SAP_OK, "load: %s", sap_lastError());
  if (!m) return;
  CHECK(m->ncondim == 6, "6 rows per contact (%d)", m->ncondim);
  sapOptions o;
  sap_optionsDefault(&o);
  o.device = SAP_DEVICE_CPU;
  sapSim* s = NULL;
  CHECK(sap_create(m, &o, 2, &s) == SAP_OK, "create");
  if (s) {
    CHECK(sap_step(s, 500) == SAP_OK, "step");
    double q[64];
    CHECK(m->nq <= 32, "nq");
    sap_get(s, SAP_FIELD_QPOS, NULL, 2, q);
    CHECK(isfinite(q[2]) && q[2] > 0.1, "torso above the floor (%g)", q[2]);
    CHECK(sap_data(s)->ncon[0] >= 4, "standing on its feet (%d contacts)", sap_data(s)->ncon[0]);
  }
  sap_free(s);
  sap_freeModel(m);
}

int main(void) {
  RUN(test_cone_random);
  RUN(test_spin);
  RUN(test_roll);
  RUN(test_quadruped);
  return check_summary("test_sap_condim");
}
