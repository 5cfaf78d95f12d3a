/* Opens an fp32 instance of a template body (see sap_real.h); close it with
 * sap_end.h. No include guard: included once per instance. */
#define SAP_REAL float
#define SAP_SUFFIX _f32
#define SAP_SQRT sqrtf
#define SAP_FABS fabsf
#define SAP_ATAN2 atan2f
#define SAP_COS cosf
#define SAP_SIN sinf
#define SAP_TINY 1e-12f           /* smallest length treated as non-zero */
#define SAP_EPS 1.1920929e-07f    /* machine epsilon */
