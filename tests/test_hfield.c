/* Heightfield collision tests: the narrow phase against MuJoCo 4's own heightfield
 * routine (mjCOLLISIONFUNC[hfield][type], its libccd MPR per prism) on the same MJCF at
 * the same poses, over grids of different aspect ratios, sizes over three decades,
 * flat to steep elevations, tilted heightfields and geoms on cell diagonals; analytic
 * planes (flat and sloped heightfields); filtering and capacity; and end to end a box
 * settling on bumps and a sphere rolling down a sloped heightfield (a = 5/7 g sin t). */
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "collision_ref.h"
#include "sapsim/sapsim.h"
#include "sim.h"
#include "../host/collision.h"
#include "../kernels/collision.h"

/* ---- scenes ------------------------------------------------------------------------ */

/* a heightfield: grid, MuJoCo size (x, y, top, base), elevation kind (0 random bumps,
 * 1 flat, 2 linear slope along x), pose of the heightfield geom (world body) */
typedef struct Hf {
  const char* name;
  int nrow, ncol;
  double size[4];
  int kind;
  double pos[3], euler[3];  /* degrees */
} Hf;

static const char* TYPE_NAME[8] = {"plane", "hfield", "sphere", "capsule", "ellipsoid", "cylinder", "box", "mesh"};

/* geom attributes of type t at scale sc (its largest half size) */
static void geomAttr(int t, double sc, char* out, int n) {
  switch (t) {
    case SAP_GEOM_SPHERE: snprintf(out, n, "type=\"sphere\" size=\"%g\"", sc); break;
    case SAP_GEOM_CAPSULE: snprintf(out, n, "type=\"capsule\" size=\"%g %g\"", 0.35 * sc, 0.65 * sc); break;
    case SAP_GEOM_ELLIPSOID: snprintf(out, n, "type=\"ellipsoid\" size=\"%g %g %g\"", sc, 0.6 * sc, 0.4 * sc); break;
    case SAP_GEOM_CYLINDER: snprintf(out, n, "type=\"cylinder\" size=\"%g %g\"", 0.6 * sc, sc); break;
    case SAP_GEOM_BOX: snprintf(out, n, "type=\"box\" size=\"%g %g %g\"", sc, 0.55 * sc, 0.3 * sc); break;
    default: snprintf(out, n, "type=\"mesh\" mesh=\"hull\""); break;
  }
}

static const char* tmpPath(const char* tag) {
  static char path[128];
  snprintf(path, sizeof(path), "/tmp/sapsim_test_hfield_%d_%s.xml", (int)getpid(), tag);
  return path;
}

/* MJCF of heightfield h (contact parameters extra) with a free body carrying geom type t
 * at scale sc (mass 1); returns the file path */
static const char* hfScene(const Hf* h, int t, double sc, const char* extra) {
  size_t cap = 80 * (size_t)h->nrow * h->ncol + 8192;
  char* xml = malloc(cap);
  char* el = malloc(26 * (size_t)h->nrow * h->ncol + 16);
  char g[256];
  el[0] = 0;
  for (int r = 0, o = 0; r < h->nrow; r++)
    for (int c = 0; c < h->ncol; c++) {
      double v = h->kind == 1 ? 0.5 : h->kind == 2 ? (double)c / (h->ncol - 1) : check_uniform(0, 1);
      o += sprintf(el + o, "%.17g ", v);
    }
  geomAttr(t, sc, g, sizeof(g));
  snprintf(xml, cap,
           "<mujoco><option timestep=\"0.002\"/><asset><hfield name=\"h\" nrow=\"%d\" ncol=\"%d\" size=\"%.17g %.17g %.17g %.17g\" "
           "elevation=\"%s\"/><mesh name=\"hull\" scale=\"%g %g %g\" vertex=\"1 0 0  -1 0 0  0 0.8 0  0 -0.8 0  0 0 0.6  "
           "0 0 -0.6  0.5 0.4 0.3  0.5 0.4 -0.3  0.5 -0.4 0.3  -0.5 -0.4 -0.3\"/></asset>"
           "<worldbody><geom name=\"h\" type=\"hfield\" hfield=\"h\" pos=\"%g %g %g\" euler=\"%g %g %g\" %s/>"
           "<body name=\"b\"><freejoint/><geom name=\"g\" %s mass=\"1\" %s/></body></worldbody></mujoco>",
           h->nrow, h->ncol, h->size[0], h->size[1], h->size[2], h->size[3], el, sc, sc, sc, h->pos[0], h->pos[1],
           h->pos[2], h->euler[0], h->euler[1], h->euler[2], extra, g, extra);
  const char* path = tmpPath("scene");
  FILE* f = fopen(path, "w");
  if (f) { fputs(xml, f); fclose(f); }
  free(xml);
  free(el);
  return path;
}

/* ---- MuJoCo and sapsim side by side ------------------------------------------------- */

typedef struct Pair {
  mjModel* mj;
  mjData* md;
  sapModel* sm;
  int t;
} Pair;

static int pairOpen(Pair* p, const Hf* h, int t, double sc) {
  const char* path = hfScene(h, t, sc, "");
  char err[1000] = "";
  p->t = t;
  p->mj = mj_loadXML(path, NULL, err, sizeof(err));
  if (!p->mj) { fprintf(stderr, "  mj_loadXML: %s\n", err); return 0; }
  // libccd MPR (sapsim's algorithm) for spheres, capsules, boxes, meshes; MuJoCo 4's
  // default native collider for ellipsoids and cylinders (sapsim: EPA per prism)
  if (t != SAP_GEOM_ELLIPSOID && t != SAP_GEOM_CYLINDER) p->mj->opt.disableflags |= mjDSBL_NATIVECCD;
  p->md = mj_makeData(p->mj);
  if (sap_loadModel(path, &p->sm) != SAP_OK) { fprintf(stderr, "  %s\n", sap_lastError()); return 0; }
  remove(path);
  return 1;
}

static void pairClose(Pair* p) {
  mj_deleteData(p->md);
  mj_deleteModel(p->mj);
  sap_freeModel(p->sm);
}

static void randomQuat(double* q) {
  double n = 0;
  for (int k = 0; k < 4; k++) { q[k] = check_uniform(-1, 1); n += q[k] * q[k]; }
  for (int k = 0; k < 4; k++) q[k] /= sqrt(n);
}

/* body at heightfield-local point l (the geom frame of geom 0), orientation q */
static void placeLocal(Pair* p, const double* l, const double* q) {
  mj_kinematics(p->mj, p->md);
  const double* R = p->md->geom_xmat;
  const double* o = p->md->geom_xpos;
  double* qp = p->md->qpos;
  for (int k = 0; k < 3; k++) qp[k] = o[k] + R[3 * k] * l[0] + R[3 * k + 1] * l[1] + R[3 * k + 2] * l[2];
  memcpy(qp + 3, q, 4 * sizeof(double));
  mj_kinematics(p->mj, p->md);
}

static int mjContacts(Pair* p, double margin, mjPreContact* con) {
  return mjCOLLISIONFUNC[SAP_GEOM_HFIELD][p->t](p->mj, p->md, con, 0, 1, margin);
}

static int sapContacts(Pair* p, int fp64, double margin, sapcContact_f64* con) {
  return sapw_collidePair(p->sm, p->md->geom_xpos, p->md->geom_xmat, 0, 1, margin, fp64, con);
}

/* local height at which the geom first touches (bisection on MuJoCo's contact test) */
static double touchHeight(Pair* p, double x, double y, const double* q, double zlo, double zhi) {
  mjPreContact con[mjMAXCONPAIR];
  for (int it = 0; it < 50; it++) {
    double mid = 0.5 * (zlo + zhi), l[3] = {x, y, mid};
    placeLocal(p, l, q);
    if (mjContacts(p, 0, con) > 0) zlo = mid; else zhi = mid;
  }
  return zhi;
}



/* ---- second reference: brute-force supports of the prisms and of b -------------------- */

/* vertices (world) of the polytope geom 1 (box or mesh) from MuJoCo's model; count */
static int polyVerts(const Pair* p, double (*v)[3]) {
  const mjModel* m = p->mj;
  const double* R = p->md->geom_xmat + 9;
  const double* o = p->md->geom_xpos + 3;
  int n = 0;
  double l[3];
  if (p->t == SAP_GEOM_BOX) {
    for (int i = 0; i < 8; i++, n++) {
      for (int k = 0; k < 3; k++) l[k] = (i >> k & 1 ? 1 : -1) * m->geom_size[3 + k];
      for (int k = 0; k < 3; k++) v[n][k] = o[k] + R[3 * k] * l[0] + R[3 * k + 1] * l[1] + R[3 * k + 2] * l[2];
    }
  } else {
    int id = m->geom_dataid[1];
    for (int i = 0; i < m->mesh_vertnum[id]; i++, n++) {
      const float* f = m->mesh_vert + 3 * (m->mesh_vertadr[id] + i);
      for (int k = 0; k < 3; k++) v[n][k] = o[k] + R[3 * k] * f[0] + R[3 * k + 1] * f[1] + R[3 * k + 2] * f[2];
    }
  }
  return n;
}

/* the 6 vertices (world) of prism (r, c, t) of heightfield geom 0, from MuJoCo's data */
static void prismVerts(const Pair* p, int r, int c, int t, double (*v)[3]) {
  const mjModel* m = p->mj;
  const double* R = p->md->geom_xmat;
  const double* o = p->md->geom_xpos;
  const double* sz = m->hfield_size;
  int nrow = m->hfield_nrow[0], ncol = m->hfield_ncol[0];
  const int dc[2][3] = {{0, 0, 1}, {0, 1, 1}}, dr[2][3] = {{1, 0, 1}, {0, 1, 0}};
  for (int i = 0; i < 3; i++) {
    int cc = c + dc[t][i], rr = r + dr[t][i];
    double l[2][3] = {{-sz[0] + 2 * sz[0] * cc / (ncol - 1), -sz[1] + 2 * sz[1] * rr / (nrow - 1),
                       m->hfield_data[rr * ncol + cc] * sz[2]}, {0, 0, -sz[3]}};
    l[1][0] = l[0][0];
    l[1][1] = l[0][1];
    for (int j = 0; j < 2; j++)
      for (int k = 0; k < 3; k++) v[3 * j + i][k] = o[k] + R[3 * k] * l[j][0] + R[3 * k + 1] * l[j][1] + R[3 * k + 2] * l[j][2];
  }
}

/* overlap of point sets a (na) and b (nb) along unit L, a pushed to -L: max a.L - min b.L */
static double overlapAlong(double (*a)[3], int na, double (*b)[3], int nb, const double* L) {
  double amax = -1e300, bmin = 1e300;
  for (int i = 0; i < na; i++) amax = fmax(amax, a[i][0] * L[0] + a[i][1] * L[1] + a[i][2] * L[2]);
  for (int i = 0; i < nb; i++) bmin = fmin(bmin, b[i][0] * L[0] + b[i][1] * L[1] + b[i][2] * L[2]);
  return amax - bmin;
}

/* exact minimum penetration depth of prism P and polytope B (nb vertices): the
 * smallest overlap over the crosses of every pair of candidate edge directions (the
 * prism's 7, the box's 3 axes or every vertex difference of the mesh). This set
 * contains every face normal and edge-edge axis, so its minimum is the true one
 * (extra axes cannot lower it); < 0 when they are apart. */
static double satPoly(double (*P)[3], double (*B)[3], int nb, int box) {
  int cap = 7 + (box ? 3 : nb * (nb - 1) / 2), ne = 0;
  double (*e)[3] = malloc(sizeof(double[3]) * cap), L[3], best = 1e300;
  for (int i = 0; i < 3; i++, ne++)  // prism top edges, base edges, vertical
    for (int k = 0; k < 3; k++) e[ne][k] = P[3 + (i + 1) % 3][k] - P[3 + i][k];
  for (int i = 0; i < 3; i++, ne++)
    for (int k = 0; k < 3; k++) e[ne][k] = P[(i + 1) % 3][k] - P[i][k];
  for (int k = 0; k < 3; k++) e[ne][k] = P[3][k] - P[0][k];
  ne++;
  if (box) {
    for (int j = 0; j < 3; j++, ne++)
      for (int k = 0; k < 3; k++) e[ne][k] = B[1 << j][k] - B[0][k];
  } else {
    for (int i = 0; i < nb; i++)
      for (int j = i + 1; j < nb; j++, ne++)
        for (int k = 0; k < 3; k++) e[ne][k] = B[j][k] - B[i][k];
  }
  for (int i = 0; i < ne; i++)
    for (int j = i + 1; j < ne; j++) {
      L[0] = e[i][1] * e[j][2] - e[i][2] * e[j][1];
      L[1] = e[i][2] * e[j][0] - e[i][0] * e[j][2];
      L[2] = e[i][0] * e[j][1] - e[i][1] * e[j][0];
      double n = sqrt(L[0] * L[0] + L[1] * L[1] + L[2] * L[2]);
      if (n < 1e-12) continue;
      for (int k = 0; k < 3; k++) L[k] /= n;
      double N[3] = {-L[0], -L[1], -L[2]};
      best = fmin(best, fmin(overlapAlong(P, 6, B, nb, L), overlapAlong(P, 6, B, nb, N)));
    }
  free(e);
  return best;
}

/* sphere (centre x, radius rs) against prism P: overlap along unit L, and the exact
 * minimum penetration over the prism's face normals, the directions from its vertices
 * to x and from its edges to x (perpendicular): every closest-feature direction */
static double overlapSphere(double (*P)[3], const double* x, double rs, const double* L) {
  double amax = -1e300;
  for (int i = 0; i < 6; i++) amax = fmax(amax, P[i][0] * L[0] + P[i][1] * L[1] + P[i][2] * L[2]);
  return amax - (x[0] * L[0] + x[1] * L[1] + x[2] * L[2] - rs);
}
static double satSphere(double (*P)[3], const double* x, double rs) {
  const int ed[9][2] = {{0, 1}, {1, 2}, {2, 0}, {3, 4}, {4, 5}, {5, 3}, {0, 3}, {1, 4}, {2, 5}};
  const int fc[5][3] = {{3, 4, 5}, {0, 1, 2}, {0, 1, 3}, {1, 2, 4}, {2, 0, 5}};
  double best = 1e300, L[3];
  for (int k = 0; k < 5 + 6 + 9; k++) {
    if (k < 5) {  // face normal (either sign is tried below)
      double u[3], v[3];
      for (int j = 0; j < 3; j++) { u[j] = P[fc[k][1]][j] - P[fc[k][0]][j]; v[j] = P[fc[k][2]][j] - P[fc[k][0]][j]; }
      L[0] = u[1] * v[2] - u[2] * v[1]; L[1] = u[2] * v[0] - u[0] * v[2]; L[2] = u[0] * v[1] - u[1] * v[0];
    } else if (k < 11) {
      for (int j = 0; j < 3; j++) L[j] = x[j] - P[k - 5][j];
    } else {
      const double* a = P[ed[k - 11][0]];
      const double* b = P[ed[k - 11][1]];
      double e[3], d[3], ee = 0, de = 0;
      for (int j = 0; j < 3; j++) { e[j] = b[j] - a[j]; d[j] = x[j] - a[j]; ee += e[j] * e[j]; de += d[j] * e[j]; }
      for (int j = 0; j < 3; j++) L[j] = d[j] - de / ee * e[j];
    }
    double n = sqrt(L[0] * L[0] + L[1] * L[1] + L[2] * L[2]);
    if (n < 1e-12) continue;
    for (int j = 0; j < 3; j++) L[j] /= n;
    double N[3] = {-L[0], -L[1], -L[2]};
    best = fmin(best, fmin(overlapSphere(P, x, rs, L), overlapSphere(P, x, rs, N)));
  }
  return best;
}

/* exact penetration of a sphere or capsule (core points x(t) on its segment, radius rs)
 * into prism P while the core stays outside: max over t of rs - dist(x(t), P), by golden
 * section (dist(x(t), P) is convex in t); >= rs when the core enters P */
static double coreDepth(const Pair* p, double (*P)[3], double t) {
  const double* c = p->md->geom_xpos + 3;
  const double* R = p->md->geom_xmat + 9;
  double hl = p->t == SAP_GEOM_CAPSULE ? p->mj->geom_size[4] : 0, x[3];
  for (int k = 0; k < 3; k++) x[k] = c[k] + t * hl * R[3 * k + 2];
  return satSphere(P, x, p->mj->geom_size[3]);
}
static double roundDepth(const Pair* p, double (*P)[3]) {
  double lo = -1, hi = 1, g = 0.6180339887498949, t1 = hi - g * (hi - lo), t2 = lo + g * (hi - lo);
  double f1 = coreDepth(p, P, t1), f2 = coreDepth(p, P, t2);
  for (int it = 0; it < 80; it++) {
    if (f1 >= f2) { hi = t2; t2 = t1; f2 = f1; t1 = hi - g * (hi - lo); f1 = coreDepth(p, P, t1); }
    else { lo = t1; t1 = t2; f1 = f2; t2 = lo + g * (hi - lo); f2 = coreDepth(p, P, t2); }
  }
  return fmax(fmax(f1, f2), fmax(coreDepth(p, P, -1), coreDepth(p, P, 1)));
}

/* a sphere or capsule contact checked without MPR: some prism's exact penetration
 * (roundDepth) equals -dist; or the core enters that prism (MPR, as MuJoCo) and -dist is
 * not below its exact minimum */
static int confirmRound(const Pair* p, double dist, double tol) {
  double P[6][3], rs = p->mj->geom_size[3];
  int nrow = p->mj->hfield_nrow[0], ncol = p->mj->hfield_ncol[0];
  for (int r = 0; r + 1 < nrow; r++)
    for (int c = 0; c + 1 < ncol; c++)
      for (int t = 0; t < 2; t++) {
        prismVerts(p, r, c, t, P);
        double e = roundDepth(p, P);
        if (fabs(e + dist) <= tol || (e >= rs && e - tol <= -dist)) return 1;
      }
  return 0;
}

/* a polytope contact (dist, n from the heightfield to b) checked without MPR: MPR's
 * depth -dist is the distance from the origin to a boundary point of the Minkowski
 * difference along n, so for the prism it came from, exact minimum penetration <=
 * -dist <= overlap along n (brute-force supports). Returns 1 when some intersecting
 * prism brackets it within tol. */
static int confirmPoly(const Pair* p, double dist, const double* n, double tol) {
  double B[512][3], P[6][3];
  int nb = polyVerts(p, B), nrow = p->mj->hfield_nrow[0], ncol = p->mj->hfield_ncol[0];
  for (int r = 0; r + 1 < nrow; r++)
    for (int c = 0; c + 1 < ncol; c++)
      for (int t = 0; t < 2; t++) {
        prismVerts(p, r, c, t, P);
        double ov = overlapAlong(P, 6, B, nb, n);
        if (ov + dist < -tol) continue;
        double sat = satPoly(P, B, nb, p->t == SAP_GEOM_BOX);
        if (sat > 0 && sat - tol <= -dist) return 1;
      }
  return 0;
}

/* a curved contact (ellipsoid, cylinder: EPA's minimum penetration per prism) checked by
 * brute-force support functions (tests/collision_ref.h): for some prism P overlapping b,
 * (dist, n) is exact -- dist is P and b's signed distance (minus the minimum
 * penetration) and n separates them by that much -- within tol */
static int confirmCurved(const Pair* p, double dist, const double* n, const double* pos, double tol) {
  static Pose P;
  double V[6][3], l[3], d[3];
  int nrow = p->mj->hfield_nrow[0], ncol = p->mj->hfield_ncol[0];
  // the cell under the contact point (heightfield frame), and its neighbours
  const double* R = p->md->geom_xmat;
  const double* sz = p->mj->hfield_size;
  for (int k = 0; k < 3; k++) d[k] = pos[k] - p->md->geom_xpos[k];
  for (int k = 0; k < 3; k++) l[k] = R[k] * d[0] + R[3 + k] * d[1] + R[6 + k] * d[2];
  int c0 = (int)floor((l[0] + sz[0]) / (2 * sz[0]) * (ncol - 1)), r0 = (int)floor((l[1] + sz[1]) / (2 * sz[1]) * (nrow - 1));
  memset(&P, 0, sizeof(P));
  P.b.type = p->t;
  memcpy(P.b.pos, p->md->geom_xpos + 3, sizeof(P.b.pos));
  memcpy(P.b.mat, p->md->geom_xmat + 9, sizeof(P.b.mat));
  memcpy(P.b.size, p->mj->geom_size + 3, sizeof(P.b.size));
  P.a.type = mjGEOM_MESH;
  P.a.nvert = 6;
  P.a.mat[0] = P.a.mat[4] = P.a.mat[8] = 1;
  P.L = fmax(1, p->mj->geom_rbound[1]);
  P.tol = tol;
  for (int r = r0 - 1 < 0 ? 0 : r0 - 1; r <= r0 + 1 && r + 1 < nrow; r++)
    for (int c = c0 - 1 < 0 ? 0 : c0 - 1; c <= c0 + 1 && c + 1 < ncol; c++)
      for (int t = 0; t < 2; t++) {
        prismVerts(p, r, c, t, V);
        for (int k = 0; k < 3; k++) {
          P.a.pos[k] = 0;
          for (int i = 0; i < 6; i++) P.a.pos[k] += V[i][k] / 6;
        }
        for (int i = 0; i < 6; i++)
          for (int k = 0; k < 3; k++) P.a.vert[i][k] = V[i][k] - P.a.pos[k];
        // cheap rejection: along n the prism and b must overlap by -dist
        if (sepAlong(&P, n) > dist + tol) continue;
        P.have_ray = 0;
        double seed[1][3] = {{n[0], n[1], n[2]}};
        seedsAndMin(&P, (const double (*)[3])seed, 1);
        if (judge(&P, dist, n).v == V_EXACT) return 1;
      }
  return 0;
}

/* prisms that overlap b by brute force (signed distance below -tol: nover) and those
 * within tol of touching (nclose), over the cells under b's footprint */
static void countOverlaps(const Pair* p, double tol, int* nover, int* nclose) {
  static Pose P;
  double V[6][3], ax[3], lo[2], hi[2];
  int nrow = p->mj->hfield_nrow[0], ncol = p->mj->hfield_ncol[0];
  const double* R = p->md->geom_xmat;
  const double* o = p->md->geom_xpos;
  const double* sz = p->mj->hfield_size;
  memset(&P, 0, sizeof(P));
  P.b.type = p->t;
  memcpy(P.b.pos, p->md->geom_xpos + 3, sizeof(P.b.pos));
  memcpy(P.b.mat, p->md->geom_xmat + 9, sizeof(P.b.mat));
  memcpy(P.b.size, p->mj->geom_size + 3, sizeof(P.b.size));
  P.a.type = mjGEOM_MESH;
  P.a.nvert = 6;
  P.a.mat[0] = P.a.mat[4] = P.a.mat[8] = 1;
  P.L = fmax(1, p->mj->geom_rbound[1]);
  P.tol = tol;
  // b's extent along the heightfield's x and y axes
  for (int k = 0; k < 2; k++) {
    for (int j = 0; j < 3; j++) ax[j] = R[3 * j + k];
    double c = dot3(o, ax), nax[3] = {-ax[0], -ax[1], -ax[2]};
    hi[k] = support(&P.b, ax) - c;
    lo[k] = -support(&P.b, nax) - c;
  }
  *nover = *nclose = 0;
  for (int r = 0; r + 1 < nrow; r++)
    for (int c = 0; c + 1 < ncol; c++) {
      double x0 = -sz[0] + 2 * sz[0] * c / (ncol - 1), x1 = -sz[0] + 2 * sz[0] * (c + 1) / (ncol - 1);
      double y0 = -sz[1] + 2 * sz[1] * r / (nrow - 1), y1 = -sz[1] + 2 * sz[1] * (r + 1) / (nrow - 1);
      if (x1 < lo[0] - tol || x0 > hi[0] + tol || y1 < lo[1] - tol || y0 > hi[1] + tol) continue;
      for (int t = 0; t < 2; t++) {
        prismVerts(p, r, c, t, V);
        for (int k = 0; k < 3; k++) {
          P.a.pos[k] = 0;
          for (int i = 0; i < 6; i++) P.a.pos[k] += V[i][k] / 6;
        }
        for (int i = 0; i < 6; i++)
          for (int k = 0; k < 3; k++) P.a.vert[i][k] = V[i][k] - P.a.pos[k];
        seedsAndMin(&P, NULL, 0);
        *nover += P.dref < -tol;
        *nclose += fabs(P.dref) <= tol;
      }
    }
}

/* MuJoCo's list holds a contact equal to c (dist, normal) within tol_d, tol_n: a tie
 * between two deepest contacts picked differently */
static int inMjList(const mjPreContact* mc, int nm, const sapcContact_f64* c, double tol_d, double tol_n) {
  for (int i = 0; i < nm; i++)
    if (fabs(mc[i].dist - c->dist) <= tol_d && refNormalErr(mc[i].normal, c->n) <= tol_n) return 1;
  return 0;
}

/* ---- oracle: MuJoCo 4's mjc_ConvexHField ----------------------------------------------- */

/* grids of different aspect ratios, cell sizes over three decades (3 mm to 2.5 m),
 * relief from 1% to 300% of the cell, tilted and offset heightfields */
static const Hf HFS[] = {
    {"square bumps", 12, 12, {0.5, 0.5, 0.15, 0.05}, 0, {0, 0, 0}, {0, 0, 0}},
    {"long strip", 4, 41, {2.0, 0.15, 0.08, 0.1}, 0, {0.3, -0.2, 0.1}, {0, 0, 30}},
    {"fine steep", 30, 9, {0.012, 0.045, 0.02, 0.005}, 0, {0, 0, 0}, {0, 0, 0}},
    {"large tilted", 9, 6, {25, 20, 3, 2}, 0, {5, -3, 2}, {20, -35, 60}},
    {"near flat", 7, 11, {0.4, 0.3, 0.004, 0.1}, 0, {0, 0, 0}, {90, 0, 0}},
};
#define NHF ((int)(sizeof(HFS) / sizeof(HFS[0])))
#define NPOSE 300

/* typical cell size of a heightfield (for scales and tolerances) */
static double cellSize(const Hf* h) {
  return fmin(2 * h->size[0] / (h->ncol - 1), 2 * h->size[1] / (h->nrow - 1));
}

/* counts of one partner type over all heightfields */
typedef struct Tally {
  int poses, agree, confirmed, tie, count_confirmed, fail;
  double wd, wn;  /* worst |d dist| / scale and |d normal| among agreeing poses */
} Tally;

/* one heightfield and partner type over NPOSE poses: random x, y (every 4th pose on a
 * cell diagonal), random orientation, from first touch to 40% of the geom's size deep.
 * sapsim fp64 and MuJoCo (libccd MPR, the same algorithm) at margin 0 must find the same
 * number of contacts, and the deepest contact's distance and normal agree within
 * tol_d = 1e-5 x max(1, scale) and 1e-3 (MPR stops at an absolute 1e-6 m portal
 * tolerance; rounding differences move the last portal by a few tolerances, measured
 * 4.4e-6 m). A polytope pose that differs more must be confirmed by the brute-force
 * second reference (confirmPoly, confirmRound). Ellipsoids and cylinders: sapsim runs
 * EPA per prism (the minimum penetration), compared with MuJoCo 4's default native
 * collider; a deepest contact that differs is a tie in MuJoCo's list or exact on some
 * prism by the brute-force reference (confirmCurved), and a contact count that differs
 * is confirmed by brute force (countOverlaps: one contact per overlapping prism). */
static void oracleCase(const Hf* h, int t, Tally* ty) {
  Pair p;
  double cell = cellSize(h), sc = cell * pow(10, check_uniform(-0.5, 0.7));
  if (!pairOpen(&p, h, t, sc)) { check_test_failed++; return; }
  int nboth = 0, ncount = 0, nfewer = 0, ncount_bad = 0;
  double scale = fmax(1.0, sc + h->size[2]), tol_d = 1e-5 * scale, tol_n = 1e-3;
  for (int it = 0; it < NPOSE; it++) {
    double q[4], x, y;
    randomQuat(q);
    if (it % 4 == 0) {  // on the diagonal (c, r)-(c+1, r+1) of a random cell
      int c = (int)check_uniform(0, h->ncol - 1.001), r = (int)check_uniform(0, h->nrow - 1.001);
      double f = check_uniform(0, 1);
      x = -h->size[0] + (c + f) * 2 * h->size[0] / (h->ncol - 1);
      y = -h->size[1] + (r + f) * 2 * h->size[1] / (h->nrow - 1);
    } else {
      x = check_uniform(-0.9, 0.9) * h->size[0];
      y = check_uniform(-0.9, 0.9) * h->size[1];
    }
    double z0 = touchHeight(&p, x, y, q, -h->size[3] - 3 * sc, h->size[2] + 3 * sc);
    double l[3] = {x, y, z0 - check_uniform(0, 0.4) * sc};
    placeLocal(&p, l, q);
    mjPreContact mc[mjMAXCONPAIR];
    sapcContact_f64 cs[SAPC_PAIRCON];
    for (int i = 0; i < SAPC_PAIRCON; i++) cs[i].dist = NAN;
    int nm = mjContacts(&p, 0, mc), ns = sapContacts(&p, 1, 0, cs);
    if (nm == 0 && ns == 0) continue;
    if (nm == 0 || ns == 0) {  // only at first touch, within the tolerance
      double d = nm ? mc[REF_DEEPEST(mc, nm)].dist : cs[REF_DEEPEST(cs, ns)].dist;
      if (-d > tol_d && ty->fail++ < 3)
        fprintf(stderr, "  %s/%s pose %d: mujoco %d contacts, sapsim %d (dist %g)\n", h->name, TYPE_NAME[t], it, nm,
                ns, d);
      continue;
    }
    nboth++;
    ty->poses++;
    ncount += nm != ns;
    nfewer += ns < nm;
    int km = REF_DEEPEST(mc, nm), ks = REF_DEEPEST(cs, ns);
    int curved = t == SAP_GEOM_ELLIPSOID || t == SAP_GEOM_CYLINDER;
    if (curved && nm != ns) {
      // every contact only sapsim has is confirmed by brute force on some prism, and
      // sapsim has one contact per prism that overlaps b by brute force (those within
      // tol_d of touching may go either way)
      int ok = 1, nover, nclose;
      for (int i = 0; i < ns && ok; i++)
        ok = inMjList(mc, nm, &cs[i], tol_d, tol_n) || confirmCurved(&p, cs[i].dist, cs[i].n, cs[i].pos, tol_d);
      countOverlaps(&p, tol_d, &nover, &nclose);
      ok = ok && ns >= nover && ns <= nover + nclose;
      if (!ok && ncount_bad++ < 3)
        fprintf(stderr, "  %s/%s pose %d: %d contacts vs MuJoCo's %d, brute force %d overlapping prisms (+%d touching)\n",
                h->name, TYPE_NAME[t], it, ns, nm, nover, nclose);
    }
    double ed = fabs(cs[ks].dist - mc[km].dist), en = refNormalErr(cs[ks].n, mc[km].normal);
    if (ed <= tol_d && en <= tol_n) {
      ty->agree++;
      ty->wd = fmax(ty->wd, ed / scale);
      ty->wn = fmax(ty->wn, en);
      continue;
    }
    int poly = t == SAP_GEOM_BOX || t == SAP_GEOM_MESH;
    if (poly && confirmPoly(&p, cs[ks].dist, cs[ks].n, tol_d)) { ty->confirmed++; continue; }
    int round = t == SAP_GEOM_SPHERE || t == SAP_GEOM_CAPSULE;
    if (round && confirmRound(&p, cs[ks].dist, tol_d)) { ty->confirmed++; continue; }
    // curved: a tie of MuJoCo's list (two deepest contacts picked differently), else
    // exact on some prism by brute force
    if (curved && inMjList(mc, nm, &cs[ks], tol_d, tol_n)) { ty->tie++; continue; }
    if (curved && confirmCurved(&p, cs[ks].dist, cs[ks].n, cs[ks].pos, tol_d)) { ty->confirmed++; continue; }
    if (ty->fail++ < 3)
      fprintf(stderr, "  %s/%s pose %d: n %d/%d dist %.9g vs %.9g, normal (%.5f %.5f %.5f) vs (%.5f %.5f %.5f)\n",
              h->name, TYPE_NAME[t], it, ns, nm, cs[ks].dist, mc[km].dist, cs[ks].n[0], cs[ks].n[1], cs[ks].n[2],
              mc[km].normal[0], mc[km].normal[1], mc[km].normal[2]);
  }
  CHECK(nboth > NPOSE / 2, "%s/%s: only %d poses with contacts", h->name, TYPE_NAME[t], nboth);
  if (t == SAP_GEOM_ELLIPSOID || t == SAP_GEOM_CYLINDER) {
    ty->count_confirmed += ncount - ncount_bad;
    CHECK(ncount_bad == 0, "%s/%s: %d contact count differences not confirmed", h->name, TYPE_NAME[t], ncount_bad);
  } else if (t == SAP_GEOM_SPHERE || t == SAP_GEOM_CAPSULE) CHECK(nfewer == ncount, "%s/%s: more contacts than MuJoCo", h->name, TYPE_NAME[t]);
  else CHECK(ncount == 0, "%s/%s: contact counts differ at %d of %d poses", h->name, TYPE_NAME[t], ncount, nboth);
  pairClose(&p);
}

static void test_hfield_oracle(void) {
  const int types[6] = {SAP_GEOM_SPHERE, SAP_GEOM_CAPSULE, SAP_GEOM_BOX, SAP_GEOM_MESH, SAP_GEOM_ELLIPSOID,
                        SAP_GEOM_CYLINDER};
  for (int k = 0; k < 6; k++) {
    Tally ty = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int i = 0; i < NHF; i++) oracleCase(&HFS[i], types[k], &ty);
    fprintf(stderr, "  hfield-%-9s %5d poses: %5d agree with MuJoCo (worst |d dist|/scale %.1e, |d normal| %.1e), "
            "%4d confirmed by brute force, %d ties, %d contact counts confirmed by brute force, %d fail\n",
            TYPE_NAME[types[k]], ty.poses, ty.agree, ty.wd, ty.wn, ty.confirmed, ty.tie, ty.count_confirmed, ty.fail);
    CHECK(ty.fail == 0, "hfield-%s: %d poses disagree with MuJoCo without a second reference", TYPE_NAME[types[k]],
          ty.fail);
  }
}

/* ---- analytic: a heightfield sampled from a plane is that plane ------------------------ */

/* flat (kind 1) and sloped (kind 2, z = top (x + sx) / 2sx) heightfields on tilted
 * geoms: a sphere anywhere over the interior, from 30% of its radius deep to 5 mm
 * apart, must get the plane's signed distance and normal from its deepest contact.
 * fp64: MPR stops within its 1e-6 m portal tolerance of the boundary, so dist within
 * 2e-6 m; the normal is the sphere's radial direction at MPR's point, which lies on
 * the plane's foot point within that tolerance (1e-6 / r: 1e-4 rad at r = 2 cm).
 * fp32: the same bound plus float rounding of world coordinates (~1e-7 x 10 m). */
static void test_hfield_plane_analytic(void) {
  const Hf hfs[4] = {
      {"flat", 6, 9, {0.8, 0.5, 0.3, 0.1}, 1, {0.2, 0.1, -0.3}, {0, 0, 0}},
      {"flat tilted", 11, 4, {0.2, 1.5, 0.05, 0.2}, 1, {0, 0, 0}, {25, -40, 10}},
      {"slope 10deg", 5, 9, {2.0, 0.5, 4 * 0.17632698, 0.1}, 2, {0, 0, 0}, {0, 0, 0}},
      {"slope 35deg tilted", 13, 7, {0.3, 0.9, 0.6 * 0.70020754, 0.05}, 2, {1, -2, 0.5}, {-15, 5, 60}},
  };
  for (int i = 0; i < 4; i++) {
    const Hf* h = &hfs[i];
    double r = 0.15 * fmin(h->size[0], h->size[1]);
    Pair p;
    if (!pairOpen(&p, h, SAP_GEOM_SPHERE, r)) { check_test_failed++; return; }
    // the plane in the heightfield frame: z = z0 + k (x + sx), unit normal (-k, 0, 1)/|.|
    double k = h->kind == 2 ? h->size[2] / (2 * h->size[0]) : 0, z0 = h->kind == 2 ? 0 : 0;
    double nl[3] = {-k / sqrt(1 + k * k), 0, 1 / sqrt(1 + k * k)};
    double wd[2] = {0, 0}, wn[2] = {0, 0};
    int nc[2] = {0, 0};
    for (int it = 0; it < 400; it++) {
      double x = check_uniform(-1, 1) * (h->size[0] - 2 * r), y = check_uniform(-1, 1) * (h->size[1] - 2 * r);
      double phi = check_uniform(-0.3 * r, 0.005);  // signed distance sphere - plane
      double zp = z0 + k * (x + h->size[0]), q[4];
      double l[3] = {x + nl[0] * (r + phi), y, zp + nl[2] * (r + phi)};
      randomQuat(q);
      placeLocal(&p, l, q);
      const double* R = p.md->geom_xmat;
      double nw[3];
      for (int j = 0; j < 3; j++) nw[j] = R[3 * j] * nl[0] + R[3 * j + 1] * nl[1] + R[3 * j + 2] * nl[2];
      for (int f = 0; f < 2; f++) {
        sapcContact_f64 cs[SAPC_PAIRCON];
        int n = sapContacts(&p, f == 0, 0.01, cs);
        if (!n) { CHECK(0, "%s: no contact at phi %g (fp%d)", h->name, phi, f ? 32 : 64); continue; }
        int kd = REF_DEEPEST(cs, n);
        nc[f]++;
        wd[f] = fmax(wd[f], fabs(cs[kd].dist - phi));
        wn[f] = fmax(wn[f], refNormalErr(cs[kd].n, nw));
      }
    }
    fprintf(stderr, "  %-19s r %.3f: worst |dist - phi| fp64 %.1e fp32 %.1e, |n - n_plane| fp64 %.1e fp32 %.1e\n",
            h->name, r, wd[0], wd[1], wn[0], wn[1]);
    // heights are stored as float (MuJoCo's hfield_data): each sample within 2^-24 top
    double dz = 6e-8 * h->size[2], cell = cellSize(h);
    CHECK(wd[0] <= 1e-12 + dz && wn[0] <= 1e-12 + 4 * dz / cell, "%s fp64: dist off by %g, normal by %g", h->name,
          wd[0], wn[0]);
    // fp32: world coordinates (~1 m) round at 6e-8; the closest-point products lose
    // (size / gap)^2 of that on the normal (~1e-7 x (1.5 / 0.03)^2 = 2.5e-4)
    CHECK(wd[1] <= 1e-6 + dz && wn[1] <= 1e-3, "%s fp32: dist off by %g, normal by %g", h->name, wd[1], wn[1]);
    pairClose(&p);
  }
}

/* ---- end to end ------------------------------------------------------------------------ */

static sapSim* makeSim(const char* xml, const char* tag) {
  const char* path = tmpPath(tag);
  FILE* f = fopen(path, "w");
  if (f) { fputs(xml, f); fclose(f); }
  sapModel* m = NULL;
  sapSim* s = NULL;
  if (sap_loadModel(path, &m) != SAP_OK) { CHECK(0, "%s", sap_lastError()); remove(path); return NULL; }
  remove(path);
  sapOptions o;
  sap_optionsDefault(&o);
  o.device = SAP_DEVICE_CPU;
  if (sap_create(m, &o, 1, &s) != SAP_OK) CHECK(0, "sap_create: %s", sap_lastError());
  sap_freeModel(m);
  return s;
}

/* a box dropped on random bumps (12 x 9 grid, 0.08 m relief, cells the box's size)
 * comes to rest: after 3 s its velocity is below 1e-3 and it has not moved in the
 * last 0.5 s; contacts never overflow the estimated capacity, and the regularised
 * penetration stays below 1 mm (SAP's stiffness, test_sap_physics) */
static void test_hfield_box_settles(void) {
  char el[4096] = "", xml[8192];
  for (int i = 0, o = 0; i < 12 * 9; i++) o += sprintf(el + o, "%.4f ", check_uniform(0, 1));
  snprintf(xml, sizeof(xml),
           "<mujoco><option timestep=\"0.002\"/><asset><hfield name=\"h\" nrow=\"12\" ncol=\"9\" size=\"0.5 0.6 0.08 0.05\" "
           "elevation=\"%s\"/></asset><worldbody><geom type=\"hfield\" hfield=\"h\" friction=\"0.8\"/>"
           "<body pos=\"0.05 -0.1 0.3\" euler=\"20 35 10\"><freejoint/><geom type=\"box\" size=\"0.1 0.07 0.05\" "
           "mass=\"1\"/></body></worldbody></mujoco>", el);
  sapSim* s = makeSim(xml, "box");
  if (!s) return;
  double q0[7], q[7], v[6];
  int overflow = 0, maxcon = 0;
  for (int k = 0; k < 1500; k++) {
    sap_step(s, 1);
    sapWorldInfo wi;
    sap_worldInfo(s, NULL, 1, &wi);
    overflow |= wi.ncon_dropped > 0 || (wi.flags & SAP_WORLD_CONTACT_OVERFLOW);
    maxcon = wi.ncon > maxcon ? wi.ncon : maxcon;
    if (k == 1249) sap_get(s, SAP_FIELD_QPOS, NULL, 1, q0);
  }
  sap_get(s, SAP_FIELD_QPOS, NULL, 1, q);
  sap_get(s, SAP_FIELD_QVEL, NULL, 1, v);
  double vmax = 0, moved = 0, deepest = 0;
  for (int k = 0; k < 6; k++) vmax = fmax(vmax, fabs(v[k]));
  for (int k = 0; k < 3; k++) moved = fmax(moved, fabs(q[k] - q0[k]));
  for (int i = 0; i < s->d.ncon[0]; i++) deepest = fmin(deepest, s->d.con_dist[i]);
  fprintf(stderr, "  box at rest at z %.4f: |v| %.1e, moved %.1e m in the last 0.5 s, %d contacts (at most %d of %d), "
          "deepest %.2e m\n", q[2], vmax, moved, s->d.ncon[0], maxcon, s->d.ncon_max, deepest);
  CHECK(vmax < 1e-3 && moved < 1e-4, "box not at rest: |v| %g, moved %g", vmax, moved);
  CHECK(!overflow, "contacts overflowed the capacity %d", s->d.ncon_max);
  CHECK(s->d.ncon[0] > 0 && deepest > -1e-3, "%d contacts, deepest %g", s->d.ncon[0], deepest);
  sap_free(s);
}

/* a solid sphere released on a heightfield sampled from a 10 or 25 degree slope (cells
 * 8x and 3x its radius, so it crosses cell edges and diagonals) rolls without slipping:
 * s = a t^2 / 2 with a = 5/7 g sin(t) (mu = 1 > 2/7 tan(t)). The same sphere on a tilted
 * plane geom, run beside it, is the second reference for SAP's own error (regularised
 * friction creeps at a slip speed ~ (h + tau_d) x the tangential impulse rate): it must
 * match the analytic law within 0.1% (measured < 0.01%). On the heightfield the sphere
 * crosses edges where two triangles tie for the contact (fp32 narrow phase: ties
 * within 1e-4 keep both, a brief double contact); measured +0.13% at 10 degrees,
 * -0.01% at 25; allowed 0.5%. Sideways drift: measured 2e-5 m, allowed 1e-4 m. */
static void test_hfield_sphere_rolls(void) {
  const double deg[2] = {10, 25}, g = 9.81, T = 0.6, r = 0.05;
  for (int c = 0; c < 2; c++) {
    double th = deg[c] * mjPI / 180, sx = 2.0, top = 2 * sx * tan(th);
    int ncol = c ? 27 : 11;
    char el[4096] = "", xml[8192];
    for (int rr = 0, o = 0; rr < 5; rr++)
      for (int cc = 0; cc < ncol; cc++) o += sprintf(el + o, "%.17g ", (double)cc / (ncol - 1));
    double x0 = 1.2, y0 = 0.13, z0 = (x0 + sx) * tan(th);
    // centre at r along the slope normal (-sin, 0, cos) above the surface point
    double px = x0 - r * sin(th), pz = z0 + r * cos(th);
    double dist[2];
    for (int k = 0; k < 2; k++) {
      char ground[512];
      if (k == 0)
        snprintf(ground, sizeof(ground), "<geom type=\"hfield\" hfield=\"h\" friction=\"1\"/>");
      else  // the same surface as a plane through (-sx, 0, 0), tilted about y by -th
        snprintf(ground, sizeof(ground), "<geom type=\"plane\" size=\"5 5 1\" pos=\"%.17g 0 0\" euler=\"0 %.17g 0\" "
                 "friction=\"1\"/>", -sx, -deg[c]);
      snprintf(xml, sizeof(xml),
               "<mujoco><option timestep=\"0.001\"/><asset><hfield name=\"h\" nrow=\"5\" ncol=\"%d\" "
               "size=\"%.17g 0.5 %.17g 0.1\" elevation=\"%s\"/></asset><worldbody>%s"
               "<body pos=\"%.17g %.17g %.17g\"><freejoint/><geom type=\"sphere\" size=\"%g\" mass=\"1\" "
               "friction=\"1\"/></body></worldbody></mujoco>", ncol, sx, top, el, ground, px, y0, pz, r);
      sapSim* s = makeSim(xml, "roll");
      if (!s) return;
      double q0[7], q[7];
      sap_get(s, SAP_FIELD_QPOS, NULL, 1, q0);
      sap_step(s, (int)(T / 0.001 + 0.5));
      sap_get(s, SAP_FIELD_QPOS, NULL, 1, q);
      // distance down the slope: along (-cos, 0, -sin)
      dist[k] = -(q[0] - q0[0]) * cos(th) - (q[2] - q0[2]) * sin(th);
      CHECK(fabs(q[1] - q0[1]) < 1e-4, "%g deg: sideways drift %g", deg[c], q[1] - q0[1]);
      sap_free(s);
    }
    double want = 0.5 * 5.0 / 7.0 * g * sin(th) * T * T;
    fprintf(stderr, "  %2g deg: rolled %.5f m on the heightfield, %.5f on a plane, analytic %.5f (%+.2f%%, %+.3f%%)\n",
            deg[c], dist[0], dist[1], want, 100 * (dist[0] / want - 1), 100 * (dist[0] / dist[1] - 1));
    CHECK_CLOSE(dist[1], want, 0, 0.001, "%g deg: plane rolling distance vs 5/7 g sin t", deg[c]);
    CHECK_CLOSE(dist[0], want, 0, 0.005, "%g deg: heightfield rolling distance vs 5/7 g sin t", deg[c]);
  }
}

/* ---- filtering and capacity ------------------------------------------------------------ */

/* every candidate pair has a MuJoCo 4 collision function (plane-hfield and hfield-hfield
 * have none: a heightfield on a free body never pairs with the floor or another
 * heightfield), and the pairs that have one are all there; a 0.2 x 0.14 m box resting
 * flat on a flat heightfield of 2.5 cm cells (96 prisms under it) gets the per-pair
 * maximum of 50 contacts, as MuJoCo 4 (mjMAXCONPAIR), within the estimated capacity */
static void test_hfield_filter_capacity(void) {
  char el[8192] = "", xml[16384];
  for (int i = 0, o = 0; i < 41 * 41; i++) o += sprintf(el + o, "0 ");
  snprintf(xml, sizeof(xml),
           "<mujoco><asset><hfield name=\"fine\" nrow=\"41\" ncol=\"41\" size=\"0.5 0.5 0.1 0.05\" elevation=\"%s\"/>"
           "<hfield name=\"small\" nrow=\"3\" ncol=\"3\" size=\"0.1 0.1 0.02 0.02\" elevation=\"0 1 0 1 0 1 0 1 0\"/>"
           "</asset><worldbody><geom name=\"floor\" type=\"plane\" size=\"5 5 1\" pos=\"0 0 -1\"/>"
           "<geom name=\"fine\" type=\"hfield\" hfield=\"fine\"/>"
           "<body name=\"box\" pos=\"0.0125 0.0125 0.0699\"><freejoint/><geom name=\"box\" type=\"box\" size=\"0.1 0.07 0.07\"/></body>"
           "<body name=\"slab\" pos=\"2 0 0\"><freejoint/><geom name=\"small\" type=\"hfield\" hfield=\"small\"/>"
           "<geom name=\"ballast\" type=\"sphere\" size=\"0.01\" contype=\"0\" conaffinity=\"0\"/></body>"
           "</worldbody></mujoco>", el);
  const char* path = tmpPath("filter");
  FILE* f = fopen(path, "w");
  if (f) { fputs(xml, f); fclose(f); }
  sapModel* m = NULL;
  char err[1000] = "";
  mjModel* mj = mj_loadXML(path, NULL, err, sizeof(err));
  CHECK(sap_loadModel(path, &m) == SAP_OK, "%s", sap_lastError());
  remove(path);
  if (!m || !mj) { CHECK(0, "filter scene: %s", err); sap_freeModel(m); mj_deleteModel(mj); return; }
  int n = sapc_buildPairs(m, NULL), *pg = malloc(sizeof(int) * 2 * (n + 1)), want = 0;
  sapc_buildPairs(m, pg);
  for (int i = 0; i < n; i++) {
    int t0 = m->geom_type[pg[2 * i]], t1 = m->geom_type[pg[2 * i + 1]];
    int a = t0 < t1 ? t0 : t1, b = t0 < t1 ? t1 : t0;
    CHECK(mjCOLLISIONFUNC[a][b] != NULL, "pair %s-%s has no MuJoCo routine", TYPE_NAME[a], TYPE_NAME[b]);
  }
  // expected: box-floor, box-fine, box-small, floor-... (the slab's hfield pairs none but the box)
  for (int g0 = 0; g0 < mj->ngeom; g0++)
    for (int g1 = g0 + 1; g1 < mj->ngeom; g1++) {
      int t0 = mj->geom_type[g0], t1 = mj->geom_type[g1], a = t0 < t1 ? t0 : t1, b = t0 < t1 ? t1 : t0;
      int bw0 = mj->body_weldid[mj->geom_bodyid[g0]], bw1 = mj->body_weldid[mj->geom_bodyid[g1]];
      int c0 = mj->geom_contype[g0] & mj->geom_conaffinity[g1], c1 = mj->geom_contype[g1] & mj->geom_conaffinity[g0];
      want += mjCOLLISIONFUNC[a][b] != NULL && bw0 != bw1 && (c0 || c1);
    }
  CHECK(n == want, "%d candidate pairs, MuJoCo's filter rules give %d", n, want);
  free(pg);
  // the box resting flat: contacts and capacity
  sapOptions o;
  sapSim* s = NULL;
  sap_optionsDefault(&o);
  o.device = SAP_DEVICE_CPU;
  CHECK(sap_create(m, &o, 1, &s) == SAP_OK, "%s", sap_lastError());
  if (s) {
    sapc_kinematics(s);
    sapc_collision(s);
    mjData* md = mj_makeData(mj);
    mj_forward(mj, md);
    int nmj = 0;
    for (int i = 0; i < md->ncon; i++) nmj += md->contact[i].geom[0] == 1 || md->contact[i].geom[1] == 1;
    fprintf(stderr, "  box on a fine heightfield: %d contacts (MuJoCo 4: %d with the heightfield), capacity %d, dropped %d\n",
            s->d.ncon[0], nmj, s->d.ncon_max, s->d.ncon_dropped[0]);
    CHECK(s->d.ncon[0] == SAPC_HFIELD_MAXCON && nmj == SAPC_HFIELD_MAXCON, "contacts %d, MuJoCo %d, want %d",
          s->d.ncon[0], nmj, SAPC_HFIELD_MAXCON);
    CHECK(s->d.ncon_max >= SAPC_HFIELD_MAXCON && s->d.ncon_dropped[0] == 0, "capacity %d, dropped %d", s->d.ncon_max,
          s->d.ncon_dropped[0]);
    mj_deleteData(md);
    sap_free(s);
  }
  mj_deleteModel(mj);
  sap_freeModel(m);
}

int main(void) {
  RUN(test_hfield_filter_capacity);
  RUN(test_hfield_box_settles);
  RUN(test_hfield_sphere_rolls);
  RUN(test_hfield_plane_analytic);
  RUN(test_hfield_oracle);
  return check_summary("test_hfield");
}
