import WorkflowCore

/// A dotted path into an outcome, as `save` uses: `result.effects[0].runId`.
///
/// Grammar: segments separated by `.`, each a member name (any characters but `.`, `[`, `]`)
/// followed by any number of `[index]`.
public struct ValuePath: Sendable, Equatable, CustomStringConvertible {
    public enum Component: Sendable, Equatable {
        case key(String)
        case index(Int)
    }

    public let components: [Component]
    public let description: String

    public init(parsing text: String) throws(FixtureError) {
        var components: [Component] = []
        // Code points, not characters: a `.` followed by a combining mark is still a separator.
        let chars = Array(text.unicodeScalars)
        var i = 0
        let bad = FixtureError("bad path '\(text)'")
        guard !chars.isEmpty else { throw bad }
        while i < chars.count {
            var name = ""
            while i < chars.count, chars[i] != ".", chars[i] != "[", chars[i] != "]" {
                name.unicodeScalars.append(chars[i])
                i += 1
            }
            guard !name.isEmpty else { throw bad }
            components.append(.key(name))
            while i < chars.count, chars[i] == "[" {
                i += 1
                var digits = ""
                while i < chars.count, ("0"..."9").contains(chars[i]) {
                    digits.unicodeScalars.append(chars[i])
                    i += 1
                }
                guard !digits.isEmpty, i < chars.count, chars[i] == "]" else { throw bad }
                components.append(.index(Int(digits) ?? Int.max))  // too large to resolve, not malformed
                i += 1
            }
            if i < chars.count {
                guard chars[i] == "." else { throw bad }
                i += 1
                guard i < chars.count else { throw bad }
            }
        }
        self.components = components
        self.description = text
    }

    /// The value at this path, or nil when some step of it is missing.
    public func lookup(in root: JSON) -> JSON? {
        var current = root
        for c in components {
            switch c {
            case let .key(k):
                guard case let .object(o) = current, let next = Matcher.exactMember(o, k) else { return nil }
                current = next
            case let .index(n):
                guard let next = current[n] else { return nil }
                current = next
            }
        }
        return current
    }
}
