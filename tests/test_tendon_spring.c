/* Fixed-tendon springs and dampers, and joint and tendon limit margins (MuJoCo 4 semantics).
 * Oracles:
 *  - MuJoCo 4.0's qfrc_passive at 400 random states of scenes/tendon_spring.xml (a tendon
 *    spring with a dead band met below, inside and above it, a tendon across two trees, a
 *    damper-only tendon), fp64 to 1e-12 relative;
 *  - MuJoCo 4.0's Euler trajectory of the same scene without limits (smooth dynamics, contacts
 *    off): sapsim's sap_euler integration is the same semi-implicit Euler step with implicit
 *    joint damping and explicit tendon forces;
 *  - analytic: a vertical slide hung on a tendon spring settles at the dead band's end plus
 *    m g / (c^2 k); its free oscillation decays at the tendon damper's rate
 *    exp(-c^2 d t / (2 m)); a body pushed against a limit with a margin rests at the range's
 *    end moved inward by the margin (joint and tendon limits, both ends); a linear
 *    oscillator under the midpoint rule keeps its discrete invariant and phase (springs at
 *    q + h/2 v, kernels/dynamics_t.h sapw_springShift). */
#include <math.h>
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "fixture_mj.h"
#include "sim.h"

#define SCENE "scenes/tendon_spring.xml"

/* nw random states of a scene (qpos in [-range, range], qvel in [-3, 3]) set in a sapsim batch and
 * taken through its kinematics and free motion (qfrc_passive), and the same model in MuJoCo */
typedef struct {
  mjModel* mj;
  mjData* md;
  sapSim* s;
  double *qpos, *qvel;
} States;

static int states_open(States* t, const char* path, const char* opts, double range, int nw) {
  memset(t, 0, sizeof(*t));
  t->mj = fx_mjModel(path);
  if (!t->mj) return 0;
  t->md = mj_makeData(t->mj);
  t->s = fx_sim(path, nw, opts);
  if (!t->s) return 0;
  int nq = t->mj->nq, nv = t->mj->nv;
  t->qpos = malloc(sizeof(double) * nw * nq);
  t->qvel = malloc(sizeof(double) * nw * nv);
  for (int w = 0; w < nw; w++) {
    for (int j = 0; j < nq; j++) t->qpos[w * nq + j] = check_uniform(-range, range);
    for (int j = 0; j < nv; j++) t->qvel[w * nv + j] = check_uniform(-3, 3);
  }
  CHECK_OK(sap_set(t->s, SAP_FIELD_QPOS, NULL, nw, t->qpos));
  CHECK_OK(sap_set(t->s, SAP_FIELD_QVEL, NULL, nw, t->qvel));
  sapc_kinematics(t->s);
  sapc_freeMotion(t->s);
  return 1;
}

/* world w's state forwarded in MuJoCo; sapsim's qfrc_passive against MuJoCo's (1e-12 of the
 * largest); returns that largest passive force */
static double states_checkPassive(States* t, int w, const char* what) {
  int nq = t->mj->nq, nv = t->mj->nv;
  fx_mjForwardAt(t->mj, t->md, t->qpos + w * nq, t->qvel + w * nv, NULL);
  double scale = 1;
  for (int i = 0; i < nv; i++) scale = fmax(scale, fabs(t->md->qfrc_passive[i]));
  check_arrays(what, sap_data(t->s)->qfrc_passive + (long)w * nv, t->md->qfrc_passive, nv, 1e-12 * scale, 1e-12);
  return scale;
}

static void states_close(States* t) {
  free(t->qpos);
  free(t->qvel);
  sap_free(t->s);
  mj_deleteData(t->md);
  mj_deleteModel(t->mj);
}

/* sapsim's qfrc_passive against MuJoCo's at random states; every side of couple3's dead band
 * [0.1, 0.3] is met */
static void test_passive_vs_mujoco(void) {
  enum { NW = 400 };
  States t;
  if (states_open(&t, SCENE, "preset=approx64 contacts=0 device=cpu", 0.8, NW)) {
    int below = 0, inside = 0, above = 0;
    for (int w = 0; w < NW; w++) {
      char what[96];
      snprintf(what, sizeof(what), "world %d qfrc_passive", w);
      states_checkPassive(&t, w, what);
      double L = t.md->ten_length[0];
      below += L < 0.1;
      inside += L >= 0.1 && L <= 0.3;
      above += L > 0.3;
    }
    CHECK(below >= 20 && inside >= 20 && above >= 20, "dead band sides met: %d below, %d inside, %d above",
          below, inside, above);
  }
  states_close(&t);
}

/* the scene without limits and contacts: 1 s from the keyframe against MuJoCo's Euler */
static void test_trajectory_vs_mujoco(void) {
  FILE* f = fopen(SCENE, "r");
  CHECK(f != NULL, "cannot open %s", SCENE);
  if (!f) return;
  static char xml[16384];
  size_t n = fread(xml, 1, sizeof(xml) - 1, f);
  fclose(f);
  xml[n] = 0;
  /* limits off (SAP's near-rigid limits and MuJoCo's soft ones differ by design) */
  const char* opt = "<option timestep=\"0.002\"/>";
  char* at = strstr(xml, opt);
  CHECK(at != NULL, "option line not found");
  if (!at) return;
  static char edited[17000];
  snprintf(edited, sizeof(edited), "%.*s<option timestep=\"0.002\"><flag limit=\"disable\" contact=\"disable\"/>"
           "</option>%s", (int)(at - xml), xml, at + strlen(opt));
  const char* path = fx_tempFile("tendon_free.xml", edited);
  mjModel* mj = fx_mjModel(path);
  if (!mj) return;
  mjData* md = mj_makeData(mj);
  mj_resetDataKeyframe(mj, md, 0);
  sapSim* s = fx_sim(path, 1, "preset=approx64 integration=sap_euler device=cpu");
  if (!s) return;
  CHECK_OK(sap_reset(s, 0, NULL));
  int nq = mj->nq;
  double q[16], worst = 0, travel = 0;
  for (int k = 0; k < 500; k++) {
    mj_step(mj, md);
    CHECK_OK(sap_step(s, 1));
    CHECK_OK(sap_get(s, SAP_FIELD_QPOS, NULL, 1, q));
    for (int i = 0; i < nq; i++) {
      worst = fmax(worst, fabs(q[i] - md->qpos[i]));
      travel = fmax(travel, fabs(md->qpos[i] - mj->key_qpos[i]));
    }
  }
  printf("  tendon_spring without limits, 1 s: max |q - q_MuJoCo| = %.3g (largest travel %.3g)\n", worst, travel);
  CHECK(travel > 0.2, "the scene barely moves (%g): the test would not see the tendon forces", travel);
  CHECK(worst < 1e-9, "trajectory differs from MuJoCo 4's Euler by %g", worst);
  sap_free(s);
  mj_deleteData(md);
  mj_deleteModel(mj);
}

/* MuJoCo 4's polynomial springs and dampers (scenes/poly_spring.xml: hinges, a slide, a fixed
 * tendon with a dead band and a spatial tendon, each with higher-order terms, a motor's damping,
 * a free body and a ball joint with springs): qfrc_passive and e_potential against MuJoCo 4 at
 * 400 random states (fp64, 1e-12), then the Euler trajectory from the keyframe for 1 s of the
 * hinge and slide trees (sap_euler, contacts off: the same semi-implicit step; the free body's
 * and the ball's quaternions are integrated by sap_euler's first-order map, not MuJoCo's
 * exponential one, so those trees are compared by their forces above) */
static void test_poly_springs(void) {
  enum { NW = 400 };
  const char* path = "scenes/poly_spring.xml";
  States t;
  double worst_e = 0, span = 0;
  if (states_open(&t, path, "preset=approx64 device=cpu", 0.9, NW)) {
    for (int w = 0; w < NW; w++) {
      char what[96];
      snprintf(what, sizeof(what), "world %d qfrc_passive", w);
      span = fmax(span, states_checkPassive(&t, w, what));
      /* the potential (the sensor of the set state, gravity included) */
      const double* sd = sap_data(t.s)->sensordata;
      worst_e = fmax(worst_e, fabs(sd[w] - t.md->sensordata[0]) / fmax(1, fabs(t.md->sensordata[0])));
    }
    CHECK(worst_e <= 1e-12, "e_potential differs from MuJoCo 4's by %g (relative)", worst_e);
    CHECK(span > 50, "the springs are barely loaded (largest passive force %g)", span);
  }
  states_close(&t);
  /* the Euler trajectory */
  mjModel* mj = fx_mjModel(path);
  if (!mj) return;
  mjData* md = mj_makeData(mj);
  int nq = mj->nq;
  mj_resetDataKeyframe(mj, md, 0);
  sapSim* s = fx_sim(path, 1, "preset=approx64 integration=sap_euler device=cpu");
  if (!s) return;
  CHECK_OK(sap_reset(s, 0, NULL));
  double q[32], worst = 0, travel = 0;
  int nhs = mj->jnt_qposadr[mj_name2id(mj, mjOBJ_JOINT, "float")];  /* the hinge and slide trees */
  CHECK(nq <= 32 && nhs == 4, "scene layout: nq %d, hinge/slide coordinates %d", nq, nhs);
  for (int k = 0; k < 500; k++) {
    mj_step(mj, md);
    CHECK_OK(sap_step(s, 1));
    CHECK_OK(sap_get(s, SAP_FIELD_QPOS, NULL, 1, q));
    for (int i = 0; i < nhs; i++) {
      worst = fmax(worst, fabs(q[i] - md->qpos[i]));
      travel = fmax(travel, fabs(md->qpos[i] - mj->key_qpos[i]));
    }
  }
  printf("  poly_spring, 1 s: max |q - q_MuJoCo| = %.3g (largest travel %.3g); e_potential at 400 states "
         "within %.2g\n", worst, travel, worst_e);
  CHECK(travel > 0.5, "the scene barely moves (%g)", travel);
  CHECK(worst < 1e-9, "trajectory differs from MuJoCo 4's Euler by %g", worst);
  sap_free(s);
  mj_deleteData(md);
  mj_deleteModel(mj);
}

/* a vertical slide of mass m on a tendon L = c q with spring k (dead band [lo, hi]) and damper
 * d: rests at q = (lo - m g / (c k)) / c (c > 0); oscillates about it with omega^2 = c^2 k / m and
 * decays as exp(-c^2 d t / (2 m)) */
static void test_spring_analytic(void) {
  static const struct { double m, c, k, d, lo, hi; } cases[] = {
      {1.0, 1.0, 400, 2.0, -0.1, 0.05}, {0.02, 3.0, 5, 0.004, -1, -0.5}, {4, 0.25, 1e5, 2000, 0, 0}};
  for (int i = 0; i < 3; i++) {
    double m = cases[i].m, c = cases[i].c, k = cases[i].k, dmp = cases[i].d, h = 1e-4;
    char xml[1200];
    snprintf(xml, sizeof(xml),
             "<mujoco><option timestep='%g'/><worldbody><body><joint name='z' type='slide' axis='0 0 1'/>"
             "<geom type='sphere' size='0.05' mass='%.17g' contype='0' conaffinity='0'/></body></worldbody>"
             "<tendon><fixed name='t' stiffness='%.17g' damping='%.17g' springlength='%.17g %.17g'>"
             "<joint joint='z' coef='%.17g'/></fixed></tendon></mujoco>",
             h, m, k, dmp, cases[i].lo, cases[i].hi, c);
    sapSim* s = fx_sim(xml, 1, "preset=approx64 integration=sap_euler device=cpu");
    if (!s) continue;
    /* gravity -z: the spring holds the slide below the dead band, at L = lo - m g / (c k) */
    double g = 9.81, qeq = (cases[i].lo - m * g / (c * k)) / c;
    double omega = c * sqrt(k / m), zeta_rate = c * c * dmp / (2 * m);
    /* start above the rest by A0 = 0.3 m g / (c^2 k), at rest: the tendon stays below its dead
     * band (a linear oscillator); the displacement's extrema are at multiples of pi / omega_d,
     * x(T_d) = A0 exp(-rate T_d) */
    double A0 = 0.3 * m * g / (c * c * k), q0 = qeq + A0, v0 = 0;
    CHECK_OK(sap_set(s, SAP_FIELD_QPOS, NULL, 1, &q0));
    CHECK_OK(sap_set(s, SAP_FIELD_QVEL, NULL, 1, &v0));
    double Td = 2 * 3.14159265358979323846 / sqrt(omega * omega - zeta_rate * zeta_rate);
    int steps = (int)(1.25 * Td / h), peakstep = 0;
    double q = q0, peak = 0;
    for (int n = 1; n <= steps; n++) {
      CHECK_OK(sap_step(s, 1));
      CHECK_OK(sap_get(s, SAP_FIELD_QPOS, NULL, 1, &q));
      if (n > (int)(0.75 * Td / h) && q - qeq > peak) { peak = q - qeq; peakstep = n; }
    }
    double expect = A0 * exp(-zeta_rate * Td);
    printf("  tendon spring m %g c %g k %g d %g: x(T_d) %.6g at %.4f s (T_d %.4f s), analytic %.6g\n", m, c,
           k, dmp, peak, peakstep * h, Td, expect);
    /* semi-implicit Euler: amplitude O((omega h)^2 + rate h) relative, the sampled extremum
     * O((omega h)^2) */
    CHECK_CLOSE(peak, expect, 0, 4 * (omega * h * omega * h + zeta_rate * h) + 1e-6, "case %d: decay", i);
    CHECK_CLOSE(peakstep * h, Td, 1.5 * h, 0, "case %d: period", i);
    /* and it settles at the analytic rest */
    for (int n = 0; n < (int)(40 * m / (c * c * dmp) / h); n += 1000) CHECK_OK(sap_step(s, 1000));
    CHECK_OK(sap_get(s, SAP_FIELD_QPOS, NULL, 1, &q));
    CHECK_CLOSE(q, qeq, 1e-9 + 1e-6 * fabs(qeq), 0, "case %d: rest at (lo - m g / (c k)) / c", i);
    sap_free(s);
  }
}

/* limits with margins hold the body at the range's end moved inward by the margin; a limit
 * without margin at the end itself (the control that shows the test sees the margin) */
static void test_margin_rest(void) {
  static const struct { const char* what; double margin, lo, hi, c; int tendon, pull_up; } cases[] = {
      {"slide joint, lower end", 0.02, -0.3, 0.4, 1, 0, 0},
      {"slide joint, upper end", 0.005, -0.3, 0.4, 1, 0, 1},
      {"slide joint, no margin", 0, -0.3, 0.4, 1, 0, 0},
      {"tendon 2q, upper end", 0.05, -0.5, 0.5, 2, 1, 1},
      {"tendon -0.5q, lower end of q", 0.1, -0.6, 0.9, -0.5, 1, 1},
      {"tendon 3q, large margin", 0.3, -1.0, 2.0, 3, 1, 0}};
  for (int i = 0; i < 6; i++) {
    char xml[1400], lim[300];
    double mg = cases[i].margin;
    if (cases[i].tendon)
      snprintf(lim, sizeof(lim), "<tendon><fixed name='t' limited='true' range='%g %g' margin='%g'>"
               "<joint joint='z' coef='%g'/></fixed></tendon>", cases[i].lo, cases[i].hi, mg, cases[i].c);
    else lim[0] = 0;
    char jl[200] = "";
    if (!cases[i].tendon) snprintf(jl, sizeof(jl), "limited='true' range='%g %g' margin='%g'", cases[i].lo,
                                   cases[i].hi, mg);
    /* gravity along -z; pull_up: gravity +z */
    snprintf(xml, sizeof(xml),
             "<mujoco><option timestep='0.002' gravity='0 0 %s'/><worldbody><body>"
             "<joint name='z' type='slide' axis='0 0 1' damping='5' %s/>"
             "<geom type='sphere' size='0.05' mass='0.7' contype='0' conaffinity='0'/></body></worldbody>%s</mujoco>",
             cases[i].pull_up ? "9.81" : "-9.81", jl, lim);
    sapSim* s = fx_sim(xml, 1, "preset=approx64 device=cpu");
    if (!s) continue;
    CHECK_OK(sap_step(s, 1500));
    double q;
    CHECK_OK(sap_get(s, SAP_FIELD_QPOS, NULL, 1, &q));
    /* the end the body is pushed against, in q: L = c q reaches lo or hi */
    double c = cases[i].c, Lend;
    int upper_L = cases[i].pull_up ? c > 0 : c < 0;  // q grows when pulled up
    Lend = upper_L ? cases[i].hi - mg : cases[i].lo + mg;
    double expect = Lend / c;
    printf("  %s: rest %.9f, expected %.9f\n", cases[i].what, q, expect);
    /* SAP's near-rigid limit yields under the load by h^2 beta^2/(4 pi^2) w F ~ 1e-7 here */
    CHECK_CLOSE(q, expect, 1e-6, 0, "%s: rest at the margin", cases[i].what);
    sap_free(s);
  }
}

/* a linear oscillator at w h = 1 under the midpoint rule: with the spring at q + h/2 v
 * (sapw_springShift) the step is q' = (1 - a/2) q + h (1 - a/4) v, v' = -h w^2 q + (1 - a/2) v
 * (a = (w h)^2), determinant 1, which keeps E = w^2 q^2 + (1 - a/4) v^2 exactly; the discrete
 * phase per step is acos(1 - a/2). With the spring at q the determinant is 1 + a/2 and E grows
 * by that factor every step. A joint spring and a tendon spring (k c^2 = the joint's k). */
static void test_midpoint_oscillator(void) {
  const char* kind[3] = {"joint", "tendon", "ball joint"};
  for (int tendon = 0; tendon < 3; tendon++) {
    double m = 0.3, h = 0.01, w = 1 / h, k = m * w * w, c = 1.7, A0 = 0.05;
    double I = 0.4 * m * 0.05 * 0.05;  /* the sphere's inertia about its centre */
    char xml[900];
    if (tendon == 2)  /* a ball joint turned about z: the same oscillator in the angle (inertia I) */
      snprintf(xml, sizeof(xml),
               "<mujoco><option timestep='%g' gravity='0 0 0'/><worldbody><body><joint name='x' type='ball' "
               "stiffness='%.17g'/><geom type='sphere' size='0.05' mass='%g'/></body></worldbody></mujoco>",
               h, I * w * w, m);
    else if (tendon)
      snprintf(xml, sizeof(xml),
               "<mujoco><option timestep='%g' gravity='0 0 0'/><worldbody><body><joint name='x' type='slide'/>"
               "<geom type='sphere' size='0.05' mass='%g'/></body></worldbody><tendon><fixed stiffness='%.17g' "
               "springlength='0'><joint joint='x' coef='%g'/></fixed></tendon></mujoco>", h, m, k / (c * c), c);
    else
      snprintf(xml, sizeof(xml),
               "<mujoco><option timestep='%g' gravity='0 0 0'/><worldbody><body><joint name='x' type='slide' "
               "stiffness='%.17g'/><geom type='sphere' size='0.05' mass='%g'/></body></worldbody></mujoco>",
               h, k, m);
    sapSim* s = fx_sim(xml, 1, "preset=approx64 integration=midpoint device=cpu");
    if (!s) continue;
    double quat[4] = {cos(A0 / 2), 0, 0, sin(A0 / 2)}, qv[3];
    CHECK_OK(sap_set(s, SAP_FIELD_QPOS, NULL, 1, tendon == 2 ? quat : &A0));
    double a = (w * h) * (w * h), E0 = w * w * A0 * A0, worst = 0, q = A0, v = 0, qprev = A0;
    int crossings = 0, N = 5000;
    for (int n = 1; n <= N; n++) {
      CHECK_OK(sap_step(s, 1));
      if (tendon == 2) {  /* the angle about z and its rate */
        CHECK_OK(sap_get(s, SAP_FIELD_QPOS, NULL, 1, quat));
        CHECK_OK(sap_get(s, SAP_FIELD_QVEL, NULL, 1, qv));
        q = 2 * atan2(quat[3], quat[0]);
        v = qv[2];
      } else {
        CHECK_OK(sap_get(s, SAP_FIELD_QPOS, NULL, 1, &q));
        CHECK_OK(sap_get(s, SAP_FIELD_QVEL, NULL, 1, &v));
      }
      worst = fmax(worst, fabs(w * w * q * q + (1 - a / 4) * v * v - E0) / E0);
      crossings += (q < 0) != (qprev < 0);
      qprev = q;
    }
    double theta = acos(1 - a / 2), expect = N * theta / 3.14159265358979323846;
    printf("  midpoint oscillator (%s spring), w h = 1: invariant kept to %.3g, %d zero crossings in %d steps "
           "(discrete phase: %.1f)\n", kind[tendon], worst, crossings, N, expect);
    CHECK(worst < 1e-9, "%s spring: invariant drifts by %g", kind[tendon], worst);
    CHECK(fabs(crossings - expect) <= 1, "%s spring: %d crossings, expected %.1f", kind[tendon], crossings, expect);
    sap_free(s);
  }
}

int main(void) {
  RUN(test_passive_vs_mujoco);
  RUN(test_trajectory_vs_mujoco);
  RUN(test_poly_springs);
  RUN(test_spring_analytic);
  RUN(test_margin_rest);
  RUN(test_midpoint_oscillator);
  return check_summary("test_tendon_spring");
}
