/* A small JSON writer for the sapsim tool's JSON lines (bench, ablate, compare): one object
 * at a time into a caller's buffer, members in call order, nested objects. Strings are
 * escaped (RFC 8259: '"', '\\' and control characters; bytes that are not UTF-8 become
 * U+FFFD), so any scene path or label is safe; numbers are printed with %.*g and a
 * non-finite number (NaN, inf: not JSON) is written as null. A line that does not fit is
 * reported by sapj_end (NULL), never cut. */
#ifndef SAPSIM_HOST_CLI_JSON_H
#define SAPSIM_HOST_CLI_JSON_H

#define SAPJ_MAXDEPTH 8

typedef struct {
  char* buf;
  int cap, len;
  int depth;
  int first[SAPJ_MAXDEPTH];  /* no member yet in the object open at each depth */
  int overflow;              /* 1 once something did not fit (or depth ran out) */
} sapjWriter;

/* start an object in buf (cap bytes) */
void sapj_begin(sapjWriter* j, char* buf, int cap);
/* members: "key": value. sapj_str writes null for a NULL value; sapj_num writes x with
 * digits significant digits (%.*g), null when x is not finite */
void sapj_str(sapjWriter* j, const char* key, const char* value);
void sapj_num(sapjWriter* j, const char* key, double x, int digits);
void sapj_int(sapjWriter* j, const char* key, long long x);
void sapj_null(sapjWriter* j, const char* key);
/* a nested object as the value of key, closed by sapj_close */
void sapj_object(sapjWriter* j, const char* key);
void sapj_close(sapjWriter* j);
/* close the outer object: the line (no newline), or NULL when it did not fit */
const char* sapj_end(sapjWriter* j);

#endif
