/* The model's candidate geom pairs (sapModel.pair_geom: g0 < g1, sorted), shared by the
 * solve (a contact's torsional and rolling friction and adhesion, sap_world_t.h), the free
 * motion (adhesion's pull, dynamics_t.h) and the contact sensors (a contact's margin and
 * adhesion, sensor.h). */
#ifndef SAPSIM_KERNELS_PAIR_H
#define SAPSIM_KERNELS_PAIR_H

#include "sap_real.h"
#include "sapsim/model.h"

/* the pair of geoms g0 < g1 (as collision writes them) in the sorted candidate pairs: g0's
 * run (pair_geomadr) read at g1's offset when the run has no gaps, else binary search of
 * the run (of the whole list where the model has no index); -1 when absent */
SAP_HD int sapw_findPair(const sapModel* m, int g0, int g1) {
  int lo = 0, hi = m->npair_max - 1;
  if (m->pair_geomadr && g0 >= 0 && g0 < m->ngeom) {
    lo = m->pair_geomadr[g0];
    hi = m->pair_geomadr[g0 + 1] - 1;
    int guess = lo <= hi ? lo + g1 - m->pair_geom[2 * lo + 1] : -1;  // g0's run without gaps
    if (guess >= lo && guess <= hi && m->pair_geom[2 * guess + 1] == g1) return guess;
  }
  while (lo <= hi) {
    int mid = (lo + hi) / 2, a = m->pair_geom[2 * mid], b = m->pair_geom[2 * mid + 1];
    if (a == g0 && b == g1) return mid;
    if (a < g0 || (a == g0 && b < g1)) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/* the adhesion (N) of a contact of candidate pair p at signed distance phi (below) */
SAP_HD double sapw_pairAdhesion(const sapModel* m, int p, double phi) {
  return m->nadhesion && phi < m->pair_gap[p] ? m->pair_adhesion[p] : 0;
}

/* the adhesion (N) of a contact of geoms g0, g1 at signed distance phi = dist - margin
 * (MuJoCo 4's con->adhesion, mj_contactParam / mj_setContact): the pair's while MuJoCo lists
 * the contact, phi < gap (in the gap band [0, gap) too, where its friction is off: dim 1);
 * 0 for sapsim's speculative contacts beyond, and for every contact of a model without
 * adhesion (m->nadhesion 0: no search) */
SAP_HD double sapw_contactAdhesion(const sapModel* m, int g0, int g1, double phi) {
  if (!m->nadhesion) return 0;
  int p = sapw_findPair(m, g0 < g1 ? g0 : g1, g0 < g1 ? g1 : g0);
  return p >= 0 ? sapw_pairAdhesion(m, p, phi) : 0;
}

#endif
