/* Per-world parameters (domain randomization): sap_setParam / sap_getParam /
 * sap_resetParam over all worlds or a subset. A world's override lives in a table
 * nworld x size allocated at the parameter's first override (sapModel.world_*, or the
 * batch's wp_* inputs for those read on the host only); bit SAP_WO_* of
 * world_override[w] says that world w reads its row (kernels/world_view.h). Geom
 * friction, stiffness and dissipation are inputs of the candidate pairs' material, which
 * is recombined per world with the loader's rules (host/model_load.c combine_geoms,
 * contact_coefficients; host/collision.c sapc_pairMaterial; the harmonic friction of
 * host/sim.c apply_material). Values are checked first and nothing changes when one is
 * bad. Reference: MuJoCo Warp's batched model fields (mjx.Model with a leading world
 * axis on the randomized fields), MuJoCo's compiler checks of mass and inertia. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "model.h"
#include "sim.h"
#include "../kernels/collision.h"
#include "../kernels/world_view.h"

static const char* const param_names[SAP_NPARAM] = {
    "body_mass", "body_inertia", "geom_friction", "geom_k", "geom_taud", "actuator_gain",
    "actuator_bias", "actuator_kp", "actuator_kv", "dof_damping", "dof_armature",
    "dof_frictionloss", "gravity"};

/* where a parameter lives: its per-world table, override bit, values per world, the
 * model's values, the element kind and values per element */
typedef struct {
  double** table;
  unsigned bit;
  int size;
  const double* model;
  const char* kind;  /* "body", "geom", "actuator", "dof", "" (gravity) */
  int per;           /* values per element */
} paramSlot;

static paramSlot slot(sapSim* s, sapParam p) {
  sapModel* m = s->m;
  paramSlot r = {NULL, 0, 0, NULL, "", 1};
  switch (p) {
    case SAP_PARAM_BODY_MASS: r = (paramSlot){&m->world_body_mass, SAP_WO_BODY_MASS, m->nbody, m->body_mass, "body", 1}; break;
    case SAP_PARAM_BODY_INERTIA: r = (paramSlot){&m->world_body_inertia, SAP_WO_BODY_INERTIA, 3 * m->nbody, m->body_inertia, "body", 3}; break;
    case SAP_PARAM_GEOM_FRICTION: r = (paramSlot){&s->wp_geom_friction, SAP_WO_GEOM_FRICTION, 3 * m->ngeom, m->geom_friction, "geom", 3}; break;
    case SAP_PARAM_GEOM_K: r = (paramSlot){&m->world_geom_k, SAP_WO_GEOM_K, m->ngeom, m->geom_k, "geom", 1}; break;
    case SAP_PARAM_GEOM_TAUD: r = (paramSlot){&s->wp_geom_taud, SAP_WO_GEOM_TAUD, m->ngeom, m->geom_taud, "geom", 1}; break;
    case SAP_PARAM_ACTUATOR_GAIN: r = (paramSlot){&m->world_actuator_gain, SAP_WO_ACTUATOR_GAIN, m->nu, m->actuator_gain, "actuator", 1}; break;
    case SAP_PARAM_ACTUATOR_BIAS: r = (paramSlot){&m->world_actuator_bias, SAP_WO_ACTUATOR_BIAS, m->nu, m->actuator_bias, "actuator", 1}; break;
    case SAP_PARAM_ACTUATOR_KP: r = (paramSlot){&m->world_actuator_kp, SAP_WO_ACTUATOR_KP, m->nu, m->actuator_kp, "actuator", 1}; break;
    case SAP_PARAM_ACTUATOR_KV: r = (paramSlot){&m->world_actuator_kv, SAP_WO_ACTUATOR_KV, m->nu, m->actuator_kv, "actuator", 1}; break;
    case SAP_PARAM_DOF_DAMPING: r = (paramSlot){&m->world_dof_damping, SAP_WO_DOF_DAMPING, m->nv, m->dof_damping, "dof", 1}; break;
    case SAP_PARAM_DOF_ARMATURE: r = (paramSlot){&m->world_dof_armature, SAP_WO_DOF_ARMATURE, m->nv, m->dof_armature, "dof", 1}; break;
    case SAP_PARAM_DOF_FRICTIONLOSS: r = (paramSlot){&m->world_dof_frictionloss, SAP_WO_DOF_FRICTIONLOSS, m->nv, m->dof_frictionloss, "dof", 1}; break;
    case SAP_PARAM_GRAVITY: r = (paramSlot){&m->world_gravity, SAP_WO_GRAVITY, 3, m->gravity, "", 3}; break;
    default: break;
  }
  return r;
}

const char* sap_paramName(sapParam p) { return (unsigned)p < SAP_NPARAM ? param_names[p] : "?"; }

int sap_paramFind(const char* name) {
  for (int p = 0; name && p < SAP_NPARAM; p++)
    if (!strcmp(name, param_names[p])) return p;
  char list[512] = "";
  for (int p = 0; p < SAP_NPARAM; p++) {
    strncat(list, param_names[p], sizeof(list) - strlen(list) - 1);
    if (p + 1 < SAP_NPARAM) strncat(list, ", ", sizeof(list) - strlen(list) - 1);
  }
  sap_fail(SAP_ERR_ARG, "unknown per-world parameter '%s' (parameters: %s)", name ? name : "(null)", list);
  return -1;
}

int sap_paramSize(const sapSim* s, sapParam p) {
  if (!s || (unsigned)p >= SAP_NPARAM) return 0;
  return slot((sapSim*)s, p).size;
}

int sap_paramOverridden(const sapSim* s, sapParam p, int w) {
  if (!s || (unsigned)p >= SAP_NPARAM || w < 0 || w >= s->d.nworld || !s->m->world_override) return 0;
  return (s->m->world_override[w] & slot((sapSim*)s, p).bit) != 0;
}

/* "body 'torso'", "body 3" (unnamed), "joint 'hip' (dof 4)", "geom 'floor'" */
static void element_name(const sapModel* m, const char* kind, int i, char* out, size_t n) {
  const int* adr = !strcmp(kind, "body") ? m->name_bodyadr : !strcmp(kind, "geom") ? m->name_geomadr
                   : !strcmp(kind, "actuator") ? m->name_actuatoradr : NULL;
  if (!strcmp(kind, "dof")) {
    const char* j = sapm_name(m, m->name_jntadr, m->dof_jntid[i]);
    if (*j) snprintf(out, n, "dof %d (joint '%s')", i, j);
    else snprintf(out, n, "dof %d", i);
    return;
  }
  const char* name = adr ? sapm_name(m, adr, i) : "";
  if (*name) snprintf(out, n, "%s '%s'", kind, name);
  else snprintf(out, n, "%s %d", kind, i);
}

/* p: a parameter, or -1 (every one: sap_resetParam) */
static sapStatus check_worlds(const sapSim* s, const char* fn, int p, const int* worlds, int n) {
  if (p < -1 || p >= SAP_NPARAM)
    return sap_fail(SAP_ERR_ARG, "%s: unknown per-world parameter %d (0..%d)", fn, p, SAP_NPARAM - 1);
  const char* what = p < 0 ? "(every parameter)" : param_names[p];
  if (n < 0 || (!worlds && n != s->d.nworld))
    return sap_fail(SAP_ERR_ARG, "%s %s: with worlds == NULL, n must equal nworld (%d), got %d", fn,
                    what, s->d.nworld, n);
  if (worlds)
    for (int i = 0; i < n; i++)
      if (worlds[i] < 0 || worlds[i] >= s->d.nworld)
        return sap_fail(SAP_ERR_ARG, "%s %s: world id %d out of range [0, %d)", fn, what, worlds[i],
                        s->d.nworld);
  return SAP_OK;
}

/* the value ranges: x is one element's values (per of them) */
static const char* bad_value(sapParam p, const double* x, int per) {
  for (int k = 0; k < per; k++)
    if (!isfinite(x[k])) return "is not finite";
  switch (p) {
    case SAP_PARAM_BODY_MASS:
    case SAP_PARAM_GEOM_FRICTION:
    case SAP_PARAM_ACTUATOR_KP:
    case SAP_PARAM_ACTUATOR_KV:
    case SAP_PARAM_DOF_DAMPING:
    case SAP_PARAM_DOF_ARMATURE:
    case SAP_PARAM_DOF_FRICTIONLOSS:
      for (int k = 0; k < per; k++)
        if (x[k] < 0) return "is negative";
      return NULL;
    case SAP_PARAM_BODY_INERTIA: {
      for (int k = 0; k < 3; k++)
        if (x[k] < 0) return "has a negative principal moment";
      /* MuJoCo's compiler: A + B >= C for every ordering (a rigid body's moments) */
      double tol = 1e-12 * (x[0] + x[1] + x[2]);
      for (int k = 0; k < 3; k++)
        if (x[k] + x[(k + 1) % 3] < x[(k + 2) % 3] - tol)
          return "violates the triangle inequality (a + b >= c for every ordering of the moments)";
      return NULL;
    }
    case SAP_PARAM_GEOM_K:
      return x[0] > 0 && x[0] <= 1e20 ? NULL : "is out of range (0, 1e20]";
    case SAP_PARAM_GEOM_TAUD:
      return x[0] >= 0 && x[0] <= 1e3 ? NULL : "is out of range [0, 1000]";
    default: return NULL;  /* gains, bias, gravity: any finite value */
  }
}

static void print_values(const double* x, int per, char* out, size_t n) {
  if (per == 1) snprintf(out, n, "%g", x[0]);
  else snprintf(out, n, "(%g, %g, %g)", x[0], x[1], x[2]);
}

/* a table of nworld x size doubles, allocated on first use */
static sapStatus ensure_table(sapSim* s, double** t, int size, const char* what) {
  if (*t || size == 0) return SAP_OK;
  size_t bytes = sizeof(double) * (size_t)s->d.nworld * (size_t)size;
  *t = (double*)malloc(bytes ? bytes : 1);
  if (!*t) return sap_fail(SAP_ERR_MEMORY, "sap_setParam %s: cannot allocate %.1f MB for the per-world table",
                           what, bytes / 1e6);
  return SAP_OK;
}

/* world w's values of parameter p (the row or the model's) */
static const double* values_in_force(sapSim* s, sapParam p, int w) {
  paramSlot q = slot(s, p);
  int own = s->m->world_override && (s->m->world_override[w] & q.bit) && *q.table;
  return own ? *q.table + (size_t)w * q.size : q.model;
}

/* world w's candidate pairs from its geoms' friction, k and tau_d, as the loader
 * combines them (and option friction_combine); no geom override: back to the model's */
static void recombine_pairs(sapSim* s, int w) {
  sapModel* m = s->m;
  unsigned* bits = m->world_override + w;
  const unsigned geom_bits = SAP_WO_GEOM_FRICTION | SAP_WO_GEOM_K | SAP_WO_GEOM_TAUD;
  if (!(*bits & geom_bits) || m->npair_max == 0) {
    *bits &= ~(unsigned)SAP_WO_PAIRS;
    return;
  }
  const double* fr = values_in_force(s, SAP_PARAM_GEOM_FRICTION, w);
  const double* gk = values_in_force(s, SAP_PARAM_GEOM_K, w);
  const double* gd = values_in_force(s, SAP_PARAM_GEOM_TAUD, w);
  size_t row = (size_t)w * m->npair_max;
  double *mu = m->world_pair_mu + row, *tor = m->world_pair_torsion + row, *rol = m->world_pair_rolling + row;
  double *pk = m->world_pair_k + row, *pd = m->world_pair_taud + row;
  const double minmu = 1e-5;  /* MuJoCo's mjMINMU, as contact_coefficients */
  for (int p = 0; p < m->npair_max; p++) {
    int g0 = m->pair_geom[2 * p], g1 = m->pair_geom[2 * p + 1], c = m->pair_condim[p];
    pk[p] = sapw_combineK(gk[g0], gk[g1]);
    pd[p] = gd[g0] + gd[g1];
    if (m->pair_explicit[p] || m->contact_override) {  /* an explicit <pair> or the override keeps its friction */
      mu[p] = m->pair_mu[p];
      tor[p] = m->pair_torsion[p];
      rol[p] = m->pair_rolling[p];
      continue;
    }
    const double *f0 = fr + 3 * g0, *f1 = fr + 3 * g1;
    int p0 = m->geom_priority[g0], p1 = m->geom_priority[g1];
    double f[3];
    for (int k = 0; k < 3; k++) f[k] = p0 > p1 ? f0[k] : p1 > p0 ? f1[k] : fmax(f0[k], f1[k]);
    double slide = c == 1 ? 0 : f[0];
    if (c != 1 && s->opt.friction_combine == SAP_FRICTION_HARMONIC)
      slide = f0[0] + f1[0] > 0 ? 2 * f0[0] * f1[0] / (f0[0] + f1[0]) : 0;
    mu[p] = c >= 4 ? fmax(slide, minmu) : slide;
    tor[p] = c >= 4 ? fmax(f[1], minmu) : 0;
    rol[p] = c == 6 ? fmax(f[2], minmu) : 0;
  }
  *bits |= SAP_WO_PAIRS;
}

static int is_geom_param(sapParam p) {
  return p == SAP_PARAM_GEOM_FRICTION || p == SAP_PARAM_GEOM_K || p == SAP_PARAM_GEOM_TAUD;
}

/* the override bits and, for geom parameters, the pair tables */
static sapStatus ensure_common(sapSim* s, sapParam p) {
  sapModel* m = s->m;
  if (!m->world_override) {
    m->world_override = (unsigned*)calloc((size_t)s->d.nworld, sizeof(unsigned));
    if (!m->world_override)
      return sap_fail(SAP_ERR_MEMORY, "sap_setParam %s: cannot allocate the override flags", param_names[p]);
  }
  if (!is_geom_param(p)) return SAP_OK;
  sapStatus st;
  double** pairs[5] = {&m->world_pair_mu, &m->world_pair_torsion, &m->world_pair_rolling, &m->world_pair_k,
                       &m->world_pair_taud};
  for (int i = 0; i < 5; i++)
    if ((st = ensure_table(s, pairs[i], m->npair_max, param_names[p])) != SAP_OK) return st;
  return SAP_OK;
}

sapStatus sap_setParam(sapSim* s, sapParam p, const int* worlds, int n, const double* buf) {
  if (!s || (!buf && n > 0)) return sap_fail(SAP_ERR_ARG, "sap_setParam: null argument");
  if (p == (sapParam)-1) return sap_fail(SAP_ERR_ARG, "sap_setParam: unknown per-world parameter -1");
  sapStatus st = check_worlds(s, "sap_setParam", (int)p, worlds, n);
  if (st != SAP_OK) return st;
  paramSlot q = slot(s, p);
  int nel = q.size / q.per;
  /* every value first: nothing changes when one is bad */
  for (int i = 0; i < n; i++)
    for (int e = 0; e < nel; e++) {
      const double* x = buf + (size_t)i * q.size + (size_t)e * q.per;
      const char* why = bad_value(p, x, q.per);
      /* an explicit law's kp, kv are MuJoCo's -bias[1], -bias[2], of either sign (anti-springs,
       * negative damping); a drive's must be >= 0 */
      if (why && (p == SAP_PARAM_ACTUATOR_KP || p == SAP_PARAM_ACTUATOR_KV) && isfinite(x[0]) &&
          (s->m->actuator_kind[e] == SAP_ACT_GENERAL || s->m->actuator_kind[e] == SAP_ACT_MUSCLE))
        why = NULL;
      /* the solver's dry-friction rows are counted at load (nsolve_rows): a world can
       * change a dof's frictionloss, or remove it, but not add one */
      if (!why && p == SAP_PARAM_DOF_FRICTIONLOSS && x[0] > 0 && !(s->m->dof_frictionloss[e] > 0))
        why = "is positive on a dof without frictionloss in the model (sapsim sizes the solver's dry-friction "
              "rows at load: give the joint a frictionloss in the scene to randomize it)";
      if (!why) continue;
      char who[200] = "", val[96];
      if (*q.kind) element_name(s->m, q.kind, e, who, sizeof(who));
      print_values(x, q.per, val, sizeof(val));
      return sap_fail(strstr(why, "not finite") ? SAP_ERR_NONFINITE : SAP_ERR_ARG,
                      "sap_setParam %s: world %d%s%s: value %s %s", param_names[p], worlds ? worlds[i] : i,
                      *who ? ", " : "", who, val, why);
    }
  if (n == 0) return SAP_OK;
  if ((st = ensure_common(s, p)) != SAP_OK) return st;
  if ((st = ensure_table(s, q.table, q.size, param_names[p])) != SAP_OK) return st;
  for (int i = 0; i < n; i++) {
    int w = worlds ? worlds[i] : i;
    memcpy(*q.table + (size_t)w * q.size, buf + (size_t)i * q.size, sizeof(double) * q.size);
    s->m->world_override[w] |= q.bit;
    if (is_geom_param(p)) recombine_pairs(s, w);
  }
  return sapb_worldTables(s);
}

sapStatus sap_getParam(sapSim* s, sapParam p, const int* worlds, int n, double* buf) {
  if (!s || (!buf && n > 0)) return sap_fail(SAP_ERR_ARG, "sap_getParam: null argument");
  if (p == (sapParam)-1) return sap_fail(SAP_ERR_ARG, "sap_getParam: unknown per-world parameter -1");
  sapStatus st = check_worlds(s, "sap_getParam", (int)p, worlds, n);
  if (st != SAP_OK) return st;
  int size = slot(s, p).size;
  for (int i = 0; i < n; i++)
    memcpy(buf + (size_t)i * size, values_in_force(s, p, worlds ? worlds[i] : i), sizeof(double) * size);
  return SAP_OK;
}

sapStatus sap_resetParam(sapSim* s, int p, const int* worlds, int n) {
  if (!s) return sap_fail(SAP_ERR_ARG, "sap_resetParam: null sim");
  sapStatus st = check_worlds(s, "sap_resetParam", p, worlds, n);
  if (st != SAP_OK) return st;
  if (!s->m->world_override) return SAP_OK;
  unsigned clear = 0;
  for (int q = 0; q < SAP_NPARAM; q++)
    if (p < 0 || q == p) clear |= slot(s, (sapParam)q).bit;
  for (int i = 0; i < n; i++) {
    int w = worlds ? worlds[i] : i;
    unsigned before = s->m->world_override[w];
    s->m->world_override[w] &= ~clear;
    if ((before & clear) & (SAP_WO_GEOM_FRICTION | SAP_WO_GEOM_K | SAP_WO_GEOM_TAUD)) recombine_pairs(s, w);
  }
  return sapb_worldTables(s);
}

void sapm_worldParamsFree(sapSim* s) {
  sapModel* m = s->m;
  free(m->world_override);
  m->world_override = NULL;
#define X(name, bit, count) \
  free(m->world_##name);    \
  m->world_##name = NULL;
  SAP_WORLD_TABLES(X, m)
#undef X
  free(m->world_gravity);
  m->world_gravity = NULL;
  free(s->wp_geom_friction);
  free(s->wp_geom_taud);
  s->wp_geom_friction = s->wp_geom_taud = NULL;
}
