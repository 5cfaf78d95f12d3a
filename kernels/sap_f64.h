/* Opens an fp64 instance of a template body (see sap_real.h); close it with
 * sap_end.h. No include guard: included once per instance. */
#define SAP_REAL double
#define SAP_SUFFIX _f64
#define SAP_SQRT sqrt
#define SAP_FABS fabs
#define SAP_ATAN2 atan2
#define SAP_COS cos
#define SAP_SIN sin
#define SAP_TINY 1e-30            /* smallest length treated as non-zero */
#define SAP_EPS 2.220446049250313e-16  /* machine epsilon */
