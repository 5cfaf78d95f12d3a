/* Fluid forces (MuJoCo's inertia-box and ellipsoid models, kernels/dynamics_t.h sapw_fluid and
 * sapw_fluidEllipsoid) against analytic solutions of the stepped equations. Inertia box: a sphere falling through a viscous fluid reaches the
 * Stokes terminal velocity m g / (3 pi D mu) and drifts with the wind; through a dense
 * inviscid fluid it reaches sqrt(m g / (rho s^2 / 2)); a spinning sphere's angular velocity
 * decays by exactly (1 - h pi D^3 mu / I) per step (semi-implicit Euler with the force at
 * v_n). Ellipsoid model on a sphere: Stokes' law itself, m g / (6 pi r mu) (the equivalent
 * sphere's diameter is 2 r); blunt quadratic drag, m g = rho C_b pi r^2 v^2 (C_b = 0.5, the
 * default); and the first step of a spinning sphere, whose sideways push is Magnus lift
 * rho C_M V u w less the added-mass force rho (V/2) u w (a sphere's potential-flow added mass
 * is half its displaced volume). Sizes and densities vary over decades. MuJoCo 4's qfrc_passive
 * at random states of scenes/fluid.xml and scenes/fluid_ellipsoid.xml is in
 * tests/test_dynamics.c. Also: refusals by name. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fixture.h"

#define PI 3.14159265358979323846

/* one free sphere of radius r and solid density rs in a fluid (rho, mu, wind wx) */
static sapSim* sphere_sim(double r, double rs, double rho, double mu, double wx, double h) {
  char xml[1024];
  snprintf(xml, sizeof(xml),
           "<mujoco><option timestep='%.17g' density='%.17g' viscosity='%.17g' wind='%.17g 0 0'/>"
           "<worldbody><body pos='0 0 100'><freejoint/><geom type='sphere' size='%.17g' density='%.17g'/>"
           "</body></worldbody></mujoco>", h, rho, mu, wx, r, rs);
  return fx_sim(xml, 1, "preset=approx64 contacts=0");
}

/* sphere of radius r: inertia box side s = sqrt(2.4) r, Stokes diameter D = s */
static void test_terminal_velocity(void) {
  struct { double r, rs, mu, wx; } cases[] = {{0.05, 1000, 2, 0.7}, {0.005, 7800, 0.05, -0.2}, {0.4, 300, 20, 3}};
  for (int c = 0; c < 3; c++) {
    double r = cases[c].r, rs = cases[c].rs, mu = cases[c].mu, h = 0.002;
    double mass = rs * 4.0 / 3.0 * PI * r * r * r, D = sqrt(2.4) * r, k = 3 * PI * D * mu;
    double vt = mass * 9.81 / k, tau = mass / k;
    sapSim* s = sphere_sim(r, rs, 0, mu, cases[c].wx, h);
    if (!s) continue;
    int n = (int)ceil(25 * tau / h);
    CHECK(sap_step(s, n) == SAP_OK, "step: %s", sap_lastError());
    double v[6];
    sap_get(s, SAP_FIELD_QVEL, NULL, 1, v);
    fprintf(stderr, "  Stokes r %g m, mu %g: vz %.9g (analytic %.9g), vx %.9g (wind %g) after %d steps\n", r, mu,
            v[2], -vt, v[0], cases[c].wx, n);
    CHECK(fabs(v[2] + vt) <= 1e-6 * vt, "r %g: terminal vz %.12g, analytic %.12g", r, v[2], -vt);
    CHECK(fabs(v[0] - cases[c].wx) <= 1e-6 * fabs(cases[c].wx), "r %g: drift vx %.12g, wind %g", r, v[0], cases[c].wx);
    sap_free(s);
  }
  /* quadratic drag: m g = rho s^2 / 2 v^2 */
  struct { double r, rs, rho; } q[] = {{0.05, 1000, 100}, {0.02, 8000, 1.2}};
  for (int c = 0; c < 2; c++) {
    double r = q[c].r, rs = q[c].rs, rho = q[c].rho, h = 0.002;
    double mass = rs * 4.0 / 3.0 * PI * r * r * r, s2 = 2.4 * r * r;
    double vt = sqrt(mass * 9.81 / (0.5 * rho * s2));
    sapSim* s = sphere_sim(r, rs, rho, 0, 0, h);
    if (!s) continue;
    int n = (int)ceil(30 * vt / 9.81 / h);
    CHECK(sap_step(s, n) == SAP_OK, "step: %s", sap_lastError());
    double v[6];
    sap_get(s, SAP_FIELD_QVEL, NULL, 1, v);
    fprintf(stderr, "  quadratic r %g m, rho %g: vz %.9g (analytic %.9g) after %d steps\n", r, rho, v[2], -vt, n);
    CHECK(fabs(v[2] + vt) <= 1e-6 * vt, "r %g rho %g: terminal vz %.12g, analytic %.12g", r, rho, v[2], -vt);
    sap_free(s);
  }
}

/* spin about a body axis: w_{n+1} = w_n (1 - h pi D^3 mu / I), I = 2/5 m r^2 (no gyroscopic
 * term for a sphere; zero gravity would change nothing for the spin) */
static void test_spin_decay(void) {
  double r = 0.03, rs = 2000, mu = 0.3, h = 0.001;
  double mass = rs * 4.0 / 3.0 * PI * r * r * r, D = sqrt(2.4) * r, I = 0.4 * mass * r * r;
  double f = 1 - h * PI * D * D * D * mu / I;
  sapSim* s = sphere_sim(r, rs, 0, mu, 0, h);
  if (!s) return;
  double v[6] = {0, 0, 0, 0.3, -2, 5};
  sap_set(s, SAP_FIELD_QVEL, NULL, 1, v);
  int n = 400;
  CHECK(sap_step(s, n) == SAP_OK, "step: %s", sap_lastError());
  sap_get(s, SAP_FIELD_QVEL, NULL, 1, v);
  double want[3] = {0.3 * pow(f, n), -2 * pow(f, n), 5 * pow(f, n)};
  fprintf(stderr, "  spin: w %.9g %.9g %.9g, analytic %.9g %.9g %.9g\n", v[3], v[4], v[5], want[0], want[1], want[2]);
  for (int k = 0; k < 3; k++)
    CHECK(fabs(v[3 + k] - want[k]) <= 1e-9 * fabs(want[k]) + 1e-12, "w[%d] %.15g, analytic %.15g", k, v[3 + k], want[k]);
  sap_free(s);
}

/* one free sphere on the ellipsoid model (Magnus coefficient cm), gravity g */
static sapSim* ellipsoid_sim(double r, double rs, double rho, double mu, double wx, double cm, double g,
                             double h) {
  char xml[1024];
  snprintf(xml, sizeof(xml),
           "<mujoco><option timestep='%.17g' density='%.17g' viscosity='%.17g' wind='%.17g 0 0' gravity='0 0 %.17g'/>"
           "<worldbody><body pos='0 0 100'><freejoint/><geom type='sphere' size='%.17g' density='%.17g' "
           "fluidshape='ellipsoid' fluidcoef='0.5 0.25 1.5 1.0 %.17g'/></body></worldbody></mujoco>",
           h, rho, mu, wx, -g, r, rs, cm);
  return fx_sim(xml, 1, "preset=approx64 contacts=0");
}

static void test_ellipsoid_sphere(void) {
  /* Stokes: the equivalent sphere of the ellipsoid model is the sphere itself */
  struct { double r, rs, mu, wx; } st[] = {{0.05, 1000, 2, 0.7}, {0.004, 7800, 0.05, -0.2}, {0.3, 300, 20, 3}};
  for (int c = 0; c < 3; c++) {
    double r = st[c].r, rs = st[c].rs, mu = st[c].mu, h = 0.002;
    double mass = rs * 4.0 / 3.0 * PI * r * r * r, k = 6 * PI * r * mu, vt = mass * 9.81 / k;
    sapSim* s = ellipsoid_sim(r, rs, 0, mu, st[c].wx, 1, 9.81, h);
    if (!s) continue;
    int n = (int)ceil(25 * mass / k / h);
    CHECK(sap_step(s, n) == SAP_OK, "step: %s", sap_lastError());
    double v[6];
    sap_get(s, SAP_FIELD_QVEL, NULL, 1, v);
    fprintf(stderr, "  ellipsoid Stokes r %g m, mu %g: vz %.9g (6 pi r mu law %.9g), vx %.9g (wind %g)\n", r, mu,
            v[2], -vt, v[0], st[c].wx);
    CHECK(fabs(v[2] + vt) <= 1e-6 * vt, "r %g: terminal vz %.12g, Stokes %.12g", r, v[2], -vt);
    CHECK(fabs(v[0] - st[c].wx) <= 1e-6 * fabs(st[c].wx), "r %g: drift vx %.12g, wind %g", r, v[0], st[c].wx);
    sap_free(s);
  }
  /* blunt quadratic drag through the projected disc pi r^2 */
  struct { double r, rs, rho; } q[] = {{0.05, 1000, 100}, {0.01, 8000, 1.2}};
  for (int c = 0; c < 2; c++) {
    double r = q[c].r, rs = q[c].rs, rho = q[c].rho, h = 0.002;
    double mass = rs * 4.0 / 3.0 * PI * r * r * r, vt = sqrt(mass * 9.81 / (0.5 * rho * PI * r * r));
    sapSim* s = ellipsoid_sim(r, rs, rho, 0, 0, 1, 9.81, h);
    if (!s) continue;
    int n = (int)ceil(30 * vt / 9.81 / h);
    CHECK(sap_step(s, n) == SAP_OK, "step: %s", sap_lastError());
    double v[6];
    sap_get(s, SAP_FIELD_QVEL, NULL, 1, v);
    fprintf(stderr, "  ellipsoid quadratic r %g m, rho %g: vz %.9g (analytic %.9g)\n", r, rho, v[2], -vt);
    CHECK(fabs(v[2] + vt) <= 1e-6 * vt, "r %g rho %g: terminal vz %.12g, analytic %.12g", r, rho, v[2], -vt);
    sap_free(s);
  }
  /* one step of a sphere moving along x at u, spinning about z at w, no gravity: the y push
   * is rho u w V (C_M - 1/2); the drag along x and the spin's decay do not enter y */
  struct { double r, rs, rho, cm, u, w; } mg[] = {{0.1, 500, 1000, 1, 3, 20}, {0.02, 1200, 1.2, 2.5, -15, 300},
                                                  {0.5, 100, 50, 0.2, 1, -4}};
  for (int c = 0; c < 3; c++) {
    double r = mg[c].r, vol = 4.0 / 3.0 * PI * r * r * r, mass = mg[c].rs * vol, h = 0.001;
    sapSim* s = ellipsoid_sim(r, mg[c].rs, mg[c].rho, 0, 0, mg[c].cm, 0, h);
    if (!s) continue;
    double v[6] = {mg[c].u, 0, 0, 0, 0, mg[c].w};
    sap_set(s, SAP_FIELD_QVEL, NULL, 1, v);
    CHECK(sap_step(s, 1) == SAP_OK, "step: %s", sap_lastError());
    sap_get(s, SAP_FIELD_QVEL, NULL, 1, v);
    double k = h * mg[c].rho * mg[c].u * mg[c].w / mass, want = k * vol * (mg[c].cm - 0.5);
    /* MuJoCo's compiler integrates the added-mass coefficients by Gauss-Kronrod quadrature
     * (user_objects.cc), which puts a sphere's virtual mass at 0.99999941 V/2: the tolerance
     * is 1e-6 of the added-mass term, the rest of the step is exact to 1e-12 */
    double tol = 1e-6 * fabs(k) * vol / 2 + 1e-12 * fabs(want);
    fprintf(stderr, "  Magnus and added mass, r %g m, C_M %g: vy %.12g (analytic %.12g)\n", r, mg[c].cm, v[1], want);
    CHECK(fabs(v[1] - want) <= tol, "r %g C_M %g: vy %.15g, analytic %.15g", r, mg[c].cm, v[1], want);
    sap_free(s);
  }
}

static void test_refusals(void) {
  fx_refused("<mujoco><option density='-1'/><worldbody><body><freejoint/><geom size='.1'/></body>"
                 "</worldbody></mujoco>", SAP_ERR_SCENE, "density -1");
}

int main(void) {
  RUN(test_terminal_velocity);
  RUN(test_spin_decay);
  RUN(test_ellipsoid_sphere);
  RUN(test_refusals);
  return check_summary("test_fluid");
}
