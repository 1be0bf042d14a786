import WorkflowCore
import WorkflowEngine
import XCTest

/// `batch`: several calls in one transaction, all or nothing.
final class BatchTests: XCTestCase {
    func testABatchIsOneTransactionAllOrNothing() throws {
        let h = try Harness(file: true)
        Templates.registerTextTools(h)
        let tpl = h.register(template: Templates.chain)
        let a = h.create(tpl)
        let b = h.create(tpl)
        h.call("node.run", ["workflowId": .string(a), "nodeId": "A"])
        h.call("node.run", ["workflowId": .string(b), "nodeId": "A"])
        let runs = h.effects("local.run")
        XCTAssertEqual(runs.count, 2)
        let bad = h.fail("batch", ["calls": [["op": "local.completed", "args": TextTools.run(runs[0])],
                                             ["op": "local.completed", "args": ["runId": runs[1]["runId"]!, "outputs": [:]]]]])
        XCTAssertEqual(bad.code, "missingOutput")
        XCTAssertEqual(bad.details["batchIndex"], 1)
        XCTAssertEqual(h.state(a, "A"), "runningLocal", "the first call of the failed batch did not happen")
        let ok = h.call("batch", ["calls": [["op": "local.completed", "args": TextTools.run(runs[0])],
                                           ["op": "local.completed", "args": TextTools.run(runs[1])]]])
        XCTAssertEqual(ok["results"]?.arrayValue?.count, 2)
        try h.crash()
        XCTAssertEqual(h.state(a, "A"), "succeeded")
        XCTAssertEqual(h.state(b, "A"), "succeeded")
        XCTAssertEqual(h.fail("batch", ["calls": [["op": "batch", "args": ["calls": []]]]]).code, "unknownOp")
    }
}
