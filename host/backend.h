/* Backend plumbing: device selection, device twins of the model and data,
 * host <-> device copies. Without CUDA (or on the CPU) these are no-ops. */
#ifndef SAPSIM_HOST_BACKEND_H
#define SAPSIM_HOST_BACKEND_H

#include <stddef.h>

#include "sim.h"

#ifdef __cplusplus
extern "C" {
#endif

sapStatus sapb_init(sapSim* s);    /* choose the device, allocate twins */
void sapb_free(sapSim* s);
/* one range of the host data (host_ptr, bytes) from / to its device twin (same
 * layout, same offset); no-ops on the CPU. Fetch copies only while the host is stale. */
sapStatus sapb_fetch(sapSim* s, const void* host_ptr, size_t bytes);
sapStatus sapb_push(sapSim* s, const void* host_ptr, size_t bytes);
/* recompute kinematics after a state edit: on the device, or masked on the CPU */
sapStatus sapb_kinematics(sapSim* s, const unsigned char* mask);
/* position/velocity sensors after a state edit (worlds in mask, NULL: all but frozen ones);
 * nothing without sensors */
sapStatus sapb_sensors(sapSim* s, const unsigned char* mask);
/* GPU: mirror the per-world parameter tables (host/world_params.c) on the device; the
 * first call allocates them (and drops a captured step graph, whose arguments change) */
sapStatus sapb_worldTables(sapSim* s);
/* GPU step retry (option retry_depth): the device state from the host's (host/step.c
 * sapc_retryInit), and its counters (level, clean, level_max, retries, hlast) to / from the host's
 * rt_ arrays; no-ops on the CPU or without the retry */
sapStatus sapb_retryInit(sapSim* s);
sapStatus sapb_retryFetch(sapSim* s);
sapStatus sapb_retryPush(sapSim* s);
int sap_cudaUsable(char* name, int nname); /* 1 if a CUDA device can be used */

unsigned long long sapd_bytes(const sapModel* m, int nworld, int ncon_max, int nscratch);
void sapd_carve(const sapModel* m, sapData* d, void* buffer);
double* sapd_fieldPtr(sapData* d, sapField f);

/* the host waits for the caller's `stream` (NULL: the whole device); a no-op on the CPU */
sapStatus sapb_waitStream(sapSim* s, void* stream);

/* CPU kinematics of the worlds in mask (NULL = all): used by reset and set */
void sapc_kinematicsMasked(sapSim* s, const unsigned char* mask);


#ifdef SAP_HAVE_CUDA
sapStatus sapb_stepGPU(sapSim* s);        /* enqueue one step on the GPU */
sapStatus sapb_stepsGPU(sapSim* s, int nstep);  /* nstep steps: direct launches or graph replays */
sapStatus sapb_finish(sapSim* s);  /* wait for the GPU, check errors */
#endif

#ifdef __cplusplus
}
#endif

#endif
