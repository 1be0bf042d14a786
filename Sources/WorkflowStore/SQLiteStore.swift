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
}

/// The engine's store in SQLite, through GRDB: one serial connection, WAL journal, schema
/// managed by `DatabaseMigrator`, one transaction per commit.
public final class SQLiteStore: EngineStore {
    private var queue: DatabaseQueue?
    public let path: String
    /// The write path's statements, used only inside the queue's closures.
    private let statements = PreparedStatements()
    /// Row images in the journal, not yet in their tables (``JournalCoding``).
    private var pending = PendingRows()
    /// Rows of the journal table since the last fold (one per journaled commit).
    private var journalEntries = 0
    /// The token this store wrote as the file's owner when it opened (meta `store.owner`). The
    /// engine keeps the store's state in memory, so a file another engine opened since would be
    /// overwritten with stale state: the engine opened last owns the file, and a commit of an
    /// engine whose token is no longer there is refused (`storeInUse`).
    private let ownerToken = UUID().uuidString
    /// SQLite's `data_version` as this connection last saw the file: it moves only when another
    /// connection changes the file (a commit, or a checkpoint that restarts the log). While it
    /// stays, no other engine can have claimed the file, so the owner is read only when it moves.
    private var dataVersion: Int64 = 0
    static let ownerKey = "store.owner"
    /// How many pending rows, or journaled commits, make the next commit fold them (0: never
    /// journal). Bounding the commits too keeps a row rewritten again and again (a job's
    /// progress) from growing the journal, and the replay after a kill, without end.
    public let journalLimit: Int

    /// The default ``journalLimit``: 1,024 (a fold takes about 3 ms of CPU; docs/BENCHMARKS.md).
    public static let defaultJournalLimit = 1_024

    /// The most rows a commit may write to go to the journal. A larger commit (a batch) already
    /// spreads a transaction's fixed costs over many rows: journaling it would only add the
    /// journal's own work.
    static let journaledCommitRows = 64

    /// Pages the write-ahead log may hold before a commit copies them back into the database
    /// (SQLite's default is 1,000). A call's rows are spread over many pages, and a page written
    /// again before the checkpoint is copied back once: at 10,000 pages (40 MiB of 4 KiB pages)
    /// checkpoints write and sync about a tenth as often, for 10–15 % more completions per
    /// second (docs/BENCHMARKS.md). The log file keeps its largest size; opening after a killed
    /// process reads it whole.
    public static let walCheckpointPages = 10_000

    /// Opens (creating if needed) and migrates the store at `path`; `":memory:"` is a private
    /// in-memory database. What a killed process left in the journal is written to the tables
    /// before this returns; `journalLimit` is ``defaultJournalLimit`` unless a test needs another.
    public init(path: String, durability: Durability = .normal, journalLimit: Int = SQLiteStore.defaultJournalLimit) throws {
        self.path = path
        self.journalLimit = max(0, journalLimit)
        var config = Configuration()
        config.label = "workflow-store"
        if path != ":memory:" { config.journalMode = .wal }
        let synchronous = durability == .full ? "FULL" : "NORMAL"
        config.prepareDatabase { db in
            // `synchronous` is set once the queue is open: GRDB sets it to NORMAL itself when
            // it switches the file to WAL, after this runs.
            try db.execute(sql: "PRAGMA foreign_keys = ON")
            try db.execute(sql: "PRAGMA wal_autocheckpoint = \(SQLiteStore.walCheckpointPages)")
        }
        config.busyMode = .timeout(5)
        do {
            let queue = path == ":memory:" ? try DatabaseQueue(configuration: config)
                : try DatabaseQueue(path: path, configuration: config)
            try queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = \(synchronous)") }
            let migrator = StoreSchema.migrator
            let superseded = try queue.read { db in try migrator.hasBeenSuperseded(db) }
            if superseded {
                throw StoreError(code: "storeTooNew",
                                 message: "the store at \(path) was written by a newer version of the library")
            }
            try migrator.migrate(queue)
            self.queue = queue
            try claimOwnership(queue)
            try replayJournal()
        } catch let e as StoreError {
            throw e
        } catch {
            throw StoreError(code: "storeOpenFailed", message: "cannot open the store at \(path): \(error)")
        }
    }

    /// Writes this store's token as the file's owner: an engine that opened the file before
    /// this one is refused at its next commit.
    private func claimOwnership(_ queue: DatabaseQueue) throws {
        let token = JSONWriter.string(.string(ownerToken))
        dataVersion = try queue.writeWithoutTransaction { db in
            try db.inTransaction(.immediate) {
                try db.execute(sql: "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                               arguments: [Self.ownerKey, token])
                return .commit
            }
            return try Int64.fetchOne(db, sql: "PRAGMA data_version") ?? 0
        }
    }

    /// Whether this store still owns the file (inside a write transaction: nobody can claim it
    /// between this and the commit).
    private func stillOwner(_ db: Database, _ statements: PreparedStatements) throws -> Bool {
        let now = try Int64.fetchOne(statements.get(.dataVersion, db)) ?? 0
        if now == dataVersion { return true }
        let owner = try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = ?", arguments: [Self.ownerKey])
        guard owner == JSONWriter.string(.string(ownerToken)) else { return false }
        dataVersion = now  // another connection changed the file, but did not claim it (a checkpoint, a reader)
        return true
    }

    /// SQLite's `PRAGMA synchronous` on the store's connection (1 NORMAL, 2 FULL): what
    /// ``Durability`` set, for tests.
    func synchronousLevel() throws -> Int {
        try db().read { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? -1 }
    }

    private func db() throws -> DatabaseQueue {
        guard let queue else { throw StoreError(code: "storeClosed", message: "the store is closed") }
        return queue
    }

    /// Folds the journal (a failure leaves it for the next open to replay) and closes.
    public func close() {
        try? flush()
        queue?.inDatabase { _ in statements.removeAll() }  // finalized before the connection closes
        try? queue?.close()
        queue = nil
    }

    deinit { close() }

    // MARK: Loading

    public func loadSnapshot() throws -> StoreSnapshot {
        try foldIf(!pending.isEmpty)
        return try db().read { db in
            var s = StoreSnapshot()
            for row in try Row.fetchAll(db, sql: "SELECT key, value FROM meta") {
                let key: String = row[0]
                let text: String = row[1]
                s.meta[key] = (try? JSON(parsing: text)) ?? .null
            }
            for row in try Row.fetchAll(db, sql: """
                SELECT templateId, seq, name, createdAt, canonical, sourceSchema FROM templates ORDER BY seq
                """)
            {
                s.templates.append(StoredTemplate(templateId: row[0], seq: row[1], name: row[2],
                                                  createdAt: Timestamp(milliseconds: row[3]), canonicalText: row[4],
                                                  sourceSchema: row[5]))
            }
            for row in try Row.fetchAll(db, sql: "SELECT spec, registeredAt FROM tools ORDER BY kind") {
                let text: String = row[0]
                if let json = try? JSON(parsing: text), let spec = RecordCoding.decodeTool(json) {
                    s.tools.append(StoredTool(spec: spec, registeredAt: Timestamp(milliseconds: row[1])))
                }
            }
            for row in try Row.fetchAll(db, sql: "SELECT kind, params FROM provider_defaults") {
                let text: String = row[1]
                s.providerDefaults[row[0]] = (try? JSON(parsing: text))?.objectValue ?? [:]
            }
            for row in try Row.fetchAll(db, sql: """
                SELECT workflowId, seq, templateId, title, status, archived, createdAt, updatedAt, stepsDone,
                       stepsTotal, awaitCount, hasBlockingAwait, searchText, nextDeadline, queuedRemote, queuedLocal,
                       runningRemote, runningLocal, inboxCount
                FROM workflows ORDER BY seq
                """)
            {
                let deadline: Int64? = row[13]
                s.workflows.append(WorkflowSummary(
                    workflowId: row[0], seq: row[1], templateId: row[2], title: row[3],
                    status: WorkflowStatus(rawValue: row[4]) ?? .active, archived: row[5],
                    createdAt: Timestamp(milliseconds: row[6]), updatedAt: Timestamp(milliseconds: row[7]),
                    stepsDone: row[8], stepsTotal: row[9], awaitCount: row[10], hasBlockingAwait: row[11],
                    searchText: row[12], nextDeadline: deadline.map { Timestamp(milliseconds: $0) },
                    queuedRemote: row[14], queuedLocal: row[15], runningRemote: row[16], runningLocal: row[17],
                    inboxCount: row[18]))
            }
            for row in try Row.fetchAll(db, sql: "SELECT seq, effectId, type, answerKey, taken, data FROM effects ORDER BY seq") {
                let text: String = row[5]
                s.effects.append(Effect(seq: row[0], id: row[1], type: row[2],
                                        body: (try? JSON(parsing: text))?.objectValue ?? [:], answerKey: row[3],
                                        taken: row[4], isDurable: true))
            }
            for row in try Row.fetchAll(db, sql: "SELECT assetId, variant, bytes, lastUsedAt, pinned, useOrder FROM cache_entries") {
                s.cacheEntries.append(CacheEntry(assetId: row[0], variant: CacheVariant(rawValue: row[1]) ?? .preview,
                                                 bytes: row[2], lastUsedAt: Timestamp(milliseconds: row[3]), pinned: row[4],
                                                 useOrder: row[5]))
            }
            for row in try Row.fetchAll(db, sql: """
                SELECT runId, workflowId, jobId FROM runs
                WHERE status <> 'succeeded' AND status <> 'failed' AND status <> 'cancelled' AND status <> 'skipped'
                """)
            {
                s.activeRuns.append((row[0], row[1], row[2]))
            }
            for row in try Row.fetchAll(db, sql: "SELECT awaitId, workflowId FROM awaits WHERE status != 'done'") {
                s.openAwaits.append((row[0], row[1]))
            }
            return s
        }
    }

    public func loadWorkflow(_ workflowId: String) throws -> Workflow? {
        try foldIf(pending.workflowIds.contains(workflowId))
        return try db().read { (db: Database) -> Workflow? in
            guard let w = try Row.fetchOne(db, sql: """
                SELECT seq, templateId, title, status, archived, createdAt, updatedAt, data FROM workflows
                WHERE workflowId = ?
                """, arguments: [workflowId])
            else { return nil }
            var nodes: [NodeInstance] = []
            for row in try Row.fetchAll(db, sql: "SELECT nodeId, data FROM nodes WHERE workflowId = ? ORDER BY position",
                                           arguments: [workflowId])
            {
                let text: String = row[1]
                nodes.append(RecordCoding.decodeNode(nodeId: row[0], (try? JSON(parsing: text)) ?? .null))
            }
            var runs: [Run] = []
            for row in try Row.fetchAll(db, sql: "SELECT runId, nodeId, data FROM runs WHERE workflowId = ? ORDER BY seq",
                                           arguments: [workflowId])
            {
                let text: String = row[2]
                runs.append(RecordCoding.decodeRun(runId: row[0], nodeId: row[1], (try? JSON(parsing: text)) ?? .null))
            }
            var awaits: [AwaitRequest] = []
            for row in try Row.fetchAll(db, sql: """
                SELECT awaitId, nodeId, runId, data FROM awaits WHERE workflowId = ? ORDER BY seq
                """, arguments: [workflowId])
            {
                let text: String = row[3]
                awaits.append(RecordCoding.decodeAwait(awaitId: row[0], workflowId: workflowId, nodeId: row[1],
                                                       runId: row[2], (try? JSON(parsing: text)) ?? .null))
            }
            let dataText: String = w[7]
            let data = (try? JSON(parsing: dataText))?.objectValue ?? [:]
            var workflow = Workflow(workflowId: workflowId, seq: w[0], templateId: w[1], title: w[2],
                                    createdAt: Timestamp(milliseconds: w[5]), updatedAt: Timestamp(milliseconds: w[6]),
                                    archived: w[4], autoRun: data["autoRun"]?.boolValue ?? false,
                                    pollingPaused: data["pollingPaused"]?.boolValue ?? false,
                                    status: WorkflowStatus(rawValue: w[3]) ?? .active, nodes: nodes, runs: runs,
                                    awaits: awaits)
            workflow.markClean()  // it is what the store holds
            return workflow
        }
    }

    public func loadAsset(_ assetId: String) throws -> Asset? {
        try foldIf(pending.rows[.asset(assetId)] != nil)
        return try db().read { (db: Database) -> Asset? in
            guard let row = try Row.fetchOne(db, sql: """
                SELECT type, createdAt, pinned, orphanedAt, data FROM assets WHERE assetId = ?
                """, arguments: [assetId])
            else { return nil }
            let text: String = row[4]
            var asset = RecordCoding.decodeAsset(assetId: assetId, type: row[0], createdAt: row[1], pinned: row[2],
                                                 (try? JSON(parsing: text)) ?? .null)
            let orphaned: Int64? = row[3]
            asset.orphanedAt = orphaned.map { Timestamp(milliseconds: $0) }
            return asset
        }
    }

    public func workflowId(forRun runId: String) throws -> String? {
        if case .run(let r)? = pending.rows[.run(runId)] { return r.workflowId }
        return try db().read { db in try String.fetchOne(db, sql: "SELECT workflowId FROM runs WHERE runId = ?", arguments: [runId]) }
    }

    public func run(forJob jobId: String) throws -> (runId: String, workflowId: String)? {
        try foldIf(!pending.isEmpty)
        return try db().read { (db: Database) -> (runId: String, workflowId: String)? in
            guard let row = try Row.fetchOne(db, sql: "SELECT runId, workflowId FROM runs WHERE jobId = ? ORDER BY seq DESC LIMIT 1",
                                             arguments: [jobId])
            else { return nil }
            return (row[0], row[1])
        }
    }

    public func unreferencedAssets(createdBefore cutoff: Timestamp) throws -> [String] {
        try foldIf(!pending.isEmpty)
        return try db().read { db in
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
        try foldIf(!pending.isEmpty)
        return try db().read { db in
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
        try db().read { db in
            try Row.fetchAll(db, sql: "SELECT seq, data FROM metrics WHERE seq > ? ORDER BY seq LIMIT ?",
                             arguments: [after, limit]).map { row in
                let text: String = row[1]
                return MetricEvent(seq: row[0], body: (try? JSON(parsing: text))?.objectValue ?? [:])
            }
        }
    }

    // MARK: Committing

    public func commit(_ changes: ChangeSet) throws {
        guard !changes.isEmpty else { return }
        let images = Self.images(of: changes)
        // Only rows, and room for them: one journal row. Otherwise what the journal holds is
        // folded first and the change is written to its tables, in the same transaction.
        let journaled = changes.isOnlyRows && images.count <= Self.journaledCommitRows
            && pending.count + images.count <= journalLimit && journalEntries < journalLimit
            && images.allSatisfy(\.isJournalable)
        if journaled && images.isEmpty { return }  // only workflows whose rows already say it all
        let body = journaled ? JournalCoding.encode(images) : []
        try transaction { db, statements in
            if journaled {
                var row = try statements.row(.journalAppend, db)
                row.blob(body)
                try row.run(db)
            } else {
                try self.foldPending(db, statements)
                try Self.write(changes, images, statements, db)
            }
        } committed: {
            if journaled {
                for image in images { self.pending.merge(image) }
                self.journalEntries += 1
            } else {
                self.forgetFolded()
            }
        }
    }

    /// Writes what the journal holds to the tables and empties it. Other connections reading the
    /// database file see every commit after this; the engine's own reads never need it.
    public func flush() throws {
        guard !pending.isEmpty || journalEntries > 0 else { return }
        try transaction { db, statements in try self.foldPending(db, statements) } committed: { self.forgetFolded() }
    }

    /// The journal was folded and emptied.
    private func forgetFolded() {
        pending.removeAll()
        journalEntries = 0
    }

    /// Runs `body` in one write transaction (prepared BEGIN and COMMIT: GRDB's `inTransaction`
    /// parses them anew each time, which costs as much as a small call's writes), then
    /// `committed` once it is committed; on a throw, rolls back and runs nothing more.
    private func transaction(_ body: (Database, PreparedStatements) throws -> Void,
                             committed: () -> Void) throws {
        let statements = self.statements
        try db().writeWithoutTransaction { db in
            try statements.row(.begin, db).run(db)
            do {
                guard try stillOwner(db, statements) else {
                    throw StoreError(code: "storeInUse", message: """
                        another engine (in this process or another) opened the store at \(path) after this one; \
                        to keep its changes, this engine saves nothing more: close it, and open the store in one \
                        engine at a time
                        """)
                }
                try body(db, statements)
                try statements.row(.commit, db).run(db)
            } catch {
                if !db.isInsideTransaction {
                    throw error
                }
                try? statements.row(.rollback, db).run(db)
                throw error
            }
            committed()
        }
    }

    /// Writes the pending images to their tables and empties the journal (the caller's
    /// transaction; the caller forgets the images once it commits).
    private func foldPending(_ db: Database, _ statements: PreparedStatements) throws {
        // Entries whose images all cancelled out are emptied too.
        guard !pending.isEmpty || journalEntries > 0 else { return }
        for image in pending.rows.values { try Self.write(image, statements, db) }
        try statements.row(.journalClear, db).run(db)
    }

    /// Folds first if a read of the tables would miss a pending image.
    private func foldIf(_ needed: Bool) throws {
        if needed { try flush() }
    }

    /// Replays what a killed process left in the journal, in order, and folds it.
    private func replayJournal() throws {
        let bodies = try db().read { db in
            try Data.fetchAll(db, sql: "SELECT body FROM journal ORDER BY seq").map { [UInt8]($0) }
        }
        guard !bodies.isEmpty else { return }
        // All of it decoded before any of it counts: a damaged entry refuses the store whole.
        var replayed = PendingRows()
        for body in bodies {
            for image in try JournalCoding.decode(body) { replayed.merge(image) }
        }
        pending = replayed
        journalEntries = bodies.count
        try flush()
    }

    static func text(_ json: JSON) -> String { JSONWriter.string(json) }

    /// The rows a change set writes, each as its image, in the order the change set gives them.
    /// Deletions, templates, tools, provider defaults, cache entries and metrics are not rows of
    /// this kind (``ChangeSet/isOnlyRows``): ``write(_:_:_:_:)`` writes them itself.
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
            let changes = c.workflowChanges[id] ?? new.changes(since: old)
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

    /// Writes a change set to its tables: what is not a row image, then the images.
    private static func write(_ c: ChangeSet, _ images: [RowImage], _ statements: PreparedStatements,
                              _ db: Database) throws {
        for t in c.templates {
            try db.execute(sql: """
                INSERT INTO templates (templateId, seq, name, createdAt, canonical, sourceSchema) VALUES (?, ?, ?, ?, ?, ?)
                """, arguments: [t.templateId, t.seq, t.name, t.createdAt.milliseconds, t.canonicalText, t.sourceSchema])
        }
        for t in c.tools {
            try db.execute(sql: """
                INSERT INTO tools (kind, spec, registeredAt) VALUES (?, ?, ?)
                ON CONFLICT(kind) DO UPDATE SET spec = excluded.spec, registeredAt = excluded.registeredAt
                """, arguments: [t.spec.kind, text(t.spec.json), t.registeredAt.milliseconds])
        }
        for (kind, params) in c.providerDefaults {
            if let params {
                try db.execute(sql: """
                    INSERT INTO provider_defaults (kind, params) VALUES (?, ?)
                    ON CONFLICT(kind) DO UPDATE SET params = excluded.params
                    """, arguments: [kind, text(.object(params))])
            } else {
                try db.execute(sql: "DELETE FROM provider_defaults WHERE kind = ?", arguments: [kind])
            }
        }
        for (id, asset) in c.assets where asset == nil {
            try db.cachedStatement(sql: "DELETE FROM assets WHERE assetId = ?").execute(arguments: [id])
        }
        for change in c.workflows where change.new == nil {
            guard let id = change.old?.workflowId else { continue }
            for table in ["awaits", "runs", "nodes", "workflows"] {
                try db.execute(sql: "DELETE FROM \(table) WHERE workflowId = ?", arguments: [id])
            }
        }
        for image in images { try write(image, statements, db) }
        for (_, entry) in c.cacheEntries {
            guard let e = entry else { continue }
            try db.cachedStatement(sql: """
                INSERT INTO cache_entries (assetId, variant, bytes, lastUsedAt, pinned, useOrder) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT(assetId, variant) DO UPDATE SET bytes = excluded.bytes, lastUsedAt = excluded.lastUsedAt,
                    pinned = excluded.pinned, useOrder = excluded.useOrder
                """).execute(arguments: [e.assetId, e.variant.rawValue, e.bytes, e.lastUsedAt.milliseconds, e.pinned,
                                         e.useOrder])
        }
        for (key, entry) in c.cacheEntries where entry == nil {
            guard let colon = key.firstIndex(of: ":") else { continue }
            let variant = String(key[..<colon])
            let assetId = String(key[key.index(after: colon)...])
            try db.cachedStatement(sql: "DELETE FROM cache_entries WHERE assetId = ? AND variant = ?")
                .execute(arguments: [assetId, variant])
        }
        for m in c.metricInserts {
            try db.cachedStatement(sql: "INSERT INTO metrics (seq, data) VALUES (?, ?)")
                .execute(arguments: [m.seq, text(.object(m.body))])
        }
        if let through = c.metricDeletesThrough {
            try db.cachedStatement(sql: "DELETE FROM metrics WHERE seq <= ?").execute(arguments: [through])
        }
    }

    /// Writes one row image. A row the table held is updated in place, and inserted only if
    /// that changed nothing (an UPDATE skips the INSERT attempt and its uniqueness probes); a
    /// new row is upserted.
    private static func write(_ image: RowImage, _ statements: PreparedStatements, _ db: Database) throws {
        switch image {
        case .meta(let key, let value):
            var row = try statements.row(.meta, db)
            row.text(key)
            row.utf8(value)
            try row.run(db)
        case .asset(let a):
            var row = try statements.row(.asset, db)
            row.text(a.assetId)
            row.text(a.type)
            row.int(a.createdAt)
            row.bool(a.pinned)
            row.int(a.orphanedAt)
            row.utf8(a.data)
            try row.run(db)
        case .workflow(let w):
            if w.existed {
                var row = try statements.row(.workflowUpdate, db)
                row.text(w.title)
                row.text(w.status)
                row.bool(w.archived)
                row.int(w.updatedAt)
                row.summaryColumns(w)
                row.utf8(w.data)
                row.text(w.workflowId)
                if try row.runCountingChanges(db) > 0 { return }
            }
            var row = try statements.row(.workflow, db)
            row.text(w.workflowId)
            row.int(w.seq)
            row.text(w.templateId)
            row.text(w.title)
            row.text(w.status)
            row.bool(w.archived)
            row.int(w.createdAt)
            row.int(w.updatedAt)
            row.summaryColumns(w)
            row.utf8(w.data)
            try row.run(db)
        case .node(let n):
            if n.existed {
                var row = try statements.row(.nodeUpdate, db)
                row.text(n.state)
                row.utf8(n.data)
                row.text(n.workflowId)
                row.text(n.nodeId)
                if try row.runCountingChanges(db) > 0 { return }
            }
            var row = try statements.row(.node, db)
            row.text(n.workflowId)
            row.text(n.nodeId)
            row.int(n.position)
            row.text(n.state)
            row.utf8(n.data)
            try row.run(db)
        case .run(let r):
            if r.existed && r.columnsKept {
                // Only if the row's columns already hold exactly these values (a legacy status
                // name is rewritten below, as the upsert always did).
                var row = try statements.row(.runDataUpdate, db)
                row.utf8(r.data)
                row.text(r.runId)
                row.text(r.status)
                row.text(r.jobId)
                if try row.runCountingChanges(db) > 0 { return }
            }
            if r.existed {
                var row = try statements.row(.runUpdate, db)
                row.text(r.status)
                row.text(r.jobId)
                row.utf8(r.data)
                row.text(r.runId)
                if try row.runCountingChanges(db) > 0 { return }
            }
            var row = try statements.row(.run, db)
            row.text(r.runId)
            row.text(r.workflowId)
            row.text(r.nodeId)
            row.int(r.seq)
            row.text(r.status)
            row.text(r.jobId)
            row.utf8(r.data)
            try row.run(db)
        case .await(let a):
            var row = try statements.row(.await, db)
            row.text(a.awaitId)
            row.text(a.workflowId)
            row.text(a.nodeId)
            row.text(a.runId)
            row.int(a.seq)
            row.text(a.status)
            row.utf8(a.data)
            try row.run(db)
        case .effect(let e):
            var row = try statements.row(.effectInsert, db)
            row.int(e.seq)
            row.text(e.effectId)
            row.text(e.type)
            row.text(e.answerKey)
            row.bool(e.taken)
            row.utf8(e.data)
            try row.run(db)
        case .effectTaken(let seq):
            var row = try statements.row(.effectTaken, db)
            row.int(seq)
            try row.run(db)
        case .effectDelete(let seq):
            var row = try statements.row(.effectDelete, db)
            row.int(seq)
            try row.run(db)
        }
    }
}
