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
 *   mutations (flip, frame, reduce) that the checks catch; refusals by name. */
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
      {"arm", {0.8, -0.1, 0.0}, {1.0, 0.1, 0.2}},     {"big", {-0.1, 1.0, 0.45}, {0.1, 1.3, 0.6}},
      {"tiny", {0.0, 0.6, 0.0}, {0.5, 1.2, 0.03}}};
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

/* sorted geom-pair keys of MuJoCo's contacts and of sapsim's: the step's list (phi < 0) when
 * step, else sapsim's narrow phase at MuJoCo's geom poses with MuJoCo's margins (the position
 * stage's list, sapw_sensorCollide) */
static int cmp_int(const void* a, const void* b) { return *(const int*)a - *(const int*)b; }
static int cmp_dbl(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}
static int same_contacts(const fixture* f, int step) {
  const sapData* d = &f->s->d;
  const sapModel* m = f->m;
  int keys[2][512], n[2] = {0, 0};
  double dist[2][512];
  for (int j = 0; j < f->md->ncon && j < 512; j++) {
    int a = f->md->contact[j].geom[0], b = f->md->contact[j].geom[1];
    dist[0][n[0]] = f->md->contact[j].dist;
    keys[0][n[0]++] = (a < b ? a : b) * 4096 + (a < b ? b : a);
  }
  if (step) {
    for (int j = 0; j < d->ncon[0] && j < 512; j++)
      if (d->con_dist[j] < 0) {
        int p = sapw_findPair(m, d->con_geom[2 * j], d->con_geom[2 * j + 1]);
        dist[1][n[1]] = d->con_dist[j] + m->pair_margin[p];
        keys[1][n[1]++] = d->con_geom[2 * j] * 4096 + d->con_geom[2 * j + 1];
      }
  } else {
    sapcContact_f64 c[SAPC_PAIRCON];
    for (int p = 0; p < m->npair_max; p++) {
      int nk = sapw_collidePair(m, f->md->geom_xpos, f->md->geom_xmat, m->pair_geom[2 * p], m->pair_geom[2 * p + 1],
                                m->pair_margin[p], 1, c);
      for (int k = 0; k < nk && n[1] < 512; k++) {
        dist[1][n[1]] = c[k].dist;
        keys[1][n[1]++] = m->pair_geom[2 * p] * 4096 + m->pair_geom[2 * p + 1];
      }
    }
  }
  if (n[0] != n[1]) return 0;
  qsort(keys[0], n[0], sizeof(int), cmp_int);
  qsort(keys[1], n[1], sizeof(int), cmp_int);
  qsort(dist[0], n[0], sizeof(double), cmp_dbl);
  qsort(dist[1], n[1], sizeof(double), cmp_dbl);
  for (int j = 0; j < n[0]; j++)
    if (!(fabs(dist[0][j] - dist[1][j]) < 1e-6)) return 0;
  return !memcmp(keys[0], keys[1], sizeof(int) * n[0]);
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
static void compare_contact(const mjModel* mj, int i, const double* got, const double* want, double tol,
                            int state, int* nslots) {
  int spec = mj->sensor_intprm[mjNSENS * i], reduce = mj->sensor_intprm[mjNSENS * i + 1];
  int size = slot_size(spec), num = mj->sensor_dim[i] / size;
  int fo = field_off(spec, SAP_CONDATA_FOUND);
  int found = fo >= 0 ? (int)want[fo] : 0, nslot = found < num ? found : num;
  char what[200];
  snprintf(what, sizeof(what), "state %d sensor %s", state, mj_id2name(mj, mjOBJ_SENSOR, i));
  if (fo >= 0) CHECK(got[fo] == want[fo], "%s found %g want %g", what, got[fo], want[fo]);
  if (reduce == SAP_REDUCE_MINDIST) {
    for (int j = 0; j < num; j++) check_slot(what, spec, got + j * size, want + j * size, tol);
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
static int compare_stage(const fixture* f, int acc, int st, int* nslots) {
  const mjModel* mj = f->mj;
  if (!same_contacts(f, acc)) return 0;
  for (int i = 0; i < mj->nsensor; i++)
    if (mj->sensor_type[i] == mjSENS_CONTACT && (mj->sensor_needstage[i] == mjSTAGE_ACC) == acc)
      compare_contact(mj, i, f->s->d.sensordata + mj->sensor_adr[i], f->md->sensordata + mj->sensor_adr[i], 1e-6,
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
  int nstate = 400, same[2] = {0, 0}, nslots = 0, inside[2] = {0, 0};
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
    same[0] += compare_stage(&f, 0, st, &nslots);
    CHECK(sap_step(s, 1) == SAP_OK, "%s", sap_lastError());
    same[1] += compare_stage(&f, 1, st, &nslots);
  }
  printf("zoo: %d (position stage) and %d (step) of %d states with MuJoCo 4's contact pairs; %d slots "
         "compared; insidesite %d inside, %d outside\n", same[0], same[1], nstate, nslots, inside[1], inside[0]);
  CHECK(same[0] >= nstate * 8 / 10 && same[1] >= nstate * 8 / 10, "only %d / %d of %d states have MuJoCo's "
        "contact pairs", same[0], same[1], nstate);
  CHECK(nslots > 1000, "only %d slots compared", nslots);
  CHECK(inside[0] > 50 && inside[1] > 50, "insidesite outcomes %d / %d", inside[0], inside[1]);
  free(q);
  free(v);
  close_fixture(&f);
}

int main(void) {
  mju_user_warning = NULL;
  RUN(test_zoo_oracle);
  return check_summary("test_contact_sensor");
}
