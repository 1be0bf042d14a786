/* conformance_subst.c -- see conformance_subst.h. */
#include "conformance_subst.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

const json_t *cs_resolve(const json_t *root, const char *path) {
    const json_t *current = root;
    const char *p = path;
    while (*p && current) {
        if (*p == '[') {
            char *end;
            if (!isdigit((unsigned char)p[1])) return NULL;
            unsigned long long index = strtoull(p + 1, &end, 10);
            if (*end != ']') return NULL;
            current = json_is_array(current) && index < json_array_size(current)
                          ? json_array_get(current, (size_t)index)
                          : NULL;
            p = end + 1;
            continue;
        }
        /* A key: at the start, or after '.'. */
        if (*p == '.' && p != path) p++;
        else if (p != path) return NULL;
        size_t length = strcspn(p, ".[]");
        if (length == 0) return NULL;
        char *key = cu_xmalloc(length + 1);
        memcpy(key, p, length);
        key[length] = '\0';
        current = json_is_object(current) ? json_object_get(current, key) : NULL;
        free(key);
        p += length;
    }
    return *path ? current : NULL;
}

/* Finds the next "${name}" from `from` (a name is one or more characters other than '}';
 * "${}" is plain text): sets start/end (end just past '}'). */
static int next_reference(const char *from, const char **start, const char **end) {
    for (const char *open = strstr(from, "${"); open; open = strstr(open, "${")) {
        const char *close = strchr(open + 2, '}');
        if (!close) return 0;
        if (close > open + 2) {
            *start = open;
            *end = close + 1;
            return 1;
        }
        open = close + 1;
    }
    return 0;
}

/* The saved value named by the reference [start, end); NULL (and why) when unknown. */
static const json_t *lookup(const json_t *saved, const char *start, const char *end, cu_buf *why) {
    size_t length = (size_t)(end - start) - 3;
    char *name = cu_xmalloc(length + 1);
    memcpy(name, start + 2, length);
    name[length] = '\0';
    const json_t *value = json_object_get(saved, name);
    if (!value) cu_buf_printf(why, "unknown saved name '%s'", name);
    free(name);
    return value;
}

static json_t *substitute_string(const json_t *value, const json_t *saved, cu_buf *why) {
    const char *text = json_string_value(value);
    const char *start, *end;
    if (!next_reference(text, &start, &end)) return cu_check_json(json_deep_copy(value));

    /* Exactly "${name}": the saved value itself, with its type. */
    if (start == text && *end == '\0') {
        const json_t *found = lookup(saved, start, end, why);
        return found ? cu_check_json(json_deep_copy(found)) : NULL;
    }

    cu_buf out = {0};
    const char *cursor = text;
    while (next_reference(cursor, &start, &end)) {
        cu_buf_append_n(&out, cursor, (size_t)(start - cursor));
        const json_t *found = lookup(saved, start, end, why);
        if (!found) {
            cu_buf_free(&out);
            return NULL;
        }
        if (json_is_string(found)) cu_buf_append_n(&out, json_string_value(found), json_string_length(found));
        else cu_buf_append_json(&out, found, 0);
        cursor = end;
    }
    cu_buf_append(&out, cursor);
    json_t *result = cu_check_json(json_stringn(cu_buf_text(&out), out.length));
    cu_buf_free(&out);
    return result;
}

json_t *cs_substitute(const json_t *value, const json_t *saved, cu_buf *why) {
    switch (json_typeof(value)) {
    case JSON_STRING:
        return substitute_string(value, saved, why);
    case JSON_ARRAY: {
        json_t *copy = cu_check_json(json_array());
        size_t index;
        json_t *element;
        json_array_foreach(value, index, element) {
            json_t *replaced = cs_substitute(element, saved, why);
            if (!replaced) {
                json_decref(copy);
                return NULL;
            }
            json_array_append_new(copy, replaced);
        }
        return copy;
    }
    case JSON_OBJECT: {
        json_t *copy = cu_check_json(json_object());
        const char *key;
        json_t *member;
        json_object_foreach((json_t *)value, key, member) {
            json_t *replaced = cs_substitute(member, saved, why);
            if (!replaced) {
                json_decref(copy);
                return NULL;
            }
            json_object_set_new(copy, key, replaced);
        }
        return copy;
    }
    default:
        return cu_check_json(json_deep_copy(value));
    }
}
