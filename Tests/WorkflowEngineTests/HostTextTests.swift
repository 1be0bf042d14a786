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
