/*
 * chosen-power-cuts -- power cuts at moments the kill test's random ones almost never hit.
 *
 *   chosen-power-cuts SHIM DIR
 *
 * SHIM is powercut_shim.so, DIR an existing folder (absolute path) for the stores. The program
 * itself runs without the shim: it launches itself (`--child SCENARIO STORE [ARG]`) for the
 * steps a cut follows, under the shim for the one it examines, then cuts the power as
 * kill-supervisor does (power_loss.h), but with every choice a cut may make of the journal's
 * unsynced writes, one after the other, and opens the store after each. Exit status 0 when
 * every check holds.
 *
 * 1. "full": a call whose journal record cannot be synced fails, and the record is cut off
 *    again. The cut must itself be synced before the call returns: left unsynced, a power cut
 *    may keep the record and drop the cut, and the next open would replay a call that was
 *    reported failed. The shim fails the record's sync and nothing else (powercut_set_failing
 *    mode 3); the process then ends without closing, and every power cut at that moment must
 *    leave the store without the failed call.
 *
 * 2. "normal": entries an open drops must never come back. A power cut takes a commit written
 *    straight to the tables but keeps the three journal entries after it; the next open drops
 *    those entries (they follow a commit the tables lost) and must make their removal durable
 *    at once. That engine then makes a direct commit and one journal entry of its own, and
 *    closes. Had the removal not been synced, a second power cut would put the old entries back;
 *    the last two of them are numbered after what the tables now hold, and follow as many direct
 *    commits, so the next open would replay them over the newer state.
 *
 * 3. Both: the open's claim of the store starts a checkpoint of SQLite's log. A process killed
 *    with the log past the store's checkpoint interval (10,000 pages, SQLiteStore's
 *    walCheckpointPages) leaves the next open's first commit, the claim of the tables, to start
 *    the checkpoint. Made here by a raw SQLite connection with the automatic checkpoint off: it
 *    commits a marker row, then rewrites it until the log is past the interval, and ends without
 *    closing. The engine opens under the shim (the claim; the checkpoint), makes commits written
 *    straight to the tables (the first restarts the log over its old frames) and ends without
 *    closing. The checkpoint must sync the log before it writes the file and the file after:
 *    run at synchronous=OFF it syncs neither, and a power cut that keeps the log's restart but
 *    not the file's new pages takes the marker, a commit that was on disk before the open. The
 *    store file as of its last sync must hold the marker (the checkpoint ran, and synced), and
 *    so must the store after each cut, which keeps the file's unsynced writes (none, or all) and
 *    a prefix of the log's.
 *
 * 4. "normal": the folds made without a sync are synced before the journal drops their entries.
 *    A commit written straight to the tables folds the journal's entries in its own transaction,
 *    not synced; once the engine is quiet the store's folder syncs them, and the next call's
 *    append then empties the journal. Under the shim, an engine folding in the background makes
 *    three journal entries and a direct commit, waits for the folder's sync (SQLite's log grows
 *    by its commit), makes one more journal entry and ends without closing. Every cut keeping a
 *    prefix of the journal's unsynced writes and none of the other files' must open, with every
 *    call there but maybe the last. The sync once rewrote the last entry folded as it was: SQLite
 *    then writes no page and syncs nothing, the cut took the direct commit, and the journal went
 *    on after a gap (the store refused as damaged; kill.power_cut_pauses found it).
 *
 * 5. "normal": a process killed before it synced such a fold, then an open, then a power cut.
 *    Under the shim, an engine folding on the calling thread makes three journal entries and a
 *    direct commit (the fold, not synced) and ends without closing, as a kill leaves it; no cut
 *    follows, so its unsynced writes
 *    stay in the system's cache (the shim's logs, taken over by the next process). The next open
 *    finds the journal's entries in the tables and drops them: it must first put the tables as it
 *    read them on disk. It makes one more journal entry and ends without closing; every cut
 *    keeping a prefix of the journal's unsynced writes (the killed process's and its own) and
 *    none of the other files' must open with the three entries there.
 *
 * 6. A "normal" process killed after a direct commit it never synced, its journal empty, then
 *    an open on "full". That engine's journal entries count the direct commits it read, the
 *    killed one's included; each is synced and reported on disk. A cut that takes the killed
 *    process's commit would make the next open drop them (appended after a commit the tables
 *    lost), unless the "full" open synced SQLite's log first.
 */
#define _GNU_SOURCE

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <sqlite3.h>
#include <unistd.h>
#include <workflow.h>

#include "engine_checks.h"
#include "power_loss.h"

/* The journal file's header (JournalFile.headerSize): a journal this size holds no entry. */
#define JOURNAL_HEADER_SIZE 64

/* Runs this program as `--child SCENARIO STORE [ARG]`, under the shim when `shim` is not NULL,
 * and waits for it: its exit status, or -1 when it did not exit. */
static int run_child(const char *shim, const char *scenario, const char *store, const char *arg) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        if (shim) {
            setenv("LD_PRELOAD", shim, 1);
            setenv("POWERCUT_STORE", store, 1);
        }
        const char *args[] = {"/proc/self/exe", "--child", scenario, store, arg, NULL};
        execv(args[0], (char *const *)args);
        perror("chosen-power-cuts: execv");
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) return -1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Keeps the first `*context` unsynced writes of the journal and none of the other files'. */
static size_t keep_journal_prefix(size_t index, size_t unsynced, void *context) {
    (void)unsynced;
    return index == POWER_LOSS_JOURNAL ? *(size_t *)context : 0;
}

/* Cuts the power with every prefix of the journal's unsynced writes kept (the other files at
 * their images: every commit there was synced), and checks that the store then opens on
 * `durability` with its clock at `expected`. */
static void cut_every_way(const char *store, const char *durability, const char *expected, const char *what) {
    size_t unsynced = power_loss_unsynced(store, POWER_LOSS_JOURNAL);
    printf("   (the journal has %zu unsynced write%s)\n", unsynced, unsynced == 1 ? "" : "s");
    for (size_t kept = 0; kept <= unsynced; kept++) {
        power_loss_cut(store, keep_journal_prefix, NULL, &kept, 1);
        wf_engine *engine = open_engine(store, durability);
        if (!engine) continue;
        char *now = clock_now(engine);
        CHECK(strcmp(now, expected) == 0, "power cut keeping %zu of them: %s (clock %s, expected %s)", kept, what, now,
              expected);
        free(now);
        CHECK(wf_engine_close(engine) == WF_OK, "closed");
    }
}

/* --- 1. "full": a failed record's cut is synced ---------------------------------------- */

static int child_failed_record(const char *store) {
    void (*set_failing)(int) = (void (*)(int))dlsym(RTLD_DEFAULT, "powercut_set_failing");
    wf_engine *engine = open_engine(store, "full");
    if (!engine || !set_failing) return 1;
    CHECK(clock_advance(engine, 90) == WF_OK, "clock.advance 90 s is committed");
    set_failing(3); /* the next sync of a store file fails: the record's */
    int rc = clock_advance(engine, 30);
    set_failing(0);
    CHECK(rc == WF_ESTORE && strcmp(wf_error_last()->code, "storeWriteFailed") == 0 &&
              strstr(wf_error_last()->message, "-wfjournal"),
          "clock.advance 30 s whose journal record's sync fails: WF_ESTORE storeWriteFailed (got %s: %s)",
          wf_status_name(rc), wf_error_last()->message);
    char *now = clock_now(engine);
    CHECK(strcmp(now, "2026-01-01T00:01:30.000Z") == 0, "the engine's clock is as before the call (%s)", now);
    free(now);
    fflush(stdout);
    _exit(checks_failed ? 1 : 0); /* no close: the power goes now */
}

static void a_failed_record_stays_failed_after_a_power_cut(const char *shim, const char *dir) {
    printf("-- durability full: a call whose journal record cannot be synced, then a power cut\n");
    char store[4200];
    snprintf(store, sizeof store, "%s/failed-record.sqlite", dir);
    power_loss_remove_store(store);
    CHECK(run_child(shim, "failed-record", store, NULL) == 0, "the process under the shim made the call and ended");
    cut_every_way(store, "full", "2026-01-01T00:01:30.000Z", "the call reported failed is not there");
    power_loss_remove_store(store);
}

/* --- 2. "normal": entries dropped at open stay dropped --------------------------------- */

/* Starts the workflow's remote node (a commit written straight to the tables: it inserts a
 * remote.submit effect) and advances the clock three times 10 s (three journal entries after
 * it), then ends without closing. */
static int child_entries_after_a_direct_commit(const char *store, const char *workflow_args) {
    wf_engine *engine = open_engine(store, "normal");
    if (!engine) return 1;
    json_decref(call_text(engine, "workflow.runAllReady", workflow_args));
    for (int i = 0; i < 3; i++) CHECK(clock_advance(engine, 10) == WF_OK, "clock.advance 10 s");
    fflush(stdout);
    _exit(checks_failed ? 1 : 0);
}

/* Opens the store the first power cut left (the entries must be dropped), starts the node again
 * (a commit written straight to the tables: now as many as the dropped entries counted), advances
 * the clock 1 s (one journal entry, numbered as the first dropped one) and closes: every commit
 * folded into the tables and synced. */
static int child_reopen_after_the_cut(const char *store, const char *workflow_args) {
    wf_engine *engine = open_engine(store, "normal");
    if (!engine) return 1;
    char *now = clock_now(engine);
    CHECK(strcmp(now, "2026-01-01T00:00:00.000Z") == 0,
          "the open dropped the journal's entries after the lost commit (clock %s)", now);
    free(now);
    json_decref(call_text(engine, "workflow.runAllReady", workflow_args));
    CHECK(clock_advance(engine, 1) == WF_OK, "clock.advance 1 s");
    CHECK(wf_engine_close(engine) == WF_OK, "closed: every commit on disk");
    fflush(stdout);
    _exit(checks_failed ? 1 : 0);
}

/* Copies `from` to `to`, or removes `to` when `from` is missing. Exits on an I/O error. */
static void copy_or_remove(const char *from, const char *to) {
    FILE *in = fopen(from, "rb");
    if (!in) {
        unlink(to);
        return;
    }
    FILE *out = fopen(to, "wb");
    char buffer[65536];
    size_t n;
    int failed = !out;
    while (!failed && (n = fread(buffer, 1, sizeof buffer, in)) > 0) failed = fwrite(buffer, 1, n, out) != n;
    failed = failed || ferror(in);
    fclose(in);
    if (out && fclose(out) != 0) failed = 1;
    if (failed) {
        fprintf(stderr, "chosen-power-cuts: cannot copy %s to %s\n", from, to);
        exit(1);
    }
}

/* The size of the file at `path`, or -1 when it is missing. */
static long long file_size(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

static void dropped_entries_stay_dropped_after_a_second_power_cut(const char *shim, const char *dir) {
    printf("-- durability normal: journal entries an open dropped, then a second power cut\n");
    char store[4200], wal[4300], saved[4300], saved_wal[4300];
    snprintf(store, sizeof store, "%s/dropped-entries.sqlite", dir);
    snprintf(wal, sizeof wal, "%s-wal", store);
    snprintf(saved, sizeof saved, "%s.saved", store);
    snprintf(saved_wal, sizeof saved_wal, "%s.saved-wal", store);
    char workflow_args[256];
    if (!store_with_one_remote_node_workflow(store, workflow_args, sizeof workflow_args)) return;
    copy_or_remove(store, saved);
    copy_or_remove(wal, saved_wal);

    CHECK(run_child(NULL, "entries-after-a-direct-commit", store, workflow_args) == 0,
          "a process started the node and advanced the clock three times, then ended without a close");
    char journal[4300];
    snprintf(journal, sizeof journal, "%s-wfjournal", store);
    long long journal_size = file_size(journal);
    CHECK(journal_size > JOURNAL_HEADER_SIZE, "its journal holds entries (%lld bytes, the header %d)", journal_size,
          JOURNAL_HEADER_SIZE);
    /* The first cut, made by hand: the tables lose the direct commit (SQLite's log is not
     * synced on "normal": the files saved after the close come back), the journal keeps the
     * entries after it (as the process left it). */
    copy_or_remove(saved, store);
    copy_or_remove(saved_wal, wal);
    char shm[4300];
    snprintf(shm, sizeof shm, "%s-shm", store);
    unlink(shm);
    unlink(saved);
    unlink(saved_wal);

    power_loss_make_images(store);
    CHECK(run_child(shim, "reopen-after-the-cut", store, workflow_args) == 0,
          "a process under the shim opened the store, started the node, advanced the clock 1 s and closed");
    cut_every_way(store, "normal", "2026-01-01T00:00:01.000Z",
                  "the dropped entries did not come back over the newer commits");
    power_loss_remove_store(store);
}

/* --- 3. the claim's checkpoint syncs ------------------------------------------------------ */

#define MARKER "committed to the log before the open"
/* The store's checkpoint interval, in pages of its log (SQLiteStore.walCheckpointPages). */
#define CHECKPOINT_PAGES 10000

/* Commits the marker row with SQLite's automatic checkpoint off, rewrites it until the log holds
 * more pages than the checkpoint interval, and ends without closing (a close would checkpoint):
 * the log as a process killed before its checkpoint leaves it (each rewrite changes the row: SQLite
 * writes no page for an update that leaves a row as it was). Exit status 0 when the log holds
 * that many frames. */
static int child_fill_the_log(const char *store) {
    sqlite3 *db = NULL;
    char *error = NULL;
    if (sqlite3_open(store, &db) != SQLITE_OK ||
        sqlite3_exec(db,
                     "PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0; PRAGMA synchronous = OFF;"
                     "CREATE TABLE power_cut_marker (v TEXT NOT NULL, n INTEGER NOT NULL);"
                     "INSERT INTO power_cut_marker VALUES ('" MARKER "', 0);",
                     NULL, NULL, &error) != SQLITE_OK) {
        fprintf(stderr, "chosen-power-cuts: %s\n", error ? error : sqlite3_errmsg(db));
        return 1;
    }
    for (int i = 0; i < CHECKPOINT_PAGES + 100; i++) {
        if (sqlite3_exec(db, "UPDATE power_cut_marker SET n = n + 1", NULL, NULL, &error) != SQLITE_OK) {
            fprintf(stderr, "chosen-power-cuts: %s\n", error);
            return 1;
        }
    }
    sqlite3_stmt *statement = NULL;
    long long page = 0;
    if (sqlite3_prepare_v2(db, "PRAGMA page_size", -1, &statement, NULL) == SQLITE_OK &&
        sqlite3_step(statement) == SQLITE_ROW)
        page = sqlite3_column_int64(statement, 0);
    char wal[4300];
    snprintf(wal, sizeof wal, "%s-wal", store);
    struct stat st;
    long long frames = page > 0 && stat(wal, &st) == 0 ? ((long long)st.st_size - 32) / (page + 24) : 0;
    printf("   (SQLite's log holds %lld frames of %lld bytes)\n", frames, page);
    fflush(stdout);
    _exit(frames > CHECKPOINT_PAGES ? 0 : 1); /* no close */
}

/* Opens the store (its claim starts the checkpoint), then makes commits written straight to the
 * tables (a tool, a template, a workflow: the first restarts the log) and one journal entry, and
 * ends without closing. */
static int child_claim_past_the_checkpoint_mark(const char *store, const char *durability) {
    wf_engine *engine = open_engine(store, durability);
    if (!engine) return 1;
    char workflow_args[256];
    create_one_remote_node_workflow(engine, workflow_args, sizeof workflow_args);
    CHECK(clock_advance(engine, 10) == WF_OK, "clock.advance 10 s");
    fflush(stdout);
    _exit(checks_failed ? 1 : 0);
}

/* How many unsynced writes a cut keeps: of the store file, and of SQLite's log; none of the
 * engine's journal's. */
struct kept_writes {
    size_t file, log;
};

static size_t keep_file_and_log(size_t index, size_t unsynced, void *context) {
    const struct kept_writes *kept = context;
    if (index == 0) return kept->file < unsynced ? kept->file : unsynced;
    if (index == 1) return kept->log < unsynced ? kept->log : unsynced;
    return 0;
}

/* The marker row of the store at `store` (read without the engine), or "(missing)". */
static void read_marker(const char *store, char *out, size_t size) {
    snprintf(out, size, "(missing)");
    sqlite3 *db = NULL;
    sqlite3_stmt *statement = NULL;
    if (sqlite3_open(store, &db) == SQLITE_OK &&
        sqlite3_prepare_v2(db, "SELECT v FROM power_cut_marker", -1, &statement, NULL) == SQLITE_OK &&
        sqlite3_step(statement) == SQLITE_ROW)
        snprintf(out, size, "%s", (const char *)sqlite3_column_text(statement, 0));
    sqlite3_finalize(statement);
    sqlite3_close(db);
}

static void the_claims_checkpoint_keeps_what_was_on_disk(const char *shim, const char *dir, const char *durability) {
    printf("-- durability %s: the open's claim of the store starts a checkpoint of SQLite's log, then a power cut\n",
           durability);
    char store[4200];
    snprintf(store, sizeof store, "%s/claim-checkpoint-%s.sqlite", dir, durability);
    power_loss_remove_store(store);
    wf_engine *engine = open_engine(store, durability);
    if (!engine) return;
    CHECK(wf_engine_close(engine) == WF_OK, "a fresh store, closed");
    CHECK(run_child(NULL, "fill-the-log", store, NULL) == 0,
          "a raw SQLite connection committed the marker and left the log past %d pages", CHECKPOINT_PAGES);
    power_loss_make_images(store);
    CHECK(run_child(shim, "claim-past-the-checkpoint-mark", store, durability) == 0,
          "a process under the shim opened the store, made commits and ended without a close");
    size_t file = power_loss_unsynced(store, 0), log = power_loss_unsynced(store, POWER_LOSS_WAL);
    printf("   (the store file has %zu unsynced writes, SQLite's log %zu)\n", file, log);
    /* The checkpoint ran, and its pages are on disk: the store file as of its last sync (the
     * shim's image), read alone, holds the marker, which only the log held before the open. */
    char image[4300], alone[4300], alone_log[4400], alone_index[4400];
    snprintf(image, sizeof image, "%s.durable", store);
    snprintf(alone, sizeof alone, "%s/claim-checkpoint-%s-image.sqlite", dir, durability);
    snprintf(alone_log, sizeof alone_log, "%s-wal", alone);
    snprintf(alone_index, sizeof alone_index, "%s-shm", alone);
    copy_or_remove(image, alone);
    char marker[128];
    read_marker(alone, marker, sizeof marker);
    CHECK(strcmp(marker, MARKER) == 0, "the store file on disk holds the marker: the claim's checkpoint ran and synced it (%s)",
          marker);
    unlink(alone);
    unlink(alone_log);
    unlink(alone_index);
    /* Every prefix of the log's writes with none of the file's (the cut a checkpoint without its
     * syncs loses to), and all of both. */
    for (size_t k = 0; k <= log + 1; k++) {
        struct kept_writes kept = {k <= log ? 0 : file, k <= log ? k : log};
        power_loss_cut(store, keep_file_and_log, NULL, &kept, 1);
        engine = open_engine(store, durability);
        if (engine) CHECK(wf_engine_close(engine) == WF_OK, "closed");
        read_marker(store, marker, sizeof marker);
        /* Checked after every cut; printed for the first and the last, and for any that fails. */
        if (strcmp(marker, MARKER) != 0 || k == 0 || k > log)
            CHECK(strcmp(marker, MARKER) == 0,
                  "power cut keeping %zu of the file's unsynced writes and %zu of the log's: the marker is there (%s)",
                  kept.file, kept.log, marker);
    }
    power_loss_remove_store(store);
}

/* Cuts the power with every prefix of the journal's unsynced writes kept and none of the other
 * files' (cases 4 and 5), and checks that the store then opens on "normal" with its clock at 30 s
 * (three journal entries and a direct commit, all on disk), or at 40 s when the cut keeps the
 * journal's last write (its last entry, one more clock.advance of 10 s). */
static void cut_every_journal_prefix(const char *store) {
    size_t unsynced = power_loss_unsynced(store, POWER_LOSS_JOURNAL);
    printf("   (the journal has %zu unsynced writes; SQLite's log and the store file keep none)\n", unsynced);
    for (size_t kept = 0; kept <= unsynced; kept++) {
        power_loss_cut(store, keep_journal_prefix, NULL, &kept, 1);
        wf_engine *engine = open_engine(store, "normal");
        if (!engine) {
            CHECK(0, "power cut keeping %zu of the journal's writes: the store opens", kept);
            continue;
        }
        char *now = clock_now(engine);
        const char *expected = kept == unsynced ? "2026-01-01T00:00:40.000Z" : "2026-01-01T00:00:30.000Z";
        CHECK(strcmp(now, expected) == 0, "power cut keeping %zu of the journal's %zu unsynced writes: clock %s (expected %s)",
              kept, unsynced, now, expected);
        free(now);
        CHECK(wf_engine_close(engine) == WF_OK, "closed");
    }
}

/* Names the store `dir`/`file` in `store` (4200 bytes), makes it a store of one workflow of one
 * remote node (its `{"workflowId": …}` in `workflow_args`, 256 bytes) and makes the shim's
 * images of its files, as cases 4 to 6 start. Returns 0 if the store could not be made (a check
 * has failed and said why). */
static int shim_store_of_one_remote_node(const char *dir, const char *file, char store[4200], char workflow_args[256]) {
    snprintf(store, 4200, "%s/%s", dir, file);
    if (!store_with_one_remote_node_workflow(store, workflow_args, 256)) return 0;
    power_loss_make_images(store);
    return 1;
}

/* --- 4. "normal": unsynced folds are synced before the journal drops their entries ---------- */

/* Advances the clock three times 10 s (three journal entries), starts the node (a commit written
 * straight to the tables: it folds them, not synced), waits until the folder has synced that fold
 * (the shim's image of SQLite's log, the log as of its last sync, grows by the sync's commit; at
 * most 20 s; then 200 ms more, for the folder to record the sync once its commit returns: the log
 * itself grows before the sync, and an append made then finds the fold not yet synced), advances
 * the clock 10 s more (an append that empties the journal first) and ends without closing. */
static int child_sync_of_unsynced_folds(const char *store, const char *workflow_args) {
    wf_engine *engine = open_engine_in_background(store, "normal");
    if (!engine) return 1;
    /* Measured before the entries: on a loaded machine the folder may fold them itself (synced)
     * before the direct commit, which then folds nothing; the log on disk grows all the same. */
    char image[4300];
    snprintf(image, sizeof image, "%s-wal.durable", store);
    struct stat st;
    long long before = stat(image, &st) == 0 ? (long long)st.st_size : -1, now = before;
    for (int i = 0; i < 3; i++) CHECK(clock_advance(engine, 10) == WF_OK, "clock.advance 10 s");
    json_decref(call_text(engine, "workflow.runAllReady", workflow_args));
    now = stat(image, &st) == 0 ? (long long)st.st_size : -1;
    struct timespec tick = {0, 10 * 1000 * 1000};
    for (int waited = 0; waited < 2000 && now == before; waited++) {
        nanosleep(&tick, NULL);
        now = stat(image, &st) == 0 ? (long long)st.st_size : -1;
    }
    CHECK(now > before,
          "the folder synced the direct commit's fold with a commit of its own (the log on disk %lld bytes, then %lld)",
          before, now);
    for (int i = 0; i < 20; i++) nanosleep(&tick, NULL);
    CHECK(clock_advance(engine, 10) == WF_OK, "clock.advance 10 s");
    fflush(stdout);
    _exit(checks_failed ? 1 : 0);
}

/* The entry numbers of the journal's records, read from the file as it is (at most `max`), and
 * how many there are; -1 when the file cannot be read. Layout as JournalFile writes it: a
 * 64-byte header, then records of a 24-byte head (payload length, a zero word, entry number,
 * checksum; little-endian) and the payload. Reading stops at a record cut short or out of
 * sequence, as JournalFile's does; checksums are not checked (the file is as the process left
 * it, written whole). */
static int journal_entries(const char *journal, long long *numbers, int max) {
    FILE *f = fopen(journal, "rb");
    if (!f) return -1;
    int count = 0;
    unsigned char head[24];
    long at = JOURNAL_HEADER_SIZE;
    struct stat st;
    long size = fstat(fileno(f), &st) == 0 ? (long)st.st_size : 0;
    while (count < max && fseek(f, at, SEEK_SET) == 0 && fread(head, 1, sizeof head, f) == sizeof head) {
        unsigned long long length = 0, zero = 0, seq = 0;
        for (int i = 3; i >= 0; i--) length = length << 8 | head[i];
        for (int i = 3; i >= 0; i--) zero = zero << 8 | head[4 + i];
        for (int i = 7; i >= 0; i--) seq = seq << 8 | head[8 + i];
        /* A record cut short, or one not following the last: where JournalFile stops reading. */
        if (zero != 0 || length > (unsigned long long)(size - at - (long)sizeof head)) break;
        if (count > 0 && (long long)seq != numbers[count - 1] + 1) break;
        numbers[count++] = (long long)seq;
        at += (long)(sizeof head + length);
    }
    fclose(f);
    return count;
}

static void unsynced_folds_are_synced_before_the_journal_drops_them(const char *shim, const char *dir) {
    printf("-- durability normal: a commit written to the tables folds the journal unsynced, the folder syncs it, "
           "the next append empties the journal, then a power cut\n");
    char store[4200], workflow_args[256];
    if (!shim_store_of_one_remote_node(dir, "unsynced-folds.sqlite", store, workflow_args)) return;
    CHECK(run_child(shim, "sync-of-unsynced-folds", store, workflow_args) == 0,
          "a process under the shim made three journal entries, a direct commit and one more entry, and ended "
          "without a close");
    char journal[4300];
    snprintf(journal, sizeof journal, "%s-wfjournal", store);
    long long numbers[8];
    int count = journal_entries(journal, numbers, 8);
    CHECK(count == 1, "the last append emptied the journal first: it holds one entry (%d, the first numbered %lld)",
          count, count > 0 ? numbers[0] : -1);
    /* The three entries and the direct commit are on disk (synced by the folder). */
    cut_every_journal_prefix(store);
    power_loss_remove_store(store);
}

/* --- 5. "normal": a kill before the sync of a fold, an open, then a power cut -------------- */

/* Advances the clock three times 10 s (three journal entries), starts the node (a commit written
 * straight to the tables folding them, not synced: the journal is folded on this thread, so no
 * folder syncs it) and ends without closing. */
static int child_killed_before_the_sync(const char *store, const char *workflow_args) {
    wf_engine *engine = open_engine(store, "normal");
    if (!engine) return 1;
    for (int i = 0; i < 3; i++) CHECK(clock_advance(engine, 10) == WF_OK, "clock.advance 10 s");
    json_decref(call_text(engine, "workflow.runAllReady", workflow_args));
    fflush(stdout);
    _exit(checks_failed ? 1 : 0);
}

/* Opens the store the killed process left (its journal's entries in the tables: dropped),
 * checks the clock, advances it 10 s (one journal entry) and ends without closing. */
static int child_open_after_the_kill(const char *store) {
    wf_engine *engine = open_engine(store, "normal");
    if (!engine) return 1;
    char *now = clock_now(engine);
    CHECK(strcmp(now, "2026-01-01T00:00:30.000Z") == 0, "the open found the three entries (clock %s)", now);
    free(now);
    CHECK(clock_advance(engine, 10) == WF_OK, "clock.advance 10 s");
    fflush(stdout);
    _exit(checks_failed ? 1 : 0);
}

static void an_open_after_a_kill_syncs_the_folds_it_drops(const char *shim, const char *dir) {
    printf("-- durability normal: a process killed before it synced a fold, an open that drops the folded entries, "
           "then a power cut\n");
    char store[4200], workflow_args[256];
    if (!shim_store_of_one_remote_node(dir, "killed-before-the-sync.sqlite", store, workflow_args)) return;
    CHECK(run_child(shim, "killed-before-the-sync", store, workflow_args) == 0,
          "a process under the shim made three journal entries and a direct commit, and ended without a close");
    size_t log_before = power_loss_unsynced(store, POWER_LOSS_WAL);
    CHECK(log_before > 0, "SQLite's log holds the direct commit unsynced (%zu writes)", log_before);
    /* No cut: the next process starts on the files and the unsynced writes as the kill left them. */
    CHECK(run_child(shim, "open-after-the-kill", store, NULL) == 0,
          "a process under the shim opened the store, made one journal entry and ended without a close");
    size_t log_after = power_loss_unsynced(store, POWER_LOSS_WAL);
    CHECK(log_after == 0, "the open synced SQLite's log (%zu unsynced writes, then %zu)", log_before, log_after);
    /* The three entries and the direct commit are on disk (synced by the open). */
    cut_every_journal_prefix(store);
    power_loss_remove_store(store);
}

/* --- 6. "normal" killed after a direct commit, then an open on "full", then a power cut ----- */

/* Starts the node (a commit written straight to the tables, not synced; the journal holds
 * nothing) and ends without closing, as a kill leaves it. */
static int child_direct_commit_then_end(const char *store, const char *workflow_args) {
    wf_engine *engine = open_engine(store, "normal");
    if (!engine) return 1;
    json_decref(call_text(engine, "workflow.runAllReady", workflow_args));
    fflush(stdout);
    _exit(checks_failed ? 1 : 0);
}

/* Opens the store on "full", advances the clock 10 s (a journal entry, synced before the call
 * returns) and ends without closing. */
static int child_full_entry_after_the_kill(const char *store) {
    wf_engine *engine = open_engine(store, "full");
    if (!engine) return 1;
    CHECK(clock_advance(engine, 10) == WF_OK, "clock.advance 10 s on \"full\"");
    fflush(stdout);
    _exit(checks_failed ? 1 : 0);
}

static void a_full_open_after_a_normal_kill_syncs_what_it_read(const char *shim, const char *dir) {
    printf("-- a \"normal\" process ended after a direct commit it never synced, an open on \"full\" makes a "
           "journal entry, then a power cut\n");
    char store[4200], workflow_args[256];
    if (!shim_store_of_one_remote_node(dir, "normal-then-full.sqlite", store, workflow_args)) return;
    CHECK(run_child(shim, "direct-commit-then-end", store, workflow_args) == 0,
          "a process under the shim on \"normal\" made a direct commit and ended without a close");
    CHECK(power_loss_unsynced(store, POWER_LOSS_WAL) > 0, "SQLite's log holds that commit unsynced");
    CHECK(run_child(shim, "full-entry-after-the-kill", store, NULL) == 0,
          "a process under the shim on \"full\" made one journal entry and ended without a close");
    cut_every_way(store, "full", "2026-01-01T00:00:10.000Z", "the entry reported on disk is there");
    power_loss_remove_store(store);
}

int main(int argc, char **argv) {
    if (argc >= 4 && strcmp(argv[1], "--child") == 0) {
        if (strcmp(argv[2], "failed-record") == 0) return child_failed_record(argv[3]);
        if (strcmp(argv[2], "entries-after-a-direct-commit") == 0 && argc >= 5)
            return child_entries_after_a_direct_commit(argv[3], argv[4]);
        if (strcmp(argv[2], "reopen-after-the-cut") == 0 && argc >= 5) return child_reopen_after_the_cut(argv[3], argv[4]);
        if (strcmp(argv[2], "sync-of-unsynced-folds") == 0 && argc >= 5)
            return child_sync_of_unsynced_folds(argv[3], argv[4]);
        if (strcmp(argv[2], "killed-before-the-sync") == 0 && argc >= 5)
            return child_killed_before_the_sync(argv[3], argv[4]);
        if (strcmp(argv[2], "open-after-the-kill") == 0) return child_open_after_the_kill(argv[3]);
        if (strcmp(argv[2], "direct-commit-then-end") == 0 && argc >= 5)
            return child_direct_commit_then_end(argv[3], argv[4]);
        if (strcmp(argv[2], "full-entry-after-the-kill") == 0) return child_full_entry_after_the_kill(argv[3]);
        if (strcmp(argv[2], "fill-the-log") == 0) return child_fill_the_log(argv[3]);
        if (strcmp(argv[2], "claim-past-the-checkpoint-mark") == 0 && argc >= 5)
            return child_claim_past_the_checkpoint_mark(argv[3], argv[4]);
        return 2;
    }
    if (argc != 3) {
        fprintf(stderr, "usage: chosen-power-cuts SHIM DIR (both absolute paths)\n");
        return 2;
    }
    a_failed_record_stays_failed_after_a_power_cut(argv[1], argv[2]);
    dropped_entries_stay_dropped_after_a_second_power_cut(argv[1], argv[2]);
    the_claims_checkpoint_keeps_what_was_on_disk(argv[1], argv[2], "normal");
    the_claims_checkpoint_keeps_what_was_on_disk(argv[1], argv[2], "full");
    unsynced_folds_are_synced_before_the_journal_drops_them(argv[1], argv[2]);
    an_open_after_a_kill_syncs_the_folds_it_drops(argv[1], argv[2]);
    a_full_open_after_a_normal_kill_syncs_what_it_read(argv[1], argv[2]);
    return checks_report();
}
