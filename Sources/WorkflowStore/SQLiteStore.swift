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

    /// Pages the write-ahead log may hold before a commit copies them back into the database
    /// (SQLite's default is 1,000). A call's rows are spread over many pages, and a page written
    /// again before the checkpoint is copied back once: at 10,000 pages (40 MiB of 4 KiB pages)
    /// checkpoints write and sync about a tenth as often, for 10–15 % more completions per
    /// second (docs/BENCHMARKS.md). The log file keeps its largest size; opening after a killed
    /// process reads it whole.
    public static let walCheckpointPages = 10_000

    /// Opens (creating if needed) and migrates the store at `path`; `":memory:"` is a private
    /// in-memory database.
    public init(path: String, durability: Durability = .normal) throws {
        self.path = path
        var config = Configuration()
        config.label = "workflow-store"
        if path != ":memory:" { config.journalMode = .wal }
        let synchronous = durability == .full ? "FULL" : "NORMAL"
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = \(synchronous)")
            try db.execute(sql: "PRAGMA foreign_keys = ON")
            try db.execute(sql: "PRAGMA wal_autocheckpoint = \(SQLiteStore.walCheckpointPages)")
        }
        config.busyMode = .timeout(5)
        do {
            let queue = path == ":memory:" ? try DatabaseQueue(configuration: config)
                : try DatabaseQueue(path: path, configuration: config)
            let migrator = StoreSchema.migrator
            let superseded = try queue.read { db in try migrator.hasBeenSuperseded(db) }
            if superseded {
                throw StoreError(code: "storeTooNew",
                                 message: "the store at \(path) was written by a newer version of the library")
            }
            try migrator.migrate(queue)
            self.queue = queue
        } catch let e as StoreError {
            throw e
        } catch {
            throw StoreError(code: "storeOpenFailed", message: "cannot open the store at \(path): \(error)")
        }
    }

    private func db() throws -> DatabaseQueue {
        guard let queue else { throw StoreError(code: "storeClosed", message: "the store is closed") }
        return queue
    }

    public func close() {
        queue?.inDatabase { _ in statements.removeAll() }  // finalized before the connection closes
        try? queue?.close()
        queue = nil
    }

    deinit { close() }

    // MARK: Loading

    public func loadSnapshot() throws -> StoreSnapshot {
        try db().read { db in
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
        try db().read { (db: Database) -> Workflow? in
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
        try db().read { (db: Database) -> Asset? in
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
        try db().read { db in try String.fetchOne(db, sql: "SELECT workflowId FROM runs WHERE runId = ?", arguments: [runId]) }
    }

    public func run(forJob jobId: String) throws -> (runId: String, workflowId: String)? {
        try db().read { (db: Database) -> (runId: String, workflowId: String)? in
            guard let row = try Row.fetchOne(db, sql: "SELECT runId, workflowId FROM runs WHERE jobId = ? ORDER BY seq DESC LIMIT 1",
                                             arguments: [jobId])
            else { return nil }
            return (row[0], row[1])
        }
    }

    public func unreferencedAssets(createdBefore cutoff: Timestamp) throws -> [String] {
        try db().read { db in
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
        try db().read { db in
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

    public func metrics(limit: Int) throws -> [MetricEvent] {
        try db().read { db in
            try Row.fetchAll(db, sql: "SELECT seq, data FROM metrics ORDER BY seq LIMIT ?", arguments: [limit]).map { row in
                let text: String = row[1]
                return MetricEvent(seq: row[0], body: (try? JSON(parsing: text))?.objectValue ?? [:])
            }
        }
    }

    // MARK: Committing

    public func commit(_ changes: ChangeSet) throws {
        guard !changes.isEmpty else { return }
        let statements = self.statements
        try db().writeWithoutTransaction { db in
            // BEGIN and COMMIT as prepared statements: GRDB's inTransaction parses them anew each
            // time, which costs as much as a small call's writes.
            try statements.row(.begin, db).run(db)
            do {
                try Self.write(changes, statements, db)
                try statements.row(.commit, db).run(db)
            } catch {
                if !db.isInsideTransaction {
                    throw error
                }
                try? statements.row(.rollback, db).run(db)
                throw error
            }
        }
    }

    static func text(_ json: JSON) -> String { JSONWriter.string(json) }

    private static func write(_ c: ChangeSet, _ statements: PreparedStatements, _ db: Database) throws {
        if !c.meta.isEmpty {
            for (k, v) in c.meta {
                var row = try statements.row(.meta, db)
                row.text(k)
                row.json(v)
                try row.run(db)
            }
        }
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
        // Assets before workflows: nothing references them by constraint, but a reader sees both.
        for (id, asset) in c.assets {
            if let a = asset {
                var row = try statements.row(.asset, db)
                row.text(id)
                row.text(a.type)
                row.int(a.createdAt.milliseconds)
                row.bool(a.pinned)
                row.int(a.orphanedAt?.milliseconds)
                row.json(RecordCoding.encode(a))
                try row.run(db)
            } else {
                try db.cachedStatement(sql: "DELETE FROM assets WHERE assetId = ?").execute(arguments: [id])
            }
        }
        for change in c.workflows {
            let id = change.new?.workflowId ?? change.old?.workflowId ?? ""
            try writeWorkflow(change.old, change.new, change.summary, c.workflowChanges[id], statements, db)
        }
        if !c.effectInserts.isEmpty {
            for e in c.effectInserts {
                var row = try statements.row(.effectInsert, db)
                row.int(e.seq)
                row.text(e.id)
                row.text(e.type)
                row.text(e.answerKey)
                row.bool(e.taken)
                row.json(.object(e.body))
                try row.run(db)
            }
        }
        if !c.effectsTaken.isEmpty {
            for seq in c.effectsTaken {
                var row = try statements.row(.effectTaken, db)
                row.int(seq)
                try row.run(db)
            }
        }
        if !c.effectDeletes.isEmpty {
            for seq in c.effectDeletes {
                var row = try statements.row(.effectDelete, db)
                row.int(seq)
                try row.run(db)
            }
        }
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
            try db.execute(sql: "DELETE FROM metrics WHERE seq <= ?", arguments: [through])
        }
    }

    private static func writeWorkflow(_ old: Workflow?, _ new: Workflow?, _ summary: WorkflowSummary?,
                                      _ known: WorkflowChanges?, _ statements: PreparedStatements,
                                      _ db: Database) throws {
        guard let new else {
            guard let id = old?.workflowId else { return }
            for table in ["awaits", "runs", "nodes", "workflows"] {
                try db.execute(sql: "DELETE FROM \(table) WHERE workflowId = ?", arguments: [id])
            }
            return
        }
        let id = new.workflowId
        if let s = summary {
            var updated = false
            if old != nil {
                var row = try statements.row(.workflowUpdate, db)
                row.text(new.title)
                row.text(new.status.rawValue)
                row.bool(new.archived)
                row.int(new.updatedAt.milliseconds)
                row.summaryColumns(s)
                row.json(RecordCoding.encodeWorkflowData(new))
                row.text(id)
                updated = try row.runCountingChanges(db) > 0
            }
            if !updated {
                var row = try statements.row(.workflow, db)
                row.text(id)
                row.int(new.seq)
                row.text(new.templateId)
                row.text(new.title)
                row.text(new.status.rawValue)
                row.bool(new.archived)
                row.int(new.createdAt.milliseconds)
                row.int(new.updatedAt.milliseconds)
                row.summaryColumns(s)
                row.json(RecordCoding.encodeWorkflowData(new))
                try row.run(db)
            }
        }
        // Only the records that differ; indices, not element bindings (a binding copies the record).
        // A record at a position the committed version already held (same id) is a row that
        // exists: UPDATE it, and upsert only if that changed nothing.
        let changes = known ?? new.changes(since: old)
        for i in changes.nodes {
            let data = JSONWriter.bytes(RecordCoding.encode(new.nodes[i]))
            if let old, i < old.nodes.count, old.nodes[i].nodeId == new.nodes[i].nodeId {
                var row = try statements.row(.nodeUpdate, db)
                row.text(new.nodes[i].state.rawValue)
                row.utf8(data)
                row.text(id)
                row.text(new.nodes[i].nodeId)
                if try row.runCountingChanges(db) > 0 { continue }
            }
            var row = try statements.row(.node, db)
            row.text(id)
            row.text(new.nodes[i].nodeId)
            row.int(i)
            row.text(new.nodes[i].state.rawValue)
            row.utf8(data)
            try row.run(db)
        }
        for i in changes.runs {
            let data = RecordCoding.runBytes(new.runs[i])
            if let old, i < old.runs.count, old.runs[i].runId == new.runs[i].runId {
                let status = new.runs[i].status.rawValue
                if old.runs[i].status == new.runs[i].status && old.runs[i].jobId == new.runs[i].jobId {
                    // Only if the row's columns already hold exactly these values (a legacy
                    // status name is rewritten below, as the upsert always did).
                    var row = try statements.row(.runDataUpdate, db)
                    row.utf8(data)
                    row.text(new.runs[i].runId)
                    row.text(status)
                    row.text(new.runs[i].jobId)
                    if try row.runCountingChanges(db) > 0 { continue }
                }
                var row = try statements.row(.runUpdate, db)
                row.text(status)
                row.text(new.runs[i].jobId)
                row.utf8(data)
                row.text(new.runs[i].runId)
                if try row.runCountingChanges(db) > 0 { continue }
            }
            var row = try statements.row(.run, db)
            row.text(new.runs[i].runId)
            row.text(id)
            row.text(new.runs[i].nodeId)
            row.int(i)
            row.text(new.runs[i].status.rawValue)
            row.text(new.runs[i].jobId)
            row.utf8(data)
            try row.run(db)
        }
        for i in changes.awaits {
            let a = new.awaits[i]
            var row = try statements.row(.await, db)
            row.text(a.awaitId)
            row.text(id)
            row.text(a.nodeId)
            row.text(a.runId)
            row.int(i)
            row.text(a.status.rawValue)
            row.json(RecordCoding.encode(a))
            try row.run(db)
        }
    }
}
