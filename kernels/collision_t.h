/* Narrow phase template (no include guard): included by kernels/collision.h once
 * with SAP_REAL=float and once with SAP_REAL=double (DESIGN.md §5). Analytic
 * routines for the MuJoCo primitive pairs, SAT for box-box, MPR (XenoCollide /
 * libccd style) to detect every other convex pair and EPA from its tetrahedron for the
 * minimum penetration (MuJoCo 4's native semantics), and a contact manifold by
 * clipping support features (Ericson, RTCD §5; Box2D). Checked against MuJoCo 4 and a
 * brute-force support-function reference in docs/collision_oracle.md. Reference.
 * Convention: sapcContact.n points from geom a to geom b; dist < 0 = penetration;
 * pos is the midpoint of the two witness points (pos -+ dist/2 n). */

#define R SAP_REAL
#define G SAPT(sapcGeom)
#define C SAPT(sapcContact)

/* a geom in world coordinates; mat is row-major, its columns are the local axes */
typedef struct SAPT(sapcGeom) {
  int type;
  R pos[3];
  R mat[9];
  R size[3];
  const double* vert;  /* mesh collision vertices in the geom frame (nvert x 3) */
  int nvert;
  const int* nbradr;   /* (nvert) first neighbour in nbr of each hull vertex; 0: no adjacency */
  const int* nbr;      /* hull neighbour lists (local ids, each ended by -1) */
  const int* start;    /* (6) extreme vertices along -x +x -y +y -z +z: hill-climb starts */
  int* hint;           /* the last support vertex, another start (caller's storage; 0: none) */
  const float* hdata;  /* heightfield samples (nrow x ncol), heights in [0, 1] */
  int nrow, ncol;
  R hsize[4];          /* heightfield half sizes x, y, top height, base depth */
} G;

typedef struct SAPT(sapcContact) {
  R pos[3];
  R n[3];
  R dist;
} C;

/* ---- small vector helpers ------------------------------------------------------ */

SAP_HD R SAPT(cl_dot)(const R* a, const R* b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
SAP_HD void SAPT(cl_sub)(R* r, const R* a, const R* b) {
  r[0] = a[0] - b[0]; r[1] = a[1] - b[1]; r[2] = a[2] - b[2];
}
/* r = a + s b */
SAP_HD void SAPT(cl_madd)(R* r, const R* a, const R* b, R s) {
  r[0] = a[0] + s * b[0]; r[1] = a[1] + s * b[1]; r[2] = a[2] + s * b[2];
}
SAP_HD void SAPT(cl_copy)(R* r, const R* a) { r[0] = a[0]; r[1] = a[1]; r[2] = a[2]; }
SAP_HD void SAPT(cl_neg)(R* r, const R* a) { r[0] = -a[0]; r[1] = -a[1]; r[2] = -a[2]; }
/* r = a x b (r must not alias a or b) */
SAP_HD void SAPT(cl_cross)(R* r, const R* a, const R* b) {
  r[0] = a[1] * b[2] - a[2] * b[1];
  r[1] = a[2] * b[0] - a[0] * b[2];
  r[2] = a[0] * b[1] - a[1] * b[0];
}
SAP_HD R SAPT(cl_absSum)(const R* a) { return CL_FABS(a[0]) + CL_FABS(a[1]) + CL_FABS(a[2]); }
SAP_HD R SAPT(cl_norm)(const R* a) { return CL_SQRT(SAPT(cl_dot)(a, a)); }
/* normalise in place; returns the old norm (vector untouched when ~0) */
SAP_HD R SAPT(cl_normalize)(R* a) {
  R l = SAPT(cl_norm)(a);
  if (l > CL_TINY) { a[0] /= l; a[1] /= l; a[2] /= l; }
  return l;
}
SAP_HD R SAPT(cl_dist)(const R* a, const R* b) {
  R d[3];
  SAPT(cl_sub)(d, a, b);
  return SAPT(cl_norm)(d);
}
/* column j of the rotation: local axis j in world */
SAP_HD void SAPT(cl_axis)(R* r, const G* g, int j) {
  r[0] = g->mat[j]; r[1] = g->mat[3 + j]; r[2] = g->mat[6 + j];
}
/* r = pos + mat l */
SAP_HD void SAPT(cl_toWorld)(R* r, const G* g, const R* l) {
  for (int i = 0; i < 3; i++)
    r[i] = g->pos[i] + g->mat[3 * i] * l[0] + g->mat[3 * i + 1] * l[1] + g->mat[3 * i + 2] * l[2];
}
/* r = mat' v */
SAP_HD void SAPT(cl_toLocalDir)(R* r, const G* g, const R* v) {
  for (int i = 0; i < 3; i++) r[i] = g->mat[i] * v[0] + g->mat[3 + i] * v[1] + g->mat[6 + i] * v[2];
}
/* t1, t2 completing a unit n to a right-handed frame (smallest |n_i| axis, as the reference) */
SAP_HD void SAPT(cl_tangents)(const R* n, R* t1, R* t2) {
  int i = 0;
  if (CL_FABS(n[1]) < CL_FABS(n[i])) i = 1;
  if (CL_FABS(n[2]) < CL_FABS(n[i])) i = 2;
  R e[3] = {0, 0, 0};
  e[i] = 1;
  SAPT(cl_cross)(t1, e, n);
  SAPT(cl_normalize)(t1);
  SAPT(cl_cross)(t2, n, t1);
}
/* contact from witness points pa (on a) and pb (on b) along unit n */
SAP_HD void SAPT(cl_setContact)(C* c, const R* pa, const R* pb, const R* n) {
  R d[3];
  SAPT(cl_sub)(d, pb, pa);
  c->dist = SAPT(cl_dot)(d, n);
  for (int i = 0; i < 3; i++) { c->pos[i] = (R)0.5 * (pa[i] + pb[i]); c->n[i] = n[i]; }
}

/* ---- support maps and features ------------------------------------------------ */

/* radius of the core: spheres are points and capsules segments, inflated by it */
SAP_HD R SAPT(cl_coreRadius)(const G* g) {
  return (g->type == SAP_GEOM_SPHERE || g->type == SAP_GEOM_CAPSULE) ? g->size[0] : (R)0;
}

/* vertex i of a box (i < 8) or a mesh (i < nvert), world frame */
SAP_HD void SAPT(cl_vertex)(R* r, const G* g, int i) {
  R l[3];
  if (g->type == SAP_GEOM_BOX) {
    for (int k = 0; k < 3; k++) l[k] = (i >> k & 1) ? g->size[k] : -g->size[k];
  } else {
    for (int k = 0; k < 3; k++) l[k] = (R)g->vert[3 * i + k];
  }
  SAPT(cl_toWorld)(r, g, l);
}
SAP_HD int SAPT(cl_nvertex)(const G* g) { return g->type == SAP_GEOM_BOX ? 8 : g->nvert; }

/* ---- mesh support over the convex hull graph ----------------------------------------- */

/* height of mesh vertex i along local direction l */
SAP_HD R SAPT(cl_meshHeight)(const G* g, int i, const R* l) {
  const double* v = g->vert + 3 * i;
  return (R)v[0] * l[0] + (R)v[1] * l[1] + (R)v[2] * l[2];
}

/* vertex (h, i) beats (hb, ib): higher, or as high with the lower index */
SAP_HD int SAPT(cl_beats)(R h, int i, R hb, int ib) { return h > hb || (h == hb && i < ib); }

/* 1 when the mesh's support and features walk its hull graph instead of scanning */
SAP_HD int SAPT(cl_meshClimbs)(const G* g) { return g->nbradr && g->nvert > CL_HULL_SCAN; }

/* highest mesh vertex along local l, the lowest index among ties: exactly what a scan
 * in index order picks (vertices are sorted by MuJoCo's index, model.h) */
SAP_HD int SAPT(cl_meshScan)(const G* g, const R* l) {
  int best = 0;
  R hb = SAPT(cl_meshHeight)(g, 0, l);
  for (int i = 1; i < g->nvert; i++) {
    R h = SAPT(cl_meshHeight)(g, i, l);
    if (h > hb) { hb = h; best = i; }
  }
  return best;
}

/* support vertex of a mesh along local l (nvert > 0), the scan's answer: without a hull
 * graph or for a small hull a scan; else a hill climb on the hull graph (exact on a
 * convex polytope: a vertex no neighbour beats is a global maximum, as the vertices above
 * any plane form a connected subgraph; MuJoCo's mjc_hillclimbSupport). The climb starts
 * at the best of the six axis-extreme vertices and the last support vertex (the hint: MPR's
 * directions change little from call to call; the answer does not depend on the start) and moves to the best neighbour while it
 * beats the current vertex ((height, -index) increases: no cycles). Ties and rounding
 * are then settled by a search of the plateau, the vertices reachable through ones within
 * a few roundings of the top, for the scan's pick (highest, then lowest index); a plateau
 * larger than CL_HULL_PLATEAU vertices is settled by the scan itself */
SAP_HD_BIG int SAPT(cl_meshSupportId)(const G* g, const R* l) {
  if (!SAPT(cl_meshClimbs)(g)) return SAPT(cl_meshScan)(g, l);
  int cur = g->start[0];
  R hc = SAPT(cl_meshHeight)(g, cur, l);
  for (int k = 1; k < 7; k++) {
    int j = k < 6 ? g->start[k] : (g->hint ? *g->hint : -1);
    if (j < 0 || j >= g->nvert) continue;
    R h = SAPT(cl_meshHeight)(g, j, l);
    if (SAPT(cl_beats)(h, j, hc, cur)) { hc = h; cur = j; }
  }
  for (;;) {
    int nxt = cur;
    R hn = hc;
    for (int e = g->nbradr[cur]; g->nbr[e] >= 0; e++) {
      int j = g->nbr[e];
      R h = SAPT(cl_meshHeight)(g, j, l);
      if (SAPT(cl_beats)(h, j, hn, nxt)) { hn = h; nxt = j; }
    }
    if (nxt == cur) break;
    cur = nxt;
    hc = hn;
  }
  // plateau: heights within tol of the top (tol: 8 roundings of the top's height terms)
  const double* v = g->vert + 3 * cur;
  R tol = 8 * (R)CL_EPS * (CL_FABS((R)v[0] * l[0]) + CL_FABS((R)v[1] * l[1]) + CL_FABS((R)v[2] * l[2]));
  int vis[CL_HULL_PLATEAU], nvis = 1, best = cur;
  R hb = hc;
  vis[0] = cur;
  for (int head = 0; head < nvis; head++)
    for (int e = g->nbradr[vis[head]]; g->nbr[e] >= 0; e++) {
      int j = g->nbr[e], seen = 0;
      R h = SAPT(cl_meshHeight)(g, j, l);
      if (h < hc - tol) continue;
      for (int i = 0; i < nvis && !seen; i++) seen = vis[i] == j;
      if (seen) continue;
      if (nvis == CL_HULL_PLATEAU) return SAPT(cl_meshScan)(g, l);
      vis[nvis++] = j;
      if (SAPT(cl_beats)(h, j, hb, best)) { hb = h; best = j; }
    }
  if (g->hint) *g->hint = best;
  return best;
}

/* the support feature of a mesh on its hull graph: the vertices connected to the support
 * vertex ref (id seed, height thr along dir) within the angular tolerance of it, the
 * scan test of cl_polyFeature (a face or an edge: connected), ids in ascending order (the
 * order a scan meets them in); the count, or -1 beyond CL_HULL_FEATURE (the caller scans) */
SAP_HD_BIG int SAPT(cl_meshRegion)(const G* g, int seed, const R* dir, const R* ref, R thr, int* ids) {
  int queue[CL_HULL_FEATURE], n = 1;  // queue: breadth-first order; ids: sorted (the visited set)
  queue[0] = ids[0] = seed;
  for (int head = 0; head < n; head++)
    for (int e = g->nbradr[queue[head]]; g->nbr[e] >= 0; e++) {
      int j = g->nbr[e], lo = 0, hi = n;
      while (lo < hi) {  // first sorted id >= j
        int mid = (lo + hi) / 2;
        if (ids[mid] < j) lo = mid + 1; else hi = mid;
      }
      if (lo < n && ids[lo] == j) continue;
      R v[3], d[3];
      SAPT(cl_vertex)(v, g, j);
      SAPT(cl_sub)(d, v, ref);
      if (!(thr - SAPT(cl_dot)(v, dir) <= (R)CL_FEATURE_SIN * SAPT(cl_norm)(d))) continue;
      if (n == CL_HULL_FEATURE) return -1;
      for (int i = n; i > lo; i--) ids[i] = ids[i - 1];
      ids[lo] = j;
      queue[n++] = j;
    }
  return n;
}

/* support point of the core in world direction dir (need not be unit) */
SAP_HD void SAPT(cl_support)(R* out, const G* g, const R* dir) {
  R l[3], p[3] = {0, 0, 0};
  SAPT(cl_toLocalDir)(l, g, dir);
  const R* s = g->size;
  // a zero component selects the middle of the face or edge (MuJoCo's mju_sign(0) = 0)
  if (g->type == SAP_GEOM_CAPSULE) {
    p[2] = l[2] > 0 ? s[1] : (l[2] < 0 ? -s[1] : 0);
  } else if (g->type == SAP_GEOM_ELLIPSOID) {
    // p = S^2 l / |S l|
    R q = CL_SQRT(s[0] * s[0] * l[0] * l[0] + s[1] * s[1] * l[1] * l[1] + s[2] * s[2] * l[2] * l[2]);
    if (q > CL_TINY)
      for (int k = 0; k < 3; k++) p[k] = s[k] * s[k] * l[k] / q;
  } else if (g->type == SAP_GEOM_CYLINDER) {
    R r = CL_SQRT(l[0] * l[0] + l[1] * l[1]);
    if (r > (R)1e-15) { p[0] = s[0] * l[0] / r; p[1] = s[0] * l[1] / r; }
    p[2] = l[2] > 0 ? s[1] : (l[2] < 0 ? -s[1] : 0);
  } else if (g->type == SAP_GEOM_BOX) {
    for (int k = 0; k < 3; k++) p[k] = l[k] > 0 ? s[k] : (l[k] < 0 ? -s[k] : 0);
  } else if (g->type == SAP_GEOM_MESH && g->nvert > 0) {
    const double* v = g->vert + 3 * SAPT(cl_meshSupportId)(g, l);
    for (int k = 0; k < 3; k++) p[k] = (R)v[k];
  }
  SAPT(cl_toWorld)(out, g, p);
}

/* order coplanar points counter-clockwise around their centroid (normal n) */
SAP_HD void SAPT(cl_orderPolygon)(R (*p)[3], int np, const R* n) {
  R t1[3], t2[3], c[3] = {0, 0, 0}, ang[8], d[3];
  SAPT(cl_tangents)(n, t1, t2);
  for (int i = 0; i < np; i++) SAPT(cl_madd)(c, c, p[i], (R)1 / np);
  for (int i = 0; i < np; i++) {
    SAPT(cl_sub)(d, p[i], c);
    ang[i] = CL_ATAN2(SAPT(cl_dot)(d, t2), SAPT(cl_dot)(d, t1));
  }
  for (int i = 1; i < np; i++)  // insertion sort by angle
    for (int j = i; j > 0 && ang[j] < ang[j - 1]; j--) {
      R ta = ang[j]; ang[j] = ang[j - 1]; ang[j - 1] = ta;
      for (int k = 0; k < 3; k++) { R t = p[j][k]; p[j][k] = p[j - 1][k]; p[j - 1][k] = t; }
    }
}

/* vertices of a polytope feature: those whose height along dir is within the
 * angular tolerance of the support vertex (face: >= 3, edge: 2, vertex: 1) */
SAP_HD_BIG int SAPT(cl_polyFeature)(const G* g, const R* dir, R (*out)[3]) {
  R vmax[3], v[3], d[3], l[3];
  int nv = SAPT(cl_nvertex)(g), np = 0, ids[CL_HULL_FEATURE];
  if (nv <= 0) return 0;
  SAPT(cl_toLocalDir)(l, g, dir);
  int imax = SAPT(cl_meshSupportId)(g, l);
  SAPT(cl_vertex)(vmax, g, imax);
  R hmax = SAPT(cl_dot)(vmax, dir);
  // on the hull graph: the region around the support vertex (the same vertices as the scan)
  int nr = SAPT(cl_meshClimbs)(g) ? SAPT(cl_meshRegion)(g, imax, dir, vmax, hmax, ids) : -1;
  for (int i = 0; i < nr && np < 8; i++) SAPT(cl_vertex)(out[np++], g, ids[i]);
  for (int i = 0; i < nv && np < 8 && nr < 0; i++) {
    SAPT(cl_vertex)(v, g, i);
    SAPT(cl_sub)(d, v, vmax);
    if (hmax - SAPT(cl_dot)(v, dir) <= (R)CL_FEATURE_SIN * SAPT(cl_norm)(d)) SAPT(cl_copy)(out[np++], v);
  }
  if (np >= 3) SAPT(cl_orderPolygon)(out, np, dir);
  return np;
}

/* support feature of a box in unit direction dir (local l): a local axis whose
 * |l_k| is within the angular tolerance is free, the others sit at sign(l_k) size_k;
 * no free axis: the vertex, one: an edge, two: the face (4 points in cyclic order).
 * Exact for any aspect ratio (a tolerance on vertex heights, as for meshes, would
 * take far vertices of a long face for the face) */
SAP_HD int SAPT(cl_boxFeature)(const G* g, const R* l, R (*out)[3]) {
  int fr[3], nf = 0;
  R base[3], p[3];
  for (int k = 0; k < 3; k++) {
    if (CL_FABS(l[k]) <= (R)CL_FEATURE_SIN) { fr[nf++] = k; base[k] = 0; }
    else base[k] = l[k] > 0 ? g->size[k] : -g->size[k];
  }
  if (nf > 2) nf = 2;  // not reached for a unit l
  // corners of the free axes: (-,-) (+,-) (+,+) (-,+), cyclic
  const R su[4] = {-1, 1, 1, -1}, sv[4] = {-1, -1, 1, 1};
  int np = 1 << nf;
  for (int i = 0; i < np; i++) {
    SAPT(cl_copy)(p, base);
    if (nf >= 1) p[fr[0]] = su[i] * g->size[fr[0]];
    if (nf == 2) p[fr[1]] = sv[i] * g->size[fr[1]];
    SAPT(cl_toWorld)(out[i], g, p);
  }
  return np;
}

/* support feature of the core in unit direction dir: up to 8 ordered points */
SAP_HD_BIG int SAPT(cl_feature)(const G* g, const R* dir, R (*out)[3]) {
  R l[3], a[3], p[3];
  SAPT(cl_toLocalDir)(l, g, dir);
  if (g->type == SAP_GEOM_BOX) return SAPT(cl_boxFeature)(g, l, out);
  if (g->type == SAP_GEOM_MESH) return SAPT(cl_polyFeature)(g, dir, out);
  if (g->type == SAP_GEOM_CAPSULE && CL_FABS(l[2]) <= (R)CL_FEATURE_SIN) {
    SAPT(cl_axis)(a, g, 2);
    SAPT(cl_madd)(out[0], g->pos, a, -g->size[1]);
    SAPT(cl_madd)(out[1], g->pos, a, g->size[1]);
    return 2;
  }
  if (g->type == SAP_GEOM_CYLINDER) {
    R rxy = CL_SQRT(l[0] * l[0] + l[1] * l[1]);
    R z = l[2] >= 0 ? g->size[1] : -g->size[1];
    if (rxy <= (R)CL_FEATURE_SIN) {  // cap: an octagon on the rim
      for (int k = 0; k < 8; k++) {
        p[0] = g->size[0] * CL_COS((R)(SAP_PI / 4) * k);
        p[1] = g->size[0] * CL_SIN((R)(SAP_PI / 4) * k);
        p[2] = z;
        SAPT(cl_toWorld)(out[k], g, p);
      }
      return 8;
    }
    if (CL_FABS(l[2]) <= (R)CL_FEATURE_SIN) {  // side: the generator line
      p[0] = g->size[0] * l[0] / rxy; p[1] = g->size[0] * l[1] / rxy;
      p[2] = -g->size[1]; SAPT(cl_toWorld)(out[0], g, p);
      p[2] = g->size[1]; SAPT(cl_toWorld)(out[1], g, p);
      return 2;
    }
  }
  SAPT(cl_support)(out[0], g, dir);
  return 1;
}

/* ---- contact selection ---------------------------------------------------------- */

/* choose up to 4 of nc contacts: the deepest, then farthest-point sampling;
 * kept in their original order (deterministic) */
SAP_HD_BIG int SAPT(cl_reduce)(C* c, int nc) {
  if (nc <= SAPC_MAXCON) return nc;
  int pick[SAPC_MAXCON], np = 1;
  pick[0] = 0;
  for (int i = 1; i < nc; i++) if (c[i].dist < c[pick[0]].dist) pick[0] = i;
  while (np < SAPC_MAXCON) {
    int best = -1;
    R bestd = -1;
    for (int i = 0; i < nc; i++) {
      R dmin = (R)1e30;
      int used = 0;
      for (int j = 0; j < np; j++) used |= pick[j] == i;
      if (used) continue;
      for (int j = 0; j < np; j++) {
        R d = SAPT(cl_dist)(c[i].pos, c[pick[j]].pos);
        if (d < dmin) dmin = d;
      }
      if (dmin > bestd) { bestd = dmin; best = i; }
    }
    pick[np++] = best;
  }
  for (int i = 1; i < np; i++)  // sort picks by index
    for (int j = i; j > 0 && pick[j] < pick[j - 1]; j--) { int t = pick[j]; pick[j] = pick[j - 1]; pick[j - 1] = t; }
  for (int i = 0; i < np; i++) c[i] = c[pick[i]];
  return np;
}

/* ---- plane vs primitive (plane normal = local z, geom a is the plane) ------------ */

/* contact of a point p at signed height h above the plane, core radius r */
SAP_HD int SAPT(cl_planePoint)(const R* p, R h, R r, const R* n, R margin, C* c) {
  R dist = h - r;
  if (dist >= margin) return 0;
  SAPT(cl_madd)(c->pos, p, n, -(r + dist / 2));
  SAPT(cl_copy)(c->n, n);
  c->dist = dist;
  return 1;
}

/* plane vs sphere, capsule, ellipsoid: end points of the core (ellipsoid: support) */
SAP_HD int SAPT(cl_planeRound)(const G* pl, const G* g, R margin, C* con) {
  R n[3], a[3], p[3], d[3], nn[3];
  int nc = 0;
  SAPT(cl_axis)(n, pl, 2);
  if (g->type == SAP_GEOM_ELLIPSOID) {
    SAPT(cl_neg)(nn, n);
    SAPT(cl_support)(p, g, nn);
    SAPT(cl_sub)(d, p, pl->pos);
    return SAPT(cl_planePoint)(p, SAPT(cl_dot)(d, n), 0, n, margin, con);
  }
  int nend = g->type == SAP_GEOM_CAPSULE ? 2 : 1;
  SAPT(cl_axis)(a, g, 2);
  for (int e = 0; e < nend; e++) {
    R s = nend == 1 ? 0 : (e == 0 ? g->size[1] : -g->size[1]);
    SAPT(cl_madd)(p, g->pos, a, s);
    SAPT(cl_sub)(d, p, pl->pos);
    nc += SAPT(cl_planePoint)(p, SAPT(cl_dot)(d, n), g->size[0], n, margin, con + nc);
  }
  return nc;
}

/* the (up to) 8 vertices of a mesh deepest below the plane through ref with unit normal n
 * and below margin over it, by best-first search on the hull graph from the deepest
 * vertex i0 (the vertices below any height are connected on a convex polytope's graph, so
 * the k-th popped is the k-th deepest); ids in ascending order. Returns -1 (the caller
 * scans) when the search outgrows CL_HULL_FEATURE or the 8th ties with a vertex left */
SAP_HD_BIG int SAPT(cl_meshDeepest)(const G* g, int i0, const R* n, const R* ref, R margin, int* ids) {
  int seen[CL_HULL_FEATURE], cand[CL_HULL_FEATURE], nseen = 1, ncand = 1, np = 0;
  R hc[CL_HULL_FEATURE], v[3], d[3], hlast = 0;
  SAPT(cl_vertex)(v, g, i0);
  SAPT(cl_sub)(d, v, ref);
  seen[0] = cand[0] = i0;
  hc[0] = SAPT(cl_dot)(d, n);
  if (!(hc[0] < margin)) return 0;
  while (np < 8 && ncand > 0) {
    int k = 0;  // the deepest candidate (then the lowest index)
    for (int i = 1; i < ncand; i++)
      if (hc[i] < hc[k] || (hc[i] == hc[k] && cand[i] < cand[k])) k = i;
    int u = cand[k];
    hlast = hc[k];
    ids[np++] = u;
    cand[k] = cand[--ncand];
    hc[k] = hc[ncand];
    for (int e = g->nbradr[u]; g->nbr[e] >= 0; e++) {
      int j = g->nbr[e], dup = 0;
      for (int i = 0; i < nseen && !dup; i++) dup = seen[i] == j;
      if (dup) continue;
      if (nseen == CL_HULL_FEATURE) return -1;
      seen[nseen++] = j;
      SAPT(cl_vertex)(v, g, j);
      SAPT(cl_sub)(d, v, ref);
      R h = SAPT(cl_dot)(d, n);
      if (!(h < margin)) continue;
      cand[ncand] = j;
      hc[ncand++] = h;
    }
  }
  for (int i = 0; i < ncand && np == 8; i++)
    if (hc[i] == hlast) return -1;
  for (int i = 1; i < np; i++)
    for (int j = i; j > 0 && ids[j] < ids[j - 1]; j--) { int t = ids[j]; ids[j] = ids[j - 1]; ids[j - 1] = t; }
  return np;
}

/* plane vs box or mesh: every vertex below the margin and not above the geom's centre (MuJoCo's
 * mjc_PlaneBox skips corners "pointing up": without it a geom smaller than the detection band
 * would trade its lower face for far corners in the reduction); beyond 8 (large meshes) the 8
 * deepest (then the lowest indices), in index order; reduced to 4. A mesh with a hull graph
 * finds the same 8 by cl_meshDeepest */
SAP_HD_BIG int SAPT(cl_planePoly)(const G* pl, const G* g, R margin, C* con) {
  R n[3], v[3], d[3], l[3];
  C buf[8];
  int nc = 0, nv = SAPT(cl_nvertex)(g), ids[8], idx[8], nr = -1;
  SAPT(cl_axis)(n, pl, 2);
  if (g->type == SAP_GEOM_MESH && SAPT(cl_meshClimbs)(g)) {
    SAPT(cl_neg)(d, n);
    SAPT(cl_toLocalDir)(l, g, d);
    nr = SAPT(cl_meshDeepest)(g, SAPT(cl_meshSupportId)(g, l), n, pl->pos, margin, ids);
    if (nr >= 0) nv = nr;
  }
  SAPT(cl_sub)(d, g->pos, pl->pos);
  R hc = SAPT(cl_dot)(d, n);  // the centre's height
  for (int k = 0; k < nv; k++) {
    int i = nr >= 0 ? ids[k] : k;
    SAPT(cl_vertex)(v, g, i);
    SAPT(cl_sub)(d, v, pl->pos);
    C c;
    R hv = SAPT(cl_dot)(d, n);
    if (hv > hc || !SAPT(cl_planePoint)(v, hv, 0, n, margin, &c)) continue;
    if (nc < 8) { idx[nc] = i; buf[nc++] = c; continue; }
    // buffer full (large meshes): replace the shallowest (the later on ties) if deeper
    int w = 0;
    for (int j = 1; j < 8; j++) if (buf[j].dist >= buf[w].dist) w = j;
    if (c.dist < buf[w].dist) { buf[w] = c; idx[w] = i; }
  }
  for (int i = 1; i < nc; i++)  // index order
    for (int j = i; j > 0 && idx[j] < idx[j - 1]; j--) {
      int t = idx[j]; idx[j] = idx[j - 1]; idx[j - 1] = t;
      C tc = buf[j]; buf[j] = buf[j - 1]; buf[j - 1] = tc;
    }
  nc = SAPT(cl_reduce)(buf, nc);
  for (int i = 0; i < nc; i++) con[i] = buf[i];
  return nc;
}

/* plane vs cylinder: lowest rim point of each cap, plus two more on the lower cap
 * at +-120 degrees (a tripod for an upright cylinder) */
SAP_HD_BIG int SAPT(cl_planeCylinder)(const G* pl, const G* g, R margin, C* con) {
  R n[3], a[3], u[3], v[3], c0[3], c1[3], p[3], d[3], t2[3];
  int nc = 0;
  SAPT(cl_axis)(n, pl, 2);
  SAPT(cl_axis)(a, g, 2);
  // u: direction in the cap plane pointing most into the plane
  SAPT(cl_madd)(u, n, a, -SAPT(cl_dot)(n, a));
  SAPT(cl_neg)(u, u);
  if (SAPT(cl_normalize)(u) < (R)1e-6) SAPT(cl_tangents)(a, u, t2);
  SAPT(cl_cross)(v, a, u);
  // lower cap first
  R s = SAPT(cl_dot)(a, n) > 0 ? -g->size[1] : g->size[1];
  SAPT(cl_madd)(c0, g->pos, a, s);
  SAPT(cl_madd)(c1, g->pos, a, -s);
  const R cs = (R)-0.5, sn = (R)0.86602540378443865;
  R du[4] = {1, 1, cs, cs}, dv[4] = {0, 0, sn, -sn};
  for (int k = 0; k < 4; k++) {
    SAPT(cl_madd)(p, k == 1 ? c1 : c0, u, g->size[0] * du[k]);
    SAPT(cl_madd)(p, p, v, g->size[0] * dv[k]);
    SAPT(cl_sub)(d, p, pl->pos);
    nc += SAPT(cl_planePoint)(p, SAPT(cl_dot)(d, n), 0, n, margin, con + nc);
  }
  return nc;
}

/* ---- sphere and capsule pairs ------------------------------------------------------ */

/* spheres (ca, ra) and (cb, rb); coincident centres use +x */
SAP_HD int SAPT(cl_spheres)(const R* ca, R ra, const R* cb, R rb, R margin, C* c) {
  R n[3];
  SAPT(cl_sub)(n, cb, ca);
  R l = SAPT(cl_normalize)(n);
  R dist = l - ra - rb;
  if (dist >= margin) return 0;
  if (l <= CL_TINY) { n[0] = 1; n[1] = 0; n[2] = 0; }
  SAPT(cl_madd)(c->pos, ca, n, ra + dist / 2);
  SAPT(cl_copy)(c->n, n);
  c->dist = dist;
  return 1;
}

/* segment end points of a capsule core */
SAP_HD void SAPT(cl_segment)(const G* g, R* p0, R* p1) {
  R a[3];
  SAPT(cl_axis)(a, g, 2);
  SAPT(cl_madd)(p0, g->pos, a, -g->size[1]);
  SAPT(cl_madd)(p1, g->pos, a, g->size[1]);
}

/* closest point to p on segment [p0, p1] */
SAP_HD void SAPT(cl_closestOnSegment)(R* q, const R* p0, const R* p1, const R* p) {
  R e[3], d[3];
  SAPT(cl_sub)(e, p1, p0);
  SAPT(cl_sub)(d, p, p0);
  R ee = SAPT(cl_dot)(e, e), t = ee > CL_TINY ? SAPT(cl_dot)(d, e) / ee : 0;
  t = t < 0 ? 0 : (t > 1 ? 1 : t);
  SAPT(cl_madd)(q, p0, e, t);
}

SAP_HD int SAPT(cl_sphereCapsule)(const G* a, const G* b, R margin, C* c) {
  R p0[3], p1[3], q[3];
  SAPT(cl_segment)(b, p0, p1);
  SAPT(cl_closestOnSegment)(q, p0, p1, a->pos);
  return SAPT(cl_spheres)(a->pos, a->size[0], q, b->size[0], margin, c);
}

/* closest points of segments [p0,p1] and [q0,q1] (Ericson RTCD 5.1.9): s, t */
SAP_HD void SAPT(cl_segSeg)(const R* p0, const R* p1, const R* q0, const R* q1, R* s, R* t) {
  R d1[3], d2[3], r[3];
  SAPT(cl_sub)(d1, p1, p0); SAPT(cl_sub)(d2, q1, q0); SAPT(cl_sub)(r, p0, q0);
  R a = SAPT(cl_dot)(d1, d1), e = SAPT(cl_dot)(d2, d2), f = SAPT(cl_dot)(d2, r);
  R cc = SAPT(cl_dot)(d1, r), b = SAPT(cl_dot)(d1, d2), den = a * e - b * b;
  if (a <= CL_TINY && e <= CL_TINY) { *s = 0; *t = 0; return; }
  if (a <= CL_TINY) { *s = 0; *t = f / e; *t = *t < 0 ? 0 : (*t > 1 ? 1 : *t); return; }
  if (e <= CL_TINY) { *t = 0; *s = -cc / a; *s = *s < 0 ? 0 : (*s > 1 ? 1 : *s); return; }
  R sv = den > CL_TINY * a * e ? (b * f - cc * e) / den : 0;
  sv = sv < 0 ? 0 : (sv > 1 ? 1 : sv);
  R tv = (b * sv + f) / e;
  if (tv < 0) { tv = 0; sv = -cc / a; } else if (tv > 1) { tv = 1; sv = (b - cc) / a; }
  *s = sv < 0 ? 0 : (sv > 1 ? 1 : sv);
  *t = tv;
}

/* capsule-capsule: closest points; 2 contacts over the overlap when parallel */
SAP_HD_BIG int SAPT(cl_capsuleCapsule)(const G* a, const G* b, R margin, C* con) {
  R p0[3], p1[3], q0[3], q1[3], da[3], db[3], x[3], pa[3], pb[3], s, t;
  SAPT(cl_segment)(a, p0, p1);
  SAPT(cl_segment)(b, q0, q1);
  SAPT(cl_axis)(da, a, 2);
  SAPT(cl_axis)(db, b, 2);
  SAPT(cl_cross)(x, da, db);
  R ra = a->size[0], rb = b->size[0];
  if (SAPT(cl_norm)(x) < (R)CL_PARALLEL_SIN) {
    // overlap of b's projection on a's axis: [lo, hi] in a's axial coordinate
    R t0 = SAPT(cl_dot)(q0, da) - SAPT(cl_dot)(a->pos, da);
    R t1 = SAPT(cl_dot)(q1, da) - SAPT(cl_dot)(a->pos, da);
    R lo = t0 < t1 ? t0 : t1, hi = t0 < t1 ? t1 : t0, h = a->size[1];
    lo = lo > -h ? lo : -h;
    hi = hi < h ? hi : h;
    if (hi - lo > (R)1e-3 * (h + b->size[1])) {
      int nc = 0;
      for (int k = 0; k < 2; k++) {
        SAPT(cl_madd)(pa, a->pos, da, k == 0 ? lo : hi);
        SAPT(cl_closestOnSegment)(pb, q0, q1, pa);
        nc += SAPT(cl_spheres)(pa, ra, pb, rb, margin, con + nc);
      }
      return nc;
    }
  }
  SAPT(cl_segSeg)(p0, p1, q0, q1, &s, &t);
  SAPT(cl_madd)(pa, p0, da, s * 2 * a->size[1]);
  SAPT(cl_madd)(pb, q0, db, t * 2 * b->size[1]);
  return SAPT(cl_spheres)(pa, ra, pb, rb, margin, con);
}

/* closest point of a box to p (world); returns 1 when p is outside */
SAP_HD int SAPT(cl_boxClosest)(const G* g, const R* p, R* q) {
  R l[3], d[3];
  int out = 0;
  SAPT(cl_sub)(d, p, g->pos);
  SAPT(cl_toLocalDir)(l, g, d);
  for (int k = 0; k < 3; k++) {
    if (l[k] > g->size[k]) { l[k] = g->size[k]; out = 1; }
    if (l[k] < -g->size[k]) { l[k] = -g->size[k]; out = 1; }
  }
  SAPT(cl_toWorld)(q, g, l);
  return out;
}

/* sphere (a) vs box (b): clamp the centre; inside: push out through the nearest face */
SAP_HD int SAPT(cl_sphereBox)(const G* a, const G* b, R margin, C* c) {
  R q[3], l[3], d[3], n[3], pa[3];
  R r = a->size[0];
  if (SAPT(cl_boxClosest)(b, a->pos, q)) return SAPT(cl_spheres)(a->pos, r, q, 0, margin, c);
  SAPT(cl_sub)(d, a->pos, b->pos);
  SAPT(cl_toLocalDir)(l, b, d);
  int k = 0;
  for (int j = 1; j < 3; j++)
    if (b->size[j] - CL_FABS(l[j]) < b->size[k] - CL_FABS(l[k])) k = j;
  R sgn = l[k] >= 0 ? (R)1 : (R)-1;
  l[k] = sgn * b->size[k];
  SAPT(cl_toWorld)(q, b, l);
  SAPT(cl_axis)(n, b, k);
  for (int j = 0; j < 3; j++) n[j] *= -sgn;  // from the sphere into the box
  SAPT(cl_madd)(pa, a->pos, n, r);
  SAPT(cl_setContact)(c, pa, q, n);
  return c->dist < margin;
}

/* sphere (a) vs cylinder (b), exact (as MuJoCo 4's mjc_SphereCylinder): with the
 * sphere centre at axial height x and radial offset r in b's frame, the closest
 * feature is the side (|x| < h: a sphere of radius R on the axis point), a cap
 * (r < R: the cap plane), else the rim (a point); a centre inside the cylinder
 * leaves through the nearer of side and cap */
SAP_HD int SAPT(cl_sphereCylinder)(const G* a, const G* b, R margin, C* c) {
  R ax[3], d[3], onaxis[3], rad[3], p[3], n[3];
  R R0 = b->size[0], h = b->size[1];
  SAPT(cl_axis)(ax, b, 2);
  SAPT(cl_sub)(d, a->pos, b->pos);
  R x = SAPT(cl_dot)(ax, d);
  SAPT(cl_madd)(rad, d, ax, -x);  // radial part of the centre offset
  R r2 = SAPT(cl_dot)(rad, rad);
  int side = CL_FABS(x) < h, cap = r2 < R0 * R0;
  if (side && cap) {  // centre inside: the nearer surface wins
    if (h - CL_FABS(x) < R0 - CL_SQRT(r2)) side = 0; else cap = 0;
  }
  if (side) {
    SAPT(cl_madd)(onaxis, b->pos, ax, x);
    return SAPT(cl_spheres)(a->pos, a->size[0], onaxis, R0, margin, c);
  }
  if (cap) {
    // n from the sphere into the cap: -(outward cap normal); dist = height - radius
    R s = x > 0 ? (R)1 : (R)-1;
    for (int k = 0; k < 3; k++) n[k] = -s * ax[k];
    R dist = s * x - h - a->size[0];
    if (dist >= margin) return 0;
    SAPT(cl_madd)(c->pos, a->pos, n, a->size[0] + dist / 2);
    SAPT(cl_copy)(c->n, n);
    c->dist = dist;
    return 1;
  }
  // rim: the closest point of the cap circle (r > 0 here)
  SAPT(cl_madd)(p, b->pos, rad, R0 / CL_SQRT(r2));
  SAPT(cl_madd)(p, p, ax, x > 0 ? h : -h);
  return SAPT(cl_spheres)(a->pos, a->size[0], p, 0, margin, c);
}

/* ---- manifold by clipping two support features -------------------------------------- */

/* clip the incident point set q (nq; polygon if >= 3) by the half space dot(s, x - p) <= 0 */
SAP_HD int SAPT(cl_clipPlane)(R (*q)[3], int nq, const R* s, const R* p, R (*out)[3]) {
  R d[3];
  int no = 0, nedge = nq >= 3 ? nq : nq - 1;
  if (nq == 1) {
    SAPT(cl_sub)(d, q[0], p);
    if (SAPT(cl_dot)(d, s) <= 0) SAPT(cl_copy)(out[no++], q[0]);
    return no;
  }
  R h[16];  // each point's height once (an edge's two ends used to compute both)
  int inside = 1;
  for (int i = 0; i < nq; i++) {
    SAPT(cl_sub)(d, q[i], p);
    h[i] = SAPT(cl_dot)(d, s);
    inside &= h[i] <= 0;
  }
  if (inside) {  // nothing to clip: the loop below would copy every point, in order
    for (int i = 0; i < nq; i++) SAPT(cl_copy)(out[i], q[i]);
    return nq;
  }
  for (int i = 0; i < nedge; i++) {
    int i1 = i + 1 < nq ? i + 1 : 0;
    const R* x0 = q[i];
    const R* x1 = q[i1];
    R h0 = h[i], h1 = h[i1];
    if (h0 <= 0 && (nq >= 3 || i == 0) && no < 16) SAPT(cl_copy)(out[no++], x0);
    if ((h0 <= 0) != (h1 <= 0) && no < 16) {
      SAPT(cl_sub)(d, x1, x0);
      SAPT(cl_madd)(out[no++], x0, d, h0 / (h0 - h1));
    }
    if (nq == 2 && h1 <= 0 && no < 16) SAPT(cl_copy)(out[no++], x1);
  }
  return no;
}

/* Reference feature fr (>= 2 points, outward direction nout towards the other geom),
 * incident feature fi. Clips fi to the side planes of fr; each surviving point q
 * gives dist = height of q over fr's plane along nout. ra, rb: core radii of the geoms
 * a and b; flip: fr belongs to b. Returns contacts with dist < margin. */
SAP_HD_BIG int SAPT(cl_clip)(R (*fr)[3], int nr, R (*fi)[3], int ni, const R* nout, R ra, R rb,
                         int flip, R margin, C* con) {
  R pn[3], s[3], e[3], buf[2][16][3], c[3] = {0, 0, 0};
  int nb = ni, cur = 0;
  // reference plane normal pn (face normal, or nout made perpendicular to the edge)
  if (nr >= 3) {
    R e1[3], e2[3];
    SAPT(cl_sub)(e1, fr[1], fr[0]);
    SAPT(cl_sub)(e2, fr[2], fr[0]);
    SAPT(cl_cross)(pn, e1, e2);
    if (SAPT(cl_dot)(pn, nout) < 0) SAPT(cl_neg)(pn, pn);
  } else {
    SAPT(cl_sub)(e, fr[1], fr[0]);
    SAPT(cl_normalize)(e);
    SAPT(cl_madd)(pn, nout, e, -SAPT(cl_dot)(nout, e));
  }
  if (SAPT(cl_normalize)(pn) < (R)1e-6) return 0;
  for (int i = 0; i < ni; i++) SAPT(cl_copy)(buf[0][i], fi[i]);
  for (int i = 0; i < nr; i++) SAPT(cl_madd)(c, c, fr[i], (R)1 / nr);
  // side planes: polygon edges, or the two end caps of an edge
  int nside = nr >= 3 ? nr : 2;
  for (int k = 0; k < nside && nb > 0; k++) {
    const R* p = fr[k];
    if (nr >= 3) {
      SAPT(cl_sub)(e, fr[k + 1 < nr ? k + 1 : 0], fr[k]);
      SAPT(cl_cross)(s, e, pn);
      SAPT(cl_sub)(e, c, p);
      if (SAPT(cl_dot)(s, e) > 0) SAPT(cl_neg)(s, s);
    } else {
      SAPT(cl_sub)(s, fr[1], fr[0]);
      if (k == 0) SAPT(cl_neg)(s, s); else p = fr[1];
    }
    nb = SAPT(cl_clipPlane)(buf[cur], nb, s, p, buf[1 - cur]);
    cur = 1 - cur;
  }
  // heights over the reference plane along dp (the face normal, else nout);
  // witnesses (ref, inc) -> (a, b)
  R dp[3], n[3], d[3], pr[3], pa[3], pb[3];
  C tmp[16];
  int nc = 0;
  SAPT(cl_copy)(dp, nr >= 3 ? pn : nout);
  R cosn = SAPT(cl_dot)(pn, dp);
  SAPT(cl_copy)(n, dp);
  if (flip) SAPT(cl_neg)(n, n);  // n from a to b
  for (int i = 0; i < nb; i++) {
    SAPT(cl_sub)(d, buf[cur][i], fr[0]);
    R t = SAPT(cl_dot)(d, pn) / cosn;
    SAPT(cl_madd)(pr, buf[cur][i], dp, -t);
    SAPT(cl_copy)(flip ? pb : pa, pr);
    SAPT(cl_copy)(flip ? pa : pb, buf[cur][i]);
    SAPT(cl_madd)(pa, pa, n, ra);
    SAPT(cl_madd)(pb, pb, n, -rb);
    SAPT(cl_setContact)(&tmp[nc], pa, pb, n);
    if (tmp[nc].dist < margin) nc++;
  }
  nc = SAPT(cl_reduce)(tmp, nc);
  for (int i = 0; i < nc; i++) con[i] = tmp[i];
  return nc;
}

/* manifold of geoms a, b along n (a to b); 0 when the features give none */
SAP_HD_BIG int SAPT(cl_manifold)(const G* a, const G* b, const R* n, R margin, C* con) {
  R fa[8][3], fb[8][3], nn[3], s, t, pa[3], pb[3], ea[3], eb[3], x[3];
  SAPT(cl_neg)(nn, n);
  int na = SAPT(cl_feature)(a, n, fa), nb = SAPT(cl_feature)(b, nn, fb);
  R ra = SAPT(cl_coreRadius)(a), rb = SAPT(cl_coreRadius)(b);
  if (na < 2 || nb < 2) return 0;
  if (na == 2 && nb == 2) {
    SAPT(cl_sub)(ea, fa[1], fa[0]); SAPT(cl_normalize)(ea);
    SAPT(cl_sub)(eb, fb[1], fb[0]); SAPT(cl_normalize)(eb);
    SAPT(cl_cross)(x, ea, eb);
    if (SAPT(cl_norm)(x) >= (R)CL_PARALLEL_SIN) {  // crossing edges: closest points
      SAPT(cl_segSeg)(fa[0], fa[1], fb[0], fb[1], &s, &t);
      SAPT(cl_sub)(ea, fa[1], fa[0]); SAPT(cl_madd)(pa, fa[0], ea, s);
      SAPT(cl_sub)(eb, fb[1], fb[0]); SAPT(cl_madd)(pb, fb[0], eb, t);
      SAPT(cl_madd)(pa, pa, n, ra);
      SAPT(cl_madd)(pb, pb, n, -rb);
      SAPT(cl_setContact)(con, pa, pb, n);
      return con->dist < margin;
    }
  }
  if (na >= nb) return SAPT(cl_clip)(fa, na, fb, nb, n, ra, rb, 0, margin, con);
  return SAPT(cl_clip)(fb, nb, fa, na, nn, ra, rb, 1, margin, con);
}

/* ---- MPR (Minkowski portal refinement) on the inflated cores ------------------------- */

/* A step-for-step port of libccd 2.x's ccdMPRPenetration (src/mpr.c), the routine
 * MuJoCo 2.2's mjc_Convex calls: centre v0 from the geom positions, supports of the
 * cores inflated by their radius + margin/2 along the unit direction, MuJoCo's
 * defaults mpr_tolerance 1e-6 (absolute) and mpr_iterations 50, depth = distance
 * from the origin to the final portal, contact point from the barycentric
 * coordinates of the origin in the portal tetrahedron (findPos). MPR converges to
 * the boundary point on the ray v0 -> origin, not to the minimum penetration. */

typedef struct SAPT(sapcMpr) {
  R v[5][3], pa[5][3], pb[5][3];  /* Minkowski points v = pa - pb and their witnesses */
  const G* a;
  const G* b;
  R ra, rb;                       /* inflation radii */
} SAPT(sapcMpr);

/* libccd's ccdIsZero / ccdEq for this precision */
SAP_HD int SAPT(cl_isZero)(R x) { return CL_FABS(x) < CL_EPS; }
SAP_HD int SAPT(cl_eq)(R x, R y) {
  R d = CL_FABS(x - y), ax = CL_FABS(x), ay = CL_FABS(y);
  if (d < CL_EPS) return 1;
  return d < CL_EPS * (ay > ax ? ay : ax);
}

/* support of M = A - B in direction d, stored in slot i */
SAP_HD void SAPT(cl_mprSupport)(SAPT(sapcMpr)* m, int i, const R* d) {
  R u[3], nu[3];
  SAPT(cl_copy)(u, d);
  SAPT(cl_normalize)(u);
  SAPT(cl_neg)(nu, u);
  SAPT(cl_support)(m->pa[i], m->a, u);
  SAPT(cl_madd)(m->pa[i], m->pa[i], u, m->ra);
  SAPT(cl_support)(m->pb[i], m->b, nu);
  SAPT(cl_madd)(m->pb[i], m->pb[i], nu, m->rb);
  SAPT(cl_sub)(m->v[i], m->pa[i], m->pb[i]);
}
SAP_HD void SAPT(cl_mprCopy)(SAPT(sapcMpr)* m, int dst, int src) {
  SAPT(cl_copy)(m->v[dst], m->v[src]);
  SAPT(cl_copy)(m->pa[dst], m->pa[src]);
  SAPT(cl_copy)(m->pb[dst], m->pb[src]);
}
/* unit normal of the portal (v1, v2, v3), pointing away from v0 (portalDir) */
SAP_HD void SAPT(cl_mprDir)(SAPT(sapcMpr)* m, R* dir) {
  R e1[3], e2[3];
  SAPT(cl_sub)(e1, m->v[2], m->v[1]);
  SAPT(cl_sub)(e2, m->v[3], m->v[1]);
  SAPT(cl_cross)(dir, e1, e2);
  SAPT(cl_normalize)(dir);
}
/* (v1 - v0) x (v2 - v0), normalised */
SAP_HD void SAPT(cl_mprDir0)(SAPT(sapcMpr)* m, R* dir) {
  R e1[3], e2[3];
  SAPT(cl_sub)(e1, m->v[1], m->v[0]);
  SAPT(cl_sub)(e2, m->v[2], m->v[0]);
  SAPT(cl_cross)(dir, e1, e2);
  SAPT(cl_normalize)(dir);
}
/* v4 cannot expand the portal by more than tol along dir (portalReachTolerance) */
SAP_HD int SAPT(cl_mprReached)(SAPT(sapcMpr)* m, const R* dir) {
  R h4 = SAPT(cl_dot)(m->v[4], dir), dmin = (R)1e30;
  for (int i = 1; i <= 3; i++) {
    R d = h4 - SAPT(cl_dot)(m->v[i], dir);
    dmin = d < dmin ? d : dmin;
  }
  return SAPT(cl_eq)(dmin, (R)CL_MPR_TOL) || dmin < (R)CL_MPR_TOL;
}

/* phase 1 (discoverPortal): -1 separated, 0 portal built, 1 origin on v1,
 * 2 origin on the segment v0-v1 */
SAP_HD_BIG int SAPT(cl_mprDiscover)(SAPT(sapcMpr)* m) {
  R dir[3], x[3];
  SAPT(cl_copy)(m->pa[0], m->a->pos);
  SAPT(cl_copy)(m->pb[0], m->b->pos);
  SAPT(cl_sub)(m->v[0], m->pa[0], m->pb[0]);
  if (SAPT(cl_isZero)(m->v[0][0]) && SAPT(cl_isZero)(m->v[0][1]) && SAPT(cl_isZero)(m->v[0][2]))
    m->v[0][0] += 10 * CL_EPS;  // centres coincide: move v0 off the origin
  SAPT(cl_neg)(dir, m->v[0]);
  SAPT(cl_normalize)(dir);
  SAPT(cl_mprSupport)(m, 1, dir);
  R dot = SAPT(cl_dot)(m->v[1], dir);
  if (SAPT(cl_isZero)(dot) || dot < 0) return -1;
  SAPT(cl_cross)(dir, m->v[0], m->v[1]);
  if (SAPT(cl_isZero)(SAPT(cl_dot)(dir, dir))) {
    int on1 = SAPT(cl_isZero)(m->v[1][0]) && SAPT(cl_isZero)(m->v[1][1]) && SAPT(cl_isZero)(m->v[1][2]);
    return on1 ? 1 : 2;
  }
  SAPT(cl_normalize)(dir);
  SAPT(cl_mprSupport)(m, 2, dir);
  dot = SAPT(cl_dot)(m->v[2], dir);
  if (SAPT(cl_isZero)(dot) || dot < 0) return -1;
  // orient the portal faces away from the origin
  SAPT(cl_mprDir0)(m, dir);
  if (SAPT(cl_dot)(dir, m->v[0]) > 0) {
    SAPT(cl_mprCopy)(m, 3, 1); SAPT(cl_mprCopy)(m, 1, 2); SAPT(cl_mprCopy)(m, 2, 3);
    SAPT(cl_neg)(dir, dir);
  }
  for (int it = 0; it < CL_MPR_MAXLOOP; it++) {
    SAPT(cl_mprSupport)(m, 3, dir);
    dot = SAPT(cl_dot)(m->v[3], dir);
    if (SAPT(cl_isZero)(dot) || dot < 0) return -1;
    // origin outside (v1, v0, v3): v2 = v3; outside (v3, v0, v2): v1 = v3
    SAPT(cl_cross)(x, m->v[1], m->v[3]);
    dot = SAPT(cl_dot)(x, m->v[0]);
    if (dot < 0 && !SAPT(cl_isZero)(dot)) {
      SAPT(cl_mprCopy)(m, 2, 3); SAPT(cl_mprDir0)(m, dir); continue;
    }
    SAPT(cl_cross)(x, m->v[3], m->v[2]);
    dot = SAPT(cl_dot)(x, m->v[0]);
    if (dot < 0 && !SAPT(cl_isZero)(dot)) {
      SAPT(cl_mprCopy)(m, 1, 3); SAPT(cl_mprDir0)(m, dir); continue;
    }
    return 0;
  }
  return -1;
}

/* replace a portal vertex by v4 keeping the ray v0 -> origin inside the portal */
SAP_HD void SAPT(cl_mprExpand)(SAPT(sapcMpr)* m) {
  R x[3];
  SAPT(cl_cross)(x, m->v[4], m->v[0]);
  if (SAPT(cl_dot)(m->v[1], x) > 0) {
    SAPT(cl_mprCopy)(m, SAPT(cl_dot)(m->v[2], x) > 0 ? 1 : 3, 4);
  } else {
    SAPT(cl_mprCopy)(m, SAPT(cl_dot)(m->v[3], x) > 0 ? 2 : 1, 4);
  }
}

/* barycentric coordinates of the point of triangle (p1,p2,p3) closest to the origin
 * (Ericson, RTCD 5.1.5) */
SAP_HD void SAPT(cl_triClosest)(const R* p1, const R* p2, const R* p3, R* w) {
  R ab[3], ac[3], ap[3], bp[3], cp[3];
  SAPT(cl_sub)(ab, p2, p1); SAPT(cl_sub)(ac, p3, p1);
  SAPT(cl_neg)(ap, p1); SAPT(cl_neg)(bp, p2); SAPT(cl_neg)(cp, p3);
  R d1 = SAPT(cl_dot)(ab, ap), d2 = SAPT(cl_dot)(ac, ap);
  R d3 = SAPT(cl_dot)(ab, bp), d4 = SAPT(cl_dot)(ac, bp);
  R d5 = SAPT(cl_dot)(ab, cp), d6 = SAPT(cl_dot)(ac, cp);
  R va = d3 * d6 - d5 * d4, vb = d5 * d2 - d1 * d6, vc = d1 * d4 - d3 * d2;
  w[0] = 1; w[1] = 0; w[2] = 0;
  if (d1 <= 0 && d2 <= 0) return;
  if (d3 >= 0 && d4 <= d3) { w[0] = 0; w[1] = 1; return; }
  if (vc <= 0 && d1 >= 0 && d3 <= 0) { R v = d1 / (d1 - d3); w[0] = 1 - v; w[1] = v; return; }
  if (d6 >= 0 && d5 <= d6) { w[0] = 0; w[2] = 1; return; }
  if (vb <= 0 && d2 >= 0 && d6 <= 0) { R v = d2 / (d2 - d6); w[0] = 1 - v; w[2] = v; return; }
  if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0) {
    R v = (d4 - d3) / ((d4 - d3) + (d5 - d6)); w[0] = 0; w[1] = 1 - v; w[2] = v; return;
  }
  R den = 1 / (va + vb + vc);
  w[1] = vb * den; w[2] = vc * den; w[0] = 1 - w[1] - w[2];
}

/* contact point (findPos): barycentric coordinates of the origin in the tetrahedron
 * (v0..v3), else in the portal along its normal; midpoint of the two witnesses */
SAP_HD void SAPT(cl_mprPos)(SAPT(sapcMpr)* m, R* pos) {
  R dir[3], x[3], bc[4], p1[3] = {0, 0, 0}, p2[3] = {0, 0, 0};
  SAPT(cl_mprDir)(m, dir);
  SAPT(cl_cross)(x, m->v[1], m->v[2]); bc[0] = SAPT(cl_dot)(x, m->v[3]);
  SAPT(cl_cross)(x, m->v[3], m->v[2]); bc[1] = SAPT(cl_dot)(x, m->v[0]);
  SAPT(cl_cross)(x, m->v[0], m->v[1]); bc[2] = SAPT(cl_dot)(x, m->v[3]);
  SAPT(cl_cross)(x, m->v[2], m->v[1]); bc[3] = SAPT(cl_dot)(x, m->v[0]);
  R sum = bc[0] + bc[1] + bc[2] + bc[3];
  if (SAPT(cl_isZero)(sum) || sum < 0) {
    bc[0] = 0;
    SAPT(cl_cross)(x, m->v[2], m->v[3]); bc[1] = SAPT(cl_dot)(x, dir);
    SAPT(cl_cross)(x, m->v[3], m->v[1]); bc[2] = SAPT(cl_dot)(x, dir);
    SAPT(cl_cross)(x, m->v[1], m->v[2]); bc[3] = SAPT(cl_dot)(x, dir);
    sum = bc[1] + bc[2] + bc[3];
  }
  R inv = 1 / sum;
  for (int i = 0; i < 4; i++) {
    SAPT(cl_madd)(p1, p1, m->pa[i], bc[i]);
    SAPT(cl_madd)(p2, p2, m->pb[i], bc[i]);
  }
  for (int k = 0; k < 3; k++) pos[k] = (R)0.5 * (p1[k] * inv + p2[k] * inv);
}

/* ---- EPA: minimum penetration from MPR's tetrahedron --------------------------------- */

/* Expanding polytope (van den Bergen, "Proximity queries and penetration depth
 * computation on 3D game objects", GDC 2001; Ericson RTCD 9.5; MuJoCo 4's native
 * collider does the same after its GJK): starting from MPR's final tetrahedron
 * (v0 inside, the portal v1 v2 v3; it holds the origin), the face of the polytope
 * nearest the origin is pushed out to the support point along its normal until that
 * point advances less than CL_MPR_TOL; the polytope lies inside M = A - B, so its
 * nearest face converges from inside to the minimum penetration and its normal to the
 * minimum direction. The depth reported is the overlap along the final normal,
 * h_M(n) = w.n (w its support point), which is never below the minimum penetration
 * and exactly what pushing along n must undo, also when the face budget
 * (CL_EPA_NV vertices, CL_EPA_NF faces) ends the expansion early. */

typedef struct SAPT(sapcEpa) {
  R v[CL_EPA_NV][3], pa[CL_EPA_NV][3];  /* Minkowski points v = pa - pb, witness on a */
  int f[CL_EPA_NF][3];                    /* faces, counter-clockwise seen from outside */
  R fn[CL_EPA_NF][3], fd[CL_EPA_NF];      /* unit outward normal, distance of the plane */
  int nv, nf;
  R c[3];                                 /* a point inside (the first tetrahedron's centroid) */
} SAPT(sapcEpa);

/* face k over vertices (i, j, l): normal oriented away from the inner point; a
 * degenerate face gets distance +inf (never the nearest) */
SAP_HD void SAPT(cl_epaFace)(SAPT(sapcEpa)* e, int k, int i, int j, int l) {
  R e1[3], e2[3], n[3], d[3];
  SAPT(cl_sub)(e1, e->v[j], e->v[i]);
  SAPT(cl_sub)(e2, e->v[l], e->v[i]);
  SAPT(cl_cross)(n, e1, e2);
  SAPT(cl_sub)(d, e->v[i], e->c);
  if (SAPT(cl_dot)(n, d) < 0) { int t = j; j = l; l = t; SAPT(cl_neg)(n, n); }
  e->f[k][0] = i; e->f[k][1] = j; e->f[k][2] = l;
  R len = SAPT(cl_normalize)(n);
  SAPT(cl_copy)(e->fn[k], n);
  e->fd[k] = len > CL_TINY ? SAPT(cl_dot)(n, e->v[i]) : (R)1e30;
}

/* does face k hold the directed edge (a, b)? */
SAP_HD int SAPT(cl_epaHasEdge)(const SAPT(sapcEpa)* e, int k, int a, int b) {
  for (int i = 0; i < 3; i++)
    if (e->f[k][i] == a && e->f[k][(i + 1) % 3] == b) return 1;
  return 0;
}

/* EPA after a successful cl_mpr phase 3 (m holds the tetrahedron). Returns the unit
 * normal n (a to b), the depth h_M(n) and the contact point (midpoint of the
 * witnesses on the nearest face) */
SAP_HD_BIG void SAPT(cl_epa)(SAPT(sapcMpr)* m, R* n, R* depth, R* pos) {
  SAPT(sapcEpa) e;
  unsigned char vis[CL_EPA_NF];
  R w[3], wa[3], d[3];
  e.nv = 4;
  for (int i = 0; i < 4; i++) { SAPT(cl_copy)(e.v[i], m->v[i]); SAPT(cl_copy)(e.pa[i], m->pa[i]); }
  for (int k = 0; k < 3; k++) e.c[k] = (R)0.25 * (e.v[0][k] + e.v[1][k] + e.v[2][k] + e.v[3][k]);
  SAPT(cl_epaFace)(&e, 0, 1, 2, 3);
  SAPT(cl_epaFace)(&e, 1, 0, 1, 2);
  SAPT(cl_epaFace)(&e, 2, 0, 2, 3);
  SAPT(cl_epaFace)(&e, 3, 0, 3, 1);
  e.nf = 4;
  int best = 0;
  R hbest = 0;
  for (;;) {
    // nearest face, its support point w and the overlap along its normal h = w.n
    int k = 0;
    for (int j = 1; j < e.nf; j++) if (e.fd[j] < e.fd[k]) k = j;
    SAPT(cl_mprSupport)(m, 4, e.fn[k]);
    R h = SAPT(cl_dot)(m->v[4], e.fn[k]);
    hbest = h;
    best = k;
    SAPT(cl_copy)(w, m->v[4]);
    SAPT(cl_copy)(wa, m->pa[4]);
    if (h - e.fd[k] <= (R)CL_MPR_TOL || e.nv == CL_EPA_NV) break;
    // faces that see w go; their rim (edges whose neighbour stays) gets new faces to w
    int nvis = 0;
    for (int j = 0; j < e.nf; j++) {
      SAPT(cl_sub)(d, w, e.v[e.f[j][0]]);
      vis[j] = SAPT(cl_dot)(e.fn[j], d) > 0;
      nvis += vis[j];
    }
    if (!vis[k]) break;  // rounding: w does not see the face it came from
    int rim[CL_EPA_NF][2], nrim = 0;
    for (int j = 0; j < e.nf; j++) {
      if (!vis[j]) continue;
      for (int i = 0; i < 3; i++) {
        int a = e.f[j][i], b = e.f[j][(i + 1) % 3], kept = 0;
        for (int q = 0; q < e.nf && !kept; q++) kept = !vis[q] && SAPT(cl_epaHasEdge)(&e, q, b, a);
        if (kept && nrim < CL_EPA_NF) { rim[nrim][0] = a; rim[nrim][1] = b; nrim++; }
      }
    }
    if (e.nf - nvis + nrim > CL_EPA_NF) break;
    // compact the kept faces, then add one per rim edge
    int nf = 0;
    for (int j = 0; j < e.nf; j++) {
      if (vis[j]) continue;
      if (nf != j) {
        for (int i = 0; i < 3; i++) e.f[nf][i] = e.f[j][i];
        SAPT(cl_copy)(e.fn[nf], e.fn[j]);
        e.fd[nf] = e.fd[j];
      }
      nf++;
    }
    int iw = e.nv++;
    SAPT(cl_copy)(e.v[iw], w);
    SAPT(cl_copy)(e.pa[iw], wa);
    for (int r = 0; r < nrim; r++) SAPT(cl_epaFace)(&e, nf++, rim[r][0], rim[r][1], iw);
    e.nf = nf;
  }
  // the last face examined: its normal and the overlap along it
  SAPT(cl_copy)(n, e.fn[best]);
  *depth = hbest;
  // witnesses: the barycentric point of the face nearest the origin
  R bc[3], p1[3] = {0, 0, 0}, p2[3] = {0, 0, 0};
  const int* f = e.f[best];
  SAPT(cl_triClosest)(e.v[f[0]], e.v[f[1]], e.v[f[2]], bc);
  for (int i = 0; i < 3; i++) {
    SAPT(cl_madd)(p1, p1, e.pa[f[i]], bc[i]);
    SAPT(cl_sub)(d, e.pa[f[i]], e.v[f[i]]);  // pb = pa - v
    SAPT(cl_madd)(p2, p2, d, bc[i]);
  }
  for (int k = 0; k < 3; k++) pos[k] = (R)0.5 * (p1[k] + p2[k]);
}

/* MPR penetration of the inflated cores: on overlap, returns 1 with the unit normal
 * n (a to b), depth > 0 and the contact point pos; epa: the minimum penetration by EPA
 * from MPR's last tetrahedron instead of MPR's portal (libccd's result) */
SAP_HD_BIG int SAPT(cl_mpr)(const G* a, R ra, const G* b, R rb, int epa, R* n, R* depth, R* pos) {
  SAPT(sapcMpr) m;
  R dir[3], w[3];
  m.a = a; m.b = b; m.ra = ra; m.rb = rb;
  int res = SAPT(cl_mprDiscover)(&m);
  if (res < 0 || res == 1) return 0;  // separated, or touching at v1 (depth 0, no normal)
  if (res == 2) {  // origin on the segment v0-v1: the boundary point is v1
    for (int k = 0; k < 3; k++) pos[k] = (R)0.5 * (m.pa[1][k] + m.pb[1][k]);
    SAPT(cl_copy)(n, m.v[1]);
    *depth = SAPT(cl_normalize)(n);
    return 1;
  }
  // phase 2 (refinePortal): does the portal enclose the origin?
  int hit = 0;
  for (int it = 0; it < CL_MPR_MAXLOOP; it++) {
    SAPT(cl_mprDir)(&m, dir);
    R dot = SAPT(cl_dot)(dir, m.v[1]);
    if (SAPT(cl_isZero)(dot) || dot > 0) { hit = 1; break; }
    SAPT(cl_mprSupport)(&m, 4, dir);
    dot = SAPT(cl_dot)(m.v[4], dir);
    if (!(SAPT(cl_isZero)(dot) || dot > 0) || SAPT(cl_mprReached)(&m, dir)) return 0;
    SAPT(cl_mprExpand)(&m);
  }
  if (!hit) return 0;
  // phase 3 (findPenetr): refine towards the boundary, at most CL_MPR_ITERS expansions
  for (int it = 0;; it++) {
    SAPT(cl_mprDir)(&m, dir);
    SAPT(cl_mprSupport)(&m, 4, dir);
    if (SAPT(cl_mprReached)(&m, dir) || it > CL_MPR_ITERS) break;
    SAPT(cl_mprExpand)(&m);
  }
  if (epa) {
    SAPT(cl_epa)(&m, n, depth, pos);
    return *depth > 0;
  }
  // depth and normal: the point of the portal nearest the origin
  SAPT(cl_triClosest)(m.v[1], m.v[2], m.v[3], w);
  n[0] = n[1] = n[2] = 0;
  for (int i = 0; i < 3; i++) SAPT(cl_madd)(n, n, m.v[i + 1], w[i]);
  *depth = SAPT(cl_normalize)(n);
  if (SAPT(cl_isZero)(*depth)) return 0;  // touching: normal undefined
  SAPT(cl_mprPos)(&m, pos);
  return 1;
}

/* ---- normal on curved surfaces (MuJoCo 2.2's mjc_fixNormal) -------------------------- */

/* ellipsoid normal for a point p inside (local frame, sizes s): ray projection along
 * the current normal n, iterated; 0 when p is outside or no step was taken */
SAP_HD int SAPT(cl_ellipsoidInside)(R* n, const R* p, const R* s) {
  R s2i[3] = {1 / (s[0] * s[0]), 1 / (s[1] * s[1]), 1 / (s[2] * s[2])}, q[3], nn[3], d[3];
  R c = p[0] * p[0] * s2i[0] + p[1] * p[1] * s2i[1] + p[2] * p[2] * s2i[2] - 1;
  if (c > 0) return 0;
  SAPT(cl_normalize)(n);
  for (int it = 0; it < 30; it++) {
    R A = n[0] * n[0] * s2i[0] + n[1] * n[1] * s2i[1] + n[2] * n[2] * s2i[2];
    R B = p[0] * n[0] * s2i[0] + p[1] * n[1] * s2i[1] + p[2] * n[2] * s2i[2];
    R det = B * B - A * c;
    if (det < (R)1e-15 || A < (R)1e-15) return it > 0;
    R x = (-B + CL_SQRT(det)) / A;  // ray p + x n meets the surface
    if (x < 0) return it > 0;
    SAPT(cl_madd)(q, p, n, x);
    for (int k = 0; k < 3; k++) nn[k] = q[k] * s2i[k];
    SAPT(cl_normalize)(nn);
    SAPT(cl_sub)(d, n, nn);
    R change = SAPT(cl_norm)(d);
    SAPT(cl_copy)(n, nn);
    if (change < (R)1e-6) break;
  }
  return 1;
}

/* ellipsoid normal for a point p outside: the closest surface point's normal
 * p / (s^2 + la), la by Newton on |S p / (s^2 + la)|^2 = 1 */
SAP_HD int SAPT(cl_ellipsoidOutside)(R* n, const R* p, const R* s) {
  R s2[3] = {s[0] * s[0], s[1] * s[1], s[2] * s[2]};
  R ps2[3] = {p[0] * p[0] * s2[0], p[1] * p[1] * s2[1], p[2] * p[2] * s2[2]}, la = 0;
  for (int it = 0; it < 30; it++) {
    R r[3] = {1 / (s2[0] + la), 1 / (s2[1] + la), 1 / (s2[2] + la)};
    R val = ps2[0] * r[0] * r[0] + ps2[1] * r[1] * r[1] + ps2[2] * r[2] * r[2] - 1;
    if (val < (R)1e-6) break;
    R der = -2 * (ps2[0] * r[0] * r[0] * r[0] + ps2[1] * r[1] * r[1] * r[1] + ps2[2] * r[2] * r[2] * r[2]);
    if (der > -(R)1e-15) break;
    R delta = -val / der;
    if (delta < (R)1e-6) break;
    la += delta;
  }
  for (int k = 0; k < 3; k++) n[k] = p[k] / (s2[k] + la);
  SAPT(cl_normalize)(n);
  return 1;
}

/* outward surface normal of a curved geom g at the contact point pos (world), nw the
 * current outward guess; 1 when replaced (sphere, capsule, ellipsoid, cylinder side) */
SAP_HD int SAPT(cl_curvedNormal)(const G* g, const R* pos, R* nw) {
  R d[3], p[3], n[3];
  const R* s = g->size;
  SAPT(cl_sub)(d, pos, g->pos);
  SAPT(cl_toLocalDir)(p, g, d);
  SAPT(cl_toLocalDir)(n, g, nw);
  int done = 0;
  if (g->type == SAP_GEOM_SPHERE) {
    SAPT(cl_copy)(n, p);
    done = 1;
  } else if (g->type == SAP_GEOM_CAPSULE) {
    n[0] = p[0]; n[1] = p[1];
    n[2] = p[2] < -s[1] ? p[2] + s[1] : (p[2] > s[1] ? p[2] - s[1] : 0);
    done = 1;
  } else if (g->type == SAP_GEOM_ELLIPSOID) {
    if (s[0] < (R)1e-15 || s[1] < (R)1e-15 || s[2] < (R)1e-15) return 0;
    R e = p[0] * p[0] / (s[0] * s[0]) + p[1] * p[1] / (s[1] * s[1]) + p[2] * p[2] / (s[2] * s[2]);
    done = e <= 1 ? SAPT(cl_ellipsoidInside)(n, p, s) : SAPT(cl_ellipsoidOutside)(n, p, s);
  } else if (g->type == SAP_GEOM_CYLINDER) {
    // the round wall only: not within 5% of a cap, and 4x closer to the wall than a cap
    if (CL_FABS(p[2]) > (R)0.95 * s[1]) return 0;
    R dcap = CL_FABS(s[1] - CL_FABS(p[2])), dwall = CL_FABS(s[0] - CL_SQRT(p[0] * p[0] + p[1] * p[1]));
    if (dcap < (R)0.25 * dwall) return 0;
    n[0] = p[0]; n[1] = p[1]; n[2] = 0;
    done = 1;
  }
  if (!done) return 0;
  SAPT(cl_normalize)(n);
  for (int k = 0; k < 3; k++) nw[k] = g->mat[3 * k] * n[0] + g->mat[3 * k + 1] * n[1] + g->mat[3 * k + 2] * n[2];
  return 1;
}

/* replace the MPR normal of contact c by the surface normals of curved geoms: a's
 * outward normal, -(b's outward normal), or their normalised difference when both */
SAP_HD void SAPT(cl_fixNormal)(const G* a, const G* b, C* c) {
  R na[3], nb[3];
  SAPT(cl_copy)(na, c->n);
  SAPT(cl_neg)(nb, c->n);
  int fa = SAPT(cl_curvedNormal)(a, c->pos, na), fb = SAPT(cl_curvedNormal)(b, c->pos, nb);
  if (fa && fb) {
    SAPT(cl_sub)(c->n, na, nb);
    SAPT(cl_normalize)(c->n);
  } else if (fa) {
    SAPT(cl_copy)(c->n, na);
  } else if (fb) {
    SAPT(cl_neg)(c->n, nb);
  }
}

/* a characteristic length of a geom (tolerance scale) */
SAP_HD R SAPT(cl_scale)(const G* g) {
  R s = g->size[0] > g->size[1] ? g->size[0] : g->size[1];
  if (g->type == SAP_GEOM_MESH) {
    R v[3], d[3];
    SAPT(cl_vertex)(v, g, 0);
    SAPT(cl_sub)(d, v, g->pos);
    s = SAPT(cl_norm)(d);
  }
  return s > g->size[2] ? s : g->size[2];
}

/* rounding slack of a manifold depth against the pair's own depth: the MPR tolerance
 * twice and a few ulps of the geom scales */
SAP_HD R SAPT(cl_depthSlack)(const G* a, const G* b) {
  return 2 * (R)CL_MPR_TOL + 16 * (R)CL_EPS * (SAPT(cl_scale)(a) + SAPT(cl_scale)(b));
}

/* a manifold (nc contacts) stands for the single contact of depth dist (the pair's
 * minimum penetration, or exact distance) when its deepest point tells the same depth
 * within slack: not shallower (a manifold must not report separation that is not
 * there) and not deeper (its face normal, within ~2 degrees of the contact normal, is
 * then not the minimum direction; the brute-force oracle found such manifolds deeper
 * than MPR's own depth bound, docs/collision_oracle.md) */
SAP_HD int SAPT(cl_manifoldAgrees)(const C* con, int nc, R dist, R slack) {
  R dmin = con[0].dist;
  for (int i = 1; i < nc; i++) dmin = con[i].dist < dmin ? con[i].dist : dmin;
  return CL_FABS(dmin - dist) <= slack;
}

/* general convex pair, as MuJoCo 4's native collider: MPR on the cores inflated by
 * their radius + margin/2 to detect the overlap, EPA from its tetrahedron for the
 * minimum penetration (dist = margin - depth; the normal is the minimum direction, so
 * no curved-surface fix is needed). Then a clipped manifold along that normal when
 * both support features allow one, kept when its deepest point agrees with the EPA
 * depth (cl_manifoldAgrees): a feature picked under a slightly different normal can
 * miss the deepest vertex or measure heights over the wrong face. */
SAP_HD_BIG int SAPT(cl_convex)(const G* a, const G* b, R margin, C* con) {
  R depth;
  C c;
  R ra = SAPT(cl_coreRadius)(a), rb = SAPT(cl_coreRadius)(b);
  if (!SAPT(cl_mpr)(a, ra + margin / 2, b, rb + margin / 2, 1, c.n, &depth, c.pos)) return 0;
  c.dist = margin - depth;
  int nc = SAPT(cl_manifold)(a, b, c.n, margin, con);
  if (nc > 0 && SAPT(cl_manifoldAgrees)(con, nc, c.dist, SAPT(cl_depthSlack)(a, b))) return nc;
  con[0] = c;
  return c.dist < margin;
}

/* capsule (a) vs box (b): closest points of the segment and the box by a golden
 * section search over the segment (the squared distance is convex along it);
 * MPR when the segment enters the box; manifold by clipping */
SAP_HD_BIG int SAPT(cl_capsuleBox)(const G* a, const G* b, R margin, C* con) {
  R p0[3], p1[3], e[3], x[3], q[3], n[3];
  SAPT(cl_segment)(a, p0, p1);
  SAPT(cl_sub)(e, p1, p0);
  R lo = 0, hi = 1, g = (R)0.6180339887498949;
  R t1 = hi - g * (hi - lo), t2 = lo + g * (hi - lo), f1, f2;
  SAPT(cl_madd)(x, p0, e, t1); SAPT(cl_boxClosest)(b, x, q); f1 = SAPT(cl_dist)(x, q);
  SAPT(cl_madd)(x, p0, e, t2); SAPT(cl_boxClosest)(b, x, q); f2 = SAPT(cl_dist)(x, q);
  for (int it = 0; it < CL_GOLDEN_ITERS; it++) {
    if (f1 <= f2) {
      hi = t2; t2 = t1; f2 = f1; t1 = hi - g * (hi - lo);
      SAPT(cl_madd)(x, p0, e, t1); SAPT(cl_boxClosest)(b, x, q); f1 = SAPT(cl_dist)(x, q);
    } else {
      lo = t1; t1 = t2; f1 = f2; t2 = lo + g * (hi - lo);
      SAPT(cl_madd)(x, p0, e, t2); SAPT(cl_boxClosest)(b, x, q); f2 = SAPT(cl_dist)(x, q);
    }
  }
  // the end points are candidates too (the search interval is open)
  R tb = f1 <= f2 ? t1 : t2, fb = f1 <= f2 ? f1 : f2;
  for (int k = 0; k < 2; k++) {
    SAPT(cl_boxClosest)(b, k ? p1 : p0, q);
    R f = SAPT(cl_dist)(k ? p1 : p0, q);
    if (f < fb) { fb = f; tb = (R)k; }
  }
  SAPT(cl_madd)(x, p0, e, tb);
  if (!SAPT(cl_boxClosest)(b, x, q) || fb < (R)1e-6 * SAPT(cl_scale)(b))
    return SAPT(cl_convex)(a, b, margin, con);
  SAPT(cl_sub)(n, q, x);
  SAPT(cl_normalize)(n);
  if (fb - a->size[0] >= margin) return 0;
  int nc = SAPT(cl_manifold)(a, b, n, margin, con);
  if (nc > 0 && SAPT(cl_manifoldAgrees)(con, nc, fb - a->size[0], SAPT(cl_depthSlack)(a, b))) return nc;
  return SAPT(cl_spheres)(x, a->size[0], q, 0, margin, con);
}

/* ---- box-box (separating axes, reference face clipping) ------------------------------ */

/* half extent of box g along unit axis L: sum_k size_k |axis_k . L| */
SAP_HD R SAPT(cl_boxRadius)(const G* g, const R* L) {
  R ak[3], r = 0;
  for (int k = 0; k < 3; k++) {
    SAPT(cl_axis)(ak, g, k);
    r += g->size[k] * CL_FABS(SAPT(cl_dot)(ak, L));
  }
  return r;
}

/* candidate axis i of the separating axis test: 0-2 a's faces, 3-5 b's faces,
 * 6 + 3 i + j the edge cross a_i x b_j (unit); 0 when the edges are parallel within
 * CL_BOX_PARALLEL (the cross is rounding noise; the face axes cover that limit) */
SAP_HD int SAPT(cl_boxAxis)(const G* a, const G* b, int i, R* L) {
  R u[3], v[3];
  if (i < 6) {
    SAPT(cl_axis)(L, i < 3 ? a : b, i % 3);
    return 1;
  }
  SAPT(cl_axis)(u, a, (i - 6) / 3);
  SAPT(cl_axis)(v, b, (i - 6) % 3);
  SAPT(cl_cross)(L, u, v);
  return SAPT(cl_normalize)(L) >= (R)CL_BOX_PARALLEL;
}

/* face contact: reference face of box r with outward unit normal nr (towards the
 * other box), incident box in. The incident face most anti-parallel to nr is clipped
 * to the reference rectangle's side planes (Sutherland-Hodgman); each clipped
 * point's height over the reference plane is its dist, so every contact lies in the
 * intersection of the margin-inflated boxes. The deepest first, then the points that
 * span the patch, at most SAPC_MAXCON. n: a to b. */
SAP_HD_BIG int SAPT(cl_boxFace)(const G* r, const G* in, const R* nr, const R* n, R margin, C* con) {
  R l[3], nn[3], cr[3], e[3], s[3], p[3], d[3], q[3], buf[2][16][3];
  C tmp[16];
  // reference face: local axis kf of r along nr, centre cr
  SAPT(cl_toLocalDir)(l, r, nr);
  int kf = 0;
  for (int k = 1; k < 3; k++) if (CL_FABS(l[k]) > CL_FABS(l[kf])) kf = k;
  SAPT(cl_axis)(e, r, kf);
  SAPT(cl_madd)(cr, r->pos, e, l[kf] > 0 ? r->size[kf] : -r->size[kf]);
  // incident face: the face of in most opposed to nr (4 points, cyclic)
  SAPT(cl_neg)(nn, nr);
  SAPT(cl_toLocalDir)(l, in, nn);
  int ki = 0;
  for (int k = 1; k < 3; k++) if (CL_FABS(l[k]) > CL_FABS(l[ki])) ki = k;
  const R su[4] = {-1, 1, 1, -1}, sv[4] = {-1, -1, 1, 1};
  int u = (ki + 1) % 3, v = (ki + 2) % 3, nb = 4, cur = 0;
  /* exact early out: the incident face's extent along a side axis j of the reference face,
   * t = (in.pos - cr).e_j + pk in_ki.e_j -+ (size_u |in_u.e_j| + size_v |in_v.e_j|), entirely
   * beyond the side plane |t| <= size_j by more than the clip's rounding: then every point
   * the clip holds (the corners and their interpolations, each within ~16 eps W of the exact
   * polygon after 4 planes; W = the coordinates' and sizes' scale) lies beyond that plane,
   * cl_clipPlane empties the set there and the result is no contact, bit for bit;
   * CL_BOX_SKIP_EPS eps W is 4x that (a NaN fails the test) */
  {
    R W = SAPT(cl_absSum)(r->pos) + SAPT(cl_absSum)(in->pos) + r->size[0] + r->size[1] + r->size[2] +
          in->size[0] + in->size[1] + in->size[2];
    R slk = (R)CL_BOX_SKIP_EPS * CL_EPS * W, ai[3], dc[3];
    SAPT(cl_sub)(dc, in->pos, cr);
    for (int j = 0; j < 3; j++) {
      if (j == kf) continue;
      SAPT(cl_axis)(e, r, j);
      SAPT(cl_axis)(ai, in, ki);
      R t0 = SAPT(cl_dot)(dc, e) + (l[ki] > 0 ? in->size[ki] : -in->size[ki]) * SAPT(cl_dot)(ai, e);
      SAPT(cl_axis)(ai, in, u);
      R ext = in->size[u] * CL_FABS(SAPT(cl_dot)(ai, e));
      SAPT(cl_axis)(ai, in, v);
      ext += in->size[v] * CL_FABS(SAPT(cl_dot)(ai, e));
      if (t0 - ext - r->size[j] > slk || t0 + ext + r->size[j] < -slk) return 0;
    }
  }
  for (int i = 0; i < 4; i++) {
    p[ki] = l[ki] > 0 ? in->size[ki] : -in->size[ki];
    p[u] = su[i] * in->size[u];
    p[v] = sv[i] * in->size[v];
    SAPT(cl_toWorld)(buf[0][i], in, p);
  }
  // clip by the 4 side planes dot(x - cr, +-axis_j) <= size_j, j != kf
  for (int j = 0; j < 3; j++) {
    if (j == kf) continue;
    SAPT(cl_axis)(e, r, j);
    for (int sg = -1; sg <= 1 && nb > 0; sg += 2) {
      for (int k = 0; k < 3; k++) s[k] = sg * e[k];
      SAPT(cl_madd)(p, cr, s, r->size[j]);
      nb = SAPT(cl_clipPlane)(buf[cur], nb, s, p, buf[1 - cur]);
      cur = 1 - cur;
    }
  }
  // heights over the reference plane; witnesses on the plane and on the incident face
  int nc = 0, flip = SAPT(cl_dot)(nr, n) < 0;  // flip: the reference box is b
  for (int i = 0; i < nb; i++) {
    SAPT(cl_sub)(d, buf[cur][i], cr);
    R h = SAPT(cl_dot)(d, nr);
    if (h >= margin) continue;
    SAPT(cl_madd)(q, buf[cur][i], nr, -h);
    if (flip) SAPT(cl_setContact)(&tmp[nc], buf[cur][i], q, n);
    else SAPT(cl_setContact)(&tmp[nc], q, buf[cur][i], n);
    tmp[nc++].dist = h;  // the height itself (setContact's dot agrees to rounding)
  }
  nc = SAPT(cl_reduce)(tmp, nc);
  for (int i = 0; i < nc; i++) con[i] = tmp[i];
  return nc;
}

/* corners of the support edge of box x along unit dir, parallel to local axis k0; a
 * component of dir within CL_BOX_AMBIG of 0 makes the edge ambiguous: flip (0/1)
 * picks the other sign for the first such component. Returns 1 when ambiguous. */
SAP_HD int SAPT(cl_boxEdgeSeg)(const G* x, const R* dir, int k0, int flip, R* e0, R* e1) {
  R l[3], p[3];
  int amb = -1;
  SAPT(cl_toLocalDir)(l, x, dir);
  for (int k = 0; k < 3; k++) {
    p[k] = l[k] >= 0 ? x->size[k] : -x->size[k];
    if (k != k0 && amb < 0 && CL_FABS(l[k]) < (R)CL_BOX_AMBIG) amb = k;
  }
  if (amb >= 0 && flip) p[amb] = -p[amb];
  p[k0] = -x->size[k0];
  SAPT(cl_toWorld)(e0, x, p);
  p[k0] = x->size[k0];
  SAPT(cl_toWorld)(e1, x, p);
  return amb >= 0;
}

/* edge contact along unit L (a to b): closest points of a's support edge along L
 * (parallel to a's axis i) and b's along -L (b's axis j); on an ambiguous support
 * (L in a face plane within rounding) both candidate edges are tried and the closest
 * pair kept */
SAP_HD_BIG int SAPT(cl_boxEdge)(const G* a, const G* b, int i, int j, const R* L, R margin, C* con) {
  R a0[3], a1[3], b0[3], b1[3], nL[3], pa[3], pb[3], d[3], wa[3], wb[3], s, t, best = -1;
  SAPT(cl_neg)(nL, L);
  for (int fa = 0; fa < 2; fa++) {
    int amba = SAPT(cl_boxEdgeSeg)(a, L, i, fa, a0, a1);
    if (fa && !amba) break;
    for (int fb = 0; fb < 2; fb++) {
      int ambb = SAPT(cl_boxEdgeSeg)(b, nL, j, fb, b0, b1);
      if (fb && !ambb) break;
      SAPT(cl_segSeg)(a0, a1, b0, b1, &s, &t);
      SAPT(cl_sub)(d, a1, a0); SAPT(cl_madd)(pa, a0, d, s);
      SAPT(cl_sub)(d, b1, b0); SAPT(cl_madd)(pb, b0, d, t);
      R g = SAPT(cl_dist)(pa, pb);
      if (best < 0 || g < best) { best = g; SAPT(cl_copy)(wa, pa); SAPT(cl_copy)(wb, pb); }
    }
  }
  SAPT(cl_setContact)(con, wa, wb, L);
  return con->dist < margin;
}

/* box-box, as MuJoCo 4's mjc_BoxBox (SAT + clipping): the axis of largest separation
 * sep = |d.L| - r_a(L) - r_b(L) over a's faces, then b's (strictly larger wins, so
 * a's face on ties), then the edge crosses, which must beat the best face by a relative
 * CL_BOX_EDGE_BIAS. An edge axis within ~8 degrees of the best face axis (|cos| > 0.99)
 * and less than 5% shallower is replaced by that face (ODE's rule: a face manifold of
 * nearly the same depth is stable at rest, a single edge point flips by rounding).
 * Face axis: reference face clipping; edge axis: closest points of the support edges. */
SAP_HD_BIG int SAPT(cl_boxBox)(const G* a, const G* b, R margin, C* con) {
  R d[3], L[3], Lf[3], A[3][3], B[3][3], AA[3][3], BB[3][3], AB[3][3], dA[3], dB[3];
  R septol = margin + (R)CL_BOX_SEPEPS * (a->size[0] + a->size[1] + a->size[2] + b->size[0] + b->size[1] + b->size[2]);
  R best = -(R)1e30, bestface = -(R)1e30;
  const R *sa = a->size, *sb = b->size;
  int ibest = -1, iface = -1;
  SAPT(cl_sub)(d, b->pos, a->pos);
  /* the axes and their dot products once (cl_boxAxis / cl_boxRadius per axis computed the
   * same products in the same order: dot(x, y) and dot(y, x) round alike, so each table
   * entry is the value the per-axis code got, bit for bit) */
  for (int k = 0; k < 3; k++) {
    SAPT(cl_axis)(A[k], a, k);
    SAPT(cl_axis)(B[k], b, k);
  }
  for (int i = 0; i < 3; i++) {
    dA[i] = SAPT(cl_dot)(d, A[i]);
    dB[i] = SAPT(cl_dot)(d, B[i]);
    for (int k = 0; k <= i; k++) {
      AA[k][i] = AA[i][k] = SAPT(cl_dot)(A[k], A[i]);
      BB[k][i] = BB[i][k] = SAPT(cl_dot)(B[k], B[i]);
    }
    for (int j = 0; j < 3; j++) AB[i][j] = SAPT(cl_dot)(A[i], B[j]);
  }
  // face axes: a's 0-2, then b's 3-5 (strictly larger wins, so a's face on ties)
  for (int i = 0; i < 6; i++) {
    // sep = |d.L| - r_a(L) - r_b(L), r_g(L) = sum_k size_k |axis_k . L| (cl_boxRadius)
    R dl, ra, rb;
    if (i < 3) {
      dl = dA[i];
      ra = sa[0] * CL_FABS(AA[0][i]) + sa[1] * CL_FABS(AA[1][i]) + sa[2] * CL_FABS(AA[2][i]);
      rb = sb[0] * CL_FABS(AB[i][0]) + sb[1] * CL_FABS(AB[i][1]) + sb[2] * CL_FABS(AB[i][2]);
    } else {
      int j = i - 3;
      dl = dB[j];
      ra = sa[0] * CL_FABS(AB[0][j]) + sa[1] * CL_FABS(AB[1][j]) + sa[2] * CL_FABS(AB[2][j]);
      rb = sb[0] * CL_FABS(BB[0][j]) + sb[1] * CL_FABS(BB[1][j]) + sb[2] * CL_FABS(BB[2][j]);
    }
    R sep = CL_FABS(dl) - ra - rb;
    if (sep > septol) return 0;
    if (sep > best) {
      best = sep;
      ibest = i;
    }
  }
  bestface = best;
  iface = ibest;
  /* Skipping an edge axis exactly. An edge axis changes the result only when its sep > septol
   * (no contact) or sep > bestface (it may win); with thr = min(septol, bestface), an axis
   * whose computed sep is certainly <= thr is skipped without its normalisation and 7 dots.
   * For unit-orthogonal axes, c = a_i x b_j gives a_k . c = +-(a_m . b_j) and
   * b_k . c = +-(a_i . b_n) (m, n: the third indices), so sep |c| = S =
   * |d.c| - sa_k1 |AB[k2][j]| - sa_k2 |AB[k1][j]| - sb_n1 |AB[i][n2]| - sb_n2 |AB[i][n1]|.
   * Rounding (eps: this precision's): the full path's sep |c| is within 10 eps scale of
   * S_exact (the cross's error turned by 1/|c|, the dots' and sums'); the table's S within
   * 44 eps scale of it when each box's Gram matrix G is within 8 eps of I (checked below:
   * a_k x a_i = +-det(A) A G^-1 e_m, 4.5 x 8 eps per term, plus the tables' rounding); l
   * within 3 eps of |c|: under 60 eps (scale + |thr|) in all, and CL_BOX_SKIP_EPS = 128 is
   * twice that; scale = |d|_1 + both boxes' half sizes. A NaN or an overflow anywhere fails
   * the test and the axis goes the full way. */
  R scale = CL_FABS(d[0]) + CL_FABS(d[1]) + CL_FABS(d[2]) + sa[0] + sa[1] + sa[2] + sb[0] + sb[1] + sb[2];
  int ortho = 1;
  for (int i = 0; i < 3; i++)
    for (int k = 0; k < 3; k++)
      ortho = ortho && CL_FABS(AA[i][k] - (i == k)) <= (R)8 * CL_EPS && CL_FABS(BB[i][k] - (i == k)) <= (R)8 * CL_EPS;
  R thr = septol < bestface ? septol : bestface;
  R slack = (R)CL_BOX_SKIP_EPS * CL_EPS * (scale + CL_FABS(thr));
  // finite scales and a threshold that is a number, else every axis in full
  ortho = ortho && scale < (R)1e30 && CL_FABS(thr) < (R)1e30 && slack < (R)1e30;
  // edge axes 6 + 3 ia + jb: a_ia x b_jb, which must beat the best face by CL_BOX_EDGE_BIAS
  for (int ia = 0; ia < 3; ia++) {
    int a1 = ia == 2 ? 0 : ia + 1, a2 = ia == 0 ? 2 : ia - 1;
    for (int jb = 0; jb < 3; jb++) {
      int b1 = jb == 2 ? 0 : jb + 1, b2 = jb == 0 ? 2 : jb - 1;
      SAPT(cl_cross)(L, A[ia], B[jb]);
      R l = SAPT(cl_norm)(L);  // cl_normalize's length and cl_boxAxis's test
      if (!(l >= (R)CL_BOX_PARALLEL)) continue;
      /* the exact skip (above): S ~ sep l from the tables; an axis whose sep is certainly
       * at most thr neither separates nor wins */
      if (ortho) {
        R S = CL_FABS(SAPT(cl_dot)(d, L)) - sa[a1] * CL_FABS(AB[a2][jb]) - sa[a2] * CL_FABS(AB[a1][jb]) -
              sb[b1] * CL_FABS(AB[ia][b2]) - sb[b2] * CL_FABS(AB[ia][b1]);
        if (S + slack <= thr * l) continue;
      }
      if (l > CL_TINY) { L[0] /= l; L[1] /= l; L[2] /= l; }  // cl_normalize's division
      R dl = SAPT(cl_dot)(d, L);
      R ra = sa[0] * CL_FABS(SAPT(cl_dot)(A[0], L)) + sa[1] * CL_FABS(SAPT(cl_dot)(A[1], L)) +
             sa[2] * CL_FABS(SAPT(cl_dot)(A[2], L));
      R rb = sb[0] * CL_FABS(SAPT(cl_dot)(B[0], L)) + sb[1] * CL_FABS(SAPT(cl_dot)(B[1], L)) +
             sb[2] * CL_FABS(SAPT(cl_dot)(B[2], L));
      R sep = CL_FABS(dl) - ra - rb;
      if (sep > septol) return 0;
      if (sep - (R)CL_BOX_EDGE_BIAS * CL_FABS(sep) > best && sep > bestface) {
        best = sep;
        ibest = 6 + 3 * ia + jb;
      }
    }
  }
  /* no axis compared (a separation that is not a number: a size or pose that overflows the
   * precision, e.g. a 1e89 m box in fp32): no contact rather than an axis index of -1 */
  if (ibest < 0) return 0;
  if (ibest >= 6 && iface >= 0) {  // an edge close to the best face's normal gives way to the face
    SAPT(cl_boxAxis)(a, b, ibest, L);
    SAPT(cl_boxAxis)(a, b, iface, Lf);
    if (CL_FABS(SAPT(cl_dot)(L, Lf)) > (R)0.99 && best < bestface + (R)0.05 * CL_FABS(bestface) + CL_TINY) ibest = iface;
  }
  // unit normal from a to b along the winning axis
  SAPT(cl_boxAxis)(a, b, ibest, L);
  if (SAPT(cl_dot)(d, L) < 0) SAPT(cl_neg)(L, L);
  if (ibest >= 6) return SAPT(cl_boxEdge)(a, b, (ibest - 6) / 3, (ibest - 6) % 3, L, margin, con);
  if (ibest < 3) return SAPT(cl_boxFace)(a, b, L, L, margin, con);
  R nr[3];
  SAPT(cl_neg)(nr, L);
  return SAPT(cl_boxFace)(b, a, nr, L, margin, con);
}

/* ---- heightfield (MuJoCo 4's mjc_ConvexHField, mujoco_semantics.md section 9) ------------ */

/* grid index of local coordinate t in [-s, s] over n samples, rounded down (up = 0) or
 * up (up = 1), clamped to [0, n - 1] */
SAP_HD int SAPT(cl_hfIndex)(R t, R s, int n, int up) {
  R u = (t + s) / (2 * s) * (R)(n - 1);
  if (!(u > 0)) return 0;  // also NaN
  if (u >= (R)(n - 1)) return n - 1;
  int i = (int)u;  // u >= 0: truncation = floor
  return (up && (R)i < u) ? i + 1 : i;
}

/* prism over the grid triangle (x[i], y[i], z[i]) (heightfield frame) down to the base
 * -zb, as a 6-vertex polytope pr (type mesh, vertices v) with h's rotation, centred on
 * the vertices' mean: MPR starts from the centre, which must lie inside */
SAP_HD void SAPT(cl_hfPrism)(const G* h, const R* x, const R* y, const R* z, R zb, G* pr, double* v) {
  R c[3] = {(x[0] + x[1] + x[2]) / 3, (y[0] + y[1] + y[2]) / 3, ((z[0] + z[1] + z[2]) / 3 - zb) / 2};
  // base vertices first, then the top ones, in MuJoCo's order (support ties pick the first)
  for (int i = 0; i < 3; i++) {
    v[3 * i] = v[3 * i + 9] = (double)(x[i] - c[0]);
    v[3 * i + 1] = v[3 * i + 10] = (double)(y[i] - c[1]);
    v[3 * i + 2] = (double)(-zb - c[2]);
    v[3 * i + 11] = (double)(z[i] - c[2]);
  }
  *pr = *h;
  pr->type = SAP_GEOM_MESH;
  pr->vert = v;
  pr->nvert = 6;
  pr->nbradr = pr->nbr = pr->start = 0;
  pr->hint = 0;
  pr->hdata = 0;
  SAPT(cl_toWorld)(pr->pos, h, c);
}

/* closest point q to p on triangle (a, b, c) */
SAP_HD void SAPT(cl_closestOnTri)(R* q, const R* a, const R* b, const R* c, const R* p) {
  R u[3], v[3], t[3], w[3];
  SAPT(cl_sub)(u, a, p); SAPT(cl_sub)(v, b, p); SAPT(cl_sub)(t, c, p);
  SAPT(cl_triClosest)(u, v, t, w);
  for (int k = 0; k < 3; k++) q[k] = w[0] * a[k] + w[1] * b[k] + w[2] * c[k];
}

/* closest points of segment [p0, p1] (a point when equal) and triangle (a, b, c) that
 * the segment does not cross: end points against the triangle, segment against its
 * edges; returns the squared distance, witnesses qs (segment) and qt (triangle) */
SAP_HD R SAPT(cl_segTri)(const R* p0, const R* p1, const R* a, const R* b, const R* c, R* qs, R* qt) {
  const R* tv[3] = {a, b, c};
  R q[3], x[3], d[3], best = (R)1e30, s, t;
  SAPT(cl_copy)(qs, p0);
  SAPT(cl_copy)(qt, a);
  for (int i = 0; i < 2; i++) {
    const R* e = i ? p1 : p0;
    SAPT(cl_closestOnTri)(q, a, b, c, e);
    SAPT(cl_sub)(d, q, e);
    R dd = SAPT(cl_dot)(d, d);
    if (dd < best) { best = dd; SAPT(cl_copy)(qs, e); SAPT(cl_copy)(qt, q); }
  }
  for (int i = 0; i < 3; i++) {
    const R* e0 = tv[i];
    const R* e1 = tv[(i + 1) % 3];
    SAPT(cl_segSeg)(p0, p1, e0, e1, &s, &t);
    SAPT(cl_sub)(d, p1, p0); SAPT(cl_madd)(x, p0, d, s);
    SAPT(cl_sub)(d, e1, e0); SAPT(cl_madd)(q, e0, d, t);
    SAPT(cl_sub)(d, q, x);
    R dd = SAPT(cl_dot)(d, d);
    if (dd < best) { best = dd; SAPT(cl_copy)(qs, x); SAPT(cl_copy)(qt, q); }
  }
  return best;
}

/* grid vertices (row, column) of top triangle t of cell (r, c): triangle 0 is (c, r+1),
 * (c, r), (c+1, r+1); triangle 1 is (c, r), (c+1, r+1), (c+1, r) */
SAP_HD void SAPT(cl_hfTriIds)(int r, int c, int t, int* vr, int* vc) {
  const int dc[2][3] = {{0, 0, 1}, {0, 1, 1}}, dr[2][3] = {{1, 0, 1}, {0, 1, 0}};
  for (int i = 0; i < 3; i++) { vr[i] = r + dr[t][i]; vc[i] = c + dc[t][i]; }
}

/* grid vertex (row vr, column vc) of heightfield h in world coordinates */
SAP_HD void SAPT(cl_hfVertex)(const G* h, int vr, int vc, R* out) {
  R l[3] = {2 * h->hsize[0] * (R)vc / (R)(h->ncol - 1) - h->hsize[0],
            2 * h->hsize[1] * (R)vr / (R)(h->nrow - 1) - h->hsize[1], (R)h->hdata[vr * h->ncol + vc] * h->hsize[2]};
  SAPT(cl_toWorld)(out, h, l);
}

/* Ownership of a prism's exact contact (witness x on the prism, core [p0, p1] at
 * distance gap): the heightfield's surface is the continuous sheet of the top triangles,
 * so the side walls between prisms and the creases between coplanar triangles are not
 * there. Interior points of the top triangle are owned; an edge or vertex point is owned
 * unless a triangle sharing that edge or vertex is closer to the core (then that
 * triangle's contact stands and this one, tilted by a crease that is not there, goes);
 * a point on a wall is owned only on the grid's border, and on the base. */
SAP_HD_BIG int SAPT(cl_hfOwns)(const G* h, int r, int c, int t, const R* x, const R* p0, const R* p1, R gap) {
  R d[3], l[3], V[3][3], qs[3], qt[3];
  int vr[3], vc[3], wr[3], wc[3];
  R btol = sizeof(R) == 4 ? (R)1e-4 : (R)1e-9, gtol = gap * (sizeof(R) == 4 ? (R)1e-4 : (R)1e-9);
  SAPT(cl_sub)(d, x, h->pos);
  SAPT(cl_toLocalDir)(l, h, d);
  SAPT(cl_hfTriIds)(r, c, t, vr, vc);
  // barycentric coordinates of x over the triangle (heightfield xy), the top's height there
  R hx[3], hy[3], hz[3];
  for (int i = 0; i < 3; i++) {
    hx[i] = 2 * h->hsize[0] * (R)vc[i] / (R)(h->ncol - 1) - h->hsize[0];
    hy[i] = 2 * h->hsize[1] * (R)vr[i] / (R)(h->nrow - 1) - h->hsize[1];
    hz[i] = (R)h->hdata[vr[i] * h->ncol + vc[i]] * h->hsize[2];
  }
  R bx = hx[1] - hx[0], by = hy[1] - hy[0], cx = hx[2] - hx[0], cy = hy[2] - hy[0];
  R px = l[0] - hx[0], py = l[1] - hy[0], det = bx * cy - by * cx;
  R w[3];
  w[1] = (px * cy - py * cx) / det;
  w[2] = (bx * py - by * px) / det;
  w[0] = 1 - w[1] - w[2];
  R ztop = w[0] * hz[0] + w[1] * hz[1] + w[2] * hz[2], zs = h->hsize[2] + h->hsize[3];
  if (l[2] < ztop - btol * zs) {  // on a wall or the base
    int border = CL_FABS(l[0]) >= h->hsize[0] * (1 - btol) || CL_FABS(l[1]) >= h->hsize[1] * (1 - btol);
    return border || l[2] <= -h->hsize[3] + btol * zs;
  }
  int on[3], non = 0;
  for (int i = 0; i < 3; i++) { on[i] = w[i] > btol; non += on[i]; }
  if (non == 3) return 1;
  // triangles sharing the feature (the vertices with weight): any strictly closer?
  for (int rr = r - 1; rr <= r + 1; rr++)
    for (int cc = c - 1; cc <= c + 1; cc++)
      for (int tt = 0; tt < 2; tt++) {
        if ((rr == r && cc == c && tt == t) || rr < 0 || cc < 0 || rr >= h->nrow - 1 || cc >= h->ncol - 1) continue;
        SAPT(cl_hfTriIds)(rr, cc, tt, wr, wc);
        int shares = 1;
        for (int i = 0; i < 3 && shares; i++) {
          if (!on[i]) continue;
          int found = 0;
          for (int j = 0; j < 3; j++) found |= wr[j] == vr[i] && wc[j] == vc[i];
          shares = found;
        }
        if (!shares) continue;
        for (int j = 0; j < 3; j++) SAPT(cl_hfVertex)(h, wr[j], wc[j], V[j]);
        R dd = SAPT(cl_segTri)(p0, p1, V[0], V[1], V[2], qs, qt);
        if (CL_SQRT(dd) < gap - gtol) return 0;
      }
  return 1;
}

/* sphere or capsule b against prism pr, exactly while its core (point or segment) stays
 * outside the prism: the closest points of the core and the prism's 8 boundary
 * triangles, dist = |gap| - radius, normal from the prism to the core. (A sphere over a
 * heightfield sampled from a plane then gets the plane's distance and normal, which
 * MPR, stopping at a portal within tolerance or along an oblique direction on a
 * partly covered prism, does not.) Returns 1 with the contact, 0 for none within the
 * margin, -1 when the core enters the prism (the caller runs MPR, as MuJoCo) */
SAP_HD_BIG int SAPT(cl_hfRound)(const G* h, int r, int col, int t, const G* pr, const G* b, R margin, C* c) {
  const int tri[8][3] = {{3, 4, 5}, {0, 2, 1}, {0, 1, 4}, {0, 4, 3}, {1, 2, 5}, {1, 5, 4}, {2, 0, 3}, {2, 3, 5}};
  R P[6][3], l[3], p0[3], p1[3], d[3], nf[3], e1[3], e2[3], qs[3], qt[3], bs[3], bt[3];
  for (int i = 0; i < 6; i++) {
    for (int k = 0; k < 3; k++) l[k] = (R)pr->vert[3 * i + k];
    SAPT(cl_toWorld)(P[i], pr, l);
  }
  if (b->type == SAP_GEOM_CAPSULE) SAPT(cl_segment)(b, p0, p1);
  else { SAPT(cl_copy)(p0, b->pos); SAPT(cl_copy)(p1, b->pos); }
  // clip the core by the 5 face planes (Cyrus-Beck): anything left is inside
  const int face[5] = {0, 1, 2, 4, 6};  // one triangle of each face
  R tlo = 0, thi = 1;
  SAPT(cl_sub)(d, p1, p0);
  for (int f = 0; f < 5 && tlo <= thi; f++) {
    const int* v = tri[face[f]];
    SAPT(cl_sub)(e1, P[v[1]], P[v[0]]);
    SAPT(cl_sub)(e2, P[v[2]], P[v[0]]);
    SAPT(cl_cross)(nf, e1, e2);
    SAPT(cl_sub)(e1, pr->pos, P[v[0]]);  // outward: away from the centre (windings vary)
    if (SAPT(cl_dot)(nf, e1) > 0) SAPT(cl_neg)(nf, nf);
    SAPT(cl_sub)(e1, p0, P[v[0]]);
    R num = SAPT(cl_dot)(nf, e1), den = SAPT(cl_dot)(nf, d);
    if (CL_FABS(den) <= CL_TINY) { if (num > 0) thi = -1; continue; }
    R t = -num / den;
    if (den > 0) thi = t < thi ? t : thi;
    else tlo = t > tlo ? t : tlo;
  }
  if (tlo <= thi) return -1;
  R best = (R)1e30;
  SAPT(cl_copy)(bs, p0);
  SAPT(cl_copy)(bt, P[0]);
  for (int i = 0; i < 8; i++) {
    R dd = SAPT(cl_segTri)(p0, p1, P[tri[i][0]], P[tri[i][1]], P[tri[i][2]], qs, qt);
    if (dd < best) { best = dd; SAPT(cl_copy)(bs, qs); SAPT(cl_copy)(bt, qt); }
  }
  R rb = b->size[0], gap = CL_SQRT(best);
  if (gap - rb >= margin || gap <= CL_TINY) return gap <= CL_TINY ? -1 : 0;
  SAPT(cl_sub)(c->n, bs, bt);
  SAPT(cl_normalize)(c->n);
  c->dist = gap - rb;
  for (int k = 0; k < 3; k++) c->pos[k] = (R)0.5 * (bt[k] + bs[k] - rb * c->n[k]);
  return SAPT(cl_hfOwns)(h, r, col, t, bt, p0, p1, gap) ? 1 : 0;
}

/* keep contact c in a list of n (capacity cap): appended while there is room, else
 * it replaces the shallowest when deeper (MuJoCo stops at its 50th instead) */
SAP_HD int SAPT(cl_keepDeepest)(C* con, int n, int cap, const C* c) {
  if (n < cap) { con[n] = *c; return n + 1; }
  int worst = 0;
  for (int i = 1; i < n; i++) if (con[i].dist > con[worst].dist) worst = i;
  if (c->dist < con[worst].dist) con[worst] = *c;
  return n;
}

/* heightfield h (local z up) vs convex b: the union of triangular prisms, one per
 * half cell (split along the (c, r)-(c+1, r+1) diagonal) from its top heights down to
 * the base -size[3]. b's bounding box in h's frame selects the sub-grid; prisms whose
 * three tops lie below b's lowest point (less the margin) are skipped; each other
 * prism gives at most one contact: spheres and capsules whose core stays outside the
 * prism by exact closest points (cl_hfRound; sapsim's deviation from MuJoCo), else MPR
 * on the prism and b inflated by margin/2 each (dist = margin - depth) with b's curved
 * normal fixed, as MuJoCo with mjDSBL_NATIVECCD; at most SAPC_HFIELD_MAXCON
 * per pair (the deepest). Planes and heightfields give none (as MuJoCo 4). The
 * sub-grid bounds use the box grown by the margin, so speculative contacts beside b
 * are found too (MuJoCo's box is not grown: the same contacts at margin 0). */
SAP_HD_BIG int SAPT(cl_hfield)(const G* h, const G* b, R margin, C* con) {
  if (b->type == SAP_GEOM_PLANE || b->type == SAP_GEOM_HFIELD || !h->hdata || h->nrow < 2 || h->ncol < 2)
    return 0;
  const R* s = h->hsize;
  R lo[3], hi[3], ax[3], p[3], d[3], x[3], y[3], z[3];
  R rb = SAPT(cl_coreRadius)(b);
  // b's bounding box in h's frame: support points along -+ each local axis
  for (int k = 0; k < 3; k++) {
    SAPT(cl_axis)(ax, h, k);
    SAPT(cl_support)(p, b, ax);
    SAPT(cl_sub)(d, p, h->pos);
    hi[k] = SAPT(cl_dot)(d, ax) + rb;
    SAPT(cl_neg)(ax, ax);
    SAPT(cl_support)(p, b, ax);
    SAPT(cl_sub)(d, p, h->pos);
    lo[k] = -SAPT(cl_dot)(d, ax) - rb;
  }
  if (lo[0] - margin > s[0] || hi[0] + margin < -s[0] || lo[1] - margin > s[1] || hi[1] + margin < -s[1] ||
      lo[2] - margin > s[2] || hi[2] + margin < -s[3])
    return 0;
  int nrow = h->nrow, ncol = h->ncol;
  int c0 = SAPT(cl_hfIndex)(lo[0] - margin, s[0], ncol, 0), c1 = SAPT(cl_hfIndex)(hi[0] + margin, s[0], ncol, 1);
  int r0 = SAPT(cl_hfIndex)(lo[1] - margin, s[1], nrow, 0), r1 = SAPT(cl_hfIndex)(hi[1] + margin, s[1], nrow, 1);
  R dx = 2 * s[0] / (R)(ncol - 1), dy = 2 * s[1] / (R)(nrow - 1);
  R ra = margin / 2, rbi = rb + margin / 2;
  int n = 0;
  for (int r = r0; r < r1; r++)
    for (int c = c0; c < c1; c++)
      for (int t = 0; t < 2; t++) {
        // triangle 0: (c, r+1), (c, r), (c+1, r+1); triangle 1: (c, r), (c+1, r+1), (c+1, r)
        const int dc[2][3] = {{0, 0, 1}, {0, 1, 1}}, dr[2][3] = {{1, 0, 1}, {0, 1, 0}};
        int above = 0;
        for (int i = 0; i < 3; i++) {
          int cc = c + dc[t][i], rr = r + dr[t][i];
          x[i] = dx * (R)cc - s[0];
          y[i] = dy * (R)rr - s[1];
          z[i] = (R)h->hdata[rr * ncol + cc] * s[2];
          above |= z[i] + margin >= lo[2];
        }
        if (!above) continue;
        G pr;
        double v[18];
        C cn;
        R depth;
        SAPT(cl_hfPrism)(h, x, y, z, s[3], &pr, v);
        if (b->type == SAP_GEOM_SPHERE || b->type == SAP_GEOM_CAPSULE) {
          int k = SAPT(cl_hfRound)(h, r, c, t, &pr, b, margin, &cn);
          if (k > 0) n = SAPT(cl_keepDeepest)(con, n, SAPC_HFIELD_MAXCON, &cn);
          if (k >= 0) continue;
        }
        // ellipsoids and cylinders: EPA's minimum penetration per prism (as the convex
        // pairs; MPR's normal fixed on the curved surface is not a direction along which
        // the prism and b separate by the depth); boxes and meshes: MPR, as MuJoCo
        int curved = b->type == SAP_GEOM_ELLIPSOID || b->type == SAP_GEOM_CYLINDER;
        if (!SAPT(cl_mpr)(&pr, ra, b, rbi, curved, cn.n, &depth, cn.pos)) continue;
        cn.dist = margin - depth;
        if (!(cn.dist < margin)) continue;
        if (!curved) SAPT(cl_fixNormal)(&pr, b, &cn);
        n = SAPT(cl_keepDeepest)(con, n, SAPC_HFIELD_MAXCON, &cn);
      }
  return n;
}

/* ---- dispatch ----------------------------------------------------------------------- */

/* contacts of geoms a, b with type(a) <= type(b); returns the count (<= SAPC_MAXCON,
 * heightfields <= SAPC_HFIELD_MAXCON), each with dist < margin */
SAP_HD_BIG int SAPT(sapc_collide)(const G* a, const G* b, R margin, C* con) {
  int ta = a->type, tb = b->type;
  if (ta == SAP_GEOM_PLANE) {
    if (tb == SAP_GEOM_SPHERE || tb == SAP_GEOM_CAPSULE || tb == SAP_GEOM_ELLIPSOID)
      return SAPT(cl_planeRound)(a, b, margin, con);
    if (tb == SAP_GEOM_CYLINDER) return SAPT(cl_planeCylinder)(a, b, margin, con);
    if (tb == SAP_GEOM_BOX || tb == SAP_GEOM_MESH) return SAPT(cl_planePoly)(a, b, margin, con);
    return 0;
  }
  if (ta == SAP_GEOM_HFIELD) return SAPT(cl_hfield)(a, b, margin, con);
  if (ta == SAP_GEOM_SPHERE) {
    if (tb == SAP_GEOM_SPHERE) return SAPT(cl_spheres)(a->pos, a->size[0], b->pos, b->size[0], margin, con);
    if (tb == SAP_GEOM_CAPSULE) return SAPT(cl_sphereCapsule)(a, b, margin, con);
    if (tb == SAP_GEOM_CYLINDER) return SAPT(cl_sphereCylinder)(a, b, margin, con);
    if (tb == SAP_GEOM_BOX) return SAPT(cl_sphereBox)(a, b, margin, con);
  }
  if (ta == SAP_GEOM_CAPSULE) {
    if (tb == SAP_GEOM_CAPSULE) return SAPT(cl_capsuleCapsule)(a, b, margin, con);
    if (tb == SAP_GEOM_BOX) return SAPT(cl_capsuleBox)(a, b, margin, con);
  }
  if (ta == SAP_GEOM_BOX && tb == SAP_GEOM_BOX) return SAPT(cl_boxBox)(a, b, margin, con);
  return SAPT(cl_convex)(a, b, margin, con);
}

/* geom g of one world, converted to this precision */
SAP_HD void SAPT(sapc_loadGeom)(const sapModel* m, const double* xpos, const double* xmat, int g, G* out) {
  out->type = m->geom_type[g];
  for (int k = 0; k < 3; k++) {
    out->pos[k] = (R)xpos[3 * g + k];
    out->size[k] = (R)m->geom_size[3 * g + k];
  }
  for (int k = 0; k < 9; k++) out->mat[k] = (R)xmat[9 * g + k];
  out->vert = 0;
  out->nvert = 0;
  out->nbradr = out->nbr = out->start = 0;
  out->hint = 0;
  out->hdata = 0;
  out->nrow = out->ncol = 0;
  for (int k = 0; k < 4; k++) out->hsize[k] = 0;
  int id = m->geom_dataid ? m->geom_dataid[g] : -1;
  if (out->type == SAP_GEOM_MESH && id >= 0) {
    int adr = m->mesh_hulladr[id];
    out->vert = m->mesh_hullvert + 3 * adr;
    out->nvert = m->mesh_hullnum[id];
    if (out->nvert > 0 && m->mesh_hullnbradr[adr] >= 0) {
      out->nbradr = m->mesh_hullnbradr + adr;
      out->nbr = m->mesh_hullnbr;
      out->start = m->mesh_hullstart + 6 * id;
    }
  }
  if (out->type == SAP_GEOM_HFIELD && id >= 0 && id < m->nhfield) {
    out->hdata = m->hfield_data + m->hfield_adr[id];
    out->nrow = m->hfield_nrow[id];
    out->ncol = m->hfield_ncol[id];
    for (int k = 0; k < 4; k++) out->hsize[k] = (R)m->hfield_size[4 * id + k];
  }
}

#undef R
#undef G
#undef C
