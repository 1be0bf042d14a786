import Foundation
import GRDB
import WorkflowCore

/// How hard a commit works to survive failures.
public enum Durability: String, Sendable, CaseIterable {
    /// WAL with `synchronous=NORMAL`: a committed call survives a killed process.
    case normal
    /// WAL with `synchronous=FULL`: a committed call also survives power loss.
    case full
}

/// A failure of the store, with the condition named for the error record.
public struct StoreError: Error, CustomStringConvertible {
    public var code: String
    public var message: String
    public init(code: String, message: String) {
        self.code = code
        self.message = message
    }
    public var description: String { "\(code): \(message)" }

    /// The condition a failure of the store names: a `StoreError`'s own code; `storeCorrupt` for
    /// SQLite's "database disk image is malformed" and "file is not a database" (a damaged
    /// file), for "no such column" or "no such table" (a schema that is no longer the
    /// engine's), and for a constraint a write of the journal's rows broke (the rows the engine
    /// writes fit its tables unless another program changed them: a workflow's id changed, so
    /// its row written again takes a `seq` in use); nil for anything else (an I/O error, a full
    /// disk).
    public static func code(of error: Error) -> String? {
        if let e = error as? StoreError { return e.code }
        if let e = error as? DatabaseError,
           e.resultCode == .SQLITE_CORRUPT || e.resultCode == .SQLITE_NOTADB || e.resultCode == .SQLITE_CONSTRAINT
        {
            return "storeCorrupt"
        }
        // A table or column the migrations made is gone: the schema is no longer the engine's
        // (edited, or a bit flipped in its text), whichever read finds it first.
        if let e = error as? DatabaseError, e.resultCode == .SQLITE_ERROR,
           let message = e.message, message.hasPrefix("no such column") || message.hasPrefix("no such table")
        {
            return "storeCorrupt"
        }
        return nil
    }

    /// Another engine opened the store at `path` after the one failing: its commits are refused
    /// (the store's tables and its journal alike), so that they never overwrite the other's.
    static func storeInUse(_ path: String) -> StoreError {
        StoreError(code: "storeInUse", message: """
            another engine (in this process or another) opened the store at \(path) after this one; to keep its \
            changes, this engine saves nothing more: close it, and open the store in one engine at a time
            """)
    }
}

/// How a file store writes the journal's entries into its tables (an in-memory store always
/// folds ``whenFull``).
public enum JournalFolding: String, Sendable, CaseIterable {
    /// On a thread of its own, while the engine goes on with the next call: a call waits only
    /// for its journal entry (the default).
    case background
    /// On the engine's thread, when the journal is full, before a read that could miss its rows,
    /// before a commit it does not take, and at close. No thread is started.
    case whenFull
}

/// The engine's store in SQLite, through GRDB: WAL, the schema managed by `DatabaseMigrator`,
/// one transaction per commit.
///
/// A file store journals a commit made only of rows that cannot conflict (a report, a
/// completion, a batch of them): its row images are one entry of the journal, an append-only
/// file beside the store's (``JournalFile``), written before the call returns, and
/// folded into the tables later (``JournalBacklog``), by default on a thread of its own
/// (``JournalFolding``). An in-memory store keeps the same backlog, with no file and no thread
/// (nothing survives it). docs/ARCHITECTURE.md ("The store's journal") gives the reasons.
public final class SQLiteStore: EngineStore {
    /// The store's connection: every commit and read of the engine, and the folder's folds.
    private var main: StoreConnection?
    /// The journal's file; nil for an in-memory store, whose journal is its backlog alone
    /// (nothing survives the handle, so there is nothing to replay).
    private var journal: JournalFile?
    public let path: String
    /// Journal entries not yet in the tables.
    private let backlog = JournalBacklog()
    /// Folds the backlog on its own thread (``JournalFolding/background``).
    private var folder: JournalFolder?
    /// The number the next journal entry gets: entry numbers are never used twice, so that the
    /// store's `journal.foldedThrough` always tells folded entries from new ones.
    private var nextJournalSeq: Int64 = 1
    /// Commits written straight to the tables so far (meta `journal.directCommits`); each
    /// journal entry carries the count it was appended after (``JournalFile``).
    private var directCommits: Int64 = 0
    private let durability: Durability
    /// A private in-memory database (`":memory:"`): no journal file, no folder thread, nothing to
    /// put on disk.
    private let inMemory: Bool
    /// Journal entries the last open found appended after a commit written straight to the
    /// tables that a power loss took from the store: not replayed (the store is as it was before
    /// that commit), and reported for the engine to log.
    public private(set) var entriesDiscardedAtOpen = 0
    /// The token this store wrote as the file's owner when it opened (meta `store.owner`, in the
    /// store and in its journal). The engine keeps the store's state in memory, so a file another
    /// engine opened since would be overwritten with stale state: the engine opened last owns
    /// the file, and a commit of an engine whose token is no longer there is refused
    /// (`storeInUse`).
    private let ownerToken = UUID().uuidString
    /// How many entries (commits) the backlog holds at most: a commit that would pass it folds
    /// the backlog first, on the engine's thread (0: never journal). A row rewritten by every
    /// commit (a job's progress) is one row of the tables however many entries hold it: bounding
    /// the entries keeps it from growing the backlog, and the replay after a kill, without end.
    public let journalLimit: Int
    /// How many rows the backlog holds at most, each image counted (a row rewritten by three
    /// entries counts three times): a commit that would pass it folds the backlog first, on the
    /// engine's thread. When a thread of its own folds, it is much larger than
    /// ``journalLimit``: the folder waits for half of it, so that the rows a node, a run or a
    /// workflow are rewritten with over their life mostly fall in one fold and are written once
    /// (docs/ARCHITECTURE.md, "The store's journal").
    public let journalRowLimit: Int
    /// How many bytes of entries the backlog holds at most (its memory, and the journal's file
    /// between two folds): a commit that would pass it folds the backlog first.
    public let journalByteLimit: Int
    public let folding: JournalFolding

    /// The default ``journalLimit`` (and ``journalRowLimit``) when the engine's thread folds
    /// (``JournalFolding/whenFull``): 1,024 (a fold takes about 3 ms of CPU; docs/BENCHMARKS.md).
    public static let defaultJournalLimit = 1_024

    /// The default ``journalLimit`` when a thread of its own folds: entries of one row each (a
    /// job's progress reports) are replayed after a kill in about 10 ms (docs/BENCHMARKS.md).
    public static let defaultBackgroundJournalLimit = 2_048

    /// The default ``journalRowLimit`` when a thread of its own folds: the folder starts at half
    /// of it, about 850 batched completions (a batch of 64 is about 600 rows), enough for most of
    /// a completion's rewrites to fall in one fold (docs/BENCHMARKS.md); the other half is room
    /// for what comes while it folds. Twice as many rows would collapse a tenth more, but the
    /// open after a kill with a full journal, which replays it all, would take 28–31 ms for 100
    /// workflows (18–26 ms at this limit, 11 ms with no journal; the rehydration goal is 20 ms).
    public static let defaultBackgroundJournalRowLimit = 16_384

    /// The default ``journalByteLimit``: 16 MiB (rows of 170 to 320 bytes reach the rows limit
    /// first, at 3 to 5 MiB).
    public static let defaultJournalByteLimit = 16 << 20

    /// The most rows the engine's thread folds so that the journal's file, past its bound, is
    /// emptied by its next append (``JournalFolder``): about one fold of a few milliseconds, once
    /// per 8 MiB of entries.
    static let catchUpRows = 2_048

    /// The most rows a commit may write to go to the journal when the engine's thread folds. A
    /// larger commit (a batch) already spreads a transaction's fixed costs over many rows:
    /// journaling it would only add the journal's own work. When a thread of its own folds, any
    /// commit that fits the backlog goes to the journal.
    static let journaledCommitRows = 64

    /// Pages the store's write-ahead log may hold before they are copied back into the database
    /// (SQLite's default is 1,000). A call's rows are spread over many pages, and a page written
    /// again before the checkpoint is copied back once: at 10,000 pages (40 MiB of 4 KiB pages)
    /// checkpoints write and sync about a tenth as often, for 10–15 % more completions per
    /// second (docs/BENCHMARKS.md). The log file keeps its largest size; opening after a killed
    /// process reads it whole.
    public static let walCheckpointPages = 10_000

    /// The page cache of a file store's connection, in KiB (SQLite's default is 2,000): the pages
    /// a fold dirties (about 1,700 in `wf-bench throughput`'s folds of 16,384 rows, as measured;
    /// fewer in today's folds of 8,192) stay in it until the fold commits. With SQLite's default
    /// those folds spilled some 40,000 pages to the
    /// log before their commits and read them back, and took a third more CPU time
    /// (docs/BENCHMARKS.md). The cache grows to this size only as the store's pages are read (the
    /// `memory` benchmark's heap grows by 6.6 MB more).
    public static let pageCacheKiB = 8_192

    /// Opens (creating if needed) and migrates the store at `path`; `":memory:"` is a private
    /// in-memory database, which folds ``JournalFolding/whenFull`` whatever `folding` says. What a
    /// killed process left in the journal is written to the tables before this returns.
    /// `journalLimit` is ``defaultJournalLimit`` or ``defaultBackgroundJournalLimit`` (after the
    /// folding), `journalRowLimit` ``defaultBackgroundJournalRowLimit`` when a thread of its own
    /// folds and `journalLimit` otherwise, `journalByteLimit` ``defaultJournalByteLimit``, unless
    /// a test needs others.
    public init(path: String, durability: Durability = .normal, folding: JournalFolding = .background,
                journalLimit: Int? = nil, journalRowLimit: Int? = nil, journalByteLimit: Int? = nil) throws {
        self.path = path
        let inMemory = path == ":memory:"
        self.inMemory = inMemory
        // An in-memory store folds on the engine's thread: a test opens engines by the thousand,
        // and a thread each would cost more than the folds it takes off the caller.
        let folding = inMemory ? JournalFolding.whenFull : folding
        self.folding = folding
        let entries = max(0, journalLimit ?? (folding == .background ? Self.defaultBackgroundJournalLimit
                                                                      : Self.defaultJournalLimit))
        self.journalLimit = entries
        self.journalRowLimit = max(0, journalRowLimit ?? (folding == .background ? Self.defaultBackgroundJournalRowLimit : entries))
        self.journalByteLimit = max(0, journalByteLimit ?? Self.defaultJournalByteLimit)
        self.durability = durability
        do {
            let queue: DatabaseQueue
            if inMemory {
                var config = Configuration()
                config.label = "workflow-store"
                config.prepareDatabase { db in try db.execute(sql: "PRAGMA foreign_keys = ON") }
                queue = try DatabaseQueue(configuration: config)
                try Self.migrate(queue, path: path)
            } else {
                queue = try Self.openMigrated(path: path, durability: durability)
            }
            let main = StoreConnection(queue: queue, path: path, ownerToken: ownerToken, durability: durability)
            self.main = main
            guard !inMemory else {
                try main.claimOwnership()
                return
            }
            // The journal is taken over first, and held while the tables are claimed: two
            // engines opening the store at once never end up owning one each.
            JournalFile.adoptOldName(forStore: path)
            let journal = try JournalFile(storePath: path, durability: durability)
            self.journal = journal
            try main.claimOwnership()
            try replayLegacyJournal(main)
            try journal.recover(storeId: try storeId(main))
            try replay(journal, into: main, backlog: backlog)
            if folding == .background {
                let folder = JournalFolder(backlog: backlog, connection: main,
                                           foldRows: self.journalRowLimit / 2, foldEntries: self.journalLimit / 4,
                                           foldBytes: self.journalByteLimit / 2,
                                           foldRowsAfterTablesNeeded: self.journalLimit / 4)
                folder.start()
                self.folder = folder
            }
        } catch let e as StoreError {
            close()
            throw e
        } catch {
            close()
            throw StoreError(code: StoreError.code(of: error) ?? "storeOpenFailed", message: "cannot open the store at \(path): \(error)")
        }
    }

    /// Opens the file at `path` and runs the migrations it lacks. Two engines making one new
    /// store at once (threads or processes) race: both switching the new file to WAL, one is
    /// refused ("database is locked": two connections each waiting for the other's lock, which
    /// no busy timeout resolves); both finding it without migrations, the one whose migration
    /// commits second fails on what the first made ("table meta already exists", the
    /// migration's row taken, the migrations' table read as it is made). Looking again, it
    /// finds the file migrated, or fewer migrations left: so a failed open is tried again (a
    /// few milliseconds later, each try a little later than the one before), up to
    /// ``openAttempts`` times; a store that fails so on its own, with no rival, fails every
    /// time, and the last failure is thrown. Other failures (``raceCodes``), a lock that stayed
    /// taken for the whole busy timeout, and a store too new, are thrown at once.
    static func openMigrated(path: String, durability: Durability) throws -> DatabaseQueue {
        var attempt = 0
        while true {
            attempt += 1
            var queue: DatabaseQueue?
            let started = ContinuousClock.now
            do {
                let opened = try StoreConnection.open(path: path, durability: durability,
                                                      autocheckpointPages: Self.walCheckpointPages)
                queue = opened
                try migrate(opened, path: path)
                return opened
            } catch let e as StoreError where e.code == "storeTooNew" {
                try? queue?.close()
                throw e
            } catch {
                try? queue?.close()
                guard attempt < openAttempts, let e = error as? DatabaseError, Self.raceCodes.contains(e.resultCode.primaryResultCode),
                      // A lock held for the whole busy timeout (another program writing) is not a
                      // rival opening at the same moment: waiting that long again would not help.
                      e.resultCode.primaryResultCode != .SQLITE_BUSY || ContinuousClock.now - started < .seconds(1)
                else {
                    throw error
                }
                usleep(UInt32(1_000 * attempt + Int.random(in: 0..<1_000)))
            }
        }
    }

    /// Tries of ``openMigrated(path:durability:)``: more than the store has migrations, each of
    /// which a rival may make first.
    static let openAttempts = 12

    /// What a rival's open gives: a lock refused, and SQL failing on what it made meanwhile (the
    /// schema changed under a statement too). A file that is not a database, damaged, or cannot
    /// be opened fails at once.
    static let raceCodes: [ResultCode] = [.SQLITE_BUSY, .SQLITE_LOCKED, .SQLITE_ERROR, .SQLITE_CONSTRAINT, .SQLITE_SCHEMA]

    /// Refuses a store a newer library wrote (`storeTooNew`), and runs the migrations it lacks.
    static func migrate(_ queue: DatabaseQueue, path: String) throws {
        let migrator = StoreSchema.migrator
        if try queue.read({ db in try migrator.hasBeenSuperseded(db) }) {
            throw StoreError(code: "storeTooNew", message: "the store at \(path) was written by a newer version of the library")
        }
        try migrator.migrate(queue)
    }

    /// SQLite's `PRAGMA synchronous` on the store's connection (1 NORMAL, 2 FULL): what
    /// ``Durability`` set, for tests.
    func synchronousLevel() throws -> Int {
        try connection().read { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? -1 }
    }

    /// How many times SQLite compiled the write path's prepared statements again, for tests
    /// (``PreparedStatements/recompilations()``).
    func statementRecompilations() throws -> Int {
        let main = try connection()
        return main.queue.inDatabase { _ in main.statements.recompilations() }
    }

    /// Folds the engine's thread made before a commit because the backlog was full (with a
    /// folder that keeps up, none), commits that found it full while the folder was folding and
    /// waited for that fold to end (``JournalBacklog/waitForFolderFold()``; a fold follows only
    /// if that left it full), and folds it made so that the journal's file, past its bound, is
    /// emptied (``catchUpRows``), for tests.
    private(set) var foldsWhenFull = 0
    private(set) var waitsWhenFull = 0
    private(set) var catchUpFolds = 0
    /// Whether the folder's fold is under way, and how many threads wait for it to end, for tests.
    var folderFoldUnderWay: Bool { backlog.folderFoldUnderWay }
    var folderFoldWaiters: Int { backlog.folderFoldWaiters }
    /// Folds of the backlog so far, by either thread, for tests.
    var backlogFolds: Int { backlog.folds }

    /// Rows, entries and bytes waiting in the journal's backlog, for tests and benchmarks.
    package var backlogCounts: (rows: Int, entries: Int, bytes: Int) { backlog.counts }

    /// Runs `body` with the folder starting no fold (one under way finishes first), so that the
    /// backlog fills up to its limits as under a load the folder cannot follow, for tests and
    /// benchmarks (a kill with the journal as full as it can be). The engine's thread still folds
    /// when the backlog is full, and before what it folds for anyway.
    package func withFoldsHeld<T>(_ body: () throws -> T) rethrows -> T {
        folder?.hold()
        defer { folder?.release() }
        return try body()
    }

    /// The rows of `table` as the tables hold them now, without folding the backlog first, for
    /// tests.
    func tableRowCount(_ table: String) throws -> Int {
        try connection().read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(table)") ?? -1 }
    }

    private func connection() throws -> StoreConnection {
        guard let main else { throw StoreError(code: "storeClosed", message: "the store is closed") }
        return main
    }

    /// Stops the folder, folds what is left of the journal and empties it (a failure leaves it
    /// for the next open to replay), puts every commit on disk, and closes.
    ///
    /// Returns nil when every commit is on disk: folded into the tables and synced (a file
    /// store's write-ahead log synced by a checkpoint, the commits written straight to the tables
    /// with ``Durability/normal`` included), or when another engine owns the store (it replayed
    /// this one's journal when it opened). Otherwise the failure of the first write that failed:
    /// `storeWriteFailed` (a failing or full disk), or `storeCorrupt` when SQLite found the file
    /// damaged; the store is closed all the same. With ``Durability/full`` nothing is at risk then
    /// (every commit was on disk when it returned, and the next open replays what the journal
    /// holds); with ``Durability/normal`` the last commits may not be on disk: a crash of the
    /// process loses none of them, a power cut before the system writes them may. A second close
    /// returns nil.
    @discardableResult
    public func close() -> StoreError? {
        guard main != nil else { return nil }
        folder?.stop()
        folder = nil
        var failure: StoreError?
        do {
            try foldBacklog()
            try syncFolded()
            if !inMemory { try main?.checkpoint() }  // a file store
        } catch let e as StoreError where e.code == "storeInUse" {
            // Another engine owns the store: it replayed this one's journal, and writes its own.
        } catch {
            // A file SQLite finds damaged is storeCorrupt, as on every read; anything else the
            // disk refused.
            let code = StoreError.code(of: error) == "storeCorrupt" ? "storeCorrupt" : "storeWriteFailed"
            failure = StoreError(code: code, message: "closing the store \(path): \(error)")
        }
        journal?.close(syncedThrough: backlog.syncedThrough)
        journal = nil
        main?.close()
        main = nil
        return failure
    }

    deinit { close() }

    /// The store's id (meta `store.id`), made when it is first needed: its journal carries it,
    /// so that a journal is never replayed into another store.
    private func storeId(_ main: StoreConnection) throws -> String {
        let key = "store.id"
        func read() throws -> String? { try main.metaValue(key).flatMap { (try? JSON(parsing: $0))?.stringValue } }
        if let id = try read() { return id }
        // Synced: its journal is marked with it, and must never outlive it. Another engine
        // opening the store at the same time may have made one first: that one stands.
        try main.transaction(synced: true) { db, _ in
            try db.execute(sql: "INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)",
                           arguments: [key, JSONWriter.string(.string(UUID().uuidString))])
        }
        guard let id = try read() else {
            throw StoreError(code: "storeCorrupt", message: "the store at \(path) has no id (meta store.id)")
        }
        return id
    }

    // MARK: Loading

    /// Everything an open reads. Its queries are fixed, so SQLite's "no such table" or "no such
    /// column" here can only mean tables the migrations did not make (a damaged schema, another
    /// program's file): `storeCorrupt`.
    public func loadSnapshot() throws -> StoreSnapshot {
        do {
            return try readSnapshot()
        } catch let e as DatabaseError where e.resultCode == .SQLITE_ERROR {
            throw StoreError(code: "storeCorrupt", message: "the store's tables are not the ones the engine made: \(e.message ?? "\(e)")")
        }
    }

    private func readSnapshot() throws -> StoreSnapshot {
        try foldIf(journalHoldsRows)
        return try connection().read { db in
            var s = StoreSnapshot()
            for row in try StoredRow.fetchAll(db, "meta", sql: "SELECT key, value FROM meta") {
                let key: String = try row[0]
                let text: String = try row[1]
                s.meta[key] = (try? JSON(parsing: text)) ?? .null
            }
            for row in try StoredRow.fetchAll(db, "templates", sql: """
                SELECT templateId, seq, name, createdAt, canonical, sourceSchema FROM templates ORDER BY seq
                """)
            {
                s.templates.append(try StoredTemplate(templateId: row[0], seq: row[1], name: row[2],
                                                  createdAt: Timestamp(milliseconds: row[3]), canonicalText: row[4],
                                                  sourceSchema: row[5]))
            }
            for row in try StoredRow.fetchAll(db, "tools", sql: "SELECT spec, registeredAt FROM tools ORDER BY kind") {
                let text: String = try row[0]
                if let json = try? JSON(parsing: text), let spec = RecordCoding.decodeTool(json) {
                    s.tools.append(StoredTool(spec: spec, registeredAt: Timestamp(milliseconds: try row[1])))
                }
            }
            for row in try StoredRow.fetchAll(db, "provider_defaults", sql: "SELECT kind, params FROM provider_defaults") {
                let text: String = try row[1]
                s.providerDefaults[try row[0]] = (try? JSON(parsing: text))?.objectValue ?? [:]
            }
            for row in try StoredRow.fetchAll(db, "workflows", sql: """
                SELECT workflowId, seq, templateId, title, status, archived, createdAt, updatedAt, stepsDone,
                       stepsTotal, awaitCount, hasBlockingAwait, searchText, nextDeadline, queuedRemote, queuedLocal,
                       runningRemote, runningLocal, inboxCount
                FROM workflows ORDER BY seq
                """)
            {
                let deadline: Int64? = try row[13]
                s.workflows.append(try WorkflowSummary(
                    workflowId: row[0], seq: row[1], templateId: row[2], title: row[3],
                    status: WorkflowStatus(rawValue: try row[4]) ?? .active, archived: row[5],
                    createdAt: Timestamp(milliseconds: row[6]), updatedAt: Timestamp(milliseconds: row[7]),
                    stepsDone: row.count(8), stepsTotal: row.count(9), awaitCount: row.count(10),
                    hasBlockingAwait: row[11], searchText: row[12], nextDeadline: deadline.map { Timestamp(milliseconds: $0) },
                    queuedRemote: row.count(14), queuedLocal: row.count(15), runningRemote: row.count(16),
                    runningLocal: row.count(17), inboxCount: row.count(18)))
            }
            for row in try StoredRow.fetchAll(db, "effects", sql: "SELECT seq, effectId, type, answerKey, taken, data FROM effects ORDER BY seq") {
                let text: String = try row[5]
                let id: String = try row[1]
                let type: String = try row[2]
                // The columns name the effect; a body that lost or changed its `id` or `type`
                // (edited) still carries them as hosts acknowledge and dispatch it by. A body
                // that no longer reads, or lost what its type's host acts on or what settles it,
                // could be neither carried out nor settled: the store is damaged.
                let answerKey: String? = try row[3]
                guard let stored = (try? JSON(parsing: text))?.objectValue else {
                    throw StoreError(code: "storeCorrupt", message: "the stored effect \(id) is damaged: its text is not a JSON object")
                }
                var body = JSONObject(minimumCapacity: stored.count + 2)
                body.append(uniqueKey: "id", .string(id))
                body.append(uniqueKey: "type", .string(type))
                for (k, v) in stored where k != "id" && k != "type" { body.append(uniqueKey: k, v) }
                if let problem = Effect.storedProblem(type: type, body: body, answerKey: answerKey) {
                    throw StoreError(code: "storeCorrupt", message: "the stored effect \(id) (\(type)) is damaged: \(problem)")
                }
                s.effects.append(Effect(seq: try row[0], id: id, type: type, body: body, answerKey: answerKey,
                                        taken: try row[4], isDurable: true))
            }
            for row in try StoredRow.fetchAll(db, "cache_entries", sql: "SELECT assetId, variant, bytes, lastUsedAt, pinned, useOrder FROM cache_entries") {
                // A variant this library does not know (a newer one's, or damage) is left out: read
                // as a preview it would stand in for the asset's real preview entry.
                guard let variant = CacheVariant(rawValue: try row[1]) else { continue }
                s.cacheEntries.append(try CacheEntry(assetId: row[0], variant: variant,
                                                 bytes: Int64(row.count(2, max: CachePolicy.maxEntryBytes)),
                                                 lastUsedAt: Timestamp(milliseconds: row[3]), pinned: row[4],
                                                 useOrder: row[5]))
            }
            for row in try StoredRow.fetchAll(db, "runs", sql: """
                SELECT runId, workflowId, jobId FROM runs
                WHERE status <> 'succeeded' AND status <> 'failed' AND status <> 'cancelled' AND status <> 'skipped'
                """)
            {
                s.activeRuns.append((try row[0], try row[1], try row[2]))
            }
            for row in try StoredRow.fetchAll(db, "awaits", sql: "SELECT awaitId, workflowId FROM awaits WHERE status != 'done'") {
                s.openAwaits.append((try row[0], try row[1]))
            }
            s.highestIds = try Self.highestIds(db)
            return s
        }
    }

    /// ``StoreSnapshot/highestIds``: one pass over each table's ids (20–40 ms per 200,000 runs;
    /// 4 % of an open of 100 workflows), so that a counter another program deleted or lowered
    /// cannot make the engine reuse an id (a new run's rows written over another workflow's).
    private static func highestIds(_ db: Database) throws -> [String: Int64] {
        let limit = StoreSnapshot.highestIdCounted
        func fetch(_ table: String, _ sql: String) throws -> Int64? {
            guard let row = try StoredRow.fetchAll(db, table, sql: sql).first else { return nil }
            return try row[0]
        }
        var highest: [String: Int64] = [:]
        func note(_ counter: String, _ found: Int64?) {
            if let found, found <= limit { highest[counter] = max(highest[counter] ?? 0, found) }
        }
        for (counter, table, column) in [("wf", "workflows", "workflowId"), ("tpl", "templates", "templateId"),
                                         ("run", "runs", "runId"), ("aw", "awaits", "awaitId"), ("as", "assets", "assetId")] {
            // `run-12` is 12. The ids after `run-` in text order are an index range, read without
            // the table; one not of digits counts its leading digits, or 0 (a GLOB for digits
            // doubled the cost). Numbers past the limit are left out, in a second pass only when
            // there are any (filtering every row cost a third more).
            let n = "CAST(substr(\(column), \(counter.count + 2)) AS INTEGER)"
            let range = "\(column) >= '\(counter)-' AND \(column) < '\(counter).'"
            var found = try fetch(table, "SELECT max(\(n)) FROM \(table) WHERE \(range)")
            if let f = found, f > limit {
                found = try fetch(table, "SELECT max(\(n)) FROM \(table) WHERE \(range) AND \(n) <= \(limit)")
            }
            note(counter, found)
        }
        // A text in a number column is greater than any number to SQLite: the bound leaves it out.
        for (counter, table, column) in [("wf", "workflows", "seq"), ("tpl", "templates", "seq"), ("effect", "effects", "seq"),
                                         ("metric", "metrics", "seq"), ("cacheUse", "cache_entries", "useOrder")] {
            note(counter, try fetch(table, "SELECT max(\(column)) FROM \(table) WHERE \(column) <= \(limit)"))
        }
        return highest
    }

    public func loadWorkflow(_ workflowId: String) throws -> Workflow? {
        try foldIf(backlog.holdsRows(ofWorkflow: workflowId))
        let connection = try connection()
        let statements = connection.statements
        // Prepared once per connection and read in place (``FastRead``): an open loads every
        // workflow with work in flight, and GRDB's rows and cached-statement lookups were half
        // of each load.
        return try connection.read { (db: Database) -> Workflow? in
            let w = FastRead(try statements.get(.loadWorkflow, db), db, workflowId)
            guard try w.next() else { return nil }
            defer { w.finish() }
            var nodes: [NodeInstance] = []
            let nodeRows = FastRead(try statements.get(.loadNodes, db), db, workflowId)
            while try nodeRows.next() {
                nodes.append(RecordCoding.decodeNode(nodeId: nodeRows.string(0), nodeRows.json(1)))
            }
            var runs: [Run] = []
            let runRows = FastRead(try statements.get(.loadRuns, db), db, workflowId)
            while try runRows.next() {
                runs.append(RecordCoding.decodeRun(runId: runRows.string(0), nodeId: runRows.string(1), runRows.json(2)))
            }
            var awaits: [AwaitRequest] = []
            let awaitRows = FastRead(try statements.get(.loadAwaits, db), db, workflowId)
            while try awaitRows.next() {
                awaits.append(RecordCoding.decodeAwait(awaitId: awaitRows.string(0), workflowId: workflowId,
                                                       nodeId: awaitRows.string(1), runId: awaitRows.string(2),
                                                       awaitRows.json(3)))
            }
            let data = w.json(7).objectValue ?? [:]
            var workflow = Workflow(workflowId: workflowId, seq: w.int64(0), templateId: w.string(1), title: w.string(2),
                                    createdAt: Timestamp(milliseconds: w.int64(5)),
                                    updatedAt: Timestamp(milliseconds: w.int64(6)),
                                    archived: w.bool(4), autoRun: data["autoRun"]?.boolValue ?? false,
                                    pollingPaused: data["pollingPaused"]?.boolValue ?? false,
                                    status: WorkflowStatus(rawValue: w.string(3)) ?? .active, nodes: nodes, runs: runs,
                                    awaits: awaits)
            workflow.markClean()  // it is what the store holds
            return workflow
        }
    }

    public func loadAsset(_ assetId: String) throws -> Asset? {
        try foldIf(journalHoldsRows)
        return try connection().read { (db: Database) -> Asset? in
            guard let row = try StoredRow.fetchOne(db.cachedStatement(sql: """
                SELECT type, createdAt, pinned, orphanedAt, data FROM assets WHERE assetId = ?
                """), "assets", arguments: [assetId])
            else { return nil }
            let text: String = try row[4]
            var asset = try RecordCoding.decodeAsset(assetId: assetId, type: row[0], createdAt: row[1], pinned: row[2],
                                                 (try? JSON(parsing: text)) ?? .null)
            let orphaned: Int64? = try row[3]
            asset.orphanedAt = orphaned.map { Timestamp(milliseconds: $0) }
            return asset
        }
    }

    public func workflowId(forRun runId: String) throws -> String? {
        try foldIf(journalHoldsRows)
        return try connection().read { db in
            try String.fetchOne(db.cachedStatement(sql: "SELECT workflowId FROM runs WHERE runId = ?"), arguments: [runId])
        }
    }

    public func run(forJob jobId: String) throws -> (runId: String, workflowId: String)? {
        try foldIf(journalHoldsRows)
        return try connection().read { (db: Database) -> (runId: String, workflowId: String)? in
            let sql = "SELECT runId, workflowId FROM runs WHERE jobId = ? ORDER BY seq DESC LIMIT 1"
            guard let row = try StoredRow.fetchOne(db.cachedStatement(sql: sql), "runs", arguments: [jobId])
            else { return nil }
            return (try row[0], try row[1])
        }
    }

    public func unreferencedAssets(createdBefore cutoff: Timestamp) throws -> [String] {
        try foldIf(journalHoldsRows)
        return try connection().read { db in
            try String.fetchAll(db, sql: """
                WITH refs(assetId) AS (
                    SELECT j.value FROM runs, json_each(runs.data, '$.inputs') AS j
                    UNION SELECT j.value FROM runs, json_each(runs.data, '$.outputs') AS j
                    UNION SELECT j.value FROM nodes, json_each(nodes.data, '$.bindings') AS j
                    UNION SELECT j.value FROM nodes, json_each(nodes.data, '$.outputs') AS j
                    UNION SELECT j.value FROM nodes, json_each(nodes.data, '$.inputSelections') AS j
                )
                SELECT assetId FROM assets
                WHERE pinned = 0 AND COALESCE(orphanedAt, createdAt) < ?
                  AND assetId NOT IN (SELECT assetId FROM refs WHERE assetId IS NOT NULL)
                ORDER BY createdAt, assetId
                """, arguments: [cutoff.milliseconds])
        }
    }

    public func workflowIds(referencingAsset assetId: String) throws -> [String] {
        try foldIf(journalHoldsRows)
        return try connection().read { db in
            try String.fetchAll(db, sql: """
                SELECT runs.workflowId FROM runs, json_each(runs.data, '$.inputs') AS j WHERE j.value = ?1
                UNION SELECT runs.workflowId FROM runs, json_each(runs.data, '$.outputs') AS j WHERE j.value = ?1
                UNION SELECT nodes.workflowId FROM nodes, json_each(nodes.data, '$.bindings') AS j WHERE j.value = ?1
                UNION SELECT nodes.workflowId FROM nodes, json_each(nodes.data, '$.outputs') AS j WHERE j.value = ?1
                UNION SELECT nodes.workflowId FROM nodes, json_each(nodes.data, '$.inputSelections') AS j WHERE j.value = ?1
                ORDER BY 1
                """, arguments: [assetId])
        }
    }

    public func metrics(after: Int64 = 0, limit: Int) throws -> [MetricEvent] {
        try connection().read { db in
            try Row.fetchAll(db.cachedStatement(sql: "SELECT seq, data FROM metrics WHERE seq > ? ORDER BY seq LIMIT ?"),
                             arguments: [after, limit]).map { fetched in
                let row = StoredRow(row: fetched, table: "metrics")
                let text: String = try row[1]
                return MetricEvent(seq: try row[0], body: (try? JSON(parsing: text))?.objectValue ?? [:])
            }
        }
    }

    // MARK: Committing

    public func commit(_ changes: ChangeSet) throws {
        guard !changes.isEmpty else { return }
        let main = try connection()
        // Only rows that cannot conflict: one journal entry, once the backlog has room for it
        // (made by the folder's fold under way, or by a fold on this thread). Otherwise the
        // backlog is folded and the change written to the tables, in one transaction.
        // Nothing is journaled with a limit of 0.
        let most = min(journalLimit == 0 || journalByteLimit == 0 ? 0 : journalRowLimit,
                       folding == .background ? journalRowLimit : Self.journaledCommitRows)
        if let plan = JournalCoding.plan(changes), plan.rows <= most {
            guard plan.rows > 0 else { return }  // only workflows whose rows already say it all
            let body = JournalCoding.encode(changes, plan, directCommits: directCommits)
            func full(_ waiting: (rows: Int, entries: Int, bytes: Int)) -> Bool {
                waiting.rows + plan.rows > journalRowLimit || waiting.entries >= journalLimit
                    || waiting.bytes + body.count > journalByteLimit
            }
            var waiting = backlog.counts
            if full(waiting), folder != nil, backlog.waitForFolderFold() {
                // The folder was folding: what it took has left the backlog (unless its fold
                // failed), and it goes on with the rest while the engine's thread goes on.
                waitsWhenFull += 1
                waiting = backlog.counts
            }
            if full(waiting) {
                foldsWhenFull += 1
                try foldBacklog()
            } else if let folder, backlog.fileBytes >= folder.foldBytes, waiting.entries > 0,
                      waiting.rows <= Self.catchUpRows
            {
                // The journal's file is past its bound, and the folder, folding at once until it
                // catches up, has left little: folded here, so that this append empties the file.
                catchUpFolds += 1
                try foldBacklog()
            }
            let seq = nextJournalSeq
            try journal?.append(seq: seq, body: body, syncedThrough: backlog.syncedThrough)
            nextJournalSeq += 1
            backlog.append(JournalBacklog.Entry(seq: seq, body: body, rows: plan.rows, workflowIds: plan.workflowIds),
                           fileBytes: journal?.size ?? 0)
            folder?.noteAppend()
        } else {
            let images = Self.images(of: changes)
            backlog.noteTablesNeeded()
            try backlog.writeLock.withEngineLock {
                let entries = backlog.snapshot()
                let merged = try JournalBacklog.merge(entries)
                let count = directCommits + 1
                try main.transaction { db, statements in
                    if let last = entries.last?.seq { try JournalBacklog.write(merged, through: last, statements, db) }
                    try TableWriter.write(changes, images, statements, db)
                    // The count orders a journal file's entries against these commits at replay.
                    if !inMemory { try JournalBacklog.writeMeta(JournalBacklog.directCommitsKey, count, statements, db) }
                }
                directCommits = count
                if let last = entries.last?.seq { backlog.folded(through: last, synced: durability == .full || inMemory) }
            }
            if backlog.unsyncedEntries >= Self.unsyncedEntriesLimit {
                try backlog.writeLock.withEngineLock { try backlog.syncFolded(on: main) }
            } else if backlog.unsyncedEntries > 0 {
                folder?.noteUnsyncedFold()
            }
        }
    }

    /// Writes what the journal holds to the tables, on the caller's thread. Other connections
    /// reading the database file see every commit after this; the engine's own reads fold what
    /// they need themselves (through this: until ``JournalFolder/foldRows`` rows have come since,
    /// the folder folds small, so that the next such read or commit finds little to fold).
    public func flush() throws {
        guard !backlog.isEmpty else { return }
        backlog.noteTablesNeeded()
        try foldBacklog()
    }

    /// Folds every entry waiting, on the caller's thread.
    private func foldBacklog() throws {
        guard !backlog.isEmpty else { return }
        let main = try connection()
        try backlog.writeLock.withEngineLock { try backlog.foldAll(on: main) }
    }

    /// Makes the folds that were not synced (a commit written straight to the tables folds the
    /// journal in its own, unsynced, transaction) wait on disk, with one synced transaction: the
    /// journal may then drop their entries.
    func syncFolded() throws {
        guard backlog.unsyncedEntries > 0 else { return }
        let main = try connection()
        try backlog.writeLock.withEngineLock { try backlog.syncFolded(on: main) }
    }

    /// Entries folded without a sync after which the engine's thread syncs them itself (the
    /// folder syncs them as soon as the engine is quiet): the journal never holds many more.
    static let unsyncedEntriesLimit: Int64 = 1_024

    /// Folds first if a read of the tables could miss a row still in the journal.
    private func foldIf(_ needed: Bool) throws {
        if needed { try flush() }
    }

    /// Whether anything waits in the journal.
    private var journalHoldsRows: Bool { !backlog.isEmpty }

    /// Holds every write of the store (the folder's, and its checkpoints) while `body` runs on the
    /// engine's thread: the files on disk stay as they are, as a process killed at that moment
    /// leaves them, for a test or a benchmark to copy. `body` must not use the store.
    package func withWritesHeld<T>(_ body: () throws -> T) rethrows -> T {
        try backlog.writeLock.withEngineLock(body)
    }

    /// The files a file store keeps (the store, SQLite's write-ahead log and shared-memory index
    /// beside it, and the store's journal), for tests and tools that copy or remove a store whole.
    public static func files(ofStore path: String) -> [String] {
        let real = StorePath.resolved(path)
        return [real, real + "-wal", real + "-shm", JournalFile.path(forStore: real)]
    }

    // MARK: Replay

    /// Replays what a killed process left in the journal after the last entry the tables hold,
    /// in order, and folds it (synced); a damaged entry refuses the store (`storeCorrupt`) and
    /// folds none. Entries appended after a commit written straight to the tables that the store
    /// lacks (a power loss took it) are dropped, with every entry after them. Then a new, empty
    /// journal takes the old one's place.
    private func replay(_ journal: JournalFile, into main: StoreConnection, backlog: JournalBacklog) throws {
        // Entry numbers and commit counts the engine wrote stay far below 2^53; anything else was
        // written by another program, and would overflow the numbering that goes on from it.
        func meta(_ key: String) throws -> Int64 {
            guard let text = try main.metaValue(key) else { return 0 }
            guard let value = Int64(text), (0...(Int64(1) << 53)).contains(value) else {
                throw StoreError(code: "storeCorrupt", message: "the store's \(key) is not an entry count: \(text.prefix(40))")
            }
            return value
        }
        let folded = try meta(JournalBacklog.foldedThroughKey)
        directCommits = try meta(JournalBacklog.directCommitsKey)
        var last = folded
        let entries = journal.recovered.filter { $0.seq > folded }
        // Room for a row per 400 bytes (an image takes some 170 to 320), as many as the backlog
        // holds at most: the table grows little as the replay goes.
        var replayed = PendingRows(capacity: min(entries.reduce(0) { $0 + $1.body.count } / 400, journalRowLimit))
        if let first = entries.first?.seq, first != folded + 1 {
            // The engine never leaves a gap: the tables are an older copy than the journal.
            throw StoreError(code: "storeCorrupt", message: """
                the store's journal \(JournalFile.path(forStore: path)) goes on from entry \(first - 1), but the store's \
                tables hold entries up to \(folded) only (was the store file replaced by an older copy?); remove the \
                journal to open the store without the changes it holds
                """)
        }
        for (i, (seq, body)) in entries.enumerated() {
            guard try JournalCoding.directCommits(of: body) <= directCommits else {
                entriesDiscardedAtOpen = entries.count - i
                break
            }
            try replayed.merge(entry: body)
            last = seq
        }
        if last > folded {
            try main.transaction(synced: true) { db, statements in
                try JournalBacklog.write(replayed, through: last, statements, db)
            }
        } else if !journal.recovered.isEmpty || durability == .full {
            // Nothing to replay: the tables as this open read them must be on disk before what
            // follows relies on them. A process killed before it synced a fold leaves that fold
            // in the system's cache only ("normal"; on "full", one killed during the sync), and
            // the journal is about to drop the entries it holds: a power cut after this open
            // would take them from both files (the journal then going on after a gap: the store
            // refused as damaged). On "full" even with the journal empty: this engine's entries
            // count the commits written straight to the tables as it read them, and a power cut
            // that took one of those (a killed "normal" process's, not synced) would make the
            // next open drop entries this engine reported on disk.
            try syncLogFile()
        }
        backlog.folded(through: last, synced: true)
        // The next entry follows the last one the tables hold, dropped entries or not: the open
        // after the next kill replays only a journal that goes on from the tables. (Dropped
        // entries cannot come back: the journal is emptied, synced, before anything follows.)
        nextJournalSeq = last + 1
        try journal.begin(durable: entriesDiscardedAtOpen > 0)
    }

    /// Puts SQLite's write-ahead log on disk as it is (`fsync`), commits that a killed process
    /// wrote without a sync included; nothing when there is none. Throws `storeWriteFailed` when
    /// the disk refuses.
    private func syncLogFile() throws {
        let log = Self.files(ofStore: path)[1]
        if let failure = syncFile(atPath: log) {
            throw StoreError(code: "storeWriteFailed", message: "cannot sync \(log): \(failure)")
        }
    }

    /// Replays the journal a store written by an earlier version keeps in its own `journal`
    /// table (before the journal had a file of its own), and empties it.
    private func replayLegacyJournal(_ main: StoreConnection) throws {
        let bodies = try main.read { db in
            try Data.fetchAll(db, sql: "SELECT body FROM journal ORDER BY seq").map { [UInt8]($0) }
        }
        guard !bodies.isEmpty else { return }
        var replayed = PendingRows()
        for body in bodies { try replayed.merge(entry: body) }
        try main.transaction { db, statements in
            try replayed.write(statements, db)
            try db.execute(sql: "DELETE FROM journal")
        }
    }

    /// The rows a change set writes, each as its image, in the order the change set gives them.
    /// Deletions, templates, tools, provider defaults, cache entries and metrics are not rows of
    /// this kind (``ChangeSet/isOnlyRows``): ``TableWriter/write(_:_:_:_:)`` writes them itself.
    static func images(of c: ChangeSet) -> [RowImage] {
        var images: [RowImage] = []
        for (k, v) in c.meta { images.append(.meta(key: k, value: JSONWriter.bytes(v))) }
        for (id, asset) in c.assets {
            guard let a = asset else { continue }
            images.append(.asset(AssetRow(assetId: id, type: a.type, createdAt: a.createdAt.milliseconds, pinned: a.pinned,
                                          orphanedAt: a.orphanedAt?.milliseconds, data: RecordCoding.assetBytes(a))))
        }
        for change in c.workflows {
            guard let new = change.new else { continue }
            let old = change.old
            let id = new.workflowId
            if let s = change.summary { images.append(.workflow(WorkflowRow(new, s, existed: old != nil))) }
            // Only the records that differ; indices, not element bindings (a binding copies the
            // record). A record at a position the committed version held with the same id is a
            // row that exists.
            let changes = change.changes ?? new.changes(since: old)
            // The committed version's ids, looked at in place (a closure over `old` copies it).
            let oldNodeCount = old?.nodes.count ?? 0
            let oldRunCount = old?.runs.count ?? 0
            for i in changes.nodes {
                let n = new.nodes[i]
                let existed = i < oldNodeCount && old?.nodes[i].nodeId == n.nodeId
                images.append(.node(NodeRow(workflowId: id, nodeId: n.nodeId, position: Int64(i), state: n.state.rawValue,
                                            data: RecordCoding.nodeBytes(n), existed: existed)))
            }
            for i in changes.runs {
                let r = new.runs[i]
                let existed = i < oldRunCount && old?.runs[i].runId == r.runId
                let columnsKept = existed && old?.runs[i].status == r.status && old?.runs[i].jobId == r.jobId
                images.append(.run(RunRow(runId: r.runId, workflowId: id, nodeId: r.nodeId, seq: Int64(i),
                                          status: r.status.rawValue, jobId: r.jobId, data: RecordCoding.runBytes(r),
                                          existed: existed, columnsKept: columnsKept)))
            }
            for i in changes.awaits {
                let a = new.awaits[i]
                images.append(.await(AwaitRow(awaitId: a.awaitId, workflowId: id, nodeId: a.nodeId, runId: a.runId,
                                              seq: Int64(i), status: a.status.rawValue,
                                              data: JSONWriter.bytes(RecordCoding.encode(a)))))
            }
        }
        for e in c.effectInserts {
            images.append(.effect(EffectRow(seq: e.seq, effectId: e.id, type: e.type, answerKey: e.answerKey, taken: e.taken,
                                            data: JSONWriter.bytes(.object(e.body)))))
        }
        for seq in c.effectsTaken { images.append(.effectTaken(seq: seq)) }
        for seq in c.effectDeletes { images.append(.effectDelete(seq: seq)) }
        return images
    }
}

/// `fsync` of the file at `path` (a descriptor of its own: a sync puts the file's writes on disk
/// whichever descriptor made them): nil once done, or when there is no such file; otherwise why
/// it failed.
private func syncFile(atPath path: String) -> String? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return errno == ENOENT ? nil : String(cString: strerror(errno)) }
    defer { _ = close(fd) }
    return fsync(fd) == 0 ? nil : String(cString: strerror(errno))
}
