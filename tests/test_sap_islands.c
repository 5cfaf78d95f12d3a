/* Islands of the SAP solve (kernels/sap_island_t.h). Oracles:
 *  - the partition against a brute-force reference built without the solver's tree ranges or
 *    union-find: dofs linked by the body ancestor relation (walks up body_parentid: A's
 *    sparsity), by each contact's two body chains to the world, by each scalar row's dofs;
 *    components by depth-first search over the dense link matrix; members = the closure of the
 *    participating and constrained dofs;
 *  - the geometric one on random sphere scenes: components of the sphere overlap graph among
 *    the spheres with a contact (the plane is the world and links nothing);
 *  - known structures: separate objects, a connect equality and a fixed tendon linking trees;
 *  - the dense Newton matrix of the unsplit path (one block, the path of the solve before
 *    islands) is exactly zero between islands, and the island-wise step dv agrees with the
 *    dense path's and with LAPACKE's solve of the dense matrix to rounding;
 *  - 100 steps of a scene whose contacts come and go against the dense path (rounding);
 *  - free fall of objects that touch nothing in a many-object scene against MuJoCo 4 and the
 *    analytic semi-implicit Euler fall;
 *  - a world past the old dense limit (nv = 4800 > 4096): it loads, its falling objects match
 *    the analytic fall, and the solve's H and L take the islands' sizes, counted here from the
 *    scene (one 6-dof island per object on the plane): 8 (sum 36 + nv) bytes, not 8 nv^2;
 *  - a pile of 216 touching spheres, one island of 216 trees: the solve's first request for H
 *    and L is exactly its pattern's blocks (counted from the pattern), and 10 steps converge
 *    with hl_grow refusing more than a quarter of the dense n^2 storage. */
#include <lapacke.h>
#include <mujoco/mujoco.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "sap_solve.h"
#include "sim.h"

/* the problem of world w assembled as sapw_solveWorldIslands does up to the islands; 0 when
 * the world has no constraint */
static int assemble(sapSim* s, int w, const sapSolveParams* prm, sapProblem_f64* P) {
  const sapModel* m = s->m;
  sapw_worldProblem_f64(m, &s->d, w, prm, P);
  for (int k = 0; k < P->cd * m->nv; k++) P->rows[k] = 0;
  for (int i = 0; i < P->nc; i++) sapw_buildContact_f64(m, &s->d, w, i, prm, P);
  int ns = sapw_buildDrives_f64(m, &s->d, w, prm, P);
  ns += sapw_buildLimits_f64(m, &s->d, w, prm, P, ns);
  ns += sapw_buildFriction_f64(m, &s->d, w, prm, P, ns);
  ns += sapw_buildEquality_f64(m, &s->d, w, prm, P, ns);
  P->ns = ns;
  if (P->nc + P->ns == 0) return 0;
  sapw_participation_f64(m, &s->d, w, P);
  return 1;
}

/* body a is b or one of b's ancestors */
static int is_ancestor(const sapModel* m, int a, int b) {
  for (; b > 0; b = m->body_parentid[b])
    if (a == b) return 1;
  return a == b;
}

/* brute-force islands: comp[j] = the component id (smallest dof of it), -1 for a non-member */
static void reference_islands(const sapModel* m, const sapProblem_f64* P, int* comp) {
  int nv = m->nv;
  char* link = (char*)calloc((size_t)nv * nv, 1);
  char* seed = (char*)calloc(nv, 1);
  for (int i = 0; i < nv; i++)
    for (int j = 0; j < nv; j++) {
      int bi = m->dof_bodyid[i], bj = m->dof_bodyid[j];
      link[i * nv + j] = is_ancestor(m, bi, bj) || is_ancestor(m, bj, bi);
    }
  int* ch = (int*)malloc(sizeof(int) * nv);
  for (int c = 0; c < P->nc; c++) {
    int n = 0;
    for (int s = 0; s < 2; s++)
      for (int b = m->geom_bodyid[P->con_geom[2 * c + s]]; b > 0; b = m->body_parentid[b])
        for (int j = m->body_dofadr[b]; j < m->body_dofadr[b] + m->body_dofnum[b]; j++) ch[n++] = j;
    for (int a = 0; a < n; a++) {
      seed[ch[a]] = 1;
      for (int b = 0; b < n; b++) link[ch[a] * nv + ch[b]] = 1;
    }
  }
  for (int s = 0; s < P->ns; s++) {
    const int* idx = P->sidx + (long)s * P->snz;
    for (int a = 0; a < P->snz && idx[a] >= 0; a++) {
      seed[idx[a]] = 1;
      for (int b = 0; b < P->snz && idx[b] >= 0; b++) link[idx[a] * nv + idx[b]] = 1;
    }
  }
  for (int j = 0; j < nv; j++)
    if (P->dscale[j] != 0) seed[j] = 1;
  for (int j = 0; j < nv; j++) comp[j] = -2;  // unvisited
  int* stack = (int*)malloc(sizeof(int) * nv);
  for (int j = 0; j < nv; j++) {
    if (comp[j] != -2) continue;
    int top = 0, any = 0;
    stack[top++] = j;
    comp[j] = j;
    int* list = (int*)malloc(sizeof(int) * nv);
    int nl = 0;
    while (top) {
      int a = stack[--top];
      list[nl++] = a;
      any |= seed[a];
      for (int b = 0; b < nv; b++)
        if (link[a * nv + b] && comp[b] == -2) comp[b] = j, stack[top++] = b;
    }
    if (!any)
      for (int k = 0; k < nl; k++) comp[list[k]] = -1;
    free(list);
  }
  free(stack);
  free(ch);
  free(seed);
  free(link);
}

/* the solver's partition equals the reference's (same members, same classes); returns the
 * number of islands */
static int check_partition(const char* name, const sapModel* m, const sapProblem_f64* P) {
  int nv = m->nv, bad = 0;
  int* comp = (int*)malloc(sizeof(int) * nv);
  reference_islands(m, P, comp);
  for (int i = 0; i < nv; i++) {
    if ((comp[i] < 0) != (P->isl[i] < 0)) bad++;
    for (int j = 0; j < nv; j++)
      if (comp[i] >= 0 && comp[j] >= 0 && (comp[i] == comp[j]) != (P->isl[i] == P->isl[j])) bad++;
  }
  // lists: ibeg/idof/iloc consistent with isl, ascending within each island
  for (int k = 0; k < P->nisl; k++)
    for (int p = P->ibeg[k]; p < P->ibeg[k + 1]; p++) {
      int j = P->idof[p];
      if (P->isl[j] != k || P->iloc[j] != p - P->ibeg[k] || (p > P->ibeg[k] && P->idof[p - 1] >= j)) bad++;
    }
  CHECK(bad == 0, "%s: %d disagreements with the brute-force islands", name, bad);
  free(comp);
  return P->nisl;
}

/* the subtree flags of sapw_islands (itree bits 1, 2; iend) against brute force, and A x by
 * sapw_treeDot against the dense row sum bit for bit; then an entry planted in A after a
 * subtree (what a tendon armature linking two branches would put there) clears bit 2 and
 * the dot stays the dense one's. Returns the dofs whose rows stop before their tree's end. */
static int check_subtrees(const char* name, const sapModel* m, sapProblem_f64* P) {
  int nv = m->nv, bad = 0, shorter = 0;
  double* x = (double*)malloc(sizeof(double) * nv);
  double* A2 = (double*)malloc(sizeof(double) * m->nA);  // A by tree blocks (sapModel.dof_Aadr)
  for (int j = 0; j < nv; j++) x[j] = check_uniform(-1, 1) * pow(10, check_uniform(-3, 3));
  for (int plant = 0; plant < 2; plant++) {
    for (int k = 0; k < P->nisl; k++) {
      int o = P->ibeg[k], n = P->ibeg[k + 1] - o, pre = 1, zero = 1;
      for (int a = 1; a < n; a++) {  // pre-order: the parent is the previous dof or its ancestor
        int par = m->dof_parentid[P->idof[o + a]], q = P->idof[o + a - 1];
        while (par >= 0 && q > par) q = m->dof_parentid[q];
        if (par >= 0 && q != par) pre = 0;
      }
      if (((P->itree[k] >> 1) & 1) != pre) bad++;
      if (!pre) continue;
      for (int a = 0; a < n; a++) {
        int i = P->idof[o + a], e = i;
        for (int j = i + 1; j < nv; j++)
          for (int q = j; q >= 0; q = m->dof_parentid[q])
            if (q == i) e = j;
        if (P->iend[o + a] != P->iloc[e]) bad++;
        for (int j = e + 1; j < P->thi[i]; j++) zero &= sapw_Aat(m, P->A, nv, i, j) == 0;
        shorter += !plant && e + 1 < P->thi[i];
      }
      if (((P->itree[k] >> 2) & 1) != zero) bad++;
    }
    for (int i = 0; i < nv; i++) {
      double dense = 0;
      for (int j = 0; j < nv; j++) dense += sapw_Aat(m, P->A, nv, i, j) * x[j];  // the dense row, zeros between trees
      double t = sapw_treeDot_f64(P, P->A, i, x);
      if (P->isl[i] >= 0 && memcmp(&t, &dense, sizeof(double))) bad++;
    }
    if (plant || !shorter) break;
    // plant A[i][e + 1] = A[e + 1][i] = 1e-3 A[i][i] after the first subtree that ends early
    memcpy(A2, P->A, sizeof(double) * m->nA);
    for (int i = 0; i < nv; i++) {
      int k = P->isl[i];
      if (k < 0 || !(P->itree[k] & 4)) continue;
      int e = i + P->iend[P->ibeg[k] + P->iloc[i]] - P->iloc[i];
      if (e + 1 >= P->thi[i]) continue;
      A2[sapw_Aoff(m, nv, i) + e + 1] = A2[sapw_Aoff(m, nv, e + 1) + i] = 1e-3 * sapw_Adiag(m, A2, nv, i);
      break;
    }
    P->A = A2;
    sapw_islands_f64(m, P);
    int still = 0;
    for (int k = 0; k < P->nisl; k++) still += (P->itree[k] & 4) != 0 && P->ibeg[k + 1] - P->ibeg[k] == nv;
    CHECK(P->nisl != 1 || !still, "%s: an entry after a subtree left the island's A x flag set", name);
  }
  CHECK(bad == 0, "%s: %d disagreements in the subtree flags, ends or A x", name, bad);
  free(x);
  free(A2);
  return shorter;
}

/* the step dv at the assembled problem's warm start, island-wise and dense; checks the
 * partition, the dense H's zeros between islands, dv against the dense path and LAPACKE.
 * Returns the number of islands (-1: no constraint) */
static int check_world(const char* name, sapSim* s, int w) {
  const sapModel* m = s->m;
  int nv = m->nv;
  sapSolveParams prm;
  sapc_solveParams(s, s->h, &prm);
  prm.linear_fp32 = 0;
  sapProblem_f64 P;
  if (!assemble(s, w, &prm, &P)) return -1;
  sapw_islands_f64(m, &P);
  int nisl = check_partition(name, m, &P);
  int shorter = check_subtrees(name, m, &P);
  if (strstr(name, "humanoid") || strstr(name, "arm7"))  // trees with branches, or a chain
    CHECK(shorter > 0 || strstr(name, "arm7"), "%s: no row of A stops before its tree's end", name);
  assemble(s, w, &prm, &P);
  sapw_islands_f64(m, &P);
  int* isl = (int*)malloc(sizeof(int) * nv);
  memcpy(isl, P.isl, sizeof(int) * nv);
  sapw_evaluate_f64(&P);
  sapw_hessian_f64(&P);
  int info = sapw_direction_f64(&P);
  CHECK(info == 0, "%s: island factorization failed at dof %d", name, info - 1);
  double* dv = (double*)malloc(sizeof(double) * nv);
  memcpy(dv, P.dv, sizeof(double) * nv);
  // dense path (one block of all dofs)
  assemble(s, w, &prm, &P);
  sapw_evaluate_f64(&P);
  sapw_hessian_f64(&P);
  double* H = (double*)malloc(sizeof(double) * nv * nv);
  double* x = (double*)malloc(sizeof(double) * nv);
  for (int i = 0; i < nv; i++) {
    x[i] = -P.grad[i];
    for (int j = 0; j < nv; j++) H[i * nv + j] = j <= i ? P.H[i * nv + j] : P.H[j * nv + i];
  }
  int cross = 0;
  for (int i = 0; i < nv; i++)
    for (int j = 0; j < i; j++)
      if ((isl[i] < 0 || isl[i] != isl[j]) && H[i * nv + j] != 0) cross++;
  CHECK(cross == 0, "%s: %d nonzero entries of the dense H between islands", name, cross);
  CHECK(sapw_direction_f64(&P) == 0, "%s: dense factorization failed", name);
  CHECK(LAPACKE_dposv(LAPACK_ROW_MAJOR, 'L', nv, 1, H, nv, x, 1) == 0, "%s: dposv", name);
  double scale = 0, e_dense = 0, e_lapack = 0;
  for (int j = 0; j < nv; j++) scale = fmax(scale, fabs(x[j]));
  for (int j = 0; j < nv; j++) {
    e_dense = fmax(e_dense, fabs(dv[j] - P.dv[j]));
    e_lapack = fmax(e_lapack, fabs(dv[j] - x[j]));
  }
  CHECK(e_dense <= 1e-10 * scale + 1e-300 && e_lapack <= 1e-9 * scale + 1e-300,
        "%s: |dv - dense| %g, |dv - lapack| %g of %g", name, e_dense, e_lapack, scale);
  free(H);
  free(x);
  free(dv);
  free(isl);
  return nisl;
}

/* the stage inputs of the solve at the current state */
static void stage(sapSim* s) {
  sapc_kinematics(s);
  sapc_collision(s);
  sapc_freeMotion(s);
}

/* ---- random sphere scenes: the overlap graph's components -------------------------- */

#define NSPH_MAX 40

/* n spheres on and above a plane, each pair clearly overlapping or clearly apart (1 mm), each
 * clearly on the plane or above it; the islands are the overlap graph's components among the
 * spheres with a contact */
static void random_spheres(int n, int seed) {
  check_rng_state = 0x9E3779B97F4A7C15ULL + (unsigned long long)seed * 7919;
  double p[NSPH_MAX][3], r[NSPH_MAX];
  for (int i = 0; i < n; i++) {
    for (int tries = 0;; tries++) {
      r[i] = check_uniform(0.05, 0.15);
      p[i][0] = check_uniform(-0.6, 0.6);
      p[i][1] = check_uniform(-0.6, 0.6);
      p[i][2] = check_uniform(0, 0.6);
      int ok = fabs(p[i][2] - r[i]) > 2e-3;
      for (int k = 0; k < i && ok; k++) {
        double dx = p[i][0] - p[k][0], dy = p[i][1] - p[k][1], dz = p[i][2] - p[k][2];
        ok = fabs(sqrt(dx * dx + dy * dy + dz * dz) - r[i] - r[k]) > 2e-3;
      }
      if (ok) break;
    }
  }
  char* xml = (char*)malloc(200 * (n + 4));
  CHECK(xml != NULL, "out of memory");
  if (!xml) return;
  int len = sprintf(xml, "<mujoco><option timestep='0.002'/><worldbody><geom type='plane' size='5 5 .1'/>");
  for (int i = 0; i < n; i++)
    len += sprintf(xml + len, "<body pos='%.17g %.17g %.17g'><freejoint/><geom type='sphere' size='%.17g'/></body>",
                   p[i][0], p[i][1], p[i][2], r[i]);
  sprintf(xml + len, "</worldbody></mujoco>");
  sapSim* s = fx_sim(xml, 1, "preset=drake contact_margin=0");
  free(xml);
  if (!s) return;
  stage(s);
  // geometric oracle
  int touch[NSPH_MAX], comp[NSPH_MAX];
  for (int i = 0; i < n; i++) touch[i] = p[i][2] < r[i], comp[i] = i;
  for (int i = 0; i < n; i++)
    for (int k = 0; k < n; k++) {
      double dx = p[i][0] - p[k][0], dy = p[i][1] - p[k][1], dz = p[i][2] - p[k][2];
      if (k != i && sqrt(dx * dx + dy * dy + dz * dz) < r[i] + r[k]) touch[i] = 1;
    }
  for (int changed = 1; changed;) {  // label propagation to the smallest index
    changed = 0;
    for (int i = 0; i < n; i++)
      for (int k = 0; k < n; k++) {
        double dx = p[i][0] - p[k][0], dy = p[i][1] - p[k][1], dz = p[i][2] - p[k][2];
        if (sqrt(dx * dx + dy * dy + dz * dz) < r[i] + r[k] && comp[k] < comp[i]) comp[i] = comp[k], changed = 1;
      }
  }
  int want = 0;
  for (int i = 0; i < n; i++) want += touch[i] && comp[i] == i;
  char name[64];
  snprintf(name, sizeof(name), "%d random spheres (seed %d)", n, seed);
  int got = check_world(name, s, 0);
  CHECK(got == (want ? want : -1), "%s: %d islands, the overlap graph has %d", name, got, want);
  // same island for two spheres iff same component (free joint: 6 dofs per body, in order)
  sapSolveParams prm;
  sapc_solveParams(s, s->h, &prm);
  sapProblem_f64 P;
  if (assemble(s, 0, &prm, &P)) {
    sapw_islands_f64(s->m, &P);
    int bad = 0;
    for (int i = 0; i < n; i++)
      for (int k = 0; k < n; k++) {
        int a = P.isl[6 * i], b = P.isl[6 * k];
        if ((a >= 0) != touch[i] || (touch[i] && touch[k] && (a == b) != (comp[i] == comp[k]))) bad++;
      }
    CHECK(bad == 0, "%s: %d sphere pairs in the wrong islands", name, bad);
  }
  sap_free(s);
}

static void test_random_spheres(void) {
  int sizes[] = {3, 8, 17, 30, 40};
  for (int t = 0; t < 5; t++) random_spheres(sizes[t], t + 1);
}

/* ---- known structures ---------------------------------------------------------------- */

static void test_known_structures(void) {
  // three boxes resting apart: 3 islands; a fourth in the air: none
  const char* apart =
      "<mujoco><worldbody><geom type='plane' size='5 5 .1'/>"
      "<body pos='0 0 0.099'><freejoint/><geom type='box' size='.1 .1 .1'/></body>"
      "<body pos='1 0 0.049'><freejoint/><geom type='box' size='.05 .2 .05'/></body>"
      "<body pos='0 1 0.0995'><freejoint/><geom type='capsule' size='.1 .3' euler='0 90 0'/></body>"
      "<body pos='2 2 3'><freejoint/><geom type='sphere' size='.1'/></body>"
      "</worldbody></mujoco>";
  sapSim* s = fx_sim(apart, 1, "preset=drake contact_margin=0");
  if (s) {
    stage(s);
    int n = check_world("three resting, one falling", s, 0);
    CHECK(n == 3, "three resting, one falling: %d islands (3)", n);
    sap_free(s);
  }
  // the same with a connect equality between the first and the third: 2 islands
  const char* connect =
      "<mujoco><worldbody><geom type='plane' size='5 5 .1'/>"
      "<body name='a' pos='0 0 0.099'><freejoint/><geom type='box' size='.1 .1 .1'/></body>"
      "<body pos='1 0 0.049'><freejoint/><geom type='box' size='.05 .2 .05'/></body>"
      "<body name='c' pos='0 1 0.0995'><freejoint/><geom type='capsule' size='.1 .3' euler='0 90 0'/></body>"
      "<body pos='2 2 3'><freejoint/><geom type='sphere' size='.1'/></body>"
      "</worldbody><equality><connect body1='a' body2='c' anchor='0 0.5 0'/></equality></mujoco>";
  s = fx_sim(connect, 1, "preset=drake contact_margin=0");
  if (s) {
    stage(s);
    int n = check_world("connect links two trees", s, 0);
    CHECK(n == 2, "connect links two trees: %d islands (2)", n);
    sap_free(s);
  }
  // two hinge pendulums and a slider, no contacts: a fixed tendon with frictionloss couples
  // the pendulums (1 island), the slider's joint friction is its own (1 island)
  const char* tendon =
      "<mujoco><worldbody>"
      "<body pos='0 0 1'><joint name='h1' type='hinge' axis='0 1 0' frictionloss='0'/>"
      "<geom type='capsule' fromto='0 0 0 0 0 -.5' size='.05'/>"
      "<body pos='0 0 -.5'><joint type='hinge' axis='1 0 0'/><geom type='sphere' size='.05'/></body></body>"
      "<body pos='1 0 1'><joint name='h2' type='hinge' axis='0 1 0'/>"
      "<geom type='capsule' fromto='0 0 0 0 0 -.5' size='.05'/></body>"
      "<body pos='2 0 1'><joint type='slide' axis='1 0 0' frictionloss='.1'/><geom type='sphere' size='.1'/></body>"
      "</worldbody><tendon><fixed frictionloss='0.5'><joint joint='h1' coef='1'/><joint joint='h2' coef='-1'/>"
      "</fixed></tendon></mujoco>";
  s = fx_sim(tendon, 1, "preset=drake contact_margin=0");
  if (s) {
    stage(s);
    int n = check_world("fixed tendon links two pendulums", s, 0);
    CHECK(n == 2, "fixed tendon links two pendulums: %d islands (2)", n);
    sap_free(s);
  }
}

/* ---- scenes after motion: partition, dv; trajectories against the dense path ------------ */

static void moved(const char* scene, int nstep, int nworld) {
  sapSim* s = fx_sim(scene, nworld, "preset=drake");
  if (!s) return;
  fx_stepRandom(s, nstep);
  stage(s);
  for (int w = 0; w < nworld; w++) {
    char name[128];
    snprintf(name, sizeof(name), "%s after %d steps, world %d", scene, nstep, w);
    check_world(name, s, w);
  }
  sap_free(s);
}

static void test_scenes_dv(void) {
  moved("scenes/box_stack.xml", 100, 2);
  moved("scenes/humanoid.xml", 60, 2);
  moved("scenes/arm7.xml", 50, 1);
  moved("scenes/box_pile.xml", 80, 1);
}

/* nstep steps of scene by the stages with the island solve or the dense one */
static double* run_stages(const char* scene, int nstep, int islands) {
  sapSim* s = fx_sim(scene, 1, "preset=drake");
  if (!s) return NULL;
  const sapModel* m = s->m;
  sapSolveParams prm;
  sapc_solveParams(s, s->h, &prm);
  for (int n = 0; n < nstep; n++) {
    stage(s);
    sapw_solveWorldIslands_f64(m, &s->d, 0, &prm, islands);
    sapc_integrate(s);
  }
  double* q = (double*)malloc(sizeof(double) * m->nq);
  memcpy(q, s->d.qpos, sizeof(double) * m->nq);
  sap_free(s);
  return q;
}

static void test_trajectory_vs_dense(void) {
  // the boxes start 1 mm apart: islands split and merge as they land
  const char* scene = "scenes/box_stack.xml";
  double *a = run_stages(scene, 100, 1), *b = run_stages(scene, 100, 0);
  if (a && b) {
    double e = 0;
    for (int i = 0; i < 28; i++) e = fmax(e, fabs(a[i] - b[i]));
    CHECK(e <= 1e-10, "%s: |qpos islands - dense| %g after 100 steps", scene, e);
  }
  free(a);
  free(b);
}

/* bytes of the contacts' Jacobian row cache after H and L (sapw_islandOffsets): per contact its
 * chain length and at most nchain dofs (ints, rounded up to 8 bytes), then cd rows of nchain
 * entries in the objective's precision R */
static long jcache_bytes(const sapModel* m, long nc, int cd, long R) {
  long jm = m->nsolve_chain;
  return (4 * nc * (1 + jm) + 7) / 8 * 8 + R * nc * cd * jm;
}

/* H and L outside the carve (sapSolveParams.hl_grow): the solve asks for exactly its islands'
 * storage in the objective's precision for H, then the linear solve's L, its nv right-hand
 * sides (rounded up to 8 bytes), the block places (an int per pattern block) and the block
 * numbers (an int per pattern word, up to the last block-sparse island's; rounded up to 8
 * bytes), then the contacts' row cache (jcache_bytes): n_k^2 entries for a dense island,
 * sum n_t^2 + sum n_u n_t over the pattern for a block-sparse one (counted here from the
 * islands' sizes and patterns); when the memory is not there (a null answer) the world keeps
 * its velocity with no impulses, flagged FACTORFAIL, plain and screened */
static long island_need(const sapProblem_f64* P, long* nblk, long* ntrk) {
  long e = 0, words = 0;  // words: the patterns' words of the islands up to k (every tree counted)
  *nblk = *ntrk = 0;
  for (int k = 0; k < P->nisl; k++) {
    int o = P->ibeg[k], n = P->ibeg[k + 1] - o, T = P->ntr[k], W = (T + 31) / 32, trees = 0;
    for (int a = 0; a < n; a++) trees += P->tlo[P->idof[o + a]] == P->idof[o + a];
    words += (long)trees * ((trees + 31) / 32);
    if (!T) {
      e += (long)n * n;
      continue;
    }
    *ntrk = words;  // trk reaches to the last block-sparse island's pattern
    for (int v = 0; v < T; v++) {
      int nb = (v + 1 < T ? P->tst[o + v + 1] : n) - P->tst[o + v];
      e += (long)nb * nb;
      for (int u = 0; u < T; u++)
        if (P->tpat[P->poff[k] + (long)v * W + u / 32] >> (u % 32) & 1) {
          e += (long)nb * ((u + 1 < T ? P->tst[o + u + 1] : n) - P->tst[o + u]);
          ++*nblk;
        }
    }
  }
  return e;
}

static long grow_asked;
static void* grow_fail(void* ctx, long bytes) {
  (void)ctx;
  grow_asked = bytes;
  return NULL;
}

static void test_hl_out_of_memory(void) {
  for (int screen = 0; screen < 2; screen++) {
    sapSim* s = fx_sim("scenes/box_pile.xml", 1, screen ? "preset=approx32 contact_screen=1" : "preset=approx32");
    if (!s) return;
    const sapModel* m = s->m;
    sap_step(s, 40);  // the pile lands: contacts in every world
    stage(s);
    sapSolveParams prm;
    sapc_solveParams(s, s->h, &prm);
    sapProblem_f64 P;
    CHECK(assemble(s, 0, &prm, &P), "box_pile has constraints");
    P.sparse = 1;  // as the solve: block-sparse where it pays
    sapw_islands_f64(m, &P);
    long nblk, ntrk, nh = island_need(&P, &nblk, &ntrk);  // approx32: fp64 H, fp32 L
    long need = 8 * nh + (4 * (nh + m->nv) + 7) / 8 * 8 + (4 * (nblk + ntrk) + 7) / 8 * 8 + jcache_bytes(m, P.nc, P.cd, 8);
    CHECK(m->nsolve_chain == 12, "box_pile: %d chain dofs per contact (two free bodies: 12)", m->nsolve_chain);
    CHECK(nh == P.hoff[P.nisl] && nblk == P.nblk, "islands' storage: %ld entries in %ld blocks, counted %ld in %ld",
          P.hoff[P.nisl], P.nblk, nh, nblk);
    prm.hl_grow = grow_fail;
    grow_asked = 0;
    const double* gam = P.gam;  // the impulses' place in world 0's scratch (the same carve)
    if (screen) sapw_solveWorldScreened_f64(m, &s->d, 0, &prm);
    else sapw_solveWorld_f64(m, &s->d, 0, &prm);
    int same = 1, zero = 1;
    for (int j = 0; j < m->nv; j++) same &= s->d.vnext[j] == s->d.qvel[j];
    for (int k = 0; k < 3 * s->d.ncon[0]; k++) zero &= gam[k] == 0;
    CHECK(s->d.world_flags[0] & SAP_WORLD_FACTORFAIL, "screen %d: not flagged (%d)", screen, s->d.world_flags[0]);
    CHECK(!(s->d.world_flags[0] & SAP_WORLD_CONVERGED), "screen %d: flagged converged", screen);
    CHECK(same && zero, "screen %d: velocity kept %d, impulses zero %d", screen, same, zero);
    CHECK(screen || grow_asked == need, "asked %ld bytes, the islands need %ld", grow_asked, need);
    sap_free(s);
  }
}

/* ---- free fall in a many-object scene: MuJoCo 4 and the analytic fall ------------------ */

static void test_free_fall(void) {
  // a row of resting and sliding objects, and falling ones high above them
  char xml[8000];
  int len = sprintf(xml, "<mujoco><option timestep='0.004'/><worldbody><geom type='plane' size='20 20 .1'/>");
  for (int i = 0; i < 12; i++) {
    double x = 0.5 * i, sz = 0.05 + 0.01 * i;
    const char* type = i % 3 == 0 ? "sphere" : i % 3 == 1 ? "box" : "capsule";
    len += sprintf(xml + len,
                   "<body pos='%g 0 %g'><freejoint/><geom type='%s' size='%g %g %g'/></body>"
                   "<body name='f%d' pos='%g 3 %g'><freejoint/><geom type='%s' size='%g %g %g'/></body>",
                   x, sz, type, sz, sz, sz, i, x, 5.0 + i, type, sz, 0.7 * sz, sz);
  }
  sprintf(xml + len, "</worldbody></mujoco>");
  // sap_euler: q' = q + h v', MuJoCo's semi-implicit Euler
  sapSim* s = fx_sim(xml, 1, "preset=drake integration=sap_euler");
  const char* path = fx_tempFile("fall.xml", xml);
  char err[1000] = "";
  mjModel* mj = path ? mj_loadXML(path, NULL, err, sizeof(err)) : NULL;
  CHECK(mj != NULL, "MuJoCo: %s", err);
  if (!s || !mj) {
    if (s) sap_free(s);
    if (mj) mj_deleteModel(mj);
    return;
  }
  mjData* md = mj_makeData(mj);
  // slide the resting ones: initial velocities in x
  double* qvel = (double*)calloc(s->m->nv, sizeof(double));
  for (int i = 0; i < 12; i++) qvel[12 * i] = 0.1 * i;
  sap_set(s, SAP_FIELD_QVEL, NULL, 1, qvel);
  for (int j = 0; j < mj->nv; j++) md->qvel[j] = qvel[j];
  int nstep = 150;
  sap_step(s, nstep);
  for (int n = 0; n < nstep; n++) mj_step(mj, md);
  double h = 0.004, g = 9.81, e_mj = 0, e_an = 0;
  for (int i = 0; i < 12; i++) {
    int adr = 7 * (2 * i + 1) + 2;  // z of falling body i
    double z = s->d.qpos[adr], zan = 5.0 + i - g * h * h * nstep * (nstep + 1) / 2;
    e_mj = fmax(e_mj, fabs(z - md->qpos[adr]));
    e_an = fmax(e_an, fabs(z - zan));
  }
  CHECK(e_mj <= 1e-12 && e_an <= 1e-12, "falling objects: |z - MuJoCo| %g, |z - analytic| %g", e_mj, e_an);
  free(qvel);
  mj_deleteData(md);
  mj_deleteModel(mj);
  sap_free(s);
}

/* N objects on the plane (spheres, boxes, capsules, sizes over a decade, some sliding) in a grid,
 * and M more falling from 5 m and above: every object on the plane is its own island */
static void test_large_world(void) {
  const int N = 700, M = 100;
  size_t cap = (size_t)(N + M) * 160 + 200;
  char* xml = (char*)malloc(cap);
  CHECK(xml != NULL, "out of memory");
  if (!xml) return;
  int len = sprintf(xml, "<mujoco><option timestep='0.004'/><worldbody><geom type='plane' size='60 60 .1'/>");
  for (int i = 0; i < N + M; i++) {
    const char* type = i % 3 == 0 ? "sphere" : i % 3 == 1 ? "box" : "capsule";
    double sz = 0.02 * pow(10, (i % 7) / 6.0), x = 0.8 * (i % 40), y = 0.8 * (i / 40);
    double z = i < N ? sz : 5.0 + 0.01 * i;  // resting on the plane (capsules lie along x), or falling
    len += snprintf(xml + len, cap - len,
                    "<body pos='%g %g %g'%s><freejoint/><geom type='%s' size='%g %g %g'/></body>", x, y, z,
                    i % 3 == 2 ? " euler='0 90 0'" : "", type, sz, 0.7 * sz, sz);
  }
  snprintf(xml + len, cap - len, "</worldbody></mujoco>");
  sapSim* s = fx_sim(xml, 1, "preset=drake integration=sap_euler");
  sapSim* s32 = fx_sim(xml, 1, "preset=approx32");  // fp64 objective, fp32 linear solve: H apart from L
  free(xml);
  if (!s || !s32) {
    if (s) sap_free(s);
    if (s32) sap_free(s32);
    return;
  }
  int nv = s->m->nv;
  CHECK(nv == 6 * (N + M), "nv %d", nv);
  double* qvel = (double*)calloc(nv, sizeof(double));
  for (int i = 0; i < N; i += 5) qvel[6 * i] = 0.2;  // every fifth one slides along x
  sap_set(s, SAP_FIELD_QVEL, NULL, 1, qvel);
  sap_set(s32, SAP_FIELD_QVEL, NULL, 1, qvel);
  int nstep = 20;
  double h = 0.004, g = 9.81;
  /* the shared buffer's size by its growth rule (host/solve.c hl_grow: a need past the buffer
     grows it to the need and a quarter), the need of each step from its contacts: every object
     in contact is an island of one free body (36 entries of H), each contact caches 3 rows of
     12 chain dofs (jcache_bytes). drake: fp64 objective and linear solve, L is H (in place), 8
     bytes an entry and the nv right-hand sides; approx32: H in fp64 and L in fp32 */
  CHECK(s->m->nsolve_chain == 12, "%d chain dofs per contact (one free body: 6, two: 12)", s->m->nsolve_chain);
  long want = 0, want32 = 0, need = 0, nhmax = 0;
  char* touch = (char*)malloc(s->m->nbody);
  for (int n = 0; n < nstep; n++) {
    sap_step(s, 1);
    sap_step(s32, 1);
    CHECK(s->d.world_flags[0] & s32->d.world_flags[0] & SAP_WORLD_CONVERGED, "step %d: flags %d %d", n,
          s->d.world_flags[0], s32->d.world_flags[0]);
    long sz[2];
    for (int k = 0; k < 2; k++) {
      sapSim* sk = k ? s32 : s;
      int nc = sk->d.ncon[0];
      long objects = 0;
      memset(touch, 0, (size_t)sk->m->nbody);
      for (int i = 0; i < nc; i++)
        for (int e = 0; e < 2; e++) {
          int b = sk->m->geom_bodyid[sk->d.con_geom[2 * i + e]];
          if (b > 0 && !touch[b]) touch[b] = 1, objects++;
        }
      long nh = 36 * objects;
      if (nh > nhmax) nhmax = nh;
      sz[k] = (k ? 8 * nh + (4 * (nh + nv) + 7) / 8 * 8 : 8 * (nh + nv)) + jcache_bytes(sk->m, nc, 3, 8);
    }
    if (sz[0] > want) want = sz[0] + sz[0] / 4, need = sz[0];
    if (sz[1] > want32) want32 = sz[1] + sz[1] / 4;
  }
  free(touch);
  CHECK(nhmax == 36L * N, "%ld entries of H at most; every object on the plane in contact: %ld", nhmax, 36L * N);
  double e_an = 0;
  for (int i = N; i < N + M; i++) {
    double z = s->d.qpos[7 * i + 2], zan = 5.0 + 0.01 * i - g * h * h * nstep * (nstep + 1) / 2;
    e_an = fmax(e_an, fabs(z - zan));
  }
  CHECK(e_an <= 1e-12, "falling objects: |z - analytic| %g", e_an);
  long got = (long)sap_bytesShared(s), got32 = (long)sap_bytesShared(s32);
  double dense = 8.0 * nv * (nv + 1);
  CHECK(got == want, "drake: solve buffers %ld bytes; by the steps' needs %ld", got, want);
  CHECK(got32 == want32, "approx32: solve buffers %ld bytes; by the steps' needs %ld", got32, want32);
  printf("  nv %d: solve buffers %ld bytes (islands' need %ld; dense H and L %.0f), approx32 %ld; %llu bytes per "
         "world\n", nv, got, need, dense, got32, sap_bytesPerWorld(s));
  free(qvel);
  sap_free(s);
  sap_free(s32);
}

/* ---- one island of hundreds of trees: H and L by the pattern's blocks ---------------------- */

/* hl_grow within a budget: the bytes asked recorded, a buffer of this test's up to cap bytes */
typedef struct { void* p; long cap, budget, first, most; int calls; } CapBuf;
static void* grow_capped(void* ctx, long bytes) {
  CapBuf* b = (CapBuf*)ctx;
  if (!b->calls++) b->first = bytes;
  if (bytes > b->most) b->most = bytes;
  if (bytes > b->budget) return NULL;
  if (bytes > b->cap) {
    free(b->p);
    b->p = malloc((size_t)bytes);
    b->cap = b->p ? bytes : 0;
  }
  return b->p;
}

/* side^3 spheres of radius 5 cm on a cubic lattice of 9.9 cm (bench/pile.py spheres), each
 * pressing 1 mm into its neighbours, the bottom layer into the plane: one island of every tree from the
 * first step, factored block-sparse. The solve steps it with hl_grow refusing more than a
 * quarter of the island's dense H and L (n^2 entries each): its storage is the pattern's
 * blocks, and its first request is exactly their count (island_need, from the pattern) with
 * the contacts' row cache (jcache_bytes) */
static void test_large_pile(void) {
  const int side = 6, N = side * side * side;
  size_t cap = (size_t)N * 120 + 200;
  char* xml = (char*)malloc(cap);
  CHECK(xml != NULL, "out of memory");
  if (!xml) return;
  int len = sprintf(xml, "<mujoco><option timestep='0.002'/><worldbody><geom type='plane' size='5 5 .1'/>");
  for (int i = 0; i < N; i++)
    len += snprintf(xml + len, cap - len, "<body pos='%g %g %g'><freejoint/><geom type='sphere' size='0.05'/></body>",
                    0.099 * (i % side), 0.099 * (i / side % side), 0.0495 + 0.099 * (i / (side * side)));
  snprintf(xml + len, cap - len, "</worldbody></mujoco>");
  static const char* presets[] = {"preset=drake", "preset=approx32"};
  for (int p = 0; p < 2; p++) {
    sapSim* s = fx_sim(xml, 1, presets[p]);
    if (!s) continue;
    const sapModel* m = s->m;
    int nv = m->nv;
    sapSolveParams prm;
    sapc_solveParams(s, s->h, &prm);
    long lb = prm.linear_fp32 ? 4 : 8, hb = lb == 8 ? 0 : 8;  // approx32: H in fp64 apart from L
    long dense = hb * nv * nv + lb * ((long)nv * nv + nv);
    CapBuf buf = {NULL, 0, dense / 4, 0, 0, 0};
    prm.hl_grow = grow_capped;
    prm.hl_ctx = &buf;
    // the first step's problem: one island of N trees, and the bytes its pattern needs
    stage(s);
    sapProblem_f64 P;
    CHECK(assemble(s, 0, &prm, &P), "%s: pile without contacts", presets[p]);
    P.sparse = 1;  // as the solve
    sapw_islands_f64(m, &P);
    long R = prm.contact_fp32 ? 4 : 8, nblk, ntrk, e = island_need(&P, &nblk, &ntrk);
    long need = (R == lb ? 0 : (R * e + 7) / 8 * 8) + (lb * (e + nv) + 7) / 8 * 8 + (4 * (nblk + ntrk) + 7) / 8 * 8 +
                jcache_bytes(m, P.nc, P.cd, R);
    CHECK(P.nisl == 1 && P.ntr[0] == N && P.ibeg[1] == nv, "%s: %d islands, the first of %d trees and %d dofs",
          presets[p], P.nisl, P.ntr[0], P.ibeg[1]);
    CHECK(buf.first == need, "%s: asked %ld bytes, the pattern's blocks need %ld", presets[p], buf.first, need);
    buf.calls = 0;
    int nstep = 10, conv = 0;
    for (int n = 0; n < nstep; n++) {
      if (n) stage(s);
      if (prm.contact_fp32) sapw_solveWorld_f32(m, &s->d, 0, &prm);
      else sapw_solveWorld_f64(m, &s->d, 0, &prm);
      if (!n) CHECK(buf.first == need, "%s: the solve asked %ld bytes, the pattern's blocks need %ld", presets[p],
                    buf.first, need);
      conv += (s->d.world_flags[0] & SAP_WORLD_CONVERGED) != 0;
      sapc_integrate(s);
    }
    CHECK(conv == nstep && buf.most <= buf.budget,
          "%s: %d of %d steps converged; most asked %ld bytes, budget %ld (dense %ld)", presets[p], conv, nstep,
          buf.most, buf.budget, dense);
    printf("  %s: one island of %d trees (nv %d): H and L %ld bytes at the first step (%ld blocks), at most %ld "
           "over %d steps; dense %ld\n", presets[p], N, nv, need, nblk, buf.most, nstep, dense);
    free(buf.p);
    sap_free(s);
  }
  free(xml);
}

int main(void) {
  RUN(test_known_structures);
  RUN(test_random_spheres);
  RUN(test_scenes_dv);
  RUN(test_trajectory_vs_dense);
  RUN(test_free_fall);
  RUN(test_large_world);
  RUN(test_hl_out_of_memory);
  RUN(test_large_pile);
  return check_summary("test_sap_islands");
}
