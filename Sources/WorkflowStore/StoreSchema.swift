import GRDB

/// The store's schema, one GRDB migration per version. A store opened by this library is
/// migrated forward in place; a store that has migrations this library does not know is refused.
enum StoreSchema {
    static var migrator: DatabaseMigrator {
        var m = DatabaseMigrator()
        m.registerMigration("v1") { db in
            try db.execute(sql: """
                CREATE TABLE meta (
                    key TEXT PRIMARY KEY NOT NULL,
                    value TEXT NOT NULL
                );
                CREATE TABLE templates (
                    templateId TEXT PRIMARY KEY NOT NULL,
                    seq INTEGER NOT NULL UNIQUE,
                    name TEXT NOT NULL,
                    createdAt INTEGER NOT NULL,
                    canonical TEXT NOT NULL,
                    sourceSchema TEXT NOT NULL
                );
                CREATE TABLE tools (
                    kind TEXT PRIMARY KEY NOT NULL,
                    spec TEXT NOT NULL,
                    registeredAt INTEGER NOT NULL
                );
                CREATE TABLE provider_defaults (
                    kind TEXT PRIMARY KEY NOT NULL,
                    params TEXT NOT NULL
                );
                CREATE TABLE workflows (
                    workflowId TEXT PRIMARY KEY NOT NULL,
                    seq INTEGER NOT NULL UNIQUE,
                    templateId TEXT NOT NULL,
                    title TEXT NOT NULL,
                    status TEXT NOT NULL,
                    archived INTEGER NOT NULL DEFAULT 0,
                    createdAt INTEGER NOT NULL,
                    updatedAt INTEGER NOT NULL,
                    stepsDone INTEGER NOT NULL DEFAULT 0,
                    stepsTotal INTEGER NOT NULL DEFAULT 0,
                    awaitCount INTEGER NOT NULL DEFAULT 0,
                    hasBlockingAwait INTEGER NOT NULL DEFAULT 0,
                    searchText TEXT NOT NULL DEFAULT '',
                    nextDeadline INTEGER,
                    queuedRemote INTEGER NOT NULL DEFAULT 0,
                    queuedLocal INTEGER NOT NULL DEFAULT 0,
                    runningRemote INTEGER NOT NULL DEFAULT 0,
                    runningLocal INTEGER NOT NULL DEFAULT 0,
                    inboxCount INTEGER NOT NULL DEFAULT 0,
                    data TEXT NOT NULL
                );
                CREATE TABLE nodes (
                    workflowId TEXT NOT NULL,
                    nodeId TEXT NOT NULL,
                    position INTEGER NOT NULL,
                    state TEXT NOT NULL,
                    data TEXT NOT NULL,
                    PRIMARY KEY (workflowId, nodeId)
                ) WITHOUT ROWID;
                CREATE TABLE runs (
                    runId TEXT PRIMARY KEY NOT NULL,
                    workflowId TEXT NOT NULL,
                    nodeId TEXT NOT NULL,
                    seq INTEGER NOT NULL,
                    status TEXT NOT NULL,
                    jobId TEXT,
                    data TEXT NOT NULL
                );
                CREATE INDEX runs_by_workflow ON runs (workflowId, seq);
                CREATE INDEX runs_by_job ON runs (jobId) WHERE jobId IS NOT NULL;
                -- Comparisons, not NOT IN: an IN list makes every write of a run build an
                -- ephemeral table to evaluate the index's condition.
                CREATE INDEX runs_active ON runs (status)
                    WHERE status <> 'succeeded' AND status <> 'failed' AND status <> 'cancelled'
                      AND status <> 'skipped';
                CREATE TABLE awaits (
                    awaitId TEXT PRIMARY KEY NOT NULL,
                    workflowId TEXT NOT NULL,
                    nodeId TEXT NOT NULL,
                    runId TEXT NOT NULL,
                    seq INTEGER NOT NULL,
                    status TEXT NOT NULL,
                    data TEXT NOT NULL,
                    UNIQUE (workflowId, nodeId, runId)
                );
                CREATE INDEX awaits_open ON awaits (status) WHERE status != 'done';
                CREATE TABLE assets (
                    assetId TEXT PRIMARY KEY NOT NULL,
                    type TEXT NOT NULL,
                    createdAt INTEGER NOT NULL,
                    pinned INTEGER NOT NULL DEFAULT 0,
                    orphanedAt INTEGER,
                    data TEXT NOT NULL
                );
                CREATE TABLE effects (
                    seq INTEGER PRIMARY KEY NOT NULL,
                    effectId TEXT NOT NULL UNIQUE,
                    type TEXT NOT NULL,
                    answerKey TEXT,
                    taken INTEGER NOT NULL DEFAULT 0,
                    data TEXT NOT NULL
                );
                CREATE TABLE cache_entries (
                    assetId TEXT NOT NULL,
                    variant TEXT NOT NULL,
                    bytes INTEGER NOT NULL,
                    lastUsedAt INTEGER NOT NULL,
                    pinned INTEGER NOT NULL DEFAULT 0,
                    PRIMARY KEY (assetId, variant)
                ) WITHOUT ROWID;
                CREATE TABLE metrics (
                    seq INTEGER PRIMARY KEY NOT NULL,
                    data TEXT NOT NULL
                );
                """)
        }
        // The order of use of cache entries, so that entries last used at the same instant are
        // evicted in the order they were used, also after a reopen.
        m.registerMigration("v2-cache-use-order") { db in
            try db.execute(sql: "ALTER TABLE cache_entries ADD COLUMN useOrder INTEGER NOT NULL DEFAULT 0")
        }
        // Commits made only of rows, not yet folded into their tables (`JournalCoding`). Since the
        // journal has a file of its own (`JournalFile`), only a store an earlier version left
        // after a kill has rows here: they are replayed at open.
        m.registerMigration("v3-journal") { db in
            try db.execute(sql: "CREATE TABLE journal (seq INTEGER PRIMARY KEY, body BLOB NOT NULL)")
        }
        // The journal in a file of its own beside the store (`JournalFile`), its progress in meta
        // (`journal.foldedThrough`, `journal.directCommits`). No table changes; the version is
        // what makes a library that knows nothing of the file refuse the store (`storeTooNew`)
        // instead of opening it without the commits the file holds, and writing over them.
        m.registerMigration("v4-journal-file") { _ in }
        return m
    }
}
