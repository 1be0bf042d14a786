import Foundation
import GRDB
import GRDBSQLite

/// The write path's statements, the BEGIN of the store's reads and a workflow's loads, prepared
/// once per connection and found by name.
///
/// GRDB's `cachedStatement(sql:)` hashes the whole SQL text on every lookup; a call writes a
/// handful of rows, and those hashes cost as much as SQLite's own work. Used only inside the
/// store's serial queue; emptied before the connection closes. The statements' text is visible
/// to the package's benchmarks (`package`), which time SQLite alone running them.
package final class PreparedStatements: @unchecked Sendable {
    package enum Key: Int, CaseIterable {
        case begin, beginRead, commit, rollback, meta, asset, workflow, node, run, await, effectInsert, effectTaken, effectDelete
        case workflowUpdate, nodeUpdate, runUpdate, runDataUpdate, dataVersion
        case metaValue, synchronousFull, synchronousNormal
        case loadWorkflow, loadNodes, loadRuns, loadAwaits
        /// The inserts of ``asset``, ``workflow``, ``node`` and ``run`` for ``foldRows`` new rows
        /// at once (a fold's, ``TableWriter/write(newRows:tag:_:_:)``).
        case assets, workflows, nodes, runs

        /// The rows of a statement of many rows: SQLite's work to start and end a statement
        /// (its cursors, its registers freed) is a good part of writing a row one at a time.
        package static let foldRows = 16

        package var sql: String {
            switch self {
            case .begin: "BEGIN IMMEDIATE TRANSACTION"
            case .beginRead: "BEGIN DEFERRED TRANSACTION"
            case .commit: "COMMIT TRANSACTION"
            case .rollback: "ROLLBACK TRANSACTION"
            case .meta: "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value"
            case .asset: """
                INSERT INTO assets (assetId, type, createdAt, pinned, orphanedAt, data) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT(assetId) DO UPDATE SET type = excluded.type, pinned = excluded.pinned,
                    orphanedAt = excluded.orphanedAt, data = excluded.data
                """
            case .workflow: """
                INSERT INTO workflows (workflowId, seq, templateId, title, status, archived, createdAt, updatedAt,
                    stepsDone, stepsTotal, awaitCount, hasBlockingAwait, searchText, nextDeadline, queuedRemote,
                    queuedLocal, runningRemote, runningLocal, inboxCount, data)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(workflowId) DO UPDATE SET title = excluded.title, status = excluded.status,
                    archived = excluded.archived, updatedAt = excluded.updatedAt, stepsDone = excluded.stepsDone,
                    stepsTotal = excluded.stepsTotal, awaitCount = excluded.awaitCount,
                    hasBlockingAwait = excluded.hasBlockingAwait, searchText = excluded.searchText,
                    nextDeadline = excluded.nextDeadline, queuedRemote = excluded.queuedRemote,
                    queuedLocal = excluded.queuedLocal, runningRemote = excluded.runningRemote,
                    runningLocal = excluded.runningLocal, inboxCount = excluded.inboxCount, data = excluded.data
                """
            case .node: """
                INSERT INTO nodes (workflowId, nodeId, position, state, data) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT(workflowId, nodeId) DO UPDATE SET state = excluded.state, data = excluded.data
                """
            case .run: """
                INSERT INTO runs (runId, workflowId, nodeId, seq, status, jobId, data) VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(runId) DO UPDATE SET status = excluded.status, jobId = excluded.jobId, data = excluded.data
                """
            case .await: """
                INSERT INTO awaits (awaitId, workflowId, nodeId, runId, seq, status, data) VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(awaitId) DO UPDATE SET status = excluded.status, data = excluded.data
                """
            case .effectInsert: "INSERT INTO effects (seq, effectId, type, answerKey, taken, data) VALUES (?, ?, ?, ?, ?, ?)"
            case .effectTaken: "UPDATE effects SET taken = 1 WHERE seq = ?"
            case .effectDelete: "DELETE FROM effects WHERE seq = ?"
            // Rows known to exist (their record was committed): a plain UPDATE skips the INSERT
            // attempt and its uniqueness probes; the upserts above remain the fallback.
            case .workflowUpdate: """
                UPDATE workflows SET title = ?, status = ?, archived = ?, updatedAt = ?, stepsDone = ?, stepsTotal = ?,
                    awaitCount = ?, hasBlockingAwait = ?, searchText = ?, nextDeadline = ?, queuedRemote = ?,
                    queuedLocal = ?, runningRemote = ?, runningLocal = ?, inboxCount = ?, data = ?
                WHERE workflowId = ?
                """
            case .nodeUpdate: "UPDATE nodes SET state = ?, data = ? WHERE workflowId = ? AND nodeId = ?"
            case .runUpdate: "UPDATE runs SET status = ?, jobId = ?, data = ? WHERE runId = ?"
            // Status and job id unchanged: the indexes on them (runs_by_job, runs_active) are left
            // alone, where naming the columns in SET rewrites their entries. Changes no row unless
            // the columns already hold these values.
            case .runDataUpdate: "UPDATE runs SET data = ? WHERE runId = ? AND status = ? AND jobId IS ?"
            case .dataVersion: "PRAGMA data_version"
            case .metaValue: "SELECT value FROM meta WHERE key = ?"
            case .synchronousFull: "PRAGMA synchronous = FULL"
            case .synchronousNormal: "PRAGMA synchronous = NORMAL"
            // A workflow's rows (``SQLiteStore/loadWorkflow(_:)``).
            case .loadWorkflow: """
                SELECT seq, templateId, title, status, archived, createdAt, updatedAt, data FROM workflows
                WHERE workflowId = ?
                """
            case .loadNodes: "SELECT nodeId, data FROM nodes WHERE workflowId = ? ORDER BY position"
            case .loadRuns: "SELECT runId, nodeId, data FROM runs WHERE workflowId = ? ORDER BY seq"
            case .loadAwaits: "SELECT awaitId, nodeId, runId, data FROM awaits WHERE workflowId = ? ORDER BY seq"
            case .assets: Self.many(Self.asset.sql)
            case .workflows: Self.many(Self.workflow.sql)
            case .nodes: Self.many(Self.node.sql)
            case .runs: Self.many(Self.run.sql)
            }
        }

        /// The insert of the upsert `single` for ``foldRows`` rows, OR FAIL and without its
        /// ON CONFLICT clause. OR FAIL: a constraint that fails ends the statement without
        /// undoing its earlier rows, so SQLite keeps no statement journal for it (with ABORT,
        /// the default, or an upsert's DO UPDATE, every statement of many rows copies each page it
        /// changes first, and spills the copies to a temporary file).
        private static func many(_ single: String) -> String {
            guard let values = single.range(of: "VALUES ("),
                  let end = single[values.upperBound...].firstIndex(of: ")") else { preconditionFailure(single) }
            let row = String(single[values.lowerBound..<single.index(after: end)].dropFirst("VALUES ".count))
            return single[..<values.lowerBound].replacingOccurrences(of: "INSERT INTO", with: "INSERT OR FAIL INTO")
                + "VALUES " + Array(repeating: row, count: foldRows).joined(separator: ", ")
        }
    }

    private var statements = [Statement?](repeating: nil, count: Key.allCases.count)
    /// Where rows' texts are bound from (see ``FastRow``).
    let arena = BindArena()

    /// A row of statement `key`, ready to bind.
    func row(_ key: Key, _ db: Database) throws -> FastRow { FastRow(try get(key, db), arena) }

    func get(_ key: Key, _ db: Database) throws -> Statement {
        if let s = statements[key.rawValue] { return s }
        let s = try db.makeStatement(sql: key.sql)
        statements[key.rawValue] = s
        return s
    }

    /// How many times SQLite compiled these statements again after preparing them (it does when
    /// something expires them, such as a change of a flag pragma on the connection), for tests.
    /// Not the `synchronous` pragmas: SQLite compiles those again each time they run.
    func recompilations() -> Int {
        Key.allCases.reduce(0) { n, key in
            guard key != .synchronousFull, key != .synchronousNormal, let s = statements[key.rawValue] else { return n }
            return n + Int(sqlite3_stmt_status(s.sqliteStatement, SQLITE_STMTSTATUS_REPREPARE, 0))
        }
    }

    func removeAll() {
        for i in statements.indices { statements[i] = nil }
    }
}
