import WorkflowCore
import WorkflowEngine
import XCTest

/// Step 2 of the implementation plan: "Run a 3-node sample (Text→Uppercase→Append) and verify
/// outputs", joined to a remote node answered by a scripted host.
final class TextPipelineTests: XCTestCase {
    static let template: JSON = [
        "schema": "app.workflow/v2", "name": "Text pipeline",
        "nodes": [
            ["id": "text1", "kind": "Text", "params": ["text": "hello"], "outputs": ["text": "TextRef"]],
            ["id": "upper1", "kind": "Uppercase", "inputs": ["text": "TextRef"], "outputs": ["text": "TextRef"]],
            ["id": "append1", "kind": "Append", "params": ["suffix": "!"], "inputs": ["text": "TextRef"],
             "outputs": ["text": "TextRef"]],
            ["id": "speak1", "kind": "SpeakRemote", "inputs": ["text": "TextRef"], "outputs": ["audio": "AudioRef"],
             "resources": ["class": "remote"]],
        ],
        "edges": [
            ["from": ["text1", "text"], "to": ["upper1", "text"]],
            ["from": ["upper1", "text"], "to": ["append1", "text"]],
            ["from": ["append1", "text"], "to": ["speak1", "text"]],
        ],
    ]

    static func registerTools(_ h: Harness) {
        h.register(tool: "Text", outputs: ["text": "TextRef"])
        h.register(tool: "Uppercase", inputs: ["text": "TextRef"], outputs: ["text": "TextRef"])
        h.register(tool: "Append", inputs: ["text": "TextRef"], outputs: ["text": "TextRef"])
        h.register(tool: "Reverse", inputs: ["text": "TextRef"], outputs: ["text": "TextRef"])
        h.register(tool: "SpeakRemote", inputs: ["text": "TextRef"], outputs: ["audio": "AudioRef"], remote: true)
    }

    func testTextUppercaseAppendThenRemoteRunsToCompletion() throws {
        let h = try Harness()
        Self.registerTools(h)
        let tpl = h.register(template: Self.template)
        let wf = h.create(tpl)
        XCTAssertEqual(h.state(wf, "text1"), "ready")
        XCTAssertEqual(h.state(wf, "upper1"), "blocked")
        XCTAssertEqual(h.node(wf, "upper1")["blockedReason"]?["message"], "Waiting for text from 'text1'")
        h.call("workflow.runAllReady", ["workflowId": .string(wf)])
        var finalText: String?
        var remoteSubmitted = false
        for _ in 0..<20 {
            for effect in h.take() {
                switch effect["type"]?.stringValue {
                case "local.run":
                    h.call("local.completed", TextTools.run(effect).objectValue!)
                case "remote.submit":
                    XCTAssertFalse(remoteSubmitted, "submitted once")
                    remoteSubmitted = true
                    finalText = effect["inputs"]?["text"]?["uri"]?.stringValue.flatMap(TextAsset.text)
                    h.call("job.submitted", ["runId": effect["runId"]!, "jobId": "job-1"])
                case "remote.poll":
                    h.call("job.update", ["jobId": "job-1", "status": "succeeded",
                                          "outputs": ["audio": ["type": "AudioRef", "uri": "file:///out/a.m4a"]]])
                default: break
                }
            }
            if h.state(wf, "speak1") == "succeeded" { break }
            h.advance(11)
        }
        XCTAssertEqual(finalText, "HELLO!")
        XCTAssertEqual(h.state(wf, "speak1"), "succeeded")
        let w = h.call("workflow.get", ["workflowId": .string(wf)])
        XCTAssertEqual(w["status"], "done")
        XCTAssertEqual(w["stepsDone"], 4)
    }
}
