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

/* factor the leading n x n block of a (leading dimension lda) in place: a = L L'.
 * returns 0, or 1 + the index of the first non-positive pivot */
SAP_HD int SAPT(sapw_cholFactor)(SAP_REAL* a, int n, int lda, int bs) {
  if (bs < 1) bs = 1;
  for (int k0 = 0; k0 < n; k0 += bs) {
    int k1 = k0 + bs < n ? k0 + bs : n;
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
