/* Per-world blocked Cholesky factorization and solve (template body; include via
 * sap_solve.h). Left-looking by block columns of width bs as in sapwarp_spec.md §6.5:
 *   A_kk -= sum_{j<k} L_kj L_kj',  L_kk = chol(A_kk),  L_ik = (A_ik - sum_{j<k} L_ij L_kj') L_kk^-T
 * Row-major, lower triangle in place (the strict upper triangle is not touched).
 * Reference version for one thread per world; unlike SAP Warp (§13.13) a non-positive
 * or non-finite pivot is detected and reported instead of producing NaN. */

/* L[i][j] = (A[i][j] - sum_{p=p0}^{j-1} L[i][p] L[j][p]) (/ L[j][j] off the diagonal) */
SAP_HD SAP_REAL SAPT(sapw_cholDot)(const SAP_REAL* a, int lda, int i, int j, int p0, int p1) {
  SAP_REAL s = 0;
  for (int p = p0; p < p1; p++) s += a[i * lda + p] * a[j * lda + p];
  return s;
}

#if !defined(__CUDACC__)
/* CPU (gcc) form of four sapw_cholDot's sharing row j: s[t] = sum_{p=p0}^{p1-1} a[i_t][p]
 * a[j][p] for the rows i_t = ri[t], each summed in its own register in the same order as
 * sapw_cholDot (the same value bit for bit); row j's entry loaded once for the four */
SAP_HD void SAPT(sapw_cholDot4)(const SAP_REAL* a, int lda, const int* ri, int j, int p0, int p1, SAP_REAL* s) {
  const SAP_REAL *a0 = a + (long)ri[0] * lda, *a1 = a + (long)ri[1] * lda, *a2 = a + (long)ri[2] * lda,
                 *a3 = a + (long)ri[3] * lda, *aj = a + (long)j * lda;
  SAP_REAL s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (int p = p0; p < p1; p++) {
    SAP_REAL x = aj[p];
    s0 += a0[p] * x;
    s1 += a1[p] * x;
    s2 += a2[p] * x;
    s3 += a3[p] * x;
  }
  s[0] = s0;
  s[1] = s1;
  s[2] = s2;
  s[3] = s3;
}

/* rows [i0, i1) of column j: a[i][j] = (a[i][j] - sapw_cholDot(a, lda, i, j, p0, p1)) / d, or
 * without the division (d = 0: a[i][j] -= the dot), four rows at a time, then two, then one;
 * each entry the plain loops' operations in their order */
SAP_HD void SAPT(sapw_cholColumn)(SAP_REAL* a, int lda, int i0, int i1, int j, int p0, int p1, SAP_REAL d) {
  int i = i0;
  for (; i + 3 < i1; i += 4) {
    int ri[4] = {i, i + 1, i + 2, i + 3};
    SAP_REAL s[4];
    SAPT(sapw_cholDot4)(a, lda, ri, j, p0, p1, s);
    for (int t = 0; t < 4; t++) {
      SAP_REAL* e = a + (long)(i + t) * lda + j;
      *e = d != 0 ? (*e - s[t]) / d : *e - s[t];
    }
  }
  if (i + 1 < i1) {  // two rows
    const SAP_REAL *a0 = a + (long)i * lda, *a1 = a0 + lda, *aj = a + (long)j * lda;
    SAP_REAL s0 = 0, s1 = 0;
    for (int p = p0; p < p1; p++) {
      s0 += a0[p] * aj[p];
      s1 += a1[p] * aj[p];
    }
    SAP_REAL *e0 = a + (long)i * lda + j, *e1 = e0 + lda;
    *e0 = d != 0 ? (*e0 - s0) / d : *e0 - s0;
    *e1 = d != 0 ? (*e1 - s1) / d : *e1 - s1;
    i += 2;
  }
  if (i < i1) {
    SAP_REAL* e = a + (long)i * lda + j;
    SAP_REAL s = SAPT(sapw_cholDot)(a, lda, i, j, p0, p1);
    *e = d != 0 ? (*e - s) / d : *e - s;
  }
}
#endif

/* factor the leading n x n block of a (leading dimension lda) in place: a = L L'.
 * returns 0, or 1 + the index of the first non-positive pivot. On the CPU the entries of a
 * column are computed four rows at a time (sapw_cholColumn); every entry gets the same
 * operations in the same order as in the plain loops (the GPU's), and the three phases of a
 * block column run in the same order, so the factor, the failed pivot and the matrix left
 * behind by a failure are the same bit for bit. */
SAP_HD int SAPT(sapw_cholFactor)(SAP_REAL* a, int n, int lda, int bs) {
  if (bs < 1) bs = 1;
  for (int k0 = 0; k0 < n; k0 += bs) {
    int k1 = k0 + bs < n ? k0 + bs : n;
#if !defined(__CUDACC__)
    // block column k: the finished block columns j < k subtracted from rows i >= k0 (row i
    // of the diagonal block up to its own column)
    if (k0 > 0)
      for (int j = k0; j < k1; j++) SAPT(sapw_cholColumn)(a, lda, j, n, j, 0, k0, 0);
    // diagonal block: unblocked Cholesky
    for (int j = k0; j < k1; j++) {
      SAP_REAL d = a[j * lda + j] - SAPT(sapw_cholDot)(a, lda, j, j, k0, j);
      if (!(d > 0) || !isfinite(d)) return j + 1;
      d = SAP_SQRT(d);
      a[j * lda + j] = d;
      SAPT(sapw_cholColumn)(a, lda, j + 1, k1, j, k0, j, d);
    }
    // panel below, by columns (row i's column j needs its columns k0..j-1, done before)
    for (int j = k0; j < k1; j++) SAPT(sapw_cholColumn)(a, lda, k1, n, j, k0, j, a[j * lda + j]);
#else
    // block column k: subtract the finished block columns j < k from rows i >= k0
    for (int i = k0; i < n; i++) {
      int jend = i < k1 ? i + 1 : k1;
      for (int j = k0; j < jend; j++) a[i * lda + j] -= SAPT(sapw_cholDot)(a, lda, i, j, 0, k0);
    }
    // diagonal block: unblocked Cholesky
    for (int j = k0; j < k1; j++) {
      SAP_REAL d = a[j * lda + j] - SAPT(sapw_cholDot)(a, lda, j, j, k0, j);
      if (!(d > 0) || !isfinite(d)) return j + 1;
      d = SAP_SQRT(d);
      a[j * lda + j] = d;
      for (int i = j + 1; i < k1; i++)
        a[i * lda + j] = (a[i * lda + j] - SAPT(sapw_cholDot)(a, lda, i, j, k0, j)) / d;
    }
    // panel below: L_ik = A_ik L_kk^-T (triangular solve on the transpose)
    for (int i = k1; i < n; i++)
      for (int j = k0; j < k1; j++)
        a[i * lda + j] = (a[i * lda + j] - SAPT(sapw_cholDot)(a, lda, i, j, k0, j)) / a[j * lda + j];
#endif
  }
  return 0;
}

/* solve L L' x = b in place (x holds b on entry): forward L y = b, backward L' x = y */
SAP_HD void SAPT(sapw_cholSolve)(const SAP_REAL* L, int n, int lda, SAP_REAL* x) {
  for (int i = 0; i < n; i++) {
    SAP_REAL s = x[i];
    for (int p = 0; p < i; p++) s -= L[i * lda + p] * x[p];
    x[i] = s / L[i * lda + i];
  }
  for (int i = n - 1; i >= 0; i--) {
    SAP_REAL s = x[i];
    for (int p = i + 1; p < n; p++) s -= L[p * lda + i] * x[p];
    x[i] = s / L[i * lda + i];
  }
}

/* ---- tree-sparse factorization (Featherstone, Rigid Body Dynamics Algorithms, 2008, §6.5;
 * MuJoCo's mj_factorM) ----
 * A matrix whose row i holds nonzeros only at i and its ancestors (par[i], par[par[i]], ...,
 * -1 ends; par[i] < i) - a mass matrix over a dof forest, or a Newton matrix whose
 * constraints each act along one root path - factors as a = L' L with the same pattern when
 * the dofs are eliminated from the leaves up: no fill, sum_i depth_i^2 / 2 multiply-adds
 * instead of n^3 / 6. The ancestors of a dof run in segments of consecutive indices (a
 * body's dofs, a chain of one-dof bodies): seg[j] is the first index of j's segment
 * (par[x] = x - 1 for seg[j] < x <= j), and the loops run over each segment contiguously.
 * Row-major, lower triangle in place; the entries off the pattern are neither read nor
 * written. */

/* seg of par over [k0, k1) (one forest: par[j] < k0 only at its roots, where it is -1) */
SAP_HD void SAPT(sapw_treeSegments)(const int* par, int k0, int k1, int* seg) {
  for (int j = k0; j < k1; j++) seg[j] = j > k0 && par[j] == j - 1 ? seg[j - 1] : j;
}

/* 1 if every entry of rows [k0, k1), columns [k0, row) of a off the ancestor pattern is
 * exactly zero */
SAP_HD int SAPT(sapw_treePattern)(const SAP_REAL* a, int k0, int k1, int lda, const int* par, const int* seg) {
  for (int i = k0 + 1; i < k1; i++) {
    const SAP_REAL* ai = a + (long)i * lda;
    int next = i;  // entries (j, next) lie between two segments of i's ancestors
    for (int j = par[i];; j = par[next]) {
      int x = j >= k0 ? j + 1 : k0;
#if !defined(__CUDACC__)
      for (; x + 3 < next; x += 4)  // CPU: four entries a test (the same answer)
        if ((ai[x] != 0) | (ai[x + 1] != 0) | (ai[x + 2] != 0) | (ai[x + 3] != 0)) return 0;
#endif
      for (; x < next; x++)
        if (ai[x] != 0) return 0;
      if (j < 0) break;
      next = seg[j];
    }
  }
  return 1;
}

/* rows [k0, k1) of a = L' L in place, from the leaves up; returns 0, or 1 + the index of the
 * first non-positive or non-finite pivot (in elimination order) */
SAP_HD int SAPT(sapw_treeFactor)(SAP_REAL* a, int k0, int k1, int lda, const int* par, const int* seg) {
  for (int k = k1 - 1; k >= k0; k--) {
    SAP_REAL* ak = a + (long)k * lda;
    SAP_REAL d = ak[k];
    if (!(d > 0) || !isfinite(d)) return k + 1;
    d = SAP_SQRT(d);
    ak[k] = d;
    for (int j = par[k]; j >= 0; j = par[seg[j]])
      for (int x = seg[j]; x <= j; x++) ak[x] /= d;
    // the ancestors' rows lose L_k' L_k: a[i][x] -= L[k][i] L[k][x], x = i and its ancestors
    for (int i = par[k]; i >= 0; i = par[i]) {
      SAP_REAL lki = ak[i];
      SAP_REAL* ai = a + (long)i * lda;
      for (int j = i; j >= 0; j = par[seg[j]])
        for (int x = seg[j]; x <= j; x++) ai[x] -= lki * ak[x];
    }
  }
  return 0;
}

/* 1 if the forest over [k0, k1) is in depth-first pre-order (MuJoCo's dof order): each dof's
 * parent is the previous dof or one of its ancestors, so the descendants of i are the run
 * after i whose parents are >= i (sapw_treeFactorPre) */
SAP_HD int SAPT(sapw_treePreorder)(const int* par, int k0, int k1) {
  for (int k = k0 + 1; k < k1; k++) {
    int q = k - 1;
    if (par[k] < 0) continue;
    while (q > par[k]) q = par[q];
    if (q != par[k]) return 0;
  }
  return 1;
}

/* end[j] = the last descendant of j (j itself at a leaf) over [k0, k1), a forest in pre-order:
 * j's subtree is the run [j, end[j]] */
SAP_HD void SAPT(sapw_treeEnds)(const int* par, int k0, int k1, int* end) {
  for (int j = k0; j < k1; j++) end[j] = j;
  for (int j = k1 - 1; j > k0; j--)  // children after parents: end[j] is final here
    if (par[j] >= 0 && end[j] > end[par[j]]) end[par[j]] = end[j];
}

/* sapw_treeFactor left-looking, for a forest in pre-order (sapw_treePreorder; end from
 * sapw_treeEnds): row i, from the leaves up, first takes the updates of its descendants k
 * (the run (i, end[i]]), from the
 * last one up, the order in which sapw_treeFactor applies them, each entry summed in a
 * register:  a[i][x] -= L[k][i] L[k][x],  x = i and its ancestors,  k = e, e - 1, ..., i + 1;
 * then its pivot and scaling. The same operations in the same order on every entry, so the
 * factor and the failed pivot are sapw_treeFactor's bit for bit; one short loop per entry
 * instead of a loop per (descendant, ancestor) pair (fewer loop set-ups on short segments). */
#if !defined(__CUDACC__)
/* CPU (gcc) form of sapw_treeFactorPre's updates of row i: the entries of the segment ending
 * at j and (one = 0) of every segment above it, four, two, then one at a time, each in its own
 * register, the descendant walk and L[k][i] shared, the division by the pivot d applied at the
 * store (d = 0: none). Per entry the same operations in the same order as the plain loops. */
SAP_HD void SAPT(sapw_treeRowPre)(SAP_REAL* ai, const SAP_REAL* ae, int i, int j, int lda, const int* par,
                                  const int* seg, SAP_REAL d, int one) {
  for (; j >= 0; j = one ? -1 : par[seg[j]]) {
    int x = seg[j];
    for (; x + 3 <= j; x += 4) {
      SAP_REAL t0 = ai[x], t1 = ai[x + 1], t2 = ai[x + 2], t3 = ai[x + 3];
      for (const SAP_REAL* ak = ae; ak != ai; ak -= lda) {
        SAP_REAL l = ak[i];
        t0 -= l * ak[x];
        t1 -= l * ak[x + 1];
        t2 -= l * ak[x + 2];
        t3 -= l * ak[x + 3];
      }
      if (d != 0) {
        t0 /= d;
        t1 /= d;
        t2 /= d;
        t3 /= d;
      }
      ai[x] = t0;
      ai[x + 1] = t1;
      ai[x + 2] = t2;
      ai[x + 3] = t3;
    }
    for (; x + 1 <= j; x += 2) {
      SAP_REAL t0 = ai[x], t1 = ai[x + 1];
      for (const SAP_REAL* ak = ae; ak != ai; ak -= lda) {
        SAP_REAL l = ak[i];
        t0 -= l * ak[x];
        t1 -= l * ak[x + 1];
      }
      if (d != 0) {
        t0 /= d;
        t1 /= d;
      }
      ai[x] = t0;
      ai[x + 1] = t1;
    }
    if (x <= j) {
      SAP_REAL t = ai[x];
      for (const SAP_REAL* ak = ae; ak != ai; ak -= lda) t -= ak[i] * ak[x];
      ai[x] = d != 0 ? t / d : t;
    }
  }
}

/* the CPU form: row i's own segment (its pivot entry the last) updated, the pivot taken and
 * that segment divided, then the ancestors' segments updated with the division fused (after
 * a failed pivot: undivided, as in the plain form, so the matrix left behind is the same) */
SAP_HD int SAPT(sapw_treeFactorPre)(SAP_REAL* a, int k0, int k1, int lda, const int* par, const int* seg,
                                     const int* end) {
  for (int i = k1 - 1; i >= k0; i--) {
    SAP_REAL* ai = a + (long)i * lda;
    const SAP_REAL* ae = a + (long)end[i] * lda;  // the descendants of i: (i, end[i]], none at a leaf
    int s = seg[i], fail;
    if (ae != ai) SAPT(sapw_treeRowPre)(ai, ae, i, i, lda, par, seg, 0, 1);  // i's segment alone
    SAP_REAL d = ai[i];
    fail = !(d > 0) || !isfinite(d);
    if (!fail) {
      d = SAP_SQRT(d);
      ai[i] = d;
      for (int x = s; x < i; x++) ai[x] /= d;
    }
    SAPT(sapw_treeRowPre)(ai, ae, i, par[s], lda, par, seg, fail ? 0 : d, 0);
    if (fail) return i + 1;
  }
  return 0;
}
#else
SAP_HD int SAPT(sapw_treeFactorPre)(SAP_REAL* a, int k0, int k1, int lda, const int* par, const int* seg,
                                     const int* end) {
  for (int i = k1 - 1; i >= k0; i--) {
    SAP_REAL* ai = a + (long)i * lda;
    int e = end[i];  // the descendants of i: (i, e]
    if (e > i) {
      const SAP_REAL* ae = a + (long)e * lda;
      for (int j = i; j >= 0; j = par[seg[j]])
        for (int x = seg[j]; x <= j; x++) {
          SAP_REAL t = ai[x];
          for (const SAP_REAL* ak = ae; ak != ai; ak -= lda) t -= ak[i] * ak[x];
          ai[x] = t;
        }
    }
    SAP_REAL d = ai[i];
    if (!(d > 0) || !isfinite(d)) return i + 1;
    d = SAP_SQRT(d);
    ai[i] = d;
    for (int j = par[i]; j >= 0; j = par[seg[j]])
      for (int x = seg[j]; x <= j; x++) ai[x] /= d;
  }
  return 0;
}

#endif

/* solve L' L x = b over [k0, k1) in place (x holds b on entry): L' y = b from the leaves up,
 * L x = y from the roots down */
SAP_HD void SAPT(sapw_treeSolve)(const SAP_REAL* L, int k0, int k1, int lda, const int* par, const int* seg,
                                 SAP_REAL* x) {
  for (int k = k1 - 1; k >= k0; k--) {
    const SAP_REAL* Lk = L + (long)k * lda;
    SAP_REAL y = x[k] / Lk[k];
    x[k] = y;
    for (int j = par[k]; j >= 0; j = par[seg[j]])
      for (int i = seg[j]; i <= j; i++) x[i] -= Lk[i] * y;
  }
  for (int k = k0; k < k1; k++) {
    const SAP_REAL* Lk = L + (long)k * lda;
    SAP_REAL s = x[k];
    for (int j = par[k]; j >= 0; j = par[seg[j]])
      for (int i = seg[j]; i <= j; i++) s -= Lk[i] * x[i];
    x[k] = s / Lk[k];
  }
}

/* sapw_treeSolve for a forest in pre-order (end from sapw_treeEnds, as sapw_treeFactorPre):
 * the forward pass L' y = b left-looking, row i taking the updates of its descendants k (the
 * run (i, end[i]]) from the last one up in a register: y_i = (b_i - sum_k L[k][i] y_k) / L[i][i],
 * k = e, e - 1, ..., i + 1, the order in which sapw_treeSolve subtracts them from x[i], with
 * the same products; the backward pass is sapw_treeSolve's. Bit for bit sapw_treeSolve's x,
 * without the parent walks of the forward pass. */
SAP_HD void SAPT(sapw_treeSolvePre)(const SAP_REAL* L, int k0, int k1, int lda, const int* par, const int* seg,
                                    const int* end, SAP_REAL* x) {
  for (int i = k1 - 1; i >= k0; i--) {
    const SAP_REAL* Li = L + (long)i * lda;
    SAP_REAL t = x[i];
    for (int k = end[i]; k > i; k--) t -= L[(long)k * lda + i] * x[k];
    x[i] = t / Li[i];
  }
  for (int k = k0; k < k1; k++) {
    const SAP_REAL* Lk = L + (long)k * lda;
    SAP_REAL s = x[k];
    for (int j = par[k]; j >= 0; j = par[seg[j]])
      for (int i = seg[j]; i <= j; i++) s -= Lk[i] * x[i];
    x[k] = s / Lk[k];
  }
}

/* ---- one chain: the tree-sparse factorization of a tree whose dofs form one segment (a
 * free or ball body alone, a chain of one-dof bodies: par[j] = j - 1 over (k0, k1), the
 * pattern the whole lower triangle) ----
 * The same operations in the same order as sapw_treeFactor / sapw_treeSolve on such a tree
 * (bitwise the same result) without the parent walks; a 6-dof chain (a free body alone)
 * runs unrolled with its block in registers (sapw_chainFactorSolve6). */

/* rows [k0, k0 + n) of a = L' L in place (sapw_treeFactor over one segment) */
SAP_HD int SAPT(sapw_chainFactorN)(SAP_REAL* a, int k0, int n, int lda) {
  for (int k = n - 1; k >= 0; k--) {
    SAP_REAL* ak = a + (long)(k0 + k) * lda + k0;
    SAP_REAL d = ak[k];
    if (!(d > 0) || !isfinite(d)) return k0 + k + 1;
    d = SAP_SQRT(d);
    ak[k] = d;
    for (int x = 0; x < k; x++) ak[x] /= d;
    for (int i = k - 1; i >= 0; i--) {
      SAP_REAL lki = ak[i];
      SAP_REAL* ai = a + (long)(k0 + i) * lda + k0;
      for (int x = 0; x <= i; x++) ai[x] -= lki * ak[x];
    }
  }
  return 0;
}

/* solve L' L x = b over [k0, k0 + n) in place (sapw_treeSolve over one segment) */
SAP_HD void SAPT(sapw_chainSolveN)(const SAP_REAL* L, int k0, int n, int lda, SAP_REAL* x) {
  x += k0;
  for (int k = n - 1; k >= 0; k--) {
    const SAP_REAL* Lk = L + (long)(k0 + k) * lda + k0;
    SAP_REAL y = x[k] / Lk[k];
    x[k] = y;
    for (int i = 0; i < k; i++) x[i] -= Lk[i] * y;
  }
  for (int k = 0; k < n; k++) {
    const SAP_REAL* Lk = L + (long)(k0 + k) * lda + k0;
    SAP_REAL s = x[k];
    for (int i = 0; i < k; i++) s -= Lk[i] * x[i];
    x[k] = s / Lk[k];
  }
}

/* a loop the compiler unrolls in full (constant bounds): nvcc's device pass and gcc; nothing
 * in nvcc's host pass (its front end knows no GCC pragma; the CPU build is gcc's) */
#ifndef SAP_UNROLL
#if defined(__CUDA_ARCH__)
#define SAP_UNROLL _Pragma("unroll")
#elif defined(__CUDACC__)
#define SAP_UNROLL
#else
#define SAP_UNROLL _Pragma("GCC unroll 8")
#endif
#endif

/* sapw_chainFactorN then sapw_chainSolveN for a 6-dof chain (a free body alone), the
 * block's lower triangle in registers: the same operations in the same order */
SAP_HD int SAPT(sapw_chainFactorSolve6)(SAP_REAL* a, int k0, int lda, SAP_REAL* xx) {
  SAP_REAL l[6][6], x[6];
  SAP_UNROLL for (int i = 0; i < 6; i++)
    SAP_UNROLL for (int j = 0; j <= i; j++) l[i][j] = a[(long)(k0 + i) * lda + k0 + j];
  SAP_UNROLL for (int k = 5; k >= 0; k--) {
    SAP_REAL d = l[k][k];
    if (!(d > 0) || !isfinite(d)) return k0 + k + 1;
    d = SAP_SQRT(d);
    l[k][k] = d;
    SAP_UNROLL for (int j = 0; j < k; j++) l[k][j] /= d;
    SAP_UNROLL for (int i = k - 1; i >= 0; i--) {
      SAP_REAL lki = l[k][i];
      SAP_UNROLL for (int j = 0; j <= i; j++) l[i][j] -= lki * l[k][j];
    }
  }
  SAP_UNROLL for (int i = 0; i < 6; i++)
    SAP_UNROLL for (int j = 0; j <= i; j++) a[(long)(k0 + i) * lda + k0 + j] = l[i][j];
  SAP_UNROLL for (int i = 0; i < 6; i++) x[i] = xx[k0 + i];
  SAP_UNROLL for (int k = 5; k >= 0; k--) {
    SAP_REAL y = x[k] / l[k][k];
    x[k] = y;
    SAP_UNROLL for (int i = 0; i < k; i++) x[i] -= l[k][i] * y;
  }
  SAP_UNROLL for (int k = 0; k < 6; k++) {
    SAP_REAL s = x[k];
    SAP_UNROLL for (int i = 0; i < k; i++) s -= l[k][i] * x[i];
    x[k] = s / l[k][k];
  }
  SAP_UNROLL for (int i = 0; i < 6; i++) xx[k0 + i] = x[i];
  return 0;
}

/* factor and solve one chain [k0, k1); returns sapw_chainFactorN's code */
SAP_HD int SAPT(sapw_chainFactorSolve)(SAP_REAL* a, int k0, int k1, int lda, SAP_REAL* x) {
  if (k1 - k0 == 6) return SAPT(sapw_chainFactorSolve6)(a, k0, lda, x);
  int fail = SAPT(sapw_chainFactorN)(a, k0, k1 - k0, lda);
  if (!fail) SAPT(sapw_chainSolveN)(a, k0, k1 - k0, lda, x);
  return fail;
}
