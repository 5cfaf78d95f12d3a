#define _GNU_SOURCE
/* Per-world parameters (domain randomization, host/world_params.c).
 * Oracles:
 *  - MuJoCo 4.0 on a copy of the model edited to a world's values (body_mass,
 *    body_inertia, dof_damping/armature/frictionloss, opt.gravity, actuator
 *    gainprm/biasprm, geom_friction): mass matrix, bias, passive and actuator forces of
 *    the world (free motion, gravity compensation included), and the combined friction of
 *    every contact (priority, condim 1/3/4/6, explicit pairs);
 *  - a plain sapsim batch: worlds without overrides, worlds overridden with the model's
 *    own values and worlds reset to the model stay bitwise equal to it;
 *  - analytic: a box under tilted gravity slides with a = g (sin t - mu cos t) or sticks
 *    (mu >= tan t); a physical pendulum's period 2 pi sqrt(J / (m g L)) and damped decay;
 *    a sphere resting at phi = -m g / k (geoms' k in series); a position servo holding a
 *    hanging slider at q = -m g / kp.
 * Values are drawn over decades. Bad input is refused, named, with nothing changed. */
#include <unistd.h>

#include <mujoco/mujoco.h>

#include "fixture.h"
#include "fixture_mj.h"
#include "kernels.h"
#include "sim.h"

static const char* write_xml(const char* tag, const char* xml) {
  char file[128];
  snprintf(file, sizeof(file), "%s.xml", tag);
  return fx_tempFile(file, xml);
}

/* a CPU sim; kv: "key=value" options, NULL-terminated */
static sapSim* make_sim(const sapModel* m, int nworld, const char* const* kv) {
  sapOptions o;
  fx_options(&o, NULL);
  for (int i = 0; kv && kv[i]; i++) CHECK(sap_optionsSetPair(&o, kv[i]) == SAP_OK, "%s", sap_lastError());
  return fx_simModelWith(m, nworld, &o);
}

static double decade(double lo, double hi) { return pow(10, check_uniform(lo, hi)); }

/* random valid values of parameter p for one world, written to x (size values),
 * spread over decades around the model's values */
static void random_values(const sapSim* s, sapParam p, double* x) {
  const sapModel* m = sap_model(s);
  int n = sap_paramSize(s, p);
  switch (p) {
    case SAP_PARAM_BODY_MASS:
      for (int b = 0; b < n; b++) x[b] = b == 0 ? 0 : m->body_mass[b] * decade(-1.5, 1.5);
      break;
    case SAP_PARAM_BODY_INERTIA:  /* a = y + z, b = x + z, c = x + y: a rigid body's moments */
      for (int b = 0; b < m->nbody; b++) {
        double scale = (m->body_inertia[3 * b] + m->body_inertia[3 * b + 1] + m->body_inertia[3 * b + 2]) / 2;
        double q[3];
        for (int k = 0; k < 3; k++) q[k] = scale * decade(-1.5, 1);
        x[3 * b] = q[1] + q[2];
        x[3 * b + 1] = q[0] + q[2];
        x[3 * b + 2] = q[0] + q[1];
        if (b == 0) x[0] = x[1] = x[2] = 0;
      }
      break;
    case SAP_PARAM_GEOM_FRICTION:
      for (int g = 0; g < m->ngeom; g++) {
        x[3 * g] = decade(-2, 0.5);
        x[3 * g + 1] = decade(-4, -1);
        x[3 * g + 2] = decade(-5, -2);
      }
      break;
    case SAP_PARAM_GEOM_K: for (int i = 0; i < n; i++) x[i] = m->geom_k[i] * decade(-1, 1); break;
    case SAP_PARAM_GEOM_TAUD: for (int i = 0; i < n; i++) x[i] = decade(-3, -1); break;
    case SAP_PARAM_ACTUATOR_GAIN: for (int i = 0; i < n; i++) x[i] = m->actuator_gain[i] * check_uniform(0.3, 3); break;
    case SAP_PARAM_ACTUATOR_BIAS: for (int i = 0; i < n; i++) x[i] = check_uniform(-0.5, 0.5); break;
    case SAP_PARAM_ACTUATOR_KP: for (int i = 0; i < n; i++) x[i] = decade(0, 3); break;
    case SAP_PARAM_ACTUATOR_KV: for (int i = 0; i < n; i++) x[i] = decade(-1.5, 1); break;
    case SAP_PARAM_DOF_DAMPING: for (int i = 0; i < n; i++) x[i] = decade(-3, 1); break;
    case SAP_PARAM_DOF_ARMATURE: for (int i = 0; i < n; i++) x[i] = decade(-4, -0.5); break;
    case SAP_PARAM_DOF_FRICTIONLOSS:  /* only where the model has dry friction (rows counted at load) */
      for (int i = 0; i < n; i++) x[i] = m->dof_frictionloss[i] > 0 ? decade(-3, 0) : 0;
      break;
    case SAP_PARAM_GRAVITY:
      for (int k = 0; k < 3; k++) x[k] = check_uniform(-1, 1);
      x[2] = -decade(-0.5, 1.5);
      break;
    default: break;
  }
}

/* override every parameter of world w with random values */
static void randomize_world(sapSim* s, int w) {
  for (int p = 0; p < SAP_NPARAM; p++) {
    int n = sap_paramSize(s, (sapParam)p);
    if (!n) continue;
    double* x = malloc(sizeof(double) * n);
    random_values(s, (sapParam)p, x);
    CHECK(sap_setParam(s, (sapParam)p, &w, 1, x) == SAP_OK, "set %s: %s", sap_paramName((sapParam)p), sap_lastError());
    CHECK(sap_paramOverridden(s, (sapParam)p, w), "%s of world %d overridden", sap_paramName((sapParam)p), w);
    free(x);
  }
}

/* the same world's values written back unchanged (an override equal to the model) */
static void override_with_model(sapSim* s, int w) {
  for (int p = 0; p < SAP_NPARAM; p++) {
    int n = sap_paramSize(s, (sapParam)p);
    if (!n) continue;
    double* x = malloc(sizeof(double) * n);
    CHECK(sap_getParam(s, (sapParam)p, &w, 1, x) == SAP_OK, "%s", sap_lastError());
    CHECK(sap_setParam(s, (sapParam)p, &w, 1, x) == SAP_OK, "%s", sap_lastError());
    free(x);
  }
}

/* edit a MuJoCo model to world w's values (sapsim's actuator law to MuJoCo's affine
 * gain and bias, include/sapsim/model.h) */
static void edit_mujoco(mjModel* mj, sapSim* s, int w) {
  const sapModel* m = sap_model(s);
  double* buf = malloc(sizeof(double) * (3 * (m->nbody + m->ngeom) + m->nv + m->nu + 8));
#define GET(p, dst, n)                                                  \
  do {                                                                  \
    sap_getParam(s, p, &w, 1, buf);                                     \
    for (int i_ = 0; i_ < (n); i_++) (dst)[i_] = buf[i_];               \
  } while (0)
  GET(SAP_PARAM_BODY_MASS, mj->body_mass, mj->nbody);
  GET(SAP_PARAM_BODY_INERTIA, mj->body_inertia, 3 * mj->nbody);
  GET(SAP_PARAM_DOF_DAMPING, mj->dof_damping, mj->nv);
  GET(SAP_PARAM_DOF_ARMATURE, mj->dof_armature, mj->nv);
  GET(SAP_PARAM_DOF_FRICTIONLOSS, mj->dof_frictionloss, mj->nv);
  GET(SAP_PARAM_GEOM_FRICTION, mj->geom_friction, 3 * mj->ngeom);
  GET(SAP_PARAM_GRAVITY, mj->opt.gravity, 3);
#undef GET
  double *g = buf, *b = buf + m->nu, *kp = buf + 2 * m->nu, *kv = buf + 3 * m->nu;
  if (m->nu) {
    sap_getParam(s, SAP_PARAM_ACTUATOR_GAIN, &w, 1, g);
    sap_getParam(s, SAP_PARAM_ACTUATOR_BIAS, &w, 1, b);
    sap_getParam(s, SAP_PARAM_ACTUATOR_KP, &w, 1, kp);
    sap_getParam(s, SAP_PARAM_ACTUATOR_KV, &w, 1, kv);
  }
  for (int u = 0; u < m->nu; u++) {
    mjtNum* gp = mj->actuator_gainprm + mjNGAIN * u;
    mjtNum* bp = mj->actuator_biasprm + mjNBIAS * u;
    double scale = m->actuator_kind[u] == SAP_ACT_POSITION ? kp[u] : m->actuator_kind[u] == SAP_ACT_VELOCITY ? kv[u] : 1;
    gp[0] = g[u] * scale;
    bp[0] = b[u] * scale;
    bp[1] = m->actuator_kind[u] == SAP_ACT_POSITION ? -kp[u] : 0;
    bp[2] = m->actuator_kind[u] == SAP_ACT_MOTOR ? 0 : -kv[u];
    mj->actuator_gaintype[u] = mjGAIN_FIXED;
    mj->actuator_biastype[u] = mjBIAS_AFFINE;  /* a motor's constant bias too */
  }
  free(buf);
}

/* ---- free motion of overridden worlds against MuJoCo on the edited model ------------- */

static const char* FEATURE_XML =
    "<mujoco><option timestep='0.004' gravity='0.3 -0.2 -9.81'/>"
    "<worldbody>"
    "<body name='l1' pos='0 0 1'><joint name='j1' type='hinge' axis='0 1 0' damping='0.3'/>"
    "  <geom type='capsule' size='0.05' fromto='0 0 0 0.4 0 0' contype='0' conaffinity='0'/>"
    "  <body name='l2' pos='0.4 0 0' gravcomp='0.5'><joint name='j2' type='hinge' axis='0.3 1 0.2'/>"
    "    <geom type='box' size='0.2 0.04 0.03' pos='0.2 0 0' contype='0' conaffinity='0'/>"
    "    <body name='l3' pos='0.4 0 0' gravcomp='1'><joint name='j3' type='slide' axis='1 0 0.5'"
    "      actuatorgravcomp='true'/>"
    "      <geom type='sphere' size='0.07' contype='0' conaffinity='0'/></body></body></body>"
    "<body name='float' pos='1 1 1' gravcomp='2.5'><freejoint/><geom type='box' size='0.1 0.2 0.3'"
    "  contype='0' conaffinity='0'/></body>"
    "</worldbody><actuator>"
    "<motor joint='j1' gear='3' ctrlrange='-1 1'/>"
    "<position joint='j2' kp='20' kv='2' gear='-1.5'/>"
    "<velocity joint='j3' kv='4'/>"
    "</actuator></mujoco>";

#define NW 4
static void free_motion_scene(const char* path) {
  char err[1000] = "";
  mjModel* mj = mj_loadXML(path, NULL, err, sizeof(err));
  sapModel* m = NULL;
  CHECK(mj && sap_loadModel(path, &m) == SAP_OK, "%s: %s %s", path, err, sap_lastError());
  if (!mj || !m) { mj_deleteModel(mj); sap_freeModel(m); return; }
  static const char* const kv[] = {"contacts=0", "preset=approx64", NULL};
  sapSim* s = make_sim(m, NW, kv);
  sapSim* plain = make_sim(m, NW, kv);
  if (!s || !plain) goto done;
  /* world 1: every parameter; world 3: mass, inertia and gravity (a subset) */
  randomize_world(s, 1);
  {
    int w3 = 3;
    double* x = malloc(sizeof(double) * 3 * m->nbody);
    random_values(s, SAP_PARAM_BODY_MASS, x);
    CHECK(sap_setParam(s, SAP_PARAM_BODY_MASS, &w3, 1, x) == SAP_OK, "%s", sap_lastError());
    random_values(s, SAP_PARAM_BODY_INERTIA, x);
    CHECK(sap_setParam(s, SAP_PARAM_BODY_INERTIA, &w3, 1, x) == SAP_OK, "%s", sap_lastError());
    random_values(s, SAP_PARAM_GRAVITY, x);
    CHECK(sap_setParam(s, SAP_PARAM_GRAVITY, &w3, 1, x) == SAP_OK, "%s", sap_lastError());
    free(x);
  }
  int nq = m->nq, nv = m->nv, nu = m->nu;
  double *qpos = malloc(sizeof(double) * NW * nq), *qvel = malloc(sizeof(double) * NW * nv);
  double* ctrl = malloc(sizeof(double) * (NW * nu + 1));
  mjData* md = mj_makeData(mj);
  for (int w = 0; w < NW; w++) {
    mj_resetData(mj, md);
    for (int i = 0; i < nq; i++) md->qpos[i] += check_uniform(-0.4, 0.4);
    mj_normalizeQuat(mj, md->qpos);
    memcpy(qpos + w * nq, md->qpos, sizeof(double) * nq);
    for (int i = 0; i < nv; i++) qvel[w * nv + i] = check_uniform(-2, 2);
    for (int i = 0; i < nu; i++) ctrl[w * nu + i] = check_uniform(-1, 1);
  }
  sapSim* both[2] = {s, plain};
  for (int k = 0; k < 2; k++) {
    sap_set(both[k], SAP_FIELD_QPOS, NULL, NW, qpos);
    sap_set(both[k], SAP_FIELD_QVEL, NULL, NW, qvel);
    if (nu) sap_set(both[k], SAP_FIELD_CTRL, NULL, NW, ctrl);
    sapc_kinematics(both[k]);
    sapc_freeMotion(both[k]);
  }
  double* M = malloc(sizeof(double) * nv * nv);
  double* Ad = malloc(sizeof(double) * nv * nv);
  const sapData *d = sap_data(s), *dp = sap_data(plain);
  double tol = 1e-10;
  for (int w = 0; w < NW; w++) {
    mjModel* mw = mj_copyModel(NULL, mj);
    edit_mujoco(mw, s, w);
    mjData* dw = mj_makeData(mw);
    mj_setConst(mw, dw);  /* MuJoCo's constants derived from the edited masses (dof_M0, ...) */
    fx_mjForwardAt(mw, dw, qpos + w * nq, qvel + w * nv, ctrl + w * nu);
    mj_fullM(mw, dw, M);
    /* the overridden worlds differ from the plain batch; the others are it, bit for bit */
    int same = !memcmp(d->vstar + w * nv, dp->vstar + w * nv, sizeof(double) * nv) &&
               !memcmp(d->qA + (size_t)w * m->nA, dp->qA + (size_t)w * m->nA, sizeof(double) * m->nA);
    if (w == 1 || w == 3) CHECK(!same, "%s world %d: overrides change the free motion", path, w);
    else CHECK(same, "%s world %d: no override, bitwise the plain batch's free motion", path, w);
    double* A = Ad;  // dense, from the tree blocks
    CHECK(sap_getMassMatrix(s, w, A) == SAP_OK, "%s", sap_lastError());
    double damp[512];
    sap_getParam(s, SAP_PARAM_DOF_DAMPING, &w, 1, damp);
    for (int i = 0; i < nv; i++) A[i * nv + i] -= s->h * damp[i];
    /* generalized force tau = passive + actuator - bias (MuJoCo books gravity compensation
     * as passive or actuator force, sapsim in the bias) */
    double tau_s[512], tau_m[512], Ms = 0, fs = 1;
    for (int i = 0; i < nv * nv; i++) Ms = fmax(Ms, fabs(M[i]));
    for (int i = 0; i < nv; i++) {
      tau_s[i] = d->qfrc_passive[w * nv + i] + d->qfrc_actuator[w * nv + i] - d->qfrc_bias[w * nv + i];
      tau_m[i] = dw->qfrc_passive[i] + dw->qfrc_actuator[i] - dw->qfrc_bias[i];
      fs = fmax(fs, fmax(fabs(dw->qfrc_bias[i]), fmax(fabs(dw->qfrc_passive[i]), fabs(dw->qfrc_actuator[i]))));
    }
    char what[300];
    snprintf(what, sizeof(what), "%s world %d M", path, w);
    check_arrays(what, A, M, nv * nv, tol * Ms, tol);
    snprintf(what, sizeof(what), "%s world %d passive + actuator - bias", path, w);
    check_arrays(what, tau_s, tau_m, nv, 10 * tol * fs, tol);
    mj_deleteData(dw);
    mj_deleteModel(mw);
  }
  free(M);
  free(Ad);
  free(qpos);
  free(qvel);
  free(ctrl);
  mj_deleteData(md);
done:
  sap_free(s);
  sap_free(plain);
  sap_freeModel(m);
  mj_deleteModel(mj);
}

static void test_free_motion_oracle(void) {
  const char* path = write_xml("feature", FEATURE_XML);
  free_motion_scene(path);
  remove(path);
  free_motion_scene("scenes/servo_arm.xml");
  free_motion_scene("scenes/humanoid.xml");
  free_motion_scene("scenes/ant.xml");
}

/* ---- contact friction per world against MuJoCo's contacts on the edited model --------- */

static int find_pair(const sapModel* m, int a, int b) {
  int g0 = a < b ? a : b, g1 = a < b ? b : a;
  for (int p = 0; p < m->npair_max; p++)
    if (m->pair_geom[2 * p] == g0 && m->pair_geom[2 * p + 1] == g1) return p;
  return -1;
}

/* world 1's geoms get random friction, k and tau_d; MuJoCo on the model edited to its
 * friction gives every contact's combined friction; sapsim's world 1 pairs and the
 * contacts of a step must carry them, k in series and tau_d summed; worlds 0 and 2
 * keep the model's */
static int contact_scene(const char* tag, const char* xml, const char* combine) {
  const char* path = write_xml(tag, xml);
  char err[1000] = "";
  mjModel* mj = mj_loadXML(path, NULL, err, sizeof(err));
  sapModel* m = NULL;
  sapStatus st = sap_loadModel(path, &m);
  remove(path);
  CHECK(mj && st == SAP_OK, "%s: %s %s", tag, err, sap_lastError());
  int ncmp = 0;
  if (!mj || st != SAP_OK) { mj_deleteModel(mj); sap_freeModel(m); return 0; }
  char opt_combine[64];
  snprintf(opt_combine, sizeof(opt_combine), "friction_combine=%s", combine);
  const char* const kv[] = {"preset=approx64", "contact_margin=0", opt_combine, NULL};
  sapSim* s = make_sim(m, 3, kv);
  if (!s) goto done;
  int w = 1, ng = m->ngeom;
  double* x = malloc(sizeof(double) * 3 * ng);
  random_values(s, SAP_PARAM_GEOM_FRICTION, x);
  CHECK(sap_setParam(s, SAP_PARAM_GEOM_FRICTION, &w, 1, x) == SAP_OK, "%s", sap_lastError());
  double *gk = malloc(sizeof(double) * ng), *gd = malloc(sizeof(double) * ng);
  random_values(s, SAP_PARAM_GEOM_K, gk);
  random_values(s, SAP_PARAM_GEOM_TAUD, gd);
  CHECK(sap_setParam(s, SAP_PARAM_GEOM_K, &w, 1, gk) == SAP_OK, "%s", sap_lastError());
  CHECK(sap_setParam(s, SAP_PARAM_GEOM_TAUD, &w, 1, gd) == SAP_OK, "%s", sap_lastError());
  mjModel* mw = mj_copyModel(NULL, mj);
  edit_mujoco(mw, s, w);
  mjData* md = mj_makeData(mw);
  mj_forward(mw, md);
  const sapModel* sm = sap_model(s);
  int harmonic = !strcmp(combine, "harmonic");
  CHECK(sm->world_pair_mu != NULL, "%s: the pair table exists", tag);
  for (int i = 0; i < md->ncon && sm->world_pair_mu; i++) {
    const mjContact* c = md->contact + i;
    int p = find_pair(sm, c->geom[0], c->geom[1]);
    CHECK(p >= 0, "%s: MuJoCo contact %d has no pair", tag, i);
    if (p < 0) continue;
    size_t r = (size_t)w * sm->npair_max + p;
    double mu = c->dim == 1 ? 0 : c->friction[0];
    if (harmonic && !sm->pair_explicit[p] && c->dim > 1) {  /* Drake's rule on friction[0] */
      double a = x[3 * c->geom[0]], b = x[3 * c->geom[1]];
      mu = 2 * a * b / (a + b);
      if (c->dim > 3) mu = fmax(mu, 1e-5);
    }
    double spin = c->dim >= 4 ? c->friction[2] : 0, roll = c->dim == 6 ? c->friction[3] : 0;
    CHECK(sm->world_pair_mu[r] == mu, "%s pair %d: mu %.17g, MuJoCo %.17g", tag, p, sm->world_pair_mu[r], mu);
    CHECK(sm->world_pair_torsion[r] == spin && sm->world_pair_rolling[r] == roll,
          "%s pair %d: torsion %g rolling %g, MuJoCo %g %g", tag, p, sm->world_pair_torsion[r],
          sm->world_pair_rolling[r], spin, roll);
    double k0 = gk[c->geom[0]], k1 = gk[c->geom[1]];
    CHECK_CLOSE(sm->world_pair_k[r], k0 * k1 / (k0 + k1), 0, 1e-15, "%s pair %d: k in series", tag, p);
    CHECK_CLOSE(sm->world_pair_taud[r], gd[c->geom[0]] + gd[c->geom[1]], 0, 1e-15, "%s pair %d: tau_d", tag, p);
    ncmp++;
  }
  /* one step: world 1's contacts carry its pairs' material, the others the model's */
  CHECK(sap_step(s, 1) == SAP_OK, "%s", sap_lastError());
  const sapData* d = sap_data(s);
  for (int v = 0; v < 3; v++)
    for (int k = 0; k < d->ncon[v]; k++) {
      size_t slot = (size_t)v * d->ncon_max + k;
      int p = find_pair(sm, d->con_geom[2 * slot], d->con_geom[2 * slot + 1]);
      const double* mu = v == 1 ? sm->world_pair_mu + (size_t)sm->npair_max : sm->pair_mu;
      const double* pk = v == 1 ? sm->world_pair_k + (size_t)sm->npair_max : sm->pair_k;
      CHECK(p >= 0 && d->con_mu[slot] == mu[p] && d->con_k[slot] == pk[p], "%s world %d contact %d: mu %g k %g",
            tag, v, k, d->con_mu[slot], d->con_k[slot]);
    }
  free(x);
  free(gk);
  free(gd);
  mj_deleteData(md);
  mj_deleteModel(mw);
done:
  sap_free(s);
  sap_freeModel(m);
  mj_deleteModel(mj);
  return ncmp;
}

/* the priority / condim matrix of test_contact_params (floor under six spheres), and
 * explicit pairs, which keep their own friction */
static void test_contact_oracle(void) {
  static const int fcs[4] = {1, 3, 4, 6}, scs[6] = {1, 6, 3, 4, 6, 1};
  int total = 0;
  for (int comb = 0; comb < 2; comb++)
    for (int fp = 0; fp < 2; fp++)
      for (int f = 0; f < 4; f++) {
        char xml[6000], body[600];
        int n = snprintf(xml, sizeof(xml),
                         "<mujoco><worldbody><geom name='floor' type='plane' size='3 3 .1' priority='%d' "
                         "condim='%d'/>", fp, fcs[f]);
        for (int i = 0; i < 6; i++) {
          double r = 0.06;
          snprintf(body, sizeof(body),
                   "<body pos='%g 0.1 %g'><freejoint/><geom name='s%d' type='sphere' size='%g' priority='%d' "
                   "condim='%d'/></body>", (2 * r - 0.003) * i, r - 0.0015, i, r, i / 2, scs[i]);
          n += snprintf(xml + n, sizeof(xml) - n, "%s", body);
        }
        snprintf(xml + n, sizeof(xml) - n, "</worldbody></mujoco>");
        char tag[64];
        snprintf(tag, sizeof(tag), "prio%d_condim%d_%d", fp, fcs[f], comb);
        total += contact_scene(tag, xml, comb ? "harmonic" : "mujoco");
      }
  CHECK(total == 2 * 88, "contacts compared: %d", total);
  int n = contact_scene("pairs",
      "<mujoco><default><geom condim='3' friction='0.3'/></default><worldbody>"
      "<geom name='floor' type='plane' size='3 3 .1'/>"
      "<body pos='0 0 0.045'><freejoint/><geom name='ball_a' size='0.05'/></body>"
      "<body pos='1 0 0.045'><freejoint/><geom name='ball_b' size='0.05' condim='6'/></body>"
      "</worldbody><contact>"
      "<pair geom1='ball_a' geom2='floor' condim='4' friction='0.65 0.65 0.01'/>"
      "</contact></mujoco>", "mujoco");
  CHECK(n == 2, "explicit and dynamic pair compared (%d)", n);
}

/* ---- other worlds bitwise, model-valued overrides bitwise, reset to the model --------- */

static void bitwise_case(const char* path, const char* const* kv, int nstep) {
  sapModel* m = NULL;
  if (sap_loadModel(path, &m) != SAP_OK) { CHECK(0, "%s", sap_lastError()); return; }
  sapSim* s = make_sim(m, 4, kv);
  sapSim* plain = make_sim(m, 4, kv);
  if (!s || !plain) goto done;
  int nq = m->nq, nv = m->nv, nu = m->nu;
  double* ctrl = malloc(sizeof(double) * (4 * nu + 1));
  for (int i = 0; i < 4 * nu; i++) ctrl[i] = 0.6 * sin(0.7 * i);
  if (nu) { sap_set(s, SAP_FIELD_CTRL, NULL, 4, ctrl); sap_set(plain, SAP_FIELD_CTRL, NULL, 4, ctrl); }
  randomize_world(s, 1);
  override_with_model(s, 2);  /* world 2: overridden, with the model's own values */
  CHECK(sap_step(s, nstep) == SAP_OK && sap_step(plain, nstep) == SAP_OK, "%s", sap_lastError());
  const sapData *a = sap_data(s), *b = sap_data(plain);
  for (int w = 0; w < 4; w++) {
    int same = !memcmp(a->qpos + w * nq, b->qpos + w * nq, sizeof(double) * nq) &&
               !memcmp(a->qvel + w * nv, b->qvel + w * nv, sizeof(double) * nv);
    if (w == 1) CHECK(!same, "%s: world 1 (randomized) differs from the plain batch", path);
    else CHECK(same, "%s: world %d is bitwise the plain batch's (%s)", path, w,
               w == 2 ? "overridden with the model's values" : "no override");
  }
  /* back to the model: every world bitwise the plain batch from a reset */
  int ids[2] = {1, 2};
  CHECK(sap_resetParam(s, -1, ids, 2) == SAP_OK, "%s", sap_lastError());
  for (int p = 0; p < SAP_NPARAM; p++)
    CHECK(!sap_paramOverridden(s, (sapParam)p, 1) && !sap_paramOverridden(s, (sapParam)p, 2), "reset %s",
          sap_paramName((sapParam)p));
  sap_reset(s, -1, NULL);
  sap_reset(plain, -1, NULL);
  if (nu) { sap_set(s, SAP_FIELD_CTRL, NULL, 4, ctrl); sap_set(plain, SAP_FIELD_CTRL, NULL, 4, ctrl); }
  CHECK(sap_step(s, nstep) == SAP_OK && sap_step(plain, nstep) == SAP_OK, "%s", sap_lastError());
  CHECK(!memcmp(a->qpos, b->qpos, sizeof(double) * 4 * nq) && !memcmp(a->qvel, b->qvel, sizeof(double) * 4 * nv),
        "%s: after sap_resetParam every world is bitwise the plain batch's", path);
  free(ctrl);
done:
  sap_free(s);
  sap_free(plain);
  sap_freeModel(m);
}

static void test_bitwise_worlds(void) {
  static const char* const a32[] = {NULL};
  static const char* const a64h[] = {"preset=approx64", "friction_combine=harmonic", NULL};
  static const char* const drake_mid[] = {"preset=drake", "contact_point=contact_midpoint", "weight_mode=body_inertia", NULL};
  bitwise_case("scenes/humanoid.xml", a32, 40);
  bitwise_case("scenes/humanoid.xml", a64h, 40);
  bitwise_case("scenes/servo_arm.xml", drake_mid, 40);
  bitwise_case("scenes/quadruped_roll.xml", a32, 30);
}

/* ---- analytic: box on an incline (tilted gravity), per-world friction and gravity ----- */

static void test_incline(void) {
  const char* path = write_xml("incline",
      "<mujoco><option timestep='0.002'/><worldbody><geom name='floor' type='plane' size='50 50 .1' friction='1'/>"
      "<body pos='0 0 0.1'><freejoint/><geom name='box' type='box' size='0.1 0.1 0.1' mass='1' friction='1'/></body>"
      "</worldbody></mujoco>");
  sapModel* m = NULL;
  CHECK(sap_loadModel(path, &m) == SAP_OK, "%s", sap_lastError());
  remove(path);
  if (!m) return;
  enum { N = 8 };
  static const char* const kv[] = {"preset=approx64", NULL};
  sapSim* s = make_sim(m, N, kv);
  if (!s) { sap_freeModel(m); return; }
  double tant = 0.5, th = atan(tant);
  /* friction (both geoms: MuJoCo's max rule gives it) and gravity magnitude per world */
  double mu[N] = {0.02, 0.2, 0.4, 0.46, 0.54, 0.7, 2, 8}, gmag[N] = {30, 9.81, 3, 9.81, 9.81, 1, 9.81, 0.5};
  for (int w = 0; w < N; w++) {
    double f[6] = {mu[w], 0.005, 1e-4, mu[w], 0.005, 1e-4};
    double g[3] = {gmag[w] * sin(th), 0, -gmag[w] * cos(th)};
    CHECK(sap_setParam(s, SAP_PARAM_GEOM_FRICTION, &w, 1, f) == SAP_OK, "%s", sap_lastError());
    CHECK(sap_setParam(s, SAP_PARAM_GRAVITY, &w, 1, g) == SAP_OK, "%s", sap_lastError());
  }
  CHECK(sap_step(s, 100) == SAP_OK, "%s", sap_lastError());  /* settle the contact: 0.2 s */
  double v0[N * 6], v1[N * 6], t = 0.3;
  sap_get(s, SAP_FIELD_QVEL, NULL, N, v0);
  CHECK(sap_step(s, 150) == SAP_OK, "%s", sap_lastError());
  sap_get(s, SAP_FIELD_QVEL, NULL, N, v1);
  for (int w = 0; w < N; w++) {
    double a = (v1[6 * w] - v0[6 * w]) / t, gs = gmag[w] * sin(th);
    if (mu[w] < tant) {
      double want = gmag[w] * (sin(th) - mu[w] * cos(th));
      CHECK_CLOSE(a, want, 1e-3 * gs, 1e-2, "world %d: mu %g < tan %g slides, g %g", w, mu[w], tant, gmag[w]);
    } else {
      CHECK(fabs(v1[6 * w]) < 2e-3 * gs * 0.5, "world %d: mu %g >= tan %g sticks (v %g after 0.5 s, g %g)", w,
            mu[w], tant, v1[6 * w], gmag[w]);
    }
  }
  sap_free(s);
  sap_freeModel(m);
}

/* ---- analytic: pendulum period and damped decay per world ---------------------------- */

/* half-periods from zero crossings of q (linear interpolation); returns the period
 * from the first to the last crossing, amp the ratio of the peaks one period apart */
static void test_pendulum(void) {
  const char* path = write_xml("pendulum",
      "<mujoco><option timestep='0.001'/><worldbody><body name='bob'><joint name='hinge' type='hinge' axis='0 1 0'/>"
      "<inertial pos='0 0 -0.5' mass='1' diaginertia='0.01 0.01 0.01'/></body></worldbody></mujoco>");
  sapModel* m = NULL;
  CHECK(sap_loadModel(path, &m) == SAP_OK, "%s", sap_lastError());
  remove(path);
  if (!m) return;
  enum { N = 7 };
  static const char* const kv[] = {"preset=approx64", "contacts=0", NULL};
  sapSim* s = make_sim(m, N, kv);
  if (!s) { sap_freeModel(m); return; }
  double L = 0.5;
  /* world 6 is world 5 without damping: its amplitude drift is the integrator's
   * (the midpoint position update grows the energy by O(h w) per period) */
  double mass[N] = {0.01, 1, 100, 3, 0.2, 1, 1}, Iy[N] = {1e-4, 0.5, 2, 0.03, 0.002, 0.1, 0.1};
  double g[N] = {9.81, 9.81, 2, 30, 9.81, 9.81, 9.81}, arm[N] = {0, 0, 0, 0, 0.05, 0, 0};
  double damp[N] = {0, 0, 0, 0, 0, 0.05, 0};
  double J[N], T[N];
  for (int w = 0; w < N; w++) {
    double ms[2] = {0, mass[w]}, in[6] = {0, 0, 0, Iy[w] * 0.7, Iy[w], Iy[w] * 0.6}, gv[3] = {0, 0, -g[w]};
    CHECK(sap_setParam(s, SAP_PARAM_BODY_MASS, &w, 1, ms) == SAP_OK, "%s", sap_lastError());
    CHECK(sap_setParam(s, SAP_PARAM_BODY_INERTIA, &w, 1, in) == SAP_OK, "%s", sap_lastError());
    CHECK(sap_setParam(s, SAP_PARAM_GRAVITY, &w, 1, gv) == SAP_OK, "%s", sap_lastError());
    CHECK(sap_setParam(s, SAP_PARAM_DOF_ARMATURE, &w, 1, arm + w) == SAP_OK, "%s", sap_lastError());
    CHECK(sap_setParam(s, SAP_PARAM_DOF_DAMPING, &w, 1, damp + w) == SAP_OK, "%s", sap_lastError());
    J[w] = Iy[w] + mass[w] * L * L + arm[w];
    T[w] = 2 * M_PI * sqrt(J[w] / (mass[w] * g[w] * L));
  }
  double q0[N];
  for (int w = 0; w < N; w++) q0[w] = 0.02;
  sap_set(s, SAP_FIELD_QPOS, NULL, N, q0);
  double h = s->h, prev[N], first[N], last[N], peak0[N] = {0}, peak1[N] = {0};
  int ncross[N] = {0};
  for (int w = 0; w < N; w++) prev[w] = q0[w];
  double tmax = 0;
  for (int w = 0; w < N; w++) tmax = fmax(tmax, 3.5 * T[w]);
  int nstep = (int)(tmax / h);
  double q[N];
  for (int k = 1; k <= nstep; k++) {
    sap_step(s, 1);
    sap_get(s, SAP_FIELD_QPOS, NULL, N, q);
    for (int w = 0; w < N; w++) {
      double t = k * h;
      if (t < T[w]) peak0[w] = fmax(peak0[w], t > 0.5 * T[w] ? q[w] : 0);  /* the peak near t = T */
      else if (t < 2 * T[w]) peak1[w] = fmax(peak1[w], t > 1.5 * T[w] ? q[w] : 0);
      if ((prev[w] > 0) != (q[w] > 0) && ncross[w] < 7) {
        double tc = t - h * q[w] / (q[w] - prev[w]);
        if (ncross[w] == 0) first[w] = tc;
        last[w] = tc;
        ncross[w]++;
      }
      prev[w] = q[w];
    }
  }
  for (int w = 0; w < N; w++) {
    double wd = 2 * M_PI / T[w], zeta_w = damp[w] / (2 * J[w]);  /* damped: sqrt(w0^2 - (b/2J)^2) */
    double Td = 2 * M_PI / sqrt(wd * wd - zeta_w * zeta_w);
    CHECK(ncross[w] == 7, "world %d: %d zero crossings", w, ncross[w]);
    double Tm = (last[w] - first[w]) / 3;
    /* amplitude 0.02 rad: period (1 + q0^2/16) longer; midpoint rule O((w h)^2) */
    CHECK_CLOSE(Tm, Td * (1 + 0.02 * 0.02 / 16), 0, 5e-4, "world %d: period of m %g, I %g, g %g, armature %g", w,
                mass[w], Iy[w], g[w], arm[w]);
    if (damp[w] > 0)
      CHECK_CLOSE((peak1[w] / peak0[w]) / (peak1[6] / peak0[6]), exp(-damp[w] / (2 * J[w]) * Td), 0, 1e-3,
                  "world %d: decay per period (b %g, J %g)", w, damp[w], J[w]);
  }
  sap_free(s);
  sap_freeModel(m);
}

/* ---- analytic: resting penetration -m g / k per world -------------------------------- */

static void test_rest_penetration(void) {
  const char* path = write_xml("rest",
      "<mujoco><option timestep='0.002'/><worldbody><geom name='floor' type='plane' size='5 5 .1'/>"
      "<body pos='0 0 0.1'><freejoint/><geom name='ball' size='0.1' mass='1'/></body></worldbody></mujoco>");
  sapModel* m = NULL;
  CHECK(sap_loadModel(path, &m) == SAP_OK, "%s", sap_lastError());
  remove(path);
  if (!m) return;
  enum { N = 6 };
  static const char* const kv[] = {"preset=approx64", NULL};
  sapSim* s = make_sim(m, N, kv);
  if (!s) { sap_freeModel(m); return; }
  /* k/m within SAP's compliant regime for h = 2 ms (below 4 pi^2 / (h (h + tau_d))) */
  double mass[N] = {0.1, 1, 10, 2, 0.5, 30}, kb[N] = {2e2, 3e3, 1e6, 4e4, 1e4, 2e6}, kf[N] = {1e9, 3e3, 1e5, 4e4, 1e4, 2e6};
  double g[N] = {9.81, 9.81, 3, 20, 9.81, 9.81};
  for (int w = 0; w < N; w++) {
    double ms[2] = {0, mass[w]}, I = 0.4 * mass[w] * 0.01, in[6] = {0, 0, 0, I, I, I}, gv[3] = {0, 0, -g[w]};
    double k[2] = {kf[w], kb[w]}, td[2] = {0.02, 0.02};
    CHECK(sap_setParam(s, SAP_PARAM_BODY_MASS, &w, 1, ms) == SAP_OK, "%s", sap_lastError());
    CHECK(sap_setParam(s, SAP_PARAM_BODY_INERTIA, &w, 1, in) == SAP_OK, "%s", sap_lastError());
    CHECK(sap_setParam(s, SAP_PARAM_GEOM_K, &w, 1, k) == SAP_OK, "%s", sap_lastError());
    CHECK(sap_setParam(s, SAP_PARAM_GEOM_TAUD, &w, 1, td) == SAP_OK, "%s", sap_lastError());
    CHECK(sap_setParam(s, SAP_PARAM_GRAVITY, &w, 1, gv) == SAP_OK, "%s", sap_lastError());
  }
  CHECK(sap_step(s, 1500) == SAP_OK, "%s", sap_lastError());
  const sapData* d = sap_data(s);
  for (int w = 0; w < N; w++) {
    double kc = kb[w] * kf[w] / (kb[w] + kf[w]), want = -mass[w] * g[w] / kc;
    CHECK(d->ncon[w] == 1, "world %d: one contact (%d)", w, d->ncon[w]);
    CHECK_CLOSE(d->con_dist[(size_t)w * d->ncon_max], want, 1e-9, 1e-4, "world %d: phi = -m g / k (m %g, k %g)", w,
                mass[w], kc);
    CHECK_CLOSE(d->qpos[7 * w + 2], 0.1 + want, 1e-9, 1e-6, "world %d: height r + phi", w);
  }
  sap_free(s);
  sap_freeModel(m);
}

/* ---- analytic: a position servo's steady state per world ----------------------------- */

static void servo_case(int contacts) {
  const char* path = write_xml("servo",
      "<mujoco><option timestep='0.002'/><worldbody><body name='slider'><joint name='z' type='slide' axis='0 0 1'/>"
      "<geom size='0.05' mass='1' contype='0' conaffinity='0'/></body></worldbody>"
      "<actuator><position joint='z' kp='100' kv='20'/></actuator></mujoco>");
  sapModel* m = NULL;
  CHECK(sap_loadModel(path, &m) == SAP_OK, "%s", sap_lastError());
  remove(path);
  if (!m) return;
  enum { N = 5 };
  const char* kv[] = {"preset=approx64", contacts ? "contacts=1" : "contacts=0", NULL};
  sapSim* s = make_sim(m, N, kv);
  if (!s) { sap_freeModel(m); return; }
  double kp[N] = {30, 300, 3000, 3e4, 3e5}, mass[N] = {1, 1, 10, 0.3, 5};
  for (int w = 0; w < N; w++) {
    double kvw = 2 * sqrt(kp[w] * mass[w]), ms[2] = {0, mass[w]};  /* critically damped */
    CHECK(sap_setParam(s, SAP_PARAM_ACTUATOR_KP, &w, 1, kp + w) == SAP_OK, "%s", sap_lastError());
    CHECK(sap_setParam(s, SAP_PARAM_ACTUATOR_KV, &w, 1, &kvw) == SAP_OK, "%s", sap_lastError());
    CHECK(sap_setParam(s, SAP_PARAM_BODY_MASS, &w, 1, ms) == SAP_OK, "%s", sap_lastError());
  }
  CHECK(sap_step(s, 2500) == SAP_OK, "%s", sap_lastError());
  double q[N];
  sap_get(s, SAP_FIELD_QPOS, NULL, N, q);
  for (int w = 0; w < N; w++)
    CHECK_CLOSE(q[w], -mass[w] * 9.81 / kp[w], 1e-10, 1e-6, "world %d (contacts %d): q = -m g / kp, kp %g", w,
                contacts, kp[w]);
  sap_free(s);
  sap_freeModel(m);
}

static void test_servo(void) {
  servo_case(1);  /* the drive as a SAP row (implicit) */
  servo_case(0);  /* explicit drive force in the free motion */
}

/* ---- analytic: dry friction (frictionloss) per world --------------------------------- */

/* a horizontal slider pushed by f against dry friction F: it stays when f < F, else it
 * accelerates at (f - F) / m (m per world too) */
static void test_frictionloss(void) {
  const char* path = write_xml("dry",
      "<mujoco><option timestep='0.002'/><worldbody><body name='slider'><joint name='x' type='slide' axis='1 0 0'"
      " frictionloss='1'/><geom size='0.05' mass='1' contype='0' conaffinity='0'/></body></worldbody></mujoco>");
  sapModel* m = NULL;
  CHECK(sap_loadModel(path, &m) == SAP_OK, "%s", sap_lastError());
  remove(path);
  if (!m) return;
  enum { N = 6 };
  static const char* const kv[] = {"preset=approx64", NULL};
  sapSim* s = make_sim(m, N, kv);
  if (!s) { sap_freeModel(m); return; }
  double F[N] = {0.01, 0.5, 3, 40, 0.2, 1000}, f[N] = {0.05, 0.4, 6, 30, 0.25, 2500}, mass[N] = {0.1, 1, 2, 10, 0.05, 100};
  for (int w = 0; w < N; w++) {
    double ms[2] = {0, mass[w]};
    CHECK(sap_setParam(s, SAP_PARAM_DOF_FRICTIONLOSS, &w, 1, F + w) == SAP_OK, "%s", sap_lastError());
    CHECK(sap_setParam(s, SAP_PARAM_BODY_MASS, &w, 1, ms) == SAP_OK, "%s", sap_lastError());
  }
  sap_set(s, SAP_FIELD_QFRC_APPLIED, NULL, N, f);
  CHECK(sap_step(s, 250) == SAP_OK, "%s", sap_lastError());
  double v[N], t = 0.5;
  sap_get(s, SAP_FIELD_QVEL, NULL, N, v);
  for (int w = 0; w < N; w++) {
    double want = f[w] > F[w] ? (f[w] - F[w]) / mass[w] * t : 0;
    CHECK_CLOSE(v[w], want, 1e-4 * f[w] / mass[w] * t, 1e-3, "world %d: f %g, frictionloss %g, m %g", w, f[w], F[w],
                mass[w]);
  }
  sap_free(s);
  sap_freeModel(m);
}

/* ---- bad input: named, nothing changed ------------------------------------------------ */

static void expect_bad(sapSim* s, sapParam p, const int* worlds, int n, const double* x, sapStatus want,
                       const char* frag1, const char* frag2) {
  const sapModel* m = sap_model(s);
  unsigned* before = NULL;
  int nw = sap_nworld(s);
  if (m->world_override) {
    before = malloc(sizeof(unsigned) * nw);
    memcpy(before, m->world_override, sizeof(unsigned) * nw);
  }
  int size = sap_paramSize(s, p > 0 && p < SAP_NPARAM ? p : 0);
  double* snap = malloc(sizeof(double) * nw * size + 8);
  double* after = malloc(sizeof(double) * nw * size + 8);
  sapParam q = (unsigned)p < SAP_NPARAM ? p : SAP_PARAM_BODY_MASS;
  sap_getParam(s, q, NULL, nw, snap);
  sapStatus st = sap_setParam(s, p, worlds, n, x);
  const char* msg = sap_lastError();
  CHECK(st == want, "status %s, want %s (%s)", sap_statusName(st), sap_statusName(want), msg);
  CHECK(strstr(msg, frag1) && (!frag2 || strstr(msg, frag2)), "message '%s' names '%s' and '%s'", msg, frag1,
        frag2 ? frag2 : "");
  sap_getParam(s, q, NULL, nw, after);
  CHECK(!memcmp(snap, after, sizeof(double) * nw * size), "values unchanged after '%s'", msg);
  if (before) CHECK(!memcmp(before, m->world_override, sizeof(unsigned) * nw), "override flags unchanged");
  else CHECK(!m->world_override, "nothing allocated by a refused first call");
  free(before);
  free(snap);
  free(after);
}

static void test_bad_input(void) {
  sapModel* m = NULL;
  if (sap_loadModel("scenes/humanoid.xml", &m) != SAP_OK) { CHECK(0, "%s", sap_lastError()); return; }
  sapSim* s = make_sim(m, 3, NULL);
  if (!s) { sap_freeModel(m); return; }
  int nb = m->nbody, ng = m->ngeom, w1 = 1;
  double* x = malloc(sizeof(double) * 3 * (nb + ng));
  /* the first refused calls allocate nothing */
  sap_getParam(s, SAP_PARAM_BODY_MASS, &w1, 1, x);
  x[1] = -2;
  expect_bad(s, SAP_PARAM_BODY_MASS, &w1, 1, x, SAP_ERR_ARG, "body 'torso'", "negative");
  x[1] = NAN;
  expect_bad(s, SAP_PARAM_BODY_MASS, &w1, 1, x, SAP_ERR_NONFINITE, "world 1", "not finite");
  int bad_world = 3;
  x[1] = 1;
  expect_bad(s, SAP_PARAM_BODY_MASS, &bad_world, 1, x, SAP_ERR_ARG, "world id 3 out of range", NULL);
  expect_bad(s, (sapParam)SAP_NPARAM, &w1, 1, x, SAP_ERR_ARG, "unknown per-world parameter", NULL);
  CHECK(sap_paramFind("body_mas") == -1 && strstr(sap_lastError(), "body_mas") &&
            strstr(sap_lastError(), "geom_friction"), "unknown name named, names listed: %s", sap_lastError());
  CHECK(sap_paramFind("dof_damping") == SAP_PARAM_DOF_DAMPING, "names found");
  /* now with tables in place: a good call, then refused ones change nothing */
  CHECK(sap_setParam(s, SAP_PARAM_BODY_MASS, &w1, 1, x) == SAP_OK, "%s", sap_lastError());
  sap_getParam(s, SAP_PARAM_BODY_INERTIA, &w1, 1, x);
  x[3 * 2] = x[3 * 2 + 1] + x[3 * 2 + 2] + 0.5;  /* body 2: a > b + c */
  expect_bad(s, SAP_PARAM_BODY_INERTIA, &w1, 1, x, SAP_ERR_ARG, "triangle inequality", "body 'lwaist'");
  sap_getParam(s, SAP_PARAM_GEOM_FRICTION, &w1, 1, x);
  x[3 * 4 + 1] = -0.01;
  expect_bad(s, SAP_PARAM_GEOM_FRICTION, &w1, 1, x, SAP_ERR_ARG, "geom_friction", "negative");
  sap_getParam(s, SAP_PARAM_GEOM_K, &w1, 1, x);
  x[0] = 0;
  expect_bad(s, SAP_PARAM_GEOM_K, &w1, 1, x, SAP_ERR_ARG, "geom 'floor'", "(0, 1e20]");
  double taud[64];
  sap_getParam(s, SAP_PARAM_GEOM_TAUD, &w1, 1, taud);
  taud[1] = 2e3;
  expect_bad(s, SAP_PARAM_GEOM_TAUD, &w1, 1, taud, SAP_ERR_ARG, "[0, 1000]", NULL);
  double damp[64];
  sap_getParam(s, SAP_PARAM_DOF_DAMPING, &w1, 1, damp);
  damp[7] = -1;
  expect_bad(s, SAP_PARAM_DOF_DAMPING, &w1, 1, damp, SAP_ERR_ARG, "dof 7", "negative");
  double g[6] = {0, 0, -9.81, 0, INFINITY, 0};
  int two[2] = {0, 2};
  expect_bad(s, SAP_PARAM_GRAVITY, two, 2, g, SAP_ERR_NONFINITE, "world 2", "gravity");
  double fl[64] = {0};
  fl[3] = 0.5;  /* humanoid: no dof has frictionloss */
  expect_bad(s, SAP_PARAM_DOF_FRICTIONLOSS, &w1, 1, fl, SAP_ERR_ARG, "dof 3", "without frictionloss in the model");
  double kp[64] = {0};
  kp[3] = -5;
  expect_bad(s, SAP_PARAM_ACTUATOR_KP, &w1, 1, kp, SAP_ERR_ARG, "actuator", "negative");
  CHECK(sap_setParam(s, SAP_PARAM_GRAVITY, NULL, 2, g) == SAP_ERR_ARG, "worlds NULL needs n = nworld");
  free(x);
  sap_free(s);
  sap_freeModel(m);
}

/* ---- all worlds, subsets, one parameter's reset ---------------------------------------- */

static void test_subsets(void) {
  sapModel* m = NULL;
  if (sap_loadModel("scenes/ant.xml", &m) != SAP_OK) { CHECK(0, "%s", sap_lastError()); return; }
  enum { N = 5 };
  sapSim* s = make_sim(m, N, NULL);
  if (!s) { sap_freeModel(m); return; }
  int nv = m->nv;
  double* all = malloc(sizeof(double) * N * nv);
  for (int i = 0; i < N * nv; i++) all[i] = 0.01 * (i + 1);
  CHECK(sap_setParam(s, SAP_PARAM_DOF_DAMPING, NULL, N, all) == SAP_OK, "%s", sap_lastError());
  double* back = malloc(sizeof(double) * N * nv);
  sap_getParam(s, SAP_PARAM_DOF_DAMPING, NULL, N, back);
  CHECK(!memcmp(all, back, sizeof(double) * N * nv), "all worlds: values read back");
  double g[6] = {0, 0, -1, 0, 0, -3};
  int ids[2] = {4, 2};  /* any order */
  CHECK(sap_setParam(s, SAP_PARAM_GRAVITY, ids, 2, g) == SAP_OK, "%s", sap_lastError());
  double gb[3 * N];
  sap_getParam(s, SAP_PARAM_GRAVITY, NULL, N, gb);
  CHECK(gb[3 * 4 + 2] == -1 && gb[3 * 2 + 2] == -3 && gb[2] == m->gravity[2] && gb[3 * 3 + 2] == m->gravity[2],
        "subset: worlds 4 and 2 set, the others the model's (%g %g %g %g)", gb[14], gb[8], gb[2], gb[11]);
  CHECK(sap_resetParam(s, SAP_PARAM_DOF_DAMPING, ids, 2) == SAP_OK, "%s", sap_lastError());
  CHECK(!sap_paramOverridden(s, SAP_PARAM_DOF_DAMPING, 2) && sap_paramOverridden(s, SAP_PARAM_DOF_DAMPING, 1) &&
            sap_paramOverridden(s, SAP_PARAM_GRAVITY, 2), "one parameter of two worlds reset, the rest kept");
  sap_getParam(s, SAP_PARAM_DOF_DAMPING, ids + 1, 1, back);
  CHECK(!memcmp(back, m->dof_damping, sizeof(double) * nv), "reset world reads the model's damping");
  CHECK(sap_resetParam(s, 99, NULL, N) == SAP_ERR_ARG, "unknown parameter in reset");
  free(all);
  free(back);
  sap_free(s);
  sap_freeModel(m);
}

int main(void) {
  srand(17);
  RUN(test_free_motion_oracle);
  RUN(test_contact_oracle);
  RUN(test_bitwise_worlds);
  RUN(test_incline);
  RUN(test_pendulum);
  RUN(test_rest_penetration);
  RUN(test_servo);
  RUN(test_frictionloss);
  RUN(test_bad_input);
  RUN(test_subsets);
  return check_summary("test_domrand");
}
