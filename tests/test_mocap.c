/* Mocap bodies against MuJoCo 4 on the same models: the compiled and keyframe poses,
 * kinematics of mocap bodies and their descendants at random positions and random
 * non-normalised quaternions (xpos, xquat, xmat, xipos, geom frames, joint frames; M and
 * qfrc_bias of a jointed child), the collision filter (a mocap body is its own weld group:
 * no contacts with static geometry or other mocaps), the sap_set rules of mocap_pos /
 * mocap_quat, and a free box pushed by a moving mocap paddle (momentum change inside the
 * analytic impulse bound; displacement as MuJoCo's and as steady pushing predicts). */
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "fixture_mj.h"
#include "kernels.h"
#include "sim.h"

#define PADDLE "scenes/mocap_paddle.xml"

/* three mocap bodies (one with a jointless and a jointed child), a static floor and wall,
 * a free box; every pair either overlaps by >= 5 mm or is >= 5 cm apart, so that MuJoCo
 * (margin 0) and sapsim (a 2 cm speculative band) see the same pairs */
static const char* filter_xml =
    "<mujoco><worldbody>"
    "<geom name='floor' type='plane' size='5 5 .1'/>"
    "<geom name='wall' type='box' pos='3 0 0' size='.5 .5 .5'/>"
    "<body name='m1' mocap='true' pos='0 0 .1' quat='0.9 0.1 0.3 0.2'><geom name='m1g' size='.2'/>"
    "  <body name='m1c' pos='.1 0 0'><geom name='m1cg' size='.2'/></body>"
    "  <body name='m1j' pos='0 .15 0'><joint name='hinge' type='hinge' axis='1 0 0'/>"
    "    <geom name='m1jg' type='capsule' size='.15 .05' pos='0 0 0'/></body>"
    "</body>"
    "<body name='m2' mocap='true' pos='.25 .1 .1'><geom name='m2g' size='.2'/></body>"
    "<body name='m3' mocap='true' pos='3 0 .6'><geom name='m3g' size='.2'/></body>"
    "<body name='free' pos='0 -.25 .09'><freejoint/><geom name='fg' type='box' size='.1 .1 .1'/></body>"
    "</worldbody>"
    "<keyframe><key name='moved' qpos='0.3 0 -.25 .09 1 0 0 0' mpos='1 2 3 4 5 6 7 8 9' "
    "mquat='1 0 0 0 0 1 0 0 0.5 0.5 0.5 0.5'/></keyframe></mujoco>";

static const char* write_tmp(const char* xml) { return fx_tempFile("mocap.xml", xml); }

/* MuJoCo's and sapsim's compiled models of one file, and a batch on the CPU */
typedef struct {
  mjModel* mj;
  mjData* md;
  sapModel* m;
  sapSim* s;
} pairOf;

static int open_pair(pairOf* p, const char* path, int nworld, sapPreset preset, int contacts) {
  memset(p, 0, sizeof(*p));
  p->mj = fx_mjModel(path);
  CHECK(sap_loadModel(path, &p->m) == SAP_OK, "%s: %s", path, sap_lastError());
  if (!p->mj || !p->m) return 0;
  p->md = mj_makeData(p->mj);
  sapOptions o;
  sap_optionsDefault(&o);
  o.device = SAP_DEVICE_CPU;
  o.preset = preset;
  o.contacts = contacts;
  CHECK(sap_create(p->m, &o, nworld, &p->s) == SAP_OK, "%s: %s", path, sap_lastError());
  return p->s != NULL;
}

static void close_pair(pairOf* p) {
  sap_free(p->s);
  sap_freeModel(p->m);
  if (p->md) mj_deleteData(p->md);
  if (p->mj) mj_deleteModel(p->mj);
}

/* ---- model, reset and keyframes --------------------------------------------------- */

static void test_load_and_reset(void) {
  const char* path = write_tmp(filter_xml);
  pairOf p;
  int ok = open_pair(&p, path, 3, SAP_PRESET_APPROX64, 1);
  remove(path);
  if (!ok) { close_pair(&p); return; }
  const sapModel* m = p.m;
  mjModel* mj = p.mj;
  CHECK(m->nmocap == mj->nmocap, "nmocap %d, MuJoCo %d", m->nmocap, (int)mj->nmocap);
  for (int b = 0; b < m->nbody; b++)
    CHECK(m->body_mocapid[b] == mj->body_mocapid[b], "body %d mocapid %d, MuJoCo %d", b,
          m->body_mocapid[b], mj->body_mocapid[b]);
  check_arrays("key_mpos", m->key_mpos, mj->key_mpos, 3 * m->nmocap, 0, 0);
  check_arrays("key_mquat", m->key_mquat, mj->key_mquat, 4 * m->nmocap, 0, 0);
  CHECK(sap_fieldSize(p.s, SAP_FIELD_MOCAP_POS) == 3 * m->nmocap, "mocap_pos size");
  CHECK(sap_fieldSize(p.s, SAP_FIELD_MOCAP_QUAT) == 4 * m->nmocap, "mocap_quat size");
  CHECK(!strcmp(sap_fieldName(SAP_FIELD_MOCAP_QUAT), "mocap_quat"), "field name");
  int count = 0;
  sapArrayType type;
  CHECK(sap_dataArray(p.s, "mocap_pos", &count, &type) == p.s->d.mocap_pos && count == 3 * m->nmocap,
        "sap_dataArray(mocap_pos)");

  /* initial state = MuJoCo's mj_resetData (the compiled pose), in every world */
  double pos[3 * 9], quat[3 * 12];
  mj_resetData(mj, p.md);
  sap_get(p.s, SAP_FIELD_MOCAP_POS, NULL, 3, pos);
  sap_get(p.s, SAP_FIELD_MOCAP_QUAT, NULL, 3, quat);
  for (int w = 0; w < 3; w++) {
    check_arrays("initial mocap_pos", pos + 9 * w, p.md->mocap_pos, 9, 0, 0);
    check_arrays("initial mocap_quat", quat + 12 * w, p.md->mocap_quat, 12, 0, 0);
  }

  /* keyframe reset of world 1 only = mj_resetDataKeyframe; worlds 0 and 2 keep theirs */
  unsigned char mask[3] = {0, 1, 0};
  CHECK(sap_reset(p.s, 0, mask) == SAP_OK, "%s", sap_lastError());
  mj_resetDataKeyframe(mj, p.md, 0);
  sap_get(p.s, SAP_FIELD_MOCAP_POS, NULL, 3, pos);
  sap_get(p.s, SAP_FIELD_MOCAP_QUAT, NULL, 3, quat);
  check_arrays("key mocap_pos", pos + 9, p.md->mocap_pos, 9, 0, 0);
  check_arrays("key mocap_quat", quat + 12, p.md->mocap_quat, 12, 0, 0);
  mj_kinematics(mj, p.md);
  check_arrays("key xpos", p.s->d.xpos + 3 * m->nbody, p.md->xpos, 3 * m->nbody, 1e-12, 1e-12);
  mj_resetData(mj, p.md);
  check_arrays("unmasked world 0", pos, p.md->mocap_pos, 9, 0, 0);
  check_arrays("unmasked world 2", pos + 18, p.md->mocap_pos, 9, 0, 0);
  /* and back to the compiled pose */
  CHECK(sap_reset(p.s, -1, NULL) == SAP_OK, "%s", sap_lastError());
  sap_get(p.s, SAP_FIELD_MOCAP_POS, NULL, 3, pos);
  check_arrays("reset world 1", pos + 9, p.md->mocap_pos, 9, 0, 0);
  close_pair(&p);
}

/* ---- kinematics ----------------------------------------------------------------------- */

#define NWORLD 5

/* random poses: positions in a 2 m cube, quaternions with random direction and length
 * (0.2 to 5: not normalised), random joint coordinates */
static void random_poses(const mjModel* mj, double* qpos, double* mpos, double* mquat) {
  for (int i = 0; i < mj->nmocap; i++) {
    for (int k = 0; k < 3; k++) mpos[3 * i + k] = check_uniform(-1, 1);
    double n = 0, len = check_uniform(0.2, 5);
    for (int k = 0; k < 4; k++) { mquat[4 * i + k] = check_uniform(-1, 1); n += mquat[4 * i + k] * mquat[4 * i + k]; }
    for (int k = 0; k < 4; k++) mquat[4 * i + k] *= len / sqrt(n);
  }
  memcpy(qpos, mj->qpos0, sizeof(double) * mj->nq);
  for (int j = 0; j < mj->njnt; j++) {
    int a = mj->jnt_qposadr[j];
    if (mj->jnt_type[j] == mjJNT_HINGE || mj->jnt_type[j] == mjJNT_SLIDE) qpos[a] = check_uniform(-2, 2);
    if (mj->jnt_type[j] == mjJNT_FREE) {
      double n = 0;
      for (int k = 0; k < 3; k++) qpos[a + k] = check_uniform(-1, 1);
      for (int k = 3; k < 7; k++) { qpos[a + k] = check_uniform(-1, 1); n += qpos[a + k] * qpos[a + k]; }
      for (int k = 3; k < 7; k++) qpos[a + k] /= sqrt(n);
    }
  }
}

static void check_kinematics(const char* path, sapPreset preset) {
  pairOf p;
  if (!open_pair(&p, path, NWORLD, preset, 0)) { close_pair(&p); return; }
  mjModel* mj = p.mj;
  mjData* md = p.md;
  sapData* d = &p.s->d;
  int nq = mj->nq, nv = mj->nv, nb = mj->nbody, ng = mj->ngeom, nj = mj->njnt, nm = mj->nmocap;
  double *qpos = malloc(sizeof(double) * NWORLD * nq), *mpos = malloc(sizeof(double) * NWORLD * 3 * nm);
  double *mquat = malloc(sizeof(double) * NWORLD * 4 * nm), *got = malloc(sizeof(double) * NWORLD * 4 * nm);
  double* M = malloc(sizeof(double) * nv * nv);
  for (int w = 0; w < NWORLD; w++) random_poses(mj, qpos + w * nq, mpos + w * 3 * nm, mquat + w * 4 * nm);
  CHECK(sap_set(p.s, SAP_FIELD_QPOS, NULL, NWORLD, qpos) == SAP_OK, "%s", sap_lastError());
  CHECK(sap_set(p.s, SAP_FIELD_MOCAP_POS, NULL, NWORLD, mpos) == SAP_OK, "%s", sap_lastError());
  /* poison the poses: the last set must recompute them */
  double* outs[] = {d->xpos, d->xquat, d->xmat, d->xipos, d->geom_xpos, d->geom_xmat, d->xanchor, d->xaxis};
  long sizes[] = {3 * nb, 4 * nb, 9 * nb, 3 * nb, 3 * ng, 9 * ng, 3 * nj, 3 * nj};
  for (int a = 0; a < 8; a++)
    for (long i = 0; i < NWORLD * sizes[a]; i++) outs[a][i] = NAN;
  CHECK(sap_set(p.s, SAP_FIELD_MOCAP_QUAT, NULL, NWORLD, mquat) == SAP_OK, "%s", sap_lastError());
  /* the stored quaternions stay as written (normalised on use only) */
  sap_get(p.s, SAP_FIELD_MOCAP_QUAT, NULL, NWORLD, got);
  check_arrays("mocap_quat as written", got, mquat, NWORLD * 4 * nm, 0, 0);
  /* qA: poison the dof trees' diagonal blocks, all it stores (sapModel.dof_Aadr); the dense
   * expansion's zeros between trees are checked below too */
  for (long i = 0; i < (long)NWORLD * p.s->m->nA; i++) d->qA[i] = NAN;
  sapc_freeMotion(p.s);

  double tol = preset == SAP_PRESET_APPROX64 ? 1e-10 : 2e-5;
  for (int w = 0; w < NWORLD; w++) {
    memcpy(md->mocap_pos, mpos + w * 3 * nm, sizeof(double) * 3 * nm);
    memcpy(md->mocap_quat, mquat + w * 4 * nm, sizeof(double) * 4 * nm);
    mju_zero(md->qvel, nv);
    fx_mjForwardAt(mj, md, qpos + w * nq, NULL, NULL);
    mj_fullM(mj, md, M);
    const double* want[] = {md->xpos, md->xquat, md->xmat, md->xipos, md->geom_xpos, md->geom_xmat,
                            md->xanchor, md->xaxis};
    const char* names[] = {"xpos", "xquat", "xmat", "xipos", "geom_xpos", "geom_xmat", "xanchor", "xaxis"};
    for (int a = 0; a < 8; a++) {
      char what[300];
      snprintf(what, sizeof(what), "%s %s world %d %s", path, preset == SAP_PRESET_APPROX64 ? "fp64" : "fp32",
               w, names[a]);
      check_arrays(what, outs[a] + w * sizes[a], want[a], (int)sizes[a], tol, tol);
    }
    /* M (A - h D at zero velocity) and the bias of the dofs below a mocap body */
    double* A = malloc(sizeof(double) * nv * nv);
    CHECK(sap_getMassMatrix(p.s, w, A) == SAP_OK, "%s", sap_lastError());
    for (int i = 0; i < nv; i++) A[i * nv + i] -= p.s->h * mj->dof_damping[i];
    check_arrays("M", A, M, nv * nv, 10 * tol, 10 * tol);
    free(A);
    check_arrays("qfrc_bias", d->qfrc_bias + w * nv, md->qfrc_bias, nv, 100 * tol, 10 * tol);
  }
  free(qpos); free(mpos); free(mquat); free(got); free(M);
  close_pair(&p);
}

static void test_kinematics(void) {
  const char* path = write_tmp(filter_xml);
  check_kinematics(path, SAP_PRESET_APPROX64);
  check_kinematics(path, SAP_PRESET_APPROX32);
  remove(path);
  check_kinematics(PADDLE, SAP_PRESET_APPROX64);
  check_kinematics(PADDLE, SAP_PRESET_APPROX32);
}

/* ---- sap_set rules ---------------------------------------------------------------------- */

static void test_set_rules(void) {
  pairOf p;
  if (!open_pair(&p, PADDLE, 3, SAP_PRESET_APPROX64, 1)) { close_pair(&p); return; }
  double pos0[9], quat0[12], pos[9], quat[12];
  sap_get(p.s, SAP_FIELD_MOCAP_POS, NULL, 3, pos0);
  sap_get(p.s, SAP_FIELD_MOCAP_QUAT, NULL, 3, quat0);
  /* a non-finite value or a zero quaternion changes nothing */
  double bad[6] = {0.1, 0.2, 0.3, 0.4, NAN, 0.6};
  int ids[2] = {2, 0};
  CHECK(sap_set(p.s, SAP_FIELD_MOCAP_POS, ids, 2, bad) == SAP_ERR_NONFINITE, "NaN mocap_pos accepted");
  double zq[8] = {1, 0, 0, 0, 0, 0, 0, 0};
  CHECK(sap_set(p.s, SAP_FIELD_MOCAP_QUAT, ids, 2, zq) == SAP_ERR_ARG, "zero mocap_quat accepted");
  CHECK(strstr(sap_lastError(), "zero") != NULL, "message: %s", sap_lastError());
  sap_get(p.s, SAP_FIELD_MOCAP_POS, NULL, 3, pos);
  sap_get(p.s, SAP_FIELD_MOCAP_QUAT, NULL, 3, quat);
  check_arrays("mocap_pos after refused sets", pos, pos0, 9, 0, 0);
  check_arrays("mocap_quat after refused sets", quat, quat0, 12, 0, 0);

  /* a set of worlds {2, 0} writes those rows in that order, moves their bodies, and leaves
   * world 1 (values and poses) alone */
  double xpos1[15];
  memcpy(xpos1, p.s->d.xpos + 15, sizeof(xpos1));
  double good[6] = {1, 2, 3, -1, -2, -3};
  CHECK(sap_set(p.s, SAP_FIELD_MOCAP_POS, ids, 2, good) == SAP_OK, "%s", sap_lastError());
  sap_get(p.s, SAP_FIELD_MOCAP_POS, NULL, 3, pos);
  check_arrays("world 2", pos + 6, good, 3, 0, 0);
  check_arrays("world 0", pos, good + 3, 3, 0, 0);
  check_arrays("world 1", pos + 3, pos0 + 3, 3, 0, 0);
  check_arrays("paddle xpos world 2", p.s->d.xpos + 2 * 15 + 3, good, 3, 1e-15, 0);
  check_arrays("world 1 poses", p.s->d.xpos + 15, xpos1, 15, 0, 0);
  /* handle (body 2, 0.15 m above the paddle's origin) follows: the paddle is unrotated */
  double handle[3] = {good[3], good[4], good[5] + 0.15};
  check_arrays("handle follows", p.s->d.xpos + 6, handle, 3, 1e-15, 0);
  /* kinematic fields stay read-only */
  CHECK(sap_set(p.s, SAP_FIELD_XPOS, NULL, 3, p.s->d.xpos) == SAP_ERR_ARG, "xpos writable");
  close_pair(&p);

  /* a model without mocap bodies: empty fields */
  sapModel* m = NULL;
  sapSim* s = NULL;
  CHECK(sap_loadModel("scenes/box.xml", &m) == SAP_OK, "%s", sap_lastError());
  sapOptions o;
  sap_optionsDefault(&o);
  o.device = SAP_DEVICE_CPU;
  if (m && sap_create(m, &o, 2, &s) == SAP_OK) {
    double none[1] = {0};
    CHECK(sap_fieldSize(s, SAP_FIELD_MOCAP_POS) == 0, "size without mocap");
    CHECK(sap_set(s, SAP_FIELD_MOCAP_QUAT, NULL, 2, none) == SAP_OK, "%s", sap_lastError());
    CHECK(sap_get(s, SAP_FIELD_MOCAP_POS, NULL, 2, none) == SAP_OK, "%s", sap_lastError());
  }
  sap_free(s);
  sap_freeModel(m);
}

/* ---- collision filtering ---------------------------------------------------------------- */

/* the set of geom pairs in contact: sapsim's (phi < 0 or within its band) and MuJoCo's */
static void test_filtering(void) {
  const char* path = write_tmp(filter_xml);
  pairOf p;
  int ok = open_pair(&p, path, 1, SAP_PRESET_APPROX64, 1);
  remove(path);
  if (!ok) { close_pair(&p); return; }
  mj_forward(p.mj, p.md);
  sapc_kinematics(p.s);
  sapc_collision(p.s);
  int ng = p.mj->ngeom;
  unsigned char* mjset = calloc((size_t)ng * ng, 1);
  unsigned char* sapset = calloc((size_t)ng * ng, 1);
  for (int i = 0; i < p.md->ncon; i++) {
    int a = p.md->contact[i].geom[0], b = p.md->contact[i].geom[1];
    mjset[(a < b ? a : b) * ng + (a < b ? b : a)] = 1;
  }
  for (int i = 0; i < p.s->d.ncon[0]; i++) {
    int a = p.s->d.con_geom[2 * i], b = p.s->d.con_geom[2 * i + 1];
    sapset[(a < b ? a : b) * ng + (a < b ? b : a)] = 1;
    /* m1, m2, m3 sit inside the floor or the wall: no contact joins two dof-less bodies */
    int wa = p.m->body_weldid[p.m->geom_bodyid[a]], wb = p.m->body_weldid[p.m->geom_bodyid[b]];
    CHECK(p.m->body_dofnum[wa] + p.m->body_dofnum[wb] > 0, "contact between dof-less geoms %s and %s",
          mj_id2name(p.mj, mjOBJ_GEOM, a), mj_id2name(p.mj, mjOBJ_GEOM, b));
  }
  int npair = 0;
  for (int a = 0; a < ng; a++)
    for (int b = a + 1; b < ng; b++) {
      npair += mjset[a * ng + b];
      CHECK(mjset[a * ng + b] == sapset[a * ng + b], "pair %s-%s: MuJoCo %d, sapsim %d",
            mj_id2name(p.mj, mjOBJ_GEOM, a), mj_id2name(p.mj, mjOBJ_GEOM, b), mjset[a * ng + b],
            sapset[a * ng + b]);
    }
  /* the scene is built so that MuJoCo has these 5: floor-box, floor-jointed child, m1 and
   * its jointless child against the box, the jointed child against the other mocap m2 */
  CHECK(npair == 5, "MuJoCo's contact pairs: %d, the scene expects 5", npair);
  free(mjset);
  free(sapset);
  close_pair(&p);
}

/* ---- a box pushed by a moving mocap paddle ---------------------------------------------- */

/* the paddle scene, frictionless (condim 1 everywhere: MuJoCo's condim-3 cone with zero
 * friction is degenerate) */
static const char* frictionless_scene(void) {
  static char xml[8192];
  FILE* f = fopen(PADDLE, "r");
  size_t n = f ? fread(xml, 1, sizeof(xml) - 1, f) : 0;
  if (f) fclose(f);
  xml[n] = 0;
  char* at = strstr(xml, "friction=\"0.5 0.005 0.0001\"");
  if (at) memcpy(at, "condim=\"1\"                 ", strlen("friction=\"0.5 0.005 0.0001\""));
  return write_tmp(xml);
}

/* drive the paddle at speed u along x from its compiled pose until t_stop, then hold it;
 * run both simulators for T; box state (qpos[1..7], qvel[1..6]) at the end */
static void push(pairOf* p, double u, double t_stop, double T, double* sq, double* sv, double* mq, double* mv) {
  mj_resetData(p->mj, p->md);
  double x0 = p->md->mocap_pos[0];
  int nstep = (int)lround(T / p->mj->opt.timestep);
  for (int k = 0; k < nstep; k++) {
    double t = k * p->mj->opt.timestep, x = x0 + u * fmin(t, t_stop);
    p->md->mocap_pos[0] = x;
    mj_step(p->mj, p->md);
    double mpos[3] = {x, p->md->mocap_pos[1], p->md->mocap_pos[2]};
    sap_set(p->s, SAP_FIELD_MOCAP_POS, NULL, 1, mpos);
    sap_step(p->s, 1);
  }
  memcpy(mq, p->md->qpos + 1, 7 * sizeof(double));
  memcpy(mv, p->md->qvel + 1, 6 * sizeof(double));
  double q[8], v[7];
  sap_get(p->s, SAP_FIELD_QPOS, NULL, 1, q);
  sap_get(p->s, SAP_FIELD_QVEL, NULL, 1, v);
  memcpy(sq, q + 1, 7 * sizeof(double));
  memcpy(sv, v + 1, 6 * sizeof(double));
}

/* Frictionless floor: only the paddle's normal force acts on the box along x, so the box's
 * momentum change is the paddle's impulse, J = m v_x(T). The paddle (infinite mass, speed u)
 * pushes while the box is slower (the gap closes) and can at most bounce it elastically:
 * u <= v_x(T) <= 2u, i.e. m u <= J <= 2 m u (restitution 0 to 1). The box neither leaves the
 * floor nor turns, and MuJoCo's box ends in the same band. */
static void test_push_frictionless(void) {
  const char* path = frictionless_scene();
  const double u = 0.5, m = 1.0;
  const char* presets[2] = {"approx32", "drake"};
  for (int c = 0; c < 2; c++) {
    pairOf p;
    int ok = open_pair(&p, path, 1, c ? SAP_PRESET_DRAKE : SAP_PRESET_APPROX32, 1);
    if (!ok) { close_pair(&p); break; }
    double sq[7], sv[6], mq[7], mv[6];
    push(&p, u, 0.6, 1.0, sq, sv, mq, mv);
    /* the paddle stops at x = -0.2 + 0.3 = 0.1, its face at 0.11; the box is ahead of it */
    CHECK(sq[0] > 0.11 + 0.05, "%s: box x %g not ahead of the stopped paddle", presets[c], sq[0]);
    double J = m * sv[0], Jmj = m * mv[0];
    /* compliant contacts reach u only asymptotically: 2% below */
    CHECK(J >= 0.98 * m * u && J <= 2 * m * u, "%s: impulse %g outside [m u, 2 m u] = [%g, %g]",
          presets[c], J, m * u, 2 * m * u);
    CHECK(Jmj >= 0.98 * m * u && Jmj <= 2 * m * u, "MuJoCo impulse %g outside [%g, %g]", Jmj, m * u, 2 * m * u);
    /* lateral and vertical momentum: none from the paddle's x normal; gravity and floor balance */
    CHECK(fabs(sv[1]) < 1e-3 * u && fabs(sv[2]) < 1e-3 * u,
          "%s: box v_y %g, v_z %g", presets[c], sv[1], sv[2]);
    CHECK(fabs(sv[3]) + fabs(sv[4]) + fabs(sv[5]) < 0.05, "%s: box turns (%g %g %g)", presets[c], sv[3],
          sv[4], sv[5]);
    fprintf(stderr, "  %s: box v_x %.4f (MuJoCo %.4f), x %.4f (MuJoCo %.4f)\n", presets[c], sv[0], mv[0],
            sq[0], mq[0]);
    close_pair(&p);
  }
  remove(path);
}

/* With friction 0.5 the paddle keeps pushing: after first touch at t_c = gap / u the box
 * slides at the paddle's speed, so x(T) = u (T - t_c) (gap: paddle face at -0.19, box face at
 * -0.05, t_c = 0.28 s); MuJoCo's box ends there too. */
static void test_push_scene(void) {
  const double u = 0.5, T = 1.0, tc = 0.14 / u;
  pairOf p;
  if (!open_pair(&p, PADDLE, 1, SAP_PRESET_APPROX32, 1)) { close_pair(&p); return; }
  double sq[7], sv[6], mq[7], mv[6];
  push(&p, u, T, T, sq, sv, mq, mv);
  double want = u * (T - tc);
  /* tolerances: contact compliance (k = 1e5 N/m, mu m g = 5 N: 0.05 mm) and the approach
   * transient (the box reaches u within ~0.05 s: <= 0.025 m) */
  CHECK_CLOSE(sq[0], want, 0.025, 0, "box x after %g s (sapsim)", T);
  CHECK_CLOSE(mq[0], want, 0.025, 0, "box x after %g s (MuJoCo)", T);
  CHECK_CLOSE(sv[0], u, 0.02 * u, 0, "box v_x while pushed (sapsim)");
  CHECK_CLOSE(mv[0], u, 0.1 * u, 0, "box v_x while pushed (MuJoCo)");
  /* upright on the floor: the friction couple tilts the box (sapsim 1.4 degrees, MuJoCo 0.14)
   * and SAP's sliding contact rides its speculative gap (about (h + tau_d) mu |v_t|, 3 mm) */
  double tilt = 2 * asin(fmin(1, sqrt(sq[4] * sq[4] + sq[5] * sq[5] + sq[6] * sq[6])));
  CHECK(fabs(sq[1]) < 1e-3 && fabs(sq[2] - 0.05) < 5e-3 && tilt < 0.05, "box leaves its line: y %g z %g tilt %g",
        sq[1], sq[2], tilt);
  fprintf(stderr, "  box x %.4f (MuJoCo %.4f, steady pushing %.4f), v_x %.4f (MuJoCo %.4f), z %.4f (MuJoCo %.4f)\n",
          sq[0], mq[0], want, sv[0], mv[0], sq[2], mq[2]);
  close_pair(&p);
}

int main(void) {
  RUN(test_load_and_reset);
  RUN(test_kinematics);
  RUN(test_set_rules);
  RUN(test_filtering);
  RUN(test_push_frictionless);
  RUN(test_push_scene);
  return check_summary("test_mocap");
}
