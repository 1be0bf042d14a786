/*
 * conformance_match.h -- matching an `expect` value against an outcome, as
 * shared/conformance/FORMAT.md defines it and Tests/Conformance/runner-cases/README.md
 * settles it (the rules and the wording every runner shares).
 *
 *  - Objects match when every key of the expectation matches the same key of the
 *    outcome (other keys are ignored); arrays match element-wise with the same
 *    length; numbers numerically (1 matches 1.0; booleans are not numbers); strings
 *    by their exact bytes (code points); true, false and null themselves.
 *  - Operators are objects whose keys all start with '$': $contains, $len, $any,
 *    $absent, $approx (+$tol), $time (+$tol), $match, $not.
 */
#ifndef WF_CONFORMANCE_MATCH_H
#define WF_CONFORMANCE_MATCH_H

#include "conformance_util.h"

#include <jansson.h>

typedef enum cm_result {
    CM_MATCH = 1,     /* the value matches */
    CM_MISMATCH = 0,  /* it does not; the reason was written */
    CM_BAD = -1       /* the expectation itself is malformed (unknown operator, bad regex, ...) */
} cm_result;

/*
 * Checks that `expect` is well formed everywhere: under $not, inside $contains
 * items, whatever the outcome holds. Returns CM_MATCH, or CM_BAD with `why`
 * (if not NULL) set to one line such as
 *   malformed expectation: result.now.$not: unknown operator $bogus
 */
cm_result cm_check(const json_t *expect, cu_buf *why);

/*
 * Matches a checked `expect` against `actual`. `actual` is NULL when the value is
 * absent (a key missing from its object). `path` names the value in messages
 * ("result.nodes[0].state"; "" for the outcome itself). On CM_MISMATCH, `why`
 * (if not NULL) receives one line such as
 *   result.nodes[0].state: expected "queuedRemote", got "ready"
 */
cm_result cm_match(const json_t *expect, const json_t *actual, const char *path, cu_buf *why);

/* True when `value` is an operator object: non-empty, every key starting with '$'. */
int cm_is_operator(const json_t *value);

/* Parses an RFC 3339 timestamp into seconds since 1970 and nanoseconds. Returns 1 on success. */
int cm_parse_time(const char *text, long long *seconds, long *nanoseconds);

#endif
