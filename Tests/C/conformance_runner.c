/*
 * wf-conformance-c -- replays conformance fixtures through the C interface.
 *
 *   wf-conformance-c [--verbose] PATH...
 *
 * Each PATH is a fixture file or a folder (every *.json below it, recursively,
 * sorted by path). Every fixture runs on a fresh engine opened with
 * wf_engine_open() and driven with wf_call() (json_t in, json_t out), as
 * shared/conformance/FORMAT.md defines. Prints one line per fixture,
 * "PASS name" or "FAIL name: step N (op): what differed", then
 * "N passed, N failed". Exits 0 only when nothing failed (1 otherwise,
 * 2 for a usage error).
 */
#define _XOPEN_SOURCE 700
#include "conformance_match.h"
#include "conformance_subst.h"
#include "conformance_util.h"
#include "workflow.h"

#include <dirent.h>
#include <errno.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int verbose;

/* ---------------------------------------------------------------------------
 * Finding fixtures
 * ------------------------------------------------------------------------- */

/* A fixture to run, or a path that could not be read (error set). */
typedef struct path_entry {
    char *path;
    char *error;
} path_entry;

typedef struct path_list {
    path_entry *items;
    size_t count, capacity;
} path_list;

static void paths_add(path_list *list, const char *path, const char *error) {
    if (list->count == list->capacity) {
        list->capacity = list->capacity ? list->capacity * 2 : 16;
        list->items = cu_xrealloc(list->items, list->capacity * sizeof *list->items);
    }
    list->items[list->count].path = cu_xstrdup(path);
    list->items[list->count].error = error ? cu_xstrdup(error) : NULL;
    list->count++;
}

static void paths_free(path_list *list) {
    for (size_t i = 0; i < list->count; i++) {
        free(list->items[i].path);
        free(list->items[i].error);
    }
    free(list->items);
    list->items = NULL;
    list->count = list->capacity = 0;
}

static int compare_paths(const void *a, const void *b) {
    return strcmp(((const path_entry *)a)->path, ((const path_entry *)b)->path);
}

static int has_json_suffix(const char *name) {
    size_t length = strlen(name);
    return length > 5 && strcmp(name + length - 5, ".json") == 0;
}

/* Every *.json below `folder`. Returns 0 and sets errno when the folder cannot be read. */
static int collect_folder(const char *folder, path_list *out) {
    DIR *dir = opendir(folder);
    if (!dir) return 0;
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL) {
        if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0) continue;
        cu_buf child = {0};
        size_t length = strlen(folder);
        cu_buf_printf(&child, "%s%s%s", folder, length && folder[length - 1] == '/' ? "" : "/", entry->d_name);
        struct stat info;
        if (stat(cu_buf_text(&child), &info) == 0) {
            if (S_ISDIR(info.st_mode)) collect_folder(cu_buf_text(&child), out);
            else if (S_ISREG(info.st_mode) && has_json_suffix(entry->d_name)) paths_add(out, cu_buf_text(&child), NULL);
        }
        cu_buf_free(&child);
    }
    closedir(dir);
    return 1;
}

/* ---------------------------------------------------------------------------
 * Running one fixture
 * ------------------------------------------------------------------------- */

/* Engines abandoned by {"reopen": "crash"}: never freed, as a killed process would leave them. */
static wf_engine **abandoned;
static size_t abandoned_count;

static void abandon(wf_engine *engine) {
    abandoned = cu_xrealloc(abandoned, (abandoned_count + 1) * sizeof *abandoned);
    abandoned[abandoned_count++] = engine;
}

/* "WF_ENOTFOUND unknownTemplate: no template 'x'": the calling thread's last error. */
static void describe_error(cu_buf *out, int status) {
    const wf_error *error = wf_error_last();
    cu_buf_printf(out, "%s %s: %s", wf_status_name(status), error->code, error->message);
}

/* A JSON string of library text; text that is not UTF-8 is kept byte for byte. */
static json_t *text_value(const char *text) {
    json_t *value = json_string(text ? text : "");
    return value ? value : cu_check_json(json_stringn_nocheck(text, strlen(text)));
}

/* The outcome of an op, as FORMAT.md defines it. Takes the result reference. */
static json_t *make_outcome(int status, json_t *result) {
    json_t *outcome = cu_check_json(json_object());
    if (status == WF_OK) {
        json_object_set_new(outcome, "ok", json_true());
        json_object_set_new(outcome, "result", result ? result : json_null());
        return outcome;
    }
    json_decref(result);
    const wf_error *error = wf_error_last();
    json_t *described = cu_check_json(json_object());
    json_object_set_new(described, "status", cu_check_json(json_integer(status)));
    json_object_set_new(described, "code", text_value(error->code));
    json_object_set_new(described, "message", text_value(error->message));
    json_object_set_new(described, "details",
                        cu_check_json(error->details ? json_deep_copy(error->details) : json_object()));
    json_object_set_new(outcome, "ok", json_false());
    json_object_set_new(outcome, "error", described);
    return outcome;
}

/* ---------------------------------------------------------------------------
 * Reading a fixture: everything is checked before the first step runs, so a
 * typo ("expct") can never make a check silently disappear.
 * ------------------------------------------------------------------------- */

static int only_keys(const json_t *object, const char *const *allowed, size_t count, const char **unknown) {
    const char *key;
    json_t *value;
    json_object_foreach((json_t *)object, key, value) {
        (void)value;
        size_t i = 0;
        while (i < count && strcmp(key, allowed[i]) != 0) i++;
        if (i == count) {
            *unknown = key;
            return 0;
        }
    }
    return 1;
}

/* Checks a save path's grammar: member names (no '.', '[' or ']') separated by '.',
 * each followed by any number of [digits]. */
static int valid_save_path(const char *path) {
    const char *p = path;
    for (;;) {
        size_t name = strcspn(p, ".[]");
        if (name == 0) return 0;
        p += name;
        while (*p == '[') {
            size_t digits = strspn(p + 1, "0123456789");
            if (digits == 0 || p[1 + digits] != ']') return 0;
            p += digits + 2;
        }
        if (*p == '\0') return 1;
        if (*p != '.') return 0;
        p++;
    }
}

/* Returns 1 when the fixture has the shape of FORMAT.md; else writes why. */
static int check_fixture(const json_t *fixture, cu_buf *why) {
    static const char *const fixture_keys[] = {"name", "description", "engine", "steps"};
    static const char *const op_keys[] = {"op", "args", "expect", "save", "description"};
    static const char *const reopen_keys[] = {"reopen", "description"};
    const char *unknown = NULL;

    if (!json_is_object(fixture)) {
        cu_buf_append(why, "a fixture must be a JSON object");
        return 0;
    }
    if (!only_keys(fixture, fixture_keys, 4, &unknown)) {
        cu_buf_printf(why, "fixture has an unknown field '%s'", unknown);
        return 0;
    }
    const json_t *name = json_object_get(fixture, "name");
    if (!json_is_string(name) || json_string_length(name) == 0) {
        cu_buf_append(why, "fixture.name must be a non-empty string");
        return 0;
    }
    const json_t *description = json_object_get(fixture, "description");
    if (description && !json_is_string(description) && !json_is_null(description)) {
        cu_buf_append(why, "fixture.description must be a string");
        return 0;
    }
    const json_t *engine = json_object_get(fixture, "engine");
    if (engine && !json_is_object(engine) && !json_is_null(engine)) {
        cu_buf_append(why, "fixture.engine must be an object");
        return 0;
    }
    const json_t *steps = json_object_get(fixture, "steps");
    if (!json_is_array(steps)) {
        cu_buf_append(why, "fixture.steps must be an array");
        return 0;
    }

    size_t index;
    json_t *step;
    json_array_foreach(steps, index, step) {
        size_t number = index + 1;
        if (!json_is_object(step)) {
            cu_buf_printf(why, "step %zu must be an object", number);
            return 0;
        }
        const json_t *reopen = json_object_get(step, "reopen");
        if (reopen) {
            if (!only_keys(step, reopen_keys, 2, &unknown)) {
                cu_buf_printf(why, "step %zu has an unknown field '%s'", number, unknown);
                return 0;
            }
            const char *mode = json_string_value(reopen);
            if (!mode || (strcmp(mode, "clean") != 0 && strcmp(mode, "crash") != 0)) {
                cu_buf_printf(why, "step %zu: reopen must be \"clean\" or \"crash\"", number);
                return 0;
            }
            continue;
        }
        if (!only_keys(step, op_keys, 5, &unknown)) {
            cu_buf_printf(why, "step %zu has an unknown field '%s'", number, unknown);
            return 0;
        }
        const json_t *op = json_object_get(step, "op");
        if (!json_is_string(op) || json_string_length(op) == 0) {
            cu_buf_printf(why, "step %zu: op must be a non-empty string (or the step a reopen)", number);
            return 0;
        }
        const json_t *args = json_object_get(step, "args");
        if (args && !json_is_object(args) && !json_is_null(args)) {
            cu_buf_printf(why, "step %zu (%s): args must be an object", number, json_string_value(op));
            return 0;
        }
        const json_t *save = json_object_get(step, "save");
        if (save && !json_is_null(save)) {
            if (!json_is_object(save)) {
                cu_buf_printf(why, "step %zu (%s): save must be an object", number, json_string_value(op));
                return 0;
            }
            const char *save_name;
            json_t *path;
            json_object_foreach((json_t *)save, save_name, path) {
                if (!save_name[0] || !json_is_string(path)) {
                    cu_buf_printf(why, "step %zu (%s): save maps names to path strings", number, json_string_value(op));
                    return 0;
                }
                if (!valid_save_path(json_string_value(path))) {
                    cu_buf_printf(why, "step %zu (%s): save '%s': bad path '%s'", number, json_string_value(op),
                                  save_name, json_string_value(path));
                    return 0;
                }
            }
        }
    }
    return 1;
}

/* ---------------------------------------------------------------------------
 * Running a fixture
 * ------------------------------------------------------------------------- */

typedef struct fixture_run {
    json_t *config;   /* the engine config, with "$tempfile" replaced; NULL for defaults */
    char *store_path; /* the temp store, when "$tempfile" */
    wf_engine *engine;
    json_t *saved;    /* name -> saved value */
    cu_buf failure;   /* what went wrong, after "FAIL name: " */
} fixture_run;

static int make_temp_store(fixture_run *run) {
    const char *folder = getenv("TMPDIR");
    if (!folder || !*folder) folder = "/tmp";
    cu_buf path = {0};
    cu_buf_printf(&path, "%s/wf-conformance-c-XXXXXX", folder);
    int fd = mkstemp(path.data);
    if (fd < 0) {
        cu_buf_printf(&run->failure, "opening the engine: cannot create a temporary store in %s: %s", folder,
                      strerror(errno));
        cu_buf_free(&path);
        return 0;
    }
    close(fd);
    unlink(path.data); /* the engine creates it */
    run->store_path = path.data;
    return 1;
}

static void remove_temp_store(fixture_run *run) {
    if (!run->store_path) return;
    static const char *const suffixes[] = {"", "-wal", "-shm", "-journal"};
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        cu_buf file = {0};
        cu_buf_printf(&file, "%s%s", run->store_path, suffixes[i]);
        unlink(cu_buf_text(&file));
        cu_buf_free(&file);
    }
    free(run->store_path);
    run->store_path = NULL;
}

/* Opens run->engine; on failure appends "<context>WF_X code: message" to the failure. */
static int open_engine(fixture_run *run, const char *context) {
    int status = wf_engine_open(&run->engine, run->config);
    if (status != WF_OK) {
        cu_buf_append(&run->failure, context);
        describe_error(&run->failure, status);
        return 0;
    }
    return 1;
}

static int run_reopen(fixture_run *run, size_t number, const char *mode) {
    if (verbose) fprintf(stderr, "  step %zu: reopen %s\n", number, mode);
    if (strcmp(mode, "clean") == 0) wf_engine_free(run->engine);
    else abandon(run->engine);
    run->engine = NULL;
    cu_buf context = {0};
    cu_buf_printf(&context, "step %zu (reopen): reopening the engine: ", number);
    int opened = open_engine(run, cu_buf_text(&context));
    cu_buf_free(&context);
    return opened;
}

/* Judges the outcome of an op against `expect` (NULL: it must be ok). Returns 1 when it holds. */
static int judge(const json_t *outcome, const json_t *expect, int status, cu_buf *why) {
    int ok = status == WF_OK;
    if (!expect) {
        if (ok) return 1;
        cu_buf_append(why, "unexpected error ");
        describe_error(why, status);
        return 0;
    }
    /* A wrong "ok" says more than any detail under it: report it first, with the error or result. */
    const json_t *expected_ok = json_is_object(expect) ? json_object_get(expect, "ok") : NULL;
    if (json_is_boolean(expected_ok) && json_is_true(expected_ok) != ok) {
        if (!ok) {
            cu_buf_append(why, "ok: expected true, got false (");
            describe_error(why, status);
            cu_buf_append(why, ")");
        } else {
            cu_buf_append(why, "ok: expected false, got true (result ");
            cu_buf_append_json(why, json_object_get(outcome, "result"), 300);
            cu_buf_append(why, ")");
        }
        return 0;
    }
    return cm_match(expect, outcome, "", why) == CM_MATCH;
}

static int run_op(fixture_run *run, size_t number, const json_t *step) {
    const char *op = json_string_value(json_object_get(step, "op"));
    const json_t *args_in = json_object_get(step, "args");
    const json_t *expect_in = json_object_get(step, "expect");
    const json_t *save = json_object_get(step, "save");
    cu_buf why = {0};
    json_t *args = NULL, *expect = NULL, *outcome = NULL;
    int passed = 0;

    /* Substitute saved values into args and expect. */
    args = json_is_object(args_in) ? cs_substitute(args_in, run->saved, &why) : cu_check_json(json_object());
    if (!args) goto done;
    if (expect_in && !(expect = cs_substitute(expect_in, run->saved, &why))) goto done;

    json_t *result = NULL;
    int status = wf_call(&result, run->engine, op, args);
    outcome = make_outcome(status, result);
    if (verbose) {
        char *args_text = cu_json_compact(args), *outcome_text = cu_json_compact(outcome);
        fprintf(stderr, "  step %zu: %s %s\n    -> %s\n", number, op, args_text, outcome_text);
        free(args_text);
        free(outcome_text);
    }
    if (!judge(outcome, expect, status, &why)) goto done;

    /* Save values for later steps. */
    if (json_is_object(save)) {
        const char *name;
        json_t *path;
        json_object_foreach((json_t *)save, name, path) {
            const json_t *value = cs_resolve(outcome, json_string_value(path), &why);
            if (!value) goto done;
            json_object_set_new(run->saved, name, cu_check_json(json_deep_copy(value)));
        }
    }
    passed = 1;

done:
    if (!passed) cu_buf_printf(&run->failure, "step %zu (%s): %s", number, op, cu_buf_text(&why));
    cu_buf_free(&why);
    json_decref(outcome);
    json_decref(args);
    json_decref(expect);
    return passed;
}

/* The name a fixture that cannot be read is reported under: its file name without ".json". */
static char *fallback_name(const char *path) {
    const char *slash = strrchr(path, '/');
    char *name = cu_xstrdup(slash ? slash + 1 : path);
    if (has_json_suffix(name)) name[strlen(name) - 5] = '\0';
    return name;
}

/* Prints "FAIL name: what", with newlines of `what` written as \n to keep one line. */
static void print_fail(const char *name, const char *what) {
    printf("FAIL %s: ", name);
    for (const char *c = what; *c; c++) {
        if (*c == '\n') fputs("\\n", stdout);
        else if (*c != '\r') putchar(*c);
    }
    putchar('\n');
    fflush(stdout);
}

/* Runs the fixture in `path`; prints its PASS/FAIL line. Returns 1 when it passed. */
static int run_fixture(const char *path) {
    json_error_t parse_error;
    json_t *fixture = json_load_file(path, JSON_REJECT_DUPLICATES, &parse_error);
    cu_buf why = {0};
    if (!fixture) {
        char *name = fallback_name(path);
        cu_buf_printf(&why, "invalid fixture: %s: not JSON: %s (line %d, column %d)", path, parse_error.text,
                      parse_error.line, parse_error.column);
        print_fail(name, cu_buf_text(&why));
        cu_buf_free(&why);
        free(name);
        return 0;
    }
    if (!check_fixture(fixture, &why)) {
        char *name = fallback_name(path);
        cu_buf problem = {0};
        cu_buf_printf(&problem, "invalid fixture: %s: %s", path, cu_buf_text(&why));
        print_fail(name, cu_buf_text(&problem));
        cu_buf_free(&problem);
        cu_buf_free(&why);
        free(name);
        json_decref(fixture);
        return 0;
    }
    cu_buf_free(&why);

    const char *name = json_string_value(json_object_get(fixture, "name"));
    const json_t *engine = json_object_get(fixture, "engine");
    const json_t *steps = json_object_get(fixture, "steps");
    fixture_run run = {0};
    run.saved = cu_check_json(json_object());
    if (verbose) fprintf(stderr, "%s (%s)\n", name, path);

    int ready = 1;
    if (json_is_object(engine)) {
        run.config = cu_check_json(json_deep_copy(engine));
        const char *store = json_string_value(json_object_get(run.config, "store"));
        if (store && strcmp(store, "$tempfile") == 0) {
            ready = make_temp_store(&run);
            if (ready) json_object_set_new(run.config, "store", cu_check_json(json_string(run.store_path)));
        }
    }
    if (ready) ready = open_engine(&run, "opening the engine: ");
    for (size_t i = 0; ready && i < json_array_size(steps); i++) {
        const json_t *step = json_array_get(steps, i);
        const char *reopen = json_string_value(json_object_get(step, "reopen"));
        ready = reopen ? run_reopen(&run, i + 1, reopen) : run_op(&run, i + 1, step);
    }

    int passed = run.failure.length == 0;
    if (passed) {
        printf("PASS %s\n", name);
        fflush(stdout);
    } else {
        print_fail(name, cu_buf_text(&run.failure));
    }

    wf_engine_free(run.engine);
    remove_temp_store(&run);
    json_decref(run.config);
    json_decref(run.saved);
    cu_buf_free(&run.failure);
    json_decref(fixture);
    return passed;
}

/* ---------------------------------------------------------------------------
 * main
 * ------------------------------------------------------------------------- */

static void usage(FILE *out) {
    fprintf(out,
            "usage: wf-conformance-c [--verbose] PATH...\n"
            "Replays conformance fixtures (shared/conformance/FORMAT.md) through the C interface.\n"
            "PATH is a fixture file or a folder (every *.json below it, sorted by path).\n"
            "  --verbose, -v  print every step and its outcome on stderr\n");
}

int main(int argc, char **argv) {
    /* $match regexes see characters, not bytes: use a UTF-8 locale for regcomp/regexec. */
    if (!setlocale(LC_CTYPE, "C.UTF-8") && !setlocale(LC_CTYPE, "en_US.UTF-8")) setlocale(LC_CTYPE, "");

    path_list fixtures = {0};
    size_t passed = 0, failed = 0;
    int paths_given = 0;

    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            usage(stdout);
            return 0;
        }
        if (strcmp(arg, "--verbose") == 0 || strcmp(arg, "-v") == 0) {
            verbose = 1;
            continue;
        }
        if (arg[0] == '-' && arg[1] != '\0') {
            fprintf(stderr, "wf-conformance-c: unknown option %s\n", arg);
            usage(stderr);
            return 2;
        }
        paths_given = 1;
    }
    if (!paths_given) {
        usage(stderr);
        return 2;
    }

    /* Fixtures in argument order; a folder contributes its *.json sorted by path. A path
     * that cannot be read is listed too, and fails in its turn. */
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (arg[0] == '-' && arg[1] != '\0') continue;
        struct stat info;
        int readable = stat(arg, &info) == 0;
        path_list found = {0};
        if (readable && S_ISDIR(info.st_mode)) {
            readable = collect_folder(arg, &found);
            if (found.count > 1) qsort(found.items, found.count, sizeof *found.items, compare_paths);
        } else if (readable) {
            paths_add(&found, arg, NULL);
        }
        if (!readable) paths_add(&fixtures, arg, strerror(errno));
        for (size_t j = 0; j < found.count; j++) paths_add(&fixtures, found.items[j].path, NULL);
        paths_free(&found);
    }

    for (size_t i = 0; i < fixtures.count; i++) {
        const path_entry *entry = &fixtures.items[i];
        if (entry->error) {
            cu_buf why = {0};
            cu_buf_printf(&why, "invalid fixture: cannot read: %s", entry->error);
            print_fail(entry->path, cu_buf_text(&why));
            cu_buf_free(&why);
            failed++;
        } else if (run_fixture(entry->path)) {
            passed++;
        } else {
            failed++;
        }
    }
    printf("%zu passed, %zu failed\n", passed, failed);
    paths_free(&fixtures);
    /* The abandoned engines stay allocated until the process ends, by design. */
    return failed ? 1 : 0;
}
