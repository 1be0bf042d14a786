/*
 * close-on-failing-disk -- wf_engine_close() reports final writes the disk refused.
 *
 * Runs with powercut_shim.so preloaded (LD_PRELOAD) and POWERCUT_STORE naming the store
 * (absolute path); the store's folder must exist. For each durability: open an engine on a
 * fresh file store, change its state (clock.advance, committed through the store's journal),
 * make every write and sync of the store's files fail (the shim's powercut_set_failing), and
 * close it: wf_engine_close() must return WF_ESTORE "storeWriteFailed" with details naming the
 * store and the durability. Then, with the disk working again, the store must reopen with the
 * change (the next open replays the journal) and close with WF_OK. Also: a close with nothing
 * failing is WF_OK with the record cleared, NULL is WF_OK, and an in-memory engine closes
 * WF_OK. And on "full", a call whose journal record cannot be synced (only the syncs failing)
 * leaves no record another engine would replay, and the journal takes nothing more; on
 * "normal", a call while every read fails is refused with a disk's code (not storeInUse), and
 * the next call goes through. Exit status 0 when every check holds.
 */
#define _GNU_SOURCE

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <workflow.h>

#include "engine_checks.h"
#include "power_loss.h"

/* An engine on a fresh store of `durability` whose clock has moved 90 s (committed), or NULL. */
static wf_engine *engine_after_a_commit(const char *store, const char *durability) {
    power_loss_remove_store(store);
    wf_engine *engine = open_engine(store, durability);
    if (engine) CHECK(clock_advance(engine, 90) == WF_OK, "clock.advance 90 s is committed");
    return engine;
}

static void close_on_a_failing_disk(const char *store, const char *durability, void (*set_failing)(int)) {
    printf("-- durability %s\n", durability);
    wf_engine *engine = engine_after_a_commit(store, durability);
    if (!engine) return;

    set_failing(1);
    int rc = wf_engine_close(engine);
    const wf_error *e = wf_error_last();
    CHECK(rc == WF_ESTORE && e->status == WF_ESTORE, "closing on a disk that refuses every write: WF_ESTORE (got %s)",
          wf_status_name(rc));
    CHECK(strcmp(e->code, "storeWriteFailed") == 0, "code storeWriteFailed (got %s: %s)", e->code, e->message);
    CHECK(strcmp(or_null(json_string_value(json_object_get(e->details, "store"))), store) == 0 &&
              strcmp(or_null(json_string_value(json_object_get(e->details, "durability"))), durability) == 0,
          "details name the store and the durability (%s)", e->details_json);
    set_failing(0);

    engine = open_engine(store, durability);
    if (!engine) return;
    char *now = clock_now(engine);
    CHECK(strcmp(now, "2026-01-01T00:01:30.000Z") == 0,
          "reopened with the disk working again: the change is there, replayed from the journal (clock %s)", now);
    free(now);
    rc = wf_engine_close(engine);
    CHECK(rc == WF_OK && wf_error_last()->status == WF_OK && strcmp(wf_error_last()->code, "ok") == 0,
          "closing with every write accepted: WF_OK, the record cleared (got %s)", wf_status_name(rc));

    engine = open_engine(store, durability);
    if (!engine) return;
    now = clock_now(engine);
    CHECK(strcmp(now, "2026-01-01T00:01:30.000Z") == 0, "and it is there after that close too (clock %s)", now);
    free(now);
    CHECK(wf_engine_close(engine) == WF_OK, "closed again");
    power_loss_remove_store(store);
}

/* The run of node load1 (workflow.get), or "(none)". */
static const char *node_run(json_t *workflow) {
    json_t *node;
    size_t i;
    json_array_foreach(json_object_get(workflow, "nodes"), i, node) {
        if (strcmp(or_null(json_string_value(json_object_get(node, "nodeId"))), "load1") == 0)
            return json_is_string(json_object_get(node, "runId")) ? json_string_value(json_object_get(node, "runId"))
                                                                 : "(none)";
    }
    return "(no node load1)";
}

/* clock.advance 30 s while the disk fails in `mode` (powercut_set_failing): its status. */
static int advance_while_failing(wf_engine *engine, void (*set_failing)(int), int mode) {
    set_failing(mode);
    int rc = clock_advance(engine, 30);
    set_failing(0);
    return rc;
}

/* On "full", a call whose journal record cannot be synced fails, and its record is cut off
 * again: an engine opening the store after (as after a kill) does not replay it. The cut is not
 * synced either (syncs still fail), so the journal takes nothing more until the store is
 * opened again: a later call on the first engine is refused, the disk working or not. */
static void a_call_whose_sync_fails_leaves_no_record(const char *store, void (*set_failing)(int)) {
    printf("-- durability full, a journal record whose sync fails\n");
    wf_engine *engine = engine_after_a_commit(store, "full");
    if (!engine) return;
    int rc = advance_while_failing(engine, set_failing, 2); /* syncs only */
    CHECK(rc == WF_ESTORE && strcmp(wf_error_last()->code, "storeWriteFailed") == 0,
          "clock.advance 30 s whose record cannot be synced: WF_ESTORE storeWriteFailed (got %s: %s)",
          wf_status_name(rc), wf_error_last()->message);
    char *now = clock_now(engine);
    CHECK(strcmp(now, "2026-01-01T00:01:30.000Z") == 0, "the engine's clock is as before the call (%s)", now);
    free(now);
    rc = clock_advance(engine, 5);
    CHECK(rc == WF_ESTORE && strstr(wf_error_last()->message, "could not be restored"),
          "with the cut not synced the journal takes nothing more: WF_ESTORE (got %s: %s)", wf_status_name(rc),
          wf_error_last()->message);
    wf_engine *next = open_engine(store, "full"); /* the engine still open is as good as killed */
    if (next) {
        now = clock_now(next);
        CHECK(strcmp(now, "2026-01-01T00:01:30.000Z") == 0,
              "an engine opening the store finds the journal without the failed record (clock %s)", now);
        free(now);
        CHECK(wf_engine_close(next) == WF_OK, "which closes WF_OK");
    }
    CHECK(wf_engine_close(engine) == WF_OK, "the first engine, no longer the store's owner, closes with nothing to report");
    power_loss_remove_store(store);
}

/* A call while the disk refuses reads (the journal's header, which an append reads to know the
 * journal is still this engine's): refused with a disk's code, not storeInUse (which would tell
 * the host another engine took the store over), and the next call, the disk working again, goes
 * through. */
static void a_call_while_reads_fail(const char *store, void (*set_failing)(int)) {
    printf("-- durability normal, a call while every read of the store's files fails\n");
    wf_engine *engine = engine_after_a_commit(store, "normal");
    if (!engine) return;
    int rc = advance_while_failing(engine, set_failing, 4); /* reads only */
    const wf_error *e = wf_error_last();
    CHECK(rc == WF_ESTORE && (strcmp(e->code, "storeWriteFailed") == 0 || strcmp(e->code, "storeReadFailed") == 0),
          "clock.advance 30 s: WF_ESTORE with a disk's code, not storeInUse (got %s %s: %s)", wf_status_name(rc),
          e->code, e->message);
    rc = clock_advance(engine, 5);
    CHECK(rc == WF_OK, "with the disk working again the next call goes through (got %s)", wf_status_name(rc));
    char *now = clock_now(engine);
    CHECK(strcmp(now, "2026-01-01T00:01:35.000Z") == 0, "the clock moved by the calls that went through (%s)", now);
    free(now);
    CHECK(wf_engine_close(engine) == WF_OK, "closed");
    power_loss_remove_store(store);
}

/* On "normal", a commit the journal does not take (one inserting effects) is written straight to
 * the tables without a sync: the close's checkpoint puts it on disk, and reports when it cannot. */
static void close_after_a_direct_commit(const char *store, void (*set_failing)(int)) {
    printf("-- durability normal, the last commit written straight to the tables\n");
    char workflow_args[256];
    if (!store_with_one_remote_node_workflow(store, workflow_args, sizeof workflow_args)) return;
    wf_engine *engine = open_engine(store, "normal");
    if (!engine) return;
    json_decref(call_text(engine, "workflow.runAllReady", workflow_args));
    json_t *workflow = call_text(engine, "workflow.get", workflow_args);
    char *run = strdup(node_run(workflow));
    json_decref(workflow);
    set_failing(1);
    int rc = wf_engine_close(engine);
    set_failing(0);
    CHECK(rc == WF_ESTORE && strcmp(wf_error_last()->code, "storeWriteFailed") == 0,
          "its checkpoint refused: WF_ESTORE storeWriteFailed (got %s: %s)", wf_status_name(rc), wf_error_last()->message);
    engine = open_engine(store, "normal");
    if (!engine) return;
    workflow = call_text(engine, "workflow.get", workflow_args);
    CHECK(strcmp(node_run(workflow), run) == 0 && strncmp(run, "run-", 4) == 0,
          "reopened: node load1 has the run runAllReady started (%s; before the close %s)", node_run(workflow), run);
    json_decref(workflow);
    free(run);
    CHECK(wf_engine_close(engine) == WF_OK, "closed again");
    power_loss_remove_store(store);
}

int main(void) {
    const char *store = getenv("POWERCUT_STORE");
    void (*set_failing)(int) = (void (*)(int))dlsym(RTLD_DEFAULT, "powercut_set_failing");
    if (!store || !*store || !set_failing) {
        fprintf(stderr, "close-on-failing-disk: run with LD_PRELOAD=powercut_shim.so and POWERCUT_STORE=<absolute store path>\n");
        return 2;
    }
    close_on_a_failing_disk(store, "normal", set_failing);
    close_on_a_failing_disk(store, "full", set_failing);
    close_after_a_direct_commit(store, set_failing);
    a_call_whose_sync_fails_leaves_no_record(store, set_failing);
    a_call_while_reads_fail(store, set_failing);

    printf("-- without failures\n");
    CHECK(wf_engine_close(NULL) == WF_OK && wf_error_last()->status == WF_OK, "wf_engine_close(NULL) is WF_OK");
    wf_engine *engine = NULL;
    int rc = wf_engine_open(&engine, NULL);
    CHECK(rc == WF_OK && wf_engine_close(engine) == WF_OK, "an in-memory engine closes WF_OK");
    engine = NULL;
    rc = wf_engine_open_text(&engine, "{\"store\": \":memory:\", \"clock\": {\"mode\": \"manual\"}}");
    if (rc == WF_OK) {
        clock_advance(engine, 5);
        set_failing(1); /* an in-memory store has no file to write */
        rc = wf_engine_close(engine);
        set_failing(0);
        CHECK(rc == WF_OK, "an in-memory engine closes WF_OK while the disk fails (got %s)", wf_status_name(rc));
    }

    return checks_report();
}
