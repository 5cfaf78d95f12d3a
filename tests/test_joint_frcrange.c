/* A joint's actuatorfrcrange over several actuators (MuJoCo's clamp of qfrc_actuator at the
 * joint's dof after summing the actuators, mj_fwdActuation; sapsim's jnt_actfrcsum): the car
 * pattern of MuJoCo's model/car/car.xml (wheels driven through two fixed tendons), a joint
 * motor with a tendon <general> on the same joint, a joint motor with a site motor below it, and
 * a servo alone on its joint (its limit folded into the servo's force limit, as before).
 * Oracles: MuJoCo 4.0 on the same MJCF: qfrc_actuator and the jointactuatorfrc sensors at 200
 * random states with controls up to twice their ranges (mj_forward, 1e-12), the clamp met at
 * both ends of every limited joint; analytic spin-up of the clamped wheels on a fixed chassis
 * (implicit damping: w_{n+1} = (w_n + h tau / I) / (1 + h c / I) with tau the range's end);
 * a servo among several actuators on a limited joint refused by name. A tendon's actuatorfrcrange:
 * its actuators' forces scaled by range / sum when the sum leaves it ('lift': a general and a
 * motor with its own force limit, MuJoCo's order: scaled, then clamped), its one motor's force
 * limit ('turn'), a servo among several refused. */
#define _POSIX_C_SOURCE 200809L
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <string.h>

#include "fixture.h"
#include "fixture_mj.h"
#include "kernels.h"
#include "sim.h"

#define SCENE "scenes/actuator_frcrange.xml"
#define NWORLD 4


/* qfrc_actuator after the free motion (contacts off: every actuator explicit, as MuJoCo's) and
 * the actuator sensors of a step's start state at 50 x NWORLD random states, against
 * mj_forward; counts the clamped dofs at each end of their ranges in lo/hi (per joint) and, in
 * scaled[t], the states where tendon t's actuators' raw sum left its range (affine laws: MuJoCo's
 * gain x clamped ctrl + bias) */
static void compare_forces(const char* path, int* lo, int* hi, int* scaled) {
  mjModel* mj = fx_mjModel(path);
  sapSim* s = fx_sim(path, NWORLD, "preset=approx64 contacts=0 device=cpu");
  if (!mj || !s) {
    if (mj) mj_deleteModel(mj);
    sap_free(s);
    return;
  }
  const sapModel* m = sap_model(s);
  mjData* md = mj_makeData(mj);
  int nq = mj->nq, nv = mj->nv, nu = mj->nu, ns = mj->nsensordata;
  double *qpos = malloc(sizeof(double) * NWORLD * nq), *qvel = malloc(sizeof(double) * NWORLD * nv);
  double *ctrl = malloc(sizeof(double) * NWORLD * nu), *qfrc = malloc(sizeof(double) * NWORLD * nv);
  double* sens = malloc(sizeof(double) * NWORLD * (ns + 1));
  double worst = 0;
  for (int rep = 0; rep < 50; rep++) {
    for (int w = 0; w < NWORLD; w++) {
      double* q = qpos + w * nq;
      for (int i = 0; i < nq; i++) q[i] = check_uniform(-1.5, 1.5);
      for (int j = 0; j < mj->njnt; j++)
        if (mj->jnt_type[j] == mjJNT_FREE) {
          double* quat = q + mj->jnt_qposadr[j] + 3;
          double n = sqrt(quat[0] * quat[0] + quat[1] * quat[1] + quat[2] * quat[2] + quat[3] * quat[3]);
          for (int k = 0; k < 4; k++) quat[k] /= n;
        }
      for (int i = 0; i < nv; i++) qvel[w * nv + i] = check_uniform(-3, 3);
      for (int i = 0; i < nu; i++) ctrl[w * nu + i] = check_uniform(-2, 2) * (rep % 3 ? 1 : 0.2);
    }
    CHECK_OK(sap_set(s, SAP_FIELD_QPOS, NULL, NWORLD, qpos));
    CHECK_OK(sap_set(s, SAP_FIELD_QVEL, NULL, NWORLD, qvel));
    CHECK_OK(sap_set(s, SAP_FIELD_CTRL, NULL, NWORLD, ctrl));
    sapData* d = (sapData*)sap_data(s);
    sapc_kinematics(s);
    sapc_freeMotion(s);
    memcpy(qfrc, d->qfrc_actuator, sizeof(double) * NWORLD * nv);
    CHECK_OK(sap_step(s, 1));  // actuatorfrc and jointactuatorfrc of the start state
    if (ns) CHECK_OK(sap_get(s, SAP_FIELD_SENSORDATA, NULL, NWORLD, sens));
    for (int w = 0; w < NWORLD; w++) {
      fx_mjForwardAt(mj, md, qpos + w * nq, qvel + w * nv, ctrl + w * nu);
      for (int i = 0; i < nv; i++) {
        CHECK_CLOSE(qfrc[w * nv + i], md->qfrc_actuator[i], 1e-12, 1e-12, "%s rep %d world %d dof %d", path, rep, w, i);
        worst = fmax(worst, fabs(qfrc[w * nv + i] - md->qfrc_actuator[i]));
      }
      for (int t = 0; t < mj->ntendon; t++) {
        if (!m->tendon_actfrcsum[t]) continue;
        double raw = 0;
        for (int u = 0; u < nu; u++)
          if (mj->actuator_trntype[u] == mjTRN_TENDON && mj->actuator_trnid[2 * u] == t) {
            const double* cr = mj->actuator_ctrlrange + 2 * u;
            double x = fmin(fmax(md->ctrl[u], cr[0]), cr[1]);
            raw += mj->actuator_gainprm[mjNGAIN * u] * x + mj->actuator_biasprm[mjNBIAS * u];
          }
        scaled[t] += raw < mj->tendon_actfrcrange[2 * t] || raw > mj->tendon_actfrcrange[2 * t + 1];
      }
      for (int j = 0; j < mj->njnt; j++) {
        if (!m->jnt_actfrcsum[j]) continue;
        double f = md->qfrc_actuator[mj->jnt_dofadr[j]];
        lo[j] += f == mj->jnt_actfrcrange[2 * j];
        hi[j] += f == mj->jnt_actfrcrange[2 * j + 1];
      }
      for (int i = 0; i < mj->nsensor; i++) {
        int t = mj->sensor_type[i], a = mj->sensor_adr[i];
        if (t == mjSENS_JOINTACTFRC || t == mjSENS_ACTUATORFRC || t == mjSENS_TENDONACTFRC)
          CHECK_CLOSE(sens[w * ns + a], md->sensordata[a], 1e-12, 1e-12, "%s rep %d world %d sensor %d (type %d)",
                      path, rep, w, i, t);
      }
    }
  }
  if (getenv("SAPSIM_TEST_VERBOSE")) printf("  %s: worst |qfrc_actuator - MuJoCo| %.3g\n", path, worst);
  free(qpos), free(qvel), free(ctrl), free(qfrc), free(sens);
  mj_deleteData(md);
  mj_deleteModel(mj);
  sap_free(s);
}

/* the scene: the wheels' and the arm's totals clamped as sums, the wrist's servo folded */
static void test_scene_against_mujoco(void) {
  sapSim* s = fx_sim(SCENE, 1, "device=cpu");
  if (!s) return;
  const sapModel* m = sap_model(s);
  int sum[4] = {0}, fold = 0;
  for (int j = 1; j < 5; j++) sum[j - 1] = m->jnt_actfrcsum[j];
  for (int u = 0; u < m->nu; u++)
    if (m->actuator_kind[u] == SAP_ACT_POSITION) fold = m->actuator_forcelimited[u];
  CHECK(sum[0] && sum[1] && sum[2] && !sum[3] && fold, "sum clamps on left, right, arm (%d %d %d), the wrist folded "
        "(%d, servo force-limited %d)", sum[0], sum[1], sum[2], sum[3], fold);
  /* tendon 'lift' scales its two actuators; 'turn' limits its one motor (actuator 1) */
  CHECK(m->tendon_actfrcsum[2] && !m->tendon_actfrcsum[1] && m->actuator_forcelimited[1] &&
        m->actuator_forcerange[2] == -0.3 && m->actuator_forcerange[3] == 0.4,
        "tendon limits: lift scales %d, turn folded %d [%g, %g]", m->tendon_actfrcsum[2], !m->tendon_actfrcsum[1],
        m->actuator_forcerange[2], m->actuator_forcerange[3]);
  sap_free(s);
  int lo[8] = {0}, hi[8] = {0}, scaled[4] = {0};
  compare_forces(SCENE, lo, hi, scaled);
  for (int j = 1; j < 4; j++)
    CHECK(lo[j] > 5 && hi[j] > 5, "joint %d clamped at its lower end %d times, at its upper end %d times", j, lo[j],
          hi[j]);
  CHECK(scaled[2] > 20, "tendon lift's actuators scaled in %d states", scaled[2]);
}

/* a joint motor and a site motor below it: the site's wrench reaches the joint's dof, so the
 * total is clamped (before, the joint motor's own force limit took it and the site's share was
 * not clamped) */
static void test_site_motor(void) {
  char* big = fx_readFile(SCENE);
  if (!big) return;
  big = fx_subst(big, "<geom type=\"box\" size=\".03 .02 .01\" mass=\".05\" contype=\"0\" conaffinity=\"0\"/>",
                 "<geom type=\"box\" size=\".03 .02 .01\" mass=\".05\" contype=\"0\" conaffinity=\"0\"/>"
                 "<site name=\"tip\" pos=\".03 .01 0\" euler=\"10 20 30\"/>");
  /* the wrist's servo becomes a motor: a servo with a site motor below it keeps the servo's own
   * limit (the site's share unclamped; README), a motor joins the clamped sum */
  big = fx_subst(big, "<position name=\"wrist\" joint=\"wrist\" kp=\"4\"", "<motor name=\"push\" site=\"tip\" "
                 "gear=\"0.3 0.1 1 0 0.02 0\" ctrlrange=\"-2 2\"/><motor name=\"wrist\" joint=\"wrist\" gear=\"0.5\"");
  fx_cut(big, "<sensor>", "</sensor>");  // jointactuatorfrc is refused with site transmissions
  const char* path = fx_tempFile("frcrange_site.xml", big);
  free(big);
  if (!path) return;
  sapSim* s = fx_sim(path, 1, "device=cpu");
  if (!s) return;
  /* the site below the wrist reaches wrist and arm */
  CHECK(sap_model(s)->jnt_actfrcsum[3] && sap_model(s)->jnt_actfrcsum[4], "arm and wrist clamp sums");
  sap_free(s);
  int lo[8] = {0}, hi[8] = {0}, scaled[4] = {0};
  compare_forces(path, lo, hi, scaled);
  for (int j = 3; j < 5; j++) CHECK(lo[j] > 5 && hi[j] > 5, "joint %d clamped %d / %d times", j, lo[j], hi[j]);
}

/* wheels on a fixed chassis, contacts off, full forward: each wheel's total (1 N m from the
 * tendons) clamped to its range's upper end (0.5 and 0.6), spun up against its damping by
 * implicit Euler exactly; reversed, to the lower ends (-0.5 and -0.4) */
static void test_wheel_spin_up(void) {
  char* big = fx_readFile(SCENE);
  if (!big) return;
  big = fx_subst(big, "<freejoint/>", "");
  const char* path = fx_tempFile("frcrange_fixed.xml", big);
  free(big);
  if (!path) return;
  mjModel* mj = fx_mjModel(path);
  for (int dir = 0; dir < 2 && mj; dir++) {
    sapSim* s = fx_sim(path, 1, "preset=approx64 contacts=0 device=cpu integration=sap_euler");
    if (!s) break;
    double ctrl[8] = {dir ? -1 : 1, 0, 0, 0, 0, 0, 0, 0};
    CHECK_OK(sap_set(s, SAP_FIELD_CTRL, NULL, 1, ctrl));
    int n = 300;
    CHECK_OK(sap_step(s, n));
    double v[4];
    CHECK_OK(sap_get(s, SAP_FIELD_QVEL, NULL, 1, v));
    for (int k = 0; k < 2; k++) {
      int j = mj_name2id(mj, mjOBJ_JOINT, k ? "right" : "left"), dof = mj->jnt_dofadr[j];
      /* the wheel's inertia about its axis: its own dof's entry of M (MuJoCo's, independent) */
      mjData* md = mj_makeData(mj);
      mj_forward(mj, md);
      double M[64];
      mj_fullM(mj, md, M);
      double I = M[dof * mj->nv + dof], c = mj->dof_damping[dof], h = mj->opt.timestep;
      double tau = mj->jnt_actfrcrange[2 * j + (dir ? 0 : 1)], w = 0;
      for (int i = 0; i < n; i++) w = (w + h * tau / I) / (1 + h * c / I);
      CHECK_CLOSE(v[dof], w, 1e-12, 1e-10, "wheel %d (%s): spin after %d steps, clamp at %g", k, dir ? "back" : "forward",
                  n, tau);
      mj_deleteData(md);
    }
    sap_free(s);
  }
  if (mj) mj_deleteModel(mj);
}

/* a position servo and a tendon motor on a limited joint: the servo's force comes out of the SAP
 * solve, which the joint's clamp of the sum cannot reach: refused, naming joint and servo */
static void test_servo_refused(void) {
  fx_refused("<mujoco><worldbody><body><joint name='j' axis='0 1 0' actuatorfrcrange='-1 1'/>"
             "<geom size='.1' mass='1'/></body></worldbody>"
             "<tendon><fixed name='t'><joint joint='j' coef='2'/></fixed></tendon>"
             "<actuator><position name='servo' joint='j' kp='10'/><motor tendon='t'/></actuator></mujoco>",
             SAP_ERR_UNSUPPORTED, "joint 'j' limits the total actuator force at its dof (actuatorfrcrange), and the "
             "servo 'servo' acts there");
}

/* a tendon servo beside a tendon motor under the tendon's actuatorfrcrange */
static void test_tendon_refusals(void) {
  fx_refused("<mujoco><worldbody><body><joint name='j' axis='0 1 0'/><geom size='.1' mass='1'/></body></worldbody>"
             "<tendon><fixed name='t' actuatorfrcrange='-1 1'><joint joint='j' coef='2'/></fixed></tendon>"
             "<actuator><position name='servo' tendon='t' kp='10'/><motor tendon='t'/></actuator></mujoco>",
             SAP_ERR_UNSUPPORTED, "tendon 't' limits the summed force of its actuators (actuatorfrcrange), among them "
             "the servo 'servo'");
}

int main(void) {
  mju_user_warning = NULL;
  RUN(test_scene_against_mujoco);
  RUN(test_site_motor);
  RUN(test_wheel_spin_up);
  RUN(test_servo_refused);
  RUN(test_tendon_refusals);
  return check_summary("test_joint_frcrange");
}
