/* qfrc_actuator of SAP drives on every transmission (option body_outputs, kernels/body_out.h
 * sapw_bodyForces: a drive's impulse / h along its row, the transmission's moment): Cartesian
 * refsite servos (scenes/refsite_servo.xml), slider-crank servos beside motors and an explicit
 * law (scenes/slider_crank.xml), a servo on a spatial tendon with side sites beside tendon
 * motors (scenes/tendon_sidesite.xml), joint and ball-joint servos (scenes/ball_actuator.xml),
 * jointinparent servos on ball joints and a hinge (scenes/jointinparent.xml).
 * Each step of an Euler run (contacts on, so that servos are implicit SAP drives) is checked
 * from its start state against two oracles:
 *  - MuJoCo 4's dynamics: the same model with every actuator zeroed, qfrc_applied = sapsim's
 *    qfrc_actuator, one mj_step (Euler) from the step's start state reaches sapsim's qvel
 *    (the drive forces are what moved the system, since the solve's only rows are drives);
 *  - the sum over actuators of MuJoCo's actuator_moment (mj_forward at the start state) times
 *    each actuator's force (a drive's: its impulse / h; the others: MuJoCo's actuator_force). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <mujoco/mujoco.h>

#include "fixture.h"
#include "fixture_mj.h"
#include "kernels.h"
#include "sensor.h"
#include "sim.h"

#define NW 4
#define MAXV 16
#define MAXU 16

/* a random state near qpos0 (hinges and slides; ball quaternions normalised) */
static void random_start(const mjModel* mj, double* q, double* v, double qs, double vs) {
  for (int i = 0; i < mj->nq; i++) q[i] = mj->qpos0[i] + check_uniform(-qs, qs);
  for (int j = 0; j < mj->njnt; j++) {
    int a = mj->jnt_qposadr[j], t = mj->jnt_type[j];
    if (t == mjJNT_FREE) a += 3;
    if (t == mjJNT_FREE || t == mjJNT_BALL) {
      double n = 0;
      for (int k = 0; k < 4; k++) n += q[a + k] * q[a + k];
      for (int k = 0; k < 4; k++) q[a + k] /= sqrt(n);
    }
  }
  for (int i = 0; i < mj->nv; i++) v[i] = check_uniform(-vs, vs);
}

static void drive_steps(const char* scene, int nstep, double qs) {
  mjModel* mj = fx_mjModel(scene);
  sapSim* s = fx_sim(scene, NW, "preset=approx64 integration=sap_euler body_outputs=1 optimality_rel_tol=1e-14 "
                                "cost_rel_tol=0 device=cpu");
  if (!mj || !s) return;
  mj->opt.integrator = mjINT_EULER;
  /* the oracle of the dynamics: no actuator force of its own, sapsim's as qfrc_applied */
  mjModel* mz = mj_copyModel(NULL, mj);
  for (int i = 0; i < mz->nu * mjNGAIN; i++) mz->actuator_gainprm[i] = 0;
  for (int i = 0; i < mz->nu * mjNBIAS; i++) mz->actuator_biasprm[i] = 0;
  mjData* md = mj_makeData(mj);
  mjData* mdz = mj_makeData(mz);
  int nq = mj->nq, nv = mj->nv, nu = mj->nu, ndrive = 0;
  CHECK(nv <= MAXV && nu <= MAXU, "scene too large for the test's arrays");
  for (int u = 0; u < nu; u++) ndrive += sapa_isDrive(s->m, u);
  double q0[NW * 3 * MAXV], v0[NW * MAXV], ctrl[NW * MAXU], q1[NW * 3 * MAXV], v1[NW * MAXV], qfrc[NW * MAXV];
  double dense[MAXU * MAXV];
  for (int w = 0; w < NW; w++) random_start(mj, q0 + w * nq, v0 + w * nv, qs, 1);
  CHECK_OK(sap_set(s, SAP_FIELD_QPOS, NULL, NW, q0));
  CHECK_OK(sap_set(s, SAP_FIELD_QVEL, NULL, NW, v0));
  double wdyn = 0, wsum = 0, span_f = 0, span_v = 0, span_d = 0;
  for (int k = 0; k < nstep; k++) {
    CHECK_OK(sap_get(s, SAP_FIELD_QPOS, NULL, NW, q0));
    CHECK_OK(sap_get(s, SAP_FIELD_QVEL, NULL, NW, v0));
    for (int i = 0; i < NW * nu; i++) ctrl[i] = check_uniform(-1.2, 1.2);
    CHECK_OK(sap_set(s, SAP_FIELD_CTRL, NULL, NW, ctrl));
    sapData* d = (sapData*)sap_data(s);
    for (long i = 0; i < (long)NW * nv; i++) d->qfrc_actuator[i] = NAN;
    CHECK_OK(sap_step(s, 1));
    CHECK_OK(sap_get(s, SAP_FIELD_QPOS, NULL, NW, q1));
    CHECK_OK(sap_get(s, SAP_FIELD_QVEL, NULL, NW, v1));
    CHECK_OK(sap_get(s, SAP_FIELD_QFRC_ACTUATOR, NULL, NW, qfrc));
    sapSensorSolve S;
    sapc_sensorSolveInfo(s, &S);
    for (int w = 0; w < NW; w++) {
      /* MuJoCo at the start state: moments, explicit actuator forces */
      fx_mjForwardAt(mj, md, q0 + w * nq, v0 + w * nv, ctrl + w * nu);
      mju_sparse2dense(dense, md->actuator_moment, nu, nv, md->moment_rownnz, md->moment_rowadr, md->moment_colind);
      const unsigned char* sc = d->scratch + (long)w * d->nscratch;
      int nc = d->ncon[w] < d->ncon_max ? d->ncon[w] : d->ncon_max;
      double force[MAXU];
      for (int u = 0; u < nu; u++) {
        force[u] = md->actuator_force[u];
        if (sapa_isDrive(s->m, u)) {
          int slot = sapw_sensorDriveSlot(&S, sc, u);
          CHECK(slot >= 0, "%s: actuator %d has no drive row", scene, u);
          force[u] = slot < 0 ? NAN : sapw_sensorImpulse(&S, sc, S.cd * nc + slot) / S.h;
          span_d = fmax(span_d, fabs(force[u]));
        }
      }
      /* sum over actuators of moment * force */
      for (int j = 0; j < nv; j++) {
        double want = 0, got = qfrc[w * nv + j];
        for (int u = 0; u < nu; u++) want += dense[u * nv + j] * force[u];
        CHECK_CLOSE(got, want, 3e-11, 3e-11, "%s step %d world %d: qfrc_actuator[%d] vs sum moment force", scene, k, w, j);
        wsum = fmax(wsum, fabs(got - want) / (1 + fabs(want)));
        span_f = fmax(span_f, fabs(want));
      }
      /* MuJoCo's Euler step under qfrc_applied = qfrc_actuator reaches sapsim's velocity */
      memcpy(mdz->qfrc_applied, qfrc + w * nv, sizeof(double) * nv);
      mju_zero(mdz->ctrl, nu);
      fx_mjStepAt(mz, mdz, q0 + w * nq, v0 + w * nv, NULL);
      for (int j = 0; j < nv; j++) {
        CHECK_CLOSE(v1[w * nv + j], mdz->qvel[j], 1e-10, 1e-10, "%s step %d world %d: qvel[%d]", scene, k, w, j);
        wdyn = fmax(wdyn, fabs(v1[w * nv + j] - mdz->qvel[j]) / (1 + fabs(mdz->qvel[j])));
        span_v = fmax(span_v, fabs(mdz->qvel[j]));
      }
    }
  }
  printf("  %s: %d drives, %d steps x %d worlds: qvel vs MuJoCo under qfrc_applied = qfrc_actuator %.3g relative "
         "(|qvel| up to %.3g), qfrc_actuator vs sum moment force %.3g relative (up to %.3g, drive forces up to %.3g)\n",
         scene, ndrive, nstep, NW, wdyn, span_v, wsum, span_f, span_d);
  CHECK(ndrive > 0 && span_d > 1e-3, "%s: the drives carried no force", scene);
  mj_deleteData(md);
  mj_deleteData(mdz);
  mj_deleteModel(mz);
  mj_deleteModel(mj);
  sap_free(s);
}

static void test_refsite(void) { drive_steps("scenes/refsite_servo.xml", 300, 0.3); }
static void test_slider_crank(void) { drive_steps("scenes/slider_crank.xml", 300, 0.5); }
static void test_spatial_tendon(void) { drive_steps("scenes/tendon_sidesite.xml", 200, 0.2); }
static void test_ball_joint(void) { drive_steps("scenes/ball_actuator.xml", 200, 0.5); }
static void test_jointinparent(void) { drive_steps("scenes/jointinparent.xml", 200, 0.5); }

int main(void) {
  RUN(test_refsite);
  RUN(test_slider_crank);
  RUN(test_spatial_tendon);
  RUN(test_ball_joint);
  RUN(test_jointinparent);
  return check_summary("test_drive_qfrc");
}
