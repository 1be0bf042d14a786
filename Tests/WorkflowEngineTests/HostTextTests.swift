import WorkflowCore
import WorkflowEngine
import XCTest

/// Found by random calls: the store keeps a few texts a host chooses in plain text columns
/// (workflow titles, template names, tool and provider kinds, job ids), and SQLite text through
/// GRDB ends at the first NUL character. A title with U+0000 came back cut after a reopen, the
/// defaults of a provider kind with one were lost, and a job id with one would have been looked
/// up as its prefix. Such texts are now refused, as Jansson refuses U+0000 by default.
final class HostTextTests: XCTestCase {
    func testTextsWithANulCharacterAreRefusedAndChangeNothing() throws {
        let h = try Harness(file: true)
        let wf = h.startOneRemote()
        let runId = h.effects("remote.submit")[0]["runId"]!
        h.call("job.submitted", ["runId": runId, "jobId": "job-1"])
        let tpl = h.call("workflow.get", ["workflowId": .string(wf)])["templateId"]!
        let before = h.call("workflow.get", ["workflowId": .string(wf)])

        for (op, args, argument) in [
            ("workflow.create", ["templateId": tpl, "title": "Summer\u{0}trip"], "title"),
            ("provider.setDefaults", ["kind": "StylizeRemote\u{0}x", "params": ["steps": 5]], "kind"),
            ("job.update", ["jobId": "job-1\u{0}x", "status": "failed"], "jobId"),
            ("job.transportError", ["jobId": "job-1\u{0}x", "httpStatus": 503], "jobId"),
            ("workflow.duplicate", ["workflowId": .string(wf), "title": "copy\u{0}"], "title"),
        ] as [(String, JSONObject, String)] {
            let e = h.fail(op, args)
            XCTAssertEqual(e.code, "invalidArgument", op)
            XCTAssertEqual(e.details["argument"], .string(argument), op)
        }
        let tool = h.fail("tool.register", ["kind": "Blur\u{0}x", "outputs": ["image": "ImageRef"]])
        XCTAssertEqual(tool.code, "invalidTool")
        let template = h.fail("template.register", ["template": [
            "schema": "app.workflow/v2", "name": "Stylize\u{0}", "nodes": [["id": "a", "kind": "StylizeRemote",
                                                                             "outputs": ["image": "ImageRef"]]],
        ]])
        XCTAssertEqual(template.status, .template)
        XCTAssertEqual(template.code, "malformedTemplate")

        XCTAssertEqual(h.call("workflow.get", ["workflowId": .string(wf)]), before, "job-1 was not touched")
        XCTAssertEqual(h.call("workflow.list")["rows"]?.arrayValue?.count, 1, "nothing was created")
        XCTAssertEqual(h.call("tool.list")["tools"]?.arrayValue?.count, 1)
    }

    /// Found by a probe of every op: a string argument with U+0000 was refused only where the op
    /// read it as an id or a title (OPS §1 says none may hold one); `asset.import` kept a `uri`
    /// and a `hash` with one, `tool.register` a `title` and a `description`. Every op's
    /// top-level strings are now checked before it runs; `tool.register` reports it among its
    /// `invalidTool` problems. Texts inside objects and arrays (a log tail's lines, params,
    /// `meta`) may still hold one, and so may a report's free text given as a string (a log tail,
    /// an error message), so that a final report is never refused for what a log contains.
    func testAStringArgumentWithANulIsRefusedByEveryOpAndChangesNothing() throws {
        let h = try Harness(file: true)
        let wf = h.startOneRemote()
        let runId = h.effects("remote.submit")[0]["runId"]!
        h.call("job.submitted", ["runId": runId, "jobId": "job-1"])
        let before = h.call("workflow.get", ["workflowId": .string(wf)])
        let first = h.call("asset.import", ["type": "ImageRef", "uri": "file:///first.png"])["assetId"]?.stringValue ?? ""

        for (op, args, argument) in [
            ("asset.import", ["type": "ImageRef", "uri": "file:///a\u{0}b.png"], "uri"),
            ("asset.import", ["type": "ImageRef", "uri": "file:///a.png", "hash": "h\u{0}x"], "hash"),
            ("batch", ["calls": [["op": "asset.import", "args": ["type": "ImageRef", "uri": "x\u{0}"]]]], "uri"),
        ] as [(String, JSONObject, String)] {
            let e = h.fail(op, args)
            XCTAssertEqual(e.code, "invalidArgument", op)
            XCTAssertEqual(e.details["argument"], .string(argument), op)
        }
        for field in ["title", "description", "x-note"] {
            let e = h.fail("tool.register", ["kind": "Blur", field: .string("a\u{0}b"), "outputs": ["image": "ImageRef"]])
            XCTAssertEqual(e.code, "invalidTool", field)
            XCTAssertEqual(e.details["argument"], .string(field))
        }
        XCTAssertEqual(h.call("workflow.get", ["workflowId": .string(wf)]), before, "job-1 was not touched")
        let next = h.call("asset.import", ["type": "ImageRef", "uri": "file:///next.png"])["assetId"]?.stringValue ?? ""
        XCTAssertEqual(Int(next.drop { !$0.isNumber }), Int(first.drop { !$0.isNumber }).map { $0 + 1 },
                       "no asset was imported in between (\(first), \(next))")
        XCTAssertEqual(h.call("tool.list")["tools"]?.arrayValue?.count, 1, "no tool was registered")

        // Inside an array a text may hold one, and in a report's free text given as a string.
        h.call("job.update", ["jobId": "job-1", "status": "running", "logTail": ["step 1\u{0}"]])
        func card() -> JSON? { h.call("workflow.detail", ["workflowId": .string(wf)])["cards"]?[0] }
        XCTAssertEqual(card()?["logTail"], ["step 1\u{0}"])
        h.call("job.update", ["jobId": "job-1", "status": "running", "logTail": "step\u{0}2\nstep 3"])
        XCTAssertEqual(card()?["logTail"], ["step\u{0}2", "step 3"])
        let failed = h.call("job.update", ["jobId": "job-1", "status": "failed", "error": "out of\u{0}memory"])
        XCTAssertEqual(failed["state"], "failed", "a final report holding U+0000 is applied, not refused")
        XCTAssertEqual(h.node(wf, "stylize1")["lastError"]?["message"], "out of\u{0}memory")
        try h.reopen()
        XCTAssertEqual(h.node(wf, "stylize1")["lastError"]?["message"], "out of\u{0}memory", "kept whole in the store")
    }

    func testTitlesAndKindsOutsideAsciiSurviveAReopen() throws {
        let h = try Harness(file: true)
        h.register(tool: "Flou·Été", outputs: ["image": "ImageRef"])
        let tpl = h.register(template: ["schema": "app.workflow/v2", "name": "Été 😀",
                                        "nodes": [["id": "a", "kind": "Flou·Été", "outputs": ["image": "ImageRef"]]]])
        let wf = h.create(tpl)
        h.call("provider.setDefaults", ["kind": "Flou·Été", "params": ["rayon": 3]])
        try h.reopen()
        XCTAssertEqual(h.call("workflow.get", ["workflowId": .string(wf)])["title"], "Été 😀")
        XCTAssertEqual(h.call("provider.getDefaults", ["kind": "Flou·Été"])["params"], ["rayon": 3])
        XCTAssertEqual(h.state(wf, "a"), "ready")
    }
}
