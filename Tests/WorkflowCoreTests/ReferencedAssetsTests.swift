import WorkflowCore
import XCTest

/// The assets a workflow refers to: what asset deletion refuses, and what leaves memory with a
/// workflow dropped from it.
final class ReferencedAssetsTests: XCTestCase {
    static let t0 = Timestamp(milliseconds: 1_000)

    static func workflow() -> Workflow {
        var a = NodeInstance(nodeId: "a", state: .succeeded, bindings: ["in": "as_bound"], outputs: ["out": "as_a1"],
                             updatedAt: t0)
        a.inputSelections = ["in": "as_chosen"]
        let b = NodeInstance(nodeId: "b", state: .succeeded, outputs: ["out": "as_b1"], updatedAt: t0)
        var r1 = Run(runId: "r_1", nodeId: "a", number: 1, mode: .local, kind: "K", trigger: .run, status: .succeeded,
                     params: [:], inputs: ["in": "as_chosen"], idempotencyKey: "k1", createdAt: t0)
        r1.outputs = ["out": "as_a0"]  // an earlier output the node no longer shows
        var r2 = Run(runId: "r_2", nodeId: "b", number: 1, mode: .local, kind: "K", trigger: .run, status: .succeeded,
                     params: [:], inputs: ["in": "as_a1"], idempotencyKey: "k2", createdAt: t0)
        r2.outputs = ["out": "as_b1"]
        return Workflow(workflowId: "wf_1", seq: 1, templateId: "t", title: "w", createdAt: t0, updatedAt: t0,
                        archived: false, autoRun: false, pollingPaused: false, status: .active,
                        nodes: [a, b], runs: [r1, r2], awaits: [])
    }

    func testEveryRunsInputsAndOutputsAndEveryNodesBindingsOutputsAndSelectionsAreReferred() {
        let wf = Self.workflow()
        XCTAssertEqual(wf.referencedAssetIds, ["as_bound", "as_chosen", "as_a0", "as_a1", "as_b1"])
        var seen: [String] = []
        XCTAssertTrue(wf.forEachReferencedAssetId { seen.append($0); return true })
        XCTAssertEqual(seen.sorted(), ["as_a0", "as_a1", "as_a1", "as_b1", "as_b1", "as_bound", "as_chosen", "as_chosen"],
                       "each time it is referred to")
        for id in wf.referencedAssetIds { XCTAssertTrue(wf.refers(to: id), id) }
        XCTAssertFalse(wf.refers(to: "as_other"))
    }

    func testTheWalkStopsAtTheFirstFalse() {
        var calls = 0
        XCTAssertFalse(Self.workflow().forEachReferencedAssetId { _ in calls += 1; return false })
        XCTAssertEqual(calls, 1)
    }
}
