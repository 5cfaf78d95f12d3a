/* Cartesian site transmissions (MuJoCo's mjTRN_SITE with a refsite; kernels/dynamics_t.h
 * sapw_refsite) against MuJoCo 4 on scenes/refsite.xml: actuator_length, the dense
 * actuator_moment, actuator_velocity and qfrc_actuator at 200 random states (1e-12), and an
 * Euler lockstep (sap_euler, no contacts) under random controls with the actuatorpos/vel/frc
 * sensors; servos on refsites refused by name. */
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <string.h>

#include "fixture.h"
#include "integrate.h"
#include "kernels.h"
#include "sim.h"

#define SCENE "scenes/refsite.xml"
#define NW 8
#define NROUND 25

static void test_random_states(void) {
  char err[1000];
  mjModel* mj = mj_loadXML(SCENE, NULL, err, sizeof(err));
  CHECK(mj != NULL, "%s", err);
  sapSim* s = fx_sim(SCENE, NW, "preset=approx64 contacts=0 device=cpu");
  if (!mj || !s) return;
  mjData* md = mj_makeData(mj);
  int nq = mj->nq, nv = mj->nv, nu = mj->nu;
  double qpos[NW * 8], qvel[NW * 8], ctrl[NW * 8], mom[8], dense[8 * 8];
  double wl = 0, wv = 0, wm = 0, wf = 0, span_l = 0, span_m = 0;
  for (int r = 0; r < NROUND; r++) {
    // joint angles over +-3 rad, the slide over +-0.3 m, speeds over +-2
    for (int w = 0; w < NW; w++) {
      for (int i = 0; i < nq; i++) qpos[w * nq + i] = i == 3 ? check_uniform(-0.3, 0.3) : check_uniform(-3, 3);
      for (int i = 0; i < nv; i++) qvel[w * nv + i] = check_uniform(-2, 2);
      for (int i = 0; i < nu; i++) ctrl[w * nu + i] = check_uniform(-1.5, 1.5);
    }
    sap_set(s, SAP_FIELD_QPOS, NULL, NW, qpos);
    sap_set(s, SAP_FIELD_QVEL, NULL, NW, qvel);
    sap_set(s, SAP_FIELD_CTRL, NULL, NW, ctrl);
    sapData* d = (sapData*)sap_data(s);
    for (long i = 0; i < (long)NW * nv; i++) d->qfrc_actuator[i] = NAN;
    sapc_kinematics(s);
    sapc_freeMotion(s);
    for (int w = 0; w < NW; w++) {
      memcpy(md->qpos, qpos + w * nq, sizeof(double) * nq);
      memcpy(md->qvel, qvel + w * nv, sizeof(double) * nv);
      memcpy(md->ctrl, ctrl + w * nu, sizeof(double) * nu);
      mj_forward(mj, md);
      mju_sparse2dense(dense, md->actuator_moment, nu, nv, md->moment_rownnz, md->moment_rowadr,
                       md->moment_colind);
      sapTenFrames_f64 fr = {d->xpos + (long)w * 3 * s->m->nbody, d->xmat + (long)w * 9 * s->m->nbody,
                             d->cref + (long)w * 3 * s->m->nbody, d->cdof + (long)w * 6 * nv};
      for (int u = 0; u < nu; u++) {
        double len = NAN, vel = NAN, l2 = NAN;
        sapw_actuatorLength_f64(s->m, qpos + w * nq, qvel + w * nv, &fr, u, &len, &vel);
        for (int j = 0; j < nv; j++) mom[j] = 0;
        sapw_refsite_f64(s->m, &fr, u, NULL, 1, mom, &l2, NULL);
        CHECK_CLOSE(len, md->actuator_length[u], 1e-12, 1e-12, "world %d round %d actuator %d length", w, r, u);
        CHECK_CLOSE(vel, md->actuator_velocity[u], 1e-12, 1e-12, "world %d round %d actuator %d velocity", w, r, u);
        wl = fmax(wl, fabs(len - md->actuator_length[u]));
        wv = fmax(wv, fabs(vel - md->actuator_velocity[u]));
        span_l = fmax(span_l, fabs(md->actuator_length[u]));
        for (int j = 0; j < nv; j++) {
          CHECK_CLOSE(mom[j], dense[u * nv + j], 1e-12, 1e-12, "world %d actuator %d moment dof %d", w, u, j);
          wm = fmax(wm, fabs(mom[j] - dense[u * nv + j]));
          span_m = fmax(span_m, fabs(dense[u * nv + j]));
        }
      }
      for (int j = 0; j < nv; j++) {
        double got = d->qfrc_actuator[w * nv + j], want = md->qfrc_actuator[j];
        CHECK_CLOSE(got, want, 1e-12, 1e-12, "world %d round %d qfrc_actuator[%d]", w, r, j);
        wf = fmax(wf, fabs(got - want));
      }
    }
  }
  printf("  %d states: max |diff| length %.3g (|l| up to %.3g), velocity %.3g, moment %.3g (up to %.3g), "
         "qfrc_actuator %.3g\n", NW * NROUND, wl, span_l, wv, wm, span_m, wf);
  mj_deleteData(md);
  mj_deleteModel(mj);
  sap_free(s);
}

/* qpos and the sensors over 1000 Euler steps with fresh random controls */
static void test_lockstep(void) {
  char err[1000];
  mjModel* mj = mj_loadXML(SCENE, NULL, err, sizeof(err));
  sapSim* s = fx_sim(SCENE, NW, "preset=approx64 contacts=0 integration=sap_euler");
  if (!mj || !s) return;
  mj->opt.integrator = mjINT_EULER;
  int nq = mj->nq, nu = mj->nu, ns = mj->nsensordata, nstep = 1000;
  mjData* md[NW];
  for (int w = 0; w < NW; w++) md[w] = mj_makeData(mj);
  double ctrl[NW * 8], qpos[NW * 8], sens[NW * 16], wq = 0, ws = 0, span = 0, sspan = 0;
  for (int k = 0; k < nstep; k++) {
    for (int i = 0; i < NW * nu; i++) ctrl[i] = check_uniform(-1.5, 1.5);
    CHECK_OK(sap_set(s, SAP_FIELD_CTRL, NULL, NW, ctrl));
    CHECK_OK(sap_step(s, 1));
    CHECK_OK(sap_get(s, SAP_FIELD_QPOS, NULL, NW, qpos));
    CHECK_OK(sap_get(s, SAP_FIELD_SENSORDATA, NULL, NW, sens));
    for (int w = 0; w < NW; w++) {
      memcpy(md[w]->ctrl, ctrl + w * nu, sizeof(double) * nu);
      mj_step(mj, md[w]);
      // sapsim's actuatorfrc is the force the step applied (MuJoCo's after mj_step); its
      // actuatorpos/vel are read at the state the step reached (MuJoCo's after mj_forward)
      double pre[16];
      memcpy(pre, md[w]->sensordata, sizeof(double) * ns);
      mj_forward(mj, md[w]);
      for (int i = 0; i < mj->nsensor; i++)
        if (mj->sensor_type[i] == mjSENS_ACTUATORFRC) md[w]->sensordata[mj->sensor_adr[i]] = pre[mj->sensor_adr[i]];
      for (int i = 0; i < nq; i++) {
        wq = fmax(wq, fabs(qpos[w * nq + i] - md[w]->qpos[i]));
        span = fmax(span, fabs(md[w]->qpos[i]));
      }
      for (int i = 0; i < ns; i++) {
        double e = fabs(sens[w * ns + i] - md[w]->sensordata[i]) / (1 + fabs(md[w]->sensordata[i]));
        ws = fmax(ws, e);
        sspan = fmax(sspan, fabs(md[w]->sensordata[i]));
      }
    }
  }
  printf("  lockstep %d steps x %d worlds: max |qpos - MuJoCo| %.3g (|qpos| up to %.3g), sensors %.3g "
         "relative (up to %.3g)\n", nstep, NW, wq, span, ws, sspan);
  CHECK(wq <= 1e-9 && span > 0.5, "qpos differs from MuJoCo by %g", wq);
  CHECK(ws <= 1e-9, "sensors differ from MuJoCo by %g", ws);
  for (int w = 0; w < NW; w++) mj_deleteData(md[w]);
  mj_deleteModel(mj);
  sap_free(s);
}

#define ARM "<worldbody><site name='r'/><body><joint axis='0 0 1'/><geom size='.1'/><site name='s'/></body></worldbody>"

static void test_refusals(void) {
  fx_refused("<mujoco>" ARM "<actuator><position name='cp' site='s' refsite='r' kp='10'/></actuator></mujoco>",
             SAP_ERR_UNSUPPORTED, "actuator 'cp' is a position or velocity servo (or a muscle) on a site transmission with a refsite");
  fx_refused("<mujoco>" ARM "<actuator><velocity name='cv' site='s' refsite='r' kv='2'/></actuator></mujoco>",
             SAP_ERR_UNSUPPORTED, "actuator 'cv' is a position or velocity servo (or a muscle) on a site transmission with a refsite");
}

int main(void) {
  RUN(test_random_states);
  RUN(test_lockstep);
  RUN(test_refusals);
  return check_summary("test_refsite");
}
