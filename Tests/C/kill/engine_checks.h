/*
 * engine_checks -- what the programs that open the engine at chosen moments share
 * (close_on_failing_disk.c, chosen_power_cuts.c): a CHECK that prints each check and counts the
 * failures, and short forms of the calls they make.
 */
#ifndef ENGINE_CHECKS_H
#define ENGINE_CHECKS_H

#include <stdio.h>
#include <workflow.h>

/* The checks that failed so far. */
extern int checks_failed;

/* Prints "ok: " or "FAIL: " (counting a failure), then the printf-style message. */
#define CHECK(cond, ...)                      \
    do {                                      \
        if (cond) {                           \
            printf("ok: ");                   \
        } else {                              \
            printf("FAIL: ");                 \
            checks_failed++;                  \
        }                                     \
        printf(__VA_ARGS__);                  \
        printf("\n");                         \
        fflush(stdout);                       \
    } while (0)

/* `s`, or "(null)" for NULL. */
const char *or_null(const char *s);

/* An engine on the file store `store` (manual clock from 2026-01-01T00:00:00.000Z, the journal
 * folded on the calling thread, "logLevel": "critical"), or NULL (a failed check). */
wf_engine *open_engine(const char *store, const char *durability);

/* The same with the journal folded on a thread of the store's own ("backgroundWrites", the
 * default): the folder folds when the engine is quiet, and syncs the folds the engine's thread
 * made without a sync. */
wf_engine *open_engine_in_background(const char *store, const char *durability);

/* The engine's clock.now (a new string for free()), or "(failed)". */
char *clock_now(wf_engine *engine);

/* clock.advance by `seconds`: its status (no result). */
int clock_advance(wf_engine *engine, int seconds);

/* `op` with JSON text `args`: its result (new reference), or NULL after a failed check. */
json_t *call_text(wf_engine *engine, const char *op, const char *args);

/* Registers a remote tool (GenerateRemote) and a template of one node of it (load1), and creates
 * a workflow of it: `{"workflowId": "…"}` goes to `workflow_args` (the args of the workflow's ops).
 * Starting that node inserts a remote.submit effect: a commit written straight to the store's
 * tables, not through its journal. */
void create_one_remote_node_workflow(wf_engine *engine, char *workflow_args, size_t size);

/* A fresh store at `store` ("normal") holding that workflow, closed: 1 when every step went
 * through (each checked), 0 otherwise. `workflow_args` as above. */
int store_with_one_remote_node_workflow(const char *store, char *workflow_args, size_t size);

/* Prints "PASSED"/"FAILED" with the count; the exit status (0 when no check failed). */
int checks_report(void);

#endif
