/* Closes a template instance opened by sap_f32.h or sap_f64.h. */
#undef SAP_REAL
#undef SAP_SUFFIX
#undef SAP_SQRT
#undef SAP_FABS
#undef SAP_ATAN2
#undef SAP_COS
#undef SAP_SIN
#undef SAP_TINY
#undef SAP_EPS
