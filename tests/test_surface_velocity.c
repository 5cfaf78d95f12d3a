/* Surface velocities (MuJoCo 4's geom surfacevel; kernels/sap_solve.h sapw_surfaceTarget,
 * the friction rows' targets in kernels/sap_cone_t.h). Oracles:
 *  - MuJoCo 4.0's own term: at random states of scenes/surface_velocity.xml, for every contact
 *    MuJoCo lists, efc_vel - efc_J qvel (mj_addSurfaceVel's cs, tangential and torsional) equals
 *    minus sapsim's target computed at MuJoCo's contact (its point, frame and geom order), to
 *    1e-12 relative;
 *  - analytic motions of the scene: the parcel slides at mu g until it rides with the belt,
 *    then moves at the belt's velocity; the crate climbs the ramp at the belt's speed less the
 *    friction regularization's creep; the turntable's rider goes round at the table's rate; the
 *    puck spins at the spinner's rate; the tank drives at its track speed along its heading;
 *  - the same scene with every geom's surface velocity zero stays bitwise equal to the run of
 *    the scene without the attribute (the targets enter as vc - 0).
 * Also: a non-finite surfacevel is refused by name. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fixture.h"
#include "fixture_mj.h"
#include "mujoco/mujoco.h"
#include "sap_solve.h"
#include "sim.h"

#define SCENE "scenes/surface_velocity.xml"
#define NSTATE 60

/* a state near the scene's rest: the free bodies shifted by up to 5 mm, tilted by up to
 * 0.05 rad, hinges and slides within +-0.2, velocities within +-0.5 */
static void near_state(const mjModel* mj, double* qpos, double* qvel) {
  memcpy(qpos, mj->qpos0, sizeof(double) * mj->nq);
  for (int j = 0; j < mj->njnt; j++) {
    int a = mj->jnt_qposadr[j];
    if (mj->jnt_type[j] == mjJNT_FREE) {
      for (int k = 0; k < 3; k++) qpos[a + k] += check_uniform(-0.005, 0.005);
      double dq[4] = {1, check_uniform(-0.025, 0.025), check_uniform(-0.025, 0.025), check_uniform(-0.025, 0.025)};
      double q[4];
      mju_mulQuat(q, qpos + a + 3, dq);
      mju_normalize4(q);
      memcpy(qpos + a + 3, q, sizeof(q));
    } else {
      qpos[a] += check_uniform(-0.2, 0.2) * (mj->jnt_type[j] == mjJNT_SLIDE ? 0.01 : 1);
    }
  }
  for (int i = 0; i < mj->nv; i++) qvel[i] = check_uniform(-0.5, 0.5);
}

static void test_target_vs_mujoco(void) {
  mjModel* mj = fx_mjModel(SCENE);
  if (!mj) return;
  CHECK(mj->opt.cone == mjCONE_ELLIPTIC, "the scene's cone is elliptic (MuJoCo's rows are then n, t1, t2, spin)");
  mjData* md = mj_makeData(mj);
  sapSim* s = fx_sim(SCENE, NSTATE, "preset=approx64");
  if (!s) return;
  const sapModel* m = sap_model(s);
  int nq = mj->nq, nv = mj->nv;
  double *qpos = malloc(sizeof(double) * NSTATE * nq), *qvel = malloc(sizeof(double) * NSTATE * nv);
  for (int w = 0; w < NSTATE; w++) near_state(mj, qpos + w * nq, qvel + w * nv);
  sap_set(s, SAP_FIELD_QPOS, NULL, NSTATE, qpos);
  sap_set(s, SAP_FIELD_QVEL, NULL, NSTATE, qvel);
  sapc_kinematics(s);  // geom poses; the contacts below are MuJoCo's, written into slot 0
  sapData* d = (sapData*)sap_data(s);
  double* Jv = malloc(sizeof(double) * 6 * (mj->nconmax > 0 ? mj->nconmax : 1000));
  int per_geom[16] = {0}, nspin = 0, nzero = 0;
  double worst = 0;
  for (int w = 0; w < NSTATE; w++) {
    fx_mjForwardAt(mj, md, qpos + w * nq, qvel + w * nv, NULL);
    double* jv = mju_malloc(sizeof(double) * (md->nefc ? md->nefc : 1));
    mj_mulJacVec(mj, md, jv, md->qvel);
    for (int c = 0; c < md->ncon; c++) {
      const mjContact* con = md->contact + c;
      if (con->efc_address < 0 || con->dim < 3) continue;
      long ci = (long)w * d->ncon_max;  // slot 0 of world w
      double* f = d->con_frame + 9 * ci;
      for (int k = 0; k < 3; k++) {
        f[k] = con->frame[3 + k];      // t1
        f[3 + k] = con->frame[6 + k];  // t2
        f[6 + k] = con->frame[k];      // n
        d->con_pos[6 * ci + k] = d->con_pos[6 * ci + 3 + k] = con->pos[k];
      }
      d->con_geom[2 * ci] = con->geom[0];
      d->con_geom[2 * ci + 1] = con->geom[1];
      double vt[3];
      sapw_surfaceTarget(m, d, w, 0, vt);
      double cs[4] = {0, 0, 0, 0}, scale = 1e-3;
      for (int j = 0; j < con->dim && j < 4; j++) cs[j] = md->efc_vel[con->efc_address + j] - jv[con->efc_address + j];
      for (int j = 0; j < 4; j++) scale = fmax(scale, fabs(cs[j]));
      int moving = 0;
      for (int side = 0; side < 2; side++)
        for (int k = 0; k < 6; k++) moving |= mj->geom_surfacevel[6 * con->geom[side] + k] != 0;
      for (int side = 0; side < 2 && moving; side++)
        if (con->geom[side] < 16) per_geom[con->geom[side]]++;
      nzero += !moving;
      double e[3] = {fabs(vt[0] + cs[1]), fabs(vt[1] + cs[2]), con->dim >= 4 ? fabs(vt[2] + cs[3]) : 0};
      nspin += con->dim >= 4 && moving && fabs(cs[3]) > 0.1;
      for (int k = 0; k < 3; k++) {
        worst = fmax(worst, e[k] / scale);
        CHECK(e[k] <= 1e-12 * scale, "world %d contact %d (geoms %d, %d) row %d: sapsim target %.15g, MuJoCo -cs %.15g",
              w, c, con->geom[0], con->geom[1], k, vt[k], -cs[k + 1]);
      }
      CHECK(fabs(cs[0]) <= 1e-12 * scale, "MuJoCo pushes no normal velocity (%g)", cs[0]);
    }
    mju_free(jv);
  }
  // every geom with a surface velocity was seen in contact, torsion too; geoms without one
  // (the floor under the tank is the tank's side) gave zero targets above
  const char* names[] = {"belt", "ramp", "turntable", "spinner", "tank"};
  for (int k = 0; k < 5; k++) {
    int g = mj_name2id(mj, mjOBJ_GEOM, names[k]);
    CHECK(g >= 0 && g < 16 && per_geom[g] >= NSTATE / 4, "geom %s in contact in %d states' contacts", names[k],
          g >= 0 && g < 16 ? per_geom[g] : -1);
  }
  CHECK(nspin >= NSTATE, "spin targets seen: %d", nspin);
  printf("  targets vs MuJoCo 4's cs over %d states: worst %.2g relative; %d spin rows; %d contacts without\n",
         NSTATE, worst, nspin, nzero);
  free(Jv);
  free(qpos);
  free(qvel);
  sap_free(s);
  mj_deleteData(md);
  mj_deleteModel(mj);
}

/* world 0's qvel after n steps of s from its reset */
static void run(sapSim* s, int n, double* qvel) {
  sap_step(s, n);
  sap_get(s, SAP_FIELD_QVEL, NULL, 1, qvel);
}

/* the free joint of body `name`: its dof address */
static int body_dof(const sapModel* m, mjModel* mj, const char* name) {
  (void)m;
  int b = mj_name2id(mj, mjOBJ_BODY, name);
  return b >= 0 ? mj->body_dofadr[b] : -1;
}

static void test_analytic_motions(const char* preset, double tol_ride) {
  char opts[64];
  mjModel* mj = fx_mjModel(SCENE);
  if (!mj) return;
  snprintf(opts, sizeof(opts), "preset=%s", preset);
  sapSim* s = fx_sim(SCENE, 1, opts);
  if (!s) return;
  const sapModel* m = sap_model(s);
  double qv[64];
  double g = 9.81, deg = 3.14159265358979323846 / 180;
  int parcel = body_dof(m, mj, "parcel"), crate = body_dof(m, mj, "crate"), puck = body_dof(m, mj, "puck");
  int tank = body_dof(m, mj, "tank"), pin = mj->jnt_dofadr[mj_name2id(mj, mjOBJ_JOINT, "pin")];
  // the parcel starts at rest on the belt and slides until it rides at 0.5 m/s. A sliding
  // contact's impulse is gamma_t = mu gamma_n along its slip (sap_cone_t.h region 2), an idle
  // one's zero, so the horizontal speed gained is at most mu times the normal impulse per unit
  // mass, which the vertical momentum gives: |v_xy(t)| <= mu (g t + v_z(t)), with equality
  // while every contact slips the same way (the parcel does not turn). It hops first (the
  // convex cone lifts a sliding contact, vn ~ mu |vt|: Castro et al. 2022 §IV) and lands near
  // 0.045 s, tumbling under drake's stiffer contact; the equality is checked at 0.04 s.
  for (int n = 1; n <= 50; n++) {
    run(s, 1, qv);
    double sp = hypot(qv[parcel], qv[parcel + 1]), bound = 0.6 * (g * 0.002 * n + qv[parcel + 2]);
    CHECK(sp <= bound * (1 + 1e-6) + 1e-12, "%s parcel speed %.9g at step %d beyond mu (g t + v_z) = %.9g", preset,
          sp, n, bound);
    if (n == 20)
      CHECK(fabs(sp - bound) <= 1e-3 * bound, "%s parcel sliding speed at 0.04 s: %.9g, mu (g t + v_z) = %.9g",
            preset, sp, bound);
  }
  run(s, 700, qv);  // t = 1.5 s
  double belt[2] = {0.5 * cos(30 * deg), 0.5 * sin(30 * deg)};
  CHECK(fabs(qv[parcel] - belt[0]) <= tol_ride && fabs(qv[parcel + 1] - belt[1]) <= tol_ride,
        "%s parcel rides the belt: (%.9g, %.9g) want (%.9g, %.9g)", preset, qv[parcel], qv[parcel + 1], belt[0],
        belt[1]);
  // the crate climbs at 0.3 m/s along the ramp, less the regularized friction's creep:
  // stiction's impulse gamma_t = (vhat_t - vc_t)/Rt, Rt = sigma w, holds m g sin th h over its
  // four contacts, each of Delassus weight w ~ 4/m (a corner of a cube: 1/m + 3/m from the
  // rotation), so the crate slips at sigma w m g sin th h / 4 ~ sigma g sin th h = 4.1e-6 m/s
  double up[3] = {0.3 * cos(12 * deg), 0, 0.3 * sin(12 * deg)};
  double cv = sqrt(qv[crate] * qv[crate] + qv[crate + 1] * qv[crate + 1] + qv[crate + 2] * qv[crate + 2]);
  double creep = 1e-3 * g * sin(12 * deg) * 0.002;
  CHECK(0.3 - cv >= creep / 3 && 0.3 - cv <= 3 * creep, "%s crate climbs at %.9g: creep %.3g, ~%.3g expected", preset,
        cv, 0.3 - cv, creep);
  CHECK(fabs(qv[crate] * up[2] - qv[crate + 2] * up[0]) <= 1e-6 && fabs(qv[crate + 1]) <= 1e-6,
        "%s crate moves along the ramp (%g %g %g)", preset, qv[crate], qv[crate + 1], qv[crate + 2]);
  // the rider goes round with the table; the puck spins with the spinner; the tank drives
  CHECK(fabs(qv[pin] - 1.5) <= tol_ride * 3, "%s turntable rider: %.9g rad/s (table 1.5)", preset, qv[pin]);
  CHECK(fabs(qv[puck + 5] - 3) <= tol_ride * 6, "%s puck spin: %.9g rad/s (spinner 3)", preset, qv[puck + 5]);
  double head[2] = {0.4 * cos(-40 * deg), 0.4 * sin(-40 * deg)};
  CHECK(fabs(qv[tank] - head[0]) <= tol_ride && fabs(qv[tank + 1] - head[1]) <= tol_ride,
        "%s tank drives: (%.9g, %.9g) want (%.9g, %.9g)", preset, qv[tank], qv[tank + 1], head[0], head[1]);
  printf("  %s at 1.5 s: parcel (%.6f, %.6f) belt (%.6f, %.6f); crate %.8f of 0.3; rider %.6f; puck %.6f; "
         "tank (%.6f, %.6f)\n", preset, qv[parcel], qv[parcel + 1], belt[0], belt[1], cv, qv[pin], qv[puck + 5],
         qv[tank], qv[tank + 1]);
  sap_free(s);
  mj_deleteModel(mj);
}

/* the scene text with every surfacevel="..." replaced by `with` ("" drops the attribute) */
static char* scene_with(const char* with) {
  FILE* f = fopen(SCENE, "rb");
  if (!f) return NULL;
  static char in[16384];
  size_t n = fread(in, 1, sizeof(in) - 1, f);
  fclose(f);
  in[n] = 0;
  char* out = calloc(2 * sizeof(in), 1);
  const char *p = in, *q;
  while ((q = strstr(p, "surfacevel=\"")) != NULL) {
    strncat(out, p, (size_t)(q - p));
    strcat(out, with);
    p = strchr(q + 12, '"') + 1;
  }
  strcat(out, p);
  return out;
}

static void test_zero_is_absent(void) {
  char* zero = scene_with("surfacevel=\"0 0 0 0 0 0\"");
  char* none = scene_with("");
  sapModel *mz = fx_model(zero), *mn = fx_model(none);
  if (mz && mn) {
    CHECK(mz->nsurfacevel == 0, "all-zero surface velocities count none (%d)", mz->nsurfacevel);
    sapSim *a = fx_simModel(mz, 2, "preset=approx32"), *b = fx_simModel(mn, 2, "preset=approx32");
    if (a && b) {
      sap_step(a, 200);
      sap_step(b, 200);
      int nq = sap_model(a)->nq;
      double qa[2 * 64], qb[2 * 64];
      sap_get(a, SAP_FIELD_QPOS, NULL, 2, qa);
      sap_get(b, SAP_FIELD_QPOS, NULL, 2, qb);
      CHECK(memcmp(qa, qb, sizeof(double) * 2 * nq) == 0, "zero surface velocities change nothing");
      // and the real scene differs (the test can fail)
      sapSim* c = fx_sim(SCENE, 2, "preset=approx32");
      if (c) {
        sap_step(c, 200);
        double qc[2 * 64];
        sap_get(c, SAP_FIELD_QPOS, NULL, 2, qc);
        CHECK(memcmp(qa, qc, sizeof(double) * 2 * nq) != 0, "the surface velocities move things");
        sap_free(c);
      }
    }
    sap_free(a);
    sap_free(b);
  }
  sap_freeModel(mz);
  sap_freeModel(mn);
  free(zero);
  free(none);
}

static void test_refusals(void) {
  fx_refused("<mujoco><worldbody><geom name='belt' type='box' size='1 1 0.1' surfacevel='nan 0 0 0 0 0'/>"
             "<body pos='0 0 0.3'><freejoint/><geom size='0.1'/></body></worldbody></mujoco>",
             SAP_ERR_SCENE, "geom 'belt' has a non-finite surfacevel[0]");
}

int main(void) {
  RUN(test_target_vs_mujoco);
  test_analytic_motions("approx64", 1e-6);
  test_analytic_motions("approx32", 1e-4);
  test_analytic_motions("drake", 1e-6);
  RUN(test_zero_is_absent);
  RUN(test_refusals);
  return check_summary("test_surface_velocity");
}
