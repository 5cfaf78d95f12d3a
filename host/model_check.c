/* Scene values checked at the door: every real number sapsim copies from the
 * compiled model is finite, and each quantity with a physical sign or range has it.
 * MuJoCo compiles NaN positions, negative armature or a negative timestep with at
 * most a warning on stdout; sapsim refuses them here, naming the element and the
 * field, with the same ranges the options apply to the same quantities
 * (host/options.c: timestep (0, 1], contact_k (0, 1e20], contact_taud [0, 1e3],
 * contact_margin [0, 10]). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model.h"
#include "model_fields.h"
#include "sim.h"

/* "body 'torso'", "joint 3", ... for element i of the array `field` */
static void element_name(const sapModel* m, const char* field, long i, char* out, size_t n) {
  static const struct { const char* prefix; const char* kind; } kinds[] = {
      {"body_", "body"}, {"jnt_", "joint"}, {"dof_", "dof"}, {"geom_", "geom"},
      {"mesh_", "mesh vertex"}, {"actuator_", "actuator"}, {"tendon_", "tendon"},
      {"wrap_", "tendon wrap"}, {"key_", "keyframe"}, {"qpos", "coordinate"},
      {"sensor_", "sensor"}};
  const char* kind = "element";
  for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
    if (!strncmp(field, kinds[k].prefix, strlen(kinds[k].prefix))) kind = kinds[k].kind;
  const int* adr = !strcmp(kind, "body") ? m->name_bodyadr : !strcmp(kind, "joint") ? m->name_jntadr
                   : !strcmp(kind, "geom") ? m->name_geomadr : !strcmp(kind, "actuator") ? m->name_actuatoradr
                   : !strcmp(kind, "keyframe") ? m->name_keyadr
                   : !strcmp(kind, "sensor") ? m->name_sensoradr : NULL;
  if (!strcmp(kind, "dof")) {
    snprintf(out, n, "joint '%s'", sapm_name(m, m->name_jntadr, m->dof_jntid[i]));
    return;
  }
  if (adr) snprintf(out, n, "%s '%s'", kind, sapm_name(m, adr, (int)i));
  else snprintf(out, n, "%s %ld", kind, i);
}

/* elements of a field: the count of its prefix's kind */
static long elements(const sapModel* m, const char* field) {
  if (!strncmp(field, "body_", 5)) return m->nbody;
  if (!strncmp(field, "jnt_", 4)) return m->njnt;
  if (!strncmp(field, "dof_", 4)) return m->nv;
  if (!strncmp(field, "geom_", 5)) return m->ngeom;
  if (!strncmp(field, "mesh_vert", 9)) return m->nmeshvert;
  if (!strncmp(field, "mesh_hullvert", 13)) return m->nmeshhull;
  if (!strncmp(field, "hfield_", 7)) return m->nhfield;
  if (!strncmp(field, "actuator_", 9)) return m->nu;
  if (!strncmp(field, "tendon_", 7)) return m->ntendon;
  if (!strncmp(field, "wrap_", 5)) return m->nwrap;
  if (!strncmp(field, "key_", 4)) return m->nkey;
  if (!strncmp(field, "sensor_", 7)) return m->nsensor;
  return 0;
}

static sapStatus nonfinite(const sapModel* m, const char* path, const char* field, const double* x,
                           long count) {
  for (long i = 0; i < count; i++) {
    if (isfinite(x[i])) continue;
    long ne = elements(m, field), per = ne > 0 ? count / ne : 1;
    char who[160];
    element_name(m, field, per > 0 ? i / per : i, who, sizeof(who));
    return sap_fail(SAP_ERR_SCENE, "%s: %s has a non-finite %s (%g)", path, who, field, x[i]);
  }
  return SAP_OK;
}

/* x[i * stride] >= 0 for each element, else fail naming it */
static sapStatus negative(const sapModel* m, const char* path, const char* field, const double* x,
                          int n, int stride) {
  for (int i = 0; i < n * stride; i++) {
    if (x[i] >= 0) continue;
    char who[160];
    element_name(m, field, i / stride, who, sizeof(who));
    return sap_fail(SAP_ERR_SCENE, "%s: %s has a negative %s (%g)", path, who, field, x[i]);
  }
  return SAP_OK;
}

/* lo <= hi for each limited element */
static sapStatus range_order(const sapModel* m, const char* path, const char* field, const int* on,
                             const double* r, int n) {
  for (int i = 0; i < n; i++) {
    if (!on[i] || r[2 * i] <= r[2 * i + 1]) continue;
    char who[160];
    element_name(m, field, i, who, sizeof(who));
    return sap_fail(SAP_ERR_SCENE, "%s: %s has %s [%g, %g] with lower > upper", path, who, field,
                    r[2 * i], r[2 * i + 1]);
  }
  return SAP_OK;
}

sapStatus sapm_checkValues(const sapModel* m, const char* path) {
  sapStatus st;
  if (!(m->timestep > 0 && m->timestep <= 1))
    return sap_fail(SAP_ERR_SCENE, "%s: option timestep %g is out of range (0, 1]", path, m->timestep);
  for (int k = 0; k < 3; k++)
    if (!isfinite(m->gravity[k]))
      return sap_fail(SAP_ERR_SCENE, "%s: option gravity has a non-finite component (%g)", path,
                      m->gravity[k]);
  if (!(m->fluid_density >= 0 && m->fluid_density < INFINITY && m->fluid_viscosity >= 0 &&
        m->fluid_viscosity < INFINITY))
    return sap_fail(SAP_ERR_SCENE, "%s: option density %g and viscosity %g must be finite and >= 0", path,
                    m->fluid_density, m->fluid_viscosity);
  for (int k = 0; k < 3; k++)
    if (!isfinite(m->wind[k]))
      return sap_fail(SAP_ERR_SCENE, "%s: option wind has a non-finite component (%g)", path, m->wind[k]);
  for (int k = 0; k < 3; k++)
    if (!isfinite(m->magnetic[k]))
      return sap_fail(SAP_ERR_SCENE, "%s: option magnetic has a non-finite component (%g)", path,
                      m->magnetic[k]);
  if (!(m->contact_k > 0 && m->contact_k <= 1e20))
    return sap_fail(SAP_ERR_SCENE, "%s: custom numeric sap_contact_k %g is out of range (0, 1e20]",
                    path, m->contact_k);
  if (!(m->contact_taud >= 0 && m->contact_taud <= 1e3))
    return sap_fail(SAP_ERR_SCENE, "%s: custom numeric sap_contact_taud %g is out of range [0, 1000]",
                    path, m->contact_taud);
  if (!(m->contact_margin >= 0 && m->contact_margin <= 10))
    return sap_fail(SAP_ERR_SCENE, "%s: custom numeric sap_contact_margin %g is out of range [0, 10]",
                    path, m->contact_margin);

  /* every real array: finite */
#define X(type, name, count)                                                              \
  if (!strcmp(#type, "double") &&                                                         \
      (st = nonfinite(m, path, #name, (const double*)(const void*)m->name, (long)(count))) != SAP_OK) \
    return st;
  SAP_MODEL_FIELDS(X, m)
#undef X

  /* signs and ranges */
  if ((st = negative(m, path, "body_mass", m->body_mass, m->nbody, 1)) != SAP_OK) return st;
  if ((st = negative(m, path, "body_inertia", m->body_inertia, m->nbody, 3)) != SAP_OK) return st;
  if ((st = negative(m, path, "dof_armature", m->dof_armature, m->nv, 1)) != SAP_OK) return st;
  if ((st = negative(m, path, "dof_damping", m->dof_damping, m->nv, 1)) != SAP_OK) return st;
  if ((st = negative(m, path, "jnt_stiffness", m->jnt_stiffness, m->njnt, 1)) != SAP_OK) return st;
  if ((st = range_order(m, path, "jnt_range", m->jnt_limited, m->jnt_range, m->njnt)) != SAP_OK) return st;
  if ((st = range_order(m, path, "tendon_range", m->tendon_limited, m->tendon_range, m->ntendon)) != SAP_OK)
    return st;
  if ((st = range_order(m, path, "actuator_ctrlrange", m->actuator_ctrllimited, m->actuator_ctrlrange,
                        m->nu)) != SAP_OK)
    return st;
  if ((st = range_order(m, path, "actuator_forcerange", m->actuator_forcelimited,
                        m->actuator_forcerange, m->nu)) != SAP_OK)
    return st;
  return SAP_OK;
}
