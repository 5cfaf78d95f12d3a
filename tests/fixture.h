/* Shared test helpers (tests/): a sim from a scene file or from XML text with options
 * given as "key=value" words, a model from XML text, and temporary files that are removed
 * at exit. Failures are CHECK failures that print sap_lastError(), and the helper returns
 * NULL, so a test reads `sapSim* s = fx_sim(...); if (!s) return;`. */
#ifndef SAPSIM_TESTS_FIXTURE_H
#define SAPSIM_TESTS_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "sapsim/sapsim.h"

char* mkdtemp(char* tmpl); /* POSIX 2008 (<stdlib.h> declares it only with feature macros) */

/* ---- temporary files ------------------------------------------------------------- */

#define FX_PATH_MAX 192
static char fx_temp_dir[64];  /* one directory per process, made on first use */
static char** fx_temp_paths;  /* (fx_ntemp) the files named so far, each its own allocation: a
                                 returned path stays valid while later ones are made */
static int fx_ntemp;

/* removes the files and the directory; runs at exit, and may be called before (idempotent) */
static inline void fx_cleanup(void) {
  for (int i = 0; i < fx_ntemp; i++) {
    unlink(fx_temp_paths[i]);
    free(fx_temp_paths[i]);
  }
  free(fx_temp_paths);
  fx_temp_paths = NULL;
  fx_ntemp = 0;
  if (fx_temp_dir[0]) rmdir(fx_temp_dir);
  fx_temp_dir[0] = 0;
}

/* the path of a new temporary file named `name` (e.g. "scene.xml": loaders choose by the
 * suffix) in this process's directory, not yet written; NULL on failure */
static inline const char* fx_tempPath(const char* name) {
  if (!fx_temp_dir[0]) {
    snprintf(fx_temp_dir, sizeof(fx_temp_dir), "/tmp/sapsim_test_XXXXXX");
    if (!mkdtemp(fx_temp_dir)) {
      fx_temp_dir[0] = 0;
      CHECK(0, "fx_tempPath: mkdtemp failed");
      return NULL;
    }
    atexit(fx_cleanup);
  }
  char** more = (char**)realloc(fx_temp_paths, sizeof(fx_temp_paths[0]) * (fx_ntemp + 1));
  if (more) fx_temp_paths = more;
  char* p = more ? (char*)malloc(FX_PATH_MAX) : NULL;
  if (!p || strlen(name) > 100 || strchr(name, '/')) {
    free(p);
    CHECK(0, "fx_tempPath: out of memory or a bad name '%s'", name);
    return NULL;
  }
  int len = snprintf(p, FX_PATH_MAX, "%s/%d_%s", fx_temp_dir, fx_ntemp, name);
  if (len < 0 || len >= FX_PATH_MAX) {
    free(p);
    CHECK(0, "fx_tempPath: the path of '%s' is too long", name);
    return NULL;
  }
  fx_temp_paths[fx_ntemp++] = p;
  return p;
}

/* text written to a new temporary file named `name`; its path, or NULL */
static inline const char* fx_tempFile(const char* name, const char* text) {
  const char* p = fx_tempPath(name);
  if (!p) return NULL;
  FILE* f = fopen(p, "w");
  size_t n = strlen(text);
  int ok = f && fwrite(text, 1, n, f) == n;
  if (f && fclose(f) != 0) ok = 0;
  CHECK(ok, "fx_tempFile: cannot write %s", p);
  return ok ? p : NULL;
}

/* a file's text (malloc'ed), or NULL */
static inline char* fx_readFile(const char* path) {
  FILE* f = fopen(path, "rb");
  CHECK(f != NULL, "fx_readFile: cannot open %s", path);
  if (!f) return NULL;
  size_t cap = 1 << 16, n = 0;
  char* buf = (char*)malloc(cap + 1);
  for (size_t got; buf && (got = fread(buf + n, 1, cap - n, f)) > 0;) {
    n += got;
    if (n == cap) buf = (char*)realloc(buf, (cap *= 2) + 1);
  }
  fclose(f);
  if (buf) buf[n] = 0;
  return buf;
}

/* text with its first `from` replaced by `to`: a new malloc'ed copy (text freed), or text
 * itself (and a failed CHECK) when `from` is absent */
static inline char* fx_subst(char* text, const char* from, const char* to) {
  char* at = text ? strstr(text, from) : NULL;
  CHECK(at != NULL, "fx_subst: '%s' not in the text", from);
  if (!at) return text;
  char* out = (char*)calloc(1, strlen(text) + strlen(to) + 1);
  memcpy(out, text, (size_t)(at - text));
  strcat(out, to);
  strcat(out, at + strlen(from));
  free(text);
  return out;
}

/* the text from the first `a` to the end of the `b` after it removed, in place */
static inline void fx_cut(char* text, const char* a, const char* b) {
  char* p = strstr(text, a);
  char* q = p ? strstr(p, b) : NULL;
  CHECK(p && q, "fx_cut: %s..%s not in the text", a, b);
  if (p && q) memmove(p, q + strlen(b), strlen(q + strlen(b)) + 1);
}

/* ---- models and sims ------------------------------------------------------------- */

/* a scene: XML text when it starts with '<' (after blanks), else a file path */
static inline sapModel* fx_model(const char* scene) {
  if (!scene) return NULL; /* a helper before failed (fx_tempFile) */
  const char* t = scene;
  while (*t == ' ' || *t == '\n' || *t == '\t' || *t == '\r') t++;
  sapModel* m = NULL;
  sapStatus st = *t == '<' ? sap_loadModelString(scene, &m) : sap_loadModel(scene, &m);
  CHECK(st == SAP_OK, "load %.60s: %s", *t == '<' ? "(XML text)" : scene, sap_lastError());
  return st == SAP_OK ? m : NULL;
}

/* options from blank-separated "key=value" words (NULL or "": none) over the defaults with
 * device=cpu; 0 on a bad word (a CHECK failure names it) */
static inline int fx_options(sapOptions* o, const char* opts) {
  sap_optionsDefault(o);
  o->device = SAP_DEVICE_CPU;
  const char* p = opts ? opts : "";
  while (*p) {
    while (*p == ' ') p++;
    size_t n = strcspn(p, " ");
    if (!n) break;
    char word[256];
    if (n >= sizeof(word)) n = sizeof(word) - 1;
    memcpy(word, p, n);
    word[n] = 0;
    p += n;
    if (sap_optionsSetPair(o, word) != SAP_OK) {
      CHECK(0, "option '%s': %s", word, sap_lastError());
      return 0;
    }
  }
  return 1;
}

/* a sim of m with nworld worlds and options o; NULL on failure */
static inline sapSim* fx_simModelWith(const sapModel* m, int nworld, const sapOptions* o) {
  if (!m) return NULL;
  sapSim* s = NULL;
  sapStatus st = sap_create(m, o, nworld, &s);
  CHECK(st == SAP_OK, "sap_create (%d worlds): %s", nworld, sap_lastError());
  return st == SAP_OK ? s : NULL;
}

/* the same with options opts (fx_options) */
static inline sapSim* fx_simModel(const sapModel* m, int nworld, const char* opts) {
  sapOptions o;
  if (!m || !fx_options(&o, opts)) return NULL;
  return fx_simModelWith(m, nworld, &o);
}

/* a sim of a scene (file or XML text, fx_model) with options o; NULL on failure */
static inline sapSim* fx_simWith(const char* scene, int nworld, const sapOptions* o) {
  sapModel* m = fx_model(scene);
  if (!m) return NULL;
  sapSim* s = fx_simModelWith(m, nworld, o);
  sap_freeModel(m);
  return s;
}

/* a sim of a scene (file or XML text, fx_model); NULL on failure */
static inline sapSim* fx_sim(const char* scene, int nworld, const char* opts) {
  sapModel* m = fx_model(scene);
  if (!m) return NULL;
  sapSim* s = fx_simModel(m, nworld, opts);
  sap_freeModel(m);
  return s;
}

/* XML text that sap_loadModelString must refuse with status, its message containing fragment */
/* nstep steps of every world from keyframe 0 (or the model's state), each with controls drawn
 * uniformly from [-1, 1] (check_uniform: the test's seeded stream) */
static inline void fx_stepRandom(sapSim* s, int nstep) {
  const sapModel* m = sap_model(s);
  int nworld = sap_nworld(s);
  sap_reset(s, m->nkey > 0 ? 0 : -1, NULL);
  double* ctrl = (double*)malloc(sizeof(double) * (m->nu + 1) * nworld);
  for (int n = 0; n < nstep; n++) {
    for (int k = 0; k < m->nu * nworld; k++) ctrl[k] = check_uniform(-1, 1);
    if (m->nu) sap_set(s, SAP_FIELD_CTRL, NULL, nworld, ctrl);
    sap_step(s, 1);
  }
  free(ctrl);
}

static inline void fx_refused(const char* xml, sapStatus status, const char* fragment) {
  sapModel* m = NULL;
  sapStatus st = sap_loadModelString(xml, &m);
  CHECK(st == status, "status %d, want %d (%s)", st, status, sap_lastError());
  CHECK(strstr(sap_lastError(), fragment) != NULL, "message '%s' lacks '%s'", sap_lastError(), fragment);
  sap_freeModel(m);
}

/* scene (fx_model) with options opts (fx_options) refused by sap_create with status and a message
 * containing fragment */
static inline void fx_createRefused(const char* scene, const char* opts, sapStatus status, const char* fragment) {
  sapModel* m = fx_model(scene);
  sapOptions o;
  if (!m || !fx_options(&o, opts)) {
    sap_freeModel(m);
    return;
  }
  sapSim* s = NULL;
  sapStatus st = sap_create(m, &o, 1, &s);
  CHECK(st == status, "sap_create: status %d, want %d (%s)", st, status, sap_lastError());
  CHECK(strstr(sap_lastError(), fragment) != NULL, "message '%s' lacks '%s'", sap_lastError(), fragment);
  sap_free(s);
  sap_freeModel(m);
}

/* a call returning sapStatus that must succeed: a CHECK failure with the library's message */
#define CHECK_OK(call) CHECK((call) == SAP_OK, "%s: %s", #call, sap_lastError())

#endif
