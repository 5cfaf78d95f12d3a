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

/* the spring's force at displacement x */
SAP_HD double sapw_springForce(double k, const double* poly, double x) {
  double c = k, xp = 1;
  for (int i = 0; i < SAP_NPOLY; i++) {
    xp *= x;
    c += poly[i] * xp;
  }
  return -x * c;
}

/* the spring's potential energy at displacement x */
SAP_HD double sapw_springEnergy(double k, const double* poly, double x) {
  double e = 0.5 * k * (x * x), xp = x;
  for (int i = 0; i < SAP_NPOLY; i++) {
    xp *= x;
    e += poly[i] / (i + 3) * (xp * x);
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
