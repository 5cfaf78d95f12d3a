/* The one rule for which worlds a stage leaves alone (every CPU driver and CUDA kernel of the
 * step asks sapw_frozen). */
#ifndef SAPSIM_WORLD_FLAGS_H
#define SAPSIM_WORLD_FLAGS_H

#include "sapsim/data.h"
#include "sap_real.h"

/* (CUDA step retry, kernels/retry.cu) a world that has covered its batch step while others still
 * take substeps: every stage of the later rounds leaves it alone, flags and contacts included.
 * Set and cleared inside a retried step only, so no caller ever sees it. */
#define SAPW_WORLD_HELD (1 << 30)

/* a world the step leaves as it is: frozen after a non-finite state (until reset), refused
 * this step for a non-finite control or applied force (SAP_WORLD_SKIP), or held (retry) */
SAP_HD int sapw_frozen(const sapData* d, int w) {
  return (d->world_flags[w] & (SAP_WORLD_SKIP | SAPW_WORLD_HELD)) != 0;
}

/* held by the step retry: not even a frozen world's writes (vnext = qvel, no contacts) */
SAP_HD int sapw_held(const sapData* d, int w) { return (d->world_flags[w] & SAPW_WORLD_HELD) != 0; }

#endif
