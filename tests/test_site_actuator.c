/* Site transmissions (MuJoCo's mjTRN_SITE without refsite; kernels/dynamics_t.h
 * sapw_actuation): analytic motions of the stepped equations -- a quadrotor whose four
 * rotor thrusts balance its weight hovers (height and attitude unchanged to round-off), a
 * site motor at a free body's com accelerates it by exactly F/m along the site's rotated
 * axis, and a pure-torque gear spins a sphere at exactly tau/I; refusals by name. MuJoCo 4's
 * qfrc_actuator at random states of scenes/quadrotor.xml is in tests/test_dynamics.c; refsite
 * (Cartesian) transmissions in tests/test_refsite.c. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fixture.h"

/* four rotors (thrust g_z per unit ctrl, alternating yaw drag) on a 1.3 kg hub: ctrl = m g /
 * (4 g_z) holds it */
static void test_hover(void) {
  const double mass = 1.3, gz = 4.0, c = mass * 9.81 / (4 * gz);
  const char* xml =
      "<mujoco><option timestep='0.002'/><worldbody><body name='hub' pos='0.3 -0.2 2'><freejoint/>"
      "<inertial pos='0 0 0' mass='1.3' diaginertia='0.01 0.012 0.02'/>"
      "<site name='a' pos='0.2 0.2 0'/><site name='b' pos='-0.2 0.2 0'/>"
      "<site name='c' pos='-0.2 -0.2 0'/><site name='d' pos='0.2 -0.2 0'/></body></worldbody>"
      "<actuator><motor site='a' gear='0 0 4 0 0 0.1'/><motor site='b' gear='0 0 4 0 0 -0.1'/>"
      "<motor site='c' gear='0 0 4 0 0 0.1'/><motor site='d' gear='0 0 4 0 0 -0.1'/></actuator></mujoco>";
  sapSim* s = fx_sim(xml, 1, "preset=approx64 contacts=0");
  if (!s) return;
  double u[4] = {c, c, c, c}, q[7], v[6];
  sap_set(s, SAP_FIELD_CTRL, NULL, 1, u);
  CHECK(sap_step(s, 1000) == SAP_OK, "step: %s", sap_lastError());
  sap_get(s, SAP_FIELD_QPOS, NULL, 1, q);
  sap_get(s, SAP_FIELD_QVEL, NULL, 1, v);
  fprintf(stderr, "  hover 2 s: z %.15g, |v| %.3g, quat %.15g %.3g %.3g %.3g\n", q[2],
          sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2] + v[3] * v[3] + v[4] * v[4] + v[5] * v[5]), q[3], q[4], q[5], q[6]);
  CHECK(fabs(q[2] - 2) < 1e-9 && fabs(q[0] - 0.3) < 1e-9 && fabs(q[1] + 0.2) < 1e-9, "hover drifted to %g %g %g", q[0], q[1], q[2]);
  for (int k = 0; k < 6; k++) CHECK(fabs(v[k]) < 1e-9, "hover: v[%d] = %g", k, v[k]);
  /* one rotor off: the hub must tilt and fall (the thrust is not a constant world force) */
  u[0] = 0;
  sap_set(s, SAP_FIELD_CTRL, NULL, 1, u);
  CHECK(sap_step(s, 100) == SAP_OK, "step: %s", sap_lastError());
  sap_get(s, SAP_FIELD_QVEL, NULL, 1, v);
  CHECK(v[2] < -0.1 && fabs(v[3]) + fabs(v[4]) > 0.1, "one rotor off: vz %g, w %g %g", v[2], v[3], v[4]);
  sap_free(s);
}

/* zero gravity: a site at the com, rotated; gear (0.5, 0, 0) along the site's x and a torque
 * gear about its z: v = n h F R_site x / m, w = n h tau R_site z / I (sphere: no gyroscopic term) */
static void test_push_and_spin(void) {
  const char* xml =
      "<mujoco><option timestep='0.001' gravity='0 0 0'/><worldbody><body pos='0 0 1'><freejoint/>"
      "<geom type='sphere' size='0.1' mass='2'/>"
      "<site name='s' quat='0.9238795325112867 0 0 0.3826834323650898'/></body></worldbody>"
      "<actuator><motor site='s' gear='0.5 0 0 0 0 0'/><motor site='s' gear='0 0 0 0 0 0.02'/></actuator></mujoco>";
  sapSim* s = fx_sim(xml, 1, "preset=approx64 contacts=0");
  if (!s) return;
  double u[2] = {3, 0}, v[6];
  sap_set(s, SAP_FIELD_CTRL, NULL, 1, u);
  int n = 200;
  CHECK(sap_step(s, n) == SAP_OK, "step: %s", sap_lastError());
  sap_get(s, SAP_FIELD_QVEL, NULL, 1, v);
  double a = n * 0.001 * 0.5 * 3 / 2;  // |v| after n steps; the site's x is the world's (1, 1, 0)/sqrt2
  fprintf(stderr, "  push: v %.15g %.15g %.15g (analytic %.15g each)\n", v[0], v[1], v[2], a / sqrt(2));
  CHECK(fabs(v[0] - a / sqrt(2)) < 1e-12 && fabs(v[1] - a / sqrt(2)) < 1e-12 && fabs(v[2]) < 1e-12,
        "push: v %.15g %.15g %.15g", v[0], v[1], v[2]);
  CHECK(fabs(v[3]) + fabs(v[4]) + fabs(v[5]) < 1e-12, "push at the com spins the body: w %g %g %g", v[3], v[4], v[5]);
  double zero[6] = {0, 0, 0, 0, 0, 0};
  sap_set(s, SAP_FIELD_QVEL, NULL, 1, zero);
  u[0] = 0;
  u[1] = -1.5;
  sap_set(s, SAP_FIELD_CTRL, NULL, 1, u);
  CHECK(sap_step(s, n) == SAP_OK, "step: %s", sap_lastError());
  sap_get(s, SAP_FIELD_QVEL, NULL, 1, v);
  double I = 0.4 * 2 * 0.01, w = n * 0.001 * 0.02 * -1.5 / I;
  fprintf(stderr, "  spin: w %.15g %.15g %.15g (analytic 0 0 %.15g)\n", v[3], v[4], v[5], w);
  CHECK(fabs(v[5] - w) < 1e-11 * fabs(w) + 1e-13 && fabs(v[3]) + fabs(v[4]) < 1e-12, "spin: w %.15g, analytic %.15g", v[5], w);
  sap_free(s);
}

#define BODY "<worldbody><site name='r'/><body><freejoint/><geom size='.1'/><site name='s'/>" \
             "<body><joint name='j' axis='0 1 0'/><geom size='.05'/></body></body></worldbody>"

static void test_refusals(void) {
  fx_refused("<mujoco>" BODY "<actuator><position name='ps' site='s' kp='10'/></actuator></mujoco>", SAP_ERR_UNSUPPORTED,
             "actuator 'ps' is a position or velocity servo on a site transmission");
  fx_refused("<mujoco>" BODY "<actuator><motor name='m' site='s'/></actuator><sensor>"
                 "<actuatorvel name='av' actuator='m'/></sensor></mujoco>", SAP_ERR_UNSUPPORTED,
             "sensor 'av' (actuatorvel) reads a site transmission");
  fx_refused("<mujoco>" BODY "<actuator><motor name='m' site='s'/></actuator><sensor>"
                 "<jointactuatorfrc name='jf' joint='j'/></sensor></mujoco>", SAP_ERR_UNSUPPORTED,
             "sensor 'jf' (jointactuatorfrc) in a model with site");
}

int main(void) {
  RUN(test_hover);
  RUN(test_push_and_spin);
  RUN(test_refusals);
  return check_summary("test_site_actuator");
}
