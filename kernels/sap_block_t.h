/* Block-sparse Cholesky of one island's Newton matrix over its dof trees (template body in
 * the linear-solve precision; include via kernels.h). The island's n x n array holds H's
 * lower triangle in natural (ascending dof) order; tree t owns the contiguous local dofs
 * [st[t], st[t] + n_t). The trees are eliminated in the order ord (pos: its inverse), the
 * tree-level fill-reducing order of sapw_treeOrder (kernels/sap_island_t.h); pat (T x W
 * words of bits) gives, for each tree v, the trees u eliminated after v with L_uv != 0
 * (the symbolic factor, fill included). Block L_uv (n_u x n_v) lives at the natural place of
 * rows u, columns v of the full n x n array: below the diagonal when st[u] > st[v], else in
 * the strict upper triangle, which H's assembly leaves unused; every ordered pair of trees has
 * its own place, so the permuted factor needs no more memory than the dense one and the
 * vectors need no permutation. Right-looking by trees (George & Liu, Computer Solution of
 * Large Sparse Positive Definite Systems, 1981, ch. 5; the supernodal form of Ng & Peyton 1993
 * with one supernode per tree):
 *   L_vv = chol(A_vv),  L_uv = A_uv L_vv^-T (u in pat v),  A_uw -= L_uv L_wv' (u, w in pat v).
 * A non-positive or non-finite pivot is reported as in sapw_cholFactor. */

/* size of tree t of an island of n dofs and T trees */
SAP_HD int SAPT(sapb_size)(const int* st, int T, int n, int t) { return (t + 1 < T ? st[t + 1] : n) - st[t]; }

/* C -= A B' for 6 x 6 blocks (leading dimension n; free bodies' trees): the generic loop's
 * sums in the same order, with fixed bounds the compiler unrolls */
SAP_HD void SAPT(sapb_update6)(SAP_REAL* C, const SAP_REAL* A, const SAP_REAL* B, int n) {
  for (int r = 0; r < 6; r++)
    for (int c = 0; c < 6; c++) {
      SAP_REAL s = 0;
      for (int p = 0; p < 6; p++) s += A[r * n + p] * B[c * n + p];
      C[r * n + c] -= s;
    }
}

/* factor in place: returns 0, or 1 + the local index of the first non-positive pivot */
SAP_HD int SAPT(sapb_factor)(SAP_REAL* L, int n, int T, const int* st, const int* ord, const int* pos,
                             const unsigned* pat, int W) {
  for (int e = 0; e < T; e++) {
    int v = ord[e], a = st[v], nb = SAPT(sapb_size)(st, T, n, v);
    SAP_REAL* D = L + (long)a * n + a;
    int fail = SAPT(sapw_cholFactor)(D, nb, n, nb);
    if (fail) return a + fail;
    const unsigned* pv = pat + (long)v * W;
    // panel: L_uv = A_uv L_vv^-T, row by row
    for (int wd = 0; wd < W; wd++)
      for (unsigned bits = pv[wd]; bits; bits &= bits - 1) {
        int u = 32 * wd + sapb_ctz(bits), nu = SAPT(sapb_size)(st, T, n, u);
        SAP_REAL* B = L + (long)st[u] * n + a;
        for (int r = 0; r < nu; r++)
          for (int j = 0; j < nb; j++) {
            SAP_REAL s = B[r * n + j];
            for (int p = 0; p < j; p++) s -= B[r * n + p] * D[j * n + p];
            B[r * n + j] = s / D[j * n + j];
          }
      }
    // update: A_uw -= L_uv L_wv' for u, w in pat v with w eliminated no later than u
    for (int wu = 0; wu < W; wu++)
      for (unsigned bu = pv[wu]; bu; bu &= bu - 1) {
        int u = 32 * wu + sapb_ctz(bu), nu = SAPT(sapb_size)(st, T, n, u);
        const SAP_REAL* Lu = L + (long)st[u] * n + a;
        for (int ww = 0; ww < W; ww++)
          for (unsigned bw = pv[ww]; bw; bw &= bw - 1) {
            int w = 32 * ww + sapb_ctz(bw);
            if (pos[w] > pos[u]) continue;
            int nw = SAPT(sapb_size)(st, T, n, w);
            const SAP_REAL* Lw = L + (long)st[w] * n + a;
            SAP_REAL* C = L + (long)st[u] * n + st[w];
            if (nb == 6 && nu == 6 && nw == 6 && w != u) {
              SAPT(sapb_update6)(C, Lu, Lw, n);
              continue;
            }
            for (int r = 0; r < nu; r++) {
              int cend = w == u ? r + 1 : nw;
              for (int c = 0; c < cend; c++) {
                SAP_REAL s = 0;
                for (int p = 0; p < nb; p++) s += Lu[r * n + p] * Lw[c * n + p];
                C[r * n + c] -= s;
              }
            }
          }
      }
  }
  return 0;
}

/* solve L L' x = b in place (x: the island's right-hand side in natural local order) */
SAP_HD void SAPT(sapb_solve)(const SAP_REAL* L, int n, int T, const int* st, const int* ord, const unsigned* pat,
                             int W, SAP_REAL* x) {
  for (int e = 0; e < T; e++) {  // forward: L y = b
    int v = ord[e], a = st[v], nb = SAPT(sapb_size)(st, T, n, v);
    const SAP_REAL* D = L + (long)a * n + a;
    for (int i = 0; i < nb; i++) {
      SAP_REAL s = x[a + i];
      for (int p = 0; p < i; p++) s -= D[i * n + p] * x[a + p];
      x[a + i] = s / D[i * n + i];
    }
    const unsigned* pv = pat + (long)v * W;
    for (int wd = 0; wd < W; wd++)
      for (unsigned bits = pv[wd]; bits; bits &= bits - 1) {
        int u = 32 * wd + sapb_ctz(bits), nu = SAPT(sapb_size)(st, T, n, u);
        const SAP_REAL* B = L + (long)st[u] * n + a;
        for (int r = 0; r < nu; r++) {
          SAP_REAL s = 0;
          for (int p = 0; p < nb; p++) s += B[r * n + p] * x[a + p];
          x[st[u] + r] -= s;
        }
      }
  }
  for (int e = T - 1; e >= 0; e--) {  // backward: L' x = y
    int v = ord[e], a = st[v], nb = SAPT(sapb_size)(st, T, n, v);
    const SAP_REAL* D = L + (long)a * n + a;
    const unsigned* pv = pat + (long)v * W;
    for (int wd = 0; wd < W; wd++)
      for (unsigned bits = pv[wd]; bits; bits &= bits - 1) {
        int u = 32 * wd + sapb_ctz(bits), nu = SAPT(sapb_size)(st, T, n, u);
        const SAP_REAL* B = L + (long)st[u] * n + a;
        for (int p = 0; p < nb; p++) {
          SAP_REAL s = 0;
          for (int r = 0; r < nu; r++) s += B[r * n + p] * x[st[u] + r];
          x[a + p] -= s;
        }
      }
    for (int i = nb - 1; i >= 0; i--) {
      SAP_REAL s = x[a + i];
      for (int p = i + 1; p < nb; p++) s -= D[p * n + i] * x[a + p];
      x[a + i] = s / D[i * n + i];
    }
  }
}
