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

    /// A completion gates again only what can see it (`Executor.reconcile(_:changing:_:)`).
    /// Whatever else happens in between (Re-run with latest on finished nodes, so results go
    /// stale downstream; cancels; failures under both error policies; retries), a full reconcile
    /// of the result changes nothing: debug builds, which `swift test` runs, check this on every
    /// completion and stop at the first miss. The workflows still settle: no run is left open.
    func testCompletionsAmidReRunsCancelsAndFailuresGateWhatAFullReconcileWould() throws {
        var rng = SplitMix64(seed: 77)
        for round in 0..<60 {
            let h = try Harness(extra: ["concurrency": ["local": .int(Int64(Int.random(in: 1...3, using: &rng)))]])
            for k in 0...3 {
                var inputs = JSONObject()
                for j in 0..<k { inputs["in\(j)"] = "TextRef" }
                h.register(tool: "Join\(k)", inputs: inputs, outputs: ["text": "TextRef"])
            }
            // One round in six is larger than 64 nodes, where which nodes moved is an array
            // rather than the bits of one word.
            let size = round % 6 == 5 ? Int.random(in: 65...90, using: &rng) : Int.random(in: 2...24, using: &rng)
            var template = randomTemplate(&rng, nodes: size)
            if Bool.random(using: &rng), case var .object(t) = template {
                t["options"] = ["errorPolicy": "isolate-node"]
                template = .object(t)
            }
            let tpl = h.register(template: template)
            let wf = h.create(tpl)
            h.call("workflow.runAllReady", ["workflowId": .string(wf)])
            var answered = 0
            for _ in 0..<400 {
                let effects = h.take().filter { $0["type"] == "local.run" }
                for e in effects.shuffled(using: &rng) {
                    let roll = Int.random(in: 0..<10, using: &rng)
                    let answer: JSONObject = roll == 0
                        ? ["runId": e["runId"]!, "error": ["code": "toolFailed", "message": "no"]]
                        : ["runId": e["runId"]!, "outputs": ["text": TextAsset.json("\(e["nodeId"]!.stringValue!)#\(answered)")]]
                    _ = h.engine.call("local.completed", answer)
                    answered += 1
                    // Something else happens to a random node; refusals (wrong state) are fine.
                    let node: JSON = .string("n\(Int.random(in: 0..<size, using: &rng))")
                    let args: JSONObject = ["workflowId": .string(wf), "nodeId": node]
                    switch Int.random(in: 0..<5, using: &rng) {
                    case 0: _ = h.engine.call("node.rerunLatest", args)
                    case 1: _ = h.engine.call("node.cancel", args)
                    case 2: _ = h.engine.call("node.retry", args)
                    case 3: _ = h.engine.call("node.run", args)
                    default: break
                    }
                }
                if effects.isEmpty { break }
            }
            let detail = h.call("workflow.detail", ["workflowId": .string(wf)])
            let open = detail["nodes"]?.arrayValue?.filter { ["queued", "running"].contains($0["state"]?.stringValue ?? "") } ?? []
            XCTAssertEqual(open, [], "round \(round): every run was answered")
            XCTAssertGreaterThanOrEqual(answered, 1, "round \(round)")
        }
    }
}
