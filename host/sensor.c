/* CPU drivers of the sensor stages (kernels/sensor.h), OpenMP over worlds, and the set-up both
 * backends share: where the sensor work area and the SAP impulses sit in a world's scratch.
 * When sensors are computed (README "Sensors"):
 *   after the solve, before integration: acceleration-stage sensors of the step (its start
 *     state, qacc = (v_{n+1} - v_n) / h, forces = SAP impulses / h);
 *   after integration, a reset or a state edit: position/velocity sensors of the new state.
 * A model without sensors runs none of this. */
#include <string.h>

#include "backend.h"
#include "body_out.h"
#include "sensor.h"
#include "sim.h"
#include "world_view.h"

static long align64(long n) { return (n + 63) & ~63L; }

/* bytes of the solve's problem in a world's scratch (0 without contacts); hl_carved: with H and
 * L (GPU), else without (the CPU's solve keeps them per thread, host/solve.c) */
static long problem_bytes(const sapModel* m, const sapOptions* o, int ncon_max, int hl_carved) {
  if (!o->contacts) return 0;
  int lin = o->linear_solve_precision == SAP_FP32 ? 4 : 8;
  return o->contact_solve_precision == SAP_FP32
             ? sapw_problemBytes_f32(m->nv, m->nbody, ncon_max, SAP_SOLVE_CD(m), SAP_SOLVE_NS(m), SAP_SOLVE_NNZ(m), lin,
                                     SAP_SOLVE_NHALF(m), hl_carved)
             : sapw_problemBytes_f64(m->nv, m->nbody, ncon_max, SAP_SOLVE_CD(m), SAP_SOLVE_NS(m), SAP_SOLVE_NNZ(m), lin,
                                     SAP_SOLVE_NHALF(m), hl_carved);
}

long sapc_sensorScratchBytes(const sapModel* m, const sapOptions* o, int ncon_max, int hl_carved) {
  if (m->nsensor == 0) return 0;
  /* the work area lies past the solve's problem: the acceleration stage reads its impulses */
  return align64(problem_bytes(m, o, ncon_max, hl_carved)) + (long)sizeof(double) * sapw_sensorWork(m);
}

void sapc_sensorSetup(sapSim* s) {
  const sapModel* m = s->m;
  s->sensor_work_off = align64(problem_bytes(m, &s->opt, s->d.ncon_max, s->hl_carved));
  s->sensor_gam_off = s->sensor_tag_off = s->sensor_sidx_off = s->sensor_sval_off = 0;
  if ((m->nsensor == 0 && !s->opt.body_outputs) || !s->opt.contacts) return;
  /* the impulses' place in the solver's scratch layout (sapw_carve), measured on world 0's
   * scratch (the same offsets in every world and on the device) */
  int lin = s->opt.linear_solve_precision == SAP_FP32 ? 4 : 8;
  unsigned char* base = s->d.scratch;
  if (s->opt.contact_solve_precision == SAP_FP32) {
    sapProblem_f32 P;
    sapw_carve_f32(&P, base, m->nv, m->nbody, s->d.ncon_max, SAP_SOLVE_CD(m), SAP_SOLVE_NS(m), SAP_SOLVE_NNZ(m), lin,
                   SAP_SOLVE_NHALF(m), s->hl_carved);
    s->sensor_gam_off = (long)((unsigned char*)P.gam - base);
    s->sensor_tag_off = (long)((unsigned char*)P.stag - base);
    s->sensor_sidx_off = (long)((unsigned char*)P.sidx - base);
    s->sensor_sval_off = (long)((unsigned char*)P.sval - base);
  } else {
    sapProblem_f64 P;
    sapw_carve_f64(&P, base, m->nv, m->nbody, s->d.ncon_max, SAP_SOLVE_CD(m), SAP_SOLVE_NS(m), SAP_SOLVE_NNZ(m), lin,
                   SAP_SOLVE_NHALF(m), s->hl_carved);
    s->sensor_gam_off = (long)((unsigned char*)P.gam - base);
    s->sensor_tag_off = (long)((unsigned char*)P.stag - base);
    s->sensor_sidx_off = (long)((unsigned char*)P.sidx - base);
    s->sensor_sval_off = (long)((unsigned char*)P.sval - base);
  }
}

int sapm_accSensors(const sapModel* m) {
  for (int i = 0; i < m->nsensor; i++)
    if (m->sensor_stage[i] == SAP_STAGE_ACC) return 1;
  return 0;
}

void sapc_sensorSolveInfo(const sapSim* s, void* out) {
  sapSensorSolve* S = (sapSensorSolve*)out;
  S->h = s->h;
  S->solved = s->opt.contacts;
  S->gam_off = s->sensor_gam_off;
  S->tag_off = s->sensor_tag_off;
  S->sidx_off = s->sensor_sidx_off;
  S->sval_off = s->sensor_sval_off;
  S->snz = SAP_SOLVE_NNZ(s->m);
  S->ns_max = SAP_SOLVE_NS(s->m);
  S->gam_fp32 = s->opt.contact_solve_precision == SAP_FP32;
  S->cd = SAP_SOLVE_CD(s->m);
  S->midpoint = s->opt.contact_point == SAP_POINT_MIDPOINT;
  S->kdef = s->m->contact_k;
  S->work_off = s->sensor_work_off;
  S->need = sapw_sensorNeeds(s->m, SAP_STAGE_ACC);
}

static void posvel_world(const sapSim* s, int w, int need) {
  sapModel view;  /* the world's parameters (masses for the subtree sensors) */
  const sapModel* m = sapw_worldView(s->m, w, &view);
  const sapData* d = &s->d;
  double* work = (double*)(d->scratch + (size_t)w * d->nscratch + s->sensor_work_off);
  sapw_sensorPosVel(m, need, d->qpos + (size_t)w * m->nq, d->qvel + (size_t)w * m->nv,
                    d->mocap_pos + (size_t)w * m->nmocap * 3, d->mocap_quat + (size_t)w * m->nmocap * 4,
                    d->time[w], d->sensordata + (size_t)w * m->nsensordata, work);
  if (m->nsensorhist)
    sapw_sensorHistoryOut(m, d->history + (size_t)w * m->nhistory, d->sensor_raw + (size_t)w * m->nsensordata,
                          d->sensordata + (size_t)w * m->nsensordata, d->time[w], 0);
}

void sapc_sensorPosVel(sapSim* s, const unsigned char* mask, int skip) {
  if (s->m->nsensor == 0) return;
  int need = sapw_sensorNeeds(s->m, SAP_STAGE_VEL);
#pragma omp parallel for schedule(static) num_threads(sapc_threads(s))
  for (int w = 0; w < s->d.nworld; w++)
    if (mask ? mask[w] != 0 : !(s->d.world_flags[w] & skip)) posvel_world(s, w, need);
}

void sapc_sensorAcc(sapSim* s) {
  if (!sapm_accSensors(s->m)) return;
  sapSensorSolve S;
  sapc_sensorSolveInfo(s, &S);
#pragma omp parallel for schedule(static) num_threads(sapc_threads(s))
  for (int w = 0; w < s->d.nworld; w++)
    if (!sapw_frozen(&s->d, w)) {
      sapModel view;  /* the world's parameters (masses, gravity) */
      sapw_sensorAcc(sapw_worldView(s->m, w, &view), &s->d, w, &S);
    }
}

void sapc_sensorPosVelWorld(sapSim* s, int w) {
  if (s->m->nsensor == 0 || sapw_frozen(&s->d, w)) return;
  posvel_world(s, w, sapw_sensorNeeds(s->m, SAP_STAGE_VEL));
}

void sapc_sensorAccWorld(sapSim* s, int w, double h) {
  if (!sapm_accSensors(s->m) || sapw_frozen(&s->d, w)) return;
  sapSensorSolve S;
  sapc_sensorSolveInfo(s, &S);
  S.h = h;  /* the world's step (a retried world's substep) */
  sapModel view;  /* the world's parameters (masses, gravity) */
  sapw_sensorAcc(sapw_worldView(s->m, w, &view), &s->d, w, &S);
}

void sapc_bodyOutputsWorld(sapSim* s, int w, double h) {
  if (s->d.world_flags[w] & SAP_WORLD_SKIP) return;
  sapSensorSolve S;
  sapc_sensorSolveInfo(s, &S);
  S.h = h;  /* the world's step (a retried world's substep) */
  sapModel view;  /* the world's parameters (masses) */
  const sapModel* m = sapw_worldView(s->m, w, &view);
  sapw_bodyState(m, &s->d, w);
  sapw_bodyForces(m, &s->d, w, &S);
}

void sapc_bodyOutputsState(sapSim* s, const unsigned char* mask) {
  if (!s->opt.body_outputs) return;
  /* the poses of the edited state (a velocity edit leaves the last step's start poses) */
  sapc_kinematicsMasked(s, mask);
#pragma omp parallel for schedule(static) num_threads(sapc_threads(s))
  for (int w = 0; w < s->d.nworld; w++)
    if (mask ? mask[w] != 0 : !(s->d.world_flags[w] & SAP_WORLD_NONFINITE)) {
      sapModel view;
      sapw_bodyStateEdit(sapw_worldView(s->m, w, &view), &s->d, w, s->h);
    }
}
