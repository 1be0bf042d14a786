import WorkflowCore

/// Matches an `expect` value against an outcome (shared/conformance/FORMAT.md):
///
/// - an object matches when every key it names matches (other keys are ignored);
/// - an array matches an array of the same length, element by element;
/// - numbers match numerically (`1` matches `1.0`; booleans are not numbers); other scalars by
///   equality;
/// - an object whose keys all start with `$` is an operator (see ``MatchOperators``).
///
/// A key the expectation names but the outcome lacks matches only `$absent`, or a `$not` whose
/// inner expectation needs a value.
public enum Matcher {
    /// nil when `actual` matches `expected`; otherwise the first difference found. `actual` nil
    /// means the member is missing.
    public static func match(_ expected: JSON, _ actual: JSON?, path: String = "") -> Mismatch? {
        if let operators = operatorObject(expected) {
            return MatchOperators.match(operators, actual, path: path)
        }
        guard let actual else { return .differ(path, expected: expected, got: nil) }
        switch (expected, actual) {
        case let (.object(e), .object(a)):
            for (key, value) in e {
                if let m = match(value, a[key], path: MatchPath.member(path, key)) { return m }
            }
            return nil
        case let (.array(e), .array(a)):
            guard e.count == a.count else {
                return .differ(path, expected: expected, got: actual,
                               note: "expected \(e.count) elements, got \(a.count)")
            }
            for (i, (ev, av)) in zip(e, a).enumerated() {
                if let m = match(ev, av, path: MatchPath.element(path, i)) { return m }
            }
            return nil
        default:
            return scalarsEqual(expected, actual) ? nil : .differ(path, expected: expected, got: actual)
        }
    }

    /// Whether `value` matches `expected`, as a boolean.
    public static func matches(_ expected: JSON, _ value: JSON?) -> Bool { match(expected, value) == nil }

    /// The members of an operator object: non-empty, every key starting with `$`.
    static func operatorObject(_ value: JSON) -> JSONObject? {
        guard case let .object(o) = value, !o.isEmpty, o.keys.allSatisfy({ $0.hasPrefix("$") }) else { return nil }
        return o
    }

    /// Scalar equality: numbers numerically, everything else exactly; containers never.
    static func scalarsEqual(_ a: JSON, _ b: JSON) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case let (.bool(x), .bool(y)): return x == y
        case let (.string(x), .string(y)): return x == y
        case let (.int(x), .int(y)): return x == y
        case (.int, .double), (.double, .int), (.double, .double):
            return a.doubleValue! == b.doubleValue!
        default: return false
        }
    }
}
