/* Dense Cholesky factor and solve of one world's Newton matrix on one warp (template body in
 * the linear-solve precision; include via sap_warp.h). Right-looking: for each column k the
 * lanes scale the column below the pivot, then update the trailing lower triangle entry by
 * entry; the triangular solves update the remaining right-hand side column by column. Same
 * pivot rule as the reference factor (kernels/sap_cholesky_t.h): a non-positive or non-finite
 * pivot is reported, never rooted. Every lane returns the same value. */

/* factor the n x n lower triangle of a (row-major, leading dimension lda) in place: a = L L'.
 * returns 0, or 1 + the index of the first non-positive pivot */
SAP_DEV int SAPT(sapv_cholFactor)(SAP_REAL* a, int n, int lda, int lane) {
  for (int k = 0; k < n; k++) {
    SAP_REAL d = a[k * lda + k];
    if (!(d > 0) || !isfinite(d)) return k + 1;  // uniform: every lane read the same pivot
    d = SAP_SQRT(d);
    __syncwarp();
    for (int i = k + lane; i < n; i += SAPV_LANES) a[i * lda + k] = i == k ? d : a[i * lda + k] / d;
    __syncwarp();
    int r = n - k - 1;  // trailing block rows k+1 .. n-1, lower triangle
    for (int t = lane; t < r * r; t += SAPV_LANES) {
      int i = k + 1 + t / r, j = k + 1 + t % r;
      if (j <= i) a[i * lda + j] -= a[i * lda + k] * a[j * lda + k];
    }
    __syncwarp();
  }
  return 0;
}

/* solve L L' x = b in place (x holds b on entry) */
SAP_DEV void SAPT(sapv_cholSolve)(const SAP_REAL* L, int n, int lda, SAP_REAL* x, int lane) {
  for (int k = 0; k < n; k++) {  // L y = b
    SAP_REAL xk = x[k] / L[k * lda + k];
    __syncwarp();
    if (lane == 0) x[k] = xk;
    for (int i = k + 1 + lane; i < n; i += SAPV_LANES) x[i] -= L[i * lda + k] * xk;
    __syncwarp();
  }
  for (int k = n - 1; k >= 0; k--) {  // L' x = y
    SAP_REAL xk = x[k] / L[k * lda + k];
    __syncwarp();
    if (lane == 0) x[k] = xk;
    for (int i = lane; i < k; i += SAPV_LANES) x[i] -= L[k * lda + i] * xk;
    __syncwarp();
  }
}
