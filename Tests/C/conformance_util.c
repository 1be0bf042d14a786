/* conformance_util.c -- see conformance_util.h. */
#include "conformance_util.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *cu_xmalloc(size_t size) {
    void *p = malloc(size ? size : 1);
    if (!p) {
        fprintf(stderr, "wf-conformance-c: out of memory\n");
        exit(3);
    }
    return p;
}

void *cu_xrealloc(void *p, size_t size) {
    void *q = realloc(p, size ? size : 1);
    if (!q) {
        fprintf(stderr, "wf-conformance-c: out of memory\n");
        exit(3);
    }
    return q;
}

char *cu_xstrdup(const char *text) {
    size_t length = strlen(text);
    char *copy = cu_xmalloc(length + 1);
    memcpy(copy, text, length + 1);
    return copy;
}

json_t *cu_check_json(json_t *value) {
    if (!value) {
        fprintf(stderr, "wf-conformance-c: out of memory (JSON)\n");
        exit(3);
    }
    return value;
}

static void reserve(cu_buf *buf, size_t extra) {
    size_t needed = buf->length + extra + 1;
    if (needed <= buf->capacity) return;
    size_t capacity = buf->capacity ? buf->capacity : 64;
    while (capacity < needed) capacity *= 2;
    buf->data = cu_xrealloc(buf->data, capacity);
    buf->capacity = capacity;
}

void cu_buf_append_n(cu_buf *buf, const char *text, size_t length) {
    reserve(buf, length);
    memcpy(buf->data + buf->length, text, length);
    buf->length += length;
    buf->data[buf->length] = '\0';
}

void cu_buf_append(cu_buf *buf, const char *text) { cu_buf_append_n(buf, text, strlen(text)); }

void cu_buf_printf(cu_buf *buf, const char *format, ...) {
    va_list args;
    va_start(args, format);
    va_list copy;
    va_copy(copy, args);
    int needed = vsnprintf(NULL, 0, format, copy);
    va_end(copy);
    if (needed > 0) {
        reserve(buf, (size_t)needed);
        vsnprintf(buf->data + buf->length, (size_t)needed + 1, format, args);
        buf->length += (size_t)needed;
    }
    va_end(args);
}

const char *cu_buf_text(const cu_buf *buf) { return buf->data ? buf->data : ""; }

void cu_buf_clear(cu_buf *buf) {
    buf->length = 0;
    if (buf->data) buf->data[0] = '\0';
}

void cu_buf_free(cu_buf *buf) {
    free(buf->data);
    buf->data = NULL;
    buf->length = buf->capacity = 0;
}

/* The shortest text that reads back as the same double, laid out like Python's repr:
 * positional for exponents -4..15 ("100.0", "0.0001", "1234567890123456.0"), else
 * scientific with at least two exponent digits ("1e-05", "1e+16", "1.5e+300"). */
static void append_real(cu_buf *buf, double value) {
    if (!isfinite(value)) {
        cu_buf_append(buf, "null");
        return;
    }
    char text[48];
    for (int precision = 0; precision <= 17; precision++) {
        snprintf(text, sizeof text, "%.*e", precision, value);
        if (strtod(text, NULL) == value) break;
    }
    /* text is [-]d[.ddd]e(+|-)XX: split it into sign, digits and decimal exponent. */
    const char *p = text;
    if (*p == '-') {
        cu_buf_append(buf, "-");
        p++;
    }
    char digits[24];
    size_t count = 0;
    for (; *p && *p != 'e'; p++) {
        if (*p != '.' && count < sizeof digits - 1) digits[count++] = *p;
    }
    while (count > 1 && digits[count - 1] == '0') count--;
    digits[count] = '\0';
    int exponent = *p == 'e' ? atoi(p + 1) : 0;

    if (exponent >= -4 && exponent < 16) {
        if (exponent < 0) {
            cu_buf_append(buf, "0.");
            for (int i = -1; i > exponent; i--) cu_buf_append(buf, "0");
            cu_buf_append(buf, digits);
            return;
        }
        size_t whole = (size_t)exponent + 1;
        for (size_t i = 0; i < whole; i++) cu_buf_append_n(buf, i < count ? &digits[i] : "0", 1);
        cu_buf_append(buf, ".");
        cu_buf_append(buf, count > whole ? digits + whole : "0");
        return;
    }
    cu_buf_append_n(buf, digits, 1);
    if (count > 1) {
        cu_buf_append(buf, ".");
        cu_buf_append(buf, digits + 1);
    }
    cu_buf_printf(buf, "e%c%02d", exponent < 0 ? '-' : '+', exponent < 0 ? -exponent : exponent);
}

static void append_string(cu_buf *buf, const char *text, size_t length) {
    cu_buf_append(buf, "\"");
    for (size_t i = 0; i < length; i++) {
        unsigned char c = (unsigned char)text[i];
        switch (c) {
        case '"': cu_buf_append(buf, "\\\""); break;
        case '\\': cu_buf_append(buf, "\\\\"); break;
        case '\b': cu_buf_append(buf, "\\b"); break;
        case '\f': cu_buf_append(buf, "\\f"); break;
        case '\n': cu_buf_append(buf, "\\n"); break;
        case '\r': cu_buf_append(buf, "\\r"); break;
        case '\t': cu_buf_append(buf, "\\t"); break;
        default:
            if (c < 0x20) cu_buf_printf(buf, "\\u%04x", c);
            else cu_buf_append_n(buf, (const char *)&text[i], 1);
        }
    }
    cu_buf_append(buf, "\"");
}

static void append_json(cu_buf *buf, const json_t *value) {
    switch (json_typeof(value)) {
    case JSON_OBJECT: {
        const char *key;
        json_t *member;
        int first = 1;
        cu_buf_append(buf, "{");
        json_object_foreach((json_t *)value, key, member) {
            if (!first) cu_buf_append(buf, ",");
            first = 0;
            append_string(buf, key, strlen(key));
            cu_buf_append(buf, ":");
            append_json(buf, member);
        }
        cu_buf_append(buf, "}");
        break;
    }
    case JSON_ARRAY: {
        size_t index;
        json_t *element;
        cu_buf_append(buf, "[");
        json_array_foreach(value, index, element) {
            if (index) cu_buf_append(buf, ",");
            append_json(buf, element);
        }
        cu_buf_append(buf, "]");
        break;
    }
    case JSON_STRING: append_string(buf, json_string_value(value), json_string_length(value)); break;
    case JSON_INTEGER: cu_buf_printf(buf, "%" JSON_INTEGER_FORMAT, json_integer_value(value)); break;
    case JSON_REAL: append_real(buf, json_real_value(value)); break;
    case JSON_TRUE: cu_buf_append(buf, "true"); break;
    case JSON_FALSE: cu_buf_append(buf, "false"); break;
    case JSON_NULL: cu_buf_append(buf, "null"); break;
    }
}

void cu_buf_append_json(cu_buf *buf, const json_t *value, size_t max_chars) {
    if (!value) {
        cu_buf_append(buf, "nothing");
        return;
    }
    size_t start = buf->length;
    append_json(buf, value);
    if (max_chars == 0) return;
    /* Keep the first max_chars code points, then "…". */
    size_t seen = 0;
    for (size_t at = start; at < buf->length; at++) {
        if (((unsigned char)buf->data[at] & 0xC0) == 0x80) continue;
        if (seen++ == max_chars) {
            buf->length = at;
            buf->data[at] = '\0';
            cu_buf_append(buf, "\xe2\x80\xa6");
            return;
        }
    }
}

char *cu_json_compact(const json_t *value) {
    cu_buf buf = {0};
    cu_buf_append_json(&buf, value, 0);
    return buf.data ? buf.data : cu_xstrdup("");
}

size_t cu_utf8_length(const char *text, size_t length) {
    size_t count = 0;
    for (size_t i = 0; i < length; i++) {
        if (((unsigned char)text[i] & 0xC0) != 0x80) count++;
    }
    return count;
}
