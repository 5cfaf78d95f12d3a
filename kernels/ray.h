/* Ray casting against a world's geoms, as MuJoCo 4's mj_ray (engine_ray.c: ray_quad,
 * ray_triangle, ray_plane ... ray_box, mj_rayHfield, mj_rayMesh, ray_eliminate), in fp64, shared
 * by the CPU backend and the CUDA kernels (the rangefinder sensor, kernels/sensor.h).
 * Reference version: one thread per ray, every geom tested. Same formulas and the same
 * acceptance tests as MuJoCo, so distances agree to round-off; meshes are tested triangle by
 * triangle (MuJoCo walks a BVH whose boxes only cull: same nearest hit), behind the same
 * bounding-box test. A ray is p + x v, x >= 0; v need not be unit (x is in units of |v|). */
#ifndef SAPSIM_RAY_H
#define SAPSIM_RAY_H

#include "kernels.h"
#include "sapsim/model.h"

#define SAP_RAY_MINVAL 1e-15 /* MuJoCo's mjMINVAL */

/* MuJoCo's mju_normalize3: a vector shorter than 1e-15 becomes (1, 0, 0) */
SAP_HD void sapw_rayNormalize(double* v) {
  double n = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
  if (n < SAP_RAY_MINVAL) {
    v[0] = 1; v[1] = 0; v[2] = 0;
  } else {
    double s = 1 / n;
    v[0] *= s; v[1] *= s; v[2] *= s;
  }
}

/* the ray in the frame (pos, mat): lp = mat' (p - pos), lv = mat' v */
SAP_HD void sapw_rayMap(const double* pos, const double* mat, const double* p, const double* v,
                        double* lp, double* lv) {
  double d[3] = {p[0] - pos[0], p[1] - pos[1], p[2] - pos[2]};
  sapu_mulMatTVec3_f64(lp, mat, d);
  sapu_mulMatTVec3_f64(lv, mat, v);
}

/* both roots x0 <= x1 of a x^2 + 2 b x + c = 0 (-1, -1 when none or a < 1e-15); returns the
 * smallest non-negative one, -1 when both are negative */
SAP_HD double sapw_rayQuad(double a, double b, double c, double* x) {
  double det = b * b - a * c;
  if (det < 0 || a < SAP_RAY_MINVAL) {
    x[0] = x[1] = -1;
    return -1;
  }
  det = sqrt(det);
  x[0] = (-b - det) / a;
  x[1] = (-b + det) / a;
  if (x[0] >= 0) return x[0];
  if (x[1] >= 0) return x[1];
  return -1;
}

/* the local ray's normal-plane basis (b0, b1) used by the triangle test (mju_rayTree) */
SAP_HD void sapw_rayBasis(const double* lv, double* b0, double* b1) {
  b0[0] = b0[1] = b0[2] = 1;
  if (fabs(lv[0]) >= fabs(lv[1]) && fabs(lv[0]) >= fabs(lv[2])) b0[0] = 0;
  else if (fabs(lv[1]) >= fabs(lv[2])) b0[1] = 0;
  else b0[2] = 0;
  double s = -sapu_dot3_f64(lv, b0) / sapu_dot3_f64(lv, lv);
  for (int k = 0; k < 3; k++) b1[k] = b0[k] + s * lv[k];
  sapw_rayNormalize(b1);
  sapu_cross3_f64(b0, b1, lv);
  sapw_rayNormalize(b0);
}

/* triangle v (3 x 3, local frame): the ray's projections on (b0, b1) must straddle it, then
 * the plane distance; normal (unit, triangle winding) when asked; -1: miss */
SAP_HD double sapw_rayTriangle(const double* v, const double* lp, const double* lv, const double* b0,
                               const double* b1, double* normal) {
  if (normal) normal[0] = normal[1] = normal[2] = 0;
  double d[3][3], pl[3][2];
  for (int i = 0; i < 3; i++) {
    for (int k = 0; k < 3; k++) d[i][k] = v[3 * i + k] - lp[k];
    pl[i][0] = sapu_dot3_f64(b0, d[i]);
    pl[i][1] = sapu_dot3_f64(b1, d[i]);
  }
  for (int j = 0; j < 2; j++)
    if ((pl[0][j] > 0 && pl[1][j] > 0 && pl[2][j] > 0) || (pl[0][j] < 0 && pl[1][j] < 0 && pl[2][j] < 0))
      return -1;
  /* origin inside the projected triangle: A t = -p2, A = (p0 - p2, p1 - p2) */
  double A[4] = {pl[0][0] - pl[2][0], pl[1][0] - pl[2][0], pl[0][1] - pl[2][1], pl[1][1] - pl[2][1]};
  double b[2] = {-pl[2][0], -pl[2][1]};
  double det = A[0] * A[3] - A[1] * A[2];
  if (fabs(det) < SAP_RAY_MINVAL) return -1;
  double t0 = (A[3] * b[0] - A[1] * b[1]) / det, t1 = (-A[2] * b[0] + A[0] * b[1]) / det;
  if (t0 < 0 || t1 < 0 || t0 + t1 > 1) return -1;
  /* plane of the triangle: n = (v0 - v2) x (v1 - v2), x = -(lp - v2).n / (lv.n) */
  double e0[3], e1[3], r[3], n[3];
  for (int k = 0; k < 3; k++) {
    e0[k] = v[k] - v[6 + k];
    e1[k] = v[3 + k] - v[6 + k];
    r[k] = lp[k] - v[6 + k];
  }
  sapu_cross3_f64(n, e0, e1);
  double den = sapu_dot3_f64(lv, n);
  if (fabs(den) < SAP_RAY_MINVAL) return -1;
  double x = -sapu_dot3_f64(r, n) / den;
  if (normal) {
    sapw_rayNormalize(n);
    sapu_copy3_f64(normal, n);
  }
  return x;
}

/* ---- primitives (pos, mat: the geom's world pose; size: MuJoCo's geom size) ---------- */

/* plane: front face only (v.z < 0 locally), within the rendered rectangle when sized */
SAP_HD double sapw_rayPlane(const double* pos, const double* mat, const double* size, const double* p,
                            const double* v, double* normal) {
  double lp[3], lv[3];
  sapw_rayMap(pos, mat, p, v, lp, lv);
  if (lv[2] > -SAP_RAY_MINVAL) return -1;
  double x = -lp[2] / lv[2];
  if (x < 0) return -1;
  double p0 = lp[0] + x * lv[0], p1 = lp[1] + x * lv[1];
  if ((size[0] <= 0 || fabs(p0) <= size[0]) && (size[1] <= 0 || fabs(p1) <= size[1])) {
    if (normal) { normal[0] = mat[2]; normal[1] = mat[5]; normal[2] = mat[8]; }
    return x;
  }
  return -1;
}

/* sphere of squared radius r2 about pos: |p + x v - pos|^2 = r2 */
SAP_HD double sapw_raySphere(const double* pos, double r2, const double* p, const double* v, double* normal) {
  double d[3] = {p[0] - pos[0], p[1] - pos[1], p[2] - pos[2]}, xx[2];
  double x = sapw_rayQuad(sapu_dot3_f64(v, v), sapu_dot3_f64(v, d), sapu_dot3_f64(d, d) - r2, xx);
  if (normal && x >= 0) {
    for (int k = 0; k < 3; k++) normal[k] = p[k] + x * v[k] - pos[k];
    sapw_rayNormalize(normal);
  }
  return x;
}

/* capsule: bounding sphere, the round side within |z| <= h, the cap half-spheres */
SAP_HD double sapw_rayCapsule(const double* pos, const double* mat, const double* size, const double* p,
                              const double* v, double* normal) {
  double ssz = size[0] + size[1];
  if (sapw_raySphere(pos, ssz * ssz, p, v, (double*)0) < 0) return -1;
  double lp[3], lv[3], xx[2], x = -1, r2 = size[0] * size[0];
  int type = 0;  // -1 bottom cap, 0 side, 1 top cap
  sapw_rayMap(pos, mat, p, v, lp, lv);
  double sol = sapw_rayQuad(lv[0] * lv[0] + lv[1] * lv[1], lv[0] * lp[0] + lv[1] * lp[1],
                            lp[0] * lp[0] + lp[1] * lp[1] - r2, xx);
  if (sol >= 0 && fabs(lp[2] + sol * lv[2]) <= size[1]) { x = sol; type = 0; }
  double a = sapu_dot3_f64(lv, lv);
  for (int s = 1; s >= -1; s -= 2) {  // top cap, then bottom cap (MuJoCo's order)
    double d[3] = {lp[0], lp[1], lp[2] - s * size[1]};
    sapw_rayQuad(a, sapu_dot3_f64(lv, d), sapu_dot3_f64(d, d) - r2, xx);
    for (int i = 0; i < 2; i++) {
      double z = lp[2] + xx[i] * lv[2];
      if (xx[i] >= 0 && (s > 0 ? z >= size[1] : z <= -size[1]) && (x < 0 || xx[i] < x)) {
        x = xx[i];
        type = s;
      }
    }
  }
  if (normal && x >= 0) {
    double n[3] = {lp[0] + lv[0] * x, lp[1] + lv[1] * x, type == 0 ? 0 : lp[2] + lv[2] * x - size[1] * type};
    sapw_rayNormalize(n);
    sapu_mulMatVec3_f64(normal, mat, n);
  }
  return x;
}

/* ellipsoid: (lp + x lv)' diag(1 / size^2) (lp + x lv) = 1 */
SAP_HD double sapw_rayEllipsoid(const double* pos, const double* mat, const double* size, const double* p,
                                const double* v, double* normal) {
  double lp[3], lv[3], xx[2];
  sapw_rayMap(pos, mat, p, v, lp, lv);
  double s[3] = {1 / (size[0] * size[0]), 1 / (size[1] * size[1]), 1 / (size[2] * size[2])};
  double a = s[0] * lv[0] * lv[0] + s[1] * lv[1] * lv[1] + s[2] * lv[2] * lv[2];
  double b = s[0] * lv[0] * lp[0] + s[1] * lv[1] * lp[1] + s[2] * lv[2] * lp[2];
  double c = s[0] * lp[0] * lp[0] + s[1] * lp[1] * lp[1] + s[2] * lp[2] * lp[2] - 1;
  double x = sapw_rayQuad(a, b, c, xx);
  if (normal && x >= 0) {
    double n[3];
    for (int k = 0; k < 3; k++) n[k] = s[k] * (lp[k] + x * lv[k]);  // gradient
    sapw_rayNormalize(n);
    sapu_mulMatVec3_f64(normal, mat, n);
  }
  return x;
}

/* cylinder: bounding sphere, the flat faces within the radius, the round side within |z| <= h */
SAP_HD double sapw_rayCylinder(const double* pos, const double* mat, const double* size, const double* p,
                               const double* v, double* normal) {
  if (sapw_raySphere(pos, size[0] * size[0] + size[1] * size[1], p, v, (double*)0) < 0) return -1;
  double lp[3], lv[3], xx[2], x = -1, sol, r2 = size[0] * size[0];
  int type = 0;
  sapw_rayMap(pos, mat, p, v, lp, lv);
  if (fabs(lv[2]) > SAP_RAY_MINVAL)
    for (int s = -1; s <= 1; s += 2) {
      sol = (s * size[1] - lp[2]) / lv[2];
      if (sol >= 0) {
        double p0 = lp[0] + sol * lv[0], p1 = lp[1] + sol * lv[1];
        if (p0 * p0 + p1 * p1 <= r2 && (x < 0 || sol < x)) { x = sol; type = s; }
      }
    }
  sol = sapw_rayQuad(lv[0] * lv[0] + lv[1] * lv[1], lv[0] * lp[0] + lv[1] * lp[1],
                     lp[0] * lp[0] + lp[1] * lp[1] - r2, xx);
  if (sol >= 0 && fabs(lp[2] + sol * lv[2]) <= size[1] && (x < 0 || sol < x)) { x = sol; type = 0; }
  if (normal && x >= 0) {
    double n[3] = {0, 0, (double)type};
    if (type == 0) {
      n[0] = lp[0] + lv[0] * x;
      n[1] = lp[1] + lv[1] * x;
      sapw_rayNormalize(n);
    }
    sapu_mulMatVec3_f64(normal, mat, n);
  }
  return x;
}

/* box: bounding sphere, then each face (x = (+-size_i - lp_i) / lv_i) within its rectangle;
 * all (6, optional): every face's hit distance (-1 none), in order -x +x -y +y -z +z */
SAP_HD double sapw_rayBox(const double* pos, const double* mat, const double* size, const double* p,
                          const double* v, double* all, double* normal) {
  if (all)
    for (int k = 0; k < 6; k++) all[k] = -1;
  if (sapw_raySphere(pos, sapu_dot3_f64(size, size), p, v, (double*)0) < 0) return -1;
  double lp[3], lv[3], x = -1;
  int axis = -1, side = 0;
  sapw_rayMap(pos, mat, p, v, lp, lv);
  for (int i = 0; i < 3; i++) {
    if (!(fabs(lv[i]) > SAP_RAY_MINVAL)) continue;
    int j = i == 0 ? 1 : 0, k = i == 2 ? 1 : 2;  // the face's other axes
    for (int s = -1; s <= 1; s += 2) {
      double sol = (s * size[i] - lp[i]) / lv[i];
      if (sol < 0) continue;
      if (fabs(lp[j] + sol * lv[j]) <= size[j] && fabs(lp[k] + sol * lv[k]) <= size[k]) {
        if (x < 0 || sol < x) { x = sol; axis = i; side = s; }
        if (all) all[2 * i + (s + 1) / 2] = sol;
      }
    }
  }
  if (normal && x >= 0) {
    double n[3] = {0, 0, 0};
    n[axis] = side;
    sapu_mulMatVec3_f64(normal, mat, n);
  }
  return x;
}

/* ---- heightfield and mesh -------------------------------------------------------------- */

/* heightfield h of geom pose (pos, mat): the base box below z = 0, then within the top box
 * (0 <= z <= size_z) the two triangles of every cell under the ray's segment and the four
 * side walls below the boundary profile (mj_rayHfield) */
SAP_HD double sapw_rayHfield(const sapModel* m, int h, const double* pos, const double* mat, const double* p,
                             const double* v, double* normal) {
  int nrow = m->hfield_nrow[h], ncol = m->hfield_ncol[h];
  const double* size = m->hfield_size + 4 * h;
  const float* data = m->hfield_data + m->hfield_adr[h];
  double bsz[3] = {size[0], size[1], size[3] * 0.5}, tsz[3] = {size[0], size[1], size[2] * 0.5};
  double bpos[3], tpos[3], nb[3], all[6], nloc[3] = {0, 0, 0};
  for (int k = 0; k < 3; k++) {
    bpos[k] = pos[k] - mat[3 * k + 2] * size[3] * 0.5;
    tpos[k] = pos[k] + mat[3 * k + 2] * size[2] * 0.5;
  }
  double x = sapw_rayBox(bpos, mat, bsz, p, v, (double*)0, normal ? nb : (double*)0);
  double top = sapw_rayBox(tpos, mat, tsz, p, v, all, (double*)0);
  if (top < 0) {
    if (normal && x >= 0) sapu_copy3_f64(normal, nb);
    return x;
  }
  double lp[3], lv[3], b0[3], b1[3];
  sapw_rayMap(pos, mat, p, v, lp, lv);
  sapw_rayBasis(lv, b0, b1);
  /* the ray's segment in the top box, its footprint in cells (+1 padding) */
  double seg[2] = {0, top};
  for (int i = 0; i < 6; i++)
    if (all[i] > seg[1]) { seg[0] = top; seg[1] = all[i]; }
  double dx = (2.0 * size[0]) / (ncol - 1), dy = (2.0 * size[1]) / (nrow - 1), SX[2], SY[2];
  for (int i = 0; i < 2; i++) {
    SX[i] = (lp[0] + seg[i] * lv[0] + size[0]) / dx;
    SY[i] = (lp[1] + seg[i] * lv[1] + size[1]) / dy;
  }
  int cmin = (int)floor(fmin(SX[0], SX[1])) - 1, cmax = (int)ceil(fmax(SX[0], SX[1])) + 1;
  int rmin = (int)floor(fmin(SY[0], SY[1])) - 1, rmax = (int)ceil(fmax(SY[0], SY[1])) + 1;
  cmin = cmin > 0 ? cmin : 0;
  rmin = rmin > 0 ? rmin : 0;
  cmax = cmax < ncol - 1 ? cmax : ncol - 1;
  rmax = rmax < nrow - 1 ? rmax : nrow - 1;
  if (normal && x >= 0) sapu_mulMatTVec3_f64(nloc, mat, nb);
  for (int r = rmin; r < rmax; r++) {
    /* MuJoCo tests every cell of the footprint's bounding rectangle; only the cells near the
     * segment's crossing of this row (one row and one column of padding) can hold a hit, so
     * testing those, in the same order, gives the same answer in O(cells crossed) */
    int c0 = cmin, c1 = cmax;
    if (lv[1] != 0) {
      double ya = (dy * (r - 1) - size[1] - lp[1]) / lv[1], yb = (dy * (r + 2) - size[1] - lp[1]) / lv[1];
      double t0 = fmax(fmin(ya, yb), seg[0]), t1 = fmin(fmax(ya, yb), seg[1]);
      if (!(t0 <= t1)) continue;
      double X0 = (lp[0] + t0 * lv[0] + size[0]) / dx, X1 = (lp[0] + t1 * lv[0] + size[0]) / dx;
      int a = (int)floor(fmin(X0, X1)) - 1, b = (int)ceil(fmax(X0, X1)) + 1;
      c0 = a > cmin ? a : cmin;
      c1 = b < cmax ? b : cmax;
    }
    for (int c = c0; c < c1; c++) {
      double x0 = dx * c - size[0], x1 = dx * (c + 1) - size[0];
      double y0 = dy * r - size[1], y1 = dy * (r + 1) - size[1];
      double z00 = data[r * ncol + c] * size[2], z10 = data[r * ncol + c + 1] * size[2];
      double z11 = data[(r + 1) * ncol + c + 1] * size[2], z01 = data[(r + 1) * ncol + c] * size[2];
      /* (c, r) (c+1, r) (c+1, r+1), then (c, r) (c+1, r+1) (c, r+1): normals point up */
      double ta[9] = {x0, y0, z00, x1, y0, z10, x1, y1, z11};
      double tb[9] = {x0, y0, z00, x1, y1, z11, x0, y1, z01};
      for (int t = 0; t < 2; t++) {
        double nt[3];
        double sol = sapw_rayTriangle(t ? tb : ta, lp, lv, b0, b1, normal ? nt : (double*)0);
        if (sol >= 0 && (x < 0 || sol < x)) {
          x = sol;
          if (normal) sapu_copy3_f64(nloc, nt);
        }
      }
    }
  }
  /* side walls -x +x -y +y: hit below the boundary profile's segment */
  for (int i = 0; i < 4; i++) {
    if (!(all[i] >= 0 && (all[i] < x || x < 0))) continue;
    double z = (lp[2] + all[i] * lv[2]) / size[2], y, y0, z0, z1;
    if (i < 2) {
      y = (lp[1] + all[i] * lv[1] + size[1]) / dy;
      y0 = fmax(0.0, fmin((double)(nrow - 2), floor(y)));
      z0 = data[(int)y0 * ncol + (i == 1 ? ncol - 1 : 0)];
      z1 = data[((int)y0 + 1) * ncol + (i == 1 ? ncol - 1 : 0)];
    } else {
      y = (lp[0] + all[i] * lv[0] + size[0]) / dx;
      y0 = fmax(0.0, fmin((double)(ncol - 2), floor(y)));
      z0 = data[(int)y0 + (i == 3 ? (nrow - 1) * ncol : 0)];
      z1 = data[(int)y0 + 1 + (i == 3 ? (nrow - 1) * ncol : 0)];
    }
    if (z < z0 * (y0 + 1 - y) + z1 * (y - y0)) {
      x = all[i];
      if (normal) {
        nloc[0] = nloc[1] = nloc[2] = 0;
        nloc[i / 2] = i & 1 ? 1 : -1;
      }
    }
  }
  if (normal && x >= 0) sapu_mulMatVec3_f64(normal, mat, nloc);
  return x;
}

/* mesh geom g (mesh id d) of pose (pos, mat): the box of half sizes geom_size about the geom
 * frame, then every triangle of the mesh (mj_rayMesh); needs the model's faces (nmeshface) */
SAP_HD double sapw_rayMesh(const sapModel* m, int g, int d, const double* pos, const double* mat,
                           const double* p, const double* v, double* normal) {
  if (sapw_rayBox(pos, mat, m->geom_size + 3 * g, p, v, (double*)0, (double*)0) < 0) return -1;
  double lp[3], lv[3], b0[3], b1[3], x = -1, nloc[3] = {0, 0, 0}, nt[3];
  sapw_rayMap(pos, mat, p, v, lp, lv);
  sapw_rayBasis(lv, b0, b1);
  const int* face = m->mesh_face + 3 * m->mesh_faceadr[d];
  const double* vert = m->mesh_vert + 3 * m->mesh_vertadr[d];
  for (int f = 0; f < m->mesh_facenum[d]; f++) {
    double t[9];
    for (int i = 0; i < 3; i++) sapu_copy3_f64(t + 3 * i, vert + 3 * face[3 * f + i]);
    double sol = sapw_rayTriangle(t, lp, lv, b0, b1, normal ? nt : (double*)0);
    if (sol >= 0 && (x < 0 || sol < x)) {
      x = sol;
      if (normal) sapu_copy3_f64(nloc, nt);
    }
  }
  if (normal && x >= 0) sapu_mulMatVec3_f64(normal, mat, nloc);
  return x;
}

/* ---- the scene ------------------------------------------------------------------------ */

/* nearest hit of the ray p + x v among the geoms of a world whose poses are (gpos, gmat)
 * (ngeom x 3, x 9), leaving out the geoms of body bodyexclude and the invisible ones
 * (geom_rayskip); mj_ray with geomgroup NULL and flg_static 1. Returns x (-1: no hit), the
 * geom hit (-1) and, when normal is given, the surface normal there (0 without a hit). */
SAP_HD double sapw_ray(const sapModel* m, const double* gpos, const double* gmat, const double* p,
                       const double* v, int bodyexclude, int* geomid, double* normal) {
  double dist = -1, n[3];
  if (geomid) *geomid = -1;
  if (normal) normal[0] = normal[1] = normal[2] = 0;
  for (int g = 0; g < m->ngeom; g++) {
    if (m->geom_bodyid[g] == bodyexclude || m->geom_rayskip[g]) continue;
    const double* pos = gpos + 3 * g;
    const double* mat = gmat + 9 * g;
    const double* size = m->geom_size + 3 * g;
    double* pn = normal ? n : (double*)0;
    double x = -1;
    switch (m->geom_type[g]) {
      case SAP_GEOM_PLANE: x = sapw_rayPlane(pos, mat, size, p, v, pn); break;
      case SAP_GEOM_SPHERE: x = sapw_raySphere(pos, size[0] * size[0], p, v, pn); break;
      case SAP_GEOM_CAPSULE: x = sapw_rayCapsule(pos, mat, size, p, v, pn); break;
      case SAP_GEOM_ELLIPSOID: x = sapw_rayEllipsoid(pos, mat, size, p, v, pn); break;
      case SAP_GEOM_CYLINDER: x = sapw_rayCylinder(pos, mat, size, p, v, pn); break;
      case SAP_GEOM_BOX: x = sapw_rayBox(pos, mat, size, p, v, (double*)0, pn); break;
      case SAP_GEOM_HFIELD: x = sapw_rayHfield(m, m->geom_dataid[g], pos, mat, p, v, pn); break;
      case SAP_GEOM_MESH: x = sapw_rayMesh(m, g, m->geom_dataid[g], pos, mat, p, v, pn); break;
      default: break;
    }
    if (x >= 0 && (x < dist || dist < 0)) {
      dist = x;
      if (geomid) *geomid = g;
      if (normal) sapu_copy3_f64(normal, n);
    }
  }
  return dist;
}

#endif
