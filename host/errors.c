/* Status codes and the per-thread error message (STYLE.md: errors, channel 1). */
#include <stdarg.h>
#include <stdio.h>

#include "sim.h"

static _Thread_local char sap_errbuf[1024];

const char* sap_lastError(void) { return sap_errbuf; }

sapStatus sap_fail(sapStatus s, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(sap_errbuf, sizeof(sap_errbuf), fmt, ap);
  va_end(ap);
  return s;
}

const char* sap_statusName(sapStatus s) {
  switch (s) {
    case SAP_OK: return "ok";
    case SAP_ERR_ARG: return "bad argument";
    case SAP_ERR_SCENE: return "bad scene";
    case SAP_ERR_UNSUPPORTED: return "unsupported feature";
    case SAP_ERR_OPTION: return "bad option";
    case SAP_ERR_MEMORY: return "out of memory";
    case SAP_ERR_NONFINITE: return "non-finite input";
    case SAP_ERR_CUDA: return "CUDA error";
    case SAP_ERR_NO_DEVICE: return "no usable GPU";
    case SAP_ERR_IO: return "I/O error";
  }
  return "unknown status";
}
