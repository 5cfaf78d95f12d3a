/* Oracle tests of the foundation against libmujoco on every scene, at random
 * configurations, velocities and controls: body/com/geom poses (mj_kinematics),
 * mass matrix (mj_fullM), bias forces (qfrc_bias), passive and actuator forces (drives
 * explicit: contacts off; servo_arm.xml's <general> affine servos and biased motor included).
 * Tolerances per precision: fp64 ~1e-10 relative, fp32 ~1e-4; fp32 vs fp64 too. */
#include <mujoco/mujoco.h>

#include "check.h"
#include "kernels.h"
#include "sim.h"

static const char* scenes[] = {"scenes/pendulum.xml", "scenes/cartpole.xml", "scenes/box.xml",
                               "scenes/box_stack.xml", "scenes/ant.xml", "scenes/humanoid.xml",
                               "scenes/arm7.xml", "scenes/cube_mesh.xml", "scenes/two_link.urdf",
                               "scenes/servo_arm.xml"};
#define NSCENE ((int)(sizeof(scenes) / sizeof(scenes[0])))
#define NWORLD 6

/* random but valid state: joints within (or near) their ranges, unit quaternions */
static void random_state(const mjModel* mj, double* qpos, double* qvel, double* ctrl) {
  for (int j = 0; j < mj->njnt; j++) {
    int a = mj->jnt_qposadr[j];
    switch (mj->jnt_type[j]) {
      case mjJNT_FREE:
        for (int k = 0; k < 3; k++) qpos[a + k] = check_uniform(-1, 1);
        a += 3;
        /* fall through */
      case mjJNT_BALL: {
        double n = 0;
        for (int k = 0; k < 4; k++) { qpos[a + k] = check_uniform(-1, 1); n += qpos[a + k] * qpos[a + k]; }
        for (int k = 0; k < 4; k++) qpos[a + k] /= sqrt(n);
        break;
      }
      default:
        qpos[a] = mj->jnt_limited[j] ? check_uniform(mj->jnt_range[2 * j], mj->jnt_range[2 * j + 1])
                                     : check_uniform(-2, 2);
    }
  }
  for (int i = 0; i < mj->nv; i++) qvel[i] = check_uniform(-2, 2);
  for (int i = 0; i < mj->nu; i++) ctrl[i] = check_uniform(-1.2, 1.2);
}

/* run sapsim's kinematics + free motion for NWORLD random states and compare */
static void check_scene(const char* path, int precision) {
  char err[1000];
  mjModel* mj = mj_loadXML(path, NULL, err, sizeof(err));
  CHECK(mj != NULL, "%s: %s", path, err);
  if (!mj) return;
  mjData* md = mj_makeData(mj);
  sapModel* m = NULL;
  sapStatus st = sap_loadModel(path, &m);
  CHECK(st == SAP_OK, "%s: %s", path, sap_lastError());
  if (st != SAP_OK) return;

  sapOptions opt;
  sap_optionsDefault(&opt);
  opt.contacts = 0;
  opt.device = SAP_DEVICE_CPU;
  opt.preset = precision == SAP_FP64 ? SAP_PRESET_APPROX64 : SAP_PRESET_APPROX32;
  sapSim* s = NULL;
  CHECK(sap_create(m, &opt, NWORLD, &s) == SAP_OK, "%s: %s", path, sap_lastError());
  if (!s) return;

  int nq = mj->nq, nv = mj->nv, nu = mj->nu;
  double *qpos = malloc(sizeof(double) * NWORLD * nq), *qvel = malloc(sizeof(double) * NWORLD * nv);
  double* ctrl = malloc(sizeof(double) * (NWORLD * nu + 1));
  for (int w = 0; w < NWORLD; w++) random_state(mj, qpos + w * nq, qvel + w * nv, ctrl + w * nu);
  sap_set(s, SAP_FIELD_QPOS, NULL, NWORLD, qpos);
  sap_set(s, SAP_FIELD_QVEL, NULL, NWORLD, qvel);
  if (nu) sap_set(s, SAP_FIELD_CTRL, NULL, NWORLD, ctrl);

  /* poison outputs, then run the stages under test */
  sapData* d = (sapData*)sap_data(s);
  for (long i = 0; i < (long)NWORLD * nv * nv; i++) d->qA[i] = NAN;
  for (long i = 0; i < (long)NWORLD * nv; i++) d->qfrc_bias[i] = d->vstar[i] = NAN;
  sapc_kinematics(s);
  sapc_freeMotion(s);

  double tol = precision == SAP_FP64 ? 1e-10 : 2e-4;
  double* M = malloc(sizeof(double) * nv * nv);
  for (int w = 0; w < NWORLD; w++) {
    memcpy(md->qpos, qpos + w * nq, sizeof(double) * nq);
    memcpy(md->qvel, qvel + w * nv, sizeof(double) * nv);
    if (nu) memcpy(md->ctrl, ctrl + w * nu, sizeof(double) * nu);
    mj_forward(mj, md);
    mj_fullM(mj, md, M);
    char what[256];
    snprintf(what, sizeof(what), "%s world %d xpos", path, w);
    check_arrays(what, d->xpos + w * 3 * mj->nbody, md->xpos, 3 * mj->nbody, tol, tol);
    snprintf(what, sizeof(what), "%s world %d xmat", path, w);
    check_arrays(what, d->xmat + w * 9 * mj->nbody, md->xmat, 9 * mj->nbody, tol, tol);
    snprintf(what, sizeof(what), "%s world %d xipos", path, w);
    check_arrays(what, d->xipos + w * 3 * mj->nbody, md->xipos, 3 * mj->nbody, tol, tol);
    snprintf(what, sizeof(what), "%s world %d geom_xpos", path, w);
    check_arrays(what, d->geom_xpos + w * 3 * mj->ngeom, md->geom_xpos, 3 * mj->ngeom, tol, tol);
    snprintf(what, sizeof(what), "%s world %d geom_xmat", path, w);
    check_arrays(what, d->geom_xmat + w * 9 * mj->ngeom, md->geom_xmat, 9 * mj->ngeom, tol, tol);

    /* A - h diag(damping) = M with armature = MuJoCo's qM */
    double* A = d->qA + (size_t)w * nv * nv;
    for (int i = 0; i < nv; i++) A[i * nv + i] -= s->h * mj->dof_damping[i];
    double Mscale = 0;
    for (int i = 0; i < nv * nv; i++) Mscale = fmax(Mscale, fabs(M[i]));
    snprintf(what, sizeof(what), "%s world %d M", path, w);
    check_arrays(what, A, M, nv * nv, tol * Mscale, tol);

    double bscale = 1;
    for (int i = 0; i < nv; i++) bscale = fmax(bscale, fabs(md->qfrc_bias[i]));
    snprintf(what, sizeof(what), "%s world %d qfrc_bias", path, w);
    check_arrays(what, d->qfrc_bias + w * nv, md->qfrc_bias, nv, 10 * tol * bscale, tol);
    snprintf(what, sizeof(what), "%s world %d qfrc_passive", path, w);
    check_arrays(what, d->qfrc_passive + w * nv, md->qfrc_passive, nv, 1e-12, 1e-12);
    snprintf(what, sizeof(what), "%s world %d qfrc_actuator", path, w);
    check_arrays(what, d->qfrc_actuator + w * nv, md->qfrc_actuator, nv, 1e-12, 1e-12);
  }
  free(M);
  free(qpos);
  free(qvel);
  free(ctrl);
  sap_free(s);
  sap_freeModel(m);
  mj_deleteData(md);
  mj_deleteModel(mj);
}

static void test_oracle_fp64(void) {
  for (int i = 0; i < NSCENE; i++) check_scene(scenes[i], SAP_FP64);
}

static void test_oracle_fp32(void) {
  for (int i = 0; i < NSCENE; i++) check_scene(scenes[i], SAP_FP32);
}

/* free motion v* = v + h A^-1 (tau - c) against MuJoCo's own forward dynamics:
 * with damping folded into A implicitly, (A) (v* - v)/h = tau - c - D v must hold */
static void test_free_motion_residual(void) {
  for (int sc = 0; sc < NSCENE; sc++) {
    sapModel* m = NULL;
    if (sap_loadModel(scenes[sc], &m) != SAP_OK) { CHECK(0, "%s", sap_lastError()); continue; }
    sapOptions opt;
    sap_optionsDefault(&opt);
    opt.contacts = 0;
    opt.device = SAP_DEVICE_CPU;
    opt.preset = SAP_PRESET_APPROX64;
    sapSim* s = NULL;
    CHECK(sap_create(m, &opt, 1, &s) == SAP_OK, "%s", sap_lastError());
    if (!s) continue;
    int nv = m->nv;
    double* v = malloc(sizeof(double) * nv);
    for (int i = 0; i < nv; i++) v[i] = check_uniform(-1, 1);
    sap_set(s, SAP_FIELD_QVEL, NULL, 1, v);
    sapc_kinematics(s);
    sapc_freeMotion(s);
    const sapData* d = sap_data(s);
    for (int i = 0; i < nv; i++) {
      double r = 0;
      for (int j = 0; j < nv; j++) r += d->qA[i * nv + j] * (d->vstar[j] - v[j]) / s->h;
      double rhs = d->qfrc_passive[i] + d->qfrc_actuator[i] - d->qfrc_bias[i];
      CHECK_CLOSE(r, rhs, 1e-8, 1e-8, "%s dof %d: A (v*-v)/h vs tau - c", scenes[sc], i);
    }
    free(v);
    sap_free(s);
    sap_freeModel(m);
  }
}

int main(void) {
  mju_user_warning = NULL;
  RUN(test_oracle_fp64);
  RUN(test_oracle_fp32);
  RUN(test_free_motion_residual);
  return check_summary("test_dynamics");
}
