import WorkflowCore

/// A failed op as every host reports it: the C status, the precise code, a sentence, the facts.
public struct OutcomeError: Sendable, Equatable, Error {
    public var status: Int
    public var code: String
    public var message: String
    public var details: JSON

    public init(status: Int, code: String, message: String, details: JSON = .object([:])) {
        self.status = status
        self.code = code
        self.message = message
        self.details = details
    }

    /// `{"status", "code", "message", "details"}`, the `error` member of an outcome.
    public var json: JSON {
        ["status": .int(Int64(status)), "code": .string(code), "message": .string(message), "details": details]
    }

    /// One line for reports: `WF_ETEMPLATE cycleDetected: template invalid: ...`.
    public var summary: String { "\(StatusName.of(status)) \(code): \(message)" }
}

/// What one op step came back with: `{"ok": true, "result": R}` or `{"ok": false, "error": E}`.
public enum Outcome: Sendable, Equatable {
    case success(JSON)
    case failure(OutcomeError)

    /// The outcome object that `expect` is matched against and `save` paths read from.
    public var json: JSON {
        switch self {
        case let .success(result): return ["ok": true, "result": result]
        case let .failure(error): return ["ok": false, "error": error.json]
        }
    }

    public var isOK: Bool { if case .success = self { return true } else { return false } }
}

/// The C names of the status codes (DESIGN §3), for readable failure lines.
public enum StatusName {
    static let names: [Int: String] = [
        0: "WF_OK", -2: "WF_EINVALID", -3: "WF_ENOTFOUND", -4: "WF_ESTATE", -5: "WF_ETEMPLATE",
        -6: "WF_ECONFLICT", -7: "WF_ESTORE", -8: "WF_EUNSUPPORTED", -31: "WF_ITEROVER", -99: "WF_EINTERNAL",
    ]

    /// `WF_EINVALID` for -2; the bare number for a status the contract does not name.
    public static func of(_ status: Int) -> String { names[status] ?? "status \(status)" }
}
