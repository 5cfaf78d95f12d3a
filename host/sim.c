/* Batch lifecycle and state access: sap_create carves every per-world array from
 * one allocation (data_fields.h), sap_reset / sap_get / sap_set work on all worlds
 * or a subset and validate their input, sap_worldInfo reports diagnostics. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "collision.h"
#include "data_fields.h"
#include "history.h"
#include "integrate.h"
#include "kernels.h"
#include "model.h"
#include "sim.h"
#include "sap_solve.h"
#include "sleep.h"
#include "world_view.h"

#define SAP_ALIGN(n) (((n) + 63ULL) & ~63ULL)
#define SAP_MAX_WORLDS (1 << 24)

/* bytes of one world's arrays (without scratch) */
static unsigned long long world_bytes(const sapModel* m, int ncon_max) {
  unsigned long long n = 0;
#define X(type, name, count) n += sizeof(type) * (unsigned long long)(count);
  SAP_DATA_FIELDS(X, m, ncon_max)
#undef X
  return n;
}

/* per-world scratch bytes: the largest stage-local need (free motion in fp64 and the
 * integrator's backup, each its carve's size; collision's broad phase, the SAP solve's
 * problem in its precisions); stages run one after another and share it */
static long scratch_bytes(const sapModel* m, const sapOptions* o, int ncon_max, int hl_carved) {
  /* the free motion's M by dof-tree blocks on the CPU; the GPU's warp free motion takes it
     dense (nv x nv), and its sims get room for either */
  long fm = (long)sizeof(double) * sapw_scratchFreeMotion_f64(m, 0);
  long fmd = hl_carved ? (long)sizeof(double) * sapw_scratchFreeMotion_f64(m, 1) : 0;
  fm = fm > fmd ? fm : fmd;
  long integ = sapw_integrateScratchBytes(m);
  fm = fm > integ ? fm : integ;
  long col = sapc_collisionScratchBytes(m, ncon_max, o->device != SAP_DEVICE_CPU);
  int lin = o->linear_solve_precision == SAP_FP32 ? 4 : 8;
  long scr = !o->contact_screen ? 0
             : o->contact_solve_precision == SAP_FP32 ? sapw_screenBytes_f32(ncon_max, SAP_SOLVE_CD(m))
                                                      : sapw_screenBytes_f64(ncon_max, SAP_SOLVE_CD(m));
  long sol = o->contact_solve_precision == SAP_FP32
                 ? sapw_problemBytes_f32(m->nv, m->nbody, ncon_max, SAP_SOLVE_CD(m), SAP_SOLVE_NS(m), SAP_SOLVE_NNZ(m), lin,
                                         SAP_SOLVE_NHALF(m), hl_carved)
                 : sapw_problemBytes_f64(m->nv, m->nbody, ncon_max, SAP_SOLVE_CD(m), SAP_SOLVE_NS(m), SAP_SOLVE_NNZ(m), lin,
                                         SAP_SOLVE_NHALF(m), hl_carved);
  long n = fm > col ? fm : col;
  sol += scr;  /* the screen's rows past the problem (kernels/sap_world_t.h) */
  n = n > sol ? n : sol;
  long sens = sapc_sensorScratchBytes(m, o, ncon_max, hl_carved);  /* 0 without sensors */
  return n > sens ? n : sens;  /* below 2^31 for nv <= SAP_MAX_NV and ncon_max <= 2^20 */
}

unsigned long long sapd_bytes(const sapModel* m, int nworld, int ncon_max, int nscratch) {
  unsigned long long n = 0;
#define X(type, name, count) n += SAP_ALIGN(sizeof(type) * (unsigned long long)(count) * nworld);
  SAP_DATA_FIELDS(X, m, ncon_max)
#undef X
  return n + SAP_ALIGN((unsigned long long)nscratch * nworld);
}

void sapd_carve(const sapModel* m, sapData* d, void* buffer) {
  unsigned char* p = (unsigned char*)buffer;
  int nworld = d->nworld, ncon_max = d->ncon_max;
#define X(type, name, count)                                                      \
  d->name = (type*)p;                                                             \
  p += SAP_ALIGN(sizeof(type) * (unsigned long long)(count) * nworld);
  SAP_DATA_FIELDS(X, m, ncon_max)
#undef X
  d->scratch = p;
  d->buffer = buffer;
  d->nbuffer = sapd_bytes(m, nworld, ncon_max, d->nscratch);
}

/* scene material defaults, overridable per call; per-geom overrides win; then the
 * pairs' k, tau_d and detection distances (margin + max(gap, contact_margin)) */
static void apply_material(sapModel* m, const sapOptions* opt) {
  if (!isnan(opt->contact_k)) m->contact_k = opt->contact_k;
  if (!isnan(opt->contact_taud)) m->contact_taud = opt->contact_taud;
  if (!isnan(opt->contact_margin))
    m->contact_margin = opt->contact_margin;
  else if (!m->contact_margin_scene && opt->preset == SAP_PRESET_DRAKE)
    m->contact_margin = 0;  /* Drake's point contact: only overlapping geometries make contacts */
  for (int g = 0; g < m->ngeom; g++) {
    if (!(m->geom_k[g] > 0)) m->geom_k[g] = m->contact_k;
    if (!(m->geom_taud[g] >= 0)) m->geom_taud[g] = m->contact_taud;
  }
  sapc_pairMaterial(m);
  /* Drake's and SAP Warp's friction: the harmonic mean of the two geoms' friction[0] */
  if (opt->friction_combine == SAP_FRICTION_HARMONIC)
    for (int p = 0; p < m->npair_max; p++) {
      if (m->pair_explicit[p] || m->contact_override || m->pair_condim[p] == 1) continue;
      double a = m->geom_mu[m->pair_geom[2 * p]], b = m->geom_mu[m->pair_geom[2 * p + 1]];
      double mu = a + b > 0 ? 2 * a * b / (a + b) : 0;
      m->pair_mu[p] = m->pair_condim[p] > 3 ? fmax(mu, 1e-5) : mu;  /* condim 4/6: MuJoCo's floor */
    }
}

/* Size limits. The GPU batch holds the Newton matrix H and its factor L dense in every world's
 * scratch (nv x nv each), so there nv is at most SAP_MAX_NV_GPU. On the CPU H and L hold only
 * the step's islands (one buffer per thread, host/solve.c), but an island's storage (at most
 * n x n entries) is indexed with int: nv at most SAP_MAX_NV (46340^2 < 2^31). A world's scratch, counted in an
 * int, stays below 2 GiB. Models past a limit are refused with the size they would need
 * rather than overflowing. */
#define SAP_MAX_NV 46340
#define SAP_MAX_NV_GPU 4096
static sapStatus check_model_size(const sapModel* m, int hl_carved, long scratch, int ncon_max) {
  int max = hl_carved ? SAP_MAX_NV_GPU : SAP_MAX_NV;
  if (m->nv > max)
    return sap_fail(SAP_ERR_MEMORY,
                    "sap_create: the model has nv = %d degrees of freedom; %s supports nv up to %d (its "
                    "dense nv x nv matrices would need %.1f GB per world)", m->nv,
                    hl_carved ? "the GPU batch layout" : "the CPU solve", max,
                    3.0 * 8.0 * (double)m->nv * (double)m->nv / 1e9);
  if (scratch > 0x7fffffffL - 64)
    return sap_fail(SAP_ERR_MEMORY, "sap_create: a world's stage scratch would need %.2f GB (nv = %d, ncon_max = "
                    "%d); the limit is 2 GiB per world", scratch / 1e9, m->nv, ncon_max);
  return SAP_OK;
}

static void free_sim(sapSim* s) {
  if (!s) return;
  sapb_free(s);
  sapc_retryFree(s);
  sapc_hlFree(s);
  if (s->m) sapm_worldParamsFree(s);
  free(s->d.buffer);
  free(s->init_qpos);
  sap_freeModel(s->m);
  free(s);
}

sapStatus sap_create(const sapModel* m, const sapOptions* opt_in, int nworld, sapSim** out) {
  if (!m || !out) return sap_fail(SAP_ERR_ARG, "sap_create: null model or output pointer");
  *out = NULL;
  if (nworld < 1 || nworld > SAP_MAX_WORLDS)
    return sap_fail(SAP_ERR_ARG, "sap_create: nworld %d out of range [1, %d]", nworld, SAP_MAX_WORLDS);
  sapOptions def;
  sap_optionsDefault(&def);
  sapOptions opt;
  sapStatus st = sap_optionsExpand(opt_in ? opt_in : &def, &opt);
  if (st != SAP_OK) return st;

  sapSim* s = (sapSim*)calloc(1, sizeof(sapSim));
  if (!s) return sap_fail(SAP_ERR_MEMORY, "sap_create: out of memory");
  s->opt = opt;
  if ((st = sapm_copy(m, &s->m)) != SAP_OK) {
    free(s);
    return st;
  }
  /* per-world overrides belong to a batch: none in a new one (the source may be another
   * batch's model, sap_model) */
  s->m->world_override = NULL;
#define X(name, bit, count) s->m->world_##name = NULL;
  SAP_WORLD_TABLES(X, s->m)
#undef X
  s->m->world_gravity = NULL;
  apply_material(s->m, &opt);
  s->m->contact_band = opt.contact_band == SAP_BAND_SPEED && opt.contacts;
  s->h = isnan(opt.timestep) ? s->m->timestep : opt.timestep;

  /* sizes and the single allocation */
  s->d.nworld = nworld;
  s->d.ncon_max = !opt.contacts ? 0 : opt.ncon_max >= 0 ? opt.ncon_max : sapc_estimateNconMax(s->m, opt.contact_screen);
  /* the solve's H and L: in every world's scratch for the GPU (nv x nv each), else one buffer
   * per CPU thread sized by the step's islands (host/solve.c); decided before the scratch is
   * sized, as sapb_init below will decide the device */
  s->hl_carved = opt.device != SAP_DEVICE_CPU && !s->m->sleep && !s->m->contact_band && sap_cudaUsable(NULL, 0);
  long scratch = scratch_bytes(s->m, &opt, s->d.ncon_max, s->hl_carved);
  if ((st = check_model_size(s->m, s->hl_carved, scratch, s->d.ncon_max)) != SAP_OK) {
    free_sim(s);
    return st;
  }
  s->d.nscratch = (int)SAP_ALIGN(scratch);
  unsigned long long nbytes = sapd_bytes(s->m, nworld, s->d.ncon_max, s->d.nscratch);
  void* buf = nbytes < (1ULL << 46) ? calloc(1, nbytes) : NULL;
  if (!buf) {
    free_sim(s);
    return sap_fail(SAP_ERR_MEMORY, "sap_create: cannot allocate %.1f MB for %d worlds (%llu bytes "
                    "per world)", nbytes / 1e6, nworld, nbytes / nworld);
  }
  sapd_carve(s->m, &s->d, buf);
  sapc_sensorSetup(s);

  /* initial state: MuJoCo's qpos0, zero velocity and control */
  int nq = s->m->nq, nv = s->m->nv, nu = s->m->nu;
  s->init_qpos = (double*)calloc(nq + nv + nu + 1, sizeof(double));
  if (!s->init_qpos) {
    free_sim(s);
    return sap_fail(SAP_ERR_MEMORY, "sap_create: out of memory");
  }
  s->init_qvel = s->init_qpos + nq;
  s->init_ctrl = s->init_qvel + nv;
  memcpy(s->init_qpos, s->m->qpos0, sizeof(double) * nq);

  /* sleeping trees (kernels/sleep.h) run on the CPU backend only: device=auto takes the CPU */
  if (s->m->sleep && s->opt.device == SAP_DEVICE_CUDA) {
    free_sim(s);
    return sap_fail(SAP_ERR_UNSUPPORTED, "<flag sleep=\"enable\"/>: sleeping trees run on the CPU backend "
                    "only (the CUDA step does not apply MuJoCo's sleep rules yet); use device=cpu or "
                    "disable the flag");
  }
  if (s->m->sleep) s->opt.device = SAP_DEVICE_CPU;
  /* contact_band=speed runs on the CPU backend only: device=auto takes the CPU */
  if (s->m->contact_band && s->opt.device == SAP_DEVICE_CUDA) {
    free_sim(s);
    return sap_fail(SAP_ERR_UNSUPPORTED, "option contact_band=speed runs on the CPU backend only (the CUDA "
                    "collision lists the whole band); use device=cpu or contact_band=margin");
  }
  if (s->m->contact_band) s->opt.device = SAP_DEVICE_CPU;
  if ((st = sapb_init(s)) != SAP_OK) {
    free_sim(s);
    return st;
  }
  if ((st = sapc_retryInit(s)) != SAP_OK || (st = sapc_hlInit(s)) != SAP_OK) {
    free_sim(s);
    return st;
  }
  if (s->opt.contact_screen && s->on_gpu) {
    free_sim(s);
    return sap_fail(SAP_ERR_UNSUPPORTED, "option contact_screen=1: the screened contact solve runs on the "
                    "CPU backend only (the CUDA solve keeps every contact's rows); use device=cpu or "
                    "contact_screen=0");
  }
  if (s->m->contact_band && (s->opt.contact_screen || s->m->sleep)) {
    const char* why = s->opt.contact_screen ? "and contact_screen=1 do not combine (each leaves contacts out of "
                                              "the solve its own way); use one"
                                            : "does not combine with <flag sleep=\"enable\"/> (a speculative contact "
                                              "with a moving body wakes a sleeping tree); disable one";
    free_sim(s);
    return sap_fail(SAP_ERR_UNSUPPORTED, "option contact_band=speed %s", why);
  }
  /* sap_options() reports the values in force, not the "from the scene" markers */
  s->opt.device = s->on_gpu ? SAP_DEVICE_CUDA : SAP_DEVICE_CPU;
  s->opt.timestep = s->h;
  s->opt.ncon_max = s->d.ncon_max;
  s->opt.contact_k = s->m->contact_k;
  s->opt.contact_taud = s->m->contact_taud;
  s->opt.contact_margin = s->m->contact_margin;
  s->opt.broadphase = sapc_broadphaseMode(s);
  if ((st = sap_reset(s, -1, NULL)) != SAP_OK) {
    free_sim(s);
    return st;
  }
  *out = s;
  return SAP_OK;
}

void sap_free(sapSim* s) { free_sim(s); }

/* reset one world's state on the host */
static void reset_world(sapSim* s, int w, int key) {
  const sapModel* m = s->m;
  const double* qpos = key < 0 ? s->init_qpos : m->key_qpos + (size_t)key * m->nq;
  const double* qvel = key < 0 ? s->init_qvel : m->key_qvel + (size_t)key * m->nv;
  const double* ctrl = key < 0 ? s->init_ctrl : m->key_ctrl + (size_t)key * m->nu;
  memcpy(s->d.qpos + (size_t)w * m->nq, qpos, sizeof(double) * m->nq);
  memcpy(s->d.qvel + (size_t)w * m->nv, qvel, sizeof(double) * m->nv);
  memcpy(s->d.vnext + (size_t)w * m->nv, qvel, sizeof(double) * m->nv);
  memcpy(s->d.ctrl + (size_t)w * m->nu, ctrl, sizeof(double) * m->nu);
  /* activations: 0 (MuJoCo's mj_resetData) or the keyframe's act */
  if (key < 0) memset(s->d.act + (size_t)w * m->na, 0, sizeof(double) * m->na);
  else memcpy(s->d.act + (size_t)w * m->na, m->key_act + (size_t)key * m->na, sizeof(double) * m->na);
  memset(s->d.qfrc_applied + (size_t)w * m->nv, 0, sizeof(double) * m->nv);
  memset(s->d.xfrc_applied + (size_t)w * m->nbody * 6, 0, sizeof(double) * m->nbody * 6);
  memset(s->d.cfrc_ext + (size_t)w * m->nbody * 6, 0, sizeof(double) * m->nbody * 6);
  /* mocap bodies: the compiled pose (body_pos/quat of a child of the world is its world
   * pose) or the keyframe's */
  for (int b = 0; b < m->nbody; b++) {
    int id = m->body_mocapid[b];
    if (id < 0) continue;
    const double* pos = key < 0 ? m->body_pos + 3 * b : m->key_mpos + ((size_t)key * m->nmocap + id) * 3;
    const double* quat = key < 0 ? m->body_quat + 4 * b : m->key_mquat + ((size_t)key * m->nmocap + id) * 4;
    memcpy(s->d.mocap_pos + ((size_t)w * m->nmocap + id) * 3, pos, sizeof(double) * 3);
    memcpy(s->d.mocap_quat + ((size_t)w * m->nmocap + id) * 4, quat, sizeof(double) * 4);
  }
  memcpy(s->d.eq_active + (size_t)w * m->neq, m->eq_active0, sizeof(int) * m->neq);
  /* sleep (kernels/sleep.h): every tree awake; with trees of policy init, MuJoCo's mj_resetData:
   * those sleep, each its own cycle, at rest (MuJoCo sleeps them by island: init trees that
   * touch one another form one cycle there), and MuJoCo's mj_sleep counts the others once */
  int* ta = s->d.tree_asleep + (size_t)w * m->ntree;
  int ninit = 0;
  for (int t = 0; t < m->ntree; t++) {
    int init = m->sleep && m->tree_sleep_policy[t] == SAP_SLEEP_INIT;
    ninit += init;
    ta[t] = init ? t : SAP_SLEEP_AWAKE;
    for (int j = m->tree_dofadr[t]; init && j < m->tree_dofadr[t] + m->tree_dofnum[t]; j++)
      s->d.qvel[(size_t)w * m->nv + j] = s->d.vnext[(size_t)w * m->nv + j] = 0;
  }
  for (int t = 0; t < m->ntree && ninit; t++)
    if (ta[t] < 0 && sapw_treeCanSleep(m, &s->d, w, t, m->sleep_tolerance)) ta[t]++;
  if (m->sleep) memcpy(s->d.sleep_qpos + (size_t)w * m->nq, qpos, sizeof(double) * m->nq);
  /* control histories: MuJoCo's reset, samples at -n h, ..., -h, all 0 (a keyframe too) */
  for (int u = 0; u < m->nu; u++)
    if (m->actuator_nsample[u] > 0)
      sapw_historyReset(s->d.history + (size_t)w * m->nhistory + m->actuator_historyadr[u], m->actuator_nsample[u],
                        s->h);
  sapw_sensorHistoryReset(m, s->d.history + (size_t)w * m->nhistory, s->h);
  s->d.time[w] = key < 0 ? 0 : m->key_time[key];
  s->d.world_flags[w] = 0;
  sapc_retryResetWorld(s, w);
  s->d.newton_iter[w] = s->d.ls_iter[w] = s->d.nfactor[w] = s->d.ls_eval[w] = 0;
  s->d.ncon[w] = s->d.ncon_dropped[w] = 0;
  s->d.ncon_solved[w] = s->d.ncon_promoted[w] = 0;
  /* contact_band=speed: no speed known, the first step lists the whole band */
  if (m->contact_band) {
    for (int g = 0; g < m->ngeom; g++) s->d.geom_vspeed[(size_t)w * m->ngeom + g] = NAN;
    s->d.band_redo[w] = 0;
  }
  /* sensors: acceleration ones read 0 until the first step; the others follow the state */
  memset(s->d.sensordata + (size_t)w * m->nsensordata, 0, sizeof(double) * m->nsensordata);
}

/* the per-world arrays a reset writes, as (host array, bytes of all worlds) */
typedef struct { void* ptr; size_t bytes; } sapRange;

static int reset_ranges(sapSim* s, sapRange* r) {
  const sapModel* m = s->m;
  sapData* d = &s->d;
  size_t n = (size_t)d->nworld, dbl = sizeof(double), in = sizeof(int);
  sapRange all[] = {
      {d->qpos, n * m->nq * dbl}, {d->qvel, n * m->nv * dbl}, {d->vnext, n * m->nv * dbl},
      {d->ctrl, n * m->nu * dbl}, {d->act, n * m->na * dbl}, {d->qfrc_applied, n * m->nv * dbl},
      {d->time, n * dbl}, {d->mocap_pos, n * m->nmocap * 3 * dbl}, {d->mocap_quat, n * m->nmocap * 4 * dbl},
      {d->eq_active, n * m->neq * in}, {d->world_flags, n * in}, {d->newton_iter, n * in}, {d->ls_iter, n * in},
      {d->nfactor, n * in}, {d->ls_eval, n * in}, {d->ncon, n * in}, {d->ncon_dropped, n * in},
      {d->sensordata, n * m->nsensordata * dbl}, {d->xfrc_applied, n * m->nbody * 6 * dbl},
      {d->cfrc_ext, n * m->nbody * 6 * dbl}, {d->history, n * m->nhistory * dbl},
      {d->tree_asleep, n * m->ntree * in}, {d->sleep_qpos, n * (m->sleep ? m->nq : 0) * dbl},
      {d->geom_vspeed, n * (m->contact_band ? m->ngeom : 0) * dbl}, {d->band_redo, n * (m->contact_band ? 1 : 0) * in}};
  int count = (int)(sizeof(all) / sizeof(all[0]));
  memcpy(r, all, sizeof(all));
  return count;
}

/* On the GPU only the arrays a reset writes travel (fetched, edited, pushed), and
 * kinematics run on the device: masked resets are an RL environment's per-step path */
sapStatus sap_reset(sapSim* s, int key, const unsigned char* mask) {
  if (!s) return sap_fail(SAP_ERR_ARG, "sap_reset: null sim");
  if (key < -1 || key >= s->m->nkey)
    return sap_fail(SAP_ERR_ARG, "sap_reset: keyframe %d does not exist (the scene has %d)", key,
                    s->m->nkey);
  sapRange r[32];
  int nr = reset_ranges(s, r);
  sapStatus st = SAP_OK;
  for (int i = 0; i < nr && st == SAP_OK; i++) st = sapb_fetch(s, r[i].ptr, r[i].bytes);
  if (st == SAP_OK) st = sapb_retryFetch(s);
  if (st != SAP_OK) return st;
  for (int w = 0; w < s->d.nworld; w++)
    if (!mask || mask[w]) reset_world(s, w, key);
  for (int i = 0; i < nr && st == SAP_OK; i++) st = sapb_push(s, r[i].ptr, r[i].bytes);
  if (st == SAP_OK) st = sapb_retryPush(s);
  if (st != SAP_OK) return st;
  if ((st = sapb_kinematics(s, mask)) != SAP_OK) return st;
  return sapb_sensors(s, mask);
}

/* ---- fields ----------------------------------------------------------------------- */

static const char* field_names[SAP_NFIELD] = {"qpos", "qvel", "ctrl", "time", "qfrc_applied",
                                              "xpos", "xquat", "qacc_free", "mocap_pos",
                                              "mocap_quat", "sensordata", "act", "xfrc_applied",
                                              "cfrc_ext", "cvel", "cinert", "subtree_com",
                                              "qfrc_actuator", "qvel_prev", "ctrl_history",
                                              "tree_asleep"};

const char* sap_fieldName(sapField f) {
  return (unsigned)f < SAP_NFIELD ? field_names[f] : "?";
}

int sap_fieldSize(const sapSim* s, sapField f) {
  if (!s) return 0;
  const sapModel* m = s->m;
  switch (f) {
    case SAP_FIELD_QPOS: return m->nq;
    case SAP_FIELD_QVEL: return m->nv;
    case SAP_FIELD_CTRL: return m->nu;
    case SAP_FIELD_TIME: return 1;
    case SAP_FIELD_QFRC_APPLIED: return m->nv;
    case SAP_FIELD_XPOS: return 3 * m->nbody;
    case SAP_FIELD_XQUAT: return 4 * m->nbody;
    case SAP_FIELD_QACC_FREE: return m->nv;
    case SAP_FIELD_MOCAP_POS: return 3 * m->nmocap;
    case SAP_FIELD_MOCAP_QUAT: return 4 * m->nmocap;
    case SAP_FIELD_SENSORDATA: return m->nsensordata;
    case SAP_FIELD_ACT: return m->na;
    case SAP_FIELD_XFRC_APPLIED: return 6 * m->nbody;
    case SAP_FIELD_CFRC_EXT: return 6 * m->nbody;
    case SAP_FIELD_CVEL: return 6 * m->nbody;
    case SAP_FIELD_CINERT: return 10 * m->nbody;
    case SAP_FIELD_SUBTREE_COM: return 3 * m->nbody;
    case SAP_FIELD_QFRC_ACTUATOR: return m->nv;
    case SAP_FIELD_QVEL_PREV: return m->nv;
    case SAP_FIELD_CTRL_HISTORY: return m->nhistory;
    case SAP_FIELD_TREE_ASLEEP: return m->ntree;
    default: return -1;
  }
}

double* sapd_fieldPtr(sapData* d, sapField f) {
  switch (f) {
    case SAP_FIELD_QPOS: return d->qpos;
    case SAP_FIELD_QVEL: return d->qvel;
    case SAP_FIELD_CTRL: return d->ctrl;
    case SAP_FIELD_TIME: return d->time;
    case SAP_FIELD_QFRC_APPLIED: return d->qfrc_applied;
    case SAP_FIELD_XPOS: return d->xpos;
    case SAP_FIELD_XQUAT: return d->xquat;
    case SAP_FIELD_QACC_FREE: return d->vstar;
    case SAP_FIELD_MOCAP_POS: return d->mocap_pos;
    case SAP_FIELD_MOCAP_QUAT: return d->mocap_quat;
    case SAP_FIELD_SENSORDATA: return d->sensordata;
    case SAP_FIELD_ACT: return d->act;
    case SAP_FIELD_XFRC_APPLIED: return d->xfrc_applied;
    case SAP_FIELD_CFRC_EXT: return d->cfrc_ext;
    case SAP_FIELD_CVEL: return d->cvel;
    case SAP_FIELD_CINERT: return d->cinert;
    case SAP_FIELD_SUBTREE_COM: return d->subtree_com;
    case SAP_FIELD_QFRC_ACTUATOR: return d->qfrc_actuator;
    case SAP_FIELD_QVEL_PREV: return d->vnext;  /* the integration swaps qvel and vnext */
    case SAP_FIELD_CTRL_HISTORY: return d->history;
    default: return NULL;
  }
}

static sapStatus check_worlds(const sapSim* s, const char* fn, const int* worlds, int n) {
  if (n < 0 || (!worlds && n != s->d.nworld))
    return sap_fail(SAP_ERR_ARG, "%s: with worlds == NULL, n must equal nworld (%d), got %d", fn,
                    s->d.nworld, n);
  if (worlds)
    for (int i = 0; i < n; i++)
      if (worlds[i] < 0 || worlds[i] >= s->d.nworld)
        return sap_fail(SAP_ERR_ARG, "%s: world id %d out of range [0, %d)", fn, worlds[i],
                        s->d.nworld);
  return SAP_OK;
}

sapStatus sap_get(sapSim* s, sapField f, const int* worlds, int n, double* buf) {
  if (!s || !buf) return sap_fail(SAP_ERR_ARG, "sap_get: null argument");
  if ((unsigned)f >= SAP_NFIELD) return sap_fail(SAP_ERR_ARG, "sap_get: unknown field %d", (int)f);
  sapStatus st = check_worlds(s, "sap_get", worlds, n);
  if (st != SAP_OK) return st;
  if (f >= SAP_FIELD_CFRC_EXT && f <= SAP_FIELD_QFRC_ACTUATOR && !s->opt.body_outputs)
    return sap_fail(SAP_ERR_ARG, "sap_get: field '%s' is computed only with option body_outputs=1 "
                    "(this batch was created without it)", sap_fieldName(f));
  int size = sap_fieldSize(s, f);
  if (f == SAP_FIELD_TREE_ASLEEP) {  /* ints, as doubles (CPU only: sleep refuses the GPU) */
    for (int i = 0; i < n; i++)
      for (int k = 0; k < size; k++)
        buf[(size_t)i * size + k] = s->d.tree_asleep[(size_t)(worlds ? worlds[i] : i) * size + k];
    return SAP_OK;
  }
  const double* src = sapd_fieldPtr(&s->d, f);
  /* on the GPU only this field travels (and qvel for qacc_free) */
  size_t bytes = sizeof(double) * (size_t)s->d.nworld * size;
  if ((st = sapb_fetch(s, src, bytes)) != SAP_OK) return st;
  if (f == SAP_FIELD_QACC_FREE &&
      ((st = sapb_fetch(s, s->d.qvel, bytes)) != SAP_OK || (st = sapb_retryFetch(s)) != SAP_OK))
    return st;
  for (int i = 0; i < n; i++) {
    int w = worlds ? worlds[i] : i;
    double* dst = buf + (size_t)i * size;
    const double* row = src + (size_t)w * size;
    if (f == SAP_FIELD_QACC_FREE) {  /* (v* - v) / h, h of the world's last (sub)step (retry) */
      double h = s->rt_hlast ? s->rt_hlast[w] : s->h;
      for (int k = 0; k < size; k++) dst[k] = (row[k] - s->d.qvel[(size_t)w * size + k]) / h;
    }
    else
      memcpy(dst, row, sizeof(double) * size);
  }
  return SAP_OK;
}

/* world w's history buffers in b (nhistory doubles): each cursor an integer in [0, nsample),
 * each buffer's times strictly increasing from its oldest sample to its newest, a sensor's last
 * tick finite */
static sapStatus check_history(const sapSim* s, int w, const double* b) {
  const sapModel* m = s->m;
  for (int k = 0; k < m->nu + m->nsensor; k++) {
    int act = k < m->nu, i = act ? k : k - m->nu;
    int n = act ? m->actuator_nsample[i] : m->sensor_nsample[i];
    if (n <= 0) continue;
    const double* buf = b + (act ? m->actuator_historyadr[i] : m->sensor_historyadr[i]);
    const char* kind = act ? "actuator" : "sensor";
    const char* name = act ? sapm_name(m, m->name_actuatoradr, i) : sapm_name(m, m->name_sensoradr, i);
    if (buf[1] != floor(buf[1]) || buf[1] < 0 || buf[1] >= n)
      return sap_fail(SAP_ERR_ARG, "sap_set: ctrl_history of world %d, %s '%s': cursor %g is not an "
                      "integer in [0, %d); nothing was changed", w, kind, name, buf[1], n);
    if (!act && !isfinite(buf[0]))
      return sap_fail(SAP_ERR_ARG, "sap_set: ctrl_history of world %d, sensor '%s': last tick %g is not "
                      "finite; nothing was changed", w, name, buf[0]);
    for (int j = 0; j + 1 < n; j++) {
      double t0 = buf[2 + sapw_historySlot((int)buf[1], n, j)], t1 = buf[2 + sapw_historySlot((int)buf[1], n, j + 1)];
      if (!(t1 - t0 >= SAP_HISTORY_EPS))
        return sap_fail(SAP_ERR_ARG, "sap_set: ctrl_history of world %d, %s '%s': sample times %g "
                        "then %g do not increase from the oldest to the newest; nothing was changed", w, kind,
                        name, t0, t1);
    }
  }
  return SAP_OK;
}

/* sap_set of tree_asleep: every value an integer >= SAP_SLEEP_AWAKE, the sleeping trees of each
 * world in cycles (each reached again from itself through sleeping trees only, as MuJoCo's
 * mj_sleepCycle walks them); then the values, and the current qpos as the sleeping pose */
static sapStatus set_tree_asleep(sapSim* s, const int* worlds, int n, const double* buf) {
  const sapModel* m = s->m;
  int nt = m->ntree;
  if (!m->sleep && n > 0)
    for (long i = 0; i < (long)n * nt; i++)
      if (buf[i] != SAP_SLEEP_AWAKE)
        return sap_fail(SAP_ERR_ARG, "sap_set: tree_asleep of world %d, tree %ld: %g, but the scene does not "
                        "enable sleep (<flag sleep=\"enable\"/>): every tree stays awake (%d); nothing was "
                        "changed", worlds ? worlds[i / nt] : (int)(i / nt), i % nt, buf[i], SAP_SLEEP_AWAKE);
  for (int i = 0; i < n; i++) {
    const double* b = buf + (size_t)i * nt;
    int w = worlds ? worlds[i] : i;
    for (int t = 0; t < nt; t++) {
      if (b[t] != floor(b[t]) || b[t] < SAP_SLEEP_AWAKE || b[t] >= nt)
        return sap_fail(SAP_ERR_ARG, "sap_set: tree_asleep of world %d, tree %d: %g is not an integer in "
                        "[%d, %d) (awake count or next sleeping tree); nothing was changed", w, t, b[t],
                        SAP_SLEEP_AWAKE, nt);
      int pol = m->tree_sleep_policy[t];
      if (b[t] >= 0 && (pol == SAP_SLEEP_NEVER || pol == SAP_SLEEP_AUTO_NEVER))
        return sap_fail(SAP_ERR_ARG, "sap_set: tree_asleep of world %d, tree %d (root body '%s') is asleep but "
                        "its sleep policy is never; nothing was changed", w, t,
                        sapm_name(m, m->name_bodyadr, m->tree_bodyadr[t]));
    }
    for (int t = 0; t < nt; t++) {
      if (b[t] < 0) continue;
      int cur = t, k = 0;
      do {
        cur = (int)b[cur];
      } while (cur >= 0 && cur != t && ++k <= nt);
      if (cur != t)
        return sap_fail(SAP_ERR_ARG, "sap_set: tree_asleep of world %d, tree %d (root body '%s'): its sleeping "
                        "trees do not cycle back to it (the chain from it reaches %s); nothing was changed", w,
                        t, sapm_name(m, m->name_bodyadr, m->tree_bodyadr[t]),
                        cur < 0 ? "an awake tree" : "a cycle without it");
    }
  }
  for (int i = 0; i < n; i++) {
    int w = worlds ? worlds[i] : i;
    for (int t = 0; t < nt; t++) s->d.tree_asleep[(size_t)w * nt + t] = (int)buf[(size_t)i * nt + t];
    if (m->sleep) memcpy(s->d.sleep_qpos + (size_t)w * m->nq, s->d.qpos + (size_t)w * m->nq, sizeof(double) * m->nq);
  }
  /* the poses of the sleeping pose: a sleeping tree's step keeps the poses it has (after a
   * step they are the step's start state's) */
  return m->sleep ? sapb_kinematics(s, NULL) : SAP_OK;
}

sapStatus sap_set(sapSim* s, sapField f, const int* worlds, int n, const double* buf) {
  if (!s || !buf) return sap_fail(SAP_ERR_ARG, "sap_set: null argument");
  if (f != SAP_FIELD_QPOS && f != SAP_FIELD_QVEL && f != SAP_FIELD_CTRL && f != SAP_FIELD_TIME &&
      f != SAP_FIELD_QFRC_APPLIED && f != SAP_FIELD_MOCAP_POS && f != SAP_FIELD_MOCAP_QUAT &&
      f != SAP_FIELD_ACT && f != SAP_FIELD_XFRC_APPLIED && f != SAP_FIELD_QVEL_PREV &&
      f != SAP_FIELD_CTRL_HISTORY && f != SAP_FIELD_TREE_ASLEEP)
    return sap_fail(SAP_ERR_ARG, "sap_set: field '%s' is read-only", sap_fieldName(f));
  sapStatus st = check_worlds(s, "sap_set", worlds, n);
  if (st != SAP_OK) return st;
  int size = sap_fieldSize(s, f);
  if (f == SAP_FIELD_TREE_ASLEEP) return set_tree_asleep(s, worlds, n, buf);
  /* validate everything before changing anything */
  for (long i = 0; i < (long)n * size; i++)
    if (!isfinite(buf[i]))
      return sap_fail(SAP_ERR_NONFINITE, "sap_set: %s of world %d, index %ld is not finite (%g); "
                      "nothing was changed", sap_fieldName(f), worlds ? worlds[i / size] : (int)(i / size),
                      i % size, buf[i]);
  /* a control history buffer must stay a ring the reads can search */
  if (f == SAP_FIELD_CTRL_HISTORY)
    for (int i = 0; i < n; i++)
      if ((st = check_history(s, worlds ? worlds[i] : i, buf + (size_t)i * size)) != SAP_OK) return st;
  /* a mocap quaternion is normalised on use: it needs a direction */
  if (f == SAP_FIELD_MOCAP_QUAT)
    for (long i = 0; i < (long)n * size; i += 4)
      if (buf[i] == 0 && buf[i + 1] == 0 && buf[i + 2] == 0 && buf[i + 3] == 0)
        return sap_fail(SAP_ERR_ARG, "sap_set: mocap_quat of world %d, mocap body %ld is zero; "
                        "nothing was changed", worlds ? worlds[i / size] : (int)(i / size),
                        (i % size) / 4);
  /* on the GPU only the arrays written travel: the field, and for a state edit the
   * flags (a set state unfreezes a non-finite world) and vnext */
  double* dst = sapd_fieldPtr(&s->d, f);
  int state = f == SAP_FIELD_QPOS || f == SAP_FIELD_QVEL || f == SAP_FIELD_ACT;
  size_t bytes = sizeof(double) * (size_t)s->d.nworld * size;
  size_t fbytes = sizeof(int) * (size_t)s->d.nworld;
  if ((st = sapb_fetch(s, dst, bytes)) != SAP_OK) return st;
  if (state && (st = sapb_fetch(s, s->d.world_flags, fbytes)) != SAP_OK) return st;
  if (f == SAP_FIELD_QVEL && (st = sapb_fetch(s, s->d.vnext, bytes)) != SAP_OK) return st;
  for (int i = 0; i < n; i++) {
    int w = worlds ? worlds[i] : i;
    memcpy(dst + (size_t)w * size, buf + (size_t)i * size, sizeof(double) * size);
    if (state) s->d.world_flags[w] &= ~SAP_WORLD_NONFINITE;
    if (f == SAP_FIELD_QVEL) memcpy(s->d.vnext + (size_t)w * size, buf + (size_t)i * size, sizeof(double) * size);
  }
  if ((st = sapb_push(s, dst, bytes)) != SAP_OK) return st;
  if (state && (st = sapb_push(s, s->d.world_flags, fbytes)) != SAP_OK) return st;
  if (f == SAP_FIELD_QVEL && (st = sapb_push(s, s->d.vnext, bytes)) != SAP_OK) return st;
  /* poses of every world, as after a qpos edit (both backends alike: xpos always shows the
   * current state of every world after a pose edit) */
  int pose = f == SAP_FIELD_QPOS || f == SAP_FIELD_MOCAP_POS || f == SAP_FIELD_MOCAP_QUAT;
  if (pose && (st = sapb_kinematics(s, NULL)) != SAP_OK) return st;
  /* position/velocity sensors follow a state edit (and the clock a time edit) */
  int sensed = pose || f == SAP_FIELD_QVEL || f == SAP_FIELD_TIME;
  return sensed ? sapb_sensors(s, NULL) : SAP_OK;
}

/* ---- commit: state written in place (device or host addresses) -------------------- */

/* the first bad value of one world's committed state, as a failure naming it (status
 * kept in *bad); 0 when the world's state is good */
static int bad_state(const sapSim* s, int w, sapStatus* bad) {
  const sapModel* m = s->m;
  const sapData* d = &s->d;
  struct { const double* x; int n; const char* name; } st[] = {
      {d->qpos + (size_t)w * m->nq, m->nq, "qpos"}, {d->qvel + (size_t)w * m->nv, m->nv, "qvel"},
      {d->act + (size_t)w * m->na, m->na, "act"}, {d->time + w, 1, "time"}, {d->mocap_pos + (size_t)w * m->nmocap * 3, m->nmocap * 3, "mocap_pos"},
      {d->mocap_quat + (size_t)w * m->nmocap * 4, m->nmocap * 4, "mocap_quat"}};
  for (size_t f = 0; f < sizeof(st) / sizeof(st[0]); f++)
    for (int i = 0; i < st[f].n; i++)
      if (!isfinite(st[f].x[i])) {
        if (*bad == SAP_OK)
          *bad = sap_fail(SAP_ERR_NONFINITE, "sap_commit: %s of world %d, index %d is not finite (%g); "
                          "the world is frozen until a reset or a valid set or commit", st[f].name,
                          w, i, st[f].x[i]);
        return 1;
      }
  const double* q = st[5].x;
  for (int b = 0; b < m->nmocap; b++)
    if (q[4 * b] == 0 && q[4 * b + 1] == 0 && q[4 * b + 2] == 0 && q[4 * b + 3] == 0) {
      if (*bad == SAP_OK)
        *bad = sap_fail(SAP_ERR_ARG, "sap_commit: mocap_quat of world %d, mocap body %d is zero; the "
                        "world is frozen until a reset or a valid set or commit", w, b);
      return 1;
    }
  return 0;
}

sapStatus sap_commit(sapSim* s, const unsigned char* mask, void* stream) {
  if (!s) return sap_fail(SAP_ERR_ARG, "sap_commit: null sim");
  sapStatus st = sapb_waitStream(s, stream);
  if (st != SAP_OK) return st;
  /* the caller wrote the device copy: every host array is older now */
  if (s->on_gpu) s->host_stale = 1;
  const sapModel* m = s->m;
  sapData* d = &s->d;
  size_t n = (size_t)d->nworld, dbl = sizeof(double);
  sapRange in[] = {{d->qpos, n * m->nq * dbl}, {d->qvel, n * m->nv * dbl}, {d->act, n * m->na * dbl},
                   {d->time, n * dbl},
                   {d->mocap_pos, n * m->nmocap * 3 * dbl}, {d->mocap_quat, n * m->nmocap * 4 * dbl},
                   {d->ctrl, n * m->nu * dbl}, {d->qfrc_applied, n * m->nv * dbl},
                   {d->xfrc_applied, n * m->nbody * 6 * dbl}, {d->world_flags, n * sizeof(int)}, {d->vnext, n * m->nv * dbl}};
  int nin = (int)(sizeof(in) / sizeof(in[0]));
  for (int i = 0; i < nin && st == SAP_OK; i++) st = sapb_fetch(s, in[i].ptr, in[i].bytes);
  if (st != SAP_OK) return st;
  sapStatus bad = SAP_OK;
  for (int w = 0; w < d->nworld; w++) {
    if (mask && !mask[w]) continue;
    if (bad_state(s, w, &bad)) {
      d->world_flags[w] |= SAP_WORLD_NONFINITE;
      continue;
    }
    d->world_flags[w] &= ~SAP_WORLD_NONFINITE;
    memcpy(d->vnext + (size_t)w * m->nv, d->qvel + (size_t)w * m->nv, dbl * m->nv);
  }
  /* inputs: named, not frozen (a step refuses the world, SAP_WORLD_BADINPUT) */
  if (bad == SAP_OK)
    for (int w = 0; w < d->nworld && bad == SAP_OK; w++) {
      if (mask && !mask[w]) continue;
      for (int i = 0; i < m->nu && bad == SAP_OK; i++)
        if (!isfinite(d->ctrl[(size_t)w * m->nu + i]))
          bad = sap_fail(SAP_ERR_NONFINITE, "sap_commit: ctrl of world %d, index %d is not finite "
                         "(%g); a step refuses the world while it is", w, i, d->ctrl[(size_t)w * m->nu + i]);
      for (int i = 0; i < m->nv && bad == SAP_OK; i++)
        if (!isfinite(d->qfrc_applied[(size_t)w * m->nv + i]))
          bad = sap_fail(SAP_ERR_NONFINITE, "sap_commit: qfrc_applied of world %d, index %d is not "
                         "finite (%g); a step refuses the world while it is", w, i,
                         d->qfrc_applied[(size_t)w * m->nv + i]);
      for (int i = 0; i < 6 * m->nbody && bad == SAP_OK; i++)
        if (!isfinite(d->xfrc_applied[(size_t)w * m->nbody * 6 + i]))
          bad = sap_fail(SAP_ERR_NONFINITE, "sap_commit: xfrc_applied of world %d, body %d, index %d is "
                         "not finite (%g); a step refuses the world while it is", w, i / 6, i % 6,
                         d->xfrc_applied[(size_t)w * m->nbody * 6 + i]);
    }
  if ((st = sapb_push(s, d->world_flags, n * sizeof(int))) != SAP_OK) return st;
  if ((st = sapb_push(s, d->vnext, n * m->nv * dbl)) != SAP_OK) return st;
  /* poses of the committed worlds (the device recomputes every world not frozen) */
  if ((st = sapb_kinematics(s, mask)) != SAP_OK) return st;
  return bad;
}

/* ---- equality constraints on and off per world ------------------------------------- */

sapStatus sap_setEqActive(sapSim* s, int world, int eq, int active) {
  if (!s) return sap_fail(SAP_ERR_ARG, "sap_setEqActive: null sim");
  int neq = s->m->neq, nw = s->d.nworld;
  if (world < -1 || world >= nw)
    return sap_fail(SAP_ERR_ARG, "sap_setEqActive: world %d out of range [0, %d) (-1: all worlds)", world, nw);
  if (eq < -1 || eq >= neq)
    return sap_fail(SAP_ERR_ARG, "sap_setEqActive: equality %d out of range [0, %d) (-1: all)%s", eq, neq,
                    s->m->neq == 0 ? "; the model has none (or disables them)" : "");
  if (active != 0 && active != 1)
    return sap_fail(SAP_ERR_ARG, "sap_setEqActive: active must be 0 or 1, got %d", active);
  size_t bytes = sizeof(int) * (size_t)nw * neq;
  sapStatus st = sapb_fetch(s, s->d.eq_active, bytes);
  if (st != SAP_OK) return st;
  for (int w = world < 0 ? 0 : world; w < (world < 0 ? nw : world + 1); w++)
    for (int e = eq < 0 ? 0 : eq; e < (eq < 0 ? neq : eq + 1); e++) s->d.eq_active[(size_t)w * neq + e] = active;
  return sapb_push(s, s->d.eq_active, bytes);
}

sapStatus sap_setEqActiveArray(sapSim* s, const int* buf) {
  if (!s || !buf) return sap_fail(SAP_ERR_ARG, "sap_setEqActiveArray: null argument");
  int neq = s->m->neq;
  long n = (long)s->d.nworld * neq;
  for (long i = 0; i < n; i++)
    if (buf[i] != 0 && buf[i] != 1)
      return sap_fail(SAP_ERR_ARG, "sap_setEqActiveArray: world %ld, equality %ld: active must be 0 or 1, "
                      "got %d; nothing was changed", i / neq, i % neq, buf[i]);
  memcpy(s->d.eq_active, buf, sizeof(int) * (size_t)n);
  return sapb_push(s, s->d.eq_active, sizeof(int) * (size_t)n);
}

sapStatus sap_getEqActive(sapSim* s, int* buf) {
  if (!s || !buf) return sap_fail(SAP_ERR_ARG, "sap_getEqActive: null argument");
  size_t bytes = sizeof(int) * (size_t)s->d.nworld * s->m->neq;
  sapStatus st = sapb_fetch(s, s->d.eq_active, bytes);
  if (st == SAP_OK) memcpy(buf, s->d.eq_active, bytes);
  return st;
}

sapStatus sap_getMassMatrix(sapSim* s, int world, double* out) {
  if (!s || !out) return sap_fail(SAP_ERR_ARG, "sap_getMassMatrix: null argument");
  const sapModel* m = s->m;
  int nv = m->nv;
  if (world < 0 || world >= s->d.nworld)
    return sap_fail(SAP_ERR_ARG, "sap_getMassMatrix: world %d out of range [0, %d)", world, s->d.nworld);
  const double* A = s->d.qA + (size_t)world * m->nA;
  sapStatus st = sapb_fetch(s, A, sizeof(double) * (size_t)m->nA);
  if (st != SAP_OK) return st;
  /* A[i][j] at dof_Aadr[i] + j, j in [Alo, Ahi) (kernels.h sapw_Arow); zeros elsewhere */
  for (int i = 0; i < nv; i++) {
    double* row = out + (size_t)i * nv;
    int lo = m->dof_Alo[i], hi = m->dof_Ahi[i];
    for (int j = 0; j < nv; j++) row[j] = 0;
    memcpy(row + lo, A + m->dof_Aadr[i] + lo, sizeof(double) * (size_t)(hi - lo));
  }
  return SAP_OK;
}

sapStatus sap_worldInfo(sapSim* s, const int* worlds, int n, sapWorldInfo* out) {
  if (!s || !out) return sap_fail(SAP_ERR_ARG, "sap_worldInfo: null argument");
  sapStatus st = check_worlds(s, "sap_worldInfo", worlds, n);
  if (st != SAP_OK) return st;
  size_t bytes = sizeof(int) * (size_t)s->d.nworld;
  int* arrays[7] = {s->d.world_flags, s->d.ncon, s->d.ncon_dropped, s->d.newton_iter,
                    s->d.ls_iter, s->d.nfactor, s->d.ls_eval};
  for (int i = 0; i < 7 && st == SAP_OK; i++) st = sapb_fetch(s, arrays[i], bytes);
  if (st != SAP_OK) return st;
  for (int i = 0; i < n; i++) {
    int w = worlds ? worlds[i] : i;
    out[i].flags = s->d.world_flags[w];
    out[i].ncon = s->d.ncon[w];
    out[i].ncon_dropped = s->d.ncon_dropped[w];
    out[i].newton_iter = s->d.newton_iter[w];
    out[i].ls_iter = s->d.ls_iter[w];
    out[i].nfactor = s->d.nfactor[w];
    out[i].ls_eval = s->d.ls_eval[w];
    out[i].band_redo = s->m->contact_band ? s->d.band_redo[w] : 0;
  }
  return SAP_OK;
}

/* p95 of one histogram summed over worlds (bins of SAP_ITER_BINS, stride 2 bins), the total count */
static double hist_p95(const int* hist, int nworld, double* n) {
  double count[SAP_ITER_BINS] = {0}, total = 0, below = 0;
  for (int w = 0; w < nworld; w++)
    for (int k = 0; k < SAP_ITER_BINS; k++) count[k] += hist[(size_t)w * 2 * SAP_ITER_BINS + k];
  for (int k = 0; k < SAP_ITER_BINS; k++) total += count[k];
  *n = total;
  for (int k = 0; k < SAP_ITER_BINS; k++) {
    below += count[k];
    if (total > 0 && below >= 0.95 * total) return k;
  }
  return 0;
}

sapStatus sap_iterStats(sapSim* s, sapIterStats* out) {
  if (!s || !out) return sap_fail(SAP_ERR_ARG, "sap_iterStats: null argument");
  size_t nw = (size_t)s->d.nworld;
  sapStatus st = sapb_fetch(s, s->d.iter_hist, sizeof(int) * 2 * SAP_ITER_BINS * nw);
  if (st == SAP_OK) st = sapb_fetch(s, s->d.iter_sum, sizeof(double) * 2 * nw);
  if (st == SAP_OK) st = sapb_fetch(s, s->d.iter_max, sizeof(int) * 2 * nw);
  if (st != SAP_OK) return st;
  double n2, sum[2] = {0, 0}, max[2] = {0, 0};
  for (size_t w = 0; w < nw; w++)
    for (int k = 0; k < 2; k++) {
      sum[k] += s->d.iter_sum[2 * w + k];
      if (s->d.iter_max[2 * w + k] > max[k]) max[k] = s->d.iter_max[2 * w + k];
    }
  out->newton_p95 = hist_p95(s->d.iter_hist, s->d.nworld, &out->world_steps);
  out->ls_p95 = hist_p95(s->d.iter_hist + SAP_ITER_BINS, s->d.nworld, &n2);
  double n = out->world_steps > 0 ? out->world_steps : 1;
  out->band_redos = 0;
  for (size_t w = 0; w < nw && s->m->contact_band; w++) out->band_redos += s->d.band_redos[w];
  out->newton_mean = sum[0] / n;
  out->ls_mean = sum[1] / n;
  out->newton_max = max[0];
  out->ls_max = max[1];
  return SAP_OK;
}

sapStatus sap_iterStatsClear(sapSim* s) {
  if (!s) return sap_fail(SAP_ERR_ARG, "sap_iterStatsClear: null sim");
  size_t nw = (size_t)s->d.nworld, bh = sizeof(int) * 2 * SAP_ITER_BINS * nw;
  memset(s->d.iter_hist, 0, bh);
  memset(s->d.iter_sum, 0, sizeof(double) * 2 * nw);
  memset(s->d.iter_max, 0, sizeof(int) * 2 * nw);
  if (s->m->contact_band) memset(s->d.band_redos, 0, sizeof(int) * nw);
  sapStatus st = sapb_push(s, s->d.iter_hist, bh);
  if (st == SAP_OK) st = sapb_push(s, s->d.iter_sum, sizeof(double) * 2 * nw);
  if (st == SAP_OK) st = sapb_push(s, s->d.iter_max, sizeof(int) * 2 * nw);
  return st;
}

/* accessors: a NULL sim gives 0, NULL or "" rather than a crash */
int sap_nworld(const sapSim* s) { return s ? s->d.nworld : 0; }
const sapModel* sap_model(const sapSim* s) { return s ? s->m : NULL; }
const sapOptions* sap_options(const sapSim* s) { return s ? &s->opt : NULL; }
int sap_onGPU(const sapSim* s) { return s ? s->on_gpu : 0; }
const char* sap_deviceName(const sapSim* s) { return s ? s->device_name : ""; }
const sapData* sap_data(const sapSim* s) { return s ? &s->d : NULL; }
void sap_timers(const sapSim* s, sapTimers* out) {
  if (!out) return;
  if (s) *out = s->timers;
  else memset(out, 0, sizeof(*out));
}

unsigned long long sap_bytesPerWorld(const sapSim* s) {
  return s ? world_bytes(s->m, s->d.ncon_max) + (unsigned long long)s->d.nscratch : 0;
}

unsigned long long sap_bytesShared(const sapSim* s) {
  unsigned long long n = 0;
  for (int t = 0; s && t < s->nhl; t++) n += (unsigned long long)s->hl[t].cap;
  return n;
}
