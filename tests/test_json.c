/* The sapsim tool's JSON writer (host/cli/json.c, compiled into this test) against Python's
 * json module as the independent parser: adversarial strings (quotes, backslashes, every
 * control character, DEL, multi-byte UTF-8, malformed UTF-8, a lone surrogate's bytes),
 * keys that need escaping, non-finite numbers, nesting and overflow. Each line the writer
 * produces is decoded by `python3 -c json.loads` and the decoded strings, written back as hex
 * of their UTF-8 bytes, are compared byte for byte with what went in (well-formed input) or
 * with U+FFFD per malformed byte; numbers compare exactly at 17 digits. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "cli/json.c"

/* python3 decodes each line of `in` as JSON and prints, per line, the values of the object in
 * order: strings as hex of their UTF-8 bytes, numbers with repr, null as "null", nested
 * objects flattened; one line per input line, "ERROR ..." when a line is not JSON */
static const char* PY =
    "import json,sys\n"
    "def flat(o,out):\n"
    "  for k,v in o.items():\n"
    "    out.append(k.encode('utf-8').hex())\n"
    "    if isinstance(v,dict): flat(v,out)\n"
    "    elif isinstance(v,str): out.append('s'+v.encode('utf-8').hex())\n"
    "    elif v is None: out.append('null')\n"
    "    else: out.append('n'+repr(float(v)))\n"
    "for line in open(sys.argv[1]):\n"
    "  try:\n"
    "    o=json.loads(line, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))\n"
    "    out=[]; flat(o,out); print(' '.join(out))\n"
    "  except Exception as e: print('ERROR', e)\n";

static int have_python(void) { return system("python3 -c 'import json' > /dev/null 2>&1") == 0; }

static void hex(const char* s, char* out) {
  for (const unsigned char* p = (const unsigned char*)s; *p; p++) out += sprintf(out, "%02x", *p);
  *out = 0;
}

/* run the lines through python3; the decoded line i into dec[i] */
static int py_decode(const char* const* lines, int n, char dec[][4096]) {
  char in[] = "/tmp/sapsim_test_json_XXXXXX";
  int fd = mkstemp(in);
  if (fd < 0) return 0;
  FILE* f = fdopen(fd, "w");
  for (int i = 0; i < n; i++) fprintf(f, "%s\n", lines[i]);
  fclose(f);
  char script[] = "/tmp/sapsim_test_json_py_XXXXXX";
  int sfd = mkstemp(script);
  FILE* sf = fdopen(sfd, "w");
  fputs(PY, sf);
  fclose(sf);
  char cmd[256];
  snprintf(cmd, sizeof(cmd), "python3 %s %s", script, in);
  FILE* p = popen(cmd, "r");
  int got = 0;
  while (p && got < n && fgets(dec[got], 4096, p)) {
    dec[got][strcspn(dec[got], "\n")] = 0;
    got++;
  }
  if (p) pclose(p);
  remove(in);
  remove(script);
  return got;
}

static void test_strings_round_trip(void) {
  if (!have_python()) SKIP("no python3");
  /* every control character, then the usual suspects */
  char controls[40];
  for (int c = 1; c < 32; c++) controls[c - 1] = (char)c;
  controls[31] = 0;
  const char* in[] = {
      "",
      "plain",
      "quote \" backslash \\ slash / both \\\"",
      "\\u0041 is not an escape here, \\n neither",
      controls,
      "DEL \x7f tilde ~",
      "utf-8: caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 (2, 3, 4 bytes)",
      "scenes/we\"ird\\dir\ttab/box.xml",
      "}{\":,[]",
  };
  int n = (int)(sizeof(in) / sizeof(in[0]));
  char lines[16][512];
  const char* ptr[16];
  for (int i = 0; i < n; i++) {
    sapjWriter j;
    sapj_begin(&j, lines[i], sizeof(lines[i]));
    sapj_str(&j, in[i], in[i]);  /* the same text as key and value */
    ptr[i] = sapj_end(&j);
    CHECK(ptr[i] != NULL, "string %d did not fit", i);
    if (!ptr[i]) return;
  }
  static char dec[16][4096];
  int got = py_decode(ptr, n, dec);
  CHECK(got == n, "python3 decoded %d of %d lines", got, n);
  for (int i = 0; i < got; i++) {
    char want[2100], h[1024];
    hex(in[i], h);
    snprintf(want, sizeof(want), "%s s%s", h, h);
    CHECK(!strcmp(dec[i], want), "string %d: line %s decodes as '%s', want '%s'", i, ptr[i], dec[i], want);
  }
}

/* malformed UTF-8: each bad byte becomes U+FFFD (ef bf bd), the well-formed rest is kept */
static void test_malformed_utf8(void) {
  if (!have_python()) SKIP("no python3");
  static const struct { const char* in; const char* want_hex; } cases[] = {
      {"a\xff" "b", "61efbfbd62"},                       /* never a UTF-8 byte */
      {"\xc0\xaf", "efbfbdefbfbd"},                      /* overlong '/' */
      {"\xed\xa0\x80", "efbfbdefbfbdefbfbd"},            /* a surrogate (U+D800) */
      {"\xe2\x82", "efbfbdefbfbd"},                      /* cut short at the end */
      {"\xf4\x90\x80\x80", "efbfbdefbfbdefbfbdefbfbd"},  /* above U+10FFFF */
      {"\x80x", "efbfbd78"},                             /* a lone continuation byte */
  };
  int n = (int)(sizeof(cases) / sizeof(cases[0]));
  char lines[8][256];
  const char* ptr[8];
  for (int i = 0; i < n; i++) {
    sapjWriter j;
    sapj_begin(&j, lines[i], sizeof(lines[i]));
    sapj_str(&j, "k", cases[i].in);
    ptr[i] = sapj_end(&j);
  }
  static char dec[8][4096];
  int got = py_decode(ptr, n, dec);
  CHECK(got == n, "python3 decoded %d of %d lines", got, n);
  for (int i = 0; i < got; i++) {
    char want[256];
    snprintf(want, sizeof(want), "6b s%s", cases[i].want_hex);
    CHECK(!strcmp(dec[i], want), "malformed %d: '%s' decodes as '%s', want '%s'", i, ptr[i], dec[i], want);
  }
}

/* numbers: finite ones exactly at 17 digits, NaN and infinities as null; ints; nesting */
static void test_numbers_and_nesting(void) {
  if (!have_python()) SKIP("no python3");
  const double x[] = {0.0, -0.0, 1.0 / 3.0, -2.5e-300, 1.7976931348623157e308, 4.9e-324, NAN, INFINITY, -INFINITY};
  int nx = (int)(sizeof(x) / sizeof(x[0]));
  char line[2048];
  sapjWriter j;
  sapj_begin(&j, line, sizeof(line));
  for (int i = 0; i < nx; i++) {
    char k[8];
    snprintf(k, sizeof(k), "x%d", i);
    sapj_num(&j, k, x[i], 17);
  }
  sapj_object(&j, "nested");
  sapj_int(&j, "big", -9007199254740993LL);
  sapj_object(&j, "deeper");
  sapj_null(&j, "none");
  sapj_str(&j, "null_string", NULL);
  sapj_close(&j);
  sapj_int(&j, "after", 7);
  /* the outer objects are closed by sapj_end */
  const char* ptr[1] = {sapj_end(&j)};
  CHECK(ptr[0] != NULL, "did not fit");
  if (!ptr[0]) return;
  CHECK(!strstr(line, "nan") && !strstr(line, "inf"), "non-finite numbers written: %s", line);
  static char dec[1][4096];
  CHECK(py_decode(ptr, 1, dec) == 1, "python3 decoded nothing");
  /* python's repr of each double, the nested members in order */
  char want[2048] = "", h[64];
  int n = 0;
  for (int i = 0; i < nx; i++) {
    char k[8];
    snprintf(k, sizeof(k), "x%d", i);
    hex(k, h);
    if (isfinite(x[i])) {
      char r[64];
      snprintf(r, sizeof(r), "%.17g", x[i]);
      /* python's repr is the shortest that reads back; compare as doubles below */
      n += snprintf(want + n, sizeof(want) - n, "%s%s n%s", n ? " " : "", h, r);
    } else {
      n += snprintf(want + n, sizeof(want) - n, "%s%s null", n ? " " : "", h);
    }
  }
  /* compare token by token: numbers as doubles */
  char a[4096], b[4096];
  snprintf(a, sizeof(a), "%s", dec[0]);
  snprintf(b, sizeof(b), "%s", want);
  char *sa, *sb;
  char* ta = strtok_r(a, " ", &sa);
  char* tb = strtok_r(b, " ", &sb);
  int tokens = 0;
  for (; ta && tb; ta = strtok_r(NULL, " ", &sa), tb = strtok_r(NULL, " ", &sb), tokens++) {
    if (ta[0] == 'n' && tb[0] == 'n' && ta[1] != 'u') {
      double da = strtod(ta + 1, NULL), db = strtod(tb + 1, NULL);
      /* (-0 is written "-0", which Python reads as the integer 0: the sign is not compared) */
      CHECK(da == db, "number %s decodes as %s", tb + 1, ta + 1);
    } else {
      CHECK(!strcmp(ta, tb), "token %d: '%s', want '%s'", tokens, ta, tb);
    }
  }
  CHECK(tokens == 2 * nx, "%d of %d number tokens", tokens, 2 * nx);
  /* the nested part: nested, big, deeper, none, null_string, after */
  char tail[512];
  snprintf(tail, sizeof(tail), "%s", strstr(dec[0], "6e6573746564") ? strstr(dec[0], "6e6573746564") : "");
  CHECK(!strcmp(tail, "6e6573746564 626967 n-9007199254740992.0 646565706572 6e6f6e65 null 6e756c6c5f737472696e67 "
                      "null 6166746572 n7.0"),
        "nested part: '%s' (line %s)", tail, line);
  CHECK(strstr(line, "\"big\":-9007199254740993"), "the integer is written exactly: %s", line);
}

/* a line that does not fit is refused (NULL), never cut into invalid JSON */
static void test_overflow(void) {
  char line[32];
  sapjWriter j;
  sapj_begin(&j, line, sizeof(line));
  sapj_str(&j, "key", "a value longer than the thirty-two byte buffer");
  CHECK(sapj_end(&j) == NULL, "overflow not reported: %s", line);
  sapj_begin(&j, line, sizeof(line));
  sapj_str(&j, "k", "fits");
  const char* ok = sapj_end(&j);
  CHECK(ok && !strcmp(ok, "{\"k\":\"fits\"}"), "small line: %s", ok ? ok : "(null)");
  /* exactly full: 31 characters and the terminator */
  char exact[13];
  sapj_begin(&j, exact, sizeof(exact));
  sapj_str(&j, "k", "12345");  /* {"k":"12345"} is 13 characters: one too many */
  CHECK(sapj_end(&j) == NULL, "13 characters in 13 bytes: %s", exact);
  char deep[256];
  sapj_begin(&j, deep, sizeof(deep));
  for (int i = 0; i < SAPJ_MAXDEPTH + 2; i++) sapj_object(&j, "d");
  CHECK(sapj_end(&j) == NULL, "nesting deeper than SAPJ_MAXDEPTH accepted: %s", deep);
}

int main(void) {
  RUN(test_strings_round_trip);
  RUN(test_malformed_utf8);
  RUN(test_numbers_and_nesting);
  RUN(test_overflow);
  return check_summary("test_json");
}
