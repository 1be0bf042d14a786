import WorkflowCore

/// JSON as the three runners write it in report lines and spliced substitutions
/// (Tests/Conformance/runner-cases/README.md, "Values in messages"): compact, members in order,
/// UTF-8 as is, and reals laid out like Python's `repr` (the C runner does the same), which
/// differs from Swift's `description` between 2^53 and 1e16 (`9.1e+15` is `9100000000000000.0`).
enum ReportJSON {
    /// Compact JSON text of `value`.
    static func text(_ value: JSON) -> String {
        var out = ""
        write(value, into: &out)
        return out
    }

    private static func write(_ value: JSON, into out: inout String) {
        switch value {
        case .null, .bool, .int, .string: out += value.compactText
        case let .double(d): out += real(d)
        case let .array(items):
            out += "["
            for (i, item) in items.enumerated() {
                if i > 0 { out += "," }
                write(item, into: &out)
            }
            out += "]"
        case let .object(members):
            out += "{"
            var first = true
            for (key, member) in members {
                if !first { out += "," }
                first = false
                out += JSON.string(key).compactText + ":"
                write(member, into: &out)
            }
            out += "}"
        }
    }

    /// The shortest digits that read back as `d` (Swift's `description`), positional for decimal
    /// exponents -4...15 (`100.0`, `0.0001`), else scientific with two or more exponent digits.
    static func real(_ d: Double) -> String {
        guard d.isFinite else { return "null" }
        guard d != 0 else { return d.sign == .minus ? "-0.0" : "0.0" }
        let text = d.magnitude.description
        let parts = text.split(separator: "e", maxSplits: 1)
        let mantissa = parts[0]
        let dot = mantissa.firstIndex(of: ".") ?? mantissa.endIndex
        var digits = Array(mantissa.filter { $0 != "." })
        var exponent = mantissa.distance(from: mantissa.startIndex, to: dot) - 1 + (parts.count > 1 ? Int(parts[1])! : 0)
        while digits.count > 1, digits.first == "0" {
            digits.removeFirst()
            exponent -= 1
        }
        while digits.count > 1, digits.last == "0" { digits.removeLast() }

        var out = d < 0 ? "-" : ""
        if (-4..<16).contains(exponent) {
            if exponent < 0 {
                out += "0." + String(repeating: "0", count: -exponent - 1) + String(digits)
            } else {
                let whole = exponent + 1
                for i in 0..<whole { out.append(i < digits.count ? digits[i] : "0") }
                out += "." + (digits.count > whole ? String(digits[whole...]) : "0")
            }
            return out
        }
        out.append(digits[0])
        if digits.count > 1 { out += "." + String(digits[1...]) }
        let magnitude = abs(exponent)
        out += "e" + (exponent < 0 ? "-" : "+") + (magnitude < 10 ? "0" : "") + String(magnitude)
        return out
    }
}
