/* cuSOLVER's dense batched Cholesky emulated on the CPU, for tests only (see
 * cuda_runtime.h): cusolverDn{S,D}potrf{,s}Batched run LAPACK's potrf/potrs on each
 * matrix of the batch (tests/shim/cusolver_shim.cpp), enqueued like a kernel launch, so a
 * stream capture records them. Column-major, as cuSOLVER; infoArray gets each matrix's
 * LAPACK info (0, or the order of the first non-positive leading minor); potrsBatched's
 * info gets 0 or -i for a bad argument i. */
#ifndef SAPSIM_TESTS_SHIM_CUSOLVERDN_H
#define SAPSIM_TESTS_SHIM_CUSOLVERDN_H

#include "cuda_runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  CUSOLVER_STATUS_SUCCESS = 0, CUSOLVER_STATUS_NOT_INITIALIZED = 1, CUSOLVER_STATUS_INVALID_VALUE = 3
} cusolverStatus_t;
typedef enum { CUBLAS_FILL_MODE_LOWER = 0, CUBLAS_FILL_MODE_UPPER = 1 } cublasFillMode_t;
typedef struct sapShimSolver* cusolverDnHandle_t;

cusolverStatus_t cusolverDnCreate(cusolverDnHandle_t* h);
cusolverStatus_t cusolverDnDestroy(cusolverDnHandle_t h);
cusolverStatus_t cusolverDnSetStream(cusolverDnHandle_t h, cudaStream_t st);
cusolverStatus_t cusolverDnSpotrfBatched(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, float* A[], int lda,
                                         int* info, int batch);
cusolverStatus_t cusolverDnDpotrfBatched(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, double* A[], int lda,
                                         int* info, int batch);
cusolverStatus_t cusolverDnSpotrsBatched(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, int nrhs, float* A[],
                                         int lda, float* B[], int ldb, int* info, int batch);
cusolverStatus_t cusolverDnDpotrsBatched(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, int nrhs, double* A[],
                                         int lda, double* B[], int ldb, int* info, int batch);

#ifdef __cplusplus
}
#endif

#endif
