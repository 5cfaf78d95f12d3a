/* Each island solved on its own (option island_newton, kernels/sap_newton_t.h
 * sapw_newtonIslands; issue 16). Oracle: the same objects, each alone in a world of its own.
 * An island's problem (its dofs, contacts, rows, its block of A and H) is the lone object's
 * problem with the same numbers, and its Newton loop (warm start, iterations, line search,
 * stop rules) is the lone object's loop, so every object of the K-object world must follow
 * its lone run bit for bit, step after step; the world's Newton and line-search counters must
 * be the largest of the lone runs' (the critical path) and its factorizations their sum. The
 * objects differ: sizes over three decades (4 mm to 1.5 m), orientations, resting, sliding,
 * spinning, landing, three identical boxes in different states, two stacked boxes (one island
 * of two trees) and a two-link hinge arm (one tree of two dofs). Control: with one loop over
 * every island (island_newton=0: one alpha, one stop rule for all) the same comparison must
 * fail. */
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "sim.h"

#define NOBJ 11

/* body XML of object k (its own position: the lone world holds it at the same place) and its
 * initial velocity (nv_k numbers, the rest 0) */
static const char* object_xml[NOBJ] = {
    "<body pos='0 0 0.004'><freejoint/><geom type='sphere' size='0.004'/></body>",
    "<body pos='10 0 0.4'><freejoint/><geom type='sphere' size='0.4' density='300'/></body>",
    "<body pos='20 0 0.003' euler='0 0 30'><freejoint/><geom type='box' size='0.02 0.5 0.003'/></body>",
    "<body pos='30 0 1.2' euler='20 10 5'><freejoint/><geom type='box' size='1.5 1 0.8' density='50'/></body>",
    "<body pos='40 0 0.05'><freejoint/><geom type='box' size='0.05 0.05 0.05'/></body>",
    "<body pos='50 0 0.05'><freejoint/><geom type='box' size='0.05 0.05 0.05'/></body>",
    "<body pos='60 0 0.05'><freejoint/><geom type='box' size='0.05 0.05 0.05'/></body>",
    "<body pos='70 0 0.02' euler='0 90 0'><freejoint/><geom type='capsule' size='0.02 0.05'/></body>",
    "<body pos='80 0 0.1'><freejoint/><geom type='box' size='0.1 0.1 0.1'/></body>"
    "<body pos='80.02 0 0.3' euler='0 0 15'><freejoint/><geom type='box' size='0.1 0.08 0.1'/></body>",
    "<body pos='90 0 0.5'><joint type='hinge' axis='0 1 0'/><geom type='capsule' fromto='0 0 0 0.3 0 -0.2' size='0.03'/>"
    "<body pos='0.3 0 -0.2'><joint type='hinge' axis='0 1 0'/><geom type='capsule' fromto='0 0 0 0 0 -0.25' size='0.03'/>"
    "</body></body>",
    "<body pos='100 0 0.3' euler='45 30 0'><freejoint/><geom type='ellipsoid' size='0.3 0.1 0.05'/></body>",
};
static const double object_vel[NOBJ][12] = {
    {0.3, 0, 0},
    {1, 0, 0, 0, 2.5, 0},
    {0, 0, -0.2},
    {0, 0, 0, 0.5, 0, 0},
    {0},
    {1, 0.2, 0},
    {0, 0, 0, 0, 0, 5},
    {0.4, -0.1, 0},
    {0, 0, 0, 0, 0, 0, 0.3, 0, -0.1},
    {2, -1},
    {0, 0, -1, 1, 1, 0},
};

/* a world of objects [k0, k1) on a plane, with their initial velocities */
static sapSim* world_of(int k0, int k1, const char* opts) {
  char xml[8000];
  int len = sprintf(xml, "<mujoco><option timestep='0.004'/><worldbody><geom type='plane' size='0 0 1'/>");
  for (int k = k0; k < k1; k++) len += sprintf(xml + len, "%s", object_xml[k]);
  sprintf(xml + len, "</worldbody></mujoco>");
  sapSim* s = fx_sim(xml, 1, opts);
  if (!s) return NULL;
  double qvel[6 * NOBJ * 2] = {0};
  for (int k = k0, o = 0; k < k1; k++) {
    int nv = k == 8 ? 12 : k == 9 ? 2 : 6;
    for (int j = 0; j < nv; j++) qvel[o + j] = object_vel[k][j];
    o += nv;
  }
  sap_set(s, SAP_FIELD_QVEL, NULL, 1, qvel);
  return s;
}

/* nstep steps of the K-object world and of each object alone; returns the number of steps at
 * which some object's state differs from its lone run (0: every one bitwise equal); counts the
 * steps whose counters break the critical-path rule in *bad_stats */
static int compare(const char* opts, int nstep, int* bad_stats, int verbose) {
  sapSim* all = world_of(0, NOBJ, opts);
  sapSim* one[NOBJ];
  for (int k = 0; k < NOBJ; k++) one[k] = world_of(k, k + 1, opts);
  int ndiff = 0, nsolved = 0, ncontacts = 0;
  *bad_stats = 0;
  for (int k = 0; k < NOBJ; k++)
    if (!one[k]) return -1;
  if (!all) return -1;
  for (int n = 0; n < nstep; n++) {
    sap_step(all, 1);
    const sapData* d = sap_data(all);
    int qa = 0, va = 0, diff = 0, imax = 0, lmax = 0, emax = 0, fsum = 0, conv = 1;
    for (int k = 0; k < NOBJ; k++) {
      sap_step(one[k], 1);
      const sapData* e = sap_data(one[k]);
      const sapModel* m = sap_model(one[k]);
      if (memcmp(d->qpos + qa, e->qpos, sizeof(double) * m->nq) || memcmp(d->qvel + va, e->qvel, sizeof(double) * m->nv)) {
        diff = 1;
        if (verbose) CHECK(0, "%s: step %d object %d differs from its lone run (qvel[0] %.17g vs %.17g)", opts, n, k,
                           d->qvel[va], e->qvel[0]);
      }
      if (e->newton_iter[0] > imax) imax = e->newton_iter[0];
      if (e->ls_iter[0] > lmax) lmax = e->ls_iter[0];
      if (e->ls_eval[0] > emax) emax = e->ls_eval[0];
      fsum += e->nfactor[0];
      if (e->ncon[0] > 0 && !(e->world_flags[0] & SAP_WORLD_CONVERGED)) conv = 0;
      ncontacts += e->ncon[0] > 0;
      qa += m->nq;
      va += m->nv;
    }
    ndiff += diff;
    nsolved += imax > 0;
    int stats_ok = d->newton_iter[0] == imax && d->ls_iter[0] == lmax && d->ls_eval[0] == emax &&
                   d->nfactor[0] == fsum && !!(d->world_flags[0] & SAP_WORLD_CONVERGED) == conv;
    if (!stats_ok && verbose)
      CHECK(0, "%s: step %d: world Newton %d ls %d evals %d factorizations %d; lone max %d, %d, %d, sum %d", opts, n,
            d->newton_iter[0], d->ls_iter[0], d->ls_eval[0], d->nfactor[0], imax, lmax, emax, fsum);
    *bad_stats += !stats_ok;
  }
  if (verbose) printf("  %s: %d steps, %d with Newton iterations, %d object-steps with contacts\n", opts, nstep, nsolved,
                      ncontacts);
  CHECK(nsolved >= nstep / 2 && ncontacts >= nstep * NOBJ / 2, "%s: the objects must be in contact (%d, %d)", opts,
        nsolved, ncontacts);
  sap_free(all);
  for (int k = 0; k < NOBJ; k++) sap_free(one[k]);
  return ndiff;
}

static void test_islands_as_lone_objects(void) {
  static const char* presets[] = {"preset=approx32", "preset=approx64", "preset=drake island_newton=1",
                                  "preset=approx64 line_search=exact_root", "preset=drake warm_start=qvel island_newton=1"};
  for (int p = 0; p < 5; p++) {
    int bad = 0, nd = compare(presets[p], 150, &bad, 1);
    CHECK(nd == 0 && bad == 0, "%s: %d steps differ from the lone runs, %d steps' counters", presets[p], nd, bad);
  }
}

/* the control: one Newton loop over every island (one alpha and one stop rule for all) does
 * not reproduce the lone runs, so the comparison above can fail */
static void test_one_loop_differs(void) {
  int bad = 0, nd = compare("preset=approx64 island_newton=0", 150, &bad, 0);
  printf("  island_newton=0: %d of 150 steps differ from the lone runs, %d steps' counters\n", nd, bad);
  CHECK(nd > 0 && bad > 0, "one loop over all islands matched the lone runs (%d, %d)", nd, bad);
}

int main(void) {
  RUN(test_islands_as_lone_objects);
  RUN(test_one_loop_differs);
  return check_summary("test_island_newton");
}
