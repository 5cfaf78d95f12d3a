/* History buffers of delayed actuators (MuJoCo 4's actuator delay: an actuator with delay > 0
 * acts on its control of time - delay) and of sensors with a history (below). The buffer and
 * its rules are MuJoCo's (engine_util_misc.c mju_historyInsert / mju_historyRead, engine_forward.c mj_advance,
 * engine_io.c mj_resetData), so that the same control sequence gives the same input:
 *   buf = [user, cursor, times (n), values (n x dim)], a ring of n samples, cursor = the newest;
 *   reset: times -n h, ..., -h (h the timestep), values 0;
 *   each step inserts ctrl at the step's start time (a later sample; an equal time overwrites);
 *   a read at t holds the oldest before the first sample and the newest after the last, else
 *   zero-order hold (the latest sample at or before t), linear, or cubic Hermite with
 *   Catmull-Rom slopes (0 at the ends). An exact time match (within 1e-15) returns the sample. */
#ifndef SAPSIM_KERNELS_HISTORY_H
#define SAPSIM_KERNELS_HISTORY_H

#include <math.h>
#include <stddef.h>

#include "sap_real.h"
#include "sapsim/data.h"
#include "sapsim/model.h"

#define SAP_HISTORY_EPS 1e-15 /* MuJoCo's mjMINVAL */

/* physical slot of logical sample i (0 oldest, n - 1 newest) */
SAP_HD int sapw_historySlot(int cursor, int n, int i) { return (cursor + 1 + i) % n; }

/* the logical i with times[i - 1] < t <= times[i]: 0 at or before the oldest, n after the newest */
SAP_HD int sapw_historyFind(const double* times, int n, int cursor, double t) {
  if (t <= times[sapw_historySlot(cursor, n, 0)]) return 0;
  if (t > times[sapw_historySlot(cursor, n, n - 1)]) return n;
  int lo = 0, hi = n - 1;
  while (hi - lo > 1) {
    int mid = (lo + hi) / 2;
    if (times[sapw_historySlot(cursor, n, mid)] < t) lo = mid;
    else hi = mid;
  }
  return hi;
}

/* reset: samples at -n h, ..., -h, all 0 */
SAP_HD void sapw_historyReset(double* buf, int n, double h) {
  buf[0] = 0;
  buf[1] = n - 1;
  for (int j = 0; j < n; j++) {
    buf[2 + j] = -(n - j) * h;
    buf[2 + n + j] = 0;
  }
}

/* record a sample of dim values at time t; returns its values' place (the caller fills them) */
SAP_HD double* sapw_historyInsertN(double* buf, int n, int dim, double t) {
  int cursor = (int)buf[1];
  double* times = buf + 2;
  double* values = buf + 2 + n;
  int i = sapw_historyFind(times, n, cursor, t), slot;
  if (i < n && fabs(t - times[sapw_historySlot(cursor, n, i)]) < SAP_HISTORY_EPS) {
    slot = sapw_historySlot(cursor, n, i);  // the same time: overwrite
  } else if (i == 0) {
    slot = sapw_historySlot(cursor, n, 0);  // older than the oldest: replaces it
    times[slot] = t;
  } else if (i == n) {
    cursor = (cursor + 1) % n;  // the newest: the ring advances over the oldest
    buf[1] = cursor;
    slot = cursor;
    times[slot] = t;
  } else {
    for (int j = 0; j < i - 1; j++) {  // out of order: shift the older ones down, drop the oldest
      int dst = sapw_historySlot(cursor, n, j), src = sapw_historySlot(cursor, n, j + 1);
      times[dst] = times[src];
      for (int k = 0; k < dim; k++) values[dim * dst + k] = values[dim * src + k];
    }
    slot = sapw_historySlot(cursor, n, i - 1);
    times[slot] = t;
  }
  return values + dim * slot;
}

/* record value x at time t (one value per sample: control histories) */
SAP_HD void sapw_historyInsert(double* buf, int n, double t, double x) { *sapw_historyInsertN(buf, n, 1, t) = x; }

/* the dim values at time t (interp: 0 zero-order hold, 1 linear, 2 cubic) into res */
SAP_HD void sapw_historyReadN(const double* buf, int n, int dim, double t, int interp, double* res) {
  int cursor = (int)buf[1];
  const double* times = buf + 2;
  const double* values = buf + 2 + n;
  int oldest = sapw_historySlot(cursor, n, 0), newest = sapw_historySlot(cursor, n, n - 1), at = -1;
  int i = 0, hi = 0, lo = 0;
  if (t <= times[oldest] + SAP_HISTORY_EPS) at = oldest;
  else if (t >= times[newest] - SAP_HISTORY_EPS) at = newest;
  else {
    i = sapw_historyFind(times, n, cursor, t);
    hi = sapw_historySlot(cursor, n, i);
    lo = sapw_historySlot(cursor, n, i - 1);
    if (fabs(t - times[hi]) < SAP_HISTORY_EPS) at = hi;
    else if (interp == 0) at = lo;
  }
  if (at >= 0) {
    for (int k = 0; k < dim; k++) res[k] = values[dim * at + k];
    return;
  }
  double dt = times[hi] - times[lo], a = (t - times[lo]) / dt;
  double a2 = a * a, a3 = a2 * a;
  double h00 = 2 * a3 - 3 * a2 + 1, h10 = a3 - 2 * a2 + a, h01 = -2 * a3 + 3 * a2, h11 = a3 - a2;
  for (int k = 0; k < dim; k++) {
    double vlo = values[dim * lo + k], vhi = values[dim * hi + k];
    if (interp == 1) {
      res[k] = vlo + a * (vhi - vlo);
      continue;
    }
    double mlo = 0, mhi = 0;
    if (i > 1) {
      int p = sapw_historySlot(cursor, n, i - 2);
      mlo = (vhi - values[dim * p + k]) / (times[hi] - times[p]);
    }
    if (i < n - 1) {
      int q = sapw_historySlot(cursor, n, i + 1);
      mhi = (values[dim * q + k] - vlo) / (times[q] - times[lo]);
    }
    res[k] = h00 * vlo + h10 * dt * mlo + h01 * vhi + h11 * dt * mhi;
  }
}

/* the value at time t of a one-value history */
SAP_HD double sapw_historyRead(const double* buf, int n, double t, int interp) {
  double x;
  sapw_historyReadN(buf, n, 1, t, interp, &x);
  return x;
}

/* ---- sensors with a history (MuJoCo 4's nsample, delay, interval: engine_sensor.c
 * compute_or_read_sensor, engine_forward.c mj_advance, engine_io.c mj_resetData). sapsim
 * computes a sensor at a state (pos/vel sensors after a step, reset or edit; acc sensors in the
 * step) into sensor_raw, and its sensordata is
 *   delay > 0: the history read at time - delay (the samples recorded before this time);
 *   an interval without delay: the computed value at a tick (last tick + period <= time), else
 *     the history read at time (the last tick's value held);
 *   else the computed value.
 * Each step records, at the step's start time, the state's computed values (sapw_sensorRecord):
 * every step with a delay or only a history, at ticks with an interval (the tick advances by
 * exactly one period). buf[0] is the last tick's time. */

/* reset: samples every h (or every period, on the time step's grid, the newest at the first
 * tick before 0: -period, or the phase), all 0 */
SAP_HD void sapw_sensorHistoryReset(const sapModel* m, double* hist, double h) {
  for (int i = 0; i < m->nsensor; i++) {
    int n = m->sensor_nsample[i];
    if (n <= 0) continue;
    double* buf = hist + m->sensor_historyadr[i];
    double period = m->sensor_interval[2 * i], phase = m->sensor_interval[2 * i + 1];
    double t0 = phase == 0 ? -period : phase;
    buf[0] = period > 0 ? t0 : -h;
    buf[1] = n - 1;
    for (int j = 0; j < n; j++) buf[2 + j] = period > 0 ? ceil((t0 - (n - 1 - j) * period) / h) * h : -(n - j) * h;
    for (int j = 0; j < n * m->sensor_dim[i]; j++) buf[2 + n + j] = 0;
  }
}

/* sensordata of the sensors with a history of one stage group (acc: the acceleration stage,
 * else position and velocity) at time t, from their computed values in sensordata (kept in raw) */
SAP_HD void sapw_sensorHistoryOut(const sapModel* m, const double* hist, double* raw, double* sensordata, double t,
                                  int acc) {
  for (int i = 0; i < m->nsensor; i++) {
    int n = m->sensor_nsample[i];
    if (n <= 0 || (m->sensor_stage[i] == SAP_STAGE_ACC) != (acc != 0)) continue;
    int adr = m->sensor_adr[i], dim = m->sensor_dim[i];
    const double* buf = hist + m->sensor_historyadr[i];
    for (int k = 0; k < dim; k++) raw[adr + k] = sensordata[adr + k];
    double delay = m->sensor_delay[i], period = m->sensor_interval[2 * i];
    if (delay > 0) sapw_historyReadN(buf, n, dim, t - delay, m->sensor_interp[i], sensordata + adr);
    else if (period > 0 && !(buf[0] + period <= t))
      sapw_historyReadN(buf, n, dim, t, m->sensor_interp[i], sensordata + adr);
  }
}

/* the step at time t records the sensors' computed values of its start state (raw) */
SAP_HD void sapw_sensorRecord(const sapModel* m, double* hist, const double* raw, double t) {
  for (int i = 0; i < m->nsensor; i++) {
    int n = m->sensor_nsample[i];
    if (n <= 0) continue;
    double* buf = hist + m->sensor_historyadr[i];
    double period = m->sensor_interval[2 * i];
    if (period > 0) {
      if (!(buf[0] + period <= t)) continue;
      buf[0] += period;  // the exact period, continuous time
    }
    int dim = m->sensor_dim[i];
    double* slot = sapw_historyInsertN(buf, n, dim, t);
    for (int k = 0; k < dim; k++) slot[k] = raw[m->sensor_adr[i] + k];
  }
}

/* world w's control input for the step at its time: ctrl, or for a delayed actuator its history
 * read at time - delay (kernels/history.h, MuJoCo 4's mj_readCtrl) */
SAP_HD void sapw_controlInput(const sapModel* m, const sapData* d, int w) {
  const double* ctrl = d->ctrl + (size_t)w * m->nu;
  double* in = d->ctrl_in + (size_t)w * m->nu;
  for (int u = 0; u < m->nu; u++)
    in[u] = m->actuator_delay[u] > 0 && m->actuator_nsample[u] > 0
                ? sapw_historyRead(d->history + (size_t)w * m->nhistory + m->actuator_historyadr[u],
                                   m->actuator_nsample[u], d->time[w] - m->actuator_delay[u], m->actuator_interp[u])
                : ctrl[u];
}

#endif
