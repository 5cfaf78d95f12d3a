/* Internal model helpers (host/model.c, host/model_load.c). */
#ifndef SAPSIM_HOST_MODEL_H
#define SAPSIM_HOST_MODEL_H

#include "sapsim/sapsim.h"

unsigned long long sapm_bytes(const sapModel* m);
void sapm_carve(sapModel* m, void* buffer);   /* set array pointers into buffer */
sapStatus sapm_alloc(sapModel* m);             /* sizes set -> zeroed arrays */
sapStatus sapm_copy(const sapModel* src, sapModel** out);
const char* sapm_name(const sapModel* m, const int* adr, int id);
/* every real value finite, signs and ranges physical; fails naming element and field */
sapStatus sapm_checkValues(const sapModel* m, const char* path);
int sapm_findName(const sapModel* m, const int* adr, int n, const char* name);

/* convert a compiled mjModel (host/model_load.c); path is used in messages */
struct mjModel_;
sapStatus sapm_convert(const struct mjModel_* mj, const char* path, sapModel** out);
const char* sapm_loadHint(const char* err);  /* a clause for a MuJoCo load error, or "" */
/* sensors (host/model_sensors.c): refuse what sapsim cannot compute; copy the table */
sapStatus sapm_checkSensors(const struct mjModel_* mj, const char* path);
void sapm_copySensors(sapModel* m, const struct mjModel_* mj);
/* mesh triangles the rays need: mj's nmeshface when a rangefinder casts rays, else 0 */
int sapm_rayFaces(const struct mjModel_* mj);

#endif
