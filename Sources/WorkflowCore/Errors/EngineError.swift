/// The status codes of the C interface (include/workflow.h, `wf_status`).
public enum Status: Int32, Sendable, CaseIterable {
    case ok = 0
    case invalid = -2
    case notFound = -3
    case state = -4
    case template = -5
    case conflict = -6
    case store = -7
    case unsupported = -8
    case iterOver = -31
    case `internal` = -99

    /// The C name, for example "WF_EINVALID".
    public var name: String {
        switch self {
        case .ok: return "WF_OK"
        case .invalid: return "WF_EINVALID"
        case .notFound: return "WF_ENOTFOUND"
        case .state: return "WF_ESTATE"
        case .template: return "WF_ETEMPLATE"
        case .conflict: return "WF_ECONFLICT"
        case .store: return "WF_ESTORE"
        case .unsupported: return "WF_EUNSUPPORTED"
        case .iterOver: return "WF_ITEROVER"
        case .internal: return "WF_EINTERNAL"
        }
    }
}

/// A structured failure: the status a host branches on, the precise `code`, a sentence for
/// people, and the facts as JSON. Every failure of every op is one of these.
public struct EngineError: Error, Sendable, Equatable, CustomStringConvertible {
    public var status: Status
    public var code: String
    public var message: String
    public var details: JSONObject

    public init(_ status: Status, _ code: String, _ message: String, details: JSONObject = [:]) {
        self.status = status
        self.code = code
        self.message = message
        self.details = details
    }

    public var description: String { "\(status.name) \(code): \(message)" }

    /// The error as the `error` member of an op outcome.
    public var json: JSON {
        ["status": .int(Int64(status.rawValue)), "code": .string(code), "message": .string(message),
         "details": .object(details)]
    }

    // Common constructors, so the same condition always reads the same way.

    public static func invalid(_ code: String, _ message: String, details: JSONObject = [:]) -> EngineError {
        EngineError(.invalid, code, message, details: details)
    }

    public static func notFound(_ code: String, _ message: String, details: JSONObject = [:]) -> EngineError {
        EngineError(.notFound, code, message, details: details)
    }

    public static func state(_ code: String, _ message: String, details: JSONObject = [:]) -> EngineError {
        EngineError(.state, code, message, details: details)
    }

    public static func conflict(_ code: String, _ message: String, details: JSONObject = [:]) -> EngineError {
        EngineError(.conflict, code, message, details: details)
    }

    public static func `internal`(_ message: String) -> EngineError {
        EngineError(.internal, "internal", message)
    }
}
