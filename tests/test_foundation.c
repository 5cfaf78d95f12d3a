/* Foundation tests without contact: analytic physics (free fall, torque-free
 * spinning body, small-angle pendulum period), batch invariants (identical worlds,
 * independence from nworld, bitwise reruns) and the state API. */
#include <mujoco/mujoco.h>
#include <stdint.h>
#include <unistd.h>

#include "fixture.h"
#include "sim.h"

static sapSim* make_sim(const char* path, int nworld, int preset, int integration, int contacts) {
  sapOptions opt;
  fx_options(&opt, NULL);
  opt.preset = preset;
  opt.integration = integration;
  opt.contacts = contacts;
  return fx_simWith(path, nworld, &opt);
}

/* write an MJCF string to a temporary file */
static const char* temp_scene(const char* xml) { return fx_tempFile("scene.xml", xml); }

/* free fall: constant acceleration is integrated exactly by both position maps:
 * midpoint z_n = z0 - g (nh)^2 / 2, sap_euler z_n = z0 - g h^2 n (n+1) / 2 */
static void test_free_fall(void) {
  for (int integ = 0; integ < 2; integ++) {
    sapSim* s = make_sim("scenes/box.xml", 3, SAP_PRESET_APPROX64, integ, 0);
    if (!s) return;
    double q0[7];
    sap_get(s, SAP_FIELD_QPOS, (int[]){0}, 1, q0);
    int n = 200;
    CHECK(sap_step(s, n) == SAP_OK, "%s", sap_lastError());
    double q[21], v[18];
    sap_get(s, SAP_FIELD_QPOS, NULL, 3, q);
    sap_get(s, SAP_FIELD_QVEL, NULL, 3, v);
    double h = s->h, g = 9.81, t = n * h;
    double want = integ == SAP_INTEGRATE_MIDPOINT ? q0[2] - 0.5 * g * t * t
                                                  : q0[2] - 0.5 * g * h * h * n * (n + 1);
    for (int w = 0; w < 3; w++) {
      CHECK_CLOSE(q[7 * w + 2], want, 1e-10, 1e-12, "z after %d steps (integration %d)", n, integ);
      CHECK_CLOSE(v[6 * w + 2], -g * t, 1e-10, 1e-12, "vz");
      CHECK_CLOSE(q[7 * w + 0], q0[0], 1e-12, 0, "x stays");
    }
    sap_free(s);
  }
}

static const char* spinner_xml =
    "<mujoco><option gravity='0 0 0' timestep='0.0005'/>"
    "<worldbody><body pos='0 0 1'><freejoint/>"
    "<geom type='box' size='0.05 0.15 0.3' density='1000' contype='0' conaffinity='0'/>"
    "</body></worldbody></mujoco>";

/* kinetic energy and world angular momentum of the single free body */
static void spinner_invariants(sapSim* s, double* energy, double* L) {
  const sapModel* m = s->m;
  const sapData* d = sap_data(s);
  const double* w = d->qvel + 3;  /* body-frame angular velocity */
  const double* I = m->body_inertia + 3;
  /* principal frame = body frame for a box geom: check */
  double Iw[3] = {I[0] * w[0], I[1] * w[1], I[2] * w[2]};
  *energy = 0.5 * (w[0] * Iw[0] + w[1] * Iw[1] + w[2] * Iw[2]);
  /* L_world = R_body Iw (x_mat of body 1 from the last kinematics = start of last step) */
  const double* q = d->qpos + 3;
  double R[9];
  mju_quat2Mat(R, q);
  for (int i = 0; i < 3; i++) L[i] = R[3 * i] * Iw[0] + R[3 * i + 1] * Iw[1] + R[3 * i + 2] * Iw[2];
}

/* torque-free rigid body: energy and world angular momentum are conserved (to the
 * integrator's accuracy: h = 0.5 ms over 1 s), and the body really tumbles */
static void test_spinning_body(void) {
  sapSim* s = make_sim(temp_scene(spinner_xml), 1, SAP_PRESET_APPROX64, SAP_INTEGRATE_MIDPOINT, 0);
  if (!s) return;
  const sapModel* m = s->m;
  CHECK(fabs(m->body_iquat[4] - 1) < 1e-12, "box principal frame is its body frame");
  double v[6] = {0, 0, 0, 0.3, 6.0, 0.3};  /* near the unstable intermediate axis */
  sap_set(s, SAP_FIELD_QVEL, NULL, 1, v);
  double e0, L0[3], e1, L1[3];
  spinner_invariants(s, &e0, L0);
  double wmin = 1e9;
  for (int k = 0; k < 2000; k++) {
    sap_step(s, 1);
    wmin = fmin(wmin, s->d.qvel[4]);
  }
  spinner_invariants(s, &e1, L1);
  double Ln = sqrt(L0[0] * L0[0] + L0[1] * L0[1] + L0[2] * L0[2]);
  /* the Coriolis term is explicit (first order in h): measured drift 0.3% in energy
   * at |w| 6 rad/s, h 0.5 ms; a wrong gyroscopic term drifts by orders more */
  CHECK_CLOSE(e1, e0, 0, 1e-2, "kinetic energy after 1 s");
  for (int i = 0; i < 3; i++) CHECK_CLOSE(L1[i], L0[i], 1e-2 * Ln, 0, "angular momentum[%d]", i);
  CHECK(wmin < 0, "the intermediate-axis spin flips (min w_y %g)", wmin);
  sap_free(s);
}

/* small-angle pendulum: period 2 pi sqrt(M / k), M from MuJoCo's mass matrix and
 * k = d(gravity torque)/d(theta) from MuJoCo's qfrc_bias (independent oracle) */
static void test_pendulum_period(void) {
  char err[1000];
  mjModel* mj = mj_loadXML("scenes/pendulum.xml", NULL, err, sizeof(err));
  CHECK(mj != NULL, "%s", err);
  if (!mj) return;
  mjData* md = mj_makeData(mj);
  double th = 1e-4;
  md->qpos[0] = th;
  mj_forward(mj, md);
  double M;
  mj_fullM(mj, md, &M);
  double k = md->qfrc_bias[0] / sin(th);
  double T = 2 * 3.14159265358979323846 * sqrt(M / k);
  mj_deleteData(md);
  mj_deleteModel(mj);

  for (int integ = 0; integ < 2; integ++) {
    sapSim* s = make_sim("scenes/pendulum.xml", 1, SAP_PRESET_APPROX64, integ, 0);
    if (!s) return;
    double q0 = 0.01;
    sap_set(s, SAP_FIELD_QPOS, NULL, 1, &q0);
    /* times of downward zero crossings of q, linearly interpolated */
    double prev = q0, t_prev = 0, crossings[8];
    int nc = 0;
    for (int step = 1; step <= (int)(4.5 * T / s->h) && nc < 8; step++) {
      sap_step(s, 1);
      double q = s->d.qpos[0], t = step * s->h;
      if (prev > 0 && q <= 0) crossings[nc++] = t_prev + (t - t_prev) * prev / (prev - q);
      prev = q;
      t_prev = t;
    }
    CHECK(nc >= 4, "pendulum crossed zero %d times", nc);
    if (nc >= 4) {
      double period = (crossings[nc - 1] - crossings[0]) / (nc - 1);
      CHECK_CLOSE(period, T, 0, 2e-3, "small-angle period (integration %d)", integ);
    }
    sap_free(s);
  }
}

/* the midpoint rule with gravity at q + h/2 v (kernels/gravity_shift.h) is drift - kick - drift:
 * second order and symplectic. A hinge pendulum swinging 1 rad (J q'' = -m g L sin q): its
 * angle after 2 s against RK4 with 1e-5 s steps, the error falling 4x per halving of h (the
 * forces at q instead gave 2x), and its energy bounded over 2000 steps at w h = 0.09
 * (dm_control's pendulum timestep), where the forces at q grew the swing by (w h)^2/4 per step.
 * A ball-joint pendulum on a cone: its energy, from MuJoCo 4's mj_energyPos/Vel on sapsim's
 * states, bounded the same way. */
static double pendulum_rk4(double q, double J, double mgl, double T) {
  double v = 0, dt = 1e-5;
  int n = (int)lround(T / dt);
  for (int i = 0; i < n; i++) {
    double k1q = v, k1v = -mgl / J * sin(q);
    double k2q = v + 0.5 * dt * k1v, k2v = -mgl / J * sin(q + 0.5 * dt * k1q);
    double k3q = v + 0.5 * dt * k2v, k3v = -mgl / J * sin(q + 0.5 * dt * k2q);
    double k4q = v + dt * k3v, k4v = -mgl / J * sin(q + dt * k3q);
    q += dt / 6 * (k1q + 2 * k2q + 2 * k3q + k4q);
    v += dt / 6 * (k1v + 2 * k2v + 2 * k3v + k4v);
  }
  return q;
}

static void test_midpoint_leapfrog(void) {
  const double m = 1.3, L = 0.5, Iy = 0.02, g = 9.81, q0 = 1.0, T = 2.0;
  const double J = Iy + m * L * L, qref = pendulum_rk4(q0, J, m * g * L, T);
  double err[3];
  for (int k = 0; k < 3; k++) {
    double h = 0.02 / (1 << k);
    char xml[512];
    snprintf(xml, sizeof(xml),
             "<mujoco><option timestep='%.17g'/><worldbody><body><joint type='hinge' axis='0 1 0'/>"
             "<inertial pos='0 0 -%g' mass='%g' diaginertia='%g %g %g'/></body></worldbody></mujoco>",
             h, L, m, Iy, Iy, Iy);
    sapSim* s = make_sim(temp_scene(xml), 1, SAP_PRESET_APPROX64, SAP_INTEGRATE_MIDPOINT, 0);
    if (!s) return;
    sap_set(s, SAP_FIELD_QPOS, NULL, 1, &q0);
    CHECK(sap_step(s, (int)lround(T / h)) == SAP_OK, "%s", sap_lastError());
    err[k] = fabs(s->d.qpos[0] - qref);
    if (k == 0) {  /* energy over 2000 steps (40 s) relative to m g L: no growth */
      sap_set(s, SAP_FIELD_QPOS, NULL, 1, &q0);
      sap_set(s, SAP_FIELD_QVEL, NULL, 1, (double[]){0});
      double e0 = -m * g * L * cos(q0), emax = 0;
      for (int i = 0; i < 2000; i++) {
        sap_step(s, 1);
        double q = s->d.qpos[0], v = s->d.qvel[0];
        emax = fmax(emax, fabs(0.5 * J * v * v - m * g * L * cos(q) - e0) / (m * g * L));
      }
      CHECK(emax < 2e-3, "hinge pendulum at w h = 0.09: energy off by %.3g m g L within 2000 steps", emax);
      if (getenv("SAPSIM_TEST_VERBOSE")) printf("  hinge pendulum energy, largest change / m g L: %.3g\n", emax);
    }
    sap_free(s);
  }
  if (getenv("SAPSIM_TEST_VERBOSE"))
    printf("  pendulum angle error at 2 s, h = 0.02, 0.01, 0.005: %.3g %.3g %.3g\n", err[0], err[1], err[2]);
  for (int k = 0; k < 2; k++)
    CHECK(err[k] / err[k + 1] > 3.2 && err[k] / err[k + 1] < 5, "second order: error %g at h, %g at h/2", err[k],
          err[k + 1]);

  /* a ball pendulum (its com off the axis) tilted 0.2 rad, spun about the vertical: the forces at
   * q gained 0.1 m g L in 2000 steps, leapfrog 2e-4 (the
   * rest is the explicit Coriolis forces', which grows with the swing: 0.05 at 0.8 rad) */
  const char* path = temp_scene(
      "<mujoco><option timestep='0.01'/><worldbody><body pos='0 0 1'><joint type='ball'/>"
      "<inertial pos='0.05 0 -0.6' mass='2' diaginertia='1e-4 1.6e-4 0.7e-4'/></body></worldbody></mujoco>");
  char errs[1000];
  mjModel* mj = mj_loadXML(path, NULL, errs, sizeof(errs));
  CHECK(mj != NULL, "%s", errs);
  sapSim* s = mj ? make_sim(path, 1, SAP_PRESET_APPROX64, SAP_INTEGRATE_MIDPOINT, 0) : NULL;
  if (s) {
    mjData* md = mj_makeData(mj);
    double qb[4] = {cos(0.1), sin(0.1), 0, 0}, vb[3] = {0, 0.3 * sin(0.2), 0.3 * cos(0.2)};
    sap_set(s, SAP_FIELD_QPOS, NULL, 1, qb);
    sap_set(s, SAP_FIELD_QVEL, NULL, 1, vb);
    double e0 = 0, emax = 0, scale = 2 * 9.81 * 0.6;
    for (int i = 0; i <= 2000; i++) {
      if (i) sap_step(s, 1);
      mju_copy(md->qpos, s->d.qpos, 4);
      mju_copy(md->qvel, s->d.qvel, 3);
      mj_kinematics(mj, md);
      mj_comPos(mj, md);
      mj_crb(mj, md);
      mj_energyPos(mj, md);
      mj_energyVel(mj, md);
      double e = md->energy[0] + md->energy[1];
      if (!i) e0 = e;
      emax = fmax(emax, fabs(e - e0) / scale);
    }
    if (getenv("SAPSIM_TEST_VERBOSE")) printf("  ball pendulum energy, largest change / m g L: %.3g\n", emax);
    CHECK(emax < 3e-3, "ball pendulum: energy off by %.3g m g L within 2000 steps", emax);
    mj_deleteData(md);
    sap_free(s);
  }
  if (mj) mj_deleteModel(mj);
}

/* ---- batch invariants ---------------------------------------------------------- */

static uint64_t hash_bytes(const void* p, size_t n, uint64_t h) {
  const unsigned char* b = (const unsigned char*)p;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ULL;
  return h;
}

/* run a scene with contacts from its first keyframe with per-world controls;
 * returns qpos/qvel of the requested world after nstep steps */
static void run_world(const char* path, int nworld, int world, int nstep, double* qpos,
                      double* qvel, int same_ctrl) {
  sapSim* s = make_sim(path, nworld, SAP_PRESET_APPROX32, -1, 1);
  if (!s) return;
  const sapModel* m = s->m;
  sap_reset(s, m->nkey > 0 ? 0 : -1, NULL);
  double* ctrl = malloc(sizeof(double) * (nworld * m->nu + 1));
  for (int w = 0; w < nworld; w++)
    for (int i = 0; i < m->nu; i++)
      ctrl[w * m->nu + i] = same_ctrl ? 0.3 * sin(i) : 0.5 * sin(1.3 * i + 0.7 * (w % 5));
  if (m->nu) sap_set(s, SAP_FIELD_CTRL, NULL, nworld, ctrl);
  sap_step(s, nstep);
  sap_get(s, SAP_FIELD_QPOS, &world, 1, qpos);
  sap_get(s, SAP_FIELD_QVEL, &world, 1, qvel);
  free(ctrl);
  sap_free(s);
}

static void test_identical_worlds(void) {
  sapSim* s = make_sim("scenes/humanoid.xml", 5, SAP_PRESET_APPROX32, -1, 1);
  if (!s) return;
  sap_reset(s, 0, NULL);
  sap_step(s, 100);
  const sapModel* m = s->m;
  double q[5 * 28];
  sap_get(s, SAP_FIELD_QPOS, NULL, 5, q);
  for (int w = 1; w < 5; w++)
    CHECK(!memcmp(q, q + w * m->nq, sizeof(double) * m->nq), "world %d differs from world 0", w);
  sap_free(s);
}

static void test_independent_of_nworld(void) {
  const char* path = "scenes/humanoid.xml";
  double qa[28], va[27], qb[28], vb[27];
  /* world 2 of a 3-world batch vs world 2 of a 37-world batch: same controls */
  run_world(path, 3, 2, 60, qa, va, 0);
  run_world(path, 37, 2, 60, qb, vb, 0);
  CHECK(!memcmp(qa, qb, sizeof(qa)) && !memcmp(va, vb, sizeof(va)),
        "world 2 depends on nworld (qpos[2] %.17g vs %.17g)", qa[2], qb[2]);
}

static void test_rerun_bitwise(void) {
  uint64_t h[2] = {1469598103934665603ULL, 1469598103934665603ULL};
  for (int r = 0; r < 2; r++) {
    sapSim* s = make_sim("scenes/box_stack.xml", 8, SAP_PRESET_APPROX32, -1, 1);
    if (!s) return;
    sap_reset(s, 0, NULL);
    sap_step(s, 80);
    const sapData* d = sap_data(s);
    h[r] = hash_bytes(d->qpos, sizeof(double) * 8 * s->m->nq, h[r]);
    h[r] = hash_bytes(d->qvel, sizeof(double) * 8 * s->m->nv, h[r]);
    sap_free(s);
  }
  CHECK(h[0] == h[1], "rerun hashes differ: %llx vs %llx", (unsigned long long)h[0],
        (unsigned long long)h[1]);
}

/* ---- state API -------------------------------------------------------------------- */

static void test_state_api(void) {
  sapSim* s = make_sim("scenes/cartpole.xml", 4, SAP_PRESET_APPROX64, -1, 0);
  if (!s) return;
  /* set a subset, read it back, others unchanged */
  int ids[2] = {3, 1};
  double q[4] = {0.1, 0.2, 0.3, 0.4}, back[8];
  CHECK(sap_set(s, SAP_FIELD_QPOS, ids, 2, q) == SAP_OK, "%s", sap_lastError());
  sap_get(s, SAP_FIELD_QPOS, NULL, 4, back);
  CHECK(back[6] == 0.1 && back[7] == 0.2 && back[2] == 0.3 && back[3] == 0.4, "subset set/get");
  CHECK(back[0] == s->m->qpos0[0] && back[4] == s->m->qpos0[0], "other worlds untouched");
  /* non-finite input is rejected and changes nothing */
  double bad[4] = {1, 2, NAN, 4};
  CHECK(sap_set(s, SAP_FIELD_QVEL, ids, 2, bad) == SAP_ERR_NONFINITE, "NaN rejected");
  CHECK(strstr(sap_lastError(), "not finite") != NULL, "message: %s", sap_lastError());
  double v[8];
  sap_get(s, SAP_FIELD_QVEL, NULL, 4, v);
  for (int i = 0; i < 8; i++) CHECK(v[i] == 0, "qvel[%d] changed by a rejected set", i);
  /* masked reset to a keyframe */
  sap_step(s, 10);
  unsigned char mask[4] = {0, 1, 0, 0};
  CHECK(sap_reset(s, 0, mask) == SAP_OK, "%s", sap_lastError());
  sap_get(s, SAP_FIELD_QPOS, NULL, 4, back);
  CHECK(back[2] == s->m->key_qpos[0] && back[3] == s->m->key_qpos[1], "world 1 at the keyframe");
  double t[4];
  sap_get(s, SAP_FIELD_TIME, NULL, 4, t);
  CHECK(t[1] == s->m->key_time[0] && t[0] > 0, "time reset only in world 1");
  CHECK(sap_reset(s, 7, NULL) == SAP_ERR_ARG, "missing keyframe rejected");
  CHECK(sap_get(s, SAP_FIELD_QPOS, (int[]){9}, 1, back) == SAP_ERR_ARG, "world id out of range");
  CHECK(sap_set(s, SAP_FIELD_XPOS, NULL, 4, back) == SAP_ERR_ARG, "xpos is read-only");
  sap_free(s);
}

/* a world that goes non-finite is contained: flagged, frozen, others unaffected */
static void test_nonfinite_contained(void) {
  sapSim* s = make_sim("scenes/cartpole.xml", 3, SAP_PRESET_APPROX64, -1, 0);
  if (!s) return;
  double f[6] = {0, 0, 1e308, 1e308, 0, 0};  /* world 1: forces overflow to inf */
  CHECK(sap_set(s, SAP_FIELD_QFRC_APPLIED, NULL, 3, f) == SAP_OK, "%s", sap_lastError());
  sap_step(s, 3);
  sapWorldInfo info[3];
  sap_worldInfo(s, NULL, 3, info);
  CHECK(info[1].flags & SAP_WORLD_NONFINITE, "world 1 flagged (flags %x)", info[1].flags);
  CHECK(!(info[0].flags & SAP_WORLD_NONFINITE) && !(info[2].flags & SAP_WORLD_NONFINITE),
        "others not flagged");
  double q[6];
  sap_get(s, SAP_FIELD_QPOS, NULL, 3, q);
  for (int i = 0; i < 6; i++) CHECK(isfinite(q[i]), "qpos[%d] finite", i);
  /* reset clears the flag */
  unsigned char mask[3] = {0, 1, 0};
  sap_reset(s, -1, mask);
  sap_worldInfo(s, NULL, 3, info);
  CHECK(info[1].flags == 0, "reset clears the flag");
  sap_free(s);
}

/* 65536 worlds: created, stepped with contacts, every world finite and advanced */
static void test_many_worlds(void) {
  int n = 65536;
  sapSim* s = make_sim("scenes/cartpole.xml", n, SAP_PRESET_APPROX32, -1, 1);
  if (!s) return;
  CHECK(sap_nworld(s) == n, "nworld");
  CHECK(sap_step(s, 2) == SAP_OK, "%s", sap_lastError());
  const sapData* d = sap_data(s);
  int bad = 0;
  for (long i = 0; i < (long)n * s->m->nq; i++) bad += !isfinite(d->qpos[i]);
  for (int w = 0; w < n; w++) bad += d->time[w] != 2 * s->h;
  CHECK(bad == 0, "%d bad values among %d worlds", bad, n);
  sap_free(s);
}

/* sap_options(s) holds the values in force, no "from the preset/scene" marker (-1, NaN).
 * Oracles: MuJoCo 4's compile of the same file (timestep, the scene's sap_contact_k/taud
 * custom numerics), the documented rules (band 0.02 m under the approx presets, 0 under drake
 * for a scene without one; broad phase sweep when ngeom >= 32 and npair > 8 ngeom, else pairs),
 * and explicit options kept as given. */
static double mj_numeric(const mjModel* mj, const char* name) {
  int id = mj_name2id(mj, mjOBJ_NUMERIC, name);
  return id >= 0 ? mj->numeric_data[mj->numeric_adr[id]] : NAN;
}

static void test_options_expanded(void) {
  const char* scenes[2] = {"scenes/humanoid.xml", "scenes/box_stack.xml"};
  const char* presets[3] = {"approx32", "approx64", "drake"};
  for (int sc = 0; sc < 2; sc++) {
    char err[512];
    mjModel* mj = mj_loadXML(scenes[sc], NULL, err, sizeof(err));
    CHECK(mj != NULL, "%s: %s", scenes[sc], err);
    if (!mj) return;
    for (int p = 0; p < 3; p++) {
      char opts[64];
      snprintf(opts, sizeof(opts), "preset=%s", presets[p]);
      sapSim* s = fx_sim(scenes[sc], 2, opts);
      if (!s) break;
      const sapOptions* o = sap_options(s);
      const sapModel* m = sap_model(s);
      const int* ints = &o->free_motion_precision;  /* the int knobs between preset and line_search */
      for (const int* i = ints; i <= &o->integration; i++) CHECK(*i >= 0, "%s %s: int knob %d is %d", scenes[sc], presets[p], (int)(i - ints), *i);
      CHECK(o->line_search >= 0 && o->max_iterations > 0 && o->ls_max_iterations > 0 && o->ncon_max > 0,
            "%s %s: line_search %d caps %d %d ncon_max %d", scenes[sc], presets[p], o->line_search, o->max_iterations,
            o->ls_max_iterations, o->ncon_max);
      const double* reals = &o->optimality_abs_tol;
      for (const double* x = reals; x <= &o->contact_sigma; x++)
        CHECK(isfinite(*x), "%s %s: real knob %d is %g", scenes[sc], presets[p], (int)(x - reals), *x);
      CHECK(o->timestep == mj->opt.timestep, "%s %s: timestep %g, MuJoCo %g", scenes[sc], presets[p], o->timestep, mj->opt.timestep);
      CHECK(o->contact_k == mj_numeric(mj, "sap_contact_k"), "%s %s: contact_k %g, scene %g", scenes[sc], presets[p],
            o->contact_k, mj_numeric(mj, "sap_contact_k"));
      CHECK(o->contact_taud == mj_numeric(mj, "sap_contact_taud"), "%s %s: contact_taud %g, scene %g", scenes[sc],
            presets[p], o->contact_taud, mj_numeric(mj, "sap_contact_taud"));
      CHECK(o->contact_margin == (p == 2 ? 0.0 : 0.02), "%s %s: contact_margin %g", scenes[sc], presets[p], o->contact_margin);
      CHECK(o->ncon_max == sap_data(s)->ncon_max, "%s %s: ncon_max %d, data %d", scenes[sc], presets[p], o->ncon_max,
            sap_data(s)->ncon_max);
      int sweep = m->ngeom >= 32 && m->npair_max > 8 * m->ngeom;
      CHECK(o->broadphase == (sweep ? SAP_BROAD_SWEEP : SAP_BROAD_PAIRS), "%s %s: broadphase %d (ngeom %d, npair %d)",
            scenes[sc], presets[p], o->broadphase, m->ngeom, m->npair_max);
      CHECK(o->device == SAP_DEVICE_CPU, "%s: device %d", presets[p], o->device);
      sap_free(s);
    }
    mj_deleteModel(mj);
  }
  /* explicit values stay */
  sapSim* s = fx_sim("scenes/box_stack.xml", 1, "timestep=0.00125 ncon_max=37 contact_k=2e4 contact_margin=0.005 broadphase=sweep");
  if (!s) return;
  const sapOptions* o = sap_options(s);
  CHECK(o->timestep == 0.00125 && o->ncon_max == 37 && o->contact_k == 2e4 && o->contact_margin == 0.005 &&
        o->broadphase == SAP_BROAD_SWEEP, "explicit: timestep %g ncon_max %d contact_k %g margin %g broadphase %d",
        o->timestep, o->ncon_max, o->contact_k, o->contact_margin, o->broadphase);
  sap_free(s);
}

/* the test fixture's temporary files: a path returned earlier still names its file after many
 * later ones (the list of paths grows; a path kept in the list's storage would move with it) */
/* the fixture's text helpers: a file past the first 64 KB read back whole, a substitution and a
 * cut against the strings built by hand */
static void test_fixture_text(void) {
  size_t n = 200000;
  char* big = malloc(n + 1);
  for (size_t i = 0; i < n; i++) big[i] = (char)('a' + i % 26);
  big[n] = 0;
  const char* path = fx_tempFile("big.txt", big);
  char* back = path ? fx_readFile(path) : NULL;
  CHECK(back && strcmp(back, big) == 0, "fx_readFile: %zu bytes back", back ? strlen(back) : 0);
  free(back);
  free(big);
  const char* src = "<a><b x='1'/><c>text</c></a>";
  char* t = malloc(strlen(src) + 1);
  strcpy(t, src);
  t = fx_subst(t, "x='1'", "x='22' y='3'");
  fx_cut(t, "<c>", "</c>");
  CHECK(strcmp(t, "<a><b x='22' y='3'/></a>") == 0, "fx_subst + fx_cut: %s", t);
  free(t);
}

static void test_fixture_temp_paths(void) {
  const char* first = fx_tempFile("first.xml", "<mujoco/>");
  char want[256];
  snprintf(want, sizeof(want), "%s", first ? first : "");
  for (int i = 0; i < 200; i++) fx_tempPath("later.xml");
  CHECK(first && strcmp(first, want) == 0, "the first path changed: '%s', was '%s'", first ? first : "", want);
  FILE* f = first ? fopen(first, "r") : NULL;
  CHECK(f != NULL, "the first file opens after 200 more paths");
  if (f) fclose(f);
}

int main(void) {
  mju_user_warning = NULL;
  RUN(test_fixture_temp_paths);
  RUN(test_fixture_text);
  RUN(test_free_fall);
  RUN(test_spinning_body);
  RUN(test_pendulum_period);
  RUN(test_midpoint_leapfrog);
  RUN(test_identical_worlds);
  RUN(test_independent_of_nworld);
  RUN(test_rerun_bitwise);
  RUN(test_state_api);
  RUN(test_nonfinite_contained);
  RUN(test_many_worlds);
  RUN(test_options_expanded);
  return check_summary("test_foundation");
}
