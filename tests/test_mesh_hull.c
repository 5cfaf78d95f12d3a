/* Mesh collision at hull cost: the model's collision vertices and adjacency against
 * MuJoCo 4's compiled convex hull (mesh_graph); the hill-climbing support against a scan
 * of the same vertices (random and axis directions, plateaus of tied vertices); and
 * contacts of large meshes (a 20 k-vertex Fibonacci sphere, every vertex on the hull,
 * and a 60 k-point noisy cloud) against a plane, sphere, box and mesh: identical (bit
 * for bit, fp64 and fp32) to the same narrow phase with the adjacency removed (scan of
 * the hull vertices), equal to a scan of every mesh vertex, and in every pose within
 * 1e-4 m and 0.1 (normal) of MuJoCo 4's native collider, whose minimum penetration (EPA)
 * sapsim's convex pairs follow (measured worst 2.8e-5 m, 0.085 for mesh-mesh). */
#include <math.h>
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "collision_ref.h"
#include "sapsim/sapsim.h"
#include "../kernels/collision.h"

#define PI 3.14159265358979323846

/* ---- scenes -------------------------------------------------------------------- */

/* n Fibonacci points on a sphere of radius r, radii jittered inward by up to noise*r */
static void fibonacci(char* out, int n, double r, double noise) {
  const double golden = PI * (3.0 - sqrt(5.0));
  char* p = out;
  for (int i = 0; i < n; i++) {
    double z = 1.0 - 2.0 * (i + 0.5) / n, rr = sqrt(fmax(0.0, 1.0 - z * z)), a = golden * i;
    double s = r * (1.0 - noise * check_uniform(0, 1));
    p += sprintf(p, "%.9g %.9g %.9g ", s * rr * cos(a), s * rr * sin(a), s * z);
  }
}

/* a prism over a regular k-gon (radius r, half height h): flat faces of k tied vertices */
static void prism(char* out, int k, double r, double h) {
  char* p = out;
  for (int s = -1; s <= 1; s += 2)
    for (int i = 0; i < k; i++)
      p += sprintf(p, "%.9g %.9g %.9g ", r * cos(2 * PI * i / k), r * sin(2 * PI * i / k), s * h);
}

/* geom 0 of type t0 (the plane in the world, others on a free body), geom 1 the mesh
 * "big" on a free body; returns the file path */
static const char* pairScene(const char* verts, int t0) {
  static char path[128];
  const char* g0 = t0 == SAP_GEOM_PLANE ? "type=\"plane\" size=\"5 5 0.1\""
                 : t0 == SAP_GEOM_SPHERE ? "type=\"sphere\" size=\"0.07\""
                 : t0 == SAP_GEOM_BOX ? "type=\"box\" size=\"0.12 0.05 0.03\""
                 : "type=\"mesh\" mesh=\"big\"";
  size_t n = strlen(verts) + 4096;
  char* xml = (char*)malloc(n);
  char geom0[256], body0[512];
  snprintf(geom0, sizeof(geom0), "<geom name=\"g0\" %s/>", g0);
  if (t0 == SAP_GEOM_PLANE) snprintf(body0, sizeof(body0), "%s", geom0);
  else snprintf(body0, sizeof(body0), "<body name=\"b0\"><freejoint/>%s</body>", geom0);
  snprintf(xml, n,
           "<mujoco><asset><mesh name=\"big\" vertex=\"%s\"/></asset><worldbody>%s"
           "<body name=\"b1\"><freejoint/><geom name=\"g1\" type=\"mesh\" mesh=\"big\"/></body>"
           "</worldbody></mujoco>",
           verts, body0);
  snprintf(path, sizeof(path), "/tmp/sapsim_test_mesh_hull_%d.xml", (int)getpid());
  FILE* f = fopen(path, "w");
  if (f) { fputs(xml, f); fclose(f); }
  free(xml);
  return path;
}

typedef struct Pair {
  mjModel* mj;
  mjData* md;
  sapModel* sm;
  sapModel scan, all;  /* views: hull vertices without adjacency; every mesh vertex */
  int* noadj;
  double* vd;  /* MuJoCo's mesh vertices in double (the brute-force reference's) */
  int t0;
} Pair;

static int pairOpen(Pair* p, const char* verts, int t0) {
  const char* path = pairScene(verts, t0);
  char err[1000] = "";
  memset(p, 0, sizeof(*p));
  p->t0 = t0;
  p->mj = mj_loadXML(path, NULL, err, sizeof(err));
  if (!p->mj) { fprintf(stderr, "  mj_loadXML: %s\n", err); return 0; }
  // MuJoCo 4's native collider: minimum penetration by EPA, as sapsim (kernels/collision_t.h)
  p->md = mj_makeData(p->mj);
  p->vd = (double*)malloc(sizeof(double) * 3 * (p->mj->nmeshvert + 1));
  for (long i = 0; i < 3L * p->mj->nmeshvert; i++) p->vd[i] = p->mj->mesh_vert[i];
  if (sap_loadModel(path, &p->sm) != SAP_OK) { fprintf(stderr, "  %s\n", sap_lastError()); return 0; }
  remove(path);
  int nn = p->sm->nmeshhull > p->sm->nmeshvert ? p->sm->nmeshhull : p->sm->nmeshvert;
  p->noadj = (int*)malloc(sizeof(int) * nn);
  for (int i = 0; i < nn; i++) p->noadj[i] = -1;
  p->scan = *p->sm;
  p->scan.mesh_hullnbradr = p->noadj;
  p->all = p->scan;
  p->all.mesh_hulladr = p->sm->mesh_vertadr;
  p->all.mesh_hullnum = p->sm->mesh_vertnum;
  p->all.mesh_hullvert = p->sm->mesh_vert;
  return 1;
}

static void pairClose(Pair* p) {
  free(p->noadj);
  free(p->vd);
  mj_deleteData(p->md);
  mj_deleteModel(p->mj);
  sap_freeModel(p->sm);
}

static void randomUnit(double* u, int n) {
  double s = 0;
  for (int k = 0; k < n; k++) { u[k] = check_uniform(-1, 1); s += u[k] * u[k]; }
  for (int k = 0; k < n; k++) u[k] /= sqrt(s);
}

/* free body i at pos, quat */
static void setBody(Pair* p, int i, const double* pos, const double* quat) {
  int b = mj_name2id(p->mj, mjOBJ_BODY, i ? "b1" : "b0");
  if (b < 0) return;
  double* q = p->md->qpos + p->mj->jnt_qposadr[p->mj->body_jntadr[b]];
  memcpy(q, pos, 3 * sizeof(double));
  memcpy(q + 3, quat, 4 * sizeof(double));
}

static int mjContacts(Pair* p, double margin, mjPreContact* con) {
  mj_kinematics(p->mj, p->md);
  return mjCOLLISIONFUNC[p->t0][SAP_GEOM_MESH](p->mj, p->md, con, 0, 1, margin);
}

/* the mesh at offset s along u from geom 0 (plane: height s) */
static void place(Pair* p, const double* qa, const double* qb, const double* u, double s) {
  double zero[3] = {0, 0, 0}, pos[3];
  for (int k = 0; k < 3; k++) pos[k] = s * u[k];
  setBody(p, 0, zero, qa);
  setBody(p, 1, pos, qb);
}

static double touchOffset(Pair* p, const double* qa, const double* qb, const double* u) {
  mjPreContact con[mjMAXCONPAIR];
  double lo = -0.3, hi = 0.5;
  for (int it = 0; it < 40; it++) {
    double mid = 0.5 * (lo + hi);
    place(p, qa, qb, u, mid);
    if (mjContacts(p, 0, con) > 0) lo = mid; else hi = mid;
  }
  return hi;
}

/* ---- the model's hull against MuJoCo's graph ------------------------------------- */

static int cmpInt(const void* a, const void* b) { return (*(const int*)a > *(const int*)b) - (*(const int*)a < *(const int*)b); }

static void checkHull(const mjModel* mj, const sapModel* sm) {
  for (int i = 0; i < mj->nmesh; i++) {
    int adr = mj->mesh_graphadr[i];
    CHECK(adr >= 0, "mesh %d: MuJoCo computed no hull graph", i);
    if (adr < 0) continue;
    const int* g = mj->mesh_graph + adr;
    int nv = g[0];
    const int* gid = g + 2 + nv;
    CHECK(sm->mesh_hullnum[i] == nv, "mesh %d: %d collision vertices, MuJoCo's hull %d", i, sm->mesh_hullnum[i], nv);
    if (sm->mesh_hullnum[i] != nv) continue;
    // the hull vertices, ascending mesh index: the sorted global ids
    int* ids = (int*)malloc(sizeof(int) * nv);
    memcpy(ids, gid, sizeof(int) * nv);
    qsort(ids, nv, sizeof(int), cmpInt);
    int bad = 0, asym = 0, nedge = 0;
    const double* hv = sm->mesh_hullvert + 3 * sm->mesh_hulladr[i];
    for (int v = 0; v < nv; v++)
      for (int k = 0; k < 3; k++)
        bad += hv[3 * v + k] != (double)mj->mesh_vert[3 * (mj->mesh_vertadr[i] + ids[v]) + k];
    // adjacency symmetric, within range, no self loops
    const int* na = sm->mesh_hullnbradr + sm->mesh_hulladr[i];
    for (int v = 0; v < nv; v++)
      for (int e = na[v]; sm->mesh_hullnbr[e] >= 0; e++) {
        int j = sm->mesh_hullnbr[e], back = 0;
        nedge++;
        if (j >= nv || j == v) { asym++; continue; }
        for (int f = na[j]; sm->mesh_hullnbr[f] >= 0; f++) back |= sm->mesh_hullnbr[f] == v;
        asym += !back;
      }
    CHECK(bad == 0, "mesh %d: %d hull vertex coordinates differ from MuJoCo's", i, bad);
    CHECK(asym == 0, "mesh %d: %d one-way or bad hull edges", i, asym);
    // a closed triangulated hull: E = 3F/2, Euler V - E + F = 2
    CHECK(nv - nedge / 2 + g[1] == 2, "mesh %d: V %d E %d F %d break Euler's formula", i, nv, nedge / 2, g[1]);
    free(ids);
  }
}

/* ---- support: climb against scan ------------------------------------------------- */

static int supportCase(const sapModel* sm, const double* xpos, const double* xmat, int g, const double* dir) {
  sapcGeom_f64 a;
  sapcGeom_f32 b;
  sapc_loadGeom_f64(sm, xpos, xmat, g, &a);
  sapc_loadGeom_f32(sm, xpos, xmat, g, &b);
  double l[3];
  float lf[3];
  cl_toLocalDir_f64(l, &a, dir);
  float df[3] = {(float)dir[0], (float)dir[1], (float)dir[2]};
  cl_toLocalDir_f32(lf, &b, df);
  int bad = cl_meshSupportId_f64(&a, l) != cl_meshScan_f64(&a, l);
  bad += cl_meshSupportId_f32(&b, lf) != cl_meshScan_f32(&b, lf);
  return bad;
}

static void test_support_climb(void) {
  static char verts[2 * 60000 * 3 * 18];
  struct { const char* what; int kind, n; double noise; } meshes[] = {
      {"prism 20-gon (plateaus of 20)", 1, 20, 0}, {"prism 48-gon (plateaus beyond 32)", 1, 48, 0},
      {"Fibonacci sphere 20k", 0, 20000, 0}, {"noisy cloud 60k", 0, 60000, 0.05}};
  for (int c = 0; c < 4; c++) {
    if (meshes[c].kind) prism(verts, meshes[c].n, 0.1, 0.04);
    else fibonacci(verts, meshes[c].n, 0.1, meshes[c].noise);
    Pair p;
    if (!pairOpen(&p, verts, SAP_GEOM_SPHERE)) { check_test_failed++; continue; }
    checkHull(p.mj, p.sm);
    int bad = 0, nd = 0;
    for (int it = 0; it < 400; it++) {
      double q[4], u[3], dir[3] = {0, 0, 0}, zero[3] = {0, 0, 0};
      randomUnit(q, 4);
      if (it % 4 == 0) { q[0] = 1; q[1] = q[2] = q[3] = 0; }  // axis aligned: exact ties
      place(&p, q, q, zero, 0);
      mj_kinematics(p.mj, p.md);
      if (it % 2) randomUnit(u, 3);
      else {  // a local axis of the mesh in world (ties on the prism's faces)
        int ax = (it / 2) % 6;
        for (int k = 0; k < 3; k++) u[k] = p.md->geom_xmat[9 + 3 * k + ax / 2] * (ax & 1 ? 1 : -1);
      }
      memcpy(dir, u, sizeof(dir));
      bad += supportCase(p.sm, p.md->geom_xpos, p.md->geom_xmat, 1, dir);
      nd++;
    }
    fprintf(stderr, "  %-34s hull %5d of %5d vertices: %d of %d directions differ from the scan\n",
            meshes[c].what, p.sm->mesh_hullnum[0], p.sm->mesh_vertnum[0], bad, 2 * nd);
    CHECK(bad == 0, "%s: the climb picks another vertex than the scan in %d directions", meshes[c].what, bad);
    pairClose(&p);
  }
}

/* ---- contacts of large meshes ------------------------------------------------------ */

static int sameContacts(const sapcContact_f64* a, int na, const sapcContact_f64* b, int nb, double tol) {
  if (na != nb) return 0;
  for (int i = 0; i < na; i++) {
    for (int k = 0; k < 3; k++)
      if (!(fabs(a[i].pos[k] - b[i].pos[k]) <= tol && fabs(a[i].n[k] - b[i].n[k]) <= tol)) return 0;
    if (!(fabs(a[i].dist - b[i].dist) <= tol)) return 0;
  }
  return 1;
}

/* the signed distance the pair shows along unit normal n (a to b): -(h_a(n) + h_b(-n)) */
static double sepAlongNormal(const Pair* p, const double* n) {
  Ref a, b;
  refFromMj(p->mj, p->md, 0, p->vd, &a);
  refFromMj(p->mj, p->md, 1, p->vd, &b);
  double nn[3] = {-n[0], -n[1], -n[2]};
  return -(support(&a, n) + support(&b, nn));
}

/* against MuJoCo 4's native collider within tol_d (m) and tol_n (|n - n_mj|); a normal
 * further from MuJoCo's counts as a tie when the pair's overlap along it (brute-force
 * support functions) is MuJoCo's depth within tol_d: on a finely faceted surface the
 * minimum direction is flat over several facets */
static void contactCase(const char* what, const char* verts, int allhull, int t0, double tol_d, double tol_n) {
  const double margin = 0.01;
  const char* name[8] = {"plane", "hfield", "sphere", "capsule", "ellipsoid", "cylinder", "box", "mesh"};
  Pair p;
  if (!pairOpen(&p, verts, t0)) { check_test_failed++; return; }
  int nclimb = 0, nall = 0, nmj = 0, nmjall = 0, nties = 0, nboth = 0, npose = 60;
  double wd = 0, wn = 0, wall = 0;
  for (int it = 0; it < npose; it++) {
    double qa[4], qb[4], u[3] = {0, 0, 1};
    randomUnit(qa, 4);
    randomUnit(qb, 4);
    if (t0 != SAP_GEOM_PLANE) randomUnit(u, 3);
    else qa[0] = 1, qa[1] = qa[2] = qa[3] = 0;
    double s0 = touchOffset(&p, qa, qb, u);
    place(&p, qa, qb, u, s0 + check_uniform(-0.012, 0.012));
    mj_kinematics(p.mj, p.md);
    sapcContact_f64 c[SAPC_PAIRCON], s[SAPC_PAIRCON], al[SAPC_PAIRCON];
    for (int fp64 = 0; fp64 < 2; fp64++) {
      int nc = sapw_collidePair(p.sm, p.md->geom_xpos, p.md->geom_xmat, 0, 1, margin, fp64, c);
      int ns = sapw_collidePair(&p.scan, p.md->geom_xpos, p.md->geom_xmat, 0, 1, margin, fp64, s);
      nclimb += !sameContacts(c, nc, s, ns, 0);  // bit for bit
      if (!fp64) continue;
      int na = sapw_collidePair(&p.all, p.md->geom_xpos, p.md->geom_xmat, 0, 1, margin, 1, al);
      nall += !sameContacts(c, nc, al, na, 1e-12);
      if (nc && na) wall = fmax(wall, fabs(c[REF_DEEPEST(c, nc)].dist - al[REF_DEEPEST(al, na)].dist));
      mjPreContact mc[mjMAXCONPAIR];
      int nm = mjContacts(&p, margin, mc);
      if (nm == 0 || nc == 0) {
        double d = nm ? mc[0].dist : nc ? c[REF_DEEPEST(c, nc)].dist : margin;
        nmj += margin - d > tol_d + 1e-9;
        continue;
      }
      nboth++;
      int km = 0, ks = REF_DEEPEST(c, nc);
      for (int i = 1; i < nm; i++) if (mc[i].dist < mc[km].dist) km = i;
      double ed = fabs(c[ks].dist - mc[km].dist), en = 0;
      for (int k = 0; k < 3; k++) en = fmax(en, fabs(c[ks].n[k] - mc[km].normal[k]));
      wd = fmax(wd, ed);
      wn = fmax(wn, en);
      int tie = en > tol_n && t0 != SAP_GEOM_PLANE && fabs(sepAlongNormal(&p, c[ks].n) - mc[km].dist) <= tol_d;
      nties += tie;
      int off = ed > tol_d || (en > tol_n && !tie), offall = 1;
      nmj += off;
      if (na) {
        int ka = REF_DEEPEST(al, na);
        double ea = 0;
        for (int k = 0; k < 3; k++) ea = fmax(ea, fabs(al[ka].n[k] - mc[km].normal[k]));
        offall = fabs(al[ka].dist - mc[km].dist) > tol_d || ea > tol_n;
      }
      nmjall += offall;
    }
  }
  fprintf(stderr, "  %-22s %-6s-mesh: climb vs hull scan %d differ, vs all-vertex scan %d differ (worst %.1e),"
                  " MuJoCo 4: worst |d dist| %.1e |d normal| %.1e, %d of %d poses off (all-vertex scan: %d), %d normal ties\n",
          what, name[t0], nclimb, nall, wall, wd, wn, nmj, npose, nmjall, nties);
  CHECK(nclimb == 0, "%s %s-mesh: %d poses where the climb's contacts differ from the hull scan", what, name[t0], nclimb);
  CHECK(nboth > npose / 4, "%s %s-mesh: only %d poses with contacts on both sides", what, name[t0], nboth);
  if (allhull) CHECK(nall == 0, "%s %s-mesh: %d poses where the contacts differ from the all-vertex scan", what, name[t0], nall);
  // interior points: the all-vertex scan can put manifold points on vertices inside the
  // hull; the deepest point (a support) is the same for plane and sphere
  else if (t0 == SAP_GEOM_PLANE || t0 == SAP_GEOM_SPHERE) CHECK(wall == 0, "%s %s-mesh: deepest %.3g off the all-vertex scan", what, name[t0], wall);
  CHECK(nmj == 0, "%s %s-mesh: %d poses disagree with MuJoCo 4", what, name[t0], nmj);
  pairClose(&p);
}

static void test_large_mesh_contacts(void) {
  static char verts[60000 * 3 * 18];
  struct { const char* what; int n; double noise; } meshes[] = {{"Fibonacci sphere 20k", 20000, 0},
                                                                 {"noisy cloud 60k", 60000, 0.05}};
  for (int c = 0; c < 2; c++) {
    fibonacci(verts, meshes[c].n, 0.1, meshes[c].noise);
    contactCase(meshes[c].what, verts, meshes[c].noise == 0, SAP_GEOM_PLANE, 1e-9, 1e-9);
    contactCase(meshes[c].what, verts, meshes[c].noise == 0, SAP_GEOM_SPHERE, 1e-4, 0.01);
    contactCase(meshes[c].what, verts, meshes[c].noise == 0, SAP_GEOM_BOX, 1e-4, 0.1);
    contactCase(meshes[c].what, verts, meshes[c].noise == 0, SAP_GEOM_MESH, 1e-4, 0.1);
  }
}

int main(void) {
  RUN(test_support_climb);
  RUN(test_large_mesh_contacts);
  return check_summary("test_mesh_hull");
}
