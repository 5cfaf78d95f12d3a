/* Spatial tendons in fp64 (reference; shared by the CPU and GPU paths: free motion, SAP rows,
 * sensors): the length and Jacobian of a path of sites that may wrap around spheres and
 * cylinders (with or without a sidesite, the sidesite inside the geom included) and pass
 * pulleys (a divisor for the branches after it). A port of MuJoCo 4.0's mj_tendon for spatial
 * paths (engine_core_smooth.c) and mju_wrap (engine_util_misc.c; Apache-2.0, (c) DeepMind
 * Technologies). MuJoCo 4.0's wrap_circle, wrap_inside and is_intersect differ from MuJoCo 3's
 * source (and MuJoCo Warp's and MJX's ports of it) where a sidesite is given, in the arc length
 * and in segment crossings; they were read from the 4.0.0 library's machine code (mju_wrap,
 * libmujoco.so.4.0.0) and agree with it bit for bit at random states (tests/test_spatial_wrap.c
 * calls mju_wrap directly). MuJoCo's ten_length and ten_J are the direct oracle for the whole
 * path. As in MuJoCo the Jacobian treats the tangent points as points of the wrapping geom's
 * body and skips segments whose two ends are on one body. */
#ifndef SAPSIM_TENDON_H
#define SAPSIM_TENDON_H

#include "sap_real.h"
#include "sapsim/model.h"

#define SAPT_MINVAL 1e-15 /* MuJoCo's mjMINVAL */
#define SAPT_PI 3.14159265358979323846

/* fixed tendon t's armature term a c_u c_w on the dof pair of its joints u and w, or 0 where
 * MuJoCo 4's mass matrix has no entry: its sparse M holds a dof's ancestors only, and
 * mj_tendonArmature adds a J'J into that pattern, so the coupling of two dofs on different
 * branches or trees is dropped (MuJoCo 4.0's mj_fullM shows it); sapsim follows it */
SAP_HD double sapw_tendonArmaturePair(const sapModel* m, int t, int u, int w, int* i, int* j) {
  *i = m->jnt_dofadr[m->wrap_jnt[u]];
  *j = m->jnt_dofadr[m->wrap_jnt[w]];
  int lo = *i < *j ? *i : *j, hi = *i < *j ? *j : *i;
  while (hi > lo) hi = m->dof_parentid[hi];  // parents come first: hi reaches lo iff it descends from it
  return hi == lo ? m->tendon_armature[t] * m->wrap_coef[u] * m->wrap_coef[w] : 0;
}

/* some spatial tendon has armature (its own or its actuators'): the free motion then adds
 * its a J'J and its bias a J (dJ/dt qvel) (sapw_tendonArmature) */
SAP_HD int sapt_hasSpatialArmature(const sapModel* m) {
  for (int t = 0; t < m->ntendon; t++)
    if (m->tendon_spatial[t] && m->tendon_armature[t] != 0) return 1;
  return 0;
}

/* some fixed tendon has armature: the only writer of the free motion's A that reaches an entry
 * off its trees' ancestor pattern, were sapw_tendonArmaturePair to keep a cross-branch pair (it
 * drops them, as MuJoCo 4 does); without one the pattern holds by construction (sapw_freeMotion) */
SAP_HD int sapt_hasFixedArmature(const sapModel* m) {
  for (int t = 0; t < m->ntendon; t++)
    if (!m->tendon_spatial[t] && m->tendon_armature[t] != 0) return 1;
  return 0;
}

/* sparse scalar row (idx, val) of at most cap entries, -1 after the last */
typedef struct sapRow { int* idx; double* val; int n, cap; } sapRow;

/* add c to dof i's entry of row, merging a repeated dof (at most nv entries) */
SAP_HD void sapw_rowAdd(sapRow* row, int i, double c, int* ok) {
  for (int k = 0; k < row->n; k++)
    if (row->idx[k] == i) { row->val[k] += c; return; }
  if (row->n >= row->cap) { *ok = 0; return; }
  row->idx[row->n] = i;
  row->val[row->n++] = c;
  if (row->n < row->cap) row->idx[row->n] = -1;
}

/* what a tendon's Jacobian J (1 x nv) goes into; every sink is optional (null / dof < 0):
 * jv += J v (v: a generalized velocity), jv += J[dof], dense += c J, densef += c J (fp32
 * vectors), row += c J (ok = 0 when the row is full) */
typedef struct sapTenSink {
  const double* v;
  int dof;
  double jv;
  double c;
  double* dense;
  float* densef;
  sapRow* row;
  int ok;
} sapTenSink;

SAP_HD sapTenSink sapt_sink(void) {
  sapTenSink s = {(const double*)0, -1, 0, 0, (double*)0, (float*)0, (sapRow*)0, 1};
  return s;
}

/* normalize a 2- or 3-vector; (1, 0, ..) when shorter than mjMINVAL (mju_normalize) */
SAP_HD double sapt_normalize(double* a, int n) {
  double s = 0;
  for (int k = 0; k < n; k++) s += a[k] * a[k];
  s = sqrt(s);
  if (s < SAPT_MINVAL) {
    a[0] = 1;
    for (int k = 1; k < n; k++) a[k] = 0;
  } else {
    for (int k = 0; k < n; k++) a[k] *= 1 / s;
  }
  return s;
}

/* segments p1-p2 and p3-p4 cross (MuJoCo 4.0's is_intersect, division-free): with d1 = p2 - p1,
 * d2 = p4 - p3, w = p1 - p3, q = p2 - p4 and det = d1 x d2, the crossing's parameters a = (d2 x
 * w) / det, b = (d1 x w) / det satisfy 0 <= a < 1, 0 <= b < 1 (the far ends p2, p4 excluded);
 * never for |det| < mjMINVAL */
SAP_HD int sapt_isIntersect(const double* p1, const double* p2, const double* p3, const double* p4) {
  double d1[2] = {p2[0] - p1[0], p2[1] - p1[1]}, d2[2] = {p4[0] - p3[0], p4[1] - p3[1]};
  double det = d2[1] * d1[0] - d2[0] * d1[1];
  if (fabs(det) < SAPT_MINVAL) return 0;
  double sg = det > 0 ? 1 : -1;
  double q[2] = {p2[0] - p4[0], p2[1] - p4[1]}, w[2] = {p1[0] - p3[0], p1[1] - p3[1]};
  return (d2[0] * q[1] - d2[1] * q[0]) * sg < 0 && (d1[0] * w[1] - d1[1] * w[0]) * sg >= 0 &&
         (d2[0] * w[1] - d2[1] * w[0]) * sg >= 0 && (d1[0] * q[1] - d1[1] * q[0]) * sg < 0;
}

/* signed angle from the 2D vector (ax, ay) to (bx, by), in (-pi, pi] */
SAP_HD double sapt_angle(double ax, double ay, double bx, double by) {
  return atan2(ax * by - ay * bx, ax * bx + ay * by);
}

/* 2D wrap of the path end[0:2] -> end[2:4] around the circle of radius at the origin (MuJoCo
 * 4.0's wrap_circle): the tangent points in pnt[4], returns the arc length or -1 for no wrap.
 * Without a side point the path wraps when the segment meets the circle, the way of the two
 * with the closer tangent points (not crossing the straight segments), and the arc is the
 * short one (atan2 of |cross|, dot) unless the way demands the long one (beyond 1e-6 rad).
 * With a side point s (on the circle) the path runs from end0 to end1 through the angle
 * end0 -> s -> end1 (total, each part in (-pi, pi]): it stays straight when the segment misses
 * the circle and that angle is the direct one (|total - angle(end0, end1)| < pi), else wraps
 * counterclockwise for total > 0 (solution 1) and clockwise otherwise (solution 0), the arc's
 * angle being total less the angles end0 -> tangent 0 and tangent 1 -> end1 */
SAP_HD double sapt_wrapCircle(double* pnt, const double* end, const double* side, double radius) {
  double sqlen0 = end[0] * end[0] + end[1] * end[1], sqlen1 = end[2] * end[2] + end[3] * end[3];
  double sqrad = radius * radius;
  if (sqlen0 < sqrad || sqlen1 < sqrad || radius < SAPT_MINVAL) return -1;
  double dif[2] = {end[2] - end[0], end[3] - end[1]};
  double dd = dif[0] * dif[0] + dif[1] * dif[1];
  if (dd < SAPT_MINVAL) return -1;
  double a = -(dif[0] * end[0] + dif[1] * end[1]) / dd;
  a = a < 0 ? 0 : (a > 1 ? 1 : a);
  double tmp[2] = {a * dif[0] + end[0], a * dif[1] + end[1]};
  int miss = tmp[0] * tmp[0] + tmp[1] * tmp[1] > sqrad, ind = 0;
  double total = 0;
  if (side) {
    total = sapt_angle(end[0], end[1], side[0], side[1]) + sapt_angle(side[0], side[1], end[2], end[3]);
    if (miss && fabs(total - sapt_angle(end[0], end[1], end[2], end[3])) < SAPT_PI) return -1;
    ind = total > 0;
  } else if (miss) {
    return -1;
  }
  double sqrt0 = sqrt(sqlen0 - sqrad), sqrt1 = sqrt(sqlen1 - sqrad);
  double sol[2][2][2], good[2];
  for (int i = 0; i < 2; i++) {
    int sgn = i == 0 ? 1 : -1;
    sol[i][0][0] = (end[0] * sqrad + sgn * radius * end[1] * sqrt0) / sqlen0;
    sol[i][0][1] = (end[1] * sqrad - sgn * radius * end[0] * sqrt0) / sqlen0;
    sol[i][1][0] = (end[2] * sqrad - sgn * radius * end[3] * sqrt1) / sqlen1;
    sol[i][1][1] = (end[3] * sqrad + sgn * radius * end[2] * sqrt1) / sqlen1;
    tmp[0] = sol[i][0][0] - sol[i][1][0];  // goodness: the shorter path
    tmp[1] = sol[i][0][1] - sol[i][1][1];
    good[i] = -(tmp[0] * tmp[0] + tmp[1] * tmp[1]);
    if (sapt_isIntersect(end, sol[i][0], end + 2, sol[i][1])) good[i] = -10000;
  }
  int i = side ? ind : (good[0] > good[1] ? 0 : 1);
  pnt[0] = sol[i][0][0];
  pnt[1] = sol[i][0][1];
  pnt[2] = sol[i][1][0];
  pnt[3] = sol[i][1][1];
  if (sapt_isIntersect(end, pnt, end + 2, pnt + 2)) return -1;
  if (side)
    return fabs(total - sapt_angle(end[0], end[1], pnt[0], pnt[1]) - sapt_angle(pnt[2], pnt[3], end[2], end[3])) *
           radius;
  double cross = pnt[1] * pnt[2] - pnt[0] * pnt[3];
  double angle = atan2(fabs(cross), (pnt[0] * pnt[2] + pnt[1] * pnt[3]) + 0.0);  // + 0: -0 -> +0 as MuJoCo
  if (angle > 1e-6 && ((cross > 0 && i) || (cross < 0 && !i))) angle = 2 * SAPT_PI - angle;
  return radius * angle;
}

/* 2D wrap with the side point inside the circle (MuJoCo 4.0's wrap_inside): the path touches
 * the circle at one point, z = sin t solving f(t) = asin(A z) + asin(B z) - 2 t + G = 0 (A, B:
 * the radius over the endpoints' distances, G: the angle between them) by Newton's method in t
 * from t = pi/2 (at most 20 steps to |f| <= 1e-6); pnt[0:2] = pnt[2:4] = that point, returns
 * 0, or -1 for no wrap (an endpoint inside, the segment crossing the circle) */
SAP_HD double sapt_wrapInside(double* pnt, const double* end, double radius) {
  const int maxiter = 20;
  const double tolerance = 1e-6;
  double len0 = sqrt(end[0] * end[0] + end[1] * end[1]), len1 = sqrt(end[2] * end[2] + end[3] * end[3]);
  double dif[2] = {end[2] - end[0], end[3] - end[1]};
  double dd = dif[0] * dif[0] + dif[1] * dif[1];
  if (len0 <= radius || len1 <= radius || radius < SAPT_MINVAL || len0 < SAPT_MINVAL || len1 < SAPT_MINVAL)
    return -1;
  if (dd > SAPT_MINVAL) {  // the segment crosses the circle: no wrap
    double a = -(dif[0] * end[0] + dif[1] * end[1]) / dd;
    if (a > 0 && a < 1) {
      double t0 = end[0] + a * dif[0], t1 = end[1] + a * dif[1];
      if (sqrt(t0 * t0 + t1 * t1) <= radius) return -1;
    }
  }
  /* default on numerical failure: the direction of the endpoints' average */
  pnt[0] = 0.5 * (end[0] + end[2]);
  pnt[1] = 0.5 * (end[1] + end[3]);
  sapt_normalize(pnt, 2);
  pnt[0] *= radius;
  pnt[1] *= radius;
  pnt[2] = pnt[0];
  pnt[3] = pnt[1];
  double A = radius / len0, B = radius / len1;
  double cosG = (len0 * len0 + len1 * len1 - dd) / (2 * len0 * len1);
  if (cosG < -1 + SAPT_MINVAL) return -1;
  if (cosG > 1 - SAPT_MINVAL) return 0;
  double G = acos(cosG), t = SAPT_PI / 2, z = 1;
  double f = asin(A) + asin(B) - SAPT_PI + G;
  if (f > 0) return 0;
  int iter;
  for (iter = 0; iter < maxiter && fabs(f) > tolerance; iter++) {
    double df = (A / fmax(SAPT_MINVAL, sqrt(1 - z * z * A * A)) + B / fmax(SAPT_MINVAL, sqrt(1 - z * z * B * B))) *
                    cos(t) -
                2;
    if (df > -SAPT_MINVAL) return 0;
    double t1 = t - f / df;
    if (t1 > t) return 0;
    t = t1;
    z = sin(t);
    f = asin(A * z) + asin(B * z) - (t + t) + G;
    if (f > tolerance) return 0;
  }
  if (iter >= maxiter) return 0;
  double vec[2], ang;
  if (end[0] * end[3] - end[1] * end[2] > 0) {
    vec[0] = end[0];
    vec[1] = end[1];
    ang = t - asin(A * z);
  } else {
    vec[0] = end[2];
    vec[1] = end[3];
    ang = t - asin(B * z);
  }
  sapt_normalize(vec, 2);
  pnt[0] = radius * (cos(ang) * vec[0] - sin(ang) * vec[1]);
  pnt[1] = radius * (sin(ang) * vec[0] + cos(ang) * vec[1]);
  pnt[2] = pnt[0];
  pnt[3] = pnt[1];
  return 0;
}

/* wrap the path x0 -> x1 around the sphere or cylinder (type SAP_WRAP_SPHERE/CYLINDER) of
 * radius at (xpos, xmat), side: the sidesite's world position or null; the two tangent points
 * in wpnt[6], returns the wrapped length or -1 for no wrap (mju_wrap) */
SAP_HD double sapt_wrap(double* wpnt, const double* x0, const double* x1, const double* xpos, const double* xmat,
                        double radius, int type, const double* side) {
  double p[2][3];
  for (int k = 0; k < 3; k++) {  // local frame: R^T (x - xpos)
    p[0][k] = xmat[k] * (x0[0] - xpos[0]) + xmat[3 + k] * (x0[1] - xpos[1]) + xmat[6 + k] * (x0[2] - xpos[2]);
    p[1][k] = xmat[k] * (x1[0] - xpos[0]) + xmat[3 + k] * (x1[1] - xpos[1]) + xmat[6 + k] * (x1[2] - xpos[2]);
  }
  double n0 = sqrt(p[0][0] * p[0][0] + p[0][1] * p[0][1] + p[0][2] * p[0][2]);
  double n1 = sqrt(p[1][0] * p[1][0] + p[1][1] * p[1][1] + p[1][2] * p[1][2]);
  if (n0 < SAPT_MINVAL || n1 < SAPT_MINVAL) return -1;
  double axis[2][3];
  if (type == SAP_WRAP_SPHERE) {
    for (int k = 0; k < 3; k++) axis[0][k] = p[0][k];
    sapt_normalize(axis[0], 3);
    double normal[3] = {p[0][1] * p[1][2] - p[0][2] * p[1][1], p[0][2] * p[1][0] - p[0][0] * p[1][2],
                        p[0][0] * p[1][1] - p[0][1] * p[1][0]};
    double nrm = sapt_normalize(normal, 3);
    if (nrm < SAPT_MINVAL) {  // p0, p1 parallel: another normal
      int i = 0;
      if (fabs(axis[0][1]) > fabs(axis[0][0]) && fabs(axis[0][1]) > fabs(axis[0][2])) i = 1;
      if (fabs(axis[0][2]) > fabs(axis[0][0]) && fabs(axis[0][2]) > fabs(axis[0][1])) i = 2;
      axis[1][0] = axis[1][1] = axis[1][2] = 1;
      axis[1][i] = 0;
      normal[0] = axis[0][1] * axis[1][2] - axis[0][2] * axis[1][1];
      normal[1] = axis[0][2] * axis[1][0] - axis[0][0] * axis[1][2];
      normal[2] = axis[0][0] * axis[1][1] - axis[0][1] * axis[1][0];
      sapt_normalize(normal, 3);
    }
    axis[1][0] = normal[1] * axis[0][2] - normal[2] * axis[0][1];
    axis[1][1] = normal[2] * axis[0][0] - normal[0] * axis[0][2];
    axis[1][2] = normal[0] * axis[0][1] - normal[1] * axis[0][0];
    sapt_normalize(axis[1], 3);
  } else {
    axis[0][0] = 1, axis[0][1] = axis[0][2] = 0;
    axis[1][1] = 1, axis[1][0] = axis[1][2] = 0;
  }
  double d[4], s[3], sd[2];
  for (int i = 0; i < 2; i++) {
    d[2 * i] = p[i][0] * axis[0][0] + p[i][1] * axis[0][1] + p[i][2] * axis[0][2];
    d[2 * i + 1] = p[i][0] * axis[1][0] + p[i][1] * axis[1][1] + p[i][2] * axis[1][2];
  }
  if (side) {
    for (int k = 0; k < 3; k++)
      s[k] = xmat[k] * (side[0] - xpos[0]) + xmat[3 + k] * (side[1] - xpos[1]) + xmat[6 + k] * (side[2] - xpos[2]);
    sd[0] = s[0] * axis[0][0] + s[1] * axis[0][1] + s[2] * axis[0][2];
    sd[1] = s[0] * axis[1][0] + s[1] * axis[1][1] + s[2] * axis[1][2];
    sapt_normalize(sd, 2);
    sd[0] *= radius;
    sd[1] *= radius;
  }
  double wlen, pnt[4] = {0, 0, 0, 0};  // written by the wrap whenever wlen >= 0
  if (side && sqrt(s[0] * s[0] + s[1] * s[1] + s[2] * s[2]) < radius) wlen = sapt_wrapInside(pnt, d, radius);
  else wlen = sapt_wrapCircle(pnt, d, side ? sd : (const double*)0, radius);
  if (wlen < 0) return -1;
  double res[6];
  for (int i = 0; i < 2; i++)
    for (int k = 0; k < 3; k++) res[3 * i + k] = axis[0][k] * pnt[2 * i] + axis[1][k] * pnt[2 * i + 1];
  if (type == SAP_WRAP_CYLINDER) {  // heights along the unrolled straight line; the helix's length
    double L0 = sqrt((p[0][0] - res[0]) * (p[0][0] - res[0]) + (p[0][1] - res[1]) * (p[0][1] - res[1]));
    double L1 = sqrt((p[1][0] - res[3]) * (p[1][0] - res[3]) + (p[1][1] - res[4]) * (p[1][1] - res[4]));
    res[2] = p[0][2] + (p[1][2] - p[0][2]) * L0 / (L0 + wlen + L1);
    res[5] = p[0][2] + (p[1][2] - p[0][2]) * (L0 + wlen) / (L0 + wlen + L1);
    double height = fabs(res[5] - res[2]);
    wlen = sqrt(wlen * wlen + height * height);
  }
  for (int i = 0; i < 2; i++)
    for (int k = 0; k < 3; k++)
      wpnt[3 * i + k] = xmat[3 * k] * res[3 * i] + xmat[3 * k + 1] * res[3 * i + 1] + xmat[3 * k + 2] * res[3 * i + 2] +
                        xpos[k];
  return wlen;
}

/* world position of the point lp of body b */
SAP_HD void sapt_point(const double* xpos, const double* xmat, int b, const double* lp, double* p) {
  const double* R = xmat + 9 * b;
  for (int r = 0; r < 3; r++) p[r] = xpos[3 * b + r] + R[3 * r] * lp[0] + R[3 * r + 1] * lp[1] + R[3 * r + 2] * lp[2];
}

/* world frame of geom g from its body's frame (pos = x_b + R_b pos_g, R = R_b R(quat_g)) */
SAP_HD void sapt_geomFrame(const sapModel* m, const double* xpos, const double* xmat, int g, double* gp, double* gR) {
  int b = m->geom_bodyid[g];
  const double* q = m->geom_quat + 4 * g;
  const double* Rb = xmat + 9 * b;
  double Rl[9] = {1 - 2 * (q[2] * q[2] + q[3] * q[3]), 2 * (q[1] * q[2] - q[0] * q[3]), 2 * (q[1] * q[3] + q[0] * q[2]),
                  2 * (q[1] * q[2] + q[0] * q[3]), 1 - 2 * (q[1] * q[1] + q[3] * q[3]), 2 * (q[2] * q[3] - q[0] * q[1]),
                  2 * (q[1] * q[3] - q[0] * q[2]), 2 * (q[2] * q[3] + q[0] * q[1]), 1 - 2 * (q[1] * q[1] + q[2] * q[2])};
  sapt_point(xpos, xmat, b, m->geom_pos + 3 * g, gp);
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 3; c++) gR[3 * r + c] = Rb[3 * r] * Rl[c] + Rb[3 * r + 1] * Rl[3 + c] + Rb[3 * r + 2] * Rl[6 + c];
}

/* the velocity of point x of body b along u, times s, into the sink: over the dofs i of b and
 * its ancestors, s cdof_i . [(x - cref_b) x u; u] */
SAP_HD void sapt_pointJac(const sapModel* m, const double* cref, const double* cdof, int b, const double* x,
                          const double* u, double s, sapTenSink* k) {
  double r[3] = {x[0] - cref[3 * b], x[1] - cref[3 * b + 1], x[2] - cref[3 * b + 2]};
  double ru[3] = {r[1] * u[2] - r[2] * u[1], r[2] * u[0] - r[0] * u[2], r[0] * u[1] - r[1] * u[0]};
  for (int pb = b; pb > 0; pb = m->body_parentid[pb])
    for (int i = m->body_dofadr[pb]; i < m->body_dofadr[pb] + m->body_dofnum[pb]; i++) {
      const double* c6 = cdof + 6 * i;
      double v = s * (c6[0] * ru[0] + c6[1] * ru[1] + c6[2] * ru[2] + c6[3] * u[0] + c6[4] * u[1] + c6[5] * u[2]);
      if (k->v) k->jv += v * k->v[i];
      if (i == k->dof) k->jv += v;
      if (k->dense) k->dense[i] += k->c * v;
      if (k->densef) k->densef[i] += (float)(k->c * v);
      if (k->row) sapw_rowAdd(k->row, i, k->c * v, &k->ok);
    }
}

/* the length of spatial tendon t and its Jacobian into the sink (null: length only), from the
 * world's body frames and, for the Jacobian, cref and cdof (mj_tendon's spatial branch). wrap
 * fields: sites (wrap_jnt: body, wrap_pos: position in it), geoms (wrap_jnt: geom,
 * wrap_side: the sidesite's body or -1, wrap_pos: the sidesite in it), pulleys (wrap_coef:
 * divisor). The path is site (geom site | site)* with pulleys between branches. */
SAP_HD double sapt_spatial(const sapModel* m, const double* xpos, const double* xmat, const double* cref,
                           const double* cdof, int t, sapTenSink* k) {
  int adr = m->tendon_adr[t], num = m->tendon_num[t], j = 0;
  double divisor = 1, len = 0;
  while (j < num - 1) {
    int w0 = adr + j, w1 = w0 + 1, type0 = m->wrap_type[w0], type1 = m->wrap_type[w1];
    if (type0 == SAP_WRAP_PULLEY || type1 == SAP_WRAP_PULLEY) {
      if (type0 == SAP_WRAP_PULLEY) divisor = m->wrap_coef[w0];
      j++;
      continue;
    }
    double pnt[12], wlen = -1;
    int body[4], g = -1, we = w1;  // we: the branch's end site
    sapt_point(xpos, xmat, m->wrap_jnt[w0], m->wrap_pos + 3 * w0, pnt);
    body[0] = m->wrap_jnt[w0];
    if (type1 == SAP_WRAP_SPHERE || type1 == SAP_WRAP_CYLINDER) {
      double x1[3], gp[3], gR[9], side[3];
      g = m->wrap_jnt[w1];
      we = w1 + 1;
      sapt_point(xpos, xmat, m->wrap_jnt[we], m->wrap_pos + 3 * we, x1);
      sapt_geomFrame(m, xpos, xmat, g, gp, gR);
      int sb = m->wrap_side[w1];
      if (sb >= 0) sapt_point(xpos, xmat, sb, m->wrap_pos + 3 * w1, side);
      wlen = sapt_wrap(pnt + 3, pnt, x1, gp, gR, m->geom_size[3 * g], type1, sb >= 0 ? side : (const double*)0);
      for (int r = 0; r < 3; r++) pnt[(wlen < 0 ? 3 : 9) + r] = x1[r];
    } else {
      sapt_point(xpos, xmat, m->wrap_jnt[we], m->wrap_pos + 3 * we, pnt + 3);
    }
    int nseg = wlen < 0 ? 1 : 3;
    if (wlen < 0) {
      body[1] = m->wrap_jnt[we];
    } else {
      body[1] = body[2] = m->geom_bodyid[g];
      body[3] = m->wrap_jnt[we];
    }
    double dist[3];
    for (int s = 0; s < nseg; s += 2) {
      const double *a = pnt + 3 * s, *b = a + 3;
      dist[s] = sqrt((b[0] - a[0]) * (b[0] - a[0]) + (b[1] - a[1]) * (b[1] - a[1]) + (b[2] - a[2]) * (b[2] - a[2]));
    }
    len += (wlen < 0 ? dist[0] : dist[0] + wlen + dist[2]) / divisor;
    for (int s = 0; k && s < nseg; s++) {
      if (body[s] == body[s + 1]) continue;
      const double *a = pnt + 3 * s, *b = a + 3;
      double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
      sapt_normalize(u, 3);
      sapt_pointJac(m, cref, cdof, body[s + 1], b, u, 1 / divisor, k);
      sapt_pointJac(m, cref, cdof, body[s], a, u, -1 / divisor, k);
    }
    j += g >= 0 ? 2 : 1;
  }
  return len;
}

/* velocity v and velocity-product acceleration a (qacc = 0, no gravity: Jdot_x qvel, MuJoCo's
 * mj_jacDot . qvel) of the point x fixed to body b. With the motion subspaces S_i = cdof_i at
 * the tree's point cref (a point fixed in space at this instant), S_i' = V_i x S_i where V_i is
 * the body velocity before dof i's joint (the dofs of one ball joint or one free joint's
 * rotation share it: their cross terms cancel), so the body's A = sum_i S_i' q_i = sum over
 * joints g before joint k of (S_g q_g) x (S_k q_k); walking from b to the root with D = the
 * velocity of the joints below: A += G x D, D += G. Then v = D_lin + D_ang x r and
 * a = A_lin + A_ang x r + D_ang x v (r = x - cref) */
SAP_HD void sapt_pointMotion(const sapModel* m, const double* cref, const double* cdof, const double* qvel, int b,
                             const double* x, double* v, double* a) {
  double D[6] = {0, 0, 0, 0, 0, 0}, A[6] = {0, 0, 0, 0, 0, 0};
  for (int pb = b; pb > 0; pb = m->body_parentid[pb])
    for (int jt = m->body_jntadr[pb] + m->body_jntnum[pb] - 1; jt >= m->body_jntadr[pb]; jt--) {
      int d0 = m->jnt_dofadr[jt], type = m->jnt_type[jt];
      int n = type == SAP_JNT_FREE ? 6 : type == SAP_JNT_BALL ? 3 : 1;
      for (int part = n == 6 ? 1 : 0; part >= 0; part--) {  // a free joint: its rotation, then its translation
        int i0 = n == 6 ? d0 + 3 * part : d0, i1 = n == 6 ? i0 + 3 : d0 + n;
        double G[6] = {0, 0, 0, 0, 0, 0};
        for (int i = i0; i < i1; i++)
          for (int k = 0; k < 6; k++) G[k] += cdof[6 * i + k] * qvel[i];
        /* A += G x D (motion cross product: [w x w'; w x v' + v x w']) */
        A[0] += G[1] * D[2] - G[2] * D[1];
        A[1] += G[2] * D[0] - G[0] * D[2];
        A[2] += G[0] * D[1] - G[1] * D[0];
        A[3] += G[1] * D[5] - G[2] * D[4] + G[4] * D[2] - G[5] * D[1];
        A[4] += G[2] * D[3] - G[0] * D[5] + G[5] * D[0] - G[3] * D[2];
        A[5] += G[0] * D[4] - G[1] * D[3] + G[3] * D[1] - G[4] * D[0];
        for (int k = 0; k < 6; k++) D[k] += G[k];
      }
    }
  double r[3] = {x[0] - cref[3 * b], x[1] - cref[3 * b + 1], x[2] - cref[3 * b + 2]};
  v[0] = D[3] + D[1] * r[2] - D[2] * r[1];
  v[1] = D[4] + D[2] * r[0] - D[0] * r[2];
  v[2] = D[5] + D[0] * r[1] - D[1] * r[0];
  a[0] = A[3] + A[1] * r[2] - A[2] * r[1] + D[1] * v[2] - D[2] * v[1];
  a[1] = A[4] + A[2] * r[0] - A[0] * r[2] + D[2] * v[0] - D[0] * v[2];
  a[2] = A[5] + A[0] * r[1] - A[1] * r[0] + D[0] * v[1] - D[1] * v[0];
}

/* dJ/dt qvel of spatial tendon t (MuJoCo 4's mj_tendonDot): over each straight segment a -> b
 * between two bodies, length l, direction u, l' = u . (v_b - v_a) and
 * l'' = u . (a_b - a_a) + |(I - u u') (v_b - v_a)|^2 / l (0 for l < mjMINVAL), over the
 * branch's pulley divisor. Site-to-site paths and pulleys only: MuJoCo 4 refuses armature on
 * a tendon that wraps a geom (the loader refuses it by name); a geom here is stepped over */
SAP_HD double sapt_spatialDot(const sapModel* m, const double* xpos, const double* xmat, const double* cref,
                              const double* cdof, const double* qvel, int t) {
  int adr = m->tendon_adr[t], num = m->tendon_num[t];
  double divisor = 1, res = 0;
  for (int j = 0; j < num - 1; j++) {
    int w0 = adr + j, w1 = w0 + 1, type0 = m->wrap_type[w0], type1 = m->wrap_type[w1];
    if (type0 == SAP_WRAP_PULLEY || type1 == SAP_WRAP_PULLEY) {
      if (type0 == SAP_WRAP_PULLEY) divisor = m->wrap_coef[w0];
      continue;
    }
    if (type0 != SAP_WRAP_SITE || type1 != SAP_WRAP_SITE) continue;  // geoms: refused with armature
    int b0 = m->wrap_jnt[w0], b1 = m->wrap_jnt[w1];
    if (b0 == b1) continue;
    double p0[3], p1[3], v0[3], v1[3], a0[3], a1[3];
    sapt_point(xpos, xmat, b0, m->wrap_pos + 3 * w0, p0);
    sapt_point(xpos, xmat, b1, m->wrap_pos + 3 * w1, p1);
    sapt_pointMotion(m, cref, cdof, qvel, b0, p0, v0, a0);
    sapt_pointMotion(m, cref, cdof, qvel, b1, p1, v1, a1);
    double u[3] = {p1[0] - p0[0], p1[1] - p0[1], p1[2] - p0[2]};
    double len = sapt_normalize(u, 3);
    double dv[3] = {v1[0] - v0[0], v1[1] - v0[1], v1[2] - v0[2]};
    double ud = u[0] * dv[0] + u[1] * dv[1] + u[2] * dv[2];
    double perp[3] = {dv[0] - ud * u[0], dv[1] - ud * u[1], dv[2] - ud * u[2]};
    double s = len > SAPT_MINVAL ? 1 / len : 0;
    double acc = u[0] * (a1[0] - a0[0]) + u[1] * (a1[1] - a0[1]) + u[2] * (a1[2] - a0[2]);
    res += (acc + s * (perp[0] * dv[0] + perp[1] * dv[1] + perp[2] * dv[2])) / divisor;
  }
  return res;
}

#endif
