/*
 * header_check.c -- compiles include/workflow.h on its own.
 *
 * Built four times (C99, C11, C++11 via header_check.cpp, C++17) with
 * -Wall -Wextra -pedantic -Werror. workflow.h is the first include, so it must
 * stand alone. Compile-time checks pin the version arithmetic, the status
 * values and the layout of wf_error; the function-pointer assignments pin
 * every declaration to the signature in DESIGN.md section 3. At run time the
 * program checks that the library behind the header agrees with it.
 */
#include "workflow.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#if defined(__cplusplus)
#  define WF_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#  define WF_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#else
#  define WF_CONCAT_(a, b) a##b
#  define WF_CONCAT(a, b) WF_CONCAT_(a, b)
#  define WF_STATIC_ASSERT(cond, msg) typedef char WF_CONCAT(wf_static_assert_line_, __LINE__)[(cond) ? 1 : -1]
#endif

/* Versions. */
WF_STATIC_ASSERT(WF_VERSION_NUMBER == WF_VERSION_MAJOR * 10000 + WF_VERSION_MINOR * 100 + WF_VERSION_PATCH,
                 "WF_VERSION_NUMBER must be MAJOR*10000 + MINOR*100 + PATCH");
WF_STATIC_ASSERT(WF_VERSION_MINOR < 100 && WF_VERSION_PATCH < 100, "minor and patch must fit in two digits");
WF_STATIC_ASSERT(sizeof(WF_VERSION) > 5, "WF_VERSION must be a string literal like \"0.1.0\"");

/* Status codes (DESIGN.md section 3). */
WF_STATIC_ASSERT(WF_OK == 0, "WF_OK");
WF_STATIC_ASSERT(WF_EINVALID == -2, "WF_EINVALID");
WF_STATIC_ASSERT(WF_ENOTFOUND == -3, "WF_ENOTFOUND");
WF_STATIC_ASSERT(WF_ESTATE == -4, "WF_ESTATE");
WF_STATIC_ASSERT(WF_ETEMPLATE == -5, "WF_ETEMPLATE");
WF_STATIC_ASSERT(WF_ECONFLICT == -6, "WF_ECONFLICT");
WF_STATIC_ASSERT(WF_ESTORE == -7, "WF_ESTORE");
WF_STATIC_ASSERT(WF_EUNSUPPORTED == -8, "WF_EUNSUPPORTED");
WF_STATIC_ASSERT(WF_ITEROVER == -31, "WF_ITEROVER");
WF_STATIC_ASSERT(WF_EINTERNAL == -99, "WF_EINTERNAL");

/* Layout of the error record: five fields in order, naturally aligned, no trailing surprises. */
WF_STATIC_ASSERT(offsetof(wf_error, status) == 0, "status comes first");
WF_STATIC_ASSERT(sizeof(((wf_error *)0)->status) == sizeof(int), "status is an int");
WF_STATIC_ASSERT(offsetof(wf_error, code) >= sizeof(int), "code follows status");
WF_STATIC_ASSERT(offsetof(wf_error, code) % sizeof(const char *) == 0, "code is pointer-aligned");
WF_STATIC_ASSERT(offsetof(wf_error, message) == offsetof(wf_error, code) + sizeof(const char *), "message follows code");
WF_STATIC_ASSERT(offsetof(wf_error, details) == offsetof(wf_error, message) + sizeof(const char *), "details follows message");
WF_STATIC_ASSERT(offsetof(wf_error, details_json) == offsetof(wf_error, details) + sizeof(const json_t *),
                 "details_json follows details");
WF_STATIC_ASSERT(sizeof(wf_error) == offsetof(wf_error, details_json) + sizeof(const char *), "nothing after details_json");

/* Every function with the signature of the contract. A mismatch is a compile error
 * (C++) or an incompatible-pointer warning turned error (C). */
static int (*const check_engine_open)(wf_engine **, const json_t *) = wf_engine_open;
static int (*const check_engine_open_text)(wf_engine **, const char *) = wf_engine_open_text;
static void (*const check_engine_free)(wf_engine *) = wf_engine_free;
static int (*const check_engine_close)(wf_engine *) = wf_engine_close;
static int (*const check_call)(json_t **, wf_engine *, const char *, const json_t *) = wf_call;
static int (*const check_call_text)(char **, wf_engine *, const char *, const char *) = wf_call_text;
static const wf_error *(*const check_error_last)(void) = wf_error_last;
static void (*const check_error_clear)(void) = wf_error_clear;
static void (*const check_free)(void *) = wf_free;
static int (*const check_libversion_number)(void) = wf_libversion_number;
static const char *(*const check_libversion)(void) = wf_libversion;
static const char *(*const check_status_name)(int) = wf_status_name;

#define WF_STR_(x) #x
#define WF_STR(x) WF_STR_(x)

int main(void) {
    int failures = 0;
    const char *language =
#if defined(__cplusplus)
        "C++";
#else
        "C";
#endif
    long standard =
#if defined(__cplusplus)
        (long)__cplusplus;
#else
        (long)__STDC_VERSION__;
#endif
    printf("workflow.h compiled as %s (%ld) with -Wall -Wextra -pedantic -Werror\n", language, standard);

    /* Use every declaration once through its checked pointer (C linkage from C++ too). */
    {
        wf_engine *engine = NULL;
        json_t *result = NULL;
        char *text = NULL;
        int ok = check_engine_open(&engine, NULL) == WF_OK && engine != NULL;
        ok = ok && check_call(&result, engine, "clock.now", NULL) == WF_OK && json_is_object(result);
        json_decref(result);
        ok = ok && check_call_text(&text, engine, "clock.now", NULL) == WF_OK && text != NULL && text[0] == '{';
        check_free(text);
        check_engine_free(engine);
        engine = NULL;
        ok = ok && check_engine_open_text(&engine, "{}") == WF_OK && engine != NULL;
        check_engine_free(engine);
        engine = NULL;
        ok = ok && check_engine_open(&engine, NULL) == WF_OK && engine != NULL;
        ok = ok && check_engine_close(engine) == WF_OK && check_engine_close(NULL) == WF_OK;
        ok = ok && check_call(NULL, NULL, "clock.now", NULL) == WF_EINVALID && check_error_last()->status == WF_EINVALID;
        check_error_clear();
        ok = ok && check_error_last()->status == WF_OK && strcmp(check_libversion(), WF_VERSION) == 0;
        if (!ok) {
            printf("FAIL: calling the library through the declarations of the header\n");
            failures++;
        } else {
            printf("ok: every declaration links and behaves (open, call, call_text, free, close, error_last/clear, versions)\n");
        }
    }

    if (strcmp(WF_VERSION, WF_STR(WF_VERSION_MAJOR) "." WF_STR(WF_VERSION_MINOR) "." WF_STR(WF_VERSION_PATCH)) != 0) {
        printf("FAIL: WF_VERSION \"%s\" is not MAJOR.MINOR.PATCH\n", WF_VERSION);
        failures++;
    } else {
        printf("ok: WF_VERSION \"%s\" spells MAJOR.MINOR.PATCH\n", WF_VERSION);
    }
    if (check_libversion_number() != WF_VERSION_NUMBER) {
        printf("FAIL: wf_libversion_number() is %d, the header says %d\n", check_libversion_number(), WF_VERSION_NUMBER);
        failures++;
    } else {
        printf("ok: wf_libversion_number() == WF_VERSION_NUMBER (%d)\n", WF_VERSION_NUMBER);
    }
    if (strcmp(check_status_name(WF_EINVALID), "WF_EINVALID") != 0) {
        printf("FAIL: wf_status_name(WF_EINVALID) is \"%s\"\n", check_status_name(WF_EINVALID));
        failures++;
    } else {
        printf("ok: wf_status_name(WF_EINVALID) through the header\n");
    }
    printf("%s\n", failures ? "header check FAILED" : "header check passed");
    return failures ? 1 : 0;
}
