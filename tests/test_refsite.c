/* Cartesian site transmissions (MuJoCo's mjTRN_SITE with a refsite; kernels/dynamics_t.h
 * sapw_refsite) against MuJoCo 4 on scenes/refsite.xml: actuator_length, the dense
 * actuator_moment, actuator_velocity and qfrc_actuator at 200 random states (1e-12), and an
 * Euler lockstep (sap_euler, no contacts) under random controls with the actuatorpos/vel/frc
 * sensors; scenes/refsite_servo.xml: Cartesian servos as SAP drive rows along the moment, their
 * analytic steady states under every preset and MuJoCo 4's explicit laws in the same lockstep;
 * muscles on refsites refused by name. */
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <string.h>

#include "fixture.h"
#include "fixture_mj.h"
#include "integrate.h"
#include "kernels.h"
#include "sim.h"

#define SCENE "scenes/refsite.xml"
#define SERVO "scenes/refsite_servo.xml"
#define NW 8
#define NROUND 25

/* controls up to cscale x 1.5 (beyond the servo scene's ranges, so that a rotational servo's
 * setpoint lies more than pi from its length and MuJoCo 4 takes its nearest representative) */
static void random_states(const char* scene, double cscale) {
  mjModel* mj = fx_mjModel(scene);
  sapSim* s = fx_sim(scene, NW, "preset=approx64 contacts=0 device=cpu");
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
      for (int i = 0; i < nu; i++) ctrl[w * nu + i] = cscale * check_uniform(-1.5, 1.5);
    }
    sap_set(s, SAP_FIELD_QPOS, NULL, NW, qpos);
    sap_set(s, SAP_FIELD_QVEL, NULL, NW, qvel);
    sap_set(s, SAP_FIELD_CTRL, NULL, NW, ctrl);
    sapData* d = (sapData*)sap_data(s);
    for (long i = 0; i < (long)NW * nv; i++) d->qfrc_actuator[i] = NAN;
    sapc_kinematics(s);
    sapc_freeMotion(s);
    for (int w = 0; w < NW; w++) {
      fx_mjForwardAt(mj, md, qpos + w * nq, qvel + w * nv, ctrl + w * nu);
      mju_sparse2dense(dense, md->actuator_moment, nu, nv, md->moment_rownnz, md->moment_rowadr,
                       md->moment_colind);
      sapTenFrames_f64 fr = {d->xpos + (long)w * 3 * s->m->nbody, d->xmat + (long)w * 9 * s->m->nbody,
                             d->cref + (long)w * 3 * s->m->nbody, d->cdof + (long)w * 6 * nv};
      for (int u = 0; u < nu; u++) {
        double len = NAN, vel = NAN, l2 = NAN;
        sapw_actuatorLength_f64(s->m, qpos + w * nq, qvel + w * nv, &fr, u, &len, &vel);
        for (int j = 0; j < nv; j++) mom[j] = 0;
        /* the moment as a SAP drive row (a servo's, sapw_buildDrives) equals the dense one */
        int ridx[8], ok = 1;
        double rval[8], rl = NAN, dense_row[8] = {0};
        sapRow row = {ridx, rval, 0, 8};
        ridx[0] = -1;
        sapw_refsite_f64(s->m, &fr, u, NULL, 1, mom, &l2, NULL, &row, &ok);
        sapw_refsite_f64(s->m, &fr, u, NULL, 0, NULL, &rl, NULL, (sapRow*)0, (int*)0);
        CHECK(ok && rl == l2, "row fits (%d), length %g %g", ok, rl, l2);
        for (int k = 0; k < row.n; k++) dense_row[ridx[k]] += rval[k];
        for (int j = 0; j < nv; j++) CHECK(dense_row[j] == mom[j], "round %d actuator %d: row entry %d %g, moment %g", r, u,
                                             j, dense_row[j], mom[j]);
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
  printf("  %s, %d states: max |diff| length %.3g (|l| up to %.3g), velocity %.3g, moment %.3g (up to %.3g), "
         "qfrc_actuator %.3g\n", scene, NW * NROUND, wl, span_l, wv, wm, span_m, wf);
  mj_deleteData(md);
  mj_deleteModel(mj);
  sap_free(s);
}

/* qpos and the sensors over 1000 Euler steps with fresh random controls */
/* Euler lockstep against MuJoCo 4 (contacts off: every actuator, servos too, an explicit law as
 * in MuJoCo's Euler step) */
static void lockstep(const char* scene) {
  mjModel* mj = fx_mjModel(scene);
  sapSim* s = fx_sim(scene, NW, "preset=approx64 contacts=0 integration=sap_euler");
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
      fx_mjStepAt(mj, md[w], NULL, NULL, ctrl + w * nu);
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
  printf("  %s: lockstep %d steps x %d worlds: max |qpos - MuJoCo| %.3g (|qpos| up to %.3g), sensors %.3g "
         "relative (up to %.3g)\n", scene, nstep, NW, wq, span, ws, sspan);
  CHECK(wq <= 1e-9 && span > 0.5, "qpos differs from MuJoCo by %g", wq);
  CHECK(ws <= 1e-9, "sensors differ from MuJoCo by %g", ws);
  for (int w = 0; w < NW; w++) mj_deleteData(md[w]);
  mj_deleteModel(mj);
  sap_free(s);
}

static void test_random_states(void) { random_states(SCENE, 1); }
static void test_servo_random_states(void) { random_states(SERVO, 3); }
static void test_lockstep(void) { lockstep(SCENE); }
static void test_servo_lockstep(void) { lockstep(SERVO); }

/* the servos as SAP drive rows along the moment (contacts on: implicit), every preset, at rest
 * after 8 s under fixed controls: the point's y', z' position servos carry its weight's
 * components along the tilted refsite's axes, kp (t - len) = m g . e (e_y' = (0, cos 30,
 * sin 30), e_z' = (0, -sin 30, cos 30)), the velocity servo along x' balances the slide's
 * damping, kv (t - v) = c v; the arm's two servos, unloaded in their plane, reach their
 * targets */
static void test_servo_steady(void) {
  const char* presets[3] = {"approx64", "drake", "approx32"};
  const double m = 0.7, g = 9.81, kp = 400, kv = 3, c = 0.4, s30 = 0.5, c30 = sqrt(3) / 2;
  double ctrl[5] = {0.5, 0.1, -0.05, 0.3, 0.4};
  for (int p = 0; p < 3; p++) {
    char opts[64];
    snprintf(opts, sizeof(opts), "preset=%s device=cpu", presets[p]);
    sapSim* s = fx_sim(SERVO, 1, opts);
    if (!s) continue;
    CHECK_OK(sap_set(s, SAP_FIELD_CTRL, NULL, 1, ctrl));
    CHECK_OK(sap_step(s, 4000));
    double sd[8];
    CHECK_OK(sap_get(s, SAP_FIELD_SENSORDATA, NULL, 1, sd));
    sapWorldInfo info;
    sap_worldInfo(s, NULL, 1, &info);
    CHECK(info.flags == SAP_WORLD_CONVERGED, "%s: flags 0x%x", presets[p], info.flags);
    double tol = p == 2 ? 1e-4 : 1e-7;  /* approx32: fp32 kinematics and solve */
    double fy = m * g * s30, fz = m * g * c30, v = kv * ctrl[0] / (kv + c);
    CHECK_CLOSE(sd[0], ctrl[1] - fy / kp, tol, 0, "%s: y' servo position", presets[p]);
    CHECK_CLOSE(sd[1], ctrl[2] - fz / kp, tol, 0, "%s: z' servo position", presets[p]);
    CHECK_CLOSE(sd[2], v, tol, 0, "%s: x' velocity", presets[p]);
    CHECK_CLOSE(sd[3], fy, 10 * tol, 1e-5, "%s: y' servo force", presets[p]);
    CHECK_CLOSE(sd[4], fz, 10 * tol, 1e-5, "%s: z' servo force", presets[p]);
    CHECK_CLOSE(sd[5], c * v, 10 * tol, 1e-5, "%s: x' servo force", presets[p]);
    CHECK_CLOSE(sd[6], ctrl[3], tol, 0, "%s: the arm's reach", presets[p]);
    CHECK_CLOSE(sd[7], ctrl[4], tol, 0, "%s: the arm's turn", presets[p]);
    if (getenv("SAPSIM_TEST_VERBOSE"))
      printf("  %s: y' %.3g z' %.3g v %.3g off; forces %.3g %.3g %.3g off; reach %.3g turn %.3g off\n", presets[p],
             sd[0] - (ctrl[1] - fy / kp), sd[1] - (ctrl[2] - fz / kp), sd[2] - v, sd[3] - fy, sd[4] - fz, sd[5] - c * v,
             sd[6] - ctrl[3], sd[7] - ctrl[4]);
    sap_free(s);
  }
}

#define ARM "<worldbody><site name='r'/><body><joint axis='0 0 1'/><geom size='.1'/><site name='s'/></body></worldbody>"

static void test_refusals(void) {
  fx_refused("<mujoco>" ARM "<actuator><general name='cm' site='s' refsite='r' dyntype='muscle' gaintype='muscle' "
             "biastype='muscle' gainprm='0.75 1.05 -1 200 0.5 1.6 1.5 1.3 1.2' biasprm='0.75 1.05 -1 200 0.5 1.6 1.5 "
             "1.3 1.2' lengthrange='0.1 1'/></actuator></mujoco>",
             SAP_ERR_UNSUPPORTED, "actuator 'cm' is a muscle on a site transmission with a refsite");
}

int main(void) {
  RUN(test_random_states);
  RUN(test_lockstep);
  RUN(test_servo_random_states);
  RUN(test_servo_lockstep);
  RUN(test_servo_steady);
  RUN(test_refusals);
  return check_summary("test_refsite");
}
