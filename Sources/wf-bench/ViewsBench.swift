import Foundation
import GRDB
import WorkflowCore
import WorkflowEngine

/// Issue 6's views: `workflow.list` over 10,000 workflows with a search string, and
/// `workflow.detail` of a 200-node workflow, each ≤ 5 ms. Both run on a file store reopened
/// before measuring, so nothing is warm that a relaunched app would not have. The baseline is
/// SQLite alone answering the same question from the same file in the same run.
enum ViewsBench {
    static func run() {
        print("views: file store reopened before measuring")
        list(workflows: 10_000)
        detail(nodes: 200)
    }

    static func list(workflows: Int) {
        let path = Driver.tempStore("list")
        defer { Driver.remove(path) }
        RehydrationBench.build(path: path, workflows: workflows)
        let d = Driver.open(store: path, extra: RehydrationBench.config)
        // A narrow search and a broad one (the title words of ``Population/title(_:)``).
        for search in ["harbor photo 1", "photo"] {
            var total: Int64 = 0
            let engine = Measure.median(repeats: 50) {
                total = d.call("workflow.list", ["search": .string(search)])["total"]?.intValue ?? -1
            }
            var expected = 0
            for i in 0..<workflows where Population.title(i).lowercased().contains(search) { expected += 1 }
            guard total == Int64(expected), expected > 0 else {
                fatalError("wf-bench: workflow.list found \(total), expected \(expected)")
            }
            let raw = rawList(path, search: search)
            print(String(format: "  workflow.list over %d workflows, search \"%@\" (%lld rows): SQLite LIKE over the titles "
                         + "(baseline) %@, engine %@ = %.2f× the baseline; goal ≤ 5 ms: %@",
                         workflows, search, total, Measure.ms(raw), Measure.ms(engine), engine / raw,
                         Measure.verdict(engine <= 0.005)))
        }
        d.engine.close()
    }

    static func rawList(_ path: String, search: String) -> Double {
        do {
            let q = try DatabaseQueue(path: path)
            defer { try? q.close() }
            return try Measure.median(repeats: 50) {
                try q.read { db in
                    let rows = try Row.fetchAll(db, sql: """
                        SELECT workflowId, title, status, stepsDone, stepsTotal, updatedAt, awaitCount, hasBlockingAwait,
                               templateId, archived FROM workflows
                        WHERE archived = 0 AND (title LIKE ? OR searchText LIKE ?) ORDER BY updatedAt DESC
                        """, arguments: ["%\(search)%", "%\(search)%"])
                    if rows.isEmpty { fatalError("wf-bench: the SQLite baseline found nothing") }
                }
            }
        } catch {
            fatalError("wf-bench: raw list failed: \(error)")
        }
    }

    static func detail(nodes: Int) {
        let path = Driver.tempStore("detail")
        defer { Driver.remove(path) }
        let setup = Driver.open(store: path)
        Population.registerTools(setup)
        let tpl = setup.call("template.register", ["template": Population.mixedDAG(nodes: nodes)])["templateId"]!
        let id = Population.create(setup, templateId: tpl, count: 1)[0]
        Population.runPartway(setup, [id], rounds: 20)  // most of it done, jobs still in flight
        setup.engine.close()

        // Cold: the first detail after a reopen loads the workflow from the store.
        var cold: [Double] = []
        var cards = 0
        for _ in 0..<7 {
            let d = Driver.open(store: path)
            let start = DispatchTime.now().uptimeNanoseconds
            let r = d.call("workflow.detail", ["workflowId": id])
            cold.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
            cards = r["cards"]?.arrayValue?.count ?? 0
            d.engine.close()
        }
        guard cards == nodes else { fatalError("wf-bench: workflow.detail gave \(cards) cards") }
        let d = Driver.open(store: path)
        let warm = Measure.median(repeats: 50) { d.call("workflow.detail", ["workflowId": id]) }
        d.engine.close()
        let raw = rawDetail(path, workflowId: id.stringValue ?? "")
        let coldMedian = Measure.percentile(cold, 50)
        print(String(format: "  workflow.detail of a %d-node workflow: SQLite reading its rows (baseline) %@, "
                     + "engine first call after reopen %@ (%.1f×), then %@ (%.1f×); goal ≤ 5 ms: %@",
                     nodes, Measure.ms(raw), Measure.ms(coldMedian), coldMedian / raw, Measure.ms(warm), warm / raw,
                     Measure.verdict(max(coldMedian, warm) <= 0.005)))
    }

    static func rawDetail(_ path: String, workflowId: String) -> Double {
        do {
            let q = try DatabaseQueue(path: path)
            defer { try? q.close() }
            return try Measure.median(repeats: 50) {
                try q.read { db in
                    var rows = 0
                    for sql in ["SELECT data FROM workflows WHERE workflowId = ?",
                                "SELECT nodeId, data FROM nodes WHERE workflowId = ? ORDER BY position",
                                "SELECT runId, nodeId, data FROM runs WHERE workflowId = ? ORDER BY seq",
                                "SELECT awaitId, data FROM awaits WHERE workflowId = ? ORDER BY seq"] {
                        let cursor = try Row.fetchCursor(db, sql: sql, arguments: [workflowId])
                        while try cursor.next() != nil { rows += 1 }
                    }
                    if rows == 0 { fatalError("wf-bench: the SQLite baseline found nothing") }
                }
            }
        } catch {
            fatalError("wf-bench: raw detail failed: \(error)")
        }
    }
}
