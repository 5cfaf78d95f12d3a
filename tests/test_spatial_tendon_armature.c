/* Spatial tendons with armature (MuJoCo 4: M += a J'J on M's pattern, mj_tendonArmature, and
 * the bias a J (dJ/dt qvel), mj_tendonBias / mj_tendonDot; kernels/tendon.h sapt_spatialDot,
 * kernels/dynamics_t.h sapw_tendonArmature) on scenes/spatial_tendon_armature.xml: a branched
 * chain (hinge + slide in one body, ball, hinges, a slide), a free body, five tendons over
 * sites (a pulley, two branches, two trees, a mm-long one whose armature is its motor's only).
 * Oracles:
 *  - MuJoCo 4.0's mj_fullM and qfrc_bias at 200 random states: sapsim's A = M + h D and
 *    qfrc_bias to 1e-12 relative, its e_kinetic sensor to MuJoCo's 1/2 v' M v; the tendons'
 *    share of MuJoCo's bias (its bias less that of the model without tendon armature) is
 *    reported, to show what the tolerance resolves;
 *  - central differences of MuJoCo's ten_J along qvel, (J(q + e v) - J(q - e v)) / 2e . v,
 *    against sapsim's dJ/dt qvel (sapt_spatialDot);
 *  - MuJoCo 4.0's Euler trajectory from the keyframe for 1 s under random controls;
 *  - the refusals: armature on a tendon wrapping a geom (MuJoCo 4's compiler; sapsim's own
 *    check on a model that reaches it). */
#include <math.h>
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "fixture_mj.h"
#include "model.h"
#include "sap_solve.h"
#include "sim.h"

#define SCENE "scenes/spatial_tendon_armature.xml"

/* a random state: hinges and slides in [-1.5, 1.5], the ball and the free body's quaternions
 * uniform-ish (normalized), the free body's position near its own; qvel in [-3, 3] */
static void random_state(const mjModel* mj, double* qpos, double* qvel) {
  for (int j = 0; j < mj->njnt; j++) {
    double* q = qpos + mj->jnt_qposadr[j];
    int type = mj->jnt_type[j];
    if (type == mjJNT_HINGE || type == mjJNT_SLIDE) {
      q[0] = check_uniform(-1.5, 1.5);
      continue;
    }
    if (type == mjJNT_FREE) {
      for (int k = 0; k < 3; k++) q[k] = mj->qpos0[mj->jnt_qposadr[j] + k] + check_uniform(-0.5, 0.5);
      q += 3;
    }
    double n = 0;
    for (int k = 0; k < 4; k++) {
      q[k] = check_uniform(-1, 1);
      n += q[k] * q[k];
    }
    for (int k = 0; k < 4; k++) q[k] /= sqrt(n);
  }
  for (int i = 0; i < mj->nv; i++) qvel[i] = check_uniform(-3, 3);
}

/* MuJoCo's ten_J row t, dense */
static void ten_row(const mjModel* mj, const mjData* md, int t, double* J) {
  memset(J, 0, sizeof(double) * mj->nv);
  for (int k = 0; k < mj->ten_J_rownnz[t]; k++)
    J[mj->ten_J_colind[mj->ten_J_rowadr[t] + k]] = md->ten_J[mj->ten_J_rowadr[t] + k];
}

static void test_mass_bias(void) {
  enum { NW = 200 };
  mjModel* mj = fx_mjModel(SCENE);
  if (!mj) return;
  mjModel* mj0 = mj_copyModel(NULL, mj);  // no tendon armature: the tendons' share of the bias
  for (int t = 0; t < mj0->ntendon; t++) mj0->tendon_armature[t] = 0;
  for (int i = 0; i < mj0->nu; i++)
    if (mj0->actuator_trntype[i] == mjTRN_TENDON) mj0->actuator_armature[i] = 0;
  mjData *md = mj_makeData(mj), *md0 = mj_makeData(mj0);
  sapSim* s = fx_sim(SCENE, NW, "preset=approx64 contacts=0 device=cpu");
  if (!s) return;
  int nq = mj->nq, nv = mj->nv, nt = mj->ntendon;
  double *qpos = malloc(sizeof(double) * NW * nq), *qvel = malloc(sizeof(double) * NW * nv);
  for (int w = 0; w < NW; w++) random_state(mj, qpos + w * nq, qvel + w * nv);
  CHECK_OK(sap_set(s, SAP_FIELD_QPOS, NULL, NW, qpos));
  CHECK_OK(sap_set(s, SAP_FIELD_QVEL, NULL, NW, qvel));
  sapc_kinematics(s);
  sapData* d = (sapData*)sap_data(s);
  for (long i = 0; i < (long)NW * nv; i++) d->qfrc_bias[i] = NAN;  // poison: stale values cannot pass
  sapc_freeMotion(s);
  sapc_sensorPosVel(s, NULL, 0);
  const sapModel* m = sap_model(s);
  double *M = malloc(sizeof(double) * nv * nv), *Jp = malloc(sizeof(double) * nv), *Jm = malloc(sizeof(double) * nv);
  double* A = malloc(sizeof(double) * nv * nv);
  double worst_M = 0, worst_b = 0, worst_e = 0, worst_fd = 0, share = 0, share_min = INFINITY, dot_max = 0;
  const double eps = 1e-5;
  for (int w = 0; w < NW; w++) {
    fx_mjForwardAt(mj, md, qpos + w * nq, qvel + w * nv, NULL);
    fx_mjForwardAt(mj0, md0, qpos + w * nq, qvel + w * nv, NULL);
    mj_fullM(mj, md, M);
    /* A = M + h D, and e_kinetic = 1/2 v' M v */
    double scale = 0, vMv = 0;
    for (int i = 0; i < nv * nv; i++) scale = fmax(scale, fabs(M[i]));
    for (int i = 0; i < nv; i++)
      for (int j = 0; j < nv; j++) vMv += md->qvel[i] * M[i * nv + j] * md->qvel[j];
    for (int i = 0; i < nv; i++) M[i * nv + i] += m->timestep * mj->dof_damping[i];
    CHECK(sap_getMassMatrix(s, w, A) == SAP_OK, "%s", sap_lastError());  // dense, from the tree blocks
    for (int i = 0; i < nv * nv; i++) {
      double e = fabs(A[i] - M[i]);
      worst_M = fmax(worst_M, e / scale);
      CHECK(e <= 1e-12 * scale, "world %d A[%d][%d]: %.15g, MuJoCo 4 M + h D %.15g", w, i / nv, i % nv, A[i], M[i]);
    }
    double ke = d->sensordata[(long)w * m->nsensordata];
    worst_e = fmax(worst_e, fabs(ke - vMv / 2) / (vMv / 2));
    CHECK(fabs(ke - vMv / 2) <= 1e-12 * (vMv / 2), "world %d e_kinetic %.15g, 1/2 v'M v %.15g", w, ke, vMv / 2);
    /* qfrc_bias, and the tendons' share of it */
    double bscale = 0, tscale = 0;
    for (int i = 0; i < nv; i++) {
      bscale = fmax(bscale, fabs(md->qfrc_bias[i]));
      tscale = fmax(tscale, fabs(md->qfrc_bias[i] - md0->qfrc_bias[i]));
    }
    share = fmax(share, tscale / bscale);
    share_min = fmin(share_min, tscale / bscale);
    for (int i = 0; i < nv; i++) {
      double got = d->qfrc_bias[(long)w * nv + i], want = md->qfrc_bias[i], e = fabs(got - want);
      worst_b = fmax(worst_b, e / bscale);
      CHECK(e <= 1e-12 * bscale, "world %d qfrc_bias[%d]: %.15g, MuJoCo 4 %.15g (tendons' share %.3g)", w, i, got,
            want, md->qfrc_bias[i] - md0->qfrc_bias[i]);
    }
    /* dJ/dt v by central differences of MuJoCo's ten_J along v */
    double* qv = qvel + w * nv;
    for (int t = 0; t < nt; t++) {
      double fd = 0, jscale = 0;
      for (int r = 1; r <= 2; r++) {  // Richardson: (4 D(e) - D(2e)) / 3, error O(e^4)
        double e = r * eps, c = r == 1 ? 4.0 / 3 : -1.0 / 3;
        mj_integratePos(mj, md0->qpos, qv, e);  // md0: a scratch state from here on
        mj_kinematics(mj, md0);
        mj_comPos(mj, md0);
        mj_tendon(mj, md0);
        ten_row(mj, md0, t, Jp);
        memcpy(md0->qpos, qpos + w * nq, sizeof(double) * nq);
        mj_integratePos(mj, md0->qpos, qv, -e);
        mj_kinematics(mj, md0);
        mj_comPos(mj, md0);
        mj_tendon(mj, md0);
        ten_row(mj, md0, t, Jm);
        memcpy(md0->qpos, qpos + w * nq, sizeof(double) * nq);
        for (int i = 0; i < nv; i++) {
          fd += c * (Jp[i] - Jm[i]) / (2 * e) * qv[i];
          if (r == 1) jscale += fabs((Jp[i] + Jm[i]) / 2 * qv[i]);
        }
      }
      double got = sapt_spatialDot(m, d->xpos + (long)w * 3 * m->nbody, d->xmat + (long)w * 9 * m->nbody,
                                   d->cref + (long)w * 3 * m->nbody, d->cdof + (long)w * 6 * nv, qv, t);
      /* rounding 1e-16 |J| / eps ~ 1e-11 of |J v|; truncation (e |v| / l)^4 for a segment of
       * length l: 1e-9 relative for the mm tendon at |v| 3 */
      double tol = 1e-7 * fmax(fabs(fd), jscale);
      worst_fd = fmax(worst_fd, fabs(got - fd) / fmax(fabs(fd), jscale));
      dot_max = fmax(dot_max, fabs(fd));
      CHECK(fabs(got - fd) <= tol, "world %d tendon %d: dJ/dt v %.12g, central differences %.12g", w, t, got, fd);
    }
  }
  printf("  A vs MuJoCo 4's M + h D at %d states: worst %.2g of max|M|; e_kinetic worst %.2g relative\n", NW,
         worst_M, worst_e);
  printf("  qfrc_bias vs MuJoCo 4: worst %.2g of max|bias| (the tendons' share: %.2g to %.2g of it)\n", worst_b,
         share_min, share);
  printf("  dJ/dt v vs central differences (Richardson, e = %g): worst %.2g relative (|dJ/dt v| up to %.3g)\n", eps, worst_fd,
         dot_max);
  CHECK(share_min > 1e-6, "the tendons' bias is too small to be resolved (%g)", share_min);
  free(M);
  free(A);
  free(Jp);
  free(Jm);
  free(qpos);
  free(qvel);
  sap_free(s);
  mj_deleteData(md);
  mj_deleteData(md0);
  mj_deleteModel(mj);
  mj_deleteModel(mj0);
}

/* 1 s from the keyframe against MuJoCo's Euler, random controls held per step. sap_euler's
 * quaternion update is first order (q + h/2 q [0, w], normalized; kernels/math_t.h
 * sapu_quatEuler), MuJoCo's the exponential map: they differ by O((h w)^3) per step on the
 * ball and the free body, so sapsim restarts every step from MuJoCo's state; then the
 * velocities and the scalar joints' positions are MuJoCo's step (the quaternions' difference
 * is reported) */
static void test_trajectory(void) {
  mjModel* mj = fx_mjModel(SCENE);
  if (!mj) return;
  mjData* md = mj_makeData(mj);
  mj_resetDataKeyframe(mj, md, 0);
  sapSim* s = fx_sim(SCENE, 1, "preset=approx64 integration=sap_euler contacts=0 device=cpu");
  if (!s) return;
  int nq = mj->nq, nv = mj->nv, nu = mj->nu;
  double q[32], v[32], u[8], worst_q = 0, worst_quat = 0, worst_v = 0, vmax = 0, travel = 0;
  for (int k = 0; k < 500; k++) {
    for (int i = 0; i < nu; i++) md->ctrl[i] = u[i] = check_uniform(-1, 1);
    CHECK_OK(sap_set(s, SAP_FIELD_QPOS, NULL, 1, md->qpos));
    CHECK_OK(sap_set(s, SAP_FIELD_QVEL, NULL, 1, md->qvel));
    CHECK_OK(sap_set(s, SAP_FIELD_CTRL, NULL, 1, u));
    mj_step(mj, md);
    CHECK_OK(sap_step(s, 1));
    CHECK_OK(sap_get(s, SAP_FIELD_QPOS, NULL, 1, q));
    CHECK_OK(sap_get(s, SAP_FIELD_QVEL, NULL, 1, v));
    for (int j = 0; j < mj->njnt; j++) {
      int a = mj->jnt_qposadr[j], type = mj->jnt_type[j];
      int n0 = type == mjJNT_FREE ? 3 : type == mjJNT_BALL ? 0 : 1;
      int n = type == mjJNT_FREE ? 7 : type == mjJNT_BALL ? 4 : 1;
      for (int i = a; i < a + n0; i++) worst_q = fmax(worst_q, fabs(q[i] - md->qpos[i]));
      for (int i = a + n0; i < a + n; i++) worst_quat = fmax(worst_quat, fabs(q[i] - md->qpos[i]));
    }
    for (int i = 0; i < nq; i++) travel = fmax(travel, fabs(md->qpos[i] - mj->key_qpos[i]));
    for (int i = 0; i < nv; i++) {
      worst_v = fmax(worst_v, fabs(v[i] - md->qvel[i]));
      vmax = fmax(vmax, fabs(md->qvel[i]));
    }
  }
  printf("  1 s, restarted from MuJoCo's state every step: max |v - v_MuJoCo| = %.3g (max |v| %.3g), scalar "
         "joints and positions %.3g; quaternions (first-order update) %.3g; largest travel %.3g\n",
         worst_v, vmax, worst_q, worst_quat, travel);
  CHECK(travel > 0.2, "the scene barely moves (%g)", travel);
  CHECK(worst_v < 1e-10 * vmax, "qvel differs from MuJoCo 4's Euler by %g", worst_v);
  CHECK(worst_q < 1e-12, "qpos differs from MuJoCo 4's Euler by %g", worst_q);
  sap_free(s);
  mj_deleteData(md);
  mj_deleteModel(mj);
}

#define WRAP_XML(arm, act)                                                                            \
  "<mujoco><worldbody><site name='a' pos='0 0 0.5'/><body pos='0 0 -1'><joint axis='0 1 0'/>"        \
  "<geom name='drum' size='.1' pos='0 0 0.5'/><site name='b' pos='0.3 0 0'/></body></worldbody>"     \
  "<tendon><spatial name='rope'" arm "><site site='a'/><geom geom='drum'/><site site='b'/></spatial>" \
  "</tendon>" act "</mujoco>"

static void test_refusals(void) {
  /* MuJoCo 4.0's compiler refuses armature on a wrapping tendon, its own or a motor's */
  fx_refused(WRAP_XML(" armature='0.1'", ""), SAP_ERR_SCENE, "geom wrapping not supported");
  fx_refused(WRAP_XML("", "<actuator><motor tendon='rope' armature='0.1'/></actuator>"), SAP_ERR_SCENE,
             "geom wrapping not supported");  // MuJoCo's engine error names no tendon: sapsim says why
  CHECK(strstr(sap_lastError(), "refuses armature (a tendon's own or its actuators') on a spatial tendon that wraps"),
        "message '%s'", sap_lastError());
  /* sapsim's own check, on a model that reaches it with the armature set after compiling */
  char err[1000];
  mjSpec* spec = mj_parseXMLString(WRAP_XML("", ""), NULL, err, sizeof(err));
  CHECK(spec != NULL, "%s", err);
  if (!spec) return;
  mjModel* mj = mj_compile(spec, NULL);
  mj_deleteSpec(spec);
  CHECK(mj != NULL, "compile");
  if (!mj) return;
  mj->tendon_armature[0] = 0.1;
  sapModel* m = NULL;
  CHECK(sapm_convert(mj, "wrap", &m) == SAP_ERR_UNSUPPORTED, "status (%s)", sap_lastError());
  CHECK(strstr(sap_lastError(), "spatial tendon 'rope' wraps geom 'drum' and has armature") != NULL, "message '%s'",
        sap_lastError());
  sap_freeModel(m);
  mj_deleteModel(mj);
}

int main(void) {
  RUN(test_mass_bias);
  RUN(test_trajectory);
  RUN(test_refusals);
  return check_summary("test_spatial_tendon_armature");
}
