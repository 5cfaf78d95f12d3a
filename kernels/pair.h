/* The model's candidate geom pairs (sapModel.pair_geom: g0 < g1, sorted), shared by the
 * solve (a contact's torsional and rolling friction, sap_world_t.h) and the contact
 * sensors (a contact's margin, sensor.h). */
#ifndef SAPSIM_KERNELS_PAIR_H
#define SAPSIM_KERNELS_PAIR_H

#include "sap_real.h"
#include "sapsim/model.h"

/* the pair of geoms g0 < g1 (as collision writes them): binary search of the sorted
 * candidate pairs; -1 when absent */
SAP_HD int sapw_findPair(const sapModel* m, int g0, int g1) {
  int lo = 0, hi = m->npair_max - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2, a = m->pair_geom[2 * mid], b = m->pair_geom[2 * mid + 1];
    if (a == g0 && b == g1) return mid;
    if (a < g0 || (a == g0 && b < g1)) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

#endif
