/* Compile-only check (make check-templates, part of make test): every per-world template
 * instance built with -Wfloat-conversion -Wdouble-promotion -Werror, so that the fp32
 * instantiation computes in float (a double sqrt/sin/cos or a double constant in it would
 * make the CPU's "fp32" path run in double while the GPU runs float; issue 21). */
#include "collision.h"
#include "integrate.h"
#include "kernels.h"
#include "sap_solve.h"
