/* SAP velocity solve shared by the CPU backend (host/solve.c) and the CUDA kernels
 * (kernels/solve.cu): parameters, constants, the per-world scratch layout, and the fp32/fp64
 * instantiations of the template bodies (cone, box constraints, Cholesky, line searches,
 * weights, Newton, world assembly). Castro et al. 2022; seed 002; sapwarp_spec.md §3-§8;
 * drake_sap_spec.md §1-§5. Reference version: one thread per world. */
#ifndef SAPSIM_SAP_SOLVE_H
#define SAPSIM_SAP_SOLVE_H

#include "sap_real.h"
#include "kernels.h"  /* math templates and the blocked Cholesky */
#include "sapsim/sapsim.h"
#include "sap_solve_size.h"
#include "world_flags.h"
#include "tendon.h"   /* sapRow, spatial tendons */
#include "pair.h"     /* sapw_findPair: a contact's pair (torsional, rolling friction) */
#include "sleep.h"    /* sapw_dofAsleep: rows of sleeping trees leave the problem */
#include "band.h"     /* sapw_surfaceSpeedBound */

/* constants of the specs */
#define SAP_BETA_PD 0.1              /* near-rigid factor of PD drives (drake §3.1) */
#define SAP_LIMIT_K 1e12             /* joint-limit stiffness (drake §3.2 plant values) */
#define SAP_LIMIT_BETA 0.1           /* joint-limit near-rigid factor; taud = h */
#define SAP_BETA_EQ 0.1              /* near-rigid factor of equality rows (drake §3.3, §5.4) */
#define SAP_EQ_NOISE_K 1e3         /* a connect/weld row within this many rounding sizes of zero
                                        is rounding (sapw_eqRowIsNoise) */
#define SAP_LIMIT_WINDOW 2.0         /* a limit enters within 2 h max(|v0|, |v*|) */
#define SAP_LS_EXACT_ALPHA_MAX 1.5   /* exact_root bracket [0, 1.5] */
#define SAP_LS_EXACT_TOL 1e-8        /* normalised derivative and relative step tolerance */
#define SAP_LS_NEWTON_ETA 0.1      /* newton_wolfe: |phi'(a)| <= eta |phi'(0)| (strong Wolfe c2) */
#define SAP_LS_NEWTON_NOISE 16     /* newton_wolfe: phi's rounding level, in eps |phi(0)| */
#define SAP_LS_NEWTON_SUM_NOISE 1024 /* newton_wolfe: rounding of phi's evaluation in fp32, in
                                        eps |phi(0)| (at least) */
#define SAP_LS_HZ_EPS 1e-6         /* newton_wolfe: Hager-Zhang's approximate-Wolfe eps_k / |phi(0)| */
#define SAP_LS_ARMIJO_RESCUE 30      /* armijo_decay trials allowed past its cap (sap_linesearch_t.h) */
#define SAP_CHOL_BLOCK 16            /* blocked Cholesky block size (sapwarp §6.5) */

/* line-search status */
enum {
  SAP_LS_DONE = 0,
  SAP_LS_RUNNING = 1,
  SAP_LS_FAIL_DESCENT = -1,  /* phi'(0) >= 0 or non-finite */
  SAP_LS_FAIL_SMALL = -2,    /* step too small / armijo failure at the cap */
  SAP_LS_FAIL_UPPER = -3,    /* exact: bad derivative at alpha_max */
  SAP_LS_FAIL_GUESS = -4,    /* exact: bad initial guess */
  SAP_LS_FAIL_MAXIT = -5     /* exact: root search hit the cap */
};

/* per-contact and per-scalar parameter widths */
#define SAP_CPAR 8       /* Rt, Rn, vhat_n, mu, w, condim, vhat_t1, vhat_t2 (3-row contacts) */
#define SAP_CPAR_ANG 11  /* + torsion/mu, rolling/mu, vhat_spin (models with condim 4 or 6 contacts) */
#define SAP_CDIM_MAX 6  /* rows of a contact at most: t1, t2, n, spin, roll1, roll2 */
#define SAP_CPAR_OF(cd) ((cd) > 3 ? SAP_CPAR_ANG : SAP_CPAR)
#define SAP_SPAR 4  /* R, vhat, lo, hi */

/* what a scalar row constrains (sapProblem.stag): SAP_ROW_TAG(kind, id); the rows' order is
 * drives, limits, dry friction, equalities (sapw_buildRows), a tag of -1 ends the list */
enum {
  SAP_ROW_DRIVE = 1,     /* id: the actuator */
  SAP_ROW_LIMIT_LO = 2,  /* id: joint j, or njnt + tendon t */
  SAP_ROW_LIMIT_HI = 3,
  SAP_ROW_FRICTION = 4,  /* id: dof j, or nv + tendon t */
  SAP_ROW_EQUALITY = 5   /* id: the equality (3 or 6 rows for connect and weld) */
};
#define SAP_ROW_TAG(kind, id) ((kind) << 24 | (id))
#define SAP_ROW_KIND(tag) ((tag) >> 24)
#define SAP_ROW_ID(tag) ((tag) & 0xffffff)

/* solver parameters from the expanded options (plain values, passed to kernels by value) */
typedef struct sapSolveParams {
  double h;                       /* time step */
  const double* world_h;          /* (nworld) each world's own step (the CUDA step retry's substeps,
                                     device memory), or null: every world steps h */
  double beta, sigma;             /* contact near-rigid factor, friction regularization */
  double opt_abs, opt_rel;        /* optimality tolerances */
  double cost_abs, cost_rel;      /* cost tolerances */
  double cost_min_alpha;          /* the cost test needs alpha > this (monotone 0, others 0.5) */
  double armijo_c, rho, ls_slop;  /* armijo_decay */
  int line_search;                /* SAP_LS_* */
  int max_iterations, ls_max_iterations;
  int weight_mode, contact_point; /* SAP_WEIGHT_*, SAP_POINT_* */
  int weight_fp32, linear_fp32, contact_fp32;
  double geom_k_default;          /* per-geom stiffness where geom_k <= 0 (midpoint weights) */
  double eq_curvature;            /* connect/weld rows' curvature bias b = eq_curvature h Jdot(v_n) v_n:
                                     1/2 with sap_euler, 0 with the midpoint rule or the option off
                                     (option eq_curvature; sap_equality_t.h) */
  int eq_half;                    /* equality rows linearized at the half step q_h = q + h/2 v (the
                                     midpoint rule's kick point), else at q (sap_euler) */
  int eq_pose_fp32, eq_cdof_fp32; /* precisions of the half step's poses and motion subspaces:
                                     the step's kinematics and free motion's */
  double eq_eps;                  /* rounding unit of the poses and motion subspaces that connect and weld
                                     rows are built from (2^-24 when kinematics or free motion is fp32,
                                     else 2^-53): the rounding level of sapw_eqRowIsNoise */
  int warm_extrapolate;           /* warm_start=extrapolate (sap_loop_t.h warmStart) */
  int contact_screen;             /* CPU: rows only for contacts that can act (sapw_solveWorldScreened) */
  int island_newton;              /* one-lane solve: one Newton loop per island (sapw_newtonIslands) */
  void* (*hl_grow)(void* ctx, long bytes);  /* CPU: H and L outside the world's scratch, sized by
                                     the step's islands (sapProblem.hl_grow); null: in the carve */
  void* hl_ctx;
} sapSolveParams;

/* world w's parameters: prm itself, or a copy of it at the world's own step (prm->world_h) */
SAP_HD const sapSolveParams* sapw_worldParams(const sapSolveParams* prm, int w, sapSolveParams* own) {
  if (!prm->world_h) return prm;
  *own = *prm;
  own->h = prm->world_h[w];
  return own;
}

/* one world's frames that its equality rows are built from (sap_equality_t.h): the step's at q,
 * or the half step's at q_h = q + h/2 v under the midpoint rule (sapw_eqFrames) */
typedef struct sapEqFrames {
  const double *qpos, *xpos, *xquat, *xmat;  /* (nq), (nbody x 3), (nbody x 4), (nbody x 9) */
  const double *cref, *cdof;                 /* (nbody x 3) tree reference points, (nv x 6) motions */
} sapEqFrames;

/* world w's frames for its equality rows: the step's (sapData at w), or under the midpoint rule
 * (prm->eq_half) the half step's, computed into half (SAP_SOLVE_NHALF(m) doubles: q_h, poses,
 * cref, cdof) by the step's own kinematics code and precisions (gravity_shift.h
 * sapw_halfPoses, dynamics_t.h sapw_comPos); a world at rest gets the step's poses exactly */
SAP_HD void sapw_eqFrames(const sapModel* m, const sapData* d, int w, const sapSolveParams* prm, double* half,
                          sapEqFrames* F) {
  int nb = m->nbody, nj = m->njnt, nq = m->nq, nv = m->nv;
  const double *qpos = d->qpos + (long)w * nq, *qvel = d->qvel + (long)w * nv;
  const double *xpos = d->xpos + (long)w * nb * 3, *xquat = d->xquat + (long)w * nb * 4;
  const double *xmat = d->xmat + (long)w * nb * 9;
  F->qpos = qpos, F->xpos = xpos, F->xquat = xquat, F->xmat = xmat;
  F->cref = d->cref + (long)w * nb * 3, F->cdof = d->cdof + (long)w * nv * 6;
  if (!prm->eq_half || !half) return;
  double *qh = half, *hpos = qh + nq, *hquat = hpos + 3 * nb, *hmat = hquat + 4 * nb, *hipos = hmat + 9 * nb;
  double *hanchor = hipos + 3 * nb, *haxis = hanchor + 3 * nj, *hcref = haxis + 3 * nj, *hcdof = hcref + 3 * nb;
  const int* ta = m->sleep ? sapw_treeAsleep(m, d, w) : (const int*)0;
  sapw_halfPoses(m, prm->eq_pose_fp32, qpos, qvel, 0.5 * prm->h, xpos, xquat, xmat, d->xipos + (long)w * nb * 3,
                 d->xanchor + (long)w * nj * 3, d->xaxis + (long)w * nj * 3, qh, hpos, hquat, hmat, hipos, hanchor,
                 haxis, ta);
  for (int k = 0; k < 3 * nb; k++) hcref[k] = F->cref[k];  // the sleeping trees' (sapw_comPos keeps them)
  for (int k = 0; k < 6 * nv; k++) hcdof[k] = F->cdof[k];
  if (prm->eq_cdof_fp32)
    sapw_comPos_f32(m, hpos, hmat, hanchor, haxis, hcref, hcdof, ta);
  else
    sapw_comPos_f64(m, hpos, hmat, hanchor, haxis, hcref, hcdof, ta);
  F->qpos = qh, F->xpos = hpos, F->xquat = hquat, F->xmat = hmat, F->cref = hcref, F->cdof = hcdof;
}

/* per-world solver statistics */
typedef struct sapSolveStats {
  int iters, ls_iters, nfactor, flags;
  int ls_evals;  /* evaluations of phi by the line searches (every trial, probes included) */
} sapSolveStats;

/* world w's solve outcome: the counters of s and the solve's flags (replacing the last solve's
 * CONVERGED, MAXITER, LSFAIL and FACTORFAIL; the other flags stay) */
SAP_HD void sapw_recordSolve(const sapData* d, int w, const sapSolveStats* s, int flags) {
  d->newton_iter[w] = s->iters;
  d->ls_iter[w] = s->ls_iters;
  d->nfactor[w] = s->nfactor;
  d->ls_eval[w] = s->ls_evals;
  d->world_flags[w] = (d->world_flags[w] & ~(SAP_WORLD_CONVERGED | SAP_WORLD_MAXITER | SAP_WORLD_LSFAIL |
                                            SAP_WORLD_FACTORFAIL)) | flags;
}

/* the first dof of body b's dof chain walk (the last dof of the first body at or above b
 * that has dofs), -1 when b is static; the chain then follows dof_parentid */
SAP_HD int sapw_bodyLastDof(const sapModel* m, int b) {
  while (b > 0 && m->body_dofnum[b] == 0) b = m->body_parentid[b];
  if (b <= 0) return -1;
  return m->body_dofadr[b] + m->body_dofnum[b] - 1;
}

/* contact point weights of contact_midpoint: alpha_0 = k0/(k0 + k1) with per-geom stiffness
 * (kdef where a geom has none), 1/2 each when the sum is not positive; an infinitely stiff
 * side takes the whole weight (sapwarp §3.2 step 7, §13.19) */
SAP_HD double sapw_midpointAlpha0(double k0, double k1, double kdef) {
  if (!(k0 > 0)) k0 = kdef > 0 ? kdef : 0;
  if (!(k1 > 0)) k1 = kdef > 0 ? kdef : 0;
  if (isinf(k0) && isinf(k1)) return 0.5;
  if (isinf(k0)) return 1;
  if (isinf(k1)) return 0;
  return k0 + k1 > 0 ? k0 / (k0 + k1) : 0.5;
}

/* the friction rows' target velocities of contact i of world w from its geoms' surface
 * velocities (MuJoCo 4's geom surfacevel, engine_core_constraint.c mj_addSurfaceVel and
 * engine_core_util.c mj_geomSurfaceVelocity): each geom's material moves at
 * s_g(p) = R_g v_g + (R_g w_g) x (p - x_g) at MuJoCo's contact point p (the witnesses'
 * midpoint), with angular velocity R_g w_g. MuJoCo adds cs = frame (s_1 - s_0) to the contact
 * rows' velocity (tangential and torsional only: no normal push, no rolling drive), so its
 * friction drives J v + cs to zero; SAP's bias is the target J v -> vhat = -cs:
 *   vt = (-t1 . (s_1 - s_0)(p), -t2 . (s_1 - s_0)(p), -n . (w_1 - w_0))
 * (vt[2] acts on the spin row of condim 4 and 6 contacts) */
SAP_HD void sapw_surfaceTarget(const sapModel* m, const sapData* d, int w, int i, double vt[3]) {
  long ci = (long)w * d->ncon_max + i;
  const double* x = d->con_pos + 6 * ci;
  const double* f = d->con_frame + 9 * ci;
  double p[3], sv[3] = {0, 0, 0}, sw[3] = {0, 0, 0};
  for (int k = 0; k < 3; k++) p[k] = (x[k] + x[3 + k]) / 2;
  for (int s = 0; s < 2; s++) {
    int g = d->con_geom[2 * ci + s];
    const double* u = m->geom_surfacevel + 6 * g;
    if (!(u[0] || u[1] || u[2] || u[3] || u[4] || u[5])) continue;
    const double* R = d->geom_xmat + ((long)w * m->ngeom + g) * 9;
    const double* xg = d->geom_xpos + ((long)w * m->ngeom + g) * 3;
    double v[3], om[3], r[3], sign = s ? 1 : -1;
    for (int k = 0; k < 3; k++) {
      v[k] = R[3 * k] * u[0] + R[3 * k + 1] * u[1] + R[3 * k + 2] * u[2];
      om[k] = R[3 * k] * u[3] + R[3 * k + 1] * u[4] + R[3 * k + 2] * u[5];
      r[k] = p[k] - xg[k];
    }
    v[0] += om[1] * r[2] - om[2] * r[1];
    v[1] += om[2] * r[0] - om[0] * r[2];
    v[2] += om[0] * r[1] - om[1] * r[0];
    for (int k = 0; k < 3; k++) {
      sv[k] += sign * v[k];
      sw[k] += sign * om[k];
    }
  }
  for (int r = 0; r < 2; r++) vt[r] = -(f[3 * r] * sv[0] + f[3 * r + 1] * sv[1] + f[3 * r + 2] * sv[2]);
  vt[2] = -(f[6] * sw[0] + f[7] * sw[1] + f[8] * sw[2]);
}

/* the tangential speed |v_t| of geom 1 relative to geom 0 at contact i of world w (the
 * witnesses' midpoint), at the step's start velocities qvel; cref, cdof: the world's (free
 * motion). A body's spatial velocity [omega; v at cref_b] is sum cdof_j qvel_j over the dofs of
 * b and its ancestors (the transpose of dynamics_t.h sapw_applyWrench). For adhesive contacts in
 * the gap band (sap_world_t.h sapw_buildContact) */
SAP_HD double sapw_contactSlip(const sapModel* m, const sapData* d, int w, int i, const double* cref,
                               const double* cdof) {
  long ci = (long)w * d->ncon_max + i;
  const double* x = d->con_pos + 6 * ci;
  const double* n = d->con_frame + 9 * ci + 6;
  const double* qvel = d->qvel + (long)w * m->nv;
  double rel[3] = {0, 0, 0};
  for (int s = 0; s < 2; s++) {
    int b = m->geom_bodyid[d->con_geom[2 * ci + s]];
    double V[6] = {0, 0, 0, 0, 0, 0}, r[3];
    for (int p = b; p > 0; p = m->body_parentid[p])
      for (int j = m->body_dofadr[p]; j < m->body_dofadr[p] + m->body_dofnum[p]; j++)
        for (int k = 0; k < 6; k++) V[k] += cdof[6 * j + k] * qvel[j];
    for (int k = 0; k < 3; k++) r[k] = 0.5 * (x[k] + x[3 + k]) - cref[3 * b + k];
    double v[3] = {V[3] + V[1] * r[2] - V[2] * r[1], V[4] + V[2] * r[0] - V[0] * r[2], V[5] + V[0] * r[1] - V[1] * r[0]};
    for (int k = 0; k < 3; k++) rel[k] += s ? v[k] : -v[k];
  }
  double vn = rel[0] * n[0] + rel[1] * n[1] + rel[2] * n[2], t2 = 0;
  for (int k = 0; k < 3; k++) t2 += (rel[k] - vn * n[k]) * (rel[k] - vn * n[k]);
  return sqrt(t2);
}

/* unit row e_dof on any dof (dof friction of hinge, slide, ball and free joints) */
SAP_HD void sapw_dofRow(int dof, sapRow* row) {
  row->idx[0] = dof;
  row->val[0] = 1;
  row->n = 1;
  if (row->cap > 1) row->idx[1] = -1;
}

/* row += c e_dof for a 1-dof joint j (hinge/slide), returns c q; *ok = 0 for other joint
 * types (their limits and drives are not supported here) or a full row */
SAP_HD double sapw_jointRow(const sapModel* m, const double* qpos, int j, double c, sapRow* row, int* ok) {
  int t = m->jnt_type[j];
  if ((t != SAP_JNT_HINGE && t != SAP_JNT_SLIDE) || row->n >= row->cap) { *ok = 0; return 0; }
  row->idx[row->n] = m->jnt_dofadr[j];
  row->val[row->n++] = c;
  if (row->n < row->cap) row->idx[row->n] = -1;
  return c * qpos[m->jnt_qposadr[j]];
}

/* a limited ball joint's cone, MuJoCo's mj_instantiateLimit (mjJNT_BALL) step by step: the
 * joint's quaternion q normalized (mju_normalize4), to axis-angle (mju_quat2Vel, dt 1: the
 * angle 2 atan2(|q_xyz|, q_w), minus 2 pi above pi, so in [0, pi] with the axis flipped for
 * q_w < 0), angle = |axis-angle| and axis its direction (mju_normalize3: (1, 0, 0) at angle 0).
 * Returns dist = max(range) - angle (negative: past the cone). The angle's rate along the joint's
 * local angular velocity omega (its 3 dofs) is axis . omega (axis is an eigenvector of the
 * rotation), so the limit's row is -axis: the row of the upper side of a 1-dof limit */
SAP_HD double sapw_ballLimit(const double* q, const double* range, double* axis) {
  const double minval = 1e-15;  // mjMINVAL
  double u[4] = {q[0], q[1], q[2], q[3]};
  double n = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2] + u[3] * u[3]);
  if (n < minval) {
    u[0] = 1;
    u[1] = u[2] = u[3] = 0;
  } else if (fabs(n - 1) > minval) {
    double inv = 1 / n;
    for (int k = 0; k < 4; k++) u[k] *= inv;
  }
  sapw_quat2Vel(axis, u);  // kernels/spring.h
  double angle = sapw_normalize3(axis);
  return (range[0] > range[1] ? range[0] : range[1]) - angle;
}

/* row += -axis over ball joint j's 3 dofs (sapw_ballLimit at qpos), returns the limit's dist;
 * *ok = 0 when the row has no room */
SAP_HD double sapw_ballLimitRow(const sapModel* m, const double* qpos, int j, sapRow* row, int* ok) {
  double axis[3];
  double dist = sapw_ballLimit(qpos + m->jnt_qposadr[j], m->jnt_range + 2 * j, axis);
  if (row->n + 3 > row->cap) { *ok = 0; return dist; }
  for (int k = 0; k < 3; k++) {
    row->idx[row->n] = m->jnt_dofadr[j] + k;
    row->val[row->n++] = -axis[k];
  }
  if (row->n < row->cap) row->idx[row->n] = -1;
  return dist;
}

/* fixed tendon t: row = sum coef e_dof, returns its length sum coef q (times c) */
SAP_HD double sapw_tendonRow(const sapModel* m, const double* qpos, int t, double c, sapRow* row, int* ok) {
  double len = 0;
  for (int k = m->tendon_adr[t]; k < m->tendon_adr[t] + m->tendon_num[t]; k++)
    len += sapw_jointRow(m, qpos, m->wrap_jnt[k], c * m->wrap_coef[k], row, ok);
  return len;
}

/* spatial tendon t (kernels/tendon.h, MuJoCo's mj_tendon): row += c J, returns c times its
 * length; xpos, xmat: the world's body frames, cref, cdof its dof motions */
SAP_HD double sapw_spatialRow(const sapModel* m, const double* xpos, const double* xmat, const double* cref,
                              const double* cdof, int t, double c, sapRow* row, int* ok) {
  sapTenSink k = sapt_sink();
  k.c = c;
  k.row = row;
  double len = sapt_spatial(m, xpos, xmat, cref, cdof, t, &k);
  if (!k.ok) *ok = 0;
  return c * len;
}

/* tendon t, fixed or spatial: row += c J, returns c times its length */
SAP_HD double sapw_anyTendonRow(const sapModel* m, const double* qpos, const double* xpos, const double* xmat,
                                const double* cref, const double* cdof, int t, double c, sapRow* row, int* ok) {
  if (m->tendon_spatial[t]) return sapw_spatialRow(m, xpos, xmat, cref, cdof, t, c, row, ok);
  return sapw_tendonRow(m, qpos, t, c, row, ok);
}

/* whether a connect/weld row of Delassus weight w is rounding: its entries within K rounding
 * sizes of zero, w <= K^2 eps^2 wn (wn: sapw_eqNoiseWeight's sum, eps: the rounding unit of
 * the poses the row was built from). Such a row is structurally null (no dof moves the
 * point along it: the out-of-plane row of a connect closing a planar loop), and its
 * residual is rounding too; near-rigid (R = beta^2/(4 pi^2) w) it would ask the dofs for
 * the velocity g/(2 h |J|) ~ eps |p| / (2 h eps |p|) = O(1/h), whatever the precision. In fp64
 * the w floor of 1e-12 hid it (w ~ 1e-30); fp32 poses give w ~ 1e-12 and 100 rad/s (IIT
 * SoftFoot, scenes/planar_loops.xml). A row K = 1e3 rounding sizes above zero moves by at
 * most g/(2 h K) per unit lever, 1/(2 K) of the rounding per step */
SAP_HD int sapw_eqRowIsNoise(double w, double wn, double eps) {
  double k = SAP_EQ_NOISE_K * eps;
  return w <= k * k * wn;
}

/* an empty row over the storage of row s of (idx, val) with snz entries per row */
SAP_HD sapRow sapw_row(int* idx, double* val, int s, int snz) {
  sapRow r = {idx + (long)s * snz, val + (long)s * snz, 0, snz};
  r.idx[0] = -1;
  return r;
}

/* row s of (idx, val) as written */
SAP_HD sapRow sapw_rowAt(int* idx, double* val, int s, int snz) {
  sapRow r = {idx + (long)s * snz, val + (long)s * snz, 0, snz};
  while (r.n < snz && r.idx[r.n] >= 0) r.n++;
  return r;
}

/* row . x */
SAP_HD double sapw_rowDotSparse(const sapRow* row, const double* x) {
  double t = 0;
  for (int k = 0; k < row->n; k++) t += row->val[k] * x[row->idx[k]];
  return t;
}

/* fp32 */
#include "sap_f32.h"
#include "sap_cone_t.h"
#include "sap_box_t.h"
#include "sap_linesearch_t.h"
#include "sap_weight_t.h"
#include "sap_end.h"

/* fp64 */
#include "sap_f64.h"
#include "sap_cone_t.h"
#include "sap_box_t.h"
#include "sap_linesearch_t.h"
#include "sap_weight_t.h"
#include "sap_end.h"

/* Newton and world assembly call both Cholesky and both weight precisions */
#include "sap_f32.h"
#include "sap_problem_t.h"
#include "sap_island_t.h"
#include "sap_newton_t.h"
#include "sap_world_t.h"
#include "sap_end.h"

#include "sap_f64.h"
#include "sap_problem_t.h"
#include "sap_island_t.h"
#include "sap_newton_t.h"
#include "sap_world_t.h"
#include "sap_end.h"

/* solver parameters from expanded options and the time step */
static inline void sap_solveParams(const sapOptions* o, const sapModel* m, double h, sapSolveParams* p) {
  p->h = h;
  p->world_h = (const double*)0;
  p->geom_k_default = isnan(o->contact_k) ? m->contact_k : o->contact_k;
  p->beta = o->contact_beta;
  p->sigma = o->contact_sigma;
  p->opt_abs = o->optimality_abs_tol;
  p->opt_rel = o->optimality_rel_tol;
  p->cost_abs = o->cost_abs_tol;
  p->cost_rel = o->cost_rel_tol;
  p->cost_min_alpha = o->line_search == SAP_LS_MONOTONE ? 0.0 : 0.5;
  p->armijo_c = o->armijo_c;
  p->rho = o->rho;
  p->ls_slop = o->ls_relative_slop;
  p->line_search = o->line_search;
  p->max_iterations = o->max_iterations;
  p->ls_max_iterations = o->ls_max_iterations;
  p->weight_mode = o->weight_mode;
  p->contact_point = o->contact_point;
  p->weight_fp32 = o->weight_precision == SAP_FP32;
  p->linear_fp32 = o->linear_solve_precision == SAP_FP32;
  p->contact_fp32 = o->contact_solve_precision == SAP_FP32;
  /* equality rows (sap_equality_t.h): with sap_euler (q' = q + h v') built at q, bias h/2 Jdot v;
   * with the midpoint rule (q' = q_h + h/2 v') built at q_h, no bias (it fed a chatter on
   * redundant rows there) */
  p->eq_half = o->integration != SAP_INTEGRATE_SAP_EULER;
  p->eq_curvature = o->eq_curvature && !p->eq_half ? 0.5 : 0.0;
  p->eq_pose_fp32 = o->boundary_pose_precision == SAP_FP32;
  p->eq_cdof_fp32 = o->free_motion_precision == SAP_FP32;
  p->eq_eps = o->boundary_pose_precision == SAP_FP32 || o->free_motion_precision == SAP_FP32
                  ? 5.9604644775390625e-8 : 1.1102230246251565e-16;
  p->warm_extrapolate = o->warm_start == SAP_WARM_EXTRAPOLATE;
  p->contact_screen = o->contact_screen;
  p->island_newton = o->island_newton;
  p->hl_grow = 0;  // H and L in the world's scratch (the CPU driver points them elsewhere)
  p->hl_ctx = (void*)0;
}

#endif
