/* The command-line tool as users run it: `sapsim ablate` and `sapsim bench` run
 * from the repository root (build/sapsim) with small sizes. Checks: ablating a
 * configuration against itself gives exactly zero divergence, a one-factor
 * override changes exactly its knob, every stdout line is JSON (a small strict
 * validator below), plots are PNGs, bad presets fail with the valid names. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

/* the CLI beside this test's build directory (build/tests/test_cli -> build/sapsim) */
static char sapsim_bin[1100] = "build/sapsim";
#define SAPSIM sapsim_bin
#define SCENE "scenes/box_stack.xml"

/* ---- a strict JSON validator (RFC 8259 grammar, no extensions) ---------------- */

static void js_ws(const char** p) {
  while (**p == ' ' || **p == '\t' || **p == '\n' || **p == '\r') (*p)++;
}

static int js_value(const char** p, int depth);

static int js_string(const char** p) {
  if (**p != '"') return 0;
  for ((*p)++; **p != '"'; (*p)++) {
    unsigned char c = (unsigned char)**p;
    if (c < 0x20) return 0;
    if (c == '\\') {
      (*p)++;
      if (**p == 'u') {
        for (int i = 1; i <= 4; i++)
          if (!strchr("0123456789abcdefABCDEF", (*p)[i]) || !(*p)[i]) return 0;
        *p += 4;
      } else if (!**p || !strchr("\"\\/bfnrt", **p)) {
        return 0;
      }
    }
  }
  (*p)++;
  return 1;
}

static int js_digits(const char** p) {
  const char* s = *p;
  while (**p >= '0' && **p <= '9') (*p)++;
  return *p > s;
}

static int js_number(const char** p) {
  if (**p == '-') (*p)++;
  if (**p == '0') (*p)++;
  else if (!js_digits(p)) return 0;
  if (**p == '.') { (*p)++; if (!js_digits(p)) return 0; }
  if (**p == 'e' || **p == 'E') {
    (*p)++;
    if (**p == '+' || **p == '-') (*p)++;
    if (!js_digits(p)) return 0;
  }
  return 1;
}

static int js_seq(const char** p, int depth, char close, int object) {
  (*p)++;
  js_ws(p);
  if (**p == close) { (*p)++; return 1; }
  for (;;) {
    js_ws(p);
    if (object) {
      if (!js_string(p)) return 0;
      js_ws(p);
      if (**p != ':') return 0;
      (*p)++;
    }
    if (!js_value(p, depth + 1)) return 0;
    js_ws(p);
    if (**p == close) { (*p)++; return 1; }
    if (**p != ',') return 0;
    (*p)++;
  }
}

static int js_value(const char** p, int depth) {
  if (depth > 64) return 0;
  js_ws(p);
  switch (**p) {
    case '{': return js_seq(p, depth, '}', 1);
    case '[': return js_seq(p, depth, ']', 0);
    case '"': return js_string(p);
    case 't': return !strncmp(*p, "true", 4) ? (*p += 4, 1) : 0;
    case 'f': return !strncmp(*p, "false", 5) ? (*p += 5, 1) : 0;
    case 'n': return !strncmp(*p, "null", 4) ? (*p += 4, 1) : 0;
    default: return js_number(p);
  }
}

static int json_valid(const char* text) {
  const char* p = text;
  if (!js_value(&p, 0)) return 0;
  js_ws(&p);
  return *p == 0;
}

/* ---- running the tool --------------------------------------------------------- */

typedef struct {
  int rc;
  char* out;  /* stdout */
  char* err;  /* stderr */
} cliRun;

static char* slurp(const char* path) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* s = malloc((size_t)n + 1);
  size_t got = fread(s, 1, (size_t)n, f);
  s[got] = 0;
  fclose(f);
  return s;
}

static char tmp_dir[64];

static void tmp_path(char* out, int nout, const char* name) {
  snprintf(out, nout, "%s/%s", tmp_dir, name);
}

/* run `build/sapsim ARGS`, capture stdout and stderr */
static cliRun run_cli(const char* args) {
  char cmd[2048], o[128], e[128];
  tmp_path(o, sizeof(o), "stdout");
  tmp_path(e, sizeof(e), "stderr");
  snprintf(cmd, sizeof(cmd), "%s %s >%s 2>%s", SAPSIM, args, o, e);
  cliRun r;
  int st = system(cmd);
  r.rc = st == -1 ? -1 : (st >> 8) & 0xff;
  r.out = slurp(o);
  r.err = slurp(e);
  if (!r.out) r.out = calloc(1, 1);
  if (!r.err) r.err = calloc(1, 1);
  return r;
}

static void free_run(cliRun* r) {
  free(r->out);
  free(r->err);
}

/* every non-empty line of text is valid JSON; returns the line count */
static int check_json_lines(const char* what, const char* text) {
  char* copy = strdup(text);
  int n = 0, bad = 0;
  for (char* line = strtok(copy, "\n"); line; line = strtok(NULL, "\n")) {
    n++;
    if (!json_valid(line) && bad++ < 3) CHECK(0, "%s: line %d is not JSON: %.200s", what, n, line);
  }
  free(copy);
  return n;
}

/* the number after "key": in line (NaN when absent or null) */
static double field_num(const char* line, const char* key) {
  char pat[80];
  snprintf(pat, sizeof(pat), "\"%s\":", key);
  const char* p = strstr(line, pat);
  if (!p) return NAN;
  p += strlen(pat);
  if (!strncmp(p, "null", 4)) return NAN;
  return strtod(p, NULL);
}

/* the first line of text that contains all of the given fragments (a copy) */
static char* find_line(const char* text, const char* a, const char* b) {
  const char* s = text;
  while (*s) {
    const char* e = strchr(s, '\n');
    size_t n = e ? (size_t)(e - s) : strlen(s);
    char* line = malloc(n + 1);
    memcpy(line, s, n);
    line[n] = 0;
    if (strstr(line, a) && (!b || strstr(line, b))) return line;
    free(line);
    s += n + (e ? 1 : 0);
  }
  return NULL;
}

static int have_cli(void) {
  if (access(SAPSIM, X_OK) == 0) return 1;
  return 0;
}

static int have_matplotlib(void) {
  return system("{ python3 -c 'import matplotlib' || /usr/bin/python3 -c 'import matplotlib'; } "
                ">/dev/null 2>&1") == 0;
}

/* ---- tests ------------------------------------------------------------------------ */

/* identical configurations stay bitwise identical: every divergence is exactly 0 */
static void test_ablate_self_zero(void) {
  if (!have_cli()) SKIP("%s not built (make)", SAPSIM);
  cliRun r = run_cli("ablate " SCENE " --worlds 3 --steps 15 --presets approx64,approx64,approx32");
  CHECK(r.rc == 0, "ablate failed (rc %d): %s", r.rc, r.err);
  int nstep = 0;
  char* copy = strdup(r.out);
  for (char* line = strtok(copy, "\n"); line; line = strtok(NULL, "\n")) {
    if (!strstr(line, "\"comparison\":\"approx64#2 vs approx64\"")) continue;
    nstep += strstr(line, "\"type\":\"step\"") != NULL;
    const char* keys[] = {"dv_mean", "dv_max", "dq_mean", "dq_max", "dcon_mean", "dcon_max"};
    for (int i = 0; i < 6; i++)
      CHECK(field_num(line, keys[i]) == 0.0, "self comparison: %s is %g, not 0: %.200s", keys[i],
            field_num(line, keys[i]), line);
  }
  free(copy);
  CHECK(nstep == 15, "expected 15 step lines of the self comparison, got %d", nstep);
  /* the tool does measure something: fp32 against fp64 is not bitwise equal */
  char* prec = find_line(r.out, "\"type\":\"comparison\"", "\"kind\":\"precision\"");
  CHECK(prec != NULL, "no precision comparison summary");
  if (prec) CHECK(field_num(prec, "dv_max") > 0, "approx32 vs approx64: dv_max is 0: %s", prec);
  free(prec);
  CHECK(strstr(r.err, "approx64#2 vs approx64") != NULL, "table on stderr lacks the comparison");
  free_run(&r);
}

/* the "options" object of a config summary line, as "key":"value" pairs */
static int options_of(const char* line, char keys[][48], char vals[][48], int max) {
  const char* p = strstr(line, "\"options\":{");
  if (!p) return -1;
  p += strlen("\"options\":{");
  int n = 0;
  while (*p == '"' && n < max) {
    if (sscanf(p, "\"%47[^\"]\":\"%47[^\"]\"", keys[n], vals[n]) != 2) return -1;
    n++;
    p = strchr(p + 1, '"');          /* end of key */
    p = strchr(p + 1, '"');          /* start of value */
    p = strchr(p + 1, '"');          /* end of value */
    if (!p) return -1;
    p++;
    if (*p == ',') p++;
  }
  return n;
}

/* an override differs from its base preset in exactly the stated knob */
static void test_ablate_override_one_factor(void) {
  if (!have_cli()) SKIP("%s not built (make)", SAPSIM);
  cliRun r = run_cli("ablate " SCENE " --worlds 2 --steps 5 --presets approx64 "
                     "--set weight_mode=diag_delassus --set contact_point_mode=contact_midpoint "
                     "--set linear_solve_precision=fp32");
  CHECK(r.rc == 0, "ablate failed (rc %d): %s", r.rc, r.err);
  const char* overrides[3][3] = {{"weight_mode=diag_delassus", "weight_mode", "diag_delassus"},
                                 {"contact_point_mode=contact_midpoint", "contact_point",
                                  "contact_midpoint"},
                                 {"linear_solve_precision=fp32", "linear_solve_precision", "fp32"}};
  char* base = find_line(r.out, "\"type\":\"config\"", "\"config\":\"approx64\"");
  CHECK(base != NULL, "no config line for approx64");
  static char bk[64][48], bv[64][48], ok[64][48], ov[64][48];
  int nb = base ? options_of(base, bk, bv, 64) : -1;
  CHECK(nb > 10, "approx64: options not found or too few (%d)", nb);
  for (int i = 0; i < 3 && nb > 10; i++) {
    char want[160];
    snprintf(want, sizeof(want), "\"config\":\"approx64+%s\"", overrides[i][0]);
    char* line = find_line(r.out, "\"type\":\"config\"", want);
    CHECK(line != NULL, "no config line %s", want);
    if (!line) continue;
    int no = options_of(line, ok, ov, 64);
    CHECK(no == nb, "%s: %d options, base has %d", overrides[i][0], no, nb);
    int ndiff = 0;
    for (int j = 0; j < nb && j < no; j++) {
      CHECK(!strcmp(bk[j], ok[j]), "option order differs: %s vs %s", bk[j], ok[j]);
      if (!strcmp(bv[j], ov[j])) continue;
      ndiff++;
      CHECK(!strcmp(ok[j], overrides[i][1]) && !strcmp(ov[j], overrides[i][2]),
            "%s changed %s: %s -> %s", overrides[i][0], ok[j], bv[j], ov[j]);
    }
    CHECK(ndiff == 1, "%s: %d options differ from approx64, want exactly 1", overrides[i][0], ndiff);
    CHECK(strstr(line, "\"base\":\"approx64\"") != NULL, "%s: base is not approx64", want);
    free(line);
  }
  free(base);
  free_run(&r);
}

/* every stdout line of bench and ablate parses as JSON, and so does --json FILE */
static void test_json_lines(void) {
  CHECK(json_valid("{\"a\":[1,-2.5e-3,true,null,\"x\\\"y\"],\"b\":{}}"), "validator rejects JSON");
  CHECK(!json_valid("{\"a\":nan}") && !json_valid("{\"a\":1,}") && !json_valid("{\"a\":1} x") &&
        !json_valid("{'a':1}") && !json_valid("[01]"), "validator accepts non-JSON");
  if (!have_cli()) SKIP("%s not built (make)", SAPSIM);
  char jf[128], args[512];
  tmp_path(jf, sizeof(jf), "ablate.jsonl");
  snprintf(args, sizeof(args), "ablate scenes/humanoid.xml --worlds 2 --steps 8 "
           "--set weight_mode=diag_delassus --json %s", jf);
  cliRun r = run_cli(args);
  CHECK(r.rc == 0, "ablate failed (rc %d): %s", r.rc, r.err);
  /* 3 comparisons x 8 steps + 4 configs + 3 comparisons */
  int n = check_json_lines("ablate stdout", r.out);
  CHECK(n == 3 * 8 + 4 + 3, "ablate printed %d lines, want 31", n);
  char* file = slurp(jf);
  CHECK(file && !strcmp(file, r.out), "--json file differs from stdout");
  free(file);
  free_run(&r);

  r = run_cli("bench " SCENE " --worlds 1,2 --steps 4 --preset approx32,approx64 "
              "--line-search armijo_decay,exact_root --no-progress");
  CHECK(r.rc == 0, "bench failed (rc %d): %s", r.rc, r.err);
  n = check_json_lines("bench stdout", r.out);
  CHECK(n == 2 * 2 * 2, "bench printed %d lines, want 8", n);
  CHECK(strstr(r.err, "ratio") != NULL, "bench table missing on stderr");
  free_run(&r);

  /* --vary: one more axis; a bare value reuses the key, '+' joins several options */
  r = run_cli("bench " SCENE " --worlds 1,2 --steps 4 --no-progress "
              "--vary newton_loop=kernel,fixed,newton_loop=while+linear_solver=cusolver");
  CHECK(r.rc == 0, "bench --vary failed (rc %d): %s", r.rc, r.err);
  n = check_json_lines("bench --vary stdout", r.out);
  CHECK(n == 3 * 2, "bench --vary printed %d lines, want 6", n);
  CHECK(strstr(r.out, "\"variant\":\"newton_loop=fixed\"") &&
            strstr(r.out, "\"newton_loop\":\"while\",\"linear_solver\":\"cusolver\""),
        "bench --vary lines do not name the variants: %.300s", r.out);
  free_run(&r);
}

/* a PNG: 8-byte signature, then an IHDR chunk of length 13 with a nonzero size */
static void check_png(const char* path) {
  unsigned char h[24] = {0};
  FILE* f = fopen(path, "rb");
  CHECK(f != NULL, "plot %s was not written", path);
  if (!f) return;
  size_t got = fread(h, 1, sizeof(h), f);
  fclose(f);
  static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  CHECK(got == 24 && !memcmp(h, sig, 8), "%s: no PNG signature", path);
  unsigned len = (unsigned)h[8] << 24 | h[9] << 16 | h[10] << 8 | h[11];
  unsigned wid = (unsigned)h[16] << 24 | h[17] << 16 | h[18] << 8 | h[19];
  unsigned hei = (unsigned)h[20] << 24 | h[21] << 16 | h[22] << 8 | h[23];
  CHECK(len == 13 && !memcmp(h + 12, "IHDR", 4), "%s: first chunk is not IHDR", path);
  CHECK(wid > 100 && hei > 100 && wid < 10000 && hei < 10000, "%s: odd size %u x %u", path, wid, hei);
}

static void test_plots_png(void) {
  if (!have_cli()) SKIP("%s not built (make)", SAPSIM);
  if (!have_matplotlib()) SKIP("python3-matplotlib is not installed (make deps)");
  char png[128], args[512];
  tmp_path(png, sizeof(png), "ablate.png");
  snprintf(args, sizeof(args), "ablate " SCENE " --worlds 2 --steps 10 --plot %s --quiet", png);
  cliRun r = run_cli(args);
  CHECK(r.rc == 0, "ablate --plot failed (rc %d): %s", r.rc, r.err);
  check_png(png);
  free_run(&r);
  tmp_path(png, sizeof(png), "bench.png");
  snprintf(args, sizeof(args), "bench " SCENE " --worlds 1,2 --steps 4 --plot %s --quiet", png);
  r = run_cli(args);
  CHECK(r.rc == 0, "bench --plot failed (rc %d): %s", r.rc, r.err);
  check_png(png);
  free_run(&r);
}

/* bad names fail before running anything, naming the valid values */
/* `sapsim compare`: a 1 kg box resting on its 4 corner contacts sits at the SAP
 * rest height 0.1 - m g / (4 k), k = 1e5 / 2 (two geoms in series), analytic; MuJoCo's
 * soft contact rests within a millimetre of touching; the last line is JSON */
static void test_compare(void) {
  if (!have_cli()) SKIP("%s not built (make)", SAPSIM);
  cliRun r = run_cli("compare scenes/box.xml --steps 200");
  CHECK(r.rc == 0, "compare failed (rc %d): %s", r.rc, r.err);
  const char* last = strrchr(r.out, '{');
  CHECK(last && json_valid(last), "compare: last line is not JSON: %.200s", r.out);
  double zs = NAN, zm = NAN;
  const char* a = last ? strstr(last, "\"final_base_z_sapsim\":") : NULL;
  const char* b = last ? strstr(last, "\"final_base_z_mujoco\":") : NULL;
  if (a) zs = strtod(a + strlen("\"final_base_z_sapsim\":"), NULL);
  if (b) zm = strtod(b + strlen("\"final_base_z_mujoco\":"), NULL);
  CHECK_CLOSE(zs, 0.1 - 9.81 / (4 * 5e4), 2e-6, 0, "sapsim rest height");
  CHECK(fabs(zm - 0.1) < 1e-3, "MuJoCo rest height %g", zm);
  /* the baseline: MuJoCo with the other cone; a box has no hinge or slide joint */
  const char* c = last ? strstr(last, "\"max_joint_diff_mujoco_cones\":") : NULL;
  CHECK(c && strtod(c + strlen("\"max_joint_diff_mujoco_cones\":"), NULL) == 0, "cones baseline: %.300s",
        last ? last : "");
  free_run(&r);
}

/* bad flags are named: a non-numeric seed, an empty world list, an unknown last option */
static void test_bad_flags(void) {
  if (!have_cli()) SKIP("%s not built (make)", SAPSIM);
  static const struct { const char* args; const char* frag; } cases[] = {
      {"run scenes/box.xml --seed abc", "--seed: 'abc'"},
      {"run scenes/box.xml --seed -3", "--seed: '-3'"},
      {"run scenes/box.xml --worlds ''", "--worlds"},
      {"run scenes/box.xml --bogus", "unknown option '--bogus'"},
      {"run scenes/box.xml --format hdf5", "--format: 'hdf5' is not one of csv, binary, binary32"},
      {"run scenes/box.xml --end-time -1", "--end-time: '-1'"},
      {"run scenes/box.xml --wall-time abc", "--wall-time: 'abc'"},
      {"run scenes/box.xml --frame-every 0", "--frame-every: '0'"},
      {"run scenes/box.xml --set retry_depth=30", "retry_depth: 30 is out of range [0, 20]"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    cliRun r = run_cli(cases[i].args);
    CHECK(r.rc != 0 && strstr(r.err, cases[i].frag), "'%s': rc %d, '%s'", cases[i].args, r.rc, r.err);
    free_run(&r);
  }
  /* run is sap_run: --end-time alone has no step limit; h = 0.005 -> 10 steps to 0.05 */
  {
    cliRun e = run_cli("run scenes/box.xml --worlds 2 --end-time 0.05 --quiet");
    CHECK(e.rc == 0 && strstr(e.out, "2 worlds x 10 steps") && strstr(e.out, "stopped by end_time, time 0.05"),
          "run --end-time: %.400s", e.out);
    free_run(&e);
  }
  /* run prints the options in force, not NaN or -1 markers */
  cliRun r = run_cli("run scenes/box.xml --worlds 1 --steps 1");
  CHECK(r.rc == 0 && strstr(r.out, "timestep=0.005") && !strstr(r.out, "ncon_max=-1") &&
            strstr(r.out, "device=cpu") && !strstr(r.out, "=nan"),
        "run's options: %.600s", r.out);
  free_run(&r);
}

/* `info` states the memory per world, and warns past the dense layout's range: 50 free
 * bodies have nv = 300 */
static void test_info_memory(void) {
  if (!have_cli()) SKIP("%s not built (make)", SAPSIM);
  char path[128], args[256];
  tmp_path(path, sizeof(path), "bodies.xml");
  FILE* f = fopen(path, "w");
  if (!f) { CHECK(0, "cannot write %s", path); return; }
  fprintf(f, "<mujoco><worldbody>");
  for (int i = 0; i < 50; i++)
    fprintf(f, "<body pos='%d 0 1'><freejoint/><geom size='.1' contype='0' conaffinity='0'/></body>", i);
  fprintf(f, "</worldbody></mujoco>");
  fclose(f);
  snprintf(args, sizeof(args), "info %s", path);
  cliRun r = run_cli(args);
  CHECK(r.rc == 0 && strstr(r.out, "bytes per world") && strstr(r.out, "warning: nv = 300"),
        "info: rc %d, %.400s", r.rc, r.out);
  free_run(&r);
  r = run_cli("info scenes/humanoid.xml");
  CHECK(r.rc == 0 && strstr(r.out, "bytes per world") && !strstr(r.out, "warning"), "humanoid info: %.300s", r.out);
  // MuJoCo's default pyramidal cone is accepted and named (info and run); the elliptic one is not
  CHECK(strstr(r.out, "note: the scene uses MuJoCo's pyramidal friction cone"), "humanoid info: the cone note");
  free_run(&r);
  r = run_cli("run scenes/humanoid.xml --worlds 1 --steps 1");
  CHECK(r.rc == 0 && strstr(r.out, "pyramidal friction cone"), "run: the cone note: %.300s", r.out);
  free_run(&r);
  r = run_cli("info scenes/quadruped_roll.xml");
  CHECK(r.rc == 0 && !strstr(r.out, "pyramidal"), "quadruped_roll (elliptic) info: no cone note");
  free_run(&r);
}

/* output files that cannot be written fail loudly; a FIFO is not a scene */
static void test_output_errors(void) {
  if (!have_cli()) SKIP("%s not built (make)", SAPSIM);
  cliRun r = run_cli("run scenes/box.xml --worlds 1 --steps 3 --out /dev/full");
  CHECK(r.rc != 0 && strstr(r.err, "/dev/full") && strstr(r.err, "failed"), "--out /dev/full: rc %d, '%s'",
        r.rc, r.err);
  CHECK(!strstr(r.out, "trajectory:"), "--out /dev/full reported success");
  free_run(&r);
}

static void test_bad_names(void) {
  if (!have_cli()) SKIP("%s not built (make)", SAPSIM);
  const char* cases[] = {
      "bench " SCENE " --worlds 1 --steps 2 --preset approx16",
      "bench " SCENE " --worlds 1 --steps 2 --preset approx32,approx16",
      "ablate " SCENE " --steps 2 --presets approx64,approx16",
  };
  for (int i = 0; i < 3; i++) {
    cliRun r = run_cli(cases[i]);
    CHECK(r.rc != 0, "'%s' succeeded", cases[i]);
    CHECK(strstr(r.err, "approx16") && strstr(r.err, "approx32") && strstr(r.err, "approx64") &&
              strstr(r.err, "drake"), "'%s': message does not name the valid presets: %s",
          cases[i], r.err);
    CHECK(r.out[0] == 0, "'%s' printed results: %.100s", cases[i], r.out);
    free_run(&r);
  }
  cliRun r = run_cli("ablate " SCENE " --steps 2 --set no_such_knob=1");
  CHECK(r.rc != 0 && strstr(r.err, "no_such_knob") && strstr(r.err, "weight_mode"),
        "unknown override knob: rc %d, message %s", r.rc, r.err);
  free_run(&r);
  r = run_cli("bench " SCENE " --worlds 1 --steps 2 --vary linear_solver=custom,cusolver");
  CHECK(r.rc != 0 && strstr(r.err, "needs newton_loop=while or fixed") && r.out[0] == 0,
        "a --vary combination that cannot run: rc %d, message %s", r.rc, r.err);
  free_run(&r);
  /* --vary text that would have been cut or dropped silently before: refused, naming why */
  {
    char cmd[4096], list[3000];
    int o = 0;
    for (int k = 0; k < 17; k++) o += snprintf(list + o, sizeof(list) - o, "%sthreads=%d", k ? "," : "", k + 1);
    snprintf(cmd, sizeof(cmd), "bench " SCENE " --worlds 1 --steps 2 --vary %s", list);
    r = run_cli(cmd);
    CHECK(r.rc != 0 && strstr(r.err, "more than 16 variants") && r.out[0] == 0,
          "17 variants: rc %d, message %s", r.rc, r.err);
    free_run(&r);
    o = snprintf(list, sizeof(list), "threads=1");
    for (int k = 0; k < 40; k++) o += snprintf(list + o, sizeof(list) - o, "+threads=1");  // 409 characters
    snprintf(cmd, sizeof(cmd), "bench " SCENE " --worlds 1 --steps 2 --vary %s", list);
    r = run_cli(cmd);
    CHECK(r.rc != 0 && strstr(r.err, "variant 1 is 409 characters long (at most 255)") && r.out[0] == 0,
          "a 409-character variant: rc %d, message %s", r.rc, r.err);
    free_run(&r);
    r = run_cli("bench " SCENE " --worlds 1 --steps 2 --vary custom,cusolver");
    CHECK(r.rc != 0 && strstr(r.err, "needs key=value") && r.out[0] == 0,
          "a variant without a key: rc %d, message %s", r.rc, r.err);
    free_run(&r);
  }
  r = run_cli("ablate " SCENE " --steps 2 --set weight_mode=heavy");
  CHECK(r.rc != 0 && strstr(r.err, "diag_delassus"), "bad override value: rc %d, message %s",
        r.rc, r.err);
  free_run(&r);
}

static void find_cli(void) {
  char exe[1024];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n <= 0) return;
  exe[n] = 0;
  char* slash = strrchr(exe, '/');
  if (!slash) return;
  *slash = 0;
  char path[1100];
  if (snprintf(path, sizeof(path), "%s/../sapsim", exe) < (int)sizeof(path) && access(path, X_OK) == 0)
    snprintf(sapsim_bin, sizeof(sapsim_bin), "%s", path);
}

int main(void) {
  find_cli();
  snprintf(tmp_dir, sizeof(tmp_dir), "/tmp/sapsim_test_cli_XXXXXX");
  if (!mkdtemp(tmp_dir)) {
    perror("mkdtemp");
    return 1;
  }
  RUN(test_ablate_self_zero);
  RUN(test_ablate_override_one_factor);
  RUN(test_json_lines);
  RUN(test_plots_png);
  RUN(test_bad_names);
  RUN(test_compare);
  RUN(test_output_errors);
  RUN(test_bad_flags);
  RUN(test_info_memory);
  char cmd[128];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp_dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmp_dir);
  return check_summary("test_cli");
}
