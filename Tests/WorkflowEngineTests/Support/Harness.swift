import Foundation
import WorkflowCore
import WorkflowEngine
import WorkflowTools
import XCTest

/// An engine under test with a manual clock, and shorthands for driving it like a host.
final class Harness {
    var engine: Engine
    let config: JSONObject
    let storePath: String?
    /// Engines abandoned by `crash()`: kept alive, never closed, like a killed process's.
    private var abandoned: [Engine] = []

    init(file: Bool = false, seed: Int = 7, extra: JSONObject = [:]) throws {
        var config: JSONObject = ["clock": ["mode": "manual", "start": "2026-01-01T00:00:00.000Z"], "seed": .int(Int64(seed))]
        if file {
            let path = NSTemporaryDirectory() + "wf-test-\(UUID().uuidString).sqlite"
            config["store"] = .string(path)
            storePath = path
        } else {
            storePath = nil
        }
        for (k, v) in extra { config[k] = v }
        self.config = config
        engine = try Engine(configJSON: .object(config))
    }

    deinit {
        engine.close()
        if let storePath {
            for file in Engine.storeFiles(storePath) { try? FileManager.default.removeItem(atPath: file) }
        }
    }

    /// Calls an op that must succeed.
    @discardableResult
    func call(_ op: String, _ args: JSONObject = [:], file: StaticString = #filePath, line: UInt = #line) -> JSON {
        switch engine.call(op, args) {
        case .success(let r): return r
        case .failure(let e):
            XCTFail("\(op) failed: \(e)", file: file, line: line)
            return .null
        }
    }

    /// Calls an op that must fail; returns the error.
    @discardableResult
    func fail(_ op: String, _ args: JSONObject = [:], file: StaticString = #filePath, line: UInt = #line) -> EngineError {
        switch engine.call(op, args) {
        case .success(let r):
            XCTFail("\(op) should have failed but returned \(r)", file: file, line: line)
            return EngineError(.ok, "none", "")
        case .failure(let e): return e
        }
    }

    func take() -> [JSON] { call("effects.take")["effects"]?.arrayValue ?? [] }

    func advance(_ seconds: Double) { call("clock.advance", ["seconds": .double(seconds)]) }

    func now() -> String { call("clock.now")["now"]?.stringValue ?? "" }

    func node(_ wf: String, _ nodeId: String) -> JSON {
        call("node.get", ["workflowId": .string(wf), "nodeId": .string(nodeId)])
    }

    func state(_ wf: String, _ nodeId: String) -> String { node(wf, nodeId)["state"]?.stringValue ?? "?" }

    func register(tool kind: String, inputs: JSONObject = [:], outputs: JSONObject, remote: Bool = false,
                  defaults: JSONObject = [:], summaryParams: [String] = []) {
        call("tool.register", ["kind": .string(kind), "inputs": .object(inputs), "outputs": .object(outputs),
                               "resourceClass": remote ? "remote" : "local", "defaults": .object(defaults),
                               "summaryParams": JSON(summaryParams)])
    }

    func register(template: JSON) -> String { call("template.register", ["template": template])["templateId"]?.stringValue ?? "" }

    func create(_ templateId: String, _ extra: JSONObject = [:]) -> String {
        var args: JSONObject = ["templateId": .string(templateId)]
        for (k, v) in extra { args[k] = v }
        return call("workflow.create", args)["workflowId"]?.stringValue ?? ""
    }

    /// The usual remote start: the `StylizeRemote` tool, a workflow of the one-node template
    /// (``Templates/oneRemote(kind:options:)``), and "Run all ready". Returns the workflow id.
    @discardableResult
    func startOneRemote() -> String {
        register(tool: "StylizeRemote", outputs: ["image": "ImageRef"], remote: true)
        let wf = create(register(template: Templates.oneRemote()))
        call("workflow.runAllReady", ["workflowId": .string(wf)])
        return wf
    }

    /// Reopens on the same store as a killed process would find it.
    func crash() throws {
        abandoned.append(engine)
        engine = try Engine(configJSON: .object(config))
    }

    /// Reopens on the same store as a killed process would find it, relaunched later: the
    /// manual clock starts at `start` (it resumes at the later of that and where the store left
    /// off), with nothing fired yet.
    func relaunch(at start: String) throws {
        abandoned.append(engine)
        var later = config
        later["clock"] = ["mode": "manual", "start": .string(start)]
        engine = try Engine(configJSON: .object(later))
    }

    /// Closes and reopens on the same store.
    func reopen() throws {
        engine.close()
        engine = try Engine(configJSON: .object(config))
    }
}

/// Text assets for the pure text tools: `data:` URIs, made and read as the library's built-in
/// text tools make and read them.
enum TextAsset {
    static func json(_ text: String) -> JSON { ToolBox.json(TextContent.asset(text)) }

    static func uri(_ text: String) -> String { TextContent.asset(text).uri }

    static func text(_ uri: String) -> String? { try? TextContent.read(uri) }
}

/// The pure text tools a scripted host runs for `local.run` effects: WorkflowTools' built-ins.
enum TextTools {
    static let box = ToolBox.builtInTextTools()

    static func run(_ effect: JSON) -> JSON { .object(box.answer(effect)) }
}
