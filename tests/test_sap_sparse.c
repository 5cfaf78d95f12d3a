/* Block-sparse Cholesky of an island over its dof trees (kernels/sap_block_t.h, the ordering
 * and symbolic factor of kernels/sap_island_t.h sapw_treeOrder). Oracles:
 *  - the Newton step sapw_direction computes with the block-sparse factor against LAPACKE's
 *    dposv on the same dense matrix, over random tree structures (trees of 1-12 dofs, of 6, of
 *    1-6, of 1, mixes of 1 and 6; 2-60 trees; chains, grids, stars, cliques, random graphs)
 *    and SPD matrices whose condition numbers (LAPACKE dsyev) span decades, in fp64 (H
 *    factored in place in the carve's room and in a separate grown L) and fp32; H goes into
 *    the island's block storage (sapw_islandOffsets) through the assembly's sapw_hAt, over a
 *    NaN-poisoned buffer; the tolerance is Cholesky's forward error bound c n eps kappa;
 *  - the symbolic factor: the nonzero blocks it predicts are exactly those of LAPACKE dpotrf's
 *    dense factor of the tree-permuted matrix (random values: no cancellation), and the
 *    storage holds exactly those blocks and the diagonal ones: its entries, block count and
 *    the bytes asked of hl_grow are counted from dpotrf's factor;
 *  - the assembly's places: one island of spheres on trees of 1, 2, 3 and 6 dofs, its Newton
 *    matrix in the trees' blocks equal to the dense one-block assembly entry for entry (bit
 *    for bit), zero between trees the pattern does not link, both orders, condim 3 and 6;
 *  - the order: minimum degree has no more nonzero blocks and flops than the natural order on
 *    the settled cube pile's tree graph, and less than the dense factorization;
 *  - the step: box_pile (contacts coming and going, one island of 27 cubes once settled) and
 *    box_stack with the block-sparse solve against the dense islands' solve, fp64, to rounding. */
#include <lapacke.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "sap_solve.h"
#include "sim.h"

#define TMAX 64

/* a random tree structure: T trees of sizes 1..12 and a coupling graph of kind k (0 chain,
 * 1 grid, 2 star, 3 clique, 4 random) as adjacency bits (T x W) */
static int random_graph(int kind, int T, unsigned* adj, int W) {
  memset(adj, 0, sizeof(unsigned) * T * W);
  int cols = 1;
  while (cols * cols < T) cols++;
  for (int u = 0; u < T; u++)
    for (int v = 0; v < u; v++) {
      int e = 0;
      if (kind == 0) e = u == v + 1;
      else if (kind == 1) e = (u == v + 1 && u % cols != 0) || u == v + cols;
      else if (kind == 2) e = v == 0;
      else if (kind == 3) e = 1;
      else e = check_uniform(0, 1) < 3.0 / T;
      if (e) {
        adj[u * W + v / 32] |= 1u << (v % 32);
        adj[v * W + u / 32] |= 1u << (u % 32);
      }
    }
  return kind;
}

static int bit(const unsigned* row, int u) { return row[u / 32] >> (u % 32) & 1; }

/* H = A + sum over edges (u, v) of R' R (R: 3 random rows over the dofs of u and v), A
 * block diagonal per tree with eigenvalues 10^(-decades .. 0): SPD, block-sparse on the graph */
static void random_matrix(int T, const int* st, int n, const unsigned* adj, int W, double decades, double* H) {
  memset(H, 0, sizeof(double) * n * n);
  double* Q = (double*)malloc(sizeof(double) * 12 * 12);
  for (int t = 0; t < T; t++) {
    int a = st[t], nb = (t + 1 < T ? st[t + 1] : n) - a;
    // A_t = sum_k lambda_k q_k q_k' with q random (not orthogonal: kappa from dsyev below)
    for (int k = 0; k < nb; k++) {
      double lam = pow(10, -check_uniform(0, decades));
      for (int i = 0; i < nb; i++) Q[i] = check_uniform(-1, 1);
      for (int i = 0; i < nb; i++)
        for (int j = 0; j < nb; j++) H[(a + i) * n + a + j] += lam * Q[i] * Q[j];
    }
    for (int i = 0; i < nb; i++) H[(a + i) * n + a + i] += pow(10, -decades);
  }
  for (int u = 0; u < T; u++)
    for (int v = 0; v < u; v++) {
      if (!bit(adj + u * W, v)) continue;
      int idx[24], m = 0;
      for (int s = 0; s < 2; s++) {
        int t = s ? v : u, a = st[t], nb = (t + 1 < T ? st[t + 1] : n) - a;
        for (int i = 0; i < nb; i++) idx[m++] = a + i;
      }
      double w = pow(10, -check_uniform(0, decades));
      for (int r = 0; r < 3; r++) {
        double R[24];
        for (int i = 0; i < m; i++) R[i] = check_uniform(-1, 1);
        for (int i = 0; i < m; i++)
          for (int j = 0; j < m; j++) H[idx[i] * n + idx[j]] += w * R[i] * R[j];
      }
    }
  free(Q);
}

static double condition(const double* H, int n) {
  double* a = (double*)malloc(sizeof(double) * n * n);
  double* e = (double*)malloc(sizeof(double) * n);
  memcpy(a, H, sizeof(double) * n * n);
  LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'N', 'L', n, a, n, e);
  double k = e[n - 1] / e[0];
  free(a);
  free(e);
  return k;
}

/* hl_grow for the cases: a fresh buffer of the bytes asked, NaN-poisoned (nothing outside what
 * the layout writes may be read) */
static long case_asked;
static void* case_grow(void* ctx, long bytes) {
  void** buf = (void**)ctx;
  case_asked = bytes;
  free(*buf);
  *buf = malloc((size_t)bytes);
  if (*buf) memset(*buf, 0xFF, (size_t)bytes);  // NaN in fp32 and fp64
  return *buf;
}

/* tree sizes of kind sz: 0 random 1..12, 1 all 6 (free bodies: the 6 x 6 update), 2 random
 * 1..6, 3 all 1, 4 mixes of 1 and 6 */
static int tree_size(int sz) {
  if (sz == 0) return 1 + (int)check_uniform(0, 12);
  if (sz == 1) return 6;
  if (sz == 2) return 1 + (int)check_uniform(0, 6);
  if (sz == 3) return 1;
  return check_uniform(0, 1) < 0.5 ? 1 : 6;
}

/* one case: the problem arrays of one island of T trees; mode 0 fp64 in place (H = L, in the
 * carve's nv (nv + 1) entries, trk carved), 1 fp64 with a separate L, 2 fp32 L (both grown by
 * hl_grow, with the block places and numbers: an int per block and per pattern word).
 * The island's storage (sapw_islandOffsets) holds its trees' blocks only; H's lower triangle
 * goes in by sapw_hAt, the assembly's addressing. natural: natural order. Returns the worst
 * relative error over its bound (<= 1 passes) */
static double run_case(int T, int kind, int sz, double decades, int mode, int natural, const char* what) {
  int W = (T + 31) / 32, st[TMAX + 1], n = 0;
  for (int t = 0; t < T; t++) {
    st[t] = n;
    n += tree_size(sz);
  }
  unsigned* adj = (unsigned*)calloc((size_t)(T + 1) * W, sizeof(unsigned));
  random_graph(kind, T, adj, W);
  double* Hf = (double*)malloc(sizeof(double) * n * n);
  random_matrix(T, st, n, adj, W, decades, Hf);
  double kappa = condition(Hf, n);
  // the problem: one island of all n dofs, trees at st
  sapProblem_f64 P;
  memset(&P, 0, sizeof(P));
  int lin_bytes = mode == 2 ? 4 : 8;
  void* buf = NULL;  // grown storage (modes 1, 2)
  void* carve = mode == 0 ? malloc((size_t)lin_bytes * n * (n + 1)) : NULL;
  if (carve) memset(carve, 0xFF, (size_t)lin_bytes * n * (n + 1));
  int *isl = calloc(n, sizeof(int)), *idof = calloc(n, sizeof(int)), *iloc = calloc(n, sizeof(int));
  int *tix = calloc(n, sizeof(int)), ibeg[2] = {0, n}, ntr[2] = {T, 0};
  int *tord = calloc(T, sizeof(int)), *tpos = calloc(T, sizeof(int)), *tbo = calloc(T, sizeof(int));
  int* trk = calloc((size_t)T * W, sizeof(int));
  long hoff[2] = {0, 0}, poff[2] = {0, (long)T * W};
  double *grad = calloc(n, sizeof(double)), *dv = calloc(n, sizeof(double));
  for (int t = 0; t < T; t++)
    for (int i = st[t]; i < (t + 1 < T ? st[t + 1] : n); i++) tix[i] = t;
  for (int i = 0; i < n; i++) {
    idof[i] = iloc[i] = i;
    grad[i] = check_uniform(-1, 1);
  }
  unsigned* pat = (unsigned*)malloc(sizeof(unsigned) * (T + 1) * W);
  memcpy(pat, adj, sizeof(unsigned) * T * W);
  double f = sapw_treeOrder_f64(T, n, st, pat, pat + T * W, W, natural, tord, tpos);
  P.nv = n;
  P.lin_bytes = lin_bytes;
  P.lin_fp32 = mode == 2;
  if (carve) {
    P.L = carve;
    P.H = (double*)carve;
    P.lrhs = (long)n * n;  // the right-hand side after the factor, as in the carve
  } else {
    P.hl_grow = case_grow;
    P.hl_ctx = &buf;
  }
  P.nisl = 1;
  P.isl = isl;
  P.idof = idof;
  P.iloc = iloc;
  P.ibeg = ibeg;
  P.hoff = hoff;
  P.ntr = ntr;
  P.tix = tix;
  P.tst = st;
  P.tord = tord;
  P.tpos = tpos;
  P.tbo = tbo;
  P.poff = poff;
  P.tpat = pat;
  P.trk = trk;
  P.grad = grad;
  P.dv = dv;
  case_asked = 0;
  sapw_islandOffsets_f64(&P);
  CHECK(!P.hl_fail && P.H && P.L && P.bofs, "%s: no storage", what);
  // H's lower triangle as the assembly writes it: cleared, then each entry of a tree or of two
  // linked trees through sapw_hAt
  for (long x = 0; x < hoff[1]; x++) P.H[x] = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j <= i; j++)
      if (tix[i] == tix[j] || bit(adj + tix[i] * W, tix[j])) *sapw_hAt_f64(&P, i, j) += Hf[i * n + j];
  int info = sapw_direction_f64(&P);
  CHECK(info == 0, "%s: block factorization failed at %d", what, info - 1);
  // LAPACKE on the dense matrix
  double* A = (double*)malloc(sizeof(double) * n * n);
  double* x = (double*)malloc(sizeof(double) * n);
  memcpy(A, Hf, sizeof(double) * n * n);
  for (int i = 0; i < n; i++) x[i] = -grad[i];
  CHECK(LAPACKE_dposv(LAPACK_ROW_MAJOR, 'L', n, 1, A, n, x, 1) == 0, "%s: dposv", what);
  double e = 0, s = 0;
  for (int i = 0; i < n; i++) {
    e = fmax(e, fabs(dv[i] - x[i]));
    s = fmax(s, fabs(x[i]));
  }
  // Cholesky's forward error: |dx| / |x| <= c n eps kappa (Higham, Accuracy and Stability, thm 10.4)
  double eps = mode == 2 ? 6e-8 : 1.1e-16, bound = 4 * n * eps * kappa;
  double ratio = e / s / bound;
  CHECK(ratio <= 1, "%s (n %d, kappa %.2g): |dv - dposv| / |x| = %.3g over the bound %.3g", what, n, kappa, e / s,
        bound);
  // the fill: the dense factor of the tree-permuted matrix (LAPACKE dpotrf) has exactly the
  // predicted nonzero blocks
  int* perm = (int*)malloc(sizeof(int) * n);  // permuted dof -> natural dof
  int q = 0;
  for (int P1 = 0; P1 < T; P1++) {
    int v = tord[P1];
    for (int i = st[v]; i < (v + 1 < T ? st[v + 1] : n); i++) perm[q++] = i;
  }
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) A[i * n + j] = Hf[perm[i] * n + perm[j]];
  CHECK(LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', n, A, n) == 0, "%s: dpotrf", what);
  int wrong = 0;
  long pst[TMAX + 1], entries = 0, nz_blocks = 0;  // pst: permuted start of position P1
  for (int P1 = 0, o = 0; P1 < T; P1++) {
    int v = tord[P1];
    pst[P1] = o;
    o += (v + 1 < T ? st[v + 1] : n) - st[v];
  }
  pst[T] = n;
  for (int P1 = 0; P1 < T; P1++) {
    entries += (pst[P1 + 1] - pst[P1]) * (pst[P1 + 1] - pst[P1]);  // the diagonal block
    for (int P2 = 0; P2 < P1; P2++) {
      int nz = 0;
      for (long i = pst[P1]; i < pst[P1 + 1]; i++)
        for (long j = pst[P2]; j < pst[P2 + 1]; j++) nz |= A[i * n + j] != 0;
      wrong += nz != bit(pat + tord[P2] * W, tord[P1]);
      if (nz) entries += (pst[P1 + 1] - pst[P1]) * (pst[P2 + 1] - pst[P2]), nz_blocks++;
    }
  }
  CHECK(wrong == 0, "%s: %d blocks of the dense permuted factor disagree with the symbolic factor", what, wrong);
  CHECK(f > 0 && f <= (double)n * n * n / 3 * (1 + 1e-12) + 3 * n * n, "%s: flop estimate %g for n %d", what, f, n);
  // the storage: exactly dpotrf's nonzero blocks (and the diagonal ones), and what was asked
  long want = mode == 0 ? 0  // each part rounded up to 8 bytes; no row cache without a model
                        : (mode == 2 ? 8 * entries : 0) + (lin_bytes * (entries + n) + 7) / 8 * 8 +
                              (4 * (nz_blocks + T * W) + 7) / 8 * 8;
  CHECK(hoff[1] == entries && P.nblk == nz_blocks && case_asked == want,
        "%s: %ld entries stored, %ld blocks, %ld bytes asked; dpotrf's blocks hold %ld entries in %ld blocks (%ld "
        "bytes)", what, hoff[1], P.nblk, case_asked, entries, nz_blocks, want);
  CHECK(entries + nz_blocks <= (long)n * n, "%s: %ld entries and %ld blocks over the carve's n^2 = %ld", what, entries,
        nz_blocks, (long)n * n);
  free(perm);
  free(A);
  free(x);
  free(pat);
  free(grad);
  free(dv);
  free(tord);
  free(tpos);
  free(tbo);
  free(trk);
  free(isl);
  free(idof);
  free(iloc);
  free(tix);
  free(carve);
  free(buf);
  free(Hf);
  free(adj);
  return ratio;
}

static void test_random_structures(void) {
  static const char* kinds[] = {"chain", "grid", "star", "clique", "random"};
  check_rng_state = 0x5EED5EEDULL;
  int ncase = 0;
  double worst[3] = {0, 0, 0};
  static const char* sizes[] = {"1-12", "6", "1-6", "1", "1|6"};
  for (int kind = 0; kind < 5; kind++)
    for (int rep = 0; rep < 10; rep++) {
      int T = 2 + (int)check_uniform(0, 59), sz = rep < 6 ? 0 : rep - 5;  // tree sizes: 1-12, then the others
      if (rep == 0) T = 2;
      if (rep == 1) T = 60;
      double decades = rep % 3 == 0 ? 0.5 : rep % 3 == 1 ? 3 : 6;
      for (int mode = 0; mode < 3; mode++) {
        double dec = mode == 2 ? fmin(decades, 3) : decades;  // fp32: kappa up to ~1e4
        char what[160];
        snprintf(what, sizeof(what), "%s T %d sizes %s decades %g %s%s", kinds[kind], T, sizes[sz], dec,
                 mode == 0 ? "fp64 in place" : mode == 1 ? "fp64" : "fp32", rep == 5 ? " natural" : "");
        double r = run_case(T, kind, sz, dec, mode, rep == 5, what);
        worst[mode] = fmax(worst[mode], r);
        ncase++;
      }
    }
  printf("  %d cases; worst error / bound: fp64 in place %.3g, fp64 %.3g, fp32 %.3g\n", ncase, worst[0], worst[1],
         worst[2]);
}

/* ---- the cube pile: order and step ----------------------------------------------------- */

static void stage(sapSim* s) {
  sapc_kinematics(s);
  sapc_collision(s);
  sapc_freeMotion(s);
}

/* the islands of world 0 as the solve splits them, with block-sparse mode sparse; returns the
 * largest island's nonzero blocks of L (off-diagonal) and its trees */
static int pile_islands(sapSim* s, int sparse, int* ntree, long* nzblk) {
  const sapModel* m = s->m;
  sapSolveParams prm;
  sapc_solveParams(s, s->h, &prm);
  sapProblem_f64 P;
  sapw_worldProblem_f64(m, &s->d, 0, &prm, &P);
  for (int k = 0; k < P.cd * m->nv; k++) P.rows[k] = 0;
  for (int i = 0; i < P.nc; i++) sapw_buildContact_f64(m, &s->d, 0, i, &prm, &P);
  P.ns = 0;
  sapw_participation_f64(m, &s->d, 0, &P);
  P.sparse = sparse;
  sapw_islands_f64(m, &P);
  int big = 0;
  for (int k = 0; k < P.nisl; k++)
    if (P.ibeg[k + 1] - P.ibeg[k] > P.ibeg[big + 1] - P.ibeg[big]) big = k;
  *ntree = P.ntr[big];
  *nzblk = 0;
  for (long x = P.poff[big]; x < P.poff[big + 1]; x++) *nzblk += __builtin_popcount(P.tpat[x]);
  return P.ibeg[big + 1] - P.ibeg[big];
}

static void test_pile_order(void) {
  sapSim* s = fx_sim("scenes/box_pile.xml", 1, "preset=drake contact_margin=0.02 ncon_max=1000");
  if (!s) return;
  sap_step(s, 300);  // settled: every cube touches its neighbours
  stage(s);
  int tm, tn;
  long zm, zn;
  int n = pile_islands(s, 2, &tm, &zm);
  pile_islands(s, 3, &tn, &zn);
  CHECK(n == 162 && tm == 27 && tn == 27, "pile: largest island %d dofs, %d / %d trees (want one of 162, 27)", n, tm,
        tn);
  CHECK(zm <= zn && zm < 27 * 26 / 2, "pile: minimum degree %ld nonzero blocks, natural order %ld, dense %d", zm, zn,
        27 * 26 / 2);
  printf("  settled pile: L's off-diagonal blocks: minimum degree %ld, natural order %ld, dense %d\n", zm, zn,
         27 * 26 / 2);
  sap_free(s);
}

/* nstep steps of scene by the stages with the given island mode (sapw_solveWorldIslands) */
static double* run_stages(const char* scene, const char* opts, int nstep, int islands, int* nq, int vw) {
  sapSim* s = fx_sim(scene, 1, opts);
  if (!s) return NULL;
  const sapModel* m = s->m;
  if (vw >= 0)  // the initial velocity of tests/test_golden.c's world vw
    for (int i = 0; i < m->nv; i++) s->d.qvel[i] += 0.0625 * (((7 * i + 13 * vw) % 11) - 5);
  sapSolveParams prm;
  sapc_solveParams(s, s->h, &prm);
  for (int n = 0; n < nstep; n++) {
    stage(s);
    sapw_solveWorldIslands_f64(m, &s->d, 0, &prm, islands);
    sapc_integrate(s);
  }
  *nq = m->nq;
  double* q = (double*)malloc(sizeof(double) * (m->nq + m->nv));
  memcpy(q, s->d.qpos, sizeof(double) * m->nq);
  memcpy(q + m->nq, s->d.qvel, sizeof(double) * m->nv);
  sap_free(s);
  return q;
}

static void trajectory(const char* scene, const char* opts, int nstep, int islands, double tol, int vw) {
  int nq = 0;
  double *a = run_stages(scene, opts, nstep, islands, &nq, vw), *b = run_stages(scene, opts, nstep, 1, &nq, vw);
  if (a && b) {
    double e = 0;
    for (int i = 0; i < nq; i++) e = fmax(e, fabs(a[i] - b[i]));
    CHECK(e <= tol, "%s (%s) islands mode %d: |qpos sparse - dense| %g after %d steps", scene, opts, islands, e, nstep);
    printf("  %s (%s, golden world %d) mode %d: |qpos sparse - dense| %.3g after %d steps\n", scene, opts, vw, islands, e,
           nstep);
  }
  free(a);
  free(b);
}

static void test_trajectories(void) {
  // fp64 throughout (drake): the paths differ by the order of the factor's sums only
  trajectory("scenes/box_pile.xml", "preset=drake contact_margin=0.02 ncon_max=1000", 120, 3, 1e-10, -1);
  trajectory("scenes/box_pile.xml", "preset=drake contact_margin=0.02 ncon_max=1000", 120, 4, 1e-10, -1);
  trajectory("scenes/box_pile.xml", "preset=drake contact_margin=0.02", 120, 2, 1e-10, -1);
  // the golden runs of box_stack (re-pinned: its islands of stacked boxes factor block-sparse)
  static const char* presets[] = {"preset=drake", "preset=approx64", "preset=approx32"};
  // fp64 factors: 1e-10 as above; approx32 factors in fp32 (eps 6e-8): the two orders' rounding of
  // each Newton step is ~1e-7 relative, 1e-6 m over 100 steps of a 0.1 m-scale stack
  static const double tol[] = {1e-10, 1e-10, 1e-6};
  for (int p = 0; p < 3; p++)
    for (int w = 0; w < 8; w++) trajectory("scenes/box_stack.xml", presets[p], 100, 2, tol[p], w);
}

/* ---- trees of unlike sizes in one island: the assembly's places ------------------------ */

/* 48 spheres on a 4 x 4 x 3 lattice pressing 1 mm into their neighbours and the plane, each its
 * own tree of 6 (free), 3 (slides x, y, z), 2 (slide x, hinge y) or 1 (slide z) dofs: one
 * island of 48 trees of unlike sizes. Its Newton matrix assembled into the trees' blocks
 * (always block-sparse, minimum degree and natural order) must hold exactly the dense
 * assembly's entries (the one-block path: the same sums, so bit for bit) at every place of a
 * tree or of a linked pair, and the dense matrix must be zero between trees the pattern does
 * not link; the Newton step against the dense one's to rounding. */
static void unlike_trees(int condim) {
  const int side = 4, N = side * side * 3;
  static const char* joints[4] = {"<freejoint/>",
                                  "<joint type='slide' axis='1 0 0'/><joint type='slide' axis='0 1 0'/>"
                                  "<joint type='slide' axis='0 0 1'/>",
                                  "<joint type='slide' axis='1 0 0'/><joint type='hinge' axis='0 1 0'/>",
                                  "<joint type='slide' axis='0 0 1'/>"};
  char* xml = (char*)malloc((size_t)N * 300 + 200);
  CHECK(xml != NULL, "out of memory");
  if (!xml) return;
  int len = sprintf(xml, "<mujoco><option timestep='0.002'/><worldbody><geom type='plane' size='5 5 .1'/>");
  for (int i = 0; i < N; i++)
    len += sprintf(xml + len, "<body pos='%g %g %g'>%s<geom type='sphere' size='0.05' condim='%d'/></body>",
                   0.099 * (i % side), 0.099 * (i / side % side), 0.0495 + 0.099 * (i / (side * side)),
                   joints[(i * 7 / 3) % 4], condim);
  sprintf(xml + len, "</worldbody></mujoco>");
  sapSim* s = fx_sim(xml, 1, "preset=drake");
  free(xml);
  if (!s) return;
  const sapModel* m = s->m;
  int nv = m->nv;
  stage(s);
  sapSolveParams prm;
  sapc_solveParams(s, s->h, &prm);
  double* Hd = (double*)malloc(sizeof(double) * nv * nv);
  double *dvd = (double*)malloc(sizeof(double) * nv), *dvb = (double*)malloc(sizeof(double) * nv);
  for (int order = 0; order < 2; order++) {
    sapProblem_f64 P;
    long differ = 0, outside = 0, linked = 0;
    for (int pass = 0; pass < 2; pass++) {  // 0: one dense block; 1: the islands' trees' blocks
      sapw_worldProblem_f64(m, &s->d, 0, &prm, &P);
      for (int k = 0; k < P.cd * nv; k++) P.rows[k] = 0;
      for (int i = 0; i < P.nc; i++) sapw_buildContact_f64(m, &s->d, 0, i, &prm, &P);
      P.ns = 0;
      sapw_participation_f64(m, &s->d, 0, &P);
      if (pass) {
        P.sparse = order ? 3 : 2;  // always block-sparse: minimum degree, natural order
        sapw_islands_f64(m, &P);
      } else
        sapw_islandsOne_f64(&P);
      for (long x = 0; x < P.hoff[P.nisl]; x++) P.H[x] = NAN;  // every place the assembly leaves is read as NaN
      sapw_evaluate_f64(&P);
      sapw_hessian_f64(&P);
      if (!pass) memcpy(Hd, P.H, sizeof(double) * nv * nv);
      else  // before the factorization (in place: H is L)
        for (int i = 0; i < nv; i++)
          for (int j = 0; j <= i; j++) {
            int k = P.isl[i], u = P.tix[i], v = P.tix[j], W = (P.ntr[k] + 31) / 32;
            const unsigned* pat = P.tpat + P.poff[k];
            int in = u == v || (pat[(long)u * W + v / 32] >> (v % 32) & 1) || (pat[(long)v * W + u / 32] >> (u % 32) & 1);
            if (!in) {
              outside += Hd[i * nv + j] != 0;
              continue;
            }
            linked += u != v;
            differ += !(*sapw_hAt_f64(&P, i, j) == Hd[i * nv + j]);
          }
      CHECK(sapw_direction_f64(&P) == 0, "unlike trees: factorization failed (pass %d)", pass);
      memcpy(pass ? dvb : dvd, P.dv, sizeof(double) * nv);
    }
    int k = P.isl[0], T = P.ntr[k], sizes[7] = {0};
    CHECK(P.nisl == 1 && T == N && P.ibeg[1] == nv, "unlike trees: %d islands, %d trees, %d dofs (want 1, %d, %d)",
          P.nisl, T, P.ibeg[1], N, nv);
    if (!(P.nisl == 1 && T == N)) break;
    for (int t = 0; t < T; t++) sizes[(t + 1 < T ? P.tst[t + 1] : nv) - P.tst[t]]++;
    double e = 0, sc = 0;
    for (int j = 0; j < nv; j++) {
      e = fmax(e, fabs(dvb[j] - dvd[j]));
      sc = fmax(sc, fabs(dvd[j]));
    }
    CHECK(sizes[1] && sizes[2] && sizes[3] && sizes[6], "unlike trees: sizes 1/2/3/6: %d %d %d %d", sizes[1], sizes[2],
          sizes[3], sizes[6]);
    CHECK(P.cd == condim, "unlike trees: %d rows per contact, want %d", P.cd, condim);
    CHECK(differ == 0 && outside == 0 && linked > 0,
          "unlike trees (%s, condim %d): %ld entries differ from the dense assembly, %ld nonzero outside the pattern "
          "(%ld linked)", order ? "natural" : "minimum degree", condim, differ, outside, linked);
    CHECK(e <= 1e-10 * sc, "unlike trees (condim %d): |dv blocks - dense| %g of %g", condim, e, sc);
    printf("  unlike trees (%s order, condim %d): %d trees (%d of 1, %d of 2, %d of 3, %d of 6 dofs), %ld entries "
           "between trees, %ld blocks: equal to the dense assembly; |dv - dense| %.2g of %.2g\n",
           order ? "natural" : "minimum degree", condim, T, sizes[1], sizes[2], sizes[3], sizes[6], linked, P.nblk, e,
           sc);
  }
  free(Hd);
  free(dvd);
  free(dvb);
  sap_free(s);
}

static void test_unlike_trees(void) {
  unlike_trees(3);
  unlike_trees(6);  // torsion and rolling rows: the cd > 3 branch
}

int main(void) {
  RUN(test_random_structures);
  RUN(test_pile_order);
  RUN(test_unlike_trees);
  RUN(test_trajectories);
  return check_summary("test_sap_sparse");
}
