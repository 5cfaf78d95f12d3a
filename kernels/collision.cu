/* Collision stage, CUDA backend: parallel over (world, candidate pair). Pass 1
 * runs the bounding test and narrow phase per (world, pair) and stores the contact
 * count; pass 2 (one thread per world) turns counts into offsets, or runs the
 * sequential per-world list when the world overflows its capacity; pass 3 redoes
 * the narrow phase of the pairs with contacts and writes them at their offsets.
 * Same per-pair code and order as the CPU backend (host/collision.c). */
#include "collision.h"
#include "cuda_check.h"
#include "world_view.h"

#define THREADS 128

/* the per-(world, pair) counts live in the world's stage-local scratch */
static __device__ int* pairCounts(const sapData& d, int w) {
  return (int*)(d.scratch + (size_t)w * d.nscratch);
}

static __global__ void count_kernel(SAPG_PARAM sapModel m, SAPG_PARAM sapData d, int fp64) {
  long idx = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= (long)d.nworld * m.npair_max) return;
  int w = (int)(idx / m.npair_max), p = (int)(idx % m.npair_max);
  int* count = pairCounts(d, w);
  if (sapw_frozen(&d, w)) { count[p] = 0; return; }
  sapcContact_f64 c[SAPC_PAIRCON];
  const double* xpos = d.geom_xpos + (size_t)3 * m.ngeom * w;
  const double* xmat = d.geom_xmat + (size_t)9 * m.ngeom * w;
  count[p] = sapw_collidePair(&m, xpos, xmat, m.pair_geom[2 * p], m.pair_geom[2 * p + 1], m.pair_detect[p],
                              fp64, c);
}

/* counts -> exclusive offsets; an overflowing world is done here sequentially */
static __global__ void offset_kernel(SAPG_PARAM sapModel m, SAPG_PARAM sapData d, int fp64) {
  int w = blockIdx.x * blockDim.x + threadIdx.x;
  if (w >= d.nworld) return;
  int* count = pairCounts(d, w);
  int total = 0;
  for (int p = 0; p < m.npair_max; p++) total += count[p];
  if (total > d.ncon_max) {
    sapModel view;  /* the world's contact material */
    sapw_collideWorld(sapw_worldView(&m, w, &view), &d, w, fp64, NULL, NULL);
    return;
  }
  for (int p = 0, off = 0; p < m.npair_max; p++) {
    int n = count[p];
    count[p] = off;
    off += n;
  }
  d.ncon[w] = total;
  d.ncon_dropped[w] = 0;
  d.world_flags[w] &= ~SAP_WORLD_CONTACT_OVERFLOW;
}

static __global__ void write_kernel(SAPG_PARAM sapModel m, SAPG_PARAM sapData d, int fp64) {
  long idx = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= (long)d.nworld * m.npair_max) return;
  int w = (int)(idx / m.npair_max), p = (int)(idx % m.npair_max);
  if (d.ncon_dropped[w] || sapw_frozen(&d, w)) return;
  const int* off = pairCounts(d, w);
  int end = p + 1 < m.npair_max ? off[p + 1] : d.ncon[w];
  if (end == off[p]) return;
  sapcContact_f64 c[SAPC_PAIRCON];
  const double* xpos = d.geom_xpos + (size_t)3 * m.ngeom * w;
  const double* xmat = d.geom_xmat + (size_t)9 * m.ngeom * w;
  int g0 = m.pair_geom[2 * p], g1 = m.pair_geom[2 * p + 1];
  int nc = sapw_collidePair(&m, xpos, xmat, g0, g1, m.pair_detect[p], fp64, c);
  sapcWorldOut o = sapw_worldOut(&d, w);
  sapModel view;  /* the world's contact material */
  const sapModel* mw = sapw_worldView(&m, w, &view);
  for (int i = 0; i < nc && off[p] + i < end; i++) sapw_writeContact(mw, o, off[p] + i, p, c + i);
}

/* fallback without scratch for the counts: one thread per world */
static __global__ void world_kernel(SAPG_PARAM sapModel m, SAPG_PARAM sapData d, int fp64) {
  int w = blockIdx.x * blockDim.x + threadIdx.x;
  if (w >= d.nworld) return;
  sapModel view;  /* the world's contact material */
  sapw_collideWorld(sapw_worldView(&m, w, &view), &d, w, fp64, NULL, NULL);
}

sapStatus sapg_collision(const sapgLaunch* L) {
  int fp64 = L->opt->boundary_pose_precision == SAP_FP64;
  int nworld = L->d.nworld, npair = L->m.npair_max, wbt = L->opt->world_block_threads;
  cudaStream_t stream = SAPG_STREAM(L);
  if (nworld == 0) return SAP_OK;
  if (npair == 0 || !L->d.scratch || L->d.nscratch < 4 * npair) {
    SAPG_LAUNCH(world_kernel, sapg_blocks(nworld, wbt), wbt, stream)(L->m, L->d, fp64);
    SAPG_CHECK_LAUNCH("collision_world");
    return SAP_OK;
  }
  long n = (long)nworld * npair;
  int blocks = (int)((n + THREADS - 1) / THREADS);
  SAPG_LAUNCH(count_kernel, blocks, THREADS, stream)(L->m, L->d, fp64);
  SAPG_CHECK_LAUNCH("collision_count");
  SAPG_LAUNCH(offset_kernel, sapg_blocks(nworld, wbt), wbt, stream)(L->m, L->d, fp64);
  SAPG_CHECK_LAUNCH("collision_offset");
  SAPG_LAUNCH(write_kernel, blocks, THREADS, stream)(L->m, L->d, fp64);
  SAPG_CHECK_LAUNCH("collision_write");
  return SAP_OK;
}
