/* Position integration q_{n+1} = Phi(q_n, v, h) in fp64 (sapwarp_spec.md §8),
 * with MuJoCo's conventions: free joint qvel = (world linear velocity of the body
 * origin, body-frame angular velocity), ball = body-frame angular velocity.
 *   midpoint:  v = (v_n + v_{n+1}) / 2, exact exponential map for rotations
 *   sap_euler: v = v_{n+1}, q' = normalize(q + h/2 q [0, w]) */
#ifndef SAPSIM_INTEGRATE_H
#define SAPSIM_INTEGRATE_H

#include "sapsim/model.h"
#include "sapsim/data.h"
#include "kernels.h"

/* world w's step into its iteration histograms, sums and maxima (sapData.iter_*): called once per
 * integrated world-step, after the solve wrote newton_iter and ls_eval */
SAP_HD void sapw_countIterations(const sapData* d, int w) {
  int* hist = d->iter_hist + (long)w * 2 * SAP_ITER_BINS;
  int a = d->newton_iter[w], b = d->ls_eval[w];
  hist[a < SAP_ITER_BINS - 1 ? a : SAP_ITER_BINS - 1]++;
  hist[SAP_ITER_BINS + (b < SAP_ITER_BINS - 1 ? b : SAP_ITER_BINS - 1)]++;
  d->iter_sum[2 * w] += a;
  d->iter_sum[2 * w + 1] += b;
  int* mx = d->iter_max + 2 * w;
  if (a > mx[0]) mx[0] = a;
  if (b > mx[1]) mx[1] = b;
}

/* bytes the integrator borrows at the start of a world's scratch: its backup of qpos and act,
 * restored when the step's result is not finite (host/step.c integrate_world, kernels/dynamics.cu) */
SAP_HD long sapw_integrateScratchBytes(const sapModel* m) { return (long)sizeof(double) * (m->nq + m->na); }

SAP_HD void sapw_integrate(const sapModel* m, int midpoint, double h, double* qpos,
                           const double* vn, const double* vnext) {
  for (int j = 0; j < m->njnt; j++) {
    int a = m->jnt_qposadr[j], d = m->jnt_dofadr[j], type = m->jnt_type[j];
    double v[6];
    int nd = type == SAP_JNT_FREE ? 6 : type == SAP_JNT_BALL ? 3 : 1;
    for (int k = 0; k < nd; k++) v[k] = midpoint ? 0.5 * (vn[d + k] + vnext[d + k]) : vnext[d + k];
    if (type == SAP_JNT_HINGE || type == SAP_JNT_SLIDE) {
      qpos[a] += h * v[0];
      continue;
    }
    const double* w = v;
    if (type == SAP_JNT_FREE) {
      for (int k = 0; k < 3; k++) qpos[a + k] += h * v[k];
      a += 3;
      w = v + 3;
    }
    if (midpoint) sapu_quatIntegrate_f64(qpos + a, w, h);
    else sapu_quatEuler_f64(qpos + a, w, h);
  }
}

/* one world's step of its state: positions (sapw_integrate above) and activations
 * (kernels/actuator.h, MuJoCo's mj_advance: act_{n+1} from act_n and the step's ctrl), with
 * qpos and act backed up in saved (nq + na); returns 0 and restores both when a result is not
 * finite */
SAP_HD int sapw_integrateState(const sapModel* m, int midpoint, double h, double* qpos, double* act,
                               const double* ctrl, const double* vn, const double* vnext, double* saved) {
  int nq = m->nq, na = m->na, ok = 1;
  for (int i = 0; i < nq; i++) saved[i] = qpos[i];
  for (int i = 0; i < na; i++) saved[nq + i] = act[i];
  sapw_integrate(m, midpoint, h, qpos, vn, vnext);
  sapa_integrate(m, h, ctrl, act);
  for (int i = 0; i < nq && ok; i++) ok = isfinite(qpos[i]);
  for (int i = 0; i < na && ok; i++) ok = isfinite(act[i]);
  for (int i = 0; i < m->nv && ok; i++) ok = isfinite(vnext[i]);
  if (ok) return 1;
  for (int i = 0; i < nq; i++) qpos[i] = saved[i];
  for (int i = 0; i < na; i++) act[i] = saved[nq + i];
  return 0;
}

#endif
