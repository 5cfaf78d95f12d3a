/* sapsim command-line tool:
 *   sapsim info  SCENE                        model summary and contact materials
 *   sapsim run   SCENE [options]              step worlds, print diagnostics, write a trajectory
 *   sapsim bench SCENE [options]              throughput sweep, JSON lines, MuJoCo side by side
 *   sapsim compare SCENE [options]            sapsim and MuJoCo's mj_step from the same state and controls
 *   sapsim ablate SCENE [options]             presets and one-factor overrides in lockstep, divergence
 * Run `sapsim help` for the flags and options, `sapsim help options` for the options with
 * a line on each (both printed from the option table, host/options.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "model.h"

static void options_help(FILE* f, int docs);

static void usage(FILE* f) {
  fprintf(f,
          "usage: sapsim <command> SCENE [options]\n"
          "commands:\n"
          "  info   SCENE                 print the model and its contact materials\n"
          "  run    SCENE                 step worlds and report per-world diagnostics\n"
          "  bench  SCENE                 throughput sweep (JSON lines), MuJoCo mj_step beside\n"
          "  compare SCENE                the same state and controls stepped by sapsim and by\n"
          "                               MuJoCo: base heights and joint differences over time\n"
          "  ablate SCENE                 same worlds under --presets and each --set override in\n"
          "                               lockstep: velocity/position divergence, iterations, time\n"
          "options:\n"
          "  --worlds N[,N...]            number of worlds (bench: a sweep)       [1 | 1,64,1024]\n"
          "  --steps K                    steps per run                            [100]\n"
          "  --device auto|cpu|cuda       backend (auto: GPU when usable)          [auto]\n"
          "  --preset P[,P...]            approx32 | approx64 | drake              [approx32]\n"
          "  --line-search L[,L...]       monotone_decay | armijo_decay | exact_root |\n"
          "                               newton_wolfe                             [newton_wolfe]\n"
          "  --set key=value              any option below, repeatable\n"
          "  --vary k=v[,v...]            bench: one more sweep axis over any options; a variant\n"
          "                               may set several, joined by +: newton_loop=kernel,\n"
          "                               newton_loop=while+linear_solver=cusolver\n"
          "  --key NAME|ID|none           start from a keyframe (default: the first one)\n"
          "  --ctrl-noise X               random controls, X times the control range [0.5]\n"
          "  --seed S                     random seed                              [1]\n"
          "  --threads T                  CPU threads (0: all)                     [0]\n"
          "  --out FILE                   run: write the trajectory (frames, --format)\n"
          "  --format csv|binary|binary32 run: frame file format (docs/frames.md)     [csv]\n"
          "  --frame-every K              run: a frame every K steps (and step 0)    [1]\n"
          "  --end-time T                 run: stop when every world reached time T\n"
          "                               (without --steps: no step limit)\n"
          "  --wall-time S                run: stop after S seconds of wall clock\n"
          "  --json FILE                  bench: also append JSON lines to FILE\n"
          "  --plot FILE.png              bench: plot steps/s against nworld\n"
          "  --no-mujoco                  bench: skip MuJoCo's mj_step\n"
          "  --no-progress                bench: no progress bar\n"
          "ablate (defaults: --worlds 8, --presets approx32,approx64,drake):\n"
          "  --presets P[,P...]           configurations; each is compared with the previous one\n"
          "  --set key=value              one more configuration: first preset + this override,\n"
          "                               compared with the first preset (repeatable)\n"
          "  --common key=value           applied to every configuration (repeatable)\n"
          "  --json FILE / --plot FILE.png  JSON lines to FILE (overwritten); divergence plot\n"
          "  --quiet                      less output\n");
  options_help(f, 0);
}

/* the options of --set (sap_optionsSet), from the option table of host/options.c: key
 * (alias), values or range, default; with docs, each row's one-line description */
static void options_help(FILE* f, int docs) {
  fprintf(f, "options (--set key=value, repeatable%s):\n", docs ? "" : "; `sapsim help options` describes each");
  for (int i = 0; i < sapo_nkeys; i++) {
    const sapoKey* e = &sapo_keys[i];
    char values[256], def[96];
    fprintf(f, "  %-24s %-30s default %s", e->key, sapo_valuesText(e, values, sizeof(values)),
            sapo_defaultText(e, def, sizeof(def)));
    if (e->alias) fprintf(f, "  (alias %s)", e->alias);
    fprintf(f, docs ? "\n      %s\n" : "\n", e->doc);
  }
}

static int info_main(const sapCli* cli) {
  sapModel* m = NULL;
  if (sap_loadModel(cli->scene, &m) != SAP_OK) {
    fprintf(stderr, "sapsim: %s\n", sap_lastError());
    return 1;
  }
  printf("scene %s\n", cli->scene);
  printf("nq %d  nv %d  nbody %d  njnt %d  ngeom %d  nu %d  ntendon %d  nkey %d  candidate pairs %d\n",
         m->nq, m->nv, m->nbody, m->njnt, m->ngeom, m->nu, m->ntendon, m->nkey, m->npair_max);
  printf("timestep %g  gravity (%g %g %g)\n", m->timestep, m->gravity[0], m->gravity[1], m->gravity[2]);
  printf("contact defaults: k %g N/m  tau_d %g s  speculative margin %g m%s\n", m->contact_k, m->contact_taud,
         m->contact_margin, m->contact_margin_scene ? "" : " (approx presets; drake preset: 0)");
  for (int g = 0; g < m->ngeom; g++)
    printf("  geom %-3d %-16s type %d body %-2d mu %-6g k %-10s tau_d %s\n", g,
           sapm_name(m, m->name_geomadr, g), m->geom_type[g], m->geom_bodyid[g], m->geom_mu[g],
           m->geom_k[g] > 0 ? "override" : "default", m->geom_taud[g] >= 0 ? "override" : "default");
  for (int p = 0; p < m->npair_max; p++) {
    int g0 = m->pair_geom[2 * p], g1 = m->pair_geom[2 * p + 1];
    printf("  pair %-3d %s-%s%s condim %d mu %g margin %g gap %g k %g tau_d %g\n", p,
           sapm_name(m, m->name_geomadr, g0), sapm_name(m, m->name_geomadr, g1),
           m->pair_explicit[p] ? " (explicit)" : "", m->pair_condim[p], m->pair_mu[p], m->pair_margin[p],
           m->pair_gap[p], m->pair_k[p], m->pair_taud[p]);
  }
  for (int k = 0; k < m->nkey; k++) printf("  keyframe %d '%s'\n", k, sapm_name(m, m->name_keyadr, k));
  if (m->nsensor) printf("sensors %d  sensordata %d values\n", m->nsensor, m->nsensordata);
  for (int i = 0; i < m->nsensor; i++) {
    const char* name = sapm_name(m, m->name_sensoradr, i);
    printf("  sensor %-3d %-16s type %-2d sensordata[%d:%d]\n", i, *name ? name : "-", m->sensor_type[i],
           m->sensor_adr[i], m->sensor_adr[i] + m->sensor_dim[i]);
  }
  fputs(sap_modelNotes(m), stdout);
  /* memory per world, from a one-world batch with the given options (CPU) */
  sapOptions o = cli->opt;
  o.device = SAP_DEVICE_CPU;
  sapSim* s = NULL;
  if (sap_create(m, &o, 1, &s) == SAP_OK) {
    printf("memory: %llu bytes per world (contact capacity %d)\n", sap_bytesPerWorld(s), sap_data(s)->ncon_max);
    sap_free(s);
  } else {
    printf("memory: %s\n", sap_lastError());
  }
  /* the batch layout keeps dense nv x nv matrices per world (A, the Newton matrix, its
   * factor) and factors them every step: cost grows as nv^3 */
  if (m->nv > 256)
    printf("warning: nv = %d: each world factors dense %d x %d matrices every step (cost ~ nv^3); "
           "sapsim's batch layout is built for robots (nv up to about 100)\n", m->nv, m->nv, m->nv);
  sap_freeModel(m);
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 3 && !strcmp(argv[1], "help") && !strcmp(argv[2], "options")) {
    options_help(stdout, 1);
    return 0;
  }
  if (argc < 2 || !strcmp(argv[1], "help") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const char* cmd = argv[1];
  if (!strcmp(cmd, "ablate")) return sapcli_ablateMain(argc - 2, argv + 2);
  if (strcmp(cmd, "info") && strcmp(cmd, "run") && strcmp(cmd, "bench") && strcmp(cmd, "compare")) {
    fprintf(stderr, "sapsim: unknown command '%s' (valid: info, run, bench, compare, ablate)\n", cmd);
    return 2;
  }
  sapCli cli;
  if (sapcli_parse(argc - 2, argv + 2, &cli, cmd)) return 2;
  if (!strcmp(cmd, "info")) return info_main(&cli);
  if (!strcmp(cmd, "run")) return sapcli_runMain(&cli);
  if (!strcmp(cmd, "compare")) return sapcli_compareMain(&cli);
  return sapcli_benchMain(&cli);
}
