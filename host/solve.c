/* CPU driver of the SAP velocity solve: for every world, assemble the SAP problem
 * (contacts, drives, limits) and run Newton (kernels/sap_solve.h), OpenMP over worlds.
 * Reference backend: the CUDA launcher (kernels/solve.cu) runs the same per-world code. */
#include "sap_solve.h"
#include "sim.h"
#include "world_view.h"

void sapc_solve(sapSim* s) {
  sapSolveParams prm;
  sap_solveParams(&s->opt, s->m, s->h, &prm);
  const sapModel* m = s->m;
  const sapData* d = &s->d;
  int fp32 = prm.contact_fp32;
#pragma omp parallel for schedule(dynamic, 1) num_threads(sapc_threads(s))
  for (int w = 0; w < d->nworld; w++) {
    // a frozen (non-finite) world keeps its velocity
    if (d->world_flags[w] & SAP_WORLD_SKIP) {
      for (int j = 0; j < m->nv; j++) d->vnext[(long)w * m->nv + j] = d->qvel[(long)w * m->nv + j];
      continue;
    }
    sapModel view;
    const sapModel* mw = sapw_worldView(m, w, &view);  /* the world's parameters */
    if (fp32) sapw_solveWorld_f32(mw, d, w, &prm);
    else sapw_solveWorld_f64(mw, d, w, &prm);
  }
}
