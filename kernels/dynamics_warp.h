/* fp32/fp64 instances of the warp free motion (dynamics_warp_t.h). CUDA only
 * (kernels/dynamics.cu). */
#ifndef SAPSIM_DYNAMICS_WARP_H
#define SAPSIM_DYNAMICS_WARP_H

#include "kernels.h"
#include "sap_chol_warp.h"

#include "sap_f32.h"
#include "dynamics_warp_t.h"
#include "sap_end.h"

#include "sap_f64.h"
#include "dynamics_warp_t.h"
#include "sap_end.h"

#endif
