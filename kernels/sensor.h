/* Sensors of one world (MuJoCo's mj_sensorPos / mj_sensorVel / mj_sensorAcc, engine_sensor.c,
 * with mj_objectVelocity, mj_objectAcceleration, mj_subtreeVel and mj_rnePostConstraint;
 * mujoco_semantics.md §8), in fp64, shared by the CPU backend (host/sensor.c) and the CUDA
 * kernels (kernels/sensor.cu). Reference version: one thread per world.
 *   position/velocity stage (sapw_sensorPosVel): from (qpos, qvel) alone, own kinematics;
 *   acceleration stage (sapw_sensorAcc): from a step's start state, its solved acceleration
 *     qacc = (v_{n+1} - v_n) / h and its SAP impulses (contact force = impulse / h).
 * Spatial vectors are [angular; linear] about each tree's root body origin (cref, as in
 * dynamics_t.h); MuJoCo's are about the root's subtree com: any point gives the same values. */
#ifndef SAPSIM_SENSOR_H
#define SAPSIM_SENSOR_H

#include "kernels.h"
#include "collision.h"     /* sapw_collidePair: contact sensors of a state */
#include "ray.h"           /* sapw_ray: rangefinder */
#include "history.h"       /* sensors with a history: delays and intervals */
#include "sap_solve.h"  /* sapw_midpointAlpha0, SAP_CDIM_MAX */
#include "sapsim/data.h"

#define sapv3 sapu_copy3_f64

/* what a sensor set needs (bits of sapw_sensorNeeds) */
enum {
  SAP_SNEED_KIN = 1, SAP_SNEED_VEL = 2, SAP_SNEED_SUBTREE = 4, SAP_SNEED_SUBVEL = 8,
  SAP_SNEED_MOTION = 16, /* acc stage: cvel and cacc (accelerometer, frame acc, force, torque) */
  SAP_SNEED_FORCE = 32,  /* acc stage: cfrc_int (force, torque) */
  SAP_SNEED_RAY = 64,    /* pos stage: every geom's world pose (rangefinder, contact) */
  SAP_SNEED_CONTACT = 128 /* pos stage: the state's contact list (contact sensors without forces) */
};

SAP_HD int sapw_sensorNeeds(const sapModel* m, int stage) {
  int need = 0;
  for (int i = 0; i < m->nsensor; i++) {
    int t = m->sensor_type[i];
    if (m->sensor_stage[i] == SAP_STAGE_ACC && stage != SAP_STAGE_ACC) continue;
    if (m->sensor_stage[i] != SAP_STAGE_ACC && stage == SAP_STAGE_ACC) continue;
    if (m->sensor_body[2 * i] >= 0 || t == SAP_SENS_SUBTREECOM) need |= SAP_SNEED_KIN;
    if (t == SAP_SENS_VELOCIMETER || t == SAP_SENS_GYRO || t == SAP_SENS_FRAMELINVEL ||
        t == SAP_SENS_FRAMEANGVEL)
      need |= SAP_SNEED_KIN | SAP_SNEED_VEL;
    if (t == SAP_SENS_SUBTREECOM) need |= SAP_SNEED_SUBTREE;
    /* a spatial tendon's length and velocity: body frames, cref and cdof (kernels/tendon.h) */
    int id = m->sensor_objid[i];
    int spatial_spring = 0;
    for (int k = 0; k < m->ntendon && t == SAP_SENS_E_POTENTIAL; k++)
      spatial_spring |= m->tendon_spatial[k] && sapw_hasSpring(m->tendon_stiffness[k], m->tendon_stiffnesspoly + SAP_NPOLY * k);
    if (((t == SAP_SENS_TENDONPOS || t == SAP_SENS_TENDONVEL || t == SAP_SENS_TENDONLIMITPOS ||
          t == SAP_SENS_TENDONLIMITVEL) && m->tendon_spatial[id]) || spatial_spring ||
        ((t == SAP_SENS_ACTUATORPOS || t == SAP_SENS_ACTUATORVEL) && m->actuator_trntype[id] == SAP_TRN_TENDON &&
         m->tendon_spatial[m->actuator_trnid[id]]) ||
        /* a refsite's or slider-crank's length and velocity (sapw_refsite, sapw_sliderCrank): frames,
         * cref and cdof */
        ((t == SAP_SENS_ACTUATORPOS || t == SAP_SENS_ACTUATORVEL) &&
         ((m->actuator_trntype[id] == SAP_TRN_SITE && m->actuator_refbody[id] >= 0) ||
          m->actuator_trntype[id] == SAP_TRN_SLIDERCRANK)))
      need |= SAP_SNEED_KIN | SAP_SNEED_VEL;
    if (t == SAP_SENS_RANGEFINDER) need |= SAP_SNEED_KIN | SAP_SNEED_RAY;
    if (t == SAP_SENS_CONTACT && stage != SAP_STAGE_ACC) need |= SAP_SNEED_KIN | SAP_SNEED_RAY | SAP_SNEED_CONTACT;
    if (t == SAP_SENS_GEOMDIST || t == SAP_SENS_GEOMNORMAL || t == SAP_SENS_GEOMFROMTO) need |= SAP_SNEED_KIN | SAP_SNEED_RAY;
    if (t == SAP_SENS_SUBTREELINVEL || t == SAP_SENS_SUBTREEANGMOM)
      need |= SAP_SNEED_KIN | SAP_SNEED_VEL | SAP_SNEED_SUBTREE | SAP_SNEED_SUBVEL;
    if (t == SAP_SENS_ACCELEROMETER || t == SAP_SENS_FRAMELINACC || t == SAP_SENS_FRAMEANGACC)
      need |= SAP_SNEED_MOTION;
    if (t == SAP_SENS_FORCE || t == SAP_SENS_TORQUE) need |= SAP_SNEED_MOTION | SAP_SNEED_FORCE;
    if (t == SAP_SENS_E_POTENTIAL) need |= SAP_SNEED_KIN;
    if (t == SAP_SENS_E_KINETIC) need |= SAP_SNEED_KIN | SAP_SNEED_VEL;
  }
  return need;
}

#define SAP_CONREC 9 /* doubles of a position-stage contact record: g0, g1, dist, pos, n */

/* room for the position stage's contact list: each pair's most contacts */
SAP_HD long sapw_sensorConCap(const sapModel* m) {
  long n = 0;
  for (int p = 0; p < m->npair_max; p++)
    n += (m->geom_type[m->pair_geom[2 * p]] == SAP_GEOM_HFIELD || m->geom_type[m->pair_geom[2 * p + 1]] == SAP_GEOM_HFIELD)
             ? SAPC_HFIELD_MAXCON : SAPC_MAXCON;
  return n;
}

/* doubles of one world's sensor work area (both stages; they never run at once) */
/* the position/velocity stage's work before its last array (a spatial tendon's Jacobian for
 * e_kinetic with spatial tendon armature: nv more) */
SAP_HD long sapw_sensorWorkPosVel(const sapModel* m, int need) {
  long pv = 53L * m->nbody + 6L * m->njnt + 6L * m->nv;
  if (need & SAP_SNEED_RAY) pv += 12L * m->ngeom;  /* geom poses */
  if (need & SAP_SNEED_CONTACT) pv += SAP_CONREC * sapw_sensorConCap(m);  /* contact records */
  return pv;
}

SAP_HD long sapw_sensorWork(const sapModel* m) {
  long pv = sapw_sensorWorkPosVel(m, sapw_sensorNeeds(m, SAP_STAGE_VEL));
  if (sapt_hasSpatialArmature(m)) pv += m->nv;
  long acc = 28L * m->nbody + m->nv;
  return pv > acc ? pv : acc;
}

/* ---- small fp64 helpers ------------------------------------------------------------ */

/* world pose (pos, quat, R) of a point frame given in body b's frame (lp, lq): MuJoCo's
 * mj_local2Global (pos = x_b + R_b lp, quat = q_b * lq, R from quat) */
SAP_HD void sapw_sensorFrame(const double* xpos, const double* xquat, const double* xmat, int b,
                             const double* lp, const double* lq, double* pos, double* quat,
                             double* R) {
  double t[3];
  sapu_mulMatVec3_f64(t, xmat + 9 * b, lp);
  for (int k = 0; k < 3; k++) pos[k] = xpos[3 * b + k] + t[k];
  sapu_quatMul_f64(quat, xquat + 4 * b, lq);
  sapu_quat2Mat_f64(R, quat);
}

/* body velocities cvel [omega; v at cref] and, when qacc != 0, accelerations cacc
 * = parent + cdof_dot qvel + cdof qacc with the world at -g (mj_comVel, mj_rnePostConstraint) */
SAP_HD void sapw_sensorMotion(const sapModel* m, const double* qvel, const double* qacc,
                              const double* cdof, double* cvel, double* cacc) {
  for (int k = 0; k < 6; k++) cvel[k] = 0;
  if (qacc) {
    for (int k = 0; k < 3; k++) cacc[k] = 0;
    for (int k = 0; k < 3; k++) cacc[3 + k] = -m->gravity[k];
  }
  for (int b = 1; b < m->nbody; b++) {
    int p = m->body_parentid[b];
    double* v = cvel + 6 * b;
    double* a = qacc ? cacc + 6 * b : (double*)0;
    for (int k = 0; k < 6; k++) v[k] = cvel[6 * p + k];
    if (a)
      for (int k = 0; k < 6; k++) a[k] = cacc[6 * p + k];
    for (int j = m->body_jntadr[b]; j < m->body_jntadr[b] + m->body_jntnum[b]; j++) {
      int d = m->jnt_dofadr[j], type = m->jnt_type[j], nrot = 1;
      double s[6], sdot[6], vbefore[6];
      if (type == SAP_JNT_FREE) {  /* translations: cdof_dot = 0 (root joint) */
        for (int i = d; i < d + 3; i++)
          for (int k = 0; k < 6; k++) {
            v[k] += cdof[6 * i + k] * qvel[i];
            if (a) a[k] += cdof[6 * i + k] * qacc[i];
          }
        d += 3;
      }
      if (type == SAP_JNT_FREE || type == SAP_JNT_BALL) nrot = 3;
      for (int k = 0; k < 6; k++) vbefore[k] = v[k];
      for (int i = d; i < d + nrot; i++) {
        for (int k = 0; k < 6; k++) s[k] = cdof[6 * i + k];
        sapu_crossMotion_f64(sdot, vbefore, s);
        for (int k = 0; k < 6; k++) {
          if (a) a[k] += sdot[k] * qvel[i] + s[k] * qacc[i];
          v[k] += s[k] * qvel[i];
        }
      }
    }
  }
}

/* 6D velocity (or acceleration with the omega x v term) of the point pos moving with body b,
 * from the body's spatial vector X at cref: [X_ang; X_lin + X_ang x (pos - cref)] */
SAP_HD void sapw_sensorPoint(const double* X, const double* cref, const double* pos, double* out) {
  double r[3], c[3];
  for (int k = 0; k < 3; k++) r[k] = pos[k] - cref[k];
  sapu_cross3_f64(c, X, r);
  for (int k = 0; k < 3; k++) {
    out[k] = X[k];
    out[3 + k] = X[3 + k] + c[k];
  }
}

/* clamp by cutoff: real data to [-c, c], positive data from above (apply_cutoff; contact and
 * fromto sensors are not clamped, fromto and distance read it as their collision margin) */
SAP_HD void sapw_sensorCutoff(const sapModel* m, int i, double* out) {
  double c = m->sensor_cutoff[i];
  if (!(c > 0) || m->sensor_type[i] == SAP_SENS_CONTACT || m->sensor_type[i] == SAP_SENS_GEOMFROMTO) return;
  for (int k = 0; k < m->sensor_dim[i]; k++) {
    if (m->sensor_datatype[i] == 0) out[k] = out[k] < -c ? -c : (out[k] > c ? c : out[k]);
    else if (m->sensor_datatype[i] == 1) out[k] = out[k] > c ? c : out[k];
  }
}

/* t-interval where a quadratic a t^2 + b t + c <= 0 (a > 0); 0 when empty */
SAP_HD int sapw_quadInterval(double a, double b, double c, double* lo, double* hi) {
  double disc = b * b - 4 * a * c;
  if (!(a > 0) || disc < 0) return 0;
  double s = sqrt(disc);
  *lo = (-b - s) / (2 * a);
  *hi = (-b + s) / (2 * a);
  return 1;
}

/* t-interval where |p + t u| <= s along one axis; 0 when empty */
SAP_HD int sapw_slabInterval(double p, double u, double s, double* lo, double* hi) {
  if (u == 0) {
    *lo = -1e300; *hi = 1e300;
    return p >= -s && p <= s;
  }
  double t1 = (-s - p) / u, t2 = (s - p) / u;
  *lo = t1 < t2 ? t1 : t2;
  *hi = t1 < t2 ? t2 : t1;
  return 1;
}

/* does the ray p + t u, t >= 0 (local frame of the zone) meet the solid zone of type
 * SAP_GEOM_* with MuJoCo sizes? (mju_rayGeom >= 0 for sphere, capsule, ellipsoid,
 * cylinder, box; every shape is convex, so the ray meets it iff its t-interval reaches t >= 0) */
SAP_HD int sapw_rayHitsZone(int type, const double* size, const double* p, const double* u) {
  double lo = 0, hi = 1e300, a, b;
  if (type == SAP_GEOM_SPHERE || type == SAP_GEOM_ELLIPSOID) {
    double q[3], v[3];
    for (int k = 0; k < 3; k++) {
      double s = type == SAP_GEOM_SPHERE ? size[0] : size[k];
      q[k] = p[k] / s;
      v[k] = u[k] / s;
    }
    if (!sapw_quadInterval(sapu_dot3_f64(v, v), 2 * sapu_dot3_f64(q, v), sapu_dot3_f64(q, q) - 1, &a, &b))
      return 0;
    return b >= 0;
  }
  if (type == SAP_GEOM_BOX) {
    for (int k = 0; k < 3; k++) {
      if (!sapw_slabInterval(p[k], u[k], size[k], &a, &b)) return 0;
      lo = a > lo ? a : lo;
      hi = b < hi ? b : hi;
    }
    return lo <= hi;
  }
  if (type == SAP_GEOM_CYLINDER || type == SAP_GEOM_CAPSULE) {
    double r = size[0], hl = size[1], qa = u[0] * u[0] + u[1] * u[1];
    double qb = 2 * (p[0] * u[0] + p[1] * u[1]), qc = p[0] * p[0] + p[1] * p[1] - r * r;
    int hit = 0;
    /* the straight part: inside the infinite cylinder and within the slab |z| <= hl */
    double c0 = -1e300, c1 = 1e300;
    int in = qa > 0 ? sapw_quadInterval(qa, qb, qc, &c0, &c1) : qc <= 0;
    if (in && sapw_slabInterval(p[2], u[2], hl, &a, &b)) {
      a = a > c0 ? a : c0;
      b = b < c1 ? b : c1;
      a = a > 0 ? a : 0;
      hit = a <= b;
    }
    /* the caps of a capsule: spheres at z = +-hl */
    for (int s = -1; s <= 1 && !hit && type == SAP_GEOM_CAPSULE; s += 2) {
      double q[3] = {p[0], p[1], p[2] - s * hl};
      if (sapw_quadInterval(sapu_dot3_f64(u, u), 2 * sapu_dot3_f64(q, u), sapu_dot3_f64(q, q) - r * r, &a, &b))
        hit = b >= 0;
    }
    return hit;
  }
  return 0;
}

/* is the point p (in the zone's frame, relative to its centre) strictly inside the zone of
 * type SAP_GEOM_* with MuJoCo sizes? (mju_insideGeom: contact sensor sites, insidesite) */
SAP_HD int sapw_insideZone(int type, const double* s, const double* p) {
  double z = p[2] < -s[1] ? -s[1] : (p[2] > s[1] ? s[1] : p[2]);
  switch (type) {
    case SAP_GEOM_SPHERE: return sapu_dot3_f64(p, p) < s[0] * s[0];
    case SAP_GEOM_CAPSULE: return p[0] * p[0] + p[1] * p[1] + (p[2] - z) * (p[2] - z) < s[0] * s[0];
    case SAP_GEOM_ELLIPSOID:
      return p[0] * p[0] / (s[0] * s[0]) + p[1] * p[1] / (s[1] * s[1]) + p[2] * p[2] / (s[2] * s[2]) < 1;
    case SAP_GEOM_CYLINDER: return fabs(p[2]) < s[1] && p[0] * p[0] + p[1] * p[1] < s[0] * s[0];
    case SAP_GEOM_BOX: return fabs(p[0]) < s[0] && fabs(p[1]) < s[1] && fabs(p[2]) < s[2];
    default: return 0;
  }
}

/* the world point x inside sensor i's zone at (pos, R) */
SAP_HD int sapw_inZoneAt(const sapModel* m, int i, const double* pos, const double* R, const double* x) {
  double r[3], l[3];
  for (int k = 0; k < 3; k++) r[k] = x[k] - pos[k];
  sapu_mulMatTVec3_f64(l, R, r);
  return sapw_insideZone(m->sensor_zonetype[i], m->sensor_zonesize + 3 * i, l);
}

/* where a world's SAP impulses are after its solve (host/sensor.c fills it from the solver's
 * scratch layout, kernels/sap_problem_t.h sapw_carve) */
typedef struct sapSensorSolve {
  double h;            /* time step */
  int solved;          /* the SAP solve ran (contacts enabled): drives are implicit rows */
  long gam_off;        /* byte offset of the impulses (cd nc + ns) in the world's scratch */
  long tag_off;        /* byte offset of the scalar rows' tags (ns_max ints, sapProblem.stag) */
  long sidx_off;       /* byte offsets of the scalar rows' dofs (ns_max x snz ints, -1 ends a row) */
  long sval_off;       /* and coefficients (ns_max x snz doubles): a drive's row is its moment */
  int snz;             /* entries per scalar row (SAP_SOLVE_NNZ) */
  int ns_max;          /* scalar rows at most (SAP_SOLVE_NS) */
  int gam_fp32;        /* impulses stored in fp32 */
  int cd;              /* rows per contact */
  int midpoint;        /* contact force at the stiffness-weighted midpoint, else the witnesses */
  double kdef;         /* geom stiffness where a geom has none (midpoint weights) */
  long work_off;       /* byte offset of the sensor work area in the world's scratch */
  int need;            /* sapw_sensorNeeds(m, SAP_STAGE_ACC) */
} sapSensorSolve;

/* impulse row r of a world whose scratch is sc */
SAP_HD double sapw_sensorImpulse(const sapSensorSolve* S, const unsigned char* sc, int r) {
  const unsigned char* g = sc + S->gam_off;
  return S->gam_fp32 ? (double)((const float*)g)[r] : ((const double*)g)[r];
}

/* the scalar row slot of actuator u's drive in the solve, -1 when it has none (drive rows come
 * first, in actuator order, sapw_buildDrives; a drive left out (its row did not fit, its tree
 * sleeps, sapw_sleepRows) has no slot, so slots are found by tag, not counted) */
SAP_HD int sapw_sensorDriveSlot(const sapSensorSolve* S, const unsigned char* sc, int u) {
  const int* tag = (const int*)(sc + S->tag_off);
  for (int s = 0; s < S->ns_max && tag[s] >= 0 && SAP_ROW_KIND(tag[s]) == SAP_ROW_DRIVE; s++)
    if (SAP_ROW_ID(tag[s]) == u) return s;
  return -1;
}

/* the force of contact k (slot ci of the world's list) in the step: impulse / h per row (t1,
 * t2, n, spin, roll1, roll2), the normal's net of adhesion (MuJoCo 4's mj_contactForce reports
 * the cone force minus the adhesive pull: f_n - a, kernels/pair.h sapw_contactAdhesion) */
SAP_HD void sapw_sensorContactForce(const sapModel* m, const sapData* d, const sapSensorSolve* S,
                                    const unsigned char* sc, long ci, int k, double* g) {
  for (int r = 0; r < S->cd; r++) g[r] = sapw_sensorImpulse(S, sc, S->cd * k + r) / S->h;
  if (m->nadhesion)
    g[2] = sapw_sensorImpulse(S, sc, S->cd * k + 2) / S->h -
           sapw_contactAdhesion(m, d->con_geom[2 * ci], d->con_geom[2 * ci + 1], d->con_dist[ci]);
}

/* the force of limit id (sapw_buildLimits' numbering: joint j, or njnt + tendon t) in the
 * step: impulse / h of its first row, lower side before upper, that carries one (MuJoCo's
 * jointlimitfrc / tendonlimitfrc: efc_force of the limit's first row, >= 0 pushing back into
 * the range; MuJoCo lists a side while it is within its margin, sapsim while it may close
 * within the step, so with both sides listed the one with a force is the one MuJoCo lists
 * unless the range is narrower than the step's travel); 0 when no row or no solve */
SAP_HD double sapw_sensorLimitForce(const sapSensorSolve* S, const unsigned char* sc, int nc, int id) {
  if (!S->solved) return 0;
  const int* tag = (const int*)(sc + S->tag_off);
  for (int s = 0; s < S->ns_max && tag[s] >= 0; s++) {
    int kind = SAP_ROW_KIND(tag[s]);
    if ((kind != SAP_ROW_LIMIT_LO && kind != SAP_ROW_LIMIT_HI) || SAP_ROW_ID(tag[s]) != id) continue;
    double f = sapw_sensorImpulse(S, sc, S->cd * nc + s) / S->h;
    if (f != 0) return f;
  }
  return 0;
}

/* ---- contact sensor (MuJoCo's mjSENS_CONTACT, engine_sensor.c) ------------------------ */

/* MuJoCo's contact frame of a unit normal n (mju_makeFrame): t1 = the hint y when given
 * (plane-capsule contacts: the capsule's axis), else (0, 1, 0), or (0, 0, 1) when |n_y| >= 0.5,
 * made orthogonal to n; t2 = n x t1 */
SAP_HD void sapw_mjFrame(const double* n, const double* hint, double* t1, double* t2) {
  double y[3] = {0, 0, 0};
  if (hint) sapv3(y, hint);
  else if (n[1] < 0.5 && n[1] > -0.5) y[1] = 1;
  else y[2] = 1;
  double c = sapu_dot3_f64(n, y);
  for (int k = 0; k < 3; k++) t1[k] = y[k] - c * n[k];
  double l = sqrt(sapu_dot3_f64(t1, t1));
  for (int k = 0; k < 3; k++) t1[k] /= l > 1e-15 ? l : 1;
  sapu_cross3_f64(t2, n, t1);
}


/* MuJoCo's record of one contact: its geoms, the distance between the geoms' own surfaces,
 * the midpoint pos, MuJoCo's frame (rows n, t1, t2) and the contact's force and torque on
 * geom 1 in that frame */
typedef struct sapConRec {
  int geom[2];
  double dist, pos[3], frame[9], ft[6];
} sapConRec;

/* where a contact sensor's contacts come from: the step's list with its SAP impulses
 * (acceleration stage: d, S, sc set) or a fresh collision of the state (position stage:
 * rec holds n records of SAP_CONREC doubles: g0, g1, dist, pos, n) */
typedef struct sapConSrc {
  const sapData* d;
  long c0;  /* the world's first contact slot */
  const sapSensorSolve* S;
  const unsigned char* sc;
  const double* rec;
  int n;
  const double* gmat;  /* (ngeom x 9) geom orientations of the contacts' state */
} sapConSrc;

/* contact k of a source; 0 when it is not listed. The step's list: dist = phi + margin; listed
 * when phi < 0 (MuJoCo lists a contact while dist < margin; sapsim keeps speculative ones
 * beyond) or when SAP put a normal force through it (a speculative contact that carries force,
 * e.g. SAP's convex approximation lifting a sliding body slightly off its support), force and torque = SAP impulse / h (sapsim's frame rows t1, t2, n; spin and
 * rolling rows about n, t1, t2) projected on MuJoCo's frame */
SAP_HD int sapw_conGet(const sapModel* m, const sapConSrc* src, int k, sapConRec* c) {
  double n[3], f[3] = {0, 0, 0}, t[3] = {0, 0, 0};
  if (src->rec) {
    const double* r = src->rec + SAP_CONREC * k;
    c->geom[0] = (int)r[0];
    c->geom[1] = (int)r[1];
    c->dist = r[2];
    for (int j = 0; j < 3; j++) {
      c->pos[j] = r[3 + j];
      n[j] = r[6 + j];
    }
  } else {
    const sapData* d = src->d;
    long ci = src->c0 + k;
    const sapSensorSolve* S = src->S;
    if (!(d->con_dist[ci] < 0) && !(sapw_sensorImpulse(S, src->sc, S->cd * k + 2) > 0) &&
        !(sapw_contactAdhesion(m, d->con_geom[2 * ci], d->con_geom[2 * ci + 1], d->con_dist[ci]) > 0))
      return 0;
    const double* fr = d->con_frame + 9 * ci;
    const double* x = d->con_pos + 6 * ci;
    c->geom[0] = d->con_geom[2 * ci];
    c->geom[1] = d->con_geom[2 * ci + 1];
    int p = sapw_findPair(m, c->geom[0], c->geom[1]);
    c->dist = d->con_dist[ci] + (p >= 0 ? m->pair_margin[p] : 0);
    for (int j = 0; j < 3; j++) {
      c->pos[j] = 0.5 * (x[j] + x[3 + j]);
      n[j] = fr[6 + j];
    }
    double g[SAP_CDIM_MAX] = {0, 0, 0, 0, 0, 0};  // cd >= 3 rows written
    sapw_sensorContactForce(m, d, S, src->sc, ci, k, g);
    for (int j = 0; j < 3; j++) f[j] = fr[j] * g[0] + fr[3 + j] * g[1] + fr[6 + j] * g[2];
    for (int r = 3; r < S->cd; r++) {
      const double* ax = fr + 3 * (r == 3 ? 2 : r - 4);
      for (int j = 0; j < 3; j++) t[j] += ax[j] * g[r];
    }
  }
  /* MuJoCo orders a pair's geoms by type (pushGeomGeom): the other order turns the normal and
   * the force on the second geom around */
  if (m->geom_type[c->geom[0]] > m->geom_type[c->geom[1]]) {
    int g = c->geom[0];
    c->geom[0] = c->geom[1];
    c->geom[1] = g;
    for (int j = 0; j < 3; j++) { n[j] = -n[j]; f[j] = -f[j]; t[j] = -t[j]; }
  }
  double ax[3];
  int g1 = c->geom[1];
  int capsule = m->geom_type[c->geom[0]] == SAP_GEOM_PLANE && m->geom_type[g1] == SAP_GEOM_CAPSULE;
  for (int j = 0; j < 3 && capsule; j++) ax[j] = src->gmat[9 * g1 + 3 * j + 2];
  sapv3(c->frame, n);
  sapw_mjFrame(n, capsule ? ax : (const double*)0, c->frame + 3, c->frame + 6);
  for (int a = 0; a < 3; a++) {
    c->ft[a] = sapu_dot3_f64(c->frame + 3 * a, f);
    c->ft[3 + a] = sapu_dot3_f64(c->frame + 3 * a, t);
  }
  return 1;
}

/* does a contact side (body, geom) match a sensor object (MuJoCo's checkMatch): none and
 * site (its zone test passed) match all, a geom itself, a body itself, a subtree (xbody)
 * every body below it */
SAP_HD int sapw_conMatchSide(const sapModel* m, int body, int geom, int type, int id) {
  if (type == SAP_OBJ_UNKNOWN || type == SAP_OBJ_SITE) return 1;
  if (type == SAP_OBJ_GEOM) return id == geom;
  if (type == SAP_OBJ_BODY) return id == body;
  if (type == SAP_OBJ_XBODY) {
    while (body > id) body = m->body_parentid[body];
    return body == id;
  }
  return 0;
}

/* sensor i against contact c (MuJoCo's matchContact): 0 no match, 1 match, -1 match with the
 * normal flipped (the sensor's first object is the contact's second geom) */
SAP_HD int sapw_conMatch(const sapModel* m, const sapConRec* c, int i, const double* zpos, const double* zR) {
  int t1 = m->sensor_objtype[i], id1 = m->sensor_objid[i], t2 = m->sensor_reftype[i], id2 = m->sensor_refid[i];
  if (id2 < 0) t2 = SAP_OBJ_UNKNOWN;
  if (t1 == SAP_OBJ_UNKNOWN && t2 == SAP_OBJ_UNKNOWN) return 1;
  if (t1 == SAP_OBJ_SITE && !sapw_inZoneAt(m, i, zpos, zR, c->pos)) return 0;
  int g1 = c->geom[0], g2 = c->geom[1], b1 = m->geom_bodyid[g1], b2 = m->geom_bodyid[g2];
  int m11 = sapw_conMatchSide(m, b1, g1, t1, id1), m12 = sapw_conMatchSide(m, b2, g2, t1, id1);
  int m21 = sapw_conMatchSide(m, b1, g1, t2, id2), m22 = sapw_conMatchSide(m, b2, g2, t2, id2);
  if ((!m11 && !m12) || (!m21 && !m22)) return 0;
  if (t1 != SAP_OBJ_UNKNOWN && t2 != SAP_OBJ_UNKNOWN) return (m11 && m22) ? 1 : ((m12 && m21) ? -1 : 0);
  if (t1 != SAP_OBJ_UNKNOWN) return m11 ? 1 : -1;
  return m22 ? 1 : -1;
}

/* contact k of src when listed and matching sensor i: the match (1, -1), else 0 */
SAP_HD int sapw_conNext(const sapModel* m, const sapConSrc* src, int k, int i, const double* zpos,
                        const double* zR, sapConRec* c) {
  return sapw_conGet(m, src, k, c) ? sapw_conMatch(m, c, i, zpos, zR) : 0;
}

/* values of one contact sensor slot (copySensorData): found = the number of matches; a
 * flipped match turns the frame 180 degrees about its second tangent (normal and first
 * tangent negated, force and torque's t2 component negated: the reaction in that frame) */
SAP_HD double* sapw_conSlot(int spec, const sapConRec* c, int flip, int nfound, double* out) {
  double s = flip ? -1 : 1;
  if (spec & (1 << SAP_CONDATA_FOUND)) *out++ = nfound;
  for (int f = 0; f < 2; f++)
    if (spec & (1 << (SAP_CONDATA_FORCE + f))) {
      for (int k = 0; k < 3; k++) out[k] = c->ft[3 * f + k];
      out[2] *= s;
      out += 3;
    }
  if (spec & (1 << SAP_CONDATA_DIST)) *out++ = c->dist;
  if (spec & (1 << SAP_CONDATA_POS)) for (int k = 0; k < 3; k++) *out++ = c->pos[k];
  if (spec & (1 << SAP_CONDATA_NORMAL)) for (int k = 0; k < 3; k++) *out++ = s * c->frame[k];
  if (spec & (1 << SAP_CONDATA_TANGENT)) for (int k = 0; k < 3; k++) *out++ = s * c->frame[3 + k];
  return out;
}

/* values per slot of a dataspec: found 1, force 3, torque 3, dist 1, pos 3, normal 3, tangent 3 */
SAP_HD int sapw_conSlotSize(int spec) {
  const int size[SAP_NCONDATA] = {1, 3, 3, 1, 3, 3, 3};
  int n = 0;
  for (int k = 0; k < SAP_NCONDATA; k++) n += (spec >> k & 1) * size[k];
  return n;
}

/* contact sensor i over the contacts of src (MuJoCo's list). reduce none: the first num
 * matches in list order; mindist / maxforce: the num matches of smallest dist / largest
 * |force|, in that order (ties: list order); netforce: one slot, the matches' total wrench in
 * the world frame about their force-weighted centroid, dist 0, normal (1, 0, 0), tangent
 * (0, 1, 0) (all 0 without a match, as MuJoCo 4). zpos, zR: the site zone's pose (site matching) */
SAP_HD void sapw_sensorContact(const sapModel* m, const sapConSrc* src, int i, const double* zpos,
                               const double* zR, double* out) {
  int spec = m->sensor_condata[2 * i], reduce = m->sensor_condata[2 * i + 1], nc = src->n;
  int dim = m->sensor_dim[i], num = dim / sapw_conSlotSize(spec), nmatch = 0;
  sapConRec c;
  for (int k = 0; k < dim; k++) out[k] = 0;
  for (int k = 0; k < nc; k++) nmatch += sapw_conNext(m, src, k, i, zpos, zR, &c) != 0;
  if (reduce == SAP_REDUCE_NETFORCE && nmatch > 0) {  // no match: zeros (MuJoCo 4)
    /* point = sum_j |f_j| x_j / sum_j |f_j|; F = sum_j f_j, T = sum_j tau_j + (x_j - point) x f_j */
    double pt[3] = {0, 0, 0}, wsum = 0, F[3] = {0, 0, 0}, T[3] = {0, 0, 0}, fw[3], tw[3], r[3], rf[3];
    for (int pass = 0; pass < 2; pass++) {
      for (int k = 0; k < nc; k++) {
        int mt = sapw_conNext(m, src, k, i, zpos, zR, &c);
        if (!mt) continue;
        for (int j = 0; j < 6; j++) c.ft[j] *= mt;
        if (pass == 0) {
          double fn = sqrt(sapu_dot3_f64(c.ft, c.ft));
          for (int j = 0; j < 3; j++) pt[j] += fn * c.pos[j];
          wsum += fn;
          continue;
        }
        sapu_mulMatTVec3_f64(fw, c.frame, c.ft);
        sapu_mulMatTVec3_f64(tw, c.frame, c.ft + 3);
        for (int j = 0; j < 3; j++) r[j] = c.pos[j] - pt[j];
        sapu_cross3_f64(rf, r, fw);
        for (int j = 0; j < 3; j++) {
          F[j] += fw[j];
          T[j] += tw[j] + rf[j];
        }
      }
      for (int j = 0; j < 3 && pass == 0; j++) pt[j] /= wsum > 1e-15 ? wsum : 1e-15;  // mjMINVAL
    }
    if (spec & (1 << SAP_CONDATA_FOUND)) *out++ = nmatch;
    if (spec & (1 << SAP_CONDATA_FORCE)) for (int j = 0; j < 3; j++) *out++ = F[j];
    if (spec & (1 << SAP_CONDATA_TORQUE)) for (int j = 0; j < 3; j++) *out++ = T[j];
    if (spec & (1 << SAP_CONDATA_DIST)) *out++ = 0;
    if (spec & (1 << SAP_CONDATA_POS)) for (int j = 0; j < 3; j++) *out++ = pt[j];
    if (spec & (1 << SAP_CONDATA_NORMAL)) { out[0] = 1; out += 3; }
    if (spec & (1 << SAP_CONDATA_TANGENT)) out[1] = 1;
    return;
  }
  /* slot j: the first match after slot j-1 in (criterion, list index) order */
  double lastc = -1e300, bc = 0;
  int lastk = -1, nslot = num < nmatch ? num : nmatch;
  for (int j = 0; j < nslot; j++) {
    int best = -1, bflip = 0;
    for (int k = 0; k < nc; k++) {
      int mt = sapw_conNext(m, src, k, i, zpos, zR, &c);
      if (!mt) continue;
      double cr = reduce == SAP_REDUCE_MINDIST ? c.dist : reduce == SAP_REDUCE_MAXFORCE ? -sapu_dot3_f64(c.ft, c.ft) : 0;
      if (cr < lastc || (cr == lastc && k <= lastk)) continue;  // at or before slot j-1
      if (best < 0 || cr < bc) { best = k; bc = cr; bflip = mt < 0; }
    }
    if (best < 0) break;
    sapw_conGet(m, src, best, &c);
    lastc = bc;
    lastk = best;
    out = sapw_conSlot(spec, &c, bflip, nmatch, out);
  }
}

/* the position stage's contact list: every candidate pair collided in fp64 at MuJoCo's margin
 * (the pair's; contacts with dist < margin), at most cap records (SAP_CONREC doubles each,
 * sapw_sensorWork's room); returns the count */
SAP_HD int sapw_sensorCollide(const sapModel* m, const double* gpos, const double* gmat, double* rec, int cap) {
  sapcContact_f64 con[SAPC_PAIRCON];
  int n = 0;
  for (int p = 0; p < m->npair_max; p++) {
    int g0 = m->pair_geom[2 * p], g1 = m->pair_geom[2 * p + 1];
    int nk = sapw_collidePair(m, gpos, gmat, g0, g1, m->pair_margin[p], 1, con);
    for (int k = 0; k < nk && n < cap; k++, n++) {
      double* r = rec + SAP_CONREC * n;
      r[0] = g0;
      r[1] = g1;
      r[2] = con[k].dist;
      for (int j = 0; j < 3; j++) {
        r[3 + j] = con[k].pos[j];
        r[6 + j] = con[k].n[j];
      }
    }
  }
  return n;
}


/* ---- geom distance sensors (MuJoCo's mjSENS_GEOMDIST / GEOMNORMAL / GEOMFROMTO) -------- */

/* MuJoCo's mj_geomDistance through sapsim's narrow phase: the smallest contact distance of
 * geoms g1, g2 collided with margin = cutoff (cutoff when none; fromto untouched), fromto the
 * witness points pos -+ dist/2 n from g1's surface to g2's. Load refuses the type pairs where
 * MuJoCo runs its exact CCD distance (mjc_Convex, mjc_BoxBox) or has no collider */
SAP_HD double sapw_geomDistance(const sapModel* m, const double* gpos, const double* gmat, int g1, int g2,
                                double cutoff, double* fromto) {
  sapcContact_f64 con[SAPC_PAIRCON];
  int n = sapw_collidePair(m, gpos, gmat, g1, g2, cutoff, 1, con), best = -1;
  double dist = cutoff;
  for (int k = 0; k < n; k++)
    if (con[k].dist < dist) { dist = con[k].dist; best = k; }
  for (int j = 0; j < 3 && best >= 0; j++) {
    fromto[j] = con[best].pos[j] - 0.5 * dist * con[best].n[j];
    fromto[3 + j] = con[best].pos[j] + 0.5 * dist * con[best].n[j];
  }
  return dist;
}

/* distance, normal or fromto sensor i: the smallest distance over the geom pairs of object 1
 * (a geom or a body's geoms) and object 2; normal = (to - from) normalised (0 when none) */
SAP_HD void sapw_sensorGeomDist(const sapModel* m, int i, const double* gpos, const double* gmat, double* out) {
  double cutoff = m->sensor_cutoff[i], dist = cutoff, fromto[6] = {0, 0, 0, 0, 0, 0}, ft[6];
  int id1 = m->sensor_objid[i], id2 = m->sensor_refid[i];
  int a1 = m->sensor_objtype[i] == SAP_OBJ_BODY ? m->body_geomadr[id1] : id1;
  int n1 = m->sensor_objtype[i] == SAP_OBJ_BODY ? m->body_geomnum[id1] : 1;
  int a2 = m->sensor_reftype[i] == SAP_OBJ_BODY ? m->body_geomadr[id2] : id2;
  int n2 = m->sensor_reftype[i] == SAP_OBJ_BODY ? m->body_geomnum[id2] : 1;
  for (int g1 = a1; g1 < a1 + n1; g1++)
    for (int g2 = a2; g2 < a2 + n2; g2++) {
      for (int k = 0; k < 6; k++) ft[k] = 0;
      double dn = sapw_geomDistance(m, gpos, gmat, g1, g2, cutoff, ft);
      if (dn < dist) {
        dist = dn;
        for (int k = 0; k < 6; k++) fromto[k] = ft[k];
      }
    }
  int t = m->sensor_type[i];
  if (t == SAP_SENS_GEOMDIST) out[0] = dist;
  else if (t == SAP_SENS_GEOMFROMTO) for (int k = 0; k < 6; k++) out[k] = fromto[k];
  else {
    double nrm[3] = {fromto[3] - fromto[0], fromto[4] - fromto[1], fromto[5] - fromto[2]};
    double l = sqrt(sapu_dot3_f64(nrm, nrm));
    for (int k = 0; k < 3; k++) out[k] = l > 0 ? nrm[k] / l : nrm[k];
  }
}

/* ---- position and velocity stage -------------------------------------------------- */

/* rangefinder i on a site at (pos, R): the ray along the site's z axis, the site's body left
 * out; MuJoCo's fill_raydata for a site, in dataspec order: dist (-1: no hit), dir, origin,
 * point, normal (dir, point, normal 0 without a hit), depth (= dist, -1 without a hit) */
SAP_HD void sapw_sensorRangefinder(const sapModel* m, int i, const double* gpos, const double* gmat,
                                   const double* pos, const double* R, double* out) {
  int spec = m->sensor_raydata[i], geom;
  double v[3] = {R[2], R[5], R[8]}, n[3];
  double x = sapw_ray(m, gpos, gmat, pos, v, m->sensor_body[2 * i], &geom, (spec & 16) ? n : (double*)0);
  int hit = x >= 0;
  if (spec & 1) *out++ = x;
  if (spec & 2) for (int k = 0; k < 3; k++) *out++ = hit ? v[k] : 0;
  if (spec & 4) for (int k = 0; k < 3; k++) *out++ = pos[k];
  if (spec & 8) for (int k = 0; k < 3; k++) *out++ = hit ? pos[k] + x * v[k] : 0;
  if (spec & 16) for (int k = 0; k < 3; k++) *out++ = hit ? n[k] : 0;
  if (spec & 32) *out++ = hit ? x : -1;
}

/* subtree coms, linear velocities and angular momenta (mj_comPos, mj_subtreeVel) */
SAP_HD void sapw_sensorSubtree(const sapModel* m, const double* xipos, const double* ximat,
                               const double* cref, const double* cvel, int vel, double* com,
                               double* lin, double* ang, double* bvel, double* mass) {
  int nb = m->nbody;
  for (int b = 0; b < nb; b++) {
    mass[b] = m->body_mass[b];
    for (int k = 0; k < 3; k++) com[3 * b + k] = xipos[3 * b + k] * m->body_mass[b];
  }
  for (int b = nb - 1; b > 0; b--) {
    int p = m->body_parentid[b];
    mass[p] += mass[b];
    for (int k = 0; k < 3; k++) com[3 * p + k] += com[3 * b + k];
  }
  for (int b = 0; b < nb; b++)
    for (int k = 0; k < 3; k++)
      com[3 * b + k] = mass[b] > 1e-15 ? com[3 * b + k] / mass[b] : xipos[3 * b + k];
  if (!vel) return;
  for (int b = 0; b < nb; b++) {
    /* body com velocity (zero for a body without dofs up to its weld) and momenta */
    double* bv = bvel + 6 * b;
    if (b == 0 || m->body_dofnum[m->body_weldid[b]] == 0)
      for (int k = 0; k < 6; k++) bv[k] = 0;
    else
      sapw_sensorPoint(cvel + 6 * b, cref + 3 * b, xipos + 3 * b, bv);
    double dv[3];
    for (int k = 0; k < 3; k++) lin[3 * b + k] = bv[3 + k] * m->body_mass[b];
    sapu_mulMatTVec3_f64(dv, ximat + 9 * b, bv);
    for (int k = 0; k < 3; k++) dv[k] *= m->body_inertia[3 * b + k];
    sapu_mulMatVec3_f64(ang + 3 * b, ximat + 9 * b, dv);
  }
  for (int b = nb - 1; b >= 0; b--) {
    if (b)
      for (int k = 0; k < 3; k++) lin[3 * m->body_parentid[b] + k] += lin[3 * b + k];
    double s = 1 / (mass[b] > 1e-15 ? mass[b] : 1e-15);
    for (int k = 0; k < 3; k++) lin[3 * b + k] *= s;
  }
  for (int b = nb - 1; b > 0; b--) {
    int p = m->body_parentid[b];
    double dx[3], dv[3], dL[3];
    for (int k = 0; k < 3; k++) {
      dx[k] = xipos[3 * b + k] - com[3 * b + k];
      dv[k] = (bvel[6 * b + 3 + k] - lin[3 * b + k]) * m->body_mass[b];
    }
    sapu_cross3_f64(dL, dx, dv);
    for (int k = 0; k < 3; k++) ang[3 * b + k] += dL[k];
    for (int k = 0; k < 3; k++) ang[3 * p + k] += ang[3 * b + k];
    for (int k = 0; k < 3; k++) {
      dx[k] = com[3 * b + k] - com[3 * p + k];
      dv[k] = (lin[3 * b + k] - lin[3 * p + k]) * mass[b];
    }
    sapu_cross3_f64(dL, dx, dv);
    for (int k = 0; k < 3; k++) ang[3 * p + k] += dL[k];
  }
}

/* transmission length and velocity of actuator u (actuatorpos / actuatorvel) */
SAP_HD void sapw_sensorActuatorLength(const sapModel* m, const double* qpos, const double* qvel,
                                      const sapTenFrames_f64* fr, int u, double* len, double* vel) {
  sapw_actuatorLength_f64(m, qpos, qvel, fr, u, len, vel);
}

/* jointlimitpos / jointlimitvel, tendonlimitpos / tendonlimitvel (MuJoCo's mj_sensorPos/Vel over
 * the limit rows of mj_instantiateLimit): the first side within its margin, lower before upper,
 * gives distance - margin and the row velocity (+v at the lower side, -v at the upper); 0 when
 * neither side is within its margin or the joint or tendon is not limited. x, v: the joint's
 * or tendon's value and velocity */
SAP_HD double sapw_sensorLimit(int limited, const double* range, double margin, double x, double v, int vel) {
  if (!limited) return 0;
  double lo = x - range[0], hi = range[1] - x;
  if (lo < margin) return vel ? v : lo - margin;
  if (hi < margin) return vel ? -v : hi - margin;
  return 0;
}

/* the same on ball joint j (MuJoCo's one cone row, sapw_ballLimit): within the margin,
 * dist - margin or the row velocity -axis . qvel over the joint's 3 dofs; else 0 */
SAP_HD double sapw_sensorBallLimit(const sapModel* m, const double* qpos, const double* qvel, int j, int vel) {
  if (!m->jnt_limited[j]) return 0;
  double axis[3];
  double dist = sapw_ballLimit(qpos + m->jnt_qposadr[j], m->jnt_range + 2 * j, axis);
  if (!(dist < m->jnt_margin[j])) return 0;
  const double* v = qvel + m->jnt_dofadr[j];
  return vel ? -axis[0] * v[0] - axis[1] * v[1] - axis[2] * v[2] : dist - m->jnt_margin[j];
}

/* e_potential (MuJoCo's mj_energyPos): gravity -sum_b m_b g . xipos_b, plus 1/2 k x^2 of the
 * hinge and slide springs (x = q - qpos_spring) and of the tendons' springs (x outside the dead
 * band lengthspring; spatial tendons through fr); springs on ball and free joints are refused at
 * load */
SAP_HD double sapw_sensorPotential(const sapModel* m, const double* qpos, const double* qvel,
                                   const sapTenFrames_f64* fr, const double* xipos) {
  double e = 0;
  for (int b = 1; b < m->nbody; b++) e -= m->body_mass[b] * sapu_dot3_f64(m->gravity, xipos + 3 * b);
  for (int j = 0; j < m->njnt; j++) {
    int a = m->jnt_qposadr[j];
    const double* poly = m->jnt_stiffnesspoly + SAP_NPOLY * j;
    int t = m->jnt_type[j];
    if (!sapw_hasSpring(m->jnt_stiffness[j], poly)) continue;
    if (t == SAP_JNT_HINGE || t == SAP_JNT_SLIDE)
      e += sapw_springEnergy(m->jnt_stiffness[j], poly, qpos[a] - m->qpos_spring[a]);
    else
      e += sapw_ballSpringEnergy(t == SAP_JNT_FREE, m->jnt_stiffness[j], poly, qpos + a, m->qpos_spring + a);
  }
  for (int k = 0; k < m->ntendon; k++) {
    const double* poly = m->tendon_stiffnesspoly + SAP_NPOLY * k;
    if (!sapw_hasSpring(m->tendon_stiffness[k], poly)) continue;
    double l, v, lo = m->tendon_lengthspring[2 * k], hi = m->tendon_lengthspring[2 * k + 1];
    sapw_tendonState_f64(m, qpos, qvel, fr, k, &l, &v);
    double x = l > hi ? l - hi : l < lo ? l - lo : 0;
    e += sapw_springEnergy(m->tendon_stiffness[k], poly, x);
  }
  return e;
}

/* e_kinetic (MuJoCo's mj_energyVel, 1/2 v' M v): the bodies' 1/2 (m |v_com|^2 + w' I w) from
 * their velocities cvel = [w; v at cref] (I = ximat diag(inertia) ximat'), plus the armature's
 * 1/2 a v^2 on each dof (M's diagonal term) and each tendon's M entries of a J'J (a dof and its
 * ancestors: sapw_tendonArmature), a spatial tendon's J at this pose in tenJ (nv) */
SAP_HD double sapw_sensorKinetic(const sapModel* m, const double* qvel, const double* cvel, const double* cref,
                                 const double* xipos, const double* ximat, const sapTenFrames_f64* tfr,
                                 double* tenJ) {
  double e = 0;
  for (int b = 1; b < m->nbody; b++) {
    const double* w = cvel + 6 * b;
    double r[3], vc[3], wl[3];
    for (int k = 0; k < 3; k++) r[k] = xipos[3 * b + k] - cref[3 * b + k];  // cref: per body, its tree's point
    sapu_cross3_f64(vc, w, r);
    for (int k = 0; k < 3; k++) vc[k] += w[3 + k];
    sapu_mulMatTVec3_f64(wl, ximat + 9 * b, w);  // angular velocity in the inertia frame
    const double* I = m->body_inertia + 3 * b;
    e += 0.5 * (m->body_mass[b] * sapu_dot3_f64(vc, vc) + I[0] * wl[0] * wl[0] + I[1] * wl[1] * wl[1] +
                I[2] * wl[2] * wl[2]);
  }
  for (int i = 0; i < m->nv; i++) e += 0.5 * m->dof_armature[i] * qvel[i] * qvel[i];
  for (int t = 0; t < m->ntendon; t++) {
    double arm = m->tendon_armature[t];
    if (arm == 0) continue;
    if (m->tendon_spatial[t]) {  // 1/2 a (sum over i, j = i and its ancestors, (2 - [i = j]) J_i J_j v_i v_j)
      for (int i = 0; i < m->nv; i++) tenJ[i] = 0;
      sapTenSink k = sapt_sink();
      k.c = 1;
      k.dense = tenJ;
      sapt_spatial(m, tfr->xpos, tfr->xmat, tfr->cref, tfr->cdof, t, &k);
      for (int i = 0; i < m->nv; i++)
        for (int j = i; tenJ[i] != 0 && j >= 0; j = m->dof_parentid[j])
          e += (j == i ? 0.5 : 1) * arm * tenJ[i] * tenJ[j] * qvel[i] * qvel[j];
      continue;
    }
    for (int u = m->tendon_adr[t]; u < m->tendon_adr[t] + m->tendon_num[t]; u++)
      for (int w = m->tendon_adr[t]; w < m->tendon_adr[t] + m->tendon_num[t]; w++) {
        int i, j;
        double a = sapw_tendonArmaturePair(m, t, u, w, &i, &j);
        e += 0.5 * a * qvel[i] * qvel[j];
      }
  }
  return e;
}

/* every position- and velocity-stage sensor of a world from its state; work holds
 * sapw_sensorWork(m) doubles; need = sapw_sensorNeeds(m, SAP_STAGE_VEL) (computed once per
 * batch). Acceleration-stage values are left as they are. */
SAP_HD void sapw_sensorPosVel(const sapModel* m, int need, const double* qpos, const double* qvel,
                              const double* mpos, const double* mquat, double time,
                              double* sensordata, double* work) {
  int nb = m->nbody;
  double* xpos = work;
  double* xquat = xpos + 3 * nb;
  double* xmat = xquat + 4 * nb;
  double* xipos = xmat + 9 * nb;
  double* ximat = xipos + 3 * nb;
  double* cref = ximat + 9 * nb;
  double* cvel = cref + 3 * nb;
  double* com = cvel + 6 * nb;
  double* lin = com + 3 * nb;
  double* ang = lin + 3 * nb;
  double* bvel = ang + 3 * nb;
  double* mass = bvel + 6 * nb;
  double* cdof = mass + nb;                        /* 53 nb so far */
  double* xanchor = cdof + 6 * m->nv;
  double* xaxis = xanchor + 3 * m->njnt;
  double* gpos = xaxis + 3 * m->njnt;              /* (ngeom x 3) with rangefinders */
  double* gmat = gpos + 3 * m->ngeom;              /* (ngeom x 9) */
  double* crec = gmat + 9 * m->ngeom;              /* (ncon x SAP_CONREC) with contact sensors */
  int ncol = 0;
  if (need & SAP_SNEED_KIN) {
    sapw_kinematics_f64(m, qpos, mpos, mquat, xpos, xquat, xmat, xipos, ximat, xanchor, xaxis,
                        (double*)0, (double*)0, (const int*)0);  /* frames come from the bodies */
    if (need & SAP_SNEED_VEL) sapw_comPos_f64(m, xpos, xmat, xanchor, xaxis, cref, cdof, (const int*)0);
  }
  if (need & SAP_SNEED_RAY)
    for (int g = 0; g < m->ngeom; g++) {
      double gq[4];
      sapw_sensorFrame(xpos, xquat, xmat, m->geom_bodyid[g], m->geom_pos + 3 * g, m->geom_quat + 4 * g,
                       gpos + 3 * g, gq, gmat + 9 * g);
    }
  if (need & SAP_SNEED_CONTACT) ncol = sapw_sensorCollide(m, gpos, gmat, crec, (int)sapw_sensorConCap(m));
  if (need & SAP_SNEED_VEL) sapw_sensorMotion(m, qvel, (const double*)0, cdof, cvel, (double*)0);
  if (need & SAP_SNEED_SUBTREE)
    sapw_sensorSubtree(m, xipos, ximat, cref, cvel, (need & SAP_SNEED_SUBVEL) != 0, com, lin, ang, bvel, mass);

  sapTenFrames_f64 tfr = {xpos, xmat, cref, cdof};
  for (int i = 0; i < m->nsensor; i++) {
    if (m->sensor_stage[i] == SAP_STAGE_ACC) continue;
    int t = m->sensor_type[i], id = m->sensor_objid[i];
    int b = m->sensor_body[2 * i], rb = m->sensor_body[2 * i + 1];
    double* out = sensordata + m->sensor_adr[i];
    double pos[3] = {0, 0, 0}, quat[4] = {1, 0, 0, 0}, R[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    double rpos[3] = {0, 0, 0}, rquat[4] = {1, 0, 0, 0}, rR[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    double V[6], Vr[6], tmp[3], tmp2[3];
    const double* fr = m->sensor_frame + 14 * i;
    if (b >= 0) sapw_sensorFrame(xpos, xquat, xmat, b, fr, fr + 3, pos, quat, R);
    if (rb >= 0) sapw_sensorFrame(xpos, xquat, xmat, rb, fr + 7, fr + 10, rpos, rquat, rR);
    switch (t) {
      case SAP_SENS_JOINTPOS: out[0] = qpos[m->jnt_qposadr[id]]; break;
      case SAP_SENS_JOINTVEL: out[0] = qvel[m->jnt_dofadr[id]]; break;
      case SAP_SENS_TENDONPOS:
      case SAP_SENS_TENDONVEL: {
        double l, v;
        sapw_tendonState_f64(m, qpos, qvel, &tfr, id, &l, &v);
        out[0] = t == SAP_SENS_TENDONPOS ? l : v;
        break;
      }
      case SAP_SENS_JOINTLIMITPOS:
      case SAP_SENS_JOINTLIMITVEL:
        if (m->jnt_type[id] == SAP_JNT_BALL)
          out[0] = sapw_sensorBallLimit(m, qpos, qvel, id, t == SAP_SENS_JOINTLIMITVEL);
        else
          out[0] = sapw_sensorLimit(m->jnt_limited[id], m->jnt_range + 2 * id, m->jnt_margin[id],
                                    qpos[m->jnt_qposadr[id]], qvel[m->jnt_dofadr[id]], t == SAP_SENS_JOINTLIMITVEL);
        break;
      case SAP_SENS_TENDONLIMITPOS:
      case SAP_SENS_TENDONLIMITVEL: {
        double l, v;
        sapw_tendonState_f64(m, qpos, qvel, &tfr, id, &l, &v);
        out[0] = sapw_sensorLimit(m->tendon_limited[id], m->tendon_range + 2 * id, m->tendon_margin[id], l, v,
                                  t == SAP_SENS_TENDONLIMITVEL);
        break;
      }
      case SAP_SENS_E_POTENTIAL: out[0] = sapw_sensorPotential(m, qpos, qvel, &tfr, xipos); break;
      case SAP_SENS_E_KINETIC:
        out[0] = sapw_sensorKinetic(m, qvel, cvel, cref, xipos, ximat, &tfr, work + sapw_sensorWorkPosVel(m, need));
        break;
      case SAP_SENS_ACTUATORPOS:
      case SAP_SENS_ACTUATORVEL: {
        double l, v;
        sapw_sensorActuatorLength(m, qpos, qvel, &tfr, id, &l, &v);
        out[0] = t == SAP_SENS_ACTUATORPOS ? l : m->actuation_off ? 0 : v;  // MuJoCo zeroes the velocity
        break;
      }
      case SAP_SENS_BALLQUAT: {
        for (int k = 0; k < 4; k++) out[k] = qpos[m->jnt_qposadr[id] + k];
        double n = sqrt(out[0] * out[0] + out[1] * out[1] + out[2] * out[2] + out[3] * out[3]);
        if (n < 1e-15) { out[0] = 1; out[1] = out[2] = out[3] = 0; }
        else for (int k = 0; k < 4; k++) out[k] /= n;
        break;
      }
      case SAP_SENS_BALLANGVEL: sapv3(out, qvel + m->jnt_dofadr[id]); break;
      case SAP_SENS_CLOCK: out[0] = time; break;
      case SAP_SENS_MAGNETOMETER: sapu_mulMatTVec3_f64(out, R, m->magnetic); break;  // site frame
      case SAP_SENS_RANGEFINDER: sapw_sensorRangefinder(m, i, gpos, gmat, pos, R, out); break;
      case SAP_SENS_FRAMEPOS:
        if (rb < 0) sapv3(out, pos);
        else {
          for (int k = 0; k < 3; k++) tmp[k] = pos[k] - rpos[k];
          sapu_mulMatTVec3_f64(out, rR, tmp);
        }
        break;
      case SAP_SENS_FRAMEXAXIS:
      case SAP_SENS_FRAMEYAXIS:
      case SAP_SENS_FRAMEZAXIS: {
        int c = t - SAP_SENS_FRAMEXAXIS;
        for (int k = 0; k < 3; k++) tmp[k] = R[3 * k + c];
        if (rb < 0) sapv3(out, tmp);
        else sapu_mulMatTVec3_f64(out, rR, tmp);
        break;
      }
      case SAP_SENS_FRAMEQUAT:
        if (rb < 0) for (int k = 0; k < 4; k++) out[k] = quat[k];
        else {
          double qi[4] = {rquat[0], -rquat[1], -rquat[2], -rquat[3]};
          sapu_quatMul_f64(out, qi, quat);
        }
        break;
      case SAP_SENS_GYRO:
      case SAP_SENS_VELOCIMETER:
        sapw_sensorPoint(cvel + 6 * b, cref + 3 * b, pos, V);
        sapu_mulMatTVec3_f64(out, R, t == SAP_SENS_GYRO ? V : V + 3);
        break;
      case SAP_SENS_FRAMELINVEL:
      case SAP_SENS_FRAMEANGVEL:
        sapw_sensorPoint(cvel + 6 * b, cref + 3 * b, pos, V);
        if (rb >= 0) {
          /* relative to the moving reference: subtract its velocity, add (x - x_ref) x w_ref,
           * then express in the reference frame */
          sapw_sensorPoint(cvel + 6 * rb, cref + 3 * rb, rpos, Vr);
          for (int k = 0; k < 6; k++) V[k] -= Vr[k];
          for (int k = 0; k < 3; k++) tmp[k] = pos[k] - rpos[k];
          sapu_cross3_f64(tmp2, tmp, Vr);
          for (int k = 0; k < 3; k++) V[3 + k] += tmp2[k];
          sapu_mulMatTVec3_f64(tmp, rR, V);
          sapu_mulMatTVec3_f64(tmp2, rR, V + 3);
          sapv3(V, tmp);
          sapv3(V + 3, tmp2);
        }
        sapv3(out, t == SAP_SENS_FRAMEANGVEL ? V : V + 3);
        break;
      case SAP_SENS_INSIDESITE: out[0] = sapw_inZoneAt(m, i, rpos, rR, pos); break;
      case SAP_SENS_GEOMDIST:
      case SAP_SENS_GEOMNORMAL:
      case SAP_SENS_GEOMFROMTO: sapw_sensorGeomDist(m, i, gpos, gmat, out); break;
      case SAP_SENS_CONTACT: {
        sapConSrc src = {(const sapData*)0, 0, (const sapSensorSolve*)0, (const unsigned char*)0, crec, ncol, gmat};
        sapw_sensorContact(m, &src, i, pos, R, out);
        break;
      }
      case SAP_SENS_SUBTREECOM: sapv3(out, com + 3 * id); break;
      case SAP_SENS_SUBTREELINVEL: sapv3(out, lin + 3 * id); break;
      case SAP_SENS_SUBTREEANGMOM: sapv3(out, ang + 3 * id); break;
      default: break;
    }
    sapw_sensorCutoff(m, i, out);
  }
}

/* ---- acceleration stage -------------------------------------------------------------- */

/* actuator u's force in the step: the SAP drive row's impulse / h (position and velocity
 * actuators under the solve), else the explicit law at the step's start (dynamics_t.h) */
SAP_HD double sapw_sensorActuatorForce(const sapModel* m, const sapData* d, int w, const sapSensorSolve* S,
                                       const unsigned char* sc, int nc, int u) {
  const double* qpos = d->qpos + (long)w * m->nq;
  const double* qvel = d->qvel + (long)w * m->nv;
  if (m->actuation_off || m->actuator_disabled[u]) return 0;  /* MuJoCo's actuator_force is 0 */
  if (S->solved && sapa_isDrive(m, u)) {
    int slot = sapw_sensorDriveSlot(S, sc, u);
    return slot < 0 ? 0 : sapw_sensorImpulse(S, sc, S->cd * nc + slot) / S->h;
  }
  sapTenFrames_f64 fr = {d->xpos + (long)w * 3 * m->nbody, d->xmat + (long)w * 9 * m->nbody,
                         d->cref + (long)w * 3 * m->nbody, d->cdof + (long)w * 6 * m->nv};
  return sapw_actuatorForce_f64(m, S->h, qpos, qvel, &fr, d->ctrl_in + (long)w * m->nu, d->act + (long)w * m->na, u);
}

/* the contact point of side s (0, 1) of contact ci where the SAP solve applies its force */
SAP_HD void sapw_sensorContactPoint(const sapModel* m, const sapData* d, long ci, int s,
                                    const sapSensorSolve* S, double* x) {
  int g0 = d->con_geom[2 * ci], g1 = d->con_geom[2 * ci + 1];
  const double* x0 = d->con_pos + 6 * ci;
  double a0 = s ? 0 : 1;
  if (S->midpoint) a0 = sapw_midpointAlpha0(m->geom_k[g0], m->geom_k[g1], S->kdef);
  for (int k = 0; k < 3; k++) x[k] = a0 * x0[k] + (1 - a0) * x0[3 + k];
}

/* every acceleration-stage sensor of world w at the start state of the step just solved
 * (d's kinematics, cref, cdof, qpos, qvel) with qacc = (vnext - qvel) / h and contact
 * forces = impulses / h; runs after the solve, before integration. */
SAP_HD void sapw_sensorAcc(const sapModel* m, const sapData* d, int w, const sapSensorSolve* S) {
  int nb = m->nbody, nv = m->nv;
  unsigned char* sc = d->scratch + (long)w * d->nscratch;
  double* cinert = (double*)(sc + S->work_off);
  double* cvel = cinert + 10 * nb;
  double* cacc = cvel + 6 * nb;
  double* cfrc = cacc + 6 * nb;
  double* qacc = cfrc + 6 * nb;
  const double* xpos = d->xpos + (long)w * nb * 3;
  const double* xquat = d->xquat + (long)w * nb * 4;
  const double* xmat = d->xmat + (long)w * nb * 9;
  const double* xipos = d->xipos + (long)w * nb * 3;
  const double* ximat = d->ximat + (long)w * nb * 9;
  const double* cref = d->cref + (long)w * nb * 3;
  const double* cdof = d->cdof + (long)w * nv * 6;
  const double* qvel = d->qvel + (long)w * nv;
  const double* vnext = d->vnext + (long)w * nv;
  double* sensordata = d->sensordata + (long)w * m->nsensordata;
  int nc = d->ncon[w] < d->ncon_max ? d->ncon[w] : d->ncon_max;
  if (!S->solved || nc < 0) nc = 0;

  /* motion: cvel, cacc (world at -g) */
  if (S->need & SAP_SNEED_MOTION) {
    for (int i = 0; i < nv; i++) qacc[i] = (vnext[i] - qvel[i]) / S->h;
    sapw_sensorMotion(m, qvel, qacc, cdof, cvel, cacc);
  }

  /* interaction forces cfrc_int = I cacc + v x* (I v) - cfrc_ext, summed into parents */
  if (S->need & SAP_SNEED_FORCE) {
    sapw_cinert_f64(m, xipos, ximat, cref, cinert, (const int*)0);
    for (int b = 0; b < nb; b++) {
      double Ia[6], Iv[6], vIv[6];
      sapu_mulInertVec_f64(Ia, cinert + 10 * b, cacc + 6 * b);
      sapu_mulInertVec_f64(Iv, cinert + 10 * b, cvel + 6 * b);
      sapu_crossForce_f64(vIv, cvel + 6 * b, Iv);
      for (int k = 0; k < 6; k++) cfrc[6 * b + k] = b ? Ia[k] + vIv[k] : 0;
    }
    /* contact wrenches (sapw_contactWrench): impulse frame' gamma on body 1, minus on body 0,
     * at the solver's contact points, spin and rolling torques for condim 4 / 6 */
    for (int i = 0; i < nc; i++) {
      long ci = (long)w * d->ncon_max + i;
      const double* fr = d->con_frame + 9 * ci;
      double g[SAP_CDIM_MAX];
      sapw_sensorContactForce(m, d, S, sc, ci, i, g);
      for (int s = 0; s < 2; s++) {
        int bb = m->geom_bodyid[d->con_geom[2 * ci + s]];
        if (bb == 0) continue;
        double sign = s ? 1 : -1, f[3], x[3], tq[3];
        for (int k = 0; k < 3; k++) f[k] = sign * (fr[k] * g[0] + fr[3 + k] * g[1] + fr[6 + k] * g[2]);
        sapw_sensorContactPoint(m, d, ci, s, S, x);
        for (int k = 0; k < 3; k++) x[k] -= cref[3 * bb + k];
        sapu_cross3_f64(tq, x, f);
        for (int r = 3; r < S->cd; r++) {
          const double* ax = fr + 3 * (r == 3 ? 2 : r - 4);
          for (int k = 0; k < 3; k++) tq[k] += sign * ax[k] * g[r];
        }
        for (int k = 0; k < 3; k++) {
          cfrc[6 * bb + k] -= tq[k];
          cfrc[6 * bb + 3 + k] -= f[k];
        }
      }
    }
    for (int b = nb - 1; b > 0; b--)
      for (int k = 0; k < 6; k++) cfrc[6 * m->body_parentid[b] + k] += cfrc[6 * b + k];
  }

  for (int i = 0; i < m->nsensor; i++) {
    if (m->sensor_stage[i] != SAP_STAGE_ACC) continue;
    int t = m->sensor_type[i], id = m->sensor_objid[i], b = m->sensor_body[2 * i];
    double* out = sensordata + m->sensor_adr[i];
    const double* fr = m->sensor_frame + 14 * i;
    double pos[3] = {0, 0, 0}, quat[4] = {1, 0, 0, 0}, R[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    double A[6], V[6], c[3];
    if (b >= 0) sapw_sensorFrame(xpos, xquat, xmat, b, fr, fr + 3, pos, quat, R);
    switch (t) {
      case SAP_SENS_ACCELEROMETER:
      case SAP_SENS_FRAMELINACC:
      case SAP_SENS_FRAMEANGACC:
        /* mj_objectAcceleration: cacc at the point plus omega x v */
        sapw_sensorPoint(cacc + 6 * b, cref + 3 * b, pos, A);
        sapw_sensorPoint(cvel + 6 * b, cref + 3 * b, pos, V);
        sapu_cross3_f64(c, V, V + 3);
        for (int k = 0; k < 3; k++) A[3 + k] += c[k];
        if (t == SAP_SENS_ACCELEROMETER) sapu_mulMatTVec3_f64(out, R, A + 3);
        else sapv3(out, t == SAP_SENS_FRAMEANGACC ? A : A + 3);
        break;
      case SAP_SENS_FORCE:
      case SAP_SENS_TORQUE: {
        /* the wrench the parent exerts on the subtree, torque about the site, site frame */
        const double* F = cfrc + 6 * b;
        double r[3], tq[3];
        for (int k = 0; k < 3; k++) r[k] = pos[k] - cref[3 * b + k];
        sapu_cross3_f64(c, r, F + 3);
        for (int k = 0; k < 3; k++) tq[k] = F[k] - c[k];
        sapu_mulMatTVec3_f64(out, R, t == SAP_SENS_FORCE ? F + 3 : tq);
        break;
      }
      case SAP_SENS_TOUCH: {
        /* normal forces of the contacts of exactly this body whose point is in the zone or
         * whose normal ray (out of the sensor body) meets it */
        out[0] = 0;
        for (int k = 0; k < nc; k++) {
          long ci = (long)w * d->ncon_max + k;
          int b0 = m->geom_bodyid[d->con_geom[2 * ci]], b1 = m->geom_bodyid[d->con_geom[2 * ci + 1]];
          if (b != b0 && b != b1) continue;
          double fn = sapw_sensorImpulse(S, sc, S->cd * k + 2) / S->h;
          if (m->nadhesion) fn -= sapw_contactAdhesion(m, d->con_geom[2 * ci], d->con_geom[2 * ci + 1], d->con_dist[ci]);
          if (!(fn > 0)) continue;
          const double* n = d->con_frame + 9 * ci + 6;
          const double* x = d->con_pos + 6 * ci;
          double sg = b == b1 ? -1 : 1, p[3], u[3], pl[3], ul[3];
          for (int j = 0; j < 3; j++) {
            p[j] = 0.5 * (x[j] + x[3 + j]) - pos[j];
            u[j] = sg * n[j];
          }
          sapu_mulMatTVec3_f64(pl, R, p);
          sapu_mulMatTVec3_f64(ul, R, u);
          if (sapw_rayHitsZone(m->sensor_zonetype[i], m->sensor_zonesize + 3 * i, pl, ul)) out[0] += fn;
        }
        break;
      }
      case SAP_SENS_CONTACT: {
        sapConSrc src = {d, (long)w * d->ncon_max, S, sc, (const double*)0, nc, d->geom_xmat + (long)w * 9 * m->ngeom};
        sapw_sensorContact(m, &src, i, pos, R, out);
        break;
      }
      case SAP_SENS_ACTUATORFRC: out[0] = sapw_sensorActuatorForce(m, d, w, S, sc, nc, id); break;
      case SAP_SENS_JOINTLIMITFRC: out[0] = sapw_sensorLimitForce(S, sc, nc, id); break;
      case SAP_SENS_TENDONLIMITFRC: out[0] = sapw_sensorLimitForce(S, sc, nc, m->njnt + id); break;
      case SAP_SENS_TENDONACTFRC: {  // the forces of the actuators on tendon id (not geared)
        double f = 0;
        for (int u = 0; u < m->nu; u++)
          if (m->actuator_trntype[u] == SAP_TRN_TENDON && m->actuator_trnid[u] == id)
            f += sapw_sensorActuatorForce(m, d, w, S, sc, nc, u);
        out[0] = f;
        break;
      }
      case SAP_SENS_JOINTACTFRC: {
        /* qfrc_actuator at the joint's dof: gear (times the tendon coefficient) times force */
        double q = 0;
        for (int u = 0; u < m->nu; u++) {
          int tid = m->actuator_trnid[u];
          double g = 0;
          if (m->actuator_trntype[u] == SAP_TRN_JOINT) g = tid == id ? m->actuator_gear[u] : 0;
          else if (m->actuator_trntype[u] == SAP_TRN_TENDON && m->tendon_spatial[tid]) {
            /* the tendon's Jacobian at the joint's dof (hinge/slide: one dof) */
            sapTenSink k = sapt_sink();
            k.dof = m->jnt_dofadr[id];
            sapt_spatial(m, xpos, xmat, cref, cdof, tid, &k);
            g = m->actuator_gear[u] * k.jv;
          } else if (m->actuator_trntype[u] == SAP_TRN_TENDON)  // site actuators: refused at load
            for (int k = m->tendon_adr[tid]; k < m->tendon_adr[tid] + m->tendon_num[tid]; k++)
              if (m->wrap_jnt[k] == id) g += m->actuator_gear[u] * m->wrap_coef[k];
          if (g != 0) q += g * sapw_sensorActuatorForce(m, d, w, S, sc, nc, u);
        }
        out[0] = m->jnt_actfrcsum[id] ? sapw_clampSum(q, m->jnt_actfrcrange + 2 * id) : q;
        break;
      }
      default: break;
    }
    sapw_sensorCutoff(m, i, out);
  }
  if (m->nsensorhist)
    sapw_sensorHistoryOut(m, d->history + (long)w * m->nhistory, d->sensor_raw + (long)w * m->nsensordata, sensordata,
                          d->time[w], 1);
}

#undef sapv3
#endif
