/* Spatial tendons that wrap spheres and cylinders and pass pulleys (kernels/tendon.h, a port
 * of MuJoCo 4's mj_tendon / mju_wrap), and everything that acts on them:
 *  - sapt_wrap against MuJoCo 4.0's mju_wrap itself at 24000 random configurations (no
 *    sidesite, a sidesite outside and inside; near-degenerate ones included);
 *  - length and Jacobian at 384 random states of scenes/tendon_wrap.xml (radii 5 mm .. 0.5 m,
 *    tilted cylinders, pulleys, hinge/ball/slide paths) and of scenes/tendon_sidesite.xml
 *    (sidesites outside and inside) against MuJoCo 4.0's ten_length and ten_J; every geom
 *    wrap must be seen both wrapped and straight (MuJoCo's wrap_obj); a 1e-6 change of one
 *    radius must show (the comparison can fail);
 *  - qfrc_passive (tendon springs with a dead band, dampers), qfrc_actuator and actuator_moment
 *    (muscles with MuJoCo's lengthrange and acc0, motors, general, position and velocity
 *    servos, explicit without contacts), and the tendon/actuator sensors against mj_forward;
 *  - the Jacobian against central differences of sapsim's own length;
 *  - 1500-step trajectories of scenes/muscle_arm.xml (six muscles on wrapping tendons) and of
 *    scenes/tendon_sidesite.xml under random controls against mj_step (integration=sap_euler,
 *    no contacts: MuJoCo's Euler);
 *  - the SAP rows on spatial tendons: a tendon limit, frictionloss and a tendon equality on a
 *    pendulum whose tendon wraps a cylinder on its axis (length c + r theta: analytic stop
 *    angle, stick/slip threshold f r vs m g l sin theta, coupled lengths). */
#include <math.h>
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "fixture_mj.h"
#include "sap_solve.h"
#include "sim.h"

#define SCENE "scenes/tendon_wrap.xml"
#define ARM "scenes/muscle_arm.xml"
#define SIDE "scenes/tendon_sidesite.xml"
#define NW 64
#define NREP 6

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

/* scene's tendons against MuJoCo at NW x NREP random states; the radius of geom `probe` moved
 * by 1e-6 must show */
static void vs_mujoco(const char* scene, const char* probe) {
  mjModel* mj = fx_mjModel(scene);
  sapModel* m = fx_model(scene);
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
      fx_mjSetState(mj, md, q + w * nq, v + w * nv, u + w * nu, a + w * na);
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
      fx_mjSetState(mj, md, q + w * nq, v + w * nv, u + w * nu, a + w * na);
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

  /* the comparison can fail: the probe geom 1e-6 wider changes the wrapped lengths */
  int g = mj_name2id(mj, mjOBJ_GEOM, probe);
  m->geom_size[3 * g] *= 1 + 1e-6;
  double dmax = 0;
  for (int w = 0; w < NW; w++) {
    fx_mjForwardAt(mj, md, q + w * nq, NULL, NULL);
    for (int t = 0; t < nt; t++) dmax = fmax(dmax, fabs(sap_tenJ(m, d, w, t, J) - md->ten_length[t]));
  }
  m->geom_size[3 * g] /= 1 + 1e-6;
  fprintf(stderr, "  radius of %s x (1 + 1e-6): worst |length - MuJoCo| %.1e\n", probe, dmax);
  CHECK(dmax > 1e-9, "a 1e-6 radius change went unseen (%g)", dmax);
  free(q), free(v), free(u), free(a), free(sens), free(sens2);
  mj_deleteData(md);
  mj_deleteModel(mj);
  sap_free(s);
  sap_freeModel(m);
}

/* MuJoCo 4.0's mju_wrap: exported by libmujoco.so.4.0.0, not declared in its headers */
extern mjtNum mju_wrap(mjtNum wpnt[6], const mjtNum x0[3], const mjtNum x1[3], const mjtNum xpos[3],
                       const mjtNum xmat[9], mjtNum radius, int type, const mjtNum side[3]);

/* a random unit 3-vector */
static void rand_dir(double* u) {
  double n;
  do {
    for (int k = 0; k < 3; k++) u[k] = check_uniform(-1, 1);
    n = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
  } while (n < 0.1 || n > 1);
  for (int k = 0; k < 3; k++) u[k] /= n;
}

/* the 2D point (a, b) of the wrap plane (basis e0, e1) at height h along e2, times s */
static void plane_point(double* p, const double e[3][3], double a, double b, double h) {
  for (int k = 0; k < 3; k++) p[k] = a * e[0][k] + b * e[1][k] + h * e[2][k];
}

/* kernels/tendon.h's sapt_wrap against MuJoCo 4.0's mju_wrap on the same inputs: 24000
 * random configurations, spheres and cylinders, radii 1e-3 .. 1e1, rotated and moved geoms,
 * no sidesite, a sidesite outside (anywhere, or on an endpoint's ray, the chord's bisector or
 * the tangent line, to 1e-12) and inside (to 1e-12 of the surface); endpoints near the surface,
 * segments grazing the circle (closest approach r (1 +- 1e-12 .. 1e-4)), for spheres endpoints
 * on one ray. The wrap decision must agree, the length and both tangent points to 1e-12
 * relative; every (type, sidesite) class must be seen wrapped and straight. */
static void test_wrap_direct(void) {
  enum { N = 24000 };
  int seen[2][3][2] = {{{0}}}, bad = 0, nwrap_diff = 0;
  double worst = 0;
  for (int n = 0; n < N; n++) {
    int type = n % 2 ? mjWRAP_CYLINDER : mjWRAP_SPHERE, mode = (n / 2) % 3, kind = (n / 6) % 4;  // mode: none, out, in
    double r = pow(10, check_uniform(-3, 1)), e[3][3], p[3][3];
    /* the wrap plane: the cylinder's xy plane, or any plane through the sphere's centre */
    if (type == mjWRAP_CYLINDER) {
      for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++) e[i][k] = i == k;
    } else {
      rand_dir(e[2]);
      double t[3];
      rand_dir(t);
      e[0][0] = e[2][1] * t[2] - e[2][2] * t[1], e[0][1] = e[2][2] * t[0] - e[2][0] * t[2];
      e[0][2] = e[2][0] * t[1] - e[2][1] * t[0];
      double l = sqrt(e[0][0] * e[0][0] + e[0][1] * e[0][1] + e[0][2] * e[0][2]);
      for (int k = 0; k < 3; k++) e[0][k] /= l;
      e[1][0] = e[2][1] * e[0][2] - e[2][2] * e[0][1], e[1][1] = e[2][2] * e[0][0] - e[2][0] * e[0][2];
      e[1][2] = e[2][0] * e[0][1] - e[2][1] * e[0][0];
    }
    double hz = type == mjWRAP_CYLINDER ? 2 * r : 0;  // heights off the plane (cylinders only)
    double a0 = check_uniform(-SAPT_PI, SAPT_PI), a1 = check_uniform(-SAPT_PI, SAPT_PI);
    double l0 = r * pow(10, check_uniform(0.001, 1.3)), l1 = r * pow(10, check_uniform(0.001, 1.3));
    if (kind == 1) l0 = r * (1 + pow(10, check_uniform(-12, -3)));  // an endpoint at the surface
    if (kind == 3 && type == mjWRAP_SPHERE) a1 = a0 + (n % 12 < 6 ? 0 : 1e-9);  // on (near) one ray
    if (kind == 2) {  // a grazing segment: closest approach r (1 +- d) at angle a0
      double d = r * (1 + (n % 12 < 6 ? 1 : -1) * pow(10, check_uniform(-12, -4)));
      double u0 = r * check_uniform(0.3, 5), u1 = r * check_uniform(0.3, 5);
      double c[2] = {d * cos(a0), d * sin(a0)}, t[2] = {-sin(a0), cos(a0)};
      plane_point(p[0], e, c[0] - u0 * t[0], c[1] - u0 * t[1], check_uniform(-hz, hz));
      plane_point(p[1], e, c[0] + u1 * t[0], c[1] + u1 * t[1], check_uniform(-hz, hz));
    } else {
      plane_point(p[0], e, l0 * cos(a0), l0 * sin(a0), check_uniform(-hz, hz));
      plane_point(p[1], e, l1 * cos(a1), l1 * sin(a1), check_uniform(-hz, hz));
    }
    /* the sidesite: off the plane too (it is projected onto it) */
    double as = check_uniform(-SAPT_PI, SAPT_PI), ls = r * pow(10, check_uniform(0.001, 1));
    if (mode == 1 && n % 5 == 0) {  // on an endpoint's ray, the bisector or their opposites, to 1e-12
      double b0 = atan2(p[0][0] * e[1][0] + p[0][1] * e[1][1] + p[0][2] * e[1][2],
                        p[0][0] * e[0][0] + p[0][1] * e[0][1] + p[0][2] * e[0][2]);
      double b1 = atan2(p[1][0] * e[1][0] + p[1][1] * e[1][1] + p[1][2] * e[1][2],
                        p[1][0] * e[0][0] + p[1][1] * e[0][1] + p[1][2] * e[0][2]);
      double cand[6] = {b0, b1, 0.5 * (b0 + b1), b0 + SAPT_PI, b1 + SAPT_PI, 0.5 * (b0 + b1) + SAPT_PI};
      as = cand[(n / 5) % 6] + (n % 2 ? 1e-12 : 0);
    }
    if (mode == 2) ls = n % 4 < 2 ? r * check_uniform(0, 0.999) : r * (1 - pow(10, check_uniform(-12, -3)));
    if (mode == 1 && n % 7 == 0) ls = r * (1 + pow(10, check_uniform(-12, -3)));  // at the surface
    double side[3], sl[3];
    plane_point(sl, e, ls * cos(as), ls * sin(as), 0);
    if (mode == 2) {  // inside: |s| < r in 3D
      double h = sqrt(fmax(0, r * r * 0.999999 - ls * ls)) * check_uniform(-1, 1);
      for (int k = 0; k < 3; k++) sl[k] += h * e[2][k];
    } else {
      double h = check_uniform(-2 * r, 2 * r);
      for (int k = 0; k < 3; k++) sl[k] += h * e[2][k];
    }
    /* the geom's frame: a random rotation and position */
    double q[4], R[9], xpos[3], x[3][3], nq = 0;
    for (int k = 0; k < 4; k++) { q[k] = check_uniform(-1, 1); nq += q[k] * q[k]; }
    for (int k = 0; k < 4; k++) q[k] /= sqrt(nq);
    mju_quat2Mat(R, q);
    for (int k = 0; k < 3; k++) xpos[k] = check_uniform(-1, 1) * pow(10, check_uniform(-2, 1));
    double* loc[3] = {p[0], p[1], sl};
    for (int i = 0; i < 3; i++)
      for (int k = 0; k < 3; k++) x[i][k] = xpos[k] + R[3 * k] * loc[i][0] + R[3 * k + 1] * loc[i][1] + R[3 * k + 2] * loc[i][2];
    for (int k = 0; k < 3; k++) side[k] = x[2][k];
    double wm[6] = {0}, ws[6] = {0};
    const double* sp = mode ? side : NULL;
    double lm = mju_wrap(wm, x[0], x[1], xpos, R, r, type, sp);
    double ls2 = sapt_wrap(ws, x[0], x[1], xpos, R, r, type, sp);
    if ((lm < 0) != (ls2 < 0)) {
      if (nwrap_diff++ < 5)
        fprintf(stderr, "    case %d (type %d, side %d, kind %d, r %.3g): MuJoCo %s, sapsim %s\n", n, type, mode, kind,
                r, lm < 0 ? "straight" : "wraps", ls2 < 0 ? "straight" : "wraps");
      continue;
    }
    seen[type == mjWRAP_CYLINDER][mode][lm >= 0]++;
    if (lm < 0) continue;
    double sc = r, err = fabs(lm - ls2) / fmax(r, lm);
    for (int k = 0; k < 3; k++) sc = fmax(sc, fabs(xpos[k]));
    for (int k = 0; k < 6; k++) err = fmax(err, fabs(wm[k] - ws[k]) / sc);
    worst = fmax(worst, err);
    if (err > 1e-12 && bad++ < 5)
      fprintf(stderr, "    case %d (type %d, side %d, kind %d, r %.3g): length %.17g vs MuJoCo %.17g, error %.2g\n", n,
              type, mode, kind, r, ls2, lm, err);
  }
  fprintf(stderr, "  sapt_wrap vs mju_wrap, %d configurations: wrap decisions differ %d, worst length/point error %.1e "
          "(relative)\n", N, nwrap_diff, worst);
  const char* tn[2] = {"sphere", "cylinder"}, *mn[3] = {"no sidesite", "sidesite outside", "sidesite inside"};
  for (int t = 0; t < 2; t++)
    for (int md = 0; md < 3; md++) {
      fprintf(stderr, "    %-8s %-16s: %5d wrapped, %5d straight\n", tn[t], mn[md], seen[t][md][1], seen[t][md][0]);
      CHECK(seen[t][md][0] > 100 && seen[t][md][1] > 100, "%s, %s: %d wrapped, %d straight (100 of each needed)", tn[t],
            mn[md], seen[t][md][1], seen[t][md][0]);
    }
  CHECK(nwrap_diff == 0, "%d of %d wrap decisions differ from MuJoCo 4.0", nwrap_diff, N);
  CHECK(bad == 0, "%d of %d wrapped lengths or tangent points differ from MuJoCo 4.0 by more than 1e-12", bad, N);
}

/* J v against (L(q + e v) - L(q - e v)) / 2e, q moved along v by MuJoCo's mj_integratePos */
static void finite_differences(const char* scene) {
  mjModel* mj = fx_mjModel(scene);
  sapSim* s = fx_sim(scene, 3 * NW, "preset=approx64 contacts=0");
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
static void trajectory(const char* scene, int nstep) {
  if (!scene) return;
  mjModel* mj = fx_mjModel(scene);
  sapSim* s = fx_sim(scene, 8, "preset=approx64 contacts=0 integration=sap_euler");
  if (!mj || !s) return;
  mj->opt.disableflags |= mjDSBL_LIMIT;
  int nq = mj->nq, nu = mj->nu, na = mj->na, nw = 8, nefc = 0;
  CHECK(nq <= 8 && nu <= 8 && na <= 8, "%s: nq %d, nu %d, na %d (8 at most here)", scene, nq, nu, na);
  mjData* md[8];
  for (int w = 0; w < nw; w++) {
    md[w] = mj_makeData(mj);
    md[w]->qpos[0] = 0.3 + 0.15 * w;
    md[w]->qpos[1] = 1.5 - 0.1 * w;
  }
  double q0[8 * 8], ctrl[8 * 8], act[8 * 8], qpos[8 * 8], wq = 0, wa = 0, span = 0;
  for (int w = 0; w < nw; w++) memcpy(q0 + w * nq, md[w]->qpos, sizeof(double) * nq);
  CHECK_OK(sap_set(s, SAP_FIELD_QPOS, NULL, nw, q0));
  for (int k = 0; k < nstep; k++) {
    for (int i = 0; i < nw * nu; i++) ctrl[i] = check_uniform(-0.2, 1.2);
    CHECK_OK(sap_set(s, SAP_FIELD_CTRL, NULL, nw, ctrl));
    CHECK_OK(sap_step(s, 1));
    CHECK_OK(sap_get(s, SAP_FIELD_ACT, NULL, nw, act));
    CHECK_OK(sap_get(s, SAP_FIELD_QPOS, NULL, nw, qpos));
    for (int w = 0; w < nw; w++) {
      fx_mjStepAt(mj, md[w], NULL, NULL, ctrl + w * nu);
      nefc = md[w]->nefc > nefc ? md[w]->nefc : nefc;
      for (int i = 0; i < na; i++) wa = fmax(wa, fabs(act[w * na + i] - md[w]->act[i]));
      for (int i = 0; i < nq; i++) {
        wq = fmax(wq, fabs(qpos[w * nq + i] - md[w]->qpos[i]));
        span = fmax(span, fabs(md[w]->qpos[i] - q0[w * nq + i]));
      }
    }
  }
  fprintf(stderr, "  %s: %d steps x %d worlds, max |qpos - MuJoCo| %.2e (motion up to %.2f), "
          "max |act - MuJoCo| %.1e\n", scene, nstep, nw, wq, span, wa);
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
  mjModel* mj = fx_mjModel(fx_tempFile("pend.xml", xml));
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
  /* armature on a wrapping tendon: MuJoCo 4's compiler refuses it (its mj_tendonDot has no wrap
   * derivative); site-to-site tendons take it (tests/test_spatial_tendon_armature.c) */
  fx_refused("<mujoco>" WORLD "<tendon><spatial name='t' armature='1'><site site='s'/><geom geom='g'/>"
                 "<site site='a'/></spatial></tendon></mujoco>", SAP_ERR_SCENE, "geom wrapping not supported");
  /* a joint's actuatorfrcrange with a servo on a spatial tendon, which may move any joint (a
   * motor there joins the clamped sum, tests/test_joint_frcrange.c) */
  fx_refused("<mujoco><worldbody><site name='a' pos='0 0 1'/><body><joint name='j' axis='0 1 0' "
             "actuatorfrcrange='-1 1'/><geom name='g' size='.1'/><site name='s' pos='.2 0 0'/></body></worldbody>"
             "<tendon><spatial name='t'><site site='s'/><geom geom='g'/><site site='a'/></spatial></tendon>"
             "<actuator><position name='m' tendon='t' kp='5'/></actuator></mujoco>",
             SAP_ERR_UNSUPPORTED, "joint 'j' limits the total actuator force at its dof (actuatorfrcrange), and the "
             "servo 'm'");
}

static void test_vs_mujoco(void) { vs_mujoco(SCENE, "el_cyl"); }
static void test_sidesite_vs_mujoco(void) { vs_mujoco(SIDE, "el_cyl"); }
static void test_finite_differences(void) { finite_differences(SCENE); }
static void test_sidesite_finite_differences(void) { finite_differences(SIDE); }
static void test_muscle_arm_trajectory(void) { trajectory(ARM, 1500); }
/* the sidesite scene with its wrist ball joint as a hinge (about the hand's z): sap_euler
 * integrates quaternions with a first-order map, MuJoCo with the exponential one (README,
 * springs), which alone moves a ball chain's trajectory by ~1e-5 over 3 s */
static void test_sidesite_trajectory(void) {
  static char xml[16384];
  const char *ball = "<joint name=\"wrist\" type=\"ball\" damping=\"0.02\"/>",
             *hinge = "<joint name=\"wrist\" type=\"hinge\" axis=\"0 0 1\" damping=\"0.02\"/>";
  FILE* f = fopen(SIDE, "r");
  size_t n = f ? fread(xml, 1, sizeof(xml) - 1, f) : 0;
  if (f) fclose(f);
  xml[n] = 0;
  char* at = strstr(xml, ball);
  CHECK(at != NULL && n + 64 < sizeof(xml), "%s: no wrist ball joint", SIDE);
  if (!at) return;
  memmove(at + strlen(hinge), at + strlen(ball), strlen(at + strlen(ball)) + 1);
  memcpy(at, hinge, strlen(hinge));
  trajectory(fx_tempFile("tendon_sidesite_hinge.xml", xml), 1500);
}

int main(void) {
  RUN(test_wrap_direct);
  RUN(test_vs_mujoco);
  RUN(test_sidesite_vs_mujoco);
  RUN(test_finite_differences);
  RUN(test_sidesite_finite_differences);
  RUN(test_muscle_arm_trajectory);
  RUN(test_sidesite_trajectory);
  RUN(test_limit_friction);
  RUN(test_equality_coupling);
  RUN(test_refusals);
  return check_summary("test_spatial_wrap");
}
