/* Per-world math of sapsim, instantiated in fp32 (_f32) and fp64 (_f64).
 * Included by the CPU backend (gcc, C11) and the CUDA kernels (nvcc). */
#ifndef SAPSIM_KERNELS_H
#define SAPSIM_KERNELS_H

#include "sapsim/model.h"
#include "sap_real.h"

#define SAP_REAL float
#define SAP_SUFFIX _f32
#define SAP_SQRT sqrtf
#define SAP_FABS fabsf
#include "math_t.h"
#include "sap_cholesky_t.h"
#include "dynamics_t.h"
#undef SAP_REAL
#undef SAP_SUFFIX
#undef SAP_SQRT
#undef SAP_FABS

#define SAP_REAL double
#define SAP_SUFFIX _f64
#define SAP_SQRT sqrt
#define SAP_FABS fabs
#include "math_t.h"
#include "sap_cholesky_t.h"
#include "dynamics_t.h"
#undef SAP_REAL
#undef SAP_SUFFIX
#undef SAP_SQRT
#undef SAP_FABS

#endif
