import Foundation
import GRDB
import WorkflowCore
import WorkflowEngine
import WorkflowStore

/// Drives an engine like a host would, for the benchmarks.
struct Driver {
    let engine: Engine

    @discardableResult
    func call(_ op: String, _ args: JSONObject = [:]) -> JSON {
        switch engine.call(op, args) {
        case .success(let r): return r
        case .failure(let e): fatalError("wf-bench: \(op) failed: \(e)")
        }
    }

    static func open(store: String, extra: JSONObject = [:]) -> Driver {
        var config: JSONObject = ["store": .string(store), "clock": ["mode": "manual", "start": "2026-01-01T00:00:00.000Z"],
                                  "seed": 1, "logLevel": "error"]
        for (k, v) in extra { config[k] = v }
        do {
            return Driver(engine: try Engine(configJSON: .object(config)))
        } catch {
            fatalError("wf-bench: cannot open the engine: \(error)")
        }
    }

    /// Registers the pure tools `Pure0`…`Pure3` (that many text inputs, one text output).
    func registerPureTools() {
        for k in 0...3 {
            var inputs = JSONObject()
            for j in 0..<k { inputs["in\(j)"] = "TextRef" }
            call("tool.register", ["kind": .string("Pure\(k)"), "inputs": .object(inputs), "outputs": ["text": "TextRef"]])
        }
    }

    /// A layered DAG of `n` pure nodes: each node after the first layer reads one or two nodes of
    /// the layer before (fan-in and fan-out), deterministic.
    static func pureDAG(nodes n: Int, width: Int = 4) -> JSON {
        var nodes: [JSON] = []
        var edges: [JSON] = []
        for i in 0..<n {
            let layer = i / width
            var inputs = JSONObject()
            if layer > 0 {
                let prev = (layer - 1) * width
                let sources = i % 2 == 0 ? [prev + i % width] : [prev + i % width, prev + (i + 1) % width]
                for (k, s) in sources.enumerated() where s < n {
                    inputs["in\(k)"] = "TextRef"
                    edges.append(["from": [.string("p\(s)"), "text"], "to": [.string("p\(i)"), .string("in\(k)")]])
                }
            }
            nodes.append(["id": .string("p\(i)"), "kind": .string("Pure\(inputs.count)"), "inputs": .object(inputs),
                          "outputs": ["text": "TextRef"], "title": .string("Step \(i)")])
        }
        return ["schema": "app.workflow/v2", "name": .string("pure \(n)"), "nodes": .array(nodes), "edges": .array(edges)]
    }

    /// `count` workflows of a ``pureDAG(nodes:width:)`` of `nodes` nodes (the pure tools and the
    /// template registered first), each started with "Run all ready"; returns their ids.
    func startPureDAGs(_ count: Int, nodes: Int) -> [JSON] {
        registerPureTools()
        let tpl = call("template.register", ["template": Driver.pureDAG(nodes: nodes)])["templateId"]!
        return (0..<count).map { _ in
            let wf = call("workflow.create", ["templateId": tpl])["workflowId"]!
            call("workflow.runAllReady", ["workflowId": wf])
            return wf
        }
    }

    /// Answers every pending `local.run` with a pure result, one call per completion or, with
    /// `batch`, all of them in one `batch` call; returns how many completed.
    @discardableResult
    func completeLocalRuns(max: Int = 100_000, batch: Bool = false) -> Int {
        let effects = call("effects.take", ["max": .int(Int64(max))])["effects"]?.arrayValue ?? []
        var calls: [JSON] = []
        for e in effects where e["type"] == "local.run" {
            let runId = e["runId"]!.stringValue!
            let args: JSONObject = ["runId": .string(runId),
                                    "outputs": ["text": ["type": "TextRef", "uri": .string("mem://\(runId)"), "bytes": 8]]]
            if batch {
                calls.append(["op": "local.completed", "args": .object(args)])
            } else {
                call("local.completed", args)
            }
        }
        if batch, !calls.isEmpty { call("batch", ["calls": .array(calls)]) }
        return batch ? calls.count : effects.filter { $0["type"] == "local.run" }.count
    }

    /// A plain SQLite connection to `path` with the store's settings (WAL, `synchronous=NORMAL`,
    /// the store's checkpoint interval), for the baselines that run SQLite alone.
    static func rawDatabase(_ path: String) throws -> DatabaseQueue {
        var config = Configuration()
        config.journalMode = .wal
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            try db.execute(sql: "PRAGMA wal_autocheckpoint = \(SQLiteStore.walCheckpointPages)")
        }
        return try DatabaseQueue(path: path, configuration: config)
    }

    static func tempStore(_ name: String) -> String {
        let path = NSTemporaryDirectory() + "wf-bench-\(name)-\(UUID().uuidString).sqlite"
        return path
    }

    static func remove(_ path: String) {
        for file in Engine.storeFiles(path) { try? FileManager.default.removeItem(atPath: file) }
    }
}
