import WorkflowCore
import WorkflowEngine
import XCTest

/// Taints flow down the graph: nothing downstream uses a stale result, and every descendant of a
/// failure names where it started.
final class TaintTests: XCTestCase {
    private let fourChain: JSON = [
        "schema": "app.workflow/v2", "name": "four",
        "nodes": [["id": "A", "kind": "Text", "outputs": ["text": "TextRef"]],
                  ["id": "B", "kind": "Uppercase", "inputs": ["text": "TextRef"], "outputs": ["text": "TextRef"]],
                  ["id": "C", "kind": "Reverse", "inputs": ["text": "TextRef"], "outputs": ["text": "TextRef"]],
                  ["id": "D", "kind": "Append", "inputs": ["text": "TextRef"], "outputs": ["text": "TextRef"]]],
        "edges": [["from": ["A", "text"], "to": ["B", "text"]], ["from": ["B", "text"], "to": ["C", "text"]],
                  ["from": ["C", "text"], "to": ["D", "text"]]],
        "options": ["errorPolicy": "isolate-node"],
    ]

    func testANodeBelowASucceededButStaleNodeWaitsNamingTheOrigin() throws {
        let h = try Harness()
        Templates.registerTextTools(h)
        let wf = h.create(h.register(template: fourChain))
        for node in ["A", "B", "C"] {
            h.call("node.run", ["workflowId": .string(wf), "nodeId": .string(node)])
            h.runLocalTools()
        }
        h.call("node.run", ["workflowId": .string(wf), "nodeId": "A"])
        h.runLocalTools()
        XCTAssertEqual(h.node(wf, "B")["blockedReason"]?["code"], "inputChanged")
        XCTAssertEqual(h.state(wf, "C"), "succeeded", "C keeps its result: it matches its own inputs")
        XCTAssertEqual(h.state(wf, "D"), "blocked", "but nothing may start from it")
        XCTAssertEqual(h.node(wf, "D")["blockedReason"]?["message"], "Waiting for text from 'C' (upstream 'B' changed)")
        XCTAssertEqual(h.fail("node.run", ["workflowId": .string(wf), "nodeId": "D"]).code, "notReady")
    }

    func testEveryDescendantOfAFailureNamesIt() throws {
        let h = try Harness()
        Templates.registerTextTools(h)
        let wf = h.create(h.register(template: fourChain))
        h.call("node.run", ["workflowId": .string(wf), "nodeId": "A"])
        let e = h.effects("local.run")[0]
        h.call("local.completed", ["runId": e["runId"]!, "error": ["code": "E1", "message": "broken"]])
        for node in ["B", "C", "D"] {
            XCTAssertEqual(h.node(wf, node)["blockedReason"], ["code": "upstreamFailed", "message": "Upstream 'A' failed."], node)
        }
    }

    func testAnInterruptedRunLeavesTheWorkflowActiveAndItsConsumersWaitForTheRetry() throws {
        let h = try Harness(file: true)
        Templates.registerTextTools(h)
        let wf = h.create(h.register(template: fourChain))
        h.call("node.run", ["workflowId": .string(wf), "nodeId": "A"])
        try h.crash()
        XCTAssertEqual(h.node(wf, "A")["lastError"]?["code"], "interrupted")
        XCTAssertEqual(h.call("workflow.get", ["workflowId": .string(wf)])["status"], "active", "Retry is waiting, not a failure")
        XCTAssertEqual(h.node(wf, "B")["blockedReason"]?["message"], "Waiting for text from 'A' (interrupted; Retry it)")
    }

    /// `interrupted` is the engine's code for a local run a crash cut short, which waits for its
    /// Retry; a host may report a failure with the same code (a provider's preempted job, a
    /// tool's own code): that is a failure like any other, before and after a reopen.
    func testAFailureAHostCodesInterruptedFailsTheWorkflowAndItsConsumersAsAnyFailureDoes() throws {
        let h = try Harness(file: true)
        Templates.registerTextTools(h)
        let wf = h.create(h.register(template: fourChain))
        h.call("node.run", ["workflowId": .string(wf), "nodeId": "A"])
        let e = h.effects("local.run")[0]
        h.call("local.completed", ["runId": e["runId"]!, "error": ["code": "interrupted", "message": "Preempted."]])
        func check(_ when: String) {
            XCTAssertEqual(h.node(wf, "A")["lastError"], ["code": "interrupted", "message": "Preempted."], when)
            XCTAssertEqual(h.call("workflow.get", ["workflowId": .string(wf)])["status"], "failed", when)
            XCTAssertEqual(h.node(wf, "B")["blockedReason"], ["code": "upstreamFailed", "message": "Upstream 'A' failed."], when)
        }
        check("as reported")
        try h.crash()
        check("after a reopen")
    }

    /// c takes `image` (required, from a) and `mask` (optional, from p of kind `pKind`).
    private func blendWorkflow(_ h: Harness, pKind: String, policy: String = "isolate-node") -> String {
        h.register(tool: "Img", outputs: ["image": "ImageRef"])
        h.register(tool: "Msk", outputs: ["mask": "MaskRef"])
        h.register(tool: "Blend", inputs: ["image": "ImageRef", "mask": ["type": "MaskRef", "optional": true]],
                   outputs: ["image": "ImageRef"])
        let t: JSON = ["schema": "app.workflow/v2", "name": "blend",
                       "nodes": [["id": "a", "kind": "Img", "outputs": ["image": "ImageRef"]],
                                 ["id": "p", "kind": .string(pKind), "outputs": ["mask": "MaskRef"]],
                                 ["id": "c", "kind": "Blend", "inputs": ["image": "ImageRef", "mask": ["type": "MaskRef", "optional": true]],
                                  "outputs": ["image": "ImageRef"]]],
                       "edges": [["from": ["a", "image"], "to": ["c", "image"]], ["from": ["p", "mask"], "to": ["c", "mask"]]],
                       "options": ["errorPolicy": .string(policy)]]
        return h.create(h.register(template: t))
    }

    /// Runs `node` and answers its local run with `outputs`, or fails it (`E1`).
    private func runLocal(_ h: Harness, _ wf: String, _ node: String, outputs: JSONObject? = nil) {
        h.call("node.run", ["workflowId": .string(wf), "nodeId": .string(node)])
        let e = h.effects("local.run").first { $0["nodeId"] == .string(node) }!
        if let outputs {
            h.call("local.completed", ["runId": e["runId"]!, "outputs": .object(outputs)])
        } else {
            h.call("local.completed", ["runId": e["runId"]!, "error": ["code": "E1", "message": "broken"]])
        }
    }

    func testAResultMadeWithAnOptionalInputStandsWhenThatProducerFailsOnARerun() throws {
        let h = try Harness()
        let wf = blendWorkflow(h, pKind: "Msk")
        runLocal(h, wf, "a", outputs: ["image": ["type": "ImageRef", "uri": "file:///a"]])
        runLocal(h, wf, "p", outputs: ["mask": ["type": "MaskRef", "uri": "file:///m"]])
        runLocal(h, wf, "c", outputs: ["image": ["type": "ImageRef", "uri": "file:///c"]])
        runLocal(h, wf, "p")  // p runs again and fails: its mask is unavailable, not changed
        XCTAssertEqual(h.state(wf, "c"), "succeeded", "as with a required input from p")
    }

    func testUnderFailFastAnOptionalInputOfAFailedProducerStopsItsConsumer() throws {
        let h = try Harness()
        let wf = blendWorkflow(h, pKind: "Msk", policy: "fail-fast")
        runLocal(h, wf, "a", outputs: ["image": ["type": "ImageRef", "uri": "file:///a"]])
        runLocal(h, wf, "p")
        XCTAssertEqual(h.node(wf, "c")["blockedReason"]?["code"], "upstreamFailed")
        XCTAssertEqual(h.call("workflow.get", ["workflowId": .string(wf)])["status"], "failed")
    }

    func testAnOptionalInputWhoseProducersToolIsNotInstalledDoesNotHoldItsConsumer() throws {
        let h = try Harness()
        let wf = blendWorkflow(h, pKind: "NotInstalled")
        runLocal(h, wf, "a", outputs: ["image": ["type": "ImageRef", "uri": "file:///a"]])
        XCTAssertEqual(h.node(wf, "p")["blockedReason"]?["code"], "toolNotInstalled")
        XCTAssertEqual(h.state(wf, "c"), "ready", "the mask is optional and cannot come")
        h.call("node.run", ["workflowId": .string(wf), "nodeId": "c"])
        XCTAssertEqual(h.effects("local.run").first?["inputs"]?.objectValue?.keys.sorted(), ["image"])
    }

    /// c takes `image` (required, from a) and `mask` (optional, from q, or from the last of
    /// `passes` Pass nodes below q); q needs `mask` from p, whose tool is not installed, and
    /// `image` from r.
    private func chainBelowAMissingTool(_ h: Harness, passes: Int = 0) -> String {
        h.register(tool: "Img", outputs: ["image": "ImageRef"])
        h.register(tool: "Refine", inputs: ["mask": "MaskRef", "image": "ImageRef"], outputs: ["mask": "MaskRef"])
        h.register(tool: "Pass", inputs: ["mask": "MaskRef"], outputs: ["mask": "MaskRef"])
        h.register(tool: "Blend", inputs: ["image": "ImageRef", "mask": ["type": "MaskRef", "optional": true]],
                   outputs: ["image": "ImageRef"])
        var nodes: [JSON] = [["id": "a", "kind": "Img", "outputs": ["image": "ImageRef"]],
                             ["id": "r", "kind": "Img", "outputs": ["image": "ImageRef"]],
                             ["id": "p", "kind": "NotInstalled", "outputs": ["mask": "MaskRef"]],
                             ["id": "q", "kind": "Refine", "inputs": ["mask": "MaskRef", "image": "ImageRef"],
                              "outputs": ["mask": "MaskRef"]],
                             ["id": "c", "kind": "Blend", "inputs": ["image": "ImageRef", "mask": ["type": "MaskRef", "optional": true]],
                              "outputs": ["image": "ImageRef"]]]
        var edges: [JSON] = [["from": ["a", "image"], "to": ["c", "image"]], ["from": ["p", "mask"], "to": ["q", "mask"]],
                             ["from": ["r", "image"], "to": ["q", "image"]]]
        var last = "q"
        for i in 0..<passes {
            let id = "q\(i + 1)"
            nodes.append(["id": .string(id), "kind": "Pass", "inputs": ["mask": "MaskRef"], "outputs": ["mask": "MaskRef"]])
            edges.append(["from": [.string(last), "mask"], "to": [.string(id), "mask"]])
            last = id
        }
        edges.append(["from": [.string(last), "mask"], "to": ["c", "mask"]])
        let t: JSON = ["schema": "app.workflow/v2", "name": "chain", "nodes": .array(nodes), "edges": .array(edges),
                       "options": ["errorPolicy": "isolate-node"]]
        return h.create(h.register(template: t))
    }

    func testAnOptionalInputDoesNotWaitForAChainBelowAMissingTool() throws {
        let h = try Harness()
        let wf = chainBelowAMissingTool(h)
        runLocal(h, wf, "a", outputs: ["image": ["type": "ImageRef", "uri": "file:///a"]])
        XCTAssertEqual(h.state(wf, "c"), "blocked", "q also waits for r, which can still run: the mask may come")
        runLocal(h, wf, "r", outputs: ["image": ["type": "ImageRef", "uri": "file:///r"]])
        XCTAssertEqual(h.node(wf, "q")["blockedReason"]?["message"], "Waiting for mask from 'p'")
        XCTAssertEqual(h.state(wf, "c"), "ready", "q now waits only for p, whose tool is not installed")
        h.call("node.run", ["workflowId": .string(wf), "nodeId": "c"])
        XCTAssertEqual(h.effects("local.run").first?["inputs"]?.objectValue?.keys.sorted(), ["image"])
    }

    func testAnOptionalInputGoesWithoutWhenAChainTwoLevelsUpCanNoLongerBringIt() throws {
        let h = try Harness()
        let wf = chainBelowAMissingTool(h, passes: 1)  // p (no tool) → q (also needs r) → q1 → c's optional mask
        runLocal(h, wf, "a", outputs: ["image": ["type": "ImageRef", "uri": "file:///a"]])
        XCTAssertEqual(h.state(wf, "c"), "blocked", "r can still run: the mask may come")
        runLocal(h, wf, "r", outputs: ["image": ["type": "ImageRef", "uri": "file:///r"]])
        XCTAssertEqual(h.state(wf, "c"), "ready", "now nothing above q1 can bring it until p's tool is installed")
    }

    func testAnOptionalInputWaitsAgainForAChainWhoseToolIsInstalled() throws {
        let h = try Harness()
        let wf = chainBelowAMissingTool(h)
        runLocal(h, wf, "r", outputs: ["image": ["type": "ImageRef", "uri": "file:///r"]])
        runLocal(h, wf, "a", outputs: ["image": ["type": "ImageRef", "uri": "file:///a"]])
        XCTAssertEqual(h.state(wf, "c"), "ready")
        h.register(tool: "NotInstalled", outputs: ["mask": "MaskRef"])
        XCTAssertEqual(h.state(wf, "p"), "ready")
        XCTAssertEqual(h.state(wf, "c"), "blocked", "the mask can come now, as when p's own tool is installed")
        XCTAssertEqual(h.node(wf, "c")["blockedReason"]?["message"], "Waiting for mask from 'q'")
    }

    func testAnOptionalInputWhoseProducerFailedIsLeftOutNotAnUpstreamFailure() throws {
        let h = try Harness()
        let wf = blendWorkflow(h, pKind: "Msk")
        runLocal(h, wf, "p")
        XCTAssertEqual(h.state(wf, "c"), "blocked")
        XCTAssertEqual(h.node(wf, "c")["blockedReason"]?["code"], "waitingForInput", "waits for its required image only")
        runLocal(h, wf, "a", outputs: ["image": ["type": "ImageRef", "uri": "file:///a"]])
        XCTAssertEqual(h.state(wf, "c"), "ready")
    }

    func testNotReadyListsARequiredPortWhoseUpstreamFailedAmongTheMissing() throws {
        let h = try Harness()
        Templates.registerTextTools(h)
        let wf = h.create(h.register(template: fourChain))
        runLocal(h, wf, "A")  // fails
        let refused = h.fail("node.run", ["workflowId": .string(wf), "nodeId": "B"])
        XCTAssertEqual(refused.code, "notReady")
        XCTAssertEqual(refused.details["missing"], ["text"])
    }
}
