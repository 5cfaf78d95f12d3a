/* The one rule for which worlds a stage leaves alone (every CPU driver and CUDA kernel of the
 * step asks sapw_frozen). */
#ifndef SAPSIM_WORLD_FLAGS_H
#define SAPSIM_WORLD_FLAGS_H

#include "sapsim/data.h"
#include "sap_real.h"

/* a world the step leaves as it is: frozen after a non-finite state (until reset), or refused
 * this step for a non-finite control or applied force (SAP_WORLD_SKIP) */
SAP_HD int sapw_frozen(const sapData* d, int w) { return (d->world_flags[w] & SAP_WORLD_SKIP) != 0; }

#endif
