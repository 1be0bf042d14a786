import WorkflowCore
import XCTest

/// A workflow remembers whether any node could start a taint as it was last marked clean, and
/// then reads only the nodes written since: what it answers must always be what reading every
/// node would.
final class TaintOriginCacheTests: XCTestCase {
    static let t0 = Timestamp(milliseconds: 1_000)

    /// Every node reason gating can leave, the taint origins among them.
    static let reasons: [BlockedReason?] = [
        nil,
        BlockedReason(code: BlockedReason.waitingForInput, message: "Waiting for in0 from 'a'",
                      details: ["missing": ["in0"]]),
        BlockedReason(code: BlockedReason.waitingForInput, message: "Waiting for in0 from 'a' (upstream 'x' changed)",
                      details: ["missing": ["in0"], "staleUpstream": "x"]),  // an origin
        BlockedReason(code: BlockedReason.inputChanged, message: "Input from 'a' has changed."),  // an origin
        BlockedReason(code: BlockedReason.upstreamFailed, message: "Upstream 'a' failed.",
                      details: ["upstream": "a", "what": "failed"]),  // an origin
        BlockedReason(code: BlockedReason.toolNotInstalled, message: "Tool not installed."),  // an origin
        BlockedReason(code: BlockedReason.offline, message: "Offline"),
    ]

    static func workflow(nodes: Int) -> Workflow {
        Workflow(workflowId: "wf_1", seq: 1, templateId: "t", title: "w", createdAt: t0,
                 nodes: (0..<nodes).map { NodeInstance(nodeId: "n\($0)", updatedAt: t0) })
    }

    /// The answer read from every node, as the cache must give it.
    static func fullScan(_ wf: Workflow) -> Bool {
        wf.nodes.contains { node in withUnsafePointer(to: node) { NodeInstance.mayOriginateTaint($0) } }
    }

    func testEachReasonIsATaintOriginExactlyWhenGatingStartsATaintThere() {
        let origins = Self.reasons.map { reason -> Bool in
            let node = NodeInstance(nodeId: "n", state: .blocked, blockedReason: reason, updatedAt: Self.t0)
            return withUnsafePointer(to: node) { NodeInstance.mayOriginateTaint($0) }
        }
        XCTAssertEqual(origins, [false, false, true, true, true, true, false])
        let ready = NodeInstance(nodeId: "n", state: .ready, blockedReason: Self.reasons[3], updatedAt: Self.t0)
        XCTAssertFalse(withUnsafePointer(to: ready) { NodeInstance.mayOriginateTaint($0) }, "only a blocked node is an origin")
    }

    func testTheAnswerFromTheNodesWrittenSinceCleanIsAlwaysTheFullOne() {
        var rng = SplitMix64(seed: 20_261_202)
        for round in 0..<200 {
            var committed = Self.workflow(nodes: [1, 3, 20, 70][round % 4])
            committed.markClean()
            XCTAssertEqual(committed.mayHaveTaintOrigin, Self.fullScan(committed))
            for step in 0..<40 {
                // A call's copy: writes a few nodes, and sometimes commits (marks itself clean).
                var call = committed
                for _ in 0..<Int.random(in: 1...3, using: &rng) {
                    let n = Int.random(in: 0..<call.nodes.count, using: &rng)
                    let reason = Self.reasons.randomElement(using: &rng)!
                    call.nodes[n].state = reason == nil ? [.ready, .succeeded, .failed].randomElement(using: &rng)! : .blocked
                    call.nodes[n].blockedReason = reason
                    XCTAssertEqual(call.mayHaveTaintOrigin, Self.fullScan(call), "round \(round), step \(step)")
                }
                XCTAssertEqual(committed.mayHaveTaintOrigin, Self.fullScan(committed), "the committed copy keeps its own answer")
                if Bool.random(using: &rng) {
                    call.markClean()
                    committed = call
                }
                XCTAssertEqual(committed.mayHaveTaintOrigin, Self.fullScan(committed), "round \(round), step \(step)")
            }
        }
    }

    func testNodesReplacedWholeAreReadWhole() {
        var wf = Self.workflow(nodes: 4)
        wf.markClean()
        XCTAssertFalse(wf.mayHaveTaintOrigin)
        var nodes = wf.nodes.elements
        nodes[2].state = .blocked
        nodes[2].blockedReason = Self.reasons[3]
        wf.nodes = ChangeTrackedArray(nodes)
        XCTAssertTrue(wf.mayHaveTaintOrigin, "an array replaced whole counts as written everywhere")
        wf.markClean()
        XCTAssertTrue(wf.mayHaveTaintOrigin)
    }
}
