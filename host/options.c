/* Options: presets of seed 002 (approx32, approx64, drake), one-factor overrides
 * applied after the preset expands, and text parsing with clear errors.
 * Knob names accept SAP Warp's spelling (free_motion_solve_precision, ...) and
 * short ones (free_motion_precision, ...); values are normalised like SAP Warp:
 * lower case, '-' -> '_', approx_32 -> approx32, f32 -> fp32. */
#include <ctype.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

void sap_optionsDefault(sapOptions* o) {
  if (!o) return;
  memset(o, 0, sizeof(*o));
  o->preset = SAP_PRESET_APPROX32;
  o->free_motion_precision = -1;
  o->contact_solve_precision = -1;
  o->linear_solve_precision = -1;
  o->weight_precision = -1;
  o->boundary_pose_precision = -1;
  o->weight_mode = -1;
  o->contact_point = -1;
  o->integration = -1;
  o->line_search = SAP_LS_ARMIJO;
  o->max_iterations = 100;
  o->ls_max_iterations = -1;
  o->optimality_abs_tol = 1e-14;
  o->optimality_rel_tol = 1e-6;
  o->cost_abs_tol = NAN;
  o->cost_rel_tol = NAN;
  o->armijo_c = 1e-4;
  o->rho = 0.8;
  o->ls_relative_slop = NAN;
  o->contact_beta = 1.0;
  o->contact_sigma = 1e-3;
  o->timestep = NAN;
  o->contact_k = NAN;
  o->contact_taud = NAN;
  o->contact_margin = NAN;
  o->ncon_max = -1;
  o->broadphase = SAP_BROAD_AUTO;
  o->device = SAP_DEVICE_AUTO;
  o->threads = 0;
  o->solve_block_worlds = 2;
  o->world_block_threads = 32;
  o->contacts = 1;
  o->eq_curvature = 1;
  o->warm_start = SAP_WARM_QVEL;
  o->retry_depth = 0;
  o->retry_recover_steps = 8;
}

/* ---- name tables ---------------------------------------------------------------- */

typedef struct { const char* name; int value; } sapName;

static const sapName preset_names[] = {
    {"approx32", SAP_PRESET_APPROX32}, {"approx64", SAP_PRESET_APPROX64},
    {"drake", SAP_PRESET_DRAKE}, {NULL, 0}};
static const sapName precision_names[] = {
    {"fp32", SAP_FP32}, {"f32", SAP_FP32}, {"float32", SAP_FP32},
    {"fp64", SAP_FP64}, {"f64", SAP_FP64}, {"float64", SAP_FP64}, {NULL, 0}};
static const sapName weight_names[] = {
    {"body_inertia", SAP_WEIGHT_BODY_INERTIA}, {"diag_delassus", SAP_WEIGHT_DIAG_DELASSUS},
    {NULL, 0}};
static const sapName point_names[] = {
    {"witness_point", SAP_POINT_WITNESS}, {"contact_midpoint", SAP_POINT_MIDPOINT}, {NULL, 0}};
static const sapName integration_names[] = {
    {"midpoint", SAP_INTEGRATE_MIDPOINT}, {"sap_euler", SAP_INTEGRATE_SAP_EULER}, {NULL, 0}};
static const sapName ls_names[] = {
    {"monotone_decay", SAP_LS_MONOTONE}, {"armijo_decay", SAP_LS_ARMIJO},
    {"exact_root", SAP_LS_EXACT}, {"newton_wolfe", SAP_LS_NEWTON}, {NULL, 0}};
static const sapName warm_start_names[] = {
    {"qvel", SAP_WARM_QVEL}, {"extrapolate", SAP_WARM_EXTRAPOLATE}, {NULL, 0}};
static const sapName device_names[] = {
    {"auto", SAP_DEVICE_AUTO}, {"cpu", SAP_DEVICE_CPU}, {"cuda", SAP_DEVICE_CUDA},
    {"gpu", SAP_DEVICE_CUDA}, {NULL, 0}};
static const sapName solve_kernel_names[] = {
    {"warp", SAP_SOLVE_WARP}, {"thread", SAP_SOLVE_THREAD}, {NULL, 0}};
static const sapName free_motion_kernel_names[] = {
    {"warp", SAP_FREE_MOTION_WARP}, {"thread", SAP_FREE_MOTION_THREAD}, {NULL, 0}};
static const sapName newton_loop_names[] = {
    {"kernel", SAP_NEWTON_KERNEL}, {"while", SAP_NEWTON_WHILE}, {"fixed", SAP_NEWTON_FIXED}, {NULL, 0}};
static const sapName linear_solver_names[] = {
    {"custom", SAP_LINSOLVE_CUSTOM}, {"cusolver", SAP_LINSOLVE_CUSOLVER}, {NULL, 0}};
static const sapName chol_memory_names[] = {
    {"shared", SAP_CHOL_SHARED}, {"global", SAP_CHOL_GLOBAL}, {NULL, 0}};
static const sapName friction_combine_names[] = {
    {"mujoco", SAP_FRICTION_MUJOCO}, {"max", SAP_FRICTION_MUJOCO}, {"harmonic", SAP_FRICTION_HARMONIC},
    {NULL, 0}};
static const sapName broad_names[] = {
    {"auto", SAP_BROAD_AUTO}, {"pairs", SAP_BROAD_PAIRS}, {"sweep", SAP_BROAD_SWEEP}, {NULL, 0}};
static const sapName bool_names[] = {
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

static const char* canonical_name(const sapName* t, int value) {
  for (; t->name; t++)
    if (t->value == value) return t->name;
  return "?";
}

/* "a, b, c": each value once, by its first name */
static const char* valid_names(const sapName* t, char* valid, size_t n) {
  valid[0] = 0;
  int last = -12345;
  for (const sapName* e = t; e->name; e++) {
    if (e->value == last) continue;
    last = e->value;
    if (valid[0]) strncat(valid, ", ", n - strlen(valid) - 1);
    strncat(valid, e->name, n - strlen(valid) - 1);
  }
  return valid;
}

static sapStatus lookup(const sapName* t, const char* key, const char* value, int* out) {
  char v[64];
  normalise(value, v, sizeof(v));
  for (const sapName* e = t; e->name; e++)
    if (!strcmp(e->name, v)) {
      *out = e->value;
      return SAP_OK;
    }
  char valid[256];
  return sap_fail(SAP_ERR_OPTION, "option %s: invalid value '%s' (valid: %s)", key, value,
                  valid_names(t, valid, sizeof(valid)));
}

static sapStatus parse_real(const char* key, const char* value, double lo, double hi,
                            int lo_open, double* out) {
  char* end = NULL;
  double x = strtod(value, &end);
  while (end && isspace((unsigned char)*end)) end++;
  if (!end || end == value || *end || !isfinite(x))
    return sap_fail(SAP_ERR_OPTION, "option %s: '%s' is not a finite number", key, value);
  if (x < lo || x > hi || (lo_open && x == lo))
    return sap_fail(SAP_ERR_OPTION, "option %s: %g is out of range %c%g, %g]", key, x,
                    lo_open ? '(' : '[', lo, hi);
  *out = x;
  return SAP_OK;
}

static sapStatus parse_int(const char* key, const char* value, long lo, long hi, int* out) {
  char* end = NULL;
  long x = strtol(value, &end, 10);
  while (end && isspace((unsigned char)*end)) end++;
  if (!end || end == value || *end)
    return sap_fail(SAP_ERR_OPTION, "option %s: '%s' is not an integer", key, value);
  if (x < lo || x > hi)
    return sap_fail(SAP_ERR_OPTION, "option %s: %ld is out of range [%ld, %ld]", key, x, lo, hi);
  *out = (int)x;
  return SAP_OK;
}

/* ---- the option table ------------------------------------------------------------ */

typedef enum { K_ENUM, K_REAL, K_INT } sapKeyKind;

typedef struct {
  const char* key;          /* canonical name */
  const char* alias;        /* SAP Warp / seed 002 name, or NULL */
  sapKeyKind kind;
  size_t offset;            /* into sapOptions */
  const sapName* names;     /* K_ENUM */
  double lo, hi;            /* K_REAL / K_INT range */
  int lo_open;
} sapKey;

#define OFF(f) offsetof(sapOptions, f)
static const sapKey keys[] = {
    {"preset", "contact_preset_variant", K_ENUM, OFF(preset), preset_names, 0, 0, 0},
    {"free_motion_precision", "free_motion_solve_precision", K_ENUM, OFF(free_motion_precision),
     precision_names, 0, 0, 0},
    {"contact_solve_precision", NULL, K_ENUM, OFF(contact_solve_precision), precision_names, 0, 0, 0},
    {"linear_solve_precision", "contact_linear_solve_precision", K_ENUM,
     OFF(linear_solve_precision), precision_names, 0, 0, 0},
    {"weight_precision", "sap_contact_weight_precision", K_ENUM, OFF(weight_precision),
     precision_names, 0, 0, 0},
    {"boundary_pose_precision", NULL, K_ENUM, OFF(boundary_pose_precision), precision_names, 0, 0, 0},
    {"weight_mode", "contact_weight_mode", K_ENUM, OFF(weight_mode), weight_names, 0, 0, 0},
    {"contact_point", "contact_point_mode", K_ENUM, OFF(contact_point), point_names, 0, 0, 0},
    {"integration", "position_integration", K_ENUM, OFF(integration), integration_names, 0, 0, 0},
    {"line_search", "line_search_variant", K_ENUM, OFF(line_search), ls_names, 0, 0, 0},
    {"max_iterations", NULL, K_INT, OFF(max_iterations), NULL, 1, 100000, 0},
    {"ls_max_iterations", "line_search_max_iterations", K_INT, OFF(ls_max_iterations), NULL, 1,
     100000, 0},
    {"optimality_abs_tol", NULL, K_REAL, OFF(optimality_abs_tol), NULL, 0, 1e10, 0},
    {"optimality_rel_tol", NULL, K_REAL, OFF(optimality_rel_tol), NULL, 0, 1, 0},
    {"cost_abs_tol", NULL, K_REAL, OFF(cost_abs_tol), NULL, 0, 1e10, 0},
    {"cost_rel_tol", NULL, K_REAL, OFF(cost_rel_tol), NULL, 0, 1, 0},
    {"armijo_c", NULL, K_REAL, OFF(armijo_c), NULL, 0, 1, 1},
    {"rho", NULL, K_REAL, OFF(rho), NULL, 0, 0.999999, 1},
    {"ls_relative_slop", "line_search_relative_slop", K_REAL, OFF(ls_relative_slop), NULL, 0, 1, 0},
    {"contact_beta", NULL, K_REAL, OFF(contact_beta), NULL, 0, 1e6, 1},
    {"contact_sigma", NULL, K_REAL, OFF(contact_sigma), NULL, 0, 1e6, 0},
    {"timestep", "dt", K_REAL, OFF(timestep), NULL, 0, 1, 1},
    {"contact_k", "contact_stiffness", K_REAL, OFF(contact_k), NULL, 0, 1e20, 1},
    {"contact_taud", "contact_tau_d", K_REAL, OFF(contact_taud), NULL, 0, 1e3, 0},
    {"contact_margin", NULL, K_REAL, OFF(contact_margin), NULL, 0, 10, 0},
    {"ncon_max", "max_rigid_contact", K_INT, OFF(ncon_max), NULL, 0, 1 << 20, 0},
    {"broadphase", NULL, K_ENUM, OFF(broadphase), broad_names, 0, 0, 0},
    {"device", NULL, K_ENUM, OFF(device), device_names, 0, 0, 0},
    {"threads", NULL, K_INT, OFF(threads), NULL, 0, 4096, 0},
    {"contacts", NULL, K_ENUM, OFF(contacts), bool_names, 0, 0, 0},
    {"graph", "cuda_graph", K_ENUM, OFF(graph), bool_names, 0, 0, 0},
    {"stage_timing", NULL, K_ENUM, OFF(stage_timing), bool_names, 0, 0, 0},
    {"solve_kernel", NULL, K_ENUM, OFF(solve_kernel), solve_kernel_names, 0, 0, 0},
    {"free_motion_kernel", NULL, K_ENUM, OFF(free_motion_kernel), free_motion_kernel_names, 0, 0, 0},
    {"newton_loop", NULL, K_ENUM, OFF(newton_loop), newton_loop_names, 0, 0, 0},
    {"linear_solver", NULL, K_ENUM, OFF(linear_solver), linear_solver_names, 0, 0, 0},
    {"chol_memory", NULL, K_ENUM, OFF(chol_memory), chol_memory_names, 0, 0, 0},
    {"solve_block_worlds", NULL, K_INT, OFF(solve_block_worlds), NULL, 1, 32, 0},
    {"world_block_threads", NULL, K_INT, OFF(world_block_threads), NULL, 32, 1024, 0},
    {"friction_combine", NULL, K_ENUM, OFF(friction_combine), friction_combine_names, 0, 0, 0},
    {"eq_curvature", NULL, K_ENUM, OFF(eq_curvature), bool_names, 0, 0, 0},
    {"warm_start", NULL, K_ENUM, OFF(warm_start), warm_start_names, 0, 0, 0},
    {"retry_depth", NULL, K_INT, OFF(retry_depth), NULL, 0, 20, 0},
    {"retry_recover_steps", NULL, K_INT, OFF(retry_recover_steps), NULL, 1, 1000000, 0},
};
#define NKEYS ((int)(sizeof(keys) / sizeof(keys[0])))

sapStatus sap_optionsSet(sapOptions* opt, const char* key, const char* value) {
  if (!opt || !key || !value) return sap_fail(SAP_ERR_ARG, "sap_optionsSet: null argument");
  char k[64];
  normalise(key, k, sizeof(k));
  for (int i = 0; i < NKEYS; i++) {
    const sapKey* e = &keys[i];
    if (strcmp(k, e->key) && !(e->alias && !strcmp(k, e->alias))) continue;
    char* field = (char*)opt + e->offset;
    if (e->kind == K_ENUM) return lookup(e->names, e->key, value, (int*)field);
    if (e->kind == K_INT) return parse_int(e->key, value, (long)e->lo, (long)e->hi, (int*)field);
    return parse_real(e->key, value, e->lo, e->hi, e->lo_open, (double*)field);
  }
  char valid[1024] = "";
  for (int i = 0; i < NKEYS; i++) {
    if (i) strncat(valid, ", ", sizeof(valid) - strlen(valid) - 1);
    strncat(valid, keys[i].key, sizeof(valid) - strlen(valid) - 1);
  }
  return sap_fail(SAP_ERR_OPTION, "unknown option '%s' (valid: %s)", key, valid);
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
} sapPresetKnobs;

static const sapPresetKnobs preset_table[3] = {
    /* approx32 */ {SAP_FP32, SAP_FP64, SAP_FP32, SAP_FP32, SAP_FP32, SAP_WEIGHT_BODY_INERTIA,
                    SAP_POINT_WITNESS, SAP_INTEGRATE_MIDPOINT},
    /* approx64 */ {SAP_FP64, SAP_FP64, SAP_FP64, SAP_FP64, SAP_FP64, SAP_WEIGHT_BODY_INERTIA,
                    SAP_POINT_WITNESS, SAP_INTEGRATE_MIDPOINT},
    /* drake */    {SAP_FP64, SAP_FP64, SAP_FP64, SAP_FP64, SAP_FP64, SAP_WEIGHT_DIAG_DELASSUS,
                    SAP_POINT_MIDPOINT, SAP_INTEGRATE_SAP_EULER},
};

/* a sapOptions filled in directly gets the rules sap_optionsSet applies to text: each
 * knob a valid enum value or within its range; -1 or NaN only where the default
 * leaves the knob to the preset or the scene */
static sapStatus check_struct(const sapOptions* o) {
  sapOptions def;
  sap_optionsDefault(&def);
  for (int i = 0; i < NKEYS; i++) {
    const sapKey* e = &keys[i];
    const char* field = (const char*)o + e->offset;
    const char* dfield = (const char*)&def + e->offset;
    if (e->kind == K_REAL) {
      double x = *(const double*)field;
      if (isnan(x) && isnan(*(const double*)dfield)) continue;
      if (!isfinite(x) || x < e->lo || x > e->hi || (e->lo_open && x == e->lo))
        return sap_fail(SAP_ERR_OPTION, "option %s: %g is out of range %c%g, %g]", e->key, x,
                        e->lo_open ? '(' : '[', e->lo, e->hi);
      continue;
    }
    int x = *(const int*)field;
    if (x == -1 && *(const int*)dfield == -1) continue;
    if (e->kind == K_INT) {
      if (x < e->lo || x > e->hi)
        return sap_fail(SAP_ERR_OPTION, "option %s: %d is out of range [%g, %g]", e->key, x, e->lo, e->hi);
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

int sap_optionsDescribe(const sapOptions* o, char* buf, int nbuf) {
  int n = 0;
  if (!buf) nbuf = 0;
  if (nbuf > 0) buf[0] = 0;
  if (!o) return 0;
  for (int i = 0; i < NKEYS; i++) {
    const sapKey* e = &keys[i];
    const char* field = (const char*)o + e->offset;
    char v[64];
    if (e->kind == K_ENUM) {
      int x = *(const int*)field;
      snprintf(v, sizeof(v), "%s", x < 0 ? "preset" : canonical_name(e->names, x));
    } else if (e->kind == K_INT) {
      snprintf(v, sizeof(v), "%d", *(const int*)field);
    } else {
      snprintf(v, sizeof(v), "%.6g", *(const double*)field);
    }
    append(buf, nbuf, &n, "%s=%s\n", e->key, v);
  }
  return n;
}

/* name of an enum value of a knob, for logs: sap_optionName("line_search", 1) */
const char* sapo_valueName(const char* key, int value);
const char* sapo_valueName(const char* key, int value) {
  for (int i = 0; i < NKEYS; i++)
    if (!strcmp(keys[i].key, key) && keys[i].kind == K_ENUM) return canonical_name(keys[i].names, value);
  return "?";
}
