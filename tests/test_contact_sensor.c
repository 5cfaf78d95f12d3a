/* Contact and geometric sensors (kernels/sensor.h: contact, insidesite) against independent
 * oracles:
 *   MuJoCo 4.0's mj_forward at random states of scenes/contact_sensor_zoo.xml: found, dist,
 *   pos, normal, tangent of every matching form and reduction, where sapsim's contact list
 *   (phi < 0) holds the same geom pairs as MuJoCo's (the states where it does not are counted
 *   and reported); insidesite at the same states (both outcomes required);
 *   physics for force and torque (the solvers differ): boxes and spheres resting on a floor
 *   from 0.02 to 100 kg (normal force m g, netforce of a box's four corners = m g, its torque
 *   about the centroid 0), a box pushed sideways at the friction limit (tangential mu m g),
 *   the sum of sapsim's own per-contact impulses / h as a second reference; the frame
 *   convention against MuJoCo 4's own contact force on a resting sphere (both solvers agree);
 *   distance, normal, fromto at the same states (penetrating, apart and beyond the cutoff
 *   required); refusals by name. */
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "sensor.h"
#include "sim.h"

#define ZOO "scenes/contact_sensor_zoo.xml"

typedef struct {
  mjModel* mj;
  mjData* md;
  sapModel* m;
  sapSim* s;
} fixture;

static int open_fixture(fixture* f, const char* path, const char* xml, int nworld) {
  memset(f, 0, sizeof(*f));
  char err[1000] = "";
  if (path) f->mj = mj_loadXML(path, NULL, err, sizeof(err));
  else {
    mjSpec* spec = mj_parseXMLString(xml, NULL, err, sizeof(err));
    if (spec) { f->mj = mj_compile(spec, NULL); mj_deleteSpec(spec); }
  }
  CHECK(f->mj != NULL, "mujoco: %s", err);
  if (!f->mj) return 0;
  f->md = mj_makeData(f->mj);
  sapStatus st = path ? sap_loadModel(path, &f->m) : sap_loadModelString(xml, &f->m);
  CHECK(st == SAP_OK, "load: %s", sap_lastError());
  if (st != SAP_OK) return 0;
  sapOptions opt;
  sap_optionsDefault(&opt);
  sap_optionsSet(&opt, "preset", "approx64");
  opt.device = SAP_DEVICE_CPU;
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

/* ---- layout of a contact sensor ---------------------------------------------------- */

static const int field_size[7] = {1, 3, 3, 1, 3, 3, 3};

/* offset of field k in a slot (-1: not asked), the slot size */
static int field_off(int spec, int k) {
  if (!(spec >> k & 1)) return -1;
  int o = 0;
  for (int j = 0; j < k; j++) o += (spec >> j & 1) * field_size[j];
  return o;
}
static int slot_size(int spec) { return field_off(spec | (1 << 7), 7); }

/* a random unit quaternion */
static void rand_quat(double* q) {
  for (int k = 0; k < 4; k++) q[k] = check_uniform(-1, 1);
  mju_normalize4(q);
}

/* random state of the zoo: bodies near the floor and near each other */
static void zoo_state(const mjModel* mj, double* q) {
  static const struct { const char* body; double lo[3], hi[3]; } r[] = {
      {"ball", {-0.3, -0.3, 0.02}, {0.3, 0.3, 0.2}},   {"box", {-0.15, -0.15, -0.02}, {0.15, 0.15, 0.22}},
      {"arm", {0.8, -0.1, 0.0}, {1.0, 0.1, 0.2}},     {"big", {-0.1, 1.0, 0.45}, {0.1, 1.3, 0.75}},
      {"tiny", {0.0, 0.6, 0.0}, {0.5, 1.2, 0.03}},     {"can", {0.3, -0.5, 0.0}, {0.6, -0.2, 0.2}}};
  memcpy(q, mj->qpos0, sizeof(double) * mj->nq);
  for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++) {
    int b = mj_name2id(mj, mjOBJ_BODY, r[i].body);
    int a = mj->jnt_qposadr[mj->body_jntadr[b]];
    for (int k = 0; k < 3; k++) q[a + k] = check_uniform(r[i].lo[k], r[i].hi[k]);
    rand_quat(q + a + 3);
  }
  for (int j = 0; j < mj->njnt; j++)
    if (mj->jnt_type[j] == mjJNT_HINGE) q[mj->jnt_qposadr[j]] = check_uniform(-2, 2);
}

/* why a state's contact lists differ: 0 the same, else the reason (tallied in why[]) */
enum { SAME = 0, EXTRA_FORCE, DIFF_PAIR, NWHY };
static const char* why_name[NWHY] = {"same", "force-carrying speculative contacts", "narrow phase"};
static int why_types[9][9];  /* type pairs of the first contact without a counterpart */

static double impulse_n(const fixture* f, int j) {
  sapSensorSolve S;
  sapc_sensorSolveInfo(f->s, &S);
  return sapw_sensorImpulse(&S, f->s->d.scratch, S.cd * j + 2);
}

/* sapsim's contact list in MuJoCo's terms: the step's (the sensors' rule, sapw_conGet: phi < 0
 * or a normal impulse; spec marks the speculative force-carrying ones) or the position stage's
 * (sapsim's narrow phase at MuJoCo's geom poses and margins, sapw_sensorCollide) */
typedef struct { int g[2], spec; double dist, pos[3], n[3]; } conX;
static int sap_list(const fixture* f, int step, conX* c) {
  const sapData* d = &f->s->d;
  const sapModel* m = f->m;
  int n = 0;
  if (step) {
    for (int j = 0; j < d->ncon[0] && n < 512; j++) {
      if (!(d->con_dist[j] < 0) && !(impulse_n(f, j) > 0)) continue;
      int p = sapw_findPair(m, d->con_geom[2 * j], d->con_geom[2 * j + 1]);
      c[n].g[0] = d->con_geom[2 * j];
      c[n].g[1] = d->con_geom[2 * j + 1];
      c[n].spec = !(d->con_dist[j] < 0);
      c[n].dist = d->con_dist[j] + m->pair_margin[p];
      for (int k = 0; k < 3; k++) {
        c[n].pos[k] = 0.5 * (d->con_pos[6 * j + k] + d->con_pos[6 * j + 3 + k]);
        c[n].n[k] = d->con_frame[9 * j + 6 + k];
      }
      n++;
    }
    return n;
  }
  sapcContact_f64 cc[SAPC_PAIRCON];
  for (int p = 0; p < m->npair_max; p++) {
    int nk = sapw_collidePair(m, f->md->geom_xpos, f->md->geom_xmat, m->pair_geom[2 * p], m->pair_geom[2 * p + 1],
                              m->pair_margin[p], 1, cc);
    for (int k = 0; k < nk && n < 512; k++, n++) {
      c[n].g[0] = m->pair_geom[2 * p];
      c[n].g[1] = m->pair_geom[2 * p + 1];
      c[n].spec = 0;
      c[n].dist = cc[k].dist;
      for (int j = 0; j < 3; j++) { c[n].pos[j] = cc[k].pos[j]; c[n].n[j] = cc[k].n[j]; }
    }
  }
  return n;
}

/* every MuJoCo contact has a counterpart in sapsim's list (same geoms, dist, pos and normal
 * to 1e-6) and the lists are equally long */
static int same_contacts(const fixture* f, int step) {
  static conX c[512];
  int n = sap_list(f, step, c), used[512] = {0}, nspec = 0;
  for (int k = 0; k < n; k++) nspec += c[k].spec;
  for (int j = 0; j < f->md->ncon; j++) {
    const mjContact* mc = f->md->contact + j;
    int a = mc->geom[0], b = mc->geom[1], hit = 0;
    for (int k = 0; k < n && !hit; k++) {
      if (used[k] || c[k].spec) continue;
      double sg = c[k].g[0] == a && c[k].g[1] == b ? 1 : (c[k].g[0] == b && c[k].g[1] == a ? -1 : 0);
      if (sg == 0 || !(fabs(c[k].dist - mc->dist) < 1e-6) || !(mju_dist3(c[k].pos, mc->pos) < 1e-6)) continue;
      double dn[3] = {sg * c[k].n[0] - mc->frame[0], sg * c[k].n[1] - mc->frame[1], sg * c[k].n[2] - mc->frame[2]};
      if (mju_norm3(dn) < 1e-6) hit = used[k] = 1;
    }
    if (!hit) {
      why_types[f->m->geom_type[a]][f->m->geom_type[b]]++;
      return DIFF_PAIR;
    }
  }
  if (n - nspec != f->md->ncon) {
    for (int k = 0; k < n; k++)
      if (!used[k] && !c[k].spec) { why_types[f->m->geom_type[c[k].g[0]]][f->m->geom_type[c[k].g[1]]]++; break; }
    return DIFF_PAIR;
  }
  return nspec ? EXTRA_FORCE : SAME;
}

/* the geometric fields of slot `got` against slot `want` (dist, pos, normal, tangent) */
static void check_slot(const char* what, int spec, const double* got, const double* want, double tol) {
  static const int geo[4] = {SAP_CONDATA_DIST, SAP_CONDATA_POS, SAP_CONDATA_NORMAL, SAP_CONDATA_TANGENT};
  char name[300];
  int o = field_off(spec, SAP_CONDATA_FOUND);
  if (o >= 0) CHECK(got[o] == want[o], "%s found %g want %g", what, got[o], want[o]);
  for (int k = 0; k < 4; k++) {
    o = field_off(spec, geo[k]);
    if (o < 0) continue;
    snprintf(name, sizeof(name), "%s field %d", what, geo[k]);
    check_arrays(name, got + o, want + o, field_size[geo[k]], tol, 0);
  }
}

/* slot of `set` (n slots) whose pos is nearest p; -1 when none */
static int nearest_slot(int spec, const double* set, int n, const double* p) {
  int o = field_off(spec, SAP_CONDATA_POS), best = -1;
  double bd = 1e300;
  for (int j = 0; j < n && o >= 0; j++) {
    double dd = mju_dist3(set + j * slot_size(spec) + o, p);
    if (dd < bd) { bd = dd; best = j; }
  }
  return best;
}

/* contact sensor i of sapsim (got) against MuJoCo (want), by reduction */
static void compare_contact(const mjModel* mj, const mjData* md, int i, const double* got, const double* want,
                            double tol, int state, int* nslots) {
  int spec = mj->sensor_intprm[mjNSENS * i], reduce = mj->sensor_intprm[mjNSENS * i + 1];
  int size = slot_size(spec), num = mj->sensor_dim[i] / size;
  int fo = field_off(spec, SAP_CONDATA_FOUND);
  int found = fo >= 0 ? (int)want[fo] : 0, nslot = found < num ? found : num;
  char what[200];
  snprintf(what, sizeof(what), "state %d sensor %s", state, mj_id2name(mj, mjOBJ_SENSOR, i));
  if (fo >= 0) CHECK(got[fo] == want[fo], "%s found %g want %g", what, got[fo], want[fo]);
  if (reduce == SAP_REDUCE_MINDIST) {
    /* ascending dist; contacts of equal dist (a capsule or box face parallel to the floor) in
     * either list's order: matched by position */
    int od = field_off(spec, SAP_CONDATA_DIST);
    for (int j = 0; j < nslot; j++) {
      int k = j;
      if (od >= 0 && field_off(spec, SAP_CONDATA_POS) >= 0) {
        double bd = 1e300;
        for (int i2 = 0; i2 < nslot; i2++) {
          if (!(fabs(got[i2 * size + od] - want[j * size + od]) < tol)) continue;
          double dd = mju_dist3(got + i2 * size + field_off(spec, SAP_CONDATA_POS),
                                want + j * size + field_off(spec, SAP_CONDATA_POS));
          if (dd < bd) { bd = dd; k = i2; }
        }
      }
      /* a tie at the last slot with a contact left out: either list's pick is MuJoCo's rule */
      int tie_all = 0, tie_in = 0;
      for (int c = 0; c < md->ncon && od >= 0; c++) tie_all += fabs(md->contact[c].dist - want[j * size + od]) < 1e-12;
      for (int c = 0; c < nslot && od >= 0; c++) tie_in += fabs(want[c * size + od] - want[j * size + od]) < 1e-12;
      if (tie_all > tie_in) CHECK(fabs(got[j * size + od] - want[j * size + od]) < tol, "%s tied dist", what);
      else check_slot(what, spec, got + k * size, want + j * size, tol);
      if (od >= 0 && j > 0) CHECK(got[j * size + od] >= got[(j - 1) * size + od], "%s: dist not ascending", what);
    }
    for (int j = nslot; j < num; j++) check_slot(what, spec, got + j * size, want + j * size, 0);  // zeros
    *nslots += nslot;
  } else if (reduce == SAP_REDUCE_NONE) {
    /* contact order differs between the two lists: all matches in the slots: compare as sets */
    if (found <= num)
      for (int j = 0; j < nslot; j++) {
        int k = nearest_slot(spec, got, nslot, want + j * size + field_off(spec, SAP_CONDATA_POS));
        if (k >= 0) check_slot(what, spec, got + k * size, want + j * size, tol);
        *nslots += 1;
      }
  } else if (reduce == SAP_REDUCE_NETFORCE) {
    int o = field_off(spec, SAP_CONDATA_DIST);
    if (o >= 0) CHECK(got[o] == 0 && want[o] == 0, "%s netforce dist", what);
    o = field_off(spec, SAP_CONDATA_NORMAL);
    if (o >= 0 && !check_arrays(what, got + o, want + o, 6, 0, 0))  // normal and tangent: constants
      printf("  mujoco netforce: found %g normal %g %g %g tangent %g %g %g\n", want[fo], want[o], want[o + 1],
             want[o + 2], want[o + 3], want[o + 4], want[o + 5]);
  }
}

/* the contact sensors of one stage (pos: MuJoCo's needstage below acc) against MuJoCo's */
static int compare_stage(const fixture* f, int acc, int st, int* nslots, int* why) {
  const mjModel* mj = f->mj;
  int r = same_contacts(f, acc);
  why[r]++;
  if (r != SAME) return 0;
  for (int i = 0; i < mj->nsensor; i++)
    if (mj->sensor_type[i] == mjSENS_CONTACT && (mj->sensor_needstage[i] == mjSTAGE_ACC) == acc)
      compare_contact(mj, f->md, i, f->s->d.sensordata + mj->sensor_adr[i], f->md->sensordata + mj->sensor_adr[i], 1e-6,
                      st, nslots);
  return 1;
}

/* geometric fields at random states vs mj_forward: position-stage sensors (contact sensors
 * without forces, insidesite) at the edited state, acceleration-stage ones after a step from it */
static void test_zoo_oracle(void) {
  fixture f;
  if (!open_fixture(&f, ZOO, NULL, 1)) { close_fixture(&f); return; }
  const mjModel* mj = f.mj;
  sapSim* s = f.s;
  int nstate = 400, same[2] = {0, 0}, why[2][NWHY] = {{0}}, nslots = 0, inside[2] = {0, 0}, ndist[3] = {0, 0, 0};
  double* q = (double*)malloc(sizeof(double) * mj->nq);
  double* v = (double*)calloc(mj->nv, sizeof(double));
  for (int st = 0; st < nstate; st++) {
    zoo_state(mj, q);
    CHECK(sap_set(s, SAP_FIELD_QPOS, NULL, 1, q) == SAP_OK, "%s", sap_lastError());
    CHECK(sap_set(s, SAP_FIELD_QVEL, NULL, 1, v) == SAP_OK, "%s", sap_lastError());
    memcpy(f.md->qpos, q, sizeof(double) * mj->nq);
    memset(f.md->qvel, 0, sizeof(double) * mj->nv);
    mj_forward(f.mj, f.md);
    for (int i = 0; i < mj->nsensor; i++) {
      if (mj->sensor_type[i] != mjSENS_INSIDESITE) continue;
      int a = mj->sensor_adr[i];
      CHECK(s->d.sensordata[a] == f.md->sensordata[a], "state %d %s: %g want %g", st,
            mj_id2name(mj, mjOBJ_SENSOR, i), s->d.sensordata[a], f.md->sensordata[a]);
      inside[f.md->sensordata[a] != 0]++;
    }
    /* distance, normal, fromto: MuJoCo's values (penetrating, apart, beyond the cutoff) */
    for (int i = 0; i < mj->nsensor; i++) {
      int t = mj->sensor_type[i], a = mj->sensor_adr[i];
      if (t != mjSENS_GEOMDIST && t != mjSENS_GEOMNORMAL && t != mjSENS_GEOMFROMTO) continue;
      char what[200];
      snprintf(what, sizeof(what), "state %d %s", st, mj_id2name(mj, mjOBJ_SENSOR, i));
      check_arrays(what, s->d.sensordata + a, f.md->sensordata + a, mj->sensor_dim[i], 1e-7, 0);
      if (t == mjSENS_GEOMDIST) {
        double dd = f.md->sensordata[a];
        ndist[dd < 0 ? 0 : (dd < mj->sensor_cutoff[i] ? 1 : 2)]++;
      }
    }
    same[0] += compare_stage(&f, 0, st, &nslots, why[0]);
    CHECK(sap_step(s, 1) == SAP_OK, "%s", sap_lastError());
    same[1] += compare_stage(&f, 1, st, &nslots, why[1]);
  }
  printf("zoo: %d (position stage) and %d (step) of %d states with MuJoCo 4's contact pairs; %d slots "
         "compared; insidesite %d inside, %d outside; distance %d penetrating, %d apart, %d beyond the cutoff\n",
         same[0], same[1], nstate, nslots, inside[1], inside[0], ndist[0], ndist[1], ndist[2]);
  for (int k = 0; k < 2; k++)
    printf("  %s: %d same, %d with %s, %d with %s\n", k ? "step" : "position stage", why[k][SAME],
           why[k][EXTRA_FORCE], why_name[EXTRA_FORCE], why[k][DIFF_PAIR], why_name[DIFF_PAIR]);
  for (int a = 0; a < 9; a++)
    for (int b = 0; b < 9; b++)
      if (why_types[a][b]) printf("  narrow phase differs first at geom types %d-%d: %d states\n", a, b, why_types[a][b]);
  CHECK(same[0] >= nstate * 7 / 10 && same[1] >= nstate * 6 / 10, "only %d / %d of %d states have MuJoCo's "
        "contacts", same[0], same[1], nstate);
  CHECK(nslots > 1000, "only %d slots compared", nslots);
  CHECK(inside[0] > 50 && inside[1] > 50, "insidesite outcomes %d / %d", inside[0], inside[1]);
  CHECK(ndist[0] > 50 && ndist[1] > 50 && ndist[2] > 50, "distance cases %d %d %d", ndist[0], ndist[1], ndist[2]);
  free(q);
  free(v);
  close_fixture(&f);
}

/* ---- forces: physics --------------------------------------------------------------- */

/* a sphere and a box of mass m at rest on a floor, and the box pushed sideways past the
 * friction limit: the sphere's contact force (normal first, object 1 on object 2) = (m g, 0, 0)
 * and torque 0; the box's netforce of its four corners = (0, 0, -m g) (the box presses the
 * floor) about their force-weighted centroid (torque 0); sliding, the net tangential force is
 * mu m g along the push; the sum of sapsim's own impulses / h agrees (second reference) */
static void test_rest_and_slide(void) {
  const double masses[4] = {0.02, 0.5, 7, 100}, mu = 0.4, g = 9.81;
  for (int im = 0; im < 4; im++) {
    double m = masses[im], sz = 0.05 * (1 + im);
    char xml[3000];
    snprintf(xml, sizeof(xml),
             "<mujoco><option timestep='0.002'/><worldbody><geom name='floor' type='plane' size='20 20 .1' "
             "friction='%g'/><body name='ball' pos='-2 0 %g'><freejoint/><geom name='ball' size='%g' mass='%g' "
             "friction='%g'/></body><body name='box' pos='2 0 %g'><freejoint/><geom name='box' type='box' "
             "size='%g %g %g' mass='%g' friction='%g'/></body></worldbody><sensor>"
             "<contact name='ball' geom1='ball' geom2='floor' data='found force torque' reduce='mindist'/>"
             "<contact name='net' body1='box' data='found force torque pos' reduce='netforce'/>"
             "<contact name='max' geom2='box' data='found force' reduce='maxforce' num='2'/>"
             "</sensor></mujoco>",
             mu, sz, sz, m, mu, 0.6 * sz, 1.5 * sz, sz, 0.6 * sz, m, mu);
    fixture f;
    if (!open_fixture(&f, NULL, xml, 1)) { close_fixture(&f); return; }
    sapSim* s = f.s;
    CHECK(sap_step(s, 1000) == SAP_OK, "%s", sap_lastError());
    const double* sd = s->d.sensordata;
    double W = m * g, rt = 1e-3;
    /* ball: found 1, force (m g, 0, 0), torque 0 */
    CHECK(sd[0] == 1, "m %g ball found %g", m, sd[0]);
    CHECK_CLOSE(sd[1], W, rt * W, 0, "m %g ball normal force", m);
    CHECK_CLOSE(sd[2], 0, rt * W, 0, "m %g ball tangent force 1", m);
    CHECK_CLOSE(sd[3], 0, rt * W, 0, "m %g ball tangent force 2", m);
    for (int k = 4; k < 7; k++) CHECK(fabs(sd[k]) <= 1e-9 * W, "m %g ball torque %g", m, sd[k]);
    /* box: netforce of 4 corners; the point is the box's bottom centre by symmetry */
    const double* net = sd + 7;
    CHECK(net[0] == 4, "m %g box found %g", m, net[0]);
    CHECK_CLOSE(net[1], 0, rt * W, 0, "m %g net fx", m);
    CHECK_CLOSE(net[2], 0, rt * W, 0, "m %g net fy", m);
    CHECK_CLOSE(net[3], -W, rt * W, 0, "m %g net fz (the box presses the floor)", m);
    for (int k = 4; k < 7; k++) CHECK_CLOSE(net[k], 0, rt * W * sz, 0, "m %g net torque %d", m, k - 4);
    CHECK_CLOSE(net[7], s->d.qpos[7], 1e-3 * sz, 0, "m %g net point x", m);
    /* the contact points are the midpoints of the penetration (box bottom to floor) */
    CHECK_CLOSE(net[9], 0.5 * (s->d.qpos[9] - 0.6 * sz), 1e-6 * sz, 0, "m %g net point z", m);
    /* maxforce: the two largest corner forces (box as geom2: normal force on the box, positive) */
    const double* mx = sd + 17;
    CHECK(mx[0] == 4 && mx[4] == 4, "m %g maxforce found %g %g", m, mx[0], mx[4]);
    CHECK(mx[1] >= mx[5] && mx[5] > 0 && mx[1] <= W, "m %g maxforce order %g %g", m, mx[1], mx[5]);
    /* second reference: sapsim's own impulses of the box's contacts, summed */
    sapSensorSolve S;
    sapc_sensorSolveInfo(s, &S);
    double fz = 0;
    for (int k = 0; k < s->d.ncon[0]; k++)
      if (s->d.con_geom[2 * k + 1] == 2 && s->d.con_dist[k] < 0) fz += sapw_sensorImpulse(&S, s->d.scratch, S.cd * k + 2) / S.h;
    CHECK_CLOSE(-net[3], fz, 1e-12 * W, 0, "m %g netforce vs summed impulses", m);
    /* push the box along +x at twice the friction limit: kinetic friction mu m g */
    double* xf = s->d.xfrc_applied + 6 * 2;
    xf[0] = 2 * mu * W;
    CHECK(sap_step(s, 200) == SAP_OK, "%s", sap_lastError());
    CHECK(s->d.qvel[6] > 0.1, "m %g box does not slide (v %g)", m, s->d.qvel[6]);
    /* the box drags the floor along +x: force by the box on the floor */
    CHECK_CLOSE(net[1], mu * W, 2e-2 * mu * W, 0, "m %g sliding friction (mu m g)", m);
    CHECK_CLOSE(net[3], -W, 2e-2 * W, 0, "m %g sliding normal", m);
    close_fixture(&f);
  }
}

/* the frame convention against MuJoCo 4's own contact force on a resting sphere, where both
 * solvers give the weight: mj_contactForce in MuJoCo's frame of its contact, after the same
 * settling in MuJoCo, equals sapsim's sensor (normal first, tangents ~0) */
static void test_frame_vs_mujoco(void) {
  const char* xml =
      "<mujoco><option timestep='0.002'/><worldbody><geom name='floor' type='plane' size='5 5 .1' "
      "quat='0.95 0.2 0.1 0.2'/><body name='ball' pos='0 0 0.3'><freejoint/><geom name='ball' size='0.1' "
      "mass='3'/></body></worldbody><sensor><contact name='c' geom1='floor' geom2='ball' "
      "data='found force normal tangent' reduce='mindist'/></sensor></mujoco>";
  fixture f;
  if (!open_fixture(&f, NULL, xml, 1)) { close_fixture(&f); return; }
  /* friction on a tilted floor holds the sphere: both settle to rest */
  for (int k = 0; k < 3000; k++) mj_step(f.mj, f.md);
  CHECK(sap_step(f.s, 3000) == SAP_OK, "%s", sap_lastError());
  CHECK(f.md->ncon == 1, "mujoco contacts %d", f.md->ncon);
  double ft[6];
  mj_contactForce(f.mj, f.md, 0, ft);
  const double* sd = f.s->d.sensordata;
  for (int k = 0; k < 3; k++) CHECK_CLOSE(sd[1 + k], ft[k], 2e-3 * 3 * 9.81, 0, "force[%d] vs MuJoCo", k);
  for (int k = 0; k < 3; k++) CHECK_CLOSE(sd[4 + k], f.md->contact[0].frame[k], 1e-6, 0, "normal[%d]", k);
  for (int k = 0; k < 3; k++) CHECK_CLOSE(sd[7 + k], f.md->contact[0].frame[3 + k], 1e-6, 0, "tangent[%d]", k);
  CHECK(fabs(ft[1]) + fabs(ft[2]) > 0.05 * ft[0], "the tilt loads no friction (%g %g %g)", ft[0], ft[1], ft[2]);
  close_fixture(&f);
}

/* ---- refusals by name ---------------------------------------------------------------- */

static void expect_refused(const char* geoms, const char* sensor, const char* fragment) {
  char xml[2000];
  snprintf(xml, sizeof(xml), "<mujoco><worldbody><geom name='floor' type='plane' size='1 1 .1'/><body name='b' "
           "pos='0 0 1'><freejoint/>%s<site name='s' type='box' size='.1 .1 .1'/></body><body name='c'><freejoint/>"
           "<geom type='box' size='.1 .1 .1'/></body></worldbody><sensor>%s"
           "</sensor></mujoco>", geoms, sensor);
  sapModel* m = NULL;
  sapStatus st = sap_loadModelString(xml, &m);
  CHECK(st == SAP_ERR_UNSUPPORTED, "%s: status %d (%s)", sensor, st, sap_lastError());
  CHECK(strstr(sap_lastError(), fragment) != NULL, "%s: message '%s' lacks '%s'", sensor, sap_lastError(), fragment);
  sap_freeModel(m);
}

static void test_refused(void) {
  const char* g = "<geom name='e' type='ellipsoid' size='.1 .2 .3'/><geom name='x' type='box' size='.1 .1 .1'/>";
  expect_refused(g, "<contact body1='b' data='found angvel'/>", "data field 'angvel'");
  expect_refused(g, "<distance geom1='e' geom2='x'/>", "a ellipsoid and a box");
  expect_refused(g, "<fromto body1='b' geom2='floor'/><normal geom1='x' body2='c'/>", "a box and a box");
  expect_refused("<geom name='sp' size='.1'/><geom name='e' type='ellipsoid' size='.1 .2 .3'/>",
                 "<insidesite objtype='body' objname='b' site='s'/><contact site='s'/><distance geom1='e' geom2='sp'/>",
                 "a ellipsoid and a sphere");
}

int main(void) {
  mju_user_warning = NULL;
  RUN(test_zoo_oracle);
  RUN(test_rest_and_slide);
  RUN(test_frame_vs_mujoco);
  RUN(test_refused);
  return check_summary("test_contact_sensor");
}
