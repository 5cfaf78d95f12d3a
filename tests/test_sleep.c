#define _POSIX_C_SOURCE 200809L
/* MuJoCo 4's sleeping trees (<flag sleep="enable"/>, kernels/sleep.h) on the CPU backend against
 * MuJoCo 4.0 in lockstep: each step MuJoCo's data gets sapsim's start state (qpos, qvel, time,
 * ctrl, applied forces, tree_asleep; its stored poses made those of that qpos), both step, and
 * the sleep decisions (tree_asleep, exactly) must agree, sleeping trees keep qvel = 0 and their
 * qpos in both. Free bodies of several shapes, sizes and masses (decades apart) fall on a plane
 * and come to rest, a two-link arm settles, a motor-driven pusher woken by an applied force
 * pushes a resting box (wake by contact); the run must see sleeps and wakes. Also: the reset
 * values under the policies never / allowed / init (MuJoCo's mj_resetData), bad tree_asleep
 * buffers refused by name with nothing changed, and device=cuda refused. */
#include <string.h>
#include <unistd.h>

#include <mujoco/mujoco.h>

#include "fixture.h"

void mj_updateSleep(const mjModel* m, mjData* d);  /* exported by libmujoco 4.0, not in its headers */

static int verbose(void) { return getenv("SAPSIM_TEST_VERBOSE") != NULL; }

static const char* SCENE =
    "<mujoco><option timestep='0.004' sleep_tolerance='0.02'><flag sleep='enable'/></option>"
    "<worldbody><geom type='plane' size='5 5 0.1'/>"
    "<body name='s' pos='0 0 0.3'><freejoint/><geom type='sphere' size='0.03' mass='0.01'/></body>"
    "<body name='b' pos='0.5 0 0.4' euler='10 20 30'><freejoint/><geom type='box' size='0.1 0.07 0.04' mass='1'/></body>"
    "<body name='c' pos='1.0 0.3 0.5' euler='0 80 10'><freejoint/><geom type='capsule' size='0.03 0.12' mass='100'/></body>"
    "<body name='big' pos='1.5 -0.5 0.8' euler='30 0 0'><freejoint/><geom type='box' size='0.3 0.2 0.05' mass='20'/></body>"
    "<body name='t' pos='-0.6 0 0.05'><freejoint/><geom type='box' size='0.05 0.05 0.05' mass='0.5' contype='3' conaffinity='3'/></body>"
    "<body name='arm' pos='0 1.5 1'><joint name='a1' type='hinge' axis='0 1 0' damping='0.3'/>"
    "<geom type='capsule' fromto='0 0 0 0 0 -0.3' size='0.02' mass='0.3'/>"
    "<body pos='0 0 -0.3'><joint name='a2' type='hinge' axis='0 1 0' damping='0.3'/>"
    "<geom type='capsule' fromto='0 0 0 0 0 -0.2' size='0.02' mass='0.2'/></body></body>"
    "<body name='pusher' pos='-1.0 0 0.05'><joint name='px' type='slide' axis='1 0 0' damping='5'/>"
    "<geom type='box' size='0.05 0.05 0.05' mass='1' contype='2' conaffinity='2'/></body>"
    "</worldbody><actuator><motor joint='px' gear='1'/></actuator></mujoco>";

static mjModel* mj_from(const char* xml) {
  char err[256];
  const char* p = fx_tempFile("sleep.xml", xml);
  mjModel* mj = p ? mj_loadXML(p, NULL, err, sizeof(err)) : NULL;
  if (p) unlink(p);
  if (!mj) fprintf(stderr, "  mujoco: %s\n", err);
  return mj;
}

/* MuJoCo's data at sapsim's start state of world 0 */
static void set_mujoco(const mjModel* mj, mjData* md, sapSim* s) {
  int nt = (int)mj->ntree;
  double ta[64];
  sap_get(s, SAP_FIELD_QPOS, NULL, 1, md->qpos);
  sap_get(s, SAP_FIELD_QVEL, NULL, 1, md->qvel);
  sap_get(s, SAP_FIELD_TIME, NULL, 1, &md->time);
  sap_get(s, SAP_FIELD_CTRL, NULL, 1, md->ctrl);
  sap_get(s, SAP_FIELD_QFRC_APPLIED, NULL, 1, md->qfrc_applied);
  sap_get(s, SAP_FIELD_XFRC_APPLIED, NULL, 1, md->xfrc_applied);
  sap_get(s, SAP_FIELD_TREE_ASLEEP, NULL, 1, ta);
  /* every pose of that qpos (all awake for the kinematics), then the sleep state */
  for (int t = 0; t < nt; t++) md->tree_asleep[t] = -(1 + mjMINAWAKE);
  mj_updateSleep(mj, md);
  mj_kinematics(mj, md);
  for (int t = 0; t < nt; t++) md->tree_asleep[t] = (int)ta[t];
  mj_updateSleep(mj, md);
}

typedef struct { int steps, sleeps, wakes, contact_wakes, asleep_steps, mismatch; double pose_err; } lockStats;

/* n lockstep steps; hook(k, s) edits sapsim's inputs before step k */
static lockStats lockstep(const mjModel* mj, sapSim* s, int n, void (*hook)(int, sapSim*)) {
  mjData* md = mj_makeData(mj);
  int nt = (int)mj->ntree, nq = (int)mj->nq, nv = (int)mj->nv;
  lockStats st = {0, 0, 0, 0, 0, 0, 0};
  double ta0[64], ta1[64], q0[64], q1[64], v1[64], xp[3 * 64], xq[4 * 64];
  int nb = (int)mj->nbody;
  for (int k = 0; k < n; k++) {
    if (hook) hook(k, s);
    sap_get(s, SAP_FIELD_TREE_ASLEEP, NULL, 1, ta0);
    sap_get(s, SAP_FIELD_QPOS, NULL, 1, q0);
    set_mujoco(mj, md, s);
    mj_step(mj, md);
    CHECK(sap_step(s, 1) == SAP_OK, "step %d: %s", k, sap_lastError());
    sap_get(s, SAP_FIELD_TREE_ASLEEP, NULL, 1, ta1);
    sap_get(s, SAP_FIELD_QPOS, NULL, 1, q1);
    sap_get(s, SAP_FIELD_QVEL, NULL, 1, v1);
    /* the step's poses (those of its start qpos), sleeping trees' kept ones included, against
     * MuJoCo's of the same qpos */
    sap_get(s, SAP_FIELD_XPOS, NULL, 1, xp);
    sap_get(s, SAP_FIELD_XQUAT, NULL, 1, xq);
    for (int i = 0; i < 3 * nb; i++) st.pose_err = fmax(st.pose_err, fabs(xp[i] - md->xpos[i]));
    for (int i = 0; i < 4 * nb; i++) st.pose_err = fmax(st.pose_err, fabs(xq[i] - md->xquat[i]));
    st.steps++;
    for (int t = 0; t < nt; t++) {
      if ((int)ta1[t] != md->tree_asleep[t]) {
        if (st.mismatch++ < 5)
          CHECK(0, "step %d tree %d: tree_asleep %d (was %d), MuJoCo %d", k, t, (int)ta1[t], (int)ta0[t],
                md->tree_asleep[t]);
        continue;
      }
      if (ta0[t] < 0 && ta1[t] >= 0) st.sleeps++;
      if (ta0[t] >= 0 && ta1[t] < 0) {
        st.wakes++;
        st.contact_wakes += ta1[t] != -(1 + mjMINAWAKE);
      }
      if (ta1[t] < 0) continue;
      st.asleep_steps++;
      /* a sleeping tree: qvel exactly 0, qpos that of the step's start, in both */
      int adr = mj->tree_dofadr[t], num = mj->tree_dofnum[t];
      for (int j = adr; j < adr + num; j++)
        if (v1[j] != 0 || md->qvel[j] != 0) {
          CHECK(0, "step %d tree %d asleep: qvel[%d] sapsim %g MuJoCo %g", k, t, j, v1[j], md->qvel[j]);
          break;
        }
      for (int b = mj->tree_bodyadr[t]; b < mj->tree_bodyadr[t] + mj->tree_bodynum[t]; b++)
        for (int jn = mj->body_jntadr[b]; jn < mj->body_jntadr[b] + mj->body_jntnum[b]; jn++) {
          int a = mj->jnt_qposadr[jn], len = mj->jnt_type[jn] == mjJNT_FREE ? 7 : mj->jnt_type[jn] == mjJNT_BALL ? 4 : 1;
          for (int i = a; i < a + len; i++)
            if (q1[i] != q0[i] || md->qpos[i] != q0[i]) {
              CHECK(0, "step %d tree %d asleep: qpos[%d] moved (sapsim %.17g MuJoCo %.17g start %.17g)", k, t, i,
                    q1[i], md->qpos[i], q0[i]);
              i = a + len;
            }
        }
    }
  }
  (void)nq;
  (void)nv;
  mj_deleteData(md);
  return st;
}

/* the pusher: woken by an applied force at step 150, its motor on; off at 400 */
static void push_hook(int k, sapSim* s) {
  int nb = sap_fieldSize(s, SAP_FIELD_XFRC_APPLIED) / 6, pusher = nb - 1;
  double* x = (double*)calloc((size_t)nb * 6, sizeof(double));
  double u = 0;
  if (k == 150 || k == 400) {
    if (k == 150) x[6 * pusher] = 0.5, u = 3;
    sap_set(s, SAP_FIELD_XFRC_APPLIED, NULL, 1, x);
    sap_set(s, SAP_FIELD_CTRL, NULL, 1, &u);
  }
  /* a kick on the sleeping arm at step 600 (wake by perturbation), lifted at 601 */
  if (k == 600 || k == 601) {
    x[6 * 7] = k == 600 ? 1 : 0;
    sap_set(s, SAP_FIELD_XFRC_APPLIED, NULL, 1, x);
  }
  free(x);
}

static void test_lockstep(void) {
  sapModel* m = NULL;
  CHECK(sap_loadModelString(SCENE, &m) == SAP_OK, "load: %s", sap_lastError());
  mjModel* mj = mj_from(SCENE);
  if (!m || !mj) { sap_freeModel(m); mj_deleteModel(mj); return; }
  CHECK(m->sleep == 1 && m->ntree == 7 && m->ntree == (int)mj->ntree, "sleep %d, %d trees", m->sleep, m->ntree);
  sapSim* s = fx_simModel(m, 1, "preset=approx64");
  double q[64];
  sap_get(s, SAP_FIELD_QPOS, NULL, 1, q);
  q[mj->jnt_qposadr[5]] = 0.4;  /* the arm off its rest */
  q[mj->jnt_qposadr[6]] = -0.3;
  sap_set(s, SAP_FIELD_QPOS, NULL, 1, q);
  lockStats st = lockstep(mj, s, 900, push_hook);
  if (verbose())
    fprintf(stderr, "  %d steps: %d sleeps, %d wakes (%d by contact), %d tree-steps asleep, %d mismatches\n", st.steps,
            st.sleeps, st.wakes, st.contact_wakes, st.asleep_steps, st.mismatch);
  if (verbose()) fprintf(stderr, "  worst body pose difference %.3g\n", st.pose_err);
  CHECK(st.mismatch == 0, "%d sleep decisions differ from MuJoCo's", st.mismatch);
  CHECK(st.pose_err < 1e-12, "body poses differ from MuJoCo's at the same qpos by %g", st.pose_err);
  CHECK(st.sleeps >= 5 && st.wakes >= 2 && st.contact_wakes >= 1 && st.asleep_steps > 1000,
        "the run sees sleeps (%d), wakes (%d, %d by contact) and sleeping trees (%d tree-steps)", st.sleeps, st.wakes,
        st.contact_wakes, st.asleep_steps);
  sap_free(s);
  sap_freeModel(m);
  mj_deleteModel(mj);
}

/* the reset values under the policies, and a lockstep from them */
static void test_policies(void) {
  const char* xml =
      "<mujoco><option timestep='0.004' sleep_tolerance='0.02'><flag sleep='enable'/></option><worldbody>"
      "<geom type='plane' size='5 5 0.1'/>"
      "<body name='a' pos='0 0 0.1' sleep='init'><freejoint/><geom size='0.1'/></body>"
      "<body name='b' pos='1 0 0.3' sleep='never'><freejoint/><geom type='box' size='0.1 0.2 0.05'/></body>"
      "<body name='c' pos='2 0 0.3' sleep='allowed'><freejoint/><geom type='capsule' size='0.05 0.1' mass='3'/></body>"
      "<body name='d' pos='3 0 0.3'><freejoint/><geom size='0.2' mass='0.02'/></body>"
      "</worldbody></mujoco>";
  sapModel* m = NULL;
  CHECK(sap_loadModelString(xml, &m) == SAP_OK, "load: %s", sap_lastError());
  mjModel* mj = mj_from(xml);
  if (!m || !mj) { sap_freeModel(m); mj_deleteModel(mj); return; }
  mjData* md = mj_makeData(mj);
  mj_resetData(mj, md);
  sapSim* s = fx_simModel(m, 1, "preset=approx64");
  double ta[8];
  sap_get(s, SAP_FIELD_TREE_ASLEEP, NULL, 1, ta);
  for (int t = 0; t < m->ntree; t++)
    CHECK((int)ta[t] == md->tree_asleep[t] && m->tree_sleep_policy[t] == mj->tree_sleep_policy[t],
          "reset tree %d: %d, MuJoCo %d (policy %d)", t, (int)ta[t], md->tree_asleep[t], m->tree_sleep_policy[t]);
  CHECK(md->tree_asleep[0] == 0 && md->tree_asleep[1] == -11, "the oracle's init/never values");
  lockStats st = lockstep(mj, s, 300, NULL);
  CHECK(st.mismatch == 0 && st.sleeps >= 2, "policies: %d mismatches, %d sleeps", st.mismatch, st.sleeps);
  CHECK(st.pose_err < 1e-12, "policies: body poses differ from MuJoCo's at the same qpos by %g", st.pose_err);
  sap_get(s, SAP_FIELD_TREE_ASLEEP, NULL, 1, ta);
  CHECK(ta[1] < 0, "the never tree stays awake (%g)", ta[1]);
  /* a reset gives the reset values again */
  sap_reset(s, -1, NULL);
  sap_get(s, SAP_FIELD_TREE_ASLEEP, NULL, 1, ta);
  CHECK((int)ta[0] == 0 && (int)ta[2] == md->tree_asleep[2], "reset again: %g %g", ta[0], ta[2]);
  mj_deleteData(md);
  sap_free(s);
  sap_freeModel(m);
  mj_deleteModel(mj);
}

/* malformed tree_asleep: refused by name, nothing changed */
static void test_bad_input(void) {
  sapModel* m = NULL;
  CHECK(sap_loadModelString(SCENE, &m) == SAP_OK, "load: %s", sap_lastError());
  if (!m) return;
  sapSim* s = fx_simModel(m, 2, "preset=approx64");
  int nt = m->ntree;
  double before[16], after[16], bad[16];
  sap_get(s, SAP_FIELD_TREE_ASLEEP, NULL, 2, before);
  struct { int tree; double v; const char* what; } cases[] = {
      {2, 4, "do not cycle back"}, {3, 3.5, "not an integer"}, {1, -12, "not an integer in"},
      {0, 99, "not an integer in"}, {4, NAN, "not an integer"}};
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
    memcpy(bad, before, sizeof(double) * 2 * nt);
    bad[nt + cases[c].tree] = cases[c].v;  /* world 1 */
    sapStatus r = sap_set(s, SAP_FIELD_TREE_ASLEEP, NULL, 2, bad);
    char tree[32];
    snprintf(tree, sizeof(tree), "tree %d", cases[c].tree);
    CHECK(r == SAP_ERR_ARG && strstr(sap_lastError(), cases[c].what) && strstr(sap_lastError(), tree),
          "case %zu refused naming %s: %s", c, tree, sap_lastError());
    sap_get(s, SAP_FIELD_TREE_ASLEEP, NULL, 2, after);
    CHECK(!memcmp(before, after, sizeof(double) * 2 * nt), "case %zu: nothing changed", c);
  }
  /* a good two-tree cycle is taken, and the trees stay put */
  memcpy(bad, before, sizeof(double) * 2 * nt);
  bad[0] = 1, bad[1] = 0;
  CHECK(sap_set(s, SAP_FIELD_TREE_ASLEEP, NULL, 2, bad) == SAP_OK, "cycle 0 -> 1 -> 0: %s", sap_lastError());
  double q0[64], q1[64];
  int w0 = 0;
  sap_get(s, SAP_FIELD_QPOS, &w0, 1, q0);
  sap_step(s, 3);
  sap_get(s, SAP_FIELD_QPOS, &w0, 1, q1);
  sap_get(s, SAP_FIELD_TREE_ASLEEP, &w0, 1, after);
  CHECK(after[0] == 1 && after[1] == 0 && !memcmp(q0, q1, sizeof(double) * 14), "set asleep trees stay asleep, put");
  /* the CUDA backend refuses sleep by name */
  sapSim* g = NULL;
  sapOptions o;
  sap_optionsDefault(&o);
  o.device = SAP_DEVICE_CUDA;
  CHECK(sap_create(m, &o, 1, &g) == SAP_ERR_UNSUPPORTED && strstr(sap_lastError(), "sleep"), "device=cuda: %s",
        sap_lastError());
  sap_free(g);
  sap_free(s);
  sap_freeModel(m);
}

/* trees put to sleep through sap_set while they move: a sleeping tree's step keeps the poses
 * it has, so those must be the poses of the qpos it sleeps at (MuJoCo's mj_kinematics of that
 * qpos), not the last step's start poses */
static void test_set_asleep_poses(void) {
  sapModel* m = NULL;
  CHECK(sap_loadModelString(SCENE, &m) == SAP_OK, "load: %s", sap_lastError());
  mjModel* mj = mj_from(SCENE);
  if (!m || !mj) { sap_freeModel(m); mj_deleteModel(mj); return; }
  mjData* md = mj_makeData(mj);
  sapSim* s = fx_simModel(m, 1, "preset=approx64");
  CHECK(sap_step(s, 20) == SAP_OK, "fall: %s", sap_lastError());  /* every free body moving */
  double ta[16], xp[3 * 64], xq[4 * 64];
  sap_get(s, SAP_FIELD_TREE_ASLEEP, NULL, 1, ta);
  ta[0] = 1, ta[1] = 3, ta[3] = 0;  /* sphere, box and the big box in one cycle */
  CHECK(sap_set(s, SAP_FIELD_TREE_ASLEEP, NULL, 1, ta) == SAP_OK, "set asleep: %s", sap_lastError());
  double v[64];  /* sleeping trees have qvel 0 (else they wake) */
  sap_get(s, SAP_FIELD_QVEL, NULL, 1, v);
  for (int t = 0; t < 4; t++)
    for (int j = mj->tree_dofadr[t]; t != 2 && j < mj->tree_dofadr[t] + mj->tree_dofnum[t]; j++) v[j] = 0;
  CHECK(sap_set(s, SAP_FIELD_QVEL, NULL, 1, v) == SAP_OK, "qvel: %s", sap_lastError());
  sap_get(s, SAP_FIELD_QPOS, NULL, 1, md->qpos);
  mj_kinematics(mj, md);
  CHECK(sap_step(s, 2) == SAP_OK, "step asleep: %s", sap_lastError());
  sap_get(s, SAP_FIELD_TREE_ASLEEP, NULL, 1, ta);
  CHECK(ta[0] == 1 && ta[1] == 3 && ta[3] == 0, "the set trees sleep on (%g %g %g)", ta[0], ta[1], ta[3]);
  sap_get(s, SAP_FIELD_XPOS, NULL, 1, xp);
  sap_get(s, SAP_FIELD_XQUAT, NULL, 1, xq);
  double err = 0;
  for (int t = 0; t < 4; t++)
    for (int b = mj->tree_bodyadr[t]; t != 2 && b < mj->tree_bodyadr[t] + mj->tree_bodynum[t]; b++) {
      for (int k = 0; k < 3; k++) err = fmax(err, fabs(xp[3 * b + k] - md->xpos[3 * b + k]));
      for (int k = 0; k < 4; k++) err = fmax(err, fabs(xq[4 * b + k] - md->xquat[4 * b + k]));
    }
  CHECK(err < 1e-12, "sleeping trees' poses differ from MuJoCo's at their qpos by %g", err);
  mj_deleteData(md);
  sap_free(s);
  sap_freeModel(m);
  mj_deleteModel(mj);
}

int main(void) {
  RUN(test_lockstep);
  RUN(test_policies);
  RUN(test_bad_input);
  RUN(test_set_asleep_poses);
  return check_summary("test_sleep");
}
