/* libFuzzer target: option text. Each input line is a "key=value" pair for
 * sap_optionsSetPair; then the options expand, describe themselves and create a
 * one-world batch of the pendulum, which steps once. Bad options must be refused
 * with a message, never crash. The seed corpus is corpus_options/. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mujoco/mujoco.h>

#include "sapsim/sapsim.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

static sapModel* pendulum;

static void quiet(const char* msg) { (void)msg; }

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  mju_user_warning = quiet;
  if (!pendulum && sap_loadModel("scenes/pendulum.xml", &pendulum) != SAP_OK) abort();
  if (size > 4096) return 0;
  char* text = malloc(size + 1);
  memcpy(text, data, size);
  text[size] = 0;
  sapOptions o;
  sap_optionsDefault(&o);
  for (char* line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) sap_optionsSetPair(&o, line);
  o.device = SAP_DEVICE_CPU;  /* no GPU on the fuzzing machine */
  if (o.threads > 4) o.threads = 4;
  sapOptions e;
  char desc[4096];
  if (sap_optionsExpand(&o, &e) == SAP_OK) sap_optionsDescribe(&e, desc, sizeof(desc));
  sapSim* s = NULL;
  if (sap_create(pendulum, &o, 1, &s) == SAP_OK) {
    sap_step(s, 1);
    sap_free(s);
  }
  free(text);
  return 0;
}
