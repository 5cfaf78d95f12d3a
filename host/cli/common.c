/* Argument parsing shared by the sapsim commands; every bad flag or value gets a
 * message naming it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "model.h"

static int parse_worlds(const char* text, sapCli* cli) {
  cli->nworlds = 0;
  const char* p = text;
  while (*p) {
    char* end;
    long n = strtol(p, &end, 10);
    if (end == p || n < 1 || n > (1 << 24) || (*end && *end != ',')) {
      fprintf(stderr, "sapsim: --worlds: '%s' is not a list of positive integers\n", text);
      return 1;
    }
    if (cli->nworlds == 64) {
      fprintf(stderr, "sapsim: --worlds: at most 64 values\n");
      return 1;
    }
    cli->worlds[cli->nworlds++] = (int)n;
    p = *end ? end + 1 : end;
  }
  if (!cli->nworlds) {
    fprintf(stderr, "sapsim: --worlds: '%s' is not a list of positive integers\n", text);
    return 1;
  }
  return 0;
}

/* the value-less flags */
static int is_flag(const char* a) {
  return !strcmp(a, "--no-mujoco") || !strcmp(a, "--no-progress") || !strcmp(a, "--quiet");
}

/* the options that take a value */
static int takes_value(const char* a) {
  static const char* names[] = {"--worlds", "--steps", "--device", "--preset", "--line-search", "--vary",
                                "--set", "--threads", "--key", "--ctrl-noise", "--seed", "--out", "--json",
                                "--plot", "--end-time", "--wall-time", "--frame-every", "--format"};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
    if (!strcmp(a, names[i])) return 1;
  return 0;
}

static int set_option(sapCli* cli, const char* key, const char* value) {
  if (sap_optionsSet(&cli->opt, key, value) != SAP_OK) {
    fprintf(stderr, "sapsim: %s\n", sap_lastError());
    return 1;
  }
  return 0;
}

int sapcli_parse(int argc, char** argv, sapCli* cli, const char* cmd) {
  memset(cli, 0, sizeof(*cli));
  sap_optionsDefault(&cli->opt);
  int bench = !strcmp(cmd, "bench");
  cli->worlds[0] = 1;
  cli->nworlds = 1;
  if (bench) {
    cli->worlds[1] = 64;
    cli->worlds[2] = 1024;
    cli->nworlds = 3;
  }
  cli->steps = 100;
  cli->end_time = NAN;
  cli->wall_time = NAN;
  cli->frame_every = 1;
  cli->format = SAP_FRAMES_CSV;
  cli->key = -2;
  cli->seed = 1;
  cli->ctrl_noise = 0.5;
  cli->mujoco = 1;
  cli->progress = 1;
  for (int i = 0; i < argc; i++) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
    int takes = 1;
    if (a[0] != '-') {
      if (cli->scene) {
        fprintf(stderr, "sapsim: unexpected argument '%s'\n", a);
        return 1;
      }
      cli->scene = a;
      continue;
    }
    if (!strcmp(a, "--no-mujoco")) { cli->mujoco = 0; continue; }
    if (!strcmp(a, "--no-progress")) { cli->progress = 0; continue; }
    if (!strcmp(a, "--quiet")) { cli->quiet = 1; continue; }
    if (!is_flag(a) && !takes_value(a)) {
      fprintf(stderr, "sapsim: unknown option '%s' (see sapsim help)\n", a);
      return 1;
    }
    if (!v) {
      fprintf(stderr, "sapsim: option %s needs a value\n", a);
      return 1;
    }
    if (!strcmp(a, "--worlds")) {
      if (parse_worlds(v, cli)) return 1;
    } else if (!strcmp(a, "--steps")) {
      char* end;
      long n = strtol(v, &end, 10);
      if (*end || n < 1 || n > 100000000) {
        fprintf(stderr, "sapsim: --steps: '%s' is not a positive integer\n", v);
        return 1;
      }
      cli->steps = (int)n;
      cli->steps_given = 1;
    } else if (!strcmp(a, "--end-time") || !strcmp(a, "--wall-time")) {
      char* end;
      double x = strtod(v, &end);
      if (*end || end == v || !(x >= 0 && x < 1e12)) {
        fprintf(stderr, "sapsim: %s: '%s' is not a number of seconds >= 0\n", a, v);
        return 1;
      }
      *(a[2] == 'e' ? &cli->end_time : &cli->wall_time) = x;
    } else if (!strcmp(a, "--frame-every")) {
      char* end;
      long n = strtol(v, &end, 10);
      if (*end || end == v || n < 1 || n > 100000000) {
        fprintf(stderr, "sapsim: --frame-every: '%s' is not a positive integer\n", v);
        return 1;
      }
      cli->frame_every = (int)n;
    } else if (!strcmp(a, "--format")) {
      if (!strcmp(v, "csv")) cli->format = SAP_FRAMES_CSV;
      else if (!strcmp(v, "binary")) cli->format = SAP_FRAMES_BINARY;
      else if (!strcmp(v, "binary32")) cli->format = SAP_FRAMES_BINARY32;
      else {
        fprintf(stderr, "sapsim: --format: '%s' is not one of csv, binary, binary32\n", v);
        return 1;
      }
    } else if (!strcmp(a, "--device")) {
      if (set_option(cli, "device", v)) return 1;
    } else if (!strcmp(a, "--preset")) {
      if (set_option(cli, "preset", strchr(v, ',') ? "approx32" : v)) return 1;
      cli->presets = v;
    } else if (!strcmp(a, "--line-search")) {
      if (set_option(cli, "line_search", strchr(v, ',') ? "armijo_decay" : v)) return 1;
      cli->line_searches = v;
    } else if (!strcmp(a, "--vary")) {
      if (!v || !strchr(v, '=')) {
        fprintf(stderr, "sapsim: --vary needs key=value[,value...] (e.g. linear_solver=custom,cusolver)\n");
        return 1;
      }
      cli->vary = v;
    } else if (!strcmp(a, "--set")) {
      if (sap_optionsSetPair(&cli->opt, v) != SAP_OK) {
        fprintf(stderr, "sapsim: %s\n", sap_lastError());
        return 1;
      }
    } else if (!strcmp(a, "--threads")) {
      if (set_option(cli, "threads", v)) return 1;
    } else if (!strcmp(a, "--key")) {
      cli->key_name = v;
    } else if (!strcmp(a, "--ctrl-noise")) {
      char* end;
      cli->ctrl_noise = strtod(v, &end);
      if (*end || !(cli->ctrl_noise >= 0 && cli->ctrl_noise <= 1)) {
        fprintf(stderr, "sapsim: --ctrl-noise: '%s' is not a number in [0, 1]\n", v);
        return 1;
      }
    } else if (!strcmp(a, "--seed")) {
      char* end;
      cli->seed = strtoull(v, &end, 10);
      if (end == v || *end || v[0] == '-') {
        fprintf(stderr, "sapsim: --seed: '%s' is not a non-negative integer\n", v);
        return 1;
      }
    } else if (!strcmp(a, "--out")) {
      cli->out = v;
    } else if (!strcmp(a, "--json")) {
      cli->json = v;
    } else if (!strcmp(a, "--plot")) {
      cli->plot = v;
    } else {
      fprintf(stderr, "sapsim: unknown option '%s' (see sapsim help)\n", a);
      return 1;
    }
    i += takes;
  }
  if (!cli->scene) {
    fprintf(stderr, "sapsim %s: missing SCENE (an MJCF or URDF file)\n", cmd);
    return 1;
  }
  if (!bench && cli->nworlds != 1) {
    fprintf(stderr, "sapsim %s: --worlds takes one value\n", cmd);
    return 1;
  }
  return 0;
}

int sapcli_failed(unsigned flags) {
  return (flags & (SAP_WORLD_MAXITER | SAP_WORLD_LSFAIL | SAP_WORLD_FACTORFAIL | SAP_WORLD_NONFINITE)) != 0;
}

void sapcli_tally(const sapWorldInfo* info, int nworld, sapcliTally* t) {
  memset(t, 0, sizeof(*t));
  for (int w = 0; w < nworld; w++) {
    unsigned f = info[w].flags;
    t->ncon += info[w].ncon;
    t->dropped += info[w].ncon_dropped;
    t->newton += info[w].newton_iter;
    t->ls += info[w].ls_iter;
    t->converged += (f & SAP_WORLD_CONVERGED) != 0;
    t->maxiter += (f & SAP_WORLD_MAXITER) != 0;
    t->lsfail += (f & SAP_WORLD_LSFAIL) != 0;
    t->factorfail += (f & SAP_WORLD_FACTORFAIL) != 0;
    t->nonfinite += (f & SAP_WORLD_NONFINITE) != 0;
    t->flagged += sapcli_failed(f);
  }
}

/* keyframe to start from: --key NAME|ID|none, default the first one if any */
int sapcli_keyframe(const sapModel* m, const sapCli* cli) {
  if (!cli->key_name) return m->nkey > 0 ? 0 : -1;
  if (!strcmp(cli->key_name, "none")) return -1;
  int k = sapm_findName(m, m->name_keyadr, m->nkey, cli->key_name);
  if (k >= 0) return k;
  char* end;
  long id = strtol(cli->key_name, &end, 10);
  if (!*end && id >= 0 && id < m->nkey) return (int)id;
  fprintf(stderr, "sapsim: --key '%s': no such keyframe (the scene has %d)\n", cli->key_name, m->nkey);
  return -3;
}

/* controls uniform in noise * ctrlrange (centred), deterministic per seed */
void sapcli_randomCtrl(const sapModel* m, int nworld, double noise, unsigned long long seed,
                       double* ctrl) {
  unsigned long long x = seed * 0x9E3779B97F4A7C15ULL + 1;
  for (long i = 0; i < (long)nworld * m->nu; i++) {
    x ^= x >> 12; x ^= x << 25; x ^= x >> 27;
    double r = (double)((x * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
    int a = (int)(i % m->nu);
    double lo = -1, hi = 1;
    if (m->actuator_ctrllimited[a]) {
      lo = m->actuator_ctrlrange[2 * a];
      hi = m->actuator_ctrlrange[2 * a + 1];
    }
    double mid = 0.5 * (lo + hi), half = 0.5 * (hi - lo);
    ctrl[i] = mid + noise * half * (2 * r - 1);
  }
}
