// cuSOLVER's batched Cholesky on the CPU through LAPACKE (tests/shim/cusolverDn.h).
#include <lapacke.h>

#include "cusolverDn.h"

struct sapShimSolver { cudaStream_t stream; };

// every matrix of the batch, as one enqueued piece of work (a "launch")
template <typename F>
static cusolverStatus_t each(cusolverDnHandle_t h, int n, int batch, F f) {
  if (!h) return CUSOLVER_STATUS_NOT_INITIALIZED;
  if (n < 0 || batch < 0) return CUSOLVER_STATUS_INVALID_VALUE;
  sapShimSubmit([=]() {
    for (int b = 0; b < batch; b++) f(b);
  });
  return CUSOLVER_STATUS_SUCCESS;
}

static char uplo_char(cublasFillMode_t u) { return u == CUBLAS_FILL_MODE_UPPER ? 'U' : 'L'; }

extern "C" {

cusolverStatus_t cusolverDnCreate(cusolverDnHandle_t* h) {
  *h = new sapShimSolver{nullptr};
  return CUSOLVER_STATUS_SUCCESS;
}
cusolverStatus_t cusolverDnDestroy(cusolverDnHandle_t h) {
  delete h;
  return CUSOLVER_STATUS_SUCCESS;
}
cusolverStatus_t cusolverDnSetStream(cusolverDnHandle_t h, cudaStream_t st) {
  if (!h) return CUSOLVER_STATUS_NOT_INITIALIZED;
  h->stream = st;
  return CUSOLVER_STATUS_SUCCESS;
}

cusolverStatus_t cusolverDnSpotrfBatched(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, float* A[], int lda,
                                         int* info, int batch) {
  char u = uplo_char(uplo);
  return each(h, n, batch, [=](int b) { info[b] = LAPACKE_spotrf(LAPACK_COL_MAJOR, u, n, A[b], lda); });
}
cusolverStatus_t cusolverDnDpotrfBatched(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, double* A[], int lda,
                                         int* info, int batch) {
  char u = uplo_char(uplo);
  return each(h, n, batch, [=](int b) { info[b] = LAPACKE_dpotrf(LAPACK_COL_MAJOR, u, n, A[b], lda); });
}
cusolverStatus_t cusolverDnSpotrsBatched(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, int nrhs, float* A[],
                                         int lda, float* B[], int ldb, int* info, int batch) {
  if (nrhs != 1) return CUSOLVER_STATUS_INVALID_VALUE;  // as cuSOLVER: one right-hand side
  char u = uplo_char(uplo);
  sapShimSubmit([=]() { *info = 0; });
  return each(h, n, batch, [=](int b) {
    int e = LAPACKE_spotrs(LAPACK_COL_MAJOR, u, n, nrhs, A[b], lda, B[b], ldb);
    if (e < 0) *info = e;
  });
}
cusolverStatus_t cusolverDnDpotrsBatched(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, int nrhs, double* A[],
                                         int lda, double* B[], int ldb, int* info, int batch) {
  if (nrhs != 1) return CUSOLVER_STATUS_INVALID_VALUE;
  char u = uplo_char(uplo);
  sapShimSubmit([=]() { *info = 0; });
  return each(h, n, batch, [=](int b) {
    int e = LAPACKE_dpotrs(LAPACK_COL_MAJOR, u, n, nrhs, A[b], lda, B[b], ldb);
    if (e < 0) *info = e;
  });
}

}  // extern "C"
