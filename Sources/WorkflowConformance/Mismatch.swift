import WorkflowCore

/// Where an outcome differs from its expectation, and how: `result.nodes[0].state: expected
/// "queuedRemote", got "ready"`.
public struct Mismatch: Sendable, Equatable, CustomStringConvertible {
    /// Path from the outcome root (`ok`, `result.errors[0].code`); empty for the root itself.
    public var path: String
    public var message: String
    /// The expectation itself is wrong (an unknown operator, a bad operand): it fails wherever it
    /// stands, even under `$not`.
    public var badExpectation: Bool

    public init(path: String, message: String, badExpectation: Bool = false) {
        self.path = path
        self.message = message
        self.badExpectation = badExpectation
    }

    /// `expected <e>, got <a>`, plus a note.
    static func differ(_ path: String, expected: JSON, got actual: JSON?, note: String? = nil) -> Mismatch {
        var m = "expected \(render(expected)), got \(render(actual))"
        if let note { m += " (\(note))" }
        return Mismatch(path: path, message: m)
    }

    public var description: String { path.isEmpty ? message : "\(path): \(message)" }

    /// Longest rendering of one value in a report line.
    static let maxRendered = 300

    /// A value as compact JSON (shortened when long), or `nothing` for a missing one.
    static func render(_ value: JSON?) -> String {
        guard let value else { return "nothing" }
        let text = value.compactText
        guard text.count > maxRendered else { return text }
        return String(text.prefix(maxRendered)) + "…"
    }
}

/// Paths as failure lines print them: `result.effects[0].runId`.
enum MatchPath {
    static func member(_ path: String, _ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }
    static func element(_ path: String, _ index: Int) -> String { "\(path)[\(index)]" }
}
