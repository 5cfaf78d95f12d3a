/* Scene import from a string (bindings: sapsim.Sim("<mujoco>...")): the text goes into
 * a MuJoCo virtual file system and through the same compiler and converter as a file
 * (host/model_load.c). Asset files it names resolve relative to the working directory. */
#include <string.h>

#include <mujoco/mujoco.h>

#include "model.h"
#include "sim.h"

sapStatus sap_loadModelString(const char* xml, sapModel** out) {
  if (!xml || !out) return sap_fail(SAP_ERR_ARG, "sap_loadModelString: null argument");
  *out = NULL;
  size_t n = strlen(xml);
  if (n == 0) return sap_fail(SAP_ERR_SCENE, "<xml string>: the scene text is empty");
  if (n > (size_t)1 << 30) return sap_fail(SAP_ERR_SCENE, "<xml string>: larger than 1 GiB");
  /* an URDF string compiles too: MuJoCo tells them apart by the root element */
  const char* name = strstr(xml, "<robot") && !strstr(xml, "<mujoco") ? "model.urdf" : "model.xml";
  mjVFS vfs;
  mj_defaultVFS(&vfs);
  if (mj_addBufferVFS(&vfs, name, xml, (int)n) != 0) {
    mj_deleteVFS(&vfs);
    return sap_fail(SAP_ERR_MEMORY, "<xml string>: MuJoCo could not store the scene text");
  }
  char err[1000] = "";
  mjModel* mj = mj_loadXML(name, &vfs, err, sizeof(err));
  mj_deleteVFS(&vfs);
  if (!mj) return sap_fail(SAP_ERR_SCENE, "<xml string>: MuJoCo could not load the scene: %s%s", err, sapm_loadHint(err));
  sapStatus st = sapm_convert(mj, "<xml string>", out);
  mj_deleteModel(mj);
  return st;
}
