/* Contact weights w (template body in the weight precision; include via sap_solve.h):
 * body_inertia and diag_delassus of seed 002 "contact_weight_mode", sapwarp_spec.md §4.
 * Inputs are fp64; the arithmetic runs in SAP_REAL; the result is stored as fp64. */

/* directional mobility of one body summed over the frame rows c in {t1, t2, n}:
 *   omega_b(c) = 1/m + u' I^-1 u,  u = R_I' ((x - com) x c)
 * with R_I the principal inertia frame (ximat) and I the principal inertia. SAP Warp uses the
 * diagonal of a non-principal body inertia (sapwarp §13.18); the principal frame makes this
 * exact for the rigid body. Bodies with m <= 1e-12 contribute 0. */
SAP_HD SAP_REAL SAPT(sapw_bodyMobility)(const sapModel* m, const sapData* d, int w, int b,
                                        const double* x, const double* frame) {
  double mass = m->body_mass[b];
  if (!(mass > 1e-12)) return 0;
  const double* com = d->xipos + ((long)w * m->nbody + b) * 3;
  const double* R = d->ximat + ((long)w * m->nbody + b) * 9;
  const double* inertia = m->body_inertia + b * 3;
  SAP_REAL r[3], sum = 0;
  for (int k = 0; k < 3; k++) r[k] = (SAP_REAL)(x[k] - com[k]);
  for (int c = 0; c < 3; c++) {
    const double* n = frame + 3 * c;
    SAP_REAL a[3];  // a = r x c
    a[0] = r[1] * (SAP_REAL)n[2] - r[2] * (SAP_REAL)n[1];
    a[1] = r[2] * (SAP_REAL)n[0] - r[0] * (SAP_REAL)n[2];
    a[2] = r[0] * (SAP_REAL)n[1] - r[1] * (SAP_REAL)n[0];
    sum += 1 / (SAP_REAL)mass;
    for (int k = 0; k < 3; k++) {
      // u_k = (column k of R) . a
      SAP_REAL u = (SAP_REAL)R[k] * a[0] + (SAP_REAL)R[3 + k] * a[1] + (SAP_REAL)R[6 + k] * a[2];
      SAP_REAL ik = (SAP_REAL)inertia[k] > (SAP_REAL)1e-12 ? (SAP_REAL)inertia[k] : (SAP_REAL)1e-12;
      sum += u * u / ik;
    }
  }
  return sum;
}

/* body_inertia: w = max(1/3 sum_c sum_b omega_b(c), 1e-12) over the dynamic bodies b0, b1
 * (dyn0/dyn1 = 0 for static ones), each at its own witness */
SAP_HD double SAPT(sapw_weightBody)(const sapModel* m, const sapData* d, int w, int b0, int dyn0,
                                    const double* x0, int b1, int dyn1, const double* x1,
                                    const double* frame) {
  SAP_REAL s = 0;
  if (dyn0) s += SAPT(sapw_bodyMobility)(m, d, w, b0, x0, frame);
  if (dyn1) s += SAPT(sapw_bodyMobility)(m, d, w, b1, x1, frame);
  s /= 3;
  return s > (SAP_REAL)1e-12 ? (double)s : 1e-12;
}

/* column j of the rows J3 (3 x nv, fp32 or fp64 storage) */
SAP_HD void SAPT(sapw_rowsColumn)(SAP_REAL* c, const void* J3, int J3_fp32, int j, int nv) {
  for (int r = 0; r < 3; r++)
    c[r] = J3_fp32 ? (SAP_REAL)((const float*)J3)[r * nv + j] : (SAP_REAL)((const double*)J3)[r * nv + j];
}

/* W += c c' / a (symmetric 3x3, upper triangle used) */
SAP_HD void SAPT(sapw_addOuter)(SAP_REAL* W, const SAP_REAL* c, SAP_REAL a) {
  SAP_REAL inv = 1 / (a > (SAP_REAL)1e-12 ? a : (SAP_REAL)1e-12);
  W[0] += c[0] * c[0] * inv; W[1] += c[0] * c[1] * inv; W[2] += c[0] * c[2] * inv;
  W[4] += c[1] * c[1] * inv; W[5] += c[1] * c[2] * inv; W[8] += c[2] * c[2] * inv;
}

/* first angular dof of dof j's joint when that joint is free or ball, else -1 (also with
 * no model: rows already in the coordinates wanted) */
SAP_HD int SAPT(sapw_angularBlock)(const sapModel* m, int j) {
  if (!m) return -1;
  int jn = m->dof_jntid[j], type = m->jnt_type[jn];
  if (type == SAP_JNT_FREE) return j >= m->jnt_dofadr[jn] + 3 ? m->jnt_dofadr[jn] + 3 : -1;
  return type == SAP_JNT_BALL ? m->jnt_dofadr[jn] : -1;
}

/* W += the angular block a0..a0+2 of a free or ball joint in Drake's coordinates. MuJoCo's
 * angular velocity w_b is in the child frame; Drake's floating and ball mobilizers use
 * w_F = R w_b in the joint's parent frame F (the world for a free joint), R the rotation of
 * the joint's quaternion q. diag(A) depends on that choice: in F the columns are C R' and
 * the block R A_bb R' (drake_sap_spec.md §1.3 takes the diagonal of Drake's A). */
SAP_HD void SAPT(sapw_addAngularBlock)(SAP_REAL* W, const void* J3, int J3_fp32, int a0, const sapModel* m,
                                       const double* A, int nv, const double* quat) {
  SAP_REAL q[4], n = 0, R[9], C[3][3];
  for (int k = 0; k < 4; k++) n += (SAP_REAL)quat[k] * (SAP_REAL)quat[k];
  n = n > 0 ? 1 / SAP_SQRT(n) : 0;
  for (int k = 0; k < 4; k++) q[k] = (SAP_REAL)quat[k] * n;
  R[0] = 1 - 2 * (q[2] * q[2] + q[3] * q[3]); R[1] = 2 * (q[1] * q[2] - q[0] * q[3]); R[2] = 2 * (q[1] * q[3] + q[0] * q[2]);
  R[3] = 2 * (q[1] * q[2] + q[0] * q[3]); R[4] = 1 - 2 * (q[1] * q[1] + q[3] * q[3]); R[5] = 2 * (q[2] * q[3] - q[0] * q[1]);
  R[6] = 2 * (q[1] * q[3] - q[0] * q[2]); R[7] = 2 * (q[2] * q[3] + q[0] * q[1]); R[8] = 1 - 2 * (q[1] * q[1] + q[2] * q[2]);
  for (int l = 0; l < 3; l++) SAPT(sapw_rowsColumn)(C[l], J3, J3_fp32, a0 + l, nv);
  for (int i = 0; i < 3; i++) {
    SAP_REAL c[3] = {0, 0, 0}, a = 0;  // column i of C R' and (R A_bb R')_ii
    for (int l = 0; l < 3; l++) {
      for (int r = 0; r < 3; r++) c[r] += C[l][r] * R[3 * i + l];
      for (int p = 0; p < 3; p++) a += R[3 * i + l] * (SAP_REAL)sapw_Aat(m, A, nv, a0 + l, a0 + p) * R[3 * i + p];
    }
    if (c[0] != 0 || c[1] != 0 || c[2] != 0) SAPT(sapw_addOuter)(W, c, a);
  }
}

/* diag_delassus: W = J diag(A)^-1 J' (3x3, A_jj >= 1e-12) over the columns cols[0..n) of the
 * rows J3 (3 x nv, fp32 or fp64 storage; cols NULL: columns 0..n-1), in Drake's velocity
 * coordinates (free and ball joints: sapw_addAngularBlock; qpos: this world's; m NULL: as given,
 * A dense; else A by the model's tree blocks),
 * w = max(||W||_F / 3, 1e-12) */
SAP_HD double SAPT(sapw_weightDelassus)(const sapModel* m, const double* qpos, const void* J3, int J3_fp32,
                                        const int* cols, int n, const double* A, int nv) {
  SAP_REAL W[9];
  for (int k = 0; k < 9; k++) W[k] = 0;
  for (int k = 0; k < n; k++) {
    int j = cols ? cols[k] : k, a0 = SAPT(sapw_angularBlock)(m, j);
    if (a0 >= 0) {  // the joint's three angular columns together, once (a chain holds all three)
      if (j == a0) {
        int jn = m->dof_jntid[j];
        const double* quat = qpos + m->jnt_qposadr[jn] + (m->jnt_type[jn] == SAP_JNT_FREE ? 3 : 0);
        SAPT(sapw_addAngularBlock)(W, J3, J3_fp32, a0, m, A, nv, quat);
      }
      continue;
    }
    SAP_REAL c[3];
    SAPT(sapw_rowsColumn)(c, J3, J3_fp32, j, nv);
    if (c[0] == 0 && c[1] == 0 && c[2] == 0) continue;
    SAPT(sapw_addOuter)(W, c, (SAP_REAL)sapw_Adiag(m, A, nv, j));
  }
  SAP_REAL f2 = W[0] * W[0] + W[4] * W[4] + W[8] * W[8] + 2 * (W[1] * W[1] + W[2] * W[2] + W[5] * W[5]);
  SAP_REAL wv = SAP_SQRT(f2) / 3;
  return wv > (SAP_REAL)1e-12 ? (double)wv : 1e-12;
}
