/* Block-sparse Cholesky of one island's Newton matrix over its dof trees (template body in
 * the linear-solve precision; include via kernels.h). Tree t owns the contiguous local dofs
 * [st[t], st[t] + n_t) of the island's natural (ascending dof) order. The trees are eliminated
 * in the order ord (pos: its inverse), the tree-level fill-reducing order of sapw_treeOrder
 * (kernels/sap_island_t.h); pat (T x W words of bits) gives, for each tree v, the trees u
 * eliminated after v with L_uv != 0 (the symbolic factor, fill included). L holds these blocks
 * only (sapw_islandOffsets): tree v's diagonal block L_vv (n_v x n_v, row-major, lower triangle
 * used) at bo[v], followed by its column, the blocks L_uv (n_u x n_v, row-major) of the trees u
 * of its pattern row in ascending u; L_uv's place is also bofs[...] (sapb_blockAt with the
 * row's block numbers rk), which the update looks up. Memory: sum n_t^2 + sum n_u n_v over the
 * pattern, not n^2; the vectors keep the natural order (no permutation). Right-looking by trees
 * (George & Liu, Computer Solution of Large Sparse Positive Definite Systems, 1981, ch. 5; the
 * supernodal form of Ng & Peyton 1993 with one supernode per tree):
 *   L_vv = chol(A_vv),  L_uv = A_uv L_vv^-T (u in pat v),  A_uw -= L_uv L_wv' (u, w in pat v).
 * A non-positive or non-finite pivot is reported as in sapw_cholFactor. */

/* size of tree t of an island of n dofs and T trees */
SAP_HD int SAPT(sapb_size)(const int* st, int T, int n, int t) { return (t + 1 < T ? st[t + 1] : n) - st[t]; }

/* C -= A B' for 6 x 6 blocks (row-major, leading dimension 6; free bodies' trees): the generic
 * loop's sums in the same order, with fixed bounds the compiler unrolls */
SAP_HD void SAPT(sapb_update6)(SAP_REAL* C, const SAP_REAL* A, const SAP_REAL* B) {
  for (int r = 0; r < 6; r++)
    for (int c = 0; c < 6; c++) {
      SAP_REAL s = 0;
      for (int p = 0; p < 6; p++) s += A[r * 6 + p] * B[c * 6 + p];
      C[r * 6 + c] -= s;
    }
}

/* factor in place: returns 0, or 1 + the local index of the first non-positive pivot */
SAP_HD int SAPT(sapb_factor)(SAP_REAL* L, int n, int T, const int* st, const int* ord, const int* pos,
                             const unsigned* pat, int W, const int* bo, const int* rk, const int* bofs) {
  for (int e = 0; e < T; e++) {
    int v = ord[e], a = st[v], nb = SAPT(sapb_size)(st, T, n, v);
    SAP_REAL* D = L + bo[v];
    int fail = SAPT(sapw_cholFactor)(D, nb, nb, nb);
    if (fail) return a + fail;
    const unsigned* pv = pat + (long)v * W;
    SAP_REAL* col = D + (long)nb * nb;  // v's column: L_uv for u in pat v, ascending
    // panel: L_uv = A_uv L_vv^-T, row by row
    SAP_REAL* B = col;
    for (int wd = 0; wd < W; wd++)
      for (unsigned bits = pv[wd]; bits; bits &= bits - 1) {
        int u = 32 * wd + sapb_ctz(bits), nu = SAPT(sapb_size)(st, T, n, u);
        for (int r = 0; r < nu; r++)
          for (int j = 0; j < nb; j++) {
            SAP_REAL s = B[r * nb + j];
            for (int p = 0; p < j; p++) s -= B[r * nb + p] * D[j * nb + p];
            B[r * nb + j] = s / D[j * nb + j];
          }
        B += (long)nu * nb;
      }
    // update: A_uw -= L_uv L_wv' for u, w in pat v with w eliminated no later than u: L_uu's
    // lower triangle, or L_uw (u is in w's row: v's row was merged into it, sapw_treeOrder)
    const SAP_REAL* Lu = col;
    for (int wu = 0; wu < W; wu++)
      for (unsigned bu = pv[wu]; bu; bu &= bu - 1) {
        int u = 32 * wu + sapb_ctz(bu), nu = SAPT(sapb_size)(st, T, n, u);
        const SAP_REAL* Lw = col;
        for (int ww = 0; ww < W; ww++)
          for (unsigned bw = pv[ww]; bw; bw &= bw - 1) {
            int w = 32 * ww + sapb_ctz(bw), nw = SAPT(sapb_size)(st, T, n, w);
            const SAP_REAL* Lwv = Lw;
            Lw += (long)nw * nb;
            if (pos[w] > pos[u]) continue;
            if (w == u) {
              SAP_REAL* C = L + bo[u];
              for (int r = 0; r < nu; r++)
                for (int c = 0; c <= r; c++) {
                  SAP_REAL s = 0;
                  for (int p = 0; p < nb; p++) s += Lu[r * nb + p] * Lwv[c * nb + p];
                  C[r * nu + c] -= s;
                }
              continue;
            }
            SAP_REAL* C = L + sapb_blockAt(pat, rk, bofs, W, w, u);
            if (nb == 6 && nu == 6 && nw == 6) {
              SAPT(sapb_update6)(C, Lu, Lwv);
              continue;
            }
            for (int r = 0; r < nu; r++)
              for (int c = 0; c < nw; c++) {
                SAP_REAL s = 0;
                for (int p = 0; p < nb; p++) s += Lu[r * nb + p] * Lwv[c * nb + p];
                C[r * nw + c] -= s;
              }
          }
        Lu += (long)nu * nb;
      }
  }
  return 0;
}

/* solve L L' x = b in place (x: the island's right-hand side in natural local order) */
SAP_HD void SAPT(sapb_solve)(const SAP_REAL* L, int n, int T, const int* st, const int* ord, const unsigned* pat,
                             int W, const int* bo, SAP_REAL* x) {
  for (int e = 0; e < T; e++) {  // forward: L y = b
    int v = ord[e], a = st[v], nb = SAPT(sapb_size)(st, T, n, v);
    const SAP_REAL* D = L + bo[v];
    for (int i = 0; i < nb; i++) {
      SAP_REAL s = x[a + i];
      for (int p = 0; p < i; p++) s -= D[i * nb + p] * x[a + p];
      x[a + i] = s / D[i * nb + i];
    }
    const unsigned* pv = pat + (long)v * W;
    const SAP_REAL* B = D + (long)nb * nb;
    for (int wd = 0; wd < W; wd++)
      for (unsigned bits = pv[wd]; bits; bits &= bits - 1) {
        int u = 32 * wd + sapb_ctz(bits), nu = SAPT(sapb_size)(st, T, n, u);
        for (int r = 0; r < nu; r++) {
          SAP_REAL s = 0;
          for (int p = 0; p < nb; p++) s += B[r * nb + p] * x[a + p];
          x[st[u] + r] -= s;
        }
        B += (long)nu * nb;
      }
  }
  for (int e = T - 1; e >= 0; e--) {  // backward: L' x = y
    int v = ord[e], a = st[v], nb = SAPT(sapb_size)(st, T, n, v);
    const SAP_REAL* D = L + bo[v];
    const unsigned* pv = pat + (long)v * W;
    const SAP_REAL* B = D + (long)nb * nb;
    for (int wd = 0; wd < W; wd++)
      for (unsigned bits = pv[wd]; bits; bits &= bits - 1) {
        int u = 32 * wd + sapb_ctz(bits), nu = SAPT(sapb_size)(st, T, n, u);
        for (int p = 0; p < nb; p++) {
          SAP_REAL s = 0;
          for (int r = 0; r < nu; r++) s += B[r * nb + p] * x[st[u] + r];
          x[a + p] -= s;
        }
        B += (long)nu * nb;
      }
    for (int i = nb - 1; i >= 0; i--) {
      SAP_REAL s = x[a + i];
      for (int p = i + 1; p < nb; p++) s -= D[p * nb + i] * x[a + p];
      x[a + i] = s / D[i * nb + i];
    }
  }
}
