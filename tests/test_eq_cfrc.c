/* connect and weld forces in cfrc_ext (option body_outputs, kernels/body_out.h
 * sapw_bodyEqualityForces), against two oracles:
 *  - MuJoCo 4's mj_rnePostConstraint fed sapsim's equality row forces: at every step of scenes
 *    with connect and weld equalities (body and site forms, anchors off the com, a weld with a
 *    relpose and torquescale 0.3, 0.5, 2 and 0, welds to the world and to a moving mocap body,
 *    joint and tendon couplings beside them, bodies turned every way, masses 0.8 g to 250 kg,
 *    mm-sized planar loops), MuJoCo's mj_forward at the step's start state, its equality rows'
 *    efc_force set to sapsim's impulse / h row by row (its other rows zero), then
 *    mj_rnePostConstraint: its cfrc_ext must be sapsim's;
 *  - statics: a body at rest hanging from a connect or held by a weld, pushed sideways by
 *    xfrc_applied: its whole external wrench balances its weight, cfrc_ext = [0; m g] about its
 *    com (the equality's torque about the com, r x F plus a weld's torque, cancels the push's). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mujoco/mujoco.h>

#include "fixture.h"
#include "fixture_mj.h"
#include "sap_solve.h"
#include "sim.h"

/* every form of connect and weld MuJoCo has, and couplings that cfrc_ext leaves out; no contacts */
static const char* EQ_ZOO =
    "<mujoco><option timestep='0.002' gravity='0.4 -0.3 -9.81'/>"
    "<default><geom contype='0' conaffinity='0'/></default><worldbody>"
    "<body name='target' mocap='true' pos='0.5 0.1 1.4' euler='20 -30 50'><geom type='box' size='0.02 0.02 0.02'/></body>"
    "<body name='grip' pos='0.55 0.15 1.3' euler='25 -35 40'><freejoint/>"
    " <geom type='box' size='0.05 0.03 0.02' pos='0.02 0.01 0' mass='7'/></body>"
    "<body name='arm' pos='-0.5 0 1.5' euler='0 0 30'><joint name='h1' type='hinge' axis='0 1 0.3'/>"
    " <geom type='capsule' fromto='0 0 0 0.3 0 -0.1' size='0.02' mass='0.3'/></body>"
    "<body name='bob' pos='-0.2 0.01 1.39' euler='60 10 -80'><freejoint/><geom type='sphere' size='0.01' pos='0.005 0 0' mass='0.005'/></body>"
    "<body name='heavy' pos='0 -1 1' euler='-40 70 15'><freejoint/>"
    " <geom type='box' size='0.3 0.2 0.1' pos='0.05 -0.02 0.01' mass='250'/></body>"
    "<body name='ball' pos='1 1 1.5' euler='10 80 -20'><joint type='ball'/>"
    " <geom type='capsule' fromto='0 0 0 0 0 -0.4' size='0.03' mass='1.1'/><site name='sb' pos='0 0.02 -0.4' euler='30 0 0'/></body>"
    "<body name='link' pos='0.616899 0.991499 1.497419' euler='-70 20 100'><freejoint/><geom type='box' size='0.1 0.04 0.02' mass='0.6'/>"
    " <site name='sl' pos='0.08 0 0.01' euler='0 45 90'/><site name='sl2' pos='-0.08 0.02 0' euler='10 20 30'/></body>"
    "<body name='tip' pos='0.604021 0.960587 1.570567' euler='15 -25 35'><freejoint/><geom type='ellipsoid' size='0.03 0.02 0.01' mass='0.04'/>"
    " <site name='st' pos='0.01 0 0' euler='90 0 0'/></body>"
    "<body name='r1' pos='-1 -1 2' euler='33 44 55'><freejoint/><geom type='box' size='0.1 0.1 0.1' mass='3'/></body>"
    "<body name='r2' pos='-1.3 -1.1 2.1' euler='-10 5 170'><freejoint/><geom type='sphere' size='0.05' pos='0 0.02 0' mass='0.08'/></body>"
    "<body name='z1' pos='2 0 1'><joint name='sl1' type='slide' axis='1 0 0.2'/><geom type='box' size='0.05 0.05 0.05' mass='2'/>"
    " <body name='z2' pos='0.1 0 0' euler='0 0 90'><joint name='h2' type='hinge' axis='0 0.3 1'/>"
    "  <geom type='box' size='0.05 0.02 0.02' pos='0.05 0 0' mass='0.5'/></body></body>"
    "<body name='j1' pos='3 0 1'><joint name='ja' type='hinge' axis='1 0 0'/><geom type='capsule' fromto='0 0 0 0 0.2 0' size='0.01' mass='0.2'/></body>"
    "<body name='j2' pos='3.2 0 1'><joint name='jb' type='hinge' axis='1 0 0'/><geom type='capsule' fromto='0 0 0 0 0.2 0' size='0.01' mass='0.2'/></body>"
    "</worldbody>"
    "<tendon><fixed name='t'><joint joint='ja' coef='1'/><joint joint='h1' coef='0.5'/></fixed></tendon>"
    "<equality>"
    "<weld body1='grip' body2='target' anchor='0.04 -0.02 0.03' torquescale='0.5'/>"
    "<connect body1='bob' body2='arm' anchor='0.01 0.005 -0.003'/>"
    "<weld body1='heavy' anchor='0.2 0.1 -0.05'/>"
    "<connect site1='sb' site2='sl'/>"
    "<weld site1='sl2' site2='st' torquescale='2'/>"
    "<weld body1='r1' body2='r2' relpose='0.2 0.1 -0.1 0.9 0.1 0.3 -0.2' anchor='0.05 0 0.02' torquescale='0.3'/>"
    "<weld body1='z2' anchor='0.1 0 0' torquescale='0'/>"
    "<joint joint1='ja' joint2='jb' polycoef='0 1 0 0 0'/>"
    "<tendon tendon1='t' polycoef='0.1 0 0 0 0'/>"
    "</equality></mujoco>";

/* sapsim's force (impulse / h) of every scalar row of world w, and the rows' tags */
static int solve_rows(const sapSim* s, int w, double h, double* f, int* tag) {
  const sapData* d = sap_data(s);
  const unsigned char* sc = d->scratch + (size_t)w * d->nscratch;
  const double* gam = (const double*)(sc + s->sensor_gam_off);
  const int* tg = (const int*)(sc + s->sensor_tag_off);
  int nc = d->ncon[w], off = SAP_SOLVE_CD(s->m) * nc, n = 0;
  for (; n < SAP_SOLVE_NS(s->m) && tg[n] >= 0; n++) {
    f[n] = gam[off + n] / h;
    tag[n] = tg[n];
  }
  return n;
}

/* MuJoCo's cfrc_ext at the state in md (mj_forward done) with its equality rows' forces taken
 * from sapsim's rows (f, tag: n rows); MuJoCo's rows that sapsim lacks (a weld's rotation rows
 * at torquescale 0) get `extra`; with zero_eq every equality force is 0 (xfrc_applied alone) */
static void mujoco_cfrc(const mjModel* mj, mjData* md, const double* f, const int* tag, int n, double extra,
                        int zero_eq) {
  mju_zero(md->efc_force, md->nefc);
  for (int i = 0; i < md->nefc; i++) {
    if (md->efc_type[i] != mjCNSTR_EQUALITY || zero_eq) continue;
    int e = md->efc_id[i], k = 0;  /* row k of equality e */
    for (int j = i - 1; j >= 0 && md->efc_type[j] == mjCNSTR_EQUALITY && md->efc_id[j] == e; j--) k++;
    int found = 0;
    for (int r = 0; r < n; r++)
      if (SAP_ROW_KIND(tag[r]) == SAP_ROW_EQUALITY && SAP_ROW_ID(tag[r]) == e) {
        if (found++ == k) md->efc_force[i] = f[r];
      }
    if (found <= k) md->efc_force[i] = extra;
  }
  mj_rnePostConstraint(mj, md);
}

static void oracle_scene(const char* scene, const char* name, const char* preset, int nstep, double tol) {
  enum { N = 3 };
  mjModel* mj = fx_mjModel(scene);
  char opts[200];
  snprintf(opts, sizeof(opts), "preset=%s body_outputs=1", preset);
  sapSim* s = fx_sim(scene, N, opts);
  if (!mj || !s) goto done;
  mj->opt.disableflags |= mjDSBL_CONTACT;
  mjData* md = mj_makeData(mj);
  int nb = mj->nbody, nq = mj->nq, nv = mj->nv, nmo = mj->nmocap, ns = SAP_SOLVE_NS(s->m);
  CHECK(s->m->neq == mj->neq, "%s: %d equalities, MuJoCo %d", name, s->m->neq, (int)mj->neq);
  double h = s->h;
  double* q = (double*)malloc(sizeof(double) * N * (nq + nv + 6 * nb + 6 * nb + 7 * (nmo + 1) + ns));
  double *v = q + N * nq, *xf = v + N * nv, *cf = xf + N * 6 * nb, *mp = cf + N * 6 * nb, *mq = mp + N * 3 * (nmo + 1);
  double* f = mq + N * 4 * (nmo + 1);
  int* tag = (int*)malloc(sizeof(int) * (ns + 1));
  /* random start velocities, different in every world */
  for (int i = 0; i < N * nv; i++) v[i] = check_uniform(-1, 1);
  sap_set(s, SAP_FIELD_QVEL, NULL, N, v);
  int mb = 0;  /* the mocap body */
  for (int b = 0; b < nb; b++)
    if (mj->body_mocapid[b] == 0) mb = b;
  double worst = 0, matter = 0, tmax = 0;
  int nrows = 0;
  for (int step = 0; step < nstep; step++) {
    /* a moving mocap target and new pushes */
    for (int w = 0; w < N && nmo; w++) {
      double t = step * h, a = 0.8 * t + w;
      for (int k = 0; k < 3; k++) mp[3 * w + k] = mj->body_pos[3 * mb + k] + 0.05 * sin(3 * t + k + w);
      double qq[4] = {cos(a / 2), 0.3 * sin(a / 2), -0.5 * sin(a / 2), 0.81 * sin(a / 2)}, nn = 0;
      for (int k = 0; k < 4; k++) nn += qq[k] * qq[k];
      for (int k = 0; k < 4; k++) mq[4 * w + k] = qq[k] / sqrt(nn);
    }
    if (nmo) {
      sap_set(s, SAP_FIELD_MOCAP_POS, NULL, N, mp);
      sap_set(s, SAP_FIELD_MOCAP_QUAT, NULL, N, mq);
    }
    /* pushes: forces up to m g / 4, torques up to m g / 4 x 1 cm (a 5 g bead spins at 1e3 rad/s^2) */
    for (int i = 0; i < N * 6 * nb; i++) {
      int b = (i % (6 * nb)) / 6;
      xf[i] = b == 0 ? 0 : mj->body_mass[b] * check_uniform(-2.5, 2.5) * ((i % 6) < 3 ? 1 : 0.01);
    }
    sap_set(s, SAP_FIELD_XFRC_APPLIED, NULL, N, xf);
    sap_get(s, SAP_FIELD_QPOS, NULL, N, q);
    sap_get(s, SAP_FIELD_QVEL, NULL, N, v);
    CHECK(sap_step(s, 1) == SAP_OK, "%s: step: %s", name, sap_lastError());
    for (int i = 0; i < N * 6 * nb; i++) cf[i] = NAN;  /* poison */
    CHECK(sap_get(s, SAP_FIELD_CFRC_EXT, NULL, N, cf) == SAP_OK, "%s", sap_lastError());
    for (int w = 0; w < N; w++) {
      CHECK(sap_data(s)->ncon[w] == 0, "%s: %d contacts in world %d", name, sap_data(s)->ncon[w], w);
      mju_copy(md->xfrc_applied, xf + w * 6 * nb, 6 * nb);
      if (nmo) {
        mju_copy(md->mocap_pos, mp + 3 * w, 3);
        mju_copy(md->mocap_quat, mq + 4 * w, 4);
      }
      fx_mjForwardAt(mj, md, q + w * nq, v + w * nv, NULL);
      int n = solve_rows(s, w, h, f, tag);
      mujoco_cfrc(mj, md, f, tag, n, 3.7, 0);
      const double* got = cf + w * 6 * nb;
      double scale = 0, err = 0;
      for (int i = 0; i < 6 * nb; i++) scale = fmax(scale, fabs(md->cfrc_ext[i]));
      for (int b = 0; b < nb; b++)
        for (int k = 0; k < 6; k++) {
          double e = fabs(got[6 * b + k] - md->cfrc_ext[6 * b + k]) / scale;
          if (e > err) err = e;
          CHECK(e <= tol, "%s %s step %d world %d body %d cfrc_ext[%d] %.15g, MuJoCo %.15g (error %.3g of %.3g)", name,
                preset, step, w, b, k, got[6 * b + k], md->cfrc_ext[6 * b + k], e, scale);
        }
      worst = fmax(worst, err);
      for (int r = 0; r < n; r++)
        if (SAP_ROW_KIND(tag[r]) == SAP_ROW_EQUALITY) nrows++;
      /* how much the equality forces move cfrc_ext (they must matter far above tol) */
      double with[6 * 64];
      mju_copy(with, md->cfrc_ext, 6 * nb);
      mujoco_cfrc(mj, md, f, tag, n, 0, 1);
      for (int i = 0; i < 6 * nb; i++) matter = fmax(matter, fabs(with[i] - md->cfrc_ext[i]) / scale);
      for (int b = 1; b < nb; b++)
        for (int k = 0; k < 3; k++) tmax = fmax(tmax, fabs(with[6 * b + k] - md->cfrc_ext[6 * b + k]));
    }
  }
  fprintf(stderr, "  %s, %s, %d worlds x %d steps (%d equality rows): cfrc_ext vs MuJoCo 4 fed sapsim's row forces: "
          "worst %.2g of the largest entry; the equality forces move it by up to %.3g of it\n", name, preset, N, nstep,
          nrows, worst, matter);
  CHECK(matter > 0.05 && tmax > 0, "%s: the equality forces barely matter (%.3g)", name, matter);
  free(q);
  free(tag);
  mj_deleteData(md);
done:
  sap_free(s);
  mj_deleteModel(mj);
}

static void test_mujoco_oracle(void) {
  oracle_scene(EQ_ZOO, "equality zoo", "approx64", 300, 1e-12);
  oracle_scene(EQ_ZOO, "equality zoo", "drake", 100, 1e-12);
  oracle_scene("scenes/fourbar.xml", "fourbar", "approx64", 200, 1e-12);
  oracle_scene("scenes/planar_loops.xml", "planar loops (mm)", "approx64", 200, 1e-12);
}

/* one body held at rest by an equality and pushed sideways (xfrc_applied: a force of 0.2 m g and
 * a torque at its com); at rest cfrc_ext = [0; m g ez] about its com */
typedef struct {
  const char* eq;  /* the equality, body 'b' against the world or the static body 's' */
  double mass, size;
  const char* euler;
  double ab[3];    /* a connect's anchor in b's frame, in units of size (damping of the swing) */
} restCase;

static void test_rest(void) {
  restCase cases[] = {
      {"<connect body1='b' anchor='0.03 -0.02 0.12'/>", 1.0, 0.05, "10 20 30", {0.6, -0.4, 2.4}},
      {"<connect body1='b' anchor='0.3 0.2 0.9'/>", 120, 0.4, "-70 5 140", {0.75, 0.5, 2.25}},
      {"<connect body1='s' body2='b' anchor='0 0 0'/>", 0.01, 0.005, "0 90 0", {0, 0, 0}},  /* b is body 2 */
      {"<connect site1='sb' site2='ss'/>", 3.3, 0.08, "45 -45 45", {-0.2, 0.5, 1.2}},
      {"<weld body1='b' anchor='0.02 0.01 0.05' torquescale='1'/>", 2.0, 0.05, "30 -60 10", {0, 0, 0}},
      {"<weld body1='b' anchor='0.1 -0.2 0.3' relpose='0.1 0.2 0.3 0.8 0.2 -0.1 0.3' torquescale='0.3'/>", 45, 0.3, "0 0 0",
       {0, 0, 0}},
      {"<weld body1='s' body2='b' anchor='0.01 0 0.002' torquescale='4'/>", 0.02, 0.01, "170 10 -100", {0, 0, 0}},
      {"<weld site1='sb' site2='ss' torquescale='0.7'/>", 7, 0.1, "-20 35 80", {0, 0, 0}},
  };
  int ncase = (int)(sizeof(cases) / sizeof(cases[0]));
  for (int c = 0; c < ncase; c++) {
    const restCase* rc = &cases[c];
    double L = rc->size;
    /* near-critical damping of the swing about the anchor: r from the anchor to the com (geom
     * centre (0.4, -0.3, -1.5) L), K = m g r, I = m (r^2 + L^2), c (1 + r^2) = 2 sqrt(K I) */
    double gp[3] = {0.4, -0.3, -1.5}, r = 0;
    for (int k = 0; k < 3; k++) r += (rc->ab[k] - gp[k]) * (rc->ab[k] - gp[k]) * L * L;
    r = sqrt(r);
    double damping = 2 * rc->mass * sqrt(9.81 * r * (r * r + L * L)) / (1 + r * r);
    char xml[3000];
    snprintf(xml, sizeof(xml),
             "<mujoco><option timestep='0.002'/><default><geom contype='0' conaffinity='0'/></default><worldbody>"
             "<body name='s' pos='0.1 -0.2 1.5' euler='15 25 35'><geom type='sphere' size='%g'/>"
             " <site name='ss' pos='%g %g %g' euler='5 10 15'/></body>"
             "<body name='b' pos='0.1 -0.2 1.5' euler='%s'><joint type='free' damping='%g'/>"
             " <geom type='box' size='%g %g %g' pos='%g %g %g' mass='%g'/><site name='sb' pos='%g %g %g' euler='40 0 -30'/></body>"
             "</worldbody><equality>%s</equality></mujoco>",
             L, 0.5 * L, 0.2 * L, -0.3 * L, rc->euler, damping, L, 0.6 * L, 0.3 * L, 0.4 * L, -0.3 * L,
             -1.5 * L, rc->mass, -0.2 * L, 0.5 * L, 1.2 * L, rc->eq);
    sapSim* s = fx_sim(xml, 1, "preset=approx64 body_outputs=1 optimality_rel_tol=1e-13 cost_rel_tol=0");
    if (!s) continue;
    double mg = rc->mass * 9.81, xf[6 * 3] = {0};
    xf[12] = 0.2 * mg;
    xf[13] = -0.1 * mg;
    /* a connect holds no torque about the line of F = m g ez - push through its anchor: its
     * torque is normal to F, (1, 2, 0) . (0.2, -0.1, 1) = 0; a weld's any */
    xf[15] = 0.05 * mg * L;
    xf[16] = 0.1 * mg * L;
    if (strstr(rc->eq, "weld")) xf[17] = -0.03 * mg * L;
    sap_set(s, SAP_FIELD_XFRC_APPLIED, NULL, 1, xf);
    CHECK(sap_step(s, 6000) == SAP_OK, "step: %s", sap_lastError());
    double cf[18], v[6];
    sap_get(s, SAP_FIELD_CFRC_EXT, NULL, 1, cf);
    sap_get(s, SAP_FIELD_QVEL, NULL, 1, v);
    double vmax = 0;
    for (int i = 0; i < 6; i++) vmax = fmax(vmax, fabs(v[i]));
    const double* F = cf + 12;
    fprintf(stderr, "  rest case %d (m %g, %s): |v| %.1e, cfrc_ext torque %.2g %.2g %.2g, force %.3g %.3g %.10g (m g %.10g)\n",
            c, rc->mass, rc->eq, vmax, F[0], F[1], F[2], F[3], F[4], F[5], mg);
    CHECK(vmax < 1e-6, "case %d not at rest: |v| %.3g", c, vmax);
    for (int k = 0; k < 3; k++) {
      CHECK(fabs(F[3 + k] - (k == 2 ? mg : 0)) <= 1e-7 * mg, "case %d: force[%d] %.12g, want %.12g", c, k, F[3 + k],
            k == 2 ? mg : 0);
      CHECK(fabs(F[k]) <= 1e-7 * mg * L, "case %d: torque[%d] %.3g about the com, want 0 (m g L %.3g)", c, k, F[k],
            mg * L);
    }
    sap_free(s);
  }
}

int main(void) {
  RUN(test_mujoco_oracle);
  RUN(test_rest);
  return check_summary("test_eq_cfrc");
}
