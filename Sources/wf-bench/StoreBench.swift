import Foundation
import WorkflowCore
import WorkflowStore

/// The store alone: the commit of a typical node completion (one node and one run changed, a
/// consumer node, the workflow row, an asset, two effects, three counters), and the same
/// without the effects.
enum StoreBench {
    /// With `effects`, the commit also inserts and deletes an effect row, which the journal
    /// does not take: every commit is written to its tables. Without, as the engine commits a
    /// local completion (its `local.run` effect is never stored), every commit goes to the
    /// journal: on file the store's thread folds it beside the caller; in memory (a backlog with
    /// no file) the caller folds it every 1,024 commits.
    static func run(memory: Bool, effects: Bool = true) {
        let path = memory ? ":memory:" : Driver.tempStore("store")
        defer { if !memory { Driver.remove(path) } }
        guard let store = try? SQLiteStore(path: path) else { fatalError("wf-bench: cannot open a store") }
        let now = Timestamp(milliseconds: 1_767_225_600_000)
        var nodes: [NodeInstance] = []
        for i in 0..<20 {
            nodes.append(NodeInstance(nodeId: "p\(i)", state: .ready, params: ["text": "x"], updatedAt: now))
        }
        var wf = Workflow(workflowId: "wf-1", seq: 1, templateId: "tpl-1", title: "bench", createdAt: now, nodes: nodes)
        for i in 0..<20 {
            var r = Run(runId: "run-\(i)", nodeId: "p\(i)", number: 1, mode: .local, kind: "Pure1", trigger: .auto,
                        status: .running, params: ["text": "x"], inputs: ["in0": "as-\(i)"], idempotencyKey: "k\(i)",
                        createdAt: now)
            r.startedAt = now
            wf.runs.append(r)
        }
        func summary(_ w: Workflow) -> WorkflowSummary {
            WorkflowSummary(workflowId: w.workflowId, seq: 1, templateId: "tpl-1", title: "bench", status: .active, archived: false,
                            createdAt: now, updatedAt: w.updatedAt, stepsDone: 1, stepsTotal: 20, awaitCount: 0,
                            hasBlockingAwait: false, searchText: "bench", nextDeadline: nil, queuedRemote: 0, queuedLocal: 0,
                            runningRemote: 0, runningLocal: 1, inboxCount: 0)
        }
        var cs = ChangeSet()
        cs.workflows = [WorkflowWrite(nil, wf, summary(wf))]
        try! store.commit(cs)
        wf.markClean()  // as the engine does once the store holds it
        let n = effects ? 5_000 : 10_000
        var seq: Int64 = 0
        var slowest: UInt64 = 0
        let start = DispatchTime.now().uptimeNanoseconds
        for i in 0..<n {
            let commitStart = DispatchTime.now().uptimeNanoseconds
            let old = wf
            let k = i % 20
            wf.nodes[k].state = i % 2 == 0 ? .succeeded : .ready
            wf.nodes[k].updatedAt = now.adding(milliseconds: Int64(i))
            wf.nodes[(k + 1) % 20].updatedAt = now.adding(milliseconds: Int64(i))
            wf.runs[k].status = i % 2 == 0 ? .succeeded : .running
            wf.runs[k].outputs = ["text": "as-x\(i)"]
            wf.updatedAt = now.adding(milliseconds: Int64(i))
            var c = ChangeSet()
            c.workflows = [WorkflowWrite(old, wf, summary(wf))]
            c.assets = ["as-x\(i)": Asset(assetId: "as-x\(i)", type: "TextRef", uri: "mem://x\(i)", createdAt: now)]
            seq += 1
            if effects {
                c.effectInserts = [Effect(seq: seq, id: "e-\(seq)", type: "local.run", body: ["runId": "run-1", "kind": "Pure1"],
                                          answerKey: "local:run-\(i)")]
                if seq > 1 { c.effectDeletes = [seq - 1] }
            }
            c.meta = ["counter.run": .int(Int64(i)), "counter.as": .int(Int64(i)), "counter.effect": .int(seq)]
            try! store.commit(c)
            wf.markClean()
            slowest = max(slowest, DispatchTime.now().uptimeNanoseconds - commitStart)
        }
        let closeStart = DispatchTime.now().uptimeNanoseconds
        store.close()  // folds what the journal still holds: part of the work
        let end = DispatchTime.now().uptimeNanoseconds
        let seconds = Double(end - start) / 1e9
        let place = memory ? "memory" : "file"
        // Written to the tables, the slowest commit on file is usually the log's checkpoint (every
        // 10,000 pages); through the journal, a fold the folder had not finished.
        let how = effects ? "written to the tables"
            : memory ? "through the journal's backlog (folded by the caller when full)" : "through the journal (folded by its own thread)"
        print(String(format: "store (%@): %.1f µs per completion commit %@ (close included); slowest commit %.1f ms, close %.1f ms",
                     place, seconds / Double(n) * 1e6, how, Double(slowest) / 1e6, Double(end - closeStart) / 1e6))
    }
}
