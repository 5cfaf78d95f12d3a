/* CUDA launchers of the sensor stages: one thread per world running the per-world sensor
 * bodies of the CPU backend (kernels/sensor.h; host/sensor.c has the CPU drivers and the
 * scratch offsets). Sensors are light next to the solve; this is the reference layout. */
#include "body_out.h"
#include "cuda_check.h"
#include "sensor.h"
#include "world_view.h"

/* threads per block of these one-thread-per-world kernels: option world_block_threads */
#define THREADS (L->opt->world_block_threads)

static __global__ void sensor_posvel_kernel(SAPG_PARAM sapModel m, SAPG_PARAM sapData d, long work_off, int skip, int need) {
  int w = blockIdx.x * blockDim.x + threadIdx.x;
  if (w >= d.nworld || (d.world_flags[w] & (skip | SAPW_WORLD_HELD))) return;
  double* work = (double*)(d.scratch + (size_t)w * d.nscratch + work_off);
  sapModel view;  /* the world's parameters (masses for the subtree sensors) */
  sapw_sensorPosVel(sapw_worldView(&m, w, &view), need, d.qpos + (size_t)w * m.nq, d.qvel + (size_t)w * m.nv,
                    d.mocap_pos + (size_t)w * m.nmocap * 3, d.mocap_quat + (size_t)w * m.nmocap * 4,
                    d.time[w], d.sensordata + (size_t)w * m.nsensordata, work);
  if (m.nsensorhist)
    sapw_sensorHistoryOut(&m, d.history + (size_t)w * m.nhistory, d.sensor_raw + (size_t)w * m.nsensordata,
                          d.sensordata + (size_t)w * m.nsensordata, d.time[w], 0);
}

sapStatus sapg_sensorPosVel(const sapgLaunch* L, int skip) {
  SAPG_LAUNCH(sensor_posvel_kernel, sapg_blocks(L->d.nworld, THREADS), THREADS, SAPG_STREAM(L))(
      L->m, L->d, L->sensor_work_off, skip, sapw_sensorNeeds(L->hm, SAP_STAGE_VEL));
  SAPG_CHECK_LAUNCH("sensor_posvel");
  return SAP_OK;
}

/* S.h: the step, or world_h[w] when given (each world's own step: the step retry's substeps) */
static __global__ void sensor_acc_kernel(SAPG_PARAM sapModel m, SAPG_PARAM sapData d, SAPG_PARAM sapSensorSolve S,
                                         const double* world_h) {
  int w = blockIdx.x * blockDim.x + threadIdx.x;
  if (w >= d.nworld || sapw_frozen(&d, w)) return;
  sapModel view;  /* the world's parameters (masses, gravity) */
  sapSensorSolve own;
  const sapSensorSolve* Sw = &S;
  if (world_h) {
    own = S;
    own.h = world_h[w];
    Sw = &own;
  }
  sapw_sensorAcc(sapw_worldView(&m, w, &view), &d, w, Sw);
}

sapStatus sapg_sensorAcc(const sapgLaunch* L, const sapSensorSolve* S) {
  SAPG_LAUNCH(sensor_acc_kernel, sapg_blocks(L->d.nworld, THREADS), THREADS, SAPG_STREAM(L))(L->m, L->d, *S, L->world_h);
  SAPG_CHECK_LAUNCH("sensor_acc");
  return SAP_OK;
}

/* MuJoCo's com-based body outputs (option body_outputs, kernels/body_out.h) */
static __global__ void body_state_kernel(SAPG_PARAM sapModel m, SAPG_PARAM sapData d, double h,
                                         const unsigned char* mask) {
  int w = blockIdx.x * blockDim.x + threadIdx.x;
  if (w >= d.nworld || (mask ? !mask[w] : (d.world_flags[w] & SAP_WORLD_NONFINITE))) return;
  sapModel view;  /* the world's parameters (masses) */
  sapData dw = d;  /* the arrays it writes are the twin's */
  sapw_bodyStateEdit(sapw_worldView(&m, w, &view), &dw, w, h);
}

sapStatus sapg_bodyState(const sapgLaunch* L, int masked) {
  SAPG_LAUNCH(body_state_kernel, sapg_blocks(L->d.nworld, THREADS), THREADS, SAPG_STREAM(L))(
      L->m, L->d, L->h, masked ? L->mask : (const unsigned char*)0);
  SAPG_CHECK_LAUNCH("body_state");
  return SAP_OK;
}

static __global__ void body_forces_kernel(SAPG_PARAM sapModel m, SAPG_PARAM sapData d, SAPG_PARAM sapSensorSolve S,
                                          const double* world_h) {
  int w = blockIdx.x * blockDim.x + threadIdx.x;
  if (w >= d.nworld || sapw_frozen(&d, w)) return;
  sapModel view;  /* the world's parameters (masses) */
  const sapModel* mw = sapw_worldView(&m, w, &view);
  sapData dw = d;  /* the arrays it writes are the twin's */
  sapSensorSolve own = S;  /* at the world's own step (retry) */
  if (world_h) own.h = world_h[w];
  sapw_bodyState(mw, &dw, w);
  sapw_bodyForces(mw, &dw, w, &own);
}

sapStatus sapg_bodyForces(const sapgLaunch* L, const sapSensorSolve* S) {
  SAPG_LAUNCH(body_forces_kernel, sapg_blocks(L->d.nworld, THREADS), THREADS, SAPG_STREAM(L))(L->m, L->d, *S, L->world_h);
  SAPG_CHECK_LAUNCH("body_forces");
  return SAP_OK;
}
