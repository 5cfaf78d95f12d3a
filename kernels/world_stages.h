/* The foundation stages of one world, wired once: the CPU drivers (host/step.c, OpenMP over
 * worlds) and the CUDA kernels (kernels/dynamics.cu, a thread or a warp per world) call these
 * entries, as collision and the solve have sapc_collisionWorld / sapw_solveWorld:
 *   sapw_clearWorldFlags -> sapw_kinematicsWorld -> (collision) -> sapw_freeMotionWorld
 *   -> (solve) -> sapw_integrateWorld
 * and one rule says which worlds a stage skips (sapw_frozen, world_flags.h). */
#ifndef SAPSIM_WORLD_STAGES_H
#define SAPSIM_WORLD_STAGES_H

#include <math.h>

#include "sapsim/data.h"
#include "sapsim/model.h"
#include "history.h"
#include "integrate.h"
#include "kernels.h"
#include "world_flags.h"
#include "world_view.h"

SAP_HD int sapw_allFinite(const double* x, int n) {
  for (int i = 0; i < n; i++)
    if (!isfinite(x[i])) return 0;
  return 1;
}

/* per-step flag reset of world w: keep only SAP_WORLD_NONFINITE, zero the solve counters; a
 * non-finite control or applied force (qfrc_applied, xfrc_applied) refuses this step of the world
 * (SAP_WORLD_BADINPUT) */
SAP_HD void sapw_clearWorldFlags(const sapModel* m, const sapData* d, int w) {
  d->world_flags[w] &= SAP_WORLD_NONFINITE;
  d->newton_iter[w] = d->ls_iter[w] = d->nfactor[w] = d->ls_eval[w] = 0;
  if (!sapw_allFinite(d->ctrl + (size_t)w * m->nu, m->nu) ||
      !sapw_allFinite(d->qfrc_applied + (size_t)w * m->nv, m->nv) ||
      !sapw_allFinite(d->xfrc_applied + (size_t)w * m->nbody * 6, m->nbody * 6))
    d->world_flags[w] |= SAP_WORLD_BADINPUT;
}

/* poses of world w from its qpos and mocap poses (sapw_kinematics, dynamics_t.h); fp32: the
 * boundary_pose_precision option; ta: the world's tree_asleep row, whose sleeping trees keep
 * their poses (the step's kinematics under sleep, kernels/sleep.h), or NULL: every body */
SAP_HD void sapw_kinematicsWorld(const sapModel* m, const sapData* d, int w, int fp32, const int* ta) {
  size_t b3 = (size_t)w * m->nbody * 3, b4 = (size_t)w * m->nbody * 4, b9 = (size_t)w * m->nbody * 9;
  size_t j3 = (size_t)w * m->njnt * 3, g3 = (size_t)w * m->ngeom * 3, g9 = (size_t)w * m->ngeom * 9;
  const double* qpos = d->qpos + (size_t)w * m->nq;
  const double* mpos = d->mocap_pos + (size_t)w * m->nmocap * 3;
  const double* mquat = d->mocap_quat + (size_t)w * m->nmocap * 4;
  if (fp32)
    sapw_kinematics_f32(m, qpos, mpos, mquat, d->xpos + b3, d->xquat + b4, d->xmat + b9, d->xipos + b3,
                        d->ximat + b9, d->xanchor + j3, d->xaxis + j3, d->geom_xpos + g3, d->geom_xmat + g9, ta);
  else
    sapw_kinematics_f64(m, qpos, mpos, mquat, d->xpos + b3, d->xquat + b4, d->xmat + b9, d->xipos + b3,
                        d->ximat + b9, d->xanchor + j3, d->xaxis + j3, d->geom_xpos + g3, d->geom_xmat + g9, ta);
}

/* the arguments of sapw_freeMotion / sapv_freeMotion for world w of d (pointer to sapData) with
 * the world's model mw (sapw_worldView), T the scratch's precision; used here and by the warp
 * kernel (kernels/dynamics.cu) */
#define SAPW_FREE_MOTION_ARGS(mw, d, w, h, explicit_drives, midpoint, pose_fp32, T, con)                    \
  (mw), (h), (explicit_drives), (midpoint), (pose_fp32), (d)->qpos + (size_t)(w) * (mw)->nq,                            \
      (d)->qvel + (size_t)(w) * (mw)->nv, (d)->ctrl_in + (size_t)(w) * (mw)->nu,                           \
      (d)->act + (size_t)(w) * (mw)->na, (d)->qfrc_applied + (size_t)(w) * (mw)->nv,                       \
      (d)->xfrc_applied + 6 * (size_t)(mw)->nbody * (w),                                                  \
      (d)->xpos + 3 * (size_t)(mw)->nbody * (w), (d)->xquat + 4 * (size_t)(mw)->nbody * (w),               \
      (d)->xmat + 9 * (size_t)(mw)->nbody * (w),                                                          \
      (d)->xipos + 3 * (size_t)(mw)->nbody * (w), (d)->ximat + 9 * (size_t)(mw)->nbody * (w),              \
      (d)->xanchor + 3 * (size_t)(mw)->njnt * (w), (d)->xaxis + 3 * (size_t)(mw)->njnt * (w),              \
      (d)->cref + 3 * (size_t)(mw)->nbody * (w), (d)->cdof + 6 * (size_t)(mw)->nv * (w),                   \
      (d)->qA + (size_t)(mw)->nA * (w), (d)->qfrc_bias + (size_t)(w) * (mw)->nv,                \
      (d)->qfrc_passive + (size_t)(w) * (mw)->nv, (d)->qfrc_actuator + (size_t)(w) * (mw)->nv,             \
      (d)->vstar + (size_t)(w) * (mw)->nv, (T*)((d)->scratch + (size_t)(w) * (d)->nscratch), (con)

/* the free motion of world w with its own parameters (sapw_worldView), after its control input
 * (sapw_controlInput, which the later stages read too): A, the bias forces and
 * v* (sapw_freeMotion, dynamics_t.h); fp32: the free_motion_precision option. A matrix that is
 * not positive definite (a non-finite state, a degenerate inertia) leaves v* = NaN, which the
 * solve and the integrator turn into SAP_WORLD_NONFINITE. ta: the world's tree_asleep row, whose
 * sleeping trees get v* = 0 at no cost (kernels/sleep.h), or NULL: every tree */
SAP_HD void sapw_freeMotionWorld(const sapModel* m, const sapData* d, int w, double h, int explicit_drives,
                                 int midpoint, int pose_fp32, int fp32, const int* ta) {
  sapModel view;
  const sapModel* mw = sapw_worldView(m, w, &view);
  sapWorldContacts con = sapw_worldContacts(d, w);
  sapw_controlInput(m, d, w);  /* the step's control input, read by the stages from here on */
  int fail = fp32 ? sapw_freeMotion_f32(SAPW_FREE_MOTION_ARGS(mw, d, w, h, explicit_drives, midpoint, pose_fp32, float,
                                                              &con), ta)
                  : sapw_freeMotion_f64(SAPW_FREE_MOTION_ARGS(mw, d, w, h, explicit_drives, midpoint, pose_fp32, double,
                                                              &con), ta);
  if (fail)
    for (int i = 0; i < m->nv; i++) d->vstar[(size_t)w * m->nv + i] = (double)NAN;
}

/* integrate world w's positions and activations (sapw_integrateState); a result that is not
 * finite is restored and the world flagged SAP_WORLD_NONFINITE (frozen until reset). Then qvel
 * takes v_{n+1} and vnext keeps v_n until the next solve (the extrapolated warm start), the
 * control histories record ctrl at the step's start time (MuJoCo 4's mj_advance), the world's
 * time advances by h and its iterations are counted */
SAP_HD void sapw_integrateWorld(const sapModel* m, const sapData* d, int w, double h, int midpoint) {
  double* qpos = d->qpos + (size_t)w * m->nq;
  double* qvel = d->qvel + (size_t)w * m->nv;
  double* vnext = d->vnext + (size_t)w * m->nv;
  double* saved = (double*)(d->scratch + (size_t)w * d->nscratch);
  if (!sapw_integrateState(m, midpoint, h, qpos, d->act + (size_t)w * m->na, d->ctrl_in + (size_t)w * m->nu, qvel,
                           vnext, saved)) {
    d->world_flags[w] |= SAP_WORLD_NONFINITE;
    return;
  }
  for (int i = 0; i < m->nv; i++) {
    double t = qvel[i];
    qvel[i] = vnext[i];
    vnext[i] = t;
  }
  for (int u = 0; u < m->nu; u++)
    if (m->actuator_nsample[u] > 0)
      sapw_historyInsert(d->history + (size_t)w * m->nhistory + m->actuator_historyadr[u], m->actuator_nsample[u],
                         d->time[w], d->ctrl[(size_t)w * m->nu + u]);
  if (m->nsensorhist)
    sapw_sensorRecord(m, d->history + (size_t)w * m->nhistory, d->sensor_raw + (size_t)w * m->nsensordata, d->time[w]);
  d->time[w] += h;
  sapw_countIterations(d, w);
}

#endif
