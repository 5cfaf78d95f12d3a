/* Springs and dampers of joints and tendons with MuJoCo 4's higher-order terms (stiffness="k p1
 * p2", damping="c p1 p2";
 * engine_util_misc.c mju_polyForce / mju_polyPotential, engine_passive.c mj_springdamper):
 * the force at a displacement x is -x (k + p1 x + p2 x^2) and its energy k x^2 / 2 + p1 x^3 / 3
 * + p2 x^4 / 4, summed in MuJoCo's order so that the values are MuJoCo's bit for bit. x is a
 * hinge or slide joint's qpos - qpos_spring, or a tendon's stretch beyond its dead band. */
#ifndef SAPSIM_KERNELS_SPRING_H
#define SAPSIM_KERNELS_SPRING_H

#include <math.h>

#include "sap_real.h"
#include "sapsim/model.h"

/* a spring is present: k or a higher-order term nonzero */
SAP_HD int sapw_hasSpring(double k, const double* poly) {
  int any = k != 0;
  for (int i = 0; i < SAP_NPOLY; i++) any |= poly[i] != 0;
  return any;
}

/* the spring's stiffness at displacement x: k + p1 x + p2 x^2 (mju_polyForce) */
SAP_HD double sapw_springCoef(double k, const double* poly, double x) {
  double c = k, xp = 1;
  for (int i = 0; i < SAP_NPOLY; i++) {
    xp *= x;
    c += poly[i] * xp;
  }
  return c;
}

/* the spring's force at displacement x */
SAP_HD double sapw_springForce(double k, const double* poly, double x) { return -x * sapw_springCoef(k, poly, x); }

/* the spring's potential energy at displacement x */
SAP_HD double sapw_springEnergy(double k, const double* poly, double x) {
  double e = 0.5 * k * (x * x), xp = x;
  for (int i = 0; i < SAP_NPOLY; i++) {
    xp *= x;
    e += poly[i] / (i + 3) * (xp * x);
  }
  return e;
}

/* MuJoCo's mju_normalize3: v scaled to unit length, (1, 0, 0) when its norm is below mjMINVAL;
 * returns the norm */
SAP_HD double sapw_normalize3(double* v) {
  double s = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
  if (s < 1e-15) {
    v[0] = 1;
    v[1] = v[2] = 0;
  } else {
    double inv = 1 / s;
    for (int k = 0; k < 3; k++) v[k] *= inv;
  }
  return s;
}

/* MuJoCo's mju_quat2Vel with dt = 1: the rotation of unit quaternion q as axis times angle in
 * (-pi, pi] */
SAP_HD void sapw_quat2Vel(double* res, const double* q) {
  double axis[3] = {q[1], q[2], q[3]};
  double s = sapw_normalize3(axis);
  double a = 2 * atan2(s, q[0]);
  if (a > 3.14159265358979323846) a -= 2 * 3.14159265358979323846;
  for (int k = 0; k < 3; k++) res[k] = axis[k] * a;
}

/* MuJoCo's mju_subQuat: the rotation from unit quaternion qb to qa as a 3-vector in qb's frame
 * (axis times angle in (-pi, pi]): neg(qb) qa through mju_quat2Vel */
SAP_HD void sapw_subQuat(double* res, const double* qa, const double* qb) {
  double n0 = qb[0], n1 = -qb[1], n2 = -qb[2], n3 = -qb[3], q[4];
  q[0] = n0 * qa[0] - n1 * qa[1] - n2 * qa[2] - n3 * qa[3];
  q[1] = n0 * qa[1] + n1 * qa[0] + n2 * qa[3] - n3 * qa[2];
  q[2] = n0 * qa[2] - n1 * qa[3] + n2 * qa[0] + n3 * qa[1];
  q[3] = n0 * qa[3] + n1 * qa[2] - n2 * qa[1] + n3 * qa[0];
  sapw_quat2Vel(res, q);
}

/* q <- normalize(q exp(w h / 2)): a unit quaternion rotated by body-frame angular velocity w
 * over h (fp64; the springs' midpoint shift). math_t.h's sapu_quatIntegrate_f64 does the same
 * but is declared after the fp32 templates that call this one (kernels.h's include order) */
SAP_HD void sapw_quatRotate(double* q, const double* w, double h) {
  double n = sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]), a = n * h;
  if (a > 1e-12) {
    double s = sin(a / 2) / n, d[4] = {cos(a / 2), w[0] * s, w[1] * s, w[2] * s}, r[4];
    r[0] = q[0] * d[0] - q[1] * d[1] - q[2] * d[2] - q[3] * d[3];
    r[1] = q[0] * d[1] + q[1] * d[0] + q[2] * d[3] - q[3] * d[2];
    r[2] = q[0] * d[2] - q[1] * d[3] + q[2] * d[0] + q[3] * d[1];
    r[3] = q[0] * d[3] + q[1] * d[2] - q[2] * d[1] + q[3] * d[0];
    for (int k = 0; k < 4; k++) q[k] = r[k];
  }
  double l = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  if (l > 0)
    for (int k = 0; k < 4; k++) q[k] /= l;
}

/* the displacements of a ball (free = 0) or free joint's spring at qpos q (4 or 7 values) from
 * its rest qs: a free joint's translation dif (3), then the rotation subQuat(normalize(quat),
 * rest) (3); returns the number of parts (1 or 2), each 3 values in dif */
SAP_HD int sapw_ballSpringDif(int free, const double* q, const double* qs, double* dif) {
  int parts = 0;
  if (free) {
    for (int k = 0; k < 3; k++) dif[k] = q[k] - qs[k];
    q += 3;
    qs += 3;
    parts = 1;
  }
  double u[4] = {q[0], q[1], q[2], q[3]};
  double n = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2] + u[3] * u[3]);
  if (n < 1e-15) {
    u[0] = 1;
    u[1] = u[2] = u[3] = 0;
  } else {
    double inv = 1 / n;
    for (int k = 0; k < 4; k++) u[k] *= inv;
  }
  sapw_subQuat(dif + 3 * parts, u, qs);
  return parts + 1;
}

/* a ball or free joint's spring force on its dofs (3 or 6; MuJoCo's mj_springdamper: each part
 * -k(r) dif with r = |dif|, k(r) = k + p1 r + p2 r^2) added to f */
SAP_HD void sapw_ballSpringAdd(int free, double k, const double* poly, const double* q, const double* qs, double* f) {
  double dif[6];
  int parts = sapw_ballSpringDif(free, q, qs, dif);
  for (int p = 0; p < parts; p++) {
    const double* d = dif + 3 * p;
    double c = sapw_springCoef(k, poly, sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]));
    for (int i = 0; i < 3; i++) f[3 * p + i] += d[i] * -c;
  }
}

/* a ball or free joint's spring energy (mju_polyPotential of each part's r) */
SAP_HD double sapw_ballSpringEnergy(int free, double k, const double* poly, const double* q, const double* qs) {
  double dif[6], e = 0;
  int parts = sapw_ballSpringDif(free, q, qs, dif);
  for (int p = 0; p < parts; p++) {
    const double* d = dif + 3 * p;
    e += sapw_springEnergy(k, poly, sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]));
  }
  return e;
}

/* a damper's force at velocity v: -v (c + p1 |v| + p2 v^2) (mju_polyForce, odd: the force
 * opposes v on both sides) */
SAP_HD double sapw_damperForce(double c, const double* poly, double v) {
  double a = fabs(v), r = c, vp = 1;
  for (int i = 0; i < SAP_NPOLY; i++) {
    vp *= a;
    r += poly[i] * vp;
  }
  return -v * r;
}

/* the damping in the implicit step: -d force / dv = c + 2 p1 |v| + 3 p2 v^2 (mjd_xPolyForce,
 * MuJoCo's Euler step linearises the damper at the step's start velocity) */
SAP_HD double sapw_damperSlope(double c, const double* poly, double v) {
  double a = fabs(v), r = c, vp = 1;
  for (int i = 0; i < SAP_NPOLY; i++) {
    vp *= a;
    r += (i + 2) * poly[i] * vp;
  }
  return r;
}

#endif
