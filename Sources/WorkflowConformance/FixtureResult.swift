/// How one fixture went, and its report line.
public struct FixtureResult: Sendable, Equatable {
    /// Where a failure happened.
    public enum Location: Sendable, Equatable {
        /// Step `number` (1-based); `label` is the op name or `reopen`.
        case step(number: Int, label: String)
        /// Opening the engine before the first step.
        case open
        /// The fixture itself could not be read.
        case fixture
    }

    public struct Failure: Sendable, Equatable {
        public var location: Location
        public var message: String
    }

    public var name: String
    public var failure: Failure?

    public var passed: Bool { failure == nil }

    public static func pass(_ name: String) -> FixtureResult { FixtureResult(name: name, failure: nil) }

    public static func fail(_ name: String, _ location: Location, _ message: String) -> FixtureResult {
        FixtureResult(name: name, failure: Failure(location: location, message: message))
    }

    /// `PASS name`, or `FAIL name: step N (op): what differed`.
    public var line: String {
        guard let failure else { return "PASS \(name)" }
        let message = failure.message.replacingNewlines()
        switch failure.location {
        case let .step(number, label): return "FAIL \(name): step \(number) (\(label)): \(message)"
        case .open: return "FAIL \(name): opening the engine: \(message)"
        case .fixture: return "FAIL \(name): invalid fixture: \(message)"
        }
    }
}

extension String {
    /// One report line per fixture: embedded newlines become `\n`.
    func replacingNewlines() -> String {
        guard contains(where: \.isNewline) else { return self }
        return split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).joined(separator: "\\n")
    }
}
