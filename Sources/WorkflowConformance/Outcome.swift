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

    /// One line for reports: `cycleDetected: template invalid: ...` (code and message).
    public var summary: String { "\(code): \(message)" }

    /// What `wf_call` answers, byte for byte, for `args` that are neither an object nor null
    /// (WorkflowCAPI's `run`): the Swift host gives this outcome, since `Engine.call` takes only
    /// objects. `typeName` is `array`, `string`, `integer`, `number` or `boolean`.
    public static func argsNotAnObject(_ args: JSON) -> OutcomeError {
        OutcomeError(status: -2, code: "invalidArgument", message: "args must be a JSON object, not \(args.typeName)",
                     details: ["argument": "args"])
    }
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
