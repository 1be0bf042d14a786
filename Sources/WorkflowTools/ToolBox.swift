import WorkflowCore

/// The in-process tools a host offers, by kind, with their contracts enforced.
///
/// - Adding a tool checks its catalogue entry exactly as `tool.register` would (every problem,
///   with its JSON path), that it runs locally, and that its kind is not taken.
/// - ``answer(_:)`` turns a `local.run` effect into the arguments of its `local.completed`
///   event. The effect's inputs are checked against the tool's input ports before the tool runs,
///   and the tool's outputs against its output ports after, so a mismatch fails the node with a
///   message naming the port instead of reaching the engine as a malformed event.
public struct ToolBox: Sendable {
    private var tools: [String: any Tool] = [:]
    /// Kinds in the order they were added.
    public private(set) var kinds: [String] = []

    public init() {}

    /// A tool box holding `tools`; throws on the first tool whose contract is invalid.
    public init(_ tools: [any Tool]) throws(EngineError) {
        for tool in tools { try add(tool) }
    }

    /// A tool box of the built-in pure text tools: Text, Uppercase, Append and Reverse.
    public static func builtInTextTools() -> ToolBox {
        var box = ToolBox()
        // Their contracts are fixed and valid (BuiltInToolsTests proves it).
        for tool in BuiltInTools.text { try! box.add(tool) }
        return box
    }

    /// Adds `tool`. Errors (status `WF_EINVALID`): `invalidTool` (its entry is malformed; every
    /// problem in `details.issues`), `notLocal` (an in-process tool must be `local`),
    /// `duplicateTool` (the kind is taken).
    public mutating func add(_ tool: any Tool) throws(EngineError) {
        let spec = tool.spec
        let (decoded, issues) = ToolSpec.decode(spec.json)
        if decoded == nil {
            throw .invalid("invalidTool",
                           "the tool '\(spec.kind)' has an invalid contract: "
                               + issues.map { "\($0.path ?? "$"): \($0.message)" }.joined(separator: "; "),
                           details: ["kind": .string(spec.kind), "issues": .array(issues.map(\.json))])
        }
        guard spec.resourceClass == .local else {
            throw .invalid("notLocal", "the tool '\(spec.kind)' runs in process, so its resourceClass must be local, not \(spec.resourceClass.rawValue)",
                           details: ["kind": .string(spec.kind)])
        }
        guard tools[spec.kind] == nil else {
            throw .invalid("duplicateTool", "a tool of kind '\(spec.kind)' is already in the tool box",
                           details: ["kind": .string(spec.kind)])
        }
        tools[spec.kind] = tool
        kinds.append(spec.kind)
    }

    /// The tool of `kind`, if the box has one.
    public func tool(kind: String) -> (any Tool)? { tools[kind] }

    /// The catalogue entries, in the order the tools were added: the `tool.register` arguments.
    public var specs: [ToolSpec] { kinds.map { tools[$0]!.spec } }

    /// Whether the box runs `effect` (a `local.run` of a kind it holds).
    public func handles(_ effect: JSON) -> Bool {
        effect["type"]?.stringValue == "local.run" && effect["kind"]?.stringValue.flatMap { tools[$0] } != nil
    }

    /// The invocation an effect asks for, its inputs checked against the tool's input ports.
    ///
    /// Errors (`WF_EINVALID` unless said): `notLocalRun`, `unknownTool` (`WF_ENOTFOUND`),
    /// `invalidAsset`, and the contract errors `missingInput`, `unknownPort`,
    /// `portTypeMismatch`, each naming the port in its message and `details.port`.
    public func invocation(for effect: JSON) throws(EngineError) -> (tool: any Tool, invocation: ToolInvocation) {
        guard effect["type"]?.stringValue == "local.run" else {
            throw .invalid("notLocalRun", "only local.run effects run tools, not \(effect["type"]?.stringValue ?? "an untyped effect")")
        }
        let kind = effect["kind"]?.stringValue ?? ""
        guard let tool = tools[kind] else {
            throw .notFound("unknownTool", "no in-process tool of kind '\(kind)'", details: ["kind": .string(kind)])
        }
        let spec = tool.spec
        let given = effect["inputs"]?.objectValue ?? [:]
        var inputs: [String: AssetDraft] = [:]
        for (port, value) in given {
            guard let declared = spec.inputs.first(where: { $0.name == port }) else {
                throw .invalid("unknownPort", "'\(kind)' has no input port '\(port)' (it takes \(Self.describe(spec.inputs)))",
                               details: ["kind": .string(kind), "port": .string(port)])
            }
            let draft = try AssetDraft.decode(value, path: "inputs.\(port)")
            // An asset without a type is taken as the port's (as a host's asset draft is, OPS §3);
            // only a different type is refused.
            if let type = draft.type, type != declared.type {
                throw .invalid("portTypeMismatch", "the '\(port)' input is \(type) but '\(kind)' takes \(declared.type) there",
                               details: ["kind": .string(kind), "port": .string(port), "expected": .string(declared.type),
                                         "got": .string(type)])
            }
            inputs[port] = draft
        }
        for port in spec.inputs where !port.optional && inputs[port.name] == nil {
            throw .invalid("missingInput", "'\(kind)' needs its '\(port.name)' input (\(port.type)) and the run has none",
                           details: ["kind": .string(kind), "port": .string(port.name), "expected": .string(port.type)])
        }
        var params = spec.defaults
        for (k, v) in effect["params"]?.objectValue ?? [:] { params[k] = v }
        return (tool, ToolInvocation(runId: effect["runId"]?.stringValue ?? "", kind: kind, params: params, inputs: inputs))
    }

    /// Runs the tool an effect asks for and checks what it made against its output ports.
    /// Throws the contract errors of ``invocation(for:)`` plus `missingOutput`, `unknownPort` and
    /// `portTypeMismatch` for outputs; a ``ToolFailure`` from the tool is rethrown as is.
    public func run(_ effect: JSON) throws -> [String: AssetDraft] {
        let (tool, invocation) = try invocation(for: effect)
        let outputs = try tool.run(invocation)
        try Self.check(outputs: outputs, of: tool.spec)
        return outputs
    }

    /// The preview for the invocation an effect asks for (inputs checked as for a run).
    public func preview(_ effect: JSON) throws -> ToolPreview? {
        let (tool, invocation) = try invocation(for: effect)
        return try tool.preview(invocation)
    }

    /// The arguments of the `local.completed` event answering `effect`: `{runId, outputs}`, or
    /// `{runId, error}` when the tool failed or broke its contract. Never throws: whatever goes
    /// wrong becomes the node's error, so the run always ends.
    public func answer(_ effect: JSON) -> JSONObject {
        let runId = effect["runId"] ?? .null
        do {
            let outputs = try run(effect)
            var o = JSONObject()
            for port in outputs.keys.sorted() { o[port] = Self.json(outputs[port]!) }
            return ["runId": runId, "outputs": .object(o)]
        } catch let failure as ToolFailure {
            return ["runId": runId, "error": Self.eventJSON(failure)]
        } catch let error as EngineError {
            return ["runId": runId, "error": Self.eventJSON(ToolFailure(code: error.code, message: error.message, details: error.details))]
        } catch {
            let kind = effect["kind"]?.stringValue ?? "?"
            return ["runId": runId, "error": Self.eventJSON(ToolFailure(code: "toolFailed", message: "The '\(kind)' tool failed: \(error)"))]
        }
    }

    /// A failure as the `error` of a `local.completed` event: `{code, message, hint?, details?}`.
    static func eventJSON(_ failure: ToolFailure) -> JSON {
        guard case var .object(o) = failure.json else { return failure.json }
        if !failure.details.isEmpty { o["details"] = .object(failure.details) }
        return .object(o)
    }

    static func check(outputs: [String: AssetDraft], of spec: ToolSpec) throws(EngineError) {
        for port in spec.outputs {
            guard let draft = outputs[port.name] else {
                throw .invalid("missingOutput", "'\(spec.kind)' declares an output '\(port.name)' (\(port.type)) but made none",
                               details: ["kind": .string(spec.kind), "port": .string(port.name), "expected": .string(port.type)])
            }
            // An output without a type takes the port's when the engine records it (OPS §3).
            if let type = draft.type, type != port.type {
                throw .invalid("portTypeMismatch", "'\(spec.kind)' made \(type) for its '\(port.name)' output, declared \(port.type)",
                               details: ["kind": .string(spec.kind), "port": .string(port.name), "expected": .string(port.type),
                                         "got": .string(type)])
            }
        }
        for port in outputs.keys.sorted() where !spec.outputs.contains(where: { $0.name == port }) {
            throw .invalid("unknownPort", "'\(spec.kind)' made an output '\(port)' it does not declare (it makes \(describe(spec.outputs)))",
                           details: ["kind": .string(spec.kind), "port": .string(port)])
        }
    }

    /// An asset draft as events carry it: `{type, uri, bytes?, hash?, meta?}`.
    public static func json(_ draft: AssetDraft) -> JSON {
        var o = JSONObject()
        if let type = draft.type { o["type"] = .string(type) }
        o["uri"] = .string(draft.uri)
        if let bytes = draft.bytes { o["bytes"] = .int(bytes) }
        if let hash = draft.hash { o["hash"] = .string(hash) }
        if !draft.meta.isEmpty { o["meta"] = .object(draft.meta) }
        return .object(o)
    }

    private static func describe(_ ports: [PortSpec]) -> String {
        ports.isEmpty ? "none" : ports.map { "\($0.name): \($0.type)" }.joined(separator: ", ")
    }
}
