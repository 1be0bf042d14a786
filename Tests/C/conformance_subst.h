/*
 * conformance_subst.h -- `save` paths and "${name}" substitution of
 * shared/conformance/FORMAT.md.
 */
#ifndef WF_CONFORMANCE_SUBST_H
#define WF_CONFORMANCE_SUBST_H

#include "conformance_util.h"

#include <jansson.h>

/*
 * Resolves a dotted path with [i] indexes ("result.effects[0].runId") inside
 * `root`. Returns a BORROWED value, or NULL when the path is malformed or
 * leads nowhere (a JSON null found there is a value).
 */
const json_t *cs_resolve(const json_t *root, const char *path);

/*
 * A copy of `value` (NEW reference) in which every string value, at any depth,
 * has its "${name}" references replaced from `saved` (an object of name ->
 * value): a string that is exactly "${name}" becomes the saved value with its
 * type; inside a longer string the value is spliced in as text (strings
 * verbatim, other values as compact JSON). Object keys are left alone; "${}"
 * and a "${" with no "}" after it are plain text.
 * Returns NULL, with "unknown saved name 'x'" in `why`, when a name was never saved.
 */
json_t *cs_substitute(const json_t *value, const json_t *saved, cu_buf *why);

#endif
