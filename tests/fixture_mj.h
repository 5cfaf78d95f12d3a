/* Shared MuJoCo-oracle helpers (tests/): MuJoCo 4's model from a scene file or from XML text
 * (text when it starts with '<'; a CHECK failure prints MuJoCo's message and NULL returns),
 * and random joint positions of a MuJoCo model. */
#ifndef SAPSIM_TESTS_FIXTURE_MJ_H
#define SAPSIM_TESTS_FIXTURE_MJ_H

#include <math.h>
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

#endif
