/*
 * conformance_match.h -- matching an `expect` value against an outcome, as
 * shared/conformance/FORMAT.md defines it.
 *
 *  - Objects match when every key of the expectation matches the same key of the
 *    outcome (other keys are ignored); arrays match element-wise with the same
 *    length; numbers numerically (1 matches 1.0; booleans are not numbers); other
 *    scalars by equality.
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
 * Matches `expect` against `actual`. `actual` is NULL when the value is absent
 * (a key missing from its object). `path` names the value in messages
 * ("result.nodes[0].state"; "" for the outcome itself). On CM_MISMATCH or
 * CM_BAD, `why` (if not NULL) receives one line such as
 *   result.nodes[0].state: expected "queuedRemote", got "ready"
 */
cm_result cm_match(const json_t *expect, const json_t *actual, const char *path, cu_buf *why);

/* True when `value` is an operator object: non-empty, every key starting with '$'. */
int cm_is_operator(const json_t *value);

/* Parses an RFC 3339 timestamp into seconds since 1970 and nanoseconds. Returns 1 on success. */
int cm_parse_time(const char *text, long long *seconds, long *nanoseconds);

#endif
