/* CUDA launchers of the foundation stages: kinematics, free motion and
 * integration, one thread per world running the same per-world bodies as the
 * CPU backend (kernels.h); free motion also on one warp per world (option
 * free_motion_kernel, dynamics_warp_t.h). */
#include "cuda_check.h"
#include "integrate.h"
#include "dynamics_warp.h"
#include "kernels.h"
#include "world_view.h"

/* threads per block of these one-thread-per-world kernels: option world_block_threads */
#define THREADS (L->opt->world_block_threads)

static __global__ void kinematics_kernel(SAPG_PARAM sapModel m, SAPG_PARAM sapData d, int fp32) {
  int w = blockIdx.x * blockDim.x + threadIdx.x;
  if (w >= d.nworld || (d.world_flags[w] & SAP_WORLD_SKIP)) return;
  size_t b3 = (size_t)w * m.nbody * 3, b4 = (size_t)w * m.nbody * 4, b9 = (size_t)w * m.nbody * 9;
  size_t j3 = (size_t)w * m.njnt * 3, g3 = (size_t)w * m.ngeom * 3, g9 = (size_t)w * m.ngeom * 9;
  const double* qpos = d.qpos + (size_t)w * m.nq;
  const double* mpos = d.mocap_pos + (size_t)w * m.nmocap * 3;
  const double* mquat = d.mocap_quat + (size_t)w * m.nmocap * 4;
  if (fp32)
    sapw_kinematics_f32(&m, qpos, mpos, mquat, d.xpos + b3, d.xquat + b4, d.xmat + b9, d.xipos + b3,
                        d.ximat + b9, d.xanchor + j3, d.xaxis + j3, d.geom_xpos + g3,
                        d.geom_xmat + g9);
  else
    sapw_kinematics_f64(&m, qpos, mpos, mquat, d.xpos + b3, d.xquat + b4, d.xmat + b9, d.xipos + b3,
                        d.ximat + b9, d.xanchor + j3, d.xaxis + j3, d.geom_xpos + g3,
                        d.geom_xmat + g9);
}

sapStatus sapg_kinematics(const sapgLaunch* L) {
  int fp32 = L->opt->boundary_pose_precision == SAP_FP32;
  SAPG_LAUNCH(kinematics_kernel, sapg_blocks(L->d.nworld, THREADS), THREADS, SAPG_STREAM(L))(L->m, L->d, fp32);
  SAPG_CHECK_LAUNCH("kinematics");
  return SAP_OK;
}

/* the free-motion arguments of world w (locals of both kernels below: m, d, mw, h,
 * explicit_drives, midpoint, w, nv, nb, v, scratch), T the scratch's precision */
#define FREE_MOTION_ARGS(T)                                                                \
  mw, h, explicit_drives, midpoint, d.qpos + (size_t)w * m.nq, d.qvel + v, d.ctrl + (size_t)w * m.nu,  \
      d.act + (size_t)w * m.na, d.qfrc_applied + v, d.xfrc_applied + 6 * nb * w, d.xpos + 3 * nb * w, d.xmat + 9 * nb * w, d.xipos + 3 * nb * w,    \
      d.ximat + 9 * nb * w, d.xanchor + 3 * (size_t)m.njnt * w,                              \
      d.xaxis + 3 * (size_t)m.njnt * w, d.cref + 3 * nb * w, d.cdof + 6 * nv * w,            \
      d.qA + (size_t)nv * nv * w, d.qfrc_bias + v, d.qfrc_passive + v, d.qfrc_actuator + v,  \
      d.vstar + v, (T*)scratch

static __global__ void free_motion_kernel(SAPG_PARAM sapModel m, SAPG_PARAM sapData d, double h, int explicit_drives,
                                          int midpoint, int fp32) {
  int w = blockIdx.x * blockDim.x + threadIdx.x;
  if (w >= d.nworld || (d.world_flags[w] & SAP_WORLD_SKIP)) return;
  size_t nv = m.nv, nb = m.nbody, v = w * nv;
  void* scratch = d.scratch + (size_t)w * d.nscratch;
  int fail;
  sapModel view;  /* the world's parameters: the model itself unless w overrides some */
  const sapModel* mw = sapw_worldView(&m, w, &view);
  if (fp32) fail = sapw_freeMotion_f32(FREE_MOTION_ARGS(float));
  else fail = sapw_freeMotion_f64(FREE_MOTION_ARGS(double));
  if (fail)
    for (size_t i = 0; i < nv; i++) d.vstar[v + i] = nan("");
}

/* the same on one warp per world: items over the lanes (dynamics_warp_t.h) */
static __global__ void free_motion_warp_kernel(SAPG_PARAM sapModel m, SAPG_PARAM sapData d, double h,
                                               int explicit_drives, int midpoint, int fp32) {
  int w = (blockIdx.x * blockDim.x + threadIdx.x) / SAPV_LANES, lane = threadIdx.x % SAPV_LANES;
  if (w >= d.nworld || (d.world_flags[w] & SAP_WORLD_SKIP)) return;
  size_t nv = m.nv, nb = m.nbody, v = w * nv;
  void* scratch = d.scratch + (size_t)w * d.nscratch;
  int fail;
  sapModel view;  /* the world's parameters: the model itself unless w overrides some */
  const sapModel* mw = sapw_worldView(&m, w, &view);
  if (fp32) fail = sapv_freeMotion_f32(FREE_MOTION_ARGS(float), lane);
  else fail = sapv_freeMotion_f64(FREE_MOTION_ARGS(double), lane);
  if (fail)
    for (size_t i = lane; i < nv; i += SAPV_LANES) d.vstar[v + i] = nan("");
}

#undef FREE_MOTION_ARGS

sapStatus sapg_freeMotion(const sapgLaunch* L) {
  int fp32 = L->opt->free_motion_precision == SAP_FP32;
  int midpoint = L->opt->integration == SAP_INTEGRATE_MIDPOINT;
  if (L->opt->free_motion_kernel == SAP_FREE_MOTION_WARP) {
    /* world_block_threads / 32 worlds (warps) per block */
    int wpb = THREADS / SAPV_LANES > 0 ? THREADS / SAPV_LANES : 1;
    SAPG_LAUNCH(free_motion_warp_kernel, sapg_blocks(L->d.nworld, wpb), wpb * SAPV_LANES, SAPG_STREAM(L))(
        L->m, L->d, L->h, !L->opt->contacts, midpoint, fp32);
    SAPG_CHECK_LAUNCH("free_motion_warp");
    return SAP_OK;
  }
  SAPG_LAUNCH(free_motion_kernel, sapg_blocks(L->d.nworld, THREADS), THREADS, SAPG_STREAM(L))(
      L->m, L->d, L->h, !L->opt->contacts, midpoint, fp32);
  SAPG_CHECK_LAUNCH("free_motion");
  return SAP_OK;
}

static __device__ int all_finite(const double* x, int n) {
  for (int i = 0; i < n; i++)
    if (!isfinite(x[i])) return 0;
  return 1;
}

/* integrate positions and activations; a non-finite world is restored and frozen (SAP_WORLD_NONFINITE) */
static __global__ void integrate_kernel(SAPG_PARAM sapModel m, SAPG_PARAM sapData d, double h, int midpoint) {
  int w = blockIdx.x * blockDim.x + threadIdx.x;
  if (w >= d.nworld || (d.world_flags[w] & SAP_WORLD_SKIP)) return;
  double* qpos = d.qpos + (size_t)w * m.nq;
  double* qvel = d.qvel + (size_t)w * m.nv;
  const double* vnext = d.vnext + (size_t)w * m.nv;
  double* saved = (double*)(d.scratch + (size_t)w * d.nscratch);
  if (!sapw_integrateState(&m, midpoint, h, qpos, d.act + (size_t)w * m.na, d.ctrl + (size_t)w * m.nu, qvel,
                           vnext, saved)) {
    d.world_flags[w] |= SAP_WORLD_NONFINITE;
    return;
  }
  /* qvel takes v_{n+1}; vnext keeps v_n until the next solve (the extrapolated warm start) */
  double* vswap = d.vnext + (size_t)w * m.nv;
  for (int i = 0; i < m.nv; i++) {
    double t = qvel[i];
    qvel[i] = vswap[i];
    vswap[i] = t;
  }
  d.time[w] += h;
  sapw_countIterations(&d, w);
}

sapStatus sapg_integrate(const sapgLaunch* L) {
  SAPG_LAUNCH(integrate_kernel, sapg_blocks(L->d.nworld, THREADS), THREADS, SAPG_STREAM(L))(
      L->m, L->d, L->h, L->opt->integration == SAP_INTEGRATE_MIDPOINT);
  SAPG_CHECK_LAUNCH("integrate");
  return SAP_OK;
}

/* per-step flag reset: keep only SAP_WORLD_NONFINITE; a non-finite control or
 * applied force refuses this step of the world (SAP_WORLD_BADINPUT) */
static __global__ void clear_flags_kernel(SAPG_PARAM sapModel m, SAPG_PARAM sapData d) {
  int w = blockIdx.x * blockDim.x + threadIdx.x;
  if (w >= d.nworld) return;
  d.world_flags[w] &= SAP_WORLD_NONFINITE;
  d.newton_iter[w] = d.ls_iter[w] = d.nfactor[w] = d.ls_eval[w] = 0;
  if (!all_finite(d.ctrl + (size_t)w * m.nu, m.nu) || !all_finite(d.qfrc_applied + (size_t)w * m.nv, m.nv) ||
      !all_finite(d.xfrc_applied + (size_t)w * m.nbody * 6, m.nbody * 6))
    d.world_flags[w] |= SAP_WORLD_BADINPUT;
}


sapStatus sapg_clearFlags(const sapgLaunch* L) {
  SAPG_LAUNCH(clear_flags_kernel, sapg_blocks(L->d.nworld, THREADS), THREADS, SAPG_STREAM(L))(L->m, L->d);
  SAPG_CHECK_LAUNCH("clear_flags");
  return SAP_OK;
}
