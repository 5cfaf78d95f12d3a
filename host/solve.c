/* CPU driver of the SAP velocity solve: for every world, assemble the SAP problem
 * (contacts, drives, limits) and run Newton (kernels/sap_solve.h), OpenMP over worlds.
 * Reference backend: the CUDA launcher (kernels/solve.cu) runs the same per-world code. */
#include "sap_solve.h"
#include "sim.h"
#include "world_view.h"

/* world w's solve with the step's parameters */
static void solve_world(sapSim* s, const sapSolveParams* prm, int w) {
  const sapModel* m = s->m;
  const sapData* d = &s->d;
  // a frozen (non-finite) world keeps its velocity
  if (sapw_frozen(d, w)) {
    for (int j = 0; j < m->nv; j++) d->vnext[(long)w * m->nv + j] = d->qvel[(long)w * m->nv + j];
    return;
  }
  sapModel view;
  const sapModel* mw = sapw_worldView(m, w, &view);  /* the world's parameters */
  if (prm->contact_screen) {
    if (prm->contact_fp32) sapw_solveWorldScreened_f32(mw, d, w, prm);
    else sapw_solveWorldScreened_f64(mw, d, w, prm);
  } else if (prm->contact_fp32) sapw_solveWorld_f32(mw, d, w, prm);
  else sapw_solveWorld_f64(mw, d, w, prm);
}

/* one world with step h (the step's one-world path, host/step.c; h differs from s->h on a
 * retried world's substeps) */
void sapc_solveWorld(sapSim* s, int w, double h) {
  sapSolveParams prm;
  sap_solveParams(&s->opt, s->m, h, &prm);
  solve_world(s, &prm, w);
}

void sapc_solve(sapSim* s) {
  sapSolveParams prm;
  sap_solveParams(&s->opt, s->m, s->h, &prm);
#pragma omp parallel for schedule(dynamic, 1) num_threads(sapc_threads(s))
  for (int w = 0; w < s->d.nworld; w++) solve_world(s, &prm, w);
}
