/* Shared MuJoCo-oracle helper (tests/): MuJoCo 4's model from a scene file or from XML text
 * (text when it starts with '<'); a CHECK failure prints MuJoCo's message and NULL returns. */
#ifndef SAPSIM_TESTS_FIXTURE_MJ_H
#define SAPSIM_TESTS_FIXTURE_MJ_H

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

#endif
