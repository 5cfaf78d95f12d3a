/* Spatial tendons that wrap spheres and cylinders and pass pulleys (kernels/tendon.h, a port
 * of MuJoCo 4's mj_tendon / mju_wrap), and everything that acts on them:
 *  - length and Jacobian at 384 random states of scenes/tendon_wrap.xml (radii 5 mm .. 0.5 m,
 *    tilted cylinders, pulleys, hinge/ball/slide paths) against MuJoCo 4.0's ten_length and
 *    ten_J; every geom wrap must be seen both wrapped and straight (MuJoCo's wrap_obj); a 1e-6
 *    change of one radius must show (the comparison can fail);
 *  - qfrc_passive (tendon springs with a dead band, dampers), qfrc_actuator and actuator_moment
 *    (muscles with MuJoCo's lengthrange and acc0, motors, general, position and velocity
 *    servos, explicit without contacts), and the tendon/actuator sensors against mj_forward;
 *  - the Jacobian against central differences of sapsim's own length;
 *  - 1500-step trajectories of scenes/muscle_arm.xml (six muscles on wrapping tendons) under
 *    random controls against mj_step (integration=sap_euler, no contacts: MuJoCo's Euler);
 *  - the SAP rows on spatial tendons: a tendon limit, frictionloss and a tendon equality on a
 *    pendulum whose tendon wraps a cylinder on its axis (length c + r theta: analytic stop
 *    angle, stick/slip threshold f r vs m g l sin theta, coupled lengths). */
#include <math.h>
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "sap_solve.h"
#include "sim.h"

#define SCENE "scenes/tendon_wrap.xml"
#define ARM "scenes/muscle_arm.xml"
#define NW 64
#define NREP 6

static mjModel* mj_load(const char* path) {
  char err[1000];
  mjModel* mj = mj_loadXML(path, NULL, err, sizeof(err));
  CHECK(mj != NULL, "%s: %s", path, err);
  return mj;
}

/* random state of world w: hinges and slides inside their ranges widened by 20 %, unit
 * quaternions, velocities in [-2, 2], controls beyond their ranges, act in [0, 1] */
static void random_state(const mjModel* mj, double* q, double* v, double* u, double* a) {
  for (int j = 0; j < mj->njnt; j++) {
    int k = mj->jnt_qposadr[j], t = mj->jnt_type[j];
    if (t == mjJNT_BALL || t == mjJNT_FREE) {
      if (t == mjJNT_FREE) for (int i = 0; i < 3; i++) q[k++] = check_uniform(-0.5, 0.5);
      double n = 0;
      for (int i = 0; i < 4; i++) { q[k + i] = check_uniform(-1, 1); n += q[k + i] * q[k + i]; }
      for (int i = 0; i < 4; i++) q[k + i] /= sqrt(n);
    } else {
      double lo = mj->jnt_limited[j] ? mj->jnt_range[2 * j] : -3, hi = mj->jnt_limited[j] ? mj->jnt_range[2 * j + 1] : 3;
      double c = 0.5 * (lo + hi), r = 0.6 * (hi - lo);
      q[k] = check_uniform(c - r, c + r);
    }
  }
  for (int i = 0; i < mj->nv; i++) v[i] = check_uniform(-2, 2);
  for (int i = 0; i < mj->nu; i++) {
    double lo = mj->actuator_ctrlrange[2 * i], hi = mj->actuator_ctrlrange[2 * i + 1];
    u[i] = mj->actuator_ctrllimited[i] ? check_uniform(lo - 0.2, hi + 0.2) : check_uniform(-1, 1);
  }
  for (int i = 0; i < mj->na; i++) a[i] = check_uniform(0, 1);
}

/* MuJoCo's tendon t Jacobian, dense */
static void mj_tenJ(const mjModel* mj, const mjData* md, int t, double* J) {
  for (int i = 0; i < mj->nv; i++) J[i] = 0;
  for (int k = 0; k < mj->ten_J_rownnz[t]; k++) J[mj->ten_J_colind[mj->ten_J_rowadr[t] + k]] = md->ten_J[mj->ten_J_rowadr[t] + k];
}

/* sapsim's tendon t length and dense Jacobian in world w (the row every SAP constraint uses) */
static double sap_tenJ(const sapModel* m, const sapData* d, int w, int t, double* J) {
  int nv = m->nv, nb = m->nbody, idx[64], ok = 1;
  double val[64];
  sapRow row = sapw_row(idx, val, 0, nv);
  double len = sapw_anyTendonRow(m, d->qpos + (long)w * m->nq, d->xpos + (long)w * 3 * nb, d->xmat + (long)w * 9 * nb,
                                 d->cref + (long)w * 3 * nb, d->cdof + (long)w * 6 * nv, t, 1, &row, &ok);
  CHECK(ok, "tendon %d: row overflow", t);
  for (int i = 0; i < nv; i++) J[i] = 0;
  for (int k = 0; k < row.n; k++) J[row.idx[k]] += row.val[k];
  return len;
}

static void set_state(sapSim* s, const double* q, const double* v, const double* u, const double* a) {
  CHECK_OK(sap_set(s, SAP_FIELD_QPOS, NULL, NW, q));
  CHECK_OK(sap_set(s, SAP_FIELD_QVEL, NULL, NW, v));
  CHECK_OK(sap_set(s, SAP_FIELD_CTRL, NULL, NW, u));
  if (sap_model(s)->na) CHECK_OK(sap_set(s, SAP_FIELD_ACT, NULL, NW, a));
}

static void test_vs_mujoco(void) {
  mjModel* mj = mj_load(SCENE);
  sapModel* m = fx_model(SCENE);
  sapSim* s = m ? fx_simModel(m, NW, "preset=approx64 contacts=0") : NULL;
  if (!mj || !s) return;
  mjData* md = mj_makeData(mj);
  int nq = mj->nq, nv = mj->nv, nu = mj->nu, na = mj->na, nt = mj->ntendon, ns = mj->nsensordata;
  double *q = malloc(sizeof(double) * NW * nq), *v = malloc(sizeof(double) * NW * nv);
  double *u = malloc(sizeof(double) * NW * nu), *a = malloc(sizeof(double) * NW * (na + 1));
  double *sens = malloc(sizeof(double) * NW * ns), *sens2 = malloc(sizeof(double) * NW * ns);
  double J[64], Jm[64], worst_l = 0, worst_j = 0, worst_f = 0, worst_s = 0;
  int wrapped[64][2] = {{0}};
  const double tolJ = 1e-11, tolF = 1e-11;
  const sapData* d = sap_data(s);
  for (int rep = 0; rep < NREP; rep++) {
    for (int w = 0; w < NW; w++) random_state(mj, q + w * nq, v + w * nv, u + w * nu, a + w * na);
    set_state(s, q, v, u, a);
    sapc_kinematics(s);
    sapc_freeMotion(s);  // cref, cdof, qfrc_passive, qfrc_actuator (drives explicit: no contacts)
    CHECK_OK(sap_get(s, SAP_FIELD_SENSORDATA, NULL, NW, sens));
    for (int w = 0; w < NW; w++) {
      memcpy(md->qpos, q + w * nq, sizeof(double) * nq);
      memcpy(md->qvel, v + w * nv, sizeof(double) * nv);
      memcpy(md->ctrl, u + w * nu, sizeof(double) * nu);
      memcpy(md->act, a + w * na, sizeof(double) * na);
      mj_forward(mj, md);
      for (int t = 0; t < nt; t++) {
        double len = sap_tenJ(m, d, w, t, J);
        mj_tenJ(mj, md, t, Jm);
        double sc = fmax(1, md->ten_length[t]);
        worst_l = fmax(worst_l, fabs(len - md->ten_length[t]) / sc);
        CHECK(fabs(len - md->ten_length[t]) <= 1e-12 * sc, "rep %d world %d tendon %d: length %.15g, MuJoCo %.15g",
              rep, w, t, len, md->ten_length[t]);
        for (int i = 0; i < nv; i++) {
          worst_j = fmax(worst_j, fabs(J[i] - Jm[i]));
          CHECK(fabs(J[i] - Jm[i]) <= tolJ, "rep %d world %d tendon %d: J[%d] %.15g, MuJoCo %.15g", rep, w, t, i,
                J[i], Jm[i]);
        }
        /* which geom wraps MuJoCo took (wrap_obj: the geom id on both tangent points) */
        int gw = 0;
        for (int k = md->ten_wrapadr[t]; k < md->ten_wrapadr[t] + md->ten_wrapnum[t]; k++) gw += md->wrap_obj[k] >= 0;
        int ngeom = 0;
        for (int k = mj->tendon_adr[t]; k < mj->tendon_adr[t] + mj->tendon_num[t]; k++)
          ngeom += mj->wrap_type[k] == mjWRAP_SPHERE || mj->wrap_type[k] == mjWRAP_CYLINDER;
        wrapped[t][0] += gw / 2;
        wrapped[t][1] += ngeom - gw / 2;
      }
      char what[96];
      double scale = 1;
      for (int i = 0; i < nv; i++) scale = fmax(scale, fmax(fabs(md->qfrc_actuator[i]), fabs(md->qfrc_passive[i])));
      for (int i = 0; i < nv; i++) {
        worst_f = fmax(worst_f, fabs(d->qfrc_passive[w * nv + i] - md->qfrc_passive[i]) / scale);
        worst_f = fmax(worst_f, fabs(d->qfrc_actuator[w * nv + i] - md->qfrc_actuator[i]) / scale);
      }
      snprintf(what, sizeof(what), "rep %d world %d qfrc_passive", rep, w);
      check_arrays(what, d->qfrc_passive + w * nv, md->qfrc_passive, nv, tolF * scale, tolF);
      snprintf(what, sizeof(what), "rep %d world %d qfrc_actuator", rep, w);
      check_arrays(what, d->qfrc_actuator + w * nv, md->qfrc_actuator, nv, tolF * scale, tolF);
      /* actuator_moment (MuJoCo: gear J, sparse) and actuator_length */
      for (int i = 0; i < nu; i++) {
        int t = mj->actuator_trnid[2 * i];
        double len = sap_tenJ(m, d, w, t, J), g = mj->actuator_gear[6 * i], mom[64] = {0};
        for (int k = 0; k < md->moment_rownnz[i]; k++)
          mom[md->moment_colind[md->moment_rowadr[i] + k]] = md->actuator_moment[md->moment_rowadr[i] + k];
        CHECK_CLOSE(g * len, md->actuator_length[i], 1e-12, 1e-12, "world %d actuator %d length", w, i);
        for (int k = 0; k < nv; k++)
          CHECK_CLOSE(g * J[k], mom[k], fabs(g) * tolJ, 1e-11, "world %d actuator %d moment[%d]", w, i, k);
      }
      for (int i = 0; i < mj->nsensor; i++) {
        int t = mj->sensor_type[i], ad = mj->sensor_adr[i];
        if (mj->sensor_needstage[i] == mjSTAGE_ACC) continue;
        worst_s = fmax(worst_s, fabs(sens[w * ns + ad] - md->sensordata[ad]));
        CHECK_CLOSE(sens[w * ns + ad], md->sensordata[ad], tolF, tolF, "rep %d world %d sensor %d (type %d)", rep, w,
                    i, t);
      }
    }
    /* one step: actuatorfrc and jointactuatorfrc of its start state (contacts off) */
    set_state(s, q, v, u, a);
    CHECK_OK(sap_step(s, 1));
    CHECK_OK(sap_get(s, SAP_FIELD_SENSORDATA, NULL, NW, sens2));
    for (int w = 0; w < NW; w++) {
      memcpy(md->qpos, q + w * nq, sizeof(double) * nq);
      memcpy(md->qvel, v + w * nv, sizeof(double) * nv);
      memcpy(md->ctrl, u + w * nu, sizeof(double) * nu);
      memcpy(md->act, a + w * na, sizeof(double) * na);
      mj_forward(mj, md);
      for (int i = 0; i < mj->nsensor; i++) {
        int ad = mj->sensor_adr[i];
        if (mj->sensor_needstage[i] != mjSTAGE_ACC) continue;
        double sc = fmax(1, fabs(md->sensordata[ad]));
        worst_s = fmax(worst_s, fabs(sens2[w * ns + ad] - md->sensordata[ad]) / sc);
        CHECK_CLOSE(sens2[w * ns + ad], md->sensordata[ad], tolF, tolF, "rep %d world %d sensor %d", rep, w, i);
      }
    }
  }
  for (int t = 0; t < nt; t++) {
    const char* name = mj_id2name(mj, mjOBJ_TENDON, t);
    fprintf(stderr, "    %-14s geom wraps: %4d wrapped, %4d straight\n", name, wrapped[t][0], wrapped[t][1]);
    CHECK(wrapped[t][0] > 0 && wrapped[t][1] > 0, "tendon %s: wrapped %d, straight %d (both needed)", name,
          wrapped[t][0], wrapped[t][1]);
  }
  fprintf(stderr, "  %d states x %d tendons: worst |length - MuJoCo| %.1e (relative), |J - MuJoCo| %.1e, "
          "qfrc passive/actuator %.1e (relative), sensors %.1e\n", NW * NREP, nt, worst_l, worst_j, worst_f, worst_s);

  /* the comparison can fail: the elbow cylinder 1e-6 wider changes the wrapped lengths */
  int g = mj_name2id(mj, mjOBJ_GEOM, "el_cyl");
  m->geom_size[3 * g] *= 1 + 1e-6;
  double dmax = 0;
  for (int w = 0; w < NW; w++) {
    memcpy(md->qpos, q + w * nq, sizeof(double) * nq);
    mj_forward(mj, md);
    for (int t = 0; t < nt; t++) dmax = fmax(dmax, fabs(sap_tenJ(m, d, w, t, J) - md->ten_length[t]));
  }
  m->geom_size[3 * g] /= 1 + 1e-6;
  fprintf(stderr, "  radius of el_cyl x (1 + 1e-6): worst |length - MuJoCo| %.1e\n", dmax);
  CHECK(dmax > 1e-9, "a 1e-6 radius change went unseen (%g)", dmax);
  free(q), free(v), free(u), free(a), free(sens), free(sens2);
  mj_deleteData(md);
  mj_deleteModel(mj);
  sap_free(s);
  sap_freeModel(m);
}

/* J v against (L(q + e v) - L(q - e v)) / 2e, q moved along v by MuJoCo's mj_integratePos */
static void test_finite_differences(void) {
  mjModel* mj = mj_load(SCENE);
  sapSim* s = fx_sim(SCENE, 3 * NW, "preset=approx64 contacts=0");
  if (!mj || !s) return;
  const sapModel* m = sap_model(s);
  const sapData* d = sap_data(s);
  int nq = mj->nq, nv = mj->nv, nt = mj->ntendon, bad = 0, n = 0;
  double *q = malloc(sizeof(double) * 3 * NW * nq), *v = malloc(sizeof(double) * NW * nv), u[64], a[64], J[64];
  double eps = 1e-6, worst = 0;
  for (int rep = 0; rep < 4; rep++) {
    for (int w = 0; w < NW; w++) {
      double* qw = q + 3 * w * nq;
      random_state(mj, qw, v + w * nv, u, a);
      for (int s2 = 1; s2 < 3; s2++) {
        memcpy(qw + s2 * nq, qw, sizeof(double) * nq);
        mj_integratePos(mj, qw + s2 * nq, v + w * nv, s2 == 1 ? eps : -eps);
      }
    }
    CHECK_OK(sap_set(s, SAP_FIELD_QPOS, NULL, 3 * NW, q));
    sapc_kinematics(s);
    sapc_freeMotion(s);
    for (int w = 0; w < NW; w++)
      for (int t = 0; t < nt; t++) {
        sap_tenJ(m, d, 3 * w, t, J);
        double jv = 0, fd = (sap_tenJ(m, d, 3 * w + 1, t, J + 32) - sap_tenJ(m, d, 3 * w + 2, t, J + 32)) / (2 * eps);
        for (int i = 0; i < nv; i++) jv += J[i] * v[w * nv + i];
        double err = fabs(jv - fd) / (1e-3 + fabs(fd));
        worst = fmax(worst, err);
        bad += err > 1e-5;
        n++;
      }
  }
  fprintf(stderr, "  %d (state, tendon) pairs: worst |J v - central difference| / (1e-3 + |diff|) %.1e, %d above 1e-5\n",
          n, worst, bad);
  CHECK(bad == 0, "%d of %d Jacobians disagree with central differences", bad, n);
  free(q), free(v);
  mj_deleteModel(mj);
  sap_free(s);
}

/* the muscle arm under random controls: sapsim (sap_euler, no contacts) against mj_step with
 * limits off (no constraints on either side; MuJoCo's nefc must stay 0) */
static void test_muscle_arm_trajectory(void) {
  mjModel* mj = mj_load(ARM);
  sapSim* s = fx_sim(ARM, 8, "preset=approx64 contacts=0 integration=sap_euler");
  if (!mj || !s) return;
  mj->opt.disableflags |= mjDSBL_LIMIT;
  int nq = mj->nq, nu = mj->nu, na = mj->na, nw = 8, nefc = 0, nstep = 1500;
  mjData* md[8];
  for (int w = 0; w < nw; w++) {
    md[w] = mj_makeData(mj);
    md[w]->qpos[0] = 0.3 + 0.15 * w;
    md[w]->qpos[1] = 1.5 - 0.1 * w;
  }
  double q0[16], ctrl[8 * 8], act[8 * 8], qpos[8 * 8], wq = 0, wa = 0, span = 0;
  for (int w = 0; w < nw; w++) memcpy(q0 + w * nq, md[w]->qpos, sizeof(double) * nq);
  CHECK_OK(sap_set(s, SAP_FIELD_QPOS, NULL, nw, q0));
  for (int k = 0; k < nstep; k++) {
    for (int i = 0; i < nw * nu; i++) ctrl[i] = check_uniform(-0.2, 1.2);
    CHECK_OK(sap_set(s, SAP_FIELD_CTRL, NULL, nw, ctrl));
    CHECK_OK(sap_step(s, 1));
    CHECK_OK(sap_get(s, SAP_FIELD_ACT, NULL, nw, act));
    CHECK_OK(sap_get(s, SAP_FIELD_QPOS, NULL, nw, qpos));
    for (int w = 0; w < nw; w++) {
      memcpy(md[w]->ctrl, ctrl + w * nu, sizeof(double) * nu);
      mj_step(mj, md[w]);
      nefc = md[w]->nefc > nefc ? md[w]->nefc : nefc;
      for (int i = 0; i < na; i++) wa = fmax(wa, fabs(act[w * na + i] - md[w]->act[i]));
      for (int i = 0; i < nq; i++) {
        wq = fmax(wq, fabs(qpos[w * nq + i] - md[w]->qpos[i]));
        span = fmax(span, fabs(md[w]->qpos[i] - q0[w * nq + i]));
      }
    }
  }
  fprintf(stderr, "  muscle arm: %d steps x %d worlds, max |qpos - MuJoCo| %.2e rad (motion up to %.2f rad), "
          "max |act - MuJoCo| %.1e\n", nstep, nw, wq, span, wa);
  CHECK(nefc == 0, "MuJoCo had %d constraint rows", nefc);
  CHECK(span > 0.5, "the arm hardly moved (%g rad)", span);
  CHECK(wa <= 1e-12, "act differs from MuJoCo by %g", wa);
  CHECK(wq <= 1e-8, "qpos differs from MuJoCo by %g", wq);
  for (int w = 0; w < nw; w++) mj_deleteData(md[w]);
  mj_deleteModel(mj);
  sap_free(s);
}

/* a pendulum (hinge on y, a massless rod, a 1 kg bob at 0.4 m) whose tendon runs from a world
 * site over a cylinder of radius 5 cm on the hinge axis to a site over the rod: while wrapped
 * (theta > 0, the bob below the axis) its length is c + r theta, so a limit and friction on the
 * tendon act on theta through r */
#define PEND_XML                                                                                       \
  "<mujoco><compiler angle='radian'/><option timestep='0.001'/><worldbody><site name='a' pos='-0.3 0 " \
  "0.05'/><body><joint name='j' axis='0 1 0' damping='0.01'/><geom "    \
  "name='c' type='cylinder' size='0.05 0.02' zaxis='0 1 0' contype='0' conaffinity='0' mass='0'/>"    \
  "<geom type='sphere' pos='0.4 0 0' size='0.02' mass='1' contype='0' conaffinity='0'/><site name='b' " \
  "pos='0.3 0 0.05'/></body></worldbody><tendon><spatial name='t' %s><site site='a'/><geom geom='c'/>" \
  "<site site='b'/></spatial></tendon></mujoco>"

static double pend_angle(const char* attrs, double q0, int nstep, double* qdot) {
  char xml[2048];
  snprintf(xml, sizeof(xml), PEND_XML, attrs);
  sapSim* s = fx_sim(xml, 1, "preset=approx64 integration=sap_euler");
  if (!s) return NAN;
  double q = q0, v = 0;
  CHECK_OK(sap_set(s, SAP_FIELD_QPOS, NULL, 1, &q));
  CHECK_OK(sap_set(s, SAP_FIELD_QVEL, NULL, 1, &v));
  CHECK_OK(sap_step(s, nstep));
  sap_get(s, SAP_FIELD_QPOS, NULL, 1, &q);
  sap_get(s, SAP_FIELD_QVEL, NULL, 1, qdot);
  sap_free(s);
  return q;
}

static void test_limit_friction(void) {
  double r = 0.05, g = 9.81, l = 0.4, qd;
  char xml[2048], ten[256];
  snprintf(xml, sizeof(xml), PEND_XML, "");
  mjModel* mj = mj_load(fx_tempFile("pend.xml", xml));
  if (!mj) return;
  mjData* md = mj_makeData(mj);
  mj_forward(mj, md);
  double c = md->ten_length[0];
  md->qpos[0] = 0.3;
  mj_forward(mj, md);
  double slope = (md->ten_length[0] - c) / 0.3;
  mj_deleteData(md);
  mj_deleteModel(mj);
  fprintf(stderr, "  pendulum tendon (MuJoCo): length %.6f m at theta 0, dL/dtheta %.9f (radius %.3f)\n", c, slope, r);
  CHECK(fabs(slope - r) < 1e-9, "the tendon does not wrap the cylinder (slope %g)", slope);

  /* limit: released at 0, the bob falls (theta grows) until L = c + 0.2 r (the path stays over
   * the top of the cylinder up to ~0.33 rad, where the way under it becomes the shorter) */
  snprintf(ten, sizeof(ten), "limited='true' range='0 %.12f'", c + 0.2 * r);
  double th = pend_angle(ten, 0, 1000, &qd);
  fprintf(stderr, "  tendon limit: theta %.5f rad at rest, analytic 0.2 (|qdot| %.1e)\n", th, fabs(qd));
  CHECK(fabs(th - 0.2) < 2e-3 && fabs(qd) < 1e-2, "theta %g, qdot %g", th, qd);

  /* frictionloss f on the tendon holds the bob at theta0 when f r > m g l cos(theta0) */
  double th0 = 0.15, tau = 1 * g * l * cos(th0);
  for (int k = 0; k < 2; k++) {
    double f = (k ? 0.8 : 1.25) * tau / r;
    snprintf(ten, sizeof(ten), "frictionloss='%.9f'", f);
    double t1 = pend_angle(ten, th0, 150, &qd);
    fprintf(stderr, "  frictionloss %.2f x the holding force: theta %.5f -> %.5f after 0.15 s\n", k ? 0.8 : 1.25, th0, t1);
    if (k == 0) CHECK(fabs(t1 - th0) < 1e-4, "stuck bob moved to %g", t1);
    else CHECK(t1 - th0 > 0.02, "slipping bob stayed at %g", t1);
  }
}

static void test_equality_coupling(void) {
  /* two pendulums side by side, tendon equality L1 - L1_0 = 2 (L2 - L2_0): theta1 = 2 theta2 */
  const char* xml =
      "<mujoco><compiler angle='radian'/><option timestep='0.001'/><default><geom contype='0' conaffinity='0'/>"
      "</default><worldbody><site name='a1' pos='-0.3 0 0.05'/><site name='a2' pos='-0.3 1 0.05'/>"
      "<body><joint name='j1' axis='0 1 0'/><geom name='c1' type='cylinder' size='0.05 0.02' zaxis='0 1 0' mass='0'/>"
      "<geom type='sphere' pos='0.4 0 0' size='0.02' mass='1'/><site name='b1' pos='0.3 0 0.05'/></body>"
      "<body pos='0 1 0'><joint name='j2' axis='0 1 0'/><geom name='c2' type='cylinder' size='0.05 0.02' "
      "zaxis='0 1 0' mass='0'/><geom type='sphere' pos='0.4 0 0' size='0.02' mass='3'/>"
      "<site name='b2' pos='0.3 0 0.05'/></body></worldbody><tendon>"
      "<spatial name='t1'><site site='a1'/><geom geom='c1'/><site site='b1'/></spatial>"
      "<spatial name='t2'><site site='a2'/><geom geom='c2'/><site site='b2'/></spatial></tendon>"
      "<equality><tendon tendon1='t1' tendon2='t2' polycoef='0 2 0 0 0'/></equality></mujoco>";
  sapSim* s = fx_sim(xml, 1, "preset=approx64 integration=sap_euler");
  if (!s) return;
  double q[2], worst = 0, top = 0;
  for (int k = 0; k < 100; k++) {  // theta1 below ~0.33 rad: both tendons over their cylinders
    CHECK_OK(sap_step(s, 1));
    sap_get(s, SAP_FIELD_QPOS, NULL, 1, q);
    if (k > 20) worst = fmax(worst, fabs(q[0] - 2 * q[1]));
    top = fmax(top, fabs(q[0]));
  }
  fprintf(stderr, "  tendon equality (theta1 = 2 theta2 through wrapped lengths): |theta1 - 2 theta2| <= %.1e "
          "while theta1 reaches %.3f\n", worst, top);
  CHECK(top > 0.05 && top < 0.33 && worst < 1e-3, "coupling residual %g (theta1 up to %g)", worst, top);
  sap_free(s);
}

#define WORLD "<worldbody><site name='a' pos='0 0 1'/><body name='b'><joint name='j' axis='0 1 0'/>" \
              "<geom name='g' size='.1'/><site name='s' pos='.2 0 0'/></body></worldbody>"

static void test_refusals(void) {
  fx_refused("<mujoco>" WORLD "<tendon><spatial name='t'><site site='s'/><geom geom='g' sidesite='a'/><site site='a'/>"
                 "</spatial></tendon></mujoco>", SAP_ERR_UNSUPPORTED, "spatial tendon 't' wraps geom 'g' with sidesite 'a'");
  fx_refused("<mujoco>" WORLD "<tendon><spatial name='t' armature='1'><site site='s'/><site site='a'/>"
                 "</spatial></tendon></mujoco>", SAP_ERR_UNSUPPORTED, "tendon 't' has armature");
  /* a joint's actuatorfrcrange with a spatial-tendon actuator, which may move any joint */
  fx_refused("<mujoco><worldbody><site name='a' pos='0 0 1'/><body><joint name='j' axis='0 1 0' "
             "actuatorfrcrange='-1 1'/><geom name='g' size='.1'/><site name='s' pos='.2 0 0'/></body></worldbody>"
             "<tendon><spatial name='t'><site site='s'/><geom geom='g'/><site site='a'/></spatial></tendon>"
             "<actuator><motor name='m' tendon='t'/></actuator></mujoco>",
             SAP_ERR_UNSUPPORTED, "joint 'j' limits the total force of several actuators");
}

int main(void) {
  RUN(test_vs_mujoco);
  RUN(test_finite_differences);
  RUN(test_muscle_arm_trajectory);
  RUN(test_limit_friction);
  RUN(test_equality_coupling);
  RUN(test_refusals);
  return check_summary("test_spatial_wrap");
}
