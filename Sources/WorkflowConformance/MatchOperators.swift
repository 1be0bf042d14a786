import Foundation
import WorkflowCore

/// The operators of `expect` (an object whose keys all start with `$`). Several operators in one
/// object must all hold, tried in written order; `$tol` qualifies `$approx` or `$time`.
///
/// - `{"$contains": [e1, e2]}`: an array in which each `ei` matches a different element;
/// - `{"$len": n}`: an array or object of `n` entries, or a string of `n` Unicode scalars;
/// - `{"$any": true}`: present, any value (null included);
/// - `{"$absent": true}`: missing or null;
/// - `{"$approx": x, "$tol": r}`: a number `a` with `|a - x| <= r·|x|` (`|a| <= r` when `x` is 0;
///   `r` defaults to 1e-9);
/// - `{"$time": t, "$tol": s}`: an RFC 3339 time within `s` seconds of `t` (default 0), counted in
///   whole nanoseconds;
/// - `{"$match": "regex"}`: a string in which the regular expression finds a match. Fixtures keep
///   to what POSIX ERE, Python's `re` and `NSRegularExpression` share (no `\d`, `\w`, `\s`, lazy
///   quantifiers, lookaround or backreferences: see Tests/Conformance/runner-cases/README.md);
/// - `{"$not": e}`: does not match `e`.
///
/// A malformed operator (unknown name, wrong operand) fails the step wherever it stands:
/// ``check(_:path:)`` finds it before anything is matched.
public enum MatchOperators {
    public static let names: Set<String> = ["$contains", "$len", "$any", "$absent", "$approx", "$time", "$tol",
                                            "$match", "$not"]

    // MARK: Checking

    /// The first malformed operand of an operator object at `path` (inside `expect`), in the order
    /// unknown operators, a lone `$tol`, then each operand as written.
    static func check(_ ops: JSONObject, path: String) -> Mismatch? {
        for key in ops.keys where !names.contains(key) { return .malformed(path, "unknown operator \(key)") }
        if ops["$tol"] != nil, ops["$approx"] == nil, ops["$time"] == nil {
            return .malformed(path, "$tol needs $approx or $time")
        }
        for (key, operand) in ops {
            func bad(_ takes: String) -> Mismatch { .malformed(path, "\(key) takes \(takes), not \(Mismatch.render(operand))") }
            switch key {
            case "$any", "$absent":
                if operand != .bool(true) { return bad("only true") }
            case "$len":
                if count(operand) == nil { return bad("a non-negative integer") }
            case "$approx":
                if number(operand) == nil { return bad("a number") }
            case "$tol":
                guard let t = number(operand), t >= 0 else { return bad("a non-negative number") }
            case "$time":
                if operand.stringValue.flatMap(Instant.init(rfc3339:)) == nil { return bad("an RFC 3339 timestamp") }
            case "$match":
                guard let pattern = operand.stringValue else { return bad("a string") }
                guard RegexSubset.contains(pattern) else { return bad("a regular expression of the runners' shared subset") }
                // The empty pattern matches every string, as regcomp and re read it;
                // NSRegularExpression refuses to compile it.
                if !pattern.isEmpty, (try? NSRegularExpression(pattern: pattern)) == nil { return bad("a valid regular expression") }
            case "$not":
                if let inner = Matcher.check(operand, path: MatchPath.member(path, "$not")) { return inner }
            case "$contains":
                guard case let .array(items) = operand else { return bad("an array") }
                let base = MatchPath.member(path, "$contains")
                for (i, item) in items.enumerated() {
                    if let inner = Matcher.check(item, path: MatchPath.element(base, i)) { return inner }
                }
            default: break
            }
        }
        return nil
    }

    /// A number operand: an integer or a real, never a boolean.
    static func number(_ value: JSON) -> Double? { value.isBool ? nil : value.doubleValue }

    /// A `$len` operand: a non-negative integer value (`2.0` is one).
    static func count(_ value: JSON) -> Double? {
        guard let n = number(value), n.isFinite, n >= 0, n.rounded(.down) == n else { return nil }
        return n
    }

    // MARK: Matching

    /// Matches a checked operator object.
    static func match(_ ops: JSONObject, _ actual: JSON?, path: String) -> Mismatch? {
        let whole = JSON.object(ops)
        for (key, operand) in ops where key != "$tol" {
            switch key {
            case "$absent":
                if let actual, actual != .null { return .differ(path, expected: whole, got: actual) }
                continue
            case "$not":
                if Matcher.matchChecked(operand, actual, path: path) == nil { return .differ(path, expected: whole, got: actual) }
                continue
            default:
                break
            }
            // The other operators need a value.
            guard let actual else { return .differ(path, expected: whole, got: nil) }
            let note: String?
            switch key {
            case "$len": note = length(count(operand)!, actual)
            case "$contains": note = contains(operand.arrayValue!, actual)
            case "$approx": note = approx(number(operand)!, tolerance: ops["$tol"].flatMap(number) ?? 1e-9, actual)
            case "$time": note = time(operand.stringValue!, tolerance: ops["$tol"].flatMap(number) ?? 0, actual)
            case "$match": note = regex(operand.stringValue!, actual)
            default: note = nil  // $any: present is enough
            }
            if let note { return .differ(path, expected: whole, got: actual, note: note.isEmpty ? nil : note) }
        }
        return nil
    }

    // Each returns nil when the operator holds, else the note of the message ("" for none).

    static func length(_ n: Double, _ actual: JSON) -> String? {
        let count: Int
        switch actual {
        case let .array(a): count = a.count
        case let .object(o): count = o.count
        case let .string(s): count = s.unicodeScalars.count
        default: return "not an array, object or string"
        }
        return Double(count) == n ? nil : "length \(count)"
    }

    static func contains(_ wanted: [JSON], _ actual: JSON) -> String? {
        guard case let .array(elements) = actual else { return "not an array" }
        let candidates = wanted.map { e in elements.indices.filter { Matcher.matchChecked(e, elements[$0], path: "") == nil } }
        if let lonely = candidates.firstIndex(where: \.isEmpty) { return "no element matches $contains[\(lonely)]" }
        return Assignment.exists(candidates: candidates) ? nil : "no distinct element for each item"
    }

    static func approx(_ x: Double, tolerance r: Double, _ actual: JSON) -> String? {
        guard let a = number(actual) else { return "not a number" }
        let ok = x == 0 ? abs(a) <= r : abs(a - x) <= r * abs(x)
        return ok ? nil : ""
    }

    static func time(_ text: String, tolerance s: Double, _ actual: JSON) -> String? {
        guard let a = actual.stringValue.flatMap(Instant.init(rfc3339:)) else { return "not an RFC 3339 timestamp" }
        return a.isWithin(s, of: Instant(rfc3339: text)!) ? nil : ""
    }

    static func regex(_ pattern: String, _ actual: JSON) -> String? {
        guard let s = actual.stringValue else { return "not a string" }
        if pattern.isEmpty { return nil }
        let re = try! NSRegularExpression(pattern: pattern)  // checked
        return re.firstMatch(in: s, range: NSRange(s.startIndex..., in: s)) != nil ? nil : ""
    }
}

/// An RFC 3339 time to the nanosecond, for `$time` (the grammar of ``RFC3339Time``, as the C and
/// Python runners read it).
struct Instant: Equatable {
    var seconds: Int64
    var nanoseconds: Int64

    init?(rfc3339 text: String) {
        guard let t = RFC3339Time(parsing: text) else { return nil }
        (seconds, nanoseconds) = (t.seconds, t.nanoseconds)
    }

    /// At most `tolerance` seconds apart, in whole nanoseconds (the tolerance rounded half away
    /// from zero; 2^63 ns or more accepts any time).
    func isWithin(_ tolerance: Double, of other: Instant) -> Bool {
        let limit = (tolerance * 1e9).rounded()
        guard limit < 9_223_372_036_854_775_808.0 else { return true }
        var ds = seconds - other.seconds, dn = nanoseconds - other.nanoseconds
        if ds < 0 || (ds == 0 && dn < 0) {
            ds = -ds
            dn = -dn
        }
        guard ds <= 10_000_000_000 else { return false }  // over 1e19 ns apart; the limit is below 2^63
        let whole = UInt64(ds) * 1_000_000_000
        let diff = dn >= 0 ? whole + UInt64(dn) : whole - UInt64(-dn)
        return diff <= UInt64(limit)
    }
}

extension JSON {
    var isBool: Bool { if case .bool = self { return true } else { return false } }
}
