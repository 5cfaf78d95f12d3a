/* Speculative contacts by speed (option contact_band=speed, kernels/band.h): each pair's band
 * narrowed to what its geoms' speed budgets can close in a step, checked after the solve, the
 * step redone with the whole band when a geom outran its budget.
 *
 * Oracles, in lockstep (each step both sims start from the whole band's state, contact_band=
 * margin, with a capacity that holds every contact):
 *  - the whole band's list: the band's is a part of it, contact for contact bit for bit (the
 *    pairs it keeps go through the same narrow phase), the rest whole pairs;
 *  - MuJoCo 4 on the same model: at the band's answer every contact of the whole band's list
 *    that the band left out is idle in SAP's cone, vn >= -phi / (h + taud) + mu |vt|, with vn,
 *    vt the relative velocity of the two bodies' material points at the contact from MuJoCo's
 *    mj_objectVelocity (not sapsim's Jacobians);
 *  - the whole band's answer: a step the band did not redo agrees with it to the solve's
 *    tolerance, a redone step is the whole band's bit for bit;
 *  - the whole band's contact forces on the bodies (cfrc_ext): the left-out contacts carry none.
 * Scenes: the box pile (0.1 m cubes), a mix over three decades of size (a 5 mm bead, a 1 m disc,
 * plates and sticks with aspect ratios to 40, an ellipsoid, a capsule) dropped on a tilted plane
 * with a ball thrown into them at 6 m/s, and the humanoid under random controls. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "fixture_mj.h"

typedef struct {
  int steps, redone, fewer, outside, idle_checked, bitwise_redo;
  long ncon_a, ncon_b;
  double worst;        /* largest |dv| / max |v| in steps not redone */
  double worst_force;  /* largest |d cfrc_ext| / max |cfrc_ext| in steps not redone */
  double worst_idle;   /* smallest margin of the idle test (vn - vhat_n - mu |vt|, m/s) */
  double worst_sensor; /* largest |d sensordata| / max(1, |sensordata|) in steps not redone */
} Band;

/* contact i of db's list is contact j of da's, bit for bit */
static int sameContact(const sapData* da, int j, const sapData* db, int i) {
  return da->con_geom[2 * j] == db->con_geom[2 * i] && da->con_geom[2 * j + 1] == db->con_geom[2 * i + 1] &&
         !memcmp(da->con_pos + 6 * j, db->con_pos + 6 * i, 6 * sizeof(double)) &&
         !memcmp(da->con_frame + 9 * j, db->con_frame + 9 * i, 9 * sizeof(double)) &&
         da->con_dist[j] == db->con_dist[i] && da->con_mu[j] == db->con_mu[i] && da->con_k[j] == db->con_k[i] &&
         da->con_taud[j] == db->con_taud[i];
}

/* relative velocity (body of geom 1 minus body of geom 0) at point x, world frame, from
 * MuJoCo's mj_objectVelocity at md's qpos/qvel (mj_fwdPosition and mj_fwdVelocity done) */
static void mjPointVel(const mjModel* mj, const mjData* md, int g0, int g1, const double* x, double* rel) {
  for (int k = 0; k < 3; k++) rel[k] = 0;
  for (int s = 0; s < 2; s++) {
    int b = mj->geom_bodyid[s ? g1 : g0];
    double v6[6];  // [omega; v] at the body's origin, world frame
    mj_objectVelocity(mj, md, mjOBJ_BODY, b, v6, 0);
    const double* o = md->xpos + 3 * b;
    double r[3] = {x[0] - o[0], x[1] - o[1], x[2] - o[2]};
    double v[3] = {v6[3] + v6[1] * r[2] - v6[2] * r[1], v6[4] + v6[2] * r[0] - v6[0] * r[2],
                   v6[5] + v6[0] * r[1] - v6[1] * r[0]};
    for (int k = 0; k < 3; k++) rel[k] += s ? v[k] : -v[k];
  }
}

/* the lockstep of scene under opts: a with the whole band, b with the speed band; ctrl: random
 * controls (the same on both) */
static Band bandLockstep(const char* scene, const char* opts, int n, int ctrl) {
  Band t = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, INFINITY, 0};
  char oa[256], ob[288];
  snprintf(oa, sizeof(oa), "preset=approx64 optimality_rel_tol=1e-10 ncon_max=1024 body_outputs=1 %s", opts);
  snprintf(ob, sizeof(ob), "%s contact_band=speed", oa);
  sapSim* a = fx_sim(scene, 1, oa);
  sapSim* b = fx_sim(scene, 1, ob);
  mjModel* mj = fx_mjModel(scene);
  mjData* md = mj ? mj_makeData(mj) : NULL;
  if (!a || !b || !md) goto done;
  if (sap_model(a)->nkey > 0) sap_reset(a, 0, NULL);  // the scene's keyframe (its velocities)
  const sapModel* m = sap_model(a);
  int nq = m->nq, nv = m->nv, nb = m->nbody, nu = m->nu;
  double h = m->timestep;
  double* q = malloc(sizeof(double) * (nq + 3 * nv + 12 * nb + nu + 1));
  double *v = q + nq, *va = v + nv, *vb = va + nv, *fa = vb + nv, *fb = fa + 6 * nb, *u = fb + 6 * nb;
  for (int k = 0; k < n; k++) {
    sap_get(a, SAP_FIELD_QPOS, NULL, 1, q);
    sap_get(a, SAP_FIELD_QVEL, NULL, 1, v);
    sap_set(a, SAP_FIELD_QVEL, NULL, 1, v);  // the warm start's last velocity, the same on both
    sap_set(b, SAP_FIELD_QPOS, NULL, 1, q);
    sap_set(b, SAP_FIELD_QVEL, NULL, 1, v);
    if (ctrl && nu) {
      for (int j = 0; j < nu; j++) u[j] = check_uniform(-1, 1);
      sap_set(a, SAP_FIELD_CTRL, NULL, 1, u);
      sap_set(b, SAP_FIELD_CTRL, NULL, 1, u);
    }
    CHECK(sap_step(a, 1) == SAP_OK && sap_step(b, 1) == SAP_OK, "step: %s", sap_lastError());
    sapWorldInfo ia, ib;
    sap_worldInfo(a, NULL, 1, &ia);
    sap_worldInfo(b, NULL, 1, &ib);
    CHECK(ia.ncon_dropped == 0 && ib.ncon_dropped == 0, "%.40s: the capacity dropped contacts", scene);
    sap_get(a, SAP_FIELD_QVEL, NULL, 1, va);
    sap_get(b, SAP_FIELD_QVEL, NULL, 1, vb);
    const sapData* da = sap_data(a);
    const sapData* db = sap_data(b);
    memcpy(fa, da->cfrc_ext, sizeof(double) * 6 * nb);
    memcpy(fb, db->cfrc_ext, sizeof(double) * 6 * nb);
    double scale = 1e-3, e = 0, fs = 1e-9, ef = 0;
    for (int j = 0; j < nv; j++) scale = fmax(scale, fabs(va[j]));
    for (int j = 0; j < nv; j++) e = fmax(e, fabs(va[j] - vb[j]) / scale);
    for (int j = 0; j < 6 * nb; j++) fs = fmax(fs, fabs(fa[j]));
    for (int j = 0; j < 6 * nb; j++) ef = fmax(ef, fabs(fa[j] - fb[j]) / fs);
    t.steps++;
    t.ncon_a += ia.ncon;
    t.ncon_b += ib.ncon;
    t.fewer += ib.ncon < ia.ncon;
    if (ib.band_redo) {
      t.redone++;
      int same = ia.ncon == ib.ncon && memcmp(va, vb, sizeof(double) * nv) == 0;
      t.bitwise_redo += same;
      CHECK(same, "%.40s step %d: a redone step differs from the whole band's (%g)", scene, k, e);
      continue;
    }
    /* b's list: a's contacts, each bit for bit, in a's order */
    for (int i = 0, j = 0; i < ib.ncon; i++, j++) {
      while (j < ia.ncon && !sameContact(da, j, db, i)) j++;
      CHECK(j < ia.ncon, "%.40s step %d: the band's contact %d (geoms %d, %d) is not in the whole band's list", scene,
            k, i, db->con_geom[2 * i], db->con_geom[2 * i + 1]);
    }
    /* the left-out contacts of a's list (pairs with no contact in b's), idle at b's answer by
       MuJoCo's velocities: a's list is at the step's start pose (q), the answer vb */
    fx_mjSetState(mj, md, q, vb, NULL, NULL);
    mj_fwdPosition(mj, md);
    mj_fwdVelocity(mj, md);
    for (int i = 0; i < ia.ncon; i++) {
      int g0 = da->con_geom[2 * i], g1 = da->con_geom[2 * i + 1], kept = 0;
      for (int r = 0; r < ib.ncon && !kept; r++) kept = db->con_geom[2 * r] == g0 && db->con_geom[2 * r + 1] == g1;
      if (kept) continue;
      double phi = da->con_dist[i];
      t.outside++;
      const double* x = da->con_pos + 6 * i;
      double mid[3] = {(x[0] + x[3]) / 2, (x[1] + x[4]) / 2, (x[2] + x[5]) / 2}, rel[3];
      mjPointVel(mj, md, g0, g1, mid, rel);
      const double* nrm = da->con_frame + 9 * i + 6;
      double vn = rel[0] * nrm[0] + rel[1] * nrm[1] + rel[2] * nrm[2], vt = 0;
      for (int c = 0; c < 3; c++) vt += (rel[c] - vn * nrm[c]) * (rel[c] - vn * nrm[c]);
      double slack = vn + phi / (h + da->con_taud[i]) - da->con_mu[i] * sqrt(vt);
      t.idle_checked++;
      t.worst_idle = fmin(t.worst_idle, slack);
      CHECK(slack >= 0, "%.40s step %d: left-out contact %d (geoms %d, %d, phi %g) is not idle at the "
            "answer: vn %g, |vt| %g", scene, k, i, g0, g1, phi, vn, sqrt(vt));
    }
    double es = 0;
    for (int j = 0; j < m->nsensordata; j++)
      es = fmax(es, fabs(da->sensordata[j] - db->sensordata[j]) / fmax(1, fabs(da->sensordata[j])));
    t.worst_sensor = fmax(t.worst_sensor, es);
    CHECK(es <= 1e-6, "%.40s step %d: sensors differ by %g from the whole band's", scene, k, es);
    t.worst = fmax(t.worst, e);
    t.worst_force = fmax(t.worst_force, ef);
    /* both solves to optimality_rel_tol 1e-10: the same optimum (test_capacity's bounds) */
    CHECK(e <= 1e-6, "%.40s step %d: |dv|/|v| %g from the whole band's answer", scene, k, e);
    CHECK(ef <= 1e-5, "%.40s step %d: contact forces differ by %g of the largest", scene, k, ef);
  }
  free(q);
done:
  mj_deleteData(md);
  mj_deleteModel(mj);
  sap_free(a);
  sap_free(b);
  fprintf(stderr, "  %d steps: contacts %.1f (whole band %.1f), fewer in %d, %d redone (%d bitwise); %d left-out "
          "contacts checked idle (worst slack %.3g m/s); worst |dv|/|v| %.2g, forces %.2g, sensors %.2g\n",
          t.steps, (double)t.ncon_b / (t.steps ? t.steps : 1), (double)t.ncon_a / (t.steps ? t.steps : 1), t.fewer,
          t.redone, t.bitwise_redo, t.idle_checked, t.worst_idle, t.worst, t.worst_force, t.worst_sensor);
  return t;
}

static void test_pile(void) {
  Band t = bandLockstep("scenes/box_pile.xml", "", 300, 0);
  CHECK(t.fewer > t.steps / 2, "pile: the band listed fewer contacts in only %d of %d steps", t.fewer, t.steps);
  CHECK(t.idle_checked > 1000, "pile: only %d left-out contacts checked", t.idle_checked);
}

static const char* mixed_xml =
    "<mujoco><option timestep='0.004'/>"
    "<worldbody><geom type='plane' size='4 4 .1' euler='0.12 -0.08 0'/>"
    "<body pos='0 0 0.06' euler='0.05 0.1 0.7'><freejoint/><geom type='box' size='0.4 0.2 0.01' density='300'/></body>"
    "<body pos='0.1 0.05 0.09'><freejoint/><geom type='sphere' size='0.005'/></body>"
    "<body pos='-0.2 0.1 0.14' euler='1.2 0 0.4'><freejoint/><geom type='capsule' size='0.02 0.15'/></body>"
    "<body pos='0.25 -0.1 0.12' euler='0.2 0.9 0'><freejoint/><geom type='box' size='0.2 0.005 0.01'/></body>"
    "<body pos='-0.1 -0.15 0.2' euler='0.3 0.2 0.1'><freejoint/><geom type='ellipsoid' size='0.03 0.06 0.015'/></body>"
    "<body pos='0.05 0.02 0.5'><freejoint/><geom type='box' size='0.05 0.05 0.05'/></body>"
    "<body pos='1.2 0.1 0.15'><freejoint/><geom type='sphere' size='0.08'/></body>"
    "<body pos='0.6 0.9 0.3' euler='0.1 0.1 0'><freejoint/><geom type='cylinder' size='0.5 0.02'/></body>"
    "</worldbody><keyframe><key qvel='0 0 0 0 0 0  0 0 0 0 0 0  0 0 0 0 0 0  0 0 0 0 0 0  0 0 0 0 0 0  "
    "0 0 0 0 0 0  -6 0 0.8 0 5 0  0 0 0 0 0 0'/></keyframe></mujoco>";

static void test_mixed(void) {
  Band t = bandLockstep(mixed_xml, "", 250, 0);
  CHECK(t.fewer > 0, "mixed: the band never listed fewer contacts");
  CHECK(t.redone > 0, "mixed: the thrown ball never made a geom outrun its budget");
}

static void test_humanoid(void) {
  Band t = bandLockstep("scenes/humanoid.xml", "", 150, 1);
  CHECK(t.steps == 150, "humanoid: %d steps", t.steps);
}

/* contact and touch sensors with pairs left out (they read the same forces), a gripper under
 * random controls beside mocap bodies (redone steps), meshes, and scenes whose pairs the band
 * never leaves out: heightfields, adhesive geoms (the lists must be the whole band's) */
static void test_scenes(void) {
  struct { const char* scene; int left_out; } sc[] = {
      {"scenes/contact_sensor_zoo.xml", 1}, {"scenes/arm_gripper_mocap.xml", 1}, {"scenes/mesh_balls.xml", 0},
      {"scenes/hfield_terrain.xml", -1}, {"scenes/adhesion_geom.xml", -1}};
  for (int i = 0; i < 5; i++) {
    fprintf(stderr, "  %s\n", sc[i].scene);
    Band t = bandLockstep(sc[i].scene, "", 200, 1);
    if (sc[i].left_out > 0) CHECK(t.fewer > 0, "%s: the band left no pair out", sc[i].scene);
    if (sc[i].left_out < 0) CHECK(t.fewer == 0 && t.outside == 0, "%s: the band left a pair out", sc[i].scene);
  }
}

/* a reset forgets the speeds: the first step lists the whole band; the worlds' budgets are
 * their own (a cube kicked in world 1 redoes world 1's step only) */
static void test_reset_and_worlds(void) {
  sapSim* s = fx_sim("scenes/box_pile.xml", 2, "contact_band=speed ncon_max=1024");
  sapSim* r = fx_sim("scenes/box_pile.xml", 2, "ncon_max=1024");
  if (!s || !r) goto done;
  int nv = sap_model(s)->nv;
  double* v = malloc(sizeof(double) * 2 * nv);
  sapWorldInfo is[2], ir[2];
  CHECK(sap_step(s, 120) == SAP_OK && sap_step(r, 120) == SAP_OK, "step: %s", sap_lastError());
  sap_worldInfo(s, NULL, 2, is);
  sap_worldInfo(r, NULL, 2, ir);
  CHECK(is[0].ncon < ir[0].ncon / 2, "settled pile: %d contacts listed, whole band %d", is[0].ncon, ir[0].ncon);
  sap_get(s, SAP_FIELD_QVEL, NULL, 2, v);
  for (int k = 0; k < 3; k++) v[nv + 6 * 13 + k] = k == 2 ? -4 : 3;  // world 1: the middle cube kicked
  sap_set(s, SAP_FIELD_QVEL, NULL, 2, v);
  CHECK(sap_step(s, 1) == SAP_OK, "step: %s", sap_lastError());
  sap_worldInfo(s, NULL, 2, is);
  CHECK(!is[0].band_redo && is[1].band_redo, "kick in world 1: redo flags %d, %d", is[0].band_redo, is[1].band_redo);
  sapIterStats it;
  CHECK(sap_iterStats(s, &it) == SAP_OK && it.band_redos >= 1, "band_redos %g", it.band_redos);
  CHECK(sap_reset(s, -1, NULL) == SAP_OK && sap_reset(r, -1, NULL) == SAP_OK, "reset: %s", sap_lastError());
  CHECK(sap_step(s, 1) == SAP_OK && sap_step(r, 1) == SAP_OK, "step: %s", sap_lastError());
  sap_worldInfo(s, NULL, 2, is);
  sap_worldInfo(r, NULL, 2, ir);
  CHECK(is[0].ncon == ir[0].ncon && is[1].ncon == ir[1].ncon, "first step after a reset: %d, %d contacts, whole band %d, %d",
        is[0].ncon, is[1].ncon, ir[0].ncon, ir[1].ncon);
  CHECK(sap_iterStatsClear(s) == SAP_OK && sap_iterStats(s, &it) == SAP_OK && it.band_redos == 0, "cleared: %g",
        it.band_redos);
  free(v);
done:
  sap_free(s);
  sap_free(r);
}

/* what the option does not combine with, each named; a bad value names the valid ones */
static void test_refusals(void) {
  fx_createRefused("scenes/box_pile.xml", "contact_band=speed contact_screen=1", SAP_ERR_UNSUPPORTED, "contact_screen");
  fx_createRefused("scenes/box_pile.xml", "contact_band=speed device=cuda", SAP_ERR_UNSUPPORTED, "CPU backend only");
  const char* sleepy =
      "<mujoco><option><flag sleep='enable'/></option><worldbody><geom type='plane' size='1 1 .1'/>"
      "<body pos='0 0 .1'><freejoint/><geom type='box' size='.05 .05 .05'/></body></worldbody></mujoco>";
  fx_createRefused(sleepy, "contact_band=speed", SAP_ERR_UNSUPPORTED, "sleep");
  sapOptions o;
  sap_optionsDefault(&o);
  CHECK(sap_optionsSetPair(&o, "contact_band=fast") != SAP_OK, "contact_band=fast accepted");
  CHECK(strstr(sap_lastError(), "speed") && strstr(sap_lastError(), "margin"), "message '%s' lacks the values",
        sap_lastError());
  sapSim* s = fx_sim("scenes/box_pile.xml", 1, "contact_band=speed contacts=0");  // nothing to leave out
  if (s) CHECK(sap_step(s, 5) == SAP_OK, "contacts=0: %s", sap_lastError());
  sap_free(s);
}

int main(void) {
  RUN(test_refusals);
  RUN(test_reset_and_worlds);
  RUN(test_scenes);
  RUN(test_pile);
  RUN(test_mixed);
  RUN(test_humanoid);
  return check_summary("test_contact_band");
}
