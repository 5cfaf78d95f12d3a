/* Sensor import: MuJoCo's compiled sensors (sensor_type/objtype/objid/reftype/refid/adr/dim/
 * cutoff, mujoco_semantics.md §8) converted to sapModel's sensor table, same order and layout.
 * Frame objects become a pose in the body that carries them; a sensor type, object or option
 * sapsim does not compute is refused by name. Noise is stored by MuJoCo and never applied
 * (as MuJoCo's mj_forward), so it is ignored here. */
#include <math.h>
#include <string.h>

#include <mujoco/mujoco.h>

#include "model.h"
#include "sim.h"

/* MuJoCo's numbering is sapsim's (include/sapsim/model.h) */
_Static_assert(SAP_SENS_TOUCH == (int)mjSENS_TOUCH && SAP_SENS_TORQUE == (int)mjSENS_TORQUE &&
               SAP_SENS_MAGNETOMETER == (int)mjSENS_MAGNETOMETER &&
               SAP_SENS_JOINTPOS == (int)mjSENS_JOINTPOS && SAP_SENS_JOINTACTFRC == (int)mjSENS_JOINTACTFRC &&
               SAP_SENS_BALLQUAT == (int)mjSENS_BALLQUAT && SAP_SENS_BALLANGVEL == (int)mjSENS_BALLANGVEL &&
               SAP_SENS_FRAMEPOS == (int)mjSENS_FRAMEPOS && SAP_SENS_FRAMEANGACC == (int)mjSENS_FRAMEANGACC &&
               SAP_SENS_SUBTREECOM == (int)mjSENS_SUBTREECOM &&
               SAP_SENS_SUBTREEANGMOM == (int)mjSENS_SUBTREEANGMOM && SAP_SENS_CLOCK == (int)mjSENS_CLOCK &&
               SAP_SENS_TENDONACTFRC == (int)mjSENS_TENDONACTFRC &&
               SAP_SENS_JOINTLIMITPOS == (int)mjSENS_JOINTLIMITPOS &&
               SAP_SENS_JOINTLIMITVEL == (int)mjSENS_JOINTLIMITVEL &&
               SAP_SENS_TENDONLIMITPOS == (int)mjSENS_TENDONLIMITPOS &&
               SAP_SENS_TENDONLIMITVEL == (int)mjSENS_TENDONLIMITVEL &&
               SAP_SENS_JOINTLIMITFRC == (int)mjSENS_JOINTLIMITFRC &&
               SAP_SENS_TENDONLIMITFRC == (int)mjSENS_TENDONLIMITFRC &&
               SAP_SENS_E_POTENTIAL == (int)mjSENS_E_POTENTIAL && SAP_SENS_E_KINETIC == (int)mjSENS_E_KINETIC &&
               SAP_STAGE_POS == (int)mjSTAGE_POS && SAP_STAGE_ACC == (int)mjSTAGE_ACC &&
               SAP_SENS_INSIDESITE == (int)mjSENS_INSIDESITE && SAP_SENS_CONTACT == (int)mjSENS_CONTACT &&
               SAP_SENS_GEOMDIST == (int)mjSENS_GEOMDIST && SAP_SENS_GEOMFROMTO == (int)mjSENS_GEOMFROMTO &&
               SAP_OBJ_BODY == (int)mjOBJ_BODY && SAP_OBJ_XBODY == (int)mjOBJ_XBODY &&
               SAP_OBJ_GEOM == (int)mjOBJ_GEOM && SAP_OBJ_SITE == (int)mjOBJ_SITE &&
               SAP_OBJ_CAMERA == (int)mjOBJ_CAMERA && SAP_CONDATA_TANGENT == (int)mjCONDATA_TANGENT,
               "sensor numbering differs from MuJoCo's");

/* MuJoCo's name of a sensor type, for messages */
static const char* type_name(int t) {
  static const struct { int t; const char* n; } names[] = {
      {mjSENS_TOUCH, "touch"}, {mjSENS_ACCELEROMETER, "accelerometer"},
      {mjSENS_VELOCIMETER, "velocimeter"}, {mjSENS_GYRO, "gyro"}, {mjSENS_FORCE, "force"},
      {mjSENS_TORQUE, "torque"}, {mjSENS_MAGNETOMETER, "magnetometer"},
      {mjSENS_RANGEFINDER, "rangefinder"}, {mjSENS_CAMPROJECTION, "camprojection"},
      {mjSENS_JOINTPOS, "jointpos"}, {mjSENS_JOINTVEL, "jointvel"}, {mjSENS_TENDONPOS, "tendonpos"},
      {mjSENS_TENDONVEL, "tendonvel"}, {mjSENS_ACTUATORPOS, "actuatorpos"},
      {mjSENS_ACTUATORVEL, "actuatorvel"}, {mjSENS_ACTUATORFRC, "actuatorfrc"},
      {mjSENS_JOINTACTFRC, "jointactuatorfrc"}, {mjSENS_TENDONACTFRC, "tendonactuatorfrc"},
      {mjSENS_BALLQUAT, "ballquat"}, {mjSENS_BALLANGVEL, "ballangvel"},
      {mjSENS_JOINTLIMITPOS, "jointlimitpos"}, {mjSENS_JOINTLIMITVEL, "jointlimitvel"},
      {mjSENS_JOINTLIMITFRC, "jointlimitfrc"}, {mjSENS_TENDONLIMITPOS, "tendonlimitpos"},
      {mjSENS_TENDONLIMITVEL, "tendonlimitvel"}, {mjSENS_TENDONLIMITFRC, "tendonlimitfrc"},
      {mjSENS_FRAMEPOS, "framepos"}, {mjSENS_FRAMEQUAT, "framequat"},
      {mjSENS_FRAMEXAXIS, "framexaxis"}, {mjSENS_FRAMEYAXIS, "frameyaxis"},
      {mjSENS_FRAMEZAXIS, "framezaxis"}, {mjSENS_FRAMELINVEL, "framelinvel"},
      {mjSENS_FRAMEANGVEL, "frameangvel"}, {mjSENS_FRAMELINACC, "framelinacc"},
      {mjSENS_FRAMEANGACC, "frameangacc"}, {mjSENS_SUBTREECOM, "subtreecom"},
      {mjSENS_SUBTREELINVEL, "subtreelinvel"}, {mjSENS_SUBTREEANGMOM, "subtreeangmom"},
      {mjSENS_INSIDESITE, "insidesite"}, {mjSENS_GEOMDIST, "distance"},
      {mjSENS_GEOMNORMAL, "normal"}, {mjSENS_GEOMFROMTO, "fromto"}, {mjSENS_CONTACT, "contact"},
      {mjSENS_E_POTENTIAL, "e_potential"}, {mjSENS_E_KINETIC, "e_kinetic"},
      {mjSENS_CLOCK, "clock"}, {mjSENS_TACTILE, "tactile"}, {mjSENS_PLUGIN, "plugin"},
      {mjSENS_USER, "user"}};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
    if (names[i].t == t) return names[i].n;
  return "unknown";
}

static int supported_type(int t) {
  switch (t) {
    case mjSENS_TOUCH: case mjSENS_ACCELEROMETER: case mjSENS_VELOCIMETER: case mjSENS_GYRO:
    case mjSENS_FORCE: case mjSENS_TORQUE: case mjSENS_MAGNETOMETER: case mjSENS_RANGEFINDER:
    case mjSENS_JOINTPOS: case mjSENS_JOINTVEL:
    case mjSENS_TENDONPOS: case mjSENS_TENDONVEL: case mjSENS_ACTUATORPOS: case mjSENS_ACTUATORVEL:
    case mjSENS_ACTUATORFRC: case mjSENS_JOINTACTFRC: case mjSENS_BALLQUAT: case mjSENS_BALLANGVEL:
    case mjSENS_FRAMEPOS: case mjSENS_FRAMEQUAT: case mjSENS_FRAMEXAXIS: case mjSENS_FRAMEYAXIS:
    case mjSENS_FRAMEZAXIS: case mjSENS_FRAMELINVEL: case mjSENS_FRAMEANGVEL:
    case mjSENS_FRAMELINACC: case mjSENS_FRAMEANGACC: case mjSENS_SUBTREECOM:
    case mjSENS_SUBTREELINVEL: case mjSENS_SUBTREEANGMOM: case mjSENS_CLOCK:
    case mjSENS_TENDONACTFRC: case mjSENS_JOINTLIMITPOS: case mjSENS_JOINTLIMITVEL:
    case mjSENS_TENDONLIMITPOS: case mjSENS_TENDONLIMITVEL: case mjSENS_E_POTENTIAL:
    case mjSENS_JOINTLIMITFRC: case mjSENS_TENDONLIMITFRC:
    case mjSENS_E_KINETIC: case mjSENS_CONTACT: case mjSENS_INSIDESITE: case mjSENS_GEOMDIST:
    case mjSENS_GEOMNORMAL: case mjSENS_GEOMFROMTO:
      return 1;
    default:
      return 0;
  }
}

static const char* sname(const mjModel* mj, int i) {
  const char* n = mj->names + mj->name_sensoradr[i];
  return *n ? n : "(unnamed)";
}

/* body and local pose (pos, quat) of a frame object; 0 when the object type has no frame */
static int object_frame(const mjModel* mj, int type, int id, int* body, double* pose) {
  static const double ident[7] = {0, 0, 0, 1, 0, 0, 0};
  memcpy(pose, ident, sizeof(ident));
  switch (type) {
    case mjOBJ_XBODY: *body = id; return 1;
    case mjOBJ_BODY:
      *body = id;
      memcpy(pose, mj->body_ipos + 3 * id, 3 * sizeof(double));
      memcpy(pose + 3, mj->body_iquat + 4 * id, 4 * sizeof(double));
      return 1;
    case mjOBJ_GEOM:
      *body = mj->geom_bodyid[id];
      memcpy(pose, mj->geom_pos + 3 * id, 3 * sizeof(double));
      memcpy(pose + 3, mj->geom_quat + 4 * id, 4 * sizeof(double));
      return 1;
    case mjOBJ_SITE:
      *body = mj->site_bodyid[id];
      memcpy(pose, mj->site_pos + 3 * id, 3 * sizeof(double));
      memcpy(pose + 3, mj->site_quat + 4 * id, 4 * sizeof(double));
      return 1;
    case mjOBJ_CAMERA:
      *body = mj->cam_bodyid[id];
      memcpy(pose, mj->cam_pos + 3 * id, 3 * sizeof(double));
      memcpy(pose + 3, mj->cam_quat + 4 * id, 4 * sizeof(double));
      return 1;
    default: return 0;
  }
}

/* a site shape sapsim tests points and rays against (touch, contact, insidesite) */
static int zone_type(int st) {
  return st == mjGEOM_SPHERE || st == mjGEOM_CAPSULE || st == mjGEOM_ELLIPSOID || st == mjGEOM_CYLINDER ||
         st == mjGEOM_BOX;
}

/* a contact sensor sapsim computes: fields found .. tangent, matching by geom, body, subtree
 * or site (a site zone of a supported shape), any reduction */
static sapStatus check_contact(const mjModel* mj, int i, const char* path, const char* n) {
  static const char* field[] = {"found", "force", "torque", "dist", "pos", "normal", "tangent", "linvel", "angvel"};
  int spec = mj->sensor_intprm[mjNSENS * i], reduce = mj->sensor_intprm[mjNSENS * i + 1];
  for (int k = SAP_NCONDATA; k < mjNCONDATA; k++)
    if (spec & (1 << k))
      return sap_fail(SAP_ERR_UNSUPPORTED, "%s: contact sensor '%s' asks for data field '%s'; sapsim computes "
                      "found, force, torque, dist, pos, normal and tangent", path, n,
                      k < (int)(sizeof(field) / sizeof(field[0])) ? field[k] : "unknown");
  if (spec <= 0 || spec >= (1 << SAP_NCONDATA) || reduce < 0 || reduce > SAP_REDUCE_NETFORCE)
    return sap_fail(SAP_ERR_UNSUPPORTED, "%s: contact sensor '%s' has data %#x and reduce %d, which sapsim "
                    "does not know", path, n, spec, reduce);
  for (int r = 0; r < 2; r++) {
    int ty = r ? mj->sensor_reftype[i] : mj->sensor_objtype[i], oid = r ? mj->sensor_refid[i] : mj->sensor_objid[i];
    if (ty != mjOBJ_UNKNOWN && ty != mjOBJ_GEOM && ty != mjOBJ_BODY && ty != mjOBJ_XBODY &&
        !(ty == mjOBJ_SITE && r == 0))
      return sap_fail(SAP_ERR_UNSUPPORTED, "%s: contact sensor '%s' matches object type %d; sapsim supports "
                      "geom, body, subtree and site", path, n, ty);
    if (ty == mjOBJ_SITE && !zone_type(mj->site_type[oid]))
      return sap_fail(SAP_ERR_UNSUPPORTED, "%s: contact sensor '%s' has a site of geom type %d; sapsim "
                      "supports sphere, capsule, ellipsoid, cylinder and box sites", path, n, mj->site_type[oid]);
  }
  return SAP_OK;
}

/* MuJoCo's geom type names, for messages */
static const char* geom_name(int t) {
  static const char* n[] = {"plane", "hfield", "sphere", "capsule", "ellipsoid", "cylinder", "box", "mesh", "sdf"};
  return t >= 0 && t < (int)(sizeof(n) / sizeof(n[0])) ? n[t] : "unknown";
}

/* a geom type pair (ta <= tb) whose distance sapsim's narrow phase gives as MuJoCo's
 * mj_geomDistance does: MuJoCo's analytic colliders (plane against sphere, capsule,
 * ellipsoid, cylinder, box, mesh; sphere against sphere, capsule, cylinder, box; capsule
 * against capsule, box). MuJoCo runs its exact CCD distance (GJK/EPA) for the others */
static int distance_pair(int ta, int tb) {
  if (ta == mjGEOM_PLANE) return tb != mjGEOM_PLANE && tb != mjGEOM_HFIELD && tb != mjGEOM_SDF;
  if (ta == mjGEOM_SPHERE)
    return tb == mjGEOM_SPHERE || tb == mjGEOM_CAPSULE || tb == mjGEOM_CYLINDER || tb == mjGEOM_BOX;
  if (ta == mjGEOM_CAPSULE) return tb == mjGEOM_CAPSULE || tb == mjGEOM_BOX;
  return 0;
}

/* distance / normal / fromto: geom or body objects, every geom pair of a type pair above */
static sapStatus check_geomdist(const mjModel* mj, int i, const char* path, const char* n) {
  int ids[2][2];
  for (int r = 0; r < 2; r++) {
    int ty = r ? mj->sensor_reftype[i] : mj->sensor_objtype[i], id = r ? mj->sensor_refid[i] : mj->sensor_objid[i];
    if (ty != mjOBJ_GEOM && ty != mjOBJ_BODY)
      return sap_fail(SAP_ERR_UNSUPPORTED, "%s: %s sensor '%s' has object type %d; sapsim supports geom and body",
                      path, type_name(mj->sensor_type[i]), n, ty);
    ids[r][0] = ty == mjOBJ_BODY ? mj->body_geomadr[id] : id;
    ids[r][1] = ty == mjOBJ_BODY ? mj->body_geomnum[id] : 1;
  }
  for (int a = ids[0][0]; a < ids[0][0] + ids[0][1]; a++)
    for (int b = ids[1][0]; b < ids[1][0] + ids[1][1]; b++) {
      int ta = mj->geom_type[a], tb = mj->geom_type[b];
      if (!distance_pair(ta < tb ? ta : tb, ta < tb ? tb : ta))
        return sap_fail(SAP_ERR_UNSUPPORTED, "%s: %s sensor '%s' needs the distance of a %s and a %s (geoms %d, %d), "
                        "which sapsim's narrow phase does not give as MuJoCo's exact CCD distance (supported: plane "
                        "against sphere, capsule, ellipsoid, cylinder, box, mesh; sphere against sphere, capsule, "
                        "cylinder, box; capsule against capsule, box)", path, type_name(mj->sensor_type[i]), n,
                        geom_name(ta), geom_name(tb), a, b);
    }
  return SAP_OK;
}

/* the sensors sapsim cannot compute, named; SAP_OK when all can be */
sapStatus sapm_checkSensors(const mjModel* mj, const char* path) {
  if (mj->nsensor == 0) return SAP_OK;
  if (mj->opt.disableflags & mjDSBL_SENSOR)
    return sap_fail(SAP_ERR_UNSUPPORTED, "%s: <flag sensor=\"disable\"/> is not supported (remove the "
                    "sensors or enable them)", path);
  int connect = 0;
  for (int e = 0; e < mj->neq; e++) connect |= mj->eq_type[e] == mjEQ_CONNECT || mj->eq_type[e] == mjEQ_WELD;
  for (int i = 0; i < mj->nsensor; i++) {
    int t = mj->sensor_type[i], ot = mj->sensor_objtype[i], id = mj->sensor_objid[i];
    const char* n = sname(mj, i);
    if (!supported_type(t))
      return sap_fail(SAP_ERR_UNSUPPORTED, "%s: sensor '%s' has type %s, which sapsim does not compute "
                      "(supported: README \"Sensors\")", path, n, type_name(t));
    if (mj->sensor_plugin[i] >= 0)
      return sap_fail(SAP_ERR_UNSUPPORTED, "%s: sensor '%s' is a plugin sensor, which is not supported", path, n);
    /* without nsample MuJoCo computes the sensor every step (an interval is ignored; a delay
     * does not compile), and so does sapsim */
    if (mj->sensor_history[2 * i] > 0 &&
        (!(mj->sensor_delay[i] >= 0) || !isfinite(mj->sensor_delay[i]) || !(mj->sensor_interval[2 * i] >= 0) ||
         !isfinite(mj->sensor_interval[2 * i]) || !isfinite(mj->sensor_interval[2 * i + 1]) ||
         mj->sensor_history[2 * i + 1] < 0 || mj->sensor_history[2 * i + 1] > 2))
      return sap_fail(SAP_ERR_SCENE, "%s: sensor '%s' has delay %g, interval [%g %g] and interp %d; a delay "
                      "and a period must be finite and >= 0, interp 0, 1 or 2", path, n, mj->sensor_delay[i],
                      mj->sensor_interval[2 * i], mj->sensor_interval[2 * i + 1], mj->sensor_history[2 * i + 1]);
    if (mj->sensor_needstage[i] < mjSTAGE_POS || mj->sensor_needstage[i] > mjSTAGE_ACC)
      return sap_fail(SAP_ERR_UNSUPPORTED, "%s: sensor '%s' (%s) has an unexpected stage %d", path, n,
                      type_name(t), mj->sensor_needstage[i]);
    for (int r = 0; r < 2; r++) {
      int ty = r ? mj->sensor_reftype[i] : ot, oid = r ? mj->sensor_refid[i] : id;
      if (oid >= 0 && ty == mjOBJ_CAMERA && mj->cam_mode[oid] != mjCAMLIGHT_FIXED)
        return sap_fail(SAP_ERR_UNSUPPORTED, "%s: sensor '%s' uses a tracking camera (mode other than "
                        "fixed), which is not supported", path, n);
    }
    if (t == mjSENS_TOUCH) {
      int st = mj->site_type[id];
      if (st != mjGEOM_SPHERE && st != mjGEOM_CAPSULE && st != mjGEOM_ELLIPSOID &&
          st != mjGEOM_CYLINDER && st != mjGEOM_BOX)
        return sap_fail(SAP_ERR_UNSUPPORTED, "%s: touch sensor '%s' has a site of geom type %d; "
                        "sapsim supports sphere, capsule, ellipsoid, cylinder and box zones", path, n, st);
    }
    if (t == mjSENS_CONTACT) {
      sapStatus st = check_contact(mj, i, path, n);
      if (st != SAP_OK) return st;
    }
    if (t == mjSENS_GEOMDIST || t == mjSENS_GEOMNORMAL || t == mjSENS_GEOMFROMTO) {
      sapStatus st = check_geomdist(mj, i, path, n);
      if (st != SAP_OK) return st;
    }
    if (t == mjSENS_INSIDESITE) {
      if (!zone_type(mj->site_type[mj->sensor_refid[i]]))
        return sap_fail(SAP_ERR_UNSUPPORTED, "%s: insidesite sensor '%s' has a site of geom type %d; sapsim "
                        "supports sphere, capsule, ellipsoid, cylinder and box sites", path, n,
                        mj->site_type[mj->sensor_refid[i]]);
      if (ot != mjOBJ_BODY && ot != mjOBJ_XBODY && ot != mjOBJ_GEOM && ot != mjOBJ_SITE && ot != mjOBJ_CAMERA)
        return sap_fail(SAP_ERR_UNSUPPORTED, "%s: insidesite sensor '%s' has object type %d; sapsim supports "
                        "body, xbody, geom, site and camera", path, n, ot);
      if (ot == mjOBJ_BODY && id > 0 && mj->body_mass[id] < mjMINVAL && mj->body_subtreemass[id] >= mjMINVAL)
        return sap_fail(SAP_ERR_UNSUPPORTED, "%s: insidesite sensor '%s' reads a massless body with massive "
                        "children (MuJoCo uses its subtree com), which is not supported", path, n);
    }
    if (t == mjSENS_RANGEFINDER && ot != mjOBJ_SITE)
      return sap_fail(SAP_ERR_UNSUPPORTED, "%s: rangefinder '%s' is attached to a camera (a depth image of "
                      "rays); sapsim supports rangefinders on sites", path, n);
    if (t == mjSENS_RANGEFINDER && (mj->sensor_intprm[mjNSENS * i] & ~((1 << (mjRAYDATA_DEPTH + 1)) - 1)))
      return sap_fail(SAP_ERR_UNSUPPORTED, "%s: rangefinder '%s' asks for ray data %#x beyond dist, dir, "
                      "origin, point, normal and depth", path, n, mj->sensor_intprm[mjNSENS * i]);
    if ((t == mjSENS_FORCE || t == mjSENS_TORQUE) && connect)
      return sap_fail(SAP_ERR_UNSUPPORTED, "%s: %s sensor '%s' in a model with connect or weld "
                      "equality constraints is not supported (their forces are not in cfrc_int)", path,
                      type_name(t), n);
    if ((t == mjSENS_ACTUATORPOS || t == mjSENS_ACTUATORVEL) &&
        ((mj->actuator_trntype[id] == mjTRN_SITE && mj->actuator_trnid[2 * id + 1] < 0) ||
         mj->actuator_trntype[id] == mjTRN_BODY))
      return sap_fail(SAP_ERR_UNSUPPORTED, "%s: sensor '%s' (%s) reads a %s transmission's length or "
                      "velocity, which is not supported (a site transmission with a refsite and a slider-crank have one)",
                      path, n, type_name(t), mj->actuator_trntype[id] == mjTRN_SITE ? "site" : "body (adhesion)");
    if (t == mjSENS_JOINTACTFRC)
      for (int u = 0; u < mj->nu; u++)
        if (mj->actuator_trntype[u] == mjTRN_SITE || mj->actuator_trntype[u] == mjTRN_BODY ||
            mj->actuator_trntype[u] == mjTRN_SLIDERCRANK)
          return sap_fail(SAP_ERR_UNSUPPORTED, "%s: sensor '%s' (jointactuatorfrc) in a model with site, "
                          "slider-crank or body (adhesion) transmissions is not supported", path, n);
    if ((t == mjSENS_ACTUATORPOS || t == mjSENS_ACTUATORVEL || t == mjSENS_ACTUATORFRC) &&
        mj->sensor_dim[i] != 1)
      return sap_fail(SAP_ERR_UNSUPPORTED, "%s: sensor '%s' has %d values; sapsim supports one output "
                      "per actuator", path, n, mj->sensor_dim[i]);
    if (!isfinite(mj->sensor_cutoff[i]) || mj->sensor_cutoff[i] < 0)
      return sap_fail(SAP_ERR_SCENE, "%s: sensor '%s' has cutoff %g; it must be finite and >= 0", path,
                      n, mj->sensor_cutoff[i]);
  }
  return SAP_OK;
}

static void copy_ray_data(sapModel* m, const mjModel* mj);

/* fill m's sensor table (sizes set, arrays allocated) from mj, and what rays need */
void sapm_copySensors(sapModel* m, const mjModel* mj) {
  copy_ray_data(m, mj);
  for (int i = 0; i < m->nsensor; i++) {
    int t = mj->sensor_type[i];
    m->sensor_type[i] = t;
    m->sensor_stage[i] = mj->sensor_needstage[i];
    m->sensor_datatype[i] = mj->sensor_datatype[i];
    m->sensor_objtype[i] = mj->sensor_objtype[i];
    m->sensor_objid[i] = mj->sensor_objid[i];
    m->sensor_reftype[i] = mj->sensor_reftype[i];
    m->sensor_refid[i] = mj->sensor_refid[i];
    m->sensor_adr[i] = mj->sensor_adr[i];
    m->sensor_dim[i] = mj->sensor_dim[i];
    m->sensor_cutoff[i] = mj->sensor_cutoff[i];
    m->name_sensoradr[i] = mj->name_sensoradr[i];
    m->sensor_zonetype[i] = -1;
    int* body = m->sensor_body + 2 * i;
    double* frame = m->sensor_frame + 14 * i;
    body[0] = body[1] = -1;
    if (!object_frame(mj, mj->sensor_objtype[i], mj->sensor_objid[i], body, frame)) body[0] = -1;
    if (mj->sensor_refid[i] < 0 || !object_frame(mj, mj->sensor_reftype[i], mj->sensor_refid[i], body + 1, frame + 7))
      body[1] = -1;
    m->sensor_raydata[i] = t == mjSENS_RANGEFINDER ? mj->sensor_intprm[mjNSENS * i] : 0;
    /* the site zone: touch's and a contact sensor's object, insidesite's reference */
    int zone = -1;
    if (t == mjSENS_TOUCH || (t == mjSENS_CONTACT && mj->sensor_objtype[i] == mjOBJ_SITE)) zone = mj->sensor_objid[i];
    if (t == mjSENS_INSIDESITE) zone = mj->sensor_refid[i];
    if (zone >= 0) {
      m->sensor_zonetype[i] = mj->site_type[zone];
      memcpy(m->sensor_zonesize + 3 * i, mj->site_size + 3 * zone, 3 * sizeof(double));
    }
    m->sensor_condata[2 * i] = t == mjSENS_CONTACT ? mj->sensor_intprm[mjNSENS * i] : 0;
    m->sensor_condata[2 * i + 1] = t == mjSENS_CONTACT ? mj->sensor_intprm[mjNSENS * i + 1] : 0;
    int ns = mj->sensor_history[2 * i];
    m->sensor_nsample[i] = ns > 0 ? ns : 0;
    m->sensor_interp[i] = ns > 0 ? mj->sensor_history[2 * i + 1] : 0;
    m->sensor_delay[i] = ns > 0 ? mj->sensor_delay[i] : 0;
    m->sensor_interval[2 * i] = ns > 0 ? mj->sensor_interval[2 * i] : 0;
    m->sensor_interval[2 * i + 1] = ns > 0 ? mj->sensor_interval[2 * i + 1] : 0;
    m->sensor_historyadr[i] = ns > 0 ? (int)mj->sensor_historyadr[i] : -1;
  }
}

int sapm_rayFaces(const mjModel* mj) {
  for (int i = 0; i < mj->nsensor; i++)
    if (mj->sensor_type[i] == mjSENS_RANGEFINDER) return (int)mj->nmeshface;
  return 0;
}

/* what the rays see (kernels/ray.h, MuJoCo's ray_eliminate): a geom whose rgba alpha is 0 (its
 * material's when it has one) is invisible to rays; the mesh triangles when m keeps them */
static void copy_ray_data(sapModel* m, const mjModel* mj) {
  for (int g = 0; g < mj->ngeom; g++) {
    int mat = mj->geom_matid[g];
    m->geom_rayskip[g] = (mat < 0 ? mj->geom_rgba[4 * g + 3] : mj->mat_rgba[4 * mat + 3]) == 0;
  }
  for (int i = 0; i < mj->nmesh; i++) {
    m->mesh_faceadr[i] = m->nmeshface ? mj->mesh_faceadr[i] : 0;
    m->mesh_facenum[i] = m->nmeshface ? mj->mesh_facenum[i] : 0;
  }
  memcpy(m->mesh_face, mj->mesh_face, sizeof(int) * 3 * (size_t)m->nmeshface);
}
