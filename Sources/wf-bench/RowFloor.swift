import Foundation
import GRDB
import WorkflowStore

/// A second baseline for `throughput`: SQLite alone writing the rows a batched completion
/// writes, with the store's own schema (its migrations) and its own statements
/// (`PreparedStatements`), bound as the store binds them (`FastRow`) — no engine, no records, no
/// images. Per completion: the consumer's run inserted (queued); the node made ready, then
/// running, then succeeded, and a waiting consumer's node updated; the run started, then
/// finished; the output asset; two workflow rows (the completing workflow's and the one the
/// freed slot goes to). Rows have the sizes the engine writes for the 20-node pure DAG; the
/// completions are spread over the workflows round-robin, `perTransaction` to a transaction,
/// as the batched drive spreads them. What the engine adds on top is its own cost.
enum RowFloor {
    /// Completions per second, and the microseconds each took.
    static func rate(workflows: Int = 1000, nodes: Int = 20, perTransaction: Int = 64) -> (rate: Double, micros: Double) {
        let path = Driver.tempStore("floor")
        defer { Driver.remove(path) }
        do {
            try SQLiteStore(path: path).close()  // the store's schema, through its own migrations
            let q = try Driver.rawDatabase(path)
            defer { try? q.close() }
            return try q.writeWithoutTransaction { db in
                try drive(Statements(db), workflows: workflows, nodes: nodes, perTransaction: perTransaction)
            }
        } catch {
            fatalError("wf-bench: the rows-alone baseline failed: \(error)")
        }
    }

    /// The store's statements, prepared once, and rows of them bound as the store binds them
    /// (`FastRow`, texts from a `BindArena`).
    struct Statements {
        typealias Key = PreparedStatements.Key
        let db: Database
        let arena = BindArena()
        let begin, commit, workflow, node, run, asset, workflowUpdate, nodeUpdate, runUpdate: Statement

        init(_ db: Database) throws {
            self.db = db
            func prepare(_ key: Key) throws -> Statement { try db.makeStatement(sql: key.sql) }
            (begin, commit, workflow, node, run, asset) =
                (try prepare(.begin), try prepare(.commit), try prepare(.workflow), try prepare(.node), try prepare(.run),
                 try prepare(.asset))
            (workflowUpdate, nodeUpdate, runUpdate) = (try prepare(.workflowUpdate), try prepare(.nodeUpdate),
                                                       try prepare(.runUpdate))
        }

        func row(_ statement: Statement) -> FastRow { FastRow(statement, arena) }
    }

    /// Text of `length` bytes standing in for a record's JSON (`{"x":"…"}`).
    static func record(_ length: Int) -> String { "{\"x\":\"" + String(repeating: "y", count: length - 8) + "\"}" }

    static func drive(_ s: Statements, workflows: Int, nodes: Int, perTransaction: Int) throws -> (rate: Double, micros: Double) {
        let nodeData = record(115), runData = record(285), assetData = record(150), workflowData = record(38)
        func workflowId(_ w: Int) -> String { "wf-\(w + 1)" }
        var row = s.row(s.begin)
        try row.run(s.db)
        for w in 0..<workflows {
            row = s.row(s.workflow)
            row.text(workflowId(w)); row.int(w + 1); row.text("tpl-1"); row.text("pure \(nodes)"); row.text("active")
            row.int(0); row.int(0); row.int(0)
            for _ in 0..<3 { row.int(0) }  // stepsDone, stepsTotal, awaitCount
            row.int(0); row.text("pure \(nodes)"); row.null()
            for _ in 0..<5 { row.int(0) }  // queue counts, inboxCount
            row.text(workflowData)
            try row.run(s.db)
            for n in 0..<nodes {
                row = s.row(s.node)
                row.text(workflowId(w)); row.text("p\(n)"); row.int(n); row.text("blocked"); row.text(nodeData)
                try row.run(s.db)
            }
        }
        try s.row(s.commit).run(s.db)

        func setNode(_ w: Int, _ n: Int, _ state: String) throws {
            var r = s.row(s.nodeUpdate)
            r.text(state); r.text(nodeData); r.text(workflowId(w)); r.text("p\(n % nodes)")
            try r.run(s.db)
        }
        func setRun(_ id: String, _ status: String) throws {
            var r = s.row(s.runUpdate)
            r.text(status); r.null(); r.text(runData); r.text(id)
            try r.run(s.db)
        }
        func setWorkflow(_ w: Int, stepsDone: Int) throws {
            var r = s.row(s.workflowUpdate)
            r.text("pure \(nodes)"); r.text("active"); r.int(0); r.int(0); r.int(stepsDone); r.int(nodes); r.int(0); r.int(0)
            r.text("pure \(nodes)"); r.null(); r.int(0); r.int(1); r.int(0); r.int(1); r.int(0); r.text(workflowData)
            r.text(workflowId(w))
            try r.run(s.db)
        }

        let start = DispatchTime.now().uptimeNanoseconds
        var completions = 0
        for n in 0..<nodes {
            for first in stride(from: 0, to: workflows, by: perTransaction) {
                try s.row(s.begin).run(s.db)
                for w in first..<min(first + perTransaction, workflows) {
                    let k = n * workflows + w + 1
                    let runId = "run-\(k)", other = (w + workflows / 2) % workflows
                    // The run queued when its producer finished, then started.
                    var r = s.row(s.run)
                    r.text(runId); r.text(workflowId(w)); r.text("p\(n)"); r.int(n); r.text("queued"); r.null(); r.text(runData)
                    try r.run(s.db)
                    try setNode(w, n, "ready")
                    try setRun(runId, "running")
                    try setNode(w, n, "runningLocal")
                    // It finished: the run, the node, its output, a consumer still waiting, two workflow rows.
                    try setRun(runId, "succeeded")
                    try setNode(w, n, "succeeded")
                    r = s.row(s.asset)
                    r.text("as-\(k)"); r.text("TextRef"); r.int(0); r.int(0); r.null(); r.text(assetData)
                    try r.run(s.db)
                    try setNode(w, n + 1, "blocked")
                    try setWorkflow(w, stepsDone: n + 1)
                    try setWorkflow(other, stepsDone: n)
                    completions += 1
                }
                try s.row(s.commit).run(s.db)
            }
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        return (Double(completions) / seconds, seconds / Double(completions) * 1e6)
    }
}
