/*
 * conformance_util.h -- small helpers for the C conformance runner: a growable
 * string buffer and a compact JSON writer whose output matches the other runners
 * (insertion order, no spaces, shortest round-trip reals laid out like Python's repr;
 * see Tests/Conformance/runner-cases/README.md, "Values in messages").
 */
#ifndef WF_CONFORMANCE_UTIL_H
#define WF_CONFORMANCE_UTIL_H

#include <jansson.h>
#include <stddef.h>

/* Values in report lines are cut after this many code points. */
#define CU_SHOW_MAX 300

/* A growable NUL-terminated string. Zero-initialise ({0}) before use. */
typedef struct cu_buf {
    char *data;
    size_t length;
    size_t capacity;
} cu_buf;

void cu_buf_append(cu_buf *buf, const char *text);
void cu_buf_append_n(cu_buf *buf, const char *text, size_t length);
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
void cu_buf_printf(cu_buf *buf, const char *format, ...);
/* The text so far ("" when nothing was appended); owned by the buffer. */
const char *cu_buf_text(const cu_buf *buf);
void cu_buf_clear(cu_buf *buf);
void cu_buf_free(cu_buf *buf);

/* Appends `value` as compact JSON. NULL appends "nothing" (an absent value).
 * With max_chars > 0, text of more code points is cut to max_chars and ends in "…". */
void cu_buf_append_json(cu_buf *buf, const json_t *value, size_t max_chars);

/* Compact JSON of `value` in a new malloc'd string (free() it). */
char *cu_json_compact(const json_t *value);

/* Number of Unicode code points in a UTF-8 string of `length` bytes. */
size_t cu_utf8_length(const char *text, size_t length);

/* Aborts with a message when memory runs out (the runner cannot go on without it). */
void *cu_xmalloc(size_t size);
void *cu_xrealloc(void *p, size_t size);
char *cu_xstrdup(const char *text);
json_t *cu_check_json(json_t *value);

#endif
