/*
 * wf-conformance-c -- replays conformance fixtures through the C interface.
 *
 *   wf-conformance-c [--verbose] [--] PATH...
 *
 * Each PATH is a fixture file or a folder (every *.json below it, recursively);
 * all of them run in the order of their paths' bytes. Every fixture runs on a
 * fresh engine opened with wf_engine_open() and driven with wf_call() (json_t
 * in, json_t out), as shared/conformance/FORMAT.md defines and
 * Tests/Conformance/runner-cases/README.md settles (the rules and wording the
 * Swift and Python runners share). Prints one line per fixture, "PASS name" or
 * "FAIL name: step N (op): what differed", then "N passed, N failed". Exits 0
 * only when nothing failed (1 otherwise, 2 for a usage error such as a PATH
 * that does not exist).
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

/* The fixture files to run. */
typedef struct path_list {
    char **items;
    size_t count, capacity;
} path_list;

static void paths_add(path_list *list, const char *path) {
    if (list->count == list->capacity) {
        list->capacity = list->capacity ? list->capacity * 2 : 16;
        list->items = cu_xrealloc(list->items, list->capacity * sizeof *list->items);
    }
    list->items[list->count++] = cu_xstrdup(path);
}

static void paths_free(path_list *list) {
    for (size_t i = 0; i < list->count; i++) free(list->items[i]);
    free(list->items);
    list->items = NULL;
    list->count = list->capacity = 0;
}

/* strcmp compares as unsigned char: the order of the paths' UTF-8 bytes. */
static int compare_paths(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int has_json_suffix(const char *name) {
    size_t length = strlen(name);
    return length > 5 && strcmp(name + length - 5, ".json") == 0;
}

/* Every *.json file below `folder`, named "folder/relative/path". */
static void collect_folder(const char *folder, path_list *out) {
    DIR *dir = opendir(folder);
    if (!dir) return;
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL) {
        if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0) continue;
        cu_buf child = {0};
        size_t length = strlen(folder);
        cu_buf_printf(&child, "%s%s%s", folder, length && folder[length - 1] == '/' ? "" : "/", entry->d_name);
        struct stat info;
        if (stat(cu_buf_text(&child), &info) == 0) {
            if (S_ISDIR(info.st_mode)) collect_folder(cu_buf_text(&child), out);
            else if (S_ISREG(info.st_mode) && has_json_suffix(entry->d_name)) paths_add(out, cu_buf_text(&child));
        }
        cu_buf_free(&child);
    }
    closedir(dir);
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

/* "unknownTemplate: no template 'x'": the calling thread's last error. */
static void describe_error(cu_buf *out) {
    const wf_error *error = wf_error_last();
    cu_buf_printf(out, "%s: %s", error->code, error->message);
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

/* The fixture's name when it is a non-empty string, else NULL. */
static const char *fixture_name(const json_t *fixture) {
    const json_t *name = json_object_get(fixture, "name");
    return json_is_string(name) && json_string_length(name) > 0 ? json_string_value(name) : NULL;
}

/* Returns 1 when the fixture has the shape of FORMAT.md; else writes why (the checks
 * and their order are those of runner-cases/README.md, "Reading a fixture"). */
static int check_fixture(const json_t *fixture, cu_buf *why) {
    static const char *const fixture_keys[] = {"name", "description", "engine", "steps"};
    static const char *const op_keys[] = {"op", "args", "expect", "save", "description", "comment"};
    static const char *const reopen_keys[] = {"reopen", "description", "comment"};
    const char *unknown = NULL;

    if (!json_is_object(fixture)) {
        cu_buf_append(why, "a fixture must be a JSON object");
        return 0;
    }
    if (!only_keys(fixture, fixture_keys, 4, &unknown)) {
        cu_buf_printf(why, "unexpected key '%s'", unknown);
        return 0;
    }
    if (!fixture_name(fixture)) {
        cu_buf_append(why, "name must be a non-empty string");
        return 0;
    }
    const json_t *description = json_object_get(fixture, "description");
    if (description && !json_is_string(description)) {
        cu_buf_append(why, "description must be a string");
        return 0;
    }
    const json_t *engine = json_object_get(fixture, "engine");
    if (engine && !json_is_object(engine)) {
        cu_buf_append(why, "engine must be an object");
        return 0;
    }
    const json_t *steps = json_object_get(fixture, "steps");
    if (!json_is_array(steps)) {
        cu_buf_append(why, "steps must be an array");
        return 0;
    }

    size_t index;
    json_t *step;
    json_array_foreach(steps, index, step) {
        size_t number = index + 1;
        if (!json_is_object(step)) {
            cu_buf_printf(why, "step %zu: must be an object", number);
            return 0;
        }
        const json_t *op = json_object_get(step, "op");
        const json_t *reopen = json_object_get(step, "reopen");
        if (!op == !reopen) {
            cu_buf_printf(why, "step %zu: needs exactly one of 'op' and 'reopen'", number);
            return 0;
        }
        if (reopen ? !only_keys(step, reopen_keys, 3, &unknown) : !only_keys(step, op_keys, 6, &unknown)) {
            cu_buf_printf(why, "step %zu: unexpected key '%s'", number, unknown);
            return 0;
        }
        if (op && (!json_is_string(op) || json_string_length(op) == 0)) {
            cu_buf_printf(why, "step %zu: op must be a non-empty string", number);
            return 0;
        }
        const char *mode = json_string_value(reopen);
        if (reopen && (!mode || (strcmp(mode, "clean") != 0 && strcmp(mode, "crash") != 0))) {
            cu_buf_printf(why, "step %zu: reopen must be \"clean\" or \"crash\"", number);
            return 0;
        }
        static const char *const texts[] = {"description", "comment"};
        for (size_t i = 0; i < 2; i++) {
            const json_t *text = json_object_get(step, texts[i]);
            if (text && !json_is_string(text)) {
                cu_buf_printf(why, "step %zu: %s must be a string", number, texts[i]);
                return 0;
            }
        }
        const json_t *save = json_object_get(step, "save");
        if (!save) continue;
        if (!json_is_object(save)) {
            cu_buf_printf(why, "step %zu: save must be an object", number);
            return 0;
        }
        const char *save_name;
        json_t *path;
        json_object_foreach((json_t *)save, save_name, path) {
            if (!save_name[0]) {
                cu_buf_printf(why, "step %zu: save names must be non-empty", number);
                return 0;
            }
            if (!json_is_string(path)) {
                cu_buf_printf(why, "step %zu: save '%s' must be a path string", number, save_name);
                return 0;
            }
            if (!valid_save_path(json_string_value(path))) {
                cu_buf_printf(why, "step %zu: save '%s': bad path '%s'", number, save_name, json_string_value(path));
                return 0;
            }
        }
    }
    return 1;
}

/* ---------------------------------------------------------------------------
 * Running a fixture
 * ------------------------------------------------------------------------- */

typedef struct fixture_run {
    json_t *config;   /* the engine config ({} when the fixture names none), "$tempfile" replaced */
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
    static const char *const suffixes[] = {
        "", "-wal", "-shm", "-journal", "-wfjournal"};
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        cu_buf file = {0};
        cu_buf_printf(&file, "%s%s", run->store_path, suffixes[i]);
        unlink(cu_buf_text(&file));
        cu_buf_free(&file);
    }
    free(run->store_path);
    run->store_path = NULL;
}

/* Opens run->engine; on failure appends "<context>code: message" to the failure. */
static int open_engine(fixture_run *run, const char *context) {
    int status = wf_engine_open(&run->engine, run->config);
    if (status != WF_OK) {
        cu_buf_append(&run->failure, context);
        describe_error(&run->failure);
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

/* Judges the outcome of an op against a checked `expect` (NULL: it must be ok).
 * Returns 1 when it holds. */
static int judge(const json_t *outcome, const json_t *expect, int status, cu_buf *why) {
    int ok = status == WF_OK;
    if (!expect) {
        if (ok) return 1;
        cu_buf_append(why, "unexpected error ");
        describe_error(why);
        return 0;
    }
    /* A wrong "ok" says more than any detail under it: report it first, with the error or result. */
    const json_t *expected_ok = json_is_object(expect) ? json_object_get(expect, "ok") : NULL;
    if (json_is_boolean(expected_ok) && json_is_true(expected_ok) != ok) {
        if (!ok) {
            cu_buf_append(why, "ok: expected true, got false (");
            describe_error(why);
            cu_buf_append(why, ")");
        } else {
            cu_buf_append(why, "ok: expected false, got true (result ");
            cu_buf_append_json(why, json_object_get(outcome, "result"), CU_SHOW_MAX);
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

    /* Substitute saved values into args and expect; args absent or null is {}, any other
     * non-object goes to the engine as it is. */
    if (!args_in || json_is_null(args_in)) args = cu_check_json(json_object());
    else if (!(args = cs_substitute(args_in, run->saved, &why))) goto done;
    if (json_is_null(args)) {
        json_decref(args);
        args = cu_check_json(json_object());
    }
    if (expect_in && !(expect = cs_substitute(expect_in, run->saved, &why))) goto done;
    if (expect && cm_check(expect, &why) != CM_MATCH) goto done;

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
            const json_t *value = cs_resolve(outcome, json_string_value(path));
            if (!value) {
                cu_buf_printf(&why, "save '%s': %s is not in the outcome", name, json_string_value(path));
                goto done;
            }
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

/* Writes text to stdout with line feeds as \n and carriage returns as \r, so each
 * fixture takes exactly one line. */
static void put_escaped(const char *text) {
    for (const char *c = text; *c; c++) {
        if (*c == '\n') fputs("\\n", stdout);
        else if (*c == '\r') fputs("\\r", stdout);
        else putchar(*c);
    }
}

/* Prints "PASS name" (what NULL) or "FAIL name: what". */
static void print_line(const char *name, const char *what) {
    fputs(what ? "FAIL " : "PASS ", stdout);
    put_escaped(name);
    if (what) {
        fputs(": ", stdout);
        put_escaped(what);
    }
    putchar('\n');
    fflush(stdout);
}

/* The deepest nesting of arrays and objects a fixture may have, its own object the first level
 * (the engine's JSON parser's limit, which the Swift runner uses). */
#define FIXTURE_MAX_DEPTH 512

/* How deep arrays and objects nest in `value` (a scalar: 0). */
static size_t nesting_depth(const json_t *value) {
    size_t deepest = 0, i;
    const char *key;
    json_t *member;
    if (json_is_array(value)) {
        json_array_foreach((json_t *)value, i, member) {
            size_t d = nesting_depth(member);
            if (d > deepest) deepest = d;
        }
        return deepest + 1;
    }
    if (json_is_object(value)) {
        json_object_foreach((json_t *)value, key, member) {
            size_t d = nesting_depth(member);
            if (d > deepest) deepest = d;
        }
        return deepest + 1;
    }
    return 0;
}

/* Runs the fixture in `path`; prints its PASS/FAIL line. Returns 1 when it passed. */
static int run_fixture(const char *path) {
    cu_buf why = {0};
    FILE *file = fopen(path, "rb");
    if (!file) {
        print_line(path, "invalid fixture: cannot read the file");
        return 0;
    }
    json_error_t parse_error;
    /* A repeated key keeps its last value, as in the Swift and Python parsers. */
    json_t *fixture = json_loadf(file, JSON_DECODE_ANY, &parse_error);
    fclose(file);
    if (!fixture) {
        cu_buf_printf(&why, "invalid fixture: not JSON: %s (line %d, column %d)", parse_error.text,
                      parse_error.line, parse_error.column);
        print_line(path, cu_buf_text(&why));
        cu_buf_free(&why);
        return 0;
    }
    if (nesting_depth(fixture) > FIXTURE_MAX_DEPTH) {
        print_line(path, "invalid fixture: not JSON: nesting deeper than 512");
        json_decref(fixture);
        return 0;
    }
    cu_buf_append(&why, "invalid fixture: ");
    if (!check_fixture(fixture, &why)) {
        /* Shown under its name when it has one, else under its path. */
        const char *shown = json_is_object(fixture) && fixture_name(fixture) ? fixture_name(fixture) : path;
        print_line(shown, cu_buf_text(&why));
        cu_buf_free(&why);
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
    run.config = cu_check_json(engine ? json_deep_copy(engine) : json_object());
    const char *store = json_string_value(json_object_get(run.config, "store"));
    if (store && strcmp(store, "$tempfile") == 0) {
        ready = make_temp_store(&run);
        if (ready) json_object_set_new(run.config, "store", cu_check_json(json_string(run.store_path)));
    }
    if (ready) ready = open_engine(&run, "opening the engine: ");
    for (size_t i = 0; ready && i < json_array_size(steps); i++) {
        const json_t *step = json_array_get(steps, i);
        const char *reopen = json_string_value(json_object_get(step, "reopen"));
        ready = reopen ? run_reopen(&run, i + 1, reopen) : run_op(&run, i + 1, step);
    }

    int passed = run.failure.length == 0;
    print_line(name, passed ? NULL : cu_buf_text(&run.failure));

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
            "usage: wf-conformance-c [--verbose] [--] PATH...\n"
            "Replays conformance fixtures (shared/conformance/FORMAT.md) through the C interface.\n"
            "PATH is a fixture file or a folder (every *.json below it); all run sorted by path.\n"
            "  --verbose, -v  print every step and its outcome on stderr\n");
}

int main(int argc, char **argv) {
    /* $match regexes see characters, not bytes: use a UTF-8 locale for regcomp/regexec. */
    if (!setlocale(LC_CTYPE, "C.UTF-8") && !setlocale(LC_CTYPE, "en_US.UTF-8")) setlocale(LC_CTYPE, "");

    path_list fixtures = {0};
    size_t passed = 0, failed = 0;

    /* Options may stand anywhere before "--", which ends them: every argument after it is a
     * PATH, even one that starts with '-'. */
    const char **paths = calloc((size_t)argc, sizeof *paths);
    size_t path_count = 0;
    int options_over = 0;
    if (!paths) return 1;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (!options_over) {
            if (strcmp(arg, "--") == 0) {
                options_over = 1;
                continue;
            }
            if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
                usage(stdout);
                free(paths);
                return 0;
            }
            if (strcmp(arg, "--verbose") == 0 || strcmp(arg, "-v") == 0) {
                verbose = 1;
                continue;
            }
            if (arg[0] == '-' && arg[1] != '\0') {
                fprintf(stderr, "wf-conformance-c: unknown option %s\n", arg);
                usage(stderr);
                free(paths);
                return 2;
            }
        }
        paths[path_count++] = arg;
    }
    if (path_count == 0) {
        usage(stderr);
        free(paths);
        return 2;
    }

    /* Every fixture of every PATH, sorted by path. A PATH that does not exist is a
     * usage error: nothing runs. */
    for (size_t i = 0; i < path_count; i++) {
        const char *arg = paths[i];
        struct stat info;
        if (stat(arg, &info) != 0) {
            fprintf(stderr, "wf-conformance-c: no such file or folder: %s\n", arg);
            usage(stderr);
            paths_free(&fixtures);
            free(paths);
            return 2;
        }
        if (S_ISDIR(info.st_mode)) collect_folder(arg, &fixtures);
        else paths_add(&fixtures, arg);
    }
    free(paths);
    if (fixtures.count > 1) qsort(fixtures.items, fixtures.count, sizeof *fixtures.items, compare_paths);

    for (size_t i = 0; i < fixtures.count; i++) {
        if (run_fixture(fixtures.items[i])) passed++;
        else failed++;
    }
    printf("%zu passed, %zu failed\n", passed, failed);
    paths_free(&fixtures);
    /* The abandoned engines stay allocated until the process ends, by design. */
    return failed ? 1 : 0;
}
