/* Collision per world, shared by the CPU driver (host/collision.c) and the CUDA
 * kernels (kernels/collision.cu): narrow phase instantiated in fp32 and fp64 from
 * collision_t.h, bounding test as MuJoCo's (mj_collideGeoms), contact record
 * (witnesses and phi on the margin-inflated surfaces, frame, the pair's material
 * combined at load) and the per-world list with capacity (deepest kept, order by
 * pair then point). Reference implementation. */
#ifndef SAPSIM_COLLISION_H
#define SAPSIM_COLLISION_H

#include "sap_real.h"
#include "sapsim/model.h"
#include "sapsim/data.h"
#include "world_flags.h"
#include "bits.h"
#include "pair.h"
#include "sleep.h"
#include "band.h"

#define SAPC_MAXCON 4            /* contacts per geom pair (primitives, meshes) */
#define SAPC_HFIELD_MAXCON 50    /* per heightfield pair: one per prism, MuJoCo's mjMAXCONPAIR */
#define SAPC_PAIRCON 50          /* a pair's contact buffer: the larger of the two */
#define CL_FEATURE_SIN 0.035     /* ~2 deg: features within it form a face/edge manifold */
#define CL_PARALLEL_SIN 0.02     /* segments closer than this to parallel: 2 contacts */
#define CL_MPR_ITERS 50          /* MuJoCo mpr_iterations (phase 3 expansions) */
#define CL_MPR_TOL 1e-6          /* MuJoCo mpr_tolerance (m, absolute) */
#define CL_MPR_MAXLOOP 200       /* safety cap of MPR phases 1-2 (libccd: none) */
#define CL_HULL_SCAN 32          /* mesh hulls up to this many vertices are scanned, not climbed */
#define CL_HULL_PLATEAU 32       /* tied vertices a support search settles on the graph */
#define CL_HULL_FEATURE 128      /* face / below-plane vertices gathered on the graph (else scan) */
#ifndef CL_EPA_NV
#define CL_EPA_NV 64             /* EPA polytope budget: vertices (GPU stack: 64 -> ~10 KB fp64) */
#endif
#ifndef CL_EPA_NF
#define CL_EPA_NF 128            /* ... and faces */
#endif

/* the large narrow-phase routines are not inlined on the device (compile time,
 * register pressure) */
#ifdef __CUDACC__
#define SAP_HD_BIG static __host__ __device__ __noinline__ __attribute__((unused))
#else
#define SAP_HD_BIG static inline
#endif

/* precision-dependent helpers of collision_t.h, in terms of the instance macros */
#define CL_SQRT SAP_SQRT
#define CL_FABS SAP_FABS
#define CL_ATAN2 SAP_ATAN2
#define CL_COS SAP_COS
#define CL_SIN SAP_SIN
#define CL_TINY SAP_TINY
#define CL_EPS SAP_EPS          /* libccd CCD_EPS in this precision */
#define CL_GOLDEN_ITERS (sizeof(SAP_REAL) == 4 ? 32 : 64)
/* box-box (MuJoCo 4's mjc_BoxBox constants): edge axes a_i x b_j shorter than
 * CL_BOX_PARALLEL are rounding noise (sin^2 1e-16 in fp64, 1e-7 in fp32) and skipped;
 * separation tests get CL_BOX_SEPEPS x (sum of half sizes) of rounding slack; an
 * axis component below CL_BOX_AMBIG leaves the support edge ambiguous; an edge axis
 * must beat the best face by a relative CL_BOX_EDGE_BIAS */
#define CL_BOX_PARALLEL (sizeof(SAP_REAL) == 4 ? 3.1622776e-4 : 1e-8)
#define CL_BOX_SEPEPS (sizeof(SAP_REAL) == 4 ? 1e-6 : 1e-13)
#define CL_BOX_AMBIG (sizeof(SAP_REAL) == 4 ? 1e-5 : 1e-9)
#define CL_BOX_EDGE_BIAS 1e-6
#define CL_BOX_SKIP_EPS 128     /* edge axes skipped from the tables: slack in eps x scale (collision_t.h) */

#include "sap_f32.h"
#include "collision_t.h"
#include "sap_end.h"

#include "sap_f64.h"
#include "collision_t.h"
#include "sap_end.h"

/* ---- pair level (double interface) ------------------------------------------------ */

/* MuJoCo's bounding test: spheres (rbound + margin), or a plane against a sphere;
 * 1 when the pair may touch */
SAP_HD int sapw_boundTest(const sapModel* m, const double* xpos, const double* xmat, int g0, int g1,
                          double margin) {
  const double* p0 = xpos + 3 * g0;
  const double* p1 = xpos + 3 * g1;
  double r0 = m->geom_rbound[g0], r1 = m->geom_rbound[g1];
  if (r0 > 0 && r1 > 0) {
    double d0 = p1[0] - p0[0], d1 = p1[1] - p0[1], d2 = p1[2] - p0[2];
    return sqrt(d0 * d0 + d1 * d1 + d2 * d2) <= r0 + r1 + margin;
  }
  // plane (rbound 0): signed height of the other centre along the plane's z axis
  for (int k = 0; k < 2; k++) {
    int gp = k ? g1 : g0, go = k ? g0 : g1;
    double ro = m->geom_rbound[go];
    if (m->geom_type[gp] != SAP_GEOM_PLANE || ro <= 0) continue;
    const double* R = xmat + 9 * gp;
    const double* pp = xpos + 3 * gp;
    const double* po = xpos + 3 * go;
    double h = R[2] * (po[0] - pp[0]) + R[5] * (po[1] - pp[1]) + R[8] * (po[2] - pp[2]);
    if (h > margin + ro) return 0;
  }
  return 1;
}

/* detection distance of candidate pair p (model.h): the MJCF margin (summed, surface
 * inflation) plus a band beyond it, the larger of the MJCF gap (summed) and sapsim's
 * speculative contact_margin; host/collision.c stores it in pair_detect */
SAP_HD double sapw_pairDetect(const sapModel* m, int p) {
  return m->pair_margin[p] + fmax(m->pair_gap[p], m->contact_margin);
}

/* CPU geometry cache of one world-step (sapw_collideList with gc): ngeom flags, then ngeom
 * geoms in the narrow phase's precision, each converted (sapc_loadGeom) at its first pair
 * instead of at every pair; sized for the larger fp64 geom */
SAP_HD long sapw_geomCacheBytes(const sapModel* m) {
  return (4L * m->ngeom + 7) / 8 * 8 + (long)sizeof(sapcGeom_f64) * m->ngeom;
}

SAP_HD void sapw_geomCacheClear(const sapModel* m, unsigned char* gc) {
  int* flag = (int*)gc;
  for (int g = 0; g < m->ngeom; g++) flag[g] = 0;
}

SAP_HD sapcGeom_f64* sapw_cachedGeom_f64(const sapModel* m, const double* xpos, const double* xmat, int g,
                                         unsigned char* gc) {
  int* flag = (int*)gc;
  sapcGeom_f64* geoms = (sapcGeom_f64*)(gc + (4L * m->ngeom + 7) / 8 * 8);
  if (!flag[g]) sapc_loadGeom_f64(m, xpos, xmat, g, geoms + g), flag[g] = 1;
  return geoms + g;
}

SAP_HD sapcGeom_f32* sapw_cachedGeom_f32(const sapModel* m, const double* xpos, const double* xmat, int g,
                                         unsigned char* gc) {
  int* flag = (int*)gc;
  sapcGeom_f32* geoms = (sapcGeom_f32*)(gc + (4L * m->ngeom + 7) / 8 * 8);
  if (!flag[g]) sapc_loadGeom_f32(m, xpos, xmat, g, geoms + g), flag[g] = 1;
  return geoms + g;
}

/* contacts of geoms g0, g1 in one world (xpos/xmat: that world's geom poses) whose
 * geometric distance is below margin (the pair's detection distance), normal from g0
 * to g1; dist is the distance between the geoms' own surfaces; out holds SAPC_PAIRCON.
 * gc: the world-step's geometry cache (sapw_geomCacheBytes), or NULL (convert here) */
SAP_HD_BIG int sapw_collidePairCached(const sapModel* m, const double* xpos, const double* xmat, int g0, int g1,
                                      double margin, int fp64, sapcContact_f64* out, unsigned char* gc) {
  if (!sapw_boundTest(m, xpos, xmat, g0, g1, margin)) return 0;
  // the narrow phase wants type(a) <= type(b)
  int swap = m->geom_type[g0] > m->geom_type[g1];
  int ga = swap ? g1 : g0, gb = swap ? g0 : g1, nc, nk = 0, hint[2] = {-1, -1};
  double s = swap ? -1.0 : 1.0;
  if (fp64) {
    sapcGeom_f64 la, lb, *a = &la, *b = &lb;
    if (gc) {
      a = sapw_cachedGeom_f64(m, xpos, xmat, ga, gc);
      b = sapw_cachedGeom_f64(m, xpos, xmat, gb, gc);
    } else {
      sapc_loadGeom_f64(m, xpos, xmat, ga, a);
      sapc_loadGeom_f64(m, xpos, xmat, gb, b);
    }
    a->hint = hint;  // mesh support warm starts within the pair
    b->hint = hint + 1;
    nc = sapc_collide_f64(a, b, margin, out);
    for (int i = 0; i < nc; i++) {
      if (!(out[i].dist < margin)) continue;
      out[nk] = out[i];
      for (int k = 0; k < 3; k++) out[nk].n[k] = s * out[i].n[k];
      nk++;
    }
  } else {
    sapcGeom_f32 la, lb, *a = &la, *b = &lb;
    sapcContact_f32 c[SAPC_PAIRCON];
    if (gc) {
      a = sapw_cachedGeom_f32(m, xpos, xmat, ga, gc);
      b = sapw_cachedGeom_f32(m, xpos, xmat, gb, gc);
    } else {
      sapc_loadGeom_f32(m, xpos, xmat, ga, a);
      sapc_loadGeom_f32(m, xpos, xmat, gb, b);
    }
    a->hint = hint;
    b->hint = hint + 1;
    nc = sapc_collide_f32(a, b, (float)margin, c);
    for (int i = 0; i < nc; i++) {  // widened to fp64 (exact), then as above
      double dist = c[i].dist;
      if (!(dist < margin)) continue;
      for (int k = 0; k < 3; k++) {
        out[nk].pos[k] = c[i].pos[k];
        out[nk].n[k] = s * (double)c[i].n[k];
      }
      out[nk].dist = dist;
      nk++;
    }
  }
  return nk;
}

SAP_HD_BIG int sapw_collidePair(const sapModel* m, const double* xpos, const double* xmat, int g0, int g1,
                            double margin, int fp64, sapcContact_f64* out) {
  return sapw_collidePairCached(m, xpos, xmat, g0, g1, margin, fp64, out, (unsigned char*)0);
}

/* ---- contact record ------------------------------------------------------------------ */

/* one world's contact arrays */
typedef struct sapcWorldOut {
  int* geom;       /* (ncon_max x 2) */
  double* pos;     /* (ncon_max x 6) */
  double* frame;   /* (ncon_max x 9) */
  double* dist;    /* (ncon_max) */
  double* mu;
  double* k;
  double* taud;
  double* drop;    /* (2) of the dropped contacts: min phi / (1 + mu), max taud */
} sapcWorldOut;

SAP_HD sapcWorldOut sapw_worldOut(const sapData* d, int w) {
  sapcWorldOut o;
  long c = (long)d->ncon_max * w;
  o.geom = d->con_geom + 2 * c;
  o.pos = d->con_pos + 6 * c;
  o.frame = d->con_frame + 9 * c;
  o.dist = d->con_dist + c;
  o.mu = d->con_mu + c;
  o.k = d->con_k + c;
  o.taud = d->con_taud + c;
  o.drop = d->con_drop + 2 * w;
  return o;
}

/* SAP stiffness of two geoms: springs in series (a non-finite or non-positive side
 * gives the other; both bad: 0); host/collision.c combines each pair with it */
SAP_HD double sapw_combineK(double a, double b) {
  int oka = isfinite(a) && a > 0, okb = isfinite(b) && b > 0;
  if (!oka || !okb) return oka ? a : (okb ? b : 0);
  return a + b > 1e-12 ? a * b / (a + b) : fmax(a, b);
}

/* write contact c of candidate pair p into slot i. The MJCF margin inflates both
 * surfaces (MuJoCo: force while dist < margin), so SAP's signed distance is
 * phi = dist - pair_margin and the witnesses sit on the inflated surfaces,
 * midpoint -+ phi/2 n; frame rows (t1, t2, n) with t1 from the axis of the smallest
 * |n_i|; mu, k, tau_d are the pair's, combined at load */
SAP_HD void sapw_writeContact(const sapModel* m, sapcWorldOut o, int i, int p, const sapcContact_f64* c) {
  double n[3] = {c->n[0], c->n[1], c->n[2]}, t1[3], t2[3];
  double l = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
  double phi = c->dist - m->pair_margin[p];
  for (int k = 0; k < 3; k++) n[k] /= l;
  cl_tangents_f64(n, t1, t2);
  o.geom[2 * i] = m->pair_geom[2 * p];
  o.geom[2 * i + 1] = m->pair_geom[2 * p + 1];
  for (int k = 0; k < 3; k++) {
    o.pos[6 * i + k] = c->pos[k] - 0.5 * phi * n[k];
    o.pos[6 * i + 3 + k] = c->pos[k] + 0.5 * phi * n[k];
    o.frame[9 * i + k] = t1[k];
    o.frame[9 * i + 3 + k] = t2[k];
    o.frame[9 * i + 6 + k] = n[k];
  }
  o.dist[i] = phi;
  o.mu[i] = m->pair_mu[p];
  o.k[i] = m->pair_k[p];
  o.taud[i] = m->pair_taud[p];
}

/* copy slot src to slot dst */
SAP_HD void sapw_moveContact(sapcWorldOut o, int dst, int src) {
  for (int k = 0; k < 2; k++) o.geom[2 * dst + k] = o.geom[2 * src + k];
  for (int k = 0; k < 6; k++) o.pos[6 * dst + k] = o.pos[6 * src + k];
  for (int k = 0; k < 9; k++) o.frame[9 * dst + k] = o.frame[9 * src + k];
  o.dist[dst] = o.dist[src];
  o.mu[dst] = o.mu[src];
  o.k[dst] = o.k[src];
  o.taud[dst] = o.taud[src];
}

/* ---- per-world list ---------------------------------------------------------------- */

/* a contact with signed distance phi, friction mu, dissipation time taud and adhesion adh
 * leaves the list: o.drop keeps what the solve needs to show the dropped contacts idle
 * (sap_world_t.h sapw_droppedIdle). An adhesive contact is never idle (its pull acts at any
 * speed): it makes the proof fail, as a NaN phi does */
SAP_HD void sapw_noteDropped(sapcWorldOut o, double phi, double mu, double taud, double adh) {
  double q = adh != 0 ? -(double)INFINITY : phi / (1 + (mu > 0 ? mu : 0));
  if (!(q >= o.drop[0])) o.drop[0] = q;  // a NaN phi makes the proof fail
  if (!(taud <= o.drop[1])) o.drop[1] = taud;
}

/* append contact c of pair p (later in pair/point order than every kept one) to a
 * list of n contacts with capacity cap. When full, the shallowest kept contact
 * (largest phi; the later one on ties) is removed if c is strictly deeper, else c is
 * dropped; the list stays in order. Returns the new count; *dropped counts. */
SAP_HD int sapw_pushContact(const sapModel* m, sapcWorldOut o, int n, int cap, int p,
                            const sapcContact_f64* c, int* dropped) {
  if (n < cap) {
    sapw_writeContact(m, o, n, p, c);
    return n + 1;
  }
  (*dropped)++;
  double phi = c->dist - m->pair_margin[p];
  if (cap == 0) {
    sapw_noteDropped(o, phi, m->pair_mu[p], m->pair_taud[p], sapw_pairAdhesion(m, p, phi));
    return 0;
  }
  int worst = 0;
  for (int i = 1; i < n; i++) if (o.dist[i] >= o.dist[worst]) worst = i;
  if (!(phi < o.dist[worst])) {
    sapw_noteDropped(o, phi, m->pair_mu[p], m->pair_taud[p], sapw_pairAdhesion(m, p, phi));
    return n;
  }
  sapw_noteDropped(o, o.dist[worst], o.mu[worst], o.taud[worst],
                   sapw_contactAdhesion(m, o.geom[2 * worst], o.geom[2 * worst + 1], o.dist[worst]));
  for (int i = worst; i < n - 1; i++) sapw_moveContact(o, i, i + 1);
  sapw_writeContact(m, o, n - 1, p, c);
  return n;
}

/* ---- the list with a heap (CPU): the same contacts as sapw_pushContact, O(log cap) each ---- */

/* slot i is worse than slot j: shallower (larger phi), or as deep and later (seq) */
SAP_HD int sapw_slotWorse(sapcWorldOut o, const int* seq, int i, int j) {
  return o.dist[i] > o.dist[j] || (o.dist[i] == o.dist[j] && seq[i] > seq[j]);
}

/* restore the max-heap heap[0..n) (worst on top) below position k */
SAP_HD void sapw_heapDown(sapcWorldOut o, const int* seq, int* heap, int n, int k) {
  for (;;) {
    int l = 2 * k + 1, r = l + 1, top = k;
    if (l < n && sapw_slotWorse(o, seq, heap[l], heap[top])) top = l;
    if (r < n && sapw_slotWorse(o, seq, heap[r], heap[top])) top = r;
    if (top == k) return;
    int t = heap[k]; heap[k] = heap[top]; heap[top] = t;
    k = top;
  }
}

/* slot i holds contact c of pair p unfinished: the raw point and normal in pos, the raw
 * dist in frame[0], phi in dist, p in geom[0], -1 in geom[1]; sapw_finishSlots writes the
 * record (slots filled before the list was full hold finished records) */
SAP_HD void sapw_stashContact(const sapModel* m, sapcWorldOut o, int i, int p, const sapcContact_f64* c) {
  for (int k = 0; k < 3; k++) { o.pos[6 * i + k] = c->pos[k]; o.pos[6 * i + 3 + k] = c->n[k]; }
  o.frame[9 * i] = c->dist;
  o.dist[i] = c->dist - m->pair_margin[p];
  o.geom[2 * i] = p;
  o.geom[2 * i + 1] = -1;
}

/* pair of slot i: stashed (geom[1] = -1) or finished (found from its geoms' pair material);
 * adh: its adhesion (kernels/pair.h) */
SAP_HD void sapw_slotMaterial(const sapModel* m, sapcWorldOut o, int i, double* mu, double* taud, double* adh) {
  if (o.geom[2 * i + 1] < 0) {
    *mu = m->pair_mu[o.geom[2 * i]];
    *taud = m->pair_taud[o.geom[2 * i]];
    *adh = sapw_pairAdhesion(m, o.geom[2 * i], o.dist[i]);
  } else {
    *mu = o.mu[i];
    *taud = o.taud[i];
    *adh = sapw_contactAdhesion(m, o.geom[2 * i], o.geom[2 * i + 1], o.dist[i]);
  }
}

/* restore the max-heap a[0..n) of slots by seq below position k (heap sort) */
SAP_HD void sapw_seqDown(const int* seq, int* a, int n, int k) {
  for (;;) {
    int l = 2 * k + 1, r = l + 1, top = k;
    if (l < n && seq[a[l]] > seq[a[top]]) top = l;
    if (r < n && seq[a[r]] > seq[a[top]]) top = r;
    if (top == k) return;
    int t = a[k]; a[k] = a[top]; a[top] = t;
    k = top;
  }
}

/* stashed slots in the order of their seq (a permutation, followed cycle by cycle), then
 * each one's record (sapw_writeContact on the stashed contact: the same bits). A slot never
 * replaced keeps the seq it was filled with, its index (< n: the list fills before its first
 * drop); a replaced one took a later seq (>= n). So the order is the kept slots by index, then
 * the replaced ones sorted by seq (heap sort of those only). */
SAP_HD void sapw_finishSlots(const sapModel* m, sapcWorldOut o, int n, int* seq, int* perm, int sorted) {
  if (sorted) return;  // no slot was replaced: every record is finished and in order
  if (!sorted) {
    int nk = 0, nr;
    for (int i = 0; i < n; i++)
      if (seq[i] < n) perm[nk++] = i;
    nr = nk;
    for (int i = 0; i < n; i++)
      if (seq[i] >= n) perm[nr++] = i;
    int* rp = perm + nk;  // the replaced slots, sorted by seq
    nr -= nk;
    for (int k = nr / 2 - 1; k >= 0; k--) sapw_seqDown(seq, rp, nr, k);
    for (int e = nr - 1; e > 0; e--) {
      int t = rp[0]; rp[0] = rp[e]; rp[e] = t;
      sapw_seqDown(seq, rp, e, 0);
    }
    for (int i = 0; i < n; i++) {  // slot i takes slot perm[i]'s contact
      if (perm[i] < 0 || perm[i] == i) continue;
      double tp[6], tf[9], tx[4] = {o.dist[i], o.mu[i], o.k[i], o.taud[i]};
      int tg[2] = {o.geom[2 * i], o.geom[2 * i + 1]}, j = i;
      for (int k = 0; k < 6; k++) tp[k] = o.pos[6 * i + k];
      for (int k = 0; k < 9; k++) tf[k] = o.frame[9 * i + k];
      while (perm[j] != i) {
        int src = perm[j];
        sapw_moveContact(o, j, src);
        perm[j] = -1;
        j = src;
      }
      for (int k = 0; k < 6; k++) o.pos[6 * j + k] = tp[k];
      for (int k = 0; k < 9; k++) o.frame[9 * j + k] = tf[k];
      o.dist[j] = tx[0];
      o.mu[j] = tx[1];
      o.k[j] = tx[2];
      o.taud[j] = tx[3];
      o.geom[2 * j] = tg[0];
      o.geom[2 * j + 1] = tg[1];
      perm[j] = -1;
    }
  }
  for (int i = 0; i < n; i++) {
    if (o.geom[2 * i + 1] >= 0) continue;  // finished before the list was full
    sapcContact_f64 c;
    for (int k = 0; k < 3; k++) { c.pos[k] = o.pos[6 * i + k]; c.n[k] = o.pos[6 * i + 3 + k]; }
    c.dist = o.frame[9 * i];
    sapw_writeContact(m, o, i, o.geom[2 * i], &c);
  }
}

/* the whole contact list of world w, sequentially over the candidate pairs
 * (mask: one bit per pair, NULL = all); sets ncon, ncon_dropped and the
 * overflow flag. gc: the CPU's geometry cache (sapw_geomCacheBytes) or NULL. work: 2 ncon_max ints, or NULL for the plain list of
 * sapw_pushContact (O(ncon_max) per contact past the capacity). With work the same
 * contacts in the same order and the same drop record: a max-heap of the kept slots
 * by (phi, arrival) finds the shallowest, a new contact takes its slot (stashed raw), the
 * slots are put back in arrival order and the stashed ones written once at the end. A phi that is not a number
 * breaks the heap's order: then 0 and the caller redoes the world with the plain list
 * (sapw_collideWorld). Used by the CPU backend and (work NULL) by the GPU for
 * overflowing worlds. */
SAP_HD_BIG int sapw_collideList(const sapModel* m, const sapData* d, int w, int fp64, const unsigned* mask,
                                int* work, unsigned char* gc) {
  const double* xpos = d->geom_xpos + (long)3 * m->ngeom * w;
  const double* xmat = d->geom_xmat + (long)9 * m->ngeom * w;
  sapcWorldOut o = sapw_worldOut(d, w);
  sapcContact_f64 c[SAPC_PAIRCON];
  int n = 0, dropped = 0, cap = d->ncon_max, nan = 0, seqn = 0, moved = 0;
  int *seq = work, *heap = work ? work + cap : (int*)0;
  int frozen = sapw_frozen(d, w);  // a frozen world has no contacts
  o.drop[0] = INFINITY;
  o.drop[1] = 0;
  if (gc) sapw_geomCacheClear(m, gc);
  for (int p = 0; p < m->npair_max && !frozen && !nan; p++) {
    if (mask && !(mask[p >> 5] >> (p & 31) & 1u)) {
      unsigned rest = mask[p >> 5] >> (p & 31);  // this word's pairs from p on
      if (!rest) p |= 31;                        // none: to the next word
      else p += sapb_ctz(rest) - 1;              // to the next marked pair (the loop's p++)
      continue;
    }
    int g0 = m->pair_geom[2 * p], g1 = m->pair_geom[2 * p + 1];
    if (sapw_sleepSkipPair(m, d, w, g0, g1)) continue;  // no awake side (kernels/sleep.h)
    if (m->contact_band && sapw_boundTest(m, xpos, xmat, g0, g1, m->pair_detect[p]) &&
        sapw_bandLeaveOut(m, d, w, p, xpos, xmat, g0, g1))
      continue;  // certainly beyond its band (kernels/band.h)
    int nc = sapw_collidePairCached(m, xpos, xmat, g0, g1, m->pair_detect[p], fp64, c, gc);
    for (int i = 0; i < nc; i++) {
      if (!work) {
        n = sapw_pushContact(m, o, n, cap, p, c + i, &dropped);
        continue;
      }
      double phi = c[i].dist - m->pair_margin[p];
      if (phi != phi) { nan = 1; break; }
      if (n < cap) {  // room: append (the record itself); full: heapify once
        sapw_writeContact(m, o, n, p, c + i);
        seq[n] = seqn++;
        heap[n] = n;
        if (++n == cap)
          for (int k = cap / 2 - 1; k >= 0; k--) sapw_heapDown(o, seq, heap, cap, k);
        continue;
      }
      dropped++;
      seqn++;
      int top = cap ? heap[0] : -1;
      if (top < 0 || !(phi < o.dist[top])) {
        sapw_noteDropped(o, phi, m->pair_mu[p], m->pair_taud[p], sapw_pairAdhesion(m, p, phi));
        continue;
      }
      double mut, taut, adt;
      sapw_slotMaterial(m, o, top, &mut, &taut, &adt);
      sapw_noteDropped(o, o.dist[top], mut, taut, adt);
      sapw_stashContact(m, o, top, p, c + i);
      seq[top] = seqn - 1;
      moved = 1;
      sapw_heapDown(o, seq, heap, cap, 0);
    }
  }
  if (nan) return 0;
  if (work) sapw_finishSlots(m, o, n, seq, heap, !moved);
  d->ncon[w] = n;
  d->ncon_dropped[w] = dropped;
  if (dropped) d->world_flags[w] |= SAP_WORLD_CONTACT_OVERFLOW;
  else d->world_flags[w] &= ~SAP_WORLD_CONTACT_OVERFLOW;
  return 1;
}

SAP_HD_BIG void sapw_collideWorld(const sapModel* m, const sapData* d, int w, int fp64, const unsigned* mask,
                                  int* work, unsigned char* gc) {
  if (!sapw_collideList(m, d, w, fp64, mask, work, gc)) sapw_collideList(m, d, w, fp64, mask, (int*)0, gc);
}

/* ---- the GPU's one-pass staging (kernels/collision.cu) -------------------------------- */

/* A world's staging area in its scratch: npair_max + 1 ints (each pair's contact count,
 * then its offset in the list; the last: 1 when the list was written whole by the per-world
 * pass), then pair p's raw contacts (sapw_collidePair's) from slot pair_stageadr[p] */
SAP_HD long sapw_stageHeadBytes(const sapModel* m) { return (4L * (m->npair_max + 1) + 7) / 8 * 8; }

SAP_HD long sapw_stageBytes(const sapModel* m) {
  return sapw_stageHeadBytes(m) + (long)sizeof(sapcContact_f64) * m->pair_stageadr[m->npair_max];
}

/* the pair material of world w's contact in slot i where w's pairs are overridden: the
 * values sapw_writeContact takes from the world's view (world_view.h), without the view */
SAP_HD void sapw_worldPairMaterial(const sapModel* m, sapcWorldOut o, int i, int p, int w) {
  if (!m->world_override || !(m->world_override[w] & SAP_WO_PAIRS)) return;
  long r = (long)w * m->npair_max + p;
  o.mu[i] = m->world_pair_mu[r];
  o.k[i] = m->world_pair_k[r];
  o.taud[i] = m->world_pair_taud[r];
}

/* world w's list from its staged contacts (count: per pair, model order), for a world whose
 * candidates exceed its capacity: sapw_collideList's plain list on the same contacts in the
 * same order (deepest kept, dropped counted and noted, the overflow flag). m: the world's
 * view (its pair material) */
SAP_HD_BIG void sapw_collideStaged(const sapModel* m, const sapData* d, int w, const int* count,
                                   const sapcContact_f64* stage) {
  sapcWorldOut o = sapw_worldOut(d, w);
  int n = 0, dropped = 0, cap = d->ncon_max;
  o.drop[0] = INFINITY;
  o.drop[1] = 0;
  for (int p = 0; p < m->npair_max; p++)
    for (int i = 0; i < count[p]; i++)
      n = sapw_pushContact(m, o, n, cap, p, stage + m->pair_stageadr[p] + i, &dropped);
  d->ncon[w] = n;
  d->ncon_dropped[w] = dropped;
  if (dropped) d->world_flags[w] |= SAP_WORLD_CONTACT_OVERFLOW;
  else d->world_flags[w] &= ~SAP_WORLD_CONTACT_OVERFLOW;
}

#endif
