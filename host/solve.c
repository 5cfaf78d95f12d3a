/* CPU driver of the SAP velocity solve: for every world, assemble the SAP problem
 * (contacts, drives, limits) and run Newton (kernels/sap_solve.h), OpenMP over worlds.
 * Reference backend: the CUDA launcher (kernels/solve.cu) runs the same per-world code.
 * The Newton matrix H and its factor L live outside the worlds' scratch here: one buffer per
 * thread, grown to what the step's islands need (n_k^2 per dense island, the factor's blocks
 * per block-sparse one, not nv^2: kernels/sap_island_t.h sapw_islandOffsets), so a world of
 * many separate objects costs memory linear in its dofs, and one pile its factor's blocks. */
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "sap_solve.h"
#include "sim.h"
#include "world_view.h"

/* sapSolveParams.hl_grow: the buffer ctx (a sapcBuf) with room for bytes; its contents need not
 * survive (H and L are rebuilt at every Newton iteration). Grows by a quarter more, so islands
 * that merge and split over a run reallocate rarely; null when the memory is not there. */
static void* hl_grow(void* ctx, long bytes) {
  sapcBuf* b = (sapcBuf*)ctx;
  if (bytes <= b->cap) return b->p;
  long cap = bytes + bytes / 4;
  void* p = malloc((size_t)cap);
  if (!p) return NULL;
  free(b->p);
  b->p = p;
  b->cap = cap;
  return p;
}

static int thread_id(void) {
#ifdef _OPENMP
  return omp_get_thread_num();
#else
  return 0;
#endif
}

sapStatus sapc_hlInit(sapSim* s) {
  if (s->hl_carved) return SAP_OK;
  int n = 1;
#ifdef _OPENMP
  n = omp_get_max_threads();
#endif
  if (s->opt.threads > n) n = s->opt.threads;
  s->hl = (sapcBuf*)calloc((size_t)n, sizeof(sapcBuf));
  if (!s->hl) return sap_fail(SAP_ERR_MEMORY, "sap_create: cannot allocate the solve's %d thread buffers", n);
  s->nhl = n;
  return SAP_OK;
}

void sapc_solveParams(sapSim* s, double h, sapSolveParams* prm) {
  sap_solveParams(&s->opt, s->m, h, prm);
  if (s->hl_carved) return;
  int t = thread_id();
  prm->hl_grow = hl_grow;
  prm->hl_ctx = t < s->nhl ? (void*)&s->hl[t] : NULL;
}

void sapc_hlFree(sapSim* s) {
  for (int t = 0; t < s->nhl; t++) free(s->hl[t].p);
  free(s->hl);
  s->hl = NULL;
  s->nhl = 0;
}

/* world w's solve with the step's parameters */
static void solve_world(sapSim* s, const sapSolveParams* prm_in, int w) {
  const sapModel* m = s->m;
  const sapData* d = &s->d;
  // a frozen (non-finite) world keeps its velocity
  if (sapw_frozen(d, w)) {
    for (int j = 0; j < m->nv; j++) d->vnext[(long)w * m->nv + j] = d->qvel[(long)w * m->nv + j];
    return;
  }
  sapSolveParams prm = *prm_in;
  sapcBuf own = {NULL, 0};  // a thread past the sim's buffers (more threads than at creation)
  if (prm.hl_grow && !prm.hl_ctx) prm.hl_ctx = &own;
  sapModel view;
  const sapModel* mw = sapw_worldView(m, w, &view);  /* the world's parameters */
  if (prm.contact_screen) {
    if (prm.contact_fp32) sapw_solveWorldScreened_f32(mw, d, w, &prm);
    else sapw_solveWorldScreened_f64(mw, d, w, &prm);
  } else if (prm.contact_fp32) sapw_solveWorld_f32(mw, d, w, &prm);
  else sapw_solveWorld_f64(mw, d, w, &prm);
  free(own.p);
}

/* one world with step h (the step's one-world path, host/step.c; h differs from s->h on a
 * retried world's substeps) */
void sapc_solveWorld(sapSim* s, int w, double h) {
  sapSolveParams prm;
  sapc_solveParams(s, h, &prm);
  solve_world(s, &prm, w);
}
