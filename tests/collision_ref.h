/* Reference 2 of the collision oracles (tests/test_collision_oracle.c, test_collision.c,
 * test_hfield.c), written from the geometry definitions and not from
 * kernels/collision_t.h: support functions h_X(n) = max_{x in X} x.n of sphere, capsule,
 * ellipsoid, cylinder, box and polytope (mesh, heightfield prism), and the signed
 * distance dist = -min_{|n|=1} f(n), f(n) = h_A(n) + h_B(-n) (minus the penetration
 * depth when A and B overlap, the separation when apart; the argmin is the normal a to
 * b; separating hyperplane theorem), by a Fibonacci direction grid plus seeds (the
 * geoms' axes, the centre line, the crossings of the kink circles of f) and a pattern
 * search on the sphere that follows f's kinks exactly. Then a contact (dist, normal) is
 * judged exact, bounded or off (judge). Needs <mujoco/mujoco.h> (mjGEOM_*, mjPI) and
 * check.h (check_uniform). */
#ifndef SAPSIM_TESTS_COLLISION_REF_H
#define SAPSIM_TESTS_COLLISION_REF_H

#include <math.h>
#include <string.h>

/* ---- reference 2: support functions from the geometry definitions -------------------- */

#define REF_MAXVERT 64
typedef struct Ref {
  int type;                         /* mjGEOM_SPHERE ... mjGEOM_MESH (a polytope: its vertices) */
  double pos[3], mat[9], size[3];  /* mat row-major: columns are the local axes */
  double vert[REF_MAXVERT][3];      /* polytope vertices in the geom frame */
  int nvert;
  const double* vext;               /* a large polytope: its nvert vertices (x, y, z) here
                                       instead of vert, and no kink circles (too many) */
} Ref;

/* h(n) = max over the solid of x.n: centre term plus the local support */
static inline double support(const Ref* g, const double* n) {
  double l[3], c = g->pos[0] * n[0] + g->pos[1] * n[1] + g->pos[2] * n[2];
  for (int k = 0; k < 3; k++) l[k] = g->mat[k] * n[0] + g->mat[3 + k] * n[1] + g->mat[6 + k] * n[2];
  const double* s = g->size;
  switch (g->type) {
    case mjGEOM_SPHERE: return c + s[0];                        // |n| = 1
    case mjGEOM_CAPSULE: return c + s[0] + s[1] * fabs(l[2]);  // ball swept along the axis
    case mjGEOM_ELLIPSOID: return c + sqrt(s[0] * s[0] * l[0] * l[0] + s[1] * s[1] * l[1] * l[1] + s[2] * s[2] * l[2] * l[2]);
    case mjGEOM_CYLINDER: return c + s[1] * fabs(l[2]) + s[0] * sqrt(fmax(0, l[0] * l[0] + l[1] * l[1]));  // disc swept
    case mjGEOM_BOX: return c + s[0] * fabs(l[0]) + s[1] * fabs(l[1]) + s[2] * fabs(l[2]);
    default: {
      double h = -1e300;
      for (int i = 0; i < g->nvert; i++) {
        const double* v = g->vext ? g->vext + 3 * i : g->vert[i];
        h = fmax(h, v[0] * l[0] + v[1] * l[1] + v[2] * l[2]);
      }
      return c + h;
    }
  }
}

/* the great circles {n : k.n = 0} on which h_A(n) + h_B(-n) has a kink: a capsule's or
 * cylinder's axis, a box's three axes, every vertex difference of a mesh (two vertices
 * tie there); a sphere and an ellipsoid have none. World frame, unit; returns the count */
#define MAXKINK 256
static inline int kinkAxes(const Ref* g, double (*k)[3], int n) {
  double l[3];
  int m = 0;
  if (g->type == mjGEOM_CAPSULE || g->type == mjGEOM_CYLINDER) {
    for (int j = 0; j < 3; j++) k[n][j] = g->mat[3 * j + 2];
    return 1;
  }
  if (g->type == mjGEOM_BOX) {
    for (int a = 0; a < 3; a++)
      for (int j = 0; j < 3; j++) k[n + a][j] = g->mat[3 * j + a];
    return 3;
  }
  if (g->type != mjGEOM_MESH || g->vext) return 0;
  for (int i = 0; i < g->nvert; i++)
    for (int i2 = i + 1; i2 < g->nvert && n + m < MAXKINK; i2++) {
      for (int j = 0; j < 3; j++) l[j] = g->vert[i2][j] - g->vert[i][j];
      double ll = sqrt(l[0] * l[0] + l[1] * l[1] + l[2] * l[2]);
      if (ll < 1e-12) continue;
      for (int j = 0; j < 3; j++) k[n + m][j] = (g->mat[3 * j] * l[0] + g->mat[3 * j + 1] * l[1] + g->mat[3 * j + 2] * l[2]) / ll;
      m++;
    }
  return m;
}

/* objective on the unit sphere: f(n) = h_A(n) + h_B(-n) (overlap along n); with a ray
 * direction u set, g(n) = (f(n) + infl) / (n.u) on n.u > 0 (the distance from the origin
 * along u to the boundary of A - B grown by infl, as its minimum) */
typedef struct Obj {
  const Ref* a;
  const Ref* b;
  const double* u;
  double infl;
  int nk;
  double kink[MAXKINK][3];
} Obj;

static inline void objInit(Obj* o, const Ref* a, const Ref* b, const double* u, double infl) {
  o->a = a;
  o->b = b;
  o->u = u;
  o->infl = infl;
  o->nk = kinkAxes(a, o->kink, 0);
  o->nk += kinkAxes(b, o->kink, o->nk);
}

static inline double objective(const Obj* o, const double* n) {
  double nn[3] = {-n[0], -n[1], -n[2]}, f = support(o->a, n) + support(o->b, nn);
  if (!o->u) return f;
  double c = n[0] * o->u[0] + n[1] * o->u[1] + n[2] * o->u[2];
  return c > 1e-12 ? (f + o->infl) / c : 1e300;
}

static inline double dot3(const double* a, const double* b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
static inline void cross3(double* r, const double* a, const double* b) {
  r[0] = a[1] * b[2] - a[2] * b[1]; r[1] = a[2] * b[0] - a[0] * b[2]; r[2] = a[0] * b[1] - a[1] * b[0];
}
static inline double unit3(double* v) {
  double l = sqrt(dot3(v, v));
  if (l > 0) for (int k = 0; k < 3; k++) v[k] /= l;
  return l;
}

static inline void tangents(const double* n, double* t1, double* t2) {
  double e[3] = {0, 0, 0};
  e[fabs(n[0]) < 0.6 ? 0 : (fabs(n[1]) < 0.6 ? 1 : 2)] = 1;
  cross3(t1, e, n);
  unit3(t1);
  cross3(t2, n, t1);
}

/* candidate m: keep it in best when lower */
static inline void tryDir(const Obj* o, const double* m, double* fb, double* best) {
  double x[3] = {m[0], m[1], m[2]};
  if (unit3(x) < 1e-300) return;
  double f = objective(o, x);
  if (f < *fb) { *fb = f; memcpy(best, x, sizeof(x)); }
}

/* pattern search from n: 12 tangent directions at a random phase; and on the kinks near
 * n (|k.n| < 4 step): n projected onto each, moved along it by +-step, and the crossing
 * of two near kinks (a valley along a kink, or its corner, is followed exactly). The step
 * grows by 1.5 on success, halves on failure, down to 1e-13 rad */
static inline double refine(const Obj* o, double* n, double step) {
  double f = objective(o, n), t1[3], t2[3], m[3], best[3], p[3], t[3];
  int near[MAXKINK];
  for (int iter = 0; step > 1e-13 && iter < 3000; iter++) {
    double fb = f, ph = check_uniform(0, 2 * mjPI);
    tangents(n, t1, t2);
    for (int j = 0; j < 12; j++) {
      double a = ph + j * mjPI / 6, c = cos(a) * step, s = sin(a) * step;
      for (int k = 0; k < 3; k++) m[k] = n[k] + c * t1[k] + s * t2[k];
      tryDir(o, m, &fb, best);
    }
    int nn = 0;
    for (int i = 0; i < o->nk; i++) {
      double c = dot3(o->kink[i], n);
      if (fabs(c) >= 4 * step) continue;
      near[nn++] = i;
      for (int k = 0; k < 3; k++) p[k] = n[k] - c * o->kink[i][k];
      if (unit3(p) < 1e-9) continue;
      tryDir(o, p, &fb, best);
      cross3(t, o->kink[i], p);
      for (int sg = -1; sg <= 1; sg += 2) {
        for (int k = 0; k < 3; k++) m[k] = p[k] + sg * step * t[k];
        tryDir(o, m, &fb, best);
      }
    }
    for (int i = 0; i < nn && nn <= 24; i++)
      for (int j = i + 1; j < nn; j++) {
        cross3(m, o->kink[near[i]], o->kink[near[j]]);
        if (dot3(m, n) < 0) for (int k = 0; k < 3; k++) m[k] = -m[k];
        tryDir(o, m, &fb, best);
      }
    if (fb < f - 1e-15 * fabs(f)) { f = fb; memcpy(n, best, sizeof(best)); step = fmin(0.1, 1.5 * step); }
    else step *= 0.5;
  }
  return f;
}

#define NGRID 1500

/* the Fibonacci grid of NGRID unit directions (built on first use) */
static inline const double (*refGrid(void))[3] {
  static double grid[NGRID][3];
  static int done;
  if (!done) {
    double ga = mjPI * (3 - sqrt(5.0));
    for (int i = 0; i < NGRID; i++) {
      double z = 1 - (2 * i + 1.0) / NGRID, r = sqrt(1 - z * z);
      grid[i][0] = r * cos(ga * i); grid[i][1] = r * sin(ga * i); grid[i][2] = z;
    }
    done = 1;
  }
  return (const double (*)[3])grid;
}

/* min over the unit sphere: the grid, the given seeds (ns), both signs of every kink
 * crossing; the 4 best mutually > 0.05 rad apart refined; returns the minimum and its
 * direction */
static inline double sphereMin(const Obj* o, double (*seed)[3], int ns, double* nbest) {
  enum { KEEP = 4 };
  double cf[KEEP], cn[KEEP][3];
  const double (*grid)[3] = refGrid();
  int nk = 0, npair = o->nk * (o->nk - 1) / 2;
  for (int i = 0; i < NGRID + ns + 2 * npair; i++) {
    double n[3];
    if (i < NGRID) memcpy(n, grid[i], sizeof(n));
    else if (i < NGRID + ns) memcpy(n, seed[i - NGRID], sizeof(n));
    else {  // kink crossing number q, sign
      int q = (i - NGRID - ns) / 2, a = 0;
      while (q >= o->nk - 1 - a) { q -= o->nk - 1 - a; a++; }
      cross3(n, o->kink[a], o->kink[a + 1 + q]);
      if ((i - NGRID - ns) & 1) for (int k = 0; k < 3; k++) n[k] = -n[k];
    }
    if (unit3(n) < 1e-9) continue;
    double f = objective(o, n);
    // a near candidate: keep the better of the two
    int j = 0;
    for (; j < nk; j++) if (dot3(n, cn[j]) > cos(0.05)) break;
    if (j < nk) { if (f < cf[j]) { cf[j] = f; memcpy(cn[j], n, sizeof(n)); } continue; }
    if (nk < KEEP) { cf[nk] = f; memcpy(cn[nk++], n, sizeof(n)); continue; }
    int w = 0;
    for (j = 1; j < KEEP; j++) if (cf[j] > cf[w]) w = j;
    if (f < cf[w]) { cf[w] = f; memcpy(cn[w], n, sizeof(n)); }
  }
  double fb = 1e300;
  for (int j = 0; j < nk; j++) {
    double f = refine(o, cn[j], 0.05);
    if (f < fb) { fb = f; memcpy(nbest, cn[j], 3 * sizeof(double)); }
  }
  return fb;
}

/* seeds: the local axes of both geoms (+-), the centre line, extra directions */
static inline int seeds(const Ref* a, const Ref* b, const double (*extra)[3], int nextra, double (*s)[3]) {
  int n = 0;
  for (int g = 0; g < 2; g++)
    for (int k = 0; k < 3; k++)
      for (int sg = -1; sg <= 1; sg += 2) {
        const Ref* x = g ? b : a;
        for (int j = 0; j < 3; j++) s[n][j] = sg * x->mat[3 * j + k];
        n++;
      }
  for (int j = 0; j < 3; j++) s[n][j] = b->pos[j] - a->pos[j];
  n++;
  for (int i = 0; i < nextra; i++) memcpy(s[n++], extra[i], 3 * sizeof(double));
  return n;
}

/* ---- judging one deepest contact against reference 2 ----------------------------------- */

/* one pose as reference 2 sees it */
typedef struct Pose {
  Ref a, b;
  int plane;
  double margin, L, tol;
  double dref, nref[3];  /* signed distance and its normal (a to b) */
  int have_ray;
  double u[3], tray;     /* MPR's ray from v0 = c_a - c_b through the origin, and t* along it */
} Pose;

/* reference 2's signed distance and normal of the pose (a plane: exact, along its
 * normal; else the minimum of f, seeded with the extra directions, e.g. the contact
 * normals under test: a seed only lowers the minimum found) */
static inline void seedsAndMin(Pose* P, const double (*extra)[3], int ne);

static inline double refNormalErr(const double* a, const double* b) {
  double e = 0;
  for (int k = 0; k < 3; k++) e = fmax(e, fabs(a[k] - b[k]));
  return e;
}

/* geom g of MuJoCo's model and data as reference 2 sees it: pose, sizes, and a mesh's
 * vertices, copied into vert (at most REF_MAXVERT) when vd is NULL, else read from vd (the
 * model's mesh_vert in double, for large meshes) */
static inline void refFromMj(const mjModel* m, const mjData* d, int g, const double* vd, Ref* r) {
  memset(r, 0, sizeof(*r));
  r->type = m->geom_type[g];
  memcpy(r->pos, d->geom_xpos + 3 * g, sizeof(r->pos));
  memcpy(r->mat, d->geom_xmat + 9 * g, sizeof(r->mat));
  memcpy(r->size, m->geom_size + 3 * g, sizeof(r->size));
  if (r->type != mjGEOM_MESH) return;
  int id = m->geom_dataid[g];
  r->nvert = m->mesh_vertnum[id];
  if (vd) { r->vext = vd + 3 * m->mesh_vertadr[id]; return; }
  CHECK(r->nvert <= REF_MAXVERT, "refFromMj: a mesh of %d vertices needs vd (REF_MAXVERT %d)", r->nvert, REF_MAXVERT);
  for (int i = 0; i < r->nvert && i < REF_MAXVERT; i++)
    for (int k = 0; k < 3; k++) r->vert[i][k] = m->mesh_vert[3 * (m->mesh_vertadr[id] + i) + k];
}

/* index of the deepest (smallest dist) of n contacts of any struct with a double `dist`:
 * REF_DEEPEST(array, n) for sapsim's and MuJoCo's contact lists alike */
static inline int refDeepestBy(const double* dist0, size_t stride, int n) {
  const char* p = (const char*)dist0;
  int k = 0;
  for (int i = 1; i < n; i++)
    if (*(const double*)(p + i * stride) < *(const double*)(p + k * stride)) k = i;
  return k;
}
#define REF_DEEPEST(c, n) refDeepestBy(&(c)[0].dist, sizeof((c)[0]), (n))

/* separation along unit n: -f(n) (plane: only along its normal) */
static inline double sepAlong(const Pose* P, const double* n) {
  double nn[3] = {-n[0], -n[1], -n[2]};
  if (!P->plane) return -(support(&P->a, n) + support(&P->b, nn));
  if (refNormalErr(n, P->nref) > 1e-9) return -1e300;
  return -support(&P->b, nn) - (P->a.pos[0] * n[0] + P->a.pos[1] * n[1] + P->a.pos[2] * n[2]);
}

/* MPR (libccd's, on the geoms grown by margin/2 each) reports the distance from the
 * origin to the final portal, the portal the ray from v0 = c_a - c_b through the origin
 * leaves the grown difference M = A - B + ball(margin) by: t* = min over n.u > 0 of
 * h_M(n) / n.u (the exit distance along u), so dist = margin - depth lies in
 * [margin - t*, dref] within MPR's 1e-6 m tolerance */
static inline void rayBound(Pose* P, const double* n) {
  if (P->have_ray) return;
  double sd[32][3], nr[3], extra[2][3];
  for (int k = 0; k < 3; k++) P->u[k] = P->b.pos[k] - P->a.pos[k];
  unit3(P->u);
  memcpy(extra[0], n, sizeof(extra[0]));
  memcpy(extra[1], P->u, sizeof(extra[1]));
  int nsd = seeds(&P->a, &P->b, (const double (*)[3])extra, 2, sd);
  static Obj o;
  objInit(&o, &P->a, &P->b, P->u, P->margin);
  P->tray = sphereMin(&o, sd, nsd, nr);
  P->have_ray = 1;
}

enum { V_EXACT = 0, V_BOUND, V_OFF };
static inline const char* verdictName(int v) { return v == V_EXACT ? "exact" : v == V_BOUND ? "bounded" : "OFF"; }

typedef struct Judged {
  int v;
  double ed, en;  /* |d - dref|, dref - sep(n) */
  double over;    /* dref - d (deeper than the minimum penetration) */
  double ang;     /* angle of n to the reference normal */
} Judged;

/* exact: the signed distance, with the reference normal (or one that separates as much:
 * ties), within tol. bounded: what holds for any contact that is not exact but sound --
 * never more separation than the signed distance (d <= dref), never more penetration
 * than the overlap along its own normal (d >= sep(n)), and no deeper than MPR's ray
 * depth (d >= margin - t*): MPR's depth (between the minimum penetration and the ray
 * depth) and face-normal manifolds (the face's normal within ~2 degrees of the minimum
 * direction) are bounded. OFF: anything else */
static inline Judged judge(Pose* P, double d, const double* n) {
  Judged j;
  double sep = sepAlong(P, n);
  j.ed = fabs(d - P->dref);
  j.en = P->dref - sep;
  j.over = P->dref - d;
  j.ang = acos(fmax(-1, fmin(1, dot3(n, P->nref))));
  j.v = V_OFF;
  if (j.ed <= P->tol && (j.en <= P->tol || j.ang <= 1e-3)) j.v = V_EXACT;
  else if (!P->plane) {
    rayBound(P, n);
    if (d >= P->margin - P->tray - P->tol && d <= P->dref + P->tol && d >= sep - P->tol) j.v = V_BOUND;
  }
  return j;
}

static inline void seedsAndMin(Pose* P, const double (*extra)[3], int ne) {
  if (P->plane) {
    double z[3] = {P->a.mat[2], P->a.mat[5], P->a.mat[8]}, mz[3] = {-z[0], -z[1], -z[2]};
    P->dref = -support(&P->b, mz) - dot3(P->a.pos, z);
    memcpy(P->nref, z, sizeof(z));
    return;
  }
  double sd[32][3];
  int nsd = seeds(&P->a, &P->b, extra, ne, sd);
  static Obj o;
  objInit(&o, &P->a, &P->b, NULL, 0);
  P->dref = -sphereMin(&o, sd, nsd, P->nref);
}

#endif
