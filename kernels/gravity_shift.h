/* Gravity at the half step under the midpoint rule (included by kernels.h after both
 * precisions' templates; declared before them, since the fp32 and fp64 free motions call it).
 *
 * The approx presets integrate positions by the midpoint rule, q' = q + h (v + v')/2 (SAP
 * Warp's choice, kernels/integrate.h). With the forces taken at q, a pendulum's step has
 * determinant 1 + (w h)^2/2 and its swing grows every step (dm_control's pendulum at h = 0.02
 * drifted 0.68 rad from MuJoCo in 4 s). Taking the position-dependent forces at
 * q_h = q + h/2 v instead makes the step drift - kick - drift (position Verlet,
 * q_h = q + h/2 v, v' = v + h a(q_h), q' = q_h + h/2 v'): symplectic and second order for
 * conservative forces. The springs already act there (dynamics_t.h sapw_springShift); this
 * does the same for gravity: the generalized gravity force at q_h minus the one at q, added to
 * the free motion's force.
 *
 * G(q)_i is the gravity of the subtree below dof i's body through that dof, each body's
 * weight reduced by its gravity compensation (MuJoCo's gravcomp, which cancels gc of it
 * wherever it is routed): hinge  axis . (sum m (c - anchor)) x g,  slide  axis . (sum m) g,
 * ball and free rotations  the body's axes . the same torque, free translations (sum m) g
 * (the same at q_h: zero). The poses at q_h come from sapw_kinematicsBody in the kinematics'
 * precision, starting from the step's poses of the bodies that do not move (static and mocap
 * bodies and sleeping trees), so that v = 0 gives exactly G(q_h) - G(q) = 0. The equality rows
 * are built at the same q_h (sapw_halfPoses; sap_solve.h sapw_eqFrames, sap_equality_t.h). */
#ifndef SAPSIM_GRAVITY_SHIFT_H
#define SAPSIM_GRAVITY_SHIFT_H

/* whether gravity's generalized force can depend on q: not when every moving body is alone
 * on a free joint with its com at its origin (piles of primitives), nor without gravity */
SAP_HD int sapw_gravityVaries(const sapModel* m) {
  if (m->gravity[0] == 0 && m->gravity[1] == 0 && m->gravity[2] == 0) return 0;
  for (int j = 0; j < m->njnt; j++)
    if (m->jnt_type[j] != SAP_JNT_FREE) return 1;
  for (int b = 1; b < m->nbody; b++) {
    const double* c = m->body_ipos + 3 * b;
    if (m->body_treeid[b] >= 0 && (m->body_jntnum[b] == 0 || c[0] != 0 || c[1] != 0 || c[2] != 0)) return 1;
  }
  return 0;
}

/* doubles of scratch sapw_gravityShift uses: q_h (nq), the poses at q_h (19 per body, 6 per
 * joint), the subtree sums (7 per body) and the result (nv) */
SAP_HD long sapw_gravityShiftDoubles(const sapModel* m) {
  return (long)m->nq + 26L * m->nbody + 6L * m->njnt + m->nv;
}

/* joint j's part of G - G0 (G at the poses xmat/xanchor/xaxis with subtree sums ms, mc; G0 at
 * the others) on its dofs of out */
SAP_HD void sapw_gravityJoint(const sapModel* m, int j, const double* ms, const double* mc, const double* xmat,
                              const double* xanchor, const double* xaxis, const double* mc0,
                              const double* xmat0, const double* xanchor0, const double* xaxis0, double* out) {
  const double* g = m->gravity;
  int b = m->jnt_bodyid[j], d = m->jnt_dofadr[j], type = m->jnt_type[j];
  double t[3], t0[3], r[3], r0[3], M = ms[b];
  for (int k = 0; k < 3; k++) {
    r[k] = mc[3 * b + k] - M * xanchor[3 * j + k];  /* sum m (c - anchor) */
    r0[k] = mc0[3 * b + k] - M * xanchor0[3 * j + k];
  }
  t[0] = r[1] * g[2] - r[2] * g[1], t[1] = r[2] * g[0] - r[0] * g[2], t[2] = r[0] * g[1] - r[1] * g[0];
  t0[0] = r0[1] * g[2] - r0[2] * g[1], t0[1] = r0[2] * g[0] - r0[0] * g[2], t0[2] = r0[0] * g[1] - r0[1] * g[0];
  const double *a = xaxis + 3 * j, *a0 = xaxis0 + 3 * j;
  if (type == SAP_JNT_HINGE) {
    out[d] = (a[0] * t[0] + a[1] * t[1] + a[2] * t[2]) - (a0[0] * t0[0] + a0[1] * t0[1] + a0[2] * t0[2]);
  } else if (type == SAP_JNT_SLIDE) {
    out[d] = M * (a[0] * g[0] + a[1] * g[1] + a[2] * g[2]) - M * (a0[0] * g[0] + a0[1] * g[1] + a0[2] * g[2]);
  } else {
    if (type == SAP_JNT_FREE) {  /* translations along the world axes: M g at both */
      for (int k = 0; k < 3; k++) out[d + k] = 0;
      d += 3;
    }
    const double *R = xmat + 9 * b, *R0 = xmat0 + 9 * b;  /* rotations about the body's axes */
    for (int i = 0; i < 3; i++)
      out[d + i] = (R[i] * t[0] + R[3 + i] * t[1] + R[6 + i] * t[2]) - (R0[i] * t0[0] + R0[3 + i] * t0[1] + R0[6 + i] * t0[2]);
  }
}

/* q_h = q + hs v (nq) and the poses at q_h (hpos 3, hquat 4, hmat 9, hipos 3 per body, hanchor
 * and haxis 3 per joint) from the step's poses at q (xpos ... xaxis): the bodies that move
 * recomputed in tree order from their parents' by sapw_kinematicsBody in the kinematics'
 * precision (pose_fp32; com positions only; a mocap body has no tree, so mocap_pos/quat are
 * never read), the others (static, mocap, the sleeping trees of ta, NULL: none) copied, so
 * that v = 0 gives the step's poses exactly. A quaternion is turned by hs w in the body frame,
 * left as it is (bits and all) when w = 0. */
SAP_HD void sapw_halfPoses(const sapModel* m, int pose_fp32, const double* qpos, const double* qvel, double hs,
                           const double* xpos, const double* xquat, const double* xmat, const double* xipos,
                           const double* xanchor, const double* xaxis, double* qh, double* hpos, double* hquat,
                           double* hmat, double* hipos, double* hanchor, double* haxis, const int* ta) {
  int nb = m->nbody, nj = m->njnt, nq = m->nq;
  for (int i = 0; i < nq; i++) qh[i] = qpos[i];
  for (int j = 0; j < nj; j++) {
    int a = m->jnt_qposadr[j], d = m->jnt_dofadr[j], type = m->jnt_type[j];
    if (type == SAP_JNT_HINGE || type == SAP_JNT_SLIDE) {
      qh[a] += hs * qvel[d];
      continue;
    }
    if (type == SAP_JNT_FREE) {
      for (int k = 0; k < 3; k++) qh[a + k] += hs * qvel[d + k];
      a += 3, d += 3;
    }
    if (qvel[d] != 0 || qvel[d + 1] != 0 || qvel[d + 2] != 0) sapw_quatRotate(qh + a, qvel + d, hs);
  }
  for (int b = 0; b < nb; b++) {
    if (b > 0 && m->body_treeid[b] >= 0 && !sapw_treeSleeps(ta, m->body_treeid[b])) {
      if (pose_fp32)
        sapw_kinematicsBody_f32(m, qh, (const double*)0, (const double*)0, b, hpos, hquat, hmat, hipos,
                                (double*)0, hanchor, haxis);
      else
        sapw_kinematicsBody_f64(m, qh, (const double*)0, (const double*)0, b, hpos, hquat, hmat, hipos,
                                (double*)0, hanchor, haxis);
      continue;
    }
    for (int k = 0; k < 3; k++) hpos[3 * b + k] = xpos[3 * b + k], hipos[3 * b + k] = xipos[3 * b + k];
    for (int k = 0; k < 4; k++) hquat[4 * b + k] = xquat[4 * b + k];
    for (int k = 0; k < 9; k++) hmat[9 * b + k] = xmat[9 * b + k];
    for (int j = m->body_jntadr[b]; j < m->body_jntadr[b] + m->body_jntnum[b]; j++)
      for (int k = 0; k < 3; k++) hanchor[3 * j + k] = xanchor[3 * j + k], haxis[3 * j + k] = xaxis[3 * j + k];
  }
}

/* G(q + hs v) - G(q) for the step's poses at q (xpos ... xaxis, from sapw_kinematics in the
 * precision pose_fp32 says), or NULL when gravity cannot depend on q (sapw_gravityVaries):
 * the nv values in scratch (sapw_gravityShiftDoubles), 0 for the dofs of the sleeping trees
 * of ta (NULL: none) */
SAP_HD const double* sapw_gravityShift(const sapModel* m, int pose_fp32, const double* qpos, const double* qvel,
                                       double hs, const double* xpos, const double* xquat, const double* xmat,
                                       const double* xipos, const double* xanchor, const double* xaxis,
                                       double* scratch, const int* ta) {
  if (!sapw_gravityVaries(m)) return (const double*)0;
  int nb = m->nbody, nj = m->njnt, nq = m->nq;
  double *qh = scratch, *hpos = qh + nq, *hquat = hpos + 3 * nb, *hmat = hquat + 4 * nb, *hipos = hmat + 9 * nb;
  double *hanchor = hipos + 3 * nb, *haxis = hanchor + 3 * nj, *ms = haxis + 3 * nj;
  double *mc0 = ms + nb, *mc = mc0 + 3 * nb, *out = mc + 3 * nb;
  sapw_halfPoses(m, pose_fp32, qpos, qvel, hs, xpos, xquat, xmat, xipos, xanchor, xaxis, qh, hpos, hquat, hmat, hipos,
                 hanchor, haxis, ta);

  /* subtree sums of the compensated weights: sum m' and sum m' c at q and at q_h */
  for (int b = 0; b < nb; b++) {
    double w = b > 0 ? m->body_mass[b] * (1 - m->body_gravcomp[b]) : 0;
    ms[b] = w;
    for (int k = 0; k < 3; k++) mc0[3 * b + k] = w * xipos[3 * b + k], mc[3 * b + k] = w * hipos[3 * b + k];
  }
  for (int b = nb - 1; b > 0; b--) {
    int p = m->body_parentid[b];
    if (p <= 0) continue;
    ms[p] += ms[b];
    for (int k = 0; k < 3; k++) mc0[3 * p + k] += mc0[3 * b + k], mc[3 * p + k] += mc[3 * b + k];
  }
  for (int i = 0; i < m->nv; i++) out[i] = 0;
  for (int j = 0; j < nj; j++)
    if (!sapw_treeSleeps(ta, m->body_treeid[m->jnt_bodyid[j]]))
      sapw_gravityJoint(m, j, ms, mc, hmat, hanchor, haxis, mc0, xmat, xanchor, xaxis, out);
  return out;
}

#endif
