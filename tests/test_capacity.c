/* Contacts beyond the capacity ncon_max (the deepest are kept, kernels/collision.h) and the
 * overflow flag (kernels/sap_world_t.h sapw_droppedIdle): the flag is cleared only when every
 * dropped contact is shown idle at the answer (cone region 0), so a world-step without the flag
 * must be the step with every contact. Oracle: the same state stepped with a capacity that
 * holds all contacts; each step of the small-capacity sim starts from the large one's state.
 * Scenes: the settled cube pile (its 324 speculative side and edge contacts dropped and shown
 * idle), and a cube thrown down onto a resting one with a capacity of 4 (its closing contacts
 * dropped: flagged, and the answer does differ). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fixture.h"
#include "sim.h"

typedef struct {
  int steps, dropped, shown_idle, flagged, differ;
  double worst_idle;  /* largest |dv| / max |v| in steps shown idle */
} Tally;

static Tally lockstep(const char* scene, const char* opts_small, const char* opts_big, int n) {
  Tally t = {0, 0, 0, 0, 0, 0};
  sapSim* a = fx_sim(scene, 1, opts_big);
  sapSim* b = fx_sim(scene, 1, opts_small);
  if (!a || !b) goto done;
  if (sap_model(a)->nkey > 0) sap_reset(a, 0, NULL);  // the scene's keyframe (its velocities)
  int nq = sap_model(a)->nq, nv = sap_model(a)->nv;
  double *q = malloc(sizeof(double) * (nq + 3 * nv)), *v = q + nq, *va = v + nv, *vb = va + nv;
  for (int k = 0; k < n; k++) {
    sap_get(a, SAP_FIELD_QPOS, NULL, 1, q);
    sap_get(a, SAP_FIELD_QVEL, NULL, 1, v);
    sap_set(b, SAP_FIELD_QPOS, NULL, 1, q);
    sap_set(b, SAP_FIELD_QVEL, NULL, 1, v);
    CHECK(sap_step(a, 1) == SAP_OK && sap_step(b, 1) == SAP_OK, "step: %s", sap_lastError());
    sapWorldInfo ia, ib;
    sap_worldInfo(a, NULL, 1, &ia);
    sap_worldInfo(b, NULL, 1, &ib);
    CHECK(ia.ncon_dropped == 0, "%s: the large capacity dropped contacts", scene);
    sap_get(a, SAP_FIELD_QVEL, NULL, 1, va);
    sap_get(b, SAP_FIELD_QVEL, NULL, 1, vb);
    double scale = 1e-3, e = 0;
    for (int j = 0; j < nv; j++) scale = fmax(scale, fabs(va[j]));
    for (int j = 0; j < nv; j++) e = fmax(e, fabs(va[j] - vb[j]) / scale);
    int flag = (ib.flags & SAP_WORLD_CONTACT_OVERFLOW) != 0;
    t.steps++;
    t.dropped += ib.ncon_dropped > 0;
    t.flagged += flag;
    t.differ += e > 1e-6;
    if (ib.ncon_dropped > 0 && !flag) {
      t.shown_idle++;
      t.worst_idle = fmax(t.worst_idle, e);
    }
    CHECK(flag == 0 || ib.ncon_dropped > 0, "%s step %d: flagged without a dropped contact", scene, k);
    CHECK(!(e > 1e-6 && !flag), "%s step %d: differs by %g from the full list without the overflow flag "
          "(%d dropped)", scene, k, e, ib.ncon_dropped);
  }
  free(q);
done:
  sap_free(a);
  sap_free(b);
  return t;
}

static void report(const char* name, Tally t) {
  fprintf(stderr, "  %s: %d steps, %d with drops, %d shown idle (worst |dv|/|v| %.2g), %d flagged, %d differ\n",
          name, t.steps, t.dropped, t.shown_idle, t.worst_idle, t.flagged, t.differ);
}

/* the pile with its default capacity (120): 444 contacts once settled, 108 push */
static void test_pile_default_capacity(void) {
  Tally t = lockstep("scenes/box_pile.xml", "preset=approx64 optimality_rel_tol=1e-10",
                     "preset=approx64 optimality_rel_tol=1e-10 ncon_max=512", 300);
  report("pile", t);
  CHECK(t.dropped == t.steps, "pile: %d of %d steps dropped contacts", t.dropped, t.steps);
  CHECK(t.shown_idle > t.steps / 2, "pile: only %d of %d steps shown idle", t.shown_idle, t.steps);
}

/* a cube thrown down at 3 m/s from 1.5 cm above a resting one, capacity 4: the resting cube's
 * four floor contacts are deeper and kept, the closing ones dropped; they push (the answer
 * differs from the full list's), so the flag must stay */
static void test_closing_contacts_flagged(void) {
  const char* xml =
      "<mujoco><option timestep='0.005'/><worldbody><geom type='plane' size='2 2 .1'/>"
      "<body pos='0 0 0.0499'><freejoint/><geom type='box' size='0.05 0.05 0.05' mass='1'/></body>"
      "<body pos='0.01 0 0.165' euler='0 0 0.2'><freejoint/><geom type='box' size='0.04 0.06 0.05' mass='0.5'/></body>"
      "</worldbody><keyframe><key qvel='0 0 0 0 0 0  0 0 -3 0 0 0'/></keyframe></mujoco>";
  Tally t = lockstep(xml, "preset=approx64 optimality_rel_tol=1e-10 ncon_max=4",
                     "preset=approx64 optimality_rel_tol=1e-10 ncon_max=64", 40);
  report("thrown cube", t);
  CHECK(t.differ > 0 && t.flagged >= t.differ, "thrown cube: %d steps differ, %d flagged", t.differ, t.flagged);
}

/* ---- the screened solve (option contact_screen, kernels/sap_world_t.h) ----------------------- */

typedef struct {
  int steps, worse, promoted, promo_steps;
  long ncon, solved;
  double worst;  /* largest |dv| / max |v| */
  double worst_force;  /* largest |d cfrc_ext| / max |cfrc_ext| */
} Screen;

/* Oracle: the same state solved with every contact's rows (contact_screen=0), in lockstep: each
 * step both sims start from the full solve's state (qpos, qvel; a qvel edit also resets the
 * warm start's extrapolation, the same on both sides); the velocities must agree to the solve's
 * tolerance at every step, and so must the contact forces on the bodies (cfrc_ext) */
static Screen screenLockstep(const char* scene, const char* opts, int n) {
  Screen t = {0, 0, 0, 0, 0, 0, 0, 0};
  char oa[224], ob[256];
  snprintf(oa, sizeof(oa), "device=cpu preset=approx64 optimality_rel_tol=1e-10 body_outputs=1 %s", opts);
  snprintf(ob, sizeof(ob), "%s contact_screen=1", oa);
  sapSim* a = fx_sim(scene, 1, oa);
  sapSim* b = fx_sim(scene, 1, ob);
  if (!a || !b) goto done;
  if (sap_model(a)->nkey > 0) sap_reset(a, 0, NULL);  // the scene's keyframe (its velocities)
  int nq = sap_model(a)->nq, nv = sap_model(a)->nv, nb = sap_model(a)->nbody;
  double *q = malloc(sizeof(double) * (nq + 3 * nv + 12 * nb)), *v = q + nq, *va = v + nv, *vb = va + nv;
  double *fa = vb + nv, *fb = fa + 6 * nb;
  for (int k = 0; k < n; k++) {
    sap_get(a, SAP_FIELD_QPOS, NULL, 1, q);
    sap_get(a, SAP_FIELD_QVEL, NULL, 1, v);
    sap_set(a, SAP_FIELD_QVEL, NULL, 1, v);
    sap_set(b, SAP_FIELD_QPOS, NULL, 1, q);
    sap_set(b, SAP_FIELD_QVEL, NULL, 1, v);
    CHECK(sap_step(a, 1) == SAP_OK && sap_step(b, 1) == SAP_OK, "step: %s", sap_lastError());
    sapWorldInfo ia, ib;
    sap_worldInfo(a, NULL, 1, &ia);
    sap_worldInfo(b, NULL, 1, &ib);
    CHECK(ia.ncon_dropped == 0, "%s: the capacity dropped contacts", scene);
    CHECK(ia.ncon == ib.ncon, "%s step %d: %d contacts, screened sim %d", scene, k, ia.ncon, ib.ncon);
    sap_get(a, SAP_FIELD_QVEL, NULL, 1, va);
    sap_get(b, SAP_FIELD_QVEL, NULL, 1, vb);
    double scale = 1e-3, e = 0;
    for (int j = 0; j < nv; j++) scale = fmax(scale, fabs(va[j]));
    for (int j = 0; j < nv; j++) e = fmax(e, fabs(va[j] - vb[j]) / scale);
    const sapData* d = &b->d;
    t.steps++;
    t.ncon += ib.ncon;
    t.solved += d->ncon_solved[0];
    t.promoted += d->ncon_promoted[0];
    t.promo_steps += d->ncon_promoted[0] > 0;
    t.worst = fmax(t.worst, e);
    t.worse += e > 1e-6;
    CHECK(e <= 1e-6, "%s step %d: the screened solve (%d of %d contacts solved, %d promoted) differs from "
          "the full one by %g", scene, k, d->ncon_solved[0], ib.ncon, d->ncon_promoted[0], e);
    CHECK(d->ncon_solved[0] <= ib.ncon, "%s step %d: %d solved of %d", scene, k, d->ncon_solved[0], ib.ncon);
    // the contact forces on the bodies (cfrc_ext, from the impulses in the list's order): the
    // screened solve leaves its impulses where the full one does
    sap_get(a, SAP_FIELD_CFRC_EXT, NULL, 1, fa);
    sap_get(b, SAP_FIELD_CFRC_EXT, NULL, 1, fb);
    double fs = 1e-3, ef = 0;
    for (int j = 0; j < 6 * nb; j++) fs = fmax(fs, fabs(fa[j]));
    for (int j = 0; j < 6 * nb; j++) ef = fmax(ef, fabs(fa[j] - fb[j]) / fs);
    t.worst_force = fmax(t.worst_force, ef);
    CHECK(ef <= 1e-5, "%s step %d: cfrc_ext of the screened solve differs from the full one's by %g of the "
          "largest", scene, k, ef);
  }
  free(q);
done:
  sap_free(a);
  sap_free(b);
  fprintf(stderr, "  %s: %d steps, %.1f of %.1f contacts solved per step, %d promoted in %d steps, worst |dv|/|v| "
          "%.2g, cfrc_ext %.2g\n", scene[0] == '<' ? "(xml)" : scene, t.steps, t.steps ? (double)t.solved / t.steps : 0,
          t.steps ? (double)t.ncon / t.steps : 0, t.promoted, t.promo_steps, t.worst, t.worst_force);
  return t;
}

/* the settled pile, every candidate kept (512): most side contacts are idle and take no row */
static void test_screen_pile(void) {
  Screen t = screenLockstep("scenes/box_pile.xml", "ncon_max=512", 300);
  CHECK(t.steps == 300 && t.solved < t.ncon * 3 / 4, "pile: %ld of %ld contacts solved", t.solved, t.ncon);
}

static void test_screen_stack(void) {
  Screen t = screenLockstep("scenes/box_stack.xml", "ncon_max=256", 300);
  CHECK(t.steps == 300, "stack: %d steps", t.steps);
}

/* the cube thrown down onto a resting one (test_closing_contacts_flagged's scene, all kept) */
static void test_screen_thrown(void) {
  const char* xml =
      "<mujoco><option timestep='0.005'/><worldbody><geom type='plane' size='2 2 .1'/>"
      "<body pos='0 0 0.0499'><freejoint/><geom type='box' size='0.05 0.05 0.05' mass='1'/></body>"
      "<body pos='0.01 0 0.165' euler='0 0 0.2'><freejoint/><geom type='box' size='0.04 0.06 0.05' mass='0.5'/></body>"
      "</worldbody><keyframe><key qvel='0 0 0 0 0 0  0 0 -3 0 0 0'/></keyframe></mujoco>";
  Screen t = screenLockstep(xml, "ncon_max=64", 60);
  CHECK(t.steps == 60, "thrown cube: %d steps", t.steps);
}

/* A box slides at 4 m/s along a wall 1 cm away (mu 1 there, a frictionless floor) while leaving
 * it at 5 cm/s: the wall contact separates (vn > 0) yet pushes, vn < vhat_n + mu |vt|, and throws
 * the box off at 1.8 m/s within a few steps; a screen on the normal velocity alone drops it. Then a cube pushed at 3 m/s into a resting one that
 * stands 1 cm from a third: the far pair is idle at the warm start and at v* (both at rest) and
 * closes at the answer, so the screen must promote it. */
static void test_screen_sliding_and_promotion(void) {
  const char* slide =
      "<mujoco><option timestep='0.005'/><worldbody><geom type='plane' size='5 5 .1' friction='0 0 0'/>"
      "<geom type='box' size='0.05 3 0.2' pos='-0.06 0 0.2' friction='1 0 0'/>"
      "<body pos='0.05 -1 0.05'><freejoint/><geom type='box' size='0.05 0.05 0.05' mass='1' friction='0 0 0'/></body>"
      "</worldbody><keyframe><key qvel='0.05 4 0 0 0 0'/></keyframe></mujoco>";
  Screen t = screenLockstep(slide, "ncon_max=64", 80);
  CHECK(t.steps == 80 && t.solved > 0, "sliding box: %d steps, %ld solved", t.steps, t.solved);
  const char* push =
      "<mujoco><option timestep='0.005'/><worldbody><geom type='plane' size='5 5 .1'/>"
      "<body pos='-0.115 0 0.0499'><freejoint/><geom type='box' size='0.05 0.05 0.05' mass='1'/></body>"
      "<body pos='0 0 0.0499'><freejoint/><geom type='box' size='0.05 0.05 0.05' mass='1'/></body>"
      "<body pos='0.103 0 0.0499'><freejoint/><geom type='box' size='0.05 0.05 0.05' mass='1'/></body>"
      "</worldbody><keyframe><key qpos='-0.115 0 0.0499 1 0 0 0  0 0 0.0499 1 0 0 0  0.103 0 0.0499 1 0 0 0' "
      "qvel='3 0 0 0 0 0  0 0 0 0 0 0  0 0 0 0 0 0'/></keyframe></mujoco>";
  Screen u = screenLockstep(push, "ncon_max=128", 40);
  CHECK(u.steps == 40 && u.promoted > 0, "pushed cubes: %d promoted in %d steps", u.promoted, u.steps);
}

int main(void) {
  RUN(test_pile_default_capacity);
  RUN(test_closing_contacts_flagged);
  RUN(test_screen_pile);
  RUN(test_screen_stack);
  RUN(test_screen_thrown);
  RUN(test_screen_sliding_and_promotion);
  return check_summary("test_capacity");
}
