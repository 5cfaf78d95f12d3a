/* Options: presets of seed 002 (approx32, approx64, drake), one-factor overrides
 * applied after the preset expands, and text parsing with clear errors. One table
 * (sapo_keys: key, alias, type, range, default, doc; host/options.h) drives the defaults,
 * parsing, reading back, the struct check, the description and the CLI's help.
 * Knob names accept SAP Warp's spelling (free_motion_solve_precision, ...) and
 * short ones (free_motion_precision, ...); values are normalised like SAP Warp:
 * lower case, '-' -> '_', approx_32 -> approx32, f32 -> fp32. */
#include <ctype.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"
#include "sim.h"

/* ---- name tables ---------------------------------------------------------------- */

static const sapoName preset_names[] = {
    {"approx32", SAP_PRESET_APPROX32}, {"approx64", SAP_PRESET_APPROX64},
    {"drake", SAP_PRESET_DRAKE}, {NULL, 0}};
static const sapoName precision_names[] = {
    {"fp32", SAP_FP32}, {"f32", SAP_FP32}, {"float32", SAP_FP32},
    {"fp64", SAP_FP64}, {"f64", SAP_FP64}, {"float64", SAP_FP64}, {NULL, 0}};
static const sapoName weight_names[] = {
    {"body_inertia", SAP_WEIGHT_BODY_INERTIA}, {"diag_delassus", SAP_WEIGHT_DIAG_DELASSUS},
    {NULL, 0}};
static const sapoName point_names[] = {
    {"witness_point", SAP_POINT_WITNESS}, {"contact_midpoint", SAP_POINT_MIDPOINT}, {NULL, 0}};
static const sapoName integration_names[] = {
    {"midpoint", SAP_INTEGRATE_MIDPOINT}, {"sap_euler", SAP_INTEGRATE_SAP_EULER}, {NULL, 0}};
static const sapoName ls_names[] = {
    {"monotone_decay", SAP_LS_MONOTONE}, {"armijo_decay", SAP_LS_ARMIJO},
    {"exact_root", SAP_LS_EXACT}, {"newton_wolfe", SAP_LS_NEWTON}, {NULL, 0}};
static const sapoName warm_start_names[] = {
    {"qvel", SAP_WARM_QVEL}, {"extrapolate", SAP_WARM_EXTRAPOLATE}, {NULL, 0}};
static const sapoName device_names[] = {
    {"auto", SAP_DEVICE_AUTO}, {"cpu", SAP_DEVICE_CPU}, {"cuda", SAP_DEVICE_CUDA},
    {"gpu", SAP_DEVICE_CUDA}, {NULL, 0}};
static const sapoName solve_kernel_names[] = {
    {"warp", SAP_SOLVE_WARP}, {"thread", SAP_SOLVE_THREAD}, {NULL, 0}};
static const sapoName free_motion_kernel_names[] = {
    {"warp", SAP_FREE_MOTION_WARP}, {"thread", SAP_FREE_MOTION_THREAD}, {NULL, 0}};
static const sapoName newton_loop_names[] = {
    {"kernel", SAP_NEWTON_KERNEL}, {"while", SAP_NEWTON_WHILE}, {"fixed", SAP_NEWTON_FIXED}, {NULL, 0}};
static const sapoName linear_solver_names[] = {
    {"custom", SAP_LINSOLVE_CUSTOM}, {"cusolver", SAP_LINSOLVE_CUSOLVER}, {NULL, 0}};
static const sapoName chol_memory_names[] = {
    {"shared", SAP_CHOL_SHARED}, {"global", SAP_CHOL_GLOBAL}, {NULL, 0}};
static const sapoName friction_combine_names[] = {
    {"mujoco", SAP_FRICTION_MUJOCO}, {"max", SAP_FRICTION_MUJOCO}, {"harmonic", SAP_FRICTION_HARMONIC},
    {NULL, 0}};
static const sapoName broad_names[] = {
    {"auto", SAP_BROAD_AUTO}, {"pairs", SAP_BROAD_PAIRS}, {"sweep", SAP_BROAD_SWEEP}, {NULL, 0}};
static const sapoName band_names[] = {
    {"margin", SAP_BAND_MARGIN}, {"speed", SAP_BAND_SPEED}, {NULL, 0}};
static const sapoName bool_names[] = {
    {"1", 1}, {"true", 1}, {"on", 1}, {"yes", 1}, {"0", 0}, {"false", 0}, {"off", 0}, {"no", 0},
    {NULL, 0}};

/* value text -> canonical form: trimmed, lower case, '-' -> '_', approx_32 -> approx32 */
static void normalise(const char* in, char* out, int nout) {
  while (*in && isspace((unsigned char)*in)) in++;
  int n = 0;
  for (; *in && n < nout - 1; in++) out[n++] = (*in == '-') ? '_' : (char)tolower((unsigned char)*in);
  while (n > 0 && isspace((unsigned char)out[n - 1])) n--;
  out[n] = 0;
  if (!strcmp(out, "approx_32")) strcpy(out, "approx32");
  if (!strcmp(out, "approx_64")) strcpy(out, "approx64");
}

static const char* canonical_name(const sapoName* t, int value) {
  for (; t->name; t++)
    if (t->value == value) return t->name;
  return "?";
}

/* "a, b, c": each value once, by its first name */
static const char* valid_names(const sapoName* t, char* valid, size_t n) {
  valid[0] = 0;
  int last = -12345;
  for (const sapoName* e = t; e->name; e++) {
    if (e->value == last) continue;
    last = e->value;
    if (valid[0]) strncat(valid, ", ", n - strlen(valid) - 1);
    strncat(valid, e->name, n - strlen(valid) - 1);
  }
  return valid;
}

static sapStatus lookup(const sapoName* t, const char* key, const char* value, int* out) {
  char v[64];
  normalise(value, v, sizeof(v));
  for (const sapoName* e = t; e->name; e++)
    if (!strcmp(e->name, v)) {
      *out = e->value;
      return SAP_OK;
    }
  char valid[256];
  return sap_fail(SAP_ERR_OPTION, "option %s: invalid value '%s' (valid: %s)", key, value,
                  valid_names(t, valid, sizeof(valid)));
}

/* ---- the option table ------------------------------------------------------------ */

/* one row per knob: key, alias, type, offset, values or range, default, what an unset
 * default resolves to, doc. NaN defaults (reals) and -1 (enums, integers) are resolved by
 * sap_optionsExpand or sap_create; the README's options table documents the same rows. */
#define OFF(f) offsetof(sapOptions, f)
#define ENUM(key, alias, f, names, def, unset, doc) \
  {key, alias, SAPO_ENUM, OFF(f), names, 0, 0, 0, def, unset, doc}
#define INT(key, alias, f, lo, hi, def, unset, doc) {key, alias, SAPO_INT, OFF(f), NULL, lo, hi, 0, def, unset, doc}
#define REAL(key, alias, f, lo, hi, lo_open, def, unset, doc) \
  {key, alias, SAPO_REAL, OFF(f), NULL, lo, hi, lo_open, def, unset, doc}
const sapoKey sapo_keys[] = {
    ENUM("preset", "contact_preset_variant", preset, preset_names, SAP_PRESET_APPROX32, NULL,
         "seed 002's preset: the knobs left at 'preset' take its values"),
    ENUM("free_motion_precision", "free_motion_solve_precision", free_motion_precision, precision_names, -1,
         "preset", "precision of the free-motion solve (M, c, A, v*)"),
    ENUM("contact_solve_precision", NULL, contact_solve_precision, precision_names, -1, "preset",
         "precision of the contact objective buffers (cost, gradient, G)"),
    ENUM("linear_solve_precision", "contact_linear_solve_precision", linear_solve_precision, precision_names,
         -1, "preset", "precision of the Newton blocked Cholesky"),
    ENUM("weight_precision", "sap_contact_weight_precision", weight_precision, precision_names, -1, "preset",
         "precision of the contact weights w"),
    ENUM("boundary_pose_precision", NULL, boundary_pose_precision, precision_names, -1, "preset",
         "precision of kinematics and contact geometry"),
    ENUM("weight_mode", "contact_weight_mode", weight_mode, weight_names, -1, "preset",
         "contact weights from body inertias or diag(Delassus)"),
    ENUM("contact_point", "contact_point_mode", contact_point, point_names, -1, "preset",
         "contact point: a witness point or the midpoint"),
    ENUM("integration", "position_integration", integration, integration_names, -1, "preset",
         "position integration"),
    ENUM("line_search", "line_search_variant", line_search, ls_names, SAP_LS_NEWTON, NULL,
         "line search of the Newton loop"),
    INT("max_iterations", NULL, max_iterations, 1, 100000, 100, NULL, "Newton iteration cap"),
    INT("ls_max_iterations", "line_search_max_iterations", ls_max_iterations, 1, 100000, -1,
        "40 (exact_root: 100)", "line-search iteration cap"),
    REAL("optimality_abs_tol", NULL, optimality_abs_tol, 0, 1e10, 0, 1e-14, NULL,
         "absolute tolerance of the optimality stop"),
    REAL("optimality_rel_tol", NULL, optimality_rel_tol, 0, 1, 0, 1e-6, NULL,
         "relative tolerance of the optimality stop"),
    REAL("cost_abs_tol", NULL, cost_abs_tol, 0, 1e10, 0, NAN, "monotone_decay 0, others 1e-30",
         "absolute tolerance of the cost-decrease stop"),
    REAL("cost_rel_tol", NULL, cost_rel_tol, 0, 1, 0, NAN, "monotone_decay 5e-3, others 1e-15",
         "relative tolerance of the cost-decrease stop"),
    REAL("armijo_c", NULL, armijo_c, 0, 1, 1, 1e-4, NULL, "Armijo sufficient-decrease constant"),
    REAL("rho", NULL, rho, 0, 0.999999, 1, 0.8, NULL, "Armijo step decay factor"),
    REAL("ls_relative_slop", "line_search_relative_slop", ls_relative_slop, 0, 1, 0, NAN,
         "1000 eps of the contact solve precision", "line-search relative slop"),
    REAL("contact_beta", NULL, contact_beta, 0, 1e6, 1, 1.0, NULL, "near-rigid threshold beta"),
    REAL("contact_sigma", NULL, contact_sigma, 0, 1e6, 0, 1e-3, NULL,
         "friction regularisation sigma (contacts and frictionloss rows)"),
    REAL("timestep", "dt", timestep, 0, 1, 1, NAN, "the scene's", "time step (s)"),
    REAL("contact_k", "contact_stiffness", contact_k, 0, 1e20, 1, NAN, "the scene's",
         "scene-wide default contact stiffness (N/m)"),
    REAL("contact_taud", "contact_tau_d", contact_taud, 0, 1e3, 0, NAN, "the scene's",
         "scene-wide default dissipation time scale (s)"),
    REAL("contact_margin", NULL, contact_margin, 0, 10, 0, NAN, "the scene's, else 0.02 m (drake: 0)",
         "speculative contact band (m)"),
    INT("ncon_max", "max_rigid_contact", ncon_max, 0, 1 << 20, -1, "estimated from the scene",
        "per-world contact capacity"),
    ENUM("broadphase", NULL, broadphase, broad_names, SAP_BROAD_AUTO, NULL,
         "broad phase (auto: sweep when ngeom >= 32 and pairs > 8 ngeom)"),
    ENUM("device", NULL, device, device_names, SAP_DEVICE_AUTO, NULL, "backend (auto: the GPU when usable)"),
    INT("threads", NULL, threads, 0, 4096, 0, NULL, "CPU threads (0: OpenMP's default)"),
    ENUM("contacts", NULL, contacts, bool_names, 1, NULL, "1: collision and SAP contacts; 0: free motion only"),
    ENUM("graph", "cuda_graph", graph, bool_names, 0, NULL, "GPU: capture one step in a CUDA graph, replay it"),
    ENUM("stage_timing", NULL, stage_timing, bool_names, 0, NULL,
         "GPU: time each stage with events (one wait per step)"),
    ENUM("solve_kernel", NULL, solve_kernel, solve_kernel_names, SAP_SOLVE_WARP, NULL,
         "GPU solve: one warp or one thread per world"),
    ENUM("free_motion_kernel", NULL, free_motion_kernel, free_motion_kernel_names, SAP_FREE_MOTION_WARP, NULL,
         "GPU free motion: one warp or one thread per world"),
    ENUM("newton_loop", NULL, newton_loop, newton_loop_names, SAP_NEWTON_KERNEL, NULL,
         "GPU warp solve: the Newton loop in one kernel, or one launch group per iteration"),
    ENUM("linear_solver", NULL, linear_solver, linear_solver_names, SAP_LINSOLVE_CUSTOM, NULL,
         "GPU Newton linear solve: sapsim's warp Cholesky or cuSOLVER's batched one"),
    ENUM("chol_memory", NULL, chol_memory, chol_memory_names, SAP_CHOL_SHARED, NULL,
         "GPU warp Cholesky's copy of H in shared or global memory"),
    INT("solve_block_worlds", NULL, solve_block_worlds, 1, 32, 2, NULL,
        "GPU warp solve: worlds (one warp each) per block"),
    INT("world_block_threads", NULL, world_block_threads, 32, 1024, 32, NULL,
        "GPU: threads per block of the one-thread-per-world kernels"),
    ENUM("friction_combine", NULL, friction_combine, friction_combine_names, SAP_FRICTION_MUJOCO, NULL,
         "sliding friction of a dynamic geom pair: MuJoCo's rule or the harmonic mean"),
    ENUM("eq_curvature", NULL, eq_curvature, bool_names, 1, NULL,
         "connect and weld rows carry the curvature term h/2 Jdot v"),
    ENUM("warm_start", NULL, warm_start, warm_start_names, SAP_WARM_EXTRAPOLATE, NULL,
         "Newton loop start: the last velocity or its extrapolation"),
    ENUM("contact_screen", NULL, contact_screen, bool_names, 0, NULL,
         "CPU: solve rows only for contacts that can act (verified idle at the answer, else promoted)"),
    ENUM("contact_band", NULL, contact_band, band_names, SAP_BAND_MARGIN, NULL,
         "CPU: speculative contacts within the whole contact_margin (margin), or within what the geoms' "
         "speed budgets can close in one step (speed: verified after the solve, else redone whole)"),
    ENUM("island_newton", NULL, island_newton, bool_names, -1, "preset",
         "one-lane solve (CPU, GPU thread): one Newton loop per island, or one loop over all "
         "(approx32/approx64: 1; drake: 0, Drake's one loop)"),
    INT("retry_depth", NULL, retry_depth, 0, 20, 0, NULL,
        "step retry: halvings of h a failed world may take (0: off)"),
    INT("retry_recover_steps", NULL, retry_recover_steps, 1, 1000000, 8, NULL,
        "step retry: clean steps at a reduced step before h again"),
    ENUM("body_outputs", NULL, body_outputs, bool_names, 0, NULL,
         "1: compute cfrc_ext, cvel, cinert, subtree_com (MuJoCo's) in each step"),
};
const int sapo_nkeys = (int)(sizeof(sapo_keys) / sizeof(sapo_keys[0]));

void sap_optionsDefault(sapOptions* o) {
  if (!o) return;
  memset(o, 0, sizeof(*o));
  for (int i = 0; i < sapo_nkeys; i++) {
    char* field = (char*)o + sapo_keys[i].offset;
    if (sapo_keys[i].kind == SAPO_REAL) *(double*)field = sapo_keys[i].def;
    else *(int*)field = (int)sapo_keys[i].def;
  }
}

const sapoKey* sapo_find(const char* key) {
  if (!key) return NULL;
  char k[64];
  normalise(key, k, sizeof(k));
  for (int i = 0; i < sapo_nkeys; i++)
    if (!strcmp(k, sapo_keys[i].key) || (sapo_keys[i].alias && !strcmp(k, sapo_keys[i].alias))) return &sapo_keys[i];
  return NULL;
}

/* a real as the first of %g, %.15g and %.17g that reads back to the same double (1e-06,
 * 0.8, 1048576, 0.00011920929) */
static void real_text(double x, char* buf, int nbuf) {
  snprintf(buf, nbuf, "%g", x);
  if (strtod(buf, NULL) != x) snprintf(buf, nbuf, "%.15g", x);
  if (strtod(buf, NULL) != x) snprintf(buf, nbuf, "%.17g", x);
}

static const char* range_text(const sapoKey* e, char* buf, int nbuf) {
  char lo[28], hi[28];
  if (e->kind == SAPO_INT) {
    snprintf(lo, sizeof(lo), "%.0f", e->lo);
    snprintf(hi, sizeof(hi), "%.0f", e->hi);
  } else {
    real_text(e->lo, lo, sizeof(lo));
    real_text(e->hi, hi, sizeof(hi));
  }
  snprintf(buf, nbuf, "%c%s, %s]", e->lo_open ? '(' : '[', lo, hi);
  return buf;
}

static sapStatus parse_real(const sapoKey* e, const char* value, double* out) {
  char* end = NULL;
  double x = strtod(value, &end);
  while (end && isspace((unsigned char)*end)) end++;
  if (!end || end == value || *end || !isfinite(x))
    return sap_fail(SAP_ERR_OPTION, "option %s: '%s' is not a finite number", e->key, value);
  if (x < e->lo || x > e->hi || (e->lo_open && x == e->lo)) {
    char text[32], range[64];
    real_text(x, text, sizeof(text));
    return sap_fail(SAP_ERR_OPTION, "option %s: %s is out of range %s", e->key, text,
                    range_text(e, range, sizeof(range)));
  }
  *out = x;
  return SAP_OK;
}

static sapStatus parse_int(const sapoKey* e, const char* value, int* out) {
  char* end = NULL;
  long x = strtol(value, &end, 10);
  while (end && isspace((unsigned char)*end)) end++;
  if (!end || end == value || *end)
    return sap_fail(SAP_ERR_OPTION, "option %s: '%s' is not an integer", e->key, value);
  if (x < (long)e->lo || x > (long)e->hi) {
    char range[64];
    return sap_fail(SAP_ERR_OPTION, "option %s: %ld is out of range %s", e->key, x,
                    range_text(e, range, sizeof(range)));
  }
  *out = (int)x;
  return SAP_OK;
}

sapStatus sap_optionsSet(sapOptions* opt, const char* key, const char* value) {
  if (!opt || !key || !value) return sap_fail(SAP_ERR_ARG, "sap_optionsSet: null argument");
  const sapoKey* e = sapo_find(key);
  if (e) {
    char* field = (char*)opt + e->offset;
    if (e->kind == SAPO_ENUM) return lookup(e->names, e->key, value, (int*)field);
    if (e->kind == SAPO_INT) return parse_int(e, value, (int*)field);
    return parse_real(e, value, (double*)field);
  }
  char valid[1024] = "";
  for (int i = 0; i < sapo_nkeys; i++) {
    if (i) strncat(valid, ", ", sizeof(valid) - strlen(valid) - 1);
    strncat(valid, sapo_keys[i].key, sizeof(valid) - strlen(valid) - 1);
  }
  return sap_fail(SAP_ERR_OPTION, "unknown option '%s' (valid: %s)", key, valid);
}

/* the field's value as text: an enum's canonical name ("preset" for -1), an integer, a real */
static void value_text(const sapoKey* e, const sapOptions* o, char* buf, int nbuf) {
  const char* field = (const char*)o + e->offset;
  if (e->kind == SAPO_ENUM) {
    int x = *(const int*)field;
    snprintf(buf, nbuf, "%s", x < 0 ? "preset" : canonical_name(e->names, x));
  } else if (e->kind == SAPO_INT) {
    snprintf(buf, nbuf, "%d", *(const int*)field);
  } else {
    real_text(*(const double*)field, buf, nbuf);
  }
}

sapStatus sap_optionsGet(const sapOptions* opt, const char* key, char* buf, int nbuf) {
  if (!opt || !key || !buf || nbuf < 1) return sap_fail(SAP_ERR_ARG, "sap_optionsGet: null argument");
  buf[0] = 0;
  const sapoKey* e = sapo_find(key);
  if (!e) return sap_fail(SAP_ERR_OPTION, "unknown option '%s'", key);
  char v[64];
  value_text(e, opt, v, sizeof(v));
  if ((int)strlen(v) >= nbuf)
    return sap_fail(SAP_ERR_ARG, "sap_optionsGet: option %s: %d bytes needed, buffer %d", e->key,
                    (int)strlen(v) + 1, nbuf);
  memcpy(buf, v, strlen(v) + 1);
  return SAP_OK;
}

const char* sapo_valuesText(const sapoKey* e, char* buf, int nbuf) {
  if (e->kind != SAPO_ENUM) return range_text(e, buf, nbuf);
  char valid[256];
  valid_names(e->names, valid, sizeof(valid));
  /* "a, b, c" -> "a | b | c" */
  int n = 0;
  for (const char* p = valid; *p && n < nbuf - 4; p++) {
    if (p[0] == ',' && p[1] == ' ') {
      n += snprintf(buf + n, nbuf - n, " |");
      continue;
    }
    buf[n++] = *p;
  }
  buf[n] = 0;
  return buf;
}

const char* sapo_defaultText(const sapoKey* e, char* buf, int nbuf) {
  if (e->unset && (e->kind == SAPO_REAL ? isnan(e->def) : e->def == -1)) {
    snprintf(buf, nbuf, "%s", e->unset);
    return buf;
  }
  sapOptions o;
  sap_optionsDefault(&o);
  value_text(e, &o, buf, nbuf);
  return buf;
}

sapStatus sap_optionsSetPair(sapOptions* opt, const char* kv) {
  if (!kv) return sap_fail(SAP_ERR_ARG, "sap_optionsSetPair: null argument");
  const char* eq = strchr(kv, '=');
  if (!eq || eq == kv)
    return sap_fail(SAP_ERR_OPTION, "option '%s': expected key=value", kv);
  char key[64];
  int n = (int)(eq - kv);
  if (n >= (int)sizeof(key)) return sap_fail(SAP_ERR_OPTION, "option '%s': key too long", kv);
  memcpy(key, kv, n);
  key[n] = 0;
  return sap_optionsSet(opt, key, eq + 1);
}

/* seed 002's preset table (DESIGN.md §5) */
typedef struct {
  int free_motion, contact_solve, linear_solve, weight, boundary_pose;
  int weight_mode, contact_point, integration;
  int island_newton; /* Drake's SapSolver runs one Newton loop over the whole problem */
} sapPresetKnobs;

static const sapPresetKnobs preset_table[3] = {
    /* approx32 */ {SAP_FP32, SAP_FP64, SAP_FP32, SAP_FP32, SAP_FP32, SAP_WEIGHT_BODY_INERTIA,
                    SAP_POINT_WITNESS, SAP_INTEGRATE_MIDPOINT, 1},
    /* approx64 */ {SAP_FP64, SAP_FP64, SAP_FP64, SAP_FP64, SAP_FP64, SAP_WEIGHT_BODY_INERTIA,
                    SAP_POINT_WITNESS, SAP_INTEGRATE_MIDPOINT, 1},
    /* drake */    {SAP_FP64, SAP_FP64, SAP_FP64, SAP_FP64, SAP_FP64, SAP_WEIGHT_DIAG_DELASSUS,
                    SAP_POINT_MIDPOINT, SAP_INTEGRATE_SAP_EULER, 0},
};

/* a sapOptions filled in directly gets the rules sap_optionsSet applies to text: each
 * knob a valid enum value or within its range; -1 or NaN only where the default
 * leaves the knob to the preset or the scene */
static sapStatus check_struct(const sapOptions* o) {
  for (int i = 0; i < sapo_nkeys; i++) {
    const sapoKey* e = &sapo_keys[i];
    const char* field = (const char*)o + e->offset;
    char range[64];
    if (e->kind == SAPO_REAL) {
      double x = *(const double*)field;
      if (isnan(x) && isnan(e->def)) continue;
      if (!isfinite(x) || x < e->lo || x > e->hi || (e->lo_open && x == e->lo))
        return sap_fail(SAP_ERR_OPTION, "option %s: %g is out of range %s", e->key, x,
                        range_text(e, range, sizeof(range)));
      continue;
    }
    int x = *(const int*)field;
    if (x == -1 && e->def == -1) continue;
    if (e->kind == SAPO_INT) {
      if (x < e->lo || x > e->hi)
        return sap_fail(SAP_ERR_OPTION, "option %s: %d is out of range %s", e->key, x,
                        range_text(e, range, sizeof(range)));
      continue;
    }
    char valid[256];
    if (!strcmp(canonical_name(e->names, x), "?"))
      return sap_fail(SAP_ERR_OPTION, "option %s: invalid value %d (valid: %s)", e->key, x,
                      valid_names(e->names, valid, sizeof(valid)));
  }
  return SAP_OK;
}

sapStatus sap_optionsExpand(const sapOptions* in, sapOptions* out) {
  if (!in || !out) return sap_fail(SAP_ERR_ARG, "sap_optionsExpand: null argument");
  sapStatus st = check_struct(in);
  if (st != SAP_OK) return st;
  if (in->linear_solver == SAP_LINSOLVE_CUSOLVER && in->newton_loop == SAP_NEWTON_KERNEL)
    return sap_fail(SAP_ERR_OPTION,
                    "option linear_solver=cusolver needs newton_loop=while or fixed: cuSOLVER's batched "
                    "factorization is launched from the host between Newton iterations, and "
                    "newton_loop=kernel runs the whole loop inside one kernel");
  if (in->newton_loop != SAP_NEWTON_KERNEL && in->solve_kernel == SAP_SOLVE_THREAD)
    return sap_fail(SAP_ERR_OPTION,
                    "option newton_loop=%s runs on the warp solve: it needs solve_kernel=warp, not thread",
                    in->newton_loop == SAP_NEWTON_WHILE ? "while" : "fixed");
  sapOptions o = *in;
  const sapPresetKnobs* p = &preset_table[o.preset];
  if (o.free_motion_precision < 0) o.free_motion_precision = p->free_motion;
  if (o.contact_solve_precision < 0) o.contact_solve_precision = p->contact_solve;
  if (o.linear_solve_precision < 0) o.linear_solve_precision = p->linear_solve;
  if (o.weight_precision < 0) o.weight_precision = p->weight;
  if (o.boundary_pose_precision < 0) o.boundary_pose_precision = p->boundary_pose;
  if (o.weight_mode < 0) o.weight_mode = p->weight_mode;
  if (o.contact_point < 0) o.contact_point = p->contact_point;
  if (o.integration < 0) o.integration = p->integration;
  if (o.island_newton < 0) o.island_newton = p->island_newton;

  /* line-search dependent defaults (sapwarp_spec.md §7, §9) */
  int monotone = o.line_search == SAP_LS_MONOTONE;
  if (o.ls_max_iterations < 0) o.ls_max_iterations = o.line_search == SAP_LS_EXACT ? 100 : 40;
  if (isnan(o.cost_abs_tol)) o.cost_abs_tol = monotone ? 0.0 : 1e-30;
  if (isnan(o.cost_rel_tol)) o.cost_rel_tol = monotone ? 5e-3 : 1e-15;
  if (isnan(o.ls_relative_slop))
    o.ls_relative_slop = 1000.0 * (o.contact_solve_precision == SAP_FP32 ? 1.1920929e-7
                                                                         : 2.220446049250313e-16);
  *out = o;
  return SAP_OK;
}

static void append(char* buf, int nbuf, int* n, const char* fmt, const char* k, const char* v) {
  int w = snprintf(buf + *n, *n < nbuf ? (size_t)(nbuf - *n) : 0, fmt, k, v);
  if (w > 0) *n += w;
}

/* every knob as "key=value" lines, values as sap_optionsGet writes them */
int sap_optionsDescribe(const sapOptions* o, char* buf, int nbuf) {
  int n = 0;
  if (!buf) nbuf = 0;
  if (nbuf > 0) buf[0] = 0;
  if (!o) return 0;
  for (int i = 0; i < sapo_nkeys; i++) {
    char v[64];
    value_text(&sapo_keys[i], o, v, sizeof(v));
    append(buf, nbuf, &n, "%s=%s\n", sapo_keys[i].key, v);
  }
  return n;
}

const char* sapo_valueName(const char* key, int value) {
  for (int i = 0; i < sapo_nkeys; i++)
    if (!strcmp(sapo_keys[i].key, key) && sapo_keys[i].kind == SAPO_ENUM) return canonical_name(sapo_keys[i].names, value);
  return "?";
}
