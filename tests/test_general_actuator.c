/* General explicit actuators (SAP_ACT_GENERAL, kernels/actuator.h sapa_force: a <damper>, an
 * anti-spring, a state-dependent gain with negative damping and a force range, a filtered
 * general with a gain slope on a tendon) and <flag actuation="disable"/>. Oracles: MuJoCo 4.0
 * on the same MJCF (scenes/general_actuator.xml): qfrc_actuator and actuator sensors at 200
 * random states (mj_forward, 1e-12), qpos/act trajectories under random controls (mj_step,
 * Euler: sapsim's sap_euler without contacts is the same scheme), per-world gain/bias/kp/kv
 * against a MuJoCo model edited to the same values; a damper's exponential decay (the
 * explicit Euler recursion v_n = v_0 (1 - h kv u / m)^n exactly and exp(-kv u t / m) to
 * O(h)); actuation off equal bitwise to the scene without actuators and MuJoCo's zero
 * qfrc_actuator, frozen act, zero actuatorvel/actuatorfrc. */
#define _POSIX_C_SOURCE 200809L
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <string.h>

#include "fixture.h"
#include "fixture_mj.h"
#include "kernels.h"
#include "sim.h"

#define SCENE "scenes/general_actuator.xml"
#define NWORLD 5

/* the scene file's text with `from` replaced by `to` (NULL: unchanged); malloc'ed */
static char* scene_text(const char* from, const char* to) {
  char* buf = fx_readFile(SCENE);
  return from ? fx_subst(buf, from, to) : buf;
}

static void random_state(const mjModel* mj, double qr, double vr, double* qpos, double* qvel, double* ctrl,
                         double* act) {
  for (int i = 0; i < mj->nq; i++) qpos[i] = check_uniform(-qr, qr);
  for (int i = 0; i < mj->nv; i++) qvel[i] = check_uniform(-vr, vr);
  for (int i = 0; i < mj->nu; i++) ctrl[i] = check_uniform(-2, 2);
  for (int i = 0; i < mj->na; i++) act[i] = check_uniform(-1.5, 1.5);
}

/* qfrc_actuator (free motion, explicit laws) and the actuator sensors at 40 x 5 random
 * states over two decades of joint ranges and velocities, against mj_forward. mjw: MuJoCo
 * models per world (NULL: mj for every world) */
static int forces_at_random_states(sapSim* s, mjModel* mj, mjModel** mjw, const char* label) {
  const sapModel* m = sap_model(s);
  mjData* md = mj_makeData(mj);
  int nq = mj->nq, nv = mj->nv, nu = mj->nu, na = mj->na, ns = mj->nsensordata, compared = 0;
  double qpos[NWORLD * 8], qvel[NWORLD * 8], ctrl[NWORLD * 8], act[NWORLD * 8], sens[NWORLD * 8], worst = 0;
  for (int rep = 0; rep < 40; rep++) {
    double qr = rep < 20 ? 0.3 : 3, vr = rep % 2 ? 20 : 0.5;
    for (int w = 0; w < NWORLD; w++) random_state(mj, qr, vr, qpos + w * nq, qvel + w * nv, ctrl + w * nu, act + w * na);
    CHECK_OK(sap_set(s, SAP_FIELD_QPOS, NULL, NWORLD, qpos));
    CHECK_OK(sap_set(s, SAP_FIELD_QVEL, NULL, NWORLD, qvel));
    CHECK_OK(sap_set(s, SAP_FIELD_CTRL, NULL, NWORLD, ctrl));
    CHECK_OK(sap_set(s, SAP_FIELD_ACT, NULL, NWORLD, act));
    sapData* d = (sapData*)sap_data(s);
    for (long i = 0; i < (long)NWORLD * nv; i++) d->qfrc_actuator[i] = NAN;
    sapc_kinematics(s);
    sapc_freeMotion(s);
    double qfrc[NWORLD * 8], pv[NWORLD * 8];
    memcpy(qfrc, d->qfrc_actuator, sizeof(double) * NWORLD * nv);
    /* velocity sensors follow the set state; actuatorfrc comes with a step */
    CHECK_OK(sap_get(s, SAP_FIELD_SENSORDATA, NULL, NWORLD, pv));
    CHECK_OK(sap_set(s, SAP_FIELD_QPOS, NULL, NWORLD, qpos));
    /* one step: actuatorfrc and jointactuatorfrc of the start state */
    CHECK_OK(sap_step(s, 1));
    CHECK_OK(sap_get(s, SAP_FIELD_SENSORDATA, NULL, NWORLD, sens));
    for (int w = 0; w < NWORLD; w++) {
      mjModel* mw = mjw ? mjw[w] : mj;
      fx_mjSetState(mw, md, qpos + w * nq, qvel + w * nv, ctrl + w * nu, act + w * na);
      mj_forward(mw, md);
      double scale = 1;
      for (int i = 0; i < nv; i++) scale = fmax(scale, fabs(md->qfrc_actuator[i]));
      for (int i = 0; i < nv; i++) worst = fmax(worst, fabs(qfrc[w * nv + i] - md->qfrc_actuator[i]) / scale);
      char what[128];
      snprintf(what, sizeof(what), "%s rep %d world %d qfrc_actuator", label, rep, w);
      check_arrays(what, qfrc + w * nv, md->qfrc_actuator, nv, 1e-12 * scale, 1e-12);
      for (int i = 0; i < mw->nsensor; i++) {
        int t = mw->sensor_type[i], a = mw->sensor_adr[i];
        if (t == mjSENS_ACTUATORFRC || t == mjSENS_JOINTACTFRC)
          CHECK_CLOSE(sens[w * ns + a], md->sensordata[a], 1e-12, 1e-12, "%s rep %d world %d sensor %d (type %d)",
                      label, rep, w, i, t);
        if (t == mjSENS_ACTUATORVEL)
          CHECK_CLOSE(pv[w * ns + a], md->sensordata[a], 1e-12, 1e-12, "%s rep %d world %d actuatorvel %d", label,
                      rep, w, i);
      }
      compared++;
    }
  }
  (void)m;
  printf("  %s: %d states, max |qfrc_actuator - MuJoCo| / scale %.3g\n", label, compared, worst);
  mj_deleteData(md);
  return compared;
}

static void test_forces(void) {
  mjModel* mj = fx_mjModel(SCENE);
  sapSim* s = fx_sim(SCENE, NWORLD, "preset=approx64 contacts=0");
  if (!mj || !s) return;
  const sapModel* m = sap_model(s);
  int ngeneral = 0;
  for (int u = 0; u < m->nu; u++) ngeneral += m->actuator_kind[u] == SAP_ACT_GENERAL;
  CHECK(ngeneral == 4, "4 general actuators, got %d", ngeneral);
  CHECK(m->actuator_kind[4] == SAP_ACT_POSITION && m->actuator_kind[5] == SAP_ACT_MOTOR, "servo and motor kept");
  CHECK(forces_at_random_states(s, mj, NULL, "model") == 200, "200 states");
  sap_free(s);
  mj_deleteModel(mj);
}

/* per-world parameters of the general laws: world w edits gain (g0), bias (b0), kp (-b1),
 * kv (-b2) of the four general actuators; MuJoCo models edited to the same gainprm/biasprm */
static void test_per_world(void) {
  mjModel* mj = fx_mjModel(SCENE);
  sapSim* s = fx_sim(SCENE, NWORLD, "preset=approx64 contacts=0");
  if (!mj || !s) return;
  int nu = mj->nu;
  double gain[NWORLD * 8], bias[NWORLD * 8], kp[NWORLD * 8], kv[NWORLD * 8];
  CHECK_OK(sap_getParam(s, SAP_PARAM_ACTUATOR_GAIN, NULL, NWORLD, gain));
  CHECK_OK(sap_getParam(s, SAP_PARAM_ACTUATOR_BIAS, NULL, NWORLD, bias));
  CHECK_OK(sap_getParam(s, SAP_PARAM_ACTUATOR_KP, NULL, NWORLD, kp));
  CHECK_OK(sap_getParam(s, SAP_PARAM_ACTUATOR_KV, NULL, NWORLD, kv));
  mjModel* mjw[NWORLD];
  for (int w = 0; w < NWORLD; w++) {
    mjw[w] = mj_copyModel(NULL, mj);
    for (int u = 0; u < 4 && w > 0; u++) {  /* the general ones; world 0 keeps the model */
      double* gp = mjw[w]->actuator_gainprm + mjNGAIN * u;
      double* bp = mjw[w]->actuator_biasprm + mjNBIAS * u;
      gain[w * nu + u] = gp[0] = check_uniform(-2, 2);
      bias[w * nu + u] = bp[0] = check_uniform(-1, 1);
      kp[w * nu + u] = check_uniform(-20, 20);  /* anti-springs included: kp < 0 */
      kv[w * nu + u] = check_uniform(-0.5, 0.5);
      bp[1] = -kp[w * nu + u];
      bp[2] = -kv[w * nu + u];
      mjw[w]->actuator_biastype[u] = mjBIAS_AFFINE;
    }
  }
  CHECK_OK(sap_setParam(s, SAP_PARAM_ACTUATOR_GAIN, NULL, NWORLD, gain));
  CHECK_OK(sap_setParam(s, SAP_PARAM_ACTUATOR_BIAS, NULL, NWORLD, bias));
  CHECK_OK(sap_setParam(s, SAP_PARAM_ACTUATOR_KP, NULL, NWORLD, kp));
  CHECK_OK(sap_setParam(s, SAP_PARAM_ACTUATOR_KV, NULL, NWORLD, kv));
  forces_at_random_states(s, mj, mjw, "per-world");
  /* a drive's kp stays >= 0 */
  kp[1 * nu + 4] = -1;
  CHECK(sap_setParam(s, SAP_PARAM_ACTUATOR_KP, NULL, NWORLD, kp) == SAP_ERR_ARG &&
        strstr(sap_lastError(), "servo") && strstr(sap_lastError(), "negative"),
        "negative kp of a position servo refused: %s", sap_lastError());
  for (int w = 0; w < NWORLD; w++) mj_deleteModel(mjw[w]);
  mj_deleteModel(mj);
  sap_free(s);
}

/* qpos and act over nstep steps with fresh random controls, against MuJoCo's Euler */
static void trajectory(const char* xml, const char* label, int nstep) {
  const char* path = fx_tempFile("traj.xml", xml);
  mjModel* mj = fx_mjModel(xml);
  sapSim* s = path ? fx_sim(path, NWORLD, "preset=approx64 contacts=0 integration=sap_euler") : NULL;
  if (!mj || !s) return;
  int nq = mj->nq, nu = mj->nu, na = mj->na;
  mjData* md[NWORLD];
  CHECK_OK(sap_reset(s, 0, NULL));
  for (int w = 0; w < NWORLD; w++) {
    md[w] = mj_makeData(mj);
    mj_resetDataKeyframe(mj, md[w], 0);
  }
  double ctrl[NWORLD * 8], act[NWORLD * 8], qpos[NWORLD * 8], worst_q = 0, worst_a = 0, span = 0;
  for (int k = 0; k < nstep; k++) {
    for (int i = 0; i < NWORLD * nu; i++) ctrl[i] = check_uniform(-1.5, 1.5);
    CHECK_OK(sap_set(s, SAP_FIELD_CTRL, NULL, NWORLD, ctrl));
    CHECK_OK(sap_step(s, 1));
    CHECK_OK(sap_get(s, SAP_FIELD_QPOS, NULL, NWORLD, qpos));
    if (na) CHECK_OK(sap_get(s, SAP_FIELD_ACT, NULL, NWORLD, act));
    for (int w = 0; w < NWORLD; w++) {
      fx_mjStepAt(mj, md[w], NULL, NULL, ctrl + w * nu);
      for (int i = 0; i < nq; i++) {
        worst_q = fmax(worst_q, fabs(qpos[w * nq + i] - md[w]->qpos[i]));
        span = fmax(span, fabs(md[w]->qpos[i]));
      }
      for (int i = 0; i < na; i++) worst_a = fmax(worst_a, fabs(act[w * na + i] - md[w]->act[i]));
    }
  }
  printf("  %s: %d steps x %d worlds, max |qpos - MuJoCo| %.3g (|qpos| up to %.3g), max |act - MuJoCo| %.3g\n",
         label, nstep, NWORLD, worst_q, span, worst_a);
  CHECK(worst_q <= 1e-9 && span > 0.1, "%s: qpos differs from MuJoCo by %g", label, worst_q);
  CHECK(worst_a <= 1e-12, "%s: act differs from MuJoCo by %g", label, worst_a);
  for (int w = 0; w < NWORLD; w++) mj_deleteData(md[w]);
  mj_deleteModel(mj);
  sap_free(s);
}

static void test_trajectories(void) {
  char* xml = scene_text(NULL, NULL);
  if (xml) trajectory(xml, "general_actuator", 1000);
  free(xml);
  /* the same at h = 0.5 ms with a 2.3x stiffer anti-spring (still held by the joint spring) */
  xml = fx_subst(scene_text("biasprm=\"0.2 15 0\"", "biasprm=\"0.2 35 0\""), "timestep=\"0.002\"",
              "timestep=\"0.0005\"");
  if (xml) trajectory(xml, "general_actuator h = 0.5 ms, anti-spring 35", 2000);
  free(xml);
}

/* a <damper> alone on a 0.7 kg slider (no gravity, no joint damping): explicit Euler gives
 * v_n = v_0 (1 - h kv u / m)^n exactly, the continuous law v_0 exp(-kv u t / m); three
 * decades of kv u / m */
static void test_damper_decay(void) {
  const double mass = 0.7, h = 0.001, v0 = 1.3;
  const double kvs[3] = {0.07, 0.7, 7};
  for (int i = 0; i < 3; i++) {
    char xml[1200];
    snprintf(xml, sizeof(xml),
             "<mujoco><option timestep='%g' gravity='0 0 0'/><worldbody><body><joint name='x' type='slide' "
             "axis='1 0 0'/><geom type='box' size='.1 .1 .1' mass='%g' contype='0' conaffinity='0'/></body>"
             "</worldbody><actuator><damper joint='x' kv='%g' ctrlrange='0 2'/></actuator></mujoco>",
             h, mass, kvs[i]);
    const char* path = fx_tempFile("damper.xml", xml);
    sapSim* s = path ? fx_sim(path, 1, "preset=approx64 contacts=0 integration=sap_euler") : NULL;
    if (!s) return;
    double u = 1.5, v = v0, rate = kvs[i] * u / mass;
    CHECK_OK(sap_set(s, SAP_FIELD_QVEL, NULL, 1, &v));
    CHECK_OK(sap_set(s, SAP_FIELD_CTRL, NULL, 1, &u));
    int n = 1000;
    CHECK_OK(sap_step(s, n));
    CHECK_OK(sap_get(s, SAP_FIELD_QVEL, NULL, 1, &v));
    double euler = v0 * pow(1 - h * rate, n), cont = v0 * exp(-rate * n * h);
    printf("  damper kv u / m = %g /s: v(1 s) = %.12g, Euler recursion %.12g, exp %.12g\n", rate, v, euler, cont);
    CHECK_CLOSE(v, euler, 1e-13, 1e-10, "kv %g: the Euler recursion", kvs[i]);
    /* explicit Euler's error at t = 1: v0 e^{-r} (r^2 h / 2) to first order */
    CHECK_CLOSE(v, cont, 0, 0.6 * rate * rate * h + 1e-12, "kv %g: the exponential", kvs[i]);
    sap_free(s);
  }
}

/* actuation off: the scene with its actuators disabled steps bitwise as the scene with the
 * actuators (and their sensors) removed, with contacts and the implicit solve on (the
 * servo's drive row must vanish); against MuJoCo: qfrc_actuator 0, act frozen,
 * actuatorvel and actuatorfrc 0 */
static void test_actuation_off(void) {
  const char* flag = "<option timestep=\"0.002\" integrator=\"Euler\"><flag actuation=\"disable\"/></option>";
  char* off = scene_text("<option timestep=\"0.002\" integrator=\"Euler\"/>", flag);
  char* none = scene_text(NULL, NULL);
  if (!off || !none) return;
  fx_cut(none, "<actuator>", "</actuator>");
  fx_cut(none, "<sensor>", "</sensor>");
  fx_cut(none, "<keyframe>", "</keyframe>");
  char* offk = strdup(off);
  fx_cut(off, "<keyframe>", "</keyframe>");
  const char* p_off = fx_tempFile("off.xml", off);
  const char* p_none = fx_tempFile("none.xml", none);
  for (int c = 0; c < 2; c++) {
    const char* opts = c ? "preset=approx64 contacts=0 integration=sap_euler" : "preset=approx64";
    sapSim* a = fx_sim(p_off, NWORLD, opts);
    sapSim* b = fx_sim(p_none, NWORLD, opts);
    if (!a || !b) return;
    CHECK(sap_model(a)->nsolve_rows == sap_model(b)->nsolve_rows, "drive rows: %d vs %d",
          sap_model(a)->nsolve_rows, sap_model(b)->nsolve_rows);
    int nq = sap_model(a)->nq, nv = sap_model(a)->nv, nu = sap_model(a)->nu;
    double q[NWORLD * 8], v[NWORLD * 8], ctrl[NWORLD * 8], qa[NWORLD * 8], qb[NWORLD * 8];
    for (int i = 0; i < NWORLD * nq; i++) q[i] = check_uniform(-1, 1);
    for (int i = 0; i < NWORLD * nv; i++) v[i] = check_uniform(-3, 3);
    CHECK_OK(sap_set(a, SAP_FIELD_QPOS, NULL, NWORLD, q));
    CHECK_OK(sap_set(b, SAP_FIELD_QPOS, NULL, NWORLD, q));
    CHECK_OK(sap_set(a, SAP_FIELD_QVEL, NULL, NWORLD, v));
    CHECK_OK(sap_set(b, SAP_FIELD_QVEL, NULL, NWORLD, v));
    int diff = 0;
    for (int k = 0; k < 300; k++) {
      for (int i = 0; i < NWORLD * nu; i++) ctrl[i] = check_uniform(-1.5, 1.5);
      CHECK_OK(sap_set(a, SAP_FIELD_CTRL, NULL, NWORLD, ctrl));
      CHECK_OK(sap_step(a, 1));
      CHECK_OK(sap_step(b, 1));
      CHECK_OK(sap_get(a, SAP_FIELD_QPOS, NULL, NWORLD, qa));
      CHECK_OK(sap_get(b, SAP_FIELD_QPOS, NULL, NWORLD, qb));
      diff += memcmp(qa, qb, sizeof(double) * NWORLD * nq) != 0;
    }
    CHECK(diff == 0, "%s: actuation off differs from no actuators in %d of 300 steps", opts, diff);
    sap_free(a);
    sap_free(b);
  }
  /* MuJoCo on the flagged scene (with its keyframe: act 0.4) */
  const char* p_offk = fx_tempFile("offk.xml", offk);
  mjModel* mj = fx_mjModel(offk);
  sapSim* s = fx_sim(p_offk, 1, "preset=approx64 contacts=0 integration=sap_euler");
  if (!mj || !s) return;
  mjData* md = mj_makeData(mj);
  mj_resetDataKeyframe(mj, md, 0);
  CHECK_OK(sap_reset(s, 0, NULL));
  double ctrl[8], act, sens[8];
  for (int k = 0; k < 50; k++) {
    for (int i = 0; i < mj->nu; i++) md->ctrl[i] = ctrl[i] = check_uniform(-1.5, 1.5);
    CHECK_OK(sap_set(s, SAP_FIELD_CTRL, NULL, 1, ctrl));
    CHECK_OK(sap_step(s, 1));
    mj_step(mj, md);
  }
  mj_forward(mj, md);
  for (int i = 0; i < mj->nv; i++) CHECK(md->qfrc_actuator[i] == 0, "MuJoCo qfrc_actuator[%d] %g", i, md->qfrc_actuator[i]);
  const sapData* d = sap_data(s);
  for (int i = 0; i < mj->nv; i++) CHECK(d->qfrc_actuator[i] == 0, "sapsim qfrc_actuator[%d] %g", i, d->qfrc_actuator[i]);
  CHECK_OK(sap_get(s, SAP_FIELD_ACT, NULL, 1, &act));
  CHECK(act == 0.4 && md->act[0] == 0.4, "act frozen at 0.4: sapsim %g, MuJoCo %g", act, md->act[0]);
  CHECK_OK(sap_get(s, SAP_FIELD_SENSORDATA, NULL, 1, sens));
  for (int i = 0; i < mj->nsensordata; i++)
    CHECK(sens[i] == md->sensordata[i] && sens[i] == 0, "sensor value %d: sapsim %g, MuJoCo %g", i, sens[i],
          md->sensordata[i]);
  sap_free(s);
  mj_deleteData(md);
  mj_deleteModel(mj);
  free(off);
  free(offk);
  free(none);
}

int main(void) {
  RUN(test_forces);
  RUN(test_per_world);
  RUN(test_trajectories);
  RUN(test_damper_decay);
  RUN(test_actuation_off);
  return check_summary("test_general_actuator");
}
