/* The C API functions bindings use (host/fields.c, host/model_xml.c): named arrays
 * against the structs' own fields, the in-place input check, loading a scene from
 * text against loading the same file. Reference: include/sapsim/sapsim.h. */
#include <stdio.h>

#include "fixture.h"

static sapSim* make_sim(sapModel** m, int nworld) {
  *m = fx_model("scenes/ant.xml");
  return fx_simModel(*m, nworld, NULL);
}

/* every looked-up array is the struct's field, with the table's count and type */
static void test_named_arrays(void) {
  sapModel* m = NULL;
  sapSim* s = make_sim(&m, 3);
  if (!s) return;
  const sapData* d = sap_data(s);
  const sapModel* sm = sap_model(s);
  int n = -1;
  sapArrayType t = SAP_ARRAY_CHAR;
  CHECK(sap_dataArray(s, "qpos", &n, &t) == d->qpos && n == sm->nq && t == SAP_ARRAY_F64, "qpos");
  CHECK(sap_dataArray(s, "ctrl", &n, &t) == d->ctrl && n == sm->nu, "ctrl");
  CHECK(sap_dataArray(s, "xquat", &n, &t) == d->xquat && n == 4 * sm->nbody, "xquat");
  CHECK(sap_dataArray(s, "ncon", &n, &t) == d->ncon && n == 1 && t == SAP_ARRAY_I32, "ncon");
  CHECK(sap_dataArray(s, "con_geom", &n, &t) == d->con_geom && n == 2 * d->ncon_max, "con_geom");
  CHECK(sap_dataArray(s, "qposs", &n, &t) == NULL && strstr(sap_lastError(), "no array 'qposs'"),
        "unknown data array: %s", sap_lastError());
  CHECK(sap_modelArray(sm, "body_mass", &n, &t) == sm->body_mass && n == sm->nbody && t == SAP_ARRAY_F64,
        "body_mass");
  CHECK(sap_modelArray(sm, "names", &n, &t) == sm->names && n == sm->nnames && t == SAP_ARRAY_CHAR, "names");
  CHECK(sap_modelArray(sm, "jnt_type", &n, &t) == sm->jnt_type && t == SAP_ARRAY_I32, "jnt_type");
  const double* g = (const double*)sap_modelArray(sm, "gravity", &n, &t);
  CHECK(g == sm->gravity && n == 3 && g[2] == -9.81, "gravity (the MJCF default)");
  const double* h = (const double*)sap_modelArray(sm, "timestep", &n, &t);
  CHECK(h && n == 1 && *h == 0.005, "timestep (scenes/ant.xml says 0.005)");
  CHECK(sap_modelArray(sm, "nq", &n, &t) == NULL, "sizes are not arrays");
  CHECK(sap_dataArray(NULL, "qpos", &n, &t) == NULL && sap_modelArray(sm, NULL, &n, &t) == NULL, "nulls");
  sap_free(s);
  sap_freeModel(m);
}

/* ctrl and qfrc_applied written in place: the check names the first bad value */
static void test_check_inputs(void) {
  sapModel* m = NULL;
  sapSim* s = make_sim(&m, 3);
  if (!s) return;
  int nu = 0, nv = 0;
  sapArrayType t;
  double* ctrl = (double*)sap_dataArray(s, "ctrl", &nu, &t);
  double* frc = (double*)sap_dataArray(s, "qfrc_applied", &nv, &t);
  CHECK(sap_checkInputs(s) == SAP_OK, "finite inputs: %s", sap_lastError());
  ctrl[1 * nu + 5] = NAN;
  CHECK(sap_checkInputs(s) == SAP_ERR_NONFINITE &&
        strstr(sap_lastError(), "ctrl of world 1, index 5 is not finite"), "%s", sap_lastError());
  ctrl[1 * nu + 5] = 0;
  frc[2 * nv + 3] = -INFINITY;
  CHECK(sap_checkInputs(s) == SAP_ERR_NONFINITE &&
        strstr(sap_lastError(), "qfrc_applied of world 2, index 3 is not finite (-inf)"), "%s", sap_lastError());
  frc[2 * nv + 3] = 0;
  CHECK(sap_checkInputs(s) == SAP_OK && sap_checkInputs(NULL) == SAP_ERR_ARG, "restored; null");
  sap_free(s);
  sap_freeModel(m);
}

/* the scene's text compiles to the same model as its file */
static void test_load_string(void) {
  FILE* f = fopen("scenes/ant.xml", "rb");
  CHECK(f != NULL, "scenes/ant.xml");
  if (!f) return;
  static char xml[1 << 16];
  size_t n = fread(xml, 1, sizeof(xml) - 1, f);
  fclose(f);
  xml[n] = 0;
  sapModel *a = NULL, *b = NULL;
  CHECK(sap_loadModel("scenes/ant.xml", &a) == SAP_OK, "%s", sap_lastError());
  CHECK(sap_loadModelString(xml, &b) == SAP_OK, "%s", sap_lastError());
  if (a && b) {
    CHECK(a->nq == b->nq && a->nv == b->nv && a->nu == b->nu && a->nbuffer == b->nbuffer, "sizes");
    CHECK(!memcmp(a->buffer, b->buffer, a->nbuffer), "every model array equal");
  }
  sap_freeModel(a);
  sap_freeModel(b);
  sapModel* m = (sapModel*)1;
  CHECK(sap_loadModelString("<mujoco><worldbody>", &m) == SAP_ERR_SCENE && m == NULL &&
        strstr(sap_lastError(), "<xml string>: MuJoCo could not load the scene"), "%s", sap_lastError());
  CHECK(sap_loadModelString("", &m) == SAP_ERR_SCENE && strstr(sap_lastError(), "empty"), "empty");
  CHECK(sap_loadModelString(NULL, &m) == SAP_ERR_ARG, "null");
}

int main(void) {
  RUN(test_named_arrays);
  RUN(test_check_inputs);
  RUN(test_load_string);
  return check_summary("test_bindings");
}
