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
}
