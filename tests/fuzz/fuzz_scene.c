/* libFuzzer target: scene text (MJCF or URDF) through MuJoCo's compiler and sapsim's
 * converter and checks, then a 2-world CPU batch stepped twice. Any crash, sanitizer
 * report or exit is a finding; refused scenes are fine. `make fuzz` runs it long,
 * `make fuzz-ci` briefly with a fixed seed; the seed corpus is corpus_scene/ plus scenes/. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mujoco/mujoco.h>

#include "sapsim/sapsim.h"

sapStatus sap_loadModelString(const char* xml, sapModel** out);
int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

static void quiet(const char* msg) { (void)msg; }

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  mju_user_warning = quiet;
  if (size > 1 << 16) return 0;
  char* xml = malloc(size + 1);
  memcpy(xml, data, size);
  xml[size] = 0;
  sapModel* m = NULL;
  if (sap_loadModelString(xml, &m) == SAP_OK) {
    sapOptions o;
    sap_optionsDefault(&o);
    o.device = SAP_DEVICE_CPU;
    o.threads = 1;
    sapSim* s = NULL;
    if (sap_create(m, &o, 2, &s) == SAP_OK) {
      sap_step(s, 2);
      sap_free(s);
    }
    sap_freeModel(m);
  }
  free(xml);
  return 0;
}
