/* fp32/fp64 instances of the warp Cholesky (sap_chol_warp_t.h), shared by the warp solve
 * (sap_warp.h) and the warp free motion (dynamics_warp.h). CUDA only. */
#ifndef SAPSIM_SAP_CHOL_WARP_H
#define SAPSIM_SAP_CHOL_WARP_H

#include "sap_real.h"

#define SAP_DEV static __device__ inline
#define SAPV_LANES 32  /* lanes of a warp */

#include "sap_f32.h"
#include "sap_chol_warp_t.h"
#include "sap_end.h"

#include "sap_f64.h"
#include "sap_chol_warp_t.h"
#include "sap_end.h"

#endif
