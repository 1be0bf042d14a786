import WorkflowCore

/// An in-process tool: what a host links to run a `local.run` effect without leaving Swift.
///
/// A tool states its contract once, as its catalogue entry (`spec`: kind, typed input and output
/// ports, defaults). A ``ToolBox`` checks the contract when the tool is added, checks every
/// invocation's inputs against it before ``run(_:)`` and every result against it after, so a tool
/// and a template can never disagree at run time without a descriptive error naming the port.
///
/// Pure tools (the same invocation always gives the same outputs) also give a deterministic
/// ``preview(_:)``: a few hundred bytes a shell can show on a card before or without a full run.
public protocol Tool: Sendable {
    /// The catalogue entry, registered with `tool.register`. In-process tools are `local`.
    var spec: ToolSpec { get }

    /// Runs the tool: one asset per declared output port. Throw ``ToolFailure`` for a failure a
    /// person should read (the node fails with its code and message); any other error fails the
    /// node with `toolFailed`.
    func run(_ invocation: ToolInvocation) throws -> [String: AssetDraft]

    /// A small, cheap preview of what ``run(_:)`` would make, or `nil` when the tool has none.
    /// Must be deterministic for a pure tool: the same invocation gives the same bytes.
    func preview(_ invocation: ToolInvocation) throws -> ToolPreview?
}

extension Tool {
    public func preview(_ invocation: ToolInvocation) throws -> ToolPreview? { nil }
}

/// One call of a tool: the run it answers, the effective parameters, and an asset per bound input.
public struct ToolInvocation: Sendable, Equatable {
    public var runId: String
    public var kind: String
    public var params: JSONObject
    public var inputs: [String: AssetDraft]

    public init(runId: String = "", kind: String, params: JSONObject = [:], inputs: [String: AssetDraft] = [:]) {
        self.runId = runId
        self.kind = kind
        self.params = params
        self.inputs = inputs
    }

    /// The text of input `port` (a `data:` or `file:` URI); a ``ToolFailure`` if it cannot be read.
    public func text(_ port: String) throws -> String {
        guard let asset = inputs[port] else {
            throw ToolFailure(code: "missingInput", message: "The '\(port)' input is not bound.")
        }
        return try TextContent.read(asset.uri)
    }

    /// The string parameter `name`, or `fallback` when it is absent or `null` (a `null` param is
    /// an absent one, as `null` members of an op's arguments are); a ``ToolFailure`` when it is
    /// not a string.
    public func stringParam(_ name: String, default fallback: String = "") throws -> String {
        guard let value = params[name], !value.isNull else { return fallback }
        guard let s = value.stringValue else {
            throw ToolFailure(code: "invalidParam", message: "The '\(name)' parameter must be text, not \(value.typeName).",
                              details: ["param": .string(name)])
        }
        return s
    }
}

/// A failure of a tool, as a person reads it on the node's card: the node's ``NodeError``
/// (`code`, a plain `message`, a `hint` where one helps, `details`), thrown by ``Tool/run(_:)``.
public typealias ToolFailure = NodeError
