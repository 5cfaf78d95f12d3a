/* MuJoCo's actuatorgroupdisable (mjOption.disableactuator, mj_actuatorDisabled; sapModel
 * actuator_disabled) on scenes/actuator_groups.xml (groups 1 and 3 disabled: motors, servos, an
 * integrated-velocity servo and a filter with act, a tendon motor):
 *  - Euler lockstep against MuJoCo 4 (contacts off: servos explicit, as MuJoCo's) under random
 *    controls from random act (outside the actrange too): qpos, qvel, act, every sensor
 *    (actuatorfrc 0 for the disabled, jointactuatorfrc without them, actuatorpos/vel as usual);
 *  - the SAP solve (contacts on, servos implicit): the same trajectory, qfrc_actuator included
 *    (body_outputs), as the scene with the disabled actuators cut out (bitwise: no drive row). */
#include <math.h>
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "fixture_mj.h"
#include "sim.h"

#define SCENE "scenes/actuator_groups.xml"
#define NW 4

static void test_lockstep(void) {
  mjModel* mj = fx_mjModel(SCENE);
  sapSim* s = fx_sim(SCENE, NW, "preset=approx64 contacts=0 integration=sap_euler device=cpu");
  if (!mj || !s) return;
  mj->opt.integrator = mjINT_EULER;
  int nq = mj->nq, nv = mj->nv, nu = mj->nu, na = mj->na, ns = mj->nsensordata, nstep = 1000, ndis = 0;
  for (int u = 0; u < nu; u++) ndis += s->m->actuator_disabled[u];
  CHECK(ndis == 5 && na == 3, "5 disabled actuators (got %d), 3 activations (got %d)", ndis, na);
  mjData* md[NW];
  double act[NW * 4], ctrl[NW * 10], q[NW * 4], v[NW * 4], a[NW * 4], sens[NW * 16];
  for (int w = 0; w < NW; w++) {
    md[w] = mj_makeData(mj);
    for (int i = 0; i < na; i++) act[w * na + i] = check_uniform(-0.9, 0.9);  // beyond iv3's actrange too
    memcpy(md[w]->act, act + w * na, sizeof(double) * na);
  }
  CHECK_OK(sap_set(s, SAP_FIELD_ACT, NULL, NW, act));
  double wq = 0, wv = 0, wa = 0, ws = 0, span = 0, dis_frc = 0, act_moved = 0;
  for (int k = 0; k < nstep; k++) {
    for (int i = 0; i < NW * nu; i++) ctrl[i] = check_uniform(-1.2, 1.2);
    CHECK_OK(sap_set(s, SAP_FIELD_CTRL, NULL, NW, ctrl));
    CHECK_OK(sap_step(s, 1));
    CHECK_OK(sap_get(s, SAP_FIELD_QPOS, NULL, NW, q));
    CHECK_OK(sap_get(s, SAP_FIELD_QVEL, NULL, NW, v));
    CHECK_OK(sap_get(s, SAP_FIELD_ACT, NULL, NW, a));
    CHECK_OK(sap_get(s, SAP_FIELD_SENSORDATA, NULL, NW, sens));
    for (int w = 0; w < NW; w++) {
      fx_mjStepAt(mj, md[w], NULL, NULL, ctrl + w * nu);
      double frc[16];  // actuatorfrc and jointactuatorfrc: the step's (after mj_step); the rest at the new state
      memcpy(frc, md[w]->sensordata, sizeof(double) * ns);
      mj_forward(mj, md[w]);
      for (int i = 0; i < nq; i++) wq = fmax(wq, fabs(q[w * nq + i] - md[w]->qpos[i]));
      for (int i = 0; i < nv; i++) wv = fmax(wv, fabs(v[w * nv + i] - md[w]->qvel[i]));
      for (int i = 0; i < nv; i++) span = fmax(span, fabs(md[w]->qvel[i]));
      for (int i = 0; i < na; i++) wa = fmax(wa, fabs(a[w * na + i] - md[w]->act[i]));
      for (int i = 0; i < mj->nsensor; i++) {
        int adr = mj->sensor_adr[i], t = mj->sensor_type[i];
        double want = t == mjSENS_ACTUATORFRC || t == mjSENS_JOINTACTFRC ? frc[adr] : md[w]->sensordata[adr];
        ws = fmax(ws, fabs(sens[w * ns + adr] - want) / (1 + fabs(want)));
        if (t == mjSENS_ACTUATORFRC && s->m->actuator_disabled[mj->sensor_objid[i]])
          dis_frc = fmax(dis_frc, fabs(sens[w * ns + adr]));
      }
      /* the enabled filter's act moves; the disabled acts stay (iv3 clamped into [-0.5, 0.5]) */
      act_moved = fmax(act_moved, fabs(a[w * na + na - 1] - act[w * na + na - 1]));
    }
  }
  for (int w = 0; w < NW; w++) {
    double iv3 = act[w * na], f3 = act[w * na + 1];
    CHECK(a[w * na] == fmin(0.5, fmax(-0.5, iv3)), "world %d: iv3's act %g, initial %g", w, a[w * na], iv3);
    CHECK(a[w * na + 1] == f3, "world %d: f3's act %g, initial %g", w, a[w * na + 1], f3);
  }
  printf("  lockstep %d steps x %d worlds: qpos %.3g, qvel %.3g (|qvel| up to %.3g), act %.3g, sensors %.3g "
         "relative; disabled actuatorfrc %.3g, enabled filter act moved %.3g\n",
         nstep, NW, wq, wv, span, wa, ws, dis_frc, act_moved);
  CHECK(wq <= 1e-11 && wv <= 1e-10 && wa <= 1e-12 && ws <= 1e-10, "differs from MuJoCo 4");
  CHECK(dis_frc == 0 && act_moved > 0.1 && span > 1, "the scene did not exercise the groups");
  for (int w = 0; w < NW; w++) mj_deleteData(md[w]);
  mj_deleteModel(mj);
  sap_free(s);
}

/* the SAP solve: bitwise the scene without its disabled actuators (and their sensors) */
static void test_same_as_without(void) {
  char* text = fx_readFile(SCENE);
  char* cut = fx_subst(fx_readFile(SCENE), " actuatorgroupdisable=\"1 3\"", "");
  fx_cut(cut, "<!-- disabled -->", "<!-- /disabled -->");
  fx_cut(cut, "<!-- disabled sensors -->", "<!-- /disabled sensors -->");
  const char* opts = "preset=approx64 body_outputs=1 device=cpu";
  sapSim* s = fx_sim(text, NW, opts);
  sapSim* r = fx_sim(cut, NW, opts);
  if (s && r) {
    int nu = s->m->nu, nur = r->m->nu, nv = s->m->nv;
    CHECK(nur == nu - 5, "the cut scene has %d actuators", nur);
    double ctrl[NW * 10], ctrlr[NW * 10], out[2][4][NW * 4];
    sapField f[4] = {SAP_FIELD_QPOS, SAP_FIELD_QVEL, SAP_FIELD_QFRC_ACTUATOR, SAP_FIELD_TIME};
    double worst = 0, moved = 0;
    for (int k = 0; k < 500; k++) {
      for (int w = 0; w < NW; w++)
        for (int u = 0, j = 0; u < nu; u++) {
          ctrl[w * nu + u] = check_uniform(-1.2, 1.2);
          if (!s->m->actuator_disabled[u]) ctrlr[w * nur + j++] = ctrl[w * nu + u];
        }
      CHECK_OK(sap_set(s, SAP_FIELD_CTRL, NULL, NW, ctrl));
      CHECK_OK(sap_set(r, SAP_FIELD_CTRL, NULL, NW, ctrlr));
      CHECK_OK(sap_step(s, 1));
      CHECK_OK(sap_step(r, 1));
      for (int i = 0; i < 3; i++) {
        CHECK_OK(sap_get(s, f[i], NULL, NW, out[0][i]));
        CHECK_OK(sap_get(r, f[i], NULL, NW, out[1][i]));
        for (int j = 0; j < NW * nv; j++) worst = fmax(worst, fabs(out[0][i][j] - out[1][i][j]));
      }
      for (int j = 0; j < NW * nv; j++) moved = fmax(moved, fabs(out[0][1][j]));
    }
    printf("  SAP solve, 500 steps x %d worlds: qpos, qvel, qfrc_actuator vs the scene without them: max |diff| %.3g "
           "(|qvel| up to %.3g)\n", NW, worst, moved);
    CHECK(worst == 0 && moved > 1, "differs from the scene without the disabled actuators by %g", worst);
  }
  sap_free(s);
  sap_free(r);
  free(text);
  free(cut);
}

int main(void) {
  mju_user_warning = NULL;
  RUN(test_lockstep);
  RUN(test_same_as_without);
  return check_summary("test_actuator_groups");
}
