/* Shared definitions for per-world code compiled both as C11 (gcc) and CUDA (nvcc).
 * fp32/fp64 variants come from one template body included twice (DESIGN.md §5):
 *   #include "sap_f32.h"     (SAP_REAL float, SAP_SUFFIX _f32, SAP_SQRT sqrtf, ...)
 *   #include "math_t.h"      (any template bodies)
 *   #include "sap_end.h"
 * and the same with sap_f64.h. Inside a template body, SAPT(name) expands to
 * name_f32 or name_f64. */
#ifndef SAPSIM_SAP_REAL_H
#define SAPSIM_SAP_REAL_H

#include <math.h>

#ifdef __CUDACC__
#define SAP_HD static inline __host__ __device__
/* a path most worlds never take (e.g. 4- and 6-row contacts): its local arrays live in
 * its own frame, not in the calling kernel's (no stack, no spills on the common path) */
#define SAP_HD_COLD static __host__ __device__ __noinline__
#else
#define SAP_HD static inline
#define SAP_HD_COLD static
#endif

#define SAP_CAT_(a, b) a##b
#define SAP_CAT(a, b) SAP_CAT_(a, b)
#define SAPT(name) SAP_CAT(name, SAP_SUFFIX)

#define SAP_PI 3.14159265358979323846

#endif
