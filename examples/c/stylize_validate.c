/*
 * stylize_validate -- a first C host of the workflow engine.
 *
 * Opens an engine with a manual clock, registers the tools of the sample
 * template "Stylize with user mask" (000_5e92a933bf273eed.txt, section 3),
 * validates the template and a broken variant of it, registers the good one
 * and prints its canonical export.
 *
 *   stylize-example [TEMPLATE.json]      (build/examples/c/stylize-example)
 *
 * The template defaults to examples/c/stylize_template.json, found through
 * its absolute path (a compile definition), so it runs from any folder.
 *
 * Exits 0 only when the good template is valid and the broken one is not.
 */
#include "workflow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef WF_STYLIZE_TEMPLATE_PATH
#define WF_STYLIZE_TEMPLATE_PATH "stylize_template.json"
#endif

/* The tools the template's nodes use, with ports matching the template. The
 * interactive node (UserMaskEditor) needs no tool: the engine files an await. */
static const char *const tools[] = {
    "{\"kind\": \"ImageLoader\", \"title\": \"Load image\", \"resourceClass\": \"local\","
    " \"inputs\": {}, \"outputs\": {\"image\": \"ImageRef\"}}",
    "{\"kind\": \"StylizeRemote\", \"title\": \"Stylize\", \"resourceClass\": \"remote\","
    " \"inputs\": {\"image\": \"ImageRef\", \"mask\": \"MaskRef\"}, \"outputs\": {\"image\": \"ImageRef\"},"
    " \"defaults\": {\"steps\": 30, \"cfg\": 4.0}, \"summaryParams\": [\"steps\", \"cfg\"]}",
    "{\"kind\": \"CompressLocal\", \"title\": \"Compress\", \"resourceClass\": \"local\","
    " \"inputs\": {\"image\": \"ImageRef\"}, \"outputs\": {\"file\": \"FileRef\"}}",
};

/* Calls an op; on failure prints the error record and returns NULL. */
static json_t *call(wf_engine *engine, const char *op, const json_t *args) {
    json_t *result = NULL;
    int status = wf_call(&result, engine, op, args);
    if (status != WF_OK) {
        const wf_error *error = wf_error_last();
        fprintf(stderr, "%s failed: %s %s: %s\n  details: %s\n", op, wf_status_name(status), error->code,
                error->message, error->details_json);
        return NULL;
    }
    return result;
}

static void print_json(const char *title, const json_t *value) {
    char *text = json_dumps(value, JSON_INDENT(2));
    printf("%s\n%s\n\n", title, text ? text : "(cannot print)");
    free(text);
}

/* The broken variant: the mask edge goes to stylize1.image (a MaskRef into an
 * ImageRef port: portTypeMismatch), and stylize1.image feeds mask1 back (a cycle). */
static json_t *break_template(const json_t *good) {
    json_t *broken = json_deep_copy(good);
    json_t *edges = json_object_get(broken, "edges");
    size_t i;
    json_t *edge;
    json_array_foreach(edges, i, edge) {
        const char *producer = json_string_value(json_array_get(json_object_get(edge, "from"), 0));
        if (producer && strcmp(producer, "mask1") == 0) {
            json_object_set_new(edge, "to", json_pack("[ss]", "stylize1", "image"));
        }
    }
    json_array_append_new(edges, json_pack("{s:[ss], s:[ss]}", "from", "stylize1", "image", "to", "mask1", "image"));
    json_object_set_new(broken, "name", json_string("Stylize with user mask (broken)"));
    return broken;
}

/* template.validate of `template`: prints the result; returns 1 valid, 0 invalid, -1 on error. */
static int validate(wf_engine *engine, const char *title, const json_t *template) {
    json_t *args = json_pack("{s:O}", "template", template);
    json_t *result = call(engine, "template.validate", args);
    json_decref(args);
    if (!result) return -1;
    print_json(title, result);
    int valid = json_is_true(json_object_get(result, "valid"));
    json_decref(result);
    return valid;
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : WF_STYLIZE_TEMPLATE_PATH;
    json_error_t parse_error;
    json_t *template = json_load_file(path, 0, &parse_error);
    if (!template) {
        fprintf(stderr, "cannot read %s: %s (line %d)\n", path, parse_error.text, parse_error.line);
        return 1;
    }

    printf("libworkflow %s (header %s)\n\n", wf_libversion(), WF_VERSION);
    wf_engine *engine = NULL;
    if (wf_engine_open_text(&engine, "{\"clock\": {\"mode\": \"manual\", \"start\": \"2026-01-01T00:00:00.000Z\"}}") !=
        WF_OK) {
        fprintf(stderr, "wf_engine_open failed: %s: %s\n", wf_error_last()->code, wf_error_last()->message);
        json_decref(template);
        return 1;
    }

    int ok = 1;
    for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++) {
        json_t *tool = json_loads(tools[i], 0, NULL);
        json_t *entry = call(engine, "tool.register", tool);
        if (entry) printf("registered tool %s\n", json_string_value(json_object_get(entry, "kind")));
        else ok = 0;
        json_decref(entry);
        json_decref(tool);
    }
    printf("\n");

    json_t *broken = break_template(template);
    int good_valid = validate(engine, "template.validate (the sample template):", template);
    int broken_valid = validate(engine, "template.validate (the broken variant):", broken);

    json_t *args = json_pack("{s:O}", "template", template);
    json_t *registered = call(engine, "template.register", args);
    json_decref(args);
    if (registered) {
        const char *template_id = json_string_value(json_object_get(registered, "templateId"));
        printf("registered templateId: %s\n\n", template_id);
        args = json_pack("{s:s}", "templateId", template_id);
        json_t *exported = call(engine, "template.export", args);
        json_decref(args);
        if (exported) printf("canonical export:\n%s\n", json_string_value(json_object_get(exported, "text")));
        else ok = 0;
        json_decref(exported);
        json_decref(registered);
    } else {
        ok = 0;
    }

    json_decref(broken);
    json_decref(template);
    wf_engine_free(engine);

    if (ok && good_valid == 1 && broken_valid == 0) {
        printf("good template is valid and the broken one is not\n");
        return 0;
    }
    printf("unexpected: good template valid=%d, broken template valid=%d, calls ok=%d\n", good_valid, broken_valid, ok);
    return 1;
}
