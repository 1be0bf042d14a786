import Foundation
import GRDB
import GRDBSQLite
import WorkflowCore

/// The store's connection, with the write path's statements prepared on it and what it last saw
/// of the file's owner.
///
/// Every commit and read of the engine goes through it, and the folder's folds too
/// (``JournalFolder``, on its own thread): GRDB's queue serialises their uses of it, and the
/// store's write lock their transactions.
final class StoreConnection: @unchecked Sendable {
    let queue: DatabaseQueue
    let statements = PreparedStatements()
    /// The token the store wrote as the file's owner when it opened.
    private let ownerToken: String
    /// SQLite's `data_version` as this connection last saw the file: it moves only when another
    /// connection changes the file (another engine, or one reading it), so the owner is read only
    /// when it moves.
    private var dataVersion: Int64 = 0
    private let path: String
    /// Whether every commit is synced anyway (`synchronous=FULL`, ``Durability/full``).
    private let alwaysSynced: Bool

    static let ownerKey = "store.owner"

    init(queue: DatabaseQueue, path: String, ownerToken: String, durability: Durability = .normal) {
        self.queue = queue
        self.path = path
        self.alwaysSynced = durability == .full
        self.ownerToken = JSONWriter.string(.string(ownerToken))  // as the meta table holds values
    }

    /// Opens a connection to the file at `path` with the store's settings: WAL, `synchronous` as
    /// `durability` says, a checkpoint every `autocheckpointPages` pages of the log, and a page
    /// cache of `cacheKiB` KiB (``SQLiteStore/pageCacheKiB``).
    static func open(path: String, durability: Durability, autocheckpointPages: Int,
                     cacheKiB: Int = SQLiteStore.pageCacheKiB) throws -> DatabaseQueue {
        let synchronous = durability == .full ? "FULL" : "NORMAL"
        var config = Configuration()
        config.label = "workflow-store"
        config.busyMode = .timeout(5)
        config.journalMode = .wal
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA foreign_keys = ON")
            try db.execute(sql: "PRAGMA wal_autocheckpoint = \(autocheckpointPages)")
            // A negative size is in KiB.
            try db.execute(sql: "PRAGMA cache_size = -\(cacheKiB)")
        }
        let queue = try DatabaseQueue(path: path, configuration: config)
        // After the queue is open: GRDB sets NORMAL itself when it switches the file to WAL.
        try queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = \(synchronous)") }
        return queue
    }

    /// Writes this store's token as the file's owner: an engine that opened the file before this
    /// one is refused at its next commit. Not synced: a token only fences off engines that are
    /// alive, and a power loss leaves none. So the commit runs at `synchronous=NORMAL` (on "full"
    /// too), which in WAL mode syncs no commit; never at `OFF`, which also skips the syncs of a
    /// checkpoint the commit may start (the log's before it, the file's after it): the log can
    /// then be restarted over frames the file never got on disk, and a power loss takes commits
    /// that were on disk, synced folds included (the journal may then go on from entries the
    /// tables no longer hold, and the store is refused as damaged).
    func claimOwnership() throws {
        let token = ownerToken
        dataVersion = try queue.writeWithoutTransaction { db in
            if alwaysSynced { try db.execute(sql: "PRAGMA synchronous = NORMAL") }
            defer { if alwaysSynced { try? db.execute(sql: "PRAGMA synchronous = FULL") } }
            try db.inTransaction(.immediate) {
                try db.execute(sql: "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                               arguments: [Self.ownerKey, token])
                return .commit
            }
            return try Int64.fetchOne(db, sql: "PRAGMA data_version") ?? 0
        }
    }

    /// Whether the store still owns the file (inside a write transaction: nobody can claim it
    /// between this and the commit).
    private func stillOwner(_ db: Database) throws -> Bool {
        let now = try statements.row(.dataVersion, db).int64Value(db) ?? 0
        if now == dataVersion { return true }
        let owner = try String.fetchOne(statements.get(.metaValue, db), arguments: [Self.ownerKey])
        guard owner == ownerToken else { return false }
        dataVersion = now  // another connection changed the file, but did not claim it
        return true
    }

    /// Runs `body` in one write transaction (prepared BEGIN and COMMIT: GRDB's `inTransaction`
    /// parses them anew each time, which costs as much as a small call's writes), refused with
    /// `storeInUse` when another engine owns the file now; on a throw, rolls back. `synced`
    /// makes the commit wait until the log is on disk (`synchronous=FULL` for this transaction),
    /// whatever the durability.
    func transaction(synced: Bool = false, _ body: (Database, PreparedStatements) throws -> Void) throws {
        let statements = self.statements
        let raise = synced && !alwaysSynced
        try queue.writeWithoutTransaction { db in
            if raise { try statements.row(.synchronousFull, db).run(db) }
            defer { if raise { try? statements.row(.synchronousNormal, db).run(db) } }
            try statements.row(.begin, db).run(db)
            do {
                guard try stillOwner(db) else { throw StoreError.storeInUse(path) }
                try body(db, statements)
                try statements.row(.commit, db).run(db)
            } catch {
                if db.isInsideTransaction { try? statements.row(.rollback, db).run(db) }
                throw error
            }
        }
    }

    /// Runs `body` in one read transaction (prepared BEGIN and COMMIT); `body` only reads.
    ///
    /// Not GRDB's `DatabaseQueue.read`: it brackets the transaction with `PRAGMA query_only`, a
    /// flag pragma after which SQLite expires every statement prepared on the connection, so
    /// after each read the write path's statements and the cached reads' were all compiled again
    /// (a third of an engine's open, which loads a workflow per read).
    func read<T>(_ body: (Database) throws -> T) throws -> T {
        let statements = self.statements
        return try queue.writeWithoutTransaction { db in
            try statements.row(.beginRead, db).run(db)
            do {
                let result = try body(db)
                try statements.row(.commit, db).run(db)
                return result
            } catch {
                if db.isInsideTransaction { try? statements.row(.rollback, db).run(db) }
                throw error
            }
        }
    }

    /// The text of meta `key` as the table holds it (JSON), or nil, in a read transaction.
    func metaValue(_ key: String) throws -> String? {
        let statements = self.statements
        return try read { db in try String.fetchOne(statements.get(.metaValue, db), arguments: [key]) }
    }

    /// Copies the write-ahead log into the store's file, as far as no reader holds it back; on
    /// the way SQLite syncs the log (with `synchronous=NORMAL` too), so every commit is on disk
    /// once this returns. Throws what the disk refused.
    func checkpoint() throws {
        try queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(PASSIVE)") }
    }

    /// Finalizes the statements, then closes the connection.
    func close() {
        queue.inDatabase { _ in statements.removeAll() }
        try? queue.close()
    }
}
