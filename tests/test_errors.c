/* Bad input gets a clear error naming the problem: scene files, unsupported
 * features, options (unknown keys, bad values, out of range), sizes, devices.
 * Also the preset table of seed 002 and one-factor overrides. */
#include <math.h>
#include <stddef.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fixture.h"
#include "backend.h"
#include "sim.h"

static const char* write_scene(const char* name, const char* xml) {
  char file[128];
  snprintf(file, sizeof(file), "%s.xml", name);
  return fx_tempFile(file, xml);
}

/* with SAPSIM_ERROR_TABLE=FILE, each bad scene appends a Markdown row to FILE: the case,
 * the status and sapsim's message with the temporary path replaced by SCENE (make
 * error-table turns the rows into docs/bad_inputs.md) */
static void table_row(const char* path, sapStatus got) {
  const char* out = getenv("SAPSIM_ERROR_TABLE");
  if (!out || got == SAP_OK) return;
  FILE* f = fopen(out, "a");
  if (!f) return;
  const char* base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
  const char* tag = strchr(base, '_') ? strchr(base, '_') + 1 : base; /* fx_tempPath: "<n>_<tag>.xml" */
  fprintf(f, "| %.*s | %s | ", (int)(strrchr(tag, '.') ? strrchr(tag, '.') - tag : (long)strlen(tag)), tag,
          sap_statusName(got));
  const char* msg = sap_lastError();
  size_t np = strlen(path);
  for (const char* c = msg; *c; c++) {
    if (!strncmp(c, path, np)) { fputs("SCENE", f); c += np - 1; continue; }
    if (*c == '\n') { fputc(' ', f); continue; }
    if (*c == '|') fputc('\\', f);
    fputc(*c, f);
  }
  fputs(" |\n", f);
  fclose(f);
}

/* expect status st and every fragment in the message */
static void expect_load(const char* path, sapStatus st, const char* frag1, const char* frag2) {
  sapModel* m = NULL;
  sapStatus got = sap_loadModel(path, &m);
  table_row(path, got);
  CHECK(got == st, "%s: status %s, want %s (%s)", path, sap_statusName(got), sap_statusName(st),
        sap_lastError());
  CHECK(m == NULL || st == SAP_OK, "no model on failure");
  CHECK(!frag1 || strstr(sap_lastError(), frag1), "message '%s' lacks '%s'", sap_lastError(), frag1);
  CHECK(!frag2 || strstr(sap_lastError(), frag2), "message '%s' lacks '%s'", sap_lastError(), frag2);
  sap_freeModel(m);
}

#define BODY "<worldbody><body><joint name='j1' type='hinge'/><geom size='0.1'/></body></worldbody>"

static void test_bad_scenes(void) {
  expect_load("/nonexistent/robot.xml", SAP_ERR_SCENE, "/nonexistent/robot.xml", "cannot open");
  expect_load(write_scene("malformed", "<mujoco><worldbody><body></mujoco>"), SAP_ERR_SCENE,
              "MuJoCo could not load", "malformed");
  expect_load(write_scene("unknown", "<mujoco><worldbody><bogus/></worldbody></mujoco>"),
              SAP_ERR_SCENE, "MuJoCo could not load", NULL);
  expect_load(write_scene("equality",
              "<mujoco><worldbody><flexcomp name='cloth' type='grid' count='3 3 1' spacing='.1 .1 .1' dim='2'/>"
              "</worldbody><equality><flex flex='cloth'/></equality></mujoco>"),
              SAP_ERR_UNSUPPORTED, "flex", NULL);
  expect_load(write_scene("spatial",
              "<mujoco><worldbody><site name='s0'/><body><joint type='hinge'/><geom name='drum' size='.1'/>"
              "<site name='s1' pos='0 0 1'/></body></worldbody>"
              "<tendon><spatial name='rope' armature='1'><site site='s0'/><geom geom='drum'/><site site='s1'/>"
              "</spatial></tendon></mujoco>"),
              SAP_ERR_SCENE, "rope", "geom wrapping not supported");
  expect_load(write_scene("siteact",
              "<mujoco><worldbody><site name='base'/><body><joint type='hinge'/><geom size='.1'/><site name='s'/></body>"
              "</worldbody><actuator><position name='thruster' site='s' kp='5'/></actuator></mujoco>"),
              SAP_ERR_UNSUPPORTED, "thruster", "which has no length");
  expect_load(write_scene("muscle",
              "<mujoco><worldbody><body><joint name='j' type='hinge'/><geom size='.1'/></body>"
              "</worldbody><actuator><general name='bicep' joint='j' dyntype='user'/></actuator></mujoco>"),
              SAP_ERR_UNSUPPORTED, "bicep", "user activation dynamics");
  expect_load(write_scene("ballcone",
              "<mujoco><compiler angle='radian'/><worldbody><body><joint name='shoulder' type='ball' "
              "limited='true' range='0 0.1' margin='0.2'/><geom size='.1'/></body></worldbody></mujoco>"),
              SAP_ERR_SCENE, "shoulder", "leaves no cone");
  expect_load(write_scene("friction",
              "<mujoco><worldbody><body><joint name='sticky' type='hinge' frictionloss='-1'/>"
              "<geom size='.1'/></body></worldbody></mujoco>"),
              SAP_ERR_SCENE, "sticky", "negative frictionloss");
  expect_load(write_scene("tendamp",
              "<mujoco><worldbody><site name='a'/><body><joint name='j' type='hinge'/><geom name='spool' size='.1'/>"
              "<site name='b' pos='0 0 -1'/></body></worldbody>"
              "<tendon><spatial name='cable'><site site='a'/><geom geom='spool'/><site site='b'/></spatial></tendon>"
              "<actuator><motor tendon='cable' armature='0.1'/></actuator></mujoco>"),
              SAP_ERR_SCENE, "geom wrapping not supported", "armature (a tendon's own or its actuators')");
  /* general laws with length or velocity terms (a damper: gain -kv l'; an anti-spring:
   * bias + l) on a site transmission, which has no length in sapsim */
  expect_load(write_scene("damper",
              "<mujoco><worldbody><body><joint name='j' type='hinge'/><geom size='.1'/><site name='s'/></body>"
              "</worldbody><actuator><damper name='brake' site='s' kv='2' ctrlrange='0 1'/></actuator></mujoco>"),
              SAP_ERR_UNSUPPORTED, "brake", "length or velocity terms");
  expect_load(write_scene("antispring",
              "<mujoco><worldbody><body><joint name='j' type='hinge'/><geom size='.1'/><site name='s'/></body>"
              "</worldbody><actuator><general name='pusher' site='s' biastype='affine' biasprm='0 1 0'/></actuator>"
              "</mujoco>"),
              SAP_ERR_UNSUPPORTED, "pusher", "site transmission");
  /* a muscle on a slider-crank: refused by name, as on refsite transmissions */
  expect_load(write_scene("crankmuscle",
              "<mujoco><worldbody><site name='sl' pos='-0.4 0 0' zaxis='1 0 0'/><body><joint type='hinge'/>"
              "<geom size='.1'/><site name='pin' pos='0.2 0 0'/></body></worldbody><actuator><muscle name='calf' "
              "cranksite='pin' slidersite='sl' cranklength='0.5' lengthrange='0.1 0.3'/></actuator></mujoco>"),
              SAP_ERR_UNSUPPORTED, "calf", "muscle on a slider-crank");
  expect_load(write_scene("condim",
              "<mujoco><worldbody><geom name='floor' type='plane' size='1 1 1' condim='6'/>"
              "<body><freejoint/><geom name='ball' size='.1'/></body></worldbody><contact><pair name='rolling' "
              "geom1='floor' geom2='ball' condim='6' friction='1 1 0.01 0.001 0.002'/></contact></mujoco>"),
              SAP_ERR_UNSUPPORTED, "rolling", "anisotropic");
  expect_load(write_scene("static", "<mujoco><worldbody><geom size='.1'/></worldbody></mujoco>"),
              SAP_ERR_SCENE, "no degrees of freedom", NULL);
  expect_load(write_scene("delay",
              "<mujoco><worldbody><body><joint name='j' type='hinge'/><geom size='.1'/></body></worldbody>"
              "<sensor><jointpos name='late' joint='j' delay='-0.01' nsample='3'/></sensor></mujoco>"),
              SAP_ERR_SCENE, "'late'", "delay -0.01");
  expect_load(write_scene("surfacevel",
              "<mujoco><worldbody><geom name='belt' type='box' size='1 1 .1' surfacevel='nan 0 0 0 0 0'/>"
              "<body pos='0 0 .3'><freejoint/><geom size='.1'/></body></worldbody></mujoco>"),
              SAP_ERR_SCENE, "'belt'", "non-finite surfacevel[0]");
  expect_load(write_scene("ok", "<mujoco>" BODY "</mujoco>"), SAP_OK, NULL, NULL);
}

/* MuJoCo 4 model fields that change the dynamics and that sapsim does not model
 * are refused by name, never ignored */
static void test_mujoco4_fields_rejected(void) {
#define ONE(joint, geom) "<worldbody><body><joint name='j' type='hinge' " joint "/>" \
                         "<geom name='g' size='.1' " geom "/></body></worldbody>"
  static const struct { const char* tag; const char* xml; const char* frag1; const char* frag2; } cases[] = {
      {"yield", "<mujoco>" ONE("stiffness='1' springyield='0.5'", "") "</mujoco>", "'j'", "springyield"},
      {"adhesion", "<mujoco><option><flag spring='disable' damper='disable'/></option>" ONE("", "adhesion='1'")
                   "</mujoco>", "'g'", "spring and damper flags both disabled"},
      {"sleep", "<mujoco><option><flag sleep='enable'/></option>" ONE("", "") "<actuator><intvelocity joint='j' "
                "actrange='-1 1'/></actuator></mujoco>", "sleep", "activation"},
      {"override", "<mujoco><option o_friction='1 0.5 0.005 0.0001 0.0001'><flag override='enable'/></option>"
                   ONE("", "") "</mujoco>", "o_friction", "anisotropic"},
      {"actuation", "<mujoco><option><flag actuation='disable'/></option><worldbody><body gravcomp='1'><joint "
                    "name='j' type='hinge' actuatorgravcomp='true'/><geom size='.1'/></body></worldbody></mujoco>",
                    "'j'", "actuatorgravcomp"},
      {"pid", "<mujoco>" ONE("", "") "<actuator><pid name='servo' joint='j' input='pos vel'/></actuator>"
              "</mujoco>", "controls", "force outputs"},
      {"actgravcomp", "<mujoco><worldbody><body gravcomp='1'><joint name='j' type='hinge' actuatorgravcomp='true' "
                      "actuatorfrcrange='-1 1'/><geom size='.1'/></body></worldbody></mujoco>", "'j'", "actuatorgravcomp"},
      {"servoandmotor", "<mujoco>" ONE("actuatorfrcrange='-1 1'", "") "<actuator><position name='p' joint='j' "
                        "kp='5'/><motor joint='j'/></actuator></mujoco>", "'j'", "servo 'p'"},
  };
#undef ONE
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
    expect_load(write_scene(cases[i].tag, cases[i].xml), SAP_ERR_UNSUPPORTED, cases[i].frag1, cases[i].frag2);
  /* disabled features are honoured instead: springs off, so a polynomial spring is moot */
  expect_load(write_scene("springoff", "<mujoco><option><flag spring='disable'/></option>"
                          "<worldbody><body><joint type='hinge' stiffness='1 2 0'/><geom size='.1'/></body>"
                          "</worldbody></mujoco>"), SAP_OK, NULL, NULL);
}

/* scene values: non-finite numbers anywhere, wrong signs and inverted ranges are
 * refused at load, naming element and field (MuJoCo 4 compiles them all) */
static void test_bad_scene_values(void) {
#define HINGE(attrs) "<mujoco><worldbody><body name='arm'><joint name='j' type='hinge' " attrs "/>" \
                     "<geom name='g' size='.1'/></body></worldbody></mujoco>"
  static const struct { const char* tag; const char* xml; const char* frag1; const char* frag2; } cases[] = {
      {"bodynan", "<mujoco><worldbody><body name='arm' pos='nan 0 0'><joint type='hinge'/><geom size='.1'/>"
                  "</body></worldbody></mujoco>", "body 'arm'", "body_pos"},
      {"rangenan", HINGE("range='nan 1'"), "joint 'j'", "jnt_range"},
      {"marginroom", HINGE("range='-5 5' margin='0.09'"), "joint 'j'", "leaves no room"},
      {"tmarginroom", "<mujoco><worldbody><body><joint name='j' type='slide'/><geom size='.1'/></body></worldbody>"
                      "<tendon><fixed name='t' range='0 0.2' margin='0.1'><joint joint='j' coef='1'/></fixed>"
                      "</tendon></mujoco>", "tendon 't'", "leaves no room"},
      {"armature", HINGE("armature='-1'"), "joint 'j'", "dof_armature"},
      {"damping", HINGE("damping='-2'"), "joint 'j'", "dof_damping"},
      {"axisnan", HINGE("axis='0 nan 1'"), "joint 'j'", "jnt_axis"},
      {"timestep0", "<mujoco><option timestep='0'/><worldbody><body><joint type='hinge'/><geom size='.1'/>"
                    "</body></worldbody></mujoco>", "timestep", "(0, 1]"},
      {"timestepneg", "<mujoco><option timestep='-0.005'/><worldbody><body><joint type='hinge'/>"
                      "<geom size='.1'/></body></worldbody></mujoco>", "timestep", NULL},
      {"gravity", "<mujoco><option gravity='0 0 nan'/><worldbody><body><joint type='hinge'/>"
                  "<geom size='.1'/></body></worldbody></mujoco>", "gravity", "non-finite"},
      {"gear", "<mujoco><worldbody><body><joint name='j' type='hinge'/><geom size='.1'/></body></worldbody>"
               "<actuator><motor name='m' joint='j' gear='nan'/></actuator></mujoco>", "actuator 'm'", "gear"},
      {"keynan", "<mujoco><worldbody><body><joint type='hinge'/><geom size='.1'/></body></worldbody>"
                 "<keyframe><key name='home' qpos='nan'/></keyframe></mujoco>", "keyframe 'home'", "key_qpos"},
      {"ksneg", "<mujoco><custom><numeric name='sap_contact_k' data='-1e5'/></custom><worldbody><body>"
                "<joint type='hinge'/><geom size='.1'/></body></worldbody></mujoco>", "sap_contact_k", "range"},
      {"ksinf", "<mujoco><custom><numeric name='sap_contact_k' data='1e300'/></custom><worldbody><body>"
                "<joint type='hinge'/><geom size='.1'/></body></worldbody></mujoco>", "sap_contact_k", NULL},
      {"taudneg", "<mujoco><custom><numeric name='sap_contact_taud' data='-1'/></custom><worldbody><body>"
                  "<joint type='hinge'/><geom size='.1'/></body></worldbody></mujoco>", "sap_contact_taud", NULL},
      {"marginnan", "<mujoco><custom><numeric name='sap_contact_margin' data='nan'/></custom><worldbody>"
                    "<body><joint type='hinge'/><geom size='.1'/></body></worldbody></mujoco>",
       "sap_contact_margin", NULL},
      {"usernan", "<mujoco><size nuser_geom='2'/><worldbody><body><joint type='hinge'/>"
                  "<geom name='pad' size='.1' user='nan 0.01'/></body></worldbody></mujoco>", "geom 'pad'",
       "non-finite SAP k"},
  };
#undef HINGE
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
    expect_load(write_scene(cases[i].tag, cases[i].xml), SAP_ERR_SCENE, cases[i].frag1, cases[i].frag2);
  /* a FIFO is not a scene: refused at once instead of blocking on open */
  const char* fifo = fx_tempPath("fifo.xml");
  if (fifo && mkfifo(fifo, 0600) == 0) {
    expect_load(fifo, SAP_ERR_SCENE, "not a regular file", NULL);
    remove(fifo);
  }
}

/* a sapOptions filled in directly gets the same rules as sap_optionsSet */
static void test_options_struct(void) {
  sapModel* m = NULL;
  CHECK(sap_loadModel("scenes/pendulum.xml", &m) == SAP_OK, "%s", sap_lastError());
  if (!m) return;
  static const struct { const char* key; size_t off; int is_real; double bad; } cases[] = {
      {"line_search", offsetof(sapOptions, line_search), 0, 99},
      {"weight_mode", offsetof(sapOptions, weight_mode), 0, 7},
      {"threads", offsetof(sapOptions, threads), 0, -3},
      {"ncon_max", offsetof(sapOptions, ncon_max), 0, 2147483647.0},
      {"max_iterations", offsetof(sapOptions, max_iterations), 0, 0},
      {"timestep", offsetof(sapOptions, timestep), 1, -0.01},
      {"rho", offsetof(sapOptions, rho), 1, 5},
      {"contact_k", offsetof(sapOptions, contact_k), 1, INFINITY},
      {"armijo_c", offsetof(sapOptions, armijo_c), 1, 0},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    sapOptions o;
    sap_optionsDefault(&o);
    o.device = SAP_DEVICE_CPU;
    if (cases[i].is_real) *(double*)((char*)&o + cases[i].off) = cases[i].bad;
    else *(int*)((char*)&o + cases[i].off) = (int)cases[i].bad;
    sapSim* s = NULL;
    sapStatus st = sap_create(m, &o, 1, &s);
    CHECK(st == SAP_ERR_OPTION && s == NULL, "%s = %g: status %s", cases[i].key, cases[i].bad, sap_statusName(st));
    CHECK(strstr(sap_lastError(), cases[i].key), "%s: message '%s'", cases[i].key, sap_lastError());
    sap_free(s);
  }
  /* sap_options reports the values in force: the scene's timestep (0.005 in
   * pendulum.xml), the resolved capacity and device, the scene's material */
  sapOptions o;
  sap_optionsDefault(&o);
  o.device = SAP_DEVICE_AUTO;
  sapSim* s = NULL;
  CHECK(sap_create(m, &o, 1, &s) == SAP_OK, "%s", sap_lastError());
  if (s) {
    const sapOptions* e = sap_options(s);
    CHECK(e->timestep == m->timestep && e->timestep == 0.005, "timestep in force %g", e->timestep);
    CHECK(e->ncon_max == sap_data(s)->ncon_max, "ncon_max in force %d", e->ncon_max);
    CHECK(e->device == (sap_onGPU(s) ? SAP_DEVICE_CUDA : SAP_DEVICE_CPU), "device in force %d", e->device);
    CHECK(e->contact_k == m->contact_k && !isnan(e->contact_taud) && !isnan(e->contact_margin),
          "material in force");
    sap_free(s);
  }
  sap_freeModel(m);
  /* accessors and option helpers take NULL without crashing */
  CHECK(sap_nworld(NULL) == 0 && sap_model(NULL) == NULL && sap_options(NULL) == NULL &&
        sap_onGPU(NULL) == 0 && sap_data(NULL) == NULL && sap_bytesPerWorld(NULL) == 0 && sap_bytesShared(NULL) == 0 &&
        sap_fieldSize(NULL, SAP_FIELD_QPOS) == 0 && sap_deviceName(NULL) != NULL, "NULL accessors");
  sapTimers tm;
  sap_timers(NULL, &tm);
  CHECK(tm.total == 0, "sap_timers(NULL)");
  sap_timers(NULL, NULL);
  sap_optionsDefault(NULL);
  CHECK(sap_optionsDescribe(NULL, NULL, 0) == 0, "sap_optionsDescribe(NULL)");
}

/* nb free bodies apart (nv = 6 nb), touching nothing */
static sapModel* free_bodies(int nb) {
  size_t cap = (size_t)nb * 96 + 256;
  char* xml = malloc(cap);
  int n = snprintf(xml, cap, "<mujoco><worldbody>");
  for (int i = 0; i < nb; i++)
    n += snprintf(xml + n, cap - n, "<body pos='%d 0 1'><freejoint/><geom size='.1' contype='0' conaffinity='0'/></body>", i);
  snprintf(xml + n, cap - n, "</worldbody></mujoco>");
  sapModel* m = NULL;
  CHECK(sap_loadModel(write_scene("large", xml), &m) == SAP_OK, "%s", sap_lastError());
  free(xml);
  return m;
}

/* the CPU solve keeps only the islands' blocks of its Newton matrix, so a model past the GPU's
 * dense layout (nv = 4200 > 4096) runs there. (Past the CPU's limit, nv > 46340, sap_create
 * refuses; MuJoCo 4 itself cannot allocate such a model's data, so no scene reaches it.) */
static void test_model_too_large(void) {
  sapModel* m = free_bodies(700);
  if (!m) return;
  sapOptions o;
  sap_optionsDefault(&o);
  o.device = SAP_DEVICE_CPU;
  sapSim* s = NULL;
  CHECK(sap_create(m, &o, 4, &s) == SAP_OK && s, "nv 4200 on the CPU: %s", sap_lastError());
  if (s) {
    CHECK(sap_step(s, 1) == SAP_OK, "step: %s", sap_lastError());
    sap_free(s);
  }
  sap_freeModel(m);
}

/* a NaN control written straight into the batch (sap_data) refuses that world's
 * step: flagged SAP_WORLD_BADINPUT, state bitwise unchanged, the others step as if
 * it were not there */
static void test_bad_input_flag(void) {
  sapModel* m = NULL;
  CHECK(sap_loadModel("scenes/arm7.xml", &m) == SAP_OK, "%s", sap_lastError());
  if (!m) return;
  sapOptions o;
  sap_optionsDefault(&o);
  o.device = SAP_DEVICE_CPU;
  sapSim *a = NULL, *b = NULL;
  CHECK(sap_create(m, &o, 3, &a) == SAP_OK && sap_create(m, &o, 3, &b) == SAP_OK, "%s", sap_lastError());
  if (!a || !b) return;
  int nq = m->nq, nv = m->nv, nu = m->nu;
  double* ctrl = malloc(sizeof(double) * 3 * nu);
  for (int i = 0; i < 3 * nu; i++) ctrl[i] = 0.3 * sin(i + 1.0);
  sap_set(a, SAP_FIELD_CTRL, NULL, 3, ctrl);
  sap_set(b, SAP_FIELD_CTRL, NULL, 3, ctrl);
  sap_step(a, 2);
  sap_step(b, 2);
  double before[64];
  memcpy(before, sap_data(a)->qpos + nq, sizeof(double) * nq);
  ((sapData*)sap_data(a))->ctrl[nu + 1] = NAN;
  ((sapData*)sap_data(a))->qfrc_applied[2 * nv] = INFINITY;  /* world 2: applied force */
  CHECK(sap_step(a, 1) == SAP_OK, "%s", sap_lastError());
  sap_step(b, 1);
  const sapData *da = sap_data(a), *db = sap_data(b);
  CHECK(da->world_flags[1] & SAP_WORLD_BADINPUT, "world 1 flagged");
  CHECK(da->world_flags[2] & SAP_WORLD_BADINPUT, "world 2 flagged");
  CHECK(!(da->world_flags[0] & SAP_WORLD_BADINPUT), "world 0 not flagged");
  CHECK(!memcmp(before, da->qpos + nq, sizeof(double) * nq), "world 1 state unchanged");
  CHECK(!memcmp(da->qpos, db->qpos, sizeof(double) * nq) && !memcmp(da->qvel, db->qvel, sizeof(double) * nv),
        "world 0 steps as without the bad worlds");
  /* fixed input: the world steps again, flag cleared */
  ((sapData*)sap_data(a))->ctrl[nu + 1] = 0;
  sap_step(a, 1);
  CHECK(!(sap_data(a)->world_flags[1] & SAP_WORLD_BADINPUT), "flag cleared after the input is fixed");
  CHECK(memcmp(before, sap_data(a)->qpos + nq, sizeof(double) * nq), "world 1 moves again");
  free(ctrl);
  sap_free(a);
  sap_free(b);
  sap_freeModel(m);
}

static void expect_option(const char* key, const char* value, sapStatus st, const char* frag) {
  sapOptions o;
  sap_optionsDefault(&o);
  sapOptions before = o;
  sapStatus got = sap_optionsSet(&o, key, value);
  CHECK(got == st, "%s=%s: %s (%s)", key, value, sap_statusName(got), sap_lastError());
  if (st != SAP_OK) CHECK(!memcmp(&o, &before, sizeof(o)), "%s=%s changed the options", key, value);
  CHECK(!frag || strstr(sap_lastError(), frag), "%s=%s: message '%s' lacks '%s'", key, value,
        sap_lastError(), frag);
}

static void test_bad_options(void) {
  expect_option("presett", "drake", SAP_ERR_OPTION, "unknown option 'presett'");
  expect_option("preset", "fast", SAP_ERR_OPTION, "approx32, approx64, drake");
  expect_option("line_search", "golden", SAP_ERR_OPTION, "monotone_decay, armijo_decay, exact_root");
  expect_option("free_motion_precision", "fp16", SAP_ERR_OPTION, "fp32");
  expect_option("rho", "1.5", SAP_ERR_OPTION, "out of range");
  expect_option("rho", "0", SAP_ERR_OPTION, "out of range");
  expect_option("timestep", "-0.01", SAP_ERR_OPTION, "out of range");
  expect_option("timestep", "abc", SAP_ERR_OPTION, "not a finite number");
  expect_option("max_iterations", "2.5", SAP_ERR_OPTION, "not an integer");
  expect_option("contact_k", "nan", SAP_ERR_OPTION, "not a finite number");
  expect_option("device", "tpu", SAP_ERR_OPTION, "auto, cpu, cuda");
  /* accepted spellings (seed 002 / SAP Warp names and normalisation) */
  expect_option("preset", " Approx-64 ", SAP_OK, NULL);
  expect_option("contact_preset_variant", "approx_32", SAP_OK, NULL);
  expect_option("contact_linear_solve_precision", "F32", SAP_OK, NULL);
  expect_option("contact_weight_mode", "diag-delassus", SAP_OK, NULL);
  sapOptions o;
  sap_optionsDefault(&o);
  CHECK(sap_optionsSetPair(&o, "line_search") == SAP_ERR_OPTION, "key without =");
  CHECK(sap_optionsSetPair(&o, "line-search=exact-root") == SAP_OK && o.line_search == SAP_LS_EXACT,
        "key=value with dashes");
}

/* option combinations the GPU solve cannot run are refused when the options are expanded
 * (sap_create), with the reason */
static void expect_combination(const char* a, const char* b, sapStatus st, const char* frag) {
  sapOptions o, e;
  sap_optionsDefault(&o);
  CHECK(sap_optionsSetPair(&o, a) == SAP_OK && sap_optionsSetPair(&o, b) == SAP_OK, "%s, %s: %s", a, b,
        sap_lastError());
  sapStatus got = sap_optionsExpand(&o, &e);
  CHECK(got == st, "%s with %s: %s (%s)", a, b, sap_statusName(got), sap_lastError());
  CHECK(!frag || strstr(sap_lastError(), frag), "%s with %s: message '%s' lacks '%s'", a, b, sap_lastError(), frag);
}

static void test_option_combinations(void) {
  expect_option("newton_loop", "loop", SAP_ERR_OPTION, "kernel, while, fixed");
  expect_option("linear_solver", "magma", SAP_ERR_OPTION, "custom, cusolver");
  expect_combination("linear_solver=cusolver", "newton_loop=kernel", SAP_ERR_OPTION,
                     "linear_solver=cusolver needs newton_loop=while or fixed");
  expect_combination("newton_loop=while", "solve_kernel=thread", SAP_ERR_OPTION, "needs solve_kernel=warp");
  expect_combination("newton_loop=fixed", "solve_kernel=thread", SAP_ERR_OPTION, "needs solve_kernel=warp");
  expect_combination("linear_solver=cusolver", "newton_loop=while", SAP_OK, NULL);
  expect_combination("linear_solver=cusolver", "newton_loop=fixed", SAP_OK, NULL);
}

/* the preset table of seed 002 (DESIGN.md §5) */
static void test_preset_table(void) {
  struct { int preset, fm, cs, ls, wp, bp, wm, cp, integ, isl; } want[3] = {
      {SAP_PRESET_APPROX32, SAP_FP32, SAP_FP64, SAP_FP32, SAP_FP32, SAP_FP32,
       SAP_WEIGHT_BODY_INERTIA, SAP_POINT_WITNESS, SAP_INTEGRATE_MIDPOINT, 1},
      {SAP_PRESET_APPROX64, SAP_FP64, SAP_FP64, SAP_FP64, SAP_FP64, SAP_FP64,
       SAP_WEIGHT_BODY_INERTIA, SAP_POINT_WITNESS, SAP_INTEGRATE_MIDPOINT, 1},
      {SAP_PRESET_DRAKE, SAP_FP64, SAP_FP64, SAP_FP64, SAP_FP64, SAP_FP64,
       SAP_WEIGHT_DIAG_DELASSUS, SAP_POINT_MIDPOINT, SAP_INTEGRATE_SAP_EULER, 0}};
  for (int i = 0; i < 3; i++) {
    sapOptions o, e;
    sap_optionsDefault(&o);
    o.preset = want[i].preset;
    CHECK(sap_optionsExpand(&o, &e) == SAP_OK, "%s", sap_lastError());
    CHECK(e.free_motion_precision == want[i].fm && e.contact_solve_precision == want[i].cs &&
          e.linear_solve_precision == want[i].ls && e.weight_precision == want[i].wp &&
          e.boundary_pose_precision == want[i].bp && e.weight_mode == want[i].wm &&
          e.contact_point == want[i].cp && e.integration == want[i].integ && e.island_newton == want[i].isl,
          "preset %d knobs", i);
  }
  sapOptions o, e;
  sap_optionsDefault(&o);
  CHECK(o.preset == SAP_PRESET_APPROX32 && o.line_search == SAP_LS_NEWTON && o.warm_start == SAP_WARM_EXTRAPOLATE, "defaults");
  sap_optionsExpand(&o, &e);
  CHECK(e.ls_max_iterations == 40 && e.cost_abs_tol == 1e-30 && e.cost_rel_tol == 1e-15, "armijo tol");
  o.line_search = SAP_LS_EXACT;
  sap_optionsExpand(&o, &e);
  CHECK(e.ls_max_iterations == 100, "exact_root promotes the line-search cap to 100");
  o.line_search = SAP_LS_MONOTONE;
  sap_optionsExpand(&o, &e);
  CHECK(e.cost_abs_tol == 0 && e.cost_rel_tol == 5e-3, "monotone tolerances");
}

/* an override changes exactly one knob after the preset expands */
static void test_one_factor_override(void) {
  sapOptions o, base, e;
  sap_optionsDefault(&o);
  sap_optionsSet(&o, "preset", "approx64");
  sap_optionsExpand(&o, &base);
  sap_optionsSet(&o, "contact_weight_mode", "diag_delassus");
  sap_optionsExpand(&o, &e);
  CHECK(e.weight_mode == SAP_WEIGHT_DIAG_DELASSUS, "override applied");
  e.weight_mode = base.weight_mode;
  CHECK(!memcmp(&e, &base, sizeof(e)), "nothing else changed");
}

static void test_bad_sizes_and_devices(void) {
  sapModel* m = NULL;
  CHECK(sap_loadModel("scenes/pendulum.xml", &m) == SAP_OK, "%s", sap_lastError());
  if (!m) return;
  sapSim* s = NULL;
  CHECK(sap_create(m, NULL, 0, &s) == SAP_ERR_ARG && strstr(sap_lastError(), "nworld"), "nworld 0");
  CHECK(sap_create(m, NULL, -5, &s) == SAP_ERR_ARG, "negative nworld");
  CHECK(sap_create(NULL, NULL, 1, &s) == SAP_ERR_ARG, "null model");
  sapOptions o;
  sap_optionsDefault(&o);
  o.preset = (sapPreset)7;
  CHECK(sap_create(m, &o, 1, &s) == SAP_ERR_OPTION, "invalid preset enum");
  sap_optionsDefault(&o);
  o.device = SAP_DEVICE_CUDA;
  char name[128];
  int gpu = sap_cudaUsable(name, sizeof(name));
  sapStatus st = sap_create(m, &o, 1, &s);
  if (gpu) CHECK(st == SAP_OK, "device=cuda with a GPU: %s", sap_lastError());
  else CHECK(st == SAP_ERR_NO_DEVICE && strstr(sap_lastError(), "cuda"), "device=cuda without GPU: %s",
             sap_lastError());
  sap_free(s);
  s = NULL;
  sap_optionsDefault(&o);
  o.device = SAP_DEVICE_CPU;
  CHECK(sap_create(m, &o, 2, &s) == SAP_OK, "%s", sap_lastError());
  CHECK(sap_step(s, -1) == SAP_ERR_ARG, "negative nstep");
  sap_free(s);
  sap_freeModel(m);
}



int main(void) {
  RUN(test_bad_scenes);
  RUN(test_mujoco4_fields_rejected);
  RUN(test_bad_scene_values);
  RUN(test_options_struct);
  RUN(test_model_too_large);
  RUN(test_bad_input_flag);
  RUN(test_bad_options);
  RUN(test_option_combinations);
  RUN(test_preset_table);
  RUN(test_one_factor_override);
  RUN(test_bad_sizes_and_devices);
  return check_summary("test_errors");
}
