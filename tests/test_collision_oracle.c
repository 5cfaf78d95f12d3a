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

static void meshScale(Pair* p, int g, int fam, double sc, double* thick, double* rbound);

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
      double ext[3];
      meshBaseExtent(p, NMESH * g + fam, ext);
      double big = fmax(fmax(ext[0], ext[1]), ext[2]);
      meshScale(p, g, fam, logSize(-2, 0) / big, thick, rbound);
    }
  }
  m->geom_rbound[g] = *rbound;
  for (int k = 0; k < 3; k++) m->geom_aabb[6 * g + 3 + k] = *rbound;
}

/* geom g (a mesh) takes shape fam (0 hull, 1 flat, 2 rod) scaled by sc: MuJoCo's and
 * sapsim's vertices (MuJoCo's floats, exactly), half thickness and bounding radius */
static void meshScale(Pair* p, int g, int fam, double sc, double* thick, double* rbound) {
  mjModel* m = p->mj;
  int id = NMESH * g + fam, a = m->mesh_vertadr[id], nv = m->mesh_vertnum[id];
  double ext[3], r = 0;
  m->geom_dataid[g] = id;
  p->mscale[g] = sc;
  meshBaseExtent(p, id, ext);
  for (int i = 3 * a; i < 3 * (a + nv); i++) {
    m->mesh_vert[i] = (float)(p->vert0[i] * sc);
    p->svert[i] = m->mesh_vert[i];
  }
  for (int i = a; i < a + nv; i++)
    r = fmax(r, sqrt(p->svert[3 * i] * p->svert[3 * i] + p->svert[3 * i + 1] * p->svert[3 * i + 1] +
                     p->svert[3 * i + 2] * p->svert[3 * i + 2]));
  *thick = fmin(fmin(ext[0], ext[1]), ext[2]) * sc;
  *rbound = r;
  for (int k = 0; k < 3; k++) m->geom_size[3 * g + k] = ext[k] * sc;
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



/* ---- the oracle ----------------------------------------------------------------------- */

/* per pair, per implementation (0 sapsim, 1 MuJoCo libccd, 2 MuJoCo native) */
typedef struct Stat {
  int poses, contacts, multi;  /* multi: poses where sapsim returns a manifold (> 1 contact) */
  int n[3][3];               /* [impl][verdict] */
  int miss[3], spurious[3];  /* no contact where reference 2 has one, and the reverse */
  double ex_d[3], ex_n[3];   /* worst |d - dref| and dref - sep(n) (m) over exact verdicts */
  double mpr_over[3], mpr_ang[3];
  double off_shallow[3], off_normal[3];  /* OFF: worst d - dref and sep(n) - d (m) */
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
      if (k == 0) { int i = REF_DEEPEST(sc, nc[0]); d[0] = sc[i].dist; memcpy(n[0], sc[i].n, sizeof(n[0])); }
      else { int i = REF_DEEPEST(mc[k - 1], nc[k]); d[k] = mc[k - 1][i].dist; memcpy(n[k], mc[k - 1][i].normal, sizeof(n[k])); }
    }
    // reference 2: signed distance and normal
    Pose P;
    memset(&P, 0, sizeof(P));
    refFromMj(p.mj, p.md, 0, NULL, &P.a);
    refFromMj(p.mj, p.md, 1, NULL, &P.b);
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
        st->ex_d[k] = fmax(st->ex_d[k], J[k].ed);
        st->ex_n[k] = fmax(st->ex_n[k], J[k].en);
      } else if (J[k].v == V_BOUND) {
        st->mpr_over[k] = fmax(st->mpr_over[k], J[k].over);
        st->mpr_ang[k] = fmax(st->mpr_ang[k], J[k].ang);
      } else {
        st->off_shallow[k] = fmax(st->off_shallow[k], -J[k].over);
        st->off_normal[k] = fmax(st->off_normal[k], (P.dref - J[k].en - d[k]));
      }
    }
    int bad = (!nc[0] && have) || (nc[0] && none) || (nc[0] && J[0].v == V_OFF);
    // reference 1: MuJoCo's deepest contact against sapsim's
    for (int v = 0; v < 2; v++) {
      if (!nc[0] || !nc[v + 1]) continue;
      // agreement: the distance within the oracle's tolerance, normals within 1e-3
      double ed = fabs(d[v + 1] - d[0]), en = refNormalErr(n[v + 1], n[0]);
      if (ed <= P.tol && en <= 1e-3) {
        st->mj_d[v] = fmax(st->mj_d[v], ed);
        st->mj_n[v] = fmax(st->mj_n[v], en);
      } else if (J[0].v >= 0 && J[v + 1].v >= 0) {
        st->mj_off[v]++;
        st->mj_cause[v][J[0].v][J[v + 1].v]++;
      }
    }
    if (bad && getenv("SAPSIM_ORACLE_DUMP")) {  // the pose as a REGRESSION[] entry
      const double* x = p.md->geom_xpos;
      const double* R = p.md->geom_xmat;
      const double* z = p.mj->geom_size;
      printf("    {%d, %d, {%.17g, %.17g, %.17g}, {%.17g, %.17g, %.17g}, {%d, %d}, {%.17g, %.17g}, %.17g,\n", t0, t1, z[0], z[1],
             z[2], z[3], z[4], z[5], p.mj->geom_dataid[0] < 0 ? -1 : p.mj->geom_dataid[0] % NMESH,
             p.mj->geom_dataid[1] < 0 ? -1 : p.mj->geom_dataid[1] % NMESH, p.mscale[0], p.mscale[1], margin);
      printf("     {{%.17g, %.17g, %.17g}, {%.17g, %.17g, %.17g}}, {{%.17g, %.17g, %.17g, %.17g, %.17g, %.17g, %.17g, %.17g, %.17g},"
             " {%.17g, %.17g, %.17g, %.17g, %.17g, %.17g, %.17g, %.17g, %.17g}}},\n", x[0], x[1], x[2], x[3], x[4], x[5], R[0], R[1],
             R[2], R[3], R[4], R[5], R[6], R[7], R[8], R[9], R[10], R[11], R[12], R[13], R[14], R[15], R[16], R[17]);
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

/* ---- regression poses ------------------------------------------------------------------ */

/* a pose as the oracle dumps it (SAPSIM_ORACLE_DUMP=1): types, sizes, mesh shapes and
 * scales (-1: not a mesh), margin, geom positions and rotations */
typedef struct RegPose {
  int t0, t1;
  double size0[3], size1[3];
  int mesh[2];
  double mscale[2], margin;
  double xpos[2][3], xmat[2][9];
} RegPose;

/* poses where sapsim's narrow phase before the EPA change failed the brute-force
 * reference (the first of each pair type over 100 poses per pair): MPR's depth along the
 * centre line with the normal fixed on a curved surface (the overlap along that normal
 * exceeded the depth by up to 2.6% of the geom scale), and manifolds accepted within
 * 0.5% of the geom scales of the MPR depth (shallower than the true penetration by up
 * to 3.8 mm on a 1.5 cm thick pair) */
static const RegPose REGRESSION[] = {
    {2, 4, {0.10568373611452114, 0, 0}, {0.75384057432743312, 0.0075384057432743316, 0.022150707950127885}, {-1, -1}, {0, 0}, 0.00075384057432743325,
     {{0, 0, 0}, {-0.21862890353472153, -0.01824256636315056, 0.29570198242885554}}, {{0.3315224168852452, -0.21496451461108829, -0.91863112540376324, 0.72124884020301439, 0.68543508490402394, 0.099894218493463471, 0.60818829124570628, -0.69567880651966996, 0.38228000281337671}, {0.74830517876185731, -0.59794699948866037, -0.28722594806300583, -0.20236963176994616, -0.61812562506611901, 0.75958359893688843, -0.63173245252676458, -0.51027453144275925, -0.58355292046685148}}},
    {2, 7, {0.025831063534553268, 0, 0}, {0.0023607322048503012, 0.0022044690301214931, 0.030222782344429298}, {-1, 2}, {0, 0.12089343523700134}, 0.00022044690301214933,
     {{0, 0, 0}, {-0.024370190817992656, -0.032736579117398246, 0.020321808197452915}}, {{0.38227812644640369, -0.21581101493194571, 0.89849264875939383, 0.18543953251906692, -0.93464685500448252, -0.30339320396037273, 0.90524892367775722, 0.28259664234430304, -0.31727515489869162}, {-0.76631052632165619, -0.012322107881479263, 0.64235219537726429, 0.18533593173378471, 0.95307186173543301, 0.23938383148519701, -0.61515751613469194, 0.30249329252980217, -0.72806527064369952}}},
    {3, 4, {0.087696149909677848, 0.13848668333089745, 0}, {0.0060000000000000001, 0.29999999999999999, 0.0060000000000000001}, {-1, -1}, {0, 0}, 0.00060000000000000006,
     {{0, 0, 0}, {0.19680063537067374, -0.039331184746657741, 0.15678009235457738}}, {{-0.3382334440607867, -0.91406239312136262, -0.22380366127484563, 0.74350647979847528, -0.11377430162551161, -0.65897915201264612, 0.57688495544298757, -0.3892882605099649, 0.7180935861102421}, {0.23046957022857056, 0.79975865782779343, 0.55431928202809666, -0.0079911734655913058, 0.57119100076220763, -0.82077827809641191, -0.97304671950801058, 0.18473475546781765, 0.13803315462940341}}},
    {3, 5, {0.50939389482621722, 0.1236414131415044, 0}, {0.50131775873686935, 0.022951386952182806, 0}, {-1, -1}, {0, 0}, 0.0022951386952182805,
     {{0, 0, 0}, {0.50554491899818998, -0.83995238587889032, -0.12203319436235617}}, {{-0.56647439096070051, 0.21125557275452994, 0.796541177445246, 0.55589822331350414, 0.8115025307850835, 0.18011331945831677, -0.60834523890846115, 0.54482540828191905, -0.57713199944886739}, {0.76417954857947434, -0.17115215996117583, -0.62188146432700064, -0.62894051348084445, -0.41155773274481511, -0.65958628178608958, -0.14305050868599598, 0.89516879456255127, -0.42214852979266226}}},
    {3, 6, {0.017101249194463666, 0.85506245972318329, 0}, {0.055377927930062285, 0.8455551012128727, 0.24491823415469674}, {-1, -1}, {0, 0}, 0.0017101249194463666,
     {{0, 0, 0}, {-0.0014334785826142131, 0.00052600895576348486, -0.0064751124074369044}}, {{0.98605388987796538, 0.11809063976444528, -0.11727031617829653, 0.13084407613468402, -0.9855285789294167, 0.10776478021053772, -0.10284723621466274, -0.12160600689681618, -0.98723574949938731}, {-0.6081603761797042, 0.75612651143878384, -0.24168917134281215, -0.19747089374370635, -0.43899932111587237, -0.87651859203548266, -0.76886032734757648, -0.48533729998756281, 0.41629497026959117}}},
    {3, 7, {0.40745675726566349, 0.077429840702628414, 0}, {0.40215347617576819, 0.48258415343326078, 0.60323022924503655}, {-1, 0}, {0, 4.0215347018321452}, 0.040215347617576822,
     {{0, 0, 0}, {-0.92026388047587815, -0.23588026325301389, -0.32919997883288932}}, {{-0.26969895156878687, 0.24274092380273402, 0.93184726185898781, 0.58540397917934206, -0.72701770090011153, 0.35881394027951174, 0.76456828124353293, 0.64227883858127532, 0.05397440900091996}, {0.4757795648299083, 0.34070207777622485, -0.81089820562708992, -0.15392192970367125, -0.87545374805979348, -0.45813619652278692, -0.86599182747100389, 0.34278685681780563, -0.36408148201523244}}},
    {4, 4, {0.97192944421128946, 0.012516618025269674, 0.031362613698060877}, {0.29999999999999999, 0.0060000000000000001, 0.0060000000000000001}, {-1, -1}, {0, 0}, 0.00060000000000000006,
     {{0, 0, 0}, {0.010522696946728643, -0.00684048358349712, 0.029875632400561462}}, {{-0.16581198661804519, 0.88170960437375756, 0.44169509692643094, 0.97174697836108415, 0.22237321480174888, -0.079107290339373137, -0.1679708163339092, 0.41609893882802346, -0.8936707883590651}, {0.33401244922290663, 0.52462064278428966, -0.78307653835925473, -0.85539972159202637, -0.18022548873465294, -0.48560281044351311, -0.3958876103951704, 0.83204083696351927, 0.38856279487445455}}},
    {4, 5, {0.72111845122378559, 0.014422369024475712, 0.014422369024475712}, {0.71315046910723356, 0.007131504691072336, 0}, {-1, -1}, {0, 0}, 0.0007131504691072336,
     {{0, 0, 0}, {0.31026472692857476, 0.21773148097085371, 0.46062383063631224}}, {{-0.70918365749564982, -0.43516861757961378, 0.55469524444954532, -0.31525718888538357, -0.50799755860012508, -0.80159302973042257, 0.63061196055671076, -0.74334834010049455, 0.22307353153760984}, {0.11544641374201725, -0.98790631566263942, -0.10350476814126042, 0.094392615534350521, 0.11464085608695762, -0.98891228541677711, 0.98881856762840514, 0.1043962910716591, 0.10648593674185419}}},
    {4, 6, {0.29999999999999999, 0.0060000000000000001, 0.0060000000000000001}, {0.27844779813226073, 0.083084186487989806, 0.052281905721542891}, {-1, -1}, {0, 0}, 0.00060000000000000006,
     {{0, 0, 0}, {-0.36494039324298916, -0.039197379360487963, 0.10118336920612143}}, {{0.85911188318185316, -0.40015760721094218, 0.31906215940932753, 0.43792605727516942, 0.89740775476874823, -0.053666470354766821, -0.26485380974257261, 0.18583113590603523, 0.94621310939593184}, {0.75871567052526867, -0.64368607117910326, -0.10009382133479819, -0.5484207775970209, -0.54824291190479224, -0.63139873316790329, 0.35154684182804286, 0.53394564453337823, -0.76897130420098536}}},
    {4, 7, {0.12476214541465468, 0.54349187278990363, 0.065406503353930862}, {0.0034473141457281595, 0.045505045773300196, 0.050125495901566175}, {-1, 1}, {0, 0.34473142227816367}, 0.00034473141457281599,
     {{0, 0, 0}, {0.072619423695272897, 0.035601576302969264, 0.2645872929810611}}, {{0.92850965788471229, -0.32600744402114312, -0.17773283787082167, -0.15772543511359749, 0.087039319451103214, -0.98363959049425986, 0.33614357398742717, 0.94135184883883349, 0.02939718276755543}, {0.30679680430941009, 0.2225019616818163, 0.9254018575263856, -0.93706463384646455, 0.24089626580387952, 0.25274267767028613, -0.16669011026372565, -0.94470199860564397, 0.28240492377219056}}},
    {5, 5, {0.61487095742954501, 0.0061487095742954502, 0}, {0.027801357319836344, 0.83756177586051572, 0}, {-1, -1}, {0, 0}, 0.00061487095742954504,
     {{0, 0, 0}, {-0.4615302795390977, -0.32270799400782202, -0.12681502619100815}}, {{0.86192162541672812, 0.47905277012306824, -0.16613113819028608, 0.062814394788867384, 0.22423979517966802, 0.9725075146573875, 0.50313563126287675, -0.84866068466448652, 0.16318571891716266}, {0.98993546200934612, -0.056704462981325726, -0.1296625810877669, -0.086992206883723944, -0.96649663824414134, -0.24148831069903307, -0.11162498375292888, 0.25033747650076849, -0.96170214248559582}}},
    {5, 6, {0.012125061265733912, 0.60625306328669559, 0}, {0.020742804412629497, 0.072729389036488845, 0.014232034262780177}, {-1, -1}, {0, 0}, 0.0012125061265733912,
     {{0, 0, 0}, {-0.039996409465132637, -0.057025773818940688, 0.057090834886197449}}, {{0.48084542192255175, 0.45013814137685454, 0.75243825919068863, 0.87372923412758641, -0.17417109458639868, -0.45416038493179578, -0.073381916348268683, 0.87580824584401273, -0.47704822697992388}, {-0.81731948361550821, -0.027599923713092944, -0.57552333220601082, 0.38478619196877495, 0.7173253049917413, -0.58084765066984156, 0.42886880065195687, -0.69619153329348726, -0.5756638783159973}}},
    {5, 7, {0.010044715639128999, 0.46110992971768294, 0}, {0.062731834405891237, 0.075278198482737993, 0.094097753945779766}, {-1, 0}, {0, 0.62731833471114073}, 0.0010044715639128999,
     {{0, 0, 0}, {-0.086107571157754678, 0.043906566394199105, -0.040717562304143161}}, {{-0.88838652930364825, -0.33324540752954956, 0.31577978547127306, -0.102656863977727, 0.81460679314626006, 0.57085667276315988, -0.44747172293908943, 0.47472441576185159, -0.75789563018234374}, {-0.0089122646217986226, -0.18547556802207052, 0.98260845976727129, 0.20967875150045831, -0.96114843093119651, -0.17952302049518812, 0.97772971352441163, 0.20443215839343129, 0.047456294693991256}}},
    {7, 7, {0.015771405238323637, 0.014727453769617647, 0.20191013059605931}, {0.0032735845490616819, 0.0030568972376722103, 0.041909384346561974}, {2, 2}, {0.80765592719852253, 0.16764073487951267}, 0.00030568972376722106,
     {{-7.5828973533157283e-19, -3.0614054325202015e-19, 2.9192127284480629e-19}, {0.013696724081283728, -0.013776360988999517, -0.028590040351435433}}, {{0.92651988887220149, 0.20819276059651454, -0.31339538918027099, 0.29079974759203209, 0.13228245327584165, 0.94759530357412758, 0.23873919310549238, -0.96910119543344653, 0.062019921676919998}, {0.050743528395992638, -0.5918558723717755, -0.80444497677900717, 0.72968058870386376, -0.52799838008608113, 0.43449274918606484, -0.68190272971642774, -0.60903557939214559, 0.40507324058713823}}},
};

static void test_regression_poses(void) {
  int n = (int)(sizeof(REGRESSION) / sizeof(REGRESSION[0]));
  for (int r = 0; r < n; r++) {
    const RegPose* q = &REGRESSION[r];
    Pair p;
    if (!pairOpen(&p, q->t0, q->t1)) { CHECK(0, "regression %d: scene", r); continue; }
    double th, rb;
    const double* size[2] = {q->size0, q->size1};
    for (int g = 0; g < 2; g++) {
      memcpy(p.mj->geom_size + 3 * g, size[g], 3 * sizeof(double));
      if (q->mesh[g] >= 0) meshScale(&p, g, q->mesh[g], q->mscale[g], &th, &rb);
      memcpy(p.md->geom_xpos + 3 * g, q->xpos[g], sizeof(q->xpos[g]));
      memcpy(p.md->geom_xmat + 9 * g, q->xmat[g], sizeof(q->xmat[g]));
    }
    sapcContact_f64 sc[SAPC_PAIRCON];
    int ns = sapContacts(&p, q->margin, sc);
    static Pose P;
    memset(&P, 0, sizeof(P));
    refFromMj(p.mj, p.md, 0, NULL, &P.a);
    refFromMj(p.mj, p.md, 1, NULL, &P.b);
    P.plane = q->t0 == SAP_GEOM_PLANE;
    P.margin = q->margin;
    P.L = 0;
    for (int g = 0; g < 2; g++)
      P.L = fmax(P.L, sqrt(size[g][0] * size[g][0] + size[g][1] * size[g][1] + size[g][2] * size[g][2]));
    P.tol = 1e-7 * P.L + 2e-6;
    int ks = ns ? REF_DEEPEST(sc, ns) : 0;
    double extra[1][3] = {{0, 0, 1}};
    if (ns) memcpy(extra[0], sc[ks].n, sizeof(extra[0]));
    seedsAndMin(&P, (const double (*)[3])extra, 1);
    int v = ns ? judge(&P, sc[ks].dist, sc[ks].n).v : (P.dref < P.margin - P.tol ? V_OFF : V_EXACT);
    fprintf(stderr, "  %-9s %-9s: sapsim %d contacts, deepest %.9g; reference %.9g: %s\n", TYPE_NAME[q->t0],
            TYPE_NAME[q->t1], ns, ns ? sc[ks].dist : NAN, P.dref, ns ? verdictName(v) : (v ? "missed" : "none"));
    CHECK(v != V_OFF, "regression %d (%s-%s): sapsim off the brute-force reference", r, TYPE_NAME[q->t0], TYPE_NAME[q->t1]);
    pairClose(&p);
  }
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
      for (int v = 0; v < 2; v++)
        if (s.mj_off[v])
          fprintf(stderr, "    differ from %s: %d, by verdict (sapsim/MuJoCo): exact/exact %d, exact/bounded %d, exact/OFF %d, "
                  "bounded/exact %d, bounded/bounded %d, bounded/OFF %d\n", v ? "native" : "libccd", s.mj_off[v],
                  s.mj_cause[v][0][0], s.mj_cause[v][0][1], s.mj_cause[v][0][2], s.mj_cause[v][1][0], s.mj_cause[v][1][1],
                  s.mj_cause[v][1][2]);
      fprintf(stderr, "    OFF worst: shallower than dref by %.1e / %.1e / %.1e, overlap along n beyond depth by %.1e / %.1e / %.1e (sapsim / libccd / native, m)\n",
              s.off_shallow[0], s.off_shallow[1], s.off_shallow[2], s.off_normal[0], s.off_normal[1], s.off_normal[2]);
      int bad = s.n[0][V_OFF] + s.miss[0] + s.spurious[0];
      CHECK(bad == 0, "%s-%s: %d poses where sapsim disagrees with the brute-force reference", TYPE_NAME[ty[i]],
            TYPE_NAME[ty[j]], bad);
      CHECK(s.contacts > npose / 3, "%s-%s: only %d poses with contacts", TYPE_NAME[ty[i]], TYPE_NAME[ty[j]], s.contacts);
    }
}

int main(void) {
  RUN(test_regression_poses);
  RUN(test_size_ratio_oracle);
  return check_summary("test_collision_oracle");
}
