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

    /// `PASS name`, or `FAIL name: step N (op): what differed` (runner-cases/README.md, "Report
    /// lines"), with line feeds written `\n` and carriage returns `\r`.
    public var line: String {
        guard let failure else { return "PASS \(name)".escapingLineBreaks() }
        let text: String
        switch failure.location {
        case let .step(number, label): text = "FAIL \(name): step \(number) (\(label)): \(failure.message)"
        case .open: text = "FAIL \(name): opening the engine: \(failure.message)"
        case .fixture: text = "FAIL \(name): invalid fixture: \(failure.message)"
        }
        return text.escapingLineBreaks()
    }
}

extension String {
    /// One report line per fixture: LF becomes `\n`, CR `\r` (scalar by scalar, so CR LF is both).
    func escapingLineBreaks() -> String {
        guard unicodeScalars.contains(where: { $0 == "\n" || $0 == "\r" }) else { return self }
        var out = String.UnicodeScalarView()
        for scalar in unicodeScalars {
            switch scalar {
            case "\n": out.append(contentsOf: "\\n".unicodeScalars)
            case "\r": out.append(contentsOf: "\\r".unicodeScalars)
            default: out.append(scalar)
            }
        }
        return String(out)
    }
}
