/* `sapsim run`: step worlds end to end with sap_run (host/run.c: limits --steps, --end-time,
 * --wall-time), print the run's summary and per-world diagnostics, optionally write the
 * trajectory (time, qpos, qvel of every world every --frame-every steps) as CSV or in the
 * binary frame format (docs/frames.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* the summary: throughput, the last step over worlds, and every world-step's flags summed over
 * the run (the last step alone hides rare events), the most contacts any world found in a step
 * (kept + dropped, the measure for sizing ncon_max), retries */
static int print_summary(sapSim* s, const sapRunSummary* r) {
  int n = sap_nworld(s);
  sapWorldInfo* info = malloc(sizeof(sapWorldInfo) * n);
  if (!info || sap_worldInfo(s, NULL, n, info) != SAP_OK) {
    fprintf(stderr, "sapsim: %s\n", info ? sap_lastError() : "out of memory");
    free(info);
    return 1;
  }
  sapcliTally t;
  sapcli_tally(info, n, &t);
  printf("%d worlds x %ld steps in %.3f s on %s: %.0f world-steps/s (stopped by %s, time %.9g)\n", n, r->steps,
         r->step_s, sap_deviceName(s), r->world_steps_per_s, sap_runStopName(r->stop), r->time_max);
  printf("last step, over worlds: contacts %.2f (dropped %ld), newton iterations %.2f, "
         "line-search iterations %.2f\n", (double)t.ncon / n, t.dropped, (double)t.newton / n, (double)t.ls / n);
  printf("flags: converged %d, max-iterations %d, line-search-failure %d, "
         "factorization-failure %d, non-finite %d\n", t.converged, t.maxiter, t.lsfail, t.factorfail, t.nonfinite);
  printf("all %.0f world-steps: not converged %ld, max-iterations %ld, line-search-failure %ld, "
         "factorization-failure %ld, non-finite %ld\n", r->world_steps, r->unconverged, r->flag_steps[1],
         r->flag_steps[2], r->flag_steps[6], r->flag_steps[3]);
  printf("newton iterations per world-step: mean %.2f p95 %g max %g; line-search evaluations: mean %.2f "
         "p95 %g max %g\n", r->newton_mean, r->newton_p95, r->newton_max, r->ls_mean, r->ls_p95, r->ls_max);
  printf("contacts found in a world-step at most %d (capacity %d), world-steps where a dropped contact "
         "may push %ld\n",
         r->ncon_peak, sap_data(s)->ncon_max, r->flag_steps[4]);
  if (sap_options(s)->retry_depth > 0)
    printf("retries: %lld substeps redone, smallest step %g\n", r->retries, r->h_min);
  int show = n < 8 ? n : 8;
  for (int w = 0; w < show; w++)
    printf("  world %d: flags 0x%x contacts %d dropped %d newton %d ls %d factorizations %d\n", w,
           info[w].flags, info[w].ncon, info[w].ncon_dropped, info[w].newton_iter, info[w].ls_iter,
           info[w].nfactor);
  free(info);
  return 0;
}

int sapcli_runMain(sapCli* cli) {
  sapModel* m = NULL;
  sapSim* s = NULL;
  sapFrameWriter* fw = NULL;
  int rc = 1, n = cli->worlds[0];
  double* ctrl = NULL;
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
           m->nq, m->nv, m->nbody, m->ngeom, m->nu, n, sap_options(s)->timestep, sap_deviceName(s));
    for (char* line = strtok(desc, "\n"); line; line = strtok(NULL, "\n")) printf("  %s\n", line);
    fputs(sap_modelNotes(m), stdout);
  }
  if (cli->out && sap_frameWriterOpen(s, cli->out, cli->format, &fw) != SAP_OK) goto fail;
  /* sap_run: --steps (unless only a time limit was given), --end-time, --wall-time */
  sapRunOptions ro;
  sap_runOptionsDefault(&ro);
  int timed = !isnan(cli->end_time) || !isnan(cli->wall_time);
  ro.max_steps = cli->steps_given || !timed ? cli->steps : -1;
  ro.end_time = cli->end_time;
  ro.wall_time = cli->wall_time;
  ro.writer = fw;
  ro.frame_every = fw ? cli->frame_every : 0;
  sapRunSummary sum;
  if (sap_run(s, &ro, &sum) != SAP_OK) goto fail;
  if (print_summary(s, &sum)) goto done;
  if (fw) {
    long frames = sap_frameWriterFrames(fw);
    sapStatus st = sap_frameWriterClose(fw);
    fw = NULL;
    if (st != SAP_OK) {
      fprintf(stderr, "sapsim: %s\n", sap_lastError());
      goto done;
    }
    printf("trajectory: %s (%ld %s)\n", cli->out, cli->format == SAP_FRAMES_CSV ? frames * n : frames,
           cli->format == SAP_FRAMES_CSV ? "rows" : "frames");
  }
  rc = 0;
  goto done;
fail:
  fprintf(stderr, "sapsim: %s\n", sap_lastError());
done:
  if (fw) sap_frameWriterClose(fw);
  free(ctrl);
  sap_free(s);
  sap_freeModel(m);
  return rc;
}
