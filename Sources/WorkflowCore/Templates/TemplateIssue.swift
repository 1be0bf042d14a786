/// One problem found in a template: an error (the template is refused) or a warning.
///
/// Shape in results: `{code, message, nodeId?, port?, path?, cycle?}` plus, for a type mismatch,
/// `from` and `to` naming both ends.
public struct TemplateIssue: Sendable, Equatable, CustomStringConvertible {
    public enum Severity: String, Sendable { case error, warning }

    public var severity: Severity
    public var code: String
    public var message: String
    public var nodeId: String?
    public var port: String?
    public var path: String?
    public var cycle: [String]?
    /// Further facts (`from`, `to`, `producers`).
    public var extra: JSONObject

    public init(_ severity: Severity = .error, code: String, message: String, nodeId: String? = nil, port: String? = nil,
                path: String? = nil, cycle: [String]? = nil, extra: JSONObject = [:]) {
        self.severity = severity
        self.code = code
        self.message = message
        self.nodeId = nodeId
        self.port = port
        self.path = path
        self.cycle = cycle
        self.extra = extra
    }

    public var description: String { "\(code): \(message)" }

    public var json: JSON {
        var o: JSONObject = ["code": .string(code), "message": .string(message)]
        if let nodeId { o["nodeId"] = .string(nodeId) }
        if let port { o["port"] = .string(port) }
        if let path { o["path"] = .string(path) }
        if let cycle { o["cycle"] = JSON(cycle) }
        for (k, v) in extra { o[k] = v }
        return .object(o)
    }
}

/// The error codes of template validation (DESIGN §5).
public enum TemplateErrorCode {
    public static let cycleDetected = "cycleDetected"
    public static let portTypeMismatch = "portTypeMismatch"
    public static let unknownNode = "unknownNode"
    public static let unknownPort = "unknownPort"
    public static let duplicateNodeId = "duplicateNodeId"
    public static let multiProducerOnRequiredPort = "multiProducerOnRequiredPort"
    public static let multiProducerOnOptionalPort = "multiProducerOnOptionalPort"
    public static let invalidDuration = "invalidDuration"
    public static let schemaUnsupported = "schemaUnsupported"
    public static let malformedTemplate = "malformedTemplate"
    public static let toolContractMismatch = "toolContractMismatch"
    // Warnings
    public static let unboundRequiredInput = "unboundRequiredInput"
    public static let toolNotInstalled = "toolNotInstalled"
}
