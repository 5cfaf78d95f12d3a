/* Fixed tendons with armature (MuJoCo 4's tendon armature, M += a J'J; kernels/dynamics_t.h
 * sapw_tendonArmature). Oracles:
 *  - MuJoCo 4.0's mass matrix (mj_fullM) at 200 random states of scenes/tendon_armature.xml
 *    (a tendon across two sibling fingers, one driven by a motor with armature, a one-joint
 *    tendon on a slide in another tree, a tendon across the two trees): sapsim's A = M + h D equals M_MuJoCo + h D to 1e-12
 *    relative, and its e_kinetic sensor MuJoCo's 1/2 v' M v;
 *  - MuJoCo 4.0's Euler trajectory of the scene from its keyframe for 1 s under random
 *    controls (sap_euler: the same semi-implicit step with implicit joint damping);
 *  - analytic: the piston oscillates at sqrt(k / (m + a c^2)) (its tendon's armature on it);
 *  - spatial tendons' armature loads (its own and an actuator's; tests/test_spatial_tendon_armature.c).
 * MuJoCo adds a J'J only on its sparse M's pattern (a dof and its ancestors): the couplings of
 * two branches or two trees are dropped there, and in sapsim (kernels/tendon.h). */
#include <math.h>
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "fixture_mj.h"
#include "sim.h"

#define SCENE "scenes/tendon_armature.xml"

static void test_mass_matrix(void) {
  enum { NW = 200 };
  mjModel* mj = fx_mjModel(SCENE);
  if (!mj) return;
  mjData* md = mj_makeData(mj);
  sapSim* s = fx_sim(SCENE, NW, "preset=approx64 contacts=0 device=cpu");
  if (!s) return;
  int nq = mj->nq, nv = mj->nv;
  double *qpos = malloc(sizeof(double) * NW * nq), *qvel = malloc(sizeof(double) * NW * nv);
  for (int w = 0; w < NW; w++) {
    for (int j = 0; j < nq; j++) qpos[w * nq + j] = check_uniform(-1.5, 1.5);
    for (int j = 0; j < nv; j++) qvel[w * nv + j] = check_uniform(-3, 3);
  }
  CHECK_OK(sap_set(s, SAP_FIELD_QPOS, NULL, NW, qpos));
  CHECK_OK(sap_set(s, SAP_FIELD_QVEL, NULL, NW, qvel));
  sapc_kinematics(s);
  sapc_freeMotion(s);
  sapc_sensorPosVel(s, NULL, 0);
  const sapData* d = sap_data(s);
  const sapModel* m = sap_model(s);
  double* M = malloc(sizeof(double) * nv * nv);
  double* A = malloc(sizeof(double) * nv * nv);
  double worst = 0, worst_e = 0, coupling = 0;
  int f1a = mj->jnt_dofadr[mj_name2id(mj, mjOBJ_JOINT, "f1a")], f2a = mj->jnt_dofadr[mj_name2id(mj, mjOBJ_JOINT, "f2a")];
  for (int w = 0; w < NW; w++) {
    fx_mjForwardAt(mj, md, qpos + w * nq, qvel + w * nv, NULL);
    mj_fullM(mj, md, M);
    double scale = 0, vMv = 0;
    for (int i = 0; i < nv * nv; i++) scale = fmax(scale, fabs(M[i]));
    for (int i = 0; i < nv; i++) {
      M[i * nv + i] += m->timestep * mj->dof_damping[i];
      for (int j = 0; j < nv; j++) vMv += md->qvel[i] * (M[i * nv + j] - (i == j) * m->timestep * mj->dof_damping[i]) *
                                          md->qvel[j];
    }
    CHECK(sap_getMassMatrix(s, w, A) == SAP_OK, "%s", sap_lastError());  // dense, from the tree blocks
    for (int i = 0; i < nv * nv; i++) {
      double e = fabs(A[i] - M[i]);
      worst = fmax(worst, e / scale);
      CHECK(e <= 1e-12 * scale, "world %d A[%d][%d]: %.15g, MuJoCo 4 M + h D %.15g", w, i / nv, i % nv, A[i], M[i]);
    }
    coupling = fmax(coupling, fabs(M[f1a * nv + f2a]));
    double ke = d->sensordata[(long)w * m->nsensordata];
    worst_e = fmax(worst_e, fabs(ke - vMv / 2) / fmax(1e-12, vMv / 2));
    CHECK(fabs(ke - vMv / 2) <= 1e-12 * fmax(1, vMv / 2), "world %d e_kinetic %.15g, 1/2 v'M v %.15g", w, ke,
          vMv / 2);
  }
  // MuJoCo's sparse M has no entry between the two fingers (different branches): the
  // tendon's a c1 c2 = -0.025 is dropped there, in both
  CHECK(coupling == 0, "the sibling fingers' entry %.17g in MuJoCo 4", coupling);
  printf("  A vs MuJoCo 4's M + h D at %d states: worst %.2g of max|M|; e_kinetic worst %.2g relative\n", NW, worst,
         worst_e);
  free(M);
  free(A);
  free(qpos);
  free(qvel);
  sap_free(s);
  mj_deleteData(md);
  mj_deleteModel(mj);
}

/* 1 s from the keyframe against MuJoCo's Euler, random controls held per step */
static void test_trajectory(void) {
  mjModel* mj = fx_mjModel(SCENE);
  if (!mj) return;
  mjData* md = mj_makeData(mj);
  mj_resetDataKeyframe(mj, md, 0);
  sapSim* s = fx_sim(SCENE, 1, "preset=approx64 integration=sap_euler contacts=0 device=cpu");
  if (!s) return;
  CHECK_OK(sap_reset(s, 0, NULL));
  int nq = mj->nq;
  double q[16], worst = 0, travel = 0;
  for (int k = 0; k < 500; k++) {
    double u = check_uniform(-1, 1);
    md->ctrl[0] = u;
    CHECK_OK(sap_set(s, SAP_FIELD_CTRL, NULL, 1, &u));
    mj_step(mj, md);
    CHECK_OK(sap_step(s, 1));
    CHECK_OK(sap_get(s, SAP_FIELD_QPOS, NULL, 1, q));
    for (int i = 0; i < nq; i++) {
      worst = fmax(worst, fabs(q[i] - md->qpos[i]));
      travel = fmax(travel, fabs(md->qpos[i] - mj->key_qpos[i]));
    }
  }
  printf("  tendon_armature, 1 s: max |q - q_MuJoCo| = %.3g (largest travel %.3g)\n", worst, travel);
  CHECK(travel > 0.2, "the scene barely moves (%g)", travel);
  CHECK(worst < 1e-9, "trajectory differs from MuJoCo 4's Euler by %g", worst);
  sap_free(s);
  mj_deleteData(md);
  mj_deleteModel(mj);
}

/* the piston: m x'' = -k x with m -> m + sum a c^2 = 1.5 + 0.3 * 4 + 0.01 * 0.25 (rod and bridge;
 * bridge's coupling to the palm is not in M): period 2 pi sqrt(2.7025 / 40),
 * measured by the midpoint rule's zero crossings (its discrete phase matches the continuous
 * one to (w h)^2 / 24 relative, 2.5e-6 at w h = 0.0077, and the interpolated crossings to about
 * as much; the bridge alone moves the period by 2.3e-4) */
static void test_piston_period(void) {
  sapSim* s = fx_sim(SCENE, 1, "preset=approx64 contacts=0 device=cpu");
  if (!s) return;
  const sapModel* m = sap_model(s);
  CHECK_OK(sap_reset(s, 0, NULL));
  int p = 5;  // the piston's qpos and dof (the hand's 5 hinges come first)
  double q[16], prev = 0, t_first = -1, t_last = -1;
  int crossings = 0;
  CHECK_OK(sap_get(s, SAP_FIELD_QPOS, NULL, 1, q));
  prev = q[p];
  for (int k = 1; k <= 3000; k++) {
    CHECK_OK(sap_step(s, 1));
    CHECK_OK(sap_get(s, SAP_FIELD_QPOS, NULL, 1, q));
    if ((prev < 0) != (q[p] < 0)) {
      double t = (k - 1 + prev / (prev - q[p])) * m->timestep;  // linear interpolation
      if (t_first < 0) t_first = t;
      t_last = t;
      crossings++;
    }
    prev = q[p];
  }
  double period = 2 * (t_last - t_first) / (crossings - 1), want = 2 * 3.14159265358979323846 * sqrt(2.7025 / 40);
  printf("  piston: period %.8f s, 2 pi sqrt((m + a c^2)/k) = %.8f s (without the armature %.8f)\n", period, want,
         2 * 3.14159265358979323846 * sqrt(1.5 / 40));
  CHECK(crossings >= 6, "piston crossings %d", crossings);
  CHECK(fabs(period - want) <= 1e-5 * want, "piston period %.8f, want %.8f", period, want);
  sap_free(s);
}

/* spatial tendons take armature since MuJoCo 4's bias is computed (tests/test_spatial_tendon_armature.c):
 * the two scenes this test once saw refused now load */
static void test_spatial_loads(void) {
  const char* xml[2] = {
      "<mujoco><worldbody><site name='a'/><body pos='0 0 -1'><joint type='slide' axis='0 0 1'/>"
      "<geom size='.1'/><site name='b'/></body></worldbody>"
      "<tendon><spatial name='rope' armature='0.1'><site site='a'/><site site='b'/></spatial></tendon></mujoco>",
      "<mujoco><worldbody><site name='a'/><body pos='0 0 -1'><joint type='slide' axis='0 0 1'/>"
      "<geom size='.1'/><site name='b'/></body></worldbody>"
      "<tendon><spatial name='rope'><site site='a'/><site site='b'/></spatial></tendon>"
      "<actuator><motor tendon='rope' armature='0.1'/></actuator></mujoco>"};
  for (int k = 0; k < 2; k++) {
    sapModel* m = NULL;
    CHECK_OK(sap_loadModelString(xml[k], &m));
    if (m) CHECK(m->tendon_armature[0] == 0.1, "armature %g", m->tendon_armature[0]);
    sap_freeModel(m);
  }
}

int main(void) {
  RUN(test_mass_matrix);
  RUN(test_trajectory);
  RUN(test_piston_period);
  RUN(test_spatial_loads);
  return check_summary("test_tendon_armature");
}
