/* CPU/GPU parity (chain: MuJoCo oracle -> CPU backend -> GPU backend): the same
 * scene, preset and controls stepped on both backends agree within tolerances
 * chosen per precision; identical worlds stay identical on the GPU; GPU reruns
 * are bitwise equal. Without a usable GPU every test says SKIP, unless
 * SAPSIM_REQUIRE_GPU=1 (make test-gpu), which turns that into a failure. */
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#ifdef SAP_HAVE_CUDA
#include <cuda_runtime.h>
#endif

#include "backend.h"
#include "check.h"
#include "sim.h"
#include "../host/collision.h"
#include "../kernels/collision.h"

static int gpu_available(void) {
  char name[128];
  int ok = sap_cudaUsable(name, sizeof(name));
  const char* req = getenv("SAPSIM_REQUIRE_GPU");
  if (!ok && req && req[0] == '1') {
    CHECK(0, "SAPSIM_REQUIRE_GPU=1 but no usable GPU: %s", name);
    return 0;
  }
  return ok;
}

static const char* solve_kernel = "warp";  /* option solve_kernel of the next make() */
static int eq_off_odd = 0;  /* parity(): equality 0 switched off in the odd worlds (eq_active) */
static const char* extra_opt[5] = {NULL, NULL, NULL, NULL, NULL};  /* key=value pairs for the next make() */

/* the warp solve runs one Newton loop over every island of a world (option island_newton does
 * not reach it): its CPU reference runs that loop too; the thread-per-world solve runs the
 * CPU's sapw_ solve, one loop per island like the CPU by default */
static void same_loop(sapOptions* o) {
  if (o->device == SAP_DEVICE_CPU && o->solve_kernel == SAP_SOLVE_WARP) o->island_newton = 0;
}

static sapSim* make(const char* path, int nworld, const char* preset, int device, int contacts) {
  sapModel* m = NULL;
  if (sap_loadModel(path, &m) != SAP_OK) return NULL;
  sapOptions o;
  sap_optionsDefault(&o);
  sap_optionsSet(&o, "preset", preset);
  sap_optionsSet(&o, "solve_kernel", solve_kernel);
  for (int i = 0; i < 5 && extra_opt[i]; i++) CHECK(sap_optionsSetPair(&o, extra_opt[i]) == SAP_OK, "%s", extra_opt[i]);
  o.device = device;
  o.contacts = contacts;
  same_loop(&o);
  sapSim* s = NULL;
  if (sap_create(m, &o, nworld, &s) != SAP_OK) CHECK(0, "%s", sap_lastError());
  sap_freeModel(m);
  if (s) sap_reset(s, s->m->nkey > 0 ? 0 : -1, NULL);
  return s;
}

static void set_ctrl(sapSim* s) {
  int n = sap_nworld(s), nu = s->m->nu;
  if (!nu) return;
  double* c = malloc(sizeof(double) * n * nu);
  for (int i = 0; i < n * nu; i++) c[i] = 0.5 * sin(0.37 * i);
  sap_set(s, SAP_FIELD_CTRL, NULL, n, c);
  free(c);
}

/* K steps on both backends; compare qpos and qvel of every world */
static void parity(const char* path, const char* preset, int contacts, int nstep, double tol) {
  int n = 16;
  sapSim* c = make(path, n, preset, SAP_DEVICE_CPU, contacts);
  sapSim* g = make(path, n, preset, SAP_DEVICE_CUDA, contacts);
  if (!c || !g) goto done;
  CHECK(!sap_onGPU(c) && sap_onGPU(g), "backends: cpu %d, cuda %d", sap_onGPU(c), sap_onGPU(g));
  set_ctrl(c);
  set_ctrl(g);
  for (int w = 1; eq_off_odd && w < n; w += 2) {
    CHECK(sap_setEqActive(c, w, 0, 0) == SAP_OK, "%s", sap_lastError());
    CHECK(sap_setEqActive(g, w, 0, 0) == SAP_OK, "%s", sap_lastError());
  }
  CHECK(sap_step(c, nstep) == SAP_OK, "%s", sap_lastError());
  CHECK(sap_step(g, nstep) == SAP_OK, "%s", sap_lastError());
  int nq = c->m->nq, nv = c->m->nv;
  double *qc = malloc(sizeof(double) * n * nq), *qg = malloc(sizeof(double) * n * nq);
  double *vc = malloc(sizeof(double) * n * nv), *vg = malloc(sizeof(double) * n * nv);
  sap_get(c, SAP_FIELD_QPOS, NULL, n, qc);
  sap_get(g, SAP_FIELD_QPOS, NULL, n, qg);
  sap_get(c, SAP_FIELD_QVEL, NULL, n, vc);
  sap_get(g, SAP_FIELD_QVEL, NULL, n, vg);
  char what[160];
  snprintf(what, sizeof(what), "%s %s qpos", path, preset);
  check_arrays(what, qg, qc, n * nq, tol, tol);
  snprintf(what, sizeof(what), "%s %s qvel", path, preset);
  check_arrays(what, vg, vc, n * nv, 10 * tol, 10 * tol);
  int na = c->m->na;
  if (na) {  /* activations (kernels/actuator.h, integrated with the positions) */
    double *ac = malloc(sizeof(double) * n * na), *ag = malloc(sizeof(double) * n * na);
    sap_get(c, SAP_FIELD_ACT, NULL, n, ac);
    sap_get(g, SAP_FIELD_ACT, NULL, n, ag);
    snprintf(what, sizeof(what), "%s %s act", path, preset);
    check_arrays(what, ag, ac, n * na, 1e-12, 1e-12);
    free(ac);
    free(ag);
  }
  sapWorldInfo ic[16], ig[16];
  sap_worldInfo(c, NULL, n, ic);
  sap_worldInfo(g, NULL, n, ig);
  for (int w = 0; w < n; w++) {
    CHECK(ic[w].flags == ig[w].flags, "world %d flags cpu %x gpu %x", w, ic[w].flags, ig[w].flags);
    CHECK(ic[w].ncon == ig[w].ncon, "world %d contacts cpu %d gpu %d", w, ic[w].ncon, ig[w].ncon);
  }
  free(qc); free(qg); free(vc); free(vg);
done:
  sap_free(c);
  sap_free(g);
}

static void test_parity_free_motion(void) {
  if (!gpu_available()) SKIP("no usable GPU");
  /* fp64: the same IEEE operations; fp32: float rounding may differ (fma) */
  parity("scenes/humanoid.xml", "approx64", 0, 50, 1e-9);
  parity("scenes/arm7.xml", "approx64", 0, 50, 1e-9);
  parity("scenes/humanoid.xml", "approx32", 0, 20, 1e-4);
  // free bodies alone: the 6-dof chains' unrolled factor and solve (sapw_chainFactorSolve6)
  parity("scenes/box_stack.xml", "approx32", 0, 40, 1e-4);
}

/* a column of convex bodies (mesh, ellipsoid, cylinder, capsule, box, sphere) that start
 * 1 cm into each other over a plane: the MPR + EPA pairs from the first step */
static const char* convexColumn(void) {
  static char path[128];
  snprintf(path, sizeof(path), "/tmp/sapsim_test_gpu_convex_%d.xml", (int)getpid());
  FILE* f = fopen(path, "w");
  if (!f) return path;
  fputs("<mujoco><asset><mesh name='hull' vertex='0.08 0 0  -0.08 0 0  0 0.07 0  0 -0.07 0  0 0 0.06  0 0 -0.06"
        "  0.04 0.04 0.03  0.04 -0.04 -0.03  -0.04 0.04 -0.03  -0.04 -0.04 0.03'/></asset><worldbody>"
        "<geom type='plane' size='0 0 1'/>"
        "<body pos='0 0 0.06'><freejoint/><geom type='mesh' mesh='hull'/></body>"
        "<body pos='0.01 0 0.16' euler='20 10 0'><freejoint/><geom type='ellipsoid' size='0.07 0.05 0.05'/></body>"
        "<body pos='-0.01 0.01 0.26' euler='80 0 30'><freejoint/><geom type='cylinder' size='0.05 0.06'/></body>"
        "<body pos='0 -0.01 0.36' euler='0 85 0'><freejoint/><geom type='capsule' size='0.03 0.06'/></body>"
        "<body pos='0.01 0.01 0.42' euler='10 0 40'><freejoint/><geom type='ellipsoid' size='0.04 0.06 0.03'/></body>"
        "<body pos='0 0 0.50' euler='5 5 5'><freejoint/><geom type='mesh' mesh='hull'/></body>"
        "</worldbody></mujoco>", f);
  fclose(f);
  return path;
}

static void test_parity_contact(void) {
  if (!gpu_available()) SKIP("no usable GPU");
  parity("scenes/box_stack.xml", "approx64", 1, 40, 1e-6);
  parity("scenes/humanoid.xml", "drake", 1, 20, 1e-6);
  parity("scenes/ant.xml", "approx32", 1, 20, 1e-3);
  parity("scenes/servo_arm.xml", "approx64", 1, 40, 1e-6);  // dry-friction rows, affine servos
  parity("scenes/servo_arm.xml", "approx32", 1, 40, 1e-3);
  parity("scenes/fourbar.xml", "approx64", 1, 100, 1e-6);   // connect rows (equality)
  parity("scenes/gripper2.xml", "drake", 1, 100, 1e-6);     // joint-coupling row
  parity("scenes/fourbar.xml", "approx32", 1, 100, 1e-3);
  // planar loops closed by connects whose out-of-plane rows are null (emptied as rounding in
  // fp32, sapw_eqRowIsNoise): 0.1 s of the chains' swing
  parity("scenes/planar_loops.xml", "approx64", 1, 50, 1e-6);
  parity("scenes/planar_loops.xml", "approx32", 1, 50, 1e-3);
  parity("scenes/quadruped_roll.xml", "approx64", 1, 40, 1e-6);  // condim-6 feet: 6 rows per contact
  parity("scenes/quadruped_roll.xml", "approx32", 1, 40, 1e-3);
  parity("scenes/quadruped_roll.xml", "drake", 1, 40, 1e-6);
  // convex pairs (MPR + EPA: mesh-ellipsoid, ellipsoid-cylinder, cylinder-capsule, ...)
  parity(convexColumn(), "approx64", 1, 60, 1e-6);
  parity(convexColumn(), "approx32", 1, 30, 1e-3);
  remove(convexColumn());
  // heightfield terrain: 0.5 s, the bodies land on the prisms (box, sphere, capsule, ellipsoid)
  parity("scenes/hfield_terrain.xml", "approx64", 1, 100, 1e-6);
  // fp32: 44 steps (0.22 s). The bodies reach the prisms from step ~41, and the landing
  // amplifies rounding: a 1e-6 m/s change of the start velocity moves the CPU's own run by
  // 2.2e-4 m at step 44 and by 2e-3 m at step 52 (newton_wolfe and armijo_decay alike), more
  // than this tolerance, so fp32 parity stops while the CPU's own sensitivity is within it
  parity("scenes/hfield_terrain.xml", "approx32", 1, 44, 1e-3);
  // convex meshes of 400 hull vertices: support by hill climb on the hull graph
  parity("scenes/mesh_balls.xml", "approx64", 1, 60, 1e-6);
  parity("scenes/mesh_balls.xml", "approx32", 1, 20, 1e-3);  // fp32: 0.1 s, before the balls roll apart
  // the cube pile at its default capacity: contacts dropped; the overflow flag (set only when a
  // dropped contact may push) agrees world by world, through the fall and once settled
  parity("scenes/box_pile.xml", "approx64", 1, 150, 1e-6);
  // spatial tendons through sites as limits: a string pendulum, a sling across free, hinge, ball
  parity("scenes/string_pendulum.xml", "approx64", 1, 200, 1e-6);
  parity("scenes/string_pendulum.xml", "approx32", 1, 100, 1e-3);
  // site transmissions: rotor thrust and drag, body moments, a push across a hinge
  parity("scenes/quadrotor.xml", "approx64", 1, 100, 1e-6);
  parity("scenes/quadrotor.xml", "approx32", 1, 100, 1e-3);
  // refsite (Cartesian) transmissions: motors and an explicit general law relative to a base,
  // a moving and a world refsite, with actuatorpos/vel/frc sensors
  parity("scenes/refsite.xml", "approx64", 1, 100, 1e-6);
  parity("scenes/refsite.xml", "approx32", 1, 100, 1e-3);
  // actuators on ball and free joints (servos as drive rows on the joint's dofs)
  parity("scenes/ball_actuator.xml", "approx64", 1, 100, 1e-6);
  parity("scenes/ball_actuator.xml", "approx32", 1, 100, 1e-3);
  // jointinparent: the moment R(q)' gear on ball and free joints, servos as drive rows along it
  parity("scenes/jointinparent.xml", "approx64", 1, 100, 1e-6);
  parity("scenes/jointinparent.xml", "approx32", 1, 100, 1e-3);
  // actuatorgroupdisable: disabled motors, servos (no drive row) and acts (held)
  parity("scenes/actuator_groups.xml", "approx64", 1, 100, 1e-6);
  // refsite servos: SAP drive rows along the transmission's moment
  parity("scenes/refsite_servo.xml", "approx64", 1, 100, 1e-6);
  parity("scenes/refsite_servo.xml", "approx32", 1, 100, 1e-3);
  // slider-cranks: a servo as a SAP drive row along the moment, an explicit general law, a
  // velocity servo over two trees, a broken crank, with actuatorpos/vel/frc sensors
  parity("scenes/slider_crank.xml", "approx64", 1, 100, 1e-6);
  parity("scenes/slider_crank.xml", "approx32", 1, 100, 1e-3);
  // joint actuatorfrcrange over several actuators (the car pattern): the summed force clamped
  parity("scenes/actuator_frcrange.xml", "approx64", 1, 100, 1e-6);
  parity("scenes/actuator_frcrange.xml", "approx32", 1, 100, 1e-3);
  // fluid forces (inertia-box model: density, viscosity, wind) on free, hinged and ball bodies
  parity("scenes/fluid.xml", "approx64", 1, 100, 1e-6);
  parity("scenes/fluid.xml", "approx32", 1, 100, 1e-3);
  // the ellipsoid fluid model (added mass, lift, drag per geom) beside the inertia box
  parity("scenes/fluid_ellipsoid.xml", "approx64", 1, 100, 1e-6);
  // adhesion actuators: the free motion reads the step's contacts (body transmission)
  parity("scenes/adhesion.xml", "approx64", 1, 100, 1e-6);
  // delayed actuators: the control input read from each world's history, recorded each step
  parity("scenes/actuator_delay.xml", "approx64", 1, 100, 1e-6);
  // fixed-tendon springs (dead band) and dampers, joint and tendon limit margins
  parity("scenes/tendon_spring.xml", "approx64", 1, 200, 1e-6);
  parity("scenes/tendon_spring.xml", "approx32", 1, 100, 1e-3);
  // polynomial springs (joints, fixed and spatial tendons) under the midpoint rule's shift
  parity("scenes/poly_spring.xml", "approx64", 1, 200, 1e-6);
  // surface velocities: the friction rows' targets (4-row contacts: a torsional spinner)
  parity("scenes/surface_velocity.xml", "approx64", 1, 200, 1e-6);
  parity("scenes/surface_velocity.xml", "approx32", 1, 100, 1e-3);
  // adhesive contacts: the free motion's pull over the step's contacts, the solve's cone shift,
  // no friction in the gap band
  parity("scenes/adhesion_geom.xml", "approx64", 1, 200, 1e-6);
  parity("scenes/adhesion_geom.xml", "approx32", 1, 100, 1e-3);
  // fixed tendons' armature on M (warp free motion: added after the columns)
  // limited ball joints: one cone row each (sapw_buildLimits), chained and on a free body
  parity("scenes/ball_limit.xml", "approx64", 1, 200, 1e-6);
  parity("scenes/ball_limit.xml", "approx32", 1, 100, 1e-3);
  parity("scenes/tendon_armature.xml", "approx64", 0, 200, 1e-9);
  parity("scenes/tendon_armature.xml", "approx64", 1, 200, 1e-6);
  // spatial tendons' armature: a J'J on M's pattern and the bias a J (dJ/dt v) (sapt_spatialDot)
  parity("scenes/spatial_tendon_armature.xml", "approx64", 0, 200, 1e-9);
  parity("scenes/spatial_tendon_armature.xml", "approx64", 1, 200, 1e-6);
  parity("scenes/spatial_tendon_armature.xml", "approx32", 1, 100, 1e-3);
  // activation dynamics: filter, filterexact, integrator, intvelocity (an implicit drive under
  // the solve, explicit without it), filtered position, muscles on a joint and a tendon, actearly
  parity("scenes/act_zoo.xml", "approx64", 1, 200, 1e-6);
  parity("scenes/act_zoo.xml", "approx64", 0, 200, 1e-9);
  parity("scenes/act_zoo.xml", "approx32", 1, 100, 1e-3);
  // general explicit laws (damper, anti-spring, state-dependent gain) beside a drive row
  parity("scenes/general_actuator.xml", "approx64", 1, 200, 1e-6);
  parity("scenes/general_actuator.xml", "approx64", 0, 200, 1e-9);
  // spatial tendons wrapping spheres and cylinders, pulleys (kernels/tendon.h): muscles, motors,
  // servos (drive rows), springs, dampers, frictionloss and limit rows, a tendon equality
  parity("scenes/tendon_wrap.xml", "approx64", 1, 200, 1e-6);
  parity("scenes/tendon_wrap.xml", "approx32", 1, 100, 1e-3);
  parity("scenes/muscle_arm.xml", "approx64", 0, 200, 1e-9);
  // sidesites outside and inside the wrap geoms (MuJoCo 4.0's wrap rules), a servo's drive row
  parity("scenes/tendon_sidesite.xml", "approx64", 1, 200, 1e-6);
  parity("scenes/tendon_sidesite.xml", "approx64", 0, 200, 1e-9);
  parity("scenes/tendon_sidesite.xml", "approx32", 1, 100, 1e-3);
  // weld to a mocap body, joint coupling, finger contacts; drake: sap_euler, the curvature bias
  parity("scenes/arm_gripper_mocap.xml", "approx64", 1, 100, 1e-6);
  parity("scenes/arm_gripper_mocap.xml", "drake", 1, 100, 1e-6);
  parity("scenes/arm_gripper_mocap.xml", "approx32", 1, 100, 1e-3);
  eq_off_odd = 1;  // per-world eq_active: the weld / the loop connect off in the odd worlds
  parity("scenes/arm_gripper_mocap.xml", "drake", 1, 100, 1e-6);
  parity("scenes/fourbar.xml", "approx64", 1, 100, 1e-6);
  eq_off_odd = 0;
  solve_kernel = "thread";  // the one-thread-per-world solve kernel too
  parity("scenes/humanoid.xml", "drake", 1, 20, 1e-6);
  parity("scenes/box_stack.xml", "approx64", 1, 40, 1e-6);
  parity("scenes/servo_arm.xml", "drake", 1, 40, 1e-6);
  parity("scenes/fourbar.xml", "approx64", 1, 100, 1e-6);
  parity("scenes/gripper2.xml", "drake", 1, 100, 1e-6);
  parity("scenes/quadruped_roll.xml", "approx64", 1, 40, 1e-6);
  parity("scenes/arm_gripper_mocap.xml", "drake", 1, 100, 1e-6);
  solve_kernel = "warp";
}

/* a scene of every narrow-phase routine family at once, bodies within the 2 cm detection band of
 * their neighbours: a plane, a 5 x 5 heightfield, boxes of different sizes, spheres, capsules, an
 * ellipsoid, a cylinder and convex meshes (box-box, box-sphere, box-capsule, sphere-capsule,
 * mesh-box, mesh-sphere, capsule-capsule, plane-*, heightfield-* in one candidate list) */
static const char* mixedScene(void) {
  static char path[128];
  snprintf(path, sizeof(path), "/tmp/sapsim_test_gpu_mixed_%d.xml", (int)getpid());
  FILE* f = fopen(path, "w");
  if (!f) return path;
  fputs("<mujoco><option timestep='0.005'/><asset>"
        "<mesh name='hull' vertex='0.05 0 0  -0.05 0 0  0 0.045 0  0 -0.045 0  0 0 0.04  0 0 -0.04"
        "  0.03 0.03 0.02  0.03 -0.03 -0.02  -0.03 0.03 -0.02  -0.03 -0.03 0.02'/>"
        "<hfield name='hf' nrow='5' ncol='5' size='0.3 0.3 0.08 0.05' elevation='0.2 0.5 0.3 0.6 0.1 "
        "0.4 0.8 0.5 0.2 0.3 0.1 0.6 0.9 0.4 0.5 0.3 0.2 0.7 0.6 0.2 0.5 0.4 0.1 0.3 0.6'/></asset>"
        "<worldbody><geom type='plane' size='0 0 1'/>"
        "<geom type='hfield' hfield='hf' pos='1 0 0'/>"
        "<body pos='0 0 0.055' euler='0 0 10'><freejoint/><geom type='box' size='0.05 0.04 0.05'/></body>"
        "<body pos='0.005 0.01 0.17' euler='3 2 40'><freejoint/><geom type='box' size='0.03 0.07 0.05'/></body>"
        "<body pos='0.115 0 0.06'><freejoint/><geom type='sphere' size='0.055'/></body>"
        "<body pos='0 0.11 0.04' euler='0 90 5'><freejoint/><geom type='capsule' size='0.035 0.06'/></body>"
        "<body pos='0.115 0.12 0.05' euler='10 5 0'><freejoint/><geom type='mesh' mesh='hull'/></body>"
        "<body pos='-0.11 0.01 0.05' euler='15 0 0'><freejoint/><geom type='mesh' mesh='hull'/></body>"
        "<body pos='-0.1 0.12 0.045' euler='20 30 0'><freejoint/><geom type='ellipsoid' size='0.05 0.04 0.035'/></body>"
        "<body pos='0.12 -0.12 0.05' euler='0 5 0'><freejoint/><geom type='cylinder' size='0.04 0.05'/></body>"
        "<body pos='0.01 -0.11 0.045' euler='0 85 30'><freejoint/><geom type='capsule' size='0.03 0.07'/></body>"
        "<body pos='1 0 0.14'><freejoint/><geom type='sphere' size='0.06'/></body>"
        "<body pos='0.85 0.1 0.14' euler='10 20 30'><freejoint/><geom type='box' size='0.06 0.05 0.04'/></body>"
        "<body pos='1.12 -0.1 0.14' euler='80 0 15'><freejoint/><geom type='capsule' size='0.03 0.08'/></body>"
        "<body pos='1.1 0.15 0.14' euler='5 5 5'><freejoint/><geom type='mesh' mesh='hull'/></body>"
        "</worldbody></mujoco>", f);
  fclose(f);
  return path;
}

/* world w's contact list (the arrays of sapData) equal in a and b: counts, flags, drop record and
 * every record. Bitwise under the emulation (the same compiled arithmetic); on a device nvcc
 * contracts multiply-adds, so there the values agree to 1e-6 (MPR's tolerance, for the convex
 * pairs; geoms and order exactly), and an
 * overflowing world's counts and flags only (equal cubes' phis tie to rounding, and which of
 * them is kept may then differ) */
static void same_list(const sapSim* a, const sapSim* b, int w, const char* what) {
  const sapData *da = &a->d, *db = &b->d;
  int n = da->ncon[w], cap = da->ncon_max;
  CHECK(db->ncon[w] == n && db->ncon_dropped[w] == da->ncon_dropped[w], "%s world %d: contacts cpu %d (%d dropped), "
        "gpu %d (%d dropped)", what, w, n, da->ncon_dropped[w], db->ncon[w], db->ncon_dropped[w]);
  CHECK(da->world_flags[w] == db->world_flags[w], "%s world %d: flags cpu %x gpu %x", what, w, da->world_flags[w],
        db->world_flags[w]);
  if (db->ncon[w] != n) return;
#ifndef SAP_CUDA_SHIM
  if (da->ncon_dropped[w]) return;
#endif
  CHECK(!memcmp(da->con_geom + 2L * cap * w, db->con_geom + 2L * cap * w, sizeof(int) * 2 * n),
        "%s world %d: geom pairs differ (order)", what, w);
  struct { const double *x, *y; int k; const char* name; } f[] = {
      {da->con_pos, db->con_pos, 6, "pos"},    {da->con_frame, db->con_frame, 9, "frame"},
      {da->con_dist, db->con_dist, 1, "dist"}, {da->con_mu, db->con_mu, 1, "mu"},
      {da->con_k, db->con_k, 1, "k"},          {da->con_taud, db->con_taud, 1, "taud"}};
#ifdef SAP_CUDA_SHIM
  for (int i = 0; i < 6; i++)
    CHECK(!memcmp(f[i].x + (long)f[i].k * cap * w, f[i].y + (long)f[i].k * cap * w, sizeof(double) * f[i].k * n),
          "%s world %d: con_%s not bitwise equal", what, w, f[i].name);
  if (da->ncon_dropped[w])
    CHECK(!memcmp(da->con_drop + 2 * w, db->con_drop + 2 * w, 2 * sizeof(double)),
          "%s world %d: drop record cpu (%g %g) gpu (%g %g)", what, w, da->con_drop[2 * w], da->con_drop[2 * w + 1],
          db->con_drop[2 * w], db->con_drop[2 * w + 1]);
#else
  for (int i = 0; i < 6; i++) {
    char name[200];
    snprintf(name, sizeof(name), "%s world %d con_%s", what, w, f[i].name);
    check_arrays(name, f[i].y + (long)f[i].k * cap * w, f[i].x + (long)f[i].k * cap * w, f[i].k * n, 1e-6, 1e-6);
  }
#endif
}

/* the collision stage's list on both backends from the same states: nworld worlds of the scene,
 * world w > 0 moved by a few mm and degrees (free joints), one GPU step and one CPU step; staged:
 * whether the GPU batch has room for the one-pass staging (else counts and redoes) */
static void list_parity(const char* path, int nworld, int staged, int override_k) {
  sapSim* c = make(path, nworld, "approx64", SAP_DEVICE_CPU, 1);
  sapSim* g = make(path, nworld, "approx64", SAP_DEVICE_CUDA, 1);
  if (!c || !g) goto done;
  const sapModel* m = g->m;
  CHECK(g->gpu.collision_staged == staged && (!staged || g->d.nscratch >= sapw_stageBytes(m)),
        "%s: scratch %d bytes, staging %ld: the %s path expected", path, g->d.nscratch, sapw_stageBytes(m),
        staged ? "one-pass" : "count-and-redo");
  int nq = m->nq;
  double* q = malloc(sizeof(double) * nworld * nq);
  sap_get(c, SAP_FIELD_QPOS, NULL, nworld, q);
  for (int w = 1; w < nworld; w++)
    for (int j = 0; j < m->njnt; j++) {
      if (m->jnt_type[j] != SAP_JNT_FREE) continue;
      double* x = q + (long)w * nq + m->jnt_qposadr[j];
      for (int k = 0; k < 3; k++) x[k] += 0.004 * sin(1.7 * w + 2.3 * j + k);
      for (int k = 3; k < 7; k++) x[k] += 0.03 * sin(0.9 * w + 1.1 * j + 0.7 * k);
      double l = sqrt(x[3] * x[3] + x[4] * x[4] + x[5] * x[5] + x[6] * x[6]);
      for (int k = 3; k < 7; k++) x[k] /= l;
    }
  sap_set(c, SAP_FIELD_QPOS, NULL, nworld, q);
  sap_set(g, SAP_FIELD_QPOS, NULL, nworld, q);
  free(q);
  if (override_k) {  // the odd worlds' own geom stiffness: their pairs' k recombined
    double* k = malloc(sizeof(double) * m->ngeom);
    for (int i = 0; i < m->ngeom; i++) k[i] = 2e4 * (1 + i);
    for (int w = 1; w < nworld; w += 2) {
      CHECK(sap_setParam(c, SAP_PARAM_GEOM_K, &w, 1, k) == SAP_OK, "%s", sap_lastError());
      CHECK(sap_setParam(g, SAP_PARAM_GEOM_K, &w, 1, k) == SAP_OK, "%s", sap_lastError());
    }
    free(k);
  }
  CHECK(sap_step(c, 1) == SAP_OK && sap_step(g, 1) == SAP_OK, "%s", sap_lastError());
  sap_sync(g);
  int total = 0, dropped = 0;
  for (int w = 0; w < nworld; w++) {
    same_list(c, g, w, path);
    total += c->d.ncon[w];
    dropped += c->d.ncon_dropped[w];
  }
  printf("    %s: %d worlds, %d contacts, %d dropped, %s\n", path, nworld, total, dropped,
         staged ? "one pass" : "count and redo");
  CHECK(total > 4 * nworld, "%s: %d contacts in %d worlds: the scene does not touch", path, total, nworld);
done:
  sap_free(c);
  sap_free(g);
}

/* the GPU's contact list (kernels/collision.cu: one pass with staging, pairs walked grouped by
 * routine, outputs in model order) is the CPU backend's, record for record: a mixed-type scene,
 * with per-world pair material; the cube pile over its capacity (kept, dropped, drop record and
 * flags); and without room for the staging (the count-and-redo fallback) */
static void test_collision_list(void) {
  if (!gpu_available()) SKIP("no usable GPU");
  const char* mixed = mixedScene();
  list_parity(mixed, 6, 1, 0);
  list_parity(mixed, 4, 1, 1);
  extra_opt[0] = "ncon_max=24";  // below the candidates: the deepest 24 kept per world
  list_parity(mixed, 4, 1, 0);
  list_parity("scenes/box_pile.xml", 4, 1, 0);
  extra_opt[0] = NULL;
  long budget = sapc_collisionStageBudget;
  sapc_collisionStageBudget = 0;  // no room for the staging: count, offsets, redo
  list_parity(mixed, 4, 0, 1);
  extra_opt[0] = "ncon_max=24";
  list_parity("scenes/box_pile.xml", 4, 0, 0);
  extra_opt[0] = NULL;
  sapc_collisionStageBudget = budget;
  remove(mixed);
}

static uint64_t hash(const double* x, size_t n) {
  uint64_t h = 1469598103934665603ULL;
  const unsigned char* b = (const unsigned char*)x;
  for (size_t i = 0; i < n * sizeof(double); i++) h = (h ^ b[i]) * 1099511628211ULL;
  return h;
}

static void test_gpu_invariants(void) {
  if (!gpu_available()) SKIP("no usable GPU");
  uint64_t h[2];
  for (int r = 0; r < 2; r++) {
    sapSim* g = make("scenes/humanoid.xml", 64, "approx32", SAP_DEVICE_CUDA, 1);
    if (!g) return;
    sap_step(g, 40);
    sap_sync(g);
    const sapData* d = sap_data(g);
    int nq = g->m->nq;
    for (int w = 1; w < 64; w++)
      CHECK(!memcmp(d->qpos, d->qpos + (size_t)w * nq, sizeof(double) * nq),
            "identical world %d differs on the GPU", w);
    h[r] = hash(d->qpos, (size_t)64 * nq);
    sap_free(g);
  }
  CHECK(h[0] == h[1], "GPU reruns differ");
}

/* a step captured once in a CUDA graph and replayed gives bitwise the same states
 * as direct launches, however the steps are split across sap_step calls */
static void graph_vs_direct(const char* path, int contacts) {
  sapSim* sim[2] = {NULL, NULL};
  for (int graph = 0; graph < 2; graph++) {
    sapModel* m = NULL;
    if (sap_loadModel(path, &m) != SAP_OK) { CHECK(0, "%s", sap_lastError()); return; }
    sapOptions o;
    sap_optionsDefault(&o);
    o.device = SAP_DEVICE_CUDA;
    o.contacts = contacts;
    o.graph = graph;
    CHECK(sap_create(m, &o, 8, &sim[graph]) == SAP_OK, "%s", sap_lastError());
    sap_freeModel(m);
    if (!sim[graph]) return;
    sap_reset(sim[graph], sim[graph]->m->nkey > 0 ? 0 : -1, NULL);
    set_ctrl(sim[graph]);
  }
  int split[3] = {1, 6, 13};
  for (int i = 0; i < 3; i++)
    for (int graph = 0; graph < 2; graph++)
      CHECK(sap_step(sim[graph], split[i]) == SAP_OK, "graph %d: %s", graph, sap_lastError());
  sap_sync(sim[0]);
  sap_sync(sim[1]);
  const sapData *a = sap_data(sim[0]), *b = sap_data(sim[1]);
  int nq = sim[0]->m->nq, nv = sim[0]->m->nv;
  CHECK(!memcmp(a->qpos, b->qpos, sizeof(double) * 8 * nq), "%s: qpos differs with a graph", path);
  CHECK(!memcmp(a->qvel, b->qvel, sizeof(double) * 8 * nv), "%s: qvel differs with a graph", path);
  CHECK(!memcmp(a->world_flags, b->world_flags, sizeof(int) * 8), "%s: flags differ", path);
  CHECK(fabs(a->time[0] - 20 * sim[0]->h) < 1e-12 && a->time[0] == b->time[0], "%s: 20 steps taken (%g, %g)",
        path, a->time[0], b->time[0]);
  sap_free(sim[0]);
  sap_free(sim[1]);
}

static void test_graph_replay(void) {
  if (!gpu_available()) SKIP("no usable GPU");
  graph_vs_direct("scenes/humanoid.xml", 1);
  graph_vs_direct("scenes/box_stack.xml", 1);
  graph_vs_direct("scenes/arm7.xml", 0);
}

#ifdef SAP_HAVE_CUDA
/* as a caller would: capture nstep steps of s (sap_stepAsync) in a graph of one's own on
 * sapsim's stream, launch it replays times, wait */
static void caller_graph_steps(sapSim* s, int nstep, int replays) {
  cudaStream_t st = (cudaStream_t)sap_cudaStream(s);
  cudaGraph_t g;
  cudaGraphExec_t e;
  CHECK(st != NULL, "sapsim's stream");
  CHECK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal) == cudaSuccess, "begin capture");
  CHECK(sap_stepAsync(s, nstep) == SAP_OK, "%s", sap_lastError());
  CHECK(cudaStreamEndCapture(st, &g) == cudaSuccess, "end capture");
  CHECK(cudaGraphInstantiate(&e, g, 0) == cudaSuccess, "instantiate");
  for (int r = 0; r < replays; r++) CHECK(cudaGraphLaunch(e, st) == cudaSuccess, "launch");
  cudaStreamSynchronize(st);
  cudaGraphExecDestroy(e);
  cudaGraphDestroy(g);
}
#endif

/* a caller captures 3 steps in a graph of its own on sapsim's stream and replays it
 * twice: the same states as 6 direct steps */
static void test_caller_graph(void) {
  if (!gpu_available()) SKIP("no usable GPU");
#ifdef SAP_HAVE_CUDA
  sapSim* a = make("scenes/humanoid.xml", 8, "approx32", SAP_DEVICE_CUDA, 1);
  sapSim* b = make("scenes/humanoid.xml", 8, "approx32", SAP_DEVICE_CUDA, 1);
  if (!a || !b) return;
  set_ctrl(a);
  set_ctrl(b);
  CHECK(sap_step(a, 6) == SAP_OK, "%s", sap_lastError());
  caller_graph_steps(b, 3, 2);
  sap_sync(a);
  sap_sync(b);
  const sapData *da = sap_data(a), *db = sap_data(b);
  CHECK(!memcmp(da->qpos, db->qpos, sizeof(double) * 8 * a->m->nq), "qpos after a caller's graph");
  CHECK(!memcmp(da->qvel, db->qvel, sizeof(double) * 8 * a->m->nv), "qvel after a caller's graph");
  sap_free(a);
  sap_free(b);
#endif
}

/* two sims have streams of their own: steps enqueued on both without waiting (sap_stepAsync,
 * interleaved) give the bits of each stepped alone, and a caller's graph captured on one
 * sim's stream records only that sim's launches (the other's async steps are not in it) */
static void test_stream_per_sim(void) {
  if (!gpu_available()) SKIP("no usable GPU");
#ifdef SAP_HAVE_CUDA
  sapSim* ref = make("scenes/box_stack.xml", 8, "approx32", SAP_DEVICE_CUDA, 1);
  sapSim* a = make("scenes/box_stack.xml", 8, "approx32", SAP_DEVICE_CUDA, 1);
  sapSim* b = make("scenes/humanoid.xml", 8, "approx32", SAP_DEVICE_CUDA, 1);
  if (!ref || !a || !b) goto done;
  CHECK(sap_cudaStream(a) && sap_cudaStream(b) && sap_cudaStream(a) != sap_cudaStream(b) &&
            sap_cudaStream(ref) != sap_cudaStream(a), "one stream per sim: %p %p %p", sap_cudaStream(ref),
        sap_cudaStream(a), sap_cudaStream(b));
  set_ctrl(b);
  CHECK(sap_step(ref, 6) == SAP_OK, "%s", sap_lastError());
  for (int k = 0; k < 3; k++) {
    CHECK(sap_stepAsync(a, 1) == SAP_OK && sap_stepAsync(b, 2) == SAP_OK, "%s", sap_lastError());
    if (k == 1) caller_graph_steps(a, 1, 3);  /* a: 3 replays of one captured step; b not in it */
  }
  sap_sync(a);
  sap_sync(b);
  sap_sync(ref);
  const sapData *dr = sap_data(ref), *da = sap_data(a);
  CHECK(!memcmp(dr->qpos, da->qpos, sizeof(double) * 8 * a->m->nq), "qpos of a next to b's async steps");
  double tb[8];
  sap_get(b, SAP_FIELD_TIME, NULL, 8, tb);
  CHECK_CLOSE(tb[0], 6 * b->h, 1e-12, 0, "b's time after 3 x 2 async steps");
done:
  sap_free(ref);
  sap_free(a);
  sap_free(b);
#endif
}

/* a sim with the options in kv ("key=value", NULL-terminated) on top of the defaults */
static sapSim* make_with(const char* path, int nworld, int device, const char* const* kv) {
  sapModel* m = NULL;
  if (sap_loadModel(path, &m) != SAP_OK) { CHECK(0, "%s", sap_lastError()); return NULL; }
  sapOptions o;
  sap_optionsDefault(&o);
  o.device = device;
  for (int i = 0; kv && kv[i]; i++) CHECK(sap_optionsSetPair(&o, kv[i]) == SAP_OK, "%s", sap_lastError());
  same_loop(&o);
  sapSim* s = NULL;
  if (sap_create(m, &o, nworld, &s) != SAP_OK) CHECK(0, "%s: %s", path, sap_lastError());
  sap_freeModel(m);
  if (s) {
    sap_reset(s, s->m->nkey > 0 ? 0 : -1, NULL);
    set_ctrl(s);
  }
  return s;
}

/* two sims stepped nstep (in three calls) have bitwise equal states and diagnostics */
static void expect_same(const char* what, sapSim* a, sapSim* b, int nstep) {
  if (!a || !b) return;
  int n = sap_nworld(a), split[3] = {1, nstep / 2, nstep - 1 - nstep / 2};
  for (int i = 0; i < 3; i++) {
    CHECK(sap_step(a, split[i]) == SAP_OK, "%s: %s", what, sap_lastError());
    CHECK(sap_step(b, split[i]) == SAP_OK, "%s: %s", what, sap_lastError());
  }
  sap_sync(a);
  sap_sync(b);
  const sapData *x = sap_data(a), *y = sap_data(b);
  CHECK(!memcmp(x->qpos, y->qpos, sizeof(double) * n * a->m->nq), "%s: qpos differs", what);
  CHECK(!memcmp(x->qvel, y->qvel, sizeof(double) * n * a->m->nv), "%s: qvel differs", what);
  for (int w = 0; w < n; w++)
    CHECK(x->world_flags[w] == y->world_flags[w] && x->newton_iter[w] == y->newton_iter[w] &&
              x->ls_iter[w] == y->ls_iter[w] && x->nfactor[w] == y->nfactor[w],
          "%s: world %d flags %x/%x, Newton %d/%d, line search %d/%d, factorizations %d/%d", what, w,
          x->world_flags[w], y->world_flags[w], x->newton_iter[w], y->newton_iter[w], x->ls_iter[w],
          y->ls_iter[w], x->nfactor[w], y->nfactor[w]);
}

/* newton_loop=while and fixed with the warp Cholesky run the same arithmetic as the loop
 * inside one kernel, one launch group per iteration: bitwise the same states, flags and
 * counts, with direct launches and inside a graph (a conditional while node there) */
static void test_newton_loop_launches(void) {
  if (!gpu_available()) SKIP("no usable GPU");
  const char* scenes[3][2] = {{"scenes/humanoid.xml", "preset=drake"},
                              {"scenes/box_stack.xml", "preset=approx64"},
                              {"scenes/humanoid.xml", "preset=approx32"}};
  const char* loops[2] = {"newton_loop=while", "newton_loop=fixed"};
  const char* graphs[2] = {"graph=0", "graph=1"};
  for (int sc = 0; sc < 3; sc++)
    for (int l = 0; l < 2; l++)
      for (int g = 0; g < 2; g++) {
        const char* ref[] = {scenes[sc][1], NULL};
        const char* alt[] = {scenes[sc][1], loops[l], graphs[g], NULL};
        char what[160];
        snprintf(what, sizeof(what), "%s %s %s %s", scenes[sc][0], scenes[sc][1], loops[l], graphs[g]);
        sapSim* a = make_with(scenes[sc][0], 8, SAP_DEVICE_CUDA, ref);
        sapSim* b = make_with(scenes[sc][0], 8, SAP_DEVICE_CUDA, alt);
        expect_same(what, a, b, 12);
        sap_free(a);
        sap_free(b);
      }
}

/* where the warp Cholesky works (shared memory or the scratch), how many worlds share a
 * block and the block size of the one-thread-per-world kernels change no bit of the results */
static void test_solve_layouts(void) {
  if (!gpu_available()) SKIP("no usable GPU");
  const char* alt[5][4] = {{"chol_memory=global", NULL, NULL, NULL},
                           {"solve_block_worlds=1", NULL, NULL, NULL},
                           {"solve_block_worlds=3", "preset=approx32", NULL, NULL},
                           {"newton_loop=while", "chol_memory=global", "solve_block_worlds=5", NULL},
                           {"world_block_threads=33", NULL, NULL, NULL}};
  for (int k = 0; k < 5; k++) {
    const char* ref[] = {k == 2 ? "preset=approx32" : "preset=drake", NULL};
    const char* kv[5] = {ref[0], alt[k][0], alt[k][1], alt[k][2], NULL};
    char what[160];
    snprintf(what, sizeof(what), "%s %s %s", alt[k][0], alt[k][1] ? alt[k][1] : "", alt[k][2] ? alt[k][2] : "");
    sapSim* a = make_with("scenes/humanoid.xml", 8, SAP_DEVICE_CUDA, ref);
    sapSim* b = make_with("scenes/humanoid.xml", 8, SAP_DEVICE_CUDA, kv);
    expect_same(what, a, b, 12);
    sap_free(a);
    sap_free(b);
  }
}

/* free motion on one warp per world (default) against one thread per world: M + h D (qA)
 * and the bias forces bitwise equal after a step (the same per-item arithmetic), states
 * within round-off of the two Cholesky orders over many steps, every precision */
static void test_free_motion_kernels(void) {
  if (!gpu_available()) SKIP("no usable GPU");
  struct { const char *scene, *preset; int nstep; double tol; } cases[5] = {
      {"scenes/humanoid.xml", "preset=approx64", 50, 1e-9},
      {"scenes/arm7.xml", "preset=drake", 50, 1e-9},
      {"scenes/quadruped_roll.xml", "preset=approx64", 40, 1e-6},
      {"scenes/humanoid.xml", "preset=approx32", 20, 1e-4},
      {"scenes/act_zoo.xml", "preset=approx64", 100, 1e-9}};
  for (int c = 0; c < 5; c++) {
    const char* warp[] = {cases[c].preset, "free_motion_kernel=warp", "world_block_threads=64", NULL};
    const char* thread[] = {cases[c].preset, "free_motion_kernel=thread", NULL};
    sapSim* a = make_with(cases[c].scene, 8, SAP_DEVICE_CUDA, thread);
    sapSim* b = make_with(cases[c].scene, 8, SAP_DEVICE_CUDA, warp);
    if (!a || !b) { sap_free(a); sap_free(b); continue; }
    int n = 8, nq = a->m->nq, nv = a->m->nv;
    CHECK(sap_step(a, 1) == SAP_OK && sap_step(b, 1) == SAP_OK, "%s", sap_lastError());
    sap_sync(a);
    sap_sync(b);
    const sapData *x = sap_data(a), *y = sap_data(b);
    CHECK(!memcmp(x->qA, y->qA, sizeof(double) * n * a->m->nA), "%s %s: qA differs", cases[c].scene, cases[c].preset);
    CHECK(!memcmp(x->qfrc_bias, y->qfrc_bias, sizeof(double) * n * nv), "%s %s: qfrc_bias differs",
          cases[c].scene, cases[c].preset);
    CHECK(sap_step(a, cases[c].nstep) == SAP_OK && sap_step(b, cases[c].nstep) == SAP_OK, "%s", sap_lastError());
    sap_sync(a);
    sap_sync(b);
    char what[160];
    snprintf(what, sizeof(what), "%s %s warp vs thread free motion qpos", cases[c].scene, cases[c].preset);
    check_arrays(what, y->qpos, x->qpos, n * nq, cases[c].tol, cases[c].tol);
    sap_free(a);
    sap_free(b);
  }
}

/* the iteration cap through the while node's condition: with max_iterations=2 some worlds
 * stop at the cap (MAXITER), and the graph's loop, the fixed launches and the one-kernel loop
 * agree bitwise */
static void test_newton_loop_cap(void) {
  if (!gpu_available()) SKIP("no usable GPU");
  const char* ref[] = {"preset=approx64", "max_iterations=2", NULL};
  const char* alt[2][5] = {{"preset=approx64", "max_iterations=2", "newton_loop=while", "graph=1", NULL},
                           {"preset=approx64", "max_iterations=2", "newton_loop=fixed", "graph=1", NULL}};
  for (int k = 0; k < 2; k++) {
    sapSim* a = make_with("scenes/humanoid.xml", 8, SAP_DEVICE_CUDA, ref);
    sapSim* b = make_with("scenes/humanoid.xml", 8, SAP_DEVICE_CUDA, alt[k]);
    expect_same(alt[k][2], a, b, 10);
    int capped = 0;
    if (a)
      for (int w = 0; w < 8; w++) capped += (sap_data(a)->world_flags[w] & SAP_WORLD_MAXITER) != 0;
    CHECK(capped > 0, "max_iterations=2 capped no world: the test would not see the cap");
    sap_free(a);
    sap_free(b);
  }
}

/* linear_solver=cusolver (batched potrf/potrs between the assemble and advance launches;
 * emulated by LAPACK) against the CPU backend, as the parity tests; fp32 (approx32) and fp64
 * linear solves, direct launches and graphs */
static void test_cusolver_parity(void) {
  if (!gpu_available()) SKIP("no usable GPU");
  struct { const char *scene, *preset; int nstep; double tol; } cases[5] = {
      {"scenes/box_stack.xml", "preset=approx64", 40, 1e-6},
      {"scenes/humanoid.xml", "preset=drake", 20, 1e-6},
      {"scenes/quadruped_roll.xml", "preset=approx64", 40, 1e-6},
      {"scenes/humanoid.xml", "preset=approx32", 20, 1e-3}};
  const char* loops[2][2] = {{"newton_loop=while", "graph=1"}, {"newton_loop=fixed", "graph=0"}};
  for (int c = 0; c < 4; c++)
    for (int l = 0; l < 2; l++) {
      int n = 8;
      const char* cpu[] = {cases[c].preset, NULL};
      const char* gpu[] = {cases[c].preset, "linear_solver=cusolver", loops[l][0], loops[l][1], NULL};
      sapSim* a = make_with(cases[c].scene, n, SAP_DEVICE_CPU, cpu);
      sapSim* b = make_with(cases[c].scene, n, SAP_DEVICE_CUDA, gpu);
      if (!a || !b) { sap_free(a); sap_free(b); continue; }
      CHECK(sap_step(a, cases[c].nstep) == SAP_OK, "%s", sap_lastError());
      CHECK(sap_step(b, cases[c].nstep) == SAP_OK, "%s", sap_lastError());
      sap_sync(b);
      const sapData *x = sap_data(a), *y = sap_data(b);
      char what[160];
      snprintf(what, sizeof(what), "%s %s cusolver %s qpos", cases[c].scene, cases[c].preset, loops[l][0]);
      check_arrays(what, y->qpos, x->qpos, n * a->m->nq, cases[c].tol, cases[c].tol);
      int converged = 0;
      for (int w = 0; w < n; w++) {
        CHECK(x->world_flags[w] == y->world_flags[w], "%s world %d flags cpu %x gpu %x", what, w, x->world_flags[w],
              y->world_flags[w]);
        converged += (y->world_flags[w] & SAP_WORLD_CONVERGED) != 0 && y->nfactor[w] > 0;
      }
      CHECK(converged > 0, "%s: no world factored and converged", what);
      sap_free(a);
      sap_free(b);
    }
}

/* a caller captures 3 steps with newton_loop=while (conditional nodes inside the caller's
 * graph) or fixed (none) and replays the graph twice: the same as 6 one-kernel steps */
static void test_caller_graph_loops(void) {
  if (!gpu_available()) SKIP("no usable GPU");
#ifdef SAP_HAVE_CUDA
  const char* loops[3][3] = {{"newton_loop=while", NULL, NULL},
                             {"newton_loop=fixed", NULL, NULL},
                             {"newton_loop=while", "linear_solver=cusolver", NULL}};
  for (int l = 0; l < 3; l++) {
    const char* ref[] = {"preset=approx64", NULL};
    sapSim* a = make_with("scenes/humanoid.xml", 8, SAP_DEVICE_CUDA, ref);
    const char* alt[] = {"preset=approx64", loops[l][0], loops[l][1], NULL};
    sapSim* b = make_with("scenes/humanoid.xml", 8, SAP_DEVICE_CUDA, alt);
    if (!a || !b) { sap_free(a); sap_free(b); continue; }
    CHECK(sap_step(a, 6) == SAP_OK, "%s", sap_lastError());
    caller_graph_steps(b, 3, 2);
    sap_sync(a);
    sap_sync(b);
    const sapData *da = sap_data(a), *db = sap_data(b);
    if (loops[l][1]) {  // cuSOLVER's rounding differs from the warp Cholesky's
      check_arrays("qpos after a caller's graph (cusolver)", db->qpos, da->qpos, 8 * a->m->nq, 1e-8, 1e-8);
    } else {
      CHECK(!memcmp(da->qpos, db->qpos, sizeof(double) * 8 * a->m->nq), "%s: qpos after a caller's graph", loops[l][0]);
      CHECK(!memcmp(da->qvel, db->qvel, sizeof(double) * 8 * a->m->nv), "%s: qvel after a caller's graph", loops[l][0]);
    }
    sap_free(a);
    sap_free(b);
  }
#endif
}

/* stage timing: every stage gets a positive time, their sum fits in the total, and
 * the events change nothing in the results */
static void test_stage_timing(void) {
  if (!gpu_available()) SKIP("no usable GPU");
  sapSim* s[2] = {NULL, NULL};
  for (int timing = 0; timing < 2; timing++) {
    sapModel* m = NULL;
    if (sap_loadModel("scenes/humanoid.xml", &m) != SAP_OK) return;
    sapOptions o;
    sap_optionsDefault(&o);
    o.device = SAP_DEVICE_CUDA;
    o.stage_timing = timing;
    CHECK(sap_create(m, &o, 8, &s[timing]) == SAP_OK, "%s", sap_lastError());
    sap_freeModel(m);
    if (!s[timing]) return;
    sap_reset(s[timing], 0, NULL);
    CHECK(sap_step(s[timing], 10) == SAP_OK, "%s", sap_lastError());
  }
  sapTimers t;
  sap_timers(s[1], &t);
  double sum = t.kinematics + t.collision + t.free_motion + t.solve + t.integrate;
  CHECK(t.kinematics > 0 && t.collision > 0 && t.free_motion > 0 && t.solve > 0 && t.integrate > 0,
        "stage times %g %g %g %g %g", t.kinematics, t.collision, t.free_motion, t.solve, t.integrate);
  CHECK(sum <= t.total * 1.0001, "stages %g within the total %g", sum, t.total);
  sap_sync(s[0]);
  sap_sync(s[1]);
  CHECK(!memcmp(sap_data(s[0])->qpos, sap_data(s[1])->qpos, sizeof(double) * 8 * s[0]->m->nq),
        "timing changed the results");
  sap_free(s[0]);
  sap_free(s[1]);
}

/* the RL path on both backends: subset sets, masked resets to a keyframe, reading
 * poses after a qpos edit; the GPU moves only the arrays involved and must agree */
static void test_state_edits(void) {
  if (!gpu_available()) SKIP("no usable GPU");
  sapSim* sim[2] = {make("scenes/humanoid.xml", 6, "approx64", SAP_DEVICE_CPU, 1),
                    make("scenes/humanoid.xml", 6, "approx64", SAP_DEVICE_CUDA, 1)};
  if (!sim[0] || !sim[1]) goto done;
  int nq = sim[0]->m->nq, nv = sim[0]->m->nv;
  double qv[2 * 27], q[28], xpos[2][6 * 14 * 3], out[2][6 * 28], t[2][6];
  for (int i = 0; i < 2 * nv; i++) qv[i] = 0.3 * sin(i);
  int ids[2] = {2, 5}, one = 4;
  unsigned char mask[6] = {0, 1, 0, 1, 0, 0};
  for (int b = 0; b < 2; b++) {
    set_ctrl(sim[b]);
    sap_step(sim[b], 5);
    CHECK(sap_set(sim[b], SAP_FIELD_QVEL, ids, 2, qv) == SAP_OK, "%s", sap_lastError());
    CHECK(sap_reset(sim[b], 0, mask) == SAP_OK, "%s", sap_lastError());
    sap_get(sim[b], SAP_FIELD_QPOS, &one, 1, q);
    q[2] += 0.05;  /* lift world 4 */
    CHECK(sap_set(sim[b], SAP_FIELD_QPOS, &one, 1, q) == SAP_OK, "%s", sap_lastError());
    sap_get(sim[b], SAP_FIELD_XPOS, NULL, 6, xpos[b]);
    sap_step(sim[b], 5);
    sap_get(sim[b], SAP_FIELD_QPOS, NULL, 6, out[b]);
    sap_get(sim[b], SAP_FIELD_TIME, NULL, 6, t[b]);
  }
  check_arrays("xpos after a qpos edit", xpos[1], xpos[0], 6 * 14 * 3, 1e-12, 1e-12);
  check_arrays("qpos after edits and steps", out[1], out[0], 6 * nq, 1e-8, 1e-8);
  check_arrays("time", t[1], t[0], 6, 1e-15, 0);
  CHECK(fabs(t[0][1] - 5 * sim[0]->h) < 1e-12 && fabs(t[0][0] - 10 * sim[0]->h) < 1e-12,
        "masked reset restarted the clock of world 1 only (%g, %g)", t[0][1], t[0][0]);
done:
  sap_free(sim[0]);
  sap_free(sim[1]);
}

/* mocap bodies on both backends: per-world (subset) sets of mocap_pos and non-normalised
 * mocap_quat, poses read after the edit, steps with the paddle moving into the box, a masked
 * keyframe reset; the GPU moves mocap_pos/quat as state arrays and must agree */
static void test_mocap_edits(void) {
  if (!gpu_available()) SKIP("no usable GPU");
  enum { N = 4, NB = 5 };
  sapSim* sim[2] = {make("scenes/mocap_paddle.xml", N, "approx64", SAP_DEVICE_CPU, 1),
                    make("scenes/mocap_paddle.xml", N, "approx64", SAP_DEVICE_CUDA, 1)};
  if (!sim[0] || !sim[1]) goto done;
  int nq = sim[0]->m->nq;
  double xpos[2][N * NB * 3], q[2][N * 8], mp[2][N * 3], mq[2][N * 4], mp0[N * 3];
  int ids[3] = {3, 0, 1};
  unsigned char mask[N] = {0, 0, 1, 0};
  double quat[4] = {2, 0, 0, 0.3};  /* not normalised: a small yaw */
  for (int b = 0; b < 2; b++) {
    sap_get(sim[b], SAP_FIELD_MOCAP_POS, NULL, N, mp0);
    for (int k = 0; k < 40; k++) {
      double pos[3 * 3];
      for (int i = 0; i < 3; i++) {  /* worlds 3, 0, 1 push at 0.2, 0.4, 0.6 m/s; world 2 holds */
        memcpy(pos + 3 * i, mp0 + 3 * ids[i], sizeof(double) * 3);
        pos[3 * i] += 0.2 * (i + 1) * sim[b]->h * (k + 1);
      }
      CHECK(sap_set(sim[b], SAP_FIELD_MOCAP_POS, ids, 3, pos) == SAP_OK, "%s", sap_lastError());
      if (k == 20) CHECK(sap_set(sim[b], SAP_FIELD_MOCAP_QUAT, &ids[1], 1, quat) == SAP_OK, "%s", sap_lastError());
      if (k == 20) sap_get(sim[b], SAP_FIELD_XPOS, NULL, N, xpos[b]);
      CHECK(sap_step(sim[b], 1) == SAP_OK, "%s", sap_lastError());
    }
    sap_get(sim[b], SAP_FIELD_QPOS, NULL, N, q[b]);
    CHECK(sap_reset(sim[b], 0, mask) == SAP_OK, "%s", sap_lastError());
    sap_get(sim[b], SAP_FIELD_MOCAP_POS, NULL, N, mp[b]);
    sap_get(sim[b], SAP_FIELD_MOCAP_QUAT, NULL, N, mq[b]);
  }
  check_arrays("xpos after a mocap edit", xpos[1], xpos[0], N * NB * 3, 1e-12, 1e-12);
  check_arrays("qpos after pushes", q[1], q[0], N * nq, 1e-8, 1e-8);
  check_arrays("mocap_pos", mp[1], mp[0], N * 3, 0, 0);
  check_arrays("mocap_quat", mq[1], mq[0], N * 4, 0, 0);
  CHECK(mq[0][0] == 2 && mq[0][3] == 0.3, "world 0 keeps the quaternion as written");
  /* world 1's paddle moved 0.048 m into its box; world 2's held still */
  CHECK(q[0][8 * 1 + 1] > q[0][8 * 2 + 1] + 0.02, "the paddle of world 1 pushed its box (x %g vs %g)",
        q[0][8 * 1 + 1], q[0][8 * 2 + 1]);
done:
  sap_free(sim[0]);
  sap_free(sim[1]);
}

/* sensors (kernels/sensor.cu vs the CPU driver): sensordata after steps (pos/vel of the new
 * state, acc from the step's impulses read in the solver's scratch), after a masked reset and
 * a velocity edit; every solve layout that leaves the impulses in the scratch */
static void sensor_parity(const char* path, const char* const* kv, double tol) {
  enum { N = 4 };
  sapSim* sim[2] = {make_with(path, N, SAP_DEVICE_CPU, kv), make_with(path, N, SAP_DEVICE_CUDA, kv)};
  if (!sim[0] || !sim[1]) goto done;
  int nd = sim[0]->m->nsensordata, nv = sim[0]->m->nv;
  CHECK(nd > 0 && nd <= 512, "%s: nsensordata %d", path, nd);
  static double sd[2][3][N * 512];
  double qv[N * 64];
  for (int i = 0; i < N * nv; i++) qv[i] = 0.4 * cos(0.3 * i);
  unsigned char mask[N] = {0, 1, 0, 1};
  for (int b = 0; b < 2; b++) {
    set_ctrl(sim[b]);
    CHECK(sap_step(sim[b], 30) == SAP_OK, "%s", sap_lastError());
    sap_get(sim[b], SAP_FIELD_SENSORDATA, NULL, N, sd[b][0]);
    CHECK(sap_reset(sim[b], -1, mask) == SAP_OK, "%s", sap_lastError());
    CHECK(sap_set(sim[b], SAP_FIELD_QVEL, NULL, N, qv) == SAP_OK, "%s", sap_lastError());
    sap_get(sim[b], SAP_FIELD_SENSORDATA, NULL, N, sd[b][1]);
    CHECK(sap_step(sim[b], 10) == SAP_OK, "%s", sap_lastError());
    sap_get(sim[b], SAP_FIELD_SENSORDATA, NULL, N, sd[b][2]);
  }
  const char* when[3] = {"after steps", "after reset and set", "after more steps"};
  for (int k = 0; k < 3; k++) {
    char what[200];
    snprintf(what, sizeof(what), "%s %s %s sensordata %s", path, kv[0], kv[1] ? kv[1] : "", when[k]);
    check_arrays(what, sd[1][k], sd[0][k], N * nd, tol, tol);
  }
done:
  sap_free(sim[0]);
  sap_free(sim[1]);
}

static void test_sensor_parity(void) {
  if (!gpu_available()) SKIP("no usable GPU");
  const char* a64[] = {"preset=approx64", NULL};
  const char* drake[] = {"preset=drake", "solve_kernel=thread", NULL};
  const char* loop[] = {"preset=approx64", "newton_loop=while", NULL};
  const char* a32[] = {"preset=approx32", NULL};
  const char* graph[] = {"preset=approx64", "graph=1", NULL};
  sensor_parity("scenes/sensor_zoo.xml", a64, 1e-6);
  sensor_parity("scenes/sensor_zoo.xml", drake, 1e-6);
  sensor_parity("scenes/sensor_zoo.xml", loop, 1e-6);
  sensor_parity("scenes/sensor_zoo.xml", graph, 1e-6);
  sensor_parity("scenes/sensor_zoo.xml", a32, 1e-2);
  sensor_parity("scenes/ant_sensors.xml", a32, 1e-3);
  sensor_parity("scenes/act_zoo.xml", a64, 1e-6);  // actuatorfrc with act, muscles, implicit intvelocity
  // rangefinders: rays against every geom type, mesh triangles and heightfields on the device
  sensor_parity("scenes/rangefinder_zoo.xml", a64, 1e-6);
  // contact sensors (both stages: a fresh collision of the state, the step's list) and insidesite
  sensor_parity("scenes/contact_sensor_zoo.xml", a64, 1e-6);
  sensor_parity("scenes/contact_sensor_zoo.xml", a32, 1e-2);
  // limit forces: the scalar rows' tags and impulses in the solver's scratch (warp and thread solves)
  sensor_parity("scenes/limit_force.xml", a64, 1e-6);
  sensor_parity("scenes/limit_force.xml", drake, 1e-6);
  sensor_parity("scenes/limit_force.xml", a32, 1e-3);
  // sensors with a history: delays, intervals (the buffers recorded by the integration kernels)
  sensor_parity("scenes/sensor_delay.xml", a64, 1e-9);
}

/* per-world parameters (domain randomization): the same overrides on both backends
 * (worlds 1 and 5 every parameter, world 3 gravity and friction only) step alike; the
 * tables' first upload drops a captured graph, later sets reuse the device tables */
static void randomize_same(sapSim* c, sapSim* g) {
  const sapModel* m = c->m;
  int ids[3] = {1, 5, 3};
  for (int p = 0; p < SAP_NPARAM; p++) {
    int n = sap_paramSize(c, (sapParam)p);
    if (!n) continue;
    double* x = malloc(sizeof(double) * 2 * n);
    CHECK(sap_getParam(c, (sapParam)p, ids, 2, x) == SAP_OK, "%s", sap_lastError());
    int per = p == SAP_PARAM_BODY_INERTIA ? 3 : 1;  /* one factor per body keeps a + b >= c */
    for (int i = 0; i < 2 * n; i++) {
      double f = 1 + 0.4 * sin(1.3 * (i / per) + p);  /* 0.6 .. 1.4 of the model's value */
      x[i] = p == SAP_PARAM_GRAVITY ? x[i] * f + 0.3 * cos(i) : x[i] * f;
      if (p == SAP_PARAM_DOF_DAMPING) x[i] += 0.05;
    }
    CHECK(sap_setParam(c, (sapParam)p, ids, 2, x) == SAP_OK, "%s", sap_lastError());
    CHECK(sap_setParam(g, (sapParam)p, ids, 2, x) == SAP_OK, "%s", sap_lastError());
    free(x);
  }
  double grav[3] = {0.8, -0.3, -6};
  double* fr = malloc(sizeof(double) * 3 * m->ngeom);
  sap_getParam(c, SAP_PARAM_GEOM_FRICTION, ids + 2, 1, fr);
  for (int i = 0; i < 3 * m->ngeom; i += 3) fr[i] *= 0.3;
  sapSim* both[2] = {c, g};
  for (int k = 0; k < 2; k++) {
    CHECK(sap_setParam(both[k], SAP_PARAM_GRAVITY, ids + 2, 1, grav) == SAP_OK, "%s", sap_lastError());
    CHECK(sap_setParam(both[k], SAP_PARAM_GEOM_FRICTION, ids + 2, 1, fr) == SAP_OK, "%s", sap_lastError());
  }
  free(fr);
}

static void domrand_parity(const char* path, const char* const* kv, int nstep, double tol) {
  int n = 8;
  sapSim* c = make_with(path, n, SAP_DEVICE_CPU, kv);
  sapSim* g = make_with(path, n, SAP_DEVICE_CUDA, kv);
  if (!c || !g) goto done;
  CHECK(sap_step(g, 3) == SAP_OK && sap_step(c, 3) == SAP_OK, "%s", sap_lastError());  /* a graph, if any, captured */
  randomize_same(c, g);
  CHECK(sap_step(c, nstep) == SAP_OK, "%s", sap_lastError());
  CHECK(sap_step(g, nstep) == SAP_OK, "%s", sap_lastError());
  int nq = c->m->nq, nv = c->m->nv;
  double *qc = malloc(sizeof(double) * n * nq), *qg = malloc(sizeof(double) * n * nq);
  double *vc = malloc(sizeof(double) * n * nv), *vg = malloc(sizeof(double) * n * nv);
  sap_get(c, SAP_FIELD_QPOS, NULL, n, qc);
  sap_get(g, SAP_FIELD_QPOS, NULL, n, qg);
  sap_get(c, SAP_FIELD_QVEL, NULL, n, vc);
  sap_get(g, SAP_FIELD_QVEL, NULL, n, vg);
  char what[200];
  snprintf(what, sizeof(what), "%s randomized qpos", path);
  check_arrays(what, qg, qc, n * nq, tol, tol);
  snprintf(what, sizeof(what), "%s randomized qvel", path);
  check_arrays(what, vg, vc, n * nv, 10 * tol, 10 * tol);
  CHECK(memcmp(qc + nq, qc, sizeof(double) * nq) != 0, "%s: world 1 differs from world 0", path);
  /* back to the model on both backends: the same states after a reset */
  CHECK(sap_resetParam(c, -1, NULL, n) == SAP_OK && sap_resetParam(g, -1, NULL, n) == SAP_OK, "%s", sap_lastError());
  sap_reset(c, -1, NULL);
  sap_reset(g, -1, NULL);
  CHECK(sap_step(c, 10) == SAP_OK && sap_step(g, 10) == SAP_OK, "%s", sap_lastError());
  sap_get(c, SAP_FIELD_QPOS, NULL, n, qc);
  sap_get(g, SAP_FIELD_QPOS, NULL, n, qg);
  snprintf(what, sizeof(what), "%s after sap_resetParam qpos", path);
  check_arrays(what, qg, qc, n * nq, tol, tol);
  free(qc); free(qg); free(vc); free(vg);
done:
  sap_free(c);
  sap_free(g);
}

/* MuJoCo's com-based body outputs (option body_outputs, kernels/body_out.h on sensor.cu's kernels vs
 * the CPU driver), with xfrc_applied on every body: after steps (the step's contact forces and
 * drives), after a masked reset and a velocity edit (the new state's), after more steps */
static void body_outputs_parity(const char* path, const char* const* kv, double tol) {
  enum { N = 4, NF = 6 };
  sapSim* sim[2] = {make_with(path, N, SAP_DEVICE_CPU, kv), make_with(path, N, SAP_DEVICE_CUDA, kv)};
  if (!sim[0] || !sim[1]) goto done;
  int nb = sim[0]->m->nbody, nv = sim[0]->m->nv;
  CHECK(nb <= 32 && nv <= 64, "%s: nbody %d, nv %d", path, nb, nv);
  sapField f[NF] = {SAP_FIELD_CFRC_EXT, SAP_FIELD_CVEL, SAP_FIELD_CINERT, SAP_FIELD_SUBTREE_COM,
                    SAP_FIELD_QFRC_ACTUATOR, SAP_FIELD_QVEL};
  static double out[2][3][NF][N * 320];
  double qv[N * 64], xf[N * 32 * 6];
  for (int i = 0; i < N * nv; i++) qv[i] = 0.4 * cos(0.3 * i);
  for (int i = 0; i < N * nb * 6; i++) xf[i] = (i % (6 * nb)) < 6 ? 0 : 0.8 * sin(0.7 * i);
  unsigned char mask[N] = {0, 1, 0, 1};
  for (int b = 0; b < 2; b++) {
    CHECK(sap_set(sim[b], SAP_FIELD_XFRC_APPLIED, NULL, N, xf) == SAP_OK, "%s", sap_lastError());
    for (int k = 0; k < 3; k++) {
      if (k == 1) {
        CHECK(sap_reset(sim[b], -1, mask) == SAP_OK, "%s", sap_lastError());
        CHECK(sap_set(sim[b], SAP_FIELD_QVEL, NULL, N, qv) == SAP_OK, "%s", sap_lastError());
      } else {
        CHECK(sap_step(sim[b], k ? 10 : 30) == SAP_OK, "%s", sap_lastError());
      }
      for (int i = 0; i < NF; i++) sap_get(sim[b], f[i], NULL, N, out[b][k][i]);
    }
  }
  const char* when[3] = {"after steps", "after reset and set", "after more steps"};
  for (int k = 0; k < 3; k++)
    for (int i = 0; i < NF; i++) {
      char what[200];
      snprintf(what, sizeof(what), "%s %s %s %s", path, kv[0], sap_fieldName(f[i]), when[k]);
      check_arrays(what, out[1][k][i], out[0][k][i], N * sap_fieldSize(sim[0], f[i]), tol, tol);
    }
done:
  sap_free(sim[0]);
  sap_free(sim[1]);
}

static void test_body_outputs_parity(void) {
  if (!gpu_available()) SKIP("no usable GPU");
  const char* a64[] = {"preset=approx64", "body_outputs=1", NULL};
  const char* a32[] = {"preset=approx32", "body_outputs=1", NULL};
  const char* graph[] = {"preset=approx64", "body_outputs=1", "graph=1", NULL};
  body_outputs_parity("scenes/ant.xml", a64, 1e-6);
  body_outputs_parity("scenes/ant.xml", graph, 1e-6);
  body_outputs_parity("scenes/box_stack.xml", a64, 1e-6);
  body_outputs_parity("scenes/servo_arm.xml", a64, 1e-6);  /* drives: qfrc_actuator from impulses */
  /* drives along refsite, slider-crank and spatial-tendon moments */
  body_outputs_parity("scenes/refsite_servo.xml", a64, 1e-6);
  body_outputs_parity("scenes/slider_crank.xml", a64, 1e-6);
  body_outputs_parity("scenes/tendon_sidesite.xml", a64, 1e-6);
  body_outputs_parity("scenes/fourbar.xml", a64, 1e-6);             /* connect forces in cfrc_ext */
  body_outputs_parity("scenes/arm_gripper_mocap.xml", a64, 1e-6);   /* a weld to a mocap body */
  body_outputs_parity("scenes/humanoid.xml", a32, 1e-2);
}

static void test_domrand_parity(void) {
  if (!gpu_available()) SKIP("no usable GPU");
  static const char* const a64[] = {"preset=approx64", NULL};
  static const char* const a64_graph[] = {"preset=approx64", "graph=1", NULL};
  static const char* const drake_loop[] = {"preset=drake", "newton_loop=while", "graph=1", NULL};
  static const char* const thread[] = {"preset=approx64", "solve_kernel=thread", "contact_point=contact_midpoint", NULL};
  domrand_parity("scenes/humanoid.xml", a64, 40, 1e-6);
  domrand_parity("scenes/servo_arm.xml", a64_graph, 40, 1e-6);
  domrand_parity("scenes/quadruped_roll.xml", drake_loop, 40, 1e-6);
  domrand_parity("scenes/box_stack.xml", thread, 40, 1e-6);
}

/* the thread-per-world solve (solve_kernel=thread) runs the CPU's sapw_ solve: the settled cube
 * pile with every contact kept is one island of 27 trees, factored block-sparse over its trees
 * (kernels/sap_block_t.h) on both backends */
static void test_parity_block_sparse(void) {
  if (!gpu_available()) SKIP("no usable GPU");
  static const char* const kv[] = {"preset=approx64", "solve_kernel=thread", "ncon_max=1000", NULL};
  int n = 4;
  sapSim* c = make_with("scenes/box_pile.xml", n, SAP_DEVICE_CPU, kv);
  sapSim* g = make_with("scenes/box_pile.xml", n, SAP_DEVICE_CUDA, kv);
  if (c && g) {
    CHECK(sap_step(c, 200) == SAP_OK && sap_step(g, 200) == SAP_OK, "%s", sap_lastError());
    int nq = c->m->nq;
    double *qc = malloc(sizeof(double) * n * nq), *qg = malloc(sizeof(double) * n * nq);
    sap_get(c, SAP_FIELD_QPOS, NULL, n, qc);
    sap_get(g, SAP_FIELD_QPOS, NULL, n, qg);
    check_arrays("box_pile block-sparse thread solve qpos", qg, qc, n * nq, 1e-6, 1e-6);
    free(qc);
    free(qg);
  }
  sap_free(c);
  sap_free(g);
}

/* writes through device addresses (sap_deviceArray) and sap_commit, steps on a caller's
 * stream (sap_stepStream): the same edits through sap_set on the CPU backend must give the
 * same states; a non-finite qpos written on the device freezes only its world */
#ifdef SAP_HAVE_CUDA
static void test_device_arrays(void) {
  if (!gpu_available()) SKIP("no usable GPU");
  enum { N = 5 };
  sapSim* sim[2] = {make("scenes/ant.xml", N, "approx64", SAP_DEVICE_CPU, 1),
                    make("scenes/ant.xml", N, "approx64", SAP_DEVICE_CUDA, 1)};
  cudaStream_t caller = NULL;
  if (!sim[0] || !sim[1]) goto done;
  int nq = sim[0]->m->nq, nv = sim[0]->m->nv, nu = sim[0]->m->nu, count = 0;
  sapArrayType type;
  CHECK(sap_deviceArray(sim[0], "qpos", &count, &type) == NULL, "a CPU batch has no device arrays");
  double* dq = (double*)sap_deviceArray(sim[1], "qpos", &count, &type);
  CHECK(dq == sim[1]->gpu.d.qpos && count == nq && type == SAP_ARRAY_F64, "device qpos %p (%d)", (void*)dq, count);
  double* dv = (double*)sap_deviceArray(sim[1], "qvel", &count, &type);
  double* du = (double*)sap_deviceArray(sim[1], "ctrl", &count, &type);
  int* dflags = (int*)sap_deviceArray(sim[1], "world_flags", &count, &type);
  CHECK(dv && du && dflags && type == SAP_ARRAY_I32, "device qvel, ctrl, world_flags");
  CHECK(sap_deviceArray(sim[1], "nope", &count, &type) == NULL && strstr(sap_lastError(), "'nope'"),
        "unknown array named: %s", sap_lastError());
  CHECK(cudaStreamCreate(&caller) == cudaSuccess, "caller stream");
  double q[N * 15], v[N * 14], u[N * 8], out[2][N * 15], vout[2][N * 14], xpos[2][N * 64 * 3];
  CHECK(nq == 15 && nv == 14 && nu == 8 && sim[0]->m->nbody <= 64, "ant sizes");
  for (int b = 0; b < 2; b++) {
    sap_get(sim[b], SAP_FIELD_QPOS, NULL, N, q);
    for (int w = 0; w < N; w++) {
      q[w * nq + 2] += 0.02 * w;              /* heights */
      q[w * nq + 7] = 0.1 * sin(w + 1.0);     /* first hip */
    }
    for (int i = 0; i < N * nv; i++) v[i] = 0.2 * cos(0.7 * i);
    for (int i = 0; i < N * nu; i++) u[i] = 0.6 * sin(0.31 * i);
    if (b == 0) {
      sap_set(sim[0], SAP_FIELD_QPOS, NULL, N, q);
      sap_set(sim[0], SAP_FIELD_QVEL, NULL, N, v);
      sap_set(sim[0], SAP_FIELD_CTRL, NULL, N, u);
    } else {
      cudaMemcpyAsync(dq, q, sizeof(q), cudaMemcpyHostToDevice, caller);
      cudaMemcpyAsync(dv, v, sizeof(v), cudaMemcpyHostToDevice, caller);
      cudaMemcpyAsync(du, u, sizeof(u), cudaMemcpyHostToDevice, caller);
      CHECK(sap_commit(sim[1], NULL, caller) == SAP_OK, "commit: %s", sap_lastError());
    }
    sap_get(sim[b], SAP_FIELD_XPOS, NULL, N, xpos[b]);
    CHECK(sap_stepStream(sim[b], 6, caller) == SAP_OK, "stepStream: %s", sap_lastError());
    CHECK(sap_streamWait(sim[b], caller) == SAP_OK, "streamWait: %s", sap_lastError());
    if (b == 1) {
      /* read back on the caller's stream, after the steps */
      cudaMemcpyAsync(out[1], dq, sizeof(out[1]), cudaMemcpyDeviceToHost, caller);
      cudaMemcpyAsync(vout[1], dv, sizeof(vout[1]), cudaMemcpyDeviceToHost, caller);
      cudaStreamSynchronize(caller);
    } else {
      sap_get(sim[0], SAP_FIELD_QPOS, NULL, N, out[0]);
      sap_get(sim[0], SAP_FIELD_QVEL, NULL, N, vout[0]);
    }
  }
  check_arrays("xpos after a device qpos write and commit", xpos[1], xpos[0], N * sim[0]->m->nbody * 3, 1e-12, 1e-12);
  check_arrays("qpos after device writes and caller-stream steps", out[1], out[0], N * nq, 1e-8, 1e-8);
  check_arrays("qvel after device writes and caller-stream steps", vout[1], vout[0], N * nv, 1e-7, 1e-7);
  CHECK(out[0][2] != q[2], "the steps moved world 0");

  /* a NaN qpos of world 3 written on the device: commit names it, freezes world 3 only */
  double nan_q = NAN, held[15], after[15], other[2][15];
  sap_get(sim[1], SAP_FIELD_QPOS, (int[]){3}, 1, held);
  sap_get(sim[1], SAP_FIELD_QPOS, (int[]){1}, 1, other[0]);
  cudaMemcpy(dq + 3 * nq + 8, &nan_q, sizeof(double), cudaMemcpyHostToDevice);
  CHECK(sap_commit(sim[1], NULL, NULL) == SAP_ERR_NONFINITE && strstr(sap_lastError(), "qpos of world 3, index 8"),
        "commit names the bad value: %s", sap_lastError());
  sapWorldInfo wi[N];
  sap_worldInfo(sim[1], NULL, N, wi);
  CHECK((wi[3].flags & SAP_WORLD_NONFINITE) && !(wi[1].flags & SAP_WORLD_NONFINITE), "world 3 frozen only (%d, %d)",
        wi[3].flags, wi[1].flags);
  CHECK(sap_stepStream(sim[1], 3, NULL) == SAP_OK, "%s", sap_lastError());
  sap_get(sim[1], SAP_FIELD_QPOS, (int[]){3}, 1, after);
  sap_get(sim[1], SAP_FIELD_QPOS, (int[]){1}, 1, other[1]);
  CHECK(isnan(after[8]) && after[0] == held[0] && after[9] == held[9], "the frozen world was left as it is");
  CHECK(other[1][0] != other[0][0] || other[1][2] != other[0][2], "the other worlds stepped");
  /* a valid commit of world 3 after fixing the value releases it */
  cudaMemcpy(dq + 3 * nq + 8, &held[8], sizeof(double), cudaMemcpyHostToDevice);
  unsigned char mask[N] = {0, 0, 0, 1, 0};
  CHECK(sap_commit(sim[1], mask, NULL) == SAP_OK, "%s", sap_lastError());
  sap_worldInfo(sim[1], NULL, N, wi);
  CHECK(!(wi[3].flags & SAP_WORLD_NONFINITE), "world 3 released (%d)", wi[3].flags);
done:
  if (caller) cudaStreamDestroy(caller);
  sap_free(sim[0]);
  sap_free(sim[1]);
}
#else
static void test_device_arrays(void) { SKIP("built without CUDA"); }
#endif

/* issue 16: line_search=newton_wolfe and warm_start=extrapolate (the integration keeps v_n in
 * vnext on both backends) in parity, on the warp and the thread solve kernels; the iteration
 * statistics counted on the device match the CPU's (the same world-steps; a stop can move
 * by one iteration where a residual sits at the tolerance, so the means agree within 0.05) */
static void test_newton_options(void) {
  if (!gpu_available()) SKIP("no usable GPU");
  extra_opt[0] = "line_search=newton_wolfe";
  extra_opt[1] = "warm_start=extrapolate";
  parity("scenes/humanoid.xml", "drake", 1, 20, 1e-6);
  parity("scenes/box_stack.xml", "approx64", 1, 40, 1e-6);
  parity("scenes/ant.xml", "approx64", 1, 40, 1e-6);
  solve_kernel = "thread";
  parity("scenes/humanoid.xml", "drake", 1, 20, 1e-6);
  solve_kernel = "warp";
  sapSim* c = make("scenes/humanoid.xml", 16, "approx64", SAP_DEVICE_CPU, 1);
  sapSim* g = make("scenes/humanoid.xml", 16, "approx64", SAP_DEVICE_CUDA, 1);
  if (c && g) {
    set_ctrl(c);
    set_ctrl(g);
    sap_step(c, 40);
    sap_step(g, 40);
    sapIterStats sc, sg;
    CHECK(sap_iterStats(c, &sc) == SAP_OK && sap_iterStats(g, &sg) == SAP_OK, "%s", sap_lastError());
    CHECK(sc.world_steps == 16 * 40 && sg.world_steps == sc.world_steps, "world-steps cpu %g gpu %g", sc.world_steps,
          sg.world_steps);
    CHECK_CLOSE(sg.newton_mean, sc.newton_mean, 0.05, 0, "Newton iterations per world-step");
    CHECK_CLOSE(sg.ls_mean, sc.ls_mean, 0.1, 0, "line-search evaluations per world-step");
    CHECK(sc.newton_mean > 0, "the humanoid iterates");
  }
  sap_free(c);
  sap_free(g);
  extra_opt[0] = extra_opt[1] = NULL;
}

/* issue 19: sap_run on a GPU batch (a sap_step and a fetch of the diagnostics per step, frames
 * through sap_get) leaves the same state as sap_step, bit for bit, and its frame callback sees the
 * device's state */
static sapStatus frame_time(sapSim* s, long step, void* user) {
  double* t = (double*)user;
  int w0 = 0;
  (void)step;
  return sap_get(s, SAP_FIELD_TIME, &w0, 1, t);
}

static void test_run_on_gpu(void) {
  if (!gpu_available()) SKIP("no usable GPU");
  sapSim* a = make("scenes/box_stack.xml", 4, "approx32", SAP_DEVICE_CUDA, 1);
  sapSim* b = make("scenes/box_stack.xml", 4, "approx32", SAP_DEVICE_CUDA, 1);
  if (a && b) {
    sapRunOptions ro;
    sapRunSummary sum;
    double t = -1;
    sap_runOptionsDefault(&ro);
    ro.max_steps = -1;
    ro.end_time = 0.1;
    ro.frame_every = 5;
    ro.frame_fn = frame_time;
    ro.frame_user = &t;
    sapStatus rs = sap_run(a, &ro, &sum);
    CHECK(rs == SAP_OK, "sap_run: %d %s", rs, sap_lastError());
    sap_step(b, 20);
    CHECK(sum.steps == 20 && sum.frames == 5 && sum.stop == SAP_RUN_STOP_END_TIME, "%ld steps, %ld frames", sum.steps,
          sum.frames);
    CHECK_CLOSE(t, 0.1, 1e-12, 0, "the last frame's time");
    sap_sync(a);
    sap_sync(b);
    const sapData *x = sap_data(a), *y = sap_data(b);
    CHECK(!memcmp(x->qpos, y->qpos, sizeof(double) * 4 * a->m->nq) &&
              !memcmp(x->qvel, y->qvel, sizeof(double) * 4 * a->m->nv), "sap_run vs sap_step on the GPU");
  }
  sap_free(a);
  sap_free(b);
}

/* ---- issue 19: the step retry on the GPU (kernels/retry.cu) ------------------------------- */

#define RT_NW 5

/* the retry batch's worlds: world 0 is the scene's (one retry at h/2), world 1's light box
 * weighs 3 kg (it never fails; tests/test_simloop.c test_retry_per_world), world 2's top box
 * starts 5 cm higher, world 3's light box weighs 10 g (it goes down to h/4), world 4 has a NaN
 * applied force (every step refused: the plain step) */
static void retry_worlds(sapSim* s) {
  int w1 = 1, w2 = 2, w3 = 3, w4 = 4;
  double mass[8], q[32];
  CHECK(s->m->nbody == 4 && s->m->nq == 21, "clamp_stiff: %d bodies, nq %d", s->m->nbody, s->m->nq);
  sap_getParam(s, SAP_PARAM_BODY_MASS, &w1, 1, mass);
  mass[2] = 3.0;  /* body 2: the light box */
  CHECK(sap_setParam(s, SAP_PARAM_BODY_MASS, &w1, 1, mass) == SAP_OK, "%s", sap_lastError());
  sap_get(s, SAP_FIELD_QPOS, &w2, 1, q);
  q[16] += 0.05;  /* the top box's height (its free joint: qpos 14..20) */
  CHECK(sap_set(s, SAP_FIELD_QPOS, &w2, 1, q) == SAP_OK, "%s", sap_lastError());
  sap_getParam(s, SAP_PARAM_BODY_MASS, &w3, 1, mass);
  mass[2] = 0.01;
  CHECK(sap_setParam(s, SAP_PARAM_BODY_MASS, &w3, 1, mass) == SAP_OK, "%s", sap_lastError());
  /* sap_set refuses a NaN force: written into the data (and its device twin) directly */
  sap_sync(s);
  s->d.qfrc_applied[(size_t)w4 * s->m->nv] = NAN;
  CHECK(sapb_push(s, s->d.qfrc_applied, sizeof(double) * RT_NW * s->m->nv) == SAP_OK, "%s", sap_lastError());
}

/* Oracle: the CPU backend's retry (host/step.c step_world_retry; tests/test_simloop.c checks it
 * against the same scene at h/2). scenes/clamp_stiff.xml with contact_beta=1e-6 fails at h
 * (README "Step retry"); the emulated GPU, with graph, solve kernel, Newton loop and one more
 * option (extra: the free-motion kernel, or body_outputs=1) as given, must take the same
 * substeps: per step and world the flags, the Newton iterations and the state (qpos, qvel,
 * time, and cfrc_ext with body_outputs: impulse / the world's h; within tol: 0 is bitwise), and
 * at the end the retry counters and qacc_free (the h of each world's last substep). Worlds that fail next to worlds that do not
 * (and those frozen or done) exercise the masked rounds. */
static void retry_parity(const char* kernel, const char* graph, const char* loop, const char* extra, int nstep,
                         double tol) {
  solve_kernel = kernel;
  extra_opt[0] = "contact_beta=1e-6";
  extra_opt[1] = "retry_depth=3";
  extra_opt[2] = graph;
  extra_opt[3] = loop;
  extra_opt[4] = extra;
  sapSim* c = make("scenes/clamp_stiff.xml", RT_NW, "approx32", SAP_DEVICE_CPU, 1);
  sapSim* g = make("scenes/clamp_stiff.xml", RT_NW, "approx32", SAP_DEVICE_CUDA, 1);
  extra_opt[0] = extra_opt[1] = extra_opt[2] = extra_opt[3] = extra_opt[4] = NULL;
  solve_kernel = "warp";
  if (!c || !g) goto done;
  retry_worlds(c);
  retry_worlds(g);
  int nq = c->m->nq, nv = c->m->nv, same_flags = 1, same_iter = 1;
  double qc[RT_NW * 21], qg[RT_NW * 21], vc[RT_NW * 18], vg[RT_NW * 18], tc[RT_NW], tg[RT_NW], worst = 0;
  for (int k = 0; k < nstep; k++) {
    CHECK(sap_step(c, 1) == SAP_OK && sap_step(g, 1) == SAP_OK, "step %d: %s", k, sap_lastError());
    sapWorldInfo ic[RT_NW], ig[RT_NW];
    sap_worldInfo(c, NULL, RT_NW, ic);
    sap_worldInfo(g, NULL, RT_NW, ig);
    for (int w = 0; w < RT_NW; w++) {
      if (ic[w].flags != ig[w].flags && same_flags) {
        CHECK(0, "%s %s %s step %d world %d: flags cpu %x gpu %x", kernel, graph, loop, k, w, ic[w].flags, ig[w].flags);
        same_flags = 0;
      }
      if (tol == 0 && ic[w].newton_iter != ig[w].newton_iter && same_iter) {
        CHECK(0, "%s %s step %d world %d: Newton iterations cpu %d gpu %d", kernel, graph, k, w, ic[w].newton_iter,
              ig[w].newton_iter);
        same_iter = 0;
      }
    }
    sap_get(c, SAP_FIELD_QPOS, NULL, RT_NW, qc);
    sap_get(g, SAP_FIELD_QPOS, NULL, RT_NW, qg);
    sap_get(c, SAP_FIELD_QVEL, NULL, RT_NW, vc);
    sap_get(g, SAP_FIELD_QVEL, NULL, RT_NW, vg);
    sap_get(c, SAP_FIELD_TIME, NULL, RT_NW, tc);
    sap_get(g, SAP_FIELD_TIME, NULL, RT_NW, tg);
    for (int i = 0; i < RT_NW * nq; i++) worst = fmax(worst, isnan(qg[i] - qc[i]) ? INFINITY : fabs(qg[i] - qc[i]));
    for (int i = 0; i < RT_NW * nv; i++) worst = fmax(worst, isnan(vg[i] - vc[i]) ? INFINITY : fabs(vg[i] - vc[i]));
    for (int w = 0; w < RT_NW; w++) worst = fmax(worst, fabs(tg[w] - tc[w]));
    if (g->opt.body_outputs) {  /* the contact forces of each world's last substep: impulse / its h */
      double fc[RT_NW * 6 * 4], fg[RT_NW * 6 * 4];
      sap_get(c, SAP_FIELD_CFRC_EXT, NULL, RT_NW, fc);
      sap_get(g, SAP_FIELD_CFRC_EXT, NULL, RT_NW, fg);
      for (int i = 0; i < RT_NW * 6 * 4; i++) worst = fmax(worst, isnan(fg[i] - fc[i]) ? INFINITY : fabs(fg[i] - fc[i]));
    }
  }
  printf("  retry %s %s %s %s: |gpu - cpu| qpos, qvel, time (cfrc_ext) %.3g over %d steps", kernel, graph, loop,
         extra, worst, nstep);
  CHECK(worst <= tol, "%s %s %s: |gpu - cpu| %g > %g", kernel, graph, loop, worst, tol);
  sapWorldRetry rc[RT_NW], rg[RT_NW];
  CHECK(sap_worldRetry(c, NULL, RT_NW, rc) == SAP_OK && sap_worldRetry(g, NULL, RT_NW, rg) == SAP_OK, "%s",
        sap_lastError());
  int retried = 0, clean = 0;
  for (int w = 0; w < RT_NW; w++) {
    CHECK(rc[w].retries == rg[w].retries && rc[w].level == rg[w].level && rc[w].level_max == rg[w].level_max &&
              rc[w].h_min == rg[w].h_min,
          "world %d: retries %lld / %lld, level %d / %d, level_max %d / %d, h_min %g / %g (cpu / gpu)", w,
          rc[w].retries, rg[w].retries, rc[w].level, rg[w].level, rc[w].level_max, rg[w].level_max, rc[w].h_min,
          rg[w].h_min);
    retried += rc[w].retries > 0;
    clean += rc[w].retries == 0;
    printf("%s world %d: %lld retries, h_min %g", w ? "," : ";", w, rg[w].retries, rg[w].h_min);
  }
  printf("\n");
  CHECK(retried >= 2 && clean >= 1 && rg[1].retries == 0 && rg[3].level_max == 2, "worlds retried %d, never "
        "retried %d, world 3 down to h / 2^%d: the masking is exercised only with these", retried, clean,
        rg[3].level_max);
  sapWorldInfo i4;
  int w4 = 4;
  sap_worldInfo(g, &w4, 1, &i4);
  CHECK(i4.flags == SAP_WORLD_BADINPUT && tg[4] == 0, "world 4: the plain step refuses it (flags %x, time %g)",
        i4.flags, tg[4]);
  double ac[RT_NW * 18], ag[RT_NW * 18];
  sap_get(c, SAP_FIELD_QACC_FREE, NULL, RT_NW, ac);
  sap_get(g, SAP_FIELD_QACC_FREE, NULL, RT_NW, ag);
  char what[96];
  snprintf(what, sizeof(what), "retry %s %s qacc_free", kernel, graph);
  check_arrays(what, ag, ac, RT_NW * nv, tol > 0 ? 1e3 * tol : 0, tol > 0 ? 1e-6 : 0);
  /* sap_retryClear and a reset reach the device's counters */
  CHECK(sap_retryClear(g) == SAP_OK && sap_worldRetry(g, NULL, RT_NW, rg) == SAP_OK && rg[0].retries == 0 &&
            rg[0].level_max == rg[0].level, "sap_retryClear on the GPU");
  sap_reset(g, -1, NULL);
  CHECK(sap_worldRetry(g, NULL, RT_NW, rg) == SAP_OK && rg[0].level == 0 && rg[3].level == 0,
        "a reset returns the GPU's worlds to h");
done:
  sap_free(c);
  sap_free(g);
}

static void test_retry_parity(void) {
  if (!gpu_available()) SKIP("no usable GPU");
  /* the thread solve runs the CPU's per-world code: bitwise */
  retry_parity("thread", "graph=0", "newton_loop=kernel", "body_outputs=1", 25, 0);
  retry_parity("thread", "graph=1", "newton_loop=kernel", "free_motion_kernel=thread", 25, 0);
  /* the warp solve (its fp32 lane sums round differently: 6.5e-9 seen) and its per-iteration
   * loop (a while node inside the rounds' while node) */
  retry_parity("warp", "graph=0", "newton_loop=kernel", "free_motion_kernel=warp", 25, 1e-7);
  retry_parity("warp", "graph=1", "newton_loop=while", "free_motion_kernel=warp", 25, 1e-7);
}

/* Oracle: the same batch with retry off. A scene that never fails (the box stack, 4 worlds
 * with different starts) runs bitwise as without the retry on the GPU, with and without graphs
 * and with stage timing (its round loop adds each round's stage times), and counts no retry */
static void test_retry_never_fails(void) {
  if (!gpu_available()) SKIP("no usable GPU");
  const char* graphs[3] = {"graph=0", "graph=1", "stage_timing=1"};
  for (int gi = 0; gi < 3; gi++) {
    extra_opt[0] = graphs[gi];
    sapSim* a = make("scenes/box_stack.xml", 4, "approx32", SAP_DEVICE_CUDA, 1);
    extra_opt[1] = "retry_depth=3";
    sapSim* b = make("scenes/box_stack.xml", 4, "approx32", SAP_DEVICE_CUDA, 1);
    extra_opt[0] = extra_opt[1] = NULL;
    if (!a || !b) {
      sap_free(a);
      sap_free(b);
      continue;
    }
    int nq = a->m->nq, nv = a->m->nv;
    double* q = malloc(sizeof(double) * 4 * nq);
    sap_get(a, SAP_FIELD_QPOS, NULL, 4, q);
    for (int w = 1; w < 4; w++) q[w * nq + 2] += 0.01 * w;  /* different starts */
    sap_set(a, SAP_FIELD_QPOS, NULL, 4, q);
    sap_set(b, SAP_FIELD_QPOS, NULL, 4, q);
    CHECK(sap_step(a, 30) == SAP_OK && sap_step(b, 30) == SAP_OK, "%s", sap_lastError());
    sap_sync(a);
    sap_sync(b);
    const sapData *x = sap_data(a), *y = sap_data(b);
    CHECK(!memcmp(x->qpos, y->qpos, sizeof(double) * 4 * nq) && !memcmp(x->qvel, y->qvel, sizeof(double) * 4 * nv) &&
              !memcmp(x->vnext, y->vnext, sizeof(double) * 4 * nv) && !memcmp(x->time, y->time, sizeof(double) * 4),
          "%s: retry_depth=3 changed a batch that never fails", graphs[gi]);
    sapWorldInfo ia[4], ib[4];
    sapWorldRetry rb[4];
    sap_worldInfo(a, NULL, 4, ia);
    sap_worldInfo(b, NULL, 4, ib);
    sap_worldRetry(b, NULL, 4, rb);
    for (int w = 0; w < 4; w++)
      CHECK(ia[w].flags == ib[w].flags && ia[w].newton_iter == ib[w].newton_iter && rb[w].retries == 0 &&
                rb[w].level_max == 0, "%s world %d: flags %x / %x, iterations %d / %d, retries %lld", graphs[gi], w,
            ia[w].flags, ib[w].flags, ia[w].newton_iter, ib[w].newton_iter, rb[w].retries);
    sapTimers t;
    sap_timers(b, &t);
    CHECK(!b->opt.stage_timing || (t.kinematics > 0 && t.collision > 0 && t.solve > 0 && t.integrate > 0),
          "stage times with the retry: %g %g %g %g", t.kinematics, t.collision, t.solve, t.integrate);
    free(q);
    sap_free(a);
    sap_free(b);
  }
}

int main(void) {
  RUN(test_parity_free_motion);
  RUN(test_parity_contact);
  RUN(test_collision_list);
  RUN(test_gpu_invariants);
  RUN(test_graph_replay);
  RUN(test_caller_graph);
  RUN(test_stream_per_sim);
  RUN(test_newton_loop_launches);
  RUN(test_newton_loop_cap);
  RUN(test_solve_layouts);
  RUN(test_free_motion_kernels);
  RUN(test_cusolver_parity);
  RUN(test_caller_graph_loops);
  RUN(test_stage_timing);
  RUN(test_state_edits);
  RUN(test_mocap_edits);
  RUN(test_sensor_parity);
  RUN(test_body_outputs_parity);
  RUN(test_domrand_parity);
  RUN(test_parity_block_sparse);
  RUN(test_device_arrays);
  RUN(test_newton_options);
  RUN(test_run_on_gpu);
  RUN(test_retry_parity);
  RUN(test_retry_never_fails);
#ifdef SAP_CUDA_SHIM
  return check_summary("test_gpu (CUDA emulated on the CPU)");
#else
  return check_summary("test_gpu");
#endif
}
