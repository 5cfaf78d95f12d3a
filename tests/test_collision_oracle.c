/* Size-ratio collision oracle (issue 14): every analytic and MPR pair of sphere,
 * capsule, ellipsoid, cylinder, box and mesh, against each other and the plane, with
 * half sizes log-uniform over 1 cm - 1 m, thin plates and coins (one half size 100x
 * smaller), long rods (length 100x radius), flat and elongated ellipsoids and meshes,
 * random orientations, from 60% of the thinner geom's half thickness deep to beyond the
 * margin. Reference 1: MuJoCo 4.0's mjCOLLISIONFUNC (native CCD, and libccd MPR with
 * mjDSBL_NATIVECCD). Reference 2, written here from the geometry definitions (not from
 * kernels/collision_t.h): support functions h_X(n) = max_{x in X} x.n and the signed
 * distance dist = -min_{|n|=1} f(n), f(n) = h_A(n) + h_B(-n) (minus the penetration depth
 * when they overlap, the separation when apart; argmin = normal a to b), by a Fibonacci
 * direction grid plus seeds and a random-direction pattern search on the sphere.
 * SAPSIM_ORACLE_POSES sets the poses per pair (default 1000; make oracle-long: 10000). */
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "collision_ref.h"
#include "sapsim/sapsim.h"
#include "sim.h"
#include "../kernels/collision.h"

static const char* TYPE_NAME[8] = {"plane", "hfield", "sphere", "capsule", "ellipsoid", "cylinder", "box", "mesh"};

/* three convex meshes: round hull, flat plate (thickness 1/15 of its width), long rod
 * (length 12x its width); uniformly scaled per pose */
#define NMESH 3
static const char* MESH_VERT[NMESH] = {
    "0.15 0 0  -0.15 0 0  0 0.12 0  0 -0.12 0  0 0 0.1  0 0 -0.1  0.07 0.06 0.05  0.07 0.06 -0.05  0.07 -0.06 0.05"
    "  0.07 -0.06 -0.05  -0.07 0.06 0.05  -0.07 0.06 -0.05  -0.07 -0.06 0.05  -0.07 -0.06 -0.05",
    "0.15 0 0.01  0.1 0.11 0.01  -0.02 0.14 0.01  -0.13 0.06 0.01  -0.14 -0.05 0.01  -0.03 -0.15 0.01  0.09 -0.1 0.01"
    "  0.15 0 -0.01  0.1 0.11 -0.01  -0.02 0.14 -0.01  -0.13 0.06 -0.01  -0.14 -0.05 -0.01  -0.03 -0.15 -0.01"
    "  0.09 -0.1 -0.01",
    "0.25 0 0  -0.25 0 0  0.2 0.02 0  0.2 -0.01 0.017  0.2 -0.01 -0.017  -0.2 0.02 0  -0.2 -0.01 0.017"
    "  -0.2 -0.01 -0.017  0.22 0 0.015  -0.22 0 -0.015"};

/* ---- the pair scene: geom 0 (type t0, plane in the world) and geom 1 on free bodies ---- */

typedef struct Pair {
  mjModel* mj;
  mjData* md;
  sapModel* sm;
  int t0, t1;
  float* vert0;    /* MuJoCo's mesh vertices as compiled (unscaled) */
  double* svert;   /* the scaled vertices handed to sapsim (MuJoCo's floats, exactly) */
  double mscale[2];
} Pair;

static const char* geomXml(int t) {
  switch (t) {
    case SAP_GEOM_PLANE: return "type=\"plane\" size=\"0 0 1\"";
    case SAP_GEOM_SPHERE: return "type=\"sphere\" size=\"0.1\"";
    case SAP_GEOM_CAPSULE: return "type=\"capsule\" size=\"0.1 0.1\"";
    case SAP_GEOM_ELLIPSOID: return "type=\"ellipsoid\" size=\"0.1 0.1 0.1\"";
    case SAP_GEOM_CYLINDER: return "type=\"cylinder\" size=\"0.1 0.1\"";
    case SAP_GEOM_BOX: return "type=\"box\" size=\"0.1 0.1 0.1\"";
    default: return "type=\"mesh\" mesh=\"m00\"";
  }
}

static int pairOpen(Pair* p, int t0, int t1) {
  char xml[8192], path[128], b[2][512];
  int ty[2] = {t0, t1};
  for (int i = 0; i < 2; i++) {
    if (ty[i] == SAP_GEOM_PLANE) snprintf(b[i], sizeof(b[i]), "<geom name=\"g%d\" %s/>", i, geomXml(ty[i]));
    else snprintf(b[i], sizeof(b[i]), "<body name=\"b%d\"><freejoint/><geom name=\"g%d\" %s/></body>", i, i, geomXml(ty[i]));
  }
  // mesh assets m<g><k>: each geom its own copy of the three shapes (scaled separately)
  char asset[4096] = "<asset>";
  for (int g = 0; g < 2; g++)
    for (int k = 0; k < NMESH; k++) {
      char one[1024];
      snprintf(one, sizeof(one), "<mesh name=\"m%d%d\" vertex=\"%s\"/>", g, k, MESH_VERT[k]);
      strcat(asset, one);
    }
  strcat(asset, "</asset>");
  snprintf(xml, sizeof(xml), "<mujoco>%s<worldbody>%s%s</worldbody></mujoco>", asset, b[0], b[1]);
  snprintf(path, sizeof(path), "/tmp/sapsim_test_collision_oracle_%d.xml", (int)getpid());
  FILE* f = fopen(path, "w");
  if (!f) return 0;
  fputs(xml, f);
  fclose(f);
  char err[1000] = "";
  memset(p, 0, sizeof(*p));
  p->t0 = t0;
  p->t1 = t1;
  p->mj = mj_loadXML(path, NULL, err, sizeof(err));
  int ok = p->mj && sap_loadModel(path, &p->sm) == SAP_OK;
  remove(path);
  if (!ok) { fprintf(stderr, "  load: %s %s\n", err, sap_lastError()); return 0; }
  p->md = mj_makeData(p->mj);
  int nv = p->mj->nmeshvert;
  p->vert0 = malloc(sizeof(float) * 3 * nv);
  memcpy(p->vert0, p->mj->mesh_vert, sizeof(float) * 3 * nv);
  p->svert = malloc(sizeof(double) * 3 * nv);
  return 1;
}

static void pairClose(Pair* p) {
  mj_deleteData(p->md);
  mj_deleteModel(p->mj);
  sap_freeModel(p->sm);
  free(p->vert0);
  free(p->svert);
}

static double logSize(double lo, double hi) { return pow(10, check_uniform(lo, hi)); }

static void randomUnit(double* u, int dim) {
  double n = 0;
  do {
    n = 0;
    for (int k = 0; k < dim; k++) { u[k] = check_uniform(-1, 1); n += u[k] * u[k]; }
  } while (n > 1 || n < 1e-6);
  for (int k = 0; k < dim; k++) u[k] /= sqrt(n);
}

/* half extents of mesh id as compiled (unscaled) */
static void meshBaseExtent(const Pair* p, int id, double* ext) {
  const mjModel* m = p->mj;
  ext[0] = ext[1] = ext[2] = 0;
  for (int i = 0; i < m->mesh_vertnum[id]; i++)
    for (int k = 0; k < 3; k++) ext[k] = fmax(ext[k], fabs(p->vert0[3 * (m->mesh_vertadr[id] + i) + k]));
}

/* random size family of geom g (type t): half sizes log-uniform over 1 cm - 1 m, with
 * thin plates / coins / rods / flat and long ellipsoids and meshes; sets MuJoCo's sizes
 * (and mesh vertices) and returns the half thickness (smallest half extent) and the
 * bounding radius */
static void randomGeom(Pair* p, int g, int t, double* thick, double* rbound) {
  mjModel* m = p->mj;
  double* s = m->geom_size + 3 * g;
  int fam = (int)check_uniform(0, 3);
  switch (t) {
    case SAP_GEOM_SPHERE:
      s[0] = logSize(-2, 0);
      *thick = *rbound = s[0];
      break;
    case SAP_GEOM_CAPSULE:
      if (fam == 0) { s[0] = logSize(-2, -1.3); s[1] = 50 * s[0]; }  // rod: length 100 r
      else { s[0] = logSize(-2, 0); s[1] = logSize(-2, 0); }
      *thick = s[0];
      *rbound = s[0] + s[1];
      break;
    case SAP_GEOM_CYLINDER:
      if (fam == 0) { s[0] = logSize(-2, -1.3); s[1] = 50 * s[0]; }        // rod
      else if (fam == 1) { s[0] = logSize(-0.5, 0); s[1] = s[0] / 100; }  // coin
      else { s[0] = logSize(-2, 0); s[1] = logSize(-2, 0); }
      *thick = fmin(s[0], s[1]);
      *rbound = sqrt(s[0] * s[0] + s[1] * s[1]);
      break;
    case SAP_GEOM_ELLIPSOID:
    case SAP_GEOM_BOX:
      for (int k = 0; k < 3; k++) s[k] = logSize(-2, 0);
      if (fam == 0) { int k = (int)check_uniform(0, 3); s[k] = fmax(s[(k + 1) % 3], s[(k + 2) % 3]) / 100; }  // plate / flat
      if (fam == 1 && t == SAP_GEOM_ELLIPSOID) { int k = (int)check_uniform(0, 3); s[k] = fmax(0.3, s[k]); s[(k + 1) % 3] = s[(k + 2) % 3] = s[k] / 50; }  // needle
      *thick = fmin(fmin(s[0], s[1]), s[2]);
      *rbound = sqrt(s[0] * s[0] + s[1] * s[1] + s[2] * s[2]);
      break;
    default: {  // mesh: one of the three, uniformly scaled to a largest half extent of 1 cm - 1 m
      int id = NMESH * g + fam;
      double ext[3];
      m->geom_dataid[g] = id;
      meshBaseExtent(p, id, ext);
      double big = fmax(fmax(ext[0], ext[1]), ext[2]), sc = logSize(-2, 0) / big;
      p->mscale[g] = sc;
      int a = m->mesh_vertadr[id], nv = m->mesh_vertnum[id];
      double r = 0;
      for (int i = 3 * a; i < 3 * (a + nv); i++) {
        m->mesh_vert[i] = (float)(p->vert0[i] * sc);
        p->svert[i] = m->mesh_vert[i];
      }
      for (int i = a; i < a + nv; i++) r = fmax(r, sqrt(p->svert[3 * i] * p->svert[3 * i] + p->svert[3 * i + 1] * p->svert[3 * i + 1] + p->svert[3 * i + 2] * p->svert[3 * i + 2]));
      *thick = fmin(fmin(ext[0], ext[1]), ext[2]) * sc;
      *rbound = r;
      for (int k = 0; k < 3; k++) s[k] = ext[k] * sc;
    }
  }
  m->geom_rbound[g] = *rbound;
  for (int k = 0; k < 3; k++) m->geom_aabb[6 * g + 3 + k] = *rbound;
}

static void setBody(Pair* p, int i, const double* pos, const double* quat) {
  int jnt = p->mj->body_jntadr[i + 1];
  double* q = p->md->qpos + p->mj->jnt_qposadr[jnt];
  memcpy(q, pos, 3 * sizeof(double));
  memcpy(q + 3, quat, 4 * sizeof(double));
}

/* geom 1 at offset s along u from geom 0 (plane: height s over it) */
static void placePair(Pair* p, const double* qa, const double* qb, const double* u, double s) {
  double zero[3] = {0, 0, 0}, pos[3];
  for (int k = 0; k < 3; k++) pos[k] = s * u[k];
  if (p->t0 == SAP_GEOM_PLANE) {
    setBody(p, 0, pos, qb);
  } else {
    setBody(p, 0, zero, qa);
    setBody(p, 1, pos, qb);
  }
  mj_kinematics(p->mj, p->md);
}

/* MuJoCo 4's contacts (native CCD, or libccd MPR with mjDSBL_NATIVECCD) */
static int mjContacts(Pair* p, int native, double margin, mjPreContact* con) {
  if (native) p->mj->opt.disableflags &= ~mjDSBL_NATIVECCD;
  else p->mj->opt.disableflags |= mjDSBL_NATIVECCD;
  return mjCOLLISIONFUNC[p->t0][p->t1](p->mj, p->md, con, 0, 1, margin);
}

/* sapsim fp64 narrow phase at MuJoCo's poses and sizes */
static int sapContacts(Pair* p, double margin, sapcContact_f64* con) {
  sapcGeom_f64 g[2];
  for (int i = 0; i < 2; i++) {
    sapc_loadGeom_f64(p->sm, p->md->geom_xpos, p->md->geom_xmat, i, &g[i]);
    for (int k = 0; k < 3; k++) g[i].size[k] = p->mj->geom_size[3 * i + k];
    if (g[i].type == SAP_GEOM_MESH) {
      int id = p->mj->geom_dataid[i];
      g[i].vert = p->svert + 3 * p->mj->mesh_vertadr[id];
      g[i].nvert = p->mj->mesh_vertnum[id];
    }
  }
  return sapc_collide_f64(&g[0], &g[1], margin, con);
}

/* first touch along u by bisection on MuJoCo's overlap test (native, margin 0) */
static double touchOffset(Pair* p, const double* qa, const double* qb, const double* u, double reach) {
  mjPreContact con[mjMAXCONPAIR];
  double lo = p->t0 == SAP_GEOM_PLANE ? -reach : 0, hi = reach;
  for (int it = 0; it < 60; it++) {
    double mid = 0.5 * (lo + hi);
    placePair(p, qa, qb, u, mid);
    if (mjContacts(p, 1, 0, con) > 0) lo = mid; else hi = mid;
  }
  return hi;
}

/* ---- reference 2 (tests/collision_ref.h) ---------------------------------------------- */

/* geom g of the pair as reference 2 sees it: MuJoCo's pose, sizes and mesh vertices */
static void refGeom(const Pair* p, int g, Ref* r) {
  const mjModel* m = p->mj;
  r->type = m->geom_type[g];
  memcpy(r->pos, p->md->geom_xpos + 3 * g, sizeof(r->pos));
  memcpy(r->mat, p->md->geom_xmat + 9 * g, sizeof(r->mat));
  memcpy(r->size, m->geom_size + 3 * g, sizeof(r->size));
  r->nvert = 0;
  if (r->type == mjGEOM_MESH) {
    int id = m->geom_dataid[g];
    r->nvert = m->mesh_vertnum[id];
    for (int i = 0; i < r->nvert; i++)
      for (int k = 0; k < 3; k++) r->vert[i][k] = m->mesh_vert[3 * (m->mesh_vertadr[id] + i) + k];
  }
}

static int deepestSap(const sapcContact_f64* c, int n) {
  int k = 0;
  for (int i = 1; i < n; i++) if (c[i].dist < c[k].dist) k = i;
  return k;
}
static int deepestMj(const mjPreContact* c, int n) {
  int k = 0;
  for (int i = 1; i < n; i++) if (c[i].dist < c[k].dist) k = i;
  return k;
}
static double normalErr(const double* a, const double* b) {
  double e = 0;
  for (int k = 0; k < 3; k++) e = fmax(e, fabs(a[k] - b[k]));
  return e;
}

/* ---- the oracle ----------------------------------------------------------------------- */

/* per pair, per implementation (0 sapsim, 1 MuJoCo libccd, 2 MuJoCo native) */
typedef struct Stat {
  int poses, contacts, multi;  /* multi: poses where sapsim returns a manifold (> 1 contact) */
  int n[3][3];               /* [impl][verdict] */
  int miss[3], spurious[3];  /* no contact where reference 2 has one, and the reverse */
  double ex_d[3], ex_n[3];   /* worst |d - dref| / L and (dref - sep(n)) / L over exact verdicts */
  double mpr_over[3], mpr_ang[3];
  double off_shallow[3], off_normal[3];  /* OFF: worst (d - dref) / L and (sep(n) - d) / L */
  int mj_off[2];             /* poses where MuJoCo [libccd, native] differs from sapsim */
  int mj_cause[2][3][3];     /* ... by (sapsim verdict, MuJoCo verdict) */
  double mj_d[2], mj_n[2];   /* worst agreement |d_s - d_mj| / L, normal, over agreeing poses */
} Stat;

static int poseCount(void) {
  const char* e = getenv("SAPSIM_ORACLE_POSES");
  int n = e ? atoi(e) : 0;
  return n > 0 ? n : 1000;
}

/* one pair type over npose poses */
static void oraclePair(int t0, int t1, int npose, Stat* st) {
  Pair p;
  memset(st, 0, sizeof(*st));
  if (!pairOpen(&p, t0, t1)) { check_test_failed++; return; }
  int nprint = 0;
  for (int it = 0; it < npose; it++) {
    double th0 = 1e300, th1, rb0 = 0, rb1, qa[4], qb[4], u[3] = {0, 0, 1};
    if (t0 != SAP_GEOM_PLANE) randomGeom(&p, 0, t0, &th0, &rb0);
    randomGeom(&p, 1, t1, &th1, &rb1);
    randomUnit(qa, 4);
    randomUnit(qb, 4);
    if (t0 != SAP_GEOM_PLANE) randomUnit(u, 3);
    // margin 10% of the thinner geom's half thickness; from 60% of it deep to 15% apart
    double thick = fmin(th0, th1), margin = 0.1 * thick;
    double s0 = touchOffset(&p, qa, qb, u, rb0 + rb1 + 0.1);
    placePair(&p, qa, qb, u, s0 + check_uniform(-0.6, 0.15) * thick);
    st->poses++;
    mjPreContact mc[2][mjMAXCONPAIR];
    sapcContact_f64 sc[SAPC_PAIRCON];
    int nc[3];
    nc[0] = sapContacts(&p, margin, sc);
    for (int v = 0; v < 2; v++) nc[v + 1] = mjContacts(&p, v, margin, mc[v]);
    // the deepest contact of each
    double d[3] = {0, 0, 0}, n[3][3];
    for (int k = 0; k < 3; k++) {
      if (!nc[k]) continue;
      if (k == 0) { int i = deepestSap(sc, nc[0]); d[0] = sc[i].dist; memcpy(n[0], sc[i].n, sizeof(n[0])); }
      else { int i = deepestMj(mc[k - 1], nc[k]); d[k] = mc[k - 1][i].dist; memcpy(n[k], mc[k - 1][i].normal, sizeof(n[k])); }
    }
    // reference 2: signed distance and normal
    Pose P;
    memset(&P, 0, sizeof(P));
    refGeom(&p, 0, &P.a);
    refGeom(&p, 1, &P.b);
    P.plane = t0 == SAP_GEOM_PLANE;
    P.margin = margin;
    P.L = fmax(rb0, rb1);
    // the reference's resolution (1e-7 L) plus MPR's stopping tolerance (1e-6 m, MuJoCo's
    // mpr_tolerance: the final portal may sit that far inside the boundary)
    P.tol = 1e-7 * P.L + 2e-6;
    double extra[3][3];
    int ne = 0;
    for (int k = 0; k < 3; k++) if (nc[k]) memcpy(extra[ne++], n[k], sizeof(extra[0]));
    seedsAndMin(&P, (const double (*)[3])extra, ne);
    int have = P.dref < margin - P.tol, none = P.dref > margin + P.tol;
    st->contacts += have;
    st->multi += nc[0] > 1;
    Judged J[3];
    for (int k = 0; k < 3; k++) {
      J[k].v = -1;
      if (!nc[k]) { st->miss[k] += have; continue; }
      if (none) { st->spurious[k]++; continue; }
      J[k] = judge(&P, d[k], n[k]);
      st->n[k][J[k].v]++;
      if (J[k].v == V_EXACT) {
        st->ex_d[k] = fmax(st->ex_d[k], J[k].ed / P.L);
        st->ex_n[k] = fmax(st->ex_n[k], J[k].en / P.L);
      } else if (J[k].v == V_BOUND) {
        st->mpr_over[k] = fmax(st->mpr_over[k], J[k].over / P.L);
        st->mpr_ang[k] = fmax(st->mpr_ang[k], J[k].ang);
      } else {
        st->off_shallow[k] = fmax(st->off_shallow[k], -J[k].over / P.L);
        st->off_normal[k] = fmax(st->off_normal[k], (P.dref - J[k].en - d[k]) / P.L);
      }
    }
    int bad = (!nc[0] && have) || (nc[0] && none) || (nc[0] && J[0].v == V_OFF);
    // reference 1: MuJoCo's deepest contact against sapsim's
    for (int v = 0; v < 2; v++) {
      if (!nc[0] || !nc[v + 1]) continue;
      double ed = fabs(d[v + 1] - d[0]) / P.L, en = normalErr(n[v + 1], n[0]);
      if (ed <= 1e-6 && en <= 1e-3) {
        st->mj_d[v] = fmax(st->mj_d[v], ed);
        st->mj_n[v] = fmax(st->mj_n[v], en);
      } else if (J[0].v >= 0 && J[v + 1].v >= 0) {
        st->mj_off[v]++;
        st->mj_cause[v][J[0].v][J[v + 1].v]++;
      }
    }
    if (bad && nprint++ < 6) {
      fprintf(stderr, "  %s-%s pose %d (scale %.3g, thick %.3g, margin %.3g): reference dist %.9g n (%.5f %.5f %.5f)\n",
              TYPE_NAME[t0], TYPE_NAME[t1], it, P.L, thick, margin, P.dref, P.nref[0], P.nref[1], P.nref[2]);
      const char* who[3] = {"sapsim", "libccd", "native"};
      for (int k = 0; k < 3; k++)
        if (nc[k]) fprintf(stderr, "    %s: %d contacts, deepest %.9g n (%.5f %.5f %.5f): %s (sep along n %.9g, MPR bound %.9g)\n",
                           who[k], nc[k], d[k], n[k][0], n[k][1], n[k][2], J[k].v >= 0 ? verdictName(J[k].v) : "beyond margin",
                           sepAlong(&P, n[k]), P.have_ray ? margin - P.tray : NAN);
        else fprintf(stderr, "    %s: no contact\n", who[k]);
    }
  }
  pairClose(&p);
}

static void test_size_ratio_oracle(void) {
  const int ty[7] = {SAP_GEOM_PLANE, SAP_GEOM_SPHERE, SAP_GEOM_CAPSULE, SAP_GEOM_ELLIPSOID, SAP_GEOM_CYLINDER,
                     SAP_GEOM_BOX, SAP_GEOM_MESH};
  int npose = poseCount();
  fprintf(stderr, "  | pair | poses | contacts | sapsim exact/MPR/off/miss/spur | exact: worst d, n err | MPR: deeper, angle | "
          "libccd exact/MPR/off/miss | native exact/MPR/off/miss | vs libccd: d, n, differ | vs native: d, n, differ |\n");
  for (int i = 0; i < 7; i++)
    for (int j = i; j < 7; j++) {
      if (j == 0) continue;
      Stat s;
      oraclePair(ty[i], ty[j], npose, &s);
      fprintf(stderr, "  | %s-%s | %d | %d | %d/%d/%d/%d/%d | %.1e, %.1e | %.1e, %.2f | %d/%d/%d/%d | %d/%d/%d/%d | %.1e, %.1e, %d | %.1e, %.1e, %d |\n",
              TYPE_NAME[ty[i]], TYPE_NAME[ty[j]], s.poses, s.contacts, s.n[0][0], s.n[0][1], s.n[0][2], s.miss[0],
              s.spurious[0], s.ex_d[0], s.ex_n[0], s.mpr_over[0], s.mpr_ang[0], s.n[1][0], s.n[1][1], s.n[1][2], s.miss[1],
              s.n[2][0], s.n[2][1], s.n[2][2], s.miss[2], s.mj_d[0], s.mj_n[0], s.mj_off[0], s.mj_d[1], s.mj_n[1], s.mj_off[1]);
      fprintf(stderr, "    sapsim manifolds (> 1 contact): %d\n", s.multi);
      fprintf(stderr, "    OFF worst: shallower than dref by %.1e / %.1e / %.1e, overlap along n beyond depth by %.1e / %.1e / %.1e (sapsim / libccd / native, / scale)\n",
              s.off_shallow[0], s.off_shallow[1], s.off_shallow[2], s.off_normal[0], s.off_normal[1], s.off_normal[2]);
      int bad = s.n[0][V_OFF] + s.miss[0] + s.spurious[0];
      CHECK(bad == 0, "%s-%s: %d poses where sapsim disagrees with the brute-force reference", TYPE_NAME[ty[i]],
            TYPE_NAME[ty[j]], bad);
      CHECK(s.contacts > npose / 3, "%s-%s: only %d poses with contacts", TYPE_NAME[ty[i]], TYPE_NAME[ty[j]], s.contacts);
    }
}

int main(void) {
  RUN(test_size_ratio_oracle);
  return check_summary("test_collision_oracle");
}
