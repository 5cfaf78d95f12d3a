/* Adhesion actuators (MuJoCo's body transmission, kernels/dynamics_t.h sapw_adhesion).
 * Oracles: MuJoCo 4.0's qfrc_actuator (mj_forward) at random states near contact of
 * scenes/adhesion.xml -- a box on the floor with contacts in the gap, a sphere stuck to the
 * moving box, a capsule tip on a wall, a mesh puck under an affine <general> -- to 1e-10
 * relative in fp64; and the stepped equations of a cube held under a ceiling: it stays while
 * the pull exceeds its weight, and below that falls at g - f/m until its contacts leave the
 * gap, then at g (the analytic fall). Also: the loader's refusals by name. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fixture.h"
#include "fixture_mj.h"
#include "mujoco/mujoco.h"
#include "sim.h"

#define NSTATE 200

/* a state near the keyframe-free rest of the scene: small offsets and tilts of the free
 * bodies, hinge angles within +-0.25 rad, velocities within +-0.5, controls within range */
static void near_state(const mjModel* mj, double* qpos, double* qvel, double* ctrl) {
  memcpy(qpos, mj->qpos0, sizeof(double) * mj->nq);
  for (int j = 0; j < mj->njnt; j++) {
    int a = mj->jnt_qposadr[j];
    if (mj->jnt_type[j] == mjJNT_FREE) {
      for (int k = 0; k < 3; k++) qpos[a + k] += check_uniform(-0.004, 0.004);
      double dq[4] = {1, check_uniform(-0.02, 0.02), check_uniform(-0.02, 0.02), check_uniform(-0.02, 0.02)}, q[4];
      mju_mulQuat(q, qpos + a + 3, dq);
      mju_normalize4(q);
      memcpy(qpos + a + 3, q, sizeof(q));
    } else {
      qpos[a] += check_uniform(-0.25, 0.25);
    }
  }
  for (int i = 0; i < mj->nv; i++) qvel[i] = check_uniform(-0.5, 0.5);
  for (int u = 0; u < mj->nu; u++) ctrl[u] = check_uniform(mj->actuator_ctrlrange[2 * u], mj->actuator_ctrlrange[2 * u + 1]);
}

static void test_qfrc_against_mujoco(void) {
  const char* path = "scenes/adhesion.xml";
  mjModel* mj = fx_mjModel(path);
  if (!mj) return;
  mjData* md = mj_makeData(mj);
  sapSim* s = fx_sim(path, NSTATE, "preset=approx64");
  if (!s) return;
  int nq = mj->nq, nv = mj->nv, nu = mj->nu;
  double *qpos = malloc(sizeof(double) * NSTATE * nq), *qvel = malloc(sizeof(double) * NSTATE * nv);
  double* ctrl = malloc(sizeof(double) * NSTATE * nu);
  for (int w = 0; w < NSTATE; w++) near_state(mj, qpos + w * nq, qvel + w * nv, ctrl + w * nu);
  sap_set(s, SAP_FIELD_QPOS, NULL, NSTATE, qpos);
  sap_set(s, SAP_FIELD_QVEL, NULL, NSTATE, qvel);
  sap_set(s, SAP_FIELD_CTRL, NULL, NSTATE, ctrl);
  /* the step's stages up to the free motion, which computes qfrc_actuator */
  sapc_kinematics(s);
  sapc_collision(s);
  sapc_freeMotion(s);
  const sapData* d = sap_data(s);
  int touching[8] = {0}, worst_w = -1;
  double worst = 0;
  for (int w = 0; w < NSTATE; w++) {
    fx_mjForwardAt(mj, md, qpos + w * nq, qvel + w * nv, ctrl + w * nu);
    for (int u = 0; u < nu && u < 8; u++) {
      if (mj->actuator_trntype[u] != mjTRN_BODY) continue;
      int b = mj->actuator_trnid[2 * u], n = 0;
      for (int c = 0; c < md->ncon; c++)
        n += mj->geom_bodyid[md->contact[c].geom[0]] == b || mj->geom_bodyid[md->contact[c].geom[1]] == b;
      touching[u] += n > 0;
    }
    double scale = 1;
    for (int i = 0; i < nv; i++) scale = fmax(scale, fabs(md->qfrc_actuator[i]));
    for (int i = 0; i < nv; i++) {
      double e = fabs(d->qfrc_actuator[(long)w * nv + i] - md->qfrc_actuator[i]) / scale;
      if (e > worst) worst = e, worst_w = w;
      CHECK(e <= 1e-10, "world %d qfrc_actuator[%d]: %.15g, MuJoCo 4 %.15g", w, i,
            d->qfrc_actuator[(long)w * nv + i], md->qfrc_actuator[i]);
    }
  }
  fprintf(stderr, "  %d states: worst qfrc_actuator difference %.2e of the scale (world %d); states with "
          "contacts per adhesion actuator: %d %d %d %d\n", NSTATE, worst, worst_w, touching[0], touching[1],
          touching[2], touching[3]);
  for (int u = 0; u < 4; u++)
    CHECK(touching[u] >= NSTATE / 2, "actuator %d touches in %d of %d states: the test would not see it", u,
          touching[u], NSTATE);
  free(qpos);
  free(qvel);
  free(ctrl);
  sap_free(s);
  mj_deleteData(md);
  mj_deleteModel(mj);
}

/* a cube of side 2a under a ceiling (a plane facing down at z = 1), pulled up by gain*ctrl,
 * starting at rest with its top on the margin-inflated surface (phi = 0); midpoint rule */
static sapSim* ceiling_sim(double a, double rho, double gain, double margin, double gap, double h) {
  char xml[1200];
  snprintf(xml, sizeof(xml),
           "<mujoco><option timestep='%.17g'/><worldbody>"
           "<geom name='ceiling' type='plane' size='2 2 0.1' pos='0 0 1' euler='180 0 0' margin='%.17g' gap='%.17g'/>"
           "<body name='cube' pos='0 0 %.17g'><freejoint/><geom type='box' size='%.17g %.17g %.17g' density='%.17g'/>"
           "</body></worldbody><actuator><adhesion body='cube' ctrlrange='0 1' gain='%.17g'/></actuator></mujoco>",
           h, margin, gap, 1 - margin - a, a, a, a, rho, gain);
  return fx_sim(xml, 1, "preset=approx64 integration=midpoint");
}

static void test_ceiling(void) {
  /* compliant: the held cube rests pressed in by its net pull over the four corners' stiffness;
   * the 1 cm cube is light enough for SAP's near-rigid regime, which only bounds the press */
  struct { double a, rho, margin, gap; int compliant; } cases[] = {
      {0.05, 500, 0, 0.01, 1}, {0.005, 8000, 0.0005, 0.002, 0}, {0.4, 50, 0.01, 0.05, 1}};
  for (int c = 0; c < 3; c++) {
    double a = cases[c].a, mass = cases[c].rho * 8 * a * a * a, g = 9.81, h = 0.001, surface = 1 - cases[c].margin;
    /* held: a pull of twice the weight */
    sapSim* s = ceiling_sim(a, cases[c].rho, 2 * mass * g, cases[c].margin, cases[c].gap, h);
    if (!s) continue;
    double one = 1, q[7], v[6];
    sap_set(s, SAP_FIELD_CTRL, NULL, 1, &one);
    CHECK(sap_step(s, 500) == SAP_OK, "step: %s", sap_lastError());
    sap_get(s, SAP_FIELD_QPOS, NULL, 1, q);
    sap_get(s, SAP_FIELD_QVEL, NULL, 1, v);
    const sapData* d = sap_data(s);
    double press = q[2] + a - surface, k = d->con_k[0], want = mass * g / (4 * k);
    fprintf(stderr, "  a %g m: held at twice its weight, pressed %.4g m into the surface (m g / 4k = %.4g), "
            "%d contacts, vz %.2g\n", a, press, want, d->ncon[0], v[2]);
    CHECK(d->ncon[0] == 4, "a %g: %d contacts under the ceiling, want the top face's 4", a, d->ncon[0]);
    CHECK(press >= 0 && press <= 0.05 * cases[c].gap, "a %g: held cube pressed %.6g m, gap %g", a, press,
          cases[c].gap);
    if (cases[c].compliant)
      CHECK(fabs(press - want) <= 0.01 * want, "a %g: pressed %.9g m, m g / 4k = %.9g", a, press, want);
    sap_free(s);
    /* let go: the pull is half the weight, so it falls at g/2 while its contacts count (a step
     * whose start has phi < gap: dist < margin + gap, MuJoCo's list), then at g; the midpoint
     * rule moves it by h (v_k + v_{k+1}) / 2 per step */
    double f = 0.5 * mass * g;
    s = ceiling_sim(a, cases[c].rho, f, cases[c].margin, cases[c].gap, h);
    if (!s) continue;
    sap_set(s, SAP_FIELD_CTRL, NULL, 1, &one);
    int n = 300, inband = 0;
    double drop = 0, vz = 0;
    for (int k = 0; k < n; k++) {
      double acc = drop < cases[c].gap ? g - f / mass : g, v1 = vz + h * acc;
      inband += drop < cases[c].gap;
      drop += h * (vz + v1) / 2;
      vz = v1;
    }
    CHECK(sap_step(s, n) == SAP_OK, "step: %s", sap_lastError());
    sap_get(s, SAP_FIELD_QPOS, NULL, 1, q);
    double want_z = 1 - cases[c].margin - a - drop;
    fprintf(stderr, "  a %g m: let go at half its weight, z %.9f after %d steps (analytic %.9f, %d steps in the band)\n",
            a, q[2], n, want_z, inband);
    CHECK(fabs(q[2] - want_z) <= 1e-9 + 1e-9 * drop, "a %g: z %.12f, analytic %.12f", a, q[2], want_z);
    sap_free(s);
  }
}

static void test_refusals(void) {
  fx_refused("<mujoco><worldbody><body name='b'><freejoint/><geom size='.1'/></body></worldbody>"
             "<actuator><general name='grip' body='b' gainprm='1' biastype='affine' biasprm='0 -1 0'/></actuator></mujoco>",
             SAP_ERR_UNSUPPORTED, "'grip' is a position or velocity servo (or a muscle");
  fx_refused("<mujoco><worldbody><body name='b'><freejoint/><geom size='.1'/></body></worldbody>"
             "<actuator><adhesion name='grip' body='b' ctrlrange='0 1' gain='1'/></actuator>"
             "<sensor><actuatorvel name='v' actuator='grip'/></sensor></mujoco>",
             SAP_ERR_UNSUPPORTED, "body (adhesion) transmission's length or velocity");
}

int main(void) {
  RUN(test_qfrc_against_mujoco);
  RUN(test_ceiling);
  RUN(test_refusals);
  return check_summary("test_adhesion");
}
