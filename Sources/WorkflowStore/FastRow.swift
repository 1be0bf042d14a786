import GRDB
import GRDBSQLite

/// Binds and runs one of GRDB's cached statements through the SQLite C API.
///
/// The store's hot path writes a handful of rows per call; binding through `StatementArguments`
/// costs more than SQLite's own work there. This binds each value directly and steps the
/// statement once, inside the transaction GRDB opened. Texts are copied into the store's
/// ``BindArena`` and bound in place; running the row releases them, so rows are bound and run
/// one at a time. Visible to the package's benchmarks (`package`), which time SQLite alone
/// running the store's statements bound this way.
package struct FastRow {
    private let handle: SQLiteStatement
    private let arena: BindArena
    private var index: Int32 = 0

    package init(_ statement: Statement, _ arena: BindArena) {
        handle = statement.sqliteStatement
        self.arena = arena
        sqlite3_reset(handle)
    }

    package mutating func text(_ s: String) {
        var copy = s
        copy.withUTF8 { utf8(UnsafeRawBufferPointer($0)) }
    }

    /// Binds UTF-8 text held in bytes (a record written by ``JSONWriter`` or ``RecordText``),
    /// without making a `String` of it first.
    mutating func utf8(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { utf8($0) }
    }

    /// Binds UTF-8 text copied into the arena.
    mutating func utf8(_ bytes: UnsafeRawBufferPointer) {
        index += 1
        guard bytes.count > 0 else {
            sqlite3_bind_text(handle, index, "", 0, nil)  // static empty text, not NULL
            return
        }
        let copy = arena.copy(bytes).assumingMemoryBound(to: CChar.self)
        sqlite3_bind_text(handle, index, copy, Int32(bytes.count), nil)  // SQLITE_STATIC: read in place
    }

    /// Binds UTF-8 text where it is, without copying it (`SQLITE_STATIC`): `bytes` must stay
    /// where they are until the row has run (a journal entry being folded, ``PendingRows``).
    mutating func textInPlace(_ bytes: UnsafeRawBufferPointer) {
        index += 1
        guard bytes.count > 0 else {
            sqlite3_bind_text(handle, index, "", 0, nil)  // static empty text, not NULL
            return
        }
        sqlite3_bind_text(handle, index, bytes.baseAddress!.assumingMemoryBound(to: CChar.self), Int32(bytes.count), nil)
    }

    mutating func textInPlace(_ bytes: UnsafeRawBufferPointer?) {
        if let bytes { textInPlace(bytes) } else { null() }
    }

    /// Binds bytes as a blob, read in place like texts.
    mutating func blob(_ bytes: [UInt8]) {
        index += 1
        bytes.withUnsafeBytes { b in
            guard b.count > 0 else {
                sqlite3_bind_zeroblob(handle, index, 0)
                return
            }
            sqlite3_bind_blob(handle, index, arena.copy(b), Int32(b.count), nil)  // SQLITE_STATIC
        }
    }

    mutating func text(_ s: String?) {
        if let s { text(s) } else { null() }
    }

    mutating func int(_ v: Int64) {
        index += 1
        sqlite3_bind_int64(handle, index, v)
    }

    package mutating func int(_ v: Int) { int(Int64(v)) }

    mutating func int(_ v: Int64?) {
        if let v { int(v) } else { null() }
    }

    mutating func bool(_ b: Bool) { int(b ? 1 : 0) }

    package mutating func null() {
        index += 1
        sqlite3_bind_null(handle, index)
    }

    /// Steps the statement to completion and returns how many rows it changed; throws the SQLite
    /// error, if any.
    @discardableResult
    func runCountingChanges(_ db: Database) throws -> Int32 {
        try run(db)
        return sqlite3_changes(db.sqliteConnection)
    }

    /// Steps the statement once and returns its first row's first column as an integer, or nil
    /// when it returns no row (or NULL there); throws the SQLite error, if any. For one-value
    /// reads on the write path (`PRAGMA data_version` on every commit), where GRDB's `fetchOne`
    /// costs several times SQLite's own step.
    func int64Value(_ db: Database) throws -> Int64? {
        let code = sqlite3_step(handle)
        let value: Int64? = code == SQLITE_ROW && sqlite3_column_type(handle, 0) != SQLITE_NULL
            ? sqlite3_column_int64(handle, 0) : nil
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        arena.reset()
        guard code == SQLITE_DONE || code == SQLITE_ROW else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
        }
        return value
    }

    /// Steps the statement to completion; throws the SQLite error, if any.
    package func run(_ db: Database) throws {
        let code = sqlite3_step(handle)
        sqlite3_reset(handle)
        // The bound texts live in the arena only until the next row: unbind them.
        sqlite3_clear_bindings(handle)
        arena.reset()
        guard code == SQLITE_DONE || code == SQLITE_ROW else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
        }
    }
}

extension FastRow {
    /// The summary columns of a workflow row, in the order the workflow statements list them
    /// (stepsDone … inboxCount), for the insert and the update alike.
    mutating func summaryColumns(_ s: WorkflowRow) {
        int(s.stepsDone)
        int(s.stepsTotal)
        int(s.awaitCount)
        bool(s.hasBlockingAwait)
        text(s.searchText)
        int(s.nextDeadline)
        int(s.queuedRemote)
        int(s.queuedLocal)
        int(s.runningRemote)
        int(s.runningLocal)
        int(s.inboxCount)
    }
}
