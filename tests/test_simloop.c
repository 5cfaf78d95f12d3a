#define _POSIX_C_SOURCE 200809L
/* The simulation loop of seed 000 (host/run.c) and the per-world step retry (host/step.c).
 * Oracles: the same scene run at the small step h/2^k throughout (retried scene), bit-for-bit
 * equality with the feature off (scenes that never fail), plain sap_step runs (the run's
 * limits: exact step counts and times), clocks read by the test itself (wall-clock budget),
 * the states the test captured in its own callbacks (frame files). */
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "sapsim/sapsim.h"

/* A light box (0.1 kg) clamped between two heavy ones (1000 kg; the top one dropped from 0.13 m)
 * under gravity, near-rigid
 * contact (k = 1e9 N/m, no dissipation; the run sets contact_beta = 1e-6, i.e. SAP's
 * near-rigid regularisation off) and a large step h = 0.04 s: approx32's fp32 Newton
 * factorization loses positive definiteness at h (SAP_WORLD_FACTORFAIL) and not at h/2 */
static const char* clamp_xml =
    "<mujoco model='clamp'><option timestep='0.04'/>"
    "<custom><numeric name='sap_contact_k' data='1e9'/><numeric name='sap_contact_taud' data='0'/></custom>"
    "<worldbody><geom name='ground' type='plane' size='5 5 0.1'/>"
    "<body name='heavy0' pos='0 0 0.1'><freejoint/><geom type='box' size='0.3 0.3 0.1' mass='1000'/></body>"
    "<body name='light' pos='0 0 0.21' euler='0.3 0.2 0.1'><freejoint/>"
    "<geom type='box' size='0.05 0.05 0.01' mass='0.1'/></body>"
    "<body name='heavy1' pos='0 0 0.45'><freejoint/><geom type='box' size='0.3 0.3 0.1' mass='1000'/></body>"
    "</worldbody></mujoco>";

/* kv: "key=value;key=value" */
static sapSim* make_sim(const char* path, const char* xml, const char* kv, int nworld) {
  sapModel* m = NULL;
  sapStatus st = xml ? sap_loadModelString(xml, &m) : sap_loadModel(path, &m);
  if (st != SAP_OK) {
    fprintf(stderr, "  load: %s\n", sap_lastError());
    return NULL;
  }
  sapOptions o;
  sap_optionsDefault(&o);
  o.device = SAP_DEVICE_CPU;
  char buf[512];
  snprintf(buf, sizeof(buf), "%s", kv ? kv : "");
  for (char* tok = strtok(buf, ";"); tok; tok = strtok(NULL, ";"))
    if (sap_optionsSetPair(&o, tok) != SAP_OK) fprintf(stderr, "  option %s: %s\n", tok, sap_lastError());
  sapSim* s = NULL;
  if (sap_create(m, &o, nworld, &s) != SAP_OK) fprintf(stderr, "  create: %s\n", sap_lastError());
  sap_freeModel(m);
  if (s && sap_model(s)->nkey > 0) sap_reset(s, 0, NULL);
  return s;
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* world-steps with a failure flag over nstep steps (the steps taken one at a time) */
static int failures(sapSim* s, int nstep) {
  int n = sap_nworld(s), bad = 0;
  sapWorldInfo info[16];
  for (int k = 0; k < nstep; k++) {
    sap_step(s, 1);
    sap_worldInfo(s, NULL, n, info);
    for (int w = 0; w < n; w++)
      bad += (info[w].flags & (SAP_WORLD_MAXITER | SAP_WORLD_LSFAIL | SAP_WORLD_FACTORFAIL | SAP_WORLD_NONFINITE)) != 0;
  }
  return bad;
}

static double max_abs_diff(const double* a, const double* b, int n) {
  double d = 0;
  for (int i = 0; i < n; i++) d = fmax(d, fabs(a[i] - b[i]));
  return isnan(d) ? INFINITY : d;
}

/* ---- retry: the clamp fails at h, runs to the end with retries, matches h/2 ----------- */

/* Oracle: the clamp run at h/2 (and h/4) throughout without retry, which never fails.
 * (1) retry_recover_steps = 10^6: the first step fails at h, so the world runs every later
 * step at h/2 and its trajectory IS the h/2 run's, bit for bit (the failed attempt leaves
 * nothing behind: state and warm start are restored). (2) recover after 8 clean steps (the
 * default): some steps at h, some retried; the light box's position stays within the
 * discretization error between the h/2 and h/4 reference runs (times 2) of the h/2 run,
 * over every step of 1 s; every world advances by exactly h per batch step. */
static void test_retry_clamp(void) {
  const char* base = "contact_beta=1e-6";
  const int nstep = 25, nw = 2;
  sapSim* fail = make_sim(NULL, clamp_xml, base, nw);
  sapSim* half = make_sim(NULL, clamp_xml, "contact_beta=1e-6;timestep=0.02", nw);
  sapSim* quarter = make_sim(NULL, clamp_xml, "contact_beta=1e-6;timestep=0.01", nw);
  sapSim* sticky = make_sim(NULL, clamp_xml, "contact_beta=1e-6;retry_depth=3;retry_recover_steps=1000000", nw);
  sapSim* retry = make_sim(NULL, clamp_xml, "contact_beta=1e-6;retry_depth=3", nw);
  if (!fail || !half || !quarter || !sticky || !retry) {
    CHECK(0, "create the clamp batches");
    goto done;
  }
  int nq = sap_model(fail)->nq, nv = sap_model(fail)->nv;
  CHECK(failures(fail, nstep) > 0, "the clamp must fail at the nominal step h = 0.04 without retry");
  double qh[2 * 21], vh[2 * 18], qq[2 * 21], qs[2 * 21], vs[2 * 18], qr[2 * 21], t[2];
  double worst = 0, ref = 0, worst_light_z = 0;
  int flagged = 0;
  for (int k = 1; k <= nstep; k++) {
    flagged += failures(half, 2) + failures(quarter, 4) + failures(sticky, 1) + failures(retry, 1);
    sap_get(half, SAP_FIELD_QPOS, NULL, nw, qh);
    sap_get(half, SAP_FIELD_QVEL, NULL, nw, vh);
    sap_get(quarter, SAP_FIELD_QPOS, NULL, nw, qq);
    sap_get(sticky, SAP_FIELD_QPOS, NULL, nw, qs);
    sap_get(sticky, SAP_FIELD_QVEL, NULL, nw, vs);
    sap_get(retry, SAP_FIELD_QPOS, NULL, nw, qr);
    CHECK(!memcmp(qs, qh, sizeof(double) * nw * nq) && !memcmp(vs, vh, sizeof(double) * nw * nv),
          "step %d: retry that stays at h/2 differs from the h/2 run (|dq| %g)", k,
          max_abs_diff(qs, qh, nw * nq));
    /* qacc_free divides by the step the world last took (h/2 here) */
    double as[2 * 18], ah[2 * 18];
    sap_get(sticky, SAP_FIELD_QACC_FREE, NULL, nw, as);
    sap_get(half, SAP_FIELD_QACC_FREE, NULL, nw, ah);
    CHECK(!memcmp(as, ah, sizeof(as)), "step %d: qacc_free of the retried run differs from the h/2 run's", k);
    /* positions of the three bodies (x, y, z of each free joint) */
    for (int w = 0; w < nw; w++)
      for (int b = 0; b < 3; b++)
        for (int i = 0; i < 3; i++) {
          int a = w * nq + 7 * b + i;
          worst = fmax(worst, fabs(qr[a] - qh[a]));
          ref = fmax(ref, fabs(qq[a] - qh[a]));
          if (b == 1 && i == 2) worst_light_z = fmax(worst_light_z, fabs(qr[a] - qh[a]));
        }
    sap_get(retry, SAP_FIELD_TIME, NULL, nw, t);
    CHECK_CLOSE(t[0], k * 0.04, 1e-12, 0, "retried world's time after step %d", k);
    CHECK(t[0] == t[1], "worlds in lockstep");
  }
  CHECK(flagged == 0, "no flag left after retries or in the small-step references (%d)", flagged);
  CHECK(worst <= 2 * ref && ref > 0, "retried run vs h/2: %g m, h/2 vs h/4: %g m", worst, ref);
  printf("  clamp: |retry - h/2| %.3g m (light box z %.3g m), |h/4 - h/2| %.3g m\n", worst, worst_light_z, ref);
  sapWorldRetry rt[2];
  CHECK(sap_worldRetry(retry, NULL, nw, rt) == SAP_OK, "sap_worldRetry");
  CHECK(rt[0].retries > 0 && rt[0].level_max == 1 && rt[0].h_min == 0.02,
        "retries %lld, deepest level %d, smallest step %g", rt[0].retries, rt[0].level_max, rt[0].h_min);
  printf("  clamp: %lld retries in %d steps, smallest step %g\n", rt[0].retries, nstep, rt[0].h_min);
  CHECK(sap_worldRetry(fail, NULL, nw, rt) == SAP_OK && rt[0].retries == 0 && rt[0].h_min == 0.04,
        "retry off: no counters");
  CHECK(sap_retryClear(retry) == SAP_OK && sap_worldRetry(retry, NULL, nw, rt) == SAP_OK && rt[0].retries == 0,
        "sap_retryClear");
  sap_reset(retry, -1, NULL);
  CHECK(sap_worldRetry(retry, NULL, nw, rt) == SAP_OK && rt[0].level == 0, "a reset returns to h");
done:
  sap_free(fail);
  sap_free(half);
  sap_free(quarter);
  sap_free(sticky);
  sap_free(retry);
}

/* At the smallest step a failure is accepted and flagged: with a 10 g light box the clamp fails
 * at h = 0.04 and at h/2 (the oracle: the same scene run at h/2 alone fails too); with
 * retry_depth = 1 those world-steps keep their flag (the world stays at h/2 while it fails), the
 * retries are counted, and time stays
 * exact */
static void test_retry_flag_at_smallest(void) {
  char xml[2048];
  snprintf(xml, sizeof(xml), "%s", clamp_xml);
  char* mass = strstr(xml, "mass='0.1'");
  if (mass) memcpy(mass, "mass='.01'", 10);
  sapSim* s = make_sim(NULL, xml, "contact_beta=1e-6;retry_depth=1", 1);
  sapSim* ref = make_sim(NULL, xml, "contact_beta=1e-6;timestep=0.02", 1);
  if (!s || !ref || !mass) {
    CHECK(0, "create");
    goto done;
  }
  int fails_ref = failures(ref, 20);
  int fails = failures(s, 10);
  double t;
  sap_get(s, SAP_FIELD_TIME, NULL, 1, &t);
  CHECK_CLOSE(t, 0.4, 1e-12, 0, "time after 10 steps of 0.04");
  sapWorldRetry rt;
  sap_worldRetry(s, NULL, 1, &rt);
  CHECK(fails_ref > 0 && fails > 0 && rt.retries >= 1 && rt.level == 1 && rt.h_min == 0.02,
        "flagged at the smallest step: %d world-steps (h/2 alone: %d), %lld retries", fails, fails_ref, rt.retries);
done:
  sap_free(s);
  sap_free(ref);
}

/* Per world: a batch where world 0 holds the failing clamp (light box 0.1 kg) and world 1 a
 * 3 kg light box (sap_setParam body_mass, the 0.1 kg box's inertia kept; it never fails, the
 * oracle run below shows it; at 1 kg the extrapolated warm start meets one fp32 factorization
 * failure in 25 steps, at 0.3 kg seven): with
 * retry, world 0 is retried and world 1 is bit for bit the world 1 of a batch without retry,
 * on 2 threads */
static void test_retry_per_world(void) {
  sapSim* a = make_sim(NULL, clamp_xml, "contact_beta=1e-6;threads=2", 2);
  sapSim* b = make_sim(NULL, clamp_xml, "contact_beta=1e-6;threads=2;retry_depth=3", 2);
  if (!a || !b) {
    CHECK(0, "create");
    goto done;
  }
  const sapModel* m = sap_model(a);
  int w1 = 1, nb = m->nbody;
  double mass[8];
  sap_getParam(a, SAP_PARAM_BODY_MASS, &w1, 1, mass);
  mass[2] = 3.0;  /* body 2: the light box */
  CHECK(nb == 4 && sap_setParam(a, SAP_PARAM_BODY_MASS, &w1, 1, mass) == SAP_OK &&
            sap_setParam(b, SAP_PARAM_BODY_MASS, &w1, 1, mass) == SAP_OK, "set the mass: %s", sap_lastError());
  int fa = 0;
  double qa[2 * 21], qb[2 * 21], va[2 * 18], vb[2 * 18];
  int same1 = 1;
  for (int k = 0; k < 25; k++) {
    sapWorldInfo info[2];
    sap_step(a, 1);
    sap_step(b, 1);
    sap_worldInfo(a, NULL, 2, info);
    fa += (info[1].flags & SAP_WORLD_FACTORFAIL) != 0;
    sap_get(a, SAP_FIELD_QPOS, NULL, 2, qa);
    sap_get(b, SAP_FIELD_QPOS, NULL, 2, qb);
    sap_get(a, SAP_FIELD_QVEL, NULL, 2, va);
    sap_get(b, SAP_FIELD_QVEL, NULL, 2, vb);
    same1 &= !memcmp(qa + m->nq, qb + m->nq, sizeof(double) * m->nq) && !memcmp(va + m->nv, vb + m->nv, sizeof(double) * m->nv);
  }
  sapWorldRetry rt[2];
  sap_worldRetry(b, NULL, 2, rt);
  CHECK(fa == 0, "world 1 (3 kg) must not fail without retry (%d)", fa);
  CHECK(rt[0].retries > 0 && rt[1].retries == 0, "retries world 0 %lld, world 1 %lld", rt[0].retries, rt[1].retries);
  CHECK(same1, "world 1 is not bitwise the same next to a retried world");
done:
  sap_free(a);
  sap_free(b);
}

/* ---- retry on a scene that never fails: bitwise unchanged ----------------------------- */

static void run_state(sapSim* s, int nstep, double* out, int* iters) {
  int n = sap_nworld(s), nq = sap_model(s)->nq, nv = sap_model(s)->nv, ns = sap_model(s)->nsensordata;
  double* ctrl = calloc((size_t)n * sap_model(s)->nu + 1, sizeof(double));
  for (int i = 0; i < n * sap_model(s)->nu; i++) ctrl[i] = 0.4 * sin(1.7 * i);
  if (sap_model(s)->nu) sap_set(s, SAP_FIELD_CTRL, NULL, n, ctrl);
  free(ctrl);
  sap_step(s, nstep);
  sap_get(s, SAP_FIELD_QPOS, NULL, n, out);
  sap_get(s, SAP_FIELD_QVEL, NULL, n, out + n * nq);
  sap_get(s, SAP_FIELD_TIME, NULL, n, out + n * (nq + nv));
  if (ns) sap_get(s, SAP_FIELD_SENSORDATA, NULL, n, out + n * (nq + nv + 1));
  sapWorldInfo info[8];
  sap_worldInfo(s, NULL, n, info);
  for (int w = 0; w < n; w++) iters[w] = info[w].newton_iter * 1000 + info[w].flags;
}

/* Oracle: the same batch with retry off. Scenes that never fail (box stack, humanoid with
 * controls, the ant with sensors, extrapolated warm start) give bit-identical qpos, qvel, time,
 * sensors, iterations and flags with retry_depth = 4, and no retries. */
static void test_retry_bitwise(void) {
  struct { const char* scene; const char* opt; int nstep; } cases[] = {
      {"scenes/box_stack.xml", "", 200},
      {"scenes/humanoid.xml", "warm_start=extrapolate", 100},
      {"scenes/ant_sensors.xml", "preset=approx64", 100},
  };
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
    char on[256];
    snprintf(on, sizeof(on), "%s%sretry_depth=4;retry_recover_steps=3", cases[c].opt, cases[c].opt[0] ? ";" : "");
    sapSim* a = make_sim(cases[c].scene, NULL, cases[c].opt, 4);
    sapSim* b = make_sim(cases[c].scene, NULL, on, 4);
    if (!a || !b) {
      CHECK(0, "%s: create", cases[c].scene);
      sap_free(a);
      sap_free(b);
      continue;
    }
    const sapModel* m = sap_model(a);
    size_t n = 4 * ((size_t)m->nq + m->nv + 1 + m->nsensordata);
    double* xa = calloc(n, sizeof(double));
    double* xb = calloc(n, sizeof(double));
    int ia[4], ib[4];
    run_state(a, cases[c].nstep, xa, ia);
    run_state(b, cases[c].nstep, xb, ib);
    CHECK(!memcmp(xa, xb, n * sizeof(double)), "%s: state with retry differs (|d| %g)", cases[c].scene,
          max_abs_diff(xa, xb, (int)n));
    CHECK(!memcmp(ia, ib, sizeof(ia)), "%s: iterations or flags differ", cases[c].scene);
    sapWorldRetry rt[4];
    sap_worldRetry(b, NULL, 4, rt);
    CHECK(rt[0].retries + rt[1].retries + rt[2].retries + rt[3].retries == 0, "%s: retried (not a non-failing scene)",
          cases[c].scene);
    free(xa);
    free(xb);
    sap_free(a);
    sap_free(b);
  }
}

/* bad values are refused by name */
static void test_retry_options(void) {
  sapOptions o;
  sap_optionsDefault(&o);
  struct { const char* key; const char* value; const char* frag; } bad[] = {
      {"retry_depth", "21", "retry_depth: 21 is out of range [0, 20]"},
      {"retry_depth", "-1", "retry_depth: -1 is out of range"},
      {"retry_depth", "two", "retry_depth: 'two' is not an integer"},
      {"retry_recover_steps", "0", "retry_recover_steps: 0 is out of range [1, 1000000]"},
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    sapStatus st = sap_optionsSet(&o, bad[i].key, bad[i].value);
    CHECK(st == SAP_ERR_OPTION && strstr(sap_lastError(), bad[i].frag), "%s=%s: %d '%s'", bad[i].key, bad[i].value,
          st, sap_lastError());
  }
  CHECK(sap_optionsSet(&o, "retry_depth", "3") == SAP_OK && o.retry_depth == 3, "retry_depth=3");
  /* a struct filled in directly is checked at sap_create */
  sapModel* m = NULL;
  sap_loadModel("scenes/box.xml", &m);
  sapOptions d;
  sap_optionsDefault(&d);
  d.retry_depth = 99;
  sapSim* s = NULL;
  sapStatus st = sap_create(m, &d, 1, &s);
  CHECK(st == SAP_ERR_OPTION && strstr(sap_lastError(), "retry_depth"), "struct retry_depth=99: %d '%s'", st,
        sap_lastError());
  sap_free(s);
  sap_freeModel(m);
  char desc[8192];
  sap_optionsDescribe(&o, desc, sizeof(desc));
  CHECK(strstr(desc, "retry_depth=3\n") && strstr(desc, "retry_recover_steps=8\n"), "described: %s", desc);
}

/* ---- sap_run: limits one by one ------------------------------------------------------- */

typedef struct {
  long before_calls, after_calls, stop_at;
  long last_before, last_after;
  int bad_order;
  double sleep_s, t0, elapsed[64];
  long nelapsed;
} cbState;

static int cb_before(sapSim* s, long step, const sapWorldInfo* info, void* user) {
  cbState* c = (cbState*)user;
  (void)s;
  (void)info;
  c->bad_order |= step != c->before_calls || step != c->after_calls;
  c->before_calls++;
  c->last_before = step;
  return 0;
}

static int cb_after(sapSim* s, long step, const sapWorldInfo* info, void* user) {
  cbState* c = (cbState*)user;
  (void)s;
  c->bad_order |= step != c->after_calls + 1 || !info;
  c->after_calls++;
  c->last_after = step;
  if (c->sleep_s > 0) {
    struct timespec ts = {0, (long)(c->sleep_s * 1e9)};
    nanosleep(&ts, NULL);
    if (c->nelapsed < 64) c->elapsed[c->nelapsed++] = now_s() - c->t0;
  }
  return c->stop_at > 0 && step >= c->stop_at;
}

/* Oracles: plain sap_step runs of the same batch (bitwise), step counts by the test's own
 * counters, its own clock for the wall-clock budget */
static void test_run_limits(void) {
  sapSim* a = make_sim("scenes/box_stack.xml", NULL, "", 3);
  sapSim* b = make_sim("scenes/box_stack.xml", NULL, "", 3);
  if (!a || !b) {
    CHECK(0, "create");
    goto done;
  }
  int nq = sap_model(a)->nq;
  double qa[3 * 64], qb[3 * 64], t[3];
  sapRunOptions o;
  sapRunSummary r;
  cbState c;

  /* max_steps: exactly those steps, the same state as sap_step */
  sap_runOptionsDefault(&o);
  o.max_steps = 7;
  memset(&c, 0, sizeof(c));
  o.before = cb_before;
  o.after = cb_after;
  o.user = &c;
  CHECK(sap_run(a, &o, &r) == SAP_OK, "run: %s", sap_lastError());
  sap_step(b, 7);
  sap_get(a, SAP_FIELD_QPOS, NULL, 3, qa);
  sap_get(b, SAP_FIELD_QPOS, NULL, 3, qb);
  CHECK(r.stop == SAP_RUN_STOP_STEPS && r.steps == 7 && r.world_steps == 21, "max_steps: stop %s, %ld steps",
        sap_runStopName(r.stop), r.steps);
  CHECK(!memcmp(qa, qb, sizeof(double) * 3 * nq), "run(7) == step(7) bitwise");
  CHECK(c.before_calls == 7 && c.after_calls == 7 && !c.bad_order && c.last_after == 7,
        "callbacks: %ld before, %ld after, order %d", c.before_calls, c.after_calls, c.bad_order);
  CHECK_CLOSE(r.time_max, 7 * 0.005, 1e-15, 0, "summary time");

  /* end_time: from t = 0.035, to 0.1 -> 13 more steps (h = 0.005); then the step that lands
   * nearest the end time */
  sap_runOptionsDefault(&o);
  o.max_steps = -1;
  o.end_time = 0.1;
  CHECK(sap_run(a, &o, &r) == SAP_OK && r.stop == SAP_RUN_STOP_END_TIME && r.steps == 13,
        "end_time 0.1: %s after %ld steps", sap_runStopName(r.stop), r.steps);
  sap_get(a, SAP_FIELD_TIME, NULL, 3, t);
  CHECK_CLOSE(t[0], 0.1, 1e-12, 0, "time at end_time");
  o.end_time = 0.1124;  /* the step nearest: 0.11 */
  CHECK(sap_run(a, &o, &r) == SAP_OK && r.steps == 2 && fabs(r.time_min - 0.11) < 1e-12,
        "end_time 0.1124: %ld steps, t %g", r.steps, r.time_min);
  o.end_time = 0.1126;  /* 0.115 */
  CHECK(sap_run(a, &o, &r) == SAP_OK && r.steps == 1 && fabs(r.time_min - 0.115) < 1e-12,
        "end_time 0.1126: %ld steps, t %g", r.steps, r.time_min);
  o.end_time = 0.01;  /* already past */
  CHECK(sap_run(a, &o, &r) == SAP_OK && r.steps == 0 && r.stop == SAP_RUN_STOP_END_TIME, "end_time in the past");

  /* a callback asks to stop after step 5 */
  sap_runOptionsDefault(&o);
  memset(&c, 0, sizeof(c));
  c.stop_at = 5;
  o.max_steps = -1;
  o.after = cb_after;
  o.user = &c;
  CHECK(sap_run(a, &o, &r) == SAP_OK && r.stop == SAP_RUN_STOP_CALLBACK && r.steps == 5 && c.after_calls == 5,
        "callback stop: %s after %ld steps", sap_runStopName(r.stop), r.steps);

  /* wall-clock budget: each step sleeps 40 ms in the callback; the run stops at the first
   * check past 0.15 s (the test's own clock: the step before was under it) */
  sap_runOptionsDefault(&o);
  memset(&c, 0, sizeof(c));
  c.sleep_s = 0.04;
  c.t0 = now_s();
  o.max_steps = 1000;
  o.wall_time = 0.15;
  o.after = cb_after;
  o.user = &c;
  CHECK(sap_run(a, &o, &r) == SAP_OK && r.stop == SAP_RUN_STOP_WALL_TIME, "wall_time: %s", sap_runStopName(r.stop));
  CHECK(r.steps >= 1 && r.steps < 1000 && c.nelapsed == r.steps, "wall_time: %ld steps", r.steps);
  if (c.nelapsed >= 2) {
    CHECK(c.elapsed[c.nelapsed - 1] >= 0.15, "stopped only past the budget (%g s)", c.elapsed[c.nelapsed - 1]);
    CHECK(c.elapsed[c.nelapsed - 2] < 0.15 + 1e-3, "did not stop at the first check past the budget (%g s)",
          c.elapsed[c.nelapsed - 2]);
  }
  CHECK(r.wall_s >= 0.15 && r.step_s < r.wall_s, "wall %g s, in steps %g s", r.wall_s, r.step_s);

  /* failure: a non-finite applied force refuses world 1 (SAP_WORLD_BADINPUT); stop_flags
   * with that bit ends the run after the first step */
  double f[3 * 64] = {0};
  f[1 * sap_model(a)->nv + 2] = NAN;
  int cnt;
  sapArrayType ty;
  double* dst = (double*)sap_dataArray(a, "qfrc_applied", &cnt, &ty);
  memcpy(dst, f, sizeof(double) * 3 * sap_model(a)->nv);
  sap_runOptionsDefault(&o);
  o.stop_flags = SAP_WORLD_BADINPUT;
  CHECK(sap_run(a, &o, &r) == SAP_OK && r.stop == SAP_RUN_STOP_FAILURE && r.steps == 1 && r.flag_steps[5] == 1,
        "stop_flags: %s after %ld steps, badinput world-steps %ld", sap_runStopName(r.stop), r.steps, r.flag_steps[5]);
  dst[1 * sap_model(a)->nv + 2] = 0;

  /* bad run options, each named */
  struct { long max_steps; double end_time, wall; int every; const char* frag; } bad[] = {
      {-2, NAN, NAN, 0, "max_steps -2"},      {-1, NAN, NAN, 0, "no limit is set"},
      {10, INFINITY, NAN, 0, "end_time inf"}, {10, NAN, -1, 0, "wall_time -1"},
      {10, NAN, NAN, -3, "frame_every -3"},   {10, NAN, NAN, 2, "neither a writer nor a frame_fn"},
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    sap_runOptionsDefault(&o);
    o.max_steps = bad[i].max_steps;
    o.end_time = bad[i].end_time;
    o.wall_time = bad[i].wall;
    o.frame_every = bad[i].every;
    sapStatus st = sap_run(a, &o, &r);
    CHECK(st == SAP_ERR_ARG && strstr(sap_lastError(), bad[i].frag), "bad run option %zu: %d '%s'", i, st,
          sap_lastError());
  }
done:
  sap_free(a);
  sap_free(b);
}

/* ---- summary and frames --------------------------------------------------------------- */

typedef struct {
  double q[8][3 * 64], v[8][3 * 64], t[8][3];
  long step[8];
  int n;
  long flag_steps[8], unconverged;
} frameCapture;

static sapStatus capture_frame(sapSim* s, long step, void* user) {
  frameCapture* c = (frameCapture*)user;
  if (c->n >= 8) return SAP_ERR_ARG;
  c->step[c->n] = step;
  sap_get(s, SAP_FIELD_QPOS, NULL, 3, c->q[c->n]);
  sap_get(s, SAP_FIELD_QVEL, NULL, 3, c->v[c->n]);
  sap_get(s, SAP_FIELD_TIME, NULL, 3, c->t[c->n]);
  c->n++;
  return SAP_OK;
}

static int tally_after(sapSim* s, long step, const sapWorldInfo* info, void* user) {
  frameCapture* c = (frameCapture*)user;
  (void)step;
  for (int w = 0; w < sap_nworld(s); w++) {
    for (int k = 0; k < 8; k++) c->flag_steps[k] += (info[w].flags >> k) & 1;
    c->unconverged += !(info[w].flags & SAP_WORLD_CONVERGED);
  }
  return 0;
}

static sapStatus frame_fail_at_3(sapSim* s, long step, void* user) {
  (void)s;
  (void)user;
  return step == 3 ? SAP_ERR_IO : SAP_OK;
}

/* Oracle: the states the test's own frame_fn captured at the same steps (the binary file
 * holds them bit for bit, float32 to float rounding), the tally of its own after callback, and
 * sap_iterStats. Frames at step 0 and every 3 steps of 10: steps 0, 3, 6, 9. */
static void test_run_frames_summary(void) {
  sapSim* s = make_sim("scenes/box_stack.xml", NULL, "", 3);
  static frameCapture cap;
  memset(&cap, 0, sizeof(cap));
  if (!s) {
    CHECK(0, "create");
    return;
  }
  const sapModel* m = sap_model(s);
  int nq = m->nq, nv = m->nv;
  char p64[] = "/tmp/sapsim_framesXXXXXX", p32[] = "/tmp/sapsim_frames32XXXXXX", pcsv[] = "/tmp/sapsim_csvXXXXXX";
  close(mkstemp(p64));
  close(mkstemp(p32));
  close(mkstemp(pcsv));
  sapFrameWriter *w64 = NULL, *w32 = NULL, *wcsv = NULL;
  CHECK(sap_frameWriterOpen(s, p64, SAP_FRAMES_BINARY, &w64) == SAP_OK, "open: %s", sap_lastError());
  CHECK(sap_frameWriterOpen(s, p32, SAP_FRAMES_BINARY32, &w32) == SAP_OK, "open32");
  CHECK(sap_frameWriterOpen(s, pcsv, SAP_FRAMES_CSV, &wcsv) == SAP_OK, "open csv");
  sapFrameWriter* wbad = NULL;
  CHECK(sap_frameWriterOpen(s, p64, 7, &wbad) == SAP_ERR_ARG && strstr(sap_lastError(), "format 7") && !wbad,
        "bad format");
  CHECK(sap_frameWriterOpen(s, "/nonexistent/dir/f", SAP_FRAMES_CSV, &wbad) == SAP_ERR_IO &&
        strstr(sap_lastError(), "/nonexistent/dir/f") && !wbad, "unwritable path named");
  sapRunOptions o;
  sapRunSummary r;
  sap_runOptionsDefault(&o);
  o.max_steps = 10;
  o.frame_every = 3;
  o.writer = w64;
  o.frame_fn = capture_frame;
  o.frame_user = &cap;
  o.after = tally_after;
  o.user = &cap;
  CHECK(sap_run(s, &o, &r) == SAP_OK, "run: %s", sap_lastError());
  CHECK(r.frames == 8 && cap.n == 4 && cap.step[3] == 9, "frames %ld (writer + fn), captured %d", r.frames, cap.n);
  /* the other two writers on a second run of the same length from the same state */
  sapIterStats it;
  sap_iterStats(s, &it);
  CHECK(r.newton_mean == it.newton_mean && r.newton_p95 == it.newton_p95 && r.ls_max == it.ls_max &&
        r.world_steps == 30, "summary iterations vs sap_iterStats");
  CHECK(!memcmp(r.flag_steps, cap.flag_steps, sizeof(cap.flag_steps)) && r.unconverged == cap.unconverged,
        "summary flags vs the callback's tally");
  CHECK(r.world_steps_per_s > 0 && r.h_min == 0.005 && r.retries == 0, "summary rates");
  CHECK(sap_frameWriterFrames(w64) == 4, "writer frames");
  CHECK(sap_frameWriterClose(w64) == SAP_OK, "close");
  /* read the binary file back */
  FILE* f = fopen(p64, "rb");
  unsigned char h[64];
  CHECK(f && fread(h, 1, 64, f) == 64, "read header");
  uint32_t u[6];
  double hh;
  memcpy(u, h + 8, sizeof(u));
  memcpy(&hh, h + 32, sizeof(hh));
  CHECK(!memcmp(h, "SAPFRAME", 8) && u[0] == 1 && u[1] == 64 && u[2] == 3 && (int)u[3] == nq && (int)u[4] == nv &&
            u[5] == 8 && hh == 0.005, "header: version %u, %u worlds, nq %u, nv %u, dtype %u", u[0], u[2], u[3], u[4], u[5]);
  for (int k = 0; f && k < 4; k++) {
    int64_t step;
    double t[3], q[3 * 64], v[3 * 64];
    size_t got = fread(&step, 8, 1, f) + fread(t, 8, 3, f) + fread(q, 8, 3 * nq, f) + fread(v, 8, 3 * nv, f);
    CHECK(got == 1 + 3 + 3 * (size_t)(nq + nv), "frame %d size", k);
    CHECK(step == cap.step[k] && !memcmp(t, cap.t[k], sizeof(t)) && !memcmp(q, cap.q[k], sizeof(double) * 3 * nq) &&
              !memcmp(v, cap.v[k], sizeof(double) * 3 * nv), "frame %d equals the captured state", k);
  }
  CHECK(f && fgetc(f) == EOF, "nothing after the last frame");
  if (f) fclose(f);
  sap_frameWriterClose(w32);
  sap_frameWriterClose(wcsv);
  unlink(p64);
  unlink(p32);
  unlink(pcsv);
  /* a frame writer's failure ends the run with its status */
  sap_runOptionsDefault(&o);
  o.max_steps = 10;
  o.frame_every = 1;
  o.frame_fn = frame_fail_at_3;
  sapStatus st = sap_run(s, &o, &r);
  CHECK(st == SAP_ERR_IO && r.stop == SAP_RUN_STOP_ERROR && r.steps == 3, "frame failure: %d, %s after %ld steps", st,
        sap_runStopName(r.stop), r.steps);
  sap_free(s);
}

int main(void) {
  RUN(test_retry_options);
  RUN(test_retry_clamp);
  RUN(test_retry_flag_at_smallest);
  RUN(test_retry_per_world);
  RUN(test_retry_bitwise);
  RUN(test_run_limits);
  RUN(test_run_frames_summary);
  return check_summary("test_simloop");
}
