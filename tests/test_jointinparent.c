/* jointinparent transmissions (MuJoCo's mjTRN_JOINTINPARENT; kernels/actuator.h sapa_jointMoment,
 * used by sapw_actuatorLength, sapw_actuation and the drive rows) on scenes/jointinparent.xml:
 *  - MuJoCo 4's actuator_length, actuator_velocity, the dense actuator_moment and qfrc_actuator
 *    at 200 random states (quaternions of every angle, norms 0.5 to 2; contacts off: every
 *    actuator explicit, as MuJoCo's), the moment also as a SAP drive row;
 *  - an Euler lockstep under random controls (motors and explicit servos): each step from
 *    sapsim's state, MuJoCo's mj_step reaches sapsim's qvel, hinge and slide positions and
 *    actuator sensors (sapsim's quaternions take a first-order step, MuJoCo's the exponential map,
 *    so quaternions are compared at the step's own order, h^2 |w|^2);
 *  - the parent frame, analytic: at a ball joint turned 90 degrees the moment is R' gear.
 * The servos as implicit SAP drive rows (contacts on) along MuJoCo's moment: tests/test_drive_qfrc.c. */
#include <math.h>
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <string.h>

#include "fixture.h"
#include "fixture_mj.h"
#include "kernels.h"
#include "sim.h"

#define SCENE "scenes/jointinparent.xml"
#define NW 4
#define MAXQ 24
#define MAXV 20
#define MAXU 10

static void test_random_states(void) {
  mjModel* mj = fx_mjModel(SCENE);
  sapSim* s = fx_sim(SCENE, NW, "preset=approx64 contacts=0 device=cpu");
  if (!mj || !s) return;
  mjData* md = mj_makeData(mj);
  int nq = mj->nq, nv = mj->nv, nu = mj->nu, ninparent = 0;
  double qpos[NW * MAXQ], qvel[NW * MAXV], ctrl[NW * MAXU], qfrc[NW * MAXV], dense[MAXU * MAXV];
  double wl = 0, wm = 0, wf = 0, span = 0, mspan = 0;
  for (int u = 0; u < nu; u++) ninparent += s->m->actuator_inparent[u];
  CHECK(ninparent == 5, "5 jointinparent actuators on ball and free joints, got %d", ninparent);
  for (int r = 0; r < 50; r++) {
    for (int w = 0; w < NW; w++) {
      fx_randomQpos(mj, qpos + w * nq);
      for (int i = 0; i < nv; i++) qvel[w * nv + i] = check_uniform(-3, 3);
      for (int i = 0; i < nu; i++) ctrl[w * nu + i] = check_uniform(-2, 2);
    }
    CHECK_OK(sap_set(s, SAP_FIELD_QPOS, NULL, NW, qpos));
    CHECK_OK(sap_set(s, SAP_FIELD_QVEL, NULL, NW, qvel));
    CHECK_OK(sap_set(s, SAP_FIELD_CTRL, NULL, NW, ctrl));
    sapData* d = (sapData*)sap_data(s);
    for (long i = 0; i < (long)NW * nv; i++) d->qfrc_actuator[i] = NAN;
    sapc_kinematics(s);
    sapc_freeMotion(s);
    memcpy(qfrc, d->qfrc_actuator, sizeof(double) * NW * nv);
    CHECK_OK(sap_get(s, SAP_FIELD_QPOS, NULL, NW, qpos));
    for (int w = 0; w < NW; w++) {
      fx_mjForwardAt(mj, md, qpos + w * nq, qvel + w * nv, ctrl + w * nu);
      mju_sparse2dense(dense, md->actuator_moment, nu, nv, md->moment_rownnz, md->moment_rowadr, md->moment_colind);
      for (int u = 0; u < nu; u++) {
        double len = NAN, vel = NAN, mom[MAXV] = {0};
        sapw_actuatorLength_f64(s->m, qpos + w * nq, qvel + w * nv, (const sapTenFrames_f64*)0, u, &len, &vel);
        CHECK_CLOSE(len, md->actuator_length[u], 1e-12, 1e-12, "round %d world %d actuator %d length", r, w, u);
        CHECK_CLOSE(vel, md->actuator_velocity[u], 1e-12, 1e-12, "round %d world %d actuator %d velocity", r, w, u);
        wl = fmax(wl, fmax(fabs(len - md->actuator_length[u]), fabs(vel - md->actuator_velocity[u])));
        span = fmax(span, fabs(md->actuator_length[u]));
        /* the moment: sapa_jointMoment on ball and free joints, gear on hinges and slides */
        int j = s->m->actuator_trnid[u], nd = sapa_jointDofs(s->m, j);
        if (nd > 1) sapa_jointMoment(s->m, u, qpos + w * nq, mom + s->m->jnt_dofadr[j]);
        else mom[s->m->jnt_dofadr[j]] = s->m->actuator_gear[u];
        for (int i = 0; i < nv; i++) {
          CHECK_CLOSE(mom[i], dense[u * nv + i], 1e-14, 1e-14, "round %d world %d actuator %d moment dof %d", r, w, u, i);
          wm = fmax(wm, fabs(mom[i] - dense[u * nv + i]));
          mspan = fmax(mspan, fabs(dense[u * nv + i]));
        }
      }
      for (int i = 0; i < nv; i++) {
        CHECK_CLOSE(qfrc[w * nv + i], md->qfrc_actuator[i], 1e-12, 1e-12, "round %d world %d qfrc_actuator[%d]", r, w, i);
        wf = fmax(wf, fabs(qfrc[w * nv + i] - md->qfrc_actuator[i]));
      }
    }
  }
  printf("  200 states: length/velocity %.3g (lengths up to %.3g), moment %.3g (up to %.3g), qfrc_actuator %.3g\n",
         wl, span, wm, mspan, wf);
  CHECK(span > 1, "lengths over a range (up to %g)", span);
  mj_deleteData(md);
  mj_deleteModel(mj);
  sap_free(s);
}

/* each step from sapsim's state: MuJoCo's Euler step with the same controls */
static void test_lockstep(void) {
  mjModel* mj = fx_mjModel(SCENE);
  sapSim* s = fx_sim(SCENE, NW, "preset=approx64 contacts=0 integration=sap_euler device=cpu");
  if (!mj || !s) return;
  mj->opt.integrator = mjINT_EULER;
  mjData* md = mj_makeData(mj);
  int nq = mj->nq, nv = mj->nv, nu = mj->nu, ns = mj->nsensordata, nstep = 500;
  double q0[NW * MAXQ], v0[NW * MAXV], q1[NW * MAXQ], v1[NW * MAXV], ctrl[NW * MAXU], sens[NW * 16];
  double wv = 0, wq = 0, wquat = 0, wquat_bound = 0, ws = 0, vspan = 0, sspan = 0;
  for (int w = 0; w < NW; w++) {
    fx_randomQpos(mj, q0 + w * nq);
    for (int i = 0; i < nv; i++) v0[w * nv + i] = check_uniform(-1, 1);
  }
  CHECK_OK(sap_set(s, SAP_FIELD_QPOS, NULL, NW, q0));
  CHECK_OK(sap_set(s, SAP_FIELD_QVEL, NULL, NW, v0));
  for (int k = 0; k < nstep; k++) {
    CHECK_OK(sap_get(s, SAP_FIELD_QPOS, NULL, NW, q0));
    CHECK_OK(sap_get(s, SAP_FIELD_QVEL, NULL, NW, v0));
    for (int i = 0; i < NW * nu; i++) ctrl[i] = check_uniform(-1.5, 1.5);
    CHECK_OK(sap_set(s, SAP_FIELD_CTRL, NULL, NW, ctrl));
    CHECK_OK(sap_step(s, 1));
    CHECK_OK(sap_get(s, SAP_FIELD_QPOS, NULL, NW, q1));
    CHECK_OK(sap_get(s, SAP_FIELD_QVEL, NULL, NW, v1));
    CHECK_OK(sap_get(s, SAP_FIELD_SENSORDATA, NULL, NW, sens));
    for (int w = 0; w < NW; w++) {
      fx_mjStepAt(mj, md, q0 + w * nq, v0 + w * nv, ctrl + w * nu);
      double frc[16];  // actuatorfrc: the step's force (after mj_step); pos/vel at the new state
      memcpy(frc, md->sensordata, sizeof(double) * ns);
      for (int i = 0; i < nv; i++) {
        CHECK_CLOSE(v1[w * nv + i], md->qvel[i], 1e-12, 1e-12, "step %d world %d qvel[%d]", k, w, i);
        wv = fmax(wv, fabs(v1[w * nv + i] - md->qvel[i]));
        vspan = fmax(vspan, fabs(md->qvel[i]));
      }
      for (int j = 0; j < mj->njnt; j++) {
        int a = mj->jnt_qposadr[j], t = mj->jnt_type[j];
        if (t == mjJNT_HINGE || t == mjJNT_SLIDE) {
          CHECK_CLOSE(q1[w * nq + a], md->qpos[a], 1e-13, 1e-13, "step %d world %d qpos[%d]", k, w, a);
          wq = fmax(wq, fabs(q1[w * nq + a] - md->qpos[a]));
          continue;
        }
        if (t == mjJNT_FREE) {
          for (int i = 0; i < 3; i++) wq = fmax(wq, fabs(q1[w * nq + a + i] - md->qpos[a + i]));
          a += 3;
        }
        /* first order against the exponential map: within (h |w|)^2 of the unit quaternion */
        const double* om = md->qvel + mj->jnt_dofadr[j] + (t == mjJNT_FREE ? 3 : 0);
        double hw = mj->opt.timestep * sqrt(om[0] * om[0] + om[1] * om[1] + om[2] * om[2]), e = 0, n = 0;
        for (int i = 0; i < 4; i++) n += q1[w * nq + a + i] * q1[w * nq + a + i];
        for (int i = 0; i < 4; i++) e = fmax(e, fabs(q1[w * nq + a + i] / sqrt(n) - md->qpos[a + i]));
        CHECK(e <= hw * hw + 1e-14, "step %d world %d joint %d quaternion off by %g (h|w| %g)", k, w, j, e, hw);
        wquat = fmax(wquat, e);
        wquat_bound = fmax(wquat_bound, hw * hw);
      }
      mj_forward(mj, md);
      for (int i = 0; i < mj->nsensor; i++) {
        int a = mj->sensor_adr[i];
        double want = mj->sensor_type[i] == mjSENS_ACTUATORFRC ? frc[a] : md->sensordata[a];
        /* actuatorpos/vel at the new state: the quaternion's first-order step enters them */
        double tol = mj->sensor_type[i] == mjSENS_ACTUATORFRC ? 1e-12 : 1e-3;
        CHECK_CLOSE(sens[w * ns + a], want, tol, tol, "step %d world %d sensor %d", k, w, i);
        if (mj->sensor_type[i] == mjSENS_ACTUATORFRC) ws = fmax(ws, fabs(sens[w * ns + a] - want));
        sspan = fmax(sspan, fabs(want));
      }
    }
  }
  printf("  lockstep %d steps x %d worlds: qvel %.3g (|qvel| up to %.3g), hinge/slide/free position %.3g, "
         "quaternions %.3g (bound (h|w|)^2 up to %.3g), actuatorfrc %.3g (sensors up to %.3g)\n",
         nstep, NW, wv, vspan, wq, wquat, wquat_bound, ws, sspan);
  CHECK(vspan > 1, "the lockstep moved (|qvel| up to %g)", vspan);
  mj_deleteData(md);
  mj_deleteModel(mj);
  sap_free(s);
}

/* at a ball joint turned 90 degrees about z, the jointinparent moment of gear x is -y in the child
 * frame (R' x = (0, -1, 0)), the joint transmission's stays x (analytic) */
static void test_parent_frame(void) {
  const char* xml = "<mujoco><worldbody><body pos='0 0 1'><joint name='b' type='ball'/><geom size='.1' mass='1'/>"
                    "</body></worldbody><actuator><position name='p' jointinparent='b' gear='1 0 0' kp='3'/>"
                    "<position name='q' joint='b' gear='1 0 0' kp='3'/></actuator></mujoco>";
  sapSim* s = fx_sim(xml, 1, "preset=approx64 device=cpu");
  if (!s) return;
  double c = sqrt(0.5), qpos[4] = {c, 0, 0, c}, mp[3], mq[3];
  CHECK_OK(sap_set(s, SAP_FIELD_QPOS, NULL, 1, qpos));
  sapa_jointMoment(s->m, 0, qpos, mp);
  sapa_jointMoment(s->m, 1, qpos, mq);
  CHECK(fabs(mp[0]) < 1e-15 && fabs(mp[1] + 1) < 1e-15 && fabs(mp[2]) < 1e-15, "jointinparent moment %g %g %g", mp[0],
        mp[1], mp[2]);
  CHECK(mq[0] == 1 && mq[1] == 0 && mq[2] == 0, "joint moment %g %g %g", mq[0], mq[1], mq[2]);
  sap_free(s);
}

/* what stays refused on jointinparent transmissions, as on joint ones: armature or damping of an
 * actuator on a ball or free joint */
static void test_refusals(void) {
  fx_refused("<mujoco><worldbody><body><joint name='b' type='ball'/><geom size='.1'/></body></worldbody>"
             "<actuator><motor name='m' jointinparent='b' gear='1 0 0' damping='0.1'/></actuator></mujoco>",
             SAP_ERR_UNSUPPORTED, "actuator 'm' on a ball or free joint has armature or damping");
}

int main(void) {
  mju_user_warning = NULL;
  RUN(test_random_states);
  RUN(test_lockstep);
  RUN(test_parent_frame);
  RUN(test_refusals);
  return check_summary("test_jointinparent");
}
