import GRDB
import WorkflowCore

/// Writes rows to the store's tables inside a transaction someone else opened: a change set's
/// rows that are not images (deletions, templates, tools, cache entries, metrics), and row images
/// (a commit's, or the journal's when it is folded).
enum TableWriter {
    static func text(_ json: JSON) -> String { JSONWriter.string(json) }

    /// Writes a change set to its tables: what is not a row image, then the images.
    static func write(_ c: ChangeSet, _ images: [RowImage], _ statements: PreparedStatements,
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
    static func write(_ image: RowImage, _ statements: PreparedStatements, _ db: Database) throws {
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

    /// Writes the image that starts at `at` in the journal entry `raw`, as ``write(_:_:_:)``
    /// writes a decoded one, but binding its texts where they are in the entry: no record is
    /// decoded or copied (a fold writes thousands). `existed` and `columnsKept` are what the
    /// merge found of the table (``PendingRows``), not the image's own. The entry was read
    /// whole when it was merged; a meta, asset, workflow, node, run or await image only.
    static func write(imageAt at: Int, in raw: UnsafeRawBufferPointer, existed: Bool, columnsKept: Bool,
                      _ statements: PreparedStatements, _ db: Database) throws {
        var r = RawReader(raw, at: at)
        switch try r.byte() {
        case JournalCoding.Tag.meta.rawValue:
            var row = try statements.row(.meta, db)
            row.textInPlace(try r.bytes())
            row.textInPlace(try r.bytes())
            try row.run(db)
        case JournalCoding.Tag.asset.rawValue:
            var row = try statements.row(.asset, db)
            row.textInPlace(try r.bytes())
            row.textInPlace(try r.bytes())
            row.int(try r.int())
            row.bool(try r.bool())
            row.int(try r.optionalInt())
            row.textInPlace(try r.bytes())
            try row.run(db)
        case JournalCoding.Tag.workflow.rawValue:
            let workflowId = try r.bytes(), seq = try r.int(), templateId = try r.bytes(), title = try r.bytes()
            let status = try r.bytes(), archived = try r.bool(), createdAt = try r.int(), updatedAt = try r.int()
            let summary = r.position
            for _ in 0..<3 { _ = try r.int() }
            _ = try r.bool()
            _ = try r.bytes()
            _ = try r.optionalInt()
            for _ in 0..<5 { _ = try r.int() }
            let data = try r.bytes()
            // The summary columns (stepsDone … inboxCount), in the order the statements list them.
            func summaryColumns(_ row: inout FastRow) throws {
                var s = RawReader(raw, at: summary)
                for _ in 0..<3 { row.int(try s.int()) }
                row.bool(try s.bool())
                row.textInPlace(try s.bytes())
                row.int(try s.optionalInt())
                for _ in 0..<5 { row.int(try s.int()) }
            }
            if existed {
                var row = try statements.row(.workflowUpdate, db)
                row.textInPlace(title)
                row.textInPlace(status)
                row.bool(archived)
                row.int(updatedAt)
                try summaryColumns(&row)
                row.textInPlace(data)
                row.textInPlace(workflowId)
                if try row.runCountingChanges(db) > 0 { return }
            }
            var row = try statements.row(.workflow, db)
            row.textInPlace(workflowId)
            row.int(seq)
            row.textInPlace(templateId)
            row.textInPlace(title)
            row.textInPlace(status)
            row.bool(archived)
            row.int(createdAt)
            row.int(updatedAt)
            try summaryColumns(&row)
            row.textInPlace(data)
            try row.run(db)
        case JournalCoding.Tag.node.rawValue:
            let workflowId = try r.bytes(), nodeId = try r.bytes(), position = try r.int(), state = try r.bytes()
            let data = try r.bytes()
            if existed {
                var row = try statements.row(.nodeUpdate, db)
                row.textInPlace(state)
                row.textInPlace(data)
                row.textInPlace(workflowId)
                row.textInPlace(nodeId)
                if try row.runCountingChanges(db) > 0 { return }
            }
            var row = try statements.row(.node, db)
            row.textInPlace(workflowId)
            row.textInPlace(nodeId)
            row.int(position)
            row.textInPlace(state)
            row.textInPlace(data)
            try row.run(db)
        case JournalCoding.Tag.run.rawValue:
            let runId = try r.bytes(), workflowId = try r.bytes(), nodeId = try r.bytes(), seq = try r.int()
            let status = try r.bytes(), jobId = try r.optionalBytes(), data = try r.bytes()
            if existed && columnsKept {
                var row = try statements.row(.runDataUpdate, db)
                row.textInPlace(data)
                row.textInPlace(runId)
                row.textInPlace(status)
                row.textInPlace(jobId)
                if try row.runCountingChanges(db) > 0 { return }
            }
            if existed {
                var row = try statements.row(.runUpdate, db)
                row.textInPlace(status)
                row.textInPlace(jobId)
                row.textInPlace(data)
                row.textInPlace(runId)
                if try row.runCountingChanges(db) > 0 { return }
            }
            var row = try statements.row(.run, db)
            row.textInPlace(runId)
            row.textInPlace(workflowId)
            row.textInPlace(nodeId)
            row.int(seq)
            row.textInPlace(status)
            row.textInPlace(jobId)
            row.textInPlace(data)
            try row.run(db)
        case JournalCoding.Tag.await.rawValue:
            var row = try statements.row(.await, db)
            row.textInPlace(try r.bytes())
            row.textInPlace(try r.bytes())
            row.textInPlace(try r.bytes())
            row.textInPlace(try r.bytes())
            row.int(try r.int())
            row.textInPlace(try r.bytes())
            row.textInPlace(try r.bytes())
            try row.run(db)
        case let t:
            throw ByteReader.corrupt("row tag \(t) where a row image was merged")
        }
    }
}

extension TableWriter {
    /// Inserts the images (of one kind, `tag`: assets, workflows, nodes or runs the table did not
    /// hold) that start at `at` in their journal entries, ``PreparedStatements/Key/foldRows`` of
    /// them, with one statement (``PreparedStatements/Key/assets`` …): their columns are the
    /// images' fields, in order, their texts copied into the statements' arena (the entries being
    /// many). Should the table hold one of them after all, a constraint fails the statement
    /// (having written the rows before it) and they are written one by one, as upserts.
    static func write(newRows images: [(body: [UInt8], at: Int)], tag: UInt8, _ statements: PreparedStatements,
                      _ db: Database) throws {
        do {
            try insert(images, tag: tag, statements, db)
        } catch let e as DatabaseError where e.resultCode == .SQLITE_CONSTRAINT {
            for (body, at) in images {
                try body.withUnsafeBytes { raw in
                    try write(imageAt: at, in: raw, existed: false, columnsKept: false, statements, db)
                }
            }
        }
    }

    private static func insert(_ images: [(body: [UInt8], at: Int)], tag: UInt8, _ statements: PreparedStatements,
                               _ db: Database) throws {
        typealias Tag = JournalCoding.Tag
        let key: PreparedStatements.Key = switch tag {
        case Tag.asset.rawValue: .assets
        case Tag.workflow.rawValue: .workflows
        case Tag.node.rawValue: .nodes
        case Tag.run.rawValue: .runs
        default: throw ByteReader.corrupt("row tag \(tag) where a row image was merged")
        }
        precondition(images.count == PreparedStatements.Key.foldRows)
        var row = try statements.row(key, db)
        for (body, at) in images {
            try body.withUnsafeBytes { raw in
                var r = RawReader(raw, at: at + 1)
                switch tag {
                case Tag.asset.rawValue:
                    row.utf8(try r.bytes())
                    row.utf8(try r.bytes())
                    row.int(try r.int())
                    row.bool(try r.bool())
                    row.int(try r.optionalInt())
                    row.utf8(try r.bytes())
                case Tag.workflow.rawValue:
                    row.utf8(try r.bytes())
                    row.int(try r.int())
                    for _ in 0..<3 { row.utf8(try r.bytes()) }
                    row.bool(try r.bool())
                    for _ in 0..<5 { row.int(try r.int()) }
                    row.bool(try r.bool())
                    row.utf8(try r.bytes())
                    row.int(try r.optionalInt())
                    for _ in 0..<5 { row.int(try r.int()) }
                    row.utf8(try r.bytes())
                case Tag.node.rawValue:
                    row.utf8(try r.bytes())
                    row.utf8(try r.bytes())
                    row.int(try r.int())
                    row.utf8(try r.bytes())
                    row.utf8(try r.bytes())
                default:
                    for _ in 0..<3 { row.utf8(try r.bytes()) }
                    row.int(try r.int())
                    row.utf8(try r.bytes())
                    if let job = try r.optionalBytes() { row.utf8(job) } else { row.null() }
                    row.utf8(try r.bytes())
                }
            }
        }
        try row.run(db)
    }
}

/// Reads what ``ByteWriter`` wrote, in place: the fields of a journal entry as the bytes they
/// are in it (for binding them where they are), every read bounds-checked.
struct RawReader: JournalFieldReader {
    private let raw: UnsafeRawBufferPointer
    private var at: Int

    init(_ raw: UnsafeRawBufferPointer, at position: Int) {
        self.raw = raw
        at = position
    }

    var position: Int { at }

    mutating func byte() throws -> UInt8 {
        guard at < raw.count else { throw ByteReader.corrupt("an entry ends early") }
        defer { at += 1 }
        return raw[at]
    }

    private mutating func take(_ n: UInt64) throws -> UnsafeRawBufferPointer {
        guard n <= UInt64(raw.count - at) else { throw ByteReader.corrupt("a field runs past the end of its entry") }
        defer { at += Int(n) }
        return UnsafeRawBufferPointer(rebasing: raw[at..<at + Int(n)])
    }

    /// A string's or a blob's bytes.
    mutating func bytes() throws -> UnsafeRawBufferPointer { try take(try varint()) }

    /// An optional string's bytes (nil: absent).
    mutating func optionalBytes() throws -> UnsafeRawBufferPointer? {
        let n = try varint()
        guard n > 0 else { return nil }
        return try take(n - 1)
    }
}
