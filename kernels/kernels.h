/* Per-world math of sapsim, instantiated in fp32 (_f32) and fp64 (_f64).
 * Included by the CPU backend (gcc, C11) and the CUDA kernels (nvcc).
 * Each instance: sap_f32.h / sap_f64.h, template bodies, sap_end.h. */
#ifndef SAPSIM_KERNELS_H
#define SAPSIM_KERNELS_H

#include "sapsim/model.h"
#include "sap_real.h"
#include "actuator.h"
#include "tendon.h"

/* bit helpers of the block-sparse Cholesky's tree patterns (kernels/sap_block_t.h) */
SAP_HD int sapb_ctz(unsigned x) {
#ifdef __CUDA_ARCH__
  return __ffs((int)x) - 1;
#else
  return __builtin_ctz(x);
#endif
}
SAP_HD int sapb_popc(unsigned x) {
#ifdef __CUDA_ARCH__
  return __popc(x);
#else
  return __builtin_popcount(x);
#endif
}

#include "sap_f32.h"
#include "math_t.h"
#include "sap_cholesky_t.h"
#include "sap_block_t.h"
#include "dynamics_t.h"
#include "sap_end.h"

#include "sap_f64.h"
#include "math_t.h"
#include "sap_cholesky_t.h"
#include "sap_block_t.h"
#include "dynamics_t.h"
#include "sap_end.h"

#endif
