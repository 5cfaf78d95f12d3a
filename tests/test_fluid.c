/* Fluid forces (MuJoCo's inertia-box model, kernels/dynamics_t.h sapw_fluid) against analytic
 * solutions of the stepped equations: a sphere falling through a viscous fluid reaches the
 * Stokes terminal velocity m g / (3 pi D mu) and drifts with the wind; through a dense
 * inviscid fluid it reaches sqrt(m g / (rho s^2 / 2)); a spinning sphere's angular velocity
 * decays by exactly (1 - h pi D^3 mu / I) per step (semi-implicit Euler with the force at
 * v_n). Sizes and densities vary over decades. MuJoCo 4's qfrc_passive at random states of
 * scenes/fluid.xml is in tests/test_dynamics.c. Also: refusals by name. */
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

static void test_refusals(void) {
  fx_refused("<mujoco><option viscosity='0.1'/><worldbody><body><freejoint/>"
                 "<geom name='wing' type='box' size='.1 .2 .01' fluidshape='ellipsoid'/></body></worldbody></mujoco>",
                 SAP_ERR_UNSUPPORTED, "geom 'wing' uses MuJoCo's ellipsoid fluid model");
  fx_refused("<mujoco><option density='-1'/><worldbody><body><freejoint/><geom size='.1'/></body>"
                 "</worldbody></mujoco>", SAP_ERR_SCENE, "density -1");
}

int main(void) {
  RUN(test_terminal_velocity);
  RUN(test_spin_decay);
  RUN(test_refusals);
  return check_summary("test_fluid");
}
