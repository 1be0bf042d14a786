/*
 * text_pipeline -- a workflow run end to end through the C interface.
 *
 * This program is a complete host of the engine, in one file:
 *
 *   1. it registers five tools: Text, Uppercase, Append and Reverse run
 *      locally (this program runs them), SpeakRemote runs "remotely" (on a
 *      provider that this program also plays, from a script);
 *   2. it registers the template "Text pipeline":
 *
 *        text1 (Text) → upper1 (Uppercase) → append1 (Append) → speak1 (SpeakRemote)
 *
 *   3. it opens an engine on a file store with a manual clock, creates a
 *      workflow and asks the engine to run every node as soon as it is ready;
 *   4. then it loops: take the effects the engine asks for (run a local tool,
 *      submit a remote job, poll it, ...), answer each with an event, and when
 *      nothing is left to do, move the clock on by 10 seconds, which is when
 *      the engine polls remote jobs;
 *   5. at the end it prints the outputs: the text read back from append1's
 *      output asset, and speak1's audio asset with its provenance.
 *
 * On a store that already holds an unfinished "Text pipeline" workflow, it
 * continues that one: nodes already done stay done, a remote job keeps its
 * job id and is polled again, and a local run that was cut short comes back
 * failed ("interrupted"), which this host retries (node.retry).
 *
 * (003 step 2's manual check, the text sample run to the end, and step 3's
 * DoD, "kill app mid-run and re-launch": ctest example.text_pipeline and
 * example.text_pipeline_resume run it both ways.)
 *
 * Every node state change is printed as it happens, with the engine time:
 *
 *   [00:00:30] speak1   queuedRemote → runningRemote  (42%)
 *
 * Usage:
 *   text-pipeline [--store PATH] [--stop-after SECONDS]
 *
 *   --store PATH          the store file (default: a temporary file, removed at
 *                         the end). Run again on the same store to continue an
 *                         unfinished workflow: every state change is committed
 *                         before the call that made it returns.
 *   --stop-after SECONDS  stop once the workflow has run that long in engine
 *                         time, without closing the engine, as a killed process
 *                         would (exit status 3); run again with the same
 *                         --store to see it continue.
 *
 * Exit status: 0 when the workflow is done and append1's text is
 * "HELLO WORKFLOW!"; 3 when stopped by --stop-after; 1 otherwise.
 *
 * Text assets carry their text in the URI: data:text/plain;charset=utf-8,<percent-encoded>.
 */
#define _POSIX_C_SOURCE 200809L /* mkstemp, strdup, access, unlink */

#include "workflow.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXPECTED_TEXT "HELLO WORKFLOW!"
#define TEXT_URI_PREFIX "data:text/plain;charset=utf-8,"
#define CLOCK_STEP_SECONDS 10
#define MAX_ROUNDS 200

/* ---------------------------------------------------------------------------
 * The tools and the template
 * ------------------------------------------------------------------------- */

static const char *const tool_specs[] = {
    "{\"kind\": \"Text\", \"title\": \"Text\", \"resourceClass\": \"local\","
    " \"inputs\": {}, \"outputs\": {\"text\": \"TextRef\"}, \"summaryParams\": [\"text\"]}",
    "{\"kind\": \"Uppercase\", \"title\": \"Uppercase\", \"resourceClass\": \"local\","
    " \"inputs\": {\"text\": \"TextRef\"}, \"outputs\": {\"text\": \"TextRef\"}}",
    "{\"kind\": \"Append\", \"title\": \"Append\", \"resourceClass\": \"local\","
    " \"inputs\": {\"text\": \"TextRef\"}, \"outputs\": {\"text\": \"TextRef\"},"
    " \"defaults\": {\"suffix\": \"\"}, \"summaryParams\": [\"suffix\"]}",
    "{\"kind\": \"Reverse\", \"title\": \"Reverse\", \"resourceClass\": \"local\","
    " \"inputs\": {\"text\": \"TextRef\"}, \"outputs\": {\"text\": \"TextRef\"}}",
    "{\"kind\": \"SpeakRemote\", \"title\": \"Speak\", \"resourceClass\": \"remote\","
    " \"inputs\": {\"text\": \"TextRef\"}, \"outputs\": {\"audio\": \"AudioRef\"},"
    " \"defaults\": {\"voice\": \"alloy\"}, \"summaryParams\": [\"voice\"]}",
};

static const char *const template_text =
    "{\"schema\": \"app.workflow/v2\", \"name\": \"Text pipeline\","
    " \"nodes\": ["
    "  {\"id\": \"text1\", \"kind\": \"Text\", \"params\": {\"text\": \"hello workflow\"},"
    "   \"outputs\": {\"text\": \"TextRef\"}},"
    "  {\"id\": \"upper1\", \"kind\": \"Uppercase\","
    "   \"inputs\": {\"text\": \"TextRef\"}, \"outputs\": {\"text\": \"TextRef\"}},"
    "  {\"id\": \"append1\", \"kind\": \"Append\", \"params\": {\"suffix\": \"!\"},"
    "   \"inputs\": {\"text\": \"TextRef\"}, \"outputs\": {\"text\": \"TextRef\"}},"
    "  {\"id\": \"speak1\", \"kind\": \"SpeakRemote\", \"resources\": {\"class\": \"remote\"},"
    "   \"inputs\": {\"text\": \"TextRef\"}, \"outputs\": {\"audio\": \"AudioRef\"}}"
    " ],"
    " \"edges\": ["
    "  {\"from\": [\"text1\", \"text\"], \"to\": [\"upper1\", \"text\"]},"
    "  {\"from\": [\"upper1\", \"text\"], \"to\": [\"append1\", \"text\"]},"
    "  {\"from\": [\"append1\", \"text\"], \"to\": [\"speak1\", \"text\"]}"
    " ]}";

/* ---------------------------------------------------------------------------
 * Small helpers
 * ------------------------------------------------------------------------- */

static void fail(const char *format, ...) {
    va_list ap;
    va_start(ap, format);
    fputs("text-pipeline: ", stderr);
    vfprintf(stderr, format, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

/* Calls an op that must succeed and returns its result (a new reference).
 * Takes over `args_stolen` (NULL means no arguments). On failure prints the
 * error record and exits. */
static json_t *call(wf_engine *engine, const char *op, json_t *args_stolen) {
    json_t *result = NULL;
    int status = wf_call(&result, engine, op, args_stolen);
    if (status != WF_OK) {
        const wf_error *e = wf_error_last();
        fail("%s failed: %s %s: %s\n  details: %s", op, wf_status_name(status), e->code, e->message,
             e->details_json);
    }
    json_decref(args_stolen);
    return result;
}

/* Same, for calls whose result is not needed. */
static void call0(wf_engine *engine, const char *op, json_t *args_stolen) {
    json_decref(call(engine, op, args_stolen));
}

static const char *str(const json_t *object, const char *key) {
    const char *s = json_string_value(json_object_get(object, key));
    return s ? s : "";
}

/* Text of an asset URI "data:text/plain;charset=utf-8,<percent-encoded>"
 * (malloc'd), or NULL when it is not such a URI. */
static char *text_from_uri(const char *uri) {
    if (!uri || strncmp(uri, TEXT_URI_PREFIX, strlen(TEXT_URI_PREFIX)) != 0) return NULL;
    const char *p = uri + strlen(TEXT_URI_PREFIX);
    char *out = malloc(strlen(p) + 1), *o = out;
    if (!out) fail("out of memory");
    while (*p) {
        if (p[0] == '%' && isxdigit((unsigned char)p[1]) && isxdigit((unsigned char)p[2])) {
            char hex[3] = {p[1], p[2], 0};
            *o++ = (char)strtol(hex, NULL, 16);
            p += 3;
        } else {
            *o++ = *p++;
        }
    }
    *o = 0;
    return out;
}

/* The data: URI of a text (malloc'd): every byte but ASCII letters and digits percent-encoded. */
static char *uri_from_text(const char *text) {
    size_t n = strlen(TEXT_URI_PREFIX);
    char *out = malloc(n + 3 * strlen(text) + 1), *o;
    if (!out) fail("out of memory");
    memcpy(out, TEXT_URI_PREFIX, n);
    o = out + n;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        if (isalnum(*p) && *p < 128) {
            *o++ = (char)*p;
        } else {
            o += sprintf(o, "%%%02X", *p);
        }
    }
    *o = 0;
    return out;
}

/* A text output asset, as a host reports it: {type, uri, bytes, meta}. */
static json_t *text_asset(const char *text) {
    char *uri = uri_from_text(text);
    json_t *asset = json_pack("{s:s, s:s, s:I, s:{s:s}}", "type", "TextRef", "uri", uri, "bytes",
                              (json_int_t)strlen(text), "meta", "providerSchema", "v1");
    free(uri);
    return asset;
}

/* Seconds since 1970 of "YYYY-MM-DDTHH:MM:SS.mmmZ" (the engine's timestamps are UTC). */
static double parse_time(const char *s) {
    int y, mo, d, h, mi;
    double sec;
    if (!s || sscanf(s, "%d-%d-%dT%d:%d:%lfZ", &y, &mo, &d, &h, &mi, &sec) != 6) return 0;
    /* days from civil (Howard Hinnant's algorithm) */
    y -= mo <= 2;
    long era = (y >= 0 ? y : y - 399) / 400;
    long yoe = y - era * 400;
    long doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    long days = era * 146097 + doe - 719468;
    return (double)days * 86400.0 + h * 3600.0 + mi * 60.0 + sec;
}

/* ---------------------------------------------------------------------------
 * The host: engine time, printing, node state changes
 * ------------------------------------------------------------------------- */

typedef struct node_view {
    char id[32];
    char state[32];
    int progress; /* percent, -1 when none */
} node_view;

typedef struct host {
    wf_engine *engine;
    const char *workflow_id;
    double started;     /* engine time the workflow was created, in seconds */
    node_view nodes[8]; /* the last state printed per node */
    size_t node_count;
    int polls[8];         /* provider script: polls answered per job, by node index */
    char job_ids[8][32];  /* provider: the job created for each node's run */
    int retried;          /* interrupted local runs retried after a reopen */
} host;

static double engine_now(host *h) {
    json_t *now = call(h->engine, "clock.now", NULL);
    double t = parse_time(str(now, "now"));
    json_decref(now);
    return t;
}

/* Prints "[HH:MM:SS] " of the engine time since the workflow started. */
static void stamp(host *h) {
    long s = (long)(engine_now(h) - h->started + 0.5);
    printf("[%02ld:%02ld:%02ld] ", s / 3600, (s / 60) % 60, s % 60);
}

static int progress_percent(const json_t *node) {
    json_t *p = json_object_get(node, "progress");
    return json_is_number(p) ? (int)(json_number_value(p) * 100 + 0.5) : -1;
}

static json_t *get_workflow(host *h) {
    return call(h->engine, "workflow.get", json_pack("{s:s}", "workflowId", h->workflow_id));
}

/* Reads the workflow and prints every node whose state (or remote progress)
 * changed since the last look:  [00:00:30] speak1   queuedRemote → runningRemote  (42%) */
static void print_changes(host *h) {
    json_t *wf = get_workflow(h), *node;
    size_t i;
    json_array_foreach(json_object_get(wf, "nodes"), i, node) {
        if (i >= sizeof h->nodes / sizeof h->nodes[0]) break;
        node_view *v = &h->nodes[i];
        const char *state = str(node, "state");
        int progress = progress_percent(node);
        int remote = strcmp(state, "queuedRemote") == 0 || strcmp(state, "runningRemote") == 0;
        if (strcmp(v->state, state) == 0 && (!remote || progress == v->progress)) continue;
        stamp(h);
        if (strcmp(v->state, state) == 0) {
            printf("%-8s %s", v->id, state);
        } else {
            printf("%-8s %s → %s", v->id, v->state, state);
        }
        if (remote && progress >= 0) printf("  (%d%%)", progress);
        json_t *reason = json_object_get(node, "blockedReason");
        if (reason) printf("  %s", str(reason, "message"));
        json_t *error = json_object_get(node, "lastError");
        if (error && strcmp(state, "failed") == 0) printf("  %s: %s", str(error, "code"), str(error, "message"));
        printf("\n");
        snprintf(v->state, sizeof v->state, "%s", state);
        v->progress = progress;
    }
    json_decref(wf);
}

/* The first look at the workflow: every node and its state. */
static void print_nodes(host *h, json_t *wf) {
    json_t *node;
    size_t i;
    h->node_count = 0;
    json_array_foreach(json_object_get(wf, "nodes"), i, node) {
        if (i >= sizeof h->nodes / sizeof h->nodes[0]) break;
        node_view *v = &h->nodes[h->node_count++];
        snprintf(v->id, sizeof v->id, "%s", str(node, "nodeId"));
        snprintf(v->state, sizeof v->state, "%s", str(node, "state"));
        v->progress = progress_percent(node);
        printf("  %-8s %-12s %s", v->id, str(node, "kind"), v->state);
        if (v->progress >= 0 && strstr(v->state, "Remote")) printf(" (%d%%)", v->progress);
        json_t *reason = json_object_get(node, "blockedReason");
        if (reason) printf("  %s", str(reason, "message"));
        json_t *error = json_object_get(node, "lastError");
        if (error) printf("  %s: %s", str(error, "code"), str(error, "message"));
        printf("\n");
    }
}

static int node_index(host *h, const char *node_id) {
    for (size_t i = 0; i < h->node_count; i++) {
        if (strcmp(h->nodes[i].id, node_id) == 0) return (int)i;
    }
    return -1;
}

/* ---------------------------------------------------------------------------
 * Answering effects
 * ------------------------------------------------------------------------- */

/* local.run {runId, kind, params, inputs}: run the text tool, report local.completed. */
static void run_local_tool(host *h, const json_t *effect) {
    const char *kind = str(effect, "kind");
    const json_t *params = json_object_get(effect, "params");
    json_t *input_asset = json_object_get(json_object_get(effect, "inputs"), "text");
    char *input = input_asset ? text_from_uri(str(input_asset, "uri")) : NULL;
    char *output = NULL;
    const char *in = input ? input : "";
    size_t n = strlen(in);

    if (strcmp(kind, "Text") == 0) {
        output = strdup(str(params, "text"));
    } else if (strcmp(kind, "Uppercase") == 0) {
        output = strdup(in);
        for (char *p = output; *p; p++) *p = (char)toupper((unsigned char)*p);
    } else if (strcmp(kind, "Append") == 0) {
        const char *suffix = str(params, "suffix");
        output = malloc(n + strlen(suffix) + 1);
        if (output) sprintf(output, "%s%s", in, suffix);
    } else if (strcmp(kind, "Reverse") == 0) {
        output = malloc(n + 1);
        if (output) {
            for (size_t i = 0; i < n; i++) output[i] = in[n - 1 - i];
            output[n] = 0;
        }
    }

    stamp(h);
    json_t *args;
    if (output) {
        if (input) {
            printf("  host    ran %s(\"%s\") = \"%s\"  → local.completed\n", kind, in, output);
        } else {
            printf("  host    ran %s = \"%s\"  → local.completed\n", kind, output);
        }
        args = json_pack("{s:s, s:{s:o}}", "runId", str(effect, "runId"), "outputs", "text", text_asset(output));
    } else {
        printf("  host    no tool '%s' here  → local.completed with an error\n", kind);
        args = json_pack("{s:s, s:{s:s, s:s}}", "runId", str(effect, "runId"), "error", "code", "unknownTool",
                         "message", "this host has no such tool");
    }
    call0(h->engine, "local.completed", args);
    free(input);
    free(output);
}

/* The scripted provider. It deduplicates submissions by their idempotency key,
 * as real job APIs do, so its job id is derived from the key: a submission
 * delivered again (after a crash) gets the same job back. */
static void job_id_for(const char *idempotency_key, char *out, size_t size) {
    unsigned long hash = 2166136261UL; /* FNV-1a, 32 bits */
    for (const unsigned char *p = (const unsigned char *)idempotency_key; *p; p++) {
        hash = ((hash ^ *p) * 16777619UL) & 0xffffffffUL;
    }
    snprintf(out, size, "job-%06lx", hash & 0xffffffUL);
}

/* remote.submit {nodeId, runId, kind, params, inputs, idempotencyKey}: the provider accepts the job. */
static void submit_job(host *h, const json_t *effect) {
    int n = node_index(h, str(effect, "nodeId"));
    char job_id[32];
    job_id_for(str(effect, "idempotencyKey"), job_id, sizeof job_id);
    if (n >= 0) {
        snprintf(h->job_ids[n], sizeof h->job_ids[n], "%s", job_id);
        h->polls[n] = 0;
    }
    stamp(h);
    printf("  host    provider accepted job %s  → job.submitted\n", job_id);
    call0(h->engine, "job.submitted", json_pack("{s:s, s:s}", "runId", str(effect, "runId"), "jobId", job_id));
}

/* remote.poll {jobId, runId}: the provider's script, one step per poll:
 * queued, running 42%, running 87%, succeeded with an AudioRef asset. */
static void poll_job(host *h, const json_t *effect) {
    const char *job_id = str(effect, "jobId");
    int n = node_index(h, str(effect, "nodeId"));
    int step = n >= 0 ? ++h->polls[n] : 4;
    /* A job first met after a reopen, already running: the script goes on from there. */
    if (n >= 0 && step == 1 && strcmp(h->nodes[n].state, "runningRemote") == 0) step = h->polls[n] = 3;
    json_t *args;
    stamp(h);
    if (step <= 1) {
        printf("  host    provider: %s is queued  → job.update\n", job_id);
        args = json_pack("{s:s, s:s}", "jobId", job_id, "status", "queued");
    } else if (step <= 3) {
        double progress = step == 2 ? 0.42 : 0.87;
        printf("  host    provider: %s is running, %.0f%% done  → job.update\n", job_id, progress * 100);
        args = json_pack("{s:s, s:s, s:f}", "jobId", job_id, "status", "running", "progress", progress);
    } else {
        char uri[128];
        snprintf(uri, sizeof uri, "https://speech.example/jobs/%s/speech.m4a", job_id);
        printf("  host    provider: %s succeeded, audio at %s  → job.update\n", job_id, uri);
        args = json_pack("{s:s, s:s, s:{s:{s:s, s:s, s:i, s:{s:s, s:s, s:f}}}}", "jobId", job_id, "status",
                         "succeeded", "outputs", "audio", "type", "AudioRef", "uri", uri, "bytes", 48213, "meta",
                         "providerSchema", "v1", "codec", "aac", "seconds", 1.6);
    }
    call0(h->engine, "job.update", args);
}

/* remote.download {runId, port, url}: only asked for when a provider reports
 * {url} outputs (this script reports assets); fetch and report the file. */
static void download(host *h, const json_t *effect) {
    stamp(h);
    printf("  host    downloaded %s  → job.downloaded\n", str(effect, "url"));
    call0(h->engine, "job.downloaded",
          json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}}}", "runId", str(effect, "runId"), "port", str(effect, "port"),
                    "asset", "type", "AudioRef", "uri", str(effect, "url"), "meta", "providerSchema", "v1"));
}

/* Prints one effect on one line. */
static void print_effect(host *h, const json_t *effect) {
    const char *type = str(effect, "type");
    stamp(h);
    printf("  effect  %-14s %-8s", type, str(effect, "nodeId"));
    if (strcmp(type, "local.run") == 0) {
        char *params = json_dumps(json_object_get(effect, "params"), JSON_COMPACT | JSON_SORT_KEYS);
        printf(" %s %s  %s", str(effect, "kind"), params ? params : "{}", str(effect, "runId"));
        free(params);
    } else if (strcmp(type, "remote.submit") == 0) {
        char *text = text_from_uri(str(json_object_get(json_object_get(effect, "inputs"), "text"), "uri"));
        printf(" %s text=\"%s\"  %s  key %s", str(effect, "kind"), text ? text : "?", str(effect, "runId"),
               str(effect, "idempotencyKey"));
        free(text);
    } else if (strcmp(type, "remote.poll") == 0 || strcmp(type, "remote.cancel") == 0) {
        printf(" %s", str(effect, "jobId"));
    } else if (strcmp(type, "remote.download") == 0) {
        printf(" %s %s", str(effect, "port"), str(effect, "url"));
    }
    printf("\n");
}

static void handle_effect(host *h, const json_t *effect) {
    const char *type = str(effect, "type");
    print_effect(h, effect);
    if (strcmp(type, "local.run") == 0) {
        run_local_tool(h, effect);
    } else if (strcmp(type, "remote.submit") == 0) {
        submit_job(h, effect);
    } else if (strcmp(type, "remote.poll") == 0) {
        poll_job(h, effect);
    } else if (strcmp(type, "remote.download") == 0) {
        download(h, effect);
    }
    /* notify, notify.withdraw, remote.cancel and cache.evict need no answer here. */
    print_changes(h);
}

/* A local run cut short by a killed process comes back failed with
 * lastError.code "interrupted", and Retry runs it again with the same inputs. */
static void retry_interrupted(host *h) {
    json_t *wf = get_workflow(h), *node;
    size_t i;
    json_array_foreach(json_object_get(wf, "nodes"), i, node) {
        if (strcmp(str(node, "state"), "failed") != 0) continue;
        if (strcmp(str(json_object_get(node, "lastError"), "code"), "interrupted") != 0) continue;
        stamp(h);
        printf("node.retry %s (its local run was interrupted)\n", str(node, "nodeId"));
        call0(h->engine, "node.retry", json_pack("{s:s, s:s}", "workflowId", h->workflow_id, "nodeId", str(node, "nodeId")));
        h->retried++;
    }
    json_decref(wf);
    print_changes(h);
}

/* ---------------------------------------------------------------------------
 * The outputs
 * ------------------------------------------------------------------------- */

static json_t *get_asset(host *h, const char *asset_id) {
    return call(h->engine, "asset.get", json_pack("{s:s}", "assetId", asset_id));
}

static const char *output_of(const json_t *wf, const char *node_id, const char *port) {
    json_t *node;
    size_t i;
    json_array_foreach(json_object_get(wf, "nodes"), i, node) {
        if (strcmp(str(node, "nodeId"), node_id) == 0) return json_string_value(json_object_get(json_object_get(node, "outputs"), port));
    }
    return NULL;
}

/* Follows an asset back through the runs that made it: each run's
 * node.history entry lists the input assets it consumed. */
static void print_lineage(host *h, const char *asset_id) {
    char current[64];
    snprintf(current, sizeof current, "%s", asset_id);
    printf("    lineage     ");
    for (int depth = 0; depth < 16 && current[0]; depth++) {
        json_t *asset = get_asset(h, current);
        json_t *prov = json_object_get(asset, "provenance");
        const char *node_id = str(prov, "nodeId"), *run_id = str(prov, "runId");
        printf("%s%s (%s %s)", depth ? " ← " : "", current, node_id, run_id);
        current[0] = 0;
        json_t *history = call(h->engine, "node.history", json_pack("{s:s, s:s}", "workflowId", h->workflow_id, "nodeId", node_id));
        json_t *run;
        size_t i;
        json_array_foreach(json_object_get(history, "runs"), i, run) {
            if (strcmp(str(run, "runId"), run_id) != 0) continue;
            const char *key;
            json_t *input;
            json_object_foreach(json_object_get(run, "inputs"), key, input) {
                if (json_is_string(input)) snprintf(current, sizeof current, "%s", json_string_value(input));
                break; /* this pipeline has one input per node */
            }
        }
        json_decref(history);
        json_decref(asset);
    }
    printf("\n");
}

/* Prints the outputs; returns 1 when append1's text is the expected one. */
static int print_outputs(host *h, json_t *wf) {
    int ok = 0;
    printf("\nOutputs\n");

    const char *text_id = output_of(wf, "append1", "text");
    if (text_id) {
        json_t *asset = get_asset(h, text_id);
        char *text = text_from_uri(str(asset, "uri"));
        printf("  append1.text  %s  %s  \"%s\"\n", text_id, str(asset, "type"), text ? text : "?");
        ok = text && strcmp(text, EXPECTED_TEXT) == 0;
        if (!ok) printf("    expected \"%s\"\n", EXPECTED_TEXT);
        free(text);
        json_decref(asset);
    } else {
        printf("  append1.text  (missing)\n");
    }

    const char *audio_id = output_of(wf, "speak1", "audio");
    if (audio_id) {
        json_t *asset = get_asset(h, audio_id);
        json_t *prov = json_object_get(asset, "provenance");
        char *meta = json_dumps(json_object_get(asset, "meta"), JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(6));
        printf("  speak1.audio  %s  %s  %s\n", audio_id, str(asset, "type"), str(asset, "uri"));
        printf("    bytes       %lld\n", (long long)json_integer_value(json_object_get(asset, "bytes")));
        printf("    meta        %s\n", meta ? meta : "{}");
        printf("    created     %s\n", str(asset, "createdAt"));
        printf("    provenance  workflow %s, node %s, run %s, port %s\n", str(prov, "workflowId"), str(prov, "nodeId"),
               str(prov, "runId"), str(prov, "port"));
        print_lineage(h, audio_id);
        free(meta);
        json_decref(asset);
    } else {
        printf("  speak1.audio  (missing)\n");
        ok = 0;
    }
    return ok;
}

/* ---------------------------------------------------------------------------
 * Main
 * ------------------------------------------------------------------------- */

static void usage(FILE *to) {
    fprintf(to, "usage: text-pipeline [--store PATH] [--stop-after SECONDS]\n");
}

/* The most recent unfinished "Text pipeline" workflow of the store, if any
 * (malloc'd id). Unfinished: active, or failed (a local run interrupted by a
 * killed process leaves the workflow failed until it is retried). */
static char *find_unfinished_workflow(wf_engine *engine) {
    json_t *list = call(engine, "workflow.list", json_pack("{s:s, s:s}", "filter", "all", "sort", "recent"));
    json_t *row;
    size_t i;
    char *found = NULL;
    json_array_foreach(json_object_get(list, "rows"), i, row) {
        if (strcmp(str(row, "title"), "Text pipeline") == 0 && strcmp(str(row, "status"), "done") != 0) {
            found = strdup(str(row, "workflowId"));
            break;
        }
    }
    json_decref(list);
    return found;
}

int main(int argc, char **argv) {
    const char *store = NULL;
    double stop_after = -1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--store") == 0 && i + 1 < argc) {
            store = argv[++i];
        } else if (strcmp(argv[i], "--stop-after") == 0 && i + 1 < argc) {
            stop_after = atof(argv[++i]);
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else {
            usage(stderr);
            return 2;
        }
    }
    setvbuf(stdout, NULL, _IOLBF, 0);

    char temp_store[4096];
    const char *tmpdir = getenv("TMPDIR");
    snprintf(temp_store, sizeof temp_store, "%s/text-pipeline-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
    int temporary = store == NULL;
    if (temporary) {
        int fd = mkstemp(temp_store);
        if (fd < 0) fail("cannot create a temporary file");
        close(fd);
        unlink(temp_store); /* the engine creates the store */
        store = temp_store;
    }
    int existed = access(store, F_OK) == 0;

    printf("Workflow engine %s, text pipeline example\n", wf_libversion());
    printf("store  %s (%s)\n\n", store,
           temporary ? "temporary, removed at the end" : existed ? "existing: continuing" : "new");

    /* A manual clock: time moves only when this host says so. On a store that
     * already ran, the clock resumes where it stopped. */
    wf_engine *engine = NULL;
    json_t *config = json_pack("{s:s, s:{s:s, s:s}, s:i, s:s}", "store", store, "clock", "mode", "manual", "start",
                               "2026-01-01T00:00:00.000Z", "seed", 7, "logLevel", "error");
    if (wf_engine_open(&engine, config) != WF_OK) {
        const wf_error *e = wf_error_last();
        fail("opening the engine: %s %s: %s", wf_status_name(e->status), e->code, e->message);
    }
    json_decref(config);

    /* Tools and the template: registering the same again is a no-op, so a
     * host registers them on every start. */
    printf("Tools\n");
    for (size_t i = 0; i < sizeof tool_specs / sizeof tool_specs[0]; i++) {
        json_t *spec = json_loads(tool_specs[i], 0, NULL);
        if (!spec) fail("tool spec %zu is not JSON", i);
        json_t *entry = call(engine, "tool.register", spec);
        char *inputs = json_dumps(json_object_get(entry, "inputs"), JSON_COMPACT);
        char *outputs = json_dumps(json_object_get(entry, "outputs"), JSON_COMPACT);
        printf("  %-12s %-7s inputs %-22s outputs %s\n", str(entry, "kind"), str(entry, "resourceClass"), inputs, outputs);
        free(inputs);
        free(outputs);
        json_decref(entry);
    }
    json_error_t parse_error;
    json_t *template = json_loads(template_text, 0, &parse_error);
    if (!template) fail("the template is not JSON: %s", parse_error.text);
    json_t *registered = call(engine, "template.register", json_pack("{s:o}", "template", template));
    printf("\nTemplate \"%s\"  %s%s\n", str(registered, "name"), str(registered, "templateId"),
           json_is_true(json_object_get(registered, "existing")) ? " (already registered)" : "");
    printf("  text1 (Text) → upper1 (Uppercase) → append1 (Append) → speak1 (SpeakRemote)\n\n");

    host h;
    memset(&h, 0, sizeof h);
    h.engine = engine;
    char *workflow_id = find_unfinished_workflow(engine);
    if (workflow_id) {
        printf("Workflow %s (continuing)\n", workflow_id);
    } else {
        json_t *created = call(engine, "workflow.create", json_pack("{s:s}", "templateId", str(registered, "templateId")));
        workflow_id = strdup(str(created, "workflowId"));
        printf("Workflow %s created\n", workflow_id);
        json_decref(created);
    }
    json_decref(registered);
    h.workflow_id = workflow_id;

    json_t *wf = get_workflow(&h);
    h.started = parse_time(str(wf, "createdAt"));
    print_nodes(&h, wf);
    json_decref(wf);

    printf("\nRunning. Each line starts with the engine time since the workflow was created;\n"
           "  'effect' lines are what the engine asks of the host, 'host' lines what this host did\n"
           "  and the event it answered with, the other lines node state changes. When nothing is\n"
           "  left to do, the host moves the manual clock on by %d s (remote jobs are polled every 10 s).\n\n",
           CLOCK_STEP_SECONDS);
    retry_interrupted(&h);
    /* From now on every node starts by itself as soon as it is ready. */
    json_t *started = call(engine, "workflow.runAllReady", json_pack("{s:s}", "workflowId", workflow_id));
    char *started_text = json_dumps(json_object_get(started, "started"), JSON_COMPACT);
    stamp(&h);
    printf("workflow.runAllReady: nodes start by themselves from now on; started now: %s\n",
           json_array_size(json_object_get(started, "started")) ? started_text : "none");
    free(started_text);
    json_decref(started);
    print_changes(&h);

    const char *status = "active";
    json_t *final = NULL;
    for (int round = 0; round < MAX_ROUNDS; round++) {
        json_t *taken = call(engine, "effects.take", NULL);
        json_t *effects = json_object_get(taken, "effects"), *effect;
        size_t i;
        json_array_foreach(effects, i, effect) handle_effect(&h, effect);
        size_t handled = json_array_size(effects);
        json_decref(taken);

        json_decref(final);
        final = get_workflow(&h);
        status = str(final, "status");
        if (strcmp(status, "active") != 0) break;
        if (handled > 0) continue; /* answers may have made more work: take it first */

        if (stop_after >= 0 && engine_now(&h) - h.started >= stop_after) {
            stamp(&h);
            printf("stopping here without closing the engine (--stop-after %g).\n", stop_after);
            printf("Run again with --store %s to continue.\n", store);
            fflush(stdout);
            _exit(3); /* like a killed process: nothing freed, nothing closed */
        }
        json_t *now = call(engine, "clock.advance", json_pack("{s:i}", "seconds", CLOCK_STEP_SECONDS));
        json_decref(now);
        stamp(&h);
        printf("clock.advance %d s\n", CLOCK_STEP_SECONDS);
        print_changes(&h);
    }

    int ok = strcmp(status, "done") == 0;
    stamp(&h);
    printf("workflow %s is %s: %lld of %lld steps done", workflow_id, status,
           (long long)json_integer_value(json_object_get(final, "stepsDone")),
           (long long)json_integer_value(json_object_get(final, "stepsTotal")));
    if (h.retried) printf(" (%d interrupted run%s retried)", h.retried, h.retried == 1 ? "" : "s");
    printf("\n");
    if (!print_outputs(&h, final)) ok = 0;
    json_decref(final);

    free(workflow_id);
    /* Closing puts every commit on disk, and says so when the disk refused. */
    if (wf_engine_close(engine) != WF_OK) {
        const wf_error *e = wf_error_last();
        printf("closing the engine: %s: %s\n", e->code, e->message);
        ok = 0;
    }
    printf("\n%s\n", ok ? "OK: the workflow is done and append1 says \"" EXPECTED_TEXT "\"."
                        : "FAILED: the workflow did not finish with the expected text.");
    if (temporary) {
        /* The store, SQLite's side files (-journal only outside WAL mode) and
           the engine's journal (-wfjournal). */
        const char *suffixes[] = {"", "-wal", "-shm", "-journal", "-wfjournal"};
        for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
            char path[sizeof temp_store + 16];
            snprintf(path, sizeof path, "%s%s", temp_store, suffixes[i]);
            unlink(path);
        }
    }
    return ok ? 0 : 1;
}
