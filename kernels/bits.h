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

/* place of the block of tree x in tree y's row of a block-sparse island's pattern (x after y
 * in the elimination order; kernels/sap_island_t.h sapw_islandOffsets): the row's word x / 32
 * starts at block number rk[y W + x / 32], the bits of that word below x come before it */
SAP_HD int sapb_blockAt(const unsigned* pat, const int* rk, const int* bofs, int W, int y, int x) {
  long r = (long)y * W + x / 32;
  return bofs[rk[r] + sapb_popc(pat[r] & ((1u << (x % 32)) - 1))];
}

#endif
