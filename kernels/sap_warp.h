/* The warp-cooperative SAP solve (CUDA only; kernels/solve.cu): one warp per world over the
 * reference solver's per-item functions (sap_solve.h). fp32/fp64 instances of the warp
 * Cholesky (linear-solve precision) and of the warp Newton loop (objective precision). */
#ifndef SAPSIM_SAP_WARP_H
#define SAPSIM_SAP_WARP_H

#include "sap_chol_warp.h"
#include "sap_solve.h"

#include "sap_f32.h"
#include "sap_warp_t.h"
#include "sap_end.h"

#include "sap_f64.h"
#include "sap_warp_t.h"
#include "sap_end.h"

#endif
