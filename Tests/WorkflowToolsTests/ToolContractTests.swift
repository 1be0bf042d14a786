import WorkflowCore
import WorkflowEngine
import WorkflowTools
import XCTest

/// A third-party tool made to break its contract in a chosen way.
private struct ScriptedTool: Tool {
    var spec: ToolSpec
    var counter = RunCounter()
    var make: @Sendable (ToolInvocation) throws -> [String: AssetDraft]

    func run(_ invocation: ToolInvocation) throws -> [String: AssetDraft] {
        counter.increment()
        return try make(invocation)
    }
}

private let textPort = [PortSpec(name: "text", type: "TextRef")]

private func textTool(_ kind: String, make: @escaping @Sendable (ToolInvocation) throws -> [String: AssetDraft]) -> ScriptedTool {
    ScriptedTool(spec: ToolSpec(kind: kind, inputs: textPort, outputs: textPort), make: make)
}

private struct Unexpected: Error {}

/// 003 step 8, "ToolContractTests: wrong ports rejected with descriptive errors" — and "IO
/// validation prevents runtime mismatch".
final class ToolContractTests: XCTestCase {
    // MARK: Adding a tool

    func testAToolWithAMalformedContractIsRefusedWithEveryProblemAndItsPath() {
        let spec = ToolSpec(kind: "Bad", inputs: [PortSpec(name: "1image", type: "ImageRef")],
                            outputs: [PortSpec(name: "out", type: "not a type")])
        var box = ToolBox()
        XCTAssertThrowsError(try box.add(textTool("x") { _ in [:] }.with(spec: spec))) { error in
            let e = error as! EngineError
            XCTAssertEqual(e.status, .invalid)
            XCTAssertEqual(e.code, "invalidTool")
            XCTAssertEqual(e.details["issues"]?.arrayValue?.count, 2, "every problem, not just the first")
            XCTAssertTrue(e.message.contains("$.inputs.1image"), e.message)
            XCTAssertTrue(e.message.contains("$.outputs.out"), e.message)
        }
        XCTAssertTrue(box.kinds.isEmpty, "a refused tool is not added")
    }

    func testAnInProcessToolMustRunLocally() {
        var spec = ToolSpec(kind: "Remote", outputs: textPort)
        spec.resourceClass = .remote
        var box = ToolBox()
        XCTAssertThrowsError(try box.add(textTool("x") { _ in [:] }.with(spec: spec))) { error in
            XCTAssertEqual((error as! EngineError).code, "notLocal")
        }
    }

    func testASecondToolOfTheSameKindIsRefused() throws {
        var box = ToolBox()
        try box.add(BuiltInTools.Uppercase())
        XCTAssertThrowsError(try box.add(BuiltInTools.Uppercase())) { error in
            XCTAssertEqual((error as! EngineError).code, "duplicateTool")
            XCTAssertEqual((error as! EngineError).details["kind"], "Uppercase")
        }
        XCTAssertEqual(box.kinds, ["Uppercase"])
    }

    // MARK: Inputs, checked before the tool runs

    func testAnInputOfTheWrongTypeIsRejectedBeforeTheToolRuns() {
        let tool = textTool("Echo") { inv in ["text": TextContent.asset(try inv.text("text"))] }
        let box = try! ToolBox([tool])
        let effect = localRun("Echo", inputs: ["text": ["type": "ImageRef", "uri": "file:///photo.png"]])
        XCTAssertThrowsError(try box.run(effect)) { error in
            let e = error as! EngineError
            XCTAssertEqual(e.code, "portTypeMismatch")
            XCTAssertEqual(e.message, "the 'text' input is ImageRef but 'Echo' takes TextRef there")
            XCTAssertEqual(e.details["expected"], "TextRef")
            XCTAssertEqual(e.details["got"], "ImageRef")
        }
        XCTAssertEqual(tool.counter.count, 0, "the tool never ran")
    }

    func testAMissingRequiredInputIsRejectedNamingThePort() {
        let tool = textTool("Echo") { inv in ["text": TextContent.asset(try inv.text("text"))] }
        let answer = try! ToolBox([tool]).answer(localRun("Echo"))
        XCTAssertEqual(answer["error"]?["code"], "missingInput")
        XCTAssertEqual(answer["error"]?["message"], "'Echo' needs its 'text' input (TextRef) and the run has none")
        XCTAssertEqual(tool.counter.count, 0)
    }

    func testAnInputOnAPortTheToolDoesNotHaveIsRejected() {
        let tool = textTool("Echo") { inv in ["text": TextContent.asset(try inv.text("text"))] }
        var inputs = textInput("a")
        inputs["mask"] = ["type": "MaskRef", "uri": "file:///m.png"]
        let answer = try! ToolBox([tool]).answer(localRun("Echo", inputs: inputs))
        XCTAssertEqual(answer["error"]?["code"], "unknownPort")
        XCTAssertEqual(answer["error"]?["message"], "'Echo' has no input port 'mask' (it takes text: TextRef)")
    }

    func testAnEffectForAToolTheBoxDoesNotHoldIsUnknown() {
        let box = ToolBox.builtInTextTools()
        XCTAssertFalse(box.handles(localRun("Stylize")))
        XCTAssertThrowsError(try box.run(localRun("Stylize"))) { error in
            XCTAssertEqual((error as! EngineError).status, .notFound)
            XCTAssertEqual((error as! EngineError).code, "unknownTool")
        }
    }

    // MARK: Outputs, checked after the tool runs; through the engine the node fails with the reason

    func testAToolThatMakesNoDeclaredOutputFailsTheNodeNamingThePort() throws {
        let host = try ToolHost(try ToolBox([BuiltInTools.TextSource(), textTool("Forgetful") { _ in [:] }]))
        let wf = try host.runToEnd(twoNodes("Forgetful"))
        let node = try host.node(wf, "n2")
        XCTAssertEqual(node["state"], "failed")
        XCTAssertEqual(node["lastError"]?["code"], "missingOutput")
        XCTAssertEqual(node["lastError"]?["message"], "'Forgetful' declares an output 'text' (TextRef) but made none")
    }

    func testAToolThatMakesTheWrongTypeOrAnUndeclaredOutputFailsTheNode() throws {
        let wrongType = textTool("Typo") { _ in ["text": AssetDraft(type: "ImageRef", uri: "file:///x.png")] }
        let extra = textTool("Chatty") { inv in
            ["text": TextContent.asset(try inv.text("text")), "log": TextContent.asset("debug")]
        }
        let host = try ToolHost(try ToolBox([BuiltInTools.TextSource(), wrongType, extra]))
        let typo = try host.node(try host.runToEnd(twoNodes("Typo")), "n2")
        XCTAssertEqual(typo["lastError"]?["code"], "portTypeMismatch")
        XCTAssertEqual(typo["lastError"]?["message"], "'Typo' made ImageRef for its 'text' output, declared TextRef")
        let chatty = try host.node(try host.runToEnd(twoNodes("Chatty")), "n2")
        XCTAssertEqual(chatty["lastError"]?["code"], "unknownPort")
        XCTAssertEqual(chatty["lastError"]?["message"], "'Chatty' made an output 'log' it does not declare (it makes text: TextRef)")
    }

    func testAnAssetWithoutATypeIsTakenAsThePortsInAndOut() throws {
        // As a host's asset draft (OPS §3): no type means the port's; only another type is refused.
        let untyped = textTool("Untyped") { inv in
            var out = TextContent.asset(try inv.text("text").uppercased())
            out.type = nil
            return ["text": out]
        }
        let box = try ToolBox([untyped])
        var input = TextContent.asset("hello")
        input.type = nil
        let answer = box.answer(localRun("Untyped", inputs: ["text": ToolBox.json(input)]))
        XCTAssertNil(answer["error"], "\(answer)")
        XCTAssertEqual(outputText(answer), "HELLO")
        let host = try ToolHost(try ToolBox([BuiltInTools.TextSource(), untyped]))
        let wf = try host.runToEnd(twoNodes("Untyped"))
        XCTAssertEqual(try host.node(wf, "n2")["state"], "succeeded")
        let assetId = try XCTUnwrap(try host.node(wf, "n2")["outputs"]?["text"])
        XCTAssertEqual(try host.call("asset.get", ["assetId": assetId])["type"], "TextRef", "recorded with the port's type")
    }

    func testAToolFailureReachesTheNodeWithItsCodeMessageAndHint() throws {
        let picky = textTool("Picky") { _ in
            throw ToolFailure(code: "textTooShort", message: "The text needs at least 10 characters.", hint: "Write more.")
        }
        let host = try ToolHost(try ToolBox([BuiltInTools.TextSource(), picky]))
        let node = try host.node(try host.runToEnd(twoNodes("Picky")), "n2")
        XCTAssertEqual(node["state"], "failed")
        XCTAssertEqual(node["lastError"]?["code"], "textTooShort")
        XCTAssertEqual(node["lastError"]?["message"], "The text needs at least 10 characters.")
        XCTAssertEqual(node["lastError"]?["hint"], "Write more.")
    }

    func testAnyOtherErrorOfAToolFailsTheNodeAsToolFailed() {
        let answer = try! ToolBox([textTool("Crashy") { _ in throw Unexpected() }]).answer(localRun("Crashy", inputs: textInput("a")))
        XCTAssertEqual(answer["runId"], "run-1")
        XCTAssertEqual(answer["error"]?["code"], "toolFailed")
        XCTAssertNil(answer["outputs"])
    }

    // MARK: Registration with the engine

    func testAThirdPartyToolRegistersAndRunsInAWorkflow() throws {
        struct WordCount: Tool {
            var spec: ToolSpec {
                ToolSpec(kind: "WordCount", title: "Count words", inputs: [PortSpec(name: "text", type: "TextRef")],
                         outputs: [PortSpec(name: "text", type: "TextRef")])
            }
            func run(_ invocation: ToolInvocation) throws -> [String: AssetDraft] {
                let words = try invocation.text("text").split(whereSeparator: \.isWhitespace).count
                return ["text": TextContent.asset("\(words) words")]
            }
        }
        var box = ToolBox.builtInTextTools()
        try box.add(WordCount())
        let host = try ToolHost(box)
        XCTAssertEqual(try host.call("tool.get", ["kind": "WordCount"])["title"], "Count words")
        var template = twoNodes("WordCount")
        template = setParam(template, node: 0, "text", "the quick brown fox")
        let wf = try host.runToEnd(template)
        XCTAssertEqual(try host.call("workflow.get", ["workflowId": .string(wf)])["status"], "done")
        let assetId = try host.node(wf, "n2")["outputs"]?["text"]
        let asset = try host.call("asset.get", ["assetId": assetId ?? .null])
        XCTAssertEqual(asset["uri"].flatMap { $0.stringValue }.flatMap { try? TextContent.read($0) }, "4 words")
    }

    func testATemplateDisagreeingWithARegisteredToolIsRefusedAsAToolContractMismatch() throws {
        let host = try ToolHost(ToolBox.builtInTextTools())
        let wrong = oneNode("Uppercase", inputs: ["text": "ImageRef"], outputs: ["text": "TextRef"])
        let result = host.engine.call("template.register", ["template": wrong])
        guard case let .failure(e) = result else { return XCTFail("a mismatching template was registered") }
        XCTAssertEqual(e.status, .template)
        let codes = e.details["errors"]?.arrayValue?.compactMap { $0["code"]?.stringValue } ?? [e.code]
        XCTAssertTrue(codes.contains("toolContractMismatch"), "\(e)")
    }

    // MARK: The invocation a tool is given

    func testAToolIsGivenItsRunIdAndItsDefaultsUnderTheEffectsParams() throws {
        struct Greeter: Tool {
            var spec: ToolSpec {
                ToolSpec(kind: "Greeter", outputs: [PortSpec(name: "text", type: "TextRef")],
                         defaults: ["greeting": "hi", "name": "you"])
            }
            func run(_ invocation: ToolInvocation) throws -> [String: AssetDraft] {
                let line = "\(invocation.runId): \(try invocation.stringParam("greeting")) \(try invocation.stringParam("name"))"
                return ["text": TextContent.asset(line)]
            }
        }
        let box = try ToolBox([Greeter()])
        XCTAssertEqual(outputText(box.answer(localRun("Greeter", runId: "run-7"))), "run-7: hi you", "the spec's defaults")
        XCTAssertEqual(outputText(box.answer(localRun("Greeter", runId: "run-8", params: ["name": "Ada"]))), "run-8: hi Ada",
                       "the effect's params over the defaults")
        let (_, invocation) = try box.invocation(for: localRun("Greeter", runId: "run-9"))
        XCTAssertEqual(invocation.runId, "run-9")
        XCTAssertEqual(invocation.kind, "Greeter")
        XCTAssertEqual(invocation.params, ["greeting": "hi", "name": "you"])
    }

    func testReadingAnUnboundOptionalInputFailsAsMissingInputNamingThePort() throws {
        struct Strict: Tool {
            var spec: ToolSpec {
                ToolSpec(kind: "Strict", inputs: [PortSpec(name: "note", type: "TextRef", optional: true)],
                         outputs: [PortSpec(name: "text", type: "TextRef")])
            }
            func run(_ invocation: ToolInvocation) throws -> [String: AssetDraft] {
                ["text": TextContent.asset(try invocation.text("note"))]
            }
        }
        let answer = try ToolBox([Strict()]).answer(localRun("Strict"))
        XCTAssertEqual(answer["error"]?["code"], "missingInput")
        XCTAssertEqual(answer["error"]?["message"], "The 'note' input is not bound.")
    }
}

/// Text (n1) → `kind` (n2).
func twoNodes(_ kind: String) -> JSON {
    ["schema": "app.workflow/v2", "name": .string("text → \(kind)"),
     "nodes": [["id": "n1", "kind": "Text", "params": ["text": "hello"], "outputs": ["text": "TextRef"]],
               ["id": "n2", "kind": .string(kind), "inputs": ["text": "TextRef"], "outputs": ["text": "TextRef"]]],
     "edges": [["from": ["n1", "text"], "to": ["n2", "text"]]]]
}

func setParam(_ template: JSON, node: Int, _ name: String, _ value: JSON) -> JSON {
    guard case var .object(t) = template, case var .array(nodes)? = t["nodes"], case var .object(n) = nodes[node] else {
        return template
    }
    var params = n["params"]?.objectValue ?? [:]
    params[name] = value
    n["params"] = .object(params)
    nodes[node] = .object(n)
    t["nodes"] = .array(nodes)
    return .object(t)
}

private extension ScriptedTool {
    func with(spec: ToolSpec) -> ScriptedTool {
        var copy = self
        copy.spec = spec
        return copy
    }
}
