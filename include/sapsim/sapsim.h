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

/* Every function declared in this header is the API that libsapsim.so exports; the library
 * is built with -fvisibility=hidden, so internal functions (host/, kernels/) stay hidden
 * (`nm -D build/libsapsim.so` lists only sap_*). nvcc compiles no public function. */
#if defined(__GNUC__) && !defined(__CUDACC__)
#pragma GCC visibility push(default)
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
 * v_prev the velocity before the last step (kernels/sap_loop_t.h warmStart) */
typedef enum { SAP_WARM_QVEL = 0, SAP_WARM_EXTRAPOLATE = 1 } sapWarmStart;
/* speculative contacts: every contact within the pair's detection distance (margin), or (speed,
 * CPU) only those its geoms can close in one step by their speed budgets, the others shown idle
 * at the answer or the step's collision and solve redone with the whole band (kernels/band.h) */
typedef enum { SAP_BAND_MARGIN = 0, SAP_BAND_SPEED = 1 } sapContactBand;
typedef enum { SAP_PRESET_APPROX32 = 0, SAP_PRESET_APPROX64 = 1, SAP_PRESET_DRAKE = 2 } sapPreset;
typedef enum { SAP_DEVICE_AUTO = 0, SAP_DEVICE_CPU = 1, SAP_DEVICE_CUDA = 2 } sapDevice;
typedef enum { SAP_BROAD_AUTO = 0, SAP_BROAD_PAIRS = 1, SAP_BROAD_SWEEP = 2 } sapBroadphase;
/* GPU solve kernel: one warp per world (lanes share contacts, Newton-matrix entries,
 * Cholesky rows and line-search terms) or one thread per world (the CPU's code as is) */
typedef enum { SAP_SOLVE_WARP = 0, SAP_SOLVE_THREAD = 1 } sapSolveKernel;
typedef enum { SAP_FREE_MOTION_WARP = 0, SAP_FREE_MOTION_THREAD = 1 } sapFreeMotionKernel;
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

  int line_search;                 /* sapLineSearch; newton_wolfe by default */
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
  double contact_margin;           /* NaN: the scene's speculative band (m), else the preset's
                                    * (drake: 0, as Drake's point contact; approx: 0.02) */
  int ncon_max;                    /* per-world contact capacity; -1: estimated */
  int broadphase;                  /* sapBroadphase */
  int device;                      /* sapDevice */
  int threads;                     /* CPU threads; 0: OpenMP default */
  int contacts;                    /* 1: collision + SAP contacts; 0: free motion only */
  int graph;                       /* GPU: capture one step in a CUDA graph, replay it (0) */
  int stage_timing;                /* GPU: time each stage with events (1 sync per step) (0) */
  int solve_kernel;                /* GPU: sapSolveKernel (warp) */
  int free_motion_kernel;          /* GPU: sapFreeMotionKernel (warp) */
  int newton_loop;                 /* GPU: sapNewtonLoop (kernel) */
  int linear_solver;               /* GPU: sapLinearSolver (custom) */
  int chol_memory;                 /* GPU: sapCholMemory (shared) */
  int solve_block_worlds;          /* GPU: worlds (one warp each) per block of the warp solve (2) */
  int world_block_threads;         /* GPU: threads per block of the one-thread-per-world kernels (32) */
  int friction_combine;            /* sapFrictionCombine (mujoco) */
  int eq_curvature;                /* 1: connect and weld rows include the curvature term h/2 Jdot v
                                      in their velocity target (less drift at speed) (1) */
  int warm_start;                  /* sapWarmStart (extrapolate) */
  /* 1 (CPU backend): the solve takes rows only for the contacts that can act: screened at the
   * warm start and the free motion, the others verified idle at the answer and promoted (the
   * solve redone) when not; the answer is the full list's to the solver tolerance (0) */
  int contact_screen;
  /* contact_band (CPU backend, issue 16): margin lists every contact within contact_margin;
   * speed leaves out the candidate pairs certainly farther apart than (1 + mu)(h + taud)
   * (b_0 + b_1) beyond their MJCF margin, b_g the geom's speed budget from its last speed, and
   * verifies after the solve that no geom of a left-out pair outran its budget (then every
   * left-out contact is idle at the answer), else redoes the world's collision and solve with
   * the whole band. The list is the whole band's less whole idle pairs; the answer is the
   * whole band's to the solver tolerance (sapContactBand, margin) */
  int contact_band;
  /* island_newton (issue 16): the one-lane solve (CPU; GPU solve_kernel=thread) runs one Newton
   * loop per island of the world's problem (its own iterations, line search and stop rules);
   * 0: one loop over every island (the islands still factor apart). The warp solve is one
   * loop always (1) */
  int island_newton;
  /* step retry (seed 000; both backends, the GPU's as masked rounds of the failed worlds inside
   * the step, verified under the CPU emulation of the CUDA runtime only): a world whose solve
   * fails (line-search failure, iteration cap, factorization failure, non-finite result) redoes
   * the step from its saved state with h/2, then h/4, ... down to h / 2^retry_depth, and
   * catches up to the batch time with those substeps; after retry_recover_steps clean steps it
   * returns to h. It is flagged only when the smallest step fails too. 0: off (0) */
  int retry_depth;                 /* halvings allowed, [0, 20] (0) */
  int retry_recover_steps;         /* clean steps at a reduced step before h again, [1, 10^6] (8) */
  /* 1: compute MuJoCo's com-based body outputs (cfrc_ext, cvel, cinert, subtree_com and the SAP
   * drives' part of qfrc_actuator; sapData, kernels/body_out.h) in each step, reset and state
   * edit (0) */
  int body_outputs;
} sapOptions;

/* defaults: approx32, newton_wolfe with the extrapolated warm start, every knob from the
 * preset (the option table of host/options.c; `sapsim help options` lists it) */
void sap_optionsDefault(sapOptions* opt);

/* set one option from text: "preset", "line_search", knob names and aliases of
 * seed 002 (free_motion_solve_precision, contact_weight_mode, ...). Unknown keys
 * and bad values fail with SAP_ERR_OPTION and a message listing valid values. */
sapStatus sap_optionsSet(sapOptions* opt, const char* key, const char* value);

/* the value of one option as text that sap_optionsSet reads back to the same value: an enum
 * knob's canonical name ("preset" while left to the preset), an integer, or a real (the
 * shortest of 15 and 17 significant digits that reads back exactly; "nan" while left to the
 * scene). SAP_ERR_OPTION for an unknown key, SAP_ERR_ARG when nbuf is too small. */
sapStatus sap_optionsGet(const sapOptions* opt, const char* key, char* buf, int nbuf);

/* parse "key=value" */
sapStatus sap_optionsSetPair(sapOptions* opt, const char* key_equals_value);

/* expand the preset: every -1/NaN knob takes its resolved value */
sapStatus sap_optionsExpand(const sapOptions* opt, sapOptions* out);

/* write the options as "key=value" lines, values as sap_optionsGet writes them (for logs and
 * benchmarks) */
int sap_optionsDescribe(const sapOptions* opt, char* buf, int nbuf);

/* ---- model -------------------------------------------------------------------- */

/* Load an MJCF or URDF file through MuJoCo's compiler and convert it. */
sapStatus sap_loadModel(const char* path, sapModel** out);
/* the same from the scene's text (asset files resolve relative to the working directory) */
sapStatus sap_loadModelString(const char* xml, sapModel** out);
void sap_freeModel(sapModel* m);
/* what the loaded model does differently from what the scene asks, short of an error, as
 * "note: ..." lines ("" when nothing): MuJoCo's pyramidal friction cone is solved as the
 * exact elliptic cone. sapsim info and run print them. */
const char* sap_modelNotes(const sapModel* m);

/* ---- batched simulation ------------------------------------------------------- */

typedef struct sapSim sapSim;

/* nworld replicated worlds, all at the model's initial state */
sapStatus sap_create(const sapModel* m, const sapOptions* opt, int nworld, sapSim** out);
void sap_free(sapSim* s);

/* advance every world by nstep steps */
sapStatus sap_step(sapSim* s, int nstep);

/* GPU: enqueue nstep steps on sapsim's CUDA stream and return without waiting
 * (direct launches, no host synchronisation), so that a caller can capture many
 * steps in a graph of its own: cudaStreamBeginCapture(sap_cudaStream(s)), ...,
 * sap_stepAsync(s, k), ..., cudaStreamEndCapture. Launch errors are reported;
 * sap_sync (or sap_get) waits. On the CPU this is sap_step. */
sapStatus sap_stepAsync(sapSim* s, int nstep);

/* the cudaStream_t of s: every launch and copy of s goes to it. Each GPU sim has its own
 * (created with the sim, destroyed by sap_free), so two sims' work may overlap; NULL for a
 * CPU batch or a build without CUDA */
void* sap_cudaStream(const sapSim* s);

/* reset worlds to the initial state (key = -1) or keyframe key (mocap bodies: their
 * compiled pose, or the keyframe's mpos/mquat); mask (nworld bytes) selects worlds,
 * NULL = all */
sapStatus sap_reset(sapSim* s, int key, const unsigned char* mask);

typedef enum {
  SAP_FIELD_QPOS = 0, SAP_FIELD_QVEL, SAP_FIELD_CTRL, SAP_FIELD_TIME, SAP_FIELD_QFRC_APPLIED,
  SAP_FIELD_XPOS, SAP_FIELD_XQUAT, SAP_FIELD_QACC_FREE, SAP_FIELD_MOCAP_POS, SAP_FIELD_MOCAP_QUAT,
  SAP_FIELD_SENSORDATA, /* (nsensordata) read-only: MuJoCo's layout (sensor_adr, sensor_dim) */
  SAP_FIELD_ACT,        /* (na) actuator activations: MuJoCo's mjData.act (actuator_actadr) */
  SAP_FIELD_XFRC_APPLIED, /* (nbody*6) force, torque on each body at its com, world frame */
  /* read-only, MuJoCo's conventions, only with option body_outputs=1 (else SAP_ERR_ARG): after a
   * step those of its start state and forces, after a reset or state edit the new state's */
  SAP_FIELD_CFRC_EXT,   /* (nbody*6) [torque; force] about subtree_com of the root: contacts, connect/weld + xfrc */
  SAP_FIELD_CVEL,       /* (nbody*6) [omega; v] at subtree_com of the root */
  SAP_FIELD_CINERT,     /* (nbody*10) Ixx Iyy Izz Ixy Ixz Iyz, m c, m about subtree_com of the root */
  SAP_FIELD_SUBTREE_COM, /* (nbody*3) */
  SAP_FIELD_QFRC_ACTUATOR, /* (nv) actuator forces (SAP drives: impulse / h) */
  /* (nv) the velocity before the last step: the extrapolated warm start's v_prev (option
   * warm_start=extrapolate starts the Newton loop at 2 qvel - qvel_prev, MuJoCo's
   * qacc_warmstart in velocity form). Part of the state that decides the next step's bits:
   * setting qvel (or a reset) sets it to the new qvel; set it after qvel to restore a run */
  SAP_FIELD_QVEL_PREV,
  /* (nhistory) the history buffers of delayed actuators and of sensors with a history (model
   * actuator_historyadr, sensor_historyadr; MuJoCo 4's mjData.history: per buffer a user slot
   * (a sensor's last tick), cursor, nsample times, nsample x dim values). Part of the state of a
   * model with delays; a set buffer needs an integer cursor in [0, nsample) and times increasing
   * from the oldest sample to the newest (SAP_ERR_ARG names the actuator or sensor) */
  SAP_FIELD_CTRL_HISTORY,
  /* (ntree) MuJoCo 4's mjData.tree_asleep (<flag sleep="enable"/>, kernels/sleep.h), integers
   * carried as doubles: < 0 awake (from -11 = -(1 + mjMINAWAKE) up to -1), >= 0 asleep, the next
   * tree of the sleeping island's cycle. Part of the state; a set buffer must hold integers
   * >= -11 whose sleeping trees form cycles (SAP_ERR_ARG names the tree; nothing changes), and
   * records the current qpos as the sleeping pose; a sleeping tree set keeps its qpos and gets
   * qvel = 0 at its next step (a nonzero qvel set on it wakes it, as in MuJoCo) */
  SAP_FIELD_TREE_ASLEEP,
  SAP_NFIELD
} sapField;

/* values per world of a field (nq, nv, nu, 1, nv, nbody*3, nbody*4, nv, nmocap*3, nmocap*4,
 * nsensordata, na, nbody*6, nbody*6, nbody*6, nbody*10, nbody*3, nv, nv, nhistory, ntree).
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

/* ---- per-world parameters (domain randomization) -------------------------------
 * Each world may override the model's values of these parameters; a world without an
 * override reads the shared model (no per-world copy: a table nworld x size is allocated
 * at a parameter's first override, and the step's stages read world w's row only where w
 * has one). Values are the model's fields (include/sapsim/model.h) in SI units:
 *   body_mass (nbody), body_inertia (nbody x 3, principal moments about the com: each
 *     >= 0 and a + b >= c for every ordering) - free motion, gravity, gravity
 *     compensation (-gravcomp m g) and the body_inertia contact weights all follow;
 *   geom_friction (ngeom x 3: sliding, torsional, rolling), geom_k (N/m, SAP stiffness),
 *     geom_taud (s, SAP dissipation time scale) - every dynamic pair of the world is
 *     recombined from its geoms as at load (friction: the higher priority's, else the
 *     larger element-wise, or option friction_combine=harmonic for the sliding value;
 *     condim 4/6 floors at 1e-5; k in series; tau_d summed); explicit <pair> elements
 *     keep their own friction, and every pair keeps MuJoCo's o_friction under
 *     <flag override="enable"/>;
 *   actuator_gain, actuator_bias, actuator_kp, actuator_kv (nu): sapsim's actuator
 *     law (model.h: motor force = gain u + bias; position servo kp (gain u + bias - l)
 *     - kv l'; velocity kv (gain u + bias - l')): MuJoCo's position servo with
 *     gainprm[0] = kp, biasprm = (0, -kp, -kv) is gain 1, kp, kv here; a general or
 *     muscle law (explicit) keeps MuJoCo's gainprm[0], biasprm[0] as gain, bias and
 *     -biasprm[1], -biasprm[2] as kp, kv, of either sign (the affine gain's slopes are
 *     the model's);
 *   dof_damping, dof_armature, dof_frictionloss (nv; a dof whose model frictionloss is 0
 *     keeps 0: the solver's dry-friction rows are counted at load), gravity (3).
 * sap_setParam writes n x size values for worlds (n ids, NULL = all, in order); every
 * value and id is checked first (non-finite, negative where a sign is physical,
 * inertia off the triangle inequality, id out of range: SAP_ERR_ARG naming the world,
 * element and value) and nothing changes when one is bad. sap_getParam reads the values
 * in force. sap_resetParam returns worlds to the model's values (param -1: every
 * parameter). sap_reset (the state) keeps the parameters. On the GPU the tables are
 * mirrored on the device; the first override allocates them there, after which a step
 * graph sapsim captured is captured again (a caller's own capture of sap_stepAsync must
 * be made after the first sap_setParam). */
typedef enum sapParam {
  SAP_PARAM_BODY_MASS = 0, SAP_PARAM_BODY_INERTIA, SAP_PARAM_GEOM_FRICTION, SAP_PARAM_GEOM_K,
  SAP_PARAM_GEOM_TAUD, SAP_PARAM_ACTUATOR_GAIN, SAP_PARAM_ACTUATOR_BIAS, SAP_PARAM_ACTUATOR_KP,
  SAP_PARAM_ACTUATOR_KV, SAP_PARAM_DOF_DAMPING, SAP_PARAM_DOF_ARMATURE, SAP_PARAM_DOF_FRICTIONLOSS,
  SAP_PARAM_GRAVITY,
  SAP_NPARAM
} sapParam;

const char* sap_paramName(sapParam p);              /* "body_mass", ...; "?" out of range */
int sap_paramFind(const char* name);                /* its sapParam, or -1 (message lists the names) */
int sap_paramSize(const sapSim* s, sapParam p);     /* values per world */
sapStatus sap_setParam(sapSim* s, sapParam p, const int* worlds, int n, const double* buf);
sapStatus sap_getParam(sapSim* s, sapParam p, const int* worlds, int n, double* buf);
sapStatus sap_resetParam(sapSim* s, int p, const int* worlds, int n);
/* 1 when world w reads its own value of p (an override is in force), else 0 */
int sap_paramOverridden(const sapSim* s, sapParam p, int w);
/* equality constraints switched per world (MuJoCo's mjData.eq_active): an inactive one
 * puts no rows in that world's problem. A reset restores the model's eq_active0 (MJCF
 * active). sap_setEqActive sets equality eq (-1: all) in world w (-1: all) to active (0 or
 * 1); sap_setEqActiveArray sets every value from buf (nworld x neq, each 0 or 1);
 * sap_getEqActive copies them to buf (nworld x neq). Bad indices or values are named and
 * change nothing. */
sapStatus sap_setEqActive(sapSim* s, int world, int eq, int active);
sapStatus sap_setEqActiveArray(sapSim* s, const int* buf);
sapStatus sap_getEqActive(sapSim* s, int* buf);
/* world w's A = M + diag(armature) + h diag(damping) of the last step (MuJoCo's mj_fullM plus
 * the armature and h times the damping slope) expanded to dense nv x nv row-major in out:
 * sapData.qA stores only its dof trees' diagonal blocks (sapModel.dof_Aadr); the entries
 * between trees are exactly 0. On the GPU it fetches that world's A first. */
sapStatus sap_getMassMatrix(sapSim* s, int world, double* out);

/* per-world diagnostics of the last step */
typedef struct sapWorldInfo {
  int flags;          /* SAP_WORLD_* bits */
  int ncon;           /* live contacts */
  int ncon_dropped;   /* contacts dropped by capacity */
  int newton_iter;    /* Newton iterations (island_newton: of the island that needed the most) */
  int ls_iter;        /* line-search iterations (the same) */
  int nfactor;        /* factorizations (island_newton: every island's, summed) */
  int ls_eval;        /* line-search evaluations of phi (every trial step, probes included; the
                         island with the most) */
  int band_redo;      /* 1: contact_band=speed redid the step's collision and solve with the
                         whole band (a geom outran its speed budget) */
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
  double band_redos;  /* contact_band=speed: world-steps whose collision and solve were redone with
                         the whole band (0 otherwise) */
} sapIterStats;
sapStatus sap_iterStats(sapSim* s, sapIterStats* out);
sapStatus sap_iterStatsClear(sapSim* s);

/* step retry counters per world (option retry_depth; all zero while it is 0): substeps
 * redone, the substep depth in force (the world steps with h / 2^level until
 * retry_recover_steps clean steps), the deepest depth used and its step h / 2^level_max,
 * since creation or sap_retryClear. Time stays exact per world: time[w] is the sum of its
 * accepted (sub)steps, so a batch step advances every world by h. */
typedef struct sapWorldRetry {
  long long retries;  /* substeps redone from a saved state */
  int level;          /* substep depth in force */
  int level_max;      /* deepest depth used */
  double h_min;       /* smallest step used: h / 2^level_max */
} sapWorldRetry;
sapStatus sap_worldRetry(sapSim* s, const int* worlds, int n, sapWorldRetry* out);
sapStatus sap_retryClear(sapSim* s);

/* sizes and settings */
int sap_nworld(const sapSim* s);
const sapModel* sap_model(const sapSim* s);
const sapOptions* sap_options(const sapSim* s);  /* expanded: the values in force (device,
                                                    timestep, contact material, ncon_max, broadphase) */
int sap_onGPU(const sapSim* s);
const char* sap_deviceName(const sapSim* s);
unsigned long long sap_bytesPerWorld(const sapSim* s);
/* bytes held beside the per-world arrays: on the CPU, the solve's Newton matrix and factor,
 * one buffer per thread grown to the largest islands stepped so far (n_k^2 per dense island,
 * the factor's blocks per block-sparse one, not nv^2; 0 before the first solve and on the
 * GPU, whose worlds hold theirs) */
unsigned long long sap_bytesShared(const sapSim* s);

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
 * ctrl, qfrc_applied and xfrc_applied in place, and must then call sap_checkInputs before stepping;
 * every other array is written through sap_set / sap_reset only. */
void* sap_dataArray(const sapSim* s, const char* name, int* count, sapArrayType* type);

/* check the inputs written in place in the host arrays (ctrl, qfrc_applied, xfrc_applied of every
 * world): SAP_ERR_NONFINITE naming the first bad value; reads only (a no-op on the GPU,
 * whose copies only sap_set writes) */
sapStatus sap_checkInputs(const sapSim* s);

/* ---- device arrays and the caller's CUDA stream (python/: DLPack, torch, JAX) ------
 *
 * A GPU batch's per-world arrays live in one device allocation with the host data's
 * layout. sap_deviceArray gives the device address of world 0's block of an array by
 * its sapData field name (count and type as sap_dataArray; world w's block starts
 * w * count elements later); NULL with a message for a CPU batch or an unknown name.
 * The addresses are fixed for the life of the sim.
 *
 * Ordering. sapsim enqueues a sim's GPU work on the sim's own stream (sap_cudaStream). A caller
 * that reads or writes the device arrays on a stream of its own orders that work with
 * sapsim's through these calls, which never wait on the host:
 *  - sap_stepStream(s, n, stream): the n steps start after the work enqueued so far on
 *    `stream`, and work enqueued on `stream` after the call sees their results (an
 *    event recorded on each side, cudaStreamWaitEvent on the other). When `stream` is
 *    being captured into a graph, sapsim's stream joins the capture and the steps are
 *    recorded as direct launches (no host synchronisation inside).
 *  - sap_streamWait(s, stream): work enqueued on `stream` after the call sees all of
 *    sapsim's work enqueued so far (a DLPack consumer's stream).
 * stream is a cudaStream_t (NULL: the legacy default stream). On a CPU batch the
 * stream is ignored: sap_stepStream is sap_step and sap_streamWait a no-op.
 *
 * Writes through device (or host, via sap_dataArray) addresses. ctrl, qfrc_applied and xfrc_applied
 * may be written freely: a step refuses the worlds whose values are not finite
 * (SAP_WORLD_BADINPUT, the world keeps its state). Every other array that sap_set
 * writes (qpos, qvel, time, mocap_pos, mocap_quat) may be written too, but then the
 * caller must call sap_commit before the next step, reset, get or set: it waits on the
 * host for `stream` (the stream the writes were enqueued on; NULL: the whole device),
 * checks the state of the worlds in mask (nworld bytes, NULL = all) as sap_set does,
 * copies qvel to the solver's velocity, releases a world frozen as non-finite and
 * recomputes the poses. A world with a non-finite qpos, qvel, time or mocap pose, or a
 * zero mocap quaternion, is frozen (SAP_WORLD_NONFINITE: steps leave it as it is) until
 * a reset, a valid sap_set or a later commit, and the call fails with
 * SAP_ERR_NONFINITE (SAP_ERR_ARG for a zero quaternion) naming the first such value;
 * the other worlds are committed. A non-finite ctrl, qfrc_applied or xfrc_applied is named too
 * (SAP_ERR_NONFINITE) but freezes nothing. Every other array is read-only. */
void* sap_deviceArray(const sapSim* s, const char* name, int* count, sapArrayType* type);
sapStatus sap_stepStream(sapSim* s, int nstep, void* stream);
sapStatus sap_streamWait(sapSim* s, void* stream);
sapStatus sap_commit(sapSim* s, const unsigned char* mask, void* stream);

/* 1 when sapsim was built with CUDA and a device is usable; name (nname bytes) gets the
 * device's name or the reason why none is */
int sap_cudaUsable(char* name, int nname);

/* ---- the simulation loop (seed 000: STARK's run()) ----------------------------------
 *
 * sap_run repeats "callback before, step every world, callback after, frame output, tally"
 * until a limit is reached, and returns a summary. Limits (checked before each step, any
 * number of them; at least one must be set): max_steps (the steps of this run), end_time
 * (every world not frozen has time >= end_time - h/2), wall_time (seconds since the run
 * began), a callback returning non-zero, and a failure: a step after which some world has
 * one of stop_flags (e.g. SAP_WORLD_NONFINITE), or every world frozen. */
typedef enum sapRunStop {
  SAP_RUN_STOP_STEPS = 0,   /* max_steps steps were taken */
  SAP_RUN_STOP_END_TIME,    /* every world not frozen reached end_time */
  SAP_RUN_STOP_WALL_TIME,   /* the wall-clock budget was spent */
  SAP_RUN_STOP_CALLBACK,    /* a callback asked to stop */
  SAP_RUN_STOP_FAILURE,     /* a world has a flag of stop_flags, or every world is frozen */
  SAP_RUN_STOP_ERROR        /* a call failed: sap_run returned its status */
} sapRunStop;
const char* sap_runStopName(int stop);  /* "steps", "end_time", ..., "?" */

/* a callback: step = steps taken so far in this run (before: the step about to be taken is
 * step + 1), info = every world's sapWorldInfo of the last step (before the first step: of
 * the state at the start, flags as they are). Return 0 to go on, non-zero to stop. The
 * callback may read and write the batch (sap_get, sap_set, sap_reset, ...) but not free it. */
typedef int (*sapRunCallback)(sapSim* s, long step, const sapWorldInfo* info, void* user);
/* a caller's frame writer: called at step 0 and every frame_every steps; non-OK stops the
 * run with that status */
typedef sapStatus (*sapFrameFn)(sapSim* s, long step, void* user);

/* Frame files. csv: the CLI's trajectory (header step,world,time,qpos0..,qvel0..; a row per
 * world per frame, %.17g). binary (docs/frames.md): a 64-byte header (magic "SAPFRAME",
 * version 1, nworld, nq, nv, dtype, h) then frames of int64 step, float64 time[nworld],
 * qpos[nworld x nq], qvel[nworld x nv] in dtype (float64, or float32 for binary32).
 * sapsim.read_frames (python/) reads both binary dtypes; sap_frameWriterClose reports a
 * write that failed (a full disk shows when the buffer is flushed). */
typedef enum sapFrameFormat { SAP_FRAMES_CSV = 0, SAP_FRAMES_BINARY = 1, SAP_FRAMES_BINARY32 = 2 } sapFrameFormat;
typedef struct sapFrameWriter sapFrameWriter;
sapStatus sap_frameWriterOpen(const sapSim* s, const char* path, int format, sapFrameWriter** out);
sapStatus sap_frameWrite(sapFrameWriter* fw, sapSim* s, long step);
sapStatus sap_frameWriterClose(sapFrameWriter* fw);  /* NULL: a no-op */
long sap_frameWriterFrames(const sapFrameWriter* fw);

typedef struct sapRunOptions {
  long max_steps;          /* steps of this run; -1: no limit (1000) */
  double end_time;         /* simulated time to reach; NaN: no limit (NaN) */
  double wall_time;        /* seconds of wall clock, checked before each step; NaN: none (NaN) */
  int stop_flags;          /* SAP_WORLD_* bits that end the run after a step (0: none) (0) */
  sapRunCallback before;   /* before each step, or NULL */
  sapRunCallback after;    /* after each step (and its frame), or NULL */
  void* user;              /* passed to both callbacks */
  int frame_every;         /* a frame at step 0 and every frame_every steps; 0: none (0) */
  sapFrameWriter* writer;  /* sapsim's writer (csv or binary), or NULL */
  sapFrameFn frame_fn;     /* the caller's writer, or NULL (both may be set) */
  void* frame_user;
} sapRunOptions;
void sap_runOptionsDefault(sapRunOptions* o);

typedef struct sapRunSummary {
  int stop;                      /* sapRunStop */
  long steps;                    /* steps taken */
  long frames;                   /* frames written (each writer counts once) */
  double world_steps;            /* steps x nworld */
  double wall_s;                 /* seconds of the whole run (callbacks and frames included) */
  double step_s;                 /* seconds inside sap_step */
  double world_steps_per_s;      /* world_steps / step_s */
  double time_min, time_max;     /* world times at the end */
  /* Newton iterations and line-search evaluations per world-step of this run (sap_run starts
   * the statistics of sap_iterStats afresh): every solve, retried ones included */
  double newton_mean, newton_p95, newton_max, ls_mean, ls_p95, ls_max;
  long flag_steps[8];            /* world-steps with SAP_WORLD_* bit k set (index k: 1 << k) */
  long unconverged;              /* world-steps without SAP_WORLD_CONVERGED */
  int ncon_peak;                 /* most contacts (kept + dropped) of a world in a step */
  long long retries;             /* substeps redone in this run (option retry_depth) */
  double h_min;                  /* smallest step any world took in this run */
} sapRunSummary;

/* run until a limit (o NULL: the defaults, 1000 steps); summary may be NULL */
sapStatus sap_run(sapSim* s, const sapRunOptions* o, sapRunSummary* summary);

/* per-stage wall time of the last sap_step, seconds (kinematics, collision,
 * free motion, solve, integrate) */
typedef struct sapTimers {
  double kinematics, collision, free_motion, solve, integrate, total;
} sapTimers;
void sap_timers(const sapSim* s, sapTimers* out);

#if defined(__GNUC__) && !defined(__CUDACC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif
#endif
