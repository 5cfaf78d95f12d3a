/* Sensors (kernels/sensor.h) against independent oracles:
 *   MuJoCo 4.0 on the same model: position/velocity sensors after sapsim steps (MuJoCo's
 *   mj_forward at sapsim's state); acceleration sensors with sapsim's qacc = (v' - v)/h and its
 *   contact forces (as xfrc_applied) put into MuJoCo's mj_rnePostConstraint / mj_sensorAcc;
 *   analytic physics: free fall (accelerometer 0), resting box (accelerometer +g, touch m g),
 *   hanging chain (force = weight below, torque 0), a position servo holding a pendulum
 *   (actuator force = gravity torque / gear);
 *   limit and energy sensors at chosen states on both sides of every limit (MuJoCo 4);
 *   load-time refusals by name; reset/set_state semantics; no cost without sensors. */
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fixture_mj.h"
#include "sensor.h"
#include "sim.h"

/* rotated sites and cameras of varied sizes on a floating base with hinge, ball and slide
 * joints, a fixed tendon, motor / position / velocity actuators; every supported type */
#define SCENE "scenes/sensor_zoo.xml"

typedef struct {
  mjModel* mj;
  mjData* md;
  sapModel* m;
  sapSim* s;
} fixture;

static int open_fixture(fixture* f, const char* path, const char* preset, int nworld, int contacts) {
  memset(f, 0, sizeof(*f));
  f->mj = fx_mjModel(path);
  if (!f->mj) return 0;
  f->md = mj_makeData(f->mj);
  sapStatus st = sap_loadModel(path, &f->m);
  CHECK(st == SAP_OK, "load: %s", sap_lastError());
  if (st != SAP_OK) return 0;
  sapOptions opt;
  sap_optionsDefault(&opt);
  sap_optionsSet(&opt, "preset", preset);
  opt.device = SAP_DEVICE_CPU;
  opt.contacts = contacts;
  st = sap_create(f->m, &opt, nworld, &f->s);
  CHECK(st == SAP_OK, "create: %s", sap_lastError());
  return st == SAP_OK;
}

static void close_fixture(fixture* f) {
  if (f->s) sap_free(f->s);
  if (f->m) sap_freeModel(f->m);
  if (f->md) mj_deleteData(f->md);
  if (f->mj) mj_deleteModel(f->mj);
}

static int sensor_id(const mjModel* mj, const char* name) { return mj_name2id(mj, mjOBJ_SENSOR, name); }

/* compare the sensors of one stage class (acc or not) of world w with MuJoCo's sensordata;
 * skip: sensor ids left out (-1 ends) */
static void compare_stage(const fixture* f, int w, int acc, const int* skip, double tol, const char* what) {
  const mjModel* mj = f->mj;
  const double* got = f->s->d.sensordata + (size_t)w * f->m->nsensordata;
  int n = 0;
  for (int i = 0; i < mj->nsensor; i++) {
    if ((mj->sensor_needstage[i] == mjSTAGE_ACC) != acc) continue;
    int skipped = 0;
    for (int k = 0; skip && skip[k] >= 0; k++) skipped |= skip[k] == i;
    if (skipped) continue;
    char name[200];
    snprintf(name, sizeof(name), "%s world %d sensor %d (type %d)", what, w, i, mj->sensor_type[i]);
    double scale = 1;
    for (int k = 0; k < mj->sensor_dim[i]; k++) scale = fmax(scale, fabs(f->md->sensordata[mj->sensor_adr[i] + k]));
    check_arrays(name, got + mj->sensor_adr[i], f->md->sensordata + mj->sensor_adr[i], mj->sensor_dim[i],
                 tol * scale, 0);
    n++;
  }
  CHECK(n > 0, "%s: nothing compared", what);
}

/* MuJoCo's state = sapsim world w's (qpos, qvel, ctrl, time) */
static void to_mujoco(const fixture* f, int w, const double* qpos, const double* qvel) {
  fx_mjSetState(f->mj, f->md, qpos, qvel, f->s->d.ctrl + (size_t)w * f->m->nu, NULL);
  f->md->time = f->s->d.time[w];
}

/* sapsim's contact forces of world w (impulses / h from the solver's scratch) as MuJoCo
 * xfrc_applied: force at the body com and torque (contact point lever arm, spin torques) */
static int contact_xfrc(const fixture* f, int w, double* xfrc) {
  const sapSim* s = f->s;
  const sapModel* m = f->m;
  const sapData* d = &s->d;
  sapSensorSolve S;
  sapc_sensorSolveInfo(s, &S);
  const unsigned char* sc = d->scratch + (size_t)w * d->nscratch;
  memset(xfrc, 0, sizeof(double) * 6 * m->nbody);
  int nc = d->ncon[w] < d->ncon_max ? d->ncon[w] : d->ncon_max, nactive = 0;
  for (int i = 0; i < nc; i++) {
    long ci = (long)w * d->ncon_max + i;
    const double* fr = d->con_frame + 9 * ci;
    double g[6] = {0};
    for (int r = 0; r < S.cd; r++) g[r] = sapw_sensorImpulse(&S, sc, S.cd * i + r) / S.h;
    nactive += g[2] > 0;
    for (int side = 0; side < 2; side++) {
      int b = m->geom_bodyid[d->con_geom[2 * ci + side]];
      if (!b) continue;
      double sign = side ? 1 : -1, fw[3], x[3], arm[3], tq[3];
      for (int k = 0; k < 3; k++) fw[k] = sign * (fr[k] * g[0] + fr[3 + k] * g[1] + fr[6 + k] * g[2]);
      sapw_sensorContactPoint(m, d, ci, side, &S, x);
      for (int k = 0; k < 3; k++) arm[k] = x[k] - f->md->xipos[3 * b + k];
      mju_cross(tq, arm, fw);
      for (int r = 3; r < S.cd; r++) {
        const double* ax = fr + 3 * (r == 3 ? 2 : r - 4);
        for (int k = 0; k < 3; k++) tq[k] += sign * ax[k] * g[r];
      }
      for (int k = 0; k < 3; k++) {
        xfrc[6 * b + k] += fw[k];
        xfrc[6 * b + 3 + k] += tq[k];
      }
    }
  }
  return nactive;
}

/* the scene stepped with controls; pos/vel sensors vs mj_forward, acc sensors vs MuJoCo's
 * post-constraint pass fed with sapsim's qacc and contact forces */
static void check_scene_oracle(const char* preset, int contacts, double tol) {
  fixture f;
  if (!open_fixture(&f, SCENE, preset, 3, contacts)) { close_fixture(&f); return; }
  const sapModel* m = f.m;
  sapSim* s = f.s;
  int nw = 3, nq = m->nq, nv = m->nv;
  /* varied controls per world */
  for (int w = 0; w < nw; w++)
    for (int u = 0; u < m->nu; u++) s->d.ctrl[w * m->nu + u] = check_uniform(-1, 1);
  /* initial velocities per world, so that velocities are varied */
  double* qv = (double*)calloc((size_t)nw * nv, sizeof(double));
  for (int i = 0; i < nw * nv; i++) qv[i] = check_uniform(-1.5, 1.5);
  CHECK(sap_set(s, SAP_FIELD_QVEL, NULL, nw, qv) == SAP_OK, "%s", sap_lastError());
  double* q0 = (double*)malloc(sizeof(double) * nw * (nq + nv));
  double* v0 = q0 + nw * nq;
  double* xfrc = (double*)malloc(sizeof(double) * 6 * m->nbody);
  int skip_acc[4] = {sensor_id(f.mj, "servo_force"), f.mj->nsensor - 1 /* touch */, -1, -1};
  int contacts_seen = 0;
  for (int round = 0; round < 4; round++) {
    sap_step(s, 60);
    /* pos/vel sensors describe the state after the step */
    for (int w = 0; w < nw; w++) {
      to_mujoco(&f, w, s->d.qpos + w * nq, s->d.qvel + w * nv);
      mj_forward(f.mj, f.md);
      compare_stage(&f, w, 0, NULL, tol, "pos/vel");
    }
    /* acc sensors: one more step from (q0, v0) */
    memcpy(q0, s->d.qpos, sizeof(double) * nw * nq);
    memcpy(v0, s->d.qvel, sizeof(double) * nw * nv);
    sap_step(s, 1);
    for (int w = 0; w < nw; w++) {
      to_mujoco(&f, w, q0 + w * nq, v0 + w * nv);
      f.md->time = s->d.time[w] - s->h;
      mj_fwdPosition(f.mj, f.md);
      mj_fwdVelocity(f.mj, f.md);
      mj_fwdActuation(f.mj, f.md);
      for (int i = 0; i < nv; i++) f.md->qacc[i] = (s->d.qvel[w * nv + i] - v0[w * nv + i]) / s->h;
      int nact = contacts ? contact_xfrc(&f, w, xfrc) : 0;
      contacts_seen += nact;
      memcpy(f.md->xfrc_applied, xfrc, sizeof(double) * 6 * m->nbody * (contacts ? 1 : 0));
      f.md->ncon = 0;
      f.md->ne = f.md->nf = f.md->nefc = 0;
      mj_rnePostConstraint(f.mj, f.md);
      mj_sensorAcc(f.mj, f.md);
      compare_stage(&f, w, 1, skip_acc, tol, "acc");
    }
  }
  if (contacts) CHECK(contacts_seen > 0, "no active contact was compared");
  free(xfrc);
  free(q0);
  free(qv);
  close_fixture(&f);
}

static void test_oracle_approx64(void) { check_scene_oracle("approx64", 1, 1e-9); }
static void test_oracle_drake(void) { check_scene_oracle("drake", 1, 1e-9); }
static void test_oracle_nocontact(void) { check_scene_oracle("approx64", 0, 1e-9); }
/* approx32: pos/vel sensors are fp64 from the state; acc ones use the step's fp32 poses */
static void test_oracle_approx32(void) { check_scene_oracle("approx32", 1, 2e-4); }

/* pos/vel sensors after reset and after a state edit equal MuJoCo's mj_forward at that state;
 * acc sensors read 0 after a reset */
static void test_reset_and_set(void) {
  fixture f;
  if (!open_fixture(&f, SCENE, "approx64", 2, 1)) { close_fixture(&f); return; }
  sapSim* s = f.s;
  const sapModel* m = f.m;
  int nq = m->nq, nv = m->nv;
  sap_step(s, 20);
  unsigned char mask[2] = {1, 0};
  CHECK(sap_reset(s, -1, mask) == SAP_OK, "%s", sap_lastError());
  to_mujoco(&f, 0, s->d.qpos, s->d.qvel);
  mj_forward(f.mj, f.md);
  compare_stage(&f, 0, 0, NULL, 1e-12, "after reset");
  int acc_zero = 1;
  for (int i = 0; i < m->nsensor; i++)
    if (m->sensor_stage[i] == SAP_STAGE_ACC)
      for (int k = 0; k < m->sensor_dim[i]; k++) acc_zero &= s->d.sensordata[m->sensor_adr[i] + k] == 0;
  CHECK(acc_zero, "acc sensors are not 0 after reset");
  int acc_nonzero = 0;
  for (int k = 0; k < m->nsensordata; k++) acc_nonzero |= s->d.sensordata[m->nsensordata + k] != 0;
  CHECK(acc_nonzero, "world 1 (not reset) lost its sensors");
  /* a state edit: new qpos and qvel in both worlds */
  double q[64], v[64];
  for (int w = 0; w < 2; w++) {
    memcpy(q + w * nq, f.m->qpos0, sizeof(double) * nq);
    for (int i = 7; i < nq; i++) q[w * nq + i] += check_uniform(-0.5, 0.5);
    for (int i = 0; i < nv; i++) v[w * nv + i] = check_uniform(-2, 2);
  }
  int ball = f.mj->jnt_qposadr[mj_name2id(f.mj, mjOBJ_JOINT, "ball")];
  for (int w = 0; w < 2; w++) {
    double* b = q + w * nq + ball;
    b[0] = 0.8; b[1] = 0.3; b[2] = -0.4; b[3] = 0.2;
  }
  CHECK(sap_set(s, SAP_FIELD_QPOS, NULL, 2, q) == SAP_OK, "%s", sap_lastError());
  CHECK(sap_set(s, SAP_FIELD_QVEL, NULL, 2, v) == SAP_OK, "%s", sap_lastError());
  double t[2] = {1.25, 3.5};
  CHECK(sap_set(s, SAP_FIELD_TIME, NULL, 2, t) == SAP_OK, "%s", sap_lastError());
  for (int w = 0; w < 2; w++) {
    to_mujoco(&f, w, q + w * nq, v + w * nv);
    mj_forward(f.mj, f.md);
    compare_stage(&f, w, 0, NULL, 1e-12, "after set");
  }
  /* sap_get of the field */
  double* buf = (double*)malloc(sizeof(double) * 2 * m->nsensordata);
  CHECK(sap_fieldSize(s, SAP_FIELD_SENSORDATA) == m->nsensordata, "field size");
  CHECK(!strcmp(sap_fieldName(SAP_FIELD_SENSORDATA), "sensordata"), "field name");
  CHECK(sap_get(s, SAP_FIELD_SENSORDATA, NULL, 2, buf) == SAP_OK, "%s", sap_lastError());
  CHECK(!memcmp(buf, s->d.sensordata, sizeof(double) * 2 * m->nsensordata), "sap_get sensordata");
  CHECK(sap_set(s, SAP_FIELD_SENSORDATA, NULL, 2, buf) == SAP_ERR_ARG, "sensordata is writable");
  free(buf);
  close_fixture(&f);
}

/* ---- analytic physics ------------------------------------------------------------- */

static sapSim* make_sim(const char* xml, const char* preset, sapModel** m) {
  CHECK(sap_loadModelString(xml, m) == SAP_OK, "%s", sap_lastError());
  if (!*m) return NULL;
  sapOptions opt;
  sap_optionsDefault(&opt);
  sap_optionsSet(&opt, "preset", preset);
  opt.device = SAP_DEVICE_CPU;
  sapSim* s = NULL;
  CHECK(sap_create(*m, &opt, 1, &s) == SAP_OK, "%s", sap_lastError());
  return s;
}

/* a falling box reads 0 (no contact yet); resting on the floor, +g in the site frame and
 * touch = m g; a rotated site sees R' (0, 0, g) */
static void test_box_fall_and_rest(void) {
  const char* xml =
      "<mujoco><option timestep='0.002'/><worldbody><geom type='plane' size='5 5 .1'/>"
      "<body pos='0 0 0.8'><freejoint/><geom type='box' size='0.15 0.1 0.05' mass='2'/>"
      "<site name='s' pos='0.05 0.02 0' quat='0.8 0.3 -0.4 0.3' size='0.01'/>"
      "<site name='zone' type='box' pos='0 0 -0.05' size='0.16 0.11 0.02'/></body></worldbody>"
      "<sensor><accelerometer site='s'/><touch site='zone'/><velocimeter site='s'/></sensor></mujoco>";
  const char* presets[3] = {"approx64", "drake", "approx32"};
  for (int p = 0; p < 3; p++) {
    sapModel* m = NULL;
    sapSim* s = make_sim(xml, presets[p], &m);
    if (!s) { sap_freeModel(m); return; }
    double tol = p == 2 ? 1e-4 : 1e-9;
    sap_step(s, 50);  /* 0.1 s of free fall: 0.05 m */
    const double* sd = s->d.sensordata;
    for (int k = 0; k < 3; k++) CHECK_CLOSE(sd[k], 0, tol * 9.81, 0, "%s free fall accelerometer[%d]", presets[p], k);
    CHECK(sd[3] == 0, "touch in free fall %g", sd[3]);
    /* velocimeter in the site frame: R' (0, 0, -g t) */
    double q[4] = {0.8, 0.3, -0.4, 0.3}, R[9], vw[3] = {0, 0, -9.81 * s->d.time[0]}, vl[3];
    mju_normalize4(q);
    mju_quat2Mat(R, q);
    mju_mulMatTVec3(vl, R, vw);
    for (int k = 0; k < 3; k++) CHECK_CLOSE(sd[4 + k], vl[k], (p == 2 ? 1e-6 : 1e-9) * 9.81, 0, "%s velocimeter[%d]", presets[p], k);
    sap_step(s, 1500);  /* lands and rests */
    double gl[3], g[3] = {0, 0, 9.81};
    mju_mulMatTVec3(gl, R, g);
    double rtol = p == 2 ? 1e-3 : 1e-5;
    for (int k = 0; k < 3; k++) CHECK_CLOSE(sd[k], gl[k], rtol * 9.81, 0, "%s resting accelerometer[%d]", presets[p], k);
    CHECK_CLOSE(sd[3], 2 * 9.81, rtol * 2 * 9.81, 0, "%s resting touch (m g)", presets[p]);
    sap_free(s);
    sap_freeModel(m);
  }
}

/* a chain hanging at rest: the force sensor at a (rotated) site of link k reads the weight of
 * links k.. in the site frame, pointing up; torque about a site on the axis is 0 */
static void test_hanging_chain(void) {
  const char* xml =
      "<mujoco><option timestep='0.001'/><worldbody>"
      "<body name='l1' pos='0 0 2'><joint type='hinge' axis='1 0 0'/>"
      "<geom type='capsule' fromto='0 0 0 0 0 -0.4' size='0.03' mass='1.5'/>"
      "<site name='s1' pos='0 0 0' quat='0.9 0.2 0.3 -0.1' size='0.01'/>"
      "<body name='l2' pos='0 0 -0.4'><joint type='hinge' axis='0 1 0'/>"
      "<geom type='capsule' fromto='0 0 0 0 0 -0.4' size='0.03' mass='0.75'/>"
      "<site name='s2' pos='0 0 -0.1' size='0.01'/>"
      "<body name='l3' pos='0 0 -0.4'><joint type='ball'/>"
      "<geom type='sphere' pos='0 0 -0.2' size='0.05' mass='1.25'/>"
      "<site name='s3' pos='0 0 0' quat='0 1 0 0' size='0.01'/></body></body></body></worldbody>"
      "<sensor><force site='s1'/><force site='s2'/><force site='s3'/><torque site='s1'/>"
      "<torque site='s3'/></sensor></mujoco>";
  sapModel* m = NULL;
  sapSim* s = make_sim(xml, "approx64", &m);
  if (!s) { sap_freeModel(m); return; }
  sap_step(s, 10);
  const double* sd = s->d.sensordata;
  double g = 9.81, w1 = (1.5 + 0.75 + 1.25) * g, w2 = (0.75 + 1.25) * g, w3 = 1.25 * g;
  double q[4] = {0.9, 0.2, 0.3, -0.1}, R[9], up[3] = {0, 0, w1}, f1[3];
  mju_normalize4(q);
  mju_quat2Mat(R, q);
  mju_mulMatTVec3(f1, R, up);
  for (int k = 0; k < 3; k++) CHECK_CLOSE(sd[k], f1[k], 1e-9 * w1, 0, "force s1[%d]", k);
  CHECK_CLOSE(sd[3], 0, 1e-9 * w2, 0, "force s2 x");
  CHECK_CLOSE(sd[4], 0, 1e-9 * w2, 0, "force s2 y");
  CHECK_CLOSE(sd[5], w2, 1e-9 * w2, 0, "force s2 z");
  /* s3 flipped (quat 0 1 0 0: 180 deg about x): up is -z in the site frame */
  CHECK_CLOSE(sd[6], 0, 1e-9 * w3, 0, "force s3 x");
  CHECK_CLOSE(sd[8], -w3, 1e-9 * w3, 0, "force s3 z");
  for (int k = 9; k < 15; k++) CHECK_CLOSE(sd[k], 0, 1e-9 * w1, 0, "torque[%d] on the axis", k - 9);
  sap_free(s);
  sap_freeModel(m);
}

/* a position servo (implicit SAP drive) holds a pendulum still at 0.5 rad: its force is the
 * gravity torque over the gear; jointactuatorfrc = gear x force */
static void test_servo_force(void) {
  const char* xml =
      "<mujoco><option timestep='0.002'/><worldbody><body pos='0 0 1'>"
      "<joint name='j' type='hinge' axis='1 0 0' damping='2'/>"
      "<geom type='sphere' pos='0 0 -0.5' size='0.05' mass='2'/></body></worldbody>"
      "<actuator><position name='p' joint='j' kp='400' kv='5' gear='2'/></actuator>"
      "<sensor><actuatorfrc actuator='p'/><jointactuatorfrc joint='j'/><jointpos joint='j'/></sensor></mujoco>";
  sapModel* m = NULL;
  sapSim* s = make_sim(xml, "approx64", &m);
  if (!s) { sap_freeModel(m); return; }
  s->d.ctrl[0] = 0.25;  /* target length gear q = 0.5: q = 0.25 rad would be the target... */
  sap_step(s, 3000);
  const double* sd = s->d.sensordata;
  double q = sd[2], tau = 2 * 9.81 * 0.5 * sin(q);  /* gravity torque m g l sin q */
  CHECK(fabs(q) > 0.05, "the pendulum did not move (q %g)", q);
  CHECK_CLOSE(sd[1], tau, 1e-6 * fabs(tau), 0, "jointactuatorfrc = gravity torque");
  CHECK_CLOSE(sd[0], tau / 2, 1e-6 * fabs(tau), 0, "actuatorfrc = torque / gear");
  sap_free(s);
  sap_freeModel(m);
}

/* jointlimitfrc and tendonlimitfrc (scenes/limit_force.xml): five limits that come to rest with
 * analytic forces (the scene's header; the pendulum's m g L cos q at its own angle q), checked
 * against the analytic values and MuJoCo 4's sensors at the same rest (MuJoCo's soft limits
 * settle to the same static forces); then a slide dropped onto its lower limit, where every
 * step's force must be the stepped equation's f = M (v' - v) / h + M g of that one dof */
static void test_limit_force(void) {
  mjModel* mj = fx_mjModel("scenes/limit_force.xml");
  if (!mj) return;
  mjData* md = mj_makeData(mj);
  mj_resetDataKeyframe(mj, md, 0);
  for (int i = 0; i < 3000; i++) mj_step(mj, md);
  const double g = 9.81;
  double mjref[6];
  for (int k = 0; k < 6; k++) mjref[k] = md->sensordata[k];
  double want_mj[6] = {1.5 * g * 0.4 * cos(md->qpos[0]), 2 * g, 4.5, 2, 0.7 * g, 0};
  for (int k = 0; k < 6; k++)
    CHECK_CLOSE(mjref[k], want_mj[k], 1e-6 * want_mj[k], 1e-12, "MuJoCo 4's limit force %d at rest", k);
  const char* presets[3] = {"approx64", "drake", "approx32"};
  for (int p = 0; p < 3; p++) {
    sapModel* m = NULL;
    CHECK(sap_loadModel("scenes/limit_force.xml", &m) == SAP_OK, "%s", sap_lastError());
    if (!m) break;
    sapOptions opt;
    sap_optionsDefault(&opt);
    sap_optionsSet(&opt, "preset", presets[p]);
    /* approx64's 1e-9 is the converged answer's: each limit's island stops at its own
     * tolerance (island_newton), 1e-6 relative by default, so the solve runs to 1e-10 */
    if (p == 0) sap_optionsSet(&opt, "optimality_rel_tol", "1e-10");
    opt.device = SAP_DEVICE_CPU;
    sapSim* s = NULL;
    CHECK(sap_create(m, &opt, 1, &s) == SAP_OK, "%s", sap_lastError());
    if (s) {
      sap_reset(s, 0, NULL);
      sap_step(s, 3000);
      const double* sd = s->d.sensordata;
      double want[6] = {1.5 * g * 0.4 * cos(s->d.qpos[0]), 2 * g, 4.5, 2, 0.7 * g, 0};
      double tol = p == 0 ? 1e-9 : 1e-5;  /* fp64 at rest; drake's and fp32's residual motion */
      for (int k = 0; k < 6; k++) {
        CHECK_CLOSE(sd[k], want[k], tol * want[k], 1e-12, "%s: limit force %d at rest", presets[p], k);
        CHECK_CLOSE(sd[k], mjref[k], 1e-5 * mjref[k], 1e-12, "%s: limit force %d against MuJoCo 4", presets[p], k);
      }
    }
    sap_free(s);
    sap_freeModel(m);
  }
  mj_deleteData(md);
  mj_deleteModel(mj);

  /* the drop: 2 kg from 5 cm above the lower limit, 0.2 s; h = 2 ms */
  const char* xml =
      "<mujoco><option timestep='0.002'/><worldbody><body pos='0 0 1'>"
      "<joint name='z' type='slide' axis='0 0 1' range='0 1'/><geom type='box' size='0.1 0.2 0.05' mass='2'/>"
      "</body></worldbody><sensor><jointlimitfrc joint='z'/></sensor>"
      "<keyframe><key qpos='0.05'/></keyframe></mujoco>";
  sapModel* m = NULL;
  CHECK(sap_loadModelString(xml, &m) == SAP_OK, "%s", sap_lastError());
  sapOptions opt;
  sap_optionsDefault(&opt);
  sap_optionsSet(&opt, "preset", "approx64");
  /* the momentum balance holds at the optimum; the default tolerance leaves 1e-5 N at rest */
  sap_optionsSet(&opt, "optimality_rel_tol", "1e-12");
  opt.device = SAP_DEVICE_CPU;
  sapSim* s = NULL;
  CHECK(m && sap_create(m, &opt, 1, &s) == SAP_OK, "%s", sap_lastError());
  if (!s) { sap_freeModel(m); return; }
  sap_reset(s, 0, NULL);
  double peak = 0, h = 0.002, M = 2;
  for (int k = 0; k < 100; k++) {
    double v0 = s->d.qvel[0];
    sap_step(s, 1);
    double f = M * (s->d.qvel[0] - v0) / h + M * g, fs = s->d.sensordata[0];
    CHECK_CLOSE(fs, f, 1e-9 * M * g, 0, "drop step %d: sensor %g, stepped equation %g", k, fs, f);
    CHECK(fs >= 0, "drop step %d: limit force %g < 0", k, fs);
    peak = fmax(peak, fs);
  }
  CHECK(peak > 20 * M * g, "the drop's impact step carries the impulse M v (peak force %g)", peak);
  CHECK_CLOSE(s->d.sensordata[0], M * g, 1e-9 * M * g, 0, "at rest on the limit");
  sap_free(s);
  sap_freeModel(m);
}

/* sensors with a history (scenes/sensor_delay.xml: delays read with zero-order hold, linear and
 * cubic interpolation, intervals with and without a phase and a delay, a plain history, an
 * acceleration-stage and a force sensor), in lockstep with MuJoCo 4 under random controls,
 * MuJoCo set to sapsim's state at every step: the position/velocity sensordata of a state
 * equals mj_forward's, the acceleration-stage sensordata of a step equals mj_step's and every
 * history buffer equals mjData.history after the step; a reset in the middle (both reset) */
static void test_sensor_history(void) {
  mjModel* mj = fx_mjModel("scenes/sensor_delay.xml");
  if (!mj) return;
  mjData* md = mj_makeData(mj);
  sapModel* m = NULL;
  CHECK(sap_loadModel("scenes/sensor_delay.xml", &m) == SAP_OK, "%s", sap_lastError());
  sapOptions opt;
  sap_optionsDefault(&opt);
  sap_optionsSet(&opt, "preset", "approx64");
  opt.device = SAP_DEVICE_CPU;
  sapSim* s = NULL;
  CHECK(m && sap_create(m, &opt, 1, &s) == SAP_OK, "%s", sap_lastError());
  if (!s) { sap_freeModel(m); mj_deleteData(md); mj_deleteModel(mj); return; }
  CHECK(m->nhistory == mj->nhistory && m->nsensorhist == 9, "nhistory %d (MuJoCo %d), %d history sensors",
        m->nhistory, (int)mj->nhistory, m->nsensorhist);
  unsigned rng = 12345;
  double worst_pv = 0, worst_acc = 0, worst_hist = 0;
  int changed = 0;  /* steps where a delayed value differs from the plain one */
  for (int k = 0; k < 400; k++) {
    if (k == 200) {  /* both reset */
      sap_reset(s, -1, NULL);
      mj_resetData(mj, md);
    }
    /* MuJoCo at sapsim's state: the position/velocity sensors of the state */
    md->time = s->d.time[0];
    for (int u = 0; u < mj->nu; u++) {
      rng = rng * 1664525u + 1013904223u;
      s->d.ctrl[u] = md->ctrl[u] = 2.0 * ((rng >> 8) / 16777216.0) - 1.0;
    }
    fx_mjForwardAt(mj, md, s->d.qpos, s->d.qvel, NULL);
    for (int i = 0; i < mj->nsensor; i++) {
      if (mj->sensor_needstage[i] == mjSTAGE_ACC) continue;
      for (int j = mj->sensor_adr[i]; j < mj->sensor_adr[i] + mj->sensor_dim[i]; j++)
        worst_pv = fmax(worst_pv, fabs(s->d.sensordata[j] - md->sensordata[j]));
    }
    changed += s->d.sensordata[1] != s->d.sensordata[0];
    /* one step of each: the step's acceleration sensors and the recorded samples */
    mj_step(mj, md);
    CHECK(sap_step(s, 1) == SAP_OK, "%s", sap_lastError());
    for (int i = 0; i < mj->nsensor; i++) {
      if (mj->sensor_needstage[i] != mjSTAGE_ACC) continue;
      for (int j = mj->sensor_adr[i]; j < mj->sensor_adr[i] + mj->sensor_dim[i]; j++)
        worst_acc = fmax(worst_acc, fabs(s->d.sensordata[j] - md->sensordata[j]) / (1 + fabs(md->sensordata[j])));
    }
    for (int j = 0; j < mj->nhistory; j++)
      worst_hist = fmax(worst_hist, fabs(s->d.history[j] - md->history[j]) / (1 + fabs(md->history[j])));
  }
  fprintf(stderr, "  400 steps: position/velocity sensordata within %.2g of MuJoCo 4, acceleration stage %.2g "
          "(relative), history buffers %.2g; the delayed jointpos differs from the plain one in %d steps\n",
          worst_pv, worst_acc, worst_hist, changed);
  CHECK(worst_pv <= 1e-12, "position/velocity sensors differ from MuJoCo 4's by %g", worst_pv);
  CHECK(worst_acc <= 1e-9, "acceleration-stage sensors differ from MuJoCo 4's by %g", worst_acc);
  CHECK(worst_hist <= 1e-9, "history buffers differ from MuJoCo 4's by %g", worst_hist);
  CHECK(changed > 300, "the delay shows in only %d of 400 steps", changed);
  /* a set history must stay a ring the reads can search: a sensor's bad cursor is refused by name */
  double* h = malloc(sizeof(double) * m->nhistory), *h0 = malloc(sizeof(double) * m->nhistory);
  sap_get(s, SAP_FIELD_CTRL_HISTORY, NULL, 1, h0);
  memcpy(h, h0, sizeof(double) * m->nhistory);
  h[m->sensor_historyadr[1] + 1] = 2.5;
  CHECK(sap_set(s, SAP_FIELD_CTRL_HISTORY, NULL, 1, h) == SAP_ERR_ARG &&
            strstr(sap_lastError(), "sensor 'q_linear'") != NULL,
        "a fractional cursor: %s", sap_lastError());
  sap_get(s, SAP_FIELD_CTRL_HISTORY, NULL, 1, h);
  CHECK(memcmp(h, h0, sizeof(double) * m->nhistory) == 0, "a refused set changed the history");
  free(h);
  free(h0);
  sap_free(s);
  sap_freeModel(m);
  mj_deleteData(md);
  mj_deleteModel(mj);
}

/* the touch zone test: sapw_rayHitsZone against MuJoCo's mju_rayGeom on random rays (inside
 * and outside starts, all directions) for the five zone shapes with varied sizes */
static void test_ray_zone(void) {
  int types[5] = {mjGEOM_SPHERE, mjGEOM_CAPSULE, mjGEOM_ELLIPSOID, mjGEOM_CYLINDER, mjGEOM_BOX};
  double pos[3] = {0, 0, 0}, mat[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  int hits = 0, misses = 0;
  for (int t = 0; t < 5; t++)
    for (int trial = 0; trial < 4000; trial++) {
      double size[3], p[3], u[3];
      for (int k = 0; k < 3; k++) size[k] = exp(check_uniform(log(0.01), log(2)));
      double span = 3 * fmax(size[0], fmax(size[1], size[2]));
      /* half the rays aimed near the zone, so that hits and misses both happen */
      for (int k = 0; k < 3; k++) {
        p[k] = check_uniform(-span, span);
        u[k] = trial % 2 ? check_uniform(-1, 1) : check_uniform(-size[k], size[k]) - p[k];
      }
      mju_normalize3(u);
      int want = mju_rayGeom(pos, mat, size, p, u, types[t], NULL) >= 0;
      int got = sapw_rayHitsZone(types[t], size, p, u);
      hits += want;
      misses += !want;
      CHECK(got == want, "type %d size (%g %g %g) p (%g %g %g) u (%g %g %g): got %d want %d", types[t],
            size[0], size[1], size[2], p[0], p[1], p[2], u[0], u[1], u[2], got, want);
      if (got != want) return;
    }
  CHECK(hits > 1000 && misses > 1000, "rays hit %d, missed %d", hits, misses);
}

/* scenes/ant_sensors.xml (ant.xml plus an observation's sensors) against mj_forward */
static void test_ant_scene(void) {
  mjModel* mj = fx_mjModel("scenes/ant_sensors.xml");
  if (!mj) return;
  mjData* md = mj_makeData(mj);
  sapModel* m = NULL;
  CHECK(sap_loadModel("scenes/ant_sensors.xml", &m) == SAP_OK, "%s", sap_lastError());
  sapModel* plain = NULL;
  CHECK(sap_loadModel("scenes/ant.xml", &plain) == SAP_OK, "%s", sap_lastError());
  sapOptions opt;
  sap_optionsDefault(&opt);
  opt.device = SAP_DEVICE_CPU;
  sapSim *s = NULL, *s0 = NULL;
  CHECK(sap_create(m, &opt, 2, &s) == SAP_OK && sap_create(plain, &opt, 2, &s0) == SAP_OK, "%s", sap_lastError());
  if (s && s0) {
    CHECK(m->nsensor == 32 && m->nsensordata == 47, "ant sensors %d (%d values)", m->nsensor, m->nsensordata);
    sap_reset(s, 0, NULL);
    sap_reset(s0, 0, NULL);
    for (int i = 0; i < 2 * m->nu; i++) s->d.ctrl[i] = s0->d.ctrl[i] = sin(0.7 * i);
    sap_step(s, 100);
    sap_step(s0, 100);
    /* the sensors change nothing in the physics */
    CHECK(!memcmp(s->d.qpos, s0->d.qpos, sizeof(double) * 2 * m->nq), "ant_sensors moves unlike ant");
    for (int w = 0; w < 2; w++) {
      md->time = s->d.time[w];
      fx_mjForwardAt(mj, md, s->d.qpos + w * m->nq, s->d.qvel + w * m->nv, s->d.ctrl + w * m->nu);
      /* pos/vel sensors: exact; motor forces (explicit ctrl law): exact too */
      check_arrays("ant sensordata", s->d.sensordata + w * m->nsensordata, md->sensordata, m->nsensordata,
                   1e-9, 1e-9);
    }
  }
  sap_free(s);
  sap_free(s0);
  sap_freeModel(m);
  sap_freeModel(plain);
  mj_deleteData(md);
  mj_deleteModel(mj);
}

/* a mocap body's site: pose from mocap_pos/quat, zero velocity, accelerometer -g in the site
 * frame, as MuJoCo 4's mj_forward (which gives a mocap site no velocity or acceleration but
 * the world's) */
static void test_mocap_site(void) {
  const char* path = "/tmp/sapsim_test_sensors_mocap.xml";
  FILE* fp = fopen(path, "w");
  if (!fp) { CHECK(0, "cannot write %s", path); return; }
  fputs("<mujoco><option gravity='0.2 0.1 -9.81'/><worldbody><geom type='plane' size='3 3 .1'/>"
        "<body name='m' mocap='true' pos='0.3 0 0.5'><site name='ms' pos='0.1 0.2 0' quat='0.5 0.5 0.1 0.7' size='0.02'/></body>"
        "<body pos='0 0 0.2'><freejoint/><geom type='box' size='0.1 0.1 0.1'/></body></worldbody>"
        "<sensor><accelerometer site='ms'/><gyro site='ms'/><velocimeter site='ms'/>"
        "<framepos objtype='site' objname='ms'/><framequat objtype='site' objname='ms'/>"
        "<framelinvel objtype='site' objname='ms'/></sensor></mujoco>", fp);
  fclose(fp);
  fixture f;
  if (!open_fixture(&f, path, "approx64", 1, 1)) { close_fixture(&f); remove(path); return; }
  double mp[3] = {0.5, -0.2, 0.7}, mq[4] = {0.9, 0.1, -0.3, 0.2};
  CHECK(sap_set(f.s, SAP_FIELD_MOCAP_POS, NULL, 1, mp) == SAP_OK, "%s", sap_lastError());
  CHECK(sap_set(f.s, SAP_FIELD_MOCAP_QUAT, NULL, 1, mq) == SAP_OK, "%s", sap_lastError());
  sap_step(f.s, 5);
  to_mujoco(&f, 0, f.s->d.qpos, f.s->d.qvel);
  memcpy(f.md->mocap_pos, mp, sizeof(mp));
  memcpy(f.md->mocap_quat, mq, sizeof(mq));
  mj_forward(f.mj, f.md);
  check_arrays("mocap site sensors", f.s->d.sensordata, f.md->sensordata, f.m->nsensordata, 1e-12, 1e-12);
  CHECK(fabs(f.md->sensordata[0]) + fabs(f.md->sensordata[1]) + fabs(f.md->sensordata[2]) > 9,
        "MuJoCo's mocap accelerometer is not -g");
  close_fixture(&f);
  remove(path);
}

/* ---- refusals and cost ------------------------------------------------------------------ */

/* limit and energy sensors at chosen states: joints and the tendon placed inside their limits,
 * within the margins and beyond the range (both sides), random velocities, random base poses;
 * every position/velocity sensor against MuJoCo 4's mj_forward at the same state. Each limit
 * sensor must be seen both zero (no side within its margin) and nonzero on both sides, so the
 * comparison covers every branch of MuJoCo's rule */
static void test_limit_energy_states(void) {
  fixture f;
  if (!open_fixture(&f, SCENE, "approx64", 1, 1)) { close_fixture(&f); return; }
  const mjModel* mj = f.mj;
  int nq = f.m->nq, nv = f.m->nv;
  int h2 = mj_name2id(mj, mjOBJ_JOINT, "hinge2"), sl = mj_name2id(mj, mjOBJ_JOINT, "slide");
  int hi = mj_name2id(mj, mjOBJ_JOINT, "hinge"), ba = mj_name2id(mj, mjOBJ_JOINT, "ball");
  const char* lim[3] = {"lim_h2", "lim_slide", "lim_ten"};
  int seen[3][3] = {{0}};  /* [sensor][below 0 at the lower side, zero, below 0 at the upper side] */
  double* q = (double*)malloc(sizeof(double) * (nq + nv));
  double* v = q + nq;
  for (int k = 0; k < 300; k++) {
    memcpy(q, mj->qpos0, sizeof(double) * nq);
    for (int i = 0; i < 3; i++) q[i] = check_uniform(-0.5, 0.5);
    q[2] += 1;
    double quat[4];
    for (int i = 0; i < 4; i++) quat[i] = check_uniform(-1, 1);
    mju_normalize4(quat);
    memcpy(q + 3, quat, sizeof(quat));
    for (int i = 0; i < 4; i++) quat[i] = check_uniform(-1, 1);
    mju_normalize4(quat);
    memcpy(q + mj->jnt_qposadr[ba], quat, sizeof(quat));
    const double* r2 = mj->jnt_range + 2 * h2;
    const double* rs = mj->jnt_range + 2 * sl;
    q[mj->jnt_qposadr[h2]] = check_uniform(r2[0] - 0.2, r2[1] + 0.2);
    q[mj->jnt_qposadr[sl]] = check_uniform(rs[0] - 0.05, rs[1] + 0.05);
    q[mj->jnt_qposadr[hi]] = check_uniform(-1.5, 1.5);
    for (int i = 0; i < nv; i++) v[i] = check_uniform(-2, 2);
    CHECK(sap_set(f.s, SAP_FIELD_QPOS, NULL, 1, q) == SAP_OK, "%s", sap_lastError());
    CHECK(sap_set(f.s, SAP_FIELD_QVEL, NULL, 1, v) == SAP_OK, "%s", sap_lastError());
    CHECK(sap_get(f.s, SAP_FIELD_QPOS, NULL, 1, q) == SAP_OK, "%s", sap_lastError());  /* normalized */
    to_mujoco(&f, 0, q, v);
    mj_forward(f.mj, f.md);
    compare_stage(&f, 0, 0, NULL, 1e-12, "limit/energy states");
    for (int i = 0; i < 3; i++) {
      int id = sensor_id(mj, lim[i]);
      double x = f.s->d.sensordata[mj->sensor_adr[id]];
      double val = i == 2 ? f.md->ten_length[0] : q[mj->jnt_qposadr[i ? sl : h2]];
      const double* rg = i == 2 ? mj->tendon_range : mj->jnt_range + 2 * (i ? sl : h2);
      int side = x == 0 ? 1 : (val - rg[0] < rg[1] - val ? 0 : 2);
      seen[i][side]++;
    }
  }
  for (int i = 0; i < 3; i++)
    CHECK(seen[i][0] > 0 && seen[i][1] > 0 && seen[i][2] > 0,
          "%s: states seen at the lower side %d, free %d, at the upper side %d", lim[i], seen[i][0],
          seen[i][1], seen[i][2]);
  double ep = f.s->d.sensordata[mj->sensor_adr[sensor_id(mj, "epot")]];
  double ek = f.s->d.sensordata[mj->sensor_adr[sensor_id(mj, "ekin")]];
  CHECK(ep != 0 && ek > 0, "energies %g %g", ep, ek);
  free(q);
  close_fixture(&f);
}

static void expect_refused(const char* sensor_xml, const char* fragment) {
  char xml[2000];
  snprintf(xml, sizeof(xml),
           "<mujoco><worldbody><body><freejoint/><geom name='g' size='0.1'/><site name='s' size='0.1'/>"
           "<body><joint name='j'/><geom name='g2' size='0.1'/></body>"
           "<camera name='c' mode='track'/></body></worldbody><tendon><fixed name='t' range='-1 1'>"
           "<joint joint='j' coef='1'/></fixed></tendon><sensor>%s</sensor></mujoco>", sensor_xml);
  sapModel* m = NULL;
  sapStatus st = sap_loadModelString(xml, &m);
  CHECK(st == SAP_ERR_UNSUPPORTED, "%s: status %d (%s)", sensor_xml, st, sap_lastError());
  CHECK(strstr(sap_lastError(), fragment) != NULL, "%s: message '%s' lacks '%s'", sensor_xml,
        sap_lastError(), fragment);
  sap_freeModel(m);
}

static void test_refused(void) {
  expect_refused("<user name='u' dim='2'/>", "type user");
  expect_refused("<contact site='s' data='found linvel'/>", "data field 'linvel'");
  expect_refused("<camprojection site='s' camera='c'/>", "type camprojection");
  expect_refused("<framepos objtype='camera' objname='c'/>", "tracking camera");
}

/* a model without sensors: no sensordata, no sensor scratch, the same scratch as before */
/* per-world parameters reach the sensors: world 1 with its own body masses (non-uniform
 * factors, so the subtree centres of mass move) and gravity; its position/velocity sensors
 * (subtreecom, subtreelinvel, subtreeangmom among them) against MuJoCo 4 on the model edited
 * to those values, world 0 against the unedited model */
static void test_param_overrides(void) {
  fixture f;
  if (!open_fixture(&f, SCENE, "approx64", 2, 1)) { close_fixture(&f); return; }
  const sapModel* m = f.m;
  int nb = m->nbody, one = 1;
  double* mass = malloc(sizeof(double) * nb);
  double* mass0 = malloc(sizeof(double) * nb);
  memcpy(mass0, f.mj->body_mass, sizeof(double) * nb);
  for (int b = 0; b < nb; b++) mass[b] = mass0[b] * (0.5 + 0.9 * (b % 3) + 0.13 * b);
  double grav[3] = {0.7, -0.4, -5.5};
  CHECK(sap_setParam(f.s, SAP_PARAM_BODY_MASS, &one, 1, mass) == SAP_OK, "%s", sap_lastError());
  CHECK(sap_setParam(f.s, SAP_PARAM_GRAVITY, &one, 1, grav) == SAP_OK, "%s", sap_lastError());
  CHECK(sap_step(f.s, 12) == SAP_OK, "%s", sap_lastError());
  for (int w = 0; w < 2; w++) {
    memcpy(f.mj->body_mass, w ? mass : mass0, sizeof(double) * nb);
    for (int k = 0; k < 3; k++) f.mj->opt.gravity[k] = w ? grav[k] : m->gravity[k];
    mj_setConst(f.mj, f.md);  /* body_subtreemass and the other mass-derived constants */
    to_mujoco(&f, w, f.s->d.qpos + (size_t)w * m->nq, f.s->d.qvel + (size_t)w * m->nv);
    mj_forward(f.mj, f.md);
    compare_stage(&f, w, 0, NULL, 1e-9, w ? "overridden world" : "model world");
  }
  free(mass);
  free(mass0);
  close_fixture(&f);
}

static void test_no_sensors_no_cost(void) {
  sapModel* m = NULL;
  CHECK(sap_loadModel("scenes/humanoid.xml", &m) == SAP_OK, "%s", sap_lastError());
  if (!m) return;
  CHECK(m->nsensor == 0 && m->nsensordata == 0, "humanoid has sensors?");
  sapOptions opt;
  sap_optionsDefault(&opt);
  opt.device = SAP_DEVICE_CPU;
  CHECK(sapc_sensorScratchBytes(m, &opt, 64, 0) == 0 && sapc_sensorScratchBytes(m, &opt, 64, 1) == 0,
        "scratch reserved for no sensors");
  sap_freeModel(m);
}

int main(void) {
  mju_user_warning = NULL;
  RUN(test_oracle_approx64);
  RUN(test_oracle_drake);
  RUN(test_oracle_nocontact);
  RUN(test_oracle_approx32);
  RUN(test_reset_and_set);
  RUN(test_box_fall_and_rest);
  RUN(test_hanging_chain);
  RUN(test_servo_force);
  RUN(test_limit_force);
  RUN(test_sensor_history);
  RUN(test_ray_zone);
  RUN(test_mocap_site);
  RUN(test_ant_scene);
  RUN(test_limit_energy_states);
  RUN(test_refused);
  RUN(test_no_sensors_no_cost);
  RUN(test_param_overrides);
  return check_summary("test_sensors");
}
