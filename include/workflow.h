/*
 * workflow.h -- the C interface of the embeddable workflow engine.
 *
 * This header is the contract. Everything a C, C++ or FFI host can do with the
 * engine goes through the few functions below: open an engine, call an op by
 * name with a JSON object of arguments, read back a JSON object, and free.
 * The op vocabulary (names, argument and result shapes, error codes) is
 * documented in docs/OPS.md and pinned by the conformance fixtures in
 * Tests/Conformance/fixtures.
 *
 * Conventions
 * -----------
 *  - Every function that can fail returns an int status: WF_OK (0) on success,
 *    a negative wf_status on failure. On failure, wf_error_last() describes
 *    the failure for the calling thread.
 *  - Out-parameters come first. On failure they are set to NULL (when the
 *    out-pointer itself is not NULL), never left dangling.
 *  - JSON crosses the boundary as Jansson values. A `const json_t *` argument
 *    is a BORROWED reference: the engine reads it during the call and keeps no
 *    reference to it. A `json_t **` result is a NEW reference: the caller owns
 *    it and must release it with json_decref().
 *  - Numbers keep their kind both ways: a JSON integer (json_integer, or an
 *    integer in text that fits 64 bits) stays an integer, exact over all of
 *    json_int_t; a real (json_real, or text with a fraction or exponent)
 *    stays a real, 4.0 and -0.0 included; an integer in text past 64 bits
 *    becomes a real. A number in text beyond a double's range (about
 *    1.8e308) is WF_EINVALID "malformedJSON" ("number out of range"), as
 *    Jansson's own parser refuses it; a json_t real holding NaN or an
 *    infinity (which Jansson's constructors refuse, so only a json_t written
 *    by hand can) is WF_EINVALID "invalidJSON". Strings inside objects keep
 *    every byte, U+0000 too.
 *  - A key repeated in one object of JSON text keeps its last value, as
 *    json_loads() does without JSON_REJECT_DUPLICATES.
 *  - Text crosses the boundary as NUL-terminated UTF-8. A `char **` result is
 *    allocated by the library and must be released with wf_free().
 *  - JSON text the library writes (the result of wf_call_text(),
 *    wf_error.details_json) is compact and escapes a U+0000 inside a string
 *    as \u0000, as JSON requires (such a string is always one a host gave
 *    the engine). Jansson's json_loads() accepts the escape only with the
 *    JSON_ALLOW_NUL flag; without it, it refuses the whole text.
 *  - Timestamps are RFC 3339 UTC strings with milliseconds
 *    ("2026-01-01T00:00:30.000Z"); durations in op arguments are seconds.
 *  - Thread safety: the functions of this header may be called from any
 *    thread. Calls on one engine handle are serialised inside the engine;
 *    calls on different handles run independently. wf_engine_free() or
 *    wf_engine_close() may race with other calls on the same handle: each such
 *    call runs before the close or answers WF_ESTATE "engineClosed". An
 *    engine on a file store starts one thread of its own (see
 *    "backgroundWrites" at wf_engine_open), which never calls the host;
 *    wf_engine_free() stops it.
 *  - No function of this header aborts the process on bad input: NULL
 *    pointers, invalid UTF-8, malformed JSON, unknown argument names and
 *    wrongly typed arguments are reported as WF_EINVALID with a message and
 *    details.argument naming the argument.
 *  - The library is linked with -z nodelete: once loaded it stays loaded
 *    (dlclose() does not unmap it), because runtime threads of the Swift
 *    standard library may outlive the engines that started them.
 */
#ifndef WORKFLOW_H
#define WORKFLOW_H

#include <jansson.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------
 * Versions
 * ------------------------------------------------------------------------- */

/** Major version: incremented for incompatible changes to this interface. */
#define WF_VERSION_MAJOR 0
/** Minor version: incremented for compatible additions (new ops, new fields). */
#define WF_VERSION_MINOR 1
/** Patch version: incremented for fixes. */
#define WF_VERSION_PATCH 0
/** The version as text. */
#define WF_VERSION "0.1.0"
/**
 * The version as one number, MAJOR * 10000 + MINOR * 100 + PATCH.
 * Compare with wf_libversion_number() to detect a header/library mismatch.
 */
#define WF_VERSION_NUMBER 100

/* ---------------------------------------------------------------------------
 * Status codes
 * ------------------------------------------------------------------------- */

/**
 * Status codes returned by every function of this header that can fail.
 * The `code` string of the error record names the precise condition
 * (for example "cycleDetected" under WF_ETEMPLATE, "notReady" under
 * WF_ESTATE); `details` carries the structured facts.
 */
typedef enum wf_status {
    WF_OK = 0,            /**< Success. */
    WF_EINVALID = -2,     /**< Bad arguments, NULL where a value is needed, malformed JSON, wrong types. */
    WF_ENOTFOUND = -3,    /**< No such workflow, node, run, job, await, asset, template or tool. */
    WF_ESTATE = -4,       /**< Not allowed in the current state ("cannot run when state is blocked"). */
    WF_ETEMPLATE = -5,    /**< The template is invalid; details.errors lists every error found. */
    WF_ECONFLICT = -6,    /**< Claimed elsewhere ("alreadyClaimed"), duplicate, or a concurrent change. */
    WF_ESTORE = -7,       /**< Persistence failed; nothing was half-written. */
    WF_EUNSUPPORTED = -8, /**< Unknown op, or an option this build does not support. */
    /**
     * Iteration finished (no more items). Not an error. Reserved: no function
     * or op of this version returns it (there is no iterator API yet); it is
     * defined, and named by wf_status_name(), so that hosts can handle it
     * before one exists.
     */
    WF_ITEROVER = -31,
    /**
     * A bug in the engine; report it with the error record. The code is
     * "internal". wf_call() and wf_call_text() return it when the engine
     * finds one of its own invariants broken (an illegal node state
     * transition, a workflow whose template is missing, a second await for
     * the same run, a timer loop that does not settle); the call is then
     * rolled back and changes nothing. They also return it when the library
     * runs out of memory building the result (the json_t of wf_call(), the
     * text of wf_call_text()); in that case the op itself has already
     * completed and committed, only its result is lost. Never returned for
     * bad input, which is always WF_EINVALID.
     */
    WF_EINTERNAL = -99
} wf_status;

/* ---------------------------------------------------------------------------
 * Types
 * ------------------------------------------------------------------------- */

/**
 * An open engine: its store, its clock and its state. Opaque: a handle the
 * library hands out, never reused. A handle that was closed (or never
 * opened) names no engine: calls with it are WF_ESTATE "engineClosed", and
 * nothing is read through it, so a stale handle cannot crash the host.
 */
typedef struct wf_engine wf_engine;

/**
 * The record of the last call on the calling thread (see wf_error_last).
 *
 * All pointers are owned by the library and stay valid until the calling
 * thread next calls a function that reports a status (wf_engine_open,
 * wf_engine_open_text, wf_engine_close, wf_call, wf_call_text) or
 * wf_error_clear(). The other functions (wf_error_last, wf_status_name,
 * wf_libversion_number, wf_libversion, wf_free, wf_engine_free) leave the
 * record alone. None of the pointers is ever NULL.
 */
typedef struct wf_error {
    /** The status returned by the failed call, or WF_OK after a success. */
    int status;
    /** The precise condition, for example "cycleDetected"; "ok" after a success. */
    const char *code;
    /**
     * A human-readable sentence, for example "cycle detected: a → b → a".
     * Free of NUL, so that C sees all of it: a U+0000 the text would carry
     * (quoted from an argument) is written as '?'; `code` likewise.
     */
    const char *message;
    /** Structured facts (node ids, ports, the cycle path) as a BORROWED JSON object. */
    const json_t *details;
    /** The same details serialised as JSON text, for hosts without Jansson. */
    const char *details_json;
} wf_error;

/* ---------------------------------------------------------------------------
 * Engines
 * ------------------------------------------------------------------------- */

/**
 * Open an engine.
 *
 * @param out     Receives the new engine on success, NULL on failure. Must not
 *                be NULL (WF_EINVALID).
 * @param config  BORROWED. A JSON object; NULL or a JSON null means all
 *                defaults. Keys:
 *                "store": ":memory:" (default) or a file path, created if
 *                missing; "clock": {"mode": "manual", "start": time} or
 *                {"mode": "system"} (default) -- a manual clock without
 *                "start" starts at 2026-01-01T00:00:00.000Z, and on a store
 *                that already ran it resumes where the store left off if
 *                that is later; "seed": integer for jitter (default 0);
 *                "concurrency": {"remote": 8, "local": 2};
 *                "pollIntervalSeconds": 10; "deepLinkScheme": "app";
 *                "durability": "normal" (default: survives a killed
 *                process) or "full" (also a power loss: every commit
 *                synced); "backgroundWrites": true (default: a file
 *                store writes its journal's rows into its tables on a
 *                thread of its own) or false (on the calling thread; no
 *                thread is started);
 *                "cache": {"thumbnailBytes": 209715200, "previewDays": 7};
 *                "assets": {"retentionDays": 7};
 *                "awaits": {"doneRetentionDays": 7};
 *                "memory": {"doneWorkflows": 256} (done workflows kept
 *                loaded once read; the least recently used beyond that
 *                leave memory and are read from the store again);
 *                "metrics": {"maxQueued": 100000} (telemetry events kept
 *                for metrics.take; the oldest go beyond that);
 *                "logLevel": "error" (trace … critical; lines go to
 *                standard error).
 *                docs/OPS.md describes every key. Unknown keys are rejected.
 * @return WF_OK; WF_EINVALID for a bad config; WF_ESTORE when the store
 *         cannot be opened, migrated or read back; WF_EINTERNAL for an
 *         engine bug met while resuming the work in flight.
 *
 * A store file written by a newer library is refused with WF_ESTORE
 * ("storeTooNew"); an older one is migrated in place. Commits a killed
 * process left in the store's journal are written to their tables before
 * this returns; a damaged journal, rows changed behind the engine's back,
 * or a file SQLite finds damaged or not a database, is WF_ESTORE
 * ("storeCorrupt"). An id counter another program deleted or lowered goes
 * on from the highest id in use, so no id is handed out twice. A file
 * store at PATH is the files
 * PATH, PATH-wal, PATH-shm (SQLite's) and PATH-wfjournal (the engine's
 * journal): copy or remove them together, with no engine open on them.
 * PATH here is the file the path names once its symbolic links are
 * followed, as SQLite names its log: a store opened through a link is the
 * same store, journal included (one an earlier version left beside the
 * link is moved to that name and replayed). PATH is then the real file's
 * name, which may differ from the path given.
 *
 * Two engines making one new store at once both open it. One engine per
 * store file: the engine opened last owns it. A store held
 * open by another engine (in this process or another) is not refused here,
 * because a killed process's engine holds nothing; instead every later
 * change through the engine opened before is refused with WF_ESTORE
 * ("storeInUse") and changes nothing, so it never overwrites the file with
 * its stale state.
 */
int wf_engine_open(wf_engine **out, const json_t *config);

/**
 * Open an engine from a configuration given as JSON text.
 *
 * Identical to wf_engine_open() for hosts that do not link Jansson.
 *
 * @param out          Receives the new engine, NULL on failure. Must not be NULL.
 * @param config_json  NUL-terminated UTF-8 JSON object text; NULL or "null"
 *                     means all defaults. Malformed text is WF_EINVALID.
 */
int wf_engine_open_text(wf_engine **out, const char *config_json);

/**
 * Close an engine and free it.
 *
 * Every state change was already committed by the call that made it, so
 * nothing is lost by closing. Closing writes what the store's journal still
 * holds into its tables, puts every commit on disk and stops the engine's
 * thread. NULL, and a handle closed already, are no-ops. Later calls with
 * the handle are WF_ESTATE "engineClosed". A call running on another thread
 * meanwhile finishes first, or answers "engineClosed". A failure of those final
 * writes (a failing or full disk) goes unreported here: wf_engine_close()
 * does the same and reports it.
 */
void wf_engine_free(wf_engine *engine);

/**
 * Close an engine and free it, reporting whether every commit reached the disk.
 *
 * Does what wf_engine_free() does, and returns what its final writes came
 * to. The handle is closed whatever the status; later calls with it are
 * WF_ESTATE "engineClosed".
 *
 * @param engine  An engine from wf_engine_open(); NULL is a no-op that
 *                returns WF_OK, and a handle closed already is WF_ESTATE
 *                "engineClosed" (details.argument "engine").
 * @return WF_OK when every commit is on disk (or another engine opened the
 *         store since, and took its journal over); WF_ESTORE with code
 *         "storeWriteFailed" when the disk refused the final writes
 *         ("storeCorrupt" when SQLite found the store's file damaged on the
 *         way), the error record's details naming "store" and "durability".
 *         With durability "full" nothing is at risk even then: every call's
 *         change was on disk when the call returned, and the next open
 *         replays what the store's journal holds. With "normal" the last
 *         calls' changes may not be on disk: a crash of the process loses
 *         none of them (the next open replays them), a power cut before the
 *         system writes them may. Sets the error record (wf_error_last)
 *         either way.
 */
int wf_engine_close(wf_engine *engine);

/* ---------------------------------------------------------------------------
 * Calls
 * ------------------------------------------------------------------------- */

/**
 * Call an op: `op` names it ("template.register", "workflow.create", ...),
 * `args` carries its arguments, and the result comes back as a JSON object.
 *
 * A call that changes state commits it durably, all of it or nothing (one
 * record of the store's journal, or one transaction), before it returns. A
 * call that fails changes nothing.
 *
 * @param result  Receives the result object as a NEW reference, which the
 *                caller releases with json_decref(); NULL on failure. May be
 *                NULL when the caller does not want the result.
 * @param engine  The engine. NULL is WF_EINVALID; a closed one is WF_ESTATE
 *                "engineClosed".
 * @param op      NUL-terminated UTF-8 op name. NULL, invalid UTF-8 or an empty
 *                name is WF_EINVALID; an unknown op is WF_EUNSUPPORTED.
 * @param args    BORROWED. A JSON object; NULL or a JSON null means {}.
 *                Anything else is WF_EINVALID, and so is a member the op
 *                does not take ("unknownArgument").
 * @return WF_OK or a negative wf_status; see wf_error_last() for the reason.
 *         WF_EINTERNAL only for an engine bug or when the result cannot be
 *         allocated (see wf_status); never WF_ITEROVER.
 */
int wf_call(json_t **result, wf_engine *engine, const char *op, const json_t *args);

/**
 * Call an op with JSON text in and out, for FFI hosts without Jansson.
 *
 * @param result_json  Receives the result object as compact NUL-terminated
 *                     UTF-8 JSON text, allocated by the library; the caller
 *                     releases it with wf_free(). NULL on failure. May be NULL
 *                     when the caller does not want the result.
 * @param engine       As for wf_call().
 * @param op           As for wf_call().
 * @param args_json    NUL-terminated UTF-8 JSON object text; NULL or "null"
 *                     means {}. Malformed text or invalid UTF-8 is
 *                     WF_EINVALID.
 * @return As for wf_call().
 */
int wf_call_text(char **result_json, wf_engine *engine, const char *op, const char *args_json);

/* ---------------------------------------------------------------------------
 * Errors and memory
 * ------------------------------------------------------------------------- */

/**
 * The record of the last call made by this thread.
 *
 * Never NULL. After a successful call the record reads {WF_OK, "ok", "", {}}.
 * The record and everything it points to stay valid until this thread's
 * next call of a status-reporting function or wf_error_clear() (see
 * wf_error), and are freed when the thread exits.
 */
const wf_error *wf_error_last(void);

/**
 * Reset this thread's error record to {WF_OK, "ok", "", {}}.
 */
void wf_error_clear(void);

/**
 * Free memory the library allocated for the caller (the text of
 * wf_call_text()). NULL is a no-op.
 */
void wf_free(void *p);

/**
 * The library's version number, MAJOR * 10000 + MINOR * 100 + PATCH.
 * Equal to WF_VERSION_NUMBER of the header the library was built with.
 */
int wf_libversion_number(void);

/**
 * The library's version as static text, for example "0.1.0". Never NULL;
 * not to be freed.
 */
const char *wf_libversion(void);

/**
 * The symbolic name of a status code, for example "WF_EINVALID" for -2, or
 * "WF_UNKNOWN" for a number that is not a status. Static text; never NULL;
 * not to be freed.
 */
const char *wf_status_name(int status);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* WORKFLOW_H */
