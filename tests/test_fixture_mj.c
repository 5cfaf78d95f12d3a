/* The MuJoCo-oracle helpers of tests/fixture_mj.h checked against MuJoCo itself: fx_mjForwardAt,
 * fx_mjStepAt and fx_mjSetState give, bit for bit, the mjData of the same copies written inline
 * followed by mj_forward / mj_step on an mj_copyData of the same prior data (every array of the
 * buffer and the used arena: contacts, constraint rows), for every choice of NULL among qpos,
 * qvel, ctrl (and act), at random states of a scene with free, ball, hinge and slide joints,
 * contacts, a mocap body and a filtered actuator; a field given NULL, and act, time, mocap and
 * the applied forces, keep their prior values bit for bit. */
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "fixture_mj.h"

static const char* XML =
    "<mujoco><option timestep='0.004'/><worldbody><geom type='plane' size='5 5 .1'/>"
    "<body name='m' mocap='true' pos='0 0 2'><geom type='box' size='.1 .1 .1' contype='0' conaffinity='0'/></body>"
    "<body pos='0 0 .3'><freejoint/><geom type='box' size='.2 .1 .05'/>"
    "<body pos='.3 0 0'><joint type='ball'/><geom type='capsule' size='.05' fromto='0 0 0 .3 0 0'/>"
    "<body pos='.3 0 0'><joint name='h' type='hinge' axis='0 1 0'/><geom size='.05'/>"
    "<body pos='0 0 .1'><joint name='s' type='slide' axis='0 0 1' range='-.2 .2'/><geom size='.03'/><site name='ms'/>"
    "</body></body></body></body></worldbody>"
    "<actuator><motor name='a0' joint='h'/><general joint='s' dyntype='filter' dynprm='0.05' gainprm='10'/>"
    "<position joint='h' kp='20'/></actuator>"
    "<sensor><jointpos joint='h'/><actuatorfrc actuator='a0'/><accelerometer site='ms'/></sensor></mujoco>";

static void fill(double* x, int n, double lo, double hi) {
  for (int i = 0; i < n; i++) x[i] = check_uniform(lo, hi);
}

/* prior data: every input at random, as a previous use of md would leave it */
static void prior(const mjModel* mj, mjData* md) {
  fx_randomQpos(mj, md->qpos);
  fill(md->qvel, mj->nv, -2, 2);
  fill(md->ctrl, mj->nu, -1, 1);
  fill(md->act, mj->na, -1, 1);
  fill(md->mocap_pos, 3 * mj->nmocap, -1, 1);
  fill(md->xfrc_applied, 6 * mj->nbody, -1, 1);
  fill(md->qfrc_applied, mj->nv, -1, 1);
  md->time = check_uniform(0, 10);
}

/* whether a and b hold the same data: every buffer array and the used arena, bit for bit */
static int same_data(const mjData* a, const mjData* b) {
  return a->nbuffer == b->nbuffer && !memcmp(a->buffer, b->buffer, a->nbuffer) && a->ncon == b->ncon &&
         a->nefc == b->nefc && a->parena == b->parena && !memcmp(a->arena, b->arena, a->parena) &&
         a->time == b->time;
}

static int same(const double* a, const double* b, int n) { return !n || !memcmp(a, b, sizeof(double) * n); }

/* helper (mode 0 forward, 1 step, 2 fx_mjSetState with act then mj_forward) against the inline
 * copies, for every NULL pattern (bit k of mask: array k given) */
static void compare(int mode) {
  mjModel* mj = fx_mjModel(XML);
  if (!mj) return;
  CHECK(mj->nq != mj->nv && mj->na > 0 && mj->nmocap > 0, "scene layout nq %d nv %d na %d", (int)mj->nq, (int)mj->nv, (int)mj->na);
  mjData *md = mj_makeData(mj), *ref = mj_makeData(mj), *before = mj_makeData(mj);
  double q[32], v[32], u[8], a[8];
  int nstate = 0, ncontact = 0, ndiffer = 0, nmask = mode == 2 ? 16 : 8;
  for (int st = 0; st < 24; st++)
    for (int mask = 0; mask < nmask; mask++) {
      prior(mj, md);
      fx_randomQpos(mj, q);
      q[2] = check_uniform(-0.1, 1);  // the free body near the floor or on it
      fill(v, mj->nv, -3, 3);
      fill(u, mj->nu, -1.5, 1.5);
      fill(a, mj->na, -1, 1);
      const double* qp = mask & 1 ? q : NULL;
      const double* vp = mask & 2 ? v : NULL;
      const double* up = mask & 4 ? u : NULL;
      const double* ap = mask & 8 ? a : NULL;
      /* the arena's unwritten bytes (padding, rows a call sizes but fills in part) are whatever
       * malloc or an earlier call left: zeroed in both, so that its used part compares */
      memset(md->arena, 0, md->narena);
      memset(ref->arena, 0, ref->narena);
      mj_copyData(before, mj, md);
      mj_copyData(ref, mj, md);
      /* the oracle: the copies written out, then MuJoCo's own call */
      if (qp) mju_copy(ref->qpos, q, mj->nq);
      if (vp) mju_copy(ref->qvel, v, mj->nv);
      if (up) mju_copy(ref->ctrl, u, mj->nu);
      if (ap) mju_copy(ref->act, a, mj->na);
      if (mode == 1) mj_step(mj, ref);
      else mj_forward(mj, ref);
      if (mode == 0) fx_mjForwardAt(mj, md, qp, vp, up);
      if (mode == 1) fx_mjStepAt(mj, md, qp, vp, up);
      if (mode == 2) {
        fx_mjSetState(mj, md, qp, vp, up, ap);
        mj_forward(mj, md);
      }
      CHECK(same_data(md, ref), "mode %d state %d mask %d: mjData differs from the inline oracle", mode, st, mask);
      ndiffer += !same_data(md, before);
      ncontact += md->ncon > 0;
      nstate++;
      if (mode == 1) continue;  // a step moves qpos, qvel, act, time
      /* what was not given keeps its prior value; what was given is the input */
      CHECK(same(md->qpos, qp ? q : before->qpos, mj->nq), "mode %d mask %d: qpos", mode, mask);
      CHECK(same(md->qvel, vp ? v : before->qvel, mj->nv), "mode %d mask %d: qvel", mode, mask);
      CHECK(same(md->ctrl, up ? u : before->ctrl, mj->nu), "mode %d mask %d: ctrl", mode, mask);
      CHECK(same(md->act, ap ? a : before->act, mj->na), "mode %d mask %d: act", mode, mask);
      CHECK(md->time == before->time && same(md->mocap_pos, before->mocap_pos, 3 * mj->nmocap) &&
                same(md->xfrc_applied, before->xfrc_applied, 6 * mj->nbody) &&
                same(md->qfrc_applied, before->qfrc_applied, mj->nv),
            "mode %d mask %d: time, mocap or applied forces changed", mode, mask);
    }
  /* the comparison sees contacts, and a call changes the data (so it cannot pass vacuously) */
  CHECK(ncontact > nstate / 8 && ndiffer == nstate, "mode %d: %d of %d states with contacts, %d changed", mode,
        ncontact, nstate, ndiffer);
  if (getenv("SAPSIM_TEST_VERBOSE"))
    printf("  %s: %d calls bit for bit as inline (%d with contacts)\n",
           mode == 0 ? "fx_mjForwardAt" : mode == 1 ? "fx_mjStepAt" : "fx_mjSetState+mj_forward", nstate, ncontact);
  mj_deleteData(md);
  mj_deleteData(ref);
  mj_deleteData(before);
  mj_deleteModel(mj);
}

static void test_forward_at(void) { compare(0); }
static void test_step_at(void) { compare(1); }
static void test_set_state(void) { compare(2); }

int main(void) {
  RUN(test_forward_at);
  RUN(test_step_at);
  RUN(test_set_state);
  return check_summary("test_fixture_mj");
}
