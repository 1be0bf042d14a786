import Foundation
import WorkflowCore

/// The operators of `expect` (an object whose keys all start with `$`). Several operators in one
/// object must all hold; `$tol` qualifies `$approx` or `$time`.
///
/// - `{"$contains": [e1, e2]}`: an array in which each `ei` matches a different element;
/// - `{"$len": n}`: an array or object of `n` entries, or a string of `n` Unicode scalars;
/// - `{"$any": true}`: present, any value (null included);
/// - `{"$absent": true}`: missing or null (`false`: present and not null);
/// - `{"$approx": x, "$tol": r}`: a number `a` with `|a - x| <= r·|x|` (`|a| <= r` when `x` is 0;
///   `r` defaults to 1e-9);
/// - `{"$time": t, "$tol": s}`: an RFC 3339 time within `s` seconds of `t` (default 0);
/// - `{"$match": "regex"}`: a string in which the regular expression finds a match;
/// - `{"$not": e}`: does not match `e`.
///
/// A malformed operator (unknown name, wrong operand) is a failure wherever it stands.
public enum MatchOperators {
    public static let names: Set<String> = ["$contains", "$len", "$any", "$absent", "$approx", "$time", "$tol",
                                            "$match", "$not"]

    static func match(_ ops: JSONObject, _ actual: JSON?, path: String) -> Mismatch? {
        let whole = JSON.object(ops)
        func bad(_ why: String) -> Mismatch {
            Mismatch(path: path, message: "bad expectation \(whole.compactText): \(why)", badExpectation: true)
        }
        for key in ops.keys where !names.contains(key) { return bad("unknown operator \(key)") }
        if ops["$tol"] != nil, (ops["$approx"] == nil) == (ops["$time"] == nil) {
            return bad("$tol goes with exactly one of $approx and $time")
        }
        for (key, operand) in ops where key != "$tol" {
            let result: Mismatch?
            switch key {
            case "$absent": result = absent(operand, actual, path: path, bad: bad)
            case "$not": result = not(operand, actual, path: path)
            default:
                guard let actual else {
                    return .differ(path, expected: whole, got: nil)
                }
                switch key {
                case "$any":
                    result = operand == .bool(true) ? nil : bad("$any takes true")
                case "$len": result = length(operand, actual, path: path, bad: bad)
                case "$contains": result = contains(operand, actual, path: path, bad: bad)
                case "$approx": result = approx(operand, tolerance: ops["$tol"], actual, path: path, bad: bad)
                case "$time": result = time(operand, tolerance: ops["$tol"], actual, path: path, bad: bad)
                case "$match": result = regex(operand, actual, path: path, bad: bad)
                default: result = bad("unknown operator \(key)")
                }
            }
            if let result { return result }
        }
        return nil
    }

    typealias Bad = (String) -> Mismatch

    static func absent(_ operand: JSON, _ actual: JSON?, path: String, bad: Bad) -> Mismatch? {
        guard case let .bool(wanted) = operand else { return bad("$absent takes true or false") }
        let isAbsent = actual == nil || actual == .null
        if isAbsent == wanted { return nil }
        return Mismatch(path: path, message: wanted ? "expected nothing, got \(Mismatch.render(actual))"
                                                    : "expected a value, got \(Mismatch.render(actual))")
    }

    static func not(_ operand: JSON, _ actual: JSON?, path: String) -> Mismatch? {
        if let inner = Matcher.match(operand, actual, path: path) { return inner.badExpectation ? inner : nil }
        return Mismatch(path: path, message: "expected anything but \(Mismatch.render(operand)), got \(Mismatch.render(actual))")
    }

    static func length(_ operand: JSON, _ actual: JSON, path: String, bad: Bad) -> Mismatch? {
        guard let n = operand.intValue, n >= 0, !operand.isBool else { return bad("$len takes a count") }
        let count: Int
        switch actual {
        case let .array(a): count = a.count
        case let .object(o): count = o.count
        case let .string(s): count = s.unicodeScalars.count
        default:
            return Mismatch(path: path, message: "expected length \(n), got \(Mismatch.render(actual)), which has no length")
        }
        guard count == Int(n) else {
            return Mismatch(path: path, message: "expected length \(n), got length \(count): \(Mismatch.render(actual))")
        }
        return nil
    }

    static func contains(_ operand: JSON, _ actual: JSON, path: String, bad: Bad) -> Mismatch? {
        guard case let .array(wanted) = operand else { return bad("$contains takes an array") }
        guard case let .array(elements) = actual else {
            return Mismatch(path: path, message: "expected an array containing \(Mismatch.render(operand)), got \(Mismatch.render(actual))")
        }
        let candidates = wanted.map { e in elements.indices.filter { Matcher.match(e, elements[$0]) == nil } }
        if let lonely = candidates.firstIndex(where: \.isEmpty) {
            return Mismatch(path: path, message: "expected an element matching \(Mismatch.render(wanted[lonely])), got \(Mismatch.render(actual))")
        }
        guard Assignment.exists(candidates: candidates) else {
            return Mismatch(path: path, message: "expected distinct elements matching each of \(Mismatch.render(operand)), got \(Mismatch.render(actual))")
        }
        return nil
    }

    static func approx(_ operand: JSON, tolerance: JSON?, _ actual: JSON, path: String, bad: Bad) -> Mismatch? {
        guard !operand.isBool, let x = operand.doubleValue else { return bad("$approx takes a number") }
        var r = 1e-9
        if let tolerance {
            guard !tolerance.isBool, let t = tolerance.doubleValue, t >= 0 else { return bad("$tol takes a non-negative number") }
            r = t
        }
        guard !actual.isBool, let a = actual.doubleValue else {
            return Mismatch(path: path, message: "expected a number near \(Mismatch.render(operand)), got \(Mismatch.render(actual))")
        }
        let ok = x == 0 ? abs(a) <= r : abs(a - x) <= r * abs(x)
        guard ok else {
            return Mismatch(path: path, message: "expected \(Mismatch.render(operand)) within relative \(r), got \(Mismatch.render(actual))")
        }
        return nil
    }

    static func time(_ operand: JSON, tolerance: JSON?, _ actual: JSON, path: String, bad: Bad) -> Mismatch? {
        guard let text = operand.stringValue, let t = Timestamp(rfc3339: text) else {
            return bad("$time takes an RFC 3339 time")
        }
        var s = 0.0
        if let tolerance {
            guard !tolerance.isBool, let v = tolerance.doubleValue, v >= 0 else { return bad("$tol takes a non-negative number of seconds") }
            s = v
        }
        guard let a = actual.stringValue.flatMap(Timestamp.init(rfc3339:)) else {
            return Mismatch(path: path, message: "expected a time near \(text), got \(Mismatch.render(actual))")
        }
        guard abs(Double(a.milliseconds - t.milliseconds)) <= s * 1000 else {
            return Mismatch(path: path, message: "expected \(text) within \(s) s, got \(Mismatch.render(actual))")
        }
        return nil
    }

    static func regex(_ operand: JSON, _ actual: JSON, path: String, bad: Bad) -> Mismatch? {
        guard let pattern = operand.stringValue else { return bad("$match takes a regular expression") }
        guard let re = try? NSRegularExpression(pattern: pattern) else {
            return bad("invalid regular expression")
        }
        guard let s = actual.stringValue else {
            return Mismatch(path: path, message: "expected a string matching /\(pattern)/, got \(Mismatch.render(actual))")
        }
        guard re.firstMatch(in: s, range: NSRange(s.startIndex..., in: s)) != nil else {
            return Mismatch(path: path, message: "expected a match for /\(pattern)/, got \(Mismatch.render(actual))")
        }
        return nil
    }
}

extension JSON {
    var isBool: Bool { if case .bool = self { return true } else { return false } }
}
