/* sapData: every per-world array of a batch, world-major, carved from one
 * allocation at creation (host/sim.c, table host/data_fields.h). A step allocates nothing. The CUDA
 * backend holds a twin with device pointers and the same layout.
 * Shapes: (nworld x n) means world w's block starts at w*n. */
#ifndef SAPSIM_DATA_H
#define SAPSIM_DATA_H

#ifdef __cplusplus
extern "C" {
#endif

/* per-world flags (bits of sapData.world_flags) */
enum {
  SAP_WORLD_CONVERGED = 1 << 0,        /* the last step's solve met its tolerance */
  SAP_WORLD_MAXITER = 1 << 1,          /* the Newton loop hit its iteration cap */
  SAP_WORLD_LSFAIL = 1 << 2,           /* a line search failed */
  SAP_WORLD_NONFINITE = 1 << 3,        /* state became non-finite: the world is frozen */
  SAP_WORLD_CONTACT_OVERFLOW = 1 << 4, /* more contacts than ncon_max (deepest kept) and a dropped
                                          one may push at the answer (not shown idle) */
  SAP_WORLD_BADINPUT = 1 << 5,         /* non-finite control or applied force: this step was
                                          refused, the world kept its state */
  SAP_WORLD_FACTORFAIL = 1 << 6        /* the Newton matrix H had a non-positive pivot: the solve
                                          stopped at the last iterate */
};
/* worlds a step leaves exactly as they are: frozen (non-finite state, until reset) or
 * with a non-finite control or applied force this step (the step is refused) */
#define SAP_WORLD_SKIP (SAP_WORLD_NONFINITE | SAP_WORLD_BADINPUT)

/* bins of the per-world iteration histograms (sapData.iter_hist): bin k counts world-steps
 * with k Newton iterations (or k line-search evaluations), the last bin k >= SAP_ITER_BINS - 1 */
#define SAP_ITER_BINS 128

typedef struct sapData {
  int nworld;       /* number of worlds */
  int ncon_max;     /* per-world contact capacity */
  int nscratch;     /* per-world scratch bytes */

  /* state (MuJoCo layouts) */
  double* time;           /* (nworld)           simulated time */
  double* qpos;           /* (nworld x nq)      positions */
  double* qvel;           /* (nworld x nv)      velocities */
  double* ctrl;           /* (nworld x nu)      controls */
  double* ctrl_in;        /* (nworld x nu)      the step's control input: ctrl, or for a delayed
                             actuator its history read at time - delay (MuJoCo 4's mj_readCtrl) */
  double* history;        /* (nworld x nhistory) history buffers (actuator_historyadr, sensor_historyadr) */
  double* act;            /* (nworld x na)      actuator activations (MuJoCo's mjData.act, layout
                             actuator_actadr): reset to 0 or the keyframe's act */
  double* qfrc_applied;   /* (nworld x nv)      user generalized forces */
  double* xfrc_applied;   /* (nworld x nbody x 6) user Cartesian force (3) and torque (3) on each
                             body at its com, world frame (MuJoCo's mjData.xfrc_applied): mapped to
                             generalized forces J' [f; t] beside qfrc_applied; a reset clears it */
  double* mocap_pos;      /* (nworld x nmocap x 3) mocap body positions (world frame) */
  double* mocap_quat;     /* (nworld x nmocap x 4) mocap body orientations (normalised on use) */
  int* eq_active;         /* (nworld x neq)     equality constraint on (1) or off (0), MuJoCo's
                             mjData.eq_active: reset from eq_active0, set by sap_setEqActive */
  int* tree_asleep;       /* (nworld x ntree)   MuJoCo 4's mjData.tree_asleep (model.sleep): < 0 awake,
                             counting up from SAP_SLEEP_AWAKE to -1 while the tree rests; >= 0
                             asleep, the next tree of its sleeping island's cycle. Part of the
                             state (field SAP_FIELD_TREE_ASLEEP); a reset sets it */
  double* sleep_qpos;     /* (nworld x nq if model.sleep, else 0) qpos at the end of the last step,
                             reset or state edit: a sleeping tree whose qpos differs wakes (MuJoCo's
                             pose mismatch test in mj_kinematics1) */
  int* sleep_work;        /* (nworld x 2 ntree if model.sleep, else 0) the sleep rules' scratch
                             (kernels/sleep.h) */

  /* kinematics */
  double* xpos;           /* (nworld x nbody x 3)  body frame position */
  double* xquat;          /* (nworld x nbody x 4)  body frame orientation */
  double* xmat;           /* (nworld x nbody x 9)  body frame rotation (row-major) */
  double* xipos;          /* (nworld x nbody x 3)  centre of mass */
  double* ximat;          /* (nworld x nbody x 9)  principal inertia frame */
  double* xanchor;        /* (nworld x njnt x 3)   joint anchor */
  double* xaxis;          /* (nworld x njnt x 3)   joint axis */
  double* geom_xpos;      /* (nworld x ngeom x 3)  geom position */
  double* geom_xmat;      /* (nworld x ngeom x 9)  geom rotation (row-major) */
  double* cref;           /* (nworld x nbody x 3)  reference point of spatial quantities (tree root) */
  double* cdof;           /* (nworld x nv x 6)     motion subspace [ang; lin] at cref */

  /* dynamics */
  double* qA;             /* (nworld x nA)         A = M + diag(armature) + h diag(damping), by dof
                             tree blocks: A[i][j] at dof_Aadr[i] + j for j in [dof_Alo, dof_Ahi)
                             (A is zero between trees); sap_getMassMatrix expands one world's A
                             to dense nv x nv */
  double* qfrc_bias;      /* (nworld x nv)         c(q,v): Coriolis, centrifugal, gravity */
  double* qfrc_passive;   /* (nworld x nv)         spring forces */
  double* qfrc_actuator;  /* (nworld x nv)         actuator forces (explicit laws; with option
                                                   body_outputs also the SAP drives' impulse / h) */
  double* vstar;          /* (nworld x nv)         free-motion velocity */
  double* vnext;          /* (nworld x nv)         solved velocity v_{n+1} */

  /* com-based body outputs, MuJoCo's conventions (kernels/body_out.h), computed only with option
   * body_outputs: after a step those of its start state and forces (as mjData after mj_step and
   * mj_rnePostConstraint), after a reset or a state edit those of the new state (mj_forward) */
  double* subtree_com;    /* (nworld x nbody x 3)  com of each body's subtree */
  double* cinert;         /* (nworld x nbody x 10) inertia about subtree_com of the root:
                                                   Ixx Iyy Izz Ixy Ixz Iyz, m c, m */
  double* cvel;           /* (nworld x nbody x 6)  velocity [omega; v] at subtree_com of the root */
  double* cfrc_ext;       /* (nworld x nbody x 6)  external wrench [torque; force] about subtree_com
                                                   of the root: contact, connect and weld forces
                                                   of the step (impulse / h) plus xfrc_applied;
                                                   0 after reset */

  /* sensors (kernels/sensor.h): pos/vel sensors describe the current state (after a step, a
   * reset or a state edit); acc sensors the last step (its solved acceleration and forces) */
  double* sensordata;     /* (nworld x nsensordata) MuJoCo's layout (sensor_adr, sensor_dim) */
  double* sensor_raw;     /* (nworld x nsensordata, none without history sensors) the values computed
                             at the state, before a delay or an interval's hold: what the step
                             records in the sensors' histories */

  /* contacts (collision pipeline output, deterministic order) */
  int* ncon;              /* (nworld)              live contacts */
  int* ncon_dropped;      /* (nworld)              contacts dropped by capacity */
  double* con_drop;       /* (nworld x 2)          of the dropped contacts: min phi / (1 + mu), max taud
                                                   (the solve's proof that they stay idle) */
  int* con_geom;          /* (nworld x ncon_max x 2) geom ids (geom 0, geom 1) */
  double* con_pos;        /* (nworld x ncon_max x 6) witness points on geom 0 and geom 1 (margin-inflated surfaces) */
  double* con_frame;      /* (nworld x ncon_max x 9) rows t1, t2, n; n from geom 0 to geom 1 */
  double* con_dist;       /* (nworld x ncon_max)   signed distance phi = dist - margin (negative: penetration) */
  double* con_mu;         /* (nworld x ncon_max)   combined friction (the pair's pair_mu, MuJoCo's rules) */
  double* con_k;          /* (nworld x ncon_max)   combined stiffness (in series) */
  double* con_taud;       /* (nworld x ncon_max)   combined dissipation time (sum) */

  /* diagnostics */
  int* world_flags;       /* (nworld)              SAP_WORLD_* bits of the last step */
  int* newton_iter;       /* (nworld)              Newton iterations of the last step (island_newton:
                                                     the island that needed the most) */
  int* ls_iter;           /* (nworld)              line-search iterations of the last step (the same) */
  int* nfactor;           /* (nworld)              factorizations of the last step (island_newton:
                                                     every island's, summed) */
  int* ls_eval;           /* (nworld)              line-search evaluations of phi of the last step (the
                                                     island with the most) */
  int* ncon_solved;       /* (nworld)              contacts the last solve held rows for (contact_screen=1; else 0) */
  int* ncon_promoted;     /* (nworld)              contacts the screen left out, found pushing at the answer and
                             promoted (the solve redone) in the last step (contact_screen=1) */
  /* contact_band=speed (kernels/band.h; none otherwise) */
  double* geom_vspeed;    /* (nworld x ngeom)      each geom's speed bound at the last solve's answer
                                                   (NaN: none yet, e.g. after a reset) */
  double* geom_vbudget;   /* (nworld x ngeom)      the step's speed budgets (infinite: the whole band) */
  double* band_h;         /* (nworld)              the step's h, for the pairs' bands */
  double* band_vlast;     /* (nworld x nv)         vnext before the step's solve (put back for a redo) */
  double* band_work;      /* (nworld x nbody x 7)  the check's body velocities (kernels/band.h) */
  int* band_out;          /* (nworld x ngeom)      1: a pair of the geom was left out this step */
  int* band_redo;         /* (nworld)              1: the step's collision and solve were redone with
                                                   the whole band */
  int* band_redos;        /* (nworld)              such steps since creation or sap_iterStatsClear */
  int* iter_hist;         /* (nworld x 2 x SAP_ITER_BINS) world-steps by Newton iterations, then by
                             line-search evaluations, since creation or sap_iterStatsClear
                             (counted at integration, on the device on the GPU) */
  double* iter_sum;       /* (nworld x 2)          their sums (exact means past the last bin) */
  int* iter_max;          /* (nworld x 2)          their maxima */

  /* per-world scratch for stage-local arrays in fp32 or fp64 */
  unsigned char* scratch; /* (nworld x nscratch) */

  void* buffer;           /* the single allocation */
  unsigned long long nbuffer;
} sapData;

#ifdef __cplusplus
}
#endif
#endif
