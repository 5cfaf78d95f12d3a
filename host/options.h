/* The option table (host/options.c): one row per knob of sapOptions with its key, alias,
 * type, valid values or range, default and a one-line doc. sap_optionsDefault,
 * sap_optionsSet/Get, the struct check of sap_optionsExpand, sap_optionsDescribe and the
 * CLI's `sapsim help` are all generated from it (issue 21, "options in one row each");
 * the README's options table is its independent documentation (tests/test_options.c
 * compares the two). */
#ifndef SAPSIM_HOST_OPTIONS_H
#define SAPSIM_HOST_OPTIONS_H

#include <stddef.h>

#include "sapsim/sapsim.h"

/* a value name of an enum knob; several names may share a value (aliases: "f32" = "fp32"),
 * the first one is the canonical name */
typedef struct { const char* name; int value; } sapoName;

typedef enum { SAPO_ENUM, SAPO_INT, SAPO_REAL } sapoKind;

typedef struct {
  const char* key;          /* canonical name */
  const char* alias;        /* SAP Warp / seed 002 name, or NULL */
  sapoKind kind;
  size_t offset;            /* into sapOptions: an int (enum, integer) or a double (real) */
  const sapoName* names;    /* SAPO_ENUM: NULL-terminated */
  double lo, hi;            /* SAPO_INT / SAPO_REAL: valid range [lo, hi], (lo, hi] with lo_open */
  int lo_open;
  double def;               /* default: an enum value, an integer or a real; -1 (NaN for reals):
                               resolved when the options are expanded, as `unset` says */
  const char* unset;        /* what a -1/NaN default resolves to ("preset", "the scene's") */
  const char* doc;          /* one line */
} sapoKey;

extern const sapoKey sapo_keys[];
extern const int sapo_nkeys;

/* the row of a key or alias (normalised like sap_optionsSet), NULL when none */
const sapoKey* sapo_find(const char* key);
/* the valid values as text: "fp32 | fp64", "[1, 100000]", "(0, 1]" */
const char* sapo_valuesText(const sapoKey* e, char* buf, int nbuf);
/* the default as text: the canonical name, the number, or the `unset` text */
const char* sapo_defaultText(const sapoKey* e, char* buf, int nbuf);
/* canonical name of an enum value of a knob, for logs: sapo_valueName("line_search", 1) */
const char* sapo_valueName(const char* key, int value);

#endif
