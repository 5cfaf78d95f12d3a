/* Adhesive contacts (MuJoCo 4's geom and pair adhesion; kernels/pair.h sapw_contactAdhesion,
 * the cone shift in kernels/sap_world_t.h sapw_buildContact, the pull in kernels/dynamics_t.h
 * sapw_adhesionPull, net forces in kernels/sensor.h sapw_sensorContactForce). Oracles:
 *  - MuJoCo 4.0 at 200 random states near contact of scenes/adhesion_geom.xml (sums, priority,
 *    explicit pair, contacts in the gap band, rotated geoms, two moving bodies): each listed
 *    contact's adhesion and dim, and qfrc_passive (qfrc_adhesion with the joints' dampers);
 *  - analytic: a cube under a tilted ceiling stays when adhesion > m g cos t (its net pull m g,
 *    read through cfrc_ext and a touch sensor as MuJoCo 4 reports net forces) and falls along
 *    g + a n / m while in the gap band when adhesion < m g cos t; at rest pressed onto a floor
 *    its penetration is the one without adhesion (the compression branch is unchanged); a block
 *    held on a vertical wall by adhesion alone stays iff mu a >= m g and else slides at
 *    g - mu a / m (friction capacity mu (N + a)); a block falling fast into the gap band keeps
 *    its sliding speed (no friction in the gap: MuJoCo's dim 1);
 *  - a magnetic door (MuJoCo's fridge_door idea): nearly closed, it snaps shut and stays latched
 *    in sapsim and in MuJoCo 4.
 * Also: the loader's refusals by name. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fixture.h"
#include "fixture_mj.h"
#include "kernels.h"
#include "sim.h"

#define SCENE "scenes/adhesion_geom.xml"
#define NSTATE 200

/* a state near the scene's rest: each free body shifted by up to 2% of its geom's bounding
 * radius (so the 6 mm bead moves by 0.1 mm, the box by 5 mm) and tilted by up to 0.02 rad,
 * hinges within +-0.25 rad, velocities within +-0.5 */
static void near_state(const mjModel* mj, double* qpos, double* qvel) {
  memcpy(qpos, mj->qpos0, sizeof(double) * mj->nq);
  for (int j = 0; j < mj->njnt; j++) {
    int a = mj->jnt_qposadr[j], b = mj->jnt_bodyid[j];
    if (mj->jnt_type[j] == mjJNT_FREE) {
      double r = 0.02 * mj->geom_rbound[mj->body_geomadr[b]];
      for (int k = 0; k < 3; k++) qpos[a + k] += check_uniform(-r, r);
      double dq[4] = {1, check_uniform(-0.01, 0.01), check_uniform(-0.01, 0.01), check_uniform(-0.01, 0.01)}, q[4];
      mju_mulQuat(q, qpos + a + 3, dq);
      mju_normalize4(q);
      memcpy(qpos + a + 3, q, sizeof(q));
    } else {
      qpos[a] += check_uniform(-0.25, 0.25);
    }
  }
  for (int i = 0; i < mj->nv; i++) qvel[i] = check_uniform(-0.5, 0.5);
}

static void test_against_mujoco(void) {
  mjModel* mj = fx_mjModel(SCENE);
  if (!mj) return;
  mjData* md = mj_makeData(mj);
  sapSim* s = fx_sim(SCENE, NSTATE, "preset=approx64");
  if (!s) return;
  const sapModel* m = sap_model(s);
  int nq = mj->nq, nv = mj->nv;
  double *qpos = malloc(sizeof(double) * NSTATE * nq), *qvel = malloc(sizeof(double) * NSTATE * nv);
  for (int w = 0; w < NSTATE; w++) near_state(mj, qpos + w * nq, qvel + w * nv);
  sap_set(s, SAP_FIELD_QPOS, NULL, NSTATE, qpos);
  sap_set(s, SAP_FIELD_QVEL, NULL, NSTATE, qvel);
  /* the step's stages up to the free motion, which computes qfrc_passive */
  sapc_kinematics(s);
  sapc_collision(s);
  sapc_freeMotion(s);
  const sapData* d = sap_data(s);
  int npull = 0, ngap = 0, ncon = 0, nvalues = 0, worst_w = -1, pull_body[16] = {0};
  double worst = 0, seen[8];
  for (int w = 0; w < NSTATE; w++) {
    fx_mjForwardAt(mj, md, qpos + w * nq, qvel + w * nv, NULL);
    /* every contact MuJoCo lists: sapsim lists as many of the pair with phi below the gap,
     * each with MuJoCo's adhesion; an in-gap one has dim 1 */
    for (int c = 0; c < md->ncon; c++) {
      const mjContact* con = md->contact + c;
      int g0 = con->geom[0] < con->geom[1] ? con->geom[0] : con->geom[1];
      int g1 = con->geom[0] ^ con->geom[1] ^ g0, nm = 0, ns = 0;
      for (int k = 0; k < md->ncon; k++) nm += (md->contact[k].geom[0] == con->geom[0] && md->contact[k].geom[1] == con->geom[1]);
      for (int k = 0; k < d->ncon[w]; k++) {
        long ci = (long)w * d->ncon_max + k;
        if (d->con_geom[2 * ci] != g0 || d->con_geom[2 * ci + 1] != g1) continue;
        double a = sapw_contactAdhesion(m, g0, g1, d->con_dist[ci]);
        if (!(d->con_dist[ci] < m->pair_gap[sapw_findPair(m, g0, g1)])) continue;
        ns++;
        CHECK(a == con->adhesion, "world %d geoms %d %d: adhesion %g, MuJoCo 4 %g", w, g0, g1, a, con->adhesion);
      }
      CHECK(ns == nm, "world %d geoms %d %d: sapsim lists %d contacts, MuJoCo 4 %d", w, g0, g1, ns, nm);
      int gap = con->dist >= con->includemargin;
      if (gap) CHECK(con->dim == 1, "world %d: MuJoCo's in-gap adhesive contact has dim %d", w, con->dim);
      ngap += gap;
      ncon++;
      int seenit = 0;
      for (int k = 0; k < nvalues; k++) seenit |= seen[k] == con->adhesion;
      if (!seenit && nvalues < 8) seen[nvalues++] = con->adhesion;
    }
    double scale = 1;
    for (int i = 0; i < nv; i++) scale = fmax(scale, fabs(md->qfrc_passive[i]));
    int pulls = 0;
    for (int i = 0; i < nv; i++) {
      pulls |= md->qfrc_adhesion[i] != 0;
      if (md->qfrc_adhesion[i] != 0) pull_body[mj->dof_bodyid[i] < 16 ? mj->dof_bodyid[i] : 15]++;
      double e = fabs(d->qfrc_passive[(long)w * nv + i] - md->qfrc_passive[i]) / scale;
      if (e > worst) worst = e, worst_w = w;
      CHECK(e <= 1e-12, "world %d qfrc_passive[%d]: %.15g, MuJoCo 4 %.15g (qfrc_adhesion %.15g)", w, i,
            d->qfrc_passive[(long)w * nv + i], md->qfrc_passive[i], md->qfrc_adhesion[i]);
    }
    npull += pulls;
  }
  fprintf(stderr, "  %d states: worst qfrc_passive difference %.2e of the scale (world %d); %d contacts (%d in "
          "the gap band), %d distinct adhesions (", NSTATE, worst, worst_w, ncon, ngap, nvalues);
  for (int k = 0; k < nvalues; k++) fprintf(stderr, "%s%g", k ? " " : "", seen[k]);
  fprintf(stderr, "), %d states with a pull; dofs pulled per body:", npull);
  for (int b = 1; b < mj->nbody && b < 16; b++) fprintf(stderr, " %d", pull_body[b]);
  fprintf(stderr, "\n");
  CHECK(npull >= NSTATE * 9 / 10, "only %d of %d states have a pull", npull, NSTATE);
  CHECK(ngap >= 50, "only %d contacts in the gap band: the test would not see them", ngap);
  CHECK(nvalues >= 5, "%d distinct adhesion values (sum, priority, pair, ...)", nvalues);
  for (int b = 1; b < mj->nbody; b++)
    CHECK(pull_body[b] >= NSTATE / 10, "body %d pulled in %d states", b, pull_body[b]);
  free(qpos);
  free(qvel);
  sap_free(s);
  mj_deleteData(md);
  mj_deleteModel(mj);
}

/* a cube of side 2a under a ceiling plane tilted by t about y (its normal -(sin t, 0, cos t)
 * pointing down), the cube's top face at phi0 below the margin-inflated surface, adhesion adh
 * per contact (MuJoCo's con->adhesion: the top face's 4 corners pull 4 adh), friction mu,
 * margin and gap on the ceiling; a touch sensor on the cube's top face; midpoint rule */
static sapSim* ceiling_sim(double a, double rho, double adh, double t, double mu, double margin, double gap,
                           double phi0, double h) {
  char xml[2000];
  double deg = t * 180 / 3.14159265358979323846, c = cos(t), sn = sin(t), d = margin + a + phi0;
  snprintf(xml, sizeof(xml),
           "<mujoco><option timestep='%.17g'/><worldbody>"
           "<geom name='ceiling' type='plane' size='4 4 0.1' pos='0 0 1' euler='0 %.17g 0' margin='%.17g' "
           "gap='%.17g' friction='%.17g'/>"
           "<body name='cube' pos='%.17g 0 %.17g' euler='0 %.17g 0'><freejoint/><geom type='box' size='%.17g %.17g %.17g' "
           "density='%.17g' adhesion='%.17g' friction='%.17g'/><site name='top' pos='0 0 %.17g' size='%.17g %.17g 0.0001' "
           "type='box'/></body></worldbody><sensor><touch site='top'/></sensor></mujoco>",
           h, 180 + deg, margin, gap, mu, -d * sn, 1 - d * c, deg, a, a, a, rho, adh, mu, a, 1.01 * a, 1.01 * a);
  return fx_sim(xml, 1, "preset=approx64 integration=midpoint body_outputs=1");
}

static void test_ceiling(void) {
  struct { double a, rho, t, margin, gap; } cases[] = {
      {0.05, 500, 0, 0, 0.01}, {0.005, 8000, 0.35, 0.0005, 0.002}, {0.4, 50, -0.6, 0.01, 0.05}};
  for (int c = 0; c < 3; c++) {
    double a = cases[c].a, t = cases[c].t, mass = cases[c].rho * 8 * a * a * a, g = 9.81, h = 0.001;
    double W = mass * g * cos(t), mu = 1.0, nup[3] = {sin(t), 0, cos(t)}, gv[3] = {0, 0, -g};
    /* held: adhesion twice the weight's normal part: the cube stays, the net interface force on
     * it (cfrc_ext) is W n_up, and a touch sensor reads 0 (MuJoCo's net normal force f_n - a < 0
     * pulls). Only untilted: under a tilted ceiling the pulled contacts sit stretched (phi > 0,
     * in the gap band, MuJoCo's dim 1) and MuJoCo 4 slides the cube along the ceiling without
     * friction; sapsim's band starts past SAP's sliding lift (sap_world_t.h sapw_buildContact),
     * so its cube creeps instead (about 1 mm in 0.6 s): not an oracle here */
    sapSim* s = ceiling_sim(a, cases[c].rho, 2 * W / 4, t, mu, cases[c].margin, cases[c].gap, 0, h);
    if (!s) continue;
    int n = 600;
    double q[7], q0[7], cf[12], touch;
    sap_get(s, SAP_FIELD_QPOS, NULL, 1, q0);
    CHECK(sap_step(s, n) == SAP_OK, "step: %s", sap_lastError());
    sap_get(s, SAP_FIELD_QPOS, NULL, 1, q);
    sap_get(s, SAP_FIELD_CFRC_EXT, NULL, 1, cf);
    sap_get(s, SAP_FIELD_SENSORDATA, NULL, 1, &touch);
    double moved = 0, ef = 0;
    for (int k = 0; k < 3; k++) moved = fmax(moved, fabs(q[k] - q0[k]));
    const double* f = cf + 6 + 3;  // the cube's force
    for (int k = 0; k < 3; k++) ef = fmax(ef, fabs(f[k] - W * nup[k]));
    fprintf(stderr, "  a %g m, tilt %g: held at adhesion 2 m g cos t: moved %.3g m, cfrc_ext force (%.9g %.9g %.9g) "
            "for W n_up (%.9g %.9g %.9g), touch %.3g\n", a, t, moved, f[0], f[1], f[2], W * nup[0], W * nup[1],
            W * nup[2], touch);
    if (t == 0) {
      CHECK(moved <= 0.01 * cases[c].gap, "a %g: held cube moved %g", a, moved);
      CHECK(ef <= 1e-6 * mass * g, "a %g: cfrc_ext force off W n_up by %g", a, ef);
    }
    CHECK(touch == 0, "a %g: touch %g, want 0 (net force pulls)", a, touch);
    sap_free(s);
    /* let go: adhesion half the weight's normal part, from phi0 = gap / 5 (beyond the tether of
     * the contacts' compliance): while its contacts count (phi < gap at the step's start) the
     * cube accelerates at g + (4 adh / m) n_up (no friction in the gap), then at g */
    double adh = 0.5 * W, phi0 = 0.2 * cases[c].gap;
    s = ceiling_sim(a, cases[c].rho, adh / 4, t, mu, cases[c].margin, cases[c].gap, phi0, h);
    if (!s) continue;
    n = 300;
    int inband = 0;
    double x[3] = {0, 0, 0}, vx[3] = {0, 0, 0};
    for (int k = 0; k < n; k++) {
      double sep = phi0 - (x[0] * nup[0] + x[2] * nup[2]);  // phi of the top face
      int band = sep < cases[c].gap;
      inband += band;
      for (int j = 0; j < 3; j++) {
        double acc = gv[j] + (band ? adh / mass * nup[j] : 0), v1 = vx[j] + h * acc;
        x[j] += h * (vx[j] + v1) / 2;
        vx[j] = v1;
      }
    }
    sap_get(s, SAP_FIELD_QPOS, NULL, 1, q0);
    CHECK(sap_step(s, n) == SAP_OK, "step: %s", sap_lastError());
    sap_get(s, SAP_FIELD_QPOS, NULL, 1, q);
    double e = 0, dxm = 0;
    for (int j = 0; j < 3; j++) {
      e = fmax(e, fabs(q[j] - q0[j] - x[j]));
      dxm = fmax(dxm, fabs(x[j]));
    }
    fprintf(stderr, "  a %g m, tilt %g: let go at adhesion m g cos t / 2: moved (%.9f %.9f %.9f), analytic "
            "(%.9f %.9f %.9f), %d steps in the band\n", a, t, q[0] - q0[0], q[1] - q0[1], q[2] - q0[2], x[0], x[1],
            x[2], inband);
    CHECK(e <= 1e-9 + 1e-9 * dxm, "a %g: fall off the analytic one by %g", a, e);
    CHECK(inband >= 5 && inband < n, "a %g: %d steps in the band", a, inband);
    sap_free(s);
  }
}

/* a box (half sizes a, b, c) resting on a floor under gravity, settled; its height */
static double rest_height(double a, double rho, double adh, const char* opts) {
  char xml[1200], o[200];
  snprintf(xml, sizeof(xml),
           "<mujoco><option timestep='0.001'/><worldbody><geom type='plane' size='4 4 0.1' adhesion='%.17g'/>"
           "<body pos='0 0 %.17g'><freejoint/><geom type='box' size='%.17g %.17g %.17g' density='%.17g'/></body>"
           "</worldbody><custom><numeric name='sap_contact_k' data='%.17g'/></custom></mujoco>",
           adh, 0.7 * a, a, 1.5 * a, 0.7 * a, rho, 1e3 * rho * a * a);
  snprintf(o, sizeof(o), "preset=approx64 %s", opts);
  sapSim* s = fx_sim(xml, 1, o);
  if (!s) return NAN;
  CHECK(sap_step(s, 1500) == SAP_OK, "step: %s", sap_lastError());
  double q[7];
  sap_get(s, SAP_FIELD_QPOS, NULL, 1, q);
  sap_free(s);
  return q[2];
}

static void test_compression_unchanged(void) {
  double sizes[] = {0.01, 0.1, 1.0};
  for (int c = 0; c < 3; c++) {
    double a = sizes[c], rho = 700, mass = rho * 8 * 1.5 * 0.7 * a * a * a, g = 9.81;
    double z0 = rest_height(a, rho, 0, ""), za = rest_height(a, rho, 3 * mass * g / 4, "");
    double press = 0.7 * a - z0;
    fprintf(stderr, "  box %g m: rest height %.12f without adhesion, %.12f with 3 m g (press %.3g m, "
            "difference %.2g m)\n", a, z0, za, press, za - z0);
    CHECK(press > 0, "box %g: not pressed (%g)", a, press);
    CHECK(fabs(za - z0) <= 1e-6 * press, "box %g: press with adhesion differs by %g m of %g", a, za - z0, press);
  }
}

/* a plate (half sizes a, a, 0.15 a: flat, so that it slides without tipping) on a steep incline of angle t (plane through the origin),
 * pressed by its weight's normal part N = m g cos t and adhesion adh per contact (4 corners:
 * A = 4 adh), friction mu; its displacement down the slope after n steps from rest (midpoint) */
static double incline_slide(double a, double rho, double adh, double mu, double t, int n, double h) {
  char xml[1400];
  double deg = t * 180 / 3.14159265358979323846;
  snprintf(xml, sizeof(xml),
           "<mujoco><option timestep='%.17g'/><worldbody><geom type='plane' size='9 9 0.1' euler='0 %.17g 0' "
           "friction='%.17g' gap='%.17g'/><body pos='%.17g 0 %.17g' euler='0 %.17g 0'><freejoint/><geom type='box' "
           "size='%.17g %.17g %.17g' density='%.17g' adhesion='%.17g' friction='%.17g'/></body></worldbody></mujoco>",
           h, deg, mu, 0.1 * a, 0.15 * a * sin(t), 0.15 * a * cos(t), deg, a, a, 0.15 * a, rho, adh, mu);
  sapSim* s = fx_sim(xml, 1, "preset=approx64 integration=midpoint");
  if (!s) return NAN;
  double q0[7], q[7];
  sap_get(s, SAP_FIELD_QPOS, NULL, 1, q0);
  CHECK(sap_step(s, n) == SAP_OK, "step: %s", sap_lastError());
  sap_get(s, SAP_FIELD_QPOS, NULL, 1, q);
  sap_free(s);
  /* downhill: -(cos t, 0, -sin t) for a plane whose normal is (sin t, 0, cos t) */
  return (q[0] - q0[0]) * cos(t) - (q[2] - q0[2]) * sin(t);
}

/* the friction capacity of a pressed adhesive contact is mu (N + A): on a slope too steep for
 * friction alone, the plate stays with A = 2 (m g sin t / mu - m g cos t) (creeping less than
 * 1% of the frictionless slide, as in MuJoCo 4: about 1 mm in 0.4 s), and slides with half that.
 * The sliding plate is not an analytic oracle: it lifts into the gap band (SAP's convex cone and
 * MuJoCo 4's soft contacts alike), where friction is off, so it slides faster than
 * g sin t - mu (g cos t + A / m) (MuJoCo 4: 0.6-0.75 m where that acceleration gives 0.23-0.33 m) */
static void test_incline(void) {
  struct { double a, rho, mu, t; } cases[] = {{0.02, 1000, 0.5, 1.2}, {0.3, 100, 0.3, 0.9}, {0.004, 5000, 0.8, 1.4}};
  for (int c = 0; c < 3; c++) {
    double a = cases[c].a, mass = cases[c].rho * 8 * 0.15 * a * a * a, g = 9.81, mu = cases[c].mu, t = cases[c].t;
    double h = 0.001, need = mass * g * (sin(t) / mu - cos(t));  // A that holds it
    int n = 400;
    double T = n * h, free = 0.5 * g * sin(t) * T * T;
    double z = incline_slide(a, cases[c].rho, 2 * need / 4, mu, t, n, h);
    double A = 0.5 * need, acc = g * sin(t) - mu * (g * cos(t) + A / mass);
    double zs = incline_slide(a, cases[c].rho, A / 4, mu, t, n, h), cap = 0.5 * acc * T * T;
    fprintf(stderr, "  plate %g m, mu %g, slope %g: held at A = 2 (m g sin t / mu - m g cos t): slid %.3g m; at half "
            "that: slid %.6f m (capacity mu (N + A): %.6f, frictionless %.6f)\n", a, mu, t, z, zs, cap, free);
    CHECK(fabs(z) <= 0.01 * free, "plate %g: held plate slid %g m", a, z);
    CHECK(zs >= 0.9 * cap && zs <= free * 1.001, "plate %g: slid %g m, between %g and %g", a, zs, cap, free);
  }
}

/* a box falling fast into the floor's gap band while sliding: its contacts in the band have no
 * friction (MuJoCo's dim 1), so a step whose normal impulse stops the approach leaves the
 * sliding speed as it was; MuJoCo 4 the same */
static void test_gap_frictionless(void) {
  const char* xml =
      "<mujoco><option timestep='0.002' gravity='0 0 0'/><worldbody><geom type='plane' size='4 4 0.1' gap='0.004' "
      "adhesion='1'/><body pos='0 0 0.1012'><freejoint/><geom type='box' size='0.2 0.15 0.1' density='500' "
      "friction='1'/></body></worldbody></mujoco>";
  sapSim* s = fx_sim(xml, 1, "preset=approx64");
  mjModel* mj = fx_mjModel(xml);
  if (!s || !mj) return;
  mjData* md = mj_makeData(mj);
  /* closes the 1.2 mm in the step; slips slowly enough to be past SAP's lift allowance:
   * (h + taud) mu |v_t| = 0.022 s x 0.029 m/s = 0.64 mm < phi */
  double v[6] = {0.025, -0.015, -0.8, 0, 0, 0};
  sap_set(s, SAP_FIELD_QVEL, NULL, 1, v);
  memcpy(md->qvel, v, sizeof(v));
  CHECK(sap_step(s, 1) == SAP_OK, "step: %s", sap_lastError());
  mj_step(mj, md);
  double v1[6];
  sap_get(s, SAP_FIELD_QVEL, NULL, 1, v1);
  fprintf(stderr, "  sliding into the gap band: v (%.15g %.15g %.15g) after a step; MuJoCo 4 (%.15g %.15g %.15g), "
          "%d contacts of dim %d\n", v1[0], v1[1], v1[2], md->qvel[0], md->qvel[1], md->qvel[2], md->ncon,
          md->ncon ? md->contact[0].dim : 0);
  CHECK(v1[2] > v[2] + 0.1, "the approach was not stopped (vz %g): the test would not see friction", v1[2]);
  CHECK(fabs(v1[0] - v[0]) <= 1e-12 && fabs(v1[1] - v[1]) <= 1e-12, "sliding speed changed in the gap: (%.15g %.15g)",
        v1[0], v1[1]);
  CHECK(fabs(md->qvel[0] - v[0]) <= 1e-12 && fabs(md->qvel[1] - v[1]) <= 1e-12, "MuJoCo 4's sliding speed changed");
  CHECK(md->ncon == 4 && md->contact[0].dim == 1, "MuJoCo 4: %d contacts, dim %d", md->ncon, md->ncon ? md->contact[0].dim : 0);
  sap_free(s);
  mj_deleteData(md);
  mj_deleteModel(mj);
}

/* a magnetic door (MuJoCo's model/adhesion/fridge_door.xml idea, our own geometry): a hinged
 * panel (its range's lower end, 0, is shut) whose magnet strip meets the frame's, both
 * adhesive with a 3 mm gap each; ajar by 0.006 rad (2.9 mm at the magnet, inside the summed 6 mm
 * band) it snaps shut and stays latched, in sapsim and in MuJoCo 4; opened wide (1.6 rad) it
 * stays open */
static const char* DOOR =
    "<mujoco><option timestep='0.002'/><worldbody>"
    "<geom name='jamb' type='box' size='.02 .02 .35' pos='-.02 .45 .4'/>"
    "<geom name='magnet1' type='box' size='.005 .01 .3' pos='.005 .44 .4' adhesion='1.5' gap='.003'/>"
    "<body name='door' pos='0 -.02 .4'><joint name='hinge' axis='0 0 -1' range='0 135' damping='.08' "
    "stiffness='0.05'/><geom name='panel' type='box' size='.015 .24 .37' pos='.035 .25 0' mass='1.5'/>"
    "<geom name='magnet2' type='box' size='.005 .01 .3' pos='.015 .46 0' adhesion='1.5' gap='.003' mass='.05'/>"
    "</body></worldbody></mujoco>";

static void test_door(void) {
  mjModel* mj = fx_mjModel(DOOR);
  if (!mj) return;
  mjData* md = mj_makeData(mj);
  double start[2] = {0.006, 1.6};
  for (int c = 0; c < 2; c++) {
    sapSim* s = fx_sim(DOOR, 1, "preset=approx64");
    if (!s) break;
    mj_resetData(mj, md);
    md->qpos[0] = start[c];
    sap_set(s, SAP_FIELD_QPOS, NULL, 1, start + c);
    double qs_max = 0, qm_max = 0, qs = 0, t_shut = -1;
    int n = 500;  // 1 s
    for (int k = 0; k < n; k++) {
      CHECK(sap_step(s, 1) == SAP_OK, "step: %s", sap_lastError());
      mj_step(mj, md);
      sap_get(s, SAP_FIELD_QPOS, NULL, 1, &qs);
      if (t_shut < 0 && qs < 1e-3) t_shut = (k + 1) * 0.002;
      if (k >= n / 2) {
        qs_max = fmax(qs_max, fabs(qs));
        qm_max = fmax(qm_max, fabs(md->qpos[0]));
      }
    }
    fprintf(stderr, "  door from %g rad: after 1 s sapsim %.3g rad (shut at %.3g s), MuJoCo 4 %.3g rad; largest "
            "opening over the last 0.5 s: sapsim %.3g, MuJoCo 4 %.3g\n", start[c], qs, t_shut, md->qpos[0], qs_max,
            qm_max);
    if (c == 0) {
      CHECK(qs_max <= 1e-3, "sapsim's door not latched: %g rad", qs_max);
      CHECK(qm_max <= 1e-3, "MuJoCo 4's door not latched: %g rad", qm_max);
    } else {
      CHECK(qs > 1.0 && md->qpos[0] > 1.0, "the open door closed (sapsim %g, MuJoCo 4 %g)", qs, md->qpos[0]);
    }
    sap_free(s);
  }
  mj_deleteData(md);
  mj_deleteModel(mj);
  /* control: the same door without adhesion (the hinge spring alone) is still ajar after 1 s */
  char plain[1200];
  snprintf(plain, sizeof(plain), "%s", DOOR);
  for (char* p = strstr(plain, "adhesion='1.5'"); p; p = strstr(p, "adhesion='1.5'")) memcpy(p, "adhesion='0.0'", 14);
  sapSim* s = fx_sim(plain, 1, "preset=approx64");
  if (!s) return;
  double q0 = 0.006, q = 0;
  sap_set(s, SAP_FIELD_QPOS, NULL, 1, &q0);
  CHECK(sap_step(s, 500) == SAP_OK, "step: %s", sap_lastError());
  sap_get(s, SAP_FIELD_QPOS, NULL, 1, &q);
  fprintf(stderr, "  door without adhesion from 0.006 rad: %.3g rad after 1 s\n", q);
  CHECK(q > 0.003, "the door without magnets closed (%g)", q);
  sap_free(s);
}

/* the screened solve (contact_screen) tests each contact with its translated cone: the same
 * trajectory as the full solve, to the solver's tolerance (1e-12: 6e-14 m after 200 steps); and
 * a dropped adhesive contact (capacity) is never shown idle: its world keeps SAP_WORLD_CONTACT_OVERFLOW, where the same drop without adhesion is shown idle */
static void test_screen_and_drop(void) {
  sapSim* a = fx_sim(SCENE, 2, "preset=approx64 optimality_rel_tol=1e-12");
  sapSim* b = fx_sim(SCENE, 2, "preset=approx64 optimality_rel_tol=1e-12 contact_screen=1");
  if (!a || !b) return;
  CHECK(sap_step(a, 200) == SAP_OK && sap_step(b, 200) == SAP_OK, "step: %s", sap_lastError());
  const sapModel* m = sap_model(a);
  double qa[64], qb[64], e = 0;
  sap_get(a, SAP_FIELD_QPOS, NULL, 2, qa);
  sap_get(b, SAP_FIELD_QPOS, NULL, 2, qb);
  for (int i = 0; i < 2 * m->nq; i++) e = fmax(e, fabs(qa[i] - qb[i]));
  fprintf(stderr, "  contact_screen=1 against the full solve after 200 steps: qpos differs by %.2g\n", e);
  CHECK(e <= 1e-11, "screened solve off by %g", e);
  sap_free(a);
  sap_free(b);
  /* a sphere resting on a floor beside a box far above it; capacity 1 keeps the sphere's
   * contact and drops the box's (phi in the gap band when adhesive, idle either way) */
  for (int adh = 0; adh < 2; adh++) {
    char xml[800];
    snprintf(xml, sizeof(xml),
             "<mujoco><worldbody><geom type='plane' size='3 3 .1' gap='0.05' adhesion='%d'/><body pos='0 0 .099'>"
             "<freejoint/><geom size='.1'/></body><body pos='1 0 .13'><freejoint/><geom type='box' size='.1 .1 .1'/>"
             "</body></worldbody></mujoco>", adh);
    sapSim* s = fx_sim(xml, 1, "preset=approx64 ncon_max=1");
    if (!s) return;
    CHECK(sap_step(s, 1) == SAP_OK, "step: %s", sap_lastError());
    const sapData* d = sap_data(s);
    int flag = (d->world_flags[0] & SAP_WORLD_CONTACT_OVERFLOW) != 0;
    fprintf(stderr, "  adhesion %d: %d contact kept, %d dropped, overflow flag %d\n", adh, d->ncon[0],
            d->ncon_dropped[0], flag);
    CHECK(d->ncon_dropped[0] > 0, "nothing dropped");
    CHECK(flag == adh, "adhesion %d: overflow flag %d", adh, flag);
    sap_free(s);
  }
}

static void test_refusals(void) {
  fx_refused("<mujoco><worldbody><geom name='floor' type='plane' size='1 1 .1' adhesion='-1'/><body><freejoint/>"
             "<geom size='.1'/></body></worldbody></mujoco>",
             SAP_ERR_SCENE, "geom 'floor' has adhesion -1; it must be finite and >= 0");
  fx_refused("<mujoco><option><flag spring='disable' damper='disable'/></option><worldbody><geom name='floor' "
             "type='plane' size='1 1 .1' adhesion='1'/><body><freejoint/><geom size='.1'/></body></worldbody></mujoco>",
             SAP_ERR_UNSUPPORTED, "geom 'floor' has adhesion with the spring and damper flags both disabled");
  fx_refused("<mujoco><worldbody><geom name='floor' type='plane' size='1 1 .1'/><body><freejoint/>"
             "<geom name='ball' size='.1'/></body></worldbody><contact><pair name='p' geom1='floor' geom2='ball' "
             "adhesion='-2'/></contact></mujoco>",
             SAP_ERR_SCENE, "<pair> 'p' between geoms 'floor' and 'ball' has adhesion -2");
}

int main(void) {
  RUN(test_against_mujoco);
  RUN(test_ceiling);
  RUN(test_compression_unchanged);
  RUN(test_incline);
  RUN(test_gap_frictionless);
  RUN(test_door);
  RUN(test_screen_and_drop);
  RUN(test_refusals);
  return check_summary("test_geom_adhesion");
}
