/* conformance_match.c -- see conformance_match.h. */
#define _XOPEN_SOURCE 700
#include "conformance_match.h"

#include <ctype.h>
#include <math.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

static const char *show_path(const char *path) { return path[0] ? path : "outcome"; }

static char *child_key_path(const char *path, const char *key) {
    cu_buf buf = {0};
    if (path[0]) cu_buf_printf(&buf, "%s.%s", path, key);
    else cu_buf_append(&buf, key);
    return buf.data;
}

static char *child_index_path(const char *path, size_t index) {
    cu_buf buf = {0};
    cu_buf_printf(&buf, "%s[%zu]", path, index);
    return buf.data;
}

/* "path: expected E, got A" plus an optional note in parentheses;
 * "path: missing (expected E)" when the value is absent. */
static cm_result mismatch(cu_buf *why, const char *path, const json_t *expect, const json_t *actual,
                          const char *note) {
    if (why) {
        cu_buf_clear(why);
        if (!actual) {
            cu_buf_printf(why, "%s: missing (expected ", show_path(path));
            cu_buf_append_json(why, expect, CU_SHOW_MAX);
            cu_buf_append(why, ")");
            return CM_MISMATCH;
        }
        cu_buf_printf(why, "%s: expected ", show_path(path));
        cu_buf_append_json(why, expect, CU_SHOW_MAX);
        cu_buf_append(why, ", got ");
        cu_buf_append_json(why, actual, CU_SHOW_MAX);
        if (note && note[0]) cu_buf_printf(why, " (%s)", note);
    }
    return CM_MISMATCH;
}

int cm_is_operator(const json_t *value) {
    if (!json_is_object(value) || json_object_size(value) == 0) return 0;
    const char *key;
    json_t *member;
    json_object_foreach((json_t *)value, key, member) {
        (void)member;
        if (key[0] != '$') return 0;
    }
    return 1;
}

static int is_number(const json_t *v) { return json_is_integer(v) || json_is_real(v); }

/* A real equals an integer only when it is that integer exactly: 2^53 + 1 is not the real
 * 2^53, though both convert to the same double. */
static int integer_equals_real(json_int_t i, double d) {
    if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0) || d != floor(d)) return 0;
    return (json_int_t)d == i;
}

static int numbers_equal(const json_t *a, const json_t *b) {
    if (json_is_integer(a) && json_is_integer(b)) return json_integer_value(a) == json_integer_value(b);
    if (json_is_integer(a)) return integer_equals_real(json_integer_value(a), json_real_value(b));
    if (json_is_integer(b)) return integer_equals_real(json_integer_value(b), json_real_value(a));
    return json_real_value(a) == json_real_value(b);
}

/* ---------------------------------------------------------------------------
 * Timestamps
 * ------------------------------------------------------------------------- */

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm). */
static long long days_from_civil(long long y, unsigned m, unsigned d) {
    y -= m <= 2;
    long long era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (long long)doe - 719468;
}

static int days_in_month(int year, int month) {
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    return month == 2 && leap ? 29 : days[month - 1];
}

static int digits(const char *s, int count, int *out) {
    int value = 0;
    for (int i = 0; i < count; i++) {
        if (!isdigit((unsigned char)s[i])) return 0;
        value = value * 10 + (s[i] - '0');
    }
    *out = value;
    return 1;
}

/* YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM), 'T' and 'Z' in either case. */
int cm_parse_time(const char *text, long long *seconds, long *nanoseconds) {
    int year, month, day, hour, minute, second;
    const char *s = text;
    if (!digits(s, 4, &year) || s[4] != '-' || !digits(s + 5, 2, &month) || s[7] != '-' ||
        !digits(s + 8, 2, &day) || (s[10] != 'T' && s[10] != 't') || !digits(s + 11, 2, &hour) ||
        s[13] != ':' || !digits(s + 14, 2, &minute) || s[16] != ':' || !digits(s + 17, 2, &second)) {
        return 0;
    }
    if (month < 1 || month > 12 || day < 1 || day > days_in_month(year, month) || hour > 23 || minute > 59 ||
        second > 59) {
        return 0;
    }
    s += 19;
    long fraction = 0;
    if (*s == '.') {
        s++;
        int count = 0;
        long scale = 100000000L;
        while (isdigit((unsigned char)*s)) {
            if (count < 9) fraction += (*s - '0') * scale;
            scale /= 10;
            count++;
            s++;
        }
        if (count == 0) return 0;
    }
    long long offset = 0;
    if (*s == 'Z' || *s == 'z') {
        s++;
    } else if (*s == '+' || *s == '-') {
        int oh, om;
        if (!digits(s + 1, 2, &oh) || s[3] != ':' || !digits(s + 4, 2, &om) || oh > 23 || om > 59) return 0;
        offset = (oh * 3600LL + om * 60LL) * (*s == '-' ? -1 : 1);
        s += 6;
    } else {
        return 0;
    }
    if (*s != '\0') return 0;
    *seconds = days_from_civil(year, (unsigned)month, (unsigned)day) * 86400LL + hour * 3600LL + minute * 60LL +
               second - offset;
    *nanoseconds = fraction;
    return 1;
}

/* Whether two times are at most `tol` seconds apart, counted in whole nanoseconds
 * (the tolerance rounded half away from zero; 2^63 ns or more accepts any time). */
static int times_within(long long es, long ens, long long as, long ans, double tol) {
    double limit = round(tol * 1e9);
    if (limit >= 9223372036854775808.0) return 1;
    long long ds = as - es, dn = ans - ens;
    if (ds < 0 || (ds == 0 && dn < 0)) {
        ds = -ds;
        dn = -dn;
    }
    if (ds > 10000000000LL) return 0; /* over 1e19 ns apart */
    unsigned long long diff = (unsigned long long)ds * 1000000000ULL;
    diff = dn >= 0 ? diff + (unsigned long long)dn : diff - (unsigned long long)(-dn);
    return diff <= (unsigned long long)limit;
}

/* ---------------------------------------------------------------------------
 * Checking an expectation
 * ------------------------------------------------------------------------- */

static const char *const operator_names[] = {"$contains", "$len", "$any", "$absent", "$approx",
                                             "$time", "$tol", "$match", "$not"};

/* "malformed expectation: where: problem [value]". */
static cm_result bad(cu_buf *why, const char *path, const char *problem, const json_t *value) {
    if (why) {
        cu_buf_clear(why);
        cu_buf_printf(why, "malformed expectation: %s: %s", show_path(path), problem);
        if (value) cu_buf_append_json(why, value, CU_SHOW_MAX);
    }
    return CM_BAD;
}

static int is_count(const json_t *v) {
    return is_number(v) && json_number_value(v) >= 0 && json_number_value(v) == floor(json_number_value(v));
}

/* `m}`, `m,}` or `m,n}` from `p` (just after `{`), m <= n <= 255: the character after `}`, or
 * NULL. */
static const char *bounds(const char *p) {
    long m = 0, n = 0;
    int digits = 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (++digits > 3) return NULL;
        m = m * 10 + (*p - '0');
    }
    if (!digits || m > 255) return NULL;
    if (*p == '}') return p + 1;
    if (*p++ != ',') return NULL;
    if (*p == '}') return p + 1;
    digits = 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (++digits > 3) return NULL;
        n = n * 10 + (*p - '0');
    }
    if (!digits || n > 255 || n < m || *p != '}') return NULL;
    return p + 1;
}

/* Whether a $match pattern keeps to the regular expressions the three runners read alike (the
 * runner cases' README): literals, `.`, `[...]` and `[^...]` (ASCII ranges, `-` first or last;
 * no `\`, `[`, `&&` or `--` inside, no `:` first), `*`, `+`, `?`, `{m}`, `{m,}`, `{m,n}`
 * (m <= n <= 255) after something to repeat, `|` between non-empty alternatives, non-empty
 * `(...)`, `^`, `$`, and `\` before a special character. The Swift runner's RegexSubset and the Python runner's
 * _within_shared_subset hold the same rules. Bytes, not characters: no rule looks at a byte of
 * a multi-byte character but the ASCII test of a range's ends. */
static int within_shared_subset(const char *p) {
    static const char special[] = ".[]()*+?{}|^$\\";
    int depth = 0, quantifiable = 0, branch_empty = 1, last_bar = 0;
    while (*p) {
        char c = *p;
        if (c == '\\') {
            if (!p[1] || !strchr(special, p[1])) return 0;
            p += 2;
            quantifiable = 1, branch_empty = 0, last_bar = 0;
        } else if (c == '[') {
            const char *j = p + 1;
            if (*j == ':') return 0; /* ICU reads [:alpha:] as a property */
            if (*j == '^') j++;
            const char *start = j;
            int items = 0;
            while (*j && *j != ']') {
                unsigned char ch = (unsigned char)*j;
                /* ICU reads && and -- in brackets as set operations. */
                if (ch == '\\' || ch == '[' || ((ch == '&' || ch == '-') && j[1] == (char)ch)) return 0;
                if (j[1] == '-' && j[2] && j[2] != ']') {
                    unsigned char hi = (unsigned char)j[2];
                    if (ch >= 0x80 || hi >= 0x80 || ch == '-' || hi == '-' || hi == '\\' || hi == '[' || hi < ch) return 0;
                    j += 3;
                } else {
                    if (ch == '-' && j != start && j[1] && j[1] != ']') return 0;
                    j++;
                }
                items++;
            }
            if (!*j || !items) return 0;
            p = j + 1;
            quantifiable = 1, branch_empty = 0, last_bar = 0;
        } else if (c == '(') {
            if (p[1] == ')') return 0;
            depth++;
            p++;
            quantifiable = 0, branch_empty = 1, last_bar = 0;
        } else if (c == ')') {
            if (!depth || branch_empty) return 0;
            depth--;
            p++;
            quantifiable = 1, branch_empty = 0, last_bar = 0;
        } else if (c == '|') {
            if (branch_empty) return 0;
            p++;
            quantifiable = 0, branch_empty = 1, last_bar = 1;
        } else if (c == '*' || c == '+' || c == '?') {
            if (!quantifiable) return 0;
            p++;
            quantifiable = 0;
        } else if (c == '{') {
            const char *end = quantifiable ? bounds(p + 1) : NULL;
            if (!end) return 0;
            p = end;
            quantifiable = 0;
        } else if (c == '}' || c == ']') {
            return 0;
        } else if (c == '^' || c == '$') {
            p++;
            quantifiable = 0, branch_empty = 0, last_bar = 0;
        } else {
            p++;
            quantifiable = 1, branch_empty = 0, last_bar = 0;
        }
    }
    return depth == 0 && !last_bar;
}

static int regex_compiles(const char *pattern) {
    regex_t regex;
    if (regcomp(&regex, pattern, REG_EXTENDED | REG_NOSUB) != 0) return 0;
    regfree(&regex);
    return 1;
}

static cm_result check_at(const json_t *expect, const char *path, cu_buf *why);

static cm_result check_operator(const json_t *expect, const char *path, cu_buf *why) {
    const char *key;
    json_t *arg;
    json_object_foreach((json_t *)expect, key, arg) {
        int found = 0;
        for (size_t i = 0; i < sizeof operator_names / sizeof operator_names[0]; i++) {
            if (strcmp(key, operator_names[i]) == 0) found = 1;
        }
        if (!found) {
            cu_buf problem = {0};
            cu_buf_printf(&problem, "unknown operator %s", key);
            cm_result r = bad(why, path, cu_buf_text(&problem), NULL);
            cu_buf_free(&problem);
            return r;
        }
    }
    if (json_object_get(expect, "$tol") && !json_object_get(expect, "$approx") && !json_object_get(expect, "$time")) {
        return bad(why, path, "$tol needs $approx or $time", NULL);
    }
    json_object_foreach((json_t *)expect, key, arg) {
        if (strcmp(key, "$any") == 0 || strcmp(key, "$absent") == 0) {
            if (!json_is_true(arg)) {
                cu_buf problem = {0};
                cu_buf_printf(&problem, "%s takes only true, not ", key);
                cm_result r = bad(why, path, cu_buf_text(&problem), arg);
                cu_buf_free(&problem);
                return r;
            }
        } else if (strcmp(key, "$len") == 0) {
            if (!is_count(arg)) return bad(why, path, "$len takes a non-negative integer, not ", arg);
        } else if (strcmp(key, "$approx") == 0) {
            if (!is_number(arg)) return bad(why, path, "$approx takes a number, not ", arg);
        } else if (strcmp(key, "$tol") == 0) {
            if (!is_number(arg) || json_number_value(arg) < 0) {
                return bad(why, path, "$tol takes a non-negative number, not ", arg);
            }
        } else if (strcmp(key, "$time") == 0) {
            long long s;
            long ns;
            if (!json_is_string(arg) || !cm_parse_time(json_string_value(arg), &s, &ns)) {
                return bad(why, path, "$time takes an RFC 3339 timestamp, not ", arg);
            }
        } else if (strcmp(key, "$match") == 0) {
            if (!json_is_string(arg)) return bad(why, path, "$match takes a string, not ", arg);
            if (!within_shared_subset(json_string_value(arg))) {
                return bad(why, path, "$match takes a regular expression of the runners' shared subset, not ", arg);
            }
            if (!regex_compiles(json_string_value(arg))) {
                return bad(why, path, "$match takes a valid regular expression, not ", arg);
            }
        } else if (strcmp(key, "$not") == 0) {
            char *inner = child_key_path(path, "$not");
            cm_result r = check_at(arg, inner, why);
            free(inner);
            if (r != CM_MATCH) return r;
        } else if (strcmp(key, "$contains") == 0) {
            if (!json_is_array(arg)) return bad(why, path, "$contains takes an array, not ", arg);
            char *items = child_key_path(path, "$contains");
            size_t index;
            json_t *item;
            cm_result r = CM_MATCH;
            json_array_foreach(arg, index, item) {
                char *item_path = child_index_path(items, index);
                r = check_at(item, item_path, why);
                free(item_path);
                if (r != CM_MATCH) break;
            }
            free(items);
            if (r != CM_MATCH) return r;
        }
    }
    return CM_MATCH;
}

static cm_result check_at(const json_t *expect, const char *path, cu_buf *why) {
    if (cm_is_operator(expect)) return check_operator(expect, path, why);
    if (json_is_object(expect)) {
        const char *key;
        json_t *member;
        json_object_foreach((json_t *)expect, key, member) {
            char *member_path = child_key_path(path, key);
            cm_result r = check_at(member, member_path, why);
            free(member_path);
            if (r != CM_MATCH) return r;
        }
    } else if (json_is_array(expect)) {
        size_t index;
        json_t *element;
        json_array_foreach(expect, index, element) {
            char *element_path = child_index_path(path, index);
            cm_result r = check_at(element, element_path, why);
            free(element_path);
            if (r != CM_MATCH) return r;
        }
    }
    return CM_MATCH;
}

cm_result cm_check(const json_t *expect, cu_buf *why) { return check_at(expect, "", why); }

/* ---------------------------------------------------------------------------
 * Operators (on a checked expectation)
 * ------------------------------------------------------------------------- */

static cm_result match_contains(const json_t *expect, const json_t *items, const json_t *actual, const char *path,
                                cu_buf *why);

/* Tolerance of $approx / $time: `$tol` when present, else `fallback`. */
static double tolerance(const json_t *expect, double fallback) {
    const json_t *tol = json_object_get(expect, "$tol");
    return tol ? json_number_value(tol) : fallback;
}

static cm_result match_operator(const json_t *expect, const json_t *actual, const char *path, cu_buf *why) {
    const char *key;
    json_t *arg;

    /* Every operator of the object must hold, in written order. */
    json_object_foreach((json_t *)expect, key, arg) {
        if (strcmp(key, "$tol") == 0) continue;

        if (strcmp(key, "$absent") == 0) {
            if (actual && !json_is_null(actual)) return mismatch(why, path, expect, actual, NULL);
            continue;
        }
        if (strcmp(key, "$not") == 0) {
            if (cm_match(arg, actual, path, NULL) == CM_MATCH) return mismatch(why, path, expect, actual, NULL);
            continue;
        }

        /* The other operators need a value. */
        if (!actual) return mismatch(why, path, expect, actual, NULL);

        if (strcmp(key, "$any") == 0) continue;
        if (strcmp(key, "$contains") == 0) {
            cm_result r = match_contains(expect, arg, actual, path, why);
            if (r != CM_MATCH) return r;
        } else if (strcmp(key, "$len") == 0) {
            size_t length;
            if (json_is_array(actual)) length = json_array_size(actual);
            else if (json_is_object(actual)) length = json_object_size(actual);
            else if (json_is_string(actual))
                length = cu_utf8_length(json_string_value(actual), json_string_length(actual));
            else return mismatch(why, path, expect, actual, "not an array, object or string");
            if ((double)length != json_number_value(arg)) {
                char note[64];
                snprintf(note, sizeof note, "length %zu", length);
                return mismatch(why, path, expect, actual, note);
            }
        } else if (strcmp(key, "$approx") == 0) {
            if (!is_number(actual)) return mismatch(why, path, expect, actual, "not a number");
            double tol = tolerance(expect, 1e-9);
            double x = json_number_value(arg), a = json_number_value(actual);
            double limit = x == 0 ? tol : tol * fabs(x);
            if (!(fabs(a - x) <= limit)) return mismatch(why, path, expect, actual, NULL);
        } else if (strcmp(key, "$time") == 0) {
            long long es, as;
            long ens, ans;
            cm_parse_time(json_string_value(arg), &es, &ens);
            if (!json_is_string(actual) || !cm_parse_time(json_string_value(actual), &as, &ans)) {
                return mismatch(why, path, expect, actual, "not an RFC 3339 timestamp");
            }
            if (!times_within(es, ens, as, ans, tolerance(expect, 0))) return mismatch(why, path, expect, actual, NULL);
        } else if (strcmp(key, "$match") == 0) {
            if (!json_is_string(actual)) return mismatch(why, path, expect, actual, "not a string");
            regex_t regex;
            if (regcomp(&regex, json_string_value(arg), REG_EXTENDED | REG_NOSUB) != 0) {
                return bad(why, path, "$match takes a valid regular expression, not ", arg);
            }
            int matched = regexec(&regex, json_string_value(actual), 0, NULL, 0) == 0;
            regfree(&regex);
            if (!matched) return mismatch(why, path, expect, actual, NULL);
        }
    }
    return CM_MATCH;
}

/* ---------------------------------------------------------------------------
 * $contains: each item matches a different element (bipartite matching)
 * ------------------------------------------------------------------------- */

typedef struct assignment {
    size_t items, elements;
    const unsigned char *fits; /* fits[i * elements + j]: item i matches element j */
    long *owner;               /* owner[j]: the item holding element j, or -1 */
    unsigned char *seen;
} assignment;

/* Kuhn's augmenting path: finds an element for item i, moving others if needed. */
static int assign(assignment *a, size_t i) {
    for (size_t j = 0; j < a->elements; j++) {
        if (!a->fits[i * a->elements + j] || a->seen[j]) continue;
        a->seen[j] = 1;
        if (a->owner[j] < 0 || assign(a, (size_t)a->owner[j])) {
            a->owner[j] = (long)i;
            return 1;
        }
    }
    return 0;
}

static cm_result match_contains(const json_t *expect, const json_t *items, const json_t *actual, const char *path,
                                cu_buf *why) {
    if (!json_is_array(actual)) return mismatch(why, path, expect, actual, "not an array");
    size_t n = json_array_size(items), m = json_array_size(actual);
    unsigned char *fits = cu_xmalloc(n * m + 1);
    cm_result result = CM_MATCH;

    for (size_t i = 0; i < n && result == CM_MATCH; i++) {
        size_t candidates = 0;
        for (size_t j = 0; j < m; j++) {
            fits[i * m + j] = cm_match(json_array_get(items, i), json_array_get(actual, j), "", NULL) == CM_MATCH;
            candidates += fits[i * m + j];
        }
        if (candidates == 0) {
            char note[64];
            snprintf(note, sizeof note, "no element matches $contains[%zu]", i);
            result = mismatch(why, path, expect, actual, note);
        }
    }

    if (result == CM_MATCH && n > 0) {
        long *owner = cu_xmalloc(m * sizeof *owner + 1);
        unsigned char *seen = cu_xmalloc(m + 1);
        for (size_t j = 0; j < m; j++) owner[j] = -1;
        assignment a = {n, m, fits, owner, seen};
        for (size_t i = 0; i < n && result == CM_MATCH; i++) {
            memset(seen, 0, m + 1);
            if (!assign(&a, i)) result = mismatch(why, path, expect, actual, "no distinct element for each item");
        }
        free(owner);
        free(seen);
    }
    free(fits);
    return result;
}

/* ---------------------------------------------------------------------------
 * Plain values
 * ------------------------------------------------------------------------- */

cm_result cm_match(const json_t *expect, const json_t *actual, const char *path, cu_buf *why) {
    if (cm_is_operator(expect)) return match_operator(expect, actual, path, why);
    if (!actual) return mismatch(why, path, expect, actual, NULL);

    switch (json_typeof(expect)) {
    case JSON_OBJECT: {
        if (!json_is_object(actual)) return mismatch(why, path, expect, actual, NULL);
        const char *key;
        json_t *member;
        json_object_foreach((json_t *)expect, key, member) {
            char *member_path = child_key_path(path, key);
            cm_result r = cm_match(member, json_object_get(actual, key), member_path, why);
            free(member_path);
            if (r != CM_MATCH) return r;
        }
        return CM_MATCH;
    }
    case JSON_ARRAY: {
        if (!json_is_array(actual)) return mismatch(why, path, expect, actual, NULL);
        if (json_array_size(expect) != json_array_size(actual)) {
            char note[80];
            snprintf(note, sizeof note, "expected %zu elements, got %zu", json_array_size(expect),
                     json_array_size(actual));
            return mismatch(why, path, expect, actual, note);
        }
        for (size_t i = 0; i < json_array_size(expect); i++) {
            char *element_path = child_index_path(path, i);
            cm_result r = cm_match(json_array_get(expect, i), json_array_get(actual, i), element_path, why);
            free(element_path);
            if (r != CM_MATCH) return r;
        }
        return CM_MATCH;
    }
    case JSON_INTEGER:
    case JSON_REAL:
        if (is_number(actual) && numbers_equal(expect, actual)) return CM_MATCH;
        return mismatch(why, path, expect, actual, NULL);
    case JSON_STRING:
        if (json_is_string(actual) && json_string_length(actual) == json_string_length(expect) &&
            memcmp(json_string_value(actual), json_string_value(expect), json_string_length(expect)) == 0) {
            return CM_MATCH;
        }
        return mismatch(why, path, expect, actual, NULL);
    case JSON_TRUE:
    case JSON_FALSE:
    case JSON_NULL:
        if (json_typeof(actual) == json_typeof(expect)) return CM_MATCH;
        return mismatch(why, path, expect, actual, NULL);
    }
    return mismatch(why, path, expect, actual, NULL);
}
