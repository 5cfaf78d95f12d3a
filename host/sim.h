/* Internal definition of a batch (sapSim) and the stage entry points of the two
 * backends. The step (host/step.c) is a list of stage calls:
 *   kinematics -> collision -> free motion -> solve -> integrate
 * CPU drivers are sapc_<stage>(sim); CUDA launchers sapg_<stage>(&s->gpu) (kernels/launch.h)
 * work on the launch context: the device twins s->gpu.m / s->gpu.d (same structs, device
 * pointers), the stream and the step's parameters. */
#ifndef SAPSIM_HOST_SIM_H
#define SAPSIM_HOST_SIM_H

#include "launch.h"
#include "sapsim/sapsim.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sapSim {
  sapModel* m;            /* host model (owned copy) */
  sapData d;              /* host data */
  sapOptions opt;         /* expanded options */
  int on_gpu;             /* stages run on the GPU */
  sapgLaunch gpu;         /* the CUDA launchers' context: device twins, stream, h (on_gpu) */
  void* cuda;             /* CUDA backend state (host/backend_cuda.c) */
  int host_stale;         /* host copy older than the device */
  double h;               /* time step */
  double* init_qpos;      /* (nq) initial state of every world */
  double* init_qvel;      /* (nv) */
  double* init_ctrl;      /* (nu) */
  sapTimers timers;
  char device_name[256];
  long sensor_work_off;   /* byte offset of the sensor work area in a world's scratch */
  long sensor_gam_off;    /* byte offset of the SAP impulses in a world's scratch */
  long sensor_tag_off;    /* byte offset of the SAP scalar rows' tags (sapProblem.stag) */
  long sensor_sidx_off;   /* byte offsets of the scalar rows' dofs and coefficients (sidx, sval) */
  long sensor_sval_off;
  /* per-world parameter inputs read on the host only (host/world_params.c): the pairs'
   * recombination takes them; NULL until a world overrides them */
  double* wp_geom_friction; /* (nworld x ngeom x 3) */
  double* wp_geom_taud;     /* (nworld x ngeom) */
  void* wp_device;          /* GPU: one device buffer holding every per-world table */
  /* step retry (option retry_depth > 0; host/step.c, on the GPU kernels/retry.cu): a world whose
   * solve fails redoes the step from its saved state with h / 2, ...; NULL while retry is off. On
   * the GPU the device holds the state and these counters are its copies (sapb_retryFetch) */
  double* rt_save;          /* (nworld x (nq + 2 nv + na + nhistory + 1)) qpos, qvel, vnext, act,
                               histories, time before a substep (CPU; NULL on the GPU) */
  int* rt_level;            /* (nworld) substep depth in force: steps of h / 2^level */
  int* rt_clean;            /* (nworld) clean steps at that depth (back to h after retry_recover_steps) */
  int* rt_level_max;        /* (nworld) deepest depth used since creation or sap_retryClear */
  long long* rt_retries;    /* (nworld) substeps redone since creation or sap_retryClear */
  double* rt_hlast;         /* (nworld) step of the world's last accepted substep (qacc_free) */
  /* the solve's Newton matrix H and factor L (host/solve.c): in each world's scratch on the GPU
   * (hl_carved, nv x nv), else one buffer per CPU thread sized by the step's islands */
  int hl_carved;
  struct sapcBuf* hl;       /* (nhl) per OpenMP thread */
  int nhl;
};

/* a CPU thread's growing buffer (host/solve.c) */
typedef struct sapcBuf {
  void* p;
  long cap;  /* bytes */
} sapcBuf;

/* the solve's parameters for a one-lane solve on the calling thread (sap_solveParams, with H
 * and L in the thread's buffer unless the scratch holds them); sapc_hlInit makes the sim's
 * thread buffers (empty until a solve needs them), sapc_hlFree frees them */
sapStatus sapc_hlInit(sapSim* s);
struct sapSolveParams;
void sapc_solveParams(sapSim* s, double h, struct sapSolveParams* prm);
void sapc_hlFree(sapSim* s);

/* step retry state (host/step.c): allocate when the options ask for it (refused with sleep; on
 * the GPU with its device state, host/backend_cuda.c), free, and put world w back at the nominal
 * step (sap_reset: the host's counters, pushed to the device after) */
sapStatus sapc_retryInit(sapSim* s);
void sapc_retryFree(sapSim* s);
void sapc_retryResetWorld(sapSim* s, int w);

/* OpenMP threads of a CPU stage: the option (0: all), never more than the worlds,
 * since a thread without work still waits at the loop's barrier */
int sapc_threads(const sapSim* s);

/* CPU stage drivers (OpenMP over worlds) */
void sapc_kinematics(sapSim* s);
void sapc_collision(sapSim* s);
void sapc_collisionWorld(sapSim* s, int w);  /* one world: the CPU step's one-region path */
void sapc_solveWorld(sapSim* s, int w, double h);  /* h: the world's step */
void sapc_freeMotion(sapSim* s);
void sapc_integrate(sapSim* s);

/* sensors (host/sensor.c, kernels/sensor.h): scratch bytes a world needs for them (0 without
 * sensors), the offsets in sapSim, pos/vel sensors of the worlds in mask (NULL: every world
 * without a flag of skip), acc sensors after the solve; S: a sapSensorSolve */
long sapc_sensorScratchBytes(const sapModel* m, const sapOptions* o, int ncon_max, int hl_carved);
void sapc_sensorSetup(sapSim* s);
int sapm_accSensors(const sapModel* m);
void sapc_sensorSolveInfo(const sapSim* s, void* S);
void sapc_sensorPosVel(sapSim* s, const unsigned char* mask, int skip);
void sapc_sensorAcc(sapSim* s);
/* the same for world w alone (the CPU step runs whole worlds); frozen worlds are skipped */
void sapc_sensorPosVelWorld(sapSim* s, int w);
void sapc_sensorAccWorld(sapSim* s, int w, double h);
/* MuJoCo's com-based body outputs (option body_outputs; host/sensor.c, kernels/body_out.h):
 * world w's after its solve (its step h), and the worlds' in mask (NULL: all not frozen) after
 * a reset or a state edit */
void sapc_bodyOutputsWorld(sapSim* s, int w, double h);
void sapc_bodyOutputsState(sapSim* s, const unsigned char* mask);

/* collision set-up (host/collision.c): dynamic candidate pairs after static
 * filtering (the loader merges explicit <pair> elements), written to out (npair x 2)
 * when out != NULL; returns the count */
int sapc_buildPairs(const sapModel* m, int* out);
/* pair_k, pair_taud, pair_detect and geom_detect from the geoms' resolved material
 * and the scene's contact_k, contact_taud, contact_margin (at load and at sap_create) */
void sapc_pairMaterial(sapModel* m);
/* per-world parameters (host/world_params.c): free the batch's tables */
void sapm_worldParamsFree(sapSim* s);

/* default per-world contact capacity for a model (documented rule; screen: option contact_screen,
 * the list then holds candidates) */
int sapc_estimateNconMax(const sapModel* m, int screen);

#ifdef __cplusplus
}
#endif

#endif
