/* Shared parts of the sapsim command-line tool (host/cli/: main.c, common.c, run.c, bench.c,
 * compare.c, ablate.c, plot.c, json.c). The tool sits above the library: it includes the public
 * API and host/ headers, the library never includes host/cli/ (make check-layers). */
#ifndef SAPSIM_HOST_CLI_CLI_H
#define SAPSIM_HOST_CLI_CLI_H

#include "options.h"
#include "sapsim/sapsim.h"

/* common options of run / bench / ablate */
typedef struct {
  const char* scene;
  sapOptions opt;
  int worlds[64];
  int nworlds;
  int steps;
  int key;              /* -2: default (first keyframe if any), -1: qpos0 */
  const char* key_name;
  unsigned long long seed;
  double ctrl_noise;    /* controls uniform in ctrlrange scaled by this (0: zero ctrl) */
  const char* out;      /* run: trajectory file */
  const char* json;     /* bench: JSON lines file */
  const char* plot;     /* bench: PNG plot file */
  const char* presets;  /* bench: comma list */
  const char* line_searches;
  const char* vary;     /* bench: variants "k=v[+k=v...],..." (a bare value reuses the last key) */
  int mujoco;           /* bench: run MuJoCo's mj_step beside */
  int quiet;
  int progress;
  /* run (sap_run's limits and frame output) */
  int steps_given;      /* --steps was given (with --end-time / --wall-time: no step limit otherwise) */
  double end_time;      /* --end-time T (NaN: none) */
  double wall_time;     /* --wall-time S (NaN: none) */
  int frame_every;      /* --frame-every K (1) */
  int format;           /* --format csv|binary|binary32 (sapFrameFormat) */
} sapCli;

/* the worlds' last step summed over worlds (sapWorldInfo): contacts, iterations, and how many
 * worlds carry each flag; `flagged` counts worlds with a failure flag (sapcli_failed) */
typedef struct {
  long ncon, dropped, newton, ls;
  int converged, maxiter, lsfail, factorfail, nonfinite, flagged;
} sapcliTally;
void sapcli_tally(const sapWorldInfo* info, int nworld, sapcliTally* t);
/* a failure flag: iteration cap, line-search failure, factorization failure, non-finite */
int sapcli_failed(unsigned flags);

int sapcli_parse(int argc, char** argv, sapCli* cli, const char* cmd);
int sapcli_keyframe(const sapModel* m, const sapCli* cli);
void sapcli_randomCtrl(const sapModel* m, int nworld, double noise, unsigned long long seed,
                       double* ctrl);
int sapcli_benchMain(sapCli* cli);
int sapcli_runMain(sapCli* cli);
int sapcli_compareMain(sapCli* cli);  /* sapsim vs MuJoCo's mj_step (compare.c) */
int sapcli_ablateMain(int argc, char** argv);  /* parses its own flags (ablate.c) */
/* run bench/SCRIPT JSONL PNG with a python3 that has matplotlib (plot.c) */
int sapcli_plot(const char* script, const char* jsonl, const char* png);

#endif
