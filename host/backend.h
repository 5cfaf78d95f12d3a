/* Backend plumbing: device selection, device twins of the model and data,
 * host <-> device copies. Without CUDA (or on the CPU) these are no-ops. */
#ifndef SAPSIM_HOST_BACKEND_H
#define SAPSIM_HOST_BACKEND_H

#include <stddef.h>

#include "sim.h"

#ifdef __cplusplus
extern "C" {
#endif

sapStatus sap_backendInit(sapSim* s);    /* choose the device, allocate twins */
void sap_backendFree(sapSim* s);
sapStatus sap_backendUpload(sapSim* s);  /* host data -> device (after host edits) */
/* one range of the host data (host_ptr, bytes) from / to its device twin (same
 * layout, same offset); no-ops on the CPU. Fetch copies only while the host is stale. */
sapStatus sap_backendFetch(sapSim* s, const void* host_ptr, size_t bytes);
sapStatus sap_backendPush(sapSim* s, const void* host_ptr, size_t bytes);
/* recompute kinematics after a state edit: on the device, or masked on the CPU */
sapStatus sap_backendKinematics(sapSim* s, const unsigned char* mask);
/* position/velocity sensors after a state edit (worlds in mask, NULL: all but frozen ones);
 * nothing without sensors */
sapStatus sap_backendSensors(sapSim* s, const unsigned char* mask);
/* GPU: mirror the per-world parameter tables (host/world_params.c) on the device; the
 * first call allocates them (and drops a captured step graph, whose arguments change) */
sapStatus sap_backendWorldTables(sapSim* s);
int sap_cudaUsable(char* name, int nname); /* 1 if a CUDA device can be used */

unsigned long long sap_dataBytes(const sapModel* m, int nworld, int ncon_max, int nscratch);
void sap_dataCarve(const sapModel* m, sapData* d, void* buffer);
double* sap_fieldPtr(sapData* d, sapField f);

/* the host waits for the caller's `stream` (NULL: the whole device); a no-op on the CPU */
sapStatus sap_backendWaitStream(sapSim* s, void* stream);

/* CPU kinematics of the worlds in mask (NULL = all): used by reset and set */
void sapc_kinematicsMasked(sapSim* s, const unsigned char* mask);


#ifdef SAP_HAVE_CUDA
sapStatus sap_stepGPU(sapSim* s);        /* enqueue one step on the GPU */
sapStatus sap_stepsGPU(sapSim* s, int nstep);  /* nstep steps: direct launches or graph replays */
sapStatus sap_backendFinish(sapSim* s);  /* wait for the GPU, check errors */
#endif

#ifdef __cplusplus
}
#endif

#endif
