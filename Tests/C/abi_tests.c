/*
 * abi_tests.c -- tests of the C interface (include/workflow.h) through the
 * shared library, with a small self-contained harness.
 *
 *   abi_tests              run every test
 *   abi_tests NAME...      run the named tests
 *   abi_tests --list       list the tests
 *
 * Every test prints what it checks, one line per check ("ok" or "FAIL"), and
 * the program exits non-zero when any check failed. CMake registers one ctest
 * per entry of the ABI_TESTS table at the bottom.
 */
#define _XOPEN_SOURCE 700
#include "workflow.h"

#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <math.h>
#include <stdint.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------------------
 * Harness
 * ------------------------------------------------------------------------- */

static int checks_failed;

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static int check_at(int ok, const char *file, int line, const char *format, ...) {
    va_list args;
    va_start(args, format);
    printf("  %s ", ok ? "ok  " : "FAIL");
    vprintf(format, args);
    va_end(args);
    if (!ok) {
        printf("  [%s:%d]", file, line);
        checks_failed++;
    }
    printf("\n");
    return ok;
}

/* CHECK(condition, "what is checked", ...): prints the check, counts a failure. */
#define CHECK(cond, ...) check_at((cond) ? 1 : 0, __FILE__, __LINE__, __VA_ARGS__)

static int str_eq(const char *a, const char *b) { return a && b && strcmp(a, b) == 0; }
static int str_has(const char *haystack, const char *needle) { return haystack && needle && strstr(haystack, needle); }
static const char *or_null(const char *s) { return s ? s : "(null)"; }

/* A recognisable non-NULL value to preset out-parameters with. */
static char sentinel_storage;
#define SENTINEL_JSON ((json_t *)(void *)&sentinel_storage)
#define SENTINEL_TEXT ((char *)&sentinel_storage)
#define SENTINEL_ENGINE ((wf_engine *)(void *)&sentinel_storage)

static const char *const manual_clock_config =
    "{\"clock\": {\"mode\": \"manual\", \"start\": \"2026-01-01T00:00:00.000Z\"}}";

static json_t *parse(const char *text) {
    json_error_t error;
    json_t *value = json_loads(text, JSON_DECODE_ANY, &error);
    if (!value) {
        fprintf(stderr, "test bug: cannot parse %s: %s\n", text, error.text);
        abort();
    }
    return value;
}

/* An in-memory engine with a manual clock at 2026-01-01T00:00:00.000Z. */
static wf_engine *open_manual_engine(void) {
    wf_engine *engine = NULL;
    json_t *config = parse(manual_clock_config);
    int rc = wf_engine_open(&engine, config);
    json_decref(config);
    if (rc != WF_OK || !engine) {
        fprintf(stderr, "cannot open an engine: %d %s\n", rc, wf_error_last()->message);
        abort();
    }
    return engine;
}

/* wf_call with arguments given as JSON text (NULL for no arguments). */
static int call(json_t **result, wf_engine *engine, const char *op, const char *args_text) {
    json_t *args = args_text ? parse(args_text) : NULL;
    int rc = wf_call(result, engine, op, args);
    json_decref(args);
    return rc;
}

/* Checks status, code and (optionally) message text and details.argument of the last error. */
static void check_error(int rc, int status, const char *code, const char *message_part, const char *argument) {
    const wf_error *e = wf_error_last();
    CHECK(rc == status, "returns %s (got %s, %d)", wf_status_name(status), wf_status_name(rc), rc);
    CHECK(e->status == status, "wf_error_last()->status is %d (got %d)", status, e->status);
    if (code) CHECK(str_eq(e->code, code), "code is \"%s\" (got \"%s\")", code, or_null(e->code));
    else CHECK(e->code && e->code[0] && !str_eq(e->code, "ok"), "code names the condition (got \"%s\")", or_null(e->code));
    if (message_part)
        CHECK(str_has(e->message, message_part), "message mentions \"%s\" (got \"%s\")", message_part, or_null(e->message));
    else CHECK(e->message && e->message[0], "message is a sentence (got \"%s\")", or_null(e->message));
    if (argument) {
        const char *actual = json_string_value(json_object_get(e->details, "argument"));
        CHECK(str_eq(actual, argument), "details.argument is \"%s\" (got %s)", argument, or_null(actual));
    }
}

static void check_ok_record(const char *when) {
    const wf_error *e = wf_error_last();
    CHECK(e != NULL, "wf_error_last() is not NULL %s", when);
    if (!e) return;
    CHECK(e->status == WF_OK, "record status is WF_OK %s (got %d)", when, e->status);
    CHECK(str_eq(e->code, "ok"), "record code is \"ok\" %s (got \"%s\")", when, or_null(e->code));
    CHECK(str_eq(e->message, ""), "record message is \"\" %s (got \"%s\")", when, or_null(e->message));
    CHECK(json_is_object(e->details) && json_object_size(e->details) == 0, "record details is {} %s", when);
    CHECK(str_eq(e->details_json, "{}"), "record details_json is \"{}\" %s (got %s)", when, or_null(e->details_json));
}

/* A fresh temporary folder (for file stores); remove with remove_tree(). */
static char *make_temp_folder(void) {
    char *path = strdup("/tmp/wf-abi-tests-XXXXXX");
    if (!path || !mkdtemp(path)) {
        perror("mkdtemp");
        abort();
    }
    return path;
}

static void remove_store_files(const char *folder, const char *name) {
    static const char *const suffixes[] = {
        "", "-wal", "-shm", "-journal", "-wfjournal"};
    char path[4096];
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        snprintf(path, sizeof path, "%s/%s%s", folder, name, suffixes[i]);
        unlink(path);
    }
}

/* ---------------------------------------------------------------------------
 * Status codes
 * ------------------------------------------------------------------------- */

static void test_ok_status(void) {
    wf_engine *engine = open_manual_engine();
    json_t *result = SENTINEL_JSON;
    int rc = call(&result, engine, "clock.now", "{}");
    CHECK(rc == WF_OK, "clock.now returns WF_OK (got %d)", rc);
    CHECK(json_is_object(result), "the result is a JSON object");
    CHECK(str_eq(json_string_value(json_object_get(result, "now")), "2026-01-01T00:00:00.000Z"),
          "result.now is the manual start time");
    check_ok_record("after a success");
    json_decref(result);

    char *text = SENTINEL_TEXT;
    rc = wf_call_text(&text, engine, "clock.now", "{}");
    CHECK(rc == WF_OK, "wf_call_text clock.now returns WF_OK (got %d)", rc);
    CHECK(str_eq(text, "{\"now\":\"2026-01-01T00:00:00.000Z\"}"), "wf_call_text returns compact JSON text (got %s)",
          text == SENTINEL_TEXT ? "the untouched out-param" : or_null(text));
    if (text != SENTINEL_TEXT) wf_free(text);
    wf_engine_free(engine);
}

static void test_invalid_null_out(void) {
    json_t *config = parse(manual_clock_config);
    int rc = wf_engine_open(NULL, config);
    printf("wf_engine_open(NULL, config):\n");
    check_error(rc, WF_EINVALID, NULL, "out", "out");
    rc = wf_engine_open_text(NULL, manual_clock_config);
    printf("wf_engine_open_text(NULL, config):\n");
    check_error(rc, WF_EINVALID, NULL, "out", "out");
    json_decref(config);
}

static void test_invalid_null_engine(void) {
    json_t *result = SENTINEL_JSON;
    int rc = wf_call(&result, NULL, "clock.now", NULL);
    printf("wf_call with a NULL engine:\n");
    check_error(rc, WF_EINVALID, NULL, "engine", "engine");
    CHECK(result == NULL, "the result out-param is set to NULL");
    char *text = SENTINEL_TEXT;
    rc = wf_call_text(&text, NULL, "clock.now", NULL);
    printf("wf_call_text with a NULL engine:\n");
    check_error(rc, WF_EINVALID, NULL, "engine", "engine");
    CHECK(text == NULL, "the text out-param is set to NULL");
}

static void test_invalid_null_op(void) {
    wf_engine *engine = open_manual_engine();
    json_t *result = SENTINEL_JSON;
    int rc = wf_call(&result, engine, NULL, NULL);
    printf("wf_call with a NULL op:\n");
    check_error(rc, WF_EINVALID, NULL, "op", "op");
    CHECK(result == NULL, "the result out-param is set to NULL");
    char *text = SENTINEL_TEXT;
    rc = wf_call_text(&text, engine, NULL, "{}");
    printf("wf_call_text with a NULL op:\n");
    check_error(rc, WF_EINVALID, NULL, "op", "op");
    CHECK(text == NULL, "the text out-param is set to NULL");
    wf_engine_free(engine);
}

static void test_invalid_empty_op(void) {
    wf_engine *engine = open_manual_engine();
    json_t *result = SENTINEL_JSON;
    int rc = wf_call(&result, engine, "", NULL);
    printf("wf_call with an empty op:\n");
    check_error(rc, WF_EINVALID, NULL, "op", "op");
    CHECK(result == NULL, "the result out-param is set to NULL");
    wf_engine_free(engine);
}

static void test_invalid_op_utf8(void) {
    static const char *const bad_ops[] = {
        "clock.\xff\xfe",      /* bytes that never occur in UTF-8 */
        "\xc0\xaf.clock",      /* an overlong encoding of '/' */
        "clock.now\xe2\x82",   /* a truncated sequence */
        "\xed\xa0\x80.op",     /* an encoded surrogate */
    };
    wf_engine *engine = open_manual_engine();
    for (size_t i = 0; i < sizeof bad_ops / sizeof bad_ops[0]; i++) {
        json_t *result = SENTINEL_JSON;
        int rc = wf_call(&result, engine, bad_ops[i], NULL);
        printf("wf_call with op of invalid UTF-8 #%zu:\n", i + 1);
        check_error(rc, WF_EINVALID, NULL, "op", "op");
        CHECK(result == NULL, "the result out-param is set to NULL");
    }
    wf_engine_free(engine);
}

static void test_invalid_args_utf8(void) {
    wf_engine *engine = open_manual_engine();
    json_t *args = json_object();
    json_object_set_new(args, "templateId", json_stringn_nocheck("tpl-\xff", 5));
    json_t *result = SENTINEL_JSON;
    int rc = wf_call(&result, engine, "template.get", args);
    printf("wf_call with a json string argument of invalid UTF-8:\n");
    check_error(rc, WF_EINVALID, NULL, "templateId", NULL);
    CHECK(result == NULL, "the result out-param is set to NULL");
    json_decref(args);

    rc = wf_call_text(NULL, engine, "template.get", "{\"templateId\": \"tpl-\xff\"}");
    printf("wf_call_text with args text of invalid UTF-8:\n");
    check_error(rc, WF_EINVALID, NULL, "args_json", "args_json");
    wf_engine_free(engine);
}

static void test_invalid_malformed_json_text(void) {
    static const char *const bad_texts[] = {"{", "{\"seconds\": }", "{} trailing", "", "{'a': 1}", "{\"a\": 1,}"};
    wf_engine *engine = open_manual_engine();
    for (size_t i = 0; i < sizeof bad_texts / sizeof bad_texts[0]; i++) {
        char *text = SENTINEL_TEXT;
        int rc = wf_call_text(&text, engine, "clock.now", bad_texts[i]);
        printf("wf_call_text with args_json '%s':\n", bad_texts[i]);
        check_error(rc, WF_EINVALID, NULL, "args_json", "args_json");
        CHECK(text == NULL, "the text out-param is set to NULL");
    }
    wf_engine *opened = SENTINEL_ENGINE;
    int rc = wf_engine_open_text(&opened, "{\"clock\": ");
    printf("wf_engine_open_text with malformed config_json:\n");
    check_error(rc, WF_EINVALID, NULL, "config_json", "config_json");
    CHECK(opened == NULL, "the engine out-param is set to NULL");
    wf_engine_free(engine);
}

static void test_invalid_non_object_args(void) {
    wf_engine *engine = open_manual_engine();
    json_t *values[] = {json_pack("[i]", 1), json_string("x"), json_integer(3), json_true()};
    const char *names[] = {"an array", "a string", "an integer", "true"};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        json_t *result = SENTINEL_JSON;
        int rc = wf_call(&result, engine, "clock.now", values[i]);
        printf("wf_call with args that are %s:\n", names[i]);
        check_error(rc, WF_EINVALID, NULL, "args", "args");
        CHECK(result == NULL, "the result out-param is set to NULL");
        json_decref(values[i]);
    }
    static const char *const texts[] = {"[1]", "\"x\"", "3", "true"};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        char *text = SENTINEL_TEXT;
        int rc = wf_call_text(&text, engine, "clock.now", texts[i]);
        printf("wf_call_text with args_json %s:\n", texts[i]);
        check_error(rc, WF_EINVALID, NULL, "args_json", "args_json");
        CHECK(text == NULL, "the text out-param is set to NULL");
    }
    /* NULL and a JSON null both mean {} (the header says so). */
    json_t *null_args = json_null();
    json_t *result = NULL;
    CHECK(wf_call(&result, engine, "clock.now", null_args) == WF_OK, "a json null for args means {}");
    json_decref(result);
    json_decref(null_args);
    char *text = NULL;
    CHECK(wf_call_text(&text, engine, "clock.now", "null") == WF_OK, "\"null\" args_json means {}");
    wf_free(text);
    wf_engine_free(engine);
}

static void test_invalid_deep_nesting(void) {
    wf_engine *engine = open_manual_engine();
    json_t *root = json_object(), *level = root;
    for (int i = 0; i < 5000; i++) {
        json_t *child = json_object();
        json_object_set_new(level, "a", child);
        level = child;
    }
    json_t *result = SENTINEL_JSON;
    int rc = wf_call(&result, engine, "clock.now", root);
    printf("wf_call with args nested 5000 levels deep:\n");
    check_error(rc, WF_EINVALID, NULL, NULL, NULL);
    CHECK(result == NULL, "the result out-param is set to NULL");
    json_decref(root);

    size_t depth = 100000;
    char *text = malloc(2 * depth + 8);
    char *p = text;
    p += sprintf(p, "{\"a\":");
    memset(p, '[', depth);
    memset(p + depth, ']', depth);
    strcpy(p + 2 * depth, "}");
    char *out = SENTINEL_TEXT;
    rc = wf_call_text(&out, engine, "clock.now", text);
    printf("wf_call_text with args_json nested 100000 levels deep:\n");
    check_error(rc, WF_EINVALID, NULL, "args_json", "args_json");
    CHECK(out == NULL, "the text out-param is set to NULL");
    free(text);
    wf_engine_free(engine);
}

static void test_invalid_argument_type(void) {
    wf_engine *engine = open_manual_engine();
    json_t *result = SENTINEL_JSON;
    int rc = call(&result, engine, "clock.advance", "{\"seconds\": \"ten\"}");
    printf("clock.advance {seconds: \"ten\"}:\n");
    check_error(rc, WF_EINVALID, NULL, "seconds", "seconds");
    CHECK(result == NULL, "the result out-param is set to NULL");

    rc = call(&result, engine, "template.get", "{\"templateId\": 42}");
    printf("template.get {templateId: 42}:\n");
    check_error(rc, WF_EINVALID, NULL, "templateId", "templateId");

    rc = call(&result, engine, "template.get", "{}");
    printf("template.get {} (a required argument missing):\n");
    check_error(rc, WF_EINVALID, NULL, "templateId", "templateId");

    rc = call(&result, engine, "clock.now", NULL);
    CHECK(rc == WF_OK && str_eq(json_string_value(json_object_get(result, "now")), "2026-01-01T00:00:00.000Z"),
          "the failed calls changed nothing: the clock still reads the start time");
    json_decref(result);
    wf_engine_free(engine);
}

static void test_invalid_config(void) {
    static const char *const bad_configs[] = {
        "{\"bogus\": 1}",
        "{\"seed\": \"seven\"}",
        "{\"clock\": {\"mode\": \"sundial\"}}",
        "{\"clock\": {\"mode\": \"manual\", \"start\": \"yesterday\"}}",
        "[1]",
    };
    static const char *const named[] = {"bogus", "seed", "clock", "clock", "config"};
    for (size_t i = 0; i < sizeof bad_configs / sizeof bad_configs[0]; i++) {
        json_t *config = parse(bad_configs[i]);
        wf_engine *engine = SENTINEL_ENGINE;
        int rc = wf_engine_open(&engine, config);
        printf("wf_engine_open with config %s:\n", bad_configs[i]);
        check_error(rc, WF_EINVALID, NULL, named[i], NULL);
        CHECK(engine == NULL, "the engine out-param is set to NULL");
        if (rc == WF_OK && engine != SENTINEL_ENGINE) wf_engine_free(engine);
        json_decref(config);
    }
}

static void test_notfound_template(void) {
    wf_engine *engine = open_manual_engine();
    json_t *result = SENTINEL_JSON;
    int rc = call(&result, engine, "template.get", "{\"templateId\": \"tpl-does-not-exist\"}");
    printf("template.get of an unknown id:\n");
    check_error(rc, WF_ENOTFOUND, NULL, "tpl-does-not-exist", NULL);
    CHECK(result == NULL, "the result out-param is set to NULL");
    rc = call(NULL, engine, "template.export", "{\"templateId\": \"tpl-does-not-exist\"}");
    printf("template.export of an unknown id:\n");
    check_error(rc, WF_ENOTFOUND, NULL, "tpl-does-not-exist", NULL);
    wf_engine_free(engine);
}

static void test_state_clock_advance_system(void) {
    wf_engine *engine = NULL;
    int rc = wf_engine_open_text(&engine, "{\"clock\": {\"mode\": \"system\"}}");
    CHECK(rc == WF_OK && engine, "a system-clock engine opens");
    json_t *result = SENTINEL_JSON;
    rc = call(&result, engine, "clock.advance", "{\"seconds\": 5}");
    printf("clock.advance on a system-clock engine:\n");
    check_error(rc, WF_ESTATE, NULL, NULL, NULL);
    CHECK(result == NULL, "the result out-param is set to NULL");
    wf_engine_free(engine);
}

/* Two separate cycles a <-> b and c <-> d: two errors, both cycleDetected. */
static const char *const two_cycles_template =
    "{\"template\": {\"schema\": \"app.workflow/v2\", \"name\": \"two cycles\", \"nodes\": ["
    "{\"id\": \"a\", \"kind\": \"Pass\", \"inputs\": {\"in\": \"ImageRef\"}, \"outputs\": {\"out\": \"ImageRef\"}},"
    "{\"id\": \"b\", \"kind\": \"Pass\", \"inputs\": {\"in\": \"ImageRef\"}, \"outputs\": {\"out\": \"ImageRef\"}},"
    "{\"id\": \"c\", \"kind\": \"Pass\", \"inputs\": {\"in\": \"ImageRef\"}, \"outputs\": {\"out\": \"ImageRef\"}},"
    "{\"id\": \"d\", \"kind\": \"Pass\", \"inputs\": {\"in\": \"ImageRef\"}, \"outputs\": {\"out\": \"ImageRef\"}}],"
    "\"edges\": ["
    "{\"from\": [\"a\", \"out\"], \"to\": [\"b\", \"in\"]}, {\"from\": [\"b\", \"out\"], \"to\": [\"a\", \"in\"]},"
    "{\"from\": [\"c\", \"out\"], \"to\": [\"d\", \"in\"]}, {\"from\": [\"d\", \"out\"], \"to\": [\"c\", \"in\"]}]}}";

/* A cycle a <-> b plus a port type mismatch: c.mask (MaskRef) feeds e.in (ImageRef). */
static const char *const mixed_errors_template =
    "{\"template\": {\"schema\": \"app.workflow/v2\", \"name\": \"mixed\", \"nodes\": ["
    "{\"id\": \"a\", \"kind\": \"Pass\", \"inputs\": {\"in\": \"ImageRef\"}, \"outputs\": {\"out\": \"ImageRef\"}},"
    "{\"id\": \"b\", \"kind\": \"Pass\", \"inputs\": {\"in\": \"ImageRef\"}, \"outputs\": {\"out\": \"ImageRef\"}},"
    "{\"id\": \"c\", \"kind\": \"Masker\", \"outputs\": {\"mask\": \"MaskRef\"}},"
    "{\"id\": \"e\", \"kind\": \"Pass\", \"inputs\": {\"in\": \"ImageRef\"}, \"outputs\": {\"out\": \"ImageRef\"}}],"
    "\"edges\": ["
    "{\"from\": [\"a\", \"out\"], \"to\": [\"b\", \"in\"]}, {\"from\": [\"b\", \"out\"], \"to\": [\"a\", \"in\"]},"
    "{\"from\": [\"c\", \"mask\"], \"to\": [\"e\", \"in\"]}]}}";

static int errors_have_code(const json_t *errors, const char *code) {
    size_t i;
    json_t *error;
    json_array_foreach(errors, i, error) {
        if (str_eq(json_string_value(json_object_get(error, "code")), code)) return 1;
    }
    return 0;
}

/* TEST PLAN §2.1: a cycle A→B→A is cycleDetected with the path in the message, through the C ABI. */
static void test_template_cycle(void) {
    wf_engine *engine = open_manual_engine();
    json_t *result = SENTINEL_JSON;
    int rc = call(&result, engine, "template.register", two_cycles_template);
    printf("template.register of a template with two cycles:\n");
    check_error(rc, WF_ETEMPLATE, "cycleDetected", NULL, NULL);
    CHECK(result == NULL, "the result out-param is set to NULL");
    const json_t *errors = json_object_get(wf_error_last()->details, "errors");
    CHECK(json_is_array(errors), "details.errors is an array");
    CHECK(json_array_size(errors) == 2, "details.errors lists both cycles (got %zu)", json_array_size(errors));
    const json_t *first = json_array_get(errors, 0);
    CHECK(str_eq(json_string_value(json_object_get(first, "code")), "cycleDetected"),
          "details.errors[0].code is cycleDetected");
    CHECK(json_is_array(json_object_get(first, "cycle")) && json_array_size(json_object_get(first, "cycle")) >= 3,
          "details.errors[0].cycle is the path (at least x -> y -> x)");
    CHECK(str_has(wf_error_last()->message, "\xe2\x86\x92"), "the message shows the cycle path with arrows (got \"%s\")",
          wf_error_last()->message);

    rc = call(&result, engine, "template.register", mixed_errors_template);
    printf("template.register of a template with a cycle and a port type mismatch:\n");
    check_error(rc, WF_ETEMPLATE, NULL, NULL, NULL);
    errors = json_object_get(wf_error_last()->details, "errors");
    CHECK(json_array_size(errors) == 2, "details.errors lists both errors (got %zu)", json_array_size(errors));
    CHECK(errors_have_code(errors, "cycleDetected") && errors_have_code(errors, "portTypeMismatch"),
          "details.errors has cycleDetected and portTypeMismatch");
    CHECK(str_eq(wf_error_last()->code,
                 json_string_value(json_object_get(json_array_get(errors, 0), "code"))),
          "the code is the first error's code");

    rc = call(&result, engine, "template.validate", mixed_errors_template);
    CHECK(rc == WF_OK, "template.validate of the same template succeeds (the op did its job)");
    CHECK(json_is_false(json_object_get(result, "valid")), "... and says valid: false");
    CHECK(json_array_size(json_object_get(result, "errors")) == 2, "... listing both errors");
    json_decref(result);

    rc = call(&result, engine, "template.list", NULL);
    CHECK(rc == WF_OK && json_array_size(json_object_get(result, "templates")) == 0,
          "nothing was registered by the failed calls");
    json_decref(result);
    wf_engine_free(engine);
}

static void test_store_missing_folder(void) {
    char *folder = make_temp_folder();
    char path[4096];
    snprintf(path, sizeof path, "%s/no-such-folder/store.sqlite", folder);
    json_t *config = json_pack("{s:s}", "store", path);
    wf_engine *engine = SENTINEL_ENGINE;
    int rc = wf_engine_open(&engine, config);
    printf("wf_engine_open with a store inside a folder that does not exist:\n");
    check_error(rc, WF_ESTORE, NULL, NULL, NULL);
    CHECK(engine == NULL, "the engine out-param is set to NULL");
    struct stat info;
    snprintf(path, sizeof path, "%s/no-such-folder", folder);
    CHECK(stat(path, &info) != 0, "the missing folder was not created");
    json_decref(config);
    rmdir(folder);
    free(folder);
}

static void test_store_not_sqlite(void) {
    char *folder = make_temp_folder();
    char path[4096];
    snprintf(path, sizeof path, "%s/notes.txt", folder);
    const char *content = "These are plain notes, not an SQLite database.\n"
                          "They are long enough to hold a full SQLite header of one hundred bytes.\n";
    FILE *file = fopen(path, "w");
    fputs(content, file);
    fclose(file);

    json_t *config = json_pack("{s:s}", "store", path);
    wf_engine *engine = SENTINEL_ENGINE;
    int rc = wf_engine_open(&engine, config);
    printf("wf_engine_open with a store path that is an existing text file:\n");
    check_error(rc, WF_ESTORE, NULL, NULL, NULL);
    CHECK(engine == NULL, "the engine out-param is set to NULL");

    char read_back[512] = {0};
    file = fopen(path, "r");
    size_t n = fread(read_back, 1, sizeof read_back - 1, file);
    fclose(file);
    CHECK(n == strlen(content) && strcmp(read_back, content) == 0, "the file was left untouched");
    json_decref(config);
    remove_store_files(folder, "notes.txt");
    rmdir(folder);
    free(folder);
}

static void test_unsupported_op(void) {
    wf_engine *engine = open_manual_engine();
    json_t *result = SENTINEL_JSON;
    int rc = call(&result, engine, "no.such.op", "{}");
    printf("wf_call of an unknown op:\n");
    check_error(rc, WF_EUNSUPPORTED, NULL, "no.such.op", NULL);
    CHECK(result == NULL, "the result out-param is set to NULL");
    char *text = SENTINEL_TEXT;
    rc = wf_call_text(&text, engine, "no.such.op", "{}");
    printf("wf_call_text of an unknown op:\n");
    check_error(rc, WF_EUNSUPPORTED, NULL, "no.such.op", NULL);
    CHECK(text == NULL, "the text out-param is set to NULL");
    wf_engine_free(engine);
}

static void test_status_names(void) {
    static const struct {
        int status;
        const char *name;
    } names[] = {
        {WF_OK, "WF_OK"},           {WF_EINVALID, "WF_EINVALID"}, {WF_ENOTFOUND, "WF_ENOTFOUND"},
        {WF_ESTATE, "WF_ESTATE"},   {WF_ETEMPLATE, "WF_ETEMPLATE"}, {WF_ECONFLICT, "WF_ECONFLICT"},
        {WF_ESTORE, "WF_ESTORE"},   {WF_EUNSUPPORTED, "WF_EUNSUPPORTED"}, {WF_ITEROVER, "WF_ITEROVER"},
        {WF_EINTERNAL, "WF_EINTERNAL"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *name = wf_status_name(names[i].status);
        CHECK(str_eq(name, names[i].name), "wf_status_name(%d) is %s (got %s)", names[i].status, names[i].name,
              or_null(name));
    }
    static const int unknown[] = {1, -1, -9, -30, -32, -100, 12345, INT_MIN, INT_MAX};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        const char *name = wf_status_name(unknown[i]);
        CHECK(str_eq(name, "WF_UNKNOWN"), "wf_status_name(%d) is WF_UNKNOWN (got %s)", unknown[i], or_null(name));
    }
    CHECK(wf_status_name(WF_OK) == wf_status_name(WF_OK), "the names are static text (same pointer each time)");
}

/* One interactive node with no inputs: creating a workflow files its await at once. */
static const char *const ask_template =
    "{\"template\": {\"schema\": \"app.workflow/v2\", \"name\": \"Ask\", \"nodes\": ["
    "{\"id\": \"mask1\", \"kind\": \"UserMaskEditor\", \"outputs\": {\"mask\": \"MaskRef\"},"
    " \"await\": {\"type\": \"draw_mask\"}}]}}";

/* Creates a workflow of ask_template and returns its await's id (strdup'ed), or NULL. */
static char *file_one_await(wf_engine *engine) {
    json_t *result = NULL;
    char args[256];
    if (call(&result, engine, "template.register", ask_template) != WF_OK) return NULL;
    snprintf(args, sizeof args, "{\"templateId\": \"%s\"}", or_null(json_string_value(json_object_get(result, "templateId"))));
    json_decref(result);
    result = NULL;
    if (call(&result, engine, "workflow.create", args) != WF_OK) return NULL;
    json_decref(result);
    result = NULL;
    if (call(&result, engine, "await.list", NULL) != WF_OK) return NULL;
    const char *id = json_string_value(json_object_get(json_array_get(json_object_get(result, "pending"), 0), "awaitId"));
    char *copy = id ? strdup(id) : NULL;
    json_decref(result);
    return copy;
}

/* TEST PLAN §10 Pass/Fail "no duplicate editors": a second claimant is WF_ECONFLICT alreadyClaimed. */
static void test_conflict_await_claimed(void) {
    wf_engine *engine = open_manual_engine();
    char *await_id = file_one_await(engine);
    CHECK(await_id != NULL, "a workflow with an interactive node files one pending await (%s)", or_null(await_id));
    if (!await_id) {
        wf_engine_free(engine);
        return;
    }
    char args[256];
    json_t *result = NULL;
    snprintf(args, sizeof args, "{\"awaitId\": \"%s\", \"claimant\": \"phone\"}", await_id);
    int rc = call(&result, engine, "await.claim", args);
    CHECK(rc == WF_OK && json_is_string(json_object_get(result, "leaseExpiresAt")),
          "phone claims it and gets a lease (rc %d)", rc);
    json_decref(result);

    printf("await.claim by another claimant while phone's lease is live:\n");
    snprintf(args, sizeof args, "{\"awaitId\": \"%s\", \"claimant\": \"ipad\"}", await_id);
    result = SENTINEL_JSON;
    rc = call(&result, engine, "await.claim", args);
    check_error(rc, WF_ECONFLICT, "alreadyClaimed", NULL, NULL);
    CHECK(result == NULL, "the result out-param is set to NULL");
    const json_t *details = wf_error_last()->details;
    CHECK(str_eq(json_string_value(json_object_get(details, "claimant")), "phone"),
          "details.claimant names the holder (got %s)", or_null(json_string_value(json_object_get(details, "claimant"))));
    CHECK(str_eq(json_string_value(json_object_get(details, "awaitId")), await_id), "details.awaitId is the await");
    CHECK(str_has(wf_error_last()->details_json, "\"phone\""), "details_json carries the same facts (got %s)",
          or_null(wf_error_last()->details_json));

    printf("the same through wf_call_text:\n");
    char *text = SENTINEL_TEXT;
    rc = wf_call_text(&text, engine, "await.claim", args);
    check_error(rc, WF_ECONFLICT, "alreadyClaimed", NULL, NULL);
    CHECK(text == NULL, "the text out-param is set to NULL");

    snprintf(args, sizeof args, "{\"awaitId\": \"%s\"}", await_id);
    rc = call(&result, engine, "await.get", args);
    CHECK(rc == WF_OK && str_eq(json_string_value(json_object_get(json_object_get(result, "claim"), "claimant")), "phone"),
          "the await is still claimed by phone (the refused claims changed nothing)");
    json_decref(result);

    CHECK(call(NULL, engine, "clock.advance", "{\"seconds\": 301}") == WF_OK, "the 300 s lease runs out");
    snprintf(args, sizeof args, "{\"awaitId\": \"%s\", \"claimant\": \"ipad\"}", await_id);
    rc = call(NULL, engine, "await.claim", args);
    CHECK(rc == WF_OK, "then ipad's claim succeeds: the conflict was the live claim (got %s)", wf_status_name(rc));
    free(await_id);
    wf_engine_free(engine);
}

/* ---------------------------------------------------------------------------
 * The error record
 * ------------------------------------------------------------------------- */

static void *fresh_thread_record(void *unused) {
    (void)unused;
    check_ok_record("on a thread that never called the library");
    return NULL;
}

static void test_error_record_ok_after_success(void) {
    pthread_t thread;
    pthread_create(&thread, NULL, fresh_thread_record, NULL);
    pthread_join(thread, NULL);

    wf_engine *engine = open_manual_engine();
    int rc = call(NULL, engine, "no.such.op", NULL);
    CHECK(rc == WF_EUNSUPPORTED && wf_error_last()->status == WF_EUNSUPPORTED, "a failure is recorded first");
    rc = call(NULL, engine, "clock.now", NULL);
    CHECK(rc == WF_OK, "then clock.now succeeds (with a NULL result out-param)");
    check_ok_record("after the success that followed a failure");

    rc = call(NULL, engine, "no.such.op", NULL);
    wf_error_clear();
    check_ok_record("after wf_error_clear()");
    wf_engine_free(engine);
}

static void test_error_record_fields(void) {
    wf_engine *engine = open_manual_engine();
    int rc = call(NULL, engine, "template.register", two_cycles_template);
    const wf_error *e = wf_error_last();
    CHECK(rc == WF_ETEMPLATE, "template.register of a cyclic template fails");
    CHECK(e->status == rc, "status equals the returned code");
    CHECK(e->code && strlen(e->code) > 0, "code is non-empty text (\"%s\")", or_null(e->code));
    CHECK(e->message && strlen(e->message) > 0, "message is non-empty text");
    CHECK(json_is_object(e->details), "details is a JSON object");
    CHECK(e->details_json != NULL, "details_json is text");
    json_error_t parse_error;
    json_t *reparsed = e->details_json ? json_loads(e->details_json, 0, &parse_error) : NULL;
    CHECK(reparsed && json_equal(reparsed, (json_t *)e->details), "details_json parses to the same JSON as details");
    json_decref(reparsed);
    CHECK(wf_error_last() == e, "wf_error_last() returns the same record until the next call");
    wf_engine_free(engine);
}

typedef struct thread_probe {
    wf_engine *engine;
    pthread_barrier_t *barrier;
    const char *op;
    const char *args;
    int expected_status;
    const char *expected_text; /* must appear in the message */
    int rc;
    int record_status;
    int record_has_text;
    int record_details_match;
} thread_probe;

static void *probe_thread(void *arg) {
    thread_probe *p = arg;
    p->rc = call(NULL, p->engine, p->op, p->args);
    pthread_barrier_wait(p->barrier); /* both threads have made their call before either reads */
    const wf_error *e = wf_error_last();
    p->record_status = e->status;
    p->record_has_text = str_has(e->message, p->expected_text) ? 1 : 0;
    json_t *reparsed = json_loads(e->details_json, 0, NULL);
    p->record_details_match = reparsed && json_equal(reparsed, (json_t *)e->details);
    json_decref(reparsed);
    return NULL;
}

static void test_error_record_per_thread(void) {
    wf_engine *engine = open_manual_engine();
    int rc = call(NULL, engine, "clock.now", NULL);
    CHECK(rc == WF_OK, "the main thread succeeds first");

    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, NULL, 2);
    thread_probe a = {engine, &barrier, "template.get", "{\"templateId\": \"only-thread-a\"}", WF_ENOTFOUND,
                      "only-thread-a", 0, 0, 0, 0};
    thread_probe b = {engine, &barrier, "thread.b.unknown", "{}", WF_EUNSUPPORTED, "thread.b.unknown", 0, 0, 0, 0};
    pthread_t ta, tb;
    pthread_create(&ta, NULL, probe_thread, &a);
    pthread_create(&tb, NULL, probe_thread, &b);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    pthread_barrier_destroy(&barrier);

    CHECK(a.rc == WF_ENOTFOUND, "thread A's call returns WF_ENOTFOUND (got %d)", a.rc);
    CHECK(b.rc == WF_EUNSUPPORTED, "thread B's call returns WF_EUNSUPPORTED (got %d)", b.rc);
    CHECK(a.record_status == a.expected_status && a.record_has_text,
          "thread A reads its own record after both calls (status %d)", a.record_status);
    CHECK(b.record_status == b.expected_status && b.record_has_text,
          "thread B reads its own record after both calls (status %d)", b.record_status);
    CHECK(a.record_details_match && b.record_details_match, "each thread's details and details_json agree");
    check_ok_record("on the main thread after the other threads failed");
    wf_engine_free(engine);
}

/* ---------------------------------------------------------------------------
 * Memory and lifetime
 * ------------------------------------------------------------------------- */

static void test_out_params_null_on_failure(void) {
    wf_engine *engine = open_manual_engine();
    json_t *result = SENTINEL_JSON;
    call(&result, engine, "template.get", "{\"templateId\": \"missing\"}");
    CHECK(result == NULL, "wf_call sets *result to NULL on WF_ENOTFOUND");
    result = SENTINEL_JSON;
    call(&result, engine, "clock.advance", "{\"seconds\": -5}");
    CHECK(result == NULL, "wf_call sets *result to NULL on WF_EINVALID (negative seconds)");
    char *text = SENTINEL_TEXT;
    wf_call_text(&text, engine, "template.get", "{\"templateId\": \"missing\"}");
    CHECK(text == NULL, "wf_call_text sets *result_json to NULL on WF_ENOTFOUND");
    wf_engine *opened = SENTINEL_ENGINE;
    wf_engine_open_text(&opened, "{\"bogus\": true}");
    CHECK(opened == NULL, "wf_engine_open_text sets *out to NULL on WF_EINVALID");
    opened = SENTINEL_ENGINE;
    json_t *config = parse("{\"store\": \"/proc/no/such/store.sqlite\"}");
    wf_engine_open(&opened, config);
    json_decref(config);
    CHECK(opened == NULL, "wf_engine_open sets *out to NULL on WF_ESTORE");
    wf_engine_free(engine);
}

static void test_free_null_noop(void) {
    /* A crash here ends the test with a failure. */
    wf_free(NULL);
    printf("  ok   wf_free(NULL) returned\n");
    wf_engine_free(NULL);
    printf("  ok   wf_engine_free(NULL) returned\n");
    wf_engine *engine = open_manual_engine();
    char *text = NULL;
    int rc = wf_call_text(&text, engine, "engine.info", NULL);
    CHECK(rc == WF_OK && text != NULL, "wf_call_text returns text to free");
    wf_free(text);
    wf_engine_free(engine);
    check_ok_record("after the frees");
}

/* A handle is a number the library never reuses, not a pointer: after a close (or a free),
 * calls with it, a second close and a second free are refused or ignored, never a crash. */
static void test_closed_handle_refused(void) {
    wf_engine *engine = open_manual_engine();
    wf_engine *stale = engine;
    CHECK(wf_engine_close(engine) == WF_OK, "the first close succeeds");
    char *text = SENTINEL_TEXT;
    int rc = wf_call_text(&text, stale, "clock.now", NULL);
    check_error(rc, WF_ESTATE, "engineClosed", "closed", "engine");
    CHECK(text == NULL, "no result text for a closed engine");
    json_t *result = NULL;
    rc = wf_call(&result, stale, "clock.now", NULL);
    check_error(rc, WF_ESTATE, "engineClosed", "closed", "engine");
    CHECK(result == NULL, "no result for a closed engine");
    rc = wf_engine_close(stale);
    check_error(rc, WF_ESTATE, "engineClosed", NULL, "engine");
    wf_engine_free(stale); /* a no-op: a crash here ends the test with a failure */
    printf("  ok   wf_engine_free of a closed handle returned\n");

    wf_engine *fresh = open_manual_engine();
    CHECK(fresh != stale, "a new engine gets a new handle, not the closed one's");
    CHECK(call(NULL, fresh, "clock.now", NULL) == WF_OK, "the new engine answers");
    rc = wf_call_text(NULL, stale, "clock.now", NULL);
    check_error(rc, WF_ESTATE, "engineClosed", NULL, "engine");
    wf_engine_free(fresh);
    rc = wf_call_text(NULL, fresh, "clock.now", NULL);
    check_error(rc, WF_ESTATE, "engineClosed", NULL, "engine");
    rc = wf_call_text(NULL, (wf_engine *)(uintptr_t)0x7777770, "clock.now", NULL);
    check_error(rc, WF_ESTATE, "engineClosed", "never opened", "engine");
}

typedef struct close_race {
    wf_engine *engine;
    pthread_barrier_t *started;
    int ok;
    int closed;
    int other;
} close_race;

static void *call_until_closed(void *arg) {
    close_race *r = arg;
    for (int i = 0; i < 20000; i++) {
        if (i == 1) pthread_barrier_wait(r->started); /* one call made: the close may come now */
        int rc = wf_call_text(NULL, r->engine, "clock.advance", "{\"seconds\": 1}");
        if (rc == WF_OK) r->ok++;
        else if (rc == WF_ESTATE && str_eq(wf_error_last()->code, "engineClosed") &&
                 str_eq(json_string_value(json_object_get(wf_error_last()->details, "argument")), "engine"))
            r->closed++; /* the same record whether the close came before the lookup or after */
        else r->other++;
        if (r->closed >= 50) break;
    }
    return NULL;
}

static void test_close_while_another_thread_calls(void) {
    for (int round = 0; round < 20; round++) {
        pthread_barrier_t started;
        pthread_barrier_init(&started, NULL, 2);
        close_race r = {open_manual_engine(), &started, 0, 0, 0};
        pthread_t thread;
        pthread_create(&thread, NULL, call_until_closed, &r);
        pthread_barrier_wait(&started);
        int rc = wf_engine_close(r.engine);
        pthread_join(thread, NULL);
        pthread_barrier_destroy(&started);
        CHECK(rc == WF_OK, "round %d: the close succeeds while the other thread calls", round);
        CHECK(r.other == 0, "round %d: every call either ran or answered engineClosed (%d other)", round, r.other);
        CHECK(r.closed > 0, "round %d: the calls after the close answered engineClosed (%d ok, %d closed)", round,
              r.ok, r.closed);
    }
}

static void test_version(void) {
    CHECK(wf_libversion_number() == WF_VERSION_NUMBER, "wf_libversion_number() == WF_VERSION_NUMBER (%d vs %d)",
          wf_libversion_number(), WF_VERSION_NUMBER);
    CHECK(str_eq(wf_libversion(), WF_VERSION), "wf_libversion() is \"%s\" (got \"%s\")", WF_VERSION,
          or_null(wf_libversion()));
    wf_engine *engine = open_manual_engine();
    json_t *info = NULL;
    int rc = call(&info, engine, "engine.info", NULL);
    CHECK(rc == WF_OK, "engine.info succeeds");
    CHECK(str_eq(json_string_value(json_object_get(info, "version")), WF_VERSION), "engine.info version is %s",
          WF_VERSION);
    CHECK(json_integer_value(json_object_get(info, "versionNumber")) == WF_VERSION_NUMBER,
          "engine.info versionNumber is %d", WF_VERSION_NUMBER);
    json_decref(info);
    wf_engine_free(engine);
}

static void test_default_config(void) {
    wf_engine *engine = SENTINEL_ENGINE;
    int rc = wf_engine_open(&engine, NULL);
    CHECK(rc == WF_OK && engine && engine != SENTINEL_ENGINE, "wf_engine_open with a NULL config succeeds");
    json_t *info = NULL;
    rc = call(&info, engine, "engine.info", NULL);
    CHECK(rc == WF_OK, "engine.info succeeds");
    CHECK(str_eq(json_string_value(json_object_get(json_object_get(info, "clock"), "mode")), "system"),
          "the default clock is the system clock");
    CHECK(str_eq(json_string_value(json_object_get(info, "store")), ":memory:"), "the default store is :memory:");
    json_decref(info);
    wf_engine_free(engine);

    engine = SENTINEL_ENGINE;
    rc = wf_engine_open_text(&engine, NULL);
    CHECK(rc == WF_OK && engine && engine != SENTINEL_ENGINE, "wf_engine_open_text with a NULL config succeeds");
    rc = wf_call_text(NULL, engine, "clock.now", NULL);
    CHECK(rc == WF_OK, "wf_call_text with NULL args and a NULL result out-param succeeds");
    wf_engine_free(engine);
}

static void test_json_references(void) {
    wf_engine *engine = open_manual_engine();
    json_t *args = parse("{\"seconds\": 30}");
    json_t *before = json_deep_copy(args);
    json_t *first = NULL, *second = NULL;
    int rc = wf_call(&first, engine, "clock.advance", args);
    CHECK(rc == WF_OK, "clock.advance succeeds");
    CHECK(args->refcount == 1, "the args are borrowed: refcount still 1 (got %zu)", (size_t)args->refcount);
    CHECK(json_equal(args, before), "the args are unchanged");
    CHECK(first && first->refcount == 1, "the result is a new reference (refcount 1)");
    rc = wf_call(&second, engine, "clock.now", NULL);
    CHECK(rc == WF_OK && second && second != first, "each call returns its own object");
    CHECK(str_eq(json_string_value(json_object_get(second, "now")), "2026-01-01T00:00:30.000Z"),
          "clock.now reads the advanced time");

    /* The caller owns the result: changing it changes nothing in the engine. */
    json_object_set_new(second, "now", json_string("tampered"));
    json_decref(second);
    second = NULL;
    rc = wf_call(&second, engine, "clock.now", NULL);
    CHECK(rc == WF_OK && str_eq(json_string_value(json_object_get(second, "now")), "2026-01-01T00:00:30.000Z"),
          "changing a result does not reach the engine");

    call(NULL, engine, "no.such.op", NULL);
    const json_t *details = wf_error_last()->details;
    CHECK(json_is_object(details) && str_eq(json_string_value(json_object_get(details, "op")), "no.such.op"),
          "the error details are a readable borrowed object (details.op names the op)");

    json_decref(first);
    json_decref(second);
    json_decref(args);
    json_decref(before);
    wf_engine_free(engine);
}

/* ---------------------------------------------------------------------------
 * JSON across the boundary (json_t <-> the engine's JSON)
 * ------------------------------------------------------------------------- */

/* Registers a one-node template carrying `xm` (stolen) as its "x-m" member and returns
 * template.get's copy of it (a new reference), or NULL. x- members are kept verbatim
 * (docs/OPS.md §5), so what comes back is what the json_t held. */
static json_t *x_member_round_trip(wf_engine *engine, json_t *xm) {
    json_t *args = parse("{\"template\": {\"schema\": \"app.workflow/v2\", \"name\": \"x\", \"nodes\": ["
                         "{\"id\": \"n\", \"kind\": \"K\", \"outputs\": {\"o\": \"ImageRef\"}}]}}");
    json_object_set_new(json_object_get(args, "template"), "x-m", xm);
    json_t *result = NULL;
    int rc = wf_call(&result, engine, "template.register", args);
    json_decref(args);
    if (rc != WF_OK) return NULL;
    json_t *get = json_pack("{s:O}", "templateId", json_object_get(result, "templateId"));
    json_decref(result);
    result = NULL;
    rc = wf_call(&result, engine, "template.get", get);
    json_decref(get);
    if (rc != WF_OK) return NULL;
    json_t *copy = json_incref(json_object_get(json_object_get(result, "template"), "x-m"));
    json_decref(result);
    return copy;
}

static int string_is(const json_t *value, const char *bytes, size_t length) {
    return json_is_string(value) && json_string_length(value) == length &&
           memcmp(json_string_value(value), bytes, length) == 0;
}

static void test_json_strings_with_nul(void) {
    wf_engine *engine = open_manual_engine();
    CHECK(call(NULL, engine, "tool.register",
               "{\"kind\": \"K\", \"resourceClass\": \"local\", \"inputs\": {}, \"outputs\": {\"o\": \"ImageRef\"}}") == WF_OK,
          "tool.register K");
    json_t *args = json_object();
    json_object_set_new(args, "kind", json_stringn("K\0B", 3));
    json_t *result = SENTINEL_JSON;
    int rc = wf_call(&result, engine, "tool.get", args);
    printf("tool.get with kind \"K\\0B\" (a string argument holding U+0000, not cut to \"K\"):\n");
    check_error(rc, WF_EINVALID, "invalidArgument", NULL, "kind");
    CHECK(result == NULL, "the result out-param is set to NULL");
    json_decref(args);

    printf("a text inside an object keeps its U+0000 both ways (json_t in, json_t out):\n");
    json_t *keyed = json_object();
    json_object_setn_new(keyed, "k\0ey", 4, json_stringn("v\0", 2));
    json_t *back = x_member_round_trip(engine, json_pack("[s%o]", "a\0b", (size_t)3, keyed));
    CHECK(back != NULL, "template.register and template.get succeed (%s)", wf_error_last()->code);
    CHECK(string_is(json_array_get(back, 0), "a\0b", 3), "\"a\\0b\" comes back with its 3 bytes");
    void *iter = json_object_iter(json_array_get(back, 1));
    CHECK(iter && json_object_iter_key_len(iter) == 4 && memcmp(json_object_iter_key(iter), "k\0ey", 4) == 0,
          "the key \"k\\0ey\" comes back with its 4 bytes");
    CHECK(iter && string_is(json_object_iter_value(iter), "v\0", 2), "its value \"v\\0\" with its 2 bytes");
    json_decref(back);
    wf_engine_free(engine);
}

static void test_json_short_strings(void) {
    /* Strings of 15, 16 and 17 bytes that differ only in their last byte, as values and keys. */
    static const char *const texts[] = {"0123456789abcda", "0123456789abcdq", "0123456789abcdea",
                                        "0123456789abcdeq", "0123456789abcdefa", "0123456789abcdefq"};
    enum { N = sizeof texts / sizeof texts[0] };
    wf_engine *engine = open_manual_engine();
    json_t *xm = json_array(), *keys = json_object();
    for (size_t i = 0; i < N; i++) {
        json_array_append_new(xm, json_string(texts[i]));
        json_object_set_new(keys, texts[i], json_integer((json_int_t)i));
    }
    json_array_append_new(xm, keys);
    json_t *back = x_member_round_trip(engine, xm);
    CHECK(back != NULL, "template.register and template.get succeed (%s)", wf_error_last()->code);
    for (size_t i = 0; i < N; i++) {
        CHECK(str_eq(json_string_value(json_array_get(back, i)), texts[i]), "value %zu comes back as \"%s\" (got %s)", i,
              texts[i], or_null(json_string_value(json_array_get(back, i))));
        const json_t *value = json_object_get(json_array_get(back, N), texts[i]);
        CHECK(json_is_integer(value) && json_integer_value(value) == (json_int_t)i, "key \"%s\" keeps its value %zu",
              texts[i], i);
    }
    CHECK(json_object_size(json_array_get(back, N)) == N, "the object keeps all %d keys", (int)N);
    json_decref(back);
    wf_engine_free(engine);
}

/* {"a": [[...[1]...]]}: `containers` objects and arrays nested, the args object included. */
/* {"a": [[...[1]...]]} with `containers` nested containers, args included; with `empty`, the
   innermost array holds nothing (the scalar adds no level either way). */
static json_t *nested_args(int containers, int empty) {
    json_t *value = empty ? json_array() : json_integer(1);
    for (int i = empty ? 2 : 1; i < containers; i++) {
        json_t *array = json_array();
        json_array_append_new(array, value);
        value = array;
    }
    json_t *args = json_object();
    json_object_set_new(args, "a", value);
    return args;
}

static void test_json_depth_limit(void) {
    wf_engine *engine = open_manual_engine();
    for (int run = 0; run < 4; run++) {
        int containers = 512 + run % 2, empty = run / 2;
        const char *expected = containers <= 512 ? "unknownArgument" : "tooDeep";
        json_t *args = nested_args(containers, empty);
        char *text = json_dumps(args, JSON_COMPACT);
        int rc = wf_call(NULL, engine, "clock.now", args);
        printf("wf_call with args nested %d levels deep, the innermost %s (%s):\n", containers,
               empty ? "an empty array" : "holding a number",
               containers <= 512 ? "converted; the op refuses the member" : "deeper than 512");
        check_error(rc, WF_EINVALID, expected, NULL, containers <= 512 ? "a" : "args");
        rc = wf_call_text(NULL, engine, "clock.now", text);
        printf("wf_call_text with the same args as text:\n");
        check_error(rc, WF_EINVALID, expected, NULL, containers <= 512 ? "a" : "args_json");
        free(text);
        json_decref(args);
    }
    wf_engine_free(engine);
}

static void test_json_invalid_utf8(void) {
    wf_engine *engine = open_manual_engine();
    json_t *args = json_object();
    json_object_set_new(args, "templateId", json_stringn_nocheck("tpl-\xff", 5));
    int rc = wf_call(NULL, engine, "template.get", args);
    printf("a string argument of invalid UTF-8:\n");
    check_error(rc, WF_EINVALID, "invalidUTF8", NULL, "args.templateId");
    json_decref(args);
    rc = wf_call_text(NULL, engine, "template.get", "{\"templateId\": \"tpl-\xff\"}");
    printf("the same as text (the same code):\n");
    check_error(rc, WF_EINVALID, "invalidUTF8", NULL, "args_json");

    /* {"template": {"x-m": [1, {"b": <bad>}]}} and {"template": {"x-m": [1, {<bad>: 1}]}} */
    for (int bad_key = 0; bad_key <= 1; bad_key++) {
        json_t *inner = json_object();
        if (bad_key) json_object_setn_new_nocheck(inner, "\xc3\x28", 2, json_integer(1));
        else json_object_set_new(inner, "b", json_stringn_nocheck("\xc3\x28", 2));
        args = json_pack("{s:{s:[i,o]}}", "template", "x-m", 1, inner);
        json_t *result = SENTINEL_JSON;
        rc = wf_call(&result, engine, "template.register", args);
        printf("template.register with invalid UTF-8 in %s deep inside:\n", bad_key ? "a key" : "a value");
        check_error(rc, WF_EINVALID, "invalidUTF8", NULL, bad_key ? "args.template.x-m[1]" : "args.template.x-m[1].b");
        CHECK(result == NULL, "the result out-param is set to NULL");
        json_decref(args);
    }
    wf_engine_free(engine);
}

/* Jansson's constructors refuse NaN and infinities; a json_t written by hand need not. The
 * layout is Jansson's json_real_t (jansson_private.h), unchanged since 2.0. */
typedef struct hand_made_real {
    json_t json;
    double value;
} hand_made_real;

static json_t *real_holding(double value) {
    json_t *real = json_real(1.0);
    ((hand_made_real *)real)->value = value;
    return real;
}

static void test_json_non_finite_reals(void) {
    wf_engine *engine = open_manual_engine();
    const double values[] = {NAN, INFINITY, -INFINITY};
    const char *names[] = {"NaN", "+infinity", "-infinity"};
    for (int i = 0; i < 3; i++) {
        json_t *probe = real_holding(values[i]);
        if (!(json_real_value(probe) != json_real_value(probe) || isinf(json_real_value(probe)))) {
            printf("  skip this Jansson lays a real out differently\n");
            json_decref(probe);
            break;
        }
        json_decref(probe);
        json_t *args = json_pack("{s:s, s:s, s:{s:[i,o]}}", "type", "ImageRef", "uri", "file:///a.png", "meta", "x",
                                 1, real_holding(values[i]));
        json_t *result = SENTINEL_JSON;
        int rc = wf_call(&result, engine, "asset.import", args);
        printf("asset.import with a %s real inside meta:\n", names[i]);
        check_error(rc, WF_EINVALID, "invalidJSON", "not finite", "args.meta.x[1]");
        CHECK(result == NULL, "the result out-param is set to NULL");
        json_decref(args);
    }
    json_t *assets = NULL;
    int rc = wf_call(&assets, engine, "cache.usage", NULL);
    CHECK(rc == WF_OK, "the engine goes on answering");
    json_decref(assets);
    wf_engine_free(engine);
}

/* ---------------------------------------------------------------------------
 * Threads
 * ------------------------------------------------------------------------- */

enum { THREADS = 8, CALLS_PER_THREAD = 200, CALL_KINDS = 5 };

typedef struct worker {
    wf_engine *engine;
    int index;
    int failures;
    char first_failure[256];
} worker;

static void worker_failed(worker *w, int call_number, const char *what) {
    if (w->failures++ == 0) {
        snprintf(w->first_failure, sizeof w->first_failure, "call %d: %s (rc record: %d %s)", call_number, what,
                 wf_error_last()->status, wf_error_last()->code);
    }
}

/* Each thread cycles through five calls: register a tool of its own, read it back,
 * advance the clock by one second, read the clock, and fail a lookup whose error
 * names the thread. */
static void *worker_main(void *arg) {
    worker *w = arg;
    char kind[64], args[512], missing[64];
    char last_now[64] = "";
    for (int i = 0; i < CALLS_PER_THREAD; i++) {
        json_t *result = NULL;
        int round = i / CALL_KINDS;
        snprintf(kind, sizeof kind, "Tool_t%d_r%d", w->index, round);
        switch (i % CALL_KINDS) {
        case 0:
            snprintf(args, sizeof args,
                     "{\"kind\": \"%s\", \"resourceClass\": \"local\", \"inputs\": {}, \"outputs\": {\"image\": \"ImageRef\"}}",
                     kind);
            if (call(&result, w->engine, "tool.register", args) != WF_OK) worker_failed(w, i, "tool.register");
            else if (!str_eq(json_string_value(json_object_get(result, "kind")), kind))
                worker_failed(w, i, "tool.register returned another kind");
            break;
        case 1:
            snprintf(args, sizeof args, "{\"kind\": \"%s\"}", kind);
            if (call(&result, w->engine, "tool.get", args) != WF_OK) worker_failed(w, i, "tool.get");
            else if (!str_eq(json_string_value(json_object_get(result, "kind")), kind))
                worker_failed(w, i, "tool.get returned another kind");
            break;
        case 2:
            if (call(&result, w->engine, "clock.advance", "{\"seconds\": 1}") != WF_OK)
                worker_failed(w, i, "clock.advance");
            break;
        case 3: {
            if (call(&result, w->engine, "clock.now", NULL) != WF_OK) {
                worker_failed(w, i, "clock.now");
                break;
            }
            const char *now = json_string_value(json_object_get(result, "now"));
            /* Same-format RFC 3339 UTC times compare as text. */
            if (!now || strcmp(now, last_now) < 0) worker_failed(w, i, "the clock went backwards");
            else snprintf(last_now, sizeof last_now, "%s", now);
            break;
        }
        case 4: {
            snprintf(missing, sizeof missing, "missing-t%d-r%d", w->index, round);
            snprintf(args, sizeof args, "{\"templateId\": \"%s\"}", missing);
            int rc = call(&result, w->engine, "template.get", args);
            if (rc != WF_ENOTFOUND) worker_failed(w, i, "template.get of a missing id did not fail with WF_ENOTFOUND");
            else if (wf_error_last()->status != WF_ENOTFOUND || !str_has(wf_error_last()->message, missing))
                worker_failed(w, i, "the error record is not this thread's");
            break;
        }
        }
        json_decref(result);
    }
    return NULL;
}

static void test_threads_one_engine(void) {
    wf_engine *engine = open_manual_engine();
    worker workers[THREADS];
    pthread_t threads[THREADS];
    for (int t = 0; t < THREADS; t++) {
        workers[t] = (worker){engine, t, 0, ""};
        pthread_create(&threads[t], NULL, worker_main, &workers[t]);
    }
    for (int t = 0; t < THREADS; t++) pthread_join(threads[t], NULL);
    printf("%d threads x %d calls on one engine:\n", THREADS, CALLS_PER_THREAD);
    for (int t = 0; t < THREADS; t++) {
        CHECK(workers[t].failures == 0, "thread %d: every call had the expected outcome%s%s", t,
              workers[t].failures ? ": " : "", workers[t].first_failure);
    }

    const int rounds = CALLS_PER_THREAD / CALL_KINDS;
    json_t *result = NULL;
    int rc = call(&result, engine, "tool.list", NULL);
    CHECK(rc == WF_OK && json_array_size(json_object_get(result, "tools")) == (size_t)(THREADS * rounds),
          "tool.list has every tool registered (%d, got %zu)", THREADS * rounds,
          json_array_size(json_object_get(result, "tools")));
    json_decref(result);
    rc = call(&result, engine, "clock.now", NULL);
    char expected_now[64];
    int advanced = THREADS * rounds; /* seconds */
    snprintf(expected_now, sizeof expected_now, "2026-01-01T00:%02d:%02d.000Z", advanced / 60, advanced % 60);
    CHECK(rc == WF_OK && str_eq(json_string_value(json_object_get(result, "now")), expected_now),
          "the clock advanced exactly once per clock.advance: %s (got %s)", expected_now,
          or_null(json_string_value(json_object_get(result, "now"))));
    json_decref(result);
    wf_engine_free(engine);
}

/* ---------------------------------------------------------------------------
 * Persistence
 * ------------------------------------------------------------------------- */

static const char *const loader_tool =
    "{\"kind\": \"ImageLoader\", \"resourceClass\": \"local\", \"inputs\": {}, \"outputs\": {\"image\": \"ImageRef\"}}";
static const char *const stylize_tool =
    "{\"kind\": \"StylizeRemote\", \"resourceClass\": \"remote\", \"inputs\": {\"image\": \"ImageRef\"},"
    " \"outputs\": {\"image\": \"ImageRef\"}}";
static const char *const two_node_template =
    "{\"template\": {\"schema\": \"app.workflow/v2\", \"name\": \"Persisted\", \"nodes\": ["
    "{\"id\": \"load1\", \"kind\": \"ImageLoader\", \"outputs\": {\"image\": \"ImageRef\"}},"
    "{\"id\": \"stylize1\", \"kind\": \"StylizeRemote\", \"params\": {\"steps\": 30},"
    " \"inputs\": {\"image\": \"ImageRef\"}, \"outputs\": {\"image\": \"ImageRef\"}, \"resources\": {\"class\": \"remote\"}}],"
    "\"edges\": [{\"from\": [\"load1\", \"image\"], \"to\": [\"stylize1\", \"image\"]}]}}";

static void test_file_store_persists(void) {
    char *folder = make_temp_folder();
    char store[4096];
    snprintf(store, sizeof store, "%s/engine.sqlite", folder);
    json_t *config = json_pack("{s:s, s:{s:s, s:s}}", "store", store, "clock", "mode", "manual", "start",
                               "2026-01-01T00:00:00.000Z");

    wf_engine *engine = NULL;
    int rc = wf_engine_open(&engine, config);
    CHECK(rc == WF_OK, "a file store opens at a new path (the file is created)");
    struct stat info;
    CHECK(stat(store, &info) == 0, "the store file exists");
    json_t *result = NULL;
    CHECK(call(NULL, engine, "tool.register", loader_tool) == WF_OK, "tool.register ImageLoader");
    CHECK(call(NULL, engine, "tool.register", stylize_tool) == WF_OK, "tool.register StylizeRemote");
    rc = call(&result, engine, "template.register", two_node_template);
    CHECK(rc == WF_OK, "template.register");
    char *template_id = strdup(or_null(json_string_value(json_object_get(result, "templateId"))));
    json_decref(result);
    char export_args[256];
    snprintf(export_args, sizeof export_args, "{\"templateId\": \"%s\"}", template_id);
    rc = call(&result, engine, "template.export", export_args);
    char *text_before = strdup(rc == WF_OK ? or_null(json_string_value(json_object_get(result, "text"))) : "");
    json_decref(result);
    CHECK(call(NULL, engine, "clock.advance", "{\"seconds\": 90}") == WF_OK, "clock.advance 90 s");
    wf_engine_free(engine);
    printf("engine freed and reopened on the same store:\n");

    engine = NULL;
    rc = wf_engine_open(&engine, config);
    CHECK(rc == WF_OK && engine, "the store reopens");
    rc = call(&result, engine, "template.list", NULL);
    const json_t *templates = json_object_get(result, "templates");
    CHECK(rc == WF_OK && json_array_size(templates) == 1, "template.list has the one template");
    CHECK(str_eq(json_string_value(json_object_get(json_array_get(templates, 0), "templateId")), template_id),
          "with the same templateId (%s)", template_id);
    json_decref(result);
    rc = call(&result, engine, "template.export", export_args);
    CHECK(rc == WF_OK && str_eq(json_string_value(json_object_get(result, "text")), text_before),
          "template.export gives the same canonical text");
    json_decref(result);
    rc = call(&result, engine, "tool.list", NULL);
    const json_t *tools = json_object_get(result, "tools");
    CHECK(rc == WF_OK && json_array_size(tools) == 2, "tool.list has both tools");
    CHECK(str_eq(json_string_value(json_object_get(json_array_get(tools, 0), "kind")), "ImageLoader") &&
              str_eq(json_string_value(json_object_get(json_array_get(tools, 1), "kind")), "StylizeRemote"),
          "ImageLoader and StylizeRemote, sorted by kind");
    json_decref(result);
    rc = call(&result, engine, "template.register", two_node_template);
    CHECK(rc == WF_OK && str_eq(json_string_value(json_object_get(result, "templateId")), template_id),
          "registering the same template again gives the same templateId");
    json_decref(result);
    rc = call(&result, engine, "clock.now", NULL);
    CHECK(rc == WF_OK && str_eq(json_string_value(json_object_get(result, "now")), "2026-01-01T00:01:30.000Z"),
          "the manual clock resumes where the store left off (got %s)",
          or_null(json_string_value(json_object_get(result, "now"))));
    json_decref(result);
    wf_engine_free(engine);

    free(template_id);
    free(text_before);
    json_decref(config);
    remove_store_files(folder, "engine.sqlite");
    CHECK(rmdir(folder) == 0, "the temporary folder held nothing but the store files");
    free(folder);
}

/* ---------------------------------------------------------------------------
 * The error record: which functions replace it and which leave it alone
 * ------------------------------------------------------------------------- */

/* Makes the calling thread's record a failure: unknownOp for "no.such.op". */
static void record_a_failure(wf_engine *engine) {
    int rc = call(NULL, engine, "no.such.op", NULL);
    CHECK(rc == WF_EUNSUPPORTED && wf_error_last()->status == WF_EUNSUPPORTED, "a failure is recorded first");
}

static void test_error_record_reset_by_each_success(void) {
    wf_engine *engine = open_manual_engine();

    record_a_failure(engine);
    wf_engine *opened = NULL;
    json_t *config = parse(manual_clock_config);
    int rc = wf_engine_open(&opened, config);
    json_decref(config);
    CHECK(rc == WF_OK && opened, "wf_engine_open succeeds");
    check_ok_record("after a wf_engine_open that followed a failure");
    wf_engine_free(opened);

    record_a_failure(engine);
    opened = NULL;
    rc = wf_engine_open_text(&opened, manual_clock_config);
    CHECK(rc == WF_OK && opened, "wf_engine_open_text succeeds");
    check_ok_record("after a wf_engine_open_text that followed a failure");
    wf_engine_free(opened);

    record_a_failure(engine);
    json_t *result = NULL;
    rc = call(&result, engine, "clock.now", NULL);
    CHECK(rc == WF_OK, "wf_call succeeds");
    check_ok_record("after a wf_call that followed a failure");
    json_decref(result);

    record_a_failure(engine);
    char *text = NULL;
    rc = wf_call_text(&text, engine, "clock.now", NULL);
    CHECK(rc == WF_OK && text, "wf_call_text succeeds");
    check_ok_record("after a wf_call_text that followed a failure");
    wf_free(text);

    record_a_failure(engine);
    rc = wf_call_text(NULL, engine, "clock.now", "{}");
    CHECK(rc == WF_OK, "wf_call_text with a NULL result out-param succeeds");
    check_ok_record("after a wf_call_text without a result that followed a failure");
    wf_engine_free(engine);
}

/* The record of a failure, copied field by field (pointers and text). */
typedef struct record_copy {
    const wf_error *record;
    int status;
    const char *code, *message, *details_json;
    const json_t *details;
    char code_text[64], message_text[256], details_text[256];
} record_copy;

static void copy_record(record_copy *c) {
    const wf_error *e = wf_error_last();
    c->record = e;
    c->status = e->status;
    c->code = e->code;
    c->message = e->message;
    c->details = e->details;
    c->details_json = e->details_json;
    snprintf(c->code_text, sizeof c->code_text, "%s", e->code);
    snprintf(c->message_text, sizeof c->message_text, "%s", e->message);
    snprintf(c->details_text, sizeof c->details_text, "%s", e->details_json);
}

static void check_record_unchanged(const record_copy *c, const char *after) {
    const wf_error *e = wf_error_last();
    CHECK(e == c->record && e->status == c->status && e->code == c->code && e->message == c->message &&
              e->details == c->details && e->details_json == c->details_json,
          "the record and its pointers are unchanged after %s (status %d, code %s)", after, e->status,
          or_null(e->code));
    CHECK(str_eq(e->code, c->code_text) && str_eq(e->message, c->message_text) &&
              str_eq(e->details_json, c->details_text) &&
              str_eq(json_string_value(json_object_get(e->details, "op")), "no.such.op"),
          "its code, message and details still describe the failure after %s", after);
}

static void test_error_record_left_alone(void) {
    wf_engine *engine = open_manual_engine();
    wf_engine *other = open_manual_engine();
    char *text = NULL;
    CHECK(wf_call_text(&text, engine, "clock.now", NULL) == WF_OK && text, "wf_call_text returns text to free later");
    record_a_failure(engine);
    record_copy before;
    copy_record(&before);

    (void)wf_error_last();
    check_record_unchanged(&before, "wf_error_last()");
    (void)wf_status_name(WF_EINVALID);
    (void)wf_status_name(12345);
    check_record_unchanged(&before, "wf_status_name()");
    (void)wf_libversion_number();
    (void)wf_libversion();
    check_record_unchanged(&before, "wf_libversion_number() and wf_libversion()");
    wf_free(text);
    wf_free(NULL);
    check_record_unchanged(&before, "wf_free()");
    wf_engine_free(other);
    wf_engine_free(NULL);
    check_record_unchanged(&before, "wf_engine_free()");
    wf_engine_free(engine);
    check_record_unchanged(&before, "wf_engine_free() of the engine that failed");
}

/* A U+0000 the message would quote is written as '?'; details keep the real text. */
static void test_error_message_nul_as_question_mark(void) {
    wf_engine *engine = open_manual_engine();
    json_t *args = json_object();
    json_object_setn_new(args, "a\0b", 3, json_integer(1));
    json_t *result = SENTINEL_JSON;
    int rc = wf_call(&result, engine, "clock.now", args);
    json_decref(args);
    printf("clock.now with an argument named \"a\\0b\" (json_t):\n");
    check_error(rc, WF_EINVALID, "unknownArgument", NULL, NULL);
    const wf_error *e = wf_error_last();
    CHECK(str_eq(e->message, "clock.now has no argument 'a?b'"),
          "the message shows the whole name, U+0000 as '?' (got \"%s\")", or_null(e->message));
    CHECK(string_is(json_object_get(e->details, "argument"), "a\0b", 3),
          "details.argument keeps the 3 bytes of the name, U+0000 included");
    CHECK(str_has(e->details_json, "\"argument\":\"a\\u0000b\""), "details_json escapes it as \\u0000 (got %s)",
          or_null(e->details_json));
    json_t *reparsed = json_loads(e->details_json, JSON_ALLOW_NUL, NULL);
    CHECK(reparsed && json_equal(reparsed, (json_t *)e->details),
          "details_json parsed with JSON_ALLOW_NUL is the same JSON as details");
    json_decref(reparsed);

    printf("the same through wf_call_text:\n");
    char *text = SENTINEL_TEXT;
    rc = wf_call_text(&text, engine, "clock.now", "{\"a\\u0000b\": 1}");
    check_error(rc, WF_EINVALID, "unknownArgument", NULL, NULL);
    CHECK(text == NULL, "the text out-param is set to NULL");
    e = wf_error_last();
    CHECK(str_eq(e->message, "clock.now has no argument 'a?b'"),
          "the message shows the whole name, U+0000 as '?' (got \"%s\")", or_null(e->message));
    CHECK(string_is(json_object_get(e->details, "argument"), "a\0b", 3), "details.argument keeps U+0000");
    wf_engine_free(engine);
}

/* ---------------------------------------------------------------------------
 * JSON: number kinds, strings that differ in trailing U+0000, config conversion
 * ------------------------------------------------------------------------- */

static void test_json_numbers_keep_kind(void) {
    wf_engine *engine = open_manual_engine();
    /* json_t in, json_t out */
    json_t *xm = json_array();
    json_array_append_new(xm, json_integer(INT64_MAX));
    json_array_append_new(xm, json_integer(INT64_MIN));
    json_array_append_new(xm, json_integer(0));
    json_array_append_new(xm, json_real(4.0));
    json_array_append_new(xm, json_real(-0.0));
    json_array_append_new(xm, json_real(0.1));
    json_array_append_new(xm, json_real(-1e300));
    json_array_append_new(xm, json_real(9007199254740993.0)); /* 2^53 + 1 rounds to 2^53 as a double */
    json_array_append_new(xm, json_integer(9007199254740993)); /* ... but stays exact as an integer */
    json_t *back = x_member_round_trip(engine, xm);
    CHECK(back != NULL, "template.register and template.get succeed (%s)", wf_error_last()->code);
    const json_t *v;
    v = json_array_get(back, 0);
    CHECK(json_is_integer(v) && json_integer_value(v) == INT64_MAX, "INT64_MAX stays an exact integer");
    v = json_array_get(back, 1);
    CHECK(json_is_integer(v) && json_integer_value(v) == INT64_MIN, "INT64_MIN stays an exact integer");
    v = json_array_get(back, 2);
    CHECK(json_is_integer(v) && json_integer_value(v) == 0, "0 stays an integer");
    v = json_array_get(back, 3);
    CHECK(json_is_real(v) && json_real_value(v) == 4.0, "the real 4.0 stays a real");
    v = json_array_get(back, 4);
    CHECK(json_is_real(v) && json_real_value(v) == 0.0 && signbit(json_real_value(v)),
          "the real -0.0 stays a real with its sign");
    v = json_array_get(back, 5);
    CHECK(json_is_real(v) && json_real_value(v) == 0.1, "0.1 stays the same real");
    v = json_array_get(back, 6);
    CHECK(json_is_real(v) && json_real_value(v) == -1e300, "-1e300 stays the same real");
    v = json_array_get(back, 7);
    CHECK(json_is_real(v) && json_real_value(v) == 9007199254740992.0, "2^53 as a real stays a real");
    v = json_array_get(back, 8);
    CHECK(json_is_integer(v) && json_integer_value(v) == 9007199254740993, "2^53 + 1 stays an exact integer");
    json_decref(back);

    /* text in, text out */
    const char *args =
        "{\"template\": {\"schema\": \"app.workflow/v2\", \"name\": \"x\", \"nodes\": ["
        "{\"id\": \"n\", \"kind\": \"K\", \"outputs\": {\"o\": \"ImageRef\"}}],"
        "\"x-m\": [4.0, -0.0, 9223372036854775807, -9223372036854775808, 18446744073709551616, 1e2, 5]}}";
    char *text = NULL;
    int rc = wf_call_text(&text, engine, "template.register", args);
    CHECK(rc == WF_OK, "template.register through wf_call_text succeeds");
    json_t *registered = text ? json_loads(text, 0, NULL) : NULL;
    wf_free(text);
    text = NULL;
    char get[256];
    snprintf(get, sizeof get, "{\"templateId\": \"%s\"}",
             or_null(json_string_value(json_object_get(registered, "templateId"))));
    json_decref(registered);
    rc = wf_call_text(&text, engine, "template.get", get);
    CHECK(rc == WF_OK && text, "template.get through wf_call_text succeeds");
    json_t *got = text ? json_loads(text, 0, NULL) : NULL;
    const json_t *m = json_object_get(json_object_get(got, "template"), "x-m");
    CHECK(json_array_size(m) == 7, "x-m comes back with its 7 numbers (text %s)", or_null(text));
    v = json_array_get(m, 0);
    CHECK(json_is_real(v) && json_real_value(v) == 4.0, "text 4.0 comes back as a real");
    v = json_array_get(m, 1);
    CHECK(json_is_real(v) && json_real_value(v) == 0.0 && signbit(json_real_value(v)), "text -0.0 comes back as -0.0");
    v = json_array_get(m, 2);
    CHECK(json_is_integer(v) && json_integer_value(v) == INT64_MAX, "text 9223372036854775807 stays an exact integer");
    v = json_array_get(m, 3);
    CHECK(json_is_integer(v) && json_integer_value(v) == INT64_MIN, "text -9223372036854775808 stays an exact integer");
    v = json_array_get(m, 4);
    CHECK(json_is_real(v) && json_real_value(v) == 18446744073709551616.0, "text 2^64 (past 64 bits) becomes a real");
    v = json_array_get(m, 5);
    CHECK(json_is_real(v) && json_real_value(v) == 100.0, "text 1e2 (an exponent) is a real");
    v = json_array_get(m, 6);
    CHECK(json_is_integer(v) && json_integer_value(v) == 5, "text 5 is an integer");
    json_decref(got);
    wf_free(text);
    wf_engine_free(engine);
}

static void test_json_strings_trailing_nul(void) {
    /* Short strings that differ only in trailing U+0000 (or are empty) are distinct values and keys. */
    static const struct {
        const char *bytes;
        size_t length;
    } texts[] = {{"", 0}, {"\0", 1}, {"\0\0", 2}, {"v", 1}, {"v\0", 2}, {"v\0\0", 3}, {"\0v", 2}};
    enum { N = sizeof texts / sizeof texts[0] };
    wf_engine *engine = open_manual_engine();
    json_t *xm = json_array(), *keys = json_object();
    for (size_t i = 0; i < N; i++) {
        json_array_append_new(xm, json_stringn(texts[i].bytes, texts[i].length));
        json_object_setn_new(keys, texts[i].bytes, texts[i].length, json_integer((json_int_t)i));
    }
    json_array_append_new(xm, keys);
    json_t *back = x_member_round_trip(engine, xm);
    CHECK(back != NULL, "template.register and template.get succeed (%s)", wf_error_last()->code);
    for (size_t i = 0; i < N; i++) {
        CHECK(string_is(json_array_get(back, i), texts[i].bytes, texts[i].length),
              "value %zu comes back with its %zu bytes", i, texts[i].length);
        const json_t *value = json_object_getn(json_array_get(back, N), texts[i].bytes, texts[i].length);
        CHECK(json_is_integer(value) && json_integer_value(value) == (json_int_t)i, "key %zu (%zu bytes) keeps its value",
              i, texts[i].length);
    }
    CHECK(json_object_size(json_array_get(back, N)) == N, "the object keeps all %d keys", (int)N);
    json_decref(back);

    printf("the same through the text interface (\\u0000 in, \\u0000 out):\n");
    char *text = NULL;
    int rc = wf_call_text(&text, engine, "template.register",
                          "{\"template\": {\"schema\": \"app.workflow/v2\", \"name\": \"t\", \"nodes\": ["
                          "{\"id\": \"n\", \"kind\": \"K\", \"outputs\": {\"o\": \"ImageRef\"}}],"
                          "\"x-m\": [\"\", \"\\u0000\", \"v\", \"v\\u0000\", {\"k\\u0000\": \"\\u0000\"}]}}");
    CHECK(rc == WF_OK && text, "template.register through wf_call_text succeeds");
    json_t *registered = text ? json_loads(text, 0, NULL) : NULL;
    wf_free(text);
    text = NULL;
    char get[256];
    snprintf(get, sizeof get, "{\"templateId\": \"%s\"}",
             or_null(json_string_value(json_object_get(registered, "templateId"))));
    json_decref(registered);
    rc = wf_call_text(&text, engine, "template.get", get);
    CHECK(rc == WF_OK && str_has(text, "\"x-m\":[\"\",\"\\u0000\",\"v\",\"v\\u0000\",{\"k\\u0000\":\"\\u0000\"}]"),
          "the result text carries every U+0000 escaped (got %s)", or_null(text));
    wf_free(text);
    wf_engine_free(engine);
}

/* Objects count as containers exactly like arrays: 512 nested objects convert, 513 are tooDeep. */
static void test_json_depth_limit_objects(void) {
    wf_engine *engine = open_manual_engine();
    for (int containers = 511; containers <= 513; containers++) {
        json_t *args = json_object(), *level = args;
        for (int i = 1; i < containers; i++) {
            json_t *child = json_object();
            json_object_set_new(level, "a", child);
            level = child;
        }
        const char *expected = containers <= 512 ? "unknownArgument" : "tooDeep";
        char *text = json_dumps(args, JSON_COMPACT);
        int rc = wf_call(NULL, engine, "clock.now", args);
        printf("wf_call with args of %d nested objects:\n", containers);
        check_error(rc, WF_EINVALID, expected, NULL, containers <= 512 ? "a" : "args");
        rc = wf_call_text(NULL, engine, "clock.now", text);
        printf("wf_call_text with the same args as text:\n");
        check_error(rc, WF_EINVALID, expected, NULL, containers <= 512 ? "a" : "args_json");
        free(text);
        json_decref(args);
    }
    wf_engine_free(engine);
}

/* wf_libversion and wf_status_name return static text: the same pointer every time. */
static void test_static_texts(void) {
    CHECK(wf_libversion() == wf_libversion(), "wf_libversion() returns the same pointer each time");
    for (int status = 0; status >= -100; status--) {
        const char *first = wf_status_name(status), *second = wf_status_name(status);
        if (first != second) {
            CHECK(0, "wf_status_name(%d) returns the same pointer each time", status);
            return;
        }
    }
    CHECK(1, "wf_status_name(s) returns the same pointer each time for every s in -100...0");
    CHECK(wf_status_name(12345) == wf_status_name(-1) && wf_status_name(INT_MIN) == wf_status_name(INT_MAX),
          "every unknown number shares the one static \"WF_UNKNOWN\"");
}

static void test_json_config(void) {
    printf("wf_engine_open with a JSON null config:\n");
    json_t *null_config = json_null();
    wf_engine *engine = SENTINEL_ENGINE;
    int rc = wf_engine_open(&engine, null_config);
    CHECK(rc == WF_OK && engine && engine != SENTINEL_ENGINE, "a JSON null config opens an engine (rc %d)", rc);
    json_t *info = NULL;
    if (rc == WF_OK) {
        rc = call(&info, engine, "engine.info", NULL);
        CHECK(str_eq(json_string_value(json_object_get(json_object_get(info, "clock"), "mode")), "system") &&
                  str_eq(json_string_value(json_object_get(info, "store")), ":memory:"),
              "with the defaults (system clock, :memory:)");
        json_decref(info);
        wf_engine_free(engine);
    }
    engine = SENTINEL_ENGINE;
    rc = wf_engine_open_text(&engine, "null");
    CHECK(rc == WF_OK && engine && engine != SENTINEL_ENGINE, "config_json \"null\" opens an engine (rc %d)", rc);
    if (rc == WF_OK) wf_engine_free(engine);

    printf("wf_engine_open with a config string of invalid UTF-8:\n");
    json_t *config = json_object();
    json_object_set_new(config, "store", json_stringn_nocheck("s-\xff", 3));
    engine = SENTINEL_ENGINE;
    rc = wf_engine_open(&engine, config);
    check_error(rc, WF_EINVALID, "invalidUTF8", "config.store", "config.store");
    CHECK(engine == NULL, "the engine out-param is set to NULL");
    json_decref(config);

    printf("wf_engine_open with a config nested 600 deep:\n");
    config = nested_args(600, 0);
    engine = SENTINEL_ENGINE;
    rc = wf_engine_open(&engine, config);
    check_error(rc, WF_EINVALID, "tooDeep", "config", "config");
    CHECK(engine == NULL, "the engine out-param is set to NULL");
    json_decref(config);

    printf("wf_engine_open_text with config_json of invalid UTF-8:\n");
    engine = SENTINEL_ENGINE;
    rc = wf_engine_open_text(&engine, "{\"store\": \"s-\xff\"}");
    check_error(rc, WF_EINVALID, "invalidUTF8", "config_json", "config_json");
    CHECK(engine == NULL, "the engine out-param is set to NULL");
}

/* ---------------------------------------------------------------------------
 * Reference counts all the way down, and memory that must not leak
 * ------------------------------------------------------------------------- */

/* Counts nodes of `value` (true, false and null are shared singletons and skipped) whose
 * reference count is not `expected`. */
static size_t refcount_mismatches(const json_t *value, size_t expected) {
    if (!value || json_is_true(value) || json_is_false(value) || json_is_null(value)) return 0;
    size_t bad = value->refcount == expected ? 0 : 1;
    if (json_is_object(value)) {
        const char *key;
        json_t *child;
        json_object_foreach((json_t *)value, key, child) bad += refcount_mismatches(child, 1);
    } else if (json_is_array(value)) {
        size_t i;
        json_t *child;
        json_array_foreach(value, i, child) bad += refcount_mismatches(child, 1);
    }
    return bad;
}

static void test_json_references_deep(void) {
    wf_engine *engine = open_manual_engine();
    json_t *args = parse("{\"template\": {\"schema\": \"app.workflow/v2\", \"name\": \"deep\", \"nodes\": ["
                         "{\"id\": \"n\", \"kind\": \"K\", \"params\": {\"p\": [1, 2.5, \"s\", {\"q\": [[]]}]},"
                         " \"outputs\": {\"o\": \"ImageRef\"}}],"
                         "\"x-m\": {\"a\": [1, [2, {\"b\": \"c\"}], true, null], \"d\": {\"e\": {}}}}}");
    json_t *result = NULL;
    int rc = wf_call(&result, engine, "template.register", args);
    CHECK(rc == WF_OK, "template.register succeeds");
    CHECK(refcount_mismatches(args, 1) == 0, "every value inside the borrowed args still has refcount 1 (%zu differ)",
          refcount_mismatches(args, 1));
    json_decref(args);
    json_t *get = json_pack("{s:O}", "templateId", json_object_get(result, "templateId"));
    json_decref(result);
    result = NULL;
    rc = wf_call(&result, engine, "template.get", get);
    json_decref(get);
    CHECK(rc == WF_OK && json_object_get(json_object_get(result, "template"), "x-m"), "template.get succeeds");
    CHECK(refcount_mismatches(result, 1) == 0, "every value inside the result has refcount 1 (%zu differ)",
          refcount_mismatches(result, 1));
    json_decref(result);

    rc = call(NULL, engine, "template.register", two_cycles_template);
    CHECK(rc == WF_ETEMPLATE, "a failure with nested details");
    const json_t *details = wf_error_last()->details;
    CHECK(json_array_size(json_object_get(details, "errors")) == 2, "details.errors has two entries");
    CHECK(refcount_mismatches(details, 1) == 0, "every value inside the record's details has refcount 1 (%zu differ)",
          refcount_mismatches(details, 1));

    /* The record owns its details: replacing the record drops its reference. */
    json_t *held = json_incref((json_t *)details);
    CHECK(held->refcount == 2, "details held by the record and by this test (refcount 2)");
    rc = call(NULL, engine, "clock.now", NULL);
    CHECK(rc == WF_OK, "the next call succeeds and replaces the record");
    CHECK(held->refcount == 1, "the replaced record released its details (refcount now %zu)", (size_t)held->refcount);
    CHECK(json_array_size(json_object_get(held, "errors")) == 2, "the details this test holds are intact");
    json_decref(held);

    call(NULL, engine, "no.such.op", NULL);
    held = json_incref((json_t *)wf_error_last()->details);
    wf_error_clear();
    CHECK(held->refcount == 1, "wf_error_clear() released the details too (refcount now %zu)", (size_t)held->refcount);
    json_decref(held);
    wf_engine_free(engine);
}

/* Bytes malloc has handed out and not had back (every arena, mmapped blocks included), or 0
 * where glibc's mallinfo2() is missing. */
static size_t heap_in_use(void) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
#else
    return 0;
#endif
}

enum { BIG = 256 * 1024, LEAK_ROUNDS = 32 };
/* Growth allowed over LEAK_ROUNDS rounds: a quarter of what leaking one BIG text a round would add. */
#define LEAK_SLACK ((size_t)LEAK_ROUNDS * BIG / 4)

typedef struct leak_context {
    wf_engine *engine;
    char *big;          /* BIG - 1 letters */
    json_t *template_args; /* a template whose x-m holds `big` */
    char get_args[256];
} leak_context;

static int round_text_result(leak_context *c) {
    char *text = NULL;
    int rc = wf_call_text(&text, c->engine, "template.get", c->get_args);
    int ok = rc == WF_OK && text && strlen(text) > BIG;
    wf_free(text);
    return ok;
}

static int round_json_result(leak_context *c) {
    json_t *result = NULL;
    int ok = call(&result, c->engine, "template.get", c->get_args) == WF_OK &&
             json_string_length(json_object_get(json_object_get(result, "template"), "x-m")) == BIG - 1;
    json_decref(result);
    return ok;
}

static int round_borrowed_args(leak_context *c) {
    json_t *args = json_deep_copy(c->template_args);
    int ok = wf_call(NULL, c->engine, "template.register", args) == WF_OK;
    json_decref(args);
    return ok;
}

static int round_error_record(leak_context *c) {
    json_t *args = json_object();
    json_object_set_new(args, c->big, json_integer(1));
    int rc = wf_call(NULL, c->engine, "clock.now", args);
    json_decref(args);
    return rc == WF_EINVALID && strlen(wf_error_last()->message) > BIG && strlen(wf_error_last()->details_json) > BIG;
}

static int round_engine(leak_context *c) {
    wf_engine *engine = open_manual_engine();
    int ok = wf_call(NULL, engine, "template.register", c->template_args) == WF_OK;
    wf_engine_free(engine);
    return ok;
}

static void *thread_failing_call(void *arg) {
    leak_context *c = arg;
    return (void *)(intptr_t)round_error_record(c);
}

static int round_thread_record(leak_context *c) {
    pthread_t thread;
    void *ok = NULL;
    if (pthread_create(&thread, NULL, thread_failing_call, c) != 0) return 0;
    pthread_join(thread, &ok);
    return ok != NULL;
}

static void check_no_growth(leak_context *c, int (*round)(leak_context *), const char *what) {
    int ok = 1;
    for (int i = 0; i < 3; i++) ok &= round(c); /* warm up caches */
    size_t before = heap_in_use();
    for (int i = 0; i < LEAK_ROUNDS; i++) ok &= round(c);
    size_t after = heap_in_use();
    CHECK(ok, "every round of %s succeeds", what);
    size_t growth = after > before ? after - before : 0;
    CHECK(growth < LEAK_SLACK, "%d rounds of %s leave the heap as it was (grew %zu bytes, limit %zu)", LEAK_ROUNDS, what,
          growth, LEAK_SLACK);
}

static void test_memory_released(void) {
    if (heap_in_use() == 0) {
        printf("  ok   skipped: mallinfo2() is not available\n");
        return;
    }
    leak_context c;
    c.engine = open_manual_engine();
    c.big = malloc(BIG);
    memset(c.big, 'x', BIG - 1);
    c.big[BIG - 1] = '\0';
    c.template_args = parse("{\"template\": {\"schema\": \"app.workflow/v2\", \"name\": \"big\", \"nodes\": ["
                            "{\"id\": \"n\", \"kind\": \"K\", \"outputs\": {\"o\": \"ImageRef\"}}]}}");
    json_object_set_new(json_object_get(c.template_args, "template"), "x-m", json_string(c.big));
    json_t *result = NULL;
    int rc = wf_call(&result, c.engine, "template.register", c.template_args);
    CHECK(rc == WF_OK, "a template holding a %d-byte text registers", BIG - 1);
    snprintf(c.get_args, sizeof c.get_args, "{\"templateId\": \"%s\"}",
             or_null(json_string_value(json_object_get(result, "templateId"))));
    json_decref(result);

    check_no_growth(&c, round_text_result, "wf_call_text + wf_free of a big result");
    check_no_growth(&c, round_json_result, "wf_call + json_decref of a big result");
    check_no_growth(&c, round_borrowed_args, "wf_call with big borrowed args");
    check_no_growth(&c, round_error_record, "failures whose record holds a big message and details");
    check_no_growth(&c, round_engine, "wf_engine_open + a big template + wf_engine_free");
    check_no_growth(&c, round_thread_record, "threads that fail with a big record and exit");

    json_decref(c.template_args);
    free(c.big);
    wf_engine_free(c.engine);
}

/* ---------------------------------------------------------------------------
 * Test table and main
 * ------------------------------------------------------------------------- */

/* X(name, summary): CMake registers one ctest "abi.<name>" per line. */
#define ABI_TESTS(X)                                                                                             \
    X(ok_status, "a successful call returns WF_OK, a result and an ok error record")                            \
    X(invalid_null_out, "WF_EINVALID for a NULL out-param of wf_engine_open / wf_engine_open_text")              \
    X(invalid_null_engine, "WF_EINVALID for a NULL engine")                                                      \
    X(invalid_null_op, "WF_EINVALID for a NULL op")                                                              \
    X(invalid_empty_op, "WF_EINVALID for an empty op")                                                           \
    X(invalid_op_utf8, "WF_EINVALID for an op name of invalid UTF-8")                                            \
    X(invalid_args_utf8, "WF_EINVALID for argument strings of invalid UTF-8")                                    \
    X(invalid_malformed_json_text, "WF_EINVALID for malformed JSON text (args and config)")                      \
    X(invalid_non_object_args, "WF_EINVALID for args that are not an object (json_t and text)")                  \
    X(invalid_deep_nesting, "WF_EINVALID, not a crash, for absurdly deep JSON (json_t and text)")          \
    X(invalid_argument_type, "WF_EINVALID for wrongly typed or missing arguments, naming the argument")          \
    X(invalid_config, "WF_EINVALID for bad config keys and values")                                              \
    X(notfound_template, "WF_ENOTFOUND for an unknown template id")                                              \
    X(state_clock_advance_system, "WF_ESTATE for clock.advance on a system-clock engine")                        \
    X(template_cycle, "WF_ETEMPLATE cycleDetected with details.errors listing every error")                      \
    X(store_missing_folder, "WF_ESTORE for a store inside a folder that does not exist")                         \
    X(store_not_sqlite, "WF_ESTORE for a store path that is not an SQLite file")                                 \
    X(conflict_await_claimed, "WF_ECONFLICT alreadyClaimed for a claim of an await another claimant holds")      \
    X(unsupported_op, "WF_EUNSUPPORTED for an unknown op")                                                       \
    X(status_names, "wf_status_name for every code and for unknown numbers")                                     \
    X(error_record_ok_after_success, "wf_error_last is never NULL and reads {0, ok, \"\", {}} after a success")  \
    X(error_record_fields, "every field of the error record is readable and consistent")                         \
    X(error_record_per_thread, "each thread reads its own error record")                                         \
    X(out_params_null_on_failure, "out-params are set to NULL on failure")                                       \
    X(free_null_noop, "wf_free(NULL) and wf_engine_free(NULL) are no-ops")                                       \
    X(closed_handle_refused, "a closed handle is WF_ESTATE engineClosed in calls and a second close; a second free is a no-op") \
    X(close_while_another_thread_calls, "a close racing another thread's calls: each call runs or answers engineClosed") \
    X(version, "wf_libversion_number / wf_libversion agree with the header")                                     \
    X(default_config, "a NULL config opens an engine with the defaults")                                         \
    X(json_references, "args are borrowed; results are new references owned by the caller")                     \
    X(json_strings_with_nul, "U+0000 in json_t strings and keys is kept, not cut; in a string argument it is refused") \
    X(json_short_strings, "strings of 15-17 bytes differing in the last byte stay distinct (values and keys)")  \
    X(json_depth_limit, "json_t args nested 512 deep convert, 513 are tooDeep (an empty innermost too), as text")          \
    X(json_invalid_utf8, "invalid UTF-8 in a json_t is invalidUTF8 with details.argument the path to it")      \
    X(json_non_finite_reals, "a json_t real holding NaN or an infinity is WF_EINVALID invalidJSON naming its path") \
    X(threads_one_engine, "8 threads x 200 calls on one engine get consistent results")                          \
    X(file_store_persists, "a file store keeps templates, tools and the clock across free + reopen")     \
    X(error_record_reset_by_each_success, "a success of any status-reporting function resets a failure record to ok") \
    X(error_record_left_alone, "wf_error_last, wf_status_name, wf_libversion*, wf_free, wf_engine_free leave the record alone") \
    X(error_message_nul_as_question_mark, "a U+0000 quoted in a message is written as '?'; details keep it")    \
    X(json_numbers_keep_kind, "integers stay exact integers, reals stay reals (4.0, -0.0), 2^64 in text becomes a real") \
    X(json_strings_trailing_nul, "short strings differing only in trailing U+0000, and \"\", stay distinct")      \
    X(json_config, "a JSON null config means defaults; config conversion errors name config.<path>")          \
    X(json_references_deep, "refcount 1 throughout args, results and details; the record drops its details") \
    X(memory_released, "results, records, engines and thread records are freed: the heap does not grow")\
    X(json_depth_limit_objects, "json_t and text args of 512 nested objects convert, 513 are tooDeep")      \
    X(static_texts, "wf_libversion and wf_status_name return static text (the same pointer each time)")

typedef struct test_case {
    const char *name;
    const char *summary;
    void (*run)(void);
} test_case;

#define AS_ENTRY(name, summary) {#name, summary, test_##name},
static const test_case tests[] = {ABI_TESTS(AS_ENTRY)};
#define TEST_COUNT (sizeof tests / sizeof tests[0])

static int run_test(const test_case *test) {
    int before = checks_failed;
    printf("== %s: %s\n", test->name, test->summary);
    test->run();
    int failed = checks_failed - before;
    printf("-- %s: %s\n\n", test->name, failed ? "FAILED" : "passed");
    fflush(stdout);
    return failed == 0;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc == 2 && strcmp(argv[1], "--list") == 0) {
        for (size_t i = 0; i < TEST_COUNT; i++) printf("%s\t%s\n", tests[i].name, tests[i].summary);
        return 0;
    }
    int failed_tests = 0, ran = 0;
    if (argc == 1) {
        for (size_t i = 0; i < TEST_COUNT; i++, ran++) failed_tests += !run_test(&tests[i]);
    } else {
        for (int a = 1; a < argc; a++) {
            size_t i = 0;
            while (i < TEST_COUNT && strcmp(tests[i].name, argv[a]) != 0) i++;
            if (i == TEST_COUNT) {
                fprintf(stderr, "abi_tests: no test named %s (see --list)\n", argv[a]);
                return 2;
            }
            failed_tests += !run_test(&tests[i]);
            ran++;
        }
    }
    printf("%d of %d tests passed\n", ran - failed_tests, ran);
    return failed_tests ? 1 : 0;
}
