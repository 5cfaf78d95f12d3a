/* Shared MuJoCo-oracle helpers (tests/): MuJoCo 4's model from a scene file or from XML text
 * (text when it starts with '<'; a CHECK failure prints MuJoCo's message and NULL returns),
 * random joint positions of a MuJoCo model, and MuJoCo's forward pass or step at a given
 * state (the oracle side of most comparisons; tests/test_fixture_mj.c checks them). */
#ifndef SAPSIM_TESTS_FIXTURE_MJ_H
#define SAPSIM_TESTS_FIXTURE_MJ_H

#include <math.h>
#include <string.h>
#include <mujoco/mujoco.h>

#include "check.h"

static inline mjModel* fx_mjModel(const char* scene) {
  char err[1000] = "";
  mjModel* mj = NULL;
  if (*scene == '<') {
    mjSpec* spec = mj_parseXMLString(scene, NULL, err, sizeof(err));
    if (spec) {
      mj = mj_compile(spec, NULL);
      mj_deleteSpec(spec);
    }
  } else {
    mj = mj_loadXML(scene, NULL, err, sizeof(err));
  }
  CHECK(mj != NULL, "MuJoCo: %s", err);
  return mj;
}

/* q (nq) at random: hinges and slides in +-2, free positions in +-2 m, ball and free
 * quaternions of every angle up to pi with norms 0.5 to 2 (sap_set keeps them as given) */
static inline void fx_randomQpos(const mjModel* mj, double* q) {
  for (int j = 0; j < mj->njnt; j++) {
    double* p = q + mj->jnt_qposadr[j];
    if (mj->jnt_type[j] == mjJNT_HINGE || mj->jnt_type[j] == mjJNT_SLIDE) {
      *p = check_uniform(-2, 2);
      continue;
    }
    if (mj->jnt_type[j] == mjJNT_FREE)
      for (int k = 0; k < 3; k++) *p++ = check_uniform(-2, 2);
    double n = 0;
    for (int k = 0; k < 4; k++) {
      p[k] = check_uniform(-1, 1);
      n += p[k] * p[k];
    }
    double scale = check_uniform(0.5, 2) / sqrt(n);
    for (int k = 0; k < 4; k++) p[k] *= scale;
  }
}

/* a state into MuJoCo's mjData: qpos (nq), qvel (nv), ctrl (nu), act (na) copied in; a NULL
 * array leaves that field as it is. time, mocap, applied forces and the rest are never touched:
 * a caller sets them before (or after) as it needs. */
static inline void fx_mjSetState(const mjModel* mj, mjData* md, const double* qpos, const double* qvel,
                                 const double* ctrl, const double* act) {
  if (qpos && mj->nq) memcpy(md->qpos, qpos, sizeof(double) * mj->nq);
  if (qvel && mj->nv) memcpy(md->qvel, qvel, sizeof(double) * mj->nv);
  if (ctrl && mj->nu) memcpy(md->ctrl, ctrl, sizeof(double) * mj->nu);
  if (act && mj->na) memcpy(md->act, act, sizeof(double) * mj->na);
}

/* MuJoCo's forward pass (mj_forward) at (qpos, qvel, ctrl): fx_mjSetState with act left as it
 * is (NULL arrays too), then mj_forward */
static inline void fx_mjForwardAt(const mjModel* mj, mjData* md, const double* qpos, const double* qvel,
                                  const double* ctrl) {
  fx_mjSetState(mj, md, qpos, qvel, ctrl, NULL);
  mj_forward(mj, md);
}

/* one MuJoCo step (mj_step) from (qpos, qvel, ctrl), the same way (NULL: as it is, e.g. the
 * state the previous step reached) */
static inline void fx_mjStepAt(const mjModel* mj, mjData* md, const double* qpos, const double* qvel,
                               const double* ctrl) {
  fx_mjSetState(mj, md, qpos, qvel, ctrl, NULL);
  mj_step(mj, md);
}

#endif
