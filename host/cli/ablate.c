/* `sapsim ablate`: step identical worlds (same keyframe, same random controls)
 * under several configurations in lockstep and measure how far they drift apart.
 * Configurations: each preset of --presets, then one per --set key=value (the
 * first preset plus that one override). Comparisons: each preset against the
 * previous one (approx64 vs approx32 = precision, drake vs approx64 = model) and
 * each override against the first preset. stdout: JSON lines; stderr: tables. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "json.h"
#include "model.h"

#define ABL_MAXCONF 24

typedef struct {
  char label[96];
  char preset[16];
  char override[80];   /* "key=value" or "" */
  int base;            /* configuration this one is compared against, -1 for none */
  sapSim* s;
  double *qpos, *qvel;
  sapWorldInfo* info;
  int* ever_flagged;   /* (nworld) 1 once a world was flagged (maxiter, lsfail, factorfail, nonfinite) */
  /* per step (mean over worlds) and trajectory accumulators */
  double newton, ls, ncon, step_s;
  double sum_newton, sum_ls, sum_ncon, sum_s;
  int max_newton, max_ls;
} ablConfig;

typedef struct {
  int a, b;            /* compare configuration a against reference b */
  char name[200];      /* "approx64 vs approx32" */
  const char* kind;    /* precision | model | override | preset */
  /* per step over worlds */
  double dv_mean, dv_max, dq_mean, dq_max, dcon_mean;
  int dcon_max;
  /* over the trajectory */
  double sum_dv, sum_dq, sum_dcon, sum_vref, max_dv, max_dq;
  int max_dcon;
} ablComparison;

/* squared distance of two configurations, joint by joint; quaternions (free and
 * ball joints) contribute the rotation angle of qa^-1 qb, so the result is a
 * tangent-space norm (m and rad mixed, like ||v||) */
static double qpos_dist2(const sapModel* m, const double* qa, const double* qb) {
  double d2 = 0;
  for (int j = 0; j < m->njnt; j++) {
    int adr = m->jnt_qposadr[j], t = m->jnt_type[j];
    if (t == SAP_JNT_FREE) {
      for (int i = 0; i < 3; i++) d2 += (qa[adr + i] - qb[adr + i]) * (qa[adr + i] - qb[adr + i]);
      adr += 3;
    }
    if (t == SAP_JNT_FREE || t == SAP_JNT_BALL) {
      const double* a = qa + adr;
      const double* b = qb + adr;
      /* r = conj(a) b; angle = 2 atan2(|r_xyz|, |r_w|), exactly 0 when a == b */
      double rw = a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3];
      double rx = a[0] * b[1] - a[1] * b[0] - (a[2] * b[3] - a[3] * b[2]);
      double ry = a[0] * b[2] - a[2] * b[0] - (a[3] * b[1] - a[1] * b[3]);
      double rz = a[0] * b[3] - a[3] * b[0] - (a[1] * b[2] - a[2] * b[1]);
      double ang = 2 * atan2(sqrt(rx * rx + ry * ry + rz * rz), fabs(rw));
      d2 += ang * ang;
    } else {
      d2 += (qa[adr] - qb[adr]) * (qa[adr] - qb[adr]);
    }
  }
  return d2;
}

static int is_pair(const ablConfig* c, const ablComparison* k, const char* a, const char* b) {
  return !c[k->a].override[0] && !c[k->b].override[0] && !strcmp(c[k->a].preset, a) &&
         !strcmp(c[k->b].preset, b);
}

/* ---- arguments ------------------------------------------------------------------ */

typedef struct {
  sapCli cli;
  char presets[256];
  const char* overrides[ABL_MAXCONF];
  int noverride;
} ablArgs;

/* ablate's own flags: --presets/--preset LIST, --set k=v (an override
 * configuration), --common k=v (applied to every configuration); the rest goes
 * to the shared parser */
static int parse_args(int argc, char** argv, ablArgs* a) {
  char** rest = calloc((size_t)argc + 1, sizeof(char*));
  int nrest = 0, worlds_given = 0;
  snprintf(a->presets, sizeof(a->presets), "approx32,approx64,drake");
  a->noverride = 0;
  for (int i = 0; i < argc; i++) {
    const char* f = argv[i];
    int ours = !strcmp(f, "--presets") || !strcmp(f, "--preset") || !strcmp(f, "--set") ||
               !strcmp(f, "--common");
    worlds_given |= !strcmp(f, "--worlds");
    if (!ours) {
      rest[nrest++] = argv[i];
      continue;
    }
    if (i + 1 >= argc) {
      fprintf(stderr, "sapsim: option %s needs a value\n", f);
      free(rest);
      return 1;
    }
    const char* v = argv[++i];
    if (!strcmp(f, "--common")) {
      rest[nrest++] = "--set";
      rest[nrest++] = argv[i];
    } else if (!strcmp(f, "--set")) {
      if (a->noverride == ABL_MAXCONF) {
        fprintf(stderr, "sapsim ablate: at most %d --set overrides\n", ABL_MAXCONF);
        free(rest);
        return 1;
      }
      a->overrides[a->noverride++] = v;
    } else {
      snprintf(a->presets, sizeof(a->presets), "%s", v);
    }
  }
  int rc = sapcli_parse(nrest, rest, &a->cli, "ablate");
  free(rest);
  if (rc) return 1;
  if (!worlds_given) a->cli.worlds[0] = 8;
  if (a->cli.line_searches && strchr(a->cli.line_searches, ',')) {
    fprintf(stderr, "sapsim ablate: --line-search takes one value (compare line searches with "
                    "--set line_search=NAME)\n");
    return 1;
  }
  return 0;
}

/* configurations from the preset list and the overrides; comparisons between them */
static int build_configs(ablArgs* a, ablConfig* c, int* nconf, ablComparison* k, int* ncmp) {
  char list[256];
  snprintf(list, sizeof(list), "%s", a->presets);
  int n = 0, npreset = 0;
  for (char* p = strtok(list, ","); p; p = strtok(NULL, ",")) {
    sapOptions o = a->cli.opt;
    if (n == ABL_MAXCONF - a->noverride) {
      fprintf(stderr, "sapsim ablate: too many configurations (at most %d)\n", ABL_MAXCONF);
      return 1;
    }
    if (sap_optionsSet(&o, "preset", p) != SAP_OK) {
      fprintf(stderr, "sapsim: %s\n", sap_lastError());
      return 1;
    }
    memset(&c[n], 0, sizeof(c[n]));
    snprintf(c[n].preset, sizeof(c[n].preset), "%s", sapo_valueName("preset", o.preset));
    int dup = 0;
    for (int i = 0; i < n; i++) dup += !strcmp(c[i].preset, c[n].preset);
    if (dup) snprintf(c[n].label, sizeof(c[n].label), "%s#%d", c[n].preset, dup + 1);
    else snprintf(c[n].label, sizeof(c[n].label), "%s", c[n].preset);
    c[n].base = n > 0 ? n - 1 : -1;
    n++;
  }
  if (!n) {
    fprintf(stderr, "sapsim ablate: --presets is empty (valid: approx32, approx64, drake)\n");
    return 1;
  }
  npreset = n;
  char first[16];  /* a copy: c[0] and c[n] are one array to the compiler's restrict check */
  memcpy(first, c[0].preset, sizeof(first));
  for (int i = 0; i < a->noverride; i++) {
    sapOptions o = a->cli.opt;
    sap_optionsSet(&o, "preset", first);
    if (sap_optionsSetPair(&o, a->overrides[i]) != SAP_OK) {
      fprintf(stderr, "sapsim: --set %s: %s\n", a->overrides[i], sap_lastError());
      return 1;
    }
    memset(&c[n], 0, sizeof(c[n]));
    snprintf(c[n].preset, sizeof(c[n].preset), "%s", first);
    snprintf(c[n].override, sizeof(c[n].override), "%s", a->overrides[i]);
    snprintf(c[n].label, sizeof(c[n].label), "%s+%s", first, a->overrides[i]);
    c[n].base = 0;
    n++;
  }
  *nconf = n;
  *ncmp = 0;
  for (int i = 0; i < n; i++) {
    if (c[i].base < 0) continue;
    ablComparison* x = &k[(*ncmp)++];
    memset(x, 0, sizeof(*x));
    x->a = i;
    x->b = c[i].base;
    if (snprintf(x->name, sizeof(x->name), "%s vs %s", c[i].label, c[x->b].label) < 0) x->name[0] = 0;
    x->kind = i >= npreset ? "override"
              : is_pair(c, x, "approx64", "approx32") || is_pair(c, x, "approx32", "approx64")
                  ? "precision"
              : is_pair(c, x, "drake", "approx64") || is_pair(c, x, "approx64", "drake") ? "model"
                                                                                       : "preset";
  }
  return 0;
}

/* options of configuration i: shared options, the preset, then the override */
static void config_options(const ablArgs* a, const ablConfig* c, sapOptions* o) {
  *o = a->cli.opt;
  sap_optionsSet(o, "preset", c->preset);
  if (c->override[0]) sap_optionsSetPair(o, c->override);
}

/* ---- output --------------------------------------------------------------------- */

/* the expanded options as a nested object of strings (from sap_optionsDescribe) */
static void options_json(sapjWriter* j, const sapOptions* o) {
  char desc[8192];
  sap_optionsDescribe(o, desc, sizeof(desc));
  sapj_object(j, "options");
  for (char* line = strtok(desc, "\n"); line; line = strtok(NULL, "\n")) {
    char* eq = strchr(line, '=');
    if (!eq) continue;
    *eq = 0;
    sapj_str(j, line, eq + 1);
  }
  sapj_close(j);
}

/* the line, or a note on stderr when it did not fit */
static void emit(FILE* json, sapjWriter* j) {
  const char* line = sapj_end(j);
  if (!line) {
    fprintf(stderr, "sapsim ablate: a JSON line passes %d bytes (labels too long?)\n", j->cap);
    return;
  }
  printf("%s\n", line);
  if (json) fprintf(json, "%s\n", line);
}

static void step_line(FILE* json, const ablConfig* c, const ablComparison* k, int step, double t) {
  char line[2048];
  const ablConfig *A = &c[k->a], *B = &c[k->b];
  sapjWriter j;
  sapj_begin(&j, line, sizeof(line));
  sapj_str(&j, "type", "step");
  sapj_str(&j, "comparison", k->name);
  sapj_str(&j, "kind", k->kind);
  sapj_str(&j, "a", A->label);
  sapj_str(&j, "b", B->label);
  sapj_int(&j, "step", step);
  sapj_num(&j, "time", t, 6);
  sapj_num(&j, "dv_mean", k->dv_mean, 6);
  sapj_num(&j, "dv_max", k->dv_max, 6);
  sapj_num(&j, "dq_mean", k->dq_mean, 6);
  sapj_num(&j, "dq_max", k->dq_max, 6);
  sapj_num(&j, "dcon_mean", k->dcon_mean, 6);
  sapj_int(&j, "dcon_max", k->dcon_max);
  sapj_num(&j, "newton_a", A->newton, 6);
  sapj_num(&j, "newton_b", B->newton, 6);
  sapj_num(&j, "ls_a", A->ls, 6);
  sapj_num(&j, "ls_b", B->ls, 6);
  sapj_num(&j, "contacts_a", A->ncon, 6);
  sapj_num(&j, "contacts_b", B->ncon, 6);
  sapj_num(&j, "step_s_a", A->step_s, 6);
  sapj_num(&j, "step_s_b", B->step_s, 6);
  emit(json, &j);
}

/* ---- stepping ------------------------------------------------------------------- */

/* one step of every configuration, then the per-world statistics */
static int step_all(const sapModel* m, ablConfig* c, int nconf, int nworld) {
  for (int i = 0; i < nconf; i++) {
    ablConfig* x = &c[i];
    if (sap_step(x->s, 1) != SAP_OK || sap_get(x->s, SAP_FIELD_QPOS, NULL, nworld, x->qpos) ||
        sap_get(x->s, SAP_FIELD_QVEL, NULL, nworld, x->qvel) ||
        sap_worldInfo(x->s, NULL, nworld, x->info)) {
      fprintf(stderr, "sapsim ablate: %s: %s\n", x->label, sap_lastError());
      return 1;
    }
    sapTimers tm;
    sap_timers(x->s, &tm);
    sapcliTally t;
    sapcli_tally(x->info, nworld, &t);
    for (int w = 0; w < nworld; w++) {
      if (x->info[w].newton_iter > x->max_newton) x->max_newton = x->info[w].newton_iter;
      if (x->info[w].ls_iter > x->max_ls) x->max_ls = x->info[w].ls_iter;
      if (sapcli_failed(x->info[w].flags)) x->ever_flagged[w] = 1;
    }
    x->newton = (double)t.newton / nworld;
    x->ls = (double)t.ls / nworld;
    x->ncon = (double)t.ncon / nworld;
    x->step_s = tm.total;
    x->sum_newton += x->newton;
    x->sum_ls += x->ls;
    x->sum_ncon += x->ncon;
    x->sum_s += x->step_s;
  }
  (void)m;
  return 0;
}

/* per-world 2-norms of the differences, mean and max over worlds */
static void compare(const sapModel* m, const ablConfig* c, ablComparison* k, int nworld) {
  const ablConfig *A = &c[k->a], *B = &c[k->b];
  double sv = 0, sq = 0, sc = 0, svref = 0, mv = 0, mq = 0;
  int mc = 0;
  for (int w = 0; w < nworld; w++) {
    const double *va = A->qvel + (size_t)w * m->nv, *vb = B->qvel + (size_t)w * m->nv;
    double dv2 = 0, vref2 = 0;
    for (int i = 0; i < m->nv; i++) {
      dv2 += (va[i] - vb[i]) * (va[i] - vb[i]);
      vref2 += vb[i] * vb[i];
    }
    double dv = sqrt(dv2), vref = sqrt(vref2);
    double dq = sqrt(qpos_dist2(m, A->qpos + (size_t)w * m->nq, B->qpos + (size_t)w * m->nq));
    int dc = abs(A->info[w].ncon - B->info[w].ncon);
    sv += dv;
    sq += dq;
    sc += dc;
    svref += vref;
    /* NaN propagates into the max: a diverged world must not hide */
    if (!(dv <= mv)) mv = dv;
    if (!(dq <= mq)) mq = dq;
    if (dc > mc) mc = dc;
  }
  k->dv_mean = sv / nworld;
  k->dv_max = mv;
  k->dq_mean = sq / nworld;
  k->dq_max = mq;
  k->dcon_mean = sc / nworld;
  k->dcon_max = mc;
  k->sum_dv += k->dv_mean;
  k->sum_dq += k->dq_mean;
  k->sum_dcon += k->dcon_mean;
  k->sum_vref += svref / nworld;
  if (!(k->dv_max <= k->max_dv)) k->max_dv = k->dv_max;
  if (!(k->dq_max <= k->max_dq)) k->max_dq = k->dq_max;
  if (k->dcon_max > k->max_dcon) k->max_dcon = k->dcon_max;
}

/* ---- tables (stderr) -------------------------------------------------------------- */

static void table_header(const ablComparison* k, int ncmp) {
  fprintf(stderr, "comparisons (a vs b):\n");
  for (int i = 0; i < ncmp; i++) fprintf(stderr, "  [%d] %s (%s)\n", i + 1, k[i].name, k[i].kind);
  fprintf(stderr, "\nper step, mean over worlds of per-world ||v_a - v_b|| (dv) and ||q_a - q_b|| (dq):\n");
  fprintf(stderr, "%6s %8s", "step", "time");
  for (int i = 0; i < ncmp; i++) {
    char head[32];
    snprintf(head, sizeof(head), "[%d] %.16s", i + 1, k[i].kind);
    fprintf(stderr, "  | %-21s", head);
  }
  fprintf(stderr, "\n%6s %8s", "", "");
  for (int i = 0; i < ncmp; i++) fprintf(stderr, "  | %10s %10s", "dv", "dq");
  fputc('\n', stderr);
}

static void table_row(const ablComparison* k, int ncmp, int step, double t) {
  fprintf(stderr, "%6d %8.4f", step, t);
  for (int i = 0; i < ncmp; i++) fprintf(stderr, "  | %10.3e %10.3e", k[i].dv_mean, k[i].dq_mean);
  fputc('\n', stderr);
}

static void table_summary(const ablConfig* c, int nconf, const ablComparison* k, int ncmp,
                          int nstep, int nworld) {
  int w = 24;
  for (int i = 0; i < ncmp; i++) if ((int)strlen(k[i].name) > w) w = (int)strlen(k[i].name);
  if (ncmp) {
    fprintf(stderr, "\ncomparisons over the trajectory (per-world 2-norms; mean over worlds and steps, "
                    "max over both):\n");
    fprintf(stderr, "%-*s %-9s %10s %10s %10s %10s %10s %9s %6s\n", w, "comparison", "kind",
            "dv mean", "dv max", "dv final", "dq max", "dq final", "dcon mean", "max");
  }
  for (int i = 0; i < ncmp; i++)
    fprintf(stderr, "%-*s %-9s %10.3e %10.3e %10.3e %10.3e %10.3e %9.3f %6d\n", w, k[i].name,
            k[i].kind, k[i].sum_dv / nstep, k[i].max_dv, k[i].dv_mean, k[i].max_dq, k[i].dq_mean,
            k[i].sum_dcon / nstep, k[i].max_dcon);
  w = 14;
  for (int i = 0; i < nconf; i++) if ((int)strlen(c[i].label) > w) w = (int)strlen(c[i].label);
  fprintf(stderr, "\nconfigurations (per step, mean over worlds and steps):\n");
  fprintf(stderr, "%-*s %8s %6s %8s %6s %9s %10s %13s %8s\n", w, "configuration", "newton", "max",
          "ls", "max", "contacts", "ms/step", "world-steps/s", "flagged");
  for (int i = 0; i < nconf; i++) {
    int flagged = 0;
    for (int j = 0; j < nworld; j++) flagged += c[i].ever_flagged[j];
    fprintf(stderr, "%-*s %8.2f %6d %8.2f %6d %9.2f %10.4f %13.4g %8d\n", w, c[i].label,
            c[i].sum_newton / nstep, c[i].max_newton, c[i].sum_ls / nstep, c[i].max_ls,
            c[i].sum_ncon / nstep, 1e3 * c[i].sum_s / nstep,
            c[i].sum_s > 0 ? (double)nworld * nstep / c[i].sum_s : 0.0, flagged);
  }
}

/* ---- summaries (JSON) ------------------------------------------------------------- */

static void summary_lines(FILE* json, const char* scene, const ablConfig* c, int nconf,
                          const ablComparison* k, int ncmp, int nstep, int nworld) {
  static char line[16384];
  for (int i = 0; i < nconf; i++) {
    const ablConfig* x = &c[i];
    int flagged = 0;
    for (int w = 0; w < nworld; w++) flagged += x->ever_flagged[w];
    sapjWriter j;
    sapj_begin(&j, line, sizeof(line));
    sapj_str(&j, "type", "config");
    sapj_str(&j, "scene", scene);
    sapj_str(&j, "config", x->label);
    sapj_str(&j, "preset", x->preset);
    sapj_str(&j, "override", x->override[0] ? x->override : NULL);
    sapj_str(&j, "base", x->base >= 0 ? c[x->base].label : NULL);
    sapj_str(&j, "device", sap_deviceName(x->s));
    sapj_int(&j, "nworld", nworld);
    sapj_int(&j, "nstep", nstep);
    sapj_num(&j, "newton_mean", x->sum_newton / nstep, 6);
    sapj_int(&j, "newton_max", x->max_newton);
    sapj_num(&j, "ls_mean", x->sum_ls / nstep, 6);
    sapj_int(&j, "ls_max", x->max_ls);
    sapj_num(&j, "contacts_mean", x->sum_ncon / nstep, 6);
    sapj_num(&j, "step_s_mean", x->sum_s / nstep, 6);
    sapj_num(&j, "steps_per_s", x->sum_s > 0 ? (double)nworld * nstep / x->sum_s : NAN, 6);
    sapj_int(&j, "flagged_worlds", flagged);
    options_json(&j, sap_options(x->s));
    emit(json, &j);
  }
  for (int i = 0; i < ncmp; i++) {
    const ablComparison* x = &k[i];
    sapjWriter j;
    sapj_begin(&j, line, sizeof(line));
    sapj_str(&j, "type", "comparison");
    sapj_str(&j, "comparison", x->name);
    sapj_str(&j, "kind", x->kind);
    sapj_str(&j, "a", c[x->a].label);
    sapj_str(&j, "b", c[x->b].label);
    sapj_int(&j, "nworld", nworld);
    sapj_int(&j, "nstep", nstep);
    sapj_num(&j, "dv_mean", x->sum_dv / nstep, 6);
    sapj_num(&j, "dv_max", x->max_dv, 6);
    sapj_num(&j, "dv_final_mean", x->dv_mean, 6);
    sapj_num(&j, "dq_mean", x->sum_dq / nstep, 6);
    sapj_num(&j, "dq_max", x->max_dq, 6);
    sapj_num(&j, "dq_final_mean", x->dq_mean, 6);
    sapj_num(&j, "dcon_mean", x->sum_dcon / nstep, 6);
    sapj_int(&j, "dcon_max", x->max_dcon);
    sapj_num(&j, "v_ref_mean", x->sum_vref / nstep, 6);
    emit(json, &j);
  }
}

/* ---- main ------------------------------------------------------------------------- */

int sapcli_ablateMain(int argc, char** argv) {
  static ablArgs a;
  ablConfig c[ABL_MAXCONF];
  ablComparison k[ABL_MAXCONF];
  int nconf = 0, ncmp = 0, rc = 1;
  if (parse_args(argc, argv, &a) || build_configs(&a, c, &nconf, k, &ncmp)) return 2;
  const sapCli* cli = &a.cli;
  int nworld = cli->worlds[0], nstep = cli->steps;
  sapModel* m = NULL;
  double* ctrl = NULL;
  FILE* json = NULL;
  char tmpjson[64] = "";
  if (sap_loadModel(cli->scene, &m) != SAP_OK) {
    fprintf(stderr, "sapsim: %s\n", sap_lastError());
    return 1;
  }
  int key = sapcli_keyframe(m, cli);
  if (key < -1) goto done;

  /* identical initial states and controls in every configuration */
  ctrl = calloc((size_t)nworld * m->nu + 1, sizeof(double));
  sapcli_randomCtrl(m, nworld, cli->ctrl_noise, cli->seed, ctrl);
  for (int i = 0; i < nconf; i++) {
    sapOptions o;
    config_options(&a, &c[i], &o);
    c[i].qpos = malloc(sizeof(double) * ((size_t)nworld * m->nq + 1));
    c[i].qvel = malloc(sizeof(double) * ((size_t)nworld * m->nv + 1));
    c[i].info = malloc(sizeof(sapWorldInfo) * nworld);
    c[i].ever_flagged = calloc(nworld, sizeof(int));
    if (sap_create(m, &o, nworld, &c[i].s) != SAP_OK || sap_reset(c[i].s, key, NULL) != SAP_OK ||
        (m->nu && sap_set(c[i].s, SAP_FIELD_CTRL, NULL, nworld, ctrl) != SAP_OK)) {
      fprintf(stderr, "sapsim ablate: %s: %s\n", c[i].label, sap_lastError());
      nconf = i + 1;
      goto done;
    }
  }
  if (cli->json || cli->plot) {
    if (!cli->json) snprintf(tmpjson, sizeof(tmpjson), "/tmp/sapsim_ablate_%d.jsonl", (int)getpid());
    json = fopen(cli->json ? cli->json : tmpjson, "w");
    if (!json) {
      fprintf(stderr, "sapsim: cannot write '%s'\n", cli->json ? cli->json : tmpjson);
      goto done;
    }
  }
  double dt = sap_options(c[0].s)->timestep;  /* resolved: the scene's unless overridden */
  if (!cli->quiet) {
    fprintf(stderr, "ablate %s: %d worlds x %d steps, dt %g, device %s, start %s, ctrl noise %g, seed %llu\n",
            cli->scene, nworld, nstep, dt, sap_deviceName(c[0].s),
            key >= 0 ? sapm_name(m, m->name_keyadr, key) : "qpos0", cli->ctrl_noise, cli->seed);
    fprintf(stderr, "configurations:\n");
    for (int i = 0; i < nconf; i++) fprintf(stderr, "  %s\n", c[i].label);
    if (ncmp) table_header(k, ncmp);
  }
  int every = nstep <= 20 ? 1 : nstep / 20;
  for (int step = 1; step <= nstep; step++) {
    if (step_all(m, c, nconf, nworld)) goto done;
    for (int i = 0; i < ncmp; i++) {
      compare(m, c, &k[i], nworld);
      step_line(json, c, &k[i], step, step * dt);
    }
    if (!cli->quiet && ncmp && (step % every == 0 || step == nstep)) table_row(k, ncmp, step, step * dt);
  }
  fflush(stdout);
  summary_lines(json, cli->scene, c, nconf, k, ncmp, nstep, nworld);
  if (!cli->quiet) table_summary(c, nconf, k, ncmp, nstep, nworld);
  rc = 0;
  if (json && fclose(json)) {
    fprintf(stderr, "sapsim: writing '%s' failed\n", cli->json ? cli->json : tmpjson);
    rc = 1;
  }
  json = NULL;
  if (!rc && cli->plot) {
    if (!ncmp) {
      fprintf(stderr, "sapsim ablate: nothing to plot (one configuration, no comparison)\n");
    } else if (sapcli_plot("plot_ablate.py", cli->json ? cli->json : tmpjson, cli->plot)) {
      rc = 1;
    } else if (!cli->quiet) {
      fprintf(stderr, "plot: %s\n", cli->plot);
    }
  }
done:
  if (json) fclose(json);
  if (tmpjson[0]) remove(tmpjson);
  for (int i = 0; i < nconf; i++) {
    sap_free(c[i].s);
    free(c[i].qpos);
    free(c[i].qvel);
    free(c[i].info);
    free(c[i].ever_flagged);
  }
  free(ctrl);
  sap_freeModel(m);
  return rc;
}
