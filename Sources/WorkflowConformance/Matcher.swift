import WorkflowCore

/// Matches an `expect` value against an outcome (shared/conformance/FORMAT.md, settled by
/// Tests/Conformance/runner-cases/README.md):
///
/// - an object matches when every key it names matches, in written order (other keys are ignored);
/// - an array matches an array of the same length, element by element;
/// - numbers match numerically (`1` matches `1.0`; booleans are not numbers); strings by their
///   exact Unicode scalars (no normalisation); `true`, `false`, `null` themselves;
/// - an object whose keys all start with `$` is an operator (see ``MatchOperators``).
///
/// A key the expectation names but the outcome lacks matches only `$absent`, or a `$not` whose
/// inner expectation does not match a missing member.
public enum Matcher {
    /// nil when `actual` matches `expected`; otherwise the first difference found, or the first
    /// malformed operator anywhere in `expected`. `actual` nil means the member is missing.
    public static func match(_ expected: JSON, _ actual: JSON?, path: String = "") -> Mismatch? {
        if let bad = check(expected) { return bad }
        return matchChecked(expected, actual, path: path)
    }

    /// Whether `value` matches `expected`, as a boolean.
    public static func matches(_ expected: JSON, _ value: JSON?) -> Bool { match(expected, value) == nil }

    /// The first malformed operator of `expected` (a ``Mismatch/badExpectation``), looking
    /// everywhere: under `$not`, inside `$contains` items, whatever the outcome holds. `path` is the
    /// place inside `expect`, with `.$not` and `.$contains[i]` for operands.
    public static func check(_ expected: JSON, path: String = "") -> Mismatch? {
        if let operators = operatorObject(expected) { return MatchOperators.check(operators, path: path) }
        switch expected {
        case let .object(o):
            for (key, value) in o {
                if let bad = check(value, path: MatchPath.member(path, key)) { return bad }
            }
        case let .array(a):
            for (i, value) in a.enumerated() {
                if let bad = check(value, path: MatchPath.element(path, i)) { return bad }
            }
        default: break
        }
        return nil
    }

    /// ``match(_:_:path:)`` on an expectation ``check(_:path:)`` found well formed.
    static func matchChecked(_ expected: JSON, _ actual: JSON?, path: String) -> Mismatch? {
        if let operators = operatorObject(expected) {
            return MatchOperators.match(operators, actual, path: path)
        }
        guard let actual else { return .differ(path, expected: expected, got: nil) }
        switch (expected, actual) {
        case let (.object(e), .object(a)):
            for (key, value) in e {
                if let m = matchChecked(value, exactMember(a, key), path: MatchPath.member(path, key)) { return m }
            }
            return nil
        case let (.array(e), .array(a)):
            guard e.count == a.count else {
                return .differ(path, expected: expected, got: actual,
                               note: "expected \(e.count) elements, got \(a.count)")
            }
            for (i, (ev, av)) in zip(e, a).enumerated() {
                if let m = matchChecked(ev, av, path: MatchPath.element(path, i)) { return m }
            }
            return nil
        default:
            return scalarsEqual(expected, actual) ? nil : .differ(path, expected: expected, got: actual)
        }
    }

    /// The member of `o` whose key has exactly the code points of `key` (the C and Python
    /// runners compare keys so; Swift's `String` equality would also match another spelling of
    /// the same text, as `café` precomposed and decomposed).
    static func exactMember(_ o: JSONObject, _ key: String) -> JSON? {
        for m in o.members where m.key.unicodeScalars.elementsEqual(key.unicodeScalars) { return m.value }
        return nil
    }

    /// The members of an operator object: non-empty, every key starting with `$`.
    static func operatorObject(_ value: JSON) -> JSONObject? {
        guard case let .object(o) = value, !o.isEmpty, o.keys.allSatisfy({ $0.hasPrefix("$") }) else { return nil }
        return o
    }

    /// Scalar equality: numbers numerically, strings by Unicode scalars, the rest exactly;
    /// containers never.
    static func scalarsEqual(_ a: JSON, _ b: JSON) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case let (.bool(x), .bool(y)): return x == y
        case let (.string(x), .string(y)): return x.unicodeScalars.elementsEqual(y.unicodeScalars)
        case let (.int(x), .int(y)): return x == y
        case let (.double(x), .double(y)): return x == y
        // By value, exactly: a real matches an integer only when it is that integer (2^53 + 1
        // is not 2^53 as a real, though the two convert to the same double).
        case let (.int(i), .double(d)), let (.double(d), .int(i)): return Int64(exactly: d) == i
        default: return false
        }
    }
}
