import Foundation
import WorkflowCore
import WorkflowEngine

/// What one call costs as a workflow grows (a diagnostic, added 2026-11-25, no goal in an
/// issue): a local completion in a workflow of many independent nodes, and a run-and-complete
/// cycle of a node with a long run history, each against the same in a small workflow measured
/// in the same run. A call that changes a workflow still does work in proportion to its
/// records (docs/BENCHMARKS.md, "scale"); these ratios show how much.
enum ScaleBench {
    static func run() {
        print("scale: one call's cost as a workflow grows, in-memory store (medians of five engines)")
        let small = completion(nodes: 20)
        print(String(format: "  local completion, 20 independent nodes (baseline): %@ per call (100 workflows)", Measure.us(small)))
        for n in [500, 2_000] {
            let t = completion(nodes: n)
            print(String(format: "  local completion, %5d independent nodes:          %@ per call = %.1f× the baseline", n, Measure.us(t), t / small))
        }
        let short = rerun(history: 100)
        print(String(format: "  run and complete a node with 100 runs behind it (baseline): %@ per cycle", Measure.us(short)))
        let long = rerun(history: 5_000)
        print(String(format: "  run and complete a node with 5000 runs behind it:          %@ per cycle = %.1f× the baseline", Measure.us(long), long / short))
    }

    static func register(_ d: Driver, nodes: Int) -> JSON {
        d.call("tool.register", ["kind": "Src", "outputs": ["text": "TextRef"]])
        let list = (0..<nodes).map { i -> JSON in ["id": .string("n\(i)"), "kind": "Src", "outputs": ["text": "TextRef"]] }
        return d.call("template.register", ["template": ["schema": "app.workflow/v2", "name": "wide", "nodes": .array(list)]])["templateId"]!
    }

    /// The median of five measurements, each on a fresh engine.
    static func median(_ measure: () -> Double) -> Double {
        let samples = (0..<5).map { _ in measure() }.sorted()
        return samples[2]
    }

    /// Seconds per `local.completed` call, every node of a workflow completed one call each,
    /// workflow after workflow until about 2,000 calls were timed (median of five engines).
    static func completion(nodes: Int) -> Double { median { completionOnce(nodes: nodes) } }

    static func completionOnce(nodes: Int) -> Double {
        let d = Driver.open(store: ":memory:", extra: ["concurrency": ["local": 4]])
        defer { d.engine.close() }
        let tpl = register(d, nodes: nodes)
        var seconds = 0.0, calls = 0
        for _ in 0..<max(1, 2_000 / nodes) {
            let wf = d.call("workflow.create", ["templateId": tpl])["workflowId"]!
            d.call("workflow.runAllReady", ["workflowId": wf])
            let start = DispatchTime.now().uptimeNanoseconds
            var completed = 0
            while case let n = d.completeLocalRuns(), n > 0 { completed += n }
            seconds += Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            guard completed == nodes else { fatalError("wf-bench: \(completed) completions of \(nodes) nodes") }
            calls += completed
        }
        return seconds / Double(calls)
    }

    /// Seconds per cycle (`node.run`, `effects.take`, `local.completed`) of one node that has
    /// already run `history` times (median of five engines).
    static func rerun(history: Int) -> Double { median { rerunOnce(history: history) } }

    static func rerunOnce(history: Int, cycles: Int = 200) -> Double {
        let d = Driver.open(store: ":memory:")
        defer { d.engine.close() }
        let wf = d.call("workflow.create", ["templateId": register(d, nodes: 1)])["workflowId"]!
        func cycle() {
            d.call("node.run", ["workflowId": wf, "nodeId": "n0"])
            guard d.completeLocalRuns() == 1 else { fatalError("wf-bench: the node did not run") }
        }
        for _ in 0..<history { cycle() }
        let start = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<cycles { cycle() }
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9 / Double(cycles)
    }
}
