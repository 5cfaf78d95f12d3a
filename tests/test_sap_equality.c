#define _POSIX_C_SOURCE 200809L
/* Equality constraints as SAP holonomic rows (kernels/sap_equality_t.h), through the whole
 * step on the CPU backend, against independent oracles: a four-bar linkage (scenes/fourbar.xml)
 * closed by a connect stays closed (the loop point recomputed from the body poses and the
 * linkage geometry); a coupled pair of pendulums (joint and fixed-tendon forms, q1 = 2 q2)
 * swings with the period of the combined inertia; the two-finger gripper (scenes/gripper2.xml)
 * keeps its fingers coupled within the near-rigid bound and follows MuJoCo 4 on the same MJCF;
 * inactive constraints (loaded, off at reset) and the equality disable flag at load. */
#include <unistd.h>

#include <mujoco/mujoco.h>

#include "fixture.h"
#include "fixture_mj.h"
#include "sap_solve.h"
#include "sim.h"

/* write an MJCF text to a temporary .xml file; path receives its name */
static int write_xml(const char* xml, char* path, size_t n) {
  const char* p = fx_tempFile("equality.xml", xml);
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

/* uniform in [-1, 1] from a 64-bit LCG */
static double urand(unsigned long long* state) {
  *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(*state >> 11) / (double)(1ULL << 52) * 2 - 1;
}

/* x + R(q) a, q = (w, x, y, z) */
static void body_point(const double* x, const double* q, const double* a, double* p) {
  double w = q[0], i = q[1], j = q[2], k = q[3];
  double R[9] = {1 - 2 * (j * j + k * k), 2 * (i * j - w * k), 2 * (i * k + w * j),
                 2 * (i * j + w * k), 1 - 2 * (i * i + k * k), 2 * (j * k - w * i),
                 2 * (i * k - w * j), 2 * (j * k + w * i), 1 - 2 * (i * i + j * j)};
  for (int r = 0; r < 3; r++) p[r] = x[r] + R[3 * r] * a[0] + R[3 * r + 1] * a[1] + R[3 * r + 2] * a[2];
}

static int verbose(void) { return getenv("SAPSIM_TEST_VERBOSE") != NULL; }

/* ---- four-bar linkage: the loop stays closed ----------------------------------------- */

/* The loop point C seen from the coupler (anchor C - B in its frame) and from the rocker
 * (C - D): the scene's geometry, not the solver's data. 1 s under gravity and random crank
 * torques (uniform in the control range, a new value every 20 steps), 4 worlds; the crank
 * turns about 3.5 rad. What remains of the violation is the rows' linearization at the step's
 * q (Drake's formulation): g(q + h v) - (g + h J v) = h^2/2 v' g'' v, the centripetal term
 * h^2 omega^2 r / 2 per step; the rows' bias h/2 Jdot v (eq_curvature, sap_equality_t.h)
 * takes it out to third order (test_fourbar_fast measures it at speed). */
static void fourbar_run(const char* preset, double tol) {
  sapModel* m = NULL;
  CHECK(sap_loadModel("scenes/fourbar.xml", &m) == SAP_OK, "%s", sap_lastError());
  if (!m) return;
  CHECK(m->neq == 1 && m->nsolve_rows == 3, "neq %d rows %d", m->neq, m->nsolve_rows);
  enum { NW = 4 };
  sapSim* s = make_sim(m, preset, NW);
  const double a1[3] = {0.26150623, 0, 0.14701868}, a2[3] = {-0.03849377, 0, 0.24701868};
  double viol = 0, qmin = 1e9, qmax = -1e9, ctrl[NW], xpos[NW * 12], xquat[NW * 16], qpos[NW * 3];
  unsigned long long seed = 12345;
  int n = 500, ok = 1;
  for (int k = 0; k < n && s; k++) {
    if (k % 20 == 0)
      for (int w = 0; w < NW; w++) ctrl[w] = 0.05 * urand(&seed);
    sap_set(s, SAP_FIELD_CTRL, NULL, NW, ctrl);
    if (sap_step(s, 1) != SAP_OK) { ok = 0; break; }
    sap_get(s, SAP_FIELD_XPOS, NULL, NW, xpos);
    sap_get(s, SAP_FIELD_XQUAT, NULL, NW, xquat);
    sap_get(s, SAP_FIELD_QPOS, NULL, NW, qpos);
    sapWorldInfo info[NW];
    sap_worldInfo(s, NULL, NW, info);
    for (int w = 0; w < NW; w++) {
      double p1[3], p2[3], e = 0;
      body_point(xpos + 12 * w + 6, xquat + 16 * w + 8, a1, p1);   // coupler = body 2
      body_point(xpos + 12 * w + 9, xquat + 16 * w + 12, a2, p2);  // rocker = body 3
      for (int r = 0; r < 3; r++) e += (p1[r] - p2[r]) * (p1[r] - p2[r]);
      if (sqrt(e) > viol) viol = sqrt(e);
      if (qpos[3 * w] < qmin) qmin = qpos[3 * w];
      if (qpos[3 * w] > qmax) qmax = qpos[3 * w];
      if (!(info[w].flags & SAP_WORLD_CONVERGED)) ok = 0;
    }
  }
  CHECK(ok, "%s: every step converged", preset);
  CHECK(viol < tol, "%s: loop violation %.3g m over 1 s (bound %.1g)", preset, viol, tol);
  CHECK(qmax - qmin > 0.5, "%s: the crank moved (range %.3g rad)", preset, qmax - qmin);
  if (verbose()) fprintf(stderr, "  %s: max violation %.3g m, crank range %.3g rad\n", preset, viol, qmax - qmin);
  sap_free(s);
  sap_freeModel(m);
}

static void test_fourbar_closed(void) {
  fourbar_run("approx64", 1e-4);
  fourbar_run("drake", 1e-4);
  fourbar_run("approx32", 1e-4);
}

/* ---- a fast four-bar: drift at speed with and without the curvature bias --------------- */

/* scenes/fourbar.xml with 1/10 the damping and a constant crank torque of 0.1 N m: the crank
 * spins up to 20-30 rad/s in 1 s. The largest loop violation over the last 0.5 s (oracle: the
 * loop point from the body poses and the scene's geometry, as fourbar_run) with the rows'
 * curvature bias off (Drake's formulation: vhat = -g/(2h)) and on (vhat = -g/(2h) - b,
 * b = h/2 Jdot v; sap_euler integration only). Without it the violation grows as
 * h^2 omega^2 r; with it it must stay below 1e-4 m and below a fifth of the uncorrected
 * figure. With the midpoint rule (approx presets' default) the option has no effect.
 * FAST_TORQUE=0.3 SAPSIM_TEST_VERBOSE=1 build/tests/test_sap_equality prints the figures of
 * README's equality section at 53-89 rad/s; at h omega ~ 0.2 rad per step the third-order terms
 * (h^3 omega^3 r) left by the correction dominate. */
/* src with the first `from` replaced by `to` into dst (n bytes); 0 when absent */
static int replace1(char* dst, size_t n, const char* src, const char* from, const char* to) {
  const char* at = strstr(src, from);
  if (!at) return 0;
  snprintf(dst, n, "%.*s%s%s", (int)(at - src), src, to, at + strlen(from));
  return 1;
}

static double fast_torque = 0.1;
static double fourbar_fast(const char* preset, const char* integration, int curvature, double* speed) {
  FILE* f = fopen("scenes/fourbar.xml", "r");
  static char xml[8192], x1[8192], x2[8192];
  size_t n = f ? fread(xml, 1, sizeof(xml) - 1, f) : 0;
  if (f) fclose(f);
  xml[n] = 0;
  if (!replace1(x1, sizeof(x1), xml, "damping=\"0.02\"", "damping=\"0.002\"") ||
      !replace1(x2, sizeof(x2), x1, "ctrlrange=\"-0.05 0.05\"", "ctrlrange=\"-1 1\""))
    return INFINITY;
  sapModel* m = load_xml(x2);
  if (!m) return INFINITY;
  sapOptions o;
  sap_optionsDefault(&o);
  o.device = SAP_DEVICE_CPU;
  sap_optionsSet(&o, "preset", preset);
  if (integration) sap_optionsSet(&o, "integration", integration);
  o.eq_curvature = curvature;
  sapSim* s = NULL;
  if (sap_create(m, &o, 1, &s) != SAP_OK) { sap_freeModel(m); return INFINITY; }
  const double a1[3] = {0.26150623, 0, 0.14701868}, a2[3] = {-0.03849377, 0, 0.24701868}, u = fast_torque;
  double viol = 0, xpos[12], xquat[16], qvel[3];
  sap_set(s, SAP_FIELD_CTRL, NULL, 1, &u);
  for (int k = 0; k < 500; k++) {
    if (sap_step(s, 1) != SAP_OK) { viol = INFINITY; break; }
    sap_get(s, SAP_FIELD_XPOS, NULL, 1, xpos);
    sap_get(s, SAP_FIELD_XQUAT, NULL, 1, xquat);
    double p1[3], p2[3], e = 0;
    body_point(xpos + 6, xquat + 8, a1, p1);
    body_point(xpos + 9, xquat + 12, a2, p2);
    for (int r = 0; r < 3; r++) e += (p1[r] - p2[r]) * (p1[r] - p2[r]);
    if (k >= 250 && sqrt(e) > viol) viol = sqrt(e);
  }
  sap_get(s, SAP_FIELD_QVEL, NULL, 1, qvel);
  *speed = fabs(qvel[0]);
  sap_free(s);
  sap_freeModel(m);
  return viol;
}

static void test_fourbar_fast(void) {
  const char* presets[] = {"drake", "approx64", "approx32", "approx64"};
  const char* integ[] = {NULL, "sap_euler", "sap_euler", NULL};
  if (getenv("FAST_TORQUE")) fast_torque = atof(getenv("FAST_TORQUE"));
  for (int i = 0; i < 4; i++) {
    double w0, w1, off = fourbar_fast(presets[i], integ[i], 0, &w0), on = fourbar_fast(presets[i], integ[i], 1, &w1);
    CHECK(w0 > 15 && w1 > 15, "%s: the crank spins fast (%.3g, %.3g rad/s)", presets[i], w0, w1);
    if (integ[i] || !strcmp(presets[i], "drake"))
      CHECK(on < 1e-4 && on < off / 5, "%s/sap_euler: fast four-bar violation %.3g m with the curvature bias, %.3g m "
            "without", presets[i], on, off);
    else  // midpoint: the option has no effect
      CHECK(on == off, "%s/midpoint: eq_curvature has no effect (%.3g m, %.3g m)", presets[i], on, off);
    if (verbose())
      fprintf(stderr, "  %s/%s: crank %.3g rad/s: violation %.3g m without the curvature bias, %.3g m with\n",
              presets[i], integ[i] ? integ[i] : "preset", w1, off, on);
  }
}

/* ---- the fast four-bar against MuJoCo 4 ---------------------------------------------- */

/* The fast four-bar (above) under constant crank torques 0.1 and 0.3 N m from rest: the crank
 * angle after 1 s (15 and 40 rad; the crank reaches 20-50 rad/s, h omega up to 0.1) against
 * MuJoCo 4's RK4 on the same model with stiff connects (eq_solref 0.004 1: loop gap 5e-6 -
 * 6e-5 m; with the default solref its gap reaches 1e-3 m). The midpoint presets (second order)
 * within 3% of its angle, sap_euler (first order; MuJoCo's own Euler is 1.5% off) within 5%.
 * Measured: approx64 -0.5%, -2.5%; drake -1.1%, -4.3%. With the midpoint presets' equality
 * rows built at q instead of q_h (sap_equality_t.h) the loop gained energy: +2.7% and +12%. */
static double fourbar_angle_mujoco(const char* xml, double u) {
  const char* path = fx_tempFile("fourbar_fast.xml", xml);
  char err[256] = "";
  mjModel* mj = path ? mj_loadXML(path, NULL, err, sizeof(err)) : NULL;
  CHECK(mj != NULL, "MuJoCo 4 loads the fast four-bar: %s", err);
  if (!mj) return NAN;
  mj->opt.integrator = mjINT_RK4;
  for (int e = 0; e < mj->neq; e++) mj->eq_solref[mjNREF * e] = 0.004, mj->eq_solref[mjNREF * e + 1] = 1;
  mjData* d = mj_makeData(mj);
  d->ctrl[0] = u;
  for (int k = 0; k < 500; k++) mj_step(mj, d);
  double q = d->qpos[0];
  mj_deleteData(d);
  mj_deleteModel(mj);
  return q;
}

static void test_fourbar_fast_mujoco(void) {
  char* xml = fx_readFile("scenes/fourbar.xml");
  xml = fx_subst(xml, "damping=\"0.02\"", "damping=\"0.002\"");
  xml = fx_subst(xml, "ctrlrange=\"-0.05 0.05\"", "ctrlrange=\"-1 1\"");
  sapModel* m = load_xml(xml);
  const char* presets[3] = {"approx64", "approx32", "drake"};
  const double tol[3] = {0.03, 0.03, 0.05};
  for (int i = 0; m && i < 2; i++) {
    double u = i ? 0.3 : 0.1, want = fourbar_angle_mujoco(xml, u);
    for (int k = 0; k < 3; k++) {
      sapSim* s = make_sim(m, presets[k], 1);
      if (!s) continue;
      sap_set(s, SAP_FIELD_CTRL, NULL, 1, &u);
      CHECK(sap_step(s, 500) == SAP_OK, "%s", sap_lastError());
      double q;
      sap_get(s, SAP_FIELD_QPOS, NULL, 1, &q);
      CHECK(fabs(q - want) <= tol[k] * fabs(want), "%s, torque %g: crank angle %.4f rad at 1 s, MuJoCo 4 RK4 %.4f",
            presets[k], u, q, want);
      if (verbose())
        fprintf(stderr, "  %s, torque %g: crank %.4f rad at 1 s, MuJoCo 4 RK4 %.4f (%+.2f%%)\n", presets[k], u, q, want,
                100 * (q - want) / want);
      sap_free(s);
    }
  }
  sap_freeModel(m);
  free(xml);
}

/* ---- where the rows are linearized -------------------------------------------------- */

/* Every equality row as the solver builds it (kernels/sap_equality_t.h sapw_buildEquality)
 * against MuJoCo 4's efc_J and efc_pos of the same equality at the point the position update
 * calls for: q itself with sap_euler (drake), q_h = mj_integratePos(q, v, h/2) with the
 * midpoint rule (approx64), at 60 random states (unit quaternions of every angle, v in +-3).
 * The scene: a connect between a ball-jointed body and a free ellipsoid, a weld with a relpose
 * and torquescale 0.7 between a slide-hinge body and the ellipsoid, a weld of a body to the
 * world at an anchor, a polynomial joint coupling; anchors off every com. The residual comes
 * from the row's vhat = -g / (2 hd) (curvature bias off), hd = h or h/2. Mutation: frames at q
 * under the midpoint rule fail every row whose dofs move. */
static const char* rows_xml =
    "<mujoco><option timestep='0.01'/><default><geom contype='0' conaffinity='0'/></default><worldbody>"
    "<body name='a' pos='0 0 1'><joint name='j1' type='hinge' axis='0 1 0'/>"
    "<geom type='capsule' fromto='0 0 0 0.3 0 0' size='0.02'/>"
    "<body name='b' pos='0.3 0 0'><joint type='ball'/><geom type='box' size='0.1 0.02 0.03' pos='0.1 0 0.01'/>"
    "</body></body>"
    "<body name='c' pos='1 0 1'><freejoint/><geom type='ellipsoid' size='0.05 0.1 0.2' pos='0.01 0.02 0'/></body>"
    "<body name='d' pos='0 1 1' euler='10 20 30'><joint name='s1' type='slide' axis='1 1 0'/>"
    "<joint name='h3' type='hinge' axis='1 0 0' pos='0 0.05 0'/><geom type='sphere' size='0.05' pos='0 0.1 0'/></body>"
    "</worldbody><equality>"
    "<connect body1='b' body2='c' anchor='0.2 0.01 0.03'/>"
    "<weld body1='d' body2='c' relpose='0.1 0.2 0.3 0.9 0.2 0.3 0.4' torquescale='0.7'/>"
    "<weld body1='b' anchor='0.1 0 0.05'/>"
    "<joint joint1='j1' joint2='h3' polycoef='0.1 0.5 0.2 0.3 0'/>"
    "</equality></mujoco>";

static void rows_run(const char* path, const mjModel* mj, const char* opts, int half) {
  sapSim* s = fx_sim(path, 1, opts);
  if (!s) return;
  const sapModel* m = s->m;
  int nq = mj->nq, nv = mj->nv, compared = 0;
  double q[32], v[32], Jm[32], Js[32], h = m->timestep, hd = half ? 0.5 * h : h, gerr = 0, jerr = 0;
  sapSolveParams prm;
  sapc_solveParams(s, s->h, &prm);
  CHECK(prm.eq_half == half && prm.eq_curvature == 0, "%s: rows at q_h %d, curvature %g", opts, prm.eq_half,
        prm.eq_curvature);
  mjData* md = mj_makeData(mj);
  check_rng_state = 11;
  for (int k = 0; k < 60; k++) {
    fx_randomQpos(mj, q);
    mj_normalizeQuat(mj, q);
    for (int i = 0; i < nv; i++) v[i] = check_uniform(-3, 3);
    CHECK_OK(sap_set(s, SAP_FIELD_QPOS, NULL, 1, q));
    CHECK_OK(sap_set(s, SAP_FIELD_QVEL, NULL, 1, v));
    CHECK_OK(sap_step(s, 1));  // the step's poses, cdof and A at (q, v); the rows rebuilt from them
    memcpy(s->d.qpos, q, sizeof(double) * nq);
    memcpy(s->d.qvel, v, sizeof(double) * nv);
    sapProblem_f64 P;
    sapw_worldProblem_f64(m, &s->d, 0, &prm, &P);
    int ns = sapw_buildEquality_f64(m, &s->d, 0, &prm, &P, 0);
    mju_copy(md->qpos, q, nq);
    if (half) mj_integratePos(mj, md->qpos, v, 0.5 * h);
    mju_zero(md->qvel, nv);
    mj_forward(mj, md);
    int r = 0;
    for (int i = 0; i < md->nefc; i++) {
      if (md->efc_type[i] != mjCNSTR_EQUALITY) continue;
      CHECK(r < ns && P.stag[r] == SAP_ROW_TAG(SAP_ROW_EQUALITY, md->efc_id[i]), "%s state %d: row %d is equality %d",
            opts, k, r, md->efc_id[i]);
      if (r >= ns) break;
      memset(Js, 0, sizeof(Js));
      for (int a = 0; a < P.snz && P.sidx[r * P.snz + a] >= 0; a++) Js[P.sidx[r * P.snz + a]] += P.sval[r * P.snz + a];
      memset(Jm, 0, sizeof(Jm));
      if (!mj_isSparse(mj)) mju_copy(Jm, md->efc_J + (size_t)i * nv, nv);
      else
        for (int a = 0; a < md->efc_J_rownnz[i]; a++)
          Jm[md->efc_J_colind[md->efc_J_rowadr[i] + a]] = md->efc_J[md->efc_J_rowadr[i] + a];
      double g = -2 * hd * P.spar[SAP_SPAR * r + 1], jn = 0;
      for (int c = 0; c < nv; c++) jn = fmax(jn, fabs(Jm[c])), jerr = fmax(jerr, fabs(Js[c] - Jm[c]));
      gerr = fmax(gerr, fabs(g - md->efc_pos[i]));
      char what[96];
      snprintf(what, sizeof(what), "%s state %d row %d (equality %d) J", opts, k, r, md->efc_id[i]);
      check_arrays(what, Js, Jm, nv, 1e-12 * fmax(1, jn), 0);
      CHECK_CLOSE(g, md->efc_pos[i], 1e-12, 1e-10, "%s state %d row %d (equality %d): residual", opts, k, r,
                  md->efc_id[i]);
      r++, compared++;
    }
    CHECK(r == ns, "%s state %d: %d rows, MuJoCo 4 %d", opts, k, ns, r);
  }
  CHECK(compared == 60 * 16, "%s: %d rows compared", opts, compared);
  if (verbose()) fprintf(stderr, "  %s: %d rows, largest |dJ| %.3g, |dg| %.3g m\n", opts, compared, jerr, gerr);
  mj_deleteData(md);
  sap_free(s);
}

static void test_rows_linearization(void) {
  const char* path = fx_tempFile("eq_rows.xml", rows_xml);
  mjModel* mj = fx_mjModel(path);
  if (!mj) return;
  CHECK(mj->neq == 4, "neq %d", (int)mj->neq);
  rows_run(path, mj, "preset=drake eq_curvature=0 threads=1", 0);
  rows_run(path, mj, "preset=approx64 eq_curvature=0 threads=1", 1);
  mj_deleteModel(mj);
}

/* ---- coupled pendulums: the period of the combined inertia ---------------------------- */

/* two pendulums on separate trees, hinges about y: p1 a 1 kg ball at 0.5 m, p2 a 0.5 kg ball
 * at 0.3 m (radius 0.02), coupled q1 = 2 q2 (joint form: polycoef 0 2; tendon form: tendons
 * t1 = q1, t2 = q2). In q2 = x: I = I2 + 4 I1, K = m2 g L2 + 4 m1 g L1 (V = -m2 g L2 cos x -
 * m1 g L1 cos 2x), I_i = m_i L_i^2 + 2/5 m_i r^2; T = 2 pi sqrt(I/K). */
static const char* pend_xml(int tendon, const char* active, char* buf, size_t n) {
  snprintf(buf, n,
           "<mujoco><option timestep='0.001'/><default><geom contype='0' conaffinity='0'/></default>"
           "<worldbody>"
           "<body name='p1'><joint name='q1' type='hinge' axis='0 1 0'/>"
           "<geom type='sphere' size='0.02' pos='0 0 -0.5' mass='1'/></body>"
           "<body name='p2' pos='1 0 0'><joint name='q2' type='hinge' axis='0 1 0'/>"
           "<geom type='sphere' size='0.02' pos='0 0 -0.3' mass='0.5'/></body></worldbody>"
           "%s<equality>%s</equality>"
           "<keyframe><key qpos='0.02 0.01'/></keyframe></mujoco>",
           tendon ? "<tendon><fixed name='t1'><joint joint='q1' coef='1'/></fixed>"
                    "<fixed name='t2'><joint joint='q2' coef='1'/></fixed></tendon>" : "",
           tendon ? (strcmp(active, "true") ? "<tendon tendon1='t1' tendon2='t2' polycoef='0 2 0 0 0' active='false'/>"
                                            : "<tendon tendon1='t1' tendon2='t2' polycoef='0 2 0 0 0'/>")
                  : (strcmp(active, "true") ? "<joint joint1='q1' joint2='q2' polycoef='0 2 0 0 0' active='false'/>"
                                            : "<joint joint1='q1' joint2='q2' polycoef='0 2 0 0 0'/>"));
  return buf;
}

static void pend_period(int tendon, const char* preset) {
  char xml[2048];
  sapModel* m = load_xml(pend_xml(tendon, "true", xml, sizeof(xml)));
  CHECK(m != NULL, "load");
  if (!m) return;
  const double g = 9.81, r = 0.02, m1 = 1, L1 = 0.5, m2 = 0.5, L2 = 0.3;
  double I1 = m1 * L1 * L1 + 0.4 * m1 * r * r, I2 = m2 * L2 * L2 + 0.4 * m2 * r * r;
  double T = 2 * 3.14159265358979323846 * sqrt((I2 + 4 * I1) / (m2 * g * L2 + 4 * m1 * g * L1));
  sapSim* s = make_sim(m, preset, 1);
  sap_reset(s, 0, NULL);
  double h = 0.001, q[2], qprev = 0.01, t_first = -1, t_last = -1, coup = 0;
  int ncross = 0;
  for (int k = 1; k <= 4000; k++) {
    sap_step(s, 1);
    sap_get(s, SAP_FIELD_QPOS, NULL, 1, q);
    if (fabs(q[0] - 2 * q[1]) > coup) coup = fabs(q[0] - 2 * q[1]);
    if (qprev > 0 && q[1] <= 0) {  // downward zero crossing of q2, linear interpolation
      double t = (k - 1 + qprev / (qprev - q[1])) * h;
      if (t_first < 0) t_first = t;
      t_last = t;
      ncross++;
    }
    qprev = q[1];
  }
  double Tm = ncross > 1 ? (t_last - t_first) / (ncross - 1) : 0;
  // error budget, relative: symplectic integration (omega h)^2/24 ~ 1e-6, amplitude
  // (0.02 rad) nonlinearity < 1e-4, crossing interpolation ~ 1e-5: 1e-3 leaves a margin
  CHECK_CLOSE(Tm, T, 0, 1e-3, "%s %s: period of the coupled pendulums", tendon ? "tendon" : "joint", preset);
  CHECK(coup < 1e-6, "%s %s: |q1 - 2 q2| = %.3g", tendon ? "tendon" : "joint", preset, coup);
  if (verbose())
    fprintf(stderr, "  %s %s: period %.6f analytic %.6f (%d crossings), max |q1 - 2 q2| %.3g\n",
            tendon ? "tendon" : "joint", preset, Tm, T, ncross, coup);
  sap_free(s);
  sap_freeModel(m);
}

static void test_coupled_pendulums(void) {
  pend_period(0, "approx64");
  pend_period(0, "drake");
  pend_period(1, "approx64");
  pend_period(1, "approx32");
}

/* ---- load: inactive constraints, the disable flag, weld -------------------------------- */

static void test_equality_load(void) {
  char xml[2048];
  sapModel* m = load_xml(pend_xml(0, "false", xml, sizeof(xml)));
  CHECK(m && m->neq == 1 && m->nsolve_rows == 1 && m->eq_active0[0] == 0,
        "active='false': loaded, off at reset (neq %d, eq_active0 %d)", m ? m->neq : -1, m ? m->eq_active0[0] : -1);
  sap_freeModel(m);
  // the disable flag
  pend_xml(0, "true", xml, sizeof(xml));
  char* opt = strstr(xml, "<option timestep='0.001'/>");
  char flagged[2200];
  snprintf(flagged, sizeof(flagged), "%.*s<option timestep='0.001'><flag equality='disable'/></option>%s",
           (int)(opt - xml), xml, opt + strlen("<option timestep='0.001'/>"));
  m = load_xml(flagged);
  CHECK(m && m->neq == 0, "equality disabled: no rows (neq %d)", m ? m->neq : -1);
  sap_freeModel(m);
  // weld loads (tests/test_sap_weld.c): 6 rows
  char path[64];
  write_xml("<mujoco><worldbody><body name='a'><freejoint/><geom size='0.1'/></body></worldbody>"
            "<equality><weld name='glue' body1='a'/></equality></mujoco>", path, sizeof(path));
  m = NULL;
  sapStatus st = sap_loadModel(path, &m);
  unlink(path);
  CHECK(st == SAP_OK && m->neq == 1 && m->eq_type[0] == SAP_EQ_WELD && m->nsolve_rows == 6,
        "weld loads: %s", sap_lastError());
  sap_freeModel(m);
  // connect, site form: the sites need not coincide at qpos0
  write_xml("<mujoco><worldbody><site name='w' pos='0 0 1'/><body name='a'><freejoint/><geom size='0.1'/>"
            "<site name='s' pos='0 0 0.1'/></body></worldbody>"
            "<equality><connect site1='s' site2='w'/></equality></mujoco>", path, sizeof(path));
  m = NULL;
  st = sap_loadModel(path, &m);
  unlink(path);
  CHECK(st == SAP_OK && m->neq == 1 && m->eq_obj1id[0] == 1 && m->eq_obj2id[0] == 0 && m->eq_data[2] == 0.1 &&
        m->eq_data[5] == 1, "connect site form: bodies and site positions");
  sap_freeModel(m);
}

/* ---- gripper: coupled fingers, against MuJoCo 4 --------------------------------------- */

/* controls at step k (t = k h): the wrist and the left finger under sines */
static void gripper_ctrl(int k, double h, double* u) {
  double t = k * h;
  u[0] = 0.6 * sin(2 * 3.14159265358979323846 * 1.5 * t);
  u[1] = 1 * sin(2 * 3.14159265358979323846 * 2 * t + 0.3);
}

/* MuJoCo 4 on scenes/gripper2.xml for n steps with the same controls; qout (n x 3); stiff:
 * the equality at solref (2h, 1), solimp (0.99, 0.999) instead of the MJCF's defaults.
 * Returns MuJoCo's largest |q_right - q_left|. */
static double gripper_mujoco(int n, int stiff, double* qout) {
  char err[512];
  mjModel* mj = mj_loadXML("scenes/gripper2.xml", NULL, err, sizeof(err));
  if (!mj) return -1;
  if (stiff) {
    mj->eq_solref[0] = 2 * mj->opt.timestep;
    mj->eq_solimp[0] = 0.99;
    mj->eq_solimp[1] = 0.999;
  }
  mjData* md = mj_makeData(mj);
  double viol = 0;
  for (int k = 0; k < n; k++) {
    gripper_ctrl(k, mj->opt.timestep, md->ctrl);
    mj_step(mj, md);
    for (int i = 0; i < 3; i++) qout[3 * k + i] = md->qpos[i];
    if (fabs(md->qpos[2] - md->qpos[1]) > viol) viol = fabs(md->qpos[2] - md->qpos[1]);
  }
  mj_deleteData(md);
  mj_deleteModel(mj);
  return viol;
}

/* The fingers stay coupled within the near-rigid bound, and the motion follows MuJoCo's.
 * Coupling: under a generalized load F on the row the violation settles at
 * h^2 beta^2 w F / (2 pi^2) (kernels/sap_equality_t.h), w = 1/A_ll + 1/A_rr (finger masses
 * 0.05, 0.12 plus h damping); F is at most the finger motor (1 N) plus the springs
 * (40 N/m x the largest travel) plus the heavier finger's weight and swing (0.12 kg x 2 g).
 * MuJoCo: its equality is soft (solref 0.02 s): it lets the fingers part by delta_MJ (measured,
 * ~1e-3 m), and that lag feeds back through the springs and the wrist for 1 s, so MuJoCo's
 * trajectory leaves the rigidly coupled one by several delta_MJ (measured 6.4 delta_MJ);
 * sapsim's is that rigid one within the bound above. Tolerance 10 delta_MJ on every coordinate.
 * Second reference: MuJoCo with a stiff equality (solref 2h, solimp 0.99-0.999)
 * must be at least 10x closer to sapsim: the gap closes as MuJoCo's constraint hardens (measured
 * 38x), so the gap is MuJoCo's softness, not an error of the rows. */
static void test_gripper_coupling(void) {
  sapModel* m = NULL;
  CHECK(sap_loadModel("scenes/gripper2.xml", &m) == SAP_OK, "%s", sap_lastError());
  if (!m) return;
  enum { N = 500 };
  double h = m->timestep, beta = 0.1, g = 9.81;
  double w = 1 / (0.05 + h * 0.2) + 1 / (0.12 + h * 0.2);
  static double qmj[3 * N], qst[3 * N], qs[3 * N];
  double dmj = gripper_mujoco(N, 0, qmj), dst = gripper_mujoco(N, 1, qst);
  CHECK(dmj > 0, "MuJoCo ran");
  sapSim* s = make_sim(m, "drake", 1);  // sap_euler: MuJoCo's semi-implicit Euler positions
  double coup = 0, e_mj = 0, e_st = 0, qmax = 0;
  for (int k = 0; k < N && s; k++) {
    double u[2];
    gripper_ctrl(k, h, u);
    sap_set(s, SAP_FIELD_CTRL, NULL, 1, u);
    sap_step(s, 1);
    sap_get(s, SAP_FIELD_QPOS, NULL, 1, qs + 3 * k);
    const double* q = qs + 3 * k;
    if (fabs(q[2] - q[1]) > coup) coup = fabs(q[2] - q[1]);
    if (fabs(q[1]) > qmax) qmax = fabs(q[1]);
    for (int i = 0; i < 3; i++) {
      if (fabs(q[i] - qmj[3 * k + i]) > e_mj) e_mj = fabs(q[i] - qmj[3 * k + i]);
      if (fabs(q[i] - qst[3 * k + i]) > e_st) e_st = fabs(q[i] - qst[3 * k + i]);
    }
  }
  double F = 1 + 40 * qmax + 0.12 * 2 * g;
  double bound = h * h * beta * beta * w * F / (2 * 3.14159265358979323846 * 3.14159265358979323846);
  CHECK(qmax > 0.01, "fingers moved %.3g m", qmax);
  CHECK(coup <= bound, "|q_right - q_left| %.3g > near-rigid bound %.3g", coup, bound);
  CHECK(e_mj <= 10 * dmj, "sapsim vs MuJoCo %.3g > 10 x MuJoCo's own violation %.3g", e_mj, dmj);
  CHECK(e_st <= e_mj / 10, "stiff MuJoCo not 10x closer: %.3g vs %.3g", e_st, e_mj);
  if (verbose())
    fprintf(stderr, "  coupling %.3g (bound %.3g); MuJoCo violation %.3g, |sapsim - MuJoCo| %.3g; stiff MuJoCo "
            "violation %.3g, |sapsim - stiff| %.3g; finger travel %.3g\n", coup, bound, dmj, e_mj, dst, e_st, qmax);
  sap_free(s);
  sap_freeModel(m);
}

int main(void) {
  RUN(test_equality_load);
  RUN(test_gripper_coupling);
  RUN(test_coupled_pendulums);
  RUN(test_fourbar_closed);
  RUN(test_fourbar_fast);
  RUN(test_fourbar_fast_mujoco);
  RUN(test_rows_linearization);
  return check_summary("test_sap_equality");
}
