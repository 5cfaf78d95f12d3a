/* The step (DESIGN.md §2): the stage table of host/stages.h, each stage with a CPU driver
 * for one world (here) and a CUDA launcher for every world (host/backend_cuda.c):
 *   kinematics -> collision -> free motion -> SAP solve -> integrate
 * The CPU runs every stage of a world before the next world (steps_cpu, OpenMP over worlds).
 * A world whose state turns non-finite is restored to its last finite state,
 * flagged SAP_WORLD_NONFINITE and frozen until reset; it never touches others.
 * With option retry_depth > 0, a world whose solve fails redoes its step from the saved state with
 * halved steps (seed 000, STARK's "commit or retry the step"; step_world_retry; on the GPU the
 * same rules in masked rounds, kernels/retry.cu). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "backend.h"
#include "band.h"
#include "sim.h"
#include "sleep.h"
#include "stages.h"
#include "world_stages.h"

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

int sapc_threads(const sapSim* s) {
#ifdef _OPENMP
  int n = s->opt.threads > 0 ? s->opt.threads : omp_get_max_threads();
  return n < s->d.nworld ? n : s->d.nworld;
#else
  (void)s;
  return 1;
#endif
}

static int frozen(const sapSim* s, int w) { return sapw_frozen(&s->d, w); }

/* ---- CPU stage drivers: the per-world entries of kernels/world_stages.h over the worlds ---- */

void sapc_kinematicsMasked(sapSim* s, const unsigned char* mask) {
  int fp32 = s->opt.boundary_pose_precision == SAP_FP32;
#pragma omp parallel for schedule(static) num_threads(sapc_threads(s))
  for (int w = 0; w < s->d.nworld; w++)
    if (!mask || mask[w]) sapw_kinematicsWorld(s->m, &s->d, w, fp32, NULL);
}

void sapc_kinematics(sapSim* s) {
  int fp32 = s->opt.boundary_pose_precision == SAP_FP32;
#pragma omp parallel for schedule(static) num_threads(sapc_threads(s))
  for (int w = 0; w < s->d.nworld; w++)
    if (!frozen(s, w)) sapw_kinematicsWorld(s->m, &s->d, w, fp32, NULL);
}

/* world w's tree_asleep row when the scene sleeps (kernels/sleep.h), else NULL */
static const int* asleep_row(const sapSim* s, int w) {
  return s->m->sleep ? sapw_treeAsleep(s->m, &s->d, w) : NULL;
}

static void free_motion_world(const sapSim* s, int w, double h) {
  sapw_freeMotionWorld(s->m, &s->d, w, h, !s->opt.contacts, s->opt.integration == SAP_INTEGRATE_MIDPOINT,
                       s->opt.boundary_pose_precision == SAP_FP32, s->opt.free_motion_precision == SAP_FP32,
                       asleep_row(s, w));
}

void sapc_freeMotion(sapSim* s) {
#pragma omp parallel for schedule(static) num_threads(sapc_threads(s))
  for (int w = 0; w < s->d.nworld; w++)
    if (!frozen(s, w)) free_motion_world(s, w, s->h);
}

static void integrate_world(const sapSim* s, int w, double h) {
  sapw_integrateWorld(s->m, &s->d, w, h, s->opt.integration == SAP_INTEGRATE_MIDPOINT);
}

void sapc_integrate(sapSim* s) {
#pragma omp parallel for schedule(static) num_threads(sapc_threads(s))
  for (int w = 0; w < s->d.nworld; w++)
    if (!frozen(s, w)) integrate_world(s, w, s->h);
}

/* ---- the step ------------------------------------------------------------------- */

/* the CPU drivers of the stage table (host/stages.h) for one world */
void sapc_stageClear(sapSim* s, int w, double h) {
  (void)h;
  sapw_clearWorldFlags(s->m, &s->d, w);
}

/* (sleep) the wake by user changes (kernels/sleep.h step 1), then kinematics; the trees that
 * still sleep keep their poses: their qpos is the one of the step that put them to sleep
 * (or of the sap_set that did, which recomputes the poses) */
void sapc_stageKinematics(sapSim* s, int w, double h) {
  (void)h;
  if (frozen(s, w)) return;
  if (s->m->sleep) sapw_wakeUser(s->m, &s->d, w);
  sapw_kinematicsWorld(s->m, &s->d, w, s->opt.boundary_pose_precision == SAP_FP32, asleep_row(s, w));
}

/* contacts; with sleep (kernels/sleep.h steps 2-4) the pairs with an awake side, the wake by
 * contact (then the contacts again, as MuJoCo) and by equality, and the contacts of sleeping
 * trees out of the solve's list */
void sapc_stageCollision(sapSim* s, int w, double h) {
  const sapModel* m = s->m;
  sapData* d = &s->d;
  if (m->contact_band) sapw_bandBudgets(m, d, w, h);  // contact_band=speed (kernels/band.h)
  if (!m->sleep || frozen(s, w)) {
    if (s->opt.contacts) sapc_collisionWorld(s, w);
    return;
  }
  if (s->opt.contacts) {
    sapc_collisionWorld(s, w);
    if (sapw_wakeContacts(m, d, w)) sapc_collisionWorld(s, w);
  }
  sapw_wakeEquality(m, d, w);
  if (s->opt.contacts) sapw_sleepDropContacts(m, d, w);
}

/* free motion; with sleep v* = 0 on sleeping trees, which it skips (none computed when every
 * tree sleeps) */
void sapc_stageFreeMotion(sapSim* s, int w, double h) {
  const sapModel* m = s->m;
  if (frozen(s, w)) return;
  if (m->sleep && sapw_allAsleep(m, &s->d, w)) {
    memset(s->d.vstar + (size_t)w * m->nv, 0, sizeof(double) * m->nv);
    return;
  }
  free_motion_world(s, w, h);
}

/* the solve; under contact_band=speed (kernels/band.h), when a geom outran its speed budget
 * at the answer, the world's collision with the whole band and the solve again from the same
 * start (vnext, the warm start's last velocity, put back): the margin mode's step exactly
 * (contact_band excludes sleep, so the collision stage is the plain list) */
void sapc_stageSolve(sapSim* s, int w, double h) {
  const sapModel* m = s->m;
  sapData* d = &s->d;
  double* vnext = d->vnext + (size_t)w * m->nv;
  if (!s->opt.contacts) {  // without contacts the solved velocity is the free motion
    memcpy(vnext, d->vstar + (size_t)w * m->nv, sizeof(double) * m->nv);
    return;
  }
  if (!m->contact_band || frozen(s, w)) {
    sapc_solveWorld(s, w, h);
    return;
  }
  double* vlast = d->band_vlast + (size_t)w * m->nv;
  double* work = d->band_work + (size_t)w * sapw_bandWorkDoubles(m);  // not the scratch: it holds the impulses
  memcpy(vlast, vnext, sizeof(double) * m->nv);
  sapc_solveWorld(s, w, h);
  if (sapw_bandCheck(m, d, w, vnext, work)) return;
  d->band_redo[w] = 1;
  d->band_redos[w]++;
  memcpy(vnext, vlast, sizeof(double) * m->nv);
  sapw_bandWhole(m, d, w);
  sapc_collisionWorld(s, w);
  sapc_solveWorld(s, w, h);
  sapw_bandCheck(m, d, w, vnext, work);  // the next step's budgets from this answer
}

/* acceleration sensors of this step (its start state, solved acceleration and impulses) */
void sapc_stageSensorAcc(sapSim* s, int w, double h) {
  if (s->m->nsensor) sapc_sensorAccWorld(s, w, h);
}

/* MuJoCo's com-based outputs of this step (option body_outputs) */
void sapc_stageBodyOutputs(sapSim* s, int w, double h) {
  if (s->opt.body_outputs) sapc_bodyOutputsWorld(s, w, h);
}

/* integration; with sleep the sleep rule first (on the start qvel, kernels/sleep.h step 5),
 * then sleeping trees keep their start qpos and qvel = 0 (step 6) */
void sapc_stageIntegrate(sapSim* s, int w, double h) {
  if (frozen(s, w)) return;
  if (s->m->sleep) sapw_sleepRule(s->m, &s->d, w);
  integrate_world(s, w, h);
  if (s->m->sleep && !frozen(s, w)) sapw_sleepFreeze(s->m, &s->d, w);
}

/* position/velocity sensors of the new state */
void sapc_stageSensorPosVel(sapSim* s, int w, double h) {
  (void)h;
  if (s->m->nsensor) sapc_sensorPosVelWorld(s, w);
}

/* one step of world w: the stage table's CPU drivers in order (the same per-world functions in
 * the same order as the per-stage drivers above, so results are bitwise those of a stage-major
 * step); t[SAPC_NTIMER] accumulates the stages' seconds by timer slot */
static void step_world(sapSim* s, int w, double h, double* t) {
  int slot = 0;
  double t0 = now_s();
  for (int k = 0; k < SAPC_NSTAGE; k++) {
    const sapcStage* st = &sapc_stages[k];
    if (st->timer != slot) {
      double t1 = now_s();
      t[slot] += t1 - t0;
      t0 = t1;
      slot = st->timer;
    }
    st->cpu(s, w, h);
  }
  t[slot] += now_s() - t0;
}

/* ---- step retry (option retry_depth) ------------------------------------------------ */

/* a solve that failed: the world's step is redone with h/2 (SAP_WORLD_CONVERGED missing alone
 * is not a failure: a solve stopped by its cost tolerance keeps a good iterate) */
#define SAP_RETRY_FAIL (SAP_WORLD_MAXITER | SAP_WORLD_LSFAIL | SAP_WORLD_FACTORFAIL | SAP_WORLD_NONFINITE)

static size_t retry_stride(const sapModel* m) {
  return (size_t)m->nq + 2 * (size_t)m->nv + (size_t)m->na + (size_t)m->nhistory + 1;
}

sapStatus sapc_retryInit(sapSim* s) {
  if (s->opt.retry_depth <= 0) return SAP_OK;
  if (s->m->sleep)
    return sap_fail(SAP_ERR_UNSUPPORTED, "option retry_depth=%d with <flag sleep=\"enable\"/>: the step retry "
                    "does not restore the sleep state yet; use retry_depth=0 or disable the flag",
                    s->opt.retry_depth);
  size_t nw = (size_t)s->d.nworld;
  /* on the GPU the saved states live on the device (kernels/retry.cu), the counters in both */
  if (!s->on_gpu) s->rt_save = (double*)malloc(sizeof(double) * nw * retry_stride(s->m));
  s->rt_level = (int*)calloc(3 * nw, sizeof(int));
  s->rt_retries = (long long*)calloc(nw, sizeof(long long));
  s->rt_hlast = (double*)malloc(sizeof(double) * nw);
  if ((!s->on_gpu && !s->rt_save) || !s->rt_level || !s->rt_retries || !s->rt_hlast) {
    sapc_retryFree(s);
    return sap_fail(SAP_ERR_MEMORY, "sap_create: out of memory for the retry state (option retry_depth)");
  }
  s->rt_clean = s->rt_level + nw;
  s->rt_level_max = s->rt_level + 2 * nw;
  for (size_t w = 0; w < nw; w++) s->rt_hlast[w] = s->h;
  return sapb_retryInit(s);
}

void sapc_retryFree(sapSim* s) {
  free(s->rt_save);
  free(s->rt_level);
  free(s->rt_retries);
  free(s->rt_hlast);
  s->rt_hlast = NULL;
  s->rt_save = NULL;
  s->rt_level = s->rt_clean = s->rt_level_max = NULL;
  s->rt_retries = NULL;
}

void sapc_retryResetWorld(sapSim* s, int w) {
  if (s->rt_level) {
    s->rt_level[w] = s->rt_clean[w] = 0;
    s->rt_hlast[w] = s->h;
  }
}

/* world w's state a step changes and a retry restores: qpos, qvel, vnext (the warm start's
 * previous velocity), act, the control histories, time */
static void retry_save(const sapSim* s, int w, double* b, int restore) {
  const sapModel* m = s->m;
  const sapData* d = &s->d;
  struct { double* x; size_t n; } part[6] = {{d->qpos + (size_t)w * m->nq, (size_t)m->nq},
                                              {d->qvel + (size_t)w * m->nv, (size_t)m->nv},
                                              {d->vnext + (size_t)w * m->nv, (size_t)m->nv},
                                              {d->act + (size_t)w * m->na, (size_t)m->na},
                                              {d->history + (size_t)w * m->nhistory, (size_t)m->nhistory},
                                              {d->time + w, 1}};
  for (int i = 0; i < 6; i++) {
    if (restore) memcpy(part[i].x, b, sizeof(double) * part[i].n);
    else memcpy(b, part[i].x, sizeof(double) * part[i].n);
    b += part[i].n;
  }
}

/* one batch step of world w with retry: substeps of h / 2^level (level: the depth in force);
 * a substep whose solve fails is restored and redone one level deeper, down to retry_depth,
 * where a failure is accepted and flagged. The substeps cover h exactly (the finest grid has
 * 2^retry_depth units; a substep at level l covers 2^(retry_depth - l) of them, and the level
 * only deepens inside a step). Diagnostics of the step: iterations summed over every solve
 * (redone ones included), flags OR-ed over the accepted substeps, CONVERGED only when each
 * accepted one converged. A world that needs no retry runs exactly step_world(s, w, h). */
static void step_world_retry(sapSim* s, int w, double* t) {
  sapData* d = &s->d;
  const sapModel* m = s->m;
  int depth = s->opt.retry_depth, level = s->rt_level[w];
  /* frozen worlds and refused steps: the plain step (it keeps them as they are) */
  if ((d->world_flags[w] & SAP_WORLD_NONFINITE) || !sapw_allFinite(d->ctrl + (size_t)w * m->nu, m->nu) ||
      !sapw_allFinite(d->qfrc_applied + (size_t)w * m->nv, m->nv) ||
      !sapw_allFinite(d->xfrc_applied + (size_t)w * m->nbody * 6, m->nbody * 6)) {
    step_world(s, w, s->h, t);
    return;
  }
  double* save = s->rt_save + (size_t)w * retry_stride(m);
  long units = 1L << depth, done = 0;
  int newton = 0, ls = 0, nfactor = 0, ls_eval = 0, f_or = 0, f_and = ~0, redone = 0;
  while (done < units) {
    retry_save(s, w, save, 0);
    step_world(s, w, ldexp(s->h, -level), t);
    int f = d->world_flags[w];
    newton += d->newton_iter[w];
    ls += d->ls_iter[w];
    nfactor += d->nfactor[w];
    ls_eval += d->ls_eval[w];
    if ((f & SAP_RETRY_FAIL) && level < depth) {
      retry_save(s, w, save, 1);
      d->world_flags[w] &= ~SAP_WORLD_NONFINITE;
      level++;
      redone++;
      continue;
    }
    f_or |= f;
    f_and &= f;
    done += 1L << (depth - level);
    s->rt_hlast[w] = ldexp(s->h, -level);
    if (f & SAP_WORLD_NONFINITE) break;  /* frozen at the smallest step */
  }
  d->world_flags[w] = (f_or & ~SAP_WORLD_CONVERGED) | (f_and & SAP_WORLD_CONVERGED);
  d->newton_iter[w] = newton;
  d->ls_iter[w] = ls;
  d->nfactor[w] = nfactor;
  d->ls_eval[w] = ls_eval;
  s->rt_retries[w] += redone;
  if (redone || (f_or & SAP_RETRY_FAIL)) s->rt_clean[w] = 0;
  else if (level > 0 && ++s->rt_clean[w] >= s->opt.retry_recover_steps) level = s->rt_clean[w] = 0;
  s->rt_level[w] = level;
  if (level > s->rt_level_max[w]) s->rt_level_max[w] = level;
}

sapStatus sap_worldRetry(sapSim* s, const int* worlds, int n, sapWorldRetry* out) {
  if (!s || !out) return sap_fail(SAP_ERR_ARG, "sap_worldRetry: null argument");
  if (n < 0 || (!worlds && n != s->d.nworld))
    return sap_fail(SAP_ERR_ARG, "sap_worldRetry: with worlds == NULL, n must equal nworld (%d), got %d",
                    s->d.nworld, n);
  for (int i = 0; worlds && i < n; i++)
    if (worlds[i] < 0 || worlds[i] >= s->d.nworld)
      return sap_fail(SAP_ERR_ARG, "sap_worldRetry: world id %d out of range [0, %d)", worlds[i], s->d.nworld);
  sapStatus st = sapb_retryFetch(s);
  if (st != SAP_OK) return st;
  for (int i = 0; i < n; i++) {
    int w = worlds ? worlds[i] : i;
    out[i].retries = s->rt_retries ? s->rt_retries[w] : 0;
    out[i].level = s->rt_level ? s->rt_level[w] : 0;
    out[i].level_max = s->rt_level ? s->rt_level_max[w] : 0;
    out[i].h_min = ldexp(s->h, -out[i].level_max);
  }
  return SAP_OK;
}

sapStatus sap_retryClear(sapSim* s) {
  if (!s) return sap_fail(SAP_ERR_ARG, "sap_retryClear: null sim");
  if (!s->rt_level) return SAP_OK;
  sapStatus st = sapb_retryFetch(s);
  if (st != SAP_OK) return st;
  for (int w = 0; w < s->d.nworld; w++) {
    s->rt_retries[w] = 0;
    s->rt_level_max[w] = s->rt_level[w];
  }
  return sapb_retryPush(s);
}

/* nstep steps of every world in one parallel region: worlds are independent, so each thread
 * takes whole worlds (dynamic, one at a time) and runs all their steps; no barrier between
 * stages or steps, only the region's end (issue 16 item 4). The stage timers are the threads'
 * summed stage seconds scaled to the wall time. */
static void steps_cpu(sapSim* s, int nstep) {
  int nt = sapc_threads(s);
  double acc[SAPC_NTIMER] = {0}, wall0 = now_s();
#pragma omp parallel num_threads(nt) if (nt > 1)
  {
    double t[SAPC_NTIMER] = {0};
#pragma omp for schedule(dynamic, 1) nowait
    for (int w = 0; w < s->d.nworld; w++)
      for (int k = 0; k < nstep; k++) {
        if (s->rt_level) step_world_retry(s, w, t);
        else step_world(s, w, s->h, t);
      }
#pragma omp critical(sapc_step_timers)
    for (int i = 0; i < SAPC_NTIMER; i++) acc[i] += t[i];
  }
  double wall = now_s() - wall0, sum = 0;
  for (int i = 0; i < SAPC_NTIMER; i++) sum += acc[i];
  double k = sum > 0 ? wall / sum : 0;
  s->timers.kinematics += k * acc[SAPC_TIMER_KINEMATICS];
  s->timers.collision += k * acc[SAPC_TIMER_COLLISION];
  s->timers.free_motion += k * acc[SAPC_TIMER_FREE_MOTION];
  s->timers.solve += k * acc[SAPC_TIMER_SOLVE];
  s->timers.integrate += k * acc[SAPC_TIMER_INTEGRATE];
}

sapStatus sap_stepAsync(sapSim* s, int nstep) {
  if (!s) return sap_fail(SAP_ERR_ARG, "sap_stepAsync: null sim");
  if (nstep < 0) return sap_fail(SAP_ERR_ARG, "sap_stepAsync: nstep %d is negative", nstep);
#ifdef SAP_HAVE_CUDA
  if (s->on_gpu) {
    for (int k = 0; k < nstep; k++) {
      sapStatus st = sapb_stepGPU(s);
      if (st != SAP_OK) return st;
    }
    return SAP_OK;
  }
#endif
  return sap_step(s, nstep);
}

sapStatus sap_step(sapSim* s, int nstep) {
  if (!s) return sap_fail(SAP_ERR_ARG, "sap_step: null sim");
  if (nstep < 0) return sap_fail(SAP_ERR_ARG, "sap_step: nstep %d is negative", nstep);
  memset(&s->timers, 0, sizeof(s->timers));
  double t0 = now_s();
#ifdef SAP_HAVE_CUDA
  if (s->on_gpu) {
    sapStatus st = sapb_stepsGPU(s, nstep);
    if (st == SAP_OK) st = sapb_finish(s);
    if (st != SAP_OK) return st;
    s->timers.total = now_s() - t0;
    return SAP_OK;
  }
#endif
  steps_cpu(s, nstep);
  s->timers.total = now_s() - t0;
  return SAP_OK;
}
