/* sapsim public C API: load a scene, create a batch of worlds, step them with the
 * SAP convex contact solver on the CPU or a CUDA GPU, read and write their state.
 * Every call returns a sapStatus; sap_lastError() gives the readable message. */
#ifndef SAPSIM_SAPSIM_H
#define SAPSIM_SAPSIM_H

#include "sapsim/model.h"
#include "sapsim/data.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SAPSIM_VERSION "0.1.0"

typedef enum sapStatus {
  SAP_OK = 0,
  SAP_ERR_ARG,          /* bad argument (null, out of range, wrong size) */
  SAP_ERR_SCENE,        /* the scene file is missing or malformed */
  SAP_ERR_UNSUPPORTED,  /* the scene uses a feature sapsim does not support */
  SAP_ERR_OPTION,       /* unknown option name or bad value */
  SAP_ERR_MEMORY,       /* allocation failed or sizes impossible */
  SAP_ERR_NONFINITE,    /* non-finite input (state, control, force) */
  SAP_ERR_CUDA,         /* a CUDA runtime call failed */
  SAP_ERR_NO_DEVICE,    /* device=cuda but no usable GPU */
  SAP_ERR_IO            /* writing an output file failed */
} sapStatus;

/* message of the last failed call on this thread */
const char* sap_lastError(void);
const char* sap_statusName(sapStatus s);

/* ---- options ---------------------------------------------------------------- */

typedef enum { SAP_FP32 = 0, SAP_FP64 = 1 } sapPrecision;
typedef enum { SAP_WEIGHT_BODY_INERTIA = 0, SAP_WEIGHT_DIAG_DELASSUS = 1 } sapWeightMode;
typedef enum { SAP_POINT_WITNESS = 0, SAP_POINT_MIDPOINT = 1 } sapPointMode;
typedef enum { SAP_INTEGRATE_MIDPOINT = 0, SAP_INTEGRATE_SAP_EULER = 1 } sapIntegration;
typedef enum { SAP_LS_MONOTONE = 0, SAP_LS_ARMIJO = 1, SAP_LS_EXACT = 2, SAP_LS_NEWTON = 3 } sapLineSearch;
/* warm start of the Newton loop: qvel (sapwarp §6.1), or extrapolate: qvel + (qvel - v_prev),
 * v_prev the velocity before the last step (kernels/sap_newton_t.h sapw_warmStart) */
typedef enum { SAP_WARM_QVEL = 0, SAP_WARM_EXTRAPOLATE = 1 } sapWarmStart;
typedef enum { SAP_PRESET_APPROX32 = 0, SAP_PRESET_APPROX64 = 1, SAP_PRESET_DRAKE = 2 } sapPreset;
typedef enum { SAP_DEVICE_AUTO = 0, SAP_DEVICE_CPU = 1, SAP_DEVICE_CUDA = 2 } sapDevice;
typedef enum { SAP_BROAD_AUTO = 0, SAP_BROAD_PAIRS = 1, SAP_BROAD_SWEEP = 2 } sapBroadphase;
/* GPU solve kernel: one warp per world (lanes share contacts, Newton-matrix entries,
 * Cholesky rows and line-search terms) or one thread per world (the CPU's code as is) */
typedef enum { SAP_SOLVE_WARP = 0, SAP_SOLVE_THREAD = 1 } sapSolveKernel;
/* GPU Newton loop (warp solve): the whole loop inside one kernel; one launch group per
 * iteration, repeated by a conditional while node when the step is captured in a graph
 * (sapsim's graph=1 or a caller's capture of sap_stepAsync) and max_iterations times
 * otherwise; or always max_iterations launch groups (fixed, for callers that capture many
 * steps and want a graph without conditional nodes). Worlds that stopped skip later
 * iterations at once. */
typedef enum { SAP_NEWTON_KERNEL = 0, SAP_NEWTON_WHILE = 1, SAP_NEWTON_FIXED = 2 } sapNewtonLoop;
/* GPU Newton linear solve: sapsim's warp Cholesky, or cuSOLVER's batched potrf/potrs over
 * every world (needs a per-iteration newton_loop) */
typedef enum { SAP_LINSOLVE_CUSTOM = 0, SAP_LINSOLVE_CUSOLVER = 1 } sapLinearSolver;
/* GPU warp Cholesky's working copy of H: in shared memory (when a block's share fits in
 * 48 KiB, else global) or in the world's scratch in global memory */
typedef enum { SAP_CHOL_SHARED = 0, SAP_CHOL_GLOBAL = 1 } sapCholMemory;
/* sliding friction of a dynamic geom pair: MuJoCo's rule (the higher priority's, else the
 * larger), or the harmonic mean 2 mu0 mu1 / (mu0 + mu1) of Drake and SAP Warp; explicit
 * <pair> elements and frictionless (condim 1) contacts keep theirs */
typedef enum { SAP_FRICTION_MUJOCO = 0, SAP_FRICTION_HARMONIC = 1 } sapFrictionCombine;

/* Knobs set to -1 (or NaN for reals) take the preset's value when the options are
 * expanded (sap_optionsExpand); an explicit value overrides the preset (seed 002). */
typedef struct sapOptions {
  sapPreset preset;                /* approx32 (default) | approx64 | drake */
  int free_motion_precision;       /* sapPrecision: free-motion solve (M, c, A, v*) */
  int contact_solve_precision;     /* sapPrecision: contact objective buffers */
  int linear_solve_precision;      /* sapPrecision: Newton blocked Cholesky */
  int weight_precision;            /* sapPrecision: contact weights w */
  int boundary_pose_precision;     /* sapPrecision: kinematics and contact geometry */
  int weight_mode;                 /* sapWeightMode */
  int contact_point;               /* sapPointMode */
  int integration;                 /* sapIntegration */

  int line_search;                 /* sapLineSearch; armijo_decay by default */
  int max_iterations;              /* Newton iteration cap (100) */
  int ls_max_iterations;           /* line-search cap (40; exact_root: 100 if left at -1) */
  double optimality_abs_tol;       /* (1e-14) */
  double optimality_rel_tol;       /* (1e-6) */
  double cost_abs_tol;             /* NaN: by line search (monotone 0, others 1e-30) */
  double cost_rel_tol;             /* NaN: by line search (monotone 5e-3, others 1e-15) */
  double armijo_c;                 /* (1e-4) */
  double rho;                      /* armijo decay factor in (0,1) (0.8) */
  double ls_relative_slop;         /* NaN: 1000 eps of the solve precision */
  double contact_beta;             /* near-rigid threshold beta (1.0) */
  double contact_sigma;            /* friction regularisation sigma (1e-3) */

  double timestep;                 /* NaN: the model's timestep */
  double contact_k;                /* NaN: the scene's default stiffness (N/m) */
  double contact_taud;             /* NaN: the scene's default dissipation time (s) */
  double contact_margin;           /* NaN: the scene's default detection margin (m) */
  int ncon_max;                    /* per-world contact capacity; -1: estimated */
  int broadphase;                  /* sapBroadphase */
  int device;                      /* sapDevice */
  int threads;                     /* CPU threads; 0: OpenMP default */
  int contacts;                    /* 1: collision + SAP contacts; 0: free motion only */
  int graph;                       /* GPU: capture one step in a CUDA graph, replay it (0) */
  int stage_timing;                /* GPU: time each stage with events (1 sync per step) (0) */
  int solve_kernel;                /* GPU: sapSolveKernel (warp) */
  int newton_loop;                 /* GPU: sapNewtonLoop (kernel) */
  int linear_solver;               /* GPU: sapLinearSolver (custom) */
  int chol_memory;                 /* GPU: sapCholMemory (shared) */
  int solve_block_worlds;          /* GPU: worlds (one warp each) per block of the warp solve (2) */
  int friction_combine;            /* sapFrictionCombine (mujoco) */
  int warm_start;                  /* sapWarmStart (qvel) */
} sapOptions;

/* defaults: approx32, armijo_decay, every knob from the preset */
void sap_optionsDefault(sapOptions* opt);

/* set one option from text: "preset", "line_search", knob names and aliases of
 * seed 002 (free_motion_solve_precision, contact_weight_mode, ...). Unknown keys
 * and bad values fail with SAP_ERR_OPTION and a message listing valid values. */
sapStatus sap_optionsSet(sapOptions* opt, const char* key, const char* value);

/* parse "key=value" */
sapStatus sap_optionsSetPair(sapOptions* opt, const char* key_equals_value);

/* expand the preset: every -1/NaN knob takes its resolved value */
sapStatus sap_optionsExpand(const sapOptions* opt, sapOptions* out);

/* write the expanded options as "key=value" lines (for logs and benchmarks) */
int sap_optionsDescribe(const sapOptions* opt, char* buf, int nbuf);

/* ---- model -------------------------------------------------------------------- */

/* Load an MJCF or URDF file through MuJoCo's compiler and convert it. */
sapStatus sap_loadModel(const char* path, sapModel** out);
/* the same from the scene's text (asset files resolve relative to the working directory) */
sapStatus sap_loadModelString(const char* xml, sapModel** out);
void sap_freeModel(sapModel* m);

/* ---- batched simulation ------------------------------------------------------- */

typedef struct sapSim sapSim;

/* nworld replicated worlds, all at the model's initial state */
sapStatus sap_create(const sapModel* m, const sapOptions* opt, int nworld, sapSim** out);
void sap_free(sapSim* s);

/* advance every world by nstep steps */
sapStatus sap_step(sapSim* s, int nstep);

/* GPU: enqueue nstep steps on sapsim's CUDA stream and return without waiting
 * (direct launches, no host synchronisation), so that a caller can capture many
 * steps in a graph of its own: cudaStreamBeginCapture(sap_cudaStream()), ...,
 * sap_stepAsync(s, k), ..., cudaStreamEndCapture. Launch errors are reported;
 * sap_sync (or sap_get) waits. On the CPU this is sap_step. */
sapStatus sap_stepAsync(sapSim* s, int nstep);

/* the cudaStream_t every sapsim launch and copy goes to (NULL without CUDA) */
void* sap_cudaStream(void);

/* reset worlds to the initial state (key = -1) or keyframe key (mocap bodies: their
 * compiled pose, or the keyframe's mpos/mquat); mask (nworld bytes) selects worlds,
 * NULL = all */
sapStatus sap_reset(sapSim* s, int key, const unsigned char* mask);

typedef enum {
  SAP_FIELD_QPOS = 0, SAP_FIELD_QVEL, SAP_FIELD_CTRL, SAP_FIELD_TIME, SAP_FIELD_QFRC_APPLIED,
  SAP_FIELD_XPOS, SAP_FIELD_XQUAT, SAP_FIELD_QACC_FREE, SAP_FIELD_MOCAP_POS, SAP_FIELD_MOCAP_QUAT,
  SAP_NFIELD
} sapField;

/* values per world of a field (nq, nv, nu, 1, nv, nbody*3, nbody*4, nv, nmocap*3, nmocap*4).
 * mocap_pos/mocap_quat are the world-frame poses of the mocap bodies (kinematic: they
 * move only when set, with zero velocity for contacts); a set quaternion must be
 * non-zero and is normalised on use, not in place. */
int sap_fieldSize(const sapSim* s, sapField f);
const char* sap_fieldName(sapField f);

/* copy a field of the worlds in `worlds` (n ids, NULL = all, in order) to/from
 * `buf` (n x fieldSize). Setting validates finiteness (SAP_ERR_NONFINITE) and
 * changes nothing when any value is bad. Kinematic fields are read-only. */
sapStatus sap_get(sapSim* s, sapField f, const int* worlds, int n, double* buf);
sapStatus sap_set(sapSim* s, sapField f, const int* worlds, int n, const double* buf);

/* per-world diagnostics of the last step */
typedef struct sapWorldInfo {
  int flags;          /* SAP_WORLD_* bits */
  int ncon;           /* live contacts */
  int ncon_dropped;   /* contacts dropped by capacity */
  int newton_iter;    /* Newton iterations */
  int ls_iter;        /* line-search iterations */
  int nfactor;        /* factorizations */
  int ls_eval;        /* line-search evaluations of phi (every trial step, probes included) */
} sapWorldInfo;
sapStatus sap_worldInfo(sapSim* s, const int* worlds, int n, sapWorldInfo* out);

/* Newton iterations and line-search evaluations per world-step over every step of every
 * world since creation or the last sap_iterStatsClear (frozen or refused world-steps are not
 * counted). Means and maxima are exact; p95 is read from histograms whose last bin holds
 * every count >= SAP_ITER_BINS - 1 (data.h). */
typedef struct sapIterStats {
  double world_steps;                        /* world-steps counted */
  double newton_mean, newton_p95, newton_max;  /* Newton iterations per world-step */
  double ls_mean, ls_p95, ls_max;              /* line-search evaluations per world-step */
} sapIterStats;
sapStatus sap_iterStats(sapSim* s, sapIterStats* out);
sapStatus sap_iterStatsClear(sapSim* s);

/* sizes and settings */
int sap_nworld(const sapSim* s);
const sapModel* sap_model(const sapSim* s);
const sapOptions* sap_options(const sapSim* s);  /* expanded: the values in force (device,
                                                    timestep, contact material, ncon_max) */
int sap_onGPU(const sapSim* s);
const char* sap_deviceName(const sapSim* s);
unsigned long long sap_bytesPerWorld(const sapSim* s);

/* host view of the batch; on the GPU call sap_sync first (copies device -> host) */
sapStatus sap_sync(sapSim* s);
const sapData* sap_data(const sapSim* s);

/* ---- named arrays, for bindings (python/) ------------------------------------ */

typedef enum { SAP_ARRAY_F64 = 0, SAP_ARRAY_I32 = 1, SAP_ARRAY_CHAR = 2, SAP_ARRAY_F32 = 3 } sapArrayType;

/* a model array by its sapModel field name ("body_mass", "key_qpos", "names", ...) or
 * one of "timestep", "gravity", "contact_k", "contact_taud", "contact_margin": its
 * address, element count and type; NULL (with a message) for an unknown name */
const void* sap_modelArray(const sapModel* m, const char* name, int* count, sapArrayType* type);

/* a per-world array of the host data by its sapData field name ("qpos", "ncon",
 * "con_dist", ...): the address of world 0's block (world w's starts w * count elements
 * later), elements per world and type; NULL (with a message) for an unknown name. On
 * the GPU the host copy is current only after sap_sync. On the CPU a caller may write
 * ctrl and qfrc_applied in place, and must then call sap_checkInputs before stepping;
 * every other array is written through sap_set / sap_reset only. */
void* sap_dataArray(const sapSim* s, const char* name, int* count, sapArrayType* type);

/* check the inputs written in place in the host arrays (ctrl, qfrc_applied of every
 * world): SAP_ERR_NONFINITE naming the first bad value; reads only (a no-op on the GPU,
 * whose copies only sap_set writes) */
sapStatus sap_checkInputs(const sapSim* s);

/* 1 when sapsim was built with CUDA and a device is usable; name (nname bytes) gets the
 * device's name or the reason why none is */
int sap_cudaUsable(char* name, int nname);

/* per-stage wall time of the last sap_step, seconds (kinematics, collision,
 * free motion, solve, integrate) */
typedef struct sapTimers {
  double kinematics, collision, free_motion, solve, integrate, total;
} sapTimers;
void sap_timers(const sapSim* s, sapTimers* out);

#ifdef __cplusplus
}
#endif
#endif
