/* MuJoCo equality constraints as SAP holonomic constraints (template body in the contact
 * objective precision; include via sap_solve.h after sap_problem_t.h): joint and tendon
 * polynomial couplings (1 row), connect (3 rows), weld (6 rows; 3 when torquescale is 0). Each row is a bilateral box row of
 * sap_box_t.h, g(q) = 0 linearized where the kick acts: at the step's q with sap_euler,
 * g(q + h v) ~ g + h J v, at q_h = q + h/2 v with the midpoint rule (sapw_buildEquality).
 * Compliance of Drake's plant couplers/ball/weld constraints (drake_sap_spec.md §3.3, §5.4): k = inf,
 * tau = 0, beta = 0.1, so always near-rigid. Residuals and eq_data as mujoco_semantics.md §4.
 * Reference version: one thread per world (the warp solver calls it from lane 0). */

/* near-rigid bilateral row (drake §3.3 with k = inf, tau = 0, limits +-inf), g' = g + hd J v'
 * with hd the drift from the kick to the step's end (h with sap_euler, h/2 with the midpoint
 * rule, g then taken at q_h: sapw_buildEquality):
 *   R = beta^2/(4 pi^2) w,  tau := hd (R_c = 0 < R_nr),  vhat = -g/(hd + hd)
 * Without other forces the violation halves each step; under a steady generalized load F on
 * the row it settles at |g| = 2 h hd R |F| (gamma = h F = vhat/R at vc = 0: 2 h^2 R |F| with
 * sap_euler, h^2 R |F| with the midpoint rule), an effective stiffness whose period (about
 * beta h) is below one step: the row acts as a rigid constraint that the time step resolves,
 * never as a spring. b is Drake's bias slot (vhat = -g/(hd + tau) - b), used for the curvature
 * of connect and weld rows: b = c h Jdot(v_n) v_n. */
SAP_HD void SAPT(sapw_holonomicSetup)(SAP_REAL hd, SAP_REAL g, SAP_REAL b, SAP_REAL w, SAP_REAL* par) {
  SAP_REAL beta = (SAP_REAL)SAP_BETA_EQ;
  par[0] = beta * beta / (SAP_REAL)(4 * SAP_PI * SAP_PI) * (w > (SAP_REAL)1e-12 ? w : (SAP_REAL)1e-12);
  par[1] = -g / (2 * hd) - b;
  par[2] = -(SAP_REAL)INFINITY;
  par[3] = (SAP_REAL)INFINITY;
}

/* row += c e_dof, merged with an entry of the same dof; *ok = 0 when the row is full */
SAP_HD void SAPT(sapw_rowAccum)(sapRow* row, int dof, double c, int* ok) {
  for (int k = 0; k < row->n; k++)
    if (row->idx[k] == dof) { row->val[k] += c; return; }
  if (row->n >= row->cap) { *ok = 0; return; }
  row->idx[row->n] = dof;
  row->val[row->n++] = c;
  if (row->n < row->cap) row->idx[row->n] = -1;
}

/* rounding size of dof j's entry in a point row of body b's point p (x = p - cref), per unit
 * of rounding: the entry lin + ang x x is formed from poses and cdof that carry absolute errors
 * ~ eps |p| (positions) and eps (axes), so its error is ~ eps (|lin| + |ang| (|x| + |p|));
 * summed as the row's Delassus weight (sapw_rowDelassus: entry^2 / A_jj) it gives the weight a
 * row made of rounding alone would have (sapw_eqRowIsNoise) */
SAP_HD double SAPT(sapw_eqNoiseWeight)(const double* cd, const double* x, const double* p, double scale,
                                       double Ajj) {
  double ang = sqrt(cd[0] * cd[0] + cd[1] * cd[1] + cd[2] * cd[2]);
  double lin = sqrt(cd[3] * cd[3] + cd[4] * cd[4] + cd[5] * cd[5]);
  double xn = sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]), pn = sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]);
  double e = scale * (lin + ang * (xn + pn));
  return e * e / (Ajj > 1e-12 ? Ajj : 1e-12);
}

/* value of joint j (hinge/slide) or tendon t (fixed, or spatial: kernels/tendon.h from the
 * world's frames xf = {xpos, xmat, cref, cdof}); row += c d(value)/dv when row is not null */
SAP_HD double SAPT(sapw_eqScalar)(const sapModel* m, const double* qpos, const double* const* xf, int tendon, int id,
                                  double c, sapRow* row, int* ok) {
  if (!tendon) {
    if (row) SAPT(sapw_rowAccum)(row, m->jnt_dofadr[id], c, ok);
    return qpos[m->jnt_qposadr[id]];
  }
  if (m->tendon_spatial[id]) {
    sapTenSink k = sapt_sink();
    k.c = c;
    k.row = row;
    double len = sapt_spatial(m, xf[0], xf[1], xf[2], xf[3], id, row ? &k : (sapTenSink*)0);
    if (!k.ok) *ok = 0;
    return len;
  }
  double len = 0;
  for (int k = m->tendon_adr[id]; k < m->tendon_adr[id] + m->tendon_num[id]; k++) {
    int j = m->wrap_jnt[k];
    if (row) SAPT(sapw_rowAccum)(row, m->jnt_dofadr[j], c * m->wrap_coef[k], ok);
    len += m->wrap_coef[k] * qpos[m->jnt_qposadr[j]];
  }
  return len;
}

/* joint/tendon coupling e, one row: g = y - y0 - p(x - x0), p(D) = sum_k a_k D^k (k = 0..4),
 * y object 1, x object 2 (absent: g = y - y0 - a0); J = dy/dv - p'(D) dx/dv */
SAP_HD int SAPT(sapw_eqCoupling)(const sapModel* m, const double* qpos, const double* const* xf, int e, sapRow* row,
                                 double* g) {
  const double* a = m->eq_data + SAP_EQ_NDATA * e;
  int tendon = m->eq_type[e] == SAP_EQ_TENDON, ok = 1;
  double y = SAPT(sapw_eqScalar)(m, qpos, xf, tendon, m->eq_obj1id[e], 1, row, &ok);
  *g = y - a[5] - a[0];
  if (m->eq_obj2id[e] >= 0) {
    double D = SAPT(sapw_eqScalar)(m, qpos, xf, tendon, m->eq_obj2id[e], 0, (sapRow*)0, &ok) - a[6];
    double p = a[4], dp = 4 * a[4];
    for (int k = 3; k >= 1; k--) p = p * D + a[k];      // sum_{k>=1} a_k D^(k-1)
    for (int k = 3; k >= 1; k--) dp = dp * D + k * a[k];  // p'(D)
    *g -= p * D;
    SAPT(sapw_eqScalar)(m, qpos, xf, tendon, m->eq_obj2id[e], -dp, row, &ok);
  }
  return ok;
}

/* velocity-product terms of a point on body b at offset x = p - cref from the dofs' motion
 * v (qvel, the step's v_n): the body's twist V = sum_j S_j v_j (S = cdof, [ang; lin] at cref,
 * a point held fixed at this instant) and D = sum_j Sdot_j v_j with Sdot_j = V_before(j) x S_j,
 * V_before(j) the twist of the dofs above j, the same for the 3 rotational dofs of a ball or
 * free joint (MuJoCo's cdof_dot, mj_comVel). Out: om = V_ang, dom = D_ang and
 * the point's bias acceleration acc = D_lin + D_ang x x + om x (V_lin + om x x). */
SAP_HD void SAPT(sapw_eqPointBias)(const sapModel* m, const double* cdof, const double* v, int b, const double* x,
                                   double* om, double* dom, double* acc) {
  double V[6] = {0, 0, 0, 0, 0, 0}, D[6] = {0, 0, 0, 0, 0, 0};
  for (int j = sapw_bodyLastDof(m, b); j >= 0; j = m->dof_parentid[j])
    for (int k = 0; k < 6; k++) V[k] += cdof[6 * j + k] * v[j];
  // leaf to root: Vb = V minus the dofs at or below j; D += (Vb x S_j) v_j (motion cross product)
  double Vb[6];
  for (int k = 0; k < 6; k++) Vb[k] = V[k];
  for (int j = sapw_bodyLastDof(m, b); j >= 0; j = m->dof_parentid[j]) {
    const double* S = cdof + 6 * j;
    // a ball's (or a free joint's rotational) 3 dofs share the twist above the group: their
    // body-frame axes turn with the whole rotation, sum_k (w x a_k) v_k = w x w = 0
    int jn = m->dof_jntid[j], t = m->jnt_type[jn], first = m->jnt_dofadr[jn] + (t == SAP_JNT_FREE ? 3 : 0);
    int group = (t == SAP_JNT_BALL || t == SAP_JNT_FREE) && j >= first;
    if (!group) {
      for (int k = 0; k < 6; k++) Vb[k] -= S[k] * v[j];
    } else if (j == first + 2) {
      for (int i = first; i <= j; i++)
        for (int k = 0; k < 6; k++) Vb[k] -= cdof[6 * i + k] * v[i];
    }
    double c[6] = {Vb[1] * S[2] - Vb[2] * S[1], Vb[2] * S[0] - Vb[0] * S[2], Vb[0] * S[1] - Vb[1] * S[0],
                   Vb[1] * S[5] - Vb[2] * S[4] + Vb[4] * S[2] - Vb[5] * S[1],
                   Vb[2] * S[3] - Vb[0] * S[5] + Vb[5] * S[0] - Vb[3] * S[2],
                   Vb[0] * S[4] - Vb[1] * S[3] + Vb[3] * S[1] - Vb[4] * S[0]};
    for (int k = 0; k < 6; k++) D[k] += c[k] * v[j];
  }
  double vp[3] = {V[3] + V[1] * x[2] - V[2] * x[1], V[4] + V[2] * x[0] - V[0] * x[2], V[5] + V[0] * x[1] - V[1] * x[0]};
  acc[0] = D[3] + D[1] * x[2] - D[2] * x[1] + V[1] * vp[2] - V[2] * vp[1];
  acc[1] = D[4] + D[2] * x[0] - D[0] * x[2] + V[2] * vp[0] - V[0] * vp[2];
  acc[2] = D[5] + D[0] * x[1] - D[1] * x[0] + V[0] * vp[1] - V[1] * vp[0];
  for (int k = 0; k < 3; k++) om[k] = V[k], dom[k] = D[k];
}

/* connect e, 3 rows from slot ns at the frames F: g = p1 - p2, p_i = xpos_i + xmat_i anchor_i
 * (world frame); row r over the dof chains of both bodies: dp_i/dv_j = lin_j + ang_j x (p_i -
 * cref); kap = Jdot(v) v = acc_1 - acc_2 (sapw_eqPointBias) at the step's velocity v; wn: the
 * Delassus weight of a row of rounding per unit rounding^2 (sapw_eqNoiseWeight) */
SAP_HD int SAPT(sapw_eqConnect)(const sapModel* m, const sapEqFrames* F, const double* v, int e,
                                SAPT(sapProblem)* P, int ns, double g[3], double kap[3], double* wn) {
  const double* a = m->eq_data + SAP_EQ_NDATA * e;
  int ok = 1, nv = m->nv;
  sapRow row[3];
  for (int r = 0; r < 3; r++) row[r] = sapw_row(P->sidx, P->sval, ns + r, P->snz);
  *wn = 0;
  for (int s = 0; s < 2; s++) {
    int b = s ? m->eq_obj2id[e] : m->eq_obj1id[e];
    const double *xp = F->xpos + 3 * b, *R = F->xmat + 9 * b, *cr = F->cref + 3 * b;
    double p[3], x[3], sign = s ? -1 : 1;
    for (int k = 0; k < 3; k++) {
      p[k] = xp[k] + R[3 * k] * a[3 * s] + R[3 * k + 1] * a[3 * s + 1] + R[3 * k + 2] * a[3 * s + 2];
      x[k] = p[k] - cr[k];
      g[k] = s ? g[k] - p[k] : p[k];
    }
    double om[3], dom[3], acc[3];
    SAPT(sapw_eqPointBias)(m, F->cdof, v, b, x, om, dom, acc);
    for (int k = 0; k < 3; k++) kap[k] = s ? kap[k] - acc[k] : acc[k];
    for (int j = sapw_bodyLastDof(m, b); j >= 0; j = m->dof_parentid[j]) {
      const double* cd = F->cdof + 6 * j;
      double u[3] = {cd[3] + cd[1] * x[2] - cd[2] * x[1], cd[4] + cd[2] * x[0] - cd[0] * x[2],
                     cd[5] + cd[0] * x[1] - cd[1] * x[0]};
      for (int r = 0; r < 3; r++) SAPT(sapw_rowAccum)(&row[r], j, sign * u[r], &ok);
      *wn += SAPT(sapw_eqNoiseWeight)(cd, x, p, 1, sapw_Adiag(m, P->A, nv, j));
    }
  }
  return ok;
}

/* r = a * b, double quaternions (w, x, y, z) */
SAP_HD void SAPT(sapw_eqQuatMul)(double* r, const double* a, const double* b) {
  double w = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
  double x = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
  double y = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
  double z = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
  r[0] = w; r[1] = x; r[2] = y; r[3] = z;
}

/* weld e, 6 rows from slot ns (3 when torquescale is 0), MuJoCo's residual (mujoco_semantics.md
 * §4, engine_core_constraint.c): eq_data [0:3] anchor in body 2 frame, [3:6] anchor in body 1
 * frame, [6:10] q1' (relpose, or site 1's frame), [10] torquescale ts, [11:15] q2' (identity, or
 * site 2's frame).
 *   position  g[0:3] = p1 - p2, p1 = x1 + R1 a1, p2 = x2 + R2 a2, J as connect
 *   rotation  g[3:6] = ts Im(A B), A = (q2 q2')^-1, B = q1 q1'
 * With q_i' = d/dt q_i = 1/2 [w_i] q_i (world angular velocity), d/dt(A B) = 1/2 A [w1 - w2] B,
 * so the rotation row of dof j is ts/2 Im(A [cdof_ang_j] B), linear in the axis: its 3x3 map
 * M e_k = Im(A [e_k] B) is formed once. kap = Jdot(v_n) v_n as for connect, and for the
 * rotation the second derivative of ts Im(A B) at zero acceleration. wn[0], wn[1]: the
 * rounding weights (sapw_eqNoiseWeight) of the position rows and of the rotation rows, whose
 * entries ts/2 Im(A [ang] B) have rounding ~ eps ts/2 |ang| */
SAP_HD int SAPT(sapw_eqWeld)(const sapModel* m, const sapEqFrames* F, const double* v, int e, SAPT(sapProblem)* P,
                             int ns, double g[6], double kap[6], double wn[2]) {
  double om[2][3], dom[2][3];
  const double* a = m->eq_data + SAP_EQ_NDATA * e;
  int ok = 1, nr = a[10] != 0 ? 6 : 3, nv = m->nv;
  int b1 = m->eq_obj1id[e], b2 = m->eq_obj2id[e];
  double zero[3] = {0, 0, 0};
  wn[0] = wn[1] = 0;
  sapRow row[6];
  for (int r = 0; r < nr; r++) row[r] = sapw_row(P->sidx, P->sval, ns + r, P->snz);
  // A = (q2 q2')^-1, B = q1 q1', residual ts Im(A B)
  double A[4], B[4], AB[4], M[9];
  SAPT(sapw_eqQuatMul)(A, F->xquat + 4 * b2, a + 11);
  A[1] = -A[1]; A[2] = -A[2]; A[3] = -A[3];
  SAPT(sapw_eqQuatMul)(B, F->xquat + 4 * b1, a + 6);
  SAPT(sapw_eqQuatMul)(AB, A, B);
  for (int k = 0; k < 3; k++) {
    double ek[4] = {0, 0, 0, 0}, t[4], u[4];
    ek[k + 1] = 1;
    SAPT(sapw_eqQuatMul)(t, A, ek);
    SAPT(sapw_eqQuatMul)(u, t, B);
    for (int r = 0; r < 3; r++) M[3 * r + k] = (double)0.5 * a[10] * u[r + 1];
    g[3 + k] = a[10] * AB[k + 1];
  }
  for (int s = 0; s < 2; s++) {
    int b = s ? b2 : b1;
    const double* anc = s ? a : a + 3;
    const double *xp = F->xpos + 3 * b, *R = F->xmat + 9 * b, *cr = F->cref + 3 * b;
    double p[3], x[3], sign = s ? -1 : 1;
    for (int k = 0; k < 3; k++) {
      p[k] = xp[k] + R[3 * k] * anc[0] + R[3 * k + 1] * anc[1] + R[3 * k + 2] * anc[2];
      x[k] = p[k] - cr[k];
      g[k] = s ? g[k] - p[k] : p[k];
    }
    double acc[3];
    SAPT(sapw_eqPointBias)(m, F->cdof, v, b, x, om[s], dom[s], acc);
    for (int k = 0; k < 3; k++) kap[k] = s ? kap[k] - acc[k] : acc[k];
    for (int j = sapw_bodyLastDof(m, b); j >= 0; j = m->dof_parentid[j]) {
      const double* cd = F->cdof + 6 * j;
      double u[6] = {cd[3] + cd[1] * x[2] - cd[2] * x[1], cd[4] + cd[2] * x[0] - cd[0] * x[2],
                     cd[5] + cd[0] * x[1] - cd[1] * x[0], 0, 0, 0};
      for (int r = 0; r < 3; r++) u[3 + r] = M[3 * r] * cd[0] + M[3 * r + 1] * cd[1] + M[3 * r + 2] * cd[2];
      for (int r = 0; r < nr; r++) SAPT(sapw_rowAccum)(&row[r], j, sign * u[r], &ok);
      double Ajj = sapw_Adiag(m, P->A, nv, j), cda[6] = {cd[0], cd[1], cd[2], 0, 0, 0};
      wn[0] += SAPT(sapw_eqNoiseWeight)(cd, x, p, 1, Ajj);
      wn[1] += SAPT(sapw_eqNoiseWeight)(cda, zero, zero, 0.5 * fabs(a[10]), Ajj);
    }
  }
  // rotation: d2/dt2 Im(A B) at qacc = 0 = 1/2 Im(-1/2 A [w2][dw] B + A [D1 - D2] B + 1/2 A [dw][w1] B)
  double dw[4] = {0, om[0][0] - om[1][0], om[0][1] - om[1][1], om[0][2] - om[1][2]};
  double w1[4] = {0, om[0][0], om[0][1], om[0][2]}, w2[4] = {0, om[1][0], om[1][1], om[1][2]};
  double dd[4] = {0, dom[0][0] - dom[1][0], dom[0][1] - dom[1][1], dom[0][2] - dom[1][2]};
  double t1[4], t2[4], c[4] = {0, 0, 0, 0};
  SAPT(sapw_eqQuatMul)(t1, w2, dw);  // -1/2 [w2][dw]
  for (int k = 0; k < 4; k++) c[k] -= 0.5 * t1[k];
  SAPT(sapw_eqQuatMul)(t1, dw, w1);  // +1/2 [dw][w1]
  for (int k = 0; k < 4; k++) c[k] += 0.5 * t1[k] + dd[k];
  SAPT(sapw_eqQuatMul)(t1, A, c);
  SAPT(sapw_eqQuatMul)(t2, t1, B);
  for (int k = 0; k < 3; k++) kap[3 + k] = 0.5 * a[10] * t2[k + 1];
  return ok;
}

/* equality constraints from row ns, in model order, the ones active in world w
 * (sapData.eq_active: MuJoCo's mjData.eq_active; an inactive one has no rows); returns the rows
 * written. Where the rows are linearized follows the position update (sapw_eqFrames):
 *   sap_euler  q' = q + h v':         g' = g + h J v' + h^2/2 Jdot v v,
 *              rows at q, vhat = -g/(2h) - h/2 kap: g' = g/2
 *   midpoint   q' = q_h + h/2 v',     g' = g_h + h/2 J_h v' + h^2/8 Jdot v v, q_h = q + h/2 v,
 *              rows at q_h, vhat = -g_h/h: g' = g_h/2 to second order
 * (kap = Jdot(v_n) v_n, the curvature; option eq_curvature, sap_euler only: with the midpoint
 * rule a bias h/4 kap, even capped to 1/100 of the sap_euler cap below, kept a hinged rod whose
 * tip a connect pulls back onto its own circle (the connect's radial row redundant with the
 * hinge) chattering at 1e-5 - 2e-4 m where it settles to 1e-8 m without, tests/test_eq_active.c).
 * The midpoint rule is drift - kick -
 * drift (gravity_shift.h): every position-dependent force of the kick acts at q_h, and so must
 * the rows' impulses J_h' gamma. Rows taken at q instead push along J(q)', which leads J(q_h)' by
 * h/2 of the motion: on a link turning at omega the centripetal impulse then does work
 * ~ (omega h)^2 of the kinetic energy per step, and a frictionless 24-link loop at 50 rad/s
 * (h omega = 0.1) blew up within 0.6 s where sap_euler and MuJoCo 4 stay bounded
 * (tests/test_planar_loops.c test_loops_energy). */
SAP_HD int SAPT(sapw_buildEquality)(const sapModel* m, const sapData* d, int w, const sapSolveParams* prm,
                                    SAPT(sapProblem)* P, int ns) {
  int ns0 = ns, nv = m->nv;
  SAP_REAL hd = (SAP_REAL)(prm->eq_half ? 0.5 * prm->h : prm->h);  // the drift from the kick to q'
  const int* active = d->eq_active + (long)w * m->neq;
  sapEqFrames F;
  sapw_eqFrames(m, d, w, prm, P->half, &F);
  // 2 x kinetic energy v_n' A v_n, the scale of the curvature bias' cap
  const double* vn = d->qvel + (long)w * nv;
  double vav = 0;
  for (int i = 0; i < nv && prm->eq_curvature != 0 && m->neq > 0; i++)
    for (int j = sapw_Alo(m, i), hi = sapw_Ahi(m, nv, i); j < hi; j++)  // A's zeros add nothing
      vav += vn[i] * sapw_Arow(m, P->A, nv, i)[j] * vn[j];
  for (int e = 0; e < m->neq; e++) {
    if (!active[e]) continue;
    double g[6], kap[6] = {0, 0, 0, 0, 0, 0}, wn[2] = {0, 0};
    int nr = 1, ok;
    if (m->eq_type[e] == SAP_EQ_CONNECT) {
      nr = 3;
      ok = SAPT(sapw_eqConnect)(m, &F, vn, e, P, ns, g, kap, wn);
    } else if (m->eq_type[e] == SAP_EQ_WELD) {
      nr = m->eq_data[SAP_EQ_NDATA * e + 10] != 0 ? 6 : 3;
      ok = SAPT(sapw_eqWeld)(m, &F, vn, e, P, ns, g, kap, wn);
    } else {
      sapRow row = sapw_row(P->sidx, P->sval, ns, P->snz);
      const double* xf[4] = {F.xpos, F.xmat, F.cref, F.cdof};
      ok = SAPT(sapw_eqCoupling)(m, F.qpos, xf, e, &row, g);
    }
    if (!ok) continue;  // cannot happen: nsolve_nnz counts the longest equality row at load
    for (int r = 0; r < nr; r++) {
      P->stag[ns + r] = SAP_ROW_TAG(SAP_ROW_EQUALITY, e);
      sapRow row = sapw_rowAt(P->sidx, P->sval, ns + r, P->snz);
      // curvature bias b = c h kap (c = 1/2 with sap_euler, above). Cap:
      // b^2 <= 0.1 w v_n' A v_n. A curvature the motion produces (kap ~ omega^2 r, w ~ r^2/I)
      // is b^2 ~ (h omega)^2/2 w v'Av, far inside; a row the dofs can hardly move (w -> 0, the
      // radial row of a connect on a hinge's own circle: redundant rows, tests/test_eq_active.c)
      // would otherwise ask for an unbounded velocity
      SAP_REAL wr = SAPT(sapw_rowDelassus)(&row, m, P->A, nv);
      double b = prm->eq_curvature * prm->h * kap[r], cap = sqrt(0.1 * (double)wr * vav);
      b = b > cap ? cap : b < -cap ? -cap : b;
      // a point or rotation row whose Jacobian is rounding (the out-of-plane row of a planar
      // loop's connect: no dof moves it) carries nothing: near-rigid R = c w would turn its
      // rounding residual into a velocity g/(2 hd |J|) of the dofs; the row is emptied
      if (sapw_eqRowIsNoise((double)wr, r < 3 ? wn[0] : wn[1], prm->eq_eps)) {
        for (int k = 0; k < row.n; k++) row.val[k] = 0;
        g[r] = b = 0;
      }
      SAPT(sapw_holonomicSetup)(hd, (SAP_REAL)g[r], (SAP_REAL)b, wr, P->spar + SAP_SPAR * (ns + r));
    }
    ns += nr;
  }
  return ns - ns0;
}
