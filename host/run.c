/* The simulation loop (seed 000, STARK's simulation.run()): sap_run repeats
 *   callback before -> step every world -> tally -> frame output -> callback after
 * until a limit is reached (steps, end time, wall-clock budget, a callback's request, a
 * failure), and returns a summary (steps, world-steps/s, iterations mean/p95, flags counted,
 * retries). Frame writers: the CLI's trajectory CSV and the binary format of docs/frames.md.
 * Both backends: the loop calls sap_step one step at a time and reads through sap_get and
 * sap_worldInfo (on the GPU a fetch per step). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend.h"
#include "sim.h"

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* ---- frame writers ------------------------------------------------------------------ */

#define SAP_FRAMES_MAGIC "SAPFRAME"
#define SAP_FRAMES_VERSION 1u
#define SAP_FRAMES_HEADER 64u

struct sapFrameWriter {
  FILE* f;
  int format, nworld, nq, nv;
  long frames;
  double* buf;   /* (nworld x (1 + nq + nv)): time, qpos, qvel */
  float* buf32;  /* (nworld x (nq + nv)) binary32 */
  char path[512];
};

sapStatus sap_frameWriterOpen(const sapSim* s, const char* path, int format, sapFrameWriter** out) {
  if (!s || !path || !out) return sap_fail(SAP_ERR_ARG, "sap_frameWriterOpen: null argument");
  *out = NULL;
  if (format != SAP_FRAMES_CSV && format != SAP_FRAMES_BINARY && format != SAP_FRAMES_BINARY32)
    return sap_fail(SAP_ERR_ARG, "sap_frameWriterOpen: format %d is not one of csv (0), binary (1), "
                    "binary32 (2)", format);
  const sapModel* m = s->m;
  sapFrameWriter* fw = (sapFrameWriter*)calloc(1, sizeof(*fw));
  size_t nw = (size_t)s->d.nworld;
  if (fw) {
    fw->buf = (double*)malloc(sizeof(double) * nw * (1 + m->nq + m->nv));
    fw->buf32 = (float*)malloc(sizeof(float) * (nw * (m->nq + m->nv) + 1));
  }
  if (!fw || !fw->buf || !fw->buf32) {
    sap_frameWriterClose(fw);
    return sap_fail(SAP_ERR_MEMORY, "sap_frameWriterOpen: out of memory");
  }
  fw->format = format;
  fw->nworld = s->d.nworld;
  fw->nq = m->nq;
  fw->nv = m->nv;
  snprintf(fw->path, sizeof(fw->path), "%s", path);
  fw->f = fopen(path, format == SAP_FRAMES_CSV ? "w" : "wb");
  if (!fw->f) {
    sap_frameWriterClose(fw);
    return sap_fail(SAP_ERR_IO, "sap_frameWriterOpen: cannot write frame file '%s'", path);
  }
  if (format == SAP_FRAMES_CSV) {
    fprintf(fw->f, "step,world,time");
    for (int i = 0; i < m->nq; i++) fprintf(fw->f, ",qpos%d", i);
    for (int i = 0; i < m->nv; i++) fprintf(fw->f, ",qvel%d", i);
    fprintf(fw->f, "\n");
  } else {
    unsigned char h[SAP_FRAMES_HEADER];
    uint32_t u[6] = {SAP_FRAMES_VERSION, SAP_FRAMES_HEADER, (uint32_t)s->d.nworld, (uint32_t)m->nq,
                     (uint32_t)m->nv, format == SAP_FRAMES_BINARY ? 8u : 4u};
    memset(h, 0, sizeof(h));
    memcpy(h, SAP_FRAMES_MAGIC, 8);
    memcpy(h + 8, u, sizeof(u));
    memcpy(h + 32, &s->h, sizeof(double));
    fwrite(h, 1, sizeof(h), fw->f);
  }
  if (ferror(fw->f)) {
    sap_frameWriterClose(fw);
    return sap_fail(SAP_ERR_IO, "sap_frameWriterOpen: writing the header of '%s' failed", path);
  }
  *out = fw;
  return SAP_OK;
}

sapStatus sap_frameWrite(sapFrameWriter* fw, sapSim* s, long step) {
  if (!fw || !s) return sap_fail(SAP_ERR_ARG, "sap_frameWrite: null argument");
  if (s->d.nworld != fw->nworld || s->m->nq != fw->nq || s->m->nv != fw->nv)
    return sap_fail(SAP_ERR_ARG, "sap_frameWrite: the writer of '%s' was opened for %d worlds, nq %d, nv %d; "
                    "the batch has %d, %d, %d", fw->path, fw->nworld, fw->nq, fw->nv, s->d.nworld, s->m->nq,
                    s->m->nv);
  size_t nw = (size_t)fw->nworld, nq = (size_t)fw->nq, nv = (size_t)fw->nv;
  double *t = fw->buf, *q = t + nw, *v = q + nw * nq;
  sapStatus st;
  if ((st = sap_get(s, SAP_FIELD_TIME, NULL, fw->nworld, t)) != SAP_OK ||
      (st = sap_get(s, SAP_FIELD_QPOS, NULL, fw->nworld, q)) != SAP_OK ||
      (st = sap_get(s, SAP_FIELD_QVEL, NULL, fw->nworld, v)) != SAP_OK)
    return st;
  FILE* f = fw->f;
  if (fw->format == SAP_FRAMES_CSV) {
    for (size_t w = 0; w < nw; w++) {
      fprintf(f, "%ld,%zu,%.9g", step, w, t[w]);
      for (size_t i = 0; i < nq; i++) fprintf(f, ",%.17g", q[w * nq + i]);
      for (size_t i = 0; i < nv; i++) fprintf(f, ",%.17g", v[w * nv + i]);
      fputc('\n', f);
    }
  } else {
    int64_t k = step;
    fwrite(&k, sizeof(k), 1, f);
    fwrite(t, sizeof(double), nw, f);
    if (fw->format == SAP_FRAMES_BINARY) {
      fwrite(q, sizeof(double), nw * nq, f);
      fwrite(v, sizeof(double), nw * nv, f);
    } else {
      for (size_t i = 0; i < nw * (nq + nv); i++) fw->buf32[i] = (float)q[i];  /* q, v are contiguous */
      fwrite(fw->buf32, sizeof(float), nw * (nq + nv), f);
    }
  }
  if (ferror(f)) return sap_fail(SAP_ERR_IO, "sap_frameWrite: writing frame %ld to '%s' failed", step, fw->path);
  fw->frames++;
  return SAP_OK;
}

long sap_frameWriterFrames(const sapFrameWriter* fw) { return fw ? fw->frames : 0; }

sapStatus sap_frameWriterClose(sapFrameWriter* fw) {
  if (!fw) return SAP_OK;
  sapStatus st = SAP_OK;
  if (fw->f) {
    /* buffered frames reach the file only now: a full disk shows up here */
    int bad = fflush(fw->f) != 0 || ferror(fw->f);
    bad |= fclose(fw->f) != 0;
    if (bad) st = sap_fail(SAP_ERR_IO, "sap_frameWriterClose: writing the frame file '%s' failed", fw->path);
  }
  free(fw->buf);
  free(fw->buf32);
  free(fw);
  return st;
}

/* ---- the loop ------------------------------------------------------------------------ */

void sap_runOptionsDefault(sapRunOptions* o) {
  if (!o) return;
  memset(o, 0, sizeof(*o));
  o->max_steps = 1000;
  o->end_time = NAN;
  o->wall_time = NAN;
}

const char* sap_runStopName(int stop) {
  static const char* names[] = {"steps", "end_time", "wall_time", "callback", "failure", "error"};
  return stop >= 0 && stop <= SAP_RUN_STOP_ERROR ? names[stop] : "?";
}

static sapStatus check_run_options(const sapRunOptions* o) {
  if (o->max_steps < -1)
    return sap_fail(SAP_ERR_ARG, "sap_run: max_steps %ld is negative (-1: no limit)", o->max_steps);
  if (!isnan(o->end_time) && !isfinite(o->end_time))
    return sap_fail(SAP_ERR_ARG, "sap_run: end_time %g is not finite (NaN: no limit)", o->end_time);
  if (!isnan(o->wall_time) && !(isfinite(o->wall_time) && o->wall_time >= 0))
    return sap_fail(SAP_ERR_ARG, "sap_run: wall_time %g must be a finite number of seconds >= 0 (NaN: no limit)",
                    o->wall_time);
  if (o->frame_every < 0)
    return sap_fail(SAP_ERR_ARG, "sap_run: frame_every %d is negative (0: no frames)", o->frame_every);
  if (o->frame_every > 0 && !o->writer && !o->frame_fn)
    return sap_fail(SAP_ERR_ARG, "sap_run: frame_every %d but neither a writer nor a frame_fn is set",
                    o->frame_every);
  if (o->stop_flags & ~0x7f)
    return sap_fail(SAP_ERR_ARG, "sap_run: stop_flags 0x%x has bits that are no SAP_WORLD_* flag", o->stop_flags);
  if (o->max_steps < 0 && isnan(o->end_time) && isnan(o->wall_time) && !o->before && !o->after && !o->stop_flags)
    return sap_fail(SAP_ERR_ARG, "sap_run: no limit is set (max_steps, end_time, wall_time, a callback or "
                    "stop_flags): the run would never end");
  return SAP_OK;
}

static sapStatus write_frame(sapSim* s, const sapRunOptions* o, long step, long* frames) {
  sapStatus st;
  if (o->writer) {
    if ((st = sap_frameWrite(o->writer, s, step)) != SAP_OK) return st;
    (*frames)++;
  }
  if (o->frame_fn) {
    if ((st = o->frame_fn(s, step, o->frame_user)) != SAP_OK) return st;
    (*frames)++;
  }
  return SAP_OK;
}

static long long retries_total(const sapSim* s) {
  long long n = 0;
  for (int w = 0; s->rt_retries && w < s->d.nworld; w++) n += s->rt_retries[w];
  return n;
}

sapStatus sap_run(sapSim* s, const sapRunOptions* o_in, sapRunSummary* out) {
  if (!s) return sap_fail(SAP_ERR_ARG, "sap_run: null sim");
  sapRunOptions o;
  if (o_in) o = *o_in;
  else sap_runOptionsDefault(&o);
  sapStatus st = check_run_options(&o);
  if (st != SAP_OK) return st;
  int nw = s->d.nworld;
  sapRunSummary sum;
  memset(&sum, 0, sizeof(sum));
  sum.h_min = s->h;
  sapWorldInfo* info = (sapWorldInfo*)malloc(sizeof(sapWorldInfo) * nw);
  double* time = (double*)malloc(sizeof(double) * nw);
  if (!info || !time) {
    free(info);
    free(time);
    return sap_fail(SAP_ERR_MEMORY, "sap_run: out of memory");
  }
  double t0 = now_s();
  st = sapb_retryFetch(s);  /* the device's counters (GPU retry) */
  long long retries0 = retries_total(s);
  int stop = -1;
  if (st != SAP_OK || (st = sap_iterStatsClear(s)) != SAP_OK || (st = sap_worldInfo(s, NULL, nw, info)) != SAP_OK)
    goto done;
  if (o.frame_every > 0 && (st = write_frame(s, &o, 0, &sum.frames)) != SAP_OK) goto done;
  for (;;) {
    /* limits, before each step */
    if (o.max_steps >= 0 && sum.steps >= o.max_steps) {
      stop = SAP_RUN_STOP_STEPS;
      break;
    }
    if (!isnan(o.end_time)) {
      if ((st = sap_get(s, SAP_FIELD_TIME, NULL, nw, time)) != SAP_OK) goto done;
      int reached = 1;
      for (int w = 0; w < nw && reached; w++)
        if (!(info[w].flags & SAP_WORLD_NONFINITE) && time[w] < o.end_time - 0.5 * s->h) reached = 0;
      if (reached) {
        stop = SAP_RUN_STOP_END_TIME;
        break;
      }
    }
    if (!isnan(o.wall_time) && now_s() - t0 >= o.wall_time) {
      stop = SAP_RUN_STOP_WALL_TIME;
      break;
    }
    if (o.before && o.before(s, sum.steps, info, o.user)) {
      stop = SAP_RUN_STOP_CALLBACK;
      break;
    }
    /* the step and its tally */
    if ((st = sap_step(s, 1)) != SAP_OK) goto done;
    sum.step_s += s->timers.total;
    sum.steps++;
    if ((st = sap_worldInfo(s, NULL, nw, info)) != SAP_OK || (st = sapb_retryFetch(s)) != SAP_OK) goto done;
    int frozen = 0, failed = 0;
    for (int w = 0; w < nw; w++) {
      int f = info[w].flags;
      for (int k = 0; k < 8; k++) sum.flag_steps[k] += (f >> k) & 1;
      sum.unconverged += !(f & SAP_WORLD_CONVERGED);
      frozen += (f & SAP_WORLD_NONFINITE) != 0;
      failed |= (f & o.stop_flags) != 0;
      if (info[w].ncon + info[w].ncon_dropped > sum.ncon_peak) sum.ncon_peak = info[w].ncon + info[w].ncon_dropped;
      if (s->rt_level && ldexp(s->h, -s->rt_level[w]) < sum.h_min) sum.h_min = ldexp(s->h, -s->rt_level[w]);
    }
    if (o.frame_every > 0 && sum.steps % o.frame_every == 0 &&
        (st = write_frame(s, &o, sum.steps, &sum.frames)) != SAP_OK)
      goto done;
    if (o.after && o.after(s, sum.steps, info, o.user)) {
      stop = SAP_RUN_STOP_CALLBACK;
      break;
    }
    if (failed || frozen == nw) {
      stop = SAP_RUN_STOP_FAILURE;
      break;
    }
  }
done:
  if (st != SAP_OK) {
    /* keep the failed call's message: the summary is filled without further calls that
     * could overwrite it */
    stop = SAP_RUN_STOP_ERROR;
  } else {
    sapIterStats it;
    if ((st = sap_iterStats(s, &it)) == SAP_OK && (st = sap_get(s, SAP_FIELD_TIME, NULL, nw, time)) == SAP_OK) {
      sum.newton_mean = it.newton_mean;
      sum.newton_p95 = it.newton_p95;
      sum.newton_max = it.newton_max;
      sum.ls_mean = it.ls_mean;
      sum.ls_p95 = it.ls_p95;
      sum.ls_max = it.ls_max;
      sum.time_min = INFINITY;
      sum.time_max = -INFINITY;
      for (int w = 0; w < nw; w++) {
        sum.time_min = fmin(sum.time_min, time[w]);
        sum.time_max = fmax(sum.time_max, time[w]);
      }
    } else {
      stop = SAP_RUN_STOP_ERROR;
    }
  }
  sum.stop = stop;
  sum.world_steps = (double)sum.steps * nw;
  sum.wall_s = now_s() - t0;
  sum.world_steps_per_s = sum.step_s > 0 ? sum.world_steps / sum.step_s : 0;
  sum.retries = retries_total(s) - retries0;
  if (out) *out = sum;
  free(info);
  free(time);
  return st;
}
