/* MuJoCo's com-based body outputs (option body_outputs, kernels/body_out.h) and xfrc_applied:
 *  - cvel, cinert, subtree_com, qfrc_actuator against MuJoCo 4.0 (mj_forward) at hundreds of
 *    random states of scenes with free, ball, hinge and slide joints, after a state edit and
 *    after a step (the step's start state, as mjData after mj_step);
 *  - xfrc_applied: MuJoCo's trajectory with the same xfrc_applied and no contact (sap_euler is
 *    MuJoCo's semi-implicit Euler step), and MuJoCo's cfrc_ext (mj_rnePostConstraint) when only
 *    xfrc_applied acts;
 *  - the contact part of cfrc_ext: analytic (boxes of several masses, sizes and yaws at rest on a
 *    plane, a plank resting on two boxes: every body's external wrench is [0; m g] about its com)
 *    and two computations in the test: Newton-Euler from the step's velocity change of free
 *    boxes (F = m dv/h - m g - xfrc, R'tau = I dw/h + w x I w - R'xfrc_t) while they tumble, and
 *    the sum over sapsim's per-contact impulses at the witness points;
 *  - a masked reset: the reset worlds get their new state's outputs, the others keep their step's;
 *  - refusals: body outputs without the option, non-finite xfrc_applied (connect and weld
 *    forces: tests/test_eq_cfrc.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mujoco/mujoco.h>

#include "fixture.h"
#include "fixture_mj.h"
#include "sim.h"

static double urand(double a, double b) { return a + (b - a) * (rand() / (double)RAND_MAX); }

/* a random state of mj: joints around qpos0 (unit quaternions), velocities, controls */
static void random_state(const mjModel* mj, double* q, double* v, double* u) {
  for (int i = 0; i < mj->nq; i++) q[i] = mj->qpos0[i] + urand(-0.6, 0.6);
  for (int j = 0; j < mj->njnt; j++) {
    int a = mj->jnt_qposadr[j], t = mj->jnt_type[j];
    if (t == mjJNT_FREE) a += 3;
    if (t == mjJNT_FREE || t == mjJNT_BALL) {
      double n = 0;
      for (int k = 0; k < 4; k++) n += q[a + k] * q[a + k];
      for (int k = 0; k < 4; k++) q[a + k] /= sqrt(n);
    }
  }
  for (int i = 0; i < mj->nv; i++) v[i] = urand(-2, 2);
  for (int i = 0; i < mj->nu; i++) u[i] = urand(-1.2, 1.2);
}

/* worst |a - b| / (1 + max |b|) over n values */
static double rel_err(const double* a, const double* b, int n) {
  double e = 0, s = 0;
  for (int i = 0; i < n; i++) s = fmax(s, fabs(b[i]));
  for (int i = 0; i < n; i++) e = fmax(e, fabs(a[i] - b[i]));
  return e / (1 + s);
}

/* ball, slide, hinge and free joints in two trees, a massless-looking light link, actuators on
 * hinge, slide and a fixed tendon */
static const char* JOINT_ZOO =
    "<mujoco><option timestep='0.002' gravity='0.3 -0.2 -9.81'/><worldbody>"
    "<body name='a' pos='0.1 0.2 1'><joint type='ball'/><geom type='capsule' size='0.05' fromto='0 0 0 0.3 0 0' mass='1.3'/>"
    " <body name='b' pos='0.3 0 0' euler='10 20 30'><joint name='s' type='slide' axis='0 1 1'/>"
    "  <geom type='box' size='0.1 0.05 0.02' pos='0.05 0 0' mass='0.7'/>"
    "  <body name='c' pos='0.1 0 0'><joint name='h' type='hinge' axis='1 0.5 0' pos='0.02 0 0'/>"
    "   <geom type='sphere' size='0.04' pos='0 0.1 0' mass='0.2'/></body></body></body>"
    "<body name='d' pos='-1 0 2' euler='0 40 10'><freejoint/><geom type='ellipsoid' size='0.2 0.1 0.05' mass='2'/>"
    " <body name='e' pos='0.2 0 0'><joint name='h2' type='hinge' axis='0 0 1'/><geom type='box' size='0.1 0.02 0.02' pos='0.1 0 0' mass='0.4'/>"
    " </body></body></worldbody>"
    "<tendon><fixed name='t'><joint joint='h' coef='0.5'/><joint joint='h2' coef='-1.5'/></fixed></tendon>"
    "<actuator><motor joint='h' gear='3' ctrlrange='-1 1' ctrllimited='true'/><motor joint='s' gear='-2'/>"
    "<motor tendon='t' gear='1.5'/><position joint='h2' kp='20' kv='1'/></actuator></mujoco>";

/* cvel, cinert, subtree_com, qfrc_actuator of every world against mj_forward at (q, v, u) */
static void compare_state(const char* name, const mjModel* mj, mjData* md, sapSim* s, int nworld,
                          const double* q, const double* v, const double* u, double tol, double* worst) {
  int nb = mj->nbody, nv = mj->nv;
  double* got = (double*)malloc(sizeof(double) * nworld * 10 * nb);
  sapField f[4] = {SAP_FIELD_CVEL, SAP_FIELD_CINERT, SAP_FIELD_SUBTREE_COM, SAP_FIELD_QFRC_ACTUATOR};
  int size[4] = {6 * nb, 10 * nb, 3 * nb, nv};
  for (int k = 0; k < 4; k++) {
    for (int i = 0; i < nworld * size[k]; i++) got[i] = NAN;  /* poison */
    CHECK(sap_get(s, f[k], NULL, nworld, got) == SAP_OK, "%s: sap_get %s: %s", name, sap_fieldName(f[k]), sap_lastError());
    for (int w = 0; w < nworld; w++) {
      fx_mjForwardAt(mj, md, q + (size_t)w * mj->nq, v + (size_t)w * nv, u + (size_t)w * mj->nu);
      const double* want = k == 0 ? md->cvel : k == 1 ? md->cinert : k == 2 ? md->subtree_com : md->qfrc_actuator;
      double e = rel_err(got + (size_t)w * size[k], want, size[k]);
      worst[k] = fmax(worst[k], e);
      CHECK(e <= tol, "%s world %d: %s differs from MuJoCo's by %.3g (relative), allowed %.3g", name, w,
            sap_fieldName(f[k]), e, tol);
    }
  }
  free(got);
}

static void test_state_oracle(void) {
  const char* scenes[] = {"scenes/ant.xml", "scenes/humanoid.xml", JOINT_ZOO, "scenes/cartpole.xml"};
  const char* names[] = {"ant", "humanoid", "joint zoo", "cartpole"};
  int nworld = 60;
  srand(7);
  for (int sc = 0; sc < 4; sc++) {
    mjModel* mj = fx_mjModel(scenes[sc]);
    if (!mj) continue;
    mjData* md = mj_makeData(mj);
    for (int contacts = 0; contacts < 2; contacts++) {
      sapSim* s = fx_sim(scenes[sc], nworld, contacts ? "preset=approx64 body_outputs=1"
                                                       : "preset=approx64 body_outputs=1 contacts=0");
      if (!s) continue;
      int nq = mj->nq, nv = mj->nv, nu = mj->nu;
      double* q = (double*)malloc(sizeof(double) * nworld * (nq + nv + nu));
      double *v = q + nworld * nq, *u = v + nworld * nv;
      for (int w = 0; w < nworld; w++) random_state(mj, q + w * nq, v + w * nv, u + w * nu);
      sap_set(s, SAP_FIELD_CTRL, NULL, nworld, u);
      sap_set(s, SAP_FIELD_QPOS, NULL, nworld, q);
      sap_set(s, SAP_FIELD_QVEL, NULL, nworld, v);
      double worst[4] = {0, 0, 0, 0};
      /* after a state edit: the new state's (mj_forward) */
      compare_state(names[sc], mj, md, s, nworld, q, v, u, 1e-13, worst);
      /* after a step: its start state's (mjData after mj_step); qfrc_actuator of motors only:
       * SAP drives are implicit (their impulse / h), checked in test_drive_force */
      if (!contacts) {
        CHECK(sap_step(s, 1) == SAP_OK, "step: %s", sap_lastError());
        int drives = 0;
        for (int a = 0; a < mj->nu; a++) drives += mj->actuator_biastype[a] != mjBIAS_NONE;
        if (!drives) compare_state(names[sc], mj, md, s, nworld, q, v, u, 1e-13, worst);
      }
      fprintf(stderr, "  %s (contacts %d, %d random states): worst relative error cvel %.2g, cinert %.2g, "
              "subtree_com %.2g, qfrc_actuator %.2g\n", names[sc], contacts, nworld, worst[0], worst[1], worst[2], worst[3]);
      free(q);
      sap_free(s);
    }
    mj_deleteData(md);
    mj_deleteModel(mj);
  }
}

/* a SAP drive's qfrc_actuator after a step is its impulse / h: at a static equilibrium (a
 * position servo holding a pendulum against gravity, contacts on so that the drive is solved),
 * the actuator's generalized force balances gravity's torque m g l sin(q) exactly */
static void test_drive_force(void) {
  const char* xml =
      "<mujoco><option timestep='0.005'/><worldbody><body><joint name='j' type='hinge' axis='0 1 0'/>"
      "<geom type='sphere' size='0.05' pos='0 0 -0.8' mass='1.7'/></body></worldbody>"
      "<actuator><position joint='j' kp='400' kv='30'/></actuator></mujoco>";
  sapSim* s = fx_sim(xml, 1, "preset=approx64 body_outputs=1 optimality_rel_tol=1e-13 cost_rel_tol=0");
  if (!s) return;
  double target = 0.6, f = NAN;
  sap_set(s, SAP_FIELD_CTRL, NULL, 1, &target);
  CHECK(sap_step(s, 4000) == SAP_OK, "step: %s", sap_lastError());
  double q;
  sap_get(s, SAP_FIELD_QPOS, NULL, 1, &q);
  sap_get(s, SAP_FIELD_QFRC_ACTUATOR, NULL, 1, &f);
  double want = 1.7 * 9.81 * 0.8 * sin(q);  /* holds the weight's torque about the hinge */
  fprintf(stderr, "  position servo at rest q %.6f: qfrc_actuator %.9g, m g l sin q %.9g\n", q, f, want);
  CHECK(fabs(f - want) <= 1e-7 * want, "drive force %.12g, static torque %.12g", f, want);
  sap_free(s);
}

/* a planar chain of slide and hinge joints (sap_euler is MuJoCo's Euler step exactly for them;
 * quaternions are updated to first order, MuJoCo's by the exponential map) */
static const char* HINGE_CHAIN =
    "<mujoco><option timestep='0.001' gravity='0 0 -9.81'/><worldbody>"
    "<body pos='0 0 1'><joint type='slide' axis='1 0 0'/><joint type='slide' axis='0 0 1'/>"
    "<geom type='box' size='0.2 0.1 0.05' mass='3'/>"
    " <body pos='0.2 0 0' euler='0 30 0'><joint type='hinge' axis='0 1 0'/><geom type='capsule' fromto='0 0 0 0.3 0 0' size='0.04' mass='1.2'/>"
    "  <body pos='0.3 0 0'><joint type='hinge' axis='0 1 0' damping='0.3'/><geom type='capsule' fromto='0 0 0 0.25 0 0' size='0.03' mass='0.8'/>"
    "  </body></body></body></worldbody></mujoco>";

/* xfrc_applied without contacts against MuJoCo (Euler, contacts off): each step from sapsim's
 * state (qvel after the step, cfrc_ext of mj_rnePostConstraint at the step's start state), and
 * the whole trajectory of the hinge/slide chain */
static void test_xfrc_trajectory(void) {
  const char* scenes[] = {JOINT_ZOO, HINGE_CHAIN};
  for (int sc = 0; sc < 2; sc++) {
    mjModel* mj = fx_mjModel(scenes[sc]);
    if (!mj) continue;
    mj->opt.integrator = mjINT_EULER;
    mj->opt.disableflags |= mjDSBL_CONTACT;
    mjData* md = mj_makeData(mj);
    mjData* mt = mj_makeData(mj);  /* the trajectory, never reset to sapsim's state */
    sapSim* s = fx_sim(scenes[sc], 1, "preset=approx64 body_outputs=1 contacts=0 integration=sap_euler");
    if (!s) continue;
    int nb = mj->nbody, nq = mj->nq, nv = mj->nv;
    double* xf = (double*)calloc(6 * nb, sizeof(double));
    double* q = (double*)malloc(sizeof(double) * (nq + nv + 6 * nb));
    double *v = q + nq, *cf = v + nv;
    srand(11 + sc);
    sap_get(s, SAP_FIELD_QPOS, NULL, 1, mt->qpos);  /* the same start (the scene's qpos0) */
    double ev = 0, ec = 0, eq = 0, d0 = 0;
    int nstep = 300;
    for (int k = 0; k < nstep; k++) {
      if (k % 50 == 0) {  /* new forces now and then: force up to 3 N, torque up to 0.3 N m */
        for (int b = 1; b < nb; b++)
          for (int i = 0; i < 6; i++) xf[6 * b + i] = urand(-3, 3) * (i < 3 ? 1 : 0.1);
        CHECK(sap_set(s, SAP_FIELD_XFRC_APPLIED, NULL, 1, xf) == SAP_OK, "set xfrc: %s", sap_lastError());
        mju_copy(md->xfrc_applied, xf, 6 * nb);
        mju_copy(mt->xfrc_applied, xf, 6 * nb);
      }
      sap_get(s, SAP_FIELD_QPOS, NULL, 1, md->qpos);
      sap_get(s, SAP_FIELD_QVEL, NULL, 1, md->qvel);
      CHECK(sap_step(s, 1) == SAP_OK, "step: %s", sap_lastError());
      mj_step(mj, md);
      mj_rnePostConstraint(mj, md);  /* cfrc_ext at the step's start state, as Gymnasium calls it */
      mj_step(mj, mt);
      sap_get(s, SAP_FIELD_QPOS, NULL, 1, q);
      sap_get(s, SAP_FIELD_QVEL, NULL, 1, v);
      sap_get(s, SAP_FIELD_CFRC_EXT, NULL, 1, cf);
      ev = fmax(ev, rel_err(v, md->qvel, nv));
      ec = fmax(ec, rel_err(cf, md->cfrc_ext, 6 * nb));
      if (sc == 1) eq = fmax(eq, fmax(rel_err(q, mt->qpos, nq), rel_err(v, mt->qvel, nv)));
      /* MuJoCo's step without the forces: they must matter at this tolerance */
      mju_zero(md->xfrc_applied, 6 * nb);
      sap_get(s, SAP_FIELD_QPOS, NULL, 1, md->qpos);
      mju_copy(md->qvel, v, nv);
      mj_forward(mj, md);
      mju_copy(md->xfrc_applied, xf, 6 * nb);
    }
    mj_step(mj, md);
    d0 = rel_err(v, md->qvel, nv);
    fprintf(stderr, "  xfrc_applied, %s, %d Euler steps: worst relative error per step qvel %.2g, cfrc_ext %.2g; "
            "trajectory %.2g\n", sc ? "hinge/slide chain" : "joint zoo", nstep, ev, ec, eq);
    CHECK(ev <= 1e-12, "qvel after a step off MuJoCo's by %.3g", ev);
    CHECK(ec <= 1e-12, "cfrc_ext off MuJoCo's by %.3g", ec);
    CHECK(eq <= 1e-10, "trajectory off MuJoCo's by %.3g", eq);
    CHECK(d0 > 1e-6, "the applied forces barely change a step (%.3g)", d0);
    /* a reset clears xfrc_applied and cfrc_ext (MuJoCo's mj_resetData) */
    CHECK(sap_reset(s, -1, NULL) == SAP_OK, "reset: %s", sap_lastError());
    for (int i = 0; i < 6 * nb; i++) cf[i] = NAN;
    sap_get(s, SAP_FIELD_XFRC_APPLIED, NULL, 1, cf);
    double mx = 0;
    for (int i = 0; i < 6 * nb; i++) mx = fmax(mx, fabs(cf[i]));
    sap_get(s, SAP_FIELD_CFRC_EXT, NULL, 1, cf);
    for (int i = 0; i < 6 * nb; i++) mx = fmax(mx, fabs(cf[i]));
    CHECK(mx == 0, "after a reset xfrc_applied / cfrc_ext hold %g", mx);
    free(xf);
    free(q);
    sap_free(s);
    mj_deleteData(md);
    mj_deleteData(mt);
    mj_deleteModel(mj);
  }
}

/* boxes on a plane (free bodies whose frame is their com) */
typedef struct { double m, sx, sy, sz, yaw, x, y, z; } boxSpec;

static const char* box_scene(const boxSpec* b, int n, char* xml, int cap) {
  int len = snprintf(xml, cap, "<mujoco><option timestep='0.002'/><worldbody>"
                               "<geom type='plane' size='10 10 0.1' friction='0.8'/>");
  for (int i = 0; i < n; i++)
    len += snprintf(xml + len, cap - len, "<body pos='%.17g %.17g %.17g' euler='0 0 %.17g'><freejoint/>"
                    "<geom type='box' size='%.17g %.17g %.17g' mass='%.17g' friction='0.8'/></body>",
                    b[i].x, b[i].y, b[i].z, b[i].yaw, b[i].sx, b[i].sy, b[i].sz, b[i].m);
  snprintf(xml + len, cap - len, "</worldbody></mujoco>");
  return xml;
}

/* at rest every box's external wrench balances its weight: cfrc_ext = [0; m g ez] about its com
 * (the root's subtree com), xfrc_applied included */
static void test_contact_rest(void) {
  boxSpec single[4][1] = {{{1, 0.1, 0.1, 0.1, 0, 0, 0, 0.1}},
                          {{7.5, 0.3, 0.05, 0.02, 37, 1, -2, 0.02}},
                          {{0.02, 0.01, 0.02, 0.03, -71, -0.5, 0.3, 0.03}},
                          {{120, 0.5, 0.4, 0.25, 12, 3, 3, 0.25}}};
  /* a plank on two boxes */
  boxSpec bridge[3] = {{2, 0.1, 0.1, 0.1, 0, -0.4, 0, 0.1}, {3.5, 0.12, 0.1, 0.1, 5, 0.4, 0, 0.1},
                       {1.2, 0.6, 0.08, 0.02, 0, 0.05, 0, 0.22}};
  char xml[4096];
  for (int c = 0; c < 5; c++) {
    const boxSpec* b = c < 4 ? single[c] : bridge;
    int n = c < 4 ? 1 : 3, nb = n + 1;
    sapSim* s = fx_sim(box_scene(b, n, xml, sizeof(xml)), 1, "preset=approx64 body_outputs=1");
    if (!s) continue;
    /* a sideways push below the friction limit on the first box, and a small torque */
    double xf[6 * 4] = {0};
    double push = 0.2 * 0.8 * b[0].m * 9.81;
    xf[6] = push;
    xf[7] = -0.5 * push;
    xf[11] = 0.01 * push * b[0].sx;
    sap_set(s, SAP_FIELD_XFRC_APPLIED, NULL, 1, xf);
    CHECK(sap_step(s, 2500) == SAP_OK, "step: %s", sap_lastError());
    double cf[6 * 4], com[3 * 4], v[6 * 3];
    sap_get(s, SAP_FIELD_CFRC_EXT, NULL, 1, cf);
    sap_get(s, SAP_FIELD_SUBTREE_COM, NULL, 1, com);
    sap_get(s, SAP_FIELD_QVEL, NULL, 1, v);
    double vmax = 0;
    for (int i = 0; i < 6 * n; i++) vmax = fmax(vmax, fabs(v[i]));
    for (int i = 1; i < nb; i++) {
      double mg = b[i - 1].m * 9.81, L = fmax(b[i - 1].sx, fmax(b[i - 1].sy, b[i - 1].sz));
      double* F = cf + 6 * i;
      fprintf(stderr, "  rest case %d body %d (m %g, |v| < %.1e): cfrc_ext torque %.3g %.3g %.3g, force %.6g %.6g %.9g "
              "(m g %.9g)\n", c, i, b[i - 1].m, vmax, F[0], F[1], F[2], F[3], F[4], F[5], mg);
      for (int k = 0; k < 3; k++) {
        CHECK(fabs(F[3 + k] - (k == 2 ? mg : 0)) <= 1e-6 * mg, "case %d body %d: force[%d] %.12g, want %.12g", c, i, k,
              F[3 + k], k == 2 ? mg : 0);
        CHECK(fabs(F[k]) <= 1e-6 * mg * L, "case %d body %d: torque[%d] %.3g about the com, want 0", c, i, k, F[k]);
      }
    }
    sap_free(s);
  }
}

/* tumbling boxes: cfrc_ext against Newton-Euler on the step's velocity change and against the
 * sum over sapsim's per-contact impulses (read from the solver's scratch) at the witness points */
static void test_contact_dynamics(void) {
  boxSpec b[3] = {{1.5, 0.1, 0.07, 0.05, 20, 0, 0, 0.3}, {0.4, 0.05, 0.05, 0.12, -50, 0.6, 0.1, 0.4},
                  {6, 0.3, 0.2, 0.1, 80, -0.5, 0.4, 0.5}};
  char xml[4096];
  sapSim* s = fx_sim(box_scene(b, 3, xml, sizeof(xml)), 1, "preset=approx64 body_outputs=1 contact_point=witness_point "
                                                        "optimality_rel_tol=1e-13 cost_rel_tol=0 max_iterations=500");
  if (!s) return;
  const sapModel* m = sap_model(s);
  int nb = 4;
  double v0[18], v1[18], qp[21], xf[24] = {0};
  srand(5);
  for (int i = 0; i < 18; i++) v0[i] = urand(-3, 3);
  for (int k = 0; k < 3; k++) v0[6 * k + 2] = -fabs(v0[6 * k + 2]);  /* downwards */
  sap_set(s, SAP_FIELD_QVEL, NULL, 1, v0);
  double e_ne = 0, e_imp = 0, fmax_seen = 0;
  int ncontact_steps = 0;
  for (int step = 0; step < 400; step++) {
    for (int i = 6; i < 24; i++) xf[i] = urand(-2, 2);
    sap_set(s, SAP_FIELD_XFRC_APPLIED, NULL, 1, xf);
    sap_get(s, SAP_FIELD_QVEL, NULL, 1, v0);
    CHECK(sap_step(s, 1) == SAP_OK, "step: %s", sap_lastError());
    sap_get(s, SAP_FIELD_QVEL, NULL, 1, v1);
    sap_get(s, SAP_FIELD_QPOS, NULL, 1, qp);
    const sapData* d = sap_data(s);
    double h = 0.002, cf[24], com[12];
    sap_get(s, SAP_FIELD_CFRC_EXT, NULL, 1, cf);
    sap_get(s, SAP_FIELD_SUBTREE_COM, NULL, 1, com);
    /* Newton-Euler: box frame = com, free joint: v world linear, w body angular; R of the step's start */
    for (int i = 1; i < nb; i++) {
      double mass = m->body_mass[i], *I = m->body_inertia + 3 * i;
      const double* R = d->xmat + 9 * i;
      const double *w0 = v0 + 6 * (i - 1) + 3, *w1 = v1 + 6 * (i - 1) + 3;
      double F[3], tb[3], tw[3], Iw[3] = {I[0] * w0[0], I[1] * w0[1], I[2] * w0[2]};
      for (int k = 0; k < 3; k++) F[k] = mass * (v1[6 * (i - 1) + k] - v0[6 * (i - 1) + k]) / h + (k == 2 ? mass * 9.81 : 0);
      double wxIw[3] = {w0[1] * Iw[2] - w0[2] * Iw[1], w0[2] * Iw[0] - w0[0] * Iw[2], w0[0] * Iw[1] - w0[1] * Iw[0]};
      for (int k = 0; k < 3; k++) tb[k] = I[k] * (w1[k] - w0[k]) / h + wxIw[k];
      for (int k = 0; k < 3; k++) tw[k] = R[3 * k] * tb[0] + R[3 * k + 1] * tb[1] + R[3 * k + 2] * tb[2];
      /* the solve meets its optimality tolerance relative to the step's forces */
      double scale = mass * 9.81 + 1 + fabs(F[0]) + fabs(F[1]) + fabs(F[2]) + fabs(tw[0]) + fabs(tw[1]) + fabs(tw[2]);
      for (int k = 0; k < 3; k++) {
        e_ne = fmax(e_ne, fabs(cf[6 * i + 3 + k] - F[k]) / scale);
        e_ne = fmax(e_ne, fabs(cf[6 * i + k] - tw[k]) / scale);
        fmax_seen = fmax(fmax_seen, fabs(F[k] - xf[6 * i + k]));
      }
    }
    /* per-contact impulses: frame' gamma / h on geom 1's body at its witness, minus on geom 0's */
    double mine[24] = {0};
    for (int i = 1; i < nb; i++)
      for (int k = 0; k < 3; k++) {
        double r[3] = {d->xipos[3 * i] - com[3 * i], d->xipos[3 * i + 1] - com[3 * i + 1], d->xipos[3 * i + 2] - com[3 * i + 2]};
        const double* f = xf + 6 * i;
        double rf[3] = {r[1] * f[2] - r[2] * f[1], r[2] * f[0] - r[0] * f[2], r[0] * f[1] - r[1] * f[0]};
        mine[6 * i + k] += f[3 + k] + rf[k];
        mine[6 * i + 3 + k] += f[k];
      }
    const double* gam = (const double*)(d->scratch + s->sensor_gam_off);
    int nc = d->ncon[0];
    if (nc) ncontact_steps++;
    for (int c = 0; c < nc; c++) {
      const double* fr = d->con_frame + 9 * c;
      double f[3];
      for (int k = 0; k < 3; k++) f[k] = (fr[k] * gam[3 * c] + fr[3 + k] * gam[3 * c + 1] + fr[6 + k] * gam[3 * c + 2]) / h;
      for (int side = 0; side < 2; side++) {
        int body = m->geom_bodyid[d->con_geom[2 * c + side]];
        if (!body) continue;
        double sg = side ? 1 : -1, r[3];
        for (int k = 0; k < 3; k++) r[k] = d->con_pos[6 * c + 3 * side + k] - com[3 * body + k];
        double rf[3] = {r[1] * f[2] - r[2] * f[1], r[2] * f[0] - r[0] * f[2], r[0] * f[1] - r[1] * f[0]};
        for (int k = 0; k < 3; k++) {
          mine[6 * body + k] += sg * rf[k];
          mine[6 * body + 3 + k] += sg * f[k];
        }
      }
    }
    e_imp = fmax(e_imp, rel_err(cf, mine, 24));
  }
  fprintf(stderr, "  tumbling boxes, 400 steps (%d with contacts, contact forces up to %.3g N): cfrc_ext vs "
          "Newton-Euler %.2g, vs per-contact sum %.2g (relative)\n", ncontact_steps, fmax_seen, e_ne, e_imp);
  CHECK(ncontact_steps > 100 && fmax_seen > 10, "the boxes barely touched (%d steps, %.3g N)", ncontact_steps, fmax_seen);
  /* Newton-Euler holds to the solve's momentum residual (the impulses and v_{n+1} of a converged
   * Newton iterate, about 1e-7 of the step's forces at optimality_rel_tol=1e-13); the sum over
   * the impulses is exact. Without the contact part cfrc_ext would miss forces of ~1e3 N. */
  CHECK(e_ne <= 1e-6, "cfrc_ext off Newton-Euler by %.3g", e_ne);
  CHECK(e_imp <= 1e-12, "cfrc_ext off the per-contact sum by %.3g", e_imp);
  sap_free(s);
}

/* a masked reset: the reset worlds get their new state's outputs (cinert of MuJoCo's mj_forward at
 * qpos0, cfrc_ext 0), the others keep those of their last step */
static void test_masked_reset(void) {
  enum { N = 3 };
  mjModel* mj = fx_mjModel("scenes/ant.xml");
  sapSim* s = fx_sim("scenes/ant.xml", N, "preset=approx64 body_outputs=1");
  if (!mj || !s) return;
  int nb = mj->nbody;
  double u[N * 8];
  for (int i = 0; i < N * 8; i++) u[i] = sin(0.7 * i);
  sap_set(s, SAP_FIELD_CTRL, NULL, N, u);
  CHECK(sap_step(s, 60) == SAP_OK, "step: %s", sap_lastError());
  double cf0[N * 6 * 14], ci0[N * 10 * 14], cf1[N * 6 * 14], ci1[N * 10 * 14];
  sap_get(s, SAP_FIELD_CFRC_EXT, NULL, N, cf0);
  sap_get(s, SAP_FIELD_CINERT, NULL, N, ci0);
  double fsum = 0;
  for (int i = 0; i < N * 6 * nb; i++) fsum += fabs(cf0[i]);
  CHECK(fsum > 1, "the ant does not touch the floor after 60 steps (|cfrc_ext| %g)", fsum);
  unsigned char mask[N] = {0, 1, 0};
  CHECK(sap_reset(s, -1, mask) == SAP_OK, "reset: %s", sap_lastError());
  sap_get(s, SAP_FIELD_CFRC_EXT, NULL, N, cf1);
  sap_get(s, SAP_FIELD_CINERT, NULL, N, ci1);
  mjData* md = mj_makeData(mj);
  mj_forward(mj, md);  /* qpos0 */
  for (int w = 0; w < N; w++) {
    const double* want_cf = mask[w] ? NULL : cf0 + 6 * nb * w;
    const double* want_ci = mask[w] ? md->cinert : ci0 + 10 * nb * w;
    for (int i = 0; i < 6 * nb; i++)
      CHECK(cf1[6 * nb * w + i] == (want_cf ? want_cf[i] : 0), "world %d cfrc_ext[%d] %g after the masked reset", w, i,
            cf1[6 * nb * w + i]);
    double e = rel_err(ci1 + 10 * nb * w, want_ci, 10 * nb);
    CHECK(mask[w] ? e <= 1e-13 : e == 0, "world %d cinert off by %.3g after the masked reset", w, e);
  }
  mj_deleteData(md);
  mj_deleteModel(mj);
  sap_free(s);
}

static void test_refusals(void) {
  sapSim* s = fx_sim("scenes/ant.xml", 2, "");
  if (s) {
    double buf[6 * 14 * 2];
    CHECK(sap_get(s, SAP_FIELD_CFRC_EXT, NULL, 2, buf) == SAP_ERR_ARG && strstr(sap_lastError(), "body_outputs=1"),
          "cfrc_ext without the option: %s", sap_lastError());
    memset(buf, 0, sizeof(buf));
    buf[6 * 14 + 6 * 3 + 4] = NAN;
    CHECK(sap_set(s, SAP_FIELD_XFRC_APPLIED, NULL, 2, buf) == SAP_ERR_NONFINITE &&
              strstr(sap_lastError(), "xfrc_applied of world 1, index 22"),
          "non-finite xfrc_applied: %s", sap_lastError());
    /* written in place: sap_checkInputs names it, a step refuses the world */
    int count;
    sapArrayType type;
    double* x = (double*)sap_dataArray(s, "xfrc_applied", &count, &type);
    CHECK(x && count == 6 * 14, "xfrc_applied array: count %d", count);
    if (x) {
      x[count + 9] = INFINITY;
      CHECK(sap_checkInputs(s) == SAP_ERR_NONFINITE && strstr(sap_lastError(), "xfrc_applied of world 1"),
            "checkInputs: %s", sap_lastError());
      sap_step(s, 1);
      CHECK(sap_data(s)->world_flags[1] & SAP_WORLD_BADINPUT, "world 1 was stepped with an infinite xfrc_applied");
      x[count + 9] = 0;
    }
    sap_free(s);
  }
}

int main(void) {
  RUN(test_state_oracle);
  RUN(test_drive_force);
  RUN(test_xfrc_trajectory);
  RUN(test_contact_rest);
  RUN(test_contact_dynamics);
  RUN(test_masked_reset);
  RUN(test_refusals);
  return check_summary("test_body_outputs");
}
