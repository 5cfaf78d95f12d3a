/* Minimal test harness: tests are functions, checks record the worst offender.
 * Each test binary ends with "N passed, N failed" (and ", N skipped").
 * Compare with atol + rtol*|want| (STYLE.md); GPU tests SKIP without a GPU. */
#ifndef SAPSIM_TESTS_CHECK_H
#define SAPSIM_TESTS_CHECK_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_test_failed;   /* failures inside the running test */
static int check_test_skipped;  /* the running test asked to skip */
static int check_npass, check_nfail, check_nskip;

#define CHECK(cond, ...)                                              \
  do {                                                                \
    if (!(cond)) {                                                    \
      check_test_failed++;                                            \
      fprintf(stderr, "  FAIL %s:%d: ", __FILE__, __LINE__);          \
      fprintf(stderr, __VA_ARGS__);                                   \
      fputc('\n', stderr);                                            \
    }                                                                 \
  } while (0)

/* |got - want| <= atol + rtol*|want|; NaN never passes */
#define CHECK_CLOSE(got, want, atol, rtol, ...)                       \
  do {                                                                \
    double g_ = (double)(got), w_ = (double)(want);                   \
    double tol_ = (atol) + (rtol) * fabs(w_);                         \
    if (!(fabs(g_ - w_) <= tol_)) {                                   \
      check_test_failed++;                                            \
      fprintf(stderr, "  FAIL %s:%d: got %.17g want %.17g (|d|=%.3g > %.3g): ", \
              __FILE__, __LINE__, g_, w_, fabs(g_ - w_), tol_);       \
      fprintf(stderr, __VA_ARGS__);                                   \
      fputc('\n', stderr);                                            \
    }                                                                 \
  } while (0)

/* Compare two arrays; report only the worst offender. */
static inline int check_arrays(const char* what, const double* got, const double* want,
                               int n, double atol, double rtol) {
  int worst = -1;
  double worst_excess = 0;
  for (int i = 0; i < n; i++) {
    double tol = atol + rtol * fabs(want[i]);
    double err = fabs(got[i] - want[i]);
    double excess = (err != err) ? INFINITY : err - tol;
    if (excess > 0 && (worst < 0 || excess > worst_excess)) {
      worst = i;
      worst_excess = excess;
    }
  }
  if (worst >= 0) {
    check_test_failed++;
    fprintf(stderr, "  FAIL %s[%d]: got %.17g want %.17g (allowed %.3g)\n", what, worst,
            got[worst], want[worst], atol + rtol * fabs(want[worst]));
    return 0;
  }
  return 1;
}

#define SKIP(...)                                                     \
  do {                                                                \
    check_test_skipped = 1;                                           \
    fprintf(stderr, "  SKIP: ");                                      \
    fprintf(stderr, __VA_ARGS__);                                     \
    fputc('\n', stderr);                                              \
    return;                                                           \
  } while (0)

#define RUN(fn)                                                       \
  do {                                                                \
    check_test_failed = 0;                                            \
    check_test_skipped = 0;                                           \
    fprintf(stderr, "%s\n", #fn);                                     \
    fn();                                                             \
    if (check_test_skipped && !check_test_failed) check_nskip++;      \
    else if (check_test_failed) { check_nfail++; fprintf(stderr, "  -> FAILED\n"); } \
    else check_npass++;                                               \
  } while (0)

static inline int check_summary(const char* name) {
  printf("%s: %d passed, %d failed, %d skipped\n", name, check_npass, check_nfail, check_nskip);
  return check_nfail ? 1 : 0;
}

/* deterministic uniform random numbers for tests (xorshift64*) */
static unsigned long long check_rng_state = 0x9E3779B97F4A7C15ULL;
static inline double check_uniform(double lo, double hi) {
  check_rng_state ^= check_rng_state >> 12;
  check_rng_state ^= check_rng_state << 25;
  check_rng_state ^= check_rng_state >> 27;
  unsigned long long r = check_rng_state * 2685821657736338717ULL;
  return lo + (hi - lo) * ((double)(r >> 11) / 9007199254740992.0);
}

#endif
