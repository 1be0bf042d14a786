/// The regular expressions the three runners read alike (`regcomp(REG_EXTENDED)` in C, `re` in
/// Python, `NSRegularExpression` here): the subset the runner cases' README lists. A `$match`
/// outside it is a malformed expectation on every runner, so that no fixture passes on one
/// host and fails on another for its pattern alone. The C and Python runners hold the same
/// rules (`within_shared_subset`, `_within_shared_subset`), checked by the same runner cases.
enum RegexSubset {
    private static let special = Set(".[]()*+?{}|^$\\".unicodeScalars)

    /// Whether `pattern` keeps to the subset: literals, `.`, `[...]` and `[^...]` (ASCII ranges,
    /// `-` first or last; no `\`, `[`, `&&` or `--` inside, no `:` first), `*`, `+`, `?`, `{m}`,
    /// `{m,}`, `{m,n}` (m ≤ n ≤ 255) after something to repeat (not after another quantifier or an
    /// anchor), `|` between non-empty alternatives, non-empty `(...)`, `^`, `$`, and `\` before a
    /// special character. The empty pattern is in it.
    static func contains(_ pattern: String) -> Bool {
        let p = Array(pattern.unicodeScalars)
        let n = p.count
        var i = 0, depth = 0
        var quantifiable = false, branchEmpty = true, lastBar = false
        func atom() {
            quantifiable = true
            branchEmpty = false
            lastBar = false
        }
        while i < n {
            let c = p[i]
            switch c {
            case "\\":
                guard i + 1 < n, special.contains(p[i + 1]) else { return false }
                i += 2
                atom()
            case "[":
                var j = i + 1
                if j < n, p[j] == ":" { return false }  // ICU reads [:alpha:] as a property
                if j < n, p[j] == "^" { j += 1 }
                let start = j
                var items = 0
                while j < n, p[j] != "]" {
                    let ch = p[j]
                    if ch == "\\" || ch == "[" { return false }
                    // ICU reads && and -- in brackets as set operations.
                    if ch == "&" || ch == "-", j + 1 < n, p[j + 1] == ch { return false }
                    if j + 2 < n, p[j + 1] == "-", p[j + 2] != "]" {
                        let hi = p[j + 2]
                        guard ch.isASCII, hi.isASCII, ch != "-", hi != "-", hi != "\\", hi != "[", hi.value >= ch.value
                        else { return false }
                        j += 3
                    } else {
                        if ch == "-", j != start, j + 1 < n, p[j + 1] != "]" { return false }
                        j += 1
                    }
                    items += 1
                }
                guard j < n, items > 0 else { return false }
                i = j + 1
                atom()
            case "(":
                if i + 1 < n, p[i + 1] == ")" { return false }
                depth += 1
                i += 1
                quantifiable = false
                branchEmpty = true
                lastBar = false
            case ")":
                guard depth > 0, !branchEmpty else { return false }
                depth -= 1
                i += 1
                atom()
            case "|":
                guard !branchEmpty else { return false }
                i += 1
                quantifiable = false
                branchEmpty = true
                lastBar = true
            case "*", "+", "?":
                guard quantifiable else { return false }
                i += 1
                quantifiable = false
            case "{":
                guard quantifiable, let end = bounds(p, from: i + 1) else { return false }
                i = end
                quantifiable = false
            case "}", "]":
                return false
            case "^", "$":
                i += 1
                quantifiable = false
                branchEmpty = false
                lastBar = false
            default:
                i += 1
                atom()
            }
        }
        return depth == 0 && !lastBar
    }

    /// `m}`, `m,}` or `m,n}` from `start` (just after `{`), m ≤ n ≤ 255: the index after `}`.
    private static func bounds(_ p: [Unicode.Scalar], from start: Int) -> Int? {
        func number(_ at: inout Int) -> Int? {
            var value = 0, digits = 0
            while at < p.count, ("0"..."9").contains(p[at]) {
                digits += 1
                if digits > 3 { return nil }
                value = value * 10 + Int(p[at].value - 48)
                at += 1
            }
            return digits == 0 ? nil : value
        }
        var j = start
        guard let m = number(&j), m <= 255, j < p.count else { return nil }
        if p[j] == "}" { return j + 1 }
        guard p[j] == "," else { return nil }
        j += 1
        guard j < p.count else { return nil }
        if p[j] == "}" { return j + 1 }
        guard let upper = number(&j), upper <= 255, upper >= m, j < p.count, p[j] == "}" else { return nil }
        return j + 1
    }
}
