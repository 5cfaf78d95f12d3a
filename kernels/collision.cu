/* Collision stage, CUDA backend: parallel over (world, candidate pair), the threads of a
 * world walking its pairs grouped by narrow-phase routine (sapModel.pair_order), so that a
 * warp runs one routine. One pass (the world's scratch holds the staging area): pass 1 runs
 * the bounding test and narrow phase per (world, pair) and stages the pair's contacts and
 * count; pass 2 (one thread per world) turns counts into offsets, or builds the list of an
 * overflowing world from the staged contacts (capacity rule as the CPU's list); pass 3
 * writes the staged contacts at their offsets. Without room for the staging: pass 1 only
 * counts and pass 3 redoes the narrow phase of the pairs with contacts; without room for
 * the counts: one thread per world. Outputs keep model order (offsets by pair index), so
 * every path gives the CPU backend's list (host/collision.c), record for record. */
#include "collision.h"
#include "cuda_check.h"
#include "world_view.h"

#define THREADS 128

/* the per-(world, pair) counts (then offsets) live in the world's stage-local scratch */
static __device__ int* pairCounts(const sapData& d, int w) {
  return (int*)(d.scratch + (size_t)w * d.nscratch);
}

/* the staged contacts of world w, after its counts (sapw_stageHeadBytes) */
static __device__ sapcContact_f64* pairStage(const sapModel& m, const sapData& d, int w) {
  return (sapcContact_f64*)(d.scratch + (size_t)w * d.nscratch + sapw_stageHeadBytes(&m));
}

/* world w's whole list on one thread, through the world's view (its pair material); the
 * view's copy of the model is made only for a world with overrides, and lives in this
 * non-inlined function's frame, not in the calling kernel's */
static __device__ __noinline__ void collideWorldView(const sapModel* m, const sapData* d, int w, int fp64) {
  sapModel view;
  sapw_collideWorld(sapw_worldView(m, w, &view), d, w, fp64, NULL, NULL, NULL);
}

/* the same from the staged contacts (pass 2 of an overflowing world) */
static __device__ __noinline__ void collideStagedView(const sapModel* m, const sapData* d, int w, const int* count,
                                                      const sapcContact_f64* stage) {
  sapModel view;
  sapw_collideStaged(sapw_worldView(m, w, &view), d, w, count, stage);
}

/* thread idx -> world w and pair p (the k-th of the world's pairs in routine order) */
static __device__ int pairOf(const sapModel& m, long idx, int* w) {
  *w = (int)(idx / m.npair_max);
  int k = (int)(idx % m.npair_max);
  return m.pair_order ? m.pair_order[k] : k;
}

/* the narrow phase of pair p in world w at the world's geom poses; returns its contacts in c */
static __device__ int narrowPair(const sapModel& m, const sapData& d, int w, int p, int fp64, sapcContact_f64* c) {
  const double* xpos = d.geom_xpos + (size_t)3 * m.ngeom * w;
  const double* xmat = d.geom_xmat + (size_t)9 * m.ngeom * w;
  return sapw_collidePair(&m, xpos, xmat, m.pair_geom[2 * p], m.pair_geom[2 * p + 1], m.pair_detect[p], fp64, c);
}

/* contact of pair p in slot i of world w's list: the record, the world's pair material */
static __device__ void writeSlot(const sapModel& m, sapcWorldOut o, int w, int i, int p, const sapcContact_f64* c) {
  sapw_writeContact(&m, o, i, p, c);
  sapw_worldPairMaterial(&m, o, i, p, w);
}

/* ---- one pass: narrow phase staged, list, copy ------------------------------------------ */

static __global__ void stage_kernel(SAPG_PARAM sapModel m, SAPG_PARAM sapData d, int fp64) {
  long idx = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= (long)d.nworld * m.npair_max) return;
  int w, p = pairOf(m, idx, &w);
  int* count = pairCounts(d, w);
  if (sapw_frozen(&d, w)) { count[p] = 0; return; }
  sapcContact_f64 c[SAPC_PAIRCON];
  int nc = narrowPair(m, d, w, p, fp64, c);
  sapcContact_f64* st = pairStage(m, d, w) + m.pair_stageadr[p];
  int slots = m.pair_stageadr[p + 1] - m.pair_stageadr[p];
  for (int i = 0; i < nc && i < slots; i++) st[i] = c[i];
  count[p] = nc;  // more than slots: pass 2 redoes the world
}

/* counts -> exclusive offsets; an overflowing world's list from the staged contacts, a
 * world with a pair beyond its slots by the per-world list (count[npair] = 1: written) */
static __global__ void list_kernel(SAPG_PARAM sapModel m, SAPG_PARAM sapData d, int fp64) {
  int w = blockIdx.x * blockDim.x + threadIdx.x;
  if (w >= d.nworld || sapw_held(&d, w)) return;  // held by the step retry: its list as it is
  int* count = pairCounts(d, w);
  int total = 0, spill = 0, npair = m.npair_max;
  for (int p = 0; p < npair; p++) {
    total += count[p];
    spill |= count[p] > m.pair_stageadr[p + 1] - m.pair_stageadr[p];
  }
  count[npair] = spill || total > d.ncon_max;
  if (spill) {
    collideWorldView(&m, &d, w, fp64);
    return;
  }
  if (total > d.ncon_max) {
    collideStagedView(&m, &d, w, count, pairStage(m, d, w));
    return;
  }
  for (int p = 0, off = 0; p < npair; p++) {
    int n = count[p];
    count[p] = off;
    off += n;
  }
  d.ncon[w] = total;
  d.ncon_dropped[w] = 0;
  d.con_drop[2 * w] = INFINITY;  // no contact dropped (sapw_collideList's record)
  d.con_drop[2 * w + 1] = 0;
  d.world_flags[w] &= ~SAP_WORLD_CONTACT_OVERFLOW;
}

static __global__ void copy_kernel(SAPG_PARAM sapModel m, SAPG_PARAM sapData d) {
  long idx = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= (long)d.nworld * m.npair_max) return;
  int w, p = pairOf(m, idx, &w);
  const int* off = pairCounts(d, w);
  if (sapw_held(&d, w) || off[m.npair_max]) return;  // held (retry), or written by pass 2
  int end = p + 1 < m.npair_max ? off[p + 1] : d.ncon[w];
  const sapcContact_f64* st = pairStage(m, d, w) + m.pair_stageadr[p];
  sapcWorldOut o = sapw_worldOut(&d, w);
  for (int i = off[p]; i < end; i++) writeSlot(m, o, w, i, p, st + (i - off[p]));
}

/* ---- without the staging: count, offsets, redo ------------------------------------------- */

static __global__ void count_kernel(SAPG_PARAM sapModel m, SAPG_PARAM sapData d, int fp64) {
  long idx = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= (long)d.nworld * m.npair_max) return;
  int w, p = pairOf(m, idx, &w);
  int* count = pairCounts(d, w);
  if (sapw_frozen(&d, w)) { count[p] = 0; return; }
  sapcContact_f64 c[SAPC_PAIRCON];
  count[p] = narrowPair(m, d, w, p, fp64, c);
}

/* counts -> exclusive offsets; an overflowing world is done here sequentially */
static __global__ void offset_kernel(SAPG_PARAM sapModel m, SAPG_PARAM sapData d, int fp64) {
  int w = blockIdx.x * blockDim.x + threadIdx.x;
  if (w >= d.nworld || sapw_held(&d, w)) return;  // held by the step retry: its list as it is
  int* count = pairCounts(d, w);
  int total = 0;
  for (int p = 0; p < m.npair_max; p++) total += count[p];
  if (total > d.ncon_max) {
    collideWorldView(&m, &d, w, fp64);
    return;
  }
  for (int p = 0, off = 0; p < m.npair_max; p++) {
    int n = count[p];
    count[p] = off;
    off += n;
  }
  d.ncon[w] = total;
  d.ncon_dropped[w] = 0;
  d.con_drop[2 * w] = INFINITY;
  d.con_drop[2 * w + 1] = 0;
  d.world_flags[w] &= ~SAP_WORLD_CONTACT_OVERFLOW;
}

static __global__ void write_kernel(SAPG_PARAM sapModel m, SAPG_PARAM sapData d, int fp64) {
  long idx = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= (long)d.nworld * m.npair_max) return;
  int w, p = pairOf(m, idx, &w);
  if (d.ncon_dropped[w] || sapw_frozen(&d, w)) return;
  const int* off = pairCounts(d, w);
  int end = p + 1 < m.npair_max ? off[p + 1] : d.ncon[w];
  if (end == off[p]) return;
  sapcContact_f64 c[SAPC_PAIRCON];
  int nc = narrowPair(m, d, w, p, fp64, c);
  sapcWorldOut o = sapw_worldOut(&d, w);
  for (int i = 0; i < nc && off[p] + i < end; i++) writeSlot(m, o, w, off[p] + i, p, c + i);
}

/* fallback without scratch for the counts: one thread per world */
static __global__ void world_kernel(SAPG_PARAM sapModel m, SAPG_PARAM sapData d, int fp64) {
  int w = blockIdx.x * blockDim.x + threadIdx.x;
  if (w >= d.nworld || sapw_held(&d, w)) return;  // held by the step retry: its list as it is
  collideWorldView(&m, &d, w, fp64);
}

/* the path a batch takes: 2 one pass, 1 count and redo, 0 one thread per world */
static int collisionPath(const sapgLaunch* L) {
  const sapModel* hm = L->hm;
  int npair = L->m.npair_max;
  if (npair == 0 || !L->d.scratch || L->d.nscratch < 4L * npair) return 0;
  if (L->collision_staged && hm->pair_order && hm->pair_stageadr && L->d.nscratch >= sapw_stageBytes(hm)) return 2;
  return 1;
}

sapStatus sapg_collision(const sapgLaunch* L) {
  int fp64 = L->opt->boundary_pose_precision == SAP_FP64;
  int nworld = L->d.nworld, npair = L->m.npair_max, wbt = L->opt->world_block_threads;
  cudaStream_t stream = SAPG_STREAM(L);
  if (nworld == 0) return SAP_OK;
  int path = collisionPath(L);
  if (path == 0) {
    SAPG_LAUNCH(world_kernel, sapg_blocks(nworld, wbt), wbt, stream)(L->m, L->d, fp64);
    SAPG_CHECK_LAUNCH("collision_world");
    return SAP_OK;
  }
  long n = (long)nworld * npair;
  int blocks = (int)((n + THREADS - 1) / THREADS);
  if (path == 2) {
    SAPG_LAUNCH(stage_kernel, blocks, THREADS, stream)(L->m, L->d, fp64);
    SAPG_CHECK_LAUNCH("collision_stage");
    SAPG_LAUNCH(list_kernel, sapg_blocks(nworld, wbt), wbt, stream)(L->m, L->d, fp64);
    SAPG_CHECK_LAUNCH("collision_list");
    SAPG_LAUNCH(copy_kernel, blocks, THREADS, stream)(L->m, L->d);
    SAPG_CHECK_LAUNCH("collision_copy");
    return SAP_OK;
  }
  SAPG_LAUNCH(count_kernel, blocks, THREADS, stream)(L->m, L->d, fp64);
  SAPG_CHECK_LAUNCH("collision_count");
  SAPG_LAUNCH(offset_kernel, sapg_blocks(nworld, wbt), wbt, stream)(L->m, L->d, fp64);
  SAPG_CHECK_LAUNCH("collision_offset");
  SAPG_LAUNCH(write_kernel, blocks, THREADS, stream)(L->m, L->d, fp64);
  SAPG_CHECK_LAUNCH("collision_write");
  return SAP_OK;
}
