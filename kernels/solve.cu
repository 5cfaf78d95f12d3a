/* CUDA launcher of the SAP velocity solve: one thread per world runs the same per-world
 * assembly and Newton loop as the CPU backend (kernels/sap_solve.h). Correctness-first
 * reference kernel; cooperative per-world blocks are the next step (DESIGN.md §8). */
#include "cuda_check.h"
#include "sap_solve.h"

#define THREADS 64

static __global__ void solve_kernel(sapModel m, sapData d, sapSolveParams prm) {
  int w = blockIdx.x * blockDim.x + threadIdx.x;
  if (w >= d.nworld) return;
  if (d.world_flags[w] & SAP_WORLD_NONFINITE) {
    for (int j = 0; j < m.nv; j++) d.vnext[(long)w * m.nv + j] = d.qvel[(long)w * m.nv + j];
    return;
  }
  if (prm.contact_fp32) sapw_solveWorld_f32(&m, &d, w, &prm);
  else sapw_solveWorld_f64(&m, &d, w, &prm);
}

sapStatus sapg_solve(sapSim* s) {
  sapSolveParams prm;
  sap_solveParams(&s->opt, s->m, s->h, &prm);
  if (s->dd.nworld <= 0) return SAP_OK;
  SAPG_LAUNCH(solve_kernel, sapg_blocks(s->dd.nworld, THREADS), THREADS)(s->dm, s->dd, prm);
  SAPG_CHECK_LAUNCH("solve_kernel");
  return SAP_OK;
}
