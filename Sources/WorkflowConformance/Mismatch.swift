import WorkflowCore

/// Where an outcome differs from its expectation, and how: `result.nodes[0].state: expected
/// "queuedRemote", got "ready"`. The wording is that of Tests/Conformance/runner-cases/README.md,
/// which the C and Python runners share.
public struct Mismatch: Sendable, Equatable, CustomStringConvertible {
    /// Path from the outcome root (`ok`, `result.errors[0].code`); empty for the root itself. For a
    /// malformed expectation, the path inside `expect` (`result.now.$not`).
    public var path: String
    public var message: String
    /// The expectation itself is wrong (an unknown operator, a bad operand): the step fails with
    /// `malformed expectation: ...` whatever the outcome.
    public var badExpectation: Bool

    public init(path: String, message: String, badExpectation: Bool = false) {
        self.path = path
        self.message = message
        self.badExpectation = badExpectation
    }

    /// `expected <E>, got <A> (note)`, or `missing (expected <E>)` when there is no value.
    static func differ(_ path: String, expected: JSON, got actual: JSON?, note: String? = nil) -> Mismatch {
        guard let actual else { return Mismatch(path: path, message: "missing (expected \(render(expected)))") }
        var m = "expected \(render(expected)), got \(render(actual))"
        if let note { m += " (\(note))" }
        return Mismatch(path: path, message: m)
    }

    /// A malformed expectation at `path` (inside `expect`).
    static func malformed(_ path: String, _ why: String) -> Mismatch {
        Mismatch(path: path, message: why, badExpectation: true)
    }

    public var description: String {
        let place = "\(path.isEmpty ? "outcome" : path): \(message)"
        return badExpectation ? "malformed expectation: \(place)" : place
    }

    /// Longest rendering of one value in a report line, in Unicode scalars.
    static let maxRendered = 300

    /// A value as compact JSON (cut to 300 scalars and `…` when longer), or `nothing`.
    static func render(_ value: JSON?) -> String {
        guard let value else { return "nothing" }
        let text = ReportJSON.text(value)
        guard text.unicodeScalars.count > maxRendered else { return text }
        var cut = String.UnicodeScalarView(text.unicodeScalars.prefix(maxRendered))
        cut.append("…")
        return String(cut)
    }
}

/// Paths as failure lines print them: `result.effects[0].runId`.
enum MatchPath {
    static func member(_ path: String, _ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }
    static func element(_ path: String, _ index: Int) -> String { "\(path)[\(index)]" }
}
