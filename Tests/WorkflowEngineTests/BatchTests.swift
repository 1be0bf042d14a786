import WorkflowCore
import WorkflowEngine
import XCTest

/// `batch`: several calls in one transaction, all or nothing.
final class BatchTests: XCTestCase {
    /// Text → T, an `enter_text` request expiring after an hour (`onTimeout: cancel`), answered
    /// by nobody. Returns the workflow and the await.
    private func openRequest(_ h: Harness) -> (wf: String, awaitId: JSON) {
        Templates.registerTextTools(h)
        let t: JSON = ["schema": "app.workflow/v2", "name": "ask",
                       "nodes": [["id": "L", "kind": "Text", "params": ["text": "x"], "outputs": ["text": "TextRef"]],
                                 ["id": "T", "kind": "UserText", "inputs": ["text": "TextRef"], "outputs": ["text": "TextRef"],
                                  "await": ["type": "enter_text", "expiresIn": "PT1H", "resumePolicy": ["onTimeout": "cancel"]]]],
                       "edges": [["from": ["L", "text"], "to": ["T", "text"]]]]
        let wf = h.create(h.register(template: t))
        h.call("node.run", ["workflowId": .string(wf), "nodeId": "L"])
        h.runLocalTools()
        return (wf, h.node(wf, "T")["awaitId"]!)
    }

    func testInABatchTheClockSeesDeadlinesSetByEarlierCalls() throws {
        let h = try Harness()
        let (_, awaitId) = openRequest(h)
        let results = h.call("batch", ["calls": [["op": "await.claim", "args": ["awaitId": awaitId, "claimant": "ipad"]],
                                                 ["op": "engine.nextDeadline"],
                                                 ["op": "clock.advance", "args": ["seconds": 400]]]])["results"]
        XCTAssertEqual(results?[1]?["at"], "2026-01-01T00:05:00.000Z", "the lease the claim just took")
        XCTAssertEqual(results?[2]?["fired"], 1, "and the advance passing it ends it, as two calls would")
        XCTAssertNil(h.call("await.get", ["awaitId": awaitId])["claim"])
        XCTAssertEqual(h.call("engine.nextDeadline")["at"], "2026-01-01T01:00:00.000Z", "the expiry; nothing in the past")
    }

    func testAWorkflowsDeadlineSurvivesABatchThatMovesItAndBackWhileTimeAdvances() throws {
        let h = try Harness()
        let (wf, awaitId) = openRequest(h)
        let remote = h.startOneRemote()  // a live job whose polls fire during the advance
        let submit = h.effects("remote.submit")[0]
        h.call("job.submitted", ["runId": submit["runId"]!, "jobId": "j1"])
        h.call("batch", ["calls": [["op": "await.claim", "args": ["awaitId": awaitId, "claimant": "ipad"]],
                                   ["op": "clock.advance", "args": ["seconds": 11]],
                                   ["op": "await.release", "args": ["awaitId": awaitId]]]])
        h.call("job.update", ["jobId": "j1", "status": "succeeded", "outputs": ["image": ["type": "ImageRef", "uri": "file:///r"]]])
        XCTAssertEqual(h.state(remote, "stylize1"), "succeeded")
        XCTAssertEqual(h.call("engine.nextDeadline")["at"], "2026-01-01T01:00:00.000Z", "the request's expiry is still scheduled")
        h.advance(2 * 3600)
        XCTAssertEqual(h.call("await.get", ["awaitId": awaitId])["resolution"], "expired")
        XCTAssertEqual(h.state(wf, "T"), "failed")
    }

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

    func testTheListTheBadgesAndTheActionCenterSeeEarlierCallsOfTheSameBatch() throws {
        let h = try Harness()
        let t: JSON = ["schema": "app.workflow/v2", "name": "ask",
                       "nodes": [["id": "note", "kind": "UserText", "outputs": ["text": "TextRef"],
                                  "await": ["type": "enter_text"]]]]
        let tpl = h.register(template: t)
        let r = h.call("batch", ["calls": [["op": "workflow.create", "args": ["templateId": .string(tpl), "title": "Fresh"]],
                                           ["op": "badges.get"], ["op": "await.list"], ["op": "workflow.list"]]])
        let results = r["results"]!.arrayValue!
        let wf = results[0]["workflowId"]!
        XCTAssertEqual(results[1]["actionCenter"], 1)
        XCTAssertEqual(results[1]["workflows"]?[wf.stringValue!], 1)
        XCTAssertEqual(results[2]["pending"]?.arrayValue?.count, 1)
        XCTAssertEqual(results[3]["rows"]?.arrayValue?.map { $0["workflowId"] }, [wf])
        XCTAssertEqual(results[3]["rows"]?[0]?["awaitCount"], 1)
        // A snooze earlier in a batch: the list and the badges agree.
        let id = h.call("await.list")["pending"]![0]!["awaitId"]!
        let s = h.call("batch", ["calls": [["op": "await.snooze", "args": ["awaitId": id]], ["op": "badges.get"],
                                           ["op": "workflow.list"]]])["results"]!.arrayValue!
        XCTAssertEqual(s[1]["actionCenter"], 0)
        XCTAssertEqual(s[2]["rows"]?[0]?["awaitCount"], 0)
        // A workflow deleted earlier in a batch is gone from the list.
        let d = h.call("batch", ["calls": [["op": "workflow.delete", "args": ["workflowId": wf]], ["op": "workflow.list"],
                                           ["op": "badges.get"]]])["results"]!.arrayValue!
        XCTAssertEqual(d[1]["rows"], [])
        XCTAssertEqual(d[2]["actionCenter"], 0)
    }

    func testAJobAcceptedEarlierInTheSameBatchIsFoundByItsId() throws {
        let h = try Harness(file: true)
        h.register(tool: "StylizeRemote", outputs: ["image": "ImageRef"], remote: true)
        let tpl = h.register(template: Templates.oneRemote())
        let a = h.create(tpl)
        let b = h.create(tpl)
        h.call("workflow.runAllReady", ["workflowId": .string(a)])
        h.call("workflow.runAllReady", ["workflowId": .string(b)])
        let submits = h.effects("remote.submit")
        XCTAssertEqual(submits.count, 2)
        let clash = h.fail("batch", ["calls": [
            ["op": "job.submitted", "args": ["runId": submits[0]["runId"]!, "jobId": "j-1"]],
            ["op": "job.submitted", "args": ["runId": submits[1]["runId"]!, "jobId": "j-1"]]]])
        XCTAssertEqual(clash.code, "duplicateJobId", "the first call's job id is already taken, though not yet committed")
        let r = h.call("batch", ["calls": [
            ["op": "job.submitted", "args": ["runId": submits[0]["runId"]!, "jobId": "j-1"]],
            ["op": "job.update", "args": ["jobId": "j-1", "status": "running", "progress": 0.5]]]])
        XCTAssertEqual(r["results"]?[1]?["applied"], true)
        try h.crash()
        XCTAssertEqual(h.state(a, "stylize1"), "runningRemote")
    }
}
