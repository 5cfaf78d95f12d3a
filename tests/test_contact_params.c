#define _POSIX_C_SOURCE 200809L
/* Per-contact parameters of MJCF scenes against MuJoCo 4.0 on the same file
 * (mujoco_semantics.md §1.1-1.5): priority, condim max, friction max, condim 1 vs 3,
 * margins and gaps summed, explicit <pair> elements overriding the geoms and bypassing
 * contype/exclude/parent filters. MuJoCo's contact list after mj_forward (geom ids,
 * dim, friction, includemargin, dist) is the oracle for sapsim's pair records and for
 * the contacts of one sapsim step; the margin's surface inflation is checked by a
 * resting sphere (analytic SAP rest, MuJoCo's rest) and the combined friction by a box
 * on an incline (analytic slide/stick). Bad values are refused naming the geom. */
#include <unistd.h>

#include <mujoco/mujoco.h>

#include "fixture.h"

static const char* write_xml(const char* tag, const char* xml) {
  char file[128];
  snprintf(file, sizeof(file), "%s.xml", tag);
  return fx_tempFile(file, xml);
}

/* a one-world CPU sim in fp64 geometry; band: sapsim's speculative contact_margin */
static sapSim* make_sim_with(const sapModel* m, const char* band, const char* combine) {
  char opts[128];
  snprintf(opts, sizeof(opts), "preset=approx64%s%s%s%s", combine ? " friction_combine=" : "", combine ? combine : "",
           band ? " contact_margin=" : "", band ? band : "");
  return fx_simModel(m, 1, opts);
}

static sapSim* make_sim(const sapModel* m, const char* band) { return make_sim_with(m, band, NULL); }

static int find_pair(const sapModel* m, int a, int b) {
  int g0 = a < b ? a : b, g1 = a < b ? b : a;
  for (int p = 0; p < m->npair_max; p++)
    if (m->pair_geom[2 * p] == g0 && m->pair_geom[2 * p + 1] == g1) return p;
  return -1;
}

/* MuJoCo's contact of geoms (a, b), -1 if none (every pair here makes one contact) */
static int find_mj(const mjData* d, int a, int b) {
  for (int i = 0; i < d->ncon; i++)
    if ((d->contact[i].geom[0] == a && d->contact[i].geom[1] == b) ||
        (d->contact[i].geom[0] == b && d->contact[i].geom[1] == a))
      return i;
  return -1;
}

/* Load xml in MuJoCo and sapsim; with sapsim's speculative band 0 both detect at
 * margin + gap, so the contact sets must agree pair by pair. Checks each MuJoCo
 * contact's combined parameters against sapsim's pair record, then the contacts of one
 * sapsim step (collision runs at the start pose): phi = dist - includemargin, mu.
 * Returns MuJoCo's contact count (-1 on a load failure). */
static int compare_scene(const char* tag, const char* xml) {
  const char* path = write_xml(tag, xml);
  char err[1000] = "";
  mjModel* mj = mj_loadXML(path, NULL, err, sizeof(err));
  sapModel* m = NULL;
  sapStatus st = sap_loadModel(path, &m);
  remove(path);
  CHECK(mj != NULL, "%s: MuJoCo: %s", tag, err);
  CHECK(st == SAP_OK, "%s: sapsim: %s", tag, sap_lastError());
  if (!mj || st != SAP_OK) {
    mj_deleteModel(mj);
    sap_freeModel(m);
    return -1;
  }
  mjData* md = mj_makeData(mj);
  mj_forward(mj, md);
  for (int i = 0; i < md->ncon; i++) {
    const mjContact* c = md->contact + i;
    int p = find_pair(m, c->geom[0], c->geom[1]);
    const char* n0 = mj_id2name(mj, mjOBJ_GEOM, c->geom[0]);
    const char* n1 = mj_id2name(mj, mjOBJ_GEOM, c->geom[1]);
    CHECK(p >= 0, "%s: MuJoCo's contact %s-%s has no sapsim pair", tag, n0, n1);
    if (p < 0) continue;
    CHECK(m->pair_condim[p] == c->dim, "%s %s-%s: condim %d, MuJoCo %d", tag, n0, n1, m->pair_condim[p], c->dim);
    // condim 1: frictionless; 3: isotropic sliding friction, MuJoCo's friction[0] = friction[1]
    double mu = c->dim == 1 ? 0 : c->friction[0];
    CHECK(c->dim == 1 || c->friction[1] == c->friction[0], "%s %s-%s: MuJoCo anisotropic", tag, n0, n1);
    CHECK(m->pair_mu[p] == mu, "%s %s-%s: mu %.17g, MuJoCo %.17g", tag, n0, n1, m->pair_mu[p], mu);
    // condim 4, 6: MuJoCo's friction (slide, slide, spin, roll, roll)
    double spin = c->dim >= 4 ? c->friction[2] : 0, roll = c->dim == 6 ? c->friction[3] : 0;
    CHECK(m->pair_torsion[p] == spin && m->pair_rolling[p] == roll, "%s %s-%s: torsion %g rolling %g, MuJoCo %g %g",
          tag, n0, n1, m->pair_torsion[p], m->pair_rolling[p], spin, roll);
    CHECK(m->pair_margin[p] == c->includemargin, "%s %s-%s: margin %.17g, MuJoCo %.17g", tag, n0, n1,
          m->pair_margin[p], c->includemargin);
  }
  sapSim* s = make_sim(m, "0");
  if (s && sap_step(s, 1) == SAP_OK && sap_sync(s) == SAP_OK) {
    const sapData* d = sap_data(s);
    CHECK(d->ncon[0] == md->ncon, "%s: %d contacts, MuJoCo %d", tag, d->ncon[0], md->ncon);
    for (int k = 0; k < d->ncon[0]; k++) {
      int a = d->con_geom[2 * k], b = d->con_geom[2 * k + 1], i = find_mj(md, a, b), p = find_pair(m, a, b);
      const char* n0 = mj_id2name(mj, mjOBJ_GEOM, a);
      const char* n1 = mj_id2name(mj, mjOBJ_GEOM, b);
      CHECK(i >= 0, "%s: sapsim contact %s-%s unknown to MuJoCo", tag, n0, n1);
      if (i < 0) continue;
      // sphere-plane and sphere-sphere distances are closed forms on both sides (rounding)
      CHECK_CLOSE(d->con_dist[k], md->contact[i].dist - md->contact[i].includemargin, 1e-12, 0,
                  "%s %s-%s: phi = dist - margin", tag, n0, n1);
      CHECK(d->con_mu[k] == m->pair_mu[p], "%s %s-%s: contact mu %g", tag, n0, n1, d->con_mu[k]);
    }
  } else {
    CHECK(0, "%s: step: %s", tag, sap_lastError());
  }
  int n = md->ncon;
  sap_free(s);
  sap_freeModel(m);
  mj_deleteData(md);
  mj_deleteModel(mj);
  return n;
}

/* ---- dynamic pairs: every priority / condim / friction combination ------------------- */

/* A floor (priority fp, condim fc) under a row of six spheres (priority 0, 1, 2 x condim
 * 1, 6, 3, 4, 6, 1), each 1.5 mm into the floor and overlapping its neighbour by 3 mm, so that
 * sphere-floor and sphere-sphere pairs cover higher / equal / lower priority, condim 1,
 * 3, 4 or 6 on either side, and frictions larger and smaller than the other side's in each
 * component; margins and gaps differ per geom (sums compared). */
static void test_dynamic_combinations(void) {
  static const char* fr[2] = {"0.45 0.02 0.003", "1.35 0.0007 0.00002"};
  static const int fcs[4] = {1, 3, 4, 6}, scs[6] = {1, 6, 3, 4, 6, 1};
  int total = 0;
  for (int fp = 0; fp < 2; fp++)
    for (int f = 0; f < 4; f++) {
      int fc = fcs[f];
      char xml[6000], body[600];
      int n = snprintf(xml, sizeof(xml),
                       "<mujoco><worldbody><geom name='floor' type='plane' size='3 3 .1' priority='%d' "
                       "condim='%d' friction='0.9 0.004 0.0005' margin='0.0035' gap='0.0015'/>", fp, fc);
      for (int i = 0; i < 6; i++) {
        double r = 0.06;
        snprintf(body, sizeof(body),
                 "<body pos='%g 0.1 %g'><freejoint/><geom name='s%d' type='sphere' size='%g' priority='%d' "
                 "condim='%d' friction='%s' margin='%g' gap='%g'/></body>",
                 (2 * r - 0.003) * i, r - 0.0015, i, r, i / 2, scs[i], fr[(i / 2 + i) % 2],
                 0.0007 * (i + 1), 0.0004 * (5 - i));
        n += snprintf(xml + n, sizeof(xml) - n, "%s", body);
      }
      snprintf(xml + n, sizeof(xml) - n, "</worldbody></mujoco>");
      char tag[64];
      snprintf(tag, sizeof(tag), "prio%d_condim%d", fp, fc);
      int nc = compare_scene(tag, xml);
      CHECK(nc == 11, "%s: 6 sphere-floor + 5 sphere-sphere contacts in MuJoCo (%d)", tag, nc);
      total += nc > 0 ? nc : 0;
    }
  CHECK(total == 88, "contacts compared: %d", total);
}

/* margins and gaps are summed: floor (margin 4 mm, gap 6 mm) + sphere (6 mm, 4 mm)
 * detect at 20 mm and push at 10 mm; a sphere 15 mm above the floor is in the gap band
 * (MuJoCo: a contact without force; sapsim: phi = +5 mm), one 25 mm above is not seen */
static void test_margin_gap_sum(void) {
  int n = compare_scene("gap",
      "<mujoco><worldbody><geom name='floor' type='plane' size='3 3 .1' margin='0.004' gap='0.006'/>"
      "<body pos='0 0 0.055'><freejoint/><geom name='inband' size='0.04' margin='0.006' gap='0.004'/></body>"
      "<body pos='1 0 0.065'><freejoint/><geom name='beyond' size='0.04' margin='0.006' gap='0.004'/></body>"
      "<body pos='2 0 0.035'><freejoint/><geom name='pressed' size='0.04' margin='0.006' gap='0.004'/></body>"
      "</worldbody></mujoco>");
  CHECK(n == 2, "MuJoCo sees the in-band and the pressed sphere (%d contacts)", n);
}

/* ---- explicit pairs ------------------------------------------------------------------- */

/* <pair> overrides every parameter of the geoms (condim, friction, margin, gap) and
 * bypasses contype/conaffinity, <exclude> and the parent filter; its defaults (condim
 * 3, friction 1, margin 0) are not the geoms' */
static void test_explicit_pairs(void) {
  int n = compare_scene("pairs",
      "<mujoco><default><geom condim='1' friction='0.3' margin='0.01'/></default><worldbody>"
      "<geom name='floor' type='plane' size='3 3 .1'/>"
      "<body name='a' pos='0 0 0.045'><freejoint/><geom name='ball_a' size='0.05'/></body>"
      "<body name='b' pos='1 0 0.049'><freejoint/><geom name='ghost' size='0.05' contype='0' conaffinity='0'/></body>"
      "<body name='c' pos='2 0 0.3'><freejoint/><geom name='ball_c' size='0.05'/></body>"
      "<body name='d' pos='2 0 0.395'><freejoint/><geom name='ball_d' size='0.05'/></body>"
      "<body name='arm' pos='3 0 0.5'><joint type='hinge' axis='0 1 0'/><geom name='upper' size='0.05'/>"
      "  <body name='hand' pos='0.09 0 0'><joint type='hinge' axis='0 1 0'/><geom name='lower' size='0.05'/></body>"
      "</body></worldbody><contact>"
      "<pair name='override' geom1='ball_a' geom2='floor' condim='3' friction='0.65 0.65' margin='0.004' gap='0.001'/>"
      "<pair name='bitmask' geom1='floor' geom2='ghost'/>"
      "<exclude body1='c' body2='d'/><pair name='excluded' geom1='ball_d' geom2='ball_c' condim='1'/>"
      "<pair name='parent' geom1='upper' geom2='lower' friction='1.1 1.1' margin='0.002'/>"
      "</contact></mujoco>");
  CHECK(n == 4, "MuJoCo: one contact per explicit pair (%d)", n);
}

/* ---- margin inflates the surface: resting height ------------------------------------ */

/* A 0.8 kg sphere (r 45 mm, margin 15 mm) on a plane rests where the inflated surface
 * carries m g: SAP's compliant contact at phi = -m g / kc with kc the two geoms' scene
 * stiffness in series, so z = r + margin - m g / kc (analytic; test_sap_scenes checks the
 * same rest law without margin). MuJoCo 4 rests at z_mj = r + margin - delta_mj (its own
 * soft penetration, read from its contact); the two agree within the two models'
 * penetrations, m g / kc + delta_mj, while ignoring the inflation would miss by 15 mm. */
static void test_margin_rest(void) {
  const double r = 0.045, margin = 0.015, mass = 0.8, k = 2e5, kc = k * k / (k + k), g = 9.81;
  char xml[1200];
  snprintf(xml, sizeof(xml),
           "<mujoco><option timestep='0.002'/><custom><numeric name='sap_contact_k' data='%g'/></custom>"
           "<worldbody><geom name='floor' type='plane' size='2 2 .1'/>"
           "<body pos='0 0 %g'><freejoint/><geom name='ball' size='%g' mass='%g' margin='%g'/></body>"
           "</worldbody></mujoco>", k, r + margin + 0.01, r, mass, margin);
  const char* path = write_xml("rest", xml);
  char err[1000] = "";
  mjModel* mj = mj_loadXML(path, NULL, err, sizeof(err));
  sapModel* m = NULL;
  sap_loadModel(path, &m);
  remove(path);
  if (!mj || !m) {
    CHECK(0, "load: %s %s", err, sap_lastError());
    mj_deleteModel(mj);
    sap_freeModel(m);
    return;
  }
  mjData* md = mj_makeData(mj);
  for (int i = 0; i < 1000; i++) mj_step(mj, md);  // 2 s
  double z_mj = md->qpos[2], delta_mj = md->ncon ? md->contact[0].includemargin - md->contact[0].dist : NAN;
  CHECK(md->ncon == 1 && fabs(md->qvel[2]) < 1e-6, "MuJoCo at rest (%d contacts, vz %g)", (int)md->ncon,
        md->qvel[2]);
  sapSim* s = make_sim(m, NULL);
  if (s) {
    sap_step(s, 1000);
    double q[7], v[6];
    sap_get(s, SAP_FIELD_QPOS, NULL, 1, q);
    sap_get(s, SAP_FIELD_QVEL, NULL, 1, v);
    CHECK(fabs(v[2]) < 1e-6, "sapsim at rest (vz %g)", v[2]);
    CHECK_CLOSE(q[2], r + margin - mass * g / kc, 1e-8, 0, "sapsim rest height = r + margin - m g / kc");
    CHECK_CLOSE(q[2], z_mj, mass * g / kc + delta_mj, 0, "rest height against MuJoCo 4 (delta_mj %g)",
                delta_mj);
    if (getenv("SAPSIM_TEST_VERBOSE"))
      fprintf(stderr, "  z sapsim %.9f MuJoCo %.9f delta_mj %.3g m g/kc %.3g\n", q[2], z_mj, delta_mj,
              mass * g / kc);
  }
  sap_free(s);
  sap_freeModel(m);
  mj_deleteData(md);
  mj_deleteModel(mj);
}

/* ---- issue 20: condim-1 body geoms on a condim-3 floor ------------------------------- */

/* Body geoms condim 1 friction 0.7 (a humanoid's default class), floor condim 3 friction
 * 1: MuJoCo's contact is condim 3 with friction 1. A 1.3 kg box (3 x 4 x 2.5 cm) on the
 * floor with gravity tilted by t: it sticks when tan t < 1 and slides with
 * a = g (sin t - cos t) above (analytic); mu 0.7 or 0 would slide at tan t = 0.85. */
static sapModel* incline(double tilt) {
  const double g = 9.81;
  char xml[1400];
  snprintf(xml, sizeof(xml),
           "<mujoco><option timestep='0.002' gravity='%.17g 0 %.17g'/>"
           "<default><geom condim='1' friction='0.7'/></default><worldbody>"
           "<geom name='floor' type='plane' size='40 40 .1' condim='3' friction='1'/>"
           "<body pos='0 0 0.025'><freejoint/><geom name='foot' type='box' size='0.03 0.04 0.025' mass='1.3'/>"
           "</body></worldbody></mujoco>",
           g * sin(tilt), -g * cos(tilt));
  const char* path = write_xml("incline", xml);
  sapModel* m = NULL;
  if (sap_loadModel(path, &m) != SAP_OK) fprintf(stderr, "  load: %s\n", sap_lastError());
  remove(path);
  return m;
}

static void test_condim1_body_on_floor(void) {
  // the parameters on MuJoCo's contacts: the box 1 mm into the floor (four corners)
  const char* xml =
      "<mujoco><default><geom condim='1' friction='0.7'/></default><worldbody>"
      "<geom name='floor' type='plane' size='40 40 .1' condim='3' friction='1'/>"
      "<body pos='0 0 0.024'><freejoint/><geom name='foot' type='box' size='0.03 0.04 0.025' mass='1.3'/>"
      "</body></worldbody></mujoco>";
  int n = compare_scene("foot", xml);
  CHECK(n == 4, "four box corners in MuJoCo (%d)", n);
  const double g = 9.81;
  const double tans[2] = {0.85, 1.2};
  for (int t = 0; t < 2; t++) {
    double tilt = atan(tans[t]);
    sapModel* m = incline(tilt);
    if (!m) { CHECK(0, "incline load"); continue; }
    sapSim* s = make_sim(m, NULL);
    if (!s) { sap_freeModel(m); continue; }
    double v0[6], v1[6];
    sap_step(s, 100);
    sap_get(s, SAP_FIELD_QVEL, NULL, 1, v0);
    sap_step(s, 250);
    sap_get(s, SAP_FIELD_QVEL, NULL, 1, v1);
    double a = (v1[0] - v0[0]) / (250 * 0.002);
    double want = tans[t] > 1 ? g * (sin(tilt) - cos(tilt)) : 0;
    // tolerance of test_sap_physics' incline (sliding within 1%, sticking creep < 2e-3)
    CHECK_CLOSE(a, want, 2e-3, 1e-2, "tan %.2f: acceleration", tans[t]);
    sap_free(s);
    sap_freeModel(m);
  }
}

/* friction_combine=harmonic (Drake's and SAP Warp's rule): the same box and floor get
 * mu = 2 (0.7)(1) / 1.7 = 0.8235, so at tan t = 0.85 the box slides with
 * a = g (sin t - mu cos t) (analytic) where MuJoCo's rule (mu 1) sticks */
static void test_friction_harmonic(void) {
  const double g = 9.81, mu = 2 * 0.7 * 1.0 / 1.7, tilt = atan(0.85);
  sapModel* m = incline(tilt);
  if (!m) { CHECK(0, "incline load"); return; }
  sapSim* s = make_sim_with(m, NULL, "harmonic");
  if (!s) { sap_freeModel(m); CHECK(0, "create"); return; }
  const sapModel* sm = sap_model(s);
  CHECK(sm->npair_max == 1, "one pair (%d)", sm->npair_max);
  CHECK_CLOSE(sm->pair_mu[0], mu, 1e-15, 0, "harmonic pair friction");
  double v0[6], v1[6];
  sap_step(s, 100);
  sap_get(s, SAP_FIELD_QVEL, NULL, 1, v0);
  sap_step(s, 250);
  sap_get(s, SAP_FIELD_QVEL, NULL, 1, v1);
  double a = (v1[0] - v0[0]) / (250 * 0.002);
  CHECK_CLOSE(a, g * (sin(tilt) - mu * cos(tilt)), 2e-3, 1e-2, "harmonic: slide acceleration");
  sap_free(s);
  sap_freeModel(m);
}

/* ---- bad values and unsupported condim --------------------------------------------- */

static void expect(const char* tag, const char* xml, sapStatus want, const char* f1, const char* f2) {
  const char* path = write_xml(tag, xml);
  sapModel* m = NULL;
  sapStatus st = sap_loadModel(path, &m);
  remove(path);
  CHECK(st == want, "%s: status %s, want %s (%s)", tag, sap_statusName(st), sap_statusName(want),
        st ? sap_lastError() : "");
  CHECK(!f1 || (st && strstr(sap_lastError(), f1)), "%s: message '%s' lacks '%s'", tag, sap_lastError(), f1);
  CHECK(!f2 || (st && strstr(sap_lastError(), f2)), "%s: message '%s' lacks '%s'", tag, sap_lastError(), f2);
  sap_freeModel(m);
}

#define BALL "<body pos='0 0 .2'><freejoint/><geom name='ball' size='.1'/></body>"

/* MuJoCo's default cone="pyramidal" is accepted with a note (sap_modelNotes), and the cone
 * solved is the exact elliptic one: a box (mu 1 against the floor's 1) on an incline of
 * tan t = 1.2 whose downhill direction is at phi = 30 and 45 degrees to the box's and the
 * contact frame's axes (a pyramid's facets would make friction depend on the direction)
 * slides straight downhill with a = g (sin t - mu cos t), the elliptic (isotropic) Coulomb
 * law. With cone="elliptic" the note is gone. */
static sapModel* incline_dir(double tilt, double phi, const char* cone) {
  const double g = 9.81;
  char xml[1400];
  snprintf(xml, sizeof(xml),
           "<mujoco><option timestep='0.002' gravity='%.17g %.17g %.17g' %s/><worldbody>"
           "<geom name='floor' type='plane' size='40 40 .1' friction='1'/>"
           "<body pos='0 0 0.025'><freejoint/><geom name='foot' type='box' size='0.03 0.04 0.025' mass='1.3' "
           "friction='1'/></body></worldbody></mujoco>",
           g * sin(tilt) * cos(phi), g * sin(tilt) * sin(phi), -g * cos(tilt), cone);
  const char* path = write_xml("incline_dir", xml);
  sapModel* m = NULL;
  if (sap_loadModel(path, &m) != SAP_OK) fprintf(stderr, "  load: %s\n", sap_lastError());
  remove(path);
  return m;
}

static void test_pyramidal_cone_note(void) {
  const double g = 9.81, tilt = atan(1.2), phis[2] = {30, 45};
  sapModel* e = incline_dir(tilt, 0, "cone='elliptic'");
  CHECK(e && !e->cone_pyramidal && !strcmp(sap_modelNotes(e), ""), "elliptic: no note (%s)", e ? sap_modelNotes(e) : "");
  sap_freeModel(e);
  for (int i = 0; i < 2; i++) {
    double phi = phis[i] * 3.14159265358979323846 / 180;
    sapModel* m = incline_dir(tilt, phi, "");
    if (!m) { CHECK(0, "incline load"); continue; }
    CHECK(m->cone_pyramidal && strstr(sap_modelNotes(m), "pyramidal") && strstr(sap_modelNotes(m), "elliptic"),
          "pyramidal: the note names both cones: '%s'", sap_modelNotes(m));
    sapSim* s = make_sim(m, NULL);
    if (!s) { sap_freeModel(m); continue; }
    double v0[6], v1[6];
    sap_step(s, 100);
    sap_get(s, SAP_FIELD_QVEL, NULL, 1, v0);
    sap_step(s, 250);
    sap_get(s, SAP_FIELD_QVEL, NULL, 1, v1);
    double ax = (v1[0] - v0[0]) / (250 * 0.002), ay = (v1[1] - v0[1]) / (250 * 0.002);
    double along = ax * cos(phi) + ay * sin(phi), across = -ax * sin(phi) + ay * cos(phi);
    // tolerance of test_sap_physics' incline (sliding within 1%)
    CHECK_CLOSE(along, g * (sin(tilt) - cos(tilt)), 2e-3, 1e-2, "phi %g: downhill acceleration", phis[i]);
    CHECK_CLOSE(across, 0, 2e-3, 0, "phi %g: no acceleration across the slope", phis[i]);
    sap_free(s);
    sap_freeModel(m);
  }
}

static void test_bad_values(void) {
  expect("negmu", "<mujoco><worldbody><geom name='icy' type='plane' size='1 1 1' friction='-0.5'/>" BALL
         "</worldbody></mujoco>", SAP_ERR_SCENE, "'icy'", "friction");
  expect("nanmu", "<mujoco><worldbody><geom name='odd' type='plane' size='1 1 1' friction='1 nan 0'/>" BALL
         "</worldbody></mujoco>", SAP_ERR_SCENE, "'odd'", "friction");
  expect("nanmargin", "<mujoco><worldbody><geom name='fuzzy' type='plane' size='1 1 1' margin='nan'/>" BALL
         "</worldbody></mujoco>", SAP_ERR_SCENE, "'fuzzy'", "margin");
  expect("pairmu", "<mujoco><worldbody><geom name='floor' type='plane' size='1 1 1'/>" BALL
         "</worldbody><contact><pair name='slick' geom1='floor' geom2='ball' friction='-1 -1'/></contact></mujoco>",
         SAP_ERR_SCENE, "'slick'", "friction");
  // condim 6 on a geom, condim 4 on a pair: supported (torsional and rolling rows)
  expect("condim6", "<mujoco><worldbody><geom name='floor' type='plane' size='1 1 1'/>"
         "<body pos='0 0 .2'><freejoint/><geom name='rollfoot' size='.1' condim='6'/></body></worldbody></mujoco>",
         SAP_OK, NULL, NULL);
  expect("condim6prio", "<mujoco><worldbody><geom name='floor' type='plane' size='1 1 1' priority='1'/>"
         "<body pos='0 0 .2'><freejoint/><geom name='rollfoot' size='.1' condim='6'/></body></worldbody></mujoco>",
         SAP_OK, NULL, NULL);
  expect("paircondim4", "<mujoco><worldbody><geom name='floor' type='plane' size='1 1 1'/>" BALL
         "</worldbody><contact><pair name='twist' geom1='floor' geom2='ball' condim='4'/></contact></mujoco>",
         SAP_OK, NULL, NULL);
  expect("pairroll", "<mujoco><worldbody><geom name='floor' type='plane' size='1 1 1'/>" BALL
         "</worldbody><contact><pair name='tread' geom1='floor' geom2='ball' condim='6' "
         "friction='1 1 0.01 0.002 0.004'/></contact></mujoco>", SAP_ERR_UNSUPPORTED, "'tread'", "rolling");
  expect("pairaniso", "<mujoco><worldbody><geom name='floor' type='plane' size='1 1 1'/>" BALL
         "</worldbody><contact><pair name='skate' geom1='floor' geom2='ball' friction='1 0.2'/></contact></mujoco>",
         SAP_ERR_UNSUPPORTED, "'skate'", "anisotropic");
  // the explicit pair (condim 3) replaces the dynamic pair that would have condim 6
  expect("pairfix", "<mujoco><worldbody><geom name='floor' type='plane' size='1 1 1'/>"
         "<body pos='0 0 .2'><freejoint/><geom name='rollfoot' size='.1' condim='6'/></body></worldbody>"
         "<contact><pair geom1='floor' geom2='rollfoot'/></contact></mujoco>", SAP_OK, NULL, NULL);
}

/* MuJoCo warns about the NaN of the bad-value scenes */
static void quiet(const char* msg) { (void)msg; }

/* The speculative band in force (sap_options): 0 under drake (Drake's point contact has
 * none), 0.02 m under the approx presets, the scene's sap_contact_margin when it sets one
 * (under every preset), the option over both */
static void test_preset_band(void) {
  const char* plain = "<mujoco><worldbody><geom type='plane' size='1 1 .1'/>"
                      "<body><freejoint/><geom size='.1'/></body></worldbody></mujoco>";
  const char* banded = "<mujoco><custom><numeric name='sap_contact_margin' data='0.005'/></custom>"
                       "<worldbody><geom type='plane' size='1 1 .1'/>"
                       "<body><freejoint/><geom size='.1'/></body></worldbody></mujoco>";
  const struct { const char* xml; const char* preset; const char* option; double want; } cases[] = {
      {plain, "drake", NULL, 0},         {plain, "approx32", NULL, 0.02}, {plain, "approx64", NULL, 0.02},
      {banded, "drake", NULL, 0.005},    {banded, "approx32", NULL, 0.005},
      {plain, "drake", "0.03", 0.03},    {banded, "drake", "0", 0},       {banded, "approx64", "0.01", 0.01}};
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    sapModel* m = NULL;
    CHECK(sap_loadModelString(cases[i].xml, &m) == SAP_OK, "load: %s", sap_lastError());
    if (!m) continue;
    CHECK(m->contact_margin_scene == (cases[i].xml == banded), "case %zu: the scene sets the band", i);
    sapOptions o;
    sap_optionsDefault(&o);
    o.device = SAP_DEVICE_CPU;
    sapSim* s = NULL;
    if (sap_optionsSet(&o, "preset", cases[i].preset) != SAP_OK ||
        (cases[i].option && sap_optionsSet(&o, "contact_margin", cases[i].option) != SAP_OK) ||
        sap_create(m, &o, 1, &s) != SAP_OK)
      fprintf(stderr, "  create: %s\n", sap_lastError());
    CHECK(s != NULL, "case %zu: create", i);
    if (s) {
      CHECK(sap_options(s)->contact_margin == cases[i].want && sap_model(s)->contact_margin == cases[i].want,
            "case %zu (%s, option %s): band %g, want %g", i, cases[i].preset,
            cases[i].option ? cases[i].option : "-", sap_options(s)->contact_margin, cases[i].want);
      sap_free(s);
    }
    sap_freeModel(m);
  }
}


/* ---- <flag override="enable"/>: o_margin and o_friction replace every contact's -------- */

/* MuJoCo's mj_assignMargin / mj_assignFriction: every contact, dynamic or <pair>, takes
 * o_margin and o_friction (slide, slide, spin, roll, roll); gap and condim stay the pair's.
 * The priority / condim / friction scene of test_dynamic_combinations and an explicit pair,
 * under the override, against MuJoCo's contact list (mu, torsion, rolling, includemargin,
 * phi); the sapsim pairs must carry the override's values (so the comparison cannot pass on
 * the geoms' own), and MuJoCo's solref/solimp are the override's (o_solref/o_solimp do not
 * enter SAP's material, as no solref does) */
static void test_override_params(void) {
  static const int fcs[2] = {3, 6};
  for (int f = 0; f < 2; f++) {
    char xml[6000];
    int n = snprintf(xml, sizeof(xml),
                     "<mujoco><option o_margin='0.0042' o_friction='0.37 0.37 0.0031 0.00021 0.00021' "
                     "o_solref='0.05 0.7' o_solimp='0.8 0.9 0.002 0.5 2'><flag override='enable'/></option>"
                     "<worldbody><geom name='floor' type='plane' size='3 3 .1' condim='%d' "
                     "friction='0.9 0.004 0.0005' margin='0.0135' gap='0.0015'/>", fcs[f]);
    for (int i = 0; i < 4; i++)
      n += snprintf(xml + n, sizeof(xml) - n,
                    "<body pos='%g 0.1 0.0585'><freejoint/><geom name='s%d' type='sphere' size='0.06' "
                    "priority='%d' condim='%d' friction='%g 0.02 0.003' margin='%g' gap='%g'/></body>",
                    0.117 * i, i, i % 2, i == 3 ? 1 : 4, 0.45 + 0.3 * i, 0.0007 * (i + 1), 0.0004 * (4 - i));
    snprintf(xml + n, sizeof(xml) - n,
             "</worldbody><contact><pair name='p' geom1='s3' geom2='floor' condim='6' friction='1.4 1.4 0.01 "
             "0.001 0.001' margin='0.02'/></contact></mujoco>");
    char tag[64];
    snprintf(tag, sizeof(tag), "override_condim%d", fcs[f]);
    int nc = compare_scene(tag, xml);
    CHECK(nc == 7, "%s: 4 sphere-floor + 3 sphere-sphere contacts in MuJoCo (%d)", tag, nc);
    /* the values themselves: the override's, not the geoms' or the pair's */
    const char* path = write_xml(tag, xml);
    sapModel* m = NULL;
    char err[1000] = "";
    mjModel* mj = mj_loadXML(path, NULL, err, sizeof(err));
    CHECK_OK(sap_loadModel(path, &m));
    remove(path);
    if (!m || !mj) {
      sap_freeModel(m);
      mj_deleteModel(mj);
      continue;
    }
    int checked = 0;
    for (int p = 0; p < m->npair_max; p++) {
      int c = m->pair_condim[p];
      CHECK(m->pair_margin[p] == 0.0042, "%s pair %d: margin %g, want o_margin", tag, p, m->pair_margin[p]);
      CHECK(m->pair_mu[p] == (c == 1 ? 0 : 0.37), "%s pair %d: mu %g", tag, p, m->pair_mu[p]);
      CHECK(m->pair_torsion[p] == (c >= 4 ? 0.0031 : 0), "%s pair %d: torsion %g", tag, p, m->pair_torsion[p]);
      CHECK(m->pair_rolling[p] == (c == 6 ? 0.00021 : 0), "%s pair %d: rolling %g", tag, p, m->pair_rolling[p]);
      checked++;
    }
    CHECK(checked >= 7, "%s: %d pairs", tag, checked);
    mjData* md = mj_makeData(mj);
    mj_forward(mj, md);
    for (int i = 0; i < md->ncon; i++)
      CHECK(md->contact[i].solref[0] == 0.05 && md->contact[i].solimp[0] == 0.8, "%s: MuJoCo contact %d solref %g",
            tag, i, md->contact[i].solref[0]);
    mj_deleteData(md);
    mj_deleteModel(mj);
    sap_freeModel(m);
  }
}

/* a 1.3 kg box on a floor with friction 1 (both geoms), gravity tilted by tan t = 0.5:
 * without the override it sticks; with o_friction 0.3 it slides at a = g (sin t - 0.3 cos t)
 * (analytic), per-world geom friction (sap_setParam) and friction_combine=harmonic leaving the
 * override's mu as MuJoCo's rule does */
static void test_override_slide(void) {
  const double g = 9.81, tilt = atan(0.5), mu = 0.3;
  for (int ov = 0; ov < 3; ov++) {
    char xml[1400];
    snprintf(xml, sizeof(xml),
             "<mujoco><option timestep='0.002' gravity='%.17g 0 %.17g' o_friction='%g %g 0.005 0.0001 0.0001'>"
             "<flag override='%s'/></option><worldbody>"
             "<geom name='floor' type='plane' size='40 40 .1' friction='1'/>"
             "<body pos='0 0 0.025'><freejoint/><geom name='foot' type='box' size='0.03 0.04 0.025' mass='1.3' "
             "friction='1'/></body></worldbody></mujoco>",
             g * sin(tilt), -g * cos(tilt), mu, mu, ov ? "enable" : "disable");
    const char* path = write_xml("override_slide", xml);
    sapModel* m = NULL;
    CHECK_OK(sap_loadModel(path, &m));
    remove(path);
    if (!m) continue;
    sapSim* s = make_sim_with(m, NULL, ov == 2 ? "harmonic" : NULL);
    if (!s) {
      sap_freeModel(m);
      continue;
    }
    if (ov == 2) {  /* a world's geom friction 0.9: the pair keeps the override's */
      double fr[6] = {0.9, 0.005, 0.0001, 0.9, 0.005, 0.0001};
      CHECK_OK(sap_setParam(s, SAP_PARAM_GEOM_FRICTION, NULL, 1, fr));
    }
    double v0[6], v1[6];
    sap_step(s, 100);
    sap_get(s, SAP_FIELD_QVEL, NULL, 1, v0);
    sap_step(s, 250);
    sap_get(s, SAP_FIELD_QVEL, NULL, 1, v1);
    double a = (v1[0] - v0[0]) / (250 * 0.002);
    double want = ov ? g * (sin(tilt) - mu * cos(tilt)) : 0;
    printf("  override %d: a = %.6f, analytic %.6f\n", ov, a, want);
    CHECK_CLOSE(a, want, 2e-3, 1e-2, "override %d: acceleration", ov);
    sap_free(s);
    sap_freeModel(m);
  }
}

int main(void) {
  mju_user_warning = quiet;
  RUN(test_preset_band);
  RUN(test_dynamic_combinations);
  RUN(test_margin_gap_sum);
  RUN(test_explicit_pairs);
  RUN(test_margin_rest);
  RUN(test_condim1_body_on_floor);
  RUN(test_friction_harmonic);
  RUN(test_pyramidal_cone_note);
  RUN(test_bad_values);
  RUN(test_override_params);
  RUN(test_override_slide);
  return check_summary("test_contact_params");
}
