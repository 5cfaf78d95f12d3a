/* Actuator activation dynamics (kernels/actuator.h; integrator, filter, filterexact, muscle,
 * actlimited, actearly) and muscle gain/bias. Oracles: MuJoCo 4.0 on the same MJCF
 * (scenes/act_zoo.xml and generated scenes): qfrc_actuator and actuator sensors at random
 * states (mj_forward, fp64 to 1e-12), act and qpos trajectories over many steps with random
 * controls (mj_step, Euler: sapsim without contacts is the same scheme), an implicit
 * <intvelocity> drive converging to MuJoCo's solution at a 1e-5 s step; closed forms (exact
 * filter step response, Euler filter recursion, clamped integrator ramp); the h/2 run for
 * the step retry; refusals by name. */
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <string.h>

#include "fixture.h"
#include "fixture_mj.h"
#include "kernels.h"
#include "sim.h"

#define ZOO "scenes/act_zoo.xml"
#define NWORLD 5

/* random state: hinges in [-qr, qr], velocities in [-vr, vr], ctrl beyond its range (the
 * clamp), act in [-1.2, 1.2] (beyond actrange and the muscles' [0, 1]) */
static void random_state(const mjModel* mj, double qr, double vr, double* qpos, double* qvel, double* ctrl,
                         double* act) {
  for (int i = 0; i < mj->nq; i++) qpos[i] = check_uniform(-qr, qr);
  for (int i = 0; i < mj->nv; i++) qvel[i] = check_uniform(-vr, vr);
  for (int i = 0; i < mj->nu; i++) ctrl[i] = check_uniform(-1.3, 1.3);
  for (int i = 0; i < mj->na; i++) act[i] = check_uniform(-1.2, 1.2);
}

/* qfrc_actuator of the free-motion stage (explicit laws) and the actuator sensors at random
 * states of the zoo, against mj_forward: joint positions over several muscle length-curve
 * pieces and velocities over the force-velocity pieces */
static void test_forces_random_states(void) {
  mjModel* mj = fx_mjModel(ZOO);
  sapSim* s = fx_sim(ZOO, NWORLD, "preset=approx64 contacts=0");
  if (!mj || !s) return;
  const sapModel* m = sap_model(s);
  CHECK(m->na == mj->na && m->na == 8, "na %d, MuJoCo %d", m->na, (int)mj->na);
  for (int u = 0; u < m->nu; u++) CHECK(m->actuator_actadr[u] == mj->actuator_actadr[u], "actadr of %d", u);
  mjData* md = mj_makeData(mj);
  int nq = mj->nq, nv = mj->nv, nu = mj->nu, na = mj->na, ns = mj->nsensordata;
  double qpos[NWORLD * 16], qvel[NWORLD * 16], ctrl[NWORLD * 16], act[NWORLD * 16], sens[NWORLD * 32];
  for (int rep = 0; rep < 8; rep++) {
    double qr = rep < 4 ? 1.5 : 4, vr = rep % 2 ? 15 : 1;
    for (int w = 0; w < NWORLD; w++) random_state(mj, qr, vr, qpos + w * nq, qvel + w * nv, ctrl + w * nu, act + w * na);
    CHECK_OK(sap_set(s, SAP_FIELD_QPOS, NULL, NWORLD, qpos));
    CHECK_OK(sap_set(s, SAP_FIELD_QVEL, NULL, NWORLD, qvel));
    CHECK_OK(sap_set(s, SAP_FIELD_CTRL, NULL, NWORLD, ctrl));
    CHECK_OK(sap_set(s, SAP_FIELD_ACT, NULL, NWORLD, act));
    sapData* d = (sapData*)sap_data(s);
    for (long i = 0; i < (long)NWORLD * nv; i++) d->qfrc_actuator[i] = NAN;
    sapc_kinematics(s);
    sapc_freeMotion(s);
    /* position/velocity sensors follow the set state; acceleration ones come with a step */
    double pv[NWORLD * 32];
    CHECK_OK(sap_get(s, SAP_FIELD_SENSORDATA, NULL, NWORLD, pv));
    for (int w = 0; w < NWORLD; w++) {
      fx_mjSetState(mj, md, qpos + w * nq, qvel + w * nv, ctrl + w * nu, act + w * na);
      mj_forward(mj, md);
      double scale = 1;
      for (int i = 0; i < nv; i++) scale = fmax(scale, fabs(md->qfrc_actuator[i]));
      char what[128];
      snprintf(what, sizeof(what), "rep %d world %d qfrc_actuator", rep, w);
      check_arrays(what, d->qfrc_actuator + w * nv, md->qfrc_actuator, nv, 1e-12 * scale, 1e-12);
      for (int i = 0; i < mj->nsensor; i++) {
        int t = mj->sensor_type[i], a = mj->sensor_adr[i];
        if (t == mjSENS_ACTUATORPOS || t == mjSENS_ACTUATORVEL)
          CHECK_CLOSE(pv[w * ns + a], md->sensordata[a], 1e-12, 1e-12, "rep %d world %d sensor %d", rep, w, i);
      }
    }
    /* one step: the acceleration sensors (actuatorfrc, jointactuatorfrc) of its start state */
    CHECK_OK(sap_set(s, SAP_FIELD_QPOS, NULL, NWORLD, qpos));
    CHECK_OK(sap_step(s, 1));
    CHECK_OK(sap_get(s, SAP_FIELD_SENSORDATA, NULL, NWORLD, sens));
    for (int w = 0; w < NWORLD; w++) {
      fx_mjSetState(mj, md, qpos + w * nq, qvel + w * nv, ctrl + w * nu, act + w * na);
      mj_forward(mj, md);
      for (int i = 0; i < mj->nsensor; i++) {
        int t = mj->sensor_type[i], a = mj->sensor_adr[i];
        if (t == mjSENS_ACTUATORFRC || t == mjSENS_JOINTACTFRC)
          CHECK_CLOSE(sens[w * ns + a], md->sensordata[a], 1e-12, 1e-12, "rep %d world %d sensor %d (type %d)", rep,
                      w, i, t);
      }
    }
  }
  mj_deleteData(md);
  mj_deleteModel(mj);
  sap_free(s);
}

/* act and qpos over nstep steps with fresh random controls every step: sapsim without contacts
 * (explicit laws, semi-implicit Euler with implicit joint damping: sap_euler) is MuJoCo's Euler
 * step, so act agrees to round-off and qpos to the round-off that chaotic-free pendulums grow */
static void trajectory(const char* scene, const char* label, int nstep, int key) {
  mjModel* mj = fx_mjModel(scene);
  sapSim* s = fx_sim(scene, NWORLD, "preset=approx64 contacts=0 integration=sap_euler");
  if (!mj || !s) return;
  int nq = mj->nq, nu = mj->nu, na = mj->na;
  mjData* md[NWORLD];
  CHECK_OK(sap_reset(s, key, NULL));
  for (int w = 0; w < NWORLD; w++) {
    md[w] = mj_makeData(mj);
    if (key >= 0) mj_resetDataKeyframe(mj, md[w], key);
  }
  double* ctrl = malloc(sizeof(double) * NWORLD * nu);
  double* act = malloc(sizeof(double) * NWORLD * na);
  double* qpos = malloc(sizeof(double) * NWORLD * nq);
  double worst_act = 0, worst_q = 0, span = 0;
  for (int k = 0; k < nstep; k++) {
    for (int i = 0; i < NWORLD * nu; i++) ctrl[i] = check_uniform(-1.3, 1.3);
    CHECK_OK(sap_set(s, SAP_FIELD_CTRL, NULL, NWORLD, ctrl));
    CHECK_OK(sap_step(s, 1));
    CHECK_OK(sap_get(s, SAP_FIELD_ACT, NULL, NWORLD, act));
    CHECK_OK(sap_get(s, SAP_FIELD_QPOS, NULL, NWORLD, qpos));
    for (int w = 0; w < NWORLD; w++) {
      fx_mjStepAt(mj, md[w], NULL, NULL, ctrl + w * nu);
      for (int i = 0; i < na; i++) {
        worst_act = fmax(worst_act, fabs(act[w * na + i] - md[w]->act[i]));
        span = fmax(span, fabs(md[w]->act[i]));
      }
      for (int i = 0; i < nq; i++) worst_q = fmax(worst_q, fabs(qpos[w * nq + i] - md[w]->qpos[i]));
    }
  }
  printf("  %s: %d steps x %d worlds, max |act - MuJoCo| %.3g (|act| up to %.3g), max |qpos - MuJoCo| %.3g\n",
         label, nstep, NWORLD, worst_act, span, worst_q);
  CHECK(worst_act <= 1e-12 && span > 0.1, "%s: act differs from MuJoCo by %g", label, worst_act);
  CHECK(worst_q <= 1e-8, "%s: qpos differs from MuJoCo by %g", label, worst_q);
  for (int w = 0; w < NWORLD; w++) mj_deleteData(md[w]);
  free(ctrl);
  free(act);
  free(qpos);
  mj_deleteModel(mj);
  sap_free(s);
}

static void test_trajectories(void) {
  trajectory(ZOO, "act_zoo from qpos0", 1500, -1);
  trajectory(ZOO, "act_zoo from keyframe 'primed'", 500, 0);
  /* time constants over five decades, each kind on its own pendulum (h = 1 ms: the Euler
   * filter is stable for tau >= h/2; filterexact and muscles below it too) */
  char xml[16384];
  int n = snprintf(xml, sizeof(xml), "<mujoco><option timestep='0.001'/><default><geom type='capsule' size='0.02' "
                   "contype='0' conaffinity='0'/><joint axis='0 1 0'/></default><worldbody>");
  const double taus[5] = {1e-4, 1e-3, 1e-2, 1e-1, 1};
  for (int i = 0; i < 20; i++)
    n += snprintf(xml + n, sizeof(xml) - n, "<body pos='%d 0 0'><joint name='j%d'/><geom fromto='0 0 0 0.2 0 0' "
                  "mass='%g'/></body>", i, i, 0.5 + 0.1 * i);
  n += snprintf(xml + n, sizeof(xml) - n, "</worldbody><actuator>");
  for (int i = 0; i < 5; i++) {
    double t = taus[i];
    if (t >= 1e-3)
      n += snprintf(xml + n, sizeof(xml) - n, "<general joint='j%d' dyntype='filter' dynprm='%g' gainprm='0.5'/>",
                    i, t);
    else  // an Euler filter with tau < h/2 diverges (in MuJoCo too): filterexact only
      n += snprintf(xml + n, sizeof(xml) - n, "<general joint='j%d' dyntype='filterexact' dynprm='%g' "
                    "gainprm='0.5' actearly='true'/>", i, t);
    n += snprintf(xml + n, sizeof(xml) - n, "<general joint='j%d' dyntype='filterexact' dynprm='%g' gainprm='0.4'/>",
                  5 + i, t);
    /* muscles: tau_act (0.5 + 1.5 act) >= h/2 keeps Euler stable: 2 ms at the fastest */
    n += snprintf(xml + n, sizeof(xml) - n, "<muscle joint='j%d' lengthrange='-1 1' force='3' timeconst='%g %g' "
                  "tausmooth='%g'/>", 10 + i, fmax(t, 2e-3), 4 * fmax(t, 2e-3), i % 2 ? 0.2 : 0);
    n += snprintf(xml + n, sizeof(xml) - n, "<general joint='j%d' dyntype='integrator' gainprm='0.3' "
                  "actlimited='true' actrange='%g %g'/>", 15 + i, -0.1 * (i + 1), 0.05 * (i + 1));
  }
  snprintf(xml + n, sizeof(xml) - n, "</actuator></mujoco>");
  trajectory(xml, "tau 1e-4 .. 1 s", 2000, -1);
}

/* closed forms under constant controls, sampled every step: exact filter act(t) = u (1 -
 * exp(-t / tau)), Euler filter act_n = u (1 - (1 - h / tau)^n), integrator act_n = clamp(n h u)
 * to actrange, its ctrl clamped to ctrlrange first */
static void test_analytic(void) {
  sapSim* s = fx_sim(ZOO, 1, "preset=approx64 contacts=0");
  if (!s) return;
  const sapModel* m = sap_model(s);
  const double h = m->timestep;
  double ctrl[8] = {0.7, -0.6, 2.5, 0, 0, 0, 0, 0}, act[8];
  CHECK_OK(sap_set(s, SAP_FIELD_CTRL, NULL, 1, ctrl));
  double worst[3] = {0, 0, 0};
  for (int n = 1; n <= 600; n++) {
    CHECK_OK(sap_step(s, 1));
    CHECK_OK(sap_get(s, SAP_FIELD_ACT, NULL, 1, act));
    double t = n * h;
    double filt = 0.7 * (1 - pow(1 - h / 0.05, n));
    double exact = -0.6 * (1 - exp(-t / 0.0005));
    double ramp = fmin(n * h * 1.0, 0.8);  /* ctrl 2.5 clamped to 1, act to 0.8 */
    worst[0] = fmax(worst[0], fabs(act[m->actuator_actadr[0]] - filt));
    worst[1] = fmax(worst[1], fabs(act[m->actuator_actadr[1]] - exact));
    worst[2] = fmax(worst[2], fabs(act[m->actuator_actadr[2]] - ramp));
  }
  printf("  closed forms over 600 steps: filter %.3g, filterexact %.3g, integrator ramp %.3g\n", worst[0], worst[1],
         worst[2]);
  CHECK(worst[0] < 1e-14 && worst[1] < 1e-14 && worst[2] < 1e-14, "closed forms: %g %g %g", worst[0], worst[1],
        worst[2]);
  /* ramp down at ctrl -1 (clamped from -3) to the lower end -0.5 */
  ctrl[2] = -3;
  CHECK_OK(sap_set(s, SAP_FIELD_CTRL, NULL, 1, ctrl));
  double w2 = 0;
  for (int n = 1; n <= 1000; n++) {
    CHECK_OK(sap_step(s, 1));
    CHECK_OK(sap_get(s, SAP_FIELD_ACT, NULL, 1, act));
    w2 = fmax(w2, fabs(act[m->actuator_actadr[2]] - fmax(0.8 - n * h, -0.5)));
  }
  CHECK(w2 < 1e-13, "integrator ramp down: %g", w2);
  sap_free(s);
}

/* an <intvelocity> servo under the SAP solve is an implicit drive whose target follows act:
 * a first-order scheme of the same ODE as MuJoCo's explicit law, so its distance to MuJoCo at
 * a 1e-5 s step (the reference solution) falls about 4x when h falls 4x */
static double servo_error(double h, const mjModel* mj) {
  char opts[96];
  snprintf(opts, sizeof(opts), "preset=approx64 timestep=%g", h);
  const char* xml =
      "<mujoco><option timestep='0.001' integrator='Euler'/><worldbody><body pos='0 0 1'>"
      "<joint name='j' axis='0 1 0' damping='0.02'/><geom type='capsule' fromto='0 0 0 0.3 0 0' size='0.03' "
      "mass='1' contype='0' conaffinity='0'/></body></worldbody>"
      "<actuator><intvelocity joint='j' kp='40' kv='1' actrange='-1.5 1.5'/></actuator></mujoco>";
  sapSim* s = fx_sim(xml, 1, opts);
  mjData* md = mj_makeData(mj);
  double err = INFINITY;
  if (s && md) {
    err = 0;
    int per = (int)lround(0.02 / h), per_mj = (int)lround(0.02 / mj->opt.timestep);
    check_rng_state = 0x1234567ULL;  /* the same control sequence at every h */
    for (int seg = 0; seg < 25; seg++) {
      double u = check_uniform(-3, 3), q;
      sap_set(s, SAP_FIELD_CTRL, NULL, 1, &u);
      md->ctrl[0] = u;
      sap_step(s, per);
      for (int k = 0; k < per_mj; k++) mj_step(mj, md);
      sap_get(s, SAP_FIELD_QPOS, NULL, 1, &q);
      err = fmax(err, fabs(q - md->qpos[0]));
    }
  }
  mj_deleteData(md);
  sap_free(s);
  return err;
}

static void test_implicit_servo(void) {
  const char* xml =
      "<mujoco><option timestep='0.00001' integrator='Euler'/><worldbody><body pos='0 0 1'>"
      "<joint name='j' axis='0 1 0' damping='0.02'/><geom type='capsule' fromto='0 0 0 0.3 0 0' size='0.03' "
      "mass='1' contype='0' conaffinity='0'/></body></worldbody>"
      "<actuator><intvelocity joint='j' kp='40' kv='1' actrange='-1.5 1.5'/></actuator></mujoco>";
  mjModel* mj = fx_mjModel(xml);
  if (!mj) return;
  CHECK(mj->actuator_dyntype[0] == mjDYN_INTEGRATOR && mj->actuator_biasprm[1] == -40,
        "intvelocity compiles to an integrator with a position bias");
  double e1 = servo_error(0.004, mj), e2 = servo_error(0.001, mj), e3 = servo_error(0.00025, mj);
  printf("  intvelocity servo, max |q - MuJoCo(h=1e-5)| over 0.5 s: h=4ms %.3g, 1ms %.3g, 0.25ms %.3g rad\n", e1, e2,
         e3);
  CHECK(e2 < e1 / 2.5 && e3 < e2 / 2.5 && e3 < 2e-3, "first-order convergence to MuJoCo: %g %g %g", e1, e2, e3);
  mj_deleteModel(mj);
}

/* the act field: reset to 0 and to a keyframe's act, get/set round trip, non-finite refused
 * by name with nothing changed, a committed non-finite act freezes its world */
static void test_state_api(void) {
  sapSim* s = fx_sim(ZOO, 3, "preset=approx64");
  if (!s) return;
  const sapModel* m = sap_model(s);
  CHECK(sap_fieldSize(s, SAP_FIELD_ACT) == 8 && !strcmp(sap_fieldName(SAP_FIELD_ACT), "act"), "act field");
  double a[24], b[24];
  CHECK_OK(sap_get(s, SAP_FIELD_ACT, NULL, 3, a));
  for (int i = 0; i < 24; i++) CHECK(a[i] == 0, "act after create: %g", a[i]);
  CHECK_OK(sap_reset(s, 0, NULL));
  CHECK_OK(sap_get(s, SAP_FIELD_ACT, NULL, 3, a));
  for (int w = 0; w < 3; w++)
    for (int i = 0; i < 8; i++) CHECK(a[w * 8 + i] == m->key_act[i], "keyframe act %d", i);
  CHECK(m->key_act[5] == 0.6, "key_act copied from MuJoCo: %g", m->key_act[5]);
  for (int i = 0; i < 24; i++) a[i] = check_uniform(-1, 1);
  int worlds[2] = {2, 0};
  CHECK_OK(sap_set(s, SAP_FIELD_ACT, worlds, 2, a));
  CHECK_OK(sap_get(s, SAP_FIELD_ACT, worlds, 2, b));
  CHECK(!memcmp(a, b, sizeof(double) * 16), "act round trip");
  double bad[8] = {0, 0, 0, NAN, 0, 0, 0, 0};
  CHECK(sap_set(s, SAP_FIELD_ACT, worlds, 1, bad) == SAP_ERR_NONFINITE && strstr(sap_lastError(), "act of world 2"),
        "non-finite act: %s", sap_lastError());
  CHECK_OK(sap_get(s, SAP_FIELD_ACT, worlds, 1, b));
  CHECK(!memcmp(a, b, sizeof(double) * 8), "a refused set changed act");
  CHECK_OK(sap_reset(s, -1, NULL));
  CHECK_OK(sap_get(s, SAP_FIELD_ACT, NULL, 3, a));
  for (int i = 0; i < 24; i++) CHECK(a[i] == 0, "act after reset: %g", a[i]);
  /* in place edit + commit */
  sapData* d = (sapData*)sap_data(s);
  d->act[8 + 2] = INFINITY;
  CHECK(sap_commit(s, NULL, NULL) == SAP_ERR_NONFINITE && strstr(sap_lastError(), "act of world 1"),
        "commit non-finite act: %s", sap_lastError());
  sapWorldInfo info[3];
  sap_worldInfo(s, NULL, 3, info);
  CHECK((info[1].flags & SAP_WORLD_NONFINITE) && !(info[0].flags & SAP_WORLD_NONFINITE), "frozen world 1 only");
  sap_free(s);
}

/* the step retry restores act with the rest of the state: a clamp that fails at h and a
 * filtered motor beside it; with the retry held at h/2 the world's act and qpos are bit for
 * bit those of the run at h/2 throughout (the failed attempt leaves nothing behind) */
static void test_retry(void) {
  const char* xml =
      "<mujoco model='clamp'><option timestep='0.04'/>"
      "<custom><numeric name='sap_contact_k' data='1e9'/><numeric name='sap_contact_taud' data='0'/></custom>"
      "<worldbody><geom name='ground' type='plane' size='5 5 0.1'/>"
      "<body name='heavy0' pos='0 0 0.1'><freejoint/><geom type='box' size='0.3 0.3 0.1' mass='1000'/></body>"
      "<body name='light' pos='0 0 0.21' euler='0.3 0.2 0.1'><freejoint/>"
      "<geom type='box' size='0.05 0.05 0.01' mass='0.1'/></body>"
      "<body name='heavy1' pos='0 0 0.45'><freejoint/><geom type='box' size='0.3 0.3 0.1' mass='1000'/></body>"
      "<body pos='3 0 1'><joint name='p' axis='0 1 0'/><geom type='capsule' fromto='0 0 0 .3 0 0' size='.02' "
      "contype='0' conaffinity='0'/></body></worldbody>"
      "<actuator><general joint='p' dyntype='filter' dynprm='0.3' gainprm='0.2'/>"
      "<general joint='p' dyntype='integrator' gainprm='0.1'/></actuator></mujoco>";
  sapSim* half = fx_sim(xml, 1, "contact_beta=1e-6 timestep=0.02");
  sapSim* sticky = fx_sim(xml, 1, "contact_beta=1e-6 retry_depth=3 retry_recover_steps=1000000");
  if (!half || !sticky) return;
  double u[2] = {1, 0.5}, ah[2], as[2], qh[32], qs[32];
  sap_set(half, SAP_FIELD_CTRL, NULL, 1, u);
  sap_set(sticky, SAP_FIELD_CTRL, NULL, 1, u);
  int nq = sap_model(half)->nq;
  for (int k = 1; k <= 10; k++) {
    sap_step(half, 2);
    sap_step(sticky, 1);
    sap_get(half, SAP_FIELD_ACT, NULL, 1, ah);
    sap_get(sticky, SAP_FIELD_ACT, NULL, 1, as);
    sap_get(half, SAP_FIELD_QPOS, NULL, 1, qh);
    sap_get(sticky, SAP_FIELD_QPOS, NULL, 1, qs);
    CHECK(!memcmp(ah, as, sizeof(ah)) && !memcmp(qh, qs, sizeof(double) * nq),
          "step %d: retried act %.17g %.17g, h/2 run %.17g %.17g", k, as[0], as[1], ah[0], ah[1]);
  }
  sapWorldRetry rt;
  sap_worldRetry(sticky, NULL, 1, &rt);
  CHECK(rt.retries > 0 && rt.h_min == 0.02, "the clamp must be retried (%lld retries)", rt.retries);
  /* act after 0.4 s at h/2: the filter's Euler recursion, the ramp 0.5 t */
  CHECK_CLOSE(as[0], 1 - pow(1 - 0.02 / 0.3, 20), 1e-14, 0, "filter act after the retried run");
  CHECK_CLOSE(as[1], 0.5 * 0.4, 1e-14, 0, "integrator act after the retried run");
  sap_free(half);
  sap_free(sticky);
}

#define HINGE "<worldbody><body><joint name='j' axis='0 1 0'/><geom size='.1'/><site name='s'/></body></worldbody>"

static void test_refusals(void) {
  fx_refused("<mujoco>" HINGE "<actuator><general name='u' joint='j' dyntype='user'/></actuator></mujoco>",
             SAP_ERR_UNSUPPORTED, "actuator 'u' has user activation dynamics");
  /* a state-dependent gain is an explicit general law (tests/test_general_actuator.c), but
   * not on a site, which has no length */
  fx_refused("<mujoco>" HINGE "<actuator><general name='a' site='s' gaintype='affine' gainprm='1 2 0'/>"
             "</actuator></mujoco>", SAP_ERR_UNSUPPORTED, "'a' is a position or velocity servo on a site "
             "transmission (or a muscle, or a general law with length or velocity terms)");
  fx_refused("<mujoco>" HINGE "<actuator><general name='ub' joint='j' biastype='user'/></actuator></mujoco>",
             SAP_ERR_UNSUPPORTED, "actuator 'ub' has a user bias");
  fx_refused("<mujoco>" HINGE "<actuator><general name='ms' site='s' dyntype='muscle' gaintype='muscle' "
             "biastype='muscle' lengthrange='0 1' gainprm='0.75 1.05 10 200 0.5 1.6 1.5 1.3 1.2' "
             "biasprm='0.75 1.05 10 200 0.5 1.6 1.5 1.3 1.2'/></actuator></mujoco>",
             SAP_ERR_UNSUPPORTED, "actuator 'ms' is a position or velocity servo on a site transmission (or a muscle");
}

int main(void) {
  RUN(test_forces_random_states);
  RUN(test_trajectories);
  RUN(test_analytic);
  RUN(test_implicit_servo);
  RUN(test_state_api);
  RUN(test_retry);
  RUN(test_refusals);
  fx_cleanup();
  return check_summary("test_actdyn");
}
