/* Slider-crank transmissions (MuJoCo's mjTRN_SLIDERCRANK; kernels/dynamics_t.h
 * sapw_sliderCrank) against MuJoCo 4 on scenes/slider_crank.xml: actuator_length, the dense
 * actuator_moment, actuator_velocity and qfrc_actuator at 200 random states (1e-12), broken
 * cranks included; an Euler lockstep (sap_euler, no contacts, random controls) with the
 * actuatorpos/vel/frc sensors; the servo-held crank's analytic steady state under every preset
 * (the position servo as a SAP drive row along the moment); refusals named. */
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <string.h>

#include "fixture.h"
#include "fixture_mj.h"
#include "integrate.h"
#include "kernels.h"
#include "sim.h"

#define SCENE "scenes/slider_crank.xml"
#define NW 8
#define NROUND 25
#define MAXV 16

/* whether MuJoCo's slider-crank u is broken at md's state: (a.v)^2 + r^2 - v.v <= 0 */
static int mj_broken(const mjModel* mj, const mjData* md, int u) {
  int c = mj->actuator_trnid[2 * u], s = mj->actuator_trnid[2 * u + 1];
  const double* R = md->site_xmat + 9 * s;
  double a[3] = {R[2], R[5], R[8]}, v[3], av = 0, vv = 0, r = mj->actuator_cranklength[u];
  for (int k = 0; k < 3; k++) {
    v[k] = md->site_xpos[3 * c + k] - md->site_xpos[3 * s + k];
    av += a[k] * v[k];
    vv += v[k] * v[k];
  }
  return av * av + r * r - vv <= 0;
}

static void test_random_states(void) {
  mjModel* mj = fx_mjModel(SCENE);
  sapSim* s = fx_sim(SCENE, NW, "preset=approx64 contacts=0 device=cpu");
  if (!mj || !s) return;
  mjData* md = mj_makeData(mj);
  int nq = mj->nq, nv = mj->nv, nu = mj->nu, nbroken = 0, nsound = 0;
  CHECK(nv <= MAXV && nq <= MAXV, "scene too large for the test's buffers");
  double qpos[NW * MAXV], qvel[NW * MAXV], ctrl[NW * MAXV], mom[MAXV], dense[MAXV * MAXV];
  double wl = 0, wv = 0, wm = 0, wf = 0, span_l = 0, span_m = 0;
  for (int r = 0; r < NROUND; r++) {
    // hinges over +-3 rad, the slide over +-0.3 m, speeds over +-2
    for (int w = 0; w < NW; w++) {
      for (int j = 0; j < mj->njnt; j++) {
        int a = mj->jnt_qposadr[j];
        qpos[w * nq + a] = mj->jnt_type[j] == mjJNT_SLIDE ? check_uniform(-0.3, 0.3) : check_uniform(-3, 3);
      }
      for (int i = 0; i < nv; i++) qvel[w * nv + i] = check_uniform(-2, 2);
      for (int i = 0; i < nu; i++) ctrl[w * nu + i] = check_uniform(-1.5, 1.5);
    }
    sap_set(s, SAP_FIELD_QPOS, NULL, NW, qpos);
    sap_set(s, SAP_FIELD_QVEL, NULL, NW, qvel);
    sap_set(s, SAP_FIELD_CTRL, NULL, NW, ctrl);
    sapData* d = (sapData*)sap_data(s);
    for (long i = 0; i < (long)NW * nv; i++) d->qfrc_actuator[i] = NAN;
    sapc_kinematics(s);
    sapc_freeMotion(s);
    for (int w = 0; w < NW; w++) {
      fx_mjForwardAt(mj, md, qpos + w * nq, qvel + w * nv, ctrl + w * nu);
      mju_sparse2dense(dense, md->actuator_moment, nu, nv, md->moment_rownnz, md->moment_rowadr,
                       md->moment_colind);
      sapTenFrames_f64 fr = {d->xpos + (long)w * 3 * s->m->nbody, d->xmat + (long)w * 9 * s->m->nbody,
                             d->cref + (long)w * 3 * s->m->nbody, d->cdof + (long)w * 6 * nv};
      for (int u = 0; u < nu; u++) {
        double len = NAN, vel = NAN, l2 = NAN, rl = NAN;
        sapw_actuatorLength_f64(s->m, qpos + w * nq, qvel + w * nv, &fr, u, &len, &vel);
        CHECK_CLOSE(len, md->actuator_length[u], 1e-12, 1e-12, "world %d round %d actuator %d length", w, r, u);
        CHECK_CLOSE(vel, md->actuator_velocity[u], 1e-12, 1e-12, "world %d round %d actuator %d velocity", w, r, u);
        wl = fmax(wl, fabs(len - md->actuator_length[u]));
        wv = fmax(wv, fabs(vel - md->actuator_velocity[u]));
        span_l = fmax(span_l, fabs(md->actuator_length[u]));
        if (mj->actuator_trntype[u] != mjTRN_SLIDERCRANK) continue;
        if (mj_broken(mj, md, u)) nbroken++;
        else nsound++;
        /* the moment (qfrc of a unit force) and the same as a SAP drive row (a servo's) */
        int ridx[MAXV], ok = 1;
        double rval[MAXV], dense_row[MAXV] = {0};
        sapRow row = {ridx, rval, 0, MAXV};
        ridx[0] = -1;
        for (int j = 0; j < nv; j++) mom[j] = 0;
        sapw_sliderCrank_f64(s->m, &fr, u, NULL, 1, mom, &l2, NULL, &row, &ok);
        sapw_sliderCrank_f64(s->m, &fr, u, NULL, 0, NULL, &rl, NULL, (sapRow*)0, (int*)0);
        CHECK(ok && rl == l2 && l2 == len, "row fits (%d), lengths %g %g %g", ok, rl, l2, len);
        for (int k = 0; k < row.n; k++) dense_row[ridx[k]] += rval[k];
        for (int j = 0; j < nv; j++) {
          CHECK(dense_row[j] == mom[j], "round %d actuator %d: row entry %d %g, moment %g", r, u, j, dense_row[j], mom[j]);
          CHECK_CLOSE(mom[j], dense[u * nv + j], 1e-12, 1e-12, "world %d actuator %d moment dof %d", w, u, j);
          wm = fmax(wm, fabs(mom[j] - dense[u * nv + j]));
          span_m = fmax(span_m, fabs(dense[u * nv + j]));
        }
      }
      for (int j = 0; j < nv; j++) {
        double got = d->qfrc_actuator[w * nv + j], want = md->qfrc_actuator[j];
        CHECK_CLOSE(got, want, 1e-12, 1e-12, "world %d round %d qfrc_actuator[%d]", w, r, j);
        wf = fmax(wf, fabs(got - want));
      }
    }
  }
  /* both of MuJoCo's branches are exercised */
  CHECK(nbroken > 50 && nsound > 50, "broken %d, sound %d slider-crank states", nbroken, nsound);
  printf("  %d states (%d broken, %d sound slider-cranks): max |diff| length %.3g (|l| up to %.3g), velocity "
         "%.3g, moment %.3g (up to %.3g), qfrc_actuator %.3g\n",
         NW * NROUND, nbroken, nsound, wl, span_l, wv, wm, span_m, wf);
  mj_deleteData(md);
  mj_deleteModel(mj);
  sap_free(s);
}

/* Euler lockstep against MuJoCo 4 (contacts off: every actuator, servos too, an explicit law as
 * in MuJoCo's Euler step): qpos and the sensors over 1000 steps with fresh random controls */
static void test_lockstep(void) {
  mjModel* mj = fx_mjModel(SCENE);
  sapSim* s = fx_sim(SCENE, NW, "preset=approx64 contacts=0 integration=sap_euler");
  if (!mj || !s) return;
  mj->opt.integrator = mjINT_EULER;
  int nq = mj->nq, nu = mj->nu, ns = mj->nsensordata, nstep = 1000;
  CHECK(nq <= MAXV && nu <= MAXV && ns <= MAXV, "scene too large for the test's buffers");
  mjData* md[NW];
  for (int w = 0; w < NW; w++) md[w] = mj_makeData(mj);
  double ctrl[NW * MAXV], qpos[NW * MAXV], sens[NW * MAXV], wq = 0, ws = 0, span = 0, sspan = 0;
  for (int k = 0; k < nstep; k++) {
    for (int i = 0; i < NW * nu; i++) ctrl[i] = check_uniform(-1.5, 1.5);
    CHECK_OK(sap_set(s, SAP_FIELD_CTRL, NULL, NW, ctrl));
    CHECK_OK(sap_step(s, 1));
    CHECK_OK(sap_get(s, SAP_FIELD_QPOS, NULL, NW, qpos));
    CHECK_OK(sap_get(s, SAP_FIELD_SENSORDATA, NULL, NW, sens));
    for (int w = 0; w < NW; w++) {
      fx_mjStepAt(mj, md[w], NULL, NULL, ctrl + w * nu);
      // sapsim's actuatorfrc is the force the step applied (MuJoCo's after mj_step); its
      // actuatorpos/vel are read at the state the step reached (MuJoCo's after mj_forward)
      double pre[MAXV];
      memcpy(pre, md[w]->sensordata, sizeof(double) * ns);
      mj_forward(mj, md[w]);
      for (int i = 0; i < mj->nsensor; i++)
        if (mj->sensor_type[i] == mjSENS_ACTUATORFRC) md[w]->sensordata[mj->sensor_adr[i]] = pre[mj->sensor_adr[i]];
      for (int i = 0; i < nq; i++) {
        wq = fmax(wq, fabs(qpos[w * nq + i] - md[w]->qpos[i]));
        span = fmax(span, fabs(md[w]->qpos[i]));
      }
      for (int i = 0; i < ns; i++) {
        double e = fabs(sens[w * ns + i] - md[w]->sensordata[i]) / (1 + fabs(md[w]->sensordata[i]));
        ws = fmax(ws, e);
        sspan = fmax(sspan, fabs(md[w]->sensordata[i]));
      }
    }
  }
  printf("  lockstep %d steps x %d worlds: max |qpos - MuJoCo| %.3g (|qpos| up to %.3g), sensors %.3g "
         "relative (up to %.3g)\n", nstep, NW, wq, span, ws, sspan);
  CHECK(wq <= 1e-9 && span > 0.5, "qpos differs from MuJoCo by %g", wq);
  CHECK(ws <= 1e-9, "sensors differ from MuJoCo by %g", ws);
  for (int w = 0; w < NW; w++) mj_deleteData(md[w]);
  mj_deleteModel(mj);
  sap_free(s);
}

/* the "hold" crank (hinge about z at the origin of its frame, pin at rho = 0.25 m, slider site
 * X = 0.4 m behind on the x axis, rod r = 0.5 m), in closed form:
 *   L(th) = X + rho cos th - sqrt(r^2 - rho^2 sin^2 th),
 *   L'(th) = -rho sin th + rho^2 sin th cos th / sqrt(r^2 - rho^2 sin^2 th).
 * At rest the position servo (kp, target t: a SAP drive row) and the motor's torque tau balance:
 * kp (t - L) L' + tau = 0, solved for th by bisection on [0.6, 1.4] */
static double hold_L(double th) {
  return 0.4 + 0.25 * cos(th) - sqrt(0.25 - 0.0625 * sin(th) * sin(th));
}
static double hold_dL(double th) {
  return -0.25 * sin(th) + 0.0625 * sin(th) * cos(th) / sqrt(0.25 - 0.0625 * sin(th) * sin(th));
}

static void test_servo_steady(void) {
  const char* presets[3] = {"approx64", "drake", "approx32"};
  const double kp = 100, t = 0.09, tau = 0.1;
  double lo = 0.6, hi = 1.4;  // g(lo) > 0 > g(hi)
  for (int it = 0; it < 200; it++) {
    double mid = 0.5 * (lo + hi);
    if (kp * (t - hold_L(mid)) * hold_dL(mid) + tau > 0) lo = mid;
    else hi = mid;
  }
  double th = 0.5 * (lo + hi), f = kp * (t - hold_L(th));
  for (int p = 0; p < 3; p++) {
    char opts[64];
    /* the fp64 presets' 1e-9 is the converged answer's: the held crank's island stops at its
     * own tolerance (island_newton; it met 1e-9 at the default 1e-6 only while one Newton loop
     * ran on for the scene's other islands), so they solve to optimality_rel_tol 1e-10 */
    snprintf(opts, sizeof(opts), "preset=%s device=cpu%s", presets[p], p < 2 ? " optimality_rel_tol=1e-10" : "");
    sapSim* s = fx_sim(SCENE, 1, opts);
    if (!s) continue;
    double ctrl[6] = {t, tau, 0, 0, 0, 0}, qpos[MAXV], sd[MAXV];
    CHECK_OK(sap_get(s, SAP_FIELD_QPOS, NULL, 1, qpos));
    qpos[0] = 1.0;  // the hold crank's hinge, off the dead point
    CHECK_OK(sap_set(s, SAP_FIELD_QPOS, NULL, 1, qpos));
    CHECK_OK(sap_set(s, SAP_FIELD_CTRL, NULL, 1, ctrl));
    CHECK_OK(sap_step(s, 4000));
    CHECK_OK(sap_get(s, SAP_FIELD_QPOS, NULL, 1, qpos));
    CHECK_OK(sap_get(s, SAP_FIELD_SENSORDATA, NULL, 1, sd));
    double tol = p == 2 ? 1e-6 : 1e-9;  /* approx32: fp32 kinematics and solve */
    CHECK_CLOSE(qpos[0], th, tol, 0, "%s: the held crank angle", presets[p]);
    CHECK_CLOSE(sd[0], hold_L(th), tol, 0, "%s: the servo's length", presets[p]);
    CHECK_CLOSE(sd[1], 0, tol, 0, "%s: the servo's velocity", presets[p]);
    CHECK_CLOSE(sd[2], f, 10 * tol, 1e-6, "%s: the servo's force", presets[p]);
    printf("  %s: held at %.12f rad (analytic %.12f, off %.3g), length off %.3g, force %.6f off %.3g\n", presets[p],
           qpos[0], th, qpos[0] - th, sd[0] - hold_L(th), sd[2], sd[2] - f);
    sap_free(s);
  }
}

#define CRANK "<worldbody><site name='sl' pos='-0.4 0 0' zaxis='1 0 0'/><body><joint name='h' axis='0 0 1'/>" \
              "<geom size='.1'/><site name='pin' pos='0.2 0 0'/></body></worldbody>"

static void test_refusals(void) {
  fx_refused("<mujoco>" CRANK "<actuator><general name='cm' cranksite='pin' slidersite='sl' cranklength='0.5' "
             "dyntype='muscle' gaintype='muscle' biastype='muscle' gainprm='0.75 1.05 -1 200 0.5 1.6 1.5 1.3 1.2' "
             "biasprm='0.75 1.05 -1 200 0.5 1.6 1.5 1.3 1.2' lengthrange='0.1 1'/></actuator></mujoco>",
             SAP_ERR_UNSUPPORTED, "actuator 'cm' is a muscle on a slider-crank transmission");
  fx_refused("<mujoco>" CRANK "<actuator><motor name='m' cranksite='pin' slidersite='sl' cranklength='0.5'/>"
             "</actuator><sensor><jointactuatorfrc joint='h'/></sensor></mujoco>",
             SAP_ERR_UNSUPPORTED, "slider-crank");
}

int main(void) {
  RUN(test_random_states);
  RUN(test_lockstep);
  RUN(test_servo_steady);
  RUN(test_refusals);
  return check_summary("test_slider_crank");
}
