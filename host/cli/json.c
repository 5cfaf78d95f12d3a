/* The sapsim tool's JSON writer (json.h). Escapes follow RFC 8259 section 7: '"' and '\\'
 * with a backslash, \n \r \t \b \f by name, other bytes below 0x20 as \u00XX; UTF-8 is
 * copied when well formed (RFC 3629: no overlong forms, no surrogates, at most U+10FFFF),
 * each byte of a malformed sequence becomes \ufffd. */
#include "json.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static void put(sapjWriter* j, const char* s, int n) {
  if (j->overflow) return;
  if (j->len + n >= j->cap) {
    j->overflow = 1;
    return;
  }
  memcpy(j->buf + j->len, s, n);
  j->len += n;
  j->buf[j->len] = 0;
}

static void puts_(sapjWriter* j, const char* s) { put(j, s, (int)strlen(s)); }

/* length of the well-formed UTF-8 sequence at s (lead byte >= 0x80), 0 when malformed */
static int utf8_len(const unsigned char* s) {
  unsigned char c = s[0];
  int n = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
  if (!n) return 0;
  unsigned char lo = 0x80, hi = 0xBF;  /* the second byte's range (RFC 3629, section 4) */
  if (c == 0xE0) lo = 0xA0;
  if (c == 0xED) hi = 0x9F;
  if (c == 0xF0) lo = 0x90;
  if (c == 0xF4) hi = 0x8F;
  if (s[1] < lo || s[1] > hi) return 0;
  for (int i = 2; i < n; i++)
    if (s[i] < 0x80 || s[i] > 0xBF) return 0;
  return n;
}

static void string(sapjWriter* j, const char* s) {
  put(j, "\"", 1);
  for (const unsigned char* p = (const unsigned char*)s; *p;) {
    unsigned char c = *p;
    char esc[8];
    if (c == '"' || c == '\\') {
      esc[0] = '\\';
      esc[1] = (char)c;
      put(j, esc, 2);
      p++;
    } else if (c < 0x20) {
      const char* named = c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t" : c == '\b' ? "\\b"
                          : c == '\f' ? "\\f" : NULL;
      if (named) {
        puts_(j, named);
      } else {
        snprintf(esc, sizeof(esc), "\\u%04x", c);
        puts_(j, esc);
      }
      p++;
    } else if (c < 0x80) {
      put(j, (const char*)p, 1);
      p++;
    } else {
      int n = utf8_len(p);
      if (n) put(j, (const char*)p, n);
      else puts_(j, "\\ufffd");
      p += n ? n : 1;
    }
  }
  put(j, "\"", 1);
}

/* the comma before a member and its key */
static void key(sapjWriter* j, const char* k) {
  if (!j->first[j->depth]) put(j, ",", 1);
  j->first[j->depth] = 0;
  string(j, k);
  put(j, ":", 1);
}

void sapj_begin(sapjWriter* j, char* buf, int cap) {
  memset(j, 0, sizeof(*j));
  j->buf = buf;
  j->cap = cap;
  if (cap > 0) buf[0] = 0;
  j->first[0] = 1;
  put(j, "{", 1);
}

void sapj_str(sapjWriter* j, const char* k, const char* value) {
  key(j, k);
  if (value) string(j, value);
  else puts_(j, "null");
}

void sapj_num(sapjWriter* j, const char* k, double x, int digits) {
  key(j, k);
  if (!isfinite(x)) {
    puts_(j, "null");
    return;
  }
  char text[40];
  snprintf(text, sizeof(text), "%.*g", digits, x);
  puts_(j, text);
}

void sapj_int(sapjWriter* j, const char* k, long long x) {
  key(j, k);
  char text[24];
  snprintf(text, sizeof(text), "%lld", x);
  puts_(j, text);
}

void sapj_null(sapjWriter* j, const char* k) {
  key(j, k);
  puts_(j, "null");
}

void sapj_object(sapjWriter* j, const char* k) {
  key(j, k);
  if (j->depth + 1 >= SAPJ_MAXDEPTH) {
    j->overflow = 1;
    return;
  }
  put(j, "{", 1);
  j->first[++j->depth] = 1;
}

void sapj_close(sapjWriter* j) {
  if (j->depth == 0) {
    j->overflow = 1;
    return;
  }
  put(j, "}", 1);
  j->depth--;
}

const char* sapj_end(sapjWriter* j) {
  while (j->depth > 0) sapj_close(j);
  put(j, "}", 1);
  return j->overflow ? NULL : j->buf;
}
