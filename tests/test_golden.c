/* Golden hashes: a fixed run per scene and preset on the CPU (8 worlds with distinct initial
 * velocities, a fixed number of steps), hashed bit for bit (FNV-1a 64 over qpos, qvel and time
 * of every world), compared with the value pinned in tests/golden.txt. The oracle is the
 * library itself at the commit that pinned the value: any change of results, intended or not,
 * fails here (Box2D pins one the same way, test/test_determinism.c). An intended change is
 * re-pinned with `make golden-update` in the commit that makes it, with the reason in its
 * message. The bits depend on the compiler and libm: the file records the toolchain it was
 * pinned with, and the test SKIPs on another one. */
#include "fixture.h"

#ifndef SAP_GOLDEN_FILE
#define SAP_GOLDEN_FILE "tests/golden.txt"
#endif

/* the toolchain whose bits the file pins */
#if defined(__clang__)
#define GOLDEN_CC "clang-" __clang_version__
#elif defined(__GNUC__)
#define GOLDEN_CC "gcc-" __VERSION__
#else
#define GOLDEN_CC "unknown"
#endif
#if defined(__x86_64__)
#define GOLDEN_ARCH "x86_64"
#elif defined(__aarch64__)
#define GOLDEN_ARCH "aarch64"
#else
#define GOLDEN_ARCH "other"
#endif

typedef struct {
  const char* scene;
  int nstep;
} goldenScene;

static const goldenScene scenes[] = {
    {"scenes/humanoid.xml", 100},  /* floor contacts, 27 dofs, actuators */
    {"scenes/box_stack.xml", 100}, /* box-box stacking contacts */
    {"scenes/arm7.xml", 100},      /* servo arm */
};
static const char* presets[] = {"approx32", "approx64", "drake"};
#define NSCENE (int)(sizeof(scenes) / sizeof(scenes[0]))
#define NPRESET 3
#define NWORLD 8

static unsigned long long fnv1a(unsigned long long h, const void* p, size_t n) {
  const unsigned char* b = (const unsigned char*)p;
  for (size_t i = 0; i < n; i++) {
    h ^= b[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}

/* the hash of one run; 0 with a CHECK failure when it cannot run */
static unsigned long long golden_run(const char* scene, const char* preset, int nstep) {
  char opts[64];
  snprintf(opts, sizeof(opts), "preset=%s threads=1", preset);
  sapSim* s = fx_sim(scene, NWORLD, opts);
  if (!s) return 0;
  int nv = sap_fieldSize(s, SAP_FIELD_QVEL), nq = sap_fieldSize(s, SAP_FIELD_QPOS);
  double* qpos = (double*)malloc(sizeof(double) * NWORLD * nq);
  double* qvel = (double*)malloc(sizeof(double) * NWORLD * nv);
  double time[NWORLD];
  unsigned long long h = 0xcbf29ce484222325ULL;
  /* world w starts from the scene's state with a velocity of its own (exact binary fractions) */
  CHECK_OK(sap_get(s, SAP_FIELD_QVEL, NULL, NWORLD, qvel));
  for (int w = 0; w < NWORLD; w++)
    for (int i = 0; i < nv; i++) qvel[w * nv + i] += 0.0625 * (((7 * i + 13 * w) % 11) - 5);
  CHECK_OK(sap_set(s, SAP_FIELD_QVEL, NULL, NWORLD, qvel));
  CHECK_OK(sap_step(s, nstep));
  CHECK_OK(sap_get(s, SAP_FIELD_QPOS, NULL, NWORLD, qpos));
  CHECK_OK(sap_get(s, SAP_FIELD_QVEL, NULL, NWORLD, qvel));
  CHECK_OK(sap_get(s, SAP_FIELD_TIME, NULL, NWORLD, time));
  int finite = 1;
  for (long i = 0; i < (long)NWORLD * nq; i++) finite = finite && isfinite(qpos[i]);
  for (long i = 0; i < (long)NWORLD * nv; i++) finite = finite && isfinite(qvel[i]);
  CHECK(finite, "%s %s: a non-finite state after %d steps (a golden run must stay finite)", scene, preset, nstep);
  CHECK(time[NWORLD - 1] > 0, "%s %s: time %g after %d steps", scene, preset, time[NWORLD - 1], nstep);
  h = fnv1a(h, qpos, sizeof(double) * NWORLD * nq);
  h = fnv1a(h, qvel, sizeof(double) * NWORLD * nv);
  h = fnv1a(h, time, sizeof(time));
  free(qpos);
  free(qvel);
  sap_free(s);
  return h;
}

/* the pinned file: "toolchain <cc> <arch>" then "<scene> <preset> <nstep> <hash>" lines */
typedef struct {
  char toolchain[256];
  char scene[NSCENE * NPRESET][128];
  char preset[NSCENE * NPRESET][32];
  int nstep[NSCENE * NPRESET];
  unsigned long long hash[NSCENE * NPRESET];
  int n;
} goldenFile;

static int read_golden(const char* path, goldenFile* g) {
  memset(g, 0, sizeof(*g));
  FILE* f = fopen(path, "r");
  if (!f) return 0;
  char line[200];
  while (fgets(line, sizeof(line), f)) {
    if (line[0] == '#' || line[0] == '\n') continue;
    if (!strncmp(line, "toolchain ", 10)) {
      snprintf(g->toolchain, sizeof(g->toolchain), "%.190s", line + 10);
      g->toolchain[strcspn(g->toolchain, "\n")] = 0;
      continue;
    }
    if (g->n == NSCENE * NPRESET) break;
    if (sscanf(line, "%127s %31s %d %llx", g->scene[g->n], g->preset[g->n], &g->nstep[g->n], &g->hash[g->n]) == 4)
      g->n++;
  }
  fclose(f);
  return 1;
}

static unsigned long long hashes[NSCENE][NPRESET];

static void write_golden(FILE* f) {
  fprintf(f, "# Golden hashes of fixed CPU runs (tests/test_golden.c): scene preset steps hash.\n"
             "# Re-pin with `make golden-update` only in a commit that changes results on purpose,\n"
             "# and say why in its message.\n");
  fprintf(f, "toolchain %s %s\n", GOLDEN_CC, GOLDEN_ARCH);
  for (int i = 0; i < NSCENE; i++)
    for (int p = 0; p < NPRESET; p++)
      fprintf(f, "%s %s %d %016llx\n", scenes[i].scene, presets[p], scenes[i].nstep, hashes[i][p]);
}

static void test_golden_hashes(void) {
  const char* update = getenv("SAPSIM_GOLDEN_UPDATE");
  for (int i = 0; i < NSCENE; i++)
    for (int p = 0; p < NPRESET; p++) hashes[i][p] = golden_run(scenes[i].scene, presets[p], scenes[i].nstep);
  if (check_test_failed) return;
  if (update && update[0]) {
    FILE* f = fopen(update, "w");
    CHECK(f != NULL, "cannot write %s", update);
    if (!f) return;
    write_golden(f);
    fclose(f);
    fprintf(stderr, "  wrote %s\n", update);
    return;
  }
  goldenFile g;
  if (!read_golden(SAP_GOLDEN_FILE, &g)) SKIP("no %s: pin it with `make golden-update`", SAP_GOLDEN_FILE);
  if (strcmp(g.toolchain, GOLDEN_CC " " GOLDEN_ARCH))
    SKIP("%s was pinned with '%s', this build is '%s %s': bits may differ", SAP_GOLDEN_FILE, g.toolchain,
         GOLDEN_CC, GOLDEN_ARCH);
  int changed = 0;
  for (int i = 0; i < NSCENE; i++)
    for (int p = 0; p < NPRESET; p++) {
      int k = 0;
      while (k < g.n && (strcmp(g.scene[k], scenes[i].scene) || strcmp(g.preset[k], presets[p]) ||
                         g.nstep[k] != scenes[i].nstep))
        k++;
      if (k == g.n) {
        CHECK(0, "%s %s %d steps: no pinned hash in %s", scenes[i].scene, presets[p], scenes[i].nstep,
              SAP_GOLDEN_FILE);
        changed = 1;
      } else if (g.hash[k] != hashes[i][p]) {
        CHECK(0, "%s %s %d steps: hash %016llx, pinned %016llx", scenes[i].scene, presets[p], scenes[i].nstep,
              hashes[i][p], g.hash[k]);
        changed = 1;
      }
    }
  if (changed) {
    fprintf(stderr, "  results changed: if intended, update %s with `make golden-update` (it writes:)\n",
            SAP_GOLDEN_FILE);
    write_golden(stderr);
  }
}

/* the runs are deterministic: a second run of one case gives the same bits */
static void test_golden_rerun(void) {
  unsigned long long a = golden_run(scenes[0].scene, "approx64", 20), b = golden_run(scenes[0].scene, "approx64", 20);
  CHECK(a != 0 && a == b, "humanoid approx64 20 steps: %016llx then %016llx", a, b);
}

int main(void) {
  RUN(test_golden_hashes);
  RUN(test_golden_rerun);
  return check_summary("test_golden");
}
