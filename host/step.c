/* The step: a list of stage calls, each with a CPU driver (OpenMP over worlds)
 * and a CUDA launcher (DESIGN.md §2):
 *   kinematics -> collision -> free motion -> SAP solve -> integrate
 * A world whose state turns non-finite is restored to its last finite state,
 * flagged SAP_WORLD_NONFINITE and frozen until reset; it never touches others. */
#include <math.h>
#include <string.h>
#include <time.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "backend.h"
#include "integrate.h"
#include "kernels.h"
#include "sim.h"
#include "world_view.h"

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

static int frozen(const sapSim* s, int w) { return s->d.world_flags[w] & SAP_WORLD_SKIP; }

/* ---- CPU stage drivers ----------------------------------------------------------- */

static void kinematics_world(const sapModel* m, sapData* d, int w, int fp32) {
  size_t b3 = (size_t)w * m->nbody * 3, b4 = (size_t)w * m->nbody * 4, b9 = (size_t)w * m->nbody * 9;
  size_t j3 = (size_t)w * m->njnt * 3, g3 = (size_t)w * m->ngeom * 3, g9 = (size_t)w * m->ngeom * 9;
  const double* qpos = d->qpos + (size_t)w * m->nq;
  const double* mpos = d->mocap_pos + (size_t)w * m->nmocap * 3;
  const double* mquat = d->mocap_quat + (size_t)w * m->nmocap * 4;
  if (fp32)
    sapw_kinematics_f32(m, qpos, mpos, mquat, d->xpos + b3, d->xquat + b4, d->xmat + b9, d->xipos + b3,
                        d->ximat + b9, d->xanchor + j3, d->xaxis + j3, d->geom_xpos + g3,
                        d->geom_xmat + g9);
  else
    sapw_kinematics_f64(m, qpos, mpos, mquat, d->xpos + b3, d->xquat + b4, d->xmat + b9, d->xipos + b3,
                        d->ximat + b9, d->xanchor + j3, d->xaxis + j3, d->geom_xpos + g3,
                        d->geom_xmat + g9);
}

void sapc_kinematicsMasked(sapSim* s, const unsigned char* mask) {
  int fp32 = s->opt.boundary_pose_precision == SAP_FP32;
#pragma omp parallel for schedule(static) num_threads(sapc_threads(s))
  for (int w = 0; w < s->d.nworld; w++)
    if (!mask || mask[w]) kinematics_world(s->m, &s->d, w, fp32);
}

void sapc_kinematics(sapSim* s) {
  int fp32 = s->opt.boundary_pose_precision == SAP_FP32;
#pragma omp parallel for schedule(static) num_threads(sapc_threads(s))
  for (int w = 0; w < s->d.nworld; w++)
    if (!frozen(s, w)) kinematics_world(s->m, &s->d, w, fp32);
}

static void free_motion_world(const sapSim* s, sapData* d, int w) {
  sapModel view;
  const sapModel* m = sapw_worldView(s->m, w, &view);  /* the world's parameters */
  size_t nv = m->nv, nb = m->nbody;
  size_t q = w * (size_t)m->nq, v = w * nv, u = w * (size_t)m->nu;
  int explicit_drives = !s->opt.contacts;
  void* scratch = d->scratch + (size_t)w * d->nscratch;
  int fail;
#define FREE_MOTION_ARGS(T)                                                               \
  m, s->h, explicit_drives, d->qpos + q, d->qvel + v, d->ctrl + u, d->qfrc_applied + v,   \
      d->xpos + 3 * nb * w, d->xmat + 9 * nb * w, d->xipos + 3 * nb * w,                  \
      d->ximat + 9 * nb * w, d->xanchor + 3 * (size_t)m->njnt * w,                        \
      d->xaxis + 3 * (size_t)m->njnt * w, d->cref + 3 * nb * w, d->cdof + 6 * nv * w,     \
      d->qA + (size_t)nv * nv * w, d->qfrc_bias + v, d->qfrc_passive + v, d->qfrc_actuator + v,   \
      d->vstar + v, (T*)scratch
  if (s->opt.free_motion_precision == SAP_FP32)
    fail = sapw_freeMotion_f32(FREE_MOTION_ARGS(float));
  else
    fail = sapw_freeMotion_f64(FREE_MOTION_ARGS(double));
#undef FREE_MOTION_ARGS
  if (fail) {
    /* A not positive definite (non-finite state or degenerate inertia) */
    for (size_t i = 0; i < nv; i++) d->vstar[v + i] = NAN;
  }
}

void sapc_freeMotion(sapSim* s) {
#pragma omp parallel for schedule(static) num_threads(sapc_threads(s))
  for (int w = 0; w < s->d.nworld; w++)
    if (!frozen(s, w)) free_motion_world(s, &s->d, w);
}

static int all_finite(const double* x, int n) {
  for (int i = 0; i < n; i++)
    if (!isfinite(x[i])) return 0;
  return 1;
}

/* integrate one world; restore and flag it if the result is not finite */
static void integrate_world(const sapSim* s, sapData* d, int w) {
  const sapModel* m = s->m;
  double* qpos = d->qpos + (size_t)w * m->nq;
  double* qvel = d->qvel + (size_t)w * m->nv;
  const double* vnext = d->vnext + (size_t)w * m->nv;
  double* saved = (double*)(d->scratch + (size_t)w * d->nscratch);
  memcpy(saved, qpos, sizeof(double) * m->nq);
  sapw_integrate(m, s->opt.integration == SAP_INTEGRATE_MIDPOINT, s->h, qpos, qvel, vnext);
  if (!all_finite(qpos, m->nq) || !all_finite(vnext, m->nv)) {
    memcpy(qpos, saved, sizeof(double) * m->nq);
    d->world_flags[w] |= SAP_WORLD_NONFINITE;
    return;
  }
  /* qvel takes v_{n+1}; vnext keeps v_n until the next solve (the extrapolated warm start) */
  double* vswap = d->vnext + (size_t)w * m->nv;
  for (int i = 0; i < m->nv; i++) {
    double t = qvel[i];
    qvel[i] = vswap[i];
    vswap[i] = t;
  }
  d->time[w] += s->h;
  sapw_countIterations(d, w);
}

void sapc_integrate(sapSim* s) {
#pragma omp parallel for schedule(static) num_threads(sapc_threads(s))
  for (int w = 0; w < s->d.nworld; w++)
    if (!frozen(s, w)) integrate_world(s, &s->d, w);
}

/* per-step flag reset of world w: keep only SAP_WORLD_NONFINITE; a non-finite control or
 * applied force refuses this step of the world (SAP_WORLD_BADINPUT) */
static void clear_world_flags(sapSim* s, int w) {
  const sapModel* m = s->m;
  s->d.world_flags[w] &= SAP_WORLD_NONFINITE;
  s->d.newton_iter[w] = s->d.ls_iter[w] = s->d.nfactor[w] = s->d.ls_eval[w] = 0;
  if (!all_finite(s->d.ctrl + (size_t)w * m->nu, m->nu) || !all_finite(s->d.qfrc_applied + (size_t)w * m->nv, m->nv))
    s->d.world_flags[w] |= SAP_WORLD_BADINPUT;
}

/* ---- the step ------------------------------------------------------------------- */

/* one step of world w, stage by stage as the per-stage drivers run them (the same per-world
 * functions in the same order, so results are bitwise those of a stage-major step); t[5]
 * accumulates the stages' seconds */
static void step_world(sapSim* s, int w, double* t) {
  sapData* d = &s->d;
  double t0 = now_s(), t1;
  clear_world_flags(s, w);
  if (!frozen(s, w)) kinematics_world(s->m, d, w, s->opt.boundary_pose_precision == SAP_FP32);
  t1 = now_s(); t[0] += t1 - t0; t0 = t1;
  if (s->opt.contacts) sapc_collisionWorld(s, w);
  t1 = now_s(); t[1] += t1 - t0; t0 = t1;
  if (!frozen(s, w)) free_motion_world(s, d, w);
  t1 = now_s(); t[2] += t1 - t0; t0 = t1;
  if (s->opt.contacts) sapc_solveWorld(s, w);
  else  // without contacts the solved velocity is the free motion
    memcpy(d->vnext + (size_t)w * s->m->nv, d->vstar + (size_t)w * s->m->nv, sizeof(double) * s->m->nv);
  /* acceleration sensors of this step (its start state, solved acceleration and impulses) */
  if (s->m->nsensor) sapc_sensorAccWorld(s, w);
  t1 = now_s(); t[3] += t1 - t0; t0 = t1;
  if (!frozen(s, w)) integrate_world(s, d, w);
  /* position/velocity sensors of the new state */
  if (s->m->nsensor) sapc_sensorPosVelWorld(s, w);
  t[4] += now_s() - t0;
}

/* nstep steps of every world in one parallel region: worlds are independent, so each thread
 * takes whole worlds (dynamic, one at a time) and runs all their steps; no barrier between
 * stages or steps, only the region's end (issue 16 item 4). The stage timers are the threads'
 * summed stage seconds scaled to the wall time. */
static void steps_cpu(sapSim* s, int nstep) {
  int nt = sapc_threads(s);
  double acc[5] = {0, 0, 0, 0, 0}, wall0 = now_s();
#pragma omp parallel num_threads(nt) if (nt > 1)
  {
    double t[5] = {0, 0, 0, 0, 0};
#pragma omp for schedule(dynamic, 1) nowait
    for (int w = 0; w < s->d.nworld; w++)
      for (int k = 0; k < nstep; k++) step_world(s, w, t);
#pragma omp critical(sapc_step_timers)
    for (int i = 0; i < 5; i++) acc[i] += t[i];
  }
  double wall = now_s() - wall0, sum = acc[0] + acc[1] + acc[2] + acc[3] + acc[4];
  double k = sum > 0 ? wall / sum : 0;
  s->timers.kinematics += k * acc[0];
  s->timers.collision += k * acc[1];
  s->timers.free_motion += k * acc[2];
  s->timers.solve += k * acc[3];
  s->timers.integrate += k * acc[4];
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
