/* Scene import: MJCF/URDF compiled by MuJoCo's own loader (mj_loadXML), then
 * converted to sapModel (DESIGN.md §3). Everything sapsim cannot simulate is
 * rejected by name; nothing that affects the physics is silently dropped.
 * Ignored on purpose (no effect on sapsim's dynamics): sites and cameras (except as
 * sensor frames), lights, visual settings, MuJoCo's solref/solimp/solver options.
 * Sensors: host/model_sensors.c. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <mujoco/mujoco.h>

#include "kernels.h"
#include "model.h"
#include "model_fields.h"
#include "sim.h"

/* scene-wide SAP contact material defaults when the scene names none */
#define SAP_DEFAULT_CONTACT_K 1e5
#define SAP_DEFAULT_CONTACT_TAUD 0.01
/* SAP needs speculative contacts: a sliding contact rises about (h + tau_d) mu |v_t|
 * above the surface, and a contact dropped there makes a sliding box hop */
#define SAP_DEFAULT_CONTACT_MARGIN 0.02
_Static_assert(SAP_NPOLY == mjNPOLY, "SAP_NPOLY differs from MuJoCo's mjNPOLY");

static const char* mjname(const mjModel* mj, const int* adr, int id) {
  const char* n = mj->names + adr[id];
  return n[0] ? n : "(unnamed)";
}

/* 1 when the scene has a custom numeric field of that name with a value */
static int has_custom_numeric(const mjModel* mj, const char* name) {
  for (int i = 0; i < mj->nnumeric; i++)
    if (!strcmp(mj->names + mj->name_numericadr[i], name) && mj->numeric_size[i] > 0) return 1;
  return 0;
}

/* custom numeric field by name, or fallback */
static double custom_numeric(const mjModel* mj, const char* name, double fallback) {
  for (int i = 0; i < mj->nnumeric; i++)
    if (!strcmp(mj->names + mj->name_numericadr[i], name) && mj->numeric_size[i] > 0)
      return mj->numeric_data[mj->numeric_adr[i]];
  return fallback;
}

/* classify an actuator, or fail naming it. MuJoCo's SISO law (mj_fwdActuation) with a fixed
 * gain g and an affine bias (b0, b1, b2) is force = g u + b0 + b1 l + b2 l'; it is exactly
 *   a position drive  kp (t - l) - kv l'  with kp = -b1 > 0, kv = -b2 >= 0, t = (g u + b0)/kp,
 *   a velocity drive  kv (t - l')         with b1 = 0, kv = -b2 > 0,         t = (g u + b0)/kv,
 *   a motor           g u + b0            with b1 = b2 = 0,
 * so <position>, <velocity>, <motor> and <general> servos of those shapes (e.g. a scaled
 * servo gainprm="g" biasprm="0 -k -kv") all map; *gain, *bias give t (or the motor force) as
 * gain u + bias. An affine gain with zero slopes is the fixed gain g0. u is ctrl, or act for an
 * actuator with activation dynamics (integrator, filter, filterexact, muscle): a servo of that
 * shape (e.g. <intvelocity>, a filtered <position>) stays an implicit SAP drive whose target
 * follows act. A muscle gain or bias (<muscle>, <general gaintype/biastype="muscle">) makes the
 * explicit kind SAP_ACT_MUSCLE: force = G u + B with the muscle curve or the fixed gain for G
 * and the muscle curve or the affine bias b0 + b1 l + b2 l' (kept as bias, -kp, -kv) for B.
 * Every other affine law (a state-dependent gain g0 + g1 l + g2 l', e.g. <damper>: gain
 * 0 0 -kv; a bias with b1 > 0 or b2 > 0: anti-springs, negative damping) is the explicit kind
 * SAP_ACT_GENERAL: force = (g0 + g1 l + g2 l') u + b0 + b1 l + b2 l', kept as gain, slope,
 * bias, -kp, -kv as MuJoCo states it. User/dcmotor/pid dynamics and other gain and bias
 * types are refused. */
static sapStatus classify_actuator(const mjModel* mj, int i, int* kind, double* kp, double* kv,
                                   double* gain, double* bias, int* muscle, double* slope, const char* path) {
  static const char* dyn_names[] = {"none", "integrator", "filter", "filterexact", "muscle",
                                    "dcmotor", "pid", "user"};
  static const char* gain_names[] = {"fixed", "affine", "muscle", "dcmotor", "so3", "pid", "user"};
  static const char* bias_names[] = {"none", "affine", "muscle", "dcmotor", "so3", "user"};
  const double* g = mj->actuator_gainprm + i * mjNGAIN;
  const double* b = mj->actuator_biasprm + i * mjNBIAS;
  const char* name = mjname(mj, mj->name_actuatoradr, i);
  int gt = mj->actuator_gaintype[i], bt = mj->actuator_biastype[i], dt = mj->actuator_dyntype[i];
  if (dt != mjDYN_NONE && dt != mjDYN_INTEGRATOR && dt != mjDYN_FILTER && dt != mjDYN_FILTEREXACT &&
      dt != mjDYN_MUSCLE)
    return sap_fail(SAP_ERR_UNSUPPORTED,
                    "%s: actuator '%s' has %s activation dynamics (dyntype %d); sapsim supports none, "
                    "integrator, filter, filterexact and muscle", path, name,
                    dt >= 0 && dt <= mjDYN_USER ? dyn_names[dt] : "unknown", dt);
  if (dt != mjDYN_NONE && mj->actuator_actnum[i] != 1)
    return sap_fail(SAP_ERR_UNSUPPORTED, "%s: actuator '%s' has %d activation variables; sapsim "
                    "supports one per actuator with dynamics", path, name, mj->actuator_actnum[i]);
  int gmus = gt == mjGAIN_MUSCLE, bmus = bt == mjBIAS_MUSCLE;
  if (gt != mjGAIN_FIXED && gt != mjGAIN_AFFINE && !gmus)
    return sap_fail(SAP_ERR_UNSUPPORTED,
                    "%s: actuator '%s' has a %s gain (gaintype %d); sapsim supports fixed, affine and "
                    "muscle gains", path, name,
                    gt >= 0 && gt <= mjGAIN_USER ? gain_names[gt] : "unknown", gt);
  if (bt != mjBIAS_NONE && bt != mjBIAS_AFFINE && !bmus)
    return sap_fail(SAP_ERR_UNSUPPORTED, "%s: actuator '%s' has a %s bias (biastype %d); sapsim supports "
                    "none, affine and muscle", path, name,
                    bt >= 0 && bt <= mjBIAS_USER ? bias_names[bt] : "unknown", bt);
  double b0 = bt == mjBIAS_AFFINE ? b[0] : 0, b1 = bt == mjBIAS_AFFINE ? b[1] : 0;
  double b2 = bt == mjBIAS_AFFINE ? b[2] : 0;
  *kp = *kv = 0;
  *muscle = 0;
  slope[0] = slope[1] = 0;
  int gslope = gt == mjGAIN_AFFINE && (g[1] != 0 || g[2] != 0);
  int servo = (b1 == 0 && b2 == 0) || (b1 < 0 && b2 <= 0) || (b1 == 0 && b2 < 0);
  if (gslope) {  /* the affine gain's slopes (general, or a muscle bias with an affine gain) */
    slope[0] = g[1];
    slope[1] = g[2];
  }
  if ((gslope || !servo) && !gmus && !bmus) {  /* explicit general affine law */
    *kind = SAP_ACT_GENERAL;
    *gain = g[0];
    *bias = b0;
    *kp = -b1;
    *kv = -b2;
    return SAP_OK;
  }
  if (gmus || bmus) {  /* explicit muscle law: G u + B */
    *kind = SAP_ACT_MUSCLE;
    *muscle = (gmus ? SAP_MUSCLE_GAIN : 0) | (bmus ? SAP_MUSCLE_BIAS : 0);
    *gain = gmus ? 0 : g[0];
    *bias = b0;
    *kp = -b1;
    *kv = -b2;
    return SAP_OK;
  }
  if (b1 == 0 && b2 == 0) {  /* motor: g u + b0 */
    *kind = SAP_ACT_MOTOR;
    *gain = g[0];
    *bias = b0;
    return SAP_OK;
  }
  if (b1 < 0 && b2 <= 0) {  /* position servo */
    *kind = SAP_ACT_POSITION;
    *kp = -b1;
    *kv = -b2;
  } else {  /* velocity servo (b1 == 0 > b2: the only shape left of servo) */
    *kind = SAP_ACT_VELOCITY;
    *kv = -b2;
  }
  /* target t = gain u + bias; 1 and 0 exactly for the <position>/<velocity> shortcuts */
  double k = *kind == SAP_ACT_POSITION ? *kp : *kv;
  *gain = g[0] == k ? 1 : g[0] / k;
  *bias = b0 / k;
  return SAP_OK;
}

/* MuJoCo's disable flags: sapsim honours CONSTRAINT, EQUALITY, FRICTIONLOSS, LIMIT,
 * CONTACT, SPRING, DAMPER, GRAVITY, CLAMPCTRL, FILTERPARENT and ACTUATION (sapModel
 * actuation_off); SENSOR has nothing to act on; the rest are MuJoCo's numerics (warm
 * start, midphase, CCD flavours, islands ...) that do not change the model */
static int disabled(const mjModel* mj, int flag) {
  int f = mj->opt.disableflags;
  /* CONSTRAINT turns off every constraint: contacts, limits, equalities, dry friction */
  if ((f & mjDSBL_CONSTRAINT) &&
      (flag & (mjDSBL_CONTACT | mjDSBL_LIMIT | mjDSBL_EQUALITY | mjDSBL_FRICTIONLOSS)))
    return 1;
  return (f & flag) != 0;
}

/* any of n values nonzero */
static int any_nonzero(const mjtNum* x, mjtSize n) {
  for (mjtSize i = 0; i < n; i++)
    if (x[i] != 0) return 1;
  return 0;
}

/* sizes sapsim stores as int (every count of a model MuJoCo can compile in memory) */
static sapStatus check_sizes(const mjModel* mj, const char* path) {
  const struct { const char* name; mjtSize n; } sizes[] = {
      {"nq", mj->nq}, {"nv", mj->nv}, {"nbody", mj->nbody}, {"njnt", mj->njnt},
      {"ngeom", mj->ngeom}, {"nmesh", mj->nmesh}, {"nmeshvert", mj->nmeshvert},
      {"nmeshface", mj->nmeshface},
      {"nhfield", mj->nhfield}, {"nhfielddata", mj->nhfielddata},
      {"nu", mj->nu}, {"na", mj->na}, {"ntendon", mj->ntendon}, {"nwrap", mj->nwrap},
      {"nexclude", mj->nexclude}, {"nkey", mj->nkey}, {"nmocap", mj->nmocap},
      {"nnames", mj->nnames}, {"nsensor", mj->nsensor}, {"nsensordata", mj->nsensordata}};
  /* the candidate pair table counts ngeom (ngeom - 1) / 2 pairs in an int */
  if (mj->ngeom > 46340)
    return sap_fail(SAP_ERR_UNSUPPORTED, "%s: the model has %lld geoms; sapsim supports up to 46340",
                    path, (long long)mj->ngeom);
  for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
    if (sizes[i].n < 0 || sizes[i].n > (1 << 28))
      return sap_fail(SAP_ERR_UNSUPPORTED, "%s: model size %s = %lld is beyond sapsim's limit of %d",
                      path, sizes[i].name, (long long)sizes[i].n, 1 << 28);
  return SAP_OK;
}

/* <flag sleep="enable"/> (MuJoCo 4's sleeping trees, kernels/sleep.h): the parts sapsim does
 * not reproduce are refused by name */
static sapStatus check_sleep(const mjModel* mj, const char* path) {
  if (!(mj->opt.sleep_tolerance >= 0) || !isfinite(mj->opt.sleep_tolerance))
    return sap_fail(SAP_ERR_SCENE, "%s: option sleep_tolerance %g must be finite and >= 0", path,
                    mj->opt.sleep_tolerance);
  if (mj->na > 0)
    return sap_fail(SAP_ERR_UNSUPPORTED, "%s: <flag sleep=\"enable\"/> with actuator activation states "
                    "(na = %d; MuJoCo freezes a sleeping actuator's act) is not supported", path, (int)mj->na);
  for (int i = 0; i < mj->ntendon; i++)
    if (mj->tendon_treenum[i] > 1)
      return sap_fail(SAP_ERR_UNSUPPORTED, "%s: <flag sleep=\"enable\"/> with tendon '%s' spanning %d trees "
                      "(MuJoCo's tendon wake rule) is not supported", path,
                      mjname(mj, mj->name_tendonadr, i), mj->tendon_treenum[i]);
  for (int i = 0; i < mj->neq; i++)
    if (mj->eq_type[i] == mjEQ_TENDON)
      return sap_fail(SAP_ERR_UNSUPPORTED, "%s: <flag sleep=\"enable\"/> with tendon equality '%s' is not "
                      "supported (MuJoCo 4 does not support it either)", path, mjname(mj, mj->name_eqadr, i));
  return SAP_OK;
}

/* global options and model-wide features */
static sapStatus check_options(const mjModel* mj, const char* path) {
  const mjOption* o = &mj->opt;
  sapStatus st;
  /* actuation off drops the gravity compensation routed through actuators (MuJoCo's
   * mj_fwdActuation returns before adding it); sapsim applies body gravcomp passively */
  if (o->disableflags & mjDSBL_ACTUATION)
    for (int j = 0; j < mj->njnt; j++)
      if (mj->jnt_actgravcomp[j])
        return sap_fail(SAP_ERR_UNSUPPORTED,
                        "%s: <flag actuation=\"disable\"/> with joint '%s' routing gravity compensation "
                        "through its actuators (actuatorgravcomp), which is not supported", path,
                        mjname(mj, mj->name_jntadr, j));
  /* the override's friction and margin replace every contact's (build_pairs: override_pairs) */
  if (o->enableflags & mjENBL_OVERRIDE) {
    const mjtNum* f = o->o_friction;
    for (int k = 0; k < 5; k++)
      if (!isfinite(f[k]) || f[k] < 0)
        return sap_fail(SAP_ERR_SCENE, "%s: option o_friction[%d] = %g (<flag override=\"enable\"/>); friction "
                        "must be finite and >= 0", path, k, f[k]);
    if (!isfinite(o->o_margin))
      return sap_fail(SAP_ERR_SCENE, "%s: option o_margin %g (<flag override=\"enable\"/>) must be finite", path,
                      o->o_margin);
    if (f[0] != f[1] || f[3] != f[4])
      return sap_fail(SAP_ERR_UNSUPPORTED,
                      "%s: option o_friction (%g %g %g %g %g) of <flag override=\"enable\"/> is anisotropic; "
                      "sapsim's friction cone and rolling friction are isotropic", path, f[0], f[1], f[2], f[3],
                      f[4]);
  }
  if ((o->enableflags & mjENBL_SLEEP) && (st = check_sleep(mj, path)) != SAP_OK) return st;
  if (o->enableflags & mjENBL_SPECULATIVE)
    return sap_fail(SAP_ERR_UNSUPPORTED,
                    "%s: <flag speculative=\"enable\"/> (MuJoCo's speculative contacts) is not supported; "
                    "sapsim's contact margin plays that role", path);
  if (o->enableflags & mjENBL_IPC)
    return sap_fail(SAP_ERR_UNSUPPORTED, "%s: <flag ipc=\"enable\"/> is not supported", path);
  if (o->density < 0 || o->viscosity < 0 || !isfinite(o->density) || !isfinite(o->viscosity))
    return sap_fail(SAP_ERR_SCENE, "%s: option density %g and viscosity %g must be finite and >= 0", path,
                    o->density, o->viscosity);
  if (mj->nflex > 0)
    return sap_fail(SAP_ERR_UNSUPPORTED, "%s: flexes (deformable bodies) are not supported", path);
  if (mj->nplugin > 0)
    return sap_fail(SAP_ERR_UNSUPPORTED, "%s: engine plugins are not supported (%lld found)", path,
                    (long long)mj->nplugin);
  return SAP_OK;
}

/* a limit margin must leave room in its range: the limit holds the joint or tendon at
 * range[0] + margin and range[1] - margin (kernels/sap_world_t.h sapw_buildLimits) */
static sapStatus check_margin(const char* path, const char* what, const char* name, const mjtNum* range,
                              double margin) {
  if (range[1] - range[0] > 2 * margin) return SAP_OK;
  return sap_fail(SAP_ERR_SCENE,
                  "%s: %s '%s' has a limit margin (%g) that leaves no room in its range [%g, %g] (the "
                  "limit holds the %s at range[0] + margin and range[1] - margin)", path, what, name, margin,
                  range[0], range[1], what);
}

/* a ball joint's limit holds its rotation angle at max(range) - margin (kernels/sap_solve.h
 * sapw_ballLimit), which must be a cone: > 0 (at angle 0 the row's axis is undefined) */
static sapStatus check_cone(const char* path, const char* name, const mjtNum* range, double margin) {
  double r = range[0] > range[1] ? range[0] : range[1];
  if (r - margin > 0) return SAP_OK;
  return sap_fail(SAP_ERR_SCENE,
                  "%s: ball joint '%s' has a limit margin (%g) that leaves no cone in its range (%g): the "
                  "limit holds the joint's rotation angle at range - margin, which must be > 0", path, name,
                  margin, r);
}

static sapStatus check_joints(const mjModel* mj, const char* path) {
  sapStatus st;
  for (int j = 0; j < mj->njnt; j++) {
    int t = mj->jnt_type[j];
    const char* name = mjname(mj, mj->name_jntadr, j);
    int limited = mj->jnt_limited[j] && !disabled(mj, mjDSBL_LIMIT);
    if (mj->jnt_springyield[j] > 0)
      return sap_fail(SAP_ERR_UNSUPPORTED,
                      "%s: joint '%s' has a plastic spring (springyield), which is not supported", path, name);
    if (limited && t != mjJNT_BALL &&
        (st = check_margin(path, "joint", name, mj->jnt_range + 2 * j, mj->jnt_margin[j])) != SAP_OK)
      return st;
    if (limited && t == mjJNT_BALL &&
        (st = check_cone(path, name, mj->jnt_range + 2 * j, mj->jnt_margin[j])) != SAP_OK)
      return st;
    if (mj->jnt_actfrclimited[j] && mj->jnt_actgravcomp[j])
      return sap_fail(SAP_ERR_UNSUPPORTED,
                      "%s: joint '%s' limits its actuator force (actuatorfrcrange) and routes gravity "
                      "compensation through its actuators (actuatorgravcomp); that combination is "
                      "not supported", path, name);
  }
  for (int i = 0; i < mj->nv; i++) {
    const char* name = mjname(mj, mj->name_jntadr, mj->dof_jntid[i]);
    if (mj->dof_frictionloss[i] < 0)
      return sap_fail(SAP_ERR_SCENE, "%s: joint '%s' has a negative frictionloss (%g)", path, name,
                      mj->dof_frictionloss[i]);
  }
  return SAP_OK;
}

/* friction entries finite and >= 0, margin and gap finite (MuJoCo compiles NaN and
 * negative friction; neither means anything); what names the geom or pair */
static sapStatus check_material(const mjtNum* friction, int n, double margin, double gap,
                                const char* path, const char* what, const char* name) {
  for (int k = 0; k < n; k++)
    if (!isfinite(friction[k]) || friction[k] < 0)
      return sap_fail(SAP_ERR_SCENE, "%s: %s '%s' has friction[%d] = %g; friction must be finite and >= 0",
                      path, what, name, k, friction[k]);
  if (!isfinite(margin) || !isfinite(gap))
    return sap_fail(SAP_ERR_SCENE, "%s: %s '%s' has a non-finite margin (%g) or gap (%g)", path, what,
                    name, margin, gap);
  return SAP_OK;
}

/* a geom's or pair's adhesion (MuJoCo 4): finite and >= 0, and not with the spring and damper
 * flags both disabled (MuJoCo then drops the adhesive pull but keeps its cone shift) */
static sapStatus check_adhesion(const mjModel* mj, double a, const char* path, const char* kind, const char* name) {
  if (!isfinite(a) || a < 0)
    return sap_fail(SAP_ERR_SCENE, "%s: %s '%s' has adhesion %g; it must be finite and >= 0", path, kind, name, a);
  if (a > 0 && disabled(mj, mjDSBL_SPRING) && disabled(mj, mjDSBL_DAMPER))
    return sap_fail(SAP_ERR_UNSUPPORTED, "%s: %s '%s' has adhesion with the spring and damper flags both "
                    "disabled (MuJoCo 4 then drops the adhesive pull but keeps its cone shift); sapsim does "
                    "not model that half", path, kind, name);
  return SAP_OK;
}

/* geom g is named by an explicit <pair> (which bypasses contype/conaffinity) */
static int in_pair(const mjModel* mj, int g) {
  for (int i = 0; i < mj->npair; i++)
    if (mj->pair_geom1[i] == g || mj->pair_geom2[i] == g) return 1;
  return 0;
}

static sapStatus check_geoms(const mjModel* mj, const char* path) {
  for (int i = 0; i < mj->ngeom; i++) {
    int t = mj->geom_type[i];
    const char* name = mjname(mj, mj->name_geomadr, i);
    int collides = (mj->geom_contype[i] || mj->geom_conaffinity[i] || in_pair(mj, i)) &&
                   !disabled(mj, mjDSBL_CONTACT);
    if (t == mjGEOM_SDF)
      return sap_fail(SAP_ERR_UNSUPPORTED, "%s: geom '%s' is an SDF geom, which is not supported",
                      path, name);
    if (t < 0 || t >= SAP_NGEOMTYPES)
      return sap_fail(SAP_ERR_UNSUPPORTED, "%s: geom '%s' has unsupported type %d", path, name, t);
    if (mj->geom_plugin[i] >= 0)
      return sap_fail(SAP_ERR_UNSUPPORTED, "%s: geom '%s' uses a plugin, which is not supported",
                      path, name);
    sapStatus st = check_material(mj->geom_friction + 3 * i, 3, mj->geom_margin[i], mj->geom_gap[i],
                                  path, "geom", name);
    if (st != SAP_OK) return st;
    for (int k = 0; k < mj->nuser_geom && k < 2; k++)
      if (!isfinite(mj->geom_user[i * mj->nuser_geom + k]))
        return sap_fail(SAP_ERR_SCENE, "%s: geom '%s' has a non-finite SAP %s (user[%d] = %g)", path, name,
                        k ? "tau_d" : "k", k, mj->geom_user[i * mj->nuser_geom + k]);
    if (!collides) continue;
    if ((st = check_adhesion(mj, mj->geom_adhesion[i], path, "geom", name)) != SAP_OK) return st;
    for (int k = 0; k < 6; k++)
      if (!isfinite(mj->geom_surfacevel[6 * i + k]))
        return sap_fail(SAP_ERR_SCENE, "%s: geom '%s' has a non-finite surfacevel[%d] (%g)", path, name, k,
                        mj->geom_surfacevel[6 * i + k]);
  }
  return SAP_OK;
}

/* explicit <contact><pair> elements: their own friction (isotropic: sapsim's cone
 * has one sliding coefficient), margin, gap and adhesion */
static sapStatus check_pairs(const mjModel* mj, const char* path) {
  if (disabled(mj, mjDSBL_CONTACT)) return SAP_OK;
  for (int i = 0; i < mj->npair; i++) {
    int g1 = mj->pair_geom1[i], g2 = mj->pair_geom2[i];
    char name[400];  // quoted by the messages: NAME' between geoms 'A' and 'B
    snprintf(name, sizeof(name), "%s' between geoms '%s' and '%s", mjname(mj, mj->name_pairadr, i),
             mjname(mj, mj->name_geomadr, g1), mjname(mj, mj->name_geomadr, g2));
    const mjtNum* f = mj->pair_friction + 5 * i;
    sapStatus st = check_material(f, 5, mj->pair_margin[i], mj->pair_gap[i], path, "<pair>", name);
    if (st != SAP_OK) return st;
    if (mj->pair_dim[i] > 1 && f[0] != f[1])
      return sap_fail(SAP_ERR_UNSUPPORTED,
                      "%s: <pair> '%s' has anisotropic friction (%g, %g); sapsim's friction cone is "
                      "isotropic", path, name, f[0], f[1]);
    if (mj->pair_dim[i] == 6 && f[3] != f[4])
      return sap_fail(SAP_ERR_UNSUPPORTED,
                      "%s: <pair> '%s' has anisotropic rolling friction (%g, %g); sapsim's rolling "
                      "friction is isotropic", path, name, f[3], f[4]);
    if ((st = check_adhesion(mj, mj->pair_adhesion[i], path, "<pair>", name)) != SAP_OK) return st;
  }
  return SAP_OK;
}

/* the armature of tendon t: its own plus its actuators' armature gear^2 (mj_actuatorArmature) */
static double tendon_armature(const mjModel* mj, int t) {
  double a = mj->tendon_armature[t];
  for (int i = 0; i < mj->nu; i++)
    if (mj->actuator_trntype[i] == mjTRN_TENDON && mj->actuator_trnid[2 * i] == t)
      a += mj->actuator_gear[6 * i] * mj->actuator_gear[6 * i] * mj->actuator_armature[i];
  return a;
}

/* tendon armature (M += a J'J, MuJoCo 4's mj_tendonArmature; kernels/dynamics_t.h
 * sapw_tendonArmature), fixed or spatial; a spatial tendon's also adds MuJoCo 4's bias
 * a J (dJ/dt qvel) (mj_tendonBias; kernels/tendon.h sapt_spatialDot), whose mj_tendonDot covers
 * site-to-site paths and pulleys only: MuJoCo 4.0's compiler refuses armature on a tendon that
 * wraps a geom ("geom wrapping not supported"), and so does sapsim, by name, should a model
 * reach it another way */
static sapStatus check_tendon_armature(const mjModel* mj, const char* path, int t, const char* name) {
  double a = tendon_armature(mj, t);
  if (a == 0) return SAP_OK;
  if (!isfinite(a) || a < 0)
    return sap_fail(SAP_ERR_SCENE, "%s: tendon '%s' has armature %g (with its actuators'); it must be finite and "
                    ">= 0", path, name, a);
  for (int w = mj->tendon_adr[t]; w < mj->tendon_adr[t] + mj->tendon_num[t]; w++)
    if (mj->wrap_type[w] == mjWRAP_SPHERE || mj->wrap_type[w] == mjWRAP_CYLINDER)
      return sap_fail(SAP_ERR_UNSUPPORTED,
                      "%s: spatial tendon '%s' wraps geom '%s' and has armature (its own or its actuators'), "
                      "which is not supported (nor by MuJoCo 4); spatial tendons over sites and pulleys take "
                      "armature", path, name, mjname(mj, mj->name_geomadr, mj->wrap_objid[w]));
  return SAP_OK;
}

static sapStatus check_tendons(const mjModel* mj, const char* path) {
  sapStatus st;
  for (int t = 0; t < mj->ntendon; t++) {
    const char* name = mjname(mj, mj->name_tendonadr, t);
    if (mj->tendon_limited[t] && !disabled(mj, mjDSBL_LIMIT) &&
        (st = check_margin(path, "tendon", name, mj->tendon_range + 2 * t, mj->tendon_margin[t])) != SAP_OK)
      return st;
    if (mj->tendon_frictionloss[t] < 0)
      return sap_fail(SAP_ERR_SCENE, "%s: tendon '%s' has a negative frictionloss (%g)", path, name,
                      mj->tendon_frictionloss[t]);
    if ((st = check_tendon_armature(mj, path, t, name)) != SAP_OK) return st;
    if (mj->tendon_springyield[t] > 0)
      return sap_fail(SAP_ERR_UNSUPPORTED,
                      "%s: tendon '%s' has a plastic spring (springyield), which is not supported",
                      path, name);
  }
  return SAP_OK;
}

/* equality constraint i takes part unless the model disables equalities: every one is
 * loaded, active or not at reset (eq_active0), since MuJoCo's mjData.eq_active switches them
 * per world at run time (sapData.eq_active, sap_setEqActive) */
static int eq_used(const mjModel* mj, int i) {
  (void)i;
  return !disabled(mj, mjDSBL_EQUALITY);
}

/* equality constraints: connect and weld (body or site form), joint and tendon (fixed or
 * spatial) couplings; the flex equalities are rejected by name, inactive ones too (they can be
 * switched on at run time) */
static sapStatus check_equality(const mjModel* mj, const char* path) {
  static const char* names[] = {"connect", "weld", "joint", "tendon", "flex", "flexvert", "flexstrain"};
  for (int i = 0; i < mj->neq; i++) {
    if (!eq_used(mj, i)) continue;
    const char* name = mjname(mj, mj->name_eqadr, i);
    int t = mj->eq_type[i];
    if (t != mjEQ_CONNECT && t != mjEQ_WELD && t != mjEQ_JOINT && t != mjEQ_TENDON)
      return sap_fail(SAP_ERR_UNSUPPORTED, "%s: equality constraint '%s' of type %s is not supported "
                      "(connect, weld, joint and tendon are)", path, name,
                      t >= 0 && t < (int)(sizeof(names) / sizeof(names[0])) ? names[t] : "unknown");
    if ((t == mjEQ_CONNECT || t == mjEQ_WELD) && mj->eq_objtype[i] != mjOBJ_BODY && mj->eq_objtype[i] != mjOBJ_SITE)
      return sap_fail(SAP_ERR_UNSUPPORTED, "%s: %s constraint '%s' joins neither bodies nor sites",
                      path, names[t], name);
    for (int s = 0; t == mjEQ_JOINT && s < 2; s++) {
      int j = s ? mj->eq_obj2id[i] : mj->eq_obj1id[i];
      if (j >= 0 && mj->jnt_type[j] != mjJNT_HINGE && mj->jnt_type[j] != mjJNT_SLIDE)
        return sap_fail(SAP_ERR_UNSUPPORTED, "%s: joint equality '%s' couples joint '%s', which is neither "
                        "a hinge nor a slide", path, name, mjname(mj, mj->name_jntadr, j));
    }
  }
  return SAP_OK;
}

/* number of actuators with a joint transmission on joint j */
/* body b is body a or below it */
static int body_below(const mjModel* mj, int b, int a) {
  for (; b > 0; b = mj->body_parentid[b])
    if (b == a) return 1;
  return 0;
}

/* actuator i acts on a joint: MuJoCo's joint and jointinparent transmissions, the same on hinges
 * and slides, on ball and free joints but for the frame of the rotational gear */
static int joint_trn(const mjModel* mj, int i) {
  return mj->actuator_trntype[i] == mjTRN_JOINT || mj->actuator_trntype[i] == mjTRN_JOINTINPARENT;
}

/* whether actuator i's force can reach joint j's dof: through its joint, a fixed tendon over j,
 * any spatial tendon (it may move any joint), a site (or its refsite), a slider-crank's crank or
 * slider site or an adhesion body at or below j's body (their wrenches act on the dofs above
 * them); 2 for the site, slider-crank and body ones (an adhesion body's contact partners are not
 * followed) */
static int actuator_reaches(const mjModel* mj, int i, int j) {
  int id = mj->actuator_trnid[2 * i], ref = mj->actuator_trnid[2 * i + 1], jb = mj->jnt_bodyid[j];
  switch (mj->actuator_trntype[i]) {
    case mjTRN_JOINT:
    case mjTRN_JOINTINPARENT: return id == j;
    case mjTRN_TENDON:
      if (mj->wrap_type[mj->tendon_adr[id]] != mjWRAP_JOINT) return 1;
      for (int w = mj->tendon_adr[id]; w < mj->tendon_adr[id] + mj->tendon_num[id]; w++)
        if (mj->wrap_objid[w] == j) return 1;
      return 0;
    case mjTRN_SITE:
    case mjTRN_SLIDERCRANK:
      return 2 * (body_below(mj, mj->site_bodyid[id], jb) || (ref >= 0 && body_below(mj, mj->site_bodyid[ref], jb)));
    case mjTRN_BODY: return 2 * body_below(mj, id, jb);
    default: return 1;
  }
}

static sapStatus check_actuators(const mjModel* mj, const char* path) {
  if (mj->nu != mj->nactuator || mj->nout != mj->nactuator)
    return sap_fail(SAP_ERR_UNSUPPORTED,
                    "%s: %lld actuators have %lld controls and %lld force outputs; sapsim supports "
                    "actuators with one control and one force output each", path,
                    (long long)mj->nactuator, (long long)mj->nu, (long long)mj->nout);
  for (int i = 0; i < mj->nactuator; i++) {
    int trn = mj->actuator_trntype[i], id = mj->actuator_trnid[2 * i];
    const char* name = mjname(mj, mj->name_actuatoradr, i);
    if (mj->actuator_ctrlnum[i] != 1 || mj->actuator_outnum[i] != 1)
      return sap_fail(SAP_ERR_UNSUPPORTED,
                      "%s: actuator '%s' has %d controls and %d force outputs; sapsim supports one "
                      "of each", path, name, mj->actuator_ctrlnum[i], mj->actuator_outnum[i]);
    if (trn == mjTRN_JOINTINPARENT) trn = mjTRN_JOINT;  // the same but for the moment (sapa_jointMoment)
    if (trn != mjTRN_JOINT && trn != mjTRN_TENDON && trn != mjTRN_SITE && trn != mjTRN_BODY &&
        trn != mjTRN_SLIDERCRANK) {
      static const char* kind[] = {"joint", "jointinparent", "slider-crank", "tendon", "site", "body", "so3"};
      return sap_fail(SAP_ERR_UNSUPPORTED,
                      "%s: actuator '%s' has a %s transmission; only joint (jointinparent too), tendon, site, "
                      "slider-crank and body (adhesion) transmissions are supported", path, name,
                      trn >= 0 && trn < 7 ? kind[trn] : "unknown");
    }
    int multi = trn == mjTRN_JOINT && mj->jnt_type[id] != mjJNT_HINGE && mj->jnt_type[id] != mjJNT_SLIDE;
    if (multi && (mj->actuator_armature[i] != 0 || mj->actuator_damping[i] != 0 ||
                  any_nonzero(mj->actuator_dampingpoly + i * mjNPOLY, mjNPOLY)))
      return sap_fail(SAP_ERR_UNSUPPORTED,
                      "%s: actuator '%s' on a ball or free joint has armature or damping, which is not "
                      "supported (on hinge and slide joints it is)", path, name);

    if (mj->actuator_plugin[i] >= 0)
      return sap_fail(SAP_ERR_UNSUPPORTED, "%s: actuator '%s' is a plugin, which is not supported",
                      path, name);
    /* control delays (delay, nsample, interp) are MuJoCo 4's, kernels/history.h; MuJoCo's
     * compiler refuses a delay without samples */
    if ((mj->actuator_damping[i] != 0 || any_nonzero(mj->actuator_dampingpoly + i * mjNPOLY, mjNPOLY)) &&
        trn != mjTRN_JOINT && trn != mjTRN_TENDON)
      return sap_fail(SAP_ERR_UNSUPPORTED,
                      "%s: actuator '%s' adds damping on a transmission other than a joint or tendon, which "
                      "is not supported", path, name);
  }
  return SAP_OK;
}

/* reject what sapsim cannot simulate, naming the first offender */
static sapStatus check_supported(const mjModel* mj, const char* path) {
  sapStatus st;
  if ((st = check_sizes(mj, path)) != SAP_OK) return st;
  if ((st = check_options(mj, path)) != SAP_OK) return st;
  if ((st = check_joints(mj, path)) != SAP_OK) return st;
  if ((st = check_geoms(mj, path)) != SAP_OK) return st;
  if ((st = check_pairs(mj, path)) != SAP_OK) return st;
  if ((st = check_tendons(mj, path)) != SAP_OK) return st;
  if ((st = check_equality(mj, path)) != SAP_OK) return st;
  if ((st = sapm_checkSensors(mj, path)) != SAP_OK) return st;
  return check_actuators(mj, path);
}

/* MuJoCo's convex hull graph of mesh i (mjModel.mesh_graph at mesh_graphadr: numvert,
 * numface, vert_edgeadr[numvert], vert_globalid[numvert], edge_localid[numvert +
 * 3 numface] with each vertex's neighbour list ended by -1, face_globalid[3 numface]):
 * returns the hull vertex count and sets *nnbr to the adjacency entries, or 0 when the
 * mesh has none (graphadr -1: MuJoCo computed no hull) or it does not index within its
 * bounds (then sapsim scans every vertex, which is always exact) */
static int hull_graph(const mjModel* mj, int i, int* nnbr) {
  int adr = mj->mesh_graphadr ? mj->mesh_graphadr[i] : -1;
  *nnbr = 0;
  if (adr < 0 || adr + 2 > mj->nmeshgraph) return 0;
  const int* g = mj->mesh_graph + adr;
  long nv = g[0], nf = g[1], nedge = nv + 3 * nf;
  if (nv < 4 || nf < 1 || adr + 2 + 2 * nv + nedge + 3 * nf > mj->nmeshgraph) return 0;
  const int *edgeadr = g + 2, *gid = g + 2 + nv, *edge = g + 2 + 2 * nv;
  long n = 0;
  for (long v = 0; v < nv; v++) {
    if (gid[v] < 0 || gid[v] >= mj->mesh_vertnum[i] || edgeadr[v] < 0 || edgeadr[v] >= nedge) return 0;
    long e = edgeadr[v];
    for (; e < nedge && edge[e] >= 0; e++)
      if (edge[e] >= nv) return 0;
    if (e >= nedge) return 0;  // no terminator
    n += e - edgeadr[v] + 1;
  }
  *nnbr = (int)n;
  return (int)nv;
}

/* sort order[0..n) by key[order[i]], ascending (heap sort: O(n log n), no scratch) */
static void sort_by_key(int* order, const int* key, int n) {
  for (int start = n / 2 - 1, end = n; end > 1;) {
    int root;
    if (start >= 0) root = start--;
    else { int t = order[0]; order[0] = order[--end]; order[end] = t; root = 0; }
    for (int child; (child = 2 * root + 1) < end; root = child) {
      if (child + 1 < end && key[order[child + 1]] > key[order[child]]) child++;
      if (key[order[root]] >= key[order[child]]) break;
      int t = order[root]; order[root] = order[child]; order[child] = t;
    }
  }
}

/* collision vertices of every mesh: the hull's vertices sorted by their mesh vertex
 * index (a support scan over them then picks, among tied vertices, the one a scan of
 * all vertices picks: the lowest index), neighbour lists renumbered to match; a mesh
 * without a hull graph keeps every vertex and no adjacency */
static void copy_hulls(sapModel* m, const mjModel* mj) {
  int nh = 0, nn = 0;
  for (int i = 0; i < mj->nmesh; i++) {
    int nnbr, nv = hull_graph(mj, i, &nnbr), vadr = mj->mesh_vertadr[i];
    m->mesh_hulladr[i] = nh;
    if (!nv) {
      m->mesh_hullnum[i] = mj->mesh_vertnum[i];
      for (int v = 0; v < mj->mesh_vertnum[i]; v++) {
        for (int k = 0; k < 3; k++) m->mesh_hullvert[3 * (nh + v) + k] = mj->mesh_vert[3 * (vadr + v) + k];
        m->mesh_hullnbradr[nh + v] = -1;
      }
    } else {
      const int* g = mj->mesh_graph + mj->mesh_graphadr[i];
      const int *edgeadr = g + 2, *gid = g + 2 + nv, *edge = g + 2 + 2 * nv;
      // rank[v]: position of hull vertex v in ascending mesh vertex order
      int* order = (int*)malloc(sizeof(int) * 2 * nv);
      int* rank = order + nv;
      for (int v = 0; v < nv; v++) order[v] = v;
      sort_by_key(order, gid, nv);
      for (int r = 0; r < nv; r++) rank[order[r]] = r;
      m->mesh_hullnum[i] = nv;
      for (int r = 0; r < nv; r++) {
        int v = order[r];
        for (int k = 0; k < 3; k++) m->mesh_hullvert[3 * (nh + r) + k] = mj->mesh_vert[3 * (vadr + gid[v]) + k];
        m->mesh_hullnbradr[nh + r] = nn;
        for (int e = edgeadr[v]; edge[e] >= 0; e++) m->mesh_hullnbr[nn++] = rank[edge[e]];
        m->mesh_hullnbr[nn++] = -1;
      }
      free(order);
    }
    // extreme vertices along -x +x -y +y -z +z: starts of the hill climb (lowest id on ties)
    const double* hv = m->mesh_hullvert + 3 * nh;
    for (int k = 0; k < 6; k++) {
      int best = 0;
      double s = k & 1 ? 1 : -1;
      for (int v = 1; v < m->mesh_hullnum[i]; v++)
        if (s * hv[3 * v + k / 2] > s * hv[3 * best + k / 2]) best = v;
      m->mesh_hullstart[6 * i + k] = best;
    }
    nh += m->mesh_hullnum[i];
  }
}

/* set sizes of m from mj */
/* (check_sizes has checked that each fits an int) */
static void copy_sizes(sapModel* m, const mjModel* mj) {
  memset(m, 0, sizeof(*m));
  m->nq = (int)mj->nq;
  m->nv = (int)mj->nv;
  m->nbody = (int)mj->nbody;
  m->njnt = (int)mj->njnt;
  m->ngeom = (int)mj->ngeom;
  m->nmesh = (int)mj->nmesh;
  m->nmeshvert = (int)mj->nmeshvert;
  for (int i = 0; i < mj->nmesh; i++) {
    int nnbr, nh = hull_graph(mj, i, &nnbr);
    m->nmeshhull += nh ? nh : (int)mj->mesh_vertnum[i];
    m->nmeshhullnbr += nnbr;
  }
  m->nmeshface = sapm_rayFaces(mj);
  m->nhfield = (int)mj->nhfield;
  m->nhfielddata = (int)mj->nhfielddata;
  m->nu = (int)mj->nu;
  m->na = (int)mj->na;
  m->nhistory = (int)mj->nhistory;  /* MuJoCo's layout: actuators' buffers, then sensors' */
  m->ntendon = (int)mj->ntendon;
  m->nwrap = (int)mj->nwrap;
  m->nexclude = (int)mj->nexclude;
  m->nkey = (int)mj->nkey;
  m->nmocap = (int)mj->nmocap;
  m->nnames = (int)mj->nnames;
  m->nsensor = (int)mj->nsensor;
  m->nsensordata = (int)mj->nsensordata;
  m->nsensorhist = 0;
  for (int i = 0; i < mj->nsensor; i++) m->nsensorhist += mj->sensor_history[2 * i] > 0;
  m->nsurfacevel = 0;
  for (int g = 0; g < mj->ngeom; g++) m->nsurfacevel += any_nonzero(mj->geom_surfacevel + 6 * g, 6);
  for (int i = 0; i < mj->neq; i++) m->neq += eq_used(mj, i);
  m->npair_max = 0;
  m->filter_parent = !(mj->opt.disableflags & mjDSBL_FILTERPARENT);
  m->ntree = (int)mj->ntree;
  m->sleep = (mj->opt.enableflags & mjENBL_SLEEP) != 0;
  m->actuation_off = (mj->opt.disableflags & mjDSBL_ACTUATION) != 0;
  m->contact_override = (mj->opt.enableflags & mjENBL_OVERRIDE) != 0;
  m->sleep_tolerance = mj->opt.sleep_tolerance;
  /* MuJoCo's pyramidal cone is its solver's discretization of the friction cone; SAP always
   * solves the elliptic one: a note (sap_modelNotes), not a refusal (it is MuJoCo's default) */
  m->cone_pyramidal = mj->opt.cone == mjCONE_PYRAMIDAL && !disabled(mj, mjDSBL_CONTACT);
}

static void copy_int(int* dst, const int* src, int n) { memcpy(dst, src, sizeof(int) * n); }

/* dof_treeend from dof_parentid (parents before children): each dof's last descendant when the
 * dof forest is in depth-first pre-order (every dof's parent is -1, the previous dof or one of
 * its ancestors: MuJoCo's order), so that a dof's subtree is the run [dof, dof_treeend];
 * otherwise -1 at every dof (the free motion then factors right-looking) */
static void dof_treeends(sapModel* m) {
  const int* par = m->dof_parentid;
  int pre = 1;
  for (int k = 1; k < m->nv && pre; k++) {
    int q = k - 1;
    if (par[k] < 0) continue;
    while (q > par[k]) q = par[q];
    pre = q == par[k];
  }
  for (int j = 0; j < m->nv; j++) m->dof_treeend[j] = pre ? j : -1;
  for (int j = m->nv - 1; pre && j > 0; j--)  // children after parents: end[j] is final here
    if (par[j] >= 0 && m->dof_treeend[j] > m->dof_treeend[par[j]]) m->dof_treeend[par[j]] = m->dof_treeend[j];
}

/* A's layout by dof tree blocks (dof_Alo, dof_Ahi, dof_Aadr, nA): A = M + armature + h damping
 * is zero between two trees (MuJoCo's sparse M drops tendon armature across trees, and so does
 * sapw_tendonArmature), so one world's A stores each tree's n_t x n_t block, rows in dof order.
 * The ranges are the solve's (kernels/sap_island_t.h sapw_treeRanges: the first dof of a tree
 * is the ancestor without a parent dof); when a tree's dofs are not contiguous, one nv x nv
 * block [0, nv) (the dense matrix, as the free motion's and the solve's fallbacks) */
static void dof_Alayout(sapModel* m) {
  int nv = m->nv, *lo = m->dof_Alo, *hi = m->dof_Ahi;
  sapw_dofTreeRanges(m->dof_parentid, nv, lo, hi);
  /* row j's block starts after the rows before it: A[j][k] at n - lo[j] + k, k in [lo, hi);
   * n - lo[j] >= 0 (the earlier trees' sum n_t^2 >= their sum n_t = lo[j]) */
  long n = 0;
  for (int j = 0; j < nv; j++) {
    m->dof_Aadr[j] = (int)(n - lo[j]);
    n += hi[j] - lo[j];
  }
  m->nA = (int)n;
}
static void copy_num(double* dst, const double* src, int n) { memcpy(dst, src, sizeof(double) * n); }

static void copy_bodies(sapModel* m, const mjModel* mj) {
  copy_int(m->body_parentid, mj->body_parentid, mj->nbody);
  copy_int(m->body_rootid, mj->body_rootid, mj->nbody);
  copy_int(m->body_weldid, mj->body_weldid, mj->nbody);
  copy_int(m->body_jntnum, mj->body_jntnum, mj->nbody);
  copy_int(m->body_jntadr, mj->body_jntadr, mj->nbody);
  copy_int(m->body_dofnum, mj->body_dofnum, mj->nbody);
  copy_int(m->body_dofadr, mj->body_dofadr, mj->nbody);
  copy_int(m->body_geomnum, mj->body_geomnum, mj->nbody);
  copy_int(m->body_geomadr, mj->body_geomadr, mj->nbody);
  copy_int(m->body_mocapid, mj->body_mocapid, mj->nbody);
  copy_int(m->body_treeid, mj->body_treeid, mj->nbody);
  copy_int(m->tree_bodyadr, mj->tree_bodyadr, mj->ntree);
  copy_int(m->tree_bodynum, mj->tree_bodynum, mj->ntree);
  copy_int(m->tree_dofadr, mj->tree_dofadr, mj->ntree);
  copy_int(m->tree_dofnum, mj->tree_dofnum, mj->ntree);
  copy_int(m->tree_sleep_policy, mj->tree_sleep_policy, mj->ntree);
  copy_num(m->body_pos, mj->body_pos, 3 * mj->nbody);
  copy_num(m->body_quat, mj->body_quat, 4 * mj->nbody);
  copy_num(m->body_ipos, mj->body_ipos, 3 * mj->nbody);
  copy_num(m->body_iquat, mj->body_iquat, 4 * mj->nbody);
  copy_num(m->body_mass, mj->body_mass, mj->nbody);
  copy_num(m->body_inertia, mj->body_inertia, 3 * mj->nbody);
  /* gravity compensation is a passive force: off with gravity, or with springs and
   * dampers both disabled (MuJoCo's mj_passive returns early) */
  int off = disabled(mj, mjDSBL_GRAVITY) || (disabled(mj, mjDSBL_SPRING) && disabled(mj, mjDSBL_DAMPER));
  for (int b = 0; b < mj->nbody; b++) m->body_gravcomp[b] = off ? 0 : mj->body_gravcomp[b];
}

static void copy_joints(sapModel* m, const mjModel* mj) {
  copy_int(m->jnt_type, mj->jnt_type, mj->njnt);
  copy_int(m->jnt_qposadr, mj->jnt_qposadr, mj->njnt);
  copy_int(m->jnt_dofadr, mj->jnt_dofadr, mj->njnt);
  copy_int(m->jnt_bodyid, mj->jnt_bodyid, mj->njnt);
  for (int j = 0; j < mj->njnt; j++) {
    m->jnt_limited[j] = mj->jnt_limited[j] && !disabled(mj, mjDSBL_LIMIT);
    m->jnt_stiffness[j] = disabled(mj, mjDSBL_SPRING) ? 0 : mj->jnt_stiffness[j];
    for (int k = 0; k < SAP_NPOLY; k++)
      m->jnt_stiffnesspoly[SAP_NPOLY * j + k] = disabled(mj, mjDSBL_SPRING) ? 0 : mj->jnt_stiffnesspoly[mjNPOLY * j + k];
    m->jnt_margin[j] = m->jnt_limited[j] ? mj->jnt_margin[j] : 0;
  }
  copy_num(m->jnt_pos, mj->jnt_pos, 3 * mj->njnt);
  copy_num(m->jnt_axis, mj->jnt_axis, 3 * mj->njnt);
  copy_num(m->jnt_range, mj->jnt_range, 2 * mj->njnt);
  copy_int(m->dof_bodyid, mj->dof_bodyid, mj->nv);
  copy_int(m->dof_jntid, mj->dof_jntid, mj->nv);
  copy_int(m->dof_parentid, mj->dof_parentid, mj->nv);
  for (int j = 0; j < mj->nv; j++)
    m->dof_segstart[j] = j > 0 && mj->dof_parentid[j] == j - 1 ? m->dof_segstart[j - 1] : j;
  dof_treeends(m);
  dof_Alayout(m);
  copy_num(m->dof_armature, mj->dof_armature, mj->nv);
  copy_num(m->dof_damping, mj->dof_damping, mj->nv);
  copy_num(m->dof_dampingpoly, mj->dof_dampingpoly, SAP_NPOLY * mj->nv);
  /* an actuator's armature and damping act on its joint scaled by gear^2
   * (MuJoCo's mj_actuatorArmature, mj_actuatorDamping); tendons were refused */
  for (int i = 0; i < mj->nactuator; i++) {
    if (!joint_trn(mj, i)) continue;  // ball/free: none (check_actuators)
    int d = mj->jnt_dofadr[mj->actuator_trnid[2 * i]];
    double g2 = mj->actuator_gear[6 * i] * mj->actuator_gear[6 * i];
    if (mj->actuator_armature[i] != 0) m->dof_armature[d] += g2 * mj->actuator_armature[i];
    if (mj->actuator_damping[i] != 0) m->dof_damping[d] += g2 * mj->actuator_damping[i];
    for (int k = 0; k < SAP_NPOLY; k++)
      if (mj->actuator_dampingpoly[mjNPOLY * i + k] != 0)
        m->dof_dampingpoly[SAP_NPOLY * d + k] += mj->actuator_dampingpoly[mjNPOLY * i + k] * g2;
  }
  if (disabled(mj, mjDSBL_DAMPER))
    for (int i = 0; i < mj->nv; i++) {
      m->dof_damping[i] = 0;
      for (int k = 0; k < SAP_NPOLY; k++) m->dof_dampingpoly[SAP_NPOLY * i + k] = 0;
    }
  /* dry friction: one SAP row per dof (MuJoCo's mj_instantiateFriction), off with the flag */
  for (int i = 0; i < mj->nv; i++)
    m->dof_frictionloss[i] = disabled(mj, mjDSBL_FRICTIONLOSS) ? 0 : mj->dof_frictionloss[i];
  copy_num(m->qpos0, mj->qpos0, mj->nq);
  copy_num(m->qpos_spring, mj->qpos_spring, mj->nq);
  copy_int(m->dof_treeid, mj->dof_treeid, mj->nv);
  copy_num(m->dof_length, mj->dof_length, mj->nv);
}

/* geoms and their SAP material: mu is friction[0] (pairs combine it, see
 * combine_geoms); k and tau_d from geom user data (k, taud) when > 0, else the scene
 * defaults */
static void copy_geoms(sapModel* m, const mjModel* mj) {
  copy_int(m->geom_type, mj->geom_type, mj->ngeom);
  copy_int(m->geom_bodyid, mj->geom_bodyid, mj->ngeom);
  copy_int(m->geom_contype, mj->geom_contype, mj->ngeom);
  copy_int(m->geom_conaffinity, mj->geom_conaffinity, mj->ngeom);
  if (disabled(mj, mjDSBL_CONTACT))
    for (int g = 0; g < mj->ngeom; g++) m->geom_contype[g] = m->geom_conaffinity[g] = 0;
  copy_int(m->geom_dataid, mj->geom_dataid, mj->ngeom);
  copy_num(m->geom_size, mj->geom_size, 3 * mj->ngeom);
  copy_num(m->geom_pos, mj->geom_pos, 3 * mj->ngeom);
  copy_num(m->geom_quat, mj->geom_quat, 4 * mj->ngeom);
  copy_num(m->geom_rbound, mj->geom_rbound, mj->ngeom);
  copy_num(m->geom_margin, mj->geom_margin, mj->ngeom);
  copy_num(m->geom_gap, mj->geom_gap, mj->ngeom);
  if (m->nsurfacevel) copy_num(m->geom_surfacevel, mj->geom_surfacevel, 6 * mj->ngeom);
  copy_num(m->geom_fluid, mj->geom_fluid, mjNFLUID * mj->ngeom);
  m->contact_k = custom_numeric(mj, "sap_contact_k", SAP_DEFAULT_CONTACT_K);
  m->contact_taud = custom_numeric(mj, "sap_contact_taud", SAP_DEFAULT_CONTACT_TAUD);
  m->contact_margin = custom_numeric(mj, "sap_contact_margin", SAP_DEFAULT_CONTACT_MARGIN);
  m->contact_margin_scene = has_custom_numeric(mj, "sap_contact_margin");
  for (int g = 0; g < mj->ngeom; g++) {
    m->geom_mu[g] = mj->geom_friction[3 * g];
    for (int k = 0; k < 3; k++) m->geom_friction[3 * g + k] = mj->geom_friction[3 * g + k];
    m->geom_priority[g] = mj->geom_priority[g];
    const double* u = mj->geom_user + g * mj->nuser_geom;
    m->geom_k[g] = (mj->nuser_geom >= 1 && u[0] > 0) ? u[0] : -1;     /* -1: scene default */
    m->geom_taud[g] = (mj->nuser_geom >= 2 && u[1] > 0) ? u[1] : -1;
  }
  copy_int(m->mesh_vertadr, mj->mesh_vertadr, mj->nmesh);
  copy_int(m->mesh_vertnum, mj->mesh_vertnum, mj->nmesh);
  for (int i = 0; i < 3 * mj->nmeshvert; i++) m->mesh_vert[i] = mj->mesh_vert[i];
  copy_hulls(m, mj);
  copy_num(m->hfield_size, mj->hfield_size, 4 * mj->nhfield);
  copy_int(m->hfield_nrow, mj->hfield_nrow, mj->nhfield);
  copy_int(m->hfield_ncol, mj->hfield_ncol, mj->nhfield);
  copy_int(m->hfield_adr, mj->hfield_adr, mj->nhfield);
  for (long i = 0; i < (long)mj->nhfielddata; i++) m->hfield_data[i] = mj->hfield_data[i];
  /* signature = body1 << 16 | body2 (MuJoCo >= 3; 2.x added 1 to each) */
  for (int i = 0; i < mj->nexclude; i++) {
    m->exclude_body[2 * i] = mj->exclude_signature[i] >> 16;
    m->exclude_body[2 * i + 1] = mj->exclude_signature[i] & 0xFFFF;
  }
}

/* a joint's actuatorfrcrange clips gear * force of its one actuator (joint_force_limits): intersect
 * it, in actuator units, with forcerange */
static void limit_by_joint(sapModel* m, const mjModel* mj, int i) {
  int j = mj->actuator_trnid[2 * i];
  double g = mj->actuator_gear[6 * i];
  if (!mj->jnt_actfrclimited[j] || g == 0) return;
  double lo = mj->jnt_actfrcrange[2 * j] / g, hi = mj->jnt_actfrcrange[2 * j + 1] / g;
  if (g < 0) { double t = lo; lo = hi; hi = t; }
  double* r = m->actuator_forcerange + 2 * i;
  if (m->actuator_forcelimited[i]) {
    /* disjoint ranges: MuJoCo's two clips give the joint range's nearer end */
    double a = r[0] > hi ? hi : r[1] < lo ? lo : fmax(r[0], lo);
    double b = r[0] > hi ? hi : r[1] < lo ? lo : fmin(r[1], hi);
    r[0] = a;
    r[1] = b;
  } else {
    r[0] = lo;
    r[1] = hi;
  }
  m->actuator_forcelimited[i] = 1;
}

/* MuJoCo clamps qfrc_actuator at each dof of a joint with actuatorfrcrange (mj_fwdActuation's
 * last step). Where one joint actuator on the joint is all that reaches it (and also where that
 * one is a servo and site or adhesion actuators reach it too: their share is not clamped), the
 * clamp is that actuator's own force limit (limit_by_joint), which holds for SAP's implicit drives
 * too; otherwise sapsim clamps the explicit sum at the end of the free motion's actuation
 * (jnt_actfrcsum), which needs every actuator that reaches the joint to be a force actuator */
static sapStatus joint_force_limits(sapModel* m, const mjModel* mj, const char* path) {
  for (int j = 0; j < mj->njnt; j++) {
    if (!mj->jnt_actfrclimited[j]) continue;
    int nj = 0, ns = 0, one = -1;
    for (int i = 0; i < mj->nu; i++) {
      int r = actuator_reaches(mj, i, j);
      if (r == 1) nj++, one = i;
      ns += r == 2;
    }
    int servo = one >= 0 && (m->actuator_kind[one] == SAP_ACT_POSITION || m->actuator_kind[one] == SAP_ACT_VELOCITY);
    if (nj == 1 && joint_trn(mj, one) && (ns == 0 || servo)) {
      limit_by_joint(m, mj, one);
      continue;
    }
    if (nj + ns == 0) continue;
    for (int i = 0; i < mj->nu; i++)
      if (actuator_reaches(mj, i, j) &&
          (m->actuator_kind[i] == SAP_ACT_POSITION || m->actuator_kind[i] == SAP_ACT_VELOCITY))
        return sap_fail(SAP_ERR_UNSUPPORTED,
                        "%s: joint '%s' limits the total actuator force at its dof (actuatorfrcrange), and the "
                        "servo '%s' acts there through a tendon or beside other actuators; a servo's force comes "
                        "out of the SAP solve, so sapsim clamps such totals for force actuators only (motors, "
                        "general laws, muscles), or the force of a joint's one actuator",
                        path, mjname(mj, mj->name_jntadr, j), mjname(mj, mj->name_actuatoradr, i));
    m->jnt_actfrcsum[j] = 1;
    copy_num(m->jnt_actfrcrange + 2 * j, mj->jnt_actfrcrange + 2 * j, 2);
  }
  return SAP_OK;
}

/* MuJoCo 4's wrapPeriod (engine_forward.c): the period on which the setpoint of a servo-shaped
 * actuator (fixed gain equal to -biasprm[1], affine bias, no dynamics or an integrator) is taken
 * nearest the length: 2 pi |gear[0:3]| on a ball joint, 2 pi |gear[3:6]| on a refsite
 * transmission without translational gear; 0 otherwise */
static double wrap_period(const mjModel* mj, int i) {
  int dyn = mj->actuator_dyntype[i], trn = mj->actuator_trntype[i], id = mj->actuator_trnid[2 * i];
  const double* g = mj->actuator_gear + 6 * i;
  if (mj->actuator_gaintype[i] != mjGAIN_FIXED || mj->actuator_biastype[i] != mjBIAS_AFFINE ||
      mj->actuator_gainprm[mjNGAIN * i] != -mj->actuator_biasprm[mjNBIAS * i + 1] ||
      (dyn != mjDYN_NONE && dyn != mjDYN_INTEGRATOR))
    return 0;
  const double pi = 3.14159265358979323846;
  if (trn == mjTRN_SITE && mj->actuator_trnid[2 * i + 1] >= 0 && !g[0] && !g[1] && !g[2])
    return 2 * pi * sqrt(g[3] * g[3] + g[4] * g[4] + g[5] * g[5]);
  if ((trn == mjTRN_JOINT || trn == mjTRN_JOINTINPARENT) && mj->jnt_type[id] == mjJNT_BALL)
    return 2 * pi * sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
  return 0;
}

/* a tendon's actuatorfrcrange: MuJoCo scales the forces of the tendon's actuators by range / their
 * sum when the sum leaves the range (a zero sum left as it is), before each actuator's own force
 * limit (mj_fwdActuation). For the tendon's one actuator that is its force limit composed with
 * the range (MuJoCo's compiler requires 0 in it, so its zero-sum exception is the clip's too); for
 * several force actuators sapsim scales as MuJoCo does (tendon_actfrcsum, sapa_forceLimit); a
 * servo among several is refused, its force coming out of the SAP solve */
static sapStatus tendon_force_limits(sapModel* m, const mjModel* mj, const char* path) {
  for (int t = 0; t < mj->ntendon; t++) {
    if (!mj->tendon_actfrclimited[t]) continue;
    const double* r = mj->tendon_actfrcrange + 2 * t;
    const char* name = mjname(mj, mj->name_tendonadr, t);
    int n = 0, one = -1;
    for (int i = 0; i < mj->nu; i++)
      if (mj->actuator_trntype[i] == mjTRN_TENDON && mj->actuator_trnid[2 * i] == t) n++, one = i;
    if (n == 1) {
      double lo = r[0], hi = r[1], *f = m->actuator_forcerange + 2 * one;
      if (m->actuator_forcelimited[one]) {  // clip(clip(x, r), f) = clip(x, [clip(r0, f), clip(r1, f)])
        lo = lo < f[0] ? f[0] : lo > f[1] ? f[1] : lo;
        hi = hi < f[0] ? f[0] : hi > f[1] ? f[1] : hi;
      }
      f[0] = lo, f[1] = hi;
      m->actuator_forcelimited[one] = 1;
      continue;
    }
    for (int i = 0; i < mj->nu; i++)
      if (mj->actuator_trntype[i] == mjTRN_TENDON && mj->actuator_trnid[2 * i] == t &&
          (m->actuator_kind[i] == SAP_ACT_POSITION || m->actuator_kind[i] == SAP_ACT_VELOCITY))
        return sap_fail(SAP_ERR_UNSUPPORTED,
                        "%s: tendon '%s' limits the summed force of its actuators (actuatorfrcrange), among "
                        "them the servo '%s'; a servo's force comes out of the SAP solve, so sapsim scales "
                        "force actuators only (motors, general laws, muscles), or limits a tendon's one actuator",
                        path, name, mjname(mj, mj->name_actuatoradr, i));
    m->tendon_actfrcsum[t] = n > 1;
    copy_num(m->tendon_actfrcrange + 2 * t, r, 2);
  }
  return SAP_OK;
}

/* activation dynamics and muscle parameters of actuator i (classified already) */
static void copy_activation(sapModel* m, const mjModel* mj, int i) {
  int dt = mj->actuator_dyntype[i];
  m->actuator_dyntype[i] = dt;
  copy_num(m->actuator_dynprm + 3 * i, mj->actuator_dynprm + i * mjNDYN, 3);
  m->actuator_actadr[i] = dt == mjDYN_NONE ? -1 : mj->actuator_actadr[i];
  m->actuator_actnum[i] = dt == mjDYN_NONE ? 0 : 1;
  m->actuator_actlimited[i] = mj->actuator_actlimited[i] != 0;
  copy_num(m->actuator_actrange + 2 * i, mj->actuator_actrange + 2 * i, 2);
  m->actuator_actearly[i] = mj->actuator_actearly[i] != 0;
  copy_num(m->actuator_gainprm + SAP_NMUSCLEPRM * i, mj->actuator_gainprm + i * mjNGAIN, SAP_NMUSCLEPRM);
  copy_num(m->actuator_biasprm + SAP_NMUSCLEPRM * i, mj->actuator_biasprm + i * mjNBIAS, SAP_NMUSCLEPRM);
  copy_num(m->actuator_lengthrange + 2 * i, mj->actuator_lengthrange + 2 * mj->actuator_outadr[i], 2);
  m->actuator_acc0[i] = mj->actuator_acc0[mj->actuator_outadr[i]];
}

static sapStatus copy_actuators(sapModel* m, const mjModel* mj, const char* path) {
  for (int i = 0; i < mj->nu; i++) {
    sapStatus st = classify_actuator(mj, i, &m->actuator_kind[i], &m->actuator_kp[i], &m->actuator_kv[i],
                                     &m->actuator_gain[i], &m->actuator_bias[i], &m->actuator_muscle[i],
                                     m->actuator_gainslope + 2 * i, path);
    if (st != SAP_OK) return st;
    copy_activation(m, mj, i);
    int trn = mj->actuator_trntype[i], id = mj->actuator_trnid[2 * i];
    m->actuator_trntype[i] = trn == mjTRN_TENDON ? SAP_TRN_TENDON : trn == mjTRN_SITE ? SAP_TRN_SITE
                             : trn == mjTRN_BODY ? SAP_TRN_BODY : trn == mjTRN_SLIDERCRANK ? SAP_TRN_SLIDERCRANK
                             : SAP_TRN_JOINT;
    m->actuator_trnid[i] = id;
    m->actuator_sitebody[i] = -1;
    memset(m->actuator_site + 13 * i, 0, 13 * sizeof(double));
    m->actuator_refbody[i] = -1;
    memset(m->actuator_refsite + 7 * i, 0, 7 * sizeof(double));
    m->actuator_cranklength[i] = 0;
    int ref = trn == mjTRN_SITE || trn == mjTRN_SLIDERCRANK ? mj->actuator_trnid[2 * i + 1] : -1;
    /* a refsite gives the transmission a length and velocity (kernels/dynamics_t.h
     * sapw_refsite): explicit laws of any kind act on it, servos are SAP drive rows along its
     * moment (sapw_buildDrives); muscles need a length range MuJoCo computes for them */
    if (trn == mjTRN_SITE && ref >= 0 && m->actuator_kind[i] == SAP_ACT_MUSCLE)
      return sap_fail(SAP_ERR_UNSUPPORTED,
                      "%s: actuator '%s' is a muscle on a site transmission with a refsite (Cartesian "
                      "control), which is not supported; motors, servos and explicit <general> laws on "
                      "refsite transmissions are",
                      path, mjname(mj, mj->name_actuatoradr, i));
    if (ref >= 0) {
      m->actuator_refbody[i] = mj->site_bodyid[ref];
      copy_num(m->actuator_refsite + 7 * i, mj->site_pos + 3 * ref, 3);
      copy_num(m->actuator_refsite + 7 * i + 3, mj->site_quat + 4 * ref, 4);
    }
    /* a slider-crank (kernels/dynamics_t.h sapw_sliderCrank): crank site in actuator_site,
     * slider site in actuator_refsite; muscles need a length range MuJoCo computes for them */
    if (trn == mjTRN_SLIDERCRANK && m->actuator_kind[i] == SAP_ACT_MUSCLE)
      return sap_fail(SAP_ERR_UNSUPPORTED,
                      "%s: actuator '%s' is a muscle on a slider-crank transmission, which is not "
                      "supported; motors, servos and explicit <general> laws on slider-cranks are",
                      path, mjname(mj, mj->name_actuatoradr, i));
    if (trn == mjTRN_SLIDERCRANK) m->actuator_cranklength[i] = mj->actuator_cranklength[i];
    if (trn == mjTRN_SITE || trn == mjTRN_SLIDERCRANK) {
      if (trn == mjTRN_SITE && ref < 0 && m->actuator_kind[i] != SAP_ACT_MOTOR)
        return sap_fail(SAP_ERR_UNSUPPORTED,
                        "%s: actuator '%s' is a position or velocity servo on a site transmission "
                        "(or a muscle, or a general law with length or velocity terms), which has no "
                        "length; only force actuators (motor, affine <general> without slopes) act on sites",
                        path, mjname(mj, mj->name_actuatoradr, i));
      m->actuator_sitebody[i] = mj->site_bodyid[id];
      copy_num(m->actuator_site + 13 * i, mj->site_pos + 3 * id, 3);
      copy_num(m->actuator_site + 13 * i + 3, mj->site_quat + 4 * id, 4);
      copy_num(m->actuator_site + 13 * i + 7, mj->actuator_gear + 6 * i, 6);
    }
    if (trn == mjTRN_BODY && m->actuator_kind[i] != SAP_ACT_MOTOR)
      return sap_fail(SAP_ERR_UNSUPPORTED,
                      "%s: actuator '%s' is a position or velocity servo (or a muscle, or a general "
                      "law with length or velocity terms) on a body (adhesion) transmission, which has "
                      "no length; only force actuators (adhesion, motor, affine <general> without "
                      "slopes) act on bodies",
                      path, mjname(mj, mj->name_actuatoradr, i));
    m->actuator_delay[i] = mj->actuator_history[2 * i] > 0 ? mj->actuator_delay[i] : 0;
    m->actuator_nsample[i] = mj->actuator_history[2 * i];
    m->actuator_interp[i] = mj->actuator_history[2 * i + 1];
    m->actuator_historyadr[i] = m->actuator_nsample[i] > 0 ? (int)mj->actuator_historyadr[i] : -1;
    m->actuator_ctrllimited[i] = mj->actuator_ctrllimited[i] && !disabled(mj, mjDSBL_CLAMPCTRL);
    m->actuator_forcelimited[i] = mj->actuator_forcelimited[i];
    m->actuator_gear[i] = mj->actuator_gear[6 * i];
    m->actuator_wrap[i] = wrap_period(mj, i);
    /* MuJoCo's mj_actuatorDisabled: groups 0..30 in option actuatorgroupdisable */
    int grp = mj->actuator_group[i];
    m->actuator_disabled[i] = grp >= 0 && grp <= 30 && (mj->opt.disableactuator & (1 << grp)) != 0;
    if (joint_trn(mj, i) && (mj->jnt_type[id] == mjJNT_BALL || mj->jnt_type[id] == mjJNT_FREE)) {
      copy_num(m->actuator_jntgear + 6 * i, mj->actuator_gear + 6 * i, mj->jnt_type[id] == mjJNT_BALL ? 3 : 6);
      m->actuator_inparent[i] = trn == mjTRN_JOINTINPARENT;
    }
    copy_num(m->actuator_ctrlrange + 2 * i, mj->actuator_ctrlrange + 2 * i, 2);
    copy_num(m->actuator_forcerange + 2 * i, mj->actuator_forcerange + 2 * i, 2);
  }
  sapStatus st = joint_force_limits(m, mj, path);
  if (st == SAP_OK) st = tendon_force_limits(m, mj, path);
  if (st != SAP_OK) return st;
  for (int t = 0; t < mj->ntendon; t++) {
    m->tendon_adr[t] = mj->tendon_adr[t];
    m->tendon_num[t] = mj->tendon_num[t];
    m->tendon_limited[t] = mj->tendon_limited[t] && !disabled(mj, mjDSBL_LIMIT);
    copy_num(m->tendon_range + 2 * t, mj->tendon_range + 2 * t, 2);
    m->tendon_frictionloss[t] = disabled(mj, mjDSBL_FRICTIONLOSS) ? 0 : mj->tendon_frictionloss[t];
    m->tendon_margin[t] = m->tendon_limited[t] ? mj->tendon_margin[t] : 0;
    m->tendon_stiffness[t] = disabled(mj, mjDSBL_SPRING) ? 0 : mj->tendon_stiffness[t];
    for (int k = 0; k < SAP_NPOLY; k++)
      m->tendon_stiffnesspoly[SAP_NPOLY * t + k] =
          disabled(mj, mjDSBL_SPRING) ? 0 : mj->tendon_stiffnesspoly[mjNPOLY * t + k];
    m->tendon_damping[t] = disabled(mj, mjDSBL_DAMPER) ? 0 : mj->tendon_damping[t];
    for (int k = 0; k < SAP_NPOLY; k++)
      m->tendon_dampingpoly[SAP_NPOLY * t + k] = disabled(mj, mjDSBL_DAMPER) ? 0 : mj->tendon_dampingpoly[mjNPOLY * t + k];
    copy_num(m->tendon_lengthspring + 2 * t, mj->tendon_lengthspring + 2 * t, 2);
    m->tendon_armature[t] = tendon_armature(mj, t);  // fixed and spatial (check_tendon_armature)
  }
  /* a tendon actuator's damping acts on its tendon scaled by gear^2 (mj_actuatorDamping) */
  for (int i = 0; i < mj->nu && !disabled(mj, mjDSBL_DAMPER); i++) {
    if (mj->actuator_trntype[i] != mjTRN_TENDON) continue;
    int t = mj->actuator_trnid[2 * i];
    double g2 = mj->actuator_gear[6 * i] * mj->actuator_gear[6 * i];
    if (mj->actuator_damping[i] != 0) m->tendon_damping[t] += g2 * mj->actuator_damping[i];
    for (int k = 0; k < SAP_NPOLY; k++)
      if (mj->actuator_dampingpoly[mjNPOLY * i + k] != 0)
        m->tendon_dampingpoly[SAP_NPOLY * t + k] += mj->actuator_dampingpoly[mjNPOLY * i + k] * g2;
  }
  for (int w = 0; w < mj->nwrap; w++) {
    int type = mj->wrap_type[w], id = mj->wrap_objid[w], site = type == mjWRAP_SITE;
    int geom = type == mjWRAP_SPHERE || type == mjWRAP_CYLINDER, side = geom ? (int)lround(mj->wrap_prm[w]) : -1;
    m->wrap_type[w] = type;  // SAP_WRAP_* numbers mjtWrap's
    m->wrap_jnt[w] = site ? mj->site_bodyid[id] : id;
    m->wrap_coef[w] = site || geom ? 0 : mj->wrap_prm[w];
    m->wrap_side[w] = side >= 0 ? mj->site_bodyid[side] : -1;
    for (int k = 0; k < 3; k++)
      m->wrap_pos[3 * w + k] = site ? mj->site_pos[3 * id + k] : side >= 0 ? mj->site_pos[3 * side + k] : 0;
  }
  for (int t = 0; t < mj->ntendon; t++) m->tendon_spatial[t] = mj->wrap_type[mj->tendon_adr[t]] != mjWRAP_JOINT;
  return SAP_OK;
}

/* the used equality constraints in model order (layout in include/sapsim/model.h): connect
 * sites become their bodies with the site positions as anchors (MuJoCo reads site_xpos,
 * which is the body point at site_pos); weld sites likewise, with the site frames as q1', q2';
 * couplings take y0, x0 from qpos0 or tendon_length0; eq_active0 is the reset value of the
 * per-world switch */
static void copy_equality(sapModel* m, const mjModel* mj) {
  int e = 0;
  for (int i = 0; i < mj->neq; i++) {
    if (!eq_used(mj, i)) continue;
    const mjtNum* src = mj->eq_data + mjNEQDATA * i;
    double* a = m->eq_data + SAP_EQ_NDATA * e;
    int t = mj->eq_type[i], o1 = mj->eq_obj1id[i], o2 = mj->eq_obj2id[i];
    int site = mj->eq_objtype[i] == mjOBJ_SITE && (t == mjEQ_CONNECT || t == mjEQ_WELD);
    memset(a, 0, sizeof(double) * SAP_EQ_NDATA);
    m->eq_type[e] = t;
    m->eq_active0[e] = mj->eq_active0[i] != 0;
    if (t == mjEQ_CONNECT && site) {
      copy_num(a, mj->site_pos + 3 * o1, 3);
      copy_num(a + 3, mj->site_pos + 3 * o2, 3);
    } else if (t == mjEQ_CONNECT) {
      copy_num(a, src, 6);
    } else if (t == mjEQ_WELD && site) {
      /* g = p(site1) - p(site2), ts Im((q2 qs2)^-1 q1 qs1) */
      copy_num(a, mj->site_pos + 3 * o2, 3);
      copy_num(a + 3, mj->site_pos + 3 * o1, 3);
      copy_num(a + 6, mj->site_quat + 4 * o1, 4);
      a[10] = src[10];
      copy_num(a + 11, mj->site_quat + 4 * o2, 4);
    } else if (t == mjEQ_WELD) {
      /* MuJoCo's compiled data: anchor (body 2), relpose position and quaternion (body 1) */
      copy_num(a, src, 11);
      a[11] = 1;
      a[12] = a[13] = a[14] = 0;
    } else {
      copy_num(a, src, 5);
      int tendon = t == mjEQ_TENDON;
      a[5] = tendon ? mj->tendon_length0[o1] : mj->qpos0[mj->jnt_qposadr[o1]];
      if (o2 >= 0) a[6] = tendon ? mj->tendon_length0[o2] : mj->qpos0[mj->jnt_qposadr[o2]];
    }
    if (site) {
      o1 = mj->site_bodyid[o1];
      o2 = mj->site_bodyid[o2];
    }
    if ((t == mjEQ_CONNECT || t == mjEQ_WELD) && o2 < 0) o2 = 0;  // body2 omitted: the world
    m->eq_obj1id[e] = o1;
    m->eq_obj2id[e] = o2;
    e++;
  }
}

/* the last dof of the first body at or above b with dofs, -1 when static (as the solver's
 * sapw_bodyLastDof); the chain then follows dof_parentid */
static int last_dof(const sapModel* m, int b) {
  while (b > 0 && m->body_dofnum[b] == 0) b = m->body_parentid[b];
  return b > 0 ? m->body_dofadr[b] + m->body_dofnum[b] - 1 : -1;
}

/* distinct dofs on the chains of bodies b1 and b2 (a connect row's entries) */
static int chain_union(const sapModel* m, int b1, int b2) {
  int n = 0;
  for (int j = last_dof(m, b1); j >= 0; j = m->dof_parentid[j]) n++;
  for (int j = last_dof(m, b2); j >= 0; j = m->dof_parentid[j]) {
    int shared = 0;
    for (int k = last_dof(m, b1); k >= 0 && !shared; k = m->dof_parentid[k]) shared = k == j;
    n += !shared;
  }
  return n;
}

static void copy_keys_names(sapModel* m, const mjModel* mj) {
  copy_num(m->key_time, mj->key_time, mj->nkey);
  copy_num(m->key_qpos, mj->key_qpos, mj->nkey * mj->nq);
  copy_num(m->key_qvel, mj->key_qvel, mj->nkey * mj->nv);
  copy_num(m->key_ctrl, mj->key_ctrl, mj->nkey * mj->nu);
  copy_num(m->key_act, mj->key_act, mj->nkey * mj->na);
  copy_num(m->key_mpos, mj->key_mpos, mj->nkey * mj->nmocap * 3);
  copy_num(m->key_mquat, mj->key_mquat, mj->nkey * mj->nmocap * 4);
  copy_int(m->name_bodyadr, mj->name_bodyadr, mj->nbody);
  copy_int(m->name_jntadr, mj->name_jntadr, mj->njnt);
  copy_int(m->name_geomadr, mj->name_geomadr, mj->ngeom);
  copy_int(m->name_actuatoradr, mj->name_actuatoradr, mj->nu);
  copy_int(m->name_keyadr, mj->name_keyadr, mj->nkey);
  memcpy(m->names, mj->names, mj->nnames);
}

/* scalar SAP constraint rows a world can need: one per position/velocity actuator
 * (PD drive; a refsite or slider-crank servo's over both sites' chains), two per limited hinge/slide joint and per limited tendon, one per limited ball
 * joint (3 nonzeros), one per dof and
 * per tendon with frictionloss, one per joint/tendon equality, three per connect and six per
 * weld (three with torquescale 0), active at reset or not */
static void count_solve_rows(sapModel* m) {
  int n = 0;
  for (int u = 0; u < m->nu; u++)
    n += !m->actuation_off && !m->actuator_disabled[u] &&
         (m->actuator_kind[u] == SAP_ACT_POSITION || m->actuator_kind[u] == SAP_ACT_VELOCITY);
  m->nsolve_nnz = 1;
  for (int u = 0; u < m->nu; u++) {  // a refsite or slider-crank servo's row: the dofs of both sites' chains
    int nnz = 1, id = m->actuator_trnid[u];
    if ((m->actuator_trntype[u] == SAP_TRN_SITE && m->actuator_refbody[u] >= 0) ||
        m->actuator_trntype[u] == SAP_TRN_SLIDERCRANK)
      nnz = chain_union(m, m->actuator_sitebody[u], m->actuator_refbody[u]);
    if (m->actuator_trntype[u] == SAP_TRN_JOINT)  // a ball or free joint's servo: its 3 or 6 dofs
      nnz = m->jnt_type[id] == SAP_JNT_FREE ? 6 : m->jnt_type[id] == SAP_JNT_BALL ? 3 : 1;
    if (nnz > m->nsolve_nnz) m->nsolve_nnz = nnz;
  }
  for (int j = 0; j < m->njnt; j++)  // a ball joint's cone is one row over its 3 dofs
    if (m->jnt_limited[j]) n += m->jnt_type[j] == SAP_JNT_BALL ? 1 : 2;
  for (int t = 0; t < m->ntendon; t++) n += 2 * (m->tendon_limited[t] != 0);
  for (int i = 0; i < m->nv; i++) n += m->dof_frictionloss[i] > 0;
  for (int t = 0; t < m->ntendon; t++) n += m->tendon_frictionloss[t] > 0;
  for (int j = 0; j < m->njnt; j++)
    if (m->jnt_limited[j] && m->jnt_type[j] == SAP_JNT_BALL && m->nsolve_nnz < 3) m->nsolve_nnz = 3;
  for (int t = 0; t < m->ntendon; t++) {
    int nnz = m->tendon_spatial[t] ? m->nv : m->tendon_num[t];  // spatial: dofs merged, at most nv
    if (nnz > m->nsolve_nnz) m->nsolve_nnz = nnz;
  }
  for (int e = 0; e < m->neq; e++) {
    int t = m->eq_type[e], o1 = m->eq_obj1id[e], o2 = m->eq_obj2id[e], nnz = 2;
    n += t == SAP_EQ_CONNECT ? 3 : t == SAP_EQ_WELD ? (m->eq_data[SAP_EQ_NDATA * e + 10] != 0 ? 6 : 3) : 1;
    if (t == SAP_EQ_CONNECT || t == SAP_EQ_WELD) nnz = chain_union(m, o1, o2);
    if (t == SAP_EQ_TENDON) {  // spatial: dofs merged, at most nv
      nnz = (m->tendon_spatial[o1] ? m->nv : m->tendon_num[o1]) +
            (o2 >= 0 ? (m->tendon_spatial[o2] ? m->nv : m->tendon_num[o2]) : 0);
      if (nnz > m->nv && (m->tendon_spatial[o1] || (o2 >= 0 && m->tendon_spatial[o2]))) nnz = m->nv;
    }
    if (nnz > m->nsolve_nnz) m->nsolve_nnz = nnz;
  }
  m->nsolve_rows = n;
  int deep = 0;  // the most dofs on a body's root path
  for (int b = 0; b < m->nbody; b++) {
    int k = 0;
    for (int j = last_dof(m, b); j >= 0; j = m->dof_parentid[j]) k++;
    if (k > deep) deep = k;
  }
  m->nsolve_chain = 2 * deep < m->nv ? 2 * deep : m->nv;
}

/* ---- candidate pairs and their contact parameters (reference mujoco_semantics.md
 * §1.1-1.5, checked against MuJoCo 4.0's contact list in tests/test_contact_params.c) ---- */

typedef struct pairRec {
  int g0, g1;        /* g0 < g1 */
  int expl;          /* explicit <pair> id, -1 for a dynamic pair */
  int condim;
  double mu, margin, gap, adhesion;
  double torsion, rolling; /* spin and rolling coefficients (m), condim 4 and 6 */
} pairRec;

/* a dynamic pair as MuJoCo 4 combines it (mj_contactParam): the geom with the higher
 * priority gives condim and friction; equal priority: condim max, friction max
 * element-wise; margin and gap summed whatever the priority. mu is 0 for a frictionless
 * (condim 1) contact; torsion (friction[1]) and rolling (friction[2]) are kept for
 * condim 4 and 6 (0 otherwise). */
static void combine_geoms(const mjModel* mj, int g0, int g1, pairRec* r) {
  int p0 = mj->geom_priority[g0], p1 = mj->geom_priority[g1];
  const mjtNum *f0 = mj->geom_friction + 3 * g0, *f1 = mj->geom_friction + 3 * g1;
  int c0 = mj->geom_condim[g0], c1 = mj->geom_condim[g1];
  double f[3];
  for (int k = 0; k < 3; k++) f[k] = p0 > p1 ? f0[k] : p1 > p0 ? f1[k] : fmax(f0[k], f1[k]);
  r->g0 = g0;
  r->g1 = g1;
  r->expl = -1;
  r->condim = p0 > p1 ? c0 : p1 > p0 ? c1 : (c0 > c1 ? c0 : c1);
  r->mu = r->condim == 1 ? 0 : f[0];
  r->torsion = r->condim >= 4 ? f[1] : 0;
  r->rolling = r->condim == 6 ? f[2] : 0;
  r->margin = mj->geom_margin[g0] + mj->geom_margin[g1];
  r->gap = mj->geom_gap[g0] + mj->geom_gap[g1];
  // adhesion: each surface adds its own, the higher priority's alone (mj_contactParam)
  r->adhesion = p0 > p1 ? mj->geom_adhesion[g0] : p1 > p0 ? mj->geom_adhesion[g1]
                                                          : mj->geom_adhesion[g0] + mj->geom_adhesion[g1];
}

/* an explicit pair takes all its parameters from the <pair> element (geoms not consulted) */
static void explicit_pair(const mjModel* mj, int i, pairRec* r) {
  int a = mj->pair_geom1[i], b = mj->pair_geom2[i];
  r->g0 = a < b ? a : b;
  r->g1 = a < b ? b : a;
  r->expl = i;
  r->condim = mj->pair_dim[i];
  r->mu = r->condim == 1 ? 0 : mj->pair_friction[5 * i];
  r->torsion = r->condim >= 4 ? mj->pair_friction[5 * i + 2] : 0;  // (slide, slide, spin, roll, roll)
  r->rolling = r->condim == 6 ? mj->pair_friction[5 * i + 3] : 0;
  r->margin = mj->pair_margin[i];
  r->gap = mj->pair_gap[i];
  r->adhesion = mj->pair_adhesion[i];
}

/* <flag override="enable"/>: every contact, dynamic or explicit, takes the option's
 * margin and friction (MuJoCo's mj_assignMargin, mj_assignFriction: the 5-vector (slide,
 * slide, spin, roll, roll), checked isotropic); gap and condim stay the pair's */
static void override_pairs(const mjModel* mj, pairRec* r, int n) {
  const mjtNum* f = mj->opt.o_friction;
  for (int p = 0; p < n; p++) {
    r[p].margin = mj->opt.o_margin;
    r[p].mu = r[p].condim == 1 ? 0 : f[0];
    r[p].torsion = r[p].condim >= 4 ? f[2] : 0;
    r[p].rolling = r[p].condim == 6 ? f[3] : 0;
  }
}

static int pair_cmp(const void* a, const void* b) {
  const pairRec *x = (const pairRec*)a, *y = (const pairRec*)b;
  if (x->g0 != y->g0) return x->g0 < y->g0 ? -1 : 1;
  if (x->g1 != y->g1) return x->g1 < y->g1 ? -1 : 1;
  return 0;
}

/* an explicit pair makes contacts unless both geoms move as one rigid body (their
 * forces cancel; MuJoCo gives them no constraint rows), neither side has dofs (static
 * or mocap: the contact's Jacobian is zero and its force acts on nothing) or no collider
 * exists */
static int explicit_collides(const sapModel* m, const pairRec* r) {
  int w0 = m->body_weldid[m->geom_bodyid[r->g0]], w1 = m->body_weldid[m->geom_bodyid[r->g1]];
  if (w0 == w1) return 0;
  if (m->body_dofnum[w0] == 0 && m->body_dofnum[w1] == 0) return 0;
  return !(m->geom_type[r->g0] == SAP_GEOM_PLANE && m->geom_type[r->g1] == SAP_GEOM_PLANE);
}

/* pair p's torsional and rolling coefficients. A condim 4 or 6 contact is MuJoCo's elliptic
 * cone ||(f_t/mu, tau_spin/torsion, tau_roll/rolling)|| <= f_n; MuJoCo clamps each
 * coefficient to mjMINMU = 1e-5 (mj_setContact), so that the scaled cone stays finite, and so
 * does sapsim there (condim 1 and 3 keep mu as combined, 0 allowed). m->ncondim, the rows
 * of a contact in the solver, is the largest such condim (3 when none has 4 or 6). */
static void contact_coefficients(sapModel* m, int p, const pairRec* r) {
  const double minmu = 1e-5;
  m->pair_torsion[p] = m->pair_rolling[p] = 0;
  if (r->condim < 4) return;
  m->pair_mu[p] = fmax(r->mu, minmu);
  m->pair_torsion[p] = fmax(r->torsion, minmu);
  if (r->condim == 6) m->pair_rolling[p] = fmax(r->rolling, minmu);
  if (r->condim > m->ncondim) m->ncondim = r->condim;
}

/* the candidate list: dynamic pairs after static filtering, explicit pairs (which bypass
 * the filters) added or replacing the dynamic pair of the same geoms, sorted by
 * (g0, g1); combined condims are 1, 3, 4 or 6 (MuJoCo compiles no other). *out is malloc'ed. */
static sapStatus build_pairs(const sapModel* m, const mjModel* mj, const char* path, pairRec** out, int* n) {
  int ndyn = sapc_buildPairs(m, NULL), nexp = disabled(mj, mjDSBL_CONTACT) ? 0 : (int)mj->npair;
  int* dyn = (int*)malloc(sizeof(int) * (2 * ndyn + 1));
  pairRec* r = (pairRec*)malloc(sizeof(pairRec) * (ndyn + nexp + 1));
  if (!dyn || !r) {
    free(dyn);
    free(r);
    return sap_fail(SAP_ERR_MEMORY, "model: cannot allocate the candidate pairs");
  }
  sapc_buildPairs(m, dyn);
  for (int p = 0; p < ndyn; p++) combine_geoms(mj, dyn[2 * p], dyn[2 * p + 1], r + p);
  free(dyn);
  int np = ndyn;
  for (int i = 0; i < nexp; i++) {
    pairRec e;
    explicit_pair(mj, i, &e);
    if (!explicit_collides(m, &e)) continue;
    pairRec* hit = (pairRec*)bsearch(&e, r, ndyn, sizeof(pairRec), pair_cmp);
    if (hit && hit->expl < 0) *hit = e;  // the explicit pair replaces the dynamic one
    else r[np++] = e;
  }
  qsort(r, np, sizeof(pairRec), pair_cmp);
  if (mj->opt.enableflags & mjENBL_OVERRIDE) override_pairs(mj, r, np);
  for (int p = 0; p < np; p++) {
    int c = r[p].condim;
    if (c == 1 || c == 3 || c == 4 || c == 6) continue;
    const char *n0 = mjname(mj, mj->name_geomadr, r[p].g0), *n1 = mjname(mj, mj->name_geomadr, r[p].g1);
    if (r[p].expl >= 0)
      sap_fail(SAP_ERR_UNSUPPORTED, "%s: <pair> '%s' (geoms '%s', '%s') has condim %d; sapsim supports "
               "condim 1, 3, 4 and 6", path,
               mjname(mj, mj->name_pairadr, r[p].expl), n0, n1, c);
    else
      sap_fail(SAP_ERR_UNSUPPORTED, "%s: geoms '%s' (condim %d) and '%s' (condim %d) make contacts with "
               "condim %d (MuJoCo: the higher priority's, else the larger); sapsim supports condim 1, 3, "
               "4 and 6", path, n0, mj->geom_condim[r[p].g0], n1,
               mj->geom_condim[r[p].g1], c);
    free(r);
    return SAP_ERR_UNSUPPORTED;
  }
  // two explicit pairs of the same geoms (sorted next to each other)
  for (int p = 1; p < np; p++)
    if (!pair_cmp(r + p - 1, r + p)) {
      sap_fail(SAP_ERR_UNSUPPORTED, "%s: <pair> '%s' and <pair> '%s' name the same geoms; sapsim "
               "supports one explicit pair per geom pair", path, mjname(mj, mj->name_pairadr, r[p - 1].expl),
               mjname(mj, mj->name_pairadr, r[p].expl));
      free(r);
      return SAP_ERR_UNSUPPORTED;
    }
  *out = r;
  *n = np;
  return SAP_OK;
}

/* convert a compiled mjModel; path is used in messages */
sapStatus sapm_convert(const mjModel* mj, const char* path, sapModel** out);
sapStatus sapm_convert(const mjModel* mj, const char* path, sapModel** out) {
  sapStatus st = check_supported(mj, path);
  if (st != SAP_OK) return st;
  if (mj->nv == 0)
    return sap_fail(SAP_ERR_SCENE, "%s: the model has no degrees of freedom", path);

  sapModel tmp;
  copy_sizes(&tmp, mj);
  if ((st = sapm_alloc(&tmp)) != SAP_OK) return st;
  tmp.timestep = mj->opt.timestep;
  for (int i = 0; i < 3; i++) tmp.gravity[i] = (mj->opt.disableflags & mjDSBL_GRAVITY) ? 0 : mj->opt.gravity[i];
  for (int i = 0; i < 3; i++) tmp.magnetic[i] = mj->opt.magnetic[i];
  /* fluid forces are passive forces: off with springs and dampers both disabled (mj_passive) */
  int fluid = !(disabled(mj, mjDSBL_SPRING) && disabled(mj, mjDSBL_DAMPER));
  tmp.fluid_density = fluid ? mj->opt.density : 0;
  tmp.fluid_viscosity = fluid ? mj->opt.viscosity : 0;
  for (int i = 0; i < 3; i++) tmp.wind[i] = mj->opt.wind[i];
  copy_bodies(&tmp, mj);
  copy_joints(&tmp, mj);
  copy_geoms(&tmp, mj);
  if ((st = copy_actuators(&tmp, mj, path)) != SAP_OK) {
    free(tmp.buffer);
    return st;
  }
  copy_keys_names(&tmp, mj);
  sapm_copySensors(&tmp, mj);
  copy_equality(&tmp, mj);
  count_solve_rows(&tmp);
  if ((st = sapm_checkValues(&tmp, path)) != SAP_OK) {
    free(tmp.buffer);
    return st;
  }

  /* candidate collision pairs and their parameters, then a model sized for them */
  pairRec* pr = NULL;
  int np = 0;
  if ((st = build_pairs(&tmp, mj, path, &pr, &np)) != SAP_OK) {
    free(tmp.buffer);
    return st;
  }
  sapModel* m = (sapModel*)malloc(sizeof(sapModel));
  if (!m) {
    free(pr);
    free(tmp.buffer);
    return sap_fail(SAP_ERR_MEMORY, "model: cannot allocate");
  }
  *m = tmp;
  m->npair_max = np;
  m->ncondim = 3;
  m->nadhesion = 0;
  if ((st = sapm_alloc(m)) != SAP_OK) {
    free(m);
    free(pr);
    free(tmp.buffer);
    return st;
  }
  /* field counts are tmp's (the pair arrays have none there) */
#define X(type, name, count) memcpy(m->name, tmp.name, sizeof(type) * (size_t)(count));
  SAP_MODEL_FIELDS(X, (&tmp))
#undef X
  for (int p = 0; p < np; p++) {
    m->pair_geom[2 * p] = pr[p].g0;
    m->pair_geom[2 * p + 1] = pr[p].g1;
    m->pair_explicit[p] = pr[p].expl >= 0;
    m->pair_condim[p] = pr[p].condim;
    m->pair_mu[p] = pr[p].mu;
    contact_coefficients(m, p, pr + p);
    m->pair_margin[p] = pr[p].margin;
    m->pair_gap[p] = pr[p].gap;
    m->pair_adhesion[p] = pr[p].adhesion;
    m->nadhesion += pr[p].adhesion != 0;
  }
  sapc_pairMaterial(m);
  free(pr);
  free(tmp.buffer);
  *out = m;
  return SAP_OK;
}

/* what a MuJoCo load error means where MuJoCo's message does not say: "" or a clause that
 * starts with "; " */
const char* sapm_loadHint(const char* err) {
  if (strstr(err, "geom wrapping not supported"))
    return "; MuJoCo 4 refuses armature (a tendon's own or its actuators') on a spatial tendon that wraps a geom";
  return "";
}

sapStatus sap_loadModel(const char* path, sapModel** out) {
  if (!path || !out) return sap_fail(SAP_ERR_ARG, "sap_loadModel: null argument");
  *out = NULL;
  /* a FIFO or device would block or never end: scenes are regular files */
  struct stat sb;
  if (stat(path, &sb) != 0)
    return sap_fail(SAP_ERR_SCENE, "%s: cannot open scene file: %s", path, strerror(errno));
  if (!S_ISREG(sb.st_mode))
    return sap_fail(SAP_ERR_SCENE, "%s: not a regular file", path);
  FILE* f = fopen(path, "rb");
  if (!f) return sap_fail(SAP_ERR_SCENE, "%s: cannot open scene file: %s", path, strerror(errno));
  fclose(f);
  char err[1000] = "";
  mjModel* mj = mj_loadXML(path, NULL, err, sizeof(err));
  if (!mj) return sap_fail(SAP_ERR_SCENE, "%s: MuJoCo could not load the scene: %s%s", path, err, sapm_loadHint(err));
  sapStatus st = sapm_convert(mj, path, out);
  mj_deleteModel(mj);
  return st;
}
