/* Free motion of one world on one warp (template body; CUDA only, include via
 * dynamics_warp.h). The same per-item arithmetic as sapw_freeMotion (dynamics_t.h), with the
 * items over the lanes: bodies (reference points, inertias, body forces), joints (motion
 * subspaces), dofs (entries of M, the bias projection, the right-hand side) and the 10 or 6
 * components of the two tree accumulations, each component summed in the serial order, so
 * that M and the bias equal the one-thread version's bit for bit. RNE's velocity pass (tree
 * order), the passive forces and the actuation (scattered sums) stay on lane 0. A = M + h D is
 * factored by the warp Cholesky (sap_chol_warp_t.h, right-looking), whose rounding differs
 * from the left-looking factor of the one-thread version in the last bits. */
#define sreal SAP_REAL

SAP_DEV int SAPT(sapv_freeMotion)(const sapModel* m, double h, int explicit_drives, int midpoint,
                                  int pose_fp32, const double* qpos, const double* qvel, const double* ctrl,
                                  const double* act, const double* qfrc_applied,
                                  const double* xfrc_applied, const double* xpos, const double* xquat,
                                  const double* xmat, const double* xipos, const double* ximat,
                                  const double* xanchor, const double* xaxis, double* cref,
                                  double* cdof, double* qA, double* qfrc_bias,
                                  double* qfrc_passive, double* qfrc_actuator, double* vstar,
                                  sreal* scratch, const sapWorldContacts* con, int lane) {
  int nv = m->nv, nb = m->nbody;
  SAPT(sapFreeMotionScratch) fs;  // the layout of sapw_freeMotion (its carve)
  SAPT(sapw_freeMotionCarve)(m, scratch, &fs, 1);  // dense L: the warp Cholesky takes the whole matrix
  sreal *cinert = fs.cinert, *crb = fs.crb, *cvel = fs.cvel, *cacc = fs.cacc, *cfrc = fs.cfrc, *L = fs.L,
        *x = fs.x;

  for (int b = lane; b < nb; b += SAPV_LANES)
    for (int k = 0; k < 3; k++) cref[3 * b + k] = xpos[3 * m->body_rootid[b] + k];
  for (int i = lane; i < nv * nv; i += SAPV_LANES) L[i] = 0;
  __syncwarp();
  for (int j = lane; j < m->njnt; j += SAPV_LANES)
    SAPT(sapw_cdofJoint)(m, j, xmat, xanchor, xaxis, cref, cdof);
  if (lane < 10) cinert[lane] = 0;
  for (int b = 1 + lane; b < nb; b += SAPV_LANES)
    SAPT(sapw_cinertBody)(m, b, xipos, ximat, cref, cinert + 10 * b);
  __syncwarp();
  for (int i = lane; i < 10 * nb; i += SAPV_LANES) crb[i] = cinert[i];
  if (lane == 0) SAPT(sapw_rneVelocity)(m, qvel, cdof, cvel, cacc, (const int*)0);
  __syncwarp();

  /* composite inertias, one component per lane; M; body forces */
  if (lane < 10)
    for (int b = nb - 1; b > 0; b--) {
      int p = m->body_parentid[b];
      if (p > 0) crb[10 * p + lane] += crb[10 * b + lane];
    }
  if (lane < 6) cfrc[lane] = 0;
  for (int b = 1 + lane; b < nb; b += SAPV_LANES) SAPT(sapw_rneBodyForce)(m, b, cinert, cvel, cacc, cfrc);
  __syncwarp();
  for (int i = lane; i < nv; i += SAPV_LANES) {
    SAPT(sapw_crbColumn)(m, crb, cdof, i, L, (const int*)0);
    L[i * nv + i] += (sreal)(h * sapw_damperSlope(m->dof_damping[i], m->dof_dampingpoly + SAP_NPOLY * i, qvel[i]));
  }
  if (m->ntendon) {  // tendons' armature onto the columns just written; the spatial ones' bias
    __syncwarp();
    SAPT(sapTenFrames) fr = {xpos, xmat, cref, cdof};
    if (lane == 0) SAPT(sapw_tendonArmature)(m, &fr, qvel, (const int*)0, fs.tenJ, fs.tenbias, L, (const int*)0);
  }
  if (lane < 6)
    for (int b = nb - 1; b > 0; b--) {
      int p = m->body_parentid[b];
      if (p > 0) cfrc[6 * p + lane] += cfrc[6 * b + lane];
    }
  if (lane == 0) {
    SAPT(sapTenFrames) fr = {xpos, xmat, cref, cdof};
    SAPT(sapw_passive)(m, qpos, qvel, &fr, qfrc_passive);
    SAPT(sapw_fluid)(m, qvel, xpos, xmat, xipos, ximat, cref, cdof, qfrc_passive);
    SAPT(sapw_adhesionPull)(m, con, cref, cdof, qfrc_passive);
    SAPT(sapw_actuation)(m, h, qpos, qvel, ctrl, act, explicit_drives, xpos, xmat, cref, cdof, qfrc_actuator, con);
    SAPT(sapw_xfrc)(m, xfrc_applied, xipos, cref, cdof, vstar);  /* vstar: J' xfrc until the end */
  }
  __syncwarp();

  for (int i = lane; i < nv; i += SAPV_LANES) {  // A's tree blocks (sapModel.dof_Aadr)
    double* Ai = qA + sapw_Aoff(m, nv, i);
    for (int j = sapw_Alo(m, i), hi = sapw_Ahi(m, nv, i); j < hi; j++) Ai[j] = (double)L[i * nv + j];
  }
  for (int i = lane; i < nv; i += SAPV_LANES) {
    qfrc_bias[i] = SAPT(sapw_rneProject)(m, i, cdof, cfrc);
    if (fs.tenbias) qfrc_bias[i] += fs.tenbias[i];  // spatial tendons' armature bias (mj_tendonBias)
    x[i] = (sreal)(qfrc_applied[i] + qfrc_passive[i] + qfrc_actuator[i] - qfrc_bias[i] + vstar[i]);
  }
  __syncwarp();
  if (midpoint && lane == 0) {
    SAPT(sapTenFrames) fr = {xpos, xmat, cref, cdof};
    SAPT(sapw_springShift)(m, qpos, qvel, &fr, 0.5 * h, x);
    const double* g = sapw_gravityShift(m, pose_fp32, qpos, qvel, 0.5 * h, xpos, xquat, xmat, xipos, xanchor, xaxis,
                                        fs.grav, (const int*)0);
    for (int i = 0; g && i < nv; i++) x[i] += (sreal)g[i];
  }
  __syncwarp();
  int fail = SAPT(sapv_cholFactor)(L, nv, nv, lane);
  if (fail) return fail;
  SAPT(sapv_cholSolve)(L, nv, nv, x, lane);
  for (int i = lane; i < nv; i += SAPV_LANES) vstar[i] = qvel[i] + h * (double)x[i];
  return 0;
}

#undef sreal
