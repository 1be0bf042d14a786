/* engine_checks -- checks and calls shared by the chosen-moment programs (engine_checks.h). */
#define _POSIX_C_SOURCE 200809L

#include "engine_checks.h"

#include "power_loss.h"

#include <stdlib.h>
#include <string.h>

int checks_failed;

const char *or_null(const char *s) { return s ? s : "(null)"; }

static wf_engine *open_engine_folding(const char *store, const char *durability, int background) {
    json_t *config = json_pack("{s:s, s:{s:s, s:s}, s:s, s:s, s:b}", "store", store, "clock", "mode", "manual", "start",
                               "2026-01-01T00:00:00.000Z", "durability", durability, "logLevel", "critical",
                               "backgroundWrites", background);
    wf_engine *engine = NULL;
    int rc = wf_engine_open(&engine, config);
    json_decref(config);
    CHECK(rc == WF_OK && engine, "the engine opens on %s (\"durability\": \"%s\"%s): %s", store, durability,
          background ? ", the journal folded in the background" : "", rc == WF_OK ? "ok" : wf_error_last()->message);
    return rc == WF_OK ? engine : NULL;
}

wf_engine *open_engine(const char *store, const char *durability) { return open_engine_folding(store, durability, 0); }

wf_engine *open_engine_in_background(const char *store, const char *durability) {
    return open_engine_folding(store, durability, 1);
}

char *clock_now(wf_engine *engine) {
    json_t *result = NULL;
    int rc = wf_call(&result, engine, "clock.now", NULL);
    char *now = strdup(rc == WF_OK ? or_null(json_string_value(json_object_get(result, "now"))) : "(failed)");
    json_decref(result);
    return now;
}

int clock_advance(wf_engine *engine, int seconds) {
    json_t *args = json_pack("{s:i}", "seconds", seconds);
    int rc = wf_call(NULL, engine, "clock.advance", args);
    json_decref(args);
    return rc;
}

json_t *call_text(wf_engine *engine, const char *op, const char *args) {
    json_t *result = NULL;
    char *text = NULL;
    int rc = wf_call_text(&text, engine, op, args);
    if (rc == WF_OK) result = json_loads(text, 0, NULL);
    wf_free(text);
    CHECK(rc == WF_OK && result, "%s: %s", op, rc == WF_OK ? "ok" : wf_error_last()->message);
    return result;
}

void create_one_remote_node_workflow(wf_engine *engine, char *workflow_args, size_t size) {
    static const char *const tool = "{\"kind\": \"GenerateRemote\", \"resourceClass\": \"remote\", \"inputs\": {}, "
                                    "\"outputs\": {\"image\": \"ImageRef\"}}";
    static const char *const template = "{\"template\": {\"schema\": \"app.workflow/v2\", \"name\": \"One\", \"nodes\": ["
                                        "{\"id\": \"load1\", \"kind\": \"GenerateRemote\", "
                                        "\"outputs\": {\"image\": \"ImageRef\"}}], \"edges\": []}}";
    json_decref(call_text(engine, "tool.register", tool));
    json_t *registered = call_text(engine, "template.register", template);
    char args[256];
    snprintf(args, sizeof args, "{\"templateId\": \"%s\"}",
             or_null(json_string_value(json_object_get(registered, "templateId"))));
    json_decref(registered);
    json_t *created = call_text(engine, "workflow.create", args);
    snprintf(workflow_args, size, "{\"workflowId\": \"%s\"}",
             or_null(json_string_value(json_object_get(created, "workflowId"))));
    json_decref(created);
}

int store_with_one_remote_node_workflow(const char *store, char *workflow_args, size_t size) {
    power_loss_remove_store(store);
    wf_engine *engine = open_engine(store, "normal");
    if (!engine) return 0;
    create_one_remote_node_workflow(engine, workflow_args, size);
    int closed = wf_engine_close(engine) == WF_OK;
    CHECK(closed, "closed with the workflow created");
    return closed;
}

int checks_report(void) {
    printf("%s: %d failure%s\n", checks_failed ? "FAILED" : "PASSED", checks_failed, checks_failed == 1 ? "" : "s");
    return checks_failed ? 1 : 0;
}
