/* sapModel: the simulation model shared by every world, converted from MuJoCo's
 * compiled mjModel (host/model_load.c). Layouts follow MuJoCo: bodies are in
 * topological order (parent < child), body 0 is the world, quaternions are w-x-y-z.
 * All arrays live in one allocation; a device copy has the same layout. */
#ifndef SAPSIM_MODEL_H
#define SAPSIM_MODEL_H

#ifdef __cplusplus
extern "C" {
#endif

/* joint types: numbering as MuJoCo's mjtJoint */
enum { SAP_JNT_FREE = 0, SAP_JNT_BALL = 1, SAP_JNT_SLIDE = 2, SAP_JNT_HINGE = 3 };

/* geom types: numbering as MuJoCo's mjtGeom */
enum {
  SAP_GEOM_PLANE = 0, SAP_GEOM_HFIELD = 1, SAP_GEOM_SPHERE = 2, SAP_GEOM_CAPSULE = 3,
  SAP_GEOM_ELLIPSOID = 4, SAP_GEOM_CYLINDER = 5, SAP_GEOM_BOX = 6, SAP_GEOM_MESH = 7,
  SAP_NGEOMTYPES = 8
};

/* actuator kinds (what the MJCF shortcut compiles to); MUSCLE: a muscle gain and/or bias
 * (MuJoCo's mju_muscleGain/Bias), applied explicitly like a motor; GENERAL: MuJoCo's affine
 * law with state-dependent terms no servo has (a <damper>'s gain slope, an anti-spring's
 * positive bias slope), applied explicitly as MuJoCo's Euler does */
enum { SAP_ACT_MOTOR = 0, SAP_ACT_POSITION = 1, SAP_ACT_VELOCITY = 2, SAP_ACT_MUSCLE = 3,
       SAP_ACT_GENERAL = 4 };

/* actuator activation dynamics: numbering as MuJoCo's mjtDyn (the supported subset) */
enum { SAP_DYN_NONE = 0, SAP_DYN_INTEGRATOR = 1, SAP_DYN_FILTER = 2, SAP_DYN_FILTEREXACT = 3,
       SAP_DYN_MUSCLE = 4 };
/* bits of actuator_muscle: which half of a SAP_ACT_MUSCLE law is the muscle curve */
enum { SAP_MUSCLE_GAIN = 1, SAP_MUSCLE_BIAS = 2 };
#define SAP_NMUSCLEPRM 9 /* muscle gain/bias parameters: range[2], force, scale, lmin, lmax,
                            vmax, fpmax, fvmax (MuJoCo's gainprm/biasprm of a muscle) */

/* equality constraint types: numbering as MuJoCo's mjtEq (connect, weld, joint, tendon) */
/* tree sleep policy: numbering as MuJoCo's mjtSleepPolicy */
enum { SAP_SLEEP_AUTO = 0, SAP_SLEEP_AUTO_NEVER, SAP_SLEEP_AUTO_ALLOWED, SAP_SLEEP_NEVER, SAP_SLEEP_ALLOWED,
       SAP_SLEEP_INIT };
/* MuJoCo's mjMINAWAKE: steps a tree stays below the tolerance before it may sleep; an awake
 * tree's tree_asleep counts up from SAP_SLEEP_AWAKE = -(1 + SAP_MINAWAKE) to -1 */
#define SAP_MINAWAKE 10
#define SAP_SLEEP_AWAKE (-(1 + SAP_MINAWAKE))

enum { SAP_EQ_CONNECT = 0, SAP_EQ_WELD = 1, SAP_EQ_JOINT = 2, SAP_EQ_TENDON = 3 };
#define SAP_EQ_NDATA 16 /* eq_data slots per equality constraint */
#define SAP_NPOLY 2     /* higher-order spring coefficients (MuJoCo 4's mjNPOLY) */

/* sensor types: numbering as MuJoCo's mjtSensor (the supported subset, host/model_load.c) */
enum {
  SAP_SENS_TOUCH = 0, SAP_SENS_ACCELEROMETER = 1, SAP_SENS_VELOCIMETER = 2, SAP_SENS_GYRO = 3,
  SAP_SENS_FORCE = 4, SAP_SENS_TORQUE = 5, SAP_SENS_MAGNETOMETER = 6, SAP_SENS_RANGEFINDER = 7,
  SAP_SENS_JOINTPOS = 9, SAP_SENS_JOINTVEL = 10,
  SAP_SENS_TENDONPOS = 11, SAP_SENS_TENDONVEL = 12, SAP_SENS_ACTUATORPOS = 13,
  SAP_SENS_ACTUATORVEL = 14, SAP_SENS_ACTUATORFRC = 15, SAP_SENS_JOINTACTFRC = 16,
  SAP_SENS_TENDONACTFRC = 17, SAP_SENS_BALLQUAT = 18, SAP_SENS_BALLANGVEL = 19,
  SAP_SENS_JOINTLIMITPOS = 20, SAP_SENS_JOINTLIMITVEL = 21, SAP_SENS_JOINTLIMITFRC = 22,
  SAP_SENS_TENDONLIMITPOS = 23, SAP_SENS_TENDONLIMITVEL = 24, SAP_SENS_TENDONLIMITFRC = 25, SAP_SENS_FRAMEPOS = 26, SAP_SENS_FRAMEQUAT = 27,
  SAP_SENS_FRAMEXAXIS = 28, SAP_SENS_FRAMEYAXIS = 29, SAP_SENS_FRAMEZAXIS = 30,
  SAP_SENS_FRAMELINVEL = 31, SAP_SENS_FRAMEANGVEL = 32, SAP_SENS_FRAMELINACC = 33,
  SAP_SENS_FRAMEANGACC = 34, SAP_SENS_SUBTREECOM = 35, SAP_SENS_SUBTREELINVEL = 36,
  SAP_SENS_SUBTREEANGMOM = 37, SAP_SENS_INSIDESITE = 38, SAP_SENS_GEOMDIST = 39,
  SAP_SENS_GEOMNORMAL = 40, SAP_SENS_GEOMFROMTO = 41, SAP_SENS_CONTACT = 42, SAP_SENS_E_POTENTIAL = 43, SAP_SENS_E_KINETIC = 44, SAP_SENS_CLOCK = 45
};
/* sensor objects: numbering as MuJoCo's mjtObj (the kinds sensors read) */
enum { SAP_OBJ_UNKNOWN = 0, SAP_OBJ_BODY = 1, SAP_OBJ_XBODY = 2, SAP_OBJ_GEOM = 5, SAP_OBJ_SITE = 6, SAP_OBJ_CAMERA = 7 };
/* contact sensor fields (bits of sensor_condata[0]) and reductions: MuJoCo's mjtConDataField */
enum { SAP_CONDATA_FOUND = 0, SAP_CONDATA_FORCE, SAP_CONDATA_TORQUE, SAP_CONDATA_DIST, SAP_CONDATA_POS,
       SAP_CONDATA_NORMAL, SAP_CONDATA_TANGENT, SAP_NCONDATA };
enum { SAP_REDUCE_NONE = 0, SAP_REDUCE_MINDIST = 1, SAP_REDUCE_MAXFORCE = 2, SAP_REDUCE_NETFORCE = 3 };
/* when a sensor is computed: numbering as MuJoCo's mjtStage (sensor_needstage) */
enum { SAP_STAGE_POS = 1, SAP_STAGE_VEL = 2, SAP_STAGE_ACC = 3 };

/* actuator transmission */
enum { SAP_TRN_JOINT = 0, SAP_TRN_TENDON = 1, SAP_TRN_SITE = 2, SAP_TRN_BODY = 3 /* adhesion */,
       SAP_TRN_SLIDERCRANK = 4 };

/* tendon wrap object: numbering as MuJoCo's mjtWrap */
enum { SAP_WRAP_JOINT = 1, SAP_WRAP_PULLEY = 2, SAP_WRAP_SITE = 3, SAP_WRAP_SPHERE = 4, SAP_WRAP_CYLINDER = 5 };

/* bits of sapModel.world_override: which arrays world w reads from its own row */
enum {
  SAP_WO_BODY_MASS = 1 << 0, SAP_WO_BODY_INERTIA = 1 << 1, SAP_WO_GEOM_K = 1 << 2,
  SAP_WO_DOF_DAMPING = 1 << 3, SAP_WO_DOF_ARMATURE = 1 << 4, SAP_WO_DOF_FRICTIONLOSS = 1 << 5,
  SAP_WO_ACTUATOR_GAIN = 1 << 6, SAP_WO_ACTUATOR_BIAS = 1 << 7, SAP_WO_ACTUATOR_KP = 1 << 8,
  SAP_WO_ACTUATOR_KV = 1 << 9, SAP_WO_GRAVITY = 1 << 10,
  SAP_WO_PAIRS = 1 << 11,         /* pair_mu, torsion, rolling, k, taud (from the geoms below) */
  SAP_WO_GEOM_FRICTION = 1 << 12, /* host only: inputs of the pairs' recombination */
  SAP_WO_GEOM_TAUD = 1 << 13
};

typedef struct sapModel {
  /* sizes */
  int nq;          /* generalized coordinates */
  int nv;          /* degrees of freedom */
  int nbody;       /* bodies, including the world body 0 */
  int njnt;        /* joints */
  int ngeom;       /* geoms */
  int nmesh;       /* meshes (convex hulls) */
  int nmeshvert;   /* vertices of all meshes */
  int nmeshhull;   /* collision vertices of all meshes (hull vertices; all vertices without a hull graph) */
  int nmeshhullnbr;/* entries of the hull adjacency lists (mesh_hullnbr) */
  int nmeshface;   /* triangles of all meshes: MuJoCo's faces when a rangefinder casts rays, else 0 */
  int nhfield;     /* heightfields */
  int nhfielddata; /* height samples of all heightfields */
  int nu;          /* actuators (force laws at actuator_kind below) */
  int na;          /* activation states (MuJoCo's na: one per actuator with dynamics) */
  int nhistory;    /* doubles of the history buffers per world (delayed actuators, sensors with
                      a history): MuJoCo 4's nhistory and layout */
  int ntendon;     /* tendons (fixed and spatial) */
  int nwrap;       /* tendon wraps (joint, site, geom, pulley) */
  int nexclude;    /* explicit contact exclude pairs */
  int nkey;        /* keyframes */
  int nmocap;      /* mocap bodies (kinematic: pose from sapData.mocap_pos/quat) */
  int neq;         /* equality constraints of the MJCF (active at reset or not: eq_active0) */
  int npair_max;   /* candidate geom pairs: dynamic ones after static filtering, plus the
                    * explicit MJCF <pair> elements (collision) */
  int nsolve_rows; /* scalar SAP rows at most: PD drives + 2 x (limited joints + limited tendons)
                    + dofs and tendons with frictionloss + equality rows (1 joint/tendon, 3 connect, 6 weld) */
  int nsolve_nnz;  /* entries of a scalar SAP row at most: 1, the longest fixed tendon, or the
                    * longest equality row */
  int nsolve_chain; /* dofs of one contact's two chains at most: 2 x the most dofs on a root
                    * path, at most nv (the CPU solve's cache of contact Jacobian rows) */
  int ncondim;     /* solver rows per contact: 3, or the largest pair condim when 4 or 6 */
  int nsensor;     /* sensors (MuJoCo's order) */
  int nsensordata; /* values of all sensors: sum of sensor_dim */
  int nsensorhist; /* sensors with a history buffer (nsample > 0; delays and intervals) */
  int nsurfacevel; /* geoms with a surface velocity (MuJoCo 4's surfacevel: conveyors, turntables);
                      0: geom_surfacevel is empty */
  int nadhesion;   /* candidate pairs with adhesion (MuJoCo 4's geom / pair adhesion); 0: no
                      contact is adhesive (pair_adhesion all 0) */
  int ntree;       /* kinematic trees under the world body (MuJoCo's ntree): the units that sleep */
  int nA;          /* entries of one world's A (sapData.qA): sum over dof trees of n_t^2, stored
                      by tree blocks (dof_Aadr); nv^2 when the trees' dofs are not contiguous */

  /* options */
  double timestep;      /* h (s) */
  double gravity[3];    /* world gravity (m/s^2) */
  double magnetic[3];   /* global magnetic flux in the world frame (MJCF option magnetic), read
                         * by magnetometers */
  double fluid_density;   /* MJCF option density (kg/m^3): quadratic drag of the inertia-box
                           * fluid model (0: none; 0 with springs and dampers both disabled) */
  double fluid_viscosity; /* MJCF option viscosity (Pa s): linear (Stokes) drag of that model */
  double wind[3];         /* MJCF option wind (m/s): the fluid's velocity in the world frame */
  double contact_k;     /* scene default SAP contact stiffness (N/m) */
  double contact_taud;  /* scene default SAP dissipation time scale (s) */
  double contact_margin;/* scene speculative detection band (m) beyond the inflated surface */
  int contact_margin_scene; /* 1: the scene sets the band (sap_contact_margin); 0: the preset's
                             * (0 under drake, as Drake's point contact; 0.02 m otherwise) */
  int contact_band;     /* 1: option contact_band=speed (set by sap_create; kernels/band.h):
                         * sapData's geom_vspeed, geom_vbudget, band_h and band_redo exist */
  int filter_parent;    /* 1: a body never collides with its parent (MuJoCo's default) */
  int cone_pyramidal;   /* 1: the scene asks for MuJoCo's pyramidal friction cone (MJCF cone,
                         * MuJoCo's default): SAP solves the exact (elliptic,
                         * regularized) Coulomb cone regardless; sap_modelNotes says so when
                         * the scene has contact pairs */
  int sleep;            /* 1: MJCF <flag sleep="enable"/>: resting islands of trees sleep (MuJoCo 4's
                         * rules, kernels/sleep.h; sapData.tree_asleep) */
  int contact_override; /* 1: MJCF <flag override="enable"/>: every candidate pair (dynamic and
                         * <pair>) has option o_margin as its margin and o_friction as its
                         * friction (MuJoCo's mj_assignMargin, mj_assignFriction); per-world geom
                         * friction and friction_combine leave them (o_solref and o_solimp, like
                         * every solref/solimp, do not enter SAP's material) */
  int actuation_off;    /* 1: MJCF <flag actuation="disable"/>: no actuator force, no drive row, act
                         * frozen, actuatorvel and actuatorfrc 0 (MuJoCo's mj_fwdActuation,
                         * mj_advance); actuator armature and damping stay (mj_actuatorArmature) */
  double sleep_tolerance; /* MJCF option sleep_tolerance: a tree may sleep while max_j
                           * dof_length_j |qvel_j| < this (0: only when qvel is exactly 0) */

  /* bodies */
  int* body_parentid;     /* (nbody)      parent body; 0 for roots and the world */
  int* body_rootid;       /* (nbody)      root body of the kinematic tree */
  int* body_weldid;       /* (nbody)      body this one is welded to (itself if it has joints) */
  int* body_jntnum;       /* (nbody)      number of joints */
  int* body_jntadr;       /* (nbody)      first joint, -1 if none */
  int* body_dofnum;       /* (nbody)      number of dofs */
  int* body_dofadr;       /* (nbody)      first dof, -1 if none */
  int* body_geomnum;      /* (nbody)      number of geoms */
  int* body_geomadr;      /* (nbody)      first geom, -1 if none */
  int* body_mocapid;      /* (nbody)      index into mocap_pos/quat, -1 if not a mocap body */
  double* body_pos;       /* (nbody x 3)  position offset in parent frame */
  double* body_quat;      /* (nbody x 4)  orientation offset in parent frame */
  double* body_ipos;      /* (nbody x 3)  centre of mass in body frame */
  double* body_iquat;     /* (nbody x 4)  principal inertia frame in body frame */
  double* body_mass;      /* (nbody)      mass */
  double* body_inertia;   /* (nbody x 3)  principal inertia about the com */
  double* body_gravcomp;  /* (nbody)      gravity compensation: force -gravcomp m g at the com */
  int* body_treeid;       /* (nbody)      kinematic tree of the body, -1: static (MuJoCo's) */

  /* joints */
  int* jnt_type;          /* (njnt)       SAP_JNT_* */
  int* jnt_qposadr;       /* (njnt)       first coordinate in qpos */
  int* jnt_dofadr;        /* (njnt)       first dof in qvel */
  int* jnt_bodyid;        /* (njnt)       child body */
  int* jnt_limited;       /* (njnt)       has a range */
  double* jnt_pos;        /* (njnt x 3)   anchor in body frame */
  double* jnt_axis;       /* (njnt x 3)   axis in body frame (hinge, slide) */
  double* jnt_stiffness;  /* (njnt)       spring stiffness (explicit force) */
  double* jnt_stiffnesspoly; /* (njnt x SAP_NPOLY) the spring's higher-order terms (MuJoCo 4's
                             * stiffnesspoly: force -x (k + p1 x + p2 x^2); kernels/spring.h) */
  double* jnt_range;      /* (njnt x 2)   limits (rad or m) */
  double* jnt_margin;     /* (njnt)       limit margin: the limit holds the joint at
                           * range[0] + margin and range[1] - margin (MuJoCo's reference
                           * pos - margin) */
  int* jnt_actfrcsum;     /* (njnt)       1: actuatorfrcrange clamps the summed force of the force
                           * actuators that reach the joint's dof (MuJoCo's joint-level clamp of
                           * qfrc_actuator); 0: none, or folded into the forcerange of the joint's
                           * one actuator */
  double* jnt_actfrcrange; /* (njnt x 2)  that clamp's range (N m or N) */

  /* dofs */
  int* dof_bodyid;        /* (nv)         body moved by this dof */
  int* dof_jntid;         /* (nv)         joint of this dof */
  int* dof_parentid;      /* (nv)         previous dof in the tree, -1 at a root */
  int* dof_segstart;      /* (nv)         first dof of this dof's run of consecutive parent links
                           *               (dof_parentid[k] = k - 1 after it, up to this dof):
                           *               the tree factorization's contiguous segments */
  int* dof_treeend;       /* (nv)         last dof of this dof's subtree (the run [dof, dof_treeend]
                           *               holds it and its descendants), or -1 at every dof when
                           *               the dof forest is not in depth-first pre-order: the
                           *               left-looking tree factorization (sapw_treeFactorPre) */
  int* dof_Alo;           /* (nv)         first dof of this dof's block of A (its dof tree): A's row
                           *               is zero outside [dof_Alo, dof_Ahi); 0 at every dof when a
                           *               tree's dofs are not contiguous (one nv x nv block) */
  int* dof_Ahi;           /* (nv)         one past the last dof of that block */
  int* dof_Aadr;          /* (nv)         A[dof][j] is at dof_Aadr + j in one world's A (sapData.qA)
                           *               for j in [dof_Alo, dof_Ahi): the row's entries follow
                           *               one another, a block's rows too (kernels.h sapw_Arow);
                           *               >= 0 (the index of A[dof][dof_Alo] minus dof_Alo) */
  double* dof_armature;   /* (nv)         armature added to M's diagonal */
  double* dof_damping;    /* (nv)         implicit joint damping (A = M + h D) */
  double* dof_dampingpoly;/* (nv x SAP_NPOLY) the damper's higher-order terms (MuJoCo 4's dampingpoly:
                           *               force -v (c + p1 |v| + p2 v^2), D = its slope at v_n) */
  double* dof_frictionloss; /* (nv)       dry friction: |generalized force| <= this (SAP box row) */
  int* dof_treeid;        /* (nv)         kinematic tree of the dof */
  double* dof_length;     /* (nv)         MuJoCo's dof length scale: 1 linear, a body size angular
                           *               (the sleep test's velocity weight) */
  /* trees (MuJoCo's numbering: bodies and dofs of a tree are contiguous) */
  int* tree_bodyadr;      /* (ntree)      first body */
  int* tree_bodynum;      /* (ntree)      bodies */
  int* tree_dofadr;       /* (ntree)      first dof */
  int* tree_dofnum;       /* (ntree)      dofs */
  int* tree_sleep_policy; /* (ntree)      MuJoCo's mjtSleepPolicy (SAP_SLEEP_*) */

  /* coordinates */
  double* qpos0;          /* (nq)         reference configuration (hinge/slide zero) */
  double* qpos_spring;    /* (nq)         spring rest configuration */

  /* geoms */
  int* geom_type;         /* (ngeom)      SAP_GEOM_* */
  int* geom_bodyid;       /* (ngeom)      body */
  int* geom_contype;      /* (ngeom)      contact type bits */
  int* geom_conaffinity;  /* (ngeom)      contact affinity bits */
  int* geom_dataid;       /* (ngeom)      mesh or heightfield id, -1 for primitives */
  double* geom_size;      /* (ngeom x 3)  MuJoCo geom size */
  double* geom_pos;       /* (ngeom x 3)  position in body frame */
  double* geom_quat;      /* (ngeom x 4)  orientation in body frame */
  double* geom_rbound;    /* (ngeom)      bounding sphere radius (0 for planes) */
  double* geom_margin;    /* (ngeom)      MJCF margin: inflates the surface (pairs sum it) */
  double* geom_gap;       /* (ngeom)      MJCF gap: detection band beyond the margin (summed) */
  double* geom_surfacevel;/* (ngeom x 6)  material velocity of the surface in the geom frame,
                           *              [linear; angular about geom_xpos] (empty when
                           *              nsurfacevel is 0); kernels/sap_solve.h
                           *              sapw_surfaceTarget */
  double* geom_fluid;     /* (ngeom x 12) MuJoCo's geom_fluid (fluidshape="ellipsoid"): interaction
                           *               coefficient (0: the geom takes no ellipsoid-model force),
                           *               blunt, slender and angular drag, Kutta and Magnus lift,
                           *               virtual mass[3], virtual inertia[3] */
  double* geom_mu;        /* (ngeom)      MJCF friction[0] (pairs combine it, pair_mu) */
  double* geom_friction;  /* (ngeom x 3)  MJCF friction: sliding, torsional, rolling (per-world
                           *               overrides recombine pairs from it) */
  int* geom_priority;     /* (ngeom)      MJCF priority: the higher one's friction wins in a pair */
  double* geom_k;         /* (ngeom)      SAP contact stiffness (N/m) */
  double* geom_taud;      /* (ngeom)      SAP dissipation time scale (s) */
  double* geom_detect;    /* (ngeom)      largest pair_detect of its pairs (broad-phase inflation) */
  int* geom_rayskip;      /* (ngeom)      rays pass through: rgba (its material's when it has one) alpha 0 */

  /* meshes (convex hulls compiled by MuJoCo) */
  int* mesh_vertadr;      /* (nmesh)      first vertex */
  int* mesh_vertnum;      /* (nmesh)      number of vertices */
  double* mesh_vert;      /* (nmeshvert x 3) vertices in mesh frame */
  /* collision vertices: MuJoCo's convex hull (mesh_graph) in ascending vertex order, or
   * every vertex of a mesh MuJoCo compiled no hull graph for (then no adjacency) */
  int* mesh_hulladr;      /* (nmesh)      first collision vertex in mesh_hullvert */
  int* mesh_hullnum;      /* (nmesh)      collision vertices */
  int* mesh_hullstart;    /* (nmesh x 6)  local ids of the extreme vertices along -x +x -y +y -z +z */
  double* mesh_hullvert;  /* (nmeshhull x 3) collision vertices in mesh frame */
  int* mesh_hullnbradr;   /* (nmeshhull)  first neighbour in mesh_hullnbr; -1: no adjacency (scan) */
  int* mesh_hullnbr;      /* (nmeshhullnbr) hull neighbours (local ids), each list ended by -1 */
  /* triangles (rays, kernels/ray.h): MuJoCo's mesh_face, present only with rangefinders */
  int* mesh_faceadr;      /* (nmesh)      first face in mesh_face */
  int* mesh_facenum;      /* (nmesh)      faces (0 when nmeshface is 0) */
  int* mesh_face;         /* (nmeshface x 3) vertex ids of a face, local to its mesh's mesh_vert */

  /* heightfields (MuJoCo's compiled grids, mujoco_semantics.md section 9) */
  double* hfield_size;    /* (nhfield x 4) half sizes x, y, top height z, base depth */
  int* hfield_nrow;       /* (nhfield)    rows (y), row 0 at y = -size_y */
  int* hfield_ncol;       /* (nhfield)    columns (x), column 0 at x = -size_x */
  int* hfield_adr;        /* (nhfield)    first sample in hfield_data */
  float* hfield_data;     /* (nhfielddata) heights in [0, 1], row-major, z = data * size_z */

  /* contact filtering */
  int* exclude_body;      /* (nexclude x 2) body pairs that never collide */
  /* candidate pairs, sorted by (g0, g1); per-pair contact parameters combined at load
   * as MuJoCo 4 combines them (README "Contact material mapping"): a contact of pair p
   * has phi = dist - pair_margin[p] and is detected while phi < pair_detect[p] - pair_margin[p] */
  int* pair_geom;         /* (npair_max x 2) candidate geom pairs (g0 < g1) */
  int* pair_explicit;     /* (npair_max)  1: an MJCF <pair> (its own parameters, no filters) */
  int* pair_condim;       /* (npair_max)  combined condim (1, 3, 4 or 6) */
  double* pair_mu;        /* (npair_max)  combined sliding friction (0 when condim 1; >= 1e-5
                           *               when condim 4, 6, as MuJoCo's mjMINMU) */
  double* pair_torsion;   /* (npair_max)  torsional friction (m): friction[1]; condim 4, 6 (else 0) */
  double* pair_rolling;   /* (npair_max)  rolling friction (m): friction[2]; condim 6 (else 0) */
  double* pair_margin;    /* (npair_max)  combined MJCF margin (m): surface inflation */
  double* pair_gap;       /* (npair_max)  combined MJCF gap (m) */
  double* pair_adhesion;  /* (npair_max)  adhesion (N): the geoms' summed (the higher priority's
                           *               alone), an explicit pair's own; kernels/pair.h */
  double* pair_detect;    /* (npair_max)  detection distance: margin + max(gap, contact_margin) */
  double* pair_k;         /* (npair_max)  SAP stiffness, geoms' k in series (N/m) */
  double* pair_taud;      /* (npair_max)  SAP dissipation time, geoms' tau_d summed (s) */
  int* pair_order;        /* (npair_max)  the pairs sorted by narrow-phase routine (geom type pair,
                           *               stable): the order the GPU's threads walk them in */
  int* pair_stageadr;     /* (npair_max + 1) first slot of pair p in a world's contact staging area
                           *               (GPU one-pass collision); [npair_max]: slots in all */
  int* pair_geomadr;      /* (ngeom + 1)  first candidate pair whose g0 is geom g (pair_geom is
                           *               sorted by g0, then g1): pair (g0, g1) lies in
                           *               [pair_geomadr[g0], pair_geomadr[g0 + 1]) (kernels/pair.h) */

  /* actuators (MuJoCo semantics; length l = gear * q for a joint, gear * tendon length):
   *   motor:    force = gain u + bias
   *   position: force = kp (gain u + bias - l) - kv l'
   *   velocity: force = kv (gain u + bias - l')
   * u = ctrl clamped to ctrlrange when ctrllimited; force clamped to forcerange when
   * forcelimited; generalized force = gear * force. A MuJoCo actuator with gain g and affine
   * bias (b0, b1, b2) is force = g u + b0 + b1 l + b2 l': position when b1 < 0 (kp = -b1,
   * kv = -b2, gain = g/kp, bias = b0/kp), velocity when b1 = 0 > b2 (kv = -b2, gain = g/kv,
   * bias = b0/kv), motor when b1 = b2 = 0 (gain = g, bias = b0).
   * Activation dynamics (MuJoCo's mj_fwdActuation, mj_nextActivation; kernels/actuator.h):
   * an actuator with dyntype != NONE owns act[actuator_actadr] (actnum 1) and its law reads
   * u = act (the next activation when actearly) in place of ctrl; act' = ctrl (integrator),
   * (ctrl - act) / tau (filter; filterexact integrates it exactly), mju_muscleDynamics
   * (muscle); act is clamped to actrange when actlimited.
   *   muscle:   force = G u + B, G = mju_muscleGain(l, l') (or gain when not a muscle gain),
   *             B = mju_muscleBias(l) (or bias - kp l - kv l' when not a muscle bias)
   *   general:  force = (gain + gainslope[0] l + gainslope[1] l') u + bias - kp l - kv l'
   *             (MuJoCo's affine gain and bias as they are: kp = -b1, kv = -b2 of any sign) */
  int* actuator_kind;     /* (nu)         SAP_ACT_* */
  int* actuator_trntype;  /* (nu)         SAP_TRN_* */
  int* actuator_trnid;    /* (nu)         joint, tendon, site or body id */
  int* actuator_ctrllimited;  /* (nu)     clamp ctrl to ctrlrange */
  int* actuator_forcelimited; /* (nu)     clamp force to forcerange */
  double* actuator_gear;      /* (nu)     gear ratio */
  double* actuator_wrap;      /* (nu)     MuJoCo 4's setpoint period (wrapPeriod): a servo (fixed gain kp,
                               * affine bias -kp len, no dynamics or an integrator) on a ball joint
                               * or a purely rotational refsite transmission takes its input u as
                               * the representative u - P round((u - len) / P) nearest its length,
                               * P = 2 pi |gear|; 0: none */
  double* actuator_jntgear;   /* (nu x 6) a ball joint transmission's gear[0:3] (its moment on the
                               * joint's 3 dofs; length: the rotation vector . gear) or a free
                               * joint's gear[0:6] (force, torque on its 6 dofs; length 0), MuJoCo's
                               * mjTRN_JOINT; zeros for the others */
  int* actuator_disabled;     /* (nu) 1: in a group of option actuatorgroupdisable (MuJoCo's
                               * mj_actuatorDisabled): no force, no drive row, act held (clamped
                               * to actrange), actuatorfrc 0; length and velocity as usual */
  int* actuator_inparent;     /* (nu) 1: MuJoCo's mjTRN_JOINTINPARENT on a ball or free joint, the
                               * rotational gear in the parent frame (its moment R(q)' gear, q the
                               * joint's quaternion; sapa_jointMoment); 0 otherwise (a jointinparent
                               * hinge or slide is a joint transmission, SAP_TRN_JOINT) */
  double* actuator_gain;      /* (nu)     control gain: motor force, or drive target, per unit ctrl */
  double* actuator_bias;      /* (nu)     constant: motor force, or drive target, at ctrl 0 */
  double* actuator_ctrlrange; /* (nu x 2) */
  double* actuator_forcerange;/* (nu x 2) */
  double* actuator_kp;        /* (nu)     position gain (position actuators) */
  double* actuator_kv;        /* (nu)     velocity gain (velocity and position actuators) */
  int* actuator_dyntype;     /* (nu)     SAP_DYN_* */
  double* actuator_dynprm;    /* (nu x 3) tau (filter), or tau_act, tau_deact, smoothing width
                               * (muscle); MuJoCo's dynprm[0..2] */
  int* actuator_actadr;       /* (nu)     first activation address; -1: stateless */
  int* actuator_actnum;       /* (nu)     activation variables (0 or 1) */
  int* actuator_actlimited;   /* (nu)     clamp act to actrange */
  double* actuator_actrange;  /* (nu x 2) */
  int* actuator_actearly;     /* (nu)     force from the next activation (MuJoCo's actearly) */
  int* actuator_muscle;       /* (nu)     SAP_MUSCLE_* bits (SAP_ACT_MUSCLE), else 0 */
  double* actuator_gainslope; /* (nu x 2) SAP_ACT_GENERAL: the affine gain's length and velocity
                               *           slopes (MuJoCo's gainprm[1], gainprm[2]), else 0 */
  double* actuator_gainprm;   /* (nu x SAP_NMUSCLEPRM) muscle gain parameters (MuJoCo's gainprm) */
  double* actuator_biasprm;   /* (nu x SAP_NMUSCLEPRM) muscle bias parameters (MuJoCo's biasprm) */
  double* actuator_lengthrange; /* (nu x 2) MuJoCo's compiled actuator_lengthrange */
  double* actuator_acc0;      /* (nu)     MuJoCo's compiled actuator_acc0 (muscle force scale) */
  double* actuator_delay;     /* (nu)     control delay (s; MuJoCo 4's delay), 0: none */
  int* actuator_nsample;      /* (nu)     samples of its control history (nsample), 0: none */
  int* actuator_interp;       /* (nu)     reading the history: 0 zero-order hold, 1 linear, 2 cubic */
  int* actuator_historyadr;   /* (nu)     its buffer in sapData.history (2 + 2 nsample doubles:
                               *           MuJoCo's layout, user slot, cursor, times, values), -1 */
  int* actuator_sitebody;     /* (nu)     site transmission: the site's body; slider-crank: the
                               *           crank site's body; else -1 */
  double* actuator_site;      /* (nu x 13) site transmission: the site's pos (3) and quat (4)
                               * in its body, the 6-d gear (force 3, torque 3 in the site frame);
                               * slider-crank: the crank site's pos, quat and gear; zeros otherwise */
  int* actuator_refbody;      /* (nu)     site transmission with a refsite (Cartesian): the
                               *           refsite's body; slider-crank: the slider site's body;
                               *           else -1 */
  double* actuator_refsite;   /* (nu x 7) the refsite's (slider site's) pos (3) and quat (4) in
                               *           its body; zeros otherwise */
  double* actuator_cranklength; /* (nu)   slider-crank: the rod's length (cranklength), else 0 */

  /* tendons: fixed (length = sum coef * q[joint]) and spatial (a path of sites wrapping
   * spheres and cylinders, with pulleys; kernels/tendon.h, MuJoCo's mj_tendon) */
  int* tendon_adr;        /* (ntendon)    first wrap */
  int* tendon_num;        /* (ntendon)    number of wraps */
  int* tendon_limited;    /* (ntendon)    has a range */
  double* tendon_frictionloss; /* (ntendon) dry friction on the tendon velocity (SAP box row) */
  int* tendon_actfrcsum;       /* (ntendon) 1: actuatorfrcrange scales the forces of the tendon's
                                * actuators (force actuators, several) when their sum leaves it
                                * (MuJoCo's mj_fwdActuation); 0: none, or folded into the force
                                * limit of the tendon's one actuator */
  double* tendon_actfrcrange;  /* (ntendon x 2) that range */
  double* tendon_range;   /* (ntendon x 2) */
  double* tendon_margin;  /* (ntendon)    limit margin, as jnt_margin */
  double* tendon_stiffnesspoly; /* (ntendon x SAP_NPOLY) the spring's higher-order terms */
  double* tendon_stiffness;    /* (ntendon) spring -k (L - lengthspring) outside the dead band
                                * [lengthspring[0], lengthspring[1]] (explicit) */
  double* tendon_dampingpoly;  /* (ntendon x SAP_NPOLY) the damper's higher-order terms */
  double* tendon_damping;      /* (ntendon) damper -d Ldot (explicit, as MuJoCo's Euler
                                * integrator) */
  double* tendon_lengthspring; /* (ntendon x 2) the spring's dead band (MuJoCo 4 springlength) */
  int* wrap_jnt;          /* (nwrap)      joint of each wrap; spatial tendons: a site's body, a
                           * wrapping geom's id */
  double* wrap_coef;      /* (nwrap)      coefficient (fixed tendons); a pulley's divisor */
  double* wrap_pos;       /* (nwrap x 3)  spatial tendons: a site's position in its body; a
                           * geom's sidesite position in the sidesite's body */
  int* tendon_spatial;    /* (ntendon)    1: a spatial tendon */
  double* tendon_armature;/* (ntendon)    a fixed tendon's inertia: M += a J'J, J its constant
                           *              coefficients (MuJoCo 4's tendon armature plus its
                           *              actuators' armature gear^2; mj_tendonArmature) */
  int* wrap_type;         /* (nwrap)      SAP_WRAP_* */
  int* wrap_side;         /* (nwrap)      a wrapping geom's sidesite body, -1 none (and other wraps) */

  /* equality constraints (SAP holonomic rows, kernels/sap_equality_t.h) */
  int* eq_type;           /* (neq)        SAP_EQ_CONNECT, SAP_EQ_WELD, SAP_EQ_JOINT or SAP_EQ_TENDON */
  int* eq_active0;        /* (neq)        active at reset (MJCF active): sapData.eq_active's reset value */
  int* eq_obj1id;         /* (neq)        body (connect, weld), joint or tendon of object 1 */
  int* eq_obj2id;         /* (neq)        body (connect, weld; 0 = world), joint or tendon of object 2, -1 none */
  double* eq_data;        /* (neq x SAP_EQ_NDATA) connect: anchor in body 1 frame [0:3], the same
                           * point in body 2 frame [3:6] (site form: the site positions);
                           * weld: anchor in body 2 frame [0:3], anchor in body 1 frame [3:6],
                           * q1' [6:10], torquescale [10], q2' [11:15]: g = (p1 - p2,
                           * ts Im((q2 q2')^-1 q1 q1')) (body form: q1' = relpose, q2' = 1;
                           * site form: the site positions and frames);
                           * joint/tendon: polycoef [0:5], y0 = object 1 at qpos0 [5], x0 [6] */

  /* sensors (kernels/sensor.h; README "Sensors"): values at sensordata[sensor_adr : + sensor_dim],
   * MuJoCo's layout and order. Frame objects (body, xbody, geom, site, camera) are stored as a
   * pose in the body that carries them */
  int* sensor_type;       /* (nsensor)      SAP_SENS_* */
  int* sensor_stage;      /* (nsensor)      SAP_STAGE_*: pos/vel from the state, acc from a step */
  int* sensor_datatype;   /* (nsensor)      MuJoCo's mjtDataType: 0 real, 1 positive, 2 axis, 3 quaternion */
  int* sensor_objtype;    /* (nsensor)      MuJoCo's mjtObj of the object */
  int* sensor_objid;      /* (nsensor)      object id (joint, tendon, actuator, body, site ...) */
  int* sensor_reftype;    /* (nsensor)      MuJoCo's mjtObj of the reference frame, 0 none */
  int* sensor_refid;      /* (nsensor)      reference object id, -1: world frame */
  int* sensor_adr;        /* (nsensor)      first value in sensordata */
  int* sensor_dim;        /* (nsensor)      number of values */
  int* sensor_body;       /* (nsensor x 2)  body carrying the object, the reference (-1 none) */
  double* sensor_frame;   /* (nsensor x 14) object pose in its body (pos 3, quat 4), reference pose */
  double* sensor_cutoff;  /* (nsensor)      clamp of real (+-) and positive (above) data; 0 none */
  int* sensor_zonetype;   /* (nsensor)      touch, contact on a site, insidesite: SAP_GEOM_* of the site zone, else -1 */
  double* sensor_zonesize;/* (nsensor x 3)  the zone site's size */
  int* sensor_raydata;    /* (nsensor)      rangefinder: MuJoCo's dataspec (bits 1 << mjRAYDATA_*), else 0 */
  int* sensor_condata;    /* (nsensor x 2)  contact: dataspec (bits 1 << SAP_CONDATA_*), SAP_REDUCE_*; else 0 */
  int* sensor_nsample;    /* (nsensor)      samples of its history (MuJoCo 4's nsample), 0: none */
  int* sensor_interp;     /* (nsensor)      reading the history: 0 zero-order hold, 1 linear, 2 cubic */
  double* sensor_delay;   /* (nsensor)      delay (s): the value reads the history at time - delay */
  double* sensor_interval;/* (nsensor x 2)  [period, phase] (s): computed once per period, held between */
  int* sensor_historyadr; /* (nsensor)      its buffer in sapData.history (2 + nsample (1 + dim)
                           *                doubles, MuJoCo's layout: last tick, cursor, times, values), -1 */

  /* keyframes */
  double* key_time;       /* (nkey) */
  double* key_qpos;       /* (nkey x nq) */
  double* key_qvel;       /* (nkey x nv) */
  double* key_ctrl;       /* (nkey x nu) */
  double* key_act;        /* (nkey x na) */
  double* key_mpos;       /* (nkey x nmocap x 3) mocap positions (world frame) */
  double* key_mquat;      /* (nkey x nmocap x 4) mocap orientations (normalised on use) */

  /* names: offsets into names (MuJoCo style) */
  int nnames;             /* chars in names */
  int* name_bodyadr;      /* (nbody) */
  int* name_jntadr;       /* (njnt) */
  int* name_geomadr;      /* (ngeom) */
  int* name_actuatoradr;  /* (nu) */
  int* name_keyadr;       /* (nkey) */
  int* name_sensoradr;    /* (nsensor) */
  char* names;            /* (nnames) */

  /* per-world overrides (domain randomization, host/world_params.c, kernels/world_view.h):
   * world w reads an overridden array from its row of world_<array> instead of the model's
   * array when bit SAP_WO_<ARRAY> of world_override[w] is set. All NULL in a loaded model; a
   * batch allocates a table at its first override (not part of buffer). */
  unsigned* world_override;       /* (nworld)  SAP_WO_* bits; NULL: no world has an override */
  double* world_body_mass;        /* (nworld x nbody) */
  double* world_body_inertia;     /* (nworld x nbody x 3) */
  double* world_geom_k;           /* (nworld x ngeom)   resolved stiffness (midpoint weights) */
  double* world_dof_damping;      /* (nworld x nv) */
  double* world_dof_armature;     /* (nworld x nv) */
  double* world_dof_frictionloss; /* (nworld x nv) */
  double* world_actuator_gain;    /* (nworld x nu) */
  double* world_actuator_bias;    /* (nworld x nu) */
  double* world_actuator_kp;      /* (nworld x nu) */
  double* world_actuator_kv;      /* (nworld x nu) */
  double* world_gravity;          /* (nworld x 3) */
  double* world_pair_mu;          /* (nworld x npair_max) pairs recombined from the world's geoms */
  double* world_pair_torsion;     /* (nworld x npair_max) */
  double* world_pair_rolling;     /* (nworld x npair_max) */
  double* world_pair_k;           /* (nworld x npair_max) */
  double* world_pair_taud;        /* (nworld x npair_max) */

  /* storage */
  void* buffer;           /* the single allocation holding every array above */
  unsigned long long nbuffer; /* its size in bytes */
} sapModel;

#ifdef __cplusplus
}
#endif
#endif
