/* PNG plots for the sapsim commands: run a matplotlib script of bench/ on a JSON
 * lines file. The script is looked up next to the binary's source tree
 * (build/sapsim -> bench/) and then in ./bench; the interpreter is the first of
 * $SAPSIM_PYTHON, python3 on PATH and /usr/bin/python3 that imports matplotlib
 * (Debian's python3-matplotlib lives in /usr/bin/python3's path, which a pyenv
 * or venv python3 earlier on PATH does not see). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* bench/NAME beside the executable's tree, else ./bench/NAME */
static void script_path(const char* name, char* out, int nout) {
  char exe[1024];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n > 0) {
    exe[n] = 0;
    char* slash = strrchr(exe, '/');
    if (slash) {
      *slash = 0;
      if (snprintf(out, nout, "%s/../bench/%s", exe, name) < nout && access(out, R_OK) == 0) return;
    }
  }
  snprintf(out, nout, "bench/%s", name);
}

/* a path is passed to the shell inside single quotes: refuse the quote itself */
static int shell_safe(const char* s) { return !strchr(s, '\''); }

int sapcli_plot(const char* script, const char* jsonl, const char* png) {
  char path[1100], cmd[4096];
  script_path(script, path, sizeof(path));
  if (!shell_safe(path) || !shell_safe(jsonl) || !shell_safe(png)) {
    fprintf(stderr, "sapsim: --plot: file names with a single quote are not supported\n");
    return 1;
  }
  if (access(path, R_OK) != 0) {
    fprintf(stderr, "sapsim: plotting failed: cannot find the script %s\n", path);
    return 1;
  }
  const char* env = getenv("SAPSIM_PYTHON");
  if (env && !shell_safe(env)) env = NULL;
  int n = snprintf(cmd, sizeof(cmd),
                   "for p in %s%s%s python3 /usr/bin/python3; do "
                   "\"$p\" -c 'import matplotlib' >/dev/null 2>&1 && exec \"$p\" '%s' '%s' '%s'; "
                   "done; exit 127",
                   env ? "'" : "", env ? env : "", env ? "'" : "", path, jsonl, png);
  if (n < 0 || n >= (int)sizeof(cmd)) {
    fprintf(stderr, "sapsim: --plot: file names too long\n");
    return 1;
  }
  int rc = system(cmd);
  if (rc != 0) {
    fprintf(stderr, "sapsim: plotting failed (%s; needs python3 with matplotlib: make deps "
                    "installs python3-matplotlib)\n", rc == 127 << 8 ? "no python3 imports matplotlib"
                                                                   : "the script failed");
    return 1;
  }
  return 0;
}
