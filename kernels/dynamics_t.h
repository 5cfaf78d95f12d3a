/* Per-world kinematics and free-motion dynamics (template body; see sap_real.h).
 * Algorithms follow MuJoCo's engine so that MuJoCo is a direct oracle:
 * mj_kinematics (poses), mj_comPos (motion subspaces cdof), mj_crb (composite
 * rigid body M), mj_rne (bias c(q,v) with gravity). Spatial quantities of a
 * kinematic tree are expressed at the position of its root body (cref), not at
 * the subtree com: any point gives the same M and c; the root keeps lever arms
 * short for fp32. Inputs and outputs are fp64 arrays; the arithmetic is SAP_REAL
 * (fp32 path: x_stored = cast64(fl32(x)), seed 002). */
#define sreal SAP_REAL

/* the free-motion stage's arrays in a world's scratch (sapw_freeMotion, sapv_freeMotion) */
typedef struct {
  sreal* cinert;  /* (nbody x 10) body inertias at cref */
  sreal* crb;     /* (nbody x 10) composite inertias */
  sreal* cvel;    /* (nbody x 6) */
  sreal* cacc;    /* (nbody x 6) */
  sreal* cfrc;    /* (nbody x 6) */
  sreal* L;       /* M + h D, then its Cholesky factor: by dof-tree blocks as A (sapModel.nA,
                     row i at dof_Aadr[i], sapw_mrow) on one lane; (nv x nv) in the warp free
                     motion (dense), whose Cholesky takes the whole matrix */
  sreal* x;       /* (nv) the force, then the acceleration */
  int* loc;       /* (3 nv) one lane: a tree's parents, segment starts and subtree ends, local to
                     its block (its factorization runs on the block alone); NULL when dense */
  double* grav;   /* (sapw_gravityShiftDoubles) the midpoint rule's gravity shift (gravity_shift.h) */
  double* tenJ;   /* (nv) a spatial tendon's Jacobian; NULL without spatial tendon armature */
  double* tenbias; /* (nv) the spatial tendons' armature bias a J (dJ/dt qvel); NULL alike */
} SAPT(sapFreeMotionScratch);

/* carve the free-motion scratch from base into fs; returns its size in sreal units. With
 * base NULL it only counts (the pointers stay NULL): sapw_scratchFreeMotion is this carve,
 * so the size cannot disagree with the layout (tests/test_dynamics.c checks it with guard
 * bytes) */
SAP_HD long SAPT(sapw_freeMotionCarve)(const sapModel* m, sreal* base, SAPT(sapFreeMotionScratch)* fs, int dense) {
  long n = 0, nv = m->nv, nb = m->nbody;
  dense = dense || !m->dof_Aadr;  // a model without the layout (hand-made): dense
#define SAPW_FM_TAKE(f, count) fs->f = base ? base + n : (sreal*)0, n += (count)
  SAPW_FM_TAKE(cinert, 10 * nb);
  SAPW_FM_TAKE(crb, 10 * nb);
  SAPW_FM_TAKE(cvel, 6 * nb);
  SAPW_FM_TAKE(cacc, 6 * nb);
  SAPW_FM_TAKE(cfrc, 6 * nb);
  SAPW_FM_TAKE(L, dense ? nv * nv : (long)m->nA);
  SAPW_FM_TAKE(x, nv);
#undef SAPW_FM_TAKE
  long per_int = (long)(sizeof(sreal) / sizeof(int));  // 1 or 2 ints per sreal
  fs->loc = base && !dense ? (int*)(base + n) : (int*)0;
  if (!dense) n += (3 * nv + per_int - 1) / per_int;
  /* doubles, 8-byte aligned in a float arena (the world's scratch starts aligned) */
  long per = (long)(sizeof(double) / sizeof(sreal));
  n = (n + per - 1) / per * per;
  fs->grav = base ? (double*)(base + n) : (double*)0;
  n += per * sapw_gravityShiftDoubles(m);
  int ta = sapt_hasSpatialArmature(m);
  fs->tenJ = base && ta ? (double*)(base + n) : (double*)0;
  fs->tenbias = base && ta ? (double*)(base + n) + nv : (double*)0;
  if (ta) n += per * 2 * nv;
  return n;
}

/* scratch per world (in sreal units) of the free-motion stage: its carve over a null arena */
SAP_HD long SAPT(sapw_scratchFreeMotion)(const sapModel* m, int dense) {
  SAPT(sapFreeMotionScratch) fs;
  return SAPT(sapw_freeMotionCarve)(m, (sreal*)0, &fs, dense);
}

/* row i of the free motion's M (and factor): M + radr[i] by dof-tree blocks (radr =
 * sapModel.dof_Aadr: M[i][j] = row[j] for j of i's tree), or dense nv x nv (radr NULL) */
SAP_HD sreal* SAPT(sapw_mrow)(sreal* M, const int* radr, int nv, int i) {
  return M + (radr ? (long)radr[i] : (long)i * nv);
}

SAP_HD void SAPT(sapw_load3)(sreal* r, const double* a) { r[0] = (sreal)a[0]; r[1] = (sreal)a[1]; r[2] = (sreal)a[2]; }
SAP_HD void SAPT(sapw_store)(double* r, const sreal* a, int n) { for (int i = 0; i < n; i++) r[i] = (double)a[i]; }

/* ---- forward kinematics: body, com, joint and geom frames -------------------- */

/* apply the joints of body b to the frame (pos, quat) */
SAP_HD void SAPT(sapw_applyJoints)(const sapModel* m, const double* qpos, int b, sreal* pos,
                                   sreal* quat, double* xanchor, double* xaxis) {
  for (int j = m->body_jntadr[b]; j < m->body_jntadr[b] + m->body_jntnum[b]; j++) {
    int a = m->jnt_qposadr[j];
    sreal R[9], jpos[3], jaxis[3], anchor[3], axis[3], qloc[4], off[3];
    SAPT(sapu_quat2Mat)(R, quat);
    SAPT(sapw_load3)(jpos, m->jnt_pos + 3 * j);
    SAPT(sapw_load3)(jaxis, m->jnt_axis + 3 * j);
    SAPT(sapu_mulMatVec3)(anchor, R, jpos);
    for (int k = 0; k < 3; k++) anchor[k] += pos[k];
    SAPT(sapu_mulMatVec3)(axis, R, jaxis);
    int type = m->jnt_type[j];
    if (type == SAP_JNT_FREE) {
      for (int k = 0; k < 3; k++) pos[k] = anchor[k] = (sreal)qpos[a + k];
      for (int k = 0; k < 4; k++) quat[k] = (sreal)qpos[a + 3 + k];
      SAPT(sapu_normalizeQuat)(quat);
    } else if (type == SAP_JNT_SLIDE) {
      sreal d = (sreal)(qpos[a] - m->qpos0[a]);
      for (int k = 0; k < 3; k++) pos[k] += axis[k] * d;
    } else {
      /* ball or hinge: rotate about the anchor */
      if (type == SAP_JNT_BALL) {
        for (int k = 0; k < 4; k++) qloc[k] = (sreal)qpos[a + k];
        SAPT(sapu_normalizeQuat)(qloc);
      } else {
        SAPT(sapu_axisAngle2Quat)(qloc, jaxis, (sreal)(qpos[a] - m->qpos0[a]));
      }
      SAPT(sapu_quatMul)(quat, quat, qloc);
      SAPT(sapu_normalizeQuat)(quat);
      SAPT(sapu_quat2Mat)(R, quat);
      SAPT(sapu_mulMatVec3)(off, R, jpos);
      for (int k = 0; k < 3; k++) pos[k] = anchor[k] - off[k];
    }
    SAPT(sapw_store)(xanchor + 3 * j, anchor, 3);
    SAPT(sapw_store)(xaxis + 3 * j, axis, 3);
  }
}

/* frame of a child object (com, geom) from its body frame and local pose; xmat NULL: the
 * position only */
SAP_HD void SAPT(sapw_childFrame)(double* xpos, double* xmat, const sreal* bpos, const sreal* bR,
                                  const double* lpos, const double* lquat) {
  sreal p[3], q[4], Rl[9], R[9], v[3];
  SAPT(sapw_load3)(p, lpos);
  SAPT(sapu_mulMatVec3)(v, bR, p);
  for (int k = 0; k < 3; k++) v[k] += bpos[k];
  if (!xmat) {
    SAPT(sapw_store)(xpos, v, 3);
    return;
  }
  for (int k = 0; k < 4; k++) q[k] = (sreal)lquat[k];
  SAPT(sapu_quat2Mat)(Rl, q);
  SAPT(sapu_mulMatMat3)(R, bR, Rl);
  SAPT(sapw_store)(xpos, v, 3);
  SAPT(sapw_store)(xmat, R, 9);
}

/* body b's frame (xpos, xquat, xmat), com frame (xipos, ximat; NULL: the com's position
 * only) and its joints' anchors and axes from its parent's frame in the same arrays; a mocap body (a jointless child of the
 * world) takes its offset from mocap_pos/quat (nmocap x 3, x 4) instead of body_pos/quat, the
 * quaternion normalised on use, never in place (MuJoCo's mj_kinematics1) */
SAP_HD void SAPT(sapw_kinematicsBody)(const sapModel* m, const double* qpos, const double* mocap_pos,
                                      const double* mocap_quat, int b, double* xpos, double* xquat,
                                      double* xmat, double* xipos, double* ximat, double* xanchor,
                                      double* xaxis) {
  int p = m->body_parentid[b];
  sreal ppos[3], pquat[4], pR[9], lpos[3], lquat[4], pos[3], quat[4], R[9];
  SAPT(sapw_load3)(ppos, xpos + 3 * p);
  for (int k = 0; k < 4; k++) pquat[k] = (sreal)xquat[4 * p + k];
  for (int k = 0; k < 9; k++) pR[k] = (sreal)xmat[9 * p + k];
  int id = m->body_mocapid[b];
  const double* bpos = id >= 0 ? mocap_pos + 3 * id : m->body_pos + 3 * b;
  const double* bquat = id >= 0 ? mocap_quat + 4 * id : m->body_quat + 4 * b;
  SAPT(sapw_load3)(lpos, bpos);
  for (int k = 0; k < 4; k++) lquat[k] = (sreal)bquat[k];
  if (id >= 0) SAPT(sapu_normalizeQuat)(lquat);

  /* pos = ppos + pR lpos, quat = pquat * lquat, then the body's joints */
  SAPT(sapu_mulMatVec3)(pos, pR, lpos);
  for (int k = 0; k < 3; k++) pos[k] += ppos[k];
  SAPT(sapu_quatMul)(quat, pquat, lquat);
  SAPT(sapu_normalizeQuat)(quat);
  SAPT(sapw_applyJoints)(m, qpos, b, pos, quat, xanchor, xaxis);

  SAPT(sapu_quat2Mat)(R, quat);
  SAPT(sapw_store)(xpos + 3 * b, pos, 3);
  SAPT(sapw_store)(xquat + 4 * b, quat, 4);
  SAPT(sapw_store)(xmat + 9 * b, R, 9);
  SAPT(sapw_childFrame)(xipos + 3 * b, ximat ? ximat + 9 * b : (double*)0, pos, R, m->body_ipos + 3 * b,
                        m->body_iquat + 4 * b);
}

/* poses of bodies, coms, joints and geoms of one world (sapw_kinematicsBody in tree order);
 * its descendants follow a mocap body through their parent frames. geom_xpos NULL: no
 * geom frames (the sensors' kinematics). ta: the world's tree_asleep row, whose sleeping
 * trees keep the poses they have (kernels/sleep.h; their qpos is the one those poses were
 * computed from), or NULL: every body */
SAP_HD void SAPT(sapw_kinematics)(const sapModel* m, const double* qpos, const double* mocap_pos,
                                  const double* mocap_quat, double* xpos, double* xquat,
                                  double* xmat, double* xipos, double* ximat, double* xanchor,
                                  double* xaxis, double* geom_xpos, double* geom_xmat, const int* ta) {
  /* world body */
  for (int k = 0; k < 3; k++) xpos[k] = xipos[k] = 0;
  xquat[0] = 1; xquat[1] = xquat[2] = xquat[3] = 0;
  for (int k = 0; k < 9; k++) xmat[k] = ximat[k] = (k % 4 == 0) ? 1 : 0;

  for (int b = 1; b < m->nbody; b++)
    if (!sapw_treeSleeps(ta, m->body_treeid[b]))
      SAPT(sapw_kinematicsBody)(m, qpos, mocap_pos, mocap_quat, b, xpos, xquat, xmat, xipos, ximat, xanchor,
                                xaxis);

  for (int g = 0; geom_xpos && g < m->ngeom; g++) {
    int b = m->geom_bodyid[g];
    if (sapw_treeSleeps(ta, m->body_treeid[b])) continue;
    sreal pos[3], R[9];
    SAPT(sapw_load3)(pos, xpos + 3 * b);
    for (int k = 0; k < 9; k++) R[k] = (sreal)xmat[9 * b + k];
    SAPT(sapw_childFrame)(geom_xpos + 3 * g, geom_xmat + 9 * g, pos, R, m->geom_pos + 3 * g,
                          m->geom_quat + 4 * g);
  }
}

/* motion subspaces of joint j's dofs, cdof = [axis; axis x (cref - anchor)] */
SAP_HD void SAPT(sapw_cdofJoint)(const sapModel* m, int j, const double* xmat, const double* xanchor,
                                 const double* xaxis, const double* cref, double* cdof) {
  int b = m->jnt_bodyid[j], d = m->jnt_dofadr[j], type = m->jnt_type[j];
  sreal off[3], anchor[3], axis[3], R[9], s[6];
  SAPT(sapw_load3)(off, cref + 3 * b);
  SAPT(sapw_load3)(anchor, xanchor + 3 * j);
  for (int k = 0; k < 3; k++) off[k] -= anchor[k];
  for (int k = 0; k < 9; k++) R[k] = (sreal)xmat[9 * b + k];
  if (type == SAP_JNT_FREE) {
    /* translation along world axes */
    for (int i = 0; i < 3; i++, d++)
      for (int k = 0; k < 6; k++) cdof[6 * d + k] = (k == 3 + i) ? 1.0 : 0.0;
  }
  if (type == SAP_JNT_FREE || type == SAP_JNT_BALL) {
    /* rotation about the body axes (columns of xmat) */
    for (int i = 0; i < 3; i++, d++) {
      axis[0] = R[i]; axis[1] = R[3 + i]; axis[2] = R[6 + i];
      SAPT(sapu_copy3)(s, axis);
      SAPT(sapu_cross3)(s + 3, axis, off);
      SAPT(sapw_store)(cdof + 6 * d, s, 6);
    }
  } else if (type == SAP_JNT_HINGE) {
    SAPT(sapw_load3)(axis, xaxis + 3 * j);
    SAPT(sapu_copy3)(s, axis);
    SAPT(sapu_cross3)(s + 3, axis, off);
    SAPT(sapw_store)(cdof + 6 * d, s, 6);
  } else if (type == SAP_JNT_SLIDE) {
    SAPT(sapw_load3)(axis, xaxis + 3 * j);
    s[0] = s[1] = s[2] = 0;
    SAPT(sapu_copy3)(s + 3, axis);
    SAPT(sapw_store)(cdof + 6 * d, s, 6);
  }
}

/* reference points (each tree's root position) and motion subspaces; the sleeping trees of
 * ta (NULL: none) keep theirs */
SAP_HD void SAPT(sapw_comPos)(const sapModel* m, const double* xpos, const double* xmat,
                              const double* xanchor, const double* xaxis, double* cref,
                              double* cdof, const int* ta) {
  for (int b = 0; b < m->nbody; b++)
    if (!sapw_treeSleeps(ta, m->body_treeid[b]))
      for (int k = 0; k < 3; k++) cref[3 * b + k] = xpos[3 * m->body_rootid[b] + k];
  for (int j = 0; j < m->njnt; j++)
    if (!sapw_treeSleeps(ta, m->body_treeid[m->jnt_bodyid[j]]))
      SAPT(sapw_cdofJoint)(m, j, xmat, xanchor, xaxis, cref, cdof);
}

/* inertia of body b (b > 0) at cref (10 numbers, see sapu_mulInertVec) */
SAP_HD void SAPT(sapw_cinertBody)(const sapModel* m, int b, const double* xipos, const double* ximat,
                                  const double* cref, sreal* inert) {
  sreal mass = (sreal)m->body_mass[b], c[3], Rm[9], d[3];
  SAPT(sapw_load3)(c, xipos + 3 * b);
  for (int k = 0; k < 3; k++) c[k] -= (sreal)cref[3 * b + k];
  for (int k = 0; k < 9; k++) Rm[k] = (sreal)ximat[9 * b + k];
  SAPT(sapw_load3)(d, m->body_inertia + 3 * b);
  /* I_com = R diag(d) R' ; I_ref = I_com + m (|c|^2 1 - c c') */
  sreal Ic[9];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      Ic[3 * i + j] = Rm[3 * i] * d[0] * Rm[3 * j] + Rm[3 * i + 1] * d[1] * Rm[3 * j + 1] +
                      Rm[3 * i + 2] * d[2] * Rm[3 * j + 2];
  sreal cc = SAPT(sapu_dot3)(c, c);
  inert[0] = mass;
  for (int k = 0; k < 3; k++) inert[1 + k] = mass * c[k];
  inert[4] = Ic[0] + mass * (cc - c[0] * c[0]);
  inert[5] = Ic[4] + mass * (cc - c[1] * c[1]);
  inert[6] = Ic[8] + mass * (cc - c[2] * c[2]);
  inert[7] = Ic[1] - mass * c[0] * c[1];
  inert[8] = Ic[2] - mass * c[0] * c[2];
  inert[9] = Ic[5] - mass * c[1] * c[2];
}

/* body inertias at cref (the world body's is zero); none for the sleeping trees of ta (NULL:
 * none) */
SAP_HD void SAPT(sapw_cinert)(const sapModel* m, const double* xipos, const double* ximat,
                              const double* cref, sreal* cinert, const int* ta) {
  for (int k = 0; k < 10; k++) cinert[k] = 0;
  for (int b = 1; b < m->nbody; b++)
    if (!sapw_treeSleeps(ta, m->body_treeid[b])) SAPT(sapw_cinertBody)(m, b, xipos, ximat, cref, cinert + 10 * b);
}

/* entries M[i][j] = M[j][i] of dof i and its ancestors j from the composite inertias,
 * armature on the diagonal (distinct dofs write distinct entries) */
SAP_HD void SAPT(sapw_crbColumn)(const sapModel* m, const sreal* crb, const double* cdof, int i, sreal* M,
                                  const int* radr) {
  int nv = m->nv;
  sreal si[6], f[6], sj[6];
  sreal* Mi = SAPT(sapw_mrow)(M, radr, nv, i);
  for (int k = 0; k < 6; k++) si[k] = (sreal)cdof[6 * i + k];
  SAPT(sapu_mulInertVec)(f, crb + 10 * m->dof_bodyid[i], si);
  for (int j = i; j >= 0; j = m->dof_parentid[j]) {
    for (int k = 0; k < 6; k++) sj[k] = (sreal)cdof[6 * j + k];
    Mi[j] = SAPT(sapw_mrow)(M, radr, nv, j)[i] = SAPT(sapu_dot6)(sj, f);
  }
  Mi[i] += (sreal)m->dof_armature[i];
}

/* the dof trees are contiguous (MuJoCo's depth-first order: every dof's parent dof lies in
 * the run since the last dof without a parent); a forest in pre-order (dof_treeend, set at
 * load) is, without the scan */
SAP_HD int SAPT(sapw_treesContiguous)(const sapModel* m) {
  if (m->nv > 0 && m->dof_treeend[0] >= 0) return 1;
  for (int j = 0, t0 = 0; j < m->nv; j++) {
    int p = m->dof_parentid[j];
    if (p < 0) t0 = j;
    else if (p < t0) return 0;
  }
  return 1;
}

/* one past the last dof of the tree that starts at dof t0 (all dofs when not contiguous;
 * dof_treeend's + 1 in pre-order, without the walk) */
SAP_HD int SAPT(sapw_treeEnd)(const sapModel* m, int t0, int contiguous) {
  int t1 = t0 + 1;
  if (!contiguous) return m->nv;
  if (m->dof_treeend[t0] >= 0) return m->dof_treeend[t0] + 1;
  while (t1 < m->nv && m->dof_parentid[t1] >= 0) t1++;
  return t1;
}

/* the dofs [t0, t1) of a tree form one chain (one segment: dof_parentid[j] = j - 1 after
 * t0): a free or ball body alone, a chain of one-dof bodies. Every entry of its block lies
 * on the ancestor pattern */
SAP_HD int SAPT(sapw_treeIsChain)(const sapModel* m, int t0, int t1) { return m->dof_segstart[t1 - 1] == t0; }

/* composite rigid body algorithm: M (with armature), lower and upper filled within the dof
 * trees' diagonal blocks (contiguous), else the whole matrix; the entries between two trees
 * are not touched (exact zeros that no one writes: sapw_freeMotion keeps them so). The
 * sleeping trees of ta (NULL: none; only with contiguous trees) are skipped: their blocks
 * are left as they are */
SAP_HD void SAPT(sapw_crb)(const sapModel* m, const sreal* cinert, const double* cdof,
                           sreal* crb, sreal* M, int contiguous, const int* ta, const int* radr) {
  int nv = m->nv;
  for (int b = 0; b < m->nbody; b++)
    if (!sapw_treeSleeps(ta, m->body_treeid[b]))
      for (int k = 0; k < 10; k++) crb[10 * b + k] = cinert[10 * b + k];
  for (int b = m->nbody - 1; b > 0; b--) {
    int p = m->body_parentid[b];
    if (p > 0 && !sapw_treeSleeps(ta, m->body_treeid[b]))
      for (int k = 0; k < 10; k++) crb[10 * p + k] += crb[10 * b + k];
  }
  for (int t0 = 0, t1; t0 < nv; t0 = t1) {
    t1 = SAPT(sapw_treeEnd)(m, t0, contiguous);
    // a chain's entries are all written by sapw_crbColumn: no zeros to lay first
    if (sapw_treeSleeps(ta, m->dof_treeid[t0]) || SAPT(sapw_treeIsChain)(m, t0, t1)) continue;
    for (int i = t0; i < t1; i++) {
      sreal* Mi = SAPT(sapw_mrow)(M, radr, nv, i);
      for (int j = t0; j < t1; j++) Mi[j] = 0;
    }
  }
  for (int i = 0; i < nv; i++)
    if (!sapw_treeSleeps(ta, m->dof_treeid[i])) SAPT(sapw_crbColumn)(m, crb, cdof, i, M, radr);
}

/* the world's frames a spatial tendon reads (kernels/tendon.h): body frames, cref, cdof */
typedef struct { const double *xpos, *xmat, *cref, *cdof; } SAPT(sapTenFrames);

/* tendon armature (MuJoCo 4's mj_tendonArmature): M += a J'J on M's entries between a dof and
 * its ancestors only (those lie in one tree's diagonal block; the couplings of two branches or
 * two trees are not in MuJoCo's sparse M). Fixed tendons: J is the constant coefficients
 * (sapw_tendonArmaturePair). Spatial tendons (tenJ, tenbias: nv doubles each, or NULL when
 * none has armature): J at this pose into tenJ, M[i][j] += (a J_i) J_j, and MuJoCo 4's bias
 * (mj_tendonBias) tenbias = sum_t a_t (dJ_t/dt qvel) J_t (sapt_spatialDot), which the caller
 * adds to qfrc_bias after RNE. The dofs of the sleeping trees of ta (NULL: none) are skipped
 * (a tendon spans one tree under sleep: the loader refuses more) */
SAP_HD void SAPT(sapw_tendonArmature)(const sapModel* m, const SAPT(sapTenFrames)* fr, const double* qvel,
                                      const int* ta, double* tenJ, double* tenbias, sreal* M, const int* radr) {
  int nv = m->nv;
  if (tenbias)
    for (int i = 0; i < nv; i++) tenbias[i] = 0;
  for (int t = 0; t < m->ntendon; t++) {
    double arm = m->tendon_armature[t];
    if (arm == 0) continue;
    if (!m->tendon_spatial[t]) {
      for (int u = m->tendon_adr[t]; u < m->tendon_adr[t] + m->tendon_num[t]; u++)
        for (int w = m->tendon_adr[t]; w < m->tendon_adr[t] + m->tendon_num[t]; w++) {
          int i, j;
          double a = sapw_tendonArmaturePair(m, t, u, w, &i, &j);
          if (a != 0) SAPT(sapw_mrow)(M, radr, nv, i)[j] += (sreal)a;
        }
      continue;
    }
    if (!tenJ) continue;  // not reached: the carve gives both arrays with a spatial tendon's armature
    for (int i = 0; i < nv; i++) tenJ[i] = 0;
    sapTenSink k = sapt_sink();
    k.c = 1;
    k.dense = tenJ;
    sapt_spatial(m, fr->xpos, fr->xmat, fr->cref, fr->cdof, t, &k);
    double coef = arm * sapt_spatialDot(m, fr->xpos, fr->xmat, fr->cref, fr->cdof, qvel, t);
    for (int i = 0; i < nv; i++) {
      if (tenJ[i] == 0 || sapw_treeSleeps(ta, m->dof_treeid[i])) continue;
      tenbias[i] += coef * tenJ[i];
      double ai = arm * tenJ[i];
      for (int j = i; j >= 0; j = m->dof_parentid[j]) {  // row i's entries: i and its ancestors
        sreal c = (sreal)(ai * tenJ[j]);
        SAPT(sapw_mrow)(M, radr, nv, i)[j] += c;
        if (j != i) SAPT(sapw_mrow)(M, radr, nv, j)[i] += c;
      }
    }
  }
}

/* RNE's forward pass: body velocities and accelerations (zero joint accelerations, the
 * base accelerating at -g), in tree order; none for the sleeping trees of ta (NULL: none) */
SAP_HD void SAPT(sapw_rneVelocity)(const sapModel* m, const double* qvel, const double* cdof,
                                   sreal* cvel, sreal* cacc, const int* ta) {
  for (int k = 0; k < 6; k++) cvel[k] = cacc[k] = 0;
  for (int k = 0; k < 3; k++) cacc[3 + k] = (sreal)-m->gravity[k];

  for (int b = 1; b < m->nbody; b++) {
    if (sapw_treeSleeps(ta, m->body_treeid[b])) continue;
    int p = m->body_parentid[b];
    sreal* v = cvel + 6 * b;
    sreal* a = cacc + 6 * b;
    for (int k = 0; k < 6; k++) { v[k] = cvel[6 * p + k]; a[k] = cacc[6 * p + k]; }
    /* cdof_dot = cvel x cdof; the 3 rotations of a ball/free joint share one cvel
     * (MuJoCo's mj_comVel); a free joint's translations have cdof_dot = 0 */
    for (int j = m->body_jntadr[b]; j < m->body_jntadr[b] + m->body_jntnum[b]; j++) {
      int d = m->jnt_dofadr[j], type = m->jnt_type[j], nrot = 1;
      sreal s[6], sdot[6], vbefore[6];
      if (type == SAP_JNT_FREE) {
        for (int i = d; i < d + 3; i++)
          for (int k = 0; k < 6; k++) v[k] += (sreal)cdof[6 * i + k] * (sreal)qvel[i];
        d += 3;
      }
      if (type == SAP_JNT_FREE || type == SAP_JNT_BALL) nrot = 3;
      for (int k = 0; k < 6; k++) vbefore[k] = v[k];
      for (int i = d; i < d + nrot; i++) {
        sreal qd = (sreal)qvel[i];
        for (int k = 0; k < 6; k++) s[k] = (sreal)cdof[6 * i + k];
        SAPT(sapu_crossMotion)(sdot, vbefore, s);
        for (int k = 0; k < 6; k++) {
          a[k] += sdot[k] * qd;
          v[k] += s[k] * qd;
        }
      }
    }
  }
}

/* body b's force f = I a + v x* (I v), less its gravity compensation */
SAP_HD void SAPT(sapw_rneBodyForce)(const sapModel* m, int b, const sreal* cinert, const sreal* cvel,
                                    const sreal* cacc, sreal* cfrc) {
  sreal Ia[6], Iv[6], vIv[6];
  SAPT(sapu_mulInertVec)(Ia, cinert + 10 * b, cacc + 6 * b);
  SAPT(sapu_mulInertVec)(Iv, cinert + 10 * b, cvel + 6 * b);
  SAPT(sapu_crossForce)(vIv, cvel + 6 * b, Iv);
  for (int k = 0; k < 6; k++) cfrc[6 * b + k] = Ia[k] + vIv[k];
  /* gravity compensation: the force -gc m g at the com cancels gc of the weight,
   * the part of I a that the base acceleration -g put there (MuJoCo's mj_gravcomp) */
  sreal gc = (sreal)m->body_gravcomp[b];
  if (gc != 0) {
    sreal ag[6] = {0, 0, 0, (sreal)-m->gravity[0], (sreal)-m->gravity[1], (sreal)-m->gravity[2]};
    SAPT(sapu_mulInertVec)(Ia, cinert + 10 * b, ag);
    for (int k = 0; k < 6; k++) cfrc[6 * b + k] -= gc * Ia[k];
  }
}

/* generalized bias of dof i: cdof_i . (force of the subtree of its body) */
SAP_HD double SAPT(sapw_rneProject)(const sapModel* m, int i, const double* cdof, const sreal* cfrc) {
  sreal s[6];
  for (int k = 0; k < 6; k++) s[k] = (sreal)cdof[6 * i + k];
  return (double)SAPT(sapu_dot6)(s, cfrc + 6 * m->dof_bodyid[i]);
}

/* recursive Newton-Euler with zero acceleration: bias c(q, v) including gravity; the
 * sleeping trees of ta (NULL: none) keep their qfrc_bias (MuJoCo 4's mj_rne) */
SAP_HD void SAPT(sapw_rne)(const sapModel* m, const double* qvel, const sreal* cinert,
                           const double* cdof, sreal* cvel, sreal* cacc, sreal* cfrc,
                           double* qfrc_bias, const int* ta) {
  SAPT(sapw_rneVelocity)(m, qvel, cdof, cvel, cacc, ta);
  /* body forces, accumulated towards the root */
  for (int k = 0; k < 6; k++) cfrc[k] = 0;
  for (int b = 1; b < m->nbody; b++)
    if (!sapw_treeSleeps(ta, m->body_treeid[b])) SAPT(sapw_rneBodyForce)(m, b, cinert, cvel, cacc, cfrc);
  for (int b = m->nbody - 1; b > 0; b--) {
    int p = m->body_parentid[b];
    if (p > 0 && !sapw_treeSleeps(ta, m->body_treeid[b]))
      for (int k = 0; k < 6; k++) cfrc[6 * p + k] += cfrc[6 * b + k];
  }
  for (int i = 0; i < m->nv; i++)
    if (!sapw_treeSleeps(ta, m->dof_treeid[i])) qfrc_bias[i] = SAPT(sapw_rneProject)(m, i, cdof, cfrc);
}

/* ---- forces ----------------------------------------------------------------- */

/* fixed tendon t's length and velocity: sums of coef q and coef qdot over its joints */
SAP_HD void SAPT(sapw_fixedTendonState)(const sapModel* m, const double* qpos, const double* qvel, int t,
                                        double* len, double* vel) {
  *len = *vel = 0;
  for (int w = m->tendon_adr[t]; w < m->tendon_adr[t] + m->tendon_num[t]; w++) {
    int jt = m->wrap_jnt[w];
    *len += m->wrap_coef[w] * qpos[m->jnt_qposadr[jt]];
    *vel += m->wrap_coef[w] * qvel[m->jnt_dofadr[jt]];
  }
}

/* tendon t's length and velocity J qdot, fixed or spatial (f: the world's frames) */
SAP_HD void SAPT(sapw_tendonState)(const sapModel* m, const double* qpos, const double* qvel,
                                   const SAPT(sapTenFrames)* f, int t, double* len, double* vel) {
  if (!m->tendon_spatial[t]) {
    SAPT(sapw_fixedTendonState)(m, qpos, qvel, t, len, vel);
    return;
  }
  sapTenSink k = sapt_sink();
  k.v = qvel;
  *len = sapt_spatial(m, f->xpos, f->xmat, f->cref, f->cdof, t, &k);
  *vel = k.jv;
}

/* x += c J^T for tendon t (a generalized force c along the tendon), x in double or, with
 * xf, in float */
SAP_HD void SAPT(sapw_tendonForce)(const sapModel* m, const SAPT(sapTenFrames)* f, int t, double c, double* x,
                                   float* xf) {
  if (!m->tendon_spatial[t]) {
    for (int w = m->tendon_adr[t]; w < m->tendon_adr[t] + m->tendon_num[t]; w++) {
      int dof = m->jnt_dofadr[m->wrap_jnt[w]];
      if (x) x[dof] += m->wrap_coef[w] * c;
      if (xf) xf[dof] += (float)(m->wrap_coef[w] * c);
    }
    return;
  }
  sapTenSink k = sapt_sink();
  k.c = c;
  k.dense = x;
  k.densef = xf;
  sapt_spatial(m, f->xpos, f->xmat, f->cref, f->cdof, t, &k);
}

/* a tendon spring's stretch beyond its dead band [lengthspring0, lengthspring1] (0 inside) */
SAP_HD double SAPT(sapw_tendonStretch)(const sapModel* m, int t, double len) {
  double lo = m->tendon_lengthspring[2 * t], hi = m->tendon_lengthspring[2 * t + 1];
  return len > hi ? len - hi : len < lo ? len - lo : 0;
}

/* joint springs (explicit; kernels/spring.h, with MuJoCo 4's higher-order terms) and damping
 * at v_n (the implicit part is h D in A); tendon springs (dead band [lengthspring0,
 * lengthspring1]) and dampers, fixed and spatial, explicit as in MuJoCo's Euler step
 * (mj_springdamper: tendon force J' f) */
SAP_HD void SAPT(sapw_passive)(const sapModel* m, const double* qpos, const double* qvel,
                               const SAPT(sapTenFrames)* fr, double* qfrc_passive) {
  for (int i = 0; i < m->nv; i++)
    qfrc_passive[i] = sapw_damperForce(m->dof_damping[i], m->dof_dampingpoly + SAP_NPOLY * i, qvel[i]);
  for (int j = 0; j < m->njnt; j++) {
    int t = m->jnt_type[j];
    const double* poly = m->jnt_stiffnesspoly + SAP_NPOLY * j;
    if (!sapw_hasSpring(m->jnt_stiffness[j], poly)) continue;
    int a = m->jnt_qposadr[j];
    if (t == SAP_JNT_HINGE || t == SAP_JNT_SLIDE)
      qfrc_passive[m->jnt_dofadr[j]] += sapw_springForce(m->jnt_stiffness[j], poly, qpos[a] - m->qpos_spring[a]);
    else  // ball and free joints: the quaternion difference (and a free joint's translation)
      sapw_ballSpringAdd(t == SAP_JNT_FREE, m->jnt_stiffness[j], poly, qpos + a, m->qpos_spring + a,
                         qfrc_passive + m->jnt_dofadr[j]);
  }
  for (int t = 0; t < m->ntendon; t++) {
    double k = m->tendon_stiffness[t], c = m->tendon_damping[t];
    const double* poly = m->tendon_stiffnesspoly + SAP_NPOLY * t;
    const double* dpoly = m->tendon_dampingpoly + SAP_NPOLY * t;
    if (!sapw_hasSpring(k, poly) && !sapw_hasSpring(c, dpoly)) continue;
    double len, vel;
    SAPT(sapw_tendonState)(m, qpos, qvel, fr, t, &len, &vel);
    double f = sapw_springForce(k, poly, SAPT(sapw_tendonStretch)(m, t, len)) + sapw_damperForce(c, dpoly, vel);
    SAPT(sapw_tendonForce)(m, fr, t, f, qfrc_passive, (float*)0);
  }
}

/* Under the midpoint rule (q' = q + h (v + v')/2, kernels/integrate.h) springs act at
 * q + h/2 v instead of q: adds spring(q + hs v) - spring(q) to x (hs = h/2) for joint and
 * tendon springs (a tendon's length to first order, L + hs Ldot). For a linear spring of
 * frequency w the step's amplification matrix then has determinant 1 (|eigenvalues| = 1 while
 * w h < 2, as in semi-implicit Euler); with the spring at q its determinant is 1 + (w h)^2/2
 * and the oscillation grows every step. */
SAP_HD void SAPT(sapw_springShift)(const sapModel* m, const double* qpos, const double* qvel,
                                   const SAPT(sapTenFrames)* fr, double hs, SAP_REAL* x) {
  for (int j = 0; j < m->njnt; j++) {
    int t = m->jnt_type[j];
    const double* poly = m->jnt_stiffnesspoly + SAP_NPOLY * j;
    if ((t == SAP_JNT_BALL || t == SAP_JNT_FREE) && sapw_hasSpring(m->jnt_stiffness[j], poly)) {
      // the force's difference at q + hs v (the quaternion rotated by hs w in the body frame)
      int a = m->jnt_qposadr[j], dof = m->jnt_dofadr[j], free = t == SAP_JNT_FREE, nd = free ? 6 : 3;
      double q1[7], f[6] = {0, 0, 0, 0, 0, 0};
      for (int k = 0; k < nd + 1; k++) q1[k] = qpos[a + k];
      for (int k = 0; k < 3 && free; k++) q1[k] += hs * qvel[dof + k];
      sapw_quatRotate(q1 + (free ? 3 : 0), qvel + dof + (free ? 3 : 0), hs);
      sapw_ballSpringAdd(free, m->jnt_stiffness[j], poly, q1, m->qpos_spring + a, f);
      for (int k = 0; k < nd; k++) f[k] = -f[k];
      sapw_ballSpringAdd(free, m->jnt_stiffness[j], poly, qpos + a, m->qpos_spring + a, f);
      for (int k = 0; k < nd; k++) x[dof + k] -= (SAP_REAL)f[k];
    }
    if ((t == SAP_JNT_HINGE || t == SAP_JNT_SLIDE) && sapw_hasSpring(m->jnt_stiffness[j], poly)) {
      int dof = m->jnt_dofadr[j];
      if (sapw_hasSpring(0, poly)) {  // nonlinear: the force's difference
        double x0 = qpos[m->jnt_qposadr[j]] - m->qpos_spring[m->jnt_qposadr[j]];
        x[dof] += (SAP_REAL)(sapw_springForce(m->jnt_stiffness[j], poly, x0 + hs * qvel[dof]) -
                             sapw_springForce(m->jnt_stiffness[j], poly, x0));
      } else {
        x[dof] -= (SAP_REAL)(m->jnt_stiffness[j] * hs * qvel[dof]);
      }
    }
  }
  for (int t = 0; t < m->ntendon; t++) {
    double k = m->tendon_stiffness[t];
    const double* poly = m->tendon_stiffnesspoly + SAP_NPOLY * t;
    if (!sapw_hasSpring(k, poly)) continue;
    double len, vel;
    SAPT(sapw_tendonState)(m, qpos, qvel, fr, t, &len, &vel);
    double s1 = SAPT(sapw_tendonStretch)(m, t, len + hs * vel), s0 = SAPT(sapw_tendonStretch)(m, t, len);
    double df = sapw_hasSpring(0, poly) ? sapw_springForce(k, poly, s1) - sapw_springForce(k, poly, s0) : -k * (s1 - s0);
    if (sizeof(SAP_REAL) == sizeof(float)) SAPT(sapw_tendonForce)(m, fr, t, df, (double*)0, (float*)x);
    else SAPT(sapw_tendonForce)(m, fr, t, df, (double*)x, (float*)0);
  }
}

/* a world wrench (torque t, force f) acting at point x of body b, added to qfrc through the
 * dofs of b and its ancestors (J^T [t; f], MuJoCo's mj_applyFT): the spatial force about
 * cref_b, [t + (x - cref_b) x f; f], dotted with each motion subspace cdof_i */
SAP_HD void SAPT(sapw_applyWrench)(const sapModel* m, int b, const double* x, const double* t,
                                   const double* f, const double* cref, const double* cdof, double* qfrc) {
  double r[3] = {x[0] - cref[3 * b], x[1] - cref[3 * b + 1], x[2] - cref[3 * b + 2]};
  double F[6] = {t[0] + r[1] * f[2] - r[2] * f[1], t[1] + r[2] * f[0] - r[0] * f[2],
                 t[2] + r[0] * f[1] - r[1] * f[0], f[0], f[1], f[2]};
  for (int p = b; p > 0; p = m->body_parentid[p])
    for (int i = m->body_dofadr[p]; i < m->body_dofadr[p] + m->body_dofnum[p]; i++)
      for (int k = 0; k < 6; k++) qfrc[i] += cdof[6 * i + k] * F[k];
}

/* MuJoCo's ellipsoid fluid model for the geoms of body b (mj_ellipsoidFluidModel, MuJoCo's
 * engine_passive.c; its documentation's "ellipsoid model"): each geom with a nonzero
 * interaction coefficient (geom_fluid[0]) is the ellipsoid of its semi-axes (sphere r r r,
 * capsule r r r+h, cylinder r r h, others size) moving with angular velocity w and linear
 * velocity v at its origin relative to the wind, both in its own frame. Forces (fluid density
 * rho, viscosity mu): added mass (virtual mass and inertia, geom_fluid[6..11]), Magnus lift
 * rho V C_M w x v, Kutta lift from the circulation about the projected area, Stokes drag of the
 * sphere of diameter D = 2 (a+b+c)/3 plus quadratic blunt and slender drag, and angular drag;
 * the wrench, scaled by the interaction coefficient, acts at the geom origin (J^T). fp64. */
SAP_HD void SAPT(sapw_fluidEllipsoid)(const sapModel* m, int b, const double* qvel, const double* xpos,
                                      const double* xmat, const double* cref, const double* cdof,
                                      double* qfrc) {
  const double pi = 3.14159265358979323846, rho = m->fluid_density, mu = m->fluid_viscosity;
  double cv[6] = {0, 0, 0, 0, 0, 0};
  for (int p = b; p > 0; p = m->body_parentid[p])
    for (int i = m->body_dofadr[p]; i < m->body_dofadr[p] + m->body_dofnum[p]; i++)
      for (int k = 0; k < 6; k++) cv[k] += cdof[6 * i + k] * qvel[i];
  const double* Rb = xmat + 9 * b;
  for (int g = m->body_geomadr[b]; g < m->body_geomadr[b] + m->body_geomnum[b]; g++) {
    const double* fl = m->geom_fluid + 12 * g;
    if (fl[0] == 0) continue;
    /* the geom's frame: origin x = xpos_b + Rb gpos, axes R = Rb Rg (rows of Rg from its quat) */
    const double* gp = m->geom_pos + 3 * g;
    const double* q = m->geom_quat + 4 * g;
    double Rg[9] = {q[0] * q[0] + q[1] * q[1] - q[2] * q[2] - q[3] * q[3], 2 * (q[1] * q[2] - q[0] * q[3]),
                    2 * (q[1] * q[3] + q[0] * q[2]), 2 * (q[1] * q[2] + q[0] * q[3]),
                    q[0] * q[0] - q[1] * q[1] + q[2] * q[2] - q[3] * q[3], 2 * (q[2] * q[3] - q[0] * q[1]),
                    2 * (q[1] * q[3] - q[0] * q[2]), 2 * (q[2] * q[3] + q[0] * q[1]),
                    q[0] * q[0] - q[1] * q[1] - q[2] * q[2] + q[3] * q[3]};
    double x[3], R[9], r[3], v[3], w[3], lv[3], sz[3];
    for (int i = 0; i < 3; i++) {
      x[i] = xpos[3 * b + i] + Rb[3 * i] * gp[0] + Rb[3 * i + 1] * gp[1] + Rb[3 * i + 2] * gp[2];
      for (int j = 0; j < 3; j++)
        R[3 * i + j] = Rb[3 * i] * Rg[j] + Rb[3 * i + 1] * Rg[3 + j] + Rb[3 * i + 2] * Rg[6 + j];
      r[i] = x[i] - cref[3 * b + i];
    }
    double vw[3] = {cv[3] + cv[1] * r[2] - cv[2] * r[1] - m->wind[0], cv[4] + cv[2] * r[0] - cv[0] * r[2] - m->wind[1],
                    cv[5] + cv[0] * r[1] - cv[1] * r[0] - m->wind[2]};
    for (int k = 0; k < 3; k++) {
      w[k] = R[k] * cv[0] + R[3 + k] * cv[1] + R[6 + k] * cv[2];
      lv[k] = R[k] * vw[0] + R[3 + k] * vw[1] + R[6 + k] * vw[2];
    }
    for (int k = 0; k < 3; k++) v[k] = lv[k];
    /* semi-axes (mju_geomSemiAxes) */
    const double* s = m->geom_size + 3 * g;
    int type = m->geom_type[g];
    sz[0] = s[0];
    sz[1] = type == SAP_GEOM_SPHERE || type == SAP_GEOM_CAPSULE || type == SAP_GEOM_CYLINDER ? s[0] : s[1];
    sz[2] = type == SAP_GEOM_SPHERE ? s[0] : type == SAP_GEOM_CAPSULE ? s[1] + s[0]
            : type == SAP_GEOM_CYLINDER ? s[1] : s[2];
    double f[6] = {0, 0, 0, 0, 0, 0};  // torque, force in the geom frame
    /* added mass: p = rho m_v v, L = rho I_v w; torque p x v + L x w, force p x w */
    double pm[3], L[3];
    for (int k = 0; k < 3; k++) {
      pm[k] = rho * fl[6 + k] * v[k];
      L[k] = rho * fl[9 + k] * w[k];
    }
    for (int k = 0; k < 3; k++) {
      int k1 = (k + 1) % 3, k2 = (k + 2) % 3;
      f[k] += pm[k1] * v[k2] - pm[k2] * v[k1] + L[k1] * w[k2] - L[k2] * w[k1];
      f[3 + k] += pm[k1] * w[k2] - pm[k2] * w[k1];
    }
    /* lift and drag (mj_viscousForces) */
    double vol = 4.0 / 3.0 * pi * sz[0] * sz[1] * sz[2];
    double dmax = fmax(fmax(sz[0], sz[1]), sz[2]), dmin = fmin(fmin(sz[0], sz[1]), sz[2]);
    double dmid = sz[0] + sz[1] + sz[2] - dmax - dmin, Amax = pi * dmax * dmid;
    double bc[3] = {sz[1] * sz[2], sz[2] * sz[0], sz[0] * sz[1]};
    double den = 0, num = 0, nrm[3], speed = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    for (int k = 0; k < 3; k++) {
      double b2 = bc[k] * bc[k];
      den += b2 * b2 * v[k] * v[k];
      num += b2 * v[k] * v[k];
      nrm[k] = b2 * v[k];
    }
    const double minval = 1e-15;  // mjMINVAL
    double Aproj = pi * sqrt(den / fmax(minval, num));
    double cosa = num / fmax(minval, speed * den);
    double circ[3], kutta[3], magnus[3];
    for (int k = 0; k < 3; k++) {
      int k1 = (k + 1) % 3, k2 = (k + 2) % 3;
      magnus[k] = (w[k1] * v[k2] - w[k2] * v[k1]) * fl[5] * rho * vol;
      circ[k] = (nrm[k1] * v[k2] - nrm[k2] * v[k1]) * fl[4] * rho * cosa * Aproj;
    }
    for (int k = 0; k < 3; k++) {
      int k1 = (k + 1) % 3, k2 = (k + 2) % 3;
      kutta[k] = circ[k1] * v[k2] - circ[k2] * v[k1];
    }
    double D = 2.0 / 3.0 * (sz[0] + sz[1] + sz[2]);
    double Imax = 8.0 / 15.0 * pi * dmid * dmax * dmax * dmax * dmax, mom[3];
    for (int k = 0; k < 3; k++) {
      double e = fmax(sz[(k + 1) % 3], sz[(k + 2) % 3]);
      double Ik = 8.0 / 15.0 * pi * sz[k] * e * e * e * e;
      mom[k] = w[k] * (fl[3] * Ik + fl[2] * (Imax - Ik));
    }
    double dlin = mu * 3 * pi * D + rho * speed * (Aproj * fl[1] + fl[2] * (Amax - Aproj));
    double dang = mu * pi * D * D * D + rho * sqrt(mom[0] * mom[0] + mom[1] * mom[1] + mom[2] * mom[2]);
    for (int k = 0; k < 3; k++) {
      f[k] -= dang * w[k];
      f[3 + k] += magnus[k] + kutta[k] - dlin * v[k];
    }
    double F[6];
    for (int k = 0; k < 3; k++) {
      F[k] = fl[0] * (R[3 * k] * f[0] + R[3 * k + 1] * f[1] + R[3 * k + 2] * f[2]);
      F[3 + k] = fl[0] * (R[3 * k] * f[3] + R[3 * k + 1] * f[4] + R[3 * k + 2] * f[5]);
    }
    SAPT(sapw_applyWrench)(m, b, x, F, F + 3, cref, cdof, qfrc);
  }
}

/* MuJoCo's fluid forces (mj_fluid): a body with a geom on the ellipsoid model takes
 * sapw_fluidEllipsoid, the others the inertia-box model: body b of mass m and principal inertia
 * I is the box of sides s_k = sqrt(6 (I_j + I_l - I_k) / m) moving with angular velocity w and com
 * velocity v relative to the wind, both in its inertial frame. Viscosity mu: the Stokes drag
 * of the sphere of diameter D = (s_0 + s_1 + s_2) / 3, torque -pi D^3 mu w and force
 * -3 pi D mu v; density rho: quadratic drag force_k = -rho/2 s_j s_l |v_k| v_k and torque_k =
 * -rho s_k (s_j^4 + s_l^4) |w_k| w_k / 64. The wrench acts at the com and is added to qfrc
 * through the dofs of b and its ancestors (J^T). All in fp64, as the other passive forces.
 * body velocity: cvel_b = sum over those dofs of cdof_i qvel_i (about cref_b, MuJoCo's cvel) */
SAP_HD void SAPT(sapw_fluid)(const sapModel* m, const double* qvel, const double* xpos, const double* xmat,
                             const double* xipos, const double* ximat, const double* cref, const double* cdof,
                             double* qfrc) {
  double rho = m->fluid_density, mu = m->fluid_viscosity;
  if (!(rho > 0) && !(mu > 0)) return;
  for (int b = 1; b < m->nbody; b++) {
    double mass = m->body_mass[b];
    if (mass < 1e-15) continue;
    int ellipsoid = 0;
    for (int g = m->body_geomadr[b]; g < m->body_geomadr[b] + m->body_geomnum[b]; g++)
      ellipsoid |= m->geom_fluid[12 * g] > 0;
    if (ellipsoid) {
      SAPT(sapw_fluidEllipsoid)(m, b, qvel, xpos, xmat, cref, cdof, qfrc);
      continue;
    }
    const double* in = m->body_inertia + 3 * b;
    const double* R = ximat + 9 * b;  // row-major: columns are the inertial axes
    double s[3], cv[6] = {0, 0, 0, 0, 0, 0}, r[3], v[3], lw[3], lv[3], lt[3], lf[3], F[6];
    for (int k = 0; k < 3; k++) {
      double e = in[(k + 1) % 3] + in[(k + 2) % 3] - in[k];
      s[k] = sqrt((e > 1e-15 ? e : 1e-15) / mass * 6);
    }
    for (int p = b; p > 0; p = m->body_parentid[p])
      for (int i = m->body_dofadr[p]; i < m->body_dofadr[p] + m->body_dofnum[p]; i++)
        for (int k = 0; k < 6; k++) cv[k] += cdof[6 * i + k] * qvel[i];
    for (int k = 0; k < 3; k++) r[k] = xipos[3 * b + k] - cref[3 * b + k];
    v[0] = cv[3] + cv[1] * r[2] - cv[2] * r[1] - m->wind[0];
    v[1] = cv[4] + cv[2] * r[0] - cv[0] * r[2] - m->wind[1];
    v[2] = cv[5] + cv[0] * r[1] - cv[1] * r[0] - m->wind[2];
    for (int k = 0; k < 3; k++) {
      lw[k] = R[k] * cv[0] + R[3 + k] * cv[1] + R[6 + k] * cv[2];
      lv[k] = R[k] * v[0] + R[3 + k] * v[1] + R[6 + k] * v[2];
    }
    double D = (s[0] + s[1] + s[2]) / 3, pi = 3.14159265358979323846;
    for (int k = 0; k < 3; k++) {
      lt[k] = -pi * D * D * D * mu * lw[k];
      lf[k] = -3 * pi * D * mu * lv[k];
      double sj = s[(k + 1) % 3], sl = s[(k + 2) % 3];
      lf[k] -= 0.5 * rho * sj * sl * fabs(lv[k]) * lv[k];
      lt[k] -= rho * s[k] * (sj * sj * sj * sj + sl * sl * sl * sl) * fabs(lw[k]) * lw[k] / 64;
    }
    // the wrench in the world frame, at the com
    for (int k = 0; k < 3; k++) {
      F[k] = R[3 * k] * lt[0] + R[3 * k + 1] * lt[1] + R[3 * k + 2] * lt[2];
      F[3 + k] = R[3 * k] * lf[0] + R[3 * k + 1] * lf[1] + R[3 * k + 2] * lf[2];
    }
    SAPT(sapw_applyWrench)(m, b, xipos + 3 * b, F, F + 3, cref, cdof, qfrc);
  }
}

/* a rotation matrix's unit quaternion (w, x, y, z), up to sign (Shepperd: the largest of
 * 4w^2, 4x^2, 4y^2, 4z^2 picks the divisor); R row-major */
SAP_HD void SAPT(sapw_mat2Quat)(const double* R, double* q) {
  double tr = R[0] + R[4] + R[8];
  if (tr >= R[0] && tr >= R[4] && tr >= R[8]) {
    double s = 2 * sqrt(1 + tr);
    q[0] = s / 4; q[1] = (R[7] - R[5]) / s; q[2] = (R[2] - R[6]) / s; q[3] = (R[3] - R[1]) / s;
  } else if (R[0] >= R[4] && R[0] >= R[8]) {
    double s = 2 * sqrt(1 + R[0] - R[4] - R[8]);
    q[0] = (R[7] - R[5]) / s; q[1] = s / 4; q[2] = (R[1] + R[3]) / s; q[3] = (R[2] + R[6]) / s;
  } else if (R[4] >= R[8]) {
    double s = 2 * sqrt(1 + R[4] - R[0] - R[8]);
    q[0] = (R[2] - R[6]) / s; q[1] = (R[1] + R[3]) / s; q[2] = s / 4; q[3] = (R[5] + R[7]) / s;
  } else {
    double s = 2 * sqrt(1 + R[8] - R[0] - R[4]);
    q[0] = (R[3] - R[1]) / s; q[1] = (R[2] + R[6]) / s; q[2] = (R[5] + R[7]) / s; q[3] = s / 4;
  }
}

/* quaternion product a b (w, x, y, z) */
SAP_HD void SAPT(sapw_quatMulD)(const double* a, const double* b, double* r) {
  r[0] = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
  r[1] = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
  r[2] = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
  r[3] = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
}

/* body a is b or one of b's ancestors */
SAP_HD int SAPT(sapw_isAncestor)(const sapModel* m, int a, int b) {
  for (; b > 0; b = m->body_parentid[b])
    if (b == a) return 1;
  return a == 0;
}

/* a site (local pos p, quat q on body b) in the world: position x, rotation R (row-major) */
SAP_HD void SAPT(sapw_siteFrame)(const double* xpos, const double* xmat, int b, const double* p,
                                 const double* q, double* x, double* R) {
  double Rs[9] = {1 - 2 * (q[2] * q[2] + q[3] * q[3]), 2 * (q[1] * q[2] - q[0] * q[3]), 2 * (q[1] * q[3] + q[0] * q[2]),
                  2 * (q[1] * q[2] + q[0] * q[3]), 1 - 2 * (q[1] * q[1] + q[3] * q[3]), 2 * (q[2] * q[3] - q[0] * q[1]),
                  2 * (q[1] * q[3] - q[0] * q[2]), 2 * (q[2] * q[3] + q[0] * q[1]), 1 - 2 * (q[1] * q[1] + q[2] * q[2])};
  const double* Rb = xmat + 9 * b;
  for (int r = 0; r < 3; r++) {
    x[r] = xpos[3 * b + r] + Rb[3 * r] * p[0] + Rb[3 * r + 1] * p[1] + Rb[3 * r + 2] * p[2];
    for (int c = 0; c < 3; c++) R[3 * r + c] = Rb[3 * r] * Rs[c] + Rb[3 * r + 1] * Rs[3 + c] + Rb[3 * r + 2] * Rs[6 + c];
  }
}

/* the site's orientation xquat * site_quat as MuJoCo 4.0.0's library forms it (the source
 * mirror's mj_transmission reads site_quat * xquat; tests/test_refsite.c shows 4.0.0 is
 * the frame product), xquat recovered from xmat up to a sign the rotation vector ignores */
SAP_HD void SAPT(sapw_refsiteQuat)(const double* xmat, int b, const double* q, double* out) {
  double xq[4];
  SAPT(sapw_mat2Quat)(xmat + 9 * b, xq);
  SAPT(sapw_quatMulD)(xq, q, out);
}

/* Cartesian (refsite) transmission of actuator i, MuJoCo's mjTRN_SITE with refsite
 * (mj_transmission). Site s (body bs, position p_s, quat q_s), refsite r (body br):
 *   len = g_t . R_r'(p_s - p_r) + g_r . subQuat(q_s, q_r)   (each term only if its gear is nonzero)
 *   moment_j = c_j . [T + (p_s - cref) x F; F] on the site's chain - the same at p_r on the
 *   refsite's chain, 0 on the dofs of both (common ancestors: MuJoCo clears those columns),
 *   F = R_r g_t, T = R_r g_r (MuJoCo's approximation: R_r's own motion is not differentiated).
 * vel (qvel non-NULL) = moment . qvel; qfrc (non-NULL) += f moment; row (non-NULL): the moment
 * (a servo's SAP drive row, sapw_buildDrives; *ok = 0 when it does not fit) */
SAP_HD void SAPT(sapw_refsite)(const sapModel* m, const SAPT(sapTenFrames)* fr, int i, const double* qvel,
                               double f, double* qfrc, double* len, double* vel, sapRow* row, int* ok) {
  const double* st = m->actuator_site + 13 * i;  // pos, quat, gear[6]
  const double* rs = m->actuator_refsite + 7 * i;
  const double *gt = st + 7, *gr = st + 10;
  int bs = m->actuator_sitebody[i], br = m->actuator_refbody[i];
  double ps[3], Rsw[9], pr[3], Rr[9];
  SAPT(sapw_siteFrame)(fr->xpos, fr->xmat, bs, st, st + 3, ps, Rsw);
  SAPT(sapw_siteFrame)(fr->xpos, fr->xmat, br, rs, rs + 3, pr, Rr);
  int ht = gt[0] != 0 || gt[1] != 0 || gt[2] != 0, hr = gr[0] != 0 || gr[1] != 0 || gr[2] != 0;
  double l = 0, F[3] = {0, 0, 0}, T[3] = {0, 0, 0};
  if (ht) {
    double d[3] = {ps[0] - pr[0], ps[1] - pr[1], ps[2] - pr[2]};
    for (int k = 0; k < 3; k++) {
      l += (Rr[k] * d[0] + Rr[3 + k] * d[1] + Rr[6 + k] * d[2]) * gt[k];
      F[k] = Rr[3 * k] * gt[0] + Rr[3 * k + 1] * gt[1] + Rr[3 * k + 2] * gt[2];
    }
  }
  if (hr) {
    // subQuat: qdif = conj(q_r) q_s, rotation vector axis * 2 atan2(|xyz|, w) (wrapped to <= pi)
    double qs[4], qr[4], qd[4];
    SAPT(sapw_refsiteQuat)(fr->xmat, bs, st + 3, qs);
    SAPT(sapw_refsiteQuat)(fr->xmat, br, rs + 3, qr);
    qr[1] = -qr[1]; qr[2] = -qr[2]; qr[3] = -qr[3];
    SAPT(sapw_quatMulD)(qr, qs, qd);
    double sn = sqrt(qd[1] * qd[1] + qd[2] * qd[2] + qd[3] * qd[3]);
    double a = 2 * atan2(sn, qd[0]), pi = 3.14159265358979323846;
    if (a > pi) a -= 2 * pi;
    double sc = sn > 1e-15 ? a / sn : 0;  // mju_normalize3: a zero axis stays zero
    for (int k = 0; k < 3; k++) {
      l += qd[1 + k] * sc * gr[k];
      T[k] = Rr[3 * k] * gr[0] + Rr[3 * k + 1] * gr[1] + Rr[3 * k + 2] * gr[2];
    }
  }
  *len = l;
  if (vel) *vel = 0;
  if (!qvel && !qfrc && !row) return;
  // the spatial forces about each side's cref, dotted with the motion subspaces
  double v = 0;
  for (int side = 0; side < 2; side++) {
    int b = side ? br : bs, other = side ? bs : br;
    const double* x = side ? pr : ps;
    double r[3] = {x[0] - fr->cref[3 * b], x[1] - fr->cref[3 * b + 1], x[2] - fr->cref[3 * b + 2]};
    double W[6] = {T[0] + r[1] * F[2] - r[2] * F[1], T[1] + r[2] * F[0] - r[0] * F[2],
                   T[2] + r[0] * F[1] - r[1] * F[0], F[0], F[1], F[2]};
    for (int p = b; p > 0; p = m->body_parentid[p]) {
      if (SAPT(sapw_isAncestor)(m, p, other)) continue;  // a common ancestor: cleared
      for (int j = m->body_dofadr[p]; j < m->body_dofadr[p] + m->body_dofnum[p]; j++) {
        double mo = 0;
        for (int k = 0; k < 6; k++) mo += fr->cdof[6 * j + k] * W[k];
        if (side) mo = -mo;
        if (qvel) v += mo * qvel[j];
        if (qfrc) qfrc[j] += f * mo;
        if (row) sapw_rowAdd(row, j, mo, ok);
      }
    }
  }
  if (vel) *vel = v;
}

/* slider-crank transmission of actuator i, MuJoCo's mjTRN_SLIDERCRANK (mj_transmission).
 * Crank site c (body bc), slider site s (body bs) with z axis a, rod length r, v = p_c - p_s:
 *   len = a.v - sqrt(det), det = (a.v)^2 + r^2 - v.v; dl/dv = (1 - a.v/sqrt(det)) a + v/sqrt(det),
 *   dl/da = (1 - a.v/sqrt(det)) v; "broken" (det <= 0): len = a.v, dl/dv = a, dl/da = v.
 *   moment_j = dl/da . (w_j x a) + dl/dv . (Jc_j - Js_j) (w_j: dof j's rotation, J: the sites'
 *   point Jacobians; MuJoCo's jacPointAxis), written as wrenches dotted with the motion
 *   subspaces about each side's cref: crank [(p_c - cref) x F; F], slider
 *   [a x dl/da - (p_s - cref) x F; -F], F = dl/dv; dofs above both get both (MuJoCo clears none).
 * gear g scales len and moment. vel (qvel non-NULL) = moment . qvel; qfrc (non-NULL) += f
 * moment; row (non-NULL): the moment (a servo's SAP drive row; *ok = 0 when it does not fit) */
SAP_HD void SAPT(sapw_sliderCrank)(const sapModel* m, const SAPT(sapTenFrames)* fr, int i, const double* qvel,
                                   double f, double* qfrc, double* len, double* vel, sapRow* row, int* ok) {
  const double *cs = m->actuator_site + 13 * i, *ss = m->actuator_refsite + 7 * i;
  int bc = m->actuator_sitebody[i], bs = m->actuator_refbody[i];
  double g = m->actuator_gear[i], rod = m->actuator_cranklength[i];
  double pc[3], Rc[9], ps[3], Rs[9];
  SAPT(sapw_siteFrame)(fr->xpos, fr->xmat, bc, cs, cs + 3, pc, Rc);
  SAPT(sapw_siteFrame)(fr->xpos, fr->xmat, bs, ss, ss + 3, ps, Rs);
  double a[3] = {Rs[2], Rs[5], Rs[8]}, v[3] = {pc[0] - ps[0], pc[1] - ps[1], pc[2] - ps[2]};
  double av = v[0] * a[0] + v[1] * a[1] + v[2] * a[2];
  double det = av * av + rod * rod - (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
  double dlda[3], dldv[3];
  if (det <= 0) {  // broken: the rod cannot reach the slider's axis
    *len = g * av;
    for (int k = 0; k < 3; k++) { dlda[k] = v[k]; dldv[k] = a[k]; }
  } else {
    double sdet = sqrt(det), c = 1 - av / sdet;
    *len = g * (av - sdet);
    for (int k = 0; k < 3; k++) { dldv[k] = a[k] * c + v[k] / sdet; dlda[k] = v[k] * c; }
  }
  if (vel) *vel = 0;
  if (!qvel && !qfrc && !row) return;
  double T[3] = {a[1] * dlda[2] - a[2] * dlda[1], a[2] * dlda[0] - a[0] * dlda[2], a[0] * dlda[1] - a[1] * dlda[0]};
  double sum = 0;
  for (int side = 0; side < 2; side++) {
    int b = side ? bs : bc;
    const double* x = side ? ps : pc;
    double sg = side ? -1 : 1, F[3] = {sg * dldv[0], sg * dldv[1], sg * dldv[2]};
    double r[3] = {x[0] - fr->cref[3 * b], x[1] - fr->cref[3 * b + 1], x[2] - fr->cref[3 * b + 2]};
    double W[6] = {r[1] * F[2] - r[2] * F[1], r[2] * F[0] - r[0] * F[2], r[0] * F[1] - r[1] * F[0], F[0], F[1], F[2]};
    if (side) for (int k = 0; k < 3; k++) W[k] += T[k];
    for (int p = b; p > 0; p = m->body_parentid[p])
      for (int j = m->body_dofadr[p]; j < m->body_dofadr[p] + m->body_dofnum[p]; j++) {
        double mo = 0;
        for (int k = 0; k < 6; k++) mo += fr->cdof[6 * j + k] * W[k];
        mo *= g;
        if (qvel) sum += mo * qvel[j];
        if (qfrc) qfrc[j] += f * mo;
        if (row) sapw_rowAdd(row, j, mo, ok);
      }
  }
  if (vel) *vel = sum;
}

/* transmission length and velocity of actuator i (fr: the world's frames, for spatial
 * tendons) */
SAP_HD void SAPT(sapw_actuatorLength)(const sapModel* m, const double* qpos, const double* qvel,
                                      const SAPT(sapTenFrames)* fr, int i, double* len, double* vel) {
  int id = m->actuator_trnid[i];
  double g = m->actuator_gear[i];
  if (m->actuator_trntype[i] == SAP_TRN_JOINT && sapa_jointDofs(m, id) > 1) {
    /* a ball joint: the rotation vector of its quaternion . moment; a free joint: 0 (MuJoCo's
     * mjTRN_JOINT and mjTRN_JOINTINPARENT); the velocity moment . qvel (sapa_jointMoment) */
    double gj[6];
    sapa_jointMoment(m, i, qpos, gj);
    int d = m->jnt_dofadr[id], nd = sapa_jointDofs(m, id);
    double r[3] = {0, 0, 0}, v = 0;
    if (nd == 3) sapw_quat2Vel(r, qpos + m->jnt_qposadr[id]);
    for (int k = 0; k < nd; k++) v += gj[k] * qvel[d + k];
    *len = r[0] * gj[0] + r[1] * gj[1] + r[2] * gj[2];
    *vel = v;
    return;
  }
  if (m->actuator_trntype[i] == SAP_TRN_JOINT) {
    *len = g * qpos[m->jnt_qposadr[id]];
    *vel = g * qvel[m->jnt_dofadr[id]];
    return;
  }
  if (m->actuator_trntype[i] == SAP_TRN_SITE && m->actuator_refbody[i] >= 0) {
    SAPT(sapw_refsite)(m, fr, i, qvel, 0, (double*)0, len, vel, (sapRow*)0, (int*)0);
    return;
  }
  if (m->actuator_trntype[i] == SAP_TRN_SLIDERCRANK) {
    SAPT(sapw_sliderCrank)(m, fr, i, qvel, 0, (double*)0, len, vel, (sapRow*)0, (int*)0);
    return;
  }
  if (m->actuator_trntype[i] == SAP_TRN_SITE || m->actuator_trntype[i] == SAP_TRN_BODY) {
    // force actuators only (the loader's rule); MuJoCo's body transmission has length 0 too
    *len = *vel = 0;
    return;
  }
  double l, v;
  SAPT(sapw_tendonState)(m, qpos, qvel, fr, id, &l, &v);
  *len = g * l;
  *vel = g * v;
}

/* an adhesion actuator's force f on body b (MuJoCo's mjTRN_BODY, mj_transmission): its moment
 * is minus the mean over the world's contacts that involve b of n'(J_1(x) - J_0(x)), n the
 * contact normal from geom 0 to geom 1 and x MuJoCo's contact point, the midpoint of the two
 * witness points. A contact counts while MuJoCo lists it: dist < margin + gap, i.e. phi below
 * the pair's gap (in the gap too, as MuJoCo's adhesive contacts); sapsim's speculative band
 * beyond does not. So f > 0 pulls b onto what it touches: qfrc += f/n_b (J_0' n - J_1' n) */
SAP_HD void SAPT(sapw_adhesion)(const sapModel* m, int b, double f, const sapWorldContacts* con,
                                const double* cref, const double* cdof, double* qfrc) {
  if (!con || f == 0) return;
  int count = 0;
  for (int pass = 0; pass < 2; pass++)
    for (int k = 0; k < con->n; k++) {
      int g0 = con->geom[2 * k], g1 = con->geom[2 * k + 1];
      int b0 = m->geom_bodyid[g0], b1 = m->geom_bodyid[g1];
      if (b0 != b && b1 != b) continue;
      int p = sapw_findPair(m, g0 < g1 ? g0 : g1, g0 < g1 ? g1 : g0);
      if (!(con->dist[k] < (p >= 0 ? m->pair_gap[p] : 0))) continue;
      if (pass == 0) {
        count++;
        continue;
      }
      const double* x = con->pos + 6 * k;
      const double* n = con->frame + 9 * k + 6;
      double c[3], fn[3], fm[3], zero[3] = {0, 0, 0};
      for (int j = 0; j < 3; j++) {
        c[j] = 0.5 * (x[j] + x[3 + j]);
        fn[j] = f / count * n[j];
        fm[j] = -fn[j];
      }
      SAPT(sapw_applyWrench)(m, b0, c, zero, fn, cref, cdof, qfrc);
      SAPT(sapw_applyWrench)(m, b1, c, zero, fm, cref, cdof, qfrc);
    }
}

/* adhesion's pull (MuJoCo 4's qfrc_adhesion, engine_passive.c mj_adhesion, part of
 * qfrc_passive): every contact MuJoCo lists with adhesion a (kernels/pair.h
 * sapw_contactAdhesion: phi below the pair's gap) pulls its geoms together along the normal
 * n (geom 0 to geom 1) at MuJoCo's contact point, the witnesses' midpoint:
 * qfrc += -a n'(J_1 - J_0). The solve's cone shift (sap_world_t.h sapw_buildContact) gives it
 * back where the surfaces press, so the net normal force can go down to -a. */
SAP_HD void SAPT(sapw_adhesionPull)(const sapModel* m, const sapWorldContacts* con, const double* cref,
                                    const double* cdof, double* qfrc) {
  if (!con || !m->nadhesion) return;
  for (int k = 0; k < con->n; k++) {
    int g0 = con->geom[2 * k], g1 = con->geom[2 * k + 1];
    double a = sapw_contactAdhesion(m, g0, g1, con->dist[k]);
    if (a == 0) continue;
    const double* x = con->pos + 6 * k;
    const double* n = con->frame + 9 * k + 6;
    double c[3], fn[3], fm[3], zero[3] = {0, 0, 0};
    for (int j = 0; j < 3; j++) {
      c[j] = 0.5 * (x[j] + x[3 + j]);
      fn[j] = a * n[j];
      fm[j] = -fn[j];
    }
    SAPT(sapw_applyWrench)(m, m->geom_bodyid[g0], c, zero, fn, cref, cdof, qfrc);
    SAPT(sapw_applyWrench)(m, m->geom_bodyid[g1], c, zero, fm, cref, cdof, qfrc);
  }
}

/* actuator u's explicit force: its law at the transmission's length and velocity, then its
 * limits (sapa_forceLimit; where its tendon limits its actuators' summed force, the sum of
 * their raw forces in actuator order, as MuJoCo's mj_fwdActuation) */
SAP_HD double SAPT(sapw_actuatorForce)(const sapModel* m, double h, const double* qpos, const double* qvel,
                                       const SAPT(sapTenFrames)* fr, const double* ctrl, const double* act, int u) {
  double len, vel, total = 0;
  SAPT(sapw_actuatorLength)(m, qpos, qvel, fr, u, &len, &vel);
  double f = sapa_forceRaw(m, u, sapa_input(m, u, h, ctrl, act), len, vel);
  int t = m->actuator_trnid[u];
  if (m->actuator_trntype[u] == SAP_TRN_TENDON && m->tendon_actfrcsum[t])
    for (int k = 0; k < m->nu; k++) {
      if (m->actuator_trntype[k] != SAP_TRN_TENDON || m->actuator_trnid[k] != t || m->actuator_disabled[k]) continue;
      if (k == u) {
        total += f;
        continue;
      }
      double lk, vk;
      SAPT(sapw_actuatorLength)(m, qpos, qvel, fr, k, &lk, &vk);
      total += sapa_forceRaw(m, k, sapa_input(m, k, h, ctrl, act), lk, vk);
    }
  return sapa_forceLimit(m, u, f, total);
}

/* actuator forces (kernels/actuator.h laws, input ctrl or act); drives (position/velocity
 * actuators) only when explicit_drives, otherwise the SAP solver treats them as implicit PD
 * constraints. con: the world's contacts, read by adhesion actuators only (NULL: none) */
SAP_HD void SAPT(sapw_actuation)(const sapModel* m, double h, const double* qpos, const double* qvel,
                                 const double* ctrl, const double* act, int explicit_drives,
                                 const double* xpos, const double* xmat, const double* cref,
                                 const double* cdof, double* qfrc_actuator, const sapWorldContacts* con) {
  SAPT(sapTenFrames) fr = {xpos, xmat, cref, cdof};
  for (int i = 0; i < m->nv; i++) qfrc_actuator[i] = 0;
  for (int i = 0; i < m->nu && !m->actuation_off; i++) {  // actuation off: 0 (mj_fwdActuation)
    if (m->actuator_disabled[i] || (sapa_isDrive(m, i) && !explicit_drives)) continue;  // disabled: 0
    double f = SAPT(sapw_actuatorForce)(m, h, qpos, qvel, &fr, ctrl, act, i), len;
    /* generalized force = gear * f along the transmission */
    int id = m->actuator_trnid[i];
    double g = m->actuator_gear[i];
    if (m->actuator_trntype[i] == SAP_TRN_JOINT && sapa_jointDofs(m, id) > 1) {
      double gj[6];
      sapa_jointMoment(m, i, qpos, gj);
      for (int k = 0; k < sapa_jointDofs(m, id); k++) qfrc_actuator[m->jnt_dofadr[id] + k] += gj[k] * f;
    } else if (m->actuator_trntype[i] == SAP_TRN_JOINT) {
      qfrc_actuator[m->jnt_dofadr[id]] += g * f;
    } else if (m->actuator_trntype[i] == SAP_TRN_SITE && m->actuator_refbody[i] >= 0) {
      SAPT(sapw_refsite)(m, &fr, i, (const double*)0, f, qfrc_actuator, &len, (double*)0, (sapRow*)0, (int*)0);
    } else if (m->actuator_trntype[i] == SAP_TRN_SLIDERCRANK) {
      SAPT(sapw_sliderCrank)(m, &fr, i, (const double*)0, f, qfrc_actuator, &len, (double*)0, (sapRow*)0, (int*)0);
    } else if (m->actuator_trntype[i] == SAP_TRN_SITE) {
      /* site transmission (no refsite): the wrench gear * f in the site's frame, at the site
       * (MuJoCo's mjTRN_SITE moment); site = body frame * (pos, quat) */
      const double* st = m->actuator_site + 13 * i;  // pos, quat, gear[6]
      const double* q = st + 3;
      int b = m->actuator_sitebody[i];
      const double* Rb = xmat + 9 * b;
      /* the site's rotation in its body (unit quaternion w, x, y, z), row-major */
      double Rs[9] = {1 - 2 * (q[2] * q[2] + q[3] * q[3]), 2 * (q[1] * q[2] - q[0] * q[3]), 2 * (q[1] * q[3] + q[0] * q[2]),
                      2 * (q[1] * q[2] + q[0] * q[3]), 1 - 2 * (q[1] * q[1] + q[3] * q[3]), 2 * (q[2] * q[3] - q[0] * q[1]),
                      2 * (q[1] * q[3] - q[0] * q[2]), 2 * (q[2] * q[3] + q[0] * q[1]), 1 - 2 * (q[1] * q[1] + q[2] * q[2])};
      double p[3], t[3], fw[3], gf[3], gt[3];
      for (int r = 0; r < 3; r++) {
        p[r] = xpos[3 * b + r] + Rb[3 * r] * st[0] + Rb[3 * r + 1] * st[1] + Rb[3 * r + 2] * st[2];
        gf[r] = Rs[3 * r] * st[7] + Rs[3 * r + 1] * st[8] + Rs[3 * r + 2] * st[9];     // in the body
        gt[r] = Rs[3 * r] * st[10] + Rs[3 * r + 1] * st[11] + Rs[3 * r + 2] * st[12];
      }
      for (int r = 0; r < 3; r++) {
        fw[r] = f * (Rb[3 * r] * gf[0] + Rb[3 * r + 1] * gf[1] + Rb[3 * r + 2] * gf[2]);
        t[r] = f * (Rb[3 * r] * gt[0] + Rb[3 * r + 1] * gt[1] + Rb[3 * r + 2] * gt[2]);
      }
      SAPT(sapw_applyWrench)(m, b, p, t, fw, cref, cdof, qfrc_actuator);
    } else if (m->actuator_trntype[i] == SAP_TRN_BODY) {
      SAPT(sapw_adhesion)(m, id, f, con, cref, cdof, qfrc_actuator);
    } else {
      SAPT(sapw_tendonForce)(m, &fr, id, g * f, qfrc_actuator, (float*)0);
    }
  }
  /* the joint-level clamp of the summed force (MuJoCo's mj_fwdActuation, jnt_actfrcsum) */
  for (int j = 0; j < m->njnt; j++)
    if (m->jnt_actfrcsum[j]) {
      double* q = qfrc_actuator + m->jnt_dofadr[j];
      *q = sapw_clampSum(*q, m->jnt_actfrcrange + 2 * j);
    }
}

/* generalized forces of the bodies' applied wrenches xfrc (nbody x 6: force, torque at the com;
 * MuJoCo's xfrc_applied, mj_xfrcAccumulate): qfrc = sum_b J_b(xipos_b)' [t; f], written (not
 * added) to qfrc */
SAP_HD void SAPT(sapw_xfrc)(const sapModel* m, const double* xfrc, const double* xipos, const double* cref,
                            const double* cdof, double* qfrc) {
  for (int i = 0; i < m->nv; i++) qfrc[i] = 0;
  for (int b = 1; b < m->nbody; b++) {
    const double* f = xfrc + 6 * b;
    if (f[0] != 0 || f[1] != 0 || f[2] != 0 || f[3] != 0 || f[4] != 0 || f[5] != 0)
      SAPT(sapw_applyWrench)(m, b, xipos + 3 * b, f + 3, f, cref, cdof, qfrc);
  }
}

/* ---- free motion -------------------------------------------------------------- */

/* One world: cdof/cref, A = M + diag(armature) + h diag(damping), c(q,v), forces,
 * and v* = v + h A^-1 (tau_applied + tau_passive + tau_actuator - c), springs and gravity at
 * q + h/2 v under the midpoint rule (midpoint: sapw_springShift, gravity_shift.h; pose_fp32: the
 * precision the step's poses were computed in, which the gravity shift's poses at q + h/2 v
 * repeat).
 * Returns 0, or a positive number if A is not positive definite. */
SAP_HD int SAPT(sapw_freeMotion)(const sapModel* m, double h, int explicit_drives, int midpoint,
                                 int pose_fp32, const double* qpos, const double* qvel, const double* ctrl,
                                 const double* act, const double* qfrc_applied,
                                 const double* xfrc_applied, const double* xpos, const double* xquat,
                                 const double* xmat, const double* xipos, const double* ximat,
                                 const double* xanchor, const double* xaxis, double* cref,
                                 double* cdof, double* qA, double* qfrc_bias,
                                 double* qfrc_passive, double* qfrc_actuator, double* vstar,
                                 sreal* scratch, const sapWorldContacts* con, const int* ta) {
  int nv = m->nv;
  SAPT(sapFreeMotionScratch) fs;
  SAPT(sapw_freeMotionCarve)(m, scratch, &fs, 0);
  sreal *cinert = fs.cinert, *crb = fs.crb, *cvel = fs.cvel, *cacc = fs.cacc, *cfrc = fs.cfrc, *L = fs.L,
        *x = fs.x;
  const int* radr = fs.loc ? m->dof_Aadr : (const int*)0;  // L by tree blocks, as A; else dense

  /* A and its factor by dof trees: A is zero between two dofs unless one is an ancestor of
   * the other (sapw_crbColumn), so each tree (the dofs below a dof without a parent dof,
   * contiguous in MuJoCo's order) is a diagonal block; only those blocks of L and qA are
   * written (O(sum n_t^2), not nv^2): qA stores those blocks alone (sapModel.dof_Aadr). A
   * tree order that is not contiguous uses the whole matrix (and then computes the sleeping
   * trees too). */
  int contiguous = SAPT(sapw_treesContiguous)(m);
  if (!contiguous) ta = (const int*)0;
  /* the sleeping trees of ta (kernels/sleep.h; NULL: none) cost nothing from here on: their
   * frames, A blocks (qA), qfrc_bias and factors are left as they are (MuJoCo 4 skips them
   * alike) and their v* is 0; the explicit forces below are cheap and run over every dof */
  SAPT(sapw_comPos)(m, xpos, xmat, xanchor, xaxis, cref, cdof, ta);
  SAPT(sapw_cinert)(m, xipos, ximat, cref, cinert, ta);
  SAPT(sapw_crb)(m, cinert, cdof, crb, L, contiguous, ta, radr);
  for (int i = 0; i < nv; i++)
    SAPT(sapw_mrow)(L, radr, nv, i)[i] +=
        (sreal)(h * sapw_damperSlope(m->dof_damping[i], m->dof_dampingpoly + SAP_NPOLY * i, qvel[i]));
  SAPT(sapTenFrames) fr = {xpos, xmat, cref, cdof};
  SAPT(sapw_tendonArmature)(m, &fr, qvel, ta, fs.tenJ, fs.tenbias, L, radr);  // after the damping, as the warp free motion
  for (int t0 = 0, t1; t0 < nv; t0 = t1) {
    t1 = SAPT(sapw_treeEnd)(m, t0, contiguous);
    if (sapw_treeSleeps(ta, m->dof_treeid[t0])) continue;
    for (int i = t0; i < t1; i++)
      SAPT(sapw_store)(qA + sapw_Aoff(m, nv, i) + t0, SAPT(sapw_mrow)(L, radr, nv, i) + t0, t1 - t0);
  }
  SAPT(sapw_rne)(m, qvel, cinert, cdof, cvel, cacc, cfrc, qfrc_bias, ta);
  for (int i = 0; fs.tenbias && i < nv; i++)  // spatial tendons' armature bias (mj_tendonBias)
    if (!sapw_treeSleeps(ta, m->dof_treeid[i])) qfrc_bias[i] += fs.tenbias[i];
  SAPT(sapw_passive)(m, qpos, qvel, &fr, qfrc_passive);
  SAPT(sapw_fluid)(m, qvel, xpos, xmat, xipos, ximat, cref, cdof, qfrc_passive);
  SAPT(sapw_adhesionPull)(m, con, cref, cdof, qfrc_passive);
  SAPT(sapw_actuation)(m, h, qpos, qvel, ctrl, act, explicit_drives, xpos, xmat, cref, cdof, qfrc_actuator, con);
  SAPT(sapw_xfrc)(m, xfrc_applied, xipos, cref, cdof, vstar);  /* vstar: J' xfrc until the end */

  for (int i = 0; i < nv; i++)
    x[i] = (sreal)(qfrc_applied[i] + qfrc_passive[i] + qfrc_actuator[i] - qfrc_bias[i] + vstar[i]);
  if (midpoint) {  /* springs and gravity at q + h/2 v (gravity_shift.h) */
    SAPT(sapw_springShift)(m, qpos, qvel, &fr, 0.5 * h, x);
    const double* g = sapw_gravityShift(m, pose_fp32, qpos, qvel, 0.5 * h, xpos, xquat, xmat, xipos, xanchor, xaxis,
                                        fs.grav, ta);
    for (int i = 0; g && i < nv; i++) x[i] += (sreal)g[i];
  }
  /* one thread per world, by dof trees: each tree's block factors and solves on its own
   * (the whole matrix's factorization without its exact-zero terms), from the leaves up
   * without fill (sapw_treeFactor; left-looking, sapw_treeFactorPre, when the dofs are in
   * pre-order: the same operations in the same order) unless an entry off the tree's pattern
   * is nonzero, then dense. Only a fixed tendon's armature could put one there (crb zeroes a
   * tree's block and writes its ancestor pairs, the damping the diagonal, a spatial tendon's
   * armature ancestor pairs): without one the pattern is not scanned */
  /* Each tree factors in its own block Lt (rows of lda entries from M[t0][t0]) with indices
   * local to it: the parents, segment starts and subtree ends shifted by t0 (loc), so the same
   * operations in the same order as on the whole matrix; a failed pivot's local index + t0 */
  int scan = sapt_hasFixedArmature(m);
  for (int t0 = 0; t0 < nv;) {
    int t1 = SAPT(sapw_treeEnd)(m, t0, contiguous), n = t1 - t0;
    if (!sapw_treeSleeps(ta, m->dof_treeid[t0])) {
      // dense: the whole matrix and the model's indices; by blocks: the tree's block, local ones
      sreal* Lt = radr ? SAPT(sapw_mrow)(L, radr, nv, t0) + t0 : L;
      int lda = radr ? n : nv, k0 = radr ? 0 : t0, k1 = radr ? n : t1, fail;  // the rows in Lt's indices
      sreal* xt = radr ? x + t0 : x;
      const int *par = m->dof_parentid, *seg = m->dof_segstart;
      const int* tend = m->dof_treeend[t0] >= 0 ? m->dof_treeend : (const int*)0;
      if (radr) {
        int *lp = fs.loc, *ls = lp + nv, *le = ls + nv;
        for (int i = 0; i < n; i++) {
          int p = m->dof_parentid[t0 + i];
          lp[i] = p >= 0 ? p - t0 : -1;
          ls[i] = m->dof_segstart[t0 + i] - t0;
          if (tend) le[i] = m->dof_treeend[t0 + i] - t0;
        }
        par = lp, seg = ls, tend = tend ? le : (const int*)0;
      }
      if (SAPT(sapw_treeIsChain)(m, t0, t1)) {  // one segment: its pattern is the whole block
        fail = SAPT(sapw_chainFactorSolve)(Lt, k0, k1, lda, xt);
      } else if (!scan || SAPT(sapw_treePattern)(Lt, k0, k1, lda, par, seg)) {
        fail = tend ? SAPT(sapw_treeFactorPre)(Lt, k0, k1, lda, par, seg, tend)
                    : SAPT(sapw_treeFactor)(Lt, k0, k1, lda, par, seg);
        if (!fail) SAPT(sapw_treeSolve)(Lt, k0, k1, lda, par, seg, xt);
      } else {
        sreal* Lb = Lt + (long)k0 * lda + k0;
        fail = SAPT(sapw_cholFactor)(Lb, n, lda, n);
        if (fail) fail += k0;  // in Lt's indices, as the others
        else SAPT(sapw_cholSolve)(Lb, n, lda, xt + k0);
      }
      if (fail) return fail + (radr ? t0 : 0);
    }
    t0 = t1;
  }
  for (int i = 0; i < nv; i++) vstar[i] = sapw_treeSleeps(ta, m->dof_treeid[i]) ? 0 : qvel[i] + h * (double)x[i];
  return 0;
}

#undef sreal
