/* Spatial tendons through sites, as limits (strings, cables; kernels/sap_solve.h
 * sapw_spatialRow): length and Jacobian against MuJoCo 4.0's ten_length and ten_J at random
 * states of scenes/string_pendulum.xml (paths across free, hinge and ball joints and world
 * sites); a bob on a taut string swings with the pendulum's period 2 pi sqrt(L/g) (1 +
 * theta0^2/16 + 11 theta0^4/3072) while the string keeps its length; a violated string acts as
 * a violated slide limit does; what loads now (sidesites included). */
#include <math.h>
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "fixture_mj.h"
#include "sap_solve.h"
#include "sim.h"

#define SCENE "scenes/string_pendulum.xml"
#define NW 6

static void test_jacobian_vs_mujoco(void) {
  mjModel* mj = fx_mjModel(SCENE);
  if (!mj) return;
  mjData* md = mj_makeData(mj);
  sapModel* m = fx_model(SCENE);
  sapSim* s = fx_simModel(m, NW, "preset=approx64 contacts=0");
  if (!s) return;
  int nq = mj->nq, nv = mj->nv, nb = mj->nbody;
  double* qpos = malloc(sizeof(double) * NW * nq);
  for (int w = 0; w < NW; w++) {  // random poses: positions, unit quaternions, hinge angle
    double* q = qpos + w * nq;
    for (int j = 0; j < mj->njnt; j++) {
      int a = mj->jnt_qposadr[j], t = mj->jnt_type[j];
      if (t == mjJNT_FREE) for (int k = 0; k < 3; k++) q[a++] = check_uniform(-1, 1);
      if (t == mjJNT_FREE || t == mjJNT_BALL) {
        double n = 0;
        for (int k = 0; k < 4; k++) { q[a + k] = check_uniform(-1, 1); n += q[a + k] * q[a + k]; }
        for (int k = 0; k < 4; k++) q[a + k] /= sqrt(n);
      } else q[a] = check_uniform(-3, 3);
    }
  }
  sap_set(s, SAP_FIELD_QPOS, NULL, NW, qpos);
  sapc_kinematics(s);
  sapc_freeMotion(s);  // cref and cdof
  const sapData* d = &s->d;
  int idx[64];
  double val[64], worst_l = 0, worst_j = 0;
  for (int w = 0; w < NW; w++) {
    fx_mjForwardAt(mj, md, qpos + w * nq, NULL, NULL);
    for (int t = 0; t < mj->ntendon; t++) {
      sapRow row = sapw_row(idx, val, 0, 64);
      int ok = 1;
      double len = sapw_spatialRow(m, d->xpos + (long)w * 3 * nb, d->xmat + (long)w * 9 * nb, d->cref + (long)w * 3 * nb,
                                   d->cdof + (long)w * 6 * nv, t, 1, &row, &ok);
      CHECK(ok, "world %d tendon %d: row overflow", w, t);
      double J[64] = {0}, Jm[64] = {0};
      for (int k = 0; k < row.n; k++) J[row.idx[k]] += row.val[k];
      for (int k = 0; k < mj->ten_J_rownnz[t]; k++)
        Jm[mj->ten_J_colind[mj->ten_J_rowadr[t] + k]] = md->ten_J[mj->ten_J_rowadr[t] + k];
      worst_l = fmax(worst_l, fabs(len - md->ten_length[t]));
      CHECK(fabs(len - md->ten_length[t]) <= 1e-12, "world %d tendon %d: length %.15g, MuJoCo %.15g", w, t, len,
            md->ten_length[t]);
      for (int i = 0; i < nv; i++) {
        worst_j = fmax(worst_j, fabs(J[i] - Jm[i]));
        CHECK(fabs(J[i] - Jm[i]) <= 1e-12, "world %d tendon %d: J[%d] %.15g, MuJoCo %.15g", w, t, i, J[i], Jm[i]);
      }
    }
  }
  fprintf(stderr, "  %d poses x %d tendons: worst |length - MuJoCo| %.1e m, |J - MuJoCo| %.1e\n", NW,
          (int)mj->ntendon, worst_l, worst_j);
  free(qpos);
  sap_free(s);
  sap_freeModel(m);
  mj_deleteData(md);
  mj_deleteModel(mj);
}

/* the bob (a free sphere hooked at its centre: a point pendulum) released taut at theta0 */
static void test_pendulum_period(void) {
  sapSim* s = fx_sim(SCENE, 1, "preset=approx64");  // limits act in the SAP solve (contacts on)
  if (!s) return;
  double L = 0.505, th = asin(0.1 / L), g = 9.81, h = 0.001;
  double T = 2 * 3.14159265358979323846 * sqrt(L / g) * (1 + th * th / 16 + 11 * pow(th, 4) / 3072);
  double q[32], prev = 0.1, t0 = -1, t1 = -1, worst = 0;
  int crossings = 0;
  for (int n = 1; n <= 4000 && crossings < 5; n++) {
    sap_step(s, 1);
    sap_get(s, SAP_FIELD_QPOS, NULL, 1, q);
    double dz = 1 - q[2], dist = sqrt(q[0] * q[0] + q[1] * q[1] + dz * dz);
    worst = fmax(worst, fabs(dist - L));
    if ((prev > 0) != (q[0] > 0)) {  // x crosses 0: linear interpolation of the time
      double tc = (n - 1) * h + h * prev / (prev - q[0]);
      if (crossings == 0) t0 = tc;
      t1 = tc;
      crossings++;
    }
    prev = q[0];
  }
  double Tm = (t1 - t0) / 2;  // 5 crossings: two periods
  fprintf(stderr, "  pendulum: period %.6f s, analytic %.6f s (%.2e relative); string length within %.1e m\n", Tm, T,
          fabs(Tm - T) / T, worst);
  CHECK(crossings == 5 && fabs(Tm - T) <= 5e-4 * T, "period %.6f, analytic %.6f", Tm, T);
  CHECK(worst <= 1e-3, "the string's length strays %.3g m from %.3g", worst, L);
  sap_free(s);
}

/* a string started 2.1 cm beyond its range acts as a slide limit violated by as much */
static void test_violated_like_slide_limit(void) {
  const char* str =
      "<mujoco><option timestep='0.002' gravity='0 0 0'/><worldbody><site name='a'/><body><joint type='slide' "
      "axis='0 0 1'/><geom size='.015' mass='0.1'/><site name='h'/></body></worldbody><tendon><spatial limited='true' "
      "range='0 0.02'><site site='h'/><site site='a'/></spatial></tendon><keyframe><key qpos='-0.041'/></keyframe></mujoco>";
  const char* lim =
      "<mujoco><option timestep='0.002' gravity='0 0 0'/><worldbody><body><joint type='slide' axis='0 0 1' "
      "range='-0.02 0.02'/><geom size='.015' mass='0.1'/></body></worldbody><keyframe><key qpos='-0.041'/></keyframe></mujoco>";
  double v[2];
  for (int c = 0; c < 2; c++) {
    sapSim* s = fx_sim(c ? lim : str, 1, NULL);
    if (!s) return;
    CHECK_OK(sap_reset(s, 0, NULL));
    CHECK_OK(sap_step(s, 1));
    sap_get(s, SAP_FIELD_QVEL, NULL, 1, v + c);
    sap_free(s);
  }
  fprintf(stderr, "  violated by 2.1 cm: string %.9g m/s, slide limit %.9g m/s after one step\n", v[0], v[1]);
  CHECK(v[0] > 0 && fabs(v[0] - v[1]) <= 1e-6 * fabs(v[1]), "string %.12g, slide limit %.12g", v[0], v[1]);
}

#define WORLD "<worldbody><site name='a' pos='0 0 1'/><body name='b'><joint name='j' axis='0 1 0'/>" \
              "<geom name='g' size='.1'/><site name='s' pos='.2 0 0'/><site name='s2' pos='0 .2 0'/></body></worldbody>"

/* what the site-only tendons once refused now loads (kernels/tendon.h, tests/test_spatial_wrap.c),
 * sidesites outside and inside the wrap geom included */
static void test_now_supported(void) {
  const char* ok[] = {
      "<mujoco>" WORLD "<tendon><spatial name='w'><site site='s'/><geom geom='g'/><site site='a'/></spatial></tendon></mujoco>",
      "<mujoco>" WORLD "<tendon><spatial name='p'><site site='s'/><site site='a'/><pulley divisor='2'/><site site='s2'/>"
      "<site site='a'/></spatial></tendon></mujoco>",
      "<mujoco>" WORLD "<tendon><spatial name='f' frictionloss='1'><site site='s'/><site site='a'/></spatial></tendon></mujoco>",
      "<mujoco>" WORLD "<tendon><spatial name='t'><site site='s'/><site site='a'/></spatial></tendon><actuator><motor "
      "name='m' tendon='t'/></actuator><sensor><tendonpos name='tp' tendon='t'/></sensor></mujoco>",
      "<mujoco>" WORLD "<tendon><spatial name='t'><site site='s'/><site site='a'/></spatial></tendon><equality><tendon "
      "name='e' tendon1='t'/></equality></mujoco>",
      "<mujoco>" WORLD "<tendon><spatial name='w'><site site='s'/><geom geom='g' sidesite='s2'/><site site='a'/>"
      "</spatial></tendon></mujoco>",
      "<mujoco>" WORLD "<tendon><spatial name='w'><site site='s'/><geom geom='g' sidesite='a'/><site site='a'/>"
      "</spatial></tendon></mujoco>"};
  for (int i = 0; i < 7; i++) {
    sapModel* m = NULL;
    CHECK(sap_loadModelString(ok[i], &m) == SAP_OK, "case %d: %s", i, sap_lastError());
    sap_freeModel(m);
  }
}

int main(void) {
  RUN(test_jacobian_vs_mujoco);
  RUN(test_pendulum_period);
  RUN(test_violated_like_slide_limit);
  RUN(test_now_supported);
  return check_summary("test_spatial_tendon");
}
