/* Control history buffers of delayed actuators (MuJoCo 4's actuator delay: an actuator with
 * delay > 0 acts on its control of time - delay). The buffer and its rules are MuJoCo's
 * (engine_util_misc.c mju_historyInsert / mju_historyRead, engine_forward.c mj_advance,
 * engine_io.c mj_resetData), so that the same control sequence gives the same input:
 *   buf = [user, cursor, times (n), values (n)], a ring of n samples, cursor = the newest;
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

/* record value x at time t */
SAP_HD void sapw_historyInsert(double* buf, int n, double t, double x) {
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
      values[dst] = values[src];
    }
    slot = sapw_historySlot(cursor, n, i - 1);
    times[slot] = t;
  }
  values[slot] = x;
}

/* the value at time t (interp: 0 zero-order hold, 1 linear, 2 cubic) */
SAP_HD double sapw_historyRead(const double* buf, int n, double t, int interp) {
  int cursor = (int)buf[1];
  const double* times = buf + 2;
  const double* values = buf + 2 + n;
  int oldest = sapw_historySlot(cursor, n, 0), newest = sapw_historySlot(cursor, n, n - 1);
  if (t <= times[oldest] + SAP_HISTORY_EPS) return values[oldest];
  if (t >= times[newest] - SAP_HISTORY_EPS) return values[newest];
  int i = sapw_historyFind(times, n, cursor, t), hi = sapw_historySlot(cursor, n, i);
  if (fabs(t - times[hi]) < SAP_HISTORY_EPS) return values[hi];
  int lo = sapw_historySlot(cursor, n, i - 1);
  if (interp == 0) return values[lo];
  double dt = times[hi] - times[lo], a = (t - times[lo]) / dt;
  if (interp == 1) return values[lo] + a * (values[hi] - values[lo]);
  double a2 = a * a, a3 = a2 * a;
  double h00 = 2 * a3 - 3 * a2 + 1, h10 = a3 - 2 * a2 + a, h01 = -2 * a3 + 3 * a2, h11 = a3 - a2;
  double mlo = 0, mhi = 0;
  if (i > 1) {
    int p = sapw_historySlot(cursor, n, i - 2);
    mlo = (values[hi] - values[p]) / (times[hi] - times[p]);
  }
  if (i < n - 1) {
    int q = sapw_historySlot(cursor, n, i + 1);
    mhi = (values[q] - values[lo]) / (times[q] - times[lo]);
  }
  return h00 * values[lo] + h10 * dt * mlo + h01 * values[hi] + h11 * dt * mhi;
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
