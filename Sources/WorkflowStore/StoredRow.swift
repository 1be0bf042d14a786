import GRDB

/// A row of one of the store's tables, read column by column through GRDB.
///
/// SQLite keeps whatever a column is given: a program other than the engine (or a damaged
/// file) can leave text in an integer column. GRDB's `row[i]` traps on such a value (its
/// subscript is a `try!`), which through the C ABI would kill the host; reading through this
/// throws `storeCorrupt` instead, naming the table and the column (and a count's number), never
/// a text value (it may be personal data).
struct StoredRow {
    let row: Row
    let table: String

    /// The rows of `table` that `sql` selects.
    static func fetchAll(_ db: Database, _ table: String, sql: String) throws -> [StoredRow] {
        try Row.fetchAll(db, sql: sql).map { StoredRow(row: $0, table: table) }
    }

    /// The first row of `table` that `statement` selects with `arguments`, if any.
    static func fetchOne(_ statement: Statement, _ table: String, arguments: StatementArguments) throws -> StoredRow? {
        try Row.fetchOne(statement, arguments: arguments).map { StoredRow(row: $0, table: table) }
    }

    /// Column `index`'s value; `storeCorrupt` if it is not a `Value`.
    subscript<Value: DatabaseValueConvertible & StatementColumnConvertible>(_ index: Int) -> Value {
        get throws {
            do {
                return try row.decode(Value.self, atIndex: index)
            } catch {
                throw Self.wrongType(table: table, column: Array(row.columnNames)[index],
                                     found: Array(row.databaseValues)[index])
            }
        }
    }

    /// Column `index`'s count, which the engine keeps within `0 ... max`: anything else (a
    /// negative count, one that sums past `Int64.max`) is `storeCorrupt` before arithmetic on it
    /// can trap.
    func count(_ index: Int, max: Int64 = Int64(Int32.max)) throws -> Int {
        let value: Int64 = try self[index]
        guard (0...max).contains(value) else {
            throw StoreError(code: "storeCorrupt", message: """
                the store's \(table) table holds \(value) in column \(Array(row.columnNames)[index]), where the \
                engine writes 0 … \(max): the store was changed by something else than the engine
                """)
        }
        return Int(value)
    }

    static func wrongType(table: String, column: String, found: DatabaseValue) -> StoreError {
        let kind = switch found.storage {
        case .null: "NULL"
        case .int64: "an integer"
        case .double: "a real number"
        case .string: "text"
        case .blob: "a blob"
        }
        return StoreError(code: "storeCorrupt", message: """
            the store's \(table) table holds \(kind) in column \(column), which the engine never writes there: \
            the store was changed by something else than the engine
            """)
    }
}
