/* CUDA launchers of the SAP velocity solve (option solve_kernel):
 *   warp (default): one warp per world (kernels/sap_warp_t.h): contacts, Newton-matrix entries,
 *     Cholesky rows and line-search terms over the lanes, warp reductions;
 *   thread: one thread per world runs the CPU backend's code (kernels/sap_solve.h) as is.
 * Neither has been timed on a device yet (docs/performance.md). */
#include "cuda_check.h"
#include "sap_warp.h"

#define THREADS 64       /* thread kernel: worlds per block */
#define WARP_THREADS 64  /* warp kernel: 2 worlds per block */

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

/* one kernel per objective precision: a kernel holding both paths pays the larger register
 * count of the two (255 registers with spills when both were in one kernel, sm_90) */
#define SAPV_KERNEL(name, solve_world)                                                               \
  static __global__ void name(sapModel m, sapData d, sapSolveParams prm) {                           \
    int w = (blockIdx.x * blockDim.x + threadIdx.x) / SAPV_LANES, lane = threadIdx.x % SAPV_LANES;   \
    if (w >= d.nworld) return; /* the whole warp */                                                  \
    if (d.world_flags[w] & SAP_WORLD_NONFINITE) {                                                    \
      for (int j = lane; j < m.nv; j += SAPV_LANES) d.vnext[(long)w * m.nv + j] = d.qvel[(long)w * m.nv + j]; \
      return;                                                                                        \
    }                                                                                                \
    solve_world(&m, &d, w, &prm, lane);                                                              \
  }
SAPV_KERNEL(solve_warp_kernel_f32, sapv_solveWorld_f32)
SAPV_KERNEL(solve_warp_kernel_f64, sapv_solveWorld_f64)

sapStatus sapg_solve(sapSim* s) {
  sapSolveParams prm;
  sap_solveParams(&s->opt, s->m, s->h, &prm);
  if (s->dd.nworld <= 0) return SAP_OK;
  if (s->opt.solve_kernel == SAP_SOLVE_THREAD) {
    SAPG_LAUNCH(solve_kernel, sapg_blocks(s->dd.nworld, THREADS), THREADS)(s->dm, s->dd, prm);
    SAPG_CHECK_LAUNCH("solve_kernel");
  } else {
    long threads = (long)s->dd.nworld * SAPV_LANES;
    long blocks = (threads + WARP_THREADS - 1) / WARP_THREADS;
    if (prm.contact_fp32) SAPG_LAUNCH(solve_warp_kernel_f32, blocks, WARP_THREADS)(s->dm, s->dd, prm);
    else SAPG_LAUNCH(solve_warp_kernel_f64, blocks, WARP_THREADS)(s->dm, s->dd, prm);
    SAPG_CHECK_LAUNCH("solve_warp_kernel");
  }
  return SAP_OK;
}
