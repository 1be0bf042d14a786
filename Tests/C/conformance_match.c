/* conformance_match.c -- see conformance_match.h. */
#define _XOPEN_SOURCE 700
#include "conformance_match.h"

#include <ctype.h>
#include <math.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

/* Values in messages are cut after this many characters. */
#define SHOW_MAX 400

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

/* "path: expected E, got A" plus an optional reason in parentheses. */
static cm_result mismatch(cu_buf *why, const char *path, const json_t *expect, const json_t *actual,
                          const char *reason) {
    if (why) {
        cu_buf_clear(why);
        cu_buf_printf(why, "%s: expected ", show_path(path));
        cu_buf_append_json(why, expect, SHOW_MAX);
        cu_buf_append(why, ", got ");
        cu_buf_append_json(why, actual, SHOW_MAX);
        if (reason && reason[0]) cu_buf_printf(why, " (%s)", reason);
    }
    return CM_MISMATCH;
}

static cm_result bad(cu_buf *why, const char *path, const json_t *expect, const char *problem) {
    if (why) {
        cu_buf_clear(why);
        cu_buf_printf(why, "%s: malformed expectation ", show_path(path));
        cu_buf_append_json(why, expect, SHOW_MAX);
        cu_buf_printf(why, ": %s", problem);
    }
    return CM_BAD;
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

static int numbers_equal(const json_t *a, const json_t *b) {
    if (json_is_integer(a) && json_is_integer(b)) return json_integer_value(a) == json_integer_value(b);
    return json_number_value(a) == json_number_value(b);
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

static int digits(const char *s, int count, int *out) {
    int value = 0;
    for (int i = 0; i < count; i++) {
        if (!isdigit((unsigned char)s[i])) return 0;
        value = value * 10 + (s[i] - '0');
    }
    *out = value;
    return 1;
}

int cm_parse_time(const char *text, long long *seconds, long *nanoseconds) {
    int year, month, day, hour, minute, second;
    const char *s = text;
    if (!digits(s, 4, &year) || s[4] != '-' || !digits(s + 5, 2, &month) || s[7] != '-' ||
        !digits(s + 8, 2, &day) || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') || !digits(s + 11, 2, &hour) ||
        s[13] != ':' || !digits(s + 14, 2, &minute) || s[16] != ':' || !digits(s + 17, 2, &second)) {
        return 0;
    }
    if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return 0;
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

/* ---------------------------------------------------------------------------
 * Operators
 * ------------------------------------------------------------------------- */

static cm_result match_contains(const json_t *expect, const json_t *items, const json_t *actual, const char *path,
                                cu_buf *why);

/* Tolerance of $approx / $time: `$tol` when present, else `fallback`. */
static int tolerance(const json_t *expect, double fallback, double *out) {
    const json_t *tol = json_object_get(expect, "$tol");
    if (!tol) {
        *out = fallback;
        return 1;
    }
    if (!is_number(tol) || json_number_value(tol) < 0) return 0;
    *out = json_number_value(tol);
    return 1;
}

static cm_result match_operator(const json_t *expect, const json_t *actual, const char *path, cu_buf *why) {
    const char *key;
    json_t *arg;
    char reason[160];

    /* Check every key first, so a typo never passes silently. */
    json_object_foreach((json_t *)expect, key, arg) {
        static const char *const known[] = {"$contains", "$len", "$any", "$absent", "$approx",
                                            "$time", "$tol", "$match", "$not"};
        int found = 0;
        for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
            if (strcmp(key, known[i]) == 0) found = 1;
        }
        if (!found) {
            snprintf(reason, sizeof reason, "unknown operator %.100s", key);
            return bad(why, path, expect, reason);
        }
    }
    if (json_object_get(expect, "$tol") &&
        (json_object_get(expect, "$approx") != NULL) == (json_object_get(expect, "$time") != NULL)) {
        return bad(why, path, expect, "$tol goes with exactly one of $approx and $time");
    }

    /* Every operator of the object must hold. */
    json_object_foreach((json_t *)expect, key, arg) {
        if (strcmp(key, "$tol") == 0) continue;

        if (strcmp(key, "$absent") == 0) {
            /* true: missing or null; false: present and not null. */
            if (!json_is_boolean(arg)) return bad(why, path, expect, "$absent takes true or false");
            int is_absent = !actual || json_is_null(actual);
            if (is_absent != json_is_true(arg)) {
                return mismatch(why, path, expect, actual, is_absent ? "should be present" : "should be absent");
            }
            continue;
        }
        if (strcmp(key, "$not") == 0) {
            cm_result inner = cm_match(arg, actual, path, NULL);
            if (inner == CM_BAD) return cm_match(arg, actual, path, why);
            if (inner == CM_MATCH) return mismatch(why, path, expect, actual, "matches what it must not");
            continue;
        }
        if (strcmp(key, "$any") == 0) {
            if (!json_is_true(arg)) return bad(why, path, expect, "$any takes true");
            if (!actual) return mismatch(why, path, expect, actual, "should be present");
            continue;
        }

        /* The other operators need a value. */
        if (!actual) return mismatch(why, path, expect, actual, NULL);

        if (strcmp(key, "$contains") == 0) {
            if (!json_is_array(arg)) return bad(why, path, expect, "$contains takes an array");
            cm_result r = match_contains(expect, arg, actual, path, why);
            if (r != CM_MATCH) return r;
        } else if (strcmp(key, "$len") == 0) {
            if (!is_number(arg) || json_number_value(arg) < 0 ||
                json_number_value(arg) != floor(json_number_value(arg))) {
                return bad(why, path, expect, "$len takes a non-negative integer");
            }
            size_t length;
            if (json_is_array(actual)) length = json_array_size(actual);
            else if (json_is_object(actual)) length = json_object_size(actual);
            else if (json_is_string(actual))
                length = cu_utf8_length(json_string_value(actual), json_string_length(actual));
            else return mismatch(why, path, expect, actual, "not an array, object or string");
            if ((double)length != json_number_value(arg)) {
                snprintf(reason, sizeof reason, "length %zu", length);
                return mismatch(why, path, expect, actual, reason);
            }
        } else if (strcmp(key, "$approx") == 0) {
            double tol;
            if (!is_number(arg) || !tolerance(expect, 1e-9, &tol)) {
                return bad(why, path, expect, "$approx takes a number and $tol a non-negative number");
            }
            if (!is_number(actual)) return mismatch(why, path, expect, actual, "not a number");
            double x = json_number_value(arg), a = json_number_value(actual);
            double limit = x == 0 ? tol : tol * fabs(x);
            if (!(fabs(a - x) <= limit)) {
                snprintf(reason, sizeof reason, "off by %g, allowed %g", fabs(a - x), limit);
                return mismatch(why, path, expect, actual, reason);
            }
        } else if (strcmp(key, "$time") == 0) {
            double tol;
            long long es, as;
            long ens, ans;
            if (!json_is_string(arg) || !cm_parse_time(json_string_value(arg), &es, &ens) ||
                !tolerance(expect, 0, &tol)) {
                return bad(why, path, expect, "$time takes an RFC 3339 timestamp and $tol seconds");
            }
            if (!json_is_string(actual) || !cm_parse_time(json_string_value(actual), &as, &ans)) {
                return mismatch(why, path, expect, actual, "not an RFC 3339 timestamp");
            }
            /* Exact integer arithmetic in nanoseconds, so a difference of exactly $tol passes. */
            long long diff = (as - es) * 1000000000LL + (ans - ens);
            if (diff < 0) diff = -diff;
            long long limit = llround(tol * 1e9);
            if (diff > limit) {
                snprintf(reason, sizeof reason, "%.3f s apart, allowed %g s", (double)diff / 1e9, tol);
                return mismatch(why, path, expect, actual, reason);
            }
        } else if (strcmp(key, "$match") == 0) {
            if (!json_is_string(arg)) return bad(why, path, expect, "$match takes a regular expression string");
            regex_t regex;
            int rc = regcomp(&regex, json_string_value(arg), REG_EXTENDED | REG_NOSUB);
            if (rc != 0) {
                char message[120];
                regerror(rc, &regex, message, sizeof message);
                snprintf(reason, sizeof reason, "bad regular expression: %s", message);
                return bad(why, path, expect, reason);
            }
            int matched = json_is_string(actual) && regexec(&regex, json_string_value(actual), 0, NULL, 0) == 0;
            regfree(&regex);
            if (!matched) return mismatch(why, path, expect, actual, json_is_string(actual) ? NULL : "not a string");
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

/* How many keys of an object item match the element: used to name the closest element. */
static size_t closeness(const json_t *item, const json_t *element) {
    if (!json_is_object(item) || cm_is_operator(item) || !json_is_object(element)) return 0;
    size_t score = 0;
    const char *key;
    json_t *member;
    json_object_foreach((json_t *)item, key, member) {
        if (cm_match(member, json_object_get(element, key), "", NULL) == CM_MATCH) score++;
    }
    return score;
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
            char *element_path = child_index_path(path, j);
            cm_result r = cm_match(json_array_get(items, i), json_array_get(actual, j), element_path, NULL);
            if (r == CM_BAD) result = cm_match(json_array_get(items, i), json_array_get(actual, j), element_path, why);
            free(element_path);
            if (result == CM_BAD) break;
            fits[i * m + j] = r == CM_MATCH;
            candidates += r == CM_MATCH;
        }
        if (result != CM_MATCH || candidates > 0) continue;

        /* Item i matches nothing: explain with the closest element when there is one. */
        size_t best = 0, best_score = 0;
        for (size_t j = 0; j < m; j++) {
            size_t score = closeness(json_array_get(items, i), json_array_get(actual, j));
            if (score > best_score) {
                best = j;
                best_score = score;
            }
        }
        if (best_score > 0) {
            char *element_path = child_index_path(path, best);
            cm_match(json_array_get(items, i), json_array_get(actual, best), element_path, why);
            free(element_path);
            if (why) cu_buf_printf(why, " ($contains item %zu matches no element; closest is [%zu])", i + 1, best);
            result = CM_MISMATCH;
        } else {
            char reason[80];
            snprintf(reason, sizeof reason, "$contains item %zu matches no element", i + 1);
            result = mismatch(why, path, expect, actual, reason);
        }
    }

    if (result == CM_MATCH && n > 0) {
        long *owner = cu_xmalloc(m * sizeof *owner + 1);
        unsigned char *seen = cu_xmalloc(m + 1);
        for (size_t j = 0; j < m; j++) owner[j] = -1;
        assignment a = {n, m, fits, owner, seen};
        for (size_t i = 0; i < n && result == CM_MATCH; i++) {
            memset(seen, 0, m + 1);
            if (!assign(&a, i)) {
                result = mismatch(why, path, expect, actual,
                                  "the $contains items cannot each match a different element");
            }
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
        if (!json_is_object(actual)) return mismatch(why, path, expect, actual, "not an object");
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
        if (!json_is_array(actual)) return mismatch(why, path, expect, actual, "not an array");
        if (json_array_size(expect) != json_array_size(actual)) {
            char reason[80];
            snprintf(reason, sizeof reason, "%zu elements instead of %zu", json_array_size(actual),
                     json_array_size(expect));
            return mismatch(why, path, expect, actual, reason);
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
    return bad(why, path, expect, "unknown JSON type");
}
