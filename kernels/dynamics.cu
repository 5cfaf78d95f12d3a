/* CUDA launchers of the foundation stages: kinematics, free motion and
 * integration, one thread per world running the same per-world entries as the
 * CPU backend (world_stages.h); free motion also on one warp per world (option
 * free_motion_kernel, dynamics_warp_t.h). */
#include "cuda_check.h"
#include "dynamics_warp.h"
#include "world_stages.h"

/* threads per block of these one-thread-per-world kernels: option world_block_threads */
#define THREADS (L->opt->world_block_threads)

static __global__ void kinematics_kernel(SAPG_PARAM sapModel m, SAPG_PARAM sapData d, int fp32) {
  int w = blockIdx.x * blockDim.x + threadIdx.x;
  if (w >= d.nworld || sapw_frozen(&d, w)) return;
  sapw_kinematicsWorld(&m, &d, w, fp32, (const int*)0);  /* the CUDA backend refuses sleep */
}

sapStatus sapg_kinematics(const sapgLaunch* L) {
  int fp32 = L->opt->boundary_pose_precision == SAP_FP32;
  SAPG_LAUNCH(kinematics_kernel, sapg_blocks(L->d.nworld, THREADS), THREADS, SAPG_STREAM(L))(L->m, L->d, fp32);
  SAPG_CHECK_LAUNCH("kinematics");
  return SAP_OK;
}

/* h: the step, or world_h[w] when given (each world's own step: the step retry's substeps) */
static __global__ void free_motion_kernel(SAPG_PARAM sapModel m, SAPG_PARAM sapData d, double h, const double* world_h,
                                          int explicit_drives, int midpoint, int pose_fp32, int fp32) {
  int w = blockIdx.x * blockDim.x + threadIdx.x;
  if (w >= d.nworld || sapw_frozen(&d, w)) return;
  if (world_h) h = world_h[w];
  sapw_freeMotionWorld(&m, &d, w, h, explicit_drives, midpoint, pose_fp32, fp32, (const int*)0);
}

/* the same on one warp per world: items over the lanes (dynamics_warp_t.h) */
static __global__ void free_motion_warp_kernel(SAPG_PARAM sapModel m, SAPG_PARAM sapData d, double h,
                                               const double* world_h, int explicit_drives, int midpoint,
                                               int pose_fp32, int fp32) {
  int w = (blockIdx.x * blockDim.x + threadIdx.x) / SAPV_LANES, lane = threadIdx.x % SAPV_LANES;
  if (w >= d.nworld || sapw_frozen(&d, w)) return;
  if (world_h) h = world_h[w];
  sapModel view;  /* the world's parameters: the model itself unless w overrides some */
  const sapModel* mw = sapw_worldView(&m, w, &view);
  sapWorldContacts con = sapw_worldContacts(&d, w);
  if (lane == 0) sapw_controlInput(&m, &d, w);  /* the step's control input (sapw_freeMotionWorld) */
  __syncwarp();
  int fail = fp32 ? sapv_freeMotion_f32(SAPW_FREE_MOTION_ARGS(mw, &d, w, h, explicit_drives, midpoint, pose_fp32, float,
                                                              &con), lane)
                  : sapv_freeMotion_f64(SAPW_FREE_MOTION_ARGS(mw, &d, w, h, explicit_drives, midpoint, pose_fp32, double,
                                                              &con), lane);
  if (fail)
    for (int i = lane; i < m.nv; i += SAPV_LANES) d.vstar[(size_t)w * m.nv + i] = nan("");
}

sapStatus sapg_freeMotion(const sapgLaunch* L) {
  int fp32 = L->opt->free_motion_precision == SAP_FP32;
  int midpoint = L->opt->integration == SAP_INTEGRATE_MIDPOINT;
  int pose_fp32 = L->opt->boundary_pose_precision == SAP_FP32;  /* the kinematics' precision */
  if (L->opt->free_motion_kernel == SAP_FREE_MOTION_WARP) {
    /* world_block_threads / 32 worlds (warps) per block */
    int wpb = THREADS / SAPV_LANES > 0 ? THREADS / SAPV_LANES : 1;
    SAPG_LAUNCH(free_motion_warp_kernel, sapg_blocks(L->d.nworld, wpb), wpb * SAPV_LANES, SAPG_STREAM(L))(
        L->m, L->d, L->h, L->world_h, !L->opt->contacts, midpoint, pose_fp32, fp32);
    SAPG_CHECK_LAUNCH("free_motion_warp");
    return SAP_OK;
  }
  SAPG_LAUNCH(free_motion_kernel, sapg_blocks(L->d.nworld, THREADS), THREADS, SAPG_STREAM(L))(
      L->m, L->d, L->h, L->world_h, !L->opt->contacts, midpoint, pose_fp32, fp32);
  SAPG_CHECK_LAUNCH("free_motion");
  return SAP_OK;
}

/* integrate positions and activations; a non-finite world is restored and frozen (SAP_WORLD_NONFINITE) */
static __global__ void integrate_kernel(SAPG_PARAM sapModel m, SAPG_PARAM sapData d, double h, const double* world_h,
                                        int midpoint) {
  int w = blockIdx.x * blockDim.x + threadIdx.x;
  if (w >= d.nworld || sapw_frozen(&d, w)) return;
  sapw_integrateWorld(&m, &d, w, world_h ? world_h[w] : h, midpoint);
}

sapStatus sapg_integrate(const sapgLaunch* L) {
  SAPG_LAUNCH(integrate_kernel, sapg_blocks(L->d.nworld, THREADS), THREADS, SAPG_STREAM(L))(
      L->m, L->d, L->h, L->world_h, L->opt->integration == SAP_INTEGRATE_MIDPOINT);
  SAPG_CHECK_LAUNCH("integrate");
  return SAP_OK;
}

/* per-step flag reset (sapw_clearWorldFlags); a world held by the step retry keeps its step's */
static __global__ void clear_flags_kernel(SAPG_PARAM sapModel m, SAPG_PARAM sapData d) {
  int w = blockIdx.x * blockDim.x + threadIdx.x;
  if (w >= d.nworld || sapw_held(&d, w)) return;
  sapw_clearWorldFlags(&m, &d, w);
}

sapStatus sapg_clearFlags(const sapgLaunch* L) {
  SAPG_LAUNCH(clear_flags_kernel, sapg_blocks(L->d.nworld, THREADS), THREADS, SAPG_STREAM(L))(L->m, L->d);
  SAPG_CHECK_LAUNCH("clear_flags");
  return SAP_OK;
}
