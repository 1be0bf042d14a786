import WorkflowCore
import WorkflowEngine
import XCTest

/// Step 2's property: random DAGs of pure tools always run to completion, whatever the shape,
/// the caps, or the order in which the host answers.
final class RandomDAGTests: XCTestCase {
    /// A random DAG of text tools: each node concatenates its inputs (0 to 3, from earlier nodes).
    private func randomTemplate(_ rng: inout SplitMix64, nodes n: Int) -> JSON {
        var nodes: [JSON] = []
        var edges: [JSON] = []
        for i in 0..<n {
            let fanIn = i == 0 ? 0 : Int.random(in: 0...min(3, i), using: &rng)
            var inputs = JSONObject()
            let sources = Array((0..<i).shuffled(using: &rng).prefix(fanIn))
            for (k, s) in sources.enumerated() {
                inputs["in\(k)"] = "TextRef"
                edges.append(["from": [.string("n\(s)"), "text"], "to": [.string("n\(i)"), .string("in\(k)")]])
            }
            nodes.append(["id": .string("n\(i)"), "kind": .string("Join\(fanIn)"), "inputs": .object(inputs),
                          "outputs": ["text": "TextRef"]])
        }
        return ["schema": "app.workflow/v2", "name": "random", "nodes": .array(nodes), "edges": .array(edges)]
    }

    func testRandomDAGsOfPureToolsAlwaysRunToCompletion() throws {
        var rng = SplitMix64(seed: 2026)
        for round in 0..<25 {
            let local = Int.random(in: 1...4, using: &rng)
            let h = try Harness(extra: ["concurrency": ["local": .int(Int64(local))]])
            for k in 0...3 {
                var inputs = JSONObject()
                for j in 0..<k { inputs["in\(j)"] = "TextRef" }
                h.register(tool: "Join\(k)", inputs: inputs, outputs: ["text": "TextRef"])
            }
            let size = Int.random(in: 1...30, using: &rng)
            let tpl = h.register(template: randomTemplate(&rng, nodes: size))
            let workflows = (0..<Int.random(in: 1...3, using: &rng)).map { _ in h.create(tpl) }
            for wf in workflows { h.call("workflow.runAllReady", ["workflowId": .string(wf)]) }
            var steps = 0
            while steps < 10_000 {
                var effects = h.take().filter { $0["type"] == "local.run" }
                guard !effects.isEmpty else { break }
                effects.shuffle(using: &rng)  // the host answers in any order
                for e in effects {
                    let inputs = e["inputs"]?.objectValue ?? [:]
                    let text = inputs.sortedByKey.compactMap { $0.value["uri"]?.stringValue.flatMap(TextAsset.text) }.joined()
                    h.call("local.completed", ["runId": e["runId"]!,
                                               "outputs": ["text": TextAsset.json(text + e["nodeId"]!.stringValue!)]])
                    steps += 1
                }
            }
            for wf in workflows {
                let w = h.call("workflow.get", ["workflowId": .string(wf)])
                XCTAssertEqual(w["status"], "done", "round \(round): \(w)")
                XCTAssertEqual(w["stepsDone"], .int(Int64(size)))
            }
            XCTAssertEqual(steps, size * workflows.count, "every node ran exactly once")
        }
    }
}
