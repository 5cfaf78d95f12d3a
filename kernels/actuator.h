/* Actuator activation dynamics and force laws in fp64 (reference; shared by the CPU and GPU
 * paths: free motion, SAP drive rows, sensors, integration). Follows MuJoCo 4's engine:
 * mj_fwdActuation (act_dot, force = gain * input + bias), mj_nextActivation (Euler, exact
 * filter, actrange clamp), mju_muscleGain / mju_muscleBias / mju_muscleDynamics
 * (engine_util_misc.c), so MuJoCo is the direct oracle (tests/test_actdyn.c). */
#ifndef SAPSIM_ACTUATOR_H
#define SAPSIM_ACTUATOR_H

#include "sap_real.h"
#include "sapsim/model.h"

#define SAP_MINVAL 1e-15 /* MuJoCo's mjMINVAL */

SAP_HD double sapa_clip(double x, double lo, double hi) { return x < lo ? lo : (x > hi ? hi : x); }
SAP_HD double sapa_max(double a, double b) { return a > b ? a : b; }

/* quintic sigmoid on [0, 1] (mju_sigmoid): 6x^5 - 15x^4 + 10x^3 */
SAP_HD double sapa_sigmoid(double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  return x * x * x * (3 * x * (2 * x - 5) + 10);
}

/* normalized muscle length-gain curve (mju_muscleGainLength) */
SAP_HD double sapa_muscleGainLength(double L, double lmin, double lmax) {
  if (!(lmin <= L && L <= lmax)) return 0;
  double a = 0.5 * (lmin + 1), b = 0.5 * (1 + lmax), x;
  if (L <= a) {
    x = (L - lmin) / sapa_max(SAP_MINVAL, a - lmin);
    return 0.5 * x * x;
  }
  if (L <= 1) {
    x = (1 - L) / sapa_max(SAP_MINVAL, 1 - a);
    return 1 - 0.5 * x * x;
  }
  if (L <= b) {
    x = (L - 1) / sapa_max(SAP_MINVAL, b - 1);
    return 1 - 0.5 * x * x;
  }
  x = (lmax - L) / sapa_max(SAP_MINVAL, lmax - b);
  return 0.5 * x * x;
}

/* peak force F (scale / acc0 when force < 0) and optimal length L0 of a muscle;
 * prm = range[2], force, scale, lmin, lmax, vmax, fpmax, fvmax */
SAP_HD void sapa_muscleScale(const double* lr, double acc0, const double* prm, double* F, double* L0) {
  *F = prm[2] < 0 ? prm[3] / sapa_max(SAP_MINVAL, acc0) : prm[2];
  *L0 = (lr[1] - lr[0]) / sapa_max(SAP_MINVAL, prm[1] - prm[0]);
}

/* active muscle force per unit activation (mju_muscleGain): -F FL(L) FV(V) */
SAP_HD double sapa_muscleGain(double len, double vel, const double* lr, double acc0, const double* prm) {
  double F, L0;
  sapa_muscleScale(lr, acc0, prm, &F, &L0);
  double L = prm[0] + (len - lr[0]) / sapa_max(SAP_MINVAL, L0);
  double V = vel / sapa_max(SAP_MINVAL, L0 * prm[6]);
  double FL = sapa_muscleGainLength(L, prm[4], prm[5]);
  double fvmax = prm[8], y = fvmax - 1, FV;
  if (V <= -1) FV = 0;
  else if (V <= 0) FV = (V + 1) * (V + 1);
  else if (V <= y) FV = fvmax - (y - V) * (y - V) / sapa_max(SAP_MINVAL, y);
  else FV = fvmax;
  return -F * FL * FV;
}

/* passive muscle force (mju_muscleBias): half-quadratic to (1 + lmax) / 2, linear beyond */
SAP_HD double sapa_muscleBias(double len, const double* lr, double acc0, const double* prm) {
  double F, L0;
  sapa_muscleScale(lr, acc0, prm, &F, &L0);
  double L = prm[0] + (len - lr[0]) / sapa_max(SAP_MINVAL, L0);
  double b = 0.5 * (1 + prm[5]), fpmax = prm[7];
  if (L <= 1) return 0;
  double x = (L - 1) / sapa_max(SAP_MINVAL, b - 1);
  if (L <= b) return -F * fpmax * 0.5 * x * x;
  x = (L - b) / sapa_max(SAP_MINVAL, b - 1);
  return -F * fpmax * (0.5 + x);
}

/* muscle activation rate (mju_muscleDynamics, Millard et al. 2013 time scales);
 * prm = tau_act, tau_deact, smoothing width */
SAP_HD double sapa_muscleDynamics(double ctrl, double act, const double* prm) {
  double c = sapa_clip(ctrl, 0, 1), a = sapa_clip(act, 0, 1);
  double tau_act = prm[0] * (0.5 + 1.5 * a), tau_deact = prm[1] / (0.5 + 1.5 * a);
  double dctrl = c - act, tau;
  if (prm[2] < SAP_MINVAL) tau = dctrl > 0 ? tau_act : tau_deact;
  else tau = tau_deact + (tau_act - tau_deact) * sapa_sigmoid(dctrl / prm[2] + 0.5);
  return dctrl / sapa_max(SAP_MINVAL, tau);
}

/* ctrl of actuator u clamped to its range (MuJoCo's local copy in mj_fwdActuation) */
SAP_HD double sapa_ctrl(const sapModel* m, int u, const double* ctrl) {
  double c = ctrl[u];
  if (m->actuator_ctrllimited[u]) c = sapa_clip(c, m->actuator_ctrlrange[2 * u], m->actuator_ctrlrange[2 * u + 1]);
  return c;
}

/* the activation of actuator u (one state, dyntype != NONE) after a step of h from act with
 * the step's ctrl (mj_fwdActuation's act_dot, then mj_nextActivation) */
SAP_HD double sapa_actNext(const sapModel* m, int u, double h, const double* ctrl, const double* act) {
  int dt = m->actuator_dyntype[u];
  const double* prm = m->actuator_dynprm + 3 * u;
  double c = sapa_ctrl(m, u, ctrl), a = act[m->actuator_actadr[u]], adot, next;
  if (dt == SAP_DYN_INTEGRATOR) adot = c;
  else if (dt == SAP_DYN_MUSCLE) adot = sapa_muscleDynamics(c, a, prm);
  else adot = (c - a) / sapa_max(SAP_MINVAL, prm[0]);  // filter, filterexact
  if (dt == SAP_DYN_FILTEREXACT) {
    /* act(h) = act(0) + act_dot(0) tau (1 - exp(-h / tau)) */
    double tau = sapa_max(SAP_MINVAL, prm[0]);
    next = a + adot * tau * (1 - exp(-h / tau));
  } else {
    next = a + adot * h;
  }
  if (m->actuator_actlimited[u]) next = sapa_clip(next, m->actuator_actrange[2 * u], m->actuator_actrange[2 * u + 1]);
  return next;
}

/* the input u of actuator u's law: clamped ctrl, or act (the next act when actearly) */
SAP_HD double sapa_input(const sapModel* m, int u, double h, const double* ctrl, const double* act) {
  if (m->actuator_dyntype[u] == SAP_DYN_NONE) return sapa_ctrl(m, u, ctrl);
  if (m->actuator_actearly[u]) return sapa_actNext(m, u, h, ctrl, act);
  return act[m->actuator_actadr[u]];
}

/* MuJoCo 4's wrapSetpoint: a servo's input x on a rotational transmission with period P
 * (actuator_wrap) taken as its representative nearest the length, x - P round((x - len) / P) */
SAP_HD double sapa_wrapSetpoint(const sapModel* m, int u, double x, double len) {
  double P = m->actuator_wrap[u];
  return P > 0 ? x - P * round((x - len) / P) : x;
}

/* explicit force of actuator u with input x at transmission length len and velocity vel,
 * before its force limit (motor, position, velocity: the sapModel laws; muscle and general:
 * G x + B, G = the muscle curve or gain + gainslope . (len, vel), B = the muscle curve or
 * bias - kp len - kv vel: MuJoCo's affine gain and bias) */
SAP_HD double sapa_forceRaw(const sapModel* m, int u, double x, double len, double vel) {
  int kind = m->actuator_kind[u];
  x = sapa_wrapSetpoint(m, u, x, len);
  double t = m->actuator_gain[u] * x + m->actuator_bias[u], f;
  if (kind == SAP_ACT_MOTOR) f = t;
  else if (kind == SAP_ACT_POSITION) f = m->actuator_kp[u] * (t - len) - m->actuator_kv[u] * vel;
  else if (kind == SAP_ACT_VELOCITY) f = m->actuator_kv[u] * (t - vel);
  else {
    int mus = m->actuator_muscle[u];
    const double* lr = m->actuator_lengthrange + 2 * u;
    double acc0 = m->actuator_acc0[u];
    const double* gs = m->actuator_gainslope + 2 * u;
    double G = (mus & SAP_MUSCLE_GAIN) ? sapa_muscleGain(len, vel, lr, acc0, m->actuator_gainprm + SAP_NMUSCLEPRM * u)
                                       : m->actuator_gain[u];
    if (!(mus & SAP_MUSCLE_GAIN) && (gs[0] != 0 || gs[1] != 0)) G = G + gs[0] * len + gs[1] * vel;
    double B = (mus & SAP_MUSCLE_BIAS) ? sapa_muscleBias(len, lr, acc0, m->actuator_biasprm + SAP_NMUSCLEPRM * u)
                                       : m->actuator_bias[u] - m->actuator_kp[u] * len - m->actuator_kv[u] * vel;
    f = G * x + B;
  }
  return f;
}

/* a raw force's limits in MuJoCo's order (mj_fwdActuation): scaled by range / total when the
 * actuator's tendon limits its actuators' summed force (tendon_actfrcsum; total: that sum of
 * raw forces, 0 leaves f as it is), then clamped to forcerange */
SAP_HD double sapa_forceLimit(const sapModel* m, int u, double f, double total) {
  int t = m->actuator_trnid[u];
  if (m->actuator_trntype[u] == SAP_TRN_TENDON && m->tendon_actfrcsum[t] && total != 0) {
    const double* r = m->tendon_actfrcrange + 2 * t;
    if (total < r[0]) f *= r[0] / total;
    else if (total > r[1]) f *= r[1] / total;
  }
  if (m->actuator_forcelimited[u]) f = sapa_clip(f, m->actuator_forcerange[2 * u], m->actuator_forcerange[2 * u + 1]);
  return f;
}

/* one step of every activation: act_{n+1} = sapa_actNext (mj_advance); in place is safe as
 * each actuator reads only its own state */
SAP_HD void sapa_integrate(const sapModel* m, double h, const double* ctrl, double* act) {
  if (m->actuation_off) return;  /* MuJoCo's mj_advance leaves act as it is */
  for (int u = 0; u < m->nu; u++) {
    if (m->actuator_dyntype[u] == SAP_DYN_NONE) continue;
    double* a = act + m->actuator_actadr[u];
    if (m->actuator_disabled[u]) {  // a disabled group: act_dot 0, then the actrange clamp
      if (m->actuator_actlimited[u]) *a = sapa_clip(*a, m->actuator_actrange[2 * u], m->actuator_actrange[2 * u + 1]);
      continue;
    }
    *a = sapa_actNext(m, u, h, ctrl, act);
  }
}

/* an actuator implicit in the SAP solve (a drive row): position and velocity servos, none
 * with actuation off */
/* the dofs an actuator on joint j moves: 3 on a ball, 6 on a free joint (its moment
 * actuator_jntgear on them), 1 on a hinge or slide (its gear) */
SAP_HD int sapa_jointDofs(const sapModel* m, int j) {
  return m->jnt_type[j] == SAP_JNT_FREE ? 6 : m->jnt_type[j] == SAP_JNT_BALL ? 3 : 1;
}

/* the moment of actuator u on its ball or free joint (sapa_jointDofs entries): actuator_jntgear,
 * its rotational part (gear[0:3] of a ball, gear[3:6] of a free joint) for jointinparent rotated
 * into the joint's child frame, R(q)' g with q the joint's normalised quaternion (MuJoCo 4's
 * mj_transmission: mju_negQuat, mju_rotVecQuat) */
SAP_HD void sapa_jointMoment(const sapModel* m, int u, const double* qpos, double* g) {
  int j = m->actuator_trnid[u], nd = sapa_jointDofs(m, j);
  for (int k = 0; k < nd; k++) g[k] = m->actuator_jntgear[6 * u + k];
  if (!m->actuator_inparent[u]) return;
  const double* qs = qpos + m->jnt_qposadr[j] + (nd == 6 ? 3 : 0);
  double* v = g + (nd == 6 ? 3 : 0);
  /* mju_normalize4: identity below 1e-15, unchanged within 1e-15 of unit length */
  double q[4] = {qs[0], qs[1], qs[2], qs[3]};
  double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  if (n < 1e-15) {
    q[0] = 1;
    q[1] = q[2] = q[3] = 0;
  } else if (fabs(n - 1) > 1e-15) {
    for (int k = 0; k < 4; k++) q[k] /= n;
  }
  if (v[0] == 0 && v[1] == 0 && v[2] == 0) return;
  /* conjugate c = (w, -u): t = w v + c_u x v, v' = v + 2 c_u x t */
  double c[3] = {-q[1], -q[2], -q[3]}, t[3], r[3];
  t[0] = q[0] * v[0] + c[1] * v[2] - c[2] * v[1];
  t[1] = q[0] * v[1] + c[2] * v[0] - c[0] * v[2];
  t[2] = q[0] * v[2] + c[0] * v[1] - c[1] * v[0];
  r[0] = v[0] + 2 * (c[1] * t[2] - c[2] * t[1]);
  r[1] = v[1] + 2 * (c[2] * t[0] - c[0] * t[2]);
  r[2] = v[2] + 2 * (c[0] * t[1] - c[1] * t[0]);
  for (int k = 0; k < 3; k++) v[k] = r[k];
}

/* MuJoCo's mju_clip of a joint's summed actuator force to its actuatorfrcrange r */
SAP_HD double sapw_clampSum(double x, const double* r) { return x < r[0] ? r[0] : x > r[1] ? r[1] : x; }

SAP_HD int sapa_isDrive(const sapModel* m, int u) {
  if (m->actuation_off || m->actuator_disabled[u]) return 0;
  return m->actuator_kind[u] == SAP_ACT_POSITION || m->actuator_kind[u] == SAP_ACT_VELOCITY;
}

#endif
