/* MuJoCo's com-based body outputs of one world (option body_outputs): subtree_com and cinert
 * (mj_comPos), cvel (mj_comVel), cfrc_ext (mj_rnePostConstraint: xfrc_applied, contact forces,
 * connect and weld forces) and qfrc_actuator with the SAP drive forces; engine_core_smooth.c of MuJoCo 4.0.
 * fp64, one thread per world, shared by the CPU backend (host/sensor.c) and the CUDA kernels
 * (kernels/sensor.cu). Reference version.
 * Conventions (MuJoCo's): spatial vectors [angular; linear] about subtree_com of the body's
 * tree root; cinert = (Ixx Iyy Izz Ixy Ixz Iyz, m c, m) with c = xipos - subtree_com(root);
 * the world body's cinert, cvel and cfrc_ext are zero. sapsim's own spatial quantities are about
 * cref (the root body's origin, dynamics_t.h): cvel is shifted, v(c) = v(cref) + w x (c - cref). */
#ifndef SAPSIM_BODY_OUT_H
#define SAPSIM_BODY_OUT_H

#include "history.h" /* sapw_controlInput */
#include "sensor.h"  /* sapSensorSolve, sapw_sensorImpulse, sapw_sensorMotion, sapw_sensorContactPoint */

/* subtree coms (masses summed into cinert[10 b] as a scratch), cinert and cvel of world w from
 * d's body frames (xipos, ximat), motion subspaces (cref, cdof) and qvel */
SAP_HD void sapw_bodyState(const sapModel* m, sapData* d, int w) {
  int nb = m->nbody, nv = m->nv;
  const double* xipos = d->xipos + (long)w * nb * 3;
  const double* ximat = d->ximat + (long)w * nb * 9;
  const double* cref = d->cref + (long)w * nb * 3;
  double* com = d->subtree_com + (long)w * nb * 3;
  double* cinert = d->cinert + (long)w * nb * 10;
  double* cvel = d->cvel + (long)w * nb * 6;
  /* subtree_com = sum m_b xipos_b / sum m_b over the subtree (xipos where the mass is ~0) */
  for (int b = 0; b < nb; b++) {
    cinert[10 * b] = m->body_mass[b];
    for (int k = 0; k < 3; k++) com[3 * b + k] = m->body_mass[b] * xipos[3 * b + k];
  }
  for (int b = nb - 1; b > 0; b--) {
    int p = m->body_parentid[b];
    cinert[10 * p] += cinert[10 * b];
    for (int k = 0; k < 3; k++) com[3 * p + k] += com[3 * b + k];
  }
  for (int b = 0; b < nb; b++)
    for (int k = 0; k < 3; k++)
      com[3 * b + k] = cinert[10 * b] < 1e-15 ? xipos[3 * b + k] : com[3 * b + k] / cinert[10 * b];
  /* cinert: R diag(I) R' + m (|c|^2 1 - c c'), m c, m about the root's subtree com */
  for (int k = 0; k < 10; k++) cinert[k] = 0;
  for (int b = 1; b < nb; b++) {
    const double* R = ximat + 9 * b;
    const double* I = m->body_inertia + 3 * b;
    const double* root = com + 3 * m->body_rootid[b];
    double mass = m->body_mass[b], c[3], J[9];
    for (int k = 0; k < 3; k++) c[k] = xipos[3 * b + k] - root[k];
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++)
        J[3 * i + j] = R[3 * i] * I[0] * R[3 * j] + R[3 * i + 1] * I[1] * R[3 * j + 1] + R[3 * i + 2] * I[2] * R[3 * j + 2];
    double* out = cinert + 10 * b;
    out[0] = J[0] + mass * (c[1] * c[1] + c[2] * c[2]);
    out[1] = J[4] + mass * (c[0] * c[0] + c[2] * c[2]);
    out[2] = J[8] + mass * (c[0] * c[0] + c[1] * c[1]);
    out[3] = J[1] - mass * c[0] * c[1];
    out[4] = J[2] - mass * c[0] * c[2];
    out[5] = J[5] - mass * c[1] * c[2];
    for (int k = 0; k < 3; k++) out[6 + k] = mass * c[k];
    out[9] = mass;
  }
  /* cvel: sapsim's body velocities at cref, shifted to the root's subtree com */
  sapw_sensorMotion(m, d->qvel + (long)w * nv, (const double*)0, d->cdof + (long)w * nv * 6, cvel, (double*)0);
  for (int b = 1; b < nb; b++) {
    const double* root = com + 3 * m->body_rootid[b];
    double r[3], t[3];
    for (int k = 0; k < 3; k++) r[k] = root[k] - cref[3 * b + k];
    sapu_cross3_f64(t, cvel + 6 * b, r);
    for (int k = 0; k < 3; k++) cvel[6 * b + 3 + k] += t[k];
  }
}

/* add the wrench (torque t about point x, force f) to cfrc_ext of body b as [t + (x - c) x f; f],
 * c the subtree com of b's root (MuJoCo's mju_transformSpatial to the com frame) */
SAP_HD void sapw_bodyAddWrench(const sapModel* m, const double* com, double* cfrc, int b, const double* x,
                               const double* t, const double* f, double sign) {
  double r[3], rf[3];
  const double* c = com + 3 * m->body_rootid[b];
  for (int k = 0; k < 3; k++) r[k] = x[k] - c[k];
  sapu_cross3_f64(rf, r, f);
  for (int k = 0; k < 3; k++) {
    cfrc[6 * b + k] += sign * (t[k] + rf[k]);
    cfrc[6 * b + 3 + k] += sign * f[k];
  }
}

/* cfrc_ext += the connect and weld forces of the step, as MuJoCo 4's mj_rnePostConstraint.
 * An equality's rows (kernels/sap_equality_t.h) hold f = impulse / h along g = (p1 - p2,
 * ts Im(A B)), A = (q2 q2')^-1, B = q1 q1', the same rows and signs as MuJoCo's efc rows:
 *   force  F = f[0:3] at p1 on body 1 (connect: anchor a[0:3], weld: a[3:6]), -F at p2 on body 2
 *          (connect: a[3:6], weld: a[0:3]; the site forms' anchors are the site positions);
 *   torque (weld) the rotation rows' world torque T = M' f[3:6], with M = ts/2 Im(A [.] B) the
 *          rows' map of w1 - w2 (sapw_eqWeld), +T on body 1, -T on body 2: MuJoCo 4 maps the
 *          rows to the torque they exert (checked on MuJoCo 4.0.0's library; the older source
 *          in the MuJoCo mirror takes f[3:6] itself);
 *          a weld with ts = 0 has 3 rows here, 6 with a zero rotation part in MuJoCo: no torque.
 * Joint and tendon couplings add nothing (MuJoCo's neither); the world body takes nothing. */
SAP_HD void sapw_bodyEqualityForces(const sapModel* m, const sapData* d, int w, const sapSensorSolve* S, int nc,
                                    double* cfrc) {
  int nb = m->nbody;
  const unsigned char* sc = d->scratch + (long)w * d->nscratch;
  const int* tag = (const int*)(sc + S->tag_off);
  const double* com = d->subtree_com + (long)w * nb * 3;
  const double* xpos = d->xpos + (long)w * nb * 3;
  const double* xmat = d->xmat + (long)w * nb * 9;
  const double* xquat = d->xquat + (long)w * nb * 4;
  for (int s = 0; s < S->ns_max && tag[s] >= 0; s++) {
    if (SAP_ROW_KIND(tag[s]) != SAP_ROW_EQUALITY) continue;
    int e = SAP_ROW_ID(tag[s]), type = m->eq_type[e];
    if (type != SAP_EQ_CONNECT && type != SAP_EQ_WELD) continue;
    const double* a = m->eq_data + SAP_EQ_NDATA * e;
    int weld = type == SAP_EQ_WELD, nr = weld && a[10] != 0 ? 6 : 3;
    double f[6] = {0, 0, 0, 0, 0, 0}, t[3] = {0, 0, 0};
    for (int r = 0; r < nr && s + r < S->ns_max; r++) f[r] = sapw_sensorImpulse(S, sc, S->cd * nc + s + r) / S->h;
    s += nr - 1;
    int b1 = m->eq_obj1id[e], b2 = m->eq_obj2id[e];
    if (nr == 6) {
      /* T_k = ts/2 Im(A e_k B) . f_rot */
      double A[4], B[4];
      sapu_quatMul_f64(A, xquat + 4 * b2, a + 11);
      A[1] = -A[1]; A[2] = -A[2]; A[3] = -A[3];
      sapu_quatMul_f64(B, xquat + 4 * b1, a + 6);
      for (int k = 0; k < 3; k++) {
        double ek[4] = {0, 0, 0, 0}, u[4], v[4];
        ek[k + 1] = 1;
        sapu_quatMul_f64(u, A, ek);
        sapu_quatMul_f64(v, u, B);
        t[k] = 0.5 * a[10] * (v[1] * f[3] + v[2] * f[4] + v[3] * f[5]);
      }
    }
    for (int side = 0; side < 2; side++) {
      int b = side ? b2 : b1;
      if (b == 0) continue;
      const double* anc = a + 3 * (side ^ weld);  /* connect: a[0:3], a[3:6]; weld: a[3:6], a[0:3] */
      double x[3];
      sapu_mulMatVec3_f64(x, xmat + 9 * b, anc);
      for (int k = 0; k < 3; k++) x[k] += xpos[3 * b + k];
      sapw_bodyAddWrench(m, com, cfrc, b, x, t, f, side ? -1.0 : 1.0);
    }
  }
}

/* cfrc_ext of world w after its solve: xfrc_applied (force, torque at the com) and the contact
 * forces of the step (impulses / h, the normal net of adhesion: frame' gamma on geom 1's body, minus on geom 0's, at the
 * points where the solve applies them, with the spin and rolling torques of condim 4 / 6); and
 * the connect and weld forces (sapw_bodyEqualityForces); and
 * the force of each position/velocity actuator solved as a SAP drive row (impulse / h) added to
 * qfrc_actuator along its row, the transmission's moment (every transmission alike). Needs
 * sapw_bodyState of the step's start state first (subtree_com). */
SAP_HD void sapw_bodyForces(const sapModel* m, sapData* d, int w, const sapSensorSolve* S) {
  int nb = m->nbody;
  const unsigned char* sc = d->scratch + (long)w * d->nscratch;
  const double* com = d->subtree_com + (long)w * nb * 3;
  const double* xipos = d->xipos + (long)w * nb * 3;
  const double* xfrc = d->xfrc_applied + (long)w * nb * 6;
  double* cfrc = d->cfrc_ext + (long)w * nb * 6;
  int nc = d->ncon[w] < d->ncon_max ? d->ncon[w] : d->ncon_max;
  if (!S->solved || nc < 0) nc = 0;
  for (int k = 0; k < 6 * nb; k++) cfrc[k] = 0;
  for (int b = 1; b < nb; b++) sapw_bodyAddWrench(m, com, cfrc, b, xipos + 3 * b, xfrc + 6 * b + 3, xfrc + 6 * b, 1);
  for (int i = 0; i < nc; i++) {
    long ci = (long)w * d->ncon_max + i;
    const double* fr = d->con_frame + 9 * ci;
    double g[SAP_CDIM_MAX];
    sapw_sensorContactForce(m, d, S, sc, ci, i, g);
    double f[3], t[3] = {0, 0, 0}, x[3];
    for (int k = 0; k < 3; k++) f[k] = fr[k] * g[0] + fr[3 + k] * g[1] + fr[6 + k] * g[2];
    for (int r = 3; r < S->cd; r++) {  /* spin about n, rolling about t1, t2 */
      const double* ax = fr + 3 * (r == 3 ? 2 : r - 4);
      for (int k = 0; k < 3; k++) t[k] += ax[k] * g[r];
    }
    for (int s = 0; s < 2; s++) {
      int b = m->geom_bodyid[d->con_geom[2 * ci + s]];
      if (b == 0) continue;
      sapw_sensorContactPoint(m, d, ci, s, S, x);
      sapw_bodyAddWrench(m, com, cfrc, b, x, t, f, s ? 1.0 : -1.0);
    }
  }
  if (!S->solved) return;
  sapw_bodyEqualityForces(m, d, w, S, nc, cfrc);
  /* qfrc_actuator += row' f for each drive row: the row is the transmission's moment as the
   * solve built it (sapw_buildDrives: gear for a joint, actuator_jntgear on a ball or free
   * joint, gear J for a tendon, the refsite or slider-crank moment), f = impulse / h */
  double* qfrc = d->qfrc_actuator + (long)w * m->nv;
  const int* tag = (const int*)(sc + S->tag_off);
  for (int s = 0; s < S->ns_max && tag[s] >= 0 && SAP_ROW_KIND(tag[s]) == SAP_ROW_DRIVE; s++) {
    double f = sapw_sensorImpulse(S, sc, S->cd * nc + s) / S->h;
    const int* idx = (const int*)(sc + S->sidx_off) + (long)s * S->snz;
    const double* val = (const double*)(sc + S->sval_off) + (long)s * S->snz;
    for (int a = 0; a < S->snz && idx[a] >= 0; a++) qfrc[idx[a]] += val[a] * f;
  }
}

/* the state's outputs after a reset or a state edit (MuJoCo's mj_forward): motion subspaces,
 * subtree_com, cinert, cvel, and qfrc_actuator of the explicit actuator laws at the state (the
 * drives too, as MuJoCo computes them; adhesion actuators over the last step's contacts, which
 * a reset clears); cfrc_ext keeps the last step's (zeroed by a reset) */
SAP_HD void sapw_bodyStateEdit(const sapModel* m, sapData* d, int w, double h) {
  int nb = m->nbody, nv = m->nv;
  double* cref = d->cref + (long)w * nb * 3;
  double* cdof = d->cdof + (long)w * nv * 6;
  const double* xpos = d->xpos + (long)w * nb * 3;
  const double* xmat = d->xmat + (long)w * nb * 9;
  sapw_comPos_f64(m, xpos, xmat, d->xanchor + (long)w * m->njnt * 3, d->xaxis + (long)w * m->njnt * 3, cref, cdof,
                  (const int*)0);
  sapw_bodyState(m, d, w);
  sapWorldContacts con = sapw_worldContacts(d, w);
  sapw_controlInput(m, d, w);
  sapw_actuation_f64(m, h, d->qpos + (long)w * m->nq, d->qvel + (long)w * nv, d->ctrl_in + (long)w * m->nu,
                     d->act + (long)w * m->na, 1, xpos, xmat, cref, cdof, d->qfrc_actuator + (long)w * nv, &con);
}

#endif
