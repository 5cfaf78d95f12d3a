#define _POSIX_C_SOURCE 200809L
/* Equality constraints switched per world at run time (sapData.eq_active, MuJoCo's
 * mjData.eq_active; sap_setEqActive, sap_setEqActiveArray, sap_getEqActive) on the CPU
 * backend, against independent oracles: the reset values are MuJoCo 4's mjData.eq_active after
 * mj_resetData; a pendulum held horizontal by a connect, released in one world, swings exactly
 * as the same pendulum without the constraint stepped in a batch of its own, while the other
 * worlds stay held; switched on again it is pulled back onto the anchor; bad indices and values
 * are named and change nothing. */
#include <unistd.h>

#include <mujoco/mujoco.h>

#include "fixture.h"

static int verbose(void) { return getenv("SAPSIM_TEST_VERBOSE") != NULL; }

static int write_xml(const char* xml, char* path, size_t n) {
  const char* p = fx_tempFile("eq_active.xml", xml);
  if (p) snprintf(path, n, "%s", p);
  return p != NULL;
}

static sapModel* load_xml(const char* xml) {
  sapModel* m = NULL;
  if (sap_loadModelString(xml, &m) != SAP_OK) fprintf(stderr, "  load: %s\n", sap_lastError());
  return m;
}

static sapSim* make_sim(const sapModel* m, const char* preset, int nworld) {
  char opts[64];
  snprintf(opts, sizeof(opts), "preset=%s", preset);
  return fx_simModel(m, nworld, opts);
}

/* a rod pendulum on a hinge about y at the origin, horizontal at reset, its tip (0.5, 0, 0)
 * connected to the world there ('hold'); a second pendulum far away with a weld that is off at
 * reset ('glue', active='false') */
static void pend_xml(int with_eq, char* buf, size_t n) {
  snprintf(buf, n,
           "<mujoco><option timestep='0.002'/><default><geom contype='0' conaffinity='0'/></default><worldbody>"
           "<body name='p'><joint name='h' type='hinge' axis='0 1 0'/>"
           "<geom type='capsule' fromto='0 0 0 0.5 0 0' size='0.02' mass='1'/></body>"
           "<body name='q' pos='2 0 0'><joint name='h2' type='hinge' axis='0 1 0'/>"
           "<geom type='capsule' fromto='0 0 0 0.3 0 0' size='0.02' mass='0.5'/></body>"
           "</worldbody>%s</mujoco>",
           with_eq ? "<equality><connect name='hold' body1='p' anchor='0.5 0 0'/>"
                     "<weld name='glue' body1='q' active='false'/></equality>" : "");
}

static void test_reset_values(void) {
  char xml[2048], path[64], err[256];
  pend_xml(1, xml, sizeof(xml));
  sapModel* m = load_xml(xml);
  write_xml(xml, path, sizeof(path));
  mjModel* mj = mj_loadXML(path, NULL, err, sizeof(err));
  unlink(path);
  CHECK(m && mj && m->neq == 2, "loaded (neq %d)", m ? m->neq : -1);
  if (!m || !mj) { sap_freeModel(m); mj_deleteModel(mj); return; }
  mjData* md = mj_makeData(mj);
  mj_resetData(mj, md);
  sapSim* s = make_sim(m, "approx64", 3);
  int act[6];
  memset(act, 0xff, sizeof(act));  // poison
  CHECK(sap_getEqActive(s, act) == SAP_OK, "%s", sap_lastError());
  for (int w = 0; w < 3; w++)
    for (int e = 0; e < 2; e++)
      CHECK(act[2 * w + e] == md->eq_active[e], "world %d eq %d: %d, MuJoCo 4 resets it to %d", w, e, act[2 * w + e],
            md->eq_active[e]);
  // set all, then one; a reset restores eq_active0 in the masked worlds only
  CHECK(sap_setEqActive(s, -1, -1, 1) == SAP_OK, "%s", sap_lastError());
  CHECK(sap_setEqActive(s, 1, 0, 0) == SAP_OK, "%s", sap_lastError());
  sap_getEqActive(s, act);
  const int want[6] = {1, 1, 0, 1, 1, 1};
  for (int i = 0; i < 6; i++) CHECK(act[i] == want[i], "after the sets: [%d] = %d, want %d", i, act[i], want[i]);
  unsigned char mask[3] = {0, 1, 0};
  sap_reset(s, -1, mask);
  sap_getEqActive(s, act);
  const int want2[6] = {1, 1, 1, 0, 1, 1};
  for (int i = 0; i < 6; i++) CHECK(act[i] == want2[i], "after a masked reset: [%d] = %d, want %d", i, act[i], want2[i]);
  // bad input: named, nothing changed
  CHECK(sap_setEqActive(s, 3, 0, 0) == SAP_ERR_ARG && strstr(sap_lastError(), "world 3"), "world: %s", sap_lastError());
  CHECK(sap_setEqActive(s, -2, 0, 0) == SAP_ERR_ARG && strstr(sap_lastError(), "world -2"), "world: %s",
        sap_lastError());
  CHECK(sap_setEqActive(s, 0, 2, 0) == SAP_ERR_ARG && strstr(sap_lastError(), "equality 2"), "eq: %s", sap_lastError());
  CHECK(sap_setEqActive(s, 0, 0, 2) == SAP_ERR_ARG && strstr(sap_lastError(), "0 or 1"), "value: %s", sap_lastError());
  int bad[6] = {1, 1, 1, 1, 1, 7};
  CHECK(sap_setEqActiveArray(s, bad) == SAP_ERR_ARG && strstr(sap_lastError(), "world 2, equality 1") &&
        strstr(sap_lastError(), "got 7"), "array: %s", sap_lastError());
  CHECK(sap_getEqActive(NULL, act) == SAP_ERR_ARG, "null sim");
  sap_getEqActive(s, act);
  for (int i = 0; i < 6; i++) CHECK(act[i] == want2[i], "bad input changed [%d] to %d", i, act[i]);
  sap_free(s);
  sap_freeModel(m);
  mj_deleteData(md);
  mj_deleteModel(mj);
}

/* world 0 keeps the connect; world 1 releases it at t = 0 and switches it on again at 0.1 s;
 * world 2 releases it for good. Oracle for the released worlds: the model without equalities,
 * stepped alone (same preset, same arithmetic: agreement to 1e-12). World 0 stays horizontal
 * (tip on the anchor within 1e-6 m); world 1, switched on again with the tip 0.1 s of fall away
 * (7 cm), is back on the anchor within 1e-4 m 0.3 s later (measured 3e-8 m). The hinge and the
 * connect over-constrain the rod (the connect's radial row is redundant near the anchor): the
 * case that ruled the curvature bias out of the midpoint rule (sap_equality_t.h). */
static void release_run(const char* preset) {
  char xa[2048], xb[2048];
  pend_xml(1, xa, sizeof(xa));
  pend_xml(0, xb, sizeof(xb));
  sapModel* ma = load_xml(xa);
  sapModel* mb = load_xml(xb);
  if (!ma || !mb) { CHECK(0, "load"); sap_freeModel(ma); sap_freeModel(mb); return; }
  sapSim* s = make_sim(ma, preset, 3);
  sapSim* f = make_sim(mb, preset, 1);
  sap_setEqActive(s, 1, 0, 0);
  sap_setEqActive(s, 2, 0, 0);
  double q[6], qf[2], x[9 * 3], held = 0, free_dev = 0, drop = 0, back = 0;
  const double anchor[3] = {0.5, 0, 0};
  for (int k = 1; k <= 200; k++) {
    if (k == 51) sap_setEqActive(s, 1, 0, 1);  // t = 0.1 s
    sap_step(s, 1);
    sap_step(f, 1);
    sap_get(s, SAP_FIELD_QPOS, NULL, 3, q);
    sap_get(f, SAP_FIELD_QPOS, NULL, 1, qf);
    sap_get(s, SAP_FIELD_XPOS, NULL, 3, x);
    // tip = (0.5 cos(q), 0, -0.5 sin(q)) for a hinge about +y
    double tip[3][3];
    for (int w = 0; w < 3; w++) {
      tip[w][0] = 0.5 * cos(q[2 * w]);
      tip[w][1] = 0;
      tip[w][2] = -0.5 * sin(q[2 * w]);
    }
    double d0 = sqrt(pow(tip[0][0] - anchor[0], 2) + pow(tip[0][2] - anchor[2], 2));
    double d1 = sqrt(pow(tip[1][0] - anchor[0], 2) + pow(tip[1][2] - anchor[2], 2));
    if (d0 > held) held = d0;
    if (fabs(q[4] - qf[0]) > free_dev) free_dev = fabs(q[4] - qf[0]);
    if (k <= 50 && fabs(q[2] - qf[0]) > free_dev) free_dev = fabs(q[2] - qf[0]);
    if (k == 50) drop = d1;
    if (k == 200) back = d1;
  }
  CHECK(held < 1e-6, "%s: the held world stays on the anchor (%.3g m)", preset, held);
  CHECK(free_dev < 1e-12, "%s: released worlds swing as the unconstrained model (%.3g rad)", preset, free_dev);
  CHECK(drop > 0.02, "%s: the released tip fell (%.3g m)", preset, drop);
  CHECK(back < 1e-4, "%s: switched on again, the tip is back on the anchor (%.3g m)", preset, back);
  if (verbose())
    fprintf(stderr, "  %s: held %.3g m, free vs unconstrained %.3g rad, fell %.3g m, back to %.3g m\n", preset, held,
            free_dev, drop, back);
  sap_free(s);
  sap_free(f);
  sap_freeModel(ma);
  sap_freeModel(mb);
}

static void test_release(void) {
  release_run("approx64");
  release_run("drake");
  release_run("approx32");
}

int main(void) {
  RUN(test_reset_values);
  RUN(test_release);
  return check_summary("test_eq_active");
}
