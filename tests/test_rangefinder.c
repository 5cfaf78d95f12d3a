/* Rangefinders and ray casting (kernels/ray.h, the rangefinder in kernels/sensor.h) against
 * MuJoCo 4.0 on the same model (scenes/rangefinder_zoo.xml):
 *   sapw_ray vs mj_ray: random rays, many aimed at a geom (center plus an offset of up to 1.3
 *     times its extent, so that some graze past), starting in front of it or inside it, with
 *     random direction lengths and excluded bodies: distance, geom id and surface normal;
 *   sensordata vs mj_forward's: the probe aimed at a geom through a random site, at random
 *     poses of every floating body, after sap_set of qpos (approx64 and approx32 presets:
 *     the sensor reads the state in fp64 in both);
 *   coverage: every geom type hit, misses, rays that cross invisible geoms and excluded bodies
 *     and rays that start inside the geom they hit are counted and required;
 *   refusals by name (camera rangefinder); no mesh faces kept without a rangefinder. */
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fixture_mj.h"
#include "ray.h"
#include "sensor.h"
#include "sim.h"

#define SCENE "scenes/rangefinder_zoo.xml"

/* random unit quaternion */
static void random_quat(double* q) {
  double n = 0;
  for (int k = 0; k < 4; k++) {
    q[k] = check_uniform(-1, 1);
    n += q[k] * q[k];
  }
  n = sqrt(n);
  for (int k = 0; k < 4; k++) q[k] /= n;
}

/* every floating body at a random pose in [-r, r]^3 */
static void random_poses(const mjModel* mj, double* qpos, double r) {
  for (int j = 0; j < mj->njnt; j++) {
    if (mj->jnt_type[j] != mjJNT_FREE) continue;
    double* q = qpos + mj->jnt_qposadr[j];
    for (int k = 0; k < 3; k++) q[k] = check_uniform(-r, r);
    random_quat(q + 3);
  }
}

/* a point of geom g (its center plus an offset of up to 1.3 times its extent, in its frame);
 * returns its smallest extent */
static double aim_point(const mjModel* mj, const mjData* md, int g, double* P) {
  double e[3], off[3], w[3];
  const double* s = mj->geom_size + 3 * g;
  int t = mj->geom_type[g];
  if (t == mjGEOM_PLANE) { e[0] = s[0] > 0 ? s[0] : 5; e[1] = s[1] > 0 ? s[1] : 5; e[2] = 0; }
  else if (t == mjGEOM_HFIELD) {
    const double* h = mj->hfield_size + 4 * mj->geom_dataid[g];
    e[0] = h[0]; e[1] = h[1]; e[2] = h[2];
  } else if (t == mjGEOM_SPHERE) e[0] = e[1] = e[2] = s[0];
  else if (t == mjGEOM_CAPSULE) { e[0] = e[1] = s[0]; e[2] = s[0] + s[1]; }
  else if (t == mjGEOM_CYLINDER) { e[0] = e[1] = s[0]; e[2] = s[1]; }
  else for (int k = 0; k < 3; k++) e[k] = s[k];  // ellipsoid, box, mesh (its box)
  for (int k = 0; k < 3; k++) off[k] = check_uniform(-1.3, 1.3) * e[k];
  if (t == mjGEOM_HFIELD) off[2] = check_uniform(-0.2, 1.2) * e[2];
  mju_mulMatVec3(w, md->geom_xmat + 9 * g, off);
  for (int k = 0; k < 3; k++) P[k] = md->geom_xpos[3 * g + k] + w[k];
  double emin = 1e300;
  for (int k = 0; k < 3; k++)
    if (e[k] > 0) emin = fmin(emin, e[k]);
  return emin;
}

/* ray coverage tallies */
typedef struct {
  int type_hit[8], miss, invisible, excluded, inside, n;
} coverage;

/* what a ray that mj_ray answered (dist, geom) exercised: the type hit, a miss, an invisible
 * geom or an excluded body's geom crossed before the hit (or with none) */
static void tally(coverage* c, const mjModel* mj, const mjData* md, const double* p, const double* v,
                  int bodyexclude, double dist, int geom) {
  c->n++;
  if (geom >= 0) c->type_hit[mj->geom_type[geom]]++;
  else c->miss++;
  for (int g = 0; g < mj->ngeom; g++) {
    int t = mj->geom_type[g];
    if (t == mjGEOM_MESH || t == mjGEOM_HFIELD || t == mjGEOM_PLANE) continue;
    int invisible = (mj->geom_matid[g] < 0 ? mj->geom_rgba[4 * g + 3] : mj->mat_rgba[4 * mj->geom_matid[g] + 3]) == 0;
    int excluded = mj->geom_bodyid[g] == bodyexclude;
    if (!invisible && !excluded) continue;
    double x = mju_rayGeom(md->geom_xpos + 3 * g, md->geom_xmat + 9 * g, mj->geom_size + 3 * g, p, v, t, NULL);
    if (x >= 0 && (dist < 0 || x < dist)) {
      if (invisible) c->invisible++;
      else c->excluded++;
    }
  }
}

static void require_coverage(const coverage* c, int need, const char* what) {
  static const int types[] = {mjGEOM_PLANE, mjGEOM_HFIELD, mjGEOM_SPHERE, mjGEOM_CAPSULE, mjGEOM_ELLIPSOID,
                              mjGEOM_CYLINDER, mjGEOM_BOX, mjGEOM_MESH};
  for (int i = 0; i < 8; i++)
    CHECK(c->type_hit[types[i]] >= need, "%s: geom type %d hit %d times (< %d)", what, types[i],
          c->type_hit[types[i]], need);
  CHECK(c->miss >= need, "%s: %d misses", what, c->miss);
  CHECK(c->invisible >= need, "%s: %d rays crossed an invisible geom", what, c->invisible);
  CHECK(c->excluded >= need, "%s: %d rays crossed an excluded body's geom", what, c->excluded);
  CHECK(c->inside >= need, "%s: %d rays started inside the geom they hit", what, c->inside);
  printf("  %s: %d rays; hits plane %d hfield %d sphere %d capsule %d ellipsoid %d cylinder %d box %d "
         "mesh %d; misses %d, through invisible %d, through excluded %d, from inside %d\n", what, c->n,
         c->type_hit[0], c->type_hit[1], c->type_hit[2], c->type_hit[3], c->type_hit[4], c->type_hit[5],
         c->type_hit[6], c->type_hit[7], c->miss, c->invisible, c->excluded, c->inside);
}

/* ---- sapw_ray vs mj_ray ------------------------------------------------------------- */

static void test_ray_oracle(void) {
  mjModel* mj = fx_mjModel(SCENE);
  sapModel* m = NULL;
  CHECK(sap_loadModel(SCENE, &m) == SAP_OK, "%s", sap_lastError());
  if (!mj || !m) goto done;
  mjData* md = mj_makeData(mj);
  coverage c;
  memset(&c, 0, sizeof(c));
  double worst = 0, worst_n = 0;
  int nfail = 0;
  for (int state = 0; state < 400; state++) {
    random_poses(mj, md->qpos, 4);
    mj_kinematics(mj, md);
    for (int r = 0; r < 50; r++) {
      double p[3], v[3], P[3], d = 0, len = exp(check_uniform(log(0.1), log(10)));
      int aimed = r % 5 != 0, g = -1;
      double q4[4];
      random_quat(q4);  // a random direction: 3 components of a random unit quaternion
      mju_copy3(v, q4);
      double nv = mju_norm3(v);
      for (int k = 0; k < 3; k++) v[k] *= len / nv;
      if (aimed) {
        g = (int)check_uniform(0, mj->ngeom);
        aim_point(mj, md, g, P);
        d = check_uniform(-0.3, 6);  // negative: from inside or behind
        for (int k = 0; k < 3; k++) p[k] = P[k] - d * v[k] / len;
      } else
        for (int k = 0; k < 3; k++) p[k] = check_uniform(-6, 6);
      int bodyexclude = (int)check_uniform(-1, mj->nbody);
      if (r % 7 == 0 && g >= 0) bodyexclude = mj->geom_bodyid[g];
      int gw, gg;
      double nw[3], ng[3];
      double want = mj_ray(mj, md, p, v, NULL, 1, bodyexclude, &gw, nw);
      double got = sapw_ray(m, md->geom_xpos, md->geom_xmat, p, v, bodyexclude, &gg, ng);
      tally(&c, mj, md, p, v, bodyexclude, want, gw);
      if (aimed && d < 0 && gw == g && mj->geom_type[g] >= mjGEOM_SPHERE) c.inside++;
      double err = fabs(got - want) / fmax(1, fabs(want)), nerr = 0;
      for (int k = 0; k < 3; k++) nerr = fmax(nerr, fabs(ng[k] - nw[k]));
      worst = fmax(worst, err);
      if (gg == gw) worst_n = fmax(worst_n, nerr);
      if (!(err <= 1e-12) || gg != gw || !(nerr <= 1e-9)) {
        if (nfail++ < 5)
          CHECK(0, "state %d ray %d: got %.17g (geom %d) want %.17g (geom %d), normal error %.3g", state, r,
                got, gg, want, gw, nerr);
      }
    }
  }
  CHECK(nfail == 0, "%d rays disagree with mj_ray", nfail);
  printf("  worst distance error %.3g (relative to max(1, dist)), worst normal error %.3g\n", worst, worst_n);
  require_coverage(&c, 20, "sapw_ray vs mj_ray");
  mj_deleteData(md);
done:
  if (m) sap_freeModel(m);
  if (mj) mj_deleteModel(mj);
}

/* a large rough heightfield (60 x 80 random samples written into both models) and long,
 * shallow rays that cross hundreds of cells: sapw_ray tests only the cells along each row's
 * crossing, MuJoCo the footprint's whole rectangle; the answers must be the same */
static void test_hfield_large(void) {
  const char* xml =
      "<mujoco><asset><hfield name='h' nrow='60' ncol='80' size='8 6 0.7 0.2'/></asset><worldbody>"
      "<geom type='hfield' hfield='h' pos='0.3 -0.2 0.1' euler='3 -4 20'/>"
      "<body><freejoint/><geom size='0.1'/><site name='s'/></body></worldbody>"
      "<sensor><rangefinder site='s'/></sensor></mujoco>";
  char err[1000] = "";
  mjSpec* spec = mj_parseXMLString(xml, NULL, err, sizeof(err));
  mjModel* mj = spec ? mj_compile(spec, NULL) : NULL;
  CHECK(mj != NULL, "%s", err);
  sapModel* m = NULL;
  CHECK(sap_loadModelString(xml, &m) == SAP_OK, "%s", sap_lastError());
  if (!mj || !m) goto done;
  CHECK(m->nhfielddata == mj->nhfielddata, "hfield samples %d vs %lld", m->nhfielddata, (long long)mj->nhfielddata);
  for (int i = 0; i < m->nhfielddata; i++)
    m->hfield_data[i] = mj->hfield_data[i] = (float)(check_uniform(0, 1) * check_uniform(0, 1));
  mjData* md = mj_makeData(mj);
  mj_kinematics(mj, md);
  int hits = 0, nfail = 0;
  for (int r = 0; r < 4000; r++) {
    double p[3] = {check_uniform(-9, 9), check_uniform(-7, 7), check_uniform(-0.3, 1.2)};
    double v[3] = {check_uniform(-1, 1), check_uniform(-1, 1), check_uniform(-0.15, 0.1)};
    if (r % 4 == 0) v[r % 8 == 0 ? 0 : 1] = 0;  // rays along a grid axis
    int gw, gg;
    double nw[3], ng[3];
    double want = mj_ray(mj, md, p, v, NULL, 1, 1, &gw, nw);
    double got = sapw_ray(m, md->geom_xpos, md->geom_xmat, p, v, 1, &gg, ng);
    hits += want >= 0;
    if ((got != want || gg != gw || ng[0] != nw[0] || ng[1] != nw[1] || ng[2] != nw[2]) && nfail++ < 5)
      CHECK(0, "ray %d: got %.17g (geom %d) want %.17g (geom %d)", r, got, gg, want, gw);
  }
  CHECK(nfail == 0, "%d of 4000 rays differ from mj_ray", nfail);
  CHECK(hits > 1000, "only %d rays hit the heightfield", hits);
  printf("  4000 rays, %d hits: bitwise equal to mj_ray\n", hits);
  mj_deleteData(md);
done:
  if (m) sap_freeModel(m);
  if (mj) mj_deleteModel(mj);
  if (spec) mj_deleteSpec(spec);
}

/* ---- sensordata vs MuJoCo's ---------------------------------------------------------- */

/* world qpos: random poses, then the probe placed so that one random site's ray passes
 * through a point of a random geom at distance d (some from inside, some past the edge) */
static void aimed_state(const mjModel* mj, mjData* md, double* qpos, coverage* c) {
  random_poses(mj, qpos, 4);
  int probe = mj->jnt_qposadr[mj_name2id(mj, mjOBJ_JOINT, "probe")];
  int pb = mj_name2id(mj, mjOBJ_BODY, "probe");
  int g, s = (int)check_uniform(0, 8);
  do g = (int)check_uniform(0, mj->ngeom);
  while (mj->geom_bodyid[g] == pb);
  for (int k = 0; k < 3; k++) qpos[probe + k] = 0;
  memcpy(md->qpos, qpos, sizeof(double) * mj->nq);
  mj_kinematics(mj, md);
  char name[8];
  snprintf(name, sizeof(name), "s%d", s);
  int site = mj_name2id(mj, mjOBJ_SITE, name);
  const double* x0 = md->site_xpos + 3 * site;
  const double* R = md->site_xmat + 9 * site;
  double P[3], v[3] = {R[2], R[5], R[8]};
  double emin = aim_point(mj, md, g, P);
  double d = check_uniform(0, 1) < 0.25 ? -check_uniform(0, 1) * emin : check_uniform(0, 5);
  for (int k = 0; k < 3; k++) qpos[probe + k] = P[k] - d * v[k] - x0[k];
  if (d < 0 && mj->geom_type[g] >= mjGEOM_SPHERE) {
    /* the origin lies inside g when g answers the ray with a hit */
    memcpy(md->qpos, qpos, sizeof(double) * mj->nq);
    mj_kinematics(mj, md);
    int gw;
    mj_ray(mj, md, md->site_xpos + 3 * site, v, NULL, 1, pb, &gw, NULL);
    c->inside += gw == g;
  }
}

static void check_sensors(const char* preset) {
  enum { NW = 4 };
  mjModel* mj = fx_mjModel(SCENE);
  sapModel* m = NULL;
  sapSim* s = NULL;
  CHECK(sap_loadModel(SCENE, &m) == SAP_OK, "%s", sap_lastError());
  if (!mj || !m) goto done;
  sapOptions opt;
  sap_optionsDefault(&opt);
  sap_optionsSet(&opt, "preset", preset);
  opt.device = SAP_DEVICE_CPU;
  CHECK(sap_create(m, &opt, NW, &s) == SAP_OK, "%s", sap_lastError());
  if (!s) goto done;
  mjData* md = mj_makeData(mj);
  int nq = mj->nq, nd = mj->nsensordata, pb = mj_name2id(mj, mjOBJ_BODY, "probe");
  CHECK(nd == m->nsensordata, "nsensordata %d vs %lld", m->nsensordata, (long long)nd);
  double* q = malloc(sizeof(double) * NW * nq);
  coverage c;
  memset(&c, 0, sizeof(c));
  double worst = 0, worst_normal = 0, worst_same = 0;
  int nfail = 0;
  for (int round = 0; round < 250; round++) {
    for (int w = 0; w < NW; w++) aimed_state(mj, md, q + w * nq, &c);
    for (long i = 0; i < (long)NW * nd; i++) s->d.sensordata[i] = NAN;  // poison
    CHECK(sap_set(s, SAP_FIELD_QPOS, NULL, NW, q) == SAP_OK, "%s", sap_lastError());
    for (int w = 0; w < NW; w++) {
      fx_mjForwardAt(mj, md, q + w * nq, NULL, NULL);
      const double* got = s->d.sensordata + (long)w * nd;
      for (int i = 0; i < mj->nsensor; i++) {
        const double* want = md->sensordata + mj->sensor_adr[i];
        int spec = mj->sensor_type[i] == mjSENS_RANGEFINDER ? mj->sensor_intprm[mjNSENS * i] : 0;
        int nadr = -1;  // first normal value: after dist (1), dir (3), origin (3), point (3)
        if (spec & (1 << mjRAYDATA_NORMAL))
          nadr = (spec & 1) + 3 * (((spec >> 1) & 1) + ((spec >> 2) & 1) + ((spec >> 3) & 1));
        double cond = 1;
        if (spec) {
          /* the same ray through mj_ray (coverage: its geom; the hit's conditioning: a ray
           * turned by round-off e moves its hit by e dist / |n.v|) and through sapw_ray with
           * MuJoCo's site and geom poses, which must give the sensor's values exactly */
          int site = mj->sensor_objid[i], gw, gg;
          const double* R = md->site_xmat + 9 * site;
          const double* o = md->site_xpos + 3 * site;
          double v[3] = {R[2], R[5], R[8]}, n[3], nm[3];
          double dist = mj_ray(mj, md, o, v, NULL, 1, pb, &gw, nm);
          tally(&c, mj, md, o, v, pb, dist, gw);
          if (dist >= 0) cond = 1 / fmax(fabs(mju_dot3(nm, v)), 1e-9);
          double x = sapw_ray(m, md->geom_xpos, md->geom_xmat, o, v, pb, &gg, n);
          CHECK(gg == gw, "sapw_ray geom %d, mj_ray %d", gg, gw);
          if (nadr >= 0)
            for (int k = 0; k < 3; k++) worst_same = fmax(worst_same, fabs(n[k] - want[nadr + k]));
          if ((spec & 1) && mj->sensor_cutoff[i] == 0) worst_same = fmax(worst_same, fabs(x - want[0]));
        }
        for (int k = 0; k < mj->sensor_dim[i]; k++) {
          double err = fabs(got[mj->sensor_adr[i] + k] - want[k]) / fmax(1, fabs(want[k])) / cond;
          /* a normal's error is the poses' round-off over the size of the geom hit (1e-16 x
           * 5 m / 0.01 m): 1e-10; with MuJoCo's own poses sapw_ray agrees exactly (above) */
          int normal = nadr >= 0 && k >= nadr && k < nadr + 3;
          if (normal) worst_normal = fmax(worst_normal, err);
          else worst = fmax(worst, err);
          if (!(err <= (normal ? 1e-10 : 1e-12)) && nfail++ < 5)
            CHECK(0, "%s round %d world %d sensor %d [%d]: got %.17g want %.17g (|n.v| = 1 / %g)", preset,
                  round, w, i, k, got[mj->sensor_adr[i] + k], want[k], cond);
        }
      }
    }
  }
  CHECK(nfail == 0, "%s: %d sensor values disagree with MuJoCo", preset, nfail);
  CHECK(worst_same == 0, "%s: sapw_ray at MuJoCo's poses differs from MuJoCo's sensordata by %.3g", preset,
        worst_same);
  printf("  %s: worst sensordata error %.3g (relative to max(1, |value|) / |n.v|), normals %.3g; at MuJoCo's "
         "poses %.3g\n", preset, worst, worst_normal, worst_same);
  require_coverage(&c, 10, preset);
  free(q);
  mj_deleteData(md);
done:
  if (s) sap_free(s);
  if (m) sap_freeModel(m);
  if (mj) mj_deleteModel(mj);
}

static void test_sensor_oracle_approx64(void) { check_sensors("approx64"); }
static void test_sensor_oracle_approx32(void) { check_sensors("approx32"); }

/* stepping keeps the rule: after sap_step, the rangefinders describe the new state */
static void test_after_steps(void) {
  mjModel* mj = fx_mjModel(SCENE);
  sapModel* m = NULL;
  sapSim* s = NULL;
  CHECK(sap_loadModel(SCENE, &m) == SAP_OK, "%s", sap_lastError());
  if (!mj || !m) goto done;
  sapOptions opt;
  sap_optionsDefault(&opt);
  opt.device = SAP_DEVICE_CPU;
  CHECK(sap_create(m, &opt, 2, &s) == SAP_OK, "%s", sap_lastError());
  if (!s) goto done;
  mjData* md = mj_makeData(mj);
  double v[2 * 64];
  for (int i = 0; i < 2 * mj->nv; i++) v[i] = check_uniform(-2, 2);
  CHECK(sap_set(s, SAP_FIELD_QVEL, NULL, 2, v) == SAP_OK, "%s", sap_lastError());
  CHECK(sap_step(s, 150) == SAP_OK, "%s", sap_lastError());
  for (int w = 0; w < 2; w++) {
    fx_mjForwardAt(mj, md, s->d.qpos + (long)w * mj->nq, NULL, NULL);
    char what[64];
    snprintf(what, sizeof(what), "sensordata after steps, world %d", w);
    check_arrays(what, s->d.sensordata + (long)w * m->nsensordata, md->sensordata, m->nsensordata, 1e-12, 1e-12);
  }
  mj_deleteData(md);
done:
  if (s) sap_free(s);
  if (m) sap_freeModel(m);
  if (mj) mj_deleteModel(mj);
}

/* ---- refusals, sizes ------------------------------------------------------------------ */

static void test_refused_camera(void) {
  const char* xml =
      "<mujoco><worldbody><body><freejoint/><geom size='0.1'/><camera name='c' resolution='4 3'/>"
      "</body></worldbody><sensor><rangefinder name='depth' camera='c'/></sensor></mujoco>";
  sapModel* m = NULL;
  sapStatus st = sap_loadModelString(xml, &m);
  CHECK(st == SAP_ERR_UNSUPPORTED, "camera rangefinder: status %d", st);
  CHECK(strstr(sap_lastError(), "rangefinder 'depth' is attached to a camera") != NULL, "message: %s",
        sap_lastError());
  sap_freeModel(m);
}

/* mesh triangles are kept only for rays */
static void test_faces_only_with_rays(void) {
  sapModel* m = NULL;
  CHECK(sap_loadModel("scenes/mesh_balls.xml", &m) == SAP_OK, "%s", sap_lastError());
  if (m) CHECK(m->nmesh > 0 && m->nmeshface == 0, "nmesh %d nmeshface %d", m->nmesh, m->nmeshface);
  sap_freeModel(m);
  m = NULL;
  CHECK(sap_loadModel(SCENE, &m) == SAP_OK, "%s", sap_lastError());
  if (m) CHECK(m->nmeshface > 0, "rangefinder scene without faces");
  sap_freeModel(m);
}

int main(void) {
  mju_user_warning = NULL;
  RUN(test_ray_oracle);
  RUN(test_hfield_large);
  RUN(test_sensor_oracle_approx64);
  RUN(test_sensor_oracle_approx32);
  RUN(test_after_steps);
  RUN(test_refused_camera);
  RUN(test_faces_only_with_rays);
  return check_summary("test_rangefinder");
}
