/* Limited ball joints (kernels/sap_solve.h sapw_ballLimit, kernels/sap_world_t.h
 * sapw_buildLimits, kernels/sensor.h sapw_sensorBallLimit; scenes/ball_limit.xml). Oracles:
 *  - MuJoCo 4's constraint rows (mj_forward, efc_type mjCNSTR_LIMIT_JOINT) at 240 random states
 *    (uniform rotations, angles at the cone's edge, near pi, exactly 0; quaternions of either
 *    sign and of norms 0.3..3): the row set (dist < margin) equal, dist = efc_pos and the row =
 *    efc_J to 1e-12; the same model with every margin 10 (MuJoCo lists every joint's row, in
 *    its sparse Jacobian form) for the rows MuJoCo leaves out, the zero angle's (1, 0, 0) included;
 *  - the solver's rows (sapw_buildLimits at a step's start state): each kept row is MuJoCo's
 *    row, and a row is kept exactly when the window rule computed here from MuJoCo's dist and
 *    Jacobian says so;
 *  - jointlimitpos / jointlimitvel against MuJoCo 4's sensors at the same states;
 *  - behaviour: two tilted ball pendulums (from random spins, and released outside their cones)
 *    come to rest on the cone at the analytic angle max(range) - margin, 0.52 and 0.7 rad from
 *    the vertical, with jointlimitfrc = m g L sin(phi), in approx64, approx32 and drake; the rest
 *    pose equals MuJoCo 4's up to MuJoCo's own soft-limit penetration and its limit force to 1e-5;
 *  - the limit holds at every step under random torques (every limited joint, all presets);
 *  - a margin that leaves no cone is refused by name. */
#include <math.h>
#include <mujoco/mujoco.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "fixture_mj.h"
#include "sap_solve.h"
#include "sim.h"

#define SCENE "scenes/ball_limit.xml"
#define PI 3.14159265358979323846
#define NREST 4000 /* steps to rest: 8 s */

/* MuJoCo's row i of efc_J, dense (nv), whatever the Jacobian's storage */
static void mj_row(const mjModel* mj, const mjData* md, int i, double* out) {
  memset(out, 0, sizeof(double) * mj->nv);
  if (!mj_isSparse(mj)) {
    memcpy(out, md->efc_J + (size_t)i * mj->nv, sizeof(double) * mj->nv);
    return;
  }
  for (int k = 0; k < md->efc_J_rownnz[i]; k++) {
    int a = md->efc_J_rowadr[i] + k;
    out[md->efc_J_colind[a]] = md->efc_J[a];
  }
}

/* MuJoCo's joint-limit row of joint j in md: its index, or -1 */
static int mj_limitRow(const mjData* md, int j) {
  for (int i = 0; i < md->nefc; i++)
    if (md->efc_type[i] == mjCNSTR_LIMIT_JOINT && md->efc_id[i] == j) return i;
  return -1;
}

/* a random unit vector */
static void rand_axis(double* a) {
  double n;
  do {
    for (int k = 0; k < 3; k++) a[k] = check_uniform(-1, 1);
    n = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
  } while (n < 0.1 || n > 1);
  for (int k = 0; k < 3; k++) a[k] /= n;
}

/* a quaternion for ball joint j of state k: mode k % 5 = uniform rotation, angle at the cone's
 * edge (range +- 0.15), near pi, exactly 0, angle in (0, range); either sign, norm 0.3..3 when
 * scaled */
static void rand_quat(double r, int k, int scaled, double* q) {
  double a[3], angle;
  rand_axis(a);
  switch (k % 5) {
    case 0: angle = check_uniform(0, PI); break;
    case 1: angle = fmin(fmax(r + check_uniform(-0.15, 0.15), 0), PI); break;
    case 2: angle = PI - check_uniform(0, 0.05); break;
    case 3: angle = 0; break;
    default: angle = check_uniform(0, r); break;
  }
  double s = sin(angle / 2), sign = check_uniform(0, 1) < 0.5 ? -1 : 1;
  double c = scaled ? sign * exp(check_uniform(log(0.3), log(3))) : sign;
  q[0] = c * cos(angle / 2);
  for (int i = 0; i < 3; i++) q[1 + i] = c * s * a[i];
}

/* a random state: every ball joint's quaternion (rand_quat), the free joint's pose, velocities */
static void rand_state(const mjModel* mj, int k, int scaled, double* q, double* v) {
  memcpy(q, mj->qpos0, sizeof(double) * mj->nq);
  for (int j = 0; j < mj->njnt; j++) {
    int a = mj->jnt_qposadr[j];
    if (mj->jnt_type[j] == mjJNT_BALL) rand_quat(mj->jnt_range[2 * j + 1], k + j, scaled, q + a);
    if (mj->jnt_type[j] == mjJNT_FREE) {
      for (int i = 0; i < 3; i++) q[a + i] = check_uniform(-2, 2);
      rand_quat(PI, 0, 0, q + a + 3);
    }
  }
  double vs = exp(check_uniform(log(0.01), log(30)));  // speeds over decades
  for (int i = 0; i < mj->nv; i++) v[i] = vs * check_uniform(-1, 1);
}

/* sapsim's row of limited ball joint j at q, dense (nv); returns dist */
static double sap_row(const sapModel* m, const double* q, int j, double* out) {
  int idx[8];
  double val[8];
  sapRow row = sapw_row(idx, val, 0, 8);
  int ok = 1;
  double dist = sapw_ballLimitRow(m, q, j, &row, &ok);
  CHECK(ok && row.n == 3, "joint %d: row of %d entries", j, row.n);
  memset(out, 0, sizeof(double) * m->nv);
  for (int k = 0; k < row.n; k++) out[row.idx[k]] += row.val[k];
  return dist;
}

/* MuJoCo's efc rows against sapw_ballLimitRow at 240 random states; mjw: the same model with
 * every margin 10 and a sparse Jacobian (every ball joint listed) */
static void test_rows_mujoco(void) {
  char err[1000] = "";
  mjModel* mj = mj_loadXML(SCENE, NULL, err, sizeof(err));
  mjModel* mjw = mj_loadXML(SCENE, NULL, err, sizeof(err));
  CHECK(mj && mjw, "%s", err);
  sapModel* m = fx_model(SCENE);
  if (!mj || !mjw || !m) goto done;
  mjw->opt.jacobian = mjJAC_SPARSE;
  for (int j = 0; j < mjw->njnt; j++)
    if (mjw->jnt_type[j] == mjJNT_BALL && mjw->jnt_limited[j]) mjw->jnt_margin[j] = 10;
  mjData* md = mj_makeData(mj);
  mjData* mdw = mj_makeData(mjw);
  int nv = mj->nv, nq = mj->nq;
  double *q = malloc(sizeof(double) * nq), *v = malloc(sizeof(double) * nv);
  double *J = malloc(sizeof(double) * nv), *Jm = malloc(sizeof(double) * nv);
  int seen[64][2] = {{0}}, nflip = 0, nzero = 0, nrows = 0;
  double worst = 0;
  for (int k = 0; k < 240; k++) {
    rand_state(mj, k, 1, q, v);
    fx_mjForwardAt(mj, md, q, v, NULL);
    fx_mjForwardAt(mjw, mdw, q, v, NULL);
    for (int j = 0; j < mj->njnt; j++) {
      if (mj->jnt_type[j] != mjJNT_BALL) continue;
      const double* qj = q + mj->jnt_qposadr[j];
      int i = mj_limitRow(md, j), iw = mj_limitRow(mdw, j);
      if (!m->jnt_limited[j]) {
        CHECK(i < 0 && iw < 0, "state %d: unlimited joint %d has a MuJoCo row", k, j);
        continue;
      }
      double dist = sap_row(m, q, j, J);
      int active = dist < m->jnt_margin[j];
      CHECK(active == (i >= 0), "state %d joint %d: sapsim active %d (dist %.17g), MuJoCo row %d", k, j, active,
            dist, i);
      CHECK(iw >= 0, "state %d joint %d: no MuJoCo row with margin 10", k, j);
      seen[j][active]++;
      nflip += qj[0] < 0;
      nzero += qj[1] == 0 && qj[2] == 0 && qj[3] == 0;
      for (int pass = 0; pass < 2; pass++) {
        const mjModel* mm = pass ? mjw : mj;
        const mjData* dd = pass ? mdw : md;
        int r = pass ? iw : i;
        if (r < 0) continue;
        mj_row(mm, dd, r, Jm);
        char what[96];
        snprintf(what, sizeof(what), "state %d joint %d (margin %s) row", k, j, pass ? "10" : "model's");
        check_arrays(what, J, Jm, nv, 1e-12, 0);
        CHECK_CLOSE(dist, dd->efc_pos[r], 1e-12, 0, "state %d joint %d dist", k, j);
        worst = fmax(worst, fabs(dist - dd->efc_pos[r]));
        for (int c = 0; c < nv; c++) worst = fmax(worst, fabs(J[c] - Jm[c]));
        nrows++;
      }
    }
  }
  for (int j = 0; j < mj->njnt; j++)
    if (mj->jnt_type[j] == mjJNT_BALL && m->jnt_limited[j])
      CHECK(seen[j][0] > 10 && seen[j][1] > 10, "joint %d: states inside %d, at the limit %d", j, seen[j][0],
            seen[j][1]);
  CHECK(nflip > 100 && nzero > 20, "quaternions with w < 0: %d, zero angles: %d", nflip, nzero);
  printf("  %d rows compared with MuJoCo 4, worst |d| %.3g\n", nrows, worst);
  free(q); free(v); free(J); free(Jm);
  mj_deleteData(md);
  mj_deleteData(mdw);
done:
  if (mj) mj_deleteModel(mj);
  if (mjw) mj_deleteModel(mjw);
  sap_freeModel(m);
}

/* the solver's limit rows (sapw_buildLimits at a step's start state) and the limit sensors at
 * 200 random states: each kept ball row is MuJoCo's (margin 10) row, kept exactly when
 * dist - margin <= 2 h max(|J v0|, |J v*|) computed here; jointlimitpos / jointlimitvel equal
 * MuJoCo 4's sensors */
static void test_solver_rows_sensors(void) {
  char err[1000] = "";
  mjModel* mj = mj_loadXML(SCENE, NULL, err, sizeof(err));
  mjModel* mjw = mj_loadXML(SCENE, NULL, err, sizeof(err));
  CHECK(mj && mjw, "%s", err);
  sapSim* s = fx_sim(SCENE, 1, "preset=approx64");
  if (!mj || !mjw || !s) goto done;
  for (int j = 0; j < mjw->njnt; j++)
    if (mjw->jnt_type[j] == mjJNT_BALL && mjw->jnt_limited[j]) mjw->jnt_margin[j] = 10;
  const sapModel* m = s->m;
  mjData* md = mj_makeData(mj);
  mjData* mdw = mj_makeData(mjw);
  int nv = mj->nv, nq = mj->nq;
  double *q = malloc(sizeof(double) * nq), *v = malloc(sizeof(double) * nv), *Jm = malloc(sizeof(double) * nv);
  sapSolveParams prm;
  sapc_solveParams(s, s->h, &prm);
  prm.linear_fp32 = 0;
  int kept = 0, dropped = 0, sens_nz = 0;
  for (int k = 0; k < 200; k++) {
    rand_state(mj, k, 0, q, v);
    CHECK_OK(sap_set(s, SAP_FIELD_QPOS, NULL, 1, q));
    CHECK_OK(sap_set(s, SAP_FIELD_QVEL, NULL, 1, v));
    CHECK_OK(sap_get(s, SAP_FIELD_QPOS, NULL, 1, q));  // normalized
    // the position/velocity sensors of the state against MuJoCo's
    fx_mjForwardAt(mj, md, q, v, NULL);
    for (int i = 0; i < mj->nsensor; i++) {
      int t = mj->sensor_type[i];
      if (t != mjSENS_JOINTLIMITPOS && t != mjSENS_JOINTLIMITVEL) continue;
      int a = mj->sensor_adr[i];
      CHECK_CLOSE(s->d.sensordata[a], md->sensordata[a], 1e-12, 1e-12, "state %d sensor %d (type %d)", k, i, t);
      sens_nz += md->sensordata[a] != 0;
    }
    // one step computes v* and A at this state; the rows are rebuilt from it
    CHECK_OK(sap_step(s, 1));
    memcpy(s->d.qpos, q, sizeof(double) * nq);
    memcpy(s->d.qvel, v, sizeof(double) * nv);
    fx_mjForwardAt(mjw, mdw, q, NULL, NULL);
    sapProblem_f64 P;
    sapw_worldProblem_f64(m, &s->d, 0, &prm, &P);
    int ns = sapw_buildLimits_f64(m, &s->d, 0, &prm, &P, 0);
    for (int j = 0; j < m->njnt; j++) {
      if (m->jnt_type[j] != SAP_JNT_BALL || !m->jnt_limited[j]) continue;
      int r = mj_limitRow(mdw, j), found = -1;
      for (int i = 0; i < ns; i++)
        if (P.stag[i] == SAP_ROW_TAG(SAP_ROW_LIMIT_HI, j)) found = i;
      mj_row(mjw, mdw, r, Jm);
      double a = 0, b = 0, g = mdw->efc_pos[r] - m->jnt_margin[j];
      for (int c = 0; c < nv; c++) {
        a += Jm[c] * v[c];
        b += Jm[c] * s->d.vstar[c];
      }
      int want = g <= SAP_LIMIT_WINDOW * s->h * fmax(fabs(a), fabs(b));
      CHECK(want == (found >= 0), "state %d joint %d: row kept %d, window rule %d (gap %g)", k, j, found >= 0, want, g);
      if (found < 0) { dropped++; continue; }
      kept++;
      double J[64] = {0};
      for (int e = 0; e < P.snz && P.sidx[found * P.snz + e] >= 0; e++)
        J[P.sidx[found * P.snz + e]] += P.sval[found * P.snz + e];
      char what[64];
      snprintf(what, sizeof(what), "state %d joint %d solver row", k, j);
      check_arrays(what, J, Jm, nv, 1e-12, 0);
    }
  }
  CHECK(kept > 50 && dropped > 50 && sens_nz > 100, "rows kept %d, dropped %d; nonzero sensors %d", kept, dropped,
        sens_nz);
  printf("  solver rows: %d kept, %d dropped by the window; %d nonzero limit sensors\n", kept, dropped, sens_nz);
  free(q); free(v); free(Jm);
  mj_deleteData(md);
  mj_deleteData(mdw);
done:
  if (mj) mj_deleteModel(mj);
  if (mjw) mj_deleteModel(mjw);
  sap_free(s);
}

/* rotation angle of a unit quaternion, in [0, pi] */
static double quat_angle(const double* q) {
  double s = sqrt(q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  return 2 * atan2(s, fabs(q[0]));
}

/* one step of every world, checking each limited ball joint's cone against the bound of a
 * limit linearized at the step's start: the angle's excess e = angle - (max(range) - margin)
 * after the step is at most
 *   e' <= lin + |h u|^2 / (2 lim) + 1e-3 h (|w| + |w'|) + tol
 * The row holds a . w' <= -e / (h + taud), taud = h (a the rotation axis at the start, w, w' the
 * velocities before and after): lin = e / 2 when positions move by h w' (sap_euler, u = w'),
 * lin = e + h/2 a . w - e / 4 under the midpoint rule (u = (w + w') / 2). A rotation by h u whose
 * part across the axis does not move the linearized angle raises the true angle by at most
 * |h u|^2 / (4 tan(angle / 2)) <= |h u|^2 / (2 angle); the regularization
 * R = beta^2 w / (4 pi^2) lets through 2.5e-4 of the velocity change it makes; tol the
 * precision's rounding).
 * A row the window leaves out (drake's rule, gap -e > 2 h max(|a . w|, |a . v*|), v* the free
 * velocity; the rule itself is checked in test_solver_rows_sensors) cannot act in the step, and
 * the other rows' impulses (the shoulder's and elbow's limits on the chain) change the joint's
 * velocity by dv = w' - v*: then the bound is the free motion's, e' <= e / 2 + c h a . dv + (the
 * same second-order, slack-free terms), c = 1/2 under the midpoint rule, 1 under sap_euler (the
 * window keeps h |a . w|, h |a . v*| <= -e / 2). MuJoCo 4 has the same one-step crossing: its row
 * exists only once dist < margin, i.e. from the step after the angle passed max(range) - margin.
 * Returns the largest e seen, *nlim counts joint-steps on a cone, *nmiss steps whose row the
 * window left out and that ended past the cone, *miss the largest such excess */
static double step_checked(sapSim* s, double tol, const char* what, int* nlim, int* nmiss, double* miss) {
  const sapModel* m = s->m;
  int nw = sap_nworld(s), nq = m->nq, nv = m->nv;
  double* q0 = malloc(sizeof(double) * nw * (nq + nv));
  double* v0 = q0 + nw * nq;
  memcpy(q0, s->d.qpos, sizeof(double) * nw * nq);
  memcpy(v0, s->d.qvel, sizeof(double) * nw * nv);
  CHECK_OK(sap_step(s, 1));
  double worst = -INFINITY, h = s->h;
  int mid = sap_options(s)->integration == SAP_INTEGRATE_MIDPOINT;
  for (int w = 0; w < nw; w++)
    for (int j = 0; j < m->njnt; j++) {
      if (m->jnt_type[j] != SAP_JNT_BALL || !m->jnt_limited[j]) continue;
      int a = m->jnt_qposadr[j], dof = m->jnt_dofadr[j];
      double lim = m->jnt_range[2 * j + 1] - m->jnt_margin[j];
      double e0 = quat_angle(q0 + w * nq + a) - lim, e = quat_angle(s->d.qpos + w * nq + a) - lim;
      const double *w0 = v0 + w * nv + dof, *w1 = s->d.qvel + w * nv + dof;
      double n0 = sqrt(w0[0] * w0[0] + w0[1] * w0[1] + w0[2] * w0[2]);
      double n1 = sqrt(w1[0] * w1[0] + w1[1] * w1[1] + w1[2] * w1[2]);
      // the linearized angle's rate at the start a . w0, a the rotation axis of q0
      const double* qa = q0 + w * nq + a;
      double sn = sqrt(qa[1] * qa[1] + qa[2] * qa[2] + qa[3] * qa[3]), r0 = 0, wu[3];
      for (int k = 0; k < 3 && sn > 0; k++) r0 += (qa[0] < 0 ? -1 : 1) * qa[1 + k] / sn * w0[k];
      for (int k = 0; k < 3; k++) wu[k] = mid ? (w0[k] + w1[k]) / 2 : w1[k];
      double nu = h * sqrt(wu[0] * wu[0] + wu[1] * wu[1] + wu[2] * wu[2]);
      double lin = mid ? e0 + h / 2 * r0 - e0 / 4 : e0 / 2;
      // the regularization's slack h R gamma = h^2 R f, R = beta^2 / (4 pi^2) w, w = sum a_k^2 / A_kk
      double f = 0, wd = 0;
      for (int i = 0; i < m->nsensor; i++)
        if (m->sensor_type[i] == SAP_SENS_JOINTLIMITFRC && m->sensor_objid[i] == j)
          f = s->d.sensordata[(size_t)w * m->nsensordata + m->sensor_adr[i]];
      double* A = malloc(sizeof(double) * nv * nv);  // world w's A, dense
      CHECK_OK(sap_getMassMatrix(s, w, A));
      for (int k = 0; k < 3; k++) {
        double ak = sn > 0 ? qa[1 + k] / sn : k == 0;
        wd += ak * ak / A[(dof + k) * (nv + 1)];
      }
      free(A);
      double slack = h * h * f * SAP_LIMIT_BETA * SAP_LIMIT_BETA / (4 * PI * PI) * wd;
      // the window's rule at the step's start (a . w0, a . v*): the row left out
      double rs = 0, rd = 0;
      const double* vs = s->d.vstar + w * nv + dof;
      for (int k = 0; k < 3 && sn > 0; k++) {
        double ak = (qa[0] < 0 ? -1 : 1) * qa[1 + k] / sn;
        rs += ak * vs[k];
        rd += ak * (w1[k] - vs[k]);
      }
      int dropped = !(-e0 <= SAP_LIMIT_WINDOW * h * fmax(fabs(r0), fabs(rs)));
      if (dropped) {
        CHECK(f == 0, "%s world %d joint %d: a limit force %g with the row left out", what, w, j, f);
        lin = e0 / 2 + (mid ? 0.5 : 1) * h * fmax(rd, 0);
        if (nmiss && e > 0) {
          (*nmiss)++;
          *miss = fmax(*miss, e);
        }
      }
      double bound = lin + nu * nu / (2 * lim) + 1.01 * slack + 1e-3 * h * (n0 + n1) + tol;
      CHECK(e <= bound, "%s world %d joint %d: angle %.9g past its limit %.9g by %.3g > %.3g (before %.3g, |w| %g)",
            what, w, j, e + lim, lim, e, bound, e0, n1);
      if (nlim) *nlim += e > -1e-3;
      worst = fmax(worst, e);
    }
  free(q0);
  return worst;
}

/* the two pendulums at rest on their cones: joint angle max(range) - margin, the arm
 * phi = tilt - angle from the vertical, jointlimitfrc = m g L sin(phi); from random spins in
 * worlds 0..2 and released outside the cone (angle range + 0.3 in the tilt's plane, moving
 * outwards) in world 3. MuJoCo 4 from world 0's start: the same rest up to its soft limit's
 * penetration (its jointlimitpos at rest), the same limit force */
static void test_rest_on_cone(void) {
  const char* presets[3] = {"approx64", "approx32", "drake"};
  const char* joint[2] = {"cone", "cone2"};
  const double tilt[2] = {1.1, 2.0}, mass[2] = {1.2, 0.8}, len[2] = {0.5, 0.4}, g = 9.81;
  const double tiltaxis[2][3] = {{1, 0, 0}, {0.6, 0.8, 0}};
  mjModel* mj = fx_mjModel(SCENE);
  if (!mj) return;
  mjData* md = mj_makeData(mj);
  int nq = mj->nq, nv = mj->nv, nw = 4;
  double* q = malloc(sizeof(double) * nw * nq);
  double* v = malloc(sizeof(double) * nw * nv);
  for (int w = 0; w < nw; w++) {
    memcpy(q + w * nq, mj->qpos0, sizeof(double) * nq);
    for (int i = 0; i < nv; i++) v[w * nv + i] = w < 3 ? check_uniform(-3, 3) : 0;
  }
  /* world 3: outside the cone, about the tilt axis, moving out, and sideways at 0.5 rad/s. The
   * near-rigid row pulls a 0.3 rad excess in at 0.3 / (h + taud) = 75 rad/s, and that speed
   * carries the bob across the cone to its far side; released in the tilt's plane alone, the
   * motion stays in that plane and stops at the rim's highest point (cone2: arm 2.98 rad from the
   * vertical), an unstable balance that drake's sap_euler keeps for 5 s of rounding growth before
   * the bob falls to the lowest point at 10 s (measured). The sideways speed takes the bob off
   * that plane: every preset is at rest within 5 s */
  for (int p = 0; p < 2; p++) {
    int jid = mj_name2id(mj, mjOBJ_JOINT, joint[p]), a = mj->jnt_qposadr[jid], dof = mj->jnt_dofadr[jid];
    double ang = mj->jnt_range[2 * jid + 1] + 0.3;
    const double side[3] = {-tiltaxis[p][1], tiltaxis[p][0], 0};  // across the tilt's plane
    q[3 * nq + a] = cos(ang / 2);
    for (int k = 0; k < 3; k++) {
      q[3 * nq + a + 1 + k] = -sin(ang / 2) * tiltaxis[p][k];  // towards the vertical
      v[3 * nv + dof + k] = -1.0 * tiltaxis[p][k] + 0.5 * side[k];
    }
  }
  // MuJoCo 4 from world 0's start
  fx_mjSetState(mj, md, q, v, NULL, NULL);
  for (int i = 0; i < NREST; i++) mj_step(mj, md);
  for (int pr = 0; pr < 3; pr++) {
    sapSim* s = fx_sim(SCENE, nw, pr == 0 ? "preset=approx64" : pr == 1 ? "preset=approx32" : "preset=drake");
    if (!s) break;
    CHECK_OK(sap_set(s, SAP_FIELD_QPOS, NULL, nw, q));
    CHECK_OK(sap_set(s, SAP_FIELD_QVEL, NULL, nw, v));
    /* fp64: the near-rigid limit's static compliance 2 h^2 R f (R = beta^2 w / (4 pi^2)) leaves
     * 2e-8 and 3e-8 rad at rest; fp32 and drake: residual motion */
    double tol = pr == 0 ? 1e-7 : 1e-5, first = 0;
    for (int i = 0; i < NREST; i++) {
      double e = step_checked(s, tol, presets[pr], NULL, NULL, NULL);  // released outside: pulled in
      if (i == 0) first = e;
    }
    CHECK(first > 0.1 && first < 0.25, "%s: released 0.3 rad outside, %.3g after the first step", presets[pr], first);
    for (int w = 0; w < nw; w++)
      for (int p = 0; p < 2; p++) {
        int jid = mj_name2id(mj, mjOBJ_JOINT, joint[p]), b = mj->jnt_bodyid[jid];
        const double* qj = s->d.qpos + w * nq + mj->jnt_qposadr[jid];
        double want = mj->jnt_range[2 * jid + 1] - mj->jnt_margin[jid], phi = tilt[p] - want;
        CHECK_CLOSE(quat_angle(qj), want, tol, 0, "%s world %d %s: rest angle", presets[pr], w, joint[p]);
        // the arm's direction: body frame's -z from the world's sensors (xquat at the step's start)
        double xq[4 * 16], R[9];
        CHECK_OK(sap_get(s, SAP_FIELD_XQUAT, &w, 1, xq));
        mju_quat2Mat(R, xq + 4 * b);
        double down = -R[8];  // world z of the arm, the body's -z
        CHECK_CLOSE(acos(fmin(fmax(-down, -1), 1)), phi, tol * 10, 0, "%s world %d %s: arm angle",
                    presets[pr], w, joint[p]);
        int sid = mj_name2id(mj, mjOBJ_SENSOR, p ? "frc_cone2" : "frc_cone");
        double f = s->d.sensordata[w * mj->nsensordata + mj->sensor_adr[sid]], fw = mass[p] * g * len[p] * sin(phi);
        CHECK_CLOSE(f, fw, 0, 10 * tol, "%s world %d %s: limit force", presets[pr], w, joint[p]);
        if (w) continue;
        // MuJoCo 4: the rest pose up to its soft limit's penetration, the same limit force
        int pid = mj_name2id(mj, mjOBJ_SENSOR, p ? "pos_cone2" : "pos_cone");
        double pen = fabs(md->sensordata[mj->sensor_adr[pid]]);
        const double* qm = md->qpos + mj->jnt_qposadr[jid];
        double dot = fabs(qm[0] * qj[0] + qm[1] * qj[1] + qm[2] * qj[2] + qm[3] * qj[3]);
        double dq = 2 * acos(fmin(dot, 1));  // the rotation between the two rest poses
        CHECK(pen < 0.05 && dq <= pen * 1.01 + 10 * tol,
              "%s %s: rest pose %.3g rad from MuJoCo 4's (its penetration %.3g)", presets[pr], joint[p], dq, pen);
        // MuJoCo's force is m g L sin of its own arm angle (its rest sits pen further into the cone's outside)
        double fm = md->sensordata[mj->sensor_adr[sid]];
        CHECK_CLOSE(fm, mass[p] * g * len[p] * sin(phi - pen), 0, 1e-6, "%s: MuJoCo 4's limit force", joint[p]);
      }
    sap_free(s);
  }
  free(q);
  free(v);
  mj_deleteData(md);
  mj_deleteModel(mj);
}

/* MuJoCo 4 under test_limit_holds' torques (its own mass matrix's diagonal) from the same
 * keyframe in 4 worlds: the largest excess over a cone max(range) - margin, and the steps that
 * start inside a cone and end past it (MuJoCo's row exists only from dist < margin on, so these
 * are crossings within one step, like sapsim's window misses) with their largest excess */
static double mj_limitRun(int* ncross, double* cross) {
  mjModel* mj = fx_mjModel(SCENE);
  if (!mj) return 0;
  mjData* md[4];
  double worst = -INFINITY;
  for (int w = 0; w < 4; w++) {
    md[w] = mj_makeData(mj);
    mj_resetDataKeyframe(mj, md[w], 0);
  }
  for (int i = 0; i < 1000; i++) {
    if (i % 10 == 0 && i) {
      double amp = 30 * check_uniform(0, 1);
      for (int w = 0; w < 4; w++)
        for (int k = 0; k < mj->nv; k++)
          md[w]->qfrc_applied[k] = amp * md[w]->M[mj->M_rowadr[k] + mj->M_rownnz[k] - 1] * check_uniform(-1, 1);
    }
    for (int w = 0; w < 4; w++) {
      double e0[16];
      for (int j = 0; j < mj->njnt && j < 16; j++)
        e0[j] = quat_angle(md[w]->qpos + mj->jnt_qposadr[j]) - (mj->jnt_range[2 * j + 1] - mj->jnt_margin[j]);
      mj_step(mj, md[w]);
      for (int j = 0; j < mj->njnt && j < 16; j++) {
        if (mj->jnt_type[j] != mjJNT_BALL || !mj->jnt_limited[j]) continue;
        double e = quat_angle(md[w]->qpos + mj->jnt_qposadr[j]) - (mj->jnt_range[2 * j + 1] - mj->jnt_margin[j]);
        worst = fmax(worst, e);
        if (e0[j] <= 0 && e > 0) {
          (*ncross)++;
          *cross = fmax(*cross, e);
        }
      }
    }
  }
  for (int w = 0; w < 4; w++) mj_deleteData(md[w]);
  mj_deleteModel(mj);
  return worst;
}

/* random torques on every dof for 2 s in 4 worlds, changed every 10 steps, each up to 30 rad/s^2
 * times the dof's diagonal of A (so that no step turns a link by more than a fraction of a
 * radian): every limited ball joint keeps the linearized limit's bound at every step
 * (step_checked, a row left out by drake's window included); the largest excess over the cone
 * is reported beside MuJoCo 4's under the same torques (mj_limitRun), which is larger */
static void test_limit_holds(void) {
  int mj_ncross = 0;
  double mj_cross = 0, mj_worst = mj_limitRun(&mj_ncross, &mj_cross);
  printf("  MuJoCo 4: largest excess over a cone %.3g rad; %d steps from inside a cone to past it, largest excess %.3g\n",
         mj_worst, mj_ncross, mj_cross);
  const char* opts[3] = {"preset=approx64", "preset=approx32", "preset=drake"};
  for (int pr = 0; pr < 3; pr++) {
    sapSim* s = fx_sim(SCENE, 4, opts[pr]);
    if (!s) return;
    const sapModel* m = s->m;
    int nw = 4, nv = m->nv, nlim = 0, nmiss = 0;
    double miss = 0;
    double* f = malloc(sizeof(double) * nw * nv);
    sap_reset(s, 0, NULL);
    double worst = -INFINITY;
    for (int i = 0; i < 1000; i++) {
      if (i % 10 == 0 && i) {  // A of the last step
        double amp = 30 * check_uniform(0, 1), *A = malloc(sizeof(double) * nv * nv);
        for (int w = 0; w < nw; w++) {
          CHECK_OK(sap_getMassMatrix(s, w, A));
          for (int k = 0; k < nv; k++) f[w * nv + k] = amp * A[k * nv + k] * check_uniform(-1, 1);
        }
        free(A);
        CHECK_OK(sap_set(s, SAP_FIELD_QFRC_APPLIED, NULL, nw, f));
      }
      worst = fmax(worst, step_checked(s, pr == 1 ? 1e-5 : 1e-9, opts[pr], &nlim, &nmiss, &miss));
    }
    CHECK(nlim > 500, "%s: joint-steps on a cone %d", opts[pr], nlim);
    CHECK(worst < mj_worst, "%s: largest excess %g, MuJoCo 4's %g", opts[pr], worst, mj_worst);
    printf("  %s: largest excess over a cone %.3g rad, %d joint-steps on a cone; %d steps past a cone with the row left out by the window, largest excess %.3g\n", opts[pr], worst, nlim, nmiss, miss);
    free(f);
    sap_free(s);
  }
}

static void test_refusals(void) {
  fx_refused("<mujoco><compiler angle='radian'/><worldbody><body><joint name='neck' type='ball' range='0 0.1' margin='0.1'/>"
             "<geom size='.1'/></body></worldbody></mujoco>",
             SAP_ERR_SCENE, "ball joint 'neck' has a limit margin (0.1) that leaves no cone");
  // a limited ball joint loads, with one row of 3 entries counted
  sapModel* m = fx_model("<mujoco><compiler angle='radian'/><worldbody><body><joint type='ball' range='0 1'/><geom size='.1'/>"
                         "<body><joint type='ball' range='0 2' margin='0.1'/><geom size='.1'/></body>"
                         "</body></worldbody></mujoco>");
  if (!m) return;
  CHECK(m->nsolve_rows == 2 && m->nsolve_nnz == 3, "rows %d, nonzeros %d", m->nsolve_rows, m->nsolve_nnz);
  sap_freeModel(m);
}

int main(void) {
  RUN(test_rows_mujoco);
  RUN(test_solver_rows_sensors);
  RUN(test_rest_on_cone);
  RUN(test_limit_holds);
  RUN(test_refusals);
  return check_summary("test_ball_limit");
}
