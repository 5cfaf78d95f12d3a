/* Oracle tests of the foundation against libmujoco on every scene, at random
 * configurations, velocities and controls: body/com/geom poses (mj_kinematics),
 * mass matrix (mj_fullM), bias forces (qfrc_bias), passive and actuator forces (drives
 * explicit: contacts off; servo_arm.xml's <general> affine servos and biased motor included).
 * Tolerances per precision: fp64 ~1e-10 relative, fp32 ~1e-4; fp32 vs fp64 too. */
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "fixture_mj.h"
#include "integrate.h"
#include "kernels.h"
#include "sim.h"

static const char* scenes[] = {"scenes/pendulum.xml", "scenes/cartpole.xml", "scenes/box.xml",
                               "scenes/box_stack.xml", "scenes/ant.xml", "scenes/humanoid.xml",
                               "scenes/arm7.xml", "scenes/cube_mesh.xml", "scenes/two_link.urdf",
                               "scenes/servo_arm.xml", "scenes/fluid.xml", "scenes/fluid_ellipsoid.xml",
                               "scenes/quadrotor.xml", "scenes/tendon_spring.xml"};
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
  mjModel* mj = fx_mjModel(path);
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
  /* qA: the dof trees' diagonal blocks, all the stage writes (sapModel.dof_Aadr; the dense
   * expansion's zeros between trees are checked below against MuJoCo's M) */
  for (long i = 0; i < (long)NWORLD * s->m->nA; i++) d->qA[i] = NAN;
  for (long i = 0; i < (long)NWORLD * nv; i++) d->qfrc_bias[i] = d->vstar[i] = NAN;
  sapc_kinematics(s);
  sapc_freeMotion(s);

  double tol = precision == SAP_FP64 ? 1e-10 : 2e-4;
  double* M = malloc(sizeof(double) * nv * nv);
  double* A = malloc(sizeof(double) * nv * nv);
  for (int w = 0; w < NWORLD; w++) {
    fx_mjForwardAt(mj, md, qpos + w * nq, qvel + w * nv, ctrl + w * nu);
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

    /* A - h diag(damping) = M with armature = MuJoCo's qM (A expanded by sap_getMassMatrix) */
    CHECK(sap_getMassMatrix(s, w, A) == SAP_OK, "%s", sap_lastError());
    for (int i = 0; i < nv; i++) A[i * nv + i] -= s->h * mj->dof_damping[i];
    double Mscale = 0;
    for (int i = 0; i < nv * nv; i++) Mscale = fmax(Mscale, fabs(M[i]));
    snprintf(what, sizeof(what), "%s world %d M", path, w);
    check_arrays(what, A, M, nv * nv, tol * Mscale, tol);

    double bscale = 1;
    for (int i = 0; i < nv; i++) bscale = fmax(bscale, fabs(md->qfrc_bias[i]));
    snprintf(what, sizeof(what), "%s world %d qfrc_bias", path, w);
    check_arrays(what, d->qfrc_bias + w * nv, md->qfrc_bias, nv, 10 * tol * bscale, tol);
    /* joint springs and dampers read qpos and qvel only (fp64 in every preset); fluid
     * forces read the body frames and motion subspaces, fp32 under approx32 */
    double ptol = precision == SAP_FP32 && (m->fluid_density > 0 || m->fluid_viscosity > 0) ? tol : 1e-12;
    double pscale = 1;
    for (int i = 0; i < nv; i++) pscale = fmax(pscale, fabs(md->qfrc_passive[i]));
    snprintf(what, sizeof(what), "%s world %d qfrc_passive", path, w);
    check_arrays(what, d->qfrc_passive + w * nv, md->qfrc_passive, nv, ptol * pscale, ptol);
    /* site transmissions read the body frames too (fp32 under approx32) */
    int site = 0;
    for (int u = 0; u < nu; u++) site |= m->actuator_trntype[u] == SAP_TRN_SITE;
    double atol = precision == SAP_FP32 && site ? tol : 1e-12, ascale = 1;
    for (int i = 0; i < nv; i++) ascale = fmax(ascale, fabs(md->qfrc_actuator[i]));
    snprintf(what, sizeof(what), "%s world %d qfrc_actuator", path, w);
    check_arrays(what, d->qfrc_actuator + w * nv, md->qfrc_actuator, nv, atol * ascale, atol);
  }
  free(M);
  free(A);
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
/* A (v* - v)/h = tau - c. sap_euler: tau = the passive, actuator and bias forces at (q, v);
 * midpoint: the springs and gravity act at q + h/2 v (sapw_springShift, gravity_shift.h), the
 * oracle MuJoCo 4's qfrc_spring, gravity and gravity compensation at mj_integratePos(q, v, h/2) */
static void test_free_motion_residual(void) {
  for (int mid = 0; mid < 2; mid++)
    for (int sc = 0; sc < NSCENE; sc++) {
      mjModel* mj = fx_mjModel(scenes[sc]);
      if (!mj) continue;
      mjData* md = mj_makeData(mj);
      sapSim* s = fx_sim(scenes[sc], 1, mid ? "contacts=0 device=cpu preset=approx64 integration=midpoint"
                                            : "contacts=0 device=cpu preset=approx64 integration=sap_euler");
      if (!s) { mj_deleteData(md); mj_deleteModel(mj); continue; }
      int nv = mj->nv;
      double* v = malloc(sizeof(double) * nv);
      double* shift = calloc(nv, sizeof(double));
      for (int i = 0; i < nv; i++) v[i] = check_uniform(-1, 1);
      sap_set(s, SAP_FIELD_QVEL, NULL, 1, v);
      sapc_kinematics(s);
      sapc_freeMotion(s);
      const sapData* d = sap_data(s);
      if (mid) {  /* MuJoCo's spring and compensated gravity forces at q + h/2 v minus at q: qfrc_spring -
                   * qfrc_bias + qfrc_gravcomp at zero velocity (bias = gravity alone) */
        for (int half = 0; half < 2; half++) {
          if (half) mj_integratePos(mj, md->qpos, v, 0.5 * s->h);
          mju_zero(md->qvel, nv);
          mj_forward(mj, md);
          for (int i = 0; i < nv; i++)
            shift[i] += (half ? 1 : -1) * (md->qfrc_spring[i] - md->qfrc_bias[i] + md->qfrc_gravcomp[i]);
        }
      }
      double* A = malloc(sizeof(double) * nv * nv);
      CHECK(sap_getMassMatrix(s, 0, A) == SAP_OK, "%s", sap_lastError());
      for (int i = 0; i < nv; i++) {
        double r = 0;
        for (int j = 0; j < nv; j++) r += A[i * nv + j] * (d->vstar[j] - v[j]) / s->h;
        double rhs = d->qfrc_passive[i] + d->qfrc_actuator[i] - d->qfrc_bias[i] + shift[i];
        CHECK_CLOSE(r, rhs, 1e-8, 1e-8, "%s dof %d (%s): A (v*-v)/h vs tau - c", scenes[sc], i,
                    mid ? "midpoint" : "sap_euler");
      }
      free(A);
      free(v);
      free(shift);
      sap_free(s);
      mj_deleteData(md);
      mj_deleteModel(mj);
    }
}

/* ---- MuJoCo 4 model features: gravcomp, actuator armature/damping, joint
 * actuatorfrcrange, disable flags ------------------------------------------------ */

/* a three-link arm with a free-floating box: gravity compensation on two bodies
 * (j3's routed through the actuators), actuators with armature, damping and gear,
 * joint actuatorfrcrange on a motor and on a position servo */
static const char* FEATURE_XML =
    "<mujoco><option timestep=\"0.004\" gravity=\"0.3 -0.2 -9.81\">%s</option>"
    "<worldbody>"
    "<body name=\"l1\" pos=\"0 0 1\"><joint name=\"j1\" type=\"hinge\" axis=\"0 1 0\" damping=\"0.3\""
    "  actuatorfrcrange=\"-0.8 1.5\"/>"
    "  <geom type=\"capsule\" size=\"0.05\" fromto=\"0 0 0 0.4 0 0\" contype=\"0\" conaffinity=\"0\"/>"
    "  <body name=\"l2\" pos=\"0.4 0 0\" gravcomp=\"0.5\"><joint name=\"j2\" type=\"hinge\" axis=\"0.3 1 0.2\""
    "    actuatorfrcrange=\"-2 2\"/>"
    "    <geom type=\"box\" size=\"0.2 0.04 0.03\" pos=\"0.2 0 0\" contype=\"0\" conaffinity=\"0\"/>"
    "    <body name=\"l3\" pos=\"0.4 0 0\" gravcomp=\"1\"><joint name=\"j3\" type=\"slide\" axis=\"1 0 0.5\""
    "      actuatorgravcomp=\"true\"/>"
    "      <geom type=\"sphere\" size=\"0.07\" contype=\"0\" conaffinity=\"0\"/></body></body></body>"
    "<body name=\"float\" pos=\"1 1 1\" gravcomp=\"2.5\"><freejoint/><geom type=\"box\" size=\"0.1 0.2 0.3\""
    "  contype=\"0\" conaffinity=\"0\"/></body>"
    "</worldbody><actuator>"
    "<motor joint=\"j1\" gear=\"3\" armature=\"0.2\" damping=\"0.7\" ctrlrange=\"-1 1\"/>"
    "<position joint=\"j2\" kp=\"20\" kv=\"2\" gear=\"-1.5\" armature=\"0.05\"/>"
    "<velocity joint=\"j3\" kv=\"4\" forcerange=\"-3 3\"/>"
    "</actuator></mujoco>";

/* the feature scene with these option flags, written to a temporary file: its path, or NULL */
static const char* write_feature_scene(const char* flags) {
  char xml[8192];
  int n = snprintf(xml, sizeof(xml), FEATURE_XML, flags);
  CHECK(n > 0 && n < (int)sizeof(xml), "feature scene: %d bytes", n);
  return n > 0 && n < (int)sizeof(xml) ? fx_tempFile("features.xml", xml) : NULL;
}

/* sapsim's M, damping and total smooth force tau - c against MuJoCo 4's, which
 * routes gravcomp into qfrc_passive or qfrc_actuator and clips qfrc_actuator per
 * joint: compared as sums, for random states and controls beyond the ranges */
static void check_features(const char* flags) {
  const char* path = write_feature_scene(flags);
  if (!path) return;
  mjModel* mj = fx_mjModel(path);
  if (!mj) return;
  mjData* md = mj_makeData(mj);
  sapModel* m = NULL;
  CHECK(sap_loadModel(path, &m) == SAP_OK, "flags '%s': %s", flags, sap_lastError());
  sapOptions opt;
  sap_optionsDefault(&opt);
  opt.contacts = 0;  /* drives explicit: MuJoCo's actuator forces */
  opt.device = SAP_DEVICE_CPU;
  opt.preset = SAP_PRESET_APPROX64;
  sapSim* s = NULL;
  if (m) CHECK(sap_create(m, &opt, NWORLD, &s) == SAP_OK, "%s", sap_lastError());
  if (!s) return;
  int nq = mj->nq, nv = mj->nv, nu = mj->nu;
  double *qpos = malloc(sizeof(double) * NWORLD * nq), *qvel = malloc(sizeof(double) * NWORLD * nv);
  double* ctrl = malloc(sizeof(double) * NWORLD * nu);
  double* M = malloc(sizeof(double) * nv * nv);
  double* A = malloc(sizeof(double) * nv * nv);
  for (int w = 0; w < NWORLD; w++) {
    random_state(mj, qpos + w * nq, qvel + w * nv, ctrl + w * nu);
    for (int i = 0; i < nu; i++) ctrl[w * nu + i] *= 3;  /* past ctrlrange and the force limits */
  }
  sap_set(s, SAP_FIELD_QPOS, NULL, NWORLD, qpos);
  sap_set(s, SAP_FIELD_QVEL, NULL, NWORLD, qvel);
  sap_set(s, SAP_FIELD_CTRL, NULL, NWORLD, ctrl);
  sapc_kinematics(s);
  sapc_freeMotion(s);
  const sapData* d = sap_data(s);
  for (int w = 0; w < NWORLD; w++) {
    fx_mjForwardAt(mj, md, qpos + w * nq, qvel + w * nv, ctrl + w * nu);
    mj_fullM(mj, md, M);
    /* MuJoCo's damping, read off its damper force (diagonal): -qfrc_damper / qvel */
    CHECK(sap_getMassMatrix(s, w, A) == SAP_OK, "%s", sap_lastError());
    for (int i = 0; i < nv; i++)
      for (int j = 0; j < nv; j++) {
        double Dij = i == j ? -md->qfrc_damper[i] / md->qvel[i] : 0;
        CHECK_CLOSE(A[i * nv + j], M[i * nv + j] + s->h * Dij, 1e-10, 1e-10,
                    "flags '%s' world %d: A[%d][%d] vs M + h D", flags, w, i, j);
      }
    for (int i = 0; i < nv; i++) {
      double mine = d->qfrc_passive[w * nv + i] + d->qfrc_actuator[w * nv + i] - d->qfrc_bias[w * nv + i];
      double ref = md->qfrc_passive[i] + md->qfrc_actuator[i] - md->qfrc_bias[i];
      CHECK_CLOSE(mine, ref, 1e-10, 1e-10, "flags '%s' world %d dof %d: tau - c", flags, w, i);
    }
  }
  free(M);
  free(A);
  free(qpos);
  free(qvel);
  free(ctrl);
  sap_free(s);
  sap_freeModel(m);
  mj_deleteData(md);
  mj_deleteModel(mj);
  remove(path);
}

static void test_model_features(void) {
  check_features("");
  check_features("<flag gravity=\"disable\"/>");
  check_features("<flag damper=\"disable\"/>");
  check_features("<flag spring=\"disable\" damper=\"disable\"/>");
  check_features("<flag clampctrl=\"disable\"/>");
}

/* the gravcomp and force-limit paths must be exercised: MuJoCo's own forces show
 * them nonzero on this scene (so the test above cannot pass vacuously) */
static void test_model_features_active(void) {
  const char* path = write_feature_scene("");
  if (!path) return;
  mjModel* mj = fx_mjModel(path);
  if (!mj) return;
  mjData* md = mj_makeData(mj);
  md->ctrl[0] = 1;  /* motor: 3 x 1 N m clipped to 1.5 by j1's actuatorfrcrange */
  mj_forward(mj, md);
  CHECK_CLOSE(md->qfrc_actuator[0], 1.5, 1e-12, 0, "j1 clipped by actuatorfrcrange");
  CHECK(fabs(md->qfrc_gravcomp[1]) > 0.1, "gravcomp on j2: %g", md->qfrc_gravcomp[1]);
  CHECK(fabs(md->qfrc_gravcomp[5]) > 1, "gravcomp on the floating box: %g", md->qfrc_gravcomp[5]);
  CHECK(fabs(md->qfrc_gravcomp[2]) > 0.1, "gravcomp on j3 (through the actuators): %g", md->qfrc_gravcomp[2]);
  mj_deleteData(md);
  mj_deleteModel(mj);
  remove(path);
}

/* the free-motion scratch size is its carve's: run the stage of world 0 over a buffer of
 * exactly sapw_scratchFreeMotion sreals followed by guard bytes, all pre-filled with a pattern;
 * the stage's last write must land on the buffer's last byte (the size is not larger than the
 * layout: the hand count before, 38 nbody + 8 nv + nv^2, was 7 nv too large) and no guard byte
 * may change (not smaller). Models from 2 to 40+ bodies, both precisions; the integrator's
 * backup (nq doubles) must fit the world's scratch too */
#define FM_GUARD 4096
static int fm_touched_end(const unsigned char* buf, long n) {
  long end = n;
  while (end > 0 && buf[end - 1] == 0xA5) end--;
  return (int)end;
}

static void fm_chain_xml(char* xml, int nlink) {
  int n = sprintf(xml, "<mujoco><worldbody><body name='b0' pos='0 0 2'><freejoint/><geom size='.1'/>");
  for (int i = 1; i < nlink; i++)
    n += sprintf(xml + n, "<body pos='0 0 -.2'><joint type='%s' axis='%d %d 1'/><geom type='capsule' size='.05' fromto='0 0 0 0 0 -.2'/>",
                 i % 3 == 0 ? "ball" : "hinge", i % 2, (i + 1) % 2);
  for (int i = 1; i < nlink; i++) n += sprintf(xml + n, "</body>");
  sprintf(xml + n, "</body></worldbody></mujoco>");
}

static void test_scratch_from_carve(void) {
  static char chain[16384];
  fm_chain_xml(chain, 40);
  const char* scenes[] = {"scenes/box.xml", "scenes/cartpole.xml", "scenes/ant.xml", "scenes/humanoid.xml", chain};
  for (int sc = 0; sc < 5; sc++) {
    for (int fp32 = 0; fp32 < 2; fp32++) {
      sapSim* s = fx_sim(scenes[sc], 1, fp32 ? "preset=approx32" : "preset=approx64");
      if (!s) continue;
      CHECK(sap_step(s, 1) == SAP_OK, "%s: step: %s", sc < 4 ? scenes[sc] : "chain", sap_lastError());
      const sapModel* m = sap_model(s);
      sapData* d = (sapData*)sap_data(s);
      long n = fp32 ? (long)sizeof(float) * sapw_scratchFreeMotion_f32(m, 0) : (long)sizeof(double) * sapw_scratchFreeMotion_f64(m, 0);
      unsigned char* buf = malloc(n + FM_GUARD);
      memset(buf, 0xA5, n + FM_GUARD);
      int nb = m->nbody, nv = m->nv;
      int fail;
#define FM_ARGS(T)                                                                                          \
  m, 1e-3, 0, 1, fp32, d->qpos, d->qvel, d->ctrl, d->act, d->qfrc_applied, d->xfrc_applied, d->xpos, d->xquat,  \
      d->xmat, d->xipos, d->ximat, d->xanchor,                                                            \
      d->xaxis, d->cref, d->cdof, d->qA, d->qfrc_bias, d->qfrc_passive, d->qfrc_actuator, d->vstar, (T*)buf, \
      (const sapWorldContacts*)0, (const int*)0
      if (fp32) fail = sapw_freeMotion_f32(FM_ARGS(float));
      else fail = sapw_freeMotion_f64(FM_ARGS(double));
#undef FM_ARGS
      CHECK(!fail, "%s fp%d: free motion failed", sc < 4 ? scenes[sc] : "chain", fp32 ? 32 : 64);
      /* the midpoint rule's gravity shift writes the carve's last region (its result) unless
       * gravity cannot depend on q (box.xml: a free box with its com at its origin) */
      long end = fm_touched_end(buf, n + FM_GUARD), grav = (long)sizeof(double) * sapw_gravityShiftDoubles(m);
      int varies = sapw_gravityVaries(m);
      CHECK(varies ? end == n : end <= n - grav, "%s fp%d (nbody %d, nv %d): last byte written %ld, carve %ld bytes "
            "(gravity shift %ld bytes, %s)", sc < 4 ? scenes[sc] : "chain", fp32 ? 32 : 64, nb, nv, end, n, grav,
            varies ? "used" : "unused");
      CHECK(varies == (sc != 0), "%s: sapw_gravityVaries %d", sc < 4 ? scenes[sc] : "chain", varies);
      CHECK((long)d->nscratch >= sapw_integrateScratchBytes(m) && (long)d->nscratch >= n,
            "%s: scratch %ld bytes, integrator backup %ld, free motion %ld", sc < 4 ? scenes[sc] : "chain",
            (long)d->nscratch, sapw_integrateScratchBytes(m), n);
      free(buf);
      sap_free(s);
    }
  }
}

/* ---- the midpoint rule's gravity shift (kernels/gravity_shift.h) ----------------- */

/* bodies unlike each other: a mocap handle carrying a hinged flap, a tilted base with a hinge,
 * a slide and a second hinge on one body, a ball chain, a free body with its com off its origin
 * and a welded child, gravity compensation on two bodies (one through its actuator), masses
 * from 1e-3 to 30 kg, lengths from 1 cm to 2 m, gravity tilted */
static const char* GSHIFT_XML =
    "<mujoco><option gravity='0.7 -0.4 -9.81'/><worldbody>"
    "<body name='handle' mocap='true' pos='0.3 -1 1.2' quat='0.9 0.1 0.3 0.2'><geom size='.02' mass='0.5'/>"
    "  <body pos='0.01 0 0'><joint type='hinge' axis='0 1 0.3'/>"
    "    <geom type='box' size='.005 .02 .01' pos='0 0 -.01' mass='0.001'/></body></body>"
    "<body pos='0 0 1' euler='20 -35 60'><joint type='hinge' axis='1 0.2 0' pos='0.1 0 0'/>"
    "  <joint type='slide' axis='0 1 1'/><joint type='hinge' axis='0 0 1' pos='0 0.3 0'/>"
    "  <geom type='capsule' size='.04' fromto='0 0 0 0.5 0 -0.5' mass='3'/>"
    "  <body pos='0.5 0 -0.5' gravcomp='0.5'><joint type='ball'/>"
    "    <geom type='capsule' size='.03' fromto='0 0 0 0 0 -2' mass='30'/>"
    "    <body pos='0 0 -2' euler='0 90 0' gravcomp='1'><joint name='wrist' type='hinge' axis='1 0 0' "
    "      actuatorgravcomp='true'/><geom type='box' size='.01 .2 .03' pos='0 .2 0' mass='0.2'/></body></body></body>"
    "<body pos='1 2 3'><freejoint/><inertial pos='0.3 -0.2 0.1' mass='2' diaginertia='0.1 0.2 0.3'/>"
    "  <body pos='0 0.4 0'><geom size='.1' mass='0.7'/></body></body>"
    "</worldbody><actuator><motor joint='wrist'/></actuator></mujoco>";

/* G(q + hs v) - G(q) from sapw_gravityShift at the step's poses against MuJoCo 4's gravity
 * (qfrc_bias at zero velocity, less qfrc_gravcomp) at mj_integratePos(q, v, hs) and at q, at
 * random states, velocities over decades and both pose precisions; v = 0 gives exact zeros */
static void test_gravity_shift(void) {
  const char* path = fx_tempFile("gshift.xml", GSHIFT_XML);
  mjModel* mj = fx_mjModel(path);
  if (!mj) return;
  mjData* md = mj_makeData(mj);
  int nq = mj->nq, nv = mj->nv;
  double *qpos = malloc(sizeof(double) * nq), *qvel = malloc(sizeof(double) * nv), *g0 = malloc(sizeof(double) * nv);
  double* ctrl = calloc(mj->nu + 1, sizeof(double));
  for (int fp32 = 0; fp32 < 2; fp32++) {
    sapSim* s = fx_sim(path, 1, fp32 ? "device=cpu preset=approx32 boundary_pose_precision=fp32"
                                     : "device=cpu preset=approx64 boundary_pose_precision=fp64");
    if (!s) break;
    const sapModel* m = sap_model(s);
    const sapData* d = sap_data(s);
    CHECK(sapw_gravityVaries(m), "the shift scene's gravity depends on q");
    double* scratch = malloc(sizeof(double) * sapw_gravityShiftDoubles(m));
    double worst = 0;
    for (int trial = 0; trial < 120; trial++) {
      random_state(mj, qpos, qvel, ctrl);
      double vscale = pow(10, check_uniform(-3, 1.5)), hs = 0.5 * pow(10, check_uniform(-3.3, -1.3));
      for (int i = 0; i < nv; i++) qvel[i] *= vscale;
      sap_set(s, SAP_FIELD_QPOS, NULL, 1, qpos);
      sap_set(s, SAP_FIELD_QVEL, NULL, 1, qvel);
      sapc_kinematics(s);
      const double* g = sapw_gravityShift(m, fp32, d->qpos, d->qvel, hs, d->xpos, d->xquat, d->xmat, d->xipos,
                                          d->xanchor, d->xaxis, scratch, (const int*)0);
      CHECK(g != NULL, "trial %d: no shift", trial);
      if (!g) break;
      double scale = 0;
      for (int half = 0; half < 2; half++) {
        mju_copy(md->qpos, qpos, nq);
        if (half) mj_integratePos(mj, md->qpos, qvel, hs);
        mju_zero(md->qvel, nv);
        mj_forward(mj, md);
        for (int i = 0; i < nv; i++) {
          double G = -md->qfrc_bias[i] + md->qfrc_gravcomp[i];
          if (half) g0[i] = G - g0[i];
          else g0[i] = G;
          scale = fmax(scale, fabs(G));
        }
      }
      /* fp64 poses: to rounding; fp32 poses (ulp 6e-8 times lever arms of up to 2.5 m): 2e-6 of the largest gravity force */
      double tol = fp32 ? 2e-6 * scale : 1e-12 * scale;
      for (int i = 0; i < nv; i++) {
        CHECK_CLOSE(g[i], g0[i], tol, 0, "fp%d trial %d dof %d (hs %g, |v| x %g)", fp32 ? 32 : 64, trial, i, hs,
                    vscale);
        worst = fmax(worst, fabs(g[i] - g0[i]) / scale);
      }
      /* at rest the shift is exactly zero, in either precision */
      for (int i = 0; i < nv; i++) qvel[i] = 0;
      sap_set(s, SAP_FIELD_QVEL, NULL, 1, qvel);
      g = sapw_gravityShift(m, fp32, d->qpos, d->qvel, hs, d->xpos, d->xquat, d->xmat, d->xipos, d->xanchor,
                            d->xaxis, scratch, (const int*)0);
      for (int i = 0; i < nv; i++) CHECK(g[i] == 0, "fp%d trial %d dof %d at rest: %g", fp32 ? 32 : 64, trial, i, g[i]);
    }
    if (getenv("SAPSIM_TEST_VERBOSE")) printf("  gravity shift fp%d: worst |sapsim - MuJoCo| / max |G| = %.2e\n", fp32 ? 32 : 64, worst);
    free(scratch);
    sap_free(s);
  }
  free(qpos), free(qvel), free(g0), free(ctrl);
  mj_deleteData(md);
  mj_deleteModel(mj);
}

/* dof_treeend (the free motion's left-looking factor) against brute force on MuJoCo's own
 * dof_parentid: the descendants of j (the dofs whose parent walk reaches j) and j itself are
 * exactly the run [j, dof_treeend[j]] (MuJoCo's order is pre-order: never -1 here); and
 * sapt_hasFixedArmature, sapw_treeEnd and sapw_treesContiguous against the walks */
static void test_dof_treeend(void) {
  static const char* more[] = {"scenes/tendon_armature.xml", "scenes/gripper2.xml", "scenes/quadruped_roll.xml",
                               "scenes/box_pile.xml", "scenes/planar_loops.xml", "scenes/ant_sensors.xml"};
  int nchecked = 0, nbranch = 0, nfixedarm = 0;
  for (int s = 0; s < NSCENE + 6; s++) {
    const char* path = s < NSCENE ? scenes[s] : more[s - NSCENE];
    mjModel* mj = fx_mjModel(path);
    sapModel* m = NULL;
    if (!mj || sap_loadModel(path, &m) != SAP_OK) {
      CHECK(0, "%s: %s", path, sap_lastError());
      if (mj) mj_deleteModel(mj);
      continue;
    }
    for (int j = 0; j < mj->nv; j++) {
      int lo = mj->nv, hi = -1, n = 0;
      for (int k = 0; k < mj->nv; k++) {
        int q = k;
        while (q > j) q = mj->dof_parentid[q];
        if (q != j) continue;
        n++;
        lo = k < lo ? k : lo, hi = k > hi ? k : hi;
      }
      CHECK(m->dof_treeend[j] == hi && lo == j && n == hi - j + 1, "%s dof %d: treeend %d, subtree [%d, %d] of %d",
            path, j, m->dof_treeend[j], lo, hi, n);
      nchecked++;
      nbranch += n > 1 && mj->dof_parentid[hi] != hi - 1;
    }
    /* each tree's end (the run of dofs after its root with a parent) and contiguity */
    CHECK(sapw_treesContiguous_f64(m) == 1, "%s: contiguous", path);
    for (int t0 = 0; t0 < mj->nv; t0++) {
      if (mj->dof_parentid[t0] >= 0) continue;
      int t1 = t0 + 1;
      while (t1 < mj->nv && mj->dof_parentid[t1] >= 0) t1++;
      CHECK(sapw_treeEnd_f64(m, t0, 1) == t1 && sapw_treeEnd_f32(m, t0, 1) == t1, "%s tree at %d: end %d, want %d", path,
            t0, sapw_treeEnd_f64(m, t0, 1), t1);
    }
    /* the free motion scans A's pattern iff some fixed tendon (joint wraps) has armature, its
     * own or an actuator's (MuJoCo's arrays) */
    int fixedarm = 0;
    for (int t = 0; t < mj->ntendon; t++) {
      double a = mj->tendon_armature[t];
      for (int i = 0; i < mj->nu; i++)
        if (mj->actuator_trntype[i] == mjTRN_TENDON && mj->actuator_trnid[2 * i] == t) a += mj->actuator_armature[i];
      fixedarm |= mj->wrap_type[mj->tendon_adr[t]] == mjWRAP_JOINT && a != 0;
    }
    CHECK(sapt_hasFixedArmature(m) == fixedarm, "%s: fixed-tendon armature %d", path, fixedarm);
    nfixedarm += fixedarm;
    sap_freeModel(m);
    mj_deleteModel(mj);
  }
  CHECK(nbranch > 0, "some subtree branches");
  CHECK(nfixedarm > 0, "some scene has a fixed tendon with armature");
  printf("  dof_treeend: %d dofs over %d scenes match brute force (%d branching subtrees)\n", nchecked, NSCENE + 6,
         nbranch);
}

/* a model whose dof trees differ in size: a 3-hinge chain, a free body, a ball joint, a slider,
 * a free body with a hinge child (7) and a branching hinge tree (4) */
static const char* mixed_xml =
    "<mujoco><option timestep='0.004'/><worldbody>"
    "<body pos='0 0 1'><joint type='hinge' axis='0 1 0' damping='0.3'/><geom type='capsule' fromto='0 0 0 0.3 0 0' size='0.03'/>"
    " <body pos='0.3 0 0'><joint type='hinge' axis='0 1 0'/><geom type='capsule' fromto='0 0 0 0.2 0 0' size='0.02'/>"
    "  <body pos='0.2 0 0'><joint type='hinge' axis='1 0 0' armature='0.01'/><geom type='box' size='0.02 0.03 0.05'/></body></body></body>"
    "<body pos='1 0 1'><freejoint/><geom type='box' size='0.4 0.1 0.02'/></body>"
    "<body pos='2 0 1'><joint type='ball' damping='2'/><geom type='sphere' pos='0 0 -0.5' size='0.05'/></body>"
    "<body pos='3 0 1'><joint type='slide' axis='1 0 0' armature='3'/><geom type='sphere' size='0.5'/></body>"
    "<body pos='4 0 1'><freejoint/><geom type='sphere' size='0.002'/>"
    " <body pos='0 0 -0.01'><joint type='hinge' axis='0 0 1' damping='1e-3'/><geom type='box' size='0.001 0.003 0.002'/></body></body>"
    "<body pos='5 0 1'><joint type='hinge' axis='0 1 0'/><geom type='sphere' size='0.1'/>"
    " <body pos='0.2 0 0'><joint type='hinge' axis='0 1 0'/><geom type='sphere' size='0.1'/></body>"
    " <body pos='-0.2 0 0'><joint type='hinge' axis='1 0 0'/><geom type='sphere' size='0.1'/>"
    "  <body pos='0 0 -0.2'><joint type='hinge' axis='0 0 1'/><geom type='sphere' size='0.1'/></body></body></body>"
    "</worldbody></mujoco>";

/* A's storage by dof-tree blocks (dof_Alo, dof_Ahi, dof_Aadr, nA) against brute force on
 * MuJoCo's dof_parentid (each dof's tree: the dofs its parent walk shares a root with; rows
 * packed in dof order, n_t entries each), and the stored A, expanded by sap_getMassMatrix,
 * against MuJoCo 4's mj_fullM + h diag(damping) (zeros between trees included) on scenes whose
 * trees differ in size and number: free bodies, the humanoid (one tree), a fixed tendon's
 * armature, a fixed-base arm, the mixed model above, 20 separate objects */
static void test_A_layout(void) {
  enum { NW = 3 };
  char mixed[64], many[64], cmd[160];
  snprintf(mixed, sizeof(mixed), "/tmp/sapsim_alayout_mixed_%d.xml", (int)getpid());
  snprintf(many, sizeof(many), "/tmp/sapsim_alayout_many_%d.xml", (int)getpid());
  FILE* f = fopen(mixed, "w");
  CHECK(f != NULL, "cannot write %s", mixed);
  if (!f) return;
  fputs(mixed_xml, f);
  fclose(f);
  snprintf(cmd, sizeof(cmd), "python3 bench/many_objects.py 20 > %s", many);
  CHECK(system(cmd) == 0, "%s failed", cmd);
  const char* paths[] = {"scenes/box_pile.xml", "scenes/humanoid.xml", "scenes/tendon_armature.xml",
                         "scenes/arm7.xml", mixed, many};
  int ntrees = 0, nentries = 0;
  double worst = 0;
  for (int p = 0; p < 6; p++) {
    const char* path = paths[p];
    mjModel* mj = fx_mjModel(path);
    if (!mj) continue;
    mjData* md = mj_makeData(mj);
    sapSim* s = fx_sim(path, NW, "contacts=0 device=cpu preset=approx64");
    if (!s) { mj_deleteData(md); mj_deleteModel(mj); continue; }
    const sapModel* m = sap_model(s);
    int nv = mj->nv, nq = mj->nq;
    /* brute force: root of each dof's tree, the tree's first and last dof and size */
    long addr = 0;
    for (int i = 0; i < nv; i++) {
      int r = i, lo = nv, hi = -1, n = 0;
      while (mj->dof_parentid[r] >= 0) r = mj->dof_parentid[r];
      for (int k = 0; k < nv; k++) {
        int q = k;
        while (mj->dof_parentid[q] >= 0) q = mj->dof_parentid[q];
        if (q != r) continue;
        n++;
        lo = k < lo ? k : lo, hi = k > hi ? k : hi;
      }
      CHECK(hi - lo + 1 == n, "%s dof %d: tree [%d, %d] of %d dofs is not contiguous", path, i, lo, hi, n);
      CHECK(m->dof_Alo[i] == lo && m->dof_Ahi[i] == hi + 1 && m->dof_Aadr[i] + lo == addr,
            "%s dof %d: A block [%d, %d) at %d, want [%d, %d) at %ld", path, i, m->dof_Alo[i], m->dof_Ahi[i],
            m->dof_Aadr[i] + m->dof_Alo[i], lo, hi + 1, addr);
      addr += n;
      ntrees += i == r;
    }
    CHECK(m->nA == addr, "%s: nA %d, want sum n_t^2 = %ld", path, m->nA, addr);
    /* the stored blocks, expanded, against MuJoCo's M + h D at random states */
    double *qpos = malloc(sizeof(double) * NW * nq), *qvel = malloc(sizeof(double) * NW * nv);
    double *M = malloc(sizeof(double) * nv * nv), *A = malloc(sizeof(double) * nv * nv);
    double* ctrl = malloc(sizeof(double) * (NW * mj->nu + 1));  // drawn, unused: A does not read it
    for (int w = 0; w < NW; w++) random_state(mj, qpos + w * nq, qvel + w * nv, ctrl + w * mj->nu);
    sap_set(s, SAP_FIELD_QPOS, NULL, NW, qpos);
    sap_set(s, SAP_FIELD_QVEL, NULL, NW, qvel);
    sapData* d = (sapData*)sap_data(s);
    for (long i = 0; i < (long)NW * m->nA; i++) d->qA[i] = NAN;  // poison: every entry is written
    sapc_kinematics(s);
    sapc_freeMotion(s);
    for (int w = 0; w < NW; w++) {
      fx_mjForwardAt(mj, md, qpos + w * nq, qvel + w * nv, NULL);
      mj_fullM(mj, md, M);
      double scale = 0;
      for (int i = 0; i < nv * nv; i++) scale = fmax(scale, fabs(M[i]));
      for (int i = 0; i < nv; i++) M[i * nv + i] += s->h * mj->dof_damping[i];
      for (int i = 0; i < nv * nv; i++) A[i] = NAN;
      CHECK(sap_getMassMatrix(s, w, A) == SAP_OK, "%s", sap_lastError());
      for (int i = 0; i < nv * nv; i++) {
        double e = fabs(A[i] - M[i]);
        worst = fmax(worst, e / scale);
        CHECK(e <= 1e-10 * scale, "%s world %d A[%d][%d] %.17g, MuJoCo 4's M + h D %.17g", path, w, i / nv, i % nv,
              A[i], M[i]);
      }
      nentries += nv * nv;
    }
    CHECK(sap_getMassMatrix(s, NW, A) == SAP_ERR_ARG && strstr(sap_lastError(), "world 3"), "world: %s",
          sap_lastError());
    free(qpos), free(qvel), free(M), free(A), free(ctrl);
    sap_free(s);
    mj_deleteData(md);
    mj_deleteModel(mj);
  }
  remove(mixed);
  remove(many);
  CHECK(ntrees >= 20 + 6, "trees seen: %d", ntrees);
  printf("  A by tree blocks: %d trees over 6 scenes, %d dense entries vs MuJoCo 4's M + h D, worst %.2g of max|M|\n",
         ntrees, nentries, worst);
}

int main(void) {
  mju_user_warning = NULL;
  RUN(test_oracle_fp64);
  RUN(test_oracle_fp32);
  RUN(test_free_motion_residual);
  RUN(test_model_features);
  RUN(test_model_features_active);
  RUN(test_scratch_from_carve);
  RUN(test_gravity_shift);
  RUN(test_dof_treeend);
  RUN(test_A_layout);
  return check_summary("test_dynamics");
}
