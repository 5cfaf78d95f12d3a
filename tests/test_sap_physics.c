#define _POSIX_C_SOURCE 200809L
/* Analytic physics through the whole step with the SAP solve (CPU backend): a box resting
 * on a plane, a box on an incline sliding with a = g (sin t - mu cos t) or sticking, under
 * each preset and line search; a joint limit holding a pendulum; a PD drive reaching its
 * target; an effort limit capping the drive torque. Small scenes are written inline. */
#include <unistd.h>

#include "check.h"
#include "sapsim/sapsim.h"

/* load an MJCF text through a temporary file */
static sapModel* load_xml(const char* xml) {
  char path[] = "/tmp/sapsim_physXXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return NULL;
  FILE* f = fdopen(fd, "w");
  fputs(xml, f);
  fclose(f);
  char named[64];
  snprintf(named, sizeof(named), "%s.xml", path);
  rename(path, named);
  sapModel* m = NULL;
  if (sap_loadModel(named, &m) != SAP_OK) fprintf(stderr, "  load: %s\n", sap_lastError());
  unlink(named);
  return m;
}

static sapSim* make_sim(const sapModel* m, const char* preset, const char* ls, int nworld) {
  sapOptions o;
  sap_optionsDefault(&o);
  o.device = SAP_DEVICE_CPU;
  if (preset && sap_optionsSet(&o, "preset", preset) != SAP_OK) return NULL;
  if (ls && sap_optionsSet(&o, "line_search", ls) != SAP_OK) return NULL;
  // monotone_decay's default 5e-3 relative cost exit stops sliding solves early (the box
  // then accelerates ~30% too slowly; sapwarp §13.1): test it with the tight cost tolerances
  if (ls && !strcmp(ls, "monotone_decay")) { o.cost_rel_tol = 1e-15; o.cost_abs_tol = 1e-30; }
  sapSim* s = NULL;
  if (sap_create(m, &o, nworld, &s) != SAP_OK) fprintf(stderr, "  create: %s\n", sap_lastError());
  return s;
}

/* step n times; returns 1 when every step converged in every world */
static int step_converged(sapSim* s, int n) {
  int ok = 1, nw = sap_nworld(s);
  sapWorldInfo info[8];
  for (int k = 0; k < n; k++) {
    if (sap_step(s, 1) != SAP_OK) return 0;
    sap_worldInfo(s, NULL, nw < 8 ? nw : 8, info);
    for (int w = 0; w < (nw < 8 ? nw : 8); w++)
      if (!(info[w].flags & SAP_WORLD_CONVERGED) || (info[w].flags & (SAP_WORLD_LSFAIL | SAP_WORLD_NONFINITE))) ok = 0;
  }
  return ok;
}

static const char* presets[3] = {"approx32", "approx64", "drake"};
static const char* searches[3] = {"monotone_decay", "armijo_decay", "exact_root"};

/* ---- box on a plane, gravity tilted by t about y (an incline) ------------------------ */

/* The scene sets a 5 cm speculative detection band (sap_contact_margin): while sliding,
 * SAP's regularized cone keeps the contact active at a small positive distance
 * phi ~ (h + taud) mu |vt| (the convex "gliding" of Anitescu-type formulations); without
 * candidates at phi > 0 the box would hop. (An MJCF geom margin would inflate the surfaces
 * instead, as in MuJoCo.) */

static sapModel* box_model(double tilt) {
  char xml[2048];
  double g = 9.81;
  snprintf(xml, sizeof(xml),
           "<mujoco><option timestep='0.002' gravity='%.17g 0 %.17g'/>"
           "<custom><numeric name='sap_contact_k' data='1e5'/><numeric name='sap_contact_taud' data='0.01'/>"
           "<numeric name='sap_contact_margin' data='0.05'/></custom>"
           "<worldbody><geom type='plane' size='50 50 0.1' friction='0.5'/>"
           "<body pos='0 0 0.1'><freejoint/><geom type='box' size='0.1 0.1 0.1' mass='1' friction='0.5'/></body>"
           "</worldbody></mujoco>",
           g * sin(tilt), -g * cos(tilt));
  return load_xml(xml);
}

static void test_box_rest(void) {
  sapModel* m = box_model(0);
  if (!m) SKIP("loader not available");
  for (int p = 0; p < 3; p++) {
    sapSim* s = make_sim(m, presets[p], NULL, 2);
    CHECK(s != NULL, "create");
    if (!s) continue;
    int conv = step_converged(s, 500);  // 1 s
    double q[14], v[12];
    sap_get(s, SAP_FIELD_QPOS, NULL, 2, q);
    sap_get(s, SAP_FIELD_QVEL, NULL, 2, v);
    CHECK(conv, "%s: every step converged", presets[p]);
    CHECK(fabs(q[0]) < 1e-5 && fabs(q[1]) < 1e-5, "%s: no drift (%g, %g)", presets[p], q[0], q[1]);
    CHECK(fabs(q[2] - 0.1) < 2e-4, "%s: rests near z = 0.1 (%g)", presets[p], q[2]);
    double vmax = 0;
    for (int k = 0; k < 6; k++) vmax = fmax(vmax, fabs(v[k]));
    CHECK(vmax < 1e-4, "%s: at rest (|v| %g)", presets[p], vmax);
    CHECK(q[0] == q[7] && q[2] == q[9], "%s: identical worlds agree", presets[p]);
    sap_free(s);
  }
  sap_freeModel(m);
}

/* measured tangential acceleration after the contact has settled */
static double incline_accel(sapModel* m, const char* preset, const char* ls, int* conv) {
  sapSim* s = make_sim(m, preset, ls, 1);
  if (!s) return NAN;
  *conv = step_converged(s, 100);
  double v0[6], v1[6];
  sap_get(s, SAP_FIELD_QVEL, NULL, 1, v0);
  *conv &= step_converged(s, 250);
  sap_get(s, SAP_FIELD_QVEL, NULL, 1, v1);
  sap_free(s);
  return (v1[0] - v0[0]) / (250 * 0.002);
}

static void test_incline(void) {
  const double g = 9.81, mu = 0.5;
  double tilts[2] = {atan(0.7), atan(0.3)};  // sliding, sticking
  for (int t = 0; t < 2; t++) {
    sapModel* m = box_model(tilts[t]);
    if (!m) SKIP("loader not available");
    double want = tan(tilts[t]) > mu ? g * (sin(tilts[t]) - mu * cos(tilts[t])) : 0;
    for (int p = 0; p < 3; p++) {
      for (int l = 0; l < 3; l++) {
        int conv = 0;
        double a = incline_accel(m, presets[p], searches[l], &conv);
        CHECK(conv, "%s %s tan %.1f: converged", presets[p], searches[l], tan(tilts[t]));
        // sliding: within 1%; sticking: creep below sigma-regularised slip
        CHECK_CLOSE(a, want, 2e-3, 1e-2, "%s %s tan %.1f: acceleration", presets[p], searches[l], tan(tilts[t]));
      }
    }
    sap_freeModel(m);
  }
}

/* ---- hinge with a limit, a position drive, an effort limit ----------------------------- */

/* a 1 kg bob 1 m from a y hinge; horizontal at q = 0 (falls toward +q under gravity) */
static sapModel* hinge_model(const char* joint_extra, const char* actuator, int gravity) {
  char xml[2048];
  snprintf(xml, sizeof(xml),
           "<mujoco><compiler angle='radian'/><option timestep='0.005' gravity='0 0 %g'/>"
           "<worldbody><body pos='0 0 2'><joint name='j' type='hinge' axis='0 1 0' %s/>"
           "<geom type='sphere' pos='1 0 0' size='0.05' mass='1' contype='0' conaffinity='0'/></body>"
           "</worldbody><actuator>%s</actuator></mujoco>",
           gravity ? -9.81 : 0.0, joint_extra, actuator);
  return load_xml(xml);
}

static void test_joint_limit(void) {
  sapModel* m = hinge_model("limited='true' range='-1 0.5'", "", 1);
  if (!m) SKIP("loader not available");
  for (int p = 0; p < 3; p++) {
    sapSim* s = make_sim(m, presets[p], NULL, 1);
    if (!s) continue;
    double qmax = -1, q;
    int conv = 1;
    for (int k = 0; k < 400; k++) {  // 2 s
      conv &= step_converged(s, 1);
      sap_get(s, SAP_FIELD_QPOS, NULL, 1, &q);
      qmax = fmax(qmax, q);
    }
    double v;
    sap_get(s, SAP_FIELD_QVEL, NULL, 1, &v);
    CHECK(conv, "%s: converged", presets[p]);
    CHECK(qmax < 0.5 + 0.02, "%s: limit holds (max q %g)", presets[p], qmax);
    CHECK(fabs(q - 0.5) < 1e-3 && fabs(v) < 1e-3, "%s: rests at the limit (q %g v %g)", presets[p], q, v);
    sap_free(s);
  }
  sap_freeModel(m);
}

static void test_pd_drive(void) {
  sapModel* m = hinge_model("damping='10'", "<position joint='j' kp='50'/>", 0);
  if (!m) SKIP("loader not available");
  for (int p = 0; p < 3; p++) {
    sapSim* s = make_sim(m, presets[p], NULL, 1);
    if (!s) continue;
    double ctrl = 0.3, q, v;
    sap_set(s, SAP_FIELD_CTRL, NULL, 1, &ctrl);
    int conv = step_converged(s, 1000);  // 5 s
    sap_get(s, SAP_FIELD_QPOS, NULL, 1, &q);
    sap_get(s, SAP_FIELD_QVEL, NULL, 1, &v);
    CHECK(conv, "%s: converged", presets[p]);
    CHECK_CLOSE(q, 0.3, 1e-4, 0, "%s: reaches the target", presets[p]);
    CHECK(fabs(v) < 1e-4, "%s: settles (v %g)", presets[p], v);
    sap_free(s);
  }
  sap_freeModel(m);
}

static void test_effort_limit(void) {
  sapModel* m = hinge_model("", "<position joint='j' kp='1000' forcelimited='true' forcerange='-1 1'/>", 0);
  if (!m) SKIP("loader not available");
  for (int p = 0; p < 3; p++) {
    sapSim* s = make_sim(m, presets[p], NULL, 1);
    if (!s) continue;
    double ctrl = 2.0, v;
    sap_set(s, SAP_FIELD_CTRL, NULL, 1, &ctrl);
    int conv = step_converged(s, 40);  // 0.2 s, error stays > 1 mrad: saturated
    sap_get(s, SAP_FIELD_QVEL, NULL, 1, &v);
    const sapData* d = sap_data(s);
    double I = d->qA[0];  // 1-dof inertia about the hinge
    CHECK(conv, "%s: converged", presets[p]);
    CHECK_CLOSE(v, 40 * 0.005 * 1.0 / I, 0, 1e-5, "%s: torque capped at 1 N m (I %g)", presets[p], I);
    sap_free(s);
  }
  sap_freeModel(m);
}

int main(void) {
  RUN(test_box_rest);
  RUN(test_incline);
  RUN(test_joint_limit);
  RUN(test_pd_drive);
  RUN(test_effort_limit);
  return check_summary("test_sap_physics");
}
