import WorkflowCore
import XCTest

@testable import WorkflowEngine

/// A commit stores a new workflow with its summary, which settling makes for every workflow a
/// call touched. A unit of work committed without settling (a bug in the engine, never a host's
/// doing) is refused before anything is written: no records without their workflow row in the
/// store, no workflow missing from memory.
final class UnsummarisedCommitTests: XCTestCase {
    func testANewWorkflowCommittedWithoutItsSummaryIsRefusedAndNothingChanges() throws {
        for file in [false, true] {
            let h = try Harness(file: file)
            let tpl = h.register(template: DoneWorkflowsInMemoryTests.chain)
            let existing = h.create(tpl)
            let uow = h.engine.makeUnitOfWork()
            let committed = try XCTUnwrap(try uow.workflow(existing))
            let copy = Workflow(workflowId: "wf_unsummarised", seq: 9_999, templateId: committed.templateId, title: "copy",
                                createdAt: committed.createdAt, nodes: committed.nodes.elements)
            uow.putWorkflow(copy)
            XCTAssertThrowsError(try uow.commit(logger: h.engine.logger)) { error in
                let e = error as? EngineError
                XCTAssertEqual(e?.status, .internal)
                XCTAssertTrue(e?.message.contains("wf_unsummarised") ?? false, e?.message ?? "")
            }
            XCTAssertNil(h.engine.state.entries["wf_unsummarised"], "not in memory")
            XCTAssertEqual(h.fail("workflow.get", ["workflowId": "wf_unsummarised"]).code, "unknownWorkflow")
            XCTAssertEqual(h.call("workflow.list")["rows"]?.arrayValue?.count, 1)
            guard file else { continue }
            try h.reopen()
            XCTAssertEqual(h.fail("workflow.get", ["workflowId": "wf_unsummarised"]).code, "unknownWorkflow", "nor in the store")
            XCTAssertEqual(h.call("workflow.list")["rows"]?.arrayValue?.count, 1)
        }
    }
}
