/* Delayed actuators (MuJoCo 4's actuator delay and control history, kernels/history.h).
 * Oracles: MuJoCo 4.0 in lockstep on the same control sequence -- at every step the input
 * sapsim acts on (sapData.ctrl_in) equals mj_readCtrl at the step's time, and the motors'
 * qfrc_actuator equals MuJoCo's -- for delays that are whole steps and fractions of a step,
 * zero-order hold, linear and cubic reads, a buffer shorter than the delay (it holds the oldest
 * sample), a filter actuator and a position servo (implicit in sapsim's solve) under delay,
 * across a reset; an analytic check (a motor delayed by k steps pushes a free slider by the
 * control of k steps before); the per-world retry (retry_depth) leaves the history of a run
 * without retries unchanged (sensor delays: tests/test_sensors.c). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fixture.h"
#include "mujoco/mujoco.h"
#include "sim.h"

/* scenes/actuator_delay.xml: timestep 2 ms; actuators: 0 motor, 2 steps, hold; 1 motor, 2.5
 * steps, linear; 2 motor, 3.3 steps, cubic; 3 motor, 10 steps with only 3 samples; 4 filter (tau
 * 20 ms), 1 step; 5 position servo, 3 steps, linear; 6 motor with a history but no delay; 7
 * plain motor */
static const char* path = "scenes/actuator_delay.xml";

static void test_lockstep_with_mujoco(void) {
  char err[1000];
  mjModel* mj = mj_loadXML(path, NULL, err, sizeof(err));
  CHECK(mj != NULL, "%s", err);
  if (!mj) return;
  mjData* md = mj_makeData(mj);
  sapSim* s = fx_sim(path, 1, "preset=approx64 contacts=0 body_outputs=1");
  if (!s) return;
  const sapData* d = sap_data(s);
  int nu = mj->nu, nv = mj->nv, bad = 0, nstep = 400;
  double worst_in = 0, worst_f = 0, ctrl[8];
  for (int k = 0; k < nstep; k++) {
    if (k == 250) {  /* a reset in the middle: histories back to zeros at -n h, ..., -h */
      CHECK(sap_reset(s, -1, NULL) == SAP_OK, "reset: %s", sap_lastError());
      mj_resetData(mj, md);
    }
    for (int u = 0; u < nu; u++) ctrl[u] = check_uniform(-1.5, 1.5);
    memcpy(md->ctrl, ctrl, sizeof(double) * nu);
    sap_set(s, SAP_FIELD_CTRL, NULL, 1, ctrl);
    /* MuJoCo's mj_fwdActuation reads the history (mj_readCtrl at the step's time) for an
     * actuator with a delay, ctrl itself otherwise (also with a history: actuator 6) */
    double want[8];
    for (int u = 0; u < nu; u++) {
      double r;
      const double* p = mj_readCtrl(mj, md, u, md->time, &r, -1);
      want[u] = mj->actuator_delay[u] > 0 ? (p ? *p : r) : ctrl[u];
    }
    mj_step(mj, md);
    CHECK(sap_step(s, 1) == SAP_OK, "step: %s", sap_lastError());
    for (int u = 0; u < nu; u++) {
      double e = fabs(d->ctrl_in[u] - want[u]);
      worst_in = fmax(worst_in, e);
      if (e > 1e-15 && bad++ < 8)
        fprintf(stderr, "  step %d actuator %d: input %.17g, MuJoCo's mj_readCtrl %.17g\n", k, u, d->ctrl_in[u], want[u]);
    }
    /* motors (dofs a..d: actuators 0-3, 6, 7): sapsim's explicit force equals MuJoCo's */
    for (int i = 0; i < 4 && i < nv; i++) {
      double e = fabs(d->qfrc_actuator[i] - md->qfrc_actuator[i]);
      worst_f = fmax(worst_f, e);
      if (e > 1e-12 && bad++ < 8)
        fprintf(stderr, "  step %d dof %d: qfrc_actuator %.17g, MuJoCo 4 %.17g\n", k, i, d->qfrc_actuator[i],
                md->qfrc_actuator[i]);
    }
  }
  fprintf(stderr, "  %d steps, 8 actuators: worst input difference %.2e, worst motor force difference %.2e\n",
          nstep, worst_in, worst_f);
  CHECK(bad == 0, "%d differences from MuJoCo 4", bad);
  sap_free(s);
  mj_deleteData(md);
  mj_deleteModel(mj);
}

/* a free slider of mass M pushed by a motor delayed by k steps: its velocity after n steps is
 * h/M times the sum of the controls of steps 0 .. n-1-k (zeros before) */
static void test_whole_step_delay(void) {
  for (int k = 1; k <= 4; k++) {
    char x[800];
    double h = 0.001, M = 3;
    snprintf(x, sizeof(x),
             "<mujoco><option timestep='%g' gravity='0 0 0'/><worldbody><body><joint name='s' type='slide'/>"
             "<geom size='.1' mass='%g'/></body></worldbody><actuator><motor joint='s' delay='%.17g' "
             "nsample='%d'/></actuator></mujoco>", h, M, k * h, k + 1);
    sapSim* s = fx_sim(x, 1, "preset=approx64 contacts=0 integration=sap_euler");
    if (!s) continue;
    double u[60], v = 0, want = 0;
    for (int n = 0; n < 60; n++) {
      u[n] = check_uniform(-2, 2);
      sap_set(s, SAP_FIELD_CTRL, NULL, 1, u + n);
      CHECK(sap_step(s, 1) == SAP_OK, "step: %s", sap_lastError());
      if (n - k >= 0) want += h / M * u[n - k];
    }
    sap_get(s, SAP_FIELD_QVEL, NULL, 1, &v);
    fprintf(stderr, "  delay %d steps: v %.15g, analytic %.15g\n", k, v, want);
    CHECK(fabs(v - want) <= 1e-14, "delay %d steps: v %.17g, analytic %.17g", k, v, want);
    sap_free(s);
  }
}

/* the retry redoes a failed step from its saved state: the history is part of it, so a step
 * redone at h/2 records each substep once (a run with retry_depth equals, step for step, the
 * same run at h/2 when every step is halved) */
static void test_retry_keeps_history(void) {
  sapSim* a = fx_sim(path, 1, "preset=approx64 contacts=0 retry_depth=2");
  sapSim* b = fx_sim(path, 1, "preset=approx64 contacts=0");
  if (!a || !b) return;
  const sapData* da = sap_data(a);
  const sapData* db = sap_data(b);
  double ctrl[8];
  for (int k = 0; k < 50; k++) {
    for (int u = 0; u < 8; u++) ctrl[u] = check_uniform(-1, 1);
    sap_set(a, SAP_FIELD_CTRL, NULL, 1, ctrl);
    sap_set(b, SAP_FIELD_CTRL, NULL, 1, ctrl);
    CHECK(sap_step(a, 1) == SAP_OK && sap_step(b, 1) == SAP_OK, "step: %s", sap_lastError());
  }
  /* no step fails here, so the retry never redoes one: the history must match bit for bit */
  CHECK(memcmp(da->history, db->history, sizeof(double) * a->m->nhistory) == 0,
        "retry_depth=2 changed the control history of a run with no retries");
  CHECK(memcmp(da->qpos, db->qpos, sizeof(double) * a->m->nq) == 0, "retry_depth=2 changed qpos");
  sap_free(a);
  sap_free(b);
}

/* the history is state: a run restored from qpos, qvel, qvel_prev, act, time and ctrl_history
 * continues bit for bit; without ctrl_history the delayed inputs differ; a broken buffer is
 * refused by name and changes nothing */
static void test_history_field(void) {
  sapSim* a = fx_sim(path, 1, "preset=approx64 contacts=0");
  sapSim* b = fx_sim(path, 1, "preset=approx64 contacts=0");
  sapSim* c = fx_sim(path, 1, "preset=approx64 contacts=0");
  if (!a || !b || !c) return;
  int nh = sap_fieldSize(a, SAP_FIELD_CTRL_HISTORY), nq = a->m->nq;
  CHECK(nh == a->m->nhistory && nh > 0, "ctrl_history size %d, nhistory %d", nh, a->m->nhistory);
  double ctrl[40][8], buf[256];
  for (int k = 0; k < 40; k++)
    for (int u = 0; u < 8; u++) ctrl[k][u] = check_uniform(-1, 1);
  for (int k = 0; k < 20; k++) {
    sap_set(a, SAP_FIELD_CTRL, NULL, 1, ctrl[k]);
    sap_step(a, 1);
  }
  sapField copy[] = {SAP_FIELD_QPOS, SAP_FIELD_QVEL, SAP_FIELD_QVEL_PREV, SAP_FIELD_ACT, SAP_FIELD_TIME,
                     SAP_FIELD_CTRL_HISTORY};
  for (int i = 0; i < 6; i++) {
    sap_get(a, copy[i], NULL, 1, buf);
    CHECK(sap_set(b, copy[i], NULL, 1, buf) == SAP_OK, "set %s: %s", sap_fieldName(copy[i]), sap_lastError());
    if (copy[i] != SAP_FIELD_CTRL_HISTORY) sap_set(c, copy[i], NULL, 1, buf);
  }
  for (int k = 20; k < 40; k++) {
    sap_set(a, SAP_FIELD_CTRL, NULL, 1, ctrl[k]);
    sap_set(b, SAP_FIELD_CTRL, NULL, 1, ctrl[k]);
    sap_set(c, SAP_FIELD_CTRL, NULL, 1, ctrl[k]);
    sap_step(a, 1);
    sap_step(b, 1);
    sap_step(c, 1);
  }
  const sapData* da = sap_data(a);
  const sapData* db = sap_data(b);
  const sapData* dc = sap_data(c);
  CHECK(memcmp(da->qpos, db->qpos, sizeof(double) * nq) == 0, "restored with ctrl_history: qpos differs");
  CHECK(memcmp(da->qpos, dc->qpos, sizeof(double) * nq) != 0, "restored without ctrl_history: qpos equal");
  /* refusals: a fractional cursor, then times out of order (actuator m1's buffer) */
  sap_get(b, SAP_FIELD_CTRL_HISTORY, NULL, 1, buf);
  int adr = b->m->actuator_historyadr[1], n = b->m->actuator_nsample[1];
  double keep = buf[adr + 1];
  buf[adr + 1] = 1.5;
  CHECK(sap_set(b, SAP_FIELD_CTRL_HISTORY, NULL, 1, buf) == SAP_ERR_ARG &&
            strstr(sap_lastError(), "actuator 'm1': cursor 1.5"), "fractional cursor: '%s'", sap_lastError());
  buf[adr + 1] = keep;
  buf[adr + 2 + ((int)keep + 1) % n] = 1e9;  /* the oldest sample after the newest */
  CHECK(sap_set(b, SAP_FIELD_CTRL_HISTORY, NULL, 1, buf) == SAP_ERR_ARG &&
            strstr(sap_lastError(), "actuator 'm1': sample times"), "times out of order: '%s'", sap_lastError());
  CHECK(memcmp(db->history, da->history, sizeof(double) * nh) == 0, "a refused set changed the history");
  sap_free(a);
  sap_free(b);
  sap_free(c);
}

int main(void) {
  RUN(test_lockstep_with_mujoco);
  RUN(test_whole_step_delay);
  RUN(test_retry_keeps_history);
  RUN(test_history_field);
  return check_summary("test_actuator_delay");
}
