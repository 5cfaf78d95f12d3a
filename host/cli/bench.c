/* `sapsim bench`: throughput sweep over nworld (x presets x line searches x --vary variants).
 * stdout: one JSON line per configuration (DESIGN.md §10); stderr: progress and
 * a readable table. MuJoCo's mj_step runs on the same MJCF, the same worlds,
 * states, controls and threads, and the ratio is reported (ratios, not absolute
 * times, are what compare on a shared machine). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mujoco/mujoco.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "cli.h"

#include "json.h"

/* the longest --vary variant (key=value pairs joined by +), with its terminating 0 */
#define SAP_VARIANT_LEN 256

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* the threads MuJoCo's peer run uses when the option threads is 0 (OpenMP's default) */
static int max_threads(void) {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

static int cmp_int(const void* a, const void* b) { return *(const int*)a - *(const int*)b; }

static double p95(int* x, int n) {
  qsort(x, n, sizeof(int), cmp_int);
  int i = (int)ceil(0.95 * n) - 1;
  return x[i < 0 ? 0 : i];
}

/* MuJoCo's side of a bench row: seconds for nstep steps of nworld worlds, and its solver's
 * iterations per world-step over the timed run, counted as sapsim counts its own (a world-step's
 * Newton iterations: the most any of its islands took, as sapsim's per-island loops report;
 * line-search evaluations: mjSolverStat.neval summed over that island's iterations, the most
 * over the islands) */
typedef struct {
  double seconds;
  double newton_mean, newton_p95, ls_mean, ls_p95;
} sapMjRun;

/* world d's last step: the most Newton iterations and line-search evaluations of an island */
static void mujoco_iterations(const mjData* d, int* newton, int* evals) {
  int nisl = d->nisland < 1 ? 1 : d->nisland < mjNISLAND ? d->nisland : mjNISLAND;
  *newton = *evals = 0;
  for (int i = 0; i < nisl; i++) {
    int it = d->solver_niter[i], ne = 0;
    for (int k = 0; k < it && k < mjNSOLVER; k++) ne += d->solver[i * mjNSOLVER + k].neval;
    if (it > *newton) *newton = it;
    if (ne > *evals) *evals = ne;
  }
}

/* MuJoCo's mj_step on the same worlds and controls */
static sapMjRun mujoco_run(const char* scene, int nworld, int nstep, int key, const double* ctrl, int threads) {
  sapMjRun out = {NAN, NAN, NAN, NAN, NAN};
  char err[1000];
  mjModel* mj = mj_loadXML(scene, NULL, err, sizeof(err));
  if (!mj) return out;
  mjData** d = malloc(sizeof(mjData*) * nworld);
  for (int w = 0; w < nworld; w++) {
    d[w] = mj_makeData(mj);
    if (key >= 0) mj_resetDataKeyframe(mj, d[w], key);
    memcpy(d[w]->ctrl, ctrl + (size_t)w * mj->nu, sizeof(double) * mj->nu);
  }
  if (threads <= 0) threads = 1;
  /* warm up like sapsim's run (first-touch, lazy set-up), then restart from the same state */
  int warm = nstep / 10 < 1 ? 1 : nstep / 10;
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int w = 0; w < nworld; w++) {
    for (int k = 0; k < warm; k++) mj_step(mj, d[w]);
    if (key >= 0) mj_resetDataKeyframe(mj, d[w], key);
    else mj_resetData(mj, d[w]);
    memcpy(d[w]->ctrl, ctrl + (size_t)w * mj->nu, sizeof(double) * mj->nu);
  }
  int* newton = malloc(sizeof(int) * 2 * (size_t)nworld * nstep);  // per world-step, then evaluations
  double t0 = now_s();
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int w = 0; w < nworld; w++)
    for (int k = 0; k < nstep; k++) {
      mj_step(mj, d[w]);
      long i = (long)w * nstep + k;
      if (newton) mujoco_iterations(d[w], newton + i, newton + (long)nworld * nstep + i);
    }
  out.seconds = now_s() - t0;
  if (newton) {
    int n = nworld * nstep;
    double sn = 0, se = 0;
    for (int i = 0; i < n; i++) sn += newton[i], se += newton[n + i];
    out.newton_mean = sn / n;
    out.ls_mean = se / n;
    out.newton_p95 = p95(newton, n);
    out.ls_p95 = p95(newton + n, n);
  }
  free(newton);
  for (int w = 0; w < nworld; w++) mj_deleteData(d[w]);
  free(d);
  mj_deleteModel(mj);
  return out;
}

static void progress(const sapCli* cli, int done, int total, const char* what) {
  if (!cli->progress || cli->quiet) return;
  int width = 30, filled = total ? width * done / total : width;
  fprintf(stderr, "\r[%.*s%*s] %d/%d %-40s", filled, "##############################", width - filled,
          "", done, total, what);
  if (done == total) fputc('\n', stderr);
  fflush(stderr);
}

typedef struct {
  double steps_per_s, mj_steps_per_s;
  sapIterStats it;
  double mj_newton_mean, mj_newton_p95;  /* MuJoCo's Newton iterations per world-step (NAN: none) */
  char preset[16], ls[16], variant[SAP_VARIANT_LEN];
  int nworld;
} sapBenchRow;

/* GPU stage breakdown: the timed run has no synchronisation inside, so the stages
 * come from a second run of the same steps with stage_timing=1 (events between stages,
 * one wait per step); the total stays the timed run's. (A short prefix of the run, as
 * before, over-weighted the first steps, whose solves iterate more.) */
static int stage_pass(const sapModel* m, const sapOptions* opt, int nworld, int key,
                      const double* ctrl, int nstep, sapTimers* tm) {
  sapOptions o = *opt;
  o.stage_timing = 1;
  sapSim* s = NULL;
  int rc = 1;
  if (sap_create(m, &o, nworld, &s) == SAP_OK && sap_reset(s, key, NULL) == SAP_OK &&
      (!m->nu || sap_set(s, SAP_FIELD_CTRL, NULL, nworld, ctrl) == SAP_OK) &&
      sap_step(s, nstep) == SAP_OK) {
    sapTimers st;
    sap_timers(s, &st);
    tm->kinematics = st.kinematics;
    tm->collision = st.collision;
    tm->free_motion = st.free_motion;
    tm->solve = st.solve;
    tm->integrate = st.integrate;
    rc = 0;
  }
  sap_free(s);
  return rc;
}

/* what one configuration measured */
typedef struct {
  sapTimers tm;          /* the timed run's total, and per stage (GPU: from the stage pass) */
  sapIterStats it;       /* iterations over every world-step of the timed run */
  sapcliTally tally;     /* the worlds' last step */
  double contacts_p95;   /* over worlds at the last step */
  long long retries;     /* step retry (option retry_depth): substeps redone in the timed run */
  double h_min;          /* and the smallest step any world took */
} sapBenchResult;

/* one configuration on s: warm up, time cli->steps steps, collect diagnostics. 0, or 1 (the
 * library's error in sap_lastError), or 2 (reported here) */
static int bench_measure(const sapCli* cli, const sapModel* m, sapSim* s, const sapOptions* opt, int nworld,
                         int key, const double* ctrl, sapBenchResult* r) {
  int warm = cli->steps / 10 < 1 ? 1 : cli->steps / 10;
  /* the reset restores the keyframe's controls: set the random ones again for the timed run */
  if (sap_reset(s, key, NULL) || (m->nu && sap_set(s, SAP_FIELD_CTRL, NULL, nworld, ctrl)) || sap_step(s, warm) ||
      sap_reset(s, key, NULL) || (m->nu && sap_set(s, SAP_FIELD_CTRL, NULL, nworld, ctrl)) ||
      sap_iterStatsClear(s) || sap_retryClear(s) || sap_step(s, cli->steps))
    return 1;
  sap_timers(s, &r->tm);
  if (sap_iterStats(s, &r->it)) return 1;
  if (sap_onGPU(s) && stage_pass(m, opt, nworld, key, ctrl, cli->steps, &r->tm)) return 1;
  sapWorldInfo* info = malloc(sizeof(sapWorldInfo) * nworld);
  sapWorldRetry* rt = malloc(sizeof(sapWorldRetry) * nworld);
  int* ncon = malloc(sizeof(int) * nworld);
  int rc = 1;
  if (info && rt && ncon && sap_worldInfo(s, NULL, nworld, info) == SAP_OK &&
      sap_worldRetry(s, NULL, nworld, rt) == SAP_OK) {
    sapcli_tally(info, nworld, &r->tally);
    r->retries = 0;
    r->h_min = INFINITY;
    for (int w = 0; w < nworld; w++) {
      ncon[w] = info[w].ncon;
      r->retries += rt[w].retries;
      r->h_min = fmin(r->h_min, rt[w].h_min);
    }
    r->contacts_p95 = p95(ncon, nworld);
    rc = 0;
  } else {
    fprintf(stderr, "\nsapsim bench: %s\n", info && rt && ncon ? sap_lastError() : "out of memory");
    rc = 2;  /* reported */
  }
  free(info);
  free(rt);
  free(ncon);
  return rc;
}

/* one JSON line (DESIGN.md §10; keys read by bench/plot_bench.py and python/tests) */
static const char* bench_report(const sapCli* cli, sapSim* s, const char* variant, int nworld,
                                const sapBenchResult* r, double sps, const sapMjRun* mjr, char* line, int nline) {
  double mj_sps = cli->mujoco ? (double)nworld * cli->steps / mjr->seconds : NAN;
  const sapOptions* o = sap_options(s);
  const sapTimers* tm = &r->tm;
  double ns_per = 1e9 / ((double)nworld * cli->steps);  /* seconds -> ns per world-step */
  sapjWriter j;
  sapj_begin(&j, line, nline);
  sapj_str(&j, "scene", cli->scene);
  sapj_str(&j, "backend", sap_onGPU(s) ? "cuda" : "cpu");
  sapj_str(&j, "device", sap_deviceName(s));
#ifdef SAP_HAVE_CUDA
  sapj_str(&j, "build", "gcc " __VERSION__ " + nvcc");
#else
  sapj_str(&j, "build", "gcc " __VERSION__);
#endif
  sapj_str(&j, "preset", sapo_valueName("preset", o->preset));
  sapj_str(&j, "line_search", sapo_valueName("line_search", o->line_search));
  sapj_str(&j, "variant", variant);
  sapj_str(&j, "solve_kernel", sapo_valueName("solve_kernel", o->solve_kernel));
  sapj_str(&j, "newton_loop", sapo_valueName("newton_loop", o->newton_loop));
  sapj_str(&j, "linear_solver", sapo_valueName("linear_solver", o->linear_solver));
  sapj_int(&j, "graph", o->graph);
  sapj_int(&j, "contacts", o->contacts);
  sapj_num(&j, "dt", o->timestep, 6);
  sapj_int(&j, "nworld", nworld);
  sapj_int(&j, "nstep", cli->steps);
  sapj_num(&j, "steps_per_s", sps, 6);
  sapj_num(&j, "ns_per_world_step", 1e9 / sps, 6);
  const char* stage[5] = {"kinematics", "collision", "free_motion", "solve", "integrate"};
  const double secs[5] = {tm->kinematics, tm->collision, tm->free_motion, tm->solve, tm->integrate};
  sapj_object(&j, "stage_s");
  for (int i = 0; i < 5; i++) sapj_num(&j, stage[i], secs[i], 6);
  sapj_num(&j, "total", tm->total, 6);
  sapj_close(&j);
  sapj_object(&j, "stage_ns_per_world_step");
  for (int i = 0; i < 5; i++) sapj_num(&j, stage[i], secs[i] * ns_per, 5);
  sapj_close(&j);
  sapj_num(&j, "contacts_mean", (double)r->tally.ncon / nworld, 4);
  sapj_num(&j, "contacts_p95", r->contacts_p95, 6);
  sapj_int(&j, "contacts_dropped", r->tally.dropped);
  sapj_num(&j, "newton_mean", r->it.newton_mean, 4);
  sapj_num(&j, "newton_p95", r->it.newton_p95, 6);
  sapj_num(&j, "newton_max", r->it.newton_max, 6);
  sapj_num(&j, "ls_eval_mean", r->it.ls_mean, 4);
  sapj_num(&j, "ls_eval_p95", r->it.ls_p95, 6);
  sapj_num(&j, "ls_eval_max", r->it.ls_max, 6);
  sapj_int(&j, "converged_worlds", r->tally.converged);
  sapj_int(&j, "flagged_worlds", r->tally.flagged);
  sapj_int(&j, "retry_depth", o->retry_depth);
  sapj_int(&j, "retries", r->retries);
  sapj_num(&j, "h_min", r->h_min, 6);
  sapj_str(&j, "contact_band", o->contact_band == SAP_BAND_SPEED ? "speed" : "margin");
  sapj_num(&j, "band_redos_per_world_step", r->it.world_steps > 0 ? r->it.band_redos / r->it.world_steps : 0.0, 6);
  sapj_int(&j, "bytes_per_world", (long long)sap_bytesPerWorld(s));
  sapj_int(&j, "bytes_shared", (long long)sap_bytesShared(s));
  sapj_num(&j, "mujoco_steps_per_s", cli->mujoco ? mj_sps : 0.0, 6);
  sapj_num(&j, "ratio_vs_mujoco", cli->mujoco ? sps / mj_sps : 0.0, 4);
  if (cli->mujoco) {  // MuJoCo's Newton solver over the same run (mujoco_run)
    sapj_num(&j, "mujoco_newton_mean", mjr->newton_mean, 4);
    sapj_num(&j, "mujoco_newton_p95", mjr->newton_p95, 6);
    sapj_num(&j, "mujoco_ls_eval_mean", mjr->ls_mean, 4);
    sapj_num(&j, "mujoco_ls_eval_p95", mjr->ls_p95, 6);
  }
  return sapj_end(&j);
}

/* one configuration: create, measure, MuJoCo beside it (once per nworld), the JSON line */
static int bench_one(const sapCli* cli, const sapModel* m, const sapOptions* opt, const char* variant,
                     int nworld, FILE* json, sapMjRun* mj_cache, sapBenchRow* row) {
  sapSim* s = NULL;
  if (sap_create(m, opt, nworld, &s) != SAP_OK) {
    fprintf(stderr, "\nsapsim bench: %s\n", sap_lastError());
    return 1;
  }
  int key = sapcli_keyframe(m, cli);
  double* ctrl = calloc((size_t)nworld * m->nu + 1, sizeof(double));
  int rc = 1;
  sapBenchResult r;
  if (!ctrl) {
    fprintf(stderr, "\nsapsim bench: out of memory for %d worlds' controls\n", nworld);
    goto done;
  }
  sapcli_randomCtrl(m, nworld, cli->ctrl_noise, cli->seed, ctrl);
  int mr = bench_measure(cli, m, s, opt, nworld, key, ctrl, &r);
  if (mr == 2) goto done;
  if (mr) goto fail;
  int slot = 0;
  while (cli->worlds[slot] != nworld) slot++;
  if (cli->mujoco && isnan(mj_cache[slot].seconds))
    mj_cache[slot] = mujoco_run(cli->scene, nworld, cli->steps, key, ctrl, opt->threads > 0
                                ? opt->threads : max_threads());
  double sps = (double)nworld * cli->steps / r.tm.total;
  double mj_sps = cli->mujoco ? (double)nworld * cli->steps / mj_cache[slot].seconds : NAN;
  char line[4096];
  if (!bench_report(cli, s, variant, nworld, &r, sps, &mj_cache[slot], line, sizeof(line))) {
    fprintf(stderr, "\nsapsim bench: the JSON line passes %d bytes (scene path too long?)\n", (int)sizeof(line));
    goto done;
  }
  /* the progress bar shares the terminal with stdout: clear its line first */
  if (cli->progress && !cli->quiet && isatty(1) && isatty(2)) fprintf(stderr, "\r%*s\r", 110, "");
  printf("%s\n", line);
  fflush(stdout);
  if (json) fprintf(json, "%s\n", line);
  const sapOptions* o = sap_options(s);
  row->steps_per_s = sps;
  row->mj_steps_per_s = mj_sps;
  row->mj_newton_mean = cli->mujoco ? mj_cache[slot].newton_mean : NAN;
  row->mj_newton_p95 = cli->mujoco ? mj_cache[slot].newton_p95 : NAN;
  row->nworld = nworld;
  row->it = r.it;
  snprintf(row->preset, sizeof(row->preset), "%s", sapo_valueName("preset", o->preset));
  snprintf(row->ls, sizeof(row->ls), "%s", sapo_valueName("line_search", o->line_search));
  snprintf(row->variant, sizeof(row->variant), "%.*s", SAP_VARIANT_LEN - 1, variant);  // parse_variants bounds it
  rc = 0;
  goto done;
fail:
  fprintf(stderr, "\nsapsim bench: %s\n", sap_lastError());
done:
  free(ctrl);
  sap_free(s);
  return rc;
}

/* split "a,b,c" into up to max tokens (in place) */
static int split(char* text, char** out, int max) {
  int n = 0;
  for (char* t = strtok(text, ","); t && n < max; t = strtok(NULL, ",")) out[n++] = t;
  return n;
}

/* --vary: comma-separated variants, each key=value pairs joined by '+'; a value without a key
 * takes the last key named ("linear_solver=custom,cusolver"). Writes up to max variants of
 * at most SAP_VARIANT_LEN - 1 characters; returns the count, 0 when there is no --vary, -1 on
 * bad text (err says why: no key, too many variants, one too long; nothing is cut silently) */
static int parse_variants(const char* spec, char (*out)[SAP_VARIANT_LEN], int max, char* err, size_t nerr) {
  if (!spec) return 0;
  char buf[1024], key[64] = "";
  if (strlen(spec) >= sizeof(buf)) {
    snprintf(err, nerr, "the list is %zu characters long (at most %zu)", strlen(spec), sizeof(buf) - 1);
    return -1;
  }
  snprintf(buf, sizeof(buf), "%s", spec);
  char* tok[17];
  int lim = max < 16 ? max : 16, n = split(buf, tok, lim + 1);
  if (n > lim) {
    snprintf(err, nerr, "more than %d variants", lim);
    return -1;
  }
  for (int i = 0; i < n; i++) {
    int len;
    if (strchr(tok[i], '=')) {
      len = snprintf(out[i], SAP_VARIANT_LEN, "%s", tok[i]);
      const char* last = strrchr(tok[i], '+') ? strrchr(tok[i], '+') + 1 : tok[i];
      int k = (int)(strchr(last, '=') - last);
      snprintf(key, sizeof(key), "%.*s", k < 63 ? k : 63, last);
    } else if (key[0]) {
      len = snprintf(out[i], SAP_VARIANT_LEN, "%s=%s", key, tok[i]);
    } else {
      snprintf(err, nerr, "the first variant needs key=value");
      return -1;
    }
    if (len >= SAP_VARIANT_LEN) {
      snprintf(err, nerr, "variant %d is %d characters long (at most %d)", i + 1, len, SAP_VARIANT_LEN - 1);
      return -1;
    }
  }
  return n;
}

/* apply one variant's pairs to o */
static int apply_variant(sapOptions* o, const char* variant) {
  char buf[SAP_VARIANT_LEN];
  snprintf(buf, sizeof(buf), "%.*s", SAP_VARIANT_LEN - 1, variant);  // parse_variants bounds it
  for (char *save = NULL, *t = strtok_r(buf, "+", &save); t; t = strtok_r(NULL, "+", &save))
    if (sap_optionsSetPair(o, t) != SAP_OK) return 1;
  return 0;
}

int sapcli_benchMain(sapCli* cli) {
  sapModel* m = NULL;
  if (sap_loadModel(cli->scene, &m) != SAP_OK) {
    fprintf(stderr, "sapsim: %s\n", sap_lastError());
    return 1;
  }
  if (sapcli_keyframe(m, cli) < -1) return 1;
  char presets[256], lss[256];
  snprintf(presets, sizeof(presets), "%s", cli->presets ? cli->presets
           : sapo_valueName("preset", cli->opt.preset));
  snprintf(lss, sizeof(lss), "%s", cli->line_searches ? cli->line_searches
           : sapo_valueName("line_search", cli->opt.line_search));
  char *plist[8], *llist[8];
  int np = split(presets, plist, 8), nl = split(lss, llist, 8);

  char vlist[16][SAP_VARIANT_LEN], why[128];
  int nv = parse_variants(cli->vary, vlist, 16, why, sizeof(why));
  if (nv < 0) {
    fprintf(stderr, "sapsim: --vary '%s': %s\n", cli->vary, why);
    return 1;
  }
  if (nv == 0) {
    vlist[0][0] = 0;
    nv = 1;
  }

  /* validate every sweep value and combination before running anything */
  for (int i = 0; i < np + nl; i++) {
    sapOptions o = cli->opt;
    if (sap_optionsSet(&o, i < np ? "preset" : "line_search", i < np ? plist[i] : llist[i - np])) {
      fprintf(stderr, "sapsim: %s\n", sap_lastError());
      return 1;
    }
  }
  for (int p = 0; p < np; p++)
    for (int v = 0; v < nv; v++) {
      sapOptions o = cli->opt, e;
      sap_optionsSet(&o, "preset", plist[p]);
      if (apply_variant(&o, vlist[v]) || sap_optionsExpand(&o, &e) != SAP_OK) {
        fprintf(stderr, "sapsim: --vary %s: %s\n", vlist[v], sap_lastError());
        return 1;
      }
    }
  FILE* json = NULL;
  char tmpjson[64] = "";
  if (cli->json || cli->plot) {
    if (!cli->json) snprintf(tmpjson, sizeof(tmpjson), "/tmp/sapsim_bench_%d.jsonl", (int)getpid());
    json = fopen(cli->json ? cli->json : tmpjson, cli->json ? "a" : "w");
    if (!json) {
      fprintf(stderr, "sapsim: cannot write '%s'\n", cli->json ? cli->json : tmpjson);
      return 1;
    }
  }
  int total = np * nl * nv * cli->nworlds, done = 0, rc = 0;
  sapBenchRow* rows = calloc(total, sizeof(sapBenchRow));
  sapMjRun mj_cache[64];
  for (int i = 0; i < 64; i++) mj_cache[i].seconds = NAN;
  for (int p = 0; p < np && !rc; p++)
    for (int l = 0; l < nl && !rc; l++)
      for (int v = 0; v < nv && !rc; v++)
        for (int w = 0; w < cli->nworlds && !rc; w++) {
          sapOptions o = cli->opt;
          sap_optionsSet(&o, "preset", plist[p]);
          sap_optionsSet(&o, "line_search", llist[l]);
          apply_variant(&o, vlist[v]);
          char what[192];
          snprintf(what, sizeof(what), "%.16s %.16s %.95s nworld %d", plist[p], llist[l], vlist[v], cli->worlds[w]);
          progress(cli, done, total, what);
          rc = bench_one(cli, m, &o, vlist[v], cli->worlds[w], json, mj_cache, &rows[done]);
          done++;
        }
  progress(cli, done, total, "done");
  if (!cli->quiet && !rc) {
    int vw = cli->vary ? 40 : 0;  // the variant column only with --vary
    /* newton, ls: mean / p95 per world-step over every step of the timed run */
    /* mj_newton: MuJoCo's Newton iterations per world-step over the same run, mean / p95 */
    fprintf(stderr, "%-10s %-15s %-*s %8s %14s %14s %8s %11s %11s %11s\n", "preset", "line_search", vw,
            vw ? "variant" : "", "nworld", "steps/s", "mujoco/s", "ratio", "newton", "ls_evals", "mj_newton");
    for (int i = 0; i < done; i++)
      fprintf(stderr, "%-10s %-15s %-*s %8d %14.4g %14.4g %8.3g %6.2f/%-4g %6.2f/%-4g %6.2f/%-4g\n", rows[i].preset,
              rows[i].ls, vw, rows[i].variant, rows[i].nworld, rows[i].steps_per_s, rows[i].mj_steps_per_s,
              rows[i].steps_per_s / rows[i].mj_steps_per_s, rows[i].it.newton_mean, rows[i].it.newton_p95,
              rows[i].it.ls_mean, rows[i].it.ls_p95, rows[i].mj_newton_mean, rows[i].mj_newton_p95);
  }
  int json_bad = json && (fflush(json) != 0 || ferror(json));
  if (json && fclose(json) != 0) json_bad = 1;
  if (json_bad) {
    fprintf(stderr, "sapsim: writing '%s' failed\n", cli->json ? cli->json : tmpjson);
    rc = 1;
  }
  if (!rc && cli->plot) {
    if (sapcli_plot("plot_bench.py", cli->json ? cli->json : tmpjson, cli->plot)) {
      rc = 1;
    } else if (!cli->quiet) {
      fprintf(stderr, "plot: %s\n", cli->plot);
    }
  }
  if (tmpjson[0]) remove(tmpjson);
  free(rows);
  sap_freeModel(m);
  return rc;
}
