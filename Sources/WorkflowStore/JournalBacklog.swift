import Foundation
import GRDB

/// The journal's entries committed and not yet folded into the store's tables, in commit order,
/// and the lock that serialises writes to the tables.
///
/// The engine's thread appends an entry with every journaled commit (``JournalFile``);
/// entries are *folded* (their rows written to the tables, in a transaction that also records
/// the last entry folded) by the store's ``JournalFolder`` on its own thread, or by the engine's
/// thread itself when it must read the tables, when the backlog is full (after waiting for the
/// folder's fold under way, if there is one: ``waitForFolderFold()``), or before a commit the
/// journal does not take. Whoever folds holds ``writeLock``; the folder merges the entries'
/// images (keeping the last image of each row) before it takes the lock.
///
/// A fold is synced (its commit waits until the store's log is on disk, whatever the
/// durability): only then may the journal delete the entries it holds (``syncedThrough``), so a
/// power loss can never take an entry from both files.
final class JournalBacklog: @unchecked Sendable {
    /// A journal entry as it was appended: decoded by whoever folds it.
    struct Entry: Sendable {
        let seq: Int64
        let body: [UInt8]
        let rows: Int
        /// The workflows whose rows it writes.
        let workflowIds: [String]
    }

    /// Held by every write to the store's tables.
    let writeLock = StoreWriteLock()
    /// Guards the fields below (never held across a transaction).
    private let lock = NSLock()
    private var entries: [Entry] = []
    private var rows = 0
    private var bytes = 0
    /// The bytes the journal's file held after the last append (0 in memory).
    private var file = 0
    /// Rows appended since the engine's thread last needed the tables (``noteTablesNeeded()``).
    private var sinceTablesNeeded = 0
    /// Each workflow with rows in the backlog, and the last entry holding some.
    private var workflows: [String: Int64] = [:]
    /// The last entry whose rows are in the tables (meta `journal.foldedThrough`).
    private var folded: Int64 = 0
    /// The last entry whose rows are in the tables and on disk.
    private var synced: Int64 = 0
    /// Folds so far (of at least one entry), by either thread.
    private var foldCount = 0
    /// Whether a fold of the folder's is under way, from its look at the entries waiting to its
    /// end (its transaction committed, or failed, or nothing folded), and how many have ended:
    /// guarded by `foldEnded`, which is signalled when one ends.
    private let foldEnded = NSCondition()
    private var folderFolding = false
    private var folderFoldsEnded = 0
    private var foldWaiters = 0

    /// The store's meta key holding the last entry folded.
    static let foldedThroughKey = "journal.foldedThrough"
    /// The store's meta key counting the commits written straight to the tables.
    static let directCommitsKey = "journal.directCommits"
    /// The store's meta key holding the last entry folded and synced by ``syncFolded(on:)``
    /// (folds synced in their own transaction do not move it): what the sync's transaction
    /// writes, only so that it writes something.
    static let syncedThroughKey = "journal.syncedThrough"

    /// Folds of at least one entry so far, by either thread, for tests.
    var folds: Int { lock.withLock { foldCount } }

    /// Whether the folder's fold is under way (``waitForFolderFold()``), and how many threads wait
    /// for it to end, for tests.
    var folderFoldUnderWay: Bool { foldEnded.withLock { folderFolding } }
    var folderFoldWaiters: Int { foldEnded.withLock { foldWaiters } }

    /// Rows (each image counted), entries and their bytes waiting.
    var counts: (rows: Int, entries: Int, bytes: Int) { lock.withLock { (rows, entries.count, bytes) } }

    /// What the journal's file held after the last append, in bytes: it is emptied only by an
    /// append that finds every entry it holds folded (and synced), so under a steady load the
    /// folder must catch up now and then (``JournalFolder``).
    var fileBytes: Int { lock.withLock { file } }

    var isEmpty: Bool { lock.withLock { entries.isEmpty } }

    /// Whether some rows of workflow `id` are waiting.
    func holdsRows(ofWorkflow id: String) -> Bool {
        lock.withLock {
            guard let last = workflows[id], let first = entries.first else { return false }
            return last >= first.seq
        }
    }

    /// Rows (each image counted) appended since the engine's thread last needed the tables: a
    /// commit the journal does not take, or a read, folds what waits on that thread.
    var rowsSinceTablesNeeded: Int { lock.withLock { sinceTablesNeeded } }

    /// The engine's thread needs the tables (a commit written to them, a read that folds first).
    func noteTablesNeeded() {
        lock.withLock { sinceTablesNeeded = 0 }
    }

    /// A committed entry joins the backlog; the journal's file now holds `fileBytes`.
    func append(_ entry: Entry, fileBytes: Int = 0) {
        lock.withLock {
            entries.append(entry)
            rows += entry.rows
            bytes += entry.body.count
            file = fileBytes
            sinceTablesNeeded += entry.rows
            for id in entry.workflowIds { workflows[id] = entry.seq }
        }
    }

    /// The entries waiting now, oldest first.
    func snapshot() -> [Entry] { lock.withLock { entries } }

    /// The oldest entry waiting, if any.
    var firstSeq: Int64? { lock.withLock { entries.first?.seq } }

    /// The last entry whose rows are in the tables.
    var foldedThrough: Int64 { lock.withLock { folded } }

    /// The last entry whose rows are in the tables and on disk: the journal may delete the
    /// entries up to it.
    var syncedThrough: Int64 { lock.withLock { synced } }

    /// Entries folded without a sync since the last synced fold.
    var unsyncedEntries: Int64 { lock.withLock { folded - synced } }

    /// The entries through `seq` are in the tables now (their transaction committed); `synced`:
    /// and on disk, with everything committed before.
    func folded(through seq: Int64, synced isSynced: Bool) {
        lock.withLock {
            folded = max(folded, seq)
            if isSynced { synced = folded }
            let n = entries.prefix { $0.seq <= seq }.count
            if n > 0 { foldCount += 1 }
            for e in entries.prefix(n) {
                rows -= e.rows
                bytes -= e.body.count
            }
            entries.removeFirst(n)
            if entries.isEmpty { workflows.removeAll(keepingCapacity: true) }
        }
    }

    // MARK: Folding

    /// The last image of each row of `entries`, merged in order (its bytes were committed, so a
    /// failure to read them is `storeCorrupt`).
    static func merge(_ entries: [Entry]) throws -> PendingRows {
        // Under load about half the images are rows' last: the table grows at most once.
        var merged = PendingRows(capacity: entries.reduce(0) { $0 + $1.rows } / 2)
        for e in entries { try merged.merge(entry: e.body) }
        return merged
    }

    /// Writes `merged` to the tables and records entry `seq` as the last folded, inside the
    /// caller's transaction.
    static func write(_ merged: PendingRows, through seq: Int64, _ statements: PreparedStatements,
                      _ db: Database) throws {
        try merged.write(statements, db)
        try writeMeta(foldedThroughKey, seq, statements, db)
    }

    static func writeMeta(_ key: String, _ value: Int64, _ statements: PreparedStatements, _ db: Database) throws {
        var row = try statements.row(.meta, db)
        row.text(key)
        row.text(String(value))
        try row.run(db)
    }

    /// Folds every entry waiting, through `connection`, in one synced transaction. The caller
    /// holds ``writeLock``.
    func foldAll(on connection: StoreConnection) throws {
        let waiting = snapshot()
        guard let last = waiting.last?.seq else { return }
        let merged = try Self.merge(waiting)
        try connection.transaction(synced: true) { db, statements in
            try Self.write(merged, through: last, statements, db)
        }
        folded(through: last, synced: true)
    }

    /// Waits for the end of the folder's fold under way, if one is (``foldInBackground(on:)``);
    /// returns whether there was one. For the engine's thread, when the backlog is full: the rows
    /// that fold took leave the backlog as it ends, and the folder goes on with what came
    /// meanwhile. Folding the rest on the engine's thread instead (after waiting for that fold's
    /// transaction all the same) did the folder's work on the engine's thread, while the folder
    /// had nothing left to fold. The caller must hold nothing the folder needs (``writeLock``,
    /// the connection).
    func waitForFolderFold() -> Bool {
        foldEnded.lock()
        defer { foldEnded.unlock() }
        guard folderFolding else { return false }
        // That fold, not the next: the folder may start another at once, on what came meanwhile.
        let ended = folderFoldsEnded
        foldWaiters += 1
        while folderFoldsEnded == ended { foldEnded.wait() }
        foldWaiters -= 1
        return true
    }

    /// Makes every fold so far wait on disk: one synced transaction (a synced commit puts
    /// everything logged before it on disk), recording the last entry folded as synced
    /// (``syncedThroughKey``). The caller holds ``writeLock``.
    ///
    /// The transaction must change a row: SQLite writes no page for a row rewritten as it was,
    /// and a commit that writes no page writes nothing to the log and syncs nothing. So it does
    /// not rewrite ``foldedThroughKey``, which the unsynced fold set to this very value (it did
    /// so once, and the journal then dropped entries whose fold a power cut took, leaving a
    /// journal that goes on after a gap: the store refused as damaged). The synced mark always
    /// moves: it was last written with the entries synced then, and some were folded since.
    func syncFolded(on connection: StoreConnection) throws {
        let through = foldedThrough
        guard unsyncedEntries > 0 else { return }
        try connection.transaction(synced: true) { db, statements in
            try Self.writeMeta(Self.syncedThroughKey, through, statements, db)
        }
        folded(through: through, synced: true)
    }

    /// The folder's fold: the entries waiting now, merged before the lock is taken, written in
    /// one synced transaction. Returns whether it folded them; when the engine's thread folded
    /// some of them meanwhile it folds nothing, and the caller looks again.
    func foldInBackground(on connection: StoreConnection) throws -> Bool {
        foldEnded.withLock { folderFolding = true }
        defer {
            foldEnded.lock()
            folderFolding = false
            folderFoldsEnded += 1
            foldEnded.broadcast()
            foldEnded.unlock()
        }
        let waiting = snapshot()
        guard let first = waiting.first?.seq, let last = waiting.last?.seq else { return false }
        let merged = try Self.merge(waiting)
        writeLock.lockForFolder()
        defer { writeLock.unlock() }
        guard firstSeq == first else { return false }
        try connection.transaction(synced: true) { db, statements in
            try Self.write(merged, through: last, statements, db)
        }
        folded(through: last, synced: true)
        return true
    }
}
