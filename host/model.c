/* sapModel storage: one allocation carved by the field table (model_fields.h),
 * copies with rebased pointers, name look-ups. */
#include <stdlib.h>
#include <string.h>

#include "model_fields.h"
#include "model.h"
#include "sim.h"

#define SAP_ALIGN(n) (((n) + 63ULL) & ~63ULL)

unsigned long long sapm_bytes(const sapModel* m) {
  unsigned long long n = 0;
#define X(type, name, count) n += SAP_ALIGN(sizeof(type) * (unsigned long long)(count));
  SAP_MODEL_FIELDS(X, m)
#undef X
  return n;
}

void sapm_carve(sapModel* m, void* buffer) {
  unsigned char* p = (unsigned char*)buffer;
#define X(type, name, count)                                            \
  m->name = (type*)p;                                                   \
  p += SAP_ALIGN(sizeof(type) * (unsigned long long)(count));
  SAP_MODEL_FIELDS(X, m)
#undef X
  m->buffer = buffer;
  m->nbuffer = sapm_bytes(m);
}

sapStatus sapm_alloc(sapModel* m) {
  unsigned long long n = sapm_bytes(m);
  void* buf = calloc(1, n ? n : 1);
  if (!buf) return sap_fail(SAP_ERR_MEMORY, "model: cannot allocate %llu bytes", n);
  sapm_carve(m, buf);
  return SAP_OK;
}

sapStatus sapm_copy(const sapModel* src, sapModel** out) {
  sapModel* m = (sapModel*)malloc(sizeof(sapModel));
  if (!m) return sap_fail(SAP_ERR_MEMORY, "model: cannot allocate");
  *m = *src;
  sapStatus st = sapm_alloc(m);
  if (st != SAP_OK) {
    free(m);
    return st;
  }
  memcpy(m->buffer, src->buffer, src->nbuffer);
  *out = m;
  return SAP_OK;
}

void sap_freeModel(sapModel* m) {
  if (!m) return;
  free(m->buffer);
  free(m);
}

const char* sap_modelNotes(const sapModel* m) {
  if (m && m->cone_pyramidal && m->npair_max > 0)
    return "note: the scene uses MuJoCo's pyramidal friction cone (cone=\"pyramidal\", MuJoCo's default); "
           "sapsim solves the exact elliptic Coulomb cone (SAP's regularized cone) instead\n";
  return "";
}

const char* sapm_name(const sapModel* m, const int* adr, int id) {
  if (!adr || id < 0) return "";
  return m->names + adr[id];
}

int sapm_findName(const sapModel* m, const int* adr, int n, const char* name) {
  for (int i = 0; i < n; i++)
    if (!strcmp(m->names + adr[i], name)) return i;
  return -1;
}
