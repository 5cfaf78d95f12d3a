/* Internal model helpers (host/model.c, host/model_load.c). */
#ifndef SAPSIM_HOST_MODEL_H
#define SAPSIM_HOST_MODEL_H

#include "sapsim/sapsim.h"

unsigned long long sap_modelBytes(const sapModel* m);
void sap_modelCarve(sapModel* m, void* buffer);   /* set array pointers into buffer */
sapStatus sap_modelAlloc(sapModel* m);             /* sizes set -> zeroed arrays */
sapStatus sap_modelCopy(const sapModel* src, sapModel** out);
const char* sap_name(const sapModel* m, const int* adr, int id);
/* every real value finite, signs and ranges physical; fails naming element and field */
sapStatus sap_checkModelValues(const sapModel* m, const char* path);
int sap_findName(const sapModel* m, const int* adr, int n, const char* name);

/* convert a compiled mjModel (host/model_load.c); path is used in messages */
struct mjModel_;
sapStatus sap_convertModel(const struct mjModel_* mj, const char* path, sapModel** out);
/* sensors (host/model_sensors.c): refuse what sapsim cannot compute; copy the table */
sapStatus sap_checkSensors(const struct mjModel_* mj, const char* path);
void sap_copySensors(sapModel* m, const struct mjModel_* mj);

#endif
