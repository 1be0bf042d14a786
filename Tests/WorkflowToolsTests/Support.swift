import Foundation
import WorkflowCore
import WorkflowEngine
import WorkflowTools
import XCTest

/// A `local.run` effect as the engine emits it.
func localRun(_ kind: String, runId: String = "run-1", params: JSONObject = [:], inputs: JSONObject = [:]) -> JSON {
    ["type": "local.run", "runId": .string(runId), "kind": .string(kind), "params": .object(params), "inputs": .object(inputs)]
}

func textInput(_ text: String) -> JSONObject { ["text": ToolBox.json(TextContent.asset(text))] }

/// The text of the `text` output of a `local.completed` answer.
func outputText(_ answer: JSONObject) -> String? {
    answer["outputs"]?["text"]?["uri"]?.stringValue.flatMap { try? TextContent.read($0) }
}

/// An engine with a manual clock, driven like a host that runs its local tools in process.
final class ToolHost {
    let engine: Engine
    let box: ToolBox

    init(_ box: ToolBox) throws {
        engine = try Engine(configJSON: ["clock": ["mode": "manual", "start": "2026-01-01T00:00:00.000Z"], "seed": 7])
        self.box = box
        for spec in box.specs { try call("tool.register", spec.json.objectValue!) }
    }

    deinit { engine.close() }

    @discardableResult
    func call(_ op: String, _ args: JSONObject = [:]) throws -> JSON { try engine.callOrThrow(op, args) }

    /// Creates a workflow of `template`, runs everything ready and answers every `local.run` with
    /// the tool box until nothing is left to run. Returns the workflow id.
    func runToEnd(_ template: JSON) throws -> String {
        let tpl = try call("template.register", ["template": template])["templateId"]!
        let wf = try call("workflow.create", ["templateId": tpl])["workflowId"]!.stringValue!
        try call("workflow.runAllReady", ["workflowId": .string(wf)])
        for _ in 0..<100 {
            let effects = try call("effects.take")["effects"]?.arrayValue ?? []
            let runs = effects.filter { box.handles($0) }
            if runs.isEmpty { break }
            for e in runs { try call("local.completed", box.answer(e)) }
        }
        return wf
    }

    func node(_ wf: String, _ nodeId: String) throws -> JSON {
        try call("node.get", ["workflowId": .string(wf), "nodeId": .string(nodeId)])
    }
}

/// A one-node template of a tool with the given ports.
func oneNode(_ kind: String, inputs: JSONObject = [:], outputs: JSONObject) -> JSON {
    ["schema": "app.workflow/v2", "name": .string(kind),
     "nodes": [["id": "n1", "kind": .string(kind), "inputs": .object(inputs), "outputs": .object(outputs)]], "edges": []]
}

/// Counts the runs of a tool across threads.
final class RunCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func increment() { lock.lock(); value += 1; lock.unlock() }
    var count: Int { lock.lock(); defer { lock.unlock() }; return value }
}
