/* The options against their documentation: the README's options table ("## Options": key
 * (alias) | values | default, one row per option) is written by hand, independent of the
 * option table of host/options.c, and every check here reads its expectation from the
 * README and its answer from the public API (sap_optionsDefault/Set/Get/Expand), so the
 * code and the docs cannot drift apart unnoticed:
 *   - the keys: every README key and alias is accepted, and every key the library lists in
 *     its unknown-key error is in the README;
 *   - the values: every valid value the library lists in a refusal appears in the README's
 *     values cell, and each README range `[lo, hi]` / `(lo, hi]` is the accepted range:
 *     its ends are accepted (an open end refused) and values just outside are refused with a
 *     message naming the option and the same range;
 *   - the defaults: the README's default is sap_optionsDefault's value ("preset" while the
 *     preset decides; a number of an option left to the line search is the expanded value);
 *   - round trip: sap_optionsGet's text sets the same value again (bitwise), for every
 *     valid enum value, both ends and an interior value of each range, through key and alias;
 *   - coverage: setting every option by text fixes every byte of sapOptions;
 *   - `sapsim help` lists every option. */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "sapsim/sapsim.h"

#define MAXROW 96

typedef struct {
  char key[64], alias[64];
  char values[2048];
  char def[1024];
} docRow;

static docRow rows[MAXROW];
static int nrow;

static void trim(char* s) {
  char* p = s;
  while (*p == ' ') p++;
  memmove(s, p, strlen(p) + 1);
  size_t n = strlen(s);
  while (n && (s[n - 1] == ' ' || s[n - 1] == '\n')) s[--n] = 0;
}

/* the first `...` of text into out ("" when none); returns the text after it */
static const char* backticked(const char* text, char* out, int nout) {
  out[0] = 0;
  const char* a = strchr(text, '`');
  if (!a) return NULL;
  const char* b = strchr(a + 1, '`');
  if (!b) return NULL;
  snprintf(out, nout, "%.*s", (int)(b - a - 1), a + 1);
  return b + 1;
}

/* README.md's options table: rows of "| `key` (`alias`) | values | default |" */
static int read_readme(void) {
  FILE* f = fopen("README.md", "r");
  if (!f) return 0;
  char line[8192];
  int in_section = 0, in_table = 0;
  nrow = 0;
  while (fgets(line, sizeof(line), f)) {
    if (!strncmp(line, "## ", 3)) in_section = !strncmp(line, "## Options", 10);
    if (!in_section) continue;
    if (!strncmp(line, "| key (alias) | values | default |", 34)) {
      in_table = 1;
      continue;
    }
    if (!in_table) continue;
    if (line[0] != '|') break;
    if (!strncmp(line, "|---", 4)) continue;
    char* cell[4];
    int nc = 0;
    for (char* p = strtok(line + 1, "|"); p && nc < 4; p = strtok(NULL, "|")) cell[nc++] = p;
    if (nc < 3 || nrow == MAXROW) continue;
    docRow* r = &rows[nrow++];
    const char* rest = backticked(cell[0], r->key, sizeof(r->key));
    r->alias[0] = 0;
    if (rest && strchr(rest, '(')) backticked(rest, r->alias, sizeof(r->alias));
    snprintf(r->values, sizeof(r->values), "%s", cell[1]);
    snprintf(r->def, sizeof(r->def), "%s", cell[2]);
    trim(r->values);
    trim(r->def);
  }
  fclose(f);
  return nrow;
}

/* "... (valid: a, b, c)" of the last error into names; returns the count */
static int valid_list(char names[][64], int max) {
  const char* v = strstr(sap_lastError(), "(valid: ");
  if (!v) return 0;
  char buf[2048];
  snprintf(buf, sizeof(buf), "%s", v + 8);
  char* close = strrchr(buf, ')');
  if (close) *close = 0;
  int n = 0;
  for (char* t = strtok(buf, ", "); t && n < max; t = strtok(NULL, ", ")) snprintf(names[n++], 64, "%s", t);
  return n;
}

/* word as a whole word of text (neighbours not letters, digits or '_') */
static int has_word(const char* text, const char* word) {
  size_t n = strlen(word);
  for (const char* p = strstr(text, word); p; p = strstr(p + 1, word)) {
    int before = p == text || !(isalnum((unsigned char)p[-1]) || p[-1] == '_');
    int after = !(isalnum((unsigned char)p[n]) || p[n] == '_');
    if (before && after) return 1;
  }
  return 0;
}

/* the first "`[lo, hi]`" or "`(lo, hi]`" of a values cell */
static int doc_range(const char* values, double* lo, double* hi, int* lo_open) {
  char t[128];
  for (const char* p = values; (p = backticked(p, t, sizeof(t)));) {
    if ((t[0] != '[' && t[0] != '(') || t[strlen(t) - 1] != ']') continue;
    char* end;
    *lo_open = t[0] == '(';
    *lo = strtod(t + 1, &end);
    if (*end != ',') continue;
    *hi = strtod(end + 1, &end);
    if (*end == ']') return 1;
  }
  return 0;
}

/* the same range in an error message: "out of range [lo, hi]" */
static int msg_range(const char* msg, double* lo, double* hi, int* lo_open) {
  const char* p = strstr(msg, "out of range ");
  if (!p) return 0;
  p += strlen("out of range ");
  *lo_open = *p == '(';
  char* end;
  *lo = strtod(p + 1, &end);
  if (*end != ',') return 0;
  *hi = strtod(end + 1, &end);
  return *end == ']';
}

static int is_int_option(const char* key) {
  sapOptions o;
  sap_optionsDefault(&o);
  return sap_optionsSet(&o, key, "2.5") == SAP_ERR_OPTION && strstr(sap_lastError(), "not an integer");
}

/* the options the library knows: the list of its unknown-key error */
static int library_keys(char names[][64], int max) {
  sapOptions o;
  sap_optionsDefault(&o);
  if (sap_optionsSet(&o, "no_such_option", "1") != SAP_ERR_OPTION) return 0;
  return valid_list(names, max);
}

static void test_keys_documented(void) {
  CHECK(read_readme() >= 40, "README.md's options table: %d rows (run from the repository root)", nrow);
  char lib[MAXROW][64];
  int nlib = library_keys(lib, MAXROW);
  CHECK(nlib >= 40, "the unknown-key error lists %d keys: %s", nlib, sap_lastError());
  for (int i = 0; i < nlib; i++) {
    int found = 0;
    for (int r = 0; r < nrow; r++) found += !strcmp(rows[r].key, lib[i]);
    CHECK(found == 1, "option %s: %d README rows", lib[i], found);
  }
  CHECK(nrow == nlib, "README rows %d, library keys %d", nrow, nlib);
  for (int r = 0; r < nrow; r++) {
    sapOptions a, b;
    sap_optionsDefault(&a);
    sap_optionsDefault(&b);
    char v[64];
    CHECK(sap_optionsGet(&a, rows[r].key, v, sizeof(v)) == SAP_OK, "README key %s: %s", rows[r].key, sap_lastError());
    if (!rows[r].alias[0]) continue;
    char alias_v[64];
    CHECK(sap_optionsGet(&a, rows[r].alias, alias_v, sizeof(alias_v)) == SAP_OK && !strcmp(v, alias_v),
          "README alias %s of %s: '%s' vs '%s' (%s)", rows[r].alias, rows[r].key, alias_v, v, sap_lastError());
  }
}

/* every valid value the library names is documented; each README range is the accepted one */
static void test_values_documented(void) {
  if (!nrow) SKIP("no README table");
  for (int r = 0; r < nrow; r++) {
    const docRow* d = &rows[r];
    sapOptions o;
    sap_optionsDefault(&o);
    double lo, hi;
    int lo_open;
    int ranged = doc_range(d->values, &lo, &hi, &lo_open);
    sapStatus st = sap_optionsSet(&o, d->key, "no_such_value");
    CHECK(st == SAP_ERR_OPTION && strstr(sap_lastError(), d->key), "%s=no_such_value: %d '%s'", d->key, st,
          sap_lastError());
    char names[32][64];
    int nn = valid_list(names, 32);
    if (nn) {  /* an enum */
      CHECK(!ranged, "%s: an enum with a documented range", d->key);
      for (int i = 0; i < nn; i++)
        CHECK(has_word(d->values, names[i]), "%s: valid value '%s' not in the README's values: %s", d->key, names[i],
              d->values);
      continue;
    }
    CHECK(ranged, "%s: a number without a documented range: '%s'", d->key, d->values);
    if (!ranged) continue;
    int integer = is_int_option(d->key);
    char text[64];
    /* the ends */
    snprintf(text, sizeof(text), "%.17g", lo);
    st = sap_optionsSet(&o, d->key, text);
    CHECK(lo_open ? st == SAP_ERR_OPTION : st == SAP_OK, "%s=%s (README %s): %d '%s'", d->key, text,
          lo_open ? "open" : "closed", st, sap_lastError());
    snprintf(text, sizeof(text), "%.17g", hi);
    st = sap_optionsSet(&o, d->key, text);
    CHECK(st == SAP_OK, "%s=%s (README's upper end): '%s'", d->key, text, sap_lastError());
    /* just outside: the message names the option and the README's range */
    double out[2] = {integer ? lo - 1 : lo - fmax(fabs(lo), 1) * 1e-9, integer ? hi + 1 : hi + fabs(hi) * 1e-9};
    for (int k = 0; k < 2; k++) {
      snprintf(text, sizeof(text), "%.17g", out[k]);
      st = sap_optionsSet(&o, d->key, text);
      double mlo = NAN, mhi = NAN;
      int mopen = -1;
      int parsed = msg_range(sap_lastError(), &mlo, &mhi, &mopen);
      CHECK(st == SAP_ERR_OPTION && strstr(sap_lastError(), d->key) && parsed && mlo == lo && mhi == hi &&
                mopen == lo_open,
            "%s=%s: %d '%s' (README range %c%g, %g])", d->key, text, st, sap_lastError(), lo_open ? '(' : '[', lo, hi);
    }
  }
}

/* "text" of a default cell: before " (" */
static void default_value(const char* cell, char* out, int nout) {
  const char* paren = strstr(cell, " (");
  int n = paren ? (int)(paren - cell) : (int)strlen(cell);
  snprintf(out, nout, "%.*s", n, cell);
  trim(out);
}

static void test_defaults_documented(void) {
  if (!nrow) SKIP("no README table");
  sapOptions def, exp;
  sap_optionsDefault(&def);
  CHECK(sap_optionsExpand(&def, &exp) == SAP_OK, "expand the defaults: %s", sap_lastError());
  for (int r = 0; r < nrow; r++) {
    const docRow* d = &rows[r];
    char doc[256], got[64], expanded[64];
    default_value(d->def, doc, sizeof(doc));
    sap_optionsGet(&def, d->key, got, sizeof(got));
    sap_optionsGet(&exp, d->key, expanded, sizeof(expanded));
    int unset = !strcmp(got, "preset") || !strcmp(got, "-1") || !strcmp(got, "nan");
    char* end;
    double x = strtod(doc, &end);
    if (doc[0] && !*end) {  /* a number: the default, or what an unset default expands to */
      double want = strtod(unset ? expanded : got, NULL);
      CHECK(x == want, "%s: README default %s, library %s (expanded %s)", d->key, doc, got, expanded);
      continue;
    }
    if (!strcmp(doc, "preset")) {
      CHECK(!strcmp(got, "preset"), "%s: README default 'preset', library %s", d->key, got);
      continue;
    }
    sapOptions named;
    sap_optionsDefault(&named);
    if (sap_optionsSet(&named, d->key, doc) == SAP_OK) {  /* a value name */
      char want[64];
      sap_optionsGet(&named, d->key, want, sizeof(want));
      CHECK(!strcmp(got, want), "%s: README default %s, library %s", d->key, doc, got);
      continue;
    }
    /* prose ("the scene's", "1000 eps ..."): only for a default the library leaves unset */
    CHECK(unset && doc[0], "%s: README default '%s' describes a resolved value, but the library's is %s", d->key,
          d->def, got);
  }
}

/* set -> get -> set gives the same options, bitwise */
static void round_trip(const char* key, const char* alias, const char* value) {
  sapOptions a, b;
  sap_optionsDefault(&a);
  sap_optionsDefault(&b);
  if (sap_optionsSet(&a, key, value) != SAP_OK) {
    CHECK(0, "%s=%s: %s", key, value, sap_lastError());
    return;
  }
  char text[64];
  CHECK(sap_optionsGet(&a, key, text, sizeof(text)) == SAP_OK, "get %s: %s", key, sap_lastError());
  CHECK(sap_optionsSet(&b, alias ? alias : key, text) == SAP_OK, "%s=%s (read back): %s", alias ? alias : key, text,
        sap_lastError());
  CHECK(!memcmp(&a, &b, sizeof(a)), "%s=%s reads back as '%s', which sets a different value", key, value, text);
}

static void test_round_trip(void) {
  if (!nrow) SKIP("no README table");
  for (int r = 0; r < nrow; r++) {
    const docRow* d = &rows[r];
    const char* alias = d->alias[0] ? d->alias : NULL;
    sapOptions o;
    sap_optionsDefault(&o);
    sap_optionsSet(&o, d->key, "no_such_value");
    char names[32][64];
    int nn = valid_list(names, 32);
    for (int i = 0; i < nn; i++) {
      round_trip(d->key, NULL, names[i]);
      round_trip(d->key, alias, names[i]);
    }
    double lo, hi;
    int lo_open;
    if (nn || !doc_range(d->values, &lo, &hi, &lo_open)) continue;
    int integer = is_int_option(d->key);
    /* an interior value that needs 17 digits, both ends (an open one nudged inside) */
    double in[3] = {lo + (hi - lo) * 0.1234567890123457, lo_open ? nextafter(lo, hi) : lo, hi};
    for (int k = 0; k < 3; k++) {
      char text[64];
      if (integer) snprintf(text, sizeof(text), "%ld", (long)ceil(in[k]));
      else snprintf(text, sizeof(text), "%.17g", in[k]);
      round_trip(d->key, alias, text);
    }
  }
}

/* every byte of sapOptions belongs to an option: two structs filled with different junk
 * become equal once every option is set by text */
static void test_every_field_an_option(void) {
  char lib[MAXROW][64];
  int nlib = library_keys(lib, MAXROW);
  sapOptions a, b;
  memset(&a, 0x5a, sizeof(a));
  memset(&b, 0xc3, sizeof(b));
  for (int i = 0; i < nlib; i++) {
    sapOptions d;
    sap_optionsDefault(&d);
    char v[64];
    sap_optionsGet(&d, lib[i], v, sizeof(v));
    if (!strcmp(v, "preset") || !strcmp(v, "nan") || !strcmp(v, "-1")) {  /* unset: take a valid value */
      sap_optionsSet(&d, lib[i], "no_such_value");
      char names[32][64];
      if (valid_list(names, 32)) snprintf(v, sizeof(v), "%s", names[0]);
      else snprintf(v, sizeof(v), "%s", is_int_option(lib[i]) ? "1" : "0.5");
    }
    CHECK(sap_optionsSet(&a, lib[i], v) == SAP_OK && sap_optionsSet(&b, lib[i], v) == SAP_OK, "%s=%s: %s", lib[i],
          v, sap_lastError());
  }
  /* up to the end of the last member (the struct's tail padding belongs to no field) */
  const unsigned char *pa = (const unsigned char*)&a, *pb = (const unsigned char*)&b;
  size_t end = offsetof(sapOptions, retry_recover_steps) + sizeof(a.retry_recover_steps);
  for (size_t i = 0; i < end; i++)
    CHECK(pa[i] == pb[i], "byte %zu of sapOptions is set by no option", i);
  /* and the description has one line per option */
  char desc[8192];
  sapOptions d;
  sap_optionsDefault(&d);
  sap_optionsDescribe(&d, desc, sizeof(desc));
  int lines = 0;
  for (const char* p = desc; *p; p++) lines += *p == '\n';
  CHECK(lines == nlib, "sap_optionsDescribe: %d lines, %d options", lines, nlib);
}

static void test_get_errors(void) {
  sapOptions o;
  sap_optionsDefault(&o);
  char small[4];
  CHECK(sap_optionsGet(&o, "nope", small, sizeof(small)) == SAP_ERR_OPTION && strstr(sap_lastError(), "'nope'"),
        "unknown key: %s", sap_lastError());
  CHECK(sap_optionsGet(&o, "line_search", small, sizeof(small)) == SAP_ERR_ARG &&
            strstr(sap_lastError(), "line_search") && small[0] == 0,
        "short buffer: %s", sap_lastError());
  CHECK(sap_optionsGet(NULL, "rho", small, sizeof(small)) == SAP_ERR_ARG, "null options");
}

/* `sapsim help` (the CLI beside this test's build directory) lists each option and its alias */
static void test_help_lists_options(void) {
  char exe[1024], cmd[1200];
  ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (len <= 0) SKIP("no /proc/self/exe");
  exe[len] = 0;
  if (strrchr(exe, '/')) *strrchr(exe, '/') = 0;
  snprintf(cmd, sizeof(cmd), "%s/../sapsim", exe);
  if (access(cmd, X_OK) != 0) SKIP("%s not built", cmd);
  snprintf(cmd, sizeof(cmd), "'%s/../sapsim' help 2>&1", exe);
  FILE* p = popen(cmd, "r");
  if (!p) SKIP("cannot run %s", cmd);
  static char out[65536];
  size_t n = fread(out, 1, sizeof(out) - 1, p);
  out[n] = 0;
  if (pclose(p) != 0 || !n) SKIP("build/sapsim not built");
  for (int r = 0; r < nrow; r++) {
    char line[96];
    snprintf(line, sizeof(line), "\n  %s ", rows[r].key);
    const char* at = strstr(out, line);
    CHECK(at != NULL, "sapsim help: no line for option %s", rows[r].key);
    if (at && rows[r].alias[0]) {
      const char* eol = strchr(at + 1, '\n');
      char alias[96];
      snprintf(alias, sizeof(alias), "alias %s", rows[r].alias);
      const char* a = strstr(at, alias);
      CHECK(a && (!eol || a < eol), "sapsim help: option %s without its alias %s", rows[r].key, rows[r].alias);
    }
  }
}

int main(void) {
  RUN(test_keys_documented);
  RUN(test_values_documented);
  RUN(test_defaults_documented);
  RUN(test_round_trip);
  RUN(test_every_field_an_option);
  RUN(test_get_errors);
  RUN(test_help_lists_options);
  return check_summary("test_options");
}
