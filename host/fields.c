/* Named access to the model's and the batch's arrays for bindings (python/): the
 * X-macro tables (model_fields.h, data_fields.h) give every array's name, element
 * type and count, so a binding finds new fields by name instead of mirroring the
 * structs. Also the check of inputs a binding writes in place (ctrl, qfrc_applied, xfrc_applied). */
#include <math.h>
#include <string.h>

#include "data_fields.h"
#include "model_fields.h"
#include "sim.h"

/* element type from the type's spelling in a field table */
static sapArrayType type_code(const char* type) {
  if (!strcmp(type, "double")) return SAP_ARRAY_F64;
  if (!strcmp(type, "int")) return SAP_ARRAY_I32;
  if (!strcmp(type, "float")) return SAP_ARRAY_F32;
  return SAP_ARRAY_CHAR;
}

const void* sap_modelArray(const sapModel* m, const char* name, int* count, sapArrayType* type) {
  if (!m || !name || !count || !type) {
    sap_fail(SAP_ERR_ARG, "sap_modelArray: null argument");
    return NULL;
  }
  /* model-wide scalars and vectors outside the table */
  struct { const char* name; const double* ptr; int n; } scalars[] = {
      {"timestep", &m->timestep, 1}, {"gravity", m->gravity, 3}, {"magnetic", m->magnetic, 3},
      {"fluid_density", &m->fluid_density, 1}, {"fluid_viscosity", &m->fluid_viscosity, 1}, {"wind", m->wind, 3}, {"contact_k", &m->contact_k, 1},
      {"contact_taud", &m->contact_taud, 1}, {"contact_margin", &m->contact_margin, 1}};
  for (size_t i = 0; i < sizeof(scalars) / sizeof(scalars[0]); i++)
    if (!strcmp(name, scalars[i].name)) {
      *count = scalars[i].n;
      *type = SAP_ARRAY_F64;
      return scalars[i].ptr;
    }
#define X(ctype, field, n)                \
  if (!strcmp(name, #field)) {            \
    *count = (int)(n);                    \
    *type = type_code(#ctype);            \
    return m->field;                      \
  }
  SAP_MODEL_FIELDS(X, m)
#undef X
  sap_fail(SAP_ERR_ARG, "sap_modelArray: the model has no array '%s'", name);
  return NULL;
}

void* sap_dataArray(const sapSim* s, const char* name, int* count, sapArrayType* type) {
  if (!s || !name || !count || !type) {
    sap_fail(SAP_ERR_ARG, "sap_dataArray: null argument");
    return NULL;
  }
#define X(ctype, field, n)                \
  if (!strcmp(name, #field)) {            \
    *count = (int)(n);                    \
    *type = type_code(#ctype);            \
    return s->d.field;                    \
  }
  SAP_DATA_FIELDS(X, s->m, s->d.ncon_max)
#undef X
  sap_fail(SAP_ERR_ARG, "sap_dataArray: the batch has no array '%s'", name);
  return NULL;
}

void* sap_deviceArray(const sapSim* s, const char* name, int* count, sapArrayType* type) {
  if (!s || !name || !count || !type) {
    sap_fail(SAP_ERR_ARG, "sap_deviceArray: null argument");
    return NULL;
  }
  if (!s->on_gpu) {
    sap_fail(SAP_ERR_ARG, "sap_deviceArray: the batch runs on the CPU (%s); its arrays are host "
             "memory: use sap_dataArray", s->device_name);
    return NULL;
  }
  /* the device twin has the host data's layout: the same field, the twin's base */
#define X(ctype, field, n)                \
  if (!strcmp(name, #field)) {            \
    *count = (int)(n);                    \
    *type = type_code(#ctype);            \
    return s->gpu.d.field;                   \
  }
  SAP_DATA_FIELDS(X, s->m, s->d.ncon_max)
#undef X
  sap_fail(SAP_ERR_ARG, "sap_deviceArray: the batch has no array '%s'", name);
  return NULL;
}

/* first non-finite value of a (nworld x n) input, as a failure naming it */
static sapStatus check_finite(const double* x, int nworld, int n, const char* field) {
  for (long i = 0; i < (long)nworld * n; i++)
    if (!isfinite(x[i]))
      return sap_fail(SAP_ERR_NONFINITE, "%s of world %ld, index %ld is not finite (%g); no world "
                      "was stepped", field, i / n, i % n, x[i]);
  return SAP_OK;
}

sapStatus sap_checkInputs(const sapSim* s) {
  if (!s) return sap_fail(SAP_ERR_ARG, "sap_checkInputs: null sim");
  /* on the GPU the device copies are written by sap_set only, which validates */
  if (s->on_gpu) return SAP_OK;
  sapStatus st = check_finite(s->d.ctrl, s->d.nworld, s->m->nu, "ctrl");
  if (st == SAP_OK) st = check_finite(s->d.qfrc_applied, s->d.nworld, s->m->nv, "qfrc_applied");
  return st != SAP_OK ? st : check_finite(s->d.xfrc_applied, s->d.nworld, 6 * s->m->nbody, "xfrc_applied");
}
