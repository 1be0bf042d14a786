import Foundation
import WorkflowCore
import WorkflowEngine

/// The Swift host: drives ``Engine`` in process, the way an iOS or macOS shell would.
public struct SwiftHost: ConformanceHost {
    public init() {}

    public func open(config: JSON) -> Result<Engine, OutcomeError> {
        do {
            return .success(try Engine(configJSON: config))
        } catch {
            return .failure(OutcomeError(error))
        }
    }

    public func call(_ engine: Engine, op: String, args: JSON) -> Outcome {
        let object: JSONObject
        switch args {
        case let .object(o): object = o
        case .null: object = [:]
        default:
            // `Engine.call` takes only objects: answer as the C interface answers anything else.
            return .failure(.argsNotAnObject(args))
        }
        switch engine.call(op, object) {
        case let .success(result): return .success(result)
        case let .failure(error): return .failure(OutcomeError(error))
        }
    }

    public func free(_ engine: Engine) { engine.close() }

    public func abandon(_ engine: Engine) { AbandonedEngines.shared.keep(engine) }
}

extension OutcomeError {
    /// The outcome form of an engine error.
    public init(_ error: EngineError) {
        self.init(status: Int(error.status.rawValue), code: error.code, message: error.message,
                  details: .object(error.details))
    }
}

/// Engines abandoned by `{"reopen": "crash"}`. Holding a strong reference until the process ends
/// means their `deinit` (which closes the store) never runs, as after a real crash.
final class AbandonedEngines: @unchecked Sendable {
    static let shared = AbandonedEngines()
    private let lock = NSLock()
    private var engines: [AnyObject] = []

    func keep(_ engine: AnyObject) {
        lock.lock()
        defer { lock.unlock() }
        engines.append(engine)
    }
}
