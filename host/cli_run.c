/* `sapsim run`: step worlds end to end, print per-world diagnostics, optionally
 * write the trajectory (time, qpos, qvel of every world at every step) as CSV. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void write_header(FILE* f, const sapModel* m) {
  fprintf(f, "step,world,time");
  for (int i = 0; i < m->nq; i++) fprintf(f, ",qpos%d", i);
  for (int i = 0; i < m->nv; i++) fprintf(f, ",qvel%d", i);
  fprintf(f, "\n");
}

static int write_rows(FILE* f, sapSim* s, int step, double* qpos, double* qvel, double* t) {
  const sapModel* m = sap_model(s);
  int n = sap_nworld(s);
  if (sap_get(s, SAP_FIELD_QPOS, NULL, n, qpos) || sap_get(s, SAP_FIELD_QVEL, NULL, n, qvel) ||
      sap_get(s, SAP_FIELD_TIME, NULL, n, t))
    return 1;
  for (int w = 0; w < n; w++) {
    fprintf(f, "%d,%d,%.9g", step, w, t[w]);
    for (int i = 0; i < m->nq; i++) fprintf(f, ",%.17g", qpos[(size_t)w * m->nq + i]);
    for (int i = 0; i < m->nv; i++) fprintf(f, ",%.17g", qvel[(size_t)w * m->nv + i]);
    fputc('\n', f);
  }
  return ferror(f) ? 1 : 0;
}

/* world-steps with each flag, summed over every step of the run (the last step alone hides
 * rare events): not converged, max-iterations, line-search, factorization, non-finite; and the
 * most contacts any world found in a step (kept + dropped), with the world-steps that dropped
 * some: the measure for sizing ncon_max */
typedef struct { long steps, unconverged, maxit, lsfail, factorfail, nonfinite, overflow; int ncon_peak; } runTally;

static int tally_step(sapSim* s, sapWorldInfo* info, runTally* t) {
  int n = sap_nworld(s);
  if (sap_worldInfo(s, NULL, n, info) != SAP_OK) return 1;
  for (int w = 0; w < n; w++) {
    int f = info[w].flags;
    t->unconverged += !(f & SAP_WORLD_CONVERGED);
    t->maxit += (f & SAP_WORLD_MAXITER) != 0;
    t->lsfail += (f & SAP_WORLD_LSFAIL) != 0;
    t->factorfail += (f & SAP_WORLD_FACTORFAIL) != 0;
    t->nonfinite += (f & SAP_WORLD_NONFINITE) != 0;
    t->overflow += info[w].ncon_dropped > 0;
    if (info[w].ncon + info[w].ncon_dropped > t->ncon_peak) t->ncon_peak = info[w].ncon + info[w].ncon_dropped;
  }
  t->steps += n;
  return 0;
}

static void print_summary(sapSim* s, int nstep, double seconds, const runTally* t) {
  int n = sap_nworld(s);
  sapWorldInfo* info = malloc(sizeof(sapWorldInfo) * n);
  sap_worldInfo(s, NULL, n, info);
  long ncon = 0, dropped = 0, newton = 0, ls = 0, conv = 0, maxit = 0, lsfail = 0, nonfinite = 0;
  long factorfail = 0;
  for (int w = 0; w < n; w++) {
    ncon += info[w].ncon;
    dropped += info[w].ncon_dropped;
    newton += info[w].newton_iter;
    ls += info[w].ls_iter;
    conv += (info[w].flags & SAP_WORLD_CONVERGED) != 0;
    maxit += (info[w].flags & SAP_WORLD_MAXITER) != 0;
    lsfail += (info[w].flags & SAP_WORLD_LSFAIL) != 0;
    nonfinite += (info[w].flags & SAP_WORLD_NONFINITE) != 0;
    factorfail += (info[w].flags & SAP_WORLD_FACTORFAIL) != 0;
  }
  printf("%d worlds x %d steps in %.3f s on %s: %.0f world-steps/s\n", n, nstep, seconds,
         sap_deviceName(s), seconds > 0 ? (double)n * nstep / seconds : 0);
  printf("last step, over worlds: contacts %.2f (dropped %ld), newton iterations %.2f, "
         "line-search iterations %.2f\n", (double)ncon / n, dropped, (double)newton / n, (double)ls / n);
  printf("flags: converged %ld, max-iterations %ld, line-search-failure %ld, "
         "factorization-failure %ld, non-finite %ld\n", conv, maxit, lsfail, factorfail, nonfinite);
  printf("all %ld world-steps: not converged %ld, max-iterations %ld, line-search-failure %ld, "
         "factorization-failure %ld, non-finite %ld\n", t->steps, t->unconverged, t->maxit, t->lsfail,
         t->factorfail, t->nonfinite);
  printf("contacts found in a world-step at most %d (capacity %d), world-steps over capacity %ld\n",
         t->ncon_peak, sap_data(s)->ncon_max, t->overflow);
  int show = n < 8 ? n : 8;
  for (int w = 0; w < show; w++)
    printf("  world %d: flags 0x%x contacts %d dropped %d newton %d ls %d factorizations %d\n", w,
           info[w].flags, info[w].ncon, info[w].ncon_dropped, info[w].newton_iter, info[w].ls_iter,
           info[w].nfactor);
  free(info);
}

int sap_runMain(sapCli* cli) {
  sapModel* m = NULL;
  sapSim* s = NULL;
  FILE* f = NULL;
  int rc = 1, n = cli->worlds[0];
  double *qpos = NULL, *qvel = NULL, *t = NULL, *ctrl = NULL;
  sapWorldInfo* info = NULL;
  runTally tally = {0, 0, 0, 0, 0, 0, 0, 0};
  if (sap_loadModel(cli->scene, &m) != SAP_OK || sap_create(m, &cli->opt, n, &s) != SAP_OK) {
    fprintf(stderr, "sapsim: %s\n", sap_lastError());
    goto done;
  }
  int key = sapcli_keyframe(m, cli);
  if (key < -1 || sap_reset(s, key, NULL) != SAP_OK) goto done;
  ctrl = calloc((size_t)n * m->nu + 1, sizeof(double));
  sapcli_randomCtrl(m, n, cli->ctrl_noise, cli->seed, ctrl);
  if (m->nu && sap_set(s, SAP_FIELD_CTRL, NULL, n, ctrl) != SAP_OK) goto fail;

  char desc[4096];
  sap_optionsDescribe(sap_options(s), desc, sizeof(desc));
  if (!cli->quiet) {
    printf("scene %s: nq %d nv %d nbody %d ngeom %d nu %d, %d worlds, dt %g, device %s\n", cli->scene,
           m->nq, m->nv, m->nbody, m->ngeom, m->nu, n, sap_options(s)->timestep == sap_options(s)->timestep
               ? sap_options(s)->timestep : m->timestep, sap_deviceName(s));
    for (char* line = strtok(desc, "\n"); line; line = strtok(NULL, "\n")) printf("  %s\n", line);
    fputs(sap_modelNotes(m), stdout);
  }
  qpos = malloc(sizeof(double) * n * m->nq);
  qvel = malloc(sizeof(double) * n * m->nv);
  t = malloc(sizeof(double) * n);
  info = malloc(sizeof(sapWorldInfo) * n);
  if (cli->out) {
    f = fopen(cli->out, "w");
    if (!f) {
      fprintf(stderr, "sapsim: cannot write trajectory file '%s'\n", cli->out);
      goto done;
    }
    write_header(f, m);
    if (write_rows(f, s, 0, qpos, qvel, t)) goto fail;
  }
  double seconds = 0;
  for (int k = 1; k <= cli->steps; k++) {
    if (sap_step(s, 1) != SAP_OK) goto fail;
    sapTimers tm;
    sap_timers(s, &tm);
    seconds += tm.total;
    if (tally_step(s, info, &tally)) goto fail;
    if (f && write_rows(f, s, k, qpos, qvel, t)) goto fail;
  }
  print_summary(s, cli->steps, seconds, &tally);
  if (f) {
    /* buffered rows reach the file only now: a full disk shows up here */
    int bad = fflush(f) != 0 || ferror(f);
    bad |= fclose(f) != 0;
    f = NULL;
    if (bad) {
      fprintf(stderr, "sapsim: writing the trajectory file '%s' failed: %s\n", cli->out, strerror(errno));
      goto done;
    }
    printf("trajectory: %s (%d rows)\n", cli->out, (cli->steps + 1) * n);
  }
  rc = 0;
  goto done;
fail:
  fprintf(stderr, "sapsim: %s\n", f && ferror(f) ? "writing the trajectory failed" : sap_lastError());
done:
  if (f && fclose(f)) rc = 1;
  free(qpos);
  free(qvel);
  free(t);
  free(ctrl);
  free(info);
  sap_free(s);
  sap_freeModel(m);
  return rc;
}
