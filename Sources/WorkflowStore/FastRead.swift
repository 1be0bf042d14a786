import GRDB
import GRDBSQLite
import WorkflowCore

/// Steps one of the store's prepared queries through the SQLite C API and reads its columns in
/// place: the read side of ``FastRow``.
///
/// Loading a workflow reads some thirty rows, each with a JSON record. Through GRDB's `Row` each
/// row's values were copied into a row object, each record into a `String`, and the `String`
/// then parsed; here a record is parsed straight from the bytes SQLite holds for the column,
/// valid until the next step. Used inside the store's serial queue, one query at a time per
/// statement; the bound texts are copied by SQLite (`SQLITE_TRANSIENT`), so nothing outlives the
/// call but what the caller builds from the columns.
struct FastRead {
    private let handle: SQLiteStatement
    private let db: Database

    /// Resets `statement` and binds `arguments` (texts) to its parameters in order.
    init(_ statement: Statement, _ db: Database, _ arguments: String...) {
        handle = statement.sqliteStatement
        self.db = db
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        for (i, argument) in arguments.enumerated() {
            var text = argument
            text.withUTF8 { utf8 in
                utf8.withMemoryRebound(to: CChar.self) { c in
                    guard let start = c.baseAddress, c.count > 0 else {
                        _ = sqlite3_bind_text(handle, Int32(i + 1), "", 0, nil)  // static empty text, not NULL
                        return
                    }
                    // Copied by SQLite: `text` dies at the end of this closure.
                    _ = sqlite3_bind_text(handle, Int32(i + 1), start, Int32(c.count), SQLITE_TRANSIENT)
                }
            }
        }
    }

    /// Moves to the next row: false once there is none (the statement is reset then); throws
    /// SQLite's error.
    func next() throws -> Bool {
        let code = sqlite3_step(handle)
        if code == SQLITE_ROW { return true }
        sqlite3_reset(handle)
        guard code == SQLITE_DONE else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
        }
        return false
    }

    /// Ends the query before its last row (a lookup of one row).
    func finish() {
        sqlite3_reset(handle)
    }

    /// Column `i`'s bytes as SQLite holds them (texts as UTF-8), valid until the next step.
    private func bytes(_ i: Int32) -> UnsafeBufferPointer<UInt8> {
        // `sqlite3_column_text` first, then `sqlite3_column_bytes`: the order SQLite documents.
        guard let text = sqlite3_column_text(handle, i) else { return UnsafeBufferPointer(start: nil, count: 0) }
        return UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(handle, i)))
    }

    func string(_ i: Int32) -> String { String(decoding: bytes(i), as: UTF8.self) }

    func int64(_ i: Int32) -> Int64 { sqlite3_column_int64(handle, i) }

    func bool(_ i: Int32) -> Bool { int64(i) != 0 }

    /// Column `i`'s JSON text parsed where it lies, or `null` if it is not JSON (as records
    /// always read: a damaged record loads with its fields' defaults).
    func json(_ i: Int32) -> JSON {
        let text = bytes(i)
        guard text.count > 0 else { return .null }
        return (try? JSONParser.parse(bytes: text)) ?? .null
    }
}

/// SQLite's `SQLITE_TRANSIENT` (copy the bound bytes), which Swift does not import.
private let SQLITE_TRANSIENT = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)
