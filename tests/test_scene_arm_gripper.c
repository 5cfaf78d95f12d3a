#define _POSIX_C_SOURCE 200809L
/* scenes/arm_gripper_mocap.xml over 1 s beside MuJoCo 4 on the same MJCF: the mocap target
 * (welded to the hand) descends 3 cm, the gripper closes on the cube, the target lifts 12 cm,
 * then moves 10 cm sideways while turning 30 degrees about z; the arm servos are given the
 * measured joint angles every step (pure damping), as in teleoperation. Oracles: the target
 * path itself (each simulator's hand against it), the cube's rise against the hand's, and
 * MuJoCo 4 for the whole trajectory. sapsim's weld is near-rigid (lag 2 u h behind a target
 * moving at u); MuJoCo's is soft (solref 0.02 1: the hand trails by about 2 u x 0.02 s and
 * sags under the cube's inertia), so the two hands differ by about MuJoCo's own lag. */
#include <unistd.h>

#include <mujoco/mujoco.h>

#include "check.h"
#include "sapsim/sapsim.h"

#define SCENE "scenes/arm_gripper_mocap.xml"

static int verbose(void) { return getenv("SAPSIM_TEST_VERBOSE") != NULL; }

static double smooth(double x) {
  x = x < 0 ? 0 : x > 1 ? 1 : x;
  return 0.5 - 0.5 * cos(3.14159265358979323846 * x);
}

/* target pose and gripper command at time t; *speed: the target's speed */
static void target(double t, double* p, double* q, double* grip) {
  p[0] = 0.3;
  p[1] = 0.1 * smooth((t - 0.7) / 0.3);
  p[2] = 0.13 - 0.03 * smooth(t / 0.2) + 0.12 * smooth((t - 0.4) / 0.3);
  double th = 30 * 3.14159265358979323846 / 180 * smooth((t - 0.7) / 0.3);
  // q = qz(th) * q0, q0 = 90 degrees about y (the hand points down)
  double c = cos(th / 2), s = sin(th / 2), a = 0.70710678118654752;
  q[0] = c * a;
  q[1] = -s * a;
  q[2] = c * a;
  q[3] = s * a;
  *grip = 0.04 * smooth((t - 0.2) / 0.15);
}

static double dist3(const double* a, const double* b) {
  return sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
}

static void run(const char* preset) {
  sapModel* m = NULL;
  CHECK(sap_loadModel(SCENE, &m) == SAP_OK, "%s", sap_lastError());
  char err[512];
  mjModel* mj = mj_loadXML(SCENE, NULL, err, sizeof(err));
  CHECK(mj != NULL, "mujoco: %s", err);
  if (!m || !mj) { sap_freeModel(m); mj_deleteModel(mj); return; }
  mjData* md = mj_makeData(mj);
  sapOptions o;
  sap_optionsDefault(&o);
  o.device = SAP_DEVICE_CPU;
  sap_optionsSet(&o, "preset", preset);
  sapSim* s = NULL;
  CHECK(sap_create(m, &o, 1, &s) == SAP_OK, "%s", sap_lastError());
  if (!s) { sap_freeModel(m); mj_deleteData(md); mj_deleteModel(mj); return; }
  CHECK(m->neq == 2 && m->eq_type[0] == SAP_EQ_WELD && m->nmocap == 1, "weld + joint coupling, one mocap body");
  int hand = mj_name2id(mj, mjOBJ_BODY, "hand"), cube = mj_name2id(mj, mjOBJ_BODY, "cube");
  int fl = mj->jnt_qposadr[mj_name2id(mj, mjOBJ_JOINT, "finger_left")];
  int fr = mj->jnt_qposadr[mj_name2id(mj, mjOBJ_JOINT, "finger_right")];
  double h = m->timestep, qpos[16], xpos[12 * 3], ctrl[7], x0 = 0, x0_mj = 0;
  double lag = 0, lag_mj = 0, diff = 0, cdiff = 0, coup = 0, coup_mj = 0;
  double hand_rise = 0, cube_rise = 0, cube_rise_mj = 0, hand_rise_mj = 0, diff_end = 0;
  int ok = 1, n = (int)(1 / h + 0.5);
  for (int k = 1; k <= n && ok; k++) {
    double p[3], q[4], grip;
    target(k * h, p, q, &grip);
    sap_set(s, SAP_FIELD_MOCAP_POS, NULL, 1, p);
    sap_set(s, SAP_FIELD_MOCAP_QUAT, NULL, 1, q);
    memcpy(md->mocap_pos, p, sizeof(p));
    memcpy(md->mocap_quat, q, sizeof(q));
    // servos follow the measured joints (damping only), the gripper closes
    sap_get(s, SAP_FIELD_QPOS, NULL, 1, qpos);
    for (int j = 0; j < 6; j++) ctrl[j] = qpos[j];
    ctrl[6] = grip;
    sap_set(s, SAP_FIELD_CTRL, NULL, 1, ctrl);
    for (int j = 0; j < 6; j++) md->ctrl[j] = md->qpos[j];
    md->ctrl[6] = grip;
    if (sap_step(s, 1) != SAP_OK) ok = 0;
    mj_step(mj, md);
    // sapsim's xpos are those of the step's start (as mj_step's): compare after a forward pass
    sap_get(s, SAP_FIELD_QPOS, NULL, 1, qpos);
    sap_set(s, SAP_FIELD_QPOS, NULL, 1, qpos);
    mj_forward(mj, md);
    sap_get(s, SAP_FIELD_XPOS, NULL, 1, xpos);
    const double *hs = xpos + 3 * hand, *hm = md->xpos + 3 * hand;
    if (k == 1) x0 = xpos[3 * cube + 2], x0_mj = md->xpos[3 * cube + 2];
    double e = dist3(hs, p), em = dist3(hm, p), dd = dist3(hs, hm);
    if (e > lag) lag = e;
    if (em > lag_mj) lag_mj = em;
    if (dd > diff) diff = dd;
    if (fabs(xpos[3 * cube + 2] - md->xpos[3 * cube + 2]) > cdiff) cdiff = fabs(xpos[3 * cube + 2] - md->xpos[3 * cube + 2]);
    if (fabs(qpos[fl] - qpos[fr]) > coup) coup = fabs(qpos[fl] - qpos[fr]);
    if (fabs(md->qpos[fl] - md->qpos[fr]) > coup_mj) coup_mj = fabs(md->qpos[fl] - md->qpos[fr]);
    if (k == n) {
      hand_rise = hs[2] - 0.13, hand_rise_mj = hm[2] - 0.13;
      cube_rise = xpos[3 * cube + 2] - x0, cube_rise_mj = md->xpos[3 * cube + 2] - x0_mj;
      diff_end = dd;
    }
  }
  CHECK(ok, "%s: steps", preset);
  // the hand follows the target with the near-rigid lag: 2 u h at the path's top speed
  // (0.12 m lift in 0.3 s: u = 0.628 m/s, 2 u h = 2.5e-3 m), with 20% for the turn
  double u = 0.12 * 3.14159265358979323846 / 2 / 0.3;
  CHECK(lag < 1.2 * 2 * u * h, "%s: hand off the target by %.3g m (2 u h = %.3g m)", preset, lag, 2 * u * h);
  // the cube is lifted with the hand (the target rises 9 cm net): it rises within 5 mm of it
  CHECK(fabs(cube_rise - hand_rise - 0.03) < 5e-3 && cube_rise > 0.08,
        "%s: cube rose %.4g m with the hand's %.4g m (+0.03 m of descent)", preset, cube_rise, hand_rise);
  // the fingers stay coupled (near-rigid joint row)
  CHECK(coup < 1e-4, "%s: finger coupling |q_l - q_r| up to %.3g m (MuJoCo 4: %.3g m)", preset, coup, coup_mj);
  // beside MuJoCo 4: the hands differ by no more than MuJoCo's own lag behind the target plus
  // sapsim's, and the cubes end within 5 mm in height
  CHECK(diff <= lag_mj + lag + 1e-3, "%s: hands differ by %.3g m; lags: sapsim %.3g, MuJoCo 4 %.3g", preset, diff, lag,
        lag_mj);
  CHECK(fabs(cube_rise - cube_rise_mj) < 5e-3, "%s: cube rise %.4g m, MuJoCo 4 %.4g m", preset, cube_rise,
        cube_rise_mj);
  if (verbose())
    fprintf(stderr,
            "  %s: hand vs target max %.3g m (MuJoCo 4 %.3g m); hands differ max %.3g m, at 1 s %.3g m; cube rise "
            "%.4g m (MuJoCo 4 %.4g m) with the hand's %.4g m (MuJoCo 4 %.4g m), cube height differs max %.3g m; finger "
            "coupling %.2g m (MuJoCo 4 %.2g m)\n",
            preset, lag, lag_mj, diff, diff_end, cube_rise, cube_rise_mj, hand_rise, hand_rise_mj, cdiff, coup, coup_mj);
  sap_free(s);
  sap_freeModel(m);
  mj_deleteData(md);
  mj_deleteModel(mj);
}

static void test_arm_gripper_vs_mujoco(void) {
  run("approx64");
  run("drake");
  run("approx32");
}

int main(void) {
  RUN(test_arm_gripper_vs_mujoco);
  return check_summary("test_scene_arm_gripper");
}
