/* The SAP solver's matrix-free contact Jacobian (kernels/sap_problem_t.h) against MuJoCo's
 * point Jacobians: after random motion under random controls (humanoid, ant, box stack), for
 * every contact of every world J_i = frame_i (jac(b1, p1) - jac(b0, p0)) with MuJoCo's mj_jac
 * at the same state, and the solver's J x (tree pass down), J' gamma (tree pass up), explicit
 * chain rows and Newton matrix A + sum J' G J must agree with the dense products built from
 * it; for the witness and the midpoint velocity points. */
#include <mujoco/mujoco.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "sim.h"
#include "sap_solve.h"

/* worlds moved for a while under random controls, then kinematics, collision and free motion
 * at their current state (the stage inputs of the solve) */
static sapSim* moved_sim(const char* scene, int nworld, int nstep) {
  // fp64 throughout (drake), with the approx presets' speculative band: more contacts to check
  sapSim* s = fx_sim(scene, nworld, "preset=drake contact_margin=0.02");
  if (!s) return NULL;
  fx_stepRandom(s, nstep);
  sapc_kinematics(s);
  sapc_collision(s);
  sapc_freeMotion(s);
  return s;
}

/* dense J (3nc x nv) of world w from MuJoCo at the world's state */
static void mujoco_jacobian(const mjModel* mj, mjData* md, const sapSim* s, int w, int midpoint, int nc,
                            double* J) {
  const sapModel* m = s->m;
  const sapData* d = &s->d;
  int nv = m->nv;
  memcpy(md->qpos, d->qpos + (long)w * m->nq, sizeof(double) * m->nq);
  mj_kinematics(mj, md);
  mj_comPos(mj, md);
  double* jac = (double*)malloc(sizeof(double) * 3 * nv * 2);
  for (int i = 0; i < nc; i++) {
    long ci = (long)w * d->ncon_max + i;
    const int* g = d->con_geom + 2 * ci;
    const double* x = d->con_pos + 6 * ci;
    const double* f = d->con_frame + 9 * ci;
    double a0 = midpoint ? sapw_midpointAlpha0(m->geom_k[g[0]], m->geom_k[g[1]], m->contact_k) : 1;
    for (int side = 0; side < 2; side++) {
      double p[3];
      for (int k = 0; k < 3; k++)
        p[k] = midpoint ? a0 * x[k] + (1 - a0) * x[3 + k] : x[3 * side + k];
      mj_jac(mj, md, jac + 3 * nv * side, NULL, p, m->geom_bodyid[g[side]]);
    }
    for (int r = 0; r < 3; r++)
      for (int j = 0; j < nv; j++) {
        double t = 0;
        for (int k = 0; k < 3; k++) t += f[3 * r + k] * (jac[3 * nv + k * nv + j] - jac[k * nv + j]);
        J[(3L * i + r) * nv + j] = t;
      }
  }
  free(jac);
}

static double max_abs(const double* x, long n) {
  double t = 0;
  for (long i = 0; i < n; i++) t = fmax(t, fabs(x[i]));
  return t;
}

/* one scene: every world with contacts, both velocity points */
static void check_scene(const char* scene, int nworld, int nstep, int* ncontacts) {
  sapSim* s = moved_sim(scene, nworld, nstep);
  CHECK(s != NULL, "%s: simulation", scene);
  if (!s) return;
  char err[1000] = "";
  mjModel* mj = mj_loadXML(scene, NULL, err, sizeof(err));
  CHECK(mj != NULL, "%s: %s", scene, err);
  mjData* md = mj_makeData(mj);
  const sapModel* m = s->m;
  int nv = m->nv, cmax = s->d.ncon_max;
  double* J = (double*)malloc(sizeof(double) * 3 * (cmax + 1) * nv);
  double* y = (double*)malloc(sizeof(double) * 3 * (cmax + 1));
  double* Gs = (double*)malloc(sizeof(double) * 9 * (cmax + 1));  // the G_i of the oracle sum
  double* x = (double*)malloc(sizeof(double) * nv);
  for (int midpoint = 0; midpoint < 2; midpoint++) {
    sapSolveParams prm;
    sapc_solveParams(s, s->h, &prm);
    prm.contact_point = midpoint ? SAP_POINT_MIDPOINT : SAP_POINT_WITNESS;
    for (int w = 0; w < nworld; w++) {
      sapProblem_f64 P;
      sapw_worldProblem_f64(m, &s->d, w, &prm, &P);
      for (int k = 0; k < 3 * nv; k++) P.rows[k] = 0;
      int nc = P.nc, nr = 3 * nc;
      if (nc == 0) continue;
      *ncontacts += nc;
      P.ns = 0;
      mujoco_jacobian(mj, md, s, w, midpoint, nc, J);
      double scale = max_abs(J, (long)nr * nv);
      // J x
      for (int j = 0; j < nv; j++) x[j] = P.v[j] = check_uniform(-1, 1);
      sapw_constraintVelocities_f64(&P, P.v, P.vc);
      double err_v = 0;
      for (int i = 0; i < nr; i++) {
        double t = 0;
        for (int j = 0; j < nv; j++) t += J[(long)i * nv + j] * x[j];
        err_v = fmax(err_v, fabs(P.vc[i] - t));
      }
      CHECK(err_v <= 1e-10 * scale * nv, "%s w %d mid %d: |J x - mujoco| %g", scene, w, midpoint, err_v);
      // J' gamma
      for (int i = 0; i < nr; i++) y[i] = P.gam[i] = check_uniform(-1, 1);
      sapw_generalizedImpulse_f64(&P, P.gam, P.jc);
      double err_t = 0;
      for (int j = 0; j < nv; j++) {
        double t = 0;
        for (int i = 0; i < nr; i++) t += J[(long)i * nv + j] * y[i];
        err_t = fmax(err_t, fabs(P.jc[j] - t));
      }
      CHECK(err_t <= 1e-10 * scale * nr, "%s w %d mid %d: |J'g - mujoco| %g", scene, w, midpoint, err_t);
      // chain rows: J_i on the listed dofs, zero elsewhere; rows cleared after
      int bad_rows = 0;
      for (int i = 0; i < nc; i++) {
        int n = sapw_contactRows_f64(&P, i);
        for (int r = 0; r < 3; r++)
          for (int j = 0; j < nv; j++)
            if (fabs(P.rows[r * nv + j] - J[(3L * i + r) * nv + j]) > 1e-12 * (1 + scale)) bad_rows++;
        sapw_clearRows_f64(&P, n);
        if (max_abs(P.rows, 3 * nv) != 0) bad_rows++;
      }
      CHECK(bad_rows == 0, "%s w %d mid %d: %d row entries differ", scene, w, midpoint, bad_rows);
      // Newton matrix at random contact velocities: G_i from the cone projection (cpar of the
      // contact built as in a step)
      double* G = Gs;
      for (int i = 0; i < nc; i++) {
        sapw_buildContact_f64(m, &s->d, w, i, &prm, &P);
        for (int k = 0; k < 3; k++) P.vc[3 * i + k] = check_uniform(-0.1, 0.1);
        double g[3], l;
        sapw_coneProject_f64(P.cpar + SAP_CPAR * i, P.vc + 3 * i, g, &l, G + 9 * i);
      }
      sapw_hessian_f64(&P);
      double err_h = 0, hs = max_abs(P.A, m->nA);  // A by tree blocks (sapModel.dof_Aadr)
      for (int a = 0; a < nv; a++)
        for (int b = 0; b <= a; b++) {
          double t = sapw_Aat(m, P.A, nv, a, b);  // 0 between trees
          for (int i = 0; i < nc; i++)
            for (int r = 0; r < 3; r++)
              for (int c = 0; c < 3; c++)
                t += J[(3L * i + r) * nv + a] * G[9 * i + 3 * r + c] * J[(3L * i + c) * nv + b];
          hs = fmax(hs, fabs(t));
          err_h = fmax(err_h, fabs(P.H[a * nv + b] - t));
        }
      CHECK(err_h <= 1e-11 * hs * nc, "%s w %d mid %d: |H - (A + J'GJ)| %g of %g", scene, w, midpoint, err_h, hs);
    }
  }
  free(J); free(y); free(Gs); free(x);
  mj_deleteData(md);
  mj_deleteModel(mj);
  sap_free(s);
}

static void test_humanoid(void) {
  int nc = 0;
  check_scene("scenes/humanoid.xml", 8, 150, &nc);
  CHECK(nc >= 8 * 4, "humanoid: contacts checked %d", nc);
}

static void test_ant(void) {
  int nc = 0;
  check_scene("scenes/ant.xml", 4, 100, &nc);
  CHECK(nc >= 4, "ant: contacts checked %d", nc);
}

static void test_box_stack(void) {
  int nc = 0;
  check_scene("scenes/box_stack.xml", 2, 100, &nc);
  CHECK(nc >= 8, "box_stack: contacts checked %d (box-box and box-floor)", nc);
}

int main(void) {
  RUN(test_humanoid);
  RUN(test_ant);
  RUN(test_box_stack);
  return check_summary("test_sap_jacobian");
}
