/* Collision stage, CPU backend: static pair filtering at load time (as MuJoCo 4's
 * mj_broadphase filters, reference mujoco_semantics.md §1.1), the pairs' SAP material
 * and detection distances, the default contact capacity, and the per-world broad +
 * narrow phase (OpenMP over worlds) on the shared per-world code of
 * kernels/collision.h. Reference for the CUDA backend (kernels/collision.cu). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "collision.h"
#include "sim.h"
#include "../kernels/collision.h"
#include "../kernels/world_view.h"

#define SAPC_SCREEN_SHARE 18

/* ---- static filtering --------------------------------------------------------- */

/* 1 when the pair (g0, g1) can never collide: contype/conaffinity, same weld
 * (one body, welded bodies, both static), both welds dof-less (static geometry and
 * mocap bodies, whose weld is the mocap body itself: MuJoCo 4 gives a mocap body no
 * contacts with the world or other mocaps), parent-child of welds unless either is
 * the world, explicit excludes (body pairs), and type pairs without a routine */
static int pairFiltered(const sapModel* m, int g0, int g1) {
  int ct0 = m->geom_contype[g0], ca0 = m->geom_conaffinity[g0];
  int ct1 = m->geom_contype[g1], ca1 = m->geom_conaffinity[g1];
  if (!(ct0 & ca1) && !(ct1 & ca0)) return 1;
  int t0 = m->geom_type[g0], t1 = m->geom_type[g1];
  // planes and heightfields never collide with each other (MuJoCo 4: no routine)
  int flat0 = t0 == SAP_GEOM_PLANE || t0 == SAP_GEOM_HFIELD, flat1 = t1 == SAP_GEOM_PLANE || t1 == SAP_GEOM_HFIELD;
  if (flat0 && flat1) return 1;
  int b0 = m->geom_bodyid[g0], b1 = m->geom_bodyid[g1];
  int w0 = m->body_weldid[b0], w1 = m->body_weldid[b1];
  if (w0 == w1) return 1;
  if (m->body_dofnum[w0] == 0 && m->body_dofnum[w1] == 0) return 1;
  int wp0 = m->body_weldid[m->body_parentid[w0]], wp1 = m->body_weldid[m->body_parentid[w1]];
  if (m->filter_parent && w0 && w1 && (w0 == wp1 || w1 == wp0)) return 1;
  for (int e = 0; e < m->nexclude; e++) {
    int e0 = m->exclude_body[2 * e], e1 = m->exclude_body[2 * e + 1];
    if ((e0 == b0 && e1 == b1) || (e0 == b1 && e1 == b0)) return 1;
  }
  return 0;
}

int sapc_buildPairs(const sapModel* m, int* out) {
  int n = 0;
  for (int g0 = 0; g0 < m->ngeom; g0++)
    for (int g1 = g0 + 1; g1 < m->ngeom; g1++) {
      if (pairFiltered(m, g0, g1)) continue;
      if (out) { out[2 * n] = g0; out[2 * n + 1] = g1; }
      n++;
    }
  return n;
}

/* the narrow-phase routine of a pair: its geom types, the smaller first */
static int pairRoutine(const sapModel* m, int p) {
  int t0 = m->geom_type[m->pair_geom[2 * p]], t1 = m->geom_type[m->pair_geom[2 * p + 1]];
  if ((unsigned)t0 >= SAP_NGEOMTYPES || (unsigned)t1 >= SAP_NGEOMTYPES) return 0;
  return t0 < t1 ? t0 * SAP_NGEOMTYPES + t1 : t1 * SAP_NGEOMTYPES + t0;
}

/* contact slots of pair p in a world's staging area (GPU one pass, kernels/collision.cu):
 * at most SAPC_MAXCON per primitive or mesh pair, SAPC_HFIELD_MAXCON per heightfield pair
 * (a pair that finds more is redone by the per-world list, exact either way) */
static int pairStageSlots(const sapModel* m, int p) {
  int t0 = m->geom_type[m->pair_geom[2 * p]], t1 = m->geom_type[m->pair_geom[2 * p + 1]];
  return t0 == SAP_GEOM_HFIELD || t1 == SAP_GEOM_HFIELD ? SAPC_HFIELD_MAXCON : SAPC_MAXCON;
}

/* pair_order: the candidate pairs grouped by narrow-phase routine (a stable counting sort
 * on the geom type pair), so that a GPU warp runs one routine; pair_stageadr: each pair's
 * first staging slot, in model order; pair_geomadr: each geom's first pair as g0 */
static void pairOrder(sapModel* m) {
  enum { NKEY = SAP_NGEOMTYPES * SAP_NGEOMTYPES };
  int start[NKEY + 1];
  if (!m->pair_order || !m->pair_stageadr) return;
  for (int k = 0; k <= NKEY; k++) start[k] = 0;
  for (int p = 0; p < m->npair_max; p++) start[pairRoutine(m, p) + 1]++;
  for (int k = 0; k < NKEY; k++) start[k + 1] += start[k];
  for (int p = 0; p < m->npair_max; p++) m->pair_order[start[pairRoutine(m, p)]++] = p;
  m->pair_stageadr[0] = 0;
  for (int p = 0; p < m->npair_max; p++) m->pair_stageadr[p + 1] = m->pair_stageadr[p] + pairStageSlots(m, p);
  if (!m->pair_geomadr) return;
  for (int g = 0, p = 0; g <= m->ngeom; g++) {  // pair_geom sorted by g0 (model_load.c)
    while (p < m->npair_max && m->pair_geom[2 * p] < g) p++;
    m->pair_geomadr[g] = p;
  }
}

/* SAP material and detection distance of every candidate pair from the resolved
 * geom values: k in series, tau_d summed (a geom's k <= 0 or tau_d < 0 means the
 * scene's), detection = margin + max(gap, contact_margin); geom_detect is the largest
 * detection distance among a geom's pairs (the sweep inflates each geom by it, which
 * covers every pair: d_p <= d_g0 + d_g1) */
void sapc_pairMaterial(sapModel* m) {
  for (int g = 0; g < m->ngeom; g++) m->geom_detect[g] = 0;
  for (int p = 0; p < m->npair_max; p++) {
    int g0 = m->pair_geom[2 * p], g1 = m->pair_geom[2 * p + 1];
    double k0 = m->geom_k[g0] > 0 ? m->geom_k[g0] : m->contact_k;
    double k1 = m->geom_k[g1] > 0 ? m->geom_k[g1] : m->contact_k;
    double d0 = m->geom_taud[g0] >= 0 ? m->geom_taud[g0] : m->contact_taud;
    double d1 = m->geom_taud[g1] >= 0 ? m->geom_taud[g1] : m->contact_taud;
    m->pair_k[p] = sapw_combineK(k0, k1);
    m->pair_taud[p] = d0 + d1;
    m->pair_detect[p] = sapw_pairDetect(m, p);
    m->geom_detect[g0] = fmax(m->geom_detect[g0], m->pair_detect[p]);
    m->geom_detect[g1] = fmax(m->geom_detect[g1], m->pair_detect[p]);
  }
  pairOrder(m);
}

/* prisms of heightfield geom gh that geom g (bounding sphere rbound) can overlap: the
 * cells under its bounding square, two prisms each; a geom without a bound covers them all */
static long hfieldPrisms(const sapModel* m, int gh, int g) {
  int id = m->geom_dataid[gh];
  if (id < 0 || id >= m->nhfield) return 0;
  const double* sz = m->hfield_size + 4 * id;
  int nrow = m->hfield_nrow[id], ncol = m->hfield_ncol[id];
  if (nrow < 2 || ncol < 2) return 0;
  long all = 2L * (nrow - 1) * (ncol - 1);
  double r = m->geom_rbound[g];
  if (!(r > 0)) return all;
  double nx = ceil(2 * r / (2 * sz[0] / (ncol - 1))) + 1, ny = ceil(2 * r / (2 * sz[1] / (nrow - 1))) + 1;
  double n = 2 * fmin(nx, ncol - 1) * fmin(ny, nrow - 1);
  return n < (double)all ? (long)n : all;
}

/* most contacts the pair (g0, g1) can produce */
static int pairMaxContacts(const sapModel* m, int g0, int g1) {
  int t0 = m->geom_type[g0], t1 = m->geom_type[g1];
  int a = t0 < t1 ? t0 : t1, b = t0 < t1 ? t1 : t0;
  if (a == SAP_GEOM_PLANE && b == SAP_GEOM_HFIELD) return 0;
  if (a == SAP_GEOM_HFIELD) {
    if (b == SAP_GEOM_HFIELD) return 0;
    long n = t0 == SAP_GEOM_HFIELD ? hfieldPrisms(m, g0, g1) : hfieldPrisms(m, g1, g0);
    return n < SAPC_HFIELD_MAXCON ? (int)n : SAPC_HFIELD_MAXCON;
  }
  if (a == SAP_GEOM_SPHERE || (a == SAP_GEOM_PLANE && (b == SAP_GEOM_SPHERE || b == SAP_GEOM_ELLIPSOID)))
    return 1;
  if ((a == SAP_GEOM_PLANE || a == SAP_GEOM_CAPSULE) && b == SAP_GEOM_CAPSULE) return 2;
  return SAPC_MAXCON;
}

/* With the screened solve (option contact_screen, screen = 1) an idle contact takes no row, so
 * the list holds the candidates: a geom among neighbours on every side has up to 4 points per
 * face pair; SAPC_SCREEN_SHARE per moving geom instead of 4 (the settled cube pile: 444
 * candidates, 16.4 per cube; its estimate 27 x 18 + 8 = 496 drops none).
 * Rule: each moving collidable geom rests on one neighbour through a manifold of up to
 * 4 points (the contact it supports is counted by the geom resting on it): 4 per non-static
 * collidable geom, plus 8 (two more manifolds) of slack; never more than the sum of the
 * per-pair maxima over the candidate pairs; at least 8; rounded up to a multiple of 8.
 * A geom that can touch a heightfield rests on it through up to one contact per prism
 * under its bounding square (at most SAPC_HFIELD_MAXCON), so its share is the largest of
 * its heightfield pairs' maxima instead of 4 when that is larger.
 * Measured peaks (`sapsim run SCENE --worlds 32 --steps 1500 --ctrl-noise 1`, the "contacts
 * found in a world-step at most" line): humanoid 18 of 80, box_stack 16 of 24, ant 4 of 64. */
int sapc_estimateNconMax(const sapModel* m, int screen) {
  long upper = 0, moving = 0;
  int* share = (int*)malloc(sizeof(int) * (m->ngeom > 0 ? m->ngeom : 1));
  for (int g = 0; g < m->ngeom; g++) share[g] = screen ? SAPC_SCREEN_SHARE : 4;
  for (int p = 0; p < m->npair_max; p++) {
    int g0 = m->pair_geom[2 * p], g1 = m->pair_geom[2 * p + 1], n = pairMaxContacts(m, g0, g1);
    upper += n;
    int t0 = m->geom_type[g0], t1 = m->geom_type[g1];
    if (share && (t0 == SAP_GEOM_HFIELD) != (t1 == SAP_GEOM_HFIELD)) {
      int g = t0 == SAP_GEOM_HFIELD ? g1 : g0;
      share[g] = n > share[g] ? n : share[g];
    }
  }
  for (int g = 0; g < m->ngeom; g++)
    if (m->body_weldid[m->geom_bodyid[g]] != 0 && (m->geom_contype[g] || m->geom_conaffinity[g]))
      moving += share ? share[g] : 4;
  free(share);
  long est = moving + 8 < upper ? moving + 8 : upper;
  if (est < 8) est = 8;
  if (est > 1 << 20) est = 1 << 20;
  return (int)((est + 7) / 8 * 8);
}

/* ---- broad phase choice and scratch ------------------------------------------- */

/* sweep-and-prune per world beats testing every candidate pair when the pairs
 * outnumber the geoms by far (many geoms, few near each other) */
int sapc_broadphaseMode(const sapSim* s) {
  if (s->opt.broadphase == SAP_BROAD_PAIRS || s->opt.broadphase == SAP_BROAD_SWEEP) return s->opt.broadphase;
  const sapModel* m = s->m;
  return (m->ngeom >= 32 && m->npair_max > 8 * m->ngeom) ? SAP_BROAD_SWEEP : SAP_BROAD_PAIRS;
}

typedef struct sweepItem {
  double lo, hi;  /* interval along the sweep axis */
  int g, pad;
} sweepItem;

static int sweepBytes(const sapModel* m) {
  return (int)(sizeof(sweepItem) * m->ngeom + 4 * ((m->npair_max + 31) / 32));
}

long sapc_collisionStageBudget = 1L << 20;

/* CPU: the sweep's items and pair mask, then the list's heap (2 ncon_max ints), then the
 * narrow phase's geometry cache (sapw_geomCacheBytes). GPU (gpu =
 * 1): the per-pair counts, and the one-pass staging area (sapw_stageBytes: counts and every
 * pair's contact slots) when it fits in sapc_collisionStageBudget bytes per world; the
 * kernels fall back to counting and redoing the narrow phase when it is not there */
long sapc_collisionScratchBytes(const sapModel* m, int ncon_max, int gpu) {
  long cpu = (sweepBytes(m) + 7) / 8 * 8 + 8L * ncon_max + sapw_geomCacheBytes(m), dev = 4L * m->npair_max;
  long stage = m->pair_stageadr ? sapw_stageBytes(m) : 0;
  if (gpu && stage > dev && stage <= sapc_collisionStageBudget) dev = stage;
  long n = cpu > dev ? cpu : dev;
  return (n + 7) / 8 * 8;
}

int sapc_collisionStaged(const sapSim* s) {
  const sapModel* m = s->m;
  if (!m->pair_order || !m->pair_stageadr || m->npair_max == 0) return 0;
  long stage = sapw_stageBytes(m);
  return stage <= sapc_collisionStageBudget && stage <= s->d.nscratch;
}

static int sweep_cmp(const void* a, const void* b) {
  const sweepItem *x = (const sweepItem*)a, *y = (const sweepItem*)b;
  if (x->lo != y->lo) return x->lo < y->lo ? -1 : 1;
  return (x->g > y->g) - (x->g < y->g);
}

/* sweep-and-prune of world w along a fixed skew axis: geoms as intervals of
 * their bounding sphere + geom_detect (planes: infinite); marks the candidate pairs
 * whose intervals overlap in a bit mask (conservative: the bounding test follows) */
static const unsigned* sweepWorld(const sapModel* m, const sapData* d, int w, unsigned char* scratch) {
  static const double axis[3] = {0.6022, 0.7904, 0.1253};  // (0.5935, 0.7790, 0.1235) normalised
  sweepItem* it = (sweepItem*)scratch;
  unsigned* mask = (unsigned*)(scratch + sizeof(sweepItem) * m->ngeom);
  const double* xpos = d->geom_xpos + (long)3 * m->ngeom * w;
  memset(mask, 0, 4 * ((m->npair_max + 31) / 32));
  for (int g = 0; g < m->ngeom; g++) {
    double c = axis[0] * xpos[3 * g] + axis[1] * xpos[3 * g + 1] + axis[2] * xpos[3 * g + 2];
    double r = m->geom_rbound[g] + m->geom_detect[g];
    int inf = m->geom_rbound[g] <= 0 || !isfinite(c);
    it[g].lo = inf ? -INFINITY : c - r;
    it[g].hi = inf ? INFINITY : c + r;
    it[g].g = g;
  }
  /* by lo, then geom: a stable sort of the geom order. The items are rebuilt in geom order at
     every step, so the insertion sort is quadratic in the geoms out of place (a grid of 1000
     objects along the skew axis: about n^2 / 4 swaps a step); past a few dozen geoms qsort,
     with the geom as the tie-break, gives the same order */
  if (m->ngeom <= 48)
    for (int i = 1; i < m->ngeom; i++)
      for (int j = i; j > 0 && it[j].lo < it[j - 1].lo; j--) {
        sweepItem t = it[j]; it[j] = it[j - 1]; it[j - 1] = t;
      }
  else
    qsort(it, (size_t)m->ngeom, sizeof(sweepItem), sweep_cmp);
  for (int i = 0; i < m->ngeom; i++)
    for (int j = i + 1; j < m->ngeom && it[j].lo <= it[i].hi; j++) {
      int a = it[i].g < it[j].g ? it[i].g : it[j].g, b = it[i].g < it[j].g ? it[j].g : it[i].g;
      int p = sapw_findPair(m, a, b);
      if (p >= 0) mask[p >> 5] |= 1u << (p & 31);
    }
  return mask;
}

/* ---- stage driver ----------------------------------------------------------------- */

/* world w's contacts (the step's one-world path, host/step.c) */
void sapc_collisionWorld(sapSim* s, int w) {
  const sapModel* m = s->m;
  sapData* d = &s->d;
  int fp64 = s->opt.boundary_pose_precision == SAP_FP64;
  unsigned char* scratch = d->scratch ? d->scratch + (long)d->nscratch * w : NULL;
  long heap_off = (sweepBytes(m) + 7) / 8 * 8;
  int sweep = sapc_broadphaseMode(s) == SAP_BROAD_SWEEP && scratch && d->nscratch >= sweepBytes(m);
  const unsigned* mask = sweep ? sweepWorld(m, d, w, scratch) : NULL;
  int* work = scratch && d->nscratch >= heap_off + 8L * d->ncon_max ? (int*)(scratch + heap_off) : NULL;
  long gc_off = heap_off + 8L * d->ncon_max;
  unsigned char* gc = work && d->nscratch >= gc_off + sapw_geomCacheBytes(m) ? scratch + gc_off : NULL;
  sapModel view;  /* the world's contact material */
  sapw_collideWorld(sapw_worldView(m, w, &view), d, w, fp64, mask, work, gc);
}

void sapc_collision(sapSim* s) {
  int nt = sapc_threads(s);
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
  for (int w = 0; w < s->d.nworld; w++) sapc_collisionWorld(s, w);
}
