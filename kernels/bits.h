/* Bit helpers: the block-sparse Cholesky's tree patterns (kernels/sap_block_t.h) and the
 * broad phase's candidate-pair masks (kernels/collision.h). */
#ifndef SAPSIM_BITS_H
#define SAPSIM_BITS_H

#include "sap_real.h"

/* index of the lowest set bit of x (x != 0) */
SAP_HD int sapb_ctz(unsigned x) {
#ifdef __CUDA_ARCH__
  return __ffs((int)x) - 1;
#else
  return __builtin_ctz(x);
#endif
}
/* number of set bits of x */
SAP_HD int sapb_popc(unsigned x) {
#ifdef __CUDA_ARCH__
  return __popc(x);
#else
  return __builtin_popcount(x);
#endif
}

#endif
