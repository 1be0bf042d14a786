import WorkflowCore
import WorkflowEngine
import XCTest

/// Seed 000 §11 Testing Checklist, "Parallel workflows: two or more workflows running do not
/// interfere; progress isolated" (and 002's "instances run independently"): what one workflow's
/// job reports (progress, a log tail, a transport error, a failure) shows on that workflow alone.
final class ParallelWorkflowsTests: XCTestCase {
    func testTwoRunningWorkflowsDoNotInterfereAndTheirProgressStaysApart() throws {
        let h = try Harness(file: true)
        h.register(tool: "StylizeRemote", outputs: ["image": "ImageRef"], remote: true)
        let tpl = h.register(template: Templates.oneRemote())
        let a = h.create(tpl, ["title": "A"])
        let b = h.create(tpl, ["title": "B"])
        h.call("workflow.runAllReady", ["workflowId": .string(a)])
        h.call("workflow.runAllReady", ["workflowId": .string(b)])
        let submits = h.take().filter { $0["type"] == "remote.submit" }
        XCTAssertEqual(submits.map { $0["workflowId"] }, [.string(a), .string(b)])
        h.call("job.submitted", ["runId": submits[0]["runId"]!, "jobId": "job-a"])
        h.call("job.submitted", ["runId": submits[1]["runId"]!, "jobId": "job-b"])
        h.call("job.update", ["jobId": "job-b", "status": "running", "progress": 0.25, "logTail": ["b: warming up"]])

        let detailB = h.call("workflow.detail", ["workflowId": .string(b)])
        let rowB = try XCTUnwrap(row(h, b))
        let nodeB = h.node(b, "stylize1")

        // Everything A's job reports, one after the other.
        h.call("job.update", ["jobId": "job-a", "status": "running", "progress": 0.4, "logTail": ["a: step 4/10"]])
        let cardA = try XCTUnwrap(h.call("workflow.detail", ["workflowId": .string(a)])["cards"]?.arrayValue?.first)
        XCTAssertEqual(cardA["progress"], 0.4)
        XCTAssertEqual(cardA["statusText"], "Running 40%")
        XCTAssertEqual(cardA["logTail"], ["a: step 4/10"])
        XCTAssertEqual(h.call("workflow.detail", ["workflowId": .string(b)]), detailB, "A's progress shows on A alone")
        h.call("job.transportError", ["jobId": "job-a"])
        XCTAssertEqual(h.call("workflow.detail", ["workflowId": .string(a)])["cards"]?[0]?["statusText"], "Reconnecting…")
        XCTAssertEqual(h.call("workflow.detail", ["workflowId": .string(b)]), detailB, "A reconnecting leaves B as it was")
        h.call("job.update", ["jobId": "job-a", "status": "failed",
                              "error": ["code": "providerError", "message": "Out of GPU memory."]])
        XCTAssertEqual(h.state(a, "stylize1"), "failed")
        XCTAssertEqual(row(h, a)?["status"], "failed")

        XCTAssertEqual(h.call("workflow.detail", ["workflowId": .string(b)]), detailB, "A's failure leaves B as it was")
        XCTAssertEqual(row(h, b), rowB)
        XCTAssertEqual(h.node(b, "stylize1"), nodeB)
        XCTAssertEqual(h.call("badges.get")["actionCenter"], 0)

        // B's job is still polled on its own schedule (A's is over), and B finishes by itself.
        h.advance(11)
        let polls = h.take().filter { $0["type"] == "remote.poll" }
        XCTAssertEqual(polls.map { $0["jobId"] }, ["job-b"])
        try h.crash()
        XCTAssertEqual(h.call("workflow.detail", ["workflowId": .string(b)])["cards"], detailB["cards"], "and after a crash")
        h.call("job.update", ["jobId": "job-b", "status": "succeeded",
                              "outputs": ["image": ["type": "ImageRef", "uri": "file:///b.png"]]])
        XCTAssertEqual(h.state(b, "stylize1"), "succeeded")
        XCTAssertEqual(h.state(a, "stylize1"), "failed", "B's success leaves A failed")
        XCTAssertEqual(row(h, a)?["status"], "failed")
        XCTAssertEqual(row(h, b)?["status"], "done")
    }

    private func row(_ h: Harness, _ wf: String) -> JSON? {
        h.call("workflow.list")["rows"]?.arrayValue?.first { $0["workflowId"] == .string(wf) }
    }
}
